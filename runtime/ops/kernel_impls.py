"""Primitive implementations that call a backend kernel.

Public op functions (``add``, ``exp``…) validate and promote their arguments, then ``bind`` a
primitive. The implementations built here look the kernel up on the tensor's backend, call it on
raw buffers and wrap the result.
"""

from __future__ import annotations

from typing import Any

from ..backends import get_backend
from ..errors import DisposedTensorError, MissingKernelError
from ..tensor import Tensor, _Disposed

__all__ = ["binary_impl", "creation_impl", "kernel_impl", "unary_impl"]


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
