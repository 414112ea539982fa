"""Discrete likelihoods refuse data they cannot produce (issue 12): every door gets the check
from the runtime's distribution catalogue (``distributions.check_data``)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb


@pytest.mark.parametrize(("dist", "data", "words"), [
    (lambda: tb.poisson(3.0), [1.5, 2.0], "poisson data must be non-negative whole numbers"),
    (lambda: tb.poisson(3.0), [-1.0, 2.0], "got -1"),
    (lambda: tb.bernoulli(0.5), [0.0, 2.0], "bernoulli data must be 0 or 1, got 2"),
    (lambda: tb.binomial(3, 0.5), [1.0, 4.0], "from 0 to size, got 4"),
    (lambda: tb.negative_binomial(2.0, 0.5), [0.5, 1.0], "negative_binomial"),
    (lambda: tb.beta_binomial(3, 1.0, 1.0), [3.5, 1.0], "beta_binomial"),
    (lambda: tb.poisson(3.0), [np.nan, 1.0], "got nan"),
])
def test_impossible_data_is_refused_naming_the_target(dist, data, words):
    y = tb.as_data(np.array(data))
    with pytest.raises(ValueError, match="target") as info:
        tb.distribution(y, dist())
    assert words in str(info.value)
    assert y.node.distribution is None  # refused: nothing was assigned


def test_possible_data_is_accepted():
    tb.distribution(tb.as_data(np.array([0.0, 3.0, 7.0])), tb.poisson(3.0))
    tb.distribution(tb.as_data(np.array([0.0, 1.0])), tb.bernoulli(0.5))
    tb.distribution(tb.as_data(np.array([0.0, 3.0])), tb.binomial(3, 0.5))
    tb.distribution(tb.as_data(np.array([1.5, -2.0])), tb.normal(0.0, 1.0))  # continuous


def test_one_hot_and_counts():
    p = np.array([[0.5, 0.5]])
    with pytest.raises(ValueError, match="one-hot"):
        tb.distribution(tb.as_data(np.array([[1.0, 1.0], [0.0, 1.0]])),
                        tb.categorical(p, n_realisations=2))
    tb.distribution(tb.as_data(np.array([[1.0, 0.0], [0.0, 1.0]])),
                    tb.categorical(p, n_realisations=2))
    with pytest.raises(ValueError, match="summing to size"):
        tb.distribution(tb.as_data(np.array([[1.0, 1.0]])), tb.multinomial(3, p))


def test_size_that_depends_on_a_variable_is_not_checked_against():
    size = tb.variable(lower=0.0)
    tb.distribution(tb.as_data(np.array([5.0, 9.0])), tb.binomial(size, 0.5))
