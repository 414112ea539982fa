"""Arrays as descriptors: zero-copy views, column-major R matrices, dtype rules, NA and masks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorbridge as tb
import tensorbridge.bridge as br
from tensorbridge.bridge import INT_MIN, NA_REAL, ConversionError, from_foreign, to_foreign

R_STORES = {
    "bool": "bool", "int8": "int32", "int16": "int32", "int32": "int32", "uint8": "int32",
    "uint16": "int32", "uint32": "float64", "int64": "float64", "uint64": "float64",
    "float32": "float64", "float64": "float64",
}
DTYPES = list(R_STORES)


def shares(a, b) -> bool:
    return np.shares_memory(np.asarray(a), np.asarray(b))


def r_matrix_bytes(values_column_major, dtype="float64") -> bytearray:
    """Memory as R lays out a matrix: columns one after another."""
    return bytearray(np.asarray(values_column_major, dtype=dtype).tobytes())


# -- R: column-major in, column-major out ------------------------------------------------------
def test_r_matrix_arrives_as_a_zero_copy_fortran_view():
    # matrix(1:6, nrow = 2) in R: columns (1, 2), (3, 4), (5, 6)
    mem = r_matrix_bytes([1, 2, 3, 4, 5, 6])
    desc = br.Array(buffer=mem, dtype="float64", shape=(2, 3), order="F", readonly=True)
    m = from_foreign("r", desc)
    assert m.tolist() == [[1, 3, 5], [2, 4, 6]]  # m[i, j] == R's m[i + 1, j + 1]
    assert m.flags.f_contiguous and not m.flags.owndata and not m.flags.writeable
    assert shares(m, np.frombuffer(mem, dtype=np.uint8))
    # an R array with 3 dims, given as explicit strides
    mem3 = r_matrix_bytes(np.arange(24), "int32")
    a = from_foreign("r", br.Array(mem3, "int32", (2, 3, 4), strides=(4, 8, 24)))
    assert a[1, 2, 3] == 1 + 2 * 2 + 3 * 6 and shares(a, np.frombuffer(mem3, np.uint8))


def test_numpy_to_r_is_column_major_and_copies_only_when_needed():
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    d = to_foreign("r", f)
    assert d.order == "F" and d.strides == (8, 16) and d.dtype == "float64"
    assert shares(d.buffer, f)  # already column-major float64: no copy
    c = np.arange(6.0).reshape(2, 3)
    d = to_foreign("r", c)
    assert not shares(d.buffer, c)  # one NumPy copy into column-major order
    assert np.frombuffer(d.buffer, np.float64).tolist() == c.ravel(order="F").tolist()
    # JS is row-major: the C array is shared, the Fortran one copied
    assert shares(to_foreign("js", c).buffer, c) and not shares(to_foreign("js", f).buffer, f)


def test_readonly_and_writable_buffers():
    ro = np.frombuffer(bytes(16), dtype=np.float64)
    d = to_foreign("js", ro)
    assert d.readonly and shares(d.buffer, ro)
    back = from_foreign("js", d)
    assert not back.flags.writeable
    rw = from_foreign("js", br.Array(bytearray(16), "float64", (2,), readonly=False))
    rw[0] = 5.0  # a writable host buffer stays writable
    assert rw[0] == 5.0


def test_client_strides_offsets_and_negative_strides():
    mem = np.arange(10, dtype=np.int64)
    # every other element, backwards, starting at the last: [9, 7, 5, 3, 1]
    d = br.Array(mem, "int64", (5,), strides=(-16,), offset=9 * 8)
    assert from_foreign("js", d).tolist() == [9, 7, 5, 3, 1]
    with pytest.raises(ConversionError, match="does not fit its buffer"):
        from_foreign("js", br.Array(mem, "int64", (11,)))
    with pytest.raises(ConversionError, match="is not one of"):
        from_foreign("js", br.Array(mem, "complex128", (5,)))
    with pytest.raises(ConversionError, match="contiguous"):
        from_foreign("js", br.Array(mem[::2], "int64", (5,)))


def test_logical_is_four_bytes_in_r_and_back_to_bool():
    b = np.array([[True, False], [False, True]])
    d = to_foreign("r", b)
    assert d.dtype == "logical" and np.frombuffer(d.buffer, np.int32).tolist() == [1, 0, 0, 1]
    back = from_foreign("r", d)
    assert back.dtype == np.bool_ and back.tolist() == b.tolist()
    d_js = to_foreign("js", b)
    assert d_js.dtype == "bool" and shares(d_js.buffer, b)


# -- NA ----------------------------------------------------------------------------------------
def test_r_integer_na_arrives_masked_over_zero_copy_data():
    mem = r_matrix_bytes([1, INT_MIN, 3], "int32")
    a = from_foreign("r", br.Array(mem, "int32", (3,)))
    assert isinstance(a, np.ma.MaskedArray)
    assert a.mask.tolist() == [False, True, False]
    # reductions see the NA (R's na.rm = FALSE, issue 12): never the sum of the rest
    assert np.ma.is_masked(a.sum()) and np.ma.is_masked(np.sum(a)) and np.ma.is_masked(np.mean(a))
    assert a.compressed().sum() == 4
    assert shares(a.data, np.frombuffer(mem, np.uint8))
    back = to_foreign("r", a)  # back to R: the sentinel again
    assert np.frombuffer(back.buffer, np.int32).tolist() == [1, INT_MIN, 3]
    # a real INT_MIN from Python must not become NA: the array crosses as doubles
    real = to_foreign("r", np.array([INT_MIN, 5], dtype=np.int32))
    assert real.dtype == "float64" and np.frombuffer(real.buffer).tolist() == [INT_MIN, 5]
    plain = from_foreign("r", br.Array(r_matrix_bytes([1, 2], "int32"), "int32", (2,)))
    assert type(plain) is np.ndarray  # no NA: a plain array
    # JS has no sentinels: INT_MIN is just a number there
    assert type(from_foreign("js", br.Array(mem, "int32", (3,)))) is np.ndarray


def test_r_logical_na():
    mem = r_matrix_bytes([1, 0, INT_MIN], "int32")
    a = from_foreign("r", br.Array(mem, "logical", (3,)))
    assert a.dtype == np.bool_ and a.mask.tolist() == [False, False, True]
    assert a.data.tolist() == [True, False, False]
    assert np.frombuffer(to_foreign("r", a).buffer, np.int32).tolist() == [1, 0, INT_MIN]


def test_r_double_na_keeps_its_bits_and_differs_from_nan():
    values = np.array([1.0, NA_REAL, np.nan, np.inf])
    d = to_foreign("r", values)
    assert shares(d.buffer, values)
    back = from_foreign("r", d)
    assert back.view(np.uint64).tolist() == values.view(np.uint64).tolist()
    assert br.na_mask(back).tolist() == [False, True, False, False]
    assert np.isnan(back).tolist() == [False, True, True, False]


def test_masked_arrays_to_r_use_sentinels_and_to_js_use_masks():
    m = np.ma.MaskedArray([1.5, 2.5, 3.5], mask=[False, True, False])
    d = to_foreign("r", m)
    assert d.mask is None and br.na_mask(np.frombuffer(d.buffer, np.float64)).tolist() == [
        False, True, False
    ]
    assert m.data[1] == 2.5  # the caller's data is not overwritten
    d_js = to_foreign("js", m)
    assert d_js.mask is not None and d_js.mask.dtype == "bool"
    back = from_foreign("js", d_js)
    assert back.mask.tolist() == [False, True, False] and back.data.tolist() == [1.5, 2.5, 3.5]
    mi = np.ma.MaskedArray(np.array([7, 8], dtype=np.int64), mask=[True, False])
    back_r = from_foreign("r", to_foreign("r", mi))  # int64 -> R double; NA survives
    assert br.na_mask(back_r).tolist() == [True, False] and back_r[1] == 8.0


def test_tensor_with_na_is_refused():
    d = br.Array(r_matrix_bytes([1, INT_MIN], "int32"), "int32", (2,), tensor=True)
    with pytest.raises(ConversionError, match="tensors have no NA"):
        from_foreign("r", d)


# -- dtype rules -------------------------------------------------------------------------------
def test_r_int64_beyond_2_53_is_refused():
    ok = np.array([2**53, -(2**53)], dtype=np.int64)
    assert from_foreign("r", to_foreign("r", ok)).tolist() == [2.0**53, -(2.0**53)]
    for bad in (np.array([0, 2**53 + 1], dtype=np.int64), np.array([2**64 - 1], np.uint64),
                np.array([np.iinfo(np.int64).min], dtype=np.int64)):
        with pytest.raises(ConversionError, match="cannot store exactly"):
            to_foreign("r", bad)


def test_js_keeps_64_bit_integers():
    big = np.array([2**62, -(2**62)], dtype=np.int64)
    d = to_foreign("js", big)
    assert d.dtype == "int64" and from_foreign("js", d).tolist() == big.tolist()


def test_unsupported_dtypes_cross_as_handles():
    for arr in (np.array([1 + 2j]), np.array(["a", "b"]), np.array([object()]),
                np.array([1], dtype=np.float16).astype("datetime64[s]")):
        d = to_foreign("r", arr)
        assert isinstance(d, br.Ref) and from_foreign("r", d) is arr
        br.release(d.id)


def test_big_endian_arrays_are_made_native():
    be = np.arange(4, dtype=">i4")
    d = to_foreign("js", be)
    assert from_foreign("js", d).tolist() == [0, 1, 2, 3]


def test_tensors_share_memory_with_the_host_view():
    t = tb.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    d = to_foreign("js", t)
    assert d.tensor and d.dtype == "float32" and shares(d.buffer, t.numpy())
    r = to_foreign("r", t)
    assert r.tensor and r.dtype == "float64" and r.order == "F"


# -- property-based round trips ----------------------------------------------------------------
def arrays_any_layout(draw_dtypes):
    @st.composite
    def build(draw):
        dtype = draw(draw_dtypes)
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
        arr = draw(hnp.arrays(np.dtype(dtype), shape))
        layout = draw(st.sampled_from(["C", "F", "T", "step", "reverse"]))
        if layout == "F":
            arr = np.asfortranarray(arr)
        elif layout == "T":
            arr = arr.T
        elif layout == "step" and arr.ndim:
            arr = np.concatenate([arr, arr], axis=0)[::2]  # non-contiguous
        elif layout == "reverse" and arr.ndim:
            arr = arr[::-1]  # negative strides
        return arr

    return build()


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes and values; floats of one dtype must match bit for bit (NaN payloads)."""
    if a.shape != b.shape:
        return False
    if a.dtype == b.dtype:
        return a.tobytes() == b.tobytes()  # tobytes() is C order for any layout
    return np.array_equal(a.astype(b.dtype), b, equal_nan=b.dtype.kind == "f")


@settings(max_examples=200, deadline=None)
@given(arrays_any_layout(st.sampled_from(DTYPES)))
def test_round_trip_js_any_dtype_and_layout(arr):
    d = to_foreign("js", arr)
    assert d.dtype == arr.dtype.name and d.order == "C"
    back = from_foreign("js", d)
    assert back.dtype == arr.dtype and same_values(arr, back)
    if arr.flags.c_contiguous and arr.size:
        assert shares(d.buffer, arr)  # zero-copy whenever the layout allows


@settings(max_examples=200, deadline=None)
@given(arrays_any_layout(st.sampled_from(DTYPES)))
def test_round_trip_r_any_dtype_and_layout(arr):
    try:
        d = to_foreign("r", arr)
    except ConversionError:
        assert arr.dtype.name in ("int64", "uint64")
        assert arr.size and (int(arr.max()) > 2**53 or int(arr.min()) < -(2**53))
        return
    expected = {"bool": "logical"}.get(arr.dtype.name, R_STORES[arr.dtype.name])
    if arr.dtype.name == "int32" and (arr == INT_MIN).any():
        expected = "float64"  # INT_MIN is NA in R: a real INT_MIN crosses as a double
    assert d.dtype == expected and d.order == "F"
    back = from_foreign("r", d)
    assert type(back) is np.ndarray and back.shape == arr.shape
    assert same_values(arr, back)
    if arr.dtype.name == "float64" and arr.flags.f_contiguous and arr.size:
        assert shares(d.buffer, arr)


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=4),
                  elements=st.floats(allow_nan=True) | st.just(NA_REAL)))
def test_nan_and_na_bits_survive_both_hosts(arr):
    for lang in ("r", "js"):
        back = from_foreign(lang, to_foreign(lang, arr))
        np.testing.assert_array_equal(back.view(np.uint64), arr.view(np.uint64))
        np.testing.assert_array_equal(br.na_mask(back), br.na_mask(arr))


def test_empty_and_zero_d():
    for arr in (np.zeros((0,)), np.zeros((3, 0, 2), dtype=np.int32), np.array(5.0),
                np.array(True)):
        for lang in ("r", "js"):
            back = from_foreign(lang, to_foreign(lang, arr))
            assert back.shape == arr.shape and np.array_equal(back, arr)


@settings(max_examples=60, deadline=None)
@given(arrays_any_layout(st.sampled_from(["bool", "int32", "int64", "float32", "float64"])))
def test_tensor_round_trips(arr):
    t = tb.tensor(np.ascontiguousarray(arr))
    for lang in ("js", "r"):
        try:
            back = from_foreign(lang, to_foreign(lang, t))
        except ConversionError:
            assert lang == "r" and arr.dtype == np.int64  # beyond 2**53
            continue
        assert isinstance(back, tb.Tensor) and back.shape == t.shape
        expected = t.numpy() if lang == "js" else t.numpy().astype(back.numpy().dtype)
        assert same_values(expected, back.numpy())


def test_zero_d_masked_values():
    for lang in ("r", "js"):
        for a in (np.ma.MaskedArray(np.array(3, np.int32), mask=True),
                  np.ma.MaskedArray(np.array(True), mask=True)):
            back = from_foreign(lang, to_foreign(lang, a))
            assert isinstance(back, np.ma.MaskedArray) and back.shape == () and back.mask
        unmasked = from_foreign(lang, to_foreign(lang, np.ma.MaskedArray(np.array(2.0))))
        assert type(unmasked) is np.ndarray and unmasked == 2.0
