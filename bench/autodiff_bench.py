"""Autodiff speed (issue 2, "Performance"): tensorbridge against hand-written NumPy and peers.

Two workloads, each timed side by side with its peers after every implementation's result has
been checked against an independent reference (so a fast wrong answer cannot pass):

* ``mlp256``: ``value_and_grad`` of ``f = sum(tanh(W2 @ tanh(W1 @ x)))`` with float32 256x256
  ``W1``, ``W2`` and ``x`` of shape (256,), gradient with respect to all three. Peers: a
  hand-written NumPy backward (itself checked against float64 central differences), HIPS
  autograd, torch. Target: ours within 1.5x of the hand-written NumPy backward.
* ``chain``: a 1000-step chain ``x = x * x0 + 0.0001`` (starting at ``x = x0``) on float32[4]
  under ``value_and_grad`` (gradient of ``sum(x_final)`` with respect to ``x0``), reported per
  op: the whole value_and_grad call divided by the 2000 forward ops of the chain. Every step
  multiplies by the input, so the gradient depends on the input: a compiler cannot fold the
  backward pass into a constant (with a constant multiplier, ``tb.function``'s staging did: the
  replayed program was the forward pass alone, 2001 kernels instead of about 5000), and every
  implementation, peers included, does the same forward and backward work. Peers: autograd,
  torch. Target: ours <= 4 us/op.

Both also compiled on NumPy (``tb.function`` around the value_and_grad call: staged kernel
replay), judged against the same targets and shown as separate rows.

Both again on the TensorFlow backend: ours eager (tensors with ``backend="tensorflow"``) against
TF eager ``GradientTape``, and ours compiled (``tb.function`` around the value_and_grad call)
against a ``tf.function``-compiled ``GradientTape``. Compiled candidates are traced on other
input values than those they are checked and timed on, so a trace that froze its inputs fails.

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

N = 256
CHAIN_STEPS = 1000
CHAIN_OPS = 2 * CHAIN_STEPS  # one multiply and one add per step
MLP_RATIO_TARGET = 1.5  # ours / hand-written NumPy backward
PER_OP_TARGET_US = 4.0

NOT_INSTALLED = "not installed"
NO_BACKEND = "backend not available"


# --------------------------------------------------------------------------------------------
# problem data and the hand-written NumPy reference


def mlp_data(dtype: Any = np.float32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(20240531)
    W1 = (rng.standard_normal((N, N)) / np.sqrt(N)).astype(dtype)
    W2 = (rng.standard_normal((N, N)) / np.sqrt(N)).astype(dtype)
    x = rng.standard_normal(N).astype(dtype)
    return W1, W2, x


def hand_forward(W1: np.ndarray, W2: np.ndarray, x: np.ndarray) -> Any:
    return np.tanh(W2 @ np.tanh(W1 @ x)).sum()


def hand_value_and_grad(W1: np.ndarray, W2: np.ndarray, x: np.ndarray) -> Any:
    """f = sum(tanh(W2 @ tanh(W1 @ x))) and its gradient w.r.t. (W1, W2, x), written by hand."""
    a1 = np.tanh(W1 @ x)  # (N,)
    a2 = np.tanh(W2 @ a1)  # (N,)
    value = a2.sum()
    g_h2 = 1.0 - a2 * a2  # d sum(tanh(h2)) / d h2      (a Python float keeps float32)
    g_W2 = np.outer(g_h2, a1)  # h2 = W2 @ a1
    g_h1 = (W2.T @ g_h2) * (1.0 - a1 * a1)  # back through W2 @ . and tanh
    g_W1 = np.outer(g_h1, x)  # h1 = W1 @ x
    g_x = W1.T @ g_h1
    return value, (g_W1, g_W2, g_x)


def check_hand_backward() -> None:
    """The hand-written backward against float64 central differences along random directions."""
    W1, W2, x = mlp_data(np.float64)
    _, grads = hand_value_and_grad(W1, W2, x)
    rng = np.random.default_rng(7)
    eps = 1e-6
    for _ in range(4):
        d = [rng.standard_normal(a.shape) for a in (W1, W2, x)]
        plus = hand_forward(W1 + eps * d[0], W2 + eps * d[1], x + eps * d[2])
        minus = hand_forward(W1 - eps * d[0], W2 - eps * d[1], x - eps * d[2])
        fd = (plus - minus) / (2 * eps)
        an = sum(float(np.sum(g * di)) for g, di in zip(grads, d))
        if not np.isclose(fd, an, rtol=1e-6, atol=1e-8):
            raise AssertionError(
                f"hand-written NumPy backward disagrees with central differences: "
                f"directional derivative {an} vs {fd}"
            )
    # each argument's gradient on its own, so an error in one cannot hide behind the others
    for k in range(3):
        d = [np.zeros_like(a) for a in (W1, W2, x)]
        d[k] = rng.standard_normal(d[k].shape)
        plus = hand_forward(W1 + eps * d[0], W2 + eps * d[1], x + eps * d[2])
        minus = hand_forward(W1 - eps * d[0], W2 - eps * d[1], x - eps * d[2])
        fd = (plus - minus) / (2 * eps)
        an = float(np.sum(grads[k] * d[k]))
        if not np.isclose(fd, an, rtol=1e-6, atol=1e-8):
            raise AssertionError(
                f"hand-written NumPy backward, gradient {k}: {an} vs central difference {fd}"
            )


def chain_x0() -> np.ndarray:
    return np.array([0.999, 1.0, 1.0001, 1.0002], np.float32)


def chain_reference() -> list[np.ndarray]:
    """Value and gradient of the chain in float64 with NumPy, the gradient by forward mode:
    d x_{k+1} / d x0 = x0 * d x_k / d x0 + x_k."""
    x0 = chain_x0().astype(np.float64)
    x, d = x0.copy(), np.ones_like(x0)
    for _ in range(CHAIN_STEPS):
        x, d = x * x0 + 0.0001, d * x0 + x
    return [np.asarray(x.sum(), np.float32), d.astype(np.float32)]


# --------------------------------------------------------------------------------------------
# helpers


def _to_numpy_leaves(tree: Any) -> list[np.ndarray]:
    if isinstance(tree, tuple | list):
        return [leaf for item in tree for leaf in _to_numpy_leaves(item)]
    if hasattr(tree, "detach"):  # torch
        return [tree.detach().cpu().numpy()]
    if hasattr(tree, "numpy"):  # tensorbridge, TensorFlow
        return [np.asarray(tree.numpy())]
    return [np.asarray(tree)]


def _assert_close(
    got: Any, want: list[np.ndarray], who: str, rtol: float = 2e-4, atol: float = 2e-5
) -> None:
    leaves = _to_numpy_leaves(got)
    if len(leaves) != len(want):
        raise AssertionError(f"{who}: returned {len(leaves)} arrays, expected {len(want)}")
    names = ["value", *(f"grad[{i}]" for i in range(len(want) - 1))]
    for name, g, w in zip(names, leaves, want):
        if g.shape != w.shape:
            raise AssertionError(f"{who}: {name} has shape {g.shape}, expected {w.shape}")
        if not np.allclose(g, w, rtol=rtol, atol=atol):
            err = float(np.max(np.abs(g.astype(np.float64) - w)))
            raise AssertionError(f"{who}: {name} differs from the reference (max abs err {err})")


class Outcome:
    """What happened to one implementation: timed, unavailable (note) or failed (error)."""

    __slots__ = ("error", "note", "timing")

    def __init__(
        self, timing: Timing | None = None, note: str | None = None, error: str | None = None
    ) -> None:
        self.timing = timing
        self.note = note
        self.error = error


# A zero-argument callable; or (callable, prime) where ``prime`` makes the first call (the trace
# of a compiled function) on *other* input values, so a compiled function that froze its inputs
# fails the check; or a string saying why the implementation is unavailable.
Candidate = Callable[[], Any] | tuple[Callable[[], Any], Callable[[], Any]] | str


def run_group(
    cands: dict[str, Candidate], want: list[np.ndarray], rounds: int | None = None
) -> dict[str, Outcome]:
    """Check every available candidate against ``want``, then time those that passed."""
    out: dict[str, Outcome] = {}
    ok: dict[str, Callable[[], Any]] = {}
    first: dict[str, float] = {}
    for key, cand in cands.items():
        if isinstance(cand, str):
            out[key] = Outcome(note=cand)
            continue
        fn, prime = cand if isinstance(cand, tuple) else (cand, cand)
        try:
            t0 = time.perf_counter()
            prime()
            first[key] = time.perf_counter() - t0  # the very first call: includes any tracing
            _assert_close(fn(), want, key)
        except Exception as e:  # a failing implementation is reported, the others still run
            msg = f"{type(e).__name__}: {e}"
            out[key] = Outcome(error=msg[:400])
            continue
        ok[key] = fn
    if ok:
        for key, t in compare(ok, rounds=rounds).items():
            t.first_call_s = first[key]
            out[key] = Outcome(timing=t)
    return out


def make_row(
    name: str,
    ours: Outcome,
    peer_label: str,
    peer: Outcome,
    *,
    per: int = 1,
    unit: str = "us",
    ratio_max: float | None = None,
    value_max: float | None = None,
) -> dict[str, Any]:
    """One table row: ours against one peer; ``per`` divides call times (per-op rows)."""

    def us(o: Outcome) -> float | None:
        return o.timing.median_us / per if o.timing is not None else None

    value_us, peer_us = us(ours), us(peer)
    ratio = value_us / peer_us if value_us is not None and peer_us is not None else None
    row: dict[str, Any] = {
        "name": name,
        "value_us": value_us,
        "peer": peer_label,
        "peer_us": peer_us,
        "ratio": ratio,
        "unit": unit,
        **row_timing(ours.timing, peer.timing, per),
    }
    if ratio_max is not None:
        row["target"] = f"ratio <= {ratio_max:g}"
        row["passed"] = None if ratio is None else ratio <= ratio_max
    elif value_max is not None:
        row["target"] = f"<= {value_max:g} {unit}"
        row["passed"] = None if value_us is None else value_us <= value_max
        if ours.timing is not None:  # the median is judged; the best round shows the floor
            row["notes"] = [f"ours best round {ours.timing.min_s * 1e6 / per:.2f} {unit}"]
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
    }
    return row


def _import_autograd() -> Any:
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None, None
    return autograd, anp


def _threads() -> int:
    """Threads per library (``BENCH_THREADS``, default 1; run.py also sets OMP/BLAS to it).

    One thread each: at these sizes no peer gets faster with two (measured here), and a peer
    whose thread pool spins for a core that something else holds stalls for milliseconds.
    """
    return int(os.environ.get("BENCH_THREADS", "1"))


def _import_torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(_threads())
    return torch


def _import_tf() -> Any:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError:
        return None
    try:  # only possible before TensorFlow's runtime starts; later calls raise
        tf.config.threading.set_intra_op_parallelism_threads(_threads())
        tf.config.threading.set_inter_op_parallelism_threads(_threads())
    except RuntimeError:
        pass
    return tf


def _tb_backend(tb: Any, name: str) -> str | None:
    """None when tensorbridge's backend ``name`` loads, else why not."""
    try:
        tb.get_backend(name)
    except Exception:
        return NO_BACKEND
    return None


# --------------------------------------------------------------------------------------------
# the implementations


def _tb_mlp(tb: Any) -> Callable[..., Any]:
    def f(W1: Any, W2: Any, x: Any) -> Any:
        return tb.sum(tb.tanh(W2 @ tb.tanh(W1 @ x)))

    return f


def _tb_chain(tb: Any) -> Callable[[Any], Any]:
    def chain(x0: Any) -> Any:
        x = x0
        for _ in range(CHAIN_STEPS):
            x = x * x0 + 0.0001
        return tb.sum(x)

    return chain


def _compiled(
    tb: Any, vg: Callable[..., Any], arrays: tuple[np.ndarray, ...], backend: str = "numpy"
) -> Candidate:
    """``tb.function(vg)`` as a candidate: traced on other values (0.5x), timed on ``arrays``."""
    compiled = tb.function(vg)
    args = tuple(tb.tensor(a, backend=backend) for a in arrays)
    other = tuple(tb.tensor(a * np.float32(0.5), backend=backend) for a in arrays)
    return (lambda: compiled(*args), lambda: compiled(*other))


def mlp_candidates_numpy(tb: Any) -> dict[str, Candidate]:
    W1, W2, x = mlp_data()
    cands: dict[str, Candidate] = {}

    tW1, tW2, tx = (tb.tensor(a) for a in (W1, W2, x))
    ours = tb.value_and_grad(_tb_mlp(tb), argnums=(0, 1, 2))
    cands["ours"] = lambda: ours(tW1, tW2, tx)
    cands["ours_compiled"] = _compiled(tb, ours, (W1, W2, x))
    cands["hand"] = lambda: hand_value_and_grad(W1, W2, x)

    autograd, anp = _import_autograd()
    if autograd is None:
        cands["autograd"] = NOT_INSTALLED
    else:

        def f_ag(W1: Any, W2: Any, x: Any) -> Any:
            return anp.sum(anp.tanh(anp.dot(W2, anp.tanh(anp.dot(W1, x)))))

        ag = autograd.value_and_grad(f_ag, argnum=(0, 1, 2))
        cands["autograd"] = lambda: ag(W1, W2, x)

    torch = _import_torch()
    if torch is None:
        cands["torch"] = NOT_INSTALLED
    else:
        pW1, pW2, px = (torch.from_numpy(a.copy()).requires_grad_() for a in (W1, W2, x))

        def torch_vg() -> Any:
            y = torch.tanh(pW2 @ torch.tanh(pW1 @ px)).sum()
            return y, torch.autograd.grad(y, (pW1, pW2, px))

        cands["torch"] = torch_vg
    return cands


def forward_candidates_numpy(tb: Any) -> dict[str, Candidate]:
    W1, W2, x = mlp_data()
    tW1, tW2, tx = (tb.tensor(a) for a in (W1, W2, x))
    f = _tb_mlp(tb)
    return {"ours": lambda: f(tW1, tW2, tx), "numpy": lambda: hand_forward(W1, W2, x)}


def chain_candidates_numpy(tb: Any) -> dict[str, Candidate]:
    x0 = chain_x0()
    cands: dict[str, Candidate] = {}
    tx0 = tb.tensor(x0)
    ours = tb.value_and_grad(_tb_chain(tb))
    cands["ours"] = lambda: ours(tx0)
    cands["ours_compiled"] = _compiled(tb, ours, (x0,))

    autograd, anp = _import_autograd()
    if autograd is None:
        cands["autograd"] = NOT_INSTALLED
    else:

        def chain_ag(x0: Any) -> Any:
            x = x0
            for _ in range(CHAIN_STEPS):
                x = x * x0 + 0.0001
            return anp.sum(x)

        ag = autograd.value_and_grad(chain_ag)
        cands["autograd"] = lambda: ag(x0)

    torch = _import_torch()
    if torch is None:
        cands["torch"] = NOT_INSTALLED
    else:
        px0 = torch.from_numpy(x0.copy()).requires_grad_()

        def torch_chain() -> Any:
            x = px0
            for _ in range(CHAIN_STEPS):
                x = x * px0 + 0.0001
            y = x.sum()
            return y, torch.autograd.grad(y, px0)

        cands["torch"] = torch_chain
    return cands


def tf_candidates(tb: Any, tf: Any, workload: str) -> dict[str, Candidate]:
    """ours_eager, ours_compiled, tf_eager, tf_function for 'mlp' or 'chain'."""
    cands: dict[str, Candidate] = {}
    if workload == "mlp":
        arrays: tuple[np.ndarray, ...] = mlp_data()

        def tf_vg(W1: Any, W2: Any, x: Any) -> Any:
            with tf.GradientTape() as tape:
                tape.watch(W1)
                tape.watch(W2)
                tape.watch(x)
                y = tf.reduce_sum(tf.tanh(tf.linalg.matvec(W2, tf.tanh(tf.linalg.matvec(W1, x)))))
            return y, tape.gradient(y, [W1, W2, x])

        tb_fn: Callable[..., Any] = _tb_mlp(tb)
        argnums: Any = (0, 1, 2)
    else:
        arrays = (chain_x0(),)

        def tf_vg(x0: Any) -> Any:  # type: ignore[misc]
            with tf.GradientTape() as tape:
                tape.watch(x0)
                x = x0
                for _ in range(CHAIN_STEPS):
                    x = x * x0 + 0.0001
                y = tf.reduce_sum(x)
            return y, tape.gradient(y, x0)

        tb_fn = _tb_chain(tb)
        argnums = 0

    why = _tb_backend(tb, "tensorflow")
    if why is not None:
        cands["ours_eager"] = why
        cands["ours_compiled"] = why
    else:
        targs = tuple(tb.tensor(a, backend="tensorflow") for a in arrays)
        vg = tb.value_and_grad(tb_fn, argnums=argnums)
        cands["ours_eager"] = lambda: vg(*targs)
        cands["ours_compiled"] = _compiled(tb, vg, arrays, backend="tensorflow")

    consts = tuple(tf.constant(a) for a in arrays)
    others = tuple(tf.constant(a * np.float32(0.5)) for a in arrays)
    tf_compiled = tf.function(tf_vg)
    cands["tf_eager"] = lambda: tf_vg(*consts)
    cands["tf_function"] = (lambda: tf_compiled(*consts), lambda: tf_compiled(*others))
    return cands


# --------------------------------------------------------------------------------------------
# sections


def section_numpy(tb: Any) -> list[dict[str, Any]]:
    check_hand_backward()
    W1, W2, x = mlp_data()
    value, grads = hand_value_and_grad(W1, W2, x)
    want = [np.asarray(value), *grads]
    rows = []

    o = run_group(forward_candidates_numpy(tb), [np.asarray(hand_forward(W1, W2, x))])
    rows.append(make_row("mlp256 forward only [numpy]", o["ours"], "NumPy forward", o["numpy"]))

    o = run_group(mlp_candidates_numpy(tb), want)
    name = "mlp256 value_and_grad [numpy]"
    rows.append(
        make_row(name, o["ours"], "hand NumPy backward", o["hand"], ratio_max=MLP_RATIO_TARGET)
    )
    rows.append(make_row(name, o["ours"], "autograd", o["autograd"]))
    rows.append(make_row(name, o["ours"], "torch", o["torch"]))
    rows.append(
        make_row(
            "mlp256 value_and_grad [numpy, tb.function]", o["ours_compiled"],
            "hand NumPy backward", o["hand"], ratio_max=MLP_RATIO_TARGET,
        )
    )

    o = run_group(chain_candidates_numpy(tb), chain_reference(), rounds=11)
    name = "chain per-op [numpy]"
    kw: dict[str, Any] = {"per": CHAIN_OPS, "unit": "us/op"}
    rows.append(
        make_row(name, o["ours"], "autograd", o["autograd"], value_max=PER_OP_TARGET_US, **kw)
    )
    rows.append(make_row(name, o["ours"], "torch", o["torch"], **kw))
    rows.append(
        make_row(
            "chain per-op [numpy, tb.function]", o["ours_compiled"], "torch", o["torch"],
            value_max=PER_OP_TARGET_US, **kw,
        )
    )
    return rows


def section_tensorflow(tb: Any) -> list[dict[str, Any]]:
    tf = _import_tf()
    names = [
        ("mlp256 value_and_grad [tf eager]", "ours_eager", "TF eager GradientTape", "tf_eager"),
        ("mlp256 value_and_grad [tf compiled]", "ours_compiled", "tf.function GradientTape",
         "tf_function"),
    ]
    chain_names = [
        ("chain per-op [tf eager]", "ours_eager", "TF eager GradientTape", "tf_eager"),
        ("chain per-op [tf compiled]", "ours_compiled", "tf.function GradientTape",
         "tf_function"),
    ]
    if tf is None:
        na = Outcome(note=NOT_INSTALLED)
        return [make_row(n, na, p, na) for n, _, p, _ in names] + [
            make_row(n, na, p, na, unit="us/op") for n, _, p, _ in chain_names
        ]
    rows = []
    W1, W2, x = mlp_data()
    value, grads = hand_value_and_grad(W1, W2, x)
    o = run_group(tf_candidates(tb, tf, "mlp"), [np.asarray(value), *grads])
    for n, ours, p, peer in names:
        rows.append(make_row(n, o[ours], p, o[peer]))

    o = run_group(tf_candidates(tb, tf, "chain"), chain_reference(), rounds=9)
    for n, ours, p, peer in chain_names:
        rows.append(make_row(n, o[ours], p, o[peer], per=CHAIN_OPS, unit="us/op"))
    for r in rows:
        for side in ("ours", "peer"):
            d = r["details"][side]
            if d is not None and "compiled" in r["name"]:
                r.setdefault("notes", []).append(
                    f"{side} first call (trace/compile) {d['first_call_s']:.2f} s"
                )
    return rows


def main() -> list[dict[str, Any]]:
    import tensorbridge as tb

    rows: list[dict[str, Any]] = []
    for section in (section_numpy, section_tensorflow):
        try:
            rows.extend(section(tb))
        except Exception as e:  # a broken section is reported as an error row, not a crash
            rows.append({"name": section.__name__, "error": f"{type(e).__name__}: {e}"})
    return rows


if __name__ == "__main__":
    print(json.dumps(main(), indent=1, default=str))
