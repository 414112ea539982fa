"""Staged log densities lowered to JavaScript (issue 15): logp and gradient from the JS function
(run under node, with ``tb_prelude.js``) against the NumPy path and the C lowering.

The JS lowering is the C lowering's front end with another dialect (``lower_js``): the same
steps, fusion and summation order. So JS and NumPy differ as C and NumPy do (sums in another
order, other implementations of exp/log/...), held to the same rule as tests/compiled/
test_lowering.py: ``n = chained_length(program steps, largest array)`` with the largest
magnitude among logp and the gradient, on top of the special functions' ulps. JS and C differ
only by their math libraries (V8's fdlibm ports and tb_prelude.js against glibc and
tb_vmath.h), each within a few ulps per call, so they are held to the same rule and, where the
program has no transcendental call, expected to agree exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorbridge as tb
from tensorbridge.runtime.backends import get_backend
from tensorbridge.runtime.compiled.lowering import LoweredJs, LoweringError, lower, lower_js
from tensorbridge.runtime.testing import assert_close, chained_length

from ..ppl import posteriordb_models as P
from ..ppl.test_distributions import CASES, IDS
from .node_js import needs_node, run_node
from .test_lowering import Y8, eight_schools, logistic_regression

pytestmark = needs_node

_EVAL = """
const TB = load("tb_prelude.js", "makePrelude");
const make = new Function("C", "TB", input.source + "\\nreturn makeDensity(C, TB);");
const C = input.constants.map(([dtype, values]) => dtype === "float64"
  ? Float64Array.from(values) : dtype === "bool" ? Uint8Array.from(values)
  : Int32Array.from(values));
const density = make(C, TB);
const n = input.n, lp = new Float64Array(1), grad = new Float64Array(n);
const logps = [], grads = [], status = [];
for (const q of input.states) {
  status.push(density(q, lp, grad));
  logps.push(lp[0]);
  grads.push(Float64Array.from(grad));
}
output({logps: Float64Array.from(logps), grads, status});
"""


def run_js(lowered: LoweredJs, states: list[np.ndarray]) -> tuple[np.ndarray, list, list]:
    """``(logps, grads, statuses)`` of the JS density at each state, from node."""
    # float constants as exact float64 arrays (NaN and infinities included), the rest as JSON
    consts = [[c.dtype, np.asarray(c.values, dtype=np.float64) if c.dtype == "float64"
               else [int(v) for v in c.values]] for c in lowered.constants]
    out = run_node(_EVAL, {"source": lowered.source, "constants": consts, "n": lowered.n,
                           "states": [np.asarray(q, dtype=np.float64) for q in states]})
    return out["logps"], out["grads"], out["status"]


def run_c(rec: Any, states: list[np.ndarray]) -> tuple[list[float], list[np.ndarray]]:
    """The C lowering of the same recording at ``states`` (skipped without a compiler)."""
    from tensorbridge.runtime.compiled.build import compile_module, compiler_available
    from tensorbridge.runtime.compiled.lowering import CTX_DECL

    if compiler_available() is not None:
        pytest.skip(f"no C compiler: {compiler_available()}")
    lw = lower(rec)
    mod = compile_module(lw.name, f"{CTX_DECL}\n{lw.cdef}", lw.source)
    ffi = mod.ffi
    ptrs = ffi.new("void *[]", [ffi.cast("void *", c.ctypes.data) for c in lw.constants] or 1)
    ws = ffi.new("double[]", max(lw.workspace_bytes // 8, 1))
    ctx = ffi.new("tb_ctx *", {"c": ptrs, "ws": ffi.cast("char *", ws)})
    logps, grads = [], []
    for q in states:
        q = np.ascontiguousarray(q, dtype=np.float64)
        lp, g = ffi.new("double *"), np.empty(lw.n)
        getattr(mod.lib, lw.name)(ctx, ffi.from_buffer("double[]", q), lp,
                                  ffi.from_buffer("double[]", g))
        logps.append(lp[0])
        grads.append(g)
    return logps, grads


def _recording(model: tb.Model) -> Any:
    return model._ldg_function(True, 1).recording(model._as_free(np.zeros(model.n_free)))


def _largest(lowered: LoweredJs) -> int:
    return max((len(c.values) for c in lowered.constants), default=1)


def _check_states(rec: Any, reference: Any, states: list[np.ndarray], op: str = "lgamma",
                  fd: bool = True) -> LoweredJs:
    """The JS function of ``rec`` at ``states`` against ``reference(q) -> (logp, grad)``
    (NumPy), and its gradient against central differences of its own logp."""
    lj = lower_js(rec)
    n_len = chained_length(max(lj.steps, 1), max(_largest(lj), 1))
    h = [1e-5 * max(1.0, abs(v)) for v in states[0]] if fd else []
    probes = list(states)
    for i, hi in enumerate(h):
        for sign in (1.0, -1.0):
            q = states[0].copy()
            q[i] += sign * hi
            probes.append(q)
    logps, grads, status = run_js(lj, probes)
    for k, q in enumerate(states):
        want_lp, want_g = reference(q)
        mag = max(abs(float(want_lp)), float(np.max(np.abs(want_g), initial=0.0)))
        assert status[k] == 0
        assert_close(logps[k], float(want_lp), "float64", n=n_len, magnitude=mag, op=op,
                     what="logp: ")
        assert_close(grads[k], want_g, "float64", n=n_len, magnitude=mag, op=op,
                     what="grad: ")
    if fd:
        # central differences: truncation O(h^2) plus rounding O(u |logp| / h)
        ups, downs = logps[len(states)::2], logps[len(states) + 1::2]
        fdiff = (ups - downs) / (2 * np.asarray(h))
        scale = max(1.0, abs(logps[0]))
        np.testing.assert_allclose(grads[0], fdiff, rtol=1e-5, atol=1e-6 * scale)
    return lj


def _check_model(model: tb.Model, states: int = 3, scale: float = 0.5, seed: int = 0) -> LoweredJs:
    rng = np.random.default_rng(seed)
    qs = [scale * rng.normal(size=model.n_free) for _ in range(states)]

    def reference(q: np.ndarray) -> tuple[Any, Any]:
        lp, g = model.log_density_and_grad(tb.tensor(q))
        return lp.numpy(), g.numpy()

    return _check_states(_recording(model), reference, qs)


def test_eight_schools_matches_numpy_and_finite_differences() -> None:
    lj = _check_model(eight_schools())
    assert lj.n == 10 and "function makeDensity(C, TB)" in lj.source


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
    lj = _check_model(tb.model(shape=shape, rate=rate, a=a, b=b))
    assert "tb_digamma(" in lj.source.split("return function density")[1]


def test_integer_array_indexing_gathers_and_scatter_adds_repeated_positions() -> None:
    rng = np.random.default_rng(7)
    group = rng.integers(0, 4, size=60)
    mu = tb.normal(0.0, 1.0, dim=4)
    sd = tb.variable(lower=0.0)
    tb.distribution(tb.as_data(rng.normal(size=60) + group), tb.normal(mu[group], sd))
    lj = _check_model(tb.model(mu=mu, sd=sd))
    assert any(c.dtype == "int64" for c in lj.constants)  # the positions, as an Int32Array


def test_a_random_walk_through_cumsum_forward_and_reversed() -> None:
    steps = tb.normal(0.0, 1.0, dim=12)
    scale = tb.variable(lower=0.0)
    tb.distribution(tb.as_data(np.sin(np.arange(12.0))),
                    tb.normal(tb.cumsum(steps * scale, axis=0), 0.5))
    _check_model(tb.model(steps=steps, scale=scale))


@pytest.mark.parametrize("posterior", list(P.MODELS))
def test_posteriordb_model_matches_numpy(posterior: str) -> None:
    fx = P.load(posterior)
    model, _ = P.MODELS[posterior][0](fx["data"])
    if posterior in P.NOT_LOWERED:  # refused naming the kernel: mcmc falls back to NumPy
        with pytest.raises(LoweringError, match=P.NOT_LOWERED[posterior]):
            _check_model(model, states=2)
        return
    _check_model(model, states=2)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_distribution_log_density_and_gradient(case: Any) -> None:
    """Each family's log density summed over broadcasting parameters, and its gradient with
    respect to the value and the parameters the distribution table differentiates, as one
    staged ``value_and_grad`` of a flat vector."""
    x = np.asarray(case.value(**case.params), dtype=np.float64)
    names = [n for n in case.grad if n != "value"]
    parts = ([("value", x)] if "value" in case.grad else []) + [
        (n, np.asarray(case.params[n], dtype=np.float64)) for n in names]
    fixed = {k: tb.tensor(np.asarray(v, dtype=np.float64)) for k, v in case.params.items()
             if k not in names}
    sizes = [p.size for _, p in parts]
    q0 = np.concatenate([p.ravel() for _, p in parts])

    def logp(q: Any) -> Any:
        vals, at = {}, 0
        for (name, p), size in zip(parts, sizes):
            vals[name] = tb.reshape(q[at:at + size], p.shape)
            at += size
        xv = vals.pop("value", tb.tensor(x))
        return tb.sum(case.family.log_prob(xv, **fixed, **vals))

    staged = get_backend("numpy").compile(tb.value_and_grad(logp))
    rec = staged.recording(tb.tensor(q0))
    assert rec is not None

    def reference(q: np.ndarray) -> tuple[Any, Any]:
        lp, g = staged(tb.tensor(q))
        return lp.numpy(), g.numpy()

    # the table's point and a nearby one (still inside every support: the table's values sit
    # well inside, and the perturbation is small relative to them)
    states = [q0, q0 * (1.0 + 1e-3)]
    lj = _check_states(rec, reference, states, fd=False)
    # the C lowering of the same program (batched triangular solves included) and JS agree
    # to the same rule
    n_len = chained_length(max(lj.steps, 1), max(_largest(lj), 1))
    js_lp, js_g, _ = run_js(lj, states)
    for k, (lp, g) in enumerate(zip(*run_c(rec, states))):
        mag = max(abs(lp), float(np.max(np.abs(g), initial=0.0)))
        assert_close(js_lp[k], lp, "float64", n=n_len, magnitude=mag, op="lgamma",
                     what="JS vs C logp: ")
        assert_close(js_g[k], g, "float64", n=n_len, magnitude=mag, op="lgamma",
                     what="JS vs C grad: ")


def test_nan_division_and_rounding_semantics_agree_with_c_and_numpy() -> None:
    """Kernels no model above reaches, at NaN, infinities, zeros and negatives: JS against
    NumPy, and against the C lowering of the same recording."""
    weights = 1.0 + np.arange(126.0).reshape(21, 6) / 7.0

    def fn(q: Any) -> Any:
        a, b = q[:6], q[6:]
        parts = [tb.maximum(a, b), tb.minimum(a, b), tb.floor_divide(a, b), tb.mod(a, b),
                 tb.clip(a, -1.0, 2.0), tb.where(a > b, a, b), tb.softplus(a), tb.sigmoid(b),
                 tb.lgamma(tb.abs(a) + 0.5), tb.erf(a), tb.erfc(b), tb.expm1(a), tb.sign(b),
                 tb.cast(tb.logical_and(a < 1.0, b >= 0.0), "float64"), tb.square(b),
                 tb.power(tb.abs(a) + 1.0, b), tb.tanh(b), tb.floor(a), tb.ceil(b),
                 tb.round(a * 2.5), tb.digamma(tb.abs(a) + 0.25),
                 tb.cast(tb.logical_or(tb.logical_not(a > 0.0), tb.isnan(b)), "float64")]
        stacked = tb.stack(parts)  # [22, 6]
        marked = tb.where(tb.isnan(stacked), 1000.0, tb.where(tb.isfinite(stacked), stacked,
                                                                tb.sign(stacked) * 77.0))
        total = tb.sum(marked[:21] * tb.tensor(weights)) + tb.sum(marked[21])
        finite = tb.reshape(tb.where(tb.isfinite(q), q, 0.25), (3, 4))
        mat = tb.matmul(finite, tb.transpose(finite))
        lse = tb.logsumexp(tb.reshape(stacked[:4], (2, 2, 6)), axis=1)
        tail = tb.concat([tb.reshape(lse, (-1,))[:6], tb.reshape(mat, (-1,))[:6]], axis=0)
        return total + tb.max(tb.reshape(mat, (-1,))) + tb.prod(finite[0, :2]), tail

    staged = get_backend("numpy").compile(fn)
    q = np.array([1.5, -2.0, np.nan, 0.0, np.inf, -0.5, 0.5, 3.0, 1.0, np.nan, -np.inf, -2.0])
    with np.errstate(all="ignore"):
        rec = staged.recording(tb.tensor(q))
        want_total, want_tail = (t.numpy() for t in staged(tb.tensor(q)))
    assert np.isfinite(want_total)
    lj = lower_js(rec)
    logps, grads, status = run_js(lj, [q])
    assert status == [0]
    assert_close(logps[0], float(want_total), "float64", n=130, op="lgamma",
                 magnitude=float(np.sum(np.abs(weights))) * 1000.0)
    assert_close(grads[0], want_tail, "float64", n=12, op="logsumexp")
    assert lower(rec).steps == lj.steps  # one front end: the same program


def test_a_failed_cholesky_gives_nan_and_a_nonzero_status() -> None:
    fx = P.load("gp_pois_regr-gp_pois_regr")
    model, _ = P.gp_pois_regr(fx["data"])
    lj = lower_js(_recording(model))
    q = np.zeros(lj.n)
    bad = q.copy()
    bad[0] = np.nan
    logps, _grads, status = run_js(lj, [q, bad])
    assert status[0] == 0 and np.isfinite(logps[0])
    assert status[1] != 0 and np.isnan(logps[1])


def test_the_source_depends_on_shapes_not_data() -> None:
    a = lower_js(_recording(eight_schools()))
    mu = tb.normal(1.0, 3.0)
    tau = tb.cauchy(0.0, 2.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=8)
    tb.distribution(tb.as_data(Y8[::-1] * 2), tb.normal(mu + tau * eta, tb.as_data(Y8 ** 2 + 1)))
    b = lower_js(_recording(tb.model(mu=mu, tau=tau, eta=eta)))
    assert a.source == b.source and a.name == b.name
    assert [c.values for c in a.constants] != [c.values for c in b.constants]


def test_a_kernel_without_a_lowering_is_named() -> None:
    x = tb.variable(lower=1.0)  # the gradient needs polygamma of order 3: not lowered
    tb.distribution(tb.as_data(np.zeros(1)), tb.normal(tb.polygamma(2, x), 1.0))
    m = tb.model(x=x)
    with pytest.raises(LoweringError, match="polygamma"):
        lower_js(_recording(m))


@pytest.mark.parametrize("build", [eight_schools, logistic_regression])
def test_a_model_staged_on_the_python_backend_lowers_to_the_same_program(build: Any) -> None:
    """Pyodide stages models on the pure-Python float64 backend (TF.js has no float64): its
    recording lowers to the same JavaScript as the NumPy backend's, with the same data."""
    reference = build()
    tb.set_model_backend("python")
    try:
        model = build()
    finally:
        tb.set_model_backend(None)
    assert model.backend.name == "python" and reference.backend.name == "numpy"
    ours, theirs = lower_js(_recording(model)), lower_js(_recording(reference))
    assert ours.source == theirs.source
    assert [c.values for c in ours.constants] == [c.values for c in theirs.constants]
    q = np.linspace(-0.5, 0.5, model.n_free)
    logps, grads, status = run_js(ours, [q])
    want_lp, want_g = (t.numpy() for t in reference.log_density_and_grad(tb.tensor(q)))
    mag = max(abs(float(want_lp)), float(np.max(np.abs(want_g))))
    n_len = chained_length(max(ours.steps, 1), max(_largest(ours), 1))
    assert status == [0]
    assert_close(logps[0], float(want_lp), "float64", n=n_len, magnitude=mag, op="lgamma")
    assert_close(grads[0], want_g, "float64", n=n_len, magnitude=mag, op="lgamma")


# kernels the lowering refuses by design (the C lowering's list): a case reaching one of them
# must say so, naming the kernel
_NOT_LOWERED = ("polygamma", "argmax", "argmin", "one_hot", "arithmetic is not lowered", "solve",
                "eigh")


def _op_cases() -> list[Any]:
    from ..runtime.test_ops_table import CASES as OPS

    return [c for c in OPS if c.grad and all(
        not isinstance(a, np.ndarray) or a.dtype.kind == "f" for a in c.args)]


@pytest.mark.parametrize("case", _op_cases(), ids=str)
def test_the_op_table_lowers_with_its_gradient(case: Any) -> None:
    """Every differentiable op of the runtime's op table (tests/runtime/test_ops_table.py):
    ``sum(w * op(args))`` and its gradient with respect to every float argument, staged on
    NumPy and lowered to JavaScript, against the NumPy program at the table's point."""
    arrays = [a for a in case.args if isinstance(a, np.ndarray)]
    sizes = [a.size for a in arrays]
    q0 = np.concatenate([a.ravel() for a in arrays])
    out_shape = np.shape(case.ref(*case.args)) if case.ref is not None else None
    rng = np.random.default_rng(len(case.name))
    w = tb.tensor(rng.uniform(0.5, 1.5, out_shape)) if out_shape else None

    def loss(q: Any) -> Any:
        vals, at, k = [], 0, 0
        for a in case.args:
            if isinstance(a, np.ndarray):
                vals.append(tb.reshape(q[at:at + sizes[k]], a.shape))
                at += sizes[k]
                k += 1
            else:
                vals.append(a)
        y = case.fn(*vals)
        return tb.sum(y * w) if w is not None else tb.sum(y)

    staged = get_backend("numpy").compile(tb.value_and_grad(loss))
    rec = staged.recording(tb.tensor(q0))
    if rec is None:
        pytest.skip(f"{case.name}: not stageable (its Python reads a value)")
    try:
        lower_js(rec)
    except LoweringError as e:
        assert any(k in str(e) for k in _NOT_LOWERED), str(e)
        return

    def reference(q: np.ndarray) -> tuple[Any, Any]:
        lp, g = staged(tb.tensor(q))
        return lp.numpy(), g.numpy()

    _check_states(rec, reference, [q0], op=case.name.split("_")[0], fd=False)


def test_a_dirichlet_multinomial_model_reduces_integer_flags() -> None:
    """The simplex's support check is an "all" (a min of int32 flags): an integer reduction,
    lowered exactly in both languages."""
    p = tb.dirichlet([1.0, 2.0, 3.0])
    tb.distribution(tb.as_data([[2, 3, 5]]), tb.multinomial(10, p, dimension=3))
    model = tb.model(p=p)
    lj = _check_model(model)
    rec = _recording(model)
    assert any(name == "min" and rec.meta[refs[0]][1] == "int32"
               for name, _k, refs, _p, _o in rec.steps)
    states = [np.array([0.3, -0.2]), np.array([-1.0, 2.0])]
    for got, want in zip(run_js(lj, states)[0], run_c(rec, states)[0]):
        assert_close(got, want, "float64", n=64, op="lgamma")


def test_digamma_in_a_model_lowers_with_trigamma_in_its_gradient() -> None:
    """digamma's derivative is trigamma (polygamma of order 1): lowered in C and JavaScript
    (tb_trigamma), so a model using digamma samples compiled."""
    x = tb.variable(lower=1.0)
    tb.distribution(tb.as_data(np.array([0.3, 0.5])), tb.normal(tb.digamma(x), 1.0))
    model = tb.model(x=x)
    lj = _check_model(model)
    assert "tb_trigamma(" in lj.source.split("return function density")[1]
    rec = _recording(model)
    states = [np.array([0.4]), np.array([-0.3])]
    for got, want in zip(run_js(lj, states)[1], run_c(rec, states)[1]):
        assert_close(got, want, "float64", n=16, op="digamma")


def test_inverse_trig_and_pi_functions_match_numpy_and_finite_differences() -> None:
    from .test_lowering import _trig_model

    lj = _check_model(_trig_model())
    assert "const asin = Math.asin" in lj.source and "atanh(" in lj.source


def test_trigamma_lowers_with_tetragamma_in_its_gradient() -> None:
    from .test_lowering import _trigamma_model

    lj = _check_model(_trigamma_model())
    assert "tb_tetragamma(" in lj.source
