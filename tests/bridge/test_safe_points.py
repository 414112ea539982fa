"""A cancelled bridge job stops the runtime's long loops at their safe points."""

from __future__ import annotations

import pytest

from tensorbridge.bridge.dispatch import CancellationToken, Cancelled, check_cancelled
from tensorbridge.runtime import interrupts


def test_bridge_registers_its_cancellation_check() -> None:
    assert check_cancelled in interrupts._hooks


@pytest.mark.parametrize("backend", ["numpy", "auto"])
def test_cancelled_token_stops_mcmc_and_keeps_draws(backend: str) -> None:
    import tensorbridge as tb

    y = tb.as_data([0.5, 1.0, 1.5])
    mu = tb.normal(0.0, 1.0)
    tb.distribution(y, tb.normal(mu, 1.0))
    m = tb.model(mu)
    token = CancellationToken()
    seen = {"n": 0}

    def progress(info: dict) -> None:
        seen["n"] = info["iteration"]
        if info["iteration"] >= 30:
            token.cancel("user pressed Ctrl-C")

    with token.bind(), pytest.warns(RuntimeWarning, match="interrupted"):
        d = tb.mcmc(m, n_samples=100, warmup=20, chains=2, seed=0, progress=False,
                    callback=progress, callback_every=1, backend=backend)
    if backend == "numpy":  # a safe point every iteration
        assert d.interrupted and d.n_draws == 10
    else:  # the compiled sampler reaches a safe point between blocks of iterations
        assert d.interrupted and 10 <= d.n_draws < 100
    with token.bind(), pytest.raises(Cancelled):
        interrupts.safe_point()
