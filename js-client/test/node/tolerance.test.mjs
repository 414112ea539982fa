// The JS tolerance helper (test/tolerance.mjs) decides the shared hand-computed cases of
// tests/fixtures/shared/tolerance_cases.json exactly as Python and R do.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { closeError, gamma } from "../tolerance.mjs";

const { cases } = JSON.parse(fs.readFileSync(new URL(
  "../../../tests/fixtures/shared/tolerance_cases.json", import.meta.url), "utf8"));

test("the JS tolerance helper decides every shared case like Python and R", async (t) => {
  assert.ok(cases.length > 20);
  for (const c of cases) {
    await t.test(c.what, () => {
      const err = closeError(c.actual, c.expected, { dtype: c.dtype, n: c.n ?? 1,
        magnitude: c.magnitude ?? null, ulps: c.ulps ?? 4 });
      assert.equal(err === null, c.pass, err ?? "passed but should fail");
    });
  }
});

test("typed arrays and nested arrays compare alike; n*u >= 1 has no bound", () => {
  assert.equal(closeError(new Float32Array([1, 2]), [[1], [2]], { dtype: "float32" }), null);
  assert.match(closeError(new Int32Array([1, 2]), [1, 3], { dtype: "int32" }), /element 1/);
  assert.throws(() => gamma(2 ** 25, "float32"), /n: /);
});
