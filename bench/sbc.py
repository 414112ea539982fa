"""Simulation-based calibration (Talts et al. 2018) of tensorbridge's NUTS on a hierarchical model.

    bench/.venv/bin/python bench/sbc.py                  # 200 replications
    bench/.venv/bin/python bench/sbc.py --reps 500       # more power, longer
    bench/.venv/bin/python bench/sbc.py --quick          # smoke run (40 replications)
    bench/.venv/bin/python bench/run.py sbc              # through the bench runner

Model: mu ~ N(0, 1), tau ~ HalfNormal(1), theta_j ~ N(mu, tau) (j = 1..5, written non-centred,
theta = mu + tau eta with eta ~ N(0, 1): the same joint distribution, easier geometry),
y_j ~ N(theta_j, 1).

The calibration itself is ``tb.sbc`` (runtime/ppl/sbc.py), the one implementation: each
replication draws (mu, tau, theta, y) from the prior with ``tb.simulate``, fits the model to its
own dataset with ``tb.mcmc`` (2 chains batched in lockstep, thinned to L = 99 draws) and records,
for every parameter, the rank of the true value among the draws (0..L). If the sampler is right
the ranks are uniform. Uniformity: a chi-square test over 10 bins of 10 ranks each (9 degrees of
freedom); a parameter PASSes when its p-value is above 0.01 / (number of parameters),
Bonferroni's correction for testing 7 parameters at a 1% family-wise level. Replications are
independent tasks: in one process, on a local pool (``--cores``) or on a Dask cluster
(``--cluster tcp://host:8786``); replication i's seeds depend on (seed, i) only, so every way
gives the same ranks.

Writes bench/results/sbc.json (ranks, p-values) and bench/results/sbc_ranks.svg (rank
histograms with the 99% band of a uniform bin count).
"""

from __future__ import annotations

import argparse
import json
import math
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


def _model() -> tuple[Any, dict[str, Any]]:
    """The model (data: placeholders that each replication simulates) and what to rank."""
    import tensorbridge as tb

    mu = tb.normal(0.0, 1.0)
    tau = tb.normal(0.0, 1.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=J)
    theta = mu + tau * eta
    y = tb.as_data(np.zeros(J))
    tb.distribution(y, tb.normal(theta, 1.0))
    return tb.model(mu=mu, tau=tau, eta=eta), {"mu": mu, "tau": tau, "theta": theta}


def run(reps: int, seed: int, cores: int, warmup: int, per_chain: int,
        cluster: str | None = None) -> dict[str, Any]:
    """``tb.sbc`` of the model: in one process (cores 1), on ``cores`` local processes, or on
    the Dask cluster at ``cluster``."""
    import tensorbridge as tb

    t0 = time.perf_counter()
    m, params = _model()
    res = tb.sbc(m, reps, parameters=params, n_samples=per_chain, warmup=warmup, chains=2,
                 thin_to=L, bins=BINS, seed=seed, alpha=FAMILY_ALPHA, progress=False,
                 cluster=cluster, n_cores=None if cluster or cores <= 1 else cores)
    assert res.names == PARAMS, res.names
    out: dict[str, Any] = {"reps": reps, "L": L, "bins": BINS, "seed": seed,
                           "cores": cores if cluster is None else None, "cluster": cluster,
                           "warmup": warmup, "draws_per_chain": per_chain,
                           "threshold": res.threshold, "params": {}}
    for p in PARAMS:
        out["params"][p] = {"p_value": res.p_values[p], "counts": res.counts[p].tolist(),
                            "passed": bool(res.passed[p]), "ranks": res.ranks[p].tolist()}
    ess = res.ess_bulk_min / L
    out["min_ess_per_kept_draw"] = {"median": float(np.median(ess)), "min": float(ess.min())}
    out["divergences"] = int(res.divergences.sum())
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
             f"Bonferroni over {len(PARAMS)} parameters); {res['wall_s']:.0f} s "
             + (f"on the Dask cluster at {res['cluster']}" if res.get("cluster")
                else f"on {res['cores']} processes"),
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
    ap.add_argument("--cluster", help="a Dask scheduler address (tcp://host:8786) to run the "
                    "replications on instead of local processes")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    kw = _defaults(args.quick)
    if args.reps:
        kw["reps"] = args.reps
    res = run(kw["reps"], args.seed, args.cores, kw["warmup"], kw["per_chain"], args.cluster)
    _save(res)
    print(report(res))
    print(f"\nwrote {(RESULTS / 'sbc.json').relative_to(BENCH_DIR.parent)}, "
          f"{(RESULTS / 'sbc_ranks.svg').relative_to(BENCH_DIR.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(cli())
