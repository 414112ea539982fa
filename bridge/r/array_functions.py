"""The Python half of greta's array functions on lazy arrays (``r-client/R/array_functions.R``):
``[<-``, ``dim<-``, ``rep``, ``aperm``, ``abind``, ``cumsum``/``cumprod``, ``outer``,
``kronecker``, ``sweep``, ``apply``, ``tapply`` and the ``dims =`` row/column reductions.

R's arrays are column-major and the runtime's row-major; a lazy array has the same extents on
both sides (``x[i, j]`` is the same entry), so only flattening differs: ``_flat`` and
``_unflat`` are R's ``as.vector(x)`` and ``array(v, dim)``. Positions and axes arrive 0-based.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import runtime as tb
from ...runtime import dtypes as D
from ...runtime.graph.nodes import LazyArray
from .ppl import _r_array, lazy_out

__all__ = [
    "abind",
    "aperm",
    "apply",
    "cumulate",
    "kronecker",
    "margin_reduce",
    "outer",
    "rep",
    "set_dim",
    "subassign",
    "sweep",
    "tapply",
]

# R's arithmetic FUN names (outer, kronecker, sweep) and the runtime ops they are
_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "*": tb.multiply, "+": tb.add, "-": tb.subtract, "/": tb.divide, "^": tb.power,
}
_REDUCTIONS = ("sum", "mean", "max", "min", "prod")
_CUMULATIVE = ("cumsum", "cumprod")


def _lazy(x: Any, fn: str, arg: str) -> Any:
    """A lazy array (or tensor) from R: R data becomes data."""
    if isinstance(x, (LazyArray, tb.Tensor)):
        return x
    return tb.as_data(_r_array(x, f"{fn}: {arg}"))


def _flat(x: Any) -> Any:
    """R's ``as.vector(x)``: the entries in column-major order, rank 1."""
    return tb.reshape(tb.transpose(x) if x.ndim > 1 else x, (-1,))


def _unflat(v: Any, dim: tuple[int, ...]) -> Any:
    """R's ``array(v, dim)`` for ``length(v) == prod(dim)``."""
    return tb.transpose(tb.reshape(v, tuple(reversed(dim)))) if len(dim) > 1 else \
        tb.reshape(v, dim)


def _ints(x: Any) -> list[int]:
    """An R integer vector (one number arrives as a Python scalar)."""
    return [int(i) for i in np.atleast_1d(np.asarray(x, dtype=np.float64)).reshape(-1)]


def _out(x: Any) -> dict[str, Any]:
    with warnings.catch_warnings():  # reference values of variables are zeros: see ppl.op
        warnings.simplefilter("ignore", RuntimeWarning)
        return lazy_out(x)


def _arith(fun: str, fn: str) -> Callable[[Any, Any], Any]:
    if fun not in _ARITHMETIC:
        raise ValueError(f"{fn}: FUN must be one of {', '.join(map(repr, _ARITHMETIC))} for "
                         f"lazy arrays, not {fun!r}")
    return _ARITHMETIC[fun]


def set_dim(x: Any, dim: Any) -> dict[str, Any]:
    """``dim(x) <- dim``: the same entries in column-major order, new extents."""
    x = _lazy(x, "dim<-", "x")
    d = tuple(_ints(dim))
    if any(n < 0 for n in d) or math.prod(d) != math.prod(x.shape):
        raise ValueError(f"dim<-: dims [product {math.prod(d)}] do not match the length of "
                         f"the lazy array [{math.prod(x.shape)}]")
    return _out(_unflat(_flat(x), d))


def subassign(x: Any, positions: Any, value: Any) -> dict[str, Any]:
    """``x[i] <- value``: ``positions`` are R's column-major positions of ``x[i]`` (0-based, in
    R's order, repeats allowed: the last assignment wins), ``value`` recycled over them as R
    does when its length divides theirs."""
    x = _lazy(x, "[<-", "x")
    value = _lazy(value, "[<-", "value")
    pos = _ints(positions)
    n, k = len(pos), math.prod(value.shape)
    if n == 0:
        return _out(x)
    if k == 0 or n % k:
        raise ValueError(f"[<-: {n} entries to replace and a value of length {k}; the length "
                         "of value must divide the number of entries (as R recycles it)")
    last = {p: j for j, p in enumerate(pos)}  # R assigns in order: the last value wins
    where = sorted(last)
    take = [last[p] % k for p in where]
    v = _flat(value)
    vals = v if take == list(range(k)) and len(where) == k else tb.take(v, take, 0)
    if value.dtype != x.dtype:
        x = tb.cast(x, D.promote(x.dtype, value.dtype))
        vals = tb.cast(vals, x.dtype)
    flat = tb.index_update(_flat(x), (np.asarray(where, dtype=np.int64),), vals)
    return _out(_unflat(flat, tuple(x.shape)))


def rep(x: Any, times: Any, each: int, length_out: Any) -> dict[str, Any]:
    """R's ``rep(x, times, each, length.out)`` of a lazy array: a column. ``each`` repeats each
    entry (``tb.repeat``), then ``times`` the whole (one count: ``tb.tile``) or each entry (one
    count per entry: ``tb.repeat``); ``length.out`` cuts or recycles the result."""
    v = _flat(_lazy(x, "rep", "x"))
    if each != 1:
        v = tb.repeat(v, int(each))
    t = _ints(times)
    if length_out is None:
        if len(t) == 1:
            v = tb.tile(v, (t[0],))
        elif len(t) == v.shape[0]:
            v = tb.repeat(v, t)
        else:
            raise ValueError(f"rep: times has {len(t)} counts for {v.shape[0]} entries "
                             "(give one count, or one per entry after each)")
    else:
        n = int(length_out)
        if n < 0:
            raise ValueError(f"rep: length.out must be a non-negative integer, not {n}")
        m = v.shape[0]
        v = v if n == m else tb.take(v, [i % m for i in range(n)], 0)
    return _out(tb.reshape(v, (-1, 1)))


def aperm(x: Any, perm: Any) -> dict[str, Any]:
    """R's ``aperm(x, perm)`` (``perm`` 0-based): ``tb.transpose``."""
    x = _lazy(x, "aperm", "a")
    p = _ints(perm)
    if sorted(p) != list(range(x.ndim)):
        raise ValueError(f"aperm: perm must be a permutation of 1..{x.ndim}, not "
                         f"{[i + 1 for i in p]}")
    return _out(tb.transpose(x, tuple(p)))


def abind(arrays: Any, axis: int, new: bool) -> dict[str, Any]:
    """greta's ``abind(...)``: arrays joined along dimension ``axis`` (0-based); ``new``: a new
    dimension of one is first made there in each array (abind's ``along = 0``, ``N + 1`` or
    a fraction)."""
    xs = [_lazy(a, "abind", f"argument {k + 1}") for k, a in enumerate(arrays)]
    if not xs:
        raise ValueError("abind: nothing to bind")
    rank = max(max(x.ndim for x in xs), 2)
    xs = [tb.reshape(x, (*x.shape, *(1,) * (rank - x.ndim))) for x in xs]
    axis = int(axis)
    if not 0 <= axis < rank + bool(new):
        raise ValueError(f"abind: along must be between 0 and {rank + 1}")
    if new:
        xs = [tb.expand_dims(x, axis) for x in xs]
    others = {tuple(d for i, d in enumerate(x.shape) if i != axis) for x in xs}
    if len(others) != 1:
        dims = "; ".join(" x ".join(map(str, x.shape)) for x in xs)
        raise ValueError(f"abind: the arrays must have the same extents except along "
                         f"dimension {axis + 1} (dimensions {dims})")
    return _out(xs[0] if len(xs) == 1 else tb.concat(xs, axis=axis))


def cumulate(x: Any, fun: str) -> dict[str, Any]:
    """R's ``cumsum(x)``/``cumprod(x)``: a column, over the entries in column-major order."""
    if fun not in _CUMULATIVE:
        raise ValueError(f"cumulate: fun must be cumsum or cumprod, not {fun!r}")
    v = _flat(_lazy(x, fun, "x"))
    return _out(tb.reshape(getattr(tb, fun)(v, 0), (-1, 1)))


def outer(x: Any, y: Any, dim: Any, fun: str) -> dict[str, Any]:
    """R's ``outer(X, Y, FUN)``: ``FUN(X[i], Y[j])`` for every pair, of extents ``dim``
    (``c(dim(X), dim(Y))``, as R decides)."""
    a = _flat(_lazy(x, "outer", "X"))
    b = _flat(_lazy(y, "outer", "Y"))
    if fun == "*":
        out = tb.outer(a, b)
    else:
        f = _arith(fun, "outer")
        shape = (a.shape[0], b.shape[0])
        out = f(tb.broadcast_to(tb.reshape(a, (-1, 1)), shape),
                tb.broadcast_to(tb.reshape(b, (1, -1)), shape))
    return _out(_unflat(_flat(out), tuple(_ints(dim))))


def kronecker(x: Any, y: Any, fun: str) -> dict[str, Any]:
    """R's ``kronecker(X, Y, FUN)``: blocks ``FUN(X[i, j], Y)``; the lower rank is padded with
    trailing extents of one, as R does."""
    a = _lazy(x, "kronecker", "X")
    b = _lazy(y, "kronecker", "Y")
    rank = max(a.ndim, b.ndim)
    sa = (*a.shape, *(1,) * (rank - a.ndim))
    sb = (*b.shape, *(1,) * (rank - b.ndim))
    a, b = tb.reshape(a, sa), tb.reshape(b, sb)
    if fun == "*":
        return _out(tb.kron(a, b))
    f = _arith(fun, "kronecker")
    pairs = tuple(d for m, n in zip(sa, sb) for d in (m, n))
    a2 = tb.broadcast_to(tb.reshape(a, tuple(d for n in sa for d in (n, 1))), pairs)
    b2 = tb.broadcast_to(tb.reshape(b, tuple(d for n in sb for d in (1, n))), pairs)
    return _out(tb.reshape(f(a2, b2), tuple(m * n for m, n in zip(sa, sb))))


def sweep(x: Any, margin: Any, stats: Any, fun: str) -> dict[str, Any]:
    """R's ``sweep(x, MARGIN, STATS, FUN)``: ``FUN(x, STATS)`` with ``STATS`` (the entries of
    ``dim(x)[MARGIN]``, column-major) laid along the ``MARGIN`` dimensions."""
    x = _lazy(x, "sweep", "x")
    s = _lazy(stats, "sweep", "STATS")
    f = _arith(fun, "sweep")
    m = _ints(margin)
    if not m or len(set(m)) != len(m) or not all(0 <= i < x.ndim for i in m):
        raise ValueError(f"sweep: MARGIN must be distinct dimensions of x (1..{x.ndim}), not "
                         f"{[i + 1 for i in m]}")
    want = tuple(x.shape[i] for i in m)
    if math.prod(s.shape) != math.prod(want):
        raise ValueError(f"sweep: STATS has {math.prod(s.shape)} entries; dim(x)[MARGIN] "
                         f"needs {math.prod(want)}")
    s = _unflat(_flat(s), want)
    order = sorted(range(len(m)), key=m.__getitem__)
    s = tb.transpose(s, tuple(order)) if len(m) > 1 else s
    full = tuple(x.shape[i] if i in m else 1 for i in range(x.ndim))
    return _out(f(x, tb.reshape(s, full)))


def _margin_first(x: Any, m: list[int], fn: str) -> Any:
    """``x`` as (entries of the other dimensions in column-major order, *dim(x)[MARGIN])."""
    if not m or len(set(m)) != len(m) or not all(0 <= i < x.ndim for i in m):
        raise ValueError(f"{fn}: MARGIN must be distinct dimensions of X (1..{x.ndim}), not "
                         f"{[i + 1 for i in m]}")
    others = [i for i in range(x.ndim) if i not in m]
    y = tb.transpose(x, (*reversed(others), *m))
    return tb.reshape(y, (math.prod(x.shape[i] for i in others), *(x.shape[i] for i in m)))


def apply(x: Any, margin: Any, fun: str) -> dict[str, Any]:
    """greta's ``apply(X, MARGIN, FUN)`` for FUN one of sum, mean, max, min, prod (one value
    per entry of the margin: a column for one margin) or cumsum, cumprod (R's layout: the
    running values first, then the margin's extents)."""
    x = _lazy(x, "apply", "X")
    m = _ints(margin)
    y = _margin_first(x, m, "apply")
    if fun in _REDUCTIONS:
        out = getattr(tb, fun)(y, axis=0)
        return _out(tb.reshape(out, (-1, 1)) if len(m) == 1 else out)
    if fun in _CUMULATIVE:
        return _out(getattr(tb, fun)(y, 0))
    raise ValueError(f"apply: FUN must be one of {', '.join(_REDUCTIONS + _CUMULATIVE)} for "
                     f"lazy arrays, not {fun!r}")


def tapply(x: Any, groups: Any, fun: str) -> dict[str, Any]:
    """greta's ``tapply(X, INDEX, FUN)``: ``FUN`` of the entries of each group (``groups``:
    0-based column-major positions, one vector per group in R's order): a column."""
    if fun not in _REDUCTIONS:
        raise ValueError(f"tapply: FUN must be one of {', '.join(_REDUCTIONS)} for lazy "
                         f"arrays, not {fun!r}")
    v = _flat(_lazy(x, "tapply", "X"))
    groups = [_ints(g) for g in (groups if isinstance(groups, (list, tuple)) else [groups])]
    if fun in ("sum", "mean"):  # one scatter-add (tb.segment_sum), whatever the groups
        ids = [0] * v.shape[0]
        for k, g in enumerate(groups):
            for i in g:
                ids[i] = k
        out = tb.segment_sum(v, ids, num_segments=len(groups))
        if fun == "mean":
            out = out / np.array([float(len(g)) for g in groups])
    else:
        out = tb.concat([getattr(tb, fun)(tb.take(v, g, 0), keepdims=True) for g in groups], 0)
    return _out(tb.reshape(out, (-1, 1)))


def margin_reduce(x: Any, fun: str, axes: Any) -> dict[str, Any]:
    """``rowSums``/``colSums``/``rowMeans``/``colMeans`` with ``dims``: ``fun`` over ``axes``;
    what is left keeps its extents (one left: a column)."""
    if fun not in ("sum", "mean"):
        raise ValueError(f"margin_reduce: fun must be sum or mean, not {fun!r}")
    x = _lazy(x, fun, "x")
    out = getattr(tb, fun)(x, axis=tuple(_ints(axes)))
    return _out(tb.reshape(out, (-1, 1)) if out.ndim <= 1 else out)
