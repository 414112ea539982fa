// The client on tensorbridge.bridge (session "js"): descriptors and registries (converters
// registered from JS), the bridge's handle table, Error descriptors both ways, JS objects held
// by Python, and the bridge running without NumPy and threads inside Pyodide.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TensorBridgeError } from "../../src/index.js";
import { boot } from "./helpers.mjs";

const tb = await boot();

test("the bridge runs in Pyodide without NumPy and without threads", async () => {
  const r = await tb.runPython(`
import sys, importlib.util
from tensorbridge.bridge import dispatch
from tensorbridge.bridge.js import host as js_host
[importlib.util.find_spec("numpy") is None, sys.modules.get("numpy") is not None, dispatch.THREADS,
 type(js_host._HOST.session).__name__]`);
  assert.deepEqual(r, [true, false, false, "Session"]);
  // host jobs run inline: session.run, with a token at safe points
  const run = await tb.runPython(`
import tensorbridge.bridge as br
def _job():
    br.check_cancelled()
    return br.current_token() is not None
br.session("js").run(_job)`);
  assert.equal(run, true);
});

test("tb.handles() reports the bridge's handle table", async () => {
  const h0 = await tb.handles();
  for (const k of ["live", "refs", "by_type", "issued", "released", "pending", "count",
    "byType", "js"]) assert.ok(k in h0, k);
  const x = await tb.tensor([1, 2]);
  const h1 = await tb.handles();
  assert.equal(h1.live, h0.live + 1);
  assert.equal(h1.byType.ConcreteTensor ?? h1.byType.Tensor, (h0.byType.ConcreteTensor
    ?? h0.byType.Tensor ?? 0) + 1);
  assert.equal(h1.issued, h0.issued + 1);
  x.dispose();
  const h2 = await tb.handles();
  assert.equal(h2.live, h0.live);
  assert.equal(h2.released, h1.released + 1);
  // the same table Python sees
  assert.equal(await tb.runPython("import tensorbridge.bridge as br\nbr.stats()['live']"),
    h2.live);
});

test("arrays cross as descriptors: typed arrays in, memoryviews (no NumPy), shapes out",
  async () => {
    const info = await tb.runPython("lambda a: [type(a).__name__, a.format, a.shape, a.tolist()]");
    assert.deepEqual(await info(new Int16Array([1, -2, 3])), ["memoryview", "h", [3], [1, -2, 3]]);
    assert.deepEqual(await info(new BigInt64Array([5n])), ["memoryview", "q", [1], [5]]);
    const two = await tb.runPython(
      "import array\nmemoryview(array.array('d', [1, 2, 3, 4, 5, 6])).cast('B').cast('d', [2, 3])");
    assert.deepEqual(two.shape, [2, 3]);
    assert.equal(two.dtype, "float64");
    assert.deepEqual(Array.from(two.data), [1, 2, 3, 4, 5, 6]);
    const bytes = await tb.runPython("b'\\x00\\xff'");
    assert.ok(bytes instanceof Uint8Array);
    assert.deepEqual(Array.from(bytes), [0, 255]);
    const nested = await (await tb.runPython("lambda d: d"))({ a: new Float32Array([1.5]),
      b: [new Uint8Array([7])] });
    assert.ok(nested.a instanceof Float32Array && nested.b[0] instanceof Uint8Array);
  });

test("maps, sets, big and special numbers, NA through the registries", async () => {
  const echo = await tb.runPython("lambda x: x");
  const kinds = await tb.runPython("lambda x: [type(k).__name__ for k in x]");
  assert.deepEqual(await kinds(new Map([[1, "a"], [2, "b"]])), ["int", "int"]);
  const back = await echo(new Map([[1, "a"]]));  // a dict with int keys goes back by handle
  assert.equal(typeof back, "function");
  assert.deepEqual(await (await tb.runPython("lambda s: sorted(s)"))(new Set([3, 1])), [1, 3]);
  const same = async (v) => assert.deepEqual(await echo(v), v);
  await same([NaN, Infinity, -Infinity, 2 ** 60, 1e300, -0.5]);
  assert.ok(Number.isNaN(await echo(NaN)));
  const types = await tb.runPython("lambda *a: [type(x).__name__ for x in a]");
  // fast path and wire agree: safe integers are ints, others floats
  assert.deepEqual(await types(3, 2 ** 60, 0.5), ["int", "float", "float"]);
  assert.deepEqual(await types([3, 2 ** 60, 0.5]), ["list"]);
  assert.deepEqual(await (await tb.runPython("lambda l: [type(x).__name__ for x in l]"))(
    [3, 2 ** 60, 0.5]), ["int", "float", "float"]);
  assert.equal(await tb.runPython("import tensorbridge.bridge as br\nbr.NA_REAL"), null);
  assert.equal(await echo(2n ** 80n), 2n ** 80n);
});

test("registerConverter: Python types -> JS and JS classes -> Python", async () => {
  class Frac {
    constructor(n, d) { this.n = n; this.d = d; }
    get value() { return this.n / this.d; }
  }
  await tb.registerConverter({
    python: "fractions.Fraction", js: Frac,
    fromPython: "lambda f: [f.numerator, f.denominator]",
    toJs: ([n, d]) => new Frac(n, d),
    fromJs: (f) => [f.n, f.d],
    toPython: "lambda d: Fraction(*d)",
  });
  const half = await tb.runPython("import fractions\nfractions.Fraction(1, 2)");
  assert.ok(half instanceof Frac);
  assert.equal(half.value, 0.5);
  const twice = await tb.runPython("lambda f: [type(f).__name__, f * 2]");
  const [kind, two] = await twice(new Frac(3, 4));
  assert.equal(kind, "Fraction");
  assert.ok(two instanceof Frac && two.n === 3 && two.d === 2);
  // nested, and visible in the bridge's table
  const inList = await (await tb.runPython("lambda xs: sum(xs)"))([new Frac(1, 3), new Frac(2, 3)]);
  assert.ok(inList instanceof Frac && inList.value === 1);
  const table = await tb.runPython(
    "import tensorbridge.bridge as br\nrepr(br.py_to_foreign['js'])");
  assert.match(table, /fractions\.Fraction +-> +js converter 'fractions.Fraction'/);
  // a Python callable as the Python side; a subclass picks the base class's converter
  class Vec { constructor(x, y) { this.x = x; this.y = y; } }
  class Vec3 extends Vec { constructor(x, y, z) { super(x, y); this.z = z; } }
  const mk = await tb.runPython("lambda d: complex(d['x'], d['y'])");
  await tb.registerConverter({ name: "vec", js: Vec, toPython: mk });
  assert.equal(await (await tb.runPython("lambda c: [c.real, c.imag]"))(new Vec3(1, 2, 9))
    .then((r) => r.join(",")), "1,2");
  await tb.unregisterConverter("fractions.Fraction", "fractions.Fraction");
  const plain = await tb.runPython("import fractions\nfractions.Fraction(1, 2)");
  assert.equal(typeof plain, "function");  // a handle again
  await assert.rejects(tb.registerConverter({ js: Frac }), /needs `toPython`/);
});

test("errors: Python exceptions keep type, message, traceback and cause, and come home",
  async () => {
    const boom = await tb.runPython(`
def _boom():
    try:
        {}["k"]
    except KeyError as e:
        raise ValueError("outer message") from e
_boom`);
    let err;
    try { await boom(); } catch (e) { err = e; }
    assert.ok(err instanceof TensorBridgeError);
    assert.equal(err.language, "python");
    assert.equal(err.type, "ValueError");
    assert.equal(err.pyType, "ValueError");
    assert.equal(err.message, "ValueError: outer message");
    assert.ok(err.traceback.some((f) => /_boom/.test(f)));
    assert.match(err.pyTraceback, /^Traceback \(most recent call last\):/);
    assert.ok(err.cause instanceof TensorBridgeError && err.cause.type === "KeyError");
    assert.equal(err.descriptor.lang, "python");
    // thrown back into Python from a JS callback: the very same exception object
    const check = await tb.runPython(`
_seen = {}
def _check(cb):
    try:
        cb()
    except ValueError as e:
        return e is _seen.get("first")
def _first():
    try:
        _boom()
    except ValueError as e:
        _seen["first"] = e
        raise
(_check, _first)`);
    const [checker, first] = check;
    let firstErr;
    try { await first(); } catch (e) { firstErr = e; }
    assert.equal(await checker(() => { throw firstErr; }), true);
    // and passed as a value
    assert.equal(await (await tb.runPython("lambda e: type(e).__name__"))(firstErr), "ValueError");
  });

test("errors: JS errors reach Python as ForeignError and re-cross unchanged", async () => {
  const original = new RangeError("out of range in JS");
  const seen = await tb.runPython(`
import tensorbridge.bridge as br
from tensorbridge.bridge.js.host import JsCallbackError
def _seen(cb):
    try:
        cb()
    except JsCallbackError as e:
        assert isinstance(e, br.ForeignError)
        return [e.language, e.foreign_class, e.message, list(e.classes), len(e.foreign_traceback) > 0]
_seen`);
  assert.deepEqual(await seen(() => { throw original; }),
    ["js", "RangeError", "out of range in JS", ["RangeError", "Error"], true]);
  const passThrough = await tb.runPython("lambda cb: cb()");
  let err;
  try { await passThrough(() => { throw original; }); } catch (e) { err = e; }
  assert.ok(err instanceof TensorBridgeError);
  assert.equal(err.cause, original);  // the original JS error object
  assert.equal(err.type, "RangeError");
  assert.equal(err.pyType, "JsCallbackError");
  assert.equal(err.descriptor.lang, "js");
  assert.equal(err.descriptor.msg, "out of range in JS");
});

test("JS objects Python cannot convert cross by reference and come back as themselves",
  async () => {
    const when = new Date(0);
    const echo = await tb.runPython("lambda x: [x, type(x).__name__]");
    const [back, kind] = await echo(when);
    assert.equal(back, when);
    assert.equal(kind, "ForeignObject");
    const fn = (a) => a + 1;
    assert.equal((await echo(fn))[0], fn);  // a JS function going home is itself
  });

test("attribute proxies are cached; coroutines are awaited", async () => {
  const math = await tb.pyimport("math");
  assert.equal(math.sqrt, math.sqrt);
  assert.equal(await math.sqrt(9), 3);
  const co = await tb.runPython(`
import asyncio
async def _co(x):
    await asyncio.sleep(0)
    return x * 2
_co`);
  assert.equal(await co(21), 42);
  const bad = await tb.runPython("async def _bad():\n    raise KeyError('late')\n_bad");
  await assert.rejects(bad(), (e) => e.pyType === "KeyError" && /late/.test(e.message));
  // async JS callbacks give Python an awaitable
  const awaitIt = await tb.runPython("async def _aw(cb):\n    return await cb(5)\n_aw");
  assert.equal(await awaitIt(async (x) => x * 3), 15);
});
