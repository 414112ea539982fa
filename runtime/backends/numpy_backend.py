"""The embedded default backend: kernels on ``numpy.ndarray``.

Kernels receive arrays whose dtypes the op layer has already promoted, so every kernel returns the
dtype the runtime documents on NumPy 1.26 and 2.x alike. Special functions come from SciPy when it
is installed and from ``special_numpy`` (pure NumPy) otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import DType
from ..host_arrays import dtype_from_numpy, numpy_dtypes
from ..kernels import register_kernel
from ..tensor import Tensor
from . import special_numpy
from .base import Backend, make_tensor

__all__ = ["NumpyBackend"]

NAME = "numpy"

TO_NUMPY, FROM_NUMPY = numpy_dtypes()
_SCALAR_CACHE: dict[tuple[Any, DType], Any] = {}


class NumpyBackend(Backend):
    name = NAME

    def shape_of(self, raw: Any) -> tuple[int, ...]:
        return raw.shape

    def dtype_of(self, raw: Any) -> DType:
        try:
            return FROM_NUMPY[raw.dtype]
        except KeyError:
            return dtype_from_numpy(raw.dtype, "kernel result")

    def wrap(self, raw: Any) -> Tensor:
        # The hot path of every op: base.wrap with NumPy's precomputed nbytes.
        data_id = self._next_data_id()
        self._live[data_id] = raw.nbytes
        try:
            dtype = FROM_NUMPY[raw.dtype]
        except KeyError:
            dtype = dtype_from_numpy(raw.dtype, "kernel result")
        return make_tensor(self, raw, raw.shape, dtype, data_id)

    def from_host(self, value: Any, dtype: DType | None = None, copy: bool = True) -> Tensor:
        npd = TO_NUMPY[dtype] if dtype is not None else None
        if isinstance(value, np.ndarray):
            # Never alias memory the caller can still write through; read-only buffers (R
            # vectors viewed by reticulate, memoryviews of bytes) are taken without a copy.
            need_copy = copy and value.flags.writeable
            arr = np.array(value, dtype=npd, copy=True) if need_copy else value.astype(
                npd or value.dtype, copy=False
            )
        else:
            arr = np.asarray(value, dtype=npd)
        if arr.dtype not in FROM_NUMPY:
            dtype_from_numpy(arr.dtype)
        return self.wrap(arr)

    def to_numpy(self, raw: Any) -> Any:
        view = np.asarray(raw).view()
        view.flags.writeable = False  # tensors are immutable; copy() to get a writable array
        return view

    def to_list(self, raw: Any) -> Any:
        return raw.tolist()

    def to_host(self, raw: Any) -> Any:
        return raw

    def scalar(self, value: Any, dtype: DType) -> Any:
        # A cached 0-d array: NumPy's fastest operand kind, and exact dtype on NumPy 1 and 2.
        key = (value, dtype)
        arr = _SCALAR_CACHE.get(key)
        if arr is None:
            arr = np.asarray(value, dtype=TO_NUMPY[dtype])
            if value == value:  # NaN never compares equal: do not cache it
                if len(_SCALAR_CACHE) > 4096:
                    _SCALAR_CACHE.clear()
                _SCALAR_CACHE[key] = arr
        return arr


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------
def _k(name: str):
    return register_kernel(NAME, name)


try:  # SciPy is optional; special functions fall back to pure NumPy.
    import scipy.special as _sp

    _erf, _erfc, _lgamma, _digamma = _sp.erf, _sp.erfc, _sp.gammaln, _sp.digamma
    _polygamma = _sp.polygamma
    _expit = _sp.expit
except ImportError:  # pragma: no cover - exercised in the no-SciPy job
    _sp = None
    _erf, _erfc = special_numpy.erf, special_numpy.erfc
    _lgamma, _digamma = special_numpy.lgamma, special_numpy.digamma
    _polygamma = special_numpy.polygamma
    _expit = None


def _same(fn):
    """Keep the input dtype (SciPy computes some functions in float64)."""

    def kernel(x):
        return np.asarray(fn(x)).astype(x.dtype, copy=False)

    return kernel


_UNARY = {
    "neg": np.negative,
    "abs": np.abs,
    "sign": np.sign,
    "exp": np.exp,
    "log": np.log,
    "log1p": np.log1p,
    "expm1": np.expm1,
    "sqrt": np.sqrt,
    "square": np.square,
    "reciprocal": np.reciprocal,
    "tanh": np.tanh,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arcsin": np.arcsin,
    "arccos": np.arccos,
    "arctan": np.arctan,
    "arcsinh": np.arcsinh,
    "arccosh": np.arccosh,
    "arctanh": np.arctanh,
    "round": np.round,
    "logical_not": np.logical_not,
    "isnan": np.isnan,
    "isfinite": np.isfinite,
    "erf": _same(_erf),
    "erfc": _same(_erfc),
    "lgamma": _same(_lgamma),
    "digamma": _same(_digamma),
}
for _name, _fn in _UNARY.items():
    register_kernel(NAME, _name, _fn)


@_k("floor")
def _floor(x):
    return x if x.dtype.kind != "f" else np.floor(x)  # integers are already whole


@_k("ceil")
def _ceil(x):
    return x if x.dtype.kind != "f" else np.ceil(x)


@_k("rsqrt")
def _rsqrt(x):
    return np.reciprocal(np.sqrt(x))


@_k("sigmoid")
def _sigmoid(x):
    if _expit is not None:
        return _expit(x)
    return np.exp(-np.logaddexp(x.dtype.type(0), -x))


@_k("softplus")
def _softplus(x):
    return np.logaddexp(x.dtype.type(0), x)


@_k("polygamma")
def _polygamma_k(x, *, n):
    return np.asarray(_polygamma(n, x)).astype(x.dtype, copy=False)


@_k("cast")
def _cast(x, *, dtype):
    return np.asarray(x).astype(TO_NUMPY[dtype], copy=False)


_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.mod,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
}
for _name, _fn in _BINARY.items():
    register_kernel(NAME, _name, _fn)


@_k("where")
def _where(cond, x, y):
    return np.where(cond, x, y)


@_k("clip")
def _clip(x, *, lo, hi):
    return np.clip(x, lo, hi).astype(x.dtype, copy=False)


def _reduction(fn):
    def kernel(x, *, axis, keepdims):
        return np.asarray(fn(x, axis=axis, keepdims=keepdims))

    return kernel


def _keep_dtype(fn):
    """sum/prod of int32 stay int32 (NumPy widens them to the platform int64), like TF/TF.js."""

    def kernel(x, *, axis, keepdims):
        return np.asarray(fn(x, axis=axis, keepdims=keepdims, dtype=x.dtype))

    return kernel


register_kernel(NAME, "sum", _keep_dtype(np.add.reduce))  # the ufunc: no wrapper overhead
register_kernel(NAME, "prod", _keep_dtype(np.multiply.reduce))
register_kernel(NAME, "max", _reduction(np.max))
register_kernel(NAME, "min", _reduction(np.min))


@_k("logsumexp")
def _logsumexp(x, *, axis, keepdims):
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, np.zeros_like(m))
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis)
    return np.asarray(out)


@_k("argmax")
def _argmax(x, *, axis):
    return np.asarray(np.argmax(x, axis=axis)).astype(np.int64, copy=False)


@_k("argmin")
def _argmin(x, *, axis):
    return np.asarray(np.argmin(x, axis=axis)).astype(np.int64, copy=False)


@_k("cumsum")
def _cumsum(x, *, axis, reverse):
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
    return np.cumsum(x, axis=axis, dtype=x.dtype)


@_k("reshape")
def _reshape(x, *, shape):
    return x.reshape(shape)


@_k("transpose")
def _transpose(x, *, perm):
    return np.transpose(x, perm)


@_k("broadcast_to")
def _broadcast_to(x, *, shape):
    return np.broadcast_to(x, shape)


@_k("concat")
def _concat(*xs, axis):
    return np.concatenate(xs, axis=axis)


@_k("gather_flat")
def _gather(x, *, index):
    return np.asarray(x[index.numpy_index])


@_k("scatter_add_flat")
def _scatter_add(updates, *, index, shape):
    out = np.zeros(shape, dtype=updates.dtype)
    if index.has_arrays:
        np.add.at(out, index.numpy_index, updates)
    else:
        out[index.numpy_index] += updates
    return out


@_k("one_hot")
def _one_hot(indices, *, depth, dtype):
    idx = np.asarray(indices)
    out = (idx[..., None] == np.arange(depth)).astype(TO_NUMPY[dtype])
    return out


@_k("matmul")
def _matmul(a, b):
    if a.shape[-1] == 1 and a.ndim > 1 and b.ndim > 1:
        # Outer products (inner dimension 1, e.g. the gradient of W @ x): NumPy's matmul runs
        # its own slow loop here instead of BLAS; a broadcast multiply is ~4x faster.
        return np.multiply(a, b)
    return np.matmul(a, b)


@_k("cholesky")
def _cholesky(a):
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        # not positive definite: NaN factors for those matrices (as JAX does), so a sampler
        # rejects the proposal that made them (Stan's behaviour) instead of every chain failing
        out = np.full(a.shape, np.nan, dtype=a.dtype)
        flat, res = a.reshape(-1, *a.shape[-2:]), out.reshape(-1, *a.shape[-2:])
        for i, m in enumerate(flat):
            try:
                res[i] = np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                pass
        return out


def _solve_triangular_scipy(a, b, lower, transpose_a):
    import scipy.linalg as sl

    return sl.solve_triangular(a, b, lower=lower, trans=1 if transpose_a else 0,
                               check_finite=False)


@_k("triangular_solve")
def _triangular_solve(a, b, *, lower, transpose_a):
    if _sp is not None and a.ndim == 2 and b.ndim == 2:
        return _solve_triangular_scipy(a, b, lower, transpose_a).astype(b.dtype, copy=False)
    a = np.tril(a) if lower else np.triu(a)  # read only the triangle, like the 2-d path
    op = np.swapaxes(a, -1, -2) if transpose_a else a
    return np.linalg.solve(op, b).astype(b.dtype, copy=False)


@_k("solve")
def _solve(a, b):
    return np.linalg.solve(a, b).astype(b.dtype, copy=False)


@_k("eigh")
def _eigh(a):
    w, v = np.linalg.eigh(a)  # LAPACK reads the lower triangle
    return np.concatenate([w[..., None, :], v], axis=-2).astype(a.dtype, copy=False)


@_k("fill")
def _fill(*, shape, value, dtype):
    return np.full(shape, value, dtype=TO_NUMPY[dtype])


@_k("arange")
def _arange(*, start, stop, step, dtype):
    return np.arange(start, stop, step, dtype=TO_NUMPY[dtype])


@_k("linspace")
def _linspace(*, start, stop, num, dtype):
    return np.linspace(start, stop, num, dtype=TO_NUMPY[dtype])


@_k("eye")
def _eye(*, n, m, dtype):
    return np.eye(n, m, dtype=TO_NUMPY[dtype])


@_k("from_uniform_bits")
def _from_uniform_bits(u, *, shape, dtype):
    return np.asarray(u, dtype=TO_NUMPY[dtype]).reshape(shape)
