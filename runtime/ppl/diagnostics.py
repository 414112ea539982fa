"""Convergence diagnostics of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021),
"Rank-normalization, folding, and localization: an improved R-hat":

* ``rhat``: the maximum of the rank-normalised split-R-hat and its folded version;
* ``ess_bulk``: effective sample size of the rank-normalised split chains;
* ``ess_tail``: the smaller ESS of the 5% and 95% quantile indicators.

Autocorrelations use FFT and Geyer's initial monotone positive sequence, as Stan does. Input is
``(chains, draws)`` for one scalar quantity.
"""

from __future__ import annotations

import math

from ..host_namespace import NAME, np

__all__ = ["ess_bulk", "ess_tail", "rhat", "split_chains", "z_scale"]


def _ndtri(p: np.ndarray) -> np.ndarray:
    """Inverse of the standard normal CDF (SciPy's when available, with NumPy arrays)."""
    if NAME == "numpy":
        try:
            from scipy.special import ndtri

            return ndtri(p)
        except ImportError:  # pragma: no cover
            pass
    # Acklam's rational approximation + Newton step
    return _ndtri_fallback(p)


def _ndtri_fallback(p: np.ndarray) -> np.ndarray:
    a = [-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
         1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00]
    b = [-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
         6.680131188771972e01, -1.328068155288572e01]
    c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
         -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00]
    d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
         3.754408661907416e00]
    p = np.asarray(p, dtype=np.float64)
    q = np.where(p < 0.5, p, 1 - p)
    low = q < 0.02425
    r = np.sqrt(-2 * np.log(np.where(low, q, 0.5)))
    tail = (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) / (
        (((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1)
    s = q - 0.5
    t = s * s
    mid = (((((a[0] * t + a[1]) * t + a[2]) * t + a[3]) * t + a[4]) * t + a[5]) * s / (
        ((((b[0] * t + b[1]) * t + b[2]) * t + b[3]) * t + b[4]) * t + 1)
    out = np.where(low, tail, mid)
    out = np.where(p < 0.5, out, -out)
    # one Newton step on the normal CDF
    erfc = np.vectorize(math.erfc)
    e = 0.5 * erfc(-out / math.sqrt(2)) - p
    u = e * math.sqrt(2 * math.pi) * np.exp(out * out / 2)
    return out - u / (1 + out * u / 2)


def split_chains(x: np.ndarray) -> np.ndarray:
    """(chains, draws) -> (2*chains, draws//2): each chain cut in two halves."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[1] // 2
    return np.concatenate([x[:, :n], x[:, x.shape[1] - n:]], axis=0)


def z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalise all draws jointly: fractional ranks to normal quantiles."""
    flat = x.ravel()
    order = np.argsort(flat, kind="mergesort")
    ranks = np.empty(flat.size, dtype=np.float64)
    ranks[order] = np.arange(1, flat.size + 1)
    # average ranks of ties
    sorted_vals = flat[order]
    _, start, counts = np.unique(sorted_vals, return_index=True, return_counts=True)
    for s, c in zip(start, counts):
        if c > 1:
            ranks[order[s:s + c]] = s + (c + 1) / 2.0
    return _ndtri((ranks - 3.0 / 8.0) / (flat.size + 0.25)).reshape(x.shape)


def _rhat_basic(x: np.ndarray) -> float:
    n = x.shape[1]
    if n < 2 or not np.all(np.isfinite(x)):
        return float("nan")
    chain_means = x.mean(axis=1)
    chain_vars = x.var(axis=1, ddof=1)
    b = n * chain_means.var(ddof=1)
    w = chain_vars.mean()
    if w == 0:
        return float("nan") if b == 0 else float("inf")
    var_plus = (n - 1) / n * w + b / n
    return float(math.sqrt(var_plus / w))


def rhat(x: np.ndarray) -> float:
    """Rank-normalised split-R-hat (max of bulk and folded)."""
    s = split_chains(x)
    if s.shape[1] < 2:
        return float("nan")
    bulk = _rhat_basic(z_scale(s))
    folded = _rhat_basic(z_scale(np.abs(s - np.median(s))))
    return max(bulk, folded)


def _autocovariance(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    size = 1 << (2 * n - 1).bit_length()
    centred = x - x.mean(axis=-1, keepdims=True)
    f = np.fft.rfft(centred, n=size, axis=-1)
    acov = np.fft.irfft(f * np.conjugate(f), n=size, axis=-1)[..., :n]
    return acov / n


def _ess(x: np.ndarray) -> float:
    """ESS of (chains, draws), Stan's algorithm."""
    m, n = x.shape
    if n < 4 or not np.all(np.isfinite(x)):
        return float("nan")
    if np.ptp(x) == 0:
        return float("nan")
    acov = _autocovariance(x)
    chain_mean = x.mean(axis=1)
    mean_var = acov[:, 0].mean() * n / (n - 1)
    var_plus = mean_var * (n - 1) / n
    if m > 1:
        var_plus += chain_mean.var(ddof=1)
    rho = np.zeros(n)
    rho[0] = 1.0
    t = 1
    # Geyer's initial positive sequence over pairs
    rho_even = 1.0
    rho_odd = 1.0 - (mean_var - acov[:, 1].mean()) / var_plus
    rho[1] = rho_odd
    t = 1
    while t < n - 3 and rho_even + rho_odd > 0:
        rho_even = 1.0 - (mean_var - acov[:, t + 1].mean()) / var_plus
        rho_odd = 1.0 - (mean_var - acov[:, t + 2].mean()) / var_plus
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
    tau = -1.0 + 2.0 * rho[:last].sum() + rho[last]
    tau = max(tau, 1.0 / math.log10(m * n))
    return float(m * n / tau)


def ess_bulk(x: np.ndarray) -> float:
    """Bulk effective sample size (rank-normalised split chains)."""
    return _ess(z_scale(split_chains(x)))


def ess_tail(x: np.ndarray) -> float:
    """Tail effective sample size: min over the 5% and 95% quantile indicators."""
    x = np.asarray(x, dtype=np.float64)
    q05, q95 = np.quantile(x, [0.05, 0.95])  # of every draw, before splitting (as Stan)
    return min(_ess(split_chains(x <= q05)), _ess(split_chains(x <= q95)))
