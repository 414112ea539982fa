"""The browser door's sampler (issue 15): eight schools through every door, side by side, the
eight-schools gradient per call in JavaScript, C and NumPy, and `make demo`'s browser part.

    .venv/bin/python bench/run.py browser_ppl_bench            # through the bench runner
    .venv/bin/python bench/browser_ppl_bench.py                # alone, prints the rows

1. Eight schools (non-centred: mu ~ N(0, 5), tau ~ half-Cauchy(0, 5), eta ~ N(0, 1) x 8,
   theta = mu + tau eta, y ~ N(theta, sigma); targets mu, tau, eta, theta as
   js-client/demo/eight_schools_model.js names them), NUTS 4 chains x (2000 warmup + 2000
   draws), ``BENCH_SEEDS`` seeds (default 3), four variants: (a) CPython, ``tb.mcmc(m,
   backend="numpy")`` (the reference issue 15's targets are relative to), (b) CPython,
   ``backend="compiled"`` (C sampler, its C cache emptied before each run so compile is paid),
   (c) Node, the js-client in-process (``loadTensorBridge()``, model built with ``tb.ppl``,
   ``await tb.mcmc(...)``; in Pyodide tb.mcmc samples in JavaScript, Draws.backend "js"),
   (d) headless Chromium, the worker client on a cross-origin isolated page. (c) and (d) run
   ``bench/browser_ppl.mjs``. Each run is a fresh process (or page), seeds the outer loop and the
   variants' order rotating per seed. Timed: the call as its caller sees it: for Python
   ``tb.mcmc`` then ``Draws.summary()`` (the JS door's tb.mcmc returns the summary table with the
   draws, so both sides include it); for JS ``await tb.mcmc`` (draws as Float64Arrays and the
   summary table) plus ``draws.summary()``. Apart: the time inside Python's ``tb.mcmc`` (in
   Pyodide: a perf_counter wrapper installed with runPython) and the summary's
   (``Draws.summary()`` on CPython; the JS door's ``summary_rows`` in Pyodide). Boot (Pyodide,
   Chromium) is not in the mcmc times; it is in the notes.
2. The eight-schools log density + gradient per call, one free state: the JS lowering
   (``lower_js`` of the CPython-staged recording, evaluated in node with tb_prelude.js as
   js_sampler.py does, timed in a JS loop of 1e6 calls), the staged NumPy program
   (``_ldg_function(True, 1).raw_program``) and the C lowering (``compile_density``, timed by a
   C loop as bench/compiled_bench.py does). All three are checked against each other first.
3. ``make demo``'s browser part: ``node js-client/scripts/eight_schools_browser.mjs --seed 44``
   as examples/showcase.py runs it (4 x (1000 + 1000), Chromium start and boot included), wall
   time of the subprocess.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
DRIVER = BENCH_DIR / "browser_ppl.mjs"
SECTION = BENCH_DIR / "results" / "browser_ppl_bench.md"
CHAINS = 4
Y8 = [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0]
SIGMA8 = [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0]
VARIANTS = ("numpy", "compiled", "node", "chromium")
LABELS = {"numpy": "Python, NumPy sampler (backend='numpy')",
          "compiled": "Python, compiled C sampler (backend='compiled')",
          "node": "Node, js-client in-process (JS door)",
          "chromium": "headless Chromium, worker client (JS door)"}
TARGETS = {"node": 1.5, "chromium": 2.0}  # issue 15: ratio to the NumPy path's wall time
MU_REF = 4.4  # eight schools' posterior mean of mu (sd ~3.3)


def _quick() -> bool:
    return os.environ.get("BENCH_QUICK", "") not in ("", "0")


def _node() -> str | None:
    return shutil.which("node")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


# ------------------------------------------------------------------- one run (fresh process)
def _model(tb: Any) -> Any:
    y, sigma = tb.as_data(Y8), tb.as_data(SIGMA8)
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=8)
    theta = mu + tau * eta
    tb.distribution(y, tb.normal(theta, sigma))
    return tb.model(mu=mu, tau=tau, eta=eta, theta=theta)


def python_run(backend: str, seed: int, warmup: int, samples: int) -> dict[str, Any]:
    """One CPython run (called in a fresh process by :func:`_run`)."""
    sys.path.insert(0, str(ROOT))
    import tensorbridge as tb

    m = _model(tb)
    t0 = time.perf_counter()
    d = tb.mcmc(m, n_samples=samples, warmup=warmup, chains=CHAINS, seed=seed, progress=False,
                backend=backend)
    t1 = time.perf_counter()
    s = d.summary()
    t2 = time.perf_counter()
    rows = s.to_dict()
    return {"mode": backend, "mcmc_ms": (t1 - t0) * 1e3, "summary_ms": (t2 - t1) * 1e3,
            "call_ms": (t2 - t0) * 1e3, "backend": getattr(d, "backend", None),
            "compile_s": getattr(d, "compile_seconds", None), "divergences": int(d.divergences),
            "n_draws": int(d.n_draws), "mu_mean": float(rows["mu"]["mean"]),
            "tau_mean": float(rows["tau"]["mean"]),
            "rhat_max": max(float(r["rhat"]) for r in rows.values()),
            "ess_bulk_min": min(float(r["ess_bulk"]) for r in rows.values())}


def _run(variant: str, seed: int, warmup: int, samples: int) -> dict[str, Any]:
    """One run of a variant in a fresh process; its JSON result (``error`` on failure)."""
    args = ["--seed", str(seed), "--warmup", str(warmup), "--samples", str(samples)]
    env = _env()
    if variant in ("numpy", "compiled"):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--run", variant, *args]
        env["TENSORBRIDGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tb-cache-")  # cold C compile
    else:
        cmd = [_node() or "node", str(DRIVER), variant, *args]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=1200)
    except subprocess.TimeoutExpired:
        return {"error": f"{variant} seed {seed}: timed out after 1200 s"}
    wall = time.perf_counter() - t0
    if env.get("TENSORBRIDGE_CACHE_DIR", "").startswith(tempfile.gettempdir() + "/tb-cache-"):
        shutil.rmtree(env["TENSORBRIDGE_CACHE_DIR"], ignore_errors=True)
    if proc.returncode != 0:
        return {"error": f"{variant} seed {seed}: exit {proc.returncode}: "
                         f"{(proc.stderr or proc.stdout)[-1500:]}"}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_s"] = wall
    return out


def _check(variant: str, r: dict[str, Any], samples: int) -> str | None:
    """Why a run's draws are not eight schools' posterior (None when they are)."""
    want = "js" if variant in ("node", "chromium") else variant
    backend = r.get("py", {}).get("backend") if want == "js" else r.get("backend")
    if backend != want:
        return f"Draws.backend {backend!r}, expected {want!r}"
    if r.get("n_draws") != samples:
        return f"{r.get('n_draws')} draws, expected {samples}"
    if abs(r["mu_mean"] - MU_REF) > 1.0 or not r["rhat_max"] < 1.05:
        return f"mu mean {r['mu_mean']:.3f} (expected ~{MU_REF}), max rhat {r['rhat_max']:.3f}"
    return None


# ---------------------------------------------------------------------------------- rows
def _med(xs: list[float]) -> float:
    return statistics.median(xs)


def _rng(xs: list[float]) -> list[float]:
    return [min(xs), max(xs)]


def eight_schools_rows(seeds: list[int], warmup: int, samples: int
                       ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    errors: dict[str, list[str]] = {v: [] for v in VARIANTS}
    available = {"numpy": None, "compiled": None, "node": None, "chromium": None}
    built = (ROOT / "js-client" / "dist" / "build-info.json").exists()
    if _node() is None or not built:
        why = "node not found" if _node() is None else "js-client not built (make js)"
        available["node"] = available["chromium"] = why
    elif not Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")).exists():
        available["chromium"] = "no /usr/bin/chromium (make test-browser)"
    from tensorbridge.runtime.compiled.build import compiler_available

    available["compiled"] = compiler_available()
    todo = [v for v in VARIANTS if available[v] is None]
    for k, seed in enumerate(seeds):  # seeds outer, the variants' order rotating
        for v in todo[k % len(todo):] + todo[:k % len(todo)]:
            r = _run(v, seed, warmup, samples)
            if "error" not in r:
                why = _check(v, r, samples)
                if why:
                    r["error"] = f"{v} seed {seed}: {why}"
            r["seed"] = seed
            if "error" in r:
                errors[v].append(r["error"])
            else:
                runs[v].append(r)
            print(f"[browser_ppl] seed {seed} {v}: "
                  + (r.get("error") or f"call {r['call_ms'] / 1e3:.2f} s"), flush=True)

    tag = f"eight schools {CHAINS} x ({warmup} + {samples})"
    n = len(seeds)
    timing = f"fresh process per run, median of {n} seeds, variants alternating"
    call = {v: [r["call_ms"] for r in runs[v]] for v in VARIANTS}
    inside = {v: [(r["py"]["mcmc_s"] * 1e3 if "py" in r else r["mcmc_ms"]) for r in runs[v]]
              for v in VARIANTS}
    summ = {v: [(r["py"]["summary_s"] * 1e3 if "py" in r else r["summary_ms"]) for r in runs[v]]
            for v in VARIANTS}

    def row(name: str, v: str, xs: dict[str, list[float]], peer: str | None = None,
            peer_label: str = "", target: float | None = None,
            notes: list[str] | None = None) -> dict[str, Any]:
        r: dict[str, Any] = {"name": name, "value_us": None, "peer": peer_label if peer else "",
                             "peer_us": None, "ratio": None, "timing": timing}
        if available[v] is not None:
            r["value_note"] = available[v]
        elif xs[v]:
            r["value_us"] = _med(xs[v]) * 1e3
            r["value_range"] = [x * 1e3 for x in _rng(xs[v])]
        if peer and xs[peer]:
            r["peer_us"] = _med(xs[peer]) * 1e3
            r["peer_range"] = [x * 1e3 for x in _rng(xs[peer])]
        if r["value_us"] is not None and r["peer_us"]:
            r["ratio"] = r["value_us"] / r["peer_us"]
        if target is not None:
            r["target"] = f"ratio <= {target:g}"
            r["passed"] = None if r["ratio"] is None else r["ratio"] <= target
        if errors[v] or (peer and errors[peer]):
            r["error"] = "; ".join(errors[v] + (errors[peer] if peer else []))[:1500]
        if notes:
            r["notes"] = notes
        return r

    def fmt_s(xs: list[float]) -> str:
        return f"{_med(xs) / 1e3:.2f} s" if xs else "n/a"

    ref = "Python NumPy path (tb.mcmc + summary)"
    notes_js = {}
    for v in ("node", "chromium"):
        rs = runs[v]
        if not rs:
            continue
        boot = [r["boot_ms"] for r in rs]
        extra = (f"Chromium launch {fmt_s([r['launch_ms'] for r in rs])}, " if v == "chromium"
                 else "")
        notes_js[v] = [
            f"{v}: not in the time: {extra}Pyodide boot {fmt_s(boot)} (medians); inside the "
            f"call: Python's tb.mcmc {fmt_s(inside[v])} (sampling in JavaScript, Draws.backend "
            f"'js'; density lowered in {_med([r['py']['compile_s'] for r in rs]) * 1e3:.0f} ms), "
            f"the JS door's draws_result {fmt_s([r['py']['draws_result_s'] * 1e3 for r in rs])}"
            f" of which the summary table {fmt_s(summ[v])}"
            + (f"; client mode {rs[0].get('client')}" if v == "chromium" else "")]
    rows = [
        row(f"{tag}: {LABELS['numpy']}, tb.mcmc + summary()", "numpy", call,
            notes=[f"every variant: the model of js-client/demo/eight_schools_model.js (targets "
                   f"mu, tau, eta, theta), NUTS with the default adaptation; seeds "
                   f"{', '.join(map(str, seeds))}; the JS door's tb.mcmc returns the summary "
                   f"table with the draws, so the Python rows include Draws.summary() too"]),
        row(f"{tag}: {LABELS['compiled']}, tb.mcmc + summary()", "compiled", call, "numpy",
            ref, notes=[f"compiled: C cache emptied before each run, compile "
                        f"{_med([r['compile_s'] for r in runs['compiled']] or [0]):.2f} s "
                        f"(median) included"] if runs["compiled"] else None),
        row(f"{tag}: {LABELS['node']}, await tb.mcmc as JS sees it", "node", call, "numpy",
            ref, TARGETS["node"], notes_js.get("node")),
        row(f"{tag}: {LABELS['chromium']}, await tb.mcmc on the page", "chromium", call,
            "numpy", ref, TARGETS["chromium"], notes_js.get("chromium")),
        row(f"{tag}: {LABELS['compiled']}: tb.mcmc alone", "compiled", inside, "numpy",
            "Python NumPy: tb.mcmc alone"),
        row(f"{tag}: {LABELS['node']}: Python's tb.mcmc inside Pyodide", "node", inside,
            "numpy", "Python NumPy: tb.mcmc alone"),
        row(f"{tag}: {LABELS['chromium']}: Python's tb.mcmc inside Pyodide", "chromium",
            inside, "numpy", "Python NumPy: tb.mcmc alone"),
        row(f"{tag}: {LABELS['node']}: summary table in Pyodide (summary_rows)", "node", summ,
            "numpy", "Draws.summary() on CPython (NumPy)"),
        row(f"{tag}: {LABELS['chromium']}: summary table in Pyodide (summary_rows)",
            "chromium", summ, "numpy", "Draws.summary() on CPython (NumPy)"),
    ]
    for r in rows[4:]:
        r.pop("error", None)  # said once, on the rows above
    return rows, runs


def _section(runs: dict[str, list[dict[str, Any]]], seeds: list[int], warmup: int,
             samples: int) -> str:
    """Per-seed table of every run (seconds), for RESULTS.md after the rows."""
    head = ["variant", "seed", "call s", "tb.mcmc s", "summary s", "boot s", "divergences",
            "mu mean", "tau mean", "max rhat", "min bulk ESS"]
    out = [f"Eight schools, {CHAINS} chains x ({warmup} warmup + {samples} draws), one fresh "
           f"process (or Chromium page) per run; seeds {', '.join(map(str, seeds))} the outer "
           f"loop, the variants' order rotating per seed. *call*: what the caller waits for "
           f"(Python: tb.mcmc + Draws.summary(); JS: await tb.mcmc, which returns the draws and "
           f"the summary table, + draws.summary()); *tb.mcmc*: the time inside Python's "
           f"tb.mcmc (in Pyodide, a perf_counter wrapper); *summary*: Draws.summary() on "
           f"CPython, the JS door's summary_rows in Pyodide; *boot*: loadTensorBridge() (Node) "
           f"or page load to the worker's runtime ready (Chromium), not in the call.", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for v in VARIANTS:
        for r in runs[v]:
            py = r.get("py")
            mc = py["mcmc_s"] if py else r["mcmc_ms"] / 1e3
            sm = py["summary_s"] if py else r["summary_ms"] / 1e3
            boot = f"{r['boot_ms'] / 1e3:.1f}" if "boot_ms" in r else ""
            out.append("| " + " | ".join([
                LABELS[v], str(r["seed"]), f"{r['call_ms'] / 1e3:.2f}", f"{mc:.2f}",
                f"{sm:.2f}", boot, str(r["divergences"]), f"{r['mu_mean']:.2f}",
                f"{r['tau_mean']:.2f}", f"{r['rhat_max']:.3f}", f"{r['ess_bulk_min']:.0f}"])
                + " |")
    return "\n".join(out)


# ------------------------------------------------------------------ gradient per call
def gradient_rows() -> list[dict[str, Any]]:
    import numpy as np
    from _timing import compare, row_timing

    sys.path.insert(0, str(ROOT))
    import tensorbridge as tb
    from tensorbridge.runtime.compiled.lowering import lower_js

    name = "eight-schools log density + gradient (one free state)"
    y, sigma = tb.as_data(Y8), tb.as_data(SIGMA8)
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=8)
    tb.distribution(y, tb.normal(mu + tau * eta, sigma))
    m = tb.model(mu=mu, tau=tau, eta=eta)

    q = np.random.default_rng(7).uniform(-1.0, 1.0, m.n_free)
    fn = m._ldg_function(True, 1)
    raw = fn.raw_program(m._as_free(q))
    lp_np, g_np = (np.asarray(a) for a in raw(q))
    scale = max(1.0, abs(float(lp_np)), float(np.max(np.abs(g_np))))

    def close(lp: float, g: Any) -> bool:
        return (abs(float(lp) - float(lp_np)) <= 1e-9 * scale
                and float(np.max(np.abs(np.asarray(g) - g_np))) <= 1e-9 * scale)

    rows: list[dict[str, Any]] = []
    # JS: lower_js of the recording, called in a loop in node
    js_us = js_range = None
    js_note = None
    if _node() is None:
        js_note = "node not found"
    else:
        lw = lower_js(fn.recording(m._as_free(np.zeros(m.n_free))))
        consts = [[c.dtype, base64.b64encode(np.asarray(c.values, dtype="<f8").tobytes()).decode()
                   if c.dtype == "float64" else [int(v) for v in c.values]]
                  for c in lw.constants]
        calls, batches = (200_000, 3) if _quick() else (1_000_000, 7)
        payload = {"source": lw.source, "constants": consts, "n": lw.n, "calls": calls,
                   "batches": batches,
                   "q": base64.b64encode(np.asarray(q, dtype="<f8").tobytes()).decode()}
        proc = subprocess.run([_node() or "node", str(DRIVER), "grad"], input=json.dumps(payload),
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"node grad exited {proc.returncode}: {proc.stderr[-2000:]}")
        js = json.loads(proc.stdout.strip().splitlines()[-1])
        if js["status"] != 0 or not close(js["logp"], js["grad"]):
            raise AssertionError(f"JS density disagrees with NumPy: {js['logp']} vs {lp_np}")
        js_us, js_range = js["us_per_call"], [js["min"], js["max"]]
        js_timing = (f"not interleaved: node, median of {batches} batches of {calls:,} calls "
                     f"in a JS loop")

    # C lowering (timed by a C loop, as compiled_bench) and the NumPy staged program, interleaved
    from compiled_bench import _HARNESS, _HARNESS_CDEF

    from tensorbridge.runtime.compiled.build import compile_module, compiler_available
    from tensorbridge.runtime.ppl.compiled_density import compile_density

    os.environ["TENSORBRIDGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tb-cache-")
    ccalls = 1000
    fns: dict[str, Any] = {}

    def numpy_loop() -> None:
        for _ in range(ccalls):
            raw(q)

    fns["numpy"] = numpy_loop
    c_reason = compiler_available()
    keep: Any = None
    if c_reason is None:
        harness = compile_module("bench_density", _HARNESS_CDEF, _HARNESS)
        density = compile_density(m)
        lp_c, g_c = density(q)
        if not close(lp_c, g_c):
            raise AssertionError("C density disagrees with NumPy")
        ffi, lib = harness.ffi, harness.lib
        ctx, keep = density.new_context()
        grad = np.empty(m.n_free)
        args = (density.fn_address, ffi.cast("void *", ctx), ffi.cast("double *", q.ctypes.data),
                ffi.new("double *"), ffi.cast("double *", grad.ctypes.data))

        def c_loop() -> float:
            return lib.tb_bench_density(*args, ccalls)

        fns["c"] = c_loop
    t = compare(fns)
    np_us = t["numpy"].median_us / ccalls
    c_us = t["c"].median_us / ccalls if "c" in t else None
    del keep

    rows.append({"name": f"{name}: JS (lower_js, V8 in node)", "value_us": js_us,
                 "value_note": js_note, "peer": "NumPy staged program", "peer_us": np_us,
                 "ratio": js_us / np_us if js_us else None,
                 "timing": js_timing if js_us else None,
                 **({"value_range": js_range} if js_range else {}),
                 "peer_range": row_timing(None, t["numpy"], per=ccalls)["peer_range"],
                 "notes": ["JS: the CPython-staged recording lowered by lower_js, made a "
                           "function with tb_prelude.js as js_sampler.py does, called in a JS "
                           "loop in node (no Python-JS crossing in the time; the sampler calls "
                           "it the same way); NumPy and C: interleaved rounds in this process "
                           "(C timed by a C loop, 1000 calls per Python call, as compiled_bench); "
                           "all three agree to 1e-9 first"]})
    rows.append({"name": f"{name}: JS (lower_js, V8 in node)", "value_us": js_us,
                 "value_note": js_note, "peer": "C lowering",
                 "peer_us": c_us, "ratio": js_us / c_us if js_us and c_us else None,
                 "timing": js_timing if js_us else None,
                 **({"value_range": js_range} if js_range else {}),
                 **({"peer_range": row_timing(None, t["c"], per=ccalls)["peer_range"]}
                    if c_us else {}),
                 **({"peer_note": c_reason} if c_reason else {})})
    rows.append({"name": f"{name}: C lowering (compile_density)", "value_us": c_us,
                 "value_note": c_reason, "peer": "NumPy staged program", "peer_us": np_us,
                 "ratio": c_us / np_us if c_us else None,
                 **(row_timing(t["c"], t["numpy"], per=ccalls) if c_us else {})})
    return rows


# ----------------------------------------------------------------- make demo's browser part
def demo_row() -> dict[str, Any]:
    name = ("make demo's browser part (js-client/scripts/eight_schools_browser.mjs, "
            "4 x (1000 + 1000))")
    target = "< 30 s (issue 15: well under 30 s; was ~2 min)"
    script = ROOT / "js-client" / "scripts" / "eight_schools_browser.mjs"
    if _node() is None or not (ROOT / "js-client" / "dist" / "build-info.json").exists() \
            or not Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")).exists():
        return {"name": name, "value_us": None, "peer": "", "peer_us": None, "ratio": None,
                "value_note": "needs node, make js and /usr/bin/chromium", "target": target,
                "passed": None}
    walls, inner, sampling = [], [], []
    runs = 1 if _quick() else 3
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            out = Path(tmp) / "browser.json"
            out.unlink(missing_ok=True)
            t0 = time.perf_counter()
            proc = subprocess.run([_node() or "node", str(script), "--seed", "44", "--out",
                                   str(out)], cwd=ROOT, env=_env(), capture_output=True,
                                  text=True, timeout=900)
            wall = time.perf_counter() - t0
            if proc.returncode != 0 or not out.exists():
                return {"name": name, "value_us": None, "peer": "", "peer_us": None,
                        "ratio": None, "target": target, "passed": None,
                        "error": f"exit {proc.returncode}: {proc.stderr[-1500:]}"}
            res = json.loads(out.read_text())
            walls.append(wall)
            inner.append(float(res.get("wall_seconds", wall)))
            sampling.append(float(res["seconds"]))
            print(f"[browser_ppl] demo browser part: {wall:.1f} s", flush=True)
    med = _med(walls)
    return {"name": name, "value_us": med * 1e6, "value_range": [min(walls) * 1e6,
            max(walls) * 1e6], "peer": "", "peer_us": None, "ratio": None, "target": target,
            "passed": med < 30.0,
            "timing": f"fresh process per run, median of {runs} runs (the whole subprocess)",
            "notes": [f"what examples/showcase.py runs for the browser (seed 44): Node start, "
                      f"Chromium launch, Pyodide boot in the page's worker, sampling and "
                      f"summary; the page's own timers: run() {_med(sampling):.1f} s "
                      f"(tb.mcmc incl. the summary table), script wall {_med(inner):.1f} s "
                      f"(medians)"]}


# ------------------------------------------------------------------------------- main
def main() -> list[dict[str, Any]]:
    sys.path.insert(0, str(BENCH_DIR))
    sys.path.insert(0, str(ROOT))
    quick = _quick()
    warmup = samples = 300 if quick else 2000
    n_seeds = 2 if quick else max(3, int(os.environ.get("BENCH_SEEDS", "3")))
    seeds = list(range(1, n_seeds + 1))
    rows, runs = eight_schools_rows(seeds, warmup, samples)
    rows += gradient_rows()
    rows.append(demo_row())
    SECTION.parent.mkdir(parents=True, exist_ok=True)
    SECTION.write_text(_section(runs, seeds, warmup, samples) + "\n", encoding="utf-8")
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", choices=["numpy", "compiled"], help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=2000)
    a = ap.parse_args()
    if a.run:
        print(json.dumps(python_run(a.run, a.seed, a.warmup, a.samples)))
    else:
        print(json.dumps(main(), indent=1, default=str))
