"""The ``python`` backend: float64-exact kernels in pure Python, for the browser (Pyodide without
NumPy) and anywhere NumPy cannot be imported.

A raw buffer is a :class:`PyArray`: a
:class:`~tensorbridge.runtime.backends.python_arrays.ndarray` (flat row-major list of Python
scalars, shape, pure dtype) that also carries its runtime dtype (``tb_dtype``), since
``python_arrays`` only knows bool/int64/float64. Buffers are never written after they are made,
so reshape shares the list. Only the standard library is used (``math``, ``operator``,
``functools``, ``array``); NumPy is imported only by ``to_numpy`` and to read the positions of
NumPy index plans, where NumPy exists.

Semantics are NumPy's (the ``numpy`` backend defines them), with the same result dtypes:

* float64: Python floats, so + - * / sqrt, comparisons, where, reshape/transpose/concat,
  gather/scatter, cumsum, prod, max/min and floor/ceil/round are bit for bit NumPy's (signed
  zeros and NaN included; ``maximum``/``minimum`` return the second operand on ties, as NumPy's
  loops do). ``sum`` follows NumPy's pairwise summation (identity 0, then 8 accumulators per block
  of up to 128, halves above) along the reduced run when the reduced axes are the trailing axes
  (a whole-array sum included); reduced leading axes add sequentially, as NumPy's loop over
  rows does. Both match NumPy to the bit for C-contiguous inputs (the numpy backend's arrays can
  be transposed views, whose reduction order follows memory; then the last bits can differ).
  ``exp log log1p expm1 sin cos tan`` are the C library's (NumPy 1.26 on x86-64 gives the same
  bits); ``tanh`` and ``erf`` can differ from NumPy/SciPy by 2 ulp, ``erfc`` and ``lgamma`` by a
  few ulp relative to the value (``math``'s versions are the more accurate), ``digamma`` and
  ``polygamma`` are ``special_numpy``'s series (about 1e-14 relative, absolute near the roots),
  with SciPy's values at the poles (digamma(-0.0) = inf, polygamma finite between the negative
  integers). Where the numpy backend uses SciPy, so does the choice here: ``sigmoid`` is
  SciPy's expit ``1 / (1 + exp(-x))`` and ``lgamma(-inf)`` is -inf; without SciPy, the numpy
  backend's fallbacks (``exp(-logaddexp(0, -x))``, ``math.lgamma``).
  ``matmul`` accumulates each dot product left to right from 0 (NumPy's loop without BLAS: exact
  for integers; BLAS may round float sums differently in the last bits), ``cholesky`` and
  ``triangular_solve`` are the textbook algorithms (LAPACK's blocked order can differ in the last
  bits). ``cholesky`` of a matrix that is not positive definite gives NaN factors for that matrix
  (a NaN pivot propagates instead, as OpenBLAS's potrf lets it); a zero pivot in
  ``triangular_solve`` raises :class:`LinAlgError` (a ValueError, as NumPy's).
* int32/int64: Python ints wrapped to the dtype's range after arithmetic (NumPy wraps too);
  integer division and remainder by zero give 0, as NumPy's do.
* float32: values are kept as Python floats rounded to float32 after every kernel (with
  ``array('f')``), so correctly rounded operations (+ - * / sqrt) match NumPy exactly;
  sums (pairwise, NumPy's order), prod and cumsum add and multiply in float32 too, so they match
  NumPy exactly; transcendental functions are computed in float64 and rounded (NumPy's float32
  loops can differ by up to 3 ulp); float32 matmul, cholesky and triangular_solve round each
  product and sum (matmul) or only the result (the factorisations), not BLAS/LAPACK's order.
* bool: Python bools; ``add``/``mul`` of bools are ``or``/``and``, as in NumPy.

On CPython up to 3.11 the sequential float sums use ``sum()`` (plain left-to-right addition in
C); from 3.12 (Pyodide) ``sum()`` of floats is compensated, so ``functools.reduce`` adds instead:
the results are the same bits either way. The layers' fused kernels (``layers.*``, named in
``layer_kernels.py``) are here too, with the numpy kernels' steps.
"""

from __future__ import annotations

import math
import operator
import sys
from array import array
from functools import reduce
from itertools import accumulate
from typing import Any

from .. import dtypes as D
from ..dtypes import DType
from ..host_arrays import HostList, dtype_from_numpy, flatten_nested
from ..kernels import register_kernel
from ..tensor import Tensor
from . import python_arrays as pa
from .base import Backend, make_tensor
from .python_arrays import (
    _exp_safe,
    _log_safe,
    _logaddexp,
    _maximum,
    _minimum,
    _perm_index,
    _prod,
    _sqrt_safe,
)

__all__ = ["LinAlgError", "PyArray", "PythonBackend"]

NAME = "python"
_new = object.__new__
_add, _sub, _mul = operator.add, operator.sub, operator.mul
_inf, _nan = math.inf, math.nan
_PA = {D.bool_: pa.bool_, D.int32: pa.int64, D.int64: pa.int64, D.float32: pa.float64,
       D.float64: pa.float64}
_CAST = {D.bool_: bool, D.int32: int, D.int64: int, D.float32: float, D.float64: float}
_ARITH_ERRORS = (ZeroDivisionError, OverflowError, ValueError)


class LinAlgError(ValueError):
    """A singular triangular system (NumPy raises ``numpy.linalg.LinAlgError``, a ValueError)."""


class PyArray(pa.ndarray):
    """A pure array with its runtime dtype: int32 and float32 values are stored as Python
    ints/floats already in the range/precision of their dtype."""

    __slots__ = ("tb_dtype",)

    tb_dtype: DType

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy  # only reached where NumPy exists (tests, mixing with NumPy code)

        out = numpy.array(self._data, dtype=self.tb_dtype.buffer_format).reshape(self.shape)
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        return f"PyArray({self.tolist()!r}, dtype={self.tb_dtype.name})"


def _mk(data: list[Any], shape: tuple[int, ...], dt: DType) -> PyArray:
    a = _new(PyArray)
    a._data = data
    a.shape = shape
    a.dtype = _PA[dt]
    a.tb_dtype = dt
    return a


def _r32(values: list[float]) -> list[float]:
    """Python floats rounded to float32 (round to nearest even; overflow gives inf)."""
    return array("f", values).tolist()


_INT_BOUNDS = {D.int32: (-(2**31), 2**31 - 1, 2**32 - 1), D.int64: (-(2**63), 2**63 - 1,
                                                                   2**64 - 1)}


def _wrap_ints(values: list[int], dt: DType) -> list[int]:
    """Integers wrapped to ``dt``'s range (two's complement), as NumPy's overflow does."""
    lo, hi, mask = _INT_BOUNDS[dt]
    if values and (max(values) > hi or min(values) < lo):
        return [((v - lo) & mask) + lo for v in values]
    return values


def _finish(values: list[Any], shape: tuple[int, ...], dt: DType) -> PyArray:
    """Wrap integer results to their dtype and round float32 ones."""
    if dt is D.float32:
        values = _r32(values)
    elif dt.kind == "i":
        values = _wrap_ints(values, dt)
    return _mk(values, shape, dt)


def _cast_values(values: list[Any], src: DType, dst: DType) -> list[Any]:
    """NumPy's astype between runtime dtypes (float to int truncates; NaN/inf give the
    integer minimum, as NumPy does on x86-64)."""
    if src is dst:
        return values
    if dst is D.bool_:
        return [v != 0 for v in values]
    if dst.kind == "f":
        out = [float(v) for v in values] if src.kind != "f" else values
        return _r32(out) if dst is D.float32 else list(out)
    if src.kind == "f":
        lo = _INT_BOUNDS[dst][0]
        out = [int(v) if v - v == 0 else lo for v in values]  # v - v is NaN for NaN and inf
        return _wrap_ints(out, dst)
    return _wrap_ints([int(v) for v in values], dst)


# -- the backend ----------------------------------------------------------------------------------
class PythonBackend(Backend):
    """Kernels on :class:`PyArray` (pure Python); see the module docs for the semantics."""

    name = NAME

    def shape_of(self, raw: Any) -> tuple[int, ...]:
        return raw.shape

    def dtype_of(self, raw: Any) -> DType:
        return raw.tb_dtype

    def wrap(self, raw: Any) -> Tensor:
        data_id = self._next_data_id()
        dt = raw.tb_dtype
        self._live[data_id] = len(raw._data) * dt.itemsize
        return make_tensor(self, raw, raw.shape, dt, data_id)

    def from_host(self, value: Any, dtype: DType | None = None, copy: bool = True) -> Tensor:
        return self.wrap(as_raw(value, dtype))

    def to_numpy(self, raw: Any) -> Any:
        try:
            import numpy as np
        except ImportError as e:
            raise ImportError(
                "python backend: to_numpy() needs NumPy, which cannot be imported here; use "
                "tolist() for the values"
            ) from e
        arr = np.array(raw._data, dtype=raw.tb_dtype.buffer_format).reshape(raw.shape)
        arr.flags.writeable = False
        return arr

    def to_list(self, raw: Any) -> Any:
        return raw.tolist()

    def scalar(self, value: Any, dtype: DType) -> Any:
        if dtype is D.float64 and value.__class__ is float:
            return _mk([value], (), dtype)
        if dtype is D.float32:
            v = _r32([float(value)])[0]
        else:
            v = _CAST[dtype](value)
            if dtype.kind == "i":
                v = _wrap_ints([v], dtype)[0]
        return _mk([v], (), dtype)


def as_raw(value: Any, dtype: DType | None = None) -> PyArray:
    """A :class:`PyArray` of host data: a HostList, a NumPy array, a pure array, nested lists
    or a scalar (``dtype``: the runtime dtype to store; default the data's)."""
    if isinstance(value, HostList):
        values, shape, src = value.values, tuple(value.shape), value.dtype
    elif isinstance(value, pa.ndarray):
        src = getattr(value, "tb_dtype", None) or D.as_dtype(value.dtype.name)
        values, shape = value._data, tuple(value.shape)
    elif hasattr(value, "__array_interface__") and hasattr(value, "dtype"):
        src = dtype_from_numpy(value.dtype)
        values, shape = value.ravel().tolist(), tuple(int(d) for d in value.shape)
    elif isinstance(value, list | tuple):
        shape, values = flatten_nested(value)
        src = dtype or _infer(values)
    else:
        values, shape = [value], ()
        src = dtype or _infer(values)
    dt = dtype or src
    # a new list (never aliasing the caller's), of plain Python types (NumPy scalars, ints among
    # floats), rounded or wrapped to the dtype
    conv = _CAST[dt]
    if dt is D.bool_:
        values = [v != 0 for v in values] if src is not D.bool_ else [bool(v) for v in values]
    elif dt.kind == "f":
        if src.kind == "f":
            values = list(map(float, values))
            if dt is D.float32:
                values = _r32(values)
        else:
            values = _cast_values([int(v) for v in values], D.int64, dt)
    else:
        if src.kind == "f":
            values = _cast_values([float(v) for v in values], D.float64, dt)
        else:
            values = _wrap_ints([conv(v) for v in values], dt)
    return _mk(values, shape, dt)


def _infer(values: list[Any]) -> DType:
    if values and all(isinstance(v, bool) for v in values):
        return D.bool_
    if values and all(isinstance(v, int) for v in values):
        return D.int64
    return D.float64


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------
def _k(name: str):
    return register_kernel(NAME, name)


def _float_in(x: PyArray) -> tuple[list[float], DType]:
    """Values as floats and the result dtype of a float function (NumPy: ints give float64)."""
    dt = x.tb_dtype
    if dt.kind == "f":
        return x._data, dt
    return [float(v) for v in x._data], D.float64


def _float_unary(fast: Any, safe: Any) -> Any:
    """A float kernel: ``fast`` elementwise, ``safe`` (IEEE results) if ``fast`` raises."""

    def kernel(x: PyArray) -> PyArray:
        data, dt = _float_in(x)
        try:
            out = list(map(fast, data))
        except _ARITH_ERRORS:
            out = list(map(safe, data))
        if dt is D.float32:
            out = _r32(out)
        return _mk(out, x.shape, dt)

    kernel.__name__ = f"_py_{getattr(fast, '__name__', 'unary')}"
    return kernel


# The numpy backend computes special functions with SciPy where it is installed: then follow
# SciPy's conventions (sigmoid is expit, 1 / (1 + exp(-x)); gammaln(-inf) is -inf), else the
# numpy backend's fallbacks (sigmoid = exp(-logaddexp(0, -x)), special_numpy). Same probe.
try:
    import scipy.special  # noqa: F401

    _SCIPY = True
except ImportError:
    _SCIPY = False


def _expm1_safe(v: float) -> float:
    try:
        return math.expm1(v)
    except OverflowError:
        return _inf


def _log1p_safe(v: float) -> float:
    if v > -1:
        return math.log1p(v)
    return -_inf if v == -1 else _nan


def _recip(v: float) -> float:
    return 1.0 / v


def _recip_safe(v: float) -> float:
    if v == 0:
        return math.copysign(_inf, v)
    return 1.0 / v


def _rsqrt(v: float) -> float:
    return 1.0 / math.sqrt(v)


def _rsqrt_safe(v: float) -> float:
    return _recip_safe(_sqrt_safe(v))


def _tan_safe(v: float) -> float:
    return math.tan(v) if v - v == 0 else _nan


# math's inverse functions raise outside their domain: NumPy's NaN there, and atanh(+-1) = +-inf
def _asin_safe(v: float) -> float:
    return math.asin(v) if -1.0 <= v <= 1.0 else _nan


def _acos_safe(v: float) -> float:
    return math.acos(v) if -1.0 <= v <= 1.0 else _nan


def _acosh_safe(v: float) -> float:
    return math.acosh(v) if v >= 1.0 else _nan


def _atanh_safe(v: float) -> float:
    if v == 1.0 or v == -1.0:
        return math.copysign(math.inf, v)
    return math.atanh(v) if -1.0 < v < 1.0 else _nan


def _sin_safe(v: float) -> float:
    return math.sin(v) if v - v == 0 else _nan


def _cos_safe(v: float) -> float:
    return math.cos(v) if v - v == 0 else _nan


def _lgamma_safe(v: float) -> float:
    if v - v != 0:  # SciPy's gammaln(-inf) is -inf, math.lgamma's (special_numpy's) +inf
        return v if (v == -_inf and _SCIPY) else math.lgamma(v)
    if v <= 0 and v == math.floor(v):
        return _inf
    try:
        return math.lgamma(v)
    except OverflowError:
        return _inf


def _erfc_safe(v: float) -> float:
    return math.erfc(v)



def _expit(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def _expit_safe(v: float) -> float:
    return 1.0 / (1.0 + _exp_safe(-v))


def _sigmoid_np(v: float) -> float:
    return _exp_safe(-_logaddexp(0.0, -v))


def _softplus(v: float) -> float:
    return _logaddexp(0.0, v)


# digamma and polygamma: special_numpy's recurrence + asymptotic series, one value at a time
_B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510]


def _digamma(x: float) -> float:
    if x != x:
        return x
    if x == 0:  # SciPy: -inf at +0, +inf at -0 (the limits from each side)
        return math.copysign(_inf, -x)
    if x == _inf:
        return _inf
    if x == -_inf:
        return _nan
    if x < 0 and x == math.floor(x):
        return _nan
    neg = x < 0.5
    xr = 1.0 - x if neg else x
    acc = 0.0
    for _ in range(10):
        if xr < 10:
            acc = acc - 1.0 / xr
            xr = xr + 1.0
    inv2 = 1.0 / (xr * xr)
    series = 0.0
    for k in range(len(_B2K), 0, -1):
        series = series * inv2 + _B2K[k - 1] / (2 * k)
    val = math.log(xr) - 0.5 / xr - series * inv2 + acc
    if neg:
        return val - math.pi / math.tan(math.pi * x)
    return val


def _polygamma(n: int, x: float) -> float:
    """SciPy's polygamma (``(-1)**(n+1) n! zeta(n+1, x)``): infinite at 0 and the negative
    integers, finite between them; the recurrence lifts x above 20, then the asymptotic series."""
    if n == 0:
        return _digamma(x)
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    if x != x:
        return x
    if x == _inf:
        return sign * 0.0
    if x == -_inf or (x <= 0 and x == math.floor(x)):
        return sign * _inf
    if x < -1e5:
        return _nan  # (the recurrence would take too many steps; not needed by the runtime)
    fact = math.factorial(n)
    acc = 0.0
    xr = x
    while xr < 20:
        acc = acc + fact / _safe_pow(xr, n + 1)
        xr = xr + 1.0
    tail = math.factorial(n - 1) / xr**n + fact / (2 * xr ** (n + 1))
    for k, b in enumerate(_B2K, start=1):
        coef = b * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
        tail = tail + coef / xr ** (2 * k + n)
    return sign * (acc + tail)


def _round_half_even(v: float) -> float:
    if v - v != 0:
        return v
    r = float(round(v))
    return r if r else math.copysign(0.0, v)


def _floor(v: float) -> float:
    if v - v != 0:
        return v
    r = float(math.floor(v))
    return r if r else math.copysign(0.0, v)


def _ceil(v: float) -> float:
    if v - v != 0:
        return v
    r = float(math.ceil(v))
    return r if r else math.copysign(0.0, v)


_FLOAT_UNARY = {
    "exp": (math.exp, _exp_safe),
    "log": (math.log, _log_safe),
    "log1p": (math.log1p, _log1p_safe),
    "expm1": (math.expm1, _expm1_safe),
    "sqrt": (math.sqrt, _sqrt_safe),
    "rsqrt": (_rsqrt, _rsqrt_safe),
    "tanh": (math.tanh, math.tanh),
    "sin": (math.sin, _sin_safe),
    "cos": (math.cos, _cos_safe),
    "tan": (math.tan, _tan_safe),
    "arcsin": (math.asin, _asin_safe),
    "arccos": (math.acos, _acos_safe),
    "arctan": (math.atan, math.atan),
    "arcsinh": (math.asinh, math.asinh),
    "arccosh": (math.acosh, _acosh_safe),
    "arctanh": (math.atanh, _atanh_safe),
    "erf": (math.erf, math.erf),
    "erfc": (math.erfc, _erfc_safe),
    "lgamma": (_lgamma_safe, _lgamma_safe),
    "digamma": (_digamma, _digamma),
    "sigmoid": (_expit, _expit_safe) if _SCIPY else (_sigmoid_np, _sigmoid_np),
    "softplus": (_softplus, _softplus),
}
for _name, (_fast, _safe) in _FLOAT_UNARY.items():
    register_kernel(NAME, _name, _float_unary(_fast, _safe))


@_k("reciprocal")
def _py_reciprocal(x: PyArray) -> PyArray:
    dt = x.tb_dtype
    if dt.kind == "f":
        try:
            out = list(map(_recip, x._data))
        except ZeroDivisionError:
            out = list(map(_recip_safe, x._data))
        return _mk(_r32(out) if dt is D.float32 else out, x.shape, dt)
    if dt is D.bool_:
        raise TypeError("reciprocal: not supported for bool (NumPy has no bool loop)")
    # integer reciprocal truncates: 1 and -1 keep their value, 0 gives 0 (NumPy's C division
    # by zero result on x86-64 is undefined; it warns), the rest 0
    return _mk([v if v in (1, -1) else 0 for v in x._data], x.shape, dt)


@_k("neg")
def _py_neg(x: PyArray) -> PyArray:
    dt = x.tb_dtype
    if dt is D.bool_:
        raise TypeError("neg: the numpy boolean negative, the `-` operator, is not supported")
    out = list(map(operator.neg, x._data))
    return _mk(_wrap_ints(out, dt) if dt.kind == "i" else out, x.shape, dt)


@_k("abs")
def _py_abs(x: PyArray) -> PyArray:
    dt = x.tb_dtype
    if dt is D.bool_:
        return x
    if dt.kind == "f":
        return _mk(list(map(math.fabs, x._data)), x.shape, dt)
    return _mk(_wrap_ints(list(map(abs, x._data)), dt), x.shape, dt)


def _sign_f(v: float) -> float:
    if v > 0:
        return 1.0
    if v < 0:
        return -1.0
    return v if v != v else 0.0


@_k("sign")
def _py_sign(x: PyArray) -> PyArray:
    dt = x.tb_dtype
    if dt is D.bool_:
        raise TypeError("sign: not supported for bool (NumPy has no bool loop)")
    if dt.kind == "f":
        return _mk(list(map(_sign_f, x._data)), x.shape, dt)
    return _mk([(v > 0) - (v < 0) for v in x._data], x.shape, dt)


@_k("square")
def _py_square(x: PyArray) -> PyArray:
    dt = x.tb_dtype
    d = x._data
    if dt is D.bool_:
        return x
    return _finish(list(map(_mul, d, d)), x.shape, dt)


def _integral(fn: Any) -> Any:
    def kernel(x: PyArray) -> PyArray:
        dt = x.tb_dtype
        if dt.kind != "f":
            return x  # integers are already whole
        return _mk(list(map(fn, x._data)), x.shape, dt)

    kernel.__name__ = f"_py_{fn.__name__.strip('_')}"
    return kernel


register_kernel(NAME, "floor", _integral(_floor))
register_kernel(NAME, "ceil", _integral(_ceil))
register_kernel(NAME, "round", _integral(_round_half_even))


@_k("logical_not")
def _py_logical_not(x: PyArray) -> PyArray:
    return _mk([not v for v in x._data], x.shape, D.bool_)


@_k("isnan")
def _py_isnan(x: PyArray) -> PyArray:
    if x.tb_dtype.kind != "f":
        return _mk([False] * len(x._data), x.shape, D.bool_)
    return _mk([v != v for v in x._data], x.shape, D.bool_)


@_k("isfinite")
def _py_isfinite(x: PyArray) -> PyArray:
    if x.tb_dtype.kind != "f":
        return _mk([True] * len(x._data), x.shape, D.bool_)
    return _mk(list(map(math.isfinite, x._data)), x.shape, D.bool_)


@_k("polygamma")
def _py_polygamma(x: PyArray, *, n: int) -> PyArray:
    data, dt = _float_in(x)
    n = int(n)
    out = [_polygamma(n, v) for v in data]
    return _mk(_r32(out) if dt is D.float32 else out, x.shape, dt)


@_k("cast")
def _py_cast(x: PyArray, *, dtype: DType) -> PyArray:
    src = x.tb_dtype
    if src is dtype:
        return x
    return _mk(_cast_values(x._data, src, dtype), x.shape, dtype)


# -- binary ---------------------------------------------------------------------------------------
def _operands(a: PyArray, b: PyArray) -> tuple[Any, Any, tuple[int, ...]]:
    """Both operands' values broadcast to the result shape (an iterator for a scalar)."""
    return pa._broadcast_pair(a._data, a.shape, b._data, b.shape)


def _dtype2(a: PyArray, b: PyArray) -> DType:
    da, db = a.tb_dtype, b.tb_dtype
    return da if da is db else D.promote(da, db)


def _arith(name: str, op: Any, bool_op: Any) -> Any:
    def kernel(a: PyArray, b: PyArray) -> PyArray:
        xs, ys, shape = _operands(a, b)
        dt = _dtype2(a, b)
        if dt is D.bool_:
            if bool_op is None:
                raise TypeError(f"{name}: not supported for bool operands (as in NumPy)")
            return _mk(list(map(bool_op, xs, ys)), shape, dt)
        out = list(map(op, xs, ys))
        if dt.kind == "f":
            return _mk(_r32(out) if dt is D.float32 else out, shape, dt)
        return _mk(_wrap_ints(out, dt), shape, dt)

    kernel.__name__ = f"_py_{name}"
    return kernel


def _or(a: Any, b: Any) -> bool:
    return bool(a or b)


def _and(a: Any, b: Any) -> bool:
    return bool(a and b)


register_kernel(NAME, "add", _arith("add", _add, _or))
register_kernel(NAME, "sub", _arith("sub", _sub, None))
register_kernel(NAME, "mul", _arith("mul", _mul, _and))


def _div_safe(a: float, b: float) -> float:
    if b == 0:
        if a != a or a == 0:
            return _nan
        return math.copysign(_inf, a) * math.copysign(1.0, b)
    return a / b


@_k("div")
def _py_div(a: PyArray, b: PyArray) -> PyArray:
    xs, ys, shape = _operands(a, b)
    dt = _dtype2(a, b)
    if dt.kind != "f":  # true division of integers/bools: float64, as NumPy
        xs, ys, dt = [float(v) for v in xs], [float(v) for v in ys], D.float64
    try:
        out = list(map(operator.truediv, xs, ys))
    except ZeroDivisionError:
        if dt.kind == "f" and a.tb_dtype.kind == "f":
            xs, ys, shape = _operands(a, b)  # (a scalar operand's iterator is used up)
        else:
            xs, ys = [float(v) for v in _operands(a, b)[0]], [
                float(v) for v in _operands(a, b)[1]]
        out = list(map(_div_safe, xs, ys))
    return _mk(_r32(out) if dt is D.float32 else out, shape, dt)


def _floordiv_f(a: float, b: float) -> float:
    # Python's float // is NumPy's npy_floor_divide (fmod, then the same corrections); for a
    # zero divisor NumPy returns a / b (inf with a's sign, NaN for 0 / 0)
    return a // b if b else _div_safe(a, b)


def _floordiv_i(a: int, b: int) -> int:
    return a // b if b else 0


def _mod_f(a: float, b: float) -> float:
    # Python's float % is NumPy's npy_remainder (fmod, then the sign fix); x % 0 is NaN
    return a % b if b else _nan


def _mod_i(a: int, b: int) -> int:
    return a % b if b else 0


def _int_or_float(name: str, fop: Any, iop: Any) -> Any:
    def kernel(a: PyArray, b: PyArray) -> PyArray:
        xs, ys, shape = _operands(a, b)
        dt = _dtype2(a, b)
        if dt is D.bool_:
            raise TypeError(f"{name}: not supported for bool operands (NumPy gives int8)")
        if dt.kind == "f":
            out = list(map(fop, xs, ys))
            return _mk(_r32(out) if dt is D.float32 else out, shape, dt)
        return _mk(_wrap_ints(list(map(iop, xs, ys)), dt), shape, dt)

    kernel.__name__ = f"_py_{name}"
    return kernel


def _safe_pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        # |a| > 1 with b large positive, or |a| < 1 with b large negative
        if a < 0 and b == math.floor(b) and math.fmod(b, 2.0) != 0:
            return -_inf
        return _inf
    except ValueError:
        if a == 0:  # 0 ** negative: inf (with the sign of a for odd integer powers)
            if b == math.floor(b) and math.fmod(b, 2.0) != 0:
                return math.copysign(_inf, a)
            return _inf
        return _nan  # a negative base to a fractional power


def _pow_i(a: int, b: int) -> int:
    if b < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    return pow(a, b, 2**64)  # wrapped below; the modulus keeps huge powers cheap


register_kernel(NAME, "floordiv", _int_or_float("floordiv", _floordiv_f, _floordiv_i))
register_kernel(NAME, "mod", _int_or_float("mod", _mod_f, _mod_i))
register_kernel(NAME, "pow", _int_or_float("pow", _safe_pow, _pow_i))


def _extreme_kernel(name: str, op: Any) -> Any:
    def kernel(a: PyArray, b: PyArray) -> PyArray:
        xs, ys, shape = _operands(a, b)
        return _mk(list(map(op, xs, ys)), shape, _dtype2(a, b))

    kernel.__name__ = f"_py_{name}"
    return kernel


register_kernel(NAME, "maximum", _extreme_kernel("maximum", _maximum))
register_kernel(NAME, "minimum", _extreme_kernel("minimum", _minimum))


def _compare(name: str, op: Any) -> Any:
    def kernel(a: PyArray, b: PyArray) -> PyArray:
        xs, ys, shape = _operands(a, b)
        return _mk(list(map(op, xs, ys)), shape, D.bool_)

    kernel.__name__ = f"_py_{name}"
    return kernel


for _name, _op in (("equal", operator.eq), ("not_equal", operator.ne), ("less", operator.lt),
                   ("less_equal", operator.le), ("greater", operator.gt),
                   ("greater_equal", operator.ge), ("logical_and", _and),
                   ("logical_or", _or)):
    register_kernel(NAME, _name, _compare(_name, _op))


@_k("where")
def _py_where(cond: PyArray, x: PyArray, y: PyArray) -> PyArray:
    out, shape = pa._select(cond._data, cond.shape, x._data, x.shape, y._data, y.shape)
    dt = _dtype2(x, y)
    if x.tb_dtype is not y.tb_dtype:
        out = _cast_values(out, D.float64 if dt.kind == "f" else D.int64, dt)
    return _mk(out, shape, dt)


@_k("clip")
def _py_clip(x: PyArray, *, lo: Any, hi: Any) -> PyArray:
    dt = x.tb_dtype
    out = x._data
    if dt.kind == "f":  # NumPy 1.26 casts Python bounds to the array's float dtype
        lo = None if lo is None else as_raw([lo], dt)._data[0]
        hi = None if hi is None else as_raw([hi], dt)._data[0]
    if lo is not None:
        out = [_maximum(v, lo) for v in out]
    if hi is not None:
        out = [_minimum(v, hi) for v in out]
    if isinstance(lo, float) or isinstance(hi, float):
        src = D.float64
    else:
        src = D.int64 if dt.kind != "f" else dt
    return _mk(_cast_values(list(out), src, dt) if src is not dt else list(out), x.shape, dt)


# -- reductions -----------------------------------------------------------------------------------
if sys.version_info < (3, 12) and sys.implementation.name == "cpython":
    # CPython up to 3.11 adds floats in sum() left to right in a C double: 3x reduce's speed
    _seq = sum
else:  # 3.12 made sum() of floats compensated (Neumaier): NumPy adds plainly, so reduce
    def _seq(values: Any, start: Any) -> Any:
        return reduce(_add, values, start)


def _pairwise(a: list[float]) -> float:
    """NumPy's pairwise_sum of a contiguous run (without the reduction's identity)."""
    n = len(a)
    if n < 8:
        return _seq(a, 0.0)
    if n <= 128:
        m = n - n % 8
        if m == 8:
            r0, r1, r2, r3, r4, r5, r6, r7 = a[:8]
        else:  # eight accumulators, each adding every eighth element in order
            r0 = _seq(a[8:m:8], a[0])
            r1 = _seq(a[9:m:8], a[1])
            r2 = _seq(a[10:m:8], a[2])
            r3 = _seq(a[11:m:8], a[3])
            r4 = _seq(a[12:m:8], a[4])
            r5 = _seq(a[13:m:8], a[5])
            r6 = _seq(a[14:m:8], a[6])
            r7 = _seq(a[15:m:8], a[7])
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        return _seq(a[m:], res) if m < n else res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a[:n2]) + _pairwise(a[n2:])


_SHAPE_CACHE: dict[tuple[Any, ...], tuple[int, ...]] = {}


def _reduced_shape(shape: tuple[int, ...], axis: tuple[int, ...],
                   keepdims: bool) -> tuple[int, ...]:
    key = (shape, axis, keepdims)
    out = _SHAPE_CACHE.get(key)
    if out is None:
        if len(_SHAPE_CACHE) > 512:
            _SHAPE_CACHE.clear()
        out = _SHAPE_CACHE[key] = _reduced_shape_uncached(shape, axis, keepdims)
    return out


def _reduced_shape_uncached(shape: tuple[int, ...], axis: tuple[int, ...],
                            keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axis else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axis)


_GROUP_CACHE: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[Any, ...]] = {}


def _group_plan(shape: tuple[int, ...], axis: tuple[int, ...]) -> tuple[Any, ...]:
    """(source positions or None, group size, number of groups, outer count, run length)."""
    key = (shape, axis)
    plan = _GROUP_CACHE.get(key)
    if plan is None:
        nd = len(shape)
        axes = tuple(sorted(set(axis)))
        kept = tuple(i for i in range(nd) if i not in axes)
        # the reduced axes that are trailing coalesce with the last axis into one run, as in
        # NumPy's iterator (size-1 axes are dropped by the iterator: they do not interrupt it)
        t = nd
        while t > 0 and ((t - 1) in axes or shape[t - 1] == 1):
            t -= 1
        run = _prod(shape[t:]) if t < nd else 1
        perm = kept + axes
        idx = _perm_index(shape, perm) if perm != tuple(range(nd)) else None
        g = _prod(shape[i] for i in axes)
        nout = _prod(shape[i] for i in kept)
        plan = (idx, g, nout, g // run if run else 0, run)
        if len(_GROUP_CACHE) > 512:
            _GROUP_CACHE.clear()
        _GROUP_CACHE[key] = plan
    return plan


def _groups(x: PyArray, axis: tuple[int, ...]) -> tuple[list[list[Any]], int, int]:
    """The values of each output element's reduction group as rows, in C order of the reduced
    axes, plus (outer reduced count, length of the trailing reduced run)."""
    idx, g, nout, outer, run = _group_plan(x.shape, axis)
    data = x._data
    if g == 0:
        return [[] for _ in range(nout)], 0, run
    if nout == 1:
        return [data if idx is None else [data[i] for i in idx]], outer, run
    if idx is not None:
        data = [data[i] for i in idx]
    return [data[i * g:(i + 1) * g] for i in range(nout)], outer, run


def _sum_row_f(row: list[float], outer: int, run: int) -> float:
    """A float reduction group summed in NumPy's order: the identity 0, then for each index of
    the outer reduced axes (C order) the pairwise sum of the trailing reduced run; without a
    trailing run, element by element."""
    if run == 1:
        return _seq(row, 0.0)
    if outer <= 1:
        return 0.0 + _pairwise(row)
    acc = 0.0
    for i in range(outer):
        acc += _pairwise(row[i * run:(i + 1) * run])
    return acc


def _r1(x: float) -> float:
    """One Python float rounded to float32."""
    return array("f", (x,))[0]


def _seq32(values: Any, start: float) -> float:
    """Left-to-right float32 additions (each rounded: a float32 add is the double sum rounded)."""
    acc = start
    for v in values:
        acc = _r1(acc + v)
    return acc


def _pairwise32(a: list[float]) -> float:
    """NumPy's pairwise_sum in float32: the float64 algorithm with every addition rounded."""
    n = len(a)
    if n < 8:
        return _seq32(a, 0.0)
    if n <= 128:
        m = n - n % 8
        acc = a[:8]
        for i in range(8, m, 8):
            acc = _r32(list(map(_add, acc, a[i:i + 8])))
        r0, r1, r2, r3, r4, r5, r6, r7 = acc
        res = _r1(_r1(_r1(r0 + r1) + _r1(r2 + r3)) + _r1(_r1(r4 + r5) + _r1(r6 + r7)))
        return _seq32(a[m:], res)
    n2 = n // 2
    n2 -= n2 % 8
    return _r1(_pairwise32(a[:n2]) + _pairwise32(a[n2:]))


def _sum_row_f32(row: list[float], outer: int, run: int) -> float:
    """:func:`_sum_row_f` in float32 (NumPy sums float32 in float32)."""
    if run == 1:
        return _seq32(row, 0.0)
    if outer <= 1:
        return _r1(0.0 + _pairwise32(row))
    acc = 0.0
    for i in range(outer):
        acc = _r1(acc + _pairwise32(row[i * run:(i + 1) * run]))
    return acc


@_k("sum")
def _py_sum(x: PyArray, *, axis: tuple, keepdims: bool) -> PyArray:
    dt = x.tb_dtype
    shape = _reduced_shape(x.shape, axis, keepdims)
    if not axis:
        return x
    rows, outer, run = _groups(x, axis)
    if dt.kind == "f":
        if dt is D.float32:
            out = [_sum_row_f32(r, outer, run) for r in rows]
        else:
            out = [_sum_row_f(r, outer, run) for r in rows]
    elif dt is D.bool_:
        out = [any(r) for r in rows]  # add.reduce with dtype bool is logical or
    else:
        out = _wrap_ints([sum(r) for r in rows], dt)
    return _mk(out, shape, dt)


@_k("prod")
def _py_prod(x: PyArray, *, axis: tuple, keepdims: bool) -> PyArray:
    dt = x.tb_dtype
    shape = _reduced_shape(x.shape, axis, keepdims)
    if not axis:
        return x
    rows, _, _ = _groups(x, axis)
    if dt.kind == "f":
        out = [reduce(_mul, r, 1.0) for r in rows]
        if dt is D.float32:
            out = [_prod32(r) for r in rows]
    elif dt is D.bool_:
        out = [all(r) for r in rows]
    else:
        out = _wrap_ints([math.prod(r) for r in rows], dt)
    return _mk(out, shape, dt)


def _prod32(row: list[float]) -> float:
    acc = 1.0
    for v in row:
        acc = _r1(acc * v)
    return acc


def _row_extreme(r: list[Any], op: Any, builtin: Any) -> Any:
    """NumPy's max/min of one group: NaN propagates, ties go to the later element (which only
    shows for signed zeros). The builtin does the work when the group has no NaN (its sum is
    then not NaN, or the slow path checks) and the extreme is not zero."""
    s = sum(r)
    if s == s:
        v = builtin(r)
        if v != 0:
            return v
    return reduce(op, r)


def _extreme_reduce(name: str, op: Any) -> Any:
    builtin = max if name == "max" else min

    def kernel(x: PyArray, *, axis: tuple, keepdims: bool) -> PyArray:
        shape = _reduced_shape(x.shape, axis, keepdims)
        if not axis:
            return x
        rows, _, _ = _groups(x, axis)
        if any(not r for r in rows):
            raise ValueError(
                f"zero-size array to reduction operation {name} which has no identity")
        if x.tb_dtype.kind != "f":
            return _mk([builtin(r) for r in rows], shape, x.tb_dtype)
        return _mk([_row_extreme(r, op, builtin) for r in rows], shape, x.tb_dtype)

    kernel.__name__ = f"_py_{name}"
    return kernel


register_kernel(NAME, "max", _extreme_reduce("max", _maximum))
register_kernel(NAME, "min", _extreme_reduce("min", _minimum))


@_k("logsumexp")
def _py_logsumexp(x: PyArray, *, axis: tuple, keepdims: bool) -> PyArray:
    # the numpy kernel's steps, group by group: m = max (non-finite: 0), then
    # log(sum(exp(x - m))) + m, each step rounded as NumPy rounds it, the sum in its order
    dt = x.tb_dtype
    shape = _reduced_shape(x.shape, axis, keepdims)
    if len(x._data) == 0:
        return _py_log(_py_sum(_py_exp(x), axis=axis, keepdims=keepdims))
    if dt.kind != "f":
        x, dt = _py_cast(x, dtype=D.float64), D.float64
    rows, outer, run = _groups(x, axis) if axis else ([[v] for v in x._data], 1, 1)
    R = _rounder(dt)
    exp, log = math.exp, math.log
    out = []
    for r in rows:
        m = _row_extreme(r, _maximum, max)
        if m - m != 0:
            m = 0.0
        if dt is D.float32:
            e = R(list(map(_exp_safe, R([v - m for v in r]))))
            s_ = _sum_row_f32(e, outer, run)
        else:
            try:
                e = [exp(v - m) for v in r]
            except OverflowError:  # (a NaN maximum leaves m = 0)
                e = [_exp_safe(v - m) for v in r]
            s_ = _sum_row_f(e, outer, run)
        lg = log(s_) if s_ > 0 else _log_safe(s_)
        out.append(lg + m)
    return _mk(R(out), shape, dt)


_py_log = _float_unary(math.log, _log_safe)
_py_exp = _float_unary(math.exp, _exp_safe)
_py_add = _arith("add", _add, _or)
_py_sub = _arith("sub", _sub, None)
_py_max = _extreme_reduce("max", _maximum)


def _arg_extreme(name: str, better: Any) -> Any:
    def lane(v: list[Any]) -> int:
        if not v:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        best, at = v[0], 0
        if best != best:
            return 0
        for i in range(1, len(v)):
            c = v[i]
            if c != c:
                return i  # the first NaN wins, as in NumPy
            if better(c, best):
                best, at = c, i
        return at

    def kernel(x: PyArray, *, axis: int) -> PyArray:
        if not x.shape:
            return _mk([0], (), D.int64)
        rows, _, _ = _groups(x, (axis,))
        shape = _reduced_shape(x.shape, (axis,), False)
        return _mk([lane(r) for r in rows], shape, D.int64)

    kernel.__name__ = f"_py_{name}"
    return kernel


register_kernel(NAME, "argmax", _arg_extreme("argmax", operator.gt))
register_kernel(NAME, "argmin", _arg_extreme("argmin", operator.lt))


def _moveaxis_last(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return (*tuple(i for i in range(len(shape)) if i != axis), axis)


@_k("cumsum")
def _py_cumsum(x: PyArray, *, axis: int, reverse: bool) -> PyArray:
    dt = x.tb_dtype
    shape = x.shape
    if not shape:
        return x
    perm = _moveaxis_last(shape, axis)
    data = x._data
    moved = perm != tuple(range(len(shape)))
    if moved:
        data = [data[i] for i in _perm_index(shape, perm)]
    n = shape[axis]
    op = _or if dt is D.bool_ else _add
    out: list[Any] = []
    for i in range(0, len(data), n or 1):
        row = data[i:i + n]
        if reverse:
            row = row[::-1]
        # out[0] = x[0], out[i] = out[i - 1] + x[i]: NumPy's order (no identity added)
        acc = _cumsum32(row) if dt is D.float32 else list(accumulate(row, op))
        if reverse:
            acc.reverse()
        out.extend(acc)
    if dt.kind == "i":
        out = _wrap_ints(out, dt)
    elif dt is D.bool_:
        out = [bool(v) for v in out]
    if moved:
        mshape = tuple(shape[i] for i in perm)
        inv = tuple(perm.index(i) for i in range(len(shape)))
        out = [out[i] for i in _perm_index(mshape, inv)]
    return _mk(out, shape, dt)


def _cumsum32(row: list[float]) -> list[float]:
    out = []
    s = 0.0
    for i, v in enumerate(row):
        s = v if i == 0 else _r1(s + v)
        out.append(s)
    return out


# -- shape and data movement ----------------------------------------------------------------------
@_k("reshape")
def _py_reshape(x: PyArray, *, shape: tuple) -> PyArray:
    shp = pa._resolve_shape(tuple(shape), len(x._data))
    return _mk(x._data, shp, x.tb_dtype)


@_k("transpose")
def _py_transpose(x: PyArray, *, perm: tuple) -> PyArray:
    perm = tuple(int(p) % max(len(x.shape), 1) for p in perm)
    shape = x.shape
    if perm == tuple(range(len(shape))):
        return x
    d = x._data
    out = [d[i] for i in _perm_index(shape, perm)]
    return _mk(out, tuple(shape[p] for p in perm), x.tb_dtype)


@_k("broadcast_to")
def _py_broadcast_to(x: PyArray, *, shape: tuple) -> PyArray:
    shape = tuple(int(d) for d in shape)
    if shape == x.shape:
        return x
    return _mk(pa._expand(x._data, x.shape, shape), shape, x.tb_dtype)


@_k("concat")
def _py_concat(*xs: PyArray, axis: int) -> PyArray:
    first = xs[0]
    nd = len(first.shape)
    axis = axis % nd
    dt = first.tb_dtype
    for x in xs[1:]:
        dt = D.promote(dt, x.tb_dtype)
    if any(x.tb_dtype is not dt for x in xs):
        return _py_concat(*[_py_cast(x, dtype=dt) for x in xs], axis=axis)
    out, shape = pa._concat_flat([(x._data, x.shape) for x in xs], axis)
    return _mk(out, shape, dt)


def _positions(index: Any) -> list[int]:
    """The plan's flat positions as a list of ints, cached on the plan."""
    cache = index.backend_cache
    if cache is None:
        cache = index.backend_cache = {}
    pos = cache.get(NAME)
    if pos is None:
        flat = index.flat_positions()
        pos = flat if isinstance(flat, list) else flat.ravel().tolist()
        cache[NAME] = pos
    return pos


@_k("gather_flat")
def _py_gather(x: PyArray, *, index: Any) -> PyArray:
    d = x._data
    return _mk([d[p] for p in _positions(index)], tuple(index.out_shape), x.tb_dtype)


@_k("scatter_add_flat")
def _py_scatter_add(updates: PyArray, *, index: Any, shape: tuple) -> PyArray:
    dt = updates.tb_dtype
    shape = tuple(shape)
    pos = _positions(index)
    u = updates._data
    if len(u) != len(pos):
        u = pa._expand(u, updates.shape, tuple(index.out_shape))
    zero = _CAST[dt](0)
    out = [zero] * _prod(shape)
    if dt is D.bool_:
        for p, v in zip(pos, u):
            out[p] = out[p] or v
    else:
        for p, v in zip(pos, u):
            out[p] += v
    return _finish(out, shape, dt) if dt is not D.bool_ else _mk(out, shape, dt)


@_k("one_hot")
def _py_one_hot(indices: PyArray, *, depth: int, dtype: DType) -> PyArray:
    one, zero = _CAST[dtype](1), _CAST[dtype](0)
    row = [zero] * depth
    out: list[Any] = []
    for i in indices._data:
        r = list(row)
        if 0 <= i < depth:
            r[i] = one
        out.extend(r)
    return _mk(out, (*indices.shape, depth), dtype)


# -- linear algebra -------------------------------------------------------------------------------
def _batches(a: PyArray, b: PyArray, a_core: int, b_core: int) -> tuple[Any, ...]:
    """Broadcast batch dims: (batch shape, a matrices, b matrices) as flat value lists."""
    ash, bsh = a.shape, b.shape
    ab, bb = ash[:-a_core] if a_core else ash, bsh[:-b_core] if b_core else bsh
    batch = pa._broadcast_shapes(ab, bb) if ab != bb else ab
    na, nb = _prod(ash[len(ab):]), _prod(bsh[len(bb):])
    am = [a._data[i * na:(i + 1) * na] for i in range(_prod(ab))]
    bm = [b._data[i * nb:(i + 1) * nb] for i in range(_prod(bb))]
    if ab != batch:
        am = pa._expand(am, ab, batch) if am else am
    if bb != batch:
        bm = pa._expand(bm, bb, batch) if bm else bm
    n = _prod(batch)
    if len(am) != n:
        am = [am[0]] * n if am else []
    if len(bm) != n:
        bm = [bm[0]] * n if bm else []
    return batch, am, bm


def _mm(ad: list[Any], bd: list[Any], n: int, k: int, m: int, zero: Any) -> list[Any]:
    """An (n, k) @ (k, m) product, each dot product summed left to right from 0."""
    cols = [bd[j::m] for j in range(m)]
    rows = [ad[i * k:(i + 1) * k] for i in range(n)]
    return [_seq(map(_mul, r, c), zero) for r in rows for c in cols]


@_k("matmul")
def _py_matmul(a: PyArray, b: PyArray) -> PyArray:
    dt = _dtype2(a, b)
    if not a.shape or not b.shape:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    av, bv = len(a.shape) == 1, len(b.shape) == 1
    a2 = _mk(a._data, (1, *a.shape), a.tb_dtype) if av else a
    b2 = _mk(b._data, (*b.shape, 1), b.tb_dtype) if bv else b
    n, k = a2.shape[-2:]
    k2, m = b2.shape[-2:]
    if k != k2:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {k2} is different from {k})")
    batch, am, bm = _batches(a2, b2, 2, 2)
    if dt is D.bool_:
        out = []
        for x, y in zip(am, bm):
            cols = [y[j::m] for j in range(m)]
            out.extend(any(map(_and, x[i * k:(i + 1) * k], c)) for i in range(n)
                       for c in cols)
        res = _mk(out, (*batch, n, m), dt)
    else:
        zero = _CAST[dt](0)
        if a.tb_dtype is not b.tb_dtype:
            am = [_cast_values(x, a.tb_dtype, dt) for x in am]
            bm = [_cast_values(y, b.tb_dtype, dt) for y in bm]
        out = []
        if dt is D.float32:
            for x, y in zip(am, bm):
                out.extend(_mm32(x, y, n, k, m))
        else:
            for x, y in zip(am, bm):
                out.extend(_mm(x, y, n, k, m, zero))
        res = _finish(out, (*batch, n, m), dt)
    shape = batch + ((n,) if not av else ()) + ((m,) if not bv else ())
    return _mk(res._data, shape, dt)


def _mm32(ad: list[float], bd: list[float], n: int, k: int, m: int) -> list[float]:
    out = []
    for i in range(n):
        for j in range(m):
            acc = 0.0
            for t in range(k):
                acc = _r1(acc + _r1(ad[i * k + t] * bd[t * m + j]))
            out.append(acc)
    return out


def _chol(m: list[float], n: int) -> list[float]:
    """The lower Cholesky factor of one row-major matrix (reads the lower triangle); all NaN
    when the matrix is not positive definite."""
    L = [0.0] * (n * n)
    for j in range(n):
        rj = L[j * n:j * n + j]
        d = m[j * n + j] - _seq(map(_mul, rj, rj), 0.0)
        if d <= 0:  # (a NaN pivot propagates instead, as OpenBLAS's potrf does)
            return [_nan] * (n * n)
        djj = math.sqrt(d)
        L[j * n + j] = djj
        for i in range(j + 1, n):
            s = m[i * n + j] - _seq(map(_mul, L[i * n:i * n + j], rj), 0.0)
            L[i * n + j] = s / djj
    return L


@_k("cholesky")
def _py_cholesky(a: PyArray) -> PyArray:
    dt = a.tb_dtype
    if dt.kind != "f":
        raise TypeError(f"cholesky: needs a float matrix, got {dt.name}")
    n = a.shape[-1]
    size = n * n
    d = a._data
    out: list[float] = []
    for i in range(0, len(d), size or 1):
        out.extend(_chol(d[i:i + size], n))
    return _finish(out, a.shape, dt)


def _tsolve(a: list[float], b: list[float], n: int, k: int, lower: bool,
            transpose_a: bool) -> list[float]:
    """Solve op(A) X = B for one triangular A (n, n) and B (n, k), by substitution."""
    # op(A) is lower triangular when exactly one of lower / transpose_a holds
    if transpose_a:
        at = [a[j * n + i] for i in range(n) for j in range(n)]
        eff_lower = not lower
        # the triangle read is A's `lower` one, which transposing moves to the other side
        mat = at
    else:
        eff_lower = lower
        mat = a
    x = [0.0] * (n * k)
    order = range(n) if eff_lower else range(n - 1, -1, -1)
    for i in order:
        piv = mat[i * n + i]
        if piv == 0:
            raise LinAlgError("Singular matrix")
        js = range(i) if eff_lower else range(i + 1, n)
        row = [mat[i * n + j] for j in js]
        for c in range(k):
            s = b[i * k + c] - _seq(map(_mul, row, [x[j * k + c] for j in js]), 0.0)
            x[i * k + c] = s / piv
    return x


@_k("triangular_solve")
def _py_triangular_solve(a: PyArray, b: PyArray, *, lower: bool, transpose_a: bool) -> PyArray:
    dt = _dtype2(a, b)
    n = a.shape[-1]
    vec = len(b.shape) == 1
    b2 = _mk(b._data, (*b.shape, 1), b.tb_dtype) if vec else b
    k = b2.shape[-1]
    batch, am, bm = _batches(a, b2, 2, 2)
    out: list[float] = []
    for x, y in zip(am, bm):
        out.extend(_tsolve(x, y, n, k, lower, transpose_a))
    res = _finish(out, (*batch, n, k), dt)
    return _mk(res._data, (*batch, n), dt) if vec else res


def _gauss_solve(a: list[float], b: list[float], n: int, k: int) -> list[float]:
    """A^-1 B for one (n, n) A and (n, k) B: Gaussian elimination with partial pivoting."""
    m = [a[i * n:(i + 1) * n] + b[i * k:(i + 1) * k] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if m[p][c] == 0:
            raise LinAlgError("Singular matrix")
        m[c], m[p] = m[p], m[c]
        piv = m[c]
        for r in range(c + 1, n):
            f = m[r][c] / piv[c]
            if f:
                row = m[r]
                for j in range(c, n + k):
                    row[j] -= f * piv[j]
    x = [[0.0] * k for _ in range(n)]
    for i in range(n - 1, -1, -1):
        for col in range(k):
            s = m[i][n + col] - _seq(map(_mul, m[i][i + 1:n], [x[j][col] for j in
                                                              range(i + 1, n)]), 0.0)
            x[i][col] = s / m[i][i]
    return [v for row in x for v in row]


@_k("solve")
def _py_solve(a: PyArray, b: PyArray) -> PyArray:
    dt = _dtype2(a, b)
    n, k = a.shape[-1], b.shape[-1]
    batch, am, bm = _batches(a, b, 2, 2)
    out: list[float] = []
    for x, y in zip(am, bm):
        out.extend(_gauss_solve(x, y, n, k))
    return _finish(out, (*batch, n, k), dt)


def _jacobi_eigh(a: list[float], n: int) -> list[float]:
    """Eigenvalues (ascending) and eigenvectors of the symmetric matrix whose lower triangle
    is ``a``'s, by cyclic Jacobi rotations: [n + 1, n], values then the vectors' matrix."""
    s = [[a[max(i, j) * n + min(i, j)] for j in range(n)] for i in range(n)]
    v = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    for _sweep in range(100):
        off = sum(s[i][j] * s[i][j] for i in range(n) for j in range(i + 1, n))
        if off == 0.0 or not math.isfinite(off):
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                if s[p][q] == 0.0:
                    continue
                # the rotation that zeroes s[p][q]: tan(t) the smaller root, for stability
                theta = (s[q][q] - s[p][p]) / (2.0 * s[p][q])
                t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                sn = t * c
                for r in range(n):  # columns p, q of S and V
                    sp, sq = s[r][p], s[r][q]
                    s[r][p], s[r][q] = c * sp - sn * sq, sn * sp + c * sq
                    vp, vq = v[r][p], v[r][q]
                    v[r][p], v[r][q] = c * vp - sn * vq, sn * vp + c * vq
                for r in range(n):  # rows p, q of S
                    sp, sq = s[p][r], s[q][r]
                    s[p][r], s[q][r] = c * sp - sn * sq, sn * sp + c * sq
    order = sorted(range(n), key=lambda i: s[i][i])
    out = [s[i][i] for i in order]
    for r in range(n):
        out.extend(v[r][i] for i in order)
    return out


@_k("eigh")
def _py_eigh(a: PyArray) -> PyArray:
    dt = a.tb_dtype
    if dt.kind != "f":
        raise TypeError(f"eigh: needs a float matrix, got {dt.name}")
    n = a.shape[-1]
    size = n * n
    out: list[float] = []
    for i in range(0, len(a._data), size or 1):
        out.extend(_jacobi_eigh(a._data[i:i + size], n))
    return _finish(out, (*a.shape[:-2], n + 1, n), dt)


# -- creation -------------------------------------------------------------------------------------
@_k("fill")
def _py_fill(*, shape: tuple, value: Any, dtype: DType) -> PyArray:
    shape = tuple(int(d) for d in shape)
    v = as_raw([value], dtype)._data[0] if not isinstance(value, PyArray) else value._data[0]
    return _mk([v] * _prod(shape), shape, dtype)


@_k("arange")
def _py_arange(*, start: Any, stop: Any, step: Any, dtype: DType) -> PyArray:
    if step == 0:
        raise ZeroDivisionError("arange: step must not be 0")
    n = max(0, math.ceil((stop - start) / step))
    if dtype.kind == "i" and all(isinstance(v, int) for v in (start, stop, step)):
        return _mk(_wrap_ints([start + i * step for i in range(n)], dtype), (n,), dtype)
    if dtype is D.bool_:
        if n > 2:
            raise TypeError("arange: no fill function for bool with more than 2 values")
        return _mk([bool(start + i * step) for i in range(n)], (n,), dtype)
    # NumPy fills from the first two values: start + i * ((start + step) - start)
    if dtype is D.float32:
        s, s1 = _r32([float(start), float(start + step)])
        delta = _r32([s1 - s])[0]
        out = [_r32([s + _r32([i * delta])[0]])[0] for i in range(n)]
        if n > 1:
            out[1] = s1
        return _mk(out, (n,), dtype)
    if dtype.kind == "i":  # float arguments for an integer dtype: NumPy's fill in int
        s, s1 = int(start), int(start + step)
        return _mk(_wrap_ints([s + i * (s1 - s) for i in range(n)], dtype), (n,), dtype)
    s, s1 = float(start), float(start + step)
    delta = s1 - s
    vals = [s + i * delta for i in range(n)]
    if n > 1:
        vals[1] = s1
    return _mk(vals, (n,), dtype)


@_k("linspace")
def _py_linspace(*, start: Any, stop: Any, num: int, dtype: DType) -> PyArray:
    num = int(num)
    start, stop = float(start), float(stop)
    div = num - 1
    delta = stop - start
    y = [float(i) for i in range(num)]
    if div > 0:
        step = delta / div
        if step == 0:
            y = [v / div * delta for v in y]
        else:
            y = [v * step for v in y]
    else:
        y = [v * delta for v in y]
    y = [v + start for v in y]
    if num > 1:
        y[-1] = stop
    if dtype.kind == "i":
        y = [math.floor(v) if v - v == 0 else v for v in y]
        y = [float(v) for v in y]
    return _mk(_cast_values(y, D.float64, dtype), (num,), dtype)


@_k("eye")
def _py_eye(*, n: int, m: int, dtype: DType) -> PyArray:
    one, zero = _CAST[dtype](1), _CAST[dtype](0)
    out = [zero] * (n * m)
    for i in range(min(n, m)):
        out[i * m + i] = one
    return _mk(out, (n, m), dtype)


@_k("from_uniform_bits")
def _py_from_uniform_bits(u: Any, *, shape: tuple, dtype: DType) -> PyArray:
    if isinstance(u, HostList):
        values = list(u.values)
    elif isinstance(u, pa.ndarray):
        values = list(u._data)
    elif hasattr(u, "__array_interface__"):
        values = u.ravel().tolist()
    else:
        values = list(u)
    shape = tuple(int(d) for d in shape)
    return _mk(_cast_values([float(v) for v in values], D.float64, dtype), shape, dtype)


# -- the layers' fused kernels (layer_kernels.py names them; same steps as the numpy ones) -------
def _same(values: list[float]) -> list[float]:
    return values


def _rounder(dt: DType) -> Any:
    """Per-step rounding of a dtype's elementwise results (NumPy computes float32 in float32)."""
    return _r32 if dt is D.float32 else _same


def _const(v: Any, dt: DType) -> float:
    """A Python or 0-d operand as a value of ``dt`` (NumPy casts it to the array's dtype)."""
    v = v._data[0] if isinstance(v, pa.ndarray) else v
    return _r32([float(v)])[0] if dt is D.float32 else float(v)


@_k("layers.gather_rows")
def _py_gather_rows(table: PyArray, indices: PyArray) -> PyArray:
    n = table.shape[0] if table.shape else 0
    row = _prod(table.shape[1:])
    d = table._data
    out: list[Any] = []
    for i in indices._data:
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis 0 with size {n}")
        i = i + n if i < 0 else i
        out.extend(d[i * row:(i + 1) * row])
    return _mk(out, indices.shape + table.shape[1:], table.tb_dtype)


@_k("layers.scatter_add_rows")
def _py_scatter_add_rows(updates: PyArray, indices: PyArray, *, num_rows: int) -> PyArray:
    dt = updates.tb_dtype
    rshape = updates.shape[len(indices.shape):]
    row = _prod(rshape)
    out = [_CAST[dt](0)] * (num_rows * row)
    u = updates._data
    rnd = _rounder(dt)
    for k, i in enumerate(indices._data):
        i = i + num_rows if i < 0 else i
        s = i * row
        out[s:s + row] = rnd(list(map(_add, out[s:s + row], u[k * row:(k + 1) * row])))
    if dt.kind == "i":
        out = _wrap_ints(out, dt)
    return _mk(out, (num_rows, *rshape), dt)


@_k("layers.adam_step")
def _py_adam(p: PyArray, g: PyArray, m: PyArray, v: PyArray, alpha: Any, *, beta_1: float,
             beta_2: float, epsilon: float) -> PyArray:
    dt = p.tb_dtype
    R = _rounder(dt)
    c1, c2, eps, a = (_const(1.0 - beta_1, dt), _const(1.0 - beta_2, dt), _const(epsilon, dt),
                      _const(alpha, dt))
    gd, md, vd = g._data, m._data, v._data
    m2 = R([x + y for x, y in zip(R([d * c1 for d in R(list(map(_sub, gd, md)))]), md)])
    v2 = R([x * c2 for x in R([x - y for x, y in zip(R([gi * gi for gi in gd]), vd)])])
    v2 = R([x + y for x, y in zip(v2, vd)])
    den = R([x + eps for x in R(list(map(_sqrt_safe, v2)))])
    step = R([x * a for x in R(list(map(_div_safe, m2, den)))])
    p2 = R(list(map(_sub, p._data, step)))
    return _mk(p2 + m2 + v2, (3, *p.shape), dt)


@_k("layers.sgd_momentum_step")
def _py_sgd_momentum(p: PyArray, g: PyArray, vel: PyArray, lr: Any, *, momentum: float,
                     nesterov: bool) -> PyArray:
    dt = p.tb_dtype
    R = _rounder(dt)
    mu, lr_ = _const(momentum, dt), _const(lr, dt)
    glr = R([x * lr_ for x in g._data])
    v2 = R(list(map(_sub, R([x * mu for x in vel._data]), glr)))
    if nesterov:  # (-(lr g) + mu v) + p
        p2 = R(list(map(_add, R([-x + y for x, y in zip(glr, R([mu * y for y in v2]))]),
                        p._data)))
    else:
        p2 = R(list(map(_add, p._data, v2)))
    return _mk(p2 + v2, (2, *p.shape), dt)


@_k("layers.rmsprop_step")
def _py_rmsprop(p: PyArray, g: PyArray, sq: PyArray, lr: Any, *, rho: float,
                epsilon: float) -> PyArray:
    dt = p.tb_dtype
    R = _rounder(dt)
    c, r, eps, lr_ = _const(1.0 - rho, dt), _const(rho, dt), _const(epsilon, dt), _const(lr, dt)
    gd = g._data
    s2 = R([x * c for x in R([x * x for x in gd])])
    s2 = R(list(map(_add, s2, R([x * r for x in sq._data]))))
    den = R(list(map(_sqrt_safe, R([x + eps for x in s2]))))
    step = R([x * lr_ for x in R(list(map(_div_safe, gd, den)))])
    p2 = R(list(map(_sub, p._data, step)))
    return _mk(p2 + s2, (2, *p.shape), dt)


def _softmax_rows(z: PyArray) -> tuple[list[list[float]], list[float], list[float], int]:
    """Per row of the last axis: exp(z - max), the max and the (pairwise) sum of the exps."""
    depth = z.shape[-1]
    dt = z.tb_dtype
    R = _rounder(dt)
    d = z._data
    rows, maxes, sums = [], [], []
    for i in range(0, len(d), depth or 1):
        r = d[i:i + depth]
        mx = reduce(_maximum, r)
        e = R(list(map(_exp_safe, R([x - mx for x in r]))))
        rows.append(e)
        maxes.append(mx)
        sums.append(_r1(0.0 + _pairwise32(e)) if dt is D.float32 else 0.0 + _pairwise(e))
    return rows, maxes, sums, depth


def _check_labels(labels: PyArray, depth: int) -> list[int]:
    lab = labels._data
    if lab and (min(lab) < 0 or max(lab) >= depth):
        raise ValueError(f"labels: class ids must be in [0, {depth}), got values in "
                         f"[{min(lab)}, {max(lab)}]")
    return lab


@_k("layers.sparse_softmax_ce")
def _py_sparse_ce(z: PyArray, labels: PyArray, *, reduce: str) -> PyArray:
    dt = z.tb_dtype
    R = _rounder(dt)
    lab = _check_labels(labels, z.shape[-1])
    _rows, maxes, sums, depth = _softmax_rows(z)
    d = z._data
    loss = R(list(map(_add, R(list(map(_log_safe, sums))), maxes)))
    loss = R([x - d[i * depth + k] for i, (x, k) in enumerate(zip(loss, lab))])
    if reduce == "mean":
        total = _r1(0.0 + _pairwise32(loss)) if dt is D.float32 else 0.0 + _pairwise(loss)
        return _mk(R([total / max(len(loss), 1)]), (), dt)
    return _mk(loss, labels.shape, dt)


@_k("layers.sparse_softmax_ce_grad")
def _py_sparse_ce_grad(z: PyArray, labels: PyArray, g: PyArray, *, reduce: str) -> PyArray:
    dt = z.tb_dtype
    R = _rounder(dt)
    rows, _, sums, _depth = _softmax_rows(z)
    lab = labels._data
    if reduce == "mean":
        scale = R([g._data[0] / max(len(rows), 1)])[0]
        scales = [scale] * len(rows)
    else:
        scales = g._data
    out: list[float] = []
    for e, s, k, c in zip(rows, sums, lab, scales):
        pr = R([x / s for x in e])
        pr[k] = R([pr[k] - 1.0])[0]
        out.extend(R([x * c for x in pr]))
    return _mk(out, z.shape, dt)
