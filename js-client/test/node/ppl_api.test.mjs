// tb.ppl / tb.mcmc from JavaScript (issue #7): eight schools written in JS with the Python names,
// draws as Float64Arrays with shapes, the summary table, progress events, AbortSignal (keeps the
// draws so far), errors from the progress callback, calculate() over the draws.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();
const ref = JSON.parse(fs.readFileSync(new URL("../../../tests/fixtures/shared/eight_schools.json",
  import.meta.url), "utf8"));

async function eightSchools() {
  const g = tb.ppl;
  const y = await g.asData(ref.data.y);
  const sigma = await g.asData(new Float64Array(ref.data.sigma));
  const mu = await g.normal(0, 5);
  const tau = await g.cauchy(0, 5, { truncation: [0, Infinity] });
  const eta = await g.normal(0, 1, { dim: 8 });
  const theta = await tb.add(mu, await tb.mul(tau, eta));
  await g.distribution(y, await g.normal(theta, sigma));
  return { m: await g.model({ mu, tau, eta, theta }), theta };
}

test("eight schools from JS: draws, shapes, summary, progress", { timeout: 300000 }, async () => {
  const { m, theta } = await eightSchools();
  const progress = [];
  const draws = await tb.mcmc(m, { nSamples: 200, warmup: 200, chains: 2, seed: 42,
    callbackEvery: 20, onProgress: (p) => progress.push(p) });
  assert.deepEqual(Object.keys(draws.variables).sort(), ["eta", "mu", "tau", "theta"]);
  assert.deepEqual(draws.shapes.mu, [2, 200]);
  assert.deepEqual(draws.shapes.theta, [2, 200, 8]);
  assert.ok(draws.variables.theta instanceof Float64Array);
  assert.equal(draws.variables.theta.length, 2 * 200 * 8);
  assert.equal(draws.chain("mu", 1).length, 200);
  assert.equal(draws.interrupted, false);
  assert.equal(draws.chains, 2);
  assert.equal(draws.nDraws, 200);
  // progress: every 20 iterations, warmup then sampling, up to the total
  assert.equal(progress.length, 20);
  assert.deepEqual(progress.map((p) => p.iteration), Array.from({ length: 20 }, (_, i) => 20 * (i + 1)));
  assert.equal(progress[0].phase, "warmup");
  assert.equal(progress.at(-1).phase, "sampling");
  assert.equal(progress.at(-1).total, 400);
  assert.ok(progress.every((p) => typeof p.elapsed === "number" && p.divergences >= 0));
  // the runtime's McmcProgress fields, named for JS (R reads the same fields in snake_case)
  assert.deepEqual(Object.keys(progress[0]).sort(),
    ["divergences", "elapsed", "iteration", "phase", "total", "warmupDivergences"]);
  assert.ok(progress.every((p) => p.warmupDivergences <= p.divergences));
  // the summary: one row per scalar, the columns of Python's Summary in camelCase
  const rows = draws.summary();
  assert.equal(rows.length, 2 + 8 + 8);
  const row = rows.find((r) => r.variable === "mu");
  assert.deepEqual(Object.keys(row), ["variable", "mean", "sd", "q5", "q50", "q95", "rhat",
    "essBulk", "essTail"]);
  assert.ok(rows.some((r) => r.variable === "theta[7]"));
  for (const name of ["mu", "tau"]) {
    const r = rows.find((x) => x.variable === name), want = ref.reference.posterior[name];
    assert.ok(Math.abs(r.mean - want.mean) < 4 * want.sd / Math.sqrt(r.essBulk) + 0.5,
      `${name}: mean ${r.mean} vs reference ${want.mean}`);
    assert.ok(r.rhat < 1.1, `${name}: rhat ${r.rhat}`);
  }
  // the same draws of mu computed by the Python mean
  const mu = draws.variables.mu;
  const mean = mu.reduce((a, b) => a + b, 0) / mu.length;
  assert.ok(Math.abs(mean - row.mean) < 1e-9);
  // calculate(): theta over the posterior draws equals the traced theta
  const th = await tb.ppl.calculate(theta, draws);
  assert.ok(th.data instanceof Float64Array);
  assert.deepEqual(th.shape, draws.shapes.theta);
  for (const i of [0, 1, th.data.length - 1]) {
    assert.ok(Math.abs(th.data[i] - draws.variables.theta[i]) < 1e-4);
  }
});

test("AbortSignal stops sampling and keeps the draws so far; a throwing onProgress rejects",
  { timeout: 300000 }, async () => {
    const { m } = await eightSchools();
    const ac = new AbortController();
    const draws = await tb.mcmc(m, { nSamples: 5000, warmup: 50, chains: 2, seed: 1,
      callbackEvery: 10, signal: ac.signal,
      onProgress: ({ iteration }) => { if (iteration >= 120) ac.abort(); } });
    assert.equal(draws.interrupted, true);
    // the stop is read between blocks of iterations (about 50 ms of sampling each): the run
    // ends at the end of the block in which iteration 120 was reported
    assert.ok(draws.nDraws >= 70 && draws.nDraws < 2000, `kept ${draws.nDraws} draws`);
    assert.equal(draws.variables.mu.length, 2 * draws.nDraws);
    assert.ok(draws.summary().length > 0);
    // already aborted: no draws, interrupted
    const none = await tb.mcmc(m, { nSamples: 100, warmup: 100, chains: 2, seed: 4,
      signal: ac.signal });
    assert.equal(none.nDraws, 0);
    assert.equal(none.interrupted, true);
    assert.deepEqual(none.summary(), []);
    let calls = 0;
    await assert.rejects(tb.mcmc(m, { nSamples: 1000, warmup: 1000, chains: 2, seed: 5,
      callbackEvery: 5,
      onProgress: () => { calls++; throw new TypeError("progress failed"); } }),
    /progress failed/);
    assert.equal(calls, 1);
  });

test("variables, data from typed arrays, hmc sampler, errors with Python's message",
  { timeout: 300000 }, async () => {
    const g = tb.ppl;
    const x = await g.asData({ data: new Float64Array([0.5, 1.5, 1.0, 2.0]), shape: [4] });
    const s = await g.variable({ lower: 0, name: "s" });
    const loc = await g.normal(0, 10);
    await g.distribution(x, await g.normal(loc, s));
    const m = await g.model({ loc, s });
    const d = await tb.mcmc(m, { nSamples: 100, warmup: 100, chains: 2, seed: 3,
      sampler: { kind: "hmc", nLeapfrog: 8 } });
    assert.deepEqual(Object.keys(d.variables).sort(), ["loc", "s"]);
    assert.ok(d.variables.s.every((v) => v > 0));
    await assert.rejects(g.normal(0, 1, { dim: -1 }), /dim/);
    await assert.rejects(tb.mcmc(m, { chains: 0, seed: 1 }), /chains: expected an integer >= 1/);
  });

test("lazy arrays print their unknown values as ?", async () => {
  const g = tb.ppl;
  const mu = await g.normal(0, 1);
  const known = await g.asData([1.5, 2]);
  const sum = await tb.add(mu, known);
  const text = await g.format(sum);
  assert.match(text, /operation/);
  assert.match(text, /\[\?, \?\]/);
  assert.match(await g.format(known), /\[1\.5, 2\]/);
  await assert.rejects(g.format(3), /format: x must be a lazy array/);
});

test("simulate: prior predictive and posterior predictive from the draws", { timeout: 300000 },
  async () => {
    const g = tb.ppl;
    const mu = await g.normal(0, 5);
    const y = await g.asData(new Float64Array([1, 2, 3, 2.5]));
    await g.distribution(y, await g.normal(mu, 1));
    const prior = await g.simulate(mu, { nsim: 2000, seed: 1 });
    assert.deepEqual(prior.shape, [2000]);
    const sd = Math.sqrt(prior.data.reduce((a, x) => a + x * x, 0) / 2000);
    assert.ok(Math.abs(sd - 5) < 0.5, `prior sd ${sd}`);
    const draws = await tb.mcmc(await g.model({ mu }), { nSamples: 200, warmup: 200, chains: 2,
      seed: 3 });
    const pp = await g.simulate(y, { values: draws, nsim: 100, seed: 2 });
    assert.deepEqual(pp.shape, [100, 4]);
    const mean = pp.data.reduce((a, x) => a + x, 0) / pp.data.length;
    assert.ok(Math.abs(mean - 2.1) < 0.6, `posterior predictive mean ${mean}`);
    const every = await g.simulate(y, { values: draws });
    assert.deepEqual(every.shape, [400, 4]);
    await assert.rejects(g.simulate(mu, { nsim: -1 }), /nsim/);
    await assert.rejects(g.simulate(3), /simulate: target must be a lazy array/);
    draws.dispose();
  });

test("opt: the posterior mode by variable name, with the runtime's options in camelCase",
  { timeout: 300000 }, async () => {
    const g = tb.ppl;
    const x = await g.asData([1, 2, 3, 4]);
    const loc = await g.normal(0, 100);
    await g.distribution(x, await g.normal(loc, 1));
    const m = await g.model({ loc });
    const r = await g.opt(m, { maxIterations: 200, tolerance: 1e-10 });
    assert.ok(r.converged);
    assert.ok(r.par.loc instanceof Float64Array);
    assert.deepEqual(r.shapes.loc, []);
    assert.ok(Math.abs(r.par.loc[0] - 2.5) < 1e-3, `mode ${r.par.loc[0]}`);
    await assert.rejects(g.opt(m, { optimiser: "newton" }), /optimiser/);
  });

test("argument errors name the argument in camelCase (the spec's naming rule)", async () => {
  const g = tb.ppl;
  await assert.rejects(g.multivariateNormal([0, 0], [[1, 0], [0, 1]], { nRealisations: 0 }),
    /multivariateNormal: nRealisations must be a positive whole number/);
  await assert.rejects(g.normal(0, "x"), /normal: sd must be a number/);
});
