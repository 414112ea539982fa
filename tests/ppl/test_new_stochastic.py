"""Issue 16, bugs: simulating a new stochastic array given posterior draws (greta's
``calculate(b, values = draws, nsim)``), the warning when ``nsim`` exceeds the draws, and the
argument checks greta makes of ``uniform`` and ``lkj_correlation``."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorbridge as tb


@pytest.fixture(scope="module")
def fitted():
    a = tb.normal(0, 1)
    tb.distribution(tb.as_data([0.5, 1.0, 0.8]), tb.normal(a, 1))
    draws = tb.mcmc(tb.model(a), n_samples=50, warmup=100, chains=2, seed=1, backend="numpy")
    return a, draws


def test_a_new_stochastic_array_is_simulated_given_each_draw(fitted) -> None:
    a, draws = fitted
    b = tb.normal(a, 1e-3)  # not in the model: a new stochastic array
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 10 <= 100 draws: picked without replacement, quietly
        sims = np.asarray(tb.simulate(b, values=draws, nsim=10, seed=2).numpy())
    assert sims.shape == (10,)
    a_draws = np.asarray(draws["a"]).ravel()
    # each simulation sits within a few sd (1e-3) of one posterior draw of a
    assert np.all(np.min(np.abs(sims[:, None] - a_draws[None, :]), axis=1) < 6e-3)
    # simulated with the draws' a in one pass: a and b together, b next to its own a
    sa, sb = tb.simulate([a, b], values=draws, nsim=20, seed=3)
    assert np.all(np.abs(np.asarray(sb.numpy()) - np.asarray(sa.numpy())) < 6e-3)


def test_nsim_above_the_number_of_draws_warns(fitted) -> None:
    a, draws = fitted
    b = tb.normal(a, 1.0)
    with pytest.warns(UserWarning, match=r"nsim: 250 is more than the 100 posterior draws"):
        sims = tb.simulate(b, values=draws, nsim=250, seed=1)
    assert tuple(sims.shape) == (250,)


def test_calculating_a_new_stochastic_array_from_draws_asks_for_nsim(fitted) -> None:
    a, draws = fitted
    b = tb.normal(a, 1.0)
    with pytest.raises(ValueError, match="give nsim"):
        tb.calculate(b, values=draws)


def test_uniform_bounds_must_be_finite() -> None:
    with pytest.raises(ValueError, match="uniform: min must be finite"):
        tb.uniform(-math.inf, math.inf)
    with pytest.raises(ValueError, match="uniform: max must be finite"):
        tb.uniform(0.0, math.inf)
    assert tb.uniform(-1.0, 2.0).shape == ()


def test_lkj_eta_is_one_number_and_dimension_one_whole_number() -> None:
    with pytest.raises(ValueError, match="lkj_correlation: eta must be a single number"):
        tb.lkj_correlation([3.0, 3.0])
    with pytest.raises(ValueError, match="lkj_correlation: eta must be a single number"):
        tb.lkj_correlation(np.array([3.0, 3.0]))
    with pytest.raises(ValueError, match="dimension"):
        tb.lkj_correlation(3.0, dimension=[3, 3])
    with pytest.raises(ValueError, match="dimension"):
        tb.lkj_correlation(3.0, dimension=2.5)
    # one number in any form is fine, a scalar lazy array too (greta: a scalar greta array)
    for eta in (3, 3.0, np.float64(3.0), np.array(3.0), [3.0], tb.gamma(2.0, 1.0)):
        assert tb.lkj_correlation(eta, dimension=3).shape == (3, 3)
