// Issue 16, inference, through the JS door (Pyodide, no NumPy: the interpreted sampler on the
// pure-Python arrays): greta's rwmh and slice samplers, hmc's lMin/lMax, extraSamples and the
// optimiser objects for opt(), camelCase.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();
const g = tb.ppl;

const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
const variance = (a) => { const m = mean(a); return a.reduce((s, v) => s + (v - m) ** 2, 0) / a.length; };

// normal(1, 2): its moments within Monte-Carlo error (ESS from the runtime's summary)
function checkNormal(draws, name) {
  const x = Array.from(draws.variables[name]);
  const ess = draws.summary().find((r) => r.variable === name).essBulk;
  assert.ok(ess > 100, `ess ${ess}`);
  assert.ok(Math.abs(mean(x) - 1) < 5 * 2 / Math.sqrt(ess), `mean ${mean(x)} (ess ${ess})`);
  assert.ok(Math.abs(variance(x) - 4) < 5 * 4 * Math.sqrt(2 / ess), `var ${variance(x)}`);
}

test("rwmh and slice sample a normal in JS, seeds reproduce", { timeout: 600000 }, async () => {
  const x = await g.normal(1, 2);
  const m = await g.model({ x });
  for (const sampler of [{ kind: "rwmh", proposal: "uniform", epsilon: 0.5 }, "rwmh",
    { kind: "slice", maxDoublings: 4 }]) {
    const opts = { nSamples: 1500, warmup: 300, chains: 2, seed: 7, sampler };
    const d = await tb.mcmc(m, opts);
    assert.equal(d.backend, "numpy");
    assert.deepEqual(d.shapes.x, [2, 1500]);
    checkNormal(d, "x");
    const again = await tb.mcmc(m, opts);
    assert.deepEqual(Array.from(again.variables.x), Array.from(d.variables.x));
  }
  await assert.rejects(tb.mcmc(m, { sampler: { kind: "rwmh", proposal: "cauchy" } }),
    /proposal: expected 'normal' or 'uniform'/);
});

test("extraSamples continues the chains: one longer run's draws", { timeout: 600000 },
  async () => {
    const x = await g.normal(1, 2);
    const m = await g.model({ x });
    const opts = { nSamples: 100, warmup: 200, chains: 2, seed: 4, backend: "numpy",
      sampler: { kind: "hmc", lMin: 2, lMax: 5 } };
    const first = await tb.mcmc(m, opts);
    const more = await g.extraSamples(first, { nSamples: 60 });
    assert.deepEqual(more.shapes.x, [2, 160]);
    const whole = await tb.mcmc(m, { ...opts, nSamples: 160 });
    assert.deepEqual(Array.from(more.variables.x), Array.from(whole.variables.x));
    assert.deepEqual(Array.from(more.chain("x", 1).subarray(0, 100)),
      Array.from(first.chain("x", 1)));
    await assert.rejects(g.extraSamples({}, { nSamples: 5 }), /extraSamples: draws must be/);
  });

test("greta's optimisers for opt(), camelCase", { timeout: 300000 }, async () => {
  const mu = await g.normal(0, 10);
  const y = await g.asData([1.2, 0.4, 2.2, 1.7]);
  await g.distribution(y, await g.normal(mu, 1));
  const m = await g.model({ mu });
  const mode = (1.2 + 0.4 + 2.2 + 1.7) / (4 + 0.01);
  for (const o of [g.adam({ learningRate: 0.1 }), g.bfgs(), g.nelderMead(),
    g.momentum({ learningRate: 0.01, useNesterov: false }), g.lBfgsB({ maxcor: 3 })]) {
    const r = await g.opt(m, { optimiser: o, maxIterations: 5000 });
    assert.ok(r.converged, o.name);
    assert.ok(Math.abs(r.par.mu[0] - mode) < 1e-3, `${o.name}: ${r.par.mu[0]} vs ${mode}`);
  }
  await assert.rejects(g.opt(m, { optimiser: g.adam({ learningRate: -1 }) }),
    /adam: learning_rate must be a positive number/);
  // greta's model(precision = "single"): float32 log density, the same mode to float32's
  const m32 = await g.model({ mu, precision: "single" });
  const r32 = await g.opt(m32, {});
  assert.ok(Math.abs(r32.par.mu[0] - mode) < 1e-4, `single: ${r32.par.mu[0]}`);
  await assert.rejects(g.model({ mu, precision: "half" }), /precision must be 'double' or 'single'/);
});
