"""mcmc(cluster=...) on a real Dask cluster: a scheduler and workers started as separate
processes (``dask scheduler`` and ``dask worker``, run by this Python) on 127.0.0.1, ports
chosen by the OS. The same seed gives bit-identical draws in-process, on one worker and on two;
a worker killed mid-run (SIGKILL) has its task re-run on the other and the draws do not change;
should_stop and Ctrl-C end the running tasks and cancel the queued ones; a killed scheduler is a
clear error that keeps the chains already returned. tb.sbc, tb.map and calculate/simulate over
blocks of draws run as tasks of the same executors, with the same results everywhere."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="Dask distributed is not installed (pip install 'tensorbridge[dask]')")

import tensorbridge as tb  # noqa: E402
from tensorbridge.runtime.compiled.build import compiler_available  # noqa: E402
from tensorbridge.runtime.ppl import parallel  # noqa: E402
from tensorbridge.runtime.ppl.executors import DaskCluster, InProcess, TaskError  # noqa: E402

_START_S = 60  # a loaded 2-core machine: a worker imports distributed and NumPy in seconds


class _Cluster:
    """A scheduler and workers as child processes; ``close`` kills every one of them."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        self.file = tmp / "scheduler.json"
        self._start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(self.file)], "scheduler")
        # the client waits (up to its timeout) for the scheduler to write its address
        self.client = distributed.Client(scheduler_file=str(self.file), timeout=_START_S,
                                         set_as_default=False)
        self.address = self.client.scheduler.address

    def _start(self, args: list[str], log: str) -> subprocess.Popen:
        out = open(self.tmp / f"{log}.log", "wb")  # the child keeps its own descriptor
        p = subprocess.Popen([sys.executable, "-m", f"distributed.cli.dask_{args[0]}", *args[1:]],
                             stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env={**os.environ,
                                                            "OMP_NUM_THREADS": "1"})
        out.close()
        self.procs.append(p)
        return p

    def live_workers(self) -> list[subprocess.Popen]:
        return [p for p in self.workers if p.poll() is None]

    def ensure_workers(self, n: int) -> None:
        """Start workers until ``n`` are alive, and wait until the scheduler has them."""
        while len(self.live_workers()) < n:
            name = f"w{len(self.workers)}"
            # no nanny: the worker is this process, so a SIGKILL loses it for good
            self.workers.append(self._start(
                ["worker", self.address, "--host", "127.0.0.1", "--nthreads", "1",
                 "--no-nanny", "--no-dashboard", "--name", name], name))
        self.client.wait_for_workers(n, timeout=_START_S)
        assert len(self.client.scheduler_info(n_workers=-1)["workers"]) == n

    def worker_pids(self) -> dict[str, int]:
        return self.client.run(os.getpid)

    def close(self) -> None:
        try:
            self.client.close(timeout=10)
        finally:
            for p in self.procs:
                if p.poll() is None:
                    p.kill()
                p.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    c = _Cluster(tmp_path_factory.mktemp("dask"))
    try:
        yield c
    finally:
        c.close()


def _eight_schools():
    y = tb.as_data([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = tb.as_data([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=8)
    theta = mu + tau * eta
    tb.distribution(y, tb.normal(theta, sigma))
    m = tb.model(mu, tau, eta)
    m.theta, m.y = theta, y  # for calculate and simulate over its draws
    return m


def _same(a, b) -> None:
    assert a.names == b.names and a.chains == b.chains and a.n_draws == b.n_draws
    for k in a.names:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k], err_msg=k)
    np.testing.assert_array_equal(a.warmup["step_size"], b.warmup["step_size"])


def _task_workers(ts) -> set[str]:
    return {t["worker"] for t in ts.data if str(t["key"]).startswith("tensorbridge-mcmc-")}


def _tasks_of_run(ts) -> set[str]:
    return {t["worker"] for t in ts.data if str(t["key"]).startswith("tensorbridge-task-")}


def _same_sbc(a, b) -> None:
    assert a.names == b.names and a.nsim == b.nsim and a.seed == b.seed
    for k in a.names:
        np.testing.assert_array_equal(a.ranks[k], b.ranks[k], err_msg=k)
        np.testing.assert_array_equal(a.truth[k], b.truth[k], err_msg=k)
        assert a.p_values[k] == b.p_values[k]
    np.testing.assert_array_equal(a.divergences, b.divergences)
    np.testing.assert_array_equal(a.ess_bulk_min, b.ess_bulk_min)


def test_sbc_map_calculate_simulate_same_in_process_on_one_worker_and_on_two(cluster) -> None:
    """First in this module (it needs a lone worker, then two; it leaves one, as the next test
    wants): every replication, dataset and block of draws is a task; the results are those of
    this process whatever the number of workers."""
    mu = tb.normal(0.0, 1.0)
    sd = tb.exponential(1.0)
    y4 = tb.as_data(np.zeros(4))
    tb.distribution(y4, tb.normal(mu, sd))
    small = tb.model(mu=mu, sd=sd)
    kw = {"n_samples": 10, "warmup": 20, "thin_to": 9, "bins": 5, "seed": 5, "backend": "numpy",
          "progress": False, "parameters": {"mu": mu, "sd": sd, "both": tb.stack([mu, sd])}}
    here = tb.sbc(small, 4, **kw)

    m = _eight_schools()
    theta, y = m.theta, m.y
    d = tb.mcmc(m, n_samples=300, warmup=50, chains=4, seed=2, progress=False,
                backend="numpy")  # 1200 draws: blocks of 1000 and 200
    calc_here = tb.calculate({"t": theta, "s": tb.sum(theta)}, values=d)
    sim_here = tb.simulate([theta, y], nsim=1100, seed=4, values=d, cluster=InProcess())
    sim_plain = tb.simulate([theta, y], nsim=1100, seed=4, values=d)
    np.testing.assert_array_equal(sim_here[0].numpy(), sim_plain[0].numpy())  # draws picked

    def check(where, n_workers: int) -> None:
        with distributed.get_task_stream(cluster.client) as ts:
            _same_sbc(here, tb.sbc(small, 4, cluster=where, **kw))
            calc = tb.calculate({"t": theta, "s": tb.sum(theta)}, values=d, cluster=where)
            sim = tb.simulate([theta, y], nsim=1100, seed=4, values=d, cluster=where)
        assert len(_tasks_of_run(ts)) == n_workers
        for k in calc_here:  # bit-equal to the one-process call
            np.testing.assert_array_equal(calc[k], calc_here[k], err_msg=k)
        for a, b in zip(sim, sim_here):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        # a user's function travels by value (a lambda), results in the input order
        assert tb.map(lambda k: k * 10, [3, 1, 2], cluster=where) == [30, 10, 20]
        with pytest.raises(TaskError, match=r"map: dataset 1 failed: ZeroDivisionError"):
            tb.map(lambda k: 1 / k, [1, 0, 2], cluster=where)

    cluster.ensure_workers(1)
    check(cluster.address, 1)  # by address: connected for each call, closed after it
    cluster.ensure_workers(2)
    check(cluster.client, 2)

    # leave one worker for the next test
    victim = cluster.live_workers()[-1]
    victim.kill()
    victim.wait(timeout=30)
    deadline = time.monotonic() + 30
    while len(cluster.client.scheduler_info(n_workers=-1)["workers"]) != 1:
        assert time.monotonic() < deadline, "the scheduler still lists the killed worker"
        time.sleep(0.1)


def test_same_draws_in_process_on_one_worker_and_on_two(cluster) -> None:
    m = _eight_schools()
    backends = ["numpy"] + (["compiled"] if compiler_available() is None else [])
    kw = {"n_samples": 40, "warmup": 40, "chains": 8, "seed": 11, "progress": False}
    here = {b: tb.mcmc(m, backend=b, **kw) for b in backends}  # one process, one batch
    for b in backends:
        assert here[b].backend == b
        _same(here[b], tb.mcmc(m, cluster=InProcess(), backend=b, **kw))  # the same blocks

    cluster.ensure_workers(1)
    for b in backends:
        # by address: the executor connects for the run and closes its client after it
        with distributed.get_task_stream(cluster.client) as ts:
            one = tb.mcmc(m, cluster=cluster.address, backend=b, **kw)
        assert len(_task_workers(ts)) == 1
        assert one.backend == b and not one.interrupted
        _same(here[b], one)

    cluster.ensure_workers(2)
    for b in backends:
        seen: list[int] = []
        with distributed.get_task_stream(cluster.client) as ts:
            two = tb.mcmc(m, cluster=cluster.client, backend=b, callback_every=20,
                          callback=lambda i, seen=seen: seen.append(i["iteration"]), **kw)
        assert len(_task_workers(ts)) == 2  # four tasks of two chains on two idle workers
        _same(here[b], two)
        # progress from the workers reached the callback, in order, up to the last iteration
        assert seen == sorted(seen) and seen[-1] == 80


def test_chains_per_task_does_not_need_the_workers(cluster) -> None:
    # blocks of at least 3 chains, as even as possible: [0, 1, 2, 3], [4, 5, 6]
    m = _eight_schools()
    kw = {"n_samples": 40, "warmup": 40, "chains": 7, "seed": 5, "progress": False,
          "backend": "numpy"}
    cluster.ensure_workers(2)
    assert InProcess(3).split(7) == [[0, 1, 2, 3], [4, 5, 6]]
    _same(tb.mcmc(m, cluster=InProcess(3), **kw),
          tb.mcmc(m, cluster=DaskCluster(cluster.client, chains_per_task=3), **kw))


def _run_events(client, before: set[str]) -> list:
    """The progress events of the one mcmc run since ``before`` (the topics then)."""
    time.sleep(0.5)  # the workers' batched streams: the last reports reach the scheduler
    topics = [t for t in client.get_events() if str(t).startswith("tensorbridge-mcmc-")
              and t not in before]
    assert len(topics) == 1
    return [e for _, e in client.get_events(topics[0])]


def test_progress_events_only_when_listened_to_and_at_most_every_report_s(cluster) -> None:
    m = _eight_schools()
    cluster.ensure_workers(2)
    kw = {"n_samples": 200, "warmup": 100, "chains": 4, "seed": 3, "backend": "numpy",
          "cluster": DaskCluster(cluster.client, chains_per_task=2)}
    client = cluster.client
    # nothing listens: each task sends only its first report (it has started), not one per
    # 10 iterations (30 each here)
    before = set(client.get_events())
    tb.mcmc(m, progress=False, **kw)
    events = _run_events(client, before)
    assert sorted(e["task"] for e in events) == [0, 1]
    # a callback every iteration: the tasks report at most every REPORT_S seconds (not 300
    # times each), and the callback still sees every iteration up to the last
    seen: list[int] = []
    before = set(client.get_events())
    start = time.perf_counter()
    tb.mcmc(m, progress=False, callback=lambda i: seen.append(i["iteration"]), callback_every=1,
            **kw)
    wall = time.perf_counter() - start
    events = _run_events(client, before)
    for t in (0, 1):
        n = sum(e["task"] == t for e in events)
        assert 1 <= n <= 2 + wall / parallel.REPORT_S, (t, n, wall)
    assert seen == list(range(1, 301))


def test_run_loop_sleeps_until_a_task_reports_or_ends(cluster, monkeypatch) -> None:
    # the client's loop wakes when a task reports or ends, not every few milliseconds: with
    # its timeout (for should_stop) set to 120 s, a run of a few seconds (up to 30 s on a
    # loaded 2-CPU machine) looks at should_stop once per wake-up (4 first reports, 4 ends, at
    # most) and still returns as its tasks end
    from tensorbridge.runtime.ppl import executors

    m = _eight_schools()
    cluster.ensure_workers(2)
    monkeypatch.setattr(executors, "_WAIT_S", 120.0, raising=False)
    looks = [0]

    def should_stop() -> bool:
        looks[0] += 1
        return False

    start = time.perf_counter()
    d = tb.mcmc(m, n_samples=300, warmup=200, chains=8, seed=2, progress=False,
                backend="numpy", should_stop=should_stop,
                cluster=DaskCluster(cluster.client, chains_per_task=2))
    wall = time.perf_counter() - start
    assert d.chains == 8 and d.n_draws == 300 and not d.interrupted
    assert wall < 100, wall  # woken by the ends of the tasks, not by the timeout
    assert looks[0] <= 9, (looks[0], wall)


def test_a_worker_prepares_a_model_once_for_its_tasks(cluster) -> None:
    # 4 tasks of one model on 2 one-thread workers, twice: each worker rebuilds (and traces,
    # compiles) the model at most once (a digest of its bytes is the key), and the later tasks
    # draw exactly what a freshly prepared model draws (in-process, the same blocks)
    m = _eight_schools()
    cluster.ensure_workers(2)
    client = cluster.client
    backends = ["numpy"] + (["compiled"] if compiler_available() is None else [])
    kw = {"n_samples": 30, "warmup": 30, "chains": 8, "seed": 21, "progress": False}
    for b in backends:
        here = tb.mcmc(m, cluster=InProcess(), backend=b, **kw)
        before = client.run(parallel.prepared_cache_info)
        for _ in range(2):
            _same(here, tb.mcmc(m, cluster=DaskCluster(client), backend=b, **kw))
        after = client.run(parallel.prepared_cache_info)
        misses = sum(after[w]["misses"] - before[w]["misses"] for w in after)
        hits = sum(after[w]["hits"] - before[w]["hits"] for w in after)
        assert misses <= 2 and hits + misses == 8, (b, hits, misses)
        assert all(1 <= after[w]["size"] <= 8 for w in after if after[w]["misses"])


def _chain_threads() -> int:
    return sum(t.name.startswith("tb-chain") for t in threading.enumerate())


@pytest.mark.skipif(compiler_available() is not None, reason="no C compiler")
def test_compiled_task_uses_no_more_threads_than_its_worker(cluster) -> None:
    # a task of 4 compiled chains on a one-thread worker runs them in turn on that thread, not
    # on 4 more threads (oversubscription); the draws are those of 4 chain threads in-process
    m = _eight_schools()
    cluster.ensure_workers(2)
    client = cluster.client
    counts: list[int] = []
    done = threading.Event()

    def probe() -> None:  # the workers' chain threads, while the tasks run
        while not done.is_set():
            counts.extend(client.run(_chain_threads).values())
            time.sleep(0.05)

    kw = {"n_samples": 2000, "warmup": 500, "chains": 8, "seed": 4, "progress": False,
          "backend": "compiled"}
    prober = threading.Thread(target=probe)
    prober.start()
    try:
        d = tb.mcmc(m, cluster=DaskCluster(client, chains_per_task=4), **kw)
    finally:
        done.set()
        prober.join()
    assert counts and max(counts) == 0, counts
    _same(tb.mcmc(m, cluster=InProcess(4), **kw), d)


def test_should_stop_cancels_queued_tasks_and_keeps_the_draws(cluster) -> None:
    m = _eight_schools()
    cluster.ensure_workers(2)
    seen = {"it": 0}

    def cb(info: dict) -> None:
        seen["it"] = info["iteration"]

    # 4 tasks on 2 one-thread workers: two run, two wait; a run that would take hours. No
    # warmup: a task that has reported (5 iterations) has draws, however late it started
    with pytest.warns(RuntimeWarning, match="interrupted"):
        d = tb.mcmc(m, n_samples=1_000_000, warmup=0, chains=8, seed=0, progress=False,
                    backend="numpy", cluster=cluster.client, callback=cb, callback_every=5,
                    should_stop=lambda: seen["it"] >= 20)
    # the tasks that had started (on one worker or both) keep their draws; the queued ones were
    # cancelled before they ran
    assert d.interrupted and d.chains in (2, 4) and 0 < d.n_draws < 1_000_000
    assert all(v.shape[:2] == (d.chains, d.n_draws) for v in d.values.values())
    # nothing of the run is left on the cluster
    assert not any(k.startswith("tensorbridge-mcmc-")
                   for keys in cluster.client.processing().values() for k in map(str, keys))


@pytest.fixture
def ctrl_c():
    """SIGINT raises KeyboardInterrupt here, as at an interactive prompt: Python leaves SIGINT
    ignored when it started ignored (a background job of a non-interactive shell, as CI may run
    the suite), and then the test's Ctrl-C would never arrive."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_cancels_the_cluster_futures_and_keeps_the_draws(cluster, ctrl_c) -> None:
    m = _eight_schools()
    cluster.ensure_workers(2)
    sent: list[int] = []

    def cb(info: dict) -> None:
        if not sent and info["iteration"] >= 20:
            sent.append(info["iteration"])
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, delivered to this process

    with pytest.warns(RuntimeWarning, match="interrupted"):  # no warmup: as above
        d = tb.mcmc(m, n_samples=1_000_000, warmup=0, chains=8, seed=0, progress=False,
                    backend="numpy", cluster=cluster.client, callback=cb, callback_every=5)
    assert sent and d.interrupted and d.chains in (2, 4) and 0 < d.n_draws < 1_000_000
    assert not any(k.startswith("tensorbridge-mcmc-")
                   for keys in cluster.client.processing().values() for k in map(str, keys))


def test_ctrl_c_cancels_the_tasks_of_map(cluster, ctrl_c) -> None:
    cluster.ensure_workers(2)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))  # a real Ctrl-C
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            tb.map(lambda s: time.sleep(s), [3.0] * 8, cluster=cluster.client)
    finally:
        timer.cancel()
    # the queued tasks are gone at once; the two running ones are dropped by the scheduler
    # (a worker cannot stop a Python function: it finishes its sleep, then idles)
    deadline = time.monotonic() + 10
    while any(k.startswith("tensorbridge-task-")
              for keys in cluster.client.processing().values() for k in map(str, keys)):
        assert time.monotonic() < deadline, "tasks of the interrupted map are still queued"
        time.sleep(0.1)
    while any(cluster.client.run(lambda dask_worker: len(dask_worker.state.executing)).values()):
        assert time.monotonic() < deadline, "the workers still run the interrupted map"
        time.sleep(0.1)


def test_bad_cluster_is_named() -> None:
    m = _eight_schools()
    with pytest.raises(TypeError, match=r"cluster: expected a distributed\.Client"):
        tb.mcmc(m, n_samples=10, warmup=10, cluster=42, backend="numpy")
    with pytest.raises(ValueError, match="n_cores, cluster"):
        tb.mcmc(m, n_samples=10, warmup=10, cluster="tcp://127.0.0.1:1", n_cores=2)
    with pytest.raises(ValueError, match="chains_per_task"):
        InProcess(0)


def test_killed_worker_task_reruns_with_the_same_draws(cluster) -> None:
    m = _eight_schools()
    kw = {"n_samples": 120, "warmup": 120, "chains": 4, "seed": 7, "progress": False,
          "backend": "numpy"}
    undisturbed = tb.mcmc(m, **kw)
    cluster.ensure_workers(2)
    pids = cluster.worker_pids()
    killed: list[int] = []
    seen: list[int] = []

    def cb(info: dict) -> None:
        seen.append(info["iteration"])
        if killed or info["iteration"] < 20:
            return
        # both tasks are running (each reported 20 iterations on average): kill one worker
        busy = [a for a, keys in cluster.client.processing().items()
                if any(str(k).startswith("tensorbridge-mcmc-") for k in keys)]
        assert busy, "no worker holds a task of the run"
        os.kill(pids[busy[0]], signal.SIGKILL)
        killed.append(pids[busy[0]])

    d = tb.mcmc(m, cluster=cluster.client, callback=cb, callback_every=10, **kw)
    assert killed and seen[-1] == 240
    victim = next(p for p in cluster.workers if p.pid == killed[0])
    assert victim.wait(timeout=30) == -signal.SIGKILL
    assert not d.interrupted
    _same(undisturbed, d)


def test_lost_scheduler_is_a_clear_error_keeping_the_finished_chains(cluster) -> None:
    # last in this module: it kills the module's scheduler
    from tensorbridge.runtime.ppl.executors import ClusterLostError

    m = _eight_schools()
    kw = {"n_samples": 60, "warmup": 60, "chains": 8, "seed": 3, "progress": False,
          "backend": "numpy"}
    undisturbed = tb.mcmc(m, **kw)
    cluster.ensure_workers(2)
    scheduler = cluster.procs[0]
    killed: list[int] = []

    def cb(info: dict) -> None:
        # four tasks on two one-thread workers, at most two running: past 3/4 of the
        # iterations on average, at least two tasks have finished
        if not killed and info["iteration"] >= 90:
            scheduler.kill()
            killed.append(scheduler.wait(timeout=30))

    with pytest.raises(ClusterLostError, match=r"scheduler .* was lost.*chains \[.*\] were "
                                               r"lost, chains \[.*\] had finished") as err:
        tb.mcmc(m, cluster=cluster.client, callback=cb, callback_every=10, **kw)
    assert killed == [-signal.SIGKILL]
    kept, chains = err.value.draws, err.value.chains
    assert len(chains) >= 2 and kept.chains == len(chains) and kept.n_draws == 60
    for k in kept.names:  # the finished chains are the undisturbed run's
        np.testing.assert_array_equal(kept[k], undisturbed[k][chains], err_msg=k)
