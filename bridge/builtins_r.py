"""The "r" language tables: built-in converters with R's number, string and array rules.

* int: R integers are 32-bit and INT_MIN is NA_integer_, so an int in
  [-2**31 + 1, 2**31 - 1] crosses as ``Int`` (R integer); any other int with
  ``|v| <= 2**53`` crosses as ``Float`` (R double, exact); beyond that a ConversionError is raised
  rather than silently rounding (convert with ``float(x)`` to accept rounding, ``str(x)`` to
  keep every digit). Back in Python an R double is a float, an R integer an int.
* str: R strings are UTF-8 and cannot contain NUL; such strings raise ConversionError
  (send ``bytes`` for binary data: it becomes a raw vector).
* arrays: column-major ("F") memory; R types only: bool -> logical (4 bytes), int8/16/32 and
  uint8/16 -> integer, float32/float64, uint32 and int64/uint64 (|v| <= 2**53) -> double; an
  int32 array holding a real INT_MIN -> double (R would read INT_MIN as NA).
  NA uses R's sentinels (see ``na.py``).
"""

from __future__ import annotations

from .arrays import ArrayPolicy
from .builtins_common import install_common
from .descriptors import Float, Int, Str
from .errors import ConversionError
from .na import INT_MIN
from .registry import Context, Registry

__all__ = ["R_ARRAYS", "R_INT_MAX", "install_r", "int_to_r", "str_to_r"]

R_INT_MAX = 2**31 - 1
R_EXACT_DOUBLE = 2**53

R_ARRAYS = ArrayPolicy(
    order="F",
    dtypes={
        "bool": "logical",
        "int8": "int32",
        "int16": "int32",
        "int32": "int32",
        "uint8": "int32",
        "uint16": "int32",
        "uint32": "float64",
        "int64": "float64",
        "uint64": "float64",
        "float32": "float64",
        "float64": "float64",
    },
    na_sentinels=True,
    masks=False,
    max_exact_int=R_EXACT_DOUBLE,
)


def _short(v: int) -> str:
    s = str(v)
    return s if len(s) <= 40 else f"{s[:20]}...{s[-8:]} ({len(s)} digits)"


def int_to_r(value: int, cx: Context) -> Int | Float:
    v = int(value)
    if INT_MIN < v <= R_INT_MAX:
        return Int(v)
    if -R_EXACT_DOUBLE <= v <= R_EXACT_DOUBLE:
        return Float(float(v))
    raise ConversionError(
        f"int {_short(v)} does not fit an R number: R integers are 32-bit (INT_MIN is "
        f"NA_integer_) and doubles hold integers exactly only up to 2**53; pass float(x) to "
        f"accept rounding or str(x) to keep every digit"
    )


def str_to_r(value: str, cx: Context) -> Str:
    s = str.__str__(value)
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConversionError(
                f"str with a lone surrogate at index {exc.start} cannot become an R string "
                f"(R strings are UTF-8)"
            ) from None
    if "\x00" in s:
        raise ConversionError(
            f"str with a NUL character at index {s.index(chr(0))} cannot become an R string; "
            f"send bytes for binary data (it becomes a raw vector)"
        )
    return Str(s)


def install_r(out: Registry, inp: Registry) -> None:
    install_common(out, inp, R_ARRAYS)
    out.register(int, int_to_r)
    out.register(str, str_to_r)
