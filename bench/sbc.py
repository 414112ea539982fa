"""Simulation-based calibration (Talts et al. 2018) of tensorbridge's NUTS on a hierarchical model.

    bench/.venv/bin/python bench/sbc.py                  # 200 replications
    bench/.venv/bin/python bench/sbc.py --reps 500       # more power, longer
    bench/.venv/bin/python bench/sbc.py --quick          # smoke run (40 replications)
    bench/.venv/bin/python bench/run.py sbc              # through the bench runner

Model: mu ~ N(0, 1), tau ~ HalfNormal(1), theta_j ~ N(mu, tau) (j = 1..5, written non-centred,
theta = mu + tau eta with eta ~ N(0, 1): the same joint distribution, easier geometry),
y_j ~ N(theta_j, 1).

Each replication draws (mu, tau, theta, y) from the prior with ``tb.simulate`` (all
replications in one vectorised call), then fits a model of its own dataset with ``tb.mcmc``
(2 chains batched in lockstep, thinned to L = 99 draws) and records, for every parameter, the
rank of the true value among the draws (0..L). If the sampler is right the ranks are uniform.
Uniformity: a chi-square test over 10 bins of 10 ranks each (9 degrees of freedom); a parameter
PASSes when its p-value is above 0.01 / (number of parameters), Bonferroni's correction for
testing 7 parameters at a 1% family-wise level. Replications are independent fits of separate
models (datasets never share a model), spread over worker processes, one per core.

Writes bench/results/sbc.json (ranks, p-values) and bench/results/sbc_ranks.svg (rank
histograms with the 99% band of a uniform bin count).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results"
J = 5
L = 99  # draws per replication after thinning: ranks take L + 1 = 100 values
BINS = 10
PARAMS = ["mu", "tau", *(f"theta[{j}]" for j in range(J))]
FAMILY_ALPHA = 0.01


def _graph() -> tuple[Any, Any, Any, Any]:
    import tensorbridge as tb

    mu = tb.normal(0.0, 1.0)
    tau = tb.normal(0.0, 1.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=J)
    theta = mu + tau * eta
    return mu, tau, eta, theta


def simulate_truth(reps: int, seed: int) -> dict[str, np.ndarray]:
    """Parameters and datasets from the prior, every replication in one call."""
    import tensorbridge as tb

    mu, tau, _, theta = _graph()
    y = tb.as_data(np.zeros(J))
    tb.distribution(y, tb.normal(theta, 1.0))
    sims = tb.simulate({"mu": mu, "tau": tau, "theta": theta, "y": y}, nsim=reps, seed=seed)
    return {k: np.asarray(v.numpy()) for k, v in sims.items()}


def fit_one(task: tuple[int, list[float], int, int, int]) -> dict[str, Any]:
    """Fit replication ``r``'s dataset; the draws of every parameter, thinned to L."""
    import tensorbridge as tb
    from tensorbridge.runtime.ppl import ess_bulk

    r, yv, seed, warmup, per_chain = task
    mu, tau, eta, theta = _graph()
    tb.distribution(tb.as_data(yv), tb.normal(theta, 1.0))
    m = tb.model(mu=mu, tau=tau, eta=eta)
    d = tb.mcmc(m, n_samples=per_chain, warmup=warmup, chains=2, seed=seed, progress=False)
    th = tb.calculate(theta, values=d)  # (chains, draws, J)
    cols = {"mu": d["mu"], "tau": d["tau"], **{f"theta[{j}]": th[..., j] for j in range(J)}}
    thin = (2 * per_chain) // L
    out = {k: v.reshape(-1)[::thin][:L].tolist() for k, v in cols.items()}
    min_ess = min(ess_bulk(v) for v in cols.values())
    return {"r": r, "draws": out, "min_ess_per_kept": min_ess / L,
            "divergences": d.divergences}


def chi2_sf(x: float, df: int) -> float:
    """P(X > x) for X ~ chi-square(df): the regularised upper incomplete gamma Q(df/2, x/2)."""
    a, z = df / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    if z < a + 1:  # series for P(a, z)
        term = total = 1.0 / a
        k = a
        while term > total * 1e-15:
            k += 1
            term *= z / k
            total += term
        return max(0.0, 1.0 - total * math.exp(-z + a * math.log(z) - math.lgamma(a)))
    # continued fraction for Q(a, z) (modified Lentz)
    tiny = 1e-300
    b = z + 1.0 - a
    c = 1.0 / tiny
    dd = 1.0 / b
    h = dd
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2.0
        dd = an * dd + b
        dd = tiny if abs(dd) < tiny else dd
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        dd = 1.0 / dd
        delta = dd * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return math.exp(-z + a * math.log(z) - math.lgamma(a)) * h


def uniformity(ranks: np.ndarray) -> tuple[np.ndarray, float]:
    """Counts per bin of 10 ranks and the chi-square p-value against uniform ranks 0..L."""
    counts = np.bincount(ranks * BINS // (L + 1), minlength=BINS)
    expected = ranks.size / BINS
    stat = float(((counts - expected) ** 2 / expected).sum())
    return counts, chi2_sf(stat, BINS - 1)


def run(reps: int, seed: int, cores: int, warmup: int, per_chain: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    truth = simulate_truth(reps, seed)
    tasks = [(r, truth["y"][r].tolist(), seed * 100_003 + r, warmup, per_chain)
             for r in range(reps)]
    if cores > 1:
        # spawn, not forkserver: the workers are then this process's children, so the bench
        # runner's CPU accounting (which sees children only) includes them
        with mp.get_context("spawn").Pool(cores) as pool:
            fits = list(pool.imap_unordered(fit_one, tasks, chunksize=4))
    else:
        fits = [fit_one(t) for t in tasks]
    fits.sort(key=lambda f: f["r"])
    true_cols = {"mu": truth["mu"], "tau": truth["tau"],
                 **{f"theta[{j}]": truth["theta"][:, j] for j in range(J)}}
    out: dict[str, Any] = {"reps": reps, "L": L, "bins": BINS, "seed": seed, "cores": cores,
                           "warmup": warmup, "draws_per_chain": per_chain,
                           "threshold": FAMILY_ALPHA / len(PARAMS), "params": {}}
    for p in PARAMS:
        ranks = np.array([int(np.sum(np.asarray(f["draws"][p]) < true_cols[p][f["r"]]))
                          for f in fits])
        counts, pval = uniformity(ranks)
        out["params"][p] = {"p_value": pval, "counts": counts.tolist(),
                            "passed": pval > out["threshold"], "ranks": ranks.tolist()}
    ess = np.array([f["min_ess_per_kept"] for f in fits])
    out["min_ess_per_kept_draw"] = {"median": float(np.median(ess)), "min": float(ess.min())}
    out["divergences"] = int(sum(f["divergences"] for f in fits))
    out["wall_s"] = time.perf_counter() - t0
    return out


def write_svg(res: dict[str, Any], path: Path) -> None:
    """Rank histograms, one panel per parameter, with the 99% band of a uniform bin count."""
    w, h, pad = 180, 120, 24
    n = len(PARAMS)
    cols = 4
    rows = math.ceil(n / cols)
    expected = res["reps"] / BINS
    sd = math.sqrt(res["reps"] * (1 / BINS) * (1 - 1 / BINS))
    lo, hi = expected - 2.576 * sd, expected + 2.576 * sd
    top = max(hi, *(max(v["counts"]) for v in res["params"].values())) * 1.1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * (w + pad)}" '
             f'height="{rows * (h + 2 * pad)}" font-family="sans-serif" font-size="11">']
    for i, p in enumerate(PARAMS):
        info = res["params"][p]
        x0 = (i % cols) * (w + pad) + pad // 2
        y0 = (i // cols) * (h + 2 * pad) + pad

        def y(v: float, y0: float = y0) -> float:
            return y0 + h - h * v / top

        parts.append(f'<rect x="{x0}" y="{y(hi):.1f}" width="{w}" '
                     f'height="{y(lo) - y(hi):.1f}" fill="#ddd"/>')
        bw = w / BINS
        for b, c in enumerate(info["counts"]):
            parts.append(f'<rect x="{x0 + b * bw + 1:.1f}" y="{y(c):.1f}" width="{bw - 2:.1f}" '
                         f'height="{y0 + h - y(c):.1f}" fill="#4a7ab5"/>')
        parts.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y(expected):.1f}" '
                     f'y2="{y(expected):.1f}" stroke="#333" stroke-dasharray="3,2"/>')
        verdict = "PASS" if info["passed"] else "MISS"
        parts.append(f'<text x="{x0}" y="{y0 - 6}">{p}: p = {info["p_value"]:.3f} '
                     f'{verdict}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")


def report(res: dict[str, Any]) -> str:
    lines = [f"SBC: {res['reps']} replications, L = {res['L']} thinned draws each, "
             f"{res['bins']} bins; PASS when p > {res['threshold']:.4f} (1% family-wise, "
             f"Bonferroni over {len(PARAMS)} parameters); {res['wall_s']:.0f} s on "
             f"{res['cores']} processes",
             f"{'parameter':<10} {'p-value':>8}  result  counts per bin"]
    for p, info in res["params"].items():
        lines.append(f"{p:<10} {info['p_value']:>8.3f}  {'PASS' if info['passed'] else 'MISS'}"
                     f"    {info['counts']}")
    e = res["min_ess_per_kept_draw"]
    lines.append(f"bulk ESS per kept draw (min over parameters): median {e['median']:.2f}, "
                 f"lowest {e['min']:.2f} (>= ~1: the kept draws are roughly independent); "
                 f"{res['divergences']} divergent transitions in all")
    return "\n".join(lines)


def _defaults(quick: bool) -> dict[str, int]:
    if quick:
        return {"reps": 40, "warmup": 200, "per_chain": 150}
    return {"reps": int(os.environ.get("SBC_REPS", 200)), "warmup": 400, "per_chain": 250}


def _save(res: dict[str, Any]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "sbc.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    write_svg(res, RESULTS / "sbc_ranks.svg")


def main() -> list[dict[str, Any]]:
    """Entry point for bench/run.py: one row per parameter (p-value, PASS/MISS)."""
    quick = os.environ.get("BENCH_QUICK", "") not in ("", "0")
    kw = _defaults(quick)
    res = run(kw["reps"], 1, os.cpu_count() or 1, kw["warmup"], kw["per_chain"])
    _save(res)
    print(report(res))
    rows = []
    for p, info in res["params"].items():
        rows.append({"name": f"SBC rank uniformity {p} (p = {info['p_value']:.3f})",
                     "value_us": None, "value_note": f"{res['reps']} reps", "peer": "",
                     "peer_us": None, "ratio": None,
                     "target": f"p > {res['threshold']:.4f}", "passed": info["passed"],
                     "details": {"p_value": info["p_value"], "counts": info["counts"]}})
    return rows


def cli(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 40 short replications")
    ap.add_argument("--reps", type=int, help="replications (default 200; 40 with --quick)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1,
                    help="worker processes (default: every core)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    kw = _defaults(args.quick)
    if args.reps:
        kw["reps"] = args.reps
    res = run(kw["reps"], args.seed, args.cores, kw["warmup"], kw["per_chain"])
    _save(res)
    print(report(res))
    print(f"\nwrote {(RESULTS / 'sbc.json').relative_to(BENCH_DIR.parent)}, "
          f"{(RESULTS / 'sbc_ranks.svg').relative_to(BENCH_DIR.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(cli())
