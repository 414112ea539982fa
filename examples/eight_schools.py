"""Eight schools (non-centred) from Python: the model every front door runs in `make demo`.

    .venv/bin/python examples/eight_schools.py [--seed 42] [--chains 4] [--warmup 1000]
        [--samples 1000] [--out summary.json]

Prints the posterior summary; with ``--out`` also writes it as JSON
(``{"language", "seconds", "chains", "draws", "divergences", "posterior": {name: row}}``), the
format `examples/showcase.py` reads from all three languages.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

import tensorbridge as tb

Y = [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0]
SIGMA = [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0]


def eight_schools() -> Any:
    """The greta-style model: returns ``tb.model(mu, tau, theta)``."""
    y = tb.as_data(Y)
    sigma = tb.as_data(SIGMA)
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, math.inf))  # half-Cauchy
    eta = tb.normal(0.0, 1.0, dim=8)
    theta = mu + tau * eta
    tb.distribution(y, tb.normal(theta, sigma))
    return tb.model(mu, tau, theta)


def run(seed: int = 42, chains: int = 4, warmup: int = 1000, samples: int = 1000,
        progress: bool | None = None) -> tuple[Any, dict[str, Any]]:
    t0 = time.perf_counter()
    draws = tb.mcmc(eight_schools(), n_samples=samples, warmup=warmup, chains=chains, seed=seed,
                    progress=progress)
    seconds = time.perf_counter() - t0
    summary = draws.summary()
    rows = {name: {k: row[k] for k in ("mean", "sd", "q5", "q95", "rhat", "ess_bulk")}
            for name, row in summary.to_dict().items() if not name.startswith("eta")}
    return draws, {"language": "Python", "seconds": seconds, "chains": chains,
                   "draws": samples, "divergences": summary.divergences, "posterior": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--out", help="write the summary as JSON here")
    args = ap.parse_args()
    draws, result = run(args.seed, args.chains, args.warmup, args.samples)
    print(draws.summary())
    print(f"{result['seconds']:.1f} s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
