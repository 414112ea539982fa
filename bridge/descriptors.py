"""Descriptors: the language-neutral values that cross the boundary.

``py_to_foreign[lang]`` turns Python values into these; a client (R, JS) turns them into native
objects with one ``switch`` on ``kind``. A client sends foreign values the same way, and
``foreign_to_py[lang]`` turns them back into Python objects. Every descriptor is a frozen slotted
dataclass whose fields are plain Python values (ints, strs, tuples, memoryviews), so any FFI that
can read attributes (reticulate, Pyodide) can read them.

Kinds: null, na, bool, int, bigint, float, str, bytes, list, dict, array, ref, tensor_ref,
function, foreign_function, foreign_ref, error, raised.

:data:`WIRE_TAGS` is the one table of tags under which each kind travels on a host's wire (R's
tuples, JS's tagged JSON objects): both hosts and both clients read their tags from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "Array",
    "BigInt",
    "Bool",
    "Bytes",
    "Desc",
    "Dict",
    "Error",
    "Float",
    "ForeignFunction",
    "ForeignRef",
    "Int",
    "List",
    "NAValue",
    "Null",
    "PyFunction",
    "Raised",
    "Ref",
    "Str",
    "TensorRef",
    "WIRE_TAGS",
]


class Desc:
    """Base class of every descriptor; ``kind`` names the variant."""

    __slots__ = ()
    kind: ClassVar[str] = ""


@dataclass(frozen=True, slots=True)
class Null(Desc):
    """Python None; R NULL; JS null/undefined."""

    kind: ClassVar[str] = "null"


@dataclass(frozen=True, slots=True)
class NAValue(Desc):
    """A missing value of a given type (see ``na.py``): dtype is "logical", "int32", "float64"
    or "str" (R's NA, NA_integer_, NA_real_, NA_character_)."""

    dtype: str = "logical"
    kind: ClassVar[str] = "na"


@dataclass(frozen=True, slots=True)
class Bool(Desc):
    value: bool
    kind: ClassVar[str] = "bool"


@dataclass(frozen=True, slots=True)
class Int(Desc):
    """An integer that fits the host's native integer or number type (the language table
    decides: R integer, JS safe integer)."""

    value: int
    kind: ClassVar[str] = "int"


@dataclass(frozen=True, slots=True)
class BigInt(Desc):
    """An integer beyond the host's number type, for hosts with arbitrary-size integers
    (JS BigInt)."""

    value: int
    kind: ClassVar[str] = "bigint"


@dataclass(frozen=True, slots=True)
class Float(Desc):
    """An IEEE double, NaN and +/-inf included (NA is ``NAValue("float64")``, not a Float)."""

    value: float
    kind: ClassVar[str] = "float"


@dataclass(frozen=True, slots=True)
class Str(Desc):
    value: str
    kind: ClassVar[str] = "str"


@dataclass(frozen=True, slots=True)
class Bytes(Desc):
    value: bytes
    kind: ClassVar[str] = "bytes"


@dataclass(frozen=True, slots=True)
class List(Desc):
    """An ordered sequence (Python list or tuple; R list; JS Array)."""

    items: tuple[Any, ...]
    kind: ClassVar[str] = "list"


@dataclass(frozen=True, slots=True)
class Dict(Desc):
    """An ordered mapping with string keys (Python dict; R named list; JS object or Map)."""

    keys: tuple[str, ...]
    values: tuple[Any, ...]
    kind: ClassVar[str] = "dict"


@dataclass(frozen=True, slots=True, eq=False)
class Array(Desc):
    """An n-d array as raw memory plus layout, so a host can view it without a copy.

    ``buffer`` holds the bytes (any buffer-protocol object; the bridge produces flat ``uint8``
    memoryviews). Element ``idx`` lives at byte ``offset + sum(idx[k] * strides[k])``.
    ``strides`` may be None, meaning contiguous in ``order`` ("C" row-major, "F" column-major).
    ``dtype`` is one of bool (1 byte), logical (4-byte R logical: 0, 1, INT_MIN = NA), int8,
    int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64.
    ``mask`` (a bool Array of the same shape, True = missing) is for hosts without sentinels.
    ``tensor`` says the value was (or should become) a tensorbridge Tensor.
    """

    buffer: Any
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    offset: int = 0
    order: str = "C"
    readonly: bool = True
    tensor: bool = False
    mask: Array | None = None
    kind: ClassVar[str] = "array"

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True, slots=True)
class Ref(Desc):
    """A Python object that crossed by reference: ``id`` names it in the handle table.

    The foreign side owns one reference and must call ``release(id)`` (from a finalizer:
    ``release_deferred(id)``) when its proxy dies."""

    id: int
    type_name: str
    kind: ClassVar[str] = "ref"


@dataclass(frozen=True, slots=True)
class TensorRef(Desc):
    """A runtime tensor that crosses by reference (a ``Tensor`` object in the host), with its
    layout, so the host knows shape and dtype without a second call: ``id`` names it in the
    handle table (released as a :class:`Ref` is); ``backend`` is the backend holding its data
    (the JS client reads TF.js tensors directly; R does not need it)."""

    id: int
    shape: tuple[int, ...]
    dtype: str
    backend: str = ""
    kind: ClassVar[str] = "tensor_ref"


@dataclass(frozen=True, slots=True)
class PyFunction(Desc):
    """A Python callable, by reference; the host calls it through ``call_python``."""

    id: int
    type_name: str
    name: str
    doc: str = ""
    kind: ClassVar[str] = "function"


@dataclass(frozen=True, slots=True, eq=False)
class ForeignFunction(Desc):
    """A foreign function, made by a client.

    ``invoke(args, kwargs)`` takes descriptors (a list and a dict of str -> descriptor), runs the
    function in the host, and returns a descriptor, or ``Raised(error)`` when the foreign code
    failed. The bridge only calls ``invoke`` on the host's main thread. ``ref`` is the client's
    own token for the function (returned unchanged if the function travels back). ``release()``
    (optional) is called once, on the host's main thread, when Python drops the function (its
    :class:`ForeignCallable`), so the client can forget it. ``invoke_plain(args)`` (optional)
    is a fast path for calls without keyword arguments: it gets the Python arguments as they
    are and returns what ``invoke`` would, or ``NotImplemented`` to decline (then ``invoke``
    runs); a client offers it when its FFI takes plain values (numbers, strings) unconverted
    with the same result as the language's built-in converters."""

    lang: str
    invoke: Callable[[list[Any], dict[str, Any]], Any]
    name: str = ""
    ref: Any = None
    release: Callable[[], None] | None = None
    invoke_plain: Callable[[tuple[Any, ...]], Any] | None = None
    kind: ClassVar[str] = "foreign_function"


@dataclass(frozen=True, slots=True, eq=False)
class ForeignRef(Desc):
    """An opaque foreign object, made by a client. ``release()`` (optional) is called once, on
    the host's main thread, when Python drops its last reference."""

    lang: str
    ref: Any
    class_name: str = ""
    release: Callable[[], None] | None = None
    kind: ClassVar[str] = "foreign_ref"


@dataclass(frozen=True, slots=True, eq=False)
class Error(Desc):
    """An error of any language, serializable with :meth:`to_dict`.

    ``type`` is the class name, ``classes`` the class chain (Python MRO or R class vector),
    ``traceback`` one formatted frame per entry, oldest first; ``cause`` the chained error
    (``cause_kind``: "cause" for ``raise ... from``, "context" for implicit chaining).
    ``exception`` keeps the live Python exception (not serialized) so that a Python error that
    travels through a host and back is re-raised as the very same object."""

    language: str
    type: str
    message: str
    module: str = ""
    classes: tuple[str, ...] = ()
    traceback: tuple[str, ...] = ()
    cause: Error | None = None
    cause_kind: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    exception: BaseException | None = field(default=None, repr=False, compare=False)
    kind: ClassVar[str] = "error"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict (``exception`` is dropped; ``data`` must be JSON-able)."""
        return {
            "kind": self.kind,
            "language": self.language,
            "type": self.type,
            "message": self.message,
            "module": self.module,
            "classes": list(self.classes),
            "traceback": list(self.traceback),
            "cause": self.cause.to_dict() if self.cause is not None else None,
            "cause_kind": self.cause_kind,
            "data": dict(self.data),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Error:
        cause = d.get("cause")
        return cls(
            language=d["language"],
            type=d["type"],
            message=d["message"],
            module=d.get("module", ""),
            classes=tuple(d.get("classes", ())),
            traceback=tuple(d.get("traceback", ())),
            cause=cls.from_dict(cause) if cause else None,
            cause_kind=d.get("cause_kind", ""),
            data=dict(d.get("data", {})),
        )


@dataclass(frozen=True, slots=True)
class Raised(Desc):
    """The outcome of a call that raised: the receiver throws ``error`` natively."""

    error: Error
    kind: ClassVar[str] = "raised"


# The tag each kind travels under on a host's wire: the first element of R's tuples / the
# ``__tb__`` field of R's tagged lists, the ``"$"`` field of the JS client's JSON nodes. One table
# for both hosts; a host uses the tags its values need (a test checks that r-client/R/wire.R and
# js-client/src/wire.js use these and no others).
WIRE_TAGS: dict[str, str] = {
    # descriptors (kind -> tag)
    "array": "A",
    "bigint": "BI",
    "bytes": "B",
    "dict": "D",
    "float": "FL",  # a float JSON cannot hold (NaN, +-Infinity, -0)
    "list": "L",  # JS: a JSON array, untagged
    "na": "N",
    "ref": "R",
    "function": "F",
    "tensor_ref": "T",
    "foreign_function": "CB",
    "foreign_ref": "O",
    "error": "E",
    "raised": "X",
    # host values with no descriptor of their own
    "home": "H",  # an object a host holds by handle, going back to the side that owns it
    "custom": "CV",  # a value for a converter the host registered by name
    "member": "C",  # R: a module's function or class (called, not converted)
    "interrupt": "I",  # R: Ctrl-C while an R callback ran
    "warnings": "W",  # R: Python warnings travelling with a result
    "str_vector": "S",  # R: a character vector with NA positions
    "factor": "FA",  # R
    "data_frame": "DF",  # R
    "map": "M",  # JS: a Map (keys of any kind)
    "set": "ST",  # JS: a Set
    "sym": "SY",  # JS: input i of a program traced in JS (tb.grad of a JS function)
}
