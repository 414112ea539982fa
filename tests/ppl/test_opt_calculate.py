"""MAP optimisation and posterior predictive calculation over draws."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb


def _regression():
    rng = np.random.default_rng(0)
    xv = rng.normal(size=(40, 2))
    yv = xv @ np.array([1.0, -0.5]) + 0.3 * rng.normal(size=40)
    x = tb.as_data(xv)
    beta = tb.variable(dim=2)
    sd = tb.variable(lower=0.0)
    mu = x @ beta
    tb.distribution(tb.as_data(yv), tb.normal(mu, sd))
    return tb.model(beta, sd), xv, yv, mu


@pytest.mark.parametrize("optimiser", ["lbfgs", "adam"])
def test_map_of_flat_prior_regression_is_least_squares(optimiser: str) -> None:
    m, xv, yv, _ = _regression()
    res = tb.opt(m, optimiser=optimiser, max_iterations=3000 if optimiser == "adam" else 500)
    ls, *_ = np.linalg.lstsq(xv, yv, rcond=None)
    resid = yv - xv @ ls
    tol = 1e-5 if optimiser == "lbfgs" else 2e-3
    assert res.converged
    np.testing.assert_allclose(res.par["beta"], ls, atol=tol)
    # the MLE of sd under a flat prior is the RMS residual
    assert res.par["sd"] == pytest.approx(np.sqrt(np.mean(resid**2)), abs=tol)


def test_opt_rejects_unknown_optimiser() -> None:
    m, *_ = _regression()
    with pytest.raises(ValueError, match="optimiser: expected 'lbfgs', 'adam' or an optimiser"):
        tb.opt(m, optimiser="newton")


def test_calculate_over_posterior_draws_is_vectorised() -> None:
    m, xv, _, mu = _regression()
    draws = tb.mcmc(m, n_samples=50, warmup=50, chains=2, seed=1, progress=False)
    pred = tb.calculate(mu, values=draws)
    assert pred.shape == (2, 50, 40)
    want = np.einsum("nd,csd->csn", xv, draws["beta"])
    np.testing.assert_allclose(pred, want, rtol=1e-12, atol=1e-12)


def test_calculate_takes_values_by_variable_name() -> None:
    mu = tb.normal(0.0, 1.0)
    sigma = tb.exponential(1.0)
    x = mu * 2.0 + sigma
    tb.model(mu=mu, sigma=sigma)  # names the variables, as R's and JS's doors do
    assert float(tb.calculate(x, values={"mu": 3.0, sigma: 0.5})) == 6.5
    label = sigma.node.label()  # a variable also answers to its label
    assert float(tb.calculate(x, values={"mu": 1.0, label: 1.0})) == 3.0
    with pytest.raises(ValueError, match=r"no variable named nu .*named: mu, sigma"):
        tb.calculate(x, values={"nu": 3.0})
