"""Run every test suite, whatever the others do, and print one table: what `make test` runs.

    python tests/suites/run.py                  # every suite (make test)
    python tests/suites/run.py python node      # the named suites
    python tests/suites/run.py --list           # the table of suites and their commands

Each suite's output streams to the console and to ``test-output/<suite>.log``; the table
(suite, passed, failed, skipped, seconds) is printed at the end and written to
``test-output/summary.md`` and ``summary.json``. Exit status 1 when any suite failed, so one
failing suite never hides the others.

The ``*-openblas-*`` suites rerun the float32-sensitive tests with OpenBLAS forced onto other
kernel families (``OPENBLAS_CORETYPE``): another CPU's rounding, on this one. Before each, the
runner checks that OpenBLAS really switched (threadpoolctl reports its architecture); a
coretype that does not take effect fails the suite instead of passing vacuously.

Standard library only: it runs before anything is installed, with any Python 3.11.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "test-output"
PY = str(ROOT / ".venv" / "bin" / "python")
PY2 = str(ROOT / ".venv-numpy2" / "bin" / "python")
R_ENV = {"TENSORBRIDGE_PYTHON": PY, "TENSORBRIDGE_REQUIRE_PYTHON": "1"}

# The kernel families the float32-sensitive suites also run on (the machine's own is the
# default run). Prescott is SSE3-era, Haswell AVX2: both run on any x86-64 CPU made since 2013.
CORETYPES = ("Haswell", "Prescott")
FLOAT32_PYTESTS = ["tests/runtime/test_tensorflow_backend.py", "tests/runtime/test_ops_table.py",
                   "tests/runtime/test_tolerance.py", "tests/layers", "tests/js"]
FLOAT32_TESTTHAT = "tolerance|layers-portable|layers-fixtures|layers-training"


@dataclass
class Suite:
    name: str
    what: str
    command: list[str]
    counter: str  # "junit", "testthat", "tap", "rcheck", "exit"
    cwd: str = "."
    env: dict[str, str] = field(default_factory=dict)
    report: str = ""  # the junit/JSON file the command writes (relative to the repo root)


def _pytest(name: str, what: str, python: str, paths: list[str], env: dict[str, str] | None = None,
            extra: list[str] | None = None) -> Suite:
    report = f"test-output/{name}.xml"
    return Suite(name, what, [python, "-m", "pytest", *paths, "-p", "no:cacheprovider",
                              f"--junitxml={report}", *(extra or [])],
                 "junit", env=env or {}, report=report)


def suites() -> list[Suite]:
    table = [
        Suite("lint", "ruff over the Python tree", [PY, "-m", "ruff", "check", "."], "exit"),
        _pytest("python", "pytest, NumPy 1.x, TensorFlow required", PY, ["tests"],
                {"TENSORBRIDGE_REQUIRE_TF": "1"}, ["--ignore=tests/r"]),
        _pytest("numpy2", "runtime and bridge suites on NumPy 2", PY2,
                ["tests/runtime", "tests/bridge"]),
    ]
    for core in CORETYPES:
        table.append(_pytest(f"python-openblas-{core.lower()}",
                             f"float32-sensitive pytest, OPENBLAS_CORETYPE={core}", PY,
                             FLOAT32_PYTESTS,
                             {"OPENBLAS_CORETYPE": core, "TENSORBRIDGE_REQUIRE_TF": "1",
                              "TENSORBRIDGE_TEST_BACKENDS": "numpy,tensorflow"}))
    table += [
        Suite("r-check", "R CMD build + R CMD check --no-manual", ["bash", "-c",
              "R CMD INSTALL --no-multiarch r-client && cd r-client && "
              "rm -rf tensorbridge.Rcheck tensorbridge_*.tar.gz && R CMD build . && "
              "R CMD check --no-manual tensorbridge_*.tar.gz"], "rcheck", env=R_ENV),
        Suite("r-testthat", "testthat, the R package's suite",
              ["Rscript", "tests/suites/testthat.R", "test-output/r-testthat.json"], "testthat",
              env=R_ENV, report="test-output/r-testthat.json"),
    ]
    for core in CORETYPES:
        name = f"r-openblas-{core.lower()}"
        table.append(Suite(name, f"float32-sensitive testthat, OPENBLAS_CORETYPE={core}",
                           ["Rscript", "tests/suites/testthat.R", f"test-output/{name}.json"],
                           "testthat", report=f"test-output/{name}.json",
                           env={**R_ENV, "OPENBLAS_CORETYPE": core,
                                "TB_TESTTHAT_FILTER": FLOAT32_TESTTHAT}))
    table += [
        _pytest("r-rpy2", "pytest of R hosted through rpy2", PY, ["tests/r"],
                {"RPY2_CFFI_MODE": "API"}),
        Suite("node", "node --test: the npm package in Node (Pyodide in-process)",
              ["node", "--expose-gc", "--test", "test/node/"], "tap", cwd="js-client"),
        Suite("browser", "node --test + Playwright: Chromium pages (Pyodide in a worker)",
              ["node", "--test", "test/browser/"], "tap", cwd="js-client"),
    ]
    return table


# ---- counting --------------------------------------------------------------------------------
def _count_junit(path: Path) -> tuple[int, int, int]:
    root = ET.parse(path).getroot()
    cases = root.iter("testcase")
    passed = failed = skipped = 0
    for case in cases:
        kinds = {child.tag for child in case}
        if kinds & {"failure", "error"}:
            failed += 1
        elif "skipped" in kinds:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


_TAP = re.compile(r"^(?:#|\u2139) (pass|fail|cancelled|skipped|todo) (\d+)\s*$", re.M)


def _count_tap(log: str) -> tuple[int, int, int]:
    found: dict[str, int] = {}
    for key, value in _TAP.findall(log):
        found[key] = found.get(key, 0) + int(value)  # one block per test file run
    return (found.get("pass", 0), found.get("fail", 0) + found.get("cancelled", 0),
            found.get("skipped", 0) + found.get("todo", 0))


def count(suite: Suite, log: str, rc: int) -> tuple[int, int, int]:
    """(passed, failed, skipped); a suite that exits non-zero has at least one failure."""
    report = ROOT / suite.report if suite.report else None
    if suite.counter == "junit" and report and report.exists():
        passed, failed, skipped = _count_junit(report)
    elif suite.counter == "testthat" and report and report.exists():
        c = json.loads(report.read_text())
        passed, failed, skipped = c["passed"], c["failed"], c["skipped"]
    elif suite.counter == "tap":
        passed, failed, skipped = _count_tap(log)
    elif suite.counter == "rcheck":
        # R CMD check exits 0 with WARNINGs: only "Status: OK" or NOTEs are clean
        status = re.findall(r"^Status: (.*)$", log, re.M)
        clean = rc == 0 and bool(status) and ("WARNING" not in status[-1]
                                              and "ERROR" not in status[-1])
        passed, failed, skipped = (1, 0, 0) if clean else (0, 1, 0)
    else:
        passed, failed, skipped = (1, 0, 0) if rc == 0 else (0, 1, 0)
    if rc != 0 and failed == 0:
        failed = 1  # crashed, or failed outside any test (collection, a missing tool)
    return passed, failed, skipped


# ---- what failed: named at the end of the run, where CI's tail of the output shows them ------
_TESTTHAT_FAIL = re.compile(  # "Failure ('test-x.R:12'): its name", some reporters in rules
    r"^(?:\u2500\u2500 )?(?:Failure|Error) \('([^']*)'\): (.*?)(?: \u2500+)?$", re.M)
_TAP_FAIL = re.compile(r"^\s*not ok \d+ - (.+)$", re.M)
_RCHECK_FAIL = re.compile(r"^\* (checking .*\.\.\. (?:WARNING|ERROR))$", re.M)


def failures(suite: Suite, log: str) -> list[str]:
    """The failing tests' names (file:line, test) as the suite's own report gives them."""
    report = ROOT / suite.report if suite.report else None
    if suite.counter == "junit" and report and report.exists():
        return [f"{c.get('classname', '')}::{c.get('name', '')}"
                for c in ET.parse(report).getroot().iter("testcase")
                if {child.tag for child in c} & {"failure", "error"}]
    if suite.counter == "testthat":
        return [f"{where}: {name}" for where, name in _TESTTHAT_FAIL.findall(log)]
    if suite.counter == "tap":
        return list(dict.fromkeys(_TAP_FAIL.findall(log)))  # a file's and its test's lines
    if suite.counter == "rcheck":
        return _RCHECK_FAIL.findall(log)
    return []


# ---- running ---------------------------------------------------------------------------------
def _coretype_check(core: str) -> str | None:
    """None when OpenBLAS under OPENBLAS_CORETYPE=core reports that architecture."""
    code = ("import numpy, threadpoolctl; print(','.join(i.get('architecture', '?') for i in "
            "threadpoolctl.threadpool_info() if i['internal_api'] == 'openblas'))")
    env = {**os.environ, "OPENBLAS_CORETYPE": core}
    try:
        got = subprocess.run([PY, "-c", code], env=env, capture_output=True, text=True,
                             timeout=120, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"could not read OpenBLAS's architecture: {exc}"
    archs = set(got.split(","))
    if archs != {core}:
        return f"OPENBLAS_CORETYPE={core} did not take effect (OpenBLAS reports {got or 'none'})"
    return None


def run(suite: Suite) -> dict[str, object]:
    OUT.mkdir(exist_ok=True)
    if suite.report:
        (ROOT / suite.report).unlink(missing_ok=True)
    banner = f"==== {suite.name}: {suite.what}"
    print(f"\n{banner}\n$ {' '.join(suite.command)}", flush=True)
    start = time.monotonic()
    env = {**os.environ, **suite.env}
    lines: list[str] = []
    rc = 0
    core = suite.env.get("OPENBLAS_CORETYPE")
    problem = _coretype_check(core) if core else None
    if problem:
        print(problem, flush=True)
        lines.append(problem)
        rc = 1
    else:
        try:
            proc = subprocess.Popen(suite.command, cwd=ROOT / suite.cwd, env=env, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    errors="replace")
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line)
                lines.append(line)
            rc = proc.wait()
        except OSError as exc:  # the tool itself is missing
            lines.append(str(exc))
            print(exc, flush=True)
            rc = 127
    seconds = time.monotonic() - start
    log = "".join(lines)
    (OUT / f"{suite.name}.log").write_text(log)
    passed, failed, skipped = count(suite, log, rc)
    return {"suite": suite.name, "passed": passed, "failed": failed, "skipped": skipped,
            "seconds": round(seconds, 1), "exit": rc,
            "failures": failures(suite, log) if failed else []}


def table(rows: list[dict[str, object]]) -> str:
    head = ["suite", "passed", "failed", "skipped", "seconds", "result"]
    body = [[str(r["suite"]), str(r["passed"]), str(r["failed"]), str(r["skipped"]),
             f"{r['seconds']:.0f}", "FAIL" if r["failed"] else "ok"] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    fmt = "| " + " | ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in
                            enumerate(widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt.format(*head), sep, *(fmt.format(*b) for b in body)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="suites to run (default: all)")
    parser.add_argument("--list", action="store_true", help="print the suites and exit")
    args = parser.parse_args(argv)
    table_ = suites()
    if args.list:
        for s in table_:
            print(f"{s.name:24} {s.what}\n{'':24} (cd {s.cwd}) {' '.join(s.command)}")
        return 0
    known = {s.name for s in table_}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"names: unknown suite(s) {unknown}; expected some of {sorted(known)}")
    chosen = [s for s in table_ if not args.names or s.name in args.names]
    rows = [run(s) for s in chosen]
    text = table(rows)
    print("\n" + text)
    OUT.mkdir(exist_ok=True)
    (OUT / "summary.md").write_text(text + "\n")
    (OUT / "summary.json").write_text(json.dumps(rows, indent=1))
    failed = [r["suite"] for r in rows if r["failed"]]
    total = sum(int(r["seconds"]) for r in rows)  # type: ignore[call-overload]
    shown = [f"  {r['suite']}: {name}" for r in rows for name in r["failures"][:10]]
    if shown:
        print("\nfailed tests (the suite's log in test-output/ has the details):")
        print("\n".join(shown))
    if failed:
        print(f"\nmake test: {len(failed)} of {len(rows)} suites failed: {', '.join(failed)}"
              f" ({total} s)")
        return 1
    print(f"\nmake test: all {len(rows)} suites passed ({total} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
