"""Static HMC: a fixed number of leapfrog steps (optionally jittered per iteration) and a
Metropolis correction, for every chain at once."""

from __future__ import annotations

from ..host_namespace import xp
from .hamiltonian import PhasePoint, Target, hamiltonian, leapfrog
from .nuts import TransitionStats

__all__ = ["hmc_transition"]


def hmc_transition(z0: PhasePoint, step: xp.ndarray, inv_metric: xp.ndarray, target: Target,
                   rng: xp.random.Generator, n_leapfrog: int = 10, jitter: bool = True,
                   max_delta_h: float = 1000.0,
                   leapfrog_range: tuple[int, int] | None = None
                   ) -> tuple[PhasePoint, TransitionStats]:
    """``leapfrog_range`` (greta's Lmin, Lmax): each chain's count of steps drawn uniformly
    from ``lo..hi`` per iteration (a chain that has taken its count stands still)."""
    b, n = z0.q.shape
    steps = None
    if leapfrog_range is not None:
        lo, hi = leapfrog_range
        steps = xp.floor(lo + (hi - lo + 1) * rng.uniform(size=b))
        n_leapfrog = hi
    p0 = rng.standard_normal((b, n)) / xp.sqrt(inv_metric)
    z = PhasePoint(z0.q, p0, z0.logp, z0.grad)
    h0 = hamiltonian(z, inv_metric)
    # jitter the step size +-10% per iteration to avoid resonances with periodic orbits
    eps = step * (rng.uniform(0.9, 1.1, size=b) if jitter else 1.0)
    divergent = xp.zeros(b, dtype=bool)
    for k in range(n_leapfrog):
        moved = leapfrog(z, eps, inv_metric, target)
        if steps is not None:
            moving = k < steps
            moved = moved.select(moving, z)
        z = moved
        divergent |= (hamiltonian(z, inv_metric) - h0) > max_delta_h
    h = hamiltonian(z, inv_metric)
    log_accept = xp.minimum(h0 - h, 0.0)
    accept = xp.log(rng.uniform(size=b)) < log_accept
    accept &= ~divergent
    out = z.select(accept, z0)
    taken = xp.full(b, n_leapfrog) if steps is None else steps.astype(xp.int64)
    stats = TransitionStats(xp.exp(log_accept), taken, xp.zeros(b, xp.int64),
                            divergent, h0)
    return out, stats
