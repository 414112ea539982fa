"""``opt()``: maximum a posteriori estimates on the unconstrained free state, with L-BFGS
(two-loop recursion, backtracking line search on the Armijo condition) or Adam.

The objective is the model's *unadjusted* log density of the constrained values plus nothing
else — the MAP of the parameters as the user wrote them, as greta's ``opt()`` reports — maximised
over the free state so that bounds are respected automatically.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..host_namespace import to_host, xp

__all__ = ["OptResult", "opt"]


@dataclass
class OptResult:
    par: dict[str, xp.ndarray]  # constrained values by variable name
    value: float  # log density at the optimum
    iterations: int
    converged: bool
    free: xp.ndarray

    def __repr__(self) -> str:
        pars = ", ".join(f"{k}={xp.round(v, 4).tolist()}" for k, v in self.par.items())
        state = "converged" if self.converged else "NOT converged"
        return (f"OptResult({state} after {self.iterations} iterations, log density "
                f"{self.value:.6g}: {pars})")


def opt(model: Any, optimiser: str = "lbfgs", initial_values: Any = None,
        max_iterations: int = 1000, tolerance: float = 1e-8, learning_rate: float = 0.05,
        seed: int | None = 0, adjust: bool = False) -> OptResult:
    """Find the posterior mode of ``model``. ``optimiser``: "lbfgs" or "adam"."""
    if optimiser not in ("lbfgs", "adam"):
        raise ValueError(f"optimiser: expected 'lbfgs' or 'adam', got {optimiser!r}")
    if max_iterations < 1:
        raise ValueError(f"max_iterations: expected >= 1, got {max_iterations}")
    # the start is drawn from the user's seed, also for variables initial_values leaves unset
    x = xp.random.default_rng(seed).uniform(-2.0, 2.0, size=model.n_free)
    if initial_values is not None:
        x = model.check_initial_values(initial_values, fill=x)

    def f(q: xp.ndarray) -> tuple[float, xp.ndarray]:
        lp, g = model.log_density_and_grad(q, adjusted=adjust)
        # minimise the negative log density
        return -float(lp), -to_host(g, xp.float64)

    with xp.errstate(over="ignore", invalid="ignore", divide="ignore"):
        run = _lbfgs if optimiser == "lbfgs" else _adam
        x, fx, it, ok = run(f, x, max_iterations, tolerance, learning_rate)
    names = model.variable_names()
    values = model.constrain(x)
    par = {nm: to_host(v) for nm, v in zip(names, values.values())}
    return OptResult(par, -fx, it, ok, x)


def _lbfgs(f: Any, x: xp.ndarray, max_iter: int, tol: float, _lr: float,
           memory: int = 10) -> tuple[xp.ndarray, float, int, bool]:
    fx, g = f(x)
    if not xp.isfinite(fx):
        raise ValueError("opt: the log density is not finite at the initial values")
    s_hist: list[xp.ndarray] = []
    y_hist: list[xp.ndarray] = []
    for it in range(1, max_iter + 1):
        if xp.max(xp.abs(g)) < tol:
            return x, fx, it - 1, True
        # two-loop recursion for the search direction -H g
        q = g.copy()
        alphas = []
        for s, y in zip(reversed(s_hist), reversed(y_hist)):
            a = (s @ q) / (y @ s)
            alphas.append(a)
            q -= a * y
        if y_hist:
            q *= (s_hist[-1] @ y_hist[-1]) / (y_hist[-1] @ y_hist[-1])
        for (s, y), a in zip(zip(s_hist, y_hist), reversed(alphas)):
            b = (y @ q) / (y @ s)
            q += s * (a - b)
        d = -q
        if g @ d >= 0:  # not a descent direction: restart from steepest descent
            d = -g
            s_hist.clear()
            y_hist.clear()
        step = 1.0 if s_hist else min(1.0, 1.0 / max(xp.max(xp.abs(g)), 1e-12))
        for _ in range(60):  # backtracking on the Armijo condition
            x_new = x + step * d
            f_new, g_new = f(x_new)
            if xp.isfinite(f_new) and f_new <= fx + 1e-4 * step * (g @ d):
                break
            step *= 0.5
        else:
            return x, fx, it, False
        s, y = x_new - x, g_new - g
        if s @ y > 1e-12:
            s_hist.append(s)
            y_hist.append(y)
            if len(s_hist) > memory:
                s_hist.pop(0)
                y_hist.pop(0)
        converged = abs(fx - f_new) <= tol * max(1.0, abs(fx))
        x, fx, g = x_new, f_new, g_new
        if converged and xp.max(xp.abs(g)) < xp.sqrt(tol):
            return x, fx, it, True
    return x, fx, max_iter, False


def _adam(f: Any, x: xp.ndarray, max_iter: int, tol: float,
          lr: float) -> tuple[xp.ndarray, float, int, bool]:
    b1, b2, eps = 0.9, 0.999, 1e-8
    m = xp.zeros_like(x)
    v = xp.zeros_like(x)
    fx, g = f(x)
    for it in range(1, max_iter + 1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        x = x - lr * (m / (1 - b1**it)) / (xp.sqrt(v / (1 - b2**it)) + eps)
        f_new, g = f(x)
        if abs(fx - f_new) <= tol * max(1.0, abs(fx)) and xp.max(xp.abs(g)) < 1e-3:
            return x, f_new, it, True
        fx = f_new
    return x, fx, max_iter, False
