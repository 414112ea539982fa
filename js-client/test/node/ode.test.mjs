// tb.odeSolve in the JS door: a JS right-hand side traced once and replayed by Python's
// tb.ode_solve (in Pyodide without NumPy: the integrators run on the python arrays), checked
// against SciPy's solve_ivp values in test/fixtures/ode.json (written by make_ode_fixture.py
// with SciPy, never with tensorbridge), inside grad against SciPy's central differences, in a
// model, and its errors.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { boot, fixturesDir } from "./helpers.mjs";

const tb = await boot();
const fixture = JSON.parse(fs.readFileSync(`${fixturesDir}ode.json`, "utf8"));

// the tfjs backend stores float64 tensors in float32: inputs and results carry its rounding
// (relative 6e-8) on top of the solver's tolerance
const close = (got, want, rtol, atol, what) => got.forEach((v, i) => assert.ok(
  Math.abs(v - want[i]) <= atol + rtol * Math.abs(want[i]), `${what}[${i}]: ${v} vs ${want[i]}`));

const lotkaVolterra = (t, z, th) => {
  const u = z.getitem(0);
  const v = z.getitem(1);
  return tb.stack([u.mul(th.getitem(0).sub(th.getitem(1).mul(v))),
    v.mul(th.getitem(3).mul(u).sub(th.getitem(2)))]);
};

test("odeSolve solves Lotka-Volterra as SciPy's solve_ivp does, explicit and stiff", async () => {
  const lv = fixture.lotka_volterra;
  const theta = await tb.tensor(new Float64Array(lv.theta));
  for (const method of ["rk45", "rosenbrock"]) {
    const y = await tb.odeSolve(lotkaVolterra, await tb.tensor(new Float64Array(lv.y0)),
      lv.times, theta, { method, rtol: 1e-8, atol: 1e-8 });
    assert.deepEqual(y.shape, [lv.times.length, 2]);
    assert.equal(y.dtype, "float64");
    close(Array.from(await y.data()), lv.y.flat(), 2e-5, 1e-5, method);
  }
});

test("odeSolve: numbers and arrays as y0 and args, t0 before the first time", async () => {
  const d = fixture.decay;
  // dy/dt = -k y for two independent states; fn returns an array of its rates
  const y = await tb.odeSolve((t, yy, k) => [tb.mul(k.getitem(0), yy.getitem(0)).neg(),
    tb.mul(k.getitem(1), yy.getitem(1)).neg()], d.y0, new Float64Array(d.times),
  await tb.tensor(new Float64Array(d.k)), { t0: d.t0, rtol: 1e-9, atol: 1e-9 });
  assert.deepEqual(y.shape, [d.times.length, 2]);
  close(Array.from(await y.data()), d.y.flat(), 2e-6, 1e-7, "decay");
});

test("odeSolve is differentiable inside grad (SciPy's central differences)", async () => {
  const lv = fixture.lotka_volterra;
  const y0 = await tb.tensor(new Float64Array(lv.y0));
  const last = lv.times.length - 1;
  const loss = async (th) => (await tb.odeSolve(lotkaVolterra, y0, lv.times, th,
    { rtol: 1e-9, atol: 1e-9 })).getitem(last).getitem(0);
  const g = await tb.grad(loss)(await tb.tensor(new Float64Array(lv.theta)));
  close(Array.from(await g.data()), lv.grad_theta_u_last, 1e-4, 1e-4, "gradient");
});

test("odeSolve in a model: the decay rate of exact data is recovered by opt", async () => {
  const { ppl } = tb;
  const times = [0.5, 1, 2, 3, 4];
  const k = await ppl.uniform(0, 3);
  const sol = await tb.odeSolve((t, y, kk) => tb.mul(kk, y).neg(), [2], times, k, { t0: 0 });
  const obs = new Float64Array(times.map((t) => 2 * Math.exp(-0.8 * t)));
  await ppl.distribution(await ppl.asData(obs), await ppl.normal(tb.reshape(sol, [5]), 0.05));
  const fit = await ppl.opt(await ppl.model(k));
  // the data are exp(-0.8 t) exactly and the prior is flat: the optimum is k = 0.8, up to the
  // solver's tolerance (1e-6) and the optimiser's
  close(Object.values(fit.par)[0], [0.8], 0, 1e-3, "k");
});

test("odeSolve's errors name the argument as the JS door spells it", async () => {
  const y0 = await tb.tensor(new Float64Array([1]));
  const decay = (t, y) => y.neg();
  await assert.rejects(tb.odeSolve(decay, y0, [0, 1], { method: "nope" }),
    /odeSolve: method must be one of .*got 'nope'/);
  await assert.rejects(tb.odeSolve(decay, y0, [0, 1], { maxSteps: 0 }),
    /odeSolve: maxSteps must be a positive integer, got 0/);
  await assert.rejects(tb.odeSolve(decay, y0, [0, 1], { rtol: -1 }), /odeSolve: rtol must be/);
  await assert.rejects(tb.odeSolve(decay, y0, [0, 1], { bogus: 1 }),
    /odeSolve: unknown option 'bogus'/);
  await assert.rejects(tb.odeSolve(decay, y0, [1, 0]), /times must be strictly increasing/);
  await assert.rejects(tb.odeSolve(1, y0, [0, 1]), /odeSolve: fn must be a function/);
  await assert.rejects(tb.odeSolve(decay, y0, [0, 1], { maxSteps: 2 }), /maxSteps=2 reached/);
  // a traced value of the enclosing function must go in as an argument
  const p = await tb.tensor(new Float64Array([0.5]));
  await assert.rejects(tb.grad(async (q) => (await tb.odeSolve((t, y) => tb.mul(q, y), y0,
    [0, 1])).sum())(p), /pass it to odeSolve as one of args/);
});
