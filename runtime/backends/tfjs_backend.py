"""The ``tfjs`` backend: kernels executed by TensorFlow.js, for the runtime inside Pyodide.

Pyodide has no NumPy offline, so in the browser (and in Node) the runtime computes with TF.js
(``@tensorflow/tfjs-core`` 4.22 with the ``wasm`` backend by default, ``cpu`` or ``webgl``
selectable) through Pyodide's FFI. Everything above the kernel registry (ops, autodiff,
``tidy``/``memory``) is unchanged.

    import tensorbridge as tb
    from tensorbridge.runtime.backends import tfjs_backend
    tfjs_backend.install(js_tf_namespace, default=True)   # once, after `await tf.ready()`
    tb.tanh(tb.tensor([1.0, 2.0])).tolist()

Design
------
* A raw buffer is a :class:`TfjsArray`: the integer id of a TF.js tensor kept by the JS host
  (``tfjs_host.HOST_JS``), its shape and its *logical* dtype. When the last reference to it goes
  (tensor released, ``dispose()``, ``tidy``) the TF.js tensor is disposed, so ``tf.memory()``
  returns to its baseline together with ``tb.memory()``.
* Data crosses as typed arrays: host values are packed with ``array.array`` (or a NumPy array
  when the page loaded NumPy) and read by the host as a zero-copy view (one copy into TF.js).

Dtypes (TF.js has no 64-bit types)
----------------------------------
=========  ====================  ===============================================================
runtime    stored in TF.js as    what it means
=========  ====================  ===============================================================
float32    float32               exact
int32      int32                 exact
bool       bool                  exact
float64    float32               **computed in float32**: the tensor keeps dtype float64 (so
                                 promotion and result dtypes are those of the Python runtime),
                                 but values have single precision. A ``PrecisionWarning`` is
                                 issued the first time a float64 tensor is made on tfjs.
int64      int32                 values must fit in int32: host data or scalars outside
                                 [-2**31, 2**31) raise ``OverflowError``; arithmetic that
                                 overflows wraps around as int32 does.
=========  ====================  ===============================================================

Kernels TF.js lacks are implemented by the host in double precision and rounded to float32
(``lgamma digamma polygamma erfc cholesky triangular_solve``); they read the data back
synchronously (cheap on wasm/cpu, a GPU read-back on webgl). ``cholesky`` of a matrix that is not
positive definite raises ``ValueError`` like NumPy's ``LinAlgError``.
"""

from __future__ import annotations

import math
import warnings
from array import array
from typing import Any

from .. import dtypes as D
from ..dtypes import DType
from ..host_arrays import HostList, dtype_from_numpy, flatten_nested, numpy_dtypes
from ..kernels import register_kernel
from . import get_backend, register_backend, set_backend
from .base import Backend, make_tensor
from .tfjs_host import HOST_JS, IN_OFFSET, SCRATCH_INTS

__all__ = ["PrecisionWarning", "TfjsArray", "TfjsBackend", "install", "installed"]

NAME = "tfjs"
STORAGE: dict[DType, str] = {
    D.bool_: "bool",
    D.int32: "int32",
    D.int64: "int32",
    D.float32: "float32",
    D.float64: "float32",
}
# storage dtype -> array.array code: the dtype's buffer format; bools travel as bytes ("?" is
# not an array.array code)
_CODE = {st: "B" if st == "bool" else D.DTYPES[st].buffer_format for st in set(STORAGE.values())}
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1

_free: Any = None  # host.free, bound by install()
_sc: Any = None  # the scratch array('i') shared with the host
_new = object.__new__


class PrecisionWarning(UserWarning):
    """float64 on the tfjs backend is stored and computed in float32."""


class TfjsArray:
    """A TF.js tensor held by the JS host: id, shape, logical dtype. Disposed when released."""

    __slots__ = ("dtype", "id", "shape")

    id: int
    shape: tuple[int, ...]
    dtype: DType

    def __del__(self) -> None:
        try:
            _free(self.id)
        except Exception:  # interpreter shutdown, host gone
            pass

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"TfjsArray(#{self.id}, shape={self.shape}, dtype={self.dtype.name})"


def _out(i: int, dtype: DType) -> TfjsArray:
    """Wrap host tensor ``i`` whose shape the host just wrote into the scratch."""
    a = _new(TfjsArray)
    a.id = i
    a.dtype = dtype
    sc = _sc
    n = sc[0]
    a.shape = tuple(sc[1 : 1 + n]) if n else ()
    return a


def _mk(i: int, shape: tuple[int, ...], dtype: DType) -> TfjsArray:
    a = _new(TfjsArray)
    a.id = i
    a.dtype = dtype
    a.shape = shape
    return a


def _put_ints(off: int, values: Any) -> int:
    n = len(values)
    if IN_OFFSET + off + n > SCRATCH_INTS:
        raise ValueError("tfjs backend: too many dimensions for one kernel call")
    if n:
        _sc[IN_OFFSET + off : IN_OFFSET + off + n] = array("i", values)
    return n


_warned_f64 = False


def _storage(dtype: DType) -> str:
    global _warned_f64
    if dtype is D.float64 and not _warned_f64:
        _warned_f64 = True
        warnings.warn(
            "tfjs backend: TF.js has no float64; float64 tensors are stored and computed in "
            "float32 (they keep dtype float64 so results match the Python runtime's dtypes)",
            PrecisionWarning,
            stacklevel=4,
        )
    return STORAGE[dtype]


def _check_int(value: Any, dtype: DType) -> None:
    if dtype.kind == "i" and isinstance(value, int) and not _I32_MIN <= value <= _I32_MAX:
        raise OverflowError(
            f"tfjs backend: {value} does not fit in int32, the storage of {dtype.name} on TF.js"
        )


def _nest(flat: list[Any], shape: tuple[int, ...]) -> Any:
    """Row-major values as nested lists of ``shape`` (a scalar for 0-d)."""
    if not shape:
        return flat[0]
    if 0 in shape:
        def empty(dims: tuple[int, ...]) -> Any:
            if len(dims) == 1 or dims[0] == 0:
                return [] if dims[0] == 0 or len(dims) == 1 else [empty(dims[1:])] * dims[0]
            return [empty(dims[1:]) for _ in range(dims[0])]

        return empty(shape)
    for d in reversed(shape[1:]):
        flat = [flat[i : i + d] for i in range(0, len(flat), d)]
    return flat


class TfjsBackend(Backend):
    """Runtime backend whose buffers are TF.js tensors (see the module docs for dtypes)."""

    name = NAME

    def __init__(self, host: Any) -> None:
        super().__init__()
        self.host = host

    # -- hooks ------------------------------------------------------------------------------
    def shape_of(self, raw: Any) -> tuple[int, ...]:
        return raw.shape

    def dtype_of(self, raw: Any) -> DType:
        return raw.dtype

    def wrap(self, raw: Any) -> Any:
        data_id = self._next_data_id()
        n = raw.dtype.itemsize
        for d in raw.shape:
            n *= d
        self._live[data_id] = n
        return make_tensor(self, raw, raw.shape, raw.dtype, data_id)

    def storage_dtype(self, dtype: Any) -> str:
        """The TF.js dtype that holds a runtime dtype (float64 -> 'float32')."""
        return STORAGE[D.as_dtype(dtype)]

    def from_host(self, value: Any, dtype: DType | None = None, copy: bool = True) -> Any:
        if isinstance(value, HostList):
            values, shape, dt = value.values, tuple(value.shape), dtype or value.dtype
        elif hasattr(value, "__array_interface__") and hasattr(value, "dtype"):
            return self._from_numpy(value, dtype)
        elif isinstance(value, list | tuple):
            shape, values = flatten_nested(value)
            dt = dtype or D.float32
        else:
            values, shape, dt = [value], (), dtype or D.weak_scalar_dtype(value)
        return self.wrap(_from_values(values, shape, dt))

    def _from_numpy(self, value: Any, dtype: DType | None) -> Any:
        import numpy as np

        dt = dtype or dtype_from_numpy(value.dtype)
        st = _storage(dt)
        arr = np.asarray(value)
        if dt.kind == "i" and arr.size and arr.dtype.kind in "iu":
            lo, hi = int(arr.min()), int(arr.max())
            if lo < _I32_MIN or hi > _I32_MAX:
                raise OverflowError(
                    f"tfjs backend: values in [{lo}, {hi}] do not fit in int32, the storage of "
                    f"{dt.name} on TF.js"
                )
        flat = np.ascontiguousarray(arr, dtype=st).reshape(-1)
        if st == "bool":
            flat = flat.view(np.uint8)
        n = _put_ints(0, arr.shape)
        return self.wrap(_out(self.host.from_buffer(flat, st, n), dt))

    def adopt(self, host_id: int, dtype: Any) -> Any:
        """A runtime tensor owning host tensor ``host_id`` (made by JS, e.g. the npm client)."""
        dt = D.as_dtype(dtype)
        self.host.shape_into(host_id)
        return self.wrap(_out(host_id, dt))

    @staticmethod
    def host_id(tensor: Any) -> int:
        """The host id of a tensor's TF.js tensor (JS reads data from the host directly)."""
        return tensor._raw().id

    def to_buffer(self, raw: Any) -> memoryview:
        """The values in their TF.js storage type (float64 as float32, int64 as int32, bool as
        uint8), flat, as a memoryview (a copy): host bytes without NumPy or Python lists."""
        return self.host.read(raw.id).to_py()

    def to_list(self, raw: Any) -> Any:
        flat = self.host.read(raw.id).to_py().tolist()
        kind = raw.dtype.kind
        if kind == "b":
            flat = [bool(v) for v in flat]
        return _nest(flat, raw.shape)

    def to_numpy(self, raw: Any) -> Any:
        import numpy as np

        mv = self.host.read(raw.id).to_py()
        st = STORAGE[raw.dtype]
        arr = np.frombuffer(mv, dtype=np.uint8 if st == "bool" else st).reshape(raw.shape)
        arr = arr.astype(numpy_dtypes()[0][raw.dtype])
        arr.flags.writeable = False
        return arr

    def memory(self) -> dict[str, Any]:
        m = super().memory()
        m["tfjs"] = self.host.memory().to_py()
        return m


def _from_values(values: list[Any], shape: tuple[int, ...], dt: DType) -> TfjsArray:
    st = _storage(dt)
    code = _CODE[st]
    try:
        buf = array(code, values)
    except TypeError:  # e.g. floats for an integer dtype: convert like NumPy's astype
        conv = bool if st == "bool" else int if st == "int32" else float
        buf = array(code, [conv(v) for v in values])
    except OverflowError:
        if st == "bool":
            buf = array(code, [bool(v) for v in values])
        else:
            bad = next((v for v in values if not _I32_MIN <= v <= _I32_MAX), None)
            raise OverflowError(
                f"tfjs backend: {bad} does not fit in int32, the storage of {dt.name} on TF.js"
            ) from None
    if st == "bool" and any(v not in (0, 1) for v in buf):
        buf = array(code, [1 if v else 0 for v in buf])
    n = _put_ints(0, shape)
    return _out(_HOST.from_buffer(buf, st, n), dt)


_HOST: Any = None
_TF: Any = None  # the TF.js namespace given to install() (kernels defined elsewhere use it)
_BACKEND: TfjsBackend | None = None


def installed() -> bool:
    return _HOST is not None


def install(tf: Any, *, name: str = NAME, default: bool = False) -> TfjsBackend:
    """Create the JS kernel host over the TF.js namespace ``tf`` (already ``await tf.ready()``),
    register the kernels and the backend ``name`` ("tfjs"), and return the backend.

    Calling it again returns the existing backend (one host per interpreter).
    """
    global _HOST, _TF, _free, _sc, _BACKEND
    import js
    from pyodide.ffi import create_proxy

    if _BACKEND is not None:  # one host per interpreter; switch TF.js backends with
        if default:           # tf.setBackend(...) in JS (TF.js moves tensors itself)
            set_backend(name)
        return _BACKEND
    host = js.Function.new("tf", HOST_JS)(tf)
    sc = array("i", bytes(4 * SCRATCH_INTS))
    host.set_scratch(create_proxy(sc))
    _HOST, _TF, _free, _sc = host, tf, host.free, sc
    _register_kernels(host, name)
    backend = TfjsBackend(host)
    _BACKEND = backend
    register_backend(name, lambda: backend)
    if default:
        set_backend(name)
    get_backend(name)
    return backend


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------
_UNARY_SAME = (
    "neg abs sign exp log log1p expm1 sqrt rsqrt square reciprocal tanh sigmoid softplus sin cos "
    "tan erf erfc lgamma digamma floor ceil round arcsin arccos arctan arcsinh arccosh arctanh"
).split()
_UNARY_BOOL = ("logical_not", "isnan", "isfinite")
_BINARY_SAME = "add sub mul div floordiv mod pow maximum minimum".split()
_BINARY_BOOL = (
    "equal not_equal less less_equal greater greater_equal logical_and logical_or".split()
)


def _axes_mask(axis: tuple[int, ...]) -> int:
    m = 0
    for a in axis:
        m |= 1 << a
    return m


def _basic_spec(plan: Any) -> list[int]:
    """Per input dim begin/end/stride/reverse for an index without arrays, then the out shape."""
    shape = plan.in_shape
    items = plan.numpy_index
    consumed = sum(1 for k in items if k is not None and k is not Ellipsis)
    full: list[Any] = []
    for k in items:
        if k is Ellipsis:
            full.extend([slice(None)] * (len(shape) - consumed))
        elif k is not None:
            full.append(k)
    full.extend([slice(None)] * (len(shape) - len(full)))
    b, e, s, r = [], [], [], []
    for k, d in zip(full, shape):
        if isinstance(k, slice):
            start, stop, step = k.indices(d)
            n = len(range(start, stop, step))
            if n == 0:
                b.append(0), e.append(0), s.append(1), r.append(0)
            elif step > 0:
                b.append(start), e.append(start + (n - 1) * step + 1), s.append(step), r.append(0)
            else:
                b.append(start + (n - 1) * step), e.append(start + 1), s.append(-step)
                r.append(1)
        else:
            i = int(k)
            i = i + d if i < 0 else i
            b.append(i), e.append(i + 1), s.append(1), r.append(0)
    out = list(plan.out_shape)
    return [len(shape), *b, *e, *s, *r, len(out), *out]


def _plan_cache(plan: Any) -> dict[str, Any]:
    cache = getattr(plan, "backend_cache", None)
    if cache is None:
        cache = {}
        try:
            plan.backend_cache = cache
        except AttributeError:  # an IndexPlan without the cache slot: no caching
            pass
    return cache


def _register_kernels(H: Any, name: str) -> None:
    def k(kname: str):
        return register_kernel(name, kname)

    for n in _UNARY_SAME:
        f = getattr(H, n)

        def unary(x: Any, _f: Any = f) -> Any:
            return _mk(_f(x.id), x.shape, x.dtype)

        register_kernel(name, n, unary)
    for n in _UNARY_BOOL:
        f = getattr(H, n)

        def unary_b(x: Any, _f: Any = f) -> Any:
            return _mk(_f(x.id), x.shape, D.bool_)

        register_kernel(name, n, unary_b)

    @k("polygamma")
    def _polygamma(x: Any, *, n: int) -> Any:
        return _mk(H.polygamma(x.id, n), x.shape, x.dtype)

    @k("cast")
    def _cast(x: Any, *, dtype: DType) -> Any:
        return _mk(H.cast(x.id, _storage(dtype)), x.shape, dtype)

    def binary(f: Any, fs: Any, out_bool: bool) -> Any:
        def kernel(x: Any, y: Any) -> Any:
            if x.__class__ is TfjsArray:
                dt = x.dtype
                if y.__class__ is TfjsArray:
                    i = f(x.id, y.id)
                else:
                    _check_int(y, dt)
                    i = fs(x.id, y, False)
            else:
                dt = y.dtype
                _check_int(x, dt)
                i = fs(y.id, x, True)
            return _out(i, D.bool_ if out_bool else dt)

        return kernel

    for n in _BINARY_SAME + _BINARY_BOOL:
        register_kernel(name, n, binary(getattr(H, n), getattr(H, n + "_s"), n in _BINARY_BOOL))

    @k("where")
    def _where(c: Any, x: Any, y: Any) -> Any:
        return _out(H.where(c.id, x.id, y.id), x.dtype)

    @k("clip")
    def _clip(x: Any, *, lo: Any, hi: Any) -> Any:
        return _mk(H.clip(x.id, float(lo), float(hi)), x.shape, x.dtype)

    def reduction(f: Any) -> Any:
        def kernel(x: Any, *, axis: tuple[int, ...], keepdims: bool) -> Any:
            return _out(f(x.id, _axes_mask(axis), bool(keepdims)), x.dtype)

        return kernel

    for n in ("sum", "prod", "max", "min", "logsumexp"):
        register_kernel(name, n, reduction(getattr(H, n)))

    @k("argmax")
    def _argmax(x: Any, *, axis: int) -> Any:
        return _out(H.argmax(x.id, axis), D.int64)

    @k("argmin")
    def _argmin(x: Any, *, axis: int) -> Any:
        return _out(H.argmin(x.id, axis), D.int64)

    @k("cumsum")
    def _cumsum(x: Any, *, axis: int, reverse: bool) -> Any:
        return _mk(H.cumsum(x.id, axis, bool(reverse)), x.shape, x.dtype)

    @k("reshape")
    def _reshape(x: Any, *, shape: tuple[int, ...]) -> Any:
        return _mk(H.reshape(x.id, _put_ints(0, shape)), tuple(shape), x.dtype)

    @k("transpose")
    def _transpose(x: Any, *, perm: tuple[int, ...]) -> Any:
        shape = tuple(x.shape[p] for p in perm)
        return _mk(H.transpose(x.id, _put_ints(0, perm)), shape, x.dtype)

    @k("broadcast_to")
    def _broadcast_to(x: Any, *, shape: tuple[int, ...]) -> Any:
        return _mk(H.broadcast_to(x.id, _put_ints(0, shape)), tuple(shape), x.dtype)

    @k("concat")
    def _concat(*xs: Any, axis: int) -> Any:
        return _out(H.concat(_put_ints(0, [x.id for x in xs]), axis), xs[0].dtype)

    def positions(plan: Any) -> TfjsArray:
        cache = _plan_cache(plan)
        pos = cache.get(name)
        if pos is None:
            flat = plan.flat_positions()
            if not isinstance(flat, list):  # NumPy present in Pyodide
                import numpy as np

                flat = np.ascontiguousarray(flat.reshape(-1), dtype=np.int32)
                n = int(flat.size)
            else:
                n = len(flat)
                flat = array("i", flat)
            pos = _mk(H.ints_from(flat), (n,), D.int32)
            cache[name] = pos
        return pos

    @k("gather_flat")
    def _gather(x: Any, *, index: Any) -> Any:
        if not index.has_arrays:
            _put_ints(0, _basic_spec(index))
            return _mk(H.gather_basic(x.id), tuple(index.out_shape), x.dtype)
        pos = positions(index)
        n = _put_ints(0, index.out_shape)
        return _mk(H.gather_pos(x.id, pos.id, n), tuple(index.out_shape), x.dtype)

    @k("scatter_add_flat")
    def _scatter(updates: Any, *, index: Any, shape: tuple[int, ...]) -> Any:
        size = 1
        for d in shape:
            size *= d
        if index.has_arrays:
            pos = positions(index)
        else:
            cache = _plan_cache(index)
            key = name + ":basic"
            pos = cache.get(key)
            if pos is None:
                rank = _put_ints(0, index.in_shape)
                _put_ints(rank, _basic_spec(index))
                pos = _out(H.basic_positions(size, rank), D.int32)
                cache[key] = pos
        n = _put_ints(0, shape)
        return _mk(H.scatter(updates.id, pos.id, size, n), tuple(shape), updates.dtype)

    @k("one_hot")
    def _one_hot(indices: Any, *, depth: int, dtype: DType) -> Any:
        return _mk(H.one_hot(indices.id, depth, _storage(dtype)), (*indices.shape, depth), dtype)

    @k("matmul")
    def _matmul(a: Any, b: Any) -> Any:
        return _out(H.matmul(a.id, b.id), a.dtype)

    @k("cholesky")
    def _cholesky(a: Any) -> Any:
        i = H.cholesky(a.id)
        if i == 0:
            raise ValueError("cholesky: the matrix is not positive definite")
        return _mk(i, a.shape, a.dtype)

    @k("triangular_solve")
    def _triangular_solve(a: Any, b: Any, *, lower: bool, transpose_a: bool) -> Any:
        return _mk(H.triangular_solve(a.id, b.id, bool(lower), bool(transpose_a)), b.shape,
                   b.dtype)

    @k("solve")
    def _solve(a: Any, b: Any) -> Any:
        i = H.solve(a.id, b.id)
        if i == 0:
            raise ValueError("solve: the matrix is singular")
        return _mk(i, b.shape, b.dtype)

    @k("eigh")
    def _eigh(a: Any) -> Any:
        n = a.shape[-1]
        return _mk(H.eigh(a.id), (*a.shape[:-2], n + 1, n), a.dtype)

    @k("fill")
    def _fill(*, shape: tuple[int, ...], value: Any, dtype: DType) -> Any:
        st = _storage(dtype)
        if st == "int32":
            value = int(value)
            _check_int(value, dtype)
        elif st == "bool":
            value = bool(value)
        else:
            value = float(value)
        return _mk(H.fill(_put_ints(0, shape), value, st), tuple(shape), dtype)

    @k("arange")
    def _arange(*, start: Any, stop: Any, step: Any, dtype: DType) -> Any:
        return _out(H.arange(float(start), float(stop), float(step), _storage(dtype)), dtype)

    @k("linspace")
    def _linspace(*, start: Any, stop: Any, num: int, dtype: DType) -> Any:
        return _out(H.linspace(float(start), float(stop), int(num), _storage(dtype)), dtype)

    @k("eye")
    def _eye(*, n: int, m: int, dtype: DType) -> Any:
        return _mk(H.eye(int(n), int(m), _storage(dtype)), (int(n), int(m)), dtype)

    @k("from_uniform_bits")
    def _from_uniform_bits(u: Any, *, shape: tuple[int, ...], dtype: DType) -> Any:
        values = u.tolist() if hasattr(u, "tolist") else list(u)
        return _from_values(values, tuple(shape), dtype)
