"""The No-U-Turn sampler, as Stan implements it (Betancourt 2017, "A Conceptual Introduction to
Hamiltonian Monte Carlo", appendix A): multinomial sampling of the trajectory, biased progressive
sampling between the old tree and each new subtree, and the generalised no-U-turn criterion
checked across the whole tree and across neighbouring subtrees.

All chains advance in lockstep along a leading batch dimension: every doubling builds a subtree
of the same depth for each chain still going (in its own random direction), and per-chain masks
freeze chains that have stopped. One gradient evaluation serves the whole batch.

The bookkeeping is arranged for small per-step cost, since for small models it costs as much as
the gradient: each doubling draws its uniforms in one block (row 0 the direction, row 1 the
progressive sample, row 2 + k the k-th subtree merge in post-order, so a chain's decisions use
its own column whatever the other chains do); multinomial proposals are leaf numbers, not copies
of phase points, gathered once at the end; per-leaf statistics are reduced once per transition;
the two ends of the tree are packed ``[q | p | grad | M^-1 p]`` rows, selected per chain with
one ``where``; a subtree whose chains have all stopped is not integrated.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..host_namespace import xp
from .hamiltonian import PhasePoint, Target, hamiltonian

__all__ = ["TransitionStats", "nuts_transition"]

# ufunc methods: half the cost of an xp.sum call (both namespaces have them)
_rowsum = xp.add.reduce
_all_rows = xp.logical_and.reduce


def _nan_to_ninf(x: xp.ndarray) -> xp.ndarray:
    return xp.fmax(x, -xp.inf)  # one call: fmax drops the NaN


# when a full tree's leaves could hold more numbers than this (state size x 2^max_depth), leaves
# no proposal refers to are freed as the tree grows (O(depth) live leaves instead of O(2^depth));
# below it every leaf is kept, which is cheaper than that bookkeeping
_PRUNE_SIZE = 1 << 22


@dataclass
class TransitionStats:
    accept_stat: xp.ndarray  # [B] mean Metropolis acceptance over the trajectory
    n_leapfrog: xp.ndarray  # [B]
    tree_depth: xp.ndarray  # [B]
    divergent: xp.ndarray  # [B] bool
    energy: xp.ndarray  # [B] Hamiltonian at the start


class _Tree:
    """A subtree: its multinomial proposal (a leaf number per chain, or one int for all), the
    log of its summed weights exp(H0 - H), validity (no divergence, no internal U-turn), the sum
    of its momenta and the momenta and velocities M^-1 p at its near (beg) and far (end) ends."""

    __slots__ = ("idx", "log_w", "p_beg", "p_end", "ps_beg", "ps_end", "rho", "valid")

    def __init__(self, idx, log_w, valid, rho, p_beg, ps_beg, p_end, ps_end) -> None:
        self.idx, self.log_w, self.valid, self.rho = idx, log_w, valid, rho
        self.p_beg, self.ps_beg, self.p_end, self.ps_end = p_beg, ps_beg, p_end, ps_end


def _no_uturn(ps: tuple, rho: tuple) -> xp.ndarray:
    """Per chain: ``ps[k] . rho[k] > 0`` for every k — Stan's generalised criterion is
    ``ps_minus . rho > 0 and ps_plus . rho > 0`` per checked span; one product, one sum."""
    return _all_rows(_rowsum(xp.array(ps) * xp.array(rho), 2) > 0, 0)


class _Builder:
    """Integrates and merges subtrees from the current far end of the tree (``q``, ``p``,
    ``g``), recording every leaf and the per-leaf statistics."""

    def __init__(self, target: Target, inv_metric: xp.ndarray, h0: xp.ndarray,
                 max_delta_h: float, z0: PhasePoint, max_depth: int) -> None:
        self.target = target
        self.inv_metric = inv_metric
        self.h0 = h0
        self.min_log_w = -max_delta_h  # divergent: H - H0 > max_delta_h
        self.leaves: list[tuple | None] = [(z0.q, z0.p, z0.logp, z0.grad)]  # (q, p, logp, g)
        self.log_ws: list[xp.ndarray] = []  # per leaf: H0 - H
        self.actives: list[xp.ndarray] = []  # per leaf: the chains it counts for
        self.prune = (z0.q.size << max_depth) > _PRUNE_SIZE
        self.q = self.p = self.g = z0.q
        self.half_e = self.e_inv = z0.q
        self.log_u = z0.logp
        self.merge = 0

    def start(self, near: xp.ndarray, half_e: xp.ndarray, e_inv: xp.ndarray,
              log_u: xp.ndarray) -> None:
        """Begin a subtree from the packed end ``near`` with signed half steps ``half_e``
        [B, 1], position increments per unit momentum ``e_inv`` [B, n] and the doubling's
        log-uniforms."""
        n = self.inv_metric.shape[1]
        self.q, self.p, self.g = near[:, :n], near[:, n:2 * n], near[:, 2 * n:3 * n]
        self.half_e, self.e_inv = half_e, e_inv
        self.log_u = log_u
        self.merge = 1  # row 0 of log_u is the top-level progressive sample

    def build(self, depth: int, active: xp.ndarray) -> _Tree:
        if depth == 0:
            return self._leaf(active)
        lo = len(self.leaves)
        init = self.build(depth - 1, active)
        active_final = active & init.valid
        if not active_final.any():
            # every chain still counting stopped in the first half: like Stan, do not integrate
            # the second (nor merge: the enclosing subtrees stop too, so no later row is read)
            return _Tree(init.idx, init.log_w, active_final, init.rho, init.p_beg, init.ps_beg,
                         init.p_end, init.ps_end)
        final = self.build(depth - 1, active_final)
        log_w = xp.logaddexp(init.log_w, final.log_w)
        take = self.log_u[self.merge] < final.log_w - log_w
        self.merge += 1
        idx = xp.where(take, final.idx, init.idx)
        rho = init.rho + final.rho
        if depth == 1:
            # two leaves: the three spans checked below are the same span
            persist = _all_rows(_rowsum(xp.array((init.ps_beg, final.ps_end)) * rho, 2) > 0, 0)
        else:
            r_beg = init.rho + final.p_beg
            r_end = final.rho + init.p_end
            persist = _no_uturn((init.ps_beg, final.ps_end, init.ps_beg, final.ps_beg,
                                 init.ps_end, final.ps_end),
                                (rho, rho, r_beg, r_beg, r_end, r_end))
        if self.prune:
            self._free(lo, idx)
        return _Tree(idx, log_w, init.valid & final.valid & persist, rho, init.p_beg,
                     init.ps_beg, final.p_end, final.ps_end)

    def _leaf(self, active: xp.ndarray) -> _Tree:
        # one leapfrog step for every chain
        half_e = self.half_e
        p_half = self.p + half_e * self.g
        q = self.q + self.e_inv * p_half
        logp, g = self.target(q)
        p = p_half + half_e * g
        ps = self.inv_metric * p
        # log weight H0 - H; a NaN energy is an infinitely bad point (so, divergent)
        log_w = _nan_to_ninf(self.h0 - (0.5 * _rowsum(p * ps, 1) - logp))
        self.q, self.p, self.g = q, p, g
        idx = len(self.leaves)
        self.leaves.append((q, p, logp, g))
        self.log_ws.append(log_w)
        self.actives.append(active)
        return _Tree(idx, log_w, log_w >= self.min_log_w, p, p, ps, p, ps)

    def _free(self, lo: int, idx: xp.ndarray) -> None:
        """Drop the leaves from ``lo`` on that the proposal ``idx`` does not use."""
        keep = set(idx.tolist())
        for j in range(lo, len(self.leaves)):
            if j not in keep:
                self.leaves[j] = None

    def gather(self, idx: xp.ndarray) -> PhasePoint:
        """The phase point of leaf ``idx[b]`` for each chain b."""
        rows = idx.tolist()
        if rows.count(rows[0]) == len(rows):
            return PhasePoint(*self.leaves[rows[0]])
        picked = [self.leaves[r] for r in rows]
        return PhasePoint(*(xp.array([leaf[k][c] for c, leaf in enumerate(picked)])
                            for k in range(4)))

    def stats(self, depth: xp.ndarray, max_delta_h: float) -> TransitionStats:
        log_w = xp.array(self.log_ws)  # [leaves, B]
        active = xp.array(self.actives)
        n_leapfrog = _rowsum(active, 0).astype(xp.int64)
        # min(1, exp(H0 - H)), the Metropolis acceptance of each leaf
        metro = xp.where(active, xp.exp(xp.minimum(log_w, 0.0)), 0.0)
        divergent = (active & (-log_w > max_delta_h)).any(axis=0)
        accept = _rowsum(metro, 0) / xp.maximum(n_leapfrog, 1)
        return TransitionStats(accept, n_leapfrog, depth, divergent, self.h0)


def nuts_transition(z0: PhasePoint, step: xp.ndarray, inv_metric: xp.ndarray, target: Target,
                    rng: xp.random.Generator, max_depth: int = 10,
                    max_delta_h: float = 1000.0) -> tuple[PhasePoint, TransitionStats]:
    """One NUTS transition for every chain; ``z0.p`` is ignored (momenta are resampled)."""
    with xp.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        # diverging trajectories overflow by design; they are flagged, not warned about
        return _transition(z0, step, inv_metric, target, rng, max_depth, max_delta_h)


def _transition(z0: PhasePoint, step: xp.ndarray, inv_metric: xp.ndarray, target: Target,
                rng: xp.random.Generator, max_depth: int,
                max_delta_h: float) -> tuple[PhasePoint, TransitionStats]:
    b, n = z0.q.shape
    p0 = rng.standard_normal((b, n)) / xp.sqrt(inv_metric)
    z = PhasePoint(z0.q, p0, z0.logp, z0.grad)
    h0 = hamiltonian(z, inv_metric)
    builder = _Builder(target, inv_metric, h0, max_delta_h, z, max_depth)

    ps0 = inv_metric * p0
    end0 = xp.concatenate((z0.q, p0, z0.grad, ps0), axis=1)
    ends = {True: end0, False: end0}  # packed [q | p | grad | M^-1 p] rows: forward, backward
    rho = p0
    sample = xp.zeros(b, dtype=xp.int64)  # leaf 0 is the initial point
    log_weight = xp.zeros(b)
    alive = xp.ones(b, dtype=bool)
    depth = xp.zeros(b, dtype=xp.int64)
    # signed half steps and position increments per direction, chosen per chain each doubling
    e = step[:, None]
    half_e = {True: 0.5 * e, False: -0.5 * e}
    e_inv = {True: e * inv_metric, False: -e * inv_metric}

    for d in range(max_depth):
        u = rng.random((2 ** d + 1, b))
        forward = u[0] > 0.5
        log_u = xp.log(u[1:])
        n_fwd = int(forward.sum())
        if n_fwd == b or n_fwd == 0:  # every chain extends the same way: no selection
            way = n_fwd == b
            near, far = ends[way], ends[not way]
            builder.start(near, half_e[way], e_inv[way], log_u)
        else:
            way = None
            f = forward[:, None]
            near = xp.where(f, ends[True], ends[False])
            far = xp.where(f, ends[False], ends[True])
            builder.start(near, xp.where(f, half_e[True], half_e[False]),
                          xp.where(f, e_inv[True], e_inv[False]), log_u)
        sub = builder.build(d, alive)
        ok = alive & sub.valid
        all_ok = bool(ok.all())

        # biased progressive sampling between the old tree and the new subtree
        take = log_u[0] < sub.log_w - log_weight
        sample = xp.where(take if all_ok else ok & take, sub.idx, sample)
        new_log_weight = xp.logaddexp(log_weight, sub.log_w)

        # no-U-turn across the merged tree and between the old tree and the subtree
        near_p, near_ps, far_ps = near[:, n:2 * n], near[:, 3 * n:], far[:, 3 * n:]
        new_rho = rho + sub.rho
        r_beg = rho + sub.p_beg
        r_end = sub.rho + near_p
        persist = _no_uturn((far_ps, sub.ps_end, far_ps, sub.ps_beg, near_ps, sub.ps_end),
                            (new_rho, new_rho, r_beg, r_beg, r_end, r_end))

        end = xp.concatenate((builder.q, builder.p, builder.g, sub.ps_end), axis=1)
        if all_ok:
            rho, log_weight = new_rho, new_log_weight
            if way is not None:
                ends = {way: end, not way: ends[not way]}
            else:
                ends = {True: xp.where(f, end, ends[True]), False: xp.where(f, ends[False], end)}
        else:
            upd = ok[:, None]
            rho = xp.where(upd, new_rho, rho)
            log_weight = xp.where(ok, new_log_weight, log_weight)
            if way is not None:  # only the end on the side extended moves
                ends = {way: xp.where(upd, end, ends[way]), not way: ends[not way]}
            else:
                ends = {True: xp.where(upd & f, end, ends[True]),
                        False: xp.where(upd & ~f, end, ends[False])}
        depth += ok
        alive = ok & persist
        if builder.prune:
            builder._free(1, sample)
        if not alive.any():
            break

    return builder.gather(sample), builder.stats(depth, max_delta_h)
