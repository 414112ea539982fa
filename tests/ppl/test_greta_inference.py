"""greta's inference functions in the runtime: ``rwmh()`` and ``slice()`` samplers, greta's
sampler argument names on ``hmc()``/``nuts()``, ``extra_samples()`` and the optimiser objects
for ``opt()``: each against analytic posteriors and optima."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import ppl
from tensorbridge.runtime.ppl import ess_bulk

CORR = 0.8


def _normal_target():
    return tb.model(tb.normal(1.0, 2.0)), np.array([1.0]), np.array([[4.0]])


def _correlated_target():
    sigma = np.array([[1.0, CORR * 2.0], [CORR * 2.0, 4.0]])
    mean = np.array([-1.0, 2.0])
    return tb.model(tb.multivariate_normal(mean, sigma)), mean, sigma


def _check_moments(draws: ppl.Draws, mean: np.ndarray, cov: np.ndarray) -> None:
    """Means, variances and (2-d) the correlation within 5 Monte-Carlo standard errors."""
    x = draws.free.reshape(-1, draws.free.shape[-1])
    for j in range(len(mean)):
        col = draws.free[:, :, j]
        ess = ess_bulk(col)
        assert ess > 100, ess
        sd = np.sqrt(cov[j, j])
        assert abs(col.mean() - mean[j]) < 5 * sd / np.sqrt(ess), (j, col.mean(), ess)
        assert abs(col.var() - cov[j, j]) < 5 * cov[j, j] * np.sqrt(2.0 / ess), (j, col.var())
    if len(mean) == 2:
        r = np.corrcoef(x.T)[0, 1]
        ess = min(ess_bulk(draws.free[:, :, 0]), ess_bulk(draws.free[:, :, 1]))
        assert abs(r - CORR) < 5 * (1 - CORR**2) / np.sqrt(ess), (r, ess)


SAMPLERS = {
    "rwmh-normal": lambda: ppl.rwmh(),
    "rwmh-uniform": lambda: ppl.rwmh("uniform"),
    "slice": lambda: ppl.slice(),
}


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("target", [_normal_target, _correlated_target],
                         ids=["normal", "correlated"])
def test_gradient_free_samplers_match_analytic_moments(name, target) -> None:
    m, mean, cov = target()
    n = 1500 if name == "slice" else 4000
    d = tb.mcmc(m, n_samples=n, warmup=500, chains=2, sampler=SAMPLERS[name](), seed=11,
                backend="numpy")
    assert d.n_draws == n
    _check_moments(d, mean, cov)


@pytest.mark.parametrize("name", SAMPLERS)
def test_gradient_free_samplers_reproduce_and_keep_chains_apart(name) -> None:
    m, _, _ = _correlated_target()
    kw = dict(n_samples=30, warmup=30, sampler=SAMPLERS[name](), backend="numpy")
    a = tb.mcmc(m, chains=2, seed=5, **kw)
    b = tb.mcmc(m, chains=2, seed=5, **kw)
    c = tb.mcmc(m, chains=2, seed=6, **kw)
    np.testing.assert_array_equal(a.free, b.free)
    assert not np.array_equal(a.free, c.free)
    # a chain's numbers are its own stream's: the same chain alone gives the same draws
    alone = tb.mcmc(m, chains=1, seed=5, **kw)
    np.testing.assert_allclose(alone.free[0], a.free[0], rtol=1e-12, atol=1e-12)


def test_rwmh_adapts_its_scale_toward_the_standard_acceptance() -> None:
    m, _, _ = _correlated_target()
    d = tb.mcmc(m, n_samples=2000, warmup=1000, chains=2, sampler=ppl.rwmh(epsilon=5.0),
                seed=2, backend="numpy")
    rate = float(np.mean(d.stats["accept_stat"]))
    assert 0.15 < rate < 0.35, rate


def test_rwmh_and_slice_refuse_the_compiled_backend_and_bad_arguments() -> None:
    m, _, _ = _normal_target()
    with pytest.raises(RuntimeError, match="rwmh sampler runs on the NumPy sampler only"):
        tb.mcmc(m, n_samples=5, warmup=5, chains=1, sampler=ppl.rwmh(), backend="compiled")
    with pytest.raises(ValueError, match="proposal: expected 'normal' or 'uniform'"):
        ppl.rwmh("cauchy")
    with pytest.raises(ValueError, match="max_doublings"):
        ppl.slice(0)
    with pytest.raises(ValueError, match="epsilon: expected a positive number"):
        ppl.rwmh(epsilon=-1)
    with pytest.raises(ValueError, match="diag_sd: expected positive numbers"):
        ppl.nuts(diag_sd=[1.0, 0.0])


def test_hmc_l_min_l_max_draws_leapfrog_counts_in_range() -> None:
    m, mean, cov = _correlated_target()
    d = tb.mcmc(m, n_samples=1500, warmup=500, chains=2, sampler=ppl.hmc(l_min=3, l_max=7),
                seed=4, backend="numpy")
    steps = d.stats["n_leapfrog"]
    assert steps.min() == 3 and steps.max() == 7
    assert len(np.unique(steps)) == 5
    _check_moments(d, mean, cov)
    with pytest.raises(ValueError, match="l_min: expected l_min <= l_max"):
        ppl.hmc(l_min=5, l_max=2)


def test_greta_names_of_nuts_set_its_start() -> None:
    assert ppl.nuts(max_treedepth=6).max_depth == 6
    with pytest.raises(ValueError, match="max_treedepth: 6 contradicts max_depth=4"):
        ppl.nuts(max_depth=4, max_treedepth=6)
    m, mean, cov = _correlated_target()
    d = tb.mcmc(m, n_samples=800, warmup=300, chains=2, seed=3, backend="numpy",
                sampler=ppl.nuts(epsilon=0.05, diag_sd=[1.0, 2.0]))
    _check_moments(d, mean, cov)
    with pytest.raises(ValueError, match="diag_sd: expected 1 or 2 values"):
        tb.mcmc(m, n_samples=5, warmup=5, chains=1, backend="numpy",
                sampler=ppl.nuts(diag_sd=[1.0, 2.0, 3.0]))
    # no warmup: the metric stays greta's diag_sd squared, the step epsilon
    d0 = tb.mcmc(m, n_samples=5, warmup=0, chains=1, seed=1, backend="numpy",
                 sampler=ppl.hmc(epsilon=0.3, diag_sd=2.0))
    np.testing.assert_array_equal(d0.warmup["inv_metric"], [[4.0, 4.0]])
    np.testing.assert_array_equal(d0.warmup["step_size"], [0.3])


def _conjugate(n: int = 20):
    yv = np.random.default_rng(0).normal(1.5, 1.0, size=n)
    mu = tb.normal(0.0, 10.0)
    tb.distribution(tb.as_data(yv), tb.normal(mu, 1.0))
    post_var = 1.0 / (1.0 / 100.0 + n)
    return tb.model(mu), post_var * yv.sum(), post_var


@pytest.mark.parametrize("sampler", [None, ppl.rwmh()], ids=["nuts", "rwmh"])
def test_extra_samples_continue_the_same_chains(sampler) -> None:
    m, _, _ = _conjugate()
    kw = dict(warmup=200, chains=2, seed=8, backend="numpy", sampler=sampler, thin=2)
    first = tb.mcmc(m, n_samples=100, **kw)
    more = tb.extra_samples(first, n_samples=60, thin=2)
    assert more.n_draws == 160 and more.chains == 2
    np.testing.assert_array_equal(more.free[:, :100], first.free)
    # the continuation is the transitions one longer run would have made from that state
    whole = tb.mcmc(m, n_samples=160, **kw)
    np.testing.assert_array_equal(more.free, whole.free)
    np.testing.assert_array_equal(more.warmup["step_size"], first.warmup["step_size"])
    assert more.values["mu"].shape == (2, 160)
    assert more.stats["lp"].shape == (2, 160)


def test_extra_samples_posterior_moments_and_errors() -> None:
    m, mean, var = _conjugate()
    d = tb.mcmc(m, n_samples=300, warmup=300, chains=2, seed=1, backend="numpy")
    d = tb.extra_samples(tb.extra_samples(d, n_samples=700), n_samples=1000)
    assert d.n_draws == 2000
    _check_moments(d, np.array([mean]), np.array([[var]]))
    with pytest.raises(ValueError, match="n_samples: expected an integer >= 1"):
        tb.extra_samples(d, n_samples=0)
    with pytest.raises(TypeError, match="draws: expected the Draws of mcmc"):
        tb.extra_samples({"mu": 1}, n_samples=5)


def test_extra_samples_after_the_compiled_sampler() -> None:
    m, mean, var = _conjugate()
    try:
        d = tb.mcmc(m, n_samples=200, warmup=300, chains=2, seed=1, backend="compiled")
    except RuntimeError as e:
        pytest.skip(f"no compiled sampler here: {e}")
    more = tb.extra_samples(d, n_samples=1500)
    np.testing.assert_array_equal(more.free[:, :200], d.free)
    assert more.n_draws == 1700
    _check_moments(more, np.array([mean]), np.array([[var]]))


# -- optimisers -------------------------------------------------------------------------------
OPTIMISERS = {
    "gradient_descent": lambda: ppl.gradient_descent(learning_rate=0.02),
    "momentum": lambda: ppl.momentum(learning_rate=0.005),
    "momentum-plain": lambda: ppl.momentum(learning_rate=0.005, use_nesterov=False),
    "adagrad": lambda: ppl.adagrad(learning_rate=0.8),
    "adadelta": lambda: ppl.adadelta(learning_rate=1.0, rho=0.95, epsilon=1e-4),
    "rms_prop": lambda: ppl.rms_prop(learning_rate=0.01),
    "adam": lambda: ppl.adam(learning_rate=0.1),
    "adamax": lambda: ppl.adamax(learning_rate=0.05),
    "nadam": lambda: ppl.nadam(learning_rate=0.05),
    "bfgs": lambda: ppl.bfgs(),
    "l_bfgs_b": lambda: ppl.l_bfgs_b(maxcor=5),
    "nelder_mead": lambda: ppl.nelder_mead(),
}


@pytest.mark.parametrize("name", OPTIMISERS)
def test_each_optimiser_reaches_the_known_optimum(name) -> None:
    # MAP of a normal mean (normal prior) and a log-normal-free scale: closed forms
    yv = np.random.default_rng(3).normal(2.0, 1.5, size=30)
    mu = tb.normal(0.0, 10.0)
    sd = tb.variable(lower=0.0)
    tb.distribution(tb.as_data(yv), tb.normal(mu, sd))
    m = tb.model(mu, sd)
    ref = tb.opt(m, max_iterations=2000)
    assert ref.converged
    # the unadjusted mode: mu -> mean shrunk by the prior, sd -> the rms about mu
    mu_hat, sd_hat = float(ref.par[m.variable_names()[0]]), float(ref.par[m.variable_names()[1]])
    assert abs(sd_hat - np.sqrt(np.mean((yv - mu_hat) ** 2))) < 1e-5
    assert abs(mu_hat - yv.sum() / sd_hat**2 / (len(yv) / sd_hat**2 + 0.01)) < 1e-5
    o = tb.opt(m, optimiser=OPTIMISERS[name](), max_iterations=20000)
    got = [float(o.par[n]) for n in m.variable_names()]
    assert o.converged, o
    np.testing.assert_allclose(got, [mu_hat, sd_hat], atol=2e-3)


def test_optimiser_objects_check_their_arguments() -> None:
    with pytest.raises(ValueError, match="adam: learning_rate must be a positive number"):
        ppl.adam(learning_rate=0)
    with pytest.raises(ValueError, match="momentum: momentum must be in"):
        ppl.momentum(momentum=1.5)
    with pytest.raises(ValueError, match="optimiser: expected 'lbfgs', 'adam' or an optimiser"):
        tb.opt(tb.model(tb.normal(0, 1)), optimiser="sgd")
    assert repr(ppl.adam(learning_rate=0.5)).startswith("adam(learning_rate=0.5")


# -- model(precision=) ------------------------------------------------------------------------
def test_single_precision_model_computes_in_float32() -> None:
    yv = np.random.default_rng(0).normal(1.5, 1.0, size=20)
    mu = tb.normal(0.0, 10.0)
    sd = tb.variable(lower=0.0)
    tb.distribution(tb.as_data(yv), tb.normal(mu, sd))
    double, single = tb.model(mu, sd), tb.model(mu, sd, precision="single")
    assert (double.precision, single.precision) == ("double", "single")
    q = np.array([0.3, 0.1])
    lp64, g64 = double.log_density_and_grad(q)
    lp32, g32 = single.log_density_and_grad(q)
    assert lp32.dtype.name == "float32" and g32.dtype.name == "float32"
    assert lp64.dtype.name == "float64"
    # float32 rounding of a sum of 20 terms of size ~1: agreement to a few float32 ulps
    np.testing.assert_allclose(lp32.numpy(), lp64.numpy(), rtol=1e-5)
    np.testing.assert_allclose(g32.numpy(), g64.numpy(), rtol=1e-4)
    assert not np.array_equal(np.float64(lp32.numpy()), lp64.numpy())  # really float32
    o32, o64 = tb.opt(single), tb.opt(double)
    np.testing.assert_allclose([float(v) for v in o32.par.values()],
                               [float(v) for v in o64.par.values()], rtol=1e-3)
    d = tb.mcmc(single, n_samples=400, warmup=300, chains=2, seed=1)
    assert d.backend == "numpy"  # the compiled samplers are float64
    post = tb.mcmc(double, n_samples=400, warmup=300, chains=2, seed=1, backend="numpy")
    assert abs(d["mu"].mean() - post["mu"].mean()) < 0.1
    with pytest.raises(RuntimeError, match="single-precision model runs on the NumPy"):
        tb.mcmc(single, n_samples=5, warmup=5, chains=1, backend="compiled")
    with pytest.raises(ValueError, match="model: precision must be 'double' or 'single'"):
        tb.model(mu, precision="half")
