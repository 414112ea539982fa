"""The lowered C of data-heavy models, vectorised (issue 14): logistic regression at the
benchmark's size (N=5000, D=20) stays within the tolerance policy of the NumPy path, and the
AVX2 build and the baseline (SSE2) build of one source give the same bits, so a density's values
do not depend on the CPU that runs it.

Tolerance as in test_lowering.py: ``n = chained_length(program steps, largest array)``,
``magnitude`` the largest absolute value among the log density and its gradient.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.compiled.build import compile_module, compiler_available
from tensorbridge.runtime.compiled.lowering import CTX_DECL
from tensorbridge.runtime.testing import assert_close, chained_length

from ..ppl import posteriordb_models as P
from .test_lowering import _compile, logistic_regression

pytestmark = pytest.mark.skipif(compiler_available() is not None,
                                reason=f"no C compiler here: {compiler_available()}")


def logistic(n: int = 5000, d: int = 20, seed: int = 42) -> tb.Model:
    return logistic_regression(n, d, seed)


def _baseline(cd):
    """The same source built for the baseline instruction set only (no AVX2 clone)."""
    from tensorbridge.runtime.ppl.compiled_density import CompiledDensity

    lw = cd.lowered
    module = compile_module(lw.name, f"{CTX_DECL}\n{lw.cdef}", lw.source,
                            extra_compile_args=("-fno-math-errno", "-DTB_BASELINE_ONLY"))
    return CompiledDensity(lw, module)


def test_logistic_5000x20_matches_numpy() -> None:
    model = logistic()
    cd = _compile(model)
    assert "tb_vexp(" in cd.source and "tb_vlog1p(" in cd.source
    n_len = chained_length(cd.lowered.steps, 5000 * 20)
    rng = np.random.default_rng(0)
    for scale in (0.05, 0.5, 3.0):  # near the mode, typical, far out (saturated sigmoids)
        q = scale * rng.normal(size=cd.n)
        logp, grad, status = cd.call(q)
        assert status == 0
        want_lp, want_g = (t.numpy() for t in model.log_density_and_grad(tb.tensor(q)))
        mag = max(abs(float(want_lp)), float(np.max(np.abs(want_g))))
        assert_close(logp, float(want_lp), "float64", n=n_len, magnitude=mag, op="softplus",
                     what="logp: ")
        assert_close(grad, want_g, "float64", n=n_len, magnitude=mag, op="softplus",
                     what="grad: ")
        # in practice far closer than the bound: a few ulps of the scale of the terms
        assert abs(logp - float(want_lp)) <= 1e-12 * mag
        assert np.max(np.abs(grad - want_g)) <= 1e-12 * mag


def _same_bits(cd, base, states: int = 3, scale: float = 0.5) -> None:
    rng = np.random.default_rng(1)
    for _ in range(states):
        q = scale * rng.normal(size=cd.n)
        a, b = cd.call(q), base.call(q)
        assert a[2] == b[2]
        assert np.array_equal(np.float64(a[0]), np.float64(b[0]), equal_nan=True)
        assert np.array_equal(a[1].view(np.int64), b[1].view(np.int64))


def test_the_avx2_and_the_baseline_builds_give_the_same_bits() -> None:
    cd = _compile(logistic(n=1001, d=7))  # odd sizes: the vector loops' remainders too
    _same_bits(cd, _baseline(cd))


@pytest.mark.parametrize("posterior", list(P.MODELS))
def test_posteriordb_models_give_the_same_bits_on_both_builds(posterior: str) -> None:
    fx = P.load(posterior)
    model, _ = P.MODELS[posterior][0](fx["data"])
    if posterior in P.NOT_LOWERED:
        pytest.skip(f"{P.NOT_LOWERED[posterior]} has no C lowering (test_lowering checks it is "
                    f"refused by name)")
    cd = _compile(model)
    _same_bits(cd, _baseline(cd), states=2)
