"""The tolerance policy (``tensorbridge.runtime.testing``): the shared hand-computed cases that
R and JS replay too, and that it catches what a bare relative tolerance misses or forgives."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import testing

CASES = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "shared"
                    / "tolerance_cases.json").read_text())["cases"]


def _value(v):
    return float(v) if isinstance(v, str) else v


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["what"])
@pytest.mark.parametrize("form", ["list", "numpy"])
def test_shared_cases(case: dict, form: str) -> None:
    actual = [_value(v) for v in case["actual"]]
    expected = [_value(v) for v in case["expected"]]
    if form == "numpy":
        actual, expected = np.array(actual, dtype=np.float64), np.array(expected, dtype=np.float64)
    err = testing.check_close(actual, expected, case["dtype"], n=case.get("n", 1),
                              magnitude=case.get("magnitude"), ulps=case.get("ulps"))
    assert (err is None) == case["pass"], err


def test_unit_roundoff_is_the_dtypes_epsilon_over_two() -> None:
    assert testing.unit_roundoff(tb.float32) == np.finfo(np.float32).eps / 2
    assert testing.unit_roundoff("float64") == np.finfo(np.float64).eps / 2
    assert testing.unit_roundoff(np.dtype("float32")) == np.finfo(np.float32).eps / 2
    assert testing.unit_roundoff("int32") == 0.0
    assert testing.TINY["float32"] == np.finfo(np.float32).tiny


def test_gamma_and_chained_length() -> None:
    u = 2.0**-24
    assert testing.gamma(10, "float32") == pytest.approx(10 * u / (1 - 10 * u), rel=1e-15)
    assert testing.chained_length(50, 32) == 1600
    with pytest.raises(ValueError, match="n:"):
        testing.gamma(2**25, "float32")  # n*u >= 1: no bound exists
    with pytest.raises(ValueError, match="steps, per_step"):
        testing.chained_length(0, 3)


def test_tensors_and_shapes() -> None:
    x = tb.tensor([[1.0, 2.0]], dtype="float32")
    testing.assert_close(x, [[1.0, 2.0]])  # dtype from the tensor
    assert "shape (1, 2) != expected (2,)" in testing.check_close(x, np.array([1.0, 2.0]))
    with pytest.raises(AssertionError, match="element 1"):
        testing.assert_close(x, np.array([[1.0, 2.001]]))


def test_catches_a_float64_result_computed_in_float32() -> None:
    """The bug class a bare rtol=1e-6 forgives: float64 silently computed in float32."""
    exact = np.linspace(0.1, 1.0, 10)
    degraded = exact.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(degraded, exact, rtol=1e-6)  # the old style passes...
    assert testing.check_close(degraded, exact, "float64") is not None  # ...the policy does not


def test_cancellation_needs_the_magnitude() -> None:
    """A matmul element near cancellation: a bare relative bound fails on honest rounding,
    the magnitude-scaled bound passes it, and still fails a wrong product."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal((256, 64)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # a different summation order: what another BLAS kernel does
    reordered = np.zeros((64, 64), np.float32)
    for k in range(255, -1, -1):
        reordered += np.outer(a[:, k], b[k, :])
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    testing.assert_close(reordered, exact, "float32", n=256, magnitude=mag)
    wrong = reordered.copy()
    wrong[3, 5] += 1e-3 * mag[3, 5]  # a real bug (e.g. a dropped term) is caught
    assert testing.check_close(wrong, exact, "float32", n=256, magnitude=mag) is not None


def test_works_without_numpy_inputs() -> None:
    assert testing.check_close([[1.0, math.nan]], [[1.0, math.nan]], "float32") is None
    assert testing.tolerance([1.0, -2.0], "float64") == [4 * 2.0**-53 + 2.0**-1022,
                                                        8 * 2.0**-53 + 2.0**-1022]
