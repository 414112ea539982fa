"""`make test`'s runner (tests/suites/run.py) names the failing tests after its table, where
CI's tail of the output shows them: one row per failing test in each report format."""

from __future__ import annotations

import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("_suites_run", ROOT / "tests/suites/run.py")
run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = run  # its dataclass looks its module up
_spec.loader.exec_module(run)

# What testthat 3's default reporter prints for a failure and an error (testthat 3.2).
TESTTHAT_LOG = """\u2716 | 2       0 | a [0.1s]
\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500
Failure ('test-a.R:1'): one plus one
1 + 1 not equal to 3.

Error ('test-cluster.R:40'): a Dask cluster from R
Error in `eval(code, test_env)`: boom
\u2500\u2500 Failure ('test-b.R:7'): in a rule \u2500\u2500\u2500\u2500
[ FAIL 3 | WARN 0 | SKIP 0 | PASS 0 ]
"""


def test_testthat_failures_are_named_with_their_file_and_line() -> None:
    s = run.Suite("r-testthat", "x", [], "testthat")
    assert run.failures(s, TESTTHAT_LOG) == ["test-a.R:1: one plus one",
                                             "test-cluster.R:40: a Dask cluster from R",
                                             "test-b.R:7: in a rule"]


def test_tap_and_rcheck_failures() -> None:
    tap = run.Suite("node", "x", [], "tap")
    log = "ok 1 - fine\nnot ok 2 - test/node/a.test.js\n  not ok 1 - converts NaN\n"
    assert run.failures(tap, log) == ["test/node/a.test.js", "converts NaN"]
    rcheck = run.Suite("r-check", "x", [], "rcheck")
    log = ("* checking examples ... OK\n* checking Rd \\usage sections ... WARNING\n"
           "Status: 1 WARNING\n")
    assert run.failures(rcheck, log) == ["checking Rd \\usage sections ... WARNING"]


def test_junit_failures_name_class_and_test(tmp_path: Path, monkeypatch) -> None:
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite")
    ET.SubElement(suite, "testcase", classname="tests.a", name="test_ok")
    bad = ET.SubElement(suite, "testcase", classname="tests.a", name="test_bad")
    ET.SubElement(bad, "failure", message="assert 1 == 2")
    ET.ElementTree(suites).write(tmp_path / "r.xml")
    monkeypatch.setattr(run, "ROOT", tmp_path)
    s = run.Suite("python", "x", [], "junit", report="r.xml")
    assert run.failures(s, "") == ["tests.a::test_bad"]
