"""Every distribution family against SciPy, in one parametrized table: log densities (with
broadcasting parameters), samplers (mean/variance, and a KS test for continuous univariate
families), supports, gradients (both modes), ``vmap``; then truncation, the new bijectors, and the
families inside models (priors, likelihoods, discrete priors refused)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from scipy import integrate, special, stats

import tensorbridge as tb
from tensorbridge.runtime import argument_checks, spec
from tensorbridge.runtime.graph import bijectors as B
from tensorbridge.runtime.ppl import distributions as D
from tensorbridge.runtime.ppl.distributions import families as F

N_DRAWS = 20000


def T(a: Any) -> Any:
    return tb.tensor(np.asarray(a, dtype=np.float64))


def _tensors(params: dict[str, Any]) -> dict[str, Any]:
    return {k: T(v) for k, v in params.items()}


# ------------------------------------------------------------------------------------------------
# the table
# ------------------------------------------------------------------------------------------------
@dataclass
class Case:
    id: str
    family: Any
    params: dict[str, Any]  # broadcasting parameter points for log_prob
    value: Callable[..., np.ndarray]  # values in the support, given params
    ref_logp: Callable[..., np.ndarray]  # SciPy log density / mass
    sample_params: dict[str, Any]  # a few parameter points for the sampler
    moments: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray | None]]  # mean, var, kurt
    grad: tuple[str, ...]  # parameters (and "value") to check gradients for
    outside: list[Any] = field(default_factory=list)  # values outside the support
    frozen: Callable[..., Any] | None = None  # SciPy frozen dist (continuous univariate: KS)
    event_shape: tuple[int, ...] = ()


def _uni(id: str, family: Any, params: dict, frozen: Callable, sample_params: dict,
         grad: tuple[str, ...], outside: list | None = None, discrete: bool = False) -> Case:
    u = np.array([[0.03, 0.4], [0.55, 0.7], [0.9, 0.985]])

    def value(**p: Any) -> np.ndarray:
        return np.asarray(frozen(**p).ppf(u), dtype=np.float64)

    def ref(x: np.ndarray, **p: Any) -> np.ndarray:
        d = frozen(**p)
        return d.logpmf(x) if discrete else d.logpdf(x)

    def moments(**p: Any) -> tuple:
        m, v, k = frozen(**p).stats(moments="mvk")
        return np.asarray(m), np.asarray(v), np.asarray(k)

    return Case(id, family, params, value, ref, sample_params, moments, grad,
                outside or [], None if discrete else frozen)


def _col(v: Any) -> np.ndarray:
    return np.asarray(v, dtype=np.float64).reshape(-1, 1)


UNIVARIATE = [
    _uni("normal", F.Normal(), {"mean": _col([-1.0, 0.5, 3.0]), "sd": [0.5, 2.0]},
         lambda mean, sd: stats.norm(mean, sd), {"mean": [-1.0, 2.0], "sd": [0.5, 3.0]},
         ("value", "mean", "sd")),
    _uni("lognormal", F.LogNormal(), {"meanlog": _col([-0.5, 0.2, 1.0]), "sdlog": [0.3, 1.1]},
         lambda meanlog, sdlog: stats.lognorm(s=sdlog, scale=np.exp(meanlog)),
         {"meanlog": [0.0, 0.5], "sdlog": [0.25, 0.4]}, ("value", "meanlog", "sdlog"),
         [-1.0, 0.0]),
    _uni("student", F.Student(),
         {"df": _col([1.5, 4.0, 30.0]), "mu": [0.0, -2.0], "sigma": _col([0.7, 1.3, 2.0])},
         lambda df, mu, sigma: stats.t(df, mu, sigma),
         {"df": [6.0, 15.0], "mu": [0.0, 3.0], "sigma": [1.0, 0.5]}, ("value", "df", "mu",
                                                                        "sigma")),
    _uni("cauchy", F.Cauchy(), {"location": _col([0.0, 2.0, -1.0]), "scale": [0.5, 3.0]},
         lambda location, scale: stats.cauchy(location, scale),
         {"location": [0.0, 1.0], "scale": [1.0, 0.2]}, ("value", "location", "scale")),
    _uni("logistic", F.Logistic(), {"location": _col([0.0, 2.0, -1.0]), "scale": [0.5, 3.0]},
         lambda location, scale: stats.logistic(location, scale),
         {"location": [0.0, 1.0], "scale": [1.0, 0.2]}, ("value", "location", "scale")),
    _uni("laplace", F.Laplace(), {"mu": _col([0.0, 2.0, -1.0]), "sigma": [0.5, 3.0]},
         lambda mu, sigma: stats.laplace(mu, sigma),
         {"mu": [0.0, 1.0], "sigma": [1.0, 0.2]}, ("value", "mu", "sigma")),
    _uni("uniform", F.Uniform(), {"min": _col([-1.0, 0.0, 2.0]), "max": _col([0.5, 3.0, 2.5])},
         lambda min, max: stats.uniform(min, np.asarray(max) - np.asarray(min)),
         {"min": [0.0, -2.0], "max": [1.0, 5.0]}, ("value",), [-10.0, 100.0]),
    _uni("exponential", F.Exponential(), {"rate": [0.5, 3.0]},
         lambda rate: stats.expon(scale=1.0 / np.asarray(rate)), {"rate": [0.5, 3.0]},
         ("value", "rate"), [-1.0]),
    _uni("gamma", F.Gamma(), {"shape": _col([0.5, 2.0, 30.0]), "rate": [0.7, 4.0]},
         lambda shape, rate: stats.gamma(shape, scale=1.0 / np.asarray(rate)),
         {"shape": [0.3, 7.0], "rate": [2.0, 0.5]}, ("value", "shape", "rate"), [-1.0]),
    _uni("inverse_gamma", F.InverseGamma(), {"alpha": _col([0.8, 3.0, 12.0]),
                                             "beta": [0.5, 2.0]},
         lambda alpha, beta: stats.invgamma(alpha, scale=beta),
         {"alpha": [5.5, 9.0], "beta": [1.0, 3.0]}, ("value", "alpha", "beta"), [-1.0, 0.0]),
    _uni("weibull", F.Weibull(), {"shape": _col([0.7, 1.5, 4.0]), "scale": [0.5, 2.0]},
         lambda shape, scale: stats.weibull_min(shape, scale=scale),
         {"shape": [0.8, 3.0], "scale": [1.0, 2.0]}, ("value", "shape", "scale"), [-1.0]),
    _uni("pareto", F.Pareto(), {"a": _col([1.5, 3.0, 6.0]), "b": [0.5, 2.0]},
         lambda a, b: stats.pareto(a, scale=b),
         {"a": [5.0, 9.0], "b": [0.5, 2.0]}, ("value", "a", "b"), [0.1]),
    _uni("beta", F.Beta(), {"shape1": _col([0.5, 2.0, 8.0]), "shape2": [0.7, 3.0]},
         lambda shape1, shape2: stats.beta(shape1, shape2),
         {"shape1": [0.3, 4.0], "shape2": [0.6, 2.0]}, ("value", "shape1", "shape2"),
         [-0.1, 1.1]),
    _uni("chi_squared", F.ChiSquared(), {"df": [0.8, 25.0]},
         lambda df: stats.chi2(df), {"df": [1.5, 12.0]}, ("value", "df"), [-1.0]),
    _uni("bernoulli", F.Bernoulli(), {"prob": [0.1, 0.6]},
         lambda prob: stats.bernoulli(prob), {"prob": [0.1, 0.6]}, ("prob",),
         [0.5, 2.0, -1.0], discrete=True),
    _uni("binomial", F.Binomial(), {"size": _col([3.0, 20.0, 400.0]), "prob": [0.15, 0.7]},
         lambda size, prob: stats.binom(size, prob),
         {"size": [20.0, 400.0, 7.0], "prob": [0.3, 0.7, 0.95]}, ("prob",),
         [-1.0, 2.5, 500.0], discrete=True),
    _uni("beta_binomial", F.BetaBinomial(),
         {"size": _col([5.0, 12.0, 30.0]), "alpha": [0.6, 4.0], "beta": _col([2.0, 0.8, 1.0])},
         lambda size, alpha, beta: stats.betabinom(size, alpha, beta),
         {"size": [5.0, 30.0], "alpha": [0.6, 4.0], "beta": [2.0, 0.8]}, ("alpha", "beta"),
         [-1.0, 0.5, 31.0], discrete=True),
    _uni("poisson", F.Poisson(), {"lambda_": _col([0.3, 4.0, 60.0])},
         lambda lambda_: stats.poisson(lambda_), {"lambda_": [4.0, 60.0]}, ("lambda_",),
         [-1.0, 1.5], discrete=True),
    _uni("negative_binomial", F.NegativeBinomial(),
         {"size": _col([0.7, 5.0, 40.0]), "prob": [0.2, 0.8]},
         lambda size, prob: stats.nbinom(size, prob), {"size": [0.7, 5.0], "prob": [0.3, 0.8]},
         ("size", "prob"), [-1.0, 0.5], discrete=True),
    _uni("f", F.F(), {"df1": _col([0.6, 3.0, 40.0]), "df2": [1.5, 25.0]},
         lambda df1, df2: stats.f(df1, df2), {"df1": [3.0, 12.0], "df2": [14.0, 30.0]},
         ("value", "df1", "df2"), [-1.0]),
    _uni("hypergeometric", F.Hypergeometric(),
         {"m": _col([3.0, 10.0, 60.0]), "n": [0.0, 7.0], "k": _col([2.0, 3.0, 40.0])},
         lambda m, n, k: stats.hypergeom(np.asarray(m) + np.asarray(n), m, k),
         {"m": [10.0, 60.0], "n": [7.0, 200.0], "k": [8.0, 100.0]}, ("m",),
         [-1.0, 0.5], discrete=True),
]


# -- multivariate ---------------------------------------------------------------------------------
_P = np.array([[1.0, 2.0, 3.0], [0.2, 0.5, 0.3]])


def _norm(p: np.ndarray) -> np.ndarray:
    return p / p.sum(-1, keepdims=True)


def _cat_value(prob: np.ndarray) -> np.ndarray:
    return np.array([[[0, 0, 1], [1, 0, 0]], [[0, 1, 0], [0, 0, 1]]], dtype=np.float64)


def _cat_ref(x: np.ndarray, prob: np.ndarray) -> np.ndarray:
    return stats.multinomial.logpmf(x, 1, _norm(np.broadcast_to(prob, x.shape)))


def _cat_moments(prob: np.ndarray) -> tuple:
    p = _norm(np.asarray(prob))
    return p, p * (1 - p), None


def _mn_value(size: np.ndarray, prob: np.ndarray) -> np.ndarray:
    return np.array([[[1, 2, 2], [5, 4, 3]], [[0, 0, 5], [0, 12, 0]]], dtype=np.float64)


def _mn_ref(x: np.ndarray, size: np.ndarray, prob: np.ndarray) -> np.ndarray:
    n = np.broadcast_to(size, x.shape[:-1])
    return stats.multinomial.logpmf(x, n, _norm(np.broadcast_to(prob, x.shape)))


def _mn_moments(size: np.ndarray, prob: np.ndarray) -> tuple:
    p = _norm(np.asarray(prob))
    n = np.asarray(size)[..., None]
    return n * p, n * p * (1 - p), None


def _dir_value(alpha: np.ndarray) -> np.ndarray:
    return np.array([[[0.2, 0.3, 0.5], [0.05, 0.9, 0.05]], [[0.6, 0.1, 0.3],
                                                            [1 / 3, 1 / 3, 1 / 3]]])


def _dir_ref(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    a = np.broadcast_to(alpha, x.shape)
    out = np.empty(x.shape[:-1])
    for idx in np.ndindex(*x.shape[:-1]):
        out[idx] = stats.dirichlet.logpdf(x[idx], a[idx])
    return out


def _dir_moments(alpha: np.ndarray) -> tuple:
    a = np.asarray(alpha)
    return (np.stack([stats.dirichlet.mean(r) for r in a]),
            np.stack([stats.dirichlet.var(r) for r in a]), None)


_L1 = np.array([[1.0, 0.0, 0.0], [0.5, 1.2, 0.0], [-0.3, 0.4, 0.7]])
_L2 = np.array([[0.6, 0.0, 0.0], [-0.2, 0.9, 0.0], [0.1, 0.3, 1.5]])


def _mvn_value(mean: np.ndarray, cholesky: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(4)
    return rng.normal(size=(4, 2, 3)) + mean


def _mvn_ref(x: np.ndarray, mean: np.ndarray, cholesky: np.ndarray) -> np.ndarray:
    m = np.broadcast_to(mean, x.shape)
    chol = np.broadcast_to(cholesky, (*x.shape[:-1], 3, 3))
    out = np.empty(x.shape[:-1])
    for idx in np.ndindex(*x.shape[:-1]):
        out[idx] = stats.multivariate_normal.logpdf(x[idx], m[idx], chol[idx] @ chol[idx].T)
    return out


def _mvn_moments(mean: np.ndarray, cholesky: np.ndarray) -> tuple:
    cov = np.asarray(cholesky) @ np.swapaxes(cholesky, -1, -2)
    var = np.diagonal(cov, axis1=-2, axis2=-1)
    return np.broadcast_to(mean, var.shape), var, None


def lkj_log_c(eta: float, n: int) -> float:
    """log normalising constant of LKJ (Lewandowski et al. 2009), written independently."""
    total = 0.0
    for i in range(1, n):
        b = eta + (n - 1 - i) / 2.0
        total += (2 * eta - 2 + n - i) * (n - i) * math.log(2.0) + (n - i) * special.betaln(b, b)
    return -total


def _random_corr(rng: np.random.Generator, n: int) -> np.ndarray:
    a = rng.normal(size=(n, n + 2))
    s = a @ a.T
    d = np.sqrt(np.diag(s))
    return s / np.outer(d, d)


def _lkj_value(eta: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.stack([_random_corr(rng, 3) for _ in range(2)])


def _lkj_ref(x: np.ndarray, eta: np.ndarray) -> np.ndarray:
    e = np.broadcast_to(eta, x.shape[:-2])
    out = np.empty(x.shape[:-2])
    for idx in np.ndindex(*x.shape[:-2]):
        out[idx] = (e[idx] - 1) * np.linalg.slogdet(x[idx])[1] + lkj_log_c(float(e[idx]), 3)
    return out


def _lkj_moments(eta: np.ndarray) -> tuple:
    e = np.asarray(eta)[..., None, None]
    off = 1.0 / (2 * e + 3 - 1) * (1 - np.eye(3))
    return np.broadcast_to(np.eye(3), off.shape), off, None


def _dm_ref(x: np.ndarray, size: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    n = np.broadcast_to(size, x.shape[:-1])
    a = np.broadcast_to(alpha, x.shape)
    out = np.empty(x.shape[:-1])
    for idx in np.ndindex(*x.shape[:-1]):
        out[idx] = stats.dirichlet_multinomial.logpmf(x[idx], a[idx], n[idx])
    return out


def _dm_moments(size: np.ndarray, alpha: np.ndarray) -> tuple:
    a = np.asarray(alpha)
    n = np.broadcast_to(size, a.shape[:-1])
    ref = [stats.dirichlet_multinomial(a[i], n[i]) for i in range(a.shape[0])]
    return np.stack([r.mean() for r in ref]), np.stack([r.var() for r in ref]), None


_S1 = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 0.8]])
_S2 = np.array([[0.5, 0.1, 0.0], [0.1, 3.0, 1.0], [0.0, 1.0, 1.5]])


def _wishart_value(df: np.ndarray, Sigma: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(12)
    return np.stack([_random_corr(rng, 3) * rng.uniform(0.5, 3.0) for _ in range(2)])


def _wishart_ref(x: np.ndarray, df: np.ndarray, Sigma: np.ndarray) -> np.ndarray:
    d = np.broadcast_to(df, x.shape[:-2])
    s = np.broadcast_to(Sigma, x.shape)
    out = np.empty(x.shape[:-2])
    for idx in np.ndindex(*x.shape[:-2]):
        out[idx] = stats.wishart(df=d[idx], scale=s[idx]).logpdf(x[idx])
    return out


def _wishart_moments(df: np.ndarray, Sigma: np.ndarray) -> tuple:
    d = np.asarray(df)[..., None, None]
    s = np.asarray(Sigma)
    diag = np.diagonal(s, axis1=-2, axis2=-1)
    return d * s, d * (s * s + diag[..., :, None] * diag[..., None, :]), None


MULTIVARIATE = [
    Case("categorical", F.Categorical(), {"prob": _P}, _cat_value, _cat_ref,
         {"prob": _P}, _cat_moments, ("prob",), [[1.0, 1.0, 0.0], [0.5, 0.5, 0.0]],
         event_shape=(3,)),
    Case("multinomial", F.Multinomial(), {"size": [5.0, 12.0], "prob": _P}, _mn_value, _mn_ref,
         {"size": [5.0, 40.0], "prob": _P}, _mn_moments, ("prob",),
         [[1.0, 1.0, 1.0], [-1.0, 3.0, 3.0]], event_shape=(3,)),
    Case("dirichlet", F.Dirichlet(), {"alpha": [[0.5, 1.0, 2.0], [3.0, 4.0, 0.8]]}, _dir_value,
         _dir_ref, {"alpha": [[0.5, 1.0, 2.0], [3.0, 4.0, 0.8]]}, _dir_moments, ("alpha",),
         [[0.5, 0.6, -0.1], [0.2, 0.2, 0.2]], event_shape=(3,)),
    Case("multivariate_normal", F.MultivariateNormal(),
         {"mean": [[0.0, 1.0, -1.0], [2.0, 0.5, 0.0]], "cholesky": np.stack([_L1, _L2])},
         _mvn_value, _mvn_ref,
         {"mean": [[0.0, 1.0, -1.0], [2.0, 0.5, 0.0]], "cholesky": np.stack([_L1, _L2])},
         _mvn_moments, ("value", "mean", "cholesky"), event_shape=(3,)),
    Case("lkj_correlation", F.LKJCorrelation(3), {"eta": [0.7, 3.0]}, _lkj_value, _lkj_ref,
         {"eta": [0.7, 3.0]}, _lkj_moments, ("eta",), event_shape=(3, 3)),
    Case("dirichlet_multinomial", F.DirichletMultinomial(),
         {"size": [5.0, 12.0], "alpha": [[0.5, 1.0, 2.0], [3.0, 4.0, 0.8]]},
         lambda size, alpha: _mn_value(size, alpha), _dm_ref,
         {"size": [5.0, 40.0], "alpha": [[0.5, 1.0, 2.0], [3.0, 4.0, 0.8]]}, _dm_moments,
         ("alpha",), [[1.0, 1.0, 1.0], [-1.0, 3.0, 3.0]], event_shape=(3,)),
    Case("wishart", F.Wishart(), {"df": [2.4, 9.0], "Sigma": np.stack([_S1, _S2])},
         _wishart_value, _wishart_ref, {"df": [4.5, 9.0], "Sigma": np.stack([_S1, _S2])},
         _wishart_moments, ("df",), [-np.eye(3), [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0],
                                                   [0.0, 0.0, 1.0]]],
         event_shape=(3, 3)),
]

CASES = UNIVARIATE + MULTIVARIATE
IDS = [c.id for c in CASES]


def test_the_table_covers_every_family() -> None:
    assert sorted(IDS) == sorted(D.DISTRIBUTIONS)


# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_prob_matches_scipy_with_broadcasting(case: Case) -> None:
    x = case.value(**case.params)
    got = case.family.log_prob(T(x), **_tensors(case.params)).numpy()
    want = case.ref_logp(x, **case.params)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # a leading axis of values broadcasts against the parameters too
    xx = np.stack([x, x])
    got2 = case.family.log_prob(T(xx), **_tensors(case.params)).numpy()
    np.testing.assert_allclose(got2, np.stack([want, want]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_prob_batches_under_vmap(case: Case) -> None:
    x = case.value(**case.params)
    xx = np.stack([x, x * 1.0])
    params = _tensors(case.params)
    batched = tb.vmap(lambda v: case.family.log_prob(v, **params))(T(xx)).numpy()
    direct = case.family.log_prob(T(xx), **params).numpy()
    np.testing.assert_allclose(batched, direct, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_support(case: Case) -> None:
    params = _tensors(case.sample_params)
    x = case.value(**case.params)
    support = case.family.support(**_tensors(case.params))
    assert bool(tb.min(tb.cast(support.check(T(x)), "int32")) == 1), support
    assert support.discrete == bool(getattr(case.family, "discrete", False))
    for bad in case.outside:
        lp = case.family.log_prob(T(bad), **params).numpy()
        assert np.all(lp == -np.inf), (bad, lp)
        # supports that do not depend on the parameters say so too
        if case.id not in ("uniform", "pareto", "binomial", "beta_binomial", "multinomial",
                           "dirichlet_multinomial"):
            assert not bool(tb.max(tb.cast(support.check(T(bad)), "int32")) == 1), bad


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_samples_match_moments_and_distribution(case: Case) -> None:
    params = _tensors(case.sample_params)
    batch = tuple(case.family.value_shape(
        **{k: tuple(np.shape(v)) for k, v in case.sample_params.items()}))
    shape = (N_DRAWS, *batch)
    draws = case.family.sample(tb.Generator(11), shape, **params)
    assert draws.shape == shape and draws.dtype == tb.float64
    d = draws.numpy()
    assert np.all(np.isfinite(d))
    # every draw is in the support and has a finite density
    assert bool(tb.min(tb.cast(case.family.support(**params).check(draws), "int32")) == 1)
    assert np.all(np.isfinite(case.family.log_prob(draws, **params).numpy()))
    if case.id == "cauchy":  # no moments: the KS test below is the check
        pass
    else:
        mean, var, kurt = case.moments(**case.sample_params)
        mean, var = np.broadcast_to(mean, shape[1:]), np.broadcast_to(var, shape[1:])
        # the family's own mean/variance agree with SciPy's
        np.testing.assert_allclose(case.family.mean(**params).numpy(), mean, rtol=1e-12)
        np.testing.assert_allclose(case.family.variance(**params).numpy(), var, rtol=1e-12,
                                   atol=1e-15)
        m_hat, v_hat = d.mean(0), d.var(0)
        se_mean = np.sqrt(v_hat / N_DRAWS)
        assert np.all(np.abs(m_hat - mean) <= 5 * se_mean + 1e-12), (m_hat, mean)
        central4 = ((d - m_hat) ** 4).mean(0) if kurt is None else (np.asarray(kurt) + 3) * var ** 2
        se_var = np.sqrt(np.maximum(central4 - var ** 2, 0) / N_DRAWS)
        assert np.all(np.abs(v_hat - var) <= 5 * se_var + 1e-12), (v_hat, var)
    if case.frozen is not None:
        for j in range(batch[0] if batch else 1):
            pj = {k: np.broadcast_to(v, batch)[j] for k, v in case.sample_params.items()}
            col = d[:, j] if batch else d
            assert stats.kstest(col, case.frozen(**pj).cdf).pvalue > 1e-3, pj


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_pass_check_grads(case: Case) -> None:
    x = case.value(**case.params)
    names = [n for n in case.grad if n != "value"]
    fixed = {k: T(v) for k, v in case.params.items() if k not in names}
    with_value = "value" in case.grad

    def f(*args: Any) -> Any:
        vals = dict(zip(names, args[int(with_value):]))
        xv = args[0] if with_value else T(x)
        return tb.sum(case.family.log_prob(xv, **fixed, **vals))

    args = ([T(x)] if with_value else []) + [T(case.params[n]) for n in names]
    tb.check_grads(f, args, order=1, modes=("fwd", "rev"))


# ------------------------------------------------------------------------------------------------
# LKJ normalising constant
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eta", [0.6, 1.0, 4.0])
def test_lkj_density_integrates_to_one_for_2x2(eta: float) -> None:
    fam = F.LKJCorrelation(2)

    def dens(r: float) -> float:
        R = T([[1.0, r], [r, 1.0]])
        return math.exp(fam.log_prob(R, eta=T(eta)).item())

    total, _ = integrate.quad(dens, -1, 1)
    assert total == pytest.approx(1.0, abs=1e-8)
    assert F.lkj_log_normaliser(T(eta), 2).item() == pytest.approx(lkj_log_c(eta, 2), rel=1e-13)


def test_lkj_constant_matches_the_volume_of_3x3_correlation_matrices() -> None:
    # eta = 1 is uniform: the density is 1 / volume, and the volume is pi^2 / 2
    assert F.lkj_log_normaliser(T(1.0), 3).item() == pytest.approx(-math.log(math.pi ** 2 / 2),
                                                                   rel=1e-13)


def test_lkj_onion_sampler_marginals() -> None:
    # off-diagonal entries are 2 B - 1 with B ~ Beta(eta + (n-2)/2, eta + (n-2)/2)
    eta, n = 1.5, 4
    draws = F.LKJCorrelation(n).sample(tb.Generator(3), (4000, n, n), eta=T(eta)).numpy()
    a = eta + (n - 2) / 2
    for i, j in [(1, 0), (3, 1), (3, 2)]:
        assert stats.kstest((draws[:, i, j] + 1) / 2, stats.beta(a, a).cdf).pvalue > 1e-3


# ------------------------------------------------------------------------------------------------
# truncation
# ------------------------------------------------------------------------------------------------
TRUNCATED = [
    ("normal", F.Normal(), {"mean": 0.5, "sd": 2.0}, (-1.0, 3.0)),
    ("normal-upper", F.Normal(), {"mean": 0.0, "sd": 1.0}, (1.5, math.inf)),
    ("normal-lower", F.Normal(), {"mean": 0.0, "sd": 1.0}, (-math.inf, -0.5)),
    ("lognormal", F.LogNormal(), {"meanlog": 0.2, "sdlog": 0.8}, (0.5, 4.0)),
    ("student", F.Student(), {"df": 3.0, "mu": 1.0, "sigma": 2.0}, (0.0, math.inf)),
    ("cauchy", F.Cauchy(), {"location": 0.0, "scale": 1.0}, (-2.0, 10.0)),
    ("logistic", F.Logistic(), {"location": 1.0, "scale": 0.5}, (1.2, 3.0)),
    ("laplace", F.Laplace(), {"mu": 0.0, "sigma": 1.0}, (-0.5, 2.5)),
    ("exponential", F.Exponential(), {"rate": 2.0}, (0.3, 1.5)),
    ("gamma", F.Gamma(), {"shape": 2.5, "rate": 1.5}, (1.0, math.inf)),
    ("inverse_gamma", F.InverseGamma(), {"alpha": 3.0, "beta": 2.0}, (0.2, 1.5)),
    ("weibull", F.Weibull(), {"shape": 1.7, "scale": 2.0}, (0.0, 2.5)),
    ("pareto", F.Pareto(), {"a": 2.0, "b": 1.0}, (1.5, 6.0)),
    ("beta", F.Beta(), {"shape1": 2.0, "shape2": 5.0}, (0.1, 0.4)),
    ("chi_squared", F.ChiSquared(), {"df": 4.0}, (2.0, 9.0)),
]


@pytest.mark.parametrize("name,family,params,bounds", TRUNCATED, ids=[t[0] for t in TRUNCATED])
def test_truncated_density_integrates_to_one(name: str, family: Any, params: dict,
                                             bounds: tuple[float, float]) -> None:
    fam = F.Truncated(family, *bounds)
    p = _tensors(params)
    lo, hi = bounds
    lo = max(lo, family.support(**p).lower)

    def dens(x: float) -> float:
        return math.exp(fam.log_prob(T(x), **p).item())

    total, err = integrate.quad(dens, lo, hi, epsabs=1e-11, epsrel=1e-10, limit=200)
    assert total == pytest.approx(1.0, abs=1e-8), (total, err)
    # outside the truncation: -inf; the support of a prior is the truncation interval
    outside = [v for v in (bounds[0] - 0.05, bounds[1] + 0.05) if math.isfinite(v)]
    assert np.all(fam.log_prob(T(outside), **p).numpy() == -np.inf)
    c = fam.support(**p)
    assert (c.lower, c.upper) == (max(bounds[0], family.support(**p).lower), bounds[1])


@pytest.mark.parametrize("name,family,params,bounds", TRUNCATED, ids=[t[0] for t in TRUNCATED])
def test_truncated_samples_follow_the_truncated_cdf(name: str, family: Any, params: dict,
                                                    bounds: tuple[float, float]) -> None:
    fam = F.Truncated(family, *bounds)
    p = _tensors(params)
    draws = fam.sample(tb.Generator(5), (3000,), **p).numpy()
    assert np.all((draws >= bounds[0]) & (draws <= bounds[1]))
    scipy_name = {"normal-upper": "normal", "normal-lower": "normal"}.get(name, name)
    frozen = next(c for c in UNIVARIATE if c.id == scipy_name).frozen(**params)
    f_lo = frozen.cdf(bounds[0])
    mass = frozen.cdf(bounds[1]) - f_lo

    def cdf(x: np.ndarray) -> np.ndarray:
        return (frozen.cdf(x) - f_lo) / mass

    assert stats.kstest(draws, cdf).pvalue > 1e-3


@pytest.mark.parametrize("bounds", [(-1.0, 2.0), (2.0, 4.0), (8.0, 9.0), (-40.0, -38.0),
                                    (30.0, math.inf), (-math.inf, -25.0)])
def test_truncated_normal_matches_truncnorm_far_into_the_tails(bounds: tuple) -> None:
    mean, sd = 0.5, 1.5
    lo, hi = bounds
    a, b = (lo - mean) / sd, (hi - mean) / sd
    ref = stats.truncnorm(a, b, loc=mean, scale=sd)
    xs = ref.ppf(np.array([0.01, 0.3, 0.5, 0.9, 0.999]))
    fam = F.Truncated(F.Normal(), lo, hi)
    got = fam.log_prob(T(xs), mean=T(mean), sd=T(sd)).numpy()
    np.testing.assert_allclose(got, ref.logpdf(xs), rtol=1e-9)
    draws = fam.sample(tb.Generator(2), (2000,), mean=T(mean), sd=T(sd)).numpy()
    assert np.all(np.isfinite(draws))
    assert stats.kstest(draws, ref.cdf).pvalue > 1e-3


def test_truncated_gradients() -> None:
    fam = F.Truncated(F.Gamma(), 0.5, 3.0)
    x = T([0.7, 1.4, 2.9])
    tb.check_grads(lambda x, a, r: tb.sum(fam.log_prob(x, shape=a, rate=r)),
                   (x, T([1.5, 3.0, 0.8]), T(2.0)), order=1, modes=("fwd", "rev"))
    fam = F.Truncated(F.Normal(), 1.0, math.inf)
    tb.check_grads(lambda x, m, s: tb.sum(fam.log_prob(x, mean=m, sd=s)),
                   (T([1.2, 2.0]), T([0.0, 3.0]), T(1.5)), order=1, modes=("fwd", "rev"))


def test_truncation_arguments_are_validated() -> None:
    with pytest.raises(ValueError, match="inside the support"):
        D.gamma(2.0, 1.0, truncation=(-1.0, 2.0))
    with pytest.raises(ValueError, match="lower < upper"):
        D.normal(0.0, 1.0, truncation=(2.0, 1.0))
    assert D.normal(0.0, 1.0, truncation=(0.0, math.inf)).node.constraint == B.greater_than(0.0)
    assert D.beta(2.0, 2.0, truncation=(0.0, 0.5)).node.constraint == B.interval(0.0, 0.5)
    assert D.gamma(2.0, 1.0, truncation=(0.0, math.inf)).node.distribution.family.name == "gamma"


# ------------------------------------------------------------------------------------------------
# special functions
# ------------------------------------------------------------------------------------------------
def test_special_functions_match_scipy() -> None:
    from tensorbridge.runtime.ppl.distributions import special as S

    x = np.array([-60.0, -25.0, -19.0, -3.0, 0.0, 0.7, 5.0, 9.0, 30.0])
    np.testing.assert_allclose(S.log_ndtr(T(x)).numpy(), special.log_ndtr(x), rtol=1e-12)
    p = np.array([1e-300, 1e-20, 1e-5, 0.02, 0.3, 0.5001, 0.9, 1 - 1e-10])
    np.testing.assert_allclose(S.ndtri(T(p)).numpy(), special.ndtri(p), rtol=1e-13, atol=1e-15)
    z = np.array([-1e10, -3.0, -0.7, 0.0, 0.4, 0.66, 0.9, 2.5, 1e5])
    np.testing.assert_allclose(S.atan(T(z)).numpy(), np.arctan(z), rtol=1e-15, atol=1e-300)
    a = np.array([0.1, 1.0, 2.5, 50.0, 400.0])[:, None]
    xx = np.array([1e-5, 0.9, 3.0, 60.0, 420.0])[None, :]
    lp = S.log_gammainc(T(a), T(xx)).numpy()
    lq = S.log_gammaincc(T(a), T(xx)).numpy()
    for mine, lower, upper in ((lp, special.gammainc(a, xx), special.gammaincc(a, xx)),
                               (lq, special.gammaincc(a, xx), special.gammainc(a, xx))):
        small = lower < 0.5
        np.testing.assert_allclose(np.exp(mine)[small], lower[small], rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(-np.expm1(mine)[~small], upper[~small], rtol=1e-12,
                                   atol=1e-300)
    A = np.array([0.2, 1.0, 30.0, 300.0])[:, None, None]
    Bb = np.array([0.3, 7.0, 100.0])[None, :, None]
    X = np.array([1e-6, 0.3, 0.8, 0.999])[None, None, :]
    lb = S.log_betainc(T(A), T(Bb), T(X)).numpy()
    ref, ref_c = special.betainc(A, Bb, X), special.betainc(Bb, A, 1 - X)
    small = ref < 0.5
    np.testing.assert_allclose(np.exp(lb)[small], ref[small], rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(-np.expm1(lb)[~small], ref_c[~small], rtol=1e-11, atol=1e-300)


# ------------------------------------------------------------------------------------------------
# bijectors for the new supports
# ------------------------------------------------------------------------------------------------
def _free_coords(constraint: Any) -> Callable[[Any], Any]:
    """The coordinates of a value that the free vector parameterises."""
    if constraint.kind == "simplex":
        return lambda v: v[..., :-1]
    k = 0 if constraint.kind == "positive_definite" else -1
    return lambda v: B._read_tril(v, k)


@pytest.mark.parametrize("constraint,free_dim", [(B.simplex, 4), (B.correlation_cholesky, 6),
                                                 (B.correlation_matrix, 6),
                                                 (B.positive_definite, 6)], ids=str)
def test_structured_bijectors_round_trip_and_log_jacobian(constraint: Any, free_dim: int) -> None:
    bij = B.biject_to(constraint)
    rng = np.random.default_rng(9)
    free = T(rng.normal(size=(3, free_dim)) * 1.5)
    value = bij.forward(free)
    assert bij.free_shape(value.shape) == free.shape
    assert bij.value_shape(free.shape) == value.shape
    assert bool(tb.min(tb.cast(constraint.check(value), "int32")) == 1)
    np.testing.assert_allclose(bij.inverse(value).numpy(), free.numpy(), rtol=1e-9, atol=1e-10)
    coords = _free_coords(constraint)
    ldj = bij.log_det_jacobian(free).numpy()
    assert ldj.shape == (3,)
    for i in range(3):
        jac = tb.jacobian(lambda f: coords(bij.forward(f)))(free[i]).numpy()
        assert ldj[i] == pytest.approx(np.linalg.slogdet(jac)[1], rel=1e-10, abs=1e-10)
    # batched under vmap as well as by broadcasting
    np.testing.assert_allclose(tb.vmap(bij.log_det_jacobian)(free).numpy(), ldj, rtol=1e-13)
    # zero free state: the "centre" of the support
    centre = bij.forward(tb.zeros((free_dim,), "float64")).numpy()
    if constraint.kind == "simplex":
        np.testing.assert_allclose(centre, np.full(5, 0.2), rtol=1e-14)
    else:
        np.testing.assert_allclose(centre, np.eye(4 if constraint.kind != "positive_definite"
                                                  else 3), atol=1e-15)


def test_constraint_checks_reject_values_off_the_support() -> None:
    assert not bool(B.simplex.check(T([0.2, 0.7])))
    assert not bool(B.correlation_matrix.check(T([[1.0, 1.2], [1.2, 1.0]])))
    assert not bool(B.positive_definite.check(T([[1.0, 2.0], [2.0, 1.0]])))
    assert bool(B.positive_definite.check(T([[2.0, 0.3], [0.3, 1.0]])))
    assert B.integers(0).check(T([0.0, 3.0, -1.0, 1.5])).tolist() == [True, True, False, False]
    with pytest.raises(TypeError, match="discrete"):
        B.biject_to(B.integers(0))


# ------------------------------------------------------------------------------------------------
# the constructors in models
# ------------------------------------------------------------------------------------------------
def test_priors_are_constrained_variables() -> None:
    assert D.lognormal(0.0, 1.0).node.constraint == B.greater_than(0.0)
    assert D.beta(2.0, 3.0, dim=4).shape == (4,)
    assert D.uniform(-1.0, 2.0).node.constraint == B.interval(-1.0, 2.0)
    assert D.pareto(2.0, 1.5).node.constraint == B.greater_than(1.5)
    assert D.dirichlet([1.0, 2.0, 3.0], n_realisations=5).shape == (5, 3)
    assert D.dirichlet(1.0, dimension=4).node.constraint == B.simplex
    assert D.lkj_correlation(2.0, dimension=3).shape == (3, 3)
    assert D.multivariate_normal(np.zeros(3), np.eye(3), n_realisations=2).shape == (2, 3)
    assert tb.normal is D.normal


def test_likelihoods_and_priors_in_a_model_match_scipy() -> None:
    rng = np.random.default_rng(0)
    counts = rng.poisson(3.0, size=10).astype(float)
    lam = D.gamma(2.0, 0.5)
    tb.distribution(tb.as_data(counts), D.poisson(lam))
    probs = D.dirichlet([1.0, 2.0, 3.0])
    tb.distribution(tb.as_data([[3.0, 1.0, 6.0]]), D.multinomial(10.0, probs))
    m = tb.model(lam, probs)
    assert m.n_free == 1 + 2
    free = np.array([0.3, -0.2, 0.5])
    values = {k.node: v for k, v in m.constrain(free).items()}
    lam_v = float(values[lam.node].numpy())
    p_v = values[probs.node].numpy()
    want = (stats.poisson.logpmf(counts, lam_v).sum() + stats.gamma.logpdf(lam_v, 2.0, scale=2.0)
            + stats.multinomial.logpmf([3, 1, 6], 10, p_v) + stats.dirichlet.logpdf(p_v,
                                                                                    [1, 2, 3]))
    assert m.log_density(free, adjusted=False).item() == pytest.approx(want, rel=1e-12)
    logdet = 0.3 + B.biject_to(B.simplex).log_det_jacobian(T(free[1:])).item()
    assert m.log_density(free).item() == pytest.approx(want + logdet, rel=1e-12)
    _, grad = m.log_density_and_grad(np.stack([free, free * 0.5]))
    assert grad.shape == (2, 3) and np.all(np.isfinite(grad.numpy()))


def test_lkj_and_multivariate_normal_in_a_model() -> None:
    corr = D.lkj_correlation(2.0, dimension=3)
    sd = D.exponential(1.0, dim=3)
    cov = corr * (tb.expand_dims(sd, -1) * tb.expand_dims(sd, 0))
    y = tb.as_data(np.random.default_rng(1).normal(size=(6, 3)))
    tb.distribution(y, D.multivariate_normal(tb.zeros((3,), "float64"), cov))
    m = tb.model(corr, sd)
    assert m.n_free == 3 + 3
    free = np.linspace(-0.5, 0.5, 6)
    vals = {k.node: v for k, v in m.constrain(free).items()}
    R, s = vals[corr.node].numpy(), vals[sd.node].numpy()
    S = R * np.outer(s, s)
    want = (stats.multivariate_normal.logpdf(y.numpy(), np.zeros(3), S).sum()
            + (2.0 - 1) * np.linalg.slogdet(R)[1] + lkj_log_c(2.0, 3)
            + stats.expon.logpdf(s).sum())
    assert m.log_density(free, adjusted=False).item() == pytest.approx(want, rel=1e-11)
    # a batch of free states (vmapped, compiled) gives the same densities and gradients
    batch = np.stack([free, -free, 0.3 * free])
    vals, grads = m.log_density_and_grad(batch)
    for i in range(3):
        v1, g1 = m.log_density_and_grad(batch[i])
        assert vals.numpy()[i] == pytest.approx(v1.item(), rel=1e-12)
        np.testing.assert_allclose(grads.numpy()[i], g1.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: D.poisson(3.0), lambda: D.bernoulli(0.3, dim=2), lambda: D.binomial(10.0, 0.4),
    lambda: D.beta_binomial(5.0, 1.0, 2.0), lambda: D.negative_binomial(3.0, 0.5),
    lambda: D.categorical([0.2, 0.8]), lambda: D.multinomial(4.0, [0.5, 0.5]),
], ids=["poisson", "bernoulli", "binomial", "beta_binomial", "negative_binomial",
        "categorical", "multinomial"])
def test_discrete_families_cannot_be_priors(make: Callable[[], Any]) -> None:
    k = make()
    with pytest.raises(TypeError, match=r"discrete distribution .*can only be observed"):
        tb.model(k)
    with pytest.raises(TypeError, match="discrete"):
        tb.model(tb.exp(k * 1.0) + D.normal(0.0, 1.0))


def test_observed_only_families_explain_themselves() -> None:
    theta = D.gamma(2.0, 1.0)
    with pytest.raises(TypeError, match="fixed scalar min and max"):
        tb.model(D.uniform(0.0, theta), theta)
    theta = D.gamma(2.0, 1.0)
    tb.distribution(tb.as_data([0.2, 0.9]), D.uniform(0.0, theta))  # fine as a likelihood
    m = tb.model(theta)
    assert m.n_free == 1
    want = stats.gamma.logpdf(2.0, 2.0) - 2 * math.log(2.0)
    assert m.log_density(np.array([math.log(2.0)]), adjusted=False).item() == pytest.approx(want)


def test_constant_parameters_are_validated() -> None:
    with pytest.raises(ValueError, match="sd must be positive"):
        D.normal(0.0, -1.0)
    with pytest.raises(ValueError, match=r"prob must be in \[0, 1\]"):
        D.bernoulli(1.5)
    with pytest.raises(ValueError, match="positive definite"):
        D.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="max must be greater than min"):
        D.uniform(1.0, 0.0)


# arguments of the wrong kind: refused at entry with the front-door spec's words (issue 13), the
# same in Python as in R and JS (runtime/argument_checks.py; runtime/spec.py shows it to them)
_BAD = {"array": "x", "shape": 0, "interval": (1.0,), "count": 0, "scalar": [1.0, 2.0]}


@pytest.mark.parametrize("d", D.CATALOGUE, ids=lambda d: d.name)
def test_every_argument_of_every_constructor_is_checked_at_entry(d: Any) -> None:
    fn = getattr(D, d.name)
    for a in d.args:
        kwargs = {p.name: 1.0 for p in d.params if p.required}
        kwargs[a.name] = _BAD[a.kind]
        cls = TypeError if a.kind == "array" else ValueError
        with pytest.raises(cls, match=f"^{d.name}: {a.name} must be ") as err:
            fn(**kwargs)
        want = ValueError if cls is ValueError else TypeError
        with pytest.raises(want) as from_spec:
            spec.check_distribution_args(d.name, (), kwargs)
        assert str(err.value) == str(from_spec.value)


@pytest.mark.parametrize(("call", "cls", "message"), [
    (lambda: D.normal("x", 1.0), TypeError,
     "normal: mean must be a number, an array, a tensor or a lazy array, got str 'x'"),
    (lambda: D.normal(0.0, "x"), TypeError,
     "normal: sd must be a number, an array, a tensor or a lazy array, got str 'x'"),
    (lambda: D.poisson({"a": 1}), TypeError,
     "poisson: lambda_ must be a number, an array, a tensor or a lazy array, got dict "
     "{'a': 1}"),
    (lambda: D.student(3.0, [0.0, "a"], 1.0), TypeError,
     "student: mu must be a number, an array, a tensor or a lazy array, got list [0.0, 'a']"),
    (lambda: D.bernoulli(True), TypeError,
     "bernoulli: prob must be a number, an array, a tensor or a lazy array, got bool True"),
    (lambda: D.normal(0.0, 1.0, dim=0), ValueError,
     "normal: dim must be a positive integer or a list of them (a shape), got int 0"),
    (lambda: D.gamma(2.0, 1.0, dim=[2, 2.5]), ValueError,
     "gamma: dim must be a positive integer or a list of them (a shape), got list [2, 2.5]"),
    (lambda: D.lognormal(0.0, 1.0, truncation=(0.0,)), ValueError,
     "lognormal: truncation must be two numbers [lower, upper], got tuple (0.0,)"),
    (lambda: D.normal(0.0, 1.0, truncation=(0.0, math.nan)), ValueError,
     "normal: truncation must be two numbers [lower, upper], got tuple (0.0, nan)"),
    (lambda: D.dirichlet([1.0, 1.0], n_realisations=0), ValueError,
     "dirichlet: n_realisations must be a positive whole number, got int 0"),
    (lambda: D.categorical([0.5, 0.5], dimension=2.0), ValueError,
     "categorical: dimension must be a positive whole number, got float 2.0"),
    (lambda: D.lkj_correlation(2.0, dimension="3"), ValueError,
     "lkj_correlation: dimension must be a positive whole number, got str '3'"),
    (lambda: D.multivariate_normal([0.0, 0.0], cholesky="L"), TypeError,
     "multivariate_normal: cholesky must be a number, an array, a tensor or a lazy array, "
     "got str 'L'"),
])
def test_wrong_kinds_are_named_with_the_spec_message(call: Callable[[], Any], cls: type,
                                                     message: str) -> None:
    with pytest.raises(cls) as err:
        call()
    assert type(err.value) is cls
    assert str(err.value) == message


def test_the_python_door_message_is_the_other_doors_message_in_python_names() -> None:
    with pytest.raises(TypeError) as py:
        tb.poisson("x")
    with pytest.raises(TypeError) as js:
        spec.check_distribution_args("poisson", ("x",), {}, "js")
    assert str(py.value) == "poisson: lambda_ must be a number, an array, a tensor or a lazy " \
        "array, got str 'x'"
    assert str(js.value) == str(py.value).replace("lambda_", "lambda")


def test_the_checks_accept_every_form_of_a_good_argument() -> None:
    mu = D.normal(0.0, 1.0)
    assert D.normal(mu, tb.tensor(1.0), dim=np.int64(3)).shape == (3,)
    assert D.normal(np.zeros(2), [1.0, 2.0], dim=(2,)).shape == (2,)
    assert D.normal(0, 1, dim=[2, np.int32(2)]).shape == (2, 2)
    assert D.gamma(2.0, 1.0, truncation=[np.float64(0.5), 3]).shape == ()
    assert D.dirichlet((1.0, 1.0), n_realisations=np.int64(2)).shape == (2, 2)
    assert D.lkj_correlation(2.0, dimension=np.int64(3)).shape == (3, 3)
    assert D.uniform(0, 1, dim=None).shape == ()


def test_the_spec_shows_the_catalogue_the_constructors_check() -> None:
    assert spec.DISTRIBUTIONS is D.CATALOGUE
    assert [d.name for d in spec.DISTRIBUTIONS] == D.DISTRIBUTIONS
    assert spec.check_arg is argument_checks.check_arg
    assert spec.ARG_KINDS is argument_checks.ARG_KINDS


def test_log_prob_is_the_same_on_every_backend(backend: str) -> None:
    for case in CASES:
        x = case.value(**case.params)
        want = case.family.log_prob(T(x), **_tensors(case.params)).numpy()
        with tb.use_backend(backend):
            got = case.family.log_prob(tb.tensor(x, dtype="float64"),
                                       **{k: tb.tensor(np.asarray(v, dtype=np.float64))
                                          for k, v in case.params.items()})
        assert got.backend.name == backend
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, err_msg=case.id)
