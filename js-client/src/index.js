// tensorbridge for JavaScript. `await loadTensorBridge(options)`:
//   Node    -> Pyodide in this process (calls are answered synchronously, wrapped in promises)
//   browser -> Pyodide in a Web Worker (the page never freezes), unless {worker: false}
// Both load Pyodide and the tensorbridge wheel from a local folder (dist/pyodide, built by
// `npm run build`), so nothing is fetched from the network.

import { DisposedError, Tensor, TensorBridge, TensorBridgeError } from "./client.js";
import { Kwargs, packTagged, reviveError, unpackTagged } from "./wire.js";

export { DisposedError, Kwargs, Tensor, TensorBridge, TensorBridgeError };
export { History, LayerSpec, OptimizerSpec } from "./layers.js";
export { Draws } from "./ppl.js";

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

/** Pyodide in this thread: requests go straight to the core. */
class InProcessChannel {
  constructor() {
    this.core = null; this.codec = null; this.mode = "in-process";
    this.listeners = new Map();  // event channel id -> listener(text)
    this.stops = new Set();  // channels asked to stop
  }
  request(op, args) { return this.core[op](...args); }
  close() {}

  // Event channels (fit progress, sampler progress): Python emits, the listener runs at once
  // (same thread); a stop flag is read by Python at its next check.
  listen(ch, fn) { this.listeners.set(ch, fn); this.stops.delete(ch); }
  unlisten(ch) { this.listeners.delete(ch); this.stops.delete(ch); }
  stop(ch) { this.stops.add(ch); return true; }
  events() {
    return {
      emit: (ch, text) => { this.listeners.get(ch)?.(text); },
      aborted: (ch) => this.stops.has(ch),
    };
  }

  /** The JS half the bridge calls: JS functions and objects Python holds live in the codec. */
  jsHalf() {
    const ch = this;
    const toBytes = (p) => {
      if (p && typeof p.toJs === "function") { const a = p.toJs(); p.destroy(); return a; }
      return p;
    };
    return {
      invoke: (cb, ...args) => {
        for (let i = 0; i < args.length; i++) if (args[i] === undefined) args[i] = null;
        return ch.codec.invoke(cb, args);
      },
      invokeWire: (cb, text, ...side) => {
        let args;
        try {
          args = ch.codec.callArgs(text, side.map(toBytes));
        } catch (e) {
          return ch.codec.tagError(e);
        }
        return ch.codec.invoke(cb, args);
      },
      // Python dropped a JS function / object: forget it after the current call's result is
      // decoded (that result may be the very object going home)
      release: (cb) => queueMicrotask(() => ch.codec.release(cb)),
      releaseObject: (id) => queueMicrotask(() => ch.codec.releaseObject(id)),
    };
  }
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
  const channel = new InProcessChannel();
  const core = await Core.boot({ loadPyodide, tf, indexURL, tfBackend: options.tfBackend
    ?? "wasm", backend: options.backend ?? "tfjs", stdout: options.stdout,
    stderr: options.stderr, js: channel.jsHalf(), events: channel.events() });
  channel.core = core;
  const tb = new TensorBridge(channel, { mode: "node", bootMs: performance.now() - t0,
    ...core.timings, tfBackend: tf.getBackend() });
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
  const channel = new InProcessChannel();
  const core = await Core.boot({ loadPyodide, tf, indexURL, tfBackend: options.tfBackend
    ?? "wasm", backend: options.backend ?? "tfjs", js: channel.jsHalf(), events: channel.events(),
  setWasmPaths: () => tf.wasm?.setWasmPaths?.(tfjsURL) });
  channel.core = core;
  const tb = new TensorBridge(channel, { mode: "page", bootMs: performance.now() - t0,
    ...core.timings });
  tb.core = core;
  return tb;
}

// ---- browser: Pyodide in a Web Worker -------------------------------------------------------
// Requests: {id, op, args} -> {type: "reply", id, ok, value | error}.
// Python calling a page function, page cross-origin isolated (synchronous): the worker writes
// the call into the SharedArrayBuffer, wakes the page (Atomics.notify on a word the page waits
// on with Atomics.waitAsync; where that is missing, a {type: "cb"} message) and blocks in
// Atomics.wait until the page wrote the tagged answer there. Not isolated: {type: "cb", rid}
// messages answered by {type: "cbReply", rid} (Python gets an awaitable).
// SAB layout: Int32 [0] answer ready, [1] answer kind (0 none, 1 number, 2 boolean, 3 packed
// text), [2] boolean answer, [3] call pending; Float64 answer at byte 16; Int32 call [function
// id, number of arguments or -1] at byte 24; Int32 Pyodide interrupt buffer at byte 32; from
// byte 40 the call's arguments (doubles when they are all numbers, else packed text + side
// buffers, see wire.js), then the packed answer.
const SAB_HEAD = 40;
const STOP_WORDS = 256;  // stop flags of event channels (channel id modulo this)
const hasWaitAsync = typeof Atomics.waitAsync === "function";

// Typed arrays larger than this cross to the worker as fresh copies made a slice per task and
// transferred, never as a structured clone (which copies them on the page in one go).
const BIG_BYTES = 1 << 20;
const SLICE_BYTES = 1 << 20;
const isBig = (v) => ArrayBuffer.isView(v) && v.byteLength >= BIG_BYTES;

/** The large typed arrays among a request's arguments (and in its side list). */
function bigViews(args) {
  const out = [];
  for (const a of args) {
    if (isBig(a)) out.push(a);
    else if (Array.isArray(a)) for (const b of a) if (isBig(b)) out.push(b);
  }
  return out;
}

// a new task behind those already queued (input, rendering, timers run in between; not
// scheduler.yield, whose continuations run ahead of them)
const nextTask = () => new Promise((resolve) => {
  const ch = new MessageChannel();
  ch.port1.onmessage = () => { ch.port1.close(); resolve(); };
  ch.port2.postMessage(0);
});

/** args with each large view replaced by a copy made SLICE_BYTES per task; the copies'
 * buffers are the transfer list. */
async function sliceCopies(args, big) {
  const copies = new Map();
  for (const v of big) {
    if (copies.has(v)) continue;
    const src = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    const dst = new Uint8Array(v.byteLength);
    for (let off = 0; off < src.length; off += SLICE_BYTES) {
      dst.set(src.subarray(off, off + SLICE_BYTES), off);
      if (off + SLICE_BYTES < src.length) await nextTask();
    }
    const C = v.constructor === DataView ? Uint8Array : v.constructor;
    copies.set(v, new C(dst.buffer, 0, v.byteLength / (C.BYTES_PER_ELEMENT ?? 1)));
  }
  const swap = (a) => copies.get(a) ?? a;
  const value = args.map((a) => (Array.isArray(a) ? a.map(swap) : swap(a)));
  return { value, transfer: [...copies.values()].map((c) => c.buffer) };
}

class WorkerChannel {
  constructor(worker, sab, stopSab = null) {
    this.worker = worker;
    this.next = 1;
    this.pending = new Map();
    this.codec = null;
    this.sab = sab;
    // event channels: progress arrives as {type: "event"} messages (the worker never waits for
    // the page); stop flags are words of a second SharedArrayBuffer (isolated pages only)
    this.listeners = new Map();
    this.stopWords = stopSab ? new Int32Array(stopSab) : null;
    if (sab) {
      this.ctl = new Int32Array(sab, 0, 4);
      this.f64 = new Float64Array(sab, 16, 1);
      this.req = new Int32Array(sab, 24, 2);
      this.interruptWord = new Int32Array(sab, 32, 1);
      this.payload = new Uint8Array(sab, SAB_HEAD);
      this.numArgs = new Float64Array(sab, SAB_HEAD, 16);
      this.decoder = new TextDecoder();
      if (hasWaitAsync) this.serveSync();
    }
    this.mode = sab ? "worker+sab" : "worker+async";
    this.sending = 0;  // requests waiting for their large buffers to be copied
    this.sendChain = Promise.resolve();
    worker.onmessage = (ev) => this.onMessage(ev.data);
  }

  /** Synchronous calls from the worker, woken by Atomics.waitAsync (no message per call). */
  async serveSync() {
    const ctl = this.ctl;
    for (;;) {
      if (Atomics.load(ctl, 3) === 0) {
        const w = Atomics.waitAsync(ctl, 3, 0);
        if (w.async) await w.value;
      }
      if (this.closed) return;
      Atomics.store(ctl, 3, 0);
      let call;
      try {
        const cb = this.req[0], n = this.req[1];
        if (n >= 0) {
          const args = new Array(n);
          for (let i = 0; i < n; i++) args[i] = this.numArgs[i];
          call = { sync: true, cb, args };
        } else {
          const packed = unpackTagged(this.payload, this.decoder);
          const [text, side] = typeof packed === "string" ? [packed, []]
            : [packed[0], packed.slice(1)];
          const [args, wireText] = JSON.parse(text);
          call = { sync: true, cb, args: args && args.map((a) => this.codec.dec(a, null)),
            text: wireText ?? undefined, side };
        }
      } catch (e) {
        this.answer({ sync: true }, this.codec.tagError(e));
        continue;
      }
      const r = this.run(call);
      this.answer(call, r && typeof r.then === "function" ? await r : r);
    }
  }

  request(op, args) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const big = bigViews(args);
      if (big.length === 0 && this.sending === 0) {
        this.worker.postMessage({ id, op, args });  // small buffers: a structured clone
        return;
      }
      // Large typed arrays are copied into fresh buffers a slice per task (the page never
      // freezes: one structured clone of 80 MB blocks it for tens of ms) and transferred.
      // Later requests wait for this one, so the worker sees them in order.
      this.sending++;
      this.sendChain = this.sendChain.then(async () => {
        try {
          const { value, transfer } = await sliceCopies(args, big);
          this.worker.postMessage({ id, op, args: value }, transfer);
        } catch (e) {
          this.pending.delete(id);
          reject(e);
        } finally {
          this.sending--;
        }
      });
    });
  }

  onMessage(m) {
    switch (m.type) {
      case "reply": {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.ok) p.resolve(m.value); else p.reject(reviveError(m.error));
        return;
      }
      case "cb": return this.onCallback(m);
      case "event": this.listeners.get(m.ch)?.(m.text); return;
      case "releases":  // JS functions / objects Python dropped (sent after the replies)
        for (const [kind, id] of m.items) {
          if (kind === 0) this.codec.release(id); else this.codec.releaseObject(id);
        }
        return;
      default: return;
    }
  }

  onCallback(m) {
    const r = this.run(m);
    if (r && typeof r.then === "function") r.then((v) => this.answer(m, v));
    else this.answer(m, r);
  }

  run(m) {  // a page function called from Python: its tagged answer (or a promise of it)
    const codec = this.codec;
    try {
      const args = m.text !== undefined ? codec.callArgs(m.text, m.side)
        : m.args.map((a) => (a === undefined ? null : a));
      return codec.invoke(m.cb, args);
    } catch (e) {
      return codec.tagError(e);
    }
  }

  answer(m, r) {
    if (!m.sync) {
      this.worker.postMessage({ type: "cbReply", rid: m.rid, value: r });
      return;
    }
    const ctl = this.ctl;
    const t = typeof r;
    try {
      if (r === undefined || r === null) ctl[1] = 0;
      else if (t === "number") { ctl[1] = 1; this.f64[0] = r; }
      else if (t === "boolean") { ctl[1] = 2; ctl[2] = r ? 1 : 0; }
      else {
        ctl[1] = 3;
        packTagged(r, this.payload);
      }
    } catch (e) {  // never leave the worker waiting
      ctl[1] = 3;
      packTagged(this.codec.tagError(e instanceof RangeError ? new RangeError(
        `tensorbridge: the callback's result does not fit the synchronous channel `
        + `(${this.payload.length} bytes; see loadTensorBridge({callbackBytes}))`) : e),
      this.payload);
    } finally {
      Atomics.store(ctl, 0, 1);
      Atomics.notify(ctl, 0);
    }
  }

  listen(ch, fn) {
    this.listeners.set(ch, fn);
    if (this.stopWords) Atomics.store(this.stopWords, ch % STOP_WORDS, 0);
  }
  unlisten(ch) { this.listeners.delete(ch); }
  /** Raise channel ch's stop flag; false where the worker cannot see it (not isolated). */
  stop(ch) {
    if (!this.stopWords) return false;
    Atomics.store(this.stopWords, ch % STOP_WORDS, 1);
    return true;
  }

  /** KeyboardInterrupt in the worker's Python at its next check (needs shared memory). */
  interrupt() {
    if (!this.interruptWord) return false;
    Atomics.store(this.interruptWord, 0, 2);  // SIGINT, for pyodide.setInterruptBuffer
    return true;
  }

  close() {
    this.closed = true;
    this.worker.terminate();
    if (this.ctl) { Atomics.store(this.ctl, 3, 1); Atomics.notify(this.ctl, 3); }
  }
}

async function loadWorker(options) {
  const t0 = performance.now();
  const base = new URL("../dist/", import.meta.url);
  const workerURL = options.workerURL ?? new URL("./worker.js", import.meta.url).href;
  const worker = new Worker(workerURL, { name: "tensorbridge", type: "module" });
  const isolated = globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer
    !== "undefined";
  const sab = isolated && options.syncCallbacks !== false
    ? new SharedArrayBuffer(SAB_HEAD + (options.callbackBytes ?? 1 << 20)) : null;
  const stopSab = sab ? new SharedArrayBuffer(4 * STOP_WORDS) : null;
  const channel = new WorkerChannel(worker, sab, stopSab);
  const ready = new Promise((resolve, reject) => {
    worker.onerror = (e) => reject(new Error(`tensorbridge worker failed: ${e.message}`));
    channel.pending.set(0, { resolve, reject });
  });
  worker.postMessage({ id: 0, boot: {
    indexURL: options.indexURL ?? new URL("pyodide/", base).href,
    tfjsURL: options.tfjsURL ?? new URL("tfjs/", base).href,
    tfBackend: options.tfBackend ?? "wasm", backend: options.backend ?? "tfjs", sab, stopSab,
    wake: hasWaitAsync ? "waitAsync" : "message" } });
  const timings = await ready;
  return new TensorBridge(channel, { mode: channel.mode, bootMs: performance.now() - t0,
    ...timings, crossOriginIsolated: isolated });
}
