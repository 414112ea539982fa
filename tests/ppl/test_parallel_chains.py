"""mcmc(n_cores=k): chains in worker processes, merged; per-chain random streams make the draws
independent of the split; stopping keeps the draws so far."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.ppl import mcmc as _mcmc
from tensorbridge.runtime.ppl.chain_rng import ChainStreams
from tensorbridge.runtime.ppl.chains import hmc, nuts, run_chains
from tensorbridge.runtime.ppl.parallel import dumps_model, loads_model, split_chains


def mcmc(*args, **kwargs):
    # worker processes belong to the NumPy sampler (the compiled one runs chains on threads)
    return _mcmc(*args, backend="numpy", **kwargs)


def _hier():
    y = tb.as_data([28.0, 8.0, -3.0, 7.0])
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=4)
    tb.distribution(y, tb.normal(mu + tau * eta, tb.as_data([15.0, 10.0, 16.0, 11.0])))
    return tb.model(mu, tau, eta), (mu, tau, eta)


def _same(a, b) -> None:
    assert a.names == b.names
    for k in a.names:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k], err_msg=k)


def test_split_chains() -> None:
    assert split_chains(4, 2) == [[0, 1], [2, 3]]
    assert split_chains(5, 2) == [[0, 1, 2], [3, 4]]
    assert split_chains(2, 8) == [[0], [1]]


def test_chain_streams_do_not_depend_on_the_batch() -> None:
    full, part = ChainStreams(5, range(4)), ChainStreams(5, [1, 3])
    for it in range(3):
        full.restart(it)
        part.restart(it)
        np.testing.assert_array_equal(full.standard_normal((4, 3))[[1, 3]],
                                      part.standard_normal((2, 3)))
        for d in range(4):  # NUTS: (depth, chain) uniforms
            np.testing.assert_array_equal(full.random((2 ** d + 1, 4))[:, [1, 3]],
                                          part.random((2 ** d + 1, 2)))
    with pytest.raises(ValueError, match="chains on its first axis"):
        full.standard_normal((3, 4))


@pytest.mark.parametrize("sampler", [nuts(), hmc(n_leapfrog=5)], ids=["nuts", "hmc"])
def test_a_chain_does_not_depend_on_its_batch(sampler) -> None:
    # the property n_cores relies on, checked in one process: chains 2 and 3 run alone draw
    # what they draw next to chains 0 and 1
    m, _ = _hier()
    args = (m, 60, 60)
    full = run_chains(*args, 4, sampler, None, 9, 1, False, None, 50, None)
    part = run_chains(*args, 2, sampler, None, 9, 1, False, None, 50, None, chain_ids=[2, 3])
    for k in full.names:
        np.testing.assert_array_equal(full[k][2:], part[k], err_msg=k)


def test_same_seed_same_draws_whatever_n_cores() -> None:
    m, _ = _hier()
    kw = {"n_samples": 80, "warmup": 80, "seed": 21, "progress": False}
    one = mcmc(m, chains=4, **kw)
    two = mcmc(m, chains=4, n_cores=2, **kw)
    _same(one, two)
    np.testing.assert_array_equal(one.warmup["step_size"], two.warmup["step_size"])
    assert two.chains == 4 and two.n_draws == 80 and not two.interrupted
    # uneven groups (3 + 2 chains); groups of one chain can differ in the last bits (NumPy
    # reduces a batch of one along another path), which chaos then amplifies
    _same(mcmc(m, chains=5, **kw), mcmc(m, chains=5, n_cores=2, **kw))


def test_parallel_draws_are_a_valid_posterior() -> None:
    yv = np.random.default_rng(1).normal(1.5, 1.0, size=20)
    mu = tb.normal(0.0, 10.0)
    tb.distribution(tb.as_data(yv), tb.normal(mu, 1.0))
    m = tb.model(mu)
    d = mcmc(m, n_samples=500, warmup=300, chains=4, seed=2, progress=False, n_cores=2)
    post_var = 1.0 / (1.0 / 100.0 + 20)
    s = d.summary()
    assert s["mu"]["rhat"] < 1.02
    assert abs(d["mu"].mean() - post_var * yv.sum()) < 5 * np.sqrt(post_var / s["mu"]["ess_bulk"])


def test_initial_values_per_chain_reach_their_chain() -> None:
    m, (mu, tau, _) = _hier()
    inits = [{mu: float(c), tau: 1.0 + c} for c in range(4)]
    kw = {"n_samples": 20, "warmup": 20, "chains": 4, "seed": 4, "progress": False,
          "initial_values": inits}
    _same(mcmc(m, **kw), mcmc(m, n_cores=2, **kw))


def test_model_round_trips_through_pickle() -> None:
    m, (mu, tau, _) = _hier()
    m2, inits = loads_model(dumps_model(m, {mu: 1.0, tau: 2.0}))
    assert m2.variable_names() == m.variable_names() and m2.n_free == m.n_free
    assert sorted(v for v in inits.values()) == [1.0, 2.0]
    q = np.random.default_rng(0).normal(size=(3, m.n_free))
    np.testing.assert_allclose(m2.log_density(q).numpy(), m.log_density(q).numpy())


def test_should_stop_stops_workers_and_keeps_draws() -> None:
    m, _ = _hier()
    seen = {"it": 0}

    def cb(info: dict) -> None:
        seen["it"] = info["iteration"]

    with pytest.warns(RuntimeWarning, match="interrupted"):
        d = mcmc(m, n_samples=100_000, warmup=20, chains=4, seed=0, progress=False,
                 n_cores=2, callback=cb, callback_every=10, should_stop=lambda: seen["it"] >= 60)
    assert d.interrupted and d.chains == 4
    assert 0 < d.n_draws < 100_000
    assert all(v.shape[1] == d.n_draws for v in d.values.values())


def test_host_interrupt_stops_workers() -> None:
    from tensorbridge.runtime.interrupts import register_safe_point, unregister_safe_point

    m, _ = _hier()
    calls = {"n": 0}

    class HostInterrupt(BaseException):
        pass

    def hook() -> None:
        calls["n"] += 1
        if calls["n"] > 40:  # the parent polls every 50 ms: about 2 s in
            raise HostInterrupt

    register_safe_point(hook)
    try:
        with pytest.warns(RuntimeWarning, match="interrupted"):
            d = mcmc(m, n_samples=100_000, warmup=10, chains=2, seed=0, progress=False,
                     n_cores=2)
    finally:
        unregister_safe_point(hook)
    assert d.interrupted and d.n_draws < 100_000


def test_progress_callback_from_workers() -> None:
    m, _ = _hier()
    seen = []
    mcmc(m, n_samples=20, warmup=20, chains=2, seed=0, progress=False, n_cores=2,
         callback=seen.append, callback_every=10)
    assert [s["iteration"] for s in seen] == [10, 20, 30, 40]
    assert seen[0]["phase"] == "warmup" and seen[-1]["phase"] == "sampling"


def test_pool_sends_one_progress_message_per_task_when_nothing_listens(monkeypatch) -> None:
    from tensorbridge.runtime.ppl import executors

    m, _ = _hier()
    got = []
    real = executors._Tracker.report
    monkeypatch.setattr(executors._Tracker, "report",
                        lambda self, t, info: (got.append(t), real(self, t, info))[1])
    mcmc(m, n_samples=50, warmup=50, chains=2, seed=0, progress=False, n_cores=2)
    assert sorted(got) == [0, 1]  # each task's first report (it has started), no more
    got.clear()
    mcmc(m, n_samples=50, warmup=50, chains=2, seed=0, progress=False, n_cores=2,
         callback=lambda info: None, callback_every=10)
    assert len(got) > 2


def test_a_cached_model_repeats_the_warnings_its_preparation_gave(monkeypatch) -> None:
    """A Dask worker keeps prepared models: the second run of a model on it must still relay
    what preparing the model warned (the first task's caller heard it, the next one's too)."""
    import warnings

    from tensorbridge.runtime.ppl import parallel

    m, _ = _hier()
    blob = dumps_model(m)
    real = parallel.loads_model

    def loads_and_warns(b: bytes):
        warnings.warn("preparing this model was slow", UserWarning, stacklevel=2)
        return real(b)

    monkeypatch.setattr(parallel, "loads_model", loads_and_warns)
    settings = {"n_samples": 5, "warmup": 5, "sampler": nuts(), "seed": 0, "thin": 1,
                "backend": "numpy", "report_every": 10}
    before = parallel.prepared_cache_info()
    relays = [parallel.run_task(blob, [0], settings, None, None, cache=True)[1]
              for _ in range(2)]
    assert parallel.prepared_cache_info()["hits"] == before["hits"] + 1  # the second: cached
    for relay in relays:
        assert (UserWarning, "preparing this model was slow") in relay


def test_errors() -> None:
    m, (mu, tau, _) = _hier()
    with pytest.raises(ValueError, match="n_cores"):
        mcmc(m, n_cores=0, progress=False)
    with pytest.raises(RuntimeError, match="outside its support"):
        mcmc(m, n_samples=5, warmup=5, chains=2, n_cores=2, progress=False,
             initial_values={tau: -1.0})

    @tb.primitive
    def double(x):
        return x * 2.0

    double.defvjp(lambda g, ans, x: g * 2.0)
    tb.distribution(tb.as_data([1.0]), tb.normal(double(mu), 1.0))
    m2 = tb.model(mu)
    with pytest.raises(TypeError, match="cannot be sent to worker processes"):
        mcmc(m2, n_samples=5, warmup=5, chains=2, n_cores=2, progress=False)


def test_script_without_main_guard(tmp_path) -> None:
    """Workers must not re-run the user's script (multiprocessing re-imports __main__ unless
    told otherwise): a top-level mcmc(n_cores=2) prints its result exactly once."""
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(
        "import tensorbridge as tb\n"
        "mu = tb.normal(0.0, 1.0)\n"
        "tb.distribution(tb.as_data([0.5, 1.5]), tb.normal(mu, 1.0))\n"
        "d = tb.mcmc(tb.model(mu), n_samples=50, warmup=50, chains=2, n_cores=2, seed=1,\n"
        "            progress=False, backend='numpy')\n"
        "print('DRAWS', d['mu'].shape)\n"
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("DRAWS") == 1, proc.stdout
    assert "(2, 50)" in proc.stdout
