"""A Python program that embeds R through rpy2: the same "r" registries, from the other side.

::

    from tensorbridge.bridge.r import rpy2host as rh
    rh.start()                                   # embeds R; this thread is R's main thread
    x = rh.from_r(rh.r("matrix(rnorm(6), 2)"))   # NumPy view of R's memory (F order, no copy)
    t = rh.as_tensor(rh.r("1:10 / 3"))           # a Tensor sharing R's memory
    v = rh.to_r(tb.tensor([[1., 2.], [3., 4.]])) # an R matrix (one copy at R's copy speed)
    f = rh.from_r(rh.r("function(x) x * 2"))     # an R function, callable from any thread

Conversion goes through ``foreign_to_py["r"]`` (converters registered here for rpy2's
classes; they produce the bridge's descriptors, which the shared converters turn into Python
values) and ``py_to_foreign["r"]`` (descriptors, which :func:`to_r` turns into rpy2 objects).
Numeric, integer and logical vectors cross as ``Array`` descriptors whose buffer is R's memory:
NumPy views it without a copy, and the rpy2 object (which keeps the R object protected from R's
garbage collector) is kept alive by the view. R functions arrive as bridge callables: called
from any thread they run on R's main thread (through a :class:`SignalExecutor`, so a main
thread blocked in ``join()`` still serves them; :func:`run` runs long work on a worker).

Never use this module inside an R session that embeds Python (the R package): evaluating R code
through rpy2 there can abort the process. It refuses to start when R is already running.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from ... import runtime as tb
from ..arrays import array_from_descriptor
from ..builtins_r import R_ARRAYS
from ..descriptors import (
    Array,
    Bool,
    Bytes,
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
)
from ..dispatch import get_host, register_host, unregister_host
from ..errors import ConversionError, error_to_descriptor
from ..handles import handles
from ..na import NA_character, NAType
from ..registry import Context, foreign_to_py, py_to_foreign
from .types import (
    DataFrame,
    Factor,
    RDataFrame,
    RFactor,
    RList,
    RListDesc,
    RVector,
    StrVector,
    atomic_kind,
    atomic_values,
    codes_from_r,
)
from .wakeup import SignalExecutor

__all__ = [
    "as_tensor",
    "from_r",
    "install_rpy2",
    "r",
    "run",
    "start",
    "stop",
    "to_r",
]

_ri: Any = None  # rpy2.rinterface once imported
_started = False
_lock = threading.Lock()


def _rinterface() -> Any:
    global _ri
    if _ri is None:
        os.environ.setdefault("RPY2_CFFI_MODE", "API")
        import rpy2.rinterface as ri

        _ri = ri
    return _ri


def start(*, signal_wakeup: bool = True, stall_timeout: float = 10.0) -> SignalExecutor:
    """Embed R (if rpy2 has not yet) and make the calling thread R's main thread for the
    bridge. Idempotent; returns the executor."""
    global _started
    with _lock:
        host = get_host("r")
        if _started and isinstance(host, SignalExecutor) and not host.closed:
            return host
        if host is not None and not isinstance(host, SignalExecutor):
            raise RuntimeError(
                "an R host is already registered in this process (an R session embedding "
                "Python?); rpy2 must not evaluate R code there"
            )
        ri = _rinterface()
        ri.initr()
        install_rpy2()
        executor = SignalExecutor(
            "r", signal_wakeup=signal_wakeup, stall_timeout=stall_timeout
        )
        register_host("r", executor)
        _started = True
        return executor


def stop() -> None:
    """Unregister the host (R stays embedded: R cannot be restarted in a process)."""
    global _started
    with _lock:
        host = get_host("r")
        if isinstance(host, SignalExecutor):
            unregister_host("r")
        _started = False


def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` on a worker thread while this (R's main) thread serves R callbacks."""
    host = get_host("r")
    if host is None:
        return fn(*args, **kwargs)
    return host.run(fn, args, kwargs)


def r(code: str) -> Any:
    """Evaluate R code (a string) and return the rpy2 object."""
    return _rinterface().evalr(code)


# -- R -> Python ----------------------------------------------------------------------------------
class _RVectorMemory:
    """Exposes an rpy2 vector's memory to NumPy (read-only) and keeps the rpy2 object, hence
    the protected R object, alive as long as any view exists."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner: Any, mv: memoryview) -> None:
        self.owner = owner
        addr = np.asarray(mv).__array_interface__["data"][0] if mv.nbytes else 0
        self.__array_interface__ = {
            "shape": (mv.nbytes,),
            "typestr": "|u1",
            "data": (addr, True),
            "version": 3,
        }


_DTYPES = {"REALSXP": "float64", "INTSXP": "int32", "LGLSXP": "logical"}


def _attr(obj: Any, name: str) -> Any:
    ri = _rinterface()
    v = obj.do_slot(name) if name in obj.list_attrs() else None
    return None if v is None or v is ri.NULL else v


def _dims(obj: Any) -> tuple[int, ...]:
    d = _attr(obj, "dim")
    return tuple(int(x) for x in d) if d is not None else (len(obj),)


def _plain(obj: Any) -> bool:
    """No attributes (a length-one vector then crosses as a scalar, as under reticulate)."""
    return len(obj.list_attrs()) == 0


def _array_desc(obj: Any, dtype: str) -> Array:
    if len(obj) == 0:  # rpy2 cannot make a memoryview of an empty vector
        buf = np.empty(0, np.uint8)
    else:
        buf = np.asarray(_RVectorMemory(obj, obj.memoryview()))
    return Array(buffer=buf, dtype=dtype, shape=_dims(obj), order="F", readonly=True)


def numeric_in(obj: Any, cx: Context) -> Any:
    ri = _rinterface()
    rtype = {ri.RTYPES.REALSXP: "float64", ri.RTYPES.INTSXP: "int32", ri.RTYPES.LGLSXP: "logical"}[
        obj.typeof
    ]
    classes = tuple(obj.rclass) if obj.list_attrs() else ()
    if "factor" in classes and rtype == "int32":
        levels = tuple(str(v) for v in (_attr(obj, "levels") or ()))
        codes = cx.convert(_array_desc(obj, "int32"))

        return Factor(codes_from_r(codes), levels, "ordered" in classes)
    if len(obj) == 1 and _plain(obj):
        v = obj[0]
        if rtype == "float64":
            return float(v)  # NA_real_ keeps its bit pattern: NA_REAL
        if v is ri.NA_Integer or v is ri.NA_Logical:
            return cx.convert(NAValue("int32" if rtype == "int32" else "logical"))
        return int(v) if rtype == "int32" else bool(v)
    return cx.convert(_array_desc(obj, rtype))


def str_in(obj: Any, cx: Context) -> Any:
    ri = _rinterface()
    values = [NA_character if v is ri.NA_Character else str(v) for v in obj]
    if len(values) == 1 and _plain(obj):
        return values[0]
    return StrVector(values)


def list_in(obj: Any, cx: Context) -> Any:
    ri = _rinterface()
    classes = tuple(obj.rclass) if obj.list_attrs() else ()
    names = _attr(obj, "names")
    names = [str(n) for n in names] if names is not None else None
    items = [obj[i] for i in range(len(obj))]
    if "data.frame" in classes:
        rn = _attr(obj, "row.names")
        row_names = None
        if rn is not None and rn.typeof == ri.RTYPES.STRSXP:
            row_names = [str(v) for v in rn]
        cols = {n: cx.convert(v, n) for n, v in zip(names or [], items)}
        return DataFrame(cols, row_names)
    if names is None:
        return RList([cx.convert(v, i) for i, v in enumerate(items)])
    if len(set(names)) == len(names) and all(names):
        return {n: cx.convert(v, n) for n, v in zip(names, items)}
    return RList([cx.convert(v, i) for i, v in enumerate(items)], names)


def bytes_in(obj: Any, cx: Context) -> bytes:
    return bytes(obj)


def null_in(obj: Any, cx: Context) -> None:
    return None


_CALLER: Any = None
_conditions: dict[int, Any] = {}  # recent R conditions by id (so they can go back unchanged)
_next_condition = [0]


def _caller() -> Any:
    global _CALLER
    if _CALLER is None:
        _CALLER = r(
            """function(f, a) {
              calls <- NULL
              fmt <- function(cs) vapply(cs, function(cl)
                paste(deparse(cl, nlines = 1L), collapse = ""), character(1))
              tryCatch(
                withCallingHandlers(list(TRUE, do.call(f, a)),
                  error = function(e) calls <<- sys.calls()),
                error = function(e) list(FALSE, conditionMessage(e), class(e), e,
                                         fmt(calls)))
            }"""
        )
    return _CALLER


def _keep_condition(cond: Any) -> int:
    _next_condition[0] += 1
    n = _next_condition[0]
    _conditions[n] = cond
    if len(_conditions) > 256:
        del _conditions[min(_conditions)]
    return n


class Rpy2Invoker:
    """``ForeignFunction.invoke`` for an rpy2 R function (the bridge runs it on R's main
    thread). An R error comes back as ``Raised`` with R's message and classes; the condition is
    kept so that it crosses back to R unchanged."""

    __slots__ = ("fn",)

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __call__(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        ri = _rinterface()
        items = [_desc_to_r(a) for a in args] + [_desc_to_r(v) for v in kwargs.values()]
        a = ri.ListSexpVector(items)
        if kwargs:
            _set_attr(a, "names", ri.StrSexpVector([""] * len(args) + list(kwargs)))
        res = _caller()(self.fn, a)
        if bool(res[0][0]):
            return res[1]
        classes = tuple(str(c) for c in res[2])
        return Raised(Error(
            language="r",
            type=classes[0] if classes else "error",
            message=str(res[1][0]),
            classes=classes,
            traceback=tuple(str(c) for c in res[4]),
            data={"r_condition": _keep_condition(res[3])},
        ))


def closure_in(obj: Any, cx: Context) -> Any:
    return cx.convert(ForeignFunction("r", Rpy2Invoker(obj), "", obj))


def other_in(obj: Any, cx: Context) -> Any:
    try:
        cls = str(obj.rclass[0])
    except Exception:
        cls = type(obj).__name__
    return cx.convert(ForeignRef("r", obj, cls, None))


def install_rpy2() -> None:
    """Register converters for rpy2's classes on ``foreign_to_py["r"]``."""
    ri = _rinterface()
    from rpy2.rinterface_lib import sexp

    inp = foreign_to_py["r"]
    inp.register((ri.FloatSexpVector, ri.IntSexpVector, ri.BoolSexpVector), numeric_in)
    inp.register(ri.StrSexpVector, str_in)
    inp.register(ri.ListSexpVector, list_in)
    inp.register(ri.ByteSexpVector, bytes_in)
    inp.register(sexp.NULLType, null_in)
    inp.register(ri.SexpClosure, closure_in)
    inp.register(sexp.Sexp, other_in)


def from_r(obj: Any) -> Any:
    """The Python value of an rpy2 object (through ``foreign_to_py["r"]``)."""
    start()
    return foreign_to_py["r"].convert(obj)


def as_tensor(obj: Any, dtype: Any = None) -> Any:
    """A tensor from an R vector/matrix/array: shares R's memory (no copy) when the dtype is
    kept (doubles -> float64, integers -> int32); the R object stays protected meanwhile."""
    value = from_r(obj)
    if isinstance(value, np.ma.MaskedArray):
        raise ConversionError("the R data holds NA; tensors have no missing values")
    return tb.tensor(value, dtype=dtype)


# -- Python -> R ----------------------------------------------------------------------------------
def to_r(value: Any) -> Any:
    """An rpy2 object for a Python value (through ``py_to_foreign["r"]``)."""
    start()
    return _desc_to_r(py_to_foreign["r"].convert(value))


def _na(dtype: str) -> Any:
    ri = _rinterface()
    return {
        "logical": ri.BoolSexpVector([ri.NA_Logical]),
        "int32": ri.IntSexpVector([ri.NA_Integer]),
        "float64": ri.FloatSexpVector([ri.NA_Real]),
        "str": ri.StrSexpVector([ri.NA_Character]),
    }[dtype]


def _set_attr(obj: Any, name: str, value: Any) -> None:
    """Set a plain attribute in place (rpy2's slot assignment: no validation, no copy)."""
    obj.do_slot_assign(name, value)


def _with_class(obj: Any, classes: list[str]) -> Any:
    """``class(obj) <- classes`` through R (which also marks the object as classed)."""
    ri = _rinterface()
    return ri.baseenv["class<-"](obj, ri.StrSexpVector(classes))


def _array_to_r(d: Array) -> Any:
    ri = _rinterface()

    if d.mask is not None:
        raise ConversionError("R arrays carry NA in-band; a masked Array cannot cross")
    arr = np.asarray(array_from_descriptor(d, R_ARRAYS)) if d.dtype != "logical" else None
    if d.dtype == "logical":
        storage = np.ndarray(
            tuple(d.shape), np.int32, buffer=np.frombuffer(d.buffer, np.uint8),
            order="F" if d.strides is None else "C", strides=d.strides,
        )
        flat = np.asfortranarray(storage).reshape(-1, order="F")
        cls = ri.BoolSexpVector
    else:
        flat = np.asfortranarray(arr).reshape(-1, order="F")
        cls = {"float64": ri.FloatSexpVector, "int32": ri.IntSexpVector}.get(d.dtype)
        if cls is None:
            raise ConversionError(f"R has no vector type for {d.dtype}")
    if flat.size == 0:
        out = cls([])
    else:
        out = cls.from_memoryview(memoryview(np.ascontiguousarray(flat)))
    if len(d.shape) >= 2:
        _set_attr(out, "dim", ri.IntSexpVector([int(n) for n in d.shape]))
    return out


def _desc_to_r(d: Any) -> Any:
    ri = _rinterface()
    t = type(d)
    if t is Null:
        return ri.NULL
    if t is Float:
        return ri.FloatSexpVector([d.value])
    if t is Int:
        return ri.IntSexpVector([d.value])
    if t is Bool:
        return ri.BoolSexpVector([d.value])
    if t is Str:
        return ri.StrSexpVector([d.value])
    if t is NAValue:
        return _na(d.dtype)
    if t is Bytes:
        return ri.ByteSexpVector(d.value)
    if t is Array:
        return _array_to_r(d)
    if t is List:
        kind = atomic_kind(d.items)
        if kind is not None:  # reticulate's rule: a list of like scalars is a vector
            return _vector_to_r(RVector(kind, atomic_values(d.items)))
        return ri.ListSexpVector([_desc_to_r(x) for x in d.items])
    if t is RListDesc:
        return ri.ListSexpVector([_desc_to_r(x) for x in d.items])
    if t is Dict:
        out = ri.ListSexpVector([_desc_to_r(x) for x in d.values])
        _set_attr(out, "names", ri.StrSexpVector(list(d.keys)))
        return out
    if t is RVector:
        return _vector_to_r(d)
    if t is RFactor:
        codes = _array_to_r(d.codes)
        _set_attr(codes, "levels", ri.StrSexpVector(list(d.levels)))
        return _with_class(codes, ["ordered", "factor"] if d.ordered else ["factor"])
    if t is RDataFrame:
        out = ri.ListSexpVector([_desc_to_r(c) for c in d.columns])
        _set_attr(out, "names", ri.StrSexpVector(list(d.names)))
        n = len(out[0]) if len(out) else 0
        if d.row_names is None:
            rn = ri.IntSexpVector([ri.NA_Integer, -n])
        else:
            rn = ri.StrSexpVector(list(d.row_names))
        _set_attr(out, "row.names", rn)
        return _with_class(out, ["data.frame"])
    if t is ForeignFunction or t is ForeignRef:
        if d.lang == "r":
            return d.ref  # the rpy2 object it came from
        raise ConversionError(f"a {d.lang} object cannot cross to R")
    if t is Ref or t is PyFunction:
        return _python_object_to_r(d)
    if t is Error:
        kept = _conditions.get(d.data.get("r_condition", -1)) if d.language == "r" else None
        if kept is not None:
            return kept
        cond = ri.ListSexpVector([ri.StrSexpVector([d.message]), ri.NULL])
        _set_attr(cond, "names", ri.StrSexpVector(["message", "call"]))
        return _with_class(cond, ["tensorbridge_error", d.type, "error", "condition"])
    if t is Raised:
        raise ConversionError("a raised error cannot be converted to an R value")
    raise ConversionError(f"R cannot receive a {getattr(d, 'kind', t.__name__)!r} value")


def _vector_to_r(d: RVector) -> Any:
    ri = _rinterface()
    if d.rtype == "character":
        return ri.StrSexpVector(
            [ri.NA_Character if isinstance(v, NAType) else v for v in d.values]
        )
    if d.rtype == "double":
        return ri.FloatSexpVector([ri.NA_Real if isinstance(v, NAType) else v for v in d.values])
    if d.rtype == "integer":
        return ri.IntSexpVector([ri.NA_Integer if isinstance(v, NAType) else v for v in d.values])
    return ri.BoolSexpVector([ri.NA_Logical if isinstance(v, NAType) else v for v in d.values])


_HELPERS: dict[str, Any] = {}  # rternalized functions, kept for the life of the process


def _helpers() -> dict[str, Any]:
    """R functions calling back into Python: one dispatcher for Python callables and one
    finalizer, created once (an rternalized function must outlive every R reference to it)."""
    if not _HELPERS:
        ri = _rinterface()
        out_conv, in_conv = py_to_foreign["r"], foreign_to_py["r"]

        # An rternalized function must return an R object rpy2 manages (R's NULL is not one),
        # so results travel inside a list of length one that the R wrapper unpacks.
        def dispatch(hid: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                fn = handles.resolve(int(hid[0]))
                a = [in_conv.convert(x) for x in args]
                kw = {k: in_conv.convert(v) for k, v in kwargs.items()}
                value = _desc_to_r(out_conv.convert(fn(*a, **kw)))
            except Exception as exc:
                value = _desc_to_r(error_to_descriptor(exc))
            return ri.ListSexpVector([value])

        def finalize(hid: Any) -> Any:
            handles.release_deferred(int(hid[0]), how="by R (rpy2)")
            return ri.BoolSexpVector([True])

        _HELPERS["dispatch"] = ri.rternalize(dispatch)
        _HELPERS["finalize"] = ri.rternalize(finalize)
        _HELPERS["make_function"] = r(
            """function(d, fin, id) {
              reg.finalizer(environment(), function(e) fin(id), onexit = TRUE)
              function(...) d(id, ...)[[1L]]
            }"""
        )
        _HELPERS["make_object"] = r(
            """function(fin, id, type) {
              e <- new.env(parent = emptyenv())
              e$id <- id
              e$type <- type
              reg.finalizer(e, function(e) fin(id), onexit = TRUE)
              class(e) <- c(paste0("tb.", type), "tb_object")
              e
            }"""
        )
    return _HELPERS


def _python_object_to_r(d: Any) -> Any:
    """A Python object by handle: a callable becomes an R function that calls it (on R's main
    thread: this thread), anything else an R environment of class ``tb_object`` holding the
    handle id. R's garbage collector releases the handle."""
    ri = _rinterface()
    h = _helpers()
    hid = ri.IntSexpVector([d.id])
    if isinstance(d, PyFunction):
        return h["make_function"](h["dispatch"], h["finalize"], hid)
    return h["make_object"](h["finalize"], hid, ri.StrSexpVector([d.type_name]))
