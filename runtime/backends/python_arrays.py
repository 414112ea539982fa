"""The python backend's arrays, and the host namespace's NumPy-free implementation.

An :class:`ndarray` is a flat row-major list of Python scalars, a shape and a dtype
(``bool_``/``int64``/``float64``). It is two things, and only those:

* the buffer of the ``python`` backend (``python_backend.PyArray`` subclasses it and adds the
  runtime dtype; the backend's kernels use the broadcasting and shape helpers here);
* ``xp`` of :mod:`~tensorbridge.runtime.host_namespace` where NumPy cannot be imported (Pyodide):
  the samplers' host bookkeeping (positions, momenta, step sizes, tree statistics), the draws and
  their summaries run on it unchanged, written once against NumPy's names.

So it implements NumPy's semantics for the subset those uses need, and nothing more: the
operators ``+ - * / @``, comparisons, ``& | ~`` and their in-place forms (no ``// % **``);
indexing by ints, slices, ``None``, boolean masks and integer arrays (``a[key] = v`` writes
in place: ODE integrators fill their outputs); ``asarray``/``array``/``from_flat``/``full``/
``zeros``/``ones``/``zeros_like``/``stack``/``concatenate``/``reshape``/``broadcast_to``; the
elementwise ``exp log sqrt abs floor round isfinite isnan where clip maximum minimum fmax logaddexp
nan_to_num``; the reductions ``sum mean var std min max all any argmin`` with ``axis``/
``keepdims``, and ``add.reduce``/``logical_and.reduce`` (NumPy's cheaper spellings of two);
``quantile`` (NumPy's linear method); ``errstate`` (a no-op context: nothing here warns);
``random.default_rng(seed).uniform`` from the runtime's Philox stream (the same numbers with
and without NumPy). IEEE results instead of Python exceptions (``exp`` overflow is ``inf``,
``log(0)`` is ``-inf``, ``0/0`` is ``nan``, ``nan`` propagates through ``max``/``minimum``/
``maximum``). The diagnostics do not go element by element through these arrays (their
NumPy-free kernels work on lists of floats, see ``ppl/diagnostics.py``).

Differences from NumPy, none of which the samplers rely on: slicing copies instead of making
views (``reshape``/``ravel`` and ``a[:, None]`` do share memory, as NumPy's views do); reductions
with ``axis=None`` return Python scalars; float sums are exact (``math.fsum``) rather than
pairwise, so they can differ from NumPy's in the last bits.
"""

from __future__ import annotations

import builtins
import math
import operator
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from types import SimpleNamespace
from typing import Any

from .. import dtypes as D
from ..random import Generator as Philox

__all__ = [
    "abs", "add", "all", "any", "argmin", "array", "asarray", "bool_", "broadcast_shapes",
    "broadcast_to", "clip", "concatenate", "default_rng", "dtype", "errstate", "exp", "float64",
    "floor", "fmax", "from_flat", "full", "inf", "int64", "isfinite", "isnan", "log", "logaddexp",
    "logical_and", "max", "maximum", "mean", "min", "minimum", "nan", "nan_to_num", "ndarray",
    "ones", "quantile",
    "random", "reshape", "round", "shape", "sqrt", "stack", "std", "sum", "var", "where", "zeros",
    "zeros_like",
]

# this module defines sum/max/min/abs/all/any/round like NumPy; the builtins stay reachable here
_sum, _max, _min, _abs = builtins.sum, builtins.max, builtins.min, builtins.abs
_all, _any, _round = builtins.all, builtins.any, builtins.round

inf = math.inf
nan = math.nan
_LN2 = math.log(2.0)


# -- dtypes -------------------------------------------------------------------------------------
class dtype:  # noqa: N801 - NumPy's name
    """One of ``bool_ < int64 < float64``, with the Python type that holds its values."""

    __slots__ = ("cast", "kind", "name", "rank")

    def __init__(self, name: str, kind: str, rank: int, cast: Callable[[Any], Any]) -> None:
        self.name, self.kind, self.rank, self.cast = name, kind, rank, cast

    def __repr__(self) -> str:
        return f"dtype('{self.name}')"

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        try:
            return _as_dtype(other) is self
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self) -> tuple[Any, ...]:
        return _as_dtype, (self.name,)  # the module's singleton: dtypes compare by identity


bool_ = dtype("bool", "b", 0, bool)
int64 = dtype("int64", "i", 1, int)
float64 = dtype("float64", "f", 2, float)
_BY_RANK = (bool_, int64, float64)
_NAMES = {"bool": bool_, "bool_": bool_, "?": bool_, "b1": bool_,
          "int": int64, "int64": int64, "i8": int64, "long": int64,
          "float": float64, "float64": float64, "f8": float64, "double": float64, "d": float64}


def _as_dtype(x: Any) -> dtype | None:
    if x is None or x.__class__ is dtype:
        return x
    if x is bool:
        return bool_
    if x is int:
        return int64
    if x is float:
        return float64
    # strings, and NumPy's dtypes and scalar types where NumPy is around (tests compare)
    name = x if isinstance(x, str) else getattr(x, "name", None) or getattr(x, "__name__", None)
    if isinstance(name, str) and name in _NAMES:
        return _NAMES[name]
    raise TypeError(f"dtype: {x!r} is not one of bool, int64, float64")


def _scalar_dtype(v: Any) -> dtype:
    if isinstance(v, bool):
        return bool_
    if isinstance(v, int):
        return int64
    if isinstance(v, float):
        return float64
    raise TypeError(f"{type(v).__name__} is not a number")


_PLAIN = frozenset({bool, int, float})


def _plain(v: Any) -> Any:
    """A Python bool/int/float for any scalar (NumPy scalars, 0-d objects)."""
    if v.__class__ in _PLAIN:
        return v
    item = getattr(v, "item", None)  # NumPy scalars (subclasses of float among them)
    if item is not None:
        return item()
    try:
        return operator.index(v)
    except TypeError:
        return float(v)


# -- the array ----------------------------------------------------------------------------------
_new = object.__new__


def _wrap(data: list[Any], shape: tuple[int, ...], dt: dtype) -> ndarray:
    a = _new(ndarray)
    a._data = data
    a.shape = shape
    a.dtype = dt
    return a


def _prod(shape: Iterable[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _shape_arg(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(operator.index(d) for d in shape)


def _norm_axis(axis: int, ndim: int) -> int:
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise IndexError(f"axis {axis} is out of bounds for an array of dimension {ndim}")
    return ax + ndim if ax < 0 else ax


class ndarray:  # noqa: N801 - NumPy's name
    """An n-dimensional array: a flat row-major list of Python scalars, a shape and a dtype."""

    __slots__ = ("__weakref__", "_data", "dtype", "shape")
    __hash__ = None  # type: ignore[assignment] # == is elementwise

    _data: list[Any]
    shape: tuple[int, ...]
    dtype: dtype

    # -- attributes ------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return len(self._data)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        if len(self.shape) == 1:
            return iter(self._data)
        return (self[i] for i in range(self.shape[0]))

    def _scalar(self) -> Any:
        if len(self._data) != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()" if self._data else "an empty array has no value")
        return self._data[0]

    def __bool__(self) -> bool:
        return bool(self._scalar())

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __index__(self) -> int:
        if self.shape or self.dtype.kind not in "bi":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._data[0])

    def item(self) -> Any:
        return self._scalar()

    def tolist(self) -> Any:
        return _nest(self._data, self.shape)

    def __repr__(self) -> str:
        body = repr(self.tolist())
        if self.dtype is float64 or (self.dtype is int64 and self._data):
            return f"array({body})"
        return f"array({body}, dtype={self.dtype.name})"

    def __str__(self) -> str:
        return str(self.tolist())

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy  # only reached where NumPy exists (tests, mixing with NumPy code)

        return numpy.asarray(self.tolist(), dtype=dtype or self.dtype.name)

    # -- copies and shapes -----------------------------------------------------------------
    def copy(self) -> ndarray:
        return _wrap(list(self._data), self.shape, self.dtype)

    def astype(self, dtype: Any, copy: bool = True) -> ndarray:
        dt = _as_dtype(dtype)
        if dt is self.dtype:
            return self.copy() if copy else self
        return _wrap(_cast_list(self._data, self.dtype, dt), self.shape, dt)

    def reshape(self, *shape: Any) -> ndarray:
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return _wrap(self._data, _resolve_shape(shape, len(self._data)), self.dtype)

    def ravel(self) -> ndarray:
        return _wrap(self._data, (len(self._data),), self.dtype)

    def transpose(self, *axes: Any) -> ndarray:
        nd = len(self.shape)
        if not axes or axes == (None,):
            perm = tuple(range(nd - 1, -1, -1))
        else:
            perm = tuple(axes[0]) if len(axes) == 1 and not isinstance(axes[0], int) else axes
            perm = tuple(_norm_axis(a, nd) for a in perm)
            if sorted(perm) != list(range(nd)):
                raise ValueError("axes don't match array")
        d = self._data
        return _wrap([d[o] for o in _perm_index(self.shape, perm)],
                     tuple(self.shape[p] for p in perm), self.dtype)

    # -- reductions ------------------------------------------------------------------------
    def sum(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        return sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Any:
        return mean(self, axis=axis, keepdims=keepdims)

    def var(self, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
        return var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
        return std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        return min(self, axis=axis, keepdims=keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        return all(self, axis=axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        return any(self, axis=axis, keepdims=keepdims)

    def round(self, decimals: int = 0) -> ndarray:
        return round(self, decimals)

    # -- indexing --------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        if key.__class__ is int and len(self.shape) == 1:
            return self._data[key]
        offsets, shape = _index(self, key)
        d = self._data
        if not shape and not isinstance(key, ndarray | list):
            return d[offsets[0] if offsets is not None else 0]  # a scalar, as NumPy's
        if offsets is None:  # only full slices and new axes: same data, NumPy's view
            return _wrap(d, shape, self.dtype)
        return _wrap([d[o] for o in offsets], shape, self.dtype)

    def __setitem__(self, key: Any, value: Any) -> None:
        """``a[key] = value`` in place (basic and integer-array keys; ``value`` broadcast to
        the selection and cast to the array's dtype, unsafely as NumPy does): ode.py's
        integrators fill their outputs row by row. Chained forms write a copy, as slicing here
        copies (``a[0][1] = v``)."""
        offsets, shape = _index(self, key)
        vd, vs, vdt = _parts(value)
        vals = _cast_list(_expand(vd, vs, shape), vdt, self.dtype)
        d = self._data
        if offsets is None:
            d[:] = vals
        else:
            for o, v in zip(offsets, vals):
                d[o] = v

    # -- operators -------------------------------------------------------------------------
    def __add__(self, o: Any) -> Any:
        return _binary(self, o, operator.add, None, "arith")

    def __radd__(self, o: Any) -> Any:
        return _binary(o, self, operator.add, None, "arith")

    def __sub__(self, o: Any) -> Any:
        return _binary(self, o, operator.sub, None, "arith")

    def __rsub__(self, o: Any) -> Any:
        return _binary(o, self, operator.sub, None, "arith")

    def __mul__(self, o: Any) -> Any:
        return _binary(self, o, operator.mul, None, "arith")

    def __rmul__(self, o: Any) -> Any:
        return _binary(o, self, operator.mul, None, "arith")

    def __truediv__(self, o: Any) -> Any:
        return _binary(self, o, operator.truediv, _safe_div, "div")

    def __rtruediv__(self, o: Any) -> Any:
        return _binary(o, self, operator.truediv, _safe_div, "div")

    def __matmul__(self, o: Any) -> Any:
        return _matmul(self, asarray(o))

    def __and__(self, o: Any) -> Any:
        return _binary(self, o, operator.and_, None, "bit")

    def __rand__(self, o: Any) -> Any:
        return _binary(o, self, operator.and_, None, "bit")

    def __or__(self, o: Any) -> Any:
        return _binary(self, o, operator.or_, None, "bit")

    def __ror__(self, o: Any) -> Any:
        return _binary(o, self, operator.or_, None, "bit")

    def __lt__(self, o: Any) -> Any:
        return _binary(self, o, operator.lt, None, "cmp")

    def __le__(self, o: Any) -> Any:
        return _binary(self, o, operator.le, None, "cmp")

    def __gt__(self, o: Any) -> Any:
        return _binary(self, o, operator.gt, None, "cmp")

    def __ge__(self, o: Any) -> Any:
        return _binary(self, o, operator.ge, None, "cmp")

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        try:
            return _binary(self, o, operator.eq, None, "cmp")
        except TypeError:  # not array-like (None, objects): Python's identity comparison
            return NotImplemented

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        try:
            return _binary(self, o, operator.ne, None, "cmp")
        except TypeError:
            return NotImplemented

    def __neg__(self) -> ndarray:
        if self.dtype is bool_:
            raise TypeError("The numpy boolean negative, the `-` operator, is not supported, "
                            "use the `~` operator or the logical_not function instead.")
        return _wrap(list(map(operator.neg, self._data)), self.shape, self.dtype)

    def __pos__(self) -> ndarray:
        return self.copy()

    def __abs__(self) -> ndarray:
        return abs(self)

    def __invert__(self) -> ndarray:
        if self.dtype is bool_:
            return _wrap([not v for v in self._data], self.shape, bool_)
        if self.dtype is int64:
            return _wrap(list(map(operator.invert, self._data)), self.shape, int64)
        raise TypeError("ufunc 'invert' not supported for the input types")

    # in place, as NumPy: the array keeps its identity and dtype (no unsafe casts)
    def _inplace(self, o: Any, op: Callable, safe: Callable | None, kind: str) -> ndarray:
        r = _binary(self, o, op, safe, kind)
        if r.shape != self.shape:
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} doesn't "
                             f"match the broadcast shape {r.shape}")
        if r.dtype.rank > self.dtype.rank:
            raise TypeError(f"Cannot cast ufunc output from dtype('{r.dtype.name}') to "
                            f"dtype('{self.dtype.name}') with casting rule 'same_kind'")
        self._data[:] = _cast_list(r._data, r.dtype, self.dtype)
        return self

    def __iadd__(self, o: Any) -> ndarray:
        return self._inplace(o, operator.add, None, "arith")

    def __isub__(self, o: Any) -> ndarray:
        return self._inplace(o, operator.sub, None, "arith")

    def __imul__(self, o: Any) -> ndarray:
        return self._inplace(o, operator.mul, None, "arith")

    def __itruediv__(self, o: Any) -> ndarray:
        return self._inplace(o, operator.truediv, _safe_div, "div")

    def __iand__(self, o: Any) -> ndarray:
        return self._inplace(o, operator.and_, None, "bit")

    def __ior__(self, o: Any) -> ndarray:
        return self._inplace(o, operator.or_, None, "bit")

def _nest(flat: list[Any], shape: tuple[int, ...]) -> Any:
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = _prod(shape[1:])
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _cast_list(values: list[Any], src: dtype, dst: dtype) -> list[Any]:
    if src is dst:
        return list(values)
    if dst is bool_:
        return [v != 0 for v in values]
    return list(map(dst.cast, values))


def _resolve_shape(shape: Sequence[Any], size: int) -> tuple[int, ...]:
    shp = [operator.index(d) for d in shape]
    if shp.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shp:
        known = _prod(d for d in shp if d != -1)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
        shp[shp.index(-1)] = size // known
    if _prod(shp) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shp)}")
    return tuple(shp)


def _strides(shape: tuple[int, ...]) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


_PERM_CACHE: dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]] = {}


def _perm_index(shape: tuple[int, ...], perm: tuple[int, ...]) -> list[int]:
    """Flat source positions of ``transpose(x, perm)`` in row-major order."""
    key = (shape, perm)
    idx = _PERM_CACHE.get(key)
    if idx is None:
        strides = _strides(shape)
        idx = [0]
        for ax in perm:
            st = strides[ax]
            idx = [o + i * st for o in idx for i in range(shape[ax])]
        if len(_PERM_CACHE) > 256:
            _PERM_CACHE.clear()
        _PERM_CACHE[key] = idx
    return idx


# -- indexing -----------------------------------------------------------------------------------
def _index(a: ndarray, key: Any) -> tuple[list[int] | None, tuple[int, ...]]:
    """Flat source offsets (None: every element in order) and the result shape for ``a[key]``."""
    shape = a.shape
    if isinstance(key, list):
        key = asarray(key)
    if isinstance(key, ndarray):
        if key.dtype is bool_:  # a mask over the leading dimensions
            k = len(key.shape)
            if key.shape != shape[:k]:
                raise IndexError(f"boolean index of shape {key.shape} does not match the "
                                 f"array's leading dimensions {shape[:k]}")
            inner = _prod(shape[k:])
            rows = [i for i, m in enumerate(key._data) if m]
            return ([r * inner + j for r in rows for j in range(inner)],
                    (len(rows), *shape[k:]))
        if key.dtype is int64:  # integer array along the first axis
            if not shape:
                raise IndexError("too many indices for array: array is 0-dimensional")
            n0, inner = shape[0], _prod(shape[1:])
            out = []
            for i in key._data:
                if not -n0 <= i < n0:
                    raise IndexError(f"index {i} is out of bounds for axis 0 with size {n0}")
                base = (i + n0 if i < 0 else i) * inner
                out.extend(range(base, base + inner))
            return out, (*key.shape, *shape[1:])
        raise IndexError("arrays used as indices must be of integer or boolean type")
    kid = _key_id(key)
    if kid is None:
        return _basic_index(shape, key)
    hit = _INDEX_CACHE.get((shape, kid))
    if hit is None:  # the samplers index the same few ways every step: plan each once
        hit = _basic_index(shape, key)
        if len(_INDEX_CACHE) > 512:
            _INDEX_CACHE.clear()
        _INDEX_CACHE[(shape, kid)] = hit
    return hit


_INDEX_CACHE: dict[tuple[Any, ...], tuple[list[int] | None, tuple[int, ...]]] = {}


def _key_id(key: Any) -> tuple[Any, ...] | None:
    """A hashable form of a basic index (ints, slices, None, Ellipsis); None for others."""
    if not isinstance(key, tuple):
        key = (key,)
    out: list[Any] = []
    for k in key:
        c = k.__class__
        if c is int or k is None or k is Ellipsis:
            out.append(k)
        elif c is slice and _all(v is None or v.__class__ is int
                                 for v in (k.start, k.stop, k.step)):
            out.append((k.start, k.stop, k.step))
        else:
            return None
    return tuple(out)


def _basic_index(shape: tuple[int, ...], key: Any) -> tuple[list[int] | None, tuple[int, ...]]:
    if not isinstance(key, tuple):
        key = (key,)
    n_real = _sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{n_real} were indexed")
    ell = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(ell) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if ell:
        i = ell[0]
        key = key[:i] + (slice(None),) * (len(shape) - n_real) + key[i + 1:]
    else:
        key = key + (slice(None),) * (len(shape) - n_real)
    full = slice(None)
    if _all(k is None or (k.__class__ is slice and k == full) for k in key):
        return None, _view_shape(shape, key)
    strides = _strides(shape)
    offsets = [0]
    out_shape: list[int] = []
    dim = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            continue
        size, st = shape[dim], strides[dim]
        dim += 1
        if isinstance(k, slice):
            r = range(*k.indices(size))
            out_shape.append(len(r))
            offsets = [o + i * st for o in offsets for i in r]
        else:
            i = operator.index(k)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {dim - 1} with size {size}")
            i = i + size if i < 0 else i
            offsets = [o + i * st for o in offsets]
    return offsets, tuple(out_shape)


def _dims(key: tuple[Any, ...]) -> list[Any]:
    """For a key of full slices and Nones: per output dimension, None or the source axis."""
    out: list[Any] = []
    j = 0
    for k in key:
        if k is None:
            out.append(None)
        else:
            out.append(j)
            j += 1
    return out


def _view_shape(shape: tuple[int, ...], key: tuple[Any, ...]) -> tuple[int, ...]:
    return tuple(1 if k is None else shape[k] for k in _dims(key))


# -- broadcasting and elementwise operations ----------------------------------------------------
def _parts(x: Any) -> tuple[list[Any], tuple[int, ...], dtype]:
    if x.__class__ is ndarray:
        return x._data, x.shape, x.dtype
    if isinstance(x, bool | int | float):
        return [x], (), _scalar_dtype(x)
    a = asarray(x)
    return a._data, a.shape, a.dtype


_BCAST_CACHE: dict[tuple[tuple[int, ...], ...], tuple[int, ...]] = {}


def _broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    hit = _BCAST_CACHE.get(shapes)
    if hit is not None:
        return hit
    nd = _max(len(s) for s in shapes)
    out = []
    for i in range(-nd, 0):
        dims = {s[i] for s in shapes if len(s) >= -i} - {1}
        if len(dims) > 1:
            raise ValueError("operands could not be broadcast together with shapes "
                             + " ".join(str(s) for s in shapes))
        out.append(dims.pop() if dims else 1)
    if len(_BCAST_CACHE) > 512:
        _BCAST_CACHE.clear()
    result = _BCAST_CACHE[shapes] = tuple(out)
    return result


_EXPAND_CACHE: dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]] = {}


def _expand(data: list[Any], shape: tuple[int, ...], out: tuple[int, ...]) -> list[Any]:
    """``data`` of ``shape`` broadcast to ``out`` (flat, row-major)."""
    if shape == out:
        return data
    if len(data) == 1:
        return [data[0]] * _prod(out)
    idx = _EXPAND_CACHE.get((shape, out))
    if idx is None:
        if _broadcast_shapes(shape, out) != out:
            raise ValueError(f"could not broadcast input array from shape {shape} into shape "
                             f"{out}")
        full = (1,) * (len(out) - len(shape)) + shape
        strides = _strides(full)
        idx = [0]
        for n_out, n_in, st in zip(out, full, strides):
            idx = ([o + i * st for o in idx for i in range(n_out)] if n_in != 1 else
                   [o for o in idx for _ in range(n_out)])
        if len(_EXPAND_CACHE) > 256:
            _EXPAND_CACHE.clear()
        _EXPAND_CACHE[(shape, out)] = idx
    return [data[i] for i in idx]


_ARITH_ERRORS = (ZeroDivisionError, OverflowError, ValueError)


def _broadcast_pair(ad: list[Any], ash: tuple[int, ...], bd: list[Any], bsh: tuple[int, ...]
                    ) -> tuple[Any, Any, tuple[int, ...]]:
    """Two operands' values broadcast to the result shape (an iterator for a one-element
    operand), and that shape (this module's operators and the python backend's kernels)."""
    if ash == bsh:
        return ad, bd, ash
    shape = _broadcast_shapes(ash, bsh)
    n = _prod(shape)
    if shape != ash:
        ad = repeat(ad[0], n) if len(ad) == 1 else _expand(ad, ash, shape)
    if shape != bsh:
        bd = repeat(bd[0], n) if len(bd) == 1 else _expand(bd, bsh, shape)
    return ad, bd, shape


def _binary(a: Any, b: Any, op: Callable[[Any, Any], Any], safe: Callable | None,
            kind: str) -> Any:
    ad, ash, adt = _parts(a)
    bd, bsh, bdt = _parts(b)
    xs, ys, shape = _broadcast_pair(ad, ash, bd, bsh)
    if safe is None:
        out = list(map(op, xs, ys))
    else:
        if not isinstance(xs, list):
            xs = list(xs)
        if not isinstance(ys, list):
            ys = list(ys)
        try:
            out = list(map(op, xs, ys))
        except _ARITH_ERRORS:  # a zero divisor or an overflow somewhere: IEEE results instead
            out = list(map(safe, xs, ys))
    if kind == "cmp":
        return _wrap(out, shape, bool_)
    rank = _max(adt.rank, bdt.rank)
    if kind == "div":
        rank = _max(rank, 2)
    dt = _BY_RANK[rank]
    if kind == "bit":
        if dt.rank > 1:
            raise TypeError(f"ufunc '{op.__name__}' not supported for the input types")
        if dt is bool_:
            out = [bool(v) for v in out]
    elif dt is bool_:
        if op is operator.sub:
            raise TypeError("numpy boolean subtract, the `-` operator, is not supported")
        out = [bool(v) for v in out]  # + is or, * is and, min/max stay boolean
    elif dt is float64 and adt.rank < 2 and bdt.rank < 2:
        out = list(map(float, out))  # int ** negative int and the like
    return _wrap(out, shape, dt)


def _safe_div(a: Any, b: Any) -> Any:
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return nan
        return math.copysign(inf, a) * math.copysign(1.0, b)
    except OverflowError:
        return math.copysign(inf, a) * math.copysign(1.0, b)


def _matmul(a: ndarray, b: ndarray) -> Any:
    if not a.shape or not b.shape:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    rank = _max(a.dtype.rank, b.dtype.rank)
    dt = _BY_RANK[_max(rank, 1)]
    dot = _fsum if dt is float64 else _sum
    if len(a.shape) > 2 or len(b.shape) > 2:
        raise ValueError("matmul: only 1-d and 2-d operands are supported here")
    am = a.reshape(1, -1) if len(a.shape) == 1 else a
    bm = b.reshape(-1, 1) if len(b.shape) == 1 else b
    n, k = am.shape
    k2, m = bm.shape
    if k != k2:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {k2} is different from {k})")
    ad, bt = am._data, bm.transpose()._data
    out = [dot(list(map(operator.mul, ad[i * k:(i + 1) * k], bt[j * k:(j + 1) * k])))
           for i in range(n) for j in range(m)]
    if dt is bool_:
        out = [bool(v) for v in out]
    shape = (n, m)
    if len(a.shape) == 1 and len(b.shape) == 1:
        return out[0]
    if len(a.shape) == 1:
        shape = (m,)
    elif len(b.shape) == 1:
        shape = (n,)
    return _wrap(out, shape, dt)


def _unary(x: Any, fast: Callable[[Any], Any], safe: Callable[[Any], Any],
           out: dtype | None) -> Any:
    """Apply ``fast`` elementwise (``safe`` if it raises); scalars in, scalars out."""
    scalar = not isinstance(x, ndarray | list | tuple)
    if scalar:
        x = _plain(x)
        data, shape, dt = [x], (), _scalar_dtype(x)
    else:
        data, shape, dt = _parts(x)
    odt = out or dt
    try:
        res = list(map(fast, data))
    except _ARITH_ERRORS:
        res = list(map(safe, data))
    if scalar:
        return res[0]
    return _wrap(res, shape, odt)


def _exp_safe(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return inf


def _log_safe(v: float) -> float:
    if v > 0:
        return math.log(v)
    return -inf if v == 0 else nan


def _sqrt_safe(v: float) -> float:
    return math.sqrt(v) if v >= 0 else nan


def exp(x: Any) -> Any:
    return _unary(x, math.exp, _exp_safe, float64)


def log(x: Any) -> Any:
    return _unary(x, math.log, _log_safe, float64)


def sqrt(x: Any) -> Any:
    return _unary(x, math.sqrt, _sqrt_safe, float64)


def abs(x: Any) -> Any:
    if isinstance(x, ndarray) and x.dtype is bool_:
        return x.copy()
    return _unary(x, _abs, _abs, None)


def isfinite(x: Any) -> Any:
    return _unary(x, math.isfinite, math.isfinite, bool_)


def _floor(v: Any) -> Any:
    return float(math.floor(v)) if isinstance(v, float) else v


def _keep_special(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: fn(v) if not isinstance(v, float) or math.isfinite(v) else v


def floor(x: Any) -> Any:
    return _unary(x, _floor, _keep_special(_floor), None)


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    return _broadcast_shapes(*(tuple(int(d) for d in s) for s in shapes))


def broadcast_to(a: Any, shape: Any) -> ndarray:
    data, sh, dt = _parts(a)
    out = _shape_arg(shape)
    return _wrap(_expand(data, sh, out), out, dt)


def reshape(a: Any, shape: Any) -> ndarray:
    return asarray(a).reshape(shape)


def shape(a: Any) -> tuple[int, ...]:
    return _parts(a)[1]


def isnan(x: Any) -> Any:
    return _unary(x, _isnan, _isnan, bool_)


def _isnan(v: Any) -> bool:
    return v != v


def _logaddexp(a: float, b: float) -> float:
    if a == b:  # also both infinite with the same sign
        return a + _LN2
    d = a - b
    if d > 0:
        return a + math.log1p(math.exp(-d))
    if d <= 0:
        return b + math.log1p(math.exp(d))
    return nan


def _maximum(a: Any, b: Any) -> Any:
    # NumPy's loops: the first operand when it is larger or NaN, else the second (ties too)
    return a if (a > b or a != a) else b


def _minimum(a: Any, b: Any) -> Any:
    return a if (a < b or a != a) else b


def _scalar_result(a: Any, b: Any, r: ndarray) -> Any:
    if not isinstance(a, ndarray | list | tuple) and not isinstance(b, ndarray | list | tuple):
        return r._data[0]
    return r


def logaddexp(a: Any, b: Any) -> Any:
    r = _binary(a, b, _logaddexp, None, "div")
    return _scalar_result(a, b, r)


def minimum(a: Any, b: Any) -> Any:
    return _scalar_result(a, b, _binary(a, b, _minimum, None, "arith"))


def maximum(a: Any, b: Any) -> Any:
    return _scalar_result(a, b, _binary(a, b, _maximum, None, "arith"))


def _fmax(a: Any, b: Any) -> Any:
    return a if (a >= b or b != b) else b  # a NaN loses to a number (both NaN: NaN)


def fmax(a: Any, b: Any) -> Any:
    return _scalar_result(a, b, _binary(a, b, _fmax, None, "arith"))


def clip(a: Any, a_min: Any, a_max: Any) -> Any:
    out = a
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


def _select(cd: list[Any], cs: tuple[int, ...], xd: list[Any], xs: tuple[int, ...],
            yd: list[Any], ys: tuple[int, ...]) -> tuple[list[Any], tuple[int, ...]]:
    """``where``'s values (uncast) and shape: x where the condition holds, else y, broadcast
    (this module's ``where`` and the python backend's kernel)."""
    if cs == xs == ys:
        shape = cs
    else:
        shape = _broadcast_shapes(cs, xs, ys)
        cd, xd, yd = _expand(cd, cs, shape), _expand(xd, xs, shape), _expand(yd, ys, shape)
    return [xv if c else yv for c, xv, yv in zip(cd, xd, yd)], shape


def where(condition: Any, x: Any, y: Any) -> ndarray:
    cd, cs, _ = _parts(condition)
    xd, xs, xdt = _parts(x)
    yd, ys, ydt = _parts(y)
    out, shape = _select(cd, cs, xd, xs, yd, ys)
    dt = _BY_RANK[_max(xdt.rank, ydt.rank)]
    if xdt is not ydt:
        out = list(map(dt.cast, out))
    return _wrap(out, shape, dt)


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    big = sys.float_info.max
    pos = big if posinf is None else posinf
    neg = -big if neginf is None else neginf

    def fix(v: Any) -> Any:
        if v != v:
            return nan
        if v == inf:
            return pos
        if v == -inf:
            return neg
        return v

    if not isinstance(x, ndarray | list | tuple):
        return fix(x)
    a = asarray(x)
    if a.dtype.rank < 2:
        return a.copy() if copy else a
    return _wrap(list(map(fix, a._data)), a.shape, a.dtype)


def round(a: Any, decimals: int = 0) -> Any:
    if decimals >= 0:
        f = 10.0 ** decimals

        def rnd(v: Any) -> Any:
            return _round(v * f) / f if math.isfinite(v) else v
    else:
        f = 10.0 ** -decimals

        def rnd(v: Any) -> Any:
            return _round(v / f) * f if math.isfinite(v) else v

    if not isinstance(a, ndarray | list | tuple):
        if isinstance(a, float):
            return rnd(a)
        return a if decimals >= 0 else int(rnd(a))
    arr = asarray(a)
    if arr.dtype is not float64:
        return arr.copy() if decimals >= 0 else _wrap(
            [int(rnd(v)) for v in arr._data], arr.shape, arr.dtype)
    return _wrap(list(map(rnd, arr._data)), arr.shape, float64)


# -- construction -------------------------------------------------------------------------------
def _flatten(x: Any) -> tuple[tuple[int, ...], list[Any]]:
    if isinstance(x, ndarray):
        return x.shape, x._data
    if not isinstance(x, list | tuple):
        return (), [x]
    if not x:
        return (0,), []
    if not _any(isinstance(v, list | tuple | ndarray) for v in x):
        return (len(x),), list(x)
    parts = [_flatten(v) for v in x]
    inner = parts[0][0]
    if _any(p[0] != inner for p in parts):
        raise ValueError("setting an array element with a sequence: the requested array has "
                         "an inhomogeneous shape")
    return (len(x), *inner), [v for p in parts for v in p[1]]


def _from_object(x: Any, dt: dtype | None) -> ndarray:
    if isinstance(x, list | tuple) and x and _all(v.__class__ is ndarray for v in x):
        return _stack_rows(x, dt)  # np.array([a, b, ...]): the samplers' common case
    if not isinstance(x, list | tuple | bool | int | float) and hasattr(x, "tolist"):
        x = x.tolist()  # NumPy arrays, Tensors, memoryviews
    shape, flat = _flatten(x)
    if _all(v.__class__ is float for v in flat):
        inferred = float64
    else:
        flat = [_plain(v) for v in flat]
        inferred = _BY_RANK[_max((_scalar_dtype(v).rank for v in flat), default=2)]
    if dt is None:
        dt = inferred
    if dt is not inferred:
        flat = _cast_list(flat, inferred, dt)
    return _wrap(flat, shape, dt)


def _stack_rows(rows: Sequence[ndarray], dt: dtype | None) -> ndarray:
    shape = rows[0].shape
    if _any(r.shape != shape for r in rows):
        raise ValueError("setting an array element with a sequence: the requested array has "
                         "an inhomogeneous shape")
    src = _BY_RANK[_max(r.dtype.rank for r in rows)]
    out = dt or src
    data: list[Any] = []
    for r in rows:
        data.extend(r._data if r.dtype is out else _cast_list(r._data, r.dtype, out))
    return _wrap(data, (len(rows), *shape), out)


def asarray(a: Any, dtype: Any = None) -> ndarray:
    dt = _as_dtype(dtype)
    if a.__class__ is ndarray:
        return a if dt is None or dt is a.dtype else a.astype(dt)
    return _from_object(a, dt)


def array(a: Any, dtype: Any = None, copy: bool = True) -> ndarray:
    out = asarray(a, dtype)
    return out.copy() if copy and out is a else out


def from_flat(values: list[Any], shape: Sequence[int], dtype: Any = float) -> ndarray:
    """An array over ``values`` (row-major, already of ``dtype``) without copying: this
    module's own constructor, for host buffers read back from a backend."""
    shp = tuple(shape)
    if _prod(shp) != len(values):
        raise ValueError(f"from_flat: {len(values)} values do not fill shape {shp}")
    return _wrap(values, shp, _as_dtype(dtype))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> ndarray:
    shp = _shape_arg(shape)
    dt = _as_dtype(dtype)
    if isinstance(fill_value, ndarray | list | tuple):
        src = asarray(fill_value)
        dt = dt or src.dtype
        return _wrap(_cast_list(_expand(src._data, src.shape, shp), src.dtype, dt), shp, dt)
    v = _plain(fill_value)
    dt = dt or _scalar_dtype(v)
    return _wrap([dt.cast(v)] * _prod(shp), shp, dt)


def zeros(shape: Any, dtype: Any = float) -> ndarray:
    return full(shape, 0, dtype or float)


def ones(shape: Any, dtype: Any = float) -> ndarray:
    return full(shape, 1, dtype or float)


def full_like(a: Any, fill_value: Any, dtype: Any = None) -> ndarray:
    src = asarray(a)
    return full(src.shape, fill_value, dtype or src.dtype)


def zeros_like(a: Any, dtype: Any = None) -> ndarray:
    return full_like(a, 0, dtype)


def stack(arrays: Sequence[Any], axis: int = 0) -> ndarray:
    arrs = [asarray(a) for a in arrays]
    if not arrs:
        raise ValueError("need at least one array to stack")
    shape = arrs[0].shape
    if _any(a.shape != shape for a in arrs):
        raise ValueError("all input arrays must have the same shape")
    ax = _norm_axis(axis, len(shape) + 1)
    return _concat([a.reshape(*shape[:ax], 1, *shape[ax:]) for a in arrs], ax)


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> ndarray:
    arrs = [asarray(a) for a in arrays]
    if not arrs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        return _concat([a.ravel() for a in arrs], 0)
    if not arrs[0].shape:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    return _concat(arrs, _norm_axis(axis, len(arrs[0].shape)))


def _concat(arrs: list[ndarray], ax: int) -> ndarray:
    first = arrs[0].shape
    for a in arrs:
        if len(a.shape) != len(first) or a.shape[:ax] != first[:ax] or \
                a.shape[ax + 1:] != first[ax + 1:]:
            raise ValueError("all the input array dimensions except for the concatenation axis "
                             "must match exactly")
    dt = _BY_RANK[_max(a.dtype.rank for a in arrs)]
    out, shape = _concat_flat([(a._data, a.shape) for a in arrs], ax)
    if _any(a.dtype is not dt for a in arrs):
        out = list(map(dt.cast, out))
    return _wrap(out, shape, dt)


def _concat_flat(parts: list[tuple[list[Any], tuple[int, ...]]], ax: int
                 ) -> tuple[list[Any], tuple[int, ...]]:
    """Row-major values and shape of (values, shape) parts joined along ``ax`` (shapes already
    checked; this module's ``concatenate`` and the python backend's kernel)."""
    first = parts[0][1]
    outer = _prod(first[:ax])
    chunks = [(data, _prod(shape[ax:])) for data, shape in parts]
    out: list[Any] = []
    for o in range(outer):
        for data, c in chunks:
            out.extend(data[o * c:(o + 1) * c])
    total = _sum(shape[ax] for _, shape in parts)
    return out, (*first[:ax], total, *first[ax + 1:])


# -- reductions ---------------------------------------------------------------------------------
def _fsum(values: list[Any]) -> Any:
    try:
        return math.fsum(values)
    except (OverflowError, ValueError):  # inf - inf, or an intermediate overflow
        return _sum(values, 0.0)


def _lanes(a: ndarray, ax: int) -> tuple[list[list[Any]], tuple[int, ...]]:
    """The 1-d lanes of ``a`` along axis ``ax`` (row-major over the other axes)."""
    shape = a.shape
    n, inner = shape[ax], _prod(shape[ax + 1:])
    outer = _prod(shape[:ax])
    d = a._data
    block = n * inner
    if inner == 0 or outer == 0:
        return [], shape
    if n == 0:
        return [[] for _ in range(outer * inner)], shape
    return ([d[o * block + i:(o + 1) * block:inner] for o in range(outer) for i in range(inner)],
            shape)


def _reduce(x: Any, axis: Any, fn: Callable[[list[Any]], Any], keepdims: bool,
            out_dtype: dtype | None = None) -> Any:
    a = asarray(x)
    dt = out_dtype or a.dtype
    if axis is None:
        v = fn(a._data)
        return _wrap([v], (1,) * len(a.shape), dt) if keepdims else v
    if isinstance(axis, tuple):
        axes = sorted((_norm_axis(ax, len(a.shape)) for ax in axis), reverse=True)
        if not axes:
            return a.copy()
        if len(axes) > 1:  # reduce the axes one by one (used only with associative reductions)
            moved = a.transpose(*[i for i in range(len(a.shape)) if i not in axes], *axes[::-1])
            keep = moved.shape[:len(a.shape) - len(axes)]
            flat = moved.reshape(*keep, -1)
            r = _reduce(flat, -1, fn, False, out_dtype)
            if keepdims:
                r = asarray(r).reshape(*(1 if i in axes else s for i, s in enumerate(a.shape)))
            return r
        axis = axes[0]
    ax = _norm_axis(axis, len(a.shape))
    lanes, shape = _lanes(a, ax)
    out = [fn(lane) for lane in lanes]
    new_shape = shape[:ax] + ((1,) if keepdims else ()) + shape[ax + 1:]
    return _wrap(out, new_shape, dt)


def _sum_fn(dt: dtype) -> Callable[[list[Any]], Any]:
    if dt is float64:
        return _fsum
    return _sum


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    arr = asarray(a)
    dt = _as_dtype(dtype) or (int64 if arr.dtype is bool_ else arr.dtype)
    if dt is not arr.dtype:
        arr = arr.astype(dt)
    return _reduce(arr, axis, _sum_fn(dt), keepdims, dt)


def _mean_lane(fsum: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    def lane(v: list[Any]) -> Any:
        return fsum(v) / len(v) if v else nan

    return lane


def mean(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    arr = asarray(a)
    if arr.dtype is not float64:
        arr = arr.astype(float64)
    return _reduce(arr, axis, _mean_lane(_fsum), keepdims, float64)


def var(a: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    arr = asarray(a)
    if arr.dtype is not float64:
        arr = arr.astype(float64)

    def lane(v: list[Any]) -> float:
        n = len(v) - ddof
        if n <= 0:
            return nan
        m = _fsum(v) / len(v)
        return _fsum([(x - m) * (x - m) for x in v]) / n

    return _reduce(arr, axis, lane, keepdims, float64)


def std(a: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    return sqrt(var(a, axis=axis, ddof=ddof, keepdims=keepdims))


def _extreme(pick: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    def lane(v: list[Any]) -> Any:
        if not v:
            raise ValueError("zero-size array to reduction operation which has no identity")
        for x in v:
            if x != x:
                return x
        return pick(v)

    return lane


def max(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _reduce(a, axis, _extreme(_max), keepdims)


def min(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _reduce(a, axis, _extreme(_min), keepdims)


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _reduce(a, axis, _all, keepdims, bool_)


class _Ufunc:
    """A NumPy ufunc's ``reduce`` (what ``add.reduce``/``logical_and.reduce`` are in NumPy:
    ``sum``/``all`` without their wrappers' cost there)."""

    __slots__ = ("_reduction",)

    def __init__(self, reduction: Callable[..., Any]) -> None:
        self._reduction = reduction

    def reduce(self, a: Any, axis: Any = 0, keepdims: bool = False) -> Any:
        return self._reduction(a, axis=axis, keepdims=keepdims)


add = _Ufunc(sum)
logical_and = _Ufunc(all)


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _reduce(a, axis, _any, keepdims, bool_)


def _arg_extreme(better: Callable[[Any, Any], bool]) -> Callable[[list[Any]], int]:
    def lane(v: list[Any]) -> int:
        if not v:
            raise ValueError("attempt to get argmin/argmax of an empty sequence")
        best = 0
        for i, x in enumerate(v):
            if x != x:
                return i  # NumPy: the first NaN
            if better(x, v[best]):
                best = i
        return best

    return lane


def argmin(a: Any, axis: Any = None) -> Any:
    return _reduce(a, axis, _arg_extreme(operator.lt), False, int64)


# -- sorting, order statistics ------------------------------------------------------------------
def _lerp(a: float, b: float, t: float) -> float:
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


def _quantile_lane(v: list[Any], q: float) -> float:
    """NumPy's default ("linear") method on one lane."""
    return _quantile_lanes(v, (q,))[0]


def _quantile_lanes(v: list[Any], qs: Sequence[float]) -> list[float]:
    """NumPy's default ("linear") method on one lane, for each of ``qs`` (one sort)."""
    if not v:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")  # as NumPy
    if _any(map(math.isnan, v)):
        return [nan] * len(qs)
    s = sorted(v)
    n = len(s)
    out = []
    for q in qs:
        virtual = n * q + (1.0 + q * -1.0) - 1
        lo = math.floor(virtual)
        gamma = virtual - lo
        lo_i = _min(_max(int(lo), 0), n - 1)
        hi_i = _min(_max(int(lo) + 1, 0), n - 1)
        out.append(float(_lerp(s[lo_i], s[hi_i], gamma)))
    return out


def quantile(a: Any, q: Any, axis: Any = None, keepdims: bool = False) -> Any:
    arr = asarray(a).astype(float64, copy=False)
    qs = asarray(q, float64)
    if _any(not 0.0 <= v <= 1.0 for v in qs._data):
        raise ValueError("Quantiles must be in the range [0, 1]")
    if axis is None and not keepdims and arr.size:  # every element: one sort for all of qs
        values = _quantile_lanes(arr._data, qs._data)
        return values[0] if not qs.shape else _wrap(values, qs.shape, float64)
    results = [_reduce(arr, axis, lambda lane, qq=qq: _quantile_lane(lane, qq), keepdims,
                       float64) for qq in qs._data]
    if not qs.shape:
        return results[0]
    parts = [asarray(r) for r in results]
    return stack(parts).reshape(*qs.shape, *parts[0].shape)


# -- errstate -----------------------------------------------------------------------------------
class errstate:  # noqa: N801 - NumPy's name
    """NumPy's floating-point error context. Nothing here warns or raises on inf/nan, so it has
    nothing to change; it accepts the same keywords."""

    _KEYS = frozenset({"all", "divide", "over", "under", "invalid", "call"})

    def __init__(self, **kwargs: Any) -> None:
        unknown = set(kwargs) - self._KEYS
        if unknown:
            raise TypeError(f"errstate: unexpected keyword(s) {sorted(unknown)}")
        self.kwargs = kwargs

    def __enter__(self) -> errstate:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False


# -- random numbers -----------------------------------------------------------------------------
class Generator:
    """``default_rng(seed)``: uniform draws from the runtime's Philox-4x32-10 stream
    (``tensorbridge.random.Generator``), identical with and without NumPy for a given seed."""

    def __init__(self, seed: int | None = None) -> None:
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        self._philox = Philox(operator.index(seed))
        self._f64 = D.float64

    def _uniforms(self, n: int) -> list[float]:
        u = self._philox._uniform_host(n, self._f64)
        return u if isinstance(u, list) else u.tolist()

    @staticmethod
    def _shape(size: Any, *params: Any) -> tuple[int, ...] | None:
        if size is not None:
            return _shape_arg(size)
        shapes = [p.shape for p in params if isinstance(p, ndarray)]
        return _broadcast_shapes(*shapes) if shapes else None

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        shp = self._shape(size, low, high)
        if shp is None:
            u = self._uniforms(1)[0]
            return low + (high - low) * u
        return low + (high - low) * _wrap(self._uniforms(_prod(shp)), shp, float64)


def default_rng(seed: int | None = None) -> Generator:
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


random = SimpleNamespace(Generator=Generator, default_rng=default_rng)
