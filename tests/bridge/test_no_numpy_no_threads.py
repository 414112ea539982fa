"""The bridge where Pyodide runs it: without NumPy (arrays as memoryviews) and without threads
(``run`` inline, callbacks direct). In-process tests drive the NumPy-free array path directly
(``numpy=False``, memoryview inputs) and the single-threaded dispatch (``dispatch.THREADS``);
subprocesses import the bridge with ``sys.modules["numpy"] = None`` and with thread starts
failing, as in Pyodide."""

from __future__ import annotations

import array
import json
import struct
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tensorbridge.bridge as br
from tensorbridge.bridge import dispatch
from tensorbridge.bridge.arrays import array_from_descriptor, array_to_descriptor
from tensorbridge.bridge.builtins_js import JS_ARRAYS
from tensorbridge.bridge.builtins_r import R_ARRAYS


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


# -- arrays without NumPy (in process) ----------------------------------------------------------
FORMATS = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
           "int64": "q", "uint64": "Q", "float32": "f", "float64": "d"}


@pytest.mark.parametrize("dtype", sorted(FORMATS))
def test_memoryviews_round_trip_every_dtype_js(dtype):
    values = [0, 1, 2, 3, 4, 5] if dtype[0] in "iu" else [0.5, -1.0, 2.25, 3.0, 4.0, 5.0]
    mv = memoryview(array.array(FORMATS[dtype], values)).cast("B").cast(FORMATS[dtype], [2, 3])
    d = array_to_descriptor(mv, JS_ARRAYS)
    assert (d.dtype, d.shape, d.order, d.strides) == (dtype, (2, 3), "C",
                                                      (3 * mv.itemsize, mv.itemsize))
    assert d.buffer.obj is mv.obj  # zero copy
    back = array_from_descriptor(d, JS_ARRAYS, numpy=False)
    assert isinstance(back, memoryview) and back.shape == (2, 3)
    assert back.tolist() == [values[:3], values[3:]]
    # and NumPy, where present, reads the same memory the same way
    assert np.asarray(array_from_descriptor(d, JS_ARRAYS)).tolist() == back.tolist()


def test_bool_0d_and_empty():
    b = memoryview(bytes([1, 0, 1])).cast("?")
    d = array_to_descriptor(b, JS_ARRAYS)
    assert d.dtype == "bool" and array_from_descriptor(d, JS_ARRAYS, numpy=False).tolist() == [
        True, False, True]
    zero_d = memoryview(struct.pack("d", 2.5)).cast("d", [])
    d0 = array_to_descriptor(zero_d, JS_ARRAYS)
    back = array_from_descriptor(d0, JS_ARRAYS, numpy=False)
    assert d0.shape == () and back.shape == () and back.tolist() == 2.5
    empty = br.Array(buffer=b"", dtype="float64", shape=(0, 3))
    e = array_from_descriptor(empty, JS_ARRAYS, numpy=False)
    assert e.tolist() == [] and e.format == "d"  # flat: a memoryview has no (0, 3) shape


def test_r_policy_casts_and_column_major_without_numpy():
    m = memoryview(array.array("f", [1, 2, 3, 4, 5, 6])).cast("B").cast("f", [2, 3])
    d = array_to_descriptor(m, R_ARRAYS)
    assert d.dtype == "float64" and d.order == "F" and d.strides == (8, 16)
    assert struct.unpack("6d", bytes(d.buffer)) == (1, 4, 2, 5, 3, 6)  # column-major
    back = array_from_descriptor(d, R_ARRAYS, numpy=False)  # arrives C-ordered (a copy)
    assert back.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert np.asarray(array_from_descriptor(d, R_ARRAYS)).tolist() == back.tolist()
    small = array_to_descriptor(memoryview(array.array("b", [-1, 2])), R_ARRAYS)
    assert small.dtype == "int32" and struct.unpack("2i", bytes(small.buffer)) == (-1, 2)
    logical = array_to_descriptor(memoryview(bytes([1, 0])).cast("?"), R_ARRAYS)
    assert logical.dtype == "logical" and struct.unpack("2i", bytes(logical.buffer)) == (1, 0)
    assert array_from_descriptor(logical, R_ARRAYS, numpy=False).tolist() == [True, False]
    clash = array_to_descriptor(memoryview(array.array("i", [br.INT_MIN, 1])), R_ARRAYS)
    assert clash.dtype == "float64"  # a real INT_MIN would read as NA in R
    with pytest.raises(br.ConversionError, match=r"exactly"):
        array_to_descriptor(memoryview(array.array("q", [2**60])), R_ARRAYS)


def test_strided_descriptors_are_gathered_and_needs_numpy_errors():
    buf = array.array("d", range(12))
    strided = br.Array(buffer=memoryview(buf).cast("B"), dtype="float64", shape=(3, 2),
                       strides=(32, 16), offset=8)
    got = array_from_descriptor(strided, JS_ARRAYS, numpy=False)
    want = np.ndarray((3, 2), np.float64, np.frombuffer(buf), 8, (32, 16)).tolist()
    assert got.tolist() == want
    with pytest.raises(br.ConversionError, match="does not fit"):
        array_from_descriptor(br.Array(b"\x00" * 8, "float64", (2,)), JS_ARRAYS, numpy=False)
    na = br.Array(struct.pack("2i", br.INT_MIN, 1), "int32", (2,))
    with pytest.raises(br.ConversionError, match=r"missing values \(NA\).*NumPy"):
        array_from_descriptor(na, R_ARRAYS, numpy=False)
    masked = br.Array(b"\x00" * 8, "int32", (2,), mask=br.Array(b"\x01\x00", "bool", (2,)))
    with pytest.raises(br.ConversionError, match=r"mask.*NumPy"):
        array_from_descriptor(masked, JS_ARRAYS, numpy=False)
    ro = array_from_descriptor(br.Array(b"\x00" * 8, "float64", (1,)), JS_ARRAYS, numpy=False)
    assert ro.readonly
    rw = array_from_descriptor(br.Array(bytearray(8), "float64", (1,), readonly=False),
                               JS_ARRAYS, numpy=False)
    assert not rw.readonly


def test_buffers_convert_through_the_registry():
    d = br.to_foreign("js", array.array("h", [1, -2]))
    assert d.dtype == "int16" and d.shape == (2,)
    d = br.to_foreign("js", memoryview(b"ab"))
    assert isinstance(d, br.Array) and d.dtype == "uint8"
    assert br.to_foreign("js", b"ab") == br.Bytes(b"ab")  # bytes stay bytes


# -- the whole bridge without NumPy (subprocess) ------------------------------------------------
def test_bridge_imports_and_converts_without_numpy():
    out = _run("""
        import sys, json, array
        sys.modules["numpy"] = None
        import tensorbridge.bridge as br
        from tensorbridge.bridge.js import host as js_host
        assert "numpy" not in [m.split(".")[0] for m in sys.modules if sys.modules[m]]
        table = repr(br.py_to_foreign["js"])
        d = br.to_foreign("js", [1, 2.5, "x", array.array("d", [1.5, 2.5])])
        back = br.from_foreign("js", d)
        arr = back[3]
        m = memoryview(array.array("f", [1, 2, 3, 4])).cast("B").cast("f", [2, 2])
        r = br.to_foreign("r", m)
        rback = br.from_foreign("r", r)

        class FakeTensor:  # a tensor of a backend without NumPy (tfjs): values via tolist()
            shape = (2, 2)
            class dtype: name = "float32"
            def numpy(self): raise ImportError("no numpy")
            def tolist(self): return [[1.0, 2.0], [3.0, 4.0]]
        from tensorbridge.bridge.builtins_common import tensor_buffer
        tb_view = tensor_buffer(FakeTensor())

        class Js:
            def invoke(self, cb, *a): return sum(a)
            def release(self, cb): pass
        host = js_host.JsHost(Js())
        kinds = br.register(lambda *a: [type(x).__name__ + str(getattr(x, "shape", "")) for x in a])
        text = json.dumps([[{"$": "A", "i": 0, "d": "float32", "s": [2]},
                            {"$": "CB", "id": 1, "n": "f"}], None])
        got = host.call_wire(kinds, None, text, array.array("f", [1, 2]).tobytes())
        apply = br.register(lambda f: f(1, 2))
        called = host.call_wire(apply, None, json.dumps([[{"$": "CB", "id": 1}], None]))
        print(json.dumps([("numpy.ndarray" in table), type(arr).__name__, arr.tolist(),
                          rback.tolist(), r.dtype, tb_view.tolist(), got, called,
                          "numpy" in sys.modules and sys.modules["numpy"] is not None]))
    """)
    assert json.loads(out) == [
        True, "memoryview", [1.5, 2.5], [[1.0, 2.0], [3.0, 4.0]], "float64",
        [[1.0, 2.0], [3.0, 4.0]], 'j["memoryview(2,)","ForeignCallable"]', 3, False,
    ]


# -- without threads ----------------------------------------------------------------------------
@pytest.fixture
def no_threads(monkeypatch):
    monkeypatch.setattr(dispatch, "THREADS", False)
    br.define_language("nothreads", like="js")
    ex = br.register_host("nothreads", poll_interval=0.0)
    yield ex
    br.unregister_host("nothreads")


def test_run_is_inline_with_a_token_and_callbacks_are_direct(no_threads):
    import threading

    main = threading.get_ident()
    seen = []

    def host_fn(x):
        seen.append(threading.get_ident())
        return x * 2

    cb = br.ForeignCallable(br.ForeignFunction("nothreads", lambda a, k: br.Int(
        host_fn(a[0].value))))
    before = threading.active_count()

    def job():
        assert br.current_token() is not None
        br.check_cancelled()
        return cb(21)

    assert no_threads.run(job) == 42
    assert seen == [main] and threading.active_count() == before
    assert br.current_token() is None  # unbound after the job


def test_inline_run_timeout_and_interrupt_at_safe_points(no_threads):
    def slow():
        while True:
            time.sleep(0.001)
            br.check_cancelled()

    with pytest.raises(br.DispatchTimeoutError, match=r"did not finish within 0\.05"):
        no_threads.run(slow, timeout=0.05)
    flags = iter([False, False, True])
    no_threads.poll_interrupt = lambda: next(flags)
    with pytest.raises(KeyboardInterrupt):
        no_threads.run(slow)
    no_threads.poll_interrupt = None

    def interrupted():
        raise KeyboardInterrupt  # what Pyodide's interrupt buffer raises

    no_threads.interrupt = lambda: RuntimeError("host interrupt")
    with pytest.raises(RuntimeError, match="host interrupt"):
        no_threads.run(interrupted)
    with pytest.raises(ValueError, match="plain"):
        no_threads.run(lambda: (_ for _ in ()).throw(ValueError("plain")))


def test_session_run_and_threadless_import():
    out = _run("""
        import sys, types, threading, json
        sys._emscripten_info = types.SimpleNamespace(pthreads=False)  # as in Pyodide
        def no_start(self):
            raise RuntimeError("can't start new thread")
        threading.Thread.start = no_start
        sys.modules["numpy"] = None
        import tensorbridge.bridge as br
        from tensorbridge.bridge import dispatch
        s = br.session("js")
        s.register_host()
        calls = []
        f = br.ForeignCallable(br.ForeignFunction("js", lambda a, k: calls.append(a) or br.Int(7)))
        def job(n):
            br.check_cancelled()
            return [f(i) for i in range(n)]
        result = s.run(job, (3,))
        try:
            s.run(lambda: [br.check_cancelled() for _ in iter(int, 1)], timeout=0.05)
        except br.DispatchTimeoutError as e:
            timeout = "within 0.05" in str(e)
        s.close()
        print(json.dumps([dispatch.THREADS, result, len(calls), timeout]))
    """)
    assert json.loads(out) == [False, [7, 7, 7], 3, True]


def test_mcmc_and_summary_with_numpy_hidden_from_inference():
    # CPython has no backend without NumPy (Pyodide's is tfjs), so NumPy stays importable for the
    # kernels only: the probabilistic layer, the model graph and the random streams are refused
    # it, as in Pyodide, and must fall back to pure-Python arrays and Philox.
    out = _run("""
        import builtins, json, sys
        _import = builtins.__import__
        HIDDEN_FROM = ("tensorbridge.runtime.ppl", "tensorbridge.runtime.graph",
                       "tensorbridge.runtime.random", "tensorbridge.runtime.host_namespace",
                       "tensorbridge.runtime.backends.python_arrays")
        refused = set()

        def guarded(name, globals=None, locals=None, fromlist=(), level=0):
            importer = (globals or {}).get("__name__", "")
            if level == 0 and name.split(".")[0] in ("numpy", "scipy") and \\
                    importer.startswith(HIDDEN_FROM):
                refused.add(importer)
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return _import(name, globals, locals, fromlist, level)

        builtins.__import__ = guarded
        import tensorbridge as tb
        from tensorbridge.runtime import host_namespace

        y = tb.as_data([1.2, 2.3, 0.7, 1.9, 1.4, 2.8, 0.3, 1.1])
        mu = tb.normal(0.0, 10.0)
        sd = tb.variable(lower=0.0)
        tb.distribution(y, tb.normal(mu, sd))
        m = tb.model(mu, sd)
        draws = tb.mcmc(m, n_samples=200, warmup=200, chains=2, seed=1, progress=False)
        text = repr(draws.summary())
        print(text, file=sys.stderr)
        print(json.dumps([host_namespace.NAME, type(draws["mu"]).__module__,
                          list(draws["sd"].shape), draws["sd"].min() > 0,
                          text.splitlines()[0].split()[:3], len(text.splitlines()),
                          "tensorbridge.runtime.host_namespace" in refused,
                          "tensorbridge.runtime.ppl.chain_rng" in refused,
                          1.0 < draws.summary()["mu"]["mean"] < 2.0]))
    """)
    assert json.loads(out) == ["pure", "tensorbridge.runtime.backends.python_arrays", [2, 200],
                               True, ["parameter", "mean", "sd"], 4, True, True, True]
