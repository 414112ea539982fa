"""Making tensors: from data (lists, scalars, NumPy, any buffer) and from shapes."""

from __future__ import annotations

import sys
from typing import Any

from .. import dtypes as D
from ..backends import get_backend
from ..dtypes import DType, as_dtype
from ..host_arrays import HostList, dtype_from_numpy, flatten_nested, numpy_dtypes, numpy_or_none
from ..tensor import Tensor
from .kernel_impls import creation_impl

__all__ = [
    "arange",
    "as_tensor",
    "eye",
    "full",
    "full_like",
    "linspace",
    "ones",
    "ones_like",
    "tensor",
    "to_backend",
    "zeros",
    "zeros_like",
]

_INT32_MAX = 2**31 - 1


def tensor(data: Any, dtype: Any = None, backend: Any = None, copy: bool = True) -> Tensor:
    """Make a tensor from data.

    ``data``: a Tensor, nested lists/tuples of numbers or bools, a Python scalar, a NumPy array,
    or any object with the buffer protocol (``array.array``, ``memoryview``…). Without ``dtype``:
    Python floats give float32, ints int32 (int64 when a value does not fit), bools bool; NumPy
    arrays and buffers keep their dtype. Memory the caller can write through is copied; a
    read-only buffer is used without a copy (pass ``copy=False`` to always share).
    """
    dt = as_dtype(dtype) if dtype is not None else None
    # A NumPy array of a runtime dtype, kept as it is: the common case (the R door's as_tensor
    # among others) skips the general path's probing, range checks and repeated dtype lookups.
    # numpy from sys.modules: an ndarray means NumPy is loaded, and nothing is imported here.
    np = sys.modules.get("numpy")
    if np is not None and type(data) is np.ndarray:
        src = numpy_dtypes()[1].get(data.dtype)
        if src is not None and (dt is None or dt is src):
            return get_backend(backend).from_host(data, src, copy=copy)
    if isinstance(data, Tensor):
        out = data
        if backend is not None and get_backend(backend) is not data.backend:
            out = data.to(backend)
        return out.astype(dt) if dt is not None and dt is not out.dtype else out
    be = get_backend(backend)
    np = numpy_or_none()
    if np is not None and isinstance(data, np.ndarray | np.generic):
        arr = np.asarray(data)
        if (dt is not None and dt.kind == "i" and arr.size and arr.dtype.kind in "fiu"
                and not np.can_cast(arr.dtype, numpy_dtypes()[0][dt])):  # else all fit
            _check_fits([arr.min(), arr.max()], dt)
        return be.from_host(arr, dt or dtype_from_numpy(data.dtype), copy=copy)
    if isinstance(data, bool | int | float):
        dt = dt or _infer_scalar_dtype(data)
        _check_fits([data], dt)
        return be.from_host(_host_array(data, dt, ()), dt, copy=False)
    if isinstance(data, list | tuple):
        shape, flat = flatten_nested(data, _scalar_value)
        dt = dt or _infer_list_dtype(flat)
        _check_fits(flat, dt)
        return be.from_host(_host_array(flat, dt, shape), dt, copy=False)
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(
            f"data: cannot make a tensor from {type(data).__name__}; expected nested lists of "
            f"numbers, a scalar, a NumPy array or a buffer"
        ) from None
    return _from_buffer(be, view, dt, copy)


def as_tensor(x: Any, argname: str, like: Tensor | None = None, dtype: DType | None = None) -> Any:
    """A Tensor (or tracer) for ``x``; data that is not a tensor goes to ``like``'s backend."""
    if isinstance(x, Tensor):
        return x
    backend = like.backend if like is not None else None
    try:
        return tensor(x, dtype=dtype, backend=backend)
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"{argname}: expected a tensor or array-like, got {type(x).__name__}: {e}"
        ) from e


def to_backend(x: Tensor, backend: Any) -> Tensor:
    """An explicit copy of ``x`` onto another backend (``Tensor.to``)."""
    target = get_backend(backend)
    if target is x.backend:
        return x
    return target.from_host(x.backend.to_host(x._raw()), x.dtype)


def _check_fits(values: Any, dt: DType) -> None:
    """An integer dtype takes values in its range only: never a wrapped number."""
    if dt.kind != "i":
        return
    lo, hi = D.INT_RANGE[dt.name]
    for v in values:
        if isinstance(v, bool):
            continue
        try:
            fits = lo <= v <= hi and v == v  # NaN is not an integer
        except TypeError:
            continue  # not a number: the conversion below names it
        if not fits or (isinstance(v, float) and v in (float("inf"), float("-inf"))):
            raise OverflowError(f"data: {v!r} does not fit in {dt.name} [{lo}, {hi}]; use "
                                f"{'int64 or ' if dt.name == 'int32' else ''}float64")


def _infer_scalar_dtype(x: Any) -> DType:
    if isinstance(x, bool):
        return D.bool_
    if isinstance(x, int):
        return D.int32 if -_INT32_MAX - 1 <= x <= _INT32_MAX else D.int64
    return D.float32


def _infer_list_dtype(flat: list[Any]) -> DType:
    kind = D.bool_
    for v in flat:
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            big = not -_INT32_MAX - 1 <= v <= _INT32_MAX
            if kind.kind != "f":
                kind = D.promote(kind, D.int64 if big else D.int32)
        elif isinstance(v, float):
            kind = D.float32 if kind.kind != "f" else kind
        else:
            raise TypeError(f"data: element {v!r} of type {type(v).__name__} is not a number")
    return kind if flat else D.float32


def _scalar_value(x: Any) -> Any:
    """A scalar of nested data: a (0-d) tensor stands for its value."""
    return x.item() if isinstance(x, Tensor) else x


def _host_array(flat: Any, dtype: DType, shape: tuple[int, ...]) -> Any:
    """Host data in the form backends take: a NumPy array, or ``HostList`` without NumPy."""
    np = numpy_or_none()
    if np is not None:
        return np.asarray(flat, dtype=numpy_dtypes()[0][dtype]).reshape(shape)
    return HostList(flat if isinstance(flat, list) else [flat], shape, dtype)


def _from_buffer(be: Any, view: memoryview, dt: DType | None, copy: bool) -> Tensor:
    src = D.from_buffer_format(view.format, view.itemsize)
    if src is None:
        raise TypeError(f"data: buffer format {view.format!r} is not supported")
    np = numpy_or_none()
    if np is not None:
        arr = np.frombuffer(view, dtype=numpy_dtypes()[0][src]).reshape(view.shape)
        return be.from_host(arr, dt or src, copy=copy or not view.readonly)
    fmt = view.format.lstrip("@=<")
    values = view.cast(fmt).tolist() if view.ndim <= 1 else view.tolist()
    shape = tuple(view.shape or ())
    if view.ndim > 1:
        shape, values = flatten_nested(values)
    return be.from_host(HostList(values, shape, dt or src), dt or src, copy=False)


# -- from shapes --------------------------------------------------------------------------------
def _shape(shape: Any, op: str) -> tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    try:
        out = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"{op}: shape must be an int or a sequence of ints, got {shape!r}"
        ) from None
    if any(d < 0 for d in out):
        raise ValueError(f"{op}: shape {out} has a negative dimension")
    return out


def full(shape: Any, value: Any, dtype: Any = None, backend: Any = None) -> Tensor:
    dt = as_dtype(dtype) if dtype is not None else _infer_scalar_dtype(value)
    return creation_impl(backend, "fill", shape=_shape(shape, "full"), value=value, dtype=dt)


def zeros(shape: Any, dtype: Any = "float32", backend: Any = None) -> Tensor:
    return full(shape, 0, dtype, backend)


def ones(shape: Any, dtype: Any = "float32", backend: Any = None) -> Tensor:
    return full(shape, 1, dtype, backend)


def zeros_like(x: Any, dtype: Any = None) -> Tensor:
    x = as_tensor(x, "x")
    return full(x.shape, 0, dtype or x.dtype, x.backend)


def ones_like(x: Any, dtype: Any = None) -> Tensor:
    x = as_tensor(x, "x")
    return full(x.shape, 1, dtype or x.dtype, x.backend)


def full_like(x: Any, value: Any, dtype: Any = None) -> Tensor:
    x = as_tensor(x, "x")
    return full(x.shape, value, dtype or x.dtype, x.backend)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None,
           backend: Any = None) -> Tensor:
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is None:
        dtype = D.float32 if any(isinstance(v, float) for v in (start, stop, step)) else D.int32
    return creation_impl(backend, "arange", start=start, stop=stop, step=step,
                         dtype=as_dtype(dtype))


def linspace(start: float, stop: float, num: int = 50, dtype: Any = "float32",
             backend: Any = None) -> Tensor:
    if int(num) < 0:
        raise ValueError(f"linspace: num must be >= 0, got {num}")
    return creation_impl(backend, "linspace", start=start, stop=stop, num=int(num),
                         dtype=as_dtype(dtype))


def eye(n: int, m: int | None = None, dtype: Any = "float32", backend: Any = None) -> Tensor:
    return creation_impl(backend, "eye", n=int(n), m=int(n if m is None else m),
                         dtype=as_dtype(dtype))

