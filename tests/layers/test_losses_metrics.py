"""Losses (values against NumPy, stability, gradients with check_grads, reductions, names) and
metrics (values, accumulation, resolution of "accuracy")."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime import layers as L
from tensorbridge.runtime.layers import losses as LS

RNG = np.random.default_rng(0)
Z = RNG.normal(size=(6, 4))  # logits
P = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
LAB = RNG.integers(0, 4, 6)
Y1H = np.eye(4)[LAB]
YB = (RNG.uniform(size=(6, 4)) > 0.5).astype(float)
T = RNG.normal(size=(6, 4))


def _np_log_softmax(z):
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def _t(a):
    return tb.tensor(np.asarray(a, dtype=np.float64))


REFERENCE = [
    ("mse", T, Z, np.mean((Z - T) ** 2, axis=1)),
    ("mae", T, Z, np.mean(np.abs(Z - T), axis=1)),
    ("categorical_crossentropy", Y1H, P, -np.sum(Y1H * np.log(P), axis=1)),
    (LS.CategoricalCrossentropy(from_logits=True), Y1H, Z,
     -np.sum(Y1H * _np_log_softmax(Z), axis=1)),
    ("sparse_categorical_crossentropy", LAB, P, -np.log(P[np.arange(6), LAB])),
    (LS.SparseCategoricalCrossentropy(from_logits=True), LAB, Z,
     -_np_log_softmax(Z)[np.arange(6), LAB]),
    ("binary_crossentropy", YB, 1 / (1 + np.exp(-Z)),
     -np.mean(YB * np.log(1 / (1 + np.exp(-Z))) + (1 - YB) * np.log(1 / (1 + np.exp(Z))),
              axis=1)),
    (LS.BinaryCrossentropy(from_logits=True), YB, Z,
     np.mean(np.logaddexp(0, Z) - YB * Z, axis=1)),
    ("huber", T, Z, np.mean(np.where(np.abs(Z - T) <= 1, 0.5 * (Z - T) ** 2,
                                     np.abs(Z - T) - 0.5), axis=1)),
]


@pytest.mark.parametrize("loss,y_true,y_pred,want", REFERENCE,
                         ids=[str(getattr(r[0], "name", r[0])) + ("_logits" if getattr(
                             r[0], "from_logits", False) else "") for r in REFERENCE])
def test_values_and_reductions(loss, y_true, y_pred, want) -> None:
    obj = LS.get(loss)
    yt = tb.tensor(y_true)
    per = type(obj).from_config({**obj.get_config(), "reduction": "none"})
    np.testing.assert_allclose(per(yt, _t(y_pred)).numpy(), want, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(obj(yt, _t(y_pred)).item(), want.mean(), rtol=1e-7)
    summed = type(obj).from_config({**obj.get_config(), "reduction": "sum"})
    np.testing.assert_allclose(summed(yt, _t(y_pred)).item(), want.sum(), rtol=1e-7)
    w = np.arange(6.0)
    np.testing.assert_allclose(obj(yt, _t(y_pred), sample_weight=w).item(),
                               (want * w).sum() / 6, rtol=1e-7)


@pytest.mark.parametrize("loss,y_true,y_pred,want", REFERENCE,
                         ids=[str(getattr(r[0], "name", r[0])) + ("_logits" if getattr(
                             r[0], "from_logits", False) else "") for r in REFERENCE])
def test_gradients_check_grads(loss, y_true, y_pred, want) -> None:
    obj = LS.get(loss)
    yt = tb.tensor(y_true)
    x = _t(y_pred)
    if isinstance(obj, LS.MeanAbsoluteError | LS.Huber):
        x = _t(y_pred + 0.05)  # away from the kinks
    tb.check_grads(lambda p: obj(yt, p), (x,), order=2)


def test_fused_sparse_crossentropy_matches_composite_and_second_order() -> None:
    z = _t(Z)
    lab = tb.tensor(LAB.astype(np.int32))
    fused = LS.SparseCategoricalCrossentropy(from_logits=True)
    composite = LS.CategoricalCrossentropy(from_logits=True)
    onehot = tb.tensor(Y1H)
    np.testing.assert_allclose(fused(lab, z).item(), composite(onehot, z).item(), rtol=1e-12)
    g1 = tb.grad(lambda p: fused(lab, p))(z)
    g2 = tb.grad(lambda p: composite(onehot, p))(z)
    np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-12, atol=1e-15)
    h1 = tb.hessian(lambda p: fused(lab, p))(z)
    h2 = tb.hessian(lambda p: composite(onehot, p))(z)
    np.testing.assert_allclose(h1.numpy(), h2.numpy(), rtol=1e-9, atol=1e-12)
    per = LS.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    tb.check_grads(lambda p: tb.sum(per(lab, p) * tb.tensor(np.arange(6.0))), (z,), order=2)
    with pytest.raises(ValueError, match=r"class ids must be in \[0, 4\)"):
        fused(tb.tensor(np.array([0, 1, 2, 3, 4, 0], np.int32)), z)


def test_logits_losses_are_stable_for_huge_logits() -> None:
    z = tb.tensor(np.array([[1000.0, -1000.0, 0.0]], dtype=np.float32))
    for loss, y in ((LS.SparseCategoricalCrossentropy(from_logits=True), [1]),
                    (LS.CategoricalCrossentropy(from_logits=True), [[0.0, 1.0, 0.0]]),
                    (LS.BinaryCrossentropy(from_logits=True), [[0.0, 1.0, 1.0]])):
        v, g = tb.value_and_grad(lambda p, loss=loss, y=y: loss(tb.tensor(y), p))(z)
        assert np.isfinite(v.item()) and np.isfinite(g.numpy()).all()
    assert LS.SparseCategoricalCrossentropy(from_logits=True)(tb.tensor([1]), z).item() == \
        pytest.approx(2000.0)
    # probabilities are clipped: a confident wrong answer costs -log(1e-7), not inf
    p = tb.tensor(np.array([[1.0, 0.0]], dtype=np.float32))
    v = LS.get("categorical_crossentropy")(tb.tensor([[0.0, 1.0]]), p).item()
    assert v == pytest.approx(-np.log(1e-7), rel=1e-3)


def test_names_in_every_spelling() -> None:
    for name in ("mse", "mean_squared_error", "MeanSquaredError", "meanSquaredError"):
        assert isinstance(LS.get(name), LS.MeanSquaredError)
    assert isinstance(LS.get("categoricalCrossentropy"), LS.CategoricalCrossentropy)
    assert LS.get(LS.serialize(LS.BinaryCrossentropy(from_logits=True))).from_logits
    custom = LS.get(lambda yt, yp: tb.mean(tb.abs(yp - yt), axis=-1) * 2.0)
    assert custom(tb.tensor([[1.0]]), tb.tensor([[2.0]])).item() == pytest.approx(2.0)
    with pytest.raises(ValueError, match="unknown loss"):
        LS.get("nope")


def test_label_smoothing() -> None:
    z = _t(Z)
    smooth = LS.CategoricalCrossentropy(from_logits=True, label_smoothing=0.2)
    y = Y1H * 0.8 + 0.2 / 4
    want = -np.sum(y * _np_log_softmax(Z), axis=1).mean()
    assert smooth(tb.tensor(Y1H), z).item() == pytest.approx(want, rel=1e-10)


# -- metrics -----------------------------------------------------------------------------------
def test_accuracy_metrics() -> None:
    m = L.metrics.SparseCategoricalAccuracy()
    m.update_state(LAB, _t(P))
    assert m.result() == pytest.approx(np.mean(P.argmax(1) == LAB))
    m.update_state(LAB[:2], _t(P[:2]))
    assert m.count == 8
    m.reset_state()
    assert m.result() == 0.0
    c = L.metrics.CategoricalAccuracy()
    c.update_state(Y1H, _t(P))
    assert c.result() == pytest.approx(np.mean(P.argmax(1) == LAB))
    b = L.metrics.BinaryAccuracy(threshold=0.3)
    b.update_state(YB, _t(P))
    assert b.result() == pytest.approx(np.mean((P > 0.3) == (YB > 0.5)))
    w = L.metrics.SparseCategoricalAccuracy()
    w.update_state(LAB, _t(P), sample_weight=np.r_[np.ones(3), np.zeros(3)])
    assert w.result() == pytest.approx(np.mean((P.argmax(1) == LAB)[:3]))


def test_accuracy_resolves_from_the_loss() -> None:
    r = L.metrics.resolve
    assert isinstance(r("accuracy", LS.get("sparse_categorical_crossentropy")),
                      L.metrics.SparseCategoricalAccuracy)
    assert isinstance(r("acc", LS.get("categorical_crossentropy")),
                      L.metrics.CategoricalAccuracy)
    bin_logits = r("accuracy", LS.BinaryCrossentropy(from_logits=True))
    assert isinstance(bin_logits, L.metrics.BinaryAccuracy) and bin_logits._fn_kwargs[
        "threshold"] == 0.0
    assert r("accuracy", LS.get("mse")).name == "accuracy"
    mse = L.metrics.get("mse")
    mse.update_state(T, _t(Z))
    assert mse.result() == pytest.approx(np.mean((Z - T) ** 2))
    assert mse.name == "mse"
    bce = L.metrics.get("binary_crossentropy")
    bce.update_state(YB, _t(1 / (1 + np.exp(-Z))))
    assert bce.result() == pytest.approx(REFERENCE[6][3].mean())
