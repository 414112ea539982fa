"""greta's optimiser objects for ``opt(model, optimiser=...)``: each function returns an
:class:`Optimiser` naming its method and its tuning parameters by greta's names.

Gradient methods (first-order, on the free state): ``gradient_descent``, ``momentum``
(optionally Nesterov's), ``adagrad``, ``adadelta``, ``rms_prop``, ``adam``, ``adamax``,
``nadam``; quasi-Newton: ``bfgs`` (dense inverse-Hessian updates) and ``l_bfgs_b`` (limited
memory, no bounds needed: the free state is unconstrained); derivative-free: ``nelder_mead``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["OPTIMISERS", "Optimiser", "adadelta", "adagrad", "adam", "adamax", "bfgs",
           "gradient_descent", "l_bfgs_b", "momentum", "nadam", "nelder_mead", "rms_prop"]


@dataclass(frozen=True)
class Optimiser:
    name: str
    parameters: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.parameters.items())
        return f"{self.name}({args})"


def _positive(fn: str, **values: float) -> dict[str, Any]:
    for k, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf:
            raise ValueError(f"{fn}: {k} must be a positive number, got {v!r}")
    return {k: float(v) for k, v in values.items()}


def _fraction(fn: str, name: str, v: float, closed: bool = False) -> float:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and (
        0 <= v <= 1 if closed else 0 <= v < 1)
    if not ok:
        raise ValueError(f"{fn}: {name} must be in [0, 1{']' if closed else ')'}, got {v!r}")
    return float(v)


def gradient_descent(learning_rate: float = 0.01) -> Optimiser:
    """Steepest descent with a fixed ``learning_rate``."""
    return Optimiser("gradient_descent", _positive("gradient_descent",
                                                   learning_rate=learning_rate))


def momentum(learning_rate: float = 0.001, momentum: float = 0.9,
             use_nesterov: bool = True) -> Optimiser:
    """Gradient descent with a velocity decaying by ``momentum`` (Nesterov's look-ahead form
    when ``use_nesterov``)."""
    p = _positive("momentum", learning_rate=learning_rate)
    p["momentum"] = _fraction("momentum", "momentum", momentum)
    p["use_nesterov"] = bool(use_nesterov)
    return Optimiser("momentum", p)


def adagrad(learning_rate: float = 0.8, initial_accumulator_value: float = 0.1) -> Optimiser:
    """Steps scaled by the root of the summed squared gradients."""
    return Optimiser("adagrad", _positive("adagrad", learning_rate=learning_rate,
                                          initial_accumulator_value=initial_accumulator_value))


def adadelta(learning_rate: float = 0.001, rho: float = 1.0, epsilon: float = 1e-8) -> Optimiser:
    """Zeiler's AdaDelta: ratio of running root-mean-square updates and gradients."""
    p = _positive("adadelta", learning_rate=learning_rate, epsilon=epsilon)
    p["rho"] = _fraction("adadelta", "rho", rho, closed=True)
    return Optimiser("adadelta", p)


def rms_prop(learning_rate: float = 0.1, decay: float = 0.9, momentum: float = 0.0,
             epsilon: float = 1e-10) -> Optimiser:
    """Steps scaled by a decaying mean of squared gradients, with optional momentum."""
    p = _positive("rms_prop", learning_rate=learning_rate, epsilon=epsilon)
    p["decay"] = _fraction("rms_prop", "decay", decay)
    p["momentum"] = _fraction("rms_prop", "momentum", momentum)
    return Optimiser("rms_prop", p)


def adam(learning_rate: float = 0.1, beta1: float = 0.9, beta2: float = 0.999,
         epsilon: float = 1e-8) -> Optimiser:
    """Adam (Kingma & Ba 2015): bias-corrected first and second moment estimates."""
    return Optimiser("adam", _adam_like("adam", learning_rate, beta1, beta2, epsilon))


def adamax(learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
           epsilon: float = 1e-8) -> Optimiser:
    """Adam with the infinity norm in place of the second moment."""
    return Optimiser("adamax", _adam_like("adamax", learning_rate, beta1, beta2, epsilon))


def nadam(learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
          epsilon: float = 1e-8) -> Optimiser:
    """Adam with Nesterov momentum (Dozat 2016)."""
    return Optimiser("nadam", _adam_like("nadam", learning_rate, beta1, beta2, epsilon))


def _adam_like(fn: str, learning_rate: float, beta1: float, beta2: float,
               epsilon: float) -> dict[str, Any]:
    p = _positive(fn, learning_rate=learning_rate, epsilon=epsilon)
    p["beta1"] = _fraction(fn, "beta1", beta1)
    p["beta2"] = _fraction(fn, "beta2", beta2)
    return p


def bfgs() -> Optimiser:
    """BFGS: a dense inverse-Hessian estimate updated from every step, Armijo line search."""
    return Optimiser("bfgs")


def l_bfgs_b(maxcor: int = 10, maxls: int = 20) -> Optimiser:
    """Limited-memory BFGS keeping ``maxcor`` correction pairs, at most ``maxls`` line-search
    halvings per iteration."""
    for k, v in (("maxcor", maxcor), ("maxls", maxls)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"l_bfgs_b: {k} must be an integer >= 1, got {v!r}")
    return Optimiser("l_bfgs_b", {"maxcor": maxcor, "maxls": maxls})


def nelder_mead() -> Optimiser:
    """The Nelder-Mead simplex (standard coefficients 1, 2, 1/2, 1/2), no gradients."""
    return Optimiser("nelder_mead")


OPTIMISERS = ("gradient_descent", "momentum", "adagrad", "adadelta", "rms_prop", "adam",
              "adamax", "nadam", "bfgs", "l_bfgs_b", "nelder_mead")
