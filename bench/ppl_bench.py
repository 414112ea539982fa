"""Inference side by side: tensorbridge's NUTS against NumPyro, PyMC and TFP on two models.

    bench/.venv-ppl/bin/python bench/ppl_bench.py            # full run, prints the table
    bench/.venv-ppl/bin/python bench/ppl_bench.py --quick    # smoke run (short chains)
    bench/.venv/bin/python bench/run.py ppl_bench            # through the bench runner

Models (the same for every framework): eight schools, non-centred (mu ~ N(0, 5),
tau ~ HalfCauchy(5), eta ~ N(0, 1) x 8, y ~ N(mu + tau eta, sigma)), and Bayesian logistic
regression (N = 5000, D = 20, data from seed 42; alpha ~ N(0, 5), beta ~ N(0, 1) x 20).
Each framework runs 4 chains of 1000 warmup + 1000 draws of NUTS with its own adaptation.

Metric: the minimum bulk ESS over every scalar parameter divided by the wall time of the whole
call, model building and compilation included. ESS is computed for every framework with the
same function (tensorbridge's ``ess_bulk``; ArviZ's is cross-checked on one run). The
first-call cost ("compile") is measured apart, as the wall time of a 10 + 10 run in a fresh
process; "sampling" is the full run's wall time minus it.

Every run is its own fresh process (so no framework's imports, threads or caches touch another's
timings); each may use every core (PyMC runs chains in processes, the others in one process
batched or vectorised), except that processes running chains side by side get one BLAS thread
each. NumPyro and TFP use float32 (their defaults), tensorbridge and PyMC float64. PyMC runs
with ``cores=2`` on two CPUs (``PPL_BENCH_PYMC_CORES`` overrides): measured here on a busy
machine, cores=1 and cores=2 gave 486 and 368 ESS/s on eight schools and 52 and 50 on the
logistic regression (the same draws: PyMC seeds chains apart from cores); on an idle machine
two processes do the logistic's sampling in about half the time, so cores=2 is the default.
tensorbridge runs in lockstep in one process and, as a variant, with ``n_cores`` worker
processes (the same draws, so the same ESS). "CPU s" is the CPU time of the run's process tree.

The peers need NumPy >= 2 (jax 0.10), while bench/.venv pins NumPy < 2 for R: they live in
bench/.venv-ppl (made by ``make bench``); ``main()`` re-runs this file under it when called
from another interpreter.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
PPL_PYTHON = BENCH_DIR / ".venv-ppl" / "bin" / "python"
RESULTS = BENCH_DIR / "results" / "ppl_bench.json"
CHAINS = 4
MODELS = ("eight_schools", "logistic")
PEERS = ("numpyro", "pymc", "tfp")
TITLES = {"eight_schools": "eight schools", "logistic": "logistic regression"}

# tensorbridge / peer ESS per second; the targets
TARGETS = {
    ("eight_schools", "numpyro"): 1.0, ("eight_schools", "pymc"): 1.0,
    ("eight_schools", "tfp"): 1.0, ("logistic", "numpyro"): 1 / 1.5,
    ("logistic", "pymc"): 1.0, ("logistic", "tfp"): 1.0,
}

Y8 = [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0]
SIGMA8 = [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0]


def logistic_data(n: int = 5000, d: int = 20, seed: int = 42) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    beta = rng.normal(size=d)
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(x @ beta)))).astype(np.float64)
    return x, y


# ------------------------------------------------------------------------ one run per framework
def run_tensorbridge(model: str, warmup: int, draws: int, seed: int,
                     n_cores: int | None = None) -> dict[str, np.ndarray]:
    import tensorbridge as tb

    if model == "eight_schools":
        y, sigma = tb.as_data(Y8), tb.as_data(SIGMA8)
        mu = tb.normal(0.0, 5.0)
        tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
        eta = tb.normal(0.0, 1.0, dim=8)
        tb.distribution(y, tb.normal(mu + tau * eta, sigma))
        m = tb.model(mu=mu, tau=tau, eta=eta)
    else:
        xv, yv = logistic_data()
        alpha = tb.normal(0.0, 5.0)
        beta = tb.normal(0.0, 1.0, dim=xv.shape[1])
        tb.distribution(tb.as_data(yv), tb.bernoulli(tb.sigmoid(alpha + tb.as_data(xv) @ beta)))
        m = tb.model(alpha=alpha, beta=beta)
    kw = {"n_cores": n_cores} if n_cores else {}
    d = tb.mcmc(m, n_samples=draws, warmup=warmup, chains=CHAINS, seed=seed, progress=False,
                **kw)
    return {k: np.asarray(d[k]) for k in d.names}


def run_numpyro(model: str, warmup: int, draws: int, seed: int) -> dict[str, np.ndarray]:
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    if model == "eight_schools":
        y, sigma = np.array(Y8), np.array(SIGMA8)

        def fn() -> None:
            mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
            tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
            with numpyro.plate("J", 8):
                eta = numpyro.sample("eta", dist.Normal(0.0, 1.0))
                numpyro.sample("y", dist.Normal(mu + tau * eta, sigma), obs=y)
    else:
        xv, yv = logistic_data()

        def fn() -> None:
            alpha = numpyro.sample("alpha", dist.Normal(0.0, 5.0))
            beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([xv.shape[1]]))
            numpyro.sample("y", dist.Bernoulli(logits=alpha + xv @ beta), obs=yv)

    mcmc = MCMC(NUTS(fn), num_warmup=warmup, num_samples=draws, num_chains=CHAINS,
                chain_method="vectorized", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed))
    return {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}


def run_pymc(model: str, warmup: int, draws: int, seed: int) -> dict[str, np.ndarray]:
    import logging

    import pymc as pm

    logging.getLogger("pymc").setLevel(logging.ERROR)
    names = ["mu", "tau", "eta"] if model == "eight_schools" else ["alpha", "beta"]
    with pm.Model():
        if model == "eight_schools":
            mu = pm.Normal("mu", 0.0, 5.0)
            tau = pm.HalfCauchy("tau", 5.0)
            eta = pm.Normal("eta", 0.0, 1.0, shape=8)
            pm.Normal("y", mu + tau * eta, np.array(SIGMA8), observed=np.array(Y8))
        else:
            xv, yv = logistic_data()
            alpha = pm.Normal("alpha", 0.0, 5.0)
            beta = pm.Normal("beta", 0.0, 1.0, shape=xv.shape[1])
            pm.Bernoulli("y", logit_p=alpha + pm.math.dot(xv, beta), observed=yv)
        idata = pm.sample(draws=draws, tune=warmup, chains=CHAINS, cores=_pymc_cores(),
                          random_seed=seed, progressbar=False,
                          compute_convergence_checks=False)
    return {k: np.asarray(idata.posterior[k].values) for k in names}


def _pymc_cores() -> int:
    return int(os.environ.get("PPL_BENCH_PYMC_CORES", min(CHAINS, os.cpu_count() or 1)))


def run_tfp(model: str, warmup: int, draws: int, seed: int) -> dict[str, np.ndarray]:
    import tensorflow as tf
    import tensorflow_probability as tfp

    tfd, tfb = tfp.distributions, tfp.bijectors
    rng = np.random.default_rng(seed)
    f32 = np.float32
    if model == "eight_schools":
        y, sigma = tf.constant(Y8, tf.float32), tf.constant(SIGMA8, tf.float32)
        names = ["mu", "tau", "eta"]

        def log_prob(mu: Any, tau: Any, eta: Any) -> Any:
            theta = mu[:, None] + tau[:, None] * eta
            return (tfd.Normal(f32(0), f32(5)).log_prob(mu)
                    + tfd.HalfCauchy(f32(0), f32(5)).log_prob(tau)
                    + tf.reduce_sum(tfd.Normal(f32(0), f32(1)).log_prob(eta), -1)
                    + tf.reduce_sum(tfd.Normal(theta, sigma).log_prob(y), -1))

        bijectors = [tfb.Identity(), tfb.Exp(), tfb.Identity()]
        free = [rng.uniform(-2, 2, CHAINS), rng.uniform(-2, 2, CHAINS),
                rng.uniform(-2, 2, (CHAINS, 8))]
    else:
        xv, yv = logistic_data()
        x, yy = tf.constant(xv, tf.float32), tf.constant(yv, tf.float32)
        names = ["alpha", "beta"]

        def log_prob(alpha: Any, beta: Any) -> Any:
            logits = alpha[:, None] + tf.linalg.matmul(beta, x, transpose_b=True)
            return (tfd.Normal(f32(0), f32(5)).log_prob(alpha)
                    + tf.reduce_sum(tfd.Normal(f32(0), f32(1)).log_prob(beta), -1)
                    + tf.reduce_sum(tfd.Bernoulli(logits=logits).log_prob(yy), -1))

        bijectors = [tfb.Identity(), tfb.Identity()]
        free = [rng.uniform(-2, 2, CHAINS), rng.uniform(-2, 2, (CHAINS, xv.shape[1]))]

    init = [b.forward(tf.constant(f, tf.float32)) for b, f in zip(bijectors, free)]
    kernel = tfp.mcmc.DualAveragingStepSizeAdaptation(
        tfp.mcmc.TransformedTransitionKernel(
            tfp.mcmc.NoUTurnSampler(log_prob, step_size=f32(0.1)), bijector=bijectors),
        num_adaptation_steps=int(0.8 * warmup), target_accept_prob=f32(0.8))

    @tf.function(jit_compile=True)
    def sample() -> Any:
        return tfp.mcmc.sample_chain(num_results=draws, num_burnin_steps=warmup,
                                     current_state=init, kernel=kernel, trace_fn=None,
                                     seed=tf.constant([seed, 0], tf.int32))

    states = sample()
    # (draws, chains, ...) -> (chains, draws, ...)
    return {k: np.swapaxes(np.asarray(s), 0, 1) for k, s in zip(names, states)}


RUNNERS = {"tensorbridge": run_tensorbridge, "numpyro": run_numpyro, "pymc": run_pymc,
           "tfp": run_tfp}


def _child(framework: str, model: str, warmup: int, draws: int, seed: int, out: str) -> None:
    """In a fresh process: import the framework, then time one full call."""
    name, _, cores = framework.partition("@")
    runner = RUNNERS[name]
    if name == "tensorbridge":
        import tensorbridge  # noqa: F401 - imports are not part of the timed call
    elif name == "numpyro":
        import numpyro  # noqa: F401
    elif name == "pymc":
        import pymc  # noqa: F401
    else:
        import tensorflow_probability  # noqa: F401
    kw = {"n_cores": int(cores)} if cores else {}
    t0 = time.perf_counter()
    result = runner(model, warmup, draws, seed, **kw)
    wall = time.perf_counter() - t0
    np.savez(out, **result)
    Path(out + ".json").write_text(json.dumps({"wall_s": wall}))


def _spawn(framework: str, model: str, warmup: int, draws: int, seed: int,
           timeout: float) -> tuple[dict[str, np.ndarray] | None, float | None, str | None]:
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONWARNINGS"] = "ignore"
    threads = str(os.cpu_count() or 1)
    # chains side by side in processes: one BLAS thread each, or they oversubscribe the cores
    if (framework.startswith("pymc") and _pymc_cores() > 1) or "@" in framework:
        threads = "1"
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = threads
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "draws.npz")
        cmd = [sys.executable, __file__, "--child", framework, model, str(warmup), str(draws),
               str(seed), out]
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, None, f"timed out after {timeout:.0f} s"
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        if proc.returncode != 0 or not os.path.exists(out):
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-6:]
            return None, None, f"exit {proc.returncode}: " + " | ".join(tail)
        with np.load(out) as z:
            draws_ = {k: z[k] for k in z.files}
        wall = json.loads(Path(out + ".json").read_text())["wall_s"]
    draws_["__cpu_s__"] = np.array(cpu)  # the whole process's CPU time, imports included
    return draws_, wall, None


def _columns(draws: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
    cols = []
    for k, v in sorted(draws.items()):
        v = np.asarray(v, dtype=np.float64)
        flat = v.reshape(v.shape[0], v.shape[1], -1)
        for j in range(flat.shape[2]):
            cols.append((f"{k}[{j}]" if v.ndim > 2 else k, flat[:, :, j]))
    return cols


def min_ess(draws: dict[str, np.ndarray]) -> tuple[float, str]:
    from tensorbridge.runtime.ppl.diagnostics import ess_bulk

    return min((ess_bulk(x), label) for label, x in _columns(draws))


def _arviz_check(draws: dict[str, np.ndarray]) -> str:
    """Largest relative difference between ArviZ's bulk ESS and ours over the parameters."""
    try:
        import arviz as az
    except ImportError:
        return "arviz not installed"
    from tensorbridge.runtime.ppl.diagnostics import ess_bulk

    worst = 0.0
    for _, x in _columns(draws):
        theirs = float(az.ess(x, method="bulk"))
        worst = max(worst, abs(theirs - ess_bulk(x)) / theirs)
    return f"arviz bulk ESS agrees with ours within {100 * worst:.2g}% (every parameter)"


def frameworks() -> list[str]:
    import tensorbridge as tb

    out = ["tensorbridge"]
    cores = os.cpu_count() or 1
    if cores > 1 and "n_cores" in inspect.signature(tb.mcmc).parameters:
        out.append(f"tensorbridge@{min(cores, CHAINS)}")
    return out + list(PEERS)


def _label(fw: str) -> str:
    name, _, cores = fw.partition("@")
    return f"{name} (n_cores={cores})" if cores else name


def measure(quick: bool, only: list[str] | None, timeout: float) -> dict[str, Any]:
    warmup = draws = 150 if quick else 1000
    small = 5 if quick else 10
    fws = [f for f in frameworks() if not only or f.partition("@")[0] in only]
    results: dict[str, Any] = {"warmup": warmup, "draws": draws, "chains": CHAINS,
                               "cpus": os.cpu_count(), "pymc_cores": _pymc_cores(),
                               "runs": {}}
    for model in MODELS:
        for fw in fws:
            print(f"[ppl_bench] {model}: {_label(fw)} ...", file=sys.stderr, flush=True)
            d, wall, err = _spawn(fw, model, warmup, draws, 1, timeout)
            _, first, err2 = (None, None, None) if err else _spawn(fw, model, small, small, 2,
                                                                 timeout)
            row: dict[str, Any] = {"framework": fw, "model": model, "error": err or err2,
                                   "load_average": os.getloadavg()[0]}
            if d is not None and wall is not None:
                row["cpu_s"] = float(d.pop("__cpu_s__"))
                ess, worst = min_ess(d)
                row.update(wall_s=wall, min_ess=ess, min_ess_param=worst,
                           ess_per_s=ess / wall, compile_s=first,
                           sampling_s=None if first is None else max(wall - first, 0.0))
                if fw == "tensorbridge" and model == "eight_schools":
                    results["arviz_check"] = _arviz_check(d)
            results["runs"][f"{model}/{fw}"] = row
    return results


# ------------------------------------------------------------------------------- reporting
def _ratio(results: dict[str, Any], model: str, peer: str, ours: str = "tensorbridge"
           ) -> float | None:
    a = results["runs"].get(f"{model}/{ours}", {})
    b = results["runs"].get(f"{model}/{peer}", {})
    if a.get("ess_per_s") and b.get("ess_per_s"):
        return a["ess_per_s"] / b["ess_per_s"]
    return None


def format_table(results: dict[str, Any]) -> str:
    head = ["model", "framework", "ESS/s", "compile s", "sampling s", "min ESS", "CPU s",
            "tb/peer", "target", "result"]
    multi = sorted({r["framework"] for r in results["runs"].values()
                    if r["framework"].startswith("tensorbridge@")})
    head += [f"tb n_cores={m.partition('@')[2]}/peer" for m in multi]
    lines = []
    for model in MODELS:
        for r in results["runs"].values():
            if r["model"] != model:
                continue
            fw = r["framework"]
            if r.get("error"):
                lines.append([TITLES[model], _label(fw), "ERROR", "", "", "", "", "", "",
                              r["error"][:60], *[""] * len(multi)])
                continue
            cells = [TITLES[model], _label(fw), f"{r['ess_per_s']:,.0f}",
                     "" if r["compile_s"] is None else f"{r['compile_s']:.1f}",
                     "" if r["sampling_s"] is None else f"{r['sampling_s']:.1f}",
                     f"{r['min_ess']:,.0f}", f"{r.get('cpu_s', float('nan')):.0f}"]
            if fw in PEERS:
                ratio = _ratio(results, model, fw)
                target = TARGETS[(model, fw)]
                cells += ["" if ratio is None else f"{ratio:.2f}x", f">= {target:.2f}x",
                          "" if ratio is None else ("PASS" if ratio >= target else "MISS")]
                for mfw in multi:
                    x = _ratio(results, model, fw, ours=mfw)
                    cells.append("" if x is None else f"{x:.2f}x")
            else:
                cells += [""] * (3 + len(multi))
            lines.append(cells)
    widths = [max(len(h), *(len(c[i]) for c in lines)) for i, h in enumerate(head)]

    def fmt(c: list[str]) -> str:
        return "  ".join(x.rjust(w) if 2 <= i <= 7 or i > 9 else x.ljust(w)
                         for i, (x, w) in enumerate(zip(c, widths))).rstrip()

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *map(fmt, lines)])


def rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows for bench/run.py: wall time per effective draw (1 / ESS-per-second), so that the
    runner's ratio (ours / peer) reads as everywhere else: below 1, tensorbridge is faster."""
    out = []
    for model in MODELS:
        ours = results["runs"].get(f"{model}/tensorbridge", {})
        for peer in PEERS:
            theirs = results["runs"].get(f"{model}/{peer}", {})
            if not theirs:
                continue
            target = TARGETS[(model, peer)]
            ratio = _ratio(results, model, peer)
            row: dict[str, Any] = {
                "name": f"NUTS {TITLES[model]}: wall per effective draw",
                "value_us": 1e6 / ours["ess_per_s"] if ours.get("ess_per_s") else None,
                "peer": peer,
                "peer_us": 1e6 / theirs["ess_per_s"] if theirs.get("ess_per_s") else None,
                "ratio": None if ratio is None else 1.0 / ratio,
                "target": f"ratio <= {1 / target:.2f}",
                "passed": None if ratio is None else ratio >= target,
                "notes": [f"ESS/s tensorbridge {ours.get('ess_per_s', 0):,.0f} vs {peer} "
                          f"{theirs.get('ess_per_s', 0):,.0f}; compile s "
                          f"{ours.get('compile_s') or 0:.1f} vs "
                          f"{theirs.get('compile_s') or 0:.1f}"],
                "details": {"ours": ours, "peer": theirs},
            }
            err = ours.get("error") or theirs.get("error")
            if err:
                row["error"] = err
            out.append(row)
    return out


def report(results: dict[str, Any]) -> None:
    print(f"NUTS, {results['chains']} chains x ({results['warmup']} warmup + {results['draws']} "
          f"draws); ESS/s = min bulk ESS (tensorbridge's ess_bulk for all) / wall s including "
          f"compile; compile = first-call cost (a 10 + 10 run in a fresh process); "
          f"tb/peer = tensorbridge ESS/s / peer ESS/s (above 1: tensorbridge ahead); "
          f"{results['cpus']} CPUs; PyMC cores={results['pymc_cores']}")
    print()
    print(format_table(results))
    if "arviz_check" in results:
        print(f"\ncheck: {results['arviz_check']}")


def _write(results: dict[str, Any]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")


def _in_ppl_venv() -> bool:
    try:
        import jax  # noqa: F401
        import numpyro  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> list[dict[str, Any]]:
    """Entry point for bench/run.py: runs under bench/.venv-ppl, returns the runner's rows."""
    quick = os.environ.get("BENCH_QUICK", "") not in ("", "0")
    if not _in_ppl_venv():
        if not PPL_PYTHON.exists():
            return [{"name": "NUTS side by side", "value_us": None, "peer": "numpyro",
                     "peer_us": None, "ratio": None,
                     "error": f"{PPL_PYTHON.relative_to(ROOT)} missing: run `make bench`"}]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "rows.json")
            cmd = [str(PPL_PYTHON), __file__, "--rows", out] + (["--quick"] if quick else [])
            proc = subprocess.run(cmd, text=True, capture_output=True)
            sys.stderr.write(proc.stderr[-4000:])
            print(proc.stdout)
            if proc.returncode != 0:
                raise RuntimeError(f"ppl_bench under {PPL_PYTHON} failed: {proc.stderr[-2000:]}")
            return json.loads(Path(out).read_text())
    results = measure(quick, None, 900.0)
    _write(results)
    report(results)
    return rows(results)


def cli(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 150 + 150 iterations")
    ap.add_argument("--only", default="", help="comma-separated frameworks (default: all)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    ap.add_argument("--report", action="store_true",
                    help="print the table of the last results (bench/results/ppl_bench.json)")
    ap.add_argument("--rows", metavar="OUT", help=argparse.SUPPRESS)
    ap.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        fw, model, warmup, draws, seed, out = args.child
        _child(fw, model, int(warmup), int(draws), int(seed), out)
        return 0
    if args.report:
        report(json.loads(RESULTS.read_text(encoding="utf-8")))
        return 0
    only = [s for s in args.only.split(",") if s] or None
    results = measure(args.quick or os.environ.get("BENCH_QUICK", "") not in ("", "0"), only,
                      args.timeout)
    _write(results)
    report(results)
    if args.rows:
        Path(args.rows).write_text(json.dumps(rows(results), default=str))
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(cli())
