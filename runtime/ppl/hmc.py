"""Static HMC: a fixed number of leapfrog steps (optionally jittered per iteration) and a
Metropolis correction, for every chain at once."""

from __future__ import annotations

from ..host_namespace import xp
from .hamiltonian import PhasePoint, Target, hamiltonian, leapfrog
from .nuts import TransitionStats

__all__ = ["hmc_transition"]


def hmc_transition(z0: PhasePoint, step: xp.ndarray, inv_metric: xp.ndarray, target: Target,
                   rng: xp.random.Generator, n_leapfrog: int = 10, jitter: bool = True,
                   max_delta_h: float = 1000.0) -> tuple[PhasePoint, TransitionStats]:
    b, n = z0.q.shape
    p0 = rng.standard_normal((b, n)) / xp.sqrt(inv_metric)
    z = PhasePoint(z0.q, p0, z0.logp, z0.grad)
    h0 = hamiltonian(z, inv_metric)
    # jitter the step size +-10% per iteration to avoid resonances with periodic orbits
    eps = step * (rng.uniform(0.9, 1.1, size=b) if jitter else 1.0)
    divergent = xp.zeros(b, dtype=bool)
    for _ in range(n_leapfrog):
        z = leapfrog(z, eps, inv_metric, target)
        divergent |= (hamiltonian(z, inv_metric) - h0) > max_delta_h
    h = hamiltonian(z, inv_metric)
    log_accept = xp.minimum(h0 - h, 0.0)
    accept = xp.log(rng.uniform(size=b)) < log_accept
    accept &= ~divergent
    out = z.select(accept, z0)
    stats = TransitionStats(xp.exp(log_accept), xp.full(b, n_leapfrog), xp.zeros(b, xp.int64),
                            divergent, h0)
    return out, stats
