// tensorbridge's Web Worker (a module worker: Pyodide 314 refuses classic workers). TF.js loads
// from its UMD builds (global `tf`), Pyodide from pyodide.mjs, both from local folders.
// Requests arrive as {id, msg}; replies go back as {type: "reply", id, ok, value}.
//
// Main-thread callbacks (a JS function of the page passed to Python):
//  * page cross-origin isolated (COOP + COEP): synchronous. The worker posts the call and blocks
//    in Atomics.wait on a SharedArrayBuffer until the page wrote the answer (~20-50 us).
//  * otherwise: the Python call returns an awaitable (a JS promise) that async Python code can
//    await; synchronous Python code cannot get the value (no shared memory to block on).
/* global tf */
import * as convert from "./convert.js";
import { Core } from "./core.js";

let core = null;
let sab = null;
const asyncReplies = new Map();
let nextRid = 1;

function callMainSync(cb, args, kwargs) {
  const ctl = new Int32Array(sab, 0, 2);
  Atomics.store(ctl, 0, 0);
  postMessage({ type: "callback", cb, sync: true, args: convert.packJSON(toPlain(args)),
    kwargs: kwargs ? convert.packJSON(toPlain(kwargs)) : null });
  Atomics.wait(ctl, 0, 0);
  const n = Atomics.load(ctl, 1);
  const text = new TextDecoder().decode(new Uint8Array(sab, 8, n).slice());
  return core.py.toPy(convert.unpackJSON(text), { depth: -1 });
}

function callMainAsync(cb, args, kwargs) {
  const rid = nextRid++;
  postMessage({ type: "callback", cb, rid, sync: false, args: convert.packJSON(toPlain(args)),
    kwargs: kwargs ? convert.packJSON(toPlain(kwargs)) : null });
  return new Promise((resolve) => asyncReplies.set(rid, resolve)).then((text) =>
    core.py.toPy(convert.unpackJSON(text), { depth: -1 }));
}

function toPlain(x) {
  if (x && typeof x.toJs === "function") {
    return x.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
  }
  return x;
}

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
  core = await Core.boot({ loadPyodide, tf, indexURL: opts.indexURL, tfBackend: opts.tfBackend,
    backend: opts.backend, setWasmPaths: () => tf.wasm.setWasmPaths(opts.tfjsURL) });
  const glue = core.glue;
  glue.set("_call_main", sab ? callMainSync : callMainAsync);
  glue.set("_release_main", (cb) => postMessage({ type: "releaseCallback", cb }));
  return { ...core.timings, tfBackend: tf.getBackend(), callbacks: sab ? "sync" : "async" };
}

self.onmessage = async (ev) => {
  const m = ev.data;
  if (m.type === "callbackReply") {
    const r = asyncReplies.get(m.rid);
    asyncReplies.delete(m.rid);
    r?.(m.text);
    return;
  }
  try {
    const value = m.boot ? await boot(m.boot) : core.dispatch(m.msg);
    postMessage({ type: "reply", id: m.id, ok: true, value });
  } catch (e) {
    const err = e && e.message !== undefined && e.type !== undefined ? e
      : { name: e?.name ?? "Error", type: e?.name ?? "Error", message: String(e?.message ?? e),
        traceback: e?.stack ?? "" };
    postMessage({ type: "reply", id: m.id, ok: false, error: err });
  }
};
