"""A Python program embedding R through rpy2, converting through the same "r" registries as
the R package: zero-copy views of R memory that keep R objects alive, NA apart from NaN,
R-shaped values both ways, R functions as callbacks obeying the main-thread rule."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.bridge import NA, NA_REAL, ForeignError, NA_character, NA_integer, is_na


def r_identical(rh, a, b) -> bool:
    return bool(rh.r("identical")(a, b)[0])


def test_numeric_vectors_are_zero_copy_views_of_r_memory(rh):
    v = rh.r("c(1.5, NA, NaN, Inf)")
    x = rh.from_r(v)
    assert x.dtype == np.float64 and not x.flags.writeable
    assert np.asarray(v.memoryview()).__array_interface__["data"][0] == x.__array_interface__[
        "data"
    ][0]
    assert is_na(x).tolist() == [False, True, False, False]
    assert np.isnan(x).tolist() == [False, True, True, False]


def test_matrices_keep_dims_and_column_major_order(rh):
    m = rh.from_r(rh.r("matrix(1:6, 2)"))
    assert m.shape == (2, 3) and m.dtype == np.int32 and m.flags.f_contiguous
    assert m[0, 2] == 5 and m[1, 0] == 2
    a = rh.from_r(rh.r("array(as.numeric(1:24), c(2, 3, 4))"))
    assert a.shape == (2, 3, 4) and a[1, 2, 3] == 24.0


def test_tensor_shares_r_memory_and_keeps_the_r_object_alive(rh):
    t = rh.as_tensor(rh.r("x <- runif(1e6); x"))
    expected = np.array(rh.from_r(rh.r("x")))  # a copy
    rh.r("rm(x)")
    for _ in range(3):
        rh.r("invisible(lapply(1:20, function(i) runif(1e5))); invisible(gc())")
        gc.collect()
    assert t.dtype == tb.float64 and t.shape == (1_000_000,)
    np.testing.assert_array_equal(t.numpy(), expected)
    assert float(tb.sum(t)) == pytest.approx(float(expected.sum()))


def test_na_of_every_type(rh):
    assert rh.from_r(rh.r("NA")) is NA
    assert rh.from_r(rh.r("NA_integer_")) is NA_integer
    assert rh.from_r(rh.r("NA_character_")) is NA_character
    na_real = rh.from_r(rh.r("NA_real_"))
    assert is_na(na_real) and np.isnan(na_real)
    nan = rh.from_r(rh.r("NaN"))
    assert np.isnan(nan) and not is_na(nan)
    ints = rh.from_r(rh.r("c(1L, NA, 3L)"))
    assert isinstance(ints, np.ma.MaskedArray) and ints.mask.tolist() == [False, True, False]
    lgl = rh.from_r(rh.r("c(TRUE, NA)"))
    assert lgl.dtype == bool and lgl.mask.tolist() == [False, True]
    assert rh.from_r(rh.r("c('a', NA)")) == ["a", NA_character]


def test_r_values_round_trip_through_python(rh):
    exprs = [
        "c(1.5, NA, NaN, -Inf)", "c(1L, NA)", "c(TRUE, NA, FALSE)", "c('\u00e9', NA, '')",
        "matrix(c(1, 2, 3, 4, 5, 6), 2)", "array(1:24, c(2, 3, 4))", "matrix(numeric(), 0, 3)",
        "numeric(0)", "character(0)", "integer(0)", "list()", "NULL", "2.5", "7L", "'x'",
        "list(a = 1, b = list(c = 'x', d = 1:3))", "list(1, 'a', NULL)",
        "factor(c('b', 'a', NA))", "factor(c('lo', 'hi'), levels = c('lo', 'hi'), ordered = TRUE)",
        "data.frame(x = c(1.5, NA), y = c('u', NA), f = factor(c('p', 'q')))",
        "data.frame(a = 1:3, row.names = c('r1', 'r2', 'r3'))", "as.raw(c(0, 255))",
        "setNames(list(1, 2), c('x', 'x'))",
    ]
    for code in exprs:
        original = rh.r(code)
        back = rh.to_r(rh.from_r(original))
        assert r_identical(rh, original, back), code


def test_python_values_to_r(rh):
    assert r_identical(rh, rh.to_r(tb.tensor([[1.0, 2.0], [3.0, 4.0]])),
                       rh.r("matrix(c(1, 3, 2, 4), 2)"))
    c_order = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert r_identical(rh, rh.to_r(c_order), rh.r("matrix(c(0, 2, 4, 1, 3, 5), 3)"))
    assert r_identical(rh, rh.to_r({"a": [1, 2], "b": NA_integer, "c": ["x", NA_character]}),
                       rh.r("list(a = 1:2, b = NA_integer_, c = c('x', NA))"))
    assert r_identical(rh, rh.to_r([True, NA]), rh.r("c(TRUE, NA)"))
    assert r_identical(rh, rh.to_r((1, "a")), rh.r("list(1L, 'a')"))
    assert r_identical(rh, rh.to_r(NA_REAL), rh.r("NA_real_"))
    assert r_identical(rh, rh.to_r(None), rh.r("NULL"))
    assert r_identical(rh, rh.to_r(np.ma.masked_array(np.array([1, 2], np.int32), [0, 1])),
                       rh.r("c(1L, NA)"))
    obj = rh.to_r(object())
    assert list(obj.rclass) == ["tb.object", "tb_object"]


def test_big_arrays_both_ways(rh):
    n = 10_000_000
    big = rh.r("runif(1e7)")
    t0 = time.perf_counter()
    x = rh.from_r(big)
    to_py = time.perf_counter() - t0
    assert x.shape == (n,)
    assert to_py < 0.05  # O(1): no copy of 80 MB
    arr = np.random.default_rng(0).random(n)
    v = rh.to_r(arr)
    assert float(rh.r("function(v) sum(v)")(v)[0]) == pytest.approx(arr.sum())


def test_r_function_called_from_8_threads_runs_on_the_main_thread(rh):
    from tensorbridge.bridge.r.testing import call_from_threads

    seen: set[int] = set()
    record = rh.to_r(lambda: seen.add(threading.get_ident()))
    f = rh.from_r(rh.r("function(rec) function(t, i) { rec(); t * 100000 + i }")(record))
    r = call_from_threads(f, 8, 1000)  # the main thread just blocks in join()
    assert r["ok"] == 8000 and r["errors"] == 0 and r["threads"] == 8
    assert seen == {threading.main_thread().ident}
    r = rh.run(call_from_threads, f, 8, 200)  # the same with the main thread pumping
    assert r["ok"] == 1600


def test_r_errors_become_foreign_errors_and_go_back_unchanged(rh):
    bad = rh.from_r(rh.r("function(x) stop('boom: ', x)"))
    with pytest.raises(ForeignError) as info:
        bad("q")
    err = info.value
    assert err.language == "r" and err.foreign_class == "simpleError"
    assert err.message == "boom: q"
    assert "stop" in " ".join(err.foreign_traceback)
    from tensorbridge.bridge.r.testing import call_in_thread

    with pytest.raises(ForeignError, match="boom: t"):
        call_in_thread(bad, "t")
    cond = rh.to_r(err)  # the very condition R raised
    assert str(rh.r("conditionMessage")(cond)[0]) == "boom: q"


def test_python_functions_are_callable_from_r(rh):
    double = rh.to_r(lambda x: x * 2)
    assert float(rh.r("function(f) f(21)")(double)[0]) == 42.0
    fails = rh.to_r(lambda: 1 / 0)
    cond = rh.r("function(f) f()")(fails)
    assert "ZeroDivisionError" in list(cond.rclass)
