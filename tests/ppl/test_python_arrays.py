"""The pure-Python array shim (what the samplers use without NumPy) against NumPy itself: every
operator and function on random inputs, broadcasting, inf/nan, booleans, indexing, FFTs."""

from __future__ import annotations

import itertools
import math
import operator
import warnings
import zlib

import numpy as np
import pytest

from tensorbridge.runtime.backends import python_arrays as pa

SHAPES = [(), (3,), (2, 3), (2, 1), (1, 3), (4, 2, 3)]
SPECIAL = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e300, -1e-300]


def _rand(shape, rng, special=True, dtype=np.float64):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype == np.int64:
        return rng.integers(-5, 6, size=shape)
    x = rng.normal(size=shape) * 3.0
    if special and x.size:
        flat = x.reshape(-1)
        for i in rng.choice(flat.size, size=min(2, flat.size), replace=False):
            flat[i] = SPECIAL[rng.integers(len(SPECIAL))]
    return x


def _pure(x):
    """The same values as a pure array (NumPy scalars become Python scalars)."""
    if isinstance(x, np.ndarray):
        return pa.asarray(x.tolist())
    return x.item() if isinstance(x, np.generic) else x


def check(got, want, rtol=1e-12, atol=0.0):
    """``got`` (pure) equals ``want`` (NumPy): type of result, shape, dtype kind, values."""
    if isinstance(want, np.ndarray) and want.ndim > 0:
        assert isinstance(got, pa.ndarray), (type(got), want)
        assert got.shape == want.shape, (got.shape, want.shape)
        assert got.dtype.kind == want.dtype.kind, (got.dtype, want.dtype)
        g = np.asarray(got.tolist(), dtype=want.dtype).reshape(want.shape)
    else:
        assert not isinstance(got, pa.ndarray) or got.shape == (), got
        g = np.asarray(got.item() if isinstance(got, pa.ndarray) else got)
        want = np.asarray(want)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want)


ARITH = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
         operator.mod, operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
         operator.ne]


@pytest.mark.parametrize("op", ARITH, ids=lambda f: f.__name__)
@pytest.mark.parametrize("sa,sb", list(itertools.product(SHAPES, SHAPES[:4])))
def test_binary_operators_broadcast_with_inf_nan(op, sa, sb):
    rng = np.random.default_rng(zlib.crc32(repr((op.__name__, sa, sb)).encode()))
    a, b = _rand(sa, rng), _rand(sb, rng)
    try:
        np.broadcast_shapes(sa, sb)
    except ValueError:
        with pytest.raises(ValueError):
            op(_pure(a), _pure(b))
        return
    with np.errstate(all="ignore"):
        want = op(a, b)
    check(op(_pure(a), _pure(b)), want)


@pytest.mark.parametrize("op", [*ARITH, operator.pow], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.float64])
def test_scalars_on_both_sides_and_dtypes(op, dtype):
    rng = np.random.default_rng(1)
    a = _rand((2, 3), rng, special=False, dtype=dtype)
    if op is operator.pow:
        a = np.abs(a).astype(dtype) + (1 if dtype != np.bool_ else 0)
    for s in (2, 2.5, True):
        if dtype == np.bool_ and op in (operator.sub,) and isinstance(s, bool):
            continue  # NumPy refuses boolean subtraction
        with np.errstate(all="ignore"):
            want_l, want_r = op(a, s), op(s, a)
        check(op(_pure(a), s), want_l)
        if op is not operator.pow:
            check(op(s, _pure(a)), want_r)


def test_division_by_zero_overflow_and_int_semantics():
    a = np.array([1.0, -1.0, 0.0, np.nan, 3.0])
    b = np.array([0.0, 0.0, 0.0, 0.0, -0.0])
    with np.errstate(all="ignore"):
        check(_pure(a) / _pure(b), a / b)
        check(_pure(a) // _pure(b), a // b)
        check(_pure(np.array([1e300])) * 1e300, np.array([1e300]) * 1e300)
        check(pa.asarray([2.0, -2.0]) ** 2000.0, np.array([2.0, -2.0]) ** 2000.0)
        check(pa.asarray([-8.0]) ** 0.5, np.array([-8.0]) ** 0.5)
    i = np.array([7, -7, 3])
    check(_pure(i) // 2, i // 2)
    check(_pure(i) % 3, i % 3)
    check(_pure(i) / 2, i / 2)


@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor])
def test_bitwise_on_bools_and_ints(op):
    rng = np.random.default_rng(2)
    a, b = _rand((2, 3), rng, dtype=np.bool_), _rand((3,), rng, dtype=np.bool_)
    check(op(_pure(a), _pure(b)), op(a, b))
    check(op(_pure(a), True), op(a, True))
    check(op(False, _pure(a)), op(False, a))
    i, j = _rand((4,), rng, dtype=np.int64), _rand((4,), rng, dtype=np.int64)
    check(op(_pure(i), _pure(j)), op(i, j))
    with pytest.raises(TypeError):
        op(pa.asarray([1.5]), pa.asarray([2.5]))


def test_unary_operators():
    rng = np.random.default_rng(3)
    x = _rand((2, 3), rng)
    check(-_pure(x), -x)
    check(abs(_pure(x)), np.abs(x))
    m = _rand((5,), rng, dtype=np.bool_)
    check(~_pure(m), ~m)
    i = _rand((5,), rng, dtype=np.int64)
    check(~_pure(i), ~i)
    check(-_pure(i), -i)
    with pytest.raises(TypeError):
        -_pure(m)
    with pytest.raises(TypeError):
        ~pa.asarray([1.5])


UNARY = ["exp", "log", "sqrt", "log1p", "expm1", "abs", "isfinite", "isnan", "isinf",
         "square", "floor", "ceil"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_functions_arrays_and_scalars(name):
    x = np.array([-1000.0, -3.0, -1.0, -0.5, -0.0, 0.0, 1e-300, 0.5, 2.0, 709.0, 710.0, 1e308,
                  np.inf, -np.inf, np.nan])
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
        check(getattr(pa, name)(_pure(x)), want)
        for v in (-1.0, 0.0, 2.0, 800.0, np.inf, np.nan):
            got = getattr(pa, name)(float(v))
            assert not isinstance(got, pa.ndarray)
            check(got, getattr(np, name)(v))


@pytest.mark.parametrize("name", ["minimum", "maximum", "logaddexp"])
def test_binary_functions_nan_inf(name):
    vals = [-np.inf, -1.0, 0.0, 2.0, np.inf, np.nan]
    a = np.array([v for v in vals for _ in vals])
    b = np.array([w for _ in vals for w in vals])
    with np.errstate(all="ignore"):
        check(getattr(pa, name)(_pure(a), _pure(b)), getattr(np, name)(a, b))
        check(getattr(pa, name)(_pure(a.reshape(6, 6)), 1.5),
              getattr(np, name)(a.reshape(6, 6), 1.5))
        check(getattr(pa, name)(0.5, _pure(b)), getattr(np, name)(0.5, b))
        check(getattr(pa, name)(1.0, 3.0), getattr(np, name)(1.0, 3.0))
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(3, 1)) * 50, rng.normal(size=(4,)) * 50
    check(getattr(pa, name)(_pure(x), _pure(y)), getattr(np, name)(x, y))


def test_where_clip_nan_to_num_round():
    rng = np.random.default_rng(5)
    c = rng.random((2, 3)) < 0.5
    x, y = _rand((2, 3), rng), _rand((3,), rng)
    check(pa.where(_pure(c), _pure(x), _pure(y)), np.where(c, x, y))
    check(pa.where(_pure(c[:, 0])[:, None], 1.0, -1), np.where(c[:, 0][:, None], 1.0, -1))
    check(pa.where(_pure(c), 1, 0), np.where(c, 1, 0))
    check(pa.clip(_pure(x), -1.0, 1e7), np.clip(x, -1.0, 1e7))
    check(pa.clip(_pure(x), None, 0.5), np.clip(x, None, 0.5))
    z = np.array([np.nan, np.inf, -np.inf, 1.5])
    check(pa.nan_to_num(_pure(z), nan=0.0), np.nan_to_num(z, nan=0.0))
    check(pa.nan_to_num(_pure(z), nan=-1.0, posinf=9.0, neginf=-9.0),
          np.nan_to_num(z, nan=-1.0, posinf=9.0, neginf=-9.0))
    r = np.array([0.5, 1.5, 2.5, -0.5, 1.23456789, -2.71828, 1234.5678, np.inf, np.nan])
    for d in (0, 2, 4, -2):
        check(pa.round(_pure(r), d), np.round(r, d))
    check(_pure(r).round(), np.round(r))
    check(pa.round(2.675, 2), np.round(2.675, 2))


REDUCTIONS = ["sum", "mean", "var", "std", "max", "min", "all", "any", "argmin", "argmax",
              "ptp", "median"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
def test_reductions_axis_keepdims(name, axis, dtype):
    if name in ("argmin", "argmax") and isinstance(axis, tuple):
        pytest.skip("NumPy's argmin/argmax take one axis")
    if name in ("median", "ptp") and dtype == np.bool_:
        pytest.skip("NumPy refuses these on booleans")
    rng = np.random.default_rng(6)
    x = _rand((4, 3, 5), rng, special=False, dtype=dtype)
    fn_np, fn_pa = getattr(np, name), getattr(pa, name)
    kws = [{}] if name in ("argmin", "argmax") else [{}, {"keepdims": True}]
    for kw in kws:
        want = fn_np(x, axis=axis, **kw)
        check(fn_pa(_pure(x), axis=axis, **kw), want)
    if hasattr(x, name) and name not in ("ptp", "median"):
        check(getattr(_pure(x), name)(axis=axis), getattr(x, name)(axis=axis))


def test_reductions_with_nan_inf_ddof_and_empty():
    x = np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, -1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("sum", "mean", "max", "min", "argmin", "argmax", "median", "ptp"):
            check(getattr(pa, name)(_pure(x), axis=1), getattr(np, name)(x, axis=1))
            check(getattr(pa, name)(_pure(x)), getattr(np, name)(x))
        check(pa.sum(pa.asarray([np.inf, -np.inf])), np.sum([np.inf, -np.inf]))
        check(pa.mean(pa.zeros((0,))), np.mean(np.zeros((0,))))
    y = np.random.default_rng(7).normal(size=(3, 10))
    check(_pure(y).var(axis=1, ddof=1), y.var(axis=1, ddof=1))
    check(_pure(y).std(ddof=1), y.std(ddof=1))
    b = np.array([True, False, True])
    check(_pure(b).sum(), b.sum())
    assert pa.zeros(3).sum() == 0.0 and pa.asarray(b.tolist()).sum() == 2
    with pytest.raises(ValueError):
        pa.max(pa.zeros((0,)))


def test_indexing_forms_and_assignment():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(4, 5, 3))
    p = _pure(x)
    for key in [1, -1, (1, 2), (1, 2, 0), (slice(None), None), (slice(1, 3),),
                (slice(None), slice(None, None, 2)), (Ellipsis, slice(None, 2)),
                (slice(None), 2), (None, 1), (Ellipsis, 0), (-2, slice(1, None), None),
                (slice(None), slice(None), 1)]:
        check(p[key], x[key])
    v = x[:, 0, 0]
    check(_pure(v)[:, None], v[:, None])
    check(_pure(v)[2], v[2])
    mask = v > 0
    check(p[_pure(mask)], x[mask])
    check(_pure(v)[_pure(mask)], v[mask])
    order = np.argsort(v)
    check(_pure(v)[_pure(order)], v[order])
    check(p[_pure(order[:2])], x[order[:2]])
    check(p[[0, 2]], x[[0, 2]])
    # assignment: scalar, broadcast row, masks, integer arrays, slices
    y, q = x.copy(), _pure(x)
    y[1, 2, 0] = 9.0
    q[1, 2, 0] = 9.0
    y[mask] = -1.0
    q[_pure(mask)] = -1.0
    y[2] = np.arange(3.0)
    q[2] = pa.arange(3.0)
    y[:, 1:3] = 0.5
    q[:, 1:3] = 0.5
    check(q, y)
    r, s = np.zeros(6), pa.zeros(6)
    idx = np.array([4, 0, 2])
    r[idx] = np.arange(1, 4)
    s[_pure(idx)] = pa.arange(1, 4)
    r[idx[1:]] = 7.5
    s[_pure(idx)[1:]] = 7.5
    s[0] = 1  # an int into a float array stays a float
    r[0] = 1
    check(s, r)
    assert type(s[0]) is float
    with pytest.raises(IndexError):
        _pure(v)[10]
    with pytest.raises(IndexError):
        p[0, 0, 0, 0]


def test_views_share_data_like_numpy():
    a = pa.zeros(4)
    col = a[:, None]
    flat = a.reshape(2, 2).ravel()
    a[1] = 5.0
    assert col[1, 0] == 5.0 and flat[1] == 5.0


def test_construction_stack_concatenate_shapes():
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    for axis in (0, 1, 2, -1):
        check(pa.stack([_pure(a), _pure(b)], axis=axis), np.stack([a, b], axis=axis))
    for axis in (0, 1, -1):
        check(pa.concatenate([_pure(a), _pure(b)], axis=axis), np.concatenate([a, b], axis))
    check(pa.concatenate([_pure(a), _pure(b)], axis=None), np.concatenate([a, b], None))
    i = np.arange(3)
    check(pa.concatenate([_pure(i), _pure(a[0])]), np.concatenate([i, a[0]]))
    check(pa.array([_pure(a), _pure(b)]), np.array([a, b]))
    mixed = [np.array([True, False]), np.array([2, 3]), np.array([0.5, 1.5])]
    check(pa.array([_pure(m) for m in mixed[:2]]), np.array(mixed[:2]))
    check(pa.array([_pure(m) for m in mixed]), np.array(mixed))
    check(pa.array([_pure(m) for m in mixed], dtype=pa.int64), np.array(mixed, dtype=np.int64))
    with pytest.raises(ValueError):
        pa.array([_pure(a), _pure(b[0])])
    check(pa.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]))
    check(pa.asarray([True, False]), np.asarray([True, False]))
    check(pa.asarray([1, 2.5]), np.asarray([1, 2.5]))
    check(pa.asarray(np.arange(4.0)), np.arange(4.0))  # anything with tolist()
    check(pa.asarray([1, 2], dtype=pa.float64), np.asarray([1, 2], dtype=np.float64))
    check(pa.zeros((2, 3)), np.zeros((2, 3)))
    check(pa.zeros(3, pa.int64), np.zeros(3, np.int64))
    check(pa.zeros(2, dtype=bool), np.zeros(2, dtype=bool))
    check(pa.ones((2, 2)), np.ones((2, 2)))
    check(pa.full(3, 1.5), np.full(3, 1.5))
    check(pa.full(3, 2), np.full(3, 2))
    check(pa.empty(4, dtype=pa.float64), np.zeros(4))  # "uninitialised": zeros here
    check(pa.zeros_like(_pure(a)), np.zeros_like(a))
    check(pa.ones_like(_pure(i)), np.ones_like(i))
    check(pa.arange(1, 7), np.arange(1, 7))
    check(pa.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25))
    p = _pure(rng.normal(size=(2, 3, 4)))
    n = np.asarray(p)
    check(p.reshape(6, -1), n.reshape(6, -1))
    check(p.reshape((4, 6)), n.reshape((4, 6)))
    check(p.ravel(), n.ravel())
    check(p.transpose(), n.transpose())
    check(p.transpose(1, 0, 2), n.transpose(1, 0, 2))
    check(p.T, n.T)
    check(p.astype(pa.int64), n.astype(np.int64))
    check((p > 0).astype(pa.float64), (n > 0).astype(np.float64))
    assert p.tolist() == n.tolist() and p.ndim == 3 and p.size == 24 and len(p) == 2
    assert p.dtype == pa.float64 and p.dtype == np.float64 and p.dtype == float
    c = p.copy()
    c[0, 0, 0] = 99.0
    assert p[0, 0, 0] != 99.0
    with pytest.raises(ValueError):
        p.reshape(5, -1)
    with pytest.raises(ValueError):
        pa.array([[1.0], [2.0, 3.0]])
    with pytest.raises(ValueError):
        bool(pa.zeros(2))
    assert float(pa.asarray([2.5])) == 2.5 and bool(pa.asarray([True]))


def test_matmul():
    rng = np.random.default_rng(10)
    a, b, v = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=4)
    check(_pure(a) @ _pure(b), a @ b)
    check(_pure(a) @ _pure(v), a @ v)
    check(_pure(v) @ _pure(b), v @ b)
    check(_pure(v) @ _pure(v), v @ v)
    with pytest.raises(ValueError):
        _pure(a) @ _pure(a)


def test_inplace_operators_keep_identity_and_dtype():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(2, 3))
    p = _pure(x)
    same = p
    p += 1.0
    p *= _pure(x[0])
    p -= 0.5
    p /= 2.0
    y = (((x + 1.0) * x[0]) - 0.5) / 2.0
    assert p is same
    check(p, y)
    n = pa.zeros(3, dtype=pa.int64)
    n += pa.asarray([True, False, True])
    check(n, np.array([1, 0, 1]))
    d = pa.zeros(3, dtype=bool)
    d |= pa.asarray([True, False, False])
    d &= pa.asarray([True, True, False])
    check(d, np.array([True, False, False]))
    with pytest.raises(TypeError):
        n += 0.5  # NumPy: same_kind casting refuses float -> int
    with pytest.raises(ValueError):
        v = pa.zeros(3)
        v += pa.zeros((2, 3))


def test_order_statistics_sorting_unique():
    rng = np.random.default_rng(12)
    x = np.round(rng.normal(size=(3, 7)), 1)  # ties
    for q in (0.0, 0.05, 0.3, 0.5, 0.95, 1.0, [0.05, 0.5, 0.95]):
        check(pa.quantile(_pure(x), q), np.quantile(x, q))
        check(pa.quantile(_pure(x), q, axis=1), np.quantile(x, q, axis=1))
    check(pa.median(_pure(x)), np.median(x))
    check(pa.median(_pure(x[:, :6]), axis=1), np.median(x[:, :6], axis=1))
    flat = x.ravel()
    check(pa.argsort(_pure(flat), kind="mergesort"), np.argsort(flat, kind="mergesort"))
    check(pa.argsort(_pure(x), axis=0), np.argsort(x, axis=0, kind="stable"))
    check(pa.sort(_pure(x)), np.sort(x))
    withnan = np.array([3.0, np.nan, -1.0, 3.0, np.inf, np.nan, 0.0])
    check(pa.argsort(_pure(withnan)), np.argsort(withnan, kind="stable"))
    with np.errstate(invalid="ignore"):
        check(pa.quantile(_pure(withnan), 0.5), np.quantile(withnan, 0.5))
        inf_ends = np.array([-np.inf, 1.0, 2.0, np.inf])
        check(pa.quantile(_pure(inf_ends), [0.0, 0.2, 0.5, 1.0]),
              np.quantile(inf_ends, [0.0, 0.2, 0.5, 1.0]))
    for kw in ({}, {"return_index": True}, {"return_counts": True},
               {"return_index": True, "return_inverse": True, "return_counts": True}):
        got, want = pa.unique(_pure(x), **kw), np.unique(x, **kw)
        if isinstance(want, tuple):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                check(g, w.reshape(-1))
        else:
            check(got, want)
    with pytest.raises(ValueError):
        pa.quantile(_pure(x), 1.5)
    for lib in (np, pa):
        with pytest.raises(IndexError):
            lib.quantile(lib.zeros(0), 0.5)


def test_vectorize_errstate_conjugate():
    erfc = pa.vectorize(math.erfc)
    x = np.linspace(-3, 3, 7).reshape(7, 1)
    check(erfc(_pure(x)), np.vectorize(math.erfc)(x))
    two = pa.vectorize(lambda a, b: a * 10 + b)
    check(two(pa.asarray([1, 2]), pa.asarray([[3], [4]])), np.array([[13, 23], [14, 24]]))
    with pa.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        check(pa.exp(pa.asarray([1000.0])), np.array([np.inf]))

    @pa.errstate(all="ignore")
    def f():
        return pa.log(pa.asarray([0.0]))

    check(f(), np.array([-np.inf]))
    with pytest.raises(TypeError):
        pa.errstate(bogus="ignore")
    z = np.array([1 + 2j, -3j])
    check(pa.conjugate(pa.asarray(z.tolist())), np.conjugate(z))
    check(pa.conjugate(pa.asarray([1.5])), np.conjugate(np.array([1.5])))


@pytest.mark.parametrize("n", [1, 2, 5, 8, 12, 16, 31, 100, 128])
def test_fft_against_numpy(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(3, n))
    check(pa.fft.rfft(_pure(x)), np.fft.rfft(x), rtol=1e-9, atol=1e-11)
    check(pa.fft.fft(_pure(x)), np.fft.fft(x), rtol=1e-9, atol=1e-11)
    z = x + 1j * rng.normal(size=(3, n))
    check(pa.fft.ifft(pa.asarray(z.tolist())), np.fft.ifft(z), rtol=1e-9, atol=1e-12)
    size = 1 << (2 * n - 1).bit_length()
    f = pa.fft.rfft(_pure(x), n=size, axis=-1)
    check(f, np.fft.rfft(x, n=size, axis=-1), rtol=1e-9, atol=1e-11)
    spec = np.fft.rfft(x, n=size)
    check(pa.fft.irfft(f * pa.conjugate(f), n=size, axis=-1),
          np.fft.irfft(spec * np.conjugate(spec), n=size, axis=-1), rtol=1e-9, atol=1e-10)
    check(pa.fft.irfft(pa.fft.rfft(_pure(x), axis=0), n=3, axis=0),
          np.fft.irfft(np.fft.rfft(x, axis=0), n=3, axis=0), rtol=1e-9, atol=1e-12)
    if n > 1:  # odd output length, and a spectrum truncated/padded to n
        check(pa.fft.irfft(f, n=n), np.fft.irfft(spec, n=n), rtol=1e-9, atol=1e-11)


def test_random_generator_is_the_runtimes_philox():
    import tensorbridge as tb

    g = pa.random.default_rng(42)
    u = g.uniform(size=(2, 3))
    assert u.shape == (2, 3) and u.dtype == pa.float64
    ref = tb.random.Generator(42).uniform((6,), dtype="float64").tolist()
    assert u.ravel().tolist() == ref  # the same stream
    assert pa.random.default_rng(42).uniform(size=(2, 3)).tolist() == u.tolist()
    assert pa.random.default_rng(43).uniform(size=3).tolist() != u[0].tolist()
    v = pa.random.default_rng(1).uniform(-2.0, 2.0, size=4000)
    assert -2.0 <= v.min() and v.max() < 2.0 and abs(v.mean()) < 0.1
    z = pa.random.default_rng(2).standard_normal((4000,))
    assert abs(z.mean()) < 0.1 and abs(z.std() - 1.0) < 0.05
    ref_z = tb.random.Generator(2).normal((5,), dtype="float64").tolist()
    assert pa.random.default_rng(2).standard_normal(5).tolist() == ref_z
    assert isinstance(g.uniform(), float) and isinstance(g.standard_normal(), float)
    k = g.integers(3, 7, size=1000)
    assert k.dtype == pa.int64 and set(k.tolist()) == {3, 4, 5, 6}
    r = g.random((2, 2))
    assert r.shape == (2, 2) and 0.0 <= r.min() and r.max() < 1.0
    nrm = pa.random.default_rng(5).normal(3.0, 2.0, size=2000)
    assert abs(nrm.mean() - 3.0) < 0.2
    seeded = pa.random.default_rng(None).uniform(size=2)
    assert seeded.shape == (2,)


def test_pickle_copy_and_foreign_comparisons():
    import copy
    import pickle

    a = pa.asarray([[1.5, -2.0], [np.inf, 0.0]])
    for b in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a), copy.copy(a)):
        assert b.tolist() == a.tolist() and b.shape == a.shape
        assert b.dtype is pa.float64  # dtypes stay the module's singletons
        assert (b > 0).dtype is pa.bool_
    assert pickle.loads(pickle.dumps(pa.int64)) is pa.int64
    assert (a == None) is False and (a != None) is True  # noqa: E711 - the comparison tested
    assert a != object()


def test_broadcast_reshape_shape_like_numpy():
    """What distributions.check_data uses (the JS door runs it without NumPy)."""
    a = np.array([[1.0], [2.0]])
    check(pa.broadcast_to(_pure(a), (2, 3)), np.broadcast_to(a, (2, 3)))
    assert pa.broadcast_shapes((2, 1), (3,)) == np.broadcast_shapes((2, 1), (3,))
    check(pa.reshape(_pure(np.arange(6.0)), (2, 3)), np.reshape(np.arange(6.0), (2, 3)))
    assert pa.shape(_pure(a)) == np.shape(a) and pa.shape(2.0) == ()
    with pytest.raises(ValueError):
        pa.broadcast_to(_pure(np.ones(3)), (2, 2))
