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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .descriptors import Array
from .errors import ConversionError
from .na import INT_MIN, NA_REAL

__all__ = [
    "DESCRIPTOR_DTYPES",
    "ArrayPolicy",
    "array_from_descriptor",
    "array_to_descriptor",
]

NUMERIC_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64",
)
#: Element types a descriptor may name; "logical" is R's 4-byte logical (0, 1, INT_MIN = NA).
DESCRIPTOR_DTYPES = (*NUMERIC_DTYPES, "logical")


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


def _cast(data: np.ndarray, target: str, policy: ArrayPolicy) -> np.ndarray:
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


def array_to_descriptor(arr: np.ndarray, policy: ArrayPolicy, *, tensor: bool = False) -> Any:
    """The descriptor of ``arr`` for a host, or NotImplemented if its dtype has no mapping
    (the value then crosses as a handle)."""
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
    out = _cast(data, target, policy)
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


def _byte_view(buffer: Any) -> np.ndarray:
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


def array_from_descriptor(desc: Array, policy: ArrayPolicy) -> np.ndarray:
    """A NumPy view of the descriptor's memory (a masked array when it holds NA or a mask)."""
    if desc.dtype not in DESCRIPTOR_DTYPES:
        raise ConversionError(
            f"Array.dtype {desc.dtype!r} is not one of {', '.join(DESCRIPTOR_DTYPES)}"
        )
    storage = np.dtype(np.int32) if desc.dtype == "logical" else np.dtype(desc.dtype)
    base = _byte_view(desc.buffer)
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
    result: np.ndarray = arr
    if desc.dtype == "logical":
        values = arr.astype(np.bool_)  # (astype, not `!= 0`, keeps 0-d arrays arrays)
        if policy.na_sentinels:
            na = np.asarray(arr == INT_MIN)
            if na.any():
                values[na] = False
                result = np.ma.MaskedArray(values, mask=na)
            else:
                result = values
        else:
            result = values
    elif policy.na_sentinels and desc.dtype == "int32":
        na = np.asarray(arr == INT_MIN)
        if na.any():
            result = np.ma.MaskedArray(arr, mask=na, copy=False)
    if desc.mask is not None:
        mask = np.asarray(array_from_descriptor(desc.mask, _MASK_POLICY), dtype=bool)
        if mask.shape != shape:
            raise ConversionError(f"Array.mask has shape {mask.shape}, expected {shape}")
        extra = np.ma.getmaskarray(result) if isinstance(result, np.ma.MaskedArray) else False
        result = np.ma.MaskedArray(np.asarray(result), mask=mask | extra, copy=False)
    return result
