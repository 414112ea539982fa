"""The Python side of the JavaScript client (``js-client/``): Pyodide in Node or in a Web Worker.

The npm package talks to Python through one :class:`JsHost` (``install(js)`` makes it), which
stands on ``session("js")``: values cross as the bridge's descriptors through
``py_to_foreign["js"]`` / ``foreign_to_py["js"]``, Python objects held by JS are handles in the
bridge's handle table, errors cross as :class:`Error` descriptors. No NumPy and no threads are
needed (Pyodide offline has neither); NumPy arrays are used where NumPy is present.

Between JS and Python the descriptors travel as a *wire*: JSON text plus a *side* list of binary
buffers (typed arrays, bytes), so one FFI call (or one ``postMessage`` to a worker) carries a
whole value. A wire node is a JSON number, string, boolean, null or array (a ``List``), or an
object tagged by ``"$"`` with a tag from the bridge's one table (``descriptors.WIRE_TAGS``, which
the R host uses too):

=========  ================================================  ==================================
``$``      fields                                            descriptor
=========  ================================================  ==================================
``D``      ``k`` keys, ``v`` values                          ``Dict`` (str keys, ordered)
``FL``     ``v``: "NaN", "Infinity", "-Infinity", digits      ``Float`` that JSON cannot hold
``BI``     ``v``: decimal digits                             ``BigInt``
``B``      ``i``: side index                                 ``Bytes``
``A``      ``i`` side index, ``d`` dtype, ``s`` shape,        ``Array`` (C order, contiguous)
           ``t`` tensor?, ``m`` mask node
``N``      ``d`` dtype                                       ``NAValue``
``R``      ``id``, ``t`` type name                            ``Ref`` (a Python object by handle)
``F``      ``id``, ``t``, ``n`` name, ``doc``                 ``PyFunction``
``T``      ``id``, ``s`` shape, ``d`` dtype, ``b`` backend    ``TensorRef``
``H``      ``id``                                            a handle JS holds, going home
``CB``     ``id``, ``n`` name                                ``ForeignFunction`` (JS function)
``O``      ``id``, ``c`` class name                          ``ForeignRef`` (JS object)
``M``      ``k`` key nodes, ``v`` value nodes                :class:`JsMap` (a Map, any keys)
``ST``     ``v`` item nodes                                  :class:`JsSet`
``CV``     ``n`` converter name, ``v`` node                   :class:`Custom` (user converters)
``E``      ``lang type msg module classes tb cause ck data    ``Error``; ``pid``/``jid`` find the
           pid jid``                                         original Python / JS error object
``X``      ``e`` error node                                  ``Raised``
``SY``     ``i``                                             :class:`Sym` (traced grad input)
=========  ================================================  ==================================

Results of calls into Python are *tagged* so that the common ones need no JSON and no proxy:
``None``/``bool``/``int``/``float`` come back as themselves (the FFI converts them),
``"s..."`` is a string, ``"t<id> <dtype> <backend> <d0,d1,...>"`` a tensor handle,
``"j<json>"`` a wire value, ``"e<json>"`` a raised error, and ``["j<json>", buf0, ...]`` a wire
value with side buffers. Simple calls take a fast path: JS passes numbers, strings, booleans,
null and handle ids as they are (a bit mask says which are handle ids), and Python skips the
descriptor tree when the registered converters are the built-in ones — same result, no
allocation. The JS half (``js``, an object made by the client) provides ``invoke(id, *args)`` /
``invokeWire(id, text, *side)`` to call JS functions (tagged the same way), ``release(id)`` and
``releaseObject(id)``.

Typed arrays: ``tb.tensor(typed)`` and a typed array given to a runtime op (also inside a list,
or to ``tb.grad``) make the same tensor, by one rule (:meth:`JsHost.typed_tensor`: Uint8Array is
int32 as in TF.js, Float64Array float64 with a ``PrecisionWarning`` on tfjs). What the JS
client's ``tb.tensor`` fast path does not take goes to the runtime's ``tb.tensor``
(:meth:`JsHost.tensor_from`), whose errors name ``data``.

Callbacks: releases Python posts for JS functions and objects it dropped
(``bridge.callables``) are run before and after each call from JS (Pyodide has no other pump).
A JS function answering a Promise gives a :class:`JsPromise`: awaited by async Python, a clear
``TypeError`` when synchronous code uses it as a value. A JS error crossing back to JS carries
the Python frames it went through (``pytb``); an interrupt says so in its message.

Errors: a Python exception crossing to JS keeps a ``pid`` (a ring of the last 64 exceptions),
so when JS throws it back into Python the original exception object is raised again. A JS error
arrives as :class:`JsCallbackError` (a :class:`ForeignError`) whose descriptor carries the JS
error's ``jid``: crossing back to JS, the client finds the original JS error object.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import json
import math
import sys
import traceback as _tb
from collections import OrderedDict
from collections.abc import Coroutine
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar

import tensorbridge
from tensorbridge.runtime import Tensor

from ...runtime.backends.tfjs_backend import PrecisionWarning
from .. import builtins_common as _common
from .. import builtins_js as _bjs
from .. import dispatch
from ..arrays import _buffer_from_descriptor, array_to_descriptor
from ..builtins_common import tensor_buffer, tensor_ref
from ..builtins_js import JS_ARRAYS
from ..descriptors import (
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
from ..errors import ConversionError, ForeignError, error_to_descriptor
from ..handles import handles
from ..na import is_na_real
from ..registry import Context, Registry
from ..session import session

__all__ = [
    "Custom",
    "JsCallbackError",
    "JsHost",
    "JsMap",
    "JsPromise",
    "JsSet",
    "Sym",
    "decode_wire",
    "encode_wire",
    "install",
]


# -- JS-specific descriptors ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class JsMap(Desc):
    """A JS ``Map`` (keys of any kind, converted like values)."""

    keys: tuple[Any, ...]
    values: tuple[Any, ...]
    kind: ClassVar[str] = "map"


@dataclass(frozen=True, slots=True)
class JsSet(Desc):
    """A JS ``Set``."""

    items: tuple[Any, ...]
    kind: ClassVar[str] = "set"


@dataclass(frozen=True, slots=True)
class Custom(Desc):
    """A value converted by a converter registered from JS (``tb.registerConverter``):
    ``name`` picks the converter on the receiving side, ``value`` is its data."""

    name: str
    value: Any
    kind: ClassVar[str] = "custom"


@dataclass(frozen=True, slots=True)
class Sym(Desc):
    """Input ``index`` of a program traced in JS (``tb.grad`` of a JS function)."""

    index: int
    kind: ClassVar[str] = "sym"


class JsCallbackError(ForeignError):
    """An error thrown by JavaScript code that Python called (a callback, a JS object's
    method). Its descriptor is the JS error's: crossing back to JS it is that error again."""


class JsPromise(Coroutine):
    """What a JS function answered that is not a value yet: a JS ``Promise`` (an ``async`` JS
    function, or a page function answering through ``postMessage``). ``await`` it from async
    Python code; synchronous code that uses it as a value gets a ``TypeError`` saying so (never
    a bare coroutine in arithmetic)."""

    __slots__ = ("_coro", "_host", "_promise", "name")

    def __init__(self, host: JsHost, promise: Any, name: str = "") -> None:
        self._host = host
        self._promise = promise
        self._coro: Any = None  # made when awaited: one never awaited leaves nothing behind
        self.name = name

    def _awaiting(self) -> Any:
        if self._coro is None:
            self._coro = self._host._later(self._promise)
        return self._coro

    def __await__(self) -> Any:
        return self._awaiting().__await__()

    def send(self, value: Any) -> Any:
        return self._awaiting().send(value)

    def throw(self, *args: Any) -> Any:
        return self._awaiting().throw(*args)

    def close(self) -> None:
        if self._coro is not None:
            self._coro.close()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        fn = f"JS function {self.name!r}" if self.name else "a JS function"
        raise TypeError(
            f"{fn} returned a Promise (it is async, or runs on a page that answers through "
            f"postMessage): synchronous Python code cannot wait for it. Pass a synchronous JS "
            f"function, or call it from an `async def` Python function and `await` the result"
        )

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _refuse
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __neg__ = __pos__ = __abs__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __bool__ = __float__ = __int__ = __index__ = __len__ = __iter__ = _refuse
    __getitem__ = __contains__ = __call__ = _refuse

    def __repr__(self) -> str:
        return f"<pending result of JS function {self.name or '?'} (a Promise): await it>"


class _SymRef:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


# -- wire <-> descriptors ------------------------------------------------------------------------
_ENCODE_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode
_decode_json = json.JSONDecoder().decode
_ERROR_RING = 64  # Python exceptions JS may throw back (they keep their frames alive)
# ints Pyodide's FFI turns into JS numbers (it makes a BigInt of +-(2**53 - 1) already); others
# cross through the registry (int_to_js: a number up to MAX_SAFE_INTEGER, else a BigInt)
_FFI_INT = 2**53 - 2
_INTERRUPTED = ("interrupted: tb.interrupt() (or the page's interrupt buffer) stopped the Python "
                "code at its next check")


def _float_node(v: float) -> Any:
    if v != v:
        return {"$": "FL", "v": "NaN"}
    if v in (math.inf, -math.inf):
        return {"$": "FL", "v": "Infinity" if v > 0 else "-Infinity"}
    return v


def _c_bytes(d: Array) -> Any:
    """The bytes of an Array descriptor in C order, contiguous (zero copy when they are)."""
    if d.mask is not None:
        d = Array(d.buffer, d.dtype, d.shape, d.strides, d.offset, d.order, d.readonly)
    view = _buffer_from_descriptor(d, JS_ARRAYS)  # C-ordered memoryview, validated
    return view.cast("B") if view.ndim != 1 or view.format != "B" else view


def _json_safe(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_safe(v) for v in x]
    if isinstance(x, float):
        return x if math.isfinite(x) else repr(x)
    if x is None or isinstance(x, bool | int | str):
        return x
    return repr(x)


class _Wire:
    """Encoding and decoding of one host's wire (it owns the error rings and the JS half)."""

    def __init__(self, host: JsHost) -> None:
        self.host = host
        self.errors: OrderedDict[int, Error] = OrderedDict()  # pid -> Python error descriptor
        self.next_pid = 1

    # descriptors -> JSON-able nodes
    def enc(self, d: Any, side: list[Any]) -> Any:
        t = type(d)
        if t is Int or t is Str or t is Bool:
            return d.value
        if t is Float:
            return _float_node(d.value)
        if t is TensorRef:
            return {"$": "T", "id": d.id, "s": list(d.shape), "d": d.dtype, "b": d.backend}
        if t is List:
            return [self.enc(x, side) for x in d.items]
        if t is Dict:
            return {"$": "D", "k": list(d.keys), "v": [self.enc(x, side) for x in d.values]}
        if t is Null or d is None:
            return None
        if t is Ref:
            return {"$": "R", "id": d.id, "t": d.type_name}
        if t is PyFunction:
            return {"$": "F", "id": d.id, "t": d.type_name, "n": d.name, "doc": d.doc}
        if t is BigInt:
            return {"$": "BI", "v": str(d.value)}
        if t is Bytes:
            side.append(d.value)
            return {"$": "B", "i": len(side) - 1}
        if t is Array:
            side.append(_c_bytes(d))
            node: dict[str, Any] = {"$": "A", "i": len(side) - 1, "d": d.dtype, "s": list(d.shape)}
            if d.tensor:
                node["t"] = 1
            if d.mask is not None:
                node["m"] = self.enc(d.mask, side)
            return node
        if t is NAValue:
            return {"$": "N", "d": d.dtype}
        if t is Custom:
            return {"$": "CV", "n": d.name, "v": self.enc(d.value, side)}
        if t is JsMap:
            return {"$": "M", "k": [self.enc(k, side) for k in d.keys],
                    "v": [self.enc(v, side) for v in d.values]}
        if t is JsSet:
            return {"$": "ST", "v": [self.enc(v, side) for v in d.items]}
        if t is Sym:
            return {"$": "SY", "i": d.index}
        if isinstance(d, Error):
            return self.enc_error(d)
        if isinstance(d, Raised):
            return {"$": "X", "e": self.enc_error(d.error)}
        if isinstance(d, ForeignFunction) and d.lang == "js":
            return {"$": "CB", "id": d.ref}
        if isinstance(d, ForeignRef) and d.lang == "js":
            return {"$": "O", "id": d.ref}
        if isinstance(d, int | float | str | bool):  # raw values a user converter returned
            return _float_node(d) if isinstance(d, float) else d
        raise ConversionError(
            f"the js client cannot represent a {getattr(d, 'kind', type(d).__name__)!r} "
            f"descriptor (from a converter on py_to_foreign['js'])"
        )

    def enc_error(self, d: Error) -> dict[str, Any]:
        node: dict[str, Any] = {
            "$": "E", "lang": d.language, "type": d.type, "msg": d.message, "module": d.module,
            "classes": list(d.classes), "tb": list(d.traceback),
            "cause": self.enc_error(d.cause) if d.cause is not None else None,
            "ck": d.cause_kind, "data": _json_safe(d.data),
        }
        if d.exception is not None:
            pid = self.next_pid
            self.next_pid += 1
            self.errors[pid] = d
            if len(self.errors) > _ERROR_RING:
                self.errors.popitem(last=False)
            node["pid"] = pid
        return node

    # JSON-able nodes -> descriptors
    def dec(self, w: Any, side: list[Any]) -> Any:
        t = type(w)
        if t is int or t is str or t is float or t is bool or w is None:
            return w  # the FFI's own Python values (foreign_to_py takes them as they are)
        if t is list:
            return List(tuple(self.dec(x, side) for x in w))
        tag = w.get("$") if t is dict else None
        if tag == "H":
            return Ref(int(w["id"]), "")
        if tag == "D":
            return Dict(tuple(w["k"]), tuple(self.dec(x, side) for x in w["v"]))
        if tag == "FL":
            return Float(float(w["v"]))
        if tag == "A":
            mask = self.dec(w["m"], side) if w.get("m") is not None else None
            return Array(buffer=_side_bytes(side[w["i"]]), dtype=w["d"],
                         shape=tuple(int(n) for n in w["s"]), readonly=False,
                         tensor=bool(w.get("t")), mask=mask)
        if tag == "CB":
            return self.host.js_function(int(w["id"]), w.get("n") or "")
        if tag == "BI":
            return BigInt(int(w["v"]))
        if tag == "B":
            return Bytes(bytes(_side_bytes(side[w["i"]])))
        if tag == "SY":
            return Sym(int(w["i"]))
        if tag == "M":
            return JsMap(tuple(self.dec(k, side) for k in w["k"]),
                         tuple(self.dec(v, side) for v in w["v"]))
        if tag == "ST":
            return JsSet(tuple(self.dec(v, side) for v in w["v"]))
        if tag == "CV":
            return Custom(str(w["n"]), self.dec(w["v"], side))
        if tag == "O":
            return self.host.js_object(int(w["id"]), w.get("c") or "")
        if tag == "E":
            return self.dec_error(w)
        if tag == "X":
            return Raised(self.dec_error(w["e"]))
        if tag == "N":
            return NAValue(w.get("d", "logical"))
        if tag == "R":
            return Ref(int(w["id"]), w.get("t", ""))
        if tag == "F":
            return PyFunction(int(w["id"]), w.get("t", ""), w.get("n", ""), w.get("doc", ""))
        if tag == "T":
            return Ref(int(w["id"]), "Tensor")
        raise ConversionError(f"unknown wire node {w!r} from the js client")

    def dec_error(self, w: dict[str, Any]) -> Error:
        pid = w.get("pid")
        if pid is not None:
            known = self.errors.get(int(pid))
            if known is not None:
                return known  # a Python exception coming home: the original object
        cause = w.get("cause")
        return Error(
            language=str(w.get("lang", "js")),
            type=str(w.get("type", "Error")),
            message=str(w.get("msg", "")),
            module=str(w.get("module", "")),
            classes=tuple(w.get("classes") or ()),
            traceback=tuple(w.get("tb") or ()),
            cause=self.dec_error(cause) if cause else None,
            cause_kind=str(w.get("ck", "")),
            data=dict(w.get("data") or {}),
        )


_TYPED_FORMATS = {"f": "float32", "d": "float64", "b": "int8", "B": "uint8", "h": "int16",
                  "H": "uint16", "i": "int32", "I": "uint32", "q": "int64", "Q": "uint64",
                  "l": "int64", "L": "uint64"}
_TYPED_DTYPES = {"float32": "float32", "float64": "float64", "int8": "int32", "uint8": "int32",
                 "int16": "int32", "uint16": "int32", "int32": "int32", "uint32": "int64",
                 "int64": "int64", "uint64": "int64"}
_F64_MESSAGE = ("tfjs backend: TF.js has no float64; a Float64Array makes a float64 tensor "
                "stored and computed in float32 (0.1 -> 0.10000000149011612, 1e300 -> Infinity)")


def _true() -> bool:
    return True


def _warn_f64() -> None:
    import warnings


    warnings.warn(_F64_MESSAGE, PrecisionWarning, stacklevel=3)


def _side_bytes(item: Any) -> memoryview:
    """A side buffer from JS (a JsProxy of a typed array: one copy into the Wasm heap; or any
    buffer) as a flat byte memoryview."""
    to_memoryview = getattr(item, "to_memoryview", None)
    if to_memoryview is not None:
        item = to_memoryview()
    view = memoryview(item)
    return view.cast("B") if view.ndim != 1 or view.format != "B" else view


def encode_wire(host: JsHost, desc: Any) -> tuple[str, list[Any]]:
    """(JSON text, side buffers) of a descriptor (for tests and other transports)."""
    side: list[Any] = []
    return _ENCODE_JSON(host.wire.enc(desc, side)), side


def decode_wire(host: JsHost, text: str, side: list[Any] | tuple[Any, ...] = ()) -> Any:
    """The descriptor of a wire text with its side buffers."""
    return host.wire.dec(_decode_json(text), list(side))


# -- converters the JS client adds to the "js" tables --------------------------------------------
class TensorOut:
    """Tensor -> :class:`TensorRef` (by handle: the data stay in the backend's memory)."""

    def __call__(self, value: Any, cx: Context) -> TensorRef:
        return tensor_ref(value, backend=True)

    def __repr__(self) -> str:
        return "tensor_ref_out (by handle)"


class CustomOut:
    """A Python type -> :class:`Custom`, registered from JS (``tb.registerConverter``)."""

    def __init__(self, name: str, encode: Any) -> None:
        self.name = name
        self.encode = encode

    def __call__(self, value: Any, cx: Context) -> Custom:
        if self.encode is None:  # the JS decoder gets the object by handle
            return Custom(self.name, Ref(handles.register(value), type(value).__name__))
        return Custom(self.name, cx.convert(self.encode(value)))

    def __repr__(self) -> str:
        return f"js converter {self.name!r}"


class CustomIn:
    """:class:`Custom` -> Python, by the converter name JS registered."""

    def __init__(self) -> None:
        self.table: dict[str, Any] = {}

    def __call__(self, value: Custom, cx: Context) -> Any:
        fn = self.table.get(value.name)
        data = cx.convert(value.value)
        if fn is None:
            raise ConversionError(
                f"JS sent a value for converter {value.name!r}, which has no Python side: "
                f"register it with tb.registerConverter({{js: ..., toPython: ...}})"
            )
        return fn(data)

    def __repr__(self) -> str:
        return f"js converters by name ({', '.join(sorted(self.table)) or 'none'})"


def js_sequence_out(value: Any, cx: Context) -> Any:
    """list/tuple -> List; subclasses (namedtuple...) cross by handle, keeping their type."""
    if type(value) is list or type(value) is tuple:
        return _common.sequence_out(value, cx)
    return NotImplemented


def js_dict_out(value: Any, cx: Context) -> Any:
    """dict -> Dict; subclasses (Counter, OrderedDict...) cross by handle, keeping methods."""
    if type(value) is dict:
        return _common.dict_out(value, cx)
    return NotImplemented


def _map_in(value: JsMap, cx: Context) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for i, (k, v) in enumerate(zip(value.keys, value.values)):
        out[cx.convert(k, ("key", i))] = cx.convert(v, i)
    return out


def _set_in(value: JsSet, cx: Context) -> set[Any]:
    return {cx.convert(v, i) for i, v in enumerate(value.items)}


def _sym_in(value: Sym, cx: Context) -> _SymRef:
    return _SymRef(value.index)


def _tensor_ref_in(value: TensorRef, cx: Context) -> Any:
    return handles.resolve(value.id)


def js_error_in(value: Error, cx: Context) -> BaseException:
    """Error descriptor -> exception: the original Python one when it came home, a
    :class:`JsCallbackError` for JS errors, a :class:`ForeignError` otherwise."""
    if value.exception is not None:
        return value.exception
    if value.language == "js":
        return JsCallbackError.from_descriptor(value)
    return ForeignError.from_descriptor(value)


def js_raised_in(value: Raised, cx: Context) -> Any:
    raise js_error_in(value.error, cx)


# -- the host ------------------------------------------------------------------------------------
class JsHost:
    """What the JS client calls (see the module docs). ``js`` is the JS half (functions and
    objects of the host); ``namespace`` the globals of ``run()`` code."""

    def __init__(self, js: Any = None) -> None:
        self.js = js
        self.session = session("js")
        self.out: Registry = self.session.py_to_foreign
        self.inp: Registry = self.session.foreign_to_py
        self.wire = _Wire(self)
        self.tb = tensorbridge
        self.namespace: dict[str, Any] = {"tb": tensorbridge, "__name__": "__tensorbridge__"}
        self._ops: dict[str, Any] = {}
        self._paths: dict[str, list[str]] = {}
        self.custom_in = CustomIn()
        self.tensor_out = TensorOut()
        self._install_converters()

    def _install_converters(self) -> None:
        out, inp = self.out, self.inp
        out.register(Tensor, self.tensor_out)
        out.register((list, tuple), js_sequence_out)
        out.register(dict, js_dict_out)
        inp.register(TensorRef, _tensor_ref_in)
        inp.register(JsMap, _map_in)
        inp.register(JsSet, _set_in)
        inp.register(Sym, _sym_in)
        inp.register(Custom, self.custom_in)
        inp.register(Error, js_error_in)
        inp.register(Raised, js_raised_in)
        # what the fast paths may skip: the built-in converters of the primitive types
        self._prim_out = {type(None): _common.none_out, bool: _common.bool_out,
                          int: _bjs.int_to_js, float: _common.float_out}
        self._prim_in = _common.identity_in
        self._seen_in: Any = None
        self._fast_in_ok = True
        self._seen_out: Any = None
        self._kinds: dict[type, int] = {}
        self._entries = handles._entries  # (the table's dict is never replaced)
        self._executor: Any = None  # the JS host's executor where Python has no threads
        self._no_posts: Any = _true  # its queue's empty(): false when releases wait (cheap)

    def _fast_in(self) -> bool:
        """Whether JS primitives may skip ``foreign_to_py`` (their converters are built-in).
        Recomputed when a converter of ``foreign_to_py["js"]`` changes."""
        table = self.inp._table
        if table is not self._seen_in:
            lookup = self.inp.lookup
            self._fast_in_ok = all(
                lookup(t) is self._prim_in for t in (type(None), bool, int, float, str)
            ) and lookup(Ref) is _common.ref_in
            self._seen_in = table
        return self._fast_in_ok

    # -- JS objects seen from Python -----------------------------------------------------------
    def js_function(self, cb_id: int, name: str) -> ForeignFunction:
        return ForeignFunction("js", partial(self._invoke, cb_id, name=name), name, cb_id,
                               partial(self._release_js, "release", cb_id),
                               partial(self._invoke_plain, cb_id, name=name))

    def js_object(self, obj_id: int, class_name: str) -> ForeignRef:
        return ForeignRef("js", obj_id, class_name,
                          partial(self._release_js, "releaseObject", obj_id))

    def _release_js(self, what: str, ident: int) -> None:
        js = self.js
        if js is not None:
            getattr(js, what)(ident)

    @property
    def js(self) -> Any:
        return self._js

    @js.setter
    def js(self, js: Any) -> None:
        self._js = js
        # the JS half's functions, looked up once (each lookup through the FFI costs)
        self._js_invoke = getattr(js, "invoke", None)
        self._js_invoke_wire = getattr(js, "invokeWire", None)

    def _invoke(self, cb_id: int, args: list[Any], kwargs: dict[str, Any], name: str = "") -> Any:
        """ForeignFunction.invoke: descriptors in, descriptor (or FFI value) out."""
        if self._js is None:
            raise ForeignError("js", "Error", "the JS host is gone; cannot call a JS function")
        if not kwargs:
            raw = []
            for a in args:
                t = type(a)
                if (t is Int and -_FFI_INT <= a.value <= _FFI_INT) or t is Str or t is Bool \
                        or t is Float:
                    raw.append(a.value)
                elif t is Null:
                    raw.append(None)
                else:
                    break
            else:
                return self.from_js(self._js_invoke(cb_id, *raw), name)
        side: list[Any] = []
        enc = self.wire.enc
        node = [[enc(a, side) for a in args],
                {"$": "D", "k": list(kwargs), "v": [enc(v, side) for v in kwargs.values()]}
                if kwargs else None]
        return self.from_js(self._js_invoke_wire(cb_id, _ENCODE_JSON(node), *side), name)

    def _invoke_plain(self, cb_id: int, args: tuple[Any, ...], name: str = "") -> Any:
        """ForeignFunction.invoke_plain: numbers, strings, booleans and None go to JS as they
        are (the FFI converts them as the built-in converters would); else NotImplemented."""
        if self._js_invoke is None:
            return NotImplemented
        out_ok = self.out._table is self._seen_out
        kinds = self._kinds
        for a in args:
            t = type(a)
            k = kinds.get(t) if out_ok else None
            if k is None:
                k = self._kind(t)
                out_ok = True
            if k > 1 or (t is float and a != a and is_na_real(a)) or (
                    t is int and not -_FFI_INT <= a <= _FFI_INT):
                return NotImplemented
        return self.from_js(self._js_invoke(cb_id, *args), name)

    def from_js(self, r: Any, name: str = "") -> Any:
        """A tagged result from the JS half -> descriptor, FFI value, or an awaitable (a JS
        promise: the page is not cross-origin isolated, so the answer comes later)."""
        t = type(r)
        if r is None or t is int or t is float or t is bool:
            return r
        if t is str:
            tag, body = r[:1], r[1:]
            if tag == "s":
                return body
            if tag == "j":
                return self.wire.dec(_decode_json(body), [])
            if tag == "e":
                return Raised(self.wire.dec_error(_decode_json(body)))
            raise ConversionError(f"bad tagged value from the js client: {r[:40]!r}")
        if hasattr(r, "then"):  # a JS promise: awaitable, and refused as a value
            return JsPromise(self, r, name)
        if t.__name__ == "JsNull":
            return None
        items = list(r)  # [text, *side] (a JS array)
        text = items[0]
        if text[:1] == "e":
            return Raised(self.wire.dec_error(_decode_json(text[1:])))
        return self.wire.dec(_decode_json(text[1:]), items[1:])

    async def _later(self, promise: Any) -> Any:
        return self.inp.convert(self.from_js(await promise))

    # -- results --------------------------------------------------------------------------------
    def _kind(self, t: type) -> int:
        """How values of type ``t`` come back: 0 as they are (the FFI converts them), 1 as a
        "s" string, 2 as a "t" tensor, 3 through the registry. Cached per type until a
        converter of ``py_to_foreign["js"]`` changes."""
        table = self.out._table
        if table is not self._seen_out:
            self._kinds = {}
            self._seen_out = table
        conv = self.out.lookup(t)
        if conv is not None and conv is self._prim_out.get(t):
            k = 0
        elif t is str and conv is _bjs.str_to_js:
            k = 1
        elif conv is self.tensor_out:
            k = 2
        else:
            k = 3
        self._kinds[t] = k
        return k

    def result(self, value: Any) -> Any:
        """A Python value as a tagged result (see the module docs)."""
        t = type(value)
        k = self._kinds.get(t) if self.out._table is self._seen_out else None
        if k is None:
            k = self._kind(t)
        if k == 0:
            if t is int:
                if -_FFI_INT <= value <= _FFI_INT:
                    return value  # else as a wire number / BigInt (the FFI would make a BigInt)
            elif t is not float or value == value or not is_na_real(value):
                return value
        elif k == 1:
            return "s" + value
        elif k == 2:
            return "t%d %s %s %s" % (  # noqa: UP031 - the fastest formatting in Pyodide
                handles.register(value), value.dtype.name, value.backend.name,
                ",".join(map(str, value.shape)))
        elif inspect.iscoroutine(value) or isinstance(value, asyncio.Future | JsPromise):
            return asyncio.ensure_future(self._finish(value))
        try:
            desc = self.out.convert(value)
        except BaseException as exc:
            return self.error(exc)
        return self.tagged(desc)

    def tagged(self, desc: Any) -> Any:
        if type(desc) is Raised:
            return "e" + _ENCODE_JSON(self.wire.enc_error(desc.error))
        side: list[Any] = []
        try:
            text = "j" + _ENCODE_JSON(self.wire.enc(desc, side))
        except BaseException as exc:
            return self.error(exc)
        return [text, *side] if side else text

    def error(self, exc: BaseException) -> str:
        try:
            desc = self.out.convert(exc)
        except Exception:
            desc = None
        if not isinstance(desc, Error):  # a user converter must not turn errors into values
            desc = error_to_descriptor(exc)
        if isinstance(exc, KeyboardInterrupt) and not desc.message:
            desc = replace(desc, message=_INTERRUPTED)
        node = self.wire.enc_error(desc)
        if desc.language != "python" and exc.__traceback__ is not None:
            # a JS error that went through Python: its descriptor stays the JS error's (it finds
            # the original JS error again), and the Python frames it crossed come along
            node["pytb"] = _tb.format_tb(exc.__traceback__)
        return "e" + _ENCODE_JSON(node)

    async def _finish(self, awaitable: Any) -> Any:
        try:
            value = await awaitable
        except BaseException as exc:
            return self.error(exc)
        return self.result(value)

    # -- calls from JS --------------------------------------------------------------------------
    def _target(self, target: Any, attr: str | None) -> Any:
        if target is None:  # the runtime's namespace: tb.<op>
            fn = self._ops.get(attr)  # type: ignore[arg-type]
            if fn is None:
                fn = getattr(self.tb, attr, None) if attr and not attr.startswith("_") else None
                if fn is None:
                    raise AttributeError(f"tensorbridge has no op {attr!r}")
                self._ops[attr] = fn  # type: ignore[index]
            return fn
        obj = handles.resolve(target)
        return obj if attr is None else self._attr(obj, attr)

    def call(self, target: Any, attr: str | None, mask: int, *args: Any) -> Any:
        """Fast path: ``args`` are numbers, strings, booleans, None, or handle ids where bit i
        of ``mask`` is set."""
        if not self._no_posts():
            self.pump_posted()
        try:
            entries = self._entries
            if target is None:
                fn = self._ops.get(attr)  # type: ignore[arg-type]
                if fn is None:
                    fn = self._target(None, attr)
            else:
                e = entries.get(target)
                fn = e[0] if e is not None and e[1] else handles.resolve(target)
                if attr is not None:
                    fn = self._attr(fn, attr)
            if mask:
                args = list(args)  # type: ignore[assignment]
                for i in range(len(args)):
                    if mask >> i & 1:
                        e = entries.get(args[i])
                        args[i] = e[0] if e is not None and e[1] else handles.resolve(args[i])
            if not (self._fast_in_ok if self.inp._table is self._seen_in else self._fast_in()):
                conv = self.inp.convert  # a user converter for JS numbers/strings/...: use it
                args = tuple(a if mask >> i & 1 else conv(a) for i, a in enumerate(args))
            return self.result(fn(*args))
        except BaseException as exc:
            return self.error(exc)

    def _attr(self, obj: Any, attr: str) -> Any:
        path = self._paths.get(attr)
        if path is None:
            path = self._paths[attr] = attr.split(".")
        for name in path:
            obj = getattr(obj, name)
        return obj

    def call_wire(self, target: Any, attr: str | None, text: str, *side: Any) -> Any:
        """General path: ``text`` is the wire of ``[args, kwargs]``."""
        if not self._no_posts():
            self.pump_posted()
        out = self._call_wire(target, attr, text, side)
        if not self._no_posts():  # JS functions / objects the call's arguments held, dropped now
            self.pump_posted()
        return out

    def _call_wire(self, target: Any, attr: str | None, text: str, side: Any) -> Any:
        try:
            fn = self._target(target, attr)
            args, kwargs = self._decode_args(text, side)
            if target is None:  # a runtime op: typed arrays are tensors (JS door rules)
                args = [self._op_arg(a) for a in args]
                kwargs = {k: self._op_arg(v) for k, v in kwargs.items()}
            return self.result(fn(*args, **kwargs))
        except BaseException as exc:
            return self.error(exc)

    def pump_posted(self) -> None:
        """Run what Python posted for the JS host: releases of JS functions and objects Python
        dropped (``bridge.callables``; there is no other pump in Pyodide)."""
        ex = self._executor
        if ex is not None:
            ex.pump()

    def _decode_args(self, text: str, side: Any) -> tuple[list[Any], dict[str, Any]]:
        node = _decode_json(text)
        side = list(side)
        dec, conv = self.wire.dec, self.inp.convert
        args = [conv(dec(a, side)) for a in node[0]]
        kw = node[1]
        kwargs = {}
        if kw is not None:
            kwargs = {str(k): conv(dec(v, side)) for k, v in zip(kw["k"], kw["v"])}
        return args, kwargs

    def get_attr(self, target: Any, attr: str) -> Any:
        try:
            return self.result(self._target(target, attr))
        except BaseException as exc:
            return self.error(exc)

    def release(self, hid: Any) -> bool:
        return self.session.release(hid)

    def release_many(self, text: str) -> int:
        """Releases queued by JS finalizers: deferred (finalizer-safe), then applied."""
        for hid in _decode_json(text):
            self.session.release_deferred(hid)
        return handles.drain()

    def stats(self) -> Any:
        if not self._no_posts():
            self.pump_posted()
        return self.result(self.session.stats())

    def import_module(self, name: str) -> Any:
        try:
            return self.result(importlib.import_module(name))
        except BaseException as exc:
            return self.error(exc)

    def run(self, code: str) -> Any:
        """Run Python source in :attr:`namespace`; the value of a final expression is the
        result (like Pyodide's ``runPython``)."""
        if not self._no_posts():
            self.pump_posted()
        out = self._run(code)
        if not self._no_posts():  # what the code dropped
            self.pump_posted()
        return out

    def _run(self, code: str) -> Any:
        try:
            tree = ast.parse(code, "<tensorbridge>", "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            ns = self.namespace
            exec(compile(tree, "<tensorbridge>", "exec"), ns)
            value = eval(compile(last, "<tensorbridge>", "eval"), ns) if last else None
            return self.result(value)
        except BaseException as exc:
            return self.error(exc)

    def memory(self) -> Any:
        return self.result(self.tb.memory())

    # -- tensors --------------------------------------------------------------------------------
    def adopt(self, backend: str, host_id: int, dtype: str) -> Any:
        """A tensor over a host tensor JS made (one copy of a TypedArray into TF.js)."""
        try:
            if dtype == "float64" and backend == "tfjs":
                _warn_f64()
            return self.result(self.tb.get_backend(backend).adopt(host_id, dtype))
        except BaseException as exc:
            return self.error(exc)

    def tensor_from(self, text: str, *side: Any) -> Any:
        """tb.tensor(data, shape, dtype, backend) of the JS client, for what its fast path does
        not take: typed arrays (JS rules: :meth:`typed_tensor`), and any other value, which
        the runtime's ``tb.tensor`` takes or refuses (ragged lists, strings, objects, null,
        integers out of range raise errors naming ``data``). ``shape`` may be None."""
        try:
            (data, shape, dtype, backend), _ = self._decode_args(text, side)
            t = type(data)
            if t is memoryview or (t.__module__ == "numpy" and t.__name__ == "ndarray"):
                out = self.typed_tensor(data, dtype, backend)
            else:
                out = self.tb.tensor(data, dtype=dtype, backend=backend)
            if shape is not None and tuple(out.shape) != tuple(shape):
                out = self.tb.reshape(out, tuple(shape))
            return self.result(out)
        except BaseException as exc:
            return self.error(exc)

    def typed_tensor(self, data: Any, dtype: Any = None, backend: Any = None) -> Any:
        """A tensor from a JS typed array (a memoryview here, or a NumPy array where NumPy is):
        the JS door's rule, the same for ``tb.tensor(typed)`` and a typed array given to an op.
        Float32Array -> float32; Float64Array -> float64 (a ``PrecisionWarning`` on tfjs, which
        stores it as float32); Int8/Int16/Int32/Uint8/Uint8Clamped/Uint16Array -> int32 (as
        TF.js for Int32/Uint8: never bool); Uint32/BigInt64/BigUint64Array -> int64. A value
        that does not fit the dtype (or its storage) raises ``OverflowError``."""
        view = memoryview(data)
        fmt = view.format.lstrip("@=<")
        src = _TYPED_FORMATS.get(fmt)
        if src is None:
            raise TypeError(f"data: a typed array of format {view.format!r} cannot be a tensor")
        dt = dtype if dtype is not None else _TYPED_DTYPES[src]
        shape = tuple(view.shape or ())
        flat = view.cast("B").cast(fmt).tolist() if view.nbytes else []
        be = self.tb.get_backend(backend)
        if be.name == "tfjs":
            if str(dt) == "float64":
                _warn_f64()
            elif str(dt) == "int64" and flat and not -(2**31) <= min(flat) <= max(flat) < 2**31:
                bad = next(v for v in flat if not -(2**31) <= v < 2**31)
                raise OverflowError(f"data: {bad} does not fit in int32, the storage of int64 "
                                    f"on TF.js; pass a Float64Array or split the values")
        t = self.tb.tensor(flat, dtype=dt, backend=backend)
        return t if tuple(t.shape) == shape else self.tb.reshape(t, shape)

    def _op_arg(self, a: Any) -> Any:
        """An op's argument: typed arrays (also inside lists) become tensors."""
        t = type(a)
        if t is memoryview or (t.__module__ == "numpy" and t.__name__ == "ndarray"):
            return self.typed_tensor(a)
        if t is list and any(type(x) is memoryview or type(x) is list for x in a):
            return [self._op_arg(x) for x in a]
        return a

    def host_id(self, hid: int) -> int:
        """The TF.js host id of a tfjs tensor (JS reads its data directly), else -1."""
        t = handles.resolve(hid)
        try:
            return t.backend.host_id(t) if t.backend.name == "tfjs" else -1
        except Exception:  # no value to read (a lazy array): tensor_data reports it as an error
            return -1

    def tensor_data(self, hid: int) -> Any:
        """A tensor's values as an Array descriptor (one copy), for backends JS cannot read."""
        try:
            t = handles.resolve(hid)
            d = array_to_descriptor(tensor_buffer(t), JS_ARRAYS)
            if d is NotImplemented:
                raise ConversionError(f"no JS typed array holds a {t.dtype.name} tensor")
            return self.tagged(replace(d, shape=(d.size,), strides=None))  # flat values
        except BaseException as exc:
            return self.error(exc)

    def tensor_list(self, hid: int) -> Any:
        try:
            return self.result(handles.resolve(hid).tolist())
        except BaseException as exc:
            return self.error(exc)

    # -- programs: JS functions traced into op lists (tb.grad of a JS function) ----------------
    _METHODS: ClassVar[dict[str, str]] = {
        "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "pow": "power",
        "neg": "negative", "matmul": "matmul", "T": "transpose",
    }

    def _run_program(self, prog: dict[str, Any], inputs: tuple[Any, ...]) -> Any:
        env = list(inputs)

        def ref(a: Any) -> Any:
            if isinstance(a, _SymRef):
                return env[a.index]
            if type(a) is memoryview:  # a typed array in the traced program
                return self.typed_tensor(a)
            if isinstance(a, list):
                return [ref(x) for x in a]
            if isinstance(a, dict):
                return {k: ref(v) for k, v in a.items()}
            return a

        for node in prog["nodes"]:
            fn = node["fn"]
            if fn == "$call":
                fn = node["target"]
            else:
                fn = getattr(self.tb, self._METHODS.get(fn, fn))
            env.append(fn(*ref(node["args"]), **ref(node.get("kwargs") or {})))
        return ref(prog["out"])

    def transform(self, kind: str, text: str, *side: Any) -> Any:
        """grad / value_and_grad of a traced program: wire of [program, args, argnums]."""
        if not self._no_posts():
            self.pump_posted()
        out = self._transform(kind, text, side)
        if not self._no_posts():
            self.pump_posted()
        return out

    def _transform(self, kind: str, text: str, side: Any) -> Any:
        try:
            (prog, args, argnums), _ = self._decode_args(text, side)
            args = [self._op_arg(a) for a in args]  # typed arrays are tensors, as in ops
            nargs = len(args)

            def f(*xs: Any) -> Any:
                return self._run_program(prog, xs[:nargs])

            nums = tuple(argnums) if argnums is not None else 0
            if kind == "grad":
                return self.result(self.tb.grad(f, argnums=nums)(*args))
            if kind == "value_and_grad":
                v, g = self.tb.value_and_grad(f, argnums=nums)(*args)
                return self.result([v, g])
            return self.result(f(*args))
        except BaseException as exc:
            return self.error(exc)

    # -- converters registered from JS ----------------------------------------------------------
    def register_converter(self, text: str) -> Any:
        """``tb.registerConverter``: wire of {name, python, fromPython, toJs, toPython}:
        ``python`` a qualified type name; ``fromPython`` / ``toPython`` Python source of a
        function or a handle to a callable (or None); ``toJs``: JS decodes values of this
        converter (so Python -> JS is on)."""
        try:
            spec = self.inp.convert(self.wire.dec(_decode_json(text), []))
            name = str(spec["name"])
            pytype = spec.get("python")
            scope = self._scope(pytype)
            if pytype and spec.get("toJs"):
                self.out.register(pytype, CustomOut(name, self._callable(spec.get("fromPython"),
                                                                         scope)))
            if spec.get("toPython") is not None:
                to_python = self._callable(spec.get("toPython"), scope)
                table = dict(self.custom_in.table)
                table[name] = to_python
                self.custom_in.table = table
            return self.result(name)
        except BaseException as exc:
            return self.error(exc)

    def unregister_converter(self, name: str, python: str | None) -> Any:
        if python:
            fn = self.out._table.get(python)
            if isinstance(fn, CustomOut) and fn.name == name:
                self.out.unregister(python)
        table = dict(self.custom_in.table)
        table.pop(name, None)
        self.custom_in.table = table
        return None

    def _scope(self, pytype: str | None) -> dict[str, Any]:
        scope = dict(self.namespace)
        if pytype:
            module, _, qual = pytype.rpartition(".")
            try:
                mod = importlib.import_module(module)
            except ImportError:
                return scope
            scope[module.split(".")[0]] = sys.modules[module.split(".")[0]]
            obj: Any = mod
            try:
                for part in qual.split("."):
                    obj = getattr(obj, part)
                scope[qual.split(".")[-1]] = obj
            except AttributeError:
                pass
        return scope

    @staticmethod
    def _callable(spec: Any, scope: dict[str, Any]) -> Any:
        if spec is None or callable(spec):
            return spec
        if isinstance(spec, str):
            fn = eval(compile(spec, "<converter>", "eval"), scope)
            if not callable(fn):
                raise TypeError(f"converter source {spec!r} is not a function")
            return fn
        raise TypeError(f"a converter function must be Python source or a callable, not {spec!r}")


_HOST: JsHost | None = None


def install(js: Any = None) -> JsHost:
    """Make (or return) the process's :class:`JsHost`, with ``js`` as its JS half. Where
    Python has no threads (Pyodide) the calling thread is registered as the JS host's main
    thread, so ``session("js").run`` runs jobs inline with a cancellation token (interrupts:
    Pyodide's interrupt buffer raises KeyboardInterrupt, the host's interrupt)."""
    global _HOST
    if _HOST is None:
        _HOST = JsHost(js)
        if not dispatch.THREADS:
            _HOST._executor = _HOST.session.register_host()
            _HOST._no_posts = _HOST._executor._queue.empty
    elif js is not None:
        _HOST.js = js
    return _HOST
