"""Draws.to_arviz(): groups, dims, coords, sampler statistics; ArviZ's diagnostics agree with
ours (the same algorithms of Vehtari et al. 2021)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.ppl import ess_bulk, ess_tail, mcmc, rhat

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)  # ArviZ announces its 1.0 refactor
    az = pytest.importorskip("arviz")


@pytest.fixture(scope="module")
def draws():
    y = tb.as_data([28.0, 8.0, -3.0, 7.0])
    mu = tb.normal(0.0, 5.0)
    tau = tb.lognormal(0.0, 1.0)
    eta = tb.normal(0.0, 1.0, dim=4)
    tb.distribution(y, tb.normal(mu + tau * eta, 10.0))
    m = tb.model(mu, tau, eta)
    return mcmc(m, n_samples=300, warmup=300, chains=3, seed=5, progress=False)


def test_posterior_group_dims_and_coords(draws) -> None:
    idata = draws.to_arviz()
    assert {"posterior", "sample_stats"} <= set(idata.groups())
    post = idata.posterior
    assert set(post.data_vars) == {"mu", "tau", "eta"}
    assert post["mu"].dims == ("chain", "draw")
    assert post["eta"].dims == ("chain", "draw", "eta_dim_0")
    assert list(post.chain.values) == [0, 1, 2]
    assert list(post.draw.values) == list(range(300))
    np.testing.assert_array_equal(post["eta"].values, draws["eta"])
    assert idata.attrs["inference_library"] == "tensorbridge"


def test_user_dims_and_coords(draws) -> None:
    idata = draws.to_arviz(coords={"school": ["a", "b", "c", "d"]}, dims={"eta": ["school"]})
    assert idata.posterior["eta"].dims == ("chain", "draw", "school")
    assert list(idata.posterior.school.values) == ["a", "b", "c", "d"]


def test_sample_stats(draws) -> None:
    ss = draws.to_arviz().sample_stats
    want = {"acceptance_rate", "n_steps", "tree_depth", "diverging", "energy", "lp",
            "step_size"}
    assert want <= set(ss.data_vars)
    for k in want:
        assert ss[k].dims == ("chain", "draw"), k
    assert ss["diverging"].dtype == bool
    assert int(ss["diverging"].sum()) == draws.divergences
    np.testing.assert_array_equal(ss["n_steps"].values, draws.stats["n_leapfrog"])
    np.testing.assert_array_equal(ss["tree_depth"].values, draws.stats["tree_depth"])
    assert np.all((ss["acceptance_rate"].values >= 0) & (ss["acceptance_rate"].values <= 1))
    # tree_depth counts the accepted doublings; the leapfrogs of a final, rejected one count
    assert np.all(ss["n_steps"].values < 2 ** (ss["tree_depth"].values + 1))
    step = np.asarray(draws.warmup["step_size"])
    np.testing.assert_array_equal(ss["step_size"].values[:, 0], step)
    assert np.all(ss["step_size"].values == ss["step_size"].values[:, :1])
    # energy is the Hamiltonian where a transition starts, at the previous draw's position:
    # -lp + kinetic energy >= -lp
    assert np.all(ss["energy"].values[:, 1:] >= -ss["lp"].values[:, :-1] - 1e-9)


def test_arviz_bfmi_runs_on_our_energy(draws) -> None:
    bfmi = az.bfmi(draws.to_arviz())
    assert bfmi.shape == (3,) and np.all(bfmi > 0.3)


def test_arviz_diagnostics_agree_with_ours(draws) -> None:
    idata = draws.to_arviz()
    ess_b = az.ess(idata, method="bulk")
    ess_t = az.ess(idata, method="tail")
    r = az.rhat(idata)
    for label, x in draws.scalar_columns():
        name, _, idx = label.partition("[")
        sel = {} if not idx else {"eta_dim_0": int(idx.rstrip("]"))}
        np.testing.assert_allclose(ess_bulk(x), float(ess_b[name].sel(sel)), rtol=1e-6,
                                   err_msg=label)
        np.testing.assert_allclose(ess_tail(x), float(ess_t[name].sel(sel)), rtol=0.02,
                                   err_msg=label)
        np.testing.assert_allclose(rhat(x), float(r[name].sel(sel)), rtol=1e-9,
                                   err_msg=label)


def test_ess_matches_arviz_on_autocorrelated_chains() -> None:
    rng = np.random.default_rng(0)
    for phi in (-0.6, 0.0, 0.5, 0.9):
        e = rng.normal(size=(4, 500))
        x = np.zeros_like(e)
        for t in range(500):
            x[:, t] = (phi * x[:, t - 1] if t else 0.0) + e[:, t]
        np.testing.assert_allclose(ess_bulk(x), float(az.ess(x, method="bulk")), rtol=1e-6)
        np.testing.assert_allclose(ess_tail(x), float(az.ess(x, method="tail")), rtol=0.02)
        np.testing.assert_allclose(rhat(x), float(az.rhat(x)), rtol=1e-9)
