"""``mcmc(..., n_cores=k)``: chains split over worker processes, merged into one ``Draws``.

Each worker rebuilds the model from a pickle of its graph (the nodes around the model's targets:
data, variables, operations, distributions), compiles it for its share of the chains and samples
them batched in lockstep, exactly as ``mcmc`` does in one process. Chains are numbered across the
whole run and draw from their own random streams (see ``chain_rng``), so the split does not
change the draws.

Primitives hold closures, which ``pickle`` refuses; the runtime's are sent by name and looked up
in the worker's registry of primitives (``autodiff.core.PRIMITIVES``), a user's ``@tb.primitive``
by its name in the (importable) module that defines it.
Tensors travel as host arrays with their dtype and backend name.

Workers ignore SIGINT: Ctrl-C (delivered to the whole process group) and ``should_stop`` are
handled by the parent, which sets a shared event; each worker then ends at its next iteration and
sends the draws it has. Workers start through ``forkserver`` (with tensorbridge preloaded, so a
worker costs a fork, not an import) where available, else ``spawn``; never a plain ``fork``
of a process that may hold threads (TensorFlow, BLAS).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import multiprocessing as mp
import pickle
import queue
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..autodiff.core import PRIMITIVES, Primitive, Tracer
from ..backends import get_backend
from ..errors import SamplingInterrupted
from ..graph.model_compiler import Model
from ..graph.nodes import _lazy, node_of
from ..interrupts import safe_point
from ..ops.creation import tensor
from ..tensor import Tensor
from .chains import Progress, run_chains
from .draws import Draws
from .sampling_threads import sampling_tuning

__all__ = ["dumps_model", "loads_model", "run_parallel", "split_chains"]

_POLL_S = 0.05


# ------------------------------------------------------------------------- model transport
def _primitive_by_name(name: str) -> Primitive:
    prim = PRIMITIVES.get(name)
    if prim is None:
        raise pickle.UnpicklingError(f"primitive {name!r} is not defined in this process")
    return prim


def _user_primitive(prim: Primitive) -> tuple[str, str] | None:
    """A ``@tb.primitive`` bound to a name in the (importable) module that defines it."""
    mod_name = getattr(getattr(prim, "forward", None), "__module__", None)
    mod = sys.modules.get(mod_name or "")
    if mod is None or mod_name == "__main__":
        return None
    return next(((mod_name, k) for k, v in vars(mod).items() if v is prim), None)


def _load_user_primitive(module: str, attr: str) -> Primitive:
    return getattr(importlib.import_module(module), attr)


def _load_tensor(value: Any, dtype: str, backend: str) -> Tensor:
    return tensor(value, dtype=dtype, backend=backend)


def _load_backend(name: str) -> Any:
    return get_backend(name)


class _GraphPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Primitive):
            if PRIMITIVES.get(obj.name) is obj and not hasattr(obj, "forward"):
                return _primitive_by_name, (obj.name,)  # the runtime's
            where = _user_primitive(obj)
            if where is None:
                raise pickle.PicklingError(
                    f"primitive {obj.name!r} is not a module-level object of an importable "
                    f"module")
            return _load_user_primitive, where
        if isinstance(obj, Tensor) and not isinstance(obj, Tracer):
            return _load_tensor, (np.asarray(obj.numpy()), obj.dtype.name, obj.backend.name)
        if type(obj).__module__.startswith("tensorbridge.runtime.backends") and hasattr(
                obj, "to_numpy") and isinstance(getattr(obj, "name", None), str):
            return _load_backend, (obj.name,)
        return NotImplemented


def dumps_model(model: Any, initial_values: Any = None) -> bytes:
    """The model's graph (and initial values keyed by its variables) as bytes for a worker."""
    def by_node(d: Any) -> Any:
        return {node_of(k): v for k, v in d.items()} if isinstance(d, dict) else d

    inits = ([by_node(d) for d in initial_values] if isinstance(initial_values, list)
             else by_node(initial_values))
    buf = io.BytesIO()
    try:
        _GraphPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump((model.targets, inits))
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as e:
        # RecursionError: a graph too deep for pickle (a long tb.scan unrolls into a chain)
        raise TypeError(
            f"mcmc(n_cores=...): this model cannot be sent to worker processes ({e}); run it in "
            f"one process with n_cores=None"
        ) from None
    return buf.getvalue()


def loads_model(blob: bytes) -> tuple[Any, Any]:
    """Rebuild ``(model, initial_values)`` from :func:`dumps_model`'s bytes."""
    targets, inits = pickle.loads(blob)

    def by_lazy(d: Any) -> Any:
        return {_lazy(k): v for k, v in d.items()} if isinstance(d, dict) else d

    inits = [by_lazy(d) for d in inits] if isinstance(inits, list) else by_lazy(inits)
    return Model([_lazy(t) for t in targets]), inits


# ------------------------------------------------------------------------------- workers
def split_chains(chains: int, n_cores: int) -> list[list[int]]:
    """Contiguous groups of chain indices, as even as possible, one per worker."""
    k = min(n_cores, chains)
    base, extra = divmod(chains, k)
    groups, start = [], 0
    for w in range(k):
        size = base + (w < extra)
        groups.append(list(range(start, start + size)))
        start += size
    return groups


def _worker(wid: int, blob: bytes, chain_ids: list[int], kwargs: dict[str, Any],
            stop: Any, out: Any) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        model, inits = loads_model(blob)
        if isinstance(inits, list):
            inits = [inits[c] for c in chain_ids]
        every = kwargs.pop("report_every")

        def report(info: dict) -> None:
            out.put(("progress", wid, info))

        # one BLAS thread per worker: the workers already fill the cores
        with warnings.catch_warnings(record=True) as caught, sampling_tuning(), np.errstate(
                over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            warnings.simplefilter("default")
            d = run_chains(model, kwargs["n_samples"], kwargs["warmup"], len(chain_ids),
                           kwargs["sampler"], inits, kwargs["seed"], kwargs["thin"], False, report,
                           every, stop.is_set, chain_ids=chain_ids)
        # the user sees the workers' warnings (staging falling back to eager...) in the parent;
        # an interrupt is reported there once, for all workers
        relay = [(w.category, str(w.message)) for w in caught
                 if not issubclass(w.category, SamplingInterrupted)]
        if relay:
            out.put(("warnings", wid, relay))
        out.put(("done", wid, (d.values, d.free, d.stats, d.warmup, d.interrupted)))
    except BaseException:
        out.put(("error", wid, traceback.format_exc()))


def _rewarn(caught: list[tuple[type, str]], relayed: set[tuple[type, str]]) -> None:
    """Issue a worker's warnings in the parent, each once (workers repeat the same ones)."""
    for category, message in caught:
        if (category, message) not in relayed:
            relayed.add((category, message))
            warnings.warn(message, category, stacklevel=4)


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Start workers without re-running the user's script in them.

    multiprocessing's forkserver and spawn re-import ``__main__`` (by file or module name) in
    every worker, so a script that calls ``mcmc(n_cores=...)`` at top level, without an
    ``if __name__ == "__main__"`` guard, would run again there. The workers do not need it: the
    model travels as its own pickle (primitives by module path). Hiding the main module's
    ``__file__`` and ``__spec__`` while workers start leaves it out of their preparation data.
    """
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if main and k in main.__dict__}
    try:
        for k in saved:
            if k == "__file__":
                del main.__file__
            else:
                main.__spec__ = None
        yield
    finally:
        for k, v in saved.items():
            setattr(main, k, v)


def _context() -> Any:
    methods = mp.get_all_start_methods()
    if "forkserver" in methods:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["tensorbridge"])
        return ctx
    return mp.get_context("spawn")


def run_parallel(model: Any, n_cores: int, *, n_samples: int, warmup: int, chains: int,
                 sampler: Any, initial_values: Any, seed: int, thin: int,
                 progress: bool | None, callback: Callable[[dict], Any] | None,
                 callback_every: int, should_stop: Callable[[], bool] | None) -> Draws:
    if isinstance(n_cores, bool) or not isinstance(n_cores, int) or n_cores < 1:
        raise ValueError(f"n_cores: expected an integer >= 1, got {n_cores!r}")
    for name, v, lo in (("n_samples", n_samples, 1), ("warmup", warmup, 0),
                        ("chains", chains, 1), ("thin", thin, 1)):
        if not isinstance(v, int) or v < lo:
            raise ValueError(f"{name}: expected an integer >= {lo}, got {v!r}")
    if isinstance(initial_values, list) and len(initial_values) != chains:
        raise ValueError(f"initial_values: got {len(initial_values)} sets for {chains} chains")
    groups = split_chains(chains, n_cores)
    blob = dumps_model(model, initial_values)
    total = warmup + n_samples * thin
    bar = Progress(total, sys.stderr.isatty() if progress is None else progress, callback,
                    callback_every)
    kwargs = {"n_samples": n_samples, "warmup": warmup, "sampler": sampler, "seed": seed,
              "thin": thin, "report_every": callback_every if callback else 10}
    with _main_module_hidden():
        ctx = _context()
        stop = ctx.Event()
        out = ctx.Queue()
        procs = [ctx.Process(target=_worker, args=(w, blob, g, dict(kwargs), stop, out),
                             daemon=True) for w, g in enumerate(groups)]
        for p in procs:
            p.start()
    results: dict[int, tuple] = {}
    done_iter = [0] * len(groups)
    divs = [0] * len(groups)
    shown = 0
    stopped = False
    relayed: set[tuple[type, str]] = set()
    try:
        while len(results) < len(groups):
            try:
                kind, wid, payload = out.get(timeout=_POLL_S)
            except queue.Empty:
                kind = None
            if kind == "progress":
                done_iter[wid], divs[wid] = payload["iteration"], payload["divergences"]
                while shown < min(done_iter):
                    bar.update(shown, "warmup" if shown < warmup else "sampling", sum(divs))
                    shown += 1
            elif kind == "done":
                results[wid] = payload
            elif kind == "warnings":
                _rewarn(payload, relayed)
            elif kind == "error":
                raise RuntimeError(f"mcmc: worker {wid} (chains {groups[wid]}) failed:\n"
                                   f"{payload}")
            elif any(not p.is_alive() and i not in results for i, p in enumerate(procs)):
                time.sleep(_POLL_S)  # its last message may still be in the pipe
                if out.empty():
                    bad = [i for i, p in enumerate(procs) if not p.is_alive()
                           and i not in results]
                    raise RuntimeError(f"mcmc: worker(s) {bad} exited without results")
            if not stopped:
                try:
                    if should_stop is not None and should_stop():
                        stopped = True
                    else:
                        safe_point()
                except BaseException:  # a host's interrupt: keep the draws
                    stopped = True
                if stopped:
                    stop.set()
    except KeyboardInterrupt:
        stop.set()
        stopped = True
        while len(results) < len(groups):  # collect what the workers have
            try:
                kind, wid, payload = out.get(timeout=1.0)
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    raise RuntimeError("mcmc: workers exited without results") from None
                continue
            if kind == "done":
                results[wid] = payload
            elif kind == "warnings":
                _rewarn(payload, relayed)
            elif kind == "error":
                raise RuntimeError(f"mcmc: worker {wid} failed:\n{payload}") from None
    finally:
        stop.set()
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
    draws = _merge([results[w] for w in range(len(groups))], total, stopped)
    draws.node_names = dict(zip(model.variables, model.variable_names()))
    return draws


def _merge(parts: list[tuple], total: int, stopped: bool) -> Draws:
    n = min(p[1].shape[1] for p in parts)  # workers stopped at different iterations
    values = {k: np.concatenate([p[0][k][:, :n] for p in parts]) for k in parts[0][0]}
    free = np.concatenate([p[1][:, :n] for p in parts])
    stats = {k: np.concatenate([p[2][k][:, :n] for p in parts]) for k in parts[0][2]}
    warm = [p[3] for p in parts]
    warmup = {"step_size": np.concatenate([np.atleast_1d(w["step_size"]) for w in warm]),
              "inv_metric": np.concatenate([w["inv_metric"] for w in warm]),
              "divergences": sum(int(w["divergences"]) for w in warm)}
    for k in warm[0]:
        warmup.setdefault(k, [w[k] for w in warm])
    interrupted = stopped or any(p[4] for p in parts)
    if interrupted:
        warnings.warn(f"mcmc: interrupted; returning the {n} draws per chain taken so far "
                      f"(of {total} iterations)", SamplingInterrupted, stacklevel=4)
    return Draws(values, free, stats, warmup=warmup, interrupted=interrupted)
