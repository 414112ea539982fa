"""Arrays cross as memory plus layout (an :class:`Array` descriptor), not as nested lists.

Python -> host: the array is cast to a dtype the host stores natively (the language's
:class:`ArrayPolicy`), made contiguous in the host's order ("F" for R, which is column-major;
"C" for JS typed arrays), and exposed as a flat ``uint8`` memoryview of that memory. When the
array already is in that dtype and order there is no copy at all; otherwise NumPy does the one
copy (several times faster than a host's own element-by-element conversion).

Host -> Python: the descriptor's buffer is wrapped by ``numpy.ndarray`` with the given offset
and strides (or order), so an R matrix (column-major) becomes an F-ordered NumPy view with the
right element order and no copy. Read-only buffers give read-only arrays.

NA handling follows ``na.py``: with ``na_sentinels`` (R) int32 INT_MIN and logical INT_MIN mark
missing values and arrive as masked arrays, float64 NA keeps its bit pattern; masked arrays sent
out get the sentinels, and an int32 array holding a real (unmasked) INT_MIN is sent as doubles so
that it cannot turn into NA. Without sentinels (JS), masks travel as ``Array.mask``.

Without NumPy (Pyodide offline) the same descriptors are built from and turned into
``memoryview`` objects (any buffer-protocol object crosses out: ``memoryview``,
``array.array``...). A C-ordered descriptor arrives as a zero-copy memoryview with the
descriptor's format and shape; other layouts are copied into C order; casts the host policy
asks for are done element by element (correct, not fast). What needs NumPy says so: masks and
NA sentinels in incoming arrays raise :class:`ConversionError`, and zero-size arrays of more than
one dimension arrive flat (a memoryview cannot have a zero in a multi-dimensional shape).
"""

from __future__ import annotations

import struct
import sys
from array import array as _pyarray
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..runtime.dtypes import DTYPES as _DTYPES
from .descriptors import Array
from .errors import ConversionError
from .na import INT_MIN, NA_REAL

__all__ = [
    "DESCRIPTOR_DTYPES",
    "ArrayPolicy",
    "array_from_descriptor",
    "array_to_descriptor",
    "buffer_dtype",
    "numpy_or_none",
]

NUMERIC_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64",
)
#: Element types a descriptor may name; "logical" is R's 4-byte logical (0, 1, INT_MIN = NA).
DESCRIPTOR_DTYPES = (*NUMERIC_DTYPES, "logical")

_no_numpy = False


def numpy_or_none() -> Any:
    """The NumPy module, or None where it cannot be imported (Pyodide offline). Checked on
    every call (cheaply), so NumPy loaded later is used from then on."""
    global _no_numpy
    np = sys.modules.get("numpy")
    if np is not None:
        return np
    if _no_numpy:
        return None
    try:
        import numpy as np
    except ImportError:
        _no_numpy = True
        return None
    return np


def _is_ndarray(value: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.ndarray)
@dataclass(frozen=True)
class ArrayPolicy:
    """How one host stores arrays.

    ``order``: "C" or "F", the layout the host can use without reordering. ``dtypes``: source
    dtype name -> descriptor dtype (dtypes not listed cross as handles). ``na_sentinels``: the
    host marks NA in-band (R). ``masks``: masked arrays cross with an explicit mask.
    ``max_exact_int``: int64/uint64 go to float64 only when every value is within +/- this."""

    order: str = "C"
    dtypes: Mapping[str, str] = field(default_factory=lambda: {d: d for d in NUMERIC_DTYPES})
    na_sentinels: bool = False
    masks: bool = True
    max_exact_int: int = 2**53

    def __post_init__(self) -> None:
        if self.order not in ("C", "F"):
            raise ValueError(f"ArrayPolicy.order must be 'C' or 'F', not {self.order!r}")
        bad = [v for v in self.dtypes.values() if v not in DESCRIPTOR_DTYPES]
        if bad:
            raise ValueError(f"ArrayPolicy.dtypes: unknown descriptor dtypes {bad}")


_MASK_POLICY = ArrayPolicy(order="C", dtypes={"bool": "bool"}, na_sentinels=False, masks=False)


def _contiguous_strides(shape: tuple[int, ...], itemsize: int, order: str) -> tuple[int, ...]:
    strides = [0] * len(shape)
    step = itemsize
    dims = range(len(shape)) if order == "F" else range(len(shape) - 1, -1, -1)
    for k in dims:
        strides[k] = step
        step *= max(shape[k], 1)
    return tuple(strides)


def _cast(np: Any, data: Any, target: str, policy: ArrayPolicy) -> Any:
    """``data`` as the descriptor dtype ``target`` (no copy when it already is), refusing casts
    that would change values."""
    if target == "logical":
        return data.astype(np.int32)
    dst = np.dtype(target)
    if data.dtype == dst:
        return data
    src = data.dtype
    if src.kind in "iu" and dst.kind in "iuf":
        if dst.kind == "f":
            # NumPy calls int64 -> float64 "safe"; it is not above 2**53.
            exact = min(policy.max_exact_int, 2 ** (np.finfo(dst).nmant + 1))
            lo, hi = -exact, exact
            what = f"{dst.name} holds integers exactly only up to {exact}"
        else:
            info = np.iinfo(dst)
            lo, hi, what = int(info.min), int(info.max), f"{dst.name} holds {info.min}..{info.max}"
        info_src = np.iinfo(src)
        if data.size and (int(info_src.min) < lo or int(info_src.max) > hi):
            vmin, vmax = int(data.min()), int(data.max())
            if vmin < lo or vmax > hi:
                bad = vmin if vmin < lo else vmax
                raise ConversionError(
                    f"{src.name} array holds {bad}, which the host cannot store exactly "
                    f"({what}); convert it explicitly, e.g. arr.astype('float64')"
                )
        return data.astype(dst)
    if np.can_cast(src, dst, "safe"):
        return data.astype(dst)
    raise ConversionError(f"cannot store a {data.dtype.name} array as {target} without loss")


def array_to_descriptor(arr: Any, policy: ArrayPolicy, *, tensor: bool = False) -> Any:
    """The descriptor of ``arr`` (a NumPy array, or any buffer-protocol object such as a
    memoryview or ``array.array``) for a host, or NotImplemented if its dtype has no mapping
    (the value then crosses as a handle)."""
    if not _is_ndarray(arr):
        return _buffer_to_descriptor(arr, policy, tensor)
    import numpy as np

    mask = None
    data = arr
    if isinstance(arr, np.ma.MaskedArray):
        data = np.asarray(arr.data)
        m = np.ma.getmaskarray(arr)
        mask = m if m.any() else None
    target = policy.dtypes.get(data.dtype.name)
    if target is None or data.dtype.kind not in "biuf":
        return NotImplemented
    if not data.dtype.isnative:
        data = data.astype(data.dtype.newbyteorder("="))
    out = _cast(np, data, target, policy)
    if policy.na_sentinels and target == "int32" and out.size:
        # INT_MIN is NA to this host: a real INT_MIN would silently turn into NA, so the array
        # crosses as doubles instead (exact), as the scalar int rule does for INT_MIN.
        clash = out == INT_MIN
        if mask is not None:
            clash &= ~mask
        if clash.any():
            target = "float64"
            out = data.astype(np.float64)
    mask_desc = None
    if mask is not None:
        if policy.na_sentinels and target in ("float64", "int32", "logical"):
            out = out.copy() if out is data or not out.flags.writeable else out
            out[mask] = NA_REAL if target == "float64" else INT_MIN
        elif policy.masks:
            mask_desc = array_to_descriptor(mask, _MASK_POLICY)
        else:
            raise ConversionError(
                f"this host has no missing-value representation for {target} arrays; "
                f"fill the masked values first (arr.filled(...))"
            )
    order = policy.order
    contiguous = out.flags.f_contiguous if order == "F" else out.flags.c_contiguous
    if not contiguous:
        out = out.copy(order=order)
    flat = out.reshape(-1, order=order)  # a view: `out` is contiguous in `order`
    return Array(
        buffer=memoryview(flat.view(np.uint8)),
        dtype=target,
        shape=tuple(out.shape),
        strides=_contiguous_strides(out.shape, out.itemsize, order),
        offset=0,
        order=order,
        readonly=not out.flags.writeable,
        tensor=tensor,
        mask=mask_desc,
    )


def _byte_view(np: Any, buffer: Any) -> Any:
    """A flat uint8 array sharing ``buffer``'s memory (any contiguous buffer-protocol object)."""
    if not isinstance(buffer, np.ndarray):
        try:
            buffer = np.asarray(memoryview(buffer))
        except TypeError:
            raise ConversionError(
                f"Array.buffer must support the buffer protocol, not {type(buffer).__name__}"
            ) from None
    if not (buffer.flags.c_contiguous or buffer.flags.f_contiguous):
        raise ConversionError("Array.buffer must be contiguous memory (use offset/strides)")
    return buffer.ravel(order="K").view(np.uint8)


def array_from_descriptor(desc: Array, policy: ArrayPolicy, *, numpy: bool | None = None) -> Any:
    """A NumPy view of the descriptor's memory (a masked array when it holds NA or a mask); a
    memoryview where NumPy is absent (or with ``numpy=False``)."""
    if desc.dtype not in DESCRIPTOR_DTYPES:
        raise ConversionError(
            f"Array.dtype {desc.dtype!r} is not one of {', '.join(DESCRIPTOR_DTYPES)}"
        )
    np = numpy_or_none() if numpy is not False else None
    if np is None:
        if numpy:
            raise ConversionError("array_from_descriptor(numpy=True): NumPy is not available")
        return _buffer_from_descriptor(desc, policy)
    storage = np.dtype(np.int32) if desc.dtype == "logical" else np.dtype(desc.dtype)
    base = _byte_view(np, desc.buffer)
    shape = tuple(int(d) for d in desc.shape)
    try:
        if desc.strides is None:
            if desc.order not in ("C", "F"):
                raise ConversionError(f"Array.order must be 'C' or 'F', not {desc.order!r}")
            arr = np.ndarray(shape, storage, buffer=base, offset=desc.offset, order=desc.order)
        else:
            strides = tuple(int(s) for s in desc.strides)
            arr = np.ndarray(shape, storage, buffer=base, offset=desc.offset, strides=strides)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConversionError):
            raise
        raise ConversionError(
            f"Array layout does not fit its buffer ({base.nbytes} bytes): dtype {desc.dtype}, "
            f"shape {shape}, strides {desc.strides}, offset {desc.offset}: {exc}"
        ) from None
    if desc.readonly and arr.flags.writeable:
        arr.flags.writeable = False
    result: Any = arr
    if desc.dtype == "logical":
        values = arr.astype(np.bool_)  # (astype, not `!= 0`, keeps 0-d arrays arrays)
        if policy.na_sentinels:
            na = np.asarray(arr == INT_MIN)
            if na.any():
                # lazy: na_arrays subclasses numpy.ma (NumPy is optional in the bridge)
                from .na_arrays import NAArray  # reductions over NA are NA, as in R

                values[na] = False
                result = NAArray(values, mask=na)
            else:
                result = values
        else:
            result = values
    elif policy.na_sentinels and desc.dtype == "int32":
        na = np.asarray(arr == INT_MIN)
        if na.any():
            from .na_arrays import NAArray  # lazy: needs NumPy (see above)

            result = NAArray(arr, mask=na, copy=False)
    if desc.mask is not None:
        mask = np.asarray(array_from_descriptor(desc.mask, _MASK_POLICY, numpy=True),
                          dtype=bool)
        if mask.shape != shape:
            raise ConversionError(f"Array.mask has shape {mask.shape}, expected {shape}")
        extra = np.ma.getmaskarray(result) if isinstance(result, np.ma.MaskedArray) else False
        result = np.ma.MaskedArray(np.asarray(result), mask=mask | extra, copy=False)
    return result


# -- without NumPy: buffers and memoryviews ------------------------------------------------------
#: descriptor dtype -> memoryview/struct format (native sizes: "q" is 8 bytes everywhere): the
#: runtime's dtypes from DType's one table, plus host-only ones (NumPy's small ints, R's logical)
FORMATS = {
    "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "uint32": "I", "uint64": "Q",
    "logical": "i", **{name: d.buffer_format for name, d in _DTYPES.items()},
}
#: descriptor dtype -> array.array typecode (bool is built as "B" and viewed as "?")
TYPECODES = {**FORMATS, "bool": "B"}
_ITEMSIZE = {d: struct.calcsize(f) for d, f in FORMATS.items()}
_INT_RANGE = {
    d: ((-(2 ** (8 * _ITEMSIZE[d] - 1)), 2 ** (8 * _ITEMSIZE[d] - 1) - 1) if f.islower()
        else (0, 2 ** (8 * _ITEMSIZE[d]) - 1))
    for d, f in FORMATS.items() if f in "bBhHiIqQ" and d != "logical"
}
_LITTLE = sys.byteorder == "little"


def buffer_dtype(view: memoryview) -> tuple[str | None, bool]:
    """(descriptor dtype of a memoryview's format or None, whether it needs a byte swap)."""
    fmt = view.format
    swap = False
    if fmt[:1] in ("@", "=", "<", ">", "!"):
        prefix, fmt = fmt[0], fmt[1:]
        swap = (prefix in (">", "!")) == _LITTLE and prefix not in ("@", "=")
    if len(fmt) != 1:
        return None, False
    n = view.itemsize
    if fmt in "lLnN":
        signed = fmt in "ln"
        fmt = {4: "i", 8: "q"}.get(n, "")
        fmt = fmt if signed else fmt.upper()
    for dtype, f in FORMATS.items():
        if f == fmt and dtype != "logical" and _ITEMSIZE[dtype] == n:
            return dtype, swap and n > 1
    return None, False


def _values(raw: Any, dtype: str, swap: bool) -> list[Any]:
    """The elements of contiguous native-or-swapped bytes ``raw`` as Python values."""
    if swap:
        a = _pyarray(TYPECODES[dtype])
        a.frombytes(bytes(raw))
        a.byteswap()
        raw = memoryview(a).cast("B")
    return memoryview(raw).cast("B").cast(FORMATS[dtype]).tolist()


def _cast_values(values: list[Any], src: str, target: str, policy: ArrayPolicy) -> list[Any]:
    """``_cast`` for Python values: refuse changes of value, as the NumPy path does."""
    if target == "logical" or target == "bool":
        return [1 if v else 0 for v in values]
    if src in _INT_RANGE or src == "bool":
        if target in ("float32", "float64"):
            exact = min(policy.max_exact_int, 2**24 if target == "float32" else 2**53)
            lo, hi = -exact, exact
            what = f"{target} holds integers exactly only up to {exact}"
        else:
            lo, hi = _INT_RANGE[target]
            what = f"{target} holds {lo}..{hi}"
        if values and src != "bool":
            vmin, vmax = min(values), max(values)
            if vmin < lo or vmax > hi:
                bad = vmin if vmin < lo else vmax
                raise ConversionError(
                    f"{src} array holds {bad}, which the host cannot store exactly ({what}); "
                    f"convert it explicitly first"
                )
        conv = float if target.startswith("float") else int
        return [conv(v) for v in values]
    if src == "float32" and target == "float64":
        return values
    raise ConversionError(f"cannot store a {src} array as {target} without loss")


def _buffer_to_descriptor(value: Any, policy: ArrayPolicy, tensor: bool) -> Any:
    try:
        view = memoryview(value)
    except TypeError:
        return NotImplemented
    src, swap = buffer_dtype(view)
    target = policy.dtypes.get(src) if src is not None else None
    if target is None:
        return NotImplemented
    order = policy.order
    shape = tuple(view.shape or ())
    both = view.c_contiguous and view.f_contiguous
    contiguous = both or (view.f_contiguous if order == "F" else view.c_contiguous)
    copied = False
    if contiguous and view.c_contiguous and not swap and target == src:
        flat: memoryview = view.cast("B") if view.ndim != 1 or view.format != "B" else view
    else:
        raw = view.tobytes(order=order)  # one copy, in the host's order
        copied = True
        if target == src and not swap:
            flat = memoryview(bytearray(raw))
        else:
            values = _values(raw, src, swap)
            if target != src:
                values = _cast_values(values, src, target, policy)
            if policy.na_sentinels and target == "int32" and INT_MIN in values:
                target = "float64"  # a real INT_MIN would read as NA: cross as doubles
                values = [float(v) for v in values]
            flat = memoryview(_pyarray(TYPECODES[target], values)).cast("B")
    if policy.na_sentinels and target == "int32" and not copied and view.nbytes:
        if INT_MIN in flat.cast("i").tolist():
            values = [float(v) for v in flat.cast("i").tolist()]
            target, copied = "float64", True
            flat = memoryview(_pyarray("d", values)).cast("B")
    return Array(
        buffer=flat,
        dtype=target,
        shape=shape,
        strides=_contiguous_strides(shape, _ITEMSIZE[target], order),
        offset=0,
        order=order,
        readonly=view.readonly if not copied else False,
        tensor=tensor,
        mask=None,
    )


def _buffer_from_descriptor(desc: Array, policy: ArrayPolicy) -> memoryview:
    """The descriptor as a C-ordered memoryview (zero copy when its layout is C-ordered)."""
    if desc.mask is not None:
        raise ConversionError(
            "this array carries a missing-value mask (Array.mask), which needs NumPy on the "
            "Python side (a memoryview has no mask); fill the missing values before sending"
        )
    try:
        base = memoryview(desc.buffer)
    except TypeError:
        raise ConversionError(
            f"Array.buffer must support the buffer protocol, not {type(desc.buffer).__name__}"
        ) from None
    if not base.c_contiguous:
        raise ConversionError("Array.buffer must be contiguous memory (use offset/strides)")
    base = base.cast("B") if base.ndim != 1 or base.format != "B" else base
    dtype = desc.dtype
    fmt, itemsize = FORMATS[dtype], _ITEMSIZE[dtype]
    shape = tuple(int(d) for d in desc.shape)
    size = 1
    for d in shape:
        size *= d
    if desc.strides is None:
        if desc.order not in ("C", "F"):
            raise ConversionError(f"Array.order must be 'C' or 'F', not {desc.order!r}")
        strides = _contiguous_strides(shape, itemsize, desc.order)
    else:
        strides = tuple(int(s) for s in desc.strides)
    offset = int(desc.offset)
    if len(strides) != len(shape) or offset < 0 or any(d < 0 for d in shape):
        raise ConversionError(
            f"Array layout is invalid: shape {shape}, strides {desc.strides}, offset {offset}"
        )
    if size:
        lo = offset + sum(s * (d - 1) for s, d in zip(strides, shape) if s < 0)
        hi = offset + sum(s * (d - 1) for s, d in zip(strides, shape) if s > 0) + itemsize
        if lo < 0 or hi > base.nbytes:
            raise ConversionError(
                f"Array layout does not fit its buffer ({base.nbytes} bytes): dtype {dtype}, "
                f"shape {shape}, strides {desc.strides}, offset {offset}"
            )
    c_strides = _contiguous_strides(shape, itemsize, "C")
    if size == 0:  # a memoryview cannot have a zero in a multi-dimensional shape: flat
        empty = memoryview(b"" if desc.readonly else bytearray())
        return empty.cast("?" if dtype == "logical" else fmt)
    if all(s == c or d == 1 for s, c, d in zip(strides, c_strides, shape)):
        flat = base[offset : offset + size * itemsize]  # zero copy
    else:  # gather the elements into C order (one pass over the indices)
        out = bytearray(size * itemsize)
        pos = 0
        idx = [0] * len(shape)
        for _ in range(size):
            at = offset + sum(i * s for i, s in zip(idx, strides))
            out[pos : pos + itemsize] = base[at : at + itemsize]
            pos += itemsize
            for k in range(len(shape) - 1, -1, -1):
                idx[k] += 1
                if idx[k] < shape[k]:
                    break
                idx[k] = 0
        flat = memoryview(out)
    if dtype == "logical" or (policy.na_sentinels and dtype == "int32"):
        ints = flat.cast("i").tolist()
        if policy.na_sentinels and INT_MIN in ints:
            raise ConversionError(
                f"this {'logical' if dtype == 'logical' else 'integer'} array holds missing "
                f"values (NA), which need NumPy on the Python side (a masked array)"
            )
        if dtype == "logical":
            flat = memoryview(bytearray(1 if v else 0 for v in ints))
            fmt = "?"
    view = flat.cast(fmt, shape) if len(shape) != 1 else flat.cast(fmt)
    if desc.readonly and not view.readonly:
        view = view.toreadonly()
    return view
