"""Reproducible random numbers: Philox known answers, same seed same numbers, sane moments."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import tensorbridge as tb
from tensorbridge.runtime.random import _philox_numpy, _philox_python, philox4x32


def test_philox_known_answer_vectors() -> None:
    # Random123's published test vectors for philox4x32-10
    assert philox4x32((0, 0, 0, 0), (0, 0)) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    assert philox4x32((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2) == (
        0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)
    assert philox4x32((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
                      (0xA4093822, 0x299F31D0)) == (0xD16CFE09, 0x94FDCCEB, 0x5001E420,
                                                    0x24126EA1)


def test_numpy_and_pure_python_streams_agree() -> None:
    assert _philox_numpy((12, 34), 5, 64).tolist() == _philox_python((12, 34), 5, 64)


def test_same_seed_same_numbers_on_every_backend(backend: str) -> None:
    a = tb.random.Generator(42).normal((3, 4), backend=backend)
    b = tb.random.Generator(42).normal((3, 4), backend="numpy")
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c = tb.random.Generator(43).normal((3, 4))
    assert not np.allclose(b.numpy(), c.numpy())


def test_stream_advances_and_state_restores() -> None:
    g = tb.random.Generator(1)
    state = g.state
    x1 = g.uniform((5,)).numpy()
    x2 = g.uniform((5,)).numpy()
    assert not np.allclose(x1, x2)
    g.set_state(state)
    np.testing.assert_array_equal(g.uniform((5,)).numpy(), x1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_distributions_pass_ks(dtype: str) -> None:
    g = tb.random.Generator(7)
    n = 20000
    z = g.normal((n,), dtype=dtype).numpy()
    assert z.dtype == np.dtype(dtype)
    assert stats.kstest(z, "norm").pvalue > 1e-3
    u = g.uniform((n,), -1.0, 3.0, dtype=dtype).numpy()
    assert u.min() >= -1.0 and u.max() < 3.0
    assert stats.kstest(u, "uniform", args=(-1.0, 4.0)).pvalue > 1e-3


def test_truncated_normal_integers_bernoulli_permutation() -> None:
    g = tb.random.Generator(3)
    t = g.truncated_normal((5000,), 1.0, 2.0).numpy()
    assert t.min() >= -3.0 and t.max() <= 5.0
    i = g.integers(2, 6, (4000,)).numpy()
    assert set(np.unique(i)) == {2, 3, 4, 5}
    b = g.bernoulli(0.25, (10000,)).numpy()
    assert abs(b.mean() - 0.25) < 0.02
    p = g.permutation(10)
    assert sorted(p) == list(range(10))


def test_split_gives_independent_reproducible_streams() -> None:
    k1, k2 = tb.random.Generator(5).split(2)
    j1, _ = tb.random.Generator(5).split(2)
    np.testing.assert_array_equal(k1.normal((4,)).numpy(), j1.normal((4,)).numpy())
    assert not np.allclose(k1.normal((4,)).numpy(), k2.normal((4,)).numpy())


def test_bad_arguments_named() -> None:
    with pytest.raises(ValueError, match="seed"):
        tb.random.Generator(-1)
    with pytest.raises(ValueError, match="low < high"):
        tb.random.Generator(0).uniform((2,), 1.0, 1.0)
