// tb.odeSolve(fn, y0, times, ...args, {t0, method, rtol, atol, maxSteps}): the initial value
// problem dy/dt = fn(t, y, ...args), y(t0) = y0, solved by Python's tb.ode_solve; y at each time
// ([times.length, ...y0's shape]). The JS fn is traced once, like tb.scan's step (scan.js): it
// receives traced values (t, y and each arg) and records tb ops, which bridge/js/ode.py replays
// as ode_solve's fn. Differentiable in y0 and args (also inside tb.grad and a model's density),
// so a model's parameters go in as args, not as values fn closes over.

const isOptions = (x) => x !== null && typeof x === "object" && x.constructor === Object;

export function makeOdeSolve(tb, { Sym, scan }) {
  const { ScanTape, plain, outerTape } = scan.tracing;
  let modP = null;
  const mod = () => (modP ??= tb.pyimport("tensorbridge.bridge.js.ode"));

  return async function odeSolve(fn, y0, times, ...rest) {
    if (typeof fn !== "function") {
      throw new TypeError("odeSolve: fn must be a function (t, y, ...args) => dy/dt");
    }
    const options = rest.length && isOptions(rest[rest.length - 1]) ? rest.pop() : {};
    const args = await Promise.all(rest);  // tensors not awaited yet
    [y0, times] = await Promise.all([y0, times]);
    const tape = new ScanTape();
    const t = tape.input();
    const y = tape.input();
    const out = await fn(t, y, ...args.map(() => tape.input()));
    if (out === undefined || out === null) {
      throw new TypeError("odeSolve: fn must return dy/dt (a tensor, or an array of them)");
    }
    if (tape.captures) {
      throw new Error("odeSolve: fn uses a value traced by the enclosing function (tb.grad or "
        + "a model); pass it to odeSolve as one of args, after times");
    }
    const program = { nodes: plain(tape, tape.nodes), out: plain(tape, out) };
    const m = await mod();
    const outer = outerTape([y0, args]);
    if (outer === null) return m.ode_program(program, y0, times, args, options);
    // inside tb.grad: the solve is one call in the enclosing program
    outer.nodes.push({ fn: "$call", target: await m.ode_program,
      args: [program, y0, times, args, options] });
    return new Sym(outer, outer.nInputs + outer.nodes.length - 1);
  };
}
