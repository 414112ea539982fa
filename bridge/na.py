"""The missing-value (NA) model.

R has a missing value for each atomic type; Python has none, and NaN is not NA. The bridge keeps
them apart and maps R's NAs losslessly:

=============  =======================  ==================================================
R              Python scalar            arrays (NumPy)
=============  =======================  ==================================================
NA_real_       ``NA_REAL`` (a float)    float64 keeping R's bit pattern (view, no copy)
NA_integer_    ``NA_integer``           int32 ``INT_MIN`` + ``numpy.ma`` mask
NA (logical)   ``NA``                   bool + ``numpy.ma`` mask (R logicals are 4 bytes)
NA_character_  ``NA_character``         ``NA_character`` in a list of str
NaN            ``float('nan')``         NaN (an ordinary quiet NaN: not NA)
=============  =======================  ==================================================

* ``NA_real_`` is a NaN whose low 32 bits are 1954 (0x7FF00000000007A2). NumPy and Python
  floats carry the bits unchanged, and arithmetic keeps the low word (R's own ``R_IsNA`` test
  reads only that word), so NA stays NA through a view, a copy and most arithmetic, just as in R.
  ``is_na`` tells NA from NaN; ``math.isnan`` is true for both.
* Integers and logicals have no spare bit pattern in Python: an R vector with NAs arrives as a
  ``numpy.ma.MaskedArray`` (the data still a zero-copy view of R's memory for integers, with
  ``INT_MIN`` under the mask); one without NAs arrives as a plain array. A masked array sent to R
  gets the sentinel of its R type at masked positions. A real (unmasked) INT_MIN sent to R would
  read as NA, so such an int32 array (like the int -2**31) crosses as doubles.
* For hosts without sentinels (JS), masked arrays cross with an explicit mask (``Array.mask``).
* ``NA``, ``NA_integer`` and ``NA_character`` are distinct singletons (R's ``identical()`` tells
  them apart, so a round trip keeps the type); all are instances of :class:`NAType`. ``bool(NA)``
  raises, like R's ``if (NA)``.
* float32 has no NA (R has no float32 and casts drop NaN payloads); use a masked array.
"""

from __future__ import annotations

import math
import struct
from typing import Any

__all__ = [
    "INT_MIN",
    "NA",
    "NA_REAL",
    "NA_REAL_BITS",
    "NA_character",
    "NA_integer",
    "NAType",
    "is_na",
    "is_na_real",
    "na_for",
    "na_mask",
]

INT_MIN = -(2**31)  # R's NA_integer_ and the NA of logicals
NA_REAL_BITS = 0x7FF00000000007A2
NA_REAL: float = struct.unpack("<d", struct.pack("<Q", NA_REAL_BITS))[0]
_LOW_WORD = 0xFFFFFFFF
_R_NA_PAYLOAD = 1954


class NAType:
    """A typed missing value. Use the singletons ``NA``, ``NA_integer``, ``NA_character``."""

    __slots__ = ("dtype",)
    _instances: dict[str, NAType] = {}  # noqa: RUF012 - class-level registry of singletons

    def __new__(cls, dtype: str = "logical") -> NAType:
        inst = cls._instances.get(dtype)
        if inst is None:
            if dtype not in ("logical", "int32", "str"):
                raise ValueError(
                    f"NAType: dtype must be 'logical', 'int32' or 'str', not {dtype!r} "
                    f"(the float64 NA is the float NA_REAL)"
                )
            inst = object.__new__(cls)
            object.__setattr__(inst, "dtype", dtype)
            cls._instances[dtype] = inst
        return inst

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("NA values are immutable")

    def __repr__(self) -> str:
        return {"logical": "NA", "int32": "NA_integer", "str": "NA_character"}[self.dtype]

    def __bool__(self) -> bool:
        raise TypeError(f"the truth value of {self!r} is unknown (missing value)")

    def __reduce__(self) -> tuple[Any, ...]:
        return (NAType, (self.dtype,))

    def __copy__(self) -> NAType:
        return self

    def __deepcopy__(self, memo: Any) -> NAType:
        return self


NA = NAType("logical")
NA_integer = NAType("int32")
NA_character = NAType("str")


def is_na_real(x: float) -> bool:
    """True when ``x`` is R's NA_real_ (a NaN with payload 1954), False for other NaNs."""
    if x == x:  # fast path: not a NaN
        return False
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    return (bits & _LOW_WORD) == _R_NA_PAYLOAD


def is_na(x: Any) -> Any:
    """NA test: a bool for scalars, a bool array for arrays (see :func:`na_mask`)."""
    if isinstance(x, NAType):
        return True
    if isinstance(x, float):
        return is_na_real(x)
    np = _numpy()
    if np is not None and isinstance(x, np.ndarray):
        return na_mask(x)
    if np is not None and isinstance(x, np.floating):
        return is_na_real(float(x))
    return False


def na_mask(arr: Any) -> Any:
    """Where ``arr`` holds NA: masked positions of a masked array, R's NA bit pattern in float64,
    INT_MIN in int32. Other dtypes have no sentinel."""
    np = _numpy()
    a = np.asarray(arr)
    if a.dtype == np.float64:
        bits = a.view(np.uint64) if a.dtype.isnative else a.astype(np.float64).view(np.uint64)
        found = np.isnan(a) & ((bits & _LOW_WORD) == _R_NA_PAYLOAD)
    elif a.dtype == np.int32:
        found = a == INT_MIN
    else:
        found = np.zeros(a.shape, dtype=bool)
    if isinstance(arr, np.ma.MaskedArray):
        found = found | np.ma.getmaskarray(arr)
    return found


def na_for(dtype: str) -> Any:
    """The Python NA value for a descriptor dtype name."""
    if dtype == "float64":
        return NA_REAL
    if dtype in ("int32", "str"):
        return NAType(dtype)
    return NA


def _numpy() -> Any:
    try:
        import numpy

        return numpy
    except ImportError:  # pragma: no cover - NumPy is a dependency; keep scalars usable without
        return None


# Checked at import: if the platform quietened or dropped the payload, NA would silently become
# NaN. Fail loudly instead.
if not (math.isnan(NA_REAL) and is_na_real(NA_REAL)):  # pragma: no cover
    raise ImportError("tensorbridge.bridge: this platform does not keep NaN payloads")
