// tensorbridge's Web Worker (a module worker: Pyodide 314 refuses classic workers). TF.js loads
// from its UMD builds (global `tf`), Pyodide from pyodide.mjs, both from local folders.
// Requests arrive as {id, op, args} (a Core method and its arguments); replies go back as
// {type: "reply", id, ok, value | error}. Values are the bridge's wire / tagged results
// (wire.js): the worker moves them, the page encodes and decodes them.
//
// Python calling a page function (a JS function of the page passed to Python):
//  * page cross-origin isolated (COOP + COEP): synchronous. The worker writes the call into a
//    SharedArrayBuffer, wakes the page (Atomics.notify; the page waits with Atomics.waitAsync,
//    or a message where that is missing) and blocks in Atomics.wait until the page wrote the
//    tagged answer there.
//  * otherwise: the Python call returns an awaitable (the answer comes as a message) that async
//    Python code awaits; a coroutine a call returns is awaited before its result goes back.
/* global tf */
import { Core } from "./core.js";
import { packTagged, plainError, unpackTagged } from "./wire.js";

let core = null;
let sab = null, ctl = null, f64 = null, payload = null;
const decoder = new TextDecoder();
const asyncReplies = new Map();
let nextRid = 1;

let wake = "message", req = null, numArgs = null;
const MAX_NUM_ARGS = 16;
const SPIN_MAX = 20000;  // Atomics.load polls (~20-50 us) before Atomics.wait
let spin = SPIN_MAX, sinceSpin = 0;
const finite = (a) => typeof a !== "number" || Number.isFinite(a);
const isNumber = (a) => typeof a === "number";

function callMain(m) {
  m.type = "cb";
  if (sab) {
    Atomics.store(ctl, 0, 0);
    if (wake === "waitAsync") {  // the call goes through shared memory, the page is notified
      const args = m.args;
      req[0] = m.cb;
      if (args !== undefined && args.length <= MAX_NUM_ARGS && args.every(isNumber)) {
        req[1] = args.length;  // numbers only: as doubles, no text
        for (let i = 0; i < args.length; i++) numArgs[i] = args[i];
      } else {
        req[1] = -1;
        packTagged(m.text !== undefined ? [JSON.stringify([null, m.text]), ...m.side]
          : JSON.stringify([args.map((a) => (finite(a) ? a : { $: "FL", v: String(a) }))]),
        payload);
      }
      Atomics.store(ctl, 3, 1);
      Atomics.notify(ctl, 3);
    } else {
      m.sync = true;
      postMessage(m);
    }
    // Poll before sleeping: on an idle machine waking a sleeping thread costs more than the
    // answer itself. Adaptive: the budget doubles while answers arrive during the poll and
    // halves when they do not (then polling only steals CPU from the page); at zero it is
    // tried again now and then.
    let i = 0;
    const budget = spin || (++sinceSpin & 63 ? 0 : 256);
    while (i < budget && Atomics.load(ctl, 0) === 0) i++;
    if (i < budget) spin = Math.min(SPIN_MAX, Math.max(256, budget * 2));
    else { spin = budget >> 1; Atomics.wait(ctl, 0, 0); }
    if (spin) sinceSpin = 0;
    switch (ctl[1]) {
      case 0: return undefined;
      case 1: return f64[0];
      case 2: return ctl[2] === 1;
      default: return unpackTagged(payload, decoder);
    }
  }
  const rid = nextRid++;
  m.rid = rid;
  postMessage(m);
  return new Promise((resolve) => asyncReplies.set(rid, resolve));
}

const toBytes = (p) => {
  if (p && typeof p.toJs === "function") { const a = p.toJs(); p.destroy(); return a; }
  return p;
};

// Page functions / objects Python dropped: told to the page in a later task, so that a reply
// carrying one of them (going home) is decoded before the page forgets it.
let releases = [];
function released(kind, id) {
  if (releases.length === 0) {
    setTimeout(() => {
      const items = releases;
      releases = [];
      postMessage({ type: "releases", items });
    }, 0);
  }
  releases.push([kind, id]);
}

/** The JS half the bridge calls: page functions by id, through the page. */
const jsHalf = {
  invoke: (cb, ...args) => callMain({ cb, args }),
  invokeWire: (cb, text, ...side) => callMain({ cb, text, side: side.map(toBytes) }),
  release: (cb) => released(0, cb),
  releaseObject: (id) => released(1, id),
};

// Event channels (bridge/js/layers.py): progress goes to the page as a message and Python goes
// on at once; stop flags are words of a SharedArrayBuffer the page writes (isolated pages).
let stopWords = null;
const events = {
  emit: (ch, text) => postMessage({ type: "event", ch, text }),
  aborted: (ch) => (stopWords ? Atomics.load(stopWords, ch % stopWords.length) !== 0 : false),
};

async function loadScript(url) {
  // UMD build in the worker's global scope (module workers have no importScripts)
  const text = await (await fetch(url)).text();
  (0, eval)(`${text}\n//# sourceURL=${url}`);
}

async function boot(opts) {
  const scripts = ["tf-core.min.js", "tf-backend-cpu.min.js", "tf-backend-wasm.min.js"];
  if (opts.tfBackend === "webgl") scripts.push("tf-backend-webgl.min.js");
  const pyodideModule = import(new URL("pyodide.mjs", opts.indexURL).href);
  for (const s of scripts) await loadScript(new URL(s, opts.tfjsURL).href);
  const { loadPyodide } = await pyodideModule;
  sab = opts.sab;
  if (sab) {
    ctl = new Int32Array(sab, 0, 4);
    f64 = new Float64Array(sab, 16, 1);
    req = new Int32Array(sab, 24, 2);
    payload = new Uint8Array(sab, 40);
    numArgs = new Float64Array(sab, 40, MAX_NUM_ARGS);
    wake = opts.wake;
  }
  if (opts.stopSab) stopWords = new Int32Array(opts.stopSab);
  core = await Core.boot({ loadPyodide, tf, indexURL: opts.indexURL, tfBackend: opts.tfBackend,
    backend: opts.backend, setWasmPaths: () => tf.wasm.setWasmPaths(opts.tfjsURL),
    js: jsHalf, events });
  if (sab) core.py.setInterruptBuffer(new Int32Array(sab, 32, 1));  // tb.interrupt()
  return { ...core.timings, tfBackend: tf.getBackend(), callbacks: sab ? "sync" : "async" };
}

// a buffer that is entirely one fresh copy (not a view into a heap): moved, not cloned, so the
// page never copies it again when the reply arrives
const own = (b) => ArrayBuffer.isView(b) && b.byteOffset === 0
  && b.buffer.byteLength === b.byteLength && !(b.buffer instanceof SharedArrayBufferType);
const SharedArrayBufferType = typeof SharedArrayBuffer === "function" ? SharedArrayBuffer
  : class {};

function transferables(value) {
  // side buffers of a tagged result and tensor data are fresh copies: move them
  if (Array.isArray(value)) return value.slice(1).filter(own).map((b) => b.buffer);
  if (value && typeof value === "object") {
    if (own(value.data)) return [value.data.buffer];
    if (Array.isArray(value.tagged)) return transferables(value.tagged);
  }
  return [];
}

self.onmessage = async (ev) => {
  const m = ev.data;
  if (m.type === "cbReply") {
    const r = asyncReplies.get(m.rid);
    asyncReplies.delete(m.rid);
    r?.(m.value);
    return;
  }
  try {
    let value;
    if (m.boot) value = await boot(m.boot);
    else if (m.op === "data") value = core.data(m.args[0], false, m.args[2]);  // a view cannot leave here
    else value = await core[m.op](...m.args);
    postMessage({ type: "reply", id: m.id, ok: true, value }, transferables(value));
  } catch (e) {
    postMessage({ type: "reply", id: m.id, ok: false, error: plainError(e) });
  }
};
