"""R's integer and logical NA in Python: reductions over a missing value are missing (issue 12)."""

from __future__ import annotations

import numpy as np

from tensorbridge.bridge import descriptors as br
from tensorbridge.bridge.na import INT_MIN, na_mask
from tensorbridge.bridge.na_arrays import NAArray
from tensorbridge.bridge.registry import foreign_to_py, py_to_foreign


def _from_r(values, dtype="int32", shape=None):
    mem = np.asarray(values, dtype=np.int32).tobytes(order="F")
    shape = shape or (len(values),)
    return foreign_to_py["r"].convert(br.Array(memoryview(mem), dtype, shape, order="F"))


def test_integer_na_reductions_are_na():
    a = _from_r([1, INT_MIN, 3])
    assert isinstance(a, NAArray)
    for f in (np.sum, np.prod, np.mean, np.min, np.max, np.std, np.var):
        assert np.ma.is_masked(f(a)), f.__name__
    assert np.sum(a.compressed()) == 4
    assert np.cumsum(a).mask.tolist() == [False, True, True]


def test_reductions_along_an_axis_are_na_only_where_na_was_reduced():
    m = _from_r([1, INT_MIN, 3, 4], shape=(2, 2))  # R's matrix(c(1L, NA, 3L, 4L), 2)
    cols = np.sum(m, axis=0)
    assert cols.mask.tolist() == [True, False] and int(cols[1]) == 7
    rows = np.sum(m, axis=1, keepdims=True)
    assert rows.shape == (2, 1) and rows.mask.ravel().tolist() == [False, True]


def test_no_na_gives_plain_values():
    a = NAArray(np.array([1, 2, 3], dtype=np.int32), mask=[False, False, False])
    assert np.sum(a) == 6 and not np.ma.is_masked(np.sum(a))


def test_logical_na_is_three_valued():
    t_na = _from_r([1, INT_MIN], dtype="logical")
    f_na = _from_r([0, INT_MIN], dtype="logical")
    assert t_na.dtype == np.bool_ and isinstance(t_na, NAArray)
    assert bool(np.any(t_na)) is True            # any(c(TRUE, NA)) is TRUE
    assert np.ma.is_masked(np.any(f_na))          # any(c(FALSE, NA)) is NA
    assert bool(np.all(f_na)) is False            # all(c(FALSE, NA)) is FALSE
    assert np.ma.is_masked(np.all(t_na))          # all(c(TRUE, NA)) is NA
    assert np.ma.is_masked(np.sum(t_na))


def test_arithmetic_keeps_the_mask_and_crosses_back_as_na():
    a = _from_r([1, INT_MIN, 3])
    b = a + 1
    assert isinstance(b, NAArray) and b.mask.tolist() == [False, True, False]
    d = py_to_foreign["r"].convert(b)
    if d.dtype == "int32":
        assert np.frombuffer(d.buffer, np.int32).tolist() == [2, INT_MIN, 4]
    else:  # NumPy 2's numpy.ma promotes to int64, which R stores as doubles (NA: NA_real_)
        values = np.frombuffer(d.buffer, np.float64)
        assert d.dtype == "float64" and values[[0, 2]].tolist() == [2.0, 4.0]
        assert na_mask(values).tolist() == [False, True, False]
    s = py_to_foreign["r"].convert(np.sum(a))  # a masked 0-d result: NA in R
    assert s.dtype == "float64" and np.isnan(np.frombuffer(s.buffer, np.float64)[0])
