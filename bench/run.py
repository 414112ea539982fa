"""Run every bench module side by side with its peers; print one table; write results/latest.json.

    bench/.venv/bin/python bench/run.py                   # every module (what `make bench` runs)
    bench/.venv/bin/python bench/run.py autodiff_bench    # only the named module(s)
    BENCH_QUICK=1 bench/.venv/bin/python bench/run.py     # smoke run: few short rounds
    BENCH_THREADS=2 bench/.venv/bin/python bench/run.py   # let BLAS/OpenMP/torch/TF use 2 threads

A bench module is any ``bench/*.py`` whose name does not start with ``_`` (``run.py`` excepted)
and that defines ``main()``. Each runs in its own subprocess (so one module's imports, threads or
crash cannot disturb another's timings) and returns a list of rows::

    {"name": str, "value_us": float | None, "peer": str, "peer_us": float | None,
     "ratio": float | None}                              # ratio = value_us / peer_us

with these optional keys: ``unit`` (default "us"), ``target`` (text, e.g. "ratio <= 1.5"),
``passed`` (bool, or None when it cannot be judged), ``value_note`` / ``peer_note`` (printed in
place of a missing time: "not installed", "backend not available"), ``notes`` (list of text),
``error`` (text: the row failed, e.g. a result that disagreed with the reference) and
``details`` (anything JSON-serialisable, kept in the JSON only).

Exit status: 1 when a module crashed or a row carries an ``error``; a MISS alone exits 0 unless
``--strict`` is given.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import importlib.metadata as md
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results" / "latest.json"
PEERS = ["numpy", "autograd", "torch", "tensorflow", "tensorbridge"]
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def discover() -> list[str]:
    mods = []
    for p in sorted(BENCH_DIR.glob("*.py")):
        if p.name.startswith("_") or p.name == "run.py":
            continue
        if "def main(" in p.read_text(encoding="utf-8"):
            mods.append(p.stem)
    return mods


def _worker(module: str, out_path: str) -> None:
    """Child process: import one module, call main(), dump its rows as JSON."""
    sys.path.insert(0, str(BENCH_DIR))
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    rows = importlib.import_module(module).main()
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(rows, f, default=str)


def run_module(module: str, timeout_s: float) -> dict[str, Any]:
    out = RESULTS.parent / f".{module}.rows.json"
    out.unlink(missing_ok=True)
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.setdefault("BENCH_THREADS", "1")
    for var in THREAD_VARS:  # single-threaded BLAS/OpenMP unless the caller says otherwise
        env.setdefault(var, env["BENCH_THREADS"])
    t0 = time.perf_counter()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"[bench] running {module} ...", flush=True)
    try:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--worker", module, str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return {"rows": [], "error": f"timed out after {timeout_s:.0f} s", "wall_s": timeout_s}
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    print(f"[bench] {module} done in {wall:.1f} s (cpu {cpu:.1f} s)", flush=True)
    if proc.returncode != 0 or not out.exists():
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-15:]
        msg = f"exit {proc.returncode}: " + "\n".join(tail)
        return {"rows": [], "error": msg, "wall_s": wall, "cpu_s": cpu}
    rows = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    return {"rows": rows, "error": None, "wall_s": wall, "cpu_s": cpu}


# ------------------------------------------------------------------------------------- table


def _fmt_time(v: Any, unit: str, note: Any) -> str:
    if v is None:
        return str(note or "n/a")
    if unit == "us/op":
        return f"{v:.2f} us/op"
    if v >= 10_000:
        return f"{v / 1000:.1f} ms"
    if v >= 100:
        return f"{v:.0f} us"
    if v >= 10:
        return f"{v:.1f} us"
    if v >= 1:
        return f"{v:.2f} us"
    return f"{v:.3f} us"


def _result(row: dict[str, Any]) -> str:
    if row.get("error"):
        return "ERROR"
    if "target" not in row:
        return ""
    passed = row.get("passed")
    if passed is None:
        return "n/a"
    return "PASS" if passed else "MISS"


def format_table(rows: list[dict[str, Any]]) -> str:
    header = ["benchmark", "ours", "peer", "peer time", "ratio", "target", "result"]
    lines = []
    for r in rows:
        unit = r.get("unit", "us")
        ratio = r.get("ratio")
        lines.append(
            [
                str(r.get("name", "?")),
                _fmt_time(r.get("value_us"), unit, r.get("value_note")),
                str(r.get("peer") or ""),
                _fmt_time(r.get("peer_us"), unit, r.get("peer_note")) if r.get("peer") else "",
                f"{ratio:.2f}x" if isinstance(ratio, int | float) else "",
                str(r.get("target") or ""),
                _result(r),
            ]
        )
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    right = {1, 3, 4}

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [fmt(header), "  ".join("-" * w for w in widths)]
    out += [fmt(line) for line in lines]
    return "\n".join(out)


def _versions() -> dict[str, str | None]:
    v: dict[str, str | None] = {}
    for name in PEERS:
        try:
            v[name] = md.version(name)
        except md.PackageNotFoundError:
            v[name] = None
    return v


def _git() -> str | None:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=BENCH_DIR, capture_output=True,
            text=True, timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=BENCH_DIR, capture_output=True, text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (rev + ("+dirty" if dirty else "")) or None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help="bench modules to run (default: all)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per module")
    ap.add_argument("--worker", nargs=2, metavar=("MODULE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return 0

    available = discover()
    modules = args.modules or available
    unknown = [m for m in modules if m not in available]
    if unknown:
        ap.error(f"unknown bench module(s) {unknown}; available: {available}")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()[0]
    results = {m: run_module(m, args.timeout) for m in modules}
    load_after = os.getloadavg()[0]

    rows: list[dict[str, Any]] = []
    for m, res in results.items():
        for r in res["rows"]:
            rows.append({"module": m, **r})
        if res["error"]:
            rows.append({"module": m, "name": f"{m} (module failed)", "error": res["error"]})

    vers = _versions()
    print()
    print("ratio = ours / peer (below 1: ours is faster); times are medians of interleaved rounds;")
    print(
        f"threads per library: {os.environ.get('BENCH_THREADS', '1')} (BENCH_THREADS); "
        f"load average {load_before:.1f} before, {load_after:.1f} after on {os.cpu_count()} CPUs"
    )
    print("versions: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in vers.items()))
    print()
    print(format_table(rows))
    errors = [r for r in rows if r.get("error")]
    judged = [r for r in rows if "target" in r]
    n_pass = sum(1 for r in judged if r.get("passed") is True)
    n_miss = sum(1 for r in judged if r.get("passed") is False)
    print()
    print(f"targets: {n_pass} PASS, {n_miss} MISS, {len(judged) - n_pass - n_miss} not judged")
    for r in rows:
        for note in r.get("notes", []) or []:
            print(f"note  {r['name']} vs {r.get('peer')}: {note}")
    for m, res in results.items():
        # Single-threaded work that got less CPU than wall time waited for a core: something
        # else ran on the machine, and every time in that module's rows is inflated.
        cpu, wall = res.get("cpu_s"), res["wall_s"]
        if cpu is not None and wall > 5 and cpu < 0.9 * wall:
            print(
                f"warning: {m} got {cpu:.0f} s of CPU in {wall:.0f} s: the machine was busy; "
                f"its times are inflated (ratios less so: rounds interleave); run again when idle"
            )
    for r in errors:
        print(f"ERROR {r['name']}: {r['error']}")

    RESULTS.write_text(
        json.dumps(
            {
                "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "git": _git(),
                "python": sys.version.split()[0],
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "load_average": [load_before, load_after],
                "quick": os.environ.get("BENCH_QUICK", "") not in ("", "0"),
                "threads": int(os.environ.get("BENCH_THREADS", "1")),
                "versions": vers,
                "modules": {
                    m: {"wall_s": res["wall_s"], "cpu_s": res.get("cpu_s"), "error": res["error"]}
                    for m, res in results.items()
                },
                "rows": rows,
            },
            indent=1,
            default=str,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"\nwrote {RESULTS.relative_to(BENCH_DIR.parent)}")
    if errors:
        return 1
    return 1 if args.strict and n_miss else 0


if __name__ == "__main__":
    sys.exit(main())
