"""``extra_samples()`` (greta's): more draws from the chains of an ``mcmc()`` run, going on from
where they stopped — each chain's last state, its adapted step size and metric, no new warmup,
its random stream continued — returned with the earlier draws in front."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..host_namespace import xp
from .chains import _constrained_draws, _trace_derived, run_chains
from .draws import Draws
from .sampling_threads import sampling_tuning

__all__ = ["extra_samples"]


def extra_samples(draws: Draws, n_samples: int = 1000, thin: int = 1,
                  progress: bool | None = None, callback: Callable[[dict], Any] | None = None,
                  callback_every: int = 50,
                  should_stop: Callable[[], bool] | None = None) -> Draws:
    """``n_samples`` more draws (every ``thin``-th iteration) of the chains in ``draws``,
    appended to them: a new :class:`Draws` of ``draws.n_draws + n_samples`` draws per chain.

    The chains go on with the same sampler, step size and metric and the next numbers of their
    random streams: on the NumPy sampler, a run of ``n`` draws followed by ``extra_samples(m)``
    gives the draws of one run of ``n + m`` (with ``thin`` unchanged). Draws of the compiled
    sampler go on, on the NumPy sampler, from their last kept draw (the compiled samplers keep
    no other state)."""
    if not isinstance(draws, Draws):
        raise TypeError(f"draws: expected the Draws of mcmc(), got {type(draws).__name__}")
    state = getattr(draws, "resume_state", None)
    model = getattr(draws, "model", None)
    if state is None or model is None:
        raise ValueError("draws: these draws do not say where their chains stopped (they come "
                         "from mcmc() of this session, with at least one draw)")
    for name, v in (("n_samples", n_samples), ("thin", thin)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
    resume = {"q": state["q"], "iteration": state["iteration"], "warmup": state["warmup"],
              "step_size": draws.warmup["step_size"], "inv_metric": draws.warmup["inv_metric"]}
    with xp.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"), \
            sampling_tuning():
        more = run_chains(model, n_samples, 0, draws.chains, draws.sampler, None, draws.seed,
                          thin, progress, callback, callback_every, should_stop, resume=resume)
    free = xp.concatenate([draws.free, more.free], axis=1)
    stats = {k: xp.concatenate([v, more.stats[k]], axis=1) for k, v in draws.stats.items()
             if k in more.stats}
    out = Draws(_constrained_draws(model, free), free, stats, warmup=dict(draws.warmup),
                interrupted=more.interrupted)
    out.node_names = dict(draws.node_names)
    _trace_derived(model, out)
    out.model, out.seed, out.sampler = model, draws.seed, draws.sampler
    out.resume_state = more.resume_state
    out.backend = "numpy"
    out.compile_seconds = draws.compile_seconds
    return out
