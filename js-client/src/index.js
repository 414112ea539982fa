// tensorbridge for JavaScript. `await loadTensorBridge(options)`:
//   Node    -> Pyodide in this process (requests are answered synchronously, wrapped in promises)
//   browser -> Pyodide in a Web Worker (the page never freezes), unless {worker: false}
// Both load Pyodide and the tensorbridge wheel from a local folder (dist/pyodide, built by
// `npm run build`), so nothing is fetched from the network.

import { Kwargs } from "./convert.js";
import { DisposedError, Tensor, TensorBridge, TensorBridgeError } from "./client.js";

export { DisposedError, Kwargs, Tensor, TensorBridge, TensorBridgeError };

const isNode = typeof process !== "undefined" && !!process.versions?.node
  && typeof window === "undefined";

/**
 * options: indexURL (the Pyodide folder with the tensorbridge wheel; default: this package's
 * dist/pyodide), tfBackend ("wasm" | "cpu" | "webgl"; default "wasm"), backend (the runtime's
 * numeric backend: "tfjs", or "numpy" when the page loaded NumPy), worker (browser: default
 * true), workerURL, tfjsURL (browser: folder with the TF.js builds, default dist/tfjs).
 */
export async function loadTensorBridge(options = {}) {
  if (isNode) return loadNode(options);
  if (options.worker === false) return loadInPage(options);
  return loadWorker(options);
}

class InProcessChannel {
  constructor(core) { this.core = core; this.mode = "in-process"; }
  request(msg) {
    try {
      return Promise.resolve(this.core.dispatch(msg));
    } catch (e) {
      return Promise.reject(new TensorBridgeError(e));
    }
  }
  encodeFunction(fn) { return fn; }  // Pyodide wraps JS functions; Python calls them directly
  close() {}
}

async function loadNode(options) {
  const t0 = performance.now();
  const { createRequire } = await import("node:module");
  const { fileURLToPath } = await import("node:url");
  const require = createRequire(import.meta.url);
  const indexURL = options.indexURL
    ?? fileURLToPath(new URL("../dist/pyodide/", import.meta.url));
  const [{ loadPyodide }, tf] = await Promise.all([
    import(new URL("pyodide.mjs", `file://${indexURL.endsWith("/") ? indexURL
      : indexURL + "/"}`).href),
    Promise.resolve(require("@tensorflow/tfjs-core")),
  ]);
  require("@tensorflow/tfjs-backend-cpu");
  require("@tensorflow/tfjs-backend-wasm");
  const { Core } = await import("./core.js");
  const core = await Core.boot({ loadPyodide, tf, indexURL, tfBackend: options.tfBackend
    ?? "wasm", backend: options.backend ?? "tfjs", stdout: options.stdout,
    stderr: options.stderr });
  const tb = new TensorBridge(new InProcessChannel(core),
    { mode: "node", bootMs: performance.now() - t0, ...core.timings,
      tfBackend: tf.getBackend() });
  tb.core = core;  // in-process access (tests, benchmarks)
  return tb;
}

async function loadInPage(options) {
  const t0 = performance.now();
  const base = new URL("../dist/", import.meta.url);
  const indexURL = options.indexURL ?? new URL("pyodide/", base).href;
  const tf = globalThis.tf;
  if (!tf) throw new Error("loadTensorBridge({worker: false}) needs TF.js loaded as global tf");
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  const { Core } = await import("./core.js");
  const tfjsURL = options.tfjsURL ?? new URL("tfjs/", base).href;
  const core = await Core.boot({ loadPyodide, tf, indexURL, tfBackend: options.tfBackend
    ?? "wasm", backend: options.backend ?? "tfjs",
  setWasmPaths: () => tf.wasm?.setWasmPaths?.(tfjsURL) });
  return new TensorBridge(new InProcessChannel(core), { mode: "page",
    bootMs: performance.now() - t0, ...core.timings });
}

// ---- browser: Pyodide in a Web Worker -------------------------------------------------------
class WorkerChannel {
  constructor(worker, sab) {
    this.worker = worker;
    this.next = 1;
    this.pending = new Map();
    this.callbacks = new Map();
    this.nextCb = 1;
    this.sab = sab;
    this.mode = sab ? "worker+sab" : "worker+async";
    worker.onmessage = (ev) => this.onMessage(ev.data);
  }

  request(msg) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, msg });
    });
  }

  encodeFunction(fn) {
    const cb = this.nextCb++;
    this.callbacks.set(cb, fn);
    return { $cb: cb, name: fn.name || null };
  }

  async onMessage(m) {
    if (m.type === "reply") {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value); else p.reject(new TensorBridgeError(m.error));
    } else if (m.type === "callback") {
      const { packJSON, unpackJSON } = await import("./convert.js");
      const fn = this.callbacks.get(m.cb);
      let result;
      try {
        if (!fn) throw new Error(`callback ${m.cb} was released`);
        const args = unpackJSON(m.args);
        const kwargs = m.kwargs ? unpackJSON(m.kwargs) : null;
        result = { ok: await fn(...args, ...(kwargs ? [kwargs] : [])) };
      } catch (e) {
        result = { $error: { name: e?.name ?? "Error", message: String(e?.message ?? e),
          stack: e?.stack ?? "" } };
      }
      const text = packJSON(result.$error ? result : result.ok);
      if (m.sync) {
        const ctl = new Int32Array(this.sab, 0, 2);
        const bytes = new TextEncoder().encode(text);
        const room = this.sab.byteLength - 8;
        const payload = bytes.length <= room ? bytes : new TextEncoder().encode(packJSON(
          { $error: { name: "RangeError", message: `callback result is ${bytes.length} bytes; `
            + `the synchronous channel holds ${room}` } }));
        new Uint8Array(this.sab, 8, payload.length).set(payload);
        Atomics.store(ctl, 1, payload.length);
        Atomics.store(ctl, 0, 1);
        Atomics.notify(ctl, 0);
      } else {
        this.worker.postMessage({ type: "callbackReply", rid: m.rid, text });
      }
    } else if (m.type === "releaseCallback") {
      this.callbacks.delete(m.cb);
    }
  }

  close() { this.worker.terminate(); }
}

async function loadWorker(options) {
  const t0 = performance.now();
  const base = new URL("../dist/", import.meta.url);
  const workerURL = options.workerURL ?? new URL("./worker.js", import.meta.url).href;
  const worker = new Worker(workerURL, { name: "tensorbridge", type: "module" });
  const isolated = globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer
    !== "undefined";
  const sab = isolated && options.syncCallbacks !== false
    ? new SharedArrayBuffer(8 + (options.callbackBytes ?? 1 << 20)) : null;
  const channel = new WorkerChannel(worker, sab);
  const ready = new Promise((resolve, reject) => {
    worker.onerror = (e) => reject(new Error(`tensorbridge worker failed: ${e.message}`));
    channel.pending.set(0, { resolve, reject });
  });
  worker.postMessage({ id: 0, boot: {
    indexURL: options.indexURL ?? new URL("pyodide/", base).href,
    tfjsURL: options.tfjsURL ?? new URL("tfjs/", base).href,
    tfBackend: options.tfBackend ?? "wasm", backend: options.backend ?? "tfjs", sab } });
  const timings = await ready;
  return new TensorBridge(channel, { mode: channel.mode, bootMs: performance.now() - t0,
    ...timings, crossOriginIsolated: isolated });
}
