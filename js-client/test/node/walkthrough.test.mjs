// A TF.js developer's first hour with tensorbridge: the README examples and what such a user
// tries next (tb.layers.sequential + add + compile + fit/predict/evaluate/save/load with nested
// arrays, classification, tb.ppl linear regression with HMC), each check here the regression
// test of a bug found on that walk: un-awaited tensors as arguments, calculate over draws giving
// a Python handle instead of numbers, errors that did not name the argument, layer configs
// accepted when TF.js rejects them. Every test ends with the handle count back at its start.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { boot } from "./helpers.mjs";

const tb = await boot();
const g = tb.ppl;

async function settle() {
  if (globalThis.gc) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 20));
    globalThis.gc();
  }
  await new Promise((r) => setTimeout(r, 20));
}

/** Run fn and check the bridge's live handles are back where they were (the module proxies
 * the layers / ppl helpers cache are made first). */
async function noLeak(fn) {
  (await tb.layers.sequential()).dispose();  // the helper modules layers.js / ppl.js cache
  await g.format(null).catch(() => {});
  await settle();
  const before = (await tb.handles()).live;
  await fn();
  await settle();
  const after = await tb.handles();
  assert.equal(after.live, before, `leaked handles: ${JSON.stringify(after.by_type)}`);
}

const XS = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 0, 1], [0, 1, 0], [2, 2, 2], [3, 1, 2],
  [0, 0, 1], [1, 1, 1], [2, 0, 0]];
const YS = XS.map((r) => [r[0] * 0.1 - r[1] * 0.05 + r[2] * 0.02]);

async function rejectsWith(p, re) {
  await assert.rejects(p, (e) => {
    assert.match(e.message, re);
    return true;
  });
}

test("an un-awaited tb.tensor(...) works as an argument, as it reads in TF.js", async () => {
  await noLeak(async () => {
    const pending = tb.tensor([1, 2]);  // not awaited
    const r = await tb.add(pending, 1);
    assert.deepEqual(Array.from(await r.data()), [2, 3]);
    r.dispose();
    (await pending).dispose();
    const model = await tb.layers.sequential({ layers: [tb.layers.dense({ units: 1,
      inputShape: [3] })] });
    await model.compile({ optimizer: "sgd", loss: "meanSquaredError" });
    const x = tb.tensor(XS);  // not awaited
    const h = await model.fit(x, YS, { epochs: 1 });
    assert.equal(h.history.loss.length, 1);
    const p = await model.predict(x);
    assert.deepEqual(p.shape, [10, 1]);
    p.dispose();
    (await x).dispose();
    model.dispose();
  });
});

test("sequential() + add() + compile('sgd') + fit with nested arrays and a tensor", async () => {
  await noLeak(async () => {
    const model = await tb.layers.sequential();
    await model.add(tb.layers.dense({ units: 4, inputShape: [3], activation: "relu" }));
    await model.add(tb.layers.dense({ units: 1 }));
    await model.compile({ optimizer: "sgd", loss: "meanSquaredError" });
    const x = await tb.tensor(XS), y = await tb.tensor(YS);
    let h = await model.fit(x, y, { epochs: 2 });
    assert.deepEqual(Object.keys(h.history), ["loss"]);
    x.dispose(); y.dispose();
    const seen = [];
    h = await model.fit(XS, YS, { epochs: 2, validationSplit: 0.2,
      callbacks: { onEpochEnd: (e, logs) => seen.push(Object.keys(logs).sort()) } });
    assert.deepEqual(seen, [["loss", "val_loss"], ["loss", "val_loss"]]);
    const p = await model.predict([[1, 2, 3], [4, 5, 6]]);
    assert.deepEqual(p.shape, [2, 1]);
    p.dispose();
    const ev = await model.evaluate(XS, YS);
    assert.equal(typeof ev.loss, "number");
    const text = await model.summary({ print: false });
    assert.match(text, /Total params: 21/);
    model.dispose();
  });
});

test("save to a directory and loadModel predict the same", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tb-walk-"));
  await noLeak(async () => {
    const model = await tb.layers.sequential({ layers: [
      tb.layers.dense({ units: 4, inputShape: [3], activation: "relu" }),
      tb.layers.dense({ units: 1 })] });
    await model.compile({ optimizer: "adam", loss: "meanSquaredError" });
    await model.fit(XS, YS, { epochs: 1 });
    await model.save(dir);
    const again = await tb.layers.loadModel(dir);
    const [a, b] = [await model.predict(XS), await again.predict(XS)];
    assert.deepEqual(await a.data(), await b.data());
    // TF.js's names: tf.sequential, tf.loadLayersModel("file://.../model.json")
    const viaTfName = await tb.loadLayersModel(`file://${path.join(dir, "model.json")}`);
    const c = await viaTfName.predict(XS);
    assert.deepEqual(await c.data(), await a.data());
    const empty = await tb.sequential();
    assert.deepEqual((await empty.info()).layers, []);
    a.dispose(); b.dispose(); c.dispose(); model.dispose(); again.dispose();
    viaTfName.dispose(); empty.dispose();
  });
  fs.rmSync(dir, { recursive: true, force: true });
});

test("classification: categorical / sparse categorical cross-entropy and their log keys",
  async () => {
    const cx = [], cy = [], ids = [];
    for (let i = 0; i < 30; i++) {
      const a = Math.sin(i), b = Math.cos(i * 1.3);
      const k = a > 0 ? (b > 0 ? 0 : 1) : 2;
      cx.push([a, b]); ids.push(k); cy.push([0, 1, 2].map((j) => (j === k ? 1 : 0)));
    }
    await noLeak(async () => {
      const m = await tb.layers.sequential({ layers: [
        tb.layers.dense({ units: 3, inputShape: [2], activation: "softmax" })] });
      await m.compile({ optimizer: "adam", loss: "categoricalCrossentropy",
        metrics: ["accuracy"] });
      let h = await m.fit(cx, cy, { epochs: 1, validationSplit: 0.2 });
      // Keras names: the metric as given ("accuracy"); TF.js would say "acc"
      assert.deepEqual(Object.keys(h.history), ["loss", "accuracy", "val_loss", "val_accuracy"]);
      await m.compile({ optimizer: "adam", loss: "sparseCategoricalCrossentropy",
        metrics: ["acc"] });
      h = await m.fit(cx, ids, { epochs: 1 });
      assert.deepEqual(Object.keys(h.history), ["loss", "acc"]);
      const ev = await m.evaluate(cx, ids);
      assert.ok(ev.acc >= 0 && ev.acc <= 1);
      m.dispose();
    });
  });

test("layer configs TF.js rejects are rejected when the layer is made, naming the option",
  () => {
    assert.throws(() => tb.layers.dense({ units: -1 }), /dense: units must be an integer >= 1, got -1/);
    assert.throws(() => tb.layers.dense({ units: 2.5 }), /units must be an integer >= 1, got 2.5/);
    assert.throws(() => tb.layers.dense({ units: "4" }), /units must be an integer/);
    assert.throws(() => tb.layers.dense({ inputShape: [3] }), /dense: units is required/);
    assert.throws(() => tb.layers.dense({ units: 2, inputShape: 3 }),
      /inputShape must be an array of positive integers/);
    assert.throws(() => tb.layers.embedding({ inputDim: 0, outputDim: 2 }), /inputDim/);
  });

test("bad arguments of sequential / fit / predict are named", async () => {
  await noLeak(async () => {
    await rejectsWith(tb.layers.sequential({ layers: tb.layers.dense({ units: 1 }) }),
      /sequential: layers must be an array/);
    await rejectsWith(tb.layers.sequential([tb.layers.dense({ units: 1 })]),
      /sequential: expected \{layers/);
    const m = await tb.layers.sequential({ layers: [tb.layers.dense({ units: 1,
      inputShape: [3] })] });
    await m.compile({ optimizer: "sgd", loss: "meanSquaredError" });
    await rejectsWith(m.fit(XS, YS, { epochs: "x" }), /fit: epochs must be an integer >= 0, got "x"/);
    await rejectsWith(m.fit(XS, YS, { batchSize: 0 }), /fit: batchSize must be an integer >= 1/);
    await rejectsWith(m.fit(XS, YS, { validationSplit: 2 }), /fit: validationSplit .* \[0, 1\)/);
    await rejectsWith(m.fit(XS, [[1], [2, 3]], { epochs: 1 }), /fit: y: ValueError: data: ragged nested sequence/);
    await rejectsWith(m.fit("abc", YS), /fit: x: expected a Tensor, nested arrays/);
    await rejectsWith(m.predict(XS, { batchSize: -1 }), /predict: batchSize/);
    m.dispose();
  });
});

function regressionData() {
  const X = [], Y = [];
  for (let i = 0; i < 30; i++) {
    const r = [Math.sin(i), Math.cos(i * 0.7), (i % 5) / 5];
    X.push(r);
    Y.push([r[0] * 1.5 - r[1] * 0.5 + r[2] * 2 + 0.1 * Math.sin(i * 13)]);
  }
  return { X, Y };
}

test("tb.ppl linear regression: hmc, summary, calculate over draws and for named values",
  async () => {
    const { X, Y } = regressionData();
    await noLeak(async () => {
      const x = await g.asData(X);
      const beta = await g.normal(0, 1, { dim: [3, 1] });
      const sd = await g.lognormal(0, 1);
      const mu = await tb.matmul(x, beta);
      const y = await g.asData(Y);
      await g.distribution(y, await g.normal(mu, sd));
      assert.match(await g.format(beta), /\[\?\]/);
      const m = await g.model({ beta, sd });
      const draws = await tb.mcmc(m, { sampler: "hmc", nSamples: 60, warmup: 60, chains: 1,
        seed: 1 });
      const rows = draws.summary();
      assert.deepEqual(rows.map((r) => r.variable), ["beta[0,0]", "beta[1,0]", "beta[2,0]",
        "sd"]);
      assert.ok(Math.abs(rows[0].mean - 1.5) < 0.3, `beta[0,0] ${rows[0].mean}`);
      // over the draws: numbers, chains x draws x shape (was a Python handle)
      const over = await g.calculate(mu, draws);
      assert.ok(over.data instanceof Float64Array);
      assert.deepEqual(over.shape, [1, 60, 30, 1]);
      assert.equal(over.data.length, 60 * 30);
      // for given values, keyed by variable name (a plain object) or by lazy array (a Map)
      const byName = await g.calculate(mu, { beta: [[1], [0], [0]] });
      const byMap = await g.calculate(mu, new Map([[beta, [[1], [0], [0]]]]));
      const want = X.map((r) => r[0]);
      for (const t of [byName, byMap]) {
        assert.deepEqual(t.shape, [30, 1]);
        const d = await t.data();
        for (let i = 0; i < 30; i++) assert.ok(Math.abs(d[i] - want[i]) < 1e-5);
        t.dispose();
      }
      await rejectsWith(g.calculate(mu, { bta: [[1], [0], [0]] }),
        /values: there is no variable named bta .*\(named: beta\)/);
      draws.dispose();
      for (const v of [x, beta, sd, mu, y, m]) v.dispose();
    });
  });

test("tb.ppl bad inputs name the argument", async () => {
  await noLeak(async () => {
    await rejectsWith(g.normal(0, "x"), /normal: sd must be a number, an array, a tensor or a lazy array, got str 'x'/);
    await rejectsWith(g.normal(0, 1, { dim: -2 }), /normal: dim must be a positive integer/);
    await rejectsWith(g.normal(0, 1, { truncation: 0 }), /normal: truncation must be two numbers \[lower, upper\], got int 0/);
    await rejectsWith(g.normal(0), /normal: missing a required argument: 'sd'/);
    const mu = await g.normal(0, 1);
    await rejectsWith(tb.mcmc(mu, { nSamples: 10 }), /mcmc: model must be a model from tb.ppl.model/);
    const m = await g.model({ mu });
    await rejectsWith(tb.mcmc(m, { chains: 0 }), /chains: expected an integer >= 1, got 0/);
    await rejectsWith(tb.mcmc(m, { sampler: "gibbs" }), /sampler: expected one of 'nuts', 'hmc', 'rwmh', 'slice', got 'gibbs'/);
    m.dispose(); mu.dispose();
  });
});

test("TF.js op names: oneHot, argMax, expandDims, logSoftmax... as functions and methods",
  async () => {
    await noLeak(async () => {
      const oh = await tb.oneHot([0, 2, 1], 3);
      assert.deepEqual(await oh.array(), [[1, 0, 0], [0, 0, 1], [0, 1, 0]]);
      const am = await oh.argMax(1);
      assert.deepEqual(await am.array(), [0, 2, 1]);
      const am2 = await tb.argMax(oh, 1);
      assert.deepEqual(await am2.array(), [0, 2, 1]);
      const ed = await tb.expandDims(am, 0);
      assert.deepEqual(ed.shape, [1, 3]);
      const pending = tb.tensor([-2, 0.5, 3]);
      const c = await tb.clipByValue(pending, 0, 1);
      (await pending).dispose();
      assert.deepEqual(Array.from(await c.data()), [0, 0.5, 1]);
      const ls = await (await tb.tensor([[1, 2]])).logSoftmax();
      const lsum = (await ls.array())[0].reduce((a, b) => a + Math.exp(b), 0);
      assert.ok(Math.abs(lsum - 1) < 1e-5);
      // traced inside grad too
      const x = await tb.tensor([1, 2, 3]);
      const gr = await tb.grad((w) => tb.sum(w.logSoftmax()))(x);
      assert.deepEqual(gr.shape, [3]);
      for (const t of [oh, am, am2, ed, c, ls, x, gr]) t.dispose();
    });
  });

test("lazy arrays: data() of known values (no NumPy in Pyodide), a clear error otherwise; " +
  "console.log of a Python handle says what it is", async () => {
  await noLeak(async () => {
    const y = await g.asData([1.5, 2]);
    assert.deepEqual(Array.from(await y.data()), [1.5, 2]);
    const mu = await g.normal(0, 1, { dim: 2 });
    await assert.rejects(mu.data(), (e) => {
      assert.equal(e.name, "PythonError");
      assert.match(e.message, /^ValueError: this variable array has no value yet/);
      return true;
    });
    const m = await g.model({ mu });
    const { inspect } = await import("node:util");
    assert.match(inspect(m), /^<Python Model>$/);
    m.dispose(); mu.dispose(); y.dispose();
  });
});

test("distributions: {name} names the variable; multivariateNormal works without NumPy",
  async () => {
    await noLeak(async () => {
      const mu = await g.normal(0, 1, { name: "mu" });
      const y = await g.asData([0.5, -0.2, 0.1]);
      await g.distribution(y, await g.normal(mu, 1));
      const m = await g.model(mu);  // positional: the name given when made
      const draws = await tb.mcmc(m, { nSamples: 20, warmup: 20, chains: 1, seed: 3 });
      assert.deepEqual(Object.keys(draws.variables), ["mu"]);
      draws.dispose(); m.dispose(); y.dispose(); mu.dispose();
      await rejectsWith(g.normal(0, 1, { name: 3 }), /normal: name must be a string/);
      const x = await g.multivariateNormal([0, 0], [[1, 0.5], [0.5, 1]]);
      assert.deepEqual(x.shape, [2]);
      x.dispose();
      await rejectsWith(g.multivariateNormal([0, 0], [[1, 2], [2, 1]]),
        /Sigma must be positive definite/);
      await rejectsWith(g.multivariateNormal([0, 0], [[1, 0.5], [0, 1]]),
        /Sigma must be symmetric/);
    });
  });
