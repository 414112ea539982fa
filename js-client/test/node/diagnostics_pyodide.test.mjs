// Draws.summary() in Pyodide (no NumPy): R-hat, bulk and tail ESS and the quantiles of 4 chains
// x 2000 draws of eight schools' 10 parameters. The diagnostics' algorithm is diagnostics.py's;
// its FFT autocovariances and inverse normal CDF run in JavaScript (runtime/compiled/tb_stats.js)
// and the rest on flat Python lists, so the table takes well under a second rather than the
// ~30 s the per-element pure-Python arrays took.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();

const SUMMARY = `
import json as _json, math as _math, time as _time
import tensorbridge as _tb
from tensorbridge.runtime import host_namespace as _ns
from tensorbridge.runtime.ppl import diagnostics as _diag

y = _tb.as_data([28., 8., -3., 7., -1., 1., 18., 12.])
sigma = _tb.as_data([15., 10., 16., 11., 9., 11., 10., 18.])
mu = _tb.normal(0.0, 5.0)
tau = _tb.cauchy(0.0, 5.0, truncation=(0.0, _math.inf))
eta = _tb.normal(0.0, 1.0, dim=8)
_tb.distribution(y, _tb.normal(mu + tau * eta, sigma))
_m = _tb.model(mu, tau, eta)
_d = _tb.mcmc(_m, n_samples=2000, warmup=500, chains=4, seed=1, progress=False)
_t0 = _time.perf_counter()
_s = _d.summary()
_secs = _time.perf_counter() - _t0
# the same chains with the first chain shifted: R-hat must see it
_x = _d["mu"]
_shift = _ns.xp.asarray([[v + (20.0 if c == 0 else 0.0) for v in row]
                         for c, row in enumerate(_x.tolist())])
_kernels = _diag._kernel_name()
# the same diagnostics on the pure-Python kernels (what an interpreter without JavaScript runs)
_diag._JS[:] = [None]
try:
    _py = {k: {"rhat": _diag.rhat(_d[k]), "ess_bulk": _diag.ess_bulk(_d[k]),
               "ess_tail": _diag.ess_tail(_d[k])} for k in ("mu", "tau")}
    _py_kernels = _diag._kernel_name()
finally:
    _diag._JS[:] = []
_json.dumps({
    "namespace": _ns.NAME, "kernels": _kernels, "seconds": _secs,
    "summary": _s.to_dict(), "names": _s.names, "shifted_rhat": _diag.rhat(_shift),
    "python": _py, "python_kernels": _py_kernels, "kernels_after": _diag._kernel_name(),
})`;

test("summary() of 4 x 2000 draws of 10 parameters takes well under 3 s", async (t) => {
  const out = JSON.parse(await tb.runPython(SUMMARY));
  t.diagnostic(`summary() of 4 x 2000 x 10: ${out.seconds.toFixed(3)} s (${out.kernels})`);
  assert.equal(out.namespace, "pure");
  assert.equal(out.kernels, "js");
  assert.ok(out.seconds < 3.0, `summary() took ${out.seconds} s`);
  assert.equal(out.names.length, 10);
  for (const name of out.names) {
    const r = out.summary[name];
    assert.ok(r.q5 < r.q50 && r.q50 < r.q95, `${name}: ${JSON.stringify(r)}`);
    // a converged run: R-hat near 1, ESS of hundreds to thousands of the 8000 draws
    assert.ok(r.rhat > 0.99 && r.rhat < 1.02, `${name}: ${JSON.stringify(r)}`);
    assert.ok(r.ess_bulk > 400 && r.ess_bulk < 20000, `${name}: ${JSON.stringify(r)}`);
    assert.ok(r.ess_tail > 300 && r.ess_tail < 20000, `${name}: ${JSON.stringify(r)}`);
  }
  const mu = out.summary.mu;
  assert.ok(Math.abs(mu.mean - 4.4) < 0.5 && Math.abs(mu.sd - 3.3) < 0.5, JSON.stringify(mu));
  assert.ok(out.summary.tau.q5 > 0);
  assert.ok(out.shifted_rhat > 1.5, `shifted chains: R-hat ${out.shifted_rhat}`);
  // JavaScript and Python kernels: each within a few ulps of NumPy/SciPy elementwise, and
  // R-hat and the ESS sum 8000 terms, so they agree within 2 gamma(8000) ~ 1.8e-12 relative
  assert.equal(out.python_kernels, "python");
  assert.equal(out.kernels_after, "js");
  for (const name of ["mu", "tau"]) {
    for (const col of ["rhat", "ess_bulk", "ess_tail"]) {
      const js = out.summary[name][col];
      const py = out.python[name][col];
      assert.ok(Math.abs(js - py) <= 1.8e-12 * Math.abs(py), `${name} ${col}: ${js} vs ${py}`);
    }
  }
});
