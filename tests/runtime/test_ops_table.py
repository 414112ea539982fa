"""Every built-in op: forward values against a NumPy reference, and derivatives against finite
differences in forward and reverse mode to second order, on every backend — one table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import scipy.special as sps

import tensorbridge as tb
from tensorbridge.runtime.testing import assert_close


@dataclass
class Case:
    name: str
    fn: Callable[..., Any]  # tensorbridge function of tensors
    ref: Callable[..., Any] | None  # NumPy reference on arrays (None: no value check)
    args: list[Any]  # NumPy arrays (float64 unless integer); ints/tuples stay Python
    order: int = 2
    grad: bool = True
    kw: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


def r(*shape: int, lo: float = -2.0, hi: float = 2.0, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + len(shape) * 7 + sum(shape)).uniform(lo, hi, shape)


def pos(*shape: int, seed: int = 0) -> np.ndarray:
    return r(*shape, lo=0.5, hi=2.5, seed=seed)


def distinct(*shape: int, seed: int = 0) -> np.ndarray:
    n = int(np.prod(shape))
    return np.random.default_rng(seed).permutation(n).reshape(shape) * 0.37 - 1.1


def spd_factor(n: int) -> np.ndarray:
    return r(n, n, seed=3) + 2.0 * np.eye(n)


def tri(n: int, lower: bool, k: int = 1) -> np.ndarray:
    a = r(n, n, seed=5) * 0.3 + 2.0 * np.eye(n)
    return np.tril(a) if lower else np.triu(a)


UNARY = [
    ("exp", tb.exp, np.exp, r(3, 4)),
    ("log", tb.log, np.log, pos(3, 4)),
    ("log1p", tb.log1p, np.log1p, pos(3)),
    ("expm1", tb.expm1, np.expm1, r(5)),
    ("sqrt", tb.sqrt, np.sqrt, pos(2, 3)),
    ("rsqrt", tb.rsqrt, lambda x: 1 / np.sqrt(x), pos(4)),
    ("square", tb.square, np.square, r(4)),
    ("abs", tb.abs, np.abs, distinct(2, 3)),
    ("negative", tb.negative, np.negative, r(3)),
    ("reciprocal", tb.reciprocal, np.reciprocal, pos(3)),
    ("tanh", tb.tanh, np.tanh, r(2, 2)),
    ("sigmoid", tb.sigmoid, sps.expit, r(5)),
    ("softplus", tb.softplus, lambda x: np.logaddexp(0, x), r(5)),
    ("sin", tb.sin, np.sin, r(4)),
    ("cos", tb.cos, np.cos, r(4)),
    ("tan", tb.tan, np.tan, r(4, lo=-1, hi=1)),
    ("arcsin", tb.arcsin, np.arcsin, r(4, lo=-0.9, hi=0.9)),
    ("arccos", tb.arccos, np.arccos, r(4, lo=-0.9, hi=0.9)),
    ("arctan", tb.arctan, np.arctan, r(4)),
    ("arcsinh", tb.arcsinh, np.arcsinh, r(4)),
    ("arccosh", tb.arccosh, np.arccosh, r(4, lo=1.2, hi=3.0)),
    ("arctanh", tb.arctanh, np.arctanh, r(4, lo=-0.9, hi=0.9)),
    # off the multiples of 1/2 (there the reduction's n jumps; values exact there: test_pi_ops)
    ("sinpi", tb.sinpi, lambda x: np.sin(np.pi * x), r(5) + 0.01),
    ("cospi", tb.cospi, lambda x: np.cos(np.pi * x), r(5) + 0.01),
    # near 0, where np.tan(np.pi * x) (the reference) is accurate
    ("tanpi", tb.tanpi, lambda x: np.tan(np.pi * x), r(4, lo=-0.4, hi=0.4)),
    ("trigamma", tb.trigamma, lambda x: sps.polygamma(1, x), pos(3)),
    ("erf", tb.erf, sps.erf, r(5)),
    ("erfc", tb.erfc, sps.erfc, r(5)),
    ("lgamma", tb.lgamma, sps.gammaln, pos(4)),
    ("digamma", tb.digamma, sps.digamma, pos(4)),
    ("polygamma1", lambda x: tb.polygamma(1, x), lambda x: sps.polygamma(1, x), pos(3)),
    ("sign", tb.sign, np.sign, distinct(4)),
    ("floor", tb.floor, np.floor, r(4) + 0.01),
    ("relu", tb.relu, lambda x: np.maximum(x, 0), distinct(5)),
    ("elu", tb.elu, lambda x: np.where(x > 0, x, np.expm1(x)), distinct(5)),
    ("gelu", tb.gelu, lambda x: 0.5 * x * (1 + sps.erf(x / np.sqrt(2))), r(5)),
    ("softmax", tb.softmax, lambda x: sps.softmax(x, axis=-1), r(2, 4)),
    ("log_softmax", tb.log_softmax, lambda x: sps.log_softmax(x, axis=-1), r(2, 4)),
]

CASES: list[Case] = [Case(n, f, ref, [a]) for n, f, ref, a in UNARY]

CASES += [
    # broadcasting binary ops
    Case("add_bcast", lambda x, y: x + y, np.add, [r(3, 4), r(4)]),
    Case("sub_bcast", lambda x, y: x - y, np.subtract, [r(3, 1), r(1, 4)]),
    Case("mul_bcast", lambda x, y: x * y, np.multiply, [r(2, 3, 4), r(3, 1)]),
    Case("div_bcast", lambda x, y: x / y, np.divide, [r(2, 3), pos(3)]),
    Case("pow_tensor", lambda x, y: x**y, np.power, [pos(3, 2), r(3, 2)]),
    Case("pow_scalar", lambda x: x**3.0, lambda x: x**3.0, [r(4)]),
    Case("rpow_scalar", lambda x: 2.0**x, lambda x: 2.0**x, [r(4)]),
    Case("maximum", tb.maximum, np.maximum, [distinct(3, 2), distinct(2, seed=1) + 0.05]),
    Case("minimum", tb.minimum, np.minimum, [distinct(3, 2), distinct(3, 2, seed=2) + 0.05]),
    Case("mod", tb.mod, np.mod, [pos(4) * 3.1, pos(4) + 0.3]),
    Case("scalar_ops", lambda x: (3.0 - x) / 2.0 + 1.5 * x, lambda x: (3 - x) / 2 + 1.5 * x,
         [r(3)]),
    Case("where", lambda c, x, y: tb.where(c, x, y), np.where,
         [np.array([True, False, True]), r(2, 3), r(3)]),
    Case("clip", lambda x: tb.clip(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7),
         [distinct(6)]),
    # reductions
    Case("sum_all", lambda x: tb.sum(x), np.sum, [r(3, 4)]),
    Case("sum_axis", lambda x: tb.sum(x, (0, 2)), lambda x: x.sum((0, 2)), [r(2, 3, 4)]),
    Case("sum_keepdims", lambda x: tb.sum(x, 1, keepdims=True),
         lambda x: x.sum(1, keepdims=True), [r(2, 3)]),
    Case("mean", lambda x: tb.mean(x, -1), lambda x: x.mean(-1), [r(3, 4)]),
    Case("prod", lambda x: tb.prod(x, 1), lambda x: x.prod(1), [pos(3, 4)]),
    Case("prod_with_zero", lambda x: tb.prod(x, 1), lambda x: x.prod(1),
         [np.array([[0.0, 2.0, 3.0], [1.5, -0.5, 2.0]])]),
    Case("max", lambda x: tb.max(x, 0), lambda x: x.max(0), [distinct(3, 4)]),
    Case("min_keepdims", lambda x: tb.min(x, 1, keepdims=True),
         lambda x: x.min(1, keepdims=True), [distinct(3, 4)]),
    Case("logsumexp", lambda x: tb.logsumexp(x, 1), lambda x: sps.logsumexp(x, 1), [r(3, 4)]),
    Case("cumsum", lambda x: tb.cumsum(x, 1), lambda x: np.cumsum(x, 1), [r(2, 4)]),
    Case("cumsum_reverse", lambda x: tb.cumsum(x, 0, reverse=True),
         lambda x: np.flip(np.cumsum(np.flip(x, 0), 0), 0), [r(4, 2)]),
    # linear algebra
    Case("matmul", tb.matmul, np.matmul, [r(3, 4), r(4, 5)]),
    Case("matmul_batched", tb.matmul, np.matmul, [r(2, 3, 4), r(4, 2)]),
    Case("matmul_bcast_batch", tb.matmul, np.matmul, [r(2, 1, 3, 4), r(5, 4, 2)], order=1),
    Case("matvec", tb.matmul, np.matmul, [r(3, 4), r(4)]),
    Case("vecmat", tb.matmul, np.matmul, [r(3), r(3, 2)]),
    Case("cholesky", lambda x: tb.cholesky(x @ tb.transpose(x) + 4.0 * tb.eye(3, dtype="float64",
                                                                             backend=x.backend)),
         lambda x: np.linalg.cholesky(x @ x.T + 4 * np.eye(3)), [spd_factor(3)]),
    Case("cholesky_batched",
         lambda x: tb.cholesky(x @ tb.swapaxes(x, -1, -2) + 3.0 * tb.eye(3, dtype="float64",
                                                                          backend=x.backend)),
         lambda x: np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) + 3 * np.eye(3)),
         [r(2, 3, 3)], order=1),
    Case("trisolve_lower", lambda a, b: tb.triangular_solve(tb.tril(a), b, lower=True),
         lambda a, b: np.linalg.solve(np.tril(a), b), [tri(3, True), r(3, 2)]),
    Case("trisolve_upper_T",
         lambda a, b: tb.triangular_solve(tb.triu(a), b, lower=False, transpose_a=True),
         lambda a, b: np.linalg.solve(np.triu(a).T, b), [tri(3, False), r(3, 2)]),
    Case("trisolve_vec", lambda a, b: tb.triangular_solve(tb.tril(a), b),
         lambda a, b: np.linalg.solve(np.tril(a), b), [tri(4, True), r(4)]),
    Case("solve", tb.solve, np.linalg.solve, [r(3, 3) + 3.0 * np.eye(3), r(3, 2)]),
    Case("solve_vec", tb.solve, np.linalg.solve, [r(4, 4) + 3.0 * np.eye(4), r(4)]),
    # eigenvalues, and the eigenvectors through v v^T-weighted sums (sign-free), of a symmetric
    # matrix with distinct eigenvalues; the gradient treats the input as symmetric, so the case
    # symmetrises it first
    Case("eigh_values", lambda a: tb.eigh((a + tb.transpose(a)) * 0.5)[0],
         lambda a: np.linalg.eigh((a + a.T) / 2)[0], [r(4, 4) + np.diag([0.0, 3.0, 6.0, 9.0])]),
    Case("eigh_vectors",
         lambda a: tb.square(tb.eigh((a + tb.transpose(a)) * 0.5)[1]),
         lambda a: np.square(np.linalg.eigh((a + a.T) / 2)[1]),
         [r(3, 3) + np.diag([0.0, 3.0, 6.0])], order=1),
    # shape and layout
    Case("transpose", lambda x: tb.transpose(x, (2, 0, 1)), lambda x: x.transpose(2, 0, 1),
         [r(2, 3, 4)]),
    Case("reshape", lambda x: tb.reshape(x, (4, -1)), lambda x: x.reshape(4, -1), [r(2, 3, 4)]),
    Case("expand_squeeze", lambda x: tb.squeeze(tb.expand_dims(x, 1), 1) * 2.0,
         lambda x: x * 2, [r(3, 2)]),
    Case("concat", lambda x, y: tb.concat([x, y, x], axis=1),
         lambda x, y: np.concatenate([x, y, x], 1), [r(2, 3), r(2, 1)]),
    Case("stack", lambda x, y: tb.stack([x, y], axis=-1), lambda x, y: np.stack([x, y], -1),
         [r(2, 3), r(2, 3, seed=1)]),
    Case("broadcast_to", lambda x: tb.broadcast_to(x, (2, 3, 4)),
         lambda x: np.broadcast_to(x, (2, 3, 4)), [r(3, 1)]),
    # indexing
    Case("slice", lambda x: x[1:, ::2], lambda x: x[1:, ::2], [r(3, 5)]),
    Case("int_index", lambda x: x[1], lambda x: x[1], [r(3, 2)]),
    Case("newaxis_ellipsis", lambda x: x[None, ..., 0], lambda x: x[None, ..., 0], [r(2, 3)]),
    Case("int_array_dups", lambda x: x[[0, 0, 2]], lambda x: x[[0, 0, 2]], [r(3, 2)]),
    Case("mixed_array", lambda x: x[:, [2, 0]], lambda x: x[:, [2, 0]], [r(2, 3)]),
    Case("bool_mask", lambda x: x[np.array([True, False, True])],
         lambda x: x[np.array([True, False, True])], [r(3, 2)]),
    Case("take", lambda x: tb.take(x, [1, 1, 0], axis=1), lambda x: np.take(x, [1, 1, 0], 1),
         [r(2, 3)]),
    Case("index_update", lambda x, v: tb.index_update(x, (slice(None), 1), v),
         lambda x, v: _np_update(x, (slice(None), 1), v), [r(3, 3), r(3)]),
    Case("index_add_dups", lambda x, v: tb.index_add(x, [0, 0], v),
         lambda x, v: _np_add(x, [0, 0], v), [r(3, 2), r(2, 2)]),
]


def _np_update(x: np.ndarray, idx: Any, v: np.ndarray) -> np.ndarray:
    y = x.copy()
    y[idx] = v
    return y


def _np_add(x: np.ndarray, idx: Any, v: np.ndarray) -> np.ndarray:
    y = x.copy()
    np.add.at(y, idx, v)
    return y


def _to_tb(a: Any, backend: str) -> Any:
    if isinstance(a, np.ndarray):
        return tb.tensor(a, backend=backend)
    return a


# Accumulating ops, by case-name prefix: how many terms each output sums, and whether the op is
# multilinear (then the op on |inputs| is the sum of |terms| the tolerance policy scales by).
_ACCUMULATING = ("sum", "mean", "cumsum", "matmul", "matvec", "vecmat", "logsumexp", "prod",
                 "cholesky", "trisolve", "solve", "eigh")


def _error_model(case: Case) -> dict[str, Any]:
    """``n``, ``magnitude`` and ``op`` for :func:`tensorbridge.testing.assert_close`."""
    base = case.name.split("_")[0]
    model: dict[str, Any] = {"op": base}
    if not case.name.startswith(_ACCUMULATING):
        return model
    arrays = [a for a in case.args if isinstance(a, np.ndarray)]
    model["n"] = max(a.size for a in arrays)  # an upper bound on any output's term count
    if base in ("sum", "mean", "cumsum", "matmul", "matvec", "vecmat"):
        model["magnitude"] = case.ref(*[np.abs(a) if isinstance(a, np.ndarray) else a
                                        for a in case.args])
    elif base in ("cholesky", "trisolve", "solve", "eigh"):
        # factorisations and solves are backward stable normwise (Higham ch. 8, 10; eigh's
        # vectors to eps ||A|| / gap, gaps >= 1 here): each
        # element is held to the largest element of its matrix (the test matrices are well
        # conditioned, so the forward error is as small)
        want = np.abs(np.asarray(case.ref(*case.args)))
        model["magnitude"] = np.broadcast_to(want.max(axis=(-2, -1), keepdims=True)
                                             if want.ndim >= 2 else want.max(), want.shape)
    return model


@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward_matches_numpy(case: Case, backend: str) -> None:
    args = [_to_tb(a, backend) for a in case.args]
    out = case.fn(*args)
    want = case.ref(*case.args)
    assert out.backend.name == backend
    assert_close(out.numpy(), np.asarray(want, dtype=out.numpy().dtype), out.dtype,
                 **_error_model(case))
    assert out.shape == np.shape(want), (out.shape, np.shape(want))
    if np.asarray(want).dtype.kind == "f":
        assert out.dtype is tb.float64  # float64 in, float64 out: no silent precision change


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=str)
def test_derivatives_match_finite_differences(case: Case, backend: str) -> None:
    args = [_to_tb(a, backend) for a in case.args]
    tb.check_grads(case.fn, args, order=case.order, modes=("fwd", "rev"))


@pytest.mark.parametrize("case", CASES[:12] + CASES[-6:], ids=str)
def test_float32_matches_float64(case: Case, backend: str) -> None:
    """The same op in float32 stays float32 and agrees to single precision."""
    args32 = [tb.tensor(a.astype(np.float32), backend=backend) if isinstance(a, np.ndarray)
              and a.dtype == np.float64 else _to_tb(a, backend) for a in case.args]
    out = case.fn(*args32)
    assert out.dtype is tb.float32
    # the float64 reference is exact to float32 precision, so one side's error bound would do;
    # the policy's two-sided bound is kept for one rule everywhere
    assert_close(out.numpy(), case.ref(*case.args), tb.float32, **_error_model(case))


def test_pi_functions_are_exact_at_multiples_of_one_half(backend: str) -> None:
    """sinpi, cospi, tanpi (R's) are exact where sin(pi * x) is not: 0 and +-1 at integers and
    half-integers, however large; tanpi is NaN at its poles, as R's; NaN and inf give NaN."""
    halves = np.array([-3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0,
                       1e6 + 0.5, 2.0**40 + 1.0])
    for dt in ("float64", "float32"):  # 2**40 + 1 is 2**40 in float32
        k = np.round(2 * halves.astype(dt).astype(np.float64)).astype(np.int64) % 4
        sin_want = np.array([0.0, 1.0, 0.0, -1.0])[k]  # sin(pi k / 2) for k mod 4
        cos_want = np.array([1.0, 0.0, -1.0, 0.0])[k]
        x = tb.tensor(halves.astype(dt), backend=backend)
        np.testing.assert_array_equal(tb.sinpi(x).numpy(), sin_want.astype(dt))
        np.testing.assert_array_equal(tb.cospi(x).numpy(), cos_want.astype(dt))
        t = tb.tanpi(x).numpy()
        assert np.all(np.isnan(t[k % 2 == 1])) and np.all(t[k % 2 == 0] == 0.0)
    bad = tb.tensor([np.nan, np.inf, -np.inf], dtype="float64", backend=backend)
    for f in (tb.sinpi, tb.cospi, tb.tanpi):
        assert np.all(np.isnan(f(bad).numpy()))
    quarter = tb.tensor([0.25, -0.75, 1.3], dtype="float64", backend=backend)
    assert_close(tb.tanpi(quarter).numpy(), np.tan(np.pi * np.array([0.25, -0.75, 1.3])),
                 tb.float64, n=4)


def test_inverse_trig_edges_match_numpy(backend: str) -> None:
    """The domain edges: acosh(1) = 0, atanh(+-1) = +-inf, NaN outside the domain, as NumPy."""
    x = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, np.inf, -np.inf, np.nan])
    t = tb.tensor(x, backend=backend)
    with np.errstate(all="ignore"):
        for f, ref in ((tb.arcsin, np.arcsin), (tb.arccos, np.arccos), (tb.arctan, np.arctan),
                       (tb.arcsinh, np.arcsinh), (tb.arccosh, np.arccosh),
                       (tb.arctanh, np.arctanh)):
            assert_close(f(t).numpy(), ref(x), tb.float64, n=4)
    assert tb.arccosh(tb.tensor([1.0], dtype="float64", backend=backend)).numpy()[0] == 0.0
