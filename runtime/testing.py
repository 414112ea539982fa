"""Comparing floating-point results: one tolerance policy for every suite and every language.

A result computed in floating point can only be held to what its operation guarantees for its
dtype and size, never to one machine's rounding (another CPU, BLAS kernel or libm rounds
differently). The rule, per element::

    |actual - expected| <= ulps * u * |expected|  +  2 * gamma(n) * magnitude  +  tiny

* ``u`` is the unit roundoff of the dtype the result was computed in (float32 ``2**-24``,
  float64 ``2**-53``): half the distance from 1 to the next number.
* ``ulps`` covers the final elementwise evaluation on both sides: 4 for correctly rounded
  arithmetic, more for functions whose libraries differ by a few units in the last place
  (:data:`OP_ULPS` lists what each kernel can guarantee).
* ``gamma(n) = n u / (1 - n u)`` bounds the relative error of a sum of ``n`` terms in *any*
  order and blocking (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1
  and §4.2), so a dot product, a reduction or a matrix product of inner length ``n`` is held to
  ``gamma(n)`` times ``magnitude``, the sum of the absolute values of its terms (``|A| @ |B|``
  for a matrix product, ``sum |x|`` for a sum). That is what keeps a result near cancellation
  (a small value from large terms) comparable. The factor 2 is because the expected value was
  computed in floating point too. ``magnitude`` defaults to ``|expected|`` (no cancellation).
* ``tiny`` is the dtype's smallest normal number: a backend may flush subnormals to zero.

NaN matches NaN, an infinity matches the same infinity only, and integers and booleans compare
exactly. A computation chained over many steps (a training replay: ``steps`` optimiser updates,
each accumulating ``per_step`` terms) is held to ``n = steps * per_step``
(:func:`chained_length`).

The same formula is implemented for R in ``r-client/tests/testthat/helper-tolerance.R``
(``expect_close``) and for JavaScript in ``js-client/test/tolerance.mjs`` (``assertClose``);
``tests/fixtures/shared/tolerance_cases.json`` holds hand-computed cases all three must decide
the same way. This module does not need NumPy (it runs in Pyodide); with NumPy arrays it
vectorises.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from .dtypes import DType, as_dtype

__all__ = [
    "OP_ULPS",
    "TINY",
    "UNIT_ROUNDOFF",
    "assert_close",
    "chained_length",
    "check_close",
    "gamma",
    "tolerance",
    "ulps_for",
    "unit_roundoff",
]

# Unit roundoff (2**-p for a p-bit significand) and smallest normal number per floating dtype.
UNIT_ROUNDOFF: dict[str, float] = {"float16": 2.0**-11, "float32": 2.0**-24, "float64": 2.0**-53}
TINY: dict[str, float] = {"float16": 2.0**-14, "float32": 2.0**-126, "float64": 2.0**-1022}

DEFAULT_ULPS = 4

# Units in the last place each kernel may differ by between two correct implementations
# (NumPy's libm, Eigen in TensorFlow, TF.js's wasm and cpu kernels), both sides counted.
# Correctly rounded arithmetic is 4 (the default); vectorised transcendental functions are
# accurate to a few ulps each; composite kernels add the errors of their steps; the special
# functions are only accurate to a relative error that grows near their zeros and poles.
OP_ULPS: dict[str, int] = {
    **dict.fromkeys(
        "exp expm1 log log1p tanh sigmoid sin cos tan erf erfc rsqrt reciprocal pow".split(), 16),
    **dict.fromkeys("softplus logsumexp log_softmax softmax elu gelu".split(), 32),
    **dict.fromkeys("lgamma digamma polygamma".split(), 1024),
}


def unit_roundoff(dtype: Any) -> float:
    """``u`` for a floating dtype (name, :class:`DType` or NumPy dtype); 0 for exact types."""
    name = _dtype_name(dtype)
    if name in UNIT_ROUNDOFF:
        return UNIT_ROUNDOFF[name]
    return 0.0


def gamma(n: int, dtype: Any) -> float:
    """Higham's ``gamma_n = n u / (1 - n u)``: relative error bound of an ``n``-term sum."""
    if n < 0:
        raise ValueError(f"n: expected a non-negative length, got {n}")
    nu = n * unit_roundoff(dtype)
    if nu >= 1:
        raise ValueError(f"n: {n} terms exceed what {_dtype_name(dtype)} can bound (n*u >= 1)")
    return nu / (1 - nu)


def ulps_for(op: str | None) -> int:
    """The ``ulps`` a kernel can guarantee (:data:`OP_ULPS`, else the default 4)."""
    return OP_ULPS.get(op, DEFAULT_ULPS) if op else DEFAULT_ULPS


def chained_length(steps: int, per_step: int) -> int:
    """``n`` for a result chained through ``steps`` steps of ``per_step``-term accumulations."""
    if steps < 1 or per_step < 1:
        raise ValueError(f"steps, per_step: expected positive counts, got {steps}, {per_step}")
    return steps * per_step


def tolerance(expected: Any, dtype: Any, *, n: int = 1, magnitude: Any = None,
              ulps: int | None = None, op: str | None = None) -> Any:
    """The per-element bound the rule allows around ``expected`` (same shape, or a list)."""
    u = unit_roundoff(dtype)
    k = ulps if ulps is not None else ulps_for(op)
    g2 = 2 * gamma(n, dtype) if n > 1 else 0.0
    tiny = TINY.get(_dtype_name(dtype), 0.0)
    np = _numpy_for(expected, magnitude)
    if np is not None:
        e = np.abs(np.asarray(expected, dtype=np.float64))
        m = e if magnitude is None else np.abs(np.asarray(magnitude, dtype=np.float64))
        with np.errstate(invalid="ignore", over="ignore"):
            return k * u * e + g2 * m + tiny
    e = [abs(float(v)) for v in _flat(expected)]
    m = e if magnitude is None else _broadcast([abs(float(v)) for v in _flat(magnitude)], len(e))
    return [k * u * a + g2 * b + tiny for a, b in zip(e, m)]


def check_close(actual: Any, expected: Any, dtype: Any = None, *, n: int = 1,
                magnitude: Any = None, ulps: int | None = None, op: str | None = None,
                what: str = "") -> str | None:
    """``None`` when ``actual`` meets the rule around ``expected``, else a message saying where.

    ``dtype`` is the dtype the result was computed in; by default ``actual``'s own (float64 for
    plain Python numbers). Shapes must match when both sides have one.
    """
    dtype = _dtype_name(dtype if dtype is not None else _dtype_of(actual))
    a_shape, e_shape = _shape_of(actual), _shape_of(expected)
    if a_shape is not None and e_shape is not None and a_shape != e_shape:
        return f"{what}shape {a_shape} != expected {e_shape}"
    np = _numpy_for(actual, expected)
    if np is not None and dtype in UNIT_ROUNDOFF:
        a_arr = np.asarray(_host(actual), dtype=np.float64)
        e_arr = np.asarray(_host(expected), dtype=np.float64)
        if a_arr.shape == e_arr.shape:
            bound = tolerance(e_arr, dtype, n=n, magnitude=magnitude, ulps=ulps, op=op)
            with np.errstate(invalid="ignore"):
                ok = (np.abs(a_arr - e_arr) <= bound) | (np.isnan(a_arr) & np.isnan(e_arr)) | (
                    np.isinf(e_arr) & (a_arr == e_arr))
            if bool(ok.all()):
                return None  # the common case; a failure is described element by element below
    a, e = list(_flat(actual)), list(_flat(expected))
    if len(a) != len(e):
        return f"{what}{len(a)} elements != expected {len(e)}"
    if dtype not in UNIT_ROUNDOFF:  # integers and booleans: exact
        bad = [i for i, (x, y) in enumerate(zip(a, e)) if x != y]
        return f"{what}element {bad[0]}: {a[bad[0]]} != {e[bad[0]]} (exact dtype {dtype})" \
            if bad else None
    if magnitude is not None:
        mag_np = _numpy_for(magnitude)
        if mag_np is not None and e_shape is not None:
            magnitude = mag_np.broadcast_to(magnitude, e_shape)
        magnitude = list(_flat(magnitude))
    bound = list(_flat(tolerance(e, dtype, n=n, magnitude=magnitude, ulps=ulps, op=op)))
    worst: tuple[float, int] | None = None
    failures = 0
    for i, (x, y) in enumerate(zip(a, e)):
        x, y = float(x), float(y)
        if math.isnan(y) or math.isnan(x):
            ok = math.isnan(x) and math.isnan(y)
            ratio = math.inf
        elif math.isinf(y) or math.isinf(x):
            ok = x == y
            ratio = math.inf
        else:
            ratio = abs(x - y) / bound[i]
            ok = ratio <= 1
        if not ok:
            failures += 1
            if worst is None or ratio > worst[0]:
                worst = (ratio, i)
    if worst is None:
        return None
    i = worst[1]
    return (f"{what}{failures} of {len(a)} elements outside the {dtype} tolerance "
            f"(n={n}, ulps={ulps if ulps is not None else ulps_for(op)}); worst: element {i}: "
            f"{float(a[i])!r} vs expected {float(e[i])!r}, |diff| "
            f"{abs(float(a[i]) - float(e[i])):.3g} > bound {bound[i]:.3g}")


def assert_close(actual: Any, expected: Any, dtype: Any = None, *, n: int = 1,
                 magnitude: Any = None, ulps: int | None = None, op: str | None = None,
                 what: str = "") -> None:
    """Raise ``AssertionError`` unless ``actual`` meets the rule (see :func:`check_close`)."""
    err = check_close(actual, expected, dtype, n=n, magnitude=magnitude, ulps=ulps, op=op,
                      what=what)
    if err is not None:
        raise AssertionError(err)


# ---- helpers: nested lists, tensors and NumPy arrays alike ------------------------------------
def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, DType):
        return dtype.name
    name = getattr(dtype, "name", dtype)
    if isinstance(name, str) and name in UNIT_ROUNDOFF:
        return name
    return as_dtype(dtype).name


def _dtype_of(x: Any) -> Any:
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return dt
    if isinstance(x, bool) or (isinstance(x, Sequence) and x and all(
            isinstance(v, bool) for v in _flat(x))):
        return "bool"
    return "float64"


def _shape_of(x: Any) -> tuple[int, ...] | None:
    shape = getattr(x, "shape", None)
    return tuple(shape) if shape is not None else None


def _flat(x: Any) -> Iterable[Any]:
    if not hasattr(x, "ravel") and not hasattr(x, "tolist") and hasattr(x, "numpy"):
        x = x.numpy()  # a tf.Tensor
    if hasattr(x, "ravel"):
        x = x.ravel().tolist()
    elif hasattr(x, "tolist"):
        x = x.tolist()  # a tensorbridge Tensor: no NumPy needed
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from _flat(v)
    else:
        yield x


def _host(x: Any) -> Any:
    if hasattr(x, "ravel"):
        return x
    if hasattr(x, "numpy"):
        return x.numpy()
    return x


def _broadcast(values: list[float], size: int) -> list[float]:
    if len(values) == size:
        return values
    if len(values) == 1:
        return values * size
    raise ValueError(f"magnitude: expected 1 or {size} values, got {len(values)}")


def _numpy_for(*xs: Any) -> Any:
    """NumPy when it is loaded and any argument is an ndarray (vectorise), else None."""
    import sys

    np = sys.modules.get("numpy")
    if np is None or not any(isinstance(x, np.ndarray) for x in xs):
        return None
    return np
