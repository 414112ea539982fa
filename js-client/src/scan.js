// tb.scan(fn, init, xs, {length, reverse}): a loop with carried state, as Python's tb.scan
// (JAX's lax.scan). The JS step fn(carry, x) -> [carry, y] is traced once, like a function given
// to tb.grad: it receives traced values (carry and x in the structure of init and xs: a tensor,
// or arrays of them) and records tb ops; bridge/js/scan.py replays that program at every step.
// Values fn closes over (tensors, a model's lazy arrays) go in as they are; inside tb.grad, the
// traced values of the enclosing function too (the scan is then one step of that program).

import { kSym } from "./wire.js";

const isTree = (x) => Array.isArray(x);

/** Map the leaves (non-arrays) of a nested-array tree. */
function mapTree(x, f, path = []) {
  return isTree(x) ? x.map((v, i) => mapTree(v, f, [...path, i])) : f(x, path);
}

export function makeScan(tb, { Sym, Tape }) {
  /** The step's tape: its own values are inputs 0.. (carry leaves, then x leaves) and its
   * nodes; values of an enclosing tb.grad trace (other Syms) are captured as they are. */
  class ScanTape extends Tape {
    record(fn, args, kwargs = null) {
      this.nodes.push(kwargs ? { fn, args, kwargs } : { fn, args });
      this.captures ||= [...args.flat(), ...Object.values(kwargs ?? {})].some(
        (a) => a instanceof Sym && a.tape !== this);
      return new Sym(this, this.nInputs + this.nodes.length - 1);
    }
  }

  let modP = null;
  const mod = () => (modP ??= tb.pyimport("tensorbridge.bridge.js.scan"));

  /** The program as plain data: the step's own values as {$scan: index}. */
  function plain(tape, x) {
    if (x instanceof Sym && x.tape === tape) return { $scan: x[kSym] };
    if (Array.isArray(x)) return x.map((v) => plain(tape, v));
    if (x !== null && typeof x === "object" && x.constructor === Object) {
      return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(tape, v)]));
    }
    return x;
  }

  function outerTape(values) {
    let found = null;
    const visit = (x) => {
      if (x instanceof Sym) {
        if (found && found !== x.tape) {
          throw new Error("tensorbridge: scan: values of two different grad calls");
        }
        found = x.tape;
      } else if (Array.isArray(x)) x.forEach(visit);
      else if (x !== null && typeof x === "object" && x.constructor === Object) {
        Object.values(x).forEach(visit);
      }
    };
    values.forEach(visit);
    return found;
  }

  async function scan(fn, init, xs = null, options = {}) {
    if (typeof fn !== "function") {
      throw new TypeError("scan: fn must be a function (carry, x) => [carry, y]");
    }
    const { length = null, reverse = false } = options ?? {};
    if (length !== null && !Number.isInteger(length)) {
      throw new TypeError(`scan: length must be an integer, got ${length}`);
    }
    if (typeof reverse !== "boolean") {
      throw new TypeError(`scan: reverse must be true or false, got ${reverse}`);
    }
    [init, xs] = await Promise.all([init, xs]);  // tensors not awaited yet
    const tape = new ScanTape();
    const carry = mapTree(init, () => tape.input());
    const x = xs === null ? null : mapTree(xs, () => tape.input());
    const out = await fn(carry, x);
    if (!Array.isArray(out) || out.length !== 2) {
      throw new TypeError("scan: fn must return [carry, y]");
    }
    const program = { nodes: plain(tape, tape.nodes), out: plain(tape, out) };
    const m = await mod();
    const outer = outerTape([init, xs, program.nodes]);
    if (outer === null) {
      return m.scan_program(program, init, xs, length, reverse);
    }
    // inside tb.grad: the scan is one call in the enclosing program, its results picked out
    const [run, pick] = await Promise.all([m.scan_program, m.pick]);
    outer.nodes.push({ fn: "$call", target: run, args: [program, init, xs, length, reverse] });
    const res = new Sym(outer, outer.nInputs + outer.nodes.length - 1);
    const leaf = (path) => {
      outer.nodes.push({ fn: "$call", target: pick, args: [res, ...path] });
      return new Sym(outer, outer.nInputs + outer.nodes.length - 1);
    };
    return [mapTree(init, (_, p) => leaf([0, ...p])),
      out[1] === null || out[1] === undefined ? null : mapTree(out[1], (_, p) => leaf([1, ...p]))];
  }
  // the same tracing for tb.odeSolve's right-hand side (ode.js)
  scan.tracing = { ScanTape, plain, outerTape };
  return scan;
}
