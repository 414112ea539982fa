"""Data types and the promotion lattice.

The runtime has five dtypes. Promotion is defined here once, independently of any backend, so
that NumPy 1.x, NumPy 2.x, TensorFlow and TF.js all produce the same result dtype:

    bool < int32 < int64 < float32 < float64

* Two tensors promote to the larger of their dtypes.
* Python scalars are *weak*: they adopt the tensor's dtype when it is of the same or a higher
  kind (``float32 * 2.0 -> float32``, ``int32 + 1 -> int32``). A Python float meeting an integer
  or bool tensor gives the default float dtype (float32); a Python int meeting a bool tensor gives
  int32.
* Arithmetic on bool tensors computes in int32; true division of integers gives float32
  (float64 when an operand is int64), like TensorFlow.js.
* Tensors made from Python data default to float32 / int32 / bool; NumPy arrays keep their dtype
  (float16 and unsigned types are rejected with an error naming the dtype).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DType",
    "bool_",
    "float32",
    "float64",
    "int32",
    "int64",
    "as_dtype",
    "promote",
    "result_dtype",
    "DTYPES",
]


@dataclass(frozen=True, eq=False)
class DType:
    """A tensor element type. Compare with ``is`` or ``==``; print gives the name."""

    name: str
    itemsize: int
    kind: str  # "b" bool, "i" integer, "f" floating
    rank: int  # position in the promotion lattice
    # the struct/buffer-protocol code of one element (also a NumPy dtype string): what
    # memoryviews, array.array, NumPy and the clients' typed arrays agree on
    buffer_format: str

    @property
    def is_floating(self) -> bool:
        return self.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self.kind == "i"

    def __repr__(self) -> str:
        return f"tensorbridge.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (as_dtype, (self.name,))


bool_ = DType("bool", 1, "b", 0, "?")
int32 = DType("int32", 4, "i", 1, "i")
int64 = DType("int64", 8, "i", 2, "q")
float32 = DType("float32", 4, "f", 3, "f")
float64 = DType("float64", 8, "f", 4, "d")

DTYPES: dict[str, DType] = {d.name: d for d in (bool_, int32, int64, float32, float64)}
# The values each integer dtype holds (by name: also a backend's storage dtype, e.g. TF.js's)
INT_RANGE: dict[str, tuple[int, int]] = {"int32": (-(2**31), 2**31 - 1),
                                         "int64": (-(2**63), 2**63 - 1)}
_BY_FORMAT = {d.buffer_format: d for d in DTYPES.values()}
_BY_RANK = sorted(DTYPES.values(), key=lambda d: d.rank)
_ALIASES = {"bool_": bool_, "float": float32, "int": int32, "double": float64, "logical": bool_}


def as_dtype(value: object, argname: str = "dtype") -> DType:
    """Turn a name, a DType, a NumPy dtype or a Python type into a :class:`DType`."""
    if isinstance(value, DType):
        return value
    name = None
    if isinstance(value, str):
        name = value
    elif value is bool:
        return bool_
    elif value is int:
        return int32
    elif value is float:
        return float32
    else:
        name = str(getattr(value, "name", None) or getattr(value, "__name__", value))
    found = DTYPES.get(name) or _ALIASES.get(name)  # type: ignore[arg-type]
    if found is None:
        raise TypeError(
            f"{argname}: unknown dtype {value!r}; expected one of "
            f"{', '.join(DTYPES)} (or a NumPy/Python type of those)"
        )
    return found


def from_buffer_format(fmt: str, itemsize: int) -> DType | None:
    """The dtype of a buffer-protocol format (``memoryview.format``), None if unsupported.
    A platform ``long`` ("l") is int32 or int64 by its item size."""
    fmt = fmt.lstrip("@=<")
    if fmt == "l":
        return int64 if itemsize == 8 else int32
    return _BY_FORMAT.get(fmt)


def promote(a: DType, b: DType) -> DType:
    """The dtype two tensors of dtypes ``a`` and ``b`` compute in."""
    return a if a.rank >= b.rank else b


def weak_scalar_dtype(value: object) -> DType:
    """The dtype a Python scalar would have on its own (weakly typed)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int32
    return float32


def result_dtype(tensor_dtype: DType, scalar: object) -> DType:
    """Promotion of a tensor dtype with a weakly typed Python scalar."""
    sk = weak_scalar_dtype(scalar).kind
    if sk == "b" or sk == tensor_dtype.kind:
        return tensor_dtype
    if sk == "i":
        return int32 if tensor_dtype.kind == "b" else tensor_dtype
    # a float scalar
    return tensor_dtype if tensor_dtype.kind == "f" else float32


def arithmetic_dtype(dtype: DType) -> DType:
    """Arithmetic on bools computes in int32."""
    return int32 if dtype is bool_ else dtype


def true_divide_dtype(dtype: DType) -> DType:
    if dtype.kind == "f":
        return dtype
    return float64 if dtype is int64 else float32


def default_float() -> DType:
    return float32
