// The JS half of the conversion layer (isolated: see glue_py.js). JS values are encoded into
// transport values before they cross to Pyodide (in-process or through postMessage), and
// transport values coming back are decoded into native values and handle objects.

export const kHandle = Symbol.for("tensorbridge.handle");

/** A marker for keyword arguments: tb.kw({axis: 1}). */
export class Kwargs {
  constructor(obj) { this.obj = obj; }
}

export function isTypedArray(x) {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}

/**
 * JS -> transport. `fnEncoder(fn)` decides how functions cross (in-process: as they are, so
 * Pyodide wraps them; from the page to a worker: as {$cb: id} callbacks).
 */
export function encode(x, fnEncoder, seen = new Set()) {
  if (x === undefined) return null;
  if (x === null || typeof x === "number" || typeof x === "string" || typeof x === "boolean") {
    return x;
  }
  if (typeof x === "bigint") {
    return x >= -(2n ** 53n) + 1n && x <= 2n ** 53n - 1n ? Number(x) : { $bigint: x.toString() };
  }
  if (typeof x === "function") {
    if (x[kHandle]) return x[kHandle].ref();
    return fnEncoder(x);
  }
  if (x[kHandle]) return x[kHandle].ref();
  if (isTypedArray(x)) return x;
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (seen.has(x)) throw new TypeError("tensorbridge: cannot convert a cyclic structure");
  seen.add(x);
  try {
    if (Array.isArray(x)) return x.map((v) => encode(v, fnEncoder, seen));
    if (x instanceof Map) {
      return { $map: [...x].map(([k, v]) => [encode(k, fnEncoder, seen),
        encode(v, fnEncoder, seen)]) };
    }
    if (x instanceof Set) return { $set: [...x].map((v) => encode(v, fnEncoder, seen)) };
    const proto = Object.getPrototypeOf(x);
    if (proto === Object.prototype || proto === null) {
      const out = {};
      for (const [k, v] of Object.entries(x)) out[k] = encode(v, fnEncoder, seen);
      return out;
    }
  } finally {
    seen.delete(x);
  }
  throw new TypeError(`tensorbridge: cannot convert a ${x.constructor?.name ?? typeof x} to ` +
    "Python (plain data, typed arrays, Map, Set, functions and tensorbridge handles cross)");
}

/** transport -> JS. `makeHandle(kind, desc)` builds handle objects for refs/tensors/functions. */
export function decode(x, makeHandle) {
  if (x === null || x === undefined || typeof x !== "object") return x ?? null;
  if (isTypedArray(x)) return x;
  if (Array.isArray(x)) return x.map((v) => decode(v, makeHandle));
  if (x instanceof Map) x = Object.fromEntries(x);
  if ("$tensor" in x) return makeHandle("tensor", x);
  if ("$ref" in x) return makeHandle("ref", x);
  if ("$function" in x) return makeHandle("function", x);
  if ("$bigint" in x) return BigInt(x.$bigint);
  if ("$bytes" in x) return x.$bytes instanceof Uint8Array ? x.$bytes : new Uint8Array(x.$bytes);
  if ("$dict" in x) {
    const out = {};
    for (const [k, v] of x.$dict) out[k] = decode(v, makeHandle);
    return out;
  }
  const out = {};
  for (const [k, v] of Object.entries(x)) out[k] = decode(v, makeHandle);
  return out;
}

// JSON with the values JSON lacks (NaN, +-Infinity, BigInt, typed arrays, undefined): used for
// callback payloads through a SharedArrayBuffer.
export function packJSON(value) {
  return JSON.stringify(value, (k, v) => {
    if (typeof v === "number" && !Number.isFinite(v)) return { $num: String(v) };
    if (typeof v === "bigint") return { $bigint: v.toString() };
    if (v === undefined) return null;
    if (isTypedArray(v)) return { $typed: v.constructor.name, values: Array.from(v, Number) };
    return v;
  });
}

export function unpackJSON(text) {
  return JSON.parse(text, (k, v) => {
    if (v && typeof v === "object") {
      if ("$num" in v) return Number(v.$num);
      if ("$typed" in v) return new globalThis[v.$typed](v.values);
    }
    return v;
  });
}
