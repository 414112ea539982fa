"""Fixtures for the npm package: the op table in ``js-client/test/fixtures/op_cases.py`` run on
the NumPy backend gives ``ops.json``; the JS suites run the same table on the ``tfjs`` backend in
Pyodide and compare to it (float32 tolerance).

``TB_UPDATE_FIXTURES=1 pytest tests/js`` rewrites the file; otherwise this test checks that the
committed fixtures still match the Python runtime (so a change in an op shows up here first).
"""

from __future__ import annotations

import importlib.util
import json
import os
import warnings
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "js-client" / "test" / "fixtures"


def _cases():
    spec = importlib.util.spec_from_file_location("op_cases", FIXTURES / "op_cases.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _compute(oc, backend: str) -> dict:
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in oc.CASES:
            r = oc.run_case(case, backend)
            r["value"] = oc.encode(r["value"])
            if "grads" in r:
                r["grads"] = [oc.encode(g) for g in r["grads"]]
            out[case[0]] = r
    return out


def test_fixtures_match_python_runtime() -> None:
    oc = _cases()
    path = FIXTURES / "ops.json"
    fresh = _compute(oc, "numpy")
    if os.environ.get("TB_UPDATE_FIXTURES") == "1" or not path.exists():
        path.write_text(json.dumps({"producer": "tests/js/test_js_fixtures.py (numpy backend)",
                                    "cases": fresh}, indent=None, separators=(",", ":")))
    stored = json.loads(path.read_text())["cases"]
    assert sorted(stored) == sorted(fresh), "op table changed: run TB_UPDATE_FIXTURES=1"
    cases = {c[0]: c for c in oc.CASES}
    for name, want in stored.items():
        got = fresh[name]
        assert got["dtype"] == want["dtype"] and got["shape"] == want["shape"], name
        # the fixture was written on another machine: the tolerance policy, not its rounding
        err = oc.close(got["value"], want["value"], want["dtype"],
                       **oc.error_model(cases[name], want["value"]))
        for g, wg in zip(got.get("grads", []), want.get("grads", [])):
            err = err or oc.close(g, wg, "float32", **oc.error_model(cases[name], wg, grad=True))
        assert err is None, f"{name}: {err} (run TB_UPDATE_FIXTURES=1 if intended)"


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="no tensorflow")
def test_tensorflow_backend_agrees_with_fixtures() -> None:
    """The same table on TensorFlow agrees at float32 tolerance (what tfjs is held to)."""
    oc = _cases()
    stored = json.loads((FIXTURES / "ops.json").read_text())["cases"]
    failures = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in oc.CASES:
            err = oc.check_case(case, stored[case[0]], "tensorflow")
            if err:
                failures[case[0]] = err
    assert not failures, failures
