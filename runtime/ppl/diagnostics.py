"""Convergence diagnostics of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021),
"Rank-normalization, folding, and localization: an improved R-hat":

* ``rhat``: the maximum of the rank-normalised split-R-hat and its folded version;
* ``ess_bulk``: effective sample size of the rank-normalised split chains;
* ``ess_tail``: the smaller ESS of the 5% and 95% quantile indicators.

Autocorrelations use FFT and Geyer's initial monotone positive sequence, as Stan does. Input is
``(chains, draws)`` for one scalar quantity.

The algorithm is written once, below the kernels, against ``_K``; the kernels (splitting, ranks
and normal scores, per-chain moments, autocovariances, the lag means of Geyer's sequence) come
in two implementations, of which ``host_namespace.for_namespace`` picks one at import. With
NumPy (:class:`_NumPyKernels`) they are NumPy's operations on float64 arrays (SciPy's
``ndtri``). Without it (:class:`_ListKernels`, Pyodide) the chains are plain Python lists of
floats, one per chain, and nothing goes element by element through the python arrays; in
Pyodide the FFT autocovariances and the inverse normal CDF run in JavaScript
(``compiled/tb_stats.js``), elsewhere in Python (a radix-2 FFT of two chains at a time, and the
same refined inverse normal CDF as the JavaScript's).
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from array import array
from typing import Any

from ..compiled.js_sampler import js_available, stats_namespace
from ..host_namespace import for_namespace, xp
from .distributions.special import ACKLAM_A, ACKLAM_B, ACKLAM_C, ACKLAM_D, ACKLAM_P_LOW

__all__ = ["ess_bulk", "ess_tail", "rhat", "split_chains", "z_scale"]


def _ndtri_fallback(p: xp.ndarray) -> xp.ndarray:
    """Acklam's rational approximation + a Halley step, on NumPy arrays without SciPy."""
    a, b, c, d = ACKLAM_A, ACKLAM_B, ACKLAM_C, ACKLAM_D
    p = xp.asarray(p, dtype=xp.float64)
    q = xp.where(p < 0.5, p, 1 - p)
    low = q < ACKLAM_P_LOW
    r = xp.sqrt(-2 * xp.log(xp.where(low, q, 0.5)))
    tail = (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) / (
        (((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1)
    s = q - 0.5
    t = s * s
    mid = (((((a[0] * t + a[1]) * t + a[2]) * t + a[3]) * t + a[4]) * t + a[5]) * s / (
        ((((b[0] * t + b[1]) * t + b[2]) * t + b[3]) * t + b[4]) * t + 1)
    out = xp.where(low, tail, mid)
    out = xp.where(p < 0.5, out, -out)
    # one Newton step on the normal CDF
    erfc = xp.vectorize(math.erfc)
    e = 0.5 * erfc(-out / math.sqrt(2)) - p
    u = e * math.sqrt(2 * math.pi) * xp.exp(out * out / 2)
    return out - u / (1 + out * u / 2)


def _ndtri(p: xp.ndarray) -> xp.ndarray:
    """Inverse of the standard normal CDF (SciPy's when available)."""
    try:
        from scipy.special import ndtri

        return ndtri(p)
    except ImportError:  # pragma: no cover
        return _ndtri_fallback(p)


# ---- list-of-floats helpers (no NumPy) ----------------------------------------------------------
_JS: list[Any] = []  # [the tb_stats.js namespace, or None where there is no JavaScript]


def _stats_js() -> Any:
    if not _JS:
        if js_available() is None:
            _JS.append(stats_namespace())
        else:
            _JS.append(None)
    return _JS[0]


def _to_js(values: list[float]) -> Any:
    import js  # Pyodide's bridge: only where _stats_js() found JavaScript

    out = js.Float64Array.new(len(values))
    if values:
        out.assign(array("d", values))
    return out


def _from_js(typed: Any) -> list[float]:
    return typed.to_py().tolist()


# inverse normal CDF: Acklam's start (rel. error < 1.2e-9), one Halley step on Phi(x) = q,


# q = min(p, 1 - p) (exact), Phi - 1/2 through erf for q >= 1/4 and Phi through erfc below,


# so that neither side cancels; the same scheme as tb_stats.js (see there), on math.erf(c)


_SQRT2 = math.sqrt(2.0)


_SQRT2PI = math.sqrt(2.0 * math.pi)


_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _ndtri_start(q: float) -> float:
    if q < ACKLAM_P_LOW:
        a, b, c, d, e, f = ACKLAM_C
        g, h, i, j = ACKLAM_D
        r = math.sqrt(-2.0 * math.log(q))
        return (((((a * r + b) * r + c) * r + d) * r + e) * r + f) / (
            (((g * r + h) * r + i) * r + j) * r + 1)
    a, b, c, d, e, f = ACKLAM_A
    g, h, i, j, k = ACKLAM_B
    s = q - 0.5
    t = s * s
    return (((((a * t + b) * t + c) * t + d) * t + e) * t + f) * s / (
        ((((g * t + h) * t + i) * t + j) * t + k) * t + 1)


def _ndtri_tail(q: float) -> float:
    """q < 1e-290: Newton on log Phi(x) = log q, Phi(x) = phi(x)/|x| S(x) asymptotically."""
    lq = math.log(q)
    x = _ndtri_start(q)
    for _ in range(6):
        ax = -x
        u = 1.0 / (ax * ax)
        terms = [1.0]
        for k in range(10):
            terms.append(terms[-1] * -(2 * k + 1) * u)
        s = 0.0
        for t in reversed(terms):
            s += t
        f = -0.5 * ax * ax - math.log(ax) - _HALF_LOG_2PI + math.log(s) - lq
        dx = f * s / ax
        x -= dx
        if abs(dx) <= 1e-17 * ax:
            break
    return x


def _ndtri_lower(q: float) -> float:
    if q < 1e-290:
        return _ndtri_tail(q)
    x = _ndtri_start(q)
    if q >= 0.25:
        e = 0.5 * math.erf(x / _SQRT2) - (q - 0.5)
    else:
        e = 0.5 * math.erfc(-x / _SQRT2) - q
    u = e * _SQRT2PI * math.exp(0.5 * x * x)
    return x - u / (1 + 0.5 * x * u)


def _ndtri1(p: float) -> float:
    if not 0.0 <= p <= 1.0:
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p == 0.5:
        return 0.0
    return _ndtri_lower(p) if p < 0.5 else -_ndtri_lower(1.0 - p)


def _ndtri_list(p: list[float]) -> list[float]:
    js = _stats_js()
    if js is not None:
        return _from_js(js.ndtri(_to_js(p)))
    return [_ndtri1(v) for v in p]


_SCORES: dict[int, list[float]] = {}  # size -> normal scores of the ranks 1..size


def _scores(size: int) -> list[float]:
    """``ndtri((r - 3/8) / (size + 1/4))`` for the ranks r = 1..size, made once per size."""
    table = _SCORES.get(size)
    if table is None:
        denom = size + 0.25
        table = _ndtri_list([(float(r) - 3.0 / 8.0) / denom for r in range(1, size + 1)])
        if len(_SCORES) >= 8:
            _SCORES.clear()
        _SCORES[size] = table
    return table


def _z_flat(flat: list[float]) -> list[float]:
    """Normal scores of the fractional ranks, ties averaged (NaNs last and tied together),
    as the NumPy kernel's stable argsort and ``unique`` give them. Without NaNs the rank of
    v is one plus the number of draws below it, its position in the sorted draws
    (``bisect_left``); a tie of c draws from position s shares the rank s + (c + 1) / 2,
    the mean of positions s+1..s+c, which is (left + right + 1) / 2 with ``right`` from
    ``bisect_right``."""
    size = len(flat)
    if not size:
        return []
    denom = size + 0.25
    js = _stats_js()
    if js is not None:  # the same ranks and (r - 3/8) / denom in tb_stats.js, one crossing
        return _from_js(js.ndtri(js.affine(js.ranks(_to_js(flat)), 3.0 / 8.0, denom)))
    if any(map(math.isnan, flat)):
        return _z_nan(flat)
    s = sorted(flat)
    left = list(map(bisect.bisect_left, itertools.repeat(s, size), flat))
    if len(set(flat)) == size:  # no ties: every rank is left + 1
        return list(map(_scores(size).__getitem__, left))
    right = map(bisect.bisect_right, itertools.repeat(s, size), flat)
    return _ndtri_list([((lo + hi + 1) / 2.0 - 3.0 / 8.0) / denom
                        for lo, hi in zip(left, right)])


def _z_nan(flat: list[float]) -> list[float]:
    """_z_flat of draws with NaNs: ranks one by one (NaNs after every number)."""
    size = len(flat)
    order = sorted(range(size), key=lambda i: (flat[i] != flat[i],
                                               0.0 if flat[i] != flat[i] else flat[i]))
    ranks = [0.0] * size
    i = 0
    while i < size:
        v = flat[order[i]]
        j = i + 1
        if v == v:
            while j < size and flat[order[j]] == v:
                j += 1
        else:
            j = size  # the NaNs are last, one tie
        r = i + (j - i + 1) / 2.0
        for k in order[i:j]:
            ranks[k] = r
        i = j
    denom = size + 0.25
    return _ndtri_list([(r - 3.0 / 8.0) / denom for r in ranks])


def _flat(x: list[list[float]]) -> list[float]:
    return list(itertools.chain.from_iterable(x))


_TWIDDLES: dict[tuple[int, int], list[complex]] = {}


def _twiddles(n: int, sign: int) -> list[complex]:
    tw = _TWIDDLES.get((n, sign))
    if tw is None:
        tw = [complex(math.cos(2 * math.pi * k / n), sign * math.sin(2 * math.pi * k / n))
              for k in range(n // 2)]
        _TWIDDLES[(n, sign)] = tw
    return tw


def _fft_pow2(x: list[complex], inverse: bool) -> list[complex]:
    """Radix-2 Cooley-Tukey (decimation in time), unnormalised, ``len(x)`` a power of two.

    The butterflies of the iterative bit-reversal form (``e + w o`` and ``e - w o``, twiddles
    ``w = tw[k * n / len]`` of the table for ``n``), computed by halves with list
    comprehensions, which run several times faster in CPython than indexing element by
    element."""
    n = len(x)
    if n <= 1:
        return list(x)
    return _fft_rec(list(x), _twiddles(n, 1 if inverse else -1), 1)


def _fft_rec(x: list[complex], tw: list[complex], stride: int) -> list[complex]:
    n = len(x)
    if n == 2:
        a, b = x
        return [a + b, a - b]
    if n == 4:
        a, b, c, d = x
        ac, ac_, bd, bd_ = a + c, a - c, b + d, (b - d) * tw[stride]
        return [ac + bd, ac_ + bd_, ac - bd, ac_ - bd_]
    even = _fft_rec(x[0::2], tw, stride * 2)
    odd = _fft_rec(x[1::2], tw, stride * 2)
    t = [o * w for o, w in zip(odd, tw[::stride])]
    return [e + u for e, u in zip(even, t)] + [e - u for e, u in zip(even, t)]


def _acov_python(centred: list[list[float]], n: int, size: int) -> list[list[float]]:
    """Two real chains a, b at a time as one complex FFT of a + ib: with Z its transform
    and Z*_k = conj(Z_{-k}), A = (Z + Z*) / 2 and B = (Z - Z*) / 2i are the chains' own;
    the inverse FFT of |A|^2 + i |B|^2 is acov_a + i acov_b (both real: |A|^2, |B|^2 are
    real and even)."""
    out = []
    pad = [0j] * (size - n)
    scale = 1.0 / size
    for i in range(0, len(centred), 2):
        a = centred[i]
        b = centred[i + 1] if i + 1 < len(centred) else [0.0] * n
        z = _fft_pow2([complex(u, v) for u, v in zip(a, b)] + pad, False)
        zc = [z[0].conjugate()] + [w.conjugate() for w in reversed(z[1:])]
        spec = []
        for w, wc in zip(z, zc):
            s, d = w + wc, w - wc  # 2A, 2iB
            spec.append(complex((s.real * s.real + s.imag * s.imag) * 0.25,
                                (d.real * d.real + d.imag * d.imag) * 0.25))
        y = _fft_pow2(spec, True)[:n]
        out.append([w.real * scale / n for w in y])
        if i + 1 < len(centred):
            out.append([w.imag * scale / n for w in y])
    return out


# ---- the kernels, in two implementations ------------------------------------------------------
class _NumPyKernels:
    """The kernels on NumPy float64 arrays ``(chains, draws)`` (only chosen where ``xp`` is
    NumPy: they use NumPy functions the python arrays do not implement)."""

    def kernel_name(self) -> str:
        return "numpy"

    def host(self, x: Any) -> Any:
        """(chains, draws) in the kernels' form: a float64 array."""
        return xp.asarray(x, dtype=xp.float64)

    def dims(self, x: Any) -> tuple[int, int]:
        return x.shape

    def split(self, x: Any) -> Any:
        n = x.shape[1] // 2
        return xp.concatenate([x[:, :n], x[:, x.shape[1] - n:]], axis=0)

    def z(self, x: Any) -> Any:
        flat = x.ravel()
        order = xp.argsort(flat, kind="mergesort")
        ranks = xp.empty(flat.size, dtype=xp.float64)
        ranks[order] = xp.arange(1, flat.size + 1)
        # average ranks of ties
        sorted_vals = flat[order]
        _, start, counts = xp.unique(sorted_vals, return_index=True, return_counts=True)
        for s, c in zip(start, counts):
            if c > 1:
                ranks[order[s:s + c]] = s + (c + 1) / 2.0
        return _ndtri((ranks - 3.0 / 8.0) / (flat.size + 0.25)).reshape(x.shape)

    def folded(self, x: Any) -> Any:
        return xp.abs(x - xp.median(x))

    def all_finite(self, x: Any) -> bool:
        return bool(xp.all(xp.isfinite(x)))

    def constant(self, x: Any) -> bool:
        return bool(xp.ptp(x) == 0)

    def row_means(self, x: Any) -> Any:
        return x.mean(axis=1)

    def row_vars(self, x: Any) -> Any:
        return x.var(axis=1, ddof=1)

    def autocovariance(self, x: xp.ndarray) -> xp.ndarray:
        n = x.shape[-1]
        size = 1 << (2 * n - 1).bit_length()
        centred = x - x.mean(axis=-1, keepdims=True)
        f = xp.fft.rfft(centred, n=size, axis=-1)
        acov = xp.fft.irfft(f * xp.conjugate(f), n=size, axis=-1)[..., :n]
        return acov / n

    def lag_mean(self, acov: Any, t: int) -> Any:
        return acov[:, t].mean()

    def zeros(self, n: int) -> Any:
        return xp.zeros(n)

    def head_sum(self, v: Any, k: int) -> Any:
        return v[:k].sum()

    def indicator(self, x: Any, q: float) -> Any:
        return xp.asarray(x <= q, dtype=xp.float64)

    def split_chains(self, x: xp.ndarray) -> xp.ndarray:
        """(chains, draws) -> (2*chains, draws//2): each chain cut in two halves."""
        return self.split(self.host(x))

    def z_scale(self, x: xp.ndarray) -> xp.ndarray:
        """Rank-normalise all draws jointly: fractional ranks to normal quantiles."""
        return self.z(x)


class _ListKernels:
    """The kernels on one list of floats per chain (no NumPy; tb_stats.js where there is
    JavaScript)."""

    def kernel_name(self) -> str:
        return "js" if _stats_js() is not None else "python"

    def host(self, x: Any) -> list[list[float]]:
        """(chains, draws) in the kernels' form: one list of floats per chain."""
        a = xp.asarray(x, dtype=xp.float64)
        m, n = a.shape
        d = a._data
        return [d[i * n:(i + 1) * n] for i in range(m)]

    def dims(self, x: list[list[float]]) -> tuple[int, int]:
        return len(x), (len(x[0]) if x else 0)

    def split(self, x: list[list[float]]) -> list[list[float]]:
        total = len(x[0]) if x else 0
        n = total // 2
        return [r[:n] for r in x] + [r[total - n:] for r in x]

    def z(self, x: list[list[float]]) -> list[list[float]]:
        m, n = self.dims(x)
        z = _z_flat(_flat(x))
        return [z[i * n:(i + 1) * n] for i in range(m)]

    def folded(self, x: list[list[float]]) -> list[list[float]]:
        flat = _flat(x)
        if not flat or any(map(math.isnan, flat)):
            med = math.nan
        else:
            flat.sort()
            mid = len(flat) // 2
            med = flat[mid] if len(flat) % 2 else (flat[mid - 1] + flat[mid]) / 2.0
        return [list(map(math.fabs, map(med.__rsub__, r))) for r in x]

    def all_finite(self, x: list[list[float]]) -> bool:
        # a finite sum means finite terms; an inf/NaN sum (or an overflow) is checked per term
        if all(math.isfinite(sum(r)) for r in x):
            return True
        return all(map(math.isfinite, itertools.chain.from_iterable(x)))

    def constant(self, x: list[list[float]]) -> bool:
        return max(map(max, x)) == min(map(min, x))

    def row_means(self, x: list[list[float]]) -> Any:
        return xp.asarray([math.fsum(r) / len(r) for r in x], dtype=xp.float64)

    def row_vars(self, x: list[list[float]]) -> Any:
        out = []
        for r in x:
            mu = math.fsum(r) / len(r)
            d = list(map(mu.__rsub__, r))  # v - mu
            out.append(math.fsum(map(operator.mul, d, d)) / (len(r) - 1))
        return xp.asarray(out, dtype=xp.float64)

    def autocovariance(self, x: list[list[float]]) -> list[list[float]]:
        m, n = self.dims(x)
        size = 1 << (2 * n - 1).bit_length()
        js = _stats_js()
        if js is None:
            centred = []
            for r in x:
                mu = math.fsum(r) / n
                centred.append([v - mu for v in r])
            return _acov_python(centred, n, size)
        flat = _from_js(js.autocovariance(_to_js(_flat(x)), m, n))
        return [flat[i * n:(i + 1) * n] for i in range(m)]

    def lag_mean(self, acov: list[list[float]], t: int) -> float:
        return math.fsum([r[t] for r in acov]) / len(acov)

    def zeros(self, n: int) -> list[float]:
        return [0.0] * n

    def head_sum(self, v: list[float], k: int) -> float:
        return math.fsum(v[:k])

    def indicator(self, x: Any, q: float) -> list[list[float]]:
        return [[1.0 if v <= q else 0.0 for v in r] for r in self.host(x)]  # NaN: 0.0, as NumPy

    def split_chains(self, x: Any) -> Any:
        """(chains, draws) -> (2*chains, draws//2): each chain cut in two halves."""
        s = self.split(self.host(x))
        m, n = self.dims(s)
        return xp.from_flat(_flat(s), (m, n), xp.float64)

    def z_scale(self, x: Any) -> Any:
        """Rank-normalise all draws jointly: fractional ranks to normal quantiles."""
        a = xp.asarray(x, dtype=xp.float64)
        return xp.from_flat(_z_flat(list(a._data)), a.shape, xp.float64)


_K = for_namespace(numpy=_NumPyKernels, python=_ListKernels)()
_kernel_name = _K.kernel_name  # which kernels run: "numpy", "js" or "python" (tests read it)
_autocovariance = _K.autocovariance


def split_chains(x: Any) -> Any:
    """(chains, draws) -> (2*chains, draws//2): each chain cut in two halves."""
    return _K.split_chains(x)


def z_scale(x: Any) -> Any:
    """Rank-normalise all draws jointly: fractional ranks to normal quantiles."""
    return _K.z_scale(x)


# ---- the algorithm ------------------------------------------------------------------------------
def _rhat_basic(x: Any) -> float:
    n = _K.dims(x)[1]
    if n < 2 or not _K.all_finite(x):
        return float("nan")
    chain_means = _K.row_means(x)
    chain_vars = _K.row_vars(x)
    b = n * chain_means.var(ddof=1)
    w = chain_vars.mean()
    if w == 0:
        return float("nan") if b == 0 else float("inf")
    var_plus = (n - 1) / n * w + b / n
    return float(math.sqrt(var_plus / w))


def rhat(x: Any) -> float:
    """Rank-normalised split-R-hat (max of bulk and folded)."""
    s = _K.split(_K.host(x))
    if _K.dims(s)[1] < 2:
        return float("nan")
    bulk = _rhat_basic(_K.z(s))
    folded = _rhat_basic(_K.z(_K.folded(s)))
    return max(bulk, folded)


def _ess(x: Any) -> float:
    """ESS of (chains, draws) in the kernels' form, Stan's algorithm."""
    m, n = _K.dims(x)
    if n < 4 or not _K.all_finite(x):
        return float("nan")
    if _K.constant(x):
        return float("nan")
    acov = _K.autocovariance(x)
    chain_mean = _K.row_means(x)
    mean_var = _K.lag_mean(acov, 0) * n / (n - 1)
    var_plus = mean_var * (n - 1) / n
    if m > 1:
        var_plus += chain_mean.var(ddof=1)
    rho = _K.zeros(n)
    rho[0] = 1.0
    t = 1
    # Geyer's initial positive sequence over pairs
    rho_even = 1.0
    rho_odd = 1.0 - (mean_var - _K.lag_mean(acov, 1)) / var_plus
    rho[1] = rho_odd
    t = 1
    while t < n - 3 and rho_even + rho_odd > 0:
        rho_even = 1.0 - (mean_var - _K.lag_mean(acov, t + 1)) / var_plus
        rho_odd = 1.0 - (mean_var - _K.lag_mean(acov, t + 2)) / var_plus
        if rho_even + rho_odd >= 0:
            rho[t + 1] = rho_even
            rho[t + 2] = rho_odd
        t += 2
    last = t - 1  # index of the last even lag examined
    if rho_even > 0:  # Stan's improved estimate: less variance for antithetic chains
        rho[last] = rho_even
    # initial monotone sequence
    for k in range(2, last - 1, 2):
        if rho[k] + rho[k + 1] > rho[k - 2] + rho[k - 1]:
            rho[k] = rho[k + 1] = (rho[k - 2] + rho[k - 1]) / 2
    tau = -1.0 + 2.0 * _K.head_sum(rho, last) + rho[last]
    tau = max(tau, 1.0 / math.log10(m * n))
    return float(m * n / tau)


def ess_bulk(x: Any) -> float:
    """Bulk effective sample size (rank-normalised split chains)."""
    return _ess(_K.z(_K.split(_K.host(x))))


def ess_tail(x: Any) -> float:
    """Tail effective sample size: min over the 5% and 95% quantile indicators."""
    x = xp.asarray(x, dtype=xp.float64)
    q05, q95 = xp.quantile(x, [0.05, 0.95])  # of every draw, before splitting (as Stan)
    return min(_ess(_K.split(_K.indicator(x, q05))), _ess(_K.split(_K.indicator(x, q95))))
