#!/usr/bin/env node
// Eight schools in headless Chromium (the runtime in a Web Worker of a cross-origin isolated
// page), for `make demo` (examples/showcase.py):
//   node scripts/eight_schools_browser.mjs [--chains 4] [--warmup 1000] [--samples 1000]
//        [--seed 42] [--out browser.json] [--timeout 900]
// Serves this package's folder on 127.0.0.1 (scripts/serve.mjs), opens
// demo/eight_schools.html with the options, prints progress, writes the summary JSON
// (mu, tau, theta[1..8]: mean, sd, q5, q95, rhat, ess_bulk; "index_base": 1) to --out and
// prints the table. Chromium: CHROMIUM_PATH or /usr/bin/chromium (playwright-core).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { table } from "../demo/eight_schools_model.js";
import { serve } from "./serve.mjs";

const { values: a } = parseArgs({ options: { chains: { type: "string", default: "4" },
  warmup: { type: "string", default: "1000" }, samples: { type: "string", default: "1000" },
  seed: { type: "string", default: "42" }, out: { type: "string" },
  timeout: { type: "string", default: "900" } } });
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const t0 = performance.now();
const server = await serve({ port: 0 });
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), "tb-eight-schools-"));
let context;
let code = 0;
try {
  context = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium", headless: true,
    args: FLAGS });
  const page = await context.newPage();
  const logs = [];
  page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  const query = new URLSearchParams({ chains: a.chains, warmup: a.warmup, samples: a.samples,
    seed: a.seed });
  await page.goto(`http://127.0.0.1:${server.address().port}/demo/eight_schools.html?${query}`);
  const deadline = Date.now() + 1000 * Number(a.timeout);
  let state, last = "";
  for (;;) {
    state = await page.evaluate(() => window.eightSchools && { done: window.eightSchools.done,
      progress: window.eightSchools.progress, result: window.eightSchools.result,
      error: window.eightSchools.error });
    if (state?.done) break;
    const p = state?.progress;
    const line = p ? `${p.phase} ${p.iteration}/${p.total}` : "booting";
    if (line !== last) { process.stderr.write(`\rbrowser: ${line.padEnd(24)}`); last = line; }
    if (Date.now() > deadline) throw new Error(`timed out after ${a.timeout} s (${line})`);
    await new Promise((r) => setTimeout(r, 250));
  }
  process.stderr.write("\n");
  if (state.error) throw new Error(`${state.error}\n${logs.join("\n")}`);
  const result = { ...state.result, wall_seconds: (performance.now() - t0) / 1000 };
  console.log(table(result));
  console.log(`browser run: ${result.wall_seconds.toFixed(1)} s wall (Chromium start, boot, `
    + `sampling ${result.seconds.toFixed(1)} s)`);
  if (a.out) fs.writeFileSync(a.out, JSON.stringify(result, null, 1));
} catch (e) {
  console.error(`eight_schools_browser: ${e.message}`);
  code = 1;
} finally {
  await context?.close();
  server.close();
  fs.rmSync(userDir, { recursive: true, force: true });
}
process.exit(code);
