"""The python arrays (the python backend's buffers, and the host namespace without NumPy) against
NumPy itself: every operator and function they implement, on random inputs, broadcasting,
inf/nan, booleans, indexing."""

from __future__ import annotations

import itertools
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


ARITH = [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt, operator.le,
         operator.gt, operator.ge, operator.eq, operator.ne]


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


@pytest.mark.parametrize("op", ARITH, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.float64])
def test_scalars_on_both_sides_and_dtypes(op, dtype):
    rng = np.random.default_rng(1)
    a = _rand((2, 3), rng, special=False, dtype=dtype)
    for s in (2, 2.5, True):
        if dtype == np.bool_ and op in (operator.sub,) and isinstance(s, bool):
            continue  # NumPy refuses boolean subtraction
        with np.errstate(all="ignore"):
            want_l, want_r = op(a, s), op(s, a)
        check(op(_pure(a), s), want_l)
        check(op(s, _pure(a)), want_r)


def test_division_by_zero_overflow_and_int_semantics():
    a = np.array([1.0, -1.0, 0.0, np.nan, 3.0])
    b = np.array([0.0, 0.0, 0.0, 0.0, -0.0])
    with np.errstate(all="ignore"):
        check(_pure(a) / _pure(b), a / b)
        check(1.0 / _pure(b), 1.0 / b)
        check(_pure(np.array([1e300])) * 1e300, np.array([1e300]) * 1e300)
        check(_pure(np.array([1e300])) / 1e-300, np.array([1e300]) / 1e-300)
    i = np.array([7, -7, 3])
    check(_pure(i) / 2, i / 2)


@pytest.mark.parametrize("op", [operator.and_, operator.or_])
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


UNARY = ["exp", "log", "sqrt", "abs", "isfinite", "isnan", "floor"]


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


@pytest.mark.parametrize("name", ["minimum", "maximum", "fmax", "logaddexp"])
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


REDUCTIONS = ["sum", "mean", "var", "std", "max", "min", "all", "any", "argmin"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
def test_reductions_axis_keepdims(name, axis, dtype):
    if name == "argmin" and isinstance(axis, tuple):
        pytest.skip("NumPy's argmin takes one axis")
    rng = np.random.default_rng(6)
    x = _rand((4, 3, 5), rng, special=False, dtype=dtype)
    fn_np, fn_pa = getattr(np, name), getattr(pa, name)
    kws = [{}] if name == "argmin" else [{}, {"keepdims": True}]
    for kw in kws:
        want = fn_np(x, axis=axis, **kw)
        check(fn_pa(_pure(x), axis=axis, **kw), want)
    if hasattr(pa.ndarray, name):
        check(getattr(_pure(x), name)(axis=axis), getattr(x, name)(axis=axis))


@pytest.mark.parametrize("axis", [0, 1, -1, None, (0, 2)])
def test_ufunc_reduce_as_numpy(axis):
    rng = np.random.default_rng(13)
    x = _rand((4, 3, 5), rng)
    b = rng.random((4, 3, 5)) < 0.8
    for kw in ({}, {"keepdims": True}):
        check(pa.add.reduce(_pure(x), axis, **kw), np.add.reduce(x, axis, **kw))
        check(pa.logical_and.reduce(_pure(b), axis, **kw), np.logical_and.reduce(b, axis, **kw))
        check(pa.add.reduce(_pure(b), axis, **kw), np.add.reduce(b, axis, **kw))
    check(pa.add.reduce(_pure(x)), np.add.reduce(x))  # NumPy's default: the first axis


def test_reductions_with_nan_inf_ddof_and_empty():
    x = np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, -1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("sum", "mean", "max", "min", "argmin"):
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


def test_indexing_forms():
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
    with pytest.raises(IndexError):
        _pure(v)[10]
    with pytest.raises(IndexError):
        p[0, 0, 0, 0]


def test_setitem_like_numpy():
    rng = np.random.default_rng(9)
    for key, value in [(1, rng.normal(size=(5, 3))), ((slice(None), slice(1, None)), 2.5),
                       ((0, slice(None), 2), rng.normal(size=5)), (-1, rng.normal(size=3)),
                       ((slice(None), 0), rng.normal(size=(4, 1))), (Ellipsis, 0.0),
                       ([0, 2], rng.normal(size=(5, 3)))]:
        x = rng.normal(size=(4, 5, 3))
        p = _pure(x)
        x[key] = value
        p[key] = _pure(value)
        check(p, x)
    x, p = np.eye(3), pa.zeros((3, 3))
    p[:, :] = pa.asarray(x.tolist())
    block = rng.normal(size=(3, 2))
    x[:, 1:] += block  # getitem (a copy here), add, setitem: the same values as NumPy's view
    p[:, 1:] += _pure(block)
    check(p, x)
    ints, want = pa.zeros(3, dtype=int), np.zeros(3, dtype=np.int64)
    ints[1], want[1] = 4, 4
    ints[0], want[0] = -1.5, -1.5  # an unsafe cast, as NumPy's setitem does
    assert ints.tolist() == want.tolist() and ints.dtype is pa.int64
    with pytest.raises(ValueError):
        p[0] = pa.zeros(2)


def test_views_share_data_like_numpy():
    a = pa.zeros(4)
    col = a[:, None]
    flat = a.reshape(2, 2).ravel()
    a += pa.asarray([0.0, 5.0, 0.0, 0.0])  # in place: the views see it
    assert col[1, 0] == 5.0 and flat[1] == 5.0
    c = a.copy()
    c += 1.0
    assert a[1] == 5.0


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
    check(pa.zeros_like(_pure(a)), np.zeros_like(a))
    p = _pure(rng.normal(size=(2, 3, 4)))
    n = np.asarray(p)
    check(p.reshape(6, -1), n.reshape(6, -1))
    check(p.reshape((4, 6)), n.reshape((4, 6)))
    check(p.ravel(), n.ravel())
    check(p.transpose(), n.transpose())
    check(p.transpose(1, 0, 2), n.transpose(1, 0, 2))
    check(p.astype(pa.int64), n.astype(np.int64))
    check((p > 0).astype(pa.float64), (n > 0).astype(np.float64))
    assert p.tolist() == n.tolist() and p.ndim == 3 and p.size == 24 and len(p) == 2
    assert p.dtype == pa.float64 and p.dtype == np.float64 and p.dtype == float
    c = p.copy()
    c += 99.0
    assert p[0, 0, 0] == n[0, 0, 0]
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


def test_quantile():
    rng = np.random.default_rng(12)
    x = np.round(rng.normal(size=(3, 7)), 1)  # ties
    for q in (0.0, 0.05, 0.3, 0.5, 0.95, 1.0, [0.05, 0.5, 0.95]):
        check(pa.quantile(_pure(x), q), np.quantile(x, q))
        check(pa.quantile(_pure(x), q, axis=1), np.quantile(x, q, axis=1))
    withnan = np.array([3.0, np.nan, -1.0, 3.0, np.inf, np.nan, 0.0])
    with np.errstate(invalid="ignore"):
        check(pa.quantile(_pure(withnan), 0.5), np.quantile(withnan, 0.5))
        inf_ends = np.array([-np.inf, 1.0, 2.0, np.inf])
        check(pa.quantile(_pure(inf_ends), [0.0, 0.2, 0.5, 1.0]),
              np.quantile(inf_ends, [0.0, 0.2, 0.5, 1.0]))
    with pytest.raises(ValueError):
        pa.quantile(_pure(x), 1.5)
    for lib in (np, pa):
        with pytest.raises(IndexError):
            lib.quantile(lib.zeros(0), 0.5)


def test_errstate_is_a_context_that_changes_nothing():
    with pa.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        check(pa.exp(pa.asarray([1000.0])), np.array([np.inf]))
        check(pa.log(pa.asarray([0.0])), np.array([-np.inf]))
    with pytest.raises(TypeError):
        pa.errstate(bogus="ignore")


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
    assert -2.0 <= pa.min(v) and pa.max(v) < 2.0 and abs(v.mean()) < 0.1
    assert isinstance(g.uniform(), float)
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
