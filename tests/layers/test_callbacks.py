"""Callbacks: hook order, plain-function and dict callbacks (snake_case and camelCase),
EarlyStopping, LearningRateScheduler, TerminateOnNaN, the progress display."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tensorbridge.runtime import layers as L
from tensorbridge.runtime.layers.progress import ProgressBar, resolve_verbose

from .helpers import blobs


def _compiled(mlp_factory, **kw):
    model = mlp_factory()
    model.compile(optimizer=kw.pop("optimizer", "adam"), loss="sparse_categorical_crossentropy",
                  metrics=kw.pop("metrics", ["accuracy"]))
    return model


class Recorder(L.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs=None):
        self.calls.append(("train_begin",))

    def on_train_end(self, logs=None):
        self.calls.append(("train_end", sorted(logs)))

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append(("epoch_begin", epoch))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch_end", epoch, sorted(logs)))

    def on_train_batch_begin(self, batch, logs=None):
        self.calls.append(("batch_begin", batch))

    def on_train_batch_end(self, batch, logs=None):
        self.calls.append(("batch_end", batch, sorted(logs)))

    def on_test_begin(self, logs=None):
        self.calls.append(("test_begin",))


def test_hook_order(mlp_factory) -> None:
    x, y = blobs(40, 8, 3)
    model = _compiled(mlp_factory)
    rec = Recorder()
    model.fit(x, y, epochs=2, batch_size=16, validation_split=0.2, callbacks=[rec], verbose=0)
    keys = ["accuracy", "loss"]
    epoch_keys = ["accuracy", "loss", "val_accuracy", "val_loss"]
    want = [("train_begin",)]
    for e in range(2):
        want.append(("epoch_begin", e))
        for b in range(2):  # 32 training samples in batches of 16
            want += [("batch_begin", b), ("batch_end", b, keys)]
        want.append(("epoch_end", e, epoch_keys))
    want.append(("train_end", epoch_keys))
    assert rec.calls == want
    assert rec.model is model and rec.params["epochs"] == 2 and rec.params["steps"] == 2


def test_batch_logs_are_running_means(mlp_factory) -> None:
    x, y = blobs(48, 8, 3)
    model = _compiled(mlp_factory, metrics=[])
    batch_losses, epoch_logs = [], []
    model.fit(x, y, epochs=1, batch_size=16, shuffle=False, verbose=0, callbacks=[{
        "on_batch_end": lambda b, logs: batch_losses.append(logs["loss"]),
        "on_epoch_end": lambda e, logs: epoch_logs.append(dict(logs)),
    }])
    assert len(batch_losses) == 3
    assert epoch_logs[0]["loss"] == pytest.approx(batch_losses[-1])


def test_plain_function_dict_camel_case_and_object_callbacks(mlp_factory) -> None:
    x, y = blobs(32, 8, 3)
    model = _compiled(mlp_factory)
    seen = []

    class JsLike:  # what a JavaScript object or an R list looks like through the bridge
        def onEpochEnd(self, epoch, logs):
            seen.append(("js", epoch))

        def onTrainBegin(self, logs):
            seen.append(("js-begin",))

    model.fit(x, y, epochs=2, batch_size=16, verbose=0, callbacks=[
        lambda epoch, logs: seen.append(("fn", epoch, round(logs["loss"], 9) >= 0)),
        {"onEpochBegin": lambda epoch, logs: seen.append(("camel", epoch))},
        {"on_train_end": lambda logs: seen.append(("end", "loss" in logs))},
        JsLike(),
    ])
    assert seen == [("js-begin",), ("camel", 0), ("fn", 0, True), ("js", 0), ("camel", 1),
                    ("fn", 1, True), ("js", 1), ("end", True)]
    with pytest.raises(TypeError, match="unknown hook"):
        L.LambdaCallback(on_epoch_ending=print)
    with pytest.raises(TypeError, match="cannot use"):
        L.callbacks.to_callback(42)


def test_early_stopping_patience_and_restore_best_weights(mlp_factory) -> None:
    x, y = blobs(32, 8, 3)
    model = _compiled(mlp_factory)
    losses = iter([1.0, 0.5, 0.7, 0.6, 0.4, 0.3])
    snapshots = []

    class FakeLoss(L.Callback):  # runs before EarlyStopping: overrides the monitored value
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = next(losses)
            snapshots.append([w.copy() for w in self.model.get_weights()])

    stop = L.EarlyStopping(patience=2, restore_best_weights=True)
    hist = model.fit(x, y, epochs=6, batch_size=16, verbose=0, callbacks=[FakeLoss(), stop])
    assert hist.epoch == [0, 1, 2, 3]  # no improvement at epochs 2 and 3
    assert stop.stopped_epoch == 3 and stop.best == 0.5 and stop.best_epoch == 1
    for got, want in zip(model.get_weights(), snapshots[1]):
        np.testing.assert_array_equal(got, want)


def test_early_stopping_modes_delta_and_baseline() -> None:
    class M:
        stop_training = False

        def get_weights(self):
            return []

    def run(values, **kw):
        cb = L.EarlyStopping(**kw)
        cb.set_model(M())
        cb.on_train_begin()
        for e, v in enumerate(values):
            cb.on_epoch_end(e, {kw.get("monitor", "val_loss"): v})
            if cb.model.stop_training:
                return e
        return None

    assert run([0.5, 0.6, 0.7], monitor="val_accuracy") is None  # auto: max for accuracy
    assert run([0.5, 0.49, 0.48], monitor="val_accuracy", patience=1) == 1
    assert run([1.0, 0.999, 0.998], min_delta=0.01, patience=1) == 1
    assert run([1.0, 0.9, 0.8, 0.7], baseline=0.5, patience=3) == 2  # 3 epochs above it
    assert run([1.0, 0.9, 0.4, 0.3], baseline=0.5, patience=3) is None
    cb = L.EarlyStopping(monitor="val_nothing")
    cb.set_model(M())
    with pytest.warns(RuntimeWarning, match="not available"):
        cb.on_epoch_end(0, {"val_loss": 1.0})


def test_learning_rate_scheduler_and_terminate_on_nan(mlp_factory) -> None:
    x, y = blobs(32, 8, 3)
    model = _compiled(mlp_factory, optimizer=L.optimizers.SGD(0.1))
    hist = model.fit(x, y, epochs=3, batch_size=16, verbose=0, callbacks=[
        L.LearningRateScheduler(lambda epoch, lr: lr / 2)])
    assert hist.history["learning_rate"] == pytest.approx([0.05, 0.025, 0.0125])
    bad = x.copy()
    bad[0, 0] = np.nan
    model2 = _compiled(mlp_factory)
    hist = model2.fit(bad, y, epochs=3, batch_size=16, shuffle=False, verbose=0,
                      callbacks=[L.TerminateOnNaN()])
    assert len(hist.epoch) == 1


def test_stop_training_ends_after_the_current_batch(mlp_factory) -> None:
    x, y = blobs(64, 8, 3)
    model = _compiled(mlp_factory)

    def stop(batch, logs):
        if batch == 1:
            model.stop_training = True

    hist = model.fit(x, y, epochs=5, batch_size=16, verbose=0, callbacks=[{"on_batch_end": stop}])
    assert hist.epoch == [0] and model.optimizer.iterations == 2


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_terminal_and_log_modes() -> None:
    tty = FakeTTY()
    bar = ProgressBar(4, stream=tty, interval=0.0)
    for i in range(1, 4):
        bar.update(i, {"loss": 0.5})
    bar.update(4, {"loss": 0.25, "acc": 1.0}, finalize=True)
    out = tty.getvalue()
    assert out.count("\r") == 4 and out.endswith("\n")
    assert "4/4 [==============================]" in out and "loss: 0.2500 - acc: 1.0000" in out
    assert "2/4 [==============>." in out and "ETA" in out
    plain = io.StringIO()
    bar = ProgressBar(4, stream=plain)
    for i in range(1, 4):
        bar.update(i, {"loss": 0.5})
    bar.update(4, {"loss": 0.25}, finalize=True)
    assert plain.getvalue().count("\n") == 1 and "\r" not in plain.getvalue()


def test_verbose_modes(mlp_factory, capsys, monkeypatch) -> None:
    x, y = blobs(32, 8, 3)
    model = _compiled(mlp_factory)
    assert resolve_verbose("auto", io.StringIO()) == 0
    assert resolve_verbose("auto", FakeTTY()) == 1
    model.fit(x, y, epochs=2, batch_size=16)  # captured stdout is no terminal: silent
    assert capsys.readouterr().out == ""
    model.fit(x, y, epochs=2, batch_size=16, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("Epoch 1/2 - ") and "accuracy:" in lines[0]
    model.fit(x, y, epochs=1, batch_size=16, verbose=1)
    out = capsys.readouterr().out
    assert out.startswith("Epoch 1/1\n") and "2/2 [" in out
    with pytest.raises(ValueError, match="verbose"):
        resolve_verbose(3)
