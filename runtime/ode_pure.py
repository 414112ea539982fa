"""The array namespace of :mod:`.ode`'s integrators where NumPy cannot be imported (Pyodide).

The python backend's arrays (:mod:`.backends.python_arrays`) under NumPy's names, plus the few
NumPy functions the integrators use that those arrays leave out: ``empty``, ``eye``, ``diff``,
``argmax``, ``array_equal``, ``finfo(float).eps`` and ``linalg.solve``/``linalg.inv`` (Gaussian
elimination with partial pivoting, for the Rosenbrock methods' small dense systems; an exactly
zero pivot raises ``linalg.LinAlgError``, as LAPACK's singular-matrix error does). ``float64``
is Python's ``float``: a dtype for ``asarray`` and a constructor for scalars, as NumPy's is.
"""

from __future__ import annotations

import builtins
import itertools
import sys
from types import SimpleNamespace
from typing import Any

from .backends import python_arrays as pa

abs = pa.abs  # NumPy's names, as the integrators call them
all = pa.all
array = pa.array
asarray = pa.asarray
concatenate = pa.concatenate
full = pa.full
inf = pa.inf
isfinite = pa.isfinite
maximum = pa.maximum
mean = pa.mean
nan = pa.nan
ndarray = pa.ndarray
sqrt = pa.sqrt
zeros = pa.zeros
zeros_like = pa.zeros_like
float64 = float


def empty(shape: Any, dtype: Any = float) -> pa.ndarray:
    return pa.zeros(shape, dtype)


def eye(n: int, dtype: Any = float) -> pa.ndarray:
    return pa.from_flat([1.0 if i % (n + 1) == 0 else 0.0 for i in range(n * n)], (n, n),
                        dtype)


def diff(a: Any) -> pa.ndarray:
    """Differences of consecutive elements of a vector."""
    v = pa.asarray(a).tolist()
    return pa.asarray([b - c for c, b in itertools.pairwise(v)], dtype=float)


def argmax(a: Any) -> int:
    """The first index of the largest element (bools: of the first True), flat."""
    v = pa.asarray(a)._data
    best = 0
    for i, x in enumerate(v):
        if x > v[best]:
            best = i
    return best


def array_equal(a: Any, b: Any, equal_nan: bool = False) -> bool:
    x, y = pa.asarray(a), pa.asarray(b)
    if x.shape != y.shape:
        return False
    return builtins.all(u == w or (equal_nan and u != u and w != w)
                        for u, w in zip(x._data, y._data))



def finfo(dtype: Any) -> SimpleNamespace:
    if dtype not in (float, "float64", "float"):
        raise TypeError(f"finfo: only float64 here, got {dtype!r}")
    return SimpleNamespace(eps=sys.float_info.epsilon, max=sys.float_info.max,
                           tiny=sys.float_info.min)


class LinAlgError(ValueError):
    """A singular matrix in ``linalg.solve``/``linalg.inv``."""


def _solve(a: Any, b: Any) -> pa.ndarray:
    """x with a x = b (a [n, n]; b [n] or [n, k]): row-reduced with partial pivoting."""
    a, b = pa.asarray(a, dtype=float), pa.asarray(b, dtype=float)
    n = a.shape[0]
    if a.shape != (n, n) or b.shape[:1] != (n,) or b.ndim > 2:
        raise ValueError(f"solve: a must be square and b match it, got {a.shape} and {b.shape}")
    k = 1 if b.ndim == 1 else b.shape[1]
    m = [a._data[i * n:(i + 1) * n] for i in range(n)]
    r = [b._data[i * k:(i + 1) * k] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda i: pa._abs(m[i][c]))
        if m[p][c] == 0.0 or m[p][c] != m[p][c]:
            raise LinAlgError("Singular matrix")
        m[c], m[p], r[c], r[p] = m[p], m[c], r[p], r[c]
        piv, row, rrow = m[c][c], m[c], r[c]
        for i in range(c + 1, n):
            f = m[i][c] / piv
            if f:
                mi, ri = m[i], r[i]
                for j in range(c, n):
                    mi[j] -= f * row[j]
                for j in range(k):
                    ri[j] -= f * rrow[j]
    for c in range(n - 1, -1, -1):
        row, rc = m[c], r[c]
        for j in range(k):
            s = rc[j]
            for i in range(c + 1, n):
                s -= row[i] * r[i][j]
            rc[j] = s / row[c]
    flat = [v for row in r for v in row]
    return pa.from_flat(flat, b.shape, float)


def _inv(a: Any) -> pa.ndarray:
    return _solve(a, eye(pa.asarray(a).shape[0]))


linalg = SimpleNamespace(solve=_solve, inv=_inv, LinAlgError=LinAlgError)
