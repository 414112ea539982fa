"""Bijectors: smooth invertible maps from the unconstrained "free state" R^n to a variable's
support, with the log-Jacobian that keeps densities correct after the change of variables.

``biject_to(constraint)`` picks the bijector for a support, so samplers and optimisers always
work on R^n:

=====================  ==========================================  =====================
support                forward(free)                               log |det J|
=====================  ==========================================  =====================
real                   free                                        0
greater_than(lo)       lo + exp(free)                              free
less_than(hi)          hi - exp(free)                              free
interval(lo, hi)       lo + (hi - lo) * sigmoid(free)              log(hi-lo) + log s(1-s)
=====================  ==========================================  =====================

(s = sigmoid(free).)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import ops

__all__ = [
    "Bijector",
    "Constraint",
    "biject_to",
    "greater_than",
    "interval",
    "less_than",
    "real",
]


@dataclass(frozen=True)
class Constraint:
    """A support: ``kind`` in {"real", "greater_than", "less_than", "interval"}."""

    kind: str
    lower: float = -math.inf
    upper: float = math.inf

    def check(self, value: Any) -> Any:
        """Elementwise: is ``value`` inside the support? (NaN never is.)"""
        ok = ops.logical_not(ops.isnan(value))
        if math.isfinite(self.lower):
            ok = ok & (value > self.lower)
        if math.isfinite(self.upper):
            ok = ok & (value < self.upper)
        return ok

    def __str__(self) -> str:
        if self.kind == "real":
            return "real"
        if self.kind == "greater_than":
            return f"> {self.lower:g}"
        if self.kind == "less_than":
            return f"< {self.upper:g}"
        return f"({self.lower:g}, {self.upper:g})"


real = Constraint("real")


def greater_than(lower: float) -> Constraint:
    return Constraint("greater_than", lower=float(lower))


def less_than(upper: float) -> Constraint:
    return Constraint("less_than", upper=float(upper))


def interval(lower: float, upper: float) -> Constraint:
    if not lower < upper:
        raise ValueError(f"interval: lower ({lower}) must be below upper ({upper})")
    return Constraint("interval", lower=float(lower), upper=float(upper))


def from_bounds(lower: float = -math.inf, upper: float = math.inf) -> Constraint:
    """The constraint for ``variable(lower, upper)``."""
    lower, upper = float(lower), float(upper)
    if math.isnan(lower) or math.isnan(upper):
        raise ValueError("lower/upper: bounds must not be NaN")
    if lower == -math.inf and upper == math.inf:
        return real
    if upper == math.inf:
        return greater_than(lower)
    if lower == -math.inf:
        return less_than(upper)
    return interval(lower, upper)


class Bijector:
    """``forward`` maps free values to the support; ``inverse`` maps back;
    ``log_det_jacobian(free)`` is elementwise log |d forward / d free|."""

    def __init__(self, constraint: Constraint) -> None:
        self.constraint = constraint

    def __repr__(self) -> str:
        return f"Bijector(to {self.constraint})"

    def forward(self, free: Any) -> Any:
        c = self.constraint
        if c.kind == "real":
            return free
        if c.kind == "greater_than":
            return ops.exp(free) + c.lower
        if c.kind == "less_than":
            return c.upper - ops.exp(free)
        return c.lower + (c.upper - c.lower) * ops.sigmoid(free)

    def inverse(self, value: Any) -> Any:
        c = self.constraint
        if c.kind == "real":
            return value
        if c.kind == "greater_than":
            return ops.log(value - c.lower)
        if c.kind == "less_than":
            return ops.log(c.upper - value)
        p = (value - c.lower) / (c.upper - c.lower)
        return ops.log(p) - ops.log1p(-p)

    def log_det_jacobian(self, free: Any) -> Any:
        c = self.constraint
        if c.kind == "real":
            return free * 0.0
        if c.kind in ("greater_than", "less_than"):
            return free
        # log sigmoid(x) + log(1 - sigmoid(x)) = -softplus(-x) - softplus(x)
        return math.log(c.upper - c.lower) - ops.softplus(-free) - ops.softplus(free)


def biject_to(constraint: Constraint) -> Bijector:
    """The bijector from R^n onto ``constraint``'s support."""
    return Bijector(constraint)
