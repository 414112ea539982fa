"""Special functions in pure NumPy, used by the NumPy backend when SciPy is not installed.

``erf``/``erfc``/``lgamma`` evaluate Python's correctly rounded ``math`` functions element by
element (exact, slower); ``digamma`` and ``polygamma`` use the recurrence to shift the argument
above 10 and then the asymptotic (Bernoulli) series, accurate to ~1e-14 relative for x > 0.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["digamma", "erf", "erfc", "lgamma", "polygamma"]

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _lgamma_scalar(x: float) -> float:
    if x <= 0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


_lgamma = np.vectorize(_lgamma_scalar, otypes=[np.float64])

# B_2k / (2k) for the digamma series and B_2k for polygamma, k = 1..8
_B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510]


def erf(x):
    return _erf(x)


def erfc(x):
    return _erfc(x)


def lgamma(x):
    return _lgamma(x)


def digamma(x):
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    neg = x < 0.5
    # reflection: psi(1 - x) - pi / tan(pi x)
    xr = np.where(neg, 1.0 - x, x)
    acc = np.zeros_like(x)
    for _ in range(10):
        small = xr < 10
        acc = acc - np.where(small, 1.0 / np.where(small, xr, 1.0), 0.0)
        xr = np.where(small, xr + 1.0, xr)
    inv2 = 1.0 / (xr * xr)
    series = np.zeros_like(x)
    for k in range(len(_B2K), 0, -1):
        series = series * inv2 + _B2K[k - 1] / (2 * k)
    val = np.log(xr) - 0.5 / xr - series * inv2 + acc
    with np.errstate(divide="ignore", invalid="ignore"):
        refl = val - np.pi / np.tan(np.pi * x)
    out = np.where(neg, refl, val)
    pole = (x < 0) & (x == np.floor(x))
    # SciPy's conventions: -inf at 0 (from the right), NaN at the negative integers
    out = np.where(x == 0, -np.inf, out)
    return np.where(pole, np.nan, out)


def polygamma(n: int, x):
    if n == 0:
        return digamma(x)
    x = np.asarray(x, dtype=np.float64)
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    fact = math.factorial(n)
    acc = np.zeros_like(x)
    xr = x.copy()
    for _ in range(20):
        small = xr < 20
        acc = acc + np.where(small, fact / np.where(small, xr, 1.0) ** (n + 1), 0.0)
        xr = np.where(small, xr + 1.0, xr)
    tail = math.factorial(n - 1) / xr**n + fact / (2 * xr ** (n + 1))
    for k, b in enumerate(_B2K, start=1):
        coef = b * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
        tail = tail + coef / xr ** (2 * k + n)
    out = sign * (acc + tail)
    return np.where(x <= 0, np.nan, out)
