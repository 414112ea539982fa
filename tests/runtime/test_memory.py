"""memory(), dispose(), tidy() and keep(): counts return to their baseline."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import tensorbridge as tb


def _counts(backend: str) -> tuple[int, int]:
    gc.collect()
    m = tb.memory(backend)
    return m["num_tensors"], m["num_bytes"]


def test_memory_counts_follow_tensors(backend: str) -> None:
    base = _counts(backend)
    x = tb.zeros((10, 10), "float64", backend)
    n, b = _counts(backend)
    assert n == base[0] + 1 and b == base[1] + 800
    del x
    assert _counts(backend) == base


def test_dispose_releases_and_later_use_names_the_tensor(backend: str) -> None:
    base = _counts(backend)
    x = tb.ones((4,), backend=backend)
    x.dispose()
    x.dispose()  # safe twice
    assert _counts(backend) == base
    assert x.is_disposed
    with pytest.raises(tb.DisposedTensorError, match=f"tensor {x.id} was disposed"):
        x + 1.0
    with pytest.raises(tb.DisposedTensorError):
        x.numpy()
    assert "disposed" in repr(x)


def test_shared_buffer_counted_once(backend: str) -> None:
    base = _counts(backend)
    x = tb.ones((6,), backend=backend)
    y = x.reshape(2, 3)
    m = tb.memory(backend)
    assert m["num_tensors"] == base[0] + 2 and m["num_data_buffers"] >= 1
    assert m["num_bytes"] == base[1] + 24
    x.dispose()
    assert y.tolist() == [[1.0] * 3] * 2  # the view keeps the buffer alive
    del y
    assert _counts(backend) == base


def test_tidy_function_disposes_intermediates(backend: str) -> None:
    base = _counts(backend)
    x = tb.ones((5,), backend=backend)

    def work(x: tb.Tensor) -> dict:
        a = x * 2.0
        b = tb.exp(a)
        return {"out": b - 1.0, "list": [a * 0.0]}

    res = tb.tidy(work, x)
    n, _ = _counts(backend)
    assert n == base[0] + 3  # x, out, list[0]; the intermediates are gone
    assert not res["out"].is_disposed and not x.is_disposed
    del res, x
    assert _counts(backend) == base


def test_tidy_context_manager_and_keep(backend: str) -> None:
    base = _counts(backend)
    with tb.tidy():
        a = tb.ones((3,), backend=backend)
        kept = tb.keep(a * 3.0)
        _ = a + 1.0
    assert a.is_disposed and not kept.is_disposed
    assert kept.tolist() == [3.0, 3.0, 3.0]
    del kept, a, _
    assert _counts(backend) == base


def test_nested_tidy_returns_to_parent(backend: str) -> None:
    base = _counts(backend)

    def outer() -> tb.Tensor:
        inner = tb.tidy(lambda: tb.ones((2,), backend=backend) * 5.0)
        return inner + 1.0

    out = tb.tidy(outer)
    assert out.tolist() == [6.0, 6.0]
    del out
    assert _counts(backend) == base


def test_tidy_under_grad_returns_to_baseline() -> None:
    base = _counts("numpy")
    w0 = tb.tensor(np.ones((4, 4), np.float32))
    for _ in range(5):
        tb.tidy(tb.grad(lambda w: tb.tanh(w @ w).sum()), w0)
    del w0
    assert _counts("numpy") == base


def test_tidy_is_per_thread() -> None:
    """A tidy scope on one thread never disposes tensors another thread creates."""
    made: list[tb.Tensor] = []
    started, release = threading.Event(), threading.Event()

    def other() -> None:
        started.wait()
        made.append(tb.ones((2,)))
        release.set()

    t = threading.Thread(target=other)
    t.start()
    with tb.tidy():
        started.set()
        release.wait()
    t.join()
    assert not made[0].is_disposed


def test_many_tensors_from_threads_back_to_baseline() -> None:
    base = _counts("numpy")

    def work() -> None:
        for _ in range(2000):
            x = tb.ones((3,)) * 2.0
            x.reshape(3, 1).dispose()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _counts("numpy") == base


def test_gradients_free_their_intermediates_without_the_cycle_collector() -> None:
    """Reverse-mode tapes are released when the gradient is done, not left to gc."""
    w = tb.tensor(np.ones((4, 4)))
    gc.collect()
    gc.disable()
    try:
        base = tb.memory("numpy")["num_tensors"]
        for _ in range(10):
            tb.grad(lambda w: tb.tanh(w @ w).sum())(w)
        out, fn = tb.vjp(lambda w: tb.exp(w) * 2.0, w)
        g = fn(tb.ones_like(w))
        del fn, out, g
        assert tb.memory("numpy")["num_tensors"] == base
    finally:
        gc.enable()
