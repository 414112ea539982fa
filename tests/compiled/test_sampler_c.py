"""The samplers in C against the Python sampler they port: the same random streams, the same
transitions step for step (and the plain reference NUTS), whole runs with the same draws and
adaptation, interrupts, and density failures as divergences."""

from __future__ import annotations

import math
import os
import signal
import threading
import warnings

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.compiled.build import compile_module, compiler_available
from tensorbridge.runtime.errors import SamplingInterrupted
from tensorbridge.runtime.interrupts import register_safe_point, unregister_safe_point
from tensorbridge.runtime.ppl.chain_rng import PURPOSE_STEP_SEARCH, chain_rng
from tensorbridge.runtime.ppl.chains import hmc, nuts, run_chains
from tensorbridge.runtime.ppl.hamiltonian import PhasePoint
from tensorbridge.runtime.ppl.hmc import hmc_transition as py_hmc
from tensorbridge.runtime.ppl.nuts import nuts_transition as py_nuts
from tensorbridge.runtime.random import philox4x32

pytestmark = pytest.mark.skipif(compiler_available() is not None,
                                reason=f"no C here: {compiler_available()}")

if compiler_available() is None:
    from tensorbridge.runtime.compiled import sampler as cs
    from tensorbridge.runtime.ppl.compiled_chains import run_chains_compiled


# ------------------------------------------------------------------------------ targets
def _gaussian(dim: int, seed: int):
    a = np.random.default_rng(seed).normal(size=(dim, dim))
    prec = a @ a.T / dim + 0.3 * np.eye(dim)

    def logp_grad(q):
        g = -prec @ q
        return 0.5 * float(q @ g), g

    return logp_grad


def _funnel(q):  # Neal's funnel: log-scale v = q[0], x = q[1:]
    v, x = q[0], q[1:]
    with np.errstate(all="ignore"):
        lp = -0.5 * v * v / 9.0 - 0.5 * float(x @ x) * np.exp(-v) - 0.5 * len(x) * v
        g = np.concatenate([[-v / 9.0 + 0.5 * float(x @ x) * np.exp(-v) - 0.5 * len(x)],
                            -x * np.exp(-v)])
    return lp, g


def _walled(q):  # NaN beyond a radius for Python; the C density fails (returns 1) there
    r = float(q @ q)
    if r > 4.0:
        return math.nan, np.full_like(q, math.nan)
    return -0.5 * r, -q


def _walled_c(q):
    return None if float(q @ q) > 4.0 else _walled(q)


def _shell(q):  # NaN only in a thin shell: trajectories cross it and come back out
    r = float(q @ q)
    if 1.0 < r < 1.2:
        return math.nan, np.full_like(q, math.nan)
    return -0.5 * r, -q


def _shell_c(q):
    return None if 1.0 < float(q @ q) < 1.2 else _shell(q)


def _batch(logp_grad):
    def target(q):
        out = [logp_grad(row) for row in q]
        return np.array([o[0] for o in out]), np.array([o[1] for o in out])

    return target


# ------------------------------------------------------------------------------ streams
def test_philox_known_answer_and_random_blocks() -> None:
    mod = cs.sampler_module()
    ffi, lib = mod.ffi, mod.lib
    out = ffi.new("uint32_t[4]")
    lib.tb_philox4x32([0, 0, 0, 0], [0, 0], out)  # Random123's known answer
    assert list(out) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    rng = np.random.default_rng(0)
    for _ in range(200):
        ctr = [int(v) for v in rng.integers(0, 2**32, size=4)]
        key = [int(v) for v in rng.integers(0, 2**32, size=2)]
        lib.tb_philox4x32(ctr, key, out)
        assert tuple(out) == philox4x32(tuple(ctr), tuple(key))


@pytest.mark.parametrize("seed", [0, 7, 2**40 + 3])
def test_streams_match_chain_rng(seed) -> None:
    ids = [0, 1, 5, 2**33 + 1]
    streams = chain_rng(seed, len(ids), ids)
    for iteration, purpose in ((0, 0), (1, 0), (999, 0), (3, PURPOSE_STEP_SEARCH), (2**32 - 1, 2)):
        streams.restart(iteration, purpose)
        u = streams.random((131, len(ids)))  # odd: a chunk boundary falls mid-block
        streams.restart(iteration, purpose)
        z = streams.standard_normal((len(ids), 7))  # odd: one uniform of the pair is unused
        z2 = streams.standard_normal((len(ids), 4))  # the stream goes on after it
        for c in range(len(ids)):
            key = streams.keys[c]
            assert np.array_equal(cs.stream_uniforms(key, iteration, purpose, 131), u[:, c])
            both = cs.stream_normals(key, iteration, purpose, 12)
            assert np.array_equal(both[:7], z[c])  # bit for bit: the same libm
            assert np.array_equal(both[8:12], z2[c])


# -------------------------------------------------------------------------- transitions
def _compare_nuts(logp_grad, logp_grad_c, q0, inv, eps, iteration, max_depth=10,
                  max_delta_h=1000.0, seed=5, pairwise_accept=False):
    b, n = q0.shape
    target = _batch(logp_grad)
    dens = cs.python_density(logp_grad_c, n)
    streams = chain_rng(seed, b)
    streams.restart(iteration)
    lp, g = target(q0)
    with np.errstate(all="ignore"):
        z, st = py_nuts(PhasePoint(q0, np.zeros_like(q0), lp, g), eps, inv, target, streams,
                        max_depth=max_depth, max_delta_h=max_delta_h)
    out = []
    for c in range(b):
        r = cs.nuts_transition(q0[c], lp[c], g[c], eps[c], inv[c], dens, streams.keys[c],
                               iteration, max_depth=max_depth, max_delta_h=max_delta_h,
                               pairwise_accept=pairwise_accept)
        assert (r.tree_depth, r.n_leapfrog, r.divergent) == (
            st.tree_depth[c], st.n_leapfrog[c], st.divergent[c]), (iteration, c)
        assert np.array_equal(r.q, z.q[c]) and r.logp == z.logp[c]
        assert np.array_equal(r.grad, z.grad[c])
        assert r.energy == st.energy[c]
        # NumPy sums the accept statistic in order over a batch, pairwise for one chain
        assert r.accept_stat == st.accept_stat[c]
        out.append(r)
    return out


def test_nuts_matches_python_on_correlated_gaussian() -> None:
    lg = _gaussian(5, 0)
    rng = np.random.default_rng(1)
    inv = np.abs(rng.normal(size=(4, 5))) * 0.3 + 0.05
    depths = set()
    for it in range(30):
        q0 = np.random.default_rng(100 + it).normal(size=(4, 5))
        out = _compare_nuts(lg, lg, q0, inv, np.array([0.05, 0.1, 0.3, 0.2]), it, max_depth=6)
        depths |= {r.tree_depth for r in out}
    assert max(depths) == 6 and len(depths) >= 3  # deep trees and the depth cap


def test_nuts_matches_python_on_a_large_state() -> None:
    # 300 coordinates: NumPy's pairwise sums of the energies and U-turn products, reproduced
    lg = _gaussian(300, 2)
    q0 = np.random.default_rng(3).normal(size=(2, 300)) * 0.3
    for it in range(4):
        _compare_nuts(lg, lg, q0, np.ones((2, 300)), np.array([0.05, 0.1]), it, max_depth=5)


@pytest.mark.parametrize("max_depth", [1, 3])
def test_nuts_small_max_depth(max_depth) -> None:
    lg = _gaussian(3, 4)
    for it in range(20):
        q0 = np.random.default_rng(it).normal(size=(2, 3))
        _compare_nuts(lg, lg, q0, np.ones((2, 3)), np.array([0.1, 0.3]), it,
                      max_depth=max_depth)


def test_nuts_funnel_divergences_match() -> None:
    divergent = []
    for it in range(30):
        q0 = np.random.default_rng(10_000 + it).normal(size=(3, 4)) * np.array([2.0, 1, 1, 1])
        out = _compare_nuts(_funnel, _funnel, q0, np.ones((3, 4)), np.array([0.5, 1.0, 1.5]),
                            it, max_delta_h=50.0)
        divergent += [r.divergent for r in out]
    assert any(divergent) and not all(divergent)


def test_failing_density_is_a_divergence_like_nan() -> None:
    # C: the density returns nonzero; Python: NaN. Both an infinitely bad point
    divergent = []
    for it in range(30):
        q0 = np.random.default_rng(10_000 + it).normal(size=(2, 2)) * 0.5
        out = _compare_nuts(_walled, _walled_c, q0, np.ones((2, 2)), np.array([0.4, 0.8]), it)
        divergent += [r.divergent for r in out]
    assert any(divergent)


def test_nuts_matches_plain_reference() -> None:
    from tests.ppl.test_nuts_reference import _reference

    lg, n, max_depth = _gaussian(3, 6), 3, 8
    dens = cs.python_density(lg, n)
    key = chain_rng(9, 1).keys[0]
    inv = np.array([0.5, 1.0, 2.0])
    for it in range(40):
        q0 = np.random.default_rng(it).normal(size=n)
        # the batched sampler on a batch of one: the same, accept statistic included
        one = _compare_nuts(lg, lg, q0[None], inv[None], np.array([0.6]), it, max_depth, seed=9,
                            pairwise_accept=True)[0]
        u = cs.stream_uniforms(key, it, 0, 2 * ((n + 1) // 2) + 2**max_depth + max_depth)
        p0 = cs.stream_normals(key, it, 0, n) / np.sqrt(inv)
        blocks, pos = [], 2 * ((n + 1) // 2)
        for d in range(max_depth):
            blocks.append(u[pos:pos + 2**d + 1])
            pos += 2**d + 1
        sample, depth, n_lf, div, accept, h0 = _reference(q0, p0, lg, 0.6, inv, blocks,
                                                          max_depth, 1000.0)
        lp, g = lg(q0)
        r = cs.nuts_transition(q0, lp, g, 0.6, inv, dens, key, it, max_depth=max_depth,
                               pairwise_accept=True)
        assert (r.tree_depth, r.n_leapfrog, r.divergent) == (depth, n_lf, div)
        np.testing.assert_allclose(r.q, sample.q, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(r.accept_stat, accept, rtol=1e-10)
        np.testing.assert_allclose(r.energy, h0, rtol=1e-12)
        assert r.accept_stat == one.accept_stat and np.array_equal(r.q, one.q)


@pytest.mark.parametrize("jitter", [True, False])
def test_hmc_matches_python(jitter) -> None:
    failed = 0
    for logp_grad, logp_grad_c, scale in ((_gaussian(4, 1), None, 1.0), (_funnel, None, 2.0),
                                          (_walled, _walled_c, 1.0), (_shell, _shell_c, 0.5)):
        target = _batch(logp_grad)
        dens = cs.python_density(logp_grad_c or logp_grad, 4)
        eps = np.array([0.1, 0.4, 0.9]) * scale
        for it in range(15):
            q0 = np.random.default_rng(it).normal(size=(3, 4)) * 0.5
            streams = chain_rng(3, 3)
            streams.restart(it)
            lp, g = target(q0)
            with np.errstate(all="ignore"):
                z, st = py_hmc(PhasePoint(q0, np.zeros_like(q0), lp, g), eps, np.ones((3, 4)),
                               target, streams, n_leapfrog=7, jitter=jitter)
            for c in range(3):
                r = cs.hmc_transition(q0[c], lp[c], g[c], eps[c], np.ones(4), dens,
                                      streams.keys[c], it, n_leapfrog=7, jitter=jitter)
                assert r.divergent == st.divergent[c] and r.n_leapfrog == 7
                assert np.array_equal(r.q, z.q[c])
                np.testing.assert_equal((r.logp, r.energy), (z.logp[c], st.energy[c]))
                np.testing.assert_equal(r.accept_stat, st.accept_stat[c])
                failed += logp_grad is _shell and r.divergent
    assert failed >= 3  # a failure ends the trajectory: rejected, acceptance 0, as NaN does


# ---------------------------------------------------------------------------- whole runs
def _regression_model():
    """A Bayesian linear regression (a Gaussian posterior) whose NumPy target is computed row
    by row exactly as the Python density is, so both samplers see the same numbers."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 3))
    yv = x @ np.array([0.5, -1.0, 2.0]) + 0.5 * rng.normal(size=30)
    beta = tb.normal(0.0, 2.0, dim=3)
    tb.distribution(tb.as_data(yv), tb.normal(tb.as_data(x) @ beta, 0.5))
    m = tb.model(beta)

    def logp_grad(q):
        r = yv - x @ q
        return -2.0 * float(r @ r) - 0.125 * float(q @ q), 4.0 * (x.T @ r) - 0.25 * q

    m.compiled_target = lambda batch: _batch(logp_grad)
    prec = x.T @ x / 0.25 + np.eye(3) / 4.0
    cov = np.linalg.inv(prec)
    return m, logp_grad, cov @ (x.T @ yv / 0.25), cov, beta


def _assert_same_draws(a, b) -> None:
    assert np.array_equal(a.free, b.free)
    assert np.array_equal(a["beta"], b["beta"])
    assert a.stats.keys() == b.stats.keys()
    for k in a.stats:
        assert a.stats[k].dtype == b.stats[k].dtype and a.stats[k].shape == b.stats[k].shape
        np.testing.assert_allclose(a.stats[k], b.stats[k], rtol=1e-12)
    assert np.array_equal(a.warmup["step_size"], b.warmup["step_size"])
    assert np.array_equal(a.warmup["inv_metric"], b.warmup["inv_metric"])
    assert a.warmup["divergences"] == b.warmup["divergences"]
    assert a.interrupted == b.interrupted


@pytest.mark.parametrize(("sampler", "n_samples", "chains"),
                         [(nuts(), 150, 3), (hmc(n_leapfrog=8), 150, 3),
                          (nuts(step_size=0.1), 40, 3), (nuts(), 100, 1)],
                         ids=["nuts", "hmc", "nuts-fixed-step", "nuts-one-chain"])
def test_whole_run_equals_run_chains(sampler, n_samples, chains) -> None:
    m, lg, *_ = _regression_model()
    dens = cs.python_density(lg, 3)
    args = (n_samples, 120, chains, sampler, None, 11, 2, False, None, 50, None)
    a = run_chains(m, *args)
    b = run_chains_compiled(m, dens, *args)
    # the same floating-point operations in the same order: equal, not only close (one
    # chain: NumPy sums the accept statistic pairwise, and so does the C code then)
    _assert_same_draws(a, b)
    assert b.free.shape == (chains, n_samples, 3) and not b.interrupted
    assert b.node_names == a.node_names


def test_progress_callback_matches_run_chains() -> None:
    m, lg, *_ = _regression_model()
    seen: dict[str, list] = {"py": [], "c": []}
    for which in seen:
        def cb(info, which=which):
            seen[which].append({k: v for k, v in info.items() if k != "elapsed"})

        args = (40, 60, 2, nuts(), None, 4, 3, False, cb, 7, None)
        if which == "py":
            run_chains(m, *args)
        else:
            run_chains_compiled(m, cs.python_density(lg, 3), *args)
    assert seen["py"] == seen["c"] and len(seen["c"]) == 180 // 7 + 1


_MVN_C = """
/* a Gaussian with the precision and mean in ctx: [prec (3 x 3) | mean (3)]; fails (returns 1)
   outside |q_0| < wall so that a run meets failures too */
int tb_test_mvn(void *ctx, const double *q, double *logp, double *grad)
{
    const double *c = (const double *)ctx, *mean = c + 9, wall = c[12];
    double d[3], lp = 0.0;
    if (q[0] > wall || q[0] < -wall)
        return 1;
    for (int i = 0; i < 3; i++)
        d[i] = q[i] - mean[i];
    for (int i = 0; i < 3; i++) {
        double s = 0.0;
        for (int j = 0; j < 3; j++)
            s += c[3 * i + j] * d[j];
        grad[i] = -s;
        lp -= 0.5 * d[i] * s;
    }
    *logp = lp;
    return 0;
}
"""


class _CDensity:
    """A density compiled in C, like the lowering's: no Python (nor the GIL) per call."""

    def __init__(self, prec: np.ndarray, mean: np.ndarray, wall: float) -> None:
        mod = compile_module("test_mvn", "int tb_test_mvn(void *, const double *, double *, "
                             "double *);", _MVN_C)
        self.n = 3
        self.fn_address = int(mod.ffi.cast("uintptr_t", mod.ffi.addressof(mod.lib,
                                                                          "tb_test_mvn")))
        self._consts = np.concatenate([prec.ravel(), mean, [wall]])
        self._ffi = mod.ffi

    def new_context(self):
        buf = self._ffi.from_buffer("double[]", self._consts)
        return int(self._ffi.cast("uintptr_t", buf)), buf


def test_c_density_posterior_mean_and_sd() -> None:
    m, _, mean, cov, _ = _regression_model()
    dens = _CDensity(np.linalg.inv(cov), mean, 1e300)
    d = run_chains_compiled(m, dens, 1000, 500, 4, None, None, 1, 1, False, None, 50, None)
    draws = d["beta"].reshape(-1, 3)
    s = d.summary()
    for j in range(3):
        ess = s[f"beta[{j}]"]["ess_bulk"]
        se = math.sqrt(cov[j, j] / ess)
        assert abs(draws[:, j].mean() - mean[j]) < 5 * se
        assert abs(draws[:, j].var() - cov[j, j]) < 5 * cov[j, j] * math.sqrt(2.0 / ess)
        assert s[f"beta[{j}]"]["rhat"] < 1.02
    assert d.divergences == 0
    # the adapted metric is the posterior's variance, roughly
    np.testing.assert_allclose(d.warmup["inv_metric"], np.tile(np.diag(cov), (4, 1)), rtol=0.5)
    # chains in threads: the same run again gives the same draws
    again = run_chains_compiled(m, dens, 1000, 500, 4, None, None, 1, 1, False, None, 50, None)
    assert np.array_equal(again.free, d.free)


def test_density_failures_are_divergences_not_errors() -> None:
    m, _, mean, cov, beta = _regression_model()
    wall = mean[0] + 1.5 * math.sqrt(cov[0, 0])  # the posterior's mass crosses it
    dens = _CDensity(np.linalg.inv(cov), mean, wall)
    m.compiled_target = lambda batch: _batch(lambda q: (-0.5 * float(q @ q), -q))
    start = {beta: np.array([mean[0], 0.0, 0.0])}
    for sampler in (nuts(), hmc(n_leapfrog=5)):
        d = run_chains_compiled(m, dens, 200, 150, 2, sampler, start, 3, 1, False, None, 50,
                                None)
        assert d.free.shape == (2, 200, 3) and not d.interrupted
        assert d.divergences > 0
        assert np.all(d.free[..., 0] <= wall)


def test_blocks_do_not_change_the_chain() -> None:
    lg = _gaussian(3, 8)
    key = chain_rng(1, 1).keys[0]
    runs = [cs.ChainRun(cs.python_density(lg, 3), np.ones(3), key, warmup=60, n_samples=30,
                        thin=2) for _ in range(2)]
    assert runs[0].run(10**6) == 120 and runs[0].run(5) == 0
    while runs[1].run(7):
        pass
    assert runs[1].iteration == runs[1].total == 120 and runs[1].kept == 30
    assert np.array_equal(runs[0].draws, runs[1].draws)
    assert runs[0].step_size == runs[1].step_size


# --------------------------------------------------------------------------- interrupts
@pytest.fixture
def doubling_blocks(monkeypatch):
    """Blocks of 1, 2, 4, ... iterations whatever the machine's speed."""
    from tensorbridge.runtime.ppl import compiled_chains

    monkeypatch.setattr(compiled_chains, "_BLOCK_SECONDS", 1e9)


def test_should_stop_keeps_the_draws_taken_so_far(doubling_blocks) -> None:
    m, lg, *_ = _regression_model()
    full = run_chains_compiled(m, cs.python_density(lg, 3), 60, 30, 2, None, None, 5, 1, False,
                               None, 50, None)
    calls = 0

    def stop() -> bool:
        nonlocal calls
        calls += 1
        return calls > 6

    with pytest.warns(SamplingInterrupted, match="draws taken so far"):
        d = run_chains_compiled(m, cs.python_density(lg, 3), 60, 30, 2, None, None, 5, 1, False,
                                None, 50, stop)
    assert d.interrupted and calls == 7
    k = 1 + 2 + 4 + 8 + 16 + 32 - 30  # six blocks, less the warmup
    assert np.array_equal(d.free, full.free[:, :k])
    assert d.stats["lp"].shape == (2, k) and d["beta"].shape == (2, k, 3)


def test_host_interrupt_at_a_safe_point_keeps_draws(doubling_blocks) -> None:
    m, lg, *_ = _regression_model()
    calls = 0

    def hook() -> None:
        nonlocal calls
        calls += 1
        if calls > 3:
            raise KeyboardInterrupt  # what the R and JS doors' hooks raise

    register_safe_point(hook)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            d = run_chains_compiled(m, cs.python_density(lg, 3), 50, 0, 2, None, None, 5, 1,
                                    False, None, 50, None)
    finally:
        unregister_safe_point(hook)
    assert d.interrupted and d.free.shape == (2, 1 + 2 + 4, 3)  # blocks of 1, 2, 4
    assert any(issubclass(w.category, SamplingInterrupted) for w in caught)


def test_ctrl_c_keeps_draws() -> None:
    # a real SIGINT while the chains run in C threads: the block ends, the draws stay
    m, _, mean, cov, _ = _regression_model()
    dens = _CDensity(np.linalg.inv(cov), mean, 1e300)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))

    def start_once(info: dict) -> None:  # only once sampling runs: setup can be slow under load
        if not timer.is_alive() and not timer.finished.is_set():
            timer.start()

    # Python's own handler (an embedded R, say, may have replaced it in this process)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.warns(SamplingInterrupted, match="draws taken so far"):
            d = run_chains_compiled(m, dens, 10**6, 100, 2, None, None, 1, 1, False,
                                    start_once, 50, None)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert d.interrupted and 0 < d.free.shape[1] < 10**6
    assert d.stats["lp"].shape == d.free.shape[:2]
    assert np.all(np.isfinite(d.free)) and np.all(d.stats["n_leapfrog"] > 0)


def test_python_density_errors_are_raised() -> None:
    m, *_ = _regression_model()

    def broken(q):
        raise ZeroDivisionError("in the density")

    with pytest.raises(ZeroDivisionError, match="in the density"):
        run_chains_compiled(m, cs.python_density(broken, 3), 10, 10, 1, None, None, 1, 1, False,
                            None, 50, None)


# ------------------------------------------------------------------ with the C lowering
def test_lowered_model_density_tracks_run_chains() -> None:
    from tensorbridge.runtime.ppl.compiled_density import compile_density

    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 3))
    yv = x @ np.array([0.5, -1.0, 2.0]) + 0.5 * rng.normal(size=30)
    beta = tb.normal(0.0, 2.0, dim=3)
    sigma = tb.lognormal(0.0, 1.0)
    tb.distribution(tb.as_data(yv), tb.normal(tb.as_data(x) @ beta, sigma))
    m = tb.model(beta, sigma)
    dens = compile_density(m)
    # the lowered density rounds a little differently from NumPy's batched program, so the
    # chains agree to rounding over tens of iterations, not bit for bit
    args = (60, 0, 2, nuts(step_size=0.1), None, 5, 1, False, None, 50, None)
    with np.errstate(all="ignore"):
        a = run_chains(m, *args)
    b = run_chains_compiled(m, dens, *args)
    np.testing.assert_allclose(b.free[:, :30], a.free[:, :30], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(b["sigma"][:, :30], a["sigma"][:, :30], rtol=1e-9)
    assert np.array_equal(b.stats["tree_depth"][:, :30], a.stats["tree_depth"][:, :30])
