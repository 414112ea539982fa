"""Tensor construction, dtype inference and promotion, host access, immutability."""

from __future__ import annotations

import array

import numpy as np
import pytest

import tensorbridge as tb


def test_identity_and_metadata(backend: str) -> None:
    a = tb.tensor([[1.0, 2.0, 3.0]], backend=backend)
    b = tb.tensor([[1.0, 2.0, 3.0]], backend=backend)
    assert a.id != b.id and a.data_id != b.data_id
    assert a.shape == (1, 3) and a.ndim == 2 and a.size == 3
    assert a.dtype is tb.float32 and a.backend.name == backend
    assert a.nbytes == 12


@pytest.mark.parametrize(
    ("data", "dtype"),
    [
        (1.5, tb.float32),
        (3, tb.int32),
        (2**40, tb.int64),
        (True, tb.bool_),
        ([1, 2, 3], tb.int32),
        ([1, 2.5], tb.float32),
        ([True, False], tb.bool_),
        ([[1, 2], [3, 2**33]], tb.int64),
        ([], tb.float32),
    ],
)
def test_dtype_inference_from_python(data: object, dtype: tb.DType) -> None:
    t = tb.tensor(data)
    assert t.dtype is dtype
    assert t.tolist() == data


@pytest.mark.parametrize("npdt", ["float32", "float64", "int32", "int64", "bool"])
def test_numpy_dtype_kept(npdt: str, backend: str) -> None:
    arr = np.arange(6).reshape(2, 3).astype(npdt)
    t = tb.tensor(arr, backend=backend)
    assert t.dtype.name == npdt
    np.testing.assert_array_equal(t.numpy(), arr)


def test_unsupported_numpy_dtype_names_it() -> None:
    with pytest.raises(TypeError, match="float16"):
        tb.tensor(np.zeros(3, np.float16))
    assert tb.tensor(np.zeros(3, np.float16), dtype="float32").dtype is tb.float32


def test_unknown_dtype_error_names_argument() -> None:
    with pytest.raises(TypeError, match=r"dtype: unknown dtype 'complex64'"):
        tb.zeros((2,), dtype="complex64")


def test_ragged_list_rejected() -> None:
    with pytest.raises(ValueError, match="ragged"):
        tb.tensor([[1, 2], [3]])


def test_buffer_protocol() -> None:
    t = tb.tensor(array.array("d", [1.0, 2.0, 3.0]))
    assert t.dtype is tb.float64 and t.tolist() == [1.0, 2.0, 3.0]
    m = memoryview(np.arange(6, dtype=np.int32).reshape(2, 3))
    t2 = tb.tensor(m)
    assert t2.shape == (2, 3) and t2.dtype is tb.int32


def test_writable_numpy_input_is_copied_readonly_is_shared() -> None:
    arr = np.ones(3, np.float32)
    t = tb.tensor(arr)
    arr[0] = 5.0
    assert t.numpy()[0] == 1.0  # the tensor did not see the caller's write
    ro = np.ones(3, np.float32)
    ro.flags.writeable = False
    shared = tb.tensor(ro)
    assert np.shares_memory(shared.numpy(), ro)


def test_numpy_view_is_readonly() -> None:
    t = tb.tensor([1.0, 2.0])
    with pytest.raises(ValueError):
        t.numpy()[0] = 3.0
    with pytest.raises(TypeError, match="immutable"):
        t[0] = 1.0


@pytest.mark.parametrize(
    ("x", "y", "want"),
    [
        (tb.float32, tb.float64, tb.float64),
        (tb.int32, tb.float32, tb.float32),
        (tb.int64, tb.int32, tb.int64),
        (tb.bool_, tb.bool_, tb.int32),  # arithmetic on bools computes in int32
        (tb.bool_, tb.int64, tb.int64),
    ],
)
def test_promotion_between_tensors(x: tb.DType, y: tb.DType, want: tb.DType,
                                   backend: str) -> None:
    a = tb.ones((2,), x, backend)
    b = tb.ones((2,), y, backend)
    assert (a + b).dtype is want
    assert (b * a).dtype is want


@pytest.mark.parametrize(
    ("dt", "scalar", "want"),
    [
        (tb.float32, 2.0, tb.float32),  # weak Python scalars never upcast
        (tb.float32, 2, tb.float32),
        (tb.int32, 2, tb.int32),
        (tb.int32, 2.5, tb.float32),
        (tb.int64, 2.5, tb.float32),
        (tb.bool_, 1, tb.int32),
        (tb.float64, 1.0, tb.float64),
    ],
)
def test_promotion_with_python_scalars(dt: tb.DType, scalar: object, want: tb.DType,
                                       backend: str) -> None:
    t = tb.ones((3,), dt, backend)
    assert (t * scalar).dtype is want
    assert (scalar + t).dtype is want


def test_zero_dim_float32_stays_float32(backend: str) -> None:
    s = tb.sum(tb.ones((3,), "float32", backend))
    assert s.shape == () and (s * 1.5 + 2.0).dtype is tb.float32


def test_true_division_and_comparisons(backend: str) -> None:
    i = tb.tensor([1, 2, 3], backend=backend)
    assert (i / 2).dtype is tb.float32
    assert (i // 2).tolist() == [0, 1, 1]
    assert (i > 1).dtype is tb.bool_ and (i > 1).tolist() == [False, True, True]
    assert (i == tb.tensor([1, 0, 3], backend=backend)).tolist() == [True, False, True]


def test_creation_functions(backend: str) -> None:
    assert tb.zeros((2, 3), backend=backend).tolist() == [[0.0] * 3] * 2
    assert tb.ones(2, "int32", backend).tolist() == [1, 1]
    assert tb.full((2,), 7, backend=backend).dtype is tb.int32
    assert tb.arange(5, backend=backend).tolist() == [0, 1, 2, 3, 4]
    assert tb.arange(0.0, 1.0, 0.25, backend=backend).dtype is tb.float32
    np.testing.assert_allclose(tb.linspace(0, 1, 5, backend=backend).numpy(),
                               np.linspace(0, 1, 5))
    np.testing.assert_array_equal(tb.eye(3, backend=backend).numpy(), np.eye(3))
    with pytest.raises(ValueError, match="negative"):
        tb.zeros((-1, 2))


def test_scalar_conversions_and_repr() -> None:
    t = tb.tensor(2.5)
    assert float(t) == 2.5 and t.item() == 2.5 and bool(tb.tensor(True))
    assert "shape=(), dtype=float32" in repr(t)
    with pytest.raises(ValueError, match="one element"):
        tb.tensor([1.0, 2.0]).item()


def test_methods_mirror_ops(backend: str) -> None:
    x = tb.tensor(np.arange(6.0).reshape(2, 3), backend=backend)
    assert x.T.shape == (3, 2)
    assert x.reshape(3, 2).shape == (3, 2)
    assert x.sum(axis=1).tolist() == [3.0, 12.0]
    assert x.max().item() == 5.0
    assert [r.tolist() for r in x] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert np.asarray(x).shape == (2, 3)


def test_reshape_shares_data_id(backend: str) -> None:
    x = tb.tensor(np.arange(6.0), backend=backend)
    y = x.reshape(2, 3)
    assert y.data_id == x.data_id and y.id != x.id


def test_kernel_table_lists_backends() -> None:
    table = tb.kernel_table()
    text = repr(table)
    assert "numpy" in text and "matmul" in text
    assert table.missing("numpy") == []
