"""`tb.function` on NumPy: a staged replay gives exactly the eager results, retraces per input
signature, and falls back to eager (with a warning) when a traced value is read."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorbridge as tb

from .test_ops_table import CASES


@pytest.mark.parametrize("case", CASES, ids=str)
def test_staged_op_table_matches_eager(case) -> None:
    args = [tb.tensor(a) if isinstance(a, np.ndarray) else a for a in case.args]
    staged = tb.function(case.fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # value-dependent cases run eagerly
        first = staged(*args)
        second = staged(*args)
    want = case.fn(*args)
    np.testing.assert_array_equal(first.numpy(), want.numpy())
    np.testing.assert_array_equal(second.numpy(), want.numpy())
    assert second.dtype is want.dtype and second.shape == want.shape


def test_staged_value_and_grad_replays_with_new_values() -> None:
    def loss(w, x):
        return tb.sum(tb.tanh(w @ x) ** 2)

    step = tb.function(tb.value_and_grad(loss))
    rng = np.random.default_rng(0)
    for _ in range(3):
        w, x = tb.tensor(rng.normal(size=(3, 4))), tb.tensor(rng.normal(size=4))
        v, g = step(w, x)
        v2, g2 = tb.value_and_grad(loss)(w, x)
        np.testing.assert_allclose(v.numpy(), v2.numpy(), rtol=1e-14)
        np.testing.assert_allclose(g.numpy(), g2.numpy(), rtol=1e-14)


def test_retrace_per_shape() -> None:
    calls = []

    def f(x):
        calls.append(x.shape)
        return x * 2.0

    sf = tb.function(f)
    sf(tb.ones((2,)))
    sf(tb.ones((2,)))
    sf(tb.ones((3,)))
    assert calls == [(2,), (3,)]  # traced once per shape, replayed otherwise


def test_value_dependent_control_flow_falls_back_to_eager() -> None:
    def f(x):
        if float(tb.sum(x)) > 0:  # reads a value: cannot be staged
            return x * 2.0
        return x * -1.0

    sf = tb.function(f)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        assert sf(tb.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    assert sf(tb.tensor([-1.0, -2.0])).tolist() == [1.0, 2.0]  # not a frozen branch


def test_random_draws_are_not_frozen() -> None:
    gen = tb.random.Generator(0)
    sf = tb.function(lambda x: x + gen.normal((2,)))
    with pytest.warns(RuntimeWarning, match="random"):
        a = sf(tb.zeros((2,))).tolist()
    b = sf(tb.zeros((2,))).tolist()
    assert a != b


def test_constants_and_python_scalars() -> None:
    c = tb.tensor([10.0, 20.0])
    sf = tb.function(lambda x, k: x * k + c)
    assert sf(tb.tensor([1.0, 2.0]), 3.0).tolist() == [13.0, 26.0]
    assert sf(tb.tensor([1.0, 2.0]), 4.0).tolist() == [14.0, 28.0]  # scalars are static


def test_staged_function_inside_grad_runs_eagerly() -> None:
    sf = tb.function(lambda x: tb.sum(x * x))
    assert tb.grad(sf)(tb.tensor([3.0])).tolist() == [6.0]
