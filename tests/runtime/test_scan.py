"""tb.scan: a loop with carried state. Values against a Python loop in NumPy, derivatives
against finite differences (check_grads, forward and reverse, second order), vmap against
per-example runs, staging against eager execution, pytrees, reverse, and errors that name the
argument."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorbridge as tb


def f64(x: object) -> tb.Tensor:
    return tb.tensor(np.asarray(x, dtype=np.float64))


RNG = np.random.default_rng(7)
XS = RNG.normal(size=(6, 3))
W = RNG.normal(size=(3, 3)) * 0.4
H0 = RNG.normal(size=3)


def rnn_step(w: tb.Tensor):
    def step(h, x):
        h = tb.tanh(tb.matmul(w, h) + x)
        return h, tb.sum(h * h)
    return step


def rnn_numpy(w: np.ndarray, h: np.ndarray, xs: np.ndarray, reverse: bool = False):
    ys = [0.0] * len(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for t in order:
        h = np.tanh(w @ h + xs[t])
        ys[t] = float(h @ h)
    return h, np.array(ys)


@pytest.mark.parametrize("reverse", [False, True])
def test_values_match_a_python_loop(reverse: bool) -> None:
    h, ys = tb.scan(rnn_step(f64(W)), f64(H0), f64(XS), reverse=reverse)
    h_ref, ys_ref = rnn_numpy(W, H0, XS, reverse)
    np.testing.assert_allclose(h.numpy(), h_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ys.numpy(), ys_ref, rtol=1e-12, atol=1e-14)
    assert ys.shape == (6,)


@pytest.mark.parametrize("reverse", [False, True])
def test_gradients_match_finite_differences(reverse: bool) -> None:
    def f(w, h0, xs):
        h, ys = tb.scan(rnn_step(w), h0, xs, reverse=reverse)
        return tb.sum(h) + tb.sum(ys * tb.arange(6, dtype="float64"))

    tb.check_grads(f, (f64(W), f64(H0), f64(XS)), order=2)


def test_gradient_of_a_scalar_recurrence_is_the_closed_form() -> None:
    # s[t] = p s[t-1] + x[t], s[-1] = 0: d s[T-1] / dp = sum_k (T-1-k) x[k] p^(T-2-k)
    x = np.array([1.0, -2.0, 0.5, 3.0])
    p = 0.7
    g = tb.grad(lambda p: tb.scan(lambda c, xt: (p * c + xt, None), 0.0, f64(x))[0])(f64(p))
    n = len(x)
    ref = sum((n - 1 - k) * x[k] * p ** (n - 2 - k) for k in range(n - 1))
    np.testing.assert_allclose(g.numpy(), ref, rtol=1e-13)


def test_jvp_matches_finite_differences() -> None:
    def f(w):
        return tb.scan(rnn_step(w), f64(H0), f64(XS))[1]

    dw = f64(RNG.normal(size=(3, 3)))
    out, tan = tb.jvp(f, (f64(W),), (dw,))
    eps = 1e-6
    fd = (rnn_numpy(W + eps * dw.numpy(), H0, XS)[1]
          - rnn_numpy(W - eps * dw.numpy(), H0, XS)[1]) / (2 * eps)
    np.testing.assert_allclose(out.numpy(), rnn_numpy(W, H0, XS)[1], rtol=1e-12)
    np.testing.assert_allclose(tan.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_vmap_over_init_and_xs_matches_per_example_runs() -> None:
    k = 4
    h0s = RNG.normal(size=(k, 3))
    xss = RNG.normal(size=(k, 6, 3))
    run = lambda h0, xs: tb.scan(rnn_step(f64(W)), h0, xs)  # noqa: E731
    h, ys = tb.vmap(run)(f64(h0s), f64(xss))
    assert h.shape == (k, 3) and ys.shape == (k, 6)
    for b in range(k):
        h_ref, ys_ref = rnn_numpy(W, h0s[b], xss[b])
        np.testing.assert_allclose(h[b].numpy(), h_ref, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(ys[b].numpy(), ys_ref, rtol=1e-12, atol=1e-14)


def test_vmap_of_grad_through_scan() -> None:
    ps = np.array([0.2, -0.5, 0.9])
    x = f64(np.array([1.0, 2.0, -1.0]))
    g = tb.vmap(tb.grad(lambda p: tb.scan(lambda c, xt: (p * c + xt, None), 0.0, x)[0]))(
        f64(ps))
    np.testing.assert_allclose(g.numpy(), 2.0 * 1.0 * ps + 2.0, rtol=1e-13)


def test_staged_function_matches_eager_and_records_no_value_read() -> None:
    def f(w, h0, xs):
        return tb.scan(rnn_step(w), h0, xs)

    staged = tb.function(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an eager fallback would warn
        for _ in range(2):  # trace, then replay
            h, ys = staged(f64(W), f64(H0), f64(XS))
    h_ref, ys_ref = rnn_numpy(W, H0, XS)
    np.testing.assert_allclose(h.numpy(), h_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ys.numpy(), ys_ref, rtol=1e-12, atol=1e-14)
    w2 = W * 0.5
    h2, _ = staged(f64(w2), f64(H0), f64(XS))
    np.testing.assert_allclose(h2.numpy(), rnn_numpy(w2, H0, XS)[0], rtol=1e-12, atol=1e-14)


def test_staged_value_and_grad_matches_eager() -> None:
    def loss(w):
        h, ys = tb.scan(rnn_step(w), f64(H0), f64(XS))
        return tb.sum(ys) + tb.sum(h)

    vg = tb.value_and_grad(loss)
    staged = tb.function(vg)
    v_ref, g_ref = vg(f64(W))
    for _ in range(2):
        v, g = staged(f64(W))
        np.testing.assert_allclose(v.numpy(), v_ref.numpy(), rtol=1e-12)
        np.testing.assert_allclose(g.numpy(), g_ref.numpy(), rtol=1e-12, atol=1e-14)


def test_pytrees_in_carry_xs_and_ys() -> None:
    xs = {"a": f64(np.arange(5.0)), "b": (f64(np.ones((5, 2))),)}
    init = (f64(0.0), [f64(np.zeros(2))])

    def step(carry, x):
        s, (v,) = carry
        s = s + x["a"]
        v = v + x["b"][0] * s
        return (s, [v]), {"s": s, "pair": (v, None)}

    (s, (v,)), ys = tb.scan(step, init, xs)
    sums = np.cumsum(np.arange(5.0))
    np.testing.assert_allclose(s.numpy(), 10.0)
    np.testing.assert_allclose(v.numpy(), [sums.sum()] * 2)
    np.testing.assert_allclose(ys["s"].numpy(), sums)
    assert ys["pair"][1] is None
    np.testing.assert_allclose(ys["pair"][0].numpy(), np.cumsum(sums)[:, None] * np.ones(2))


def test_length_without_xs() -> None:
    def step(c, x):
        assert x is None
        return c * 2.0, c

    c, ys = tb.scan(step, f64(1.0), length=5)
    np.testing.assert_allclose(c.numpy(), 32.0)
    np.testing.assert_allclose(ys.numpy(), [1.0, 2.0, 4.0, 8.0, 16.0])
    c, ys = tb.scan(step, f64(1.0), length=3, reverse=True)
    np.testing.assert_allclose(ys.numpy(), [4.0, 2.0, 1.0])  # in the order of the steps' index


def test_a_number_as_init_takes_the_carry_dtype() -> None:
    c, ys = tb.scan(lambda c, x: (c + x, c), 0.0, f64([1.0, 2.0]))
    assert c.dtype == tb.float64 and ys.dtype == tb.float64
    np.testing.assert_allclose(ys.numpy(), [0.0, 1.0])


def test_hmm_forward_algorithm_with_logsumexp() -> None:
    k, n = 3, 8
    log_a = np.log(RNG.dirichlet(np.ones(k), size=k))  # [from, to]
    log_e = RNG.normal(size=(n, k))
    log_pi = np.log(np.full(k, 1.0 / k))

    def step(alpha, e):
        alpha = tb.logsumexp(tb.expand_dims(alpha, 1) + f64(log_a), axis=0) + e
        return alpha, None

    alpha, _ = tb.scan(step, f64(log_pi) + f64(log_e[0]), f64(log_e[1:]))
    a = np.exp(log_pi + log_e[0])
    for t in range(1, n):
        a = (a @ np.exp(log_a)) * np.exp(log_e[t])
    np.testing.assert_allclose(tb.logsumexp(alpha, axis=0).numpy(), np.log(a.sum()),
                               rtol=1e-12)

    def total(log_e):
        alpha, _ = tb.scan(step, f64(log_pi) + log_e[0], log_e[1:])
        return tb.logsumexp(alpha, axis=0)

    tb.check_grads(total, (f64(log_e),), order=1)


# -- errors ------------------------------------------------------------------------------------
def test_carry_shape_change_is_an_error_naming_fns_carry() -> None:
    def grows(c, x):
        return tb.concat([c, tb.reshape(x, (1,))]), x

    with pytest.raises(TypeError, match=r"fn: grows's carry \(leaf 0\) changed from shape "
                                        r"\[1\] float64 to shape \[2\] float64 at step 0"):
        tb.scan(grows, f64([0.0]), f64([1.0, 2.0]))


def test_carry_dtype_change_is_an_error_naming_fns_carry() -> None:
    def to32(c, x):
        return (c + x).astype("float32"), x

    with pytest.raises(TypeError, match=r"fn: to32's carry \(leaf 0\) changed from shape \[\] "
                                        r"float64 to shape \[\] float32"):
        tb.scan(to32, f64(0.0), f64([1.0, 2.0]))


def test_carry_structure_change_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"fn: <lambda>'s carry changed structure"):
        tb.scan(lambda c, x: ((c, c), x), f64(0.0), f64([1.0]))


def test_fn_must_return_a_pair() -> None:
    with pytest.raises(TypeError, match=r"fn: <lambda> must return a pair \(carry, y\), got "
                                        r"a tensor"):
        tb.scan(lambda c, x: c + x, f64(0.0), f64([1.0]))
    with pytest.raises(TypeError, match=r"fn: expected a function"):
        tb.scan(3, f64(0.0), f64([1.0]))


def test_y_shape_change_is_an_error() -> None:
    def ragged(c, x):
        return c + 1.0, tb.zeros((int(c.numpy()) + 1,), "float64")

    with pytest.raises(TypeError, match=r"fn: ragged's output y \(leaf 0\) changed from shape "
                                        r"\[1\] float64 to shape \[2\] float64 at step 1"):
        tb.scan(ragged, f64(0.0), length=3)


def test_xs_and_length_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match=r"length: give length when xs is None"):
        tb.scan(lambda c, x: (c, c), f64(0.0))
    with pytest.raises(ValueError, match=r"xs: leaf 1 has 3 steps on its leading axis but the "
                                         r"first tensor of xs says 2"):
        tb.scan(lambda c, x: (c, c), f64(0.0), (f64([1.0, 2.0]), f64([1.0, 2.0, 3.0])))
    with pytest.raises(ValueError, match=r"xs: leaf 0 has 2 steps on its leading axis but "
                                         r"length says 5"):
        tb.scan(lambda c, x: (c, c), f64(0.0), f64([1.0, 2.0]), length=5)
    with pytest.raises(ValueError, match=r"xs: every tensor needs a leading axis"):
        tb.scan(lambda c, x: (c, c), f64(0.0), f64(1.0))
    with pytest.raises(ValueError, match=r"length: need at least one step, got 0"):
        tb.scan(lambda c, x: (c, c), f64(0.0), length=0)
    with pytest.raises(TypeError, match=r"length: expected an integer number of steps"):
        tb.scan(lambda c, x: (c, c), f64(0.0), length=2.5)
    with pytest.raises(TypeError, match=r"reverse: expected True or False"):
        tb.scan(lambda c, x: (c, c), f64(0.0), length=2, reverse="yes")
    with pytest.raises(TypeError, match=r"init: expected tensors"):
        tb.scan(lambda c, x: (c, c), object(), length=2)
