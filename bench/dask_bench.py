"""Scale-out on Dask distributed (issue 17's targets), side by side in one run.

    .venv/bin/python bench/run.py dask_bench --splice   # run it, update its RESULTS.md section
    BENCH_QUICK=1 .venv/bin/python bench/run.py dask_bench   # smoke run, not numbers to quote

Clusters: ``distributed.LocalCluster`` on 127.0.0.1, worker processes (nannies) of one thread
each, started once for the whole run: one cluster of 1 worker and one of 2 workers, both up
at the same time so that their rounds interleave. Every timed call below ran once untimed
first (the compiled model's C module is cached on disk, the workers have imported
tensorbridge), so first-call costs are not in the medians.

1. Per-task cost (the 1-worker cluster, so tasks run one after another). A *no-op chain task*
   is ``tb.mcmc(m, n_samples=1, warmup=0, chains=T, seed=s)`` on eight schools with tasks of
   one chain: the task still unpickles the model (sent as data), loads its sampler and draws
   one iteration. Executors: ``DaskCluster(client, chains_per_task=1)``, ``InProcess(1)`` (the
   same tasks one after another in this process: no transport, no scheduler) and
   ``LocalProcesses(T)`` (``n_cores``' pool: a forkserver process per task). Dask's own no-op
   task is ``client.submit(_noop, i, pure=False)`` for ``T`` tasks, then ``gather``. Each call
   runs with a small and a large ``T``; per task = the slope ``(wall(T2) - wall(T1)) / (T2 -
   T1)``, per call = the intercept (fixed costs: the Dask executor's topic subscription and
   stop event; since 93af9f6 the result loop wakes when a task ends instead of polling every
   50 ms, and since 7e08020 a worker reuses a model it has prepared). Rounds interleave the
   four, rotating their order; medians over rounds, each round its own seed.
2. Chains per second, 1 worker against 2: eight schools, ``chains_per_task=1`` (before
   25a39b6 a task of k compiled chains ran k threads and overcommitted a one-thread worker;
   the threads are now capped at the worker's), the compiled
   sampler (what ``backend="auto"`` picks with a C compiler) and the NumPy one (tasks
   single-threaded either way). Target (issue 17): 2 workers >= 1.8x the chains per second of
   1 when the machine is idle. The load average is recorded with every row.
3. SBC of eight schools (the model above; ``tb.sbc``'s defaults: 2 chains of 400 + 250 per
   replication, 99 kept draws): wall time of ``tb.sbc(m, 200)`` in this one process against
   ``tb.sbc(m, 200, cluster=client)`` on the 2-worker cluster (one task per replication). The
   ranks must agree (same seeds, same draws), else the row is an error.

Rows: ``value_us`` / ``peer_us`` are microseconds (printed as ms); ratio = ours / peer.
"""

from __future__ import annotations

import logging
import operator
import os
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # imported from a test, not through bench/run.py
    sys.path.insert(0, str(BENCH_DIR))

from _timing import quick_mode  # noqa: E402

SCALING_TARGET = 1.8
INTERLEAVED = "interleaved rounds"


def config(quick: bool | None = None) -> dict[str, Any]:
    """Sizes of a full run, or of a smoke run (``BENCH_QUICK=1``); ``BENCH_ROUNDS`` overrides
    the number of rounds of every part."""
    quick = quick_mode() if quick is None else quick
    if quick:
        cfg: dict[str, Any] = {
            "overhead": {"tasks": (1, 4), "rounds": 2},
            "scaling": [{"backend": "compiled", "chains": 4, "warmup": 100, "n_samples": 100,
                         "rounds": 2}],
            "sbc": {"reps": 4, "rounds": 1, "warmup": 100, "per_chain": 100},
        }
    else:
        cfg = {
            "overhead": {"tasks": (2, 16), "rounds": 7},
            "scaling": [{"backend": "compiled", "chains": 32, "warmup": 1000,
                         "n_samples": 1000, "rounds": 5},
                        {"backend": "numpy", "chains": 8, "warmup": 250, "n_samples": 250,
                         "rounds": 3}],
            "sbc": {"reps": int(os.environ.get("SBC_REPS", 200)), "rounds": 3, "warmup": 400,
                    "per_chain": 250},
        }
    if os.environ.get("BENCH_ROUNDS"):
        n = max(1, int(os.environ["BENCH_ROUNDS"]))
        cfg["overhead"]["rounds"] = cfg["sbc"]["rounds"] = n
        for s in cfg["scaling"]:
            s["rounds"] = n
    return cfg


# ------------------------------------------------------------------------------ helpers


def eight_schools() -> Any:
    import tensorbridge as tb

    y = tb.as_data([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = tb.as_data([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=8)
    tb.distribution(y, tb.normal(mu + tau * eta, sigma))
    return tb.model(mu, tau, eta)


def start_cluster(n_workers: int) -> tuple[Any, Any]:
    """A LocalCluster of ``n_workers`` one-thread worker processes and a client of it."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None,
                           silence_logs=logging.ERROR)
    client = Client(cluster, set_as_default=False)
    client.wait_for_workers(n_workers, timeout=120)
    return cluster, client


def _load() -> float:
    return os.getloadavg()[0]


def interleaved(fns: dict[str, Callable[[int], Any]], rounds: int) -> dict[str, list[Any]]:
    """Each callable once per round (round r passes seed r + 1), the order rotating from one
    round to the next so a busy spell of the machine does not fall on one of them alone."""
    out: dict[str, list[Any]] = {k: [] for k in fns}
    names = list(fns)
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            out[name].append(fns[name](r + 1))
    return out


def _med(xs: list[float]) -> float:
    return float(statistics.median(xs))


def _rng_us(xs: list[float]) -> list[float]:
    return [min(xs) * 1e6, max(xs) * 1e6]


def _timing_label(rounds: int, what: str = "") -> str:
    return f"{INTERLEAVED}, median of {rounds}" + (f" ({what})" if what else "")


def _wall(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# ------------------------------------------------------------------- 1. per-task cost


def overhead_rows(client1: Any, cfg: dict[str, Any]) -> list[dict[str, Any]]:
    import tensorbridge as tb
    from tensorbridge.runtime.ppl.executors import DaskCluster, InProcess, LocalProcesses

    m = eight_schools()
    t1, t2 = cfg["tasks"]
    backend: list[str] = []

    def chain_tasks(make: Callable[[int], Any]) -> Callable[[int], tuple[float, float]]:
        def run(seed: int) -> tuple[float, float]:
            walls = []
            for t in (t1, t2):
                def call(t: int = t) -> None:
                    d = tb.mcmc(m, n_samples=1, warmup=0, chains=t, seed=seed, progress=False,
                                cluster=make(t))
                    backend.append(d.backend)
                walls.append(_wall(call))
            return _slope(walls, t1, t2)
        return run

    def dask_noop(seed: int) -> tuple[float, float]:
        walls = [_wall(lambda t=t: client1.gather(
            [client1.submit(operator.pos, seed + i, pure=False) for i in range(t)]))
            for t in (t1, t2)]
        return _slope(walls, t1, t2)

    fns = {
        "dask": chain_tasks(lambda t: DaskCluster(client1, chains_per_task=1)),
        "inprocess": chain_tasks(lambda t: InProcess(chains_per_task=1)),
        "pool": chain_tasks(lambda t: LocalProcesses(t)),
        "dask_noop": dask_noop,
    }
    for f in fns.values():  # untimed: caches, imports, the C module
        f(0)
    backend.clear()
    load0 = _load()
    res = interleaved(fns, cfg["rounds"])
    load1 = _load()
    be = ",".join(sorted(set(backend)))
    per = {k: [s for s, _ in v] for k, v in res.items()}
    fixed = {k: [c for _, c in v] for k, v in res.items()}
    # Dask's cost on top of the task itself, round by round (the same seed in both)
    extra = [d - i for d, i in zip(per["dask"], per["inprocess"])]
    rounds = cfg["rounds"]
    how = _timing_label(rounds, f"per task = slope of wall time between {t1} and {t2} tasks "
                                f"of one chain")
    load_note = (f"load average (1 min) {load0:.2f} before, {load1:.2f} after these rounds "
                 f"on {os.cpu_count()} CPUs")
    fixed_note = ("per call (intercept, median): " + ", ".join(
        f"{k} {_med(v) * 1e3:.1f} ms" for k, v in fixed.items()))
    name = f"no-op chain task [{be}]"

    def row(label: str, ours: str, peer_label: str, peer: str | None,
            ours_xs: list[float] | None = None) -> dict[str, Any]:
        xs = ours_xs if ours_xs is not None else per[ours]
        r = {"name": label, "value_us": _med(xs) * 1e6, "value_range": _rng_us(xs),
             "peer": peer_label, "timing": how, "notes": [load_note, fixed_note],
             "details": {"per_task_s": per, "per_call_s": fixed, "tasks": [t1, t2],
                         "load": [load0, load1]}}
        if peer is not None:
            r["peer_us"] = _med(per[peer]) * 1e6
            r["peer_range"] = _rng_us(per[peer])
            r["ratio"] = r["value_us"] / r["peer_us"] if r["peer_us"] > 0 else None
        else:
            r["peer_us"] = r["ratio"] = None
        return r

    rows = [
        row(f"per task: {name} on Dask, 1 worker", "dask",
            "Dask no-op task (client.submit), same cluster", "dask_noop"),
        row(f"per task: {name} in-process (InProcess executor)", "inprocess",
            "Dask no-op task (client.submit), same cluster", "dask_noop"),
        row(f"per task: Dask's cost on top of the task (Dask - in-process) [{be}]", "dask",
            "Dask no-op task (client.submit), same cluster", "dask_noop", ours_xs=extra),
        row(f"per task: {name} in n_cores' pool (LocalProcesses, a process per task)", "pool",
            f"{name} on Dask, 1 worker", "dask"),
    ]
    for r in rows[1:]:  # the notes are the rounds', shown once
        r["notes"] = []
    return rows


def _slope(walls: list[float], t1: int, t2: int) -> tuple[float, float]:
    slope = (walls[1] - walls[0]) / (t2 - t1)
    return slope, walls[0] - slope * t1


# ------------------------------------------------------------------ 2. chains per second


def scaling_row(client1: Any, client2: Any, cfg: dict[str, Any]) -> dict[str, Any]:
    import tensorbridge as tb
    from tensorbridge.runtime.ppl.executors import DaskCluster

    m = eight_schools()
    chains = cfg["chains"]
    backends: list[str] = []

    def on(client: Any) -> Callable[[int], float]:
        def run(seed: int) -> float:
            t0 = time.perf_counter()
            d = tb.mcmc(m, n_samples=cfg["n_samples"], warmup=cfg["warmup"], chains=chains,
                        seed=seed, progress=False, backend=cfg["backend"],
                        cluster=DaskCluster(client, chains_per_task=1))
            wall = time.perf_counter() - t0
            backends.append(d.backend)
            return wall
        return run

    fns = {"2 workers": on(client2), "1 worker": on(client1)}
    first = {k: f(0) for k, f in fns.items()}  # untimed
    load0 = _load()
    res = interleaved(fns, cfg["rounds"])
    load1 = _load()
    two, one = res["2 workers"], res["1 worker"]
    speedups = [o / t for o, t in zip(one, two)]  # round by round
    speedup = _med(one) / _med(two)
    row = {
        "name": (f"eight schools {chains} chains x ({cfg['warmup']} + {cfg['n_samples']}) "
                 f"[{cfg['backend']}], 2 Dask workers"),
        "value_us": _med(two) * 1e6, "value_range": _rng_us(two),
        "peer": "1 Dask worker, same run", "peer_us": _med(one) * 1e6,
        "peer_range": _rng_us(one), "ratio": _med(two) / _med(one),
        "timing": _timing_label(cfg["rounds"], "a seed per round, the same on both sides"),
        "target": f"1 worker's time / 2 workers' >= {SCALING_TARGET}x when the machine is idle",
        "passed": speedup >= SCALING_TARGET,
        "notes": [
            f"speedup {speedup:.2f}x (round by round: "
            + ", ".join(f"{s:.2f}" for s in speedups) + "); chains per second: "
            f"{chains / _med(one):.1f} on 1 worker, {chains / _med(two):.1f} on 2",
            f"load average (1 min) {load0:.2f} before, {load1:.2f} after these rounds on "
            f"{os.cpu_count()} CPUs: 2 workers need 2 idle CPUs, and the scheduler, this "
            f"client and the other work on the machine share them",
            "first calls (untimed): " + ", ".join(f"{k} {v:.2f} s" for k, v in first.items()),
        ],
        "details": {"one_worker_s": one, "two_workers_s": two, "load": [load0, load1],
                    "backend": sorted(set(backends)), **cfg},
    }
    if set(backends) != {cfg["backend"]}:
        row["error"] = f"asked for backend {cfg['backend']}, ran {sorted(set(backends))}"
    return row


# ------------------------------------------------------------------------------ 3. SBC


def sbc_ranks(reps: int, seed: int, warmup: int, per_chain: int,
              client: Any | None) -> np.ndarray:
    """``tb.sbc`` of eight schools (every replication: a prior draw, a fit of 2 chains, the
    ranks of the true values among 99 kept draws): in this process when ``client`` is None,
    else one task per replication on the cluster. Returns the ranks, (reps, scalars)."""
    import tensorbridge as tb

    if not hasattr(tb, "sbc"):
        raise RuntimeError("tensorbridge has no sbc() here (runtime/ppl/sbc.py)")
    res = tb.sbc(eight_schools(), reps, n_samples=per_chain, warmup=warmup, chains=2,
                 seed=seed, progress=False, cluster=client)
    return np.stack([res.ranks[n] for n in res.names], axis=1)


def sbc_row(client2: Any, cfg: dict[str, Any]) -> dict[str, Any]:
    reps = cfg["reps"]
    ranks: dict[str, list[np.ndarray]] = {"cluster": [], "here": []}

    def on(client: Any, key: str) -> Callable[[int], float]:
        def run(seed: int) -> float:
            t0 = time.perf_counter()
            r = sbc_ranks(reps, seed, cfg["warmup"], cfg["per_chain"], client)
            wall = time.perf_counter() - t0
            ranks[key].append(r)
            return wall
        return run

    fns = {"cluster": on(client2, "cluster"), "here": on(None, "here")}
    for k in fns:  # untimed: the workers' first fits (imports, the C module)
        sbc_ranks(2, 0, cfg["warmup"], cfg["per_chain"], client2 if k == "cluster" else None)
    load0 = _load()
    res = interleaved(fns, cfg["rounds"])
    load1 = _load()
    c, h = res["cluster"], res["here"]
    row = {
        "name": f"SBC eight schools (tb.sbc), {reps} replications, 2-worker LocalCluster",
        "value_us": _med(c) * 1e6, "value_range": _rng_us(c),
        "peer": "tb.sbc in one process", "peer_us": _med(h) * 1e6, "peer_range": _rng_us(h),
        "ratio": _med(c) / _med(h),
        "timing": _timing_label(cfg["rounds"], "a seed per round, the same on both sides"),
        "notes": [
            f"{reps} replications of 2 chains x ({cfg['warmup']} + {cfg['per_chain']}), one "
            f"Dask task each; speedup {_med(h) / _med(c):.2f}x; load average (1 min) "
            f"{load0:.2f} before, {load1:.2f} after on {os.cpu_count()} CPUs",
            "the compiled sampler runs a replication's 2 chains on 2 threads, so the one "
            "process already uses up to 2 CPUs",
        ],
        "details": {"cluster_s": c, "one_process_s": h, "load": [load0, load1], **cfg},
    }
    # the same seeds give the same draws wherever a replication runs
    if any(not np.array_equal(a, b) for a, b in zip(ranks["cluster"], ranks["here"])):
        row["error"] = "the cluster's SBC ranks differ from the one process's (same seeds)"
    return row


# ------------------------------------------------------------------------------ entry


def run(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    c1 = c2 = None
    try:
        load0 = _load()
        start = [time.perf_counter()]
        c1 = start_cluster(1)
        start.append(time.perf_counter())
        c2 = start_cluster(2)
        start.append(time.perf_counter())
        rows = [{
            "name": "LocalCluster start: scheduler, 2 worker processes (nannies), client",
            "value_us": (start[2] - start[1]) * 1e6, "peer": "the same with 1 worker",
            "peer_us": (start[1] - start[0]) * 1e6, "ratio": (start[2] - start[1])
            / (start[1] - start[0]), "timing": "one start each, not repeated (the 1-worker "
            "cluster first)",
            "notes": [f"load average (1 min) {load0:.2f} before, {_load():.2f} after on "
                      f"{os.cpu_count()} CPUs"]}]
        # a part that fails is an error row; the other parts still run
        rows += _part("per-task cost", lambda: overhead_rows(c1[1], cfg["overhead"]))
        for s in cfg["scaling"]:
            rows += _part(f"scaling [{s['backend']}]", lambda s=s: [scaling_row(c1[1], c2[1], s)])
        rows += _part("SBC", lambda: [sbc_row(c2[1], cfg["sbc"])])
    finally:
        for c in (c2, c1):
            if c is not None:
                c[1].close()
                c[0].close()
    return rows


def _part(what: str, fn: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    try:
        return fn()
    except Exception as e:  # reported as the part's error row
        tb_last = traceback.format_exc().strip().splitlines()[-6:]
        return [{"name": f"{what} (failed)", "value_us": None, "peer": "", "peer_us": None,
                 "ratio": None, "error": f"{type(e).__name__}: {e} | " + " | ".join(tb_last)}]


def main() -> list[dict[str, Any]]:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return [{"name": "dask_bench", "value_us": None, "value_note": "not installed",
                 "peer": "", "peer_us": None, "ratio": None,
                 "notes": ["Dask distributed is not installed: pip install "
                           "'tensorbridge[dask]'"]}]
    return run(config())


if __name__ == "__main__":
    from run import format_table

    print(format_table(main()))
