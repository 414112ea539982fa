"""Samplers against known posteriors, adaptation, batching, initial values, interruption."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.ppl import mcmc
from tensorbridge.runtime.ppl.adaptation import WindowSchedule
from tensorbridge.runtime.ppl.sampler import hmc, nuts


def _normal_normal(n: int = 20, seed: int = 0):
    yv = np.random.default_rng(seed).normal(1.5, 1.0, size=n)
    y = tb.as_data(yv)
    mu = tb.normal(0.0, 10.0)
    tb.distribution(y, tb.normal(mu, 1.0))
    post_var = 1.0 / (1.0 / 100.0 + n)
    return tb.model(mu), post_var * yv.sum(), post_var


def _within_mc_error(draws: np.ndarray, mean: float, var: float, ess: float) -> None:
    se = np.sqrt(var / ess)
    assert abs(draws.mean() - mean) < 5 * se, (draws.mean(), mean, se)
    # the variance estimate's standard error is about var * sqrt(2 / ess)
    assert abs(draws.var() - var) < 5 * var * np.sqrt(2.0 / ess), (draws.var(), var)


@pytest.mark.parametrize("sampler", [nuts(), hmc(n_leapfrog=8)], ids=["nuts", "hmc"])
def test_normal_normal_posterior(sampler) -> None:
    m, mean, var = _normal_normal()
    d = mcmc(m, n_samples=800, warmup=500, chains=4, sampler=sampler, seed=2, progress=False)
    s = d.summary()
    assert s["mu"]["rhat"] < 1.02
    _within_mc_error(d["mu"], mean, var, s["mu"]["ess_bulk"])
    assert d.divergences == 0


def test_bayesian_linear_regression_matches_analytic_gaussian() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 3))
    yv = x @ np.array([0.5, -1.0, 2.0]) + 0.5 * rng.normal(size=30)
    beta = tb.normal(0.0, 2.0, dim=3)
    tb.distribution(tb.as_data(yv), tb.normal(tb.as_data(x) @ beta, 0.5))
    m = tb.model(beta)
    # conjugate posterior: precision = X'X / s^2 + I / 4
    prec = x.T @ x / 0.25 + np.eye(3) / 4.0
    cov = np.linalg.inv(prec)
    mean = cov @ (x.T @ yv / 0.25)
    d = mcmc(m, n_samples=1000, warmup=500, chains=4, seed=4, progress=False)
    draws = d["beta"].reshape(-1, 3)
    s = d.summary()
    for j in range(3):
        _within_mc_error(draws[:, j], mean[j], cov[j, j], s[f"beta[{j}]"]["ess_bulk"])
    emp = np.cov(draws.T)
    np.testing.assert_allclose(emp, cov, atol=0.25 * np.max(np.abs(cov)))


def test_constrained_variable_and_names() -> None:
    yv = np.random.default_rng(5).normal(0.0, 2.0, size=50)
    sd = tb.variable(lower=0.0)
    tb.distribution(tb.as_data(yv), tb.normal(0.0, sd))
    m = tb.model(sd)
    d = mcmc(m, n_samples=400, warmup=400, chains=2, seed=6, progress=False)
    assert d.names == ["sd"]
    assert d["sd"].min() > 0
    # flat prior on sd: the posterior mode is near the sample sd
    assert abs(np.median(d["sd"]) - yv.std()) < 0.4


def test_chains_are_batched_not_looped() -> None:
    m, _, _ = _normal_normal()
    calls = []
    orig = m.compiled_target

    def spy_target(batch):
        target = orig(batch)

        def spy(free):
            calls.append(np.shape(free))
            return target(free)

        return spy

    m.compiled_target = spy_target
    mcmc(m, n_samples=5, warmup=5, chains=6, seed=0, progress=False, backend="numpy")
    assert len(calls) > 20 and all(c == (6, 1) for c in calls)


def test_compiled_target_matches_log_density_and_grad() -> None:
    # the samplers' raw fast path calls the staged program directly: same numbers as the API
    m, _, _ = _normal_normal()
    q = np.random.default_rng(0).normal(size=(3, 1))
    target = m.compiled_target(3)
    for _ in range(2):  # the first call traces, later ones take the raw path
        lp, g = target(q)
        want_lp, want_g = m.log_density_and_grad(q)
        np.testing.assert_allclose(lp, want_lp.numpy(), rtol=1e-14)
        np.testing.assert_allclose(g, want_g.numpy(), rtol=1e-14)
        assert lp.shape == (3,) and g.shape == (3, 1) and lp.dtype == np.float64


def test_reproducible_with_seed() -> None:
    m, _, _ = _normal_normal()
    a = mcmc(m, n_samples=50, warmup=50, chains=2, seed=11, progress=False)
    b = mcmc(m, n_samples=50, warmup=50, chains=2, seed=11, progress=False)
    np.testing.assert_array_equal(a["mu"], b["mu"])


def test_initial_values_outside_support_name_the_variable() -> None:
    sd = tb.variable(lower=0.0)
    tb.distribution(tb.as_data([1.0, 2.0]), tb.normal(0.0, sd))
    m = tb.model(sd)
    with pytest.raises(ValueError, match=r"variable 'sd' has values -1.0 outside its support"):
        mcmc(m, initial_values={sd: -1.0}, n_samples=5, warmup=5, progress=False)
    d = mcmc(m, initial_values={sd: 1.0}, n_samples=5, warmup=5, chains=2, progress=False)
    assert d["sd"].shape == (2, 5)


def test_infinite_density_at_initial_values_is_explained() -> None:
    mu = tb.variable()
    tb.distribution(tb.as_data([0.0]), tb.normal(mu, tb.exp(mu * 1000.0)))
    m = tb.model(mu)
    with pytest.raises(ValueError, match=r"normal distribution of .*depends on mu"):
        mcmc(m, initial_values={mu: 5.0}, n_samples=5, warmup=5, chains=1, progress=False)


def test_should_stop_keeps_draws_taken_so_far() -> None:
    m, _, _ = _normal_normal()
    count = {"n": 0}

    def stop() -> bool:
        count["n"] += 1
        return count["n"] > 30

    with pytest.warns(RuntimeWarning, match="interrupted"):
        d = mcmc(m, n_samples=100, warmup=20, chains=2, seed=0, progress=False, backend="numpy",
                 should_stop=stop)
    assert d.interrupted and d.n_draws == 10


def test_progress_callback() -> None:
    m, _, _ = _normal_normal()
    seen = []
    mcmc(m, n_samples=20, warmup=20, chains=2, seed=0, progress=False,
         callback=seen.append, callback_every=10)
    assert [s["iteration"] for s in seen] == [10, 20, 30, 40]
    assert seen[0]["phase"] == "warmup" and seen[-1]["phase"] == "sampling"


def test_window_schedule_matches_stan() -> None:
    s = WindowSchedule(1000)
    ends = [i for i in range(1000) if s.window_ends(i)]
    assert ends == [99, 149, 249, 449, 949]
    assert not s.in_window(74) and s.in_window(75) and not s.in_window(950)


def test_bad_arguments() -> None:
    m, _, _ = _normal_normal()
    with pytest.raises(ValueError, match="chains: expected an integer >= 1"):
        mcmc(m, chains=0)
    with pytest.raises(ValueError, match="target_accept"):
        nuts(target_accept=1.5)


def test_beta_binomial_conjugate_posterior() -> None:
    p = tb.beta(2.0, 3.0)
    tb.distribution(tb.as_data([7.0, 4.0]), tb.binomial(10, p))
    m = tb.model(p)
    d = mcmc(m, n_samples=1000, warmup=500, chains=4, seed=7, progress=False)
    a, b = 2 + 11, 3 + 9  # Beta(2 + successes, 3 + failures)
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    _within_mc_error(d["p"], mean, var, d.summary()["p"]["ess_bulk"])


def test_gamma_poisson_conjugate_posterior() -> None:
    counts = np.array([3.0, 5.0, 2.0, 4.0, 6.0])
    lam = tb.gamma(2.0, 1.0)
    tb.distribution(tb.as_data(counts), tb.poisson(lam))
    m = tb.model(lam)
    d = mcmc(m, n_samples=1000, warmup=500, chains=4, seed=8, progress=False)
    shape, rate = 2 + counts.sum(), 1 + counts.size
    _within_mc_error(d["lam"], shape / rate, shape / rate**2, d.summary()["lam"]["ess_bulk"])


def test_safe_point_hook_interrupts_and_keeps_draws() -> None:
    from tensorbridge.runtime.interrupts import register_safe_point, unregister_safe_point

    m, _, _ = _normal_normal()
    calls = {"n": 0}

    class HostInterrupt(BaseException):
        pass

    def hook() -> None:
        calls["n"] += 1
        if calls["n"] > 25:
            raise HostInterrupt

    register_safe_point(hook)
    try:
        with pytest.warns(RuntimeWarning, match="interrupted"):
            d = mcmc(m, n_samples=100, warmup=20, chains=2, seed=0, progress=False,
                     backend="numpy")
    finally:
        unregister_safe_point(hook)
    assert d.interrupted and d.n_draws == 5


def test_a_finished_chains_step_does_not_depend_on_its_batch() -> None:
    # a nearly flat target: chain 0's first step (1.2e8, outside [1e-10, 1e7]) already ends its
    # search, while chain 1 (from 1e-3) doubles up to the 1e7 bound; chain 0's step must come
    # back as when it runs alone (no clipping because its batch still searches), as the
    # compiled sampler does one chain at a time
    from tensorbridge.runtime.ppl.adaptation import find_reasonable_step
    from tensorbridge.runtime.ppl.chain_rng import PURPOSE_STEP_SEARCH, chain_rng, restart
    from tensorbridge.runtime.ppl.hamiltonian import PhasePoint

    def target(q):
        return -0.5e-16 * np.sum(q * q, axis=1), -1e-16 * q

    def search(steps):
        q = np.full((len(steps), 2), 0.3)
        lp, g = target(q)
        rng = chain_rng(0, len(steps), list(range(len(steps))))
        restart(rng, 0, PURPOSE_STEP_SEARCH)
        z = PhasePoint(q, np.zeros_like(q), lp, g)
        return find_reasonable_step(z, np.array(steps), np.ones_like(q), target, rng)

    alone = search([1.2e8])
    both = search([1.2e8, 1e-3])
    assert alone[0] == both[0] == 1.2e8
    assert both[1] == 1e7  # the other chain searched up to the bound
