"""The conformance table (tests/conformance/*.json) replayed through the Python door.

The R, Node and browser replayers run the same rows (see README.md next to this file); what
Python received is judged by ``tensorbridge.bridge.conformance.check`` in every door.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

import tensorbridge as tb
from tensorbridge.bridge import conformance
from tensorbridge.bridge.na import NA, NA_REAL, NA_character, NA_integer

HERE = Path(__file__).resolve().parent
DOOR = "python"
STEPS = ("receive", "tensor", "back", "result")


def tables() -> dict[str, list[dict[str, Any]]]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8"))["cases"]
            for p in sorted(HERE.glob("*.json"))}


def _namespace() -> dict[str, Any]:
    return {"tb": tb, "math": math, "NA": NA, "NA_REAL": NA_REAL, "NA_integer": NA_integer,
            "NA_character": NA_character, "inf": math.inf, "nan": math.nan}


def _expect(case: dict[str, Any], block: dict[str, Any], step: str) -> Any:
    return block.get(step, case.get(step))


def _raises(fn: Any, want: dict[str, Any]) -> str | None:
    try:
        fn()
    except Exception as exc:  # the case names the class it expects
        names = {c.__name__ for c in type(exc).__mro__}
        if want["class"] not in names:
            return f"raised {type(exc).__name__}: {exc}, expected {want['class']}"
        if want.get("arg") and want["arg"] not in str(exc):
            return f"{type(exc).__name__} does not name the argument {want['arg']!r}: {exc}"
        return None
    return f"did not raise {want['class']}"


def run_case(case: dict[str, Any]) -> list[str]:
    """The failures of one case through the Python door (an empty list when it passes)."""
    block = case[DOOR]
    ns = _namespace()
    failures: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        def value() -> Any:
            return eval(block["value"], ns)

        for step in STEPS:
            want = _expect(case, block, step)
            if want is None:
                continue
            if step == "result":
                make = lambda: eval(block["expr"], ns)  # noqa: E731
            elif step == "tensor":
                make = lambda: tb.tensor(value())  # noqa: E731
            elif step == "back":
                got = conformance.echo(value())
                expected = value() if want == "same" else eval(want, ns)
                if conformance.describe(got) != conformance.describe(expected):
                    failures.append(f"back: {conformance.describe(got)} != "
                                    f"{conformance.describe(expected)}")
                continue
            else:
                make = value
            if isinstance(want, dict) and "error" in want:
                err = _raises(make, want["error"])
            else:
                try:
                    err = conformance.check(make(), want)
                except Exception as exc:
                    err = f"raised {type(exc).__name__}: {exc}"
            if err:
                failures.append(f"{step}: {err}")
    pattern = block.get("warning", case.get("warning"))
    if pattern and not any(re.search(pattern, str(w.message)) for w in caught):
        failures.append(f"warning: none matched {pattern!r} (got "
                        f"{[str(w.message) for w in caught]})")
    return failures


def _rows() -> list[Any]:
    return [pytest.param(case, id=f"{table}:{case['id']}")
            for table, cases in tables().items() for case in cases if DOOR in case]


@pytest.mark.parametrize("case", _rows())
def test_case(case: dict[str, Any]) -> None:
    if "skip" in case[DOOR]:
        pytest.skip(case[DOOR]["skip"])
    failures = run_case(case)
    assert not failures, f"door python, case {case['id']}: " + "; ".join(failures)


def test_table_is_well_formed_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """Every row has a unique id, a description and a door; prints the door's summary."""
    seen: set[str] = set()
    ran = failed = 0
    for table, cases in tables().items():
        for case in cases:
            assert case["id"] not in seen, f"{table}: duplicate id {case['id']}"
            seen.add(case["id"])
            assert case.get("what"), f"{table}:{case['id']}: say what the case checks"
            assert {"r", "js", "python"} & set(case), f"{table}:{case['id']}: no door"
            for door in ("r", "js", "python"):
                if door in case:
                    assert "value" in case[door] or "expr" in case[door] or "skip" in \
                        case[door], f"{table}:{case['id']}: {door} block has nothing to run"
            if DOOR in case and "skip" not in case[DOOR]:
                ran += 1
                failed += bool(run_case(case))
    with capsys.disabled():
        print(f"\nconformance (python door): {ran} cases, {failed} failed")
    assert failed == 0
