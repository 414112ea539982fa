"""The JS client's Python side (bridge/js/host.py), driven from CPython with a fake JS half:
the wire, the tagged fast paths, handles, errors both ways, JS functions, user converters."""

from __future__ import annotations

import gc
import json
import math

import numpy as np
import pytest

import tensorbridge as tb
import tensorbridge.bridge as br
from tensorbridge.bridge.js import host as js_host
from tensorbridge.bridge.js.host import JsCallbackError, JsHost


@pytest.fixture
def host():
    out, inp = br.py_to_foreign["js"], br.foreign_to_py["js"]
    saved = dict(out._table), dict(inp._table)
    fake = FakeJs()
    h = JsHost(fake)
    fake.host = h
    yield h
    h.js = None
    out._publish(saved[0])
    inp._publish(saved[1])
    gc.collect()


class FakeJs:
    """The JS half: functions by id, answering in the tagged format."""

    def __init__(self) -> None:
        self.fns: dict[int, object] = {}
        self.released: list[int] = []
        self.released_objects: list[int] = []
        self.calls: list[tuple] = []
        self.host: JsHost | None = None

    def invoke(self, cb, *args):
        self.calls.append(("fast", cb, args))
        return self.fns[cb](*args)

    def invokeWire(self, cb, text, *side):
        self.calls.append(("wire", cb, json.loads(text), side))
        return self.fns[cb](text, *side)

    def release(self, cb):
        self.released.append(cb)

    def releaseObject(self, ident):
        self.released_objects.append(ident)


def wire(*args, **kwargs):
    """The wire text of call arguments (what the JS client's encoder makes)."""
    kw = {"$": "D", "k": list(kwargs), "v": list(kwargs.values())} if kwargs else None
    return json.dumps([list(args), kw])


def decode(host, r):
    """A tagged result -> Python data (what the JS decoder would make), releasing handles."""
    if isinstance(r, str):
        tag, body = r[0], r[1:]
        if tag == "s":
            return body
        if tag == "t":
            hid, dtype, backend, shape = body.split(" ")
            host.release(int(hid))
            return ("tensor", dtype, backend, tuple(int(d) for d in shape.split(",") if d))
        if tag == "e":
            return ("error", json.loads(body))
        node = json.loads(body)
        return node
    if isinstance(r, list):
        return (json.loads(r[0][1:]), r[1:])
    return r


# -- fast path and tags ---------------------------------------------------------------------------
def test_fast_call_primitives_and_tags(host):
    f = br.register(lambda *a: a[0])
    try:
        assert host.call(f, None, 0, 3) == 3
        assert host.call(f, None, 0, 2.5) == 2.5
        assert host.call(f, None, 0, True) is True
        assert host.call(f, None, 0, None) is None
        assert host.call(f, None, 0, "héllo") == "shéllo"
        # ints the FFI turns into JS numbers exactly cross as they are; from 2**53 - 1 on
        # (Pyodide already makes a BigInt of it) as a wire number or a BigInt node
        assert host.call(f, None, 0, 2**53 - 2) == 2**53 - 2
        assert host.call(f, None, 0, 2**53 - 1) == "j9007199254740991"
        assert host.call(f, None, 0, -(2**53 - 1)) == "j-9007199254740991"
        assert host.call(f, None, 0, 2**70) == 'j{"$":"BI","v":"1180591620717411303424"}'
        assert math.isnan(host.call(f, None, 0, math.nan))
        assert decode(host, host.call(f, None, 0, br.NA_REAL)) == {"$": "N", "d": "float64"}
    finally:
        br.release(f)


def test_fast_call_resolves_handles_by_mask(host):
    x = tb.tensor([1.0, 2.0])
    hx = br.register(x)
    try:
        r = host.call(None, "add", 0b01, hx, 1.0)
        assert decode(host, r) == ("tensor", "float32", "numpy", (2,))
        r = host.call(None, "add", 0b10, 1.0, hx)
        assert decode(host, r) == ("tensor", "float32", "numpy", (2,))
    finally:
        br.release(hx)


def test_tensor_results_are_handles_with_layout(host):
    r = host.call(None, "zeros", 0, 2, "float32")
    assert r.startswith("t")
    hid, dtype, backend, shape = r[1:].split(" ")
    t = br.resolve(int(hid))
    del t
    assert dtype == "float32" and backend == "numpy" and shape == "2"
    assert host.release(int(hid)) is True
    assert host.release(int(hid)) is False  # twice is fine


def test_ops_by_name_and_missing_op(host):
    r = host.call(None, "no_such_op", 0)
    err = decode(host, r)[1]
    assert err["type"] == "AttributeError" and "no op 'no_such_op'" in err["msg"]
    assert decode(host, host.call(None, "_private", 0))[1]["type"] == "AttributeError"


def test_user_converter_for_primitives_disables_the_fast_path(host):
    f = br.register(lambda a: a)
    try:
        host.inp.register(float, lambda v, cx: round(v))
        assert host.call(f, None, 0, 2.75) == 3
        assert host.call(f, None, 0, 4.75) == 5  # still (the table did not change since)
        host.inp.register(float, br.builtins_common.identity_in)
        assert host.call(f, None, 0, 2.75) == 2.75
        host.out.register(str, lambda v, cx: br.Str(v.upper()))
        assert decode(host, host.call(f, None, 0, "ab")) == "AB"
    finally:
        br.release(f)


# -- the wire ---------------------------------------------------------------------------------
def test_wire_arguments_every_kind(host):
    kinds = br.register(lambda *a, **k: [type(x).__name__ for x in a] + sorted(k))
    echo = br.register(lambda x: x)
    try:
        text = wire(
            1, 1.5, "s", True, None, [1, [2]], {"$": "D", "k": ["a"], "v": [1]},
            {"$": "BI", "v": str(2**70)}, {"$": "FL", "v": "-Infinity"},
            {"$": "M", "k": [1], "v": [2]}, {"$": "ST", "v": [1, 2]},
            {"$": "A", "i": 0, "d": "float32", "s": [2]}, {"$": "B", "i": 1},
            flag=True,
        )
        side = [np.array([1, 2], dtype=np.float32).tobytes(), b"xy"]
        got = decode(host, host.call_wire(kinds, None, text, *side))
        assert got == ["int", "float", "str", "bool", "NoneType", "list", "dict", "int", "float",
                       "dict", "set", "ndarray", "bytes", "flag"]
        # values come back through the registries
        r = decode(host, host.call_wire(echo, None, wire({"$": "M", "k": [1], "v": ["x"]})))
        assert r == {"$": "R", "id": r["id"], "t": "dict"}  # a dict with int keys: a handle
        br.release(r["id"])
        assert math.isnan(host.call_wire(echo, None, wire({"$": "FL", "v": "NaN"})))  # as is
        assert decode(host, host.call_wire(echo, None, wire([{"$": "FL", "v": "NaN"}]))) == [
            {"$": "FL", "v": "NaN"}]  # inside JSON: a marker
        node, side_out = decode(host, host.call_wire(
            echo, None, wire({"$": "A", "i": 0, "d": "int32", "s": [3]}),
            np.array([1, 2, 3], dtype=np.int32).tobytes()))
        assert node == {"$": "A", "i": 0, "d": "int32", "s": [3]}
        assert bytes(side_out[0]) == np.array([1, 2, 3], dtype=np.int32).tobytes()
        # a lone surrogate survives (ensure_ascii JSON)
        assert decode(host, host.call_wire(echo, None, wire("a\ud800"))) == "a\ud800"
    finally:
        br.release(kinds)
        br.release(echo)


def test_results_with_structure(host):
    f = br.register(lambda: {"a": [1, 2.5, None], "b": (True, "x"), "big": 2**60,
                             "inf": math.inf, "bytes": b"\x00\x01",
                             "arr": np.arange(6, dtype=np.int64).reshape(2, 3)})
    try:
        node, side = decode(host, host.call(f, None, 0))
        assert node["$"] == "D" and node["k"] == ["a", "b", "big", "inf", "bytes", "arr"]
        a, b, big, inf, byt, arr = node["v"]
        assert a == [1, 2.5, None] and b == [True, "x"]
        assert big == {"$": "BI", "v": str(2**60)} and inf == {"$": "FL", "v": "Infinity"}
        assert byt == {"$": "B", "i": 0} and bytes(side[0]) == b"\x00\x01"
        assert arr == {"$": "A", "i": 1, "d": "int64", "s": [2, 3]}
        assert bytes(side[1]) == np.arange(6, dtype=np.int64).tobytes()
    finally:
        br.release(f)


def test_non_contiguous_and_masked_arrays_cross_in_c_order(host):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
    d = br.to_foreign("js", a)
    text, side = js_host.encode_wire(host, d)
    node = json.loads(text)
    assert node["s"] == [3, 2]
    assert np.frombuffer(bytes(side[0]), dtype=np.float64).tolist() == a.ravel().tolist()
    m = np.ma.MaskedArray([1, 2, 3], mask=[False, True, False])
    text, side = js_host.encode_wire(host, br.to_foreign("js", m))
    node = json.loads(text)
    assert node["m"]["d"] == "bool" and bytes(side[1]) == b"\x00\x01\x00"
    back = br.from_foreign("js", js_host.decode_wire(host, text, side))
    assert back.mask.tolist() == [False, True, False]


# -- handles ----------------------------------------------------------------------------------
def test_handles_release_and_finalizer_batches(host):
    before = br.stats()["live"]
    r = host.import_module("math")
    node = decode(host, r)
    assert node["$"] == "R" and node["t"] == "module"
    assert br.stats()["live"] == before + 1
    assert host.get_attr(node["id"], "pi") == math.pi
    assert host.get_attr(node["id"], "sqrt.__name__") == "ssqrt"
    host.release_many(json.dumps([node["id"]]))
    assert br.stats()["live"] == before
    err = decode(host, host.get_attr(node["id"], "pi"))[1]
    assert err["type"] == "HandleError" and "was released" in err["msg"]
    assert "finalizer of the js client" in err["msg"]
    stats = decode(host, host.stats())
    assert stats["$"] == "D" and "live" in stats["k"] and "by_type" in stats["k"]


# -- errors both ways --------------------------------------------------------------------------
def test_python_error_reaches_js_with_type_message_traceback_and_cause(host):
    def boom():
        try:
            raise KeyError("inner")
        except KeyError as e:
            raise ValueError("outer") from e

    f = br.register(boom)
    try:
        kind, err = decode(host, host.call(f, None, 0))
        assert kind == "error" and err["lang"] == "python" and err["type"] == "ValueError"
        assert err["msg"] == "outer" and err["module"] == "builtins"
        assert "ValueError" in err["classes"][0] and any("boom" in fr for fr in err["tb"])
        assert err["cause"]["type"] == "KeyError" and err["ck"] == "cause"
        assert isinstance(err["pid"], int)
    finally:
        br.release(f)


def test_errors_recross_unchanged_both_ways(host):
    fake = host.js
    original = ValueError("from python")
    raiser = br.register(lambda: (_ for _ in ()).throw(original))
    try:
        _, perr = decode(host, host.call(raiser, None, 0))
        # JS throws that error back from a callback: Python gets the very same object
        fake.fns[1] = lambda *a: "e" + json.dumps(perr)
        apply = br.register(lambda f: f())
        r = host.call_wire(apply, None, wire({"$": "CB", "id": 1, "n": "thrower"}))
        _, back = decode(host, r)
        assert back["pid"] != perr["pid"] and back["type"] == "ValueError"
        # ... and re-raised as the original object inside Python
        seen = []

        def catch(f):
            try:
                f()
            except ValueError as e:
                seen.append(e)
            return len(seen)

        catcher = br.register(catch)
        assert host.call_wire(catcher, None, wire({"$": "CB", "id": 1, "n": "t"})) == 1
        assert seen[0] is original
        # a JS error: JsCallbackError in Python, unchanged descriptor back in JS
        jerr = {"$": "E", "lang": "js", "type": "RangeError", "msg": "bad", "classes":
                ["RangeError", "Error"], "tb": ["at f (x.js:1:1)"], "data": {"jid": 7}}
        fake.fns[2] = lambda *a: "e" + json.dumps(jerr)
        caught = []

        def catch_js(f):
            try:
                f(1)
            except JsCallbackError as e:
                caught.append(e)
                raise

        cj = br.register(catch_js)
        _kind, back = decode(host, host.call_wire(cj, None, wire({"$": "CB", "id": 2, "n": "g"})))
        e = caught[0]
        assert isinstance(e, br.ForeignError) and e.language == "js"
        assert e.foreign_class == "RangeError" and str(e) == "[js RangeError] bad"
        assert back["lang"] == "js" and back["type"] == "RangeError" and back["data"] == {
            "jid": 7}
        assert back["tb"] == ["at f (x.js:1:1)"]
        for h in (apply, catcher, cj):
            br.release(h)
    finally:
        br.release(raiser)
    gc.collect()


# -- JS functions ------------------------------------------------------------------------------
def test_js_functions_fast_and_wire_calls_and_release(host):
    fake = host.js
    fake.fns[5] = lambda *a: sum(a)
    fake.fns[6] = lambda text, *side: "j" + json.dumps({"$": "D", "k": ["n"], "v": [
        len(json.loads(text)[0])]})
    apply = br.register(lambda f, *a, **k: f(*a, **k))
    try:
        assert host.call_wire(apply, None, wire({"$": "CB", "id": 5, "n": "add"}, 1, 2.5)) == 3.5
        assert fake.calls[-1] == ("fast", 5, (1, 2.5))
        r = decode(host, host.call_wire(apply, None, wire({"$": "CB", "id": 6, "n": "w"}, [1],
                                                         {"$": "A", "i": 0, "d": "uint8",
                                                          "s": [2]}), b"\x01\x02"))
        assert r == {"$": "D", "k": ["n"], "v": [2]}
        kind, _cb, args, side = fake.calls[-1]
        assert kind == "wire" and args[0][0] == [1] and args[0][1]["$"] == "A"
        assert bytes(side[0]) == b"\x01\x02"
        gc.collect()
        assert 5 in fake.released and 6 in fake.released  # dropped by Python: JS forgets
        # a JS function going home is the same function id
        echo = br.register(lambda x: x)
        assert decode(host, host.call_wire(echo, None, wire({"$": "CB", "id": 9, "n": "f"}))) \
            == {"$": "CB", "id": 9}
        obj = decode(host, host.call_wire(echo, None, wire({"$": "O", "id": 4, "c": "Date"})))
        assert obj == {"$": "O", "id": 4}
        gc.collect()
        assert 4 in fake.released_objects
        br.release(echo)
    finally:
        br.release(apply)


def test_plain_fast_path_declines_what_converters_would_change(host):
    fake = host.js
    fake.fns[8] = lambda *a: 0
    f = br.from_foreign("js", host.wire.dec({"$": "CB", "id": 8, "n": "f"}, []))
    f(1, "s", None, True, 2.5)
    assert fake.calls[-1] == ("fast", 8, (1, "s", None, True, 2.5))  # as they are
    f(br.NA_REAL)  # NA is not a plain float: through the descriptors
    assert fake.calls[-1][0] == "wire"
    assert fake.calls[-1][2][0] == [{"$": "N", "d": "float64"}]
    host.out.register(float, lambda v, cx: br.Str(f"{v:.1f}"))  # a user's converter wins
    f(2.25)
    assert fake.calls[-1] == ("fast", 8, ("2.2",))
    f(x=1)  # keyword arguments: the wire
    assert fake.calls[-1][0] == "wire" and fake.calls[-1][2][1]["k"] == ["x"]


def test_async_js_results_are_awaitables(host):
    import asyncio

    class Promise:
        def __init__(self, value):
            self.value = value

        def then(self, *a):  # what makes it a JS promise for from_js
            raise AssertionError

        def __await__(self):
            yield from asyncio.sleep(0).__await__()
            return self.value

    host.js.fns[3] = lambda *a: Promise(a[0] * 2)
    host.js.fns[4] = lambda *a: Promise("e" + json.dumps({"$": "E", "lang": "js",
                                                           "type": "Error", "msg": "late"}))
    fc = br.from_foreign("js", host.wire.dec({"$": "CB", "id": 3, "n": "p"}, []))
    assert asyncio.run(fc(21)) == 42
    fe = br.from_foreign("js", host.wire.dec({"$": "CB", "id": 4, "n": "p"}, []))
    with pytest.raises(JsCallbackError, match="late"):
        asyncio.run(fe(1))
    # synchronous code using the pending result as a value gets a clear error, not a coroutine
    pending = fc(1)
    with pytest.raises(TypeError, match=r"returned a Promise.*async def"):
        pending + 1
    with pytest.raises(TypeError, match="returned a Promise"):
        float(pending)
    pending.close()


# -- user converters from JS -------------------------------------------------------------------
def test_register_converter_both_directions(host):
    from fractions import Fraction

    spec = {"$": "D", "k": ["name", "python", "fromPython", "toJs", "toPython"],
            "v": ["frac", "fractions.Fraction", "lambda f: [f.numerator, f.denominator]", True,
                  "lambda d: Fraction(*d)"]}
    assert host.register_converter(json.dumps(spec)) == "sfrac"
    assert "js converter 'frac'" in repr(br.py_to_foreign["js"])
    f = br.register(lambda: Fraction(3, 4))
    mul = br.register(lambda x: x * 2)
    try:
        assert decode(host, host.call(f, None, 0)) == {"$": "CV", "n": "frac", "v": [3, 4]}
        r = decode(host, host.call_wire(mul, None, wire({"$": "CV", "n": "frac", "v": [1, 3]})))
        assert r == {"$": "CV", "n": "frac", "v": [2, 3]}
        err = decode(host, host.call_wire(mul, None, wire({"$": "CV", "n": "nope", "v": 1})))[1]
        assert err["type"] == "ConversionError" and "nope" in err["msg"]
        host.unregister_converter("frac", "fractions.Fraction")
        node = decode(host, host.call(f, None, 0))
        assert node["$"] == "R" and node["t"] == "Fraction"
        br.release(node["id"])
    finally:
        br.release(f)
        br.release(mul)


def test_run_and_transform(host):
    assert host.run("a = 2\na * 21") == 42
    assert host.run("a = 3") is None
    _kind, err = decode(host, host.run("1/0"))
    assert err["type"] == "ZeroDivisionError"
    x = br.register(tb.tensor([[1.0, 2.0], [3.0, 4.0]]))
    try:  # value_and_grad of sum(w * w): the program JS traces for `w.mul(w).sum()`
        prog = {"$": "D", "k": ["nodes", "out"], "v": [[
            {"$": "D", "k": ["fn", "args"], "v": ["mul", [{"$": "SY", "i": 0},
                                                          {"$": "SY", "i": 0}]]},
            {"$": "D", "k": ["fn", "args"], "v": ["sum", [{"$": "SY", "i": 1}]]},
        ], {"$": "SY", "i": 2}]}
        r = host.transform("value_and_grad", json.dumps([[prog, [{"$": "H", "id": x}], None],
                                                         None]))
        node = decode(host, r)
        v, g = node
        assert v["$"] == "T" and g["$"] == "T" and g["s"] == [2, 2]
        assert br.resolve(v["id"]).item() == 30.0
        assert br.resolve(g["id"]).tolist() == [[2.0, 4.0], [6.0, 8.0]]
        br.release(v["id"])
        br.release(g["id"])
    finally:
        br.release(x)


def test_tensor_data_and_tensor_from(host):
    x = br.register(tb.tensor([[1.0, 2.0], [3.0, 4.0]], dtype="float64"))
    try:
        assert host.host_id(x) == -1  # not tfjs: JS gets the values as an Array
        node, side = decode(host, host.tensor_data(x))
        assert node == {"$": "A", "i": 0, "d": "float64", "s": [4]}
        assert np.frombuffer(bytes(side[0])).tolist() == [1.0, 2.0, 3.0, 4.0]
        r = host.tensor_from(wire({"$": "A", "i": 0, "d": "int32", "s": [4]}, [2, 2], "int32",
                                  "numpy"), np.array([1, 2, 3, 4], np.int32).tobytes())
        assert decode(host, r) == ("tensor", "int32", "numpy", (2, 2))
        assert decode(host, host.tensor_list(x)) == [[1.0, 2.0], [3.0, 4.0]]
    finally:
        br.release(x)


# -- the JS door's typed-array rule (issue 12): tb.tensor(typed) and typed arrays given to ops ---
@pytest.mark.parametrize(("fmt", "values", "dtype"), [
    ("b", [-128, 127], "int32"), ("B", [0, 255], "int32"), ("h", [-32768, 7], "int32"),
    ("H", [0, 65535], "int32"), ("i", [-5, 7], "int32"), ("I", [0, 4000000], "int64"),
    ("q", [-5, 7], "int64"), ("Q", [0, 7], "int64"), ("f", [0.5, -1.5], "float32"),
    ("d", [0.1, -1.5], "float64"),
])
def test_typed_arrays_make_tensors_by_one_rule(host, fmt, values, dtype):
    import array

    t = host.typed_tensor(memoryview(array.array(fmt, values)))
    assert t.dtype.name == dtype
    assert t.tolist() == values
    # an op given the typed array (the wire's Array node) makes the same tensor
    node = {"$": "A", "i": 0, "d": {"b": "int8", "B": "uint8", "h": "int16", "H": "uint16",
                                    "i": "int32", "I": "uint32", "q": "int64", "Q": "uint64",
                                    "f": "float32", "d": "float64"}[fmt], "s": [len(values)]}
    r = host.call_wire(None, "add", json.dumps([[node, 0], None]),
                       bytes(memoryview(array.array(fmt, values)).cast("B")))
    assert decode(host, r)[:2] == ("tensor", dtype)


def test_typed_arrays_out_of_range_and_uint8_sum(host):
    import array

    u8 = memoryview(array.array("B", [0, 1, 2, 255]))
    assert tb.sum(host.typed_tensor(u8)).item() == 258  # int32, never bool
    with pytest.raises(OverflowError, match="data"):
        host.typed_tensor(memoryview(array.array("Q", [2**64 - 1])))
    with pytest.raises(OverflowError, match="data"):
        host.typed_tensor(memoryview(array.array("d", [3e9])), "int32")


def test_posted_releases_are_pumped_where_there_are_no_threads(host, monkeypatch):
    """Without threads (Pyodide) releases of JS functions Python dropped are posted to the JS
    host's executor; the host runs them around each call from JS."""
    ex = br.dispatch.MainThreadExecutor("js-test")
    monkeypatch.setattr(host, "_executor", ex)
    monkeypatch.setattr(host, "_no_posts", ex._queue.empty)
    ex.post(host.js.release, (41,))
    assert host.js.released == []
    assert host.run("1 + 1") == 2
    assert host.js.released == [41]
    ex.close()
