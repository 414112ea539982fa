"""``mcmc()``: warmup with adaptation, then draws.

Two samplers give the same draws for a seed (up to rounding): the compiled one
(``compiled_chains``: the model's log density lowered to C, each chain's NUTS or HMC in C on a
thread of its own; in Pyodide, lowered to JavaScript with NUTS and HMC in JavaScript) and the
NumPy one (``chains``: chains batched along a leading dimension, the
log density staged for a ``[chains, n]`` batch, the bookkeeping in NumPy, or in pure-Python arrays
without NumPy). ``backend="auto"`` picks the compiled one when a C compiler works here and the
model can be lowered (in Pyodide: JavaScript), and says why when it cannot. A Ctrl-C (or a
``should_stop`` callback returning True) ends the run and returns the draws taken so far,
marked ``interrupted``.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

from ..compiled.lowering import LoweringError
from ..errors import CompiledSamplingUnavailable
from ..host_namespace import NUMPY_MISSING, xp
from .chain_rng import fresh_seed
from .chains import SamplerConfig, hmc, nuts, run_chains, rwmh, slice
from .compiled_chains import run_chains_compiled
from .draws import Draws
from .js_density import compile_js_density
from .sampling_threads import sampling_tuning

__all__ = ["BACKENDS", "hmc", "mcmc", "nuts", "rwmh", "slice"]

BACKENDS = ("auto", "compiled", "numpy")  # mcmc's backend= values
# Draws.backend: "compiled" (C), "js" (JavaScript, Pyodide) or "numpy"


def mcmc(model: Any, n_samples: int = 1000, warmup: int = 1000, chains: int = 4,
         sampler: SamplerConfig | None = None, initial_values: Any = None,
         seed: int | None = None, thin: int = 1, progress: bool | None = None,
         callback: Callable[[dict], Any] | None = None, callback_every: int = 50,
         should_stop: Callable[[], bool] | None = None, n_cores: int | None = None,
         backend: str = "auto", cluster: Any = None) -> Draws:
    """Draw from the posterior of ``model`` (from :func:`tensorbridge.model`).

    ``sampler``: :func:`nuts` (default) or :func:`hmc`. ``initial_values``: None (uniform(-2, 2)
    on the free scale, as Stan), a dict ``{variable: value}`` for every chain, or a list of such
    dicts, one per chain. ``progress``: a terminal progress bar (default: when stderr is a
    terminal). ``callback(info)`` is called every ``callback_every`` iterations and at the last
    with the fields of the ``runtime.progress_events.McmcProgress`` event as a dict (iteration,
    total, phase, divergences, warmup_divergences, elapsed); the bar and the callback are sinks
    of those events, as are R's bar and JS's ``onProgress`` (``progress_sinks``).

    ``n_cores`` (as greta's): run the chains in that many worker processes, each sampling its
    share of the chains batched in lockstep, merged into one :class:`Draws`. Every chain draws
    its random numbers from its own stream of ``seed``, so the same seed gives the same draws
    whatever ``n_cores`` (up to floating-point differences between batch sizes in the model's
    kernels). ``should_stop`` and Ctrl-C stop every worker and keep the draws taken so far.
    With the compiled sampler the chains run on threads of this process instead (C releases
    the GIL), so ``n_cores`` only matters for the NumPy one.

    ``backend``: ``"auto"`` (the compiled sampler when a C compiler works here and the model
    can be lowered to C, else the NumPy one with a :class:`CompiledSamplingUnavailable`
    warning saying why), ``"compiled"`` (an error saying why when it cannot run) or
    ``"numpy"``. In Pyodide the compiled sampler is JavaScript: the model's log density
    lowered to one JavaScript function and NUTS/HMC in JavaScript (no warning when it falls
    back). ``Draws.backend`` says which ran (``"compiled"``, ``"js"`` or ``"numpy"``) and
    ``Draws.compile_seconds`` what compiling cost (0 when the model came from the disk cache).

    ``cluster``: run the chains as tasks on a Dask distributed cluster: a ``distributed.Client``,
    a scheduler address (``"tcp://host:8786"``) or an executor of ``runtime.ppl.executors``
    (``DaskCluster(client, chains_per_task=...)``). Blocks of chains travel as data (the model's
    graph and its data) and draw from their own streams, so the same seed gives the same draws
    whatever the number of workers, and a task re-run after a worker died draws them again.
    The sampler is chosen here (``backend``) and every worker runs that one.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(map(repr, BACKENDS))}, got "
                         f"{backend!r}")
    if n_cores is not None and (not isinstance(n_cores, int) or n_cores < 1):
        raise ValueError(f"n_cores: expected None or an integer >= 1, got {n_cores!r}")
    if seed is None:
        seed = fresh_seed()  # one seed for every worker: chains stay distinct streams of it
    if cluster is not None:
        draws = _on_cluster(model, cluster, n_cores, backend, n_samples=n_samples,
                            warmup=warmup, chains=chains, sampler=sampler,
                            initial_values=initial_values, seed=seed, thin=thin,
                            progress=progress, callback=callback,
                            callback_every=callback_every, should_stop=should_stop)
    else:
        draws = _mcmc(model, n_samples, warmup, chains, sampler, initial_values, seed, thin,
                      progress, callback, callback_every, should_stop, n_cores, backend)
    # what extra_samples needs to go on from where the chains stopped
    draws.model, draws.seed, draws.sampler = model, seed, sampler or nuts()
    if getattr(draws, "resume_state", None) is None and draws.n_draws:
        # the compiled samplers keep the kept draws only: go on from the last one
        draws.resume_state = {"q": draws.free[:, -1, :].copy(),
                              "iteration": warmup + n_samples * thin, "warmup": warmup}
    return draws


def _on_cluster(model: Any, cluster: Any, n_cores: int | None, backend: str,
                **kw: Any) -> Draws:
    """``mcmc(cluster=)``: the sampler chosen here, the chains on the cluster's workers."""
    from .executors import as_executor, run_mcmc  # NumPy-only, as the worker processes

    if n_cores is not None:
        raise ValueError("n_cores, cluster: give one of them (n_cores is a local pool)")
    numpy_only = _numpy_only(kw["sampler"])
    if numpy_only is not None and backend == "compiled":
        raise RuntimeError(f"backend='compiled': {numpy_only} runs on the NumPy sampler only")
    density = None if numpy_only is not None else _compiled_density(model, backend)
    draws = run_mcmc(model, as_executor(cluster),
                     backend="numpy" if density is None else "compiled", **kw)
    draws.backend = "numpy" if density is None else "compiled"
    draws.compile_seconds = 0.0 if density is None else density.compile_seconds
    return draws


def _numpy_only(cfg: SamplerConfig | None) -> str | None:
    """Why ``cfg`` runs on the NumPy sampler only (the compiled ones run NUTS and static HMC
    from a unit metric), or None."""
    if cfg is None:
        return None
    if cfg.kind in ("rwmh", "slice"):
        return f"the {cfg.kind} sampler"
    if cfg.extra:
        return f"greta's {', '.join(sorted(k for k in cfg.extra))} options of {cfg.kind}"
    return None


def _mcmc(model: Any, n_samples: int, warmup: int, chains: int, sampler: SamplerConfig | None,
          initial_values: Any, seed: int, thin: int, progress: bool | None,
          callback: Callable[[dict], Any] | None, callback_every: int,
          should_stop: Callable[[], bool] | None, n_cores: int | None, backend: str) -> Draws:
    numpy_only = _numpy_only(sampler)
    if getattr(model, "precision", "double") == "single":
        numpy_only = "a single-precision model"
    if numpy_only is not None and backend == "compiled":
        raise RuntimeError(f"backend='compiled': {numpy_only} runs on the NumPy sampler only")
    density = None if numpy_only is not None else _compiled_density(model, backend)
    if density is not None:
        draws = run_chains_compiled(model, density, n_samples, warmup, chains, sampler,
                                    initial_values, seed, thin, progress, callback,
                                    callback_every, should_stop)
        draws.backend = "compiled" if hasattr(density, "fn_address") else "js"
        draws.compile_seconds = density.compile_seconds
        return draws
    if n_cores is not None and n_cores != 1:
        from .executors import LocalProcesses, run_mcmc  # NumPy-only (absent in Pyodide)

        return run_mcmc(model, LocalProcesses(n_cores), n_samples=n_samples, warmup=warmup,
                        chains=chains, sampler=sampler, initial_values=initial_values,
                        seed=seed, thin=thin, backend="numpy", progress=progress,
                        callback=callback, callback_every=callback_every,
                        should_stop=should_stop)
    with xp.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"), \
            sampling_tuning():
        # divergent trajectories overflow by design; they are counted, not warned about. The
        # chains' matrix products are too small for BLAS threads to pay, and their temporaries
        # too large for glibc's default heap thresholds (see sampling_threads.py)
        return run_chains(model, n_samples, warmup, chains, sampler, initial_values, seed, thin,
                          progress, callback, callback_every, should_stop)


def _compiled_density(model: Any, backend: str) -> Any:
    """The model's log density compiled to C for ``backend``, or None for the NumPy sampler
    (with a one-line warning under "auto" saying why; an error under "compiled")."""
    if backend == "numpy":
        return None
    if sys.platform == "emscripten":
        return _js_density(model, backend)
    if NUMPY_MISSING is not None:  # Pyodide, or the pure-Python arrays forced
        reason = f"{NUMPY_MISSING} (the pure-Python sampler runs)"
        if backend == "compiled":
            raise RuntimeError(f"backend='compiled': {reason}")
        return None
    from .compiled_density import compile_density  # NumPy and cffi: not in Pyodide

    cache = getattr(model, "_compiled", None)
    density = cache.get("c_density") if isinstance(cache, dict) else None
    if density is not None:
        return density
    try:
        density = compile_density(model)
    except LoweringError as e:
        reason = f"this model cannot be compiled to C yet: {e}"
    except RuntimeError as e:  # no working C compiler (the reason from compiler_available)
        reason = str(e)
    else:
        if isinstance(cache, dict):
            cache["c_density"] = density
        return density
    if backend == "compiled":
        raise RuntimeError(f"backend='compiled': {reason}")
    if sys.platform != "emscripten":  # a browser never has a compiler: nothing to say there
        warnings.warn(f"mcmc: sampling with NumPy, not the compiled sampler ({reason})",
                      CompiledSamplingUnavailable, stacklevel=3)
    return None


def _js_density(model: Any, backend: str) -> Any:
    """In Pyodide: the model's log density as a JavaScript function, or None for the
    pure-Python sampler (silently under "auto"; an error under "compiled")."""
    cache = getattr(model, "_compiled", None)
    density = cache.get("js_density") if isinstance(cache, dict) else None
    if density is not None:
        return density
    try:
        density = compile_js_density(model)
    except (LoweringError, RuntimeError) as e:
        if backend == "compiled":
            raise RuntimeError(f"backend='compiled': {e}") from e
        return None
    if isinstance(cache, dict):
        cache["js_density"] = density
    return density
