"""Vectorisation: ``vmap(f)`` runs ``f``, written for one example, on a batch at once.

Inside ``vmap`` every batched value is a :class:`BatchTracer` holding the value with the batch as
its leading axis; the function sees the per-example shape. Each primitive has a *batching rule*
that rewrites the call for the batched operands (shift reduction axes, align ranks for
broadcasting, prepend the batch to target shapes…); a primitive without a rule — a user's custom
primitive, say — runs once per example and the results are stacked, which is always correct.

This is what lets a model written for one parameter vector evaluate many (MCMC chains, a batch of
free states) in one pass.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..ops.creation import as_tensor
from ..ops.indexing import IndexArray, IndexPlan
from ..ops.shape import (
    broadcast_shapes,
    broadcast_to,
    expand_dims,
    reshape,
    squeeze,
    stack,
    transpose,
)
from ..pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor
from .core import Primitive, Trace, Tracer, bind
from .custom import CustomPrimitive

__all__ = ["BatchTrace", "BatchTracer", "batch_rule", "vmap"]

BatchRule = Callable[..., Any]  # (values, batched: list[bool], size: int, **params) -> value
_RULES: dict[str, BatchRule] = {}


def batch_rule(*names: str) -> Callable[[BatchRule], BatchRule]:
    """Register a batching rule for the primitives called ``names``."""
    def deco(fn: BatchRule) -> BatchRule:
        for n in names:
            _RULES[n] = fn
        return fn

    return deco


class BatchTracer(Tracer):
    __slots__ = ()


def new_batch_tracer(value: Any, trace: BatchTrace) -> BatchTracer:
    t = object.__new__(BatchTracer)
    t._data = None
    t._primal = value
    t._trace = trace
    t.shape = tuple(value.shape[1:])
    t.dtype = value.dtype
    t.backend = value.backend
    return t


class BatchTrace(Trace):
    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def process(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        values = list(args)
        batched = [False] * len(args)
        for i, a in enumerate(args):
            if isinstance(a, BatchTracer) and a._trace is self:
                values[i] = a._primal
                batched[i] = True
        rule = _RULES.get(prim.name) if not _is_custom(prim) else None
        out = (rule(values, batched, self.size, prim=prim, **params) if rule is not None
               else _loop(prim, values, batched, self.size, params))
        return new_batch_tracer(out, self)


def _is_custom(prim: Primitive) -> bool:
    return isinstance(prim, CustomPrimitive)


def _loop(prim: Primitive, values: list[Any], batched: list[bool], size: int,
          params: dict[str, Any]) -> Any:
    """The always-correct fallback: run each example separately and stack."""
    outs = []
    for b in range(size):
        args = [v[b] if bt else v for v, bt in zip(values, batched)]
        outs.append(bind(prim, args, params))
    return stack(outs, axis=0)


# -- helpers -------------------------------------------------------------------------------------
def _rank(v: Any, batched: bool) -> int:
    return (v.ndim - 1 if batched else v.ndim) if isinstance(v, Tensor) else 0


def _lift(v: Any, rank: int) -> Any:
    """A batched value (B, *s) reshaped to (B, 1.., *s) so that its example part has ``rank``."""
    extra = rank - (v.ndim - 1)
    return v if extra <= 0 else reshape(v, (v.shape[0], *([1] * extra), *v.shape[1:]))


def _materialise(v: Any, size: int) -> Any:
    """An unbatched tensor broadcast to (B, *shape)."""
    return broadcast_to(expand_dims(v, 0), (size, *v.shape))


# -- rules ---------------------------------------------------------------------------------------
_ELEMENTWISE_UNARY = (
    "neg abs sign exp log log1p expm1 sqrt rsqrt square reciprocal tanh sigmoid softplus sin cos "
    "tan erf erfc lgamma digamma floor ceil round logical_not isnan isfinite polygamma cast clip "
    "arcsin arccos arctan arcsinh arccosh arctanh "
    "stop_gradient one_hot"
).split()


@batch_rule(*_ELEMENTWISE_UNARY)
def _unary(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
           **params: Any) -> Any:
    return bind(prim, values, params)


@batch_rule("add", "sub", "mul", "div", "floordiv", "mod", "pow", "maximum", "minimum", "equal",
            "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
            "logical_or", "where")
def _broadcasting(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
                  **params: Any) -> Any:
    rank = max(_rank(v, b) for v, b in zip(values, batched))
    args = [_lift(v, rank) if b else v for v, b in zip(values, batched)]
    return bind(prim, args, params)


@batch_rule("sum", "prod", "max", "min", "logsumexp")
def _reduce(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
            axis: tuple[int, ...], keepdims: bool) -> Any:
    return bind(prim, values, {"axis": tuple(a + 1 for a in axis), "keepdims": keepdims})


@batch_rule("argmax", "argmin")
def _arg(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
         axis: int) -> Any:
    return bind(prim, values, {"axis": axis + 1})


@batch_rule("cumsum")
def _cumsum(values: list[Any], batched: list[bool], size: int, *, prim: Primitive, axis: int,
            reverse: bool) -> Any:
    return bind(prim, values, {"axis": axis + 1, "reverse": reverse})


@batch_rule("reshape")
def _reshape(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
             shape: tuple[int, ...]) -> Any:
    return bind(prim, values, {"shape": (size, *shape)})


@batch_rule("broadcast_to")
def _broadcast_to(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
                  shape: tuple[int, ...]) -> Any:
    return bind(prim, [_lift(values[0], len(shape))], {"shape": (size, *shape)})


@batch_rule("transpose")
def _transpose(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
               perm: tuple[int, ...]) -> Any:
    return bind(prim, values, {"perm": (0, *(p + 1 for p in perm))})


@batch_rule("concat")
def _concat(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
            axis: int) -> Any:
    args = [v if b else _materialise(v, size) for v, b in zip(values, batched)]
    return bind(prim, args, {"axis": axis + 1})


def _batched_plan(plan: Any, shape: tuple[int, ...]) -> Any:
    """The index plan for (B, *shape) that applies ``plan`` to every example, or None when
    NumPy's placement of advanced-index dimensions would move the batch axis."""
    idx = plan.numpy_index
    # index arrays: NumPy's, or IndexArray where NumPy is absent (Pyodide)
    advanced = [i for i, k in enumerate(idx) if isinstance(k, IndexArray)
                or type(k).__name__ == "ndarray"]
    if advanced and advanced != list(range(advanced[0], advanced[-1] + 1)):
        return None  # separated advanced indices go to the front: use the loop
    return IndexPlan((slice(None), *idx), shape)


@batch_rule("getitem")
def _getitem(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
             index: Any) -> Any:
    plan = _batched_plan(index, tuple(values[0].shape))
    if plan is None:
        return _loop(prim, values, batched, size, {"index": index})
    return bind(prim, values, {"index": plan})


@batch_rule("scatter_add")
def _scatter(values: list[Any], batched: list[bool], size: int, *, prim: Primitive, index: Any,
             shape: tuple[int, ...]) -> Any:
    full = (size, *shape)
    plan = _batched_plan(index, full)
    if plan is None:
        return _loop(prim, values, batched, size, {"index": index, "shape": shape})
    return bind(prim, values, {"index": plan, "shape": full})


@batch_rule("matmul")
def _matmul(values: list[Any], batched: list[bool], size: int, *, prim: Primitive) -> Any:
    a, b = values
    ra, rb = _rank(a, batched[0]), _rank(b, batched[1])
    squeeze_axis = None
    if ra == 1:  # vector on the left: make it a row, squeeze afterwards
        a = expand_dims(a, -2)
        ra, squeeze_axis = 2, -2
    if rb == 1:
        b = expand_dims(b, -1)
        rb, squeeze_axis = 2, -1
    rank = max(ra, rb)
    if batched[0]:
        a = _lift(a, rank)
    if batched[1]:
        b = _lift(b, rank)
    out = bind(prim, [a, b], {})
    return squeeze(out, squeeze_axis) if squeeze_axis is not None else out


@batch_rule("cholesky")
def _cholesky(values: list[Any], batched: list[bool], size: int, *, prim: Primitive) -> Any:
    return bind(prim, values, {})


@batch_rule("triangular_solve")
def _trisolve(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
              **params: Any) -> Any:

    a, b = (v if bt else _materialise(v, size) for v, bt in zip(values, batched))
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(_lift(a, len(batch) - 1 + 2), (*batch, *a.shape[-2:]))
    b = broadcast_to(_lift(b, len(batch) - 1 + 2), (*batch, *b.shape[-2:]))
    return bind(prim, [a, b], params)


# -- the transformation ----------------------------------------------------------------------------
def vmap(f: Callable[..., Any], in_axes: Any = 0, out_axes: int = 0) -> Callable[..., Any]:
    """Vectorise ``f`` over a batch axis of its arguments.

    ``in_axes``: an int (every argument), ``None`` (not batched), or a tuple with one entry per
    positional argument (int or None; it applies to every tensor in that argument's structure).
    The batch axis of every output is ``out_axes``.
    """

    @functools.wraps(f)
    def wrapper(*args: Any) -> Any:
        axes = in_axes if isinstance(in_axes, tuple | list) else (in_axes,) * len(args)
        if len(axes) != len(args):
            raise ValueError(
                f"in_axes: got {len(axes)} entries for {len(args)} positional arguments"
            )
        size = None
        for arg, ax in zip(args, axes):
            if ax is None:
                continue
            for leaf in tree_flatten(arg)[0]:
                t = as_tensor(leaf, "argument")
                n = t.shape[ax]
                if size is not None and n != size:
                    raise ValueError(
                        f"vmap: batch axes disagree in size ({size} and {n}); every batched "
                        f"argument needs the same batch size"
                    )
                size = n
        if size is None:
            raise ValueError("vmap: no argument is batched (all in_axes are None)")
        trace = BatchTrace(size)
        wrapped = []
        for arg, ax in zip(args, axes):
            if ax is None:
                wrapped.append(arg)
                continue
            leaves, td = tree_flatten(arg)
            new = []
            for leaf in leaves:
                t = as_tensor(leaf, "argument")
                ax_ = ax % t.ndim
                if ax_ != 0:
                    perm = (ax_, *(i for i in range(t.ndim) if i != ax_))
                    t = transpose(t, perm)
                new.append(new_batch_tracer(t, trace))
            wrapped.append(tree_unflatten(td, new))
        out = f(*wrapped)
        leaves, td = tree_flatten(out)
        results = []
        for o in leaves:
            if isinstance(o, BatchTracer) and o._trace is trace:
                v = o._primal
            elif isinstance(o, Tensor):
                v = _materialise(o, size)
            else:
                v = _materialise(as_tensor(o, "output"), size)
            if out_axes != 0:
                nd = v.ndim
                ax = out_axes % nd
                perm = [*range(1, ax + 1), 0, *range(ax + 1, nd)]
                v = transpose(v, perm)
            results.append(v)
        return tree_unflatten(td, results)

    return wrapper
