"""Optimizers against independent NumPy implementations of the Keras / TF.js formulas, through
the fused kernels and the composite formulas, eagerly and staged."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import layers as L
from tensorbridge.runtime.layers import primitives as K


def _ref_sgd(p, g, state, lr, momentum=0.0, nesterov=False, **_):
    if momentum == 0:
        return p - lr * g, state
    v = momentum * state.get("v", np.zeros_like(p)) - lr * g
    p = p + momentum * v - lr * g if nesterov else p + v
    return p, {"v": v}


def _ref_adam(p, g, state, lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **_):
    t = state.get("t", 0) + 1
    m = state.get("m", np.zeros_like(p))
    v = state.get("v", np.zeros_like(p))
    m = beta_1 * m + (1 - beta_1) * g
    v = beta_2 * v + (1 - beta_2) * g * g
    vhat = np.maximum(state.get("vhat", np.zeros_like(p)), v) if amsgrad else v
    alpha = lr * np.sqrt(1 - beta_2**t) / (1 - beta_1**t)
    return p - alpha * m / (np.sqrt(vhat) + epsilon), {"t": t, "m": m, "v": v, "vhat": vhat}


def _ref_rmsprop(p, g, state, lr, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **_):
    s = rho * state.get("s", np.zeros_like(p)) + (1 - rho) * g * g
    new = {"s": s}
    denom = s + epsilon
    if centered:
        a = rho * state.get("a", np.zeros_like(p)) + (1 - rho) * g
        new["a"] = a
        denom = s - a * a + epsilon
    inc = lr * g / np.sqrt(denom)
    if momentum > 0:
        mom = momentum * state.get("mom", np.zeros_like(p)) + inc
        new["mom"] = mom
        return p - mom, new
    return p - inc, new


def _ref_adagrad(p, g, state, lr, initial_accumulator_value=0.1, epsilon=1e-7, **_):
    acc = state.get("acc", np.full_like(p, initial_accumulator_value)) + g * g
    return p - lr * g / np.sqrt(acc + epsilon), {"acc": acc}


CASES = [
    ("SGD", {}, _ref_sgd),
    ("SGD", {"momentum": 0.9}, _ref_sgd),
    ("SGD", {"momentum": 0.8, "nesterov": True}, _ref_sgd),
    ("Adam", {}, _ref_adam),
    ("Adam", {"beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3}, _ref_adam),
    ("Adam", {"amsgrad": True}, _ref_adam),
    ("RMSprop", {}, _ref_rmsprop),
    ("RMSprop", {"momentum": 0.5}, _ref_rmsprop),
    ("RMSprop", {"centered": True}, _ref_rmsprop),
    ("Adagrad", {}, _ref_adagrad),
]


def _grads(k: int, shape=(5, 3)) -> list[np.ndarray]:
    rng = np.random.default_rng(k)
    return [rng.normal(size=shape) for _ in range(4)]


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "composite"])
@pytest.mark.parametrize("name,kwargs,ref", CASES,
                         ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_matches_reference_formulas(name, kwargs, ref, fused, monkeypatch) -> None:
    if not fused:
        monkeypatch.setattr(K, "fused_update", lambda *a, **k: None)
    lr = 0.05
    opt = getattr(L.optimizers, name)(lr, **kwargs)
    p0 = np.random.default_rng(99).normal(size=(5, 3))
    var = L.Variable(tb.tensor(p0), "w")
    ref_p, ref_state = p0.copy(), {}
    for k in range(4):
        g = _grads(k)[0]
        opt.apply_gradients([(tb.tensor(g), var)])
        ref_p, ref_state = ref(ref_p, g, ref_state, lr, **kwargs)
        np.testing.assert_allclose(var.numpy(), ref_p, rtol=1e-12, atol=1e-12)
    assert opt.iterations == 4 and int(opt.state["iterations"].item()) == 4


def test_defaults_are_keras_and_tfjs_defaults() -> None:
    assert L.optimizers.SGD().learning_rate == 0.01
    adam = L.optimizers.get("adam")
    assert (adam.learning_rate, adam.beta_1, adam.beta_2, adam.epsilon) == (
        0.001, 0.9, 0.999, 1e-7)
    rms = L.optimizers.get("RMSprop")
    assert (rms.learning_rate, rms.rho, rms.momentum, rms.epsilon, rms.centered) == (
        0.001, 0.9, 0.0, 1e-7, False)
    assert isinstance(L.optimizers.get("rmsProp"), L.optimizers.RMSprop)  # TF.js spelling


def test_fused_float32_close_to_composite() -> None:
    rng = np.random.default_rng(0)
    p, g, m = (tb.tensor(rng.normal(size=(300, 7)).astype(np.float32)) for _ in range(3))
    v = tb.tensor(np.abs(rng.normal(size=(300, 7))).astype(np.float32))
    alpha = tb.tensor(np.float32(1e-3))
    out = K.fused_update(K.ADAM, p, g, m, v, alpha, beta_1=0.9, beta_2=0.999, epsilon=1e-7)
    m2 = m + (g - m) * 0.1
    v2 = v + (g * g - v) * 0.001
    p2 = p - alpha * m2 / (tb.sqrt(v2) + 1e-7)
    for a, b in zip(out, (p2, m2, v2)):
        assert a.dtype is tb.float32 and a.shape == (300, 7)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(m.numpy(), m.numpy().copy())  # inputs untouched


def test_clipping() -> None:
    g = np.array([3.0, 4.0])  # norm 5
    for kwargs, want in (({"clipnorm": 1.0}, g / 5), ({"clipvalue": 3.5}, np.array([3.0, 3.5])),
                         ({"global_clipnorm": 2.5}, g / 2)):
        var = L.Variable(tb.zeros((2,), "float64"), "w")
        L.optimizers.SGD(1.0, **kwargs).apply_gradients([(tb.tensor(g), var)])
        np.testing.assert_allclose(-var.numpy(), want, rtol=1e-12)
    with pytest.raises(ValueError, match="at most one"):
        L.optimizers.SGD(clipnorm=1.0, clipvalue=1.0)


def test_minimize_like_tfjs() -> None:
    var = L.Variable(tb.tensor([3.0, -2.0], dtype="float64"), "x")
    opt = L.optimizers.SGD(0.1)
    for _ in range(200):
        loss = opt.minimize(lambda: tb.sum(tb.square(var.value - 1.0)), [var])
    np.testing.assert_allclose(var.numpy(), [1.0, 1.0], atol=1e-12)
    assert float(loss) < 1e-20


def test_learning_rate_schedule_callable() -> None:
    var = L.Variable(tb.zeros((1,), "float64"), "w")
    opt = L.optimizers.SGD(lambda step: 1.0 / (step + 1))
    for _ in range(3):
        opt.apply_gradients([(tb.ones((1,), "float64"), var)])
    np.testing.assert_allclose(var.numpy(), [-(1 + 1 / 2 + 1 / 3)], rtol=1e-12)


def test_config_round_trip() -> None:
    for opt in (L.optimizers.Adam(0.01, beta_1=0.8, amsgrad=True),
                L.optimizers.SGD(0.3, momentum=0.9, nesterov=True, clipnorm=2.0),
                L.optimizers.RMSprop(centered=True), L.optimizers.Adagrad(0.2)):
        again = L.optimizers.get(L.optimizers.serialize(opt))
        assert type(again) is type(opt) and again.get_config() == opt.get_config()


def test_staged_apply_replays_with_new_values() -> None:
    opt = L.optimizers.Adam(0.1)
    p = [tb.tensor(np.ones((4, 2), np.float32)), tb.tensor(np.zeros(2, np.float32))]
    state = opt.init_state(p)
    lr = tb.tensor(np.float32(0.1))
    step = tb.function(lambda p, g, s, lr: opt.apply(p, g, s, lr))
    eager_p, eager_s = p, state
    staged_p, staged_s = p, state
    for k in range(3):
        g = [tb.tensor(a.astype(np.float32)) for a in _grads(k, (4, 2))[:1]] + [
            tb.tensor(np.full(2, k, np.float32))]
        eager_p, eager_s = opt.apply(eager_p, g, eager_s, lr)
        staged_p, staged_s = step(staged_p, g, staged_s, lr)
    for a, b in zip(eager_p, staged_p):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert int(staged_s["iterations"].item()) == 3
