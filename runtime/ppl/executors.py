"""Where ``mcmc``'s chains run: in this process, in a local pool of worker processes
(``mcmc(n_cores=k)``) or on a Dask distributed cluster (``mcmc(cluster=client)`` or
``cluster="tcp://host:8786"``).

One code path for all three (:func:`run_mcmc`): the executor splits the chains into tasks
(blocks of contiguous chain indices), every task runs ``parallel.run_task`` on the model sent as
data (the pickled graph and its data, primitives by name: never a pickled closure, so a worker
needs only tensorbridge installed), the executor relays each task's progress and the results
are merged in chain order by ``parallel.merge_parts``. Every chain draws from its own stream of
``(seed, chain index)``, so a task draws the same numbers wherever and however often it runs.

How the chains are split is the executor's, and the draws depend on it only through the size of
the blocks (NumPy reduces a batch of one chain along another path than a batch of several, and
the compiled sampler copies that): the Dask executor's blocks depend on ``chains_per_task``
only, never on the cluster's workers (which come and go), so the same seed gives bit-identical
draws on one worker, on two, after a worker was killed and its task re-run, and in-process with
the same blocks (:class:`InProcess`). Its default, 2 chains per task and never a lone chain,
also matches ``mcmc`` in one process bit for bit.

``n_cores`` stays a thin local pool (:class:`LocalProcesses`: one forkserver process per block,
``split_chains(chains, n_cores)``) instead of becoming a ``LocalCluster``: Dask is an optional
dependency, and a ``LocalCluster`` costs seconds (a scheduler, nannies, spawned workers importing
distributed) and a few milliseconds of scheduling per task, where the pool costs a fork. The
pool is one more executor behind the same interface, so there is one task function, one
progress merge and one merge of the draws.

Faults and interrupts on Dask: a worker that dies (SIGKILL, out of memory, a lost node) has its
tasks re-run by the scheduler on another worker from their seeds, so the result is the one an
undisturbed run gives (up to ``distributed.scheduler.allowed-failures`` deaths per task, then
``KilledWorker``). An exception inside a task is not retried (it is the model's: it would fail
again) and is raised here with the worker's traceback. Ctrl-C or ``should_stop`` sets a Dask
``Event`` the tasks poll (at most every ``_STOP_POLL_S``): running tasks end at their next
iteration and return their draws, tasks not started are cancelled, and the run returns the
chains of the tasks that ran, trimmed to their common length, marked ``interrupted``. A lost
scheduler (the client cancels every future it had) raises :class:`ClusterLostError`, whose
``draws`` keeps the chains of the tasks that had already returned.

Progress: each task reports its iteration and divergences through the scheduler's event log
(``Worker.log_event`` on a topic of the run, which the client subscribes to): its first report
always (the task has started, and has draws), later ones every ``report_every`` iterations but
at most every ``parallel.REPORT_S`` seconds, and none when the run has no bar, callback or
sink (``progress=False``: no message per iteration for thousands of tasks); the executor
feeds the run's one ``Progress`` (the bar, the callback, the doors' sinks) with the
iterations done per chain, averaged over all chains, as for the local pool's processes (whose
tasks report every ``report_every`` iterations: a queue in this machine). A re-run task reports
from its start again: the bar waits for it, never goes back.

Other work (``tb.sbc``'s replications, ``tb.map``, ``simulate``/``calculate`` over blocks of
posterior draws) goes through the same executors as independent tasks: :func:`run_tasks` calls
``fn(item)`` for every item on the executor (``map_tasks``: a loop here, the local pool's
processes, or one Dask future per item) and returns the results in the items' order; a task that
raises is reported with its item's index. The runtime's own task functions are module-level (sent
by reference) and their items are data (the model as :func:`parallel.dumps_model`'s bytes); a
user's function (``tb.map``) is sent by value with cloudpickle. A Dask task whose worker dies is
re-run from its item, so the results never depend on the workers.
"""

from __future__ import annotations

import math
import pickle
import queue
import sys
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SamplingInterrupted
from ..progress_events import has_sinks
from .chains import Progress, stop_requested
from .draws import Draws
from .parallel import (
    dumps_model,
    merge_parts,
    pool_context,
    pool_worker,
    rewarn,
    run_task,
    split_chains,
    throttled,
)

__all__ = ["ClusterLostError", "DaskCluster", "InProcess", "LocalProcesses", "TaskError",
           "as_executor", "executor_for", "run_mcmc", "run_tasks"]

_POLL_S = 0.05  # the local pool's loop: a worker that died, should_stop
# a Dask run's loop sleeps until a task reports or ends, or this long: should_stop and the
# host's safe point (Ctrl-C in R) are looked at then
_WAIT_S = 0.25
_STOP_POLL_S = 0.25  # a Dask task's look at the run's stop event (a round trip to the scheduler)
_EMBED_BYTES = 1 << 20  # larger models are scattered to the workers once, not sent per task


class ClusterLostError(RuntimeError):
    """The cluster lost the run's tasks (the scheduler went away); ``draws`` holds the chains
    whose tasks had returned (a ``Draws``, or None when none had), ``chains`` their indices
    in the run."""

    def __init__(self, message: str, draws: Draws | None, chains: list[int]) -> None:
        super().__init__(message)
        self.draws, self.chains = draws, chains


class TaskError(RuntimeError):
    """A task of :func:`run_tasks` raised: ``index`` is its item's position in the input."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


class _ItemFailedError(Exception):
    """An executor's ``map_tasks``: item ``index`` raised ``error`` (``trace``: its traceback
    where it ran in another process)."""

    def __init__(self, index: int, error: BaseException, trace: str = "") -> None:
        super().__init__(index, error)
        self.index, self.error, self.trace = index, error, trace


class _TasksLostError(Exception):
    """Raised by an executor: the tasks still running were lost; ``results`` those returned."""

    def __init__(self, results: dict[int, Any], why: str) -> None:
        super().__init__(why)
        self.results, self.why = results, why


class _Tracker:
    """The run's progress from its tasks' reports: the bar shows the iterations done per chain
    on average over all chains (tasks still queued count as 0, so a cluster with fewer workers
    than tasks still moves the bar), never going back (a task that starts again holds it), and
    the divergences the tasks last reported."""

    def __init__(self, bar: Progress, groups: list[list[int]], warmup: int) -> None:
        self.bar, self.warmup = bar, warmup
        self.sizes = [len(g) for g in groups]
        self.chains = sum(self.sizes)
        self.iteration = [0] * len(groups)
        self.divergences = [0] * len(groups)
        self.started: set[int] = set()
        self.shown = 0

    def finish(self, task: int, part: Any) -> None:
        """A task's result: its last iteration and divergences, as its last report says."""
        if not part[4]:  # not interrupted: every iteration ran
            divergences = int(part[3]["divergences"]) + int(part[2]["divergent"].sum())
            self.report(task, {"iteration": self.bar.total, "divergences": divergences})

    def report(self, task: int, info: dict) -> None:
        self.started.add(task)
        self.iteration[task], self.divergences[task] = info["iteration"], info["divergences"]
        done = sum(i * n for i, n in zip(self.iteration, self.sizes)) // self.chains
        while self.shown < done:
            phase = "warmup" if self.shown < self.warmup else "sampling"
            self.bar.update(self.shown, phase, sum(self.divergences))
            self.shown += 1


@dataclass
class _Run:
    """What an executor gets: the model as bytes, the blocks of chains, the task settings."""

    blob: bytes
    groups: list[list[int]]
    settings: dict[str, Any]
    tracker: _Tracker
    stop_requested: Callable[[], bool]  # should_stop or the host's safe point


class InProcess:
    """The tasks one after another in this process (the reference the others must match)."""

    def __init__(self, chains_per_task: int = 2) -> None:
        self.chains_per_task = _check_per_task(chains_per_task)

    def split(self, chains: int) -> list[list[int]]:
        return _blocks(chains, self.chains_per_task)

    def run(self, run: _Run) -> tuple[dict[int, Any], bool]:
        results: dict[int, Any] = {}
        stopped = False
        relayed: set[tuple[type, str]] = set()
        for t, g in enumerate(run.groups):
            def report(info: dict, t: int = t) -> None:
                run.tracker.report(t, info)

            try:
                part, relay = run_task(run.blob, g, run.settings, report, run.stop_requested)
            except KeyboardInterrupt:
                stopped = True
                break
            rewarn(relay, relayed)
            results[t] = part
            if part[4]:  # this task was stopped: the later ones do not start
                stopped = True
                break
        return results, stopped

    def map_tasks(self, fn: Callable[[Any], Any], items: Sequence[Any],
                  on_done: Callable[[int], Any]) -> list[Any]:
        out = []
        for i, item in enumerate(items):
            try:
                out.append(fn(item))
            except Exception as e:
                raise _ItemFailedError(i, e) from e
            on_done(i)
        return out


class LocalProcesses:
    """``mcmc(n_cores=k)``: one process per block of ``split_chains(chains, k)``, started
    through forkserver (a fork of a process with tensorbridge imported), stopped through a
    shared event."""

    def __init__(self, n_workers: int) -> None:
        if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
            raise ValueError(f"n_cores: expected an integer >= 1, got {n_workers!r}")
        self.n_workers = n_workers

    def split(self, chains: int) -> list[list[int]]:
        return split_chains(chains, self.n_workers)

    def run(self, run: _Run) -> tuple[dict[int, Any], bool]:
        ctx, hidden = pool_context()
        with hidden:
            stop = ctx.Event()
            out = ctx.Queue()
            procs = [ctx.Process(target=pool_worker, args=(t, run.blob, g, run.settings, stop,
                                                           out), daemon=True)
                     for t, g in enumerate(run.groups)]
            for p in procs:
                p.start()
        results: dict[int, Any] = {}
        relayed: set[tuple[type, str]] = set()
        stopped = False

        def handle(kind: str, t: int, payload: Any) -> None:
            if kind == "progress":
                run.tracker.report(t, payload)
            elif kind == "done":
                results[t] = payload
            elif kind == "warnings":
                rewarn(payload, relayed)
            elif kind == "error":
                raise RuntimeError(f"mcmc: worker {t} (chains {run.groups[t]}) failed:\n"
                                   f"{payload}")

        try:
            while len(results) < len(procs):
                try:
                    kind, t, payload = out.get(timeout=_POLL_S)
                except queue.Empty:
                    dead = [i for i, p in enumerate(procs) if not p.is_alive()
                            and i not in results]
                    if dead:
                        # its last message may still be in the pipe
                        try:
                            handle(*out.get(timeout=1.0))
                        except queue.Empty:
                            raise RuntimeError(f"mcmc: worker(s) {dead} exited without "
                                               f"results") from None
                else:
                    handle(kind, t, payload)
                if not stopped and run.stop_requested():
                    stopped = True
                    stop.set()
        except KeyboardInterrupt:
            stop.set()
            stopped = True
            while len(results) < len(procs):  # collect what the workers have
                try:
                    handle(*out.get(timeout=1.0))
                except queue.Empty:
                    if not any(p.is_alive() for p in procs):
                        raise RuntimeError("mcmc: workers exited without results") from None
        finally:
            stop.set()
            for p in procs:
                p.join(timeout=10)
                if p.is_alive():
                    p.terminate()
        return results, stopped

    def map_tasks(self, fn: Callable[[Any], Any], items: Sequence[Any],
                  on_done: Callable[[int], Any]) -> list[Any]:
        """The items on at most ``n_workers`` processes (a forkserver pool); ``fn`` travels by
        reference, or by value with cloudpickle when it is not importable (a lambda)."""
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        if not items:
            return []
        blob = _dumps_fn(fn)
        ctx, hidden = pool_context()
        out: dict[int, Any] = {}
        pool = ProcessPoolExecutor(max_workers=min(self.n_workers, len(items)), mp_context=ctx)
        try:
            with hidden:  # the pool starts its processes as tasks are submitted
                futures = {pool.submit(_call_fn, blob, item): i for i, item in enumerate(items)}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=_POLL_S, return_when=FIRST_COMPLETED)
                for f in sorted(done, key=futures.__getitem__):
                    i = futures[f]
                    ok, value = f.result()
                    if not ok:
                        raise _ItemFailedError(i, value[0], value[1])
                    out[i] = value
                    on_done(i)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return [out[i] for i in range(len(items))]


class DaskCluster:
    """Chains as tasks on a Dask distributed cluster: ``client`` is a ``distributed.Client``
    (used as is, left open) or a scheduler address such as ``"tcp://host:8786"`` (connected to
    for the run, closed after it). Blocks of ``chains_per_task`` chains (a lone chain only when
    the run has one), whatever the cluster's size, so the draws do not depend on it."""

    def __init__(self, client: Any, chains_per_task: int = 2, timeout: float = 30.0) -> None:
        if not isinstance(client, str) and not hasattr(client, "submit"):
            raise TypeError(f"cluster: expected a distributed.Client or a scheduler address "
                            f"such as 'tcp://host:8786', got {type(client).__name__}")
        self.client = client
        self.chains_per_task = _check_per_task(chains_per_task)
        self.timeout = timeout

    def split(self, chains: int) -> list[list[int]]:
        return _blocks(chains, self.chains_per_task)

    def run(self, run: _Run) -> tuple[dict[int, Any], bool]:
        try:
            from distributed import Client, Event
        except ImportError as e:  # pragma: no cover - dask is in the dev extra
            raise ImportError("mcmc(cluster=...) needs Dask distributed: pip install "
                              "'tensorbridge[dask]'") from e
        own = isinstance(self.client, str)
        client = (Client(self.client, timeout=self.timeout, set_as_default=False) if own
                  else self.client)
        try:
            return self._run(client, Event, run)
        finally:
            if own:
                client.close()

    def _run(self, client: Any, Event: Any, run: _Run) -> tuple[dict[int, Any], bool]:
        name = f"tensorbridge-mcmc-{uuid.uuid4().hex}"
        # progress reports (dicts) and ends of tasks (None) wake this thread; the handlers run
        # on the client's event loop thread
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        client.subscribe_topic(name, lambda event: inbox.put(event[1]))
        stop_event = Event(f"{name}-stop", client=client)
        blob: Any = run.blob
        if len(blob) > _EMBED_BYTES:  # on every worker: a killed one does not lose it
            blob = client.scatter(blob, broadcast=True, hash=False)
        futures = [client.submit(_dask_task, blob, g, run.settings, name, t, key=f"{name}-{t}",
                                 pure=False, retries=0)
                   for t, g in enumerate(run.groups)]
        for f in futures:  # (a lost future that is re-run ends once, when it finishes)
            f.add_done_callback(lambda f: inbox.put(None))
        results: dict[int, Any] = {}
        relayed: set[tuple[type, str]] = set()
        stopped = False
        try:
            while len(results) < len(futures):
                try:
                    item = inbox.get(timeout=_WAIT_S)
                except queue.Empty:
                    item = None
                while True:  # drain: the reports come in bursts
                    if item is not None:
                        run.tracker.report(item["task"], item)
                    try:
                        item = inbox.get_nowait()
                    except queue.Empty:
                        break
                for t, f in _ended(futures, results):
                    if f.status == "cancelled":
                        if not stopped:  # not ours: the client lost the scheduler
                            returned = {k: v for k, v in results.items() if v is not None}
                            raise _TasksLostError(returned, _lost(client, "the run's tasks"))
                        results[t] = None
                        continue
                    try:
                        part, relay = f.result()
                    except Exception as e:
                        raise RuntimeError(f"mcmc: the task of chains {run.groups[t]} failed on "
                                           f"the cluster: {type(e).__name__}: {e}") from e
                    rewarn(relay, relayed)
                    results[t] = part
                    # its last progress report may come after its result (another channel)
                    run.tracker.finish(t, part)
                if not stopped and run.stop_requested():
                    stopped = True
                    self._stop(client, stop_event, futures, run.tracker, results)
        except KeyboardInterrupt:
            stopped = True
            self._stop(client, stop_event, futures, run.tracker, results)
            for t, f in enumerate(futures):  # the started tasks end at their next iteration
                if t not in results and f.status != "cancelled":
                    results[t] = f.result()[0]
        finally:
            pending = [f for f in futures if f.status == "pending"]
            if pending:  # an error or a second Ctrl-C: nothing of this run stays queued
                client.cancel(pending, force=True)
            if client.status == "running":  # (not after the scheduler went away)
                client.unsubscribe_topic(name)
        return {t: p for t, p in results.items() if p is not None}, stopped

    def map_tasks(self, fn: Callable[[Any], Any], items: Sequence[Any],
                  on_done: Callable[[int], Any]) -> list[Any]:
        """One future per item (Dask sends ``fn`` by reference when importable, else with
        cloudpickle); a worker that dies has its tasks re-run from their items."""
        try:
            from distributed import Client
        except ImportError as e:  # pragma: no cover - dask is in the dev extra
            raise ImportError("cluster=...: needs Dask distributed: pip install "
                              "'tensorbridge[dask]'") from e
        if not items:
            return []
        own = isinstance(self.client, str)
        client = (Client(self.client, timeout=self.timeout, set_as_default=False) if own
                  else self.client)
        name = f"tensorbridge-task-{uuid.uuid4().hex}"
        futures = [client.submit(_call_fn_dask, fn, item, key=f"{name}-{i}", pure=False,
                                 retries=0) for i, item in enumerate(items)]
        done: queue.SimpleQueue = queue.SimpleQueue()
        for f in futures:  # (called on the client's event loop thread)
            f.add_done_callback(lambda f: done.put(True))
        out: dict[int, Any] = {}
        try:
            while len(out) < len(futures):
                try:
                    done.get(timeout=_WAIT_S)
                except queue.Empty:
                    pass
                for i, f in _ended(futures, out):
                    if f.status == "cancelled":
                        raise _TasksLostError({}, _lost(client, "the tasks"))
                    if f.status == "error":
                        raise _ItemFailedError(i, f.exception(), "".join(
                            traceback.format_tb(f.traceback())))
                    out[i] = f.result()
                    on_done(i)
        except BaseException:
            left = [f for f in futures if f.status == "pending"]
            if left and client.status == "running":  # Ctrl-C or an error: nothing stays queued
                client.cancel(left, force=True)
            raise
        finally:
            if own:
                client.close()
        return [out[i] for i in range(len(items))]

    @staticmethod
    def _stop(client: Any, stop_event: Any, futures: list[Any], tracker: _Tracker,
              results: dict[int, Any]) -> None:
        """Running tasks end at their next look at the event; queued ones are cancelled."""
        stop_event.set()
        queued = [f for t, f in enumerate(futures) if t not in results
                  and t not in tracker.started]
        if queued:
            client.cancel(queued)


def _ended(futures: list[Any], collected: dict[int, Any]) -> Iterator[tuple[int, Any]]:
    """The futures not yet collected that have ended (done, failed or cancelled); a lost one
    (its worker died) is re-run by the scheduler, so it counts as running."""
    for t, f in enumerate(futures):
        if t not in collected and f.status not in ("pending", "lost"):
            yield t, f


def _lost(client: Any, what: str) -> str:
    return (f"the connection to the Dask scheduler at {client.scheduler.address} was lost (or "
            f"{what} were cancelled by someone else)")


def _dask_task(blob: bytes, chain_ids: list[int], settings: dict[str, Any], name: str,
               task: int) -> Any:
    """A block of chains on a Dask worker: progress to the run's topic, stop on its event."""
    from distributed import Event, get_worker

    worker = get_worker()
    stop_event = Event(f"{name}-stop")
    last = [-math.inf]

    def send(info: dict) -> None:
        worker.log_event(name, {"task": task, "iteration": int(info["iteration"]),
                                "divergences": int(info["divergences"])})

    report = throttled(send, settings.get("listening", True))

    def should_stop() -> bool:
        now = time.monotonic()
        if now - last[0] < _STOP_POLL_S:
            return False
        last[0] = now
        return bool(stop_event.is_set())

    # the worker keeps the prepared model for its next task of the same model; the compiled
    # sampler's chains get the worker's threads, no more (a one-thread worker: one)
    return run_task(blob, chain_ids, settings, report, should_stop, cache=True,
                    max_threads=_worker_threads(worker))


def _worker_threads(worker: Any) -> int | None:
    """How many threads the Dask worker runs tasks on (None where this version hides it)."""
    for obj, attr in ((getattr(worker, "state", None), "nthreads"), (worker, "nthreads")):
        n = getattr(obj, attr, None)
        if isinstance(n, int) and n >= 1:
            return n
    return None


def _dumps_fn(fn: Callable[[Any], Any]) -> bytes:
    """``fn`` for the local pool: by reference when importable, else by value (cloudpickle)."""
    try:
        return pickle.dumps(fn, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        try:
            import cloudpickle
        except ImportError:
            raise TypeError(f"n_cores: {fn!r} cannot be sent to worker processes (define it at "
                            f"module level, or install cloudpickle)") from None
        return cloudpickle.dumps(fn, protocol=pickle.HIGHEST_PROTOCOL)


def _call_fn(blob: bytes, item: Any) -> tuple[bool, Any]:
    """A local pool's task: (True, fn(item)), or (False, (error, traceback)) when it raised
    (the error object when it pickles, else a RuntimeError with its text)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        return True, pickle.loads(blob)(item)
    except Exception as e:
        trace = traceback.format_exc()
        try:
            pickle.dumps(e)
        except Exception:
            e = RuntimeError(f"{type(e).__name__}: {e}")
        return False, (e, trace)


def _call_fn_dask(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


def _item_error(what: str, e: _ItemFailedError) -> TaskError:
    err = e.error
    msg = f"{what} {e.index} failed: {type(err).__name__}: {err}"
    if e.trace:
        msg += f"\n(where it ran):\n{e.trace.rstrip()}"
    out = TaskError(msg, e.index)
    out.__cause__ = err
    return out


def run_tasks(executor: Any, fn: Callable[[Any], Any], items: Sequence[Any], *,
              what: str = "item", on_done: Callable[[int], Any] | None = None) -> list[Any]:
    """``[fn(item) for item in items]`` on ``executor``, results in the items' order.

    ``fn`` should be a module-level function whose items are plain data (the runtime's tasks
    send models as :func:`parallel.dumps_model` bytes); a Dask cluster and the local pool send
    other callables by value (cloudpickle). ``on_done(i)`` is called here as item ``i``
    finishes (in any order). A task that raises is a :class:`TaskError` naming ``what`` and
    the item's index, chained to the task's exception; the other tasks are cancelled.
    """
    items = list(items)
    try:
        return executor.map_tasks(fn, items, on_done or (lambda i: None))
    except _ItemFailedError as e:
        raise _item_error(what, e) from e.error
    except _TasksLostError as e:
        raise ClusterLostError(f"{what}s: {e.why}", None, []) from None


def executor_for(cluster: Any, n_cores: int | None, who: str) -> Any:
    """The executor of a ``cluster=`` / ``n_cores=`` pair: in-process when both are None."""
    if cluster is not None and n_cores is not None:
        raise ValueError(f"{who}: n_cores, cluster: give one of them (n_cores is a local pool)")
    if n_cores is not None:
        if isinstance(n_cores, bool) or not isinstance(n_cores, int) or n_cores < 1:
            raise ValueError(f"n_cores: expected None or an integer >= 1, got {n_cores!r}")
        return InProcess() if n_cores == 1 else LocalProcesses(n_cores)
    if cluster is None:
        return InProcess()
    return as_executor(cluster)


def _check_per_task(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"chains_per_task: expected an integer >= 1, got {k!r}")
    return k


def _blocks(chains: int, per_task: int) -> list[list[int]]:
    """Contiguous blocks of at least ``per_task`` chains (one block when there are fewer)."""
    return split_chains(chains, max(1, chains // per_task))


def as_executor(cluster: Any) -> Any:
    """``mcmc``'s ``cluster=``: an executor of this module, a ``distributed.Client`` or a
    scheduler address string."""
    if isinstance(cluster, InProcess | LocalProcesses | DaskCluster):
        return cluster
    return DaskCluster(cluster)


def run_mcmc(model: Any, executor: Any, *, n_samples: int, warmup: int, chains: int,
             sampler: Any, initial_values: Any, seed: int, thin: int, backend: str,
             progress: bool | None, callback: Callable[[dict], Any] | None,
             callback_every: int, should_stop: Callable[[], bool] | None) -> Draws:
    """``mcmc``'s chains on ``executor``; ``backend``: "compiled" or "numpy", as the caller's
    process resolved it (a worker that cannot compile says so, never samples differently)."""
    for name, v, lo in (("n_samples", n_samples, 1), ("warmup", warmup, 0),
                        ("chains", chains, 1), ("thin", thin, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ValueError(f"{name}: expected an integer >= {lo}, got {v!r}")
    if isinstance(initial_values, list) and len(initial_values) != chains:
        raise ValueError(f"initial_values: got {len(initial_values)} sets for {chains} chains")
    groups = executor.split(chains)
    blob = dumps_model(model, initial_values)
    total = warmup + n_samples * thin
    bar = Progress(total, sys.stderr.isatty() if progress is None else progress, callback,
                   callback_every)
    settings = {"n_samples": n_samples, "warmup": warmup, "sampler": sampler, "seed": seed,
                "thin": thin, "backend": backend,
                "report_every": callback_every if callback else 10,
                # no bar, callback or sink: a task sends only its first report (it has started)
                "listening": bool(bar.enabled) or bar.callback is not None or has_sinks()}

    tracker = _Tracker(bar, groups, warmup)
    # should_stop, or the host's safe point raising (Ctrl-C in R...): the draws so far are kept
    try:
        results, stopped = executor.run(_Run(blob, groups, settings, tracker,
                                             lambda: stop_requested(should_stop)))
    except _TasksLostError as e:
        kept = sorted(e.results)
        draws = None
        if kept:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SamplingInterrupted)
                draws = merge_parts([e.results[t] for t in kept], total, True)
            draws.node_names = dict(zip(model.variables, model.variable_names()))
        done = [c for t in kept for c in groups[t]]
        lost = [c for c in range(chains) if c not in set(done)]
        raise ClusterLostError(f"mcmc: {e.why}; chains {lost} were lost"
                               + (f", chains {done} had finished and are kept in this error's "
                                  f".draws" if done else ", no chain had finished"),
                               draws, done) from None
    if not results:
        raise RuntimeError("mcmc: interrupted before any chain started; no draws")
    kept = sorted(results)
    draws = merge_parts([results[t] for t in kept], total, stopped)
    if len(kept) < len(groups):
        chains_kept = [c for t in kept for c in groups[t]]
        warnings.warn(f"mcmc: interrupted before every chain started; returning chains "
                      f"{chains_kept} of {chains}", SamplingInterrupted, stacklevel=3)
    draws.node_names = dict(zip(model.variables, model.variable_names()))
    return draws
