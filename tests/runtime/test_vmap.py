"""vmap: a batched run equals stacking per-example runs, for every op in the table; it composes
with grad and jvp; unbatched arguments broadcast."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb

from .test_ops_table import CASES


def _batch(a: np.ndarray, k: int) -> np.ndarray:
    return np.stack([a * (1.0 + 0.1 * i) + 0.01 * i for i in range(k)])


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("which", ["all", "first"])
def test_vmap_matches_per_example(case, which: str, backend: str) -> None:
    if case.name in ("prod_with_zero",) and which == "all":
        pytest.skip("scaling would move the zero; covered by 'first'")
    k = 3
    arrays = [i for i, a in enumerate(case.args) if isinstance(a, np.ndarray)
              and a.dtype.kind == "f"]
    batched = arrays if which == "all" else arrays[:1]
    args, axes = [], []
    for i, a in enumerate(case.args):
        if i in batched:
            args.append(tb.tensor(_batch(a, k), backend=backend))
            axes.append(0)
        else:
            args.append(tb.tensor(a, backend=backend) if isinstance(a, np.ndarray) else a)
            axes.append(None)
    out = tb.vmap(case.fn, in_axes=tuple(axes))(*args)
    for b in range(k):
        ex = [args[i][b] if axes[i] == 0 else args[i] for i in range(len(args))]
        np.testing.assert_allclose(out[b].numpy(), case.fn(*ex).numpy(), rtol=1e-12,
                                   atol=1e-12)


def test_vmap_of_grad_and_grad_of_vmap() -> None:
    def f(w, x):
        return tb.sum(tb.tanh(x @ w))

    x = tb.tensor(np.random.default_rng(0).normal(size=(5, 3)))
    ws = tb.tensor(np.random.default_rng(1).normal(size=(4, 3)))
    per_chain = tb.vmap(tb.grad(f), in_axes=(0, None))(ws, x)
    for b in range(4):
        np.testing.assert_allclose(per_chain[b].numpy(), tb.grad(f)(ws[b], x).numpy(),
                                   rtol=1e-12)
    total = tb.grad(lambda ws: tb.sum(tb.vmap(f, in_axes=(0, None))(ws, x)))(ws)
    np.testing.assert_allclose(total.numpy(), per_chain.numpy(), rtol=1e-12)


def test_vmap_custom_primitive_falls_back_to_loop() -> None:
    @tb.primitive
    def cube(x):
        return x * x * x

    cube.defvjp(lambda g, ans, x: g * 3.0 * x * x)
    xs = tb.tensor(np.arange(6.0).reshape(3, 2))
    np.testing.assert_allclose(tb.vmap(cube)(xs).numpy(), xs.numpy() ** 3)
    g = tb.vmap(tb.grad(lambda x: tb.sum(cube(x))))(xs)
    np.testing.assert_allclose(g.numpy(), 3 * xs.numpy() ** 2)


def test_in_axes_and_out_axes() -> None:
    x = tb.tensor(np.arange(6.0).reshape(2, 3))
    out = tb.vmap(lambda v: v * 2.0, in_axes=1, out_axes=1)(x)
    np.testing.assert_array_equal(out.numpy(), x.numpy() * 2)
    with pytest.raises(ValueError, match="disagree"):
        tb.vmap(lambda a, b: a + b)(tb.ones((2, 3)), tb.ones((3, 3)))
