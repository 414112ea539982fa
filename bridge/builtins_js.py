"""The "js" language tables: built-in converters with JavaScript's number and array rules.

* int: JS numbers are doubles, exact for integers only up to Number.MAX_SAFE_INTEGER
  (2**53 - 1). An int within +/- that bound crosses as ``Int`` (a JS number); a larger one as
  ``BigInt`` (a JS BigInt), so no integer is ever rounded. Both come back as Python ints.
* str: JS strings are UTF-16 and hold every Python str, lone surrogates included.
* arrays: row-major ("C") memory; every numeric dtype keeps its type (typed arrays exist for
  all of them: BigInt64Array for int64, Uint8Array for bool). JS has no NA: masked arrays cross
  with ``Array.mask``.
"""

from __future__ import annotations

from .arrays import NUMERIC_DTYPES, ArrayPolicy
from .builtins_common import install_common
from .descriptors import BigInt, Int, Str
from .registry import Context, Registry

__all__ = ["JS_ARRAYS", "MAX_SAFE_INTEGER", "install_js", "int_to_js", "str_to_js"]

MAX_SAFE_INTEGER = 2**53 - 1

JS_ARRAYS = ArrayPolicy(
    order="C",
    dtypes={d: d for d in NUMERIC_DTYPES},
    na_sentinels=False,
    masks=True,
)


def int_to_js(value: int, cx: Context) -> Int | BigInt:
    v = int(value)
    if -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
        return Int(v)
    return BigInt(v)


def str_to_js(value: str, cx: Context) -> Str:
    return Str(str.__str__(value))


def install_js(out: Registry, inp: Registry) -> None:
    install_common(out, inp, JS_ARRAYS)
    out.register(int, int_to_js)
    out.register(str, str_to_js)
