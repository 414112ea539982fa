"""Indexing: NumPy-style basic and integer-array indexing with gradients, functional updates
(``index_update``/``index_add``, the differentiable answer to ``x[i] = v``), ``take``, ``one_hot``.

An index is normalised once into an :class:`IndexPlan`; backends that lack general indexing use
its flat positions (gather from and scatter into the flattened tensor).
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as D
from ..autodiff.core import Primitive, bind, primal_value
from ..errors import ShapeError
from ..tensor import Tensor
from .dispatch import as_tensor, unary_impl

__all__ = ["IndexPlan", "getitem", "index_add", "index_update", "one_hot", "take"]


class IndexPlan:
    """A validated index for tensors of one shape."""

    __slots__ = ("_flat", "has_arrays", "in_shape", "numpy_index", "out_shape")

    def __init__(self, index: Any, shape: tuple[int, ...]) -> None:
        import numpy as np

        if not isinstance(index, tuple):
            index = (index,)
        items: list[Any] = []
        has_arrays = False
        for k in index:
            if isinstance(k, Tensor):
                k = primal_value(k).numpy()
            if isinstance(k, list):
                k = np.asarray(k)
            if isinstance(k, np.ndarray):
                if k.dtype == np.bool_:
                    has_arrays = True
                elif k.dtype.kind in "iu":
                    has_arrays = True
                    k = k.astype(np.int64, copy=False)
                else:
                    raise TypeError(
                        f"index: arrays used as indices must be integer or bool, got {k.dtype}"
                    )
            elif not (k is None or k is Ellipsis or isinstance(k, slice | int | np.integer)):
                raise TypeError(
                    f"index: unsupported index element {k!r}; expected int, slice, None, "
                    f"Ellipsis, or an integer/bool array"
                )
            items.append(k)
        self.numpy_index = tuple(items)
        self.has_arrays = has_arrays
        self.in_shape = shape
        self._flat = None
        probe = np.broadcast_to(np.zeros((), dtype=np.int8), shape)
        try:
            self.out_shape = probe[self.numpy_index].shape
        except IndexError as e:
            raise IndexError(f"index: {e} (tensor shape {list(shape)})") from None

    def flat_positions(self) -> Any:
        """Int64 array of ``out_shape``: positions in the row-major flattened input."""
        if self._flat is None:
            import numpy as np

            size = 1
            for d in self.in_shape:
                size *= d
            self._flat = np.arange(size, dtype=np.int64).reshape(self.in_shape)[
                self.numpy_index
            ]
        return self._flat

    def is_unique(self) -> bool:
        import numpy as np

        flat = self.flat_positions().ravel()
        return np.unique(flat).size == flat.size


_getitem = Primitive("getitem", unary_impl("gather_flat"))
_scatter = Primitive("scatter_add", unary_impl("scatter_add_flat"))
_getitem.defvjp(lambda g, ans, x, *, index: bind(_scatter, (g,), {"index": index,
                                                                 "shape": x.shape}))
_getitem.defjvp(lambda t, ans, x, *, index: bind(_getitem, (t,), {"index": index}))
_scatter.defvjp(lambda g, ans, u, *, index, shape: bind(_getitem, (g,), {"index": index}))
_scatter.defjvp(lambda t, ans, u, *, index, shape: bind(_scatter, (t,), {"index": index,
                                                                        "shape": shape}))


def getitem(x: Any, index: Any) -> Tensor:
    """``x[index]`` with NumPy semantics (basic slicing and integer/bool array indexing)."""
    x = as_tensor(x, "x")
    plan = index if isinstance(index, IndexPlan) else IndexPlan(index, x.shape)
    return bind(_getitem, (x,), {"index": plan})


def _scatter_into(x: Tensor, plan: IndexPlan, values: Any) -> Tensor:
    from .elementwise import cast
    from .shape import broadcast_to

    v = as_tensor(values, "values", like=x)
    if v.dtype is not x.dtype:
        v = cast(v, x.dtype)
    try:
        v = broadcast_to(v, plan.out_shape)
    except ShapeError:
        raise ShapeError(
            f"values: shape {list(v.shape)} cannot be broadcast to the indexed region's shape "
            f"{list(plan.out_shape)}"
        ) from None
    return bind(_scatter, (v,), {"index": plan, "shape": x.shape})


def index_add(x: Any, index: Any, values: Any) -> Tensor:
    """A copy of ``x`` with ``values`` added at ``index`` (repeated indices accumulate)."""
    x = as_tensor(x, "x")
    plan = IndexPlan(index, x.shape)
    return x + _scatter_into(x, plan, values)


def index_update(x: Any, index: Any, values: Any) -> Tensor:
    """A copy of ``x`` with ``x[index]`` replaced by ``values`` (differentiable in both)."""
    from .arithmetic import where
    from .creation import ones

    x = as_tensor(x, "x")
    plan = IndexPlan(index, x.shape)
    if plan.has_arrays and not plan.is_unique():
        raise ValueError(
            "index: index_update needs each position at most once; use index_add to accumulate"
        )
    hit = bind(_scatter, (ones(plan.out_shape, "int32", x.backend),),
               {"index": plan, "shape": x.shape}) > 0
    return where(hit, _scatter_into(x, plan, values), x)


def take(x: Any, indices: Any, axis: int = 0) -> Tensor:
    """Elements of ``x`` at integer ``indices`` along ``axis``."""
    x = as_tensor(x, "x")
    axis %= max(x.ndim, 1)
    return getitem(x, (slice(None),) * axis + (indices,))


_one_hot = Primitive("one_hot", unary_impl("one_hot"))


def one_hot(indices: Any, depth: int, dtype: Any = "float32") -> Tensor:
    """A new last axis of length ``depth`` with 1 at each index (out-of-range rows are 0)."""
    indices = as_tensor(indices, "indices")
    if indices.dtype.kind != "i":
        raise TypeError(f"indices: one_hot needs integer indices, got dtype {indices.dtype}")
    if int(depth) < 0:
        raise ValueError(f"depth: must be >= 0, got {depth}")
    return bind(_one_hot, (indices,), {"depth": int(depth), "dtype": D.as_dtype(dtype)})
