#!/usr/bin/env node
// Eight schools sampled through the JavaScript front door (issue 15), for bench/browser_ppl_bench.py:
//   node bench/browser_ppl.mjs node     --seed S [--chains 4] [--warmup 2000] [--samples 2000]
//   node bench/browser_ppl.mjs chromium --seed S [...]
//   node bench/browser_ppl.mjs grad     < {"source", "constants", "n", "q", "calls", "batches"}
// `node`: the js-client in this process (loadTensorBridge() from js-client/src/index.js, Pyodide
// in-process); `chromium`: headless Chromium (playwright-core, /usr/bin/chromium or
// CHROMIUM_PATH) on a cross-origin isolated page served from js-client/ (scripts/serve.mjs) whose
// client runs the runtime in a Web Worker (js-client/test/browser/page.html). Both build the model
// of js-client/demo/eight_schools_model.js (eightSchools: tb.ppl, targets mu, tau, eta, theta)
// and time `await tb.mcmc(m, {nSamples, warmup, chains, seed})` plus `draws.summary()` as the
// caller sees it (draws as Float64Arrays and the summary table returned). Inside the runtime,
// tensorbridge.mcmc, the JS door's draws_result (buffers + summary table) and its summary_rows
// are wrapped with perf_counter timers (runPython) before the call, so the time spent in Python's
// tb.mcmc and in the summary are reported apart. One boot and one mcmc call per process/page:
// each run is a fresh runtime, as each Python run is a fresh process. Prints one JSON line.
// `grad`: the lowered log density + gradient (runtime/compiled/lowering.lower_js output), made a
// function as runtime/compiled/js_sampler.py does (tb_prelude.js's makePrelude, makeDensity(C,
// TB)) and called `calls` times in a loop per batch; prints the median us per call and its value
// at q (checked by the caller against NumPy).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const JS_DIR = path.join(ROOT, "js-client");
const require = createRequire(path.join(JS_DIR, "package.json"));
const mode = process.argv[2];
const { values: a } = parseArgs({ args: process.argv.slice(3), options: {
  seed: { type: "string", default: "1" }, chains: { type: "string", default: "4" },
  warmup: { type: "string", default: "2000" }, samples: { type: "string", default: "2000" },
  timeout: { type: "string", default: "900" } } });
const opts = { nSamples: Number(a.samples), warmup: Number(a.warmup), chains: Number(a.chains),
  seed: Number(a.seed) };

// wraps tb.mcmc, the JS door's draws_result and summary_rows with timers (inside the runtime)
const INSTRUMENT = `
import json as _bj, time as _bt
import tensorbridge as _btb
import tensorbridge.bridge.js.ppl as _bjp
_BT = {}
if not getattr(_btb.mcmc, "_bench_wrapped", False):
    def _bwrap(obj, name, key, after=None):
        orig = getattr(obj, name)
        def w(*args, **kw):
            t = _bt.perf_counter()
            r = orig(*args, **kw)
            _BT[key] = _bt.perf_counter() - t
            if after is not None:
                after(r)
            return r
        w._bench_wrapped = True
        setattr(obj, name, w)
    def _bafter(d):
        _BT["backend"] = getattr(d, "backend", None)
        _BT["compile_s"] = getattr(d, "compile_seconds", None)
        _BT["divergences"] = int(d.divergences)
    _bwrap(_btb, "mcmc", "mcmc_s", _bafter)
    _bwrap(_bjp, "draws_result", "draws_result_s")
    _bwrap(_bjp, "summary_rows", "summary_s")
None
`;

/** Runs in the page or in Node: build the model, time the mcmc call as the caller sees it. */
async function runOnce(tb, opts, modelUrl) {
  const { eightSchools } = await import(modelUrl);
  const m = await eightSchools(tb);
  const t0 = performance.now();
  const draws = await tb.mcmc(m, opts);
  const t1 = performance.now();
  const rows = draws.summary();
  const t2 = performance.now();
  const mu = rows.find((r) => r.variable === "mu");
  const tau = rows.find((r) => r.variable === "tau");
  return { mcmc_ms: t1 - t0, summary_js_ms: t2 - t1, call_ms: t2 - t0,
    n_draws: draws.nDraws, chains: draws.chains, divergences: draws.divergences,
    mu_first: Array.from(draws.variables.mu.slice(0, 3)), mu_mean: mu.mean, tau_mean: tau.mean, rhat_max: Math.max(...rows.map((r) => r.rhat)),
    ess_bulk_min: Math.min(...rows.map((r) => r.essBulk)) };
}

async function inNode() {
  const t0 = performance.now();
  const { loadTensorBridge } = await import(new URL("../js-client/src/index.js",
    import.meta.url));
  const tb = await loadTensorBridge();
  const bootMs = performance.now() - t0;
  await tb.runPython(INSTRUMENT);
  const r = await runOnce(tb, opts,
    new URL("../js-client/demo/eight_schools_model.js", import.meta.url).href);
  const py = JSON.parse(await tb.runPython("_bj.dumps(_BT)"));
  await tb.close();
  return { mode: "node", boot_ms: bootMs, ...r, py };
}

async function inChromium() {
  const pw = await import(require.resolve("playwright-core"));
  const chromium = pw.chromium ?? pw.default?.chromium;
  const { serve } = await import(new URL("../js-client/scripts/serve.mjs", import.meta.url));
  const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
  const server = await serve({ port: 0 });
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), "tb-bench-ppl-"));
  let context;
  const t0 = performance.now();
  try {
    context = await chromium.launchPersistentContext(userDir, { executablePath: CHROMIUM,
      headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--no-default-browser-check"] });
    const page = await context.newPage();
    const logs = [];
    page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
    page.setDefaultTimeout(1000 * Number(a.timeout));
    const launchMs = performance.now() - t0;
    const tBoot = performance.now();  // page load to the worker's runtime ready
    await page.goto(`http://127.0.0.1:${server.address().port}/test/browser/page.html`);
    const info = await page.evaluate(() => window.tbReady);
    info.bootMs = performance.now() - tBoot;
    if (!String(info.mode).startsWith("worker")) {
      throw new Error(`expected the worker client, got mode ${info.mode}: ${logs.join("\n")}`);
    }
    await page.evaluate((src) => window.tb.runPython(src), INSTRUMENT);
    const r = await page.evaluate(async ([o, fn]) => {
      const run = new Function(`return (${fn})`)();  // runOnce, evaluated in the page
      return run(window.tb, o, "/demo/eight_schools_model.js");
    }, [opts, runOnce.toString()]);
    const py = JSON.parse(await page.evaluate(() => window.tb.runPython("_bj.dumps(_BT)")));
    await page.close();
    return { mode: "chromium", client: info.mode, launch_ms: launchMs, boot_ms: info.bootMs,
      ...r, py };
  } finally {
    await context?.close();
    server.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
}

function grad() {
  const input = JSON.parse(fs.readFileSync(0, "utf8"));
  const f64 = (s) => { const b = Buffer.from(s, "base64"); const o = new Float64Array(b.length / 8);
    new Uint8Array(o.buffer).set(b); return o; };
  const src = fs.readFileSync(path.join(ROOT, "runtime", "compiled", "tb_prelude.js"), "utf8");
  const TB = new Function(`${src}\nreturn makePrelude();`)();
  const C = input.constants.map(([dtype, v]) => dtype === "float64" ? f64(v)
    : dtype === "bool" ? Uint8Array.from(v) : Int32Array.from(v));
  const density = new Function("C", "TB", `${input.source}\nreturn makeDensity(C, TB);`)(C, TB);
  const q = f64(input.q), n = input.n, lp = new Float64Array(1), g = new Float64Array(n);
  const calls = input.calls, batches = input.batches;
  const status = density(q, lp, g);
  const value = { status, logp: lp[0], grad: Array.from(g) };
  let sink = 0;
  for (let i = 0; i < Math.min(calls, 200000); i++) { density(q, lp, g); sink += lp[0]; }  // JIT
  const us = [];
  for (let b = 0; b < batches; b++) {
    const t = performance.now();
    for (let i = 0; i < calls; i++) { density(q, lp, g); sink += g[0]; }
    us.push(((performance.now() - t) / calls) * 1000);
  }
  const sorted = [...us].sort((x, y) => x - y);
  return { us_per_call: sorted[sorted.length >> 1], min: sorted[0], max: sorted.at(-1), batches,
    calls, sink: Number.isFinite(sink), ...value };
}

let out;
if (mode === "node") out = await inNode();
else if (mode === "chromium") out = await inChromium();
else if (mode === "grad") out = grad();
else throw new Error(`usage: node bench/browser_ppl.mjs node|chromium|grad [...] (got ${mode})`);
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
