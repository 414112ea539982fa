"""The Python side of an R session that embeds Python through reticulate (the R client).

The R package calls the methods of one :class:`RHost` through reticulate. Values cross in a
"wire" form that reticulate converts natively and cheaply, and that never lets reticulate copy
or view memory itself:

R -> Python: scalars reticulate maps faithfully (double, non-NA integer/logical/character of
length one, NULL) cross as they are; everything else is a named R list tagged ``__tb__`` that
arrives as a dict. The "r" table's ``dict`` converter (installed here) turns tagged dicts into
bridge descriptors and converts those through the same registry. Tags come from the bridge's
one table (``descriptors.WIRE_TAGS``, which the JS host uses too):

====== ================================================ ==========================================
tag    fields                                           Python value
====== ================================================ ==========================================
A      addr, token, nbytes, dtype, dim                  NumPy view of R's memory (F order, no copy)
S      x (list of str), na (1-based positions)          :class:`StrVector`
N      dtype ("logical", "int32", "str")                NA, NA_integer, NA_character
L      items                                            :class:`RList` (or list of items)
D      names, items                                     dict (or :class:`RList` with names)
FA     codes (an A wire), levels, ordered               :class:`Factor`
DF     names, columns, row_names                        :class:`DataFrame`
CB     token, name                                      callable running the R function
O      token, class                                     ForeignObject (opaque R object)
H      id                                               the Python object behind a handle
T      (Python -> R only) id, shape, dtype              a tensor by handle (the R tensor API)
X      classes, message, traceback, cond                raised as ForeignError
I                                                       raised as KeyboardInterrupt (Ctrl-C)
W      (Python -> R only) categories, messages, result  Python warnings, signalled as R warnings
====== ================================================ ==========================================

Python -> R: ``py_to_foreign["r"]`` makes descriptors, :meth:`RHost.wire` turns them into
Python scalars (reticulate gives R scalars) or tuples ``(tag, ...)`` (reticulate gives R lists)
that the R package decodes. Arrays cross as ``("A", address, dtype, shape, nbytes, token)``: R
copies the bytes with one ``memcpy`` into a new vector; the source buffer stays in ``outbox``
under ``token`` until R has copied it and calls :meth:`RHost.release_outbox` (once per result,
with every token it decoded), or, for the arguments of an R callback, until the callback
returns.

R memory viewed by Python, R functions and opaque R objects are kept alive by the R package's
keep table (C) and released with ``tb_release_async(token)``, callable from any thread.

Threads: the host registers a :class:`~.wakeup.SignalExecutor` for "r". A callback queued by a
worker while R's main thread is executing Python for R (a direct call) wakes the main thread
with a signal whose handler services the queue, so Python code that blocks in ``join()`` while
its threads call R does not deadlock. Long work runs through :meth:`RHost.call_background`
(``MainThreadExecutor.run``), which also makes Ctrl-C cancel it cleanly.

While R is idle (at the prompt, in ``Sys.sleep()``) it runs no Python, and under reticulate
its main thread holds the GIL: the R package's C layer adds two input handlers to R's event
loop, a pipe that :meth:`RHost.set_wakeup_fd` makes the executor write to when it queues a
call (the handler pumps), and a periodic timer whose handler releases the GIL for a slice while
R waits, so Python threads run and their calls to R are served without R's next call.

Warnings: Python warnings shown while R's calls run are kept and travel with the next result
(tag ``W``); R signals them as warnings of class ``tensorbridge_warning`` and the category.

Ctrl-C: the R package's C-level SIGINT handler flags R and trips Python; :meth:`RHost._on_sigint`
raises KeyboardInterrupt from R's flag without running R code (reticulate's own handler runs R
code, which can act on the interrupt and unwind through Python). While an R callback runs, R's
interrupts are suspended and a pending one is raised as KeyboardInterrupt when it returns.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import threading
import types
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..arrays import array_from_descriptor
from ..builtins_r import R_ARRAYS
from ..descriptors import (
    Array,
    Bool,
    Bytes,
    Desc,
    Dict,
    Error,
    Float,
    ForeignFunction,
    ForeignRef,
    Int,
    List,
    NAValue,
    Null,
    PyFunction,
    Raised,
    Ref,
    Str,
    TensorRef,
)
from ..dispatch import register_host
from ..errors import ConversionError, error_to_descriptor
from ..handles import handles
from ..na import NA_character, NAType
from ..registry import Context, foreign_to_py, py_to_foreign
from .types import (
    RDataFrame,
    RFactor,
    RList,
    RListDesc,
    RVector,
    StrVector,
    atomic_kind,
    atomic_values,
    r_vector_in,
)
from .wakeup import SignalExecutor

__all__ = ["RHost", "current_host", "start"]

_host: RHost | None = None


def current_host() -> RHost | None:
    return _host


@dataclass(frozen=True, slots=True)
class RConvert(Desc):
    """A Python object that R converts with a converter registered from R (by type name)."""

    name: str
    value: Any
    kind: ClassVar[str] = "r_convert"


def resolve_type(path: str) -> type:
    """The type named ``"module.Qualified.Name"``."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        if not isinstance(obj, type):
            raise TypeError(f"{path} is not a type but a {type(obj).__name__}")
        return obj
    raise ImportError(f"no module found for type {path!r}")


class RMemory:
    """Keeps R memory alive while NumPy views it; frees the R side when NumPy lets go."""

    __slots__ = ("__array_interface__", "__weakref__", "token")

    def __init__(self, addr: int, nbytes: int, token: float) -> None:
        self.token = token
        self.__array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (addr, True),
            "version": 3,
        }

    def __del__(self) -> None:
        _release(self.token)


def _release(token: float) -> None:
    host = _host
    if host is not None and host.lib is not None:
        try:
            host.lib.tb_release_async(ctypes.c_double(token))
        except Exception:  # interpreter shutdown
            pass


class _ReleaseR:
    """``ForeignRef.release`` for an R object kept by token."""

    __slots__ = ("token",)

    def __init__(self, token: float) -> None:
        self.token = token

    def __call__(self) -> None:
        _release(self.token)


class RInvoker:
    """``ForeignFunction.invoke`` for an R function: runs it through the R package's dispatcher
    (on R's main thread; the bridge guarantees that). Releases the R function when dropped."""

    __slots__ = ("__weakref__", "host", "token")

    def __init__(self, host: RHost, token: float) -> None:
        self.host = host
        self.token = token

    def __call__(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        host = self.host
        wire = host.wire
        mark = host._token
        suspended, pending = host._r_suspended, host._r_pending
        # R must not act on Ctrl-C during the round trip (reticulate's conversions run R
        # code too): unwinding R through reticulate's frames would surface as an unknown
        # Python error. A pending interrupt becomes a KeyboardInterrupt here instead.
        before = suspended.value if suspended is not None else 1
        if not before:
            suspended.value = 1
        try:
            wargs = tuple(wire(a) for a in args)
            wkw = {k: wire(v) for k, v in kwargs.items()}
            return host.r_dispatch(self.token, wargs, wkw)
        finally:
            if not before:
                suspended.value = 0
                if pending is not None and pending.value:
                    pending.value = 0
                    raise KeyboardInterrupt
            if host._token != mark:  # R has copied the arguments by now
                pop = host.outbox.pop
                for t in range(mark + 1, host._token + 1):
                    pop(t, None)

    def __del__(self) -> None:
        _release(self.token)


# -- R wire -> Python (the "r" table's dict converter) -------------------------------------------
def _shape(dim: Any) -> tuple[int, ...]:
    if isinstance(dim, (int, float)):
        return (int(dim),)
    return tuple(int(d) for d in dim)


def _array_in(d: dict[str, Any]) -> Array:
    nbytes = int(d["nbytes"])
    token = d["token"]
    if nbytes == 0:
        _release(token)
        buf = np.empty(0, dtype=np.uint8)
    else:
        buf = np.asarray(RMemory(int(d["addr"]), nbytes, token))
    return Array(buffer=buf, dtype=d["dtype"], shape=_shape(d["dim"]), order="F", readonly=True)


def _str_list(x: Any) -> list[str]:
    if x is None:
        return []
    if isinstance(x, str):
        return [x]
    return list(x)


def _na_positions(na: Any) -> list[int]:
    if na is None:
        return []
    if isinstance(na, (int, float)):
        return [int(na)]
    return [int(i) for i in na]


def _strvector(d: dict[str, Any]) -> StrVector:
    out = StrVector(_str_list(d.get("x")))
    for i in _na_positions(d.get("na")):
        out[i - 1] = NA_character
    return out


def _items(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, list):
        return x
    return [x]


def r_wire_in(value: dict[Any, Any], cx: Context) -> Any:
    """The "r" table's converter for dicts: tagged wire values from the R package, or a plain
    dict (converted item by item)."""
    tag = value.get("__tb__") if value else None
    if tag is None:
        return {k: cx.convert(v, k) for k, v in value.items()}
    if tag == "A":
        return cx.convert(_array_in(value))
    if tag == "H":
        return handles.resolve(int(value["id"]))
    if tag == "S":
        return _strvector(value)
    if tag == "N":
        return cx.convert(NAValue(value["dtype"]))
    if tag == "L":
        return RList([cx.convert(v, i) for i, v in enumerate(_items(value.get("items")))])
    if tag == "D":
        names = _str_list(value.get("names"))
        items = _items(value.get("items"))
        if len(set(names)) == len(names) and all(names):
            return {k: cx.convert(v, k) for k, v in zip(names, items)}
        return RList([cx.convert(v, i) for i, v in enumerate(items)], names)
    if tag == "CB":
        host = _need_host()
        token = value["token"]
        return cx.convert(
            ForeignFunction("r", RInvoker(host, token), str(value.get("name") or ""), token)
        )
    if tag == "O":
        token = value["token"]
        cls = value.get("class")
        return cx.convert(
            ForeignRef("r", token, cls if isinstance(cls, str) else "", _ReleaseR(token))
        )
    if tag == "FA":
        codes = _array_in(value["codes"])
        return cx.convert(
            RFactor(codes, tuple(_str_list(value.get("levels"))), bool(value.get("ordered")))
        )
    if tag == "DF":
        names = tuple(_str_list(value.get("names")))
        cols = _items(value.get("columns"))
        rn = value.get("row_names")
        df = cx.convert(RDataFrame(names, (), None if rn is None else tuple(_str_list(rn))))
        for name, col in zip(names, cols):
            df[name] = cx.convert(col, name)
        return df
    if tag == "X":
        return cx.convert(Raised(_r_error(value)))
    if tag == "I":  # Ctrl-C arrived while an R callback ran: Python handles the interrupt
        raise KeyboardInterrupt
    raise ConversionError(f"unknown value tag {tag!r} from R")


def _r_error(d: dict[str, Any]) -> Error:
    classes = tuple(_str_list(d.get("classes"))) or ("error",)
    data: dict[str, Any] = {}
    if d.get("cond") is not None:
        data["r_condition"] = int(d["cond"])
    return Error(
        language="r",
        type=classes[0],
        message=str(d.get("message") or ""),
        classes=classes,
        traceback=tuple(_str_list(d.get("traceback"))),
        data=data,
    )


def _need_host() -> RHost:
    if _host is None:
        raise ConversionError("an R function crossed but no R host is running in this process")
    return _host


# -- the host -------------------------------------------------------------------------------
class RHost:
    """The bridge as the R package sees it (one per process)."""

    def __init__(self, lib_path: str, r_dispatch: Any, session: str) -> None:
        self.lib = ctypes.PyDLL(lib_path)
        self.lib.tb_release_async.argtypes = [ctypes.c_double]
        self.lib.tb_release_async.restype = None
        self.r_dispatch = r_dispatch
        self.session = session
        self.out = py_to_foreign["r"]
        self.inp = foreign_to_py["r"]
        self.outbox: dict[int, Any] = {}
        self._token = 0
        self.main_ident = threading.get_ident()
        self._wake_fd = -1
        self._r_pending = _r_flag("R_interrupts_pending")
        self._r_suspended = _r_flag("R_interrupts_suspended")
        self.executor = SignalExecutor(
            "r", poll_interrupt=self._poll_interrupt, stall_timeout=10.0
        )
        register_host("r", self.executor)
        # Python warnings become R warnings: shown warnings are kept here and travel with the
        # result of the next call from R (tag "W"), which R signals with warning()
        self.warnings: list[tuple[str, str]] = []
        warnings.showwarning = self._on_warning

    # -- warnings --------------------------------------------------------------------------------
    def _on_warning(self, message: Any, category: Any, filename: str, lineno: int,
                    file: Any = None, line: Any = None) -> None:
        self.warnings.append((getattr(category, "__name__", "Warning"), str(message)))

    def _out(self, w: Any) -> Any:
        """The wire of a result, with the warnings raised meanwhile (tag "W")."""
        if not self.warnings:
            return w
        pending = self.warnings[:]
        del self.warnings[: len(pending)]
        return ("W", tuple(c for c, _ in pending), tuple(m for _, m in pending), w)

    # -- threads ---------------------------------------------------------------------------------
    def install_sigint(self) -> float:
        """Make this host's handler the Python-level SIGINT handler and return the address of
        ``PyErr_SetInterrupt`` for the R package's C-level handler (which flags R and trips
        Python). The handler raises KeyboardInterrupt when R has a pending interrupt and is
        not suspending interrupts (an R callback is running: then the callback's caller
        raises it when the callback returns)."""
        signal.signal(signal.SIGINT, self._on_sigint)
        return float(ctypes.cast(ctypes.pythonapi.PyErr_SetInterrupt, ctypes.c_void_p).value)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        pending, suspended = self._r_pending, self._r_suspended
        if pending is None or suspended is None:
            raise KeyboardInterrupt
        if suspended.value:
            return
        if pending.value:
            pending.value = 0
            raise KeyboardInterrupt

    def set_wakeup_fd(self, fd: int) -> Any:
        """R's event loop watches the pipe ``fd`` (its write end): a call queued for R's main
        thread writes a byte there, so R serves it even while it sits idle at the prompt.
        Returns the addresses of the C functions with which R releases the GIL while idle
        (``PyEval_SaveThread``, ``PyEval_RestoreThread``, ``PyGILState_Check``)."""
        self._wake_fd = int(fd)
        self.executor._user_wakeup = self._wake_event_loop
        api = ctypes.pythonapi
        addrs = [float(ctypes.cast(f, ctypes.c_void_p).value)
                 for f in (api.PyEval_SaveThread, api.PyEval_RestoreThread,
                           api.PyGILState_Check)]
        return self.wire(self.out.convert(addrs))

    def _wake_event_loop(self) -> None:
        fd = self._wake_fd
        if fd >= 0:
            try:
                os.write(fd, b"w")
            except OSError:  # the pipe is full: R has wakeups pending already
                pass

    def _poll_interrupt(self) -> bool:
        flag = self._r_pending
        if flag is not None and flag.value:
            flag.value = 0
            return True
        return False

    def _service(self) -> None:
        """Run callbacks and releases queued while R was not in Python."""
        self.executor.service()

    # -- calls from R ----------------------------------------------------------------------------
    def call(self, hid: int, *args: Any, **kwargs: Any) -> Any:
        """Call the Python object behind handle ``hid``; returns the wire of its result."""
        if self.executor._depth:  # a call from an R callback that runs inside a pump
            return self._out(self.executor.unpumped(self._call, hid, args, kwargs))
        return self._out(self._call(hid, args, kwargs))

    def _call(self, hid: int, args: Any, kwargs: Any) -> Any:
        self._service()
        try:
            fn = handles.resolve(hid)
            if args:
                conv = self.inp.convert
                args = tuple([conv(a) for a in args])
            if kwargs:
                conv = self.inp.convert
                kwargs = {k: conv(v) for k, v in kwargs.items()}
            return self.wire(self.out.convert(fn(*args, **kwargs)))
        except BaseException as exc:
            return self.wire_raised(exc)

    def call_background(self, hid: int, *args: Any, **kwargs: Any) -> Any:
        """Like :meth:`call`, but run on a worker thread while R's main thread services
        callbacks and interrupts (Ctrl-C cancels the work cleanly)."""
        self._service()
        try:
            fn = handles.resolve(hid)
            conv = self.inp.convert
            a = [conv(x) for x in args]
            kw = {k: conv(v) for k, v in kwargs.items()}
            return self._out(self.wire(self.out.convert(self.executor.run(fn, a, kw))))
        except BaseException as exc:
            return self._out(self.wire_raised(exc))

    def getattr(self, hid: int, name: str) -> Any:
        """The wire of an attribute; ``("C", wire)`` marks a module's function, class or
        submodule, which the R side may cache."""
        self._service()
        try:
            obj = handles.resolve(hid)
            value = getattr(obj, name)
            w = self.wire(self.out.convert(value))
            if isinstance(obj, types.ModuleType) and (
                callable(value) or isinstance(value, types.ModuleType)
            ):
                return self._out(("C", w))
            return self._out(w)
        except BaseException as exc:
            return self._out(self.wire_raised(exc))

    def setattr(self, hid: int, name: str, value: Any) -> Any:
        self._service()
        try:
            setattr(handles.resolve(hid), name, self.inp.convert(value))
            return self._out(None)
        except BaseException as exc:
            return self._out(self.wire_raised(exc))

    def getitem(self, hid: int, key: Any) -> Any:
        self._service()
        try:
            obj = handles.resolve(hid)
            return self._out(self.wire(self.out.convert(obj[self.inp.convert(key)])))
        except BaseException as exc:
            return self._out(self.wire_raised(exc))

    def dir(self, hid: int) -> Any:
        try:
            return self.wire(self.out.convert(StrVector(sorted(dir(handles.resolve(hid))))))
        except BaseException as exc:
            return self.wire_raised(exc)

    def repr(self, hid: int) -> Any:
        try:
            return repr(handles.resolve(hid))
        except BaseException as exc:
            return self.wire_raised(exc)

    def import_module(self, name: str) -> Any:
        self._service()
        try:
            mod = importlib.import_module(name)
            return self._out(self.wire(Ref(handles.register(mod), "module")))
        except BaseException as exc:
            return self._out(self.wire_raised(exc))

    def evaluate(self, code: str) -> Any:
        """``eval`` an expression in a fresh namespace (tests and quick experiments)."""
        self._service()
        try:
            return self._out(self.wire(self.out.convert(eval(code, {"__name__": "__tb_eval__"}))))
        except BaseException as exc:
            return self._out(self.wire_raised(exc))

    def to_python(self, value: Any) -> Any:
        """Convert a wire value from R and return it as a handle (``tb_py()``)."""
        self._service()
        try:
            obj = self.inp.convert(value)
            return self._out(self.wire(Ref(handles.register(obj), type(obj).__qualname__)))
        except BaseException as exc:
            return self._out(self.wire_raised(exc))

    def release(self, hid: int) -> None:
        """Called by R finalizers (never raises)."""
        handles.release_deferred(hid, how="by an R finalizer")

    def release_now(self, hid: int) -> None:
        """``tb_release()``: release at once (never raises)."""
        try:
            handles.release(hid, how="by tb_release() in R")
        except Exception:
            pass

    def release_many(self, ids: Any) -> None:
        if isinstance(ids, (int, float)):
            ids = [ids]
        for hid in ids:
            handles.release_deferred(int(hid), how="by an R finalizer")

    def stats(self) -> Any:
        self._service()
        s = handles.stats()
        return self.wire(self.out.convert({
            "live": s["live"],
            "refs": s["refs"],
            "issued": s["issued"],
            "released": s["released"],
            "by_type": s["by_type"],
            "queued": self.executor.stats()["queued"],
        }))

    def register_py_converter(self, path: str, on: bool = True) -> Any:
        """Route Python objects of type ``path`` to the R converter registered under the same
        name (``tb_register_converter(py_type=, to_r=)``); ``on=False`` removes it."""
        try:
            cls = resolve_type(path)
            if not on:
                self.out.unregister(cls)
                return None

            def convert(value: Any, cx: Context) -> RConvert:
                return RConvert(path, Ref(handles.register(value), type(value).__qualname__))

            convert.__qualname__ = f"r_converter[{path}]"
            self.out.register(cls, convert)
            return None
        except BaseException as exc:
            return self.wire_raised(exc)

    def pump(self, timeout: float = 0.0) -> int:
        return self.executor.pump(timeout)

    def release_outbox(self, tokens: Any) -> None:
        """R has copied these arrays (or taken back these objects)."""
        pop = self.outbox.pop
        if isinstance(tokens, (int, float)):
            pop(int(tokens), None)
            return
        for t in tokens:
            pop(int(t), None)

    def _keep(self, obj: Any) -> int:
        self._token += 1
        self.outbox[self._token] = obj
        return self._token

    # -- Python -> R wire -------------------------------------------------------------------------
    def wire(self, d: Any) -> Any:
        t = type(d)
        if t is Float or t is Int or t is Bool or t is Str:
            return d.value
        if t is Null:
            return None
        if t is NAValue:
            return ("N", d.dtype)
        if t is Array:
            return self._wire_array(d)
        if t is List:
            kind = atomic_kind(d.items)
            if kind is not None:  # reticulate's rule: a list of like scalars is a vector
                return self._wire_vector(RVector(kind, atomic_values(d.items)))
            return ("L", tuple([self.wire(x) for x in d.items]))
        if t is RListDesc:
            return ("L", tuple([self.wire(x) for x in d.items]))
        if t is Dict:
            return ("D", tuple(d.keys), tuple([self.wire(x) for x in d.values]))
        if t is TensorRef:
            return ("T", d.id, tuple(d.shape), d.dtype)
        if t is Ref:
            return ("R", d.id, d.type_name)
        if t is PyFunction:
            return ("F", d.id, d.name, d.doc)
        if t is RVector:
            return self._wire_vector(d)
        if t is RConvert:
            return ("CV", d.name, self.wire(d.value))
        if t is RFactor:
            return ("FA", self._wire_array(d.codes), tuple(d.levels), d.ordered)
        if t is RDataFrame:
            cols = tuple([self.wire(c) for c in d.columns])
            return ("DF", tuple(d.names), cols, d.row_names)
        if t is Bytes:
            raw = np.frombuffer(d.value, dtype=np.uint8)
            return self._wire_array(Array(raw, "uint8", (raw.size,), order="F"))
        if t is ForeignFunction or t is ForeignRef:
            if d.lang == "r" and isinstance(d.ref, float):
                # Going home. Keep the Python side (whose release frees the R object) alive
                # until R has taken the object back: until the next call from R.
                return ("H", d.ref, self._keep(d))
            raise ConversionError(f"a {d.lang} object cannot cross to R")
        if t is Error:
            return ("E", *self._error_fields(d))
        if t is Raised:
            return ("X", *self._error_fields(d.error))
        if isinstance(d, Desc):
            raise ConversionError(f"R cannot receive a {d.kind!r} value")
        raise ConversionError(
            f"expected a descriptor, got {type(d).__name__} (a converter for the 'r' table "
            f"returned a raw value)"
        )

    def _wire_array(self, d: Array) -> Any:
        if d.mask is not None:
            raise ConversionError("R arrays carry NA in-band; a masked Array cannot cross")
        if d.strides is None:
            contiguous_f = d.order == "F" or sum(n > 1 for n in d.shape) <= 1
        else:
            storage = "int32" if d.dtype == "logical" else d.dtype
            contiguous_f = _f_contiguous(d.shape, d.strides, np.dtype(storage).itemsize)
        if contiguous_f and d.offset == 0:
            raw = d.buffer if isinstance(d.buffer, np.ndarray) else np.frombuffer(
                d.buffer, dtype=np.uint8
            )
            nbytes = raw.nbytes
        else:  # an unusual layout from a user converter: let NumPy make it F-contiguous

            arr = np.asfortranarray(np.asarray(array_from_descriptor(d, R_ARRAYS)))
            raw = arr.reshape(-1, order="F").view(np.uint8)
            nbytes = raw.nbytes
        if nbytes:
            token = self._keep(raw)
            addr = float(raw.__array_interface__["data"][0])
        else:
            token, addr = 0, 0.0
        return ("A", addr, d.dtype, tuple(d.shape), float(nbytes), token)

    def _wire_vector(self, d: RVector) -> Any:
        if d.rtype == "character":
            na = [i + 1 for i, v in enumerate(d.values) if isinstance(v, NAType)]
            vals = ["" if isinstance(v, NAType) else v for v in d.values] if na else list(
                d.values
            )
            return ("S", vals, tuple(na))

        arr = r_vector_in(d, None)  # type: ignore[arg-type]
        return self.wire(self.out.convert(arr))

    def _error_fields(self, e: Error) -> tuple[Any, ...]:
        cond = e.data.get("r_condition") if e.language == "r" else None
        cause = None
        if e.cause is not None:
            cause = f"{e.cause.type}: {e.cause.message}"
        return (
            e.language,
            e.type,
            e.message,
            e.module,
            tuple(e.classes),
            tuple(e.traceback),
            cond,
            cause,
        )

    def wire_raised(self, exc: BaseException) -> Any:
        if isinstance(exc, KeyboardInterrupt):
            return ("I",)
        try:
            desc = self.out.convert(exc)
        except Exception:
            desc = None
        if not isinstance(desc, Error):
            desc = error_to_descriptor(exc)
        return ("X", *self._error_fields(desc))


def _f_contiguous(shape: Any, strides: Any, itemsize: int) -> bool:
    step = itemsize
    for n, st in zip(shape, strides):
        if n == 0:
            return True
        if n > 1 and st != step:
            return False
        step *= n
    return True


def _r_flag(name: str) -> Any:
    """One of R's interrupt flags (``int`` globals of libR) as a ctypes int, or None."""
    try:
        return ctypes.c_int.in_dll(ctypes.PyDLL(None), name)
    except (ValueError, OSError):
        return None


def start(lib_path: str, r_dispatch: Any, session: str) -> RHost:
    """Create the process's R host (called once by the R package, on R's main thread)."""
    global _host
    if _host is not None:
        _host.executor.close()
    _host = RHost(lib_path, r_dispatch, session)
    return _host

