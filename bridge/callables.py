"""Calls across the boundary, both ways.

* Host -> Python: a client calls :func:`call_python` with a handle (or :class:`PyFunction`) and
  descriptor arguments; it gets back the result's descriptor, or :class:`Raised` carrying the
  Python error's descriptor (the client throws that natively). Exceptions never escape as
  foreign-FFI errors with only a string.
* Python -> host: a :class:`ForeignFunction` descriptor arrives as a :class:`ForeignCallable`.
  Calling it from any thread converts the arguments and runs ``invoke`` on the host's main thread
  (through its registered executor); a ``Raised`` result is raised in the calling thread as
  :class:`ForeignError` (or as the original Python exception, when one crossed and came back).
* Opaque foreign objects arrive as :class:`ForeignObject`; when Python drops its last
  reference, the client's ``release`` runs on the host's main thread (posted, never blocking).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from .descriptors import Error, ForeignFunction, ForeignRef, PyFunction, Raised, Ref
from .dispatch import _hosts, check_cancelled, get_host
from .errors import error_to_descriptor
from .handles import handles
from .registry import foreign_to_py, py_to_foreign

__all__ = ["ForeignCallable", "ForeignObject", "call_python", "get_attribute"]


class ForeignCallable:
    """A host function, callable from Python on any thread. When it is dropped, the
    descriptor's ``release`` (if any) runs on the host's main thread."""

    __slots__ = ("__weakref__", "_finalizer", "_inp", "_out", "_plain", "descriptor", "lang")

    def __init__(self, descriptor: ForeignFunction) -> None:
        self.descriptor = descriptor
        self.lang = descriptor.lang
        self._plain = getattr(descriptor, "invoke_plain", None)
        self._out = py_to_foreign[self.lang]  # a language's registries are never replaced
        self._inp = foreign_to_py[self.lang]
        release = getattr(descriptor, "release", None)
        self._finalizer = (
            weakref.finalize(self, _release_foreign, descriptor.lang, release)
            if release is not None
            else None
        )

    @property
    def __name__(self) -> str:
        return self.descriptor.name or "<foreign function>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        check_cancelled()  # every call into the host is a safe point for a cancelled job
        host = _hosts.get(self.lang)
        if host is None or host.is_main_thread():
            return self._invoke(args, kwargs)
        return host.submit(self._invoke, (args, kwargs), label=self)

    def _invoke(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # Runs on the host's main thread: arguments are converted here, so a call that is
        # withdrawn (timeout, cancel) never created handles the host would have to release.
        if self._plain is not None and not kwargs:
            result = self._plain(args)  # the client takes these values as they are
            if result is not NotImplemented:
                return self._inp.convert(result)
        convert = self._out.convert
        cargs = [convert(a) for a in args]
        ckwargs = {k: convert(v) for k, v in kwargs.items()} if kwargs else {}
        result = self.descriptor.invoke(cargs, ckwargs)
        return self._inp.convert(result)  # a Raised result raises here

    def __repr__(self) -> str:
        return f"<{self.lang} function {self.__name__}>"


def _release_foreign(lang: str, release: Callable[[], None]) -> None:
    host = get_host(lang)
    if host is None:
        try:
            release()
        except Exception:  # a finalizer must not raise; the host object is leaked at worst
            pass
    else:
        host.post(release)  # runs at the host's next pump, on its main thread


class ForeignObject:
    """An opaque host object held by Python."""

    __slots__ = ("__weakref__", "_finalizer", "descriptor", "lang")

    def __init__(self, descriptor: ForeignRef) -> None:
        self.descriptor = descriptor
        self.lang = descriptor.lang
        self._finalizer = (
            weakref.finalize(self, _release_foreign, descriptor.lang, descriptor.release)
            if descriptor.release is not None
            else None
        )

    def release(self) -> None:
        """Release the host object now (idempotent)."""
        if self._finalizer is not None:
            self._finalizer()

    def __repr__(self) -> str:
        return f"<{self.lang} object {self.descriptor.class_name or '?'}>"


def _resolve_target(target: Any) -> Any:
    if isinstance(target, Ref | PyFunction):
        return handles.resolve(target.id)
    return handles.resolve(target)


def call_python(
    lang: str,
    target: Any,
    args: list[Any] | tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    attr: str | None = None,
) -> Any:
    """Call the Python object behind ``target`` (a handle id, :class:`Ref` or
    :class:`PyFunction`), or its method ``attr``, with descriptor arguments from ``lang``.
    Returns the result's descriptor, or ``Raised(error)`` if anything failed (resolving the
    handle, converting, or the call itself)."""
    out = py_to_foreign[lang]
    try:
        fn = _resolve_target(target)
        if attr is not None:
            fn = getattr(fn, attr)
        inp = foreign_to_py[lang]
        a = [inp.convert(x) for x in args]
        kw = {str(k): inp.convert(v) for k, v in (kwargs or {}).items()}
        return out.convert(fn(*a, **kw))
    except Exception as exc:
        return _raised(out, exc)


def get_attribute(lang: str, target: Any, name: str) -> Any:
    """The descriptor of ``getattr(obj, name)`` for the object behind ``target``, or
    ``Raised(error)``."""
    out = py_to_foreign[lang]
    try:
        return out.convert(getattr(_resolve_target(target), name))
    except Exception as exc:
        return _raised(out, exc)


def _raised(out: Any, exc: BaseException) -> Raised:
    try:
        desc = out.convert(exc)
    except Exception:
        desc = None
    if not isinstance(desc, Error):  # a user converter must not turn errors into values
        desc = error_to_descriptor(exc)
    return Raised(desc)
