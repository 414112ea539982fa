"""Static HMC: a fixed number of leapfrog steps (optionally jittered per iteration) and a
Metropolis correction, for every chain at once."""

from __future__ import annotations

from ..host_namespace import np
from .hamiltonian import PhasePoint, Target, hamiltonian, leapfrog
from .nuts import TransitionStats

__all__ = ["hmc_transition"]


def hmc_transition(z0: PhasePoint, step: np.ndarray, inv_metric: np.ndarray, target: Target,
                   rng: np.random.Generator, n_leapfrog: int = 10, jitter: bool = True,
                   max_delta_h: float = 1000.0) -> tuple[PhasePoint, TransitionStats]:
    b, n = z0.q.shape
    p0 = rng.standard_normal((b, n)) / np.sqrt(inv_metric)
    z = PhasePoint(z0.q, p0, z0.logp, z0.grad)
    h0 = hamiltonian(z, inv_metric)
    # jitter the step size +-10% per iteration to avoid resonances with periodic orbits
    eps = step * (rng.uniform(0.9, 1.1, size=b) if jitter else 1.0)
    divergent = np.zeros(b, dtype=bool)
    for _ in range(n_leapfrog):
        z = leapfrog(z, eps, inv_metric, target)
        divergent |= (hamiltonian(z, inv_metric) - h0) > max_delta_h
    h = hamiltonian(z, inv_metric)
    log_accept = np.minimum(h0 - h, 0.0)
    accept = np.log(rng.uniform(size=b)) < log_accept
    accept &= ~divergent
    out = z.select(accept, z0)
    stats = TransitionStats(np.exp(log_accept), np.full(b, n_leapfrog), np.zeros(b, np.int64),
                            divergent, h0)
    return out, stats
