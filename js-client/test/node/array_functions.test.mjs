// The runtime's array functions through the JS door (tfjs backend): cumprod, outer, kron,
// repeat, tile and segmentSum against values worked by hand, and cumprod's gradient.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();

const close = (got, want, tol = 1e-5) => {
  const g = got.flat(Infinity);
  const w = want.flat(Infinity);
  assert.equal(g.length, w.length);
  g.forEach((v, k) => assert.ok(Math.abs(v - w[k]) <= tol * (1 + Math.abs(w[k])),
    `entry ${k}: ${v} vs ${w[k]}`));
};

test("cumprod, outer, kron, repeat and tile give NumPy's values", async () => {
  const x = await tb.tensor([[1, 2, 0], [3, -1, 2]]);
  assert.deepEqual(await (await tb.cumprod(x, tb.kw({ axis: 1 }))).array(),
    [[1, 2, 0], [3, -3, -6]]);
  assert.deepEqual(await (await tb.cumprod(x, tb.kw({ axis: 0, reverse: true }))).array(),
    [[3, -2, 0], [3, -1, 2]]);
  const v = await tb.tensor([1, 2]);
  assert.deepEqual(await (await tb.outer(v, await tb.tensor([3, 4, 5]))).array(),
    [[3, 4, 5], [6, 8, 10]]);
  const e = await tb.tensor([[0, 1], [1, 0]]);
  assert.deepEqual(await (await tb.kron(e, v)).array(), [[0, 0, 1, 2], [1, 2, 0, 0]]);
  assert.deepEqual(await (await tb.repeat(v, 2)).array(), [1, 1, 2, 2]);
  assert.deepEqual(await (await tb.repeat(x, [1, 0, 2], tb.kw({ axis: 1 }))).array(),
    [[1, 0, 0], [3, 2, 2]]);
  assert.deepEqual(await (await tb.tile(v, [2, 2])).array(), [[1, 2, 1, 2], [1, 2, 1, 2]]);
  assert.deepEqual(await (await tb.segmentSum(await tb.tensor([1, 2, 3, 4]), [1, 0, 1, 1]))
    .array(), [2, 8]);
  await assert.rejects(tb.repeat(x, [1, 2], tb.kw({ axis: 1 })), /repeat: repeats has 2 counts/);
});

test("cumprod is differentiable, exactly where an entry is zero", async () => {
  const x = await tb.tensor([1.5, 0, -2]);
  // d/dx of sum(cumprod(x)) = [1 + x1 + x1 x2, x0 + x0 x2, x0 x1]
  const g = await tb.grad((w) => tb.sum(tb.cumprod(w)))(x);
  close(await g.array(), [1, 1.5 + 1.5 * -2, 0]);
});
