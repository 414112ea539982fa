"""The differentiation API: structures, composition, higher order, custom primitives, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb


def _t(a, backend="numpy"):
    return tb.tensor(np.asarray(a, dtype=np.float64), backend=backend)


def test_grad_matches_analytic(backend: str) -> None:
    x = _t([0.3, -1.2, 2.0], backend)
    g = tb.grad(lambda x: tb.sum(tb.sin(x) * x))(x)
    xv = x.numpy()
    np.testing.assert_allclose(g.numpy(), np.cos(xv) * xv + np.sin(xv))
    assert g.backend.name == backend


def test_value_and_grad_argnums_and_structures(backend: str) -> None:
    params = {"w": _t([[1.0, 2.0], [3.0, 4.0]], backend), "b": [_t([0.5, -0.5], backend)]}
    x = _t([1.0, -1.0], backend)

    def loss(p, x):
        return tb.sum(tb.square(p["w"] @ x + p["b"][0]))

    val, (gp, gx) = tb.value_and_grad(loss, argnums=(0, 1))(params, x)
    w, b, xv = params["w"].numpy(), params["b"][0].numpy(), x.numpy()
    r = w @ xv + b
    assert val.item() == pytest.approx(np.sum(r**2))
    np.testing.assert_allclose(gp["w"].numpy(), 2 * np.outer(r, xv))
    np.testing.assert_allclose(gp["b"][0].numpy(), 2 * r)
    np.testing.assert_allclose(gx.numpy(), 2 * w.T @ r)
    assert list(gp) == ["w", "b"]


def test_has_aux() -> None:
    (val, aux), _ = tb.value_and_grad(lambda x: (tb.sum(x * x), {"n": 3}), has_aux=True)(
        _t([1.0, 2.0]))
    assert aux == {"n": 3} and val.item() == 5.0
    g2, aux2 = tb.grad(lambda x: (tb.sum(x * x), x * 2.0), has_aux=True)(_t([1.0]))
    assert g2.tolist() == [2.0] and aux2.tolist() == [2.0]


def test_unused_input_gets_zero_gradient() -> None:
    g = tb.grad(lambda x, y: tb.sum(x), argnums=1)(_t([1.0]), _t([2.0, 3.0]))
    assert g.tolist() == [0.0, 0.0]


def test_gradient_through_shared_subexpression() -> None:
    # y used twice: contributions must accumulate
    g = tb.grad(lambda x: tb.sum((x * x) * (x * x)))(_t([2.0]))
    assert g.tolist() == [32.0]


def test_jacobian_and_jacfwd_agree_with_analytic(backend: str) -> None:
    a = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    A = _t(a, backend)

    def f(x):
        return tb.tanh(A @ x)

    x = _t([0.1, -0.2, 0.3], backend)
    want = (1 - np.tanh(a @ x.numpy()) ** 2)[:, None] * a
    np.testing.assert_allclose(tb.jacobian(f)(x).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(tb.jacfwd(f)(x).numpy(), want, rtol=1e-12)


def test_hessian_and_hvp(backend: str) -> None:
    def f(x):
        return tb.exp(x[0] * x[1]) + tb.sum(x**3.0)

    x = _t([0.5, -0.3], backend)
    a, b = x.numpy()
    e = np.exp(a * b)
    want = np.array([[b * b * e + 6 * a, e + a * b * e], [e + a * b * e, a * a * e + 6 * b]])
    np.testing.assert_allclose(tb.hessian(f)(x).numpy(), want, rtol=1e-10)
    v = _t([1.0, 2.0], backend)
    np.testing.assert_allclose(tb.hvp(f, (x,), (v,)).numpy(), want @ v.numpy(), rtol=1e-10)


def test_third_derivative_by_nesting() -> None:
    d3 = tb.grad(tb.grad(tb.grad(lambda x: tb.sum(tb.sin(x)))))
    assert d3(_t(0.7)).item() == pytest.approx(-np.cos(0.7))


def test_jvp_of_grad_equals_grad_of_jvp() -> None:
    def f(x):
        return tb.sum(tb.log1p(x * x) * x)

    x, v = _t([0.3, 1.1]), _t([1.0, -2.0])
    fwd_over_rev = tb.jvp(tb.grad(f), (x,), (v,))[1]
    rev_over_fwd = tb.grad(lambda x: tb.jvp(f, (x,), (v,))[1])(x)
    np.testing.assert_allclose(fwd_over_rev.numpy(), rev_over_fwd.numpy(), rtol=1e-12)


def test_vjp_function_reusable() -> None:
    _, fn = tb.vjp(lambda x: x * 3.0, _t([1.0, 2.0]))
    assert fn(_t([1.0, 0.0]))[0].tolist() == [3.0, 0.0]
    assert fn(_t([0.0, 2.0]))[0].tolist() == [0.0, 6.0]


def test_item_assignment_alternative_is_differentiable() -> None:
    def f(x):
        y = tb.index_update(x, 1, x[0] * 10.0)
        return tb.sum(y * y)

    x = _t([1.0, 2.0, 3.0])
    # y = [x0, 10 x0, x2] -> df/dx0 = 2 x0 + 200 x0, df/dx1 = 0, df/dx2 = 2 x2
    assert tb.grad(f)(x).tolist() == [202.0, 0.0, 6.0]


def test_where_with_comparison_inside_grad() -> None:
    g = tb.grad(lambda x: tb.sum(tb.where(x > 0, x * x, -x)))(_t([2.0, -3.0]))
    assert g.tolist() == [4.0, -1.0]


def test_stop_gradient() -> None:
    g = tb.grad(lambda x: tb.sum(x * tb.stop_gradient(x)))(_t([3.0]))
    assert g.tolist() == [3.0]


def test_gradient_of_tracer_shape_ops_and_dtype_promotion() -> None:
    g = tb.grad(lambda x: tb.sum(tb.cast(x, "float64") * 2))(tb.tensor([1.0, 2.0]))
    assert g.dtype is tb.float32 and g.tolist() == [2.0, 2.0]


# -- custom primitives ---------------------------------------------------------------------------
@tb.primitive
def logaddexp(x, y):
    m = tb.maximum(x, y)
    return m + tb.log(tb.exp(x - m) + tb.exp(y - m))


logaddexp.defvjp(lambda g, ans, x, y: g * tb.exp(x - ans), lambda g, ans, x, y: g * tb.exp(y - ans))


def test_custom_primitive_both_modes_second_order(backend: str) -> None:
    x, y = _t([0.2, 3.0], backend), _t([1.0, -4.0], backend)
    np.testing.assert_allclose(logaddexp(x, y).numpy(), np.logaddexp(x.numpy(), y.numpy()))
    tb.check_grads(logaddexp, (x, y), order=2)  # JVP derived from the VJP by transposition


def test_custom_primitive_with_params_and_jvp() -> None:
    @tb.primitive
    def scaled_cube(x, *, k):
        return k * x * x * x

    scaled_cube.defvjp(lambda g, ans, x, *, k: g * 3.0 * k * x * x)
    scaled_cube.defjvp(lambda t, ans, x, *, k: t * 3.0 * k * x * x)
    tb.check_grads(lambda x: scaled_cube(x, k=2.0), (_t([0.5, -1.5]),), order=3)


def test_check_grads_catches_a_wrong_rule() -> None:
    @tb.primitive
    def bad_square(x):
        return x * x

    bad_square.defvjp(lambda g, ans, x: g * 2.1 * x)
    with pytest.raises(AssertionError, match=r"bad_square|vjp|jvp"):
        tb.check_grads(bad_square, (_t([0.5, 1.5]),), order=1)


def test_custom_primitive_without_rule_is_not_differentiable() -> None:
    @tb.primitive
    def opaque(x):
        return x * 2.0

    assert opaque(_t([1.0])).tolist() == [2.0]
    with pytest.raises(tb.NonDifferentiableError, match="'opaque' is not differentiable"):
        tb.grad(lambda x: tb.sum(opaque(x)))(_t([1.0]))


# -- bad input -------------------------------------------------------------------------------------
def test_grad_of_nonscalar_names_shape() -> None:
    with pytest.raises(tb.ShapeError, match=r"must return a scalar \(shape \[\]\), got \[2\]"):
        tb.grad(lambda x: x * 2.0)(_t([1.0, 2.0]))


def test_grad_wrt_integer_input_is_explained() -> None:
    with pytest.raises(tb.NonDifferentiableError, match=r"floating-point.*int32"):
        tb.grad(lambda x: tb.sum(x))(tb.tensor([1, 2]))


def test_non_differentiable_op_is_named() -> None:
    with pytest.raises(tb.NonDifferentiableError, match="'floordiv'"):
        tb.grad(lambda x: tb.sum(x // 2.0))(_t([3.0]))


def test_argnums_out_of_range() -> None:
    with pytest.raises(ValueError, match="argnums"):
        tb.grad(lambda x: tb.sum(x), argnums=2)(_t([1.0]))


def test_jvp_tangent_shape_mismatch() -> None:
    with pytest.raises(tb.ShapeError, match=r"tangents\[0\]: shape \[3\] does not match"):
        tb.jvp(lambda x: x, (_t([1.0, 2.0]),), (_t([1.0, 2.0, 3.0]),))
