"""The Tensor: an immutable n-d array whose data is owned by a backend.

A tensor has a unique ``id``, a ``data_id`` naming the backend buffer it reads (several tensors may
share one buffer, e.g. after ``reshape`` on a backend that views), a ``shape``, a ``dtype`` and a
``backend``. Its lifetime follows Python's reference counting; ``dispose()`` (or ``tidy``) releases
the buffer early, TensorFlow.js style, and later use raises :class:`DisposedTensorError`.

This module is a leaf of the runtime: it imports only dtypes and errors. Backends create tensors
(``backends.base.make_tensor``), and the operators and op methods (``x + y``, ``x.sum()``) reach
the ops through a table that :mod:`tensorbridge.runtime.ops` installs when it is imported
(:func:`set_op_table`, as TF.js's ``setOpHandler``).
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

from .dtypes import DType
from .errors import DisposedTensorError

if TYPE_CHECKING:
    from .backends.base import Backend

__all__ = ["OP_TABLE_NAMES", "ConcreteTensor", "Tensor", "set_op_table"]

next_tensor_id = itertools.count(1).__next__

# The ops Tensor's operators and methods call, by name; ``to_backend(x, backend)`` backs ``to``.
OP_TABLE_NAMES = (
    "abs add cast divide equal exp expand_dims floor_divide getitem greater greater_equal less "
    "less_equal log logical_and logical_not logical_or matmul max mean min mod multiply negative "
    "not_equal power prod reshape squeeze subtract sum to_backend transpose"
).split()
_ops: Any = None  # the installed op table (an object with the OP_TABLE_NAMES attributes)


def set_op_table(table: Any) -> None:
    """Install the ops behind Tensor's operators and methods (``ops`` does this on import)."""
    global _ops
    missing = [n for n in OP_TABLE_NAMES if not hasattr(table, n)]
    if missing:
        raise TypeError(f"set_op_table: the table lacks {', '.join(missing)}")
    _ops = table


class _Disposed:
    """Placeholder left in ``Tensor._data`` after dispose; any use names the tensor."""

    __slots__ = ("tensor_id",)

    def __init__(self, tensor_id: int) -> None:
        self.tensor_id = tensor_id

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise DisposedTensorError(self.tensor_id)


class Tensor:
    """An n-dimensional array on a backend. Build one with :func:`tensorbridge.tensor`."""

    __slots__ = ("__weakref__", "_data", "backend", "data_id", "dtype", "id", "shape")

    id: int
    data_id: int
    shape: tuple[int, ...]
    dtype: DType
    backend: Backend

    # Python's `==` returns a tensor, so hashing must be by identity.
    __hash__ = object.__hash__
    # Make NumPy defer to our operators (ndarray * Tensor -> Tensor.__rmul__).
    __array_priority__ = 1000
    __array_ufunc__ = None

    # -- lifetime ---------------------------------------------------------------------------
    def dispose(self) -> None:
        """Release this tensor's buffer now. Safe to call twice."""
        data = self._data
        if data is None or data.__class__ is _Disposed:
            return
        self._data = _Disposed(self.id)
        self.backend._release(self.data_id)

    @property
    def is_disposed(self) -> bool:
        return self._data.__class__ is _Disposed

    def _raw(self) -> Any:
        """The backend buffer, for reading values (a tracer may note the read)."""
        data = self._data
        if data.__class__ is _Disposed:
            raise DisposedTensorError(self.id)
        return data

    def _raw_unchecked(self) -> Any:
        data = self._data
        if data.__class__ is _Disposed:
            raise DisposedTensorError(self.id)
        return data

    # -- basic properties -------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(self.shape[0]):
            yield self[i]

    # -- host access ------------------------------------------------------------------------
    def numpy(self) -> Any:
        """The values as a NumPy array (a copy unless the backend already holds NumPy)."""
        return self.backend.to_numpy(self._raw())

    def tolist(self) -> Any:
        """The values as nested Python lists (a scalar for 0-d); works without NumPy."""
        return self.backend.to_list(self._raw())

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError(
                f"item(): only a tensor with one element converts to a Python scalar; "
                f"this one has shape {self.shape}"
            )
        value = self.tolist()
        while isinstance(value, list):
            value = value[0]
        return value

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind != "i" or self.shape:
            raise TypeError(f"only a 0-d integer tensor can be used as an index, not {self}")
        return int(self.item())

    def __bool__(self) -> bool:
        return bool(self.item())

    def __repr__(self) -> str:
        if self._data.__class__ is _Disposed:
            return f"Tensor(id={self.id}, shape={self.shape}, dtype={self.dtype.name}, disposed)"
        body = _format_values(self)
        return (
            f"Tensor({body}, shape={self.shape}, dtype={self.dtype.name}, "
            f"backend={self.backend.name})"
        )

    # -- conversion -------------------------------------------------------------------------
    def to(self, backend: Any) -> Tensor:
        """An explicit copy of this tensor onto another backend ("numpy", "tensorflow"…)."""
        return _ops.to_backend(self, backend)

    def astype(self, dtype: Any) -> Tensor:
        return _ops.cast(self, dtype)

    cast = astype

    # -- operators (delegating to ops so tracers behave the same) ---------------------------
    def __add__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.subtract(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.subtract(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.multiply(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.multiply(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.divide(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.divide(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _ops.mod(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _ops.mod(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return _ops.power(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops.power(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops.negative(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _ops.abs(self)

    def __invert__(self) -> Tensor:
        return _ops.logical_not(self)

    def __and__(self, other: Any) -> Tensor:
        return _ops.logical_and(self, other)

    def __or__(self, other: Any) -> Tensor:
        return _ops.logical_or(self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.equal(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.not_equal(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _ops.less(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops.less_equal(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops.greater(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _ops.greater_equal(self, other)

    def __getitem__(self, index: Any) -> Tensor:
        return _ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(
            "tensors are immutable; use tensorbridge.index_update(x, index, value) "
            "(differentiable) to get a tensor with those elements replaced"
        )

    # -- method forms of common ops ---------------------------------------------------------
    @property
    def T(self) -> Tensor:
        return _ops.transpose(self)

    def reshape(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _ops.reshape(self, shape)

    def transpose(self, *perm: Any) -> Tensor:
        if len(perm) == 1 and isinstance(perm[0], (tuple, list)):
            perm = tuple(perm[0])
        return _ops.transpose(self, perm or None)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.sum(self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.mean(self, axis, keepdims)

    def prod(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.prod(self, axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.max(self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.min(self, axis, keepdims)

    def exp(self) -> Tensor:
        return _ops.exp(self)

    def log(self) -> Tensor:
        return _ops.log(self)

    def squeeze(self, axis: Any = None) -> Tensor:
        return _ops.squeeze(self, axis)

    def expand_dims(self, axis: int) -> Tensor:
        return _ops.expand_dims(self, axis)

    def flatten(self) -> Tensor:
        return _ops.reshape(self, (-1,))


def _format_values(t: Tensor) -> str:
    if t.size > 1000:
        return f"<{t.size} values>"
    try:
        import numpy as np

        return np.array2string(t.numpy(), separator=", ", threshold=50, precision=6,
                               prefix="Tensor(")
    except ImportError:
        return repr(t.tolist())


class ConcreteTensor(Tensor):
    """A tensor that owns a reference to a backend buffer (what ops return outside of
    differentiation). Tracers, the values seen inside ``grad``/``jvp``, share the Tensor API but
    own nothing, so only this class pays for a finalizer."""

    __slots__ = ()

    def __del__(self) -> None:
        data = self._data
        if data.__class__ is not _Disposed:
            try:
                self.backend._release(self.data_id)
            except Exception:  # interpreter shutdown: the backend may already be gone
                pass
