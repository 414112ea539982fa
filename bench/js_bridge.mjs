#!/usr/bin/env node
// JS bridge benchmarks, side by side in one run (Node, in-process Pyodide; the worker round
// trip needs a browser and is measured by js-client/test/browser). Prints ratios to targets.
//   node bench/js_bridge.mjs        (after `npm ci && npm run build` in js-client/)
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const jsDir = fileURLToPath(new URL("../js-client/", import.meta.url));
const require = createRequire(jsDir + "package.json");
const { loadTensorBridge } = await import(new URL("../js-client/src/index.js", import.meta.url));

function time(fn, n) {
  for (let i = 0; i < Math.min(n, 200); i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn();
  return ((performance.now() - t0) / n) * 1000;  // us per call
}
async function timeAsync(fn, n) {
  for (let i = 0; i < Math.min(n, 50); i++) await fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t0) / n) * 1000;
}
const rows = [];
const row = (name, value, unit, target) => {
  rows.push({ name, value, unit, target });
  console.log(`${name.padEnd(58)} ${value.toFixed(2).padStart(10)} ${unit.padEnd(5)} ${target ?? ""}`);
};

// boot: bare loadPyodide vs loadTensorBridge (fresh processes would be fairer; run first)
const indexURL = jsDir + "dist/pyodide/";
let t0 = performance.now();
const { loadPyodide } = await import(new URL("pyodide.mjs", "file://" + indexURL).href);
const bare = await loadPyodide({ indexURL });
bare.runPython("1 + 1");
const bareMs = performance.now() - t0;
t0 = performance.now();
const tb = await loadTensorBridge();
const x0 = await tb.tensor([1, 2]);
await (await tb.add(x0, 1)).array();
const tbMs = performance.now() - t0;
row("boot: bare loadPyodide() to first result", bareMs, "ms");
row("boot: loadTensorBridge() to first result", tbMs, "ms",
  `ratio ${(tbMs / bareMs).toFixed(2)} (target <= 1.3)`);

// call overhead: raw Pyodide call vs a runtime method call through the client
const py = tb.core.py;
const noop = py.runPython("lambda: None");
const rawUs = time(() => noop(), 20000);
row("raw Pyodide JS->Python call", rawUs, "us");
const x = await tb.tensor(new Float32Array([1, 2, 3, 4]));
const shapeOf = await tb.runPython("lambda t: t.ndim");
const callUs = await timeAsync(() => shapeOf(x), 5000);
row("runtime method call through the client (await)", callUs, "us", "target <= 5");

// data in: 1e7 Float32Array -> tensor vs a raw copy into the Wasm heap
const n = 1e7, big = new Float32Array(n).fill(1.5);
const heapCopyMs = (() => {
  const ptr = py._module._malloc(n * 4);
  const buf = py._module.HEAPU8;  // after malloc: the heap may have grown
  const t = performance.now();
  for (let i = 0; i < 5; i++) new Float32Array(buf.buffer, ptr, n).set(big);
  const ms = (performance.now() - t) / 5;
  py._module._free(ptr);
  return ms;
})();
row("raw copy of 1e7 float32 into the (Pyodide) Wasm heap", heapCopyMs, "ms");
let inMs = 0;
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  const tt = await tb.tensor(big, [n]);
  inMs += (performance.now() - t) / 5;
  tt.dispose();
}
row("tb.tensor(Float32Array(1e7)) (one copy into TF.js wasm)", inMs, "ms",
  `ratio ${(inMs / heapCopyMs).toFixed(2)} (target <= 1.2)`);

// data out: copy vs zero-copy view
const bt = await tb.tensor(big, [n]);
const outCopy = await timeAsync(() => bt.data(), 5) / 1000;
const outView = await timeAsync(async () => (await bt.view()).release(), 20) / 1000;
row("tensor.data() of 1e7 (copy)", outCopy, "ms");
row("tensor.view() of 1e7 (zero-copy view)", outView, "ms");
bt.dispose();

// tfjs backend op overhead vs calling TF.js directly from JS
const tf = require("@tensorflow/tfjs-core");
const a = tf.tensor([1, 2, 3, 4], [2, 2]);
const jsUs = time(() => tf.exp(a).dispose(), 20000);
const pyExp = py.runPython(`
import tensorbridge as tb
_a = tb.tensor([[1.0, 2.0], [3.0, 4.0]])
def _bench(n):
    import time
    e = tb.exp
    t = time.perf_counter()
    for _ in range(n):
        e(_a)
    return (time.perf_counter() - t) / n * 1e6
_bench`);
const pyUs = pyExp(20000);
row("tf.exp(2x2) called from JS (+dispose)", jsUs, "us");
row("tb.exp(2x2) in Python on the tfjs backend (+release)", pyUs, "us",
  `overhead ${(pyUs - jsUs).toFixed(1)} us/op`);
const mm = tf.tensor(new Float32Array(256 * 256).fill(0.01), [256, 256]);
const jsMm = time(() => tf.matMul(mm, mm).dispose(), 200);
const pyMm = py.runPython(`
_m = tb.ones((256, 256)) * 0.01
def _bm(n):
    import time
    t = time.perf_counter()
    for _ in range(n):
        _m @ _m
    return (time.perf_counter() - t) / n * 1e6
_bm`)(200);
row("256x256 matmul: TF.js from JS", jsMm, "us");
row("256x256 matmul: tb on the tfjs backend", pyMm, "us",
  `ratio ${(pyMm / jsMm).toFixed(2)}`);
console.log("\nworker -> main -> worker sync callback: see `npm run test:browser` (diagnostic line)");
if (process.env.BENCH_JSON) {
  const fs = await import("node:fs");
  fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify(rows, null, 1));
}
process.exit(0);
