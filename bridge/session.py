"""The session API: one object per language with everything a client calls.

An R or JS client needs only this::

    s = tensorbridge.bridge.session("r")
    s.register_host(poll_interrupt=...)      # once, on the host's main thread
    d = s.call(handle_id, [arg_desc], {})    # call Python; d is a descriptor or Raised
    s.release_deferred(handle_id)            # from the proxy's finalizer
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from . import dispatch
from .callables import call_python, get_attribute
from .handles import handles
from .registry import Registry, foreign_to_py, py_to_foreign

__all__ = ["Session", "session"]


class Session:
    """The bridge as seen by the client of one language."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.py_to_foreign: Registry = py_to_foreign[lang]  # KeyError names define_language
        self.foreign_to_py: Registry = foreign_to_py[lang]

    # -- values -----------------------------------------------------------------------------
    def to_foreign(self, value: Any) -> Any:
        return self.py_to_foreign.convert(value)

    def from_foreign(self, value: Any) -> Any:
        return self.foreign_to_py.convert(value)

    # -- calls into Python ------------------------------------------------------------------
    def call(
        self,
        target: Any,
        args: list[Any] | tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        attr: str | None = None,
    ) -> Any:
        """Call a Python object by handle; returns a descriptor or ``Raised``."""
        return call_python(self.lang, target, args, kwargs, attr=attr)

    def getattr(self, target: Any, name: str) -> Any:
        return get_attribute(self.lang, target, name)

    # -- handles ----------------------------------------------------------------------------
    def resolve(self, hid: Any) -> Any:
        return handles.resolve(hid)

    def retain(self, hid: Any) -> int:
        return handles.retain(hid)

    def release(self, hid: Any) -> bool:
        return handles.release(hid, how=f"by the {self.lang} client")

    def release_deferred(self, hid: Any) -> None:
        handles.release_deferred(hid, how=f"by a finalizer of the {self.lang} client")

    def stats(self) -> dict[str, Any]:
        return handles.stats()

    # -- the host's main thread -------------------------------------------------------------
    def register_host(self, **options: Any) -> dispatch.MainThreadExecutor:
        """Declare the calling thread the host's main thread (see MainThreadExecutor)."""
        return dispatch.register_host(self.lang, **options)

    @property
    def host(self) -> dispatch.MainThreadExecutor | None:
        return dispatch.get_host(self.lang)

    def pump(self, timeout: float = 0.0) -> int:
        host = self.host
        if host is None:
            handles.drain()
            return 0
        return host.pump(timeout)

    def run(
        self,
        fn: Callable[..., Any],
        args: list[Any] | tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> Any:
        """Run long work off the main thread while servicing callbacks (directly when the
        language registered no host)."""
        host = self.host
        if host is None:
            return fn(*args, **(kwargs or {}))
        return host.run(fn, args, kwargs, timeout=timeout)

    def close(self) -> None:
        dispatch.unregister_host(self.lang)

    def __repr__(self) -> str:
        return f"<tensorbridge.bridge.Session {self.lang!r} host={self.host!r}>"


_sessions: dict[str, Session] = {}
_lock = threading.Lock()


def session(lang: str) -> Session:
    """The session of a language (one per process)."""
    s = _sessions.get(lang)
    if s is None:
        with _lock:
            s = _sessions.get(lang)
            if s is None:
                s = _sessions[lang] = Session(lang)
    return s
