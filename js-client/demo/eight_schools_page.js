// Eight schools on a page: the sampler runs in the worker, progress arrives here (fire-and-forget
// events). window.eightSchools holds {done, result | error} for scripts/eight_schools_browser.mjs.
import { loadTensorBridge } from "../src/index.js";
import { run, table } from "./eight_schools_model.js";

const $ = (id) => document.getElementById(id);
const state = { done: false, progress: null };
window.eightSchools = state;
const q = new URLSearchParams(location.search);
const opt = (k, d) => Number(q.get(k) ?? d);
try {
  const tb = await loadTensorBridge();
  state.bootMs = tb.info.bootMs;
  $("status").textContent = "sampling…";
  const result = await run(tb, { chains: opt("chains", 4), warmup: opt("warmup", 1000),
    samples: opt("samples", 1000), seed: opt("seed", 42), language: "JavaScript (browser)",
    onProgress: (p) => {
      state.progress = p;
      $("bar").firstElementChild.style.width = `${((100 * p.iteration) / p.total).toFixed(1)}%`;
      $("status").textContent = `${p.phase} ${p.iteration} / ${p.total}`;
    } });
  $("table").textContent = table(result);
  $("status").textContent = `done in ${result.seconds.toFixed(1)} s`;
  Object.assign(state, { done: true, result });
} catch (e) {
  $("status").textContent = `failed: ${e.message}`;
  Object.assign(state, { done: true, error: String(e.stack || e) });
}
