"""Run JavaScript under Node from a test, with float64 arrays that cross exactly.

The runtime's JavaScript (``runtime/compiled/*.js``) runs in Pyodide's host (a browser worker or
Node). Tests on CPython compare it with the NumPy and C paths by running it under ``node``:
:func:`run_node` sends a JSON payload on stdin and reads the script's JSON answer. Float arrays
travel as the base64 of their little-endian float64 bytes (``{"f64": "..."}``), so NaN, the
infinities, -0.0 and every bit of every value cross unchanged; JSON numbers are used only for
integers and options.

The script sees ``input`` (the decoded payload), ``f64(array)`` (a Float64Array as the wire
form), ``load(name, factory, ...args)`` (a file of ``runtime/compiled`` evaluated as the body
of a function that returns ``factory(...args)``, as the runtime evaluates it in Pyodide) and
must call ``output(value)`` once.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorbridge.runtime.compiled as _compiled

NODE = shutil.which("node")
JS_DIR = Path(_compiled.__file__).parent

needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (make js installs it)")

_PRELUDE = r"""
"use strict";
const fs = require("fs");
const path = require("path");
function fromWire(v) {
  if (Array.isArray(v)) return v.map(fromWire);
  if (v !== null && typeof v === "object") {
    if (typeof v.f64 === "string") {
      const b = Buffer.from(v.f64, "base64");
      const out = new Float64Array(b.length / 8);
      new Uint8Array(out.buffer).set(b);
      return out;
    }
    const o = {};
    for (const k of Object.keys(v)) o[k] = fromWire(v[k]);
    return o;
  }
  return v;
}
function f64(a) {
  const x = a instanceof Float64Array ? a : Float64Array.from(a);
  return { f64: Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString("base64") };
}
function toWire(v) {
  if (ArrayBuffer.isView(v)) return f64(v);
  if (Array.isArray(v)) return v.map(toWire);
  if (typeof v === "number" && !Number.isFinite(v)) return f64([v]);
  if (v !== null && typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v)) o[k] = toWire(v[k]);
    return o;
  }
  return v;
}
function load(name, factory, ...args) {
  const src = fs.readFileSync(path.join(JS_DIR, name), "utf8");
  const params = args.map((_, i) => "a" + i);
  return new Function(...params, src + "\nreturn " + factory + "(" + params.join(", ") + ");")(
    ...args);
}
let answered = false;
function output(v) {
  answered = true;
  process.stdout.write(JSON.stringify(toWire(v)));
}
const input = fromWire(JSON.parse(fs.readFileSync(0, "utf8")));
"""


def _to_wire(v: Any) -> Any:
    if isinstance(v, np.ndarray) and v.dtype.kind == "f":
        a = np.ascontiguousarray(v, dtype="<f8").ravel()
        return {"f64": base64.b64encode(a.tobytes()).decode()}
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, dict):
        return {str(k): _to_wire(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_to_wire(x) for x in v]
    if isinstance(v, float) and not np.isfinite(v):
        return _to_wire(np.array([v]))
    return v


def _from_wire(v: Any) -> Any:
    if isinstance(v, dict):
        if set(v) == {"f64"} and isinstance(v["f64"], str):
            return np.frombuffer(base64.b64decode(v["f64"]), dtype="<f8").copy()
        return {k: _from_wire(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_from_wire(x) for x in v]
    return v


def run_node(script: str, payload: Any = None, *, timeout: float = 300.0) -> Any:
    """Run ``script`` under node with ``payload`` as ``input``; its ``output(...)`` decoded
    (float arrays as float64 NumPy arrays, a non-finite number as a 1-element array)."""
    if NODE is None:
        pytest.skip("node is not installed")
    source = f"const JS_DIR = {json.dumps(str(JS_DIR))};\n{_PRELUDE}\n{script}\n"
    proc = subprocess.run([NODE, "-e", source], input=json.dumps(_to_wire(payload)),
                          capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"node failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return _from_wire(json.loads(proc.stdout))
