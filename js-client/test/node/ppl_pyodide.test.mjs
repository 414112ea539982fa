// MCMC in Pyodide: there is no NumPy, so the sampler keeps its bookkeeping in the runtime's
// pure-Python arrays while the model's log density and gradient run on TF.js (tfjs backend).
// Eight schools, non-centred, 2 chains x 200 warmup x 200 draws.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();

const EIGHT_SCHOOLS = `
import json as _json, math as _math, time as _time, warnings as _w
import tensorbridge as _tb
from tensorbridge.runtime import host_namespace as _ns

with _w.catch_warnings():
    _w.simplefilter("ignore")  # float64 is float32 on TF.js (PrecisionWarning)
    y = _tb.as_data([28., 8., -3., 7., -1., 1., 18., 12.])
    sigma = _tb.as_data([15., 10., 16., 11., 9., 11., 10., 18.])
    mu = _tb.normal(0.0, 5.0)
    tau = _tb.cauchy(0.0, 5.0, truncation=(0.0, _math.inf))
    eta = _tb.normal(0.0, 1.0, dim=8)
    theta = mu + tau * eta
    _tb.distribution(y, _tb.normal(theta, sigma))
    _m = _tb.model(mu, tau, eta)
    _t0 = _time.perf_counter()
    _d = _tb.mcmc(_m, n_samples=200, warmup=200, chains=2, seed=1, progress=False)
    _secs = _time.perf_counter() - _t0
    _s = _d.summary()
_json.dumps({
    "namespace": _ns.NAME, "backend": _m.backend.name, "seconds": _secs,
    "array_type": type(_d["mu"]).__module__ + "." + type(_d["mu"]).__name__,
    "shapes": {k: list(_d[k].shape) for k in ("mu", "tau", "eta")},
    "summary": _s.to_dict(), "printed": repr(_s), "divergences": _d.divergences,
    "tau_min": _d["tau"].min(),
})`;

test("the ppl exports are there without NumPy", async () => {
  const names = await tb.runPython(`
import importlib.util, tensorbridge as _tb
[importlib.util.find_spec("numpy") is None, callable(_tb.mcmc), callable(_tb.opt),
 hasattr(_tb.runtime.ppl, "Draws"), hasattr(_tb.runtime.ppl, "rhat")]`);
  assert.deepEqual(names, [true, true, true, true, true]);
  const mod = await tb.pyimport("tensorbridge");
  assert.equal(typeof (await mod.mcmc), "function");
});

test("eight schools (non-centred) samples on tfjs with pure-Python bookkeeping", async (t) => {
  const started = performance.now();
  const out = JSON.parse(await tb.runPython(EIGHT_SCHOOLS));
  const wallMs = performance.now() - started;
  t.diagnostic(`eight schools 2x(200+200): ${out.seconds.toFixed(1)} s in mcmc, ` +
               `${(wallMs / 1000).toFixed(1)} s wall`);
  assert.equal(out.namespace, "pure");
  assert.equal(out.backend, "tfjs");
  assert.equal(out.array_type, "tensorbridge.runtime.pure_arrays.ndarray");
  assert.deepEqual(out.shapes, { mu: [2, 200], tau: [2, 200], eta: [2, 200, 8] });
  const mu = out.summary.mu;
  // the posterior of mu: mean ~4.4, sd ~3.3 (Stan, long runs); 400 draws give ~0.2 of MC error
  assert.ok(Math.abs(mu.mean - 4.4) < 2.0, `mu mean ${mu.mean}`);
  assert.ok(mu.sd > 1.5 && mu.sd < 6.0, `mu sd ${mu.sd}`);
  assert.ok(mu.rhat < 1.1 && mu.ess_bulk > 50, JSON.stringify(mu));
  assert.ok(out.tau_min > 0);
  assert.ok(out.summary["eta[7]"].sd > 0.5);
  assert.ok(out.divergences < 20, `${out.divergences} divergences`);
  assert.match(out.printed, /^parameter\s+mean\s+sd\s+q5\s+q50\s+q95\s+rhat\s+ess_bulk/);
  assert.match(out.printed, /2 chains x 200 draws/);
});
