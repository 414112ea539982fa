"""Bad input gets errors that name the argument, the shapes or dtypes, and what was expected."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb


def test_broadcast_mismatch_names_both_shapes() -> None:
    with pytest.raises(tb.ShapeError, match=r"add: shapes x\[2, 3\] and y\[4\] cannot be"):
        tb.ones((2, 3)) + tb.ones((4,))


def test_matmul_inner_dimension() -> None:
    with pytest.raises(tb.ShapeError, match=r"inner dimensions differ.*\[2, 3\].*\[4, 5\]"):
        tb.ones((2, 3)) @ tb.ones((4, 5))


def test_reshape_size_mismatch() -> None:
    with pytest.raises(tb.ShapeError, match=r"shape \[2, 3\] \(6 elements\) into shape \[4\]"):
        tb.ones((2, 3)).reshape(4)


def test_axis_out_of_range() -> None:
    with pytest.raises(ValueError, match="sum: axis 2 is out of range"):
        tb.sum(tb.ones((2, 3)), axis=2)


def test_mixing_backends_requires_transfer() -> None:
    pytest.importorskip("tensorflow")
    a = tb.ones((2,), backend="numpy")
    b = tb.ones((2,), backend="tensorflow")
    with pytest.raises(tb.BackendMismatchError, match=r"'numpy' and y on 'tensorflow'.*\.to\("):
        a + b
    assert (a + b.to("numpy")).tolist() == [2.0, 2.0]


def test_unknown_backend_lists_registered() -> None:
    with pytest.raises(ValueError, match="unknown backend 'jax'; registered: numpy"):
        tb.tensor([1.0], backend="jax")


def test_missing_kernel_names_backend_and_kernel() -> None:
    class Tiny(tb.Backend):
        name = "tiny-test"

    tb.register_backend("tiny-test", Tiny)
    assert tb.get_backend("tiny-test").name == "tiny-test"
    with pytest.raises(tb.MissingKernelError, match="backend 'tiny-test' has no kernel 'fill'"):
        tb.zeros((2,), backend="tiny-test")


def test_cholesky_needs_square() -> None:
    with pytest.raises(tb.ShapeError, match=r"square matrices \[\.\.\., n, n\], got \[2, 3\]"):
        tb.cholesky(tb.ones((2, 3)))


def test_index_errors_name_shape() -> None:
    with pytest.raises(IndexError, match=r"tensor shape \[3\]"):
        tb.ones((3,))[5]
    with pytest.raises(TypeError, match="unsupported index element"):
        tb.ones((3,))["a"]


def test_bad_data_type_named() -> None:
    with pytest.raises(TypeError, match="data: cannot make a tensor from object"):
        tb.tensor(object())
    with pytest.raises(TypeError, match="element 'a'"):
        tb.tensor([1, "a"])


def test_failed_op_leaves_state_intact() -> None:
    import gc

    gc.collect()
    before = tb.memory("numpy")["num_tensors"]
    x = tb.ones((2, 3))
    with pytest.raises(tb.ShapeError):
        x @ tb.ones((2, 3))
    with pytest.raises(tb.ShapeError):
        tb.grad(lambda v: v @ tb.ones((2, 3)))(x)
    del x
    gc.collect()
    assert tb.memory("numpy")["num_tensors"] == before
    np.testing.assert_array_equal(tb.ones((2,)).numpy(), [1.0, 1.0])
