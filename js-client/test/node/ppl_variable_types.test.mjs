// greta's variable types from JS (issue 16): orderedVariable, simplexVariable, choleskyVariable
// and array bounds in variable(), sampled in Pyodide (the JS-compiled density, or the fallback);
// the draws lie on each support. Bijectors and lowerings are tested in Python
// (tests/ppl/test_variable_types.py).
import assert from "node:assert/strict";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();

test("draws of each variable type lie on its support", { timeout: 300000 }, async () => {
  const g = tb.ppl;
  const p = await g.simplexVariable(3);
  const counts = await g.asData([[3, 9, 1]]);
  await g.distribution(counts, await g.multinomial(13, await tb.reshape(p, [1, 3])));
  const o = await g.orderedVariable(3);
  await g.distribution(await g.asData(new Float64Array([1, 0, 0.5])), await g.normal(o, 1));
  const L = await g.choleskyVariable(2);
  const y = await g.asData([[0.3, 1.5], [-1.2, 0.4], [-0.7, 2.1], [0.9, 0.2]]);
  await g.distribution(y, await g.multivariateNormal([[0, 0]], { cholesky: L }));
  const x = await g.variable({ lower: [0, -Infinity], upper: [1, Infinity] });
  await g.distribution(await g.asData(new Float64Array([0.5, 3])), await g.normal(x, [0.2, 1]));
  const m = await g.model({ p, o, L, x });
  const draws = await tb.mcmc(m, { nSamples: 60, warmup: 60, chains: 1, seed: 3 });
  const n = 60;
  assert.equal(draws.backend, "js");  // the JS lowering covers the bijectors: no fallback
  assert.deepEqual(draws.shapes.p, [1, n, 3]);
  assert.deepEqual(draws.shapes.L, [1, n, 2, 2]);
  const { p: pd, o: od, L: ld, x: xd } = draws.variables;
  for (let i = 0; i < n; i++) {
    const s = pd[3 * i] + pd[3 * i + 1] + pd[3 * i + 2];
    assert.ok(Math.abs(s - 1) < 1e-12 && pd[3 * i] > 0, `p draw ${i}`);
    assert.ok(od[3 * i] < od[3 * i + 1] && od[3 * i + 1] < od[3 * i + 2], `o draw ${i}`);
    // lower triangular with a positive diagonal (the runtime's factor; R's is the transpose)
    assert.ok(ld[4 * i + 1] === 0 && ld[4 * i] > 0 && ld[4 * i + 3] > 0, `L draw ${i}`);
    assert.ok(xd[2 * i] > 0 && xd[2 * i] < 1, `x draw ${i}`);
  }
});
