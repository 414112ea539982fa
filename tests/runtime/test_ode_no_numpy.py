"""tb.ode_solve where NumPy cannot be imported (Pyodide's core, the JavaScript door): a
subprocess hides NumPy (``sys.modules["numpy"] = None``) and runs on the python backend, so the
integrators run on the python arrays (runtime/ode_pure.py). Values are checked against SciPy's
solve_ivp (DOP853 at tight tolerances) computed here, gradients against central differences of
those SciPy solutions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

solve_ivp = pytest.importorskip("scipy.integrate").solve_ivp

TIMES = [0.0, 1.0, 2.5, 4.0]
Y0 = [10.0, 5.0]
THETA = [1.1, 0.4, 0.4, 0.1]

SCRIPT = textwrap.dedent("""
    import json, sys
    sys.modules["numpy"] = None  # import numpy raises ImportError from here on
    import tensorbridge as tb
    from tensorbridge.runtime import ode
    assert ode._PURE
    tb.set_backend("python")

    def lv(t, z, th):
        u, v = z[0], z[1]
        return tb.stack([(th[0] - th[1] * v) * u, (-th[2] + th[3] * u) * v])

    times, y0, theta = json.loads(sys.argv[1])
    out = {}
    for method in ("rk45", "rosenbrock"):
        y = tb.ode_solve(lv, tb.tensor(y0), times, tb.tensor(theta), method=method,
                         rtol=1e-9, atol=1e-9)
        assert y.backend.name == "python"
        out[method] = y.tolist()
    out["ros2"] = tb.ode_solve(lv, tb.tensor(y0), times[:2], tb.tensor(theta), method="ros2",
                               rtol=1e-4, atol=1e-4).tolist()
    loss = lambda th: tb.ode_solve(lv, tb.tensor(y0), times, th, rtol=1e-10, atol=1e-10)[-1, 0]
    out["grad"] = tb.grad(loss)(tb.tensor(theta)).tolist()
    try:
        tb.ode_solve(lv, tb.tensor(y0), [0.0, 1.0], tb.tensor(theta), max_steps=3)
    except tb.OdeSolveError as e:
        out["error"] = str(e)
    print(json.dumps(out))
""")


def _lv(t, z, th):
    u, v = z
    return [(th[0] - th[1] * v) * u, (-th[2] + th[3] * u) * v]


def _scipy(theta, times=TIMES):
    sol = solve_ivp(_lv, (times[0], times[-1]), Y0, t_eval=times, args=(theta,),
                    method="DOP853", rtol=1e-13, atol=1e-13)
    assert sol.success
    return sol.y.T


def test_ode_solve_without_numpy_matches_solve_ivp_and_finite_differences():
    env = dict(os.environ, TENSORBRIDGE_PPL_ARRAYS="pure", TENSORBRIDGE_BACKEND="python")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps([TIMES, Y0, THETA])],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    want = _scipy(THETA)
    for method in ("rk45", "rosenbrock"):
        # error per step below 1e-9 (RMS, relative + absolute): over ~4 time units of this
        # non-stiff cycle the global error stays within a few hundred times that
        np.testing.assert_allclose(out[method], want, rtol=2e-6, atol=2e-6, err_msg=method)
    np.testing.assert_allclose(out["ros2"], want[:2], rtol=5e-3, atol=5e-3)
    h = 1e-5
    fd = []
    for i in range(len(THETA)):
        up, down = list(THETA), list(THETA)
        up[i] += h
        down[i] -= h
        fd.append((_scipy(up)[-1, 0] - _scipy(down)[-1, 0]) / (2 * h))
    np.testing.assert_allclose(out["grad"], fd, rtol=1e-5, atol=1e-6)
    assert "max_steps=3" in out["error"]
