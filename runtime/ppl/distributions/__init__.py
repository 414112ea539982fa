"""greta's distributions as lazy variables: ``mu = lognormal(0, 1)`` is a positive variable with
that prior; ``distribution(y, poisson(lam))`` assigns a likelihood to data.

Argument names and orders follow greta (``normal(mean, sd)``, ``lognormal(meanlog, sdlog)``,
``student(df, mu, sigma)``, ``gamma(shape, rate)``, ``beta(shape1, shape2)``,
``negative_binomial(size, prob)``, ...; ``poisson(lambda_)`` since ``lambda`` is a Python
keyword). Univariate families take ``dim`` (the shape of the variable, broadcasting the
parameters); the continuous ones also ``truncation=(lower, upper)``, which renormalises the density
through the CDF and makes the truncation interval the support of a prior. Multivariate families
put the event on the last axis and take ``n_realisations`` (a leading axis of independent draws)
and ``dimension`` (the event size, when the parameters do not fix it).

Discrete families (bernoulli, binomial, beta_binomial, negative_binomial, poisson, categorical,
multinomial) can only be observed: using one as a prior is refused when the model is built.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from ... import ops
from ...argument_checks import (
    DistributionSpec,
    arg_tests,
    check_arg,
    check_values,
    distribution_spec,
    door_name,
)
from ...graph.model_compiler import make_distribution
from ...graph.nodes import LazyArray, VariableNode, _lazy, model_backend
from ...host_namespace import to_host, to_tensor, xp
from ...tensor import Tensor
from . import families, sampling, special
from .combinators import Joint, Mixture, component_key
from .data_checks import check_data
from .data_checks import host_values as _host
from .data_checks import is_unknown as _unknown
from .families import (
    Bernoulli,
    Beta,
    BetaBinomial,
    Binomial,
    Categorical,
    Cauchy,
    ChiSquared,
    Dirichlet,
    DirichletMultinomial,
    Exponential,
    F,
    Gamma,
    Hypergeometric,
    InverseGamma,
    Laplace,
    LKJCorrelation,
    Logistic,
    LogNormal,
    Multinomial,
    MultivariateNormal,
    NegativeBinomial,
    Normal,
    Pareto,
    Poisson,
    Student,
    Truncated,
    Uniform,
    Weibull,
    Wishart,
)
from .links import icauchit, icloglog, imultilogit, iprobit

__all__ = [
    "CATALOGUE",
    "DISTRIBUTIONS",
    "check_data",
    "bernoulli",
    "beta",
    "beta_binomial",
    "binomial",
    "categorical",
    "cauchy",
    "chi_squared",
    "dirichlet",
    "dirichlet_multinomial",
    "exponential",
    "f",
    "families",
    "gamma",
    "hypergeometric",
    "icauchit",
    "icloglog",
    "imultilogit",
    "iprobit",
    "inverse_gamma",
    "joint",
    "laplace",
    "lkj_correlation",
    "logistic",
    "lognormal",
    "mixture",
    "multinomial",
    "multivariate_normal",
    "negative_binomial",
    "normal",
    "pareto",
    "poisson",
    "sampling",
    "special",
    "student",
    "uniform",
    "weibull",
    "wishart",
]

# the public constructors (what tensorbridge re-exports)
DISTRIBUTIONS = [
    "bernoulli", "beta", "beta_binomial", "binomial", "categorical", "cauchy", "chi_squared",
    "dirichlet", "exponential", "gamma", "inverse_gamma", "laplace", "lkj_correlation",
    "logistic", "lognormal", "multinomial", "multivariate_normal", "negative_binomial", "normal",
    "pareto", "poisson", "student", "uniform", "weibull",
    # issue 16
    "dirichlet_multinomial", "f", "hypergeometric", "wishart",
]

# greta's functions that combine distributions (their components are arguments ``...``, so they
# are not in the catalogue of constructors the doors call by name) and its inverse links
COMBINATORS = ["joint", "mixture"]
LINKS = ["icauchit", "icloglog", "imultilogit", "iprobit"]

# natural supports of the truncatable families: truncation bounds must lie inside
_NATURAL = {"lognormal": (0.0, math.inf), "gamma": (0.0, math.inf),
            "inverse_gamma": (0.0, math.inf), "weibull": (0.0, math.inf),
            "exponential": (0.0, math.inf), "pareto": (0.0, math.inf),
            "chi_squared": (0.0, math.inf), "beta": (0.0, 1.0), "f": (0.0, math.inf)}


_CHECKS = {
    "positive": (lambda v: v > 0, "positive"),
    "nonnegative": (lambda v: v >= 0, "non-negative"),
    "unit": (lambda v: (v >= 0) & (v <= 1), "in [0, 1]"),
    "count": (lambda v: (v >= 0) & (v == v.round()), "a non-negative integer"),
    "finite": (lambda v: xp.isfinite(v), "finite"),
}


def check_value(fn: str, arg: str, check: str | None, value: Any, door: str = "python") -> None:
    """A known value of argument ``arg`` of distribution ``fn`` against its value check (a
    family's ``param_checks``: "positive"...; NaN never passes), named as ``door`` spells it.
    Unknown values (they depend on variables) are not checked."""
    if _unknown(value):
        return
    v = _host(value)
    if xp.any(xp.isnan(v)):
        raise ValueError(f"{door_name(fn, door)}: {door_name(arg, door)} contains NaN")
    if check is None:
        return
    test, words = _CHECKS[check]
    if not xp.all(test(v)):
        raise ValueError(f"{door_name(fn, door)}: {door_name(arg, door)} must be {words}, got "
                         f"{v.tolist()}")


def _validate(family: Any, params: dict[str, Any]) -> None:
    """Check parameters that are known now (constants and data) against the family's needs."""
    checks = dict(family.param_checks)
    for name, value in params.items():
        check_value(family.name, name, checks.get(name), value)


def _truncate(family: Any, truncation: Any) -> Any:
    if truncation is None:
        return family
    lower, upper = (float(t) for t in truncation)  # two numbers, not NaN: checked at entry
    if not lower < upper:
        raise ValueError(f"{family.name}: truncation needs lower < upper, got "
                         f"({lower}, {upper})")
    lo, hi = _NATURAL.get(family.name, (-math.inf, math.inf))
    if lower < lo or upper > hi:
        raise ValueError(f"{family.name}: truncation ({lower:g}, {upper:g}) must lie inside the "
                         f"support ({lo:g}, {hi:g})")
    if lower <= lo and upper >= hi:
        return family  # truncation to the whole support: nothing to do
    return Truncated(family, lower, upper)


def _make(family: Any, params: dict[str, Any], dim: Any = None, truncation: Any = None
          ) -> LazyArray:
    _validate(family, params)
    if dim is not None and not isinstance(dim, list | tuple):
        dim = operator.index(dim)  # a NumPy integer as an int (a shape, checked at entry)
    return make_distribution(_truncate(family, truncation), params, dim)


# -- univariate continuous ------------------------------------------------------------------------
def uniform(min: Any, max: Any, dim: Any = None) -> LazyArray:
    """Uniform on [min, max]; as a prior min and max must be fixed scalars."""
    check_values(_ARG_TESTS, "uniform", (min, max, dim))
    fixed = not (_unknown(min) or _unknown(max))
    if fixed and not xp.all(_host(min) < _host(max)):
        raise ValueError(f"uniform: max must be greater than min, got min={_host(min).tolist()}"
                         f", max={_host(max).tolist()}")
    return _make(Uniform(fixed=fixed), {"min": min, "max": max}, dim)


def normal(mean: Any, sd: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    """A normal distribution: a prior when used as a variable (``mu = normal(0, 10)``), or a
    likelihood via ``distribution(y, normal(mu, sd))``."""
    check_values(_ARG_TESTS, "normal", (mean, sd, dim, truncation))
    return _make(Normal(), {"mean": mean, "sd": sd}, dim, truncation)


def lognormal(meanlog: Any, sdlog: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "lognormal", (meanlog, sdlog, dim, truncation))
    return _make(LogNormal(), {"meanlog": meanlog, "sdlog": sdlog}, dim, truncation)


def student(df: Any, mu: Any, sigma: Any, dim: Any = None, truncation: Any = None
            ) -> LazyArray:
    check_values(_ARG_TESTS, "student", (df, mu, sigma, dim, truncation))
    return _make(Student(), {"df": df, "mu": mu, "sigma": sigma}, dim, truncation)


def cauchy(location: Any, scale: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "cauchy", (location, scale, dim, truncation))
    return _make(Cauchy(), {"location": location, "scale": scale}, dim, truncation)


def logistic(location: Any, scale: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "logistic", (location, scale, dim, truncation))
    return _make(Logistic(), {"location": location, "scale": scale}, dim, truncation)


def laplace(mu: Any, sigma: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "laplace", (mu, sigma, dim, truncation))
    return _make(Laplace(), {"mu": mu, "sigma": sigma}, dim, truncation)


def exponential(rate: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "exponential", (rate, dim, truncation))
    return _make(Exponential(), {"rate": rate}, dim, truncation)


def gamma(shape: Any, rate: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "gamma", (shape, rate, dim, truncation))
    return _make(Gamma(), {"shape": shape, "rate": rate}, dim, truncation)


def inverse_gamma(alpha: Any, beta: Any, dim: Any = None, truncation: Any = None
                  ) -> LazyArray:
    check_values(_ARG_TESTS, "inverse_gamma", (alpha, beta, dim, truncation))
    return _make(InverseGamma(), {"alpha": alpha, "beta": beta}, dim, truncation)


def weibull(shape: Any, scale: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "weibull", (shape, scale, dim, truncation))
    return _make(Weibull(), {"shape": shape, "scale": scale}, dim, truncation)


def pareto(a: Any, b: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    """Pareto with shape ``a`` and scale ``b`` (support x >= b); as a prior b must be fixed."""
    check_values(_ARG_TESTS, "pareto", (a, b, dim, truncation))
    return _make(Pareto(fixed=not _unknown(b)), {"a": a, "b": b}, dim, truncation)


def beta(shape1: Any, shape2: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "beta", (shape1, shape2, dim, truncation))
    return _make(Beta(), {"shape1": shape1, "shape2": shape2}, dim, truncation)


def chi_squared(df: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "chi_squared", (df, dim, truncation))
    return _make(ChiSquared(), {"df": df}, dim, truncation)


# -- discrete -------------------------------------------------------------------------------------
def bernoulli(prob: Any, dim: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "bernoulli", (prob, dim))
    return _make(Bernoulli(), {"prob": prob}, dim)


def binomial(size: Any, prob: Any, dim: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "binomial", (size, prob, dim))
    return _make(Binomial(), {"size": size, "prob": prob}, dim)


def beta_binomial(size: Any, alpha: Any, beta: Any, dim: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "beta_binomial", (size, alpha, beta, dim))
    return _make(BetaBinomial(), {"size": size, "alpha": alpha, "beta": beta}, dim)


def poisson(lambda_: Any, dim: Any = None) -> LazyArray:
    check_values(_ARG_TESTS, "poisson", (lambda_, dim))
    return _make(Poisson(), {"lambda_": lambda_}, dim)


def negative_binomial(size: Any, prob: Any, dim: Any = None) -> LazyArray:
    """Failures before the ``size``-th success (greta/R parameterisation)."""
    check_values(_ARG_TESTS, "negative_binomial", (size, prob, dim))
    return _make(NegativeBinomial(), {"size": size, "prob": prob}, dim)


# -- multivariate ---------------------------------------------------------------------------------
def _as_param(x: Any) -> Any:
    if isinstance(x, LazyArray):
        return x
    t = x if isinstance(x, Tensor) else ops.tensor(x, dtype="float64", backend=model_backend())
    return t if t.dtype.name == "float64" else ops.cast(t, "float64")


def _event_param(x: Any, name: str, fname: str, dimension: int | None) -> Any:
    """A parameter with the event on its last axis, widened to ``dimension`` if given."""
    x = _as_param(x)
    if dimension is None:
        if x.ndim == 0:
            raise ValueError(f"{fname}: {name} is a scalar; give a vector or set dimension")
        return x
    dimension = int(dimension)
    if x.ndim and x.shape[-1] == dimension:
        return x
    if x.ndim == 0 or x.shape[-1] == 1:
        return ops.broadcast_to(x, (*x.shape[:-1], dimension) if x.ndim else (dimension,))
    raise ValueError(f"{fname}: {name} has {x.shape[-1]} entries on its last axis but "
                     f"dimension is {dimension}")


def _realisations(family: Any, params: dict[str, Any], n_realisations: Any) -> Any:
    if n_realisations is None:
        return None
    n = int(n_realisations)  # a positive whole number: checked at entry
    shape = family.value_shape(**{k: tuple(v.shape) for k, v in params.items()})
    return (n, *shape[len(shape) - family.event_ndim:])


def _make_mv(family: Any, params: dict[str, Any], n_realisations: Any) -> LazyArray:
    _validate(family, params)
    return make_distribution(family, params, _realisations(family, params, n_realisations))


def dirichlet(alpha: Any, n_realisations: Any = None, dimension: Any = None) -> LazyArray:
    """Dirichlet over the simplex along the last axis."""
    check_values(_ARG_TESTS, "dirichlet", (alpha, n_realisations, dimension))
    alpha = _event_param(alpha, "alpha", "dirichlet", dimension)
    return _make_mv(Dirichlet(), {"alpha": alpha}, n_realisations)


def categorical(prob: Any, n_realisations: Any = None, dimension: Any = None) -> LazyArray:
    """One-hot categorical draws (values are one-hot rows, as in greta); ``prob`` is normalised
    along its last axis."""
    check_values(_ARG_TESTS, "categorical", (prob, n_realisations, dimension))
    prob = _event_param(prob, "prob", "categorical", dimension)
    return _make_mv(Categorical(), {"prob": prob}, n_realisations)


def multinomial(size: Any, prob: Any, n_realisations: Any = None, dimension: Any = None
                ) -> LazyArray:
    """Counts of ``size`` draws over the categories of ``prob`` (normalised, last axis)."""
    check_values(_ARG_TESTS, "multinomial", (size, prob, n_realisations, dimension))
    prob = _event_param(prob, "prob", "multinomial", dimension)
    return _make_mv(Multinomial(), {"size": _as_param(size), "prob": prob}, n_realisations)


def _check_covariance(s: Any, fname: str = "multivariate_normal") -> None:
    """Known ``Sigma`` values (``[..., K, K]``) must be symmetric (``numpy.allclose`` to their
    transpose) and positive definite (a finite Cholesky factor): decided with the runtime's own
    ops on the model backend, so NumPy and the python backend (Pyodide) refuse the same ones."""
    t = to_tensor(s, "float64", backend=model_backend())
    a, at = to_host(t), to_host(ops.swapaxes(t, -1, -2))
    if not xp.all(xp.abs(a - at) <= 1e-8 + 1e-5 * xp.abs(at)):
        raise ValueError(f"{fname}: Sigma must be symmetric")
    if not xp.all(xp.isfinite(to_host(ops.cholesky(t)))):  # NaN where a pivot is not > 0
        raise ValueError(f"{fname}: Sigma must be positive definite")


def multivariate_normal(mean: Any, Sigma: Any = None, n_realisations: Any = None,
                        dimension: Any = None, *, cholesky: Any = None) -> LazyArray:
    """Multivariate normal over the last axis, with covariance ``Sigma`` (factored here) or its
    lower Cholesky factor ``cholesky`` (the family's parameterisation)."""
    check_values(_ARG_TESTS, "multivariate_normal",
                 (mean, Sigma, n_realisations, dimension, cholesky))
    if (Sigma is None) == (cholesky is None):
        raise ValueError("multivariate_normal: give exactly one of Sigma or cholesky")
    if cholesky is None:
        Sigma = _as_param(Sigma)
        if Sigma.ndim < 2 or Sigma.shape[-1] != Sigma.shape[-2]:
            raise ValueError(f"multivariate_normal: Sigma must be square [..., K, K], got "
                             f"{list(Sigma.shape)}")
        if not _unknown(Sigma):
            _check_covariance(_host(Sigma))
        chol = ops.cholesky(Sigma)
    else:
        chol = _as_param(cholesky)
    k = chol.shape[-1] if chol.ndim >= 2 else None
    if dimension is not None and k is not None and int(dimension) != k:
        raise ValueError(f"multivariate_normal: dimension {dimension} does not match the "
                         f"{k} x {k} covariance")
    mean = _event_param(mean, "mean", "multivariate_normal", k)
    return _make_mv(MultivariateNormal(), {"mean": mean, "cholesky": chol}, n_realisations)


def lkj_correlation(eta: Any, dimension: int = 2) -> LazyArray:
    """LKJ prior on a ``dimension`` x ``dimension`` correlation matrix (density proportional
    to det(R)^(eta - 1))."""
    check_values(_ARG_TESTS, "lkj_correlation", (eta, dimension))
    family = LKJCorrelation(int(dimension))
    eta = _as_param(eta)
    if eta.ndim:  # one number (checked) in an array of any rank: one matrix, as greta
        eta = ops.reshape(eta, ())
    return _make_mv(family, {"eta": eta}, None)


# -- issue 16: F, hypergeometric, Dirichlet-multinomial, Wishart ---------------------------------
def f(df1: Any, df2: Any, dim: Any = None, truncation: Any = None) -> LazyArray:
    """Fisher's F distribution with ``df1`` and ``df2`` degrees of freedom."""
    check_values(_ARG_TESTS, "f", (df1, df2, dim, truncation))
    return _make(F(), {"df1": df1, "df2": df2}, dim, truncation)


def hypergeometric(m: Any, n: Any, k: Any, dim: Any = None) -> LazyArray:
    """White balls among ``k`` drawn without replacement from ``m`` white and ``n`` black
    (R's ``dhyper(x, m, n, k)``); observed only."""
    check_values(_ARG_TESTS, "hypergeometric", (m, n, k, dim))
    if not (_unknown(m) or _unknown(n) or _unknown(k)):
        if not xp.all(_host(k) <= _host(m) + _host(n)):
            raise ValueError(f"hypergeometric: k must be at most m + n (the balls in the urn), "
                             f"got k={_host(k).tolist()}, m + n={(_host(m) + _host(n)).tolist()}")
    return _make(Hypergeometric(), {"m": m, "n": n, "k": k}, dim)


def dirichlet_multinomial(size: Any, alpha: Any, n_realisations: Any = None,
                          dimension: Any = None) -> LazyArray:
    """Counts of ``size`` draws over categories with Dirichlet(``alpha``) probabilities (last
    axis); observed only."""
    check_values(_ARG_TESTS, "dirichlet_multinomial", (size, alpha, n_realisations, dimension))
    alpha = _event_param(alpha, "alpha", "dirichlet_multinomial", dimension)
    return _make_mv(DirichletMultinomial(), {"size": _as_param(size), "alpha": alpha},
                    n_realisations)


def wishart(df: Any, Sigma: Any, dimension: Any = None) -> LazyArray:
    """Wishart over symmetric positive definite ``K x K`` matrices with ``df > K - 1`` degrees
    of freedom and scale matrix ``Sigma`` (mean ``df * Sigma``); as a prior the matrix is
    sampled through its Cholesky factor."""
    check_values(_ARG_TESTS, "wishart", (df, Sigma, dimension))
    Sigma = _as_param(Sigma)
    if Sigma.ndim < 2 or Sigma.shape[-1] != Sigma.shape[-2]:
        raise ValueError(f"wishart: Sigma must be a square matrix [..., K, K], got shape "
                         f"{list(Sigma.shape)}")
    k = Sigma.shape[-1]
    if dimension is not None and int(dimension) != k:
        raise ValueError(f"wishart: dimension {dimension} does not match the {k} x {k} Sigma")
    if not _unknown(Sigma):
        _check_covariance(_host(Sigma), "wishart")
    df = _as_param(df)
    if not _unknown(df) and not xp.all(_host(df) > k - 1):
        raise ValueError(f"wishart: df must be greater than K - 1 = {k - 1} for a {k} x {k} "
                         f"Sigma, got {_host(df).tolist()}")
    return _make_mv(Wishart(), {"df": df, "Sigma": Sigma}, None)


# -- mixture() and joint() ------------------------------------------------------------------------
def _components(fname: str, dists: tuple[Any, ...]) -> list[tuple[Any, dict[str, Any], tuple]]:
    """(family, parameters, shape) of each component: what a distribution constructor made
    (checked here; :func:`_detach` takes them over once the combination is checked too)."""
    if len(dists) < 2:
        raise ValueError(f"{fname}: give at least two distributions, got {len(dists)}")
    out = []
    for i, d in enumerate(dists, 1):
        node = d.node if isinstance(d, LazyArray) else None
        dn = getattr(node, "distribution", None)
        if not isinstance(node, VariableNode) or dn is None or dn.target is not node:
            raise TypeError(f"{fname}: argument {i} must be a distribution (e.g. normal(0, 1)), "
                            f"got {type(d).__name__}")
        if node.children:
            raise ValueError(f"{fname}: argument {i} is already used in other operations; give "
                             f"the distribution itself")
        params = {k: _lazy(v) if not isinstance(v, Tensor) else v
                  for k, v in dn.param_args.items()}
        out.append((dn.family, params, tuple(node.shape)))
    kinds = {bool(getattr(f, "discrete", False)) for f, _, _ in out}
    if len(kinds) > 1:
        raise ValueError(f"{fname}: the distributions must be all continuous or all discrete")
    shapes = {s for _, _, s in out}
    if len(shapes) > 1:
        raise ValueError(f"{fname}: the distributions must have the same dimensions, got "
                         f"{', '.join(str(list(s)) for _, _, s in out)}")
    return out


def _detach(dists: tuple[Any, ...]) -> None:
    """The components' own densities leave the graph: the combined distribution stands for
    them (their variables are never parameters of a model)."""
    for d in dists:
        dn = d.node.distribution
        for p in dn.parents:
            p.children.remove(dn)
        d.node.distribution = None


def _combined_params(parts: list[tuple[Any, dict[str, Any], tuple]]) -> dict[str, Any]:
    return {component_key(i, k): v for i, (_, params, _) in enumerate(parts)
            for k, v in params.items()}


def _as_shape(fname: str, dim: Any) -> tuple[int, ...] | None:
    check_arg(fname, "dim", "shape", dim)
    if dim is None:
        return None
    return tuple(operator.index(d) for d in (dim if isinstance(dim, list | tuple) else (dim,)))


def mixture(*dists: Any, weights: Any, dim: Any = None) -> LazyArray:
    """A mixture of distributions: log p(x) = log sum_i w_i p_i(x), ``weights`` (positive, need
    not sum to one) with the components along its first axis, its other axes 1 or matching the
    distributions' dimensions."""
    check_arg("mixture", "weights", "array", weights)
    want = _as_shape("mixture", dim)
    parts = _components("mixture", dists)
    w = _as_param(weights)
    n = len(parts)
    if w.ndim == 0 or w.shape[0] != n:
        raise ValueError(f"mixture: weights must have {n} entries along its first dimension "
                         f"(one per distribution), got shape {list(w.shape)}")
    family = Mixture([fam for fam, _, _ in parts])
    ev = family.event_ndim
    shape = parts[0][2] if want is None else want
    batch = list(shape[:len(shape) - ev])
    rest = list(w.shape[1:])
    while len(rest) > len(batch) and rest[-1] == 1:
        rest.pop()  # an R column of weights (K x 1) for scalar distributions
    if want is None and not batch and rest:
        batch = list(rest)  # scalar distributions with weights per element
        shape = (*batch, *shape)
    rest += [1] * (len(batch) - len(rest))
    if len(rest) != len(batch) or any(r not in (1, b) for r, b in zip(rest, batch)):
        raise ValueError(f"mixture: weights of shape {list(w.shape)} do not fit distributions "
                         f"of dimensions {list(shape)}: after the first, its dimensions must be "
                         f"1 or the distributions'")
    w = ops.reshape(w, (n, *rest))
    params = {**_combined_params(parts), "weights": w}
    _validate(family, {"weights": w})
    _detach(dists)
    return make_distribution(family, params, tuple(shape))


def joint(*dists: Any, dim: Any = None) -> LazyArray:
    """Independent univariate distributions side by side: a variable (or data) whose last
    dimension has one entry per distribution, ``dim`` giving the dimensions before it."""
    want = _as_shape("joint", dim)
    parts = _components("joint", dists)
    shape = (*(parts[0][2] if want is None else want), len(parts))
    family = Joint([fam for fam, _, _ in parts], shape)
    _detach(dists)
    return make_distribution(family, _combined_params(parts), shape)


# -- the catalogue ------------------------------------------------------------------------------
def _family_checks() -> dict[str, dict[str, str]]:
    """distribution name -> its family's value checks (``param_checks``: "positive"...)."""
    out: dict[str, dict[str, str]] = {}
    for obj in vars(families).values():
        name = getattr(obj, "name", None)
        if isinstance(obj, type) and isinstance(name, str):
            out[name] = dict(getattr(obj, "param_checks", ()))
    return out


def _family_kinds() -> dict[str, dict[str, str]]:
    """distribution name -> its family's parameter kinds other than "array" (``param_kinds``:
    LKJ's eta is a "scalar")."""
    return {obj.name: dict(obj.param_kinds) for obj in vars(families).values()
            if isinstance(obj, type) and isinstance(getattr(obj, "name", None), str)
            and getattr(obj, "param_kinds", ())}


def _catalogue() -> tuple[DistributionSpec, ...]:
    checks, kinds = _family_checks(), _family_kinds()
    here = globals()
    return tuple(distribution_spec(n, here[n], checks.get(n), kinds.get(n))
                 for n in DISTRIBUTIONS)


# every constructor's arguments, their kinds (argument_checks.ARG_KINDS) and value checks, read
# from the signatures above: what each constructor checks at entry, and what every door shows
# (runtime/spec.py's DISTRIBUTIONS)
CATALOGUE: tuple[DistributionSpec, ...] = _catalogue()
_ARG_TESTS = arg_tests(CATALOGUE, globals())
