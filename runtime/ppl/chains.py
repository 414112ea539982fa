"""Running a batch of chains in this process: the sampler's options (``nuts()``, ``hmc()``),
warmup with adaptation and the draws (``run_chains``), and the progress bar.

``sampler.mcmc`` calls ``run_chains`` directly, or through ``parallel.run_parallel``, whose worker
processes each call it for their share of the chains; both import it from here.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import SamplingInterrupted
from ..graph.model_compiler import calculate
from ..graph.nodes import _lazy
from ..host_namespace import to_host, to_tensor, xp
from ..interrupts import safe_point
from ..progress_events import McmcProgress, emit, every_nth, has_sinks
from .adaptation import DualAveraging, Welford, WindowSchedule, find_reasonable_step
from .adaptation import regularised_variance as _reg_var
from .chain_rng import PURPOSE_STEP_SEARCH, chain_rng, restart
from .draws import Draws
from .hamiltonian import PhasePoint, guard_target
from .hmc import hmc_transition
from .nuts import nuts_transition
from .random_walk import rwmh_accept_target, rwmh_transition, slice_transition

__all__ = ["STATS", "Progress", "SamplerConfig", "hmc", "nuts", "run_chains", "rwmh", "slice",
           "stop_requested"]


@dataclass
class SamplerConfig:
    kind: str
    max_depth: int = 10
    n_leapfrog: int = 10
    target_accept: float = 0.8
    step_size: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def nuts(max_depth: int = 10, target_accept: float = 0.8, step_size: float | None = None,
         max_treedepth: int | None = None, epsilon: float | None = None,
         diag_sd: Any = None) -> SamplerConfig:
    """The No-U-Turn sampler (multinomial, as in Stan), adapting step size and diagonal metric.

    greta's names alongside: ``max_treedepth`` is ``max_depth``; ``epsilon`` the initial step
    size (still adapted in warmup, where ``step_size`` fixes it); ``diag_sd`` the initial
    standard deviations of the diagonal metric (a number or one per free parameter; warmup
    adapts from there)."""
    if max_treedepth is not None:
        if max_depth != 10 and max_depth != max_treedepth:
            raise ValueError(f"max_treedepth: {max_treedepth} contradicts max_depth={max_depth}"
                             " (the same option: give one)")
        max_depth = max_treedepth
    if not 1 <= max_depth <= 30:
        raise ValueError(f"max_depth: expected 1..30, got {max_depth}")
    if not 0 < target_accept < 1:
        raise ValueError(f"target_accept: expected a probability in (0, 1), got {target_accept}")
    return SamplerConfig("nuts", max_depth=max_depth, target_accept=target_accept,
                         step_size=step_size, extra=_greta_start(epsilon, diag_sd))


def hmc(n_leapfrog: int = 10, target_accept: float = 0.8, step_size: float | None = None,
        l_min: int | None = None, l_max: int | None = None, epsilon: float | None = None,
        diag_sd: Any = None) -> SamplerConfig:
    """Static HMC with ``n_leapfrog`` (jittered) steps per iteration.

    greta's names alongside: ``l_min``/``l_max`` (R: greta's ``Lmin``/``Lmax``) draw each
    iteration's leapfrog count uniformly from ``l_min..l_max``, per chain (in place of
    ``n_leapfrog``; the NumPy sampler runs it); ``epsilon`` and ``diag_sd`` as for
    :func:`nuts`."""
    if n_leapfrog < 1:
        raise ValueError(f"n_leapfrog: expected >= 1, got {n_leapfrog}")
    extra = _greta_start(epsilon, diag_sd)
    if l_min is not None or l_max is not None:
        lo = l_min if l_min is not None else 1
        hi = l_max if l_max is not None else max(lo, n_leapfrog)
        for name, v in (("l_min", lo), ("l_max", hi)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
        if lo > hi:
            raise ValueError(f"l_min: expected l_min <= l_max, got {lo} > {hi}")
        extra["leapfrog_range"] = (lo, hi)
        n_leapfrog = hi
    return SamplerConfig("hmc", n_leapfrog=n_leapfrog, target_accept=target_accept,
                         step_size=step_size, extra=extra)


def rwmh(proposal: str = "normal", epsilon: float = 0.1, diag_sd: Any = 1.0) -> SamplerConfig:
    """Random-walk Metropolis-Hastings (greta's ``rwmh``): a ``"normal"`` or ``"uniform"``
    proposal of scale ``epsilon * diag_sd``, both adapted in warmup (the scale toward an
    acceptance rate of 0.234, 0.44 in one dimension; the metric toward the posterior sds)."""
    if proposal not in ("normal", "uniform"):
        raise ValueError(f"proposal: expected 'normal' or 'uniform', got {proposal!r}")
    extra = _greta_start(epsilon, diag_sd)
    extra["proposal"] = proposal
    return SamplerConfig("rwmh", target_accept=0.234, extra=extra)


def slice(max_doublings: int = 5) -> SamplerConfig:
    """Univariate slice sampling with doubling (Neal 2003), one coordinate after another
    (greta's ``slice``): the interval doubles at most ``max_doublings`` times; its initial
    width follows the metric adapted in warmup."""
    if isinstance(max_doublings, bool) or not isinstance(max_doublings, int) \
            or not 1 <= max_doublings <= 30:
        raise ValueError(f"max_doublings: expected an integer in 1..30, got {max_doublings!r}")
    return SamplerConfig("slice", extra={"max_doublings": max_doublings})


def _greta_start(epsilon: float | None, diag_sd: Any) -> dict[str, Any]:
    """greta's initial step size and metric sds, checked (the sds' length against the model's
    free parameters when the run starts)."""
    extra: dict[str, Any] = {}
    if epsilon is not None:
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) \
                or not 0 < epsilon < float("inf"):
            raise ValueError(f"epsilon: expected a positive number, got {epsilon!r}")
        extra["epsilon"] = float(epsilon)
    if diag_sd is not None:
        sd = [diag_sd] if isinstance(diag_sd, (int, float)) else list(diag_sd)
        if not sd or not all(not isinstance(v, bool) and isinstance(v, (int, float))
                             and 0 < v < float("inf") for v in sd):
            raise ValueError(f"diag_sd: expected positive numbers, got {diag_sd!r}")
        extra["diag_sd"] = [float(v) for v in sd]
    return extra

class Progress:
    """One run's progress: an ``McmcProgress`` event per ``update`` (see
    ``runtime.progress_events``), sent to the registered sinks and to the run's own: the
    terminal bar (``enabled``) and ``callback(dict)`` every ``every`` iterations and at the
    last."""

    def __init__(self, total: int, enabled: bool, callback: Callable[[dict], Any] | None,
                 every: int) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"callback_every: expected an integer >= 1, got {every!r}")
        self.total, self.enabled, self.callback, self.every = total, enabled, callback, every
        self.start = time.perf_counter()
        self.warmup_divergences = 0
        self._muted: set[int] = set()  # sinks that raised: skipped for the rest of the run
        own = [TerminalBar(total)] if enabled else []
        if callback is not None:
            own.append(every_nth(lambda e: callback(_callback_info(e)), every, "callback_every"))
        self._own = tuple(own)

    @property
    def reports_every(self) -> bool:
        """Whether a sink may want every ``every``-th iteration (else the bar's cadence)."""
        return self.callback is not None or has_sinks()

    def update(self, i: int, phase: str, divergences: int) -> None:
        if phase == "warmup":
            self.warmup_divergences = divergences
        if not self._own and not has_sinks():
            return
        emit(McmcProgress(i + 1, self.total, phase, divergences, self.warmup_divergences,
                          time.perf_counter() - self.start), self._muted, self._own)


def _callback_info(event: McmcProgress) -> dict[str, Any]:
    """What ``mcmc(callback=)`` gets: the event's fields by their Python names."""
    return event.as_dict(kind=False)


class TerminalBar:
    """The sink that draws ``mcmc``'s bar on standard error (redrawn at most every 0.1 s)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.last_print = 0.0

    def __call__(self, event: McmcProgress) -> None:
        if not isinstance(event, McmcProgress):
            return
        now = time.perf_counter()
        done = event.iteration
        if now - self.last_print < 0.1 and done != self.total:
            return
        self.last_print = now
        bar = "#" * int(30 * done / self.total)
        # as Stan and greta: the divergences of the current phase (warmup's are expected)
        shown = event.divergences - (event.warmup_divergences if event.phase != "warmup" else 0)
        sys.stderr.write(f"\r{event.phase:>8} [{bar:<30}] {done}/{self.total} "
                         f"{event.elapsed:5.1f}s  divergences: {shown}")
        if done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()

# the per-draw statistics a run keeps: the transition's, then the log density of the draw
STATS = ("accept_stat", "n_leapfrog", "tree_depth", "divergent", "energy", "lp")


def stop_requested(should_stop: Callable[[], bool] | None) -> bool:
    """Whether a run ends here: ``should_stop`` says so, or the host's safe point raises (an
    interrupt or a bridge cancellation; the draws taken so far are kept)."""
    if should_stop is not None and should_stop():
        return True
    try:
        safe_point()
    except BaseException:
        return True
    return False


def run_chains(model: Any, n_samples: int, warmup: int, chains: int, sampler: SamplerConfig | None,
         initial_values: Any, seed: int | None, thin: int, progress: bool | None,
         callback: Callable[[dict], Any] | None, callback_every: int,
         should_stop: Callable[[], bool] | None, chain_ids: list[int] | None = None,
         resume: dict[str, Any] | None = None) -> Draws:
    """``resume`` (``extra_samples``): ``q`` (the chains' last states), ``step_size``,
    ``inv_metric``, ``iteration`` (iterations run so far: the streams go on from there) and
    ``warmup`` (the first run's); no warmup then, nothing adapted."""
    cfg = sampler or nuts()
    for name, v, lo in (("n_samples", n_samples, 1), ("warmup", warmup, 0), ("chains", chains, 1),
                        ("thin", thin, 1)):
        if not isinstance(v, int) or v < lo:
            raise ValueError(f"{name}: expected an integer >= {lo}, got {v!r}")
    # chain_ids: these chains' indices among all of the run's (worker processes run a share)
    rng = chain_rng(seed, chains, chain_ids, xp)
    n = model.n_free

    target = model.compiled_target(chains)  # host arrays in and out (raw NumPy: the hot path)
    # a numerical failure (a Cholesky factor of a matrix that is not positive definite...) at a
    # proposal is a divergence, in the step-size search, warmup and sampling: never an abort
    target = guard_target(target)
    hamiltonian_kind = cfg.kind in ("nuts", "hmc")
    if resume is not None:
        q0 = xp.asarray(resume["q"], dtype=xp.float64)
    else:
        q0 = _initial_free(model, chains, initial_values, rng, target)
    logp, grad = target(q0)
    z = PhasePoint(q0, xp.zeros_like(q0), logp, grad)
    inv_metric = _initial_metric(cfg, chains, n)
    step = xp.full(chains, cfg.step_size or cfg.extra.get("epsilon")
                   or (2.0 if cfg.kind == "slice" else 1.0))
    adapt_step = cfg.step_size is None and cfg.kind != "slice"
    if resume is not None:
        step = xp.asarray(resume["step_size"], dtype=xp.float64)
        inv_metric = xp.asarray(resume["inv_metric"], dtype=xp.float64)
        adapt_step = False
    elif adapt_step and hamiltonian_kind and "epsilon" not in cfg.extra:
        restart(rng, 0, PURPOSE_STEP_SEARCH)
        step = find_reasonable_step(z, step, inv_metric, target, rng)
    accept_target = rwmh_accept_target(n) if cfg.kind == "rwmh" else cfg.target_accept
    dual = DualAveraging(step, accept_target)
    schedule = WindowSchedule(warmup)
    welford = Welford((chains, n))

    def transition(z: PhasePoint, eps: xp.ndarray) -> tuple[PhasePoint, Any]:
        if cfg.kind == "nuts":
            return nuts_transition(z, eps, inv_metric, target, rng, cfg.max_depth)
        if cfg.kind == "rwmh":
            return rwmh_transition(z, eps, inv_metric, target, rng, cfg.extra["proposal"])
        if cfg.kind == "slice":
            return slice_transition(z, eps, inv_metric, target, rng, cfg.extra["max_doublings"])
        return hmc_transition(z, eps, inv_metric, target, rng, cfg.n_leapfrog,
                              leapfrog_range=cfg.extra.get("leapfrog_range"))

    first = 0 if resume is None else int(resume["iteration"])
    warmup_end = warmup if resume is None else int(resume["warmup"])  # draws kept from here
    total = first + warmup + n_samples * thin
    bar = Progress(total - first, sys.stderr.isatty() if progress is None else progress,
                   callback, callback_every)
    kept_q: list[xp.ndarray] = []
    kept_stats: dict[str, list[xp.ndarray]] = {k: [] for k in STATS}
    warmup_divergences = 0
    sampled_divergences = 0
    interrupted = False
    i = first - 1
    try:
        for i in range(first, total):
            if stop_requested(should_stop):
                interrupted = True
                break
            restart(rng, i)  # each chain's numbers depend on (seed, chain, i) only
            z, st = transition(z, step)
            if i < warmup_end:
                warmup_divergences += int(st.divergent.sum())
                if adapt_step:
                    step = dual.update(st.accept_stat)
                if schedule.in_window(i):
                    welford.add(z.q)
                if schedule.window_ends(i):
                    inv_metric = _reg_var(welford)
                    welford = Welford((chains, n))
                    if adapt_step and hamiltonian_kind:
                        restart(rng, i + 1, PURPOSE_STEP_SEARCH)
                        step = find_reasonable_step(z, step, inv_metric, target, rng)
                        dual.restart(step)
                if i == warmup - 1 and adapt_step:
                    step = dual.final()
            elif (i - warmup_end) % thin == 0:
                kept_q.append(z.q.copy())
                for k in STATS[:-1]:  # the transition's; lp is the point's
                    kept_stats[k].append(getattr(st, k))
                kept_stats["lp"].append(z.logp.copy())
                sampled_divergences += int(st.divergent.sum())
            bar.update(i - first, "warmup" if i < warmup_end else "sampling",
                       warmup_divergences + sampled_divergences)
    except KeyboardInterrupt:
        interrupted = True
    if interrupted:
        warnings.warn(f"mcmc: interrupted at iteration {i + 1} of {total}; returning the "
                      f"{len(kept_q)} draws taken so far", SamplingInterrupted, stacklevel=3)
    free = (xp.stack(kept_q, axis=1) if kept_q else xp.zeros((chains, 0, n)))
    stats = {k: (xp.stack(v, axis=1) if v else xp.zeros((chains, 0))) for k, v in
             kept_stats.items()}
    values = _constrained_draws(model, free)
    draws = Draws(values, free, stats,
                  warmup={"step_size": step, "inv_metric": inv_metric,
                          "divergences": warmup_divergences},
                  interrupted=interrupted)
    draws.node_names = dict(zip(model.variables, model.variable_names()))
    # where the chains stopped, for extra_samples (the last state, also when thinned out)
    draws.resume_state = {"q": z.q.copy(), "iteration": i + 1 if not interrupted else i,
                          "warmup": warmup_end}
    _trace_derived(model, draws)
    return draws


def _initial_metric(cfg: SamplerConfig, chains: int, n: int) -> xp.ndarray:
    """The diagonal inverse metric warmup starts from: ones, or greta's ``diag_sd`` squared."""
    sd = cfg.extra.get("diag_sd")
    if sd is None:
        return xp.ones((chains, n))
    if len(sd) not in (1, n):
        raise ValueError(f"diag_sd: expected 1 or {n} values (the model's free parameters), "
                         f"got {len(sd)}")
    row = [v * v for v in sd] * (n if len(sd) == 1 else 1)
    return xp.asarray([row] * chains, dtype=xp.float64)


def _trace_derived(model: Any, draws: Draws) -> None:
    """Add the model's operation targets (named like variables) to the draws."""

    derived = [n for n in model.derived_targets() if n.name and n.name not in draws.values]
    if derived:
        arrays = calculate([_lazy(n) for n in derived], values=draws)
        for n, a in zip(derived, arrays):
            draws.values[n.name] = a


def _constrained_draws(model: Any, free: xp.ndarray) -> dict[str, xp.ndarray]:
    chains, draws, n = free.shape
    names = model.variable_names()
    if draws == 0:
        return {nm: xp.zeros((chains, 0, *v.shape)) for nm, v in zip(names, model.variables)}
    flat = free.reshape(chains * draws, n)
    out: dict[str, xp.ndarray] = {}
    for nm, v, off in zip(names, model.variables, model.offsets):
        # each draw's free block in its free shape: structured bijectors read their event axes
        piece = flat[:, off:off + v.size].reshape(chains * draws, *v.free_shape)
        val = v.bijector.forward(to_tensor(piece, dtype=v.dtype, backend=model.backend))
        out[nm] = to_host(val).reshape(chains, draws, *v.shape)
    return out


def _initial_free(model: Any, chains: int, initial_values: Any, rng: xp.random.Generator,
                  target: Callable[[xp.ndarray], tuple[xp.ndarray, xp.ndarray]]) -> xp.ndarray:
    n = model.n_free
    if initial_values is None:
        q = rng.uniform(-2.0, 2.0, size=(chains, n))
        for _ in range(100):
            lp, g = target(q)
            bad = ~(xp.isfinite(lp) & xp.all(xp.isfinite(g), axis=1))
            if not bad.any():
                return q
            # every chain draws, so a chain's tries do not depend on the others' luck
            fresh = rng.uniform(-2.0, 2.0, size=(chains, n))
            q = xp.where(bad[:, None], fresh, q)  # (no boolean-mask assignment in pure xp)
        err = getattr(target, "last_error", None)  # guard_target's: what the density raised
        raise ValueError(
            "initial_values: could not find initial values with a finite log density in 100 "
            "random tries; give initial_values explicitly"
            + (f" (the log density raised {type(err).__name__}: {err})" if err else "")
        ) from err
    per_chain = initial_values if isinstance(initial_values, list) else [initial_values] * chains
    if len(per_chain) != chains:
        raise ValueError(f"initial_values: got {len(per_chain)} sets for {chains} chains")
    # unset variables start where the user's seed puts them: every chain draws from its own
    # stream (as without initial values), so a chain's start does not depend on the batch
    fill = rng.uniform(-2.0, 2.0, size=(chains, n))
    rows = [model.check_initial_values(vals, fill=fill[c]) for c, vals in enumerate(per_chain)]
    q = xp.stack(rows)
    lp, g = target(q)
    if not xp.all(xp.isfinite(lp)):
        c = int(xp.argmin(xp.isfinite(lp)))
        raise ValueError(
            f"initial_values: chain {c} has log density {lp[c]} at its initial values: "
            + model.describe_infinite_density(q[c])
        )
    return q

