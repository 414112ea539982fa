"""Run every bench module side by side with its peers; print one table; write bench/RESULTS.md.

    bench/.venv/bin/python bench/run.py                   # every module (what `make bench` runs)
    bench/.venv/bin/python bench/run.py autodiff_bench    # only the named module(s)
    BENCH_QUICK=1 bench/.venv/bin/python bench/run.py     # smoke run: few short rounds
    BENCH_THREADS=2 bench/.venv/bin/python bench/run.py   # let BLAS/OpenMP/torch/TF use 2 threads
    BENCH_ROUNDS=7 BENCH_SEEDS=3 bench/.venv/bin/python bench/run.py  # fewer rounds (and seeds)

A full run (every module, not quick) writes ``bench/RESULTS.md`` (committed: the numbers that the
READMEs cite) with the date, the git commit, the CPU model, the load average sampled from
/proc/loadavg before, during (every 10 s, per module) and after the run, the versions and every
row with its numbers; other runs write ``bench/results/RESULTS.md``. Every run writes
``bench/results/latest.json``.

``--splice`` runs the named modules and replaces only their sections of ``bench/RESULTS.md``
(a module not there yet is added in name order), leaving the header and the other sections as
they were. A spliced section carries its own date, git commit (with the paths that differed
from it), CPU, load average and versions, since the header describes the last full run only::

    bench/.venv/bin/python bench/run.py dask_bench --splice

A bench module is any ``bench/*.py`` whose name does not start with ``_`` (``run.py`` excepted)
and that defines ``main()``. Each runs in its own subprocess (so one module's imports, threads or
crash cannot disturb another's timings) and returns a list of rows::

    {"name": str, "value_us": float | None, "peer": str, "peer_us": float | None,
     "ratio": float | None}                              # ratio = value_us / peer_us

with these optional keys: ``timing`` (how the row was timed, e.g. "interleaved rounds, median of
15", "alternating fresh processes, median of 5 each", "not interleaved: median of 5 batches";
printed in the table), ``value_range`` / ``peer_range`` ([min, max] of the repetitions the
median was taken over), ``unit`` (default "us"), ``target`` (text, e.g. "ratio <= 1.5"),
``passed`` (bool, or None when it cannot be judged), ``value_note`` / ``peer_note`` (printed in
place of a missing time: "not installed", "backend not available"), ``notes`` (list of text),
``error`` (text: the row failed, e.g. a result that disagreed with the reference) and
``details`` (anything JSON-serialisable, kept in the JSON only). A module may also write
``bench/results/<module>.md`` during its run: that section goes into RESULTS.md after its rows.

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
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results" / "latest.json"
RESULTS_MD = BENCH_DIR / "RESULTS.md"  # a full run's record, committed
PARTIAL_MD = BENCH_DIR / "results" / "RESULTS.md"  # any other run's
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


class LoadSampler:
    """Samples /proc/loadavg (1-minute load) every ``every_s`` seconds in a thread, tagging each
    sample with the module running at the time."""

    def __init__(self, every_s: float = 10.0) -> None:
        self.every_s = every_s
        self.samples: list[tuple[float, float, str]] = []  # (seconds since start, load, module)
        self.module = "-"
        self._t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> float:
        load = os.getloadavg()[0]
        self.samples.append((time.monotonic() - self._t0, load, self.module))
        return load

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.sample()

    def start(self) -> float:
        first = self.sample()
        self._thread.start()
        return first

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        self.module = "-"
        return self.sample()

    def during(self, module: str | None = None) -> list[float]:
        return [x for _, x, m in self.samples if (module is None and m != "-") or m == module]


def _load_summary(xs: list[float]) -> str:
    if not xs:
        return "no sample"
    return (f"median {statistics.median(xs):.2f}, min {min(xs):.2f}, max {max(xs):.2f} "
            f"({len(xs)} samples)")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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
    a = abs(v)  # a difference of two times may be negative
    if a >= 9_999.5:  # what would print as "10000 us"
        return f"{v / 1000:.1f} ms"
    if a >= 100:
        return f"{v:.0f} us"
    if a >= 10:
        return f"{v:.1f} us"
    if a >= 1:
        return f"{v:.2f} us"
    return f"{v:.3f} us"


def _result(row: dict[str, Any]) -> str:
    if row.get("error"):
        return "ERROR"
    if not row.get("target"):
        return ""
    passed = row.get("passed")
    if passed is None:
        return "n/a"
    return "PASS" if passed else "MISS"


def _fmt_range(r: dict[str, Any], key: str, unit: str) -> str:
    rng = r.get(key)
    if not rng or len(rng) != 2 or rng[0] is None:
        return ""
    lo, hi = (_fmt_time(v, unit, None) for v in rng)
    return f"{lo} - {hi}"


def _cells(r: dict[str, Any]) -> list[str]:
    unit = r.get("unit", "us")
    ratio = r.get("ratio")
    return [
        str(r.get("name", "?")),
        _fmt_time(r.get("value_us"), unit, r.get("value_note")),
        str(r.get("peer") or ""),
        _fmt_time(r.get("peer_us"), unit, r.get("peer_note")) if r.get("peer") else "",
        f"{ratio:.2f}x" if isinstance(ratio, int | float) else "",
        str(r.get("target") or ""),
        _result(r),
        str(r.get("timing") or ("not timed" if r.get("value_us") is None else "?")),
    ]


def format_table(rows: list[dict[str, Any]]) -> str:
    header = ["benchmark", "ours", "peer", "peer time", "ratio", "target", "result", "timed as"]
    lines = [_cells(r) for r in rows]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    right = {1, 3, 4}

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [fmt(header), "  ".join("-" * w for w in widths)]
    out += [fmt(line) for line in lines]
    return "\n".join(out)


def _md_cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def _with_range(r: dict[str, Any], side: str) -> str:
    unit = r.get("unit", "us")
    key = "value" if side == "ours" else "peer"
    t = _fmt_time(r.get(f"{key}_us"), unit, r.get(f"{key}_note"))
    rng = _fmt_range(r, f"{key}_range", unit)
    return f"{t} ({rng})" if rng and r.get(f"{key}_us") is not None else t


def results_markdown(rows: list[dict[str, Any]], results: dict[str, dict[str, Any]],
                     sampler: LoadSampler, vers: dict[str, str | None], started: Any,
                     finished: Any, quick: bool, full: bool) -> str:
    """bench/RESULTS.md: the conditions of the run, then every row, module by module."""
    out = [
        "# Benchmark results",
        "",
        "Written by `make bench` (`bench/run.py`); do not edit by hand. Every speed claim in the "
        "READMEs cites a row of this file.",
        "",
        *_conditions(sampler, vers, started, finished),
    ]
    if quick:
        out.append("- **BENCH_QUICK=1: a smoke run with few short rounds, not numbers to quote**")
    if not full:
        out.append(f"- modules run: {', '.join(results)} (not a full run)")
    out += [
        "",
        "How to read: *ours* and *peer time* are medians, with (min - max) over the repetitions "
        "that median was taken over; ratio = ours / peer (below 1: ours is faster). *timed as* "
        "says how: **interleaved rounds** = ours and the peer ran in alternating rounds in one "
        "process (`bench/_timing.py`: rotating order, re-warmed before each timed batch), so "
        "drift hits both alike; **not interleaved** = one side's batches ran after the "
        "other's; **alternating fresh processes** = each repetition a new process, ours and the "
        "peer in turn; NUTS rows: a fresh process per run and seed.",
    ]
    for m, res in results.items():
        out += ["", *module_section(m, res, rows, sampler)]
    return "\n".join(out) + "\n"


def _conditions(sampler: LoadSampler, vers: dict[str, str | None], started: Any,
                finished: Any, dirty_paths: bool = False) -> list[str]:
    """The run's date, commit, machine, load and versions, as Markdown list items."""
    samples = sampler.samples
    before, after = samples[0][1], samples[-1][1]
    threads = os.environ.get("BENCH_THREADS", "1")
    commit = _git()
    if dirty_paths and commit and commit.endswith("+dirty"):
        changed = _dirty_paths()
        shown = ", ".join(changed[:12]) + (f" and {len(changed) - 12} more"
                                           if len(changed) > 12 else "")
        commit += f" (uncommitted changes in: {shown})"
    return [
        f"- date: {started.isoformat(timespec='seconds')} to "
        f"{finished.isoformat(timespec='seconds')} (UTC)",
        f"- git commit: {commit}",
        f"- CPU: {cpu_model()}, {os.cpu_count()} CPUs; {platform.platform()}; "
        f"Python {sys.version.split()[0]}",
        f"- load average (1 min, /proc/loadavg): {before:.2f} before; during: "
        f"{_load_summary(sampler.during())}; {after:.2f} after. The machine is shared: a load "
        f"above the number of CPUs means other work ran beside the benchmarks and inflated "
        f"times (ratios less so where rounds interleave)",
        f"- threads per library: {threads} (BENCH_THREADS), except the NUTS runs "
        f"(see their section)",
        "- versions: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in vers.items()),
    ]


def module_section(m: str, res: dict[str, Any], rows: list[dict[str, Any]],
                   sampler: LoadSampler, spliced: list[str] | None = None) -> list[str]:
    """One module's section of RESULTS.md (``## m``); ``spliced``: its own conditions, for a
    section that replaces one of an earlier file."""
    out = [f"## {m}", ""]
    if spliced:
        out += [*spliced, ""]
    load = sampler.during(m)
    cpu = res.get("cpu_s")
    out += [
        f"wall {res['wall_s']:.0f} s"
        + (f", CPU {cpu:.0f} s" if cpu is not None else "")
        + f"; load average during it: {_load_summary(load)}",
        "",
    ]
    mrows = [r for r in rows if r.get("module") == m]
    if mrows:
        head = ["benchmark", "ours (min - max)", "peer", "peer time (min - max)", "ratio",
                "target", "result", "timed as"]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in mrows:
            c = _cells(r)
            cells = [c[0], _with_range(r, "ours"), c[2],
                     _with_range(r, "peer") if r.get("peer") else "", *c[4:]]
            out.append("| " + " | ".join(_md_cell(x) for x in cells) + " |")
        notes = list(dict.fromkeys(  # in order, each once
            f"{r['name']}: {n}" for r in mrows for n in (r.get("notes") or [])))
        if notes:
            out += ["", "Notes:", ""] + [f"- {_md_cell(n)}" for n in notes]
        errs = [f"{r['name']}: {r['error']}" for r in mrows if r.get("error")]
        if errs:
            out += ["", "Errors:", ""] + [f"- `{_md_cell(e)[:500]}`" for e in errs]
    if res.get("section_md"):
        out += ["", res["section_md"].rstrip()]
    return out


def splice_sections(text: str, sections: dict[str, list[str]]) -> str:
    """``text`` (a RESULTS.md) with the ``## name`` section of every module in ``sections``
    replaced by its new lines, or added where the name sorts among the others."""
    head, *parts = text.rstrip("\n").split("\n## ")
    old: dict[str, str] = {}
    for part in parts:
        name = part.split("\n", 1)[0].strip()
        old[name] = "## " + part.rstrip("\n")
    order = list(old)
    for name, lines in sections.items():
        if name not in old:  # before the first section whose name sorts after it
            order.insert(next((i for i, n in enumerate(order) if n > name), len(order)), name)
        old[name] = "\n".join(lines).rstrip("\n")
    return "\n\n".join([head.rstrip("\n"), *(old[name] for name in order)]) + "\n"


def _dirty_paths() -> list[str]:
    try:
        out = subprocess.run(["git", "status", "--porcelain"], cwd=BENCH_DIR,
                             capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line[3:] for line in out.splitlines() if line.strip()]


def _versions() -> dict[str, str | None]:
    v: dict[str, str | None] = {}
    for name in PEERS:
        try:
            v[name] = md.version(name)
        except md.PackageNotFoundError:
            v[name] = None
    return v


def _git() -> str | None:
    # A copy of the tree without .git (a machine the run was sent to) names its commit here.
    if os.environ.get("BENCH_GIT_COMMIT"):
        return os.environ["BENCH_GIT_COMMIT"]
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
    ap.add_argument("--timeout", type=float, default=7200.0, help="seconds per module")
    ap.add_argument("--results-md", help="where to write the Markdown record (default: "
                    "bench/RESULTS.md for a full run, else bench/results/RESULTS.md)")
    ap.add_argument("--splice", action="store_true", help="replace only the named modules' "
                    "sections of bench/RESULTS.md (each with its own date, commit and load)")
    ap.add_argument("--label", help="with --splice: write each module's section as "
                    "'## MODULE (LABEL)', beside the module's own section, for a run on another "
                    "machine (e.g. --label '16-CPU machine')")
    ap.add_argument("--worker", nargs=2, metavar=("MODULE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return 0

    available = discover()
    if args.splice and not args.modules:
        ap.error("--splice: name the modules whose sections to replace")
    if args.label and not args.splice:
        ap.error("--label names a spliced section; give --splice too")
    if args.splice and args.results_md:
        ap.error("--splice writes bench/RESULTS.md; give --splice or --results-md")
    modules = args.modules or available
    unknown = [m for m in modules if m not in available]
    if unknown:
        ap.error(f"unknown bench module(s) {unknown}; available: {available}")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    started = _dt.datetime.now(_dt.UTC)
    sampler = LoadSampler()
    load_before = sampler.start()
    results: dict[str, dict[str, Any]] = {}
    for m in modules:
        (RESULTS.parent / f"{m}.md").unlink(missing_ok=True)  # a section from an earlier run
        sampler.module = m
        sampler.sample()
        results[m] = run_module(m, args.timeout)
        sampler.sample()
        section = RESULTS.parent / f"{m}.md"
        if section.exists():
            results[m]["section_md"] = section.read_text(encoding="utf-8")
    load_after = sampler.stop()
    finished = _dt.datetime.now(_dt.UTC)

    rows: list[dict[str, Any]] = []
    for m, res in results.items():
        for r in res["rows"]:
            rows.append({"module": m, **r})
        if res["error"]:
            rows.append({"module": m, "name": f"{m} (module failed)", "error": res["error"]})

    vers = _versions()
    print()
    print("ratio = ours / peer (below 1: ours is faster); each row's times are medians, taken as "
          "its 'timed as' column says (interleaved rounds, or not);")
    print(
        f"threads per library: {os.environ.get('BENCH_THREADS', '1')} (BENCH_THREADS); "
        f"load average {load_before:.1f} before, {_load_summary(sampler.during())} during, "
        f"{load_after:.1f} after on {os.cpu_count()} CPUs"
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
                f"its times are inflated (ratios less so where rounds interleave); run again "
                f"when idle"
            )
    for r in errors:
        print(f"ERROR {r['name']}: {r['error']}")

    quick = os.environ.get("BENCH_QUICK", "") not in ("", "0")
    full = not args.modules and not quick
    md_path = Path(args.results_md) if args.results_md else (RESULTS_MD if full else PARTIAL_MD)
    if args.splice:
        md_path = RESULTS_MD
        own = _conditions(sampler, vers, started, finished, dirty_paths=True)
        label = f" --label '{args.label}'" if args.label else ""
        how = (f"Re-run alone (`bench/run.py {' '.join(modules)} --splice{label}`), not in the "
               f"full run the header above describes"
               + (f", on another machine ({args.label})" if args.label else "")
               + (" (**BENCH_QUICK=1: a smoke run, not numbers to quote**)" if quick else "")
               + ":")
        sections = {}
        for m, res in results.items():
            lines = module_section(m, res, rows, sampler, [how, *own])
            if args.label:
                lines[0] = f"## {m} ({args.label})"
            sections[lines[0][3:]] = lines
        old_md = md_path.read_text(encoding="utf-8") if md_path.exists() else ""
        md_path.write_text(splice_sections(old_md, sections), encoding="utf-8")
    else:
        md_path.write_text(
            results_markdown(rows, results, sampler, vers, started, finished, quick, full),
            encoding="utf-8",
        )
    RESULTS.write_text(
        json.dumps(
            {
                "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "git": _git(),
                "python": sys.version.split()[0],
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "cpu_model": cpu_model(),
                "load_average": [load_before, load_after],
                "load_samples": sampler.samples,
                "quick": quick,
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
    md_shown = md_path.resolve()
    if md_shown.is_relative_to(BENCH_DIR.parent):  # a --results-md path may lie elsewhere
        md_shown = md_shown.relative_to(BENCH_DIR.parent)
    print(f"\nwrote {RESULTS.relative_to(BENCH_DIR.parent)}, {md_shown}")
    if errors:
        return 1
    return 1 if args.strict and n_miss else 0


if __name__ == "__main__":
    sys.exit(main())
