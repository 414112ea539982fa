"""The graph executor: topological order computed once, feed dicts, release of intermediates
after their last consumer, and clear errors for graphs that cannot be run."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import layers as L
from tensorbridge.runtime.layers.executor import GraphExecutor, topological_nodes

LOG: list[str] = []


class Probe(L.Layer):
    """Adds one and logs that it ran."""

    def call(self, x):
        LOG.append(self.name)
        return x + 1.0

    def compute_output_shape(self, input_shape):
        return input_shape


def _diamond():
    x = L.input(shape=(2,), name="x")
    a = Probe(name="a")(x)
    b = Probe(name="b")(a)
    c = Probe(name="c")(a)
    d = L.Add(name="d")([b, c])
    return x, d


def test_topological_order_each_node_once() -> None:
    _, d = _diamond()
    order = [n.layer.name for n in topological_nodes([d])]
    assert order[0] == "x" and order[-1] == "d" and sorted(order) == ["a", "b", "c", "d", "x"]
    assert order.index("a") < order.index("b") and order.index("a") < order.index("c")


def test_feed_dict_or_list_and_order_is_cached() -> None:
    x, d = _diamond()
    a = d.node.inputs[0].node.inputs[0]
    ex = GraphExecutor([x], [d, a])
    LOG.clear()
    v = tb.tensor([[1.0, 2.0]])
    out_d, out_a = ex.run({x: v})
    np.testing.assert_array_equal(out_a.numpy(), [[2.0, 3.0]])
    np.testing.assert_array_equal(out_d.numpy(), [[6.0, 8.0]])
    first = list(LOG)
    ex.run([v])
    assert first + first == LOG  # same order, a runs once per call
    assert ex.nodes is ex.nodes and [n.layer.name for n in ex.nodes] == [
        n.layer.name for n in topological_nodes([d, a]) if n.layer.name != "x"]
    with pytest.raises(ValueError, match="no value for input 'x'"):
        ex.run({})


def test_intermediates_released_after_last_consumer() -> None:
    x, d = _diamond()
    ex = GraphExecutor([x], [d])
    released = {name: k for k, (node, rel) in enumerate(ex._plan) for name in
                [t.name for t in rel]}
    steps = [n.layer.name for n in ex.nodes]
    assert released["a"] == max(steps.index("b"), steps.index("c"))  # after its last reader
    assert released["b"] == released["c"] == steps.index("d")
    assert "d" not in released  # outputs are kept


def test_dispose_mode_frees_buffers_but_keeps_inputs_and_outputs() -> None:
    x, d = _diamond()
    ex = GraphExecutor([x], [d])
    v = tb.tensor(np.ones((64, 2), np.float32))
    ex.run([v])  # warm up (kernel caches)
    before = tb.memory()["num_tensors"]
    out = ex.run([v], release="dispose")
    after = tb.memory()["num_tensors"]
    assert after - before == 1  # only the output survives
    assert not v.is_disposed and not out[0].is_disposed
    np.testing.assert_array_equal(out[0].numpy(), np.full((64, 2), 6.0))


def test_identity_layers_do_not_dispose_their_output() -> None:
    x = L.input(shape=(2,))
    h = Probe(name="p")(x)
    out = L.Dropout(0.5)(h)  # inference: returns the same tensor object it received
    ex = GraphExecutor([x], [out])
    res = ex.run([tb.ones((1, 2))], release="dispose")[0]
    assert not res.is_disposed and res.tolist() == [[2.0, 2.0]]


def test_model_call_releases_intermediates() -> None:
    model = L.Sequential([L.Dense(8, activation="relu", input_shape=(4,)), L.Dense(8),
                          L.Dense(2)])
    data = tb.tensor(np.ones((16, 4), np.float32))
    model(data)
    before = tb.memory()["num_tensors"]
    out = model(data)
    assert tb.memory()["num_tensors"] - before == 1
    del out


def test_graph_errors() -> None:
    x = L.input(shape=(2,), name="x")
    other = L.input(shape=(2,), name="other")
    y = L.Add()([x, other])
    with pytest.raises(ValueError, match=r"'other'.*not among the model's inputs"):
        L.Model(x, y)
    with pytest.raises(ValueError, match="listed twice"):
        GraphExecutor([x, x], [y])
    with pytest.raises(TypeError, match="symbolic"):
        L.Model(x, tb.ones((1, 2)))
    d1, d2 = L.Dense(2, name="same"), L.Dense(2, name="same")
    with pytest.raises(ValueError, match="named 'same'"):
        L.Model(x, d2(d1(x)))
