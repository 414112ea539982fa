// The public, promise-based API (the same object in Node and in the browser). Requests go
// through a channel: in-process (Node) or postMessage to the worker (browser).

import { Kwargs, decode, encode, isTypedArray, kHandle } from "./convert.js";

export class TensorBridgeError extends Error {
  constructor(desc) {
    super(desc.message);
    this.name = desc.name === "PythonError" ? "PythonError" : desc.name || "TensorBridgeError";
    this.pyType = desc.type;
    this.pyTraceback = desc.traceback;
  }
}

export class DisposedError extends Error {
  constructor(what) {
    super(`tensorbridge: ${what} was disposed; it can no longer be used`);
    this.name = "DisposedError";
  }
}

const UNARY = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "square", "abs", "negative",
  "reciprocal", "tanh", "sigmoid", "softplus", "sin", "cos", "tan", "erf", "erfc", "lgamma",
  "digamma", "sign", "floor", "ceil", "round", "isnan", "isfinite", "logical_not", "relu", "elu",
  "gelu", "selu", "softmax", "log_softmax", "cholesky", "stop_gradient", "flatten"];
const BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "mod",
  "floor_divide", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
  "logical_and", "logical_or", "matmul"];
const OTHER = ["where", "clip", "sum", "mean", "prod", "max", "min", "logsumexp", "argmax",
  "argmin", "cumsum", "reshape", "transpose", "expand_dims", "squeeze", "concat", "stack",
  "broadcast_to", "swapaxes", "getitem", "take", "index_update", "index_add", "one_hot",
  "triangular_solve", "tril", "triu", "cast", "zeros", "ones", "full", "eye", "arange",
  "linspace", "zeros_like", "ones_like", "full_like", "polygamma"];
export const OPS = [...UNARY, ...BINARY, ...OTHER];
// method name on Tensor -> op
const METHODS = { add: "add", sub: "subtract", mul: "multiply", div: "divide", pow: "power",
  neg: "negative", matmul: "matmul", ...Object.fromEntries([...UNARY, ...OTHER].map((n) => [n, n])),
  lt: "less", le: "less_equal", gt: "greater", ge: "greater_equal", eq: "equal", ne: "not_equal",
  maximum: "maximum", minimum: "minimum", mod: "mod", astype: "cast", T: "transpose" };

/** A value traced inside grad/valueAndGrad: records ops instead of running them. */
class Sym {
  constructor(tape, index) { this.tape = tape; this.index = index; }
}
for (const [m, op] of Object.entries(METHODS)) {
  Sym.prototype[m] = function (...args) { return this.tape.record(op, [this, ...args]); };
}

class Tape {
  constructor() { this.nodes = []; this.nInputs = 0; }
  input() { return new Sym(this, this.nInputs++); }
  record(fn, args, kwargs = null) {
    this.nodes.push({ fn, args: args.map((a) => this.ref(a)), kwargs: kwargs
      ? this.ref(kwargs) : null });
    return new Sym(this, this.nInputs + this.nodes.length - 1);
  }
  ref(a) {
    if (a instanceof Sym) {
      if (a.tape !== this) throw new Error("tensorbridge: a traced value escaped its grad call");
      return { $sym: a.index };
    }
    if (Array.isArray(a)) return a.map((x) => this.ref(x));
    if (a && typeof a === "object" && !a[kHandle] && !isTypedArray(a) && !(a instanceof Kwargs)) {
      return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, this.ref(v)]));
    }
    return a;
  }
}

function hasSym(args) {
  return args.some((a) => a instanceof Sym || (Array.isArray(a) && a.some((x) => x instanceof Sym)));
}

function splitKwargs(args) {
  const last = args[args.length - 1];
  if (last instanceof Kwargs) return [args.slice(0, -1), last.obj];
  return [args, null];
}

export class Handle {
  constructor(tb, id, kind, typeName, isTensor = false) {
    this.tb = tb; this.id = id; this.kind = kind; this.typeName = typeName;
    this.isTensor = isTensor; this.disposed = false;
  }
  ref() {
    if (this.disposed) throw new DisposedError(this.describe());
    return { $h: this.id };
  }
  describe() { return `${this.typeName} handle #${this.id}`; }
}

export class Tensor {
  constructor(tb, desc) {
    const h = new Handle(tb, desc.$tensor, "tensor", "Tensor", true);
    h.describe = () => `Tensor #${desc.$tensor} (${desc.dtype}[${desc.shape}])`;
    Object.defineProperty(this, kHandle, { value: h });
    this.shape = desc.shape;
    this.dtype = desc.dtype;
    this.backend = desc.backend;
    tb._track(this, h);
  }
  get size() { return this.shape.reduce((a, b) => a * b, 1); }
  get ndim() { return this.shape.length; }
  get disposed() { return this[kHandle].disposed; }
  /** {data: TypedArray, shape, dtype}: a copy. */
  async data() { return this[kHandle].tb._data(this, false); }
  /** A zero-copy view where possible (Node, wasm/cpu backends); call release() when done. */
  async view() { return this[kHandle].tb._data(this, true); }
  /** Nested JS arrays (a number for 0-d). */
  async array() {
    return this[kHandle].tb._request({ op: "array", target: this[kHandle].ref().$h });
  }
  dispose() { this[kHandle].tb._release(this[kHandle]); }
  [Symbol.dispose]() { this.dispose(); }
  toString() { return `Tensor(${this.dtype}[${this.shape}])`; }
}
for (const [m, op] of Object.entries(METHODS)) {
  Tensor.prototype[m] = function (...args) { return this[kHandle].tb.op(op, this, ...args); };
}

const TYPED = { float32: Float32Array, float64: Float64Array, int32: Int32Array,
  int64: BigInt64Array, bool: Uint8Array };

function flatten(data, shape) {
  if (!Array.isArray(data)) return [data];
  const out = [];
  const walk = (x, d) => {
    if (Array.isArray(x)) {
      if (shape.length === d) shape.push(x.length);
      else if (shape[d] !== x.length) throw new RangeError("tensor: ragged nested array");
      for (const v of x) walk(v, d + 1);
    } else out.push(x);
  };
  walk(data, 0);
  return out;
}

export class TensorBridge {
  constructor(channel, info) {
    this.channel = channel;
    this.info = info;
    this._live = new Map();  // id -> WeakRef(object) for tb.handles() and leak checks
    this._finalizer = new FinalizationRegistry((h) => this._finalized(h));
    this._pendingRelease = [];
    for (const name of OPS) {
      if (!(name in this)) this[name] = (...args) => this.op(name, ...args);
    }
    this.sub = this.subtract; this.mul = this.multiply; this.div = this.divide;
    this.pow = this.power; this.neg = this.negative;
  }

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
    this._pendingRelease.push([h.id, h.isTensor]);
    if (this._pendingRelease.length === 1) {
      queueMicrotask(() => {
        const items = this._pendingRelease.splice(0);
        if (items.length && !this.closed) {
          this.channel.request({ op: "releaseMany", items }).catch(() => {});
        }
      });
    }
  }

  _release(h) {
    if (h.disposed) return;
    h.disposed = true;
    this._live.delete(h.id);
    this._finalizer.unregister(h);
    if (!this.closed) {
      this.channel.request({ op: "release", target: h.id, tensor: h.isTensor }).catch(() => {});
    }
  }

  async _request(msg) {
    try {
      return await this.channel.request(msg);
    } catch (e) {
      throw e instanceof Error ? e : new TensorBridgeError(e);
    }
  }

  _decode(value) {
    return decode(value, (kind, desc) => {
      if (kind === "tensor") return new Tensor(this, desc);
      return this._proxy(desc.$ref ?? desc.$function, desc.type, kind === "function", null);
    });
  }

  _encode(x) {
    return encode(x, (fn) => this.channel.encodeFunction(fn));
  }

  /** tb.tensor(data, shape?, dtype?): data is a TypedArray, nested arrays or a number. */
  async tensor(data, shape, dtype) {
    let flat, shp = shape ? [...shape] : null;
    if (isTypedArray(data)) {
      flat = data;
      shp = shp ?? [data.length];
      dtype = dtype ?? { Float32Array: "float32", Float64Array: "float64", Int32Array: "int32",
        BigInt64Array: "int64", Uint8Array: "bool" }[data.constructor.name] ?? "float32";
      if (data instanceof Uint8Array && dtype !== "bool") flat = new TYPED[dtype](data);
    } else {
      const inferred = [];
      const values = flatten(data, inferred);
      shp = shp ?? inferred;
      dtype = dtype ?? (values.every((v) => typeof v === "boolean") && values.length ? "bool"
        : "float32");
      const C = TYPED[dtype];
      if (!C) throw new TypeError(`tensor: unknown dtype ${dtype}`);
      flat = C === BigInt64Array ? BigInt64Array.from(values, (v) => BigInt(v))
        : C.from(values, (v) => (typeof v === "boolean" ? Number(v) : v));
    }
    const n = shp.reduce((a, b) => a * b, 1);
    if (n !== flat.length) {
      throw new RangeError(`tensor: ${flat.length} values do not fill shape [${shp}]`);
    }
    return this._decode(await this._request({ op: "tensor", data: flat, shape: shp, dtype }));
  }

  /** Any runtime op by name: tb.op("logsumexp", x, tb.kw({axis: 1})). */
  op(name, ...rawArgs) {
    if (hasSym(rawArgs)) {
      const tape = rawArgs.find((a) => a instanceof Sym)?.tape
        ?? rawArgs.flat().find((a) => a instanceof Sym).tape;
      const [args, kwargs] = splitKwargs(rawArgs);
      return tape.record(name, args, kwargs);
    }
    return this._op(name, rawArgs);
  }

  async _op(name, rawArgs) {
    const [args, kwargs] = splitKwargs(rawArgs);
    return this._decode(await this._request({ op: "op", name, args: this._encode(args),
      kwargs: kwargs ? this._encode(kwargs) : null }));
  }

  async _data(t, view) {
    const h = t[kHandle];
    const res = await this._request({ op: "data", target: h.ref().$h, view });
    let data = res.data;
    if (res.bytes) {
      const buf = res.bytes.buffer.slice(res.bytes.byteOffset, res.bytes.byteOffset
        + res.bytes.byteLength);
      data = new TYPED[t.dtype](buf);
    } else if (t.dtype === "float64") {
      data = Float64Array.from(data);
    } else if (t.dtype === "int64") {
      data = BigInt64Array.from(data, (v) => BigInt(v));
    } else if (t.dtype === "bool" && !(data instanceof Uint8Array)) {
      data = Uint8Array.from(data);
    }
    const out = { data, shape: t.shape, dtype: t.dtype };
    if (view && res.view && data === res.data) {
      out.view = true;
      out.release = () => { out.data = null; };
    } else if (view) {
      out.view = false;
      out.release = () => { out.data = null; };
    }
    return out;
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
        program = { nodes: tape.nodes, out: tape.ref(out) };
      } else {
        // a Python function (e.g. from pyimport): the program is one call of it
        program = { nodes: [{ fn: "$call", target: f[kHandle].ref(),
          args: args.map((_, i) => ({ $sym: i })) }], out: { $sym: args.length } };
      }
      const res = await this._request({ op: "transform", kind, program: this._encode(program),
        args: this._encode(args), argnums: argnums === undefined ? null : [].concat(argnums) });
      return this._decode(res);
    };
  }

  /** Import a Python module; returns a handle-backed proxy (await attributes, call methods). */
  async pyimport(name) {
    const d = await this._request({ op: "import", name });
    return this._decode(d);
  }

  _proxy(id, typeName, callable, path) {
    const tb = this;
    let h;
    if (path === null) {
      h = new Handle(this, id, callable ? "function" : "ref", typeName);
    }
    const root = path === null ? null : path.root;
    const handle = h ?? root;
    const attr = path === null ? null : path.attr;
    const target = function () {};
    const proxy = new Proxy(target, {
      get(_, prop) {
        if (prop === kHandle) return handle;
        if (prop === "then") {
          if (attr === null) return undefined;  // the handle itself is not a promise
          return (res, rej) => Promise.resolve().then(() => tb._request({ op: "getattr",
            target: handle.ref().$h, attr })).then((v) => tb._decode(v)).then(res, rej);
        }
        if (prop === "dispose") return () => tb._release(handle);
        if (prop === Symbol.dispose) return () => tb._release(handle);
        if (prop === "toString") return () => `<Python ${typeName}${attr ? "." + attr : ""}>`;
        if (typeof prop === "symbol") return undefined;
        return tb._proxy(id, typeName, true, { root: handle,
          attr: attr ? `${attr}.${prop}` : prop });
      },
      async apply(_, thisArg, rawArgs) {
        const [args, kwargs] = splitKwargs(rawArgs);
        return tb._request({ op: "call", target: handle.ref().$h, attr, args: tb._encode(args),
          kwargs: kwargs ? tb._encode(kwargs) : null }).then((v) => tb._decode(v));
      },
    });
    if (h) this._track(proxy, h);
    return proxy;
  }

  /** Live handles: {count, byType} on the Python side, plus the JS-side count. */
  async handles() {
    const py = await this._request({ op: "handles" });
    return { ...py, js: this._live.size };
  }

  async memory() { return this._request({ op: "memory" }); }

  /** Run Python code in the runtime's namespace (tests, debugging). */
  async runPython(code) { return this._decode(await this._request({ op: "run", code })); }

  async close() {
    this.closed = true;
    await this.channel.close?.();
  }
}
