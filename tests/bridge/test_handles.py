"""Reference-counted handles: lifetime, error messages, finalizer safety, leaks under threads."""

from __future__ import annotations

import gc
import random
import threading
import weakref

import numpy as np
import pytest

import tensorbridge as tb
import tensorbridge.bridge as br
from tensorbridge.bridge import HandleError, HandleTable


class Thing:
    pass


def test_register_resolve_retain_release():
    t = HandleTable()
    obj = Thing()
    hid = t.register(obj)
    assert t.resolve(hid) is obj and hid in t and t.refcount(hid) == 1
    assert t.retain(hid) == 2
    assert t.release(hid) is False  # one reference left
    assert t.resolve(hid) is obj
    assert t.release(hid) is True  # that was the last
    assert hid not in t and t.refcount(hid) == 0


def test_ids_are_never_reused():
    t = HandleTable()
    seen = set()
    for _ in range(100):
        hid = t.register(Thing())
        assert hid not in seen and all(hid > s for s in seen)
        seen.add(hid)
        t.release(hid)


def test_resolving_a_released_handle_says_which_and_how():
    t = HandleTable()
    hid = t.register(Thing())
    t.release(hid)
    with pytest.raises(HandleError) as info:
        t.resolve(hid)
    msg = str(info.value)
    assert msg.startswith(f"handle {hid} was released; the object is no longer available")
    assert "it held a Thing; released by release()" in msg
    assert info.value.handle_id == hid and info.value.state == "released"

    hid2 = t.register(Thing())
    t.release_deferred(hid2, how="by an R finalizer")
    t.drain()
    with pytest.raises(HandleError, match=f"handle {hid2} was released.*by an R finalizer"):
        t.resolve(hid2)
    with pytest.raises(HandleError, match="was released"):
        t.retain(hid2)


def test_unknown_ids():
    t = HandleTable()
    t.register(Thing())
    with pytest.raises(HandleError, match="handle 99 is unknown: no such handle was ever issued"):
        t.resolve(99)
    with pytest.raises(HandleError) as info:
        t.resolve(0)
    assert info.value.state == "unknown"
    with pytest.raises(HandleError, match="'abc' is not a handle id"):
        t.resolve("abc")
    with pytest.raises(HandleError, match="unknown"):
        t.release(12345)


def test_double_release_is_safe():
    t = HandleTable()
    hid = t.register(Thing())
    assert t.release(hid) is True
    assert t.release(hid) is False
    t.release_deferred(hid)
    t.release_deferred(10**9)  # a finalizer with a bogus id never raises
    assert t.drain() == 2


def test_ids_from_r_are_doubles():
    t = HandleTable()
    obj = Thing()
    hid = t.register(obj)
    assert t.resolve(float(hid)) is obj and t.resolve(np.int32(hid)) is obj
    t.release(float(hid))
    assert hid not in t


def test_release_hook_runs_once_with_the_object():
    t = HandleTable()
    seen = []
    obj = Thing()
    hid = t.register(obj, on_release=seen.append)
    t.retain(hid)
    t.release(hid)
    assert seen == []
    t.release(hid)
    t.release(hid)
    assert seen == [obj]


def test_release_hook_can_dispose_a_tensor():
    x = tb.tensor(np.ones(1000))
    hid = br.register(x, on_release=lambda t: t.dispose())
    br.release(hid)
    assert x.is_disposed


def test_deferred_release_runs_no_destructor_in_the_caller():
    """A finalizer only enqueues: the object's destructor runs later, at drain."""
    t = HandleTable()
    dropped = []
    obj = Thing()
    weakref.finalize(obj, dropped.append, "dropped")
    hid = t.register(obj, on_release=lambda o: dropped.append("hook"))
    del obj
    t.release_deferred(hid)
    assert dropped == [] and hid in t
    assert t.stats()["live"] == 0  # stats drains first
    assert dropped == ["hook", "dropped"]


def test_release_from_a_finalizer_inside_the_table_does_not_deadlock():
    """Finalizers fire at arbitrary points (R GC, Python GC). A release hook that itself
    releases other handles re-enters the table; with no locks this cannot deadlock."""
    t = HandleTable()
    inner = [t.register(Thing()) for _ in range(3)]

    def cascade(_obj):
        t.release(inner[0])  # synchronous re-entry
        t.release_deferred(inner[1])  # finalizer-style re-entry
        t.register(Thing())  # and allocation from inside a release

    outer = t.register(Thing(), on_release=cascade)
    done = threading.Event()

    def go():
        t.release(outer)
        done.set()

    th = threading.Thread(target=go)
    th.start()
    th.join(5)
    assert done.is_set(), "release deadlocked"
    t.drain()
    assert inner[0] not in t and inner[1] not in t and inner[2] in t


def test_gc_finalizer_releasing_during_register():
    """A Python __del__ that releases a handle may run in the middle of register()."""
    t = HandleTable()

    class Proxy:
        def __init__(self, hid):
            self.hid = hid
            self.cycle = self  # only the cyclic GC frees it, at an arbitrary allocation

        def __del__(self):
            t.release_deferred(self.hid)

    gc.disable()
    try:
        for _ in range(200):
            Proxy(t.register(Thing()))
        gc.collect()
    finally:
        gc.enable()
    assert t.stats()["live"] == 0


def test_stats_by_type():
    t = HandleTable()
    a = [t.register(Thing()) for _ in range(3)]
    b = [t.register([1]) for _ in range(2)]
    t.retain(a[0])
    s = t.stats()
    assert s["live"] == 5 and s["refs"] == 6
    assert s["by_type"] == {"Thing": 3, "list": 2}
    assert s["issued"] == 5 and s["released"] == 0
    for h in a + b:
        t.release(h)
    t.release(a[0])
    assert t.stats() == {"live": 0, "refs": 0, "by_type": {}, "issued": 5, "released": 5,
                         "pending": 0}
    assert "0 live of 5 issued" in repr(t)


def test_100k_handles_from_many_threads_leave_no_leak():
    baseline = br.stats()
    n_threads, per_thread = 8, 12_500
    errors: list[BaseException] = []
    passed: list[list[int]] = [[] for _ in range(n_threads)]

    def worker(k):
        rng = random.Random(k)
        try:
            for i in range(per_thread):
                obj = Thing() if i % 2 else [i]
                hid = br.register(obj)
                assert br.resolve(hid) is obj
                if i % 3 == 0:
                    br.retain(hid)
                    br.release(hid)
                r = rng.random()
                if r < 0.3:
                    br.release_deferred(hid)  # as from a finalizer
                elif r < 0.5:
                    passed[(k + 1) % n_threads].append(hid)  # released by another thread
                else:
                    br.release(hid)
                    br.release(hid)  # double release
            for hid in list(passed[k]):
                br.release(hid)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for bucket in passed:  # handed over after the receiver had finished
        for hid in bucket:
            br.release(hid)
    assert not errors, errors[0]
    after = br.stats()
    assert after["by_type"] == baseline["by_type"] and after["live"] == baseline["live"]
    assert after["issued"] - baseline["issued"] == n_threads * per_thread
    assert after["released"] - baseline["released"] == n_threads * per_thread


def test_racing_final_releases_free_exactly_once():
    for _ in range(200):
        t = HandleTable()
        freed = []
        hid = t.register(Thing(), on_release=freed.append)
        t.retain(hid)
        results = []
        barrier = threading.Barrier(3)

        def rel(t=t, hid=hid, barrier=barrier, results=results):
            barrier.wait()
            results.append(t.release(hid))
            results.append(t.release(hid))

        ths = [threading.Thread(target=rel) for _ in range(3)]
        for th in ths:
            th.start()
        for th in ths:
            th.join()
        assert len(freed) == 1 and hid not in t
        assert results.count(True) == 1
