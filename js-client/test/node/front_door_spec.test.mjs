// Drift between the runtime's front-door spec and the JS client, asked of both: the spec from
// the runtime in Pyodide (tensorbridge.runtime.spec as_dict()) and the client as loaded (its
// tb.ppl, tb.layers and option codec). Every distribution, variable type, sampler/optimiser/fit
// option and layer of the runtime has its JS counterpart, named by the spec's rule (camelCase),
// and the client's codecs (ppl.js pyName, layers.js snake) turn each JS name back into the
// runtime's.
import assert from "node:assert/strict";
import { test } from "node:test";
import { snake } from "../../src/layers.js";
import { pyName } from "../../src/ppl.js";
import { boot } from "./helpers.mjs";

const tb = await boot();
const spec = JSON.parse(await tb.runPython(
  "import json\nfrom tensorbridge.runtime import spec as _spec\njson.dumps(_spec.as_dict())"));
const CAMEL = /^[a-z][a-zA-Z0-9]*$|^Sigma$/;

test("every distribution of the runtime is a tb.ppl function", () => {
  assert.ok(spec.distributions.length > 20);
  for (const d of spec.distributions) {
    const name = d.names.js;
    assert.match(name, CAMEL);
    assert.equal(typeof tb.ppl[name], "function", `tb.ppl.${name} (runtime ${d.name})`);
    for (const a of [...d.params, ...d.options]) {
      assert.match(a.names.js, CAMEL, `${name}: ${a.names.js}`);
      assert.equal(pyName(a.names.js), a.name, `${name}: ${a.names.js}`);
    }
  }
});

test("every variable type and asData is a tb.ppl function whose options reach the runtime", () => {
  const names = spec.variables.map((v) => v.names.js);
  for (const n of ["variable", "orderedVariable", "simplexVariable", "choleskyVariable",
    "asData"]) assert.ok(names.includes(n), n);
  for (const v of spec.variables) {
    assert.equal(typeof tb.ppl[v.names.js], "function", `tb.ppl.${v.names.js}`);
    for (const a of v.args) {
      assert.match(a.names.js, CAMEL);
      assert.equal(pyName(a.names.js), a.name, `${v.names.js}: ${a.names.js}`);
    }
  }
});

test("every sampler, optimiser and fit option has a camelCase name the codec maps back", () => {
  for (const [fn, options] of Object.entries(spec.options)) {
    const internal = new Set(spec.internal.js[fn] ?? []);
    for (const o of options) {
      if (internal.has(o.name)) continue;
      assert.match(o.names.js, CAMEL, `${fn}: ${o.names.js}`);
      const codec = fn === "fit" ? snake : pyName;  // fit's options go through layers.js
      assert.equal(codec(o.names.js), o.name, `${fn}: ${o.names.js} -> ${codec(o.names.js)}`);
    }
  }
  assert.equal(typeof tb.mcmc, "function");
  assert.equal(typeof tb.ppl.opt, "function");
});

test("every layer of the runtime is a tb.layers factory", () => {
  assert.ok(spec.layers.length > 5);
  for (const l of spec.layers) {
    assert.equal(typeof tb.layers[l.names.js], "function", `tb.layers.${l.names.js} (${l.name})`);
  }
});

test("the runtime refuses a bad argument naming it as JS spells it", async () => {
  await assert.rejects(tb.ppl.variable({ lower: 1, upper: 0 }),
    /variable: lower must be less than upper/);
  await assert.rejects(tb.ppl.choleskyVariable(2, { correlation: "yes" }),
    /choleskyVariable: correlation must be/);
  await assert.rejects(tb.ppl.orderedVariable("a"), /orderedVariable: dim must be/);
  // options by their JS names reach the runtime's arguments (Sigma, lambda: kept and escaped)
  const mvn = await tb.ppl.multivariateNormal([0, 0], { Sigma: [[1, 0], [0, 1]] });
  assert.deepEqual(mvn.shape.toJs ? mvn.shape.toJs() : [...mvn.shape], [2]);
  await assert.rejects(tb.ppl.poisson({ lambda: "x" }), /poisson: lambda must be a number/);
});
