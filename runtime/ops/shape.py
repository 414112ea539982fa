"""Shape and layout: reshape, transpose, expand/squeeze, broadcast, concat, stack.

The ``sum`` primitive is defined here too (``reduction.sum`` is its public op): it is the
transpose of ``broadcast_to``, and each one's derivative is the other.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as D
from ..autodiff.core import Primitive, bind
from ..errors import BackendMismatchError, DisposedTensorError, ShapeError
from ..tensor import Tensor, _Disposed
from .creation import as_tensor
from .elementwise import cast
from .kernel_impls import nary_primitive, unary_primitive

__all__ = [
    "SUM",
    "broadcast_shapes",
    "broadcast_to",
    "concat",
    "expand_dims",
    "expand_reduced",
    "flatten",
    "reshape",
    "squeeze",
    "stack",
    "swapaxes",
    "transpose",
    "unbroadcast",
]


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The NumPy broadcast of several shapes (raises ShapeError naming them)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, start=ndim - len(s)):
            if d == 1:
                continue
            if out[i] == 1:
                out[i] = d
            elif out[i] != d:
                raise ShapeError(
                    f"shapes {', '.join(str(list(x)) for x in shapes)} cannot be broadcast"
                )
    return tuple(out)


# -- reshape (shares the buffer: several tensors, one data_id) ----------------------------------
def _reshape_impl(x: Tensor, *, shape: tuple[int, ...]) -> Tensor:
    data = x._data
    if data.__class__ is _Disposed:
        raise DisposedTensorError(x.id)
    be = x.backend
    raw = be.kernels["reshape"](data, shape=shape)
    return be.share(x, raw, shape)


_reshape = Primitive("reshape", _reshape_impl, kernel="reshape", kind="unary")
_reshape.defvjp(lambda g, ans, x, *, shape: reshape(g, x.shape))
_reshape.defjvp(lambda t, ans, x, *, shape: reshape(t, shape))


def _resolve_shape(shape: Any, size: int, old: tuple[int, ...]) -> tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: only one dimension may be -1, got shape {list(shape)}")
    if -1 in shape:
        known = 1
        for d in shape:
            if d != -1:
                known *= d
        if known == 0 or size % known:
            raise ShapeError(
                f"reshape: cannot reshape a tensor of shape {list(old)} ({size} elements) "
                f"into shape {list(shape)}"
            )
        shape = tuple(size // known if d == -1 else d for d in shape)
    n = 1
    for d in shape:
        if d < 0:
            raise ShapeError(f"reshape: negative dimension in shape {list(shape)}")
        n *= d
    if n != size:
        raise ShapeError(
            f"reshape: cannot reshape a tensor of shape {list(old)} ({size} elements) into "
            f"shape {list(shape)} ({n} elements)"
        )
    return shape


def reshape(x: Any, shape: Any) -> Tensor:
    x = as_tensor(x, "x")
    new = _resolve_shape(shape, x.size, x.shape)
    if new == x.shape:
        return x
    return bind(_reshape, (x,), {"shape": new})


def flatten(x: Any) -> Tensor:
    return reshape(x, (-1,))


def expand_dims(x: Any, axis: int) -> Tensor:
    x = as_tensor(x, "x")
    nd = x.ndim + 1
    if not -nd <= axis < nd:
        raise ValueError(f"expand_dims: axis {axis} is out of range for a result of rank {nd}")
    axis %= nd
    return reshape(x, (*x.shape[:axis], 1, *x.shape[axis:]))


def squeeze(x: Any, axis: Any = None) -> Tensor:
    x = as_tensor(x, "x")
    if axis is None:
        return reshape(x, tuple(d for d in x.shape if d != 1))
    axes = {a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)}
    for a in axes:
        if x.shape[a] != 1:
            raise ShapeError(
                f"squeeze: axis {a} has size {x.shape[a]}, not 1 (shape {list(x.shape)})"
            )
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


# -- transpose ----------------------------------------------------------------------------------
def _inverse_perm(perm: tuple[int, ...]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


_transpose = unary_primitive("transpose")
_transpose.defvjp(lambda g, ans, x, *, perm: transpose(g, _inverse_perm(perm)))
_transpose.defjvp(lambda t, ans, x, *, perm: transpose(t, perm))


def transpose(x: Any, perm: Any = None) -> Tensor:
    """Permute axes (default: reverse them)."""
    x = as_tensor(x, "x")
    nd = x.ndim
    perm = tuple(reversed(range(nd))) if perm is None else tuple(int(p) % max(nd, 1) for p in perm)
    if sorted(perm) != list(range(nd)):
        raise ValueError(f"transpose: perm {list(perm)} is not a permutation of 0..{nd - 1}")
    if perm == tuple(range(nd)):
        return x
    return bind(_transpose, (x,), {"perm": perm})


def swapaxes(x: Any, a: int, b: int) -> Tensor:
    x = as_tensor(x, "x")
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


# -- broadcasting -------------------------------------------------------------------------------
_broadcast_to = unary_primitive("broadcast_to")
_broadcast_to.defvjp(lambda g, ans, x, *, shape: unbroadcast(g, x.shape))
_broadcast_to.defjvp(lambda t, ans, x, *, shape: broadcast_to(t, shape))


def broadcast_to(x: Any, shape: Any) -> Tensor:
    x = as_tensor(x, "x")
    shape = tuple(int(d) for d in shape)
    if x.shape == shape:
        return x
    try:
        if broadcast_shapes(x.shape, shape) != shape:
            raise ShapeError("")
    except ShapeError:
        raise ShapeError(
            f"broadcast_to: a tensor of shape {list(x.shape)} cannot be broadcast to "
            f"shape {list(shape)}"
        ) from None
    return bind(_broadcast_to, (x,), {"shape": shape})


def unbroadcast(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``g`` over the axes that broadcasting added or stretched, giving ``shape``."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = list(range(lead))
    axes += [lead + i for i, d in enumerate(shape) if d == 1 and gshape[lead + i] != 1]
    out = bind(SUM, (g,), {"axis": tuple(axes), "keepdims": True}) if axes else g
    return reshape(out, shape)


# -- sum: broadcast_to's transpose ----------------------------------------------------------------
def expand_reduced(g: Any, x: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    """Bring a reduction's result over ``axis`` of ``x`` back to broadcastable shape (as if
    ``keepdims=True``)."""
    if keepdims:
        return g
    return reshape(g, tuple(1 if i in axis else d for i, d in enumerate(x.shape)))


def _sum_vjp(g: Any, ans: Any, x: Any, *, axis: tuple, keepdims: bool) -> Any:
    if len(axis) == x.ndim or axis == tuple(range(len(axis))):
        return broadcast_to(g, x.shape)  # leading axes: g broadcasts as it is
    return broadcast_to(expand_reduced(g, x, axis, keepdims), x.shape)


# params: axis (a non-empty tuple of non-negative ints, or empty with keepdims), keepdims
SUM = unary_primitive("sum")
SUM.defvjp(_sum_vjp)
SUM.defjvp(lambda t, ans, x, *, axis, keepdims: bind(SUM, (t,), {"axis": axis,
                                                                  "keepdims": keepdims}))


# -- concat / stack -----------------------------------------------------------------------------
class _Concat(Primitive):
    """Variadic: argument i's cotangent is its slice of g along the axis."""

    __slots__ = ()

    def vjp_rule(self, i: int):  # type: ignore[override]
        while len(self.vjp_rules) <= i:
            j = len(self.vjp_rules)
            self.vjp_rules.append(_concat_vjp(j))
        return self.vjp_rules[i]


def _concat_vjp(i: int):
    def rule(g: Any, ans: Any, *xs: Any, axis: int) -> Any:
        start = sum(x.shape[axis] for x in xs[:i])
        index = (slice(None),) * axis + (slice(start, start + xs[i].shape[axis]),)
        return g[index]  # indexing is an op above this module: reached through Tensor

    return rule


_concat = nary_primitive("concat", cls=_Concat)


def concat(tensors: Any, axis: int = 0) -> Tensor:
    """Join tensors along an existing axis."""
    ts = [as_tensor(t, f"tensors[{i}]") for i, t in enumerate(tensors)]
    if not ts:
        raise ValueError("concat: needs at least one tensor")
    first = ts[0]
    nd = first.ndim
    if nd == 0:
        raise ShapeError("concat: cannot concatenate 0-d tensors; use stack")
    if not -nd <= axis < nd:
        raise ValueError(f"concat: axis {axis} is out of range for tensors of rank {nd}")
    axis %= nd
    dt = first.dtype
    for i, t in enumerate(ts):
        if t.backend is not first.backend:
            raise BackendMismatchError(
                f"concat: tensors[{i}] is on '{t.backend.name}', tensors[0] on "
                f"'{first.backend.name}'"
            )
        if t.ndim != nd or any(a != b for k, (a, b) in enumerate(zip(t.shape, first.shape))
                               if k != axis):
            raise ShapeError(
                f"concat: tensors[{i}] has shape {list(t.shape)}, incompatible with "
                f"tensors[0] shape {list(first.shape)} along axis {axis}"
            )
        dt = D.promote(dt, t.dtype)
    ts = [cast(t, dt) for t in ts]
    if len(ts) == 1:
        return ts[0]
    return bind(_concat, ts, {"axis": axis})


def stack(tensors: Any, axis: int = 0) -> Tensor:
    """Join tensors of one shape along a new axis."""
    ts = [as_tensor(t, f"tensors[{i}]") for i, t in enumerate(tensors)]
    if not ts:
        raise ValueError("stack: needs at least one tensor")
    for i, t in enumerate(ts):
        if t.shape != ts[0].shape:
            raise ShapeError(
                f"stack: tensors[{i}] has shape {list(t.shape)} but tensors[0] has "
                f"{list(ts[0].shape)}; stacked tensors must share a shape"
            )
    nd = ts[0].ndim + 1
    if not -nd <= axis < nd:
        raise ValueError(f"stack: axis {axis} is out of range for a result of rank {nd}")
    return concat([expand_dims(t, axis) for t in ts], axis % nd)
