#!/usr/bin/env node
// Build the self-contained runtime folder the npm package loads from (dist/):
//   dist/pyodide/   Pyodide core (from the pinned `pyodide` npm package) + the tensorbridge wheel,
//                   with a pyodide-lock.json that lists the wheel (sha256) and only packages
//                   whose files are present, so loadPackage("tensorbridge") works offline.
//   dist/tfjs/      TF.js UMD builds (core, cpu, wasm) and the wasm binaries, for the worker.
//   dist/build-info.json
//
// Steps: (1) copy the Python sources to a temp dir and build the pure-Python wheel there with
// `python -m build --wheel` (PYTHON, default ../.venv/bin/python; the repo stays clean);
// (2) `pyodide lockfile add-wheels` from pyodide-build (needs Python >= 3.12: a separate venv,
// .pyodide-build-venv, made with PYODIDE_BUILD_PYTHON, default pyenv's 3.12.1) — offline.
// Extra wheels (e.g. a NumPy built for this Pyodide) can be added: --wheel path/to.whl
// Skips work when nothing changed (hash of the sources): pass --force to rebuild.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.resolve(here, "..");
const repo = path.resolve(pkgDir, "..");
const dist = path.join(pkgDir, "dist");
const pyoDist = path.join(dist, "pyodide");
const tfDist = path.join(dist, "tfjs");
const args = process.argv.slice(2);
const force = args.includes("--force");
const extraWheels = args.flatMap((a, i) => (a === "--wheel" ? [path.resolve(args[i + 1])] : []));

const PYTHON = process.env.PYTHON || path.join(repo, ".venv/bin/python");
const BUILD_PY = process.env.PYODIDE_BUILD_PYTHON || "/root/.pyenv/versions/3.12.1/bin/python";
const buildVenv = path.join(pkgDir, ".pyodide-build-venv");
const nm = path.join(pkgDir, "node_modules");

function sh(cmd, argv) {
  try {
    return execFileSync(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] }).toString();
  } catch (e) {
    process.stderr.write(`${e.stdout || ""}${e.stderr || ""}`);
    throw new Error(`build: ${cmd} ${argv.join(" ")} failed`);
  }
}
function sourceHash() {
  const h = createHash("sha256");
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name))) {
      if (e.name === "__pycache__") continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(py|md|toml|js)$/.test(e.name)) h.update(p).update(fs.readFileSync(p));
    }
  };
  for (const d of ["runtime", "bridge", "package"]) walk(path.join(repo, d));
  h.update(fs.readFileSync(path.join(repo, "pyproject.toml")));
  h.update(fs.readFileSync(path.join(nm, "pyodide/package.json")));
  h.update(fs.readFileSync(path.join(pkgDir, "scripts/build.mjs")));
  for (const w of extraWheels) h.update(fs.readFileSync(w));
  return h.digest("hex");
}

const t0 = performance.now();
if (!fs.existsSync(path.join(nm, "pyodide"))) {
  console.error("build: node_modules/pyodide is missing: run `npm ci` (or npm install) first");
  process.exit(1);
}
const hash = sourceHash();
const infoPath = path.join(dist, "build-info.json");
if (!force && fs.existsSync(infoPath)) {
  const info = JSON.parse(fs.readFileSync(infoPath, "utf8"));
  if (info.sourceHash === hash && fs.existsSync(path.join(pyoDist, info.wheel))) {
    console.log(`build: up to date (${info.wheel}); --force to rebuild`);
    process.exit(0);
  }
}

// 1. the wheel, built from a copy of the sources
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tb-wheel-"));
try {
  for (const d of ["runtime", "bridge", "package"]) {
    fs.cpSync(path.join(repo, d), path.join(tmp, d), {
      recursive: true, filter: (s) => !s.includes("__pycache__"),
    });
  }
  for (const f of ["pyproject.toml", "README.md"]) {
    fs.copyFileSync(path.join(repo, f), path.join(tmp, f));
  }
  sh(PYTHON, ["-m", "build", "--wheel", "--outdir", path.join(tmp, "out"), tmp]);
  const wheel = fs.readdirSync(path.join(tmp, "out")).find((f) => f.endsWith(".whl"));
  if (!wheel) throw new Error("build: no wheel was produced");

  // 2. the Pyodide folder
  fs.rmSync(pyoDist, { recursive: true, force: true });
  fs.mkdirSync(pyoDist, { recursive: true });
  const core = ["pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm",
    "python_stdlib.zip", "pyodide.d.ts", "ffi.d.ts", "package.json"];
  for (const f of core) {
    const src = path.join(nm, "pyodide", f);
    if (fs.existsSync(src)) fs.copyFileSync(src, path.join(pyoDist, f));
  }
  fs.copyFileSync(path.join(tmp, "out", wheel), path.join(pyoDist, wheel));
  for (const w of extraWheels) fs.copyFileSync(w, path.join(pyoDist, path.basename(w)));

  // 3. the lock file (pyodide-build in its own venv: Python >= 3.12)
  const pyodideCli = path.join(buildVenv, "bin", "pyodide");
  if (!fs.existsSync(pyodideCli)) {
    sh(BUILD_PY, ["-m", "venv", buildVenv]);
    sh(path.join(buildVenv, "bin/python"), ["-m", "pip", "install", "-q",
      "--disable-pip-version-check", "pyodide-build==0.39.2", "pyodide-lock[wheel]==0.2.1"]);
  }
  const wheels = [wheel, ...extraWheels.map((w) => path.basename(w))]
    .map((w) => path.join(pyoDist, w));
  const rawLock = path.join(tmp, "lock.json");
  sh(pyodideCli, ["lockfile", "add-wheels", "--input", path.join(nm, "pyodide/pyodide-lock.json"),
    "--output", rawLock, "--base-path", pyoDist, "--ignore-missing-dependencies", ...wheels]);
  const lock = JSON.parse(fs.readFileSync(rawLock, "utf8"));
  // Keep only packages whose files are here: loadPackage then fails clearly for the rest
  // instead of trying the network. NumPy is optional inside Pyodide (the tfjs backend needs none).
  const present = new Set(fs.readdirSync(pyoDist));
  const kept = {};
  for (const [name, p] of Object.entries(lock.packages)) {
    if (present.has(p.file_name)) kept[name] = p;
  }
  for (const p of Object.values(kept)) p.depends = p.depends.filter((d) => d in kept);
  lock.packages = kept;
  fs.writeFileSync(path.join(pyoDist, "pyodide-lock.json"), JSON.stringify(lock, null, 1));

  // 4. TF.js for the browser worker (UMD builds + wasm binaries)
  fs.rmSync(tfDist, { recursive: true, force: true });
  fs.mkdirSync(tfDist, { recursive: true });
  const tfFiles = [
    ["tfjs-core/dist/tf-core.min.js", "tf-core.min.js"],
    ["tfjs-backend-cpu/dist/tf-backend-cpu.min.js", "tf-backend-cpu.min.js"],
    ["tfjs-backend-wasm/dist/tf-backend-wasm.min.js", "tf-backend-wasm.min.js"],
    ["tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm", "tfjs-backend-wasm.wasm"],
    ["tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm", "tfjs-backend-wasm-simd.wasm"],
    ["tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm",
      "tfjs-backend-wasm-threaded-simd.wasm"],
  ];
  for (const [src, dst] of tfFiles) {
    fs.copyFileSync(path.join(nm, "@tensorflow", src), path.join(tfDist, dst));
  }
  const webgl = path.join(nm, "@tensorflow/tfjs-backend-webgl/dist/tf-backend-webgl.min.js");
  if (fs.existsSync(webgl)) fs.copyFileSync(webgl, path.join(tfDist, "tf-backend-webgl.min.js"));

  const info = {
    wheel, sha256: kept.tensorbridge.sha256, sourceHash: hash,
    pyodide: JSON.parse(fs.readFileSync(path.join(nm, "pyodide/package.json"))).version,
    python: lock.info.python, packages: Object.keys(kept),
    builtMs: Math.round(performance.now() - t0),
  };
  fs.writeFileSync(infoPath, JSON.stringify(info, null, 1));
  console.log(`build: ${wheel} (sha256 ${info.sha256.slice(0, 12)}...) -> ${path.relative(
    pkgDir, pyoDist)}; lock lists ${info.packages.join(", ")}; ${info.builtMs} ms`);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
