"""``opt()``: maximum a posteriori estimates on the unconstrained free state, with L-BFGS
(two-loop recursion, backtracking line search on the Armijo condition) or Adam.

The objective is the model's *unadjusted* log density of the constrained values plus nothing
else — the MAP of the parameters as the user wrote them, as greta's ``opt()`` reports — maximised
over the free state so that bounds are respected automatically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..host_namespace import to_host, xp
from .optimisers import OPTIMISERS, Optimiser

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


def opt(model: Any, optimiser: str | Optimiser = "lbfgs", initial_values: Any = None,
        max_iterations: int = 1000, tolerance: float = 1e-8, learning_rate: float = 0.05,
        seed: int | None = 0, adjust: bool = False) -> OptResult:
    """Find the posterior mode of ``model``. ``optimiser``: "lbfgs", "adam" (with
    ``learning_rate``) or one of greta's optimiser objects (``adam(learning_rate=0.1)``,
    ``bfgs()``, ``nelder_mead()``... from :mod:`.optimisers`, whose own parameters apply)."""
    if isinstance(optimiser, Optimiser):
        method = optimiser
    elif optimiser in ("lbfgs", "adam"):
        method = Optimiser("l_bfgs_b" if optimiser == "lbfgs" else "adam",
                           {} if optimiser == "lbfgs" else {"learning_rate": learning_rate})
    else:
        raise ValueError(f"optimiser: expected 'lbfgs', 'adam' or an optimiser object "
                         f"({', '.join(OPTIMISERS)}), got {optimiser!r}")
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
        x, fx, it, ok = _run(method, f, x, max_iterations, tolerance)
    names = model.variable_names()
    values = model.constrain(x)
    par = {nm: to_host(v) for nm, v in zip(names, values.values())}
    return OptResult(par, -fx, it, ok, x)


def _run(method: Optimiser, f: Any, x: xp.ndarray, max_iter: int,
         tol: float) -> tuple[xp.ndarray, float, int, bool]:
    p = dict(method.parameters)
    if method.name == "l_bfgs_b":
        return _lbfgs(f, x, max_iter, tol, p.get("maxcor", 10), p.get("maxls", 60))
    if method.name == "bfgs":
        return _bfgs(f, x, max_iter, tol)
    if method.name == "nelder_mead":
        return _nelder_mead(f, x, max_iter, tol)
    if method.name == "adam" and set(p) == {"learning_rate"}:
        return _adam(f, x, max_iter, tol, p["learning_rate"])
    return _first_order(f, x, max_iter, tol, _STEPPERS[method.name](**p))


def _backtrack(f: Any, x: xp.ndarray, fx: float, g: xp.ndarray, d: xp.ndarray, step: float,
               max_ls: int) -> tuple[xp.ndarray, float, xp.ndarray] | None:
    """Backtracking line search along the descent direction ``d``: halves ``step`` until the
    Armijo condition holds at a finite value; ``(x_new, f_new, g_new)``, or None after
    ``max_ls`` halvings (the caller stops: no step decreases ``f`` enough)."""
    slope = g @ d
    for _ in range(max_ls):
        x_new = x + step * d
        f_new, g_new = f(x_new)
        if xp.isfinite(f_new) and f_new <= fx + 1e-4 * step * slope:
            return x_new, f_new, g_new
        step *= 0.5
    return None


def _lbfgs(f: Any, x: xp.ndarray, max_iter: int, tol: float, memory: int = 10,
           max_ls: int = 60) -> tuple[xp.ndarray, float, int, bool]:
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
        found = _backtrack(f, x, fx, g, d, step, max_ls)
        if found is None:
            return x, fx, it, False
        x_new, f_new, g_new = found
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


def _bfgs(f: Any, x: xp.ndarray, max_iter: int,
          tol: float) -> tuple[xp.ndarray, float, int, bool]:
    """BFGS with a dense inverse Hessian ``h`` (scaled after the first step, as Nocedal &
    Wright 6.20) and backtracking on the Armijo condition."""
    fx, g = f(x)
    if not xp.isfinite(fx):
        raise ValueError("opt: the log density is not finite at the initial values")
    n = x.shape[0]
    eye = _eye(n)
    h = eye.copy()
    first = True
    for it in range(1, max_iter + 1):
        if xp.max(xp.abs(g)) < tol:
            return x, fx, it - 1, True
        d = -(h @ g)
        if g @ d >= 0:
            h, d = eye.copy(), -g
        step = 1.0 if not first else min(1.0, 1.0 / max(xp.max(xp.abs(g)), 1e-12))
        found = _backtrack(f, x, fx, g, d, step, 60)
        if found is None:
            return x, fx, it, False
        x_new, f_new, g_new = found
        s, y = x_new - x, g_new - g
        sy = s @ y
        if sy > 1e-12:
            if first:
                h = eye * (sy / (y @ y))
                first = False
            rho = 1.0 / sy
            a = eye - rho * (s[:, None] * y[None, :])
            h = a @ h @ a.transpose() + rho * (s[:, None] * s[None, :])
        converged = abs(fx - f_new) <= tol * max(1.0, abs(fx))
        x, fx, g = x_new, f_new, g_new
        if converged and xp.max(xp.abs(g)) < xp.sqrt(tol):
            return x, fx, it, True
    return x, fx, max_iter, False


def _eye(n: int) -> xp.ndarray:
    """The identity (the pure-Python arrays have no ``eye``)."""
    return xp.asarray([[1.0 if i == k else 0.0 for k in range(n)] for i in range(n)])


def _nelder_mead(f: Any, x: xp.ndarray, max_iter: int,
                 tol: float) -> tuple[xp.ndarray, float, int, bool]:
    """The Nelder-Mead simplex with reflection 1, expansion 2, contraction and shrinkage 1/2;
    converged when the values and the vertices agree to ``sqrt(tol)``."""
    def value(v: xp.ndarray) -> float:
        fv = f(v)[0]
        return fv if fv == fv else float("inf")  # NaN: worst

    n = x.shape[0]
    eye = _eye(n)
    pts = [x.copy()] + [x + 0.5 * eye[i] for i in range(n)]  # half a unit on the free scale
    vals = [value(v) for v in pts]
    if not math.isfinite(vals[0]):
        raise ValueError("opt: the log density is not finite at the initial values")
    ftol = xtol = math.sqrt(tol)
    for it in range(1, max_iter + 1):
        order = sorted(range(n + 1), key=lambda k: vals[k])
        pts, vals = [pts[k] for k in order], [vals[k] for k in order]
        spread = max(float(xp.max(xp.abs(p - pts[0]))) for p in pts[1:]) if n else 0.0
        if vals[-1] - vals[0] <= ftol * max(1.0, abs(vals[0])) and spread <= xtol:
            return pts[0], vals[0], it - 1, True
        centre = sum(pts[:-1]) / n
        xr = centre + (centre - pts[-1])
        fr = value(xr)
        if fr < vals[0]:
            xe = centre + 2.0 * (centre - pts[-1])
            fe = value(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            outside = fr < vals[-1]
            xc = centre + 0.5 * ((xr if outside else pts[-1]) - centre)
            fc = value(xc)
            if fc < (fr if outside else vals[-1]):
                pts[-1], vals[-1] = xc, fc
            else:  # shrink towards the best vertex
                pts = [pts[0]] + [pts[0] + 0.5 * (p - pts[0]) for p in pts[1:]]
                vals = [vals[0]] + [value(p) for p in pts[1:]]
    best = min(range(n + 1), key=lambda k: vals[k])
    return pts[best], vals[best], max_iter, False


def _first_order(f: Any, x: xp.ndarray, max_iter: int, tol: float,
                 stepper: Any) -> tuple[xp.ndarray, float, int, bool]:
    """A gradient method: ``stepper(x, g, it)`` gives the next point."""
    fx, g = f(x)
    if not xp.isfinite(fx):
        raise ValueError("opt: the log density is not finite at the initial values")
    for it in range(1, max_iter + 1):
        x = stepper(x, g, it)
        f_new, g = f(x)
        if abs(fx - f_new) <= tol * max(1.0, abs(fx)) and xp.max(xp.abs(g)) < 1e-3:
            return x, f_new, it, True
        fx = f_new
    return x, fx, max_iter, False


def _gradient_descent(learning_rate: float) -> Any:
    return lambda x, g, it: x - learning_rate * g


def _momentum(learning_rate: float, momentum: float, use_nesterov: bool) -> Any:
    state = {"v": None}

    def step(x: xp.ndarray, g: xp.ndarray, it: int) -> xp.ndarray:
        v = g if state["v"] is None else momentum * state["v"] + g
        state["v"] = v
        # Nesterov: the step looks ahead along the new velocity
        return x - learning_rate * (g + momentum * v if use_nesterov else v)
    return step


def _adagrad(learning_rate: float, initial_accumulator_value: float) -> Any:
    state = {"a": None}

    def step(x: xp.ndarray, g: xp.ndarray, it: int) -> xp.ndarray:
        a = (xp.full(x.shape, initial_accumulator_value) if state["a"] is None
             else state["a"]) + g * g
        state["a"] = a
        return x - learning_rate * g / xp.sqrt(a)
    return step


def _adadelta(learning_rate: float, rho: float, epsilon: float) -> Any:
    state: dict[str, Any] = {"eg": None, "ed": None}

    def step(x: xp.ndarray, g: xp.ndarray, it: int) -> xp.ndarray:
        eg = xp.zeros_like(x) if state["eg"] is None else state["eg"]
        ed = xp.zeros_like(x) if state["ed"] is None else state["ed"]
        eg = rho * eg + (1 - rho) * g * g
        d = xp.sqrt(ed + epsilon) / xp.sqrt(eg + epsilon) * g
        state["eg"], state["ed"] = eg, rho * ed + (1 - rho) * d * d
        return x - learning_rate * d
    return step


def _rms_prop(learning_rate: float, decay: float, momentum: float, epsilon: float) -> Any:
    state: dict[str, Any] = {"ms": None, "mom": None}

    def step(x: xp.ndarray, g: xp.ndarray, it: int) -> xp.ndarray:
        ms = xp.zeros_like(x) if state["ms"] is None else state["ms"]
        mom = xp.zeros_like(x) if state["mom"] is None else state["mom"]
        ms = decay * ms + (1 - decay) * g * g
        mom = momentum * mom + learning_rate * g / xp.sqrt(ms + epsilon)
        state["ms"], state["mom"] = ms, mom
        return x - mom
    return step


def _adam_family(kind: str) -> Any:
    def make(learning_rate: float, beta1: float, beta2: float, epsilon: float) -> Any:
        state: dict[str, Any] = {"m": None, "v": None}

        def step(x: xp.ndarray, g: xp.ndarray, it: int) -> xp.ndarray:
            m = xp.zeros_like(x) if state["m"] is None else state["m"]
            v = xp.zeros_like(x) if state["v"] is None else state["v"]
            m = beta1 * m + (1 - beta1) * g
            if kind == "adamax":
                v = xp.maximum(beta2 * v, xp.abs(g))
                state["m"], state["v"] = m, v
                return x - (learning_rate / (1 - beta1**it)) * m / (v + epsilon)
            v = beta2 * v + (1 - beta2) * g * g
            state["m"], state["v"] = m, v
            m_hat = m / (1 - beta1**it)
            if kind == "nadam":  # Nesterov: this step's gradient enters with the next weight
                m_hat = beta1 * m / (1 - beta1**(it + 1)) + (1 - beta1) * g / (1 - beta1**it)
            return x - learning_rate * m_hat / (xp.sqrt(v / (1 - beta2**it)) + epsilon)
        return step
    return make


_STEPPERS: dict[str, Any] = {
    "gradient_descent": _gradient_descent, "momentum": _momentum, "adagrad": _adagrad,
    "adadelta": _adadelta, "rms_prop": _rms_prop, "adam": _adam_family("adam"),
    "adamax": _adam_family("adamax"), "nadam": _adam_family("nadam"),
}
