"""posteriordb's ODE models written with ``tb.ode_solve`` (registered in posteriordb_models.MODELS).

Each builder takes a fixture's ``data`` and returns ``(model, initial_values)`` as the builders in
posteriordb_models.py do; the targets are the Stan program's parameters.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

INF = math.inf


def lotka_volterra_rhs(t: Any, z: Any, theta: Any) -> Any:
    """Stan's ``dz_dt``: prey u and predator v with theta = (alpha, beta, gamma, delta)."""
    import tensorbridge as tb

    u, v = z[0], z[1]
    return tb.stack([(theta[0] - theta[1] * v) * u, (-theta[2] + theta[3] * u) * v])


def lotka_volterra(d: dict[str, Any]) -> Any:
    """hudson_lynx_hare-lotka_volterra: integrate_ode_rk45 from t = 0 to ts with Stan's
    tolerances (rtol 1e-5, atol 1e-3); theta[1, 3] ~ N(1, 0.5), theta[2, 4] ~ N(0.05, 0.05),
    all truncated at 0 (Stan's <lower=0> with normal priors), sigma ~ lognormal(-1, 1),
    z_init ~ lognormal(log 10, 1); y_init and y ~ lognormal(log z, sigma). Passes its
    reference check at 4 x (200 + 600) (TB_POSTERIORDB=all): 45 min wall on a shared 2-CPU
    machine, the 4 chains' solves batched (ode_solve under vmap)."""
    import tensorbridge as tb

    theta = tb.normal(np.array([1.0, 0.05, 1.0, 0.05]), np.array([0.5, 0.05, 0.5, 0.05]),
                      truncation=(0.0, INF))
    z_init = tb.lognormal(math.log(10.0), 1.0, dim=2)
    sigma = tb.lognormal(-1.0, 1.0, dim=2)
    z = tb.ode_solve(lotka_volterra_rhs, z_init, np.asarray(d["ts"], dtype=float), theta,
                     t0=0.0, method="rk45", rtol=1e-5, atol=1e-3, max_steps=500)
    tb.distribution(tb.as_data(np.asarray(d["y_init"], dtype=float)),
                    tb.lognormal(tb.log(z_init), sigma))
    tb.distribution(tb.as_data(np.asarray(d["y"], dtype=float)), tb.lognormal(tb.log(z), sigma))
    # a start near the posterior's bulk: from uniform(-2, 2) on the free scale the predator
    # and prey rates start far apart and warmup spends its budget on the ODE's stiff corners
    inits = {theta: [0.5, 0.03, 0.8, 0.03], z_init: [30.0, 5.0], sigma: [0.3, 0.3]}
    return tb.model(theta=theta, z_init=z_init, sigma=sigma), inits


def one_comp_rhs(t: Any, y: Any, k_a: Any, K_m: Any, V_m: Any, D: float, V: float) -> Any:
    """Stan's ``one_comp_mm_elim_abs``: first-order absorption of dose D into volume V (for
    t > 0), Michaelis-Menten elimination."""
    import tensorbridge as tb

    dose = tb.where(t > 0, tb.exp(-k_a * t) * (D * k_a / V), 0.0)
    elim = (V_m / V) * y / (K_m + y)
    return dose - elim


def one_comp_mm_elim_abs(d: dict[str, Any]) -> Any:
    """one_comp_mm_elim_abs: C0 = 0 at t0, solved to the measurement times at Stan's default
    tolerances (rtol = atol = 1e-6); half-Cauchy(0, 1) priors on k_a, K_m, V_m, sigma;
    C_hat ~ lognormal(log C, sigma). Stan integrates with BDF; here with rk45, deliberately: the
    system is not stiff where the posterior lives, and the second-order Rosenbrock method needs
    ~50x the steps of rk45 at 1e-6."""
    import tensorbridge as tb

    k_a, K_m, V_m, sigma = (tb.cauchy(0.0, 1.0, truncation=(0.0, INF)) for _ in range(4))
    D, V = float(d["D"]), float(d["V"])

    def rhs(t: Any, y: Any, k_a: Any, K_m: Any, V_m: Any) -> Any:
        return one_comp_rhs(t, y, k_a, K_m, V_m, D, V)

    C = tb.ode_solve(rhs, np.zeros(1), np.asarray(d["times"], dtype=float), k_a, K_m, V_m,
                     t0=float(d["t0"]), method="rk45", rtol=1e-6, atol=1e-6,
                     max_steps=2000)
    tb.distribution(tb.as_data(np.asarray(d["C_hat"], dtype=float)),
                    tb.lognormal(tb.log(C[:, 0]), sigma))
    return tb.model(k_a=k_a, K_m=K_m, V_m=V_m, sigma=sigma), None
