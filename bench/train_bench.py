"""Training throughput (issue 6, "Performance"): a 784-128-10 MLP, 2,048 samples, batch 64, Adam.

One timed call is one epoch: 32 optimizer steps over the samples in a fixed order (no shuffling,
for every implementation alike), softmax cross-entropy on integer labels computed from logits,
Adam with lr 1e-3. Implementations, side by side in the same run:

* ours through the public API: ``model.fit(x, y, epochs=1, batch_size=64, shuffle=False)`` on
  the NumPy backend (and, where it loads, the TensorFlow backend);
* a hand-written NumPy loop (forward, backward and Adam written out with in-place updates);
* torch (``nn.Sequential`` + ``optim.Adam``, the idiomatic loop), where installed;
* tf.keras ``model.fit`` with the same settings, where installed.

Before timing, every implementation trains from the same initial weights and must reach the
reference accuracy (so a fast non-learning loop cannot pass), and ours must agree with the
hand-written NumPy loop weight for weight after one epoch.

Rows report microseconds per epoch (``value_us``/``peer_us``; ratio = ours / peer, below 1 is
faster) and samples per second in ``notes``. Targets: NumPy backend at or above torch's
throughput; TensorFlow backend ahead of tf.keras.

``main()`` returns rows for ``bench/run.py`` (run this file directly to print them as JSON).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _timing import Timing, compare, row_timing

N_SAMPLES = 2048
N_IN, N_HIDDEN, N_OUT = 784, 128, 10
BATCH = 64
LR = 1e-3
BETA_1, BETA_2, EPS = 0.9, 0.999, 1e-7
MIN_ACCURACY = 0.95  # after a few epochs on the separable problem below

NOT_INSTALLED = "not installed"
NO_BACKEND = "backend not available"


# --------------------------------------------------------------------------------------------
# problem


def make_data() -> tuple[np.ndarray, np.ndarray]:
    """A separable 10-class problem: Gaussian clouds around random class centres."""
    rng = np.random.default_rng(20240611)
    centers = rng.normal(size=(N_OUT, N_IN)) * 0.15
    y = rng.integers(0, N_OUT, N_SAMPLES)
    x = centers[y] + rng.normal(size=(N_SAMPLES, N_IN))
    return x.astype(np.float32), y.astype(np.int64)


def init_weights() -> list[np.ndarray]:
    """Glorot-uniform kernels and zero biases (what every implementation starts from)."""
    rng = np.random.default_rng(7)

    def glorot(a: int, b: int) -> np.ndarray:
        lim = np.sqrt(6.0 / (a + b))
        return rng.uniform(-lim, lim, size=(a, b)).astype(np.float32)

    return [glorot(N_IN, N_HIDDEN), np.zeros(N_HIDDEN, np.float32),
            glorot(N_HIDDEN, N_OUT), np.zeros(N_OUT, np.float32)]


def accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.argmax(logits, axis=1) == y))


# --------------------------------------------------------------------------------------------
# the hand-written NumPy reference


class HandMLP:
    """Forward, backward and Adam (Keras form) written out in NumPy with in-place updates."""

    def __init__(self, weights: list[np.ndarray]) -> None:
        self.w = [a.copy() for a in weights]
        self.m = [np.zeros_like(a) for a in weights]
        self.v = [np.zeros_like(a) for a in weights]
        self.t = 0

    def logits(self, x: np.ndarray) -> np.ndarray:
        W1, b1, W2, b2 = self.w
        return np.maximum(x @ W1 + b1, 0) @ W2 + b2

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        W1, b1, W2, b2 = self.w
        n = x.shape[0]
        h = x @ W1
        h += b1
        np.maximum(h, 0, out=h)
        z = h @ W2
        z += b2
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - z[np.arange(n), y]))
        e /= s  # softmax
        e[np.arange(n), y] -= 1.0
        e *= np.float32(1.0 / n)  # d loss / d logits
        grads = [None, e.sum(axis=0), h.T @ e, e]
        dh = e @ W2.T
        dh *= h > 0
        grads = [x.T @ dh, dh.sum(axis=0), grads[2], grads[1]]
        self.t += 1
        t = self.t
        alpha = np.float32(LR * np.sqrt(1 - BETA_2**t) / (1 - BETA_1**t))
        for p, g, m, v in zip(self.w, grads, self.m, self.v):
            m += (g - m) * np.float32(1 - BETA_1)
            v += (g * g - v) * np.float32(1 - BETA_2)
            p -= alpha * m / (np.sqrt(v) + np.float32(EPS))
        return loss

    def epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        loss = 0.0
        for s in range(0, len(x), BATCH):
            loss = self.step(x[s:s + BATCH], y[s:s + BATCH])
        return loss


# --------------------------------------------------------------------------------------------
# implementations


def _ours_model(tb: Any, weights: list[np.ndarray], backend: str) -> Any:
    from tensorbridge.runtime import layers as L

    with tb.use_backend(backend):
        model = L.Sequential([
            L.Dense(N_HIDDEN, activation="relu", input_shape=(N_IN,)),
            L.Dense(N_OUT),
        ])
    model.set_weights(weights)
    model.compile(optimizer=L.optimizers.Adam(LR, BETA_1, BETA_2, EPS),
                  loss=L.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def ours_candidate(tb: Any, x: np.ndarray, y: np.ndarray, weights: list[np.ndarray],
                   backend: str) -> tuple[Callable[[], Any], Callable[[], float]]:
    model = _ours_model(tb, weights, backend)

    def epoch() -> Any:
        return model.fit(x, y, epochs=1, batch_size=BATCH, shuffle=False, verbose=0)

    def acc() -> float:
        return accuracy(np.asarray(model.predict(x, batch_size=512)), y)

    return epoch, acc


def torch_candidate(x: np.ndarray, y: np.ndarray, weights: list[np.ndarray]) -> Any:
    try:
        import torch
    except ImportError:
        return NOT_INSTALLED
    net = torch.nn.Sequential(torch.nn.Linear(N_IN, N_HIDDEN), torch.nn.ReLU(),
                              torch.nn.Linear(N_HIDDEN, N_OUT))
    with torch.no_grad():
        net[0].weight.copy_(torch.from_numpy(weights[0].T.copy()))
        net[0].bias.copy_(torch.from_numpy(weights[1]))
        net[2].weight.copy_(torch.from_numpy(weights[2].T.copy()))
        net[2].bias.copy_(torch.from_numpy(weights[3]))
    opt = torch.optim.Adam(net.parameters(), lr=LR, betas=(BETA_1, BETA_2), eps=EPS)
    lossf = torch.nn.CrossEntropyLoss()
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def epoch() -> Any:
        for s in range(0, N_SAMPLES, BATCH):
            opt.zero_grad()
            loss = lossf(net(tx[s:s + BATCH]), ty[s:s + BATCH])
            loss.backward()
            opt.step()
        return loss

    def acc() -> float:
        with torch.no_grad():
            return accuracy(net(tx).numpy(), y)

    return epoch, acc


def keras_candidate(x: np.ndarray, y: np.ndarray, weights: list[np.ndarray]) -> Any:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError:
        return NOT_INSTALLED
    keras = tf.keras
    model = keras.Sequential([keras.Input(shape=(N_IN,)),
                              keras.layers.Dense(N_HIDDEN, activation="relu"),
                              keras.layers.Dense(N_OUT)])
    model.set_weights(weights)
    model.compile(optimizer=keras.optimizers.Adam(LR, BETA_1, BETA_2, EPS),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    def epoch() -> Any:
        return model.fit(x, y, epochs=1, batch_size=BATCH, shuffle=False, verbose=0)

    def acc() -> float:
        return accuracy(model.predict(x, batch_size=512, verbose=0), y)

    return epoch, acc


# --------------------------------------------------------------------------------------------
# checks and timing


class Outcome:
    __slots__ = ("error", "note", "timing")

    def __init__(self, timing: Timing | None = None, note: str | None = None,
                 error: str | None = None) -> None:
        self.timing, self.note, self.error = timing, note, error


def check_against_hand(tb: Any, x: np.ndarray, y: np.ndarray, weights: list[np.ndarray],
                       backend: str) -> None:
    """One epoch of ours equals one epoch of the hand-written loop, weight for weight."""
    hand = HandMLP(weights)
    hand.epoch(x, y)
    model = _ours_model(tb, weights, backend)
    model.fit(x, y, epochs=1, batch_size=BATCH, shuffle=False, verbose=0)
    for i, (got, want) in enumerate(zip(model.get_weights(), hand.w)):
        if not np.allclose(got, want, rtol=1e-3, atol=2e-5):
            err = float(np.max(np.abs(got - want)))
            raise AssertionError(f"ours [{backend}] differs from the hand-written NumPy loop "
                                 f"after one epoch: weight {i}, max abs err {err:.3g}")


def run_group(cands: dict[str, Any], x: np.ndarray, y: np.ndarray) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    ok: dict[str, Callable[[], Any]] = {}
    first: dict[str, float] = {}
    for key, cand in cands.items():
        if isinstance(cand, str):
            out[key] = Outcome(note=cand)
            continue
        epoch, acc = cand
        try:
            t0 = time.perf_counter()
            epoch()
            first[key] = time.perf_counter() - t0  # includes compiling/tracing
            for _ in range(2):
                epoch()
            a = acc()
            if a < MIN_ACCURACY:
                raise AssertionError(f"{key}: training accuracy {a:.3f} after 3 epochs is below "
                                     f"{MIN_ACCURACY}")
        except Exception as e:  # reported as an error row; the others still run
            out[key] = Outcome(error=f"{type(e).__name__}: {e}"[:400])
            continue
        ok[key] = epoch
    if ok:
        for key, t in compare(ok).items():
            t.first_call_s = first[key]
            out[key] = Outcome(timing=t)
    return out


def make_row(name: str, ours: Outcome, peer_label: str, peer: Outcome,
             ratio_max: float | None = None) -> dict[str, Any]:
    v = ours.timing.median_us if ours.timing else None
    p = peer.timing.median_us if peer.timing else None
    ratio = v / p if v is not None and p is not None else None
    row: dict[str, Any] = {"name": name, "value_us": v, "peer": peer_label, "peer_us": p,
                           "ratio": ratio, "unit": "us",
                           **row_timing(ours.timing, peer.timing)}
    if ratio_max is not None:
        row["target"] = f"ratio <= {ratio_max:g}"
        row["passed"] = None if ratio is None else ratio <= ratio_max
    notes = []
    for who, o in (("ours", ours), (peer_label, peer)):
        if o.timing is not None:
            notes.append(f"{who}: {N_SAMPLES / (o.timing.median_us * 1e-6):,.0f} samples/s "
                         f"(first epoch incl. compile {o.timing.first_call_s:.2f} s)")
    row["notes"] = notes
    if ours.timing is None:
        row["value_note"] = "ERROR" if ours.error else ours.note
    if peer.timing is None:
        row["peer_note"] = "ERROR" if peer.error else peer.note
    errors = [f"ours: {ours.error}"] if ours.error else []
    if peer.error:
        errors.append(f"{peer_label}: {peer.error}")
    if errors:
        row["error"] = "; ".join(errors)
        if "passed" in row and ours.error:
            row["passed"] = False
    row["details"] = {
        "ours": ours.timing.as_dict() if ours.timing else None,
        "peer": peer.timing.as_dict() if peer.timing else None,
        "samples_per_epoch": N_SAMPLES,
    }
    return row


def _backend_available(tb: Any, name: str) -> bool:
    try:
        tb.get_backend(name)
    except Exception:
        return False
    return True


def main(backends: tuple[str, ...] = ("numpy", "tensorflow")) -> list[dict[str, Any]]:
    import tensorbridge as tb

    x, y = make_data()
    weights = init_weights()
    rows: list[dict[str, Any]] = []

    if "numpy" in backends:
        name = "mlp 784-128-10 fit epoch [numpy]"
        cands: dict[str, Any] = {}
        try:
            check_against_hand(tb, x, y, weights, "numpy")
            cands["ours"] = ours_candidate(tb, x, y, weights, "numpy")
        except Exception as e:
            cands["ours"] = None
            ours_error = f"{type(e).__name__}: {e}"[:400]
        hand = HandMLP(weights)
        cands["hand"] = (lambda: hand.epoch(x, y), lambda: accuracy(hand.logits(x), y))
        cands["torch"] = torch_candidate(x, y, weights)
        if cands["ours"] is None:
            del cands["ours"]
            o = run_group(cands, x, y)
            o["ours"] = Outcome(error=ours_error)
        else:
            o = run_group(cands, x, y)
        rows.append(make_row(name, o["ours"], "torch", o["torch"], ratio_max=1.0))
        rows.append(make_row(name, o["ours"], "hand NumPy", o["hand"]))

    if "tensorflow" in backends:
        name = "mlp 784-128-10 fit epoch [tensorflow]"
        cands = {}
        if _backend_available(tb, "tensorflow"):
            try:
                cands["ours"] = ours_candidate(tb, x, y, weights, "tensorflow")
            except Exception as e:
                cands["ours"] = f"ERROR {type(e).__name__}: {e}"[:300]
        else:
            cands["ours"] = NO_BACKEND
        cands["keras"] = keras_candidate(x, y, weights)
        o = run_group(cands, x, y)
        if isinstance(cands["ours"], str) and cands["ours"].startswith("ERROR"):
            o["ours"] = Outcome(error=cands["ours"][6:])
        rows.append(make_row(name, o["ours"], "tf.keras fit", o["keras"], ratio_max=1.0))
    return rows


if __name__ == "__main__":
    print(json.dumps(main(), indent=1, default=str))
