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

Progress: each task reports its iteration and divergences every ``report_every`` iterations
through the scheduler's event log (``Worker.log_event`` on a topic of the run, which the client
subscribes to); the executor feeds the run's one ``Progress`` (the bar, the callback, the doors'
sinks) with the iterations done per chain, averaged over all chains, as for the local pool's
processes. A re-run task reports from its start again: the bar waits for it, never goes back.
"""

from __future__ import annotations

import math
import queue
import sys
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import SamplingInterrupted
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
)

__all__ = ["ClusterLostError", "DaskCluster", "InProcess", "LocalProcesses", "as_executor",
           "run_mcmc"]

_POLL_S = 0.05  # the parent's loop: progress, results, should_stop
_STOP_POLL_S = 0.25  # a Dask task's look at the run's stop event (a round trip to the scheduler)
_EMBED_BYTES = 1 << 20  # larger models are scattered to the workers once, not sent per task


class ClusterLostError(RuntimeError):
    """The cluster lost the run's tasks (the scheduler went away); ``draws`` holds the chains
    whose tasks had returned (a ``Draws``, or None when none had), ``chains`` their indices
    in the run."""

    def __init__(self, message: str, draws: Draws | None, chains: list[int]) -> None:
        super().__init__(message)
        self.draws, self.chains = draws, chains


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
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        # the handler runs on the client's event loop thread: hand the reports to this one
        client.subscribe_topic(name, lambda event: inbox.put(event[1]))
        stop_event = Event(f"{name}-stop", client=client)
        blob: Any = run.blob
        if len(blob) > _EMBED_BYTES:  # on every worker: a killed one does not lose it
            blob = client.scatter(blob, broadcast=True, hash=False)
        futures = [client.submit(_dask_task, blob, g, run.settings, name, t, key=f"{name}-{t}",
                                 pure=False, retries=0)
                   for t, g in enumerate(run.groups)]
        results: dict[int, Any] = {}
        relayed: set[tuple[type, str]] = set()
        stopped = False
        try:
            while len(results) < len(futures):
                try:
                    item = inbox.get(timeout=_POLL_S)
                except queue.Empty:
                    pass
                else:
                    run.tracker.report(item["task"], item)
                    while True:  # drain: the bar's reports come in bursts
                        try:
                            item = inbox.get_nowait()
                        except queue.Empty:
                            break
                        run.tracker.report(item["task"], item)
                for t, f in enumerate(futures):
                    if t in results or f.status in ("pending", "lost"):  # lost: re-run
                        continue
                    if f.status == "cancelled":
                        if not stopped:  # not ours: the client lost the scheduler
                            returned = {k: v for k, v in results.items() if v is not None}
                            raise _TasksLostError(returned, f"the connection to the Dask "
                                                  f"scheduler at {client.scheduler.address} was "
                                                  f"lost (or the run's tasks were cancelled by "
                                                  f"someone else)")
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

    @staticmethod
    def _stop(client: Any, stop_event: Any, futures: list[Any], tracker: _Tracker,
              results: dict[int, Any]) -> None:
        """Running tasks end at their next look at the event; queued ones are cancelled."""
        stop_event.set()
        queued = [f for t, f in enumerate(futures) if t not in results
                  and t not in tracker.started]
        if queued:
            client.cancel(queued)


def _dask_task(blob: bytes, chain_ids: list[int], settings: dict[str, Any], name: str,
               task: int) -> Any:
    """A block of chains on a Dask worker: progress to the run's topic, stop on its event."""
    from distributed import Event, get_worker

    worker = get_worker()
    stop_event = Event(f"{name}-stop")
    last = [-math.inf]

    def report(info: dict) -> None:
        worker.log_event(name, {"task": task, "iteration": int(info["iteration"]),
                                "divergences": int(info["divergences"])})

    def should_stop() -> bool:
        now = time.monotonic()
        if now - last[0] < _STOP_POLL_S:
            return False
        last[0] = now
        return bool(stop_event.is_set())

    return run_task(blob, chain_ids, settings, report, should_stop)


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
                "report_every": callback_every if callback else 10}

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
