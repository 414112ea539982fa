"""The same model on every backend: training gives the NumPy numbers, files move between
backends, every compiled step stays compiled."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import layers as L

from .helpers import blobs


def _model(backend: str, dropout: float = 0.0):
    L.clear_session()
    with tb.use_backend(backend):
        model = L.Sequential([
            L.Dense(16, activation="relu", input_shape=(8,),
                    kernel_initializer=L.initializers.GlorotUniform(0)),
            L.Dropout(dropout, seed=3),
            L.Dense(3, kernel_initializer=L.initializers.GlorotUniform(1),
                    activation="softmax"),
        ])
    return model


@pytest.mark.parametrize("opt", ["adam", "sgd_momentum", "rmsprop"])
def test_training_matches_numpy_backend(backend: str, opt: str) -> None:
    x, y = blobs(96, 8, 3, seed=4)
    make = {"adam": lambda: L.optimizers.Adam(0.01),
            "sgd_momentum": lambda: L.optimizers.SGD(0.05, momentum=0.9),
            "rmsprop": lambda: L.optimizers.RMSprop(0.01)}[opt]
    results = []
    for be in ("numpy", backend):
        model = _model(be, dropout=0.2)
        assert model.weights[0].backend.name == be
        model.compile(optimizer=make(), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            hist = model.fit(x, y, epochs=3, batch_size=32, seed=2, verbose=0)
        results.append((model.get_weights(), hist.history, np.asarray(model.predict(x))))
    (w0, h0, p0), (w1, h1, p1) = results
    for a, b in zip(w0, w1):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h0["loss"], h1["loss"], rtol=1e-4)
    np.testing.assert_allclose(p0, p1, rtol=1e-4, atol=1e-5)


def test_saved_on_one_backend_loads_on_another(backend: str, tmp_path) -> None:
    x, y = blobs(32, 8, 3)
    model = _model(backend)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
    model.save(tmp_path / "m.zip")
    for target in ("numpy", backend):
        with tb.use_backend(target):
            loaded = L.load_model(tmp_path / "m.zip")
        assert loaded.weights[0].backend.name == target
        np.testing.assert_allclose(np.asarray(loaded.predict(x)), np.asarray(model.predict(x)),
                                   rtol=1e-5, atol=1e-6)
        loaded.fit(x, y, epochs=1, batch_size=16, verbose=0)  # optimizer state moved too


def test_to_backend_moves_weights_and_optimizer_state(backend: str) -> None:
    x, y = blobs(32, 8, 3)
    model = _model("numpy")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
    before = np.asarray(model.predict(x))
    model.to_backend(backend)
    assert {w.backend.name for w in model.weights} == {backend}
    assert model.optimizer.state["slots"][0]["m"].backend.name == backend
    np.testing.assert_allclose(np.asarray(model.predict(x)), before, rtol=1e-5, atol=1e-6)
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
