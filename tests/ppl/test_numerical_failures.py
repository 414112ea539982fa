"""Issue 16, bugs: a numerical failure inside a proposal (a Cholesky factor of a matrix that is
not positive definite, a singular solve, a non-finite log density or gradient) is a rejected
step, a divergence, in the step-size search, warmup and sampling, in the NumPy sampler and the
compiled one; and building a lazy graph never runs a kernel that fails on the placeholder
values of variables.

Reference values are analytic: LKJ(eta, 2)'s off-diagonal r is 2 * Beta(eta, eta) - 1 (mean 0,
E r^2 = 1 / (2 eta + 1), E r^4 = 3 / ((2 eta + 1)(2 eta + 3))); a standard normal cut off at
+-1.5 by a density that raises outside; a one-parameter posterior integrated on a grid.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.compiled.build import compiler_available
from tensorbridge.runtime.ppl.adaptation import find_reasonable_step
from tensorbridge.runtime.ppl.diagnostics import ess_bulk
from tensorbridge.runtime.ppl.hamiltonian import PhasePoint, guard_target
from tensorbridge.runtime.ppl.hmc import hmc_transition
from tensorbridge.runtime.ppl.nuts import nuts_transition

BACKENDS = ["numpy", pytest.param("compiled", marks=pytest.mark.skipif(
    compiler_available() is not None, reason="no C compiler"))]


def _raising_normal(limit: float):
    """A standard normal's log density and gradient that raises LinAlgError (as a failed
    Cholesky factor does) for any chain with |q| > limit in a coordinate."""

    def target(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if np.any(np.abs(q) > limit):
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        return -0.5 * np.sum(q * q, axis=1), -q

    return target


def _z(estimate: float, want: float, se: float) -> float:
    return abs(estimate - want) / se


def test_guard_marks_failing_chains_only() -> None:
    target = guard_target(_raising_normal(1.0))
    q = np.array([[0.5, 0.1], [2.0, 0.0], [0.0, -0.3]])
    lp, g = target(q)
    np.testing.assert_array_equal(lp[[0, 2]], -0.5 * np.sum(q[[0, 2]] ** 2, axis=1))
    np.testing.assert_array_equal(g[[0, 2]], -q[[0, 2]])
    assert lp[1] == -np.inf and np.all(np.isnan(g[1]))

    def nan_grad(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = -q.copy()
        g[0, 0] = np.nan
        return -0.5 * np.sum(q * q, axis=1), g

    lp, g = guard_target(nan_grad)(q)
    assert lp[0] == -np.inf and np.isfinite(lp[1:]).all() and np.isfinite(g[1:]).all()


@pytest.mark.parametrize("kind", ["nuts", "hmc"])
def test_a_raising_density_is_a_divergence_and_the_chain_goes_on(kind: str) -> None:
    target = guard_target(_raising_normal(1.0))
    rng = np.random.default_rng(4)
    q = np.array([[0.9, 0.0], [0.0, 0.2], [-0.95, 0.5]])
    lp, g = target(q)
    z = PhasePoint(q, np.zeros_like(q), lp, g)
    inv = np.ones_like(q)
    step = np.full(3, 0.8)
    divergent = 0
    for _ in range(30):
        if kind == "nuts":
            z, st = nuts_transition(z, step, inv, target, rng)
        else:
            z, st = hmc_transition(z, step, inv, target, rng, n_leapfrog=5)
        divergent += int(st.divergent.sum())
        assert np.all(np.abs(z.q) <= 1.0) and np.all(np.isfinite(z.logp))
    assert divergent > 0
    # the step-size search halves past the wall instead of raising
    eps = find_reasonable_step(z, np.full(3, 50.0), inv, target, rng)
    assert np.all(np.isfinite(eps)) and np.all(eps < 50.0)


def test_mcmc_through_a_raising_density_samples_the_truncated_target() -> None:
    x = tb.normal(0, 1)
    m = tb.model(x)
    original = m.compiled_target

    def compiled_target(batch: int):
        inner = original(batch)

        def target(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if np.any(np.abs(q) > 1.5):
                raise np.linalg.LinAlgError("Matrix is not positive definite")
            return inner(q)

        return target

    m.compiled_target = compiled_target  # the NumPy sampler's target for this model
    d = tb.mcmc(m, n_samples=1000, warmup=500, chains=4, seed=3, backend="numpy")
    draws = np.asarray(d["x"])
    assert np.all(np.abs(draws) <= 1.5)
    assert d.divergences + d.warmup["divergences"] > 0
    # a standard normal truncated to [-1.5, 1.5]: mean 0, variance 1 - 2 a phi(a) / (2 Phi(a) - 1)
    a = 1.5
    phi = math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    mass = math.erf(a / math.sqrt(2))
    var = 1 - 2 * a * phi / mass
    ess = ess_bulk(draws)
    assert _z(draws.mean(), 0.0, math.sqrt(var / ess)) < 4.5
    assert abs(draws.var() - var) < 0.1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_lkj_correlation_samples_its_analytic_marginal(backend: str, seed: int) -> None:
    eta = 4.0
    r = tb.lkj_correlation(eta, dimension=2)
    d = tb.mcmc(tb.model(r), n_samples=500, warmup=500, chains=4, seed=seed, backend=backend)
    assert d.backend == backend
    x = np.asarray(d["r"])[..., 0, 1]
    assert np.all(np.abs(x) < 1.0)
    ess = ess_bulk(x)
    m2, m4 = 1 / (2 * eta + 1), 3 / ((2 * eta + 1) * (2 * eta + 3))
    # Monte Carlo errors from the bulk ESS of r; r^2's ESS is at least of that order here
    assert _z(x.mean(), 0.0, math.sqrt(m2 / ess)) < 4.5
    assert _z(np.mean(x * x), m2, math.sqrt((m4 - m2 * m2) / ess)) < 4.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_covariance_that_is_not_positive_definite_is_rejected_not_fatal(backend: str) -> None:
    """y ~ MVN(0, [[1, rho], [rho, 1]]) with rho ~ uniform(-2, 2): the Cholesky factor fails
    for |rho| >= 1, so the posterior lives on (-1, 1); its mean and sd by quadrature."""
    y = np.array([[0.9, 1.1], [-0.4, -0.1], [1.3, 0.8], [0.2, 0.6], [-1.0, -1.2], [0.5, 0.1]])
    rho = tb.uniform(-2, 2)
    one = tb.as_data(np.ones((1, 1)))
    off = tb.reshape(rho, (1, 1))
    sigma = tb.concat([tb.concat([one, off], 1), tb.concat([off, one], 1)], 0)
    tb.distribution(tb.as_data(y), tb.multivariate_normal(tb.as_data(np.zeros((1, 2))), sigma,
                                                          n_realisations=len(y)))
    d = tb.mcmc(tb.model(rho), n_samples=1000, warmup=500, chains=4, seed=7, backend=backend)
    x = np.asarray(d["rho"]).ravel()
    assert np.all(np.abs(x) < 1.0)
    grid = np.linspace(-1, 1, 200001)[1:-1]
    s11, s22, s12 = np.sum(y[:, 0] ** 2), np.sum(y[:, 1] ** 2), np.sum(y[:, 0] * y[:, 1])
    det = 1 - grid ** 2
    logp = -0.5 * len(y) * np.log(det) - 0.5 * (s11 + s22 - 2 * grid * s12) / det
    w = np.exp(logp - logp.max())
    w /= w.sum()
    mean = np.sum(w * grid)
    sd = math.sqrt(np.sum(w * (grid - mean) ** 2))
    ess = ess_bulk(np.asarray(d["rho"]))
    assert _z(x.mean(), mean, sd / math.sqrt(ess)) < 4.5
    assert abs(x.std() - sd) < 0.15 * sd


@pytest.mark.parametrize("backend", BACKENDS)
def test_multivariate_normal_with_an_lkj_covariance_samples(backend: str) -> None:
    rng = np.random.default_rng(11)
    truth = np.array([[1.0, 0.6], [0.6, 1.0]]) * np.outer([1.5, 0.7], [1.5, 0.7])
    y = rng.multivariate_normal([0.0, 0.0], truth, size=60)
    corr = tb.lkj_correlation(2.0, dimension=2)
    sd = tb.lognormal(0, 1, dim=2)
    sigma = corr * (tb.reshape(sd, (2, 1)) * tb.reshape(sd, (1, 2)))
    tb.distribution(tb.as_data(y), tb.multivariate_normal(tb.as_data(np.zeros((1, 2))), sigma,
                                                          n_realisations=len(y)))
    d = tb.mcmc(tb.model(corr, sd), n_samples=500, warmup=500, chains=4, seed=2,
                backend=backend)
    r = np.asarray(d["corr"])[..., 0, 1]
    s = np.asarray(d["sd"])
    assert np.all(np.isfinite(r)) and np.all(np.abs(r) < 1)
    # with 60 observations the posterior is near the sample's correlation and scales
    emp = np.corrcoef(y.T)[0, 1]
    assert abs(r.mean() - emp) < 0.1
    np.testing.assert_allclose(s.mean(axis=(0, 1)), y.std(axis=0), rtol=0.15)


def test_building_a_cholesky_or_solve_of_a_variable_runs_no_failing_kernel() -> None:
    """A variable's placeholder is a zero matrix here: its Cholesky factor and triangular
    solves must not be evaluated there at build time (they fail), yet keep shapes and give
    the right values later."""
    for backend in ("numpy", "python"):
        v = tb.variable(dim=(2, 2), backend=backend)
        chol = tb.cholesky(v)
        solved = tb.triangular_solve(v, tb.as_data([[1.0], [2.0]], backend=backend))
        assert chol.shape == (2, 2) and solved.shape == (2, 1)
        value = np.array([[4.0, 0.0], [2.0, 3.0]])
        got_chol, got_solved = tb.calculate([chol, solved], values={v: value})
        np.testing.assert_allclose(np.asarray(got_chol.numpy()), np.linalg.cholesky(value))
        np.testing.assert_allclose(np.asarray(got_solved.numpy()),
                                   np.linalg.solve(np.tril(value), [[1.0], [2.0]]))
        batched = tb.triangular_solve(tb.variable(dim=(3, 2, 2), backend=backend),
                                      tb.as_data(np.ones((3, 2, 1)), backend=backend))
        assert batched.shape == (3, 2, 1)
    # shape errors still surface where they are made
    with pytest.raises(ValueError, match="rows"):
        tb.triangular_solve(tb.variable(dim=(2, 2)), tb.as_data([[1.0], [2.0], [3.0]]))
    # and data that really is singular is still an error at once
    with pytest.raises(np.linalg.LinAlgError):
        tb.triangular_solve(tb.as_data(np.zeros((2, 2))), tb.as_data([[1.0], [2.0]]))


def test_guard_on_the_pure_python_arrays_of_pyodide() -> None:
    """The same guard where the host arrays are the runtime's pure-Python ones (no item
    assignment, no boolean-mask indexing): a raising batch, a NaN position, a NaN value."""
    from tests.ppl.test_mcmc_python_arrays import _run_pure

    out = _run_pure("""
        import math
        from tensorbridge.runtime.host_namespace import xp
        from tensorbridge.runtime.ppl.hamiltonian import guard_target

        def target(q):
            if any(abs(float(q[c][0])) > 1 for c in range(q.shape[0])):
                raise ValueError("Matrix is not positive definite")
            lp = xp.sum(q * q, axis=1) * -0.5
            return xp.where(q[:, 1] > 5, math.nan, lp), q * -1.0

        q = xp.asarray([[0.5, 1.0], [2.0, 0.0], [math.nan, 0.0], [0.1, 6.0]])
        lp, g = guard_target(target)(q)
        print(json.dumps({"lp": [str(v) for v in lp.tolist()],
                          "g": [[str(v) for v in row] for row in g.tolist()]}))
    """)
    assert out["lp"] == ["-0.625", "-inf", "-inf", "-inf"]
    assert out["g"][0] == ["-0.5", "-1.0"]
    assert all(v == "nan" for row in out["g"][1:] for v in row)


def test_a_density_that_always_raises_is_named_when_no_start_is_found() -> None:
    x = tb.normal(0, 1)
    m = tb.model(x)

    def compiled_target(batch: int):
        def target(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            raise ValueError("operands could not be broadcast together")

        return target

    m.compiled_target = compiled_target
    with pytest.raises(ValueError, match=r"initial values.*raised ValueError: operands could "
                                         r"not be broadcast"):
        tb.mcmc(m, n_samples=10, warmup=10, chains=2, seed=1, backend="numpy")


def _infinite_beyond(q: np.ndarray) -> tuple[float, np.ndarray]:
    """A standard normal whose log density is +inf (a singular point, with a finite gradient)
    beyond q[0] > 1: such a point is never a proposal to keep."""
    if q[0] > 1.0:
        return math.inf, -q
    return -0.5 * float(q @ q), -q


@pytest.mark.parametrize("kind", ["nuts", "hmc"])
def test_an_infinite_log_density_is_a_divergence_in_python_c_and_js(kind: str) -> None:
    from tensorbridge.runtime.ppl.chain_rng import chain_rng
    from tensorbridge.runtime.ppl.chains import hmc, nuts, run_chains
    from tests.compiled.node_js import NODE, run_node
    from tests.compiled.test_sampler_js import _PRELUDE, _cfg

    sampler = nuts() if kind == "nuts" else hmc(n_leapfrog=8)
    x = tb.normal(0, 1, dim=2)
    m = tb.model(x)

    def target(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = [_infinite_beyond(row) for row in q]
        return np.array([o[0] for o in out]), np.array([o[1] for o in out])

    m.compiled_target = lambda batch: target
    runs = {"python": run_chains(m, 300, 200, 2, sampler, None, 5, 1, False, None, 50, None)}
    if compiler_available() is None:
        from tensorbridge.runtime.compiled import sampler as cs
        from tensorbridge.runtime.ppl.compiled_chains import run_chains_compiled

        runs["c"] = run_chains_compiled(m, cs.python_density(_infinite_beyond, 2), 300, 200, 2,
                                        sampler, None, 5, 1, False, None, 50, None)
    for name, d in runs.items():
        assert np.all(d.free[..., 0] <= 1.0), name
        assert np.all(np.isfinite(d.stats["lp"])), name
        assert d.divergences + d.warmup["divergences"] > 0, name
    if NODE is None:
        return
    script = _PRELUDE + r"""
const fn = (q, lp, g) => {
  g[0] = -q[0]; g[1] = -q[1];
  lp[0] = q[0] > 1.0 ? Infinity : -0.5 * (q[0] * q[0] + q[1] * q[1]);
  return 0;
};
output(input.keys.map((key) => runChain(input.cfg(key), input.q0, fn, undefined, 50)));
""".replace("input.cfg(key)", "Object.assign({}, input.cfg, {key0: key[0], key1: key[1]})")
    keys = [list(k) for k in chain_rng(5, 2).keys]
    cfg = _cfg(kind, 2, 200, 300, keys[0], chains=2)
    out = run_node(script, {"cfg": cfg, "keys": keys, "q0": np.array([0.1, -0.2])})
    for chain in out:
        draws = chain["out"]["draws"].reshape(-1, 2)
        assert np.all(draws[:, 0] <= 1.0) and np.all(np.isfinite(chain["out"]["lp"]))
        assert chain["warmupDivergences"] + np.sum(chain["out"]["divergent"]) > 0
