"""Main-thread dispatch with the in-process toy host: callbacks from workers, nesting,
interrupts, timeouts, stalled and closed hosts."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

import tensorbridge.bridge as br
from tensorbridge.bridge import (
    Cancelled,
    DispatchError,
    DispatchTimeoutError,
    ForeignError,
    HostClosedError,
    HostNotPumpingError,
)

from .toyhost import ToyError, ToyHost


def test_main_thread_calls_run_directly(toy):
    calls = []

    def f(x):
        toy.enter()
        calls.append(threading.get_ident())
        return x + 1

    fn = toy.function(f)
    assert fn(1) == 2
    assert calls == [toy.main_ident]
    assert toy.executor.stats()["queued"] == 0


def test_worker_calls_are_run_on_the_main_thread(toy):
    def f(x):
        toy.enter()
        return (x, threading.get_ident())

    fn = toy.function(f)
    result = toy.executor.run(lambda: fn(7), timeout=10)
    assert result == [7, toy.main_ident]


def test_16_threads_x_1000_callbacks_with_results_and_exceptions(toy):
    def square_or_fail(i):
        toy.enter()
        if i % 7 == 0:
            raise ToyError(f"no multiples of 7: {i}")
        return i * i

    fn = toy.function(square_or_fail)
    n_threads, n_calls = 16, 1000
    results: dict[int, list] = {}

    def one_thread(k):
        out = []
        for i in range(k * n_calls, (k + 1) * n_calls):
            try:
                out.append(fn(i))
            except ForeignError as e:
                out.append(e)
        results[k] = out

    def job():
        threads = [threading.Thread(target=one_thread, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return "done"

    start = time.perf_counter()
    assert toy.executor.run(job, timeout=60) == "done"
    elapsed = time.perf_counter() - start
    n_errors = 0
    for k in range(n_threads):
        for j, got in enumerate(results[k]):
            i = k * n_calls + j
            if i % 7 == 0:
                n_errors += 1
                assert isinstance(got, ForeignError)
                assert got.language == "toy" and got.foreign_class == "ToyError"
                assert got.message == f"no multiples of 7: {i}"
            else:
                assert got == i * i
    assert n_errors == len(range(0, n_threads * n_calls, 7))
    assert toy.calls == n_threads * n_calls and toy.violations == 0
    assert elapsed < 30


def test_nested_callbacks_do_not_deadlock(toy):
    """Python (worker) -> toy -> Python -> toy -> Python -> toy, and a nested run()."""
    depth_seen = []

    def toy_leaf(x):
        toy.enter()
        return x * 10

    leaf = toy.function(toy_leaf)

    def py_middle(x):
        # called by toy code, on the main thread: calling toy again runs directly
        return leaf(x) + 1

    def toy_outer(py_fn, x):
        toy.enter()
        depth_seen.append("outer")
        # toy calls Python, which calls toy again
        return py_fn(x) + toy.call_python(py_fn, x + 1)

    outer = toy.function(toy_outer)

    def py_nested_run(x):
        # Python on the main thread (called by toy) starting its own worker job
        return toy.executor.run(lambda: leaf(x) + outer(py_middle, x), timeout=10)

    def toy_top(py_fn):
        toy.enter()
        return py_fn(2)

    top = toy.function(toy_top)

    def job():
        a = outer(py_middle, 1)  # (10+1) + (20+1)
        b = top(py_nested_run)  # 20 + ((20+1) + (30+1))
        return a, b

    assert toy.executor.run(job, timeout=10) == (32, 72)
    assert depth_seen == ["outer", "outer"]


def test_callback_error_reraises_in_the_waiting_thread(toy):
    def boom():
        toy.enter()
        raise ToyError("model failed to converge")

    fn = toy.function(boom)
    with pytest.raises(ForeignError) as info:
        toy.executor.run(fn, timeout=10)
    err = info.value
    assert str(err) == "[toy ToyError] model failed to converge"
    assert err.foreign_traceback == ("toy: at top level", "toy: in callback")
    assert err.classes == ("ToyError", "error")


def test_python_error_in_a_callback_keeps_its_type(toy):
    def bad():
        raise ValueError("plain python error on the main thread")

    with pytest.raises(ValueError, match="plain python error"):
        toy.executor.run(lambda: toy.executor.submit(bad), timeout=10)


# -- interrupts --------------------------------------------------------------------------------
def _polls_after(n):
    count = {"n": 0}

    def poll():
        count["n"] += 1
        return count["n"] > n

    return poll


def test_interrupt_cancels_at_the_next_safe_point(toy):
    toy.executor.poll_interrupt = _polls_after(5)
    progress = []
    tick = toy.function(lambda i: toy.enter() or i)
    worker_names = []

    def fit():
        worker_names.append(threading.current_thread().name)
        for i in range(10**6):
            br.check_cancelled()  # the runtime's safe point
            progress.append(tick(i))  # a callback is a safe point too
            time.sleep(0.001)
        return "finished"

    before = br.stats()["by_type"]
    with pytest.raises(KeyboardInterrupt):
        toy.executor.run(fit)
    assert 0 < len(progress) < 10**6
    assert br.stats()["by_type"] == before
    assert worker_names[0] not in [t.name for t in threading.enumerate()]


def test_interrupt_surfaces_as_the_hosts_interrupt(toy):
    class HostInterruptError(Exception):
        pass

    toy.executor.poll_interrupt = _polls_after(2)
    toy.executor.interrupt = lambda: HostInterruptError("interrupted by user")
    token_seen = []

    def fit():
        token = br.current_token()
        token_seen.append(token)
        while not token.cancelled:
            time.sleep(0.001)
        token.check()

    with pytest.raises(HostInterruptError, match="interrupted by user"):
        toy.executor.run(fit)
    assert token_seen[0].cancelled and token_seen[0].reason == "interrupt"


def test_sigint_on_the_main_thread_interrupts_run(toy):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are delivered to the main thread only")
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT handler replaced")

    def fit():
        time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C
        while True:
            br.check_cancelled()
            time.sleep(0.001)

    with pytest.raises(KeyboardInterrupt):
        toy.executor.run(fit, timeout=10)


def test_work_that_never_checks_is_stopped_after_the_grace_period(toy):
    toy.executor.poll_interrupt = _polls_after(3)
    toy.executor.cancel_grace = 0.2

    def stubborn():
        x = 0
        while True:  # never reaches a safe point
            x += 1

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        toy.executor.run(stubborn)
    assert time.monotonic() - start < 5


def test_calls_queued_by_a_cancelled_job_are_refused_not_run(toy):
    ran = []

    def slow(i):
        toy.enter()
        ran.append(i)
        time.sleep(0.02)

    fn = toy.function(slow)
    toy.executor.poll_interrupt = _polls_after(2)
    outcomes = []

    def caller(token, i):
        try:
            with token.bind():  # threads a job starts share its token
                fn(i)
            outcomes.append("ok")
        except Cancelled:
            outcomes.append("cancelled")

    def job():
        token = br.current_token()
        threads = [threading.Thread(target=caller, args=(token, i)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    with pytest.raises(KeyboardInterrupt):
        toy.executor.run(job)
    assert len(outcomes) == 20
    assert outcomes.count("cancelled") > 0
    assert len(ran) == outcomes.count("ok")  # a refused call never entered the host


def test_keyboard_interrupt_inside_a_callback_interrupts_run(toy):
    def ctrl_c():
        toy.enter()
        raise KeyboardInterrupt

    fn = toy.function(ctrl_c)
    seen = []

    def job():
        try:
            fn()
        except Cancelled as e:
            seen.append(e.reason)
            raise

    with pytest.raises(KeyboardInterrupt):
        toy.executor.run(job, timeout=10)
    assert seen == ["interrupted"]


# -- timeouts and failure modes ----------------------------------------------------------------
def test_call_timeout_withdraws_a_call_the_busy_main_thread_never_ran(toy):
    ran = []
    hold = toy.function(lambda: toy.enter() or time.sleep(0.4))
    quick = toy.function(lambda: toy.enter() or ran.append(1))

    def job():
        blocker = threading.Thread(target=hold)
        blocker.start()
        time.sleep(0.05)  # the main thread is now busy inside `hold`
        try:
            toy.executor.submit(quick._invoke, ((), {}), timeout=0.1)
        finally:
            blocker.join()

    with pytest.raises(DispatchTimeoutError, match=r"was not run on the main thread within 0\.1 s"):
        toy.executor.run(job, timeout=10)
    toy.executor.pump()
    assert ran == []  # withdrawn calls never run later


def test_call_timeout_while_running(toy):
    slow = toy.function(lambda: toy.enter() or time.sleep(0.3))
    with pytest.raises(DispatchTimeoutError, match="started on the main thread but did not finish"):
        toy.executor.run(lambda: toy.executor.submit(slow._invoke, ((), {}), timeout=0.1))


def test_default_call_timeout(toy):
    toy.executor.call_timeout = 0.05
    slow = toy.function(lambda: toy.enter() or time.sleep(0.2))
    with pytest.raises(DispatchTimeoutError):
        toy.executor.run(slow)


def test_run_timeout_cancels_the_work(toy):
    def forever():
        while True:
            br.check_cancelled()
            time.sleep(0.001)

    expected = r"did not finish within 0\.1 s; it was cancelled"
    with pytest.raises(DispatchTimeoutError, match=expected):
        toy.executor.run(forever, timeout=0.1)


def test_a_host_that_stops_pumping_gives_a_clear_error(toy):
    toy.executor.stall_timeout = 0.2
    ran = []
    fn = toy.function(lambda: toy.enter() or ran.append(1))
    errors = []

    def worker():
        try:
            fn()
        except HostNotPumpingError as e:
            errors.append(e)

    t = threading.Thread(target=worker, name="stuck-worker")
    t.start()
    t.join(5)  # the main thread blocks in join(): it does not pump (reticulate's deadlock)
    assert not t.is_alive()
    assert len(errors) == 1
    msg = str(errors[0])
    assert "the main thread has not serviced callbacks for" in msg and "'stuck-worker'" in msg
    assert "<toy function <lambda>>" in msg
    assert "executor.run" in msg
    assert toy.executor.pump() == 0 and ran == []


def test_closing_the_host_fails_waiting_calls(toy):
    fn = toy.function(lambda: toy.enter())
    errors = []

    def worker():
        try:
            fn()
        except HostClosedError as e:
            errors.append(e)

    t = threading.Thread(target=worker)
    t.start()
    time.sleep(0.1)  # queued, not pumped
    toy.executor.close()
    t.join(5)
    assert len(errors) == 1 and "closed before running" in str(errors[0])
    with pytest.raises(HostClosedError):
        threading_call(fn)


def threading_call(fn):
    box = {}

    def go():
        try:
            box["r"] = fn()
        except BaseException as e:
            box["e"] = e

    t = threading.Thread(target=go)
    t.start()
    t.join(5)
    if "e" in box:
        raise box["e"]
    return box["r"]


def test_wakeup_lets_an_event_loop_pump_on_demand():
    woken = threading.Event()
    host = ToyHost("toy-loop", wakeup=woken.set, stall_timeout=5)
    try:
        fn = host.function(lambda x: host.enter() or x * 2)
        box = {}
        t = threading.Thread(target=lambda: box.setdefault("r", fn(21)))
        t.start()
        assert woken.wait(5)  # the host's event loop is told to pump
        while "r" not in box:
            host.executor.pump(timeout=0.05)
        t.join()
        assert box["r"] == 42
    finally:
        host.close()


def test_pump_only_on_the_main_thread(toy):
    with pytest.raises(DispatchError, match="must be called on the host's main thread"):
        threading_call(toy.executor.pump)


def test_run_off_the_main_thread_runs_inline(toy):
    def job():
        me = threading.get_ident()
        return toy.executor.run(threading.get_ident) == me

    assert toy.executor.run(job, timeout=10) is True


def test_post_runs_at_the_next_pump_and_reports_errors(toy):
    ran = []
    threading_call(lambda: toy.executor.post(lambda: ran.append(threading.get_ident())))
    assert ran == []
    assert toy.executor.pump() == 1
    assert ran == [toy.main_ident]
    toy.executor.post(lambda: 1 / 0)
    with pytest.warns(RuntimeWarning, match="ZeroDivisionError"):
        toy.executor.pump()


def test_foreign_objects_are_released_on_the_main_thread(toy):
    released = []
    desc = br.ForeignRef("toy", ref="env-1", class_name="environment",
                         release=lambda: released.append(threading.get_ident()))
    obj = br.from_foreign("toy", desc)
    assert repr(obj) == "<toy object environment>"
    assert br.to_foreign("toy", obj) is desc  # going home: the same descriptor

    def drop():
        nonlocal obj
        del obj  # Python drops the last reference on a worker thread

    threading_call(drop)
    assert released == []  # posted, not run on the worker
    toy.executor.pump()
    assert released == [toy.main_ident]


def test_registering_a_host_again_closes_the_old_one():
    a = br.register_host("toy-re")
    b = br.register_host("toy-re")
    try:
        assert a.closed and not b.closed and br.get_host("toy-re") is b
    finally:
        br.unregister_host("toy-re")
    assert b.closed and br.get_host("toy-re") is None


def test_call_on_main_without_a_host_calls_directly():
    assert br.call_on_main("no-such-host", threading.get_ident) == threading.get_ident()


def test_cancellation_token_bind_and_check():
    token = br.CancellationToken()
    assert br.current_token() is None
    with token.bind():
        assert br.current_token() is token
        br.check_cancelled()
        token.cancel("stop")
        with pytest.raises(Cancelled, match="stop"):
            br.check_cancelled()
    assert br.current_token() is None
    assert repr(token) == "<CancellationToken cancelled: stop>"
    assert issubclass(Cancelled, BaseException) and not issubclass(Cancelled, Exception)


def test_has_pending(toy):
    assert not toy.executor.has_pending()
    threading_call(lambda: toy.executor.post(lambda: None))
    assert toy.executor.has_pending()
    toy.executor.pump()
    assert not toy.executor.has_pending()
