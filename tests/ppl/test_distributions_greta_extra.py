"""Issue 16's distributions and links against SciPy and hand computations: ``wishart``, ``f``,
``hypergeometric``, ``dirichlet_multinomial`` (log densities over many parameter values with
edges, gradients against finite differences, simulate() moments, a NUTS run for the continuous
ones), ``mixture()`` (logsumexp by hand) and ``joint()`` (the sum), and the links ``iprobit``,
``icloglog``, ``icauchit`` and ``imultilogit``."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest
from scipy import special, stats

import tensorbridge as tb
from tensorbridge.runtime import spec
from tensorbridge.runtime.compiled.build import compiler_available
from tensorbridge.runtime.ppl import distributions as D
from tensorbridge.runtime.ppl.distributions import families as F

N_SIM = 20000


def T(a: Any) -> Any:
    return tb.tensor(np.asarray(a, dtype=np.float64))


def _spd(k: int, seed: int) -> np.ndarray:
    a = np.random.default_rng(seed).normal(size=(k, k))
    return a @ a.T + k * np.eye(k)


def _close_to_moment(draws: np.ndarray, mean: np.ndarray, var: np.ndarray, z: float = 5.0
                     ) -> None:
    """Sample means within z standard errors of the analytic mean."""
    se = np.sqrt(var / draws.shape[0])
    assert np.all(np.abs(draws.mean(axis=0) - mean) <= z * se + 1e-12), (draws.mean(0), mean)


# -- F ------------------------------------------------------------------------------------------
DFS = [0.3, 1.0, 2.0, 4.5, 30.0, 400.0]


@pytest.mark.parametrize("df1,df2", list(itertools.product(DFS, DFS)))
def test_f_density_and_cdf_match_scipy(df1: float, df2: float) -> None:
    ref = stats.f(df1, df2)
    x = np.concatenate([ref.ppf([1e-6, 0.01, 0.3, 0.5, 0.9, 0.999]), [1e-8, 1.0, 50.0]])
    fam, p = F.F(), {"df1": T(df1), "df2": T(df2)}
    np.testing.assert_allclose(fam.log_prob(T(x), **p).numpy(), ref.logpdf(x), rtol=1e-10,
                               atol=1e-11)
    lc, ls = fam.log_cdf_sf(T(x), **p)
    for got, want in ((lc.numpy(), ref.logcdf(x)), (ls.numpy(), ref.logsf(x))):
        ok = np.isfinite(want)  # SciPy underflows to -inf where ours is a finite log
        np.testing.assert_allclose(got[ok], want[ok], rtol=1e-8, atol=1e-11)
        assert np.all(got[~ok] < -700)


def test_f_outside_support_and_broadcasting() -> None:
    fam = F.F()
    assert fam.log_prob(T(-0.5), df1=T(3.0), df2=T(4.0)).item() == -np.inf
    df1 = np.array([[1.0], [5.0]])
    df2 = np.array([2.0, 8.0, 20.0])
    got = fam.log_prob(T(1.7), df1=T(df1), df2=T(df2)).numpy()
    np.testing.assert_allclose(got, stats.f(df1, df2).logpdf(1.7), rtol=1e-11)


def test_f_truncated_is_renormalised() -> None:
    x = tb.f(3.0, 7.0, truncation=(0.5, 2.0))
    fam = x.node.distribution.family
    ref = stats.f(3.0, 7.0)
    z = ref.cdf(2.0) - ref.cdf(0.5)
    got = fam.log_prob(T(1.1), df1=T(3.0), df2=T(7.0)).item()
    np.testing.assert_allclose(got, ref.logpdf(1.1) - np.log(z), rtol=1e-9)


# -- hypergeometric -----------------------------------------------------------------------------
URNS = [(10, 7, 8), (1, 0, 1), (0, 5, 3), (5, 5, 0), (6, 4, 10), (30, 70, 25), (200, 3, 150)]


@pytest.mark.parametrize("m,n,k", URNS)
def test_hypergeometric_mass_matches_scipy(m: int, n: int, k: int) -> None:
    x = np.arange(-1, k + 2, dtype=float)
    got = F.Hypergeometric().log_prob(T(x), m=T(m), n=T(n), k=T(k)).numpy()
    want = stats.hypergeom(m + n, m, k).logpmf(x)  # SciPy: (total, white, drawn)
    inside = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), inside)
    np.testing.assert_allclose(got[inside], want[inside], rtol=1e-10, atol=1e-11)
    assert abs(special.logsumexp(got[inside])) < 1e-10  # sums to one over the support
    assert F.Hypergeometric().log_prob(T(1.5), m=T(m), n=T(n), k=T(k)).item() == -np.inf


def test_hypergeometric_refuses_impossible_urns_and_data() -> None:
    with pytest.raises(ValueError, match="hypergeometric: k must be at most m \\+ n"):
        tb.hypergeometric(3, 2, 6)
    with pytest.raises(ValueError, match="hypergeometric: m must be a non-negative integer"):
        tb.hypergeometric(2.5, 2, 1)
    with pytest.raises(ValueError, match="target: hypergeometric data"):
        tb.distribution(tb.as_data(np.array([1.5, 2.0])), tb.hypergeometric(5, 5, 3))
    with pytest.raises(ValueError, match="from 0 to min\\(m, k\\), got 6"):
        tb.distribution(tb.as_data(np.array([1.0, 6.0])), tb.hypergeometric(5, 5, 4))
    with pytest.raises(TypeError, match="cannot be the prior"):
        tb.model(tb.hypergeometric(5, 5, 3))


# -- Dirichlet-multinomial ------------------------------------------------------------------------
@pytest.mark.parametrize("alpha,size", [([0.5, 1.0, 2.0], 10), ([0.05, 0.05], 7),
                                        ([3.0, 3.0, 3.0, 3.0], 0), ([50.0, 0.2, 9.0], 40),
                                        ([1e3, 1e3], 5)])
def test_dirichlet_multinomial_matches_scipy(alpha: list[float], size: int) -> None:
    k = len(alpha)
    rows = [c for c in itertools.product(range(size + 1), repeat=k - 1) if sum(c) <= size][:60]
    x = np.array([[*c, size - sum(c)] for c in rows], dtype=float)
    got = F.DirichletMultinomial().log_prob(T(x), size=T(size), alpha=T(alpha)).numpy()
    want = stats.dirichlet_multinomial(alpha, size).logpmf(x)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-11)
    with pytest.raises(ValueError, match="rows of non-negative whole counts summing to size"):
        tb.distribution(tb.as_data(x[:2] + np.array([1.0] + [0.0] * (k - 1))),
                        tb.dirichlet_multinomial(size, alpha))
    bad = x[0].copy()
    bad[0] += 1  # no longer sums to size
    assert F.DirichletMultinomial().log_prob(T(bad), size=T(size), alpha=T(alpha)).item() \
        == -np.inf


# -- Wishart ------------------------------------------------------------------------------------
@pytest.mark.parametrize("k,df", [(1, 0.5), (1, 7.0), (2, 1.01), (2, 2.0), (2, 9.5), (3, 2.2),
                                  (3, 3.0), (3, 60.0), (5, 4.5)])
def test_wishart_density_matches_scipy(k: int, df: float) -> None:
    sigma = _spd(k, k)
    xs = stats.wishart(df=max(df, k), scale=sigma).rvs(size=4, random_state=k + 1)
    xs = np.reshape(xs, (4, k, k))
    got = F.Wishart().log_prob(T(xs), df=T(df), Sigma=T(sigma)).numpy()
    want = [stats.wishart(df=df, scale=sigma).logpdf(x) for x in xs]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_wishart_broadcasts_df_and_sigma() -> None:
    sig = np.stack([_spd(2, 1), _spd(2, 2), np.eye(2)])
    x = _spd(2, 9)
    df = np.array([2.5, 4.0, 30.0])
    got = F.Wishart().log_prob(T(x), df=T(df), Sigma=T(sig)).numpy()
    want = [stats.wishart(df=d, scale=s).logpdf(x) for d, s in zip(df, sig)]
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_wishart_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="wishart: df must be greater than K - 1 = 2"):
        tb.wishart(2.0, np.eye(3))
    with pytest.raises(ValueError, match="wishart: Sigma must be symmetric"):
        tb.wishart(5.0, np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="wishart: Sigma must be positive definite"):
        tb.wishart(5.0, np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="wishart: Sigma must be a square matrix"):
        tb.wishart(5.0, np.ones(3))
    with pytest.raises(ValueError, match="wishart: dimension 3 does not match"):
        tb.wishart(5.0, np.eye(2), dimension=3)
    w = tb.wishart(5.0, np.eye(2))
    assert w.node.constraint.kind == "positive_definite"  # a prior through a Cholesky factor


# -- gradients (finite differences, both modes) --------------------------------------------------
def test_gradients_match_finite_differences() -> None:
    tb.check_grads(lambda x, a, b: tb.sum(F.F().log_prob(x, df1=a, df2=b)),
                   [T([0.3, 1.7, 6.0]), T(3.5), T(8.0)], order=1, modes=("fwd", "rev"))
    tb.check_grads(lambda a: tb.sum(F.DirichletMultinomial().log_prob(
        T([[2.0, 3.0, 5.0], [0.0, 9.0, 1.0]]), size=T(10.0), alpha=a)),
        [T([0.5, 1.3, 2.0])], order=1, modes=("fwd", "rev"))
    x = T(_spd(3, 4))

    def wishart_lp(df: Any, chol: Any) -> Any:  # Sigma = L L': symmetric for every step
        sigma = tb.matmul(chol, tb.transpose(chol))
        return tb.sum(F.Wishart().log_prob(x, df=df, Sigma=sigma))

    chol = np.linalg.cholesky(_spd(3, 5))
    tb.check_grads(wishart_lp, [T(6.5), T(chol)], order=1, modes=("fwd", "rev"))


# -- mixture() and joint() ----------------------------------------------------------------------
def test_mixture_density_is_logsumexp_of_weighted_components() -> None:
    mu = tb.variable()
    mix = tb.mixture(tb.normal(mu, 1.0), tb.student(3.0, 2.0, 0.5), tb.cauchy(-1.0, 2.0),
                     weights=[1.0, 2.0, 5.0], dim=4)
    x = np.array([-2.0, 0.1, 2.2, 7.0])
    dn = mix.node.distribution
    params = {k: (T(0.4) if isinstance(v, tb.runtime.graph.nodes.GraphNode) else v)
              for k, v in dn.param_args.items()}
    got = dn.family.log_prob(T(x), **params).numpy()
    w = np.array([1.0, 2.0, 5.0]) / 8.0
    comps = np.stack([stats.norm(0.4, 1.0).logpdf(x), stats.t(3.0, 2.0, 0.5).logpdf(x),
                      stats.cauchy(-1.0, 2.0).logpdf(x)])
    np.testing.assert_allclose(got, special.logsumexp(comps + np.log(w)[:, None], axis=0),
                               rtol=1e-12)
    assert mix.shape == (4,)


def test_mixture_weights_per_element_and_discrete_data() -> None:
    y = np.array([0.0, 2.0, 3.0, 11.0, 9.0])
    w = np.array([[0.2, 0.5, 0.9, 0.1, 0.3], [0.8, 0.5, 0.1, 0.9, 0.7]])
    mix = tb.mixture(tb.poisson(3.0), tb.poisson(10.0), weights=w)
    assert mix.shape == (5,)
    yd = tb.as_data(y)
    tb.distribution(yd, mix)
    dn = yd.node.distribution
    got = dn.family.log_prob(T(y), **dn.param_args).numpy()
    want = np.logaddexp(np.log(w[0]) + stats.poisson(3).logpmf(y),
                        np.log(w[1]) + stats.poisson(10).logpmf(y))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_joint_density_is_the_sum() -> None:
    j = tb.joint(tb.normal(2.0, 0.5), tb.beta(3.0, 3.0), dim=3)
    assert j.shape == (3, 2)
    x = np.array([[2.1, 0.3], [1.0, 0.9], [2.5, 0.5]])
    dn = j.node.distribution
    got = dn.family.log_prob(T(x), **dn.param_args).numpy()
    want = stats.norm(2.0, 0.5).logpdf(x[:, 0]) + stats.beta(3, 3).logpdf(x[:, 1])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # different interval supports: each column its own bounds (a prior as in greta)
    assert j.node.constraint.kind == "bounded"
    assert j.node.constraint.lowers == (-np.inf, 0.0) * 3
    assert j.node.constraint.uppers == (np.inf, 1.0) * 3


def test_mixture_and_joint_refuse_what_greta_refuses() -> None:
    with pytest.raises(ValueError, match="weights must have 2 entries"):
        tb.mixture(tb.normal(0, 1), tb.normal(1, 1), weights=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="all continuous or all discrete"):
        tb.mixture(tb.normal(0, 1), tb.poisson(1.0), weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="same dimensions"):
        tb.mixture(tb.normal(0, 1, dim=2), tb.normal(1, 1, dim=3), weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="mixture: weights must be positive"):
        tb.mixture(tb.normal(0, 1), tb.normal(1, 1), weights=[1.0, -1.0])
    with pytest.raises(TypeError, match="argument 2 must be a distribution"):
        tb.joint(tb.normal(0, 1), tb.variable())
    with pytest.raises(ValueError, match="components must be univariate"):
        tb.joint(tb.dirichlet(np.ones(3)), tb.dirichlet(np.ones(3)))
    a = tb.normal(0, 1)
    _ = a * 2.0
    with pytest.raises(ValueError, match="argument 1 is already used"):
        tb.joint(a, tb.normal(0, 1))


def test_a_refused_combination_leaves_its_distributions_alone() -> None:
    a = tb.normal(0.0, 1.0)
    with pytest.raises(ValueError, match="weights must have 2 entries"):
        tb.mixture(a, tb.normal(1.0, 1.0), weights=[1.0, 2.0, 3.0])
    assert a.node.distribution is not None  # still a normal(0, 1) variable
    assert len(tb.model(a).variables) == 1


def test_components_leave_the_model() -> None:
    sd = tb.lognormal(0.0, 1.0)
    mix = tb.mixture(tb.normal(-1.0, sd), tb.normal(1.0, sd), weights=[1.0, 1.0])
    m = tb.model(mix, sd)
    assert len(m.variables) == 2  # the mixture and sd; not the components


# -- simulate() moments --------------------------------------------------------------------------
def test_simulate_moments_match_analytic() -> None:
    sigma = np.array([[2.0, 0.3], [0.3, 1.0]])
    w = np.asarray(tb.simulate(tb.wishart(6.0, sigma), nsim=N_SIM, seed=1)).reshape(N_SIM, 4)
    var_w = 6.0 * (sigma ** 2 + np.outer(np.diag(sigma), np.diag(sigma)))
    _close_to_moment(w, 6.0 * sigma.ravel(), var_w.ravel())
    assert np.all(np.linalg.eigvalsh(w.reshape(-1, 2, 2)) > 0)

    x = np.asarray(tb.simulate(tb.f(4.0, 12.0, dim=2), nsim=N_SIM, seed=2)).reshape(N_SIM, -1)
    _close_to_moment(x, np.full(2, stats.f(4, 12).mean()), np.full(2, stats.f(4, 12).var()))

    h = np.asarray(tb.simulate(tb.hypergeometric(30, 70, 25, dim=3), nsim=N_SIM, seed=3))
    h = h.reshape(N_SIM, -1)
    ref = stats.hypergeom(100, 30, 25)
    _close_to_moment(h, np.full(3, ref.mean()), np.full(3, ref.var()))
    assert np.all(h == np.round(h)) and h.min() >= 0 and h.max() <= 25

    alpha = np.array([0.5, 1.0, 2.5])
    dm = np.asarray(tb.simulate(tb.dirichlet_multinomial(12, alpha), nsim=N_SIM, seed=4))
    ref_dm = stats.dirichlet_multinomial(alpha, 12)
    _close_to_moment(dm, ref_dm.mean(), ref_dm.var())
    assert np.all(dm.sum(axis=-1) == 12)

    mix = tb.mixture(tb.normal(-2.0, 1.0), tb.exponential(1.0, truncation=None),
                     weights=[1.0, 3.0])
    with pytest.raises(TypeError, match="same support"):  # real vs positive: data only
        tb.model(mix)
    mx = np.asarray(tb.simulate(mix, nsim=N_SIM, seed=5)).reshape(N_SIM, 1)
    mean = 0.25 * -2.0 + 0.75 * 1.0
    var = 0.25 * (1.0 + 4.0) + 0.75 * 2.0 - mean ** 2
    _close_to_moment(mx, np.array([mean]), np.array([var]))

    j = np.asarray(tb.simulate(tb.joint(tb.normal(-3.0, 0.5), tb.gamma(2.0, 4.0), dim=2),
                               nsim=N_SIM, seed=6)).reshape(N_SIM, 4)
    _close_to_moment(j, np.array([-3.0, 0.5, -3.0, 0.5]), np.array([0.25, 0.125, 0.25, 0.125]))


def test_simulate_with_simulated_weights() -> None:
    w = tb.uniform(0.0, 1.0, dim=2)
    mix = tb.mixture(tb.normal(-5.0, 0.1), tb.normal(5.0, 0.1), weights=w, dim=3)
    x = np.asarray(tb.simulate(mix, nsim=4000, seed=7))
    assert x.shape == (4000, 3)
    # E[w1 / (w1 + w2)] = 1/2 for independent uniforms: half the draws near +5
    assert abs((x > 0).mean() - 0.5) < 0.05


# -- NUTS ---------------------------------------------------------------------------------------
def _mcmc(target: Any, seed: int) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tb.CompiledSamplingUnavailable)
        return tb.mcmc(tb.model(target), n_samples=1500, warmup=750, chains=2, seed=seed,
                       progress=False)


def _ess_close(x: np.ndarray, mean: float, sd: float, z: float = 5.0) -> None:
    ess = float(tb.runtime.ppl.ess_bulk(x.reshape(x.shape[0], x.shape[1])))
    assert abs(x.mean() - mean) < z * sd / np.sqrt(ess), (x.mean(), mean, ess)


def test_nuts_wishart_and_f_marginals() -> None:
    sigma = np.array([[2.0, 0.3], [0.3, 1.0]])
    d = _mcmc(tb.wishart(5.0, sigma), 11)
    x = d[d.names[0]]  # chains x draws x 2 x 2
    var = 5.0 * (sigma ** 2 + np.outer(np.diag(sigma), np.diag(sigma)))
    for i, j in [(0, 0), (1, 0), (1, 1)]:
        _ess_close(x[:, :, i, j], 5.0 * sigma[i, j], np.sqrt(var[i, j]))
    assert d.divergences == 0

    d = _mcmc(tb.f(5.0, 10.0), 12)
    x = d[d.names[0]]
    _ess_close(x, stats.f(5, 10).mean(), stats.f(5, 10).std())
    assert abs(np.median(x) - stats.f(5, 10).median()) < 0.1


def test_nuts_mixture_and_joint() -> None:
    d = _mcmc(tb.mixture(tb.normal(-1.0, 1.0), tb.normal(1.5, 1.0), weights=[1.0, 3.0]), 13)
    x = d[d.names[0]]
    mean = 0.25 * -1.0 + 0.75 * 1.5
    sd = np.sqrt(1.0 + 0.25 * 0.75 * 2.5 ** 2)
    _ess_close(x, mean, sd)
    d = _mcmc(tb.joint(tb.normal(-3.0, 0.5), tb.normal(3.0, 0.5)), 14)
    x = d[d.names[0]]
    _ess_close(x[..., 0], -3.0, 0.5)
    _ess_close(x[..., 1], 3.0, 0.5)
    d = _mcmc(tb.joint(tb.normal(2.0, 0.5), tb.beta(3.0, 3.0)), 15)  # bounds per column
    x = d[d.names[0]]
    _ess_close(x[..., 0], 2.0, 0.5)
    _ess_close(x[..., 1], 0.5, np.sqrt(1.0 / 28.0))
    assert 0.0 < x[..., 1].min() and x[..., 1].max() < 1.0


@pytest.mark.skipif(compiler_available() is not None, reason="no C compiler")
def test_the_new_densities_lower_to_c() -> None:
    """Every kernel of the new densities has a C lowering: mcmc(backend="compiled") runs them
    (no fallback to the NumPy sampler)."""
    rng = np.random.default_rng(0)
    alpha = tb.lognormal(0.0, 1.0, dim=(1, 3))
    y = tb.as_data(rng.multinomial(20, [0.2, 0.3, 0.5], size=10).astype(float))
    tb.distribution(y, tb.dirichlet_multinomial(tb.as_data(np.full(10, 20.0)), alpha))
    w = tb.uniform(0.0, 1.0, dim=2)
    lam = tb.lognormal(1.0, 1.0, dim=2)
    tb.distribution(tb.as_data(np.array([0.0, 2.0, 5.0, 9.0, 12.0])),
                    tb.mixture(tb.poisson(lam[0]), tb.poisson(lam[1]), weights=w, dim=5))
    s = tb.wishart(5.0, np.eye(2))
    tb.distribution(tb.as_data(rng.normal(size=(20, 2))),
                    tb.multivariate_normal(np.zeros(2), s, n_realisations=20))
    x = tb.f(3.0, 7.0)
    j = tb.joint(tb.normal(0.0, 1.0), tb.normal(1.0, 2.0))
    m = tb.model(alpha, w, lam, s, x, j)
    d = tb.mcmc(m, n_samples=20, warmup=20, chains=1, seed=1, progress=False,
                backend="compiled")
    assert d.backend == "compiled"


# -- links ----------------------------------------------------------------------------------------
def test_links_match_their_cdfs() -> None:
    x = np.array([-40.0, -6.0, -1.3, 0.0, 0.7, 3.0, 8.0])
    np.testing.assert_allclose(tb.iprobit(T(x)).numpy(), stats.norm.cdf(x), rtol=1e-13,
                               atol=1e-300)
    np.testing.assert_allclose(tb.icloglog(T(x)).numpy(), -np.expm1(-np.exp(x)), rtol=1e-14)
    np.testing.assert_allclose(tb.icauchit(T(x)).numpy(), stats.cauchy.cdf(x), rtol=1e-12)
    eta = np.array([[0.5, -1.0], [2.0, 0.0], [-30.0, 30.0]])
    full = np.concatenate([eta, np.zeros((3, 1))], axis=1)
    np.testing.assert_allclose(tb.imultilogit(T(eta)).numpy(), special.softmax(full, axis=1),
                               rtol=1e-13)
    with pytest.raises(ValueError, match="imultilogit: x must be a 2-dimensional"):
        tb.imultilogit(T([1.0, 2.0]))


def test_links_on_lazy_arrays_are_lazy_and_differentiable() -> None:
    v = tb.variable(dim=(2, 2))
    out = {"iprobit": tb.iprobit(v), "icloglog": tb.icloglog(v), "icauchit": tb.icauchit(v),
           "imultilogit": tb.imultilogit(v)}
    vals = np.array([[0.3, -1.2], [2.0, 0.1]])
    got = {k: np.asarray(tb.calculate(o, values={v: vals})) for k, o in out.items()}
    np.testing.assert_allclose(got["iprobit"], stats.norm.cdf(vals), rtol=1e-13)
    np.testing.assert_allclose(got["icauchit"], stats.cauchy.cdf(vals), rtol=1e-12)
    assert got["imultilogit"].shape == (2, 3)
    for fn in (tb.iprobit, tb.icloglog, tb.icauchit):
        tb.check_grads(lambda z, fn=fn: tb.sum(fn(z)), [T(vals)], order=1, modes=("fwd", "rev"))
    tb.check_grads(lambda z: tb.sum(tb.imultilogit(z) * T([[1.0, 2.0, 3.0]])), [T(vals)],
                   order=1, modes=("fwd", "rev"))


def test_the_catalogue_lists_them() -> None:
    names = {d.name for d in spec.DISTRIBUTIONS}
    assert {"wishart", "f", "hypergeometric", "dirichlet_multinomial"} <= names
    by = {d.name: [a.name for a in d.args] for d in spec.DISTRIBUTIONS}
    assert by["wishart"] == ["df", "Sigma", "dimension"]
    assert by["f"] == ["df1", "df2", "dim", "truncation"]
    assert by["hypergeometric"] == ["m", "n", "k", "dim"]
    assert by["dirichlet_multinomial"] == ["size", "alpha", "n_realisations", "dimension"]
    assert D.COMBINATORS == ["joint", "mixture"]
