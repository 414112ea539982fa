"""tb.ode_solve: analytic solutions, SciPy's solve_ivp, gradients, stiffness, errors, models."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import tensorbridge as tb

solve_ivp = pytest.importorskip("scipy.integrate").solve_ivp


def f64(x):
    return tb.tensor(np.asarray(x, dtype=np.float64), dtype="float64")


def decay(t, y, k):
    return -k * y


def oscillator(t, y, w):
    return tb.stack([y[1], -w * w * y[0]])


def lotka_volterra(t, z, th):
    u, v = z[0], z[1]
    return tb.stack([(th[0] - th[1] * v) * u, (-th[2] + th[3] * u) * v])


def lv_numpy(t, z, th):
    u, v = z
    return [(th[0] - th[1] * v) * u, (-th[2] + th[3] * u) * v]


def robertson(t, y, k):
    a = -k[0] * y[0] + k[1] * y[1] * y[2]
    c = k[2] * y[1] * y[1]
    return tb.stack([a, -a - c, c])


TH = np.array([0.55, 0.028, 0.8, 0.024])
Z0 = np.array([33.0, 6.0])
K_ROB = np.array([0.04, 1e4, 3e7])


@pytest.mark.parametrize("method,rtol,bound", [("rk45", 1e-8, 1e-6), ("rosenbrock", 1e-8, 1e-6),
                                               ("ros2", 1e-6, 1e-4)])
def test_exponential_decay_matches_the_exact_solution(method, rtol, bound):
    ts = np.linspace(0.0, 3.0, 7)
    y = tb.ode_solve(decay, f64([1.0, -2.0]), ts, f64(0.7), method=method, rtol=rtol,
                     atol=rtol)
    exact = np.array([1.0, -2.0]) * np.exp(-0.7 * ts)[:, None]
    assert y.shape == (7, 2)
    np.testing.assert_array_equal(y.numpy()[0], [1.0, -2.0])  # t0 = times[0]: y0 itself
    # global error: the local tolerance accumulated over a few dozen steps
    np.testing.assert_allclose(y.numpy(), exact, rtol=bound, atol=bound)


def test_harmonic_oscillator_matches_cos_and_sin():
    ts = np.linspace(0.5, 10.0, 20)
    w = 1.7
    y = tb.ode_solve(oscillator, f64([1.0, 0.0]), ts, f64(w), t0=0.0, rtol=1e-9, atol=1e-9)
    exact = np.stack([np.cos(w * ts), -w * np.sin(w * ts)], axis=1)
    np.testing.assert_allclose(y.numpy(), exact, atol=1e-6)


@pytest.mark.parametrize("method,rtol,bound", [("rk45", 1e-8, 1e-6), ("rosenbrock", 1e-8, 1e-6),
                                               ("ros2", 1e-5, 1e-3)])
def test_lotka_volterra_matches_solve_ivp(method, rtol, bound):
    ts = np.arange(1.0, 21.0)
    y = tb.ode_solve(lotka_volterra, f64(Z0), ts, f64(TH), t0=0.0, method=method, rtol=rtol,
                     atol=rtol)
    ref = solve_ivp(lv_numpy, (0.0, 20.0), Z0, t_eval=ts, args=(TH,), method="DOP853",
                    rtol=1e-12, atol=1e-12).y.T
    np.testing.assert_allclose(y.numpy(), ref, rtol=bound)


def test_robertson_is_solved_by_the_stiff_method_in_far_fewer_steps():
    ts = np.array([1.0, 10.0, 100.0])
    y = tb.ode_solve(robertson, f64([1.0, 0.0, 0.0]), ts, f64(K_ROB), t0=0.0,
                     method="rosenbrock", rtol=1e-5, atol=1e-8, max_steps=300)
    ref = solve_ivp(lambda t, y: [-K_ROB[0] * y[0] + K_ROB[1] * y[1] * y[2],
                                  K_ROB[0] * y[0] - K_ROB[1] * y[1] * y[2] - K_ROB[2] * y[1] ** 2,
                                  K_ROB[2] * y[1] ** 2],
                    (0.0, 100.0), [1.0, 0.0, 0.0], method="Radau", rtol=1e-11, atol=1e-15,
                    t_eval=ts).y.T
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-3, atol=1e-8)
    np.testing.assert_allclose(y.numpy().sum(axis=1), 1.0, atol=1e-6)  # mass is conserved
    # the explicit method does not get past t ~ 4 in ten times that step budget
    with pytest.raises(tb.OdeSolveError, match=r"max_steps=3000.*stiff"):
        tb.ode_solve(robertson, f64([1.0, 0.0, 0.0]), ts, f64(K_ROB), t0=0.0, method="rk45",
                     rtol=1e-5, atol=1e-8, max_steps=3000)


def _fd(fn, x, eps):
    out = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps * max(1.0, abs(x.flat[i]))
        out.append((fn(x + e) - fn(x - e)) / (2 * e.flat[i]))
    return np.array(out).reshape(x.shape)


def test_gradients_match_finite_differences_of_the_solve():
    ts = np.array([2.0, 5.0, 9.0])
    w = np.array([[1.0, -0.5], [0.3, 2.0], [-1.0, 0.7]])

    def loss(z0, th, method="rk45", rtol=1e-10):
        y = tb.ode_solve(lotka_volterra, z0, ts, th, t0=0.0, method=method, rtol=rtol,
                         atol=rtol)
        return tb.sum(y * f64(w))

    g0, g1 = tb.grad(loss, argnums=(0, 1))(f64(Z0), f64(TH))
    # tight tolerances: the finite differences' noise (rtol / eps ~ 1e-5) is below the check
    fd0 = _fd(lambda z: float(loss(f64(z), f64(TH)).numpy()), Z0, 1e-5)
    fd1 = _fd(lambda th: float(loss(f64(Z0), f64(th)).numpy()), TH, 1e-5)
    np.testing.assert_allclose(g0.numpy(), fd0, rtol=1e-5)
    np.testing.assert_allclose(g1.numpy(), fd1, rtol=1e-5)
    # the stiff method's sensitivities (same substeps, own equation) against those
    r0, r1 = tb.grad(loss, argnums=(0, 1))(f64(Z0), f64(TH), "rosenbrock", 1e-8)
    np.testing.assert_allclose(r0.numpy(), g0.numpy(), rtol=1e-5)
    np.testing.assert_allclose(r1.numpy(), g1.numpy(), rtol=1e-5)


def test_gradient_of_decay_matches_the_exact_derivative_and_staging_agrees():
    ts = np.array([1.0, 2.0])

    def loss(y0, k):
        return tb.sum(tb.ode_solve(decay, y0, ts, k, t0=0.0, rtol=1e-10, atol=1e-12))

    y0, k = 1.5, 0.4
    vg = tb.value_and_grad(loss, argnums=(0, 1))
    staged = tb.function(vg)
    for _ in range(3):  # the staged program replays the solve and its sensitivities
        (v, (gy, gk)), (sv, (sgy, sgk)) = vg(f64(y0), f64(k)), staged(f64(y0), f64(k))
        np.testing.assert_allclose(sv.numpy(), v.numpy(), rtol=1e-14)
        np.testing.assert_allclose([sgy.numpy(), sgk.numpy()], [gy.numpy(), gk.numpy()],
                                   rtol=1e-14)
    e = np.exp(-k * ts)
    np.testing.assert_allclose(v.numpy(), y0 * e.sum(), rtol=1e-8)
    np.testing.assert_allclose(gy.numpy(), e.sum(), rtol=1e-8)
    np.testing.assert_allclose(gk.numpy(), (-ts * y0 * e).sum(), rtol=1e-7)
    tb.check_grads(lambda y, kk: tb.ode_solve(decay, y, ts, kk, t0=0.0, rtol=1e-11,
                                              atol=1e-13), (f64([y0, 2.0]), f64(k)),
                   modes=("rev",), order=1)


def test_bad_arguments_name_what_is_wrong():
    y0, k = f64([1.0]), f64(0.5)
    with pytest.raises(ValueError, match=r"times must be strictly increasing; times\[2\]"):
        tb.ode_solve(decay, y0, [0.0, 1.0, 1.0], k)
    with pytest.raises(ValueError, match=r"times\[0\] = 0 is before t0 = 1"):
        tb.ode_solve(decay, y0, [0.0, 2.0], k, t0=1.0)
    with pytest.raises(ValueError, match=r"y0's shape \[2\], got shape \[3\]"):
        tb.ode_solve(lambda t, y: tb.concat([y, y[:1]]), f64([1.0, 2.0]), [0.0, 1.0])
    with pytest.raises(ValueError, match="method must be one of"):
        tb.ode_solve(decay, y0, [0.0, 1.0], k, method="euler")
    with pytest.raises(ValueError, match="rtol must be a positive number"):
        tb.ode_solve(decay, y0, [0.0, 1.0], k, rtol=0)
    with pytest.raises(TypeError, match="fn must be a function"):
        tb.ode_solve(3.0, y0, [0.0, 1.0])
    with pytest.raises(tb.OdeSolveError, match="max_steps=5 reached"):
        tb.ode_solve(lotka_volterra, f64(Z0), [0.0, 20.0], f64(TH), max_steps=5)


def test_lotka_volterra_model_is_fitted():
    """A model with ode_solve: the posterior mode recovers the parameters of noiseless-ish data,
    and a failed solve inside the model is NaN (a rejected proposal), not an error."""
    ts = np.arange(1.0, 11.0)
    truth = solve_ivp(lv_numpy, (0.0, 10.0), Z0, t_eval=ts, args=(TH,), rtol=1e-10,
                      atol=1e-10).y.T
    rng = np.random.default_rng(1)
    obs = truth * np.exp(0.02 * rng.standard_normal(truth.shape))
    theta = tb.normal(np.array([1.0, 0.05, 1.0, 0.05]), 0.5, truncation=(0.0, math.inf))
    z = tb.ode_solve(lotka_volterra, Z0, ts, theta, t0=0.0, rtol=1e-6, atol=1e-6)
    tb.distribution(tb.as_data(obs), tb.lognormal(tb.log(z), 0.02))
    m = tb.model(theta)
    fit = tb.opt(m, initial_values={theta: [0.5, 0.03, 0.9, 0.02]}, max_iterations=200)
    est = np.asarray(next(iter(fit.par.values())))
    np.testing.assert_allclose(est, TH, rtol=0.05)
    # a solve that fails inside a model (here: out of steps) is NaN, not an error
    k = tb.normal(1.0, 0.5, truncation=(0.0, math.inf))
    y = tb.ode_solve(decay, [1.0], [0.0, 5.0], k, max_steps=2)
    tb.distribution(tb.as_data([[1.0], [0.1]]), tb.normal(y, 0.1))
    lp = tb.model(k).log_density(np.zeros(1))
    assert math.isnan(float(lp.numpy()))


def test_vmap_of_value_and_grad_matches_each_example_staged():
    """The sampler's shape of call: chains batched by vmap, staged. Each example's value and
    gradient are those of its own solve (the sensitivities computed ahead are matched to their
    inputs exactly)."""
    ts = np.array([1.0, 3.0])

    def loss(q):
        return tb.sum(tb.ode_solve(lotka_volterra, q[:2], ts, q[2:], t0=0.0, rtol=1e-6,
                                   atol=1e-6) ** 2)

    q = np.concatenate([Z0, TH])[None, :] * np.array([[0.97], [1.0], [1.03]])
    batched = tb.function(tb.vmap(tb.value_and_grad(loss)))
    single = [tb.value_and_grad(loss)(f64(x)) for x in q]
    for _ in range(3):
        v, g = batched(f64(q))
        np.testing.assert_array_equal(v.numpy(), [s[0].numpy() for s in single])
        np.testing.assert_array_equal(g.numpy(), np.stack([s[1].numpy() for s in single]))


def test_model_with_ode_solve_calculates_pickles_and_samples_in_worker_processes():
    import pickle

    k = tb.normal(1.0, 0.3, truncation=(0.0, math.inf))
    y = tb.ode_solve(decay, [2.0], [1.0, 2.0], k, t0=0.0)
    tb.distribution(tb.as_data([[2 * math.exp(-0.8)], [2 * math.exp(-1.6)]]), tb.normal(y, 0.05))
    m = tb.model(k=k)
    got = tb.calculate(y, values={k: 0.5})
    np.testing.assert_allclose(np.asarray(got).reshape(-1), 2 * np.exp(-0.5 * np.array([1, 2])),
                               rtol=1e-5)
    problem = pickle.loads(pickle.dumps(y.node.params["problem"]))
    ys, _ = problem.solve(np.array([2.0]), [np.array(0.5)], False)
    np.testing.assert_allclose(ys[:, 0], 2 * np.exp(-0.5 * np.array([1, 2])), rtol=1e-5)
    draws = tb.mcmc(m, n_samples=100, warmup=100, chains=2, n_cores=2, seed=3, progress=False,
                    backend="numpy")
    assert abs(draws.summary()["k"]["mean"] - 0.8) < 0.05


@pytest.mark.parametrize("backend", ["python", "tensorflow"])
def test_other_backends_solve_through_numpy(backend: str) -> None:
    """fn is staged on NumPy whatever the backend; each backend's kernel crosses to NumPy and
    back, values and gradients the same as on NumPy."""
    if backend == "tensorflow":
        pytest.importorskip("tensorflow")

    def run(be: str) -> tuple[Any, Any]:
        y0 = tb.tensor([1.0, 2.0], dtype="float64", backend=be)
        k = tb.tensor([0.7], dtype="float64", backend=be)

        def f(t: Any, y: Any, k: Any) -> Any:
            return -k * y

        out = tb.ode_solve(f, y0, [0.5, 1.0], k, t0=0.0, rtol=1e-10, atol=1e-10)
        g = tb.grad(lambda k: tb.sum(tb.ode_solve(f, y0, [1.0], k, t0=0.0, rtol=1e-10,
                                                  atol=1e-10)))(k)
        assert out.backend.name == be and g.backend.name == be
        return out.numpy(), g.numpy()

    out, g = run(backend)
    want_out, want_g = run("numpy")
    np.testing.assert_allclose(out, np.exp(-0.7 * np.array([0.5, 1.0]))[:, None] * [1, 2],
                               rtol=1e-8)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_allclose(g, -3 * np.exp(-0.7), rtol=1e-8)
    np.testing.assert_array_equal(g, want_g)


def test_rk45_reads_times_inside_its_steps_from_the_continuous_extension():
    """Many output times cost no extra steps, and the interpolated values are as accurate as
    the steps' ends (the fourth-order extension's error shrinks with the tolerance)."""
    from tensorbridge.runtime import ode

    problems = []
    real_bind = ode.bind

    def spy(prim, args, params):
        problems.append(params["problem"])
        return real_bind(prim, args, params)

    w = 1.7
    errors = []
    for tol in (1e-6, 1e-9):
        steps = []
        for ts in (np.array([10.0]), np.linspace(0.05, 10.0, 200)):
            ode.bind, problems[:] = spy, []
            try:
                y = tb.ode_solve(oscillator, f64([1.0, 0.0]), ts, f64(w), t0=0.0, rtol=tol,
                                 atol=tol).numpy()
            finally:
                ode.bind = real_bind
            steps.append(problems[0].steps)
            exact = np.stack([np.cos(w * ts), -w * np.sin(w * ts)], axis=1)
            errors.append(np.max(np.abs(y - exact)))
        assert steps[0] == steps[1], steps  # the same steps whatever the output times
    assert errors[1] < 1e-3 and errors[3] < 2e-6, errors  # ~100 tol of global error
    assert errors[3] < errors[1] * 1e-2, errors


def test_value_and_gradient_cost_one_augmented_solve_whatever_the_number_of_arguments():
    """Each differentiated argument's VJP reads the same sensitivities: with three
    arguments a value and gradient is one solve (it was one per argument)."""
    from tensorbridge.runtime import ode

    def rhs(t, y, a, b, c):
        return -a * y + b * tb.sin(c * t)

    ts = np.array([0.5, 1.0, 2.0])

    def loss(q):
        return tb.sum(tb.ode_solve(rhs, f64([1.0]), ts, q[0], q[1], q[2], t0=0.0, rtol=1e-10,
                                    atol=1e-10) ** 2)

    vg = tb.function(tb.value_and_grad(loss))
    q = f64([0.7, 0.3, 2.0])
    vg(q)  # the first gradient switches the solves to carrying sensitivities
    calls = []
    real_run = ode._run

    def counting(problem, raws, sens):
        calls.append(sens)
        return real_run(problem, raws, sens)

    ode._run = counting
    try:
        for x in ([0.7, 0.3, 2.0], [0.8, 0.2, 1.5]):
            _, g = vg(f64(x))
    finally:
        ode._run = real_run
    assert calls == [True, True]
    eps = 1e-6
    fd = [(float(loss(f64(np.array(x) + eps * e)).numpy())
           - float(loss(f64(np.array(x) - eps * e)).numpy())) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-4)


def test_vmap_integrates_rk45_members_together_each_as_its_own_solve():
    """Under vmap (a sampler's chains) rk45's members are one batched integration (one staged
    call per stage for all of them), each with its own steps: values and gradients equal each
    member's own solve exactly, members needing different numbers of steps included."""
    from tensorbridge.runtime import ode

    ts = np.array([2.0, 7.0, 15.0])

    def loss(q):
        return tb.sum(tb.ode_solve(lotka_volterra, q[:2], ts, q[2:], t0=0.0, rtol=1e-5,
                                   atol=1e-3) ** 2)

    q = np.concatenate([Z0, TH])[None, :] * np.array([[0.6], [1.0], [1.5], [2.5]])
    batched = tb.function(tb.vmap(tb.value_and_grad(loss)))
    sizes = []
    real = ode._Problem.solve_batch

    def spy(self, y0s, args, sens):
        sizes.append(len(y0s))
        return real(self, y0s, args, sens)

    ode._Problem.solve_batch = spy
    try:
        results = [batched(f64(q)) for _ in range(3)]  # the 2nd on carries sensitivities
    finally:
        ode._Problem.solve_batch = real
    assert sizes == [4, 4, 4]
    single = tb.function(tb.value_and_grad(loss))
    expected = [single(f64(x)) for x in q]
    for v, g in results:
        np.testing.assert_array_equal(v.numpy(), [e[0].numpy() for e in expected])
        np.testing.assert_array_equal(g.numpy(), np.stack([e[1].numpy() for e in expected]))


def test_vmap_member_that_fails_is_nan_in_a_model_and_the_others_are_not():
    from tensorbridge.runtime import ode

    k = tb.normal(1.0, 0.5, truncation=(0.0, math.inf))
    y = tb.ode_solve(decay, [1.0], [0.0, 5.0], k, max_steps=40)
    tb.distribution(tb.as_data([[1.0], [0.1]]), tb.normal(y, 0.1))
    m = tb.model(k)
    free = np.log(np.array([[0.5], [60.0], [1.0]]))  # k = 60 needs more than 40 steps
    outcomes = []
    real = ode._Problem.solve_batch

    def spy(self, y0s, args, sens):
        out = real(self, y0s, args, sens)
        outcomes.append([isinstance(r, ode.OdeSolveError) for r in out])
        return out

    ode._Problem.solve_batch = spy
    try:
        lp, g = m.log_density_and_grad(free)
        lp, g = m.log_density_and_grad(free)  # with sensitivities
    finally:
        ode._Problem.solve_batch = real
    assert outcomes == [[False, True, False]] * 2
    lp, g = lp.numpy(), g.numpy()
    assert math.isnan(lp[1])
    for i in (0, 2):
        lp1, g1 = m.log_density_and_grad(free[i])
        np.testing.assert_array_equal([lp[i], *g[i]], [float(lp1.numpy()), *g1.numpy()])
