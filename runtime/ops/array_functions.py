"""Array functions built from other ops: cumprod, outer, kron, repeat, tile, segment_sum.

Each is a composite (no kernel of its own): traces, autodiff and both lowerings see the
reshapes, broadcasts, slices and products it is made of, so every backend has it at once.
"""

from __future__ import annotations

import operator
from typing import Any

from .. import dtypes as D
from ..tensor import Tensor
from .arguments import normalize_axes
from .arithmetic import multiply
from .creation import as_tensor, zeros
from .elementwise import cast
from .indexing import index_add, take
from .shape import broadcast_to, concat, reshape

__all__ = ["cumprod", "kron", "outer", "repeat", "segment_sum", "tile"]


def _count(value: Any, what: str) -> int:
    """A non-negative integer argument (a bool or a fraction is refused, not rounded)."""
    if isinstance(value, float) and value.is_integer():  # R's numbers are doubles
        value = int(value)
    try:
        n = operator.index(value)
    except TypeError:
        n = None
    if n is None or isinstance(value, bool):
        raise TypeError(f"{what} must be a non-negative integer, not {value!r}")
    if n < 0:
        raise ValueError(f"{what} must be a non-negative integer, not {value!r}")
    return n


def cumprod(x: Any, axis: int = 0, reverse: bool = False) -> Tensor:
    """Running product along ``axis`` (from the end when ``reverse``), as ``numpy.cumprod``.

    Written as successive products of slices, so that its gradient is exact where entries
    are zero (``exp(cumsum(log(x)))`` is not)."""
    x = as_tensor(x, "x")
    if x.ndim == 0:
        raise ValueError("cumprod: x needs a rank of at least 1")
    (ax,) = normalize_axes(axis, x.ndim, "cumprod")
    if x.dtype is D.bool_:
        x = cast(x, D.int32)
    n = x.shape[ax]
    if n <= 1:
        return x
    order = range(n - 1, -1, -1) if reverse else range(n)
    parts: list[Tensor] = []
    for i in order:
        s = take(x, [i], axis=ax)
        parts.append(s if not parts else multiply(parts[-1], s))
    if reverse:
        parts.reverse()
    return concat(parts, axis=ax)


def outer(a: Any, b: Any) -> Tensor:
    """``numpy.outer``: both arguments flattened, ``out[i, j] = a[i] * b[j]``."""
    a = as_tensor(a, "a")
    b = as_tensor(b, "b")
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def kron(a: Any, b: Any) -> Tensor:
    """``numpy.kron``: the Kronecker product, blocks ``a[i, j...] * b``; the lower rank is
    padded with leading ones."""
    a = as_tensor(a, "a")
    b = as_tensor(b, "b")
    rank = max(a.ndim, b.ndim)
    sa = (1,) * (rank - a.ndim) + a.shape
    sb = (1,) * (rank - b.ndim) + b.shape
    # a as (a0, 1, a1, 1, ...) and b as (1, b0, 1, b1, ...): the product is a's entry i times
    # b's entry k at (i, k, j, l, ...), which row-major reshaping merges to (i * b0 + k, ...)
    a2 = reshape(a, tuple(d for n in sa for d in (n, 1)))
    b2 = reshape(b, tuple(d for n in sb for d in (1, n)))
    return reshape(multiply(a2, b2), tuple(map(operator.mul, sa, sb)))


def repeat(x: Any, repeats: Any, axis: int | None = None) -> Tensor:
    """``numpy.repeat``: each entry repeated ``repeats`` times (one count, or one count per
    entry along ``axis``); ``axis=None`` flattens first."""
    x = as_tensor(x, "x")
    if axis is None:
        x = reshape(x, (-1,))
        ax = 0
    else:
        if x.ndim == 0:
            raise ValueError("repeat: axis needs x of rank at least 1")
        (ax,) = normalize_axes(axis, x.ndim, "repeat")
    n = x.shape[ax]
    counts = list(repeats) if isinstance(repeats, (list, tuple)) else None
    if counts is None and hasattr(repeats, "tolist") and getattr(repeats, "ndim", 0) > 0:
        counts = repeats.tolist()
    if counts is None:
        counts = [_count(repeats, "repeat: repeats")] * n
    elif len(counts) != n:
        raise ValueError(f"repeat: repeats has {len(counts)} counts; x has {n} entries along "
                         f"axis {ax}")
    counts = [_count(c, "repeat: each of repeats") for c in counts]
    index = [i for i, c in enumerate(counts) for _ in range(c)]
    return take(x, index, axis=ax)


def tile(x: Any, reps: Any) -> Tensor:
    """``numpy.tile``: ``x`` repeated ``reps`` times along each axis (ranks padded with
    leading ones, as NumPy does)."""
    x = as_tensor(x, "x")
    reps_t = tuple(reps) if isinstance(reps, (list, tuple)) else (reps,)
    reps_t = tuple(_count(r, "tile: reps") for r in reps_t)
    rank = max(x.ndim, len(reps_t))
    shape = (1,) * (rank - x.ndim) + x.shape
    reps_t = (1,) * (rank - len(reps_t)) + reps_t
    # (r0, s0, r1, s1, ...) broadcast from (1, s0, 1, s1, ...), merged pairwise row-major
    y = reshape(x, tuple(d for s in shape for d in (1, s)))
    y = broadcast_to(y, tuple(d for r, s in zip(reps_t, shape) for d in (r, s)))
    return reshape(y, tuple(r * s for r, s in zip(reps_t, shape)))


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None) -> Tensor:
    """TensorFlow's ``segment_sum`` (unsorted): ``out[k] = sum of data[i] with
    segment_ids[i] == k`` along the first axis; ``num_segments`` defaults to the largest id
    plus one (segments with no entries are zero). The ids are data (integers known now)."""
    data = as_tensor(data, "data")
    if data.ndim == 0:
        raise ValueError("segment_sum: data needs a rank of at least 1")
    raw = segment_ids.tolist() if hasattr(segment_ids, "tolist") else segment_ids
    if not isinstance(raw, (list, tuple)):
        raw = [raw]
    ids = [_count(i, "segment_sum: each of segment_ids") for i in raw]
    if len(ids) != data.shape[0]:
        raise ValueError(f"segment_sum: segment_ids has {len(ids)} entries; data has "
                         f"{data.shape[0]} along its first axis")
    n = max(ids, default=-1) + 1 if num_segments is None else \
        _count(num_segments, "segment_sum: num_segments")
    if ids and max(ids) >= n:
        raise ValueError(f"segment_sum: segment id {max(ids)} is not below num_segments = {n}")
    out = zeros((n, *data.shape[1:]), data.dtype, data.backend)
    return index_add(out, (ids,), data) if ids else out
