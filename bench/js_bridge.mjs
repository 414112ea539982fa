#!/usr/bin/env node
// JS bridge benchmarks, side by side in one run, with the targets of issue 5:
//   * Node, in-process Pyodide: boot, call overhead, callbacks, data in/out, tfjs op overhead;
//   * Chromium (Playwright, when playwright-core and /usr/bin/chromium are there): a page
//     function called synchronously from Python in the worker vs bare SharedArrayBuffer +
//     Atomics round trips (js-client/bench/callbacks.html), and the awaited-promise round trip
//     of a page served without COOP/COEP.
//   node bench/js_bridge.mjs          (after `make js`; `make bench` runs it via js_bridge.py)
// Every timing is the median of several batches after a warm-up (the first touch of fresh
// Wasm memory and the JIT are excluded on both sides); each row says how it was timed (its
// `timing`): "interleaved" when ours and the floor ran in alternating rounds, "not interleaved"
// when one ran its batches after the other. The boot rows alternate fresh Node processes
// (`node bench/js_bridge.mjs --boot bare|tb` boots once and prints its time), bare and wrapped in
// turn, the order swapped every round. BENCH_JSON=path writes the rows.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const jsDir = fileURLToPath(new URL("../js-client/", import.meta.url));
const require = createRequire(jsDir + "package.json");
const QUICK = !!process.env.BENCH_QUICK;
const indexURL = jsDir + "dist/pyodide/";

if (process.argv[2] === "--boot") {
  // one boot in this fresh process, from importing the loader to the first result
  const t = performance.now();
  if (process.argv[3] === "bare") {
    const { loadPyodide } = await import(new URL("pyodide.mjs", "file://" + indexURL).href);
    const bare = await loadPyodide({ indexURL });
    bare.runPython("1 + 1");
  } else {
    const { loadTensorBridge } = await import(
      new URL("../js-client/src/index.js", import.meta.url));
    const tb = await loadTensorBridge();
    const x0 = await tb.tensor([1, 2]);
    await (await tb.add(x0, 1)).array();
    process.stdout.write(JSON.stringify({ ms: performance.now() - t }) + "\n");
    await tb.close();
    process.exit(0);
  }
  process.stdout.write(JSON.stringify({ ms: performance.now() - t }) + "\n");
  process.exit(0);
}

const { loadTensorBridge } = await import(new URL("../js-client/src/index.js", import.meta.url));

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const range = (a) => [Math.min(...a), Math.max(...a)];
function time(fn, n, batches = 5) {
  for (let i = 0; i < Math.min(n, 2000); i++) fn();
  const out = [];
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    out.push(((performance.now() - t0) / n) * 1000);
  }
  return median(out);  // us per call
}
async function timeAsync(fn, n, batches = 5) {
  for (let i = 0; i < Math.min(n, 2000); i++) await fn();
  const out = [];
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await fn();
    out.push(((performance.now() - t0) / n) * 1000);
  }
  return median(out);
}
async function msMedian(fn, runs, after = () => {}) {
  await after(await fn());  // warm-up: first touch of the memory, JIT
  const out = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const r = await fn();
    out.push(performance.now() - t);
    await after(r);  // untimed (e.g. free what fn made, so the next run reuses warm memory)
  }
  return median(out);
}

const rows = [];
const NOT_INTERLEAVED = "not interleaved: median of 5 batches";
function row(name, value, unit, { peer = null, peerValue = null, target = null, max = null,
  note = null, timing = NOT_INTERLEAVED, valueRange = null, peerRange = null } = {}) {
  const ratio = peerValue ? value / peerValue : null;
  const judged = max === null ? null : (ratio ?? value) <= max;
  const us = (v) => (unit === "us" ? v : v * 1000);
  rows.push({ name, value_us: us(value), unit: "us", peer,
    peer_us: peerValue === null ? null : us(peerValue), ratio, target, passed: judged, timing,
    ...(valueRange ? { value_range: valueRange.map(us) } : {}),
    ...(peerRange ? { peer_range: peerRange.map(us) } : {}),
    ...(note ? { notes: [note] } : {}) });
  const r = ratio === null ? "" : `ratio ${ratio.toFixed(2)}`;
  const verdict = judged === null ? "" : judged ? "ok" : "MISS";
  console.log(`${name.padEnd(62)} ${value.toFixed(2).padStart(9)} ${unit.padEnd(3)} `
    + `${r.padEnd(12)} ${target ?? ""} ${verdict}`);
}

// ---- Node, in-process -------------------------------------------------------------------------
// boot: bare loadPyodide vs loadTensorBridge, each in a fresh Node process, alternating
const bootRounds = QUICK ? 2 : 5;
const boots = { bare: [], tb: [] };
for (let r = 0; r < bootRounds; r++) {
  for (const mode of r % 2 ? ["tb", "bare"] : ["bare", "tb"]) {
    const p = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--boot", mode],
      { encoding: "utf8", timeout: 300000 });
    if (p.status !== 0) throw new Error(`boot child (${mode}) exited ${p.status}: ${p.stderr}`);
    boots[mode].push(JSON.parse(p.stdout.trim().split("\n").pop()).ms);
  }
}
const bareMs = median(boots.bare), tbMs = median(boots.tb);
const bootTiming = `alternating fresh processes, median of ${bootRounds} each`;
console.log("Node, in-process Pyodide");
row("boot: bare loadPyodide() to first result", bareMs, "ms",
  { timing: bootTiming, valueRange: range(boots.bare) });
row("boot: loadTensorBridge() to first result", tbMs, "ms",
  { peer: "bare loadPyodide", peerValue: bareMs, target: "ratio <= 1.3", max: 1.3,
    timing: bootTiming, valueRange: range(boots.tb), peerRange: range(boots.bare) });
const tb = await loadTensorBridge();

// call overhead: raw Pyodide call vs a runtime method call through the client
const py = tb.core.py;
const noop = py.runPython("lambda t: None");
const N = QUICK ? 2000 : 20000;
const rawUs = time(() => noop(1), N);
row("raw Pyodide JS->Python call", rawUs, "us");
const x = await tb.tensor(new Float32Array([1, 2, 3, 4]));
const ndim = await tb.runPython("lambda t: t.ndim");
const callUs = await timeAsync(() => ndim(x), N);
row("runtime method call through the client (await)", callUs, "us",
  { target: "<= 5 us", max: 5 });
const getitem = await tb.runPython("lambda d, k: d[k]");
const wireUs = await timeAsync(() => getitem({ a: [1, 2], b: "x" }, "b"), N / 4);
row("call with a structured argument (wire: JSON + descriptors)", wireUs, "us");
const opUs = await timeAsync(async () => (await tb.add(x, 1)).dispose(), N / 4);
row("op returning a tensor handle, then dispose (tb.add(x, 1))", opUs, "us");
const loop = await tb.runPython(`
import time
def _loop(f, n):
    f(0)
    t = time.perf_counter()
    for i in range(n):
        f(i)
    return (time.perf_counter() - t) / n * 1e6
_loop`);
const cbUs = median([await loop((i) => i, N), await loop((i) => i, N), await loop((i) => i, N)]);
const med3 = "not interleaved: median of 3 runs";
const rawCb = py.runPython(`
import time
def _raw(f, n):
    f(0)
    t = time.perf_counter()
    for i in range(n):
        f(i)
    return (time.perf_counter() - t) / n * 1e6
_raw`);
const rawCbUs = median([rawCb((i) => i, N), rawCb((i) => i, N), rawCb((i) => i, N)]);
row("Python -> JS callback, raw Pyodide JsProxy call", rawCbUs, "us", { timing: med3 });
row("Python -> JS callback through the bridge (ForeignCallable)", cbUs, "us",
  { peer: "raw JsProxy call", peerValue: rawCbUs, timing: med3 });

// data in: 1e7 Float32Array -> tensor vs a raw copy into the Wasm heap
const n = 1e7, big = new Float32Array(n).fill(1.5);
const tfWasm = tb.core.tf.backend().wasm;  // the heap the tensor lands in
const pyHeap = py._module;
const runsIn = { py: [], tf: [], tb: [] };
for (let i = 0; i < (QUICK ? 3 : 15) + 1; i++) {  // interleaved, so all three see the same
  let t = performance.now();                      // machine; the first round is a warm-up
  const p1 = pyHeap._malloc(n * 4);
  new Float32Array(pyHeap.HEAPU8.buffer, p1, n).set(big);
  const a = performance.now() - t;
  pyHeap._free(p1);
  t = performance.now();
  const p2 = tfWasm._malloc(n * 4);
  tfWasm.HEAPU8.set(new Uint8Array(big.buffer, big.byteOffset, n * 4), p2);
  const b = performance.now() - t;
  tfWasm._free(p2);
  t = performance.now();
  const tt = await tb.tensor(big, [n]);
  const c = performance.now() - t;
  tt.dispose();
  if (i) { runsIn.py.push(a); runsIn.tf.push(b); runsIn.tb.push(c); }
}
const heapCopyMs = median(runsIn.py), tfCopyMs = median(runsIn.tf), inMs = median(runsIn.tb);
const inTiming = `interleaved rounds, median of ${runsIn.tb.length}`;
const inOpts = { timing: inTiming, valueRange: range(runsIn.tb) };
row("raw malloc + copy of 1e7 float32 into the (Pyodide) Wasm heap", heapCopyMs, "ms",
  { timing: inTiming, valueRange: range(runsIn.py) });
row("raw malloc + copy of 1e7 float32 into TF.js's Wasm heap", tfCopyMs, "ms",
  { timing: inTiming, valueRange: range(runsIn.tf) });
row("tb.tensor(Float32Array(1e7)) (one copy into TF.js wasm)", inMs, "ms",
  { peer: "raw copy into Pyodide's heap", peerValue: heapCopyMs, target: "ratio <= 1.2",
    max: 1.2, ...inOpts, peerRange: range(runsIn.py) });
row("  ... against a raw copy into TF.js's own heap", inMs, "ms",
  { peer: "raw copy into TF.js's heap", peerValue: tfCopyMs, target: "ratio <= 1.2", max: 1.2,
    ...inOpts, peerRange: range(runsIn.tf) });

// data out: copy vs zero-copy view
const bt = await tb.tensor(big, [n]);
const outCopy = await msMedian(() => bt.data(), 5);
const outView = await msMedian(async () => (await bt.view()).release(), 5);
row("tensor.data() of 1e7 (copy)", outCopy, "ms", { timing: "median of 5 runs" });
row("tensor.view() of 1e7 (zero-copy view)", outView, "ms", { timing: "median of 5 runs" });
bt.dispose();

// tfjs backend op overhead vs calling TF.js directly from JS
const tf = require("@tensorflow/tfjs-core");
const a = tf.tensor([1, 2, 3, 4], [2, 2]);
const jsUs = time(() => tf.exp(a).dispose(), N);
const pyExp = py.runPython(`
import tensorbridge as tb
_a = tb.tensor([[1.0, 2.0], [3.0, 4.0]])
def _bench(n):
    import time
    e = tb.exp
    e(_a)
    t = time.perf_counter()
    for _ in range(n):
        e(_a)
    return (time.perf_counter() - t) / n * 1e6
_bench`);
const pyUs = median([pyExp(N), pyExp(N), pyExp(N)]);
row("tf.exp(2x2) called from JS (+dispose)", jsUs, "us");
row("tb.exp(2x2) in Python on the tfjs backend (+release)", pyUs, "us",
  { peer: "tf.exp from JS", peerValue: jsUs, note: `overhead ${(pyUs - jsUs).toFixed(1)} us/op`,
    timing: "not interleaved: ours median of 3 runs, peer median of 5 batches" });
const mm = tf.tensor(new Float32Array(256 * 256).fill(0.01), [256, 256]);
const jsMm = time(() => tf.matMul(mm, mm).dispose(), QUICK ? 20 : 200, 3);
const pyMm = py.runPython(`
_m = tb.ones((256, 256)) * 0.01
def _bm(n):
    import time
    _m @ _m
    t = time.perf_counter()
    for _ in range(n):
        _m @ _m
    return (time.perf_counter() - t) / n * 1e6
_bm`)(QUICK ? 20 : 200);
row("256x256 matmul: TF.js from JS", jsMm, "us",
  { timing: "not interleaved: median of 3 batches" });
row("256x256 matmul: tb on the tfjs backend", pyMm, "us", { peer: "TF.js from JS",
  peerValue: jsMm, timing: "not interleaved: ours one run, peer median of 3 batches" });
await tb.close();

// ---- Chromium: worker -> main -> worker callbacks ---------------------------------------------
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
let chromium = null;
try {
  const pw = await import(require.resolve("playwright-core"));
  chromium = pw.chromium ?? pw.default?.chromium ?? null;
} catch { /* not installed */ }
if (!chromium || !fs.existsSync(CHROMIUM)) {
  console.log("\nChromium: skipped (needs playwright-core and /usr/bin/chromium: make test-browser)");
} else {
  console.log("\nChromium (Playwright), Pyodide in a Web Worker");
  const { serve } = await import(new URL("../js-client/scripts/serve.mjs", import.meta.url));
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), "tb-bench-"));
  const context = await chromium.launchPersistentContext(userDir, { executablePath: CHROMIUM,
    headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  try {
    const isolated = await serve({ port: 0, isolation: true });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${isolated.address().port}/bench/callbacks.html`);
    await page.waitForFunction(() => window.benchReady === true);
    const r = await page.evaluate((k) => window.bench(k), QUICK ? 300 : 2000);
    await page.close();
    isolated.close();
    const inPage = { timing: "interleaved rounds, median of 5" };
    row("bare SAB + Atomics round trip, page woken by a message", r.bareMessage, "us", inPage);
    row("bare SAB + Atomics round trip, message carrying an object", r.barePayload, "us",
      inPage);
    if (r.bareWaitAsync !== undefined) {
      row("bare SAB + Atomics round trip, page woken by Atomics.waitAsync", r.bareWaitAsync, "us",
        inPage);
    }
    // (with both threads polling instead of sleeping a shared-memory ping-pong can take well
    // under a microsecond; the floor that matters is the wake-up, which these rows measure)
    row("bare round trip, worker polls before sleeping (info)", r.bareWaitAsyncSpin
      ?? r.bareMessageSpin, "us", inPage);
    row(`page function called from Python in the worker (sync, ${r.wake})`, r.tb, "us",
      { peer: "bare round trip woken by a message", peerValue: r.bareMessage,
        target: "ratio <= 2", max: 2, ...inPage,
        note: "a thread wake-up costs 5-50 us on this VM depending on how idle its CPUs are" });
    if (r.bareWaitAsync !== undefined) {
      row("  ... against the bare round trip woken by Atomics.waitAsync", r.tb, "us",
        { peer: "bare waitAsync round trip", peerValue: r.bareWaitAsync, ...inPage });
    }
    row("  ... timed on the page around the whole loop", r.tbPage, "us", inPage);
    // not cross-origin isolated: awaited promises (postMessage both ways)
    const plain = await serve({ port: 0, isolation: false });
    const p2 = await context.newPage();
    await p2.goto(`http://127.0.0.1:${plain.address().port}/bench/callbacks.html`);
    await p2.waitForFunction(() => window.benchReady === true);
    const r2 = await p2.evaluate((k) => window.benchAsync(k), QUICK ? 100 : 500);
    await p2.close();
    plain.close();
    row(`page function awaited from async Python (${r2.mode}, not isolated)`, r2.tb, "us",
      { timing: "median of 3 runs" });
  } finally {
    await context.close();
  }
}

if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify(rows, null, 1));
process.exit(0);
