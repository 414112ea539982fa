// tb.scan in the JS door: a JS step function traced once and replayed by Python's tb.scan, on
// tensors, inside grad, and in a model (lazy arrays).
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();

const close = (a, b, tol = 1e-5) => a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) <= tol,
  `${v} vs ${b[i]} at ${i}`));

test("scan runs a JS step like a JS loop, forwards and in reverse", async () => {
  const e = [1, -0.5, 2, 0.25];
  const xs = await tb.tensor(new Float64Array(e));
  const [c, ys] = await tb.scan((s, x) => {
    const s2 = s.mul(0.8).add(x);
    return [s2, s2.mul(s2)];
  }, 0, xs);
  let s = 0;
  const ref = [];
  for (const v of e) { s = 0.8 * s + v; ref.push(s * s); }
  assert.equal(c.dtype, "float64");
  // the tfjs backend computes float64 tensors in float32
  close([await c.array()], [s], 1e-5);
  close(await ys.array(), ref, 1e-5);
  const [, back] = await tb.scan((a, x) => [a.mul(2), a], await tb.tensor(new Float64Array([1])),
    null, { length: 3, reverse: true });
  assert.deepEqual(await back.array(), [[4], [2], [1]]);
});

test("scan carries arrays of tensors and is differentiable inside grad", async () => {
  const xs = await tb.tensor(new Float64Array([1, 2, -1]));
  const loss = (p) => tb.scan(([a, b], x) => [[tb.add(tb.mul(p, a), x), b.add(x)], null],
    [0, 0], xs).then(([[a]]) => a);
  const p = await tb.tensor(new Float64Array([0.3]), []);
  const g = await tb.grad(async (q) => (await loss(q)).sum())(p);
  close(await g.data(), [2 * 0.3 * 1 + 2], 1e-5);
});

test("scan in a model: an AR(1) likelihood written step by step", async () => {
  const { ppl } = tb;
  const y = [0.5, 0.9, 1.1, 0.7, 0.2, -0.1];
  const phi = await ppl.uniform(-1, 1);
  const prev = await ppl.asData(new Float64Array(y.slice(0, 5)));
  const [, pred] = await tb.scan((c, yPrev) => [c, tb.mul(phi, yPrev)], 0, prev);
  const next = await ppl.asData(new Float64Array(y.slice(1)));
  await ppl.distribution(next, await ppl.normal(pred, 1));
  const fit = await ppl.opt(await ppl.model(phi));
  const ls = y.slice(0, 5).reduce((a, v, i) => a + v * y[i + 1], 0)
    / y.slice(0, 5).reduce((a, v) => a + v * v, 0);
  assert.deepEqual(Object.keys(fit.par).length, 1);
  close([Object.values(fit.par)[0][0]], [ls], 1e-4);
});

test("scan's errors name the argument", async () => {
  await assert.rejects(tb.scan(1, 0, null, { length: 2 }), /scan: fn must be a function/);
  await assert.rejects(tb.scan((c) => c, 0, null, { length: 2 }), /fn must return \[carry, y\]/);
  await assert.rejects(tb.scan((c, x) => [c, c], 0), /length/);
});

test("mcmc samples a model with a scan (AR(1), T = 60)", { timeout: 300000 }, async () => {
  const { ppl } = tb;
  const t = 60;
  const y = [0];
  for (let i = 1; i < t; i++) y.push(0.6 * y[i - 1] + Math.sin(1.7 * i * i) * 1.3);
  const phi = await ppl.uniform(-1, 1);
  const prev = await ppl.asData(new Float64Array(y.slice(0, t - 1)));
  const [, pred] = await tb.scan((c, yPrev) => [c, tb.mul(phi, yPrev)], 0, prev);
  await ppl.distribution(await ppl.asData(new Float64Array(y.slice(1))), await ppl.normal(pred, 1));
  const draws = await tb.mcmc(await ppl.model({ phi }), { nSamples: 400, warmup: 300, chains: 2,
    seed: 3 });
  assert.equal(draws.backend, "js");  // the unrolled steps lower to JavaScript
  const d = Array.from(draws.variables.phi);
  const mean = d.reduce((a, v) => a + v, 0) / d.length;
  const sd = Math.sqrt(d.reduce((a, v) => a + (v - mean) ** 2, 0) / (d.length - 1));
  // the posterior is normal(least squares, 1 / sqrt(sum y_prev^2)), far inside (-1, 1)
  const sxx = y.slice(0, t - 1).reduce((a, v) => a + v * v, 0);
  const ls = y.slice(0, t - 1).reduce((a, v, i) => a + v * y[i + 1], 0) / sxx;
  const sdRef = 1 / Math.sqrt(sxx);
  assert.ok(Math.abs(mean - ls) < 0.25 * sdRef, `mean ${mean} vs ${ls} (sd ${sdRef})`);
  assert.ok(sd > 0.8 * sdRef && sd < 1.2 * sdRef, `sd ${sd} vs ${sdRef}`);
});
