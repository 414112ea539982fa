"""Seeds mean what they say: initial values the user did not give are drawn from the user's
seed (for every chain and for ``opt``), and warnings raised while sampling reach the user, also
from worker processes and through the R front door."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.ppl.chain_rng import chain_rng
from tensorbridge.runtime.ppl.chains import _initial_free


def _model():
    a = tb.normal(0.0, 1.0)
    b = tb.normal(0.0, 1.0, dim=3)
    tb.distribution(tb.as_data([0.3, -0.2, 0.5]), tb.normal(a + b, 1.0))
    return a, b, tb.model(a, b)


def _starts(seed: int, initial_values) -> np.ndarray:
    a, _b, m = _model()
    values = initial_values(a) if callable(initial_values) else initial_values
    return _initial_free(m, 3, values, chain_rng(seed, 3), m.compiled_target(3))


def test_unset_initial_values_follow_the_seed_in_mcmc() -> None:
    partial = lambda a: {a: 0.5}  # noqa: E731 - b is left unset
    one, again, other = _starts(1, partial), _starts(1, partial), _starts(2, partial)
    np.testing.assert_array_equal(one, again)
    assert np.all(one[:, 0] == 0.5)  # the given value is kept, in every chain
    assert not np.allclose(one[:, 1:], other[:, 1:])  # b comes from the seed...
    assert len({tuple(row) for row in one[:, 1:].tolist()}) == 3  # ...and differs per chain
    # the same streams as without any initial values: a chain's start is a function of
    # (seed, chain) only
    np.testing.assert_array_equal(one[:, 1:], _starts(1, None)[:, 1:])


def test_unset_initial_values_follow_the_seed_in_opt() -> None:
    def run(seed: int) -> np.ndarray:
        a, _b, m = _model()
        res = tb.opt(m, optimiser="adam", initial_values={a: 0.5}, seed=seed, max_iterations=1)
        return np.asarray(res.par[m.variable_names()[1]])

    np.testing.assert_array_equal(run(3), run(3))
    assert not np.allclose(run(3), run(4))


@pytest.fixture
def warning_in_log_density(monkeypatch: pytest.MonkeyPatch):
    """A model whose log density warns once per evaluation (as staging does when it falls
    back to eager)."""
    model_mod = importlib.import_module("tensorbridge.runtime.graph.model_compiler")
    original = model_mod.Model.compiled_target

    def compiled_target(self, batch):
        target = original(self, batch)

        def warned(q):
            warnings.warn("staging fell back to eager (test)", RuntimeWarning, stacklevel=2)
            return target(q)

        return warned

    monkeypatch.setattr(model_mod.Model, "compiled_target", compiled_target)


def test_warnings_reach_the_user_from_r_mcmc(warning_in_log_density) -> None:
    from tensorbridge.bridge.r import ppl as r_ppl

    _, _, m = _model()
    with pytest.warns(RuntimeWarning, match="staging fell back to eager"):
        r_ppl.sample(m, tb.nuts(), n_samples=5, warmup=5, chains=1, thin=1, seed=1,
                     initial_values=None, callback=None, callback_every=1)


def test_worker_processes_relay_their_warnings(warning_in_log_density) -> None:
    """A worker's warnings travel to the parent (here the worker body runs in-process, so the
    patched model is the one it samples); the interrupt warning stays the parent's."""
    import queue
    import threading

    from tensorbridge.runtime.ppl import parallel

    _, _, m = _model()
    out: queue.Queue = queue.Queue()
    settings = {"n_samples": 3, "warmup": 3, "sampler": tb.nuts(), "seed": 1, "thin": 1,
                "report_every": 10, "backend": "numpy"}
    parallel.pool_worker(0, parallel.dumps_model(m), [0, 1], settings, threading.Event(), out)
    messages = []
    while not out.empty():
        messages.append(out.get())
    kinds = [k for k, _, _ in messages]
    assert kinds[-1] == "done", messages[-1]
    relayed = [p for k, _, p in messages if k == "warnings"]
    assert len(relayed) == 1
    assert set(relayed[0]) == {(RuntimeWarning, "staging fell back to eager (test)")}
    with pytest.warns(RuntimeWarning, match="staging fell back"):
        parallel.rewarn(relayed[0], set())
