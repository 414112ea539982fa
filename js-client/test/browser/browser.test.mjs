// Playwright (playwright-core) drives Debian's Chromium against pages served from 127.0.0.1 with
// COOP/COEP headers: the worker runtime, round trips, callbacks to the main thread, errors both
// ways, converters registered from the page, interrupts, a leak check, the op table against the
// Python fixtures, and the demo (frame gaps and a non-blank screenshot). A second server without
// COOP/COEP serves page_async.html: callbacks through awaited promises.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { serve } from "../../scripts/serve.mjs";
import { launchChromium } from "./chromium.mjs";

const outDir = path.resolve(new URL("../../test-results/", import.meta.url).pathname);
let server, plainServer, context, base, plainBase;

before(async () => {
  server = await serve({ port: 0 });
  base = `http://127.0.0.1:${server.address().port}`;
  plainServer = await serve({ port: 0, isolation: false });
  plainBase = `http://127.0.0.1:${plainServer.address().port}`;
  context = await launchChromium(["--js-flags=--expose-gc"]);
  fs.mkdirSync(outDir, { recursive: true });
});

after(async () => {
  await context?.close();
  server?.close();
  plainServer?.close();
});

async function page(url, origin = base) {
  const p = await context.newPage();
  const logs = [];
  p.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
  p.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  await p.goto(origin + url);
  p.logs = logs;
  return p;
}

test("runtime in a worker: isolation, round trips, callbacks, errors, leaks, fixtures",
  { timeout: 240000 }, async (t) => {
    const p = await page("/test/browser/page.html");
    const info = await p.evaluate(() => window.tbReady);
    assert.equal(info.mode, "worker+sab", `logs: ${p.logs.join("\n")}`);
    assert.equal(info.crossOriginIsolated, true);
    assert.equal(info.tfBackend, "wasm");

    await t.test("ops and grad", async () => {
      const r = await p.evaluate(async () => {
        const x = await tb.tensor([[1, 2], [3, 4]]);
        const y = await tb.add(await tb.tanh(await tb.matmul(x, await x.T())), 1.0);
        const [v, g] = await tb.valueAndGrad((w) => w.mul(w).sum())(x);
        return { y: Array.from(await y.data()), v: await v.array(), g: await g.array() };
      });
      assert.ok(Math.abs(r.y[0] - (Math.tanh(5) + 1)) < 1e-6);
      assert.equal(r.v, 30);
      assert.deepEqual(r.g, [[2, 4], [6, 8]]);
    });

    await t.test("round trips over every type", async () => {
      const r = await p.evaluate(async () => {
        const echo = await tb.runPython("lambda x: x");
        const kinds = await tb.runPython("lambda *a: [type(x).__name__ for x in a]");
        return {
          values: [await echo(1.5), await echo("héllo"), await echo(true), await echo(null),
            await echo([1, [2, "b"]]), await echo({ a: { b: 1 } }),
            String(await echo(2n ** 60n)), await echo(new Map([["k", 2]]))],
          typed: Array.from(await echo(new Int32Array([3, 4]))),
          kinds: await kinds(1, 1.5, "s", false, null, [1], { a: 1 }, 2n ** 70n,
            new Map([[1, 2]]), new Float32Array([1])),
        };
      });
      assert.deepEqual(r.values, [1.5, "héllo", true, null, [1, [2, "b"]], { a: { b: 1 } },
        String(2n ** 60n), { k: 2 }]);
      assert.deepEqual(r.typed, [3, 4]);  // a memoryview in Python, a typed array again here
      assert.deepEqual(r.kinds, ["int", "float", "str", "bool", "NoneType", "list", "dict", "int",
        "dict", "memoryview"]);
    });

    await t.test("main-thread callbacks: synchronous results and errors reach Python",
      async () => {
        const r = await p.evaluate(async () => {
          const onMain = [];
          const apply = await tb.runPython(
            "def _apply(f, n):\n    return sum(f(i) for i in range(n))\n_apply");
          const t0 = performance.now();
          const total = await apply((i) => { onMain.push(typeof document); return i * 10; }, 200);
          const perCallUs = ((performance.now() - t0) / 200) * 1000;
          let err = null;
          try {
            await apply(() => { throw new TypeError("thrown on the main thread"); }, 1);
          } catch (e) { err = { name: e.name, type: e.pyType, message: e.message }; }
          return { total, onMain: [...new Set(onMain)], perCallUs, err };
        });
        assert.equal(r.total, 10 * (199 * 200) / 2);
        assert.deepEqual(r.onMain, ["object"]);  // ran where `document` exists: the page
        assert.equal(r.err.type, "JsCallbackError");
        assert.match(r.err.message, /thrown on the main thread/);
        t.diagnostic(`sync callback round trip: ${r.perCallUs.toFixed(1)} us per call`);
      });

    await t.test("converters registered from the page, errors coming home, interrupts",
      async () => {
        const r = await p.evaluate(async () => {
          class Frac { constructor(n, d) { this.n = n; this.d = d; } }
          await tb.registerConverter({ python: "fractions.Fraction", js: Frac,
            fromPython: "lambda f: [f.numerator, f.denominator]",
            toJs: ([n, d]) => new Frac(n, d), fromJs: (f) => [f.n, f.d],
            toPython: "lambda d: Fraction(*d)" });
          const double = await tb.runPython("lambda f: f * 2");
          const twice = await double(new Frac(3, 4));
          // a page callback receiving a converted value, answering with one
          const viaCb = await (await tb.runPython(
            "import fractions\nlambda cb: cb(fractions.Fraction(1, 3)) + 1"))(
            (f) => new Frac(f.n * 2, f.d));
          // a Python error thrown back from a page callback is the same exception object
          const home = await tb.runPython(`
_saved = []
def _raise():
    e = ValueError("from python")
    _saved.append(e)
    raise e
def _home(cb):
    try:
        cb()
    except ValueError as e:
        return e is _saved[0]
(_raise, _home)`);
          let first;
          try { await home[0](); } catch (e) { first = e; }
          const same = await home[1](() => { throw first; });
          // a JS error through Python: the original comes back as the cause
          const orig = new SyntaxError("page error");
          let back;
          try { await (await tb.runPython("lambda cb: cb()"))(() => { throw orig; }); } catch (e) {
            back = e;
          }
          // interrupt a long Python loop from the page
          const spin = await tb.runPython(`
import time
import tensorbridge.bridge as br
def _spin():
    t = time.monotonic()
    while time.monotonic() - t < 20:
        br.check_cancelled()
    return "finished"
lambda: br.session("js").run(_spin)`);
          const running = spin();
          await new Promise((res) => setTimeout(res, 200));
          const interrupted = tb.interrupt();
          let stopped, stoppedMessage;
          try { stopped = await running; } catch (e) {
            stopped = e.pyType;
            stoppedMessage = e.message;
          }
          const after = await (await tb.runPython("lambda: 'alive'"))();
          return { twice: [twice.constructor.name, twice.n, twice.d],
            viaCb: [viaCb.constructor.name, viaCb.n, viaCb.d], same,
            backIsCause: back.cause === orig, backType: back.type, interrupted, stopped,
            stoppedMessage, after };
        });
        assert.deepEqual(r.twice, ["Frac", 3, 2]);
        assert.deepEqual(r.viaCb, ["Frac", 5, 3]);  // 2/3 + 1
        assert.equal(r.same, true);
        assert.equal(r.backIsCause, true);
        assert.equal(r.backType, "SyntaxError");
        assert.equal(r.interrupted, true);
        assert.equal(r.stopped, "KeyboardInterrupt");
        // never an empty `KeyboardInterrupt: `
        assert.match(r.stoppedMessage, /^KeyboardInterrupt: interrupted: tb\.interrupt\(\)/);
        assert.equal(r.after, "alive");
      });

    await t.test("Python errors become JS errors with the traceback", async () => {
      const r = await p.evaluate(async () => {
        try { await tb.runPython("1/0"); } catch (e) {
          return { name: e.name, type: e.pyType, tb: e.pyTraceback };
        }
        return null;
      });
      assert.equal(r.type, "ZeroDivisionError");
      assert.match(r.tb, /Traceback/);
    });

    await t.test("a 1e7 Float64Array round trip: large buffers are copied a slice per task and "
      + "transferred, never cloned on the page; the main thread keeps running", async () => {
      const r = await p.evaluate(async () => {
        const echo = await tb.runPython("lambda x: x");
        const big = new Float64Array(1e7);
        for (let i = 0; i < big.length; i++) big[i] = i * 0.5;
        // what the page posts to the worker: views of 1 MiB or more must be transferred
        const w = tb.channel.worker, post = w.postMessage.bind(w), cloned = [];
        w.postMessage = (m, transfer = []) => {
          const views = [];
          const walk = (v, d) => {
            if (ArrayBuffer.isView(v)) views.push(v);
            else if (Array.isArray(v) && d < 3) v.forEach((x) => walk(x, d + 1));
          };
          walk(m.args, 0);
          for (const v of views) {
            if (v.byteLength >= 1 << 20 && !transfer.includes(v.buffer)) cloned.push(v.byteLength);
          }
          post(m, transfer);
        };
        const gaps = async (fn) => {  // the longest time this thread did not get to run a task
          let longest = 0, last = performance.now(), run = true;
          const ch = new MessageChannel();
          ch.port1.onmessage = () => {
            const now = performance.now();
            longest = Math.max(longest, now - last);
            last = now;
            if (run) ch.port2.postMessage(0);
          };
          ch.port2.postMessage(0);
          try { return { value: await fn(), longest }; } finally { run = false; ch.port1.close(); }
        };
        const out = [];
        for (let k = 0; k < 2; k++) {
          const e = await gaps(() => echo(big));
          const t = await gaps(() => tb.tensor(big));
          const d = await gaps(() => t.value.data());
          out.push({ echoGap: e.longest, tensorGap: t.longest, dataGap: d.longest,
            echoOk: e.value.length === big.length && e.value[123457] === big[123457],
            dataOk: d.value instanceof Float64Array && d.value[7] === 3.5,
            intact: big.buffer.byteLength === 8e7 && big[9999999] === 4999999.5 });
          t.value.dispose();
        }
        w.postMessage = post;
        return { out, cloned };
      });
      assert.deepEqual(r.cloned, [], "large typed arrays were structured-cloned on the page");
      for (const o of r.out) {
        assert.ok(o.echoOk && o.dataOk && o.intact, JSON.stringify(o));
        // one structured clone of 80 MB alone blocks the page for 35-300 ms
        assert.ok(Math.max(o.echoGap, o.tensorGap, o.dataGap) < 150, JSON.stringify(o));
      }
      t.diagnostic(`longest main-thread gaps (ms): ${JSON.stringify(r.out.map((o) =>
        [o.echoGap, o.tensorGap, o.dataGap].map((g) => +g.toFixed(1))))}`);
    });

    await t.test("10k tensors created and disposed: handles and TF.js memory at baseline",
      async () => {
        const r = await p.evaluate(async () => {
          window.gc();  // collect what earlier tests dropped, then flush the releases
          await new Promise((res) => setTimeout(res, 50));
          await tb.runPython("import gc; gc.collect()");
          const h0 = (await tb.handles()).count, m0 = await tb.memory();
          const x = await tb.tensor([1, 2, 3]);
          for (let i = 0; i < 10000; i++) (await tb.mul(x, 3)).dispose();
          x.dispose();
          await tb.runPython("import gc; gc.collect()");
          const h1 = (await tb.handles()).count, m1 = await tb.memory();
          return { h0, h1, tf0: m0.tf.numTensors, tf1: m1.tf.numTensors,
            rt0: m0.runtime.num_tensors, rt1: m1.runtime.num_tensors };
        });
        assert.equal(r.h1, r.h0);
        assert.equal(r.tf1, r.tf0);
        assert.equal(r.rt1, r.rt0);
      });

    await t.test("op table matches the Python runtime's fixtures (float32 tolerance)",
      async () => {
        const src = fs.readFileSync(new URL("../fixtures/op_cases.py", import.meta.url), "utf8");
        const fix = fs.readFileSync(new URL("../fixtures/ops.json", import.meta.url), "utf8");
        const res = await p.evaluate(async ([s, f]) => tb.runPython(`
import json as _json, types as _types, warnings as _w
_mod = _types.ModuleType("op_cases"); exec(${JSON.stringify(s)}, _mod.__dict__)
_fix = _json.loads(${JSON.stringify(f)})["cases"]
_res = {}
with _w.catch_warnings():
    _w.simplefilter("ignore")
    for _c in _mod.CASES:
        try:
            _res[_c[0]] = _mod.check_case(_c, _fix[_c[0]])
        except Exception as _e:
            _res[_c[0]] = f"{type(_e).__name__}: {_e}"
_res`), [src, fix]);
        const bad = Object.entries(res).filter(([, v]) => v !== null);
        assert.ok(Object.keys(res).length >= 100);
        assert.deepEqual(bad, []);
      });
    await p.close();
  });

test("page not cross-origin isolated: callbacks through awaited promises",
  { timeout: 240000 }, async (t) => {
    const p = await page("/test/browser/page_async.html", plainBase);
    const info = await p.evaluate(() => window.tbReady);
    assert.equal(info.mode, "worker+async", `logs: ${p.logs.join("\n")}`);
    assert.equal(info.crossOriginIsolated, false);
    assert.equal(info.callbacks, "async");

    await t.test("the runtime works the same", async () => {
      const r = await p.evaluate(async () => {
        const x = await tb.tensor([[1, 2], [3, 4]]);
        const [v, g] = await tb.valueAndGrad((w) => w.mul(w).sum())(x);
        const echo = await tb.runPython("lambda x: x");
        return { v: await v.array(), g: await g.array(),
          echo: [await echo({ a: [1, "b"] }), Array.from(await echo(new Int32Array([5])))],
          sab: typeof SharedArrayBuffer };
      });
      assert.equal(r.v, 30);
      assert.deepEqual(r.g, [[2, 4], [6, 8]]);
      assert.deepEqual(r.echo, [{ a: [1, "b"] }, [5]]);
      assert.equal(r.sab, "undefined");
    });

    await t.test("async Python awaits page functions; results and errors cross", async () => {
      const r = await p.evaluate(async () => {
        const onMain = [];
        const total = await tb.runPython(`
async def _total(f, n):
    s = 0
    for i in range(n):
        s += await f(i)
    return s
_total`);
        const t0 = performance.now();
        const sum = await total((i) => { onMain.push(typeof document); return i * 10; }, 50);
        const perCallUs = ((performance.now() - t0) / 50) * 1000;
        const asyncFn = await total(async (i) => {
          await new Promise((res) => setTimeout(res, 1));
          return { value: i }.value;
        }, 3);
        // synchronous Python gets an awaitable, not the value
        const kind = await (await tb.runPython(`
import inspect
def _kind(f):
    c = f(1)
    r = inspect.isawaitable(c)
    c.close()
    return r
_kind`))((i) => i);
        let err = null;
        try {
          await total(() => { throw new TypeError("thrown on the main thread"); }, 1);
        } catch (e) { err = { type: e.pyType, jsType: e.type, message: e.message }; }
        const caught = await (await tb.runPython(`
from tensorbridge.bridge.js.host import JsCallbackError
async def _caught(f):
    try:
        await f()
    except JsCallbackError as e:
        return [e.language, e.foreign_class, e.message]
_caught`))(() => { throw new RangeError("late"); });
        const h0 = (await tb.handles()).count;
        for (let i = 0; i < 20; i++) await total((k) => k, 2);
        const h1 = (await tb.handles()).count;
        return { sum, onMain: [...new Set(onMain)], asyncFn, kind, err, caught, perCallUs,
          leak: h1 - h0 };
      });
      assert.equal(r.sum, 10 * (49 * 50) / 2);
      assert.deepEqual(r.onMain, ["object"]);  // ran on the page's main thread
      assert.equal(r.asyncFn, 3);
      assert.equal(r.kind, true);
      assert.equal(r.err.type, "JsCallbackError");
      assert.equal(r.err.jsType, "TypeError");
      assert.match(r.err.message, /thrown on the main thread/);
      assert.deepEqual(r.caught, ["js", "RangeError", "late"]);
      assert.equal(r.leak, 0);
      t.diagnostic(`async callback round trip: ${r.perCallUs.toFixed(1)} us per call`);
    });
    await p.close();
  });

test("demo page: a tb.layers model trains in the worker, the loss chart is drawn live from "
  + "fit callbacks, the main thread stays responsive, screenshot not blank",
  { timeout: 240000 }, async (t) => {
    const p = await page("/demo");  // without the slash: redirected to /demo/
    assert.match(p.url(), /\/demo\/$/);
    await p.waitForFunction(() => window.demoResult?.done, null, { timeout: 200000 });
    const r = await p.evaluate(() => window.demoResult);
    assert.equal(r.error, undefined, `${r.error}\n${p.logs.join("\n")}`);
    // the spinner stops after "done"; the chart has a legend and axis titles
    const spinner = await p.evaluate(() => {
      const s = getComputedStyle(document.getElementById("spinner"));
      return { display: s.display, animation: s.animationName,
        status: document.getElementById("status").textContent };
    });
    assert.match(spinner.status, /^done/);
    assert.equal(spinner.display, "none");
    assert.equal(spinner.animation, "none");
    assert.deepEqual(r.chart.legend.map((l) => l.label),
      ["batch loss", "epoch loss (training)", "validation loss"]);
    assert.match(r.chart.axes.x, /batch/);
    assert.match(r.chart.axes.y, /loss/);
    assert.ok(r.chart.drawn > 0);
    assert.ok(r.final < 0.35, `final loss ${r.final}`);
    assert.ok(r.callbacks >= 20, "progress callbacks reached the main thread");
    // every onBatchEnd / onEpochEnd event of fit() reached the page and became a chart point
    assert.equal(r.batchPoints, r.steps, `${r.batchPoints} batch points of ${r.steps}`);
    assert.equal(r.epochPoints, 30);
    assert.ok(r.valAccuracy > 0.9, `validation accuracy ${r.valAccuracy}`);
    assert.ok(r.frames > 10, "the page kept rendering frames while the worker trained");
    t.diagnostic(`boot ${r.bootMs.toFixed(0)} ms, training ${r.trainMs.toFixed(0)} ms, `
      + `longest frame gap ${r.longestGapMs.toFixed(1)} ms over ${r.frames} frames (${r.mode})`);
    assert.ok(r.longestGapMs < 250, `main thread blocked for ${r.longestGapMs} ms`);
    const png = path.join(outDir, "demo.png");
    await p.screenshot({ path: png });
    // non-blank: the page has many distinct colours (text, bar, plot), not one background
    const { data } = await p.evaluate(async () => {
      const c = document.getElementById("plot");
      const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      for (let i = 0; i < px.length; i += 4) if (px[i] < 200) ink++;
      return { data: ink };
    });
    assert.ok(data > 400, `loss curve has ${data} inked pixels`);
    const size = fs.statSync(png).size;
    assert.ok(size > 10000, `screenshot is ${size} bytes`);
    await p.close();
  });
