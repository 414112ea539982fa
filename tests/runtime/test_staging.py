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


def test_ops_that_read_index_values_are_not_frozen() -> None:
    # integer-array indexing (take, getitem, gather) reads the indices inside the op; a staged
    # recording would replay the first call's indices for every later call
    def f(x, idx):
        return tb.sum(tb.take(x, idx, axis=0) * 2.0) + tb.sum(x[idx])

    x = tb.tensor([1.0, 10.0, 100.0])
    sf = tb.function(f)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        assert sf(x, tb.tensor([0, 1], dtype="int32")).item() == 33.0
    assert sf(x, tb.tensor([2, 2], dtype="int32")).item() == 600.0
    assert sf(x, tb.tensor([1, 0], dtype="int32")).item() == 33.0


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


def _program(staged, *args):
    from tensorbridge.runtime.staging import StagedFunction, _Program

    sf = next(c for c in staged.__closure__ or () for c in [c.cell_contents]
              if isinstance(c, dict))
    (fn,) = sf.values()
    assert isinstance(fn, StagedFunction)
    (prog,) = [p for p in fn.cache.values() if isinstance(p, _Program)]
    return prog


def test_peephole_drops_neutral_operations() -> None:
    def f(x):
        # + 0, * 1, - 0, / 1 and a where on an all-true constant mask are copies
        mask = tb.tensor(np.ones(3, dtype=bool))
        y = ((x + 0.0) * 1.0 - 0.0) / 1.0
        return tb.sum(tb.where(mask, y, 5.0) * tb.ones((3,)) + tb.zeros((3,)))

    staged = tb.function(f)
    x = tb.tensor(np.array([1.0, -2.0, 3.5]))
    staged(x)
    got = staged(x)
    assert got.numpy() == f(x).numpy() == 2.5
    prog = _program(staged, x)
    assert [k.__name__ for k, *_ in prog.steps] == ["kernel"]  # only the sum is left


def test_peephole_keeps_broadcasting_and_dtype_changes() -> None:
    def f(x):
        return x + tb.zeros((2, 3)), (x * 1.0) * tb.ones((2, 1))

    staged = tb.function(f)
    x = tb.tensor(np.array([1.0, 2.0, 3.0]))
    staged(x)
    a, b = staged(x)
    assert a.shape == (2, 3) and b.shape == (2, 3)  # the broadcasts are real operations
    np.testing.assert_array_equal(a.numpy(), np.broadcast_to([1.0, 2.0, 3.0], (2, 3)))


def test_vmapped_matrix_vector_products_run_as_one_matrix_product() -> None:
    rng = np.random.default_rng(1)
    xm = tb.tensor(rng.normal(size=(50, 7)))

    def f(b):
        z = xm @ b  # per example: [50, 7] @ [7]
        return tb.sum(tb.tanh(z))

    vg = tb.function(tb.vmap(tb.value_and_grad(f)))
    beta = tb.tensor(rng.normal(size=(4, 7)))
    vg(beta)
    v, g = vg(beta)
    v2, g2 = tb.vmap(tb.value_and_grad(f))(beta)
    np.testing.assert_allclose(v.numpy(), v2.numpy(), rtol=1e-13)
    np.testing.assert_allclose(g.numpy(), g2.numpy(), rtol=1e-13)
    names = [k.__name__ for k, *_ in _program(vg, beta).steps]
    assert "const_left" in names and "const_right" in names and "_matmul" not in names


def test_gradient_pieces_assembled_by_one_scatter() -> None:
    def f(x):
        a, b, c = x[0], x[1:3], x[3:]
        return tb.sum(tb.exp(a)) + tb.sum(b * b) + tb.sum(tb.sin(c))

    vg = tb.function(tb.value_and_grad(f))
    x = tb.tensor(np.linspace(-1.0, 1.0, 6))
    vg(x)
    _, g = vg(x)
    _, g2 = tb.value_and_grad(f)(x)
    np.testing.assert_allclose(g.numpy(), g2.numpy(), rtol=1e-15)
    names = [k.__name__ for k, *_ in _program(vg, x).steps]
    assert names.count("_scatter_sum") == 1 and "_scatter_add" not in names


def test_small_steps_get_full_shape_constants() -> None:
    # a 0-d NumPy operand is the slow one for small arrays: constants are stored broadcast
    def f(x, y):
        return tb.maximum(x * 0.5 - 1.0, 0.0), y * 0.5

    staged = tb.function(f)
    x = tb.tensor(np.arange(12.0).reshape(4, 3))
    y = tb.tensor(np.arange(2000.0))  # large: the scalar stays a scalar
    staged(x, y)
    a, b = staged(x, y)
    want_a, want_b = f(x, y)
    np.testing.assert_array_equal(a.numpy(), want_a.numpy())
    np.testing.assert_array_equal(b.numpy(), want_b.numpy())
    shapes = sorted(tuple(np.shape(v)) for _, v in _program(staged, x, y).consts)
    assert shapes == [(), (4, 3), (4, 3), (4, 3)]


def test_products_by_signs_fold_into_one_constant() -> None:
    signs = tb.tensor(np.array([1.0, -1.0, -1.0, 1.0]))
    scale = tb.tensor(np.array([0.5, 3.0, -2.0, 7.0]))

    def f(x):
        return tb.exp(x) * signs * scale

    staged = tb.function(f)
    x = tb.tensor(np.linspace(-2.0, 2.0, 3 * 4).reshape(3, 4))
    staged(x)
    np.testing.assert_array_equal(staged(x).numpy(), f(x).numpy())  # bit for bit
    names = [k.__name__ for k, *_ in _program(staged, x).steps]
    assert names == ["exp", "multiply"]
