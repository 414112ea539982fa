"""Hamiltonian dynamics for a batch of chains: the potential, a diagonal Euclidean metric and the
leapfrog integrator.

State arrays are NumPy on the host, shaped ``[chains, n]``; one call of the target evaluates the
log density and its gradient for every chain at once (the model's compiled, vectorised function),
so the per-step cost does not grow with a Python loop over chains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..host_namespace import xp

__all__ = ["PhasePoint", "Target", "kinetic", "leapfrog"]

# log density and gradient of a batch of free states: [B, n] -> ([B], [B, n])
Target = Callable[[xp.ndarray], tuple[xp.ndarray, xp.ndarray]]


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
