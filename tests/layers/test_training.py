"""fit / evaluate / predict: the reference checks of issue 6, staged steps against eager ones,
validation split, shuffling, sample weights and multi-input/-output models."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import layers as L

from .helpers import blobs, one_hot


def test_mlp_784_128_10_learns_separable_problem() -> None:
    x, y = blobs(1200, 784, 10, seed=3)
    x_train, y_train, x_test, y_test = x[:1000], y[:1000], x[1000:], y[1000:]
    model = L.Sequential([
        L.Dense(128, activation="relu", input_shape=(784,)),
        L.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer=L.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    hist = model.fit(x_train, y_train, epochs=4, batch_size=64, verbose=0, seed=0)
    assert hist.history["accuracy"][-1] > 0.95
    _, acc = model.evaluate(x_test, y_test, verbose=0)
    assert acc > 0.95
    pred = np.asarray(model.predict(x_test))
    assert pred.shape == (200, 10)
    np.testing.assert_allclose(pred.sum(axis=1), 1.0, rtol=1e-5)
    assert np.mean(pred.argmax(axis=1) == y_test) == pytest.approx(acc)


def test_linear_model_matches_least_squares() -> None:
    rng = np.random.default_rng(0)
    n, d = 256, 5
    x = rng.normal(size=(n, d))
    w_true = rng.normal(size=(d, 1))
    y = x @ w_true + 0.7 + 0.1 * rng.normal(size=(n, 1))
    inp = L.input(shape=(d,), dtype="float64")
    model = L.Model(inp, L.Dense(1)(inp))
    assert model.weights[0].dtype is tb.float64  # the layer follows its input's dtype
    model.compile(optimizer=L.optimizers.SGD(0.2, momentum=0.5), loss="mse")
    model.fit(x, y, epochs=400, batch_size=n, shuffle=False, verbose=0)
    kernel, bias = model.get_weights()
    design = np.hstack([x, np.ones((n, 1))])
    sol, *_ = np.linalg.lstsq(design, y, rcond=None)
    np.testing.assert_allclose(kernel, sol[:d], atol=1e-4, rtol=0)
    np.testing.assert_allclose(bias, sol[d], atol=1e-4, rtol=0)


@pytest.mark.parametrize("optimizer", [
    lambda: L.optimizers.Adam(1e-2),
    lambda: L.optimizers.Adam(1e-2, amsgrad=True),
    lambda: L.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    lambda: L.optimizers.RMSprop(1e-2),
    lambda: L.optimizers.RMSprop(1e-2, centered=True, momentum=0.5),
    lambda: L.optimizers.Adagrad(0.1),
], ids=["adam", "amsgrad", "nesterov", "rmsprop", "rmsprop-centered", "adagrad"])
def test_staged_training_gives_the_eager_numbers(optimizer, mlp_factory) -> None:
    x, y = blobs(96, 8, 3, seed=1)
    runs = []
    for eager in (False, True):
        model = mlp_factory(logits=True)
        model.compile(optimizer=optimizer(), loss=L.losses.SparseCategoricalCrossentropy(
            from_logits=True), metrics=["accuracy"], run_eagerly=eager)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a staged step that falls back to eager would warn
            hist = model.fit(x, y, epochs=3, batch_size=32, verbose=0, seed=5)
        runs.append((model.get_weights(), hist.history))
    (w_staged, h_staged), (w_eager, h_eager) = runs
    for a, b in zip(w_staged, w_eager):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    for key in h_staged:
        np.testing.assert_allclose(h_staged[key], h_eager[key], rtol=1e-6)


def test_staged_dropout_and_sample_weights_give_the_eager_numbers() -> None:
    x, y = blobs(80, 8, 3, seed=2)
    sw = np.random.default_rng(0).uniform(0.5, 2.0, size=80)
    runs = []
    for eager in (False, True):
        L.clear_session()
        model = L.Sequential([
            L.Dense(16, activation="elu", input_shape=(8,),
                    kernel_initializer=L.initializers.HeNormal(0)),
            L.Dropout(0.3, seed=11),
            L.Dense(3, activation="softmax", kernel_initializer=L.initializers.GlorotUniform(1)),
        ])
        model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy",
                      metrics=["accuracy", "sparse_categorical_crossentropy"],
                      run_eagerly=eager)
        hist = model.fit(x, y, sample_weight=sw, epochs=2, batch_size=32, validation_split=0.25,
                         verbose=0, seed=1)
        runs.append((model.get_weights(), hist.history))
    for a, b in zip(runs[0][0], runs[1][0]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    for key in runs[0][1]:
        np.testing.assert_allclose(runs[0][1][key], runs[1][1][key], rtol=1e-6)


def test_staged_step_is_traced_once_per_batch_shape(mlp_factory) -> None:
    x, y = blobs(100, 8, 3)
    model = mlp_factory()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=2, batch_size=32, verbose=0)  # batches of 32, 32, 32 and 4
    staged = model._trainer.train_fn.compiled["numpy"]
    programs = [p for p in staged.cache.values() if p != "eager"]
    assert len(programs) == 2 and len(staged.cache) == 2


def test_learning_rate_change_applies_without_retracing(mlp_factory) -> None:
    x, y = blobs(64, 8, 3)
    model = mlp_factory()
    opt = L.optimizers.SGD(0.0)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, batch_size=64, verbose=0)
    before = model.get_weights()
    opt.learning_rate = 0.5
    model.fit(x, y, epochs=1, batch_size=64, verbose=0)
    assert not np.allclose(before[0], model.get_weights()[0])
    assert len(model._trainer.train_fn.compiled["numpy"].cache) == 1


def test_history_and_validation_split_holds_out_the_last_samples(mlp_factory) -> None:
    x, y = blobs(100, 8, 3)
    model = mlp_factory()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    hist = model.fit(x, y, epochs=2, batch_size=16, validation_split=0.2, verbose=0)
    assert set(hist.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert all(len(v) == 2 for v in hist.history.values())
    assert hist.epoch == [0, 1]
    # the validation numbers are exactly evaluate() on the last 20 samples
    val_loss, val_acc = model.evaluate(x[80:], y[80:], verbose=0)
    assert hist.history["val_loss"][-1] == pytest.approx(val_loss, rel=1e-6)
    assert hist.history["val_accuracy"][-1] == pytest.approx(val_acc)
    assert model.history is hist


def test_validation_data_and_steps_param(mlp_factory) -> None:
    x, y = blobs(60, 8, 3)
    model = mlp_factory()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    params = {}

    class Spy(L.Callback):
        def on_train_begin(self, logs=None):
            params.update(self.params)

    hist = model.fit(x[:40], y[:40], epochs=1, batch_size=16,
                     validation_data=(x[40:], y[40:]), callbacks=[Spy()], verbose=0)
    assert params["steps"] == 3 and params["samples"] == 40 and params["epochs"] == 1
    assert hist.history["val_loss"][0] == pytest.approx(
        model.evaluate(x[40:], y[40:], verbose=0), rel=1e-6)


def test_shuffle_is_reproducible_with_a_seed(mlp_factory) -> None:
    x, y = blobs(96, 8, 3)

    def run(seed, shuffle=True):
        L.clear_session()
        model = mlp_factory()
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        model.fit(x, y, epochs=2, batch_size=16, shuffle=shuffle, seed=seed, verbose=0)
        return model.get_weights()[0]

    a, b, c = run(1), run(1), run(2)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    np.testing.assert_array_equal(run(1, shuffle=False), run(2, shuffle=False))


def test_dropout_training_is_seeded_and_off_in_predict() -> None:
    x, y = blobs(64, 8, 3)

    def build():
        L.clear_session()
        return L.Sequential([L.Dense(32, activation="relu", input_shape=(8,),
                                     kernel_initializer=L.initializers.GlorotUniform(0)),
                             L.Dropout(0.5, seed=7),
                             L.Dense(3, kernel_initializer=L.initializers.GlorotUniform(1))])

    weights = []
    for _ in range(2):
        model = build()
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # dropout draws happen outside the staged step
            model.fit(x, y, epochs=2, batch_size=16, seed=0, verbose=0)
        weights.append(model.get_weights())
        p1, p2 = np.asarray(model.predict(x)), np.asarray(model.predict(x))
        np.testing.assert_array_equal(p1, p2)  # deterministic: dropout is inactive
        np.testing.assert_allclose(p1, np.asarray(model(x)), rtol=1e-5, atol=1e-6)
    for a, b in zip(*weights):
        np.testing.assert_array_equal(a, b)


def test_sample_weight_zero_ignores_samples(mlp_factory) -> None:
    x, y = blobs(32, 8, 3)
    model = mlp_factory()
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    w = np.ones(32)
    w[16:] = 0.0
    full = model.evaluate(x, y, sample_weight=w, verbose=0)
    half = model.evaluate(x[:16], y[:16], verbose=0)
    # sum_over_batch_size divides by all 32 samples, weighted or not (Keras semantics)
    assert full == pytest.approx(half / 2, rel=1e-6)


def test_one_hot_targets_with_categorical_crossentropy(mlp_factory) -> None:
    x, y = blobs(120, 8, 3)
    model = mlp_factory(logits=True)
    model.compile(optimizer=L.optimizers.Adam(0.02), loss=L.losses.CategoricalCrossentropy(
        from_logits=True), metrics=["accuracy"])
    hist = model.fit(x, one_hot(y, 3), epochs=15, batch_size=30, verbose=0)
    assert hist.history["accuracy"][-1] > 0.9


def test_binary_classification_with_logits_accuracy_threshold() -> None:
    x, y = blobs(200, 4, 2, seed=2)
    model = L.Sequential([L.Dense(1, input_shape=(4,))])
    model.compile(optimizer=L.optimizers.Adam(0.05),
                  loss=L.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
    hist = model.fit(x, y.astype(np.float32), epochs=20, batch_size=50, verbose=0)
    assert hist.history["accuracy"][-1] > 0.95  # threshold 0 on logits, not 0.5


def test_functional_multi_input_multi_output() -> None:
    a = L.input(shape=(4,), name="a")
    b = L.input(shape=(3,), name="b")
    h = L.Concatenate()([L.Dense(8, activation="tanh")(a), L.Dense(8, activation="tanh")(b)])
    out1 = L.Dense(1, name="reg")(h)
    out2 = L.Dense(2, name="cls")(h)
    model = L.Model([a, b], [out1, out2])
    assert model.output_names == ["reg", "cls"]
    model.compile(optimizer="adam", loss={"reg": "mse", "cls":
                                          "sparse_categorical_crossentropy"},
                  metrics={"cls": ["accuracy"]}, loss_weights=[1.0, 0.5])
    rng = np.random.default_rng(0)
    xa, xb = rng.normal(size=(64, 4)), rng.normal(size=(64, 3))
    y_reg = xa.sum(axis=1, keepdims=True)
    y_cls = (xb[:, 0] > 0).astype(int)
    hist = model.fit({"a": xa, "b": xb}, [y_reg, y_cls], epochs=3, batch_size=16, verbose=0)
    assert set(hist.history) == {"loss", "cls_accuracy"}
    assert hist.history["loss"][-1] < hist.history["loss"][0]
    p_reg, p_cls = model.predict([xa, xb])
    assert p_reg.shape == (64, 1) and p_cls.shape == (64, 2)
    assert model.metrics_names == ["loss", "cls_accuracy"]


def test_sequential_builds_from_first_data() -> None:
    model = L.Sequential()
    model.add(L.Dense(4, activation="relu"))
    model.add(L.Dense(2))
    with pytest.raises(ValueError, match="not been built"):
        model.summary()
    out = model.predict(np.ones((3, 5), np.float32))
    assert out.shape == (3, 2)
    assert model.inputs[0].shape == (None, 5)
    assert model.layers[0].kernel.shape == (5, 4)


def test_eager_call_and_predict_agree(mlp_factory) -> None:
    model = mlp_factory()
    x = np.random.default_rng(0).normal(size=(10, 8)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(model(x)), np.asarray(model.predict(x, batch_size=3)),
                               rtol=1e-6)
    assert model(tb.tensor(x)).dtype is tb.float32


def test_train_on_batch_and_test_on_batch(mlp_factory) -> None:
    x, y = blobs(32, 8, 3)
    model = mlp_factory()
    model.compile(optimizer=L.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    before = model.test_on_batch(x, y)
    loss, _ = model.train_on_batch(x, y)
    assert loss == pytest.approx(before[0], rel=1e-5)
    assert model.test_on_batch(x, y)[0] < loss
    assert model.optimizer.iterations == 1


def test_frozen_layer_is_not_updated(mlp_factory) -> None:
    x, y = blobs(32, 8, 3)
    model = mlp_factory()
    model.layers[0].trainable = False
    frozen = model.layers[0].kernel.numpy().copy()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), frozen)
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 2


def test_embedding_model_trains() -> None:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 20, size=(200, 5))
    y = (ids[:, 0] < 10).astype(np.float32)
    model = L.Sequential([L.Embedding(20, 8, input_length=5), L.Flatten(),
                          L.Dense(1, activation="sigmoid")])
    assert model.inputs[0].dtype is tb.int32
    model.compile(optimizer=L.optimizers.Adam(0.05), loss="binary_crossentropy",
                  metrics=["accuracy"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the lookup is staged, not an eager fallback
        hist = model.fit(ids, y, epochs=10, batch_size=50, verbose=0)
    assert hist.history["accuracy"][-1] > 0.95


def test_nested_model_as_a_layer() -> None:
    inner_in = L.input(shape=(4,))
    inner = L.Model(inner_in, L.Dense(3, activation="relu", name="inner_dense")(inner_in),
                    name="encoder")
    x = L.input(shape=(4,))
    out = L.Dense(1, name="head")(inner(x))
    model = L.Model(x, out)
    assert len(model.weights) == 4
    model.compile(optimizer="adam", loss="mse")
    data = np.random.default_rng(0).normal(size=(32, 4))
    hist = model.fit(data, data.sum(axis=1), epochs=3, batch_size=8, verbose=0)
    assert np.isfinite(hist.history["loss"]).all()


def test_errors_name_the_problem(mlp_factory) -> None:
    model = mlp_factory()
    with pytest.raises(RuntimeError, match="compiled"):
        model.fit(np.ones((4, 8)), np.zeros(4))
    model.compile(optimizer="adam", loss="mse")
    with pytest.raises(ValueError, match=r"\(None, 8\)"):
        model.fit(np.ones((4, 7)), np.zeros((4, 3)))
    with pytest.raises(ValueError, match="different numbers of samples"):
        model.fit(np.ones((4, 8)), np.zeros((5, 3)))
    with pytest.raises(ValueError, match="give a loss"):
        model.compile(optimizer="adam")


def test_float64_model_end_to_end() -> None:
    model = L.Sequential([L.Dense(3, input_shape=(2,), dtype="float64", activation="tanh"),
                          L.Dense(1, dtype="float64")])
    model.compile(optimizer="adam", loss="mae")
    x = np.random.default_rng(0).normal(size=(16, 2))
    model.fit(x, x[:, :1], epochs=2, batch_size=8, verbose=0)
    assert model.predict(x).dtype is tb.float64
    assert model.optimizer.state["slots"][0]["m"].dtype is tb.float64


def test_stateless_call_for_user_gradients_and_compilation(mlp_factory) -> None:
    model = mlp_factory()
    x = np.random.default_rng(0).normal(size=(5, 8)).astype(np.float32)
    ws = [w.value for w in model.weights]
    np.testing.assert_array_equal(np.asarray(model.stateless_call(ws, x)), np.asarray(model(x)))
    grads = tb.grad(lambda w: tb.sum(model.stateless_call(w, tb.tensor(x)) ** 2))(ws)
    assert [g.shape for g in grads] == [w.shape for w in model.weights]
    staged = tb.function(lambda w, v: model.stateless_call(w, v))
    zeros = [tb.zeros_like(w) for w in ws]
    np.testing.assert_array_equal(np.asarray(staged(ws, tb.tensor(x))), np.asarray(model(x)))
    np.testing.assert_allclose(np.asarray(staged(zeros, tb.tensor(x))), 1 / 3)  # inputs


def test_training_does_not_leak_tensors(mlp_factory) -> None:
    x, y = blobs(64, 8, 3)
    model = mlp_factory(logits=True)
    model.add(L.Dropout(0.2))
    model.compile(optimizer="adam", loss=L.losses.SparseCategoricalCrossentropy(
        from_logits=True), metrics=["accuracy"])
    model.fit(x, y, epochs=1, batch_size=16, validation_split=0.25, verbose=0)
    model.predict(x)
    import gc

    gc.collect()
    before = tb.memory()
    model.fit(x, y, epochs=3, batch_size=16, validation_split=0.25, verbose=0)
    model.predict(x)
    gc.collect()
    after = tb.memory()
    assert after["num_tensors"] == before["num_tensors"]
    assert after["num_bytes"] == before["num_bytes"]
