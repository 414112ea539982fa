"""R-hat and ESS against processes whose answers are known."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.special import ndtri as ndtri_ref

from tensorbridge.runtime.ppl import diagnostics as d
from tensorbridge.runtime.ppl import ess_bulk, ess_tail, rhat
from tensorbridge.runtime.testing import assert_close


def _ar1(phi: float, chains: int = 4, n: int = 4000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros((chains, n))
    e = rng.normal(size=(chains, n))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


@pytest.mark.parametrize("phi", [0.0, 0.5, -0.5, 0.9])
def test_ess_matches_ar1_theory(phi: float) -> None:
    x = _ar1(phi)
    want = x.size * (1 - phi) / (1 + phi)
    assert ess_bulk(x) == pytest.approx(want, rel=0.15)
    assert ess_tail(x) > 0.1 * min(want, x.size)


def test_rhat_detects_disagreeing_chains() -> None:
    x = _ar1(0.3)
    assert rhat(x) < 1.01
    shifted = x.copy()
    shifted[0] += 2.0
    assert rhat(shifted) > 1.1
    scaled = x.copy()
    scaled[1] *= 4.0  # same location, different spread: caught by the folded R-hat
    assert rhat(scaled) > 1.05


def test_constant_and_short_inputs() -> None:
    assert np.isnan(ess_bulk(np.ones((2, 100))))
    assert np.isnan(rhat(np.ones((2, 2))[:, :1]))


# ---- the pure-Python kernels (what runs without NumPy) against the NumPy ones ----------------
#
# Without NumPy (TENSORBRIDGE_PPL_ARRAYS=pure, in a subprocess so the choice made at import
# cannot leak) the diagnostics run the same algorithm on lists of floats: ranks by bisection
# into the sorted draws, SciPy's ndtri replaced by Acklam's start refined by a Halley step on
# math.erf/erfc (within ~2 ulps of the exact root; measured <= 4 ulps from SciPy over (0, 1)),
# sums by math.fsum instead of NumPy's pairwise sums, and the autocovariances from a radix-2 FFT
# of two chains at a time. Tolerance policy: z_scale is elementwise ndtri, 8 ulps (each side a
# few ulps from the exact value). R-hat and the ESS are sums over all N draws of such values
# (means, variances, the autocovariance lags and their Geyer sums), so each may differ by the
# policy's 2 gamma(N) bound on N terms, relative to the result. Measured: < 2e-15 relative.

_PURE = """
import json, sys
from tensorbridge.runtime import host_namespace
from tensorbridge.runtime.backends import python_arrays as pa
from tensorbridge.runtime.ppl import diagnostics as d
assert host_namespace.NAME == "pure" and d._kernel_name() == "python"
cases, grid = json.loads(sys.stdin.read())
out = [[d._ndtri1(p) for p in grid]]
for c in cases:
    x = pa.asarray(c)
    acov = d._K.autocovariance(d._K.host(x)) if x.shape[1] >= 1 else []
    out.append({"rhat": d.rhat(x), "ess_bulk": d.ess_bulk(x), "ess_tail": d.ess_tail(x),
                "z": d.z_scale(x).tolist(), "split": d.split_chains(x).tolist(),
                "acov": acov, "type": type(d.z_scale(x)).__module__})
print(json.dumps(out))
"""


def _diag_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    cases = [_ar1(phi, n=2000, seed=s) for s, phi in enumerate([0.0, 0.5, -0.5, 0.9])]
    drift = _ar1(0.3, chains=4, n=1001, seed=9)
    drift[0] += 1.5  # disagreeing chains: R-hat well above 1
    cases.append(drift)
    cases.append(np.round(rng.normal(size=(3, 300)), 1))  # many ties
    cases.append(rng.poisson(2.0, size=(4, 400)).astype(np.float64))  # a discrete quantity
    with_nan = rng.normal(size=(2, 60))
    with_nan[1, 7] = with_nan[0, 3] = np.nan
    cases.append(with_nan)
    cases.append(np.ones((2, 100)))  # constant
    cases.append(rng.normal(size=(4, 9)))  # short, odd length
    return cases


def test_pure_python_kernels_match_numpy() -> None:
    cases = _diag_cases()
    g = np.random.default_rng(6)
    grid = np.concatenate([g.random(20_000), 10.0 ** -g.uniform(0, 323, 5_000),
                           1.0 - 10.0 ** -g.uniform(0, 16, 5_000), [5e-324, 1e-300, 0.25]])
    grid = grid[(grid > 0) & (grid < 1)]
    env = dict(os.environ, TENSORBRIDGE_PPL_ARRAYS="pure")
    proc = subprocess.run([sys.executable, "-c", _PURE], env=env, capture_output=True,
                          text=True, timeout=600,
                          input=json.dumps([[c.tolist() for c in cases], grid.tolist()]))
    assert proc.returncode == 0, proc.stderr
    ndtri, *results = json.loads(proc.stdout)
    # the Python inverse normal CDF: within 8 ulps of SciPy's over (0, 1), tails included
    ref = ndtri_ref(grid)
    ulps = np.abs(np.array(ndtri) - ref) / np.spacing(np.abs(ref))
    assert ulps.max() <= 8, (ulps.max(), grid[np.argmax(ulps)])
    for i, (c, got) in enumerate(zip(cases, results)):
        assert got["type"].endswith("python_arrays")
        assert np.array_equal(np.array(got["split"], dtype=float), d.split_chains(c),
                              equal_nan=True)
        assert_close(np.array(got["z"]), d.z_scale(c), ulps=8, what=f"case {i} z_scale: ")
        for name, fn in (("rhat", rhat), ("ess_bulk", ess_bulk), ("ess_tail", ess_tail)):
            want = fn(c)
            assert_close(got[name], want, n=c.size, magnitude=want, what=f"case {i} {name}: ")
        if np.all(np.isfinite(c)):
            # the FFT of two chains at a time: within the policy's bound for n-term sums,
            # relative to each chain's lag-0 autocovariance (the largest |acov|)
            want = d._autocovariance(c)
            assert_close(np.array(got["acov"]), want, n=c.shape[1],
                         magnitude=np.broadcast_to(want[:, :1], want.shape),
                         what=f"case {i} autocovariance: ")
    # the cases do exercise the algorithm: finite ESS, R-hat telling the drifting chains apart
    assert results[1]["ess_bulk"] > 1000 and results[4]["rhat"] > 1.1
    assert np.isnan(results[8]["ess_bulk"]) and np.isnan(results[8]["rhat"])
