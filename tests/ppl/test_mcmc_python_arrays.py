"""Inference on the pure-Python array namespace (what runs in Pyodide, which has no NumPy).

Each test runs in a subprocess with ``TENSORBRIDGE_PPL_ARRAYS=pure`` so that the choice, made
once at import, cannot leak into the rest of the suite; the NumPy backend still computes the
model, as it would be tfjs in the browser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tensorbridge.runtime.ppl import diagnostics


def _run_pure(code: str, payload: object = None) -> dict:
    env = dict(os.environ, TENSORBRIDGE_PPL_ARRAYS="pure")
    prelude = textwrap.dedent("""
        import json, sys
        from tensorbridge.runtime import host_namespace
        from tensorbridge.runtime.backends import python_arrays
        assert host_namespace.xp is python_arrays and host_namespace.NAME == "pure"
        payload = json.loads(sys.stdin.read() or "null")
    """)
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                          input=json.dumps(payload), capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_conjugate_normal_normal_posterior_on_python_arrays():
    y = np.random.default_rng(0).normal(1.5, 1.0, size=20)
    out = _run_pure("""
        import tensorbridge as tb
        y = tb.as_data(payload)
        mu = tb.normal(0.0, 10.0)
        tb.distribution(y, tb.normal(mu, 1.0))
        m = tb.model(mu)
        d = tb.mcmc(m, n_samples=600, warmup=400, chains=4, seed=3, progress=False)
        s = d.summary()
        x = d["mu"]
        print(repr(s))
        theta = tb.calculate(2.0 * mu, values=d)
        fit = tb.opt(m)
        print(json.dumps({
            "type": type(x).__name__, "module": type(x).__module__, "shape": list(x.shape),
            "mean": x.mean(), "var": x.var(), "row": s["mu"], "divergences": d.divergences,
            "printed": "mu" in repr(s) and "rhat" in repr(s),
            "calc_type": type(theta).__module__, "calc_mean": theta.mean(),
            "calc_shape": list(theta.shape), "opt": fit.par["mu"].tolist(),
            "free_type": type(d.free).__module__,
            "stats": sorted(d.stats), "lp_shape": list(d.stats["lp"].shape),
        }))
    """, y.tolist())
    post_var = 1.0 / (1.0 / 100.0 + y.size)
    post_mean = post_var * y.sum()
    assert out["module"].endswith("python_arrays") and out["free_type"].endswith("python_arrays")
    assert out["shape"] == [4, 600] and out["lp_shape"] == [4, 600]
    row = out["row"]
    assert row["rhat"] < 1.02 and row["ess_bulk"] > 300 and row["ess_tail"] > 300
    se = np.sqrt(post_var / row["ess_bulk"])
    assert abs(out["mean"] - post_mean) < 5 * se, (out["mean"], post_mean, se)
    assert abs(out["var"] - post_var) < 5 * post_var * np.sqrt(2.0 / row["ess_bulk"])
    assert abs(row["mean"] - out["mean"]) < 1e-12 and abs(row["sd"] ** 2 - out["var"]) < 1e-3
    assert row["q5"] < row["q50"] < row["q95"]
    assert out["divergences"] == 0 and out["printed"]
    assert out["calc_type"].endswith("python_arrays") and out["calc_shape"] == [4, 600]
    assert abs(out["calc_mean"] - 2.0 * out["mean"]) < 1e-9
    # MAP of the constrained values: the conjugate posterior mode
    assert abs(out["opt"] - post_mean) < 1e-4
    assert {"accept_stat", "divergent", "energy", "lp", "n_leapfrog", "tree_depth"} <= set(
        out["stats"])


def test_hmc_and_constrained_variables_on_python_arrays():
    out = _run_pure("""
        import tensorbridge as tb
        y = tb.as_data([0.8, 1.9, 1.1, 2.4, 0.3, 1.7, 1.2, 0.9])
        sd = tb.lognormal(0.0, 1.0)
        mu = tb.normal(0.0, 5.0)
        tb.distribution(y, tb.normal(mu, sd))
        m = tb.model(mu, sd)
        d = tb.mcmc(m, n_samples=400, warmup=300, chains=2, seed=5, progress=False,
                    sampler=tb.hmc(n_leapfrog=8))
        s = d.summary()
        print(json.dumps({"sd_min": d["sd"].min(), "mu": s["mu"]["mean"],
                          "rhat": max(s["mu"]["rhat"], s["sd"]["rhat"]),
                          "step": d.warmup["step_size"].tolist()}))
    """)
    assert out["sd_min"] > 0  # the positive constraint holds through the bijector
    assert 0.6 < out["mu"] < 1.9 and out["rhat"] < 1.1
    assert len(out["step"]) == 2 and all(0 < s < 5 for s in out["step"])


def _ar1(phi: float, chains: int, n: int, seed: int, shift: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros((chains, n))
    e = rng.normal(size=(chains, n))
    x[:, 0] = e[:, 0] / np.sqrt(1 - phi**2)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x + shift * np.arange(chains)[:, None]


SERIES = {
    "ar1_0.9": _ar1(0.9, 4, 1000, 1),
    "ar1_0.3": _ar1(0.3, 4, 501, 2),
    "antithetic": _ar1(-0.6, 3, 400, 3),
    "shifted_chains": _ar1(0.5, 4, 300, 4, shift=1.5),
    "ties": np.round(_ar1(0.7, 2, 200, 5), 0),
}


def test_rhat_and_ess_match_the_numpy_implementation():
    out = _run_pure("""
        from tensorbridge.runtime.ppl.diagnostics import ess_bulk, ess_tail, rhat
        res = {}
        for name, x in payload.items():
            a = python_arrays.asarray(x)
            res[name] = [rhat(a), ess_bulk(a), ess_tail(a)]
        print(json.dumps(res))
    """, {k: v.tolist() for k, v in SERIES.items()})
    for name, x in SERIES.items():
        want = [diagnostics.rhat(x), diagnostics.ess_bulk(x), diagnostics.ess_tail(x)]
        np.testing.assert_allclose(out[name], want, rtol=1e-8, err_msg=name)
    # and the AR(1) answer is the theory's: ESS ~ N (1 - phi) / (1 + phi)
    n = SERIES["ar1_0.9"].size
    assert 0.6 < out["ar1_0.9"][1] / (n * 0.1 / 1.9) < 1.5
    assert out["shifted_chains"][0] > 1.5 > out["ar1_0.9"][0]


def test_diagnostics_edge_cases_match_numpy():
    cases = {"constant": np.ones((2, 50)),
             "nan": np.where(np.arange(100).reshape(2, 50) == 7, np.nan, 1.0)
             + _ar1(0.2, 2, 50, 6),
             "short": _ar1(0.2, 2, 6, 7)}
    out = _run_pure("""
        from tensorbridge.runtime.ppl.diagnostics import ess_bulk, ess_tail, rhat
        res = {k: [rhat(python_arrays.asarray(x)), ess_bulk(python_arrays.asarray(x)),
                   ess_tail(python_arrays.asarray(x))] for k, x in payload.items()}
        print(json.dumps(res))
    """, {k: v.tolist() for k, v in cases.items()})
    for name, x in cases.items():
        with np.errstate(all="ignore"):
            want = [diagnostics.rhat(x), diagnostics.ess_bulk(x), diagnostics.ess_tail(x)]
        np.testing.assert_allclose(out[name], want, rtol=1e-8, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("value", ["bogus", "numpy"])
def test_namespace_choice_from_the_environment(value):
    env = dict(os.environ, TENSORBRIDGE_PPL_ARRAYS=value)
    proc = subprocess.run(
        [sys.executable, "-c", "from tensorbridge.runtime import host_namespace as a; "
                               "print(a.NAME, a.xp.__name__)"],
        capture_output=True, text=True, env=env, timeout=120)
    if value == "bogus":
        assert proc.returncode != 0 and "TENSORBRIDGE_PPL_ARRAYS" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["numpy", "numpy"]


def test_numpy_is_the_namespace_where_it_is_installed():
    import importlib

    from tensorbridge.runtime import host_namespace

    if os.environ.get("TENSORBRIDGE_PPL_ARRAYS", "auto") != "auto":
        pytest.skip("the suite itself runs with a forced namespace")
    assert host_namespace.xp is np and host_namespace.NAME == "numpy"
    for name in ("adaptation", "diagnostics", "draws", "hamiltonian", "hmc", "nuts", "optimize",
                 "sampler"):
        mod = importlib.import_module(f"tensorbridge.runtime.ppl.{name}")
        assert mod.xp is np, name  # the fast path is NumPy itself, not a wrapper


_INTERRUPTED = """
    import warnings
    import tensorbridge as tb
    y = tb.as_data([0.5, 1.5])
    mu = tb.normal(0.0, 1.0)
    tb.distribution(y, tb.normal(mu, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = tb.mcmc(tb.model(mu), n_samples=10, warmup=5, chains=2, progress=False,
                    should_stop=lambda: True)
    s = d.summary()
    print(json.dumps([list(d["mu"].shape), d.interrupted, repr(s).count("nan"),
                      [v != v for v in s["mu"].values()]]))
"""


def test_summary_of_draws_interrupted_before_sampling():
    pure = _run_pure(_INTERRUPTED)
    proc = subprocess.run([sys.executable, "-c", "import json\n" + textwrap.dedent(_INTERRUPTED)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with_numpy = json.loads(proc.stdout.strip().splitlines()[-1])
    assert pure == with_numpy == [[2, 0], True, 8, [True] * 8]


_CHOICES = """
    from tensorbridge.runtime.backends import get_backend
    from tensorbridge.runtime.ppl import diagnostics
    print(json.dumps([host_namespace.for_namespace(numpy="numpy", python="python"),
                      host_namespace.raw_is_host(get_backend("numpy")),
                      host_namespace.raw_is_host(get_backend("python")),
                      host_namespace.NUMPY_MISSING, type(diagnostics._K).__name__]))
"""


def test_the_namespace_layer_makes_each_choice_once():
    """for_namespace, raw_is_host and NUMPY_MISSING answer for the namespace in force; the
    diagnostics' kernels follow (NumPy's where xp is NumPy, lists of floats without it)."""
    from tensorbridge.runtime import host_namespace
    from tensorbridge.runtime.backends import get_backend

    assert _run_pure(_CHOICES) == ["python", False, False, "NumPy is not available",
                                   "_ListKernels"]
    if host_namespace.NAME == "numpy":
        assert host_namespace.for_namespace(numpy=1, python=2) == 1
        assert host_namespace.raw_is_host(get_backend("numpy"))
        assert not host_namespace.raw_is_host(get_backend("python"))
        assert host_namespace.NUMPY_MISSING is None
        assert type(diagnostics._K).__name__ == "_NumPyKernels"


def test_only_the_namespace_asks_which_array_module_it_got():
    """The sampler, the models and the diagnostics are written once: no module of graph/ or ppl/
    reads host_namespace.NAME (a difference goes into the namespace layer instead)."""
    import re
    from pathlib import Path

    import tensorbridge.runtime as rt

    root = Path(rt.__file__).parent
    pattern = re.compile(r"host_namespace import[^\n]*\bNAME\b|host_namespace\.NAME\b")
    offenders = [str(p.relative_to(root)) for sub in ("graph", "ppl")
                 for p in sorted((root / sub).rglob("*.py")) if pattern.search(p.read_text())]
    assert offenders == []
