// The npm API in Node (Pyodide in-process): tensors, ops, grad, pyimport, conversions of every
// type both ways, handles and their lifetime (dispose, Symbol.dispose, FinalizationRegistry),
// errors both ways, JS callbacks from Python, and a 10k-tensor leak check.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TensorBridgeError } from "../../src/index.js";
import { boot } from "./helpers.mjs";

const tb = await boot();

test("boot is reported and the runtime uses the tfjs backend", async () => {
  assert.equal(tb.info.mode, "node");
  assert.ok(tb.info.bootMs > 0 && tb.info.bootMs < 60000);
  const x = await tb.tensor([1, 2, 3]);
  assert.equal(x.backend, "tfjs");
  assert.equal(x.dtype, "float32");
});

test("tensors from typed arrays, nested arrays and numbers; data() and array()", async () => {
  const a = await tb.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]);
  assert.deepEqual(a.shape, [2, 3]);
  const d = await a.data();  // a TypedArray, as in TF.js; shape and dtype are on the tensor
  assert.ok(d instanceof Float32Array);
  assert.deepEqual(Array.from(d), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(await a.array(), [[1, 2, 3], [4, 5, 6]]);
  const i = await tb.tensor(new Int32Array([7, -8]));
  assert.equal(i.dtype, "int32");
  assert.deepEqual(await i.array(), [7, -8]);
  const b = await tb.tensor([true, false]);
  assert.equal(b.dtype, "bool");
  assert.deepEqual(await b.array(), [true, false]);
  const s = await tb.tensor(2.5, []);
  assert.equal(await s.array(), 2.5);
  const big = await tb.tensor(new BigInt64Array([5n, -6n]));
  assert.equal(big.dtype, "int64");
  assert.deepEqual(Array.from(await big.data()), [5n, -6n]);
  await assert.rejects(tb.tensor(new BigInt64Array([2n ** 40n])), /does not fit in int32/);
  await assert.rejects(tb.tensor([1, 2, 3], [2, 2]), /shape \[2,2\] holds 4 values, data has 3/);
});

test("arithmetic and ops give the Python runtime's numbers", async () => {
  const x = await tb.tensor([[1, 2], [3, 4]]);
  const y = await tb.add(await tb.tanh(await tb.matmul(x, await x.T())), 1.0);
  const got = await y.data();
  const want = [Math.tanh(5) + 1, Math.tanh(11) + 1, Math.tanh(11) + 1, Math.tanh(25) + 1];
  got.forEach((v, k) => assert.ok(Math.abs(v - want[k]) < 1e-6));
  assert.deepEqual(await (await tb.sum(x, tb.kw({ axis: 1 }))).array(), [3, 7]);
  assert.deepEqual(await (await x.mul(2)).array(), [[2, 4], [6, 8]]);
  assert.deepEqual(await (await tb.getitem(x, 1)).array(), [3, 4]);
  assert.deepEqual(await (await tb.getitem(x, [1])).array(), [[3, 4]]);  // NumPy: an index array
  const lg = await (await tb.lgamma(await tb.tensor([0.5, 10]))).array();
  assert.ok(Math.abs(lg[0] - 0.5723649429247001) < 1e-6);
  assert.ok(Math.abs(lg[1] - 12.801827480081469) < 1e-4);
});

test("grad and valueAndGrad of a JS function written with tb ops", async () => {
  const x = await tb.tensor([[1, 2], [3, 4]]);
  const f = (w) => tb.sum(tb.tanh(tb.matmul(w, x)));
  const g = await tb.grad(f)(x);
  assert.deepEqual(g.shape, [2, 2]);
  const [v, gw] = await tb.valueAndGrad((w) => w.mul(w).sum())(x);
  assert.equal(await v.array(), 30);
  assert.deepEqual(await gw.array(), [[2, 4], [6, 8]]);
  const [ga, gb] = await tb.grad((a, b) => a.mul(b).sum(), [0, 1])(x, await x.add(1));
  assert.deepEqual(await ga.array(), [[2, 3], [4, 5]]);
  assert.deepEqual(await gb.array(), [[1, 2], [3, 4]]);
  // a Python function works too
  const pyf = await tb.runPython("lambda w: tb.sum(w * w * w)");
  assert.deepEqual(await (await tb.grad(pyf)(x)).array(), [[3, 12], [27, 48]]);
});

test("pyimport: attributes, calls, kwargs, and Python objects as handles", async () => {
  const math = await tb.pyimport("math");
  assert.equal(await math.pi, Math.PI);
  assert.equal(await math.sqrt(16), 4);
  const col = await tb.pyimport("collections");
  const counter = await col.Counter("abracadabra");
  assert.equal(typeof counter, "function");  // a handle-backed proxy
  assert.deepEqual(await counter.most_common(1), [["a", 5]]);
  const json = await tb.pyimport("json");
  assert.equal(await json.dumps({ b: 1, a: [1, 2] }, tb.kw({ sort_keys: true })),
    '{"a": [1, 2], "b": 1}');
});

test("round trips of every type", async () => {
  const echo = await tb.runPython("lambda x: x");
  const same = async (v) => assert.deepEqual(await echo(v), v);
  await same(1.5);
  await same(-3);
  await same("héllo ✓");
  await same(true);
  await same(null);
  await same([1, "a", [true, null]]);
  await same({ a: 1, b: { c: [2, 3] } });
  assert.equal(await echo(undefined), null);
  assert.equal(await echo(2n ** 60n), 2n ** 60n);  // beyond 2^53: BigInt both ways
  assert.equal(await echo(12n), 12);               // small BigInt: a number
  assert.deepEqual(await echo(new Map([["k", 1]])), { k: 1 });
  const ta = await echo(new Float64Array([1.5, 2.5]));
  assert.ok(ArrayBuffer.isView(ta));
  assert.deepEqual(Array.from(new Float64Array(ta.buffer, ta.byteOffset, 2)), [1.5, 2.5]);
  const kinds = await tb.runPython(
    "lambda *a: [type(x).__name__ for x in a]");
  assert.deepEqual(await kinds(1, 1.5, "s", true, null, [1], { a: 1 }, 2n ** 70n,
    new Map([[1, 2]]), new Set([1]), new Uint8Array([1, 2])),
  ["int", "float", "str", "bool", "NoneType", "list", "dict", "int", "dict", "set",
    "memoryview"]);
  const x = await tb.tensor([1, 2]);
  const back = await echo(x);  // a tensor crosses as a handle, comes back as a Tensor
  assert.deepEqual(await back.array(), [1, 2]);
  const obj = await tb.runPython("object()");
  assert.equal(typeof await echo(obj), "function");
});

test("JS functions passed to Python are called back, errors cross both ways", async () => {
  const apply = await tb.runPython("lambda f, *a: f(*a) * 2");
  assert.equal(await apply((a, b) => a + b, 3, 4), 14);
  const calls = [];
  const loop = await tb.runPython("def _loop(cb):\n    for i in range(3):\n        cb(i)\n"
    + "    return 'done'\n_loop");
  assert.equal(await loop((i) => calls.push(i)), "done");
  assert.deepEqual(calls, [0, 1, 2]);
  // JS error inside a callback -> Python exception -> JS error with the Python traceback
  await assert.rejects(apply(() => { throw new RangeError("bad value from JS"); }),
    (e) => e instanceof TensorBridgeError && /bad value from JS/.test(e.message));
  // Python error -> JS error naming the Python type
  const boom = await tb.runPython("def _b():\n    raise ValueError('nope')\n_b");
  await assert.rejects(boom(), (e) => e.pyType === "ValueError" && /nope/.test(e.message)
    && /Traceback/.test(e.pyTraceback));
  await assert.rejects(tb.op("no_such_op"), /no op/);
});

test("handles: dispose, Symbol.dispose, disposed use names the object", async () => {
  const base = (await tb.handles()).count;
  const x = await tb.tensor([1, 2, 3]);
  assert.equal((await tb.handles()).count, base + 1);
  x.dispose();
  x.dispose();  // twice is fine
  assert.equal((await tb.handles()).count, base);
  await assert.rejects(x.array(), /Tensor #\d+ \(float32\[3\]\) was disposed/);
  {
    // what `using y = ...` does at block end (the syntax needs Node >= 24)
    const y = await tb.tensor([4]);
    assert.equal((await tb.handles()).count, base + 1);
    y[Symbol.dispose]();
  }
  assert.equal((await tb.handles()).count, base);
  const math = await tb.pyimport("math");
  math.dispose();
  await assert.rejects(math.sqrt(4), /module handle #\d+ was disposed/);
});

test("leak check: 10k tensors created and disposed -> handles and TF.js memory at baseline",
  async () => {
    const h0 = (await tb.handles()).count;
    await tb.runPython("import gc; gc.collect()");
    const m0 = await tb.memory();
    const x = await tb.tensor([1, 2, 3, 4]);
    for (let i = 0; i < 10000; i++) {
      const y = await tb.mul(x, 2.0);
      y.dispose();
    }
    x.dispose();
    await tb.runPython("import gc; gc.collect()");
    const m1 = await tb.memory();
    assert.equal((await tb.handles()).count, h0);
    assert.equal(m1.tf.numTensors, m0.tf.numTensors);
    assert.equal(m1.runtime.num_tensors, m0.runtime.num_tensors);
  });

test("FinalizationRegistry releases handles of collected tensors", { skip: !global.gc
  && "run node with --expose-gc" }, async () => {
  global.gc();
  await new Promise((r) => setTimeout(r, 50));
  const h0 = (await tb.handles()).count;
  for (let i = 0; i < 50; i++) await tb.tensor([i]);  // dropped without dispose
  assert.equal((await tb.handles()).count, h0 + 50);
  await new Promise((r) => setTimeout(r, 10));
  global.gc();
  await new Promise((r) => setTimeout(r, 50));
  await tb.handles();  // flushes the queued releases
  assert.equal((await tb.handles()).count, h0);
});

test("zero-copy view of tensor data (in-process)", async () => {
  const x = await tb.tensor(new Float32Array([1, 2, 3]));
  const v = await x.view();
  assert.equal(v.view, true);
  assert.deepEqual(Array.from(v.data), [1, 2, 3]);
  v.release();
  assert.equal(v.data, null);
});
