"""Kernels of the ``tensorflow`` backend, one per name in ``KERNEL_NAMES``, on ``tf.Tensor``.

They run on eager tensors and on the symbolic tensors of a ``tf.function`` trace alike (see
``TensorflowBackend.compile``): nothing here reads values back to the host, and shapes come from
the static shape every traced tensor has. Results match the NumPy kernels value for value and
dtype for dtype, including the corners NumPy defines (NaN propagation in max/min/argmax, Python
floor division and modulo for negative and zero divisors, round half to even, the first index on
ties in argmax, ``digamma(±0) = ∓inf``…). Deliberate differences are listed in
``tests/runtime/test_tensorflow_backend.py`` (``DOCUMENTED_DTYPES``).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
import tensorflow as tf

from .. import dtypes as D
from ..dtypes import DType
from ..kernels import register_kernel

_raw = tf.raw_ops
_EAGER = type(tf.constant(0))

__all__ = ["FROM_TF", "NAME", "TO_TF", "constant"]

NAME = "tensorflow"

TO_TF: dict[DType, Any] = {
    D.bool_: tf.bool,
    D.int32: tf.int32,
    D.int64: tf.int64,
    D.float32: tf.float32,
    D.float64: tf.float64,
}
FROM_TF: dict[Any, DType] = {v: k for k, v in TO_TF.items()}
_TO_NP: dict[DType, Any] = {
    D.bool_: np.dtype(np.bool_),
    D.int32: np.dtype(np.int32),
    D.int64: np.dtype(np.int64),
    D.float32: np.dtype(np.float32),
    D.float64: np.dtype(np.float64),
}
_PYTYPE = {D.bool_: bool, D.int32: int, D.int64: int, D.float32: float, D.float64: float}
# Below this many elements, creation kernels build the values with NumPy on the host (exactly
# NumPy's numbers, and faster than several small device ops); above it, on the device.
_HOST_LIMIT = 1 << 16


_CONSTANTS: dict[Any, Any] = {}  # eager 0-d constants and int32 shape/axis vectors, reused


def constant(value: Any, dtype: DType) -> Any:
    """A 0-d tensor of ``dtype`` holding a Python scalar (converted like NumPy's scalar types).

    Eager constants are cached (tensors are immutable); inside a ``tf.function`` trace a cached
    one is captured as a graph constant, as any small eager tensor is."""
    if not isinstance(value, bool | int | float):
        value = np.asarray(value).item()  # NumPy scalars and 0-d arrays
    key = (value, dtype) if value else (repr(value), dtype)  # repr tells -0.0 from 0.0
    c = _CONSTANTS.get(key)
    if c is not None:
        return c
    py = _PYTYPE[dtype]
    v = value if value.__class__ is py else py(value)
    if v == 0 and py is float and math.copysign(1.0, v) < 0:
        # TF's own cache of Python scalars does not tell -0.0 from 0.0 either
        c = tf.constant(np.array(v, _TO_NP[dtype]))
    else:
        c = tf.constant(v, TO_TF[dtype])
    if v == v and c.__class__ is _EAGER:  # never cache NaN (it would never be found again)
        if len(_CONSTANTS) > 4096:
            _CONSTANTS.clear()
        _CONSTANTS[key] = c
    return c


def _dims(values: tuple[int, ...]) -> Any:
    """An int32 vector for shape, axis and permutation arguments (cached like constants)."""
    c = _CONSTANTS.get(values)
    if c is None:
        c = tf.constant(values, tf.int32) if values else tf.zeros((0,), tf.int32)
        if c.__class__ is _EAGER:
            if len(_CONSTANTS) > 4096:
                _CONSTANTS.clear()
            _CONSTANTS[values] = c
    return c


def _k(name: str):
    return register_kernel(NAME, name)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape.as_list())


def _size(shape: Any) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _is_float(x: Any) -> bool:
    return x.dtype.is_floating


# --------------------------------------------------------------------------------------------
# elementwise unary
# --------------------------------------------------------------------------------------------
# Hot kernels call tf.raw_ops (the public op wrappers): the same ops as tf.add, tf.exp…
# without their Python dispatch layers, which roughly halves the eager cost of a small op.
_UNARY = {
    "neg": _raw.Neg,
    "exp": _raw.Exp,
    "log": _raw.Log,
    "log1p": _raw.Log1p,
    "expm1": _raw.Expm1,
    "sqrt": _raw.Sqrt,
    "square": _raw.Square,
    "reciprocal": _raw.Reciprocal,
    "tanh": _raw.Tanh,
    "sigmoid": _raw.Sigmoid,
    "sin": _raw.Sin,
    "cos": _raw.Cos,
    "tan": _raw.Tan,
    "arcsin": _raw.Asin,
    "arccos": _raw.Acos,
    "arctan": _raw.Atan,
    "arcsinh": _raw.Asinh,
    "arccosh": _raw.Acosh,
    "arctanh": _raw.Atanh,
    "erfc": _raw.Erfc,
    "sign": _raw.Sign,
}


def _unary_raw(op):
    def kernel(x):
        return op(x=x)

    kernel.__name__ = op.__name__
    return kernel


for _name, _fn in _UNARY.items():
    register_kernel(NAME, _name, _unary_raw(_fn))


@_k("abs")
def _abs(x):
    return x if x.dtype == tf.bool else _raw.Abs(x=x)


@_k("rsqrt")
def _rsqrt(x):
    # 1 / sqrt(x) exactly as NumPy computes it (tf.math.rsqrt may differ in the last bit)
    return _raw.Reciprocal(x=_raw.Sqrt(x=x))


@_k("softplus")
def _softplus(x):
    # NumPy's logaddexp(0, x) formula: max(x, 0) + log1p(exp(-|x|))
    zero = constant(0.0, FROM_TF[x.dtype])
    return _raw.AddV2(x=_raw.Maximum(x=x, y=zero),
                      y=_raw.Log1p(x=_raw.Exp(x=_raw.Neg(x=_raw.Abs(x=x)))))


@_k("erf")
def _erf(x):
    # TF's float64 erf gives nan at +-inf; erf(+-inf) = +-1
    return tf.where(tf.math.is_inf(x), tf.sign(x), tf.math.erf(x))


@_k("lgamma")
def _lgamma(x):
    # SciPy's gammaln(-inf) is -inf (TF gives +inf)
    return tf.where(tf.equal(x, -np.inf), x, tf.math.lgamma(x))


@_k("digamma")
def _digamma(x):
    # SciPy: digamma(+0) = -inf, digamma(-0) = +inf (TF gives nan at both); -1/x has those values
    return tf.where(tf.equal(x, 0), -tf.math.reciprocal(x), tf.math.digamma(x))


@_k("polygamma")
def _polygamma(x, *, n):
    if n == 0:
        return _digamma(x)
    out = tf.math.polygamma(tf.fill(tf.shape(x), tf.constant(float(n), x.dtype)), x)
    # at the poles (0, -1, -2, ...) and at -inf SciPy gives (-1)^(n+1) inf; TF gives nan for even n
    pole = tf.logical_and(tf.less_equal(x, 0), tf.equal(x, tf.floor(x)))
    return tf.where(pole, tf.constant(math.inf if n % 2 else -math.inf, x.dtype), out)


def _integral_identity(fn):
    """floor / ceil / round: integers (and bools) are already integral: same tensor, same dtype."""

    def kernel(x):
        return fn(x) if _is_float(x) else x

    return kernel


register_kernel(NAME, "floor", _integral_identity(tf.floor))
register_kernel(NAME, "ceil", _integral_identity(tf.math.ceil))
register_kernel(NAME, "round", _integral_identity(tf.round))  # half to even, like np.round


@_k("logical_not")
def _logical_not(x):
    return tf.logical_not(x if x.dtype == tf.bool else tf.cast(x, tf.bool))


@_k("isnan")
def _isnan(x):
    return tf.math.is_nan(x) if _is_float(x) else tf.zeros_like(x, dtype=tf.bool)


@_k("isfinite")
def _isfinite(x):
    return tf.math.is_finite(x) if _is_float(x) else tf.ones_like(x, dtype=tf.bool)


@_k("cast")
def _cast(x, *, dtype):
    target = TO_TF[dtype]
    if x.dtype == target:
        return x
    return _raw.Cast(x=x, DstT=target)


# --------------------------------------------------------------------------------------------
# elementwise binary (operands already promoted; Python scalars arrive as 0-d tensors)
# --------------------------------------------------------------------------------------------
_BINARY = {
    "add": _raw.AddV2,
    "sub": _raw.Sub,
    "mul": _raw.Mul,
    "pow": _raw.Pow,  # ints to negative int powers raise, like NumPy
    "maximum": _raw.Maximum,  # NaN from either side propagates, like np.maximum
    "minimum": _raw.Minimum,
    "equal": _raw.Equal,
    "not_equal": _raw.NotEqual,
}


def _binary_raw(op):
    def kernel(x, y):
        return op(x=x, y=y)

    kernel.__name__ = op.__name__
    return kernel


for _name, _fn in _BINARY.items():
    register_kernel(NAME, _name, _binary_raw(_fn))


@_k("div")
def _div(x, y):
    if _is_float(x):
        return _raw.RealDiv(x=x, y=y)
    return tf.math.truediv(x, y)  # integers divide in float64, like np.true_divide


def _ordered(fn):
    """Order comparisons; TF has none for bool, NumPy orders False < True."""

    def kernel(x, y):
        if x.dtype == tf.bool:
            x, y = tf.cast(x, tf.int32), tf.cast(y, tf.int32)
        return fn(x, y)

    return kernel


for _name, _fn in {
    "less": _raw.Less,
    "less_equal": _raw.LessEqual,
    "greater": _raw.Greater,
    "greater_equal": _raw.GreaterEqual,
}.items():
    register_kernel(NAME, _name, _ordered(_binary_raw(_fn)))


def _as_bool(x):
    return x if x.dtype == tf.bool else tf.cast(x, tf.bool)


@_k("logical_and")
def _logical_and(x, y):
    return tf.logical_and(_as_bool(x), _as_bool(y))


@_k("logical_or")
def _logical_or(x, y):
    return tf.logical_or(_as_bool(x), _as_bool(y))


def _signbit(x):
    """True where the sign bit of float ``x`` is set (negative numbers, -0.0, -nan)."""
    bits = tf.bitcast(x, tf.int64 if x.dtype == tf.float64 else tf.int32)
    return tf.less(bits, 0)


def _copysign_zero(sign_of):
    """0.0 with the sign of ``sign_of`` (NumPy's copysign(0, b))."""
    zero = tf.zeros((), sign_of.dtype)
    return tf.where(_signbit(sign_of), -zero, zero)


def _float_divmod(a, b):
    """NumPy's npy_divmod for floats: (floor quotient, remainder with the sign of b)."""
    mod = tf.truncatemod(a, b)  # C fmod
    div = (a - mod) / b
    zero = tf.zeros((), a.dtype)
    one = tf.ones((), a.dtype)
    fix = tf.logical_and(tf.not_equal(mod, zero), tf.not_equal(tf.less(b, zero),
                                                               tf.less(mod, zero)))
    mod = tf.where(fix, mod + b, tf.where(tf.equal(mod, zero), _copysign_zero(b), mod))
    div = tf.where(fix, div - one, div)
    floordiv = tf.floor(div)
    floordiv = tf.where(tf.greater(div - floordiv, 0.5 * one), floordiv + one, floordiv)
    floordiv = tf.where(tf.equal(div, zero), _copysign_zero(a / b), floordiv)
    return floordiv, mod


def _int_safe_divisor(y):
    """Integer divisors with 0 and -1 replaced by 1: TF raises on x // 0 and x // -1 overflows
    (INT_MIN // -1) in C; NumPy gives 0 for both x // 0 and x % 0, and -x for x // -1."""
    one = tf.ones((), y.dtype)
    bad = tf.logical_or(tf.equal(y, 0), tf.equal(y, -one))
    return bad, tf.where(bad, one, y)


@_k("floordiv")
def _floordiv(x, y):
    if _is_float(x):
        q, _ = _float_divmod(x, y)
        return tf.where(tf.equal(y, 0), x / y, q)
    bad, ys = _int_safe_divisor(y)
    q = tf.math.floordiv(x, ys)
    zero = tf.zeros((), x.dtype)
    return tf.where(bad, tf.where(tf.equal(y, zero), zero, -x), q)


@_k("mod")
def _mod(x, y):
    if _is_float(x):
        _, m = _float_divmod(x, y)
        return tf.where(tf.equal(y, 0), tf.truncatemod(x, y), m)
    bad, ys = _int_safe_divisor(y)
    return tf.where(bad, tf.zeros((), x.dtype), tf.math.floormod(x, ys))


@_k("where")
def _where(cond, x, y):
    return _raw.SelectV2(condition=_as_bool(cond), t=x, e=y)


@_k("clip")
def _clip(x, *, lo, hi):
    if _is_float(x):
        return tf.minimum(tf.maximum(x, tf.constant(lo, x.dtype)), tf.constant(hi, x.dtype))
    if isinstance(lo, float | np.floating) or isinstance(hi, float | np.floating):
        # NumPy clips in float64 and the kernel casts back (truncation toward zero)
        xf = tf.cast(x, tf.float64)
        out = tf.minimum(tf.maximum(xf, tf.constant(lo, tf.float64)),
                         tf.constant(hi, tf.float64))
        return tf.cast(out, x.dtype)
    wide = tf.cast(x, tf.int64) if x.dtype != tf.int64 else x
    out = tf.minimum(tf.maximum(wide, tf.constant(int(lo), tf.int64)),
                     tf.constant(int(hi), tf.int64))
    return tf.cast(out, x.dtype) if x.dtype != tf.int64 else out


# --------------------------------------------------------------------------------------------
# reductions (axis: a tuple, possibly empty = reduce nothing)
# --------------------------------------------------------------------------------------------
def _reduce(op, bool_op=None):
    def kernel(x, *, axis, keepdims):
        if not axis:
            return x  # reducing no axis (keepdims=True) is the identity
        if bool_op is not None and x.dtype == tf.bool:
            return bool_op(input=x, axis=_dims(axis), keep_dims=keepdims)
        return op(input=x, axis=_dims(axis), keep_dims=keepdims)

    return kernel


register_kernel(NAME, "sum", _reduce(_raw.Sum))
register_kernel(NAME, "prod", _reduce(_raw.Prod))
# TF's max/min reductions propagate NaN like np.max; bools reduce with any/all
register_kernel(NAME, "max", _reduce(_raw.Max, _raw.Any))
register_kernel(NAME, "min", _reduce(_raw.Min, _raw.All))


@_k("logsumexp")
def _logsumexp(x, *, axis, keepdims):
    # NumPy kernel's formula: shift by the max where it is finite (so all -inf rows give -inf)
    ax = _dims(axis)
    if _size(_shape(x)) == 0:
        return _raw.Log(x=_raw.Sum(input=_raw.Exp(x=x), axis=ax, keep_dims=keepdims))
    m = _raw.Max(input=x, axis=ax, keep_dims=True)
    m = _raw.SelectV2(condition=_raw.IsFinite(x=m), t=m, e=constant(0.0, FROM_TF[x.dtype]))
    s = _raw.Sum(input=_raw.Exp(x=_raw.Sub(x=x, y=m)), axis=ax, keep_dims=True)
    out = _raw.AddV2(x=_raw.Log(x=s), y=m)
    if not keepdims and axis:
        out = _raw.Squeeze(input=out, axis=list(axis))
    return out


def _arg_extremum(reduce_fn):
    """NumPy's argmax/argmin: the first index of the extremum; a NaN counts as the extremum
    (the first NaN wins). Deterministic on every device, unlike tf.argmax on ties."""

    def kernel(x, *, axis):
        if x.dtype == tf.bool:
            x = tf.cast(x, tf.int32)
        m = reduce_fn(x, axis=axis, keepdims=True)
        hit = tf.equal(x, m)
        if _is_float(x):
            nan = tf.math.is_nan(x)
            hit = tf.where(tf.reduce_any(nan, axis=axis, keepdims=True), nan, hit)
        shape = _shape(x)
        n = shape[axis]
        iota = tf.reshape(tf.range(n, dtype=tf.int64), [n] + [1] * (len(shape) - axis - 1))
        return tf.reduce_min(tf.where(hit, iota, tf.constant(n, tf.int64)), axis=axis)

    return kernel


register_kernel(NAME, "argmax", _arg_extremum(tf.reduce_max))
register_kernel(NAME, "argmin", _arg_extremum(tf.reduce_min))


@_k("cumsum")
def _cumsum(x, *, axis, reverse):
    return tf.math.cumsum(x, axis=axis, reverse=reverse)


# --------------------------------------------------------------------------------------------
# shape and data movement
# --------------------------------------------------------------------------------------------
@_k("reshape")
def _reshape(x, *, shape):
    return _raw.Reshape(tensor=x, shape=_dims(shape))


@_k("transpose")
def _transpose(x, *, perm):
    return _raw.Transpose(x=x, perm=_dims(perm)) if perm else x


@_k("broadcast_to")
def _broadcast_to(x, *, shape):
    return _raw.BroadcastTo(input=x, shape=_dims(shape))


@_k("concat")
def _concat(*xs, axis):
    return _raw.ConcatV2(values=list(xs), axis=constant(axis, D.int32))


# -- indexing: three strategies, from cheapest to most general ----------------------------------
#   basic (ints, slices, None, Ellipsis): one strided slice; its scatter is StridedSliceGrad
#   one integer (or 1-d bool) array among full slices: tf.gather / unsorted_segment_sum on an axis
#   anything else: IndexPlan.flat_positions() on the flattened tensor
def _basic_spec(items: tuple) -> tuple | None:
    """Strided-slice arguments for a basic index, or None when it has arrays or bools."""
    begin: list[int] = []
    end: list[int] = []
    strides: list[int] = []
    masks = [0, 0, 0, 0, 0]  # begin, end, ellipsis, new_axis, shrink_axis
    for i, s in enumerate(items):
        bit = 1 << i
        if isinstance(s, slice):
            step = 1 if s.step is None else operator.index(s.step)
            if s.start is None:
                begin.append(0)
                masks[0] |= bit
            else:
                begin.append(operator.index(s.start))
            if s.stop is None:
                end.append(0)
                masks[1] |= bit
            else:
                end.append(operator.index(s.stop))
            strides.append(step)
        elif s is Ellipsis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks[2] |= bit
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks[3] |= bit
        elif isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
            k = operator.index(s)
            begin.append(k)
            end.append(k + 1)
            strides.append(1)
            masks[4] |= bit
        else:
            return None
    return begin, end, strides, masks


def _take_spec(items: tuple, ndim: int, shape: tuple) -> tuple[int, Any] | None:
    """(axis, non-negative int64 indices) when the index is full slices around one integer
    array (or one 1-d bool mask), possibly ending in an Ellipsis."""
    if items and items[-1] is Ellipsis:
        items = items[:-1]
    if len(items) > ndim:
        return None
    axis, arr = -1, None
    for i, s in enumerate(items):
        if isinstance(s, np.ndarray):
            if arr is not None:
                return None
            axis, arr = i, s
        elif not (isinstance(s, slice) and s == slice(None)):
            return None
    if arr is None:
        return None
    if arr.dtype == np.bool_:
        if arr.ndim != 1:
            return None
        return axis, np.flatnonzero(arr).astype(np.int64)
    return axis, np.where(arr < 0, arr + shape[axis], arr).astype(np.int64, copy=False)


@_k("gather_flat")
def _gather(x, *, index):
    items = index.numpy_index
    if not items:
        return x
    if not index.has_arrays:
        spec = _basic_spec(items)
        if spec is not None:
            begin, end, strides, m = spec
            return tf.strided_slice(x, begin, end, strides, begin_mask=m[0], end_mask=m[1],
                                    ellipsis_mask=m[2], new_axis_mask=m[3],
                                    shrink_axis_mask=m[4])
    else:
        take = _take_spec(items, len(index.in_shape), index.in_shape)
        if take is not None:
            axis, idx = take
            return tf.gather(x, idx, axis=axis)
    pos = np.asarray(index.flat_positions(), dtype=np.int64)
    return tf.gather(tf.reshape(x, [-1]), pos)


def _segment_sum(updates, ids, n: int):
    if updates.dtype == tf.bool:  # np.add.at on bools is a logical or
        return tf.greater(tf.math.unsorted_segment_sum(tf.cast(updates, tf.int32), ids, n), 0)
    return tf.math.unsorted_segment_sum(updates, ids, n)


@_k("scatter_add_flat")
def _scatter_add(updates, *, index, shape):
    items = index.numpy_index
    shape = tuple(shape)
    if not items:
        return updates
    if not index.has_arrays:
        spec = _basic_spec(items)
        if spec is not None:
            begin, end, strides, m = spec
            return tf.raw_ops.StridedSliceGrad(
                shape=tf.constant(shape, tf.int64), begin=tf.constant(begin, tf.int64),
                end=tf.constant(end, tf.int64), strides=tf.constant(strides, tf.int64),
                dy=updates, begin_mask=m[0], end_mask=m[1], ellipsis_mask=m[2],
                new_axis_mask=m[3], shrink_axis_mask=m[4])
    else:
        take = _take_spec(items, len(shape), shape)
        if take is not None:
            axis, idx = take
            k = idx.ndim
            if axis == 0:
                return _segment_sum(updates, idx, shape[0])
            # move the index dims to the front, sum into segments, move the axis back
            nd = len(_shape(updates))
            perm = list(range(axis, axis + k)) + list(range(axis)) + list(range(axis + k, nd))
            summed = _segment_sum(tf.transpose(updates, perm), idx, shape[axis])
            back = [*range(1, axis + 1), 0, *range(axis + 1, len(shape))]
            return tf.transpose(summed, back)
    pos = np.asarray(index.flat_positions(), dtype=np.int64).reshape(-1)
    flat = _segment_sum(tf.reshape(updates, [-1]), pos, _size(shape))
    return tf.reshape(flat, list(shape))


@_k("one_hot")
def _one_hot(indices, *, depth, dtype):
    target = TO_TF[dtype]
    if target == tf.bool:
        rng = tf.range(depth, dtype=indices.dtype)
        return tf.equal(tf.expand_dims(indices, -1), rng)
    # out-of-range indices (negative included) give all-zero rows, as in NumPy's comparison
    return tf.one_hot(indices, depth, dtype=target)


# --------------------------------------------------------------------------------------------
# linear algebra
# --------------------------------------------------------------------------------------------
@_k("matmul")
def _matmul(a, b):
    # np.matmul semantics: batch dimensions broadcast; a 1-d operand is a vector (never both)
    ra, rb = a.shape.rank, b.shape.rank
    if ra == 1:
        return tf.squeeze(_raw.BatchMatMulV2(x=a[None, :], y=b), -2)
    if rb == 1:
        return tf.squeeze(_raw.BatchMatMulV2(x=a, y=b[:, None]), -1)
    if ra == 2 and rb == 2:
        return _raw.MatMul(a=a, b=b)
    return _raw.BatchMatMulV2(x=a, y=b)


@_k("cholesky")
def _cholesky(a):
    return tf.linalg.cholesky(a)  # reads the lower triangle only, like NumPy/LAPACK


@_k("triangular_solve")
def _triangular_solve(a, b, *, lower, transpose_a):
    return tf.linalg.triangular_solve(a, b, lower=lower, adjoint=transpose_a)


@_k("solve")
def _solve(a, b):
    return tf.linalg.solve(a, b)


@_k("eigh")
def _eigh(a):
    w, v = tf.linalg.eigh(a)  # reads the lower triangle, as LAPACK
    return tf.concat([w[..., None, :], v], axis=-2)


# --------------------------------------------------------------------------------------------
# creation and host transfer
# --------------------------------------------------------------------------------------------
@_k("fill")
def _fill(*, shape, value, dtype):
    c = constant(value, dtype)
    return _raw.Fill(dims=_dims(shape), value=c) if shape else c


@_k("arange")
def _arange(*, start, stop, step, dtype):
    npd = _TO_NP[dtype]
    n = max(0, int(np.ceil((stop - start) / step)))
    if n <= _HOST_LIMIT:
        return tf.constant(np.arange(start, stop, step, dtype=npd))
    # NumPy's fill rule: v[0] = T(start), v[1] = T(start + step), v[i] = v[0] + i * (v[1] - v[0])
    first = np.asarray(start).astype(npd)
    second = np.asarray(start + step).astype(npd)
    delta = tf.constant(second - first)
    i = tf.cast(tf.range(n, dtype=tf.int64), TO_TF[dtype])
    vals = tf.constant(first) + i * delta
    return tf.concat([vals[:1], tf.constant(second)[None], vals[2:]], 0)


@_k("linspace")
def _linspace(*, start, stop, num, dtype):
    if num <= _HOST_LIMIT:
        return tf.constant(np.linspace(start, stop, num, dtype=_TO_NP[dtype]))
    # NumPy's formula in float64: i * step + start, the last value exactly stop; floor for ints
    div = num - 1
    step = (stop - start) / div
    i = tf.cast(tf.range(num, dtype=tf.int64), tf.float64)
    y = (i / div * (stop - start) if step == 0 else i * step) + tf.constant(start, tf.float64)
    y = tf.concat([y[:-1], tf.constant([stop], tf.float64)], 0)
    if dtype.kind == "i":
        y = tf.floor(y)
    return tf.cast(y, TO_TF[dtype])


@_k("eye")
def _eye(*, n, m, dtype):
    if n * m <= _HOST_LIMIT:
        return tf.constant(np.eye(n, m, dtype=_TO_NP[dtype]))
    return tf.eye(n, m, dtype=TO_TF[dtype])


@_k("from_uniform_bits")
def _from_uniform_bits(u, *, shape, dtype):
    return tf.constant(np.asarray(u, dtype=_TO_NP[dtype]).reshape(shape))
