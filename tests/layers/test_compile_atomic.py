"""A compile that fails leaves the model usable with its previous configuration (issue 12)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb


def _model() -> tb.layers.Sequential:
    return tb.layers.Sequential([tb.layers.Dense(1)], input_shape=(2,))


def test_failed_compile_keeps_the_previous_configuration():
    m = _model()
    x = np.random.default_rng(0).normal(size=(8, 2)).astype("float32")
    y = np.ones((8, 1), dtype="float32")
    m.compile(optimizer="sgd", loss="mse")
    before = m.evaluate(x, y, verbose=0)
    with pytest.raises(ValueError, match="nonsense"):
        m.compile(optimizer="sgd", loss="nonsense")
    with pytest.raises(ValueError, match="nonsense_opt"):
        m.compile(optimizer="nonsense_opt", loss="mse")
    assert m.evaluate(x, y, verbose=0) == before
    m.fit(x, y, epochs=1, verbose=0)


def test_unknown_loss_is_reported_by_compile_of_an_unbuilt_model():
    m = tb.layers.Sequential([tb.layers.Dense(1)])
    with pytest.raises(ValueError, match="nonsense"):
        m.compile(optimizer="sgd", loss="nonsense")
    assert not m.compiled
