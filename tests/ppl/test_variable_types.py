"""greta's variable types (issue 16): ``ordered_variable``, ``simplex_variable``,
``cholesky_variable`` and ``variable()`` with array bounds: their bijectors (round trip, support,
log-Jacobian against a finite-difference Jacobian) and models sampled with each, by the NumPy
sampler and by the compiled one (so the lowering covers the bijectors' ops)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.compiled import build
from tensorbridge.runtime.graph import bijectors as B
from tensorbridge.runtime.ppl import mcmc

C_REASON = build.compiler_available()
BACKENDS = ["numpy", pytest.param("compiled", marks=pytest.mark.skipif(
    C_REASON is not None, reason=f"no C here: {C_REASON}"))]
INF = math.inf


def T(x: Any) -> Any:
    return tb.tensor(np.asarray(x, dtype=np.float64))


def _bounded() -> B.Constraint:
    return B.bounded([0.0, -INF, -INF, 2.0], [1.0, INF, 5.0, INF], (2, 2))


def _upper_chol() -> B.Constraint:
    return B.Constraint("cholesky_factor", upper_factor=True)


# constraint, value shape, the coordinates of a value that the free vector parameterises
CASES = {
    "ordered": (B.ordered, (4,), lambda v: v.reshape(-1)),
    "cholesky_factor": (B.cholesky_factor, (3, 3), lambda v: v[np.tril_indices(3)]),
    "cholesky_upper": (_upper_chol(), (3, 3), lambda v: v.T[np.tril_indices(3)]),
    "bounded": (_bounded(), (2, 2), lambda v: v.reshape(-1)),
}


def _fd_jacobian(f: Any, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences, in NumPy: independent of the runtime's autodiff."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("case", list(CASES))
def test_bijector_round_trip_support_and_log_jacobian(case: str) -> None:
    constraint, shape, coords = CASES[case]
    bij = B.biject_to(constraint)
    free_shape = bij.free_shape(shape)
    rng = np.random.default_rng(3)
    for _ in range(3):
        free = rng.normal(size=free_shape) * 1.2
        value = bij.forward(T(free))
        assert tuple(value.shape) == shape
        assert bool(tb.min(tb.cast(constraint.check(value), "int32")) == 1)
        np.testing.assert_allclose(bij.inverse(value).numpy(), free, rtol=1e-9, atol=1e-10)

        def f(x: np.ndarray) -> np.ndarray:
            return coords(bij.forward(T(x)).numpy())

        jac = _fd_jacobian(lambda x: f(x.reshape(free_shape)), free.reshape(-1))
        want = np.linalg.slogdet(jac)[1]
        got = float(np.sum(bij.log_det_jacobian(T(free)).numpy()))
        # central differences are good to ~h^2 and ~eps/h relative: 1e-6 is ample
        assert got == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_simplex_bijector_log_jacobian_against_finite_differences() -> None:
    # the existing stick-breaking bijector (dirichlet's), which simplex_variable reuses
    bij = B.biject_to(B.simplex)
    free = np.random.default_rng(1).normal(size=3)
    jac = _fd_jacobian(lambda x: bij.forward(T(x)).numpy()[:-1], free)
    assert float(bij.log_det_jacobian(T(free)).numpy()) == pytest.approx(
        np.linalg.slogdet(jac)[1], rel=1e-6, abs=1e-6)


def test_constructors_shapes_supports_and_checks() -> None:
    assert tb.ordered_variable(3).node.constraint == B.ordered
    assert tb.simplex_variable((2, 4)).shape == (2, 4)
    assert tb.cholesky_variable(3).shape == (3, 3)
    assert tb.cholesky_variable((2, 2), correlation=True).node.constraint == \
        B.correlation_cholesky
    assert tb.variable(lower=[0.0, 1.0], upper=5.0, dim=2).node.constraint.kind == "bounded"
    # the same bounds everywhere: the scalar support
    assert tb.variable(lower=[0.0, 0.0], dim=2).node.constraint == B.greater_than(0.0)
    with pytest.raises(ValueError, match="ordered_variable: dim's last dimension"):
        tb.ordered_variable(1)
    with pytest.raises(ValueError, match="cholesky_variable: dim must be n"):
        tb.cholesky_variable((2, 3))
    with pytest.raises(TypeError, match="cholesky_variable: correlation must be"):
        tb.cholesky_variable(2, correlation="yes")
    with pytest.raises(ValueError, match="variable: lower must be less than upper"):
        tb.variable(lower=[0.0, 3.0], upper=[1.0, 2.0], dim=2)
    with pytest.raises(ValueError, match="variable: lower of shape \\[3\\] does not broadcast"):
        tb.variable(lower=[0.0, 1.0, 2.0], dim=2)
    with pytest.raises(ValueError, match="variable: upper must be a number or an array"):
        tb.variable(upper=[1.0, float("nan")], dim=2)


def _ess_tol(d: np.ndarray, n_eff: float = 200.0) -> float:
    """Five Monte Carlo standard errors, with a conservative effective sample size."""
    return 5.0 * float(np.std(d)) / math.sqrt(n_eff)


@pytest.mark.parametrize("backend", BACKENDS)
def test_simplex_variable_with_multinomial_counts_is_dirichlet(backend: str) -> None:
    # flat prior on the simplex x multinomial counts: the posterior is Dirichlet(1 + counts)
    counts = np.array([[3.0, 9.0, 1.0]])
    x = tb.simplex_variable(3)
    tb.distribution(tb.as_data(counts), tb.multinomial(13.0, tb.reshape(x, (1, 3))))
    d = mcmc(tb.model(x), n_samples=600, warmup=400, chains=2, seed=4, progress=False,
             backend=backend)
    draws = d["x"].reshape(-1, 3)
    assert draws.min() > 0
    np.testing.assert_allclose(draws.sum(axis=1), 1.0, atol=1e-12)
    alpha = 1.0 + counts[0]
    mean = alpha / alpha.sum()
    for j in range(3):
        assert abs(draws[:, j].mean() - mean[j]) < _ess_tol(draws[:, j])


@pytest.mark.parametrize("backend", BACKENDS)
def test_ordered_variable_draws_are_sorted_and_match_rejection_sampling(backend: str) -> None:
    y = np.array([1.0, 0.0, 0.5])
    x = tb.ordered_variable(3)
    tb.distribution(tb.as_data(y), tb.normal(x, 1.0))
    rows = tb.ordered_variable((2, 3))  # two rows, each increasing (flat prior: no data)
    tb.distribution(tb.as_data(np.zeros((2, 3))), tb.normal(rows, 1.0))
    d = mcmc(tb.model(x, rows), n_samples=600, warmup=400, chains=2, seed=2, progress=False,
             backend=backend)
    draws = d["x"].reshape(-1, 3)
    assert np.all(np.diff(draws, axis=1) > 0)
    assert np.all(np.diff(d["rows"], axis=-1) > 0)
    # the posterior: independent normal(y_i, 1) restricted to x_1 < x_2 < x_3
    z = np.random.default_rng(0).normal(y, 1.0, size=(400_000, 3))
    ref = z[np.all(np.diff(z, axis=1) > 0, axis=1)].mean(axis=0)
    for j in range(3):
        assert abs(draws[:, j].mean() - ref[j]) < _ess_tol(draws[:, j])


@pytest.mark.parametrize("backend", BACKENDS)
def test_cholesky_variable_draws_are_lower_triangular_factors(backend: str) -> None:
    rng = np.random.default_rng(8)
    sigma = np.array([[2.0, 0.6], [0.6, 1.0]])
    obs = rng.multivariate_normal([0.0, 0.0], sigma, size=400)
    L = tb.cholesky_variable(2)
    tb.distribution(tb.as_data(obs), tb.multivariate_normal(np.zeros((1, 2)), cholesky=L))
    d = mcmc(tb.model(L), n_samples=400, warmup=400, chains=2, seed=1, progress=False,
             backend=backend)
    draws = d["L"].reshape(-1, 2, 2)
    assert np.all(draws[:, 0, 1] == 0.0)
    assert np.all(draws[:, [0, 1], [0, 1]] > 0)
    cov = np.einsum("nij,nkj->nik", draws, draws).mean(axis=0)
    # 400 observations: the posterior of Sigma concentrates near the sample covariance
    np.testing.assert_allclose(cov, np.cov(obs.T), atol=0.25)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_bounds_each_element_in_its_own_interval(backend: str) -> None:
    x = tb.variable(lower=[0.0, -INF], upper=[1.0, INF], dim=2)
    tb.distribution(tb.as_data([0.5, 3.0]), tb.normal(x, [0.2, 1.0]))
    d = mcmc(tb.model(x), n_samples=600, warmup=400, chains=2, seed=3, progress=False,
             backend=backend)
    draws = d["x"].reshape(-1, 2)
    assert draws[:, 0].min() > 0 and draws[:, 0].max() < 1
    assert draws[:, 1].min() < 0.5 < draws[:, 1].max()  # the unbounded one is not clipped
    assert abs(draws[:, 1].mean() - 3.0) < _ess_tol(draws[:, 1])
    assert abs(draws[:, 0].mean() - 0.5) < _ess_tol(draws[:, 0])


def _every_type_model() -> Any:
    rng = np.random.default_rng(5)
    p = tb.simplex_variable(3)
    tb.distribution(tb.as_data([[2.0, 5.0, 1.0]]), tb.multinomial(8.0, tb.reshape(p, (1, 3))))
    o = tb.ordered_variable((2, 3))
    tb.distribution(tb.as_data(rng.normal(size=(2, 3))), tb.normal(o, 1.0))
    L = tb.cholesky_variable(2)
    C = tb.cholesky_variable(3, correlation=True)
    tb.distribution(tb.as_data(rng.normal(size=(5, 2))),
                    tb.multivariate_normal(np.zeros((1, 2)), cholesky=L))
    tb.distribution(tb.as_data(rng.normal(size=(4, 3))),
                    tb.multivariate_normal(np.zeros((1, 3)), cholesky=C))
    x = tb.variable(lower=[[0.0, -INF], [1.0, -2.0]], upper=[[1.0, 3.0], [INF, INF]])
    tb.distribution(tb.as_data([[0.5, 1.0], [2.0, 0.0]]), tb.normal(x, 1.0))
    return tb.model(p, o, L, C, x)


def test_the_js_lowering_covers_every_variable_type() -> None:
    # the Pyodide door's compiled sampler: the log density and gradient lowered to JavaScript
    # (with these bijectors) against the NumPy path and finite differences, under node
    from ..compiled.node_js import NODE
    if NODE is None:
        pytest.skip("node is not installed (make js installs it)")
    from ..compiled.test_lowering_js import _check_model

    _check_model(_every_type_model())


@pytest.mark.skipif(C_REASON is not None, reason=f"no C here: {C_REASON}")
def test_the_c_lowering_covers_every_variable_type() -> None:
    from tensorbridge.runtime.ppl.compiled_density import compile_density

    model = _every_type_model()
    density = compile_density(model)
    ctx, keep = density.new_context()
    ffi = density._ffi
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = np.ascontiguousarray(0.5 * rng.normal(size=model.n_free))
        lp, g = ffi.new("double *"), np.empty(model.n_free)
        status = density._fn(ffi.cast("void *", ctx), ffi.from_buffer("double[]", q), lp,
                             ffi.from_buffer("double[]", g))
        assert status == 0
        want_lp, want_g = model.log_density_and_grad(tb.tensor(q))
        # the same steps in another order and libm: a few ulps per step of a short program
        assert lp[0] == pytest.approx(float(want_lp.numpy()), rel=1e-10, abs=1e-10)
        np.testing.assert_allclose(g, want_g.numpy(), rtol=1e-9, atol=1e-9)
    del keep


def test_as_data_of_a_pandas_data_frame() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.0, 2.0]})
    x = tb.as_data(df)
    assert x.shape == (3, 2) and x.dtype.name == "float64"
    np.testing.assert_array_equal(x.numpy(), [[1.0, 0.5], [2.0, 1.0], [3.0, 2.0]])
    with pytest.raises(TypeError, match="as_data: value is a data frame with non-numeric "
                                        "columns: s, t"):
        tb.as_data(pd.DataFrame({"a": [1.0], "s": ["u"], "t": [True]}))
