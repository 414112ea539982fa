"""The distribution families of greta, on the :class:`~tensorbridge.runtime.graph.Family`
interface, written with tensorbridge ops only (differentiable, batchable with ``vmap``, every
backend), float64-accurate.

Every family has ``name``, ``param_names`` (greta's names, in greta's order), ``support(**params)``
(a :class:`Constraint`), ``log_prob(value, **params)`` (broadcasting over parameters and value;
``-inf`` outside the support), ``sample(generator, shape, **params)`` and ``mean``/``variance``.
Univariate continuous families also have ``log_cdf``/``log_sf`` (and ``cdf``), which
:class:`Truncated` uses to normalise a truncated density, and, where closed-form, ``icdf``/``isf``.

Multivariate families take the event along the last axis (``categorical``, ``multinomial``,
``dirichlet``, ``multivariate_normal``) or the last two (``lkj_correlation``); ``log_prob`` then
returns one value per event.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import ops
from ...dtypes import float64
from ...graph.bijectors import (
    Constraint,
    correlation_matrix,
    counts,
    from_bounds,
    greater_than,
    integers,
    interval,
    observed_only,
    one_hot,
    positive_definite,
    real,
    simplex,
)
from ...graph.families import Family
from ...host_namespace import to_host, xp
from ...tensor import Tensor
from . import sampling as smp
from .data_checks import check_data
from .logit import bernoulli_logit_log_density
from .special import (
    HALF_LOG_2PI,
    LOG_2,
    LOG_PI,
    atan,
    lbeta,
    lchoose,
    log1mexp,
    log_betainc,
    log_betainc_pair,
    log_gammainc,
    log_gammainc_pair,
    log_gammaincc,
    log_ndtr,
    logaddexp,
    logdiffexp,
    ndtri,
    xlog1py,
    xlogy,
)

__all__ = [
    "Bernoulli",
    "Beta",
    "BetaBinomial",
    "Binomial",
    "Categorical",
    "Cauchy",
    "ChiSquared",
    "Dirichlet",
    "DirichletMultinomial",
    "F",
    "Exponential",
    "Gamma",
    "Hypergeometric",
    "InverseGamma",
    "LKJCorrelation",
    "Laplace",
    "Logistic",
    "LogNormal",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "Pareto",
    "Poisson",
    "Student",
    "Truncated",
    "Uniform",
    "Weibull",
    "Wishart",
    "lkj_log_normaliser",
    "log_multigamma",
]

_NINF = -math.inf


def _guard(ok: Any, lp: Any) -> Any:
    """``lp`` where ``ok``, else -inf."""
    return ops.where(ok, lp, _NINF)


def _safe(ok: Any, x: Any, fallback: Any) -> Any:
    """``x`` where ``ok``, else a point inside the support (for the branch not taken)."""
    return ops.where(ok, x, fallback)


def _nan_like(x: Any) -> Any:
    return ops.full_like(x, math.nan)


def _is_integer(x: Any) -> Any:
    return ops.floor(x) == x


def _const(value: float, like: Any) -> Tensor:
    return ops.full((), float(value), like.dtype, like.backend)


def _promote_value(value: Any, params: dict[str, Any]) -> Any:
    """Values in the parameters' floating dtype (integer data, or float32 data with float64
    parameters, would otherwise lose precision in lgamma and friends)."""
    if not isinstance(value, Tensor):
        return value
    want = None
    for p in params.values():
        if isinstance(p, Tensor) and p.dtype.kind == "f":
            if want is None or p.dtype.itemsize > want.itemsize:
                want = p.dtype
    if want is None:
        want = value.dtype if value.dtype.kind == "f" else float64
    if value.dtype != want and (value.dtype.kind != "f" or value.dtype.itemsize < want.itemsize):
        return ops.cast(value, want)
    return value


class _Promoting:
    """Wraps every ``log_prob`` defined by a subclass with :func:`_promote_value`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        raw = cls.__dict__.get("log_prob")
        if raw is not None and not getattr(raw, "_promotes", False):
            def log_prob(self: Any, value: Any, /, **params: Any) -> Any:
                return raw(self, _promote_value(value, params), **params)

            log_prob._promotes = True  # type: ignore[attr-defined]
            log_prob.__doc__ = raw.__doc__
            cls.log_prob = log_prob  # type: ignore[method-assign]


class Univariate(_Promoting, Family):
    """A scalar family; continuous ones may be truncated through their CDF."""

    discrete = False
    event_ndim = 0
    has_icdf = False
    # (name, "positive" | "nonnegative" | "unit" | "count"): checks constructors apply to
    # parameters known when the distribution is created
    param_checks: tuple[tuple[str, str], ...] = ()

    def support(self, **params: Any) -> Constraint:
        return real

    def log_cdf(self, value: Any, **params: Any) -> Any:
        raise NotImplementedError(f"{self.name}: no CDF")

    def log_sf(self, value: Any, **params: Any) -> Any:
        return log1mexp(ops.minimum(self.log_cdf(value, **params), 0.0))

    def log_cdf_sf(self, value: Any, **params: Any) -> tuple[Any, Any]:
        """(log_cdf, log_sf) together (families with costly CDFs share the work)."""
        return self.log_cdf(value, **params), self.log_sf(value, **params)

    def cdf(self, value: Any, **params: Any) -> Any:
        return ops.exp(self.log_cdf(value, **params))

    def icdf(self, p: Any, **params: Any) -> Any:
        raise NotImplementedError(f"{self.name}: no closed-form quantile function")

    def isf(self, s: Any, **params: Any) -> Any:
        return self.icdf(1.0 - s, **params)

    def mean(self, **params: Any) -> Any:
        raise NotImplementedError(f"{self.name}: no mean")

    def variance(self, **params: Any) -> Any:
        raise NotImplementedError(f"{self.name}: no variance")


# ================================================================================================
# continuous, unbounded
# ================================================================================================
class Normal(Univariate):
    name = "normal"
    param_names = ("mean", "sd")
    param_checks = (("sd", "positive"),)
    has_icdf = True

    def log_prob(self, value: Any, *, mean: Any, sd: Any) -> Any:
        z = (value - mean) / sd
        return -0.5 * z * z - ops.log(sd) - HALF_LOG_2PI

    def log_cdf(self, value: Any, *, mean: Any, sd: Any) -> Any:
        return log_ndtr((value - mean) / sd)

    def log_sf(self, value: Any, *, mean: Any, sd: Any) -> Any:
        return log_ndtr((mean - value) / sd)

    def icdf(self, p: Any, *, mean: Any, sd: Any) -> Any:
        return mean + sd * ndtri(p)

    def isf(self, s: Any, *, mean: Any, sd: Any) -> Any:
        return mean - sd * ndtri(s)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, mean: Any, sd: Any) -> Any:
        mean, sd = smp.params_like(shape, mean, sd)
        return mean + sd * smp.std_normal(generator, shape, mean)

    def mean(self, *, mean: Any, sd: Any) -> Any:
        return mean + 0.0 * sd

    def variance(self, *, mean: Any, sd: Any) -> Any:
        return sd * sd + 0.0 * mean


class Student(Univariate):
    """Student's t with ``df`` degrees of freedom, location ``mu`` and scale ``sigma``."""

    name = "student"
    param_names = ("df", "mu", "sigma")
    param_checks = (("df", "positive"), ("sigma", "positive"))

    def log_prob(self, value: Any, *, df: Any, mu: Any, sigma: Any) -> Any:
        t = (value - mu) / sigma
        return (ops.lgamma(0.5 * (df + 1.0)) - ops.lgamma(0.5 * df) - 0.5 * ops.log(df)
                - 0.5 * LOG_PI - ops.log(sigma) - 0.5 * (df + 1.0) * ops.log1p(t * t / df))

    def _log_tail(self, t: Any, df: Any) -> Any:
        """log P(T < -|t|) = log(I_{df/(df+t^2)}(df/2, 1/2) / 2)."""
        t2 = t * t
        x = df / (df + t2)
        y = t2 / (df + t2)
        return -LOG_2 + log_betainc(0.5 * df, ops.full_like(x, 0.5), x, y)

    def log_cdf(self, value: Any, *, df: Any, mu: Any, sigma: Any) -> Any:
        t = (value - mu) / sigma
        tail = self._log_tail(t, df)
        return ops.where(t < 0.0, tail, log1mexp(ops.minimum(tail, 0.0)))

    def log_sf(self, value: Any, *, df: Any, mu: Any, sigma: Any) -> Any:
        return self.log_cdf(2.0 * mu - value, df=df, mu=mu, sigma=sigma)

    def log_cdf_sf(self, value: Any, *, df: Any, mu: Any, sigma: Any) -> tuple[Any, Any]:
        t = (value - mu) / sigma
        tail = self._log_tail(t, df)
        body = log1mexp(ops.minimum(tail, 0.0))
        neg = t < 0.0
        return ops.where(neg, tail, body), ops.where(neg, body, tail)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, df: Any, mu: Any,
               sigma: Any) -> Any:
        df, mu, sigma = smp.params_like(shape, df, mu, sigma)
        z = smp.std_normal(generator, shape, mu)
        log_chi2 = LOG_2 + smp.log_std_gamma(generator, shape, 0.5 * df)
        return mu + sigma * z * ops.exp(0.5 * (ops.log(df) - log_chi2))

    def mean(self, *, df: Any, mu: Any, sigma: Any) -> Any:
        return ops.where(df > 1.0, mu + 0.0 * sigma, math.nan)

    def variance(self, *, df: Any, mu: Any, sigma: Any) -> Any:
        v = sigma * sigma * df / ops.where(df > 2.0, df - 2.0, 1.0) + 0.0 * mu
        return ops.where(df > 2.0, v, ops.where(df > 1.0, math.inf, math.nan))


class Cauchy(Univariate):
    name = "cauchy"
    param_names = ("location", "scale")
    param_checks = (("scale", "positive"),)
    has_icdf = True

    def log_prob(self, value: Any, *, location: Any, scale: Any) -> Any:
        z = (value - location) / scale
        return -LOG_PI - ops.log(scale) - ops.log1p(z * z)

    @staticmethod
    def _log_cdf_z(z: Any) -> Any:
        # F(z) = 1/2 + atan(z)/pi; in the tails use atan(-1/z)/pi (z < -1), 1 - atan(1/z)/pi
        small = ops.abs(z) <= 1.0
        zs = ops.where(small, z, 0.0)
        zl = ops.where(small, -2.0, ops.minimum(z, -1.0))
        zu = ops.where(small, 2.0, ops.maximum(z, 1.0))
        mid = ops.log(0.5 + atan(zs) / math.pi)
        low = ops.log(atan(-1.0 / zl)) - LOG_PI
        high = ops.log1p(-atan(1.0 / zu) / math.pi)
        return ops.where(small, mid, ops.where(z < 0.0, low, high))

    def log_cdf(self, value: Any, *, location: Any, scale: Any) -> Any:
        return self._log_cdf_z((value - location) / scale)

    def log_sf(self, value: Any, *, location: Any, scale: Any) -> Any:
        return self._log_cdf_z((location - value) / scale)

    def icdf(self, p: Any, *, location: Any, scale: Any) -> Any:
        return location + scale * ops.tan(math.pi * (p - 0.5))

    def isf(self, s: Any, *, location: Any, scale: Any) -> Any:
        return location - scale * ops.tan(math.pi * (s - 0.5))

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, location: Any,
               scale: Any) -> Any:
        location, scale = smp.params_like(shape, location, scale)
        return self.icdf(smp.open_uniform(generator, shape, location), location=location,
                         scale=scale)

    def mean(self, *, location: Any, scale: Any) -> Any:
        return _nan_like(location + scale)

    def variance(self, *, location: Any, scale: Any) -> Any:
        return _nan_like(location + scale)


class Logistic(Univariate):
    name = "logistic"
    param_names = ("location", "scale")
    param_checks = (("scale", "positive"),)
    has_icdf = True

    def log_prob(self, value: Any, *, location: Any, scale: Any) -> Any:
        z = (value - location) / scale
        return -z - ops.log(scale) - 2.0 * ops.softplus(-z)

    def log_cdf(self, value: Any, *, location: Any, scale: Any) -> Any:
        return -ops.softplus((location - value) / scale)

    def log_sf(self, value: Any, *, location: Any, scale: Any) -> Any:
        return -ops.softplus((value - location) / scale)

    def icdf(self, p: Any, *, location: Any, scale: Any) -> Any:
        return location + scale * (ops.log(p) - ops.log1p(-p))

    def isf(self, s: Any, *, location: Any, scale: Any) -> Any:
        return location - scale * (ops.log(s) - ops.log1p(-s))

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, location: Any,
               scale: Any) -> Any:
        location, scale = smp.params_like(shape, location, scale)
        return self.icdf(smp.open_uniform(generator, shape, location), location=location,
                         scale=scale)

    def mean(self, *, location: Any, scale: Any) -> Any:
        return location + 0.0 * scale

    def variance(self, *, location: Any, scale: Any) -> Any:
        return (math.pi ** 2 / 3.0) * scale * scale + 0.0 * location


class Laplace(Univariate):
    name = "laplace"
    param_names = ("mu", "sigma")
    param_checks = (("sigma", "positive"),)
    has_icdf = True

    def log_prob(self, value: Any, *, mu: Any, sigma: Any) -> Any:
        return -LOG_2 - ops.log(sigma) - ops.abs(value - mu) / sigma

    @staticmethod
    def _log_cdf_z(z: Any) -> Any:
        neg = z < 0.0
        zn = ops.where(neg, z, 0.0)
        zp = ops.where(neg, 0.0, z)
        return ops.where(neg, zn - LOG_2, ops.log1p(-0.5 * ops.exp(-zp)))

    def log_cdf(self, value: Any, *, mu: Any, sigma: Any) -> Any:
        return self._log_cdf_z((value - mu) / sigma)

    def log_sf(self, value: Any, *, mu: Any, sigma: Any) -> Any:
        return self._log_cdf_z((mu - value) / sigma)

    def icdf(self, p: Any, *, mu: Any, sigma: Any) -> Any:
        low = p < 0.5
        pl = ops.where(low, p, 0.25)
        ph = ops.where(low, 0.75, p)
        return mu + sigma * ops.where(low, ops.log(2.0 * pl), -ops.log(2.0 * (1.0 - ph)))

    def isf(self, s: Any, *, mu: Any, sigma: Any) -> Any:
        return 2.0 * mu - self.icdf(s, mu=mu, sigma=sigma)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, mu: Any, sigma: Any) -> Any:
        mu, sigma = smp.params_like(shape, mu, sigma)
        return self.icdf(smp.open_uniform(generator, shape, mu), mu=mu, sigma=sigma)

    def mean(self, *, mu: Any, sigma: Any) -> Any:
        return mu + 0.0 * sigma

    def variance(self, *, mu: Any, sigma: Any) -> Any:
        return 2.0 * sigma * sigma + 0.0 * mu


# ================================================================================================
# continuous, bounded
# ================================================================================================
class Uniform(Univariate):
    """Uniform on ``[min, max]``. As a prior, ``min`` and ``max`` must be fixed scalars (as in
    greta); with other parameters it can still be assigned to data."""

    name = "uniform"
    param_names = ("min", "max")
    param_checks = (("min", "finite"), ("max", "finite"))  # greta: the bounds must be finite
    has_icdf = True

    def __init__(self, fixed: bool = True) -> None:
        self.fixed = fixed

    def support(self, *, min: Any, max: Any) -> Constraint:
        if self.fixed and math.prod(min.shape) == 1 and math.prod(max.shape) == 1:
            return interval(float(min.item()), float(max.item()))
        return observed_only("as a prior, uniform(min, max) needs fixed scalar min and max")

    def log_prob(self, value: Any, *, min: Any, max: Any) -> Any:
        ok = (value >= min) & (value <= max)
        return _guard(ok, -ops.log(max - min) + 0.0 * value)

    def log_cdf(self, value: Any, *, min: Any, max: Any) -> Any:
        p = ops.clip((value - min) / (max - min), 0.0, 1.0)
        return ops.log(p)

    def log_sf(self, value: Any, *, min: Any, max: Any) -> Any:
        return ops.log(ops.clip((max - value) / (max - min), 0.0, 1.0))

    def icdf(self, p: Any, *, min: Any, max: Any) -> Any:
        return min + p * (max - min)

    def isf(self, s: Any, *, min: Any, max: Any) -> Any:
        return max - s * (max - min)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, min: Any, max: Any) -> Any:
        min, max = smp.params_like(shape, min, max)
        return min + (max - min) * smp.uniform(generator, shape, min)

    def mean(self, *, min: Any, max: Any) -> Any:
        return 0.5 * (min + max)

    def variance(self, *, min: Any, max: Any) -> Any:
        return (max - min) ** 2 / 12.0


class _Positive(Univariate):
    def support(self, **params: Any) -> Constraint:
        return greater_than(0.0)


class LogNormal(_Positive):
    name = "lognormal"
    param_names = ("meanlog", "sdlog")
    param_checks = (("sdlog", "positive"),)
    has_icdf = True

    def log_prob(self, value: Any, *, meanlog: Any, sdlog: Any) -> Any:
        ok = value > 0.0
        lx = ops.log(_safe(ok, value, 1.0))
        z = (lx - meanlog) / sdlog
        return _guard(ok, -0.5 * z * z - ops.log(sdlog) - HALF_LOG_2PI - lx)

    def log_cdf(self, value: Any, *, meanlog: Any, sdlog: Any) -> Any:
        ok = value > 0.0
        lx = ops.log(_safe(ok, value, 1.0))
        return _guard(ok, log_ndtr((lx - meanlog) / sdlog))

    def log_sf(self, value: Any, *, meanlog: Any, sdlog: Any) -> Any:
        ok = value > 0.0
        lx = ops.log(_safe(ok, value, 1.0))
        return ops.where(ok, log_ndtr((meanlog - lx) / sdlog), 0.0)

    def icdf(self, p: Any, *, meanlog: Any, sdlog: Any) -> Any:
        return ops.exp(meanlog + sdlog * ndtri(p))

    def isf(self, s: Any, *, meanlog: Any, sdlog: Any) -> Any:
        return ops.exp(meanlog - sdlog * ndtri(s))

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, meanlog: Any,
               sdlog: Any) -> Any:
        meanlog, sdlog = smp.params_like(shape, meanlog, sdlog)
        return ops.exp(meanlog + sdlog * smp.std_normal(generator, shape, meanlog))

    def mean(self, *, meanlog: Any, sdlog: Any) -> Any:
        return ops.exp(meanlog + 0.5 * sdlog * sdlog)

    def variance(self, *, meanlog: Any, sdlog: Any) -> Any:
        s2 = sdlog * sdlog
        return ops.expm1(s2) * ops.exp(2.0 * meanlog + s2)


class Exponential(_Positive):
    name = "exponential"
    param_names = ("rate",)
    param_checks = (("rate", "positive"),)
    has_icdf = True

    def log_prob(self, value: Any, *, rate: Any) -> Any:
        return _guard(value >= 0.0, ops.log(rate) - rate * value)

    def log_cdf(self, value: Any, *, rate: Any) -> Any:
        ok = value > 0.0
        return _guard(ok, log1mexp(-rate * _safe(ok, value, 1.0)))

    def log_sf(self, value: Any, *, rate: Any) -> Any:
        return -rate * ops.maximum(value, 0.0)

    def icdf(self, p: Any, *, rate: Any) -> Any:
        return -ops.log1p(-p) / rate

    def isf(self, s: Any, *, rate: Any) -> Any:
        return -ops.log(s) / rate

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, rate: Any) -> Any:
        (rate,) = smp.params_like(shape, rate)
        return self.isf(smp.open_uniform(generator, shape, rate), rate=rate)

    def mean(self, *, rate: Any) -> Any:
        return 1.0 / rate

    def variance(self, *, rate: Any) -> Any:
        return 1.0 / (rate * rate)


class Gamma(_Positive):
    """Gamma with ``shape`` and ``rate`` (mean shape/rate)."""

    name = "gamma"
    param_names = ("shape", "rate")
    param_checks = (("shape", "positive"), ("rate", "positive"))

    def log_prob(self, value: Any, *, shape: Any, rate: Any) -> Any:
        ok = value >= 0.0
        x = _safe(ok, value, 1.0)
        lp = shape * ops.log(rate) + xlogy(shape - 1.0, x) - rate * x - ops.lgamma(shape)
        return _guard(ok, lp)

    def log_cdf(self, value: Any, *, shape: Any, rate: Any) -> Any:
        return log_gammainc(shape, rate * value)

    def log_sf(self, value: Any, *, shape: Any, rate: Any) -> Any:
        return log_gammaincc(shape, rate * value)

    def log_cdf_sf(self, value: Any, *, shape: Any, rate: Any) -> tuple[Any, Any]:
        return log_gammainc_pair(shape, rate * value)

    def sample(self, generator: Any, shape: tuple[int, ...], /, **params: Any) -> Any:
        a, rate = smp.params_like(shape, params["shape"], params["rate"])
        return ops.exp(smp.log_std_gamma(generator, shape, a) - ops.log(rate))

    def mean(self, *, shape: Any, rate: Any) -> Any:
        return shape / rate

    def variance(self, *, shape: Any, rate: Any) -> Any:
        return shape / (rate * rate)


class InverseGamma(_Positive):
    """Inverse gamma with shape ``alpha`` and scale ``beta`` (1/X is gamma(alpha, beta))."""

    name = "inverse_gamma"
    param_names = ("alpha", "beta")
    param_checks = (("alpha", "positive"), ("beta", "positive"))

    def log_prob(self, value: Any, *, alpha: Any, beta: Any) -> Any:
        ok = value > 0.0
        x = _safe(ok, value, 1.0)
        lp = alpha * ops.log(beta) - ops.lgamma(alpha) - (alpha + 1.0) * ops.log(x) - beta / x
        return _guard(ok, lp)

    def log_cdf(self, value: Any, *, alpha: Any, beta: Any) -> Any:
        ok = value > 0.0
        return _guard(ok, log_gammaincc(alpha, beta / _safe(ok, value, 1.0)))

    def log_sf(self, value: Any, *, alpha: Any, beta: Any) -> Any:
        ok = value > 0.0
        return ops.where(ok, log_gammainc(alpha, beta / _safe(ok, value, 1.0)), 0.0)

    def log_cdf_sf(self, value: Any, *, alpha: Any, beta: Any) -> tuple[Any, Any]:
        ok = value > 0.0
        lp, lq = log_gammainc_pair(alpha, beta / _safe(ok, value, 1.0))
        return _guard(ok, lq), ops.where(ok, lp, 0.0)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, alpha: Any, beta: Any) -> Any:
        alpha, beta = smp.params_like(shape, alpha, beta)
        return ops.exp(ops.log(beta) - smp.log_std_gamma(generator, shape, alpha))

    def mean(self, *, alpha: Any, beta: Any) -> Any:
        return ops.where(alpha > 1.0, beta / ops.where(alpha > 1.0, alpha - 1.0, 1.0),
                         math.nan)

    def variance(self, *, alpha: Any, beta: Any) -> Any:
        a1 = ops.where(alpha > 2.0, alpha - 1.0, 1.0)
        a2 = ops.where(alpha > 2.0, alpha - 2.0, 1.0)
        return ops.where(alpha > 2.0, beta * beta / (a1 * a1 * a2), math.nan)


class Weibull(_Positive):
    name = "weibull"
    param_names = ("shape", "scale")
    param_checks = (("shape", "positive"), ("scale", "positive"))
    has_icdf = True

    def log_prob(self, value: Any, *, shape: Any, scale: Any) -> Any:
        ok = value >= 0.0
        z = _safe(ok, value, 1.0) / scale
        lp = ops.log(shape) - ops.log(scale) + xlogy(shape - 1.0, z) - z ** shape
        return _guard(ok, lp)

    def _log_sf(self, value: Any, shape: Any, scale: Any) -> tuple[Any, Any]:
        ok = value > 0.0
        return ok, -((_safe(ok, value, 1.0) / scale) ** shape)

    def log_cdf(self, value: Any, *, shape: Any, scale: Any) -> Any:
        ok, lsf = self._log_sf(value, shape, scale)
        return _guard(ok, log1mexp(lsf))

    def log_sf(self, value: Any, *, shape: Any, scale: Any) -> Any:
        ok, lsf = self._log_sf(value, shape, scale)
        return ops.where(ok, lsf, 0.0)

    def icdf(self, p: Any, *, shape: Any, scale: Any) -> Any:
        return scale * (-ops.log1p(-p)) ** (1.0 / shape)

    def isf(self, s: Any, *, shape: Any, scale: Any) -> Any:
        return scale * (-ops.log(s)) ** (1.0 / shape)

    def sample(self, generator: Any, shape: tuple[int, ...], /, **params: Any) -> Any:
        k, scale = smp.params_like(shape, params["shape"], params["scale"])
        return self.isf(smp.open_uniform(generator, shape, k), shape=k, scale=scale)

    def mean(self, *, shape: Any, scale: Any) -> Any:
        return scale * ops.exp(ops.lgamma(1.0 + 1.0 / shape))

    def variance(self, *, shape: Any, scale: Any) -> Any:
        g1 = ops.exp(ops.lgamma(1.0 + 1.0 / shape))
        return scale * scale * (ops.exp(ops.lgamma(1.0 + 2.0 / shape)) - g1 * g1)


class Pareto(Univariate):
    """Pareto with shape ``a`` and scale ``b``: density a b^a / x^(a+1) on x >= b."""

    name = "pareto"
    param_names = ("a", "b")
    param_checks = (("a", "positive"), ("b", "positive"))
    has_icdf = True

    def __init__(self, fixed: bool = True) -> None:
        self.fixed = fixed

    def support(self, *, a: Any, b: Any) -> Constraint:
        if self.fixed and math.prod(b.shape) == 1:
            return greater_than(float(b.item()))
        if self.fixed:
            vals = to_host(b).ravel()
            if vals.size and xp.all(vals == vals[0]):
                return greater_than(float(vals[0]))
        return observed_only("as a prior, pareto(a, b) needs a fixed scale b (one value)")

    def log_prob(self, value: Any, *, a: Any, b: Any) -> Any:
        ok = value >= b
        x = _safe(ok, value, b)
        return _guard(ok, ops.log(a) + a * ops.log(b) - (a + 1.0) * ops.log(x))

    def _lsf(self, value: Any, a: Any, b: Any) -> tuple[Any, Any]:
        ok = value > b
        x = _safe(ok, value, 2.0 * b)
        return ok, a * (ops.log(b) - ops.log(x))

    def log_cdf(self, value: Any, *, a: Any, b: Any) -> Any:
        ok, lsf = self._lsf(value, a, b)
        return _guard(ok, log1mexp(lsf))

    def log_sf(self, value: Any, *, a: Any, b: Any) -> Any:
        ok, lsf = self._lsf(value, a, b)
        return ops.where(ok, lsf, 0.0)

    def icdf(self, p: Any, *, a: Any, b: Any) -> Any:
        return b * ops.exp(-ops.log1p(-p) / a)

    def isf(self, s: Any, *, a: Any, b: Any) -> Any:
        return b * ops.exp(-ops.log(s) / a)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, a: Any, b: Any) -> Any:
        a, b = smp.params_like(shape, a, b)
        return self.isf(smp.open_uniform(generator, shape, a), a=a, b=b)

    def mean(self, *, a: Any, b: Any) -> Any:
        am = ops.where(a > 1.0, a - 1.0, 1.0)
        return ops.where(a > 1.0, a * b / am, math.inf)

    def variance(self, *, a: Any, b: Any) -> Any:
        am1 = ops.where(a > 2.0, a - 1.0, 1.0)
        am2 = ops.where(a > 2.0, a - 2.0, 1.0)
        return ops.where(a > 2.0, b * b * a / (am1 * am1 * am2), math.inf)


class Beta(Univariate):
    name = "beta"
    param_names = ("shape1", "shape2")
    param_checks = (("shape1", "positive"), ("shape2", "positive"))

    def support(self, **params: Any) -> Constraint:
        return interval(0.0, 1.0)

    def log_prob(self, value: Any, *, shape1: Any, shape2: Any) -> Any:
        ok = (value >= 0.0) & (value <= 1.0)
        x = _safe(ok, value, 0.5)
        lp = xlogy(shape1 - 1.0, x) + xlog1py(shape2 - 1.0, -x) - lbeta(shape1, shape2)
        return _guard(ok, lp)

    def log_cdf(self, value: Any, *, shape1: Any, shape2: Any) -> Any:
        return log_betainc(shape1, shape2, value, 1.0 - value)

    def log_sf(self, value: Any, *, shape1: Any, shape2: Any) -> Any:
        return log_betainc(shape2, shape1, 1.0 - value, value)

    def log_cdf_sf(self, value: Any, *, shape1: Any, shape2: Any) -> tuple[Any, Any]:
        return log_betainc_pair(shape1, shape2, value, 1.0 - value)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, shape1: Any,
               shape2: Any) -> Any:
        a, b = smp.params_like(shape, shape1, shape2)
        return smp.beta(generator, shape, a, b)

    def mean(self, *, shape1: Any, shape2: Any) -> Any:
        return shape1 / (shape1 + shape2)

    def variance(self, *, shape1: Any, shape2: Any) -> Any:
        s = shape1 + shape2
        return shape1 * shape2 / (s * s * (s + 1.0))


class ChiSquared(_Positive):
    name = "chi_squared"
    param_names = ("df",)
    param_checks = (("df", "positive"),)

    def log_prob(self, value: Any, *, df: Any) -> Any:
        return Gamma().log_prob(value, shape=0.5 * df, rate=0.5 + 0.0 * df)

    def log_cdf(self, value: Any, *, df: Any) -> Any:
        return log_gammainc(0.5 * df, 0.5 * value)

    def log_sf(self, value: Any, *, df: Any) -> Any:
        return log_gammaincc(0.5 * df, 0.5 * value)

    def log_cdf_sf(self, value: Any, *, df: Any) -> tuple[Any, Any]:
        return log_gammainc_pair(0.5 * df, 0.5 * value)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, df: Any) -> Any:
        (df,) = smp.params_like(shape, df)
        return 2.0 * ops.exp(smp.log_std_gamma(generator, shape, 0.5 * df))

    def mean(self, *, df: Any) -> Any:
        return df + 0.0

    def variance(self, *, df: Any) -> Any:
        return 2.0 * df


# ================================================================================================
# truncation
# ================================================================================================
class Truncated(Univariate):
    """``base`` restricted to ``[lower, upper]`` and renormalised: log p(x) - log(F(upper) -
    F(lower)), the mass computed in log space (CDF differences below the median, survival
    differences above). Sampling inverts the CDF: in closed form where the family has one,
    otherwise by safeguarded Newton iterations on the free scale of the support."""

    def __init__(self, base: Univariate, lower: float, upper: float) -> None:
        if base.discrete or base.event_ndim:
            raise TypeError(f"truncation: {base.name} is not a univariate continuous family")
        if not lower < upper:
            raise ValueError(f"truncation: need lower < upper, got ({lower}, {upper})")
        self.base = base
        self.lower = float(lower)
        self.upper = float(upper)
        self.name = base.name
        self.param_names = base.param_names
        self.param_checks = base.param_checks
        self.has_icdf = base.has_icdf

    def __repr__(self) -> str:
        return f"<family {self.name} truncated to ({self.lower:g}, {self.upper:g})>"

    def support(self, **params: Any) -> Constraint:
        c = self.base.support(**params)
        if c.kind == "observed_only":
            return c
        return from_bounds(max(c.lower, self.lower), min(c.upper, self.upper))

    def _bounds(self, like: Any) -> tuple[Any, Any]:
        return _const(self.lower, like), _const(self.upper, like)

    def log_mass(self, **params: Any) -> Any:
        """log(F(upper) - F(lower))."""
        like = next(v for v in params.values() if isinstance(v, Tensor))
        lo, hi = self._bounds(like)
        base = self.base
        if self.lower == -math.inf:
            return base.log_cdf(hi, **params)
        if self.upper == math.inf:
            return base.log_sf(lo, **params)
        lcl, lsl = base.log_cdf_sf(lo, **params)
        lcu, lsu = base.log_cdf_sf(hi, **params)
        return ops.where(lcl < -LOG_2, logdiffexp(lcu, lcl), logdiffexp(lsl, lsu))

    def log_prob(self, value: Any, **params: Any) -> Any:
        ok = (value >= self.lower) & (value <= self.upper)
        inside = 0.5 * (self.lower + self.upper) if math.isfinite(self.lower + self.upper) \
            else (self.lower + 1.0 if math.isfinite(self.lower) else self.upper - 1.0)
        x = _safe(ok, value, inside)
        return _guard(ok, self.base.log_prob(x, **params) - self.log_mass(**params))

    def log_cdf(self, value: Any, **params: Any) -> Any:
        lo, _ = self._bounds(value)
        x = ops.clip(value, self.lower, self.upper)
        if self.lower == -math.inf:
            num = self.base.log_cdf(x, **params)
        else:
            num = logdiffexp(self.base.log_cdf(x, **params), self.base.log_cdf(lo, **params))
        return ops.minimum(num - self.log_mass(**params), 0.0)

    def sample(self, generator: Any, shape: tuple[int, ...], /, **params: Any) -> Any:
        names = list(params)
        vals = smp.params_like(shape, *params.values())
        params = dict(zip(names, vals))
        like = vals[0]
        lo, hi = self._bounds(like)
        base = self.base
        u = smp.open_uniform(generator, shape, like)
        log_z = self.log_mass(**params)
        # the side of the median the interval starts on decides CDF or survival inversion
        lcl = base.log_cdf(lo, **params) if self.lower > -math.inf else ops.full_like(
            like, _NINF)
        lsu = base.log_sf(hi, **params) if self.upper < math.inf else ops.full_like(
            like, _NINF)
        upper_side = lcl >= -LOG_2
        log_p = logaddexp(lcl, ops.log(u) + log_z)  # log(F(lo) + u Z)
        log_s = logaddexp(lsu, ops.log1p(-u) + log_z)  # log(S(hi) + (1 - u) Z)
        if base.has_icdf:
            p = ops.exp(ops.where(upper_side, -1.0, log_p))
            s = ops.exp(ops.where(upper_side, log_s, -1.0))
            x = ops.where(upper_side, base.isf(s, **params), base.icdf(p, **params))
        else:
            x = smp.solve_quantile(base, self.support(**params), params, self.lower,
                                   self.upper, u, log_z)
        return ops.clip(x, self.lower, self.upper)

    def mean(self, **params: Any) -> Any:
        raise NotImplementedError(f"truncated {self.name}: no closed-form mean")

    def variance(self, **params: Any) -> Any:
        raise NotImplementedError(f"truncated {self.name}: no closed-form variance")


# ================================================================================================
# discrete
# ================================================================================================
class _ChecksData:
    """A discrete family: ``distribution(y, ...)`` refuses data it cannot produce."""

    def check_data(self, params: dict[str, Any], value: Any) -> None:
        check_data(self, params, value)


class _Discrete(_ChecksData, Univariate):
    discrete = True

    def support(self, **params: Any) -> Constraint:
        return integers(0)


class Bernoulli(_Discrete):
    name = "bernoulli"
    param_names = ("prob",)
    param_checks = (("prob", "unit"),)
    logit_param = "prob"

    def support(self, **params: Any) -> Constraint:
        return integers(0, 1)

    def log_prob(self, value: Any, *, prob: Any) -> Any:
        ok = (value == 0.0) | (value == 1.0)
        x = _safe(ok, value, 0.0)
        return _guard(ok, xlogy(x, prob) + xlog1py(1.0 - x, -prob))

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, prob: Any) -> Any:
        (prob,) = smp.params_like(shape, prob)
        return ops.cast(smp.uniform(generator, shape, prob) < prob, prob.dtype)

    def logit_log_density(self, data: Any, dtype: Any, backend: Any
                          ) -> Callable[[Any], Any] | None:
        return bernoulli_logit_log_density(data, dtype, backend)

    def mean(self, *, prob: Any) -> Any:
        return prob + 0.0

    def variance(self, *, prob: Any) -> Any:
        return prob * (1.0 - prob)


class Binomial(_Discrete):
    name = "binomial"
    param_names = ("size", "prob")
    param_checks = (("size", "count"), ("prob", "unit"))

    def log_prob(self, value: Any, *, size: Any, prob: Any) -> Any:
        ok = _is_integer(value) & (value >= 0.0) & (value <= size)
        x = _safe(ok, value, 0.0)
        return _guard(ok, lchoose(size, x) + xlogy(x, prob) + xlog1py(size - x, -prob))

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, size: Any, prob: Any) -> Any:
        size, prob = smp.params_like(shape, size, prob)
        return smp.binomial(generator, shape, size, prob)

    def mean(self, *, size: Any, prob: Any) -> Any:
        return size * prob

    def variance(self, *, size: Any, prob: Any) -> Any:
        return size * prob * (1.0 - prob)


class BetaBinomial(_Discrete):
    name = "beta_binomial"
    param_names = ("size", "alpha", "beta")
    param_checks = (("size", "count"), ("alpha", "positive"), ("beta", "positive"))

    def log_prob(self, value: Any, *, size: Any, alpha: Any, beta: Any) -> Any:
        ok = _is_integer(value) & (value >= 0.0) & (value <= size)
        x = _safe(ok, value, 0.0)
        lp = lchoose(size, x) + lbeta(x + alpha, size - x + beta) - lbeta(alpha, beta)
        return _guard(ok, lp)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, size: Any, alpha: Any,
               beta: Any) -> Any:
        size, alpha, beta = smp.params_like(shape, size, alpha, beta)
        p = smp.beta(generator, shape, alpha, beta)
        return smp.binomial(generator, shape, size, p)

    def mean(self, *, size: Any, alpha: Any, beta: Any) -> Any:
        return size * alpha / (alpha + beta)

    def variance(self, *, size: Any, alpha: Any, beta: Any) -> Any:
        s = alpha + beta
        return size * alpha * beta * (s + size) / (s * s * (s + 1.0))


class Poisson(_Discrete):
    name = "poisson"
    param_names = ("lambda_",)
    param_checks = (("lambda_", "positive"),)

    def log_prob(self, value: Any, *, lambda_: Any) -> Any:
        ok = _is_integer(value) & (value >= 0.0)
        x = _safe(ok, value, 0.0)
        return _guard(ok, xlogy(x, lambda_) - lambda_ - ops.lgamma(x + 1.0))

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, lambda_: Any) -> Any:
        (lam,) = smp.params_like(shape, lambda_)
        return smp.poisson(generator, shape, lam)

    def mean(self, *, lambda_: Any) -> Any:
        return lambda_ + 0.0

    def variance(self, *, lambda_: Any) -> Any:
        return lambda_ + 0.0


class NegativeBinomial(_Discrete):
    """Number of failures before the ``size``-th success, success probability ``prob``
    (greta's and R's parameterisation: mean size (1 - prob) / prob)."""

    name = "negative_binomial"
    param_names = ("size", "prob")
    param_checks = (("size", "positive"), ("prob", "unit"))

    def log_prob(self, value: Any, *, size: Any, prob: Any) -> Any:
        ok = _is_integer(value) & (value >= 0.0)
        x = _safe(ok, value, 0.0)
        lp = (ops.lgamma(x + size) - ops.lgamma(size) - ops.lgamma(x + 1.0)
              + size * ops.log(prob) + xlog1py(x, -prob))
        return _guard(ok, lp)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, size: Any, prob: Any) -> Any:
        size, prob = smp.params_like(shape, size, prob)
        log_rate = smp.log_std_gamma(generator, shape, size) + ops.log1p(-prob) - ops.log(prob)
        return smp.poisson(generator, shape, ops.exp(log_rate))

    def mean(self, *, size: Any, prob: Any) -> Any:
        return size * (1.0 - prob) / prob

    def variance(self, *, size: Any, prob: Any) -> Any:
        return size * (1.0 - prob) / (prob * prob)


# ================================================================================================
# multivariate
# ================================================================================================
class _Multivariate(_Promoting, Family):
    discrete = False
    event_ndim = 1
    param_checks: tuple[tuple[str, str], ...] = ()


def _event_shape_error(name: str, detail: str) -> ValueError:
    return ValueError(f"{name}: {detail}")


class Categorical(_ChecksData, _Multivariate):
    """One draw from K categories with probabilities ``prob`` (normalised along the last
    axis); values are one-hot vectors along the last axis, as in greta."""

    name = "categorical"
    param_names = ("prob",)
    param_checks = (("prob", "nonnegative"),)
    discrete = True

    def support(self, **params: Any) -> Constraint:
        return one_hot

    def value_shape(self, *, prob: tuple[int, ...]) -> tuple[int, ...]:
        if len(prob) < 1 or prob[-1] < 2:
            raise _event_shape_error(self.name, f"prob needs a last axis of K >= 2 categories, "
                                                f"got shape {list(prob)}")
        return tuple(prob)

    def log_prob(self, value: Any, *, prob: Any) -> Any:
        ok = one_hot.check(value)
        x = ops.where(ops.expand_dims(ok, -1), value, 0.0)
        lp = ops.sum(xlogy(x, prob), axis=-1) - ops.log(ops.sum(prob, axis=-1))
        return _guard(ok, lp)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, prob: Any) -> Any:
        (prob,) = smp.params_like(shape, prob)
        return smp.categorical(generator, shape, prob)

    def mean(self, *, prob: Any) -> Any:
        return prob / ops.sum(prob, axis=-1, keepdims=True)

    def variance(self, *, prob: Any) -> Any:
        p = self.mean(prob=prob)
        return p * (1.0 - p)


class Multinomial(_ChecksData, _Multivariate):
    """Counts of ``size`` draws over K categories with probabilities ``prob`` (normalised
    along the last axis)."""

    name = "multinomial"
    param_names = ("size", "prob")
    param_event_ndim = (("size", 0), ("prob", 1))
    param_checks = (("size", "count"), ("prob", "nonnegative"))
    discrete = True

    def support(self, **params: Any) -> Constraint:
        return counts

    def value_shape(self, *, size: tuple[int, ...], prob: tuple[int, ...]) -> tuple[int, ...]:
        if len(prob) < 1 or prob[-1] < 2:
            raise _event_shape_error(self.name, f"prob needs a last axis of K >= 2 categories, "
                                                f"got shape {list(prob)}")
        return (*ops.broadcast_shapes(tuple(size), tuple(prob[:-1])), prob[-1])

    def log_prob(self, value: Any, *, size: Any, prob: Any) -> Any:
        ok = counts.check(value) & (ops.sum(value, axis=-1) == size)
        x = ops.where(ops.expand_dims(ok, -1), value, 0.0)
        lp = (ops.lgamma(size + 1.0) - ops.sum(ops.lgamma(x + 1.0), axis=-1)
              + ops.sum(xlogy(x, prob), axis=-1)
              - size * ops.log(ops.sum(prob, axis=-1)))
        return _guard(ok, lp)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, size: Any, prob: Any) -> Any:
        (prob,) = smp.params_like(shape, prob)
        (size,) = smp.params_like(shape[:-1], size)
        return smp.multinomial(generator, shape, size, prob)

    def mean(self, *, size: Any, prob: Any) -> Any:
        p = prob / ops.sum(prob, axis=-1, keepdims=True)
        return ops.expand_dims(size, -1) * p

    def variance(self, *, size: Any, prob: Any) -> Any:
        p = prob / ops.sum(prob, axis=-1, keepdims=True)
        return ops.expand_dims(size, -1) * p * (1.0 - p)


class Dirichlet(_Multivariate):
    name = "dirichlet"
    param_names = ("alpha",)
    param_checks = (("alpha", "positive"),)

    def support(self, **params: Any) -> Constraint:
        return simplex

    def value_shape(self, *, alpha: tuple[int, ...]) -> tuple[int, ...]:
        if len(alpha) < 1 or alpha[-1] < 2:
            raise _event_shape_error(self.name, f"alpha needs a last axis of K >= 2, got shape "
                                                f"{list(alpha)}")
        return tuple(alpha)

    def log_prob(self, value: Any, *, alpha: Any) -> Any:
        ok = simplex.check(value, atol=1e-6)
        x = ops.where(ops.expand_dims(ok, -1), value, 0.5)
        lp = (ops.sum(xlogy(alpha - 1.0, x), axis=-1) - ops.sum(ops.lgamma(alpha), axis=-1)
              + ops.lgamma(ops.sum(alpha, axis=-1)))
        return _guard(ok, lp)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, alpha: Any) -> Any:
        (alpha,) = smp.params_like(shape, alpha)
        return smp.dirichlet(generator, shape, alpha)

    def mean(self, *, alpha: Any) -> Any:
        return alpha / ops.sum(alpha, axis=-1, keepdims=True)

    def variance(self, *, alpha: Any) -> Any:
        a0 = ops.sum(alpha, axis=-1, keepdims=True)
        return alpha * (a0 - alpha) / (a0 * a0 * (a0 + 1.0))


class MultivariateNormal(_Multivariate):
    """Multivariate normal with ``mean`` [..., K] and ``cholesky`` [..., K, K], the lower
    Cholesky factor of the covariance (the constructor also accepts the covariance)."""

    name = "multivariate_normal"
    param_names = ("mean", "cholesky")
    param_event_ndim = (("mean", 1), ("cholesky", 2))

    def value_shape(self, *, mean: tuple[int, ...], cholesky: tuple[int, ...]
                    ) -> tuple[int, ...]:
        if len(cholesky) < 2 or cholesky[-1] != cholesky[-2]:
            raise _event_shape_error(self.name, f"the covariance (or its Cholesky factor) must "
                                                f"be square [..., K, K], got {list(cholesky)}")
        k = cholesky[-1]
        if len(mean) < 1 or mean[-1] not in (1, k):
            raise _event_shape_error(self.name, f"mean of shape {list(mean)} does not match a "
                                                f"covariance of dimension {k}")
        return (*ops.broadcast_shapes(tuple(mean[:-1]), tuple(cholesky[:-2])), k)

    def log_prob(self, value: Any, *, mean: Any, cholesky: Any) -> Any:
        diff = value - mean
        k = cholesky.shape[-1]
        if cholesky.ndim == 2:  # one factor for every event: one solve with many columns
            batch = diff.shape[:-1]
            cols = ops.transpose(ops.reshape(diff, (-1, k)))
            z = ops.triangular_solve(cholesky, cols, lower=True)
            maha = ops.reshape(ops.sum(z * z, axis=0), batch)
        else:
            z = ops.triangular_solve(cholesky, ops.expand_dims(diff, -1), lower=True)
            maha = ops.sum(ops.squeeze(z, -1) ** 2, axis=-1)
        eye = ops.eye(k, dtype=cholesky.dtype, backend=cholesky.backend)
        log_det = ops.sum(ops.log(ops.sum(cholesky * eye, axis=-1)), axis=-1)
        return -0.5 * maha - log_det - k * HALF_LOG_2PI

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, mean: Any, cholesky: Any
               ) -> Any:
        (mean,) = smp.params_like(shape, mean)
        z = smp.std_normal(generator, shape, mean)
        return mean + ops.squeeze(ops.matmul(cholesky, ops.expand_dims(z, -1)), -1)

    def mean(self, *, mean: Any, cholesky: Any) -> Any:
        return mean + 0.0 * ops.sum(cholesky, axis=-1)

    def variance(self, *, mean: Any, cholesky: Any) -> Any:
        return ops.sum(cholesky * cholesky, axis=-1) + 0.0 * mean


def lkj_log_normaliser(eta: Any, n: int) -> Any:
    """log of the LKJ normalising constant 1 / c_n(eta) (Lewandowski, Kurowicka and Joe 2009):
    c_n = 2^{sum_k (2 eta - 2 + n - k)(n - k)} prod_k B(eta + (n-k-1)/2, eta + (n-k-1)/2)^{n-k},
    k = 1 .. n-1."""
    total = 0.0
    for k in range(1, n):
        b = eta + 0.5 * (n - k - 1)
        total = total + (2.0 * eta - 2.0 + n - k) * (n - k) * LOG_2 + (n - k) * lbeta(b, b)
    return -total


class LKJCorrelation(_Multivariate):
    """LKJ distribution over n x n correlation matrices: density proportional to
    det(R)^(eta - 1)."""

    name = "lkj_correlation"
    param_names = ("eta",)
    param_checks = (("eta", "positive"),)
    param_kinds = (("eta", "scalar"),)  # greta: one eta for the matrix
    event_ndim = 2

    def __init__(self, dimension: int = 2) -> None:
        if not isinstance(dimension, int) or dimension < 2:
            raise ValueError(f"lkj_correlation: dimension must be an integer >= 2, got "
                             f"{dimension!r}")
        self.dimension = dimension

    def __repr__(self) -> str:
        return f"<family lkj_correlation {self.dimension}x{self.dimension}>"

    def support(self, **params: Any) -> Constraint:
        return correlation_matrix

    def value_shape(self, *, eta: tuple[int, ...]) -> tuple[int, ...]:
        return (*eta, self.dimension, self.dimension)

    def log_prob(self, value: Any, *, eta: Any) -> Any:
        n = self.dimension
        L = ops.cholesky(value)
        eye = ops.eye(n, dtype=value.dtype, backend=value.backend)
        log_det = 2.0 * ops.sum(ops.log(ops.sum(L * eye, axis=-1)), axis=-1)
        return (eta - 1.0) * log_det + lkj_log_normaliser(eta, n)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, eta: Any) -> Any:
        (eta,) = smp.params_like(shape[:-2], eta)
        return smp.lkj(generator, shape, eta)

    def mean(self, *, eta: Any) -> Any:
        n = self.dimension
        eye = ops.eye(n, dtype=eta.dtype, backend=eta.backend)
        return eye + 0.0 * ops.expand_dims(ops.expand_dims(eta, -1), -1)

    def variance(self, *, eta: Any) -> Any:
        n = self.dimension
        eye = ops.eye(n, dtype=eta.dtype, backend=eta.backend)
        off = 1.0 / (2.0 * eta + n - 1.0)
        return (1.0 - eye) * ops.expand_dims(ops.expand_dims(off, -1), -1)


# ================================================================================================
# issue 16: F, hypergeometric, Dirichlet-multinomial, Wishart
# ================================================================================================
class F(_Positive):
    """Fisher's F with ``df1`` and ``df2`` degrees of freedom (the ratio of two scaled
    chi-squares)."""

    name = "f"
    param_names = ("df1", "df2")
    param_checks = (("df1", "positive"), ("df2", "positive"))

    def log_prob(self, value: Any, *, df1: Any, df2: Any) -> Any:
        ok = value >= 0.0
        x = _safe(ok, value, 1.0)
        h1, h2 = 0.5 * df1, 0.5 * df2
        lp = (h1 * ops.log(df1) + h2 * ops.log(df2) + xlogy(h1 - 1.0, x)
              - (h1 + h2) * ops.log(df2 + df1 * x) - lbeta(h1, h2))
        return _guard(ok, lp)

    @staticmethod
    def _xy(value: Any, df1: Any, df2: Any) -> tuple[Any, Any]:
        # P(F <= v) = I_{d1 v / (d1 v + d2)}(d1/2, d2/2); both fractions directly (no 1 - x)
        v = ops.maximum(value, 0.0)
        den = df1 * v + df2
        return df1 * v / den, df2 / den

    def log_cdf_sf(self, value: Any, *, df1: Any, df2: Any) -> tuple[Any, Any]:
        x, y = self._xy(value, df1, df2)
        return log_betainc_pair(0.5 * df1, 0.5 * df2, x, y)

    def log_cdf(self, value: Any, *, df1: Any, df2: Any) -> Any:
        return self.log_cdf_sf(value, df1=df1, df2=df2)[0]

    def log_sf(self, value: Any, *, df1: Any, df2: Any) -> Any:
        return self.log_cdf_sf(value, df1=df1, df2=df2)[1]

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, df1: Any, df2: Any) -> Any:
        df1, df2 = smp.params_like(shape, df1, df2)
        # (chi2(d1) / d1) / (chi2(d2) / d2) = (G1 / d1) / (G2 / d2), G ~ Gamma(d / 2): on the
        # log scale so that small degrees of freedom keep their tiny values
        log_g1 = smp.log_std_gamma(generator, shape, 0.5 * df1)
        log_g2 = smp.log_std_gamma(generator, shape, 0.5 * df2)
        return ops.exp(log_g1 - log_g2 + ops.log(df2) - ops.log(df1))

    def mean(self, *, df1: Any, df2: Any) -> Any:
        ok = df2 > 2.0
        return ops.where(ok, df2 / ops.where(ok, df2 - 2.0, 1.0) + 0.0 * df1, math.nan)

    def variance(self, *, df1: Any, df2: Any) -> Any:
        ok = df2 > 4.0
        d2m2 = ops.where(ok, df2 - 2.0, 1.0)
        v = (2.0 * df2 * df2 * (df1 + df2 - 2.0)
             / (df1 * d2m2 * d2m2 * ops.where(ok, df2 - 4.0, 1.0)))
        return ops.where(ok, v, ops.where(df2 > 2.0, math.inf, math.nan))


class Hypergeometric(_Discrete):
    """White balls among ``k`` drawn without replacement from an urn of ``m`` white and ``n``
    black balls (R's ``dhyper(x, m, n, k)``, greta's parameterisation)."""

    name = "hypergeometric"
    param_names = ("m", "n", "k")
    param_checks = (("m", "count"), ("n", "count"), ("k", "count"))

    def log_prob(self, value: Any, *, m: Any, n: Any, k: Any) -> Any:
        ok = (_is_integer(value) & (value >= 0.0) & (value >= k - n) & (value <= k)
              & (value <= m))
        x = _safe(ok, value, ops.maximum(k - n, 0.0))
        lp = lchoose(m, x) + lchoose(n, k - x) - lchoose(m + n, k)
        return _guard(ok, lp)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, m: Any, n: Any, k: Any
               ) -> Any:
        m, n, k = smp.params_like(shape, m, n, k)
        return smp.hypergeometric(generator, shape, m, n, k)

    def mean(self, *, m: Any, n: Any, k: Any) -> Any:
        return k * m / (m + n)

    def variance(self, *, m: Any, n: Any, k: Any) -> Any:
        t = m + n
        return k * (m / t) * (n / t) * (t - k) / ops.maximum(t - 1.0, 1.0)


class DirichletMultinomial(_ChecksData, _Multivariate):
    """Counts of ``size`` draws over K categories whose probabilities follow a Dirichlet with
    concentrations ``alpha`` (last axis)."""

    name = "dirichlet_multinomial"
    param_names = ("size", "alpha")
    param_checks = (("size", "count"), ("alpha", "positive"))
    param_event_ndim = (("size", 0), ("alpha", 1))
    discrete = True

    def support(self, **params: Any) -> Constraint:
        return counts

    def value_shape(self, *, size: tuple[int, ...], alpha: tuple[int, ...]) -> tuple[int, ...]:
        if len(alpha) < 1 or alpha[-1] < 2:
            raise _event_shape_error(self.name, f"alpha needs a last axis of K >= 2 categories, "
                                                f"got shape {list(alpha)}")
        return (*ops.broadcast_shapes(tuple(size), tuple(alpha[:-1])), alpha[-1])

    def log_prob(self, value: Any, *, size: Any, alpha: Any) -> Any:
        ok = counts.check(value) & (ops.sum(value, axis=-1) == size)
        x = ops.where(ops.expand_dims(ok, -1), value, 0.0)
        a0 = ops.sum(alpha, axis=-1)
        lp = (ops.lgamma(size + 1.0) + ops.lgamma(a0) - ops.lgamma(size + a0)
              + ops.sum(ops.lgamma(x + alpha) - ops.lgamma(alpha) - ops.lgamma(x + 1.0),
                        axis=-1))
        return _guard(ok, lp)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, size: Any, alpha: Any
               ) -> Any:
        (alpha,) = smp.params_like(shape, alpha)
        (size,) = smp.params_like(shape[:-1], size)
        return smp.multinomial(generator, shape, size, smp.dirichlet(generator, shape, alpha))

    def mean(self, *, size: Any, alpha: Any) -> Any:
        return ops.expand_dims(size, -1) * alpha / ops.sum(alpha, axis=-1, keepdims=True)

    def variance(self, *, size: Any, alpha: Any) -> Any:
        a0 = ops.sum(alpha, axis=-1, keepdims=True)
        p = alpha / a0
        s = ops.expand_dims(size, -1)
        return s * p * (1.0 - p) * (s + a0) / (1.0 + a0)


def _diag(m: Any) -> Any:
    """The diagonal of [..., K, K] as [..., K]."""
    eye = ops.eye(m.shape[-1], dtype=m.dtype, backend=m.backend)
    return ops.sum(m * eye, axis=-1)


def log_multigamma(a: Any, k: int) -> Any:
    """log Gamma_k(a) = k (k - 1) / 4 log(pi) + sum_{j=1..k} lgamma(a + (1 - j) / 2)."""
    out = 0.25 * k * (k - 1) * LOG_PI
    for j in range(1, k + 1):
        out = out + ops.lgamma(a + 0.5 * (1 - j))
    return out


class Wishart(_Multivariate):
    """Wishart over K x K symmetric positive definite matrices with ``df`` degrees of freedom
    (``df > K - 1``) and scale matrix ``Sigma`` (mean ``df * Sigma``)."""

    name = "wishart"
    param_names = ("df", "Sigma")
    param_checks = (("df", "positive"),)
    param_event_ndim = (("df", 0), ("Sigma", 2))
    event_ndim = 2

    def support(self, **params: Any) -> Constraint:
        return positive_definite

    def value_shape(self, *, df: tuple[int, ...], Sigma: tuple[int, ...]) -> tuple[int, ...]:
        if len(Sigma) < 2 or Sigma[-1] != Sigma[-2]:
            raise _event_shape_error(self.name, f"Sigma must be square [..., K, K], got "
                                                f"{list(Sigma)}")
        return (*ops.broadcast_shapes(tuple(df), tuple(Sigma[:-2])), Sigma[-2], Sigma[-1])

    def log_prob(self, value: Any, *, df: Any, Sigma: Any) -> Any:
        # (df - K - 1)/2 log|X| - tr(Sigma^-1 X)/2 - df K/2 log 2 - df/2 log|Sigma|
        # - log Gamma_K(df/2); with L L' = Sigma and M M' = X, tr(Sigma^-1 X) = |L^-1 M|_F^2
        k = value.shape[-1]
        # outside the support (not symmetric positive definite): -inf, factorising the
        # identity instead (the support's check has no exceptions)
        ok = positive_definite.check(value)
        eye = ops.eye(k, dtype=value.dtype, backend=value.backend)
        x = ops.where(ops.expand_dims(ops.expand_dims(ok, -1), -1), value, eye)
        chol_s = ops.cholesky(Sigma)
        chol_x = ops.cholesky(x)
        batch = ops.broadcast_shapes(tuple(chol_s.shape[:-2]), tuple(chol_x.shape[:-2]))
        chol_s = ops.broadcast_to(chol_s, (*batch, k, k))
        z = ops.triangular_solve(chol_s, ops.broadcast_to(chol_x, (*batch, k, k)), lower=True)
        trace = ops.sum(ops.sum(z * z, axis=-1), axis=-1)
        log_det_x = 2.0 * ops.sum(ops.log(_diag(chol_x)), axis=-1)
        log_det_s = 2.0 * ops.sum(ops.log(_diag(chol_s)), axis=-1)
        lp = (0.5 * (df - k - 1.0) * log_det_x - 0.5 * trace - 0.5 * df * k * LOG_2
              - 0.5 * df * log_det_s - log_multigamma(0.5 * df, k))
        return _guard(ok, lp)

    def sample(self, generator: Any, shape: tuple[int, ...], /, *, df: Any, Sigma: Any) -> Any:
        # Bartlett: X = L A A' L', A lower triangular with A_ii^2 ~ chi2(df - i) (0-based i)
        # and standard normal entries below the diagonal
        k = shape[-1]
        batch = tuple(shape[:-2])
        (df,) = smp.params_like(batch, df)
        (sigma,) = smp.params_like(shape, Sigma)
        offsets = ops.tensor([float(i) for i in range(k)], dtype="float64", backend=df.backend)
        dof = ops.expand_dims(df, -1) - offsets
        diag = ops.exp(0.5 * (LOG_2 + smp.log_std_gamma(generator, (*batch, k), 0.5 * dof)))
        eye = ops.eye(k, dtype="float64", backend=df.backend)
        a = ops.tril(smp.std_normal(generator, shape, df), -1) + eye * ops.expand_dims(diag, -1)
        la = ops.matmul(ops.cholesky(sigma), a)
        return ops.matmul(la, ops.swapaxes(la, -1, -2))

    def mean(self, *, df: Any, Sigma: Any) -> Any:
        return ops.expand_dims(ops.expand_dims(df, -1), -1) * Sigma

    def variance(self, *, df: Any, Sigma: Any) -> Any:
        d = _diag(Sigma)
        outer = ops.expand_dims(d, -1) * ops.expand_dims(d, -2)
        return ops.expand_dims(ops.expand_dims(df, -1), -1) * (Sigma * Sigma + outer)
