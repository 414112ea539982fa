// The conformance table (tests/conformance/*.json) through the JS door in Node: every case with
// a "js" block, replayed by ../conformance.mjs (shared with the browser door); what Python
// received is judged in Python (tensorbridge.bridge.conformance.check_json).
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { replay } from "../conformance.mjs";
import { boot } from "./helpers.mjs";

const DIR = new URL("../../../tests/conformance/", import.meta.url);

/** {table: its JSON text} of every table (the file name without .json). */
export function readTables() {
  const out = {};
  for (const f of fs.readdirSync(DIR).filter((n) => n.endsWith(".json")).sort()) {
    out[f.slice(0, -5)] = fs.readFileSync(new URL(f, DIR), "utf8");
  }
  return out;
}

const tb = await boot();

test("conformance table, js/node door", { timeout: 300000 }, async (t) => {
  const tables = readTables();
  assert.ok(Object.values(tables).some((text) => JSON.parse(text).cases.some((c) => c.js)),
    "no case has a js block");
  const r = await replay(tb, tables, "js/node");
  for (const s of r.skipped) t.diagnostic(`skipped ${s}`);
  console.log(r.summary);
  assert.ok(r.ran > 0);
  assert.equal(r.failed, 0, `${r.summary}\n${r.failures.join("\n")}`);
});
