// Issue 12's JS items that are not value rows of the conformance table: JS functions Python
// drops are released, errors keep the Python frames they crossed, interrupts say what
// happened, async JS callbacks are awaited or refused clearly, data() is a TypedArray, and a
// view survives the WASM heap growing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();
const tick = () => new Promise((r) => setTimeout(r, 0));

test("10,000 calls with a new JS function each: tb.codec.callbacks returns to baseline",
  async () => {
    const apply = await tb.runPython("lambda f, x: f(x)");
    const keep = await tb.runPython("_kept = []\nlambda f: _kept.append(f)");
    await tick();
    const base = tb.codec.callbacks.size;
    let total = 0;
    for (let i = 0; i < 10000; i++) total += await apply((v) => v + 1, i);
    assert.equal(total, (9999 * 10000) / 2 + 10000);
    await tick();
    assert.equal(tb.codec.callbacks.size, base, "JS functions Python dropped are released");
    // one Python still holds stays (and is released when Python drops it)
    await keep(() => 1);
    await tick();
    assert.equal(tb.codec.callbacks.size, base + 1);
    await tb.runPython("_kept.clear()");
    await tick();
    assert.equal(tb.codec.callbacks.size, base);
  });

test("a JS error thrown in a callback comes back with the Python frames it crossed",
  async () => {
    const outer = await tb.runPython(`
def _inner(f):
    return f(1) + 1
def _outer(f):
    return _inner(f)
_outer`);
    const original = new RangeError("boom in the callback");
    await assert.rejects(outer(() => { throw original; }), (e) => {
      assert.equal(e.cause, original, "the original JS error is the cause");
      assert.equal(e.type, "RangeError");
      assert.equal(e.pyType, "JsCallbackError");
      const frames = e.traceback.join("\n");
      assert.match(frames, /in _outer/);
      assert.match(frames, /in _inner/);
      assert.match(e.pyTraceback, /^Traceback \(most recent call last\):/);
      assert.match(e.pyTraceback, /in _inner[\s\S]*JsCallbackError: RangeError: boom in the callback/);
      return true;
    });
  });

test("an interrupt never surfaces as an empty `KeyboardInterrupt: `", async () => {
  await assert.rejects(tb.runPython("raise KeyboardInterrupt"), (e) => {
    assert.equal(e.pyType, "KeyboardInterrupt");
    assert.match(e.message, /^KeyboardInterrupt: interrupted: tb\.interrupt\(\)/);
    return true;
  });
  // a job under session.run stopped by the host's interrupt says so too
  await assert.rejects(tb.runPython(`
import tensorbridge.bridge as br
def _job():
    raise KeyboardInterrupt
br.session("js").run(_job)`), /KeyboardInterrupt: interrupted/);
  await assert.rejects(tb.runPython("raise KeyboardInterrupt('by the user')"),
    /KeyboardInterrupt: by the user$/);
});

test("an async JS callback: awaited by async Python, refused clearly by synchronous Python",
  async () => {
    const sync = await tb.runPython("def _sync(f):\n    return f(1) + 1\n_sync");
    await assert.rejects(sync(async function later(x) { return x; }), (e) => {
      assert.equal(e.pyType, "TypeError");
      assert.match(e.message, /JS function 'later' returned a Promise/);
      assert.match(e.message, /async def/);
      assert.doesNotMatch(e.message, /coroutine/);
      return true;
    });
    const awaited = await tb.runPython(`
async def _awaited(f):
    return (await f(20)) + 1
_awaited`);
    assert.equal(await awaited(async (x) => { await tick(); return x * 2; }), 41);
    // a rejected promise is the JS error in Python
    await assert.rejects(awaited(async () => { throw new TypeError("late"); }), (e) => {
      assert.equal(e.type, "TypeError");
      assert.match(e.message, /late/);
      return true;
    });
  });

test("data() resolves to a TypedArray as in TF.js; shape and dtype stay on the tensor",
  async () => {
    const cases = [[new Float32Array([1.5, 2]), Float32Array, "float32"],
      [new Int32Array([1, 2]), Int32Array, "int32"], [[true, false], Uint8Array, "bool"],
      [new Uint8Array([0, 255]), Int32Array, "int32"]];
    for (const [v, C, dtype] of cases) {
      const t = await tb.tensor(v);
      const d = await t.data();
      assert.ok(d instanceof C, `${dtype}: ${d?.constructor?.name}`);
      assert.equal(t.dtype, dtype);
      assert.deepEqual(t.shape, [2]);
      t.dispose();
    }
    const f64 = await tb.tensor([0.5, 1], { dtype: "float64" });
    assert.ok(await f64.data() instanceof Float64Array);
    f64.dispose();
  });

test("a view() stays valid when the WASM heap grows (no detached buffer)", async () => {
  const tf = tb.core.tf;
  assert.equal(tf.getBackend(), "wasm");
  const heap = () => tf.backend().wasm.HEAPU8.buffer;
  const x = await tb.tensor(new Float32Array([1, 2, 3]));
  const v = await x.view();
  assert.equal(v.view, true);
  const first = v.data;
  const before = heap().byteLength;
  // a tensor bigger than the heap's free space makes TF.js grow the WASM memory
  const big = await tb.zeros([Math.ceil(before / 4) + 1024]);
  assert.ok(heap().byteLength > before, "the heap grew");
  assert.equal(first.buffer.byteLength, 0, "the old view's buffer is detached");
  assert.deepEqual(Array.from(v.data), [1, 2, 3]);
  assert.equal(v.data.buffer, heap());
  v.release();
  assert.equal(v.data, null);
  big.dispose();
  x.dispose();
});

test("Python's TypeError is a JS TypeError, its OverflowError a RangeError; both are bridge "
  + "errors that go back to Python unchanged", async () => {
  const { TensorBridgeError } = await import("../../src/index.js");
  await assert.rejects(tb.tensor("abc"), (e) => {
    assert.ok(e instanceof TypeError && e instanceof TensorBridgeError);
    assert.equal(e.pyType, "TypeError");
    assert.equal(e.name, "PythonError");
    assert.match(e.message, /^TypeError: data: /);
    return true;
  });
  let overflow;
  try { await tb.tensor(3e9, { dtype: "int32" }); } catch (e) { overflow = e; }
  assert.ok(overflow instanceof RangeError && overflow instanceof TensorBridgeError);
  assert.equal(overflow.pyType, "OverflowError");
  await assert.rejects(tb.tensor([1, [2]]), (e) => {  // ValueError: only a bridge error
    assert.ok(e instanceof TensorBridgeError && !(e instanceof TypeError));
    assert.equal(e.pyType, "ValueError");
    return true;
  });
  // thrown back into Python it is the original exception object
  const same = await tb.runPython(`
_seen = []
def _keep():
    try:
        import tensorbridge as tb
        tb.tensor("abc")
    except TypeError as e:
        _seen.append(e)
        raise
def _is_same(cb):
    try:
        cb()
    except TypeError as e:
        return e is _seen[0]
(_keep, _is_same)`);
  let first;
  try { await same[0](); } catch (e) { first = e; }
  assert.ok(first instanceof TypeError);
  assert.equal(await same[1](() => { throw first; }), true);
  assert.ok(!(new Error("plain") instanceof TensorBridgeError));
});
