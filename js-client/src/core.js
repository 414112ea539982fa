// The part of the client that lives next to Pyodide: in-process under Node, inside the Web
// Worker in a browser. It boots Pyodide + TF.js, installs the runtime's tfjs backend and
// tensorbridge.bridge's JS host (bridge/js/host.py, started by bridge/js/boot.py), and forwards
// calls to it. Values cross as the bridge's wire (see wire.js); this file only moves tagged
// results and side buffers.

const DTYPES = new Set(["float32", "float64", "int32", "int64", "bool"]);

export class Core {
  constructor(pyodide, tf, options) {
    this.py = pyodide;
    this.tf = tf;
    this.backend = options.backend || "tfjs";
    this.host = null;  // the tfjs kernel host (JS)
    this.jsHost = null;  // bridge.js.host.JsHost (a PyProxy)
    this.glue = null;  // its namespace (a PyProxy of a dict): runPython code runs there
    this.timings = {};
  }

  /** Boot: Pyodide (from a local indexURL) and TF.js in parallel, then the runtime. `js` is
   * the JS half the bridge calls (functions and objects Python holds). */
  static async boot({ loadPyodide, tf, indexURL, tfBackend = "wasm", backend = "tfjs",
    packages = [], setWasmPaths, stdout, stderr, js, events } = {}) {
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
    // progress events to JS (fire and forget) and stop flags from JS: see bridge/js/layers.py
    if (events) pyodide.registerJsModule("_tensorbridge_events", events);
    const boot = pyodide.pyimport("tensorbridge.bridge.js.boot");
    const [start, kernels] = [boot.boot, boot.tfjs_kernels];
    core.jsHost = start(js, backend);
    core.glue = core.jsHost.namespace;
    core.host = kernels();
    start.destroy();
    kernels.destroy();
    boot.destroy();
    const h = core.jsHost;
    core.fn = {};
    for (const name of ["call", "call_wire", "get_attr", "import_module", "run", "release",
      "release_many", "stats", "memory", "adopt", "tensor_from", "host_id", "tensor_data",
      "tensor_list", "transform", "register_converter", "unregister_converter"]) {
      core.fn[name] = h[name];
    }
    core.timings = { pyodideMs: tPy, totalMs: performance.now() - t0 };
    return core;
  }

  /** A tagged result as plain JS: PyProxies (side lists, futures) become arrays / promises. */
  out(r) {
    if (r === null || typeof r !== "object") return r;
    if (typeof r.then === "function") {  // a Python coroutine: the result arrives later
      return Promise.resolve(r).then((v) => this.out(v)).finally(() => r.destroy());
    }
    const a = r.toJs({ depth: 2 });  // [text, typed arrays...]
    r.destroy();
    return a;
  }

  // ---- calls (every one returns a tagged result, or a promise of one) -----------------------
  call(target, attr, mask, args) {
    return this.out(this.fn.call(target ?? undefined, attr ?? undefined, mask, ...args));
  }

  callWire(target, attr, text, side) {
    return this.out(this.fn.call_wire(target ?? undefined, attr ?? undefined, text, ...side));
  }

  getAttr(target, attr) { return this.out(this.fn.get_attr(target, attr)); }
  importModule(name) { return this.out(this.fn.import_module(name)); }
  run(code) { return this.out(this.fn.run(code)); }
  release(id) { return this.fn.release(id); }
  releaseMany(ids) { return this.fn.release_many(JSON.stringify(ids)); }
  stats() { return this.out(this.fn.stats()); }
  transform(kind, text, side) { return this.out(this.fn.transform(kind, text, ...side)); }
  registerConverter(text, side) { return this.out(this.fn.register_converter(text, ...side)); }
  unregisterConverter(name, python) { return this.fn.unregister_converter(name, python); }
  tensorList(id) { return this.out(this.fn.tensor_list(id)); }
  memory() { return { runtime: this.out(this.fn.memory()), tf: this.tf.memory() }; }

  /** One copy of a TypedArray into the backend's memory (TF.js) and a runtime tensor on it.
   * The client checked the values (tensor() in client.js): int dtypes come as Int32Array. */
  tensor(data, shape, dtype) {
    if (!DTYPES.has(dtype)) throw new TypeError(`tensor: unknown dtype ${dtype}`);
    if (this.backend === "tfjs") {
      const storage = dtype === "float64" ? "float32" : dtype === "int64" ? "int32" : dtype;
      const id = this.host.from_typed(data, shape, storage);
      return this.out(this.fn.adopt(this.backend, id, dtype));
    }
    // other backends: through an Array descriptor (bridge/js/host.py tensor_from)
    const d = { Float32Array: "float32", Float64Array: "float64", Int32Array: "int32",
      Uint8Array: "uint8", BigInt64Array: "int64" }[data.constructor.name];
    const text = JSON.stringify([[{ $: "A", i: 0, d, s: [data.length] }, shape, dtype, null],
      null]);
    return this.out(this.fn.tensor_from(text, data));
  }

  /** tb.tensor of what the client's fast path does not take: the wire of [data, shape, dtype,
   * backend]; Python's tb.tensor decides. */
  tensorFrom(text, side) { return this.out(this.fn.tensor_from(text, ...side)); }

  /** Tensor data: {data, view} read from TF.js directly, or a tagged Array (other backends). */
  data(hid, view = false, dtype = null) {
    const id = this.fn.host_id(hid);
    if (id < 0) return { tagged: this.out(this.fn.tensor_data(hid)) };
    const t = this.host.get(id);
    const be = this.tf.getBackend();
    if (view && be === "wasm") {
      const b = this.tf.backend(), info = b.dataIdMap.get(t.dataId);
      const C = t.dtype === "float32" ? Float32Array : t.dtype === "int32" ? Int32Array
        : Uint8Array;
      const make = () => new C(b.wasm.HEAPU8.buffer, info.memoryOffset, t.size);
      return { data: make(), view: true, refresh: make };  // made again when the heap grows
    }
    let d = t.dataSync();
    if (view && be === "cpu") return { data: d, view: true };
    // the runtime dtype's TypedArray, made here (in a browser: in the worker, not on the page)
    if (dtype === "float64") d = Float64Array.from(d);
    else if (dtype === "int64") d = BigInt64Array.from(d, BigInt);
    else if (dtype === "bool" && !(d instanceof Uint8Array)) d = Uint8Array.from(d);
    else if (be !== "wasm") d = d.slice();  // cpu/webgl may hand out their own buffer
    return { data: d, view: false, typed: dtype !== null };
  }
}
