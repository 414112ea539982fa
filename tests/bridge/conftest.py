"""Fixtures of the bridge suite. Every test must leave no handle and no thread behind."""

from __future__ import annotations

import gc
import threading
import time

import pytest

import tensorbridge.bridge as br

from .toyhost import ToyHost


def _live_by_type() -> dict[str, int]:
    gc.collect()  # toy proxies release their handles from finalizers
    return br.stats()["by_type"]


@pytest.fixture(autouse=True)
def no_leaks():
    threads_before = set(threading.enumerate())
    handles_before = _live_by_type()
    yield
    deadline = time.monotonic() + 5.0
    while True:
        extra = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
        if not extra or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert not extra, f"threads left behind: {extra}"
    assert _live_by_type() == handles_before, "handles leaked"


@pytest.fixture
def toy():
    host = ToyHost("toy", stall_timeout=2.0, poll_interval=0.005, cancel_grace=1.0)
    yield host
    host.close()
    assert host.violations == 0, "toy code ran off its main thread"
