// The conformance table (tests/conformance/*.json) through the JS door in a browser: the same
// rows and the same replayer (../conformance.mjs) as the Node door, run inside a Chromium page
// whose runtime lives in a Web Worker (cross-origin isolated: synchronous page callbacks). Also
// issue 12's browser item that is not a row: with the runtime on the page ({worker: false}) a
// view() of tensor data stays valid when the WASM heap grows.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, test } from "node:test";
import { serve } from "../../scripts/serve.mjs";
import { launchChromium } from "./chromium.mjs";

const DIR = new URL("../../../tests/conformance/", import.meta.url);
let server, context, base;

before(async () => {
  server = await serve({ port: 0 });
  base = `http://127.0.0.1:${server.address().port}`;
  context = await launchChromium();
});

after(async () => {
  await context?.close();
  server?.close();
});

function readTables() {
  const out = {};
  for (const f of fs.readdirSync(DIR).filter((n) => n.endsWith(".json")).sort()) {
    out[f.slice(0, -5)] = fs.readFileSync(new URL(f, DIR), "utf8");
  }
  return out;
}

test("conformance table, js/browser door", { timeout: 300000 }, async (t) => {
  const p = await context.newPage();
  const logs = [];
  p.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
  p.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  await p.goto(`${base}/test/browser/page.html`);
  const info = await p.evaluate(() => window.tbReady);
  assert.equal(info.mode, "worker+sab", `logs: ${logs.join("\n")}`);
  const tables = readTables();
  const r = await p.evaluate(async (tabs) => {
    const { replay } = await import("/test/conformance.mjs");
    return replay(window.tb, tabs, "js/browser");
  }, tables);
  for (const s of r.skipped) t.diagnostic(`skipped ${s}`);
  console.log(r.summary);
  assert.ok(r.ran > 0);
  assert.equal(r.failed, 0, `${r.summary}\n${r.failures.join("\n")}`);
  await p.close();
});

test("runtime on the page: a view() of tensor data survives the WASM heap growing",
  { timeout: 240000 }, async () => {
    const p = await context.newPage();
    const logs = [];
    p.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
    p.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
    await p.goto(`${base}/test/browser/page_inpage.html`);
    const info = await p.evaluate(() => window.tbReady);
    assert.equal(info.mode, "page", `logs: ${logs.join("\n")}`);
    const r = await p.evaluate(async () => {
      const heap = () => tf.backend().wasm.HEAPU8.buffer;
      const x = await tb.tensor(new Float32Array([1, 2, 3]));
      const v = await x.view();
      const first = v.data, before = heap().byteLength;
      const big = await tb.zeros([Math.ceil(before / 4) + 1024]);  // TF.js grows the heap
      const out = { isView: v.view, grew: heap().byteLength > before,
        oldDetached: first.buffer.byteLength === 0, values: Array.from(v.data),
        onNewHeap: v.data.buffer === heap(), backend: tf.getBackend() };
      big.dispose(); v.release(); x.dispose();
      return out;
    });
    assert.deepEqual(r, { isView: true, grew: true, oldDetached: true, values: [1, 2, 3],
      onNewHeap: true, backend: "wasm" });
    await p.close();
  });
