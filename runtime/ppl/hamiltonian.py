"""Hamiltonian dynamics for a batch of chains: the potential, a diagonal Euclidean metric and the
leapfrog integrator.

State arrays are NumPy on the host, shaped ``[chains, n]``; one call of the target evaluates the
log density and its gradient for every chain at once (the model's compiled, vectorised function),
so the per-step cost does not grow with a Python loop over chains.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..host_namespace import xp

__all__ = ["NUMERICAL_ERRORS", "PhasePoint", "Target", "guard_target", "kinetic",
           "leapfrog"]

# log density and gradient of a batch of free states: [B, n] -> ([B], [B, n])
Target = Callable[[xp.ndarray], tuple[xp.ndarray, xp.ndarray]]


# what a density raises at a point where it has no value: a factor of a matrix that is not
# positive definite or a singular solve (NumPy's and SciPy's LinAlgError, the python backend's,
# TF.js's ValueError), a floating-point trap. Such a point is a rejected step, as Stan does.
NUMERICAL_ERRORS: tuple[type[BaseException], ...] = (ArithmeticError, ValueError)


def guard_target(target: Target) -> Target:
    """``target`` where a numerical failure is a point of log density -inf with a NaN gradient
    (what the compiled samplers make of a density's failure status), so that the samplers
    count a divergence and go on. A batch that raises is evaluated chain by chain (each as a
    batch of copies of its own row, the shape the target was made for) to find which failed;
    a non-finite log density or gradient is also -inf. ``guarded.last_error`` keeps the last
    exception caught, for an error that must name it (no start has a finite density)."""

    def guarded(q: xp.ndarray) -> tuple[xp.ndarray, xp.ndarray]:
        try:
            logp, grad = target(q)
        except NUMERICAL_ERRORS as err:
            guarded.last_error = err  # type: ignore[attr-defined]
            return _row_by_row(target, q, guarded)
        if _all_finite(logp, grad):  # the common case, in one cheap test
            return logp, grad
        return _mark_failed(logp, grad)

    guarded.last_error = None  # type: ignore[attr-defined]
    return guarded


_reduce = xp.add.reduce  # half the cost of an xp.sum call (both namespaces have it)


def _all_finite(logp: xp.ndarray, grad: xp.ndarray) -> bool:
    return math.isfinite(_reduce(logp, None) + _reduce(grad, None))


def _mark_failed(logp: xp.ndarray, grad: xp.ndarray) -> tuple[xp.ndarray, xp.ndarray]:
    bad = ~(xp.isfinite(logp) & xp.all(xp.isfinite(grad), axis=1))
    if not bad.any():  # finite values whose sum overflowed
        return logp, grad
    # the target's arrays are its own (they must not be modified): new ones
    return xp.where(bad, -xp.inf, logp), xp.where(bad[:, None], xp.nan, grad)


def _row_by_row(target: Target, q: xp.ndarray, guarded: Any) -> tuple[xp.ndarray, xp.ndarray]:
    b, n = q.shape
    failed = xp.full(n, xp.nan)
    finite = xp.all(xp.isfinite(q), axis=1).tolist()
    logps: list[float] = []
    grads: list[xp.ndarray] = []
    for c in range(b):
        lp, g = -math.inf, failed
        if finite[c]:  # else the chain already diverged to a non-finite position
            try:
                lps, gs = target(xp.stack([q[c]] * b))
                lp, g = float(lps[0]), gs[0]
            except NUMERICAL_ERRORS as err:
                guarded.last_error = err
        logps.append(lp)
        grads.append(g)
    return _mark_failed(xp.asarray(logps), xp.stack(grads))


@dataclass
class PhasePoint:
    """Positions, momenta, log density and its gradient for every chain."""

    q: xp.ndarray  # [B, n]
    p: xp.ndarray  # [B, n]
    logp: xp.ndarray  # [B]
    grad: xp.ndarray  # [B, n]

    def copy(self) -> PhasePoint:
        return PhasePoint(self.q.copy(), self.p.copy(), self.logp.copy(), self.grad.copy())

    def select(self, mask: xp.ndarray, other: PhasePoint) -> PhasePoint:
        """Per chain: this point where ``mask``, else ``other``."""
        if mask.all():  # the common cases: every chain takes the same side
            return self
        if not mask.any():
            return other
        m = mask[:, None]
        return PhasePoint(xp.where(m, self.q, other.q), xp.where(m, self.p, other.p),
                          xp.where(mask, self.logp, other.logp),
                          xp.where(m, self.grad, other.grad))


def kinetic(p: xp.ndarray, inv_metric: xp.ndarray) -> xp.ndarray:
    """0.5 p^T M^{-1} p for a diagonal inverse metric, per chain."""
    return 0.5 * xp.sum(p * p * inv_metric, axis=1)


def hamiltonian(z: PhasePoint, inv_metric: xp.ndarray) -> xp.ndarray:
    h = -z.logp + kinetic(z.p, inv_metric)
    return xp.where(xp.isnan(h), xp.inf, h)


def leapfrog(z: PhasePoint, step: xp.ndarray, inv_metric: xp.ndarray,
             target: Target) -> PhasePoint:
    """One leapfrog step of signed size ``step`` [B] for every chain."""
    e = step[:, None]
    p_half = z.p + 0.5 * e * z.grad
    q = z.q + e * inv_metric * p_half
    logp, grad = target(q)
    p = p_half + 0.5 * e * grad
    return PhasePoint(q, p, logp, grad)
