"""Inference side by side: tensorbridge's NUTS against NumPyro, PyMC and TFP on two models.

    bench/.venv-ppl/bin/python bench/ppl_bench.py            # full run, prints the table
    bench/.venv-ppl/bin/python bench/ppl_bench.py --quick    # smoke run (short chains)
    bench/.venv/bin/python bench/run.py ppl_bench            # through the bench runner

Models (the same for every framework): eight schools, non-centred (mu ~ N(0, 5),
tau ~ HalfCauchy(5), eta ~ N(0, 1) x 8, y ~ N(mu + tau eta, sigma)), and Bayesian logistic
regression (N = 5000, D = 20, data from seed 42; alpha ~ N(0, 5), beta ~ N(0, 1) x 20).
Each framework runs 4 chains of 1000 warmup + 1000 draws of NUTS with its own adaptation of
step size and (diagonal) mass matrix: tensorbridge's and PyMC's Stan-style windows, NumPyro's
NUTS defaults, TFP's ``tfp.experimental.mcmc.windowed_adaptive_nuts`` (dual averaging plus a
diagonal mass matrix estimated in expanding windows).

Variants (each its own row): tensorbridge with its default ``backend="auto"`` (the compiled
sampler: the model lowered to C and NUTS in C, one thread per chain) and with
``backend="numpy"`` (the NumPy sampler in lockstep, the path without a C compiler); NumPyro
with ``chain_method="vectorized"`` and ``"parallel"`` (one XLA host device per chain,
``--xla_force_host_platform_device_count``); PyMC with ``cores=1`` and with every core
(``min(chains, CPUs)``); TFP.

Metric: the minimum bulk ESS over every scalar parameter divided by the wall time of the whole
call, model building and compilation included. ESS is computed for every framework with the
same function (tensorbridge's ``ess_bulk``; ArviZ's is cross-checked on one run). Every variant
runs with ``--seeds`` seeds (default 3, ``BENCH_SEEDS``); reported: the median over seeds, with
the minimum and maximum. Seeds are the outer loop and the variants' order rotates from one seed
to the next, so a busy spell on the machine does not fall on one framework alone. The
first-call cost ("compile") is measured apart, once per variant and model, as the wall time of
a 10 + 10 run in a fresh process; "sampling" is the median full run's wall time minus it.
tensorbridge's C modules are cached on disk once compiled; every tensorbridge run here starts
from an empty cache (``TENSORBRIDGE_CACHE_DIR`` a fresh folder), so its compile is always
paid, as JAX's and TF's are.

Every run is its own fresh process (so no framework's imports, threads or caches touch another's
timings); each may use every core, except that processes running chains side by side (PyMC
with cores > 1, tensorbridge with n_cores) get one BLAS thread each. NumPyro and TFP use
float32 (their defaults), tensorbridge and PyMC float64. "CPU s" is the CPU time of the run's
process tree. PyMC's compiled C modules are cached on disk (PyTensor's compiledir) from
earlier runs, as on a user's machine after the first run; JAX and TF keep no persistent cache
here and compile in every process.

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
OURS = "tensorbridge"
TITLES = {"eight_schools": "eight schools", "logistic": "logistic regression"}

# tensorbridge / peer ESS per second, compile included; the issues' targets (issue 14 for
# NumPyro: the best of its chain methods), judged on the default (compiled) row
TARGETS = {
    ("eight_schools", "numpyro"): 2.0, ("eight_schools", "pymc"): 1.0,
    ("eight_schools", "tfp"): 1.0, ("logistic", "numpyro"): 1.2,
    ("logistic", "pymc"): 1.0, ("logistic", "tfp"): 1.0,
}
# the same for sampling only (compile subtracted): issue 14's second targets
SAMPLING_TARGETS = {("eight_schools", "numpyro"): 1.0, ("logistic", "numpyro"): 0.7}

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
                     n_cores: int | None = None, backend: str = "auto"
                     ) -> dict[str, np.ndarray]:
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
                backend=backend, **kw)
    return {k: np.asarray(d[k]) for k in d.names}


def run_numpyro(model: str, warmup: int, draws: int, seed: int,
                chain_method: str = "vectorized") -> dict[str, np.ndarray]:
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    if chain_method == "parallel" and jax.local_device_count() < CHAINS:
        raise RuntimeError(f"chain_method='parallel' needs {CHAINS} XLA devices, got "
                           f"{jax.local_device_count()} (XLA_FLAGS is set too late?)")
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
                chain_method=chain_method, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed))
    return {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}


def run_pymc(model: str, warmup: int, draws: int, seed: int, cores: int = 1
             ) -> dict[str, np.ndarray]:
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
        idata = pm.sample(draws=draws, tune=warmup, chains=CHAINS, cores=cores,
                          random_seed=seed, progressbar=False,
                          compute_convergence_checks=False)
    return {k: np.asarray(idata.posterior[k].values) for k in names}


def run_tfp(model: str, warmup: int, draws: int, seed: int) -> dict[str, np.ndarray]:
    """TFP's windowed adaptive NUTS: dual-averaging step size and a diagonal mass matrix from
    expanding windows (``tfp.experimental.mcmc.windowed_adaptive_nuts``), compiled with XLA."""
    import tensorflow as tf
    import tensorflow_probability as tfp

    tfd = tfp.distributions
    f32 = np.float32
    if model == "eight_schools":
        sigma = tf.constant(SIGMA8, tf.float32)
        jd = tfd.JointDistributionNamed(dict(
            mu=tfd.Normal(f32(0), f32(5)),
            tau=tfd.HalfCauchy(f32(0), f32(5)),
            eta=tfd.Sample(tfd.Normal(f32(0), f32(1)), 8),
            y=lambda mu, tau, eta: tfd.Independent(
                tfd.Normal(mu[..., None] + tau[..., None] * eta, sigma), 1),
        ))
        pins = {"y": tf.constant(Y8, tf.float32)}
        names = ["mu", "tau", "eta"]
    else:
        xv, yv = logistic_data()
        x = tf.constant(xv, tf.float32)
        jd = tfd.JointDistributionNamed(dict(
            alpha=tfd.Normal(f32(0), f32(5)),
            beta=tfd.Sample(tfd.Normal(f32(0), f32(1)), xv.shape[1]),
            y=lambda alpha, beta: tfd.Independent(
                tfd.Bernoulli(logits=alpha[..., None] + tf.linalg.matvec(x, beta)), 1),
        ))
        pins = {"y": tf.constant(yv, tf.float32)}
        names = ["alpha", "beta"]

    @tf.function(jit_compile=True, autograph=False)
    def sample() -> Any:
        return tfp.experimental.mcmc.windowed_adaptive_nuts(
            draws, jd, n_chains=CHAINS, num_adaptation_steps=warmup, trace_fn=None,
            seed=tf.constant([seed, 0], tf.int32), **pins)

    states = sample()
    # (draws, chains, ...) -> (chains, draws, ...)
    return {k: np.swapaxes(np.asarray(states[k]), 0, 1) for k in names}


RUNNERS = {"tensorbridge": run_tensorbridge, "numpyro": run_numpyro, "pymc": run_pymc,
           "tfp": run_tfp}


def _options(variant: str) -> tuple[str, dict[str, Any]]:
    """'pymc/cores=2' -> ('pymc', {'cores': 2}); 'numpyro/parallel' -> chain_method."""
    name, _, opt = variant.partition("/")
    if not opt:
        return name, {}
    if name == "numpyro":
        return name, {"chain_method": opt}
    if name == "tfp":
        return name, {}  # "tfp/windowed": a label only
    if "," in opt:  # several options: "tensorbridge/backend=numpy,n_cores=2"
        return name, {k: v for part in opt.split(",") for k, v in _options(f"{name}/{part}")[1]
                      .items()}
    key, _, val = opt.partition("=")
    return name, {key: int(val) if val.isdigit() else val}


def _child(variant: str, model: str, warmup: int, draws: int, seed: int, out: str) -> None:
    """In a fresh process: import the framework, then time one full call."""
    name, kw = _options(variant)
    runner = RUNNERS[name]
    if name == "tensorbridge":
        import tensorbridge  # noqa: F401 - imports are not part of the timed call
    elif name == "numpyro":
        import numpyro  # noqa: F401
    elif name == "pymc":
        import pymc  # noqa: F401
    else:
        import tensorflow_probability  # noqa: F401
    t0 = time.perf_counter()
    result = runner(model, warmup, draws, seed, **kw)
    wall = time.perf_counter() - t0
    np.savez(out, **result)
    Path(out + ".json").write_text(json.dumps({"wall_s": wall}))


def _side_by_side(variant: str) -> bool:
    """Does the variant run chains in several processes (then: one BLAS thread each)?"""
    name, kw = _options(variant)
    return (name == "pymc" and kw.get("cores", 1) > 1) or bool(kw.get("n_cores"))


def _spawn(variant: str, model: str, warmup: int, draws: int, seed: int,
           timeout: float) -> tuple[dict[str, np.ndarray] | None, float | None, str | None]:
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    cold = tempfile.TemporaryDirectory(prefix="tb-cache-")  # ours: C compiled in every run
    env["TENSORBRIDGE_CACHE_DIR"] = cold.name
    env["PYTHONWARNINGS"] = "ignore"
    threads = "1" if _side_by_side(variant) else str(os.cpu_count() or 1)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = threads
    if variant == "numpyro/parallel":  # one XLA host device per chain, set before jax imports
        flags = env.get("XLA_FLAGS", "")
        env["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={CHAINS}".strip()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "draws.npz")
        cmd = [sys.executable, __file__, "--child", variant, model, str(warmup), str(draws),
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
    cold.cleanup()
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


def _all_cores() -> int:
    return min(CHAINS, os.cpu_count() or 1)


def variants() -> list[str]:
    """Every configuration measured: ours (lockstep, n_cores) and each peer's chain modes."""
    import tensorbridge as tb

    n = _all_cores()
    out = [OURS]
    if "backend" in inspect.signature(tb.mcmc).parameters:
        # the NumPy sampler in lockstep (its n_cores row is in earlier results: same draws,
        # worker processes; dropped to keep the run short)
        out.append(f"{OURS}/backend=numpy")
    elif n > 1 and "n_cores" in inspect.signature(tb.mcmc).parameters:
        out.append(f"{OURS}/n_cores={n}")
    out += ["numpyro/vectorized", "numpyro/parallel", "pymc/cores=1"]
    if n > 1:
        out.append(f"pymc/cores={n}")
    return [*out, "tfp/windowed"]


def _label(variant: str) -> str:
    name, _, opt = variant.partition("/")
    if name == "numpyro" and opt:
        return f"numpyro ({opt})"
    if name == "tfp":
        return "tfp (windowed adaptive NUTS)"
    return f"{name} ({opt})" if opt else f"{name} (compiled)" if name == OURS else name


def _median(xs: list[float]) -> float:
    return float(np.median(xs))


def _summarise(per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in per_seed if r.get("ess_per_s")]
    out: dict[str, Any] = {"n_seeds": len(ok)}
    if not ok:
        return out
    for key in ("ess_per_s", "wall_s", "min_ess", "cpu_s"):
        xs = [r[key] for r in ok]
        out[key] = _median(xs)
        out[key + "_min"] = float(min(xs))
        out[key + "_max"] = float(max(xs))
    return out


def measure(quick: bool, only: list[str] | None, timeout: float,
            n_seeds: int = 3) -> dict[str, Any]:
    warmup = draws = 150 if quick else 1000
    small = 5 if quick else 10
    vs = [v for v in variants() if not only or v.partition("/")[0] in only or v in only]
    seeds = list(range(1, n_seeds + 1))
    results: dict[str, Any] = {"warmup": warmup, "draws": draws, "chains": CHAINS,
                               "cpus": os.cpu_count(), "seeds": seeds, "variants": vs,
                               "runs": {}}
    runs = results["runs"]
    for model in MODELS:
        for v in vs:
            runs[f"{model}/{v}"] = {"framework": v, "model": model, "error": None,
                                    "per_seed": [], "compile_s": None}
    # the first-call cost, once per variant and model: a tiny run in a fresh process
    for model in MODELS:
        for v in vs:
            print(f"[ppl_bench] {model}: {_label(v)} compile run ...", file=sys.stderr,
                  flush=True)
            _, first, err = _spawn(v, model, small, small, 1000, timeout)
            runs[f"{model}/{v}"]["compile_s"] = first
            runs[f"{model}/{v}"]["error"] = err
    # seeds outer, variants rotating: each seed's runs of all variants follow each other
    for k, seed in enumerate(seeds):
        order = vs[k % len(vs):] + vs[:k % len(vs)]
        for model in MODELS:
            for v in order:
                row = runs[f"{model}/{v}"]
                print(f"[ppl_bench] {model}: {_label(v)} seed {seed} ...", file=sys.stderr,
                      flush=True)
                d, wall, err = _spawn(v, model, warmup, draws, seed, timeout)
                rec: dict[str, Any] = {"seed": seed, "load_average": os.getloadavg()[0]}
                if err or d is None or wall is None:
                    rec["error"] = err
                    row["error"] = row["error"] or err
                else:
                    rec["cpu_s"] = float(d.pop("__cpu_s__"))
                    ess, worst = min_ess(d)
                    rec.update(wall_s=wall, min_ess=ess, min_ess_param=worst,
                               ess_per_s=ess / wall)
                    if v == OURS and model == "eight_schools" and "arviz_check" not in results:
                        results["arviz_check"] = _arviz_check(d)
                row["per_seed"].append(rec)
    for row in runs.values():
        row.update(_summarise(row["per_seed"]))
        first = row.get("compile_s")
        if row.get("wall_s") is not None and first is not None:
            # may come out below 0 when the tiny run's compile took longer than the whole full
            # run's (load, or a tiny run's poor adaptation): shown as "~0"
            row["sampling_s"] = row["wall_s"] - first
            if row["sampling_s"] > 0.05:
                row["sampling_ess_per_s"] = row["min_ess"] / row["sampling_s"]
    return results


# ------------------------------------------------------------------------------- reporting
def _ratio(results: dict[str, Any], model: str, peer: str, ours: str = OURS) -> float | None:
    """tensorbridge ESS/s over the peer's, both medians over seeds (above 1: ours ahead)."""
    a = results["runs"].get(f"{model}/{ours}", {})
    b = results["runs"].get(f"{model}/{peer}", {})
    if a.get("ess_per_s") and b.get("ess_per_s"):
        return a["ess_per_s"] / b["ess_per_s"]
    return None


def _sampling_ratio(results: dict[str, Any], model: str, peer: str) -> float | None:
    """The same as :func:`_ratio` with compile subtracted from both (sampling only)."""
    a = results["runs"].get(f"{model}/{OURS}", {})
    b = results["runs"].get(f"{model}/{peer}", {})
    if a.get("sampling_ess_per_s") and b.get("sampling_ess_per_s"):
        return a["sampling_ess_per_s"] / b["sampling_ess_per_s"]
    return None


def _ours(results: dict[str, Any]) -> list[str]:
    return [v for v in results["variants"] if v.partition("/")[0] == OURS]


def _peers(results: dict[str, Any]) -> list[str]:
    return [v for v in results["variants"] if v.partition("/")[0] in PEERS]


def _num(x: float | None, fmt: str = ",.0f") -> str:
    return "" if x is None else format(x, fmt)


def table_lines(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    ours = _ours(results)
    head = ["model", "framework", "ESS/s median", "ESS/s min-max", "compile s", "sampling s",
            "min ESS", "CPU s"]
    head += [f"{_label(o)}/peer" for o in ours]
    head += ["sampling only: compiled/peer", "target", "result"]
    lines = []
    for model in MODELS:
        for v in results["variants"]:
            r = results["runs"].get(f"{model}/{v}")
            if r is None:
                continue
            if not r.get("ess_per_s"):
                lines.append([TITLES[model], _label(v), "ERROR", "", "", "", "", "",
                              *[""] * len(ours), "", "", (r.get("error") or "")[:60]])
                continue
            cells = [TITLES[model], _label(v), _num(r["ess_per_s"]),
                     f"{_num(r['ess_per_s_min'])}-{_num(r['ess_per_s_max'])}",
                     _num(r.get("compile_s"), ".1f"),
                     "~0" if (r.get("sampling_s") or 0) < 0.05 and r.get("sampling_s") is not None
                     else _num(r.get("sampling_s"), ".1f"),
                     _num(r["min_ess"]), _num(r.get("cpu_s"), ".0f")]
            if v.partition("/")[0] in PEERS:
                for o in ours:
                    x = _ratio(results, model, v, ours=o)
                    cells.append("" if x is None else f"{x:.2f}x")
                fw = v.partition("/")[0]
                target = TARGETS[(model, fw)]
                ratio = _ratio(results, model, v)
                s_ratio = _sampling_ratio(results, model, v)
                s_target = SAMPLING_TARGETS.get((model, fw))
                passed = ratio is not None and ratio >= target and (
                    s_target is None or (s_ratio is not None and s_ratio >= s_target))
                cells += ["" if s_ratio is None else f"{s_ratio:.2f}x",
                          f">= {target:.2f}x" + (f"; sampling >= {s_target:.2f}x"
                                                  if s_target else ""),
                          "" if ratio is None else ("PASS" if passed else "MISS")]
            else:
                cells += [""] * (len(ours) + 3)
            if r.get("error"):
                cells[-1] = (cells[-1] + " (some seeds failed)").strip()
            lines.append(cells)
    return head, lines


def format_table(results: dict[str, Any]) -> str:
    head, lines = table_lines(results)
    widths = [max(len(h), *(len(c[i]) for c in lines)) for i, h in enumerate(head)]
    left = {0, 1, len(head) - 1}

    def fmt(c: list[str]) -> str:
        return "  ".join(x.ljust(w) if i in left else x.rjust(w)
                         for i, (x, w) in enumerate(zip(c, widths))).rstrip()

    return "\n".join([fmt(head), "  ".join("-" * w for w in widths), *map(fmt, lines)])


def header(results: dict[str, Any]) -> str:
    n = len(results["seeds"])
    return (f"NUTS, {results['chains']} chains x ({results['warmup']} warmup + "
            f"{results['draws']} draws), {n} seeds per variant, each run a fresh process; "
            f"seeds are the outer loop and the variants' order rotates per seed (runs are "
            f"sequential, not simultaneous). ESS/s = min bulk ESS (tensorbridge's ess_bulk for "
            f"all) / wall s including compile: median over seeds, and min-max; compile = "
            f"first-call cost (one 10 + 10 run in a fresh process); sampling = median wall - "
            f"compile; min ESS and CPU s: medians; X/peer = X's median ESS/s / the peer's "
            f"(above 1: tensorbridge ahead); sampling only: ESS / sampling s of the compiled row "
            f"over the peer's; targets judged on the compiled row (tensorbridge's default, "
            f"its C cache emptied before every run); "
            f"{results['cpus']} CPUs. PyMC's compiled C modules are cached on disk "
            f"(PyTensor's compiledir) from earlier runs, as on a user's machine after the first "
            f"run, so its compile is mostly that cache's lookups; JAX and TF have no "
            f"persistent cache here and compile in every process")


def markdown(results: dict[str, Any]) -> str:
    head, lines = table_lines(results)
    out = [header(results), "",
           "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(c.replace("|", "/") for c in cells) + " |" for cells in lines]
    if "arviz_check" in results:
        out += ["", f"Check: {results['arviz_check']}."]
    return "\n".join(out) + "\n"


def rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows for bench/run.py: wall time per effective draw (1 / ESS-per-second), so that the
    runner's ratio (ours / peer) reads as everywhere else: below 1, tensorbridge is faster.
    One row per (tensorbridge variant, peer variant, model)."""
    n = len(results["seeds"])
    timing = f"fresh process per run, median of {n} seeds, variants alternating"
    out = []

    def per_draw(r: dict[str, Any]) -> tuple[float | None, list[float] | None]:
        if not r.get("ess_per_s"):
            return None, None
        return 1e6 / r["ess_per_s"], [1e6 / r["ess_per_s_max"], 1e6 / r["ess_per_s_min"]]

    for model in MODELS:
        for o in _ours(results):
            ours = results["runs"].get(f"{model}/{o}", {})
            for peer in _peers(results):
                theirs = results["runs"].get(f"{model}/{peer}", {})
                target = TARGETS[(model, peer.partition("/")[0])]
                ratio = _ratio(results, model, peer, ours=o)
                v_us, v_rng = per_draw(ours)
                p_us, p_rng = per_draw(theirs)
                row: dict[str, Any] = {
                    "name": f"NUTS {TITLES[model]}: wall per effective draw, {_label(o)}",
                    "value_us": v_us, "value_range": v_rng,
                    "peer": _label(peer), "peer_us": p_us, "peer_range": p_rng,
                    "ratio": None if ratio is None else 1.0 / ratio,
                    "timing": timing,  # ESS/s, compile and CPU: the section's table
                    "details": {"ours": ours, "peer": theirs},
                }
                if o == OURS:
                    row["target"] = f"ratio <= {1 / target:.2f}"
                    row["passed"] = None if ratio is None else ratio >= target
                err = ours.get("error") or theirs.get("error")
                if err:
                    row["error"] = err
                out.append(row)
    return out


def report(results: dict[str, Any]) -> None:
    print(header(results))
    print()
    print(format_table(results))
    if "arviz_check" in results:
        print(f"\ncheck: {results['arviz_check']}")


def _write(results: dict[str, Any]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    RESULTS.with_suffix(".md").write_text(markdown(results), encoding="utf-8")


def _in_ppl_venv() -> bool:
    try:
        import jax  # noqa: F401
        import numpyro  # noqa: F401
    except ImportError:
        return False
    return True


def _n_seeds() -> int:
    return int(os.environ.get("BENCH_SEEDS", "3"))


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
    results = measure(quick, None, 900.0, max(3, _n_seeds()))  # make bench: 3 seeds at least
    _write(results)
    report(results)
    return rows(results)


def cli(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 150 + 150 iterations")
    ap.add_argument("--only", default="",
                    help="comma-separated frameworks or variants (default: all)")
    ap.add_argument("--seeds", type=int, default=_n_seeds(),
                    help="seeds per variant (default 3, or BENCH_SEEDS; make bench uses "
                         "at least 3)")
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
                      args.timeout, args.seeds)
    _write(results)
    report(results)
    if args.rows:
        Path(args.rows).write_text(json.dumps(rows(results), default=str))
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(cli())
