"""cumprod, outer, kron, repeat and tile (composites): values against NumPy and derivatives
against finite differences, on every backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorbridge as tb

from .test_ops_table import r


def _np_cumprod_rev(x: np.ndarray, axis: int) -> np.ndarray:
    return np.flip(np.cumprod(np.flip(x, axis), axis), axis)


def _np_segment_sum(x: np.ndarray, ids: list[int], n: int) -> np.ndarray:
    out = np.zeros((n, *x.shape[1:]))
    np.add.at(out, ids, x)
    return out


CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], list[np.ndarray]]] = [
    ("cumprod", lambda x: tb.cumprod(x, 1), lambda x: np.cumprod(x, 1), [r(2, 4)]),
    ("cumprod_reverse", lambda x: tb.cumprod(x, 0, reverse=True),
     lambda x: _np_cumprod_rev(x, 0), [r(4, 2)]),
    # a zero entry: the gradient of later products is still exact
    ("cumprod_zero", lambda x: tb.cumprod(x, 0), lambda x: np.cumprod(x, 0),
     [np.array([1.5, 0.0, -2.0, 0.5])]),
    ("outer", tb.outer, np.outer, [r(3), r(2, 2)]),
    ("kron", tb.kron, np.kron, [r(2, 3), r(3, 2, seed=1)]),
    ("kron_ranks", tb.kron, np.kron, [r(3), r(2, 2, seed=2)]),
    ("repeat", lambda x: tb.repeat(x, 2, axis=1), lambda x: np.repeat(x, 2, 1), [r(2, 3)]),
    ("repeat_counts", lambda x: tb.repeat(x, [1, 0, 3], axis=0),
     lambda x: np.repeat(x, [1, 0, 3], 0), [r(3, 2)]),
    ("repeat_flat", lambda x: tb.repeat(x, 2), lambda x: np.repeat(x, 2), [r(2, 2)]),
    ("tile", lambda x: tb.tile(x, (2, 3)), lambda x: np.tile(x, (2, 3)), [r(2, 2)]),
    ("tile_ranks", lambda x: tb.tile(x, (2, 1, 2)), lambda x: np.tile(x, (2, 1, 2)), [r(3)]),
    ("segment_sum", lambda x: tb.segment_sum(x, [2, 0, 2, 1, 0]),
     lambda x: _np_segment_sum(x, [2, 0, 2, 1, 0], 3), [r(5, 2)]),
    ("segment_sum_empty_segment", lambda x: tb.segment_sum(x, [0, 3, 0], num_segments=5),
     lambda x: _np_segment_sum(x, [0, 3, 0], 5), [r(3)]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_values_match_numpy(case: Any, backend: str) -> None:
    _, fn, ref, arrays = case
    out = fn(*(tb.tensor(a, backend=backend) for a in arrays))
    want = ref(*arrays)
    assert out.shape == want.shape
    assert out.dtype is tb.float64
    # a few products and copies: a few ulps
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-14, atol=0.0)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_derivatives_match_finite_differences(case: Any, backend: str) -> None:
    _, fn, _, arrays = case
    tb.check_grads(fn, [tb.tensor(a, backend=backend) for a in arrays], order=2,
                   modes=("fwd", "rev"))


def test_bad_arguments_are_named() -> None:
    x = tb.tensor(r(2, 3))
    with pytest.raises(ValueError, match="repeat: repeats has 2 counts"):
        tb.repeat(x, [1, 2], axis=1)
    with pytest.raises(ValueError, match="repeat: repeats must be a non-negative"):
        tb.repeat(x, -1)
    with pytest.raises(TypeError, match="tile: reps must be a non-negative integer"):
        tb.tile(x, (1.5, 2))
    with pytest.raises(ValueError, match="cumprod: x needs a rank"):
        tb.cumprod(tb.tensor(2.0))
    with pytest.raises(ValueError, match="segment_sum: segment_ids has 1 entries; data has 2"):
        tb.segment_sum(x, [0])
    with pytest.raises(ValueError, match="segment id 3 is not below num_segments = 2"):
        tb.segment_sum(x, [0, 3], num_segments=2)


def test_on_lazy_arrays() -> None:
    """The composites build lazy arrays like any op (what the R and JS doors call)."""
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    a = tb.as_data(x)
    assert np.allclose(tb.calculate(tb.cumprod(a, 1)).numpy(), np.cumprod(x, 1))
    assert np.allclose(tb.calculate(tb.kron(a, a)).numpy(), np.kron(x, x))


def test_staged_and_batched_like_eager() -> None:
    """tb.function (staging) and vmap see the composites' ops: same values as eager."""
    def f(x: Any) -> Any:
        return (tb.sum(tb.cumprod(x, 0)) + tb.sum(tb.kron(x, x))
                + tb.sum(tb.segment_sum(x, [1, 0, 1])) + tb.sum(tb.tile(x, (2,)))
                + tb.sum(tb.repeat(x, [1, 2, 0])) + tb.sum(tb.outer(x, x)))

    x = tb.tensor(np.array([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(tb.function(f)(x).numpy(), f(x).numpy(), rtol=1e-14)
    xs = np.arange(6.0).reshape(2, 3) + 1.0
    np.testing.assert_allclose(tb.vmap(lambda x: tb.cumprod(x, 0))(tb.tensor(xs)).numpy(),
                               np.cumprod(xs, 1), rtol=1e-14)
