"""Gradient-free samplers, every chain at once: random-walk Metropolis (``rwmh``) and univariate
slice sampling with doubling (``slice``; Neal 2003, "Slice sampling", Ann. Statist. 31(3),
figures 4-6), one coordinate after another.

Both run on the host arrays ``xp`` (NumPy, or the pure-Python arrays without it) and draw from
the per-chain Philox streams (``chain_rng``). A chain's numbers must not depend on the other
chains of its batch, so every call draws the same count of numbers for every chain: the slice
sampler draws its doubling and shrinkage uniforms in fixed blocks per coordinate, whatever each
chain ends up reading.

The proposal scale of ``rwmh`` is ``step * sqrt(inv_metric)``: warmup adapts ``step`` by dual
averaging toward the usual acceptance rate (0.44 in one dimension, else 0.234) and
``inv_metric`` as for HMC (the posterior variances). The slice sampler's initial interval width
per coordinate is ``step * sqrt(inv_metric)`` (``step`` fixed, the widths follow the metric).
"""

from __future__ import annotations

from ..host_namespace import xp
from .hamiltonian import PhasePoint, Target
from .nuts import TransitionStats

__all__ = ["SHRINK_ROUNDS", "rwmh_accept_target", "rwmh_transition", "slice_transition"]

# shrinkage rounds drawn per coordinate (an interval that has not caught an acceptable point
# after this many is given up: the chain stays, flagged divergent; in practice never reached)
SHRINK_ROUNDS = 64


def rwmh_accept_target(n: int) -> float:
    """The acceptance rate warmup aims for (Roberts, Gelman & Gilks 1997; 0.44 in 1-d)."""
    return 0.44 if n == 1 else 0.234


def _finite_lp(lp: xp.ndarray) -> xp.ndarray:
    return xp.fmax(lp, -xp.inf)  # NaN (a failed density) is -inf: never accepted


def rwmh_transition(z0: PhasePoint, step: xp.ndarray, inv_metric: xp.ndarray, target: Target,
                    rng: xp.random.Generator,
                    proposal: str = "normal") -> tuple[PhasePoint, TransitionStats]:
    """One Metropolis step per chain with a normal or uniform (on ``[-scale, scale]``) random
    walk of scale ``step * sqrt(inv_metric)``."""
    b, n = z0.q.shape
    scale = step[:, None] * xp.sqrt(inv_metric)
    if proposal == "normal":
        d = rng.standard_normal((b, n))
    else:
        d = rng.uniform(-1.0, 1.0, size=(b, n))
    q1 = z0.q + scale * d
    lp1, g1 = target(q1)
    lp1 = _finite_lp(lp1)
    log_r = xp.minimum(lp1 - z0.logp, 0.0)
    log_r = xp.fmax(log_r, -xp.inf)
    accept = xp.log(rng.uniform(size=b)) < log_r
    out = PhasePoint(q1, z0.p, lp1, g1).select(accept, z0)
    stats = TransitionStats(xp.exp(log_r), xp.ones(b, dtype=xp.int64), xp.zeros(b, xp.int64),
                            ~xp.isfinite(lp1), -z0.logp)
    return out, stats


def slice_transition(z0: PhasePoint, step: xp.ndarray, inv_metric: xp.ndarray, target: Target,
                     rng: xp.random.Generator,
                     max_doublings: int = 5) -> tuple[PhasePoint, TransitionStats]:
    """One sweep of univariate slice sampling over every coordinate, for every chain: the
    interval found by doubling (at most ``max_doublings`` times) from a randomly placed one of
    width ``step * sqrt(inv_metric)``, then shrunk towards the current point, a candidate being
    kept only where the doubling procedure could have found the same interval from it."""
    b, n = z0.q.shape
    q, logp, grad = z0.q, z0.logp, z0.grad
    evals = 0
    stuck = xp.zeros(b, dtype=bool)
    for j in range(n):
        # (no arange or item assignment in the pure-Python arrays)
        onehot = xp.asarray([[1.0 if k == j else 0.0 for k in range(n)]]) > 0.5
        x0 = q[:, j]
        w = step * xp.sqrt(inv_metric[:, j])

        def f(x: xp.ndarray, q=q, onehot=onehot) -> tuple[xp.ndarray, xp.ndarray]:
            lp, g = target(xp.where(onehot, x[:, None], q))
            return _finite_lp(lp), g

        # every number of this coordinate drawn at once: the same count for every chain
        log_y = logp + xp.log(1.0 - rng.uniform(size=b))  # the slice: log f(x0) - Exp(1)
        u = rng.uniform(size=(b, max_doublings + 1))
        shrink_u = rng.uniform(size=(b, SHRINK_ROUNDS))
        left = x0 - w * u[:, 0]
        right = left + w
        f_left, f_right = f(left)[0], f(right)[0]
        evals += 2
        growing = xp.ones(b, dtype=bool)
        for k in range(max_doublings):
            growing = growing & ((log_y < f_left) | (log_y < f_right))
            if not growing.any():
                break
            width = right - left
            go_left = growing & (u[:, k + 1] < 0.5)
            go_right = growing & ~(u[:, k + 1] < 0.5)
            left = xp.where(go_left, left - width, left)
            right = xp.where(go_right, right + width, right)
            f_left = xp.where(go_left, f(left)[0], f_left)
            f_right = xp.where(go_right, f(right)[0], f_right)
            evals += 2
        x_new, lp_new, g_new = x0, logp, grad
        done = xp.zeros(b, dtype=bool)
        for k in range(SHRINK_ROUNDS):
            x1 = left + shrink_u[:, k] * (right - left)
            lp1, g1 = f(x1)
            evals += 1
            cand = ~done & (log_y < lp1)
            if cand.any():
                ok, extra = _acceptable(f, x0, x1, left, right, w, log_y, cand)
                evals += extra
                cand = cand & ok
            x_new = xp.where(cand, x1, x_new)
            lp_new = xp.where(cand, lp1, lp_new)
            g_new = xp.where(cand[:, None], g1, g_new)
            shrinking = ~done & ~cand
            left = xp.where(shrinking & (x1 < x0), x1, left)
            right = xp.where(shrinking & ~(x1 < x0), x1, right)
            done = done | cand
            if done.all():
                break
        stuck = stuck | ~done
        q = xp.where(onehot, x_new[:, None], q)
        logp, grad = lp_new, g_new
    stats = TransitionStats(xp.ones(b), xp.full(b, evals), xp.zeros(b, xp.int64), stuck,
                            -z0.logp)
    return PhasePoint(q, z0.p, logp, grad), stats


def _acceptable(f, x0: xp.ndarray, x1: xp.ndarray, left: xp.ndarray, right: xp.ndarray,
                w: xp.ndarray, log_y: xp.ndarray, live: xp.ndarray) -> tuple[xp.ndarray, int]:
    """Neal's test (figure 6) that doubling from ``x1`` could have produced ``[left, right]``:
    halve the interval towards ``x1``; where the halves separate ``x0`` from ``x1`` and both
    ends of the half are outside the slice, ``x1`` is not acceptable."""
    ok = xp.ones(x0.shape, dtype=bool)
    differ = xp.zeros(x0.shape, dtype=bool)
    lo, hi = left, right
    live = live & ((hi - lo) > 1.1 * w)
    evals = 0
    while (live & ok).any():
        mid = 0.5 * (lo + hi)
        differ = differ | ((x0 < mid) & ~(x1 < mid)) | (~(x0 < mid) & (x1 < mid))
        lo = xp.where(live & ~(x1 < mid), mid, lo)
        hi = xp.where(live & (x1 < mid), mid, hi)
        check = live & ok & differ
        if check.any():
            outside = (log_y >= f(lo)[0]) & (log_y >= f(hi)[0])
            evals += 2
            ok = ok & ~(check & outside)
        live = live & ((hi - lo) > 1.1 * w)
    return ok, evals
