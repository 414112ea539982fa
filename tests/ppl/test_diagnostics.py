"""R-hat and ESS against processes whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from tensorbridge.runtime.ppl import ess_bulk, ess_tail, rhat


def _ar1(phi: float, chains: int = 4, n: int = 4000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros((chains, n))
    e = rng.normal(size=(chains, n))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


@pytest.mark.parametrize("phi", [0.0, 0.5, -0.5, 0.9])
def test_ess_matches_ar1_theory(phi: float) -> None:
    x = _ar1(phi)
    want = x.size * (1 - phi) / (1 + phi)
    assert ess_bulk(x) == pytest.approx(want, rel=0.15)
    assert ess_tail(x) > 0.1 * min(want, x.size)


def test_rhat_detects_disagreeing_chains() -> None:
    x = _ar1(0.3)
    assert rhat(x) < 1.01
    shifted = x.copy()
    shifted[0] += 2.0
    assert rhat(shifted) > 1.1
    scaled = x.copy()
    scaled[1] *= 4.0  # same location, different spread: caught by the folded R-hat
    assert rhat(scaled) > 1.05


def test_constant_and_short_inputs() -> None:
    assert np.isnan(ess_bulk(np.ones((2, 100))))
    assert np.isnan(rhat(np.ones((2, 2))[:, :1]))
