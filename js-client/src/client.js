// The public, promise-based API (the same object in Node and in the browser). Calls go through a
// channel: in-process (Node, or the page with {worker: false}) or postMessage to the worker.
// Values cross as tensorbridge.bridge descriptors (wire.js <-> bridge/js/host.py): Python objects
// are handles in the bridge's handle table, errors are the bridge's Error descriptors.

import { makeLayers } from "./layers.js";
import { makePpl } from "./ppl.js";
import { makeScan } from "./scan.js";
import { makeOdeSolve } from "./ode.js";
import {
  Codec, Kwargs, TensorBridgeError, TYPED, isTypedArray, kHandle, kSym,
} from "./wire.js";

export { TensorBridgeError };

export class DisposedError extends Error {
  constructor(what) {
    super(`tensorbridge: ${what} was disposed; it can no longer be used`);
    this.name = "DisposedError";
  }
}

const UNARY = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "square", "abs", "negative",
  "reciprocal", "tanh", "sigmoid", "softplus", "sin", "cos", "tan", "erf", "erfc", "lgamma",
  "digamma", "sign", "floor", "ceil", "round", "isnan", "isfinite", "logical_not", "relu", "elu",
  "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sinpi", "cospi", "tanpi",
  "trigamma",
  "gelu", "selu", "softmax", "log_softmax", "cholesky", "stop_gradient", "flatten"];
const BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "mod",
  "floor_divide", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
  "logical_and", "logical_or", "matmul"];
const OTHER = ["where", "clip", "sum", "mean", "prod", "max", "min", "logsumexp", "argmax",
  "argmin", "cumsum", "cumprod", "outer", "kron", "repeat", "tile", "segment_sum", "reshape",
  "transpose", "expand_dims", "squeeze", "concat", "stack",
  "broadcast_to", "swapaxes", "getitem", "take", "index_update", "index_add", "one_hot",
  "triangular_solve", "solve", "eigh", "tril", "triu", "cast", "zeros", "ones", "full", "eye", "arange",
  "linspace", "zeros_like", "ones_like", "full_like", "polygamma"];
export const OPS = [...UNARY, ...BINARY, ...OTHER];
const camel = (n) => n.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
/** TF.js names of the ops: every snake_case op in camelCase (oneHot, expandDims, logSoftmax,
 * zerosLike...) plus TF.js's own spellings. Same arguments as the runtime's op. */
export const TFJS_NAMES = { ...Object.fromEntries(OPS.filter((n) => n.includes("_"))
  .map((n) => [camel(n), n])), argMax: "argmax", argMin: "argmin", clipByValue: "clip",
  range: "arange", asin: "arcsin", acos: "arccos", atan: "arctan", asinh: "arcsinh",
  acosh: "arccosh", atanh: "arctanh" };
// method name on Tensor -> op
const METHODS = { add: "add", sub: "subtract", mul: "multiply", div: "divide", pow: "power",
  neg: "negative", matmul: "matmul", ...Object.fromEntries([...UNARY, ...OTHER].map((n) => [n, n])),
  ...Object.fromEntries(Object.entries(TFJS_NAMES).filter(([a]) => a !== "range")),
  lt: "less", le: "less_equal", gt: "greater", ge: "greater_equal", eq: "equal", ne: "not_equal",
  less: "less", greater: "greater", equal: "equal",
  maximum: "maximum", minimum: "minimum", mod: "mod", astype: "cast", T: "transpose" };

/** A value traced inside grad/valueAndGrad: records ops instead of running them. */
class Sym {
  constructor(tape, index) { this.tape = tape; this[kSym] = index; }
}
for (const [m, op] of Object.entries(METHODS)) {
  Sym.prototype[m] = function (...args) { return this.tape.record(op, [this, ...args]); };
}

class Tape {
  constructor() { this.nodes = []; this.nInputs = 0; }
  input() { return new Sym(this, this.nInputs++); }
  record(fn, args, kwargs = null) {
    for (const a of args.flat()) {
      if (a instanceof Sym && a.tape !== this) {
        // a value of a scan step traced inside this grad: the step records it (scan.js)
        if (a.tape instanceof Tape && a.tape.record !== Tape.prototype.record) {
          return a.tape.record(fn, args, kwargs);
        }
        throw new Error("tensorbridge: a traced value escaped its grad call");
      }
    }
    this.nodes.push(kwargs ? { fn, args, kwargs } : { fn, args });
    return new Sym(this, this.nInputs + this.nodes.length - 1);
  }
}

function hasSym(args) {
  return args.some((a) => a instanceof Sym || (Array.isArray(a) && a.some((x) => x instanceof Sym)));
}

/** A promise (not a handle proxy, whose attributes are Python's). */
export function isPromise(a) {
  return a !== null && (typeof a === "object" || typeof a === "function")
    && a[kHandle] === undefined && a instanceof Promise;
}

function splitKwargs(args) {
  const last = args[args.length - 1];
  if (last instanceof Kwargs) return [args.slice(0, -1), last.obj];
  return [args, null];
}

export class Handle {
  constructor(tb, id, kind, typeName, isTensor = false) {
    this.tb = tb; this.id = id; this.kind = kind; this.typeName = typeName;
    this.isTensor = isTensor; this.disposed = false; this.children = null;
  }
  /** The id, for a call that uses the object now (throws if disposed). */
  use() {
    if (this.disposed) throw new DisposedError(this.describe());
    return this.id;
  }
  describe() { return `${this.typeName} handle #${this.id}`; }
}

class TensorHandle extends Handle {
  constructor(tb, node) {
    super(tb, node.id, "tensor", "Tensor", true);
    this.node = node;
  }
  describe() { return `Tensor #${this.id} (${this.node.d}[${this.node.s}])`; }
}

export class Tensor {
  constructor(tb, node) {
    const h = new TensorHandle(tb, node);
    Object.defineProperty(this, kHandle, { value: h });
    this.shape = node.s;
    this.dtype = node.d;
    this.backend = node.b;
    tb._track(this, h);
  }
  get size() { return this.shape.reduce((a, b) => a * b, 1); }
  get ndim() { return this.shape.length; }
  get disposed() { return this[kHandle].disposed; }
  /** The values, a TypedArray (a copy) as in TF.js: Float32Array (float32), Float64Array
   * (float64), Int32Array (int32), BigInt64Array (int64), Uint8Array (bool); shape and dtype are
   * on the tensor. */
  async data() { return this[kHandle].tb._data(this, false); }
  /** {data, shape, dtype, view, release}: a zero-copy view where possible (Node and pages
   * without a worker, wasm/cpu backends), else a copy; call release() when done. `data` stays
   * valid when the WASM heap grows. */
  async view() { return this[kHandle].tb._data(this, true); }
  /** Nested JS arrays (a number for 0-d). */
  async array() {
    const h = this[kHandle];
    return h.tb._result(h.tb.channel.request("tensorList", [h.use()]));
  }
  dispose() { this[kHandle].tb._release(this[kHandle]); }
  [Symbol.dispose]() { this.dispose(); }
  toString() { return `Tensor(${this.dtype}[${this.shape}])`; }
}
for (const [m, op] of Object.entries(METHODS)) {
  Tensor.prototype[m] = function (...args) { return this[kHandle].tb.op(op, this, ...args); };
}

/** Shape and flat values of nested arrays of numbers / booleans; null when they are not that
 * (ragged, other leaves): then Python's tb.tensor decides, and its errors name `data`. */
function flatten(data) {
  if (!Array.isArray(data)) {
    return typeof data === "number" || typeof data === "boolean" ? { shape: [], values: [data] }
      : null;
  }
  const shape = [], values = [];
  let leafDepth = -1;
  const walk = (x, d) => {
    // nested arrays, and typed arrays inside them (rows), as TF.js takes them
    if (Array.isArray(x) || (d > 0 && isTypedArray(x) && !(x instanceof BigInt64Array
      || x instanceof BigUint64Array))) {
      if (leafDepth >= 0 && d >= leafDepth) return false;
      if (shape.length === d) shape.push(x.length);
      else if (shape[d] !== x.length) return false;
      for (const v of x) if (!walk(v, d + 1)) return false;
      return true;
    }
    if (typeof x !== "number" && typeof x !== "boolean") return false;
    if (leafDepth < 0) leafDepth = d;
    if (d !== shape.length) return false;
    values.push(x);
    return true;
  };
  if (!walk(data, 0)) return null;
  if (leafDepth >= 0 && leafDepth !== shape.length) return null;
  return { shape, values };
}

const DTYPES = ["float32", "float64", "int32", "int64", "bool"];
const TENSOR_TYPED = { float32: Float32Array, float64: Float64Array, int32: Int32Array,
  int64: BigInt64Array, bool: Uint8Array };
/** The dtype of tb.tensor(typedArray) (Python applies the same rule to typed arrays given to
 * ops, bridge/js/host.py typed_tensor): TF.js's for Float32/Int32/Uint8Array (never bool), and
 * exact for the others (TF.js would make them float32). */
export const TYPED_DTYPE = new Map([[Float32Array, "float32"], [Float64Array, "float64"],
  [Int8Array, "int32"], [Uint8Array, "int32"], [Uint8ClampedArray, "int32"],
  [Int16Array, "int32"], [Uint16Array, "int32"], [Int32Array, "int32"], [Uint32Array, "int64"],
  [BigInt64Array, "int64"], [BigUint64Array, "int64"]]);
const EXACT_INT32 = new Set([Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array,
  Int32Array]);
const I32_MIN = -2147483648, I32_MAX = 2147483647;
const fitsInt32 = (v) => typeof v === "boolean" || (Number.isInteger(v) && v >= I32_MIN
  && v <= I32_MAX);

/** Storage for the fast path (one copy into TF.js), or null: Python's tb.tensor then makes it
 * (and checks what does not fit). */
function fastStorage(data, dtype, isTyped) {
  if (isTyped) {
    const C = data.constructor;
    if (C === BigInt64Array || C === BigUint64Array || C === Uint32Array) return null;
    if (dtype === "float32" || dtype === "float64") return data;
    if (dtype === "int32" || dtype === "int64") {
      return EXACT_INT32.has(C) ? (C === Int32Array ? data : Int32Array.from(data)) : null;
    }
    if (dtype === "bool") return Uint8Array.from(data, (v) => (v ? 1 : 0));
    return null;
  }
  if (dtype === "int32" || dtype === "int64") {
    if (!data.every(fitsInt32)) return null;
    return Int32Array.from(data, Number);
  }
  if (dtype === "bool") return Uint8Array.from(data, (v) => (v ? 1 : 0));
  return TENSOR_TYPED[dtype].from(data, Number);
}

const MAX_SAFE_BIG = BigInt(Number.MAX_SAFE_INTEGER);
const FAST_MAX = 30;  // arguments a fast call can carry (bits of the handle mask)

export class TensorBridge {
  constructor(channel, info) {
    this.channel = channel;
    this.info = info;
    this.codec = new Codec((node) => this._makeHandle(node));
    channel.codec = this.codec;
    this._live = new Map();  // id -> Handle, for tb.handles() and leak checks
    this._finalizer = new FinalizationRegistry((h) => this._finalized(h));
    this._pendingRelease = [];
    for (const name of OPS) {
      if (!(name in this)) this[name] = (...args) => this.op(name, ...args);
    }
    for (const [alias, name] of Object.entries(TFJS_NAMES)) {
      if (!(alias in this)) this[alias] = (...args) => this.op(name, ...args);
    }
    this.sub = this.subtract; this.mul = this.multiply; this.div = this.divide;
    this.pow = this.power; this.neg = this.negative;
    this.Tensor = Tensor;
    this._nextEvents = 1;
    ({ layers: this.layers, train: this.train } = makeLayers(this));  // layers.js
    // TF.js's top-level names for the same
    this.sequential = (config) => this.layers.sequential(config);
    this.loadLayersModel = (source, options) => this.layers.loadModel(source, options);
    ({ ppl: this.ppl, mcmc: this.mcmc } = makePpl(this));  // ppl.js
    this.scan = makeScan(this, { Sym, Tape });  // scan.js
    this.odeSolve = makeOdeSolve(this, { Sym, scan: this.scan });  // ode.js
  }

  // Event channels: Python sends progress to `listener(text)` without waiting for it (fit,
  // mcmc); _stopEvents raises the channel's stop flag that Python polls.
  _openEvents(listener) {
    const ch = this._nextEvents++;
    this.channel.listen(ch, listener);
    return ch;
  }

  _stopEvents(ch) { return this.channel.stop?.(ch) ?? false; }
  _closeEvents(ch) { this.channel.unlisten?.(ch); }

  /** Keyword arguments for an op or a Python call: tb.sum(x, tb.kw({axis: 1})). */
  kw(obj) { return new Kwargs(obj); }

  _track(obj, h) {
    this._live.set(h.id, h);
    this._finalizer.register(obj, h, h);
  }

  _finalized(h) {
    if (h.disposed) return;
    h.disposed = true;
    this._live.delete(h.id);
    this._pendingRelease.push(h.id);
    if (this._pendingRelease.length === 1) {
      queueMicrotask(() => {
        const ids = this._pendingRelease.splice(0);
        if (ids.length && !this.closed) this._send("releaseMany", [ids]);
      });
    }
  }

  _release(h) {
    if (h.disposed) return;
    h.disposed = true;
    this._live.delete(h.id);
    this._finalizer.unregister(h);
    if (!this.closed) this._send("release", [h.id]);
  }

  _send(op, args) {  // fire and forget
    try {
      const r = this.channel.request(op, args);
      if (r && typeof r.catch === "function") r.catch(() => {});
    } catch { /* the runtime is gone: nothing to release */ }
  }

  _makeHandle(node) {
    if (node.$ === "T") return new Tensor(this, node);
    const h = new Handle(this, node.id, node.$ === "F" ? "function" : "ref", node.t);
    return this._proxy(h, null, true);
  }

  /** A tagged result (or a promise of one) -> a promise of the value. */
  _result(r) {
    if (r && typeof r.then === "function") return r.then((v) => this.codec.result(v));
    try {
      return Promise.resolve(this.codec.result(r));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  _request(op, args) {
    try {
      return this._result(this.channel.request(op, args));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Call target (a Handle; null: the runtime's namespace) or its attribute `attr`. */
  _call(handle, attr, args, kwargs) {
    try {
      const target = handle === null ? null : handle.use();
      const n = args.length;
      if (!kwargs && n <= FAST_MAX) {
        // fast path: numbers, strings, booleans, null and handles cross as they are
        const fast = new Array(n);
        let mask = 0, i = 0;
        for (; i < n; i++) {
          const a = args[i];
          const t = typeof a;
          if (t === "number") {
            if (a === 0 && 1 / a < 0) break;  // -0 is a float: the wire says so
            fast[i] = a;
          } else if (t === "string" || t === "boolean") fast[i] = a;
          else if (t === "bigint") {
            // the FFI would make a JsBigInt: safe ones are plain ints, others go by the wire
            if (a < -MAX_SAFE_BIG || a > MAX_SAFE_BIG) break;
            fast[i] = Number(a);
          }
          else if (a === null || a === undefined) fast[i] = undefined;
          else {
            const h = a[kHandle];
            if (h === undefined) break;
            fast[i] = h.use();
            mask |= 1 << i;
          }
        }
        if (i === n) return this._result(this.channel.request("call", [target, attr, mask, fast]));
      }
      if (args.some(isPromise)) {
        // an argument not awaited yet (`tb.add(tb.tensor(x), 1)`, as TF.js code reads): wait
        // for it, then call
        return Promise.all(args).then((a) => this._call(handle, attr, a, kwargs));
      }
      const { text, side } = this.codec.encodeCall(args, kwargs);
      return this._result(this.channel.request("callWire", [target, attr, text, side]));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * tb.tensor(data, shape?, dtype?) or tb.tensor(data, {shape, dtype}): data is a TypedArray
   * (its dtype: TYPED_DTYPE), nested arrays of numbers / booleans (float32, or bool), a number
   * or a boolean. Anything else goes to Python's tb.tensor, which refuses it with an error
   * naming `data` (TypeError: strings, objects, null, undefined; ValueError: ragged arrays;
   * OverflowError: integers that do not fit the dtype).
   */
  async tensor(data, shape, dtype) {
    if (isPromise(data)) data = await data;  // tb.tensor(tb.add(...)) not awaited yet
    if (shape !== null && typeof shape === "object" && !Array.isArray(shape)
      && !isTypedArray(shape)) {
      ({ shape, dtype } = shape);  // options object
    }
    if (dtype !== undefined && dtype !== null && !DTYPES.includes(dtype)) {
      throw new TypeError(`tensor: dtype must be one of ${DTYPES.join(", ")}, got ${
        JSON.stringify(dtype) ?? String(dtype)}`);
    }
    dtype = dtype ?? undefined;
    let shp = shape ? [...shape] : null, flat = null;
    const typed = isTypedArray(data);
    if (typed && TYPED_DTYPE.has(data.constructor)) {
      dtype = dtype ?? TYPED_DTYPE.get(data.constructor);
      shp = shp ?? [data.length];
      flat = fastStorage(data, dtype, true);
    } else if (!typed) {
      const f = flatten(data);
      if (f !== null) {
        shp = shp ?? f.shape;
        dtype = dtype ?? (f.values.length && f.values.every((v) => typeof v === "boolean")
          ? "bool" : "float32");
        flat = fastStorage(f.values, dtype, false);
      }
    }
    if (flat !== null) {
      const n = shp.reduce((a, b) => a * b, 1);
      if (n !== flat.length) {
        throw new RangeError(`tensor: shape [${shp}] holds ${n} values, data has ${flat.length}`);
      }
      return this._request("tensor", [flat, shp, dtype]);
    }
    // Python's tb.tensor decides (and names `data` in its errors)
    const { text, side } = this.codec.encodeCall([data, shape ? [...shape] : null,
      dtype ?? null, null], null);
    return this._request("tensorFrom", [text, side]);
  }

  /** Any runtime op by name: tb.op("logsumexp", x, tb.kw({axis: 1})). */
  op(name, ...rawArgs) {
    const [args, kwargs] = splitKwargs(rawArgs);
    if (hasSym(args)) {
      const syms = args.flat().filter((a) => a instanceof Sym);
      // a scan step's tape (scan.js) records values of an enclosing grad's tape too
      const tape = (syms.find((a) => a.tape.record !== Tape.prototype.record) ?? syms[0]).tape;
      return tape.record(name, args, kwargs);
    }
    return this._call(null, name, args, kwargs);
  }

  /** The values of tensor t: a TypedArray (a copy), or a view {data, shape, dtype, view,
   * release} whose `data` stays valid when the WASM heap grows (it is made again then). */
  async _data(t, view) {
    const h = t[kHandle];
    const res = await this.channel.request("data", [h.use(), view, view ? null : t.dtype]);
    const fix = (data) => {
      if (res.tagged !== undefined || res.typed) return data;
      if (t.dtype === "float64") return Float64Array.from(data);
      if (t.dtype === "int64") return BigInt64Array.from(data, (v) => BigInt(v));
      if (t.dtype === "bool" && !(data instanceof Uint8Array)) return Uint8Array.from(data);
      return data;
    };
    let data = res.tagged !== undefined ? this.codec.result(res.tagged) : fix(res.data);
    if (!view) return data;
    const isView = !!res.view && data === res.data;
    const refresh = isView ? res.refresh : undefined;
    let released = false;
    return {
      get data() {
        if (released) return null;
        // a view of the WASM heap is detached when the heap grows: view the new heap
        if (refresh && data.buffer.byteLength === 0) data = refresh();
        return data;
      },
      shape: t.shape, dtype: t.dtype, view: isView,
      release() { released = true; data = null; },
    };
  }

  /** grad(f): f(...tensors) -> scalar tensor, written with tb ops (traced, run in Python). */
  grad(f, argnums) { return this._transform("grad", f, argnums); }
  valueAndGrad(f, argnums) { return this._transform("value_and_grad", f, argnums); }

  _transform(kind, f, argnums) {
    return async (...args) => {
      let program;
      if (typeof f === "function" && !f[kHandle]) {
        const tape = new Tape();
        const syms = args.map(() => tape.input());
        const out = await f(...syms);
        program = { nodes: tape.nodes, out };
      } else {
        // a Python function (e.g. from pyimport): the program is one call of it
        const arg = args.map((_, i) => ({ [kSym]: i }));
        program = { nodes: [{ fn: "$call", target: f, args: arg }], out: { [kSym]: args.length } };
      }
      const nums = argnums === undefined ? null : [].concat(argnums);
      const { text, side } = this.codec.encodeCall([program, args, nums], null);
      return this._request("transform", [kind, text, side]);
    };
  }

  /** Import a Python module; returns a handle-backed proxy (await attributes, call methods). */
  pyimport(name) { return this._request("importModule", [name]); }

  _proxy(h, attr, root = false) {
    const tb = this;
    const target = function () {};
    // console.log in Node shows the proxy's target: say what it stands for
    target[Symbol.for("nodejs.util.inspect.custom")] = () => (h.disposed
      ? `<Python ${h.typeName} (disposed)>` : `<Python ${h.typeName}${attr ? "." + attr : ""}>`);
    const proxy = new Proxy(target, {
      get(_, prop) {
        if (prop === kHandle) return h;
        if (prop === "then") {
          if (attr === null) return undefined;  // the handle itself is not a promise
          return (res, rej) => {
            try {
              tb._request("getAttr", [h.use(), attr]).then(res, rej);
            } catch (e) {
              rej(e);
            }
          };
        }
        if (prop === "dispose" || prop === Symbol.dispose) return () => tb._release(h);
        if (prop === "toString") return () => `<Python ${h.typeName}${attr ? "." + attr : ""}>`;
        if (typeof prop === "symbol") return undefined;
        // attribute proxies are made once per handle and path
        const path = attr ? `${attr}.${prop}` : prop;
        const kids = h.children ??= new Map();
        let child = kids.get(path);
        if (child === undefined) kids.set(path, child = tb._proxy(h, path));
        return child;
      },
      apply(_, thisArg, rawArgs) {
        const [args, kwargs] = splitKwargs(rawArgs);
        return tb._call(h, attr, args, kwargs);
      },
    });
    if (root) this._track(proxy, h);
    return proxy;
  }

  /** Live handles: the bridge's stats() (live, refs, by_type...) plus the JS-side count. */
  async handles() {
    const s = await this._request("stats", []);
    return { ...s, count: s.live, byType: s.by_type, js: this._live.size };
  }

  async memory() {
    const m = await this.channel.request("memory", []);
    return { runtime: await this._result(m.runtime), tf: m.tf };
  }

  /** Run Python code in the runtime's namespace (tests, debugging). */
  runPython(code) { return this._request("run", [code]); }

  /**
   * Register a converter (both directions optional):
   *   python: "module.Type"    the Python type (by qualified name)
   *   fromPython: "lambda v: ..." | Python callable  Python object -> plain data (default: by handle)
   *   toJs: (data) => value    plain data -> JS value
   *   js: SomeClass            the JS class (instanceof, most derived wins)
   *   fromJs: (value) => data  JS value -> plain data (default: its own enumerable properties)
   *   toPython: "lambda d: ..." | Python callable  plain data -> Python object
   *   name: the converter's name (default: the Python type or JS class name)
   */
  async registerConverter({ name, python, js, fromPython, toJs, fromJs, toPython } = {}) {
    name = name ?? python ?? js?.name;
    if (!name) throw new TypeError("registerConverter: give `python` (a type name) or `js` (a class)");
    if (js && toPython === undefined) {
      throw new TypeError("registerConverter: `js` needs `toPython` (Python source or callable)");
    }
    if (python && toJs === undefined && js === undefined) {
      throw new TypeError("registerConverter: `python` needs `toJs` (a JS function)");
    }
    const spec = { name, python: python ?? null, fromPython: fromPython ?? null,
      toJs: typeof toJs === "function", toPython: toPython ?? null };
    const { text, side } = this.codec.encodeValue(spec);
    const r = await this._request("registerConverter", [text, side]);
    if (typeof toJs === "function") this.codec.byName.set(name, toJs);
    if (js) this.codec.byClass.set(js, { name, fromJs: fromJs ?? ((v) => ({ ...v })) });
    return r;
  }

  async unregisterConverter(name, python = null) {
    this.codec.byName.delete(name);
    for (const [cls, c] of this.codec.byClass) if (c.name === name) this.codec.byClass.delete(cls);
    await this.channel.request("unregisterConverter", [name, python]);
  }

  /**
   * Interrupt the Python code running in the worker: it raises KeyboardInterrupt at its next
   * check (host jobs and runtime loops stop at their safe points); the pending call rejects.
   * Needs a cross-origin isolated page (shared memory); returns false where it cannot.
   */
  interrupt() { return this.channel.interrupt?.() ?? false; }

  async close() {
    this.closed = true;
    await this.channel.close?.();
  }
}

export { Kwargs, TYPED };
