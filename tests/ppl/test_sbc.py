"""tb.sbc (simulation-based calibration) in one process and on the local pool, tb.map, and
calculate/simulate over blocks of draws on an executor. The Dask runs of the same are in
test_dask_cluster.py (a real scheduler and workers)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.ppl.executors import InProcess, TaskError
from tensorbridge.runtime.ppl.sbc import chi2_sf, rank_uniformity, replication_seeds


def _normal_mean(n: int = 5):
    """mu ~ N(0, 1), y_i ~ N(mu, 1): the posterior is N(sum(y) / (n + 1), 1 / (n + 1))."""
    mu = tb.normal(0.0, 1.0)
    y = tb.as_data(np.zeros(n))
    tb.distribution(y, tb.normal(mu, 1.0))
    return tb.model(mu=mu), mu, y


def test_chi2_sf_known_quantiles() -> None:
    # the chi-square tables' quantiles (df, x, upper tail)
    for df, x, p in [(9, 21.665994, 0.01), (3, 7.814728, 0.05), (1, 3.841459, 0.05),
                     (19, 30.143527, 0.05), (9, 4.168159, 0.9)]:
        assert chi2_sf(x, df) == pytest.approx(p, rel=1e-5), (df, x)
    assert chi2_sf(0.0, 4) == 1.0
    # df = 2: exactly exp(-x / 2)
    for x in (0.3, 2.0, 9.0, 40.0):
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)


def test_rank_uniformity_counts_and_p_value() -> None:
    counts, p = rank_uniformity(np.arange(100), 99, 10)
    assert counts.tolist() == [10] * 10 and p == 1.0
    counts, p = rank_uniformity(np.zeros(50, dtype=int), 99, 10)
    assert counts.tolist() == [50] + [0] * 9 and p < 1e-30


def test_replication_seeds_depend_on_seed_and_index_only() -> None:
    seeds = {replication_seeds(7, i) for i in range(100)}
    assert len(seeds) == 100
    assert replication_seeds(7, 3) == replication_seeds(7, 3) != replication_seeds(8, 3)


def test_sbc_passes_for_nuts_and_fails_for_a_stuck_sampler() -> None:
    """The analytic check that can fail: NUTS on a conjugate normal model has uniform ranks; a
    random walk with a negligible step and no warmup stays where it started (uniform(-2, 2)
    per chain), so its draws are not the posterior and its ranks bunch in three places."""
    m, _, _ = _normal_mean()
    kw = {"nsim": 30, "n_samples": 30, "warmup": 60, "thin_to": 19, "bins": 10, "seed": 3,
          "backend": "numpy", "progress": False}
    good = tb.sbc(m, **kw)
    assert good.names == ["mu"] and good.ranks["mu"].shape == (30,)
    assert good.ranks["mu"].min() >= 0 and good.ranks["mu"].max() <= 19
    assert good.counts["mu"].sum() == 30 and good.threshold == 0.01
    assert good.passed["mu"] and good.p_values["mu"] > 0.05, good.summary()
    # the truth is the prior's: mean 0, sd 1
    assert abs(good.truth["mu"].mean()) < 3 / math.sqrt(30)

    bad = tb.sbc(m, **{**kw, "warmup": 0, "n_samples": 10},
                 sampler=tb.rwmh(epsilon=1e-6))
    assert not bad.passed["mu"] and bad.p_values["mu"] < 1e-4, bad.summary()
    assert not bad.all_passed and "MISS" in bad.summary()


def test_sbc_replications_do_not_depend_on_nsim_or_the_executor() -> None:
    """Replication i's seeds are (seed, i): the first replications of a longer run are the
    shorter run's, in one process and on the local pool alike; derived quantities are ranked
    by name and element (0-based)."""
    mu = tb.normal(0.0, 1.0)
    sd = tb.exponential(1.0)
    y = tb.as_data(np.zeros(4))
    tb.distribution(y, tb.normal(mu, sd))
    m = tb.model(mu=mu, sd=sd)
    kw = {"n_samples": 10, "warmup": 20, "thin_to": 9, "bins": 5, "seed": 11,
          "backend": "numpy", "progress": False,
          "parameters": {"mu": mu, "sd": sd, "pair": tb.stack([mu, sd])}}
    short = tb.sbc(m, 3, **kw)
    long = tb.sbc(m, 5, n_cores=2, **kw)
    assert short.names == ["mu", "sd", "pair[0]", "pair[1]"] == long.names
    for k in short.names:
        np.testing.assert_array_equal(short.ranks[k], long.ranks[k][:3], err_msg=k)
        np.testing.assert_array_equal(short.truth[k], long.truth[k][:3], err_msg=k)
    d = long.to_dict()
    assert d["nsim"] == 5 and len(d["ranks"]["mu"]) == 5 and isinstance(d["ranks"]["mu"][0], int)


def test_sbc_bad_arguments_are_named() -> None:
    m, mu, _ = _normal_mean()
    with pytest.raises(ValueError, match=r"bins: must divide thin_to \+ 1 = 100"):
        tb.sbc(m, 10, bins=7)
    with pytest.raises(ValueError, match="thin_to: 99 is more than"):
        tb.sbc(m, 10, n_samples=20, chains=2)
    with pytest.raises(ValueError, match="nsim: expected an integer >= 1"):
        tb.sbc(m, 0)
    with pytest.raises(TypeError, match="model: expected a tensorbridge model"):
        tb.sbc(mu, 10)
    free = tb.variable()
    y2 = tb.as_data(np.zeros(3))
    tb.distribution(y2, tb.normal(free, 1.0))
    with pytest.raises(ValueError, match="model: free have no prior distribution"):
        tb.sbc(tb.model(free=free), 10)
    with pytest.raises(ValueError, match="n_cores, cluster: give one"):
        tb.sbc(m, 10, n_cores=2, cluster="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match=r"parameters: .* not variables of the model"):
        tb.sbc(m, 10, parameters=[mu * 2.0])
    with pytest.raises(ValueError, match=r"data: .* not a data array with a distribution"):
        tb.sbc(m, 10, data=tb.as_data(np.zeros(2)))


def test_map_keeps_the_order_and_names_the_failing_item() -> None:
    assert tb.map(lambda k: k * k, [3, 1, 2]) == [9, 1, 4]
    assert tb.map(lambda k: -k, {"a": 1, "b": 2}, n_cores=2) == {"a": -1, "b": -2}
    with pytest.raises(TaskError, match=r"map: dataset 2 failed: ZeroDivisionError") as e:
        tb.map(lambda k: 1 / k, [1, 2, 0, 4])
    assert e.value.index == 2 and isinstance(e.value.__cause__, ZeroDivisionError)
    with pytest.raises(TaskError, match=r"map: dataset 1 failed: ZeroDivisionError"):
        tb.map(lambda k: 1 / k, [1, 0], n_cores=2)
    with pytest.raises(TypeError, match="datasets: expected a list"):
        tb.map(abs, 3)


def _eight_schools_draws():
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=8)
    theta = mu + tau * eta
    y = tb.as_data([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    tb.distribution(y, tb.normal(theta, tb.as_data([15.0, 10, 16, 11, 9, 11, 10, 18])))
    d = tb.mcmc(tb.model(mu, tau, eta), n_samples=300, warmup=100, chains=4, seed=1,
                progress=False, backend="numpy")
    return d, theta, y


def test_calculate_and_simulate_over_blocks_in_process() -> None:
    d, theta, y = _eight_schools_draws()  # 1200 draws: blocks of 1000 and 200
    here = tb.calculate({"t": theta, "s": tb.sum(theta)}, values=d)
    blocks = tb.calculate({"t": theta, "s": tb.sum(theta)}, values=d, cluster=InProcess())
    for k in here:
        assert blocks[k].shape == here[k].shape
        np.testing.assert_array_equal(blocks[k], here[k], err_msg=k)
    one = tb.simulate([theta, y], nsim=1100, seed=4, values=d)
    two = tb.simulate([theta, y], nsim=1100, seed=4, values=d, cluster=InProcess())
    # the same draws picked; the replicated data from the blocks' own streams
    np.testing.assert_array_equal(one[0].numpy(), two[0].numpy())
    assert two[1].shape == (1100, 8)
    np.testing.assert_array_equal(two[1].numpy(), tb.simulate(
        [theta, y], nsim=1100, seed=4, values=d, cluster=InProcess())[1].numpy())
    resid = (two[1].numpy() - two[0].numpy()) / np.array([15.0, 10, 16, 11, 9, 11, 10, 18])
    assert abs(resid.mean()) < 0.1 and abs(resid.std() - 1) < 0.05
    with pytest.raises(ValueError, match="cluster: calculate runs on a cluster over posterior"):
        tb.calculate(theta, values={}, cluster=InProcess())
