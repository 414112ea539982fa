"""What a worker needs to run a share of ``mcmc``'s chains, whoever started it (the local pool
of ``mcmc(n_cores=k)`` or a Dask cluster, see ``executors``): the model as data, the task that
samples a block of chains (:func:`run_task`) and the merge of the blocks into one ``Draws``.

Each worker rebuilds the model from a pickle of its graph (the nodes around the model's targets:
data, variables, operations, distributions), compiles it for its share of the chains and samples
them batched in lockstep, exactly as ``mcmc`` does in one process. A Dask worker, which lives
for many tasks, keeps its last 8 prepared models (keyed on a digest of their bytes), so its
later tasks of a model skip that setup. Chains are numbered across the
whole run and draw from their own random streams (see ``chain_rng``), so the split does not
change the draws.

Primitives hold closures, which ``pickle`` refuses; the runtime's are sent by name and looked up
in the worker's registry of primitives (``autodiff.core.PRIMITIVES``), a user's ``@tb.primitive``
by its name in the (importable) module that defines it.
Tensors travel as host arrays with their dtype and backend name.

The local pool's workers (:func:`pool_worker`) ignore SIGINT: Ctrl-C (delivered to the whole
process group) and ``should_stop`` are handled by the parent, which sets a shared event; each
worker then ends at its next iteration and sends the draws it has. Workers start through
``forkserver`` (with tensorbridge preloaded, so a worker costs a fork, not an import) where
available, else ``spawn``; never a plain ``fork`` of a process that may hold threads
(TensorFlow, BLAS).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import multiprocessing as mp
import pickle
import sys
import threading
import time
import traceback
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..autodiff.core import PRIMITIVES, Primitive, Tracer
from ..backends import get_backend
from ..errors import SamplingInterrupted
from ..graph.model_compiler import Model
from ..graph.nodes import _lazy, node_of
from ..ops.creation import tensor
from ..tensor import Tensor
from .chains import run_chains
from .compiled_chains import run_chains_compiled
from .draws import Draws
from .sampling_threads import sampling_tuning

__all__ = ["dumps_graph", "dumps_model", "loads_model", "merge_parts", "pool_context",
           "pool_worker", "prepared_cache_info", "rewarn", "run_task", "split_chains",
           "throttled"]

REPORT_S = 0.2  # a task sends a progress report at most this often (after its first)


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
    return dumps_graph((model.targets, inits), "mcmc")


def dumps_graph(obj: Any, who: str) -> bytes:
    """Graph nodes (and any plain data around them) as bytes for a worker: primitives by name,
    tensors as host arrays; nodes keep their identity within one call (one pickle).
    ``who`` names the caller in the error when the graph cannot travel."""
    buf = io.BytesIO()
    try:
        _GraphPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as e:
        # RecursionError: a graph too deep for pickle (a long tb.scan unrolls into a chain)
        raise TypeError(
            f"{who}(cluster=..., n_cores=...): this model cannot be sent to worker processes "
            f"({e}); run it in one process with n_cores=None and cluster=None"
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


# a task's result: (values, free, stats, warmup, interrupted) of its chains, and the warnings it
# caught as (category, message) pairs for the parent to issue
Part = tuple[dict, Any, dict, dict, bool]


# A worker's prepared models (rebuilt, traced, compiled), by a digest of the model's bytes and
# the backend: a Dask worker running many tasks of one model prepares it once. An entry is taken
# out while a task uses it (a model is not shared by two threads at once: a second concurrent
# task of the same model prepares its own) and put back, most recent last, after.
_PREPARED: OrderedDict[tuple[bytes, str], tuple[Any, Any, Any, Any]] = OrderedDict()
_PREPARED_MAX = 8
_PREPARED_LOCK = threading.Lock()
_PREPARED_STATS = {"hits": 0, "misses": 0}


def prepared_cache_info() -> dict[str, int]:
    """This process's cache of prepared models: hits, misses and entries held now."""
    with _PREPARED_LOCK:
        return {**_PREPARED_STATS, "size": len(_PREPARED)}


def _prepare(blob: bytes, backend: str) -> tuple[Any, Any, Any, list[tuple[type, str]]]:
    """The model, its initial values, its compiled density (or None) and the warnings that
    preparing it gave, which a task that finds it in the cache issues again."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, inits, density = _prepare_quietly(blob, backend)
    for w in caught:  # the task's own catch records them for the parent
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return model, inits, density, [(w.category, str(w.message)) for w in caught]


def _prepare_quietly(blob: bytes, backend: str) -> tuple[Any, Any, Any]:
    model, inits = loads_model(blob)
    density = None
    if backend == "compiled":
        from .compiled_density import compile_density  # cffi is optional

        try:
            density = compile_density(model)  # the disk cache: compiled once per machine
        except Exception as e:
            raise RuntimeError(f"mcmc: this worker cannot run the compiled sampler, which "
                               f"the caller's process chose ({e}); pass backend='numpy'"
                               ) from e
    return model, inits, density


@contextlib.contextmanager
def _prepared(blob: bytes, backend: str, cache: bool) -> Iterator[tuple[Any, Any, Any]]:
    if not cache:
        yield _prepare(blob, backend)[:3]
        return
    key = (hashlib.blake2b(blob, digest_size=20).digest(), backend)
    with _PREPARED_LOCK:
        entry = _PREPARED.pop(key, None)
        _PREPARED_STATS["hits" if entry is not None else "misses"] += 1
    if entry is None:
        entry = _prepare(blob, backend)
    else:  # every run's caller hears what preparing its model said, not only the first's
        for category, message in entry[3]:
            warnings.warn(message, category, stacklevel=2)
    yield entry[:3]  # a task that raised does not put its entry back
    with _PREPARED_LOCK:
        _PREPARED[key] = entry
        while len(_PREPARED) > _PREPARED_MAX:
            _PREPARED.popitem(last=False)


def run_task(blob: bytes, chain_ids: list[int], settings: dict[str, Any],
             report: Callable[[dict], Any] | None,
             should_stop: Callable[[], bool] | None,
             cache: bool = False,
             max_threads: int | None = None) -> tuple[Part, list[tuple[type, str]]]:
    """Sample chains ``chain_ids`` of the run that ``settings`` describes (n_samples, warmup,
    sampler, seed, thin, backend: "compiled" or "numpy", report_every) on the model in ``blob``.

    The same function runs in every executor's workers (and in-process), so a block of chains
    draws the same numbers wherever it runs. ``report(info)`` gets the progress dicts of
    ``mcmc(callback=)``; ``should_stop()`` ends the block early with the draws so far.
    ``cache``: keep the prepared model in this process for the next task of the same model
    (a long-lived Dask worker), instead of rebuilding, tracing and compiling it per task.
    ``max_threads``: the compiled sampler's chain threads at most (the worker's threads).
    """
    # one BLAS thread per worker: the workers already fill the cores
    with warnings.catch_warnings(record=True) as caught, sampling_tuning(), np.errstate(
            over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        warnings.simplefilter("default")
        with _prepared(blob, settings["backend"], cache) as (model, inits, density):
            if isinstance(inits, list):
                inits = [inits[c] for c in chain_ids]
            args = (settings["n_samples"], settings["warmup"], len(chain_ids),
                    settings["sampler"], inits, settings["seed"], settings["thin"], False,
                    report, settings["report_every"], should_stop)
            if density is not None:
                d = run_chains_compiled(model, density, *args, chain_ids=chain_ids,
                                        max_threads=max_threads)
            else:
                d = run_chains(model, *args, chain_ids=chain_ids)
    # the user sees the workers' warnings (staging falling back to eager...) in the parent;
    # an interrupt is reported there once, for all workers
    relay = [(w.category, str(w.message)) for w in caught
             if not issubclass(w.category, SamplingInterrupted)]
    return (d.values, d.free, d.stats, d.warmup, d.interrupted), relay


def throttled(send: Callable[[dict], Any], listening: bool,
              every_s: float = REPORT_S) -> Callable[[dict], None]:
    """A task's ``report``: the first report always goes (it says the task has started and has
    draws, which stopping a run relies on), the later ones only when something listens to the
    run's progress (``listening``) and at most every ``every_s`` seconds: one message per
    ``report_every`` iterations of thousands of tasks would flood the scheduler."""
    last = [None]

    def report(info: dict) -> None:
        now = time.monotonic()
        if last[0] is None or (listening and now - last[0] >= every_s):
            last[0] = now
            send(info)

    return report


def pool_worker(wid: int, blob: bytes, chain_ids: list[int], settings: dict[str, Any],
                stop: Any, out: Any) -> None:
    """A process of the local pool: :func:`run_task`, talking to the parent through a queue."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        def send(info: dict) -> None:
            out.put(("progress", wid, info))

        # a local pipe is cheap: every report_every iterations when something listens (exact
        # callback_every, as in one process), else only the first report (it has started)
        report = throttled(send, settings.get("listening", True), every_s=0.0)
        part, relay = run_task(blob, chain_ids, settings, report, stop.is_set)
        if relay:
            out.put(("warnings", wid, relay))
        out.put(("done", wid, part))
    except BaseException:
        out.put(("error", wid, traceback.format_exc()))


def rewarn(caught: list[tuple[type, str]], relayed: set[tuple[type, str]]) -> None:
    """Issue a worker's warnings in the parent, each once (workers repeat the same ones)."""
    for category, message in caught:
        if (category, message) not in relayed:
            relayed.add((category, message))
            warnings.warn(message, category, stacklevel=5)


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


def pool_context() -> Any:
    """The multiprocessing context of the local pool, and a context manager to start its
    processes in (without the user's ``__main__``)."""
    methods = mp.get_all_start_methods()
    if "forkserver" in methods:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["tensorbridge"])
    else:
        ctx = mp.get_context("spawn")
    return ctx, _main_module_hidden()


def merge_parts(parts: list[Part], total: int, stopped: bool) -> Draws:
    """One ``Draws`` from the blocks' results, in chain order; an interrupted run keeps the
    draws every block has (blocks stop at different iterations)."""
    n = min(p[1].shape[1] for p in parts)
    values = {k: np.concatenate([p[0][k][:, :n] for p in parts]) for k in parts[0][0]}
    free = np.concatenate([p[1][:, :n] for p in parts])
    stats = {k: np.concatenate([p[2][k][:, :n] for p in parts]) for k in parts[0][2]}
    warm = [p[3] for p in parts]
    warmup = {"step_size": np.concatenate([np.atleast_1d(w["step_size"]) for w in warm]),
              "inv_metric": np.concatenate([np.asarray(w["inv_metric"]) for w in warm]),
              "divergences": sum(int(w["divergences"]) for w in warm)}
    for k in warm[0]:
        warmup.setdefault(k, [w[k] for w in warm])
    interrupted = stopped or any(p[4] for p in parts)
    if interrupted:
        warnings.warn(f"mcmc: interrupted; returning the {n} draws per chain taken so far "
                      f"(of {total} iterations)", SamplingInterrupted, stacklevel=4)
    return Draws(values, free, stats, warmup=warmup, interrupted=interrupted)
