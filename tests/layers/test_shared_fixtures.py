"""The shared fixtures (tests/fixtures/shared) must match what the runtime computes now: R and JS
replay them, so a stale fixture would test the other clients against wrong numbers."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

SHARED = Path(__file__).resolve().parents[1] / "fixtures" / "shared"


def _generator():
    spec = importlib.util.spec_from_file_location("make_fixtures", SHARED / "make_fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["layers_linear", "layers_mlp"])
def test_layer_fixture_matches_runtime(name):
    stored = json.loads((SHARED / f"{name}.json").read_text())
    fresh = json.loads(json.dumps(_generator().layer_fixture(name)))
    assert stored["x"] == fresh["x"] and stored["y"] == fresh["y"]
    assert stored["initial_weights"] == fresh["initial_weights"]
    for key, vals in stored["expected"]["history"].items():
        np.testing.assert_allclose(fresh["expected"]["history"][key], vals, rtol=1e-12)
    for a, b in zip(stored["expected"]["final_weights"], fresh["expected"]["final_weights"]):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fresh["expected"]["predictions"],
                               stored["expected"]["predictions"], rtol=1e-12, atol=1e-14)
    # training really moved the weights and lowered the loss (the fixture is not trivial)
    assert stored["expected"]["history"]["loss"][-1] < stored["expected"]["history"]["loss"][0]
    assert stored["expected"]["final_weights"][0] != stored["initial_weights"][0]


def test_eight_schools_reference_agrees_with_a_fresh_run():
    import tensorbridge as tb

    ref = json.loads((SHARED / "eight_schools.json").read_text())
    data = ref["data"]
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, math.inf))
    eta = tb.normal(0.0, 1.0, dim=8)
    theta = mu + tau * eta
    tb.distribution(tb.as_data(data["y"]), tb.normal(theta, tb.as_data(data["sigma"])))
    draws = tb.mcmc(tb.model(mu, tau, theta), n_samples=500, warmup=500, chains=4, seed=3,
                    progress=False)
    summary = draws.summary()
    for name in ("mu", "tau", "theta[0]", "theta[7]"):
        want = ref["reference"]["posterior"][name]
        row = summary[name]
        mcse = row["sd"] / math.sqrt(row["ess_bulk"])
        assert abs(row["mean"] - want["mean"]) < 5 * mcse + 0.05, (name, row, want)
