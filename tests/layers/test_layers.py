"""Layers on their own: building on first call, symbolic shapes, eager values, gradients, shape
errors, initializers, activations, summary."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import layers as L


def test_input_is_symbolic_with_unknown_batch() -> None:
    x = L.input(shape=(784,))
    assert x.shape == (None, 784) and x.dtype is tb.float32
    assert "None, 784" in repr(x)
    with pytest.raises(TypeError, match="no value"):
        bool(x)
    assert L.input(shape=3, dtype="int32").shape == (None, 3)
    assert L.input(shape=(2,), batch_size=8).shape == (8, 2)


def test_dense_builds_on_first_call_and_infers_shapes() -> None:
    dense = L.Dense(5, activation="tanh")
    assert not dense.built and dense.weights == []
    y = dense(L.input(shape=(3,)))
    assert dense.built and y.shape == (None, 5)
    assert [w.name for w in dense.weights] == ["dense/kernel", "dense/bias"]
    assert dense.kernel.shape == (3, 5) and dense.count_params() == 20
    seq = L.Dense(2)(L.input(shape=(7, 3)))  # rank 3: last axis only
    assert seq.shape == (None, 7, 2)


def test_dense_eager_values_and_gradient() -> None:
    dense = L.Dense(4, activation="relu", kernel_initializer="glorot_uniform")
    x = np.random.default_rng(0).normal(size=(3, 2)).astype(np.float32)
    out = dense(x)
    k, b = dense.get_weights()
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ k + b, 0), rtol=1e-6)
    assert np.all(b == 0)

    d64 = L.Dense(4, activation="tanh", dtype="float64")
    d64(x)

    def f(kernel, bias):
        with _substitute({d64.kernel: kernel, d64.bias: bias}):
            return tb.sum(d64(x.astype(np.float64)) ** 2)

    tb.check_grads(f, (d64.kernel.value, d64.bias.value + 0.1), order=2)


def _substitute(mapping):
    from tensorbridge.runtime.layers.variables import substitute

    return substitute(mapping)


def test_shape_mismatch_names_layer_and_both_shapes() -> None:
    dense = L.Dense(2)
    dense(L.input(shape=(3,)))
    with pytest.raises(tb.ShapeError, match=r"'dense'.*\(None, 3\).*\(None, 4\)"):
        dense(L.input(shape=(4,)))
    with pytest.raises(tb.ShapeError, match="rank >= 2"):
        L.Dense(2)(L.input(shape=()))


def test_flatten_activation_and_merge_layers() -> None:
    x = L.input(shape=(2, 3, 4))
    f = L.Flatten()(x)
    assert f.shape == (None, 24) and f.dtype is tb.float32
    data = np.arange(48, dtype=np.float32).reshape(2, 2, 3, 4)
    np.testing.assert_array_equal(L.Flatten()(data).numpy(), data.reshape(2, 24))
    act = L.Activation("softmax")
    np.testing.assert_allclose(act(np.zeros((1, 4), np.float32)).numpy(), [[0.25] * 4])
    a, b = L.input(shape=(3,)), L.input(shape=(3,))
    assert L.Add()([a, b]).shape == (None, 3)
    assert L.Concatenate()([a, L.input(shape=(5,))]).shape == (None, 8)
    with pytest.raises(tb.ShapeError, match="Concatenate"):
        L.Concatenate(axis=0)([L.input(shape=(3,)), L.input(shape=(4,))])
    u = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(L.Average()([u, 3 * u]).numpy(), 2 * u)
    np.testing.assert_array_equal(L.Subtract()([u, 3 * u]).numpy(), -2 * u)
    np.testing.assert_array_equal(L.Multiply()([2 * u, 3 * u]).numpy(), 6 * u)


def test_dropout_semantics() -> None:
    drop = L.Dropout(0.25, seed=3)
    x = np.ones((200, 50), np.float32)
    np.testing.assert_array_equal(drop(x).numpy(), x)  # inference: identity
    y = drop(x, training=True).numpy()
    kept = y != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)  # inverted dropout keeps the mean
    again = L.Dropout(0.25, seed=3)(x, training=True).numpy()
    np.testing.assert_array_equal(y, again)  # seeded
    shared = L.Dropout(0.5, noise_shape=(None, 1), seed=1)(x, training=True).numpy()
    assert all(len(set(row)) == 1 for row in shared)  # one mask value per row
    with pytest.raises(ValueError, match="rate"):
        L.Dropout(1.0)


def test_embedding_lookup_and_gradient() -> None:
    emb = L.Embedding(10, 3, embeddings_initializer=L.initializers.RandomNormal(seed=0))
    ids = np.array([[1, 2, 1], [9, 0, 1]])
    out = emb(ids)
    table = emb.embeddings.numpy()
    assert out.shape == (2, 3, 3) and out.dtype is tb.float32
    np.testing.assert_array_equal(out.numpy(), table[ids])
    assert L.Embedding(10, 3)(L.input(shape=(5,), dtype="int32")).shape == (None, 5, 3)

    def f(t):
        with _substitute({emb.embeddings: t}):
            return tb.sum(emb(tb.tensor(ids)) ** 2)

    g = tb.grad(f)(emb.embeddings.value)
    want = np.zeros_like(table)
    np.add.at(want, ids.reshape(-1), 2 * table[ids].reshape(-1, 3))
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-6)
    t64 = tb.tensor(table.astype(np.float64))
    from tensorbridge.runtime.layers.primitives import embedding_lookup

    tb.check_grads(lambda t: tb.sum(tb.sin(embedding_lookup(t, tb.tensor(ids)))), (t64,),
                   order=2)


@pytest.mark.parametrize("name", ["relu", "elu", "gelu", "tanh", "sigmoid", "softmax",
                                  "selu", "softplus", "linear"])
def test_activations_match_numpy_and_have_gradients(name) -> None:
    x = np.array([[-2.0, -0.5, 0.3, 1.7]])
    fn = L.activations.get(name)
    from scipy.special import erf

    want = {
        "relu": np.maximum(x, 0), "elu": np.where(x > 0, x, np.expm1(x)),
        "gelu": 0.5 * x * (1 + erf(x / math.sqrt(2))), "tanh": np.tanh(x),
        "sigmoid": 1 / (1 + np.exp(-x)), "softmax": np.exp(x) / np.exp(x).sum(),
        "selu": 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
        "softplus": np.log1p(np.exp(x)), "linear": x,
    }[name]
    np.testing.assert_allclose(fn(tb.tensor(x)).numpy(), want, rtol=1e-7)
    tb.check_grads(lambda v: tb.sum(fn(v) * tb.tensor([[1.0, 2.0, 3.0, 4.0]])),
                   (tb.tensor(x),), order=2)
    assert L.activations.serialize(fn) == name or name == "linear"


def test_initializers_are_seeded_and_have_the_right_statistics() -> None:
    I = L.initializers  # noqa: E741
    a = I.GlorotUniform(seed=5)((400, 300)).numpy()
    b = I.GlorotUniform(seed=5)((400, 300)).numpy()
    np.testing.assert_array_equal(a, b)
    limit = math.sqrt(6 / 700)
    assert a.min() >= -limit and a.max() <= limit
    assert a.std() == pytest.approx(limit / math.sqrt(3), rel=0.02)
    init = I.get("glorotUniform")  # TF.js spelling; unseeded: follows tb.random.seed
    tb.random.seed(3)
    c = init((10, 10)).numpy()
    tb.random.seed(3)
    np.testing.assert_array_equal(c, init((10, 10)).numpy())
    seeded = I.HeNormal(seed=1)
    h1, h2 = seeded((500, 200)).numpy(), seeded((500, 200)).numpy()
    assert not np.array_equal(h1, h2)  # one stream: successive calls differ
    assert h1.std() == pytest.approx(math.sqrt(2 / 500), rel=0.03)
    assert np.abs(h1).max() <= 2 * math.sqrt(2 / 500) / 0.87962566103423978 + 1e-6
    t = I.TruncatedNormal(stddev=0.1, seed=0)((1000,)).numpy()
    assert np.abs(t).max() <= 0.2 and t.std() == pytest.approx(0.088, rel=0.1)
    assert np.all(I.get("zeros")((2, 2)).numpy() == 0) and np.all(
        I.get("Ones")((2,), "float64").numpy() == 1)
    assert I.get(I.serialize(I.VarianceScaling(2.0, "fan_out", "uniform", seed=3))).get_config() \
        == {"scale": 2.0, "mode": "fan_out", "distribution": "uniform", "seed": 3}
    assert I.compute_fans((3, 3, 16, 32)) == (144.0, 288.0)


def test_summary_table() -> None:
    model = L.Sequential([L.Dense(128, activation="relu", input_shape=(784,)),
                          L.Dropout(0.2), L.Dense(10, activation="softmax")])
    lines = []
    model.summary(print_fn=lines.append)
    text = lines[0]
    assert 'Model: "sequential"' in text
    assert "dense (Dense)" in text and "(None, 128)" in text and "100,480" in text
    assert "dropout (Dropout)" in text and "(None, 10)" in text and "1,290" in text
    assert "Total params: 101,770" in text and "Trainable params: 101,770" in text
    assert "Non-trainable params: 0" in text
    a, b = L.input(shape=(2,), name="left"), L.input(shape=(3,), name="right")
    fm = L.Model([a, b], L.Dense(1)(L.Concatenate()([a, b])))
    text = fm.summary_text()
    assert "left (InputLayer)" in text and "Connected to" in text and "left[0][0]" in text


def test_layer_config_round_trip() -> None:
    dense = L.Dense(3, activation="gelu", use_bias=False, name="d",
                    kernel_initializer=L.initializers.HeNormal(seed=2))
    again = L.Dense.from_config(dense.get_config())
    assert again.get_config() == dense.get_config()
    with pytest.raises(TypeError, match="unexpected"):
        L.Dense(3, nonsense=1)


def test_custom_layer_with_default_output_shape() -> None:
    class Scale(L.Layer):
        def build(self, input_shape):
            self.s = self.add_weight("s", (input_shape[-1],), "ones")

        def call(self, x):
            return x * self.s.value

    out = Scale()(L.Dense(4)(L.input(shape=(2,))))
    assert out.shape == (None, 4)
