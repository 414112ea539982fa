"""Side-by-side timing for the bench modules (not a bench module itself: its name starts with _).

``compare({"ours": f, "peer": g, ...})`` times every callable in the same rounds, interleaved, so
drift on a busy 2-core machine hits all of them alike:

1. each callable runs once (a first call may compile or trace; that time is kept apart as
   ``first_call_s``), then repeatedly for ``warmup_s``;
2. the number of calls per timed batch is chosen so one batch takes about ``batch_s``;
3. ``rounds`` rounds follow; in each, every callable first runs a quarter batch untimed (at
   least one call: the caches it left were just evicted by the other callables), then one batch
   timed with ``time.perf_counter``. The garbage collector runs before each timed batch and stays
   enabled inside it (collection of the objects a call creates is part of what a user pays).

The reported time per call is the median over rounds; the minimum and maximum are kept as well.
``BENCH_ROUNDS=n`` sets the number of rounds everywhere (a module's own choice otherwise).
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["INTERLEAVED", "Timing", "compare", "quick_mode", "row_timing"]

INTERLEAVED = "interleaved rounds"  # how rows timed by compare() were timed (run.py's column)


def quick_mode() -> bool:
    """``BENCH_QUICK=1``: fewer, shorter rounds (a smoke run, not numbers to quote)."""
    return os.environ.get("BENCH_QUICK", "") not in ("", "0")


class Timing:
    __slots__ = ("calls_per_batch", "first_call_s", "max_s", "median_s", "min_s", "rounds")

    def __init__(
        self, median_s: float, min_s: float, calls_per_batch: int, rounds: int, first_call_s: float,
        max_s: float | None = None,
    ) -> None:
        self.median_s = median_s
        self.min_s = min_s
        self.max_s = max_s if max_s is not None else median_s
        self.calls_per_batch = calls_per_batch
        self.rounds = rounds
        self.first_call_s = first_call_s

    @property
    def median_us(self) -> float:
        return self.median_s * 1e6

    def as_dict(self) -> dict[str, Any]:
        return {
            "median_us": self.median_s * 1e6,
            "min_us": self.min_s * 1e6,
            "max_us": self.max_s * 1e6,
            "calls_per_batch": self.calls_per_batch,
            "rounds": self.rounds,
            "first_call_s": self.first_call_s,
        }


def _batch(fn: Callable[[], Any], n: int) -> float:
    for _ in range((n + 3) // 4):  # re-warm after the other callables ran
        fn()
    gc.collect()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return time.perf_counter() - t0


def compare(
    fns: dict[str, Callable[[], Any]],
    *,
    rounds: int | None = None,
    batch_s: float | None = None,
    warmup_s: float | None = None,
) -> dict[str, Timing]:
    """Time each zero-argument callable side by side; returns name -> :class:`Timing`."""
    quick = quick_mode()
    if os.environ.get("BENCH_ROUNDS"):
        rounds = int(os.environ["BENCH_ROUNDS"])
    rounds = rounds if rounds is not None else (3 if quick else 15)
    batch_s = batch_s if batch_s is not None else (0.02 if quick else 0.06)
    warmup_s = warmup_s if warmup_s is not None else (0.05 if quick else 0.3)

    first: dict[str, float] = {}
    per_batch: dict[str, int] = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        first[name] = time.perf_counter() - t0
        # warm up, estimating the steady per-call time from the warm-up calls themselves
        n, spent = 0, 0.0
        t0 = time.perf_counter()
        while n < 3 or spent < warmup_s:
            fn()
            n += 1
            spent = time.perf_counter() - t0
        per_call = spent / n
        per_batch[name] = max(1, round(batch_s / per_call))

    samples: dict[str, list[float]] = {name: [] for name in fns}
    for r in range(rounds):
        # rotate the order each round so no callable always runs right after the same one
        names = list(fns)
        k = r % len(names)
        for name in names[k:] + names[:k]:
            n = per_batch[name]
            samples[name].append(_batch(fns[name], n) / n)

    return {
        name: Timing(
            statistics.median(samples[name]),
            min(samples[name]),
            per_batch[name],
            rounds,
            first[name],
            max(samples[name]),
        )
        for name in fns
    }


def row_timing(ours: Timing | None, peer: Timing | None, per: int = 1) -> dict[str, Any]:
    """The keys bench/run.py reads about how a row of two compare() timings was taken:
    ``timing`` (the method, printed in the table) and each side's [min, max] over rounds."""
    out: dict[str, Any] = {}
    rounds = [t.rounds for t in (ours, peer) if t is not None]
    if rounds:
        out["timing"] = f"{INTERLEAVED}, median of {max(rounds)}"
    if ours is not None:
        out["value_range"] = [ours.min_s * 1e6 / per, ours.max_s * 1e6 / per]
    if peer is not None:
        out["peer_range"] = [peer.min_s * 1e6 / per, peer.max_s * 1e6 / per]
    return out
