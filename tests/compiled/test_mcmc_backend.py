"""mcmc(backend=...): the compiled sampler by default where C works, NumPy otherwise, saying why;
the two give the same chains up to rounding and the same posterior."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.compiled import build
from tensorbridge.runtime.ppl.diagnostics import ess_bulk

C_REASON = build.compiler_available()
needs_c = pytest.mark.skipif(C_REASON is not None, reason=f"no C here: {C_REASON}")


def _normal_normal():
    """y_i ~ N(mu, 1), mu ~ N(0, 10): the posterior of mu is normal, known in closed form."""
    y = np.array([1.2, 0.4, 2.2, 1.7, 0.9, 1.4])
    mu = tb.normal(0.0, 10.0)
    tb.distribution(tb.as_data(y), tb.normal(mu, 1.0))
    prec = 1 / 100 + len(y)
    return tb.model(mu=mu), y.sum() / prec, prec ** -0.5


def _without_lowering():
    # polygamma(2)'s gradient needs polygamma(3), which has no C lowering
    x = tb.variable(lower=1.0)
    tb.distribution(tb.as_data(np.zeros(1)), tb.normal(tb.polygamma(2, x), 1.0))
    return tb.model(x=x)


def test_backend_is_checked() -> None:
    m, _, _ = _normal_normal()
    with pytest.raises(ValueError, match="backend: expected one of 'auto', 'compiled', "
                                         "'numpy', got 'c'"):
        tb.mcmc(m, backend="c")
    with pytest.raises(ValueError, match="n_cores: expected None or an integer >= 1"):
        tb.mcmc(m, n_cores=0)


@needs_c
def test_auto_compiles_and_matches_the_analytic_posterior() -> None:
    m, mean, sd = _normal_normal()
    with warnings.catch_warnings():
        warnings.simplefilter("error", tb.CompiledSamplingUnavailable)
        d = tb.mcmc(m, n_samples=1000, warmup=500, chains=4, seed=5, progress=False)
    assert d.backend == "compiled" and d.compile_seconds >= 0.0
    draws = np.asarray(d["mu"]).ravel()
    se = sd / np.sqrt(ess_bulk(np.asarray(d["mu"])))  # Monte Carlo standard error
    assert abs(draws.mean() - mean) < 5 * se
    assert abs(draws.std() / sd - 1) < 0.1


@needs_c
def test_compiled_and_numpy_chains_agree_to_rounding_then_in_distribution() -> None:
    m, _, _ = _normal_normal()
    kw = {"n_samples": 20, "warmup": 0, "chains": 3, "seed": 9, "progress": False,
          "sampler": tb.nuts(step_size=0.3)}
    c, n = tb.mcmc(m, backend="compiled", **kw), tb.mcmc(m, backend="numpy", **kw)
    assert (c.backend, n.backend) == ("compiled", "numpy")
    # the same random streams and algorithm: only the density's rounding differs
    np.testing.assert_allclose(np.asarray(c["mu"]), np.asarray(n["mu"]), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(c.stats["n_leapfrog"], n.stats["n_leapfrog"])


@needs_c
def test_a_model_without_a_lowering_falls_back_saying_why() -> None:
    m = _without_lowering()
    with pytest.warns(tb.CompiledSamplingUnavailable, match="polygamma"):
        d = tb.mcmc(m, n_samples=10, warmup=10, chains=2, seed=1, progress=False)
    assert d.backend == "numpy" and d.n_draws == 10
    with pytest.raises(RuntimeError, match=r"backend=.compiled.: .*polygamma"):
        tb.mcmc(m, n_samples=10, warmup=10, chains=2, seed=1, progress=False,
                backend="compiled")


def test_without_a_compiler_auto_samples_with_numpy(monkeypatch) -> None:
    monkeypatch.setenv("TENSORBRIDGE_NO_C", "1")
    build.compiler_available.cache_clear()
    try:
        m, _, _ = _normal_normal()
        with pytest.warns(tb.CompiledSamplingUnavailable, match="TENSORBRIDGE_NO_C"):
            d = tb.mcmc(m, n_samples=10, warmup=10, chains=2, seed=1, progress=False)
        assert d.backend == "numpy"
        with pytest.raises(RuntimeError, match=r"backend=.compiled.: .*TENSORBRIDGE_NO_C"):
            tb.mcmc(m, n_samples=10, warmup=10, chains=2, progress=False, backend="compiled")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # asked for NumPy: nothing to say
            tb.mcmc(m, n_samples=10, warmup=10, chains=2, progress=False, backend="numpy")
    finally:
        monkeypatch.delenv("TENSORBRIDGE_NO_C")
        build.compiler_available.cache_clear()


@needs_c
def test_a_model_on_the_python_backend_samples_in_c_with_the_same_draws() -> None:
    """A model made on the pure-Python float64 backend (as Pyodide makes them) lowers to the
    same C program with the same data as on NumPy: the same seed gives the same draws, bit for
    bit; its NumPy-path sampler runs on the backend's own arrays."""
    np_model, _, _ = _normal_normal()
    tb.set_model_backend("python")
    try:
        py_model, _, _ = _normal_normal()
    finally:
        tb.set_model_backend(None)
    assert py_model.backend.name == "python"
    kw = {"n_samples": 50, "warmup": 50, "chains": 2, "seed": 3, "progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("error", tb.CompiledSamplingUnavailable)
        ours, theirs = tb.mcmc(py_model, **kw), tb.mcmc(np_model, **kw)
    assert ours.backend == theirs.backend == "compiled"
    assert np.array_equal(np.asarray(ours["mu"]), np.asarray(theirs["mu"]))
    slow = tb.mcmc(py_model, backend="numpy", **kw)
    assert slow.backend == "numpy" and np.isfinite(np.asarray(slow["mu"])).all()
