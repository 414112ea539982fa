"""Random variate generation for the families, from ``tensorbridge.random.Generator`` streams
(uniform and normal tensors) transformed with tensorbridge ops on the parameters' backend.

Rejection samplers propose for every element at once and keep the first accepted proposal per
element, looping on the host until all are accepted (draws are host-driven anyway: the generator
is a host stream):

* gamma: Marsaglia and Tsang (2000), with the U^(1/a) boost for shape < 1, returned on the log
  scale so that beta and Dirichlet draws (ratios of gammas) stay accurate for small shapes;
* Poisson: inversion by sequential search for rate < 10, Hoermann's PTRS (1993) above;
* binomial: inversion for n min(p, 1-p) < 10, Hoermann's BTRS (1993) above;
* beta, Dirichlet: normalised gammas; multinomial: conditional binomials; categorical: inversion;
* hypergeometric: inversion by sequential search from the lowest possible count;
* LKJ: the onion method (Lewandowski, Kurowicka and Joe 2009, section 3.2);
* truncated families without a closed-form quantile: safeguarded Newton iterations on the CDF,
  on the free scale of the truncated support.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import ops
from ...graph.bijectors import biject_to
from ...tensor import Tensor
from .special import lchoose, logdiffexp

__all__ = [
    "beta",
    "binomial",
    "solve_quantile",
    "categorical",
    "dirichlet",
    "hypergeometric",
    "lkj",
    "log_std_gamma",
    "multinomial",
    "open_uniform",
    "params_like",
    "poisson",
    "std_normal",
    "uniform",
]

_MAX_ROUNDS = 500


def params_like(shape: tuple[int, ...], *params: Any) -> list[Tensor]:
    """Parameters as float64 tensors on one backend, broadcast to ``shape``."""
    like = next((p for p in params if isinstance(p, Tensor)), None)
    backend = like.backend if like is not None else None
    out = []
    for p in params:
        t = p if isinstance(p, Tensor) else ops.tensor(p, dtype="float64", backend=backend)
        if t.dtype.name != "float64":
            t = ops.cast(t, "float64")
        if tuple(t.shape) != tuple(shape):
            t = ops.broadcast_to(t, tuple(shape))
        out.append(t)
    return out


def _all(mask: Any) -> bool:
    if math.prod(mask.shape) == 0:
        return True
    return bool(ops.min(ops.cast(mask, "int32")).item() > 0)


def _any(mask: Any) -> bool:
    if math.prod(mask.shape) == 0:
        return False
    return bool(ops.max(ops.cast(mask, "int32")).item() > 0)


def std_normal(gen: Any, shape: tuple[int, ...], like: Any) -> Tensor:
    return gen.normal(tuple(shape), dtype="float64", backend=like.backend)


def uniform(gen: Any, shape: tuple[int, ...], like: Any) -> Tensor:
    """Uniform on [0, 1)."""
    return gen.uniform(tuple(shape), dtype="float64", backend=like.backend)


def open_uniform(gen: Any, shape: tuple[int, ...], like: Any) -> Tensor:
    """Uniform on the open interval (0, 1): logs and quantiles of it are finite."""
    u = uniform(gen, shape, like)
    return ops.where(u > 0.0, u, 2.0 ** -54)


def _rejection(propose: Callable[[], tuple[Any, Any]], done: Any = None,
               what: str = "sampler") -> Any:
    """Keep each element's first accepted proposal; ``done`` marks elements that need none."""
    out, acc = propose()
    if done is not None:
        acc = acc | done
    for _ in range(_MAX_ROUNDS):
        if _all(acc):
            return out
        cand, ok = propose()
        take = ok & ops.logical_not(acc)
        out = ops.where(take, cand, out)
        acc = acc | ok
    raise RuntimeError(f"{what}: rejection sampling did not finish in {_MAX_ROUNDS} rounds "
                       f"(are the parameters finite?)")


# -- gamma family ---------------------------------------------------------------------------------
def log_std_gamma(gen: Any, shape: tuple[int, ...], a: Any) -> Tensor:
    """log of Gamma(a, 1) draws (Marsaglia-Tsang; shape < 1 via Gamma(a + 1) U^(1/a))."""
    (a,) = params_like(shape, a)
    boost = a < 1.0
    ap = ops.where(boost, a + 1.0, a)
    d = ap - 1.0 / 3.0
    c = 1.0 / ops.sqrt(9.0 * d)

    def propose() -> tuple[Any, Any]:
        z = std_normal(gen, shape, a)
        u = open_uniform(gen, shape, a)
        t = 1.0 + c * z
        ok = t > 0.0
        v = ops.where(ok, t, 1.0) ** 3
        acc = ok & (ops.log(u) < 0.5 * z * z + d - d * v + d * ops.log(v))
        return ops.log(d) + ops.log(v), acc

    out = _rejection(propose, what="gamma")
    if _any(boost):
        a_safe = ops.where(boost, a, 1.0)
        out = out + ops.where(boost, ops.log(open_uniform(gen, shape, a)) / a_safe, 0.0)
    return out


def beta(gen: Any, shape: tuple[int, ...], a: Any, b: Any) -> Tensor:
    return ops.sigmoid(log_std_gamma(gen, shape, a) - log_std_gamma(gen, shape, b))


def dirichlet(gen: Any, shape: tuple[int, ...], alpha: Any) -> Tensor:
    return ops.exp(ops.log_softmax(log_std_gamma(gen, shape, alpha), axis=-1))


# -- counts ---------------------------------------------------------------------------------------
def poisson(gen: Any, shape: tuple[int, ...], lam: Any) -> Tensor:
    (lam,) = params_like(shape, lam)
    small = lam < 10.0
    out = ops.zeros_like(lam)
    if _any(small):  # inversion by sequential search
        ls = ops.where(small, lam, 0.0)
        u = open_uniform(gen, shape, lam)
        p = ops.exp(-ls)
        cdf = p
        for i in range(1, 200):
            more = small & (u > cdf)
            if not _any(more):
                break
            out = out + ops.cast(more, "float64")
            p = p * ls / i
            cdf = cdf + p
    large = ops.logical_not(small)
    if _any(large):  # PTRS
        lb = ops.where(small, 10.0, lam)
        slam = ops.sqrt(lb)
        loglam = ops.log(lb)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        log_invalpha = ops.log(1.1239 + 1.1328 / (b - 3.4))
        vr = 0.9277 - 3.6224 / (b - 2.0)

        def propose() -> tuple[Any, Any]:
            uu = open_uniform(gen, shape, lam) - 0.5
            v = open_uniform(gen, shape, lam)
            us = 0.5 - ops.abs(uu)
            k = ops.floor((2.0 * a / us + b) * uu + lb + 0.43)
            quick = (us >= 0.07) & (v <= vr)
            bad = (k < 0.0) | ((us < 0.013) & (v > us))
            ks = ops.maximum(k, 0.0)
            slow = (ops.log(v) + log_invalpha - ops.log(a / (us * us) + b)
                    <= -lb + ks * loglam - ops.lgamma(ks + 1.0))
            return ks, quick | (ops.logical_not(bad) & slow)

        out = ops.where(large, _rejection(propose, done=small, what="poisson"), out)
    return out


def binomial(gen: Any, shape: tuple[int, ...], n: Any, p: Any) -> Tensor:
    n, p = params_like(shape, n, p)
    flip = p > 0.5
    ps = ops.where(flip, 1.0 - p, p)
    use_btrs = n * ps >= 10.0
    out = ops.zeros_like(p)
    inv = ops.logical_not(use_btrs)
    if _any(inv):  # inversion by sequential search (mean < 10)
        ni = ops.where(inv, n, 0.0)
        pi = ops.where(inv, ps, 0.0)
        r = pi / (1.0 - pi)
        pk = ops.exp(ni * ops.log1p(-pi))
        cdf = pk
        u = open_uniform(gen, shape, p)
        n_max = float(ops.max(ni).item())
        for i in range(1, int(min(n_max, 400)) + 1):
            more = inv & (u > cdf)
            if not _any(more):
                break
            out = out + ops.cast(more, "float64")
            pk = pk * r * ops.maximum(ni - i + 1.0, 0.0) / i
            cdf = cdf + pk
        out = ops.minimum(out, ni)
    if _any(use_btrs):  # BTRS
        nb = ops.where(use_btrs, n, 100.0)
        pb = ops.where(use_btrs, ps, 0.5)
        q = 1.0 - pb
        spq = ops.sqrt(nb * pb * q)
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * pb
        c = nb * pb + 0.5
        vr = 0.92 - 4.2 / b
        alpha = (2.83 + 5.1 / b) * spq
        lpq = ops.log(pb) - ops.log1p(-pb)
        m = ops.floor((nb + 1.0) * pb)
        h = ops.lgamma(m + 1.0) + ops.lgamma(nb - m + 1.0)

        def propose() -> tuple[Any, Any]:
            uu = open_uniform(gen, shape, p) - 0.5
            v = open_uniform(gen, shape, p)
            us = 0.5 - ops.abs(uu)
            k = ops.floor((2.0 * a / us + b) * uu + c)
            inside = (k >= 0.0) & (k <= nb)
            ks = ops.clip(k, 0.0, nb)
            quick = (us >= 0.07) & (v <= vr)
            lv = ops.log(v * alpha / (a / (us * us) + b))
            slow = lv <= h - ops.lgamma(ks + 1.0) - ops.lgamma(nb - ks + 1.0) + (ks - m) * lpq
            return ks, inside & (quick | slow)

        out = ops.where(use_btrs, _rejection(propose, done=inv, what="binomial"), out)
    return ops.where(flip, n - out, out)


def categorical(gen: Any, shape: tuple[int, ...], prob: Any) -> Tensor:
    """One-hot draws [..., K]."""
    k = shape[-1]
    cdf = ops.cumsum(prob / ops.sum(prob, axis=-1, keepdims=True), axis=-1)
    u = open_uniform(gen, shape[:-1], prob)
    idx = ops.sum(ops.cast(ops.expand_dims(u, -1) > cdf[..., :-1], "int32"), axis=-1)
    return ops.one_hot(idx, k, dtype="float64")


def multinomial(gen: Any, shape: tuple[int, ...], size: Any, prob: Any) -> Tensor:
    """Counts [..., K] by conditional binomials."""
    k = shape[-1]
    p = prob / ops.sum(prob, axis=-1, keepdims=True)
    tail = ops.cumsum(p, axis=-1, reverse=True)  # sum_{i >= j} p_i
    remaining = size
    parts = []
    for j in range(k - 1):
        tj = tail[..., j]
        cond = ops.clip(p[..., j] / ops.where(tj > 0.0, tj, 1.0), 0.0, 1.0)
        xj = binomial(gen, shape[:-1], remaining, cond)
        parts.append(xj)
        remaining = remaining - xj
    parts.append(remaining)
    return ops.stack(parts, axis=-1)


def hypergeometric(gen: Any, shape: tuple[int, ...], m: Any, n: Any, k: Any) -> Tensor:
    """White balls among ``k`` drawn from ``m`` white and ``n`` black, by inversion: walk up
    the probabilities from the lowest possible count with p(x + 1) / p(x) =
    (m - x) (k - x) / ((x + 1) (n - k + x + 1))."""
    m, n, k = params_like(shape, m, n, k)
    lo = ops.maximum(k - n, 0.0)
    hi = ops.minimum(k, m)
    p = ops.exp(lchoose(m, lo) + lchoose(n, k - lo) - lchoose(m + n, k))
    u = open_uniform(gen, shape, m)
    out, cdf = lo, p
    steps = int(ops.max(hi - lo).item()) if math.prod(shape) else 0
    for _ in range(steps):
        more = (u > cdf) & (out < hi)
        if not _any(more):
            break
        x = out
        step = (m - x) * (k - x) / ((x + 1.0) * ops.maximum(n - k + x + 1.0, 1.0))
        p = ops.where(more, p * step, p)
        out = out + ops.cast(more, "float64")
        cdf = ops.where(more, cdf + p, cdf)
    return out


# -- correlation matrices -------------------------------------------------------------------------
def lkj(gen: Any, shape: tuple[int, ...], eta: Any) -> Tensor:
    """LKJ(eta) correlation matrices [..., n, n] by the onion method."""
    n = shape[-1]
    batch = tuple(shape[:-2])
    offsets = ops.tensor([0.5 * i for i in range(n - 1)], dtype="float64", backend=eta.backend)
    marginal = ops.expand_dims(eta, -1) + 0.5 * (n - 2)
    conc1 = ops.broadcast_to(offsets + 0.5, (*batch, n - 1))
    conc0 = ops.broadcast_to(marginal - offsets, (*batch, n - 1))
    y = beta(gen, (*batch, n - 1), conc1, conc0)
    z = ops.tril(std_normal(gen, (*batch, n - 1, n - 1), eta))
    direction = z / ops.sqrt(ops.sum(z * z, axis=-1, keepdims=True))
    w = ops.expand_dims(ops.sqrt(y), -1) * direction
    zeros_row = ops.zeros((*batch, 1, n - 1), "float64", eta.backend)
    lower = ops.concat([zeros_row, w], axis=-2)
    lower = ops.concat([lower, ops.zeros((*batch, n, 1), "float64", eta.backend)], axis=-1)
    diag = ops.sqrt(ops.maximum(1.0 - ops.sum(lower * lower, axis=-1), 0.0))
    eye = ops.eye(n, dtype="float64", backend=eta.backend)
    chol = lower + eye * ops.expand_dims(diag, -1)
    return ops.matmul(chol, ops.swapaxes(chol, -1, -2))


# -- truncation without a closed-form quantile ----------------------------------------------------
_ROOT_STEPS = 100
_HALF = math.log(0.5)


def solve_quantile(base: Any, support: Any, params: dict[str, Any], lower: float,
                   upper: float, u: Any, log_z: Any) -> Tensor:
    """Draws of ``base`` truncated to [lower, upper] from uniforms ``u``: solve
    F(x) - F(lower) = u Z (u < 1/2) or S(x) - S(upper) = (1 - u) Z (u >= 1/2), Z the mass, in
    log space, by Newton's method on the free scale of ``support`` safeguarded by bisection.
    Each side's log mass is close to linear in the free coordinate near its own bound, so
    Newton converges in a few steps even for draws very close to a bound."""
    bij = biject_to(support)
    sign = -1.0 if support.kind == "less_than" else 1.0
    low_u = u < 0.5
    target = ops.where(low_u, ops.log(u), ops.log1p(-u)) + log_z
    has_lo, has_hi = math.isfinite(lower), math.isfinite(upper)
    like = u
    if has_lo:
        lo_t = ops.full((), lower, like.dtype, like.backend)
        lcl, lsl = base.log_cdf_sf(lo_t, **params)
    if has_hi:
        hi_t = ops.full((), upper, like.dtype, like.backend)
        lcu, lsu = base.log_cdf_sf(hi_t, **params)

    def residual(y: Any) -> tuple[Any, Any]:
        """r(y), increasing, zero at the draw, and dr/dy."""
        x = bij.forward(sign * y)
        dxdy = ops.exp(bij.log_det_jacobian(sign * y))
        log_pdf = base.log_prob(x, **params)
        lc, ls = base.log_cdf_sf(x, **params)
        # log of the mass between the lower bound and x, and between x and the upper bound
        if has_lo:
            below = ops.where(lcl < _HALF, _logdiffexp(lc, lcl), _logdiffexp(lsl, ls))
        else:
            below = lc
        if has_hi:
            above = ops.where(lcu < _HALF, _logdiffexp(lcu, lc), _logdiffexp(ls, lsu))
        else:
            above = ls
        r = ops.where(low_u, below - target, target - above)
        dr = ops.exp(log_pdf - ops.where(low_u, below, above)) * dxdy
        return r, dr

    # the free coordinate of any draw lies in [-60, 60] (exp(60) ~ 1e26 beyond a bound)
    lo = ops.full_like(u, -60.0)
    hi = ops.full_like(u, 60.0)
    y = ops.zeros_like(u)
    finished = ops.zeros_like(u) > 1.0
    for _ in range(_ROOT_STEPS):
        r, dr = residual(y)
        neg = r < 0.0
        lo = ops.where(neg, y, lo)
        hi = ops.where(neg, hi, y)
        newton = y - r / dr
        ok = ops.isfinite(newton) & (newton >= lo) & (newton <= hi)
        y_next = ops.where(ok, newton, 0.5 * (lo + hi))
        done = (ops.abs(y_next - y) <= 1e-12 * (1.0 + ops.abs(y))) | (r == 0.0)
        y = ops.where(finished, y, y_next)  # converged draws stay where they are
        finished = finished | done
        if _all(finished):
            break
    return bij.forward(sign * y)


def _logdiffexp(a: Any, b: Any) -> Any:
    return logdiffexp(a, b)
