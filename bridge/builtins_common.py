"""Built-in converters shared by every language: the value kinds every host has.

Python -> foreign: None, NA, bool, float (NaN and +/-inf as themselves; R's NA bit pattern as
NA), str, bytes/bytearray, list/tuple, dict with string keys (other dicts cross as handles),
NumPy scalars, arrays (NumPy arrays, memoryviews and ``array.array``, by the language's
:class:`ArrayPolicy`), Tensors, callables (by handle), exceptions, foreign functions/objects
going home, and descriptors (unchanged).

NumPy is optional: its converters are registered by qualified name (``"numpy.ndarray"``...), so
this module imports where NumPy does not exist (Pyodide offline) and uses it where it does.
``int`` and ``str`` rules differ per host and are registered by ``builtins_r`` /
``builtins_js``.

foreign -> Python: every descriptor kind, plus the plain Python values FFIs produce on their
own (numbers, strings, lists, dicts).
"""

from __future__ import annotations

import array as _pyarray
import collections.abc
import sys
from typing import Any

from tensorbridge.runtime import Tensor, tensor

from .arrays import FORMATS, TYPECODES, ArrayPolicy, array_from_descriptor, array_to_descriptor
from .callables import ForeignCallable, ForeignObject
from .descriptors import (
    Array,
    BigInt,
    Bool,
    Bytes,
    Desc,
    Dict,
    Error,
    Float,
    ForeignFunction,
    ForeignRef,
    Int,
    List,
    NAValue,
    Null,
    PyFunction,
    Raised,
    Ref,
    Str,
    TensorRef,
)
from .errors import ConversionError, ForeignError, error_from_descriptor, error_to_descriptor
from .handles import handles
from .na import NAType, is_na_real, na_for
from .registry import Context, Registry

__all__ = ["install_common"]

_NULL = Null()
_NA_REAL = NAValue("float64")


# -- Python -> foreign --------------------------------------------------------------------------
def none_out(value: None, cx: Context) -> Null:
    return _NULL


def na_out(value: NAType, cx: Context) -> NAValue:
    return NAValue(value.dtype)


def bool_out(value: Any, cx: Context) -> Bool:
    return Bool(bool(value))


def float_out(value: Any, cx: Context) -> Desc:
    v = float(value)
    return _NA_REAL if v != v and is_na_real(v) else Float(v)


def numpy_int_out(value: Any, cx: Context) -> Any:
    return cx.convert(int(value))  # the language's int rule decides


def bytes_out(value: Any, cx: Context) -> Bytes:
    return Bytes(bytes(value))


def sequence_out(value: Any, cx: Context) -> List:
    cx.enter(value)
    try:
        return List(tuple(cx.convert(item, i) for i, item in enumerate(value)))
    finally:
        cx.leave(value)


def dict_out(value: dict[Any, Any], cx: Context) -> Any:
    for k in value:
        if not isinstance(k, str):
            return NotImplemented  # not representable as a named list / object: by handle
    cx.enter(value)
    try:
        keys = tuple(str.__str__(k) for k in value)
        values = tuple(cx.convert(v, k) for k, v in value.items())
    finally:
        cx.leave(value)
    return Dict(keys, values)


def exception_out(value: BaseException, cx: Context) -> Error:
    return error_to_descriptor(value)


def foreign_error_out(value: ForeignError, cx: Context) -> Error:
    return value.descriptor  # re-crosses unchanged


def callable_out(value: Any, cx: Context) -> PyFunction:
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    doc = getattr(value, "__doc__", None)
    first_line = doc.strip().splitlines()[0] if isinstance(doc, str) and doc.strip() else ""
    return PyFunction(
        handles.register(value),
        type(value).__name__,
        name if isinstance(name, str) else type(value).__name__,
        first_line,
    )


def foreign_callable_out(value: ForeignCallable, cx: Context) -> Any:
    if value.lang == cx.lang:
        return value.descriptor  # going home: the host gets its own function back
    return callable_out(value, cx)  # another host's function: callable through Python


def foreign_object_out(value: ForeignObject, cx: Context) -> Any:
    if value.lang == cx.lang:
        return value.descriptor
    return NotImplemented


def descriptor_out(value: Desc, cx: Context) -> Desc:
    return value


# -- foreign -> Python --------------------------------------------------------------------------
def null_in(value: Any, cx: Context) -> None:
    return None


def na_in(value: NAValue, cx: Context) -> Any:
    return na_for(value.dtype)


def scalar_in(value: Any, cx: Context) -> Any:
    return value.value


def int_in(value: Int | BigInt, cx: Context) -> int:
    return int(value.value)


def float_in(value: Float, cx: Context) -> float:
    return float(value.value)


def bytes_in(value: Bytes, cx: Context) -> bytes:
    return bytes(value.value)


def list_in(value: List, cx: Context) -> list[Any]:
    return [cx.convert(item, i) for i, item in enumerate(value.items)]


def dict_in(value: Dict, cx: Context) -> dict[str, Any]:
    if len(value.keys) != len(value.values):
        raise ConversionError(
            f"Dict has {len(value.keys)} keys but {len(value.values)} values"
        )
    out: dict[str, Any] = {}
    for k, v in zip(value.keys, value.values):
        if k in out:
            raise ConversionError(
                f"duplicate name {k!r}: a Python dict cannot hold it (send a list instead)"
            )
        out[k] = cx.convert(v, k)
    return out


def ref_in(value: Ref | PyFunction, cx: Context) -> Any:
    return handles.resolve(value.id)


def foreign_function_in(value: ForeignFunction, cx: Context) -> ForeignCallable:
    return ForeignCallable(value)


def foreign_ref_in(value: ForeignRef, cx: Context) -> ForeignObject:
    return ForeignObject(value)


def error_in(value: Error, cx: Context) -> BaseException:
    return error_from_descriptor(value)


def raised_in(value: Raised, cx: Context) -> Any:
    raise error_from_descriptor(value.error)


def identity_in(value: Any, cx: Context) -> Any:
    return value


def raw_sequence_in(value: Any, cx: Context) -> list[Any]:
    return [cx.convert(item, i) for i, item in enumerate(value)]


def raw_dict_in(value: dict[Any, Any], cx: Context) -> dict[Any, Any]:
    return {k: cx.convert(v, k) for k, v in value.items()}


# -- installation -------------------------------------------------------------------------------
def _tensor_type() -> type | None:
    return Tensor


def tensor_ref(t: Any, backend: bool = False) -> TensorRef:
    """A runtime tensor by handle, with its shape, dtype and (``backend``) backend name."""
    return TensorRef(handles.register(t), tuple(t.shape), t.dtype.name,
                     t.backend.name if backend else "")


def tensor_buffer(t: Any) -> Any:
    """A tensor's values as a NumPy array, or without NumPy as a C-ordered memoryview (built
    from ``tolist()``: correct, not fast)."""
    try:
        return t.numpy()
    except ImportError:
        pass
    shape = tuple(t.shape)
    flat: list[Any] = [t.tolist()]
    for _ in shape:
        flat = [v for row in flat for v in row]
    fmt = FORMATS[t.dtype.name]
    view = memoryview(_pyarray.array(TYPECODES[t.dtype.name], flat)).cast("B")
    if not shape:
        return view.cast(fmt, ())
    if 0 in shape:
        return view.cast(fmt)
    return view.cast(fmt, shape)


class ArrayOut:
    """ndarray (or Tensor) -> Array descriptor, by a language's array policy."""

    def __init__(self, policy: ArrayPolicy, tensor: bool = False) -> None:
        self.policy = policy
        self.tensor = tensor

    def __call__(self, value: Any, cx: Context) -> Any:
        if self.tensor:
            return array_to_descriptor(tensor_buffer(value), self.policy, tensor=True)
        return array_to_descriptor(value, self.policy)

    def __repr__(self) -> str:
        what = "tensor" if self.tensor else "array"
        return f"{what}_out(order={self.policy.order!r}, na_sentinels={self.policy.na_sentinels})"


class ArrayIn:
    """Array descriptor -> NumPy view (or Tensor when ``desc.tensor``)."""

    def __init__(self, policy: ArrayPolicy) -> None:
        self.policy = policy

    def __call__(self, value: Array, cx: Context) -> Any:
        arr = array_from_descriptor(value, self.policy)
        if not value.tensor:
            return arr
        np = sys.modules.get("numpy")
        if np is not None and isinstance(arr, np.ma.MaskedArray):
            raise ConversionError(
                "this array holds missing values (NA) but was sent as a tensor; tensors have "
                "no NA: fill or drop the missing values first"
            )

        return tensor(arr)  # read-only memory is shared, writable memory is copied

    def __repr__(self) -> str:
        return f"array_in(na_sentinels={self.policy.na_sentinels})"


def install_common(out: Registry, inp: Registry, policy: ArrayPolicy) -> None:
    """Register the shared converters on a language's two registries, with its array policy."""
    out.register(type(None), none_out)
    out.register(NAType, na_out)
    out.register((bool, "numpy.bool_", "numpy.bool"), bool_out)
    out.register((float, "numpy.floating"), float_out)
    out.register("numpy.integer", numpy_int_out)
    out.register((bytes, bytearray), bytes_out)
    out.register((list, tuple), sequence_out)
    out.register(dict, dict_out)
    out.register(BaseException, exception_out)
    out.register(ForeignError, foreign_error_out)
    out.register(collections.abc.Callable, callable_out)
    out.register(ForeignCallable, foreign_callable_out)
    out.register(ForeignObject, foreign_object_out)
    out.register(Desc, descriptor_out)
    out.register(("numpy.ndarray", memoryview, _pyarray.array), ArrayOut(policy))
    tensor_type = _tensor_type()
    if tensor_type is not None:
        out.register(tensor_type, ArrayOut(policy, tensor=True))

    inp.register(Null, null_in)
    inp.register(NAValue, na_in)
    inp.register((Bool, Str), scalar_in)
    inp.register((Int, BigInt), int_in)
    inp.register(Float, float_in)
    inp.register(Bytes, bytes_in)
    inp.register(List, list_in)
    inp.register(Dict, dict_in)
    inp.register(Array, ArrayIn(policy))
    inp.register((Ref, PyFunction), ref_in)
    inp.register(ForeignFunction, foreign_function_in)
    inp.register(ForeignRef, foreign_ref_in)
    inp.register(Error, error_in)
    inp.register(Raised, raised_in)
    inp.register((type(None), bool, int, float, str, bytes), identity_in)
    inp.register((list, tuple), raw_sequence_in)
    inp.register(dict, raw_dict_in)
