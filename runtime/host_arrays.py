"""Host arrays: the values that travel between Python and a backend, with or without NumPy.

The lowest layer of the runtime next to :mod:`dtypes`: backends take host data in one of two
forms, a NumPy array or (where NumPy is absent, e.g. Pyodide without it) a :class:`HostList`.
NumPy is an optional dependency, so it is probed when needed rather than imported here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dtypes import DTYPES, DType

__all__ = ["HostList", "dtype_from_numpy", "flatten_nested", "numpy_dtypes", "numpy_or_none"]


class HostList:
    """Row-major values plus shape and dtype: how data travels where NumPy is absent."""

    __slots__ = ("dtype", "shape", "values")

    def __init__(self, values: list[Any], shape: tuple[int, ...], dtype: DType) -> None:
        self.values = values
        self.shape = shape
        self.dtype = dtype


def numpy_or_none() -> Any:
    """The NumPy module, or None where it cannot be imported."""
    try:
        import numpy

        return numpy
    except ImportError:  # Pyodide without NumPy
        return None


_NUMPY_TABLES: tuple[dict[DType, Any], dict[Any, DType]] | None = None


def numpy_dtypes() -> tuple[dict[DType, Any], dict[Any, DType]]:
    """``(runtime dtype -> NumPy dtype, NumPy dtype -> runtime dtype)``; needs NumPy."""
    global _NUMPY_TABLES
    if _NUMPY_TABLES is None:
        import numpy as np

        to_numpy = {d: np.dtype(d.buffer_format) for d in DTYPES.values()}
        _NUMPY_TABLES = (to_numpy, {v: k for k, v in to_numpy.items()})
    return _NUMPY_TABLES


def dtype_from_numpy(npdtype: Any, argname: str = "data") -> DType:
    """The runtime dtype of a NumPy dtype; an error naming ``argname`` for the unsupported."""
    import numpy as np

    found = numpy_dtypes()[1].get(np.dtype(npdtype))
    if found is None:
        raise TypeError(
            f"{argname}: NumPy dtype {np.dtype(npdtype).name} is not supported; expected one of "
            f"{', '.join(DTYPES)} (pass dtype=... to convert)"
        )
    return found


def flatten_nested(data: Any, leaf: Callable[[Any], Any] | None = None,
                   ) -> tuple[tuple[int, ...], list[Any]]:
    """Shape and row-major flat values of nested lists/tuples; rejects ragged input.
    ``leaf`` converts each scalar (a 0-d tensor to its value, say)."""
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
            flat.append(x if leaf is None else leaf(x))

    shape: list[int] = []
    walk(data, 0, shape)
    return tuple(shape), flat
