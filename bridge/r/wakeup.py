"""A main-thread executor for R that never needs the caller's cooperation to be served.

R may only run on its main thread. The bridge's :class:`MainThreadExecutor` queues calls from
other threads and runs them whenever the main thread pumps. :class:`SignalExecutor` adds:

* **Wakeup by signal.** When a call is queued while the main thread is not pumping, the main
  thread gets a (real-time) signal; its Python handler pumps the queue. Python runs signal
  handlers in the main thread between bytecodes and when a blocking lock wait (``join()``,
  ``queue.get()``, ``Event.wait()``) is interrupted, so Python code that blocks in ``join()``
  while its threads call R is served instead of deadlocking (reticulate issues #221, #288).
* **No lost wakeups.** A signal that lands just before the main thread enters a blocking wait
  is only noticed at its next wakeup, so a helper thread re-sends it (with backoff) while calls
  stay queued and nobody pumps; and ``pump`` re-checks the queue after it stops pumping (a call
  queued while a pump was finishing saw "pumping" and sent no wakeup).

The handler is installed without ``SA_RESTART`` (Python's default), so that lock waits wake up.
Python threads only run, and so only signal, while the main thread is in Python (under
reticulate the main thread holds the GIL whenever R code runs), so R's own system calls are
not interrupted.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from ..dispatch import MainThreadExecutor

__all__ = ["WAKE_SIGNAL", "SignalExecutor"]

WAKE_SIGNAL = signal.SIGRTMIN + 3 if hasattr(signal, "SIGRTMIN") else None


def _queue_probe(ex: MainThreadExecutor) -> Callable[[], bool]:
    q = getattr(ex, "_queue", None)
    if q is not None and hasattr(q, "empty"):
        return q.empty
    return lambda: ex.stats()["queued"] == 0


class SignalExecutor(MainThreadExecutor):
    """A :class:`MainThreadExecutor` for the calling (main) thread that wakes it by signal.

    ``signal_wakeup=False`` (or a platform without real-time signals) leaves the plain
    executor behaviour: calls are served only while the main thread pumps (``run``,
    ``pump``)."""

    def __init__(self, name: str = "r", *, signal_wakeup: bool = True, **options: Any) -> None:
        self._user_wakeup = options.pop("wakeup", None)
        super().__init__(name, wakeup=self._wake, **options)
        self.queue_empty = _queue_probe(self)
        self.signal_ok = False
        self._previous_handler: Any = None
        self._nudge = threading.Event()
        if signal_wakeup and WAKE_SIGNAL is not None and self.is_main_thread():
            try:
                self._previous_handler = signal.signal(WAKE_SIGNAL, self._on_signal)
                self.signal_ok = True
            except (ValueError, OSError):  # not the interpreter's main thread
                self.signal_ok = False
        if self.signal_ok:
            threading.Thread(
                target=self._nudger, name=f"tensorbridge-{name}-wakeup", daemon=True
            ).start()

    # -- waking the main thread -------------------------------------------------------------
    def _wake(self) -> None:
        if self._user_wakeup is not None:
            self._user_wakeup()
        if self.signal_ok:
            self._kick()
            self._nudge.set()

    def _kick(self) -> None:
        try:
            signal.pthread_kill(self.main_ident, WAKE_SIGNAL)
        except (ProcessLookupError, OSError):
            pass

    def _nudger(self) -> None:
        ev, empty = self._nudge, self.queue_empty
        while not self.closed:
            ev.wait(1.0)
            if not ev.is_set():
                continue
            ev.clear()
            delay = 0.0005
            while not empty() and not self.closed:
                time.sleep(delay)
                if not empty() and not self.stats()["pumping"]:
                    self._kick()
                delay = min(delay * 2, 0.01)

    def _on_signal(self, signum: int, frame: Any) -> None:
        if not self.closed and self.is_main_thread():
            self.pump()

    # -- pumping ----------------------------------------------------------------------------
    def pump(self, timeout: float = 0.0, max_calls: int | None = None) -> int:
        n = super().pump(timeout, max_calls)
        if max_calls is None:
            empty = self.queue_empty
            while not empty():
                n += super().pump(0.0)
        return n

    def unpumped(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` on the main thread as "not pumping", even inside a pump.

        A callback running inside a pump may call into Python code that blocks (``join()``)
        while its threads call R: queued calls must then wake the main thread again, which
        ``submit`` only does when the executor is not pumping."""
        depth = self._depth
        if not depth:
            return fn(*args)
        self._depth = 0
        try:
            return fn(*args)
        finally:
            self._depth = depth

    def service(self) -> None:
        """Pump if anything is queued (cheap when nothing is)."""
        if not self.queue_empty():
            self.pump()

    def close(self) -> None:
        super().close()
        self._nudge.set()
        if self.signal_ok and self.is_main_thread():
            try:
                signal.signal(WAKE_SIGNAL, self._previous_handler or signal.SIG_DFL)
            except (ValueError, OSError, TypeError):
                pass
            self.signal_ok = False
