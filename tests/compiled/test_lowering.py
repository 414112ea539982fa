"""Staged log densities lowered to C (issue 14): the C logp and gradient equal the NumPy path's.

Tolerance (``tensorbridge.runtime.testing``): C and NumPy run the same operations in float64 but
may sum in another order (pairwise vs sequential sums, BLAS vs loops) and call other libm
implementations, and the differences propagate through the program's steps. Each result is held
to ``n = chained_length(program steps, largest array)`` with ``magnitude`` the largest absolute
value among the log density and its gradient (the scale of the terms they are summed from), on
top of the kernels' own ulps (those of the special functions).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.compiled.build import compiler_available
from tensorbridge.runtime.compiled.lowering import LoweringError, lower
from tensorbridge.runtime.testing import assert_close, chained_length

from ..ppl import posteriordb_models as P

pytestmark = pytest.mark.skipif(compiler_available() is not None,
                                reason=f"no C compiler here: {compiler_available()}")

Y8 = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
SIGMA8 = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def eight_schools(j: int = 8) -> tb.Model:
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=j)
    tb.distribution(tb.as_data(Y8[:j]), tb.normal(mu + tau * eta, tb.as_data(SIGMA8[:j])))
    return tb.model(mu=mu, tau=tau, eta=eta)


def logistic_regression(n: int = 500, d: int = 5, seed: int = 42) -> tb.Model:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(x @ rng.normal(size=d))))).astype(float)
    alpha = tb.normal(0.0, 5.0)
    beta = tb.normal(0.0, 1.0, dim=d)
    tb.distribution(tb.as_data(y), tb.bernoulli(tb.sigmoid(alpha + tb.as_data(x) @ beta)))
    return tb.model(alpha=alpha, beta=beta)


def _compile(model: tb.Model):
    from tensorbridge.runtime.ppl.compiled_density import compile_density

    return compile_density(model)


def _check_model(model: tb.Model, states: int = 3, scale: float = 0.5, seed: int = 0) -> None:
    cd = _compile(model)
    assert cd.n == model.n_free and isinstance(cd.fn_address, int) and cd.fn_address
    n_len = chained_length(max(cd.lowered.steps, 1), max(_largest(cd), 1))
    rng = np.random.default_rng(seed)
    for _ in range(states):
        q = scale * rng.normal(size=cd.n)
        logp, grad = cd(q)
        want_lp, want_g = (t.numpy() for t in model.log_density_and_grad(tb.tensor(q)))
        mag = max(abs(float(want_lp)), float(np.max(np.abs(want_g))))
        assert_close(logp, float(want_lp), "float64", n=n_len, magnitude=mag, op="lgamma",
                     what="logp: ")
        assert_close(grad, want_g, "float64", n=n_len, magnitude=mag, op="lgamma",
                     what="grad: ")
        _check_finite_differences(cd, q, grad)


def _largest(cd) -> int:
    return max((c.size for c in cd.lowered.constants), default=1)


def _check_finite_differences(cd, q: np.ndarray, grad: np.ndarray) -> None:
    """Central differences of the C log density: truncation error O(h^2) plus rounding
    O(u |logp| / h), far below the tolerance for these smooth densities."""
    fd = np.empty_like(q)
    for i in range(q.size):
        h = 1e-5 * max(1.0, abs(q[i]))
        up, down = q.copy(), q.copy()
        up[i] += h
        down[i] -= h
        fd[i] = (cd(up)[0] - cd(down)[0]) / (2 * h)
    scale = max(1.0, abs(cd(q)[0]))
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6 * scale)


def test_eight_schools_matches_numpy_and_finite_differences() -> None:
    _check_model(eight_schools())


def test_logistic_regression_matches_numpy_and_finite_differences() -> None:
    _check_model(logistic_regression())


def test_free_gamma_and_beta_shapes_need_lgamma_and_digamma() -> None:
    rng = np.random.default_rng(3)
    shape = tb.variable(lower=0.0)
    rate = tb.variable(lower=0.0)
    tb.distribution(tb.as_data(rng.gamma(2.0, 1.5, size=40)), tb.gamma(shape, rate))
    a = tb.variable(lower=0.0)
    b = tb.variable(lower=0.0)
    tb.distribution(tb.as_data(rng.beta(2.0, 5.0, size=30)), tb.beta(a, b))
    model = tb.model(shape=shape, rate=rate, a=a, b=b)
    assert "tb_digamma(" in _compile(model).source.split("int tb_ldg")[1]
    _check_model(model)


def test_integer_array_indexing_gathers_and_scatter_adds_repeated_positions() -> None:
    """A hierarchical model indexed by data (group of each observation): a gather of integer
    positions forward, a scatter-add with repeated positions (np.add.at) backward."""
    rng = np.random.default_rng(7)
    group = rng.integers(0, 4, size=60)
    mu = tb.normal(0.0, 1.0, dim=4)
    sd = tb.variable(lower=0.0)
    tb.distribution(tb.as_data(rng.normal(size=60) + group), tb.normal(mu[group], sd))
    _check_model(tb.model(mu=mu, sd=sd))


@pytest.mark.parametrize("posterior", list(P.MODELS))
def test_posteriordb_model_matches_numpy(posterior: str) -> None:
    fx = P.load(posterior)
    model, _ = P.MODELS[posterior][0](fx["data"])
    if posterior in P.NOT_LOWERED:  # refused naming the kernel: mcmc falls back to NumPy
        with pytest.raises(LoweringError, match=P.NOT_LOWERED[posterior]):
            _check_model(model, states=2)
        return
    _check_model(model, states=2)


def test_the_source_depends_on_shapes_not_data() -> None:
    """Data reach the C function through ctx: other data of the same shapes, same module."""
    a = _compile(eight_schools())
    mu = tb.normal(1.0, 3.0)
    tau = tb.cauchy(0.0, 2.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=8)
    tb.distribution(tb.as_data(Y8[::-1] * 2), tb.normal(mu + tau * eta, tb.as_data(SIGMA8 + 1)))
    other = tb.model(mu=mu, tau=tau, eta=eta)
    b = _compile(other)
    assert a.source == b.source and a.fn_address == b.fn_address
    q = np.linspace(-1, 1, 10)
    want = float(other.log_density_and_grad(tb.tensor(q))[0].numpy())
    assert_close(b(q)[0], want, "float64", n=1000, magnitude=abs(want))
    assert a(q)[0] != b(q)[0]


def test_contexts_are_independent_and_the_function_has_no_static_state() -> None:
    cd = _compile(eight_schools())
    assert "static double" not in cd.source and "lgamma(" not in cd.source.replace(
        "tb_lgamma(", "")
    addr1, keep1 = cd.new_context()
    addr2, keep2 = cd.new_context()
    assert addr1 != addr2 and keep1 is not keep2
    rng = np.random.default_rng(5)
    states = [rng.normal(size=cd.n) for _ in range(8)]
    want = [cd(q) for q in states]
    # a context reused for other states gives the same bits: nothing carries over
    again = cd(states[0])
    assert again[0] == want[0][0] and np.array_equal(again[1], want[0][1])

    def worker(k: int) -> bool:  # each thread its own context (CompiledDensity's per thread)
        return all(cd(states[(k + i) % 8])[0] == want[(k + i) % 8][0] for i in range(400))

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(worker, range(4)))


def test_a_failed_cholesky_gives_nan_and_a_nonzero_status() -> None:
    fx = P.load("gp_pois_regr-gp_pois_regr")
    model, _ = P.gp_pois_regr(fx["data"])
    cd = _compile(model)
    q = np.zeros(cd.n)
    q[1] = -800.0  # alpha = exp(-800) underflows to 0: the covariance is 1e-10 I, still PD
    logp, _grad, status = cd.call(q)
    assert status == 0
    # a NaN free state makes every factor NaN: the C code reports it and returns NaN, as NumPy
    q[0] = np.nan
    logp, _grad, status = cd.call(q)
    want = float(model.log_density_and_grad(tb.tensor(q))[0].numpy())
    assert status != 0 and np.isnan(logp) and np.isnan(want)


def test_elementwise_kernels_keep_numpys_nan_and_division_semantics() -> None:
    """Kernels the models above do not reach, at NaN, infinities, zeros and negatives."""
    from tensorbridge.runtime.backends import get_backend

    weights = 1.0 + np.arange(126.0).reshape(21, 6) / 7.0

    def terms(q):
        a, b = q[:6], q[6:]
        parts = [tb.maximum(a, b), tb.minimum(a, b), tb.floor_divide(a, b), tb.mod(a, b),
                 tb.clip(a, -1.0, 2.0), tb.where(a > b, a, b), tb.softplus(a), tb.sigmoid(b),
                 tb.lgamma(tb.abs(a) + 0.5), tb.erf(a), tb.erfc(b), tb.expm1(a), tb.sign(b),
                 tb.cast(tb.logical_and(a < 1.0, b >= 0.0), "float64"), tb.square(b),
                 tb.power(tb.abs(a) + 1.0, b), tb.tanh(b), tb.floor(a), tb.ceil(b),
                 tb.round(a * 2.5), tb.digamma(tb.abs(a) + 0.25)]
        stacked = tb.stack(parts)  # [21, 6]
        # NaN and infinities as distinct finite values, weighted by position: the total sees
        # which element is NaN, infinite or neither
        marked = tb.where(tb.isnan(stacked), 1000.0, tb.where(tb.isfinite(stacked), stacked,
                                                                tb.sign(stacked) * 77.0))
        return stacked, marked * tb.tensor(weights)

    def fn(q):
        stacked, weighted = terms(q)
        lse = tb.logsumexp(tb.reshape(stacked[:4], (2, 2, 6)), axis=1)  # [2, 6]
        finite = tb.reshape(tb.where(tb.isfinite(q), q, 0.25), (3, 4))
        mat = tb.matmul(finite, tb.transpose(finite))  # [3, 3]
        tail = tb.concat([tb.reshape(lse, (-1,))[:6], tb.reshape(mat, (-1,))[:6]], axis=0)
        return tb.sum(weighted) + tb.max(tb.reshape(mat, (-1,))) + tb.prod(finite[0, :2]), tail

    staged = get_backend("numpy").compile(fn)
    q = np.array([1.5, -2.0, np.nan, 0.0, np.inf, -0.5, 0.5, 3.0, 1.0, np.nan, -np.inf, -2.0])
    rec = staged.recording(tb.tensor(q))
    lw = lower(rec)
    from tensorbridge.runtime.compiled.build import compile_module
    from tensorbridge.runtime.compiled.lowering import CTX_DECL

    mod = compile_module(lw.name, f"{CTX_DECL}\n{lw.cdef}", lw.source)
    ffi = mod.ffi
    consts = [ffi.cast("void *", c.ctypes.data) for c in lw.constants]
    ptrs = ffi.new("void *[]", consts or 1)
    ws = ffi.new("double[]", max(lw.workspace_bytes // 8, 1))
    ctx = ffi.new("tb_ctx *", {"c": ptrs, "ws": ffi.cast("char *", ws)})
    logp = ffi.new("double *")
    out = np.empty(12)
    getattr(mod.lib, lw.name)(ctx, ffi.from_buffer("double[]", q), logp,
                              ffi.from_buffer("double[]", out))
    want_total, want_tail = (t.numpy() for t in staged(tb.tensor(q)))
    assert np.isfinite(want_total)  # NaN would match NaN: the total must test something
    # the terms of the sum, plus a bound of max(mat) and the product (finite entries <= 3)
    magnitude = float(np.sum(np.abs(terms(tb.tensor(q))[1].numpy()))) + 100.0
    assert_close(logp[0], float(want_total), "float64", n=130, op="lgamma",
                 magnitude=magnitude)
    assert_close(out, want_tail, "float64", n=12, op="logsumexp")


def test_the_disk_cache_serves_a_second_process(tmp_path, monkeypatch) -> None:
    from tensorbridge.runtime.compiled import build

    monkeypatch.setenv("TENSORBRIDGE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "_loaded", {})
    first = _compile(eight_schools(5))  # a shape no other test uses: built here
    assert not first.cached and first.compile_seconds > 0
    child = textwrap.dedent(f"""
        import numpy as np, tensorbridge as tb
        from tensorbridge.runtime.ppl.compiled_density import compile_density
        mu = tb.normal(0.0, 5.0)
        tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
        eta = tb.normal(0.0, 1.0, dim=5)
        tb.distribution(tb.as_data(np.array({Y8[:5].tolist()})),
                        tb.normal(mu + tau * eta, tb.as_data(np.array({SIGMA8[:5].tolist()}))))
        cd = compile_density(tb.model(mu=mu, tau=tau, eta=eta))
        print(cd.cached, cd.compile_seconds, repr(cd(np.zeros(7))[0]))
    """)
    import os

    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                         env={**os.environ, "TENSORBRIDGE_CACHE_DIR": str(tmp_path)},
                         check=True)
    assert out.stdout.split() == ["True", "0.0", repr(first(np.zeros(7))[0])]


def test_a_kernel_without_a_lowering_is_named() -> None:
    # tetragamma's gradient is polygamma of order 3: not lowered
    x = tb.variable(lower=1.0)
    tb.distribution(tb.as_data(np.zeros(1)), tb.normal(tb.polygamma(2, x), 1.0))
    with pytest.raises(LoweringError, match="polygamma"):
        _compile(tb.model(x=x))
    assert issubclass(LoweringError, NotImplementedError)


def test_a_random_walk_through_cumsum_forward_and_reversed() -> None:
    steps = tb.normal(0.0, 1.0, dim=12)
    scale = tb.variable(lower=0.0)
    walk = tb.cumsum(steps * scale, axis=0)
    tb.distribution(tb.as_data(np.sin(np.arange(12.0))), tb.normal(walk, 0.5))
    model = tb.model(steps=steps, scale=scale)
    rec = model._ldg_function(True, 1).recording(model._as_free(np.zeros(13)))
    scans = {p["reverse"] for name, _k, _r, p, _o in rec.steps if name == "cumsum"}
    assert scans == {False, True}  # the scan and its gradient, the reversed scan
    _check_model(model)


def test_only_float64_numpy_models_are_lowered() -> None:
    x = tb.variable(dim=2, dtype="float32") if _has_dtype_arg() else None
    if x is None:
        pytest.skip("tb.variable takes no dtype")
    tb.distribution(tb.as_data(np.zeros(2, dtype=np.float32)), tb.normal(x, 1.0))
    with pytest.raises(LoweringError, match="float64"):
        _compile(tb.model(x=x))


def _has_dtype_arg() -> bool:
    import inspect

    return "dtype" in inspect.signature(tb.variable).parameters


def _trig_model() -> tb.Model:
    """The inverse trigonometric and hyperbolic functions and sinpi/cospi/tanpi in a density:
    each lowers (asin... of math.h; sinpi and co. are composites of round, floor, sin, cos)."""
    x = tb.normal(0.0, 1.0, dim=6)
    u = tb.tanh(x) * 0.9  # in (-1, 1)
    mean = (tb.arcsin(u) + tb.arccos(u) + tb.arctan(x) + tb.arcsinh(x)
            + tb.arccosh(tb.exp(x) + 1.0) + tb.arctanh(u) + tb.sinpi(x) + tb.cospi(x * 0.7)
            + tb.tanpi(u * 0.4))
    tb.distribution(tb.as_data(np.linspace(-1.0, 2.0, 6)), tb.normal(mean, 0.5))
    return tb.model(x=x)


def test_inverse_trig_and_pi_functions_lower_with_their_gradients() -> None:
    model = _trig_model()
    cd = _compile(model)
    for name in ("asin(", "acos(", "atan(", "asinh(", "acosh(", "atanh(", "nearbyint("):
        assert name in cd.source
    _check_model(model)
    # at multiples of 1/2, where sinpi/cospi are exact and the reduction switches branch
    q = np.array([0.5, -1.0, 0.0, 2.5, 1.5, -0.5])
    logp, grad = cd(q)
    want_lp, want_g = (t.numpy() for t in model.log_density_and_grad(tb.tensor(q)))
    assert_close(logp, float(want_lp), "float64", n=64, magnitude=abs(float(want_lp)))
    assert_close(grad, want_g, "float64", n=64, magnitude=float(np.max(np.abs(want_g))))


def _trigamma_model() -> tb.Model:
    """trigamma in a density: its gradient needs polygamma of order 2 (tb_tetragamma), at
    positive arguments and, through the reflection, negative ones."""
    x = tb.normal(0.0, 1.0, dim=4)
    mean = tb.trigamma(tb.exp(x) + 0.3) + tb.trigamma(x * 0.1 - 0.5)
    tb.distribution(tb.as_data(np.array([1.0, 2.0, 0.5, 3.0])), tb.normal(mean, 1.0))
    return tb.model(x=x)


def test_trigamma_lowers_with_tetragamma_in_its_gradient() -> None:
    model = _trigamma_model()
    assert "tb_tetragamma(" in _compile(model).source
    _check_model(model)
