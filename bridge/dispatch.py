"""Main-thread dispatch: how Python threads call into hosts that must only run on one thread.

R aborts when entered from another thread, and a browser page's JS lives on its main thread. A
host registers a :class:`MainThreadExecutor` for its language; then:

* ``submit(fn)`` from the main thread calls ``fn`` directly, so nested callbacks
  (Python -> host -> Python -> host) never wait on themselves. From any other thread it queues
  the call and blocks until the main thread has run it; the result or exception comes back to
  the caller (a foreign error keeps its foreign message).
* ``run(fn)`` (main thread) runs long work on a worker thread while the main thread services the
  queue and polls the host for interrupts. An interrupt (or ``timeout``) cancels the work's
  :class:`CancellationToken`; the work stops at its next safe point (``check_cancelled()``, any
  callback into the host) and ``run`` raises the host's interrupt once the worker has ended. A
  worker that never reaches a safe point gets :class:`Cancelled` raised asynchronously after
  ``cancel_grace`` seconds.
* Nothing waits forever: ``timeout`` bounds a call; a call queued while the main thread is not
  pumping (e.g. blocked in ``join()``) fails with :class:`HostNotPumpingError` after
  ``stall_timeout`` seconds; closing the executor fails every waiting call.

Calls queued by a cancelled worker are refused (they raise Cancelled in the worker) rather than
run, so a cancelled job cannot enter the host again.

Without threads (Pyodide: one thread, no ``threading.Thread.start``; see :data:`THREADS`) there
is nothing to dispatch: every call already is on the main thread, so ``submit`` calls directly
and host callbacks run synchronously. ``run`` then runs the job inline on the main thread with
its token bound; the interrupt poll and the timeout are checked at the job's safe points
(``check_cancelled()``, ``token.check()``, any call into the host), where they cancel it, and
a ``KeyboardInterrupt`` raised in the job (Pyodide's interrupt buffer) is the host's interrupt.
A job that returns a coroutine hands it back unchanged, for the host's event loop to drive.
"""

from __future__ import annotations

import queue
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from time import monotonic
from typing import Any

from tensorbridge.runtime.interrupts import register_safe_point

from .errors import (
    Cancelled,
    DispatchError,
    DispatchTimeoutError,
    HostClosedError,
    HostNotPumpingError,
)
from .handles import handles

__all__ = [
    "CancellationToken",
    "MainThreadExecutor",
    "call_on_main",
    "check_cancelled",
    "current_token",
    "get_host",
    "register_host",
    "unregister_host",
]

def _threads_available() -> bool:
    """False where Python cannot start threads (Emscripten builds without pthreads)."""
    info = getattr(sys, "_emscripten_info", None)
    if info is not None:
        return bool(getattr(info, "pthreads", False))
    return sys.platform not in ("emscripten", "wasi")


#: Whether :meth:`MainThreadExecutor.run` can use a worker thread (False in Pyodide). Tests
#: set it to False to exercise the single-threaded path on CPython.
THREADS = _threads_available()


class _Local(threading.local):
    token: CancellationToken | None = None  # a class default: reading it never raises


_local = _Local()
_UNSET: Any = object()
_WAKE = object()  # queued by a finishing worker so the pump returns at once
_CHECK_INTERVAL = 0.05  # how often a waiting caller checks for cancellation, stalls, timeouts


class CancellationToken:
    """Cooperative cancellation. Long work checks ``token.cancelled`` or calls
    ``token.check()`` (raises :class:`Cancelled`) at its safe points. ``poll`` (optional) runs
    at each ``check()``: a job run inline (no threads) uses it to look for interrupts and its
    deadline."""

    __slots__ = ("cancelled", "poll", "reason")

    def __init__(self, poll: Callable[[CancellationToken], None] | None = None) -> None:
        self.cancelled = False
        self.reason = ""
        self.poll = poll

    def cancel(self, reason: str = "cancelled") -> None:
        if not self.cancelled:
            self.reason = reason
            self.cancelled = True  # set last: a reader that sees True also sees the reason

    def check(self) -> None:
        if self.poll is not None and not self.cancelled:
            self.poll(self)
        if self.cancelled:
            raise Cancelled(self.reason)

    @contextmanager
    def bind(self) -> Iterator[CancellationToken]:
        """Make this the current token of the calling thread (for threads a job starts)."""
        previous = _local.token
        _local.token = self
        try:
            yield self
        finally:
            _local.token = previous

    def __repr__(self) -> str:
        state = f"cancelled: {self.reason}" if self.cancelled else "active"
        return f"<CancellationToken {state}>"


def current_token() -> CancellationToken | None:
    """The token of the job running in this thread, if any."""
    return _local.token


def check_cancelled() -> None:
    """A safe point: raise :class:`Cancelled` if this thread's job was cancelled."""
    token = _local.token
    if token is not None:
        if token.poll is not None and not token.cancelled:
            token.poll(token)
        if token.cancelled:
            raise Cancelled(token.reason)


class _Call:
    __slots__ = (
        "args", "claim", "done", "enqueued", "error", "fn", "kwargs", "label", "result", "token"
    )

    def __init__(
        self, fn: Callable[..., Any], args: Any, kwargs: Any, token: Any, wait: bool,
        label: Any = None,
    ) -> None:
        self.fn = fn
        self.label = label
        self.args = args
        self.kwargs = kwargs
        self.token = token
        # Whoever pops the claim decides the call's fate: the main thread (runs it) or the
        # waiter (withdraws it on timeout/cancel). list.pop is atomic, so exactly one wins.
        self.claim = [True]
        self.result: Any = None
        self.error: BaseException | None = None
        self.enqueued = monotonic()
        if wait:
            self.done: threading.Lock | None = threading.Lock()
            self.done.acquire()
        else:
            self.done = None


def _name_of(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _call_name(call: _Call) -> str:
    return repr(call.label) if call.label is not None else _name_of(call.fn)


class MainThreadExecutor:
    """A host's main thread, seen from Python.

    ``main_thread``: the thread (or its ident) that may enter the host; default the calling one.
    ``poll_interrupt()``: called by ``run`` every ``poll_interval`` s; True means the user
    interrupted (R: a pending interrupt). ``interrupt()``: makes the exception ``run`` raises
    for an interrupt (default KeyboardInterrupt). ``wakeup()``: called from a worker after it
    queues a call while the main thread is not pumping, so a host with an event loop can
    schedule a :meth:`pump` (must be thread-safe). ``call_timeout``: default timeout of
    :meth:`submit` (None: wait as long as the main thread is pumping). ``stall_timeout``: how
    long a queued call waits for a main thread that is not pumping. ``cancel_grace``: how long
    a cancelled job has to reach a safe point before Cancelled is raised in it.
    """

    def __init__(
        self,
        name: str = "host",
        *,
        main_thread: threading.Thread | int | None = None,
        poll_interrupt: Callable[[], bool] | None = None,
        interrupt: Callable[[], BaseException] = KeyboardInterrupt,
        wakeup: Callable[[], None] | None = None,
        call_timeout: float | None = None,
        stall_timeout: float = 10.0,
        poll_interval: float = 0.02,
        cancel_grace: float = 2.0,
    ) -> None:
        if main_thread is None:
            self.main_ident = threading.get_ident()
        elif isinstance(main_thread, threading.Thread):
            if main_thread.ident is None:
                raise ValueError("main_thread: the thread has not started")
            self.main_ident = main_thread.ident
        else:
            self.main_ident = int(main_thread)
        self.name = name
        self.poll_interrupt = poll_interrupt
        self.interrupt = interrupt
        self.wakeup = wakeup
        self.call_timeout = call_timeout
        self.stall_timeout = stall_timeout
        self.poll_interval = poll_interval
        self.cancel_grace = cancel_grace
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._depth = 0  # pump loops active on the main thread (only that thread writes it)
        self._last_service = monotonic()
        self._closed = False

    # -- calling the host -------------------------------------------------------------------
    def is_main_thread(self) -> bool:
        return threading.get_ident() == self.main_ident

    def submit(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] | list[Any] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        timeout: float | None = _UNSET,
        label: Any = None,
    ) -> Any:
        """Run ``fn(*args, **kwargs)`` on the main thread and return its result (or raise its
        exception) in the calling thread. ``label`` (its repr) names the call in errors."""
        if threading.get_ident() == self.main_ident:
            return fn(*args, **(kwargs or {}))
        if self._closed:
            raise HostClosedError(f"{self.name}: the host is closed; cannot call {_name_of(fn)}")
        token = _local.token
        if token is not None and token.cancelled:
            raise Cancelled(token.reason)
        call = _Call(fn, args, kwargs or {}, token, True, label)
        self._queue.put(call)
        if self._depth == 0 and self.wakeup is not None:
            self.wakeup()
        return self._wait(call, self.call_timeout if timeout is _UNSET else timeout)

    def post(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] | list[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Queue ``fn`` for the main thread without waiting (releases of foreign objects).
        Never blocks and never raises; errors in ``fn`` become warnings when it runs."""
        if not self._closed:
            self._queue.put(_Call(fn, args, kwargs or {}, None, False))

    def _wait(self, call: _Call, timeout: float | None) -> Any:
        done = call.done
        assert done is not None
        deadline = None if timeout is None else call.enqueued + timeout
        while True:
            wait = _CHECK_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - monotonic()))
            if done.acquire(timeout=wait):
                break
            now = monotonic()
            token = call.token
            if token is not None and token.cancelled and self._withdraw(call):
                raise Cancelled(token.reason)
            if self._closed and self._withdraw(call):
                raise HostClosedError(
                    f"{self.name}: the host closed before running {_call_name(call)}"
                )
            if deadline is not None and now >= deadline:
                if self._withdraw(call):
                    raise DispatchTimeoutError(
                        f"{self.name}: {_call_name(call)} was not run on the main thread within "
                        f"{timeout} s (the main thread is busy or not pumping); it was withdrawn"
                    )
                raise DispatchTimeoutError(
                    f"{self.name}: {_call_name(call)} started on the main thread but did not "
                    f"finish within {timeout} s; its result will be discarded"
                )
            if self._depth == 0:
                idle = now - max(self._last_service, call.enqueued)
                if idle > self.stall_timeout and self._withdraw(call):
                    raise HostNotPumpingError(
                        f"{self.name}: the main thread has not serviced callbacks for "
                        f"{idle:.1f} s, so {_call_name(call)} (queued by thread "
                        f"{threading.current_thread().name!r}) cannot run. Run long work with "
                        f"executor.run(...), which pumps, or call executor.pump() from the "
                        f"host's event loop (stall_timeout={self.stall_timeout} s)"
                    )
        if call.error is not None:
            error, call.error = call.error, None  # break the call <-> traceback cycle
            raise error
        return call.result

    @staticmethod
    def _withdraw(call: _Call) -> bool:
        try:
            call.claim.pop()
            return True
        except IndexError:
            return False  # the main thread is running (or has run) it

    # -- servicing the queue (main thread) --------------------------------------------------
    def pump(self, timeout: float = 0.0, max_calls: int | None = None) -> int:
        """Run queued calls on the main thread: wait up to ``timeout`` s for the first, then run
        whatever is queued (at most ``max_calls``). Returns the number of calls run. Also
        applies deferred handle releases."""
        self._check_main("pump")
        self._depth += 1
        try:
            return self._pump(timeout, max_calls, None)
        finally:
            self._depth -= 1
            self._last_service = monotonic()

    def _pump(self, timeout: float, max_calls: int | None, budget: float | None) -> int:
        q = self._queue
        n = 0
        started = self._last_service = monotonic()
        if handles._pending:
            handles.drain()
        block = timeout > 0
        while max_calls is None or n < max_calls:
            try:
                item = q.get(True, timeout) if block else q.get_nowait()
            except queue.Empty:
                break
            block = False  # after the first item, only drain what is already queued
            if item is _WAKE:
                continue
            if self._execute(item):
                n += 1
            now = self._last_service = monotonic()
            if budget is not None and now - started > budget:
                break  # let run() poll for interrupts even under a flood of callbacks
        return n

    def _execute(self, call: _Call) -> bool:
        """Run one queued call; False if its waiter had withdrawn it."""
        try:
            call.claim.pop()
        except IndexError:
            return False  # withdrawn by its waiter
        done = call.done
        if done is None:  # posted: nobody waits for it
            try:
                call.fn(*call.args, **call.kwargs)
            except Exception as exc:
                warnings.warn(
                    f"{self.name}: posted call {_call_name(call)} raised {exc!r}",
                    RuntimeWarning,
                    stacklevel=2,
                )
            return True
        token = call.token
        if token is not None and token.cancelled:
            call.error = Cancelled(token.reason)  # refused: a cancelled job may not enter
            done.release()
            return False
        try:
            call.result = call.fn(*call.args, **call.kwargs)
        except Exception as exc:
            call.error = exc
        except BaseException:
            # KeyboardInterrupt (or SystemExit) on the main thread: the caller gets Cancelled,
            # and the main thread's run() loop handles the interrupt itself.
            call.error = Cancelled("interrupted")
            done.release()
            raise
        done.release()
        return True

    # -- long work on a worker --------------------------------------------------------------
    def run(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] | list[Any] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        name: str | None = None,
    ) -> Any:
        """Run ``fn(*args, **kwargs)`` on a worker thread while this (main) thread services
        callbacks and polls for interrupts; returns its result or raises its exception.

        The worker's :func:`current_token` is cancelled on interrupt or ``timeout``; ``run``
        then waits for the worker to end and raises ``self.interrupt()`` (or
        :class:`DispatchTimeoutError`). Called off the main thread (a job nested in a job), ``fn``
        just runs in the calling thread. Without threads (:data:`THREADS` false) the job runs
        inline on the main thread (see the module docs)."""
        if not self.is_main_thread():
            return fn(*args, **(kwargs or {}))
        if self._closed:
            raise HostClosedError(f"{self.name}: the host is closed")
        if not THREADS:
            return self._run_inline(fn, args, kwargs or {}, timeout)
        token = CancellationToken()
        outcome: dict[str, Any] = {}
        kw = kwargs or {}

        def work() -> None:
            _local.token = token
            try:
                outcome["result"] = fn(*args, **kw)
            except BaseException as exc:
                outcome["error"] = exc
            finally:
                _local.token = None
                self._queue.put(_WAKE)

        worker = threading.Thread(target=work, name=name or f"{self.name}-run", daemon=True)
        deadline = None if timeout is None else monotonic() + timeout
        stop: str | None = None
        self._depth += 1
        try:
            try:
                worker.start()
                while not outcome:
                    self._pump(self.poll_interval, None, self.poll_interval)
                    if outcome:
                        break
                    if self.poll_interrupt is not None and self.poll_interrupt():
                        stop = "interrupt"
                        break
                    if deadline is not None and monotonic() >= deadline:
                        stop = "timeout"
                        break
            except KeyboardInterrupt:
                stop = "interrupt"
            except BaseException:  # poll_interrupt raised, or the host's own error
                self._stop_worker(worker, token, outcome, "host error")
                raise
            if stop is not None:
                self._stop_worker(worker, token, outcome, stop)
        finally:
            self._depth -= 1
            self._last_service = monotonic()
        if stop == "interrupt":
            raise self.interrupt()
        if stop == "timeout":
            raise DispatchTimeoutError(
                f"{self.name}: {_name_of(fn)} did not finish within {timeout} s; it was cancelled"
            )
        worker.join()
        if "error" in outcome:
            error = outcome.pop("error")
            raise error
        return outcome["result"]

    def _run_inline(
        self, fn: Callable[..., Any], args: Any, kwargs: dict[str, Any], timeout: float | None
    ) -> Any:
        """``run`` without threads: the job runs here; interrupts and the deadline are looked
        for at its safe points (at most every ``poll_interval`` s)."""
        deadline = None if timeout is None else monotonic() + timeout
        next_poll = [0.0]

        def poll(token: CancellationToken) -> None:
            now = monotonic()
            if deadline is not None and now >= deadline:
                token.cancel("timeout")
            elif self.poll_interrupt is not None and now >= next_poll[0]:
                next_poll[0] = now + self.poll_interval
                if self.poll_interrupt():
                    token.cancel("interrupt")

        token = CancellationToken(poll)
        previous = _local.token
        _local.token = token
        self._depth += 1
        if handles._pending:
            handles.drain()
        try:
            return fn(*args, **kwargs)
        except Cancelled:
            if token.reason == "timeout":
                raise DispatchTimeoutError(
                    f"{self.name}: {_name_of(fn)} did not finish within {timeout} s; it was "
                    f"cancelled"
                ) from None
            if token.reason == "interrupt":
                raise self.interrupt() from None
            raise
        except KeyboardInterrupt:
            token.cancel("interrupt")
            raise self.interrupt() from None
        finally:
            _local.token = previous
            self._depth -= 1
            self._last_service = monotonic()
            if self._queue.qsize():  # posted releases of foreign objects
                self._pump(0.0, None, None)

    def _stop_worker(
        self, worker: threading.Thread, token: CancellationToken, outcome: dict[str, Any],
        reason: str,
    ) -> None:
        """Cancel the job and keep servicing the queue until its worker has ended."""
        token.cancel(reason)
        if worker.ident is None:
            return  # interrupted before the worker started
        end = monotonic() + self.cancel_grace
        forced = False
        while not outcome:
            try:
                self._pump(self.poll_interval, None, self.poll_interval)
            except KeyboardInterrupt:
                end = 0.0  # a second interrupt: stop waiting politely
            if outcome or monotonic() < end:
                continue
            if forced:
                break
            forced = True
            _async_raise(worker, Cancelled)
            end = monotonic() + self.cancel_grace
        worker.join(self.cancel_grace if not outcome else None)
        if worker.is_alive():
            warnings.warn(
                f"{self.name}: worker thread {worker.name!r} did not stop after cancellation "
                f"({reason}); it is blocked outside Python code and was left running",
                RuntimeWarning,
                stacklevel=3,
            )

    # -- lifetime ---------------------------------------------------------------------------
    def close(self) -> None:
        """Refuse new calls and fail every queued one with :class:`HostClosedError`."""
        self._closed = True
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is _WAKE or item.done is None:
                continue
            if self._withdraw(item):
                item.error = HostClosedError(
                    f"{self.name}: the host closed before running {_call_name(item)}"
                )
                item.done.release()

    @property
    def closed(self) -> bool:
        return self._closed

    def has_pending(self) -> bool:
        """Whether calls are queued for the main thread (cheap; for hosts deciding to pump)."""
        return not self._queue.empty()

    def stats(self) -> dict[str, Any]:
        return {
            "queued": self._queue.qsize(),
            "pumping": self._depth > 0,
            "idle_s": monotonic() - self._last_service,
            "closed": self._closed,
        }

    def _check_main(self, what: str) -> None:
        if threading.get_ident() != self.main_ident:
            raise DispatchError(
                f"{self.name}: {what}() must be called on the host's main thread, not on "
                f"{threading.current_thread().name!r}"
            )

    def __repr__(self) -> str:
        return f"<MainThreadExecutor {self.name!r} main={self.main_ident}>"


def _async_raise(thread: threading.Thread, exc_type: type[BaseException]) -> None:
    """Raise ``exc_type`` in ``thread`` at its next bytecode (the last resort for a cancelled
    job that never reaches a safe point; it cannot interrupt C code)."""
    if thread.ident is None or not thread.is_alive():
        return
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread.ident), ctypes.py_object(exc_type)
    )


# -- hosts by language ------------------------------------------------------------------------
_hosts: dict[str, MainThreadExecutor] = {}
_hosts_lock = threading.Lock()


def register_host(
    lang: str, executor: MainThreadExecutor | None = None, **options: Any
) -> MainThreadExecutor:
    """Declare that ``lang``'s host must be entered on one thread. Without ``executor``, one is
    made for the calling thread with ``options`` (see :class:`MainThreadExecutor`). A host
    registered before is closed and replaced."""
    if executor is None:
        executor = MainThreadExecutor(lang, **options)
    elif options:
        raise TypeError("register_host(): pass either an executor or options, not both")
    with _hosts_lock:
        old = _hosts.get(lang)
        _hosts[lang] = executor
    if old is not None and old is not executor:
        old.close()
    return executor


def unregister_host(lang: str) -> None:
    """Forget ``lang``'s executor and close it (waiting calls fail with HostClosedError)."""
    with _hosts_lock:
        old = _hosts.pop(lang, None)
    if old is not None:
        old.close()


def get_host(lang: str) -> MainThreadExecutor | None:
    return _hosts.get(lang)


def call_on_main(
    lang: str,
    fn: Callable[..., Any],
    args: tuple[Any, ...] | list[Any] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    timeout: float | None = _UNSET,
) -> Any:
    """Call ``fn`` on ``lang``'s main thread (directly when no executor is registered)."""
    host = _hosts.get(lang)
    if host is None:
        return fn(*args, **(kwargs or {}))
    return host.submit(fn, args, kwargs, timeout=timeout)


def _register_runtime_safe_point() -> None:
    """Let long runtime loops (mcmc, fit) stop at their safe points when a job is cancelled."""
    register_safe_point(check_cancelled)


_register_runtime_safe_point()
