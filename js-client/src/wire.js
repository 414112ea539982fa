// The JS half of tensorbridge.bridge's "js" protocol (see bridge/js/host.py for the Python half
// and the table of wire nodes). Values cross as descriptors written as JSON text plus a list of
// side buffers (typed arrays, bytes); results of calls are "tagged" so that numbers, strings and
// tensors need neither JSON nor proxies. One Codec per client: it owns the JS functions and
// objects Python holds (by id), the ring of JS errors that crossed to Python (so they come back
// unchanged), and the converters registered with tb.registerConverter.

export const kHandle = Symbol.for("tensorbridge.handle");
export const kSym = Symbol.for("tensorbridge.sym");

/** A marker for keyword arguments: tb.kw({axis: 1}). */
export class Kwargs {
  constructor(obj) { this.obj = obj; }
}

export function isTypedArray(x) {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}

export const TYPED = {
  bool: Uint8Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  float32: Float32Array, float64: Float64Array,
};
const DTYPE_OF = new Map([[Int8Array, "int8"], [Uint8Array, "uint8"],
  [Uint8ClampedArray, "uint8"], [Int16Array, "int16"], [Uint16Array, "uint16"],
  [Int32Array, "int32"], [Uint32Array, "uint32"], [BigInt64Array, "int64"],
  [BigUint64Array, "uint64"], [Float32Array, "float32"], [Float64Array, "float64"]]);
export const dtypeOf = (ta) => DTYPE_OF.get(ta.constructor);

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const ERROR_RING = 256;

const kBridge = Symbol.for("tensorbridge.error");

/** The fields of a bridge error (TensorBridgeError and its TypeError / RangeError kin). */
function initError(self, node, original) {
  const py = node.lang === "python";
  Object.defineProperty(self, kBridge, { value: true });
  self.name = py ? "PythonError" : node.type || "Error";
  self.language = node.lang;
  self.type = node.type;
  /** The exception type as Python saw it (JS errors are JsCallbackError there). */
  self.pyType = py ? node.type : "JsCallbackError";
  // a JS error that went through Python carries the Python frames it crossed (pytb)
  const pyFrames = py ? node.tb || [] : node.pytb || [];
  /** Python's frames (File "...", line ...), then for a JS error its JS stack lines. */
  self.traceback = py ? pyFrames : [...pyFrames, ...(node.tb || [])];
  self.pyTraceback = py
    ? `Traceback (most recent call last):\n${pyFrames.join("")}${node.type}: ${node.msg}`
    : (pyFrames.length ? `Traceback (most recent call last):\n${pyFrames.join("")}`
      + `JsCallbackError: ${node.type}: ${node.msg}\nJS stack (innermost last):\n` : "")
      + (node.tb || []).join("\n");
  /** The bridge's Error descriptor, unchanged: sent back to Python as it is. */
  self.descriptor = node;
  if (original) self.cause = original;
  else if (node.cause) self.cause = bridgeError(node.cause);
}

const messageOf = (node) => (node.lang === "python" ? `${node.type}: ${node.msg}` : node.msg);

/** An error that crossed from Python (or a JS error that went through Python and came back).
 * Python's TypeErrors are also JS TypeErrors, its OverflowErrors and IndexErrors RangeErrors
 * (`instanceof` both); all are `instanceof TensorBridgeError`. */
export class TensorBridgeError extends Error {
  constructor(node, original = null) {
    super(messageOf(node));
    initError(this, node, original);
  }

  static [Symbol.hasInstance](x) {
    return x !== null && (typeof x === "object" || typeof x === "function") && x[kBridge] === true;
  }
}

class PythonTypeError extends TypeError {
  constructor(node, original = null) {
    super(messageOf(node));
    initError(this, node, original);
  }
}

class PythonRangeError extends RangeError {
  constructor(node, original = null) {
    super(messageOf(node));
    initError(this, node, original);
  }
}

/** The JS error for an Error descriptor. */
export function bridgeError(node, original = null) {
  if (node.lang === "python") {
    const classes = (node.classes ?? []).map((c) => String(c).split(".").pop());
    if (classes.includes("TypeError")) return new PythonTypeError(node, original);
    if (classes.includes("OverflowError") || classes.includes("IndexError")) {
      return new PythonRangeError(node, original);
    }
  }
  return new TensorBridgeError(node, original);
}

/** Serializable {name, message, stack} of any thrown value (for postMessage). */
export function plainError(e) {
  if (e instanceof TensorBridgeError) return { bridge: e.descriptor };
  return { name: e?.name ?? "Error", message: String(e?.message ?? e), stack: e?.stack ?? "" };
}

export function reviveError(p) {
  if (p?.bridge) return bridgeError(p.bridge);
  const e = new Error(p?.message);
  e.name = p?.name ?? "Error";
  if (p?.stack) e.stack = p.stack;
  return e;
}

function classChain(e) {
  const out = [];
  for (let p = Object.getPrototypeOf(e); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    const n = p.constructor?.name;
    if (n) out.push(n);
  }
  return out;
}

export class Codec {
  /**
   * makeHandle(node): a JS object for a Python object by handle ("r", "p" and "T" nodes).
   */
  constructor(makeHandle) {
    this.makeHandle = makeHandle;
    this.callbacks = new Map();   // id -> JS function Python holds
    this.objects = new Map();     // id -> JS object Python holds
    this.nextId = 1;
    this.errors = new Map();      // jid -> JS error that crossed to Python
    this.nextJid = 1;
    this.byClass = new Map();     // JS class -> {name, fromJs}
    this.byName = new Map();      // converter name -> toJs
  }

  // ---- JS -> wire ------------------------------------------------------------------------
  /** The wire text of call arguments [args, kwargs] and its side buffers. */
  encodeCall(args, kwargs) {
    const side = [];
    const seen = new Set();
    const a = args.map((x) => this.enc(x, side, seen));
    const k = kwargs ? this.encDict(Object.entries(kwargs), side, seen) : null;
    return { text: JSON.stringify([a, k]), side };
  }

  encodeValue(x) {
    const side = [];
    return { text: JSON.stringify(this.enc(x, side, new Set())), side };
  }

  encDict(entries, side, seen) {
    const k = [], v = [];
    for (const [key, val] of entries) { k.push(key); v.push(this.enc(val, side, seen)); }
    return { $: "D", k, v };
  }

  enc(x, side, seen) {
    switch (typeof x) {
      case "number":
        // integers: exact ints in Python; others (and non-finite, unsafe integers, -0) floats
        if (Object.is(x, -0)) return { $: "FL", v: "-0" };
        if (Number.isSafeInteger(x) || (Number.isFinite(x) && !Number.isInteger(x))) return x;
        return { $: "FL", v: String(x) };
      case "string": case "boolean": return x;
      case "undefined": return null;
      case "bigint":
        return x >= -MAX_SAFE && x <= MAX_SAFE ? Number(x) : { $: "BI", v: x.toString() };
      case "function": {
        const h = x[kHandle];
        if (h) return { $: "H", id: h.use() };
        const id = this.nextId++;
        this.callbacks.set(id, x);
        return { $: "CB", id, n: x.name || "" };
      }
      case "symbol": throw new TypeError(`tensorbridge: cannot send a symbol to Python`);
      default: break;
    }
    if (x === null) return null;
    const h = x[kHandle];
    if (h) return { $: "H", id: h.use() };
    if (x[kSym] !== undefined) return { $: "SY", i: x[kSym] };
    if (isTypedArray(x)) {
      const dtype = dtypeOf(x);
      if (dtype) { side.push(x); return { $: "A", i: side.length - 1, d: dtype, s: [x.length] }; }
    } else if (x instanceof ArrayBuffer) {
      side.push(new Uint8Array(x));
      return { $: "B", i: side.length - 1 };
    } else if (x instanceof DataView) {
      side.push(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
      return { $: "B", i: side.length - 1 };
    } else if (x instanceof TensorBridgeError) {
      return x.descriptor;  // re-crosses unchanged (a Python error finds its exception again)
    } else if (x instanceof Error) {
      return this.encError(x);
    }
    if (seen.has(x)) throw new TypeError("tensorbridge: cannot send a cyclic structure to Python");
    seen.add(x);
    try {
      if (Array.isArray(x)) return x.map((v) => this.enc(v, side, seen));
      const proto = Object.getPrototypeOf(x);
      if (proto === Object.prototype || proto === null) {
        return this.encDict(Object.entries(x), side, seen);
      }
      for (let c = x.constructor; c && c !== Object; c = Object.getPrototypeOf(c)) {
        const conv = this.byClass.get(c);  // most derived registered class wins
        if (conv) return { $: "CV", n: conv.name, v: this.enc(conv.fromJs(x), side, seen) };
      }
      if (x instanceof Map) {
        const keys = [...x.keys()];
        if (keys.every((k) => typeof k === "string")) return this.encDict(x.entries(), side, seen);
        return { $: "M", k: keys.map((k) => this.enc(k, side, seen)),
          v: [...x.values()].map((v) => this.enc(v, side, seen)) };
      }
      if (x instanceof Set) return { $: "ST", v: [...x].map((v) => this.enc(v, side, seen)) };
    } finally {
      seen.delete(x);
    }
    // anything else crosses by reference: Python holds it opaquely and can give it back
    const id = this.nextId++;
    this.objects.set(id, x);
    return { $: "O", id, c: x.constructor?.name ?? "Object" };
  }

  encError(e) {
    const jid = this.nextJid++;
    this.errors.set(jid, e);
    if (this.errors.size > ERROR_RING) this.errors.delete(this.errors.keys().next().value);
    const stack = typeof e.stack === "string" ? e.stack.split("\n") : [];
    const frames = stack.filter((l) => /^\s+at /.test(l) || /@/.test(l)).map((l) => l.trim());
    return { $: "E", lang: "js", type: e.name || e.constructor?.name || "Error",
      msg: String(e.message ?? e), module: "", classes: classChain(e),
      tb: frames.reverse(), cause: e.cause instanceof Error ? this.encError(e.cause) : null,
      ck: e.cause instanceof Error ? "cause" : "", data: { jid } };
  }

  // ---- wire -> JS ------------------------------------------------------------------------
  dec(w, side) {
    if (w === null || typeof w !== "object") return w;
    if (Array.isArray(w)) return w.map((v) => this.dec(v, side));
    switch (w.$) {
      case "T": case "R": case "F": return this.makeHandle(w);
      case "D": {
        const out = {};
        for (let i = 0; i < w.k.length; i++) {
          const k = w.k[i], v = this.dec(w.v[i], side);
          if (k === "__proto__") Object.defineProperty(out, k, { value: v, enumerable: true });
          else out[k] = v;
        }
        return out;
      }
      case "FL": return Number(w.v);
      case "BI": return BigInt(w.v);
      case "B": return side[w.i];
      case "A": return this.decArray(w, side);
      case "N": return null;
      case "CB": return this.callbacks.get(w.id) ?? null;
      case "O": return this.objects.get(w.id) ?? null;
      case "M": return new Map(w.k.map((k, i) => [this.dec(k, side), this.dec(w.v[i], side)]));
      case "ST": return new Set(w.v.map((v) => this.dec(v, side)));
      case "CV": {
        const v = this.dec(w.v, side);
        const toJs = this.byName.get(w.n);
        return toJs ? toJs(v) : v;
      }
      case "E": return this.errorOf(w);
      case "SY": return { [kSym]: w.i };
      default: throw new Error(`tensorbridge: unknown wire node ${JSON.stringify(w)}`);
    }
  }

  decArray(w, side) {
    const bytes = side[w.i];
    const C = TYPED[w.d];
    const n = w.s.reduce((a, b) => a * b, 1);
    // side buffers are fresh copies (aligned): view them without another copy
    const data = bytes.byteOffset % C.BYTES_PER_ELEMENT === 0
      ? new C(bytes.buffer, bytes.byteOffset, n)
      : new C(bytes.slice().buffer, 0, n);
    if (w.m) data.mask = this.dec(w.m, side);
    if (w.s.length === 1) return data;
    return { data, shape: w.s, dtype: w.d };
  }

  /** A tagged result -> value; throws for a raised error. */
  result(r) {
    if (typeof r === "string") {
      const tag = r.charCodeAt(0);
      if (tag === 115) return r.slice(1);  // "s"
      if (tag === 116) return this.makeHandle(tensorNode(r));  // "t"
      if (tag === 106) return this.dec(JSON.parse(r.slice(1)), null);  // "j"
      if (tag === 101) throw this.errorOf(JSON.parse(r.slice(1)));  // "e"
      throw new Error(`tensorbridge: bad tagged result ${r.slice(0, 40)}`);
    }
    if (r === undefined) return null;
    if (Array.isArray(r)) {
      const text = r[0];
      if (text.charCodeAt(0) === 101) throw this.errorOf(JSON.parse(text.slice(1)));
      return this.dec(JSON.parse(text.slice(1)), r.slice(1));
    }
    return r;
  }

  errorOf(node) {
    const jid = node.lang === "js" ? node.data?.jid : undefined;
    return bridgeError(node, jid !== undefined ? this.errors.get(jid) ?? null : null);
  }

  // ---- a JS value as a tagged result (what a callback answers Python) ---------------------
  tag(v) {
    switch (typeof v) {
      case "number": case "boolean": return v;
      case "undefined": return undefined;
      case "string": return "s" + v;
      case "bigint": return v >= -MAX_SAFE && v <= MAX_SAFE ? Number(v)
        : "j" + JSON.stringify({ $: "BI", v: v.toString() });
      default: break;
    }
    if (v === null) return undefined;
    const { text, side } = this.encodeValue(v);
    return side.length ? ["j" + text, ...side] : "j" + text;
  }

  tagError(e) {
    const node = e instanceof TensorBridgeError ? e.descriptor : this.encError(
      e instanceof Error ? e : Object.assign(new Error(String(e)), { name: "Error" }));
    return "e" + JSON.stringify(node);
  }

  /** Call JS function `cb` for Python: args already decoded; answers tagged (or a promise). */
  invoke(cb, args) {
    const fn = this.callbacks.get(cb);
    try {
      if (!fn) throw new ReferenceError(`tensorbridge: JS function #${cb} was released`);
      const r = fn(...args);
      if (r && typeof r.then === "function") {
        return r.then((v) => this.tag(v), (e) => this.tagError(e));
      }
      return this.tag(r);
    } catch (e) {
      return this.tagError(e);
    }
  }

  /** Arguments Python sent to a JS function (fast: as they are; wire: decoded). */
  callArgs(text, side) {
    const [args, kw] = JSON.parse(text);
    const out = args.map((a) => this.dec(a, side));
    if (kw) out.push(this.dec(kw, side));  // keyword arguments: one trailing plain object
    return out;
  }

  release(cb) { this.callbacks.delete(cb); }
  releaseObject(id) { this.objects.delete(id); }
}

/** "t<id> <dtype> <backend> <d0,d1,...>" -> a tensor node. */
export function tensorNode(r) {
  const sp1 = r.indexOf(" "), sp2 = r.indexOf(" ", sp1 + 1), sp3 = r.indexOf(" ", sp2 + 1);
  const dims = r.slice(sp3 + 1);
  return { $: "T", id: +r.slice(1, sp1), d: r.slice(sp1 + 1, sp2), b: r.slice(sp2 + 1, sp3),
    s: dims ? dims.split(",").map(Number) : [] };
}

// A tagged result through a SharedArrayBuffer (synchronous callbacks): a small header, the
// text, then each side buffer (8-byte aligned).
export function packTagged(r, u8) {
  // layout: [u32 textBytes][u32 nSide][u32 len_i ...] text, pad, buffers
  const text = typeof r === "string" ? r : r[0];
  const side = typeof r === "string" ? [] : r.slice(1);
  const head = 8 + 4 * side.length;
  const bytes = encoder.encode(text);  // (encodeInto refuses shared memory)
  if (head + bytes.length > u8.length) throw new RangeError("overflow");
  u8.set(bytes, head);
  const written = bytes.length;
  let off = align8(head + written);
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  dv.setUint32(0, written, true);
  dv.setUint32(4, side.length, true);
  side.forEach((b, i) => {
    const bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    if (off + bytes.length > u8.length) throw new RangeError("overflow");
    u8.set(bytes, off);
    dv.setUint32(8 + 4 * i, bytes.length, true);
    off = align8(off + bytes.length);
  });
  if (off > u8.length) throw new RangeError("overflow");
  return off;
}

export function unpackTagged(u8, decoder) {
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const n = dv.getUint32(0, true), nSide = dv.getUint32(4, true);
  const head = 8 + 4 * nSide;
  const text = decoder.decode(u8.slice(head, head + n));
  if (!nSide) return text;
  const out = [text];
  let off = align8(head + n);
  for (let i = 0; i < nSide; i++) {
    const len = dv.getUint32(8 + 4 * i, true);
    out.push(u8.slice(off, off + len));
    off = align8(off + len);
  }
  return out;
}

const align8 = (n) => (n + 7) & ~7;
const encoder = new TextEncoder();
