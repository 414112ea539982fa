// The runtime's maths ops through the JS door (tfjs backend): the inverse trigonometric and
// hyperbolic functions (and TF.js's spellings asin...), sinpi/cospi/tanpi (exact at multiples
// of 1/2), trigamma, solve and eigh, against values worked by hand or by Math.*, and a gradient.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();

// float32 results (the tfjs backend): a few units of float32 roundoff
const close = (got, want, tol = 1e-6) => {
  const g = [got].flat(Infinity);
  const w = [want].flat(Infinity);
  assert.equal(g.length, w.length);
  g.forEach((v, k) => assert.ok(v === w[k] || Math.abs(v - w[k]) <= tol * (1 + Math.abs(w[k])),
    `entry ${k}: ${v} vs ${w[k]}`));
};

test("arcsin ... arctanh (and asin ... atanh) give Math's values, edges included", async () => {
  const x = [-1, -0.5, 0, 0.3, 1];
  const t = await tb.tensor(x);
  const pairs = [["arcsin", "asin", Math.asin], ["arccos", "acos", Math.acos],
    ["arctan", "atan", Math.atan], ["arcsinh", "asinh", Math.asinh],
    ["arctanh", "atanh", Math.atanh]];
  for (const [name, tfjs, f] of pairs) {
    close(await (await tb[name](t)).array(), x.map(f));
    close(await (await tb[tfjs](t)).array(), x.map(f));
  }
  const y = [1, 1.5, 10];
  close(await (await tb.arccosh(await tb.tensor(y))).array(), y.map(Math.acosh));
  assert.deepEqual(await (await tb.atanh(await tb.tensor([-1, 1]))).array(), [-Infinity, Infinity]);
});

test("sinpi, cospi and tanpi are exact at multiples of 1/2; trigamma", async () => {
  const h = await tb.tensor([-1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5]);
  assert.deepEqual((await (await tb.sinpi(h)).array()).map((v) => v + 0),
    [1, 0, -1, 0, 1, 0, -1, 0, 1]);
  assert.deepEqual((await (await tb.cospi(h)).array()).map((v) => v + 0),
    [0, -1, 0, 1, 0, -1, 0, 1, 0]);
  const tp = await (await tb.tanpi(h)).array();
  assert.ok(Number.isNaN(tp[0]) && tp[1] === 0 && Number.isNaN(tp[2]) && tp[3] === 0);
  close(await (await tb.sinpi(await tb.tensor([0.3]))).array(), [Math.sin(0.3 * Math.PI)]);
  // trigamma(1) = pi^2 / 6, trigamma(0.5) = pi^2 / 2
  close(await (await tb.trigamma(await tb.tensor([1, 0.5]))).array(),
    [Math.PI ** 2 / 6, Math.PI ** 2 / 2], 1e-5);
  // d/dx sinpi(x) = pi cospi(x)
  const g = await tb.grad((w) => tb.sum(tb.sinpi(w)))(await tb.tensor([0.25, 1]));
  close(await g.array(), [Math.PI * Math.cos(Math.PI / 4), -Math.PI], 1e-5);
});

test("solve and eigh give the worked values", async () => {
  const a = await tb.tensor([[2, 1], [1, 3]]);
  // [[2, 1], [1, 3]] x = [3, 5]: x = [0.8, 1.4]
  close(await (await tb.solve(a, await tb.tensor([[3], [5]]))).array(), [[0.8], [1.4]]);
  // eigenvalues of [[2, 1], [1, 3]]: (5 -+ sqrt(5)) / 2, ascending
  const [w, v] = await tb.eigh(a);
  close(await w.array(), [(5 - Math.sqrt(5)) / 2, (5 + Math.sqrt(5)) / 2]);
  const V = await v.array();
  // A v = w v for each column
  const wv = await w.array();
  for (let c = 0; c < 2; c++) {
    close([2 * V[0][c] + V[1][c], V[0][c] + 3 * V[1][c]], [wv[c] * V[0][c], wv[c] * V[1][c]],
      1e-5);
  }
  await assert.rejects(tb.solve(await tb.tensor([[1, 2], [2, 4]]), await tb.tensor([[1], [1]])),
    /singular/);
});
