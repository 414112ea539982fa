"""Indexing: NumPy-style basic and integer-array indexing with gradients, functional updates
(``index_update``/``index_add``, the differentiable answer to ``x[i] = v``), ``take``, ``one_hot``.

An index is normalised once into an :class:`IndexPlan`; backends that lack general indexing use
its flat positions (gather from and scatter into the flattened tensor).
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as D
from ..autodiff.core import bind, primal_value
from ..errors import ShapeError
from ..host_arrays import flatten_nested
from ..tensor import Tensor
from .arithmetic import where
from .creation import as_tensor, ones
from .elementwise import cast
from .kernel_impls import unary_primitive
from .shape import broadcast_to

__all__ = ["IndexArray", "IndexPlan", "getitem", "index_add", "index_update", "one_hot", "take"]


class IndexPlan:
    """A validated index for tensors of one shape.

    With NumPy (the normal case) the index is normalised with NumPy and ``flat_positions()`` is an
    int64 array of ``out_shape``. Without NumPy (Pyodide running the ``tfjs`` backend) the same
    NumPy semantics are computed in pure Python (:func:`_pure_plan`): index arrays become
    :class:`IndexArray` (flat values + shape) and ``flat_positions()`` is a flat row-major list.
    """

    __slots__ = ("_flat", "_pure", "backend_cache", "has_arrays", "in_shape", "numpy_index",
                 "out_shape")

    def __init__(self, index: Any, shape: tuple[int, ...]) -> None:
        if not isinstance(index, tuple):
            index = (index,)
        self.in_shape = shape
        self._flat = None
        self._pure = False
        # backends may keep data derived from the plan here (e.g. positions on the device)
        self.backend_cache: dict[str, Any] | None = None
        try:
            import numpy as np
        except ImportError:  # Pyodide without NumPy: the same semantics in pure Python
            self._init_pure(index, shape)
            return
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
        probe = np.broadcast_to(np.zeros((), dtype=np.int8), shape)
        try:
            self.out_shape = probe[self.numpy_index].shape
        except IndexError as e:
            raise IndexError(f"index: {e} (tensor shape {list(shape)})") from None

    def _init_pure(self, index: tuple[Any, ...], shape: tuple[int, ...]) -> None:
        self._pure = True
        items: list[Any] = []
        has_arrays = False
        for k in index:
            if isinstance(k, Tensor):
                k = _index_array_from_tensor(primal_value(k))
            elif isinstance(k, list | tuple):
                k = IndexArray.from_nested(k)
            if isinstance(k, IndexArray):
                has_arrays = True
            elif isinstance(k, bool):
                raise TypeError("index: a bool scalar index (x[True]) needs NumPy")
            elif not (k is None or k is Ellipsis or isinstance(k, slice | int)):
                if hasattr(k, "__index__"):
                    k = k.__index__()
                else:
                    raise TypeError(
                        f"index: unsupported index element {k!r}; expected int, slice, None, "
                        f"Ellipsis, or an integer/bool array"
                    )
            items.append(k)
        self.numpy_index = tuple(items)
        self.has_arrays = has_arrays
        try:
            self.out_shape, self._flat = _pure_plan(self.numpy_index, shape, want_positions=False)
        except IndexError as e:
            raise IndexError(f"index: {e} (tensor shape {list(shape)})") from None

    def flat_positions(self) -> Any:
        """Positions in the row-major flattened input: an int64 NumPy array of ``out_shape``,
        or, without NumPy, a flat row-major list of ints."""
        if self._flat is None:
            if self._pure:
                self._flat = _pure_plan(self.numpy_index, self.in_shape)[1]
                return self._flat
            import numpy as np

            size = 1
            for d in self.in_shape:
                size *= d
            self._flat = np.arange(size, dtype=np.int64).reshape(self.in_shape)[
                self.numpy_index
            ]
        return self._flat

    def is_unique(self) -> bool:
        flat = self.flat_positions()
        if isinstance(flat, list):
            return len(set(flat)) == len(flat)
        import numpy as np

        flat = flat.ravel()
        return np.unique(flat).size == flat.size


class IndexArray:
    """An integer or bool index array without NumPy: row-major ``values`` and ``shape``."""

    __slots__ = ("is_bool", "shape", "values")

    def __init__(self, values: list[int], shape: tuple[int, ...], is_bool: bool) -> None:
        self.values = values
        self.shape = shape
        self.is_bool = is_bool

    @classmethod
    def from_nested(cls, data: Any) -> IndexArray:
        shape, flat = flatten_nested(data)
        if flat and all(isinstance(v, bool) for v in flat):
            return cls([int(v) for v in flat], shape, True)
        for v in flat:
            if not isinstance(v, int):
                raise TypeError(
                    f"index: arrays used as indices must be integer or bool, got element {v!r}"
                )
        return cls([int(v) for v in flat], shape, False)

    def __repr__(self) -> str:
        return f"IndexArray(shape={self.shape}, {'bool' if self.is_bool else 'int'})"


def _index_array_from_tensor(t: Tensor) -> Any:
    kind = t.dtype.kind
    if kind == "f":
        raise TypeError(f"index: arrays used as indices must be integer or bool, got {t.dtype}")
    if not t.shape:
        return bool(t.item()) if kind == "b" else int(t.item())
    shape, flat = flatten_nested(t.tolist())
    return IndexArray([int(v) for v in flat], shape, kind == "b")


def _bcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    nd = max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        for i, d in enumerate(s, start=nd - len(s)):
            if d == 1:
                continue
            if out[i] == 1:
                out[i] = d
            elif out[i] != d:
                raise IndexError(
                    "shape mismatch: indexing arrays could not be broadcast together with shapes "
                    + " ".join(str(tuple(x)) for x in shapes)
                )
    return tuple(out)


def _broadcast_values(values: list[int], shape: tuple[int, ...],
                      to: tuple[int, ...]) -> list[int]:
    """Row-major values of an array of ``shape`` broadcast to ``to``."""
    if shape == to:
        return values
    shape = (1,) * (len(to) - len(shape)) + tuple(shape)
    out = values
    # expand one axis at a time, from the last
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    pos = [0]
    for axis, (d, t) in enumerate(zip(shape, to)):
        step = strides[axis] if d != 1 else 0
        pos = [p + step * j for p in pos for j in range(t)]
    return [out[p] for p in pos]


def _pure_plan(items: tuple[Any, ...], shape: tuple[int, ...],
               want_positions: bool = True) -> tuple[tuple[int, ...], list[int] | None]:
    """NumPy indexing semantics in pure Python: the result shape and (optionally) the flat
    row-major positions of the selected elements in the flattened input."""
    ndim = len(shape)
    n_ell = sum(1 for k in items if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = 0
    for k in items:
        if k is None or k is Ellipsis:
            continue
        consumed += len(k.shape) if isinstance(k, IndexArray) and k.is_bool else 1
    if consumed > ndim:
        raise IndexError(
            f"too many indices for tensor: tensor is {ndim}-dimensional, but {consumed} were "
            f"indexed"
        )
    fill = [slice(None)] * (ndim - consumed)
    expanded: list[Any] = []
    for k in items:
        if k is Ellipsis:
            expanded.extend(fill)
            fill = []
        else:
            expanded.append(k)
    expanded.extend(fill)

    # bool arrays -> one integer array per dimension they cover (their nonzero positions)
    entries: list[Any] = []
    dim = 0
    for k in expanded:
        if isinstance(k, IndexArray) and k.is_bool:
            kshape = k.shape
            for j, bd in enumerate(kshape):
                if shape[dim + j] != bd:
                    raise IndexError(
                        f"boolean index did not match indexed array along dimension {dim + j}; "
                        f"dimension is {shape[dim + j]} but corresponding boolean dimension is "
                        f"{bd}"
                    )
            hits = [i for i, v in enumerate(k.values) if v]
            coords: list[list[int]] = [[] for _ in kshape]
            for h in hits:
                for j in range(len(kshape) - 1, -1, -1):
                    coords[j].append(h % kshape[j])
                    h //= kshape[j]
            if not kshape:  # 0-d bool arrays are rejected earlier; keep the loop total
                continue
            for j in range(len(kshape)):
                entries.append(IndexArray(coords[j], (len(hits),), False))
            dim += len(kshape)
        else:
            entries.append(k)
            if k is not None:
                dim += 1

    strides = [1] * ndim
    for i in range(ndim - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    has_arrays = any(isinstance(k, IndexArray) for k in entries)

    base = 0
    # output pieces in order: (dims, offsets) for basic parts; "ADV" marks the advanced block
    pieces: list[Any] = []
    adv: list[tuple[int, list[int], tuple[int, ...], int]] = []  # (stride, values, shape, axis)
    adv_slots: list[int] = []
    dim = 0
    for pos, k in enumerate(entries):
        if k is None:
            pieces.append(((1,), [0]))
            continue
        d, st = shape[dim], strides[dim]
        if isinstance(k, slice):
            r = range(*k.indices(d))
            pieces.append(((len(r),), [st * i for i in r]))
        elif isinstance(k, IndexArray) or has_arrays:
            if isinstance(k, IndexArray):
                adv.append((st, k.values, k.shape, dim))
            else:
                adv.append((st, [k], (), dim))
            adv_slots.append(pos)
            if len(adv_slots) == 1:
                pieces.append("ADV")
        else:
            i = k + d if k < 0 else k
            if not 0 <= i < d:
                raise IndexError(f"index {k} is out of bounds for axis {dim} with size {d}")
            base += st * i
        dim += 1

    if adv:
        bshape = _bcast([a[2] for a in adv])
        n = 1
        for d in bshape:
            n *= d
        offs = [0] * n
        for st, values, ashape, axis in adv:
            d = shape[axis]
            for v in values:
                if not -d <= v < d:
                    raise IndexError(f"index {v} is out of bounds for axis {axis} with size {d}")
            vals = _broadcast_values(values, ashape, bshape)
            offs = [o + st * (v + d if v < 0 else v) for o, v in zip(offs, vals)]
        contiguous = adv_slots == list(range(adv_slots[0], adv_slots[0] + len(adv_slots)))
        block = (bshape, offs)
        at = pieces.index("ADV")
        if contiguous:  # the broadcast block replaces the advanced indices in place
            pieces[at] = block
        else:  # advanced indices separated by a slice/None: their block goes first (NumPy)
            del pieces[at]
            pieces.insert(0, block)

    out_shape: tuple[int, ...] = ()
    for dims, _ in pieces:
        out_shape += tuple(dims)
    if not want_positions:
        return out_shape, None
    flat = [base]
    for _, offsets in pieces:
        flat = [p + o for p in flat for o in offsets]
    return out_shape, flat


_getitem = unary_primitive("getitem", "gather_flat")
_scatter = unary_primitive("scatter_add", "scatter_add_flat")
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


_one_hot = unary_primitive("one_hot")


def one_hot(indices: Any, depth: int, dtype: Any = "float32") -> Tensor:
    """A new last axis of length ``depth`` with 1 at each index (out-of-range rows are 0)."""
    indices = as_tensor(indices, "indices")
    if indices.dtype.kind != "i":
        raise TypeError(f"indices: one_hot needs integer indices, got dtype {indices.dtype}")
    if int(depth) < 0:
        raise ValueError(f"depth: must be >= 0, got {depth}")
    return bind(_one_hot, (indices,), {"depth": int(depth), "dtype": D.as_dtype(dtype)})
