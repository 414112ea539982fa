"""The No-U-Turn sampler, as Stan implements it (Betancourt 2017, "A Conceptual Introduction to
Hamiltonian Monte Carlo", appendix A): multinomial sampling of the trajectory, biased progressive
sampling between the old tree and each new subtree, and the generalised no-U-turn criterion
checked across the whole tree and across neighbouring subtrees.

All chains advance in lockstep along a leading batch dimension: every doubling builds a subtree
of the same depth for each chain still going (in its own random direction), and per-chain masks
freeze chains that have stopped. One gradient evaluation serves the whole batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hamiltonian import PhasePoint, Target, hamiltonian, leapfrog

__all__ = ["TransitionStats", "nuts_transition"]


@dataclass
class TransitionStats:
    accept_stat: np.ndarray  # [B] mean Metropolis acceptance over the trajectory
    n_leapfrog: np.ndarray  # [B]
    tree_depth: np.ndarray  # [B]
    divergent: np.ndarray  # [B] bool
    energy: np.ndarray  # [B] Hamiltonian at the start


@dataclass
class _Subtree:
    z_end: PhasePoint  # the last point integrated (far end)
    z_propose: PhasePoint  # the multinomial sample within the subtree
    ps_beg: np.ndarray  # velocities (M^-1 p) at the near and far ends
    ps_end: np.ndarray
    rho: np.ndarray  # sum of momenta
    p_beg: np.ndarray  # momenta at the near and far ends
    p_end: np.ndarray
    log_weight: np.ndarray  # log sum of exp(H0 - H) over the subtree's points
    valid: np.ndarray  # no divergence and no internal U-turn


def _criterion(ps_minus: np.ndarray, ps_plus: np.ndarray, rho: np.ndarray) -> np.ndarray:
    return (np.sum(ps_plus * rho, axis=1) > 0) & (np.sum(ps_minus * rho, axis=1) > 0)


class _Builder:
    def __init__(self, target: Target, inv_metric: np.ndarray, step: np.ndarray, h0: np.ndarray,
                 rng: np.random.Generator, max_delta_h: float) -> None:
        self.target = target
        self.inv_metric = inv_metric
        self.step = step
        self.h0 = h0
        self.rng = rng
        self.max_delta_h = max_delta_h
        b = h0.shape[0]
        self.n_leapfrog = np.zeros(b, dtype=np.int64)
        self.sum_metro = np.zeros(b)
        self.divergent = np.zeros(b, dtype=bool)

    def build(self, depth: int, z: PhasePoint, sign: np.ndarray, active: np.ndarray) -> _Subtree:
        if depth == 0:
            return self._leaf(z, sign, active)
        init = self.build(depth - 1, z, sign, active)
        active_final = active & init.valid
        final = self.build(depth - 1, init.z_end, sign, active_final)
        log_weight = np.logaddexp(init.log_weight, final.log_weight)
        with np.errstate(invalid="ignore"):
            take_final = np.log(self.rng.uniform(size=sign.shape)) < (
                final.log_weight - log_weight)
        z_propose = final.z_propose.select(take_final, init.z_propose)
        rho = init.rho + final.rho
        persist = _criterion(init.ps_beg, final.ps_end, rho)
        persist &= _criterion(init.ps_beg, final.ps_beg, init.rho + final.p_beg)
        persist &= _criterion(init.ps_end, final.ps_end, final.rho + init.p_end)
        return _Subtree(final.z_end, z_propose, init.ps_beg, final.ps_end, rho, init.p_beg,
                        final.p_end, log_weight, init.valid & final.valid & persist)

    def _leaf(self, z: PhasePoint, sign: np.ndarray, active: np.ndarray) -> _Subtree:
        z_new = leapfrog(z, sign * self.step, self.inv_metric, self.target)
        h = hamiltonian(z_new, self.inv_metric)
        divergent = (h - self.h0) > self.max_delta_h
        log_w = self.h0 - h  # -inf where h is infinite
        self.n_leapfrog += active
        with np.errstate(over="ignore"):
            metro = np.where(log_w > 0, 1.0, np.exp(np.minimum(log_w, 0.0)))
        self.sum_metro += np.where(active, metro, 0.0)
        self.divergent |= active & divergent
        ps = self.inv_metric * z_new.p
        # arrays are never modified in place, so sharing them between fields is safe
        return _Subtree(z_new, z_new, ps, ps, z_new.p, z_new.p, z_new.p, log_w,
                        ~divergent)


def nuts_transition(z0: PhasePoint, step: np.ndarray, inv_metric: np.ndarray, target: Target,
                    rng: np.random.Generator, max_depth: int = 10,
                    max_delta_h: float = 1000.0) -> tuple[PhasePoint, TransitionStats]:
    """One NUTS transition for every chain; ``z0.p`` is ignored (momenta are resampled)."""
    b, n = z0.q.shape
    p0 = rng.standard_normal((b, n)) / np.sqrt(inv_metric)
    z = PhasePoint(z0.q, p0, z0.logp, z0.grad)
    h0 = hamiltonian(z, inv_metric)
    builder = _Builder(target, inv_metric, step, h0, rng, max_delta_h)

    z_fwd = z_bck = z_sample = z
    ps0 = inv_metric * p0
    p_minus = p_plus = p0
    ps_minus = ps_plus = ps0
    rho = p0
    log_weight = np.zeros(b)
    alive = np.ones(b, dtype=bool)
    depth = np.zeros(b, dtype=np.int64)

    for d in range(max_depth):
        if not alive.any():
            break
        forward = rng.uniform(size=b) > 0.5
        sign = np.where(forward, 1.0, -1.0)
        start = z_fwd.select(forward, z_bck)
        sub = builder.build(d, start, sign, alive)
        ok = alive & sub.valid

        # biased progressive sampling between the old tree and the new subtree
        with np.errstate(invalid="ignore", over="ignore"):
            take = np.log(rng.uniform(size=b)) < (sub.log_weight - log_weight)
        z_sample = sub.z_propose.select(ok & take, z_sample)
        new_log_weight = np.logaddexp(log_weight, sub.log_weight)

        # no-U-turn across the merged tree and between old tree and subtree
        f = forward[:, None]
        near_p = np.where(f, p_plus, p_minus)
        near_ps = np.where(f, ps_plus, ps_minus)
        far_ps = np.where(f, ps_minus, ps_plus)
        new_rho = rho + sub.rho
        persist = _criterion(far_ps, sub.ps_end, new_rho)
        persist &= _criterion(far_ps, sub.ps_beg, rho + sub.p_beg)
        persist &= _criterion(near_ps, sub.ps_end, sub.rho + near_p)

        upd = ok[:, None]
        rho = np.where(upd, new_rho, rho)
        log_weight = np.where(ok, new_log_weight, log_weight)
        p_plus = np.where(upd & f, sub.p_end, p_plus)
        ps_plus = np.where(upd & f, sub.ps_end, ps_plus)
        p_minus = np.where(upd & ~f, sub.p_end, p_minus)
        ps_minus = np.where(upd & ~f, sub.ps_end, ps_minus)
        z_fwd = sub.z_end.select(ok & forward, z_fwd)
        z_bck = sub.z_end.select(ok & ~forward, z_bck)
        depth += ok
        alive = ok & persist

    n_lf = np.maximum(builder.n_leapfrog, 1)
    stats = TransitionStats(builder.sum_metro / n_lf, builder.n_leapfrog, depth,
                            builder.divergent, h0)
    return z_sample, stats
