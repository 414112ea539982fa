"""tensorbridge's NUTS against stan-dev/posteriordb's reference posteriors: every posterior of
tests/ppl/posteriordb_models.py (the CI set of `make test` and the larger set), one row each
with PASS/MISS under issue 11's rule and the seconds the run took, for the compiled sampler
(``mcmc``'s default) with the NumPy sampler's seconds beside it, and one row for the total
(issue 14: the compiled total at most 1/5 of the NumPy one, every posterior passing).

    bench/.venv/bin/python bench/posteriordb_bench.py          # every posterior
    bench/.venv/bin/python bench/run.py posteriordb_bench      # through the bench runner
    BENCH_QUICK=1 ...                                          # the CI set only

Each posterior: its model built from the fixture's data (tests/fixtures/posteriordb, from
posteriordb's reference draws of long Stan runs), tb.mcmc with 4 chains x (1000 warmup + 1000
draws), a fixed seed, in this process one after another; the time is one run's wall clock
(building and compiling the model included; the C cache starts empty, so every compiled run
pays its compile). Rule, per parameter: |mean - ref mean| <= 0.1 ref
sd + 4 MCSE (sd / sqrt(bulk ESS)), sd / ref sd in [0.85, 1.15], R-hat <= 1.01; the row PASSes
when every parameter does. A posterior listed in KNOWN_ISSUES reports its exception as its row.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
RESULTS = BENCH_DIR / "results"


def _models() -> Any:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.ppl import posteriordb_models

    return posteriordb_models


def _row(P: Any, posterior: str, backend: str) -> dict[str, Any]:
    settings = (f"{P.CHAINS} chains x ({P.WARMUP} warmup + {P.DRAWS} draws), seed {P.SEED}, "
                f"backend={backend}")
    name = f"posteriordb {posterior}"
    row: dict[str, Any] = {"name": name, "peer": "", "peer_us": None, "ratio": None,
                           "target": "posteriordb rule", "timing": "one run, wall clock"}
    t0 = time.perf_counter()
    try:
        draws, fx = P.run(posterior, backend=backend)
    except Exception as e:  # a known issue raises: report it as this posterior's result
        seconds = time.perf_counter() - t0
        known = P.KNOWN_ISSUES.get(posterior)
        row.update(value_us=seconds * 1e6, passed=False,
                   notes=[f"{type(e).__name__}: {e}", settings],
                   details={"seconds": seconds, "exception": f"{type(e).__name__}: {e}",
                            "known_issue": known[1] if known else None})
        if not known or not isinstance(e, known[0]):
            row["error"] = f"{type(e).__name__}: {e}"
        return row
    seconds = time.perf_counter() - t0
    checks = P.check(draws.summary(), fx["reference"]["posterior"],
                     columns=dict(draws.scalar_columns()),
                     infinite_variance=P.INFINITE_VARIANCE.get(posterior, ()))
    failed = P.describe_failures(checks)
    row.update(value_us=seconds * 1e6, passed=not failed,
               notes=[settings, f"{draws.divergences} divergent transitions after warmup"]
               + ([f"failed: {failed}"] if failed else []),
               details={"seconds": seconds, "divergences": draws.divergences,
                        "parameters": checks})
    return row


def main() -> list[dict[str, Any]]:
    P = _models()
    quick = os.environ.get("BENCH_QUICK", "") not in ("", "0")
    names = [n for n, (_, ci) in P.MODELS.items() if ci or not quick]
    os.environ["TENSORBRIDGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tb-cache-")  # cold C
    rows = []
    for posterior in names:
        row = _row(P, posterior, "compiled")
        slow = _row(P, posterior, "numpy")
        row.update(peer="NumPy sampler (backend='numpy')", peer_us=slow["value_us"],
                   ratio=row["value_us"] / slow["value_us"])
        row.setdefault("details", {})["numpy"] = {
            "seconds": slow["value_us"] / 1e6, "passed": slow["passed"]}
        rows.append(row)
        print(f"[posteriordb] {row['name']}: {row['value_us'] / 1e6:.1f} s compiled, "
              f"{slow['value_us'] / 1e6:.1f} s NumPy, "
              f"{'pass' if row['passed'] else 'FAIL'}", file=sys.stderr, flush=True)
    total = sum(r["value_us"] for r in rows)
    total_numpy = sum(r["peer_us"] for r in rows)
    ratio = total / total_numpy
    rows.append({"name": f"posteriordb total ({len(names)} posteriors), compiled sampler",
                 "value_us": total, "peer": "NumPy sampler (backend='numpy')",
                 "peer_us": total_numpy, "ratio": ratio,
                 "target": "ratio <= 0.20 and every posterior PASS",
                 "passed": ratio <= 0.2 and all(r["passed"] for r in rows),
                 "timing": "sum of one run each, wall clock, compile included"})
    _write_section(P, rows)
    return rows


def _write_section(P: Any, rows: list[dict[str, Any]]) -> None:
    lines = ["Posteriors from stan-dev/posteriordb (commit 28f8d3d; data and reference mean/sd "
             "in tests/fixtures/posteriordb). Rule per parameter: |mean - ref mean| <= "
             f"{P.MEAN_SD_FRACTION} ref sd + {P.MEAN_MCSE:g} MCSE, sd ratio in "
             f"[{P.SD_RATIO[0]}, {P.SD_RATIO[1]}], R-hat <= {P.RHAT_MAX}.", "",
             "| posterior | seconds (compiled) | seconds (NumPy) | result | worst parameter |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        params = r.get("details", {}).get("parameters") or []
        if params:
            worst = max(params, key=lambda p: max(p["mean_err"] / p["mean_limit"],
                                                  abs(p["sd_ratio"] - 1) / 0.15,
                                                  (p["rhat"] - 1) / (P.RHAT_MAX - 1)))
            text = (f"{worst['parameter']}: mean err {worst['mean_err']:.3g} / limit "
                    f"{worst['mean_limit']:.3g}, sd ratio {worst['sd_ratio']:.3f}, "
                    f"R-hat {worst['rhat']:.4f}")
        else:
            text = "; ".join(r.get("notes", [])[:1])
        result = "PASS" if r["passed"] else "MISS"
        numpy_s = "" if r.get("peer_us") is None else f"{r['peer_us'] / 1e6:.1f}"
        lines.append(f"| {r['name'].removeprefix('posteriordb ')} | "
                     f"{r['value_us'] / 1e6:.1f} | {numpy_s} | {result} | "
                     f"{text.replace('|', '/')} |")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "posteriordb_bench.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    for r in main():
        print(f"{r['name']}: {r['value_us'] / 1e6:.1f} s {'PASS' if r['passed'] else 'MISS'}"
              + ("" if r["passed"] else f"  ({'; '.join(r.get('notes', []))})"))
