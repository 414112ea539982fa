"""From a public op call to a kernel call: argument checks, dtype promotion, kernel lookup.

Public op functions (``add``, ``exp``…) validate and promote their arguments, then ``bind`` a
primitive. The primitive's implementation, built here, looks the kernel up on the tensor's
backend, calls it on raw buffers and wraps the result.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as D
from ..backends import get_backend
from ..dtypes import DType
from ..errors import BackendMismatchError, DisposedTensorError, MissingKernelError
from ..tensor import Tensor, _Disposed

__all__ = [
    "as_tensor",
    "binary_impl",
    "check_same_backend",
    "is_scalar",
    "kernel_impl",
    "normalize_axes",
    "unary_impl",
]

_SCALARS = (bool, int, float)


def is_scalar(x: Any) -> bool:
    return isinstance(x, _SCALARS)


def _lookup(backend: Any, name: str) -> Any:
    try:
        return backend.kernels[name]
    except KeyError:
        raise MissingKernelError(backend.name, name) from None


def unary_impl(kernel: str):
    """Implementation of a one-tensor primitive (params pass through to the kernel)."""

    def impl(x: Tensor, **params: Any) -> Tensor:
        data = x._data
        if data.__class__ is _Disposed:
            raise DisposedTensorError(x.id)
        be = x.backend
        try:
            k = be.kernels[kernel]
        except KeyError:
            raise MissingKernelError(be.name, kernel) from None
        return be.wrap(k(data, **params))

    impl.__name__ = f"{kernel}_impl"
    impl.kernel_name = kernel  # type: ignore[attr-defined]  (read by staging)
    impl.kernel_kind = "unary"  # type: ignore[attr-defined]
    return impl


def binary_impl(kernel: str):
    """Implementation of a two-argument primitive; one side may be a Python scalar."""

    def impl(x: Any, y: Any) -> Tensor:
        if isinstance(x, Tensor):
            be = x.backend
            xd = x._data
            if xd.__class__ is _Disposed:
                raise DisposedTensorError(x.id)
            if isinstance(y, Tensor):
                yd = y._data
                if yd.__class__ is _Disposed:
                    raise DisposedTensorError(y.id)
            else:
                yd = be.scalar(y, x.dtype)
        else:
            be = y.backend
            yd = y._data
            if yd.__class__ is _Disposed:
                raise DisposedTensorError(y.id)
            xd = be.scalar(x, y.dtype)
        try:
            k = be.kernels[kernel]
        except KeyError:
            raise MissingKernelError(be.name, kernel) from None
        return be.wrap(k(xd, yd))

    impl.__name__ = f"{kernel}_impl"
    impl.kernel_name = kernel  # type: ignore[attr-defined]
    impl.kernel_kind = "binary"  # type: ignore[attr-defined]
    return impl


def kernel_impl(kernel: str):
    """Implementation of a primitive with any number of tensor arguments."""

    def impl(*args: Any, **params: Any) -> Tensor:
        be = None
        raw = []
        for a in args:
            if isinstance(a, Tensor):
                be = a.backend if be is None else be
                raw.append(a._raw_unchecked())
            else:
                raw.append(a)
        if be is None:
            raise TypeError(f"{kernel}: needs at least one tensor argument")
        return be.wrap(_lookup(be, kernel)(*raw, **params))

    impl.__name__ = f"{kernel}_impl"
    impl.kernel_name = kernel  # type: ignore[attr-defined]
    impl.kernel_kind = "nary"  # type: ignore[attr-defined]
    return impl


def creation_impl(backend: Any, kernel: str, **params: Any) -> Tensor:
    be = get_backend(backend)
    return be.wrap(_lookup(be, kernel)(**params))


def as_tensor(x: Any, argname: str, like: Tensor | None = None, dtype: DType | None = None) -> Any:
    """A Tensor (or tracer) for ``x``; data that is not a tensor goes to ``like``'s backend."""
    if isinstance(x, Tensor):
        return x
    from .creation import tensor

    backend = like.backend if like is not None else None
    try:
        return tensor(x, dtype=dtype, backend=backend)
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"{argname}: expected a tensor or array-like, got {type(x).__name__}: {e}"
        ) from e


def check_same_backend(op: str, *tensors: Tensor) -> None:
    first = tensors[0].backend
    for t in tensors[1:]:
        if t.backend is not first:
            raise BackendMismatchError(
                f"{op}: tensors live on different backends ('{first.name}' and "
                f"'{t.backend.name}'); move one explicitly with .to('{first.name}')"
            )


def normalize_axes(axis: Any, ndim: int, op: str) -> tuple[int, ...]:
    """``None`` -> all axes; ints and negative ints -> sorted non-negative tuple."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) or hasattr(axis, "__index__") else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in {axis!r}")
    return tuple(sorted(out))


def floating(dtype: DType) -> DType:
    return dtype if dtype.kind == "f" else D.float32
