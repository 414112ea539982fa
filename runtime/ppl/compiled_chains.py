"""``run_chains`` with the sampler in compiled code: each chain's warmup and sampling run in C
(``runtime/compiled/sampler.c``, one thread per chain, against a log density that is a C
function pointer) or, in Pyodide, in JavaScript (``runtime/compiled/sampler.js``, chains in
turn, against the density lowered to JavaScript); Python sees only progress, interrupts and the
draws.

The semantics and the output are ``chains.run_chains``'s: the same initial points (found here in
Python with the model's own target), the same per-chain random streams, the same adaptation,
thinning, statistics, warmup information and interrupts. Chains advance in blocks of iterations
(sized to take about ``_BLOCK_SECONDS``); between blocks the main thread reports progress and
checks ``should_stop``, the host's safe point and Ctrl-C, so an interrupt ends the run at the end
of the current block with the draws taken so far. The bookkeeping uses the host array module
(NumPy, or the pure arrays of Pyodide).
"""

from __future__ import annotations

import concurrent.futures as cf
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from ..compiled.js_sampler import JsChainRun
from ..errors import SamplingInterrupted
from ..host_namespace import xp
from .chain_rng import chain_rng
from .chains import (
    STATS,
    Progress,
    SamplerConfig,
    _constrained_draws,
    _initial_free,
    _trace_derived,
    nuts,
    stop_requested,
)
from .draws import Draws
from .hamiltonian import guard_target

__all__ = ["run_chains_compiled"]

_STAT_DTYPES = dict(zip(STATS, (float, int, int, bool, float, float)))
_BLOCK_SECONDS = 0.05  # between progress updates and interrupt checks


def run_chains_compiled(model: Any, density: Any, n_samples: int, warmup: int, chains: int,
                        sampler: SamplerConfig | None, initial_values: Any, seed: int | None,
                        thin: int, progress: bool | None,
                        callback: Callable[[dict], Any] | None, callback_every: int,
                        should_stop: Callable[[], bool] | None,
                        chain_ids: list[int] | None = None,
                        max_threads: int | None = None) -> Draws:
    """``chains.run_chains`` with every chain in compiled code; ``density`` is the model's
    adjusted log density and gradient on the free scale: a C function (``fn_address``,
    ``new_context()``, ``n``: ``compiled.sampler.Density``, e.g. the C lowering of ``model``'s
    program; chains on threads) or a ``compiled.js_sampler.JsDensity`` (chains in turn).
    ``max_threads``: at most this many chain threads (a Dask worker's thread count: more would
    oversubscribe its cores); the draws do not depend on it."""
    cfg = sampler or nuts()
    for name, v, lo in (("n_samples", n_samples, 1), ("warmup", warmup, 0), ("chains", chains, 1),
                        ("thin", thin, 1)):
        if not isinstance(v, int) or v < lo:
            raise ValueError(f"{name}: expected an integer >= {lo}, got {v!r}")
    n = model.n_free
    if density.n != n:
        raise ValueError(f"density: {density.n} free parameters, the model has {n}")
    rng = chain_rng(seed, chains, chain_ids, xp)
    with xp.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        # tries of initial points may overflow: they are retried, not warned about (as mcmc)
        # a start where the density raises is retried, as where it is -inf
        q0 = _initial_free(model, chains, initial_values, rng,
                           guard_target(model.compiled_target(chains)))
    run_class = _run_class(density)
    runs = [run_class(density, q0[c], rng.keys[c], kind=cfg.kind, warmup=warmup,
                     n_samples=n_samples, thin=thin, max_depth=cfg.max_depth,
                     n_leapfrog=cfg.n_leapfrog, target_accept=cfg.target_accept,
                     step_size=cfg.step_size or 1.0, adapt_step=cfg.step_size is None,
                     pairwise_accept=chains == 1)  # how NumPy sums a batch of one
            for c in range(chains)]

    total = warmup + n_samples * thin
    bar = Progress(total, sys.stderr.isatty() if progress is None else progress, callback,
                   callback_every)
    # which iterations' divergences the progress counts: warmup's and the kept draws' (as
    # run_chains, which counts a thinned-out iteration's divergences nowhere)
    counted = [i < warmup or (i - warmup) % thin == 0 for i in range(total)]
    divergences = 0
    done = 0  # iterations every chain has finished
    interrupted = False
    threads = min(chains, max_threads or chains)
    pool = cf.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tb-chain") \
        if threads > 1 and run_class is not JsChainRun else None
    try:
        block = 1  # the first block also runs the step-size search
        while done < total:
            if stop_requested(should_stop):
                interrupted = True
                break
            k = min(block, total - done)
            start = time.perf_counter()
            stop = _run_block(runs, k, pool)
            elapsed = time.perf_counter() - start
            for r in runs:
                r.raise_pending()
            divergences = _report(bar, runs, counted, done, k, warmup, divergences)
            done += k
            if stop:
                interrupted = True
                break
            if elapsed < _BLOCK_SECONDS / 2:
                block *= 2
            elif elapsed > 2 * _BLOCK_SECONDS and block > 1:
                block //= 2
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if pool is not None:
            pool.shutdown(wait=True)

    kept = min(r.kept for r in runs)
    if interrupted:
        warnings.warn(f"mcmc: interrupted at iteration {done + 1} of {total}; returning the "
                      f"{kept} draws taken so far", SamplingInterrupted, stacklevel=3)
    free = xp.asarray([r.draws_rows(kept) for r in runs], dtype=float) if kept else \
        xp.zeros((chains, 0, model.n_free))
    stats = {k: (xp.asarray([r.stat(k, kept) for r in runs], dtype=dtype) if kept
                 else xp.zeros((chains, 0), dtype=dtype))
             for k, dtype in _STAT_DTYPES.items()}
    values = _constrained_draws(model, free)
    warmup_info = {"step_size": xp.asarray([r.step_size for r in runs], dtype=float),
                   "inv_metric": xp.asarray([list(r.inv_metric) for r in runs], dtype=float),
                   "divergences": sum(r.warmup_divergences for r in runs)}
    draws = Draws(values, free, stats, warmup=warmup_info, interrupted=interrupted)
    draws.node_names = dict(zip(model.variables, model.variable_names()))
    _trace_derived(model, draws)
    return draws


def _report(bar: Progress, runs: list[Any], counted: list[bool], done: int, k: int,
            warmup: int, divergences: int) -> int:
    """Progress for iterations ``done .. done + k - 1``: ``bar.update`` where run_chains's
    would call the callback, at the end of warmup (the count of warmup divergences) and at the
    block's end (the bar); returns the divergences so far."""
    flags = [r.divergent(done, done + k) for r in runs]
    cumulative, total = [], divergences
    for j in range(k):
        if counted[done + j]:
            total += sum(1 for f in flags if f[j])
        cumulative.append(total)
    at = {k - 1}
    if warmup - 1 - done in range(k):
        at.add(warmup - 1 - done)
    if bar.reports_every:  # a sink (the callback, a door's) may want every bar.every-th
        first = -(done + 1) % bar.every  # the first j with (done + j + 1) % every == 0
        at.update(range(first, k, bar.every))
        if done + k == bar.total:
            at.add(k - 1)
    for j in sorted(at):
        i = done + j
        bar.update(i, "warmup" if i < warmup else "sampling", cumulative[j])
    return cumulative[-1]


def _run_class(density: Any) -> Any:
    """The chain runner for ``density``: C (``fn_address``) or JavaScript."""
    if hasattr(density, "fn_address"):
        from ..compiled.sampler import ChainRun  # cffi and NumPy: not in Pyodide

        return ChainRun
    return JsChainRun


def _run_block(runs: list[Any], k: int, pool: cf.ThreadPoolExecutor | None) -> bool:
    """``k`` iterations of every chain; True when Ctrl-C came meanwhile. The chains always
    finish the block (C cannot be stopped mid-call), so they stay in step."""
    if pool is None:
        try:
            for r in runs:
                r.run(k)
        except KeyboardInterrupt:  # pragma: no cover - raised only after the C call returned
            return True
        return False
    futures = [pool.submit(r.run, k) for r in runs]
    stop = False
    while True:
        try:
            cf.wait(futures)
            break
        except KeyboardInterrupt:
            stop = True  # wait for the block: its threads are writing into the draws
    for f in futures:
        f.result()  # a chain's error (out of memory) surfaces here
    return stop
