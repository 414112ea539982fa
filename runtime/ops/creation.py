"""Making tensors: from data (lists, scalars, NumPy, any buffer) and from shapes."""

from __future__ import annotations

from typing import Any

from .. import dtypes as D
from ..backends import get_backend
from ..dtypes import DType, as_dtype
from ..tensor import Tensor
from .dispatch import creation_impl

__all__ = [
    "arange",
    "eye",
    "full",
    "full_like",
    "linspace",
    "ones",
    "ones_like",
    "tensor",
    "zeros",
    "zeros_like",
]

_BUFFER_FORMATS = {
    "?": D.bool_,
    "i": D.int32,
    "l": None,  # platform long: resolved by itemsize
    "q": D.int64,
    "f": D.float32,
    "d": D.float64,
}
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
    if isinstance(data, Tensor):
        out = data
        if backend is not None and get_backend(backend) is not data.backend:
            out = data.to(backend)
        return out.astype(dt) if dt is not None and dt is not out.dtype else out
    be = get_backend(backend)
    np = _numpy_or_none()
    if np is not None and isinstance(data, np.ndarray | np.generic):
        arr = np.asarray(data)
        if dt is not None and dt.kind == "i" and arr.size and arr.dtype.kind in "fiu":
            _check_fits([arr.min(), arr.max()], dt)
        return be.from_host(arr, dt or _numpy_dtype(data), copy=copy)
    if isinstance(data, bool | int | float):
        dt = dt or _infer_scalar_dtype(data)
        _check_fits([data], dt)
        return be.from_host(_host_array(data, dt, ()), dt, copy=False)
    if isinstance(data, list | tuple):
        shape, flat = _flatten_nested(data)
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


def _numpy_or_none() -> Any:
    try:
        import numpy

        return numpy
    except ImportError:  # pragma: no cover - Pyodide without NumPy
        return None


def _numpy_dtype(arr: Any) -> DType:
    from ..backends.numpy_backend import numpy_dtype_to_runtime

    return numpy_dtype_to_runtime(arr.dtype)


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


def _flatten_nested(data: Any) -> tuple[tuple[int, ...], list[Any]]:
    """Shape and row-major flat values of nested lists; rejects ragged input."""
    flat: list[Any] = []
    leaf_depth: list[int] = []  # the depth of the first scalar: every scalar must be there

    def walk(x: Any, depth: int, shape: list[int]) -> None:
        if isinstance(x, list | tuple):
            if leaf_depth and depth >= leaf_depth[0]:
                raise ValueError(
                    f"data: ragged nested sequence: a sequence at depth {depth} where numbers "
                    f"were found before"
                )
            if depth == len(shape):
                shape.append(len(x))
            elif shape[depth] != len(x) or depth > len(shape):
                raise ValueError(
                    f"data: ragged nested sequence: found length {len(x)} at depth {depth} "
                    f"where {shape[depth]} was expected"
                )
            for item in x:
                walk(item, depth + 1, shape)
        else:
            if depth != len(shape):
                raise ValueError(f"data: ragged nested sequence: scalar {x!r} at depth {depth}")
            if not leaf_depth:
                leaf_depth.append(depth)
            if isinstance(x, Tensor):
                x = x.item()
            flat.append(x)

    shape: list[int] = []
    walk(data, 0, shape)
    return tuple(shape), flat


def _host_array(flat: Any, dtype: DType, shape: tuple[int, ...]) -> Any:
    """Host data in the form backends take: a NumPy array, or ``HostList`` without NumPy."""
    np = _numpy_or_none()
    if np is not None:
        from ..backends.numpy_backend import TO_NUMPY

        arr = np.asarray(flat, dtype=TO_NUMPY[dtype])
        return arr.reshape(shape)
    return HostList(flat if isinstance(flat, list) else [flat], shape, dtype)


class HostList:
    """Row-major values plus shape: how data travels where NumPy is absent."""

    __slots__ = ("dtype", "shape", "values")

    def __init__(self, values: list[Any], shape: tuple[int, ...], dtype: DType) -> None:
        self.values = values
        self.shape = shape
        self.dtype = dtype


def _from_buffer(be: Any, view: memoryview, dt: DType | None, copy: bool) -> Tensor:
    fmt = view.format.lstrip("@=<")
    src = _BUFFER_FORMATS.get(fmt)
    if fmt in ("l",):
        src = D.int64 if view.itemsize == 8 else D.int32
    if src is None:
        raise TypeError(f"data: buffer format {view.format!r} is not supported")
    np = _numpy_or_none()
    if np is not None:
        from ..backends.numpy_backend import TO_NUMPY

        arr = np.frombuffer(view, dtype=TO_NUMPY[src]).reshape(view.shape)
        return be.from_host(arr, dt or src, copy=copy or not view.readonly)
    values = view.cast(fmt).tolist() if view.ndim <= 1 else view.tolist()
    shape = tuple(view.shape or ())
    if view.ndim > 1:
        shape, values = _flatten_nested(values)
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
    from .dispatch import as_tensor

    x = as_tensor(x, "x")
    return full(x.shape, 0, dtype or x.dtype, x.backend)


def ones_like(x: Any, dtype: Any = None) -> Tensor:
    from .dispatch import as_tensor

    x = as_tensor(x, "x")
    return full(x.shape, 1, dtype or x.dtype, x.backend)


def full_like(x: Any, value: Any, dtype: Any = None) -> Tensor:
    from .dispatch import as_tensor

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

