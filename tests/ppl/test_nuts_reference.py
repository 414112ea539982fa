"""The optimised, batched NUTS transition against a deliberately plain reference.

The reference follows Stan's algorithm chain by chain with Python recursion over explicit lists of
trajectory points: multinomial sampling within subtrees, biased progressive sampling at the top,
the generalised U-turn criterion over each merged span and the two extra spans across the seam,
the divergence threshold and the depth limit. It reads the same random numbers (momenta, then one
block of uniforms per doubling: direction, progressive sample, subtree merges in post-order), so
the two must give the same trajectories: same proposals, depths, leapfrog counts and divergences.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from tensorbridge.runtime.ppl.hamiltonian import PhasePoint
from tensorbridge.runtime.ppl.nuts import nuts_transition


class _Point:
    def __init__(self, q, p, logp, grad, inv):
        self.q, self.p, self.logp, self.grad = q, p, logp, grad
        self.ps = inv * p  # velocity M^-1 p


def _reference(q0, p0, logp_grad, eps, inv, blocks, max_depth, max_delta_h, extra=True):
    """One NUTS transition of one chain. ``blocks[d]``: the chain's uniforms for doubling d;
    ``extra``: check the two spans across each seam as well (Stan does)."""
    logp0, g0 = logp_grad(q0)
    start = _Point(q0, p0, logp0, g0, inv)
    h0 = -logp0 + 0.5 * float(np.sum(p0 * p0 * inv))
    stats = {"n_leapfrog": 0, "sum_metro": 0.0, "divergent": False}

    def leapfrog(z, e):
        p_half = z.p + 0.5 * e * z.grad
        q = z.q + e * inv * p_half
        logp, grad = logp_grad(q)
        return _Point(q, p_half + 0.5 * e * grad, logp, grad, inv)

    def no_uturn(span):  # span: points in trajectory order
        rho = np.sum([z.p for z in span], axis=0)
        return float(span[0].ps @ rho) > 0 and float(span[-1].ps @ rho) > 0

    def merged_ok(left, right):  # left, right: adjacent spans in trajectory order
        return no_uturn(left + right) and (not extra or (
            no_uturn(left + right[:1]) and no_uturn(left[-1:] + right)))

    def build(depth, z, e, u, pos):
        """-> (points in integration order, proposal, log weight, valid, next merge row)."""
        if depth == 0:
            z1 = leapfrog(z, e)
            h = -z1.logp + 0.5 * float(np.sum(z1.p * z1.p * inv))
            if math.isnan(h):
                h = math.inf
            stats["n_leapfrog"] += 1
            stats["sum_metro"] += math.exp(min(h0 - h, 0.0))
            divergent = h - h0 > max_delta_h
            stats["divergent"] |= divergent
            return [z1], z1, h0 - h, not divergent, pos
        pts1, prop1, w1, ok1, pos = build(depth - 1, z, e, u, pos)
        if not ok1:  # Stan stops here; the rows of the skipped merges stay reserved
            return pts1, prop1, w1, False, pos + 2 ** (depth - 1)
        pts2, prop2, w2, ok2, pos = build(depth - 1, pts1[-1], e, u, pos)
        w = np.logaddexp(w1, w2)
        prop = prop2 if math.log(u[pos]) < w2 - w else prop1
        pos += 1
        if not ok2:
            return pts1 + pts2, prop, w, False, pos
        left, right = (pts1, pts2) if e > 0 else (pts2[::-1], pts1[::-1])
        return pts1 + pts2, prop, w, merged_ok(left, right), pos

    trajectory = [start]  # in trajectory order
    sample, log_w, depth = start, 0.0, 0
    for d in range(max_depth):
        u = blocks[d]
        forward = u[0] > 0.5
        e = eps if forward else -eps
        z = trajectory[-1] if forward else trajectory[0]
        pts, prop, w, ok, _ = build(d, z, e, u, 2)
        if not ok:
            break
        depth += 1
        if math.log(u[1]) < w - log_w:
            sample = prop
        log_w = np.logaddexp(log_w, w)
        if forward:
            left, right = trajectory, pts
            trajectory = trajectory + pts
        else:
            left, right = pts[::-1], trajectory
            trajectory = pts[::-1] + trajectory
        if not merged_ok(left, right):
            break
    accept = stats["sum_metro"] / max(stats["n_leapfrog"], 1)
    return sample, depth, stats["n_leapfrog"], stats["divergent"], accept, h0


class _Streams:
    """A generator that also remembers every draw, so the reference can read the same ones."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.blocks = []

    def standard_normal(self, size):
        self.normals = self.rng.standard_normal(size)
        return self.normals

    def random(self, size):
        u = self.rng.random(size)
        self.blocks.append(u)
        return u


def _compare(logp_grad_1, q0, inv, eps, seed, max_depth=10, max_delta_h=1000.0):
    b = q0.shape[0]

    def target(q):
        out = [logp_grad_1(row) for row in q]
        return np.array([o[0] for o in out]), np.array([o[1] for o in out])

    lp0, g0 = target(q0)
    rng = _Streams(seed)
    z, st = nuts_transition(PhasePoint(q0, np.zeros_like(q0), lp0, g0), eps, inv, target, rng,
                            max_depth=max_depth, max_delta_h=max_delta_h)
    p0 = rng.normals / np.sqrt(inv)
    out = []
    for c in range(b):
        blocks = [blk[:, c] for blk in rng.blocks]
        ref = _reference(q0[c], p0[c], logp_grad_1, float(eps[c]), inv[c], blocks, max_depth,
                         max_delta_h)
        sample, depth, n_lf, divergent, accept, h0 = ref
        assert st.tree_depth[c] == depth, (c, st.tree_depth[c], depth)
        assert st.n_leapfrog[c] == n_lf, (c, st.n_leapfrog[c], n_lf)
        assert bool(st.divergent[c]) == divergent
        np.testing.assert_allclose(z.q[c], sample.q, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(z.logp[c], sample.logp, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(z.grad[c], sample.grad, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(st.accept_stat[c], accept, rtol=1e-10)
        np.testing.assert_allclose(st.energy[c], h0, rtol=1e-12)
        out.append((depth, n_lf, divergent))
    return out


def _std_normal(q):
    return -0.5 * float(q @ q), -q


def test_one_chain_standard_normal_matches_reference() -> None:
    depths = []
    for seed in range(60):
        q0 = np.random.default_rng(1000 + seed).normal(size=(1, 1))
        depths += _compare(_std_normal, q0, np.ones((1, 1)), np.array([0.7]), seed)
    assert len({d for d, _, _ in depths}) >= 2  # the trees differ in depth


def test_batched_correlated_gaussian_matches_reference() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(5, 5))
    prec = a @ a.T + 0.5 * np.eye(5)

    def logp_grad(q):
        g = -prec @ q
        return 0.5 * float(q @ g), g

    inv = np.abs(rng.normal(size=(4, 5))) * 0.3 + 0.05
    results = []
    for seed in range(25):
        q0 = np.random.default_rng(10_000 + seed).normal(size=(4, 5))
        eps = np.array([0.05, 0.1, 0.2, 0.15])
        results += _compare(logp_grad, q0, inv, eps, seed, max_depth=6)
    depths = {d for d, _, _ in results}
    assert max(depths) == 6 and len(depths) >= 3  # deep trees and the depth cap are exercised


def test_divergences_match_reference() -> None:
    def funnel(q):  # Neal's funnel: log-scale v = q[0], x = q[1:]
        v, x = q[0], q[1:]
        lp = -0.5 * v * v / 9.0 - 0.5 * float(x @ x) * np.exp(-v) - 0.5 * len(x) * v
        g = np.concatenate([[-v / 9.0 + 0.5 * float(x @ x) * np.exp(-v) - 0.5 * len(x)],
                            -x * np.exp(-v)])
        return lp, g

    results = []
    with np.errstate(all="ignore"):  # the funnel's neck overflows: divergences by design
        for seed in range(30):
            q0 = np.random.default_rng(10_000 + seed).normal(size=(3, 4)) * np.array(
                [2.0, 1, 1, 1])
            results += _compare(funnel, q0, np.ones((3, 4)), np.array([0.5, 1.0, 1.5]), seed,
                                max_delta_h=50.0)
    assert any(div for _, _, div in results) and not all(div for _, _, div in results)


def test_nan_density_counts_as_divergent_like_reference() -> None:
    def walled(q):  # NaN beyond a radius: an infinitely bad energy, so a divergence
        r = float(q @ q)
        if r > 4.0:
            return math.nan, np.full_like(q, math.nan)
        return -0.5 * r, -q

    results = []
    with np.errstate(invalid="ignore"):
        for seed in range(30):
            q0 = np.random.default_rng(10_000 + seed).normal(size=(2, 2)) * 0.5
            results += _compare(walled, q0, np.ones((2, 2)), np.array([0.4, 0.8]), seed)
    assert any(div for _, _, div in results)


@pytest.mark.parametrize("max_depth", [1, 3])
def test_small_max_depth_matches_reference(max_depth) -> None:
    for seed in range(20):
        q0 = np.random.default_rng(10_000 + seed).normal(size=(2, 3))
        _compare(lambda q: (-0.5 * float(q @ q), -q), q0, np.ones((2, 3)),
                 np.array([0.1, 0.3]), seed, max_depth=max_depth)


def test_checks_across_subtree_seams_match_reference() -> None:
    # a correlated Gaussian with a large step: here the two extra spans per merge stop trees
    # (within subtrees and at the top) that the whole-span criterion alone would continue
    dim, mattered = 3, 0
    a = np.random.default_rng(3).normal(size=(dim, dim))
    prec = a @ a.T / dim + 0.1 * np.eye(dim)

    def logp_grad(q):
        g = -prec @ q
        return 0.5 * float(q @ g), g

    eps = np.array([0.8, 0.7, 0.9])
    for seed in range(40):
        q0 = np.random.default_rng(10_000 + seed).normal(size=(3, dim))
        _compare(logp_grad, q0, np.ones((3, dim)), eps, seed)
        rng = _Streams(seed)
        p0 = rng.standard_normal((3, dim))
        blocks = [rng.random((2 ** d + 1, 3)) for d in range(10)]
        for c in range(3):
            args = (q0[c], p0[c], logp_grad, float(eps[c]), np.ones(dim),
                    [blk[:, c] for blk in blocks], 10, 1000.0)
            x, y = _reference(*args), _reference(*args, extra=False)
            mattered += (x[1], x[2]) != (y[1], y[2]) or not np.array_equal(x[0].q, y[0].q)
    assert mattered >= 5


def test_freeing_unused_leaves_changes_nothing(monkeypatch) -> None:
    # large states free the leaves no proposal refers to any more; force that path here
    nuts_module = sys.modules[nuts_transition.__module__]  # the package's `nuts` is a function
    monkeypatch.setattr(nuts_module, "_PRUNE_SIZE", 0)
    test_batched_correlated_gaussian_matches_reference()
    test_checks_across_subtree_seams_match_reference()
