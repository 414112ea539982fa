"""The Python half of the R package's tensor API.

Ordinary conversion sends tensors to R by value (as R arrays). The R tensor API instead keeps
them in Python and hands R a handle (:class:`TensorRef`, which also carries shape and dtype so
``dim()`` needs no round trip): every function here returns tensors that way, and R functions
given to ``grad`` and friends receive their arguments (tracers) that way too, so R code inside
a differentiated function runs on the same Python tensors as Python code would.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import runtime as tb
from ...runtime import Tensor
from ..builtins_common import tensor_ref
from ..descriptors import Dict, List, TensorRef
from ..errors import ConversionError
from ..handles import handles
from ..na import na_mask
from .rhost import RMemory

__all__ = [
    "as_tensor",
    "as_tensor_callback",
    "as_tensor_r",
    "call_op",
    "call_op_ids",
    "grad",
    "hessian",
    "index",
    "info",
    "jacobian",
    "release_callback",
    "to_array",
    "value_and_grad",
    "wrap",
]


def wrap(value: Any) -> Any:
    """Tensors (also inside tuples, lists and dicts) as TensorRefs; other values unchanged
    (they convert through the "r" table as usual)."""
    if isinstance(value, Tensor):
        return tensor_ref(value)
    if isinstance(value, (tuple, list)):
        return List(tuple(wrap(v) for v in value))
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return Dict(tuple(value), tuple(wrap(v) for v in value.values()))
    return value


def _no_na(x: Any, where: str) -> Any:
    if isinstance(x, np.ma.MaskedArray):
        if np.ma.getmaskarray(x).any():
            raise ConversionError(
                f"{where}: the R data holds NA; tensors have no missing values (remove or "
                f"impute them first)"
            )
        return np.asarray(x.data)
    if isinstance(x, np.ndarray) and x.dtype == np.float64 and x.size:
        if na_mask(x).any():
            raise ConversionError(
                f"{where}: the R data holds NA; tensors have no missing values (NaN is "
                f"allowed: use NaN if that is what you mean)"
            )
    return x


def as_tensor(x: Any, dtype: Any = None) -> TensorRef:
    """A tensor from R data (R memory is shared, not copied, where dtype allows)."""
    if isinstance(x, Tensor):
        return tensor_ref(x if dtype is None else x.astype(dtype))
    x = _no_na(x, "as_tensor")
    if isinstance(x, float) and dtype is None:
        # an R double of length one arrives as a Python float (whose default is float32, the
        # weak-scalar rule of the Python API); in R a double is float64 whatever its length
        dtype = "float64"
    return tensor_ref(tb.tensor(x, dtype=dtype))


# typeof() of an R vector -> the NumPy typestr and item size of its memory (a logical is an int)
_R_STORAGE = {
    "double": (np.dtype(np.float64).str, 8),
    "integer": (np.dtype(np.int32).str, 4),
    "logical": (np.dtype(np.int32).str, 4),
}


class _RArray(RMemory):
    """R memory viewed as the column-major array itself (one ``np.asarray``, no byte buffer to
    reshape); releases the R side as :class:`RMemory` does."""

    __slots__ = ()

    def __init__(self, addr: int, token: float, shape: tuple[int, ...], typestr: str,
                 strides: tuple[int, ...]) -> None:
        self.token = token
        self.__array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (addr, True),  # read-only: a tensor that shares R's memory cannot write it
            "strides": strides,
            "version": 3,
        }


def as_tensor_r(view: str, dtype: Any = None) -> Any:
    """``as_tensor()`` of a plain R vector or array that R found free of NA, given as the text
    ``"<typeof> <address> <token> <dims...>"`` (r-client/src/tensorbridge.c tb_c_view_text):
    the read-only column-major view of R's memory that ``as_tensor`` gets from the wire, kept
    alive by the token, without converting a tagged dict."""
    rtype, addr, token, *dims = view.split()
    typestr, stride = _R_STORAGE[rtype]
    shape = tuple(map(int, dims))
    strides = []
    for d in shape:
        strides.append(stride)
        stride *= d
    arr = np.asarray(_RArray(int(addr), float(token), shape, typestr, tuple(strides)))
    if rtype == "logical":
        arr = arr.astype(np.bool_)
    try:
        t = tb.tensor(arr, dtype=dtype)
    except Exception as e:
        # the runtime names its argument `data`; R's user passed `x` to as_tensor()
        if len(e.args) == 1 and isinstance(e.args[0], str) and "data: " in e.args[0]:
            e.args = (e.args[0].replace("data: ", "as_tensor: x: ", 1), *e.args[1:])
        raise
    return _tensor_text(t)


def to_array(t: Any) -> Any:
    """The tensor's values (by value: an R array)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"to_array: expected a tensor, got {type(t).__name__}")
    return t


def info(t: Tensor) -> Any:
    return wrap((list(t.shape), t.dtype.name, t.backend.name))


def _tensor_text(value: Any) -> Any:
    """A tensor result of the R door's hot path as the text "id dtype d1 d2 ..." (R's C layer
    makes the tb_tensor of it: one string is the cheapest value for reticulate to hand over);
    anything else as :func:`wrap` gives it."""
    if isinstance(value, Tensor):
        return " ".join([str(handles.register(value)), value.dtype.name, *map(str, value.shape)])
    return wrap(value)


def call_op(name: str, *args: Any, **kwargs: Any) -> Any:
    """``tensorbridge.<name>(*args, **kwargs)`` with tensors returned by handle."""
    fn = getattr(tb, name, None)
    if fn is None or not callable(fn):
        raise AttributeError(f"tensorbridge has no operation {name!r}")
    return wrap(fn(*(_no_na(a, name) for a in args), **kwargs))


def call_op_ids(name: str, a: Any, b: Any) -> Any:
    """``call_op`` for R's binary operators and ``%*%`` on tensors, the R door's hot path: a
    tensor operand comes as its handle id (an int), an R number as a float. R checked the
    operands (live tensors of this session, dims that need none of R's recycling rules) in C,
    so neither crosses as a tagged wire value that the "r" table would have to convert."""
    fn = getattr(tb, name, None)
    if fn is None or not callable(fn):
        raise AttributeError(f"tensorbridge has no operation {name!r}")
    resolve = handles.resolve
    return _tensor_text(
        fn(resolve(a) if type(a) is int else a, resolve(b) if type(b) is int else b)
    )


def call_method(t: Tensor, name: str, *args: Any, **kwargs: Any) -> Any:
    return wrap(getattr(t, name)(*args, **kwargs))


def _as_index(spec: Any) -> Any:
    """One axis of an R subscript (already 0-based): None (all), an int, a slice for a run of
    consecutive positions (a view, not a gather), or int positions."""
    if spec is None or isinstance(spec, int):
        return spec
    idx = np.asarray(spec, dtype=np.int64).reshape(-1)
    if idx.size and (idx.size == 1 or np.all(np.diff(idx) == 1)):
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


def r_subscript(x: Any, specs: Any, *, linear: bool, drop: bool, greta: bool) -> Any:
    """R's ``x[i]`` and ``x[i, j, ...]`` on a tensor or a lazy array, with 0-based positions
    from R (``subscripts()``/``index_positions()`` in r-client/R/tensor.R parse them once for
    both). ``linear``: ``x[i]`` on an array, column-major. ``drop``: remove every extent of
    one, as R does. ``greta``: greta arrays' rules — never drop, ``x[i]`` is a column, and a
    vector takes as many subscripts as a matrix has (missing trailing extents are one)."""
    if linear:
        flat = tb.reshape(tb.transpose(x), (-1,)) if x.ndim > 1 else tb.reshape(x, (-1,))
        i = _as_index(specs[0] if isinstance(specs, (list, tuple)) else specs)
        if isinstance(i, int):
            i = slice(i, i + 1)
        out = flat if i is None else (flat[i] if isinstance(i, slice) else tb.take(flat, i, 0))
        return tb.reshape(out, (-1, 1)) if greta else out
    specs = list(specs) if isinstance(specs, (list, tuple)) else [specs]
    out = x
    if greta and x.ndim < len(specs):
        out = tb.reshape(x, (*x.shape, *(1,) * (len(specs) - x.ndim)))
    if len(specs) != out.ndim:
        raise IndexError(f"[: {len(specs)} subscripts for an array with {out.ndim} dimensions")
    for axis, spec in enumerate(specs):
        i = _as_index(spec)
        if i is None:
            continue
        if isinstance(i, int):
            i = slice(i, i + 1)
        if isinstance(i, slice):
            out = out[(slice(None),) * axis + (i,)]
        else:
            out = tb.take(out, i, axis)
    if drop and not greta:
        shape = tuple(d for d in out.shape if d != 1)
        if shape != out.shape:
            out = tb.reshape(out, shape)
    return out


def index(x: Tensor, specs: Any, drop: bool = True, linear: bool = False) -> TensorRef:
    """R's ``x[i, j, ...]`` on a tensor (see :func:`r_subscript`)."""
    if not isinstance(x, Tensor):
        raise TypeError("index: expected a tensor")
    return tensor_ref(r_subscript(x, specs, linear=linear, drop=drop, greta=False))


# R's tensor finalizer calls this through a C function pointer (r-client/src/tensorbridge.c):
# queueing the release as RHost.release does, without a reticulate round trip per tensor.
@ctypes.CFUNCTYPE(None, ctypes.c_int)
def _release_from_r(hid: int) -> None:
    handles.release_deferred(hid, how="by an R finalizer")


# R's as_tensor() calls this through a C function pointer (tb_c_as_tensor in
# r-client/src/tensorbridge.c), without a reticulate round trip: the tensor's text goes into
# R's buffer `out` of `cap` bytes. Any failure returns 0 and R takes the general path (a
# reticulate call of as_tensor_r), which reports the error as R errors from Python are.
@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int)
def _as_tensor_from_r(view: bytes, out: int, cap: int) -> int:
    try:
        text = as_tensor_r(view.decode()).encode()
        if len(text) >= cap:
            handles.release(int(text.split()[0]))
            return 0
        ctypes.memmove(out, text + b"\0", len(text) + 1)
        return 1
    except BaseException:  # nothing may unwind into C; R's general path reports it
        return 0


def as_tensor_callback() -> float:
    """The address of the C-callable function for R's ``as_tensor()`` (``_as_tensor_from_r``)."""
    return float(ctypes.cast(_as_tensor_from_r, ctypes.c_void_p).value or 0)


def release_callback() -> float:
    """The address of the C-callable function that releases a tensor handle (deferred)."""
    return float(ctypes.cast(_release_from_r, ctypes.c_void_p).value or 0)


def _r_tensor_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An R function (a ForeignCallable) that receives tensors by handle and returns a tensor
    (a handle, which resolves to the Python tensor or tracer)."""

    def call(*args: Any) -> Any:
        return fn(*(wrap(a) for a in args))

    call.__name__ = getattr(fn, "__name__", "r_function")
    return call


def _argnums(argnums: Any) -> Any:
    if isinstance(argnums, (list, tuple, np.ndarray)):
        return tuple(int(a) for a in np.asarray(argnums).reshape(-1))
    return int(argnums)


def _float_args(args: tuple[Any, ...]) -> list[Any]:
    """Arguments from R: no NA, and R doubles of length one (Python floats) as float64
    tensors, as longer doubles are (a Python float alone would make a float32 tensor)."""
    return [tb.tensor(a, dtype="float64") if isinstance(a, float) else _no_na(a, "grad")
            for a in args]


def grad(fn: Callable[..., Any], argnums: Any, *args: Any) -> Any:
    g = tb.grad(_r_tensor_function(fn), argnums=_argnums(argnums))
    return wrap(g(*_float_args(args)))


def value_and_grad(fn: Callable[..., Any], argnums: Any, *args: Any) -> Any:
    vg = tb.value_and_grad(_r_tensor_function(fn), argnums=_argnums(argnums))
    value, g = vg(*_float_args(args))
    return wrap({"value": value, "grad": g})


def jacobian(fn: Callable[..., Any], argnums: Any, *args: Any) -> Any:
    j = tb.jacobian(_r_tensor_function(fn), argnums=_argnums(argnums))
    return wrap(j(*_float_args(args)))


def hessian(fn: Callable[..., Any], argnums: Any, *args: Any) -> Any:
    h = tb.hessian(_r_tensor_function(fn), argnums=_argnums(argnums))
    return wrap(h(*_float_args(args)))
