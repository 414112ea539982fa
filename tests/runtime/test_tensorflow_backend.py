"""The TensorFlow backend: every kernel against the NumPy kernel on the same inputs (values and
dtypes), host transfers, backend mixing, memory accounting, and ``tb.function`` graphs.

Skipped when TensorFlow is not installed, unless ``TENSORBRIDGE_REQUIRE_TF=1`` (``make test``),
which turns a missing TensorFlow into a failure.
"""

from __future__ import annotations

import gc
import math
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

if os.environ.get("TENSORBRIDGE_REQUIRE_TF") == "1":
    import tensorflow as tf  # required: an ImportError here fails the run loudly
else:
    tf = pytest.importorskip("tensorflow")

import tensorbridge as tb
from tensorbridge.runtime.kernels import KERNEL_NAMES, registry
from tensorbridge.runtime.ops.indexing import IndexPlan
from tensorbridge.runtime.testing import check_close

from .test_ops_table import CASES

TF = "tensorflow"

# (kernel, input dtype) -> the result dtype the TF kernel must give, where it is the dtype the
# runtime documents rather than whatever the NumPy kernel gives: np.sum/np.prod widen int32 to the
# platform int64 unless given dtype=, and np.floor/np.ceil turn integers into float64 on NumPy 1.x.
# Values are compared either way.
DOCUMENTED_DTYPES: dict[tuple[str, str], str] = {
    ("sum", "int32"): "int32",
    ("prod", "int32"): "int32",
    ("floor", "int32"): "int32",
    ("floor", "int64"): "int64",
    ("ceil", "int32"): "int32",
    ("ceil", "int64"): "int64",
}


# ------------------------------------------------------------------------------------------------
# kernel table: the same raw inputs through the NumPy kernel and the TensorFlow kernel
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class S:
    """A Python scalar operand: each backend gets ``backend.scalar(value, other operand dtype)``."""

    value: Any


@dataclass
class K:
    name: str
    args: tuple[Any, ...]
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    signed_zero: bool = False  # also compare the sign of zero results

    def __post_init__(self) -> None:
        self.args = tuple(a if isinstance(a, S) else np.asarray(a) for a in self.args)

    def __str__(self) -> str:
        return f"{self.name}-{self.label}" if self.label else self.name


NAN, INF = float("nan"), float("inf")
SPECIAL = np.array([-3.5, -1.0, -0.5, -0.0, 0.0, 0.3, 1.0, 2.5, 7.0, NAN, INF, -INF])


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def f(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0, lo=-3.0, hi=3.0):
    return rng(seed).uniform(lo, hi, shape).astype(dtype)


def ints(shape: tuple[int, ...], dtype: str = "int32", seed: int = 0, lo=-9, hi=10):
    return rng(seed).integers(lo, hi, shape).astype(dtype)


def bools(shape: tuple[int, ...], seed: int = 0):
    return rng(seed).uniform(size=shape) > 0.5


def _cases() -> list[K]:
    cs: list[K] = []
    float_unary = ("neg abs sign exp log log1p expm1 sqrt rsqrt square reciprocal tanh sigmoid "
                   "softplus sin cos tan erf erfc lgamma digamma floor ceil round isnan "
                   "isfinite arcsin arccos arctan arcsinh arccosh arctanh").split()
    rounding = np.array([-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, 3.5, 0.49999997, -7.6])
    for dt in ("float32", "float64"):
        for name in float_unary:
            sz = name in ("neg", "abs", "floor", "ceil", "round", "rsqrt", "digamma", "sign")
            cs.append(K(name, (SPECIAL.reshape(3, 4).astype(dt),), label=f"{dt}-special",
                        signed_zero=sz))
            cs.append(K(name, (np.array(0.75, dt),), label=f"{dt}-0d"))
            cs.append(K(name, (np.zeros((0, 3), dt),), label=f"{dt}-empty"))
        for name in ("round", "floor", "ceil"):
            cs.append(K(name, (rounding.astype(dt),), label=f"{dt}-halves", signed_zero=True))
        for n in (0, 1, 2, 3):
            x = np.array([-3.5, -1.0, -0.5, 0.0, 0.3, 1.0, 2.5, 7.0, 40.0, INF, -INF, -2.0], dt)
            cs.append(K("polygamma", (x,), {"n": n}, f"{dt}-n{n}"))
        cs.append(K("polygamma", (np.array(1.5, dt),), {"n": 2}, f"{dt}-0d"))
    for dt in ("int32", "int64"):
        # (NumPy's floor/ceil go through float64: keep int64 values exact in a double)
        x = np.array([np.iinfo(dt).min + 1 if dt == "int32" else -(2**53), -7, -1, 0, 1, 3,
                      100], dt)
        for name in ("neg abs sign square floor ceil round isnan isfinite logical_not").split():
            cs.append(K(name, (x,), label=dt))
            cs.append(K(name, (np.zeros((2, 0), dt),), label=f"{dt}-empty"))
    for name in ("logical_not", "abs", "isnan", "isfinite"):
        cs.append(K(name, (bools((3, 2)),), label="bool"))
    for name in ("logical_not", "isnan"):
        cs.append(K(name, (np.array(True),), label="bool-0d"))
    # cast: every pair of dtypes (float -> int only on in-range, non-NaN values)
    finite = np.array([-2.7, -1.0, -0.5, 0.0, 0.25, 1.0, 3.9, 1e6])
    for src in ("bool", "int32", "int64", "float32", "float64"):
        x = {"bool": bools((8,)), "int32": ints((8,)), "int64": ints((8,), "int64")}.get(
            src, finite.astype(src) if src.startswith("float") else None)
        for dst in tb.dtypes.DTYPES:
            if dst != src:
                cs.append(K("cast", (x,), {"dtype": tb.dtypes.as_dtype(dst)}, f"{src}-{dst}"))
    cs.append(K("cast", (np.array([NAN, INF, -0.0, 2.0]),), {"dtype": tb.bool_},
                "float64-specials-bool"))
    cs.append(K("cast", (np.zeros((0,), "float32"),), {"dtype": tb.int32}, "empty"))

    # binary, with broadcasting, scalars, empty and 0-d operands
    shapes = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3), ()), ((0, 3), (3,)),
              ((), ()), ((2, 1, 3), (4, 1))]
    arith = "add sub mul div maximum minimum pow floordiv mod".split()
    compare = "equal not_equal less less_equal greater greater_equal".split()
    for dt in ("float32", "float64", "int32", "int64"):
        for i, (sa, sb) in enumerate(shapes):
            if dt.startswith("float"):
                a, b = f(sa, dt, seed=i), f(sb, dt, seed=i + 50)
            else:
                a, b = ints(sa, dt, seed=i), ints(sb, dt, seed=i + 50)
            for name in arith + compare:
                bb = b
                if name == "pow":
                    a_, bb = (np.abs(a) + 0.5).astype(dt) if dt.startswith("f") else a, np.abs(b)
                    if dt.startswith("i"):
                        bb = (np.abs(b) % 4).astype(dt)
                    cs.append(K(name, (a_, bb), label=f"{dt}-{sa}-{sb}"))
                    continue
                cs.append(K(name, (a, bb), label=f"{dt}-{sa}-{sb}",
                            signed_zero=name in ("floordiv", "mod")))
        # Python scalars on either side
        x = f((2, 3), dt) if dt.startswith("f") else ints((2, 3), dt)
        for name in arith + compare:
            for v in (2, 3.5, -1.5, 0.0) if dt.startswith("f") else (2, -3, 7):
                if name == "pow" and dt.startswith("i") and v < 0:
                    continue
                xx = np.abs(x) + (0.5 if dt.startswith("f") else 0) if name == "pow" else x
                xx = xx.astype(dt)
                cs.append(K(name, (xx, S(v)), label=f"{dt}-tensor-scalar{v}"))
                if name != "pow":
                    cs.append(K(name, (S(v), xx), label=f"{dt}-scalar{v}-tensor"))
    # NumPy's floor division and modulo corners: negative operands, zero and -1 divisors,
    # signed zeros, infinities, NaN and 1 // 0.1 == 9
    xs = np.array([7.0, -7.0, 7.0, -7.0, 0.0, -0.0, 5.0, -5.0, 1.0, INF, 3.0, NAN, 0.0, 5.0])
    ys = np.array([2.0, 2.0, -2.0, -2.0, -3.0, 3.0, 0.0, 0.0, 0.1, 2.0, INF, 1.0, 0.0, -INF])
    for dt in ("float32", "float64"):
        for name in ("floordiv", "mod"):
            cs.append(K(name, (xs.astype(dt), ys.astype(dt)), label=f"{dt}-corners",
                        signed_zero=True))
    for dt in ("int32", "int64"):
        lo = np.iinfo(dt).min
        xi = np.array([7, -7, 7, -7, 0, 5, -5, lo, lo, 9], dt)
        yi = np.array([2, 2, -2, -2, -3, 0, 0, -1, 1, -1], dt)
        for name in ("floordiv", "mod"):
            cs.append(K(name, (xi, yi), label=f"{dt}-corners"))
        cs.append(K("pow", (np.array([2, -3, 0, 5, 0], dt), np.array([3, 3, 0, 0, 5], dt)),
                    label=f"{dt}-corners"))
    for dt in ("float32", "float64"):
        a = np.array([NAN, 1.0, NAN, -INF, 2.0, -0.0])
        b = np.array([1.0, NAN, NAN, INF, 2.0, 0.0])
        for name in ["maximum", "minimum", "pow", "div", *compare]:
            cs.append(K(name, (a.astype(dt), b.astype(dt)), label=f"{dt}-nan"))
    for name in compare:
        cs.append(K(name, (bools((3, 1)), bools((1, 4), 1)), label="bool"))
        cs.append(K(name, (bools((3,)), S(True)), label="bool-scalar"))
    for name in ("logical_and", "logical_or"):
        cs.append(K(name, (bools((3, 1)), bools((1, 4), 1)), label="bool-bcast"))
        cs.append(K(name, (bools((2, 2)), S(False)), label="bool-scalar"))
        cs.append(K(name, (np.zeros((0,), bool), np.array(True)), label="bool-empty"))
    for dt in ("float32", "float64", "int32", "bool"):
        x = f((2, 3), dt) if dt.startswith("f") else (ints((2, 3), dt) if dt != "bool"
                                                       else bools((2, 3)))
        y = x[::-1].copy()
        cs.append(K("where", (bools((2, 1)), x, y), label=f"{dt}-bcast"))
        cs.append(K("where", (bools((2, 3)), x[0], np.array(x[0, 0])), label=f"{dt}-bcast2"))
    cs.append(K("where", (np.zeros((0, 3), bool), f((3,)), f((1, 3))), label="empty"))
    # clip: float and int tensors, int and float bounds, infinite bounds, NaN passes through
    for dt in ("float32", "float64"):
        x = np.array([-5.0, -0.5, 0.0, 0.3, 2.0, NAN, INF, -INF], dt)
        for lo, hi in ((-1.0, 1.0), (-INF, 0.5), (0, 2), (-0.25, INF)):
            cs.append(K("clip", (x,), {"lo": lo, "hi": hi}, f"{dt}-{lo}-{hi}"))
    for dt in ("int32", "int64"):
        x = ints((3, 3), dt)
        for lo, hi in ((-2, 3), (0.5, 2.5), (-INF, 4.0), (-3, INF), (-(2**40), 2**40)):
            cs.append(K("clip", (x,), {"lo": lo, "hi": hi}, f"{dt}-{lo}-{hi}"))

    # reductions
    axes_for = {2: [(), (0,), (1,), (0, 1)], 3: [(0, 2), (1,), (0, 1, 2)], 0: [()]}
    for dt in ("float32", "float64", "int32", "int64"):
        for shape in ((3, 4), (2, 3, 4), ()):
            x = f(shape, dt, lo=-2, hi=2) if dt.startswith("f") else ints(shape, dt, lo=-3, hi=4)
            for ax in axes_for[len(shape)]:
                for kd in (False, True):
                    for name in ("sum", "prod", "max", "min"):
                        cs.append(K(name, (x,), {"axis": ax, "keepdims": kd},
                                    f"{dt}-{shape}-{ax}-{kd}"))
                    if dt.startswith("f"):
                        cs.append(K("logsumexp", (x,), {"axis": ax, "keepdims": kd},
                                    f"{dt}-{shape}-{ax}-{kd}"))
        x = np.zeros((0, 3), dt)
        for ax in ((0,), (1,), (0, 1)):
            cs.append(K("sum", (x,), {"axis": ax, "keepdims": False}, f"{dt}-empty-{ax}"))
            cs.append(K("prod", (x,), {"axis": ax, "keepdims": True}, f"{dt}-empty-{ax}"))
            if dt.startswith("f"):
                cs.append(K("logsumexp", (x,), {"axis": ax, "keepdims": False},
                            f"{dt}-empty-{ax}"))
        cs.append(K("max", (x,), {"axis": (1,), "keepdims": False}, f"{dt}-empty-rows"))
    for dt in ("float32", "float64"):
        x = np.array([[NAN, 1.0, 2.0], [-INF, -INF, -INF], [INF, 1.0, -INF], [1e30, 1e30, 0.0],
                      [-1e4, -1e4 - 1, -1e4 + 2]], dt)
        for name in ("max", "min", "logsumexp", "sum"):
            cs.append(K(name, (x,), {"axis": (1,), "keepdims": False}, f"{dt}-special"))
    for name in ("max", "min"):
        cs.append(K(name, (bools((3, 4)),), {"axis": (1,), "keepdims": False}, "bool"))
    for dt in ("float32", "float64", "int32", "int64", "bool"):
        x = {"bool": bools((4, 5), 3)}.get(dt)
        if x is None:
            x = (rng(3).integers(0, 3, (4, 5)).astype(dt))  # many ties
        for name in ("argmax", "argmin"):
            for ax in (0, 1):
                cs.append(K(name, (x,), {"axis": ax}, f"{dt}-ties-{ax}"))
    for dt in ("float32", "float64"):
        x = np.array([[1.0, NAN, 3.0, NAN], [INF, -INF, INF, 0.0], [2.0, 2.0, -1.0, -1.0]], dt)
        for name in ("argmax", "argmin"):
            for ax in (0, 1):
                cs.append(K(name, (x,), {"axis": ax}, f"{dt}-nan-{ax}"))
        cs.append(K("argmax", (f((2, 3, 4), dt),), {"axis": 1}, f"{dt}-3d"))
    for dt in ("float32", "float64", "int32", "int64"):
        x = f((3, 4), dt) if dt.startswith("f") else ints((3, 4), dt)
        for ax in (0, 1):
            for rev in (False, True):
                cs.append(K("cumsum", (x,), {"axis": ax, "reverse": rev}, f"{dt}-{ax}-{rev}"))
        cs.append(K("cumsum", (np.zeros((0, 2), dt),), {"axis": 0, "reverse": True},
                    f"{dt}-empty"))

    # shape and data movement
    x = f((2, 3, 4))
    cs += [
        K("reshape", (x,), {"shape": (4, 6)}, "2d"),
        K("reshape", (np.array([5.0]),), {"shape": ()}, "to-0d"),
        K("reshape", (np.array(5, "int32"),), {"shape": (1, 1)}, "from-0d"),
        K("reshape", (np.zeros((0, 4)),), {"shape": (2, 0, 2)}, "empty"),
        K("transpose", (x,), {"perm": (2, 0, 1)}, "3d"),
        K("transpose", (bools((2, 3)),), {"perm": (1, 0)}, "bool"),
        K("transpose", (np.array(1.0),), {"perm": ()}, "0d"),
        K("broadcast_to", (f((3, 1)),), {"shape": (2, 3, 4)}, "f"),
        K("broadcast_to", (np.array(2, "int64"),), {"shape": (0, 3)}, "0d-to-empty"),
        K("concat", (f((2, 3)), f((2, 1), seed=1), f((2, 0))), {"axis": 1}, "3"),
        K("concat", (ints((1, 2)), ints((3, 2), seed=2)), {"axis": 0}, "int"),
        K("concat", (bools((2,)), bools((0,))), {"axis": 0}, "bool-empty"),
    ]
    # indexing: gather_flat / scatter_add_flat through every strategy of the TF kernels
    i64 = np.array
    indices: list[tuple[str, tuple[int, ...], Any]] = [
        ("slice", (3, 5), (slice(1, None), slice(None, None, 2))),
        ("neg-step", (4, 5), (slice(None, None, -1), slice(3, 0, -2))),
        ("out-of-range-slice", (4,), slice(-10, 10)),
        ("empty-slice", (4, 3), (slice(3, 1),)),
        ("int", (3, 2), 1),
        ("neg-int", (3, 4), (-1, -2)),
        ("scalar-result", (2, 3), (1, 2)),
        ("newaxis-ellipsis", (2, 3), (None, Ellipsis, 0)),
        ("ellipsis-mid", (2, 3, 4), (0, Ellipsis, slice(1, 3))),
        ("np-int", (3, 3), (np.int64(2), slice(None))),
        ("0d-input", (), ()),
        ("0d-input-newaxis", (), (None,)),
        ("take-rows-dups", (4, 3), (i64([0, 0, 3, -1]),)),
        ("take-axis1", (2, 5, 3), (slice(None), i64([4, -5, 2, 2]))),
        ("take-2d-idx", (5, 2), (i64([[0, 1], [4, 4]]),)),
        ("take-trailing-ellipsis", (3, 4), (i64([2, 0]), Ellipsis)),
        ("take-0d-array", (3, 4), (slice(None), np.array(2))),
        ("take-empty", (3, 4), (i64([], dtype=np.int64),)),
        ("mask-1d", (3, 2), (np.array([True, False, True]),)),
        ("mask-axis1", (2, 3), (slice(None), np.array([False, True, True]))),
        ("mask-2d", (2, 3), (np.array([[True, False, True], [False, False, True]]),)),
        ("two-arrays", (3, 4), (i64([0, 2, 2]), i64([1, 3, 1]))),
        ("array-slice-array", (3, 4, 5), (i64([0, 1]), slice(1, 3), i64([4, 4]))),
        ("array-with-int", (3, 4), (1, i64([3, 0, 3]))),
        ("array-newaxis", (3, 4), (None, i64([2, 1]))),
        ("bool-scalar", (3,), True),
    ]
    for label, shape, index in indices:
        plan = IndexPlan(index, shape)
        for dt in ("float64", "int32", "bool"):
            x = f(shape, dt) if dt == "float64" else (ints(shape) if dt == "int32" else
                                                      bools(shape))
            cs.append(K("gather_flat", (x,), {"index": plan}, f"{label}-{dt}"))
            u = f(plan.out_shape, dt, seed=5) if dt == "float64" else (
                ints(plan.out_shape, seed=5) if dt == "int32" else bools(plan.out_shape, 5))
            cs.append(K("scatter_add_flat", (u,), {"index": plan, "shape": shape},
                        f"{label}-{dt}"))
    for dt in ("int32", "int64"):
        idx = np.array([[0, 2], [-1, 5]], dt)
        for odt in ("float32", "float64", "int32", "bool"):
            cs.append(K("one_hot", (idx,), {"depth": 4, "dtype": tb.dtypes.as_dtype(odt)},
                        f"{dt}-{odt}"))
        cs.append(K("one_hot", (np.array(1, dt),), {"depth": 3, "dtype": tb.float32},
                    f"{dt}-0d"))
        cs.append(K("one_hot", (np.zeros((0,), dt),), {"depth": 0, "dtype": tb.float32},
                    f"{dt}-empty"))

    # linear algebra
    for dt in ("float32", "float64", "int32", "int64"):
        def mk(s, seed=0, dt=dt):
            return f(s, dt, seed) if dt.startswith("f") else ints(s, dt, seed, -4, 5)

        for sa, sb in (((3, 4), (4, 5)), ((2, 3, 4), (4, 2)), ((2, 1, 3, 4), (5, 4, 2)),
                       ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)),
                       ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((3, 1), (1, 3))):
            cs.append(K("matmul", (mk(sa), mk(sb, 1)), label=f"{dt}-{sa}-{sb}"))
    for dt in ("float32", "float64"):
        a = f((2, 3, 3), dt, 4)
        spd = (a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)).astype(dt)
        cs.append(K("cholesky", (spd,), label=f"{dt}-batch"))
        cs.append(K("cholesky", (spd[0],), label=f"{dt}-2d"))
        cs.append(K("cholesky", (np.zeros((2, 0, 0), dt),), label=f"{dt}-empty"))
        for lower in (True, False):
            band = np.tril if lower else np.triu
            tri = band(f((3, 3), dt, 6) * 0.3 + 2 * np.eye(3)).astype(dt)
            tris = band(f((2, 3, 3), dt, 7) * 0.3 + 2 * np.eye(3)).astype(dt)
            for tr in (False, True):
                p = {"lower": lower, "transpose_a": tr}
                cs.append(K("triangular_solve", (tri, f((3, 2), dt, 7)), p,
                            f"{dt}-{lower}-{tr}"))
                cs.append(K("triangular_solve", (tris, f((2, 3, 1), dt, 8)), p,
                            f"{dt}-batch-{lower}-{tr}"))
        general = (f((3, 3), dt, 9) * 0.3 + 2 * np.eye(3)).astype(dt)
        cs.append(K("solve", (general, f((3, 2), dt, 10)), label=f"{dt}-2d"))
        cs.append(K("solve", (f((2, 3, 3), dt, 11) * 0.3 + 2 * np.eye(3, dtype=dt),
                              f((2, 3, 1), dt, 12)), label=f"{dt}-batch"))
        # well separated eigenvalues (1, 2, 4 plus small terms): vectors to working accuracy
        q = np.linalg.qr(f((3, 3), np.float64, 13))[0]
        sym = (q @ np.diag([1.0, 2.0, 4.0]) @ q.T).astype(dt)
        cs.append(K("eigh", (sym,), label=f"{dt}-2d"))
        cs.append(K("eigh", (np.stack([sym, np.diag([3.0, -1.0, 0.5]).astype(dt)]),),
                    label=f"{dt}-batch"))
        cs.append(K("eigh", (np.tril(sym) + np.triu(f((3, 3), dt, 14), 1),),
                    label=f"{dt}-lower-read"))

    # creation
    for dt in tb.dtypes.DTYPES:
        d = tb.dtypes.as_dtype(dt)
        cs.append(K("fill", (), {"shape": (2, 3), "value": 1.5 if dt != "bool" else True,
                                 "dtype": d}, f"{dt}"))
        cs.append(K("fill", (), {"shape": (), "value": 3, "dtype": d}, f"{dt}-0d"))
        cs.append(K("fill", (), {"shape": (0, 2), "value": 0, "dtype": d}, f"{dt}-empty"))
        cs.append(K("eye", (), {"n": 3, "m": 4, "dtype": d}, f"{dt}"))
        cs.append(K("eye", (), {"n": 300, "m": 301, "dtype": d}, f"{dt}-device"))
        cs.append(K("linspace", (), {"start": -1.0, "stop": 2.0, "num": 7, "dtype": d}, dt))
        cs.append(K("linspace", (), {"start": 0.3, "stop": 1e5 + 0.7, "num": 100_003,
                                     "dtype": d}, f"{dt}-device"))
    cs.append(K("fill", (), {"shape": (2,), "value": NAN, "dtype": tb.float32}, "nan"))
    cs.append(K("fill", (), {"shape": (2,), "value": -0.0, "dtype": tb.float64}, "negzero",
                signed_zero=True))
    for start, stop, step, dt in ((0, 5, 1, "int32"), (0.0, 1.0, 0.1, "float32"),
                                  (0.0, 1.0, 0.1, "float64"), (5, -3, -2, "int64"),
                                  (0.5, 5, 1, "int32"), (0, 1, 0.1, "int32"), (3, 3, 1, "int32"),
                                  (0.0, 2e5, 1.5, "float32"), (1.0, 3e5, 3.3, "float64"),
                                  (-7, 200_000, 3, "int32"), (0, 1e5, 0.5, "int64")):
        cs.append(K("arange", (), {"start": start, "stop": stop, "step": step,
                                   "dtype": tb.dtypes.as_dtype(dt)}, f"{start}-{stop}-{step}-{dt}"))
    for dt in ("float32", "float64"):
        u = rng(9).uniform(size=6)
        cs.append(K("from_uniform_bits", (), {"u": u, "shape": (2, 3),
                                              "dtype": tb.dtypes.as_dtype(dt)}, dt))
    return cs


KERNEL_CASES = _cases()


def _run(backend: str, case: K) -> tb.Tensor:
    be = tb.get_backend(backend)
    kernel = registry.get(backend, case.name)
    raw: list[Any] = []
    for i, a in enumerate(case.args):
        if isinstance(a, S):
            other = case.args[1 - i]
            raw.append(be.scalar(a.value, tb.dtypes.as_dtype(other.dtype.name)))
        elif backend == TF:
            raw.append(tf.constant(a))
        else:
            raw.append(a)
    params = dict(case.params)
    if case.name == "from_uniform_bits":
        return be.wrap(kernel(params.pop("u"), **params))
    with np.errstate(all="ignore"):
        return be.wrap(kernel(*raw, **params))


def _error_model(case: K) -> dict[str, Any]:
    """``n`` and ``magnitude`` for the tolerance policy (``tensorbridge.testing``): how many
    terms an output element accumulates and the sum of their absolute values."""
    model: dict[str, Any] = {"op": case.name}
    arrays = [a for a in case.args if isinstance(a, np.ndarray)]
    if case.name == "matmul":
        a, b = (np.abs(x.astype(np.float64)) for x in arrays)
        model.update(n=a.shape[-1], magnitude=np.matmul(a, b))
    elif case.name in ("sum", "logsumexp", "prod"):
        x = arrays[0]
        axis = case.params["axis"]
        model["n"] = max(1, math.prod(x.shape[i] for i in axis))
        if case.name == "sum":
            model["magnitude"] = np.abs(x.astype(np.float64)).sum(
                axis=axis, keepdims=case.params["keepdims"])
    elif case.name == "cumsum":
        ax = case.params["axis"]
        x = np.abs(arrays[0].astype(np.float64))
        flip = case.params["reverse"]
        run = np.cumsum(np.flip(x, ax) if flip else x, axis=ax)
        model.update(n=max(1, x.shape[ax]), magnitude=np.flip(run, ax) if flip else run)
    elif case.name in ("cholesky", "triangular_solve", "solve", "eigh"):
        # backward stable normwise (Higham ch. 8 and 10); the test matrices are well conditioned
        # (eigh's: eigenvalue gaps >= 1 against a norm <= 4)
        model["n"] = max(1, arrays[0].shape[-1]) * (4 if case.name == "eigh" else 1)
    elif case.name == "linspace":
        model["n"] = 4  # start + i * step: two roundings on each side
    return model


def canonical(name: str, out: np.ndarray) -> np.ndarray:
    """eigh's eigenvectors with each one's sign fixed (its largest entry positive): LAPACK
    implementations may return either sign. Other kernels' outputs as they are."""
    if name != "eigh" or not out.size:
        return out
    out = np.array(out)
    vecs = out[..., 1:, :]
    big = np.take_along_axis(vecs, np.argmax(np.abs(vecs), axis=-2)[..., None, :], axis=-2)
    out[..., 1:, :] = vecs * np.where(big < 0, -1, 1).astype(out.dtype)
    return out


@pytest.mark.parametrize("case", KERNEL_CASES, ids=str)
def test_kernel_matches_numpy_kernel(case: K) -> None:
    want = _run("numpy", case)
    got = _run(TF, case)
    assert got.backend.name == TF
    assert got.shape == want.shape
    in_dtype = next((str(a.dtype) for a in case.args if isinstance(a, np.ndarray)), "")
    expected = DOCUMENTED_DTYPES.get((case.name, in_dtype), want.dtype.name)
    assert got.dtype.name == expected, (got.dtype, want.dtype)
    g, w = canonical(case.name, got.numpy()), canonical(case.name, want.numpy())
    w = w.astype(g.dtype)
    if got.dtype.kind == "f":
        model = _error_model(case)
        if case.name in ("cholesky", "triangular_solve", "solve", "eigh") and w.size:
            model["magnitude"] = np.broadcast_to(np.nanmax(np.abs(w), axis=(-2, -1),
                                                           keepdims=True), w.shape)
        err = check_close(g, w, got.dtype, **model)
        assert err is None, err
        if case.signed_zero:
            zero = w == 0
            np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]))
    else:
        np.testing.assert_array_equal(g, w)


def test_every_kernel_is_registered_and_tested() -> None:
    table = tb.kernel_table()
    assert table.missing(TF) == []
    tested = {c.name for c in KERNEL_CASES}
    assert set(KERNEL_NAMES) <= tested, set(KERNEL_NAMES) - tested


def _graph_cases(per_kernel: int = 4) -> list[K]:
    seen: dict[str, int] = {}
    out = []
    for c in KERNEL_CASES:
        if seen.get(c.name, 0) < per_kernel:
            seen[c.name] = seen.get(c.name, 0) + 1
            out.append(c)
    return out


@pytest.mark.parametrize("case", _graph_cases(), ids=str)
def test_kernel_runs_inside_a_graph(case: K) -> None:
    """Kernels trace into tf.function graphs: no host reads, static shapes fully known."""
    be = tb.get_backend(TF)
    kernel = registry.get(TF, case.name)
    tensors = [a for a in case.args if isinstance(a, np.ndarray)]
    params = dict(case.params)
    u = params.pop("u", None)

    def body(*xs: Any) -> Any:
        it = iter(xs)
        raw = []
        for i, a in enumerate(case.args):
            if isinstance(a, S):  # scalars become graph constants, as in a traced op
                other = case.args[1 - i]
                raw.append(be.scalar(a.value, tb.dtypes.as_dtype(other.dtype.name)))
            else:
                raw.append(next(it))
        return kernel(u, **params) if u is not None else kernel(*raw, **params)

    fn = tf.function(body, input_signature=[tf.TensorSpec(a.shape, tf.as_dtype(a.dtype))
                                            for a in tensors], autograph=False)
    symbolic = fn.get_concrete_function().structured_outputs
    eager = _run(TF, case)
    assert be.shape_of(symbolic) == eager.shape
    got = fn(*[tf.constant(a) for a in tensors]).numpy()
    np.testing.assert_array_equal(got, eager.numpy())


# ------------------------------------------------------------------------------------------------
# host transfer, backend mixing, memory
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", list(tb.dtypes.DTYPES))
@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (1, 0, 2)])
def test_to_moves_both_ways(dtype: str, shape: tuple[int, ...]) -> None:
    data = (rng().uniform(-5, 5, shape) * 3).astype(dtype)
    x = tb.tensor(data)
    y = x.to(TF)
    assert y.backend.name == TF and y.dtype.name == dtype and y.shape == shape
    assert isinstance(y._data, tf.Tensor)
    z = y.to("numpy")
    assert z.backend.name == "numpy" and z.dtype.name == dtype
    np.testing.assert_array_equal(z.numpy(), data)
    assert y.to(TF) is y
    assert tb.tensor(data, backend=TF).tolist() == data.tolist()


def test_host_data_is_copied_and_results_are_read_only() -> None:
    a = np.arange(6.0)
    x = tb.tensor(a, backend=TF)
    a[0] = 99.0
    assert x.tolist()[0] == 0.0  # TF owns a copy
    out = x.numpy()
    assert not out.flags.writeable
    assert tb.tensor(3.5, backend=TF).item() == 3.5
    assert tb.tensor([[True, False]], backend=TF).dtype is tb.bool_
    assert tb.tensor([1, 2**40], backend=TF).dtype is tb.int64
    assert tb.tensor(np.float32(2.0), backend=TF).dtype is tb.float32
    assert tb.tensor([1.5, 2.5], dtype="int32", backend=TF).tolist() == [1, 2]
    with pytest.raises(TypeError, match="uint8"):
        tb.tensor(np.zeros(3, np.uint8), backend=TF)


def test_mixing_backends_without_transfer_raises() -> None:
    a = tb.tensor([1.0, 2.0], backend=TF)
    b = tb.tensor([3.0, 4.0])
    for op in (lambda: a + b, lambda: b * a, lambda: tb.matmul(a, b), lambda: tb.where(
            a > 0, a, b), lambda: tb.concat([a, b]), lambda: tb.maximum(b, a),
               lambda: tb.triangular_solve(tb.eye(2, backend=TF), b)):
        with pytest.raises(tb.BackendMismatchError, match=r"tensorflow|numpy"):
            op()
    assert (a + b.to(TF)).tolist() == [4.0, 6.0]
    add = tb.function(lambda x, y: x + y)
    assert add(a, a).tolist() == [2.0, 4.0]
    with pytest.raises(tb.BackendMismatchError, match="compiled for 'tensorflow'"):
        add(a, b)


def _counts() -> tuple[int, int]:
    gc.collect()
    m = tb.memory(TF)
    return m["num_tensors"], m["num_bytes"]


def test_memory_counts_return_to_baseline() -> None:
    base = _counts()
    x = tb.ones((10, 10), "float64", TF)
    assert _counts() == (base[0] + 1, base[1] + 800)
    y = tb.tanh(x @ x).sum()
    g = tb.grad(lambda w: tb.sum(tb.tanh(w @ w)))(x)
    assert _counts()[0] == base[0] + 3
    y.dispose()
    g.dispose()
    assert _counts() == (base[0] + 1, base[1] + 800)
    out = tb.tidy(lambda t: tb.exp(t) * 2.0, x)
    assert _counts() == (base[0] + 2, base[1] + 1600)
    with tb.tidy():
        tb.sqrt(x) + 1.0
    del out, x
    assert _counts() == base
    assert tb.memory()["backends"][TF]["num_tensors"] == base[0]


def test_memory_after_compiled_calls_and_transfers() -> None:
    base = _counts()
    w = tb.random.normal((4, 3), dtype="float64", backend=TF)
    x = tb.random.normal((5, 4), dtype="float64", backend=TF)
    step = tb.function(lambda w, x: tb.value_and_grad(lambda w: tb.sum(tb.tanh(x @ w)))(w))
    for _ in range(3):
        v, gw = step(w, x)
    n = x.to("numpy").to(TF)
    assert _counts()[0] == base[0] + 5
    del v, gw, n, step
    w.dispose()
    x.dispose()
    assert _counts() == base


# ------------------------------------------------------------------------------------------------
# tb.function: one tf.function graph per input signature
# ------------------------------------------------------------------------------------------------
def _mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = tb.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"]
    return -tb.mean(tb.sum(tb.log_softmax(logits, -1) * y, -1)) + 1e-3 * tb.sum(
        params["w1"] ** 2)


def _mlp_data(dtype: str = "float64") -> tuple[dict[str, Any], Any, Any]:
    g = tb.random.Generator(3)
    params = {"w1": g.normal((4, 8), dtype=dtype, backend=TF),
              "b1": g.normal((8,), dtype=dtype, backend=TF),
              "w2": g.normal((8, 3), dtype=dtype, backend=TF)}
    x = g.normal((16, 4), dtype=dtype, backend=TF)
    y = tb.one_hot(g.integers(0, 3, (16,), backend=TF), 3, dtype)
    return params, x, y


def test_compiled_value_and_grad_matches_eager() -> None:
    params, x, y = _mlp_data()
    vg = tb.value_and_grad(_mlp_loss, argnums=(0, 1))
    step = tb.function(lambda p, x, y: vg(p, x, y))
    v, (gp, gx) = step(params, x, y)
    v2, (gp2, gx2) = vg(params, x, y)
    np.testing.assert_allclose(v.numpy(), v2.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), gx2.numpy(), rtol=1e-10, atol=1e-14)
    for k in params:
        assert gp[k].backend.name == TF and gp[k].shape == params[k].shape
        np.testing.assert_allclose(gp[k].numpy(), gp2[k].numpy(), rtol=1e-10, atol=1e-14)


def test_compiled_runs_one_graph_per_signature() -> None:
    traces = []

    def f(w1, w2, x):
        traces.append((w1.shape, x.dtype.name))
        return tb.sum(tb.tanh(x @ w1) @ w2)

    step = tb.function(lambda w1, w2, x: tb.value_and_grad(f, argnums=(0, 1, 2))(w1, w2, x))
    g = tb.random.Generator(0)
    w1, w2 = g.normal((3, 4), backend=TF), g.normal((4, 2), backend=TF)
    for _ in range(3):
        v, _ = step(w1, w2, g.normal((5, 3), backend=TF))
    assert len(traces) == 1  # traced once, then the graph runs
    assert isinstance(v._data, tf.Tensor) and not isinstance(v, tb.Tracer)
    step(w1, w2, g.normal((7, 3), backend=TF))  # a new shape traces again
    step(w1.astype("float64"), w2.astype("float64"), g.normal((7, 3), dtype="float64", backend=TF))
    assert len(traces) == 3
    compiled = tb.get_backend(TF).compile(f)
    compiled(w1, w2, g.normal((5, 3), backend=TF))
    compiled(w1, w2, g.normal((5, 3), backend=TF))
    assert compiled.num_traces == 1


def test_compiled_static_arguments_and_outputs() -> None:
    x = tb.tensor([1.0, 2.0], backend=TF)
    f = tb.function(lambda x, k, opts: {"y": x * k + opts["shift"], "k": k, "none": None})
    out = f(x, 3.0, {"shift": 1.0})
    assert out["y"].tolist() == [4.0, 7.0] and out["k"] == 3.0 and out["none"] is None
    assert f(x, 4.0, {"shift": 1.0})["y"].tolist() == [5.0, 9.0]  # new constant, new trace
    assert f(x, -0.0, {"shift": 0.0})["y"].tolist() == [-0.0, -0.0]
    same = tb.function(lambda x: (x, x + 0.0))
    a, b = same(x)
    assert a.tolist() == b.tolist() == [1.0, 2.0]
    idx = tb.function(lambda x, i: x[i])
    assert idx(x, np.array([1, 1, 0])).tolist() == [2.0, 2.0, 1.0]


def test_compiled_grad_through_compiled_function_runs_eagerly() -> None:
    sq = tb.function(lambda x: tb.sum(x * x))
    x = tb.tensor([3.0, -1.0], backend=TF)
    assert tb.grad(sq)(x).tolist() == [6.0, -2.0]
    assert sq(x).item() == 10.0


def test_compiled_value_reads_fall_back_to_eager() -> None:
    def f(x):
        if float(tb.sum(x)) > 0:  # a value read: no graph can hold this branch
            return x * 2.0
        return x * -1.0

    cf = tb.function(f)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        assert cf(tb.tensor([1.0, 2.0], backend=TF)).tolist() == [2.0, 4.0]
    assert cf(tb.tensor([-1.0, -2.0], backend=TF)).tolist() == [1.0, 2.0]
    gen = tb.random.Generator(0)
    noisy = tb.function(lambda x: x + gen.normal((2,), backend=TF))
    with pytest.warns(RuntimeWarning, match="random"):
        a = noisy(tb.zeros((2,), backend=TF)).tolist()
    assert noisy(tb.zeros((2,), backend=TF)).tolist() != a  # not a frozen draw


def test_compiled_prod_gradient() -> None:
    """prod's VJP inspects values for zeros; under tb.function it must still be right."""
    x = tb.tensor([[0.0, 2.0, 3.0], [1.5, -0.5, 2.0]], dtype="float64", backend=TF)
    gfun = tb.grad(lambda x: tb.sum(tb.prod(x, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = tb.function(gfun)(x)
    np.testing.assert_allclose(got.numpy(), gfun(x).numpy())
    np.testing.assert_allclose(got.numpy(), [[6.0, 0.0, 0.0], [-1.0, 3.0, -0.75]])


@pytest.mark.parametrize("case", CASES, ids=str)
def test_compiled_op_table_matches_eager(case) -> None:
    args = [tb.tensor(a, backend=TF) if isinstance(a, np.ndarray) else a for a in case.args]
    compiled = tb.function(case.fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # value-dependent cases run eagerly
        got = compiled(*args)
        again = compiled(*args)
    want = case.fn(*args)
    assert got.dtype is want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(again.numpy(), got.numpy())
    if case.grad and got.dtype.kind == "f":
        floats = [i for i, a in enumerate(args) if isinstance(a, tb.Tensor)
                  and a.dtype.kind == "f"]
        vg = tb.value_and_grad(lambda *a: tb.sum(case.fn(*a) ** 2), argnums=tuple(floats))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            v, gs = tb.function(vg)(*args)
        v2, gs2 = vg(*args)
        np.testing.assert_allclose(v.numpy(), v2.numpy(), rtol=1e-12)
        for a, b in zip(gs, gs2):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------------------------------
# derivatives on TF (the op table checks every op; these are composite models)
# ------------------------------------------------------------------------------------------------
def test_check_grads_on_composite_functions() -> None:
    params, x, y = _mlp_data()
    tb.check_grads(lambda w1, b1, w2: _mlp_loss({"w1": w1, "b1": b1, "w2": w2}, x, y),
                   (params["w1"], params["b1"], params["w2"]), order=2)
    a = tb.random.normal((3, 3), dtype="float64", backend=TF)

    def logdet(a):
        L = tb.cholesky(a @ tb.transpose(a) + 3.0 * tb.eye(3, dtype="float64", backend=TF))
        return 2.0 * tb.sum(tb.log(tb.sum(L * tb.eye(3, dtype="float64", backend=TF), -1)))

    tb.check_grads(logdet, (a,), order=2)
    v = tb.random.normal((2, 5), dtype="float64", backend=TF)
    tb.check_grads(lambda v: tb.logsumexp(v[:, [0, 2, 2]] * tb.cumsum(v, 1)[:, 1:4], 1),
                   (v,), order=2)


def test_float32_models_stay_float32() -> None:
    params, x, y = _mlp_data("float32")
    v, g = tb.function(tb.value_and_grad(_mlp_loss))(params, x, y)
    assert v.dtype is tb.float32 and all(t.dtype is tb.float32 for t in g.values())
    v64 = _mlp_loss({k: p.astype("float64") for k, p in params.items()},
                    x.astype("float64"), y.astype("float64"))
    assert math.isclose(v.item(), v64.item(), rel_tol=1e-5)


def test_default_placement_uses_a_gpu_when_there_is_one() -> None:
    be = tb.get_backend(TF)
    x = tb.tensor([1.0, 2.0], backend=TF)
    y = x * 2.0
    if not be.gpus:
        assert "CPU" in y._data.device
        pytest.skip("no GPU visible to TensorFlow: placement is the CPU")
    assert "GPU" in y._data.device and "GPU" in x._data.device
