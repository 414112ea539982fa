"""The greta-style graph: node kinds, shape inference at creation, '?' printing, model
collection and ordering, bijectors, joint log density (batched) against SciPy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import tensorbridge as tb
from tensorbridge.runtime.graph import bijectors as B
from tensorbridge.runtime.graph.nodes import OperationNode


def _regression(backend: str = "numpy"):
    rng = np.random.default_rng(1)
    xv = rng.normal(size=(20, 3))
    yv = xv @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=20)
    x = tb.as_data(xv, backend=backend)
    y = tb.as_data(yv, backend=backend)
    beta = tb.normal(0.0, 10.0, dim=3)
    sd = tb.variable(lower=0.0, backend=backend)
    tb.distribution(y, tb.normal(x @ beta, sd))
    return tb.model(beta, sd), xv, yv, beta, sd


def test_unknown_values_print_as_question_marks() -> None:
    v = tb.variable(dim=(2, 3))
    text = repr(v)
    assert text.splitlines()[0].startswith("LazyArray(variable, shape=(2, 3)")
    assert text.count("?") == 6
    d = tb.as_data([[1.0, 2.0]])
    assert "?" not in repr(d * 3.0) and "6" in repr(d * 3.0)
    assert repr(d @ tb.variable(dim=2)).count("?") == 1


def test_shape_errors_raised_at_the_line_naming_both_shapes() -> None:
    x = tb.as_data(np.ones((4, 3)))
    with pytest.raises(tb.ShapeError, match=r"\[4, 3\].*\[2\]"):
        x @ tb.variable(dim=2)
    with pytest.raises(tb.ShapeError, match=r"x\[4, 3\] and y\[5\]"):
        x + tb.variable(dim=5)


def test_operation_nodes_know_parents_and_children() -> None:
    a = tb.variable(dim=2)
    b = tb.exp(a) * 2.0
    assert isinstance(b.node, OperationNode)
    assert b.node.parents[0].parents == [a.node]
    assert a.node.children[0] is b.node.parents[0]
    assert not b.node.known and tb.as_data([1.0]).node.known


def test_reading_an_unknown_value_is_explained() -> None:
    with pytest.raises(ValueError, match="no value yet"):
        float(tb.sum(tb.variable(dim=2)))


def test_model_finds_likelihood_and_orders_topologically() -> None:
    m, *_ = _regression()
    kinds = [n.kind for n in m.order]
    assert kinds.count("variable") == 2 and kinds.count("distribution") == 2
    pos = {n: i for i, n in enumerate(m.order)}
    for n in m.order:
        for p in n.parents:
            assert pos[p] < pos[n]
    assert len(set(m.order)) == len(m.order)
    assert m.n_free == 4


def test_log_density_matches_scipy_and_batches() -> None:
    m, xv, yv, _, _ = _regression()
    rng = np.random.default_rng(2)
    free = rng.normal(size=(5, 4))
    batched = m.log_density(free).numpy()
    for i in range(5):
        b, s = free[i, :3], np.exp(free[i, 3])
        want = (stats.norm.logpdf(yv, xv @ b, s).sum() + stats.norm.logpdf(b, 0, 10).sum()
                + free[i, 3])  # log-Jacobian of sd = exp(free)
        assert m.log_density(free[i]).item() == pytest.approx(want, rel=1e-12)
        assert batched[i] == pytest.approx(want, rel=1e-12)
        unadj = m.log_density(free[i], adjusted=False).item()
        assert unadj == pytest.approx(want - free[i, 3], rel=1e-12)


def test_log_density_gradient_matches_finite_differences() -> None:
    m, *_ = _regression()
    free = tb.tensor(np.random.default_rng(3).normal(size=(3, 4)))
    val, grad = m.log_density_and_grad(free)
    assert val.shape == (3,) and grad.shape == (3, 4)
    eps = 1e-6
    for i in range(3):
        for j in range(4):
            up = free.numpy().copy()
            dn = up.copy()
            up[i, j] += eps
            dn[i, j] -= eps
            fd = (m.log_density(up[i]).item() - m.log_density(dn[i]).item()) / (2 * eps)
            assert grad.numpy()[i, j] == pytest.approx(fd, rel=1e-6, abs=1e-6)


def test_constrain_unconstrain_round_trip() -> None:
    m, *_ = _regression()
    free = tb.tensor([0.1, -0.2, 0.3, 0.7], dtype="float64")
    values = m.constrain(free)
    sd_value = next(v for k, v in values.items() if k.node.constraint.kind == "greater_than")
    assert sd_value.item() == pytest.approx(np.exp(0.7))
    np.testing.assert_allclose(m.unconstrain(values).numpy(), free.numpy(), rtol=1e-12)
    batch = m.constrain(np.zeros((2, 4)))
    assert all(v.shape[0] == 2 for v in batch.values())


@pytest.mark.parametrize(
    "constraint",
    [B.real, B.greater_than(-1.0), B.less_than(2.0), B.interval(-1.0, 3.0)],
    ids=str,
)
def test_bijectors_invert_and_log_jacobian(constraint) -> None:
    bij = B.biject_to(constraint)
    free = tb.tensor(np.linspace(-3, 3, 7))
    y = bij.forward(free)
    assert bool(tb.sum(tb.cast(constraint.check(y), "int32")) == 7)
    np.testing.assert_allclose(bij.inverse(y).numpy(), free.numpy(), rtol=1e-9, atol=1e-12)
    # log |dy/dx| from autodiff, elementwise
    dydx = tb.vmap(tb.grad(lambda f: bij.forward(f)))(free)
    np.testing.assert_allclose(bij.log_det_jacobian(free).numpy(),
                               np.log(np.abs(dydx.numpy())), rtol=1e-9, atol=1e-12)


def test_calculate_with_feed_dict() -> None:
    x = tb.as_data(np.array([[1.0, 2.0], [3.0, 4.0]]))
    beta = tb.variable(dim=2)
    mu = x @ beta + 1.0
    assert tb.calculate(mu, values={beta: [1.0, 1.0]}).tolist() == [4.0, 8.0]
    out = tb.calculate({"mu": mu, "b": beta}, values={beta: [0.0, 1.0]})
    assert out["mu"].tolist() == [3.0, 5.0]
    with pytest.raises(ValueError, match="needed but has no value"):
        tb.calculate(mu)
    with pytest.raises(ValueError, match=r"shape \[2\], got \[3\]"):
        tb.calculate(mu, values={beta: [1.0, 2.0, 3.0]})


def test_unneeded_intermediates_are_not_kept() -> None:
    m, *_ = _regression()
    free = tb.zeros((4,), "float64")
    d = m.distributions
    wanted = [t for dd in d for t in (dd.target, *dd.parents)]
    values, _ = m._values(free, wanted)
    ops_kept = [n for n in values if isinstance(n, OperationNode)]
    assert all(n in wanted for n in ops_kept)


def test_distribution_assignment_errors() -> None:
    v = tb.variable(dim=2)
    with pytest.raises(TypeError, match="create it from the distribution"):
        tb.distribution(v, tb.normal(0.0, 1.0, dim=2))
    y = tb.as_data(np.ones(3))
    with pytest.raises(ValueError, match=r"\[2\] do not match the target's shape \[3\]"):
        tb.distribution(y, tb.normal(tb.variable(dim=2), 1.0))
    with pytest.raises(ValueError, match="no variables"):
        tb.model(tb.as_data([1.0]))


def test_model_on_every_backend_gives_the_same_density(backend: str) -> None:
    with tb.use_backend(backend):
        m, *_ = _regression(backend)
    m_np, *_ = _regression("numpy")
    free = np.random.default_rng(5).normal(size=(2, 4))
    np.testing.assert_allclose(m.log_density(free).numpy(), m_np.log_density(free).numpy(),
                               rtol=1e-10)


def test_long_operation_chains_build_without_recursion() -> None:
    """Whether a node is known (data only) is decided when it is made: a 3000-op chain (an
    unrolled time series) neither recurses nor re-walks its ancestors."""
    from tensorbridge.runtime.graph.nodes import node_of

    x = tb.normal(0.0, 1.0)
    y = x
    for _ in range(3000):
        y = y * 0.999 + 0.001
    d = tb.as_data(2.0)
    z = d
    for _ in range(3000):
        z = z * 1.0
    assert not node_of(y).known and node_of(z).known
    tb.distribution(tb.as_data(0.5), tb.normal(y, 1.0))
    assert tb.model(x).n_free == 1
