"""The diagnostics' JavaScript kernels (runtime/compiled/tb_stats.js), which Pyodide's
``Draws.summary()`` runs in place of NumPy's FFT and SciPy's ndtri.

* ``autocovariance`` against the NumPy kernel of ``ppl/diagnostics.py`` (pocketfft's rfft and
  irfft). Both are O(log size) FFT pipelines over the same centred rows: a radix-2 FFT's
  rounding error is at most ~log2(size) u times the norm of its input at each of the two
  transforms, and the power spectrum is squared magnitudes; relative to the lag-0 value
  ``acov[0] = sum(centred^2) / n`` (the largest |acov| by Cauchy-Schwarz) the two results may
  each err by a small multiple of log2(size) u. The bound used, 4 log2(size) u acov[0], is met
  with room (measured < 5 u at size 2048).
* ``ndtri`` against SciPy's (Cephes) and against the exact root of Phi(x) = p (mpmath, 40
  digits). tb_stats.js's ndtri is within ~1.5 ulp of the exact value (its error budget is in
  the file: erf/erfc within ~2^-56, the argument x / sqrt 2 rounded once, the Halley step's
  final rounding), Cephes' is within a few ulps; measured maxima: 3 ulps from the exact root
  for both (at x just below 1 in magnitude, where an ulp is half the relative error of x just
  above), 5 ulps between the two. Bounds: 4 ulps from the exact root, 8 between them.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import scipy.special as sp

from tensorbridge.runtime.ppl.diagnostics import _autocovariance

from .node_js import needs_node, run_node

pytestmark = needs_node

EPS = np.finfo(np.float64).eps
_LOAD = 'const S = load("tb_stats.js", "makeStats", load("tb_prelude.js", "makePrelude"));\n'


def test_autocovariance_matches_numpy_fft() -> None:
    rng = np.random.default_rng(1)
    cases = []
    for m, n in [(8, 1000), (2, 2), (5, 7), (4, 1024), (2, 1025), (1, 3000), (3, 4)]:
        walk = rng.normal(size=(m, n)).cumsum(axis=1) * 3.0 + 10.0  # strongly autocorrelated
        cases.append(walk)
        cases.append(rng.normal(size=(m, n)))  # white noise: acov near 0 past lag 0
        cases.append((rng.random(size=(m, n)) < 0.05).astype(np.float64))  # an indicator
    out = run_node(_LOAD + """
output(input.map((c) => S.autocovariance(c.x, c.m, c.n)));
""", [{"x": c, "m": c.shape[0], "n": c.shape[1]} for c in cases])
    for c, got in zip(cases, out):
        m, n = c.shape
        got = np.asarray(got).reshape(m, n)
        want = _autocovariance(c)
        size = 1 << (2 * n - 1).bit_length()
        bound = 4 * math.log2(size) * EPS * want[:, :1]
        assert np.all(np.abs(got - want) <= bound), (m, n, np.max(np.abs(got - want) / want[:, :1]))
        assert np.all(got[:, 0] >= 0)


def test_autocovariance_of_a_constant_row_is_zero() -> None:
    x = np.full((2, 50), 3.25)
    got = run_node(_LOAD + "output(S.autocovariance(input, 2, 50));", x)
    assert np.array_equal(got, np.zeros(100))


def _grid() -> np.ndarray:
    rng = np.random.default_rng(0)
    p = np.concatenate([
        rng.random(100_000),
        10.0 ** -rng.uniform(0, 323, 30_000),  # the lower tail down to the subnormals
        1.0 - 10.0 ** -rng.uniform(0, 16, 30_000),  # the upper tail, to 1 - 2^-53
        0.5 + rng.uniform(-1e-6, 1e-6, 2_000),  # around 1/2, where ndtri(p) is tiny
        (np.arange(1, 8001) - 0.375) / 8000.25,  # the rank-normalisation's own points
        [5e-324, 1e-310, 1e-300, 1e-290, 0.02425, 0.25, 0.75, 0.5 - 2.0**-54, 1 - 2.0**-53],
    ])
    return p[(p > 0) & (p < 1)]


def test_ndtri_matches_scipy_and_the_exact_root() -> None:
    p = _grid()
    got = run_node(_LOAD + "output(S.ndtri(input));", p)
    ref = sp.ndtri(p)
    ulps = np.abs(got - ref) / np.spacing(np.abs(ref))
    assert ulps.max() <= 8, (ulps.max(), p[np.argmax(ulps)])
    assert np.percentile(ulps, 99) <= 2
    # the exact root at the points furthest from SciPy and at an even spread of the rest
    mpmath.mp.dps = 40
    picks = np.argsort(-ulps)[:40].tolist() + list(range(0, p.size, 4000))
    for k in picks:
        pk = mpmath.mpf(float(p[k]))
        exact = float(mpmath.findroot(lambda x, pk=pk: mpmath.ncdf(x) - pk, float(ref[k])))
        err = abs(got[k] - exact) / np.spacing(abs(exact))
        assert err <= 4, (p[k], got[k], exact, err)


def test_ndtri_edges_and_symmetry() -> None:
    p = np.array([0.0, 1.0, 0.5, -0.0, -1e-300, 1.0 + 2**-52, np.nan, np.inf, -np.inf])
    got = run_node(_LOAD + "output(S.ndtri(input));", p)
    assert got[0] == -np.inf and got[1] == np.inf and got[2] == 0.0 and got[3] == -np.inf
    assert np.all(np.isnan(got[4:]))
    # ndtri(1 - q) = -ndtri(q) exactly where 1 - q is exact (q a multiple of 2^-53 below 1/2)
    q = np.random.default_rng(3).random(2000) * 0.5
    q = np.round(q * 2.0**53) / 2.0**53
    both = run_node(_LOAD + "output([S.ndtri(input), S.ndtri(input.map((v) => 1 - v))]);", q)
    assert np.array_equal(both[0], -both[1])


def test_ranks_and_normal_scores_match_numpy() -> None:
    """``ranks`` are exact (small integers and halves): SciPy's average ranks, the NaNs after
    every number as one tie (NumPy's argsort and unique, as diagnostics' NumPy kernel ranks
    them); the normal scores ndtri(affine(ranks)) are z_scale's within ndtri's 8 ulps."""
    from scipy.stats import rankdata

    from tensorbridge.runtime.ppl.diagnostics import z_scale

    rng = np.random.default_rng(4)
    ties = np.round(rng.normal(size=(4, 250)), 1)
    signed_zeros = np.array([[0.0, -0.0, 1.0, -0.0], [2.0, 0.0, -1.0, 0.0]])
    with_nan = rng.normal(size=(2, 40))
    with_nan[0, 5] = with_nan[1, 9] = with_nan[1, 30] = np.nan
    cases = [rng.normal(size=(8, 1000)), ties, signed_zeros, with_nan, rng.normal(size=(1, 1))]
    out = run_node(_LOAD + """
output(input.map((x) => {
  const r = S.ranks(x);
  return [r, S.ndtri(S.affine(r, 3 / 8, x.length + 0.25))];
}));
""", cases)
    for c, (ranks, z) in zip(cases, out):
        flat = c.ravel()
        nan = np.isnan(flat)
        want = np.empty(flat.size)
        want[~nan] = rankdata(flat[~nan])
        want[nan] = (2 * (~nan).sum() + nan.sum() + 1) / 2
        assert np.array_equal(ranks, want), c.shape
        ref = z_scale(c).ravel()
        ulps = np.abs(z - ref) / np.spacing(np.abs(ref))
        assert ulps.max() <= 8, (c.shape, ulps.max())
