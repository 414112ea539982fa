"""Argument checks the op families share: scalars, axes, backends, floating dtypes."""

from __future__ import annotations

from typing import Any

from .. import dtypes as D
from ..dtypes import DType
from ..errors import BackendMismatchError
from ..tensor import Tensor

__all__ = ["check_same_backend", "floating", "is_scalar", "normalize_axes"]

_SCALARS = (bool, int, float)


def is_scalar(x: Any) -> bool:
    return isinstance(x, _SCALARS)


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
