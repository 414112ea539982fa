"""The Python half of the R client's greta-style API (bridge/r/ppl.py), without R: R's shape
conventions, greta's column order, variable naming, and parity with the Python API."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.bridge.handles import handles
from tensorbridge.bridge.r import ppl


def resolve(out: dict) -> tb.LazyArray:
    """The lazy array behind what R would get (and release the handle, as R's finalizer does)."""
    x = handles.resolve(out["ref"].id)
    handles.release(out["ref"].id)
    return x


def test_r_vectors_are_columns_and_multivariate_parameters_rows() -> None:
    out = ppl.as_data(np.array([1.0, 2.0, 3.0]))
    assert out["shape"] == [3, 1] and out["kind"] == "data"
    resolve(out)
    out = ppl.make_distribution("normal", {"mean": 0.0, "sd": np.array([1.0, 2.0])},
                                {"dim": None})
    assert out["shape"] == [2, 1] and out["kind"] == "variable"
    resolve(out)
    out = ppl.make_distribution("dirichlet", {"alpha": np.array([1.0, 1.0, 1.0])},
                                {"n_realisations": 4})
    assert out["shape"] == [4, 3]
    resolve(out)
    out = ppl.make_distribution("normal", {"mean": 0.0, "sd": 1.0}, {"dim": [8, 1]})
    assert out["shape"] == [8, 1]
    resolve(out)
    with pytest.raises(ValueError, match="no distribution"):
        ppl.make_distribution("nope", {}, {})
    with pytest.raises(ValueError, match="NA"):
        ppl.as_data(np.ma.masked_array([1.0, 2.0], mask=[False, True]))


def test_the_spec_checks_distribution_arguments_as_r_gives_them() -> None:
    # R has no checks of its own: R's doubles reach the spec, which names the argument
    out = ppl.make_distribution("normal", {"mean": 0.0, "sd": 1.0}, {"dim": 3.0})
    assert out["shape"] == [3, 1]  # greta's dim = n
    resolve(out)
    with pytest.raises(ValueError, match=r"^normal: dim must be a positive integer .* float 2.5"):
        ppl.make_distribution("normal", {"mean": 0.0, "sd": 1.0}, {"dim": 2.5})
    with pytest.raises(ValueError, match=r"^normal: truncation must be two numbers"):
        ppl.make_distribution("normal", {"mean": 0.0, "sd": 1.0}, {"truncation": 1.0})
    with pytest.raises(ValueError, match=r"^dirichlet: n_realisations must be a positive whole"):
        ppl.make_distribution("dirichlet", {"alpha": np.ones(2)}, {"n_realisations": 0.0})
    with pytest.raises(TypeError, match=r"^poisson: lambda must be a number"):
        ppl.make_distribution("poisson", {"lambda_": np.array(["a"])}, {})


def test_subset_is_column_major_and_keeps_two_dimensions() -> None:
    m = np.arange(6.0).reshape(2, 3, order="F")  # R's matrix(0:5, 2)
    x = resolve(ppl.as_data(m))
    lin = resolve(ppl.subset(x, [np.array([0, 5, 2])], True))
    assert lin.shape == (3, 1)
    np.testing.assert_array_equal(lin.numpy().ravel(), m.ravel(order="F")[[0, 5, 2]])
    sub = resolve(ppl.subset(x, [np.array([1]), None], False))
    assert sub.shape == (1, 3)
    np.testing.assert_array_equal(sub.numpy(), m[[1], :])
    sub = resolve(ppl.subset(x, [None, np.array([2, 0])], False))
    np.testing.assert_array_equal(sub.numpy(), m[:, [2, 0]])


def test_columns_follow_greta_order() -> None:
    a = np.arange(2 * 3 * 2 * 2, dtype=float).reshape(2, 3, 2, 2)  # chains, draws, 2 x 2
    s = np.arange(6, dtype=float).reshape(2, 3)
    out = ppl._columns([s, a])
    assert out.shape == (3, 5, 2) and out.flags.f_contiguous
    np.testing.assert_array_equal(out[:, 0, 1], s[1])
    # columns of the 2 x 2 target: [1,1], [2,1], [1,2], [2,2] (column-major, as greta)
    for col, (i, j) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)], start=1):
        np.testing.assert_array_equal(out[:, col, 0], a[0, :, i, j])


def eight_schools(y_shape: tuple[int, ...]) -> tuple:
    y = tb.as_data(np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0]).reshape(y_shape))
    sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0]).reshape(y_shape)
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=y_shape)
    theta = mu + tau * eta
    tb.distribution(y, tb.normal(theta, sigma))
    return mu, tau, eta, theta


def test_sample_matches_the_python_api_bit_for_bit() -> None:
    mu, tau, eta, theta = eight_schools((8, 1))  # R's shapes
    m = ppl.build_model([mu, tau], ["mu", "tau"], {"eta": eta, "theta": theta})
    assert m.variable_names() == ["mu", "tau", "eta"]
    d = ppl.sample(m, tb.nuts(), 30, 30, 2, 1, 7, None, None, 10)
    pmu, ptau, peta, _ = eight_schools((8,))  # the Python API's shapes
    ref = tb.mcmc(tb.model(mu=pmu, tau=ptau, eta=peta), n_samples=30, warmup=30, chains=2,
                  seed=7, progress=False)
    np.testing.assert_array_equal(d["mu"], ref["mu"])
    np.testing.assert_array_equal(d["eta"].reshape(2, 30, 8), ref["eta"])
    values = ppl.draws_values(d, [mu, theta])
    assert values.shape == (30, 9, 2)
    np.testing.assert_array_equal(values[:, 0, :], ref["mu"].T)
    known = ppl.calculate_draws([mu, tb.as_data(np.array([[1.0, 2.0]]))], d)
    assert known.shape == (30, 3, 2)
    np.testing.assert_array_equal(known[:, 2, 1], np.full(30, 2.0))
    info = ppl.draws_info(d)
    assert info["stats"]["divergent"].shape == (30, 2) and info["interrupted"] is False
    assert info["divergences"] == ref.divergences


def test_progress_callback_and_initial_values_by_name() -> None:
    mu, tau, eta, _ = eight_schools((8, 1))
    m = ppl.build_model([mu, tau, eta], ["mu", "tau", "eta"], {})
    seen = []
    ppl.sample(m, tb.hmc(n_leapfrog=3), 5, 5, 1, 1, 1, {"tau": 2.0, "eta": np.zeros(8)},
               seen.append, 2)
    assert [s["iteration"] for s in seen] == [2, 4, 6, 8, 10]
    assert seen[-1]["phase"] == "sampling"
    with pytest.raises(ValueError, match="no variable 'zeta'"):
        ppl.sample(m, tb.nuts(), 5, 5, 1, 1, 1, {"zeta": 1.0}, None, 5)
    with pytest.raises(ValueError, match="expected 8 values"):
        ppl.sample(m, tb.nuts(), 5, 5, 1, 1, 1, {"eta": np.zeros(3)}, None, 5)


def test_variable_names_are_distinct_with_greta_priorities() -> None:
    a = tb.normal(0.0, 1.0)
    b = tb.normal(a, 1.0)
    c = tb.normal(b, 1.0)
    y = tb.as_data(np.array([[0.5]]))
    tb.distribution(y, tb.normal(c, 1.0))
    m = ppl.build_model([a], ["a"], {"bee": b, "also_bee": b})
    assert [v.name for v in m.variables] == ["a", "also_bee", f"variable_{c.node.id}"]
    # a target name wins over an older name; an older name that clashes is dropped
    m = ppl.build_model([b], ["a"], {})
    names = [v.name for v in m.variables]
    assert names[1] == "a" and len(set(names)) == 3


def test_calculate_values_by_object_and_by_variable_name() -> None:
    mu, tau, eta, theta = eight_schools((8, 1))
    ppl.build_model([mu, tau], ["mu", "tau"], {"eta": eta})
    out = ppl.calculate_values([theta], [(mu, 1.0)], {"tau": 2.0, "eta": np.arange(8.0)})
    np.testing.assert_array_equal(out[0].ravel(), 1.0 + 2.0 * np.arange(8.0))
    with pytest.raises(ValueError, match="no variable named nope"):
        ppl.calculate_values([theta], [], {"nope": 1.0})


def test_summarise_is_the_runtimes_summary() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 200))  # chains, draws
    r_array = np.asfortranarray(x.T[:, None, :])  # draws, columns, chains
    s = ppl.summarise(r_array, "x")
    ref = tb.Draws({"x": x}, np.zeros((3, 200, 0)), {}).summary()["x"]
    for k in ("mean", "sd", "q5", "q95", "rhat", "ess_bulk", "ess_tail"):
        assert s[k][0] == ref[k]


def test_optimise_returns_target_values() -> None:
    obs = np.array([0.3, -0.1, 0.8, 1.2])
    mu = tb.normal(0.0, 10.0)
    y = tb.as_data(obs.reshape(4, 1))
    tb.distribution(y, tb.normal(mu, 1.0))
    m = ppl.build_model([mu], ["mu"], {})
    res = ppl.optimise(m, [mu, mu * 2.0], "lbfgs", None, 200, 1e-10, 0.05, False, 0)
    post = obs.sum() / (len(obs) + 1 / 100)
    assert res["converged"]
    np.testing.assert_allclose(float(res["par"][0]), post, rtol=1e-6)
    np.testing.assert_allclose(float(res["par"][1]), 2 * post, rtol=1e-6)
