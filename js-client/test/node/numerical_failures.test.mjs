// Issue 16, bugs, in the JavaScript sampler (Pyodide: the model's log density lowered to one
// JavaScript function, NUTS in runtime/compiled/sampler.js): a Cholesky factor that fails
// inside a proposal is a divergence, never an abort. LKJ(4, 2)'s off-diagonal r is
// 2 * Beta(4, 4) - 1 (mean 0, E r^2 = 1/9, E r^4 = 1/33); a covariance [[1, rho], [rho, 1]]
// with rho ~ uniform(-2, 2) is not positive definite for |rho| >= 1.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();

const LKJ = `
import json as _json
import tensorbridge as _tb
_out = []
for _seed in (1, 2, 3, 4, 5):
    _r = _tb.lkj_correlation(4.0, dimension=2)
    _d = _tb.mcmc(_tb.model(r=_r), n_samples=500, warmup=500, chains=4, seed=_seed,
                  progress=False)
    _x = [row[0][1] for chain in _d["r"].tolist() for row in chain]
    _s = _d.summary().to_dict()["r[0,1]"]
    _out.append({"backend": _d.backend, "n": len(_x), "ess": _s["ess_bulk"],
                 "mean": sum(_x) / len(_x), "m2": sum(v * v for v in _x) / len(_x),
                 "max_abs": max(abs(v) for v in _x)})
_json.dumps(_out)`;

test("an LKJ(4, 2) prior samples in JavaScript for seeds 1-5 with its analytic marginal",
  async () => {
    const runs = JSON.parse(await tb.runPython(LKJ));
    const m2 = 1 / 9, m4 = 1 / 33;
    for (const r of runs) {
      assert.equal(r.backend, "js");
      assert.equal(r.n, 2000);
      assert.ok(r.max_abs < 1);
      // within 4.5 Monte Carlo standard errors (from the bulk ESS of r)
      assert.ok(Math.abs(r.mean) / Math.sqrt(m2 / r.ess) < 4.5, JSON.stringify(r));
      assert.ok(Math.abs(r.m2 - m2) / Math.sqrt((m4 - m2 * m2) / r.ess) < 4.5,
        JSON.stringify(r));
    }
  });

const WALL = `
import json as _json
import tensorbridge as _tb
_y = [[0.9, 1.1], [-0.4, -0.1], [1.3, 0.8], [0.2, 0.6], [-1.0, -1.2], [0.5, 0.1]]
_rho = _tb.uniform(-2, 2)
_one = _tb.as_data([[1.0]])
_off = _tb.reshape(_rho, (1, 1))
_sigma = _tb.concat([_tb.concat([_one, _off], 1), _tb.concat([_off, _one], 1)], 0)
_tb.distribution(_tb.as_data(_y), _tb.multivariate_normal(_tb.as_data([[0.0, 0.0]]), _sigma,
                                                          n_realisations=6))
_d = _tb.mcmc(_tb.model(rho=_rho), n_samples=1000, warmup=500, chains=4, seed=7,
              progress=False)
_x = [v for chain in _d["rho"].tolist() for v in chain]
# the posterior's mean by quadrature on (-1, 1)
import math as _m
_s11 = sum(a * a for a, _ in _y); _s22 = sum(b * b for _, b in _y)
_s12 = sum(a * b for a, b in _y)
_g = [-1 + 2 * (k + 0.5) / 20000 for k in range(20000)]
_lp = [-3 * _m.log(1 - r * r) - 0.5 * (_s11 + _s22 - 2 * r * _s12) / (1 - r * r) for r in _g]
_top = max(_lp); _w = [_m.exp(v - _top) for v in _lp]; _tot = sum(_w)
_mean = sum(w * r for w, r in zip(_w, _g)) / _tot
_sd = _m.sqrt(sum(w * (r - _mean) ** 2 for w, r in zip(_w, _g)) / _tot)
_json.dumps({"backend": _d.backend, "max_abs": max(abs(v) for v in _x),
             "mean": sum(_x) / len(_x), "want": _mean, "sd": _sd,
             "ess": _d.summary().to_dict()["rho"]["ess_bulk"]})`;

test("a covariance that is not positive definite is a rejected proposal in JavaScript",
  async () => {
    const r = JSON.parse(await tb.runPython(WALL));
    assert.equal(r.backend, "js");
    assert.ok(r.max_abs < 1, JSON.stringify(r));
    assert.ok(Math.abs(r.mean - r.want) / (r.sd / Math.sqrt(r.ess)) < 4.5, JSON.stringify(r));
  });
