// The op table (js-client/test/fixtures/op_cases.py) on the tfjs backend (TF.js wasm) inside
// Pyodide gives the numbers the Python runtime wrote to ops.json (float32 tolerance), values and
// gradients; and TF.js memory returns to its baseline afterwards.
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot, checkFixtures } from "./helpers.mjs";

const tfBackend = process.env.TB_TF_BACKEND || "wasm";

test(`op table on tfjs/${tfBackend} matches the Python runtime's fixtures`, async (t) => {
  const tb = await boot({ tfBackend });
  const before = (await tb.memory()).tf.numTensors;
  const results = await checkFixtures(tb);
  const names = Object.keys(results);
  assert.ok(names.length >= 100, `only ${names.length} cases`);
  for (const name of names) {
    await t.test(name, () => assert.equal(results[name], null, `${name}: ${results[name]}`));
  }
  await tb.runPython("import gc; gc.collect()");
  const mem = await tb.memory();
  assert.equal(mem.tf.numTensors, before, "TF.js tensors leaked");
  assert.equal(mem.runtime.num_tensors, 0);
});
