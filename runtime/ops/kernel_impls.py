"""Primitives whose implementation is one backend kernel call.

Public op functions (``add``, ``exp``…) validate and promote their arguments, then ``bind`` a
primitive. The primitives made here carry their kernel's name and kind (``Primitive.kernel``,
``Primitive.kind``: what staging records), and their implementation looks the kernel up on the
tensor's backend, calls it on raw buffers and wraps the result.
"""

from __future__ import annotations

from typing import Any

from ..autodiff.core import Primitive
from ..backends import get_backend
from ..errors import DisposedTensorError, MissingKernelError
from ..tensor import Tensor, _Disposed

__all__ = ["binary_primitive", "creation_impl", "nary_primitive", "unary_primitive"]


def _lookup(backend: Any, name: str) -> Any:
    try:
        return backend.kernels[name]
    except KeyError:
        raise MissingKernelError(backend.name, name) from None


def unary_primitive(name: str, kernel: str | None = None,
                    cls: type[Primitive] = Primitive) -> Primitive:
    """A primitive (of class ``cls``) of one tensor; params pass through to the kernel (by
    default the one called ``name``)."""
    kernel = kernel or name

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

    return cls(name, impl, kernel=kernel, kind="unary")


def binary_primitive(name: str, kernel: str | None = None,
                     cls: type[Primitive] = Primitive) -> Primitive:
    """A primitive of two operands, one of which may be a Python scalar."""
    kernel = kernel or name

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

    return cls(name, impl, kernel=kernel, kind="binary")


def nary_primitive(name: str, kernel: str | None = None,
                   cls: type[Primitive] = Primitive) -> Primitive:
    """A primitive of any number of tensor arguments (other arguments pass through)."""
    kernel = kernel or name

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

    return cls(name, impl, kernel=kernel, kind="nary")


def creation_impl(backend: Any, kernel: str, **params: Any) -> Tensor:
    be = get_backend(backend)
    return be.wrap(_lookup(be, kernel)(**params))
