"""The progress sink registry: order, scoping, unregistering, failing sinks, and the events
``mcmc`` and ``fit`` emit through it."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import progress_events as pe


def _model():
    y = tb.as_data([0.5, 1.0, 1.5])
    mu = tb.normal(0.0, 1.0)
    tb.distribution(y, tb.normal(mu, 1.0))
    return tb.model(mu)


def _event(i: int = 1, total: int = 4) -> pe.McmcProgress:
    return pe.McmcProgress(i, total, "warmup", 0, 0, 0.0)


def test_order_process_then_scoped_then_own_and_unregister() -> None:
    calls: list[str] = []

    def first(e):
        calls.append("first")

    def second(e):
        calls.append("second")

    def scoped(e):
        calls.append("scoped")

    pe.register_sink(second)
    pe.register_sink(first)
    pe.register_sink(second)  # registered once
    try:
        with pe.progress_sinks(scoped, None):
            assert pe.has_sinks()
            pe.emit(_event(), also=(lambda e: calls.append("own"),))
            assert "scoped" in pe.sinks_table() and "process" in pe.sinks_table()
        assert calls == ["second", "first", "scoped", "own"]
        pe.unregister_sink(second)
        calls.clear()
        pe.emit(_event())
        assert calls == ["first"]
    finally:
        pe.unregister_sink(first)
        pe.unregister_sink(second)
    assert not pe.has_sinks() and pe.sinks_table() == "no progress sinks"
    pe.unregister_sink(first)  # not registered: nothing happens
    with pytest.raises(TypeError, match="sink: expected a function"):
        pe.register_sink(3)


def test_field_names_per_door() -> None:
    e = pe.McmcProgress(10, 20, "sampling", 3, 1, 0.5)
    assert e.as_dict("r") == {"kind": "mcmc", "iteration": 10, "total": 20,
                              "phase": "sampling", "divergences": 3,
                              "warmup_divergences": 1, "elapsed": 0.5}
    assert "warmupDivergences" in e.as_dict("js") and e.as_dict("js")["kind"] == "mcmc"
    f = pe.FitProgress("epoch_end", 0, 2, None, 5, {"loss": 1.0})
    assert f.as_dict("js") == {"kind": "fit", "stage": "epoch_end", "epoch": 0, "epochs": 2,
                               "batch": None, "steps": 5, "logs": {"loss": 1.0}}
    with pytest.raises(ValueError, match="stage: expected one of"):
        pe.FitProgress("epoch_middle", 0, 2, None, 5)
    with pytest.raises(AttributeError):
        e.iteration = 11  # frozen


def test_every_nth_keeps_multiples_and_the_last() -> None:
    seen: list[int] = []
    sink = pe.every_nth(lambda e: seen.append(e.iteration), 3)
    for i in range(1, 8):
        sink(_event(i, 7))
    assert seen == [3, 6, 7]
    with pytest.raises(ValueError, match="every: expected an integer >= 1"):
        pe.every_nth(print, 0)


def test_a_failing_sink_warns_once_and_sampling_goes_on() -> None:
    m = _model()
    calls = {"bad": 0}
    good: list[int] = []

    def bad(e):
        calls["bad"] += 1
        raise ValueError("display gone")

    with pe.progress_sinks(bad, lambda e: good.append(e.iteration)), \
            pytest.warns(pe.ProgressSinkWarning, match="display gone") as caught:
        d = tb.mcmc(m, n_samples=10, warmup=10, chains=2, seed=1, progress=False,
                    backend="numpy")
    assert calls["bad"] == 1 and len(caught) == 1  # muted for the rest of the run
    assert good == list(range(1, 21)) and d.n_draws == 10 and not d.interrupted
    # the same draws as a run without sinks
    ref = tb.mcmc(m, n_samples=10, warmup=10, chains=2, seed=1, progress=False,
                  backend="numpy")
    np.testing.assert_array_equal(d.free, ref.free)


def test_an_interrupt_in_a_sink_still_stops_sampling() -> None:
    m = _model()

    def stop(e):
        if e.iteration == 5:
            raise KeyboardInterrupt

    with pe.progress_sinks(stop), pytest.warns(RuntimeWarning, match="interrupted"):
        d = tb.mcmc(m, n_samples=10, warmup=2, chains=2, seed=1, progress=False,
                    backend="numpy")
    assert d.interrupted and d.n_draws == 3


def test_callback_and_scoped_sink_see_the_same_events() -> None:
    m = _model()
    from_callback: list[dict] = []
    from_sink: list[dict] = []
    with pe.progress_sinks(pe.every_nth(lambda e: from_sink.append(e.as_dict()), 4)):
        tb.mcmc(m, n_samples=6, warmup=6, chains=2, seed=3, progress=False,
                callback=from_callback.append, callback_every=4)
    assert [c["iteration"] for c in from_callback] == [4, 8, 12]
    assert [{"kind": "mcmc", **c} for c in from_callback] == from_sink


def test_fit_emits_its_stages() -> None:
    x = np.linspace(-1, 1, 20).reshape(10, 2)
    y = x.sum(axis=1, keepdims=True)
    model = tb.layers.Sequential([tb.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer="sgd", loss="mse")
    events: list[pe.FitProgress] = []
    with pe.progress_sinks(events.append):
        model.fit(x, y, epochs=2, batch_size=5, verbose=0)
    stages = [e.stage for e in events]
    assert stages == ["train_begin",
                      *(["epoch_begin"] + ["batch_begin", "batch_end"] * 2 + ["epoch_end"]) * 2,
                      "train_end"]
    end = [e for e in events if e.stage == "epoch_end"]
    assert [e.epoch for e in end] == [0, 1] and all(e.epochs == 2 and e.steps == 2 for e in end)
    assert set(end[-1].logs) == {"loss"} and events[2].batch == 0


def _repo_text(path: str) -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parents[2] / path).read_text(encoding="utf-8")


def test_the_doors_read_only_the_events_fields() -> None:
    """The clients name the event fields the runtime defines, by their door's rule: JS's
    ProgressInfo type and fit listener, R's progress bar."""
    import dataclasses
    import re

    from tensorbridge.runtime.argument_checks import door_name

    mcmc = [f.name for f in dataclasses.fields(pe.McmcProgress)]
    fit = [f.name for f in dataclasses.fields(pe.FitProgress)]
    dts = _repo_text("js-client/index.d.ts")
    body = re.search(r"export interface ProgressInfo \{(.*?)\n\}", dts, re.S).group(1)
    typed = re.findall(r"^\s+(\w+)\??:", body, re.M)
    assert sorted(typed) == sorted(door_name(f, "js") for f in mcmc)
    listener = _repo_text("js-client/src/layers.js")
    read = set(re.findall(r"\bev\.(\w+)", listener))
    assert read and read <= {door_name(f, "js") for f in fit}
    r_bar = _repo_text("r-client/R/inference.R")
    bar = r_bar[r_bar.index("ppl_progress_bar <- function"):r_bar.index("ppl_names <- function")]
    read_r = set(re.findall(r"\binfo\$(\w+)", bar))
    assert read_r and read_r <= {door_name(f, "r") for f in mcmc}


def test_callback_every_is_checked_naming_it() -> None:
    with pytest.raises(ValueError, match="callback_every: expected an integer >= 1, got 0"):
        tb.mcmc(_model(), n_samples=5, warmup=5, chains=1, progress=False, callback_every=0)


@pytest.mark.parametrize("backend", ["numpy", "auto"])
def test_terminal_bar_is_a_sink_of_the_run(backend: str, capsys) -> None:
    """progress=True draws the bar on stderr (the run's own sink); it ends on the last
    iteration, with the sampling phase's divergences."""
    d = tb.mcmc(_model(), n_samples=10, warmup=10, chains=2, seed=2, progress=True,
                backend=backend)
    err = capsys.readouterr().err
    last = err.rstrip("\n").split("\r")[-1]
    shown = d.divergences  # the kept draws' (warmup's are counted apart)
    assert last.startswith("sampling [" + "#" * 30 + "] 20/20 ")
    assert last.endswith(f"divergences: {shown}") and err.endswith("\n")
