// Issue 16 through the JS door (Pyodide, no NumPy): wishart, f, hypergeometric,
// dirichletMultinomial, mixture(), joint() and the links, camelCase; moments of simulations
// and of NUTS draws (the JavaScript sampler) against their analytic values.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();
const g = tb.ppl;

const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;

test("the new distributions and links are there, camelCase", () => {
  for (const n of ["wishart", "f", "hypergeometric", "dirichletMultinomial", "mixture", "joint",
    "iprobit", "icloglog", "icauchit", "imultilogit"]) {
    assert.equal(typeof g[n], "function", n);
  }
});

test("wishart: NUTS draws in JavaScript have the analytic mean", { timeout: 300000 }, async () => {
  const S = [[2, 0.3], [0.3, 1]];
  const w = await g.wishart(6, S);
  const draws = await tb.mcmc(await g.model({ w }), { nSamples: 1000, warmup: 500, chains: 2,
    seed: 3 });
  assert.deepEqual(draws.shapes.w, [2, 1000, 2, 2]);
  const x = draws.variables.w;
  const at = (i, j) => Array.from({ length: x.length / 4 }, (_, d) => x[4 * d + 2 * i + j]);
  for (const [i, j] of [[0, 0], [1, 0], [1, 1]]) {
    const sd = Math.sqrt(6 * (S[i][j] ** 2 + S[i][i] * S[j][j]));
    const row = draws.summary().find((r) => r.variable === `w[${i}, ${j}]`);
    const ess = row ? row.essBulk : 200;
    assert.ok(Math.abs(mean(at(i, j)) - 6 * S[i][j]) < 5 * sd / Math.sqrt(ess),
      `w[${i},${j}]: ${mean(at(i, j))} vs ${6 * S[i][j]}`);
  }
  assert.equal(draws.divergences, 0);
  await assert.rejects(g.wishart(1, [[1, 0], [0, 1]]), /wishart: df must be greater than K - 1/);
});

test("f, hypergeometric, dirichletMultinomial: simulations have their moments",
  { timeout: 300000 }, async () => {
    const f = await g.f(4, 12, { dim: 2 });
    const fs = await g.simulate(f, { nsim: 8000, seed: 1 });
    assert.deepEqual(fs.shape, [8000, 2]);
    const varF = 2 * 144 * 14 / (4 * 100 * 8);
    assert.ok(Math.abs(mean(fs.data) - 1.2) < 5 * Math.sqrt(varF / fs.data.length));
    const h = await g.simulate(await g.hypergeometric(10, 7, 8), { nsim: 8000, seed: 2 });
    assert.ok(Math.abs(mean(h.data) - 80 / 17) < 0.05);
    assert.ok(h.data.every((v) => Number.isInteger(v) && v >= 1 && v <= 8));
    const dm = await g.simulate(await g.dirichletMultinomial(12, [0.5, 1, 2.5]),
      { nsim: 4000, seed: 3 });
    assert.deepEqual(dm.shape, [4000, 3]);
    for (let r = 0; r < 4000; r++) {
      assert.equal(dm.data[3 * r] + dm.data[3 * r + 1] + dm.data[3 * r + 2], 12);
    }
  });

test("mixture() and joint(): shapes and means", { timeout: 300000 }, async () => {
  const a = await g.mixture(await g.normal(-2, 1), await g.normal(3, 1), { weights: [1, 3],
    dim: 4 });
  const sa = await g.simulate(a, { nsim: 4000, seed: 4 });
  assert.deepEqual(sa.shape, [4000, 4]);
  assert.ok(Math.abs(mean(sa.data) - (0.25 * -2 + 0.75 * 3)) < 0.1);
  const j = await g.joint(await g.normal(-3, 0.5), await g.normal(3, 0.5), { dim: 5 });
  const draws = await tb.mcmc(await g.model({ j }), { nSamples: 500, warmup: 300, chains: 2,
    seed: 5 });
  assert.deepEqual(draws.shapes.j, [2, 500, 5, 2]);
  const x = draws.variables.j;
  const col = (c) => Array.from({ length: x.length / 2 }, (_, d) => x[2 * d + c]);
  assert.ok(Math.abs(mean(col(0)) + 3) < 0.1);
  assert.ok(Math.abs(mean(col(1)) - 3) < 0.1);
  await assert.rejects(g.mixture(await g.normal(0, 1), await g.normal(1, 1),
    { weights: [1, 2, 3] }), /weights must have 2 entries/);
});

test("the links on data", async () => {
  const x = await g.asData([[-1.3, 0], [0.7, 3]]);
  const p = await g.calculate(await g.iprobit(x));
  const pv = await p.data();
  assert.ok(Math.abs(pv[1] - 0.5) < 1e-15 && Math.abs(pv[3] - 0.9986501019683699) < 1e-13);
  const c = await (await g.calculate(await g.icauchit(x))).data();
  assert.ok(Math.abs(c[0] - (0.5 + Math.atan(-1.3) / Math.PI)) < 1e-13);
  const l = await (await g.calculate(await g.icloglog(x))).data();
  assert.ok(Math.abs(l[2] - (1 - Math.exp(-Math.exp(0.7)))) < 1e-13);
  const m = await g.calculate(await g.imultilogit(x));
  assert.deepEqual(m.shape, [2, 3]);
  const mv = await m.data();
  assert.ok(Math.abs(mv[0] + mv[1] + mv[2] - 1) < 1e-14);
});
