"""The pure-Python ``python`` backend: every kernel against the NumPy kernel on the same inputs.

Exact (bit for bit, NaN positions and signed zeros included) where NumPy's algorithm is the
same: arithmetic, comparisons, where, clip, data movement, gather/scatter, cumsum, prod, max/min,
sums along trailing (pairwise, NumPy's order) or leading (sequential) axes, integer matmul, and
the C-library functions NumPy 1.26 also calls (exp, log, log1p, expm1, sin, cos, tan, sqrt).
Stated bounds elsewhere: tanh and erf within 2 ulp of NumPy/SciPy, erfc/lgamma/digamma/polygamma
within 1e-13 relative (or 1e-13 absolute near zeros of the function), float matmul, cholesky and
triangular_solve within the tolerance policy of ``tensorbridge.testing`` (summation order of
BLAS/LAPACK), float32 transcendental functions within 4 float32 ulp.

Also: the TensorFlow test's kernel table where TensorFlow is installed (the op table and the
other ``backend``-fixture tests run on this backend through ``tests/conftest.py``), ``tb.grad``
against the numpy backend, ``tb.function`` staging, NUTS on a model staged here, and a
subprocess where NumPy cannot be imported.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import timeit
from typing import Any

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.backends import python_arrays
from tensorbridge.runtime.backends import python_backend as pb
from tensorbridge.runtime.kernels import KERNEL_NAMES, registry
from tensorbridge.runtime.ops.indexing import IndexPlan
from tensorbridge.runtime.testing import check_close

from . import test_ops_table as ops_table

PY = "python"
NAN, INF = math.nan, math.inf


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def f(shape: Any, dtype: str = "float64", seed: int = 0, lo: float = -3.0, hi: float = 3.0):
    return rng(seed).uniform(lo, hi, shape).astype(dtype)


def wide(shape: Any, seed: int = 0) -> np.ndarray:
    """Values of very different magnitudes and both signs: sums round at every step."""
    r = rng(seed)
    return r.standard_normal(shape) * 10.0 ** r.uniform(-6, 6, shape)


def ints(shape: Any, dtype: str = "int64", seed: int = 0, lo: int = -9, hi: int = 10):
    return rng(seed).integers(lo, hi, shape).astype(dtype)


def bools(shape: Any, seed: int = 0) -> np.ndarray:
    return rng(seed).uniform(size=shape) > 0.5


class S:
    """A Python scalar operand (each backend gets ``backend.scalar(value, dtype)``)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"S({self.value!r})"


def run_kernel(backend: str, name: str, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
    """The kernel on raw arrays of ``backend``; returns the result as a NumPy array."""
    be = tb.get_backend(backend)
    raw = []
    for i, a in enumerate(args):
        if not isinstance(a, np.ndarray):  # S here or in the TensorFlow test's table
            other = args[1 - i]
            raw.append(be.scalar(a.value, tb.dtypes.as_dtype(other.dtype.name)))
        elif backend == PY:
            raw.append(pb.as_raw(np.asarray(a)))
        else:
            raw.append(np.asarray(a))
    kernel = registry.get(backend, name)
    with np.errstate(all="ignore"):
        return be.wrap(kernel(*raw, **params))


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal values, NaN at the same places, the same sign on zeros."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    gn, wn = np.isnan(got), np.isnan(want)
    if not np.array_equal(gn, wn):
        return False
    ok = ~gn
    return bool(np.array_equal(got[ok], want[ok])
                and np.array_equal(np.signbit(got[ok]), np.signbit(want[ok])))


def ulp_diff(got: np.ndarray, want: np.ndarray) -> int:
    """The largest distance in units in the last place (NaN/inf must agree exactly)."""
    if got.size == 0:
        return 0
    gi = got.view(np.int64 if got.dtype == np.float64 else np.int32).astype(np.int64)
    wi = want.view(np.int64 if want.dtype == np.float64 else np.int32).astype(np.int64)
    # order the bit patterns of negative floats so that neighbouring floats differ by 1
    top = np.int64(-(2**63)) if got.dtype == np.float64 else np.int64(-(2**31))
    gi = np.where(gi < 0, top - gi, gi)
    wi = np.where(wi < 0, top - wi, wi)
    both_nan = np.isnan(got) & np.isnan(want)
    return int(np.max(np.where(both_nan, 0, np.abs(gi - wi))))


# ------------------------------------------------------------------------------------------------
# the kernel table: (kernel, args, params, how to compare)
# ------------------------------------------------------------------------------------------------
EXACT = "exact"
SPECIAL = np.array([-3.5, -1.0, -0.5, -0.0, 0.0, 0.3, 1.0, 2.5, 7.0, 710.0, -745.5, NAN, INF,
                    -INF, 1e-300, 5e-324])
LIBM = ("neg abs sign exp log log1p expm1 sqrt rsqrt square reciprocal sin cos tan floor ceil "
        "round isnan isfinite softplus sigmoid").split()
# kernel -> allowed distance from NumPy's float64 result, in ulp, or ("rel", tolerance)
BOUNDS: dict[str, Any] = {"tanh": 2, "erf": 2, "erfc": ("rel", 1e-13), "lgamma": ("rel", 1e-13),
                          "digamma": ("rel", 1e-13), "polygamma": ("rel", 1e-13),
                          # NumPy may use SIMD versions of these (within 4 ulp), Python libm's
                          **{n: 4 for n in ("arcsin", "arccos", "arctan", "arcsinh", "arccosh",
                                            "arctanh")}}


def _cases() -> list[tuple[str, str, tuple[Any, ...], dict[str, Any], Any]]:
    cs: list[tuple[str, str, tuple[Any, ...], dict[str, Any], Any]] = []

    def add(name: str, label: str, args: tuple[Any, ...], params: dict[str, Any] | None = None,
            how: Any = EXACT) -> None:
        args = tuple(a if isinstance(a, S) else np.asarray(a) for a in args)
        cs.append((name, label, args, params or {}, how))

    for name in LIBM:
        add(name, "special", (SPECIAL,))
        add(name, "random", (f((40,), lo=-30, hi=30),))
        add(name, "0d", (np.array(0.75),))
        add(name, "empty", (np.zeros((0, 3)),))
    for name, bound in BOUNDS.items():
        params = {"n": 2} if name == "polygamma" else {}
        x = np.concatenate([f((60,), lo=-8, hi=8), f((20,), lo=0.01, hi=30, seed=1)])
        if name in ("digamma", "polygamma", "lgamma"):
            x = np.abs(x) + 0.05  # positive arguments: the series' domain, away from poles
        add(name, "random", (x,), params, bound)
        add(name, "special", (np.array([NAN, INF, -INF, 0.0, -0.0, -2.0, 1.0, 2.0]),), params,
            ("rel", 1e-13))
    for n in (0, 1, 2, 3):
        add("polygamma", f"n{n}", (np.array([0.3, 1.0, 2.5, 7.0, 40.0, -2.0, 0.0, -0.0, -2.5,
                                             -0.5, -7.25, INF, -INF, NAN]),), {"n": n},
            ("rel", 1e-12))
    add("round", "halves", (np.array([-2.5, -1.5, -0.5, -0.4, 0.5, 1.5, 2.5, 4.5e15, 0.49999997]),))
    for dt in ("int32", "int64"):
        lo = np.iinfo(dt).min
        x = np.array([lo, lo + 1, -7, -1, 0, 1, 3, 100], dt)
        for name in "neg abs sign square floor ceil round isnan isfinite logical_not".split():
            add(name, dt, (x,))
    for name in ("logical_not", "abs", "isnan", "isfinite"):
        add(name, "bool", (bools((3, 2)),))
    finite = np.array([-2.7, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 3.9, 1e6])
    for src, x in (("bool", bools((8,))), ("int32", ints((8,), "int32")),
                   ("int64", np.array([2**62, -(2**53) - 1, 7, 0])), ("float64", finite),
                   ("float32", finite.astype("float32"))):
        for dst in tb.dtypes.DTYPES:
            if dst != src:
                add("cast", f"{src}-{dst}", (x,), {"dtype": tb.dtypes.as_dtype(dst)})
    add("cast", "specials-bool", (np.array([NAN, INF, -0.0, 2.0]),), {"dtype": tb.bool_})
    add("cast", "int64-wraps-int32", (np.array([2**31, -(2**31) - 1, 2**40 + 5]),),
        {"dtype": tb.int32})

    # binary: broadcasting, 0-d and empty operands, scalars, corners
    shapes = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3), ()), ((0, 3), (3,)),
              ((), ()), ((2, 1, 3), (4, 1))]
    arith = "add sub mul div maximum minimum pow floordiv mod".split()
    compare = "equal not_equal less less_equal greater greater_equal".split()
    for dt in ("float64", "float32", "int32", "int64"):
        for i, (sa, sb) in enumerate(shapes):
            if dt.startswith("f"):
                a, b = f(sa, dt, i), f(sb, dt, i + 50)
            else:
                a, b = ints(sa, dt, i), ints(sb, dt, i + 50)
            for name in arith + compare:
                bb = b
                if name == "pow" and dt.startswith("i"):
                    bb = (np.abs(b) % 4).astype(dt)
                add(name, f"{dt}-{sa}-{sb}", (a, bb))
        x = f((2, 3), dt) if dt.startswith("f") else ints((2, 3), dt)
        for name in arith + compare:
            for v in ((2.0, 3.5, -1.5, 0.0) if dt.startswith("f") else (2, -3, 7)):
                if name == "pow" and dt.startswith("i") and v < 0:
                    continue
                add(name, f"{dt}-tensor-scalar{v}", (x, S(v)))
                if name != "pow" or dt.startswith("f"):  # (ints to negative powers raise)
                    add(name, f"{dt}-scalar{v}-tensor", (S(v), x))
    xs = np.array([7.0, -7.0, 7.0, -7.0, 0.0, -0.0, 5.0, -5.0, 1.0, INF, 3.0, NAN, 0.0, 5.0, -1.0,
                   -INF, 2.0])
    ys = np.array([2.0, 2.0, -2.0, -2.0, -3.0, 3.0, 0.0, 0.0, 0.1, 2.0, INF, 1.0, 0.0, -INF, INF,
                   -INF, NAN])
    for dt in ("float64", "float32"):
        for name in arith + compare:
            add(name, f"{dt}-corners", (xs.astype(dt), ys.astype(dt)))
    pa_ = np.array([0.0, -0.0, 0.0, -0.0, -8.0, -2.0, -2.0, 10.0, -10.0, 0.5, 1.0, NAN, 2.0])
    pb_ = np.array([-1.0, -1.0, -2.0, -3.0, 1 / 3, 3.0, 0.5, 400.0, 401.0, -3000.0, NAN, 0.0,
                    -INF])
    add("pow", "float64-ieee", (pa_, pb_))
    for dt in ("int32", "int64"):
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        xi = np.array([7, -7, 7, -7, 0, 5, -5, lo, lo, 9, hi, lo], dt)
        yi = np.array([2, 2, -2, -2, -3, 0, 0, -1, 1, -1, 1, -1], dt)
        for name in ("floordiv", "mod", "add", "sub", "mul", "maximum", "minimum"):
            add(name, f"{dt}-corners", (xi, yi))
        add("pow", f"{dt}-corners", (np.array([2, -3, 0, 5, 0, 3, -2], dt),
                                     np.array([3, 3, 0, 0, 5, 40, 63], dt)))
    for name in [*compare, "logical_and", "logical_or", "add", "mul", "maximum", "minimum"]:
        add(name, "bool", (bools((3, 1)), bools((1, 4), 1)))
    for name in ("logical_and", "logical_or"):
        add(name, "bool-scalar", (bools((2, 2)), S(False)))
        add(name, "bool-empty", (np.zeros((0,), bool), np.array(True)))
    for dt in ("float64", "float32", "int32", "bool"):
        x = f((2, 3), dt) if dt.startswith("f") else (ints((2, 3), dt) if dt != "bool"
                                                       else bools((2, 3)))
        add("where", f"{dt}-bcast", (bools((2, 1)), x, x[::-1].copy()))
        add("where", f"{dt}-bcast2", (bools((2, 3)), x[0], np.array(x[0, 0])))
    add("where", "empty", (np.zeros((0, 3), bool), f((3,)), f((1, 3))))
    for dt in ("float64", "float32"):
        x = np.array([-5.0, -0.5, -0.0, 0.0, 0.3, 2.0, NAN, INF, -INF], dt)
        for lo, hi in ((-1.0, 1.0), (-INF, 0.5), (0, 2), (-0.25, INF), (None, 0.0), (0.0, None),
                       (0.1, 0.3), (-0.3, NAN)):
            add("clip", f"{dt}-{lo}-{hi}", (x,), {"lo": lo, "hi": hi})
    for dt in ("int32", "int64"):
        for lo, hi in ((-2, 3), (0.5, 2.5), (-3, INF)):
            add("clip", f"{dt}-{lo}-{hi}", (ints((3, 3), dt),), {"lo": lo, "hi": hi})

    # reductions: pairwise sums of every length to 300 and above (blocks of 8, halves > 128)
    for n in [*range(0, 20), 31, 64, 127, 128, 129, 200, 255, 256, 257, 300, 1000, 1023, 5000]:
        add("sum", f"len{n}", (wide((n,), n),), {"axis": (0,), "keepdims": False})
        add("sum", f"float32-len{n}", (wide((n,), n).astype("float32"),),
            {"axis": (0,), "keepdims": False})
    for shape, axes in (((3, 4), [(), (0,), (1,), (0, 1)]),
                        ((2, 3, 40), [(0,), (1,), (2,), (0, 1), (1, 2), (0, 2), (0, 1, 2)]),
                        ((20, 1), [(0,), (0, 1)]), ((3, 1, 40), [(0, 2), (2,)]),
                        ((130, 3), [(0,), (1,), (0, 1)]), ((), [()])):
        for dt in ("float64", "float32", "int32", "int64"):
            x = wide(shape, 7).astype(dt) if dt[0] == "f" else ints(shape, dt, lo=-3, hi=4)
            for ax in axes:
                for kd in (False, True):
                    p = {"axis": ax, "keepdims": kd}
                    for name in ("sum", "prod", "max", "min"):
                        add(name, f"{dt}-{shape}-{ax}-{kd}", (x,), p)
                    if dt[0] == "f":
                        add("logsumexp", f"{dt}-{shape}-{ax}-{kd}", (f(shape, dt, 3),), p)
    add("sum", "negzero", (np.array([-0.0, -0.0]),), {"axis": (0,), "keepdims": False})
    add("sum", "bool", (bools((3, 4)),), {"axis": (1,), "keepdims": False})
    add("prod", "int32-wraps", (np.array([2**20, 2**15, 3], "int32"),),
        {"axis": (0,), "keepdims": False})
    add("sum", "int32-wraps", (np.array([2**31 - 1, 5], "int32"),),
        {"axis": (0,), "keepdims": False})
    for dt in ("float64", "int64"):
        x = np.zeros((0, 3), dt)
        for ax in ((0,), (1,), (0, 1)):
            add("sum", f"{dt}-empty-{ax}", (x,), {"axis": ax, "keepdims": False})
            add("prod", f"{dt}-empty-{ax}", (x,), {"axis": ax, "keepdims": True})
            if dt == "float64":
                add("logsumexp", f"empty-{ax}", (x,), {"axis": ax, "keepdims": False})
        add("max", f"{dt}-empty-rows", (x,), {"axis": (1,), "keepdims": False})
    x = np.array([[NAN, 1.0, 2.0], [-INF, -INF, -INF], [INF, 1.0, -INF], [1e300, 1e300, 0.0],
                  [-1e4, -1e4 - 1, -1e4 + 2], [0.0, -0.0, 0.0], [-0.0, 0.0, -0.0]])
    for name in ("max", "min", "logsumexp", "sum", "prod"):
        add(name, "special", (x,), {"axis": (1,), "keepdims": False})
    for dt in ("float64", "int32", "int64", "bool"):
        y = bools((4, 5), 3) if dt == "bool" else rng(3).integers(0, 3, (4, 5)).astype(dt)
        for name in ("argmax", "argmin"):
            for ax in (0, 1):
                add(name, f"{dt}-ties-{ax}", (y,), {"axis": ax})
    y = np.array([[1.0, NAN, 3.0, NAN], [INF, -INF, INF, 0.0], [2.0, 2.0, -1.0, -1.0]])
    for name in ("argmax", "argmin"):
        for ax in (0, 1):
            add(name, f"nan-{ax}", (y,), {"axis": ax})
    add("argmax", "3d", (f((2, 3, 4)),), {"axis": 1})
    add("argmin", "0d", (np.array(2.0),), {"axis": 0})
    for dt in ("float64", "float32", "int32", "int64", "bool"):
        y = wide((3, 20)).astype(dt) if dt[0] == "f" else (bools((3, 20)) if dt == "bool" else
                                                     ints((3, 20), dt))
        for ax in (0, 1):
            for rev in (False, True):
                add("cumsum", f"{dt}-{ax}-{rev}", (y,), {"axis": ax, "reverse": rev})
        add("cumsum", f"{dt}-empty", (np.zeros((0, 2), dt),), {"axis": 0, "reverse": True})
    add("cumsum", "negzero", (np.array([-0.0, -0.0, 1.0]),), {"axis": 0, "reverse": False})

    # shape and data movement
    x = f((2, 3, 4))
    for name, args, p in (
            ("reshape", (x,), {"shape": (4, 6)}),
            ("reshape", (np.array([5.0]),), {"shape": ()}),
            ("reshape", (np.array(5, "int32"),), {"shape": (1, 1)}),
            ("reshape", (np.zeros((0, 4)),), {"shape": (2, 0, 2)}),
            ("transpose", (x,), {"perm": (2, 0, 1)}),
            ("transpose", (bools((2, 3)),), {"perm": (1, 0)}),
            ("transpose", (np.array(1.0),), {"perm": ()}),
            ("transpose", (np.zeros((2, 0, 3)),), {"perm": (1, 2, 0)}),
            ("broadcast_to", (f((3, 1)),), {"shape": (2, 3, 4)}),
            ("broadcast_to", (np.array(2, "int64"),), {"shape": (0, 3)}),
            ("concat", (f((2, 3)), f((2, 1), seed=1), f((2, 0))), {"axis": 1}),
            ("concat", (ints((1, 2), "int32"), ints((3, 2), "int32", 2)), {"axis": 0}),
            ("concat", (bools((2,)), bools((0,))), {"axis": 0}),
            ("concat", (f((2, 3, 2)), f((2, 3, 2), seed=4)), {"axis": 1})):
        add(name, str(p), args, p)
    i64 = np.array
    for label, shape, index in (
            ("slice", (3, 5), (slice(1, None), slice(None, None, 2))),
            ("neg-step", (4, 5), (slice(None, None, -1), slice(3, 0, -2))),
            ("int", (3, 2), 1),
            ("scalar-result", (2, 3), (1, 2)),
            ("newaxis-ellipsis", (2, 3), (None, Ellipsis, 0)),
            ("0d-input", (), ()),
            ("take-rows-dups", (4, 3), (i64([0, 0, 3, -1]),)),
            ("take-axis1", (2, 5, 3), (slice(None), i64([4, -5, 2, 2]))),
            ("take-2d-idx", (5, 2), (i64([[0, 1], [4, 4]]),)),
            ("take-empty", (3, 4), (i64([], dtype=np.int64),)),
            ("mask-2d", (2, 3), (np.array([[True, False, True], [False, False, True]]),)),
            ("two-arrays", (3, 4), (i64([0, 2, 2]), i64([1, 3, 1]))),
            ("array-slice-array", (3, 4, 5), (i64([0, 1]), slice(1, 3), i64([4, 4])))):
        plan = IndexPlan(index, shape)
        for dt in ("float64", "int32", "bool"):
            x = wide(shape) if dt == "float64" else (ints(shape, dt) if dt == "int32" else
                                                    bools(shape))
            add("gather_flat", f"{label}-{dt}", (x,), {"index": plan})
            u = wide(plan.out_shape, 5) if dt == "float64" else (
                ints(plan.out_shape, dt, 5) if dt == "int32" else bools(plan.out_shape, 5))
            add("scatter_add_flat", f"{label}-{dt}", (u,), {"index": plan, "shape": shape})
    for dt in ("int32", "int64"):
        idx = np.array([[0, 2], [-1, 5]], dt)
        for odt in ("float32", "float64", "int32", "bool"):
            add("one_hot", f"{dt}-{odt}", (idx,), {"depth": 4, "dtype": tb.dtypes.as_dtype(odt)})
        add("one_hot", f"{dt}-0d", (np.array(1, dt),), {"depth": 3, "dtype": tb.float64})
        add("one_hot", f"{dt}-empty", (np.zeros((0,), dt),), {"depth": 0, "dtype": tb.float64})

    # linear algebra
    mm_shapes = (((3, 4), (4, 5)), ((2, 3, 4), (4, 2)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4, 3)),
                 ((3, 4), (4,)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((0, 3), (3, 2)),
                 ((2, 0), (0, 3)), ((3, 1), (1, 3)), ((4,), (4,)))
    for dt in ("int32", "int64", "float64", "float32"):
        for sa, sb in mm_shapes:
            a = ints(sa, dt, 0, -4, 5) if dt.startswith("i") else f(sa, dt)
            b = ints(sb, dt, 1, -4, 5) if dt.startswith("i") else f(sb, dt, 1)
            add("matmul", f"{dt}-{sa}-{sb}", (a, b), {}, EXACT if dt.startswith("i") else "close")
    for dt in ("float64", "float32"):
        a = f((2, 3, 3), dt, 4)
        spd = (a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)).astype(dt)
        add("cholesky", f"{dt}-batch", (spd,), {}, "close")
        add("cholesky", f"{dt}-2d", (spd[0],), {}, "close")
        add("cholesky", f"{dt}-empty", (np.zeros((2, 0, 0), dt),), {}, "close")
        for lower in (True, False):
            band = np.tril if lower else np.triu
            tri = band(f((3, 3), dt, 6) * 0.3 + 2 * np.eye(3)).astype(dt)
            tris = band(f((2, 3, 3), dt, 7) * 0.3 + 2 * np.eye(3)).astype(dt)
            for tr in (False, True):
                p = {"lower": lower, "transpose_a": tr}
                add("triangular_solve", f"{dt}-{lower}-{tr}", (tri, f((3, 2), dt, 7)), p, "close")
                add("triangular_solve", f"{dt}-batch-{lower}-{tr}", (tris, f((2, 3, 1), dt, 8)),
                    p, "close")
    bad = np.array([[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]], [[NAN, 0.0], [0.0, 1.0]]])
    add("cholesky", "not-pd", (bad,), {}, "close")
    for dt in ("float64", "float32"):
        a = (f((2, 3, 3), dt, 9) + 4 * np.eye(3)).astype(dt)
        add("solve", f"{dt}-2d", (a[0], f((3, 2), dt, 10)), {}, "close")
        add("solve", f"{dt}-batch", (a, f((2, 3, 1), dt, 11)), {}, "close")
        sym = np.diag(np.array([1.0, 2.5, 6.0])) + 0.3 * (a[0] + a[0].T - 8 * np.eye(3))
        add("eigh", f"{dt}-distinct", (sym.astype(dt),), {}, "close")

    # creation
    for dt in tb.dtypes.DTYPES:
        d = tb.dtypes.as_dtype(dt)
        add("fill", dt, (), {"shape": (2, 3), "value": 1.5 if dt != "bool" else True, "dtype": d})
        add("fill", f"{dt}-0d", (), {"shape": (), "value": 3, "dtype": d})
        add("fill", f"{dt}-empty", (), {"shape": (0, 2), "value": 0, "dtype": d})
        add("eye", dt, (), {"n": 3, "m": 4, "dtype": d})
        add("linspace", dt, (), {"start": -1.0, "stop": 2.0, "num": 7, "dtype": d})
        add("linspace", f"{dt}-long", (), {"start": 0.3, "stop": 1e5 + 0.7, "num": 1003,
                                           "dtype": d})
        add("linspace", f"{dt}-1", (), {"start": 0.3, "stop": 2.0, "num": 1, "dtype": d})
        add("linspace", f"{dt}-0", (), {"start": 0.3, "stop": 2.0, "num": 0, "dtype": d})
    add("fill", "negzero", (), {"shape": (2,), "value": -0.0, "dtype": tb.float64})
    add("fill", "nan", (), {"shape": (2,), "value": NAN, "dtype": tb.float64})
    for start, stop, step, dt in ((0, 5, 1, "int32"), (0.0, 1.0, 0.1, "float32"),
                                  (0.0, 1.0, 0.1, "float64"), (5, -3, -2, "int64"),
                                  (0.5, 5, 1, "int32"), (3, 3, 1, "int32"),
                                  (0.0, 2e4, 1.5, "float32"), (1.0, 3e4, 3.3, "float64"),
                                  (-7, 2000, 3, "int64"), (0, 10, 3, "float64")):
        add("arange", f"{start}-{stop}-{step}-{dt}", (), {
            "start": start, "stop": stop, "step": step, "dtype": tb.dtypes.as_dtype(dt)})
    for dt in ("float64", "float32"):
        add("from_uniform_bits", dt, (), {"u": rng(9).uniform(size=6), "shape": (2, 3),
                                          "dtype": tb.dtypes.as_dtype(dt)})
    # the ODE integrators are host algorithms: the python backend's kernels cross to NumPy
    problem, y0, k = _ode_problem()
    add("ode_solve", "decay", (y0, k), {"problem": problem}, "close")
    add("ode_sensitivities", "decay", (y0, k), {"problem": problem}, "close")
    k3 = np.array([[0.7], [0.2], [1.5]])  # a batch of 3 rates (vmap: chains), one y0
    add("ode_solve_batch", "decay-3", (y0, k3), {"problem": problem, "batched": (False, True)},
        "close")
    return cs


def _signs_fixed(out: Any) -> Any:
    """eigh's [n + 1, n] result with each eigenvector's largest component positive."""
    out = np.array(out, copy=True)
    vecs = out[..., 1:, :]
    pick = np.take_along_axis(vecs, np.abs(vecs).argmax(axis=-2)[..., None, :], axis=-2)
    out[..., 1:, :] = vecs * np.where(pick < 0, -1, 1)
    return out


def _ode_problem() -> tuple[Any, Any, Any]:
    """dy/dt = -k y from y0 = (1, 2), k = 0.7, staged as tb.ode_solve stages it."""
    from tensorbridge.runtime import ode

    p = ode._Problem(lambda t, y, k: -k * y, (2,), [(1,)], tb.get_backend("numpy"),
                     (0.5, 1.0, 2.0), 0.0, "rk45", 1e-9, 1e-9, 1000, "raise")
    p.times = np.asarray(p.times)
    y0, k = np.array([1.0, 2.0]), np.array([0.7])
    p.f(0.0, y0, [k])
    p.jac(0.0, y0, [k])
    return p, y0, k


CASES = _cases()


def _id(case: Any) -> str:
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_kernel_matches_numpy_kernel(case: Any) -> None:
    name, _, args, params, how = case
    params = dict(params)
    if name == "from_uniform_bits":
        u = params.pop("u")
        want = tb.get_backend("numpy").wrap(registry.get("numpy", name)(u, **params))
        got = tb.get_backend(PY).wrap(registry.get(PY, name)(u.tolist(), **params))
    else:
        want = run_kernel("numpy", name, args, params)
        got = run_kernel(PY, name, args, params)
    assert got.backend.name == PY
    assert isinstance(got._data, pb.PyArray)
    w = want.numpy()
    # the numpy kernels' documented dtypes: sum/prod of int32 stay int32, floor/ceil keep ints
    assert got.dtype is want.dtype, (got.dtype, want.dtype)
    g = got.numpy()
    assert g.shape == w.shape
    float32_inexact = got.dtype is tb.float32 and name not in (
        "add sub mul div sqrt square neg abs sign floor ceil round maximum minimum equal "
        "not_equal less less_equal greater greater_equal where clip reshape transpose "
        "broadcast_to concat gather_flat scatter_add_flat one_hot cast fill eye linspace "
        "from_uniform_bits isnan isfinite floordiv mod reciprocal arange argmax "
        "argmin sum prod cumsum max min".split())
    if how == EXACT and not float32_inexact and name == "clip":
        # NumPy 2 keeps the sign of a zero clipped at a zero bound (clip(-0.0, 0, 2) is
        # -0.0; NumPy 1.26 gives 0.0, as this backend does): equal values, NaN where NaN
        assert np.array_equal(g, w, equal_nan=True), (g, w)
    elif how == EXACT and not float32_inexact:
        assert same_bits(g, w), f"\n got {g!r}\nwant {w!r}"
    elif float32_inexact and how == EXACT and name == "logsumexp":  # float32 exp in NumPy
        err = check_close(g, w, got.dtype, n=max(1, args[0].size), op=name)
        assert err is None, err
    elif float32_inexact and how == EXACT:
        assert ulp_diff(g, w) <= 4, (g, w)
    elif how == "close":
        mag = None
        if name == "eigh":  # eigenvectors (rows 1:, one per column) up to sign
            g, w = _signs_fixed(g), _signs_fixed(w)
        if name in ("cholesky", "triangular_solve", "solve", "eigh") and w.size:
            mag = np.broadcast_to(np.nanmax(np.abs(w), axis=(-2, -1), keepdims=True), w.shape)
        n = args[0].shape[-1] if args[0].ndim else 1
        if name == "matmul":
            mag = np.matmul(np.abs(args[0].astype(float)), np.abs(args[1].astype(float)))
        err = check_close(g, w, got.dtype, n=max(n, 1), magnitude=mag, op=name)
        assert err is None, err
    elif isinstance(how, int):
        d = ulp_diff(g, w)
        assert d <= how, f"{d} ulp > {how}: got {g!r} want {w!r}"
    else:
        _, rel = how
        ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.isfinite(g) & np.isfinite(w) & (
            np.abs(g - w) <= rel * np.maximum(np.abs(w), 1.0)))
        assert ok.all(), f"\n got {g[~ok]!r}\nwant {w[~ok]!r}"


def test_every_kernel_is_registered_and_tested() -> None:
    table = tb.kernel_table()
    assert table.missing(PY) == []
    numpy_kernels = set(registry.kernels_for("numpy"))
    assert set(KERNEL_NAMES) <= numpy_kernels
    assert numpy_kernels <= set(registry.kernels_for(PY))
    assert numpy_kernels <= {c[0] for c in CASES} | {c[0] for c in _layer_cases()}


def test_registered_in_backend_table() -> None:
    assert "python" in tb.list_backends()
    be = tb.get_backend(PY)
    assert isinstance(be, pb.PythonBackend) and be.name == PY


# ------------------------------------------------------------------------------------------------
# the TensorFlow test's kernel table (where TensorFlow is installed): same tolerance policy
# ------------------------------------------------------------------------------------------------
def test_tensorflow_kernel_table_on_python_backend() -> None:
    pytest.importorskip("tensorflow")
    from . import test_tensorflow_backend as tft

    failures = []
    for case in tft.KERNEL_CASES:
        if case.params.get("num", 0) > 10_000 or case.params.get("n", 0) > 100 or (
                case.name == "arange" and abs(case.params["stop"]) > 10_000):
            continue  # the "device" sizes: slow in pure Python, covered by the table above
        want = tft._run("numpy", case)
        params = dict(case.params)
        if case.name == "from_uniform_bits":
            u = params.pop("u")
            got = tb.get_backend(PY).wrap(registry.get(PY, case.name)(u, **params))
        else:
            got = run_kernel(PY, case.name, case.args, params)
        in_dtype = next((str(a.dtype) for a in case.args if isinstance(a, np.ndarray)), "")
        expected = tft.DOCUMENTED_DTYPES.get((case.name, in_dtype), want.dtype.name)
        if got.dtype.name != expected or got.shape != want.shape:
            failures.append(f"{case}: {got.dtype}{got.shape} != {expected}{want.shape}")
            continue
        g, w = tft.canonical(case.name, got.numpy()), tft.canonical(case.name, want.numpy())
        w = w.astype(g.dtype)
        if got.dtype.kind == "f":
            model = tft._error_model(case)
            if case.name in ("cholesky", "triangular_solve", "solve", "eigh") and w.size:
                model["magnitude"] = np.broadcast_to(np.nanmax(np.abs(w), axis=(-2, -1),
                                                               keepdims=True), w.shape)
            err = check_close(g, w, got.dtype, **model)
            if err is not None:
                failures.append(f"{case}: {err}")
            elif case.signed_zero:
                zero = w == 0
                if not np.array_equal(np.signbit(g[zero]), np.signbit(w[zero])):
                    failures.append(f"{case}: signed zeros")
        elif not np.array_equal(g, w):
            failures.append(f"{case}: {g} != {w}")
    assert not failures, "\n".join(failures)


def test_backend_fixture_includes_python() -> None:
    """The op table (forward values, derivatives to second order, float32 against float64) and
    every other test taking the ``backend`` fixture run on this backend through
    ``tests/conftest.py``'s BACKENDS."""
    from tests.conftest import BACKENDS

    assert PY in BACKENDS
    assert {c.name for c in ops_table.CASES}  # the table those tests run is not empty


# ------------------------------------------------------------------------------------------------
# tensors, host transfer, grad, staging
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", list(tb.dtypes.DTYPES))
@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (1, 0, 2)])
def test_host_transfer_round_trips(dtype: str, shape: tuple[int, ...]) -> None:
    data = (rng().uniform(-5, 5, shape) * 3).astype(dtype)
    x = tb.tensor(data, backend=PY)
    assert x.backend.name == PY and x.dtype.name == dtype and x.shape == shape
    assert x.tolist() == data.tolist()
    np.testing.assert_array_equal(x.numpy(), data)
    assert x.numpy().dtype == data.dtype
    y = x.to("numpy")
    assert y.dtype.name == dtype
    np.testing.assert_array_equal(y.numpy(), data)
    z = y.to(PY)
    assert z.tolist() == data.tolist()
    m = tb.memory(PY)
    assert m["num_bytes"] >= data.nbytes


def test_float32_values_are_rounded() -> None:
    x = tb.tensor([0.1, 1e40, 1.0 + 2**-30], dtype="float32", backend=PY)
    assert x.tolist() == np.array([0.1, 1e40, 1.0 + 2**-30], np.float32).tolist()
    y = x * 3.0
    assert y.dtype is tb.float32
    assert y.tolist() == (np.array([0.1, 1e40, 1.0 + 2**-30], np.float32)
                          * np.float32(3.0)).tolist()


def test_python_lists_and_scalars() -> None:
    x = tb.tensor([[1, 2], [3, 4]], backend=PY)
    assert x.dtype is tb.int32
    assert (x + 1).tolist() == [[2, 3], [4, 5]]
    assert (x / 2).dtype is tb.float32
    assert tb.tensor(True, backend=PY).tolist() is True
    assert tb.tensor(2.5, dtype="float64", backend=PY).item() == 2.5
    from tensorbridge.runtime.host_arrays import HostList

    values = [1.5, 2, np.float64(0.25)]  # what hosts without NumPy hand over: mixed types
    raw = pb.as_raw(HostList(values, (3,), tb.float64))
    assert [type(v) for v in raw._data] == [float] * 3 and raw._data is not values
    assert pb.as_raw(HostList([1, 2**40], (2,), tb.int32))._data == [1, 0]  # wraps as NumPy


def _numpy_and_python(fn: Any, *arrays: np.ndarray) -> tuple[Any, Any]:
    a = fn(*[tb.tensor(x, backend="numpy") for x in arrays])
    b = fn(*[tb.tensor(x, backend=PY) for x in arrays])
    return a, b


GRAD_FUNCTIONS = {
    "sum-of-squares": lambda x: (x * x).sum(),
    "logsumexp-tanh": lambda x: tb.logsumexp(tb.tanh(x) * 2.0),
    "index-exp": lambda x: tb.exp(x[1:]).sum() + x[0] * x[2],
    "matmul": lambda x: tb.matmul(x.reshape((2, 2)), x.reshape((2, 2))).sum(),
    "sigmoid-softplus-where": lambda x: tb.where(x > 0, tb.sigmoid(x), tb.softplus(x)).sum(),
    "cumsum-max": lambda x: tb.cumsum(x * x, 0).max() + tb.sqrt(tb.abs(x) + 1.0).sum(),
}


@pytest.mark.parametrize("name", list(GRAD_FUNCTIONS))
def test_grad_matches_numpy_backend(name: str) -> None:
    x = np.array([0.3, -1.2, 2.0, 0.7])
    fn = GRAD_FUNCTIONS[name]
    want, got = _numpy_and_python(tb.grad(fn), x)
    assert got.backend.name == PY and got.dtype is tb.float64
    err = check_close(got.numpy(), want.numpy(), "float64", n=8, ulps=8)
    assert err is None, err
    v_want, v_got = _numpy_and_python(fn, x)
    err = check_close(v_got.numpy(), v_want.numpy(), "float64", n=8, ulps=8)
    assert err is None, err


def test_staged_function_replays_exactly() -> None:
    def f_(x, w):
        h = tb.tanh(tb.matmul(w, x))
        return tb.logsumexp(h * 2.0 - 1.0) + (x[1:] * x[:-1]).sum(), tb.maximum(h, 0.0)

    staged = tb.function(f_)
    x = tb.tensor(wide((5,)), backend=PY)
    w = tb.tensor(f((3, 5)), backend=PY)
    eager = f_(x, w)
    for _ in range(3):  # traced once, then replayed
        out = staged(x, w)
        assert all(isinstance(o._data, pb.PyArray) for o in out)
        assert [o.tolist() for o in out] == [o.tolist() for o in eager]
    assert staged(x, w)[0].backend.name == PY
    # value_and_grad through the staged program
    vg = tb.function(tb.value_and_grad(lambda x: (tb.exp(x) * x).sum()))
    v1, g1 = vg(x)
    v2, g2 = tb.value_and_grad(lambda x: (tb.exp(x) * x).sum())(x)
    assert v1.tolist() == v2.tolist() and g1.tolist() == g2.tolist()
    _v3, g3 = vg(x)
    assert g3.tolist() == g2.tolist()


def test_scalars_and_constants_inside_staging() -> None:
    staged = tb.function(lambda x: x * 0.0 + x * 1.0 + tb.where(x > 100.0, x, x) - 0.0)
    x = tb.tensor([1.5, -2.0], dtype="float64", backend=PY)
    assert staged(x).tolist() == [3.0, -4.0]
    assert staged(x).tolist() == [3.0, -4.0]


def test_to_numpy_without_numpy_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    x = tb.tensor([1.0, 2.0], dtype="float64", backend=PY)
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(ImportError, match="python backend: to_numpy"):
        x.numpy()


def test_gather_with_pure_plans() -> None:
    """The flat-list positions of plans made without NumPy give the same results."""
    from tensorbridge.runtime.ops.indexing import IndexArray

    x = pb.as_raw(np.arange(12.0).reshape(3, 4))
    plan = IndexPlan((0,), (3, 4))
    plan._init_pure((IndexArray([2, 0, 2], (3,), False), slice(1, 3)), (3, 4))
    assert isinstance(plan.flat_positions(), list)
    g = registry.get(PY, "gather_flat")(x, index=plan)
    assert g.tolist() == [[9.0, 10.0], [1.0, 2.0], [9.0, 10.0]]
    s = registry.get(PY, "scatter_add_flat")(g, index=plan, shape=(3, 4))
    assert s.tolist() == [[0.0, 1.0, 2.0, 0.0], [0.0] * 4, [0.0, 18.0, 20.0, 0.0]]


NO_NUMPY_SCRIPT = textwrap.dedent("""
    import sys
    sys.modules["numpy"] = None  # import numpy raises ImportError from here on
    import tensorbridge as tb
    from tensorbridge.runtime import host_namespace
    assert host_namespace.NAME == "pure"
    tb.set_backend("python")
    x = tb.tensor([0.5, -1.5, 2.0, 3.25], dtype="float64")
    assert x.backend.name == "python", x.backend
    y = tb.exp(x) * 2.0 + x[1:3].sum() - tb.logsumexp(x)
    print("values", y.tolist())
    s = tb.tensor([1e16, 1.0, -1e16] + [0.1] * 9, dtype="float64").sum().item()
    print("sum", repr(s))
    g = tb.grad(lambda t: (tb.tanh(t) * t).sum())(x)
    print("grad", g.tolist())
    f = tb.function(lambda t: tb.matmul(t.reshape((2, 2)), t.reshape((2, 2))).sum() * t)
    a, b = f(x).tolist(), f(x).tolist()
    assert a == b
    print("staged", a)
    m = tb.tensor([[4.0, 2.0], [2.0, 3.0]], dtype="float64")
    print("chol", tb.cholesky(m).tolist())
    print("int", (tb.tensor([1, 2, 3], dtype="int64") * 3).tolist())
    try:
        x.numpy()
    except ImportError as e:
        print("numpy-error", "python backend" in str(e))
""")


def test_runs_without_numpy() -> None:
    env = dict(os.environ, TENSORBRIDGE_PPL_ARRAYS="pure", TENSORBRIDGE_BACKEND="python")
    out = subprocess.run([sys.executable, "-c", NO_NUMPY_SCRIPT], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.strip().splitlines())
    x = np.array([0.5, -1.5, 2.0, 3.25])
    want = np.exp(x) * 2.0 + x[1:3].sum() - _np_logsumexp(x)
    assert eval(lines["values"]) == want.tolist()
    assert float(lines["sum"]) == float(np.sum(np.array([1e16, 1.0, -1e16] + [0.1] * 9)))
    gw = tb.grad(lambda t: (tb.tanh(t) * t).sum())(tb.tensor(x)).numpy()
    err = check_close(np.array(eval(lines["grad"])), gw, "float64", ulps=8)
    assert err is None, err
    mm = (x.reshape(2, 2) @ x.reshape(2, 2)).sum() * x
    assert np.allclose(eval(lines["staged"]), mm, rtol=1e-15)
    np.testing.assert_allclose(eval(lines["chol"]), np.linalg.cholesky([[4.0, 2.0], [2.0, 3.0]]),
                               rtol=1e-15)
    assert eval(lines["int"]) == [3, 6, 9]
    assert lines["numpy-error"] == "True"


def _np_logsumexp(x: np.ndarray) -> float:
    tb.get_backend("numpy")  # (its kernels register when it loads)
    return registry.get("numpy", "logsumexp")(x, axis=(0,), keepdims=False)


# ------------------------------------------------------------------------------------------------
# cost on small arrays (printed with -s; a loose bound keeps a pathological slowdown visible)
# ------------------------------------------------------------------------------------------------
def test_small_array_cost() -> None:
    out = {}
    for be in ("numpy", PY):
        a = tb.tensor(f((8,)), backend=be)
        b = tb.tensor(f((8,), seed=1), backend=be)
        big = tb.tensor(f((1000,)), backend=be)
        for label, fn in (("add8", lambda a=a, b=b: a + b), ("exp8", lambda a=a: tb.exp(a)),
                          ("exp1000", lambda big=big: tb.exp(big)),
                          ("sum1000", lambda big=big: big.sum())):
            n = 200
            out[(be, label)] = min(timeit.repeat(fn, number=n, repeat=3)) / n * 1e6
    print({f"{k[0]}/{k[1]}": round(v, 2) for k, v in out.items()}, "us per op")
    assert out[(PY, "add8")] < 200  # microseconds; eager overhead dominates at this size


# ------------------------------------------------------------------------------------------------
# the layers' fused kernels (layer_kernels.py): against the numpy ones on the same inputs
# ------------------------------------------------------------------------------------------------
def _layer_cases() -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    cs = []
    for dt in ("float64", "float32"):
        p, g, m = f((3, 4), dt), f((3, 4), dt, 1), f((3, 4), dt, 2)
        v = np.abs(f((3, 4), dt, 3))
        a = np.array(0.01, dt)
        cs.append(("layers.adam_step", (p, g, m, v, a),
                   {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}))
        for nest in (False, True):
            cs.append(("layers.sgd_momentum_step", (p, g, m, a),
                       {"momentum": 0.9, "nesterov": nest}))
        cs.append(("layers.rmsprop_step", (p, g, v, a), {"rho": 0.9, "epsilon": 1e-7}))
        z = f((5, 7), dt, 4) * 3
        labels = ints((5,), "int32", 5, 0, 7)
        for red in ("none", "mean"):
            cs.append(("layers.sparse_softmax_ce", (z, labels), {"reduce": red}))
            gg = np.array(0.7, dt) if red == "mean" else f((5,), dt, 6)
            cs.append(("layers.sparse_softmax_ce_grad", (z, labels, gg), {"reduce": red}))
        table = f((6, 3), dt, 7)
        idx = np.array([[0, 5], [2, 0], [-1, 3]], "int32")
        cs.append(("layers.gather_rows", (table, idx), {}))
        cs.append(("layers.scatter_add_rows", (f((3, 2, 3), dt, 8), idx), {"num_rows": 6}))
    return cs


@pytest.mark.parametrize("case", _layer_cases(), ids=lambda c: f"{c[0]}-{c[1][0].dtype}")
def test_layer_kernels_match_numpy(case: Any) -> None:
    name, args, params = case
    want = run_kernel("numpy", name, args, params).numpy()
    got = run_kernel(PY, name, args, params).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype == np.float64 or "sparse" not in name:  # the same steps: bit for bit
        assert same_bits(got, want), (got, want)
    else:  # exp and log in float32: NumPy's own float32 loops
        assert ulp_diff(got, want) <= 4, (got, want)


def test_layer_kernels_reject_bad_labels() -> None:
    z = pb.as_raw(f((2, 3)))
    with pytest.raises(ValueError, match="class ids"):
        registry.get(PY, "layers.sparse_softmax_ce")(z, pb.as_raw(np.array([0, 3])),
                                                     reduce="none")


def test_sums_with_reduce_as_on_python_312(monkeypatch: pytest.MonkeyPatch) -> None:
    """From Python 3.12 (Pyodide) the backend adds with functools.reduce instead of sum():
    the same bits as NumPy either way."""
    from functools import reduce

    monkeypatch.setattr(pb, "_seq", lambda values, start: reduce(lambda a, b: a + b, values,
                                                                 start))
    for n in (5, 8, 77, 129, 1000):
        x = wide((3, n), n)
        for ax in ((1,), (0,), (0, 1)):
            want = run_kernel("numpy", "sum", (x,), {"axis": ax, "keepdims": False}).numpy()
            got = run_kernel(PY, "sum", (x,), {"axis": ax, "keepdims": False}).numpy()
            assert same_bits(got, want), (n, ax)
    a, b = ints((4, 5), "int64"), ints((5, 3), "int64", 1)
    assert same_bits(run_kernel(PY, "matmul", (a, b), {}).numpy(), a @ b)


def test_integer_powers_and_wrapping() -> None:
    with pytest.raises(ValueError, match="negative integer powers"):
        run_kernel(PY, "pow", (np.array([2, 3]), np.array([1, -1])), {})
    big = np.array([2**62, 3], "int64")
    want = run_kernel("numpy", "mul", (big, big), {}).numpy()
    assert same_bits(run_kernel(PY, "mul", (big, big), {}).numpy(), want)


MODEL_SCRIPT = textwrap.dedent("""
    import json, random
    import tensorbridge as tb
    from tensorbridge.runtime import host_namespace
    assert host_namespace.NAME == "pure"
    tb.set_model_backend("python")
    rnd = random.Random(0)
    data = [rnd.gauss(1.5, 1.0) for _ in range(20)]
    mu = tb.normal(0.0, 10.0)
    tb.distribution(tb.as_data(data), tb.normal(mu, 1.0))
    m = tb.model(mu)
    assert m.backend.name == "python", m.backend
    d = tb.mcmc(m, n_samples=400, warmup=300, chains=2, seed=3, progress=False)
    print(json.dumps({"data": data, "mean": d["mu"].mean(), "var": d["mu"].var(),
                      "divergences": int(sum(d.divergences) if hasattr(d.divergences, "__len__")
                                         else d.divergences)}))
""")


def test_mcmc_on_python_backend_with_pure_host_arrays() -> None:
    """A model staged on this backend and sampled by NUTS with the pure-Python host arrays
    (what Pyodide runs), on the conjugate normal model."""
    env = dict(os.environ, TENSORBRIDGE_PPL_ARRAYS="pure")
    out = subprocess.run([sys.executable, "-c", MODEL_SCRIPT], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    res = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    y = np.array(res["data"])
    post_var = 1.0 / (1.0 / 100.0 + y.size)
    post_mean = post_var * y.sum()
    assert res["divergences"] == 0
    assert abs(res["mean"] - post_mean) < 4 * math.sqrt(post_var / 100)
    assert 0.6 * post_var < res["var"] < 1.5 * post_var


def test_raw_arrays_keep_their_dtype_for_numpy() -> None:
    raw = pb.as_raw(np.array([[1, -2]], "int32"))
    assert isinstance(raw, python_arrays.ndarray)
    arr = np.asarray(raw)
    assert arr.dtype == np.int32 and arr.tolist() == [[1, -2]]
    assert "int32" in repr(raw)
    f32 = pb.as_raw(np.array([0.1], "float32"))
    assert np.asarray(f32).dtype == np.float32 and np.asarray(f32)[0] == np.float32(0.1)


def test_singular_triangular_solve_raises_like_numpy() -> None:
    a = np.array([[1.0, 0.0], [2.0, 0.0]])
    b = np.ones((2, 1))
    p = {"lower": True, "transpose_a": False}
    with pytest.raises(ValueError):
        run_kernel("numpy", "triangular_solve", (a, b), p)
    with pytest.raises(ValueError, match="Singular"):
        run_kernel(PY, "triangular_solve", (a, b), p)
