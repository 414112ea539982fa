// MCMC in Pyodide: there is no NumPy. Models are made on the runtime's pure-Python float64
// backend (TF.js has no float64), their log density and gradient are lowered to one JavaScript
// function, and NUTS runs in JavaScript (runtime/compiled/sampler.js); the draws come back in
// the runtime's pure-Python arrays. Eight schools, non-centred.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();

const MODEL = `
import json as _json, math as _math, time as _time, warnings as _w
import tensorbridge as _tb
from tensorbridge.runtime import host_namespace as _ns

y = _tb.as_data([28., 8., -3., 7., -1., 1., 18., 12.])
sigma = _tb.as_data([15., 10., 16., 11., 9., 11., 10., 18.])
mu = _tb.normal(0.0, 5.0)
tau = _tb.cauchy(0.0, 5.0, truncation=(0.0, _math.inf))
eta = _tb.normal(0.0, 1.0, dim=8)
theta = mu + tau * eta
_tb.distribution(y, _tb.normal(theta, sigma))
_m = _tb.model(mu, tau, eta)
`;

const EIGHT_SCHOOLS = MODEL + `
with _w.catch_warnings():
    _w.simplefilter("error")  # float64 throughout: no PrecisionWarning, no fallback warning
    _t0 = _time.perf_counter()
    _d = _tb.mcmc(_m, n_samples=2000, warmup=2000, chains=4, seed=1, progress=False)
    _secs = _time.perf_counter() - _t0
    _s = _d.summary()
_json.dumps({
    "namespace": _ns.NAME, "backend": _m.backend.name, "sampler": _d.backend,
    "dtype": _m.dtype.name, "seconds": _secs,
    "array_type": type(_d["mu"]).__module__ + "." + type(_d["mu"]).__name__,
    "shapes": {k: list(_d[k].shape) for k in ("mu", "tau", "eta")},
    "summary": _s.to_dict(), "printed": repr(_s), "divergences": _d.divergences,
    "tau_min": _d["tau"].min(),
})`;

// the same chains from the JavaScript sampler and from the reference sampler the C and JS
// samplers port (chains.run_chains, here on pure-Python arrays): the same Philox streams and
// float64 densities that differ by ulps (V8's Math against the python backend's math module),
// so the first iterations agree to rounding before the trajectories drift apart
const AGREE = MODEL + `
_kw = dict(n_samples=8, warmup=12, chains=2, seed=7, progress=False)
_js = _tb.mcmc(_m, backend="compiled", **_kw)
_ref = _tb.mcmc(_m, backend="numpy", **_kw)
_a, _b = _js.free.tolist(), _ref.free.tolist()
_flat = lambda x: [v for c in x for row in c for v in row]
_diff = max(abs(p - q) / max(1.0, abs(q)) for p, q in zip(_flat(_a), _flat(_b)))
_json.dumps({"backends": [_js.backend, _ref.backend], "diff": _diff,
             "steps": [list(map(float, _js.warmup["step_size"])),
                       list(map(float, _ref.warmup["step_size"]))]})`;

test("the ppl exports are there without NumPy", async () => {
  const names = await tb.runPython(`
import importlib.util, tensorbridge as _tb
[importlib.util.find_spec("numpy") is None, callable(_tb.mcmc), callable(_tb.opt),
 hasattr(_tb.runtime.ppl, "Draws"), hasattr(_tb.runtime.ppl, "rhat")]`);
  assert.deepEqual(names, [true, true, true, true, true]);
  const mod = await tb.pyimport("tensorbridge");
  assert.equal(typeof (await mod.mcmc), "function");
});

test("eight schools (non-centred) samples in JavaScript, in float64", async (t) => {
  const started = performance.now();
  const out = JSON.parse(await tb.runPython(EIGHT_SCHOOLS));
  const wallMs = performance.now() - started;
  t.diagnostic(`eight schools 4x(2000+2000): ${out.seconds.toFixed(1)} s in mcmc, ` +
               `${(wallMs / 1000).toFixed(1)} s wall`);
  assert.equal(out.namespace, "pure");
  assert.equal(out.backend, "python");
  assert.equal(out.dtype, "float64");
  assert.equal(out.sampler, "js");
  assert.equal(out.array_type, "tensorbridge.runtime.backends.python_arrays.ndarray");
  assert.deepEqual(out.shapes, { mu: [4, 2000], tau: [4, 2000], eta: [4, 2000, 8] });
  const mu = out.summary.mu;
  // the posterior of mu: mean ~4.4, sd ~3.3 (posteriordb's reference, long runs); with an
  // ESS of thousands the Monte Carlo error of the mean is ~0.05, of the sd ~0.05
  assert.ok(Math.abs(mu.mean - 4.4) < 0.4, `mu mean ${mu.mean}`);
  assert.ok(Math.abs(mu.sd - 3.3) < 0.4, `mu sd ${mu.sd}`);
  assert.ok(mu.rhat < 1.01 && mu.ess_bulk > 2000, JSON.stringify(mu));
  assert.ok(out.tau_min > 0);
  assert.ok(out.summary["eta[7]"].sd > 0.5);
  assert.ok(out.divergences < 20, `${out.divergences} divergences`);
  assert.match(out.printed, /^parameter\s+mean\s+sd\s+q5\s+q50\s+q95\s+rhat\s+ess_bulk/);
  assert.match(out.printed, /4 chains x 2000 draws/);
});

test("the JavaScript sampler follows the reference sampler's chains to rounding", async () => {
  const out = JSON.parse(await tb.runPython(AGREE));
  assert.deepEqual(out.backends, ["js", "numpy"]);
  // 20 iterations (step-size search, adaptation, draws) on the same random numbers
  assert.ok(out.diff < 1e-9, `largest relative difference ${out.diff}`);
  for (let c = 0; c < 2; c++) {
    assert.ok(Math.abs(out.steps[0][c] - out.steps[1][c]) < 1e-9 * out.steps[1][c]);
  }
});

// models that needed NumPy or float64 before: a multivariate normal with a fixed covariance
// (its Cholesky factor), an LKJ prior, a Dirichlet-multinomial, gamma/beta shapes (lgamma,
// digamma in the gradient) and a logistic regression, each sampled in JavaScript
const ZOO = `
import json as _json, random as _random
import tensorbridge as _tb

def _mvn():
    mu = _tb.normal(0, 3, dim=2)
    _tb.distribution(_tb.as_data([[0.1, 1.2], [0.5, 0.7], [-0.3, 1.9]]),
                     _tb.multivariate_normal(mu, [[1.0, 0.5], [0.5, 2.0]], dimension=2))
    return _tb.model(mu=mu), "mu", [0.1, 1.2667]

def _lkj():
    return _tb.model(L=_tb.lkj_correlation(2.0, dimension=3)), None, None

def _dirichlet():
    p = _tb.dirichlet([1.0, 2.0, 3.0])
    _tb.distribution(_tb.as_data([[2, 3, 5]]), _tb.multinomial(10, p, dimension=3))
    return _tb.model(p=p), "p", [3 / 16, 5 / 16, 8 / 16]

def _beta():
    a = _tb.variable(lower=0.0)
    b = _tb.variable(lower=0.0)
    _tb.distribution(_tb.as_data([0.2, 0.4, 0.3, 0.35]), _tb.beta(a, b))
    return _tb.model(a=a, b=b), None, None

def _logistic():
    _random.seed(1)
    x = [[_random.gauss(0, 1) for _ in range(3)] for _ in range(50)]
    y = [float(_random.random() < 0.5) for _ in range(50)]
    beta = _tb.normal(0, 1, dim=3)
    _tb.distribution(_tb.as_data(y), _tb.bernoulli(_tb.sigmoid(_tb.as_data(x) @ beta)))
    return _tb.model(beta=beta), None, None

_out = {}
for _name, _build in [("mvn", _mvn), ("lkj", _lkj), ("dirichlet", _dirichlet), ("beta", _beta),
                      ("logistic", _logistic)]:
    _m, _var, _mean = _build()
    _d = _tb.mcmc(_m, n_samples=1000, warmup=500, chains=2, seed=3, progress=False)
    _means = None
    if _var is not None:
        _v = _d[_var].tolist()
        _flat = [row for chain in _v for row in chain]
        _means = [sum(r[k] for r in _flat) / len(_flat) for k in range(len(_mean))]
    _out[_name] = {"backend": _d.backend, "dtype": _m.dtype.name, "means": _means,
                   "want": _mean,
                   # constant entries (the LKJ factor's first row) have no R-hat
                   "rhat": max((r["rhat"] for r in _d.summary().to_dict().values()
                                if r["rhat"] == r["rhat"]), default=0.0)}
_json.dumps(_out)`;

test("multivariate normal, LKJ, Dirichlet, beta and logistic models sample in JavaScript",
  async () => {
    const out = JSON.parse(await tb.runPython(ZOO));
    for (const [name, r] of Object.entries(out)) {
      assert.equal(r.backend, "js", `${name} sampled with ${r.backend}`);
      assert.equal(r.dtype, "float64");
      assert.ok(r.rhat < 1.05, `${name}: R-hat ${r.rhat}`);
    }
    // conjugate posteriors: the mean of mu (flat-ish normal prior, known covariance) is near the
    // data mean; Dirichlet(1, 2, 3) + counts (2, 3, 5) is Dirichlet(3, 5, 8)
    out.mvn.means.forEach((m, k) => assert.ok(Math.abs(m - out.mvn.want[k]) < 0.25,
      `mvn mean ${m} vs ${out.mvn.want[k]}`));
    out.dirichlet.means.forEach((m, k) => assert.ok(Math.abs(m - out.dirichlet.want[k]) < 0.03,
      `dirichlet mean ${m} vs ${out.dirichlet.want[k]}`));
  });
