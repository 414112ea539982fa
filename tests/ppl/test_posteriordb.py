"""tensorbridge's NUTS against reference posteriors from outside this project: stan-dev/posteriordb
(10 chains x 1000 draws per posterior from long Stan runs; data and reference mean/sd per
parameter in tests/fixtures/posteriordb, models in posteriordb_models.py).

Each posterior is sampled with tb.mcmc (4 chains, 1000 warmup + 1000 draws, a fixed seed) and
every parameter must pass: |mean - ref mean| <= 0.1 ref sd + 4 MCSE, sd / ref sd in [0.85, 1.15]
(except where the posterior has no finite variance: INFINITE_VARIANCE), the reference's 5% and
95% quantiles within 4 standard errors of those probabilities of the run's draws, R-hat <= 1.01.
The CI set runs in `make test`; the others (slower) run with TB_POSTERIORDB=all,
and all of them in bench/posteriordb_bench.py.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from . import posteriordb_models as P

FULL = os.environ.get("TB_POSTERIORDB", "").lower() == "all"
CI_SET = [name for name, (_, ci) in P.MODELS.items() if ci]


def _cases() -> list[object]:
    cases = []
    for name, (_, ci) in P.MODELS.items():
        marks = []
        if not ci:
            marks.append(pytest.mark.skipif(
                not FULL, reason="larger posteriordb set: TB_POSTERIORDB=all, or "
                                 "bench/posteriordb_bench.py"))
        if name in P.KNOWN_ISSUES:
            error, why = P.KNOWN_ISSUES[name]
            marks.append(pytest.mark.xfail(strict=True, raises=error, reason=why))
        cases.append(pytest.param(name, marks=marks, id=name))
    return cases


@pytest.mark.parametrize("posterior", _cases())
def test_posterior_matches_posteriordb_reference(posterior: str) -> None:
    draws, fx = P.run(posterior)
    reference = fx["reference"]["posterior"]
    rows = P.check(draws.summary(), reference, columns=dict(draws.scalar_columns()),
                   infinite_variance=P.INFINITE_VARIANCE.get(posterior, ()))
    assert [r["parameter"] for r in rows] == list(reference)
    failures = P.describe_failures(rows)
    assert not failures, f"{posterior} ({draws.divergences} divergences): {failures}"


def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan_not_an_error() -> None:
    """What gp_pois_regr needs: a proposal that makes its kernel matrix indefinite gives NaN
    factors, so NUTS rejects it (as Stan does) instead of every chain failing."""
    import numpy as np

    import tensorbridge as tb

    a = tb.tensor(np.array([[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]]))
    out = tb.cholesky(a).numpy()
    np.testing.assert_allclose(out[0], np.linalg.cholesky(a.numpy()[0]))
    assert np.isnan(out[1]).all()


def test_set_spans_the_model_kinds_and_ci_set_is_a_subset() -> None:
    assert len(P.MODELS) >= 9
    assert "eight_schools-eight_schools_noncentered" in CI_SET
    assert len(CI_SET) >= 5


@pytest.mark.parametrize("posterior", list(P.MODELS))
def test_fixture_is_posteriordb_and_the_model_names_every_reference_parameter(
        posterior: str) -> None:
    fx = P.load(posterior)
    src = fx["source"]
    assert fx["posterior"] == posterior
    assert src["repository"] == "https://github.com/stan-dev/posteriordb"
    assert src["commit"].startswith("28f8d3d")
    assert "BSD-3-Clause" in src["license"]
    assert src["paths"]["reference_draws"].endswith(f"/{posterior}.json.zip")
    ref = fx["reference"]
    assert (ref["chains"], ref["draws_per_chain"]) == (10, 1000)
    for name, r in ref["posterior"].items():
        assert math.isfinite(r["mean"]) and r["sd"] > 0, name
        assert r["q5"] < r["mean"] < r["q95"], name
    # the model's named targets, flattened as Draws.summary() labels them, are exactly the
    # reference's parameters (posteriordb's 1-based names shifted to 0-based)
    builder, _ = P.MODELS[posterior]
    model, _ = builder(fx["data"])
    labels = set()
    for node in model.targets:
        if not node.shape:
            labels.add(node.name)
        for idx in np.ndindex(*node.shape) if node.shape else ():
            labels.add(f"{node.name}[{','.join(map(str, idx))}]")
    assert labels == {P.zero_based(n) for n in ref["posterior"]}


def test_zero_based_names() -> None:
    assert P.zero_based("beta[1]") == "beta[0]"
    assert P.zero_based("theta[10]") == "theta[9]"
    assert P.zero_based("x[2,3]") == "x[1,2]"
    assert P.zero_based("sigma") == "sigma"


class _Summary(dict):
    pass


def _row(mean: float, sd: float, rhat: float = 1.0, ess: float = 400.0) -> dict[str, float]:
    return {"mean": mean, "sd": sd, "rhat": rhat, "ess_bulk": ess}


def test_pass_rule_fails_each_way() -> None:
    ref = {"a": {"mean": 1.0, "sd": 2.0}}
    # MCSE = 2 / sqrt(400) = 0.1: the mean limit is 0.1 * 2 + 4 * 0.1 = 0.6
    ok = P.check(_Summary(a=_row(1.59, 2.0)), ref)[0]
    assert ok["passed"] and ok["mean_limit"] == pytest.approx(0.6)
    assert P.check(_Summary(a=_row(1.61, 2.0)), ref)[0]["failed"] == ["mean"]
    assert P.check(_Summary(a=_row(1.0, 2.0 * 1.16)), ref)[0]["failed"] == ["sd"]
    assert P.check(_Summary(a=_row(1.0, 2.0 * 0.84)), ref)[0]["failed"] == ["sd"]
    assert P.check(_Summary(a=_row(1.0, 2.0, rhat=1.011)), ref)[0]["failed"] == ["rhat"]
    assert P.check(_Summary(a=_row(1.0, 2.0, rhat=1.01)), ref)[0]["passed"]
    assert "a [rhat]" in P.describe_failures(P.check(_Summary(a=_row(1.0, 2.0, rhat=1.2)), ref))


def test_quantile_rule_and_infinite_variance_fail_and_pass_each_way() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 1000))  # independent draws: tail ESS about 4000
    row = {**_row(float(x.mean()), float(x.std(ddof=1))), "ess_tail": 4000.0}
    q5, q95 = -1.6448536, 1.6448536  # N(0, 1)'s quantiles
    ref = {"a": {"mean": 0.0, "sd": 1.0, "q5": q5, "q95": q95}}
    ok = P.check(_Summary(a=row), ref, columns={"a": x})[0]
    assert ok["passed"], ok
    # the limit: 4 sqrt(0.05 * 0.95 (1/4000 + 1/10000)) = 0.0164; F(-1.45) is about 0.074
    bad = P.check(_Summary(a=row), {"a": {**ref["a"], "q5": -1.45}}, columns={"a": x})[0]
    assert bad["failed"] == ["q5"]
    assert "F(ref q5)" in P.describe_failures([bad])
    wide = {"a": {**ref["a"], "sd": 2.0}}
    assert P.check(_Summary(a=row), wide, columns={"a": x})[0]["failed"] == ["sd"]
    assert P.check(_Summary(a=row), wide, columns={"a": x}, infinite_variance=("a",))[0]["passed"]


def test_infinite_variance_names_reference_parameters() -> None:
    for posterior, names in P.INFINITE_VARIANCE.items():
        assert set(names) <= set(P.load(posterior)["reference"]["posterior"])


def test_linear_recurrence_matches_the_loop() -> None:
    import tensorbridge as tb

    rng = np.random.default_rng(0)
    for t, b in ((1, 0.5), (2, -0.7), (7, 0.9), (200, -0.95)):
        a = rng.normal(size=t)
        want = np.zeros(t)
        for i in range(t):
            want[i] = a[i] + (b * want[i - 1] if i else 0.0)
        v = tb.variable(dim=t)
        got = tb.calculate(P._linear_recurrence(v, tb.as_data(b), t), values={v: a})
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_log_chain_product_matches_the_forward_algorithm() -> None:
    from scipy.special import logsumexp

    import tensorbridge as tb

    rng = np.random.default_rng(1)
    log_trans = np.log(np.array([[0.7, 0.3], [0.1, 0.9]]))
    for n in (2, 3, 8, 100):
        emit = 3.0 * rng.normal(size=(n, 2))
        gamma = emit[0]
        for t in range(1, n):
            gamma = logsumexp(gamma[:, None] + log_trans, axis=0) + emit[t]
        v = tb.variable(dim=(n, 2))
        steps = tb.as_data(log_trans) + tb.reshape(v[1:], (n - 1, 1, 2))
        got = P._log_matmul(tb.reshape(v[0], (1, 2)), P._log_chain_product(steps, n - 1, 2))
        np.testing.assert_allclose(np.asarray(tb.calculate(got, values={v: emit})).ravel(),
                                   gamma, rtol=1e-12)


def test_shared_eight_schools_fixture_is_posteriordbs() -> None:
    """tests/fixtures/shared/eight_schools.json (replayed by the R and JS suites) carries the
    same posteriordb reference as this set's eight schools fixture."""
    shared = json.loads((P.FIXTURES.parent / "shared" / "eight_schools.json").read_text())
    assert "posteriordb" in shared["source"]["repository"]
    ours = P.load("eight_schools-eight_schools_noncentered")
    assert shared["data"]["y"] == ours["data"]["y"]
    assert shared["data"]["sigma"] == ours["data"]["sigma"]
    for name, ref in ours["reference"]["posterior"].items():
        got = shared["reference"]["posterior"][P.zero_based(name)]
        for k in ("mean", "sd", "q5", "q95"):
            assert got[k] == pytest.approx(ref[k], abs=6e-5), (name, k)
