"""Save/load: round trips (directory and zip, Sequential and functional, optimizer state), the
byte layout other clients rely on (read here with ``struct`` only), TF.js-style manifests,
weights-only files, and import without NumPy."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import layers as L

from .helpers import blobs


def _trained_sequential(dropout: float = 0.1):
    x, y = blobs(64, 8, 3)
    model = L.Sequential([L.Dense(16, activation="relu", input_shape=(8,)), L.Dropout(dropout),
                          L.Dense(3, activation="softmax")])
    model.compile(optimizer=L.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    return model, x, y


@pytest.mark.parametrize("suffix", ["", ".zip"], ids=["directory", "zip"])
def test_sequential_round_trip_predicts_the_same(tmp_path, suffix) -> None:
    model, x, y = _trained_sequential()
    path = tmp_path / f"model{suffix}"
    model.save(path)
    if suffix:
        with zipfile.ZipFile(path) as z:
            assert sorted(z.namelist()) == ["model.json", "weights.bin"]
    else:
        assert sorted(p.name for p in path.iterdir()) == ["model.json", "weights.bin"]
    loaded = L.load_model(path)
    assert type(loaded) is L.Sequential and [la.name for la in loaded.layers] == [
        la.name for la in model.layers]
    np.testing.assert_array_equal(np.asarray(loaded.predict(x)), np.asarray(model.predict(x)))
    assert loaded.evaluate(x, y, verbose=0) == pytest.approx(model.evaluate(x, y, verbose=0))


def test_resumed_training_continues_exactly(tmp_path) -> None:
    model, x, y = _trained_sequential(dropout=0.0)
    model.save(tmp_path / "m.zip")
    loaded = L.load_model(tmp_path / "m.zip")
    assert loaded.optimizer.iterations == model.optimizer.iterations == 8
    assert isinstance(loaded.optimizer, L.optimizers.Adam)
    for m in (model, loaded):
        m.fit(x, y, epochs=1, batch_size=16, shuffle=False, verbose=0)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_functional_round_trip_with_shared_layer(tmp_path) -> None:
    a, b = L.input(shape=(4,), name="a"), L.input(shape=(4,), name="b")
    shared = L.Dense(3, activation="tanh", name="shared")
    h = L.Concatenate(name="cat")([shared(a), shared(b)])
    out = L.Dense(2, name="out")(L.Add(name="add")([h, h]))
    model = L.Model([a, b], out, name="siamese")
    model.save(tmp_path / "f")
    loaded = L.load_model(tmp_path / "f", compile=False)
    assert loaded.name == "siamese" and len(loaded.weights) == 4
    assert len(loaded.get_layer("shared")._inbound_nodes) == 2
    xa, xb = np.random.default_rng(0).normal(size=(2, 5, 4)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(loaded.predict([xa, xb])),
                                  np.asarray(model.predict([xa, xb])))
    assert not loaded.compiled


def test_nested_model_weight_names_are_unique(tmp_path) -> None:
    inner_in = L.input(shape=(3,))
    inner = L.Model(inner_in, L.Dense(2, name="dense")(inner_in), name="inner")
    x = L.input(shape=(3,))
    model = L.Model(x, L.Dense(1, name="dense_out")(inner(x)))
    names = [n for n, _ in L.serialization.weight_names(model)]
    assert names == ["inner/dense/kernel", "inner/dense/bias", "dense_out/kernel",
                     "dense_out/bias"]
    model.save(tmp_path / "n.zip")
    loaded = L.load_model(tmp_path / "n.zip")
    data = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(loaded(data)), np.asarray(model(data)))


def test_byte_layout_is_readable_without_numpy(tmp_path) -> None:
    model = L.Sequential([L.Dense(3, input_shape=(2,)), L.Dense(1, dtype="float64")])
    model.compile(optimizer="sgd", loss="mse")
    model.save(tmp_path / "m", include_optimizer=False)
    doc = json.loads((tmp_path / "m" / "model.json").read_text())
    blob = (tmp_path / "m" / "weights.bin").read_bytes()
    assert doc["format"] == "layers-model" and doc["formatVersion"] == 1
    topo = doc["modelTopology"]
    assert topo["class_name"] == "Sequential"
    first = topo["config"]["layers"][0]
    assert first["class_name"] == "Dense" and first["config"]["units"] == 3
    assert first["config"]["batch_input_shape"] == [None, 2]
    assert first["config"]["kernel_initializer"]["class_name"] == "GlorotUniform"
    assert doc["trainingConfig"]["loss"] == "mse"
    entries = doc["weightsManifest"][0]["weights"]
    assert doc["weightsManifest"][0]["paths"] == ["weights.bin"]
    assert [(e["name"], e["shape"], e["dtype"]) for e in entries] == [
        ("dense/kernel", [2, 3], "float32"), ("dense/bias", [3], "float32"),
        ("dense_1/kernel", [3, 1], "float64"), ("dense_1/bias", [1], "float64")]
    weights = model.get_weights()
    for e, w in zip(entries, weights):
        fmt = {"float32": "f", "float64": "d"}[e["dtype"]]
        n = int(np.prod(e["shape"]))
        assert e["offset"] % struct.calcsize(fmt) == 0  # aligned for typed-array views
        assert e["byteLength"] == n * struct.calcsize(fmt)
        values = struct.unpack_from(f"<{n}{fmt}", blob, e["offset"])
        np.testing.assert_array_equal(np.array(values).reshape(e["shape"]), w)
    assert entries[2]["offset"] == 40  # 4 bytes of padding after 36 bytes of float32


def test_reads_a_tfjs_style_manifest_without_offsets(tmp_path) -> None:
    w = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 2, 3], np.float32)]
    doc = {
        "format": "layers-model", "generatedBy": "TensorFlow.js tfjs-layers v4",
        "modelTopology": {"class_name": "Sequential", "config": {"name": "s", "layers": [
            {"class_name": "Dense", "config": {
                "units": 3, "activation": "linear", "use_bias": True, "name": "d",
                "batch_input_shape": [None, 2], "dtype": "float32", "trainable": True,
                "kernel_initializer": {"class_name": "VarianceScaling", "config": {
                    "scale": 1, "mode": "fan_avg", "distribution": "normal", "seed": None}},
                "bias_initializer": {"class_name": "Zeros", "config": {}},
                "kernel_regularizer": None, "bias_regularizer": None,
                "activity_regularizer": None, "kernel_constraint": None,
                "bias_constraint": None}}]}},
        "weightsManifest": [{"paths": ["group1-shard1of1.bin"], "weights": [
            {"name": "d/kernel", "shape": [2, 3], "dtype": "float32"},
            {"name": "d/bias", "shape": [3], "dtype": "float32"}]}],
    }
    (tmp_path / "model.json").write_text(json.dumps(doc))
    (tmp_path / "group1-shard1of1.bin").write_bytes(w[0].tobytes() + w[1].tobytes())
    model = L.load_model(tmp_path / "model.json")
    out = model.predict(np.array([[1.0, 1.0]], np.float32))
    np.testing.assert_array_equal(np.asarray(out), [[4.0, 7.0, 10.0]])


def test_save_and_load_weights(tmp_path) -> None:
    model, x, _ = _trained_sequential()
    model.save_weights(tmp_path / "w.zip")
    L.clear_session()
    fresh = L.Sequential([L.Dense(16, activation="relu", input_shape=(8,)), L.Dropout(0.1),
                          L.Dense(3, activation="softmax")])
    fresh.load_weights(tmp_path / "w.zip")
    np.testing.assert_array_equal(np.asarray(fresh.predict(x)), np.asarray(model.predict(x)))
    with pytest.raises(ValueError, match="no modelTopology"):
        L.load_model(tmp_path / "w.zip")
    wrong = L.Sequential([L.Dense(5, input_shape=(8,)), L.Dense(3)])
    with pytest.raises(ValueError, match="shape"):
        wrong.load_weights(tmp_path / "w.zip")


def test_artifacts_in_memory_and_json() -> None:
    model, x, _ = _trained_sequential()
    doc, blob = L.to_artifacts(model)
    again = L.from_artifacts(json.dumps(doc), blob)
    np.testing.assert_array_equal(np.asarray(again.predict(x)), np.asarray(model.predict(x)))
    topo = json.loads(model.to_json())
    assert topo["class_name"] == "Sequential"
    with pytest.raises(ValueError, match="newer"):
        L.from_artifacts({**doc, "formatVersion": 99}, blob)


def test_embedding_int_input_and_unsupported_settings(tmp_path) -> None:
    model = L.Sequential([L.Embedding(10, 4, input_length=3), L.Flatten(), L.Dense(1)])
    model.save(tmp_path / "e")
    loaded = L.load_model(tmp_path / "e")
    assert loaded.inputs[0].dtype is tb.int32
    ids = np.array([[1, 2, 3]])
    np.testing.assert_array_equal(np.asarray(loaded.predict(ids)), np.asarray(model.predict(ids)))
    spec = {"class_name": "Dense", "config": {"units": 2, "kernel_regularizer": {"l2": 0.1}}}
    with pytest.raises(ValueError, match="unsupported setting kernel_regularizer"):
        L.serialization.deserialize_layer(spec)


def test_layers_import_without_numpy() -> None:
    code = textwrap.dedent("""
        import sys
        sys.modules["numpy"] = None
        from tensorbridge.runtime import layers as L
        x = L.input(shape=(3,))
        L.optimizers.get("adam"), L.losses.get("mse"), L.metrics.get("accuracy")
        print(x.shape, L.Dense(2).units)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "(None, 3) 2"


def test_loss_and_metric_objects_survive_save_and_load(tmp_path) -> None:
    import numpy as np

    import tensorbridge as tb

    L = tb.layers
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 8)).astype("float32")
    y = rng.integers(0, 3, 64).astype("int32")
    model = L.Sequential([L.Dense(3, input_shape=(8,))])
    model.compile(optimizer="adam",
                  loss=L.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
    model.save(tmp_path / "m.zip")
    again = L.load_model(tmp_path / "m.zip")
    np.testing.assert_allclose(again.predict(x).numpy(), model.predict(x).numpy(), rtol=1e-6)
    assert again.evaluate(x, y, verbose=0) is not None
