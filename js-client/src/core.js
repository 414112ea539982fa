// The part of the client that lives next to Pyodide: in-process under Node, inside the Web
// Worker in a browser. It boots Pyodide + TF.js, installs the runtime's tfjs backend and answers
// requests ({op, ...}) with transport values (see glue_py.js and convert.js).

import { GLUE_PY } from "./glue_py.js";

function undefNulls(x) {
  if (x === null) return undefined;
  if (Array.isArray(x)) return x.map(undefNulls);
  if (x && typeof x === "object" && Object.getPrototypeOf(x) === Object.prototype) {
    const out = {};
    for (const k in x) out[k] = undefNulls(x[k]);
    return out;
  }
  return x;
}

const DTYPES = new Set(["float32", "float64", "int32", "int64", "bool"]);

export class Core {
  constructor(pyodide, tf, options) {
    this.py = pyodide;
    this.tf = tf;
    this.backend = options.backend || "tfjs";
    this.glue = null;
    this.host = null;
    this.timings = {};
  }

  /** Boot: Pyodide (from a local indexURL) and TF.js in parallel, then the runtime. */
  static async boot({ loadPyodide, tf, indexURL, tfBackend = "wasm", backend = "tfjs",
    packages = [], setWasmPaths, stdout, stderr } = {}) {
    const t0 = performance.now();
    const tfReady = (async () => {
      if (setWasmPaths) setWasmPaths();
      if (tfBackend === "wasm") tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
      const ok = await tf.setBackend(tfBackend);
      if (!ok) throw new Error(`TF.js backend ${tfBackend} could not be initialised`);
      await tf.ready();
      return performance.now() - t0;
    })();
    const pyodide = await loadPyodide({ indexURL, stdout, stderr, packages: ["tensorbridge",
      ...packages] });
    const tPy = performance.now() - t0;
    await tfReady;
    const core = new Core(pyodide, tf, { backend });
    pyodide.registerJsModule("_tensorbridge_tf", tf);
    const ns = pyodide.globals.get("dict")();
    pyodide.runPython(GLUE_PY, { globals: ns });
    core.glue = ns;
    pyodide.runPython(`
from tensorbridge.runtime.backends import tfjs_backend as _tfjs
import _tensorbridge_tf
_tfjs.install(_tensorbridge_tf)
tb.set_backend(${JSON.stringify(backend)})
`, { globals: ns });
    core.host = ns.get("_tfjs")._HOST;
    core.fn = {};
    for (const name of ["call", "get_attr", "op", "import_module", "adopt", "tensor_from",
      "host_id", "tensor_list", "tensor_bytes", "dispose_tensor", "release", "stats",
      "transform", "format_error", "to_js"]) {
      core.fn[name] = ns.get(name);
    }
    core.timings = { pyodideMs: tPy, totalMs: performance.now() - t0 };
    return core;
  }

  toJsFn(r) { return this.fn.to_js(r); }

  out(value) {
    // Python transport value (a PyProxy or primitive) -> plain JS data
    if (value && typeof value.toJs === "function") {
      const js = value.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
      value.destroy();
      return js;
    }
    return value;
  }

  toPy(x) {
    // JS null becomes pyodide's JsNull, not None: turn nulls into undefined (-> None) first
    return x === undefined ? null : this.py.toPy(undefNulls(x), { depth: -1 });
  }

  pyCall(fn, ...args) {
    const conv = args.map((a) => (a === null ? undefined
      : typeof a === "object" && !ArrayBuffer.isView(a) ? this.toPy(a) : a));
    try {
      return this.out(fn(...conv));
    } finally {
      for (const c of conv) if (c && typeof c.destroy === "function") c.destroy();
    }
  }

  /** Handle one request. Throws a plain object {name, type, message, traceback} on errors. */
  dispatch(req) {
    try {
      return this.handle(req);
    } catch (e) {
      throw this.errorOf(e);
    }
  }

  errorOf(e) {
    if (e && e.type && e.constructor && e.constructor.name === "PythonError") {
      const text = String(e.message).trimEnd();
      const m = text.match(new RegExp(`^(?:[\\w.]+\\.)?${e.type}: [\\s\\S]*$`, "m"));
      return { name: "PythonError", type: e.type, message: m ? m[0] : text.split("\n").pop(),
        traceback: text };
    }
    if (e && e.name === "PythonError") return e;
    return { name: e?.name || "Error", type: e?.name || "Error", message: String(e?.message ?? e),
      traceback: e?.stack || "" };
  }

  handle(req) {
    const f = this.fn;
    switch (req.op) {
      case "tensor": return this.tensor(req.data, req.shape, req.dtype);
      case "op": return this.pyCall(f.op, req.name, req.args, req.kwargs || null);
      case "call": return this.pyCall(f.call, req.target ?? null, req.attr ?? null, req.args,
        req.kwargs || null);
      case "getattr": return this.pyCall(f.get_attr, req.target, req.attr);
      case "import": return this.pyCall(f.import_module, req.name);
      case "data": return this.data(req.target, req.view);
      case "array": return this.pyCall(f.tensor_list, req.target);
      case "release": return req.tensor ? f.dispose_tensor(req.target) : f.release(req.target);
      case "releaseMany":
        for (const [id, isTensor] of req.items) {
          if (isTensor) f.dispose_tensor(id); else f.release(id);
        }
        return null;
      case "handles": return this.pyCall(f.stats);
      case "transform": return this.pyCall(f.transform, req.kind, req.program, req.args,
        req.argnums ?? null);
      case "memory": return {
        runtime: this.pyCall(this.glue.get("tb").memory),
        tf: this.tf.memory(),
      };
      case "run": {
        const r = this.py.runPython(req.code, { globals: this.glue });
        const d = this.toJsFn(r);
        if (r && typeof r.destroy === "function") r.destroy();
        return this.out(d);
      }
      case "timings": return this.timings;
      default: throw new Error(`unknown request ${req.op}`);
    }
  }

  /** One copy of a TypedArray into the backend's memory (TF.js) and a runtime tensor on it. */
  tensor(data, shape, dtype) {
    if (!DTYPES.has(dtype)) throw new TypeError(`dtype: unknown dtype ${dtype}`);
    if (this.backend === "tfjs") {
      const storage = dtype === "float64" ? "float32" : dtype === "int64" ? "int32" : dtype;
      let arr = data;
      if (dtype === "int64" && (arr instanceof BigInt64Array || typeof arr[0] === "bigint")) {
        arr = Int32Array.from(arr, (v) => {
          if (v > 2147483647n || v < -2147483648n) {
            throw new RangeError(`tensor: ${v} does not fit in int32, the storage of int64 on TF.js`);
          }
          return Number(v);
        });
      }
      const id = this.host.from_typed(arr, shape, storage);
      return this.out(this.fn.adopt(this.backend, id, dtype));
    }
    return this.pyCall(this.fn.tensor_from, data, shape, dtype, this.backend);
  }

  /** Tensor data as {data, shape, dtype}: a copy, or (Node, view=true) a zero-copy view. */
  data(hid, view = false) {
    const id = this.fn.host_id(hid);
    if (id < 0) {
      const mv = this.fn.tensor_bytes(hid);
      const list = mv.toJs(); mv.destroy();
      return { bytes: list };
    }
    const t = this.host.get(id);
    const be = this.tf.getBackend();
    if (view && be === "wasm") {
      const b = this.tf.backend(), info = b.dataIdMap.get(t.dataId);
      const C = t.dtype === "float32" ? Float32Array : t.dtype === "int32" ? Int32Array
        : Uint8Array;
      return { data: new C(b.wasm.HEAPU8.buffer, info.memoryOffset, t.size), view: true };
    }
    let d = t.dataSync();
    if (view && be === "cpu") return { data: d, view: true };
    if (be !== "wasm") d = d.slice();  // cpu/webgl may hand out their own buffer
    return { data: d, view: false };
  }
}
