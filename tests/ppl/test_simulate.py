"""simulate(): ancestral draws from the prior and prior predictive, against known moments."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorbridge as tb

N = 20_000


def _np(x) -> np.ndarray:
    return np.asarray(x.numpy())


def _mean_ok(x: np.ndarray, mean: float, sd: float) -> None:
    # 5 standard errors of the mean of N independent draws
    assert abs(x.mean() - mean) < 5 * sd / math.sqrt(x.size), (x.mean(), mean)


def test_prior_moments_and_shapes() -> None:
    mu = tb.normal(1.0, 2.0)
    sd = tb.lognormal(0.0, 0.5, dim=3)
    s = tb.simulate({"mu": mu, "sd": sd}, nsim=N, seed=1)
    assert set(s) == {"mu", "sd"}
    m, v = _np(s["mu"]), _np(s["sd"])
    assert m.shape == (N,) and v.shape == (N, 3)
    _mean_ok(m, 1.0, 2.0)
    assert abs(m.std() - 2.0) < 0.05
    # lognormal(0, 0.5): mean exp(0.125), sd sqrt((e^0.25 - 1) e^0.25)
    lsd = math.sqrt((math.exp(0.25) - 1) * math.exp(0.25))
    for j in range(3):
        _mean_ok(v[:, j], math.exp(0.125), lsd)
    assert v.min() > 0


def test_hierarchical_prior_predictive() -> None:
    # mu ~ N(0, 1), theta ~ N(mu, 2), y ~ N(theta, 1): y ~ N(0, sqrt(1 + 4 + 1)), and y's two
    # elements share mu: cov(y0, y1) = 1
    mu = tb.normal(0.0, 1.0)
    theta = tb.normal(mu, 2.0, dim=2)
    y = tb.as_data(np.zeros(2))
    tb.distribution(y, tb.normal(theta, 1.0))
    sims = _np(tb.simulate(y, nsim=N, seed=2))
    assert sims.shape == (N, 2)
    for j in range(2):
        _mean_ok(sims[:, j], 0.0, math.sqrt(6.0))
        assert abs(sims[:, j].var() / 6.0 - 1) < 0.05
    cov = np.cov(sims.T)[0, 1]
    assert abs(cov - 1.0) < 0.2


def test_operations_are_recomputed_per_simulation() -> None:
    a = tb.normal(0.0, 1.0)
    b = tb.normal(0.0, 1.0)
    s = tb.simulate([a, b, a * b + a, tb.exp(a)], nsim=500, seed=3)
    av, bv, c, e = (_np(x) for x in s)
    np.testing.assert_allclose(c, av * bv + av)
    np.testing.assert_allclose(e, np.exp(av))
    assert np.corrcoef(av, bv)[0, 1] < 0.2  # a and b independent


def test_matmul_data_and_discrete_likelihood() -> None:
    x = np.random.default_rng(0).normal(size=(30, 3))
    beta = tb.normal(0.0, 1.0, dim=3)
    y = tb.as_data(np.zeros(30))
    p = tb.sigmoid(tb.as_data(x) @ beta)
    tb.distribution(y, tb.bernoulli(p))
    bs, ps, ys = (_np(v) for v in tb.simulate([beta, p, y], nsim=4000, seed=4))
    assert ys.shape == (4000, 30) and set(np.unique(ys)) <= {0.0, 1.0}
    np.testing.assert_allclose(ps, 1 / (1 + np.exp(-(bs @ x.T))), rtol=1e-12)
    # E[y | p] = p: the mean over simulations matches the mean probability
    assert abs(ys.mean() - ps.mean()) < 0.02


def test_multivariate_with_simulated_parameters() -> None:
    m = tb.normal(0.0, 1.0, dim=3)
    z = tb.multivariate_normal(m, np.diag([1.0, 4.0, 9.0]), n_realisations=2)
    zs = _np(tb.simulate([m, z], nsim=N, seed=5)[1])
    assert zs.shape == (N, 2, 3)
    # z = m + e: variance 1 + diag; both realisations share m
    for k, var in enumerate([2.0, 5.0, 10.0]):
        assert abs(zs[:, 0, k].var() / var - 1) < 0.05
    np.testing.assert_allclose(np.cov(zs[:, 0, 0], zs[:, 1, 0])[0, 1], 1.0, atol=0.1)


def test_seed_reproducible_and_different_seeds_differ() -> None:
    mu = tb.normal(0.0, 1.0, dim=4)
    a = _np(tb.simulate(mu, nsim=10, seed=7))
    b = _np(tb.simulate(mu, nsim=10, seed=7))
    c = _np(tb.simulate(mu, nsim=10, seed=8))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_values_hold_nodes_fixed() -> None:
    mu = tb.normal(0.0, 10.0)
    y = tb.as_data(np.zeros(3))
    tb.distribution(y, tb.normal(mu, 1.0))
    ys = _np(tb.simulate(y, nsim=N, seed=9, values={mu: 5.0}))
    _mean_ok(ys, 5.0, 1.0)
    assert abs(ys.std() - 1.0) < 0.03


def test_data_without_distribution_is_repeated() -> None:
    d = tb.as_data([1.0, 2.0])
    out = _np(tb.simulate(d * 2.0, nsim=3, seed=0))
    np.testing.assert_array_equal(out, [[2.0, 4.0]] * 3)


def test_flat_variable_is_an_error_naming_it() -> None:
    scale = tb.variable(lower=0.0)
    y = tb.as_data([0.0, 1.0])
    tb.distribution(y, tb.normal(0.0, scale))
    with pytest.raises(ValueError, match=r"'scale' is a variable without a distribution"):
        tb.simulate(y, nsim=5)
    named = tb.variable(name="sigma_y")
    with pytest.raises(ValueError, match=r"'sigma_y' is a variable without a distribution"):
        tb.simulate(named * 2.0, nsim=5)


def test_bad_nsim() -> None:
    mu = tb.normal(0.0, 1.0)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="nsim"):
            tb.simulate(mu, nsim=bad)


def test_posterior_predictive_from_draws() -> None:
    """simulate(y, values=draws): each simulation uses one posterior draw's variables."""
    import numpy as np

    mu = tb.normal(0.0, 5.0)
    sd = tb.exponential(1.0)
    y = tb.as_data([1.0, 2.0, 3.0, 2.5])
    tb.distribution(y, tb.normal(mu, sd))
    draws = tb.mcmc(tb.model(mu, sd), n_samples=400, warmup=300, chains=2, seed=1,
                    progress=False)
    every = tb.simulate(y, values=draws, seed=2).numpy()  # nsim=None: every draw, in order
    assert every.shape == (800, 4)
    m = draws["mu"].reshape(-1)[:, None]
    s = draws["sd"].reshape(-1)[:, None]
    z = (every - m) / s  # standard normal only if simulation i used draw i
    assert abs(z.mean()) < 0.08 and abs(z.var() - 1.0) < 0.1
    some = tb.simulate(y, values=draws, nsim=100, seed=3).numpy()
    assert some.shape == (100, 4)
    # a random subset of the draws (NUTS repeats a value now and then, so nearly all distinct)
    again = tb.simulate([mu, y], values=draws, nsim=100, seed=3)
    picked = again[0].numpy()
    assert set(picked.tolist()) <= set(draws["mu"].reshape(-1).tolist())
    assert len(np.unique(picked)) >= 95
    np.testing.assert_array_equal(again[1].numpy(), some)  # same seed, same simulations
    with pytest.warns(UserWarning, match="with replacement"):  # as greta's
        more = tb.simulate(mu, values=draws, nsim=2000, seed=4).numpy()  # with replacement
    assert more.shape == (2000,) and set(more.tolist()) <= set(draws["mu"].reshape(-1).tolist())
