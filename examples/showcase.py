"""`make demo`: eight schools sampled from Python, from R (Rscript) and from a headless browser
page, with the three posterior summaries side by side and a trace plot.

Each front door runs the same greta-style model with NUTS (4 chains x 1000 warmup + 1000 draws)
on its own seed, and writes a JSON summary (see examples/eight_schools.py). The runs are
independent Monte Carlo estimates of one posterior, so they agree within Monte Carlo error: the
"agree" column tests |mean_a - mean_b| against 4 combined standard errors (sd / sqrt(ESS)).

    .venv/bin/python examples/showcase.py [--out demo-output] [--only python,r,browser]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import eight_schools  # noqa: E402

PARAMS = ["mu", "tau", *(f"theta[{i}]" for i in range(8))]


def _normalise(result: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Parameter names as Python writes them: R's 1-based ``theta[3]`` / ``theta[3,1]`` becomes
    ``theta[2]``."""
    one_based = result.get("index_base", 1 if result["language"] == "R" else 0) == 1
    out = {}
    for name, row in result["posterior"].items():
        m = re.fullmatch(r"(\w+)\[([\d, ]+)\]", name)
        if m:
            idx = [int(i) for i in m.group(2).split(",")]
            if one_based:
                idx = [i - 1 for i in idx]
            while len(idx) > 1 and idx[-1] == 0:  # greta's column vectors: theta[i,1]
                idx.pop()
            name = f"{m.group(1)}[{','.join(map(str, idx))}]"
        out[name] = {k: float(v) for k, v in row.items()}
    return out


def _run_python(out: Path, seed: int) -> tuple[dict[str, Any], Any]:
    draws, result = eight_schools.run(seed=seed, progress=False)
    (out / "python.json").write_text(json.dumps(result, indent=1))
    return result, draws


def _run_subprocess(cmd: list[str], path: Path, what: str, env: dict[str, str]) -> dict[str, Any]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0 or not path.exists():
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"showcase: the {what} run failed (exit {proc.returncode}): "
                         f"{' '.join(cmd)}")
    result = json.loads(path.read_text())
    result.setdefault("seconds", time.perf_counter() - t0)
    return result


def _run_r(out: Path, seed: int) -> dict[str, Any]:
    env = {**os.environ, "TENSORBRIDGE_PYTHON": sys.executable}
    return _run_subprocess(["Rscript", "examples/eight_schools.R", str(seed),
                            str(out / "r.json"), "--plot", str(out / "r_trace.png")],
                           out / "r.json", "R", env)


def _run_browser(out: Path, seed: int) -> dict[str, Any]:
    node = shutil.which("node") or "node"
    return _run_subprocess([node, "js-client/scripts/eight_schools_browser.mjs", "--seed",
                            str(seed), "--out", str(out / "browser.json")],
                           out / "browser.json", "browser", dict(os.environ))


def _agree(a: dict[str, float], b: dict[str, float]) -> tuple[bool, float]:
    se = math.sqrt(a["sd"] ** 2 / a["ess_bulk"] + b["sd"] ** 2 / b["ess_bulk"])
    z = abs(a["mean"] - b["mean"]) / se
    return z < 4.0, z


def print_table(results: list[dict[str, Any]]) -> bool:
    rows = [_normalise(r) for r in results]
    langs = [r["language"] for r in results]
    widths = [max(18, len(lang) + 2) for lang in langs]
    head = f"{'parameter':<10}" + "".join(f"{lang:>{w}}" for lang, w in zip(langs, widths))
    head += f"{'max |z|':>9}  agree"
    print(head)
    ok = True
    for p in PARAMS:
        cells, worst = [], 0.0
        for r in rows:
            v = r.get(p)
            cells.append(f"{v['mean']:.2f} ({v['sd']:.2f})" if v else "-")
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                if p in rows[i] and p in rows[j]:
                    good, z = _agree(rows[i][p], rows[j][p])
                    ok &= good
                    worst = max(worst, z)
        print(f"{p:<10}" + "".join(f"{c:>{w}}" for c, w in zip(cells, widths))
              + f"{worst:>9.2f}  {'yes' if worst < 4 else 'NO'}")
    print("mean (sd) per front door; |z|: the largest difference of means between two front "
          "doors, in combined Monte Carlo standard errors")
    stats = "\n".join(f"{r['language']}: {r['seconds']:.1f} s, max R-hat "
                       f"{max(v['rhat'] for v in n.values()):.3f}, min bulk ESS "
                       f"{min(v['ess_bulk'] for v in n.values()):.0f}"
                       for r, n in zip(results, rows))
    print(stats)
    return ok


def trace_plot(draws: Any, results: list[dict[str, Any]], path: Path) -> None:
    """Traces of mu and tau (Python chains) and theta's 90% intervals from every language."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for ax, name in zip(axes[:2], ("mu", "tau")):
        for c, chain in enumerate(draws[name]):
            ax.plot(chain, lw=0.5, alpha=0.8, label=f"chain {c + 1}")
        ax.set_title(f"{name}: trace (Python, 4 chains)")
        ax.set_xlabel("draw")
    axes[0].legend(fontsize=7, loc="upper right")
    ax = axes[2]
    rows = [_normalise(r) for r in results]
    for k, (r, n) in enumerate(zip(results, rows)):
        ys = [i + (k - (len(rows) - 1) / 2) * 0.22 for i in range(8)]
        th = [n[f"theta[{i}]"] for i in range(8)]
        ax.errorbar([t["mean"] for t in th], ys,
                    xerr=[[t["mean"] - t["q5"] for t in th], [t["q95"] - t["mean"] for t in th]],
                    fmt="o", ms=4, capsize=2, label=r["language"])
    ax.set_yticks(range(8), [f"theta[{i}]" for i in range(8)])
    ax.invert_yaxis()
    ax.set_title("theta: mean and 90% interval per front door")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description="eight schools from Python, R and a browser")
    ap.add_argument("--out", default="demo-output")
    ap.add_argument("--only", default="python,r,browser")
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    out = (ROOT / args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    which = args.only.split(",")
    print("eight schools (non-centred), NUTS, 4 chains x (1000 warmup + 1000 draws), "
          "one seed per front door\n")
    results, draws = [], None
    if "python" in which:
        print("Python  ... ", end="", flush=True)
        res, draws = _run_python(out, args.seed)
        results.append(res)
        print(f"{res['seconds']:.1f} s")
    if "r" in which:
        print("R       ... ", end="", flush=True)
        results.append(_run_r(out, args.seed + 1))
        print(f"{results[-1]['seconds']:.1f} s")
    if "browser" in which:
        print("browser ... ", end="", flush=True)
        results.append(_run_browser(out, args.seed + 2))
        print(f"{results[-1]['seconds']:.1f} s")
    print()
    ok = print_table(results)
    if draws is not None:
        trace_plot(draws, results, out / "eight_schools.png")
        print(f"\ntrace plot: {os.path.relpath(out / 'eight_schools.png')}")
    print("summaries: " + ", ".join(os.path.relpath(p) for p in sorted(out.glob("*.json"))))
    if not ok:
        raise SystemExit("showcase: the front doors disagree beyond Monte Carlo error")
    print("\nall front doors agree within Monte Carlo error")


if __name__ == "__main__":
    main()
