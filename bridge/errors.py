"""Errors of the bridge, and errors that cross it.

A Python exception crosses as an :class:`~tensorbridge.bridge.descriptors.Error` descriptor with
its type, message, traceback and chained cause; a foreign error arrives as :class:`ForeignError`.
Each keeps what it came from, so an error that travels back crosses unchanged: a ForeignError
becomes its original descriptor again, and a Python error descriptor becomes the original
exception object again.
"""

from __future__ import annotations

import traceback as _tb
from typing import Any

from .descriptors import Error

__all__ = [
    "BridgeError",
    "Cancelled",
    "ConversionError",
    "DispatchError",
    "DispatchTimeoutError",
    "ForeignError",
    "HandleError",
    "HostClosedError",
    "HostNotPumpingError",
    "error_from_descriptor",
    "error_to_descriptor",
]


class BridgeError(Exception):
    """Base class of the bridge's own errors."""


class ConversionError(BridgeError, ValueError):
    """A value that a converter cannot represent in the target language.

    ``path`` locates the failing value inside the converted one (e.g. ``[2]['w']``)."""

    def __init__(self, message: str, path: str = "") -> None:
        self.reason = message
        self.path = path
        super().__init__(f"at value{path}: {message}" if path else message)

    def locate(self, path: str) -> None:
        self.path = path
        self.args = (f"at value{path}: {self.reason}",)


class HandleError(BridgeError, LookupError):
    """Resolving, retaining or calling a handle that is not live."""

    def __init__(self, handle_id: Any, state: str, message: str) -> None:
        self.handle_id = handle_id
        self.state = state  # "released" or "unknown"
        super().__init__(message)

    def __str__(self) -> str:  # LookupError would repr() the message
        return str(self.args[0])


class DispatchError(BridgeError, RuntimeError):
    """A call to a host's main thread that could not complete."""


class DispatchTimeoutError(DispatchError, TimeoutError):
    """An explicit timeout expired."""


class HostNotPumpingError(DispatchError):
    """A worker queued a call for the host's main thread, which is not servicing its queue."""


class HostClosedError(DispatchError):
    """The host's executor was closed (host shut down or unregistered)."""


class Cancelled(BaseException):
    """Work was cancelled (interrupt, timeout). A BaseException, like KeyboardInterrupt, so that
    ``except Exception`` in user code does not swallow it."""

    def __init__(self, reason: str = "cancelled") -> None:
        self.reason = reason
        super().__init__(reason)


class ForeignError(BridgeError):
    """An error raised by foreign code (R, JS), seen from Python.

    ``language``, ``foreign_class`` (class name), ``classes`` (its class chain),
    ``message``, ``foreign_traceback`` (frames, oldest first) and ``descriptor`` (the original
    :class:`Error`, returned unchanged when this error crosses back)."""

    descriptor: Error

    def __init__(
        self,
        language: str,
        foreign_class: str,
        message: str,
        foreign_traceback: tuple[str, ...] | list[str] = (),
        *,
        classes: tuple[str, ...] | list[str] = (),
        data: dict[str, Any] | None = None,
        cause: Error | None = None,
        descriptor: Error | None = None,
    ) -> None:
        if descriptor is None:
            descriptor = Error(
                language=language,
                type=foreign_class,
                message=message,
                classes=tuple(classes) or (foreign_class,),
                traceback=tuple(foreign_traceback),
                cause=cause,
                cause_kind="cause" if cause is not None else "",
                data=dict(data or {}),
            )
        self.descriptor = descriptor
        self.language = descriptor.language
        self.foreign_class = descriptor.type
        self.classes = descriptor.classes
        self.message = descriptor.message
        self.foreign_traceback = descriptor.traceback
        super().__init__(f"[{self.language} {self.foreign_class}] {self.message}")
        if self.foreign_traceback:
            frames = "\n".join(f"  {line.rstrip()}" for line in self.foreign_traceback)
            self.add_note(f"{self.language} traceback (oldest first):\n{frames}")
        if descriptor.cause is not None:
            cause_exc = error_from_descriptor(descriptor.cause)
            if descriptor.cause_kind == "context":
                self.__context__ = cause_exc
            else:
                self.__cause__ = cause_exc

    @classmethod
    def from_descriptor(cls, desc: Error) -> ForeignError:
        return cls(desc.language, desc.type, desc.message, descriptor=desc)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_foreign_error_from_dict, (self.descriptor.to_dict(),))


def _foreign_error_from_dict(d: dict[str, Any]) -> ForeignError:
    return ForeignError.from_descriptor(Error.from_dict(d))


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def error_to_descriptor(exc: BaseException, *, _seen: set[int] | None = None) -> Error:
    """The descriptor of a Python exception (a ForeignError gives back its original one)."""
    if isinstance(exc, ForeignError):
        return exc.descriptor
    seen = _seen if _seen is not None else set()
    seen.add(id(exc))
    cls = type(exc)
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not hide the original error
        message = f"<unprintable {cls.__qualname__}>"
    chained, cause_kind = None, ""
    if exc.__cause__ is not None:
        chained, cause_kind = exc.__cause__, "cause"
    elif exc.__context__ is not None and not exc.__suppress_context__:
        chained, cause_kind = exc.__context__, "context"
    cause = None
    if chained is not None and id(chained) not in seen:  # chains can be cyclic
        cause = error_to_descriptor(chained, _seen=seen)
    else:
        cause_kind = ""
    data: dict[str, Any] = {}
    notes = getattr(exc, "__notes__", None)
    if notes:
        data["notes"] = [str(n) for n in notes]
    return Error(
        language="python",
        type=cls.__qualname__,
        message=message,
        module=cls.__module__,
        classes=tuple(_qualname(c) for c in cls.__mro__ if c is not object),
        traceback=tuple(_tb.format_tb(exc.__traceback__)),
        cause=cause,
        cause_kind=cause_kind,
        data=data,
        exception=exc,
    )


def error_from_descriptor(desc: Error) -> BaseException:
    """The Python exception for an error descriptor: the original exception when it started in
    this process, else a :class:`ForeignError`."""
    if desc.exception is not None:
        return desc.exception
    return ForeignError.from_descriptor(desc)
