"""The Python half of greta's linear-algebra functions on lazy arrays
(``r-client/R/maths_functions.R``): ``forwardsolve``, ``backsolve``, ``chol2inv``,
``chol2symm``, ``cov2cor``, ``rdist``, ``solve`` and ``eigen``, each written with runtime ops
(differentiable, so each can sit inside a model). R's integer arguments arrive as numbers; R
vectors as columns (``ppl._r_array``)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import runtime as tb
from .ppl import _r_array, lazy_out

__all__ = ["backsolve", "chol2inv", "chol2symm", "cov2cor", "eigen", "rdist", "solve",
           "triangular_solve"]


def _matrix(x: Any, arg: str, fn: str, square: bool = False) -> Any:
    x = _r_array(x, f"{fn}: {arg}")
    if isinstance(x, float):
        x = np.full((1, 1), x)
    if len(x.shape) != 2:
        raise ValueError(f"{fn}: {arg} must be a matrix, not of dimension {list(x.shape)}")
    if square and x.shape[0] != x.shape[1]:
        raise ValueError(f"{fn}: {arg} must be a square matrix, not of dimension "
                         f"{list(x.shape)}")
    return x


def _size(k: Any, n: int, arg: str, fn: str) -> int:
    kk = int(k) if float(k) == int(k) else -1
    if not 1 <= kk <= n:
        raise ValueError(f"{fn}: {arg} must be a whole number between 1 and {n}, got {k!r}")
    return kk


def _out(x: Any) -> dict[str, Any]:
    with warnings.catch_warnings():  # reference values (zeros) may divide by zero
        warnings.simplefilter("ignore", RuntimeWarning)
        return lazy_out(x)


def triangular_solve(a: Any, b: Any, k: Any, upper_tri: bool, transpose: bool,
                     fn: str) -> dict[str, Any]:
    """R's ``forwardsolve``/``backsolve``: ``y`` with ``op(T) y = b``, ``T`` the ``k x k``
    leading triangle of ``a`` (the upper one if ``upper_tri``; the other is not read) and
    ``op`` the transpose if ``transpose``; ``b``'s first ``k`` rows."""
    a = _matrix(a, "l" if fn == "forwardsolve" else "r", fn)
    b = _matrix(b, "x", fn)
    n = min(a.shape)
    kk = _size(k, n, "k", fn)
    if b.shape[0] < kk:
        raise ValueError(f"{fn}: x must have at least k = {kk} rows, not {b.shape[0]}")
    t = a[:kk, :kk]
    t = tb.triu(t) if upper_tri else tb.tril(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y = tb.triangular_solve(t, b[:kk, :], lower=not upper_tri, transpose_a=bool(transpose))
    return _out(y)


def backsolve(r: Any, x: Any, k: Any, upper_tri: bool, transpose: bool) -> dict[str, Any]:
    return triangular_solve(r, x, k, upper_tri, transpose, "backsolve")


def chol2inv(x: Any, size: Any) -> dict[str, Any]:
    """R's ``chol2inv``: ``(R' R)^-1`` from the upper triangle ``R`` of ``x[1:size, 1:size]``,
    as ``R^-1 R^-T`` (two triangular solves, no general inverse)."""
    x = _matrix(x, "x", "chol2inv")
    kk = _size(size, min(x.shape), "size", "chol2inv")
    r = tb.triu(x[:kk, :kk])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r_inv = tb.triangular_solve(r, np.eye(kk), lower=False)
        return _out(tb.matmul(r_inv, tb.transpose(r_inv)))


def chol2symm(x: Any) -> dict[str, Any]:
    """greta's ``chol2symm``: the symmetric ``t(x) %*% x`` of an upper Cholesky factor ``x``."""
    x = _matrix(x, "x", "chol2symm", square=True)
    r = tb.triu(x)
    return _out(tb.matmul(tb.transpose(r), r))


def cov2cor(v: Any) -> dict[str, Any]:
    """R's ``cov2cor``: ``V[i, j] / sqrt(V[i, i] V[j, j])``, with the diagonal exactly 1."""
    v = _matrix(v, "V", "cov2cor", square=True)
    p = v.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        inv_sd = tb.rsqrt(tb.reshape(v[tb.arange(p), tb.arange(p)], (p, 1)))
        r = v * inv_sd * tb.transpose(inv_sd)
        return _out(tb.where(tb.tensor(np.eye(p, dtype=bool)), 1.0, r))


def rdist(x1: Any, x2: Any) -> dict[str, Any]:
    """greta's ``rdist``: the Euclidean distances between the rows of ``x1`` and of ``x2``
    (``x1``'s own rows when ``x2`` is ``NULL``), an ``nrow(x1) x nrow(x2)`` matrix. The
    derivative at a zero distance is taken as 0 (sqrt's is infinite there)."""
    x1 = _matrix(x1, "x1", "rdist")
    x2 = x1 if x2 is None else _matrix(x2, "x2", "rdist")
    if x1.shape[1] != x2.shape[1]:
        raise ValueError(f"rdist: x1 and x2 must have the same number of columns, not "
                         f"{x1.shape[1]} and {x2.shape[1]}")
    n1, n2, d = x1.shape[0], x2.shape[0], x1.shape[1]
    diff = tb.reshape(x1, (n1, 1, d)) - tb.reshape(x2, (1, n2, d))
    d2 = tb.sum(diff * diff, axis=2)
    positive = d2 > 0.0
    # sqrt of 1 where d2 is 0: its derivative is finite, and the where's zero branch is taken
    return _out(tb.where(positive, tb.sqrt(tb.where(positive, d2, 1.0)), 0.0))


def solve(a: Any, b: Any) -> dict[str, Any]:
    """R's ``solve(a, b)``: ``x`` with ``a %*% x = b``; ``solve(a)`` (``b`` ``NULL``) the
    inverse."""
    a = _matrix(a, "a", "solve", square=True)
    if b is None:
        b = np.eye(a.shape[0])
    b = _matrix(b, "b", "solve")
    if b.shape[0] != a.shape[0]:
        raise ValueError(f"solve: b must have nrow(a) = {a.shape[0]} rows, not {b.shape[0]}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _out(tb.solve(a, b))


def eigen(x: Any, only_values: bool) -> dict[str, Any]:
    """R's ``eigen(x, symmetric = TRUE)``: the eigenvalues of the symmetric ``x`` in
    decreasing order (a column), and unless ``only_values`` the eigenvectors as the columns
    of a matrix, in the same order. Only the lower triangle of ``x`` is read, as R's."""
    x = _matrix(x, "x", "eigen", square=True)
    n = x.shape[0]
    lower = tb.tril(x)
    sym = lower + tb.transpose(tb.tril(x, -1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        values, vectors = tb.eigh(sym)
        rev = np.arange(n - 1, -1, -1)
        out = {"values": _out(tb.reshape(values[rev], (n, 1)))}
        if not only_values:
            out["vectors"] = _out(vectors[:, rev])
    return out
