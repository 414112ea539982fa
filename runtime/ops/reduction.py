"""Reductions over axes: sum, mean, prod, max, min, logsumexp, cumsum, argmax/argmin."""

from __future__ import annotations

from typing import Any

from .. import dtypes as D
from ..autodiff.core import Primitive, bind, has_placeholder_values, primal_value
from ..tensor import Tensor
from .arguments import normalize_axes
from .arithmetic import where
from .creation import as_tensor, eye
from .elementwise import cast, exp
from .kernel_impls import unary_primitive
from .shape import SUM, reshape, transpose
from .shape import expand_reduced as _expand

__all__ = [
    "argmax",
    "argmin",
    "cumsum",
    "logsumexp",
    "max",
    "mean",
    "min",
    "prod",
    "sum",
]


def _extremum_vjp(g: Any, ans: Any, x: Any, *, axis: tuple, keepdims: bool) -> Any:
    # ties share the gradient equally
    a = _expand(ans, x, axis, keepdims)
    mask = cast(x == a, x.dtype)
    count = sum(mask, axis, keepdims=True)
    return _expand(g, x, axis, keepdims) * mask / count


def _extremum_jvp(t: Any, ans: Any, x: Any, *, axis: tuple, keepdims: bool) -> Any:
    a = _expand(ans, x, axis, keepdims)
    mask = cast(x == a, x.dtype)
    return sum(t * mask, axis, keepdims) / sum(mask, axis, keepdims)


_max = unary_primitive("max").defvjp(_extremum_vjp).defjvp(_extremum_jvp)
_min = unary_primitive("min").defvjp(_extremum_vjp).defjvp(_extremum_jvp)


def _lse_weights(ans: Any, x: Any, axis: tuple, keepdims: bool) -> Any:
    return exp(x - _expand(ans, x, axis, keepdims))


_lse = unary_primitive("logsumexp")
_lse.defvjp(
    lambda g, ans, x, *, axis, keepdims: _expand(g, x, axis, keepdims)
    * _lse_weights(ans, x, axis, keepdims)
)
_lse.defjvp(
    lambda t, ans, x, *, axis, keepdims: sum(t * _lse_weights(ans, x, axis, keepdims), axis,
                                             keepdims)
)


def _prod_others(x: Any, axis: tuple, ans: Any, keepdims: bool) -> Any:
    """For each element, the product of the other elements in its reduction group."""
    # Reading values is impossible in a graph being traced and would spoil a staged recording:
    # there, always take the exact path below (it never reads values).
    tracing = has_placeholder_values(x)
    if not tracing:
        values = primal_value(x)
        tracing = values.backend.is_symbolic(values._raw_unchecked())
    if not tracing and not bool((values == 0).sum() > 0 if values.size else False):
        return _expand(ans, x, axis, keepdims) / x
    # Zeros present: move the reduced axes last, flatten them to n, and take the product of
    # each row with element i replaced by 1 (exact, O(n^2) memory, differentiable again).
    keep = [i for i in range(x.ndim) if i not in axis]
    perm = keep + list(axis)
    xt = transpose(x, perm)
    lead = xt.shape[: len(keep)]
    n = 1
    for a in axis:
        n *= x.shape[a]
    rows = reshape(xt, (*lead, 1, n))
    mask = eye(n, dtype="bool", backend=x.backend)
    others = prod(where(mask, 1.0, rows), axis=-1)  # lead + (n,)
    others = reshape(others, lead + tuple(x.shape[a] for a in axis))
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return transpose(others, inv)


_prod = unary_primitive("prod")
_prod.defvjp(
    lambda g, ans, x, *, axis, keepdims: _expand(g, x, axis, keepdims)
    * _prod_others(x, axis, ans, keepdims)
)
_prod.defjvp(
    lambda t, ans, x, *, axis, keepdims: sum(t * _prod_others(x, axis, ans, keepdims), axis,
                                             keepdims)
)


def _reducer(name: str, prim: Primitive, float_only: bool = False):
    def op(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
        x = as_tensor(x, "x")
        axes = normalize_axes(axis, x.ndim, name)
        if float_only and x.dtype.kind != "f":
            x = cast(x, D.float32)
        elif x.dtype is D.bool_ and name in ("sum", "prod"):
            x = cast(x, D.int32)
        if name in ("max", "min") and x.size == 0:
            raise ValueError(f"{name}: cannot reduce a tensor with zero elements")
        if not axes and not keepdims:
            return x
        return bind(prim, (x,), {"axis": axes, "keepdims": bool(keepdims)})

    op.__name__ = name
    op.__doc__ = f"{name} over ``axis`` (None: all axes), keeping reduced axes if ``keepdims``."
    return op


sum = _reducer("sum", SUM)
prod = _reducer("prod", _prod)
max = _reducer("max", _max)
min = _reducer("min", _min)
logsumexp = _reducer("logsumexp", _lse, float_only=True)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over ``axis`` (integers average in float32)."""
    x = as_tensor(x, "x")
    axes = normalize_axes(axis, x.ndim, "mean")
    if x.dtype.kind != "f":
        x = cast(x, D.float32)
    n = 1
    for a in axes:
        n *= x.shape[a]
    return sum(x, axes, keepdims) / float(n) if n else sum(x, axes, keepdims) * float("nan")


_cumsum = unary_primitive("cumsum")
_cumsum.defvjp(lambda g, ans, x, *, axis, reverse: cumsum(g, axis, not reverse))
_cumsum.defjvp(lambda t, ans, x, *, axis, reverse: cumsum(t, axis, reverse))


def cumsum(x: Any, axis: int = 0, reverse: bool = False) -> Tensor:
    """Running sum along ``axis`` (from the end when ``reverse``)."""
    x = as_tensor(x, "x")
    if x.ndim == 0:
        raise ValueError("cumsum: needs a tensor of rank >= 1")
    (ax,) = normalize_axes(axis, x.ndim, "cumsum")
    if x.dtype is D.bool_:
        x = cast(x, D.int32)
    return bind(_cumsum, (x,), {"axis": ax, "reverse": bool(reverse)})


def _arg(name: str):
    prim = unary_primitive(name)

    def op(x: Any, axis: int | None = None) -> Tensor:
        x = as_tensor(x, "x")
        if axis is None:
            x = reshape(x, (-1,))
            axis = 0
        if x.size == 0:
            raise ValueError(f"{name}: cannot take {name} of an empty tensor")
        (ax,) = normalize_axes(axis, x.ndim, name)
        return bind(prim, (x,), {"axis": ax})

    op.__name__ = name
    return op


argmax = _arg("argmax")
argmin = _arg("argmin")
