#!/usr/bin/env node
// Eight schools from JavaScript (Node: Pyodide in this process, kernels on TF.js):
//   node examples/eight_schools.mjs [--chains 4] [--warmup 1000] [--samples 1000] [--seed 42]
//                                   [--out summary.json]
// Prints the posterior summary (mu, tau, theta[1..8]); --out writes it as JSON (the format of
// examples/eight_schools.py, read by examples/showcase.py). The browser version:
// scripts/eight_schools_browser.mjs.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { run, table } from "../demo/eight_schools_model.js";
import { loadTensorBridge } from "../src/index.js";

const { values: a } = parseArgs({ options: { chains: { type: "string", default: "4" },
  warmup: { type: "string", default: "1000" }, samples: { type: "string", default: "1000" },
  seed: { type: "string", default: "42" }, out: { type: "string" } } });
const tb = await loadTensorBridge();
let lastPrint = 0;
const result = await run(tb, { chains: +a.chains, warmup: +a.warmup, samples: +a.samples,
  seed: +a.seed, language: "JavaScript (Node)",
  onProgress: ({ iteration, total, phase }) => {
    const now = performance.now();
    if (now - lastPrint > 500 || iteration === total) {
      lastPrint = now;
      process.stderr.write(`\r${phase.padStart(8)} ${iteration}/${total}`);
      if (iteration === total) process.stderr.write("\n");
    }
  } });
console.log(table(result));
if (a.out) fs.writeFileSync(a.out, JSON.stringify(result, null, 1));
await tb.close();
