"""A minimal in-process host ("toy" language) for testing the bridge without R or a browser.

It behaves like a real client: it owns a main thread (the thread that creates it) and refuses
to be entered from any other, it turns descriptors into its own "native" values and back, holds
Python objects through handles released by finalizers, and throws its own error type.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorbridge.bridge as br


class ToyError(Exception):
    """The toy language's native error. ``descriptor`` is set when it came from Python (or
    is re-thrown), so it can travel back unchanged."""

    def __init__(self, message: str, *, descriptor: br.Error | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.descriptor = descriptor


class WrongThreadError(AssertionError):
    pass


class ToyRef:
    """A toy proxy of a Python object: releases its handle from a finalizer."""

    def __init__(self, host: ToyHost, desc: br.Ref | br.PyFunction) -> None:
        self.id = desc.id
        self.desc = desc
        weakref.finalize(self, host.session.release_deferred, desc.id)


class ToyPyFunction(ToyRef):
    def __init__(self, host: ToyHost, desc: br.PyFunction) -> None:
        super().__init__(host, desc)
        self._host = weakref.ref(host)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        host = self._host()
        assert host is not None
        return host.call_python(self, *args, **kwargs)


class ToyNA:
    def __init__(self, dtype: str) -> None:
        self.dtype = dtype

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToyNA) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("ToyNA", self.dtype))


class ToyHost:
    def __init__(self, lang: str = "toy", **executor_options: Any) -> None:
        br.define_language(lang, like="js")
        self.lang = lang
        self.session = br.session(lang)
        self.main_ident = threading.get_ident()
        self.executor = self.session.register_host(**executor_options)
        self.entries = 0  # how many times toy code checked its thread
        self.calls = 0  # how many times Python called a toy function
        self.violations = 0  # entries from a thread other than the main one

    def close(self) -> None:
        self.session.close()

    # -- the host's own rule: only the main thread may run toy code --------------------------
    def enter(self) -> None:
        self.entries += 1
        if threading.get_ident() != self.main_ident:
            self.violations += 1
            raise WrongThreadError(f"toy entered from {threading.current_thread().name}")

    # -- descriptors -> toy natives (what a client does on receipt) ----------------------------
    def decode(self, d: Any) -> Any:
        if isinstance(d, br.Null):
            return None
        if isinstance(d, br.NAValue):
            return ToyNA(d.dtype)
        if isinstance(d, br.Bool | br.Int | br.BigInt | br.Float | br.Str | br.Bytes):
            return d.value
        if isinstance(d, br.List):
            return [self.decode(x) for x in d.items]
        if isinstance(d, br.Dict):
            return {k: self.decode(v) for k, v in zip(d.keys, d.values)}
        if isinstance(d, br.Array):
            base = np.frombuffer(d.buffer, dtype=np.uint8)
            return np.ndarray(d.shape, d.dtype, buffer=base, offset=d.offset, strides=d.strides)
        if isinstance(d, br.PyFunction):
            return ToyPyFunction(self, d)
        if isinstance(d, br.Ref):
            return ToyRef(self, d)
        if isinstance(d, br.ForeignFunction):
            assert d.lang == self.lang
            return d.ref  # our own function came home
        if isinstance(d, br.Error):
            return ToyError(d.message, descriptor=d)
        raise TypeError(f"toy cannot decode {d!r}")

    # -- toy natives -> descriptors (what a client does to send) -------------------------------
    def encode(self, v: Any) -> Any:
        if v is None:
            return br.Null()
        if isinstance(v, ToyNA):
            return br.NAValue(v.dtype)
        if isinstance(v, bool):
            return br.Bool(v)
        if isinstance(v, int):
            return br.Int(v)
        if isinstance(v, float):
            return br.Float(v)
        if isinstance(v, str):
            return br.Str(v)
        if isinstance(v, bytes):
            return br.Bytes(v)
        if isinstance(v, list | tuple):
            return br.List(tuple(self.encode(x) for x in v))
        if isinstance(v, dict):
            return br.Dict(tuple(v), tuple(self.encode(x) for x in v.values()))
        if isinstance(v, np.ndarray):
            v = np.ascontiguousarray(v)
            return br.Array(v, v.dtype.name, v.shape, v.strides, 0, "C", True)
        if isinstance(v, ToyRef):
            return v.desc
        if isinstance(v, ToyError):
            return self.encode_error(v)
        if callable(v):
            return br.ForeignFunction(self.lang, self._invoker(v), v.__name__, ref=v)
        raise TypeError(f"toy cannot encode {v!r}")

    def encode_error(self, e: ToyError) -> br.Error:
        if e.descriptor is not None:
            return e.descriptor  # re-thrown: travels back unchanged
        return br.Error(
            language=self.lang,
            type="ToyError",
            message=e.message,
            classes=("ToyError", "error"),
            traceback=("toy: at top level", "toy: in callback"),
        )

    def _invoker(self, fn: Callable[..., Any]) -> Callable[[list[Any], dict[str, Any]], Any]:
        def invoke(args: list[Any], kwargs: dict[str, Any]) -> Any:
            self.enter()
            self.calls += 1
            try:
                result = fn(*[self.decode(a) for a in args],
                            **{k: self.decode(v) for k, v in kwargs.items()})
            except ToyError as e:
                return br.Raised(self.encode_error(e))
            return self.encode(result)

        return invoke

    # -- the two directions as a user sees them ------------------------------------------------
    def function(self, fn: Callable[..., Any]) -> Any:
        """Hand a toy function to Python (what passing an R closure to Python does)."""
        return self.session.from_foreign(self.encode(fn))

    def to_toy(self, value: Any) -> Any:
        """Hand a Python value to toy code."""
        return self.decode(self.session.to_foreign(value))

    def call_python(self, fn: ToyPyFunction, *args: Any, **kwargs: Any) -> Any:
        """Toy code calling a Python function; a Python error becomes a ToyError."""
        self.enter()
        result = self.session.call(
            fn.id, [self.encode(a) for a in args], {k: self.encode(v) for k, v in kwargs.items()}
        )
        if isinstance(result, br.Raised):
            raise ToyError(result.error.message, descriptor=result.error)
        return self.decode(result)
