"""Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari and Gelman 2018): does
``mcmc`` recover the posterior of a model whose data came from its own prior?

For replication ``i``: the parameters and data are drawn from the model's prior (and prior
predictive) with ``simulate``, the model is fitted to that data with ``mcmc``, the pooled draws
of all chains are thinned to ``L = thin_to`` and each parameter's rank is the number of kept
draws below its true value (0..L). If the sampler draws from the right posterior, every rank is
uniform on 0..L; a chi-square test over ``bins`` equal bins of ranks (``bins - 1`` degrees of
freedom) gives a p-value per scalar parameter, and a parameter passes when its p-value is above
``alpha / (number of scalars)`` (Bonferroni's correction, a family-wise level ``alpha``).

Replications are independent tasks on the executors of ``mcmc`` (in-process, ``n_cores``' local
pool, a Dask cluster: :func:`executors.run_tasks`). The model travels as data (its graph, pickled
by ``parallel.dumps_graph``), never as a closure, so a worker needs only tensorbridge. Replication
``i`` draws its prior simulation and its chains from seeds that depend on ``(seed, i)`` only, so
its ranks do not depend on the number of replications, on the executor or on the number of
workers (the first 100 replications of ``nsim=200`` are those of ``nsim=100``).

NumPy and the executors are imported when ``sbc`` runs: the module loads without NumPy (the JS
door's pure-Python runtime), where ``sbc`` is not offered.
"""

from __future__ import annotations

import math
import pickle
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..graph.model_compiler import Model, calculate
from ..graph.nodes import DataNode, LazyArray, _lazy, node_of
from ..graph.simulate import simulate
from ..ops.creation import tensor
from ..random import philox4x32
from .chain_rng import fresh_seed
from .diagnostics import ess_bulk
from .sampler import _compiled_density, _numpy_only, mcmc

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SBCResult", "chi2_sf", "rank_uniformity", "replication_seeds", "sbc"]

_SEED_TAG = 0x73626373  # "sbcs": the counter word of the replications' seeds
_M32 = 0xFFFFFFFF


@dataclass
class SBCResult:
    """What :func:`sbc` returns. Per scalar parameter (``names``, 0-based like ``Draws``):
    ``ranks`` and ``truth`` (one per replication), ``counts`` (ranks per bin), ``p_values``
    (chi-square test of uniform ranks) and ``passed`` (p-value above ``threshold``, which is
    ``alpha / len(names)``). Per replication: ``divergences`` (after warmup) and
    ``ess_bulk_min`` (the lowest bulk ESS of the ranked scalars before thinning; thinning to
    ``thin_to`` keeps roughly independent draws when it is at least ``thin_to``)."""

    names: list[str]
    ranks: dict[str, np.ndarray]
    truth: dict[str, np.ndarray]
    counts: dict[str, np.ndarray]
    p_values: dict[str, float]
    passed: dict[str, bool]
    threshold: float
    divergences: np.ndarray
    ess_bulk_min: np.ndarray
    nsim: int
    thin_to: int
    bins: int
    seed: int
    alpha: float
    wall_s: float = field(default=0.0)

    @property
    def all_passed(self) -> bool:
        return all(self.passed.values())

    def summary(self) -> str:
        """A table: one row per scalar with its p-value, PASS/MISS and counts per bin."""
        width = max(9, *(len(n) for n in self.names))
        lines = [f"SBC: {self.nsim} replications, ranks 0..{self.thin_to} in {self.bins} bins; "
                 f"PASS when p > {self.threshold:.4g} ({self.alpha:g} family-wise, Bonferroni "
                 f"over {len(self.names)} scalars)",
                 f"{'parameter':<{width}} {'p-value':>8}  result  counts per bin"]
        for n in self.names:
            lines.append(f"{n:<{width}} {self.p_values[n]:>8.3f}  "
                         f"{'PASS' if self.passed[n] else 'MISS'}    {self.counts[n].tolist()}")
        lines.append(f"{int(self.divergences.sum())} divergent transitions in all; lowest bulk "
                     f"ESS of a replication {float(self.ess_bulk_min.min()):.0f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<SBCResult {self.nsim} replications>\n{self.summary()}"

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (lists, floats): for JSON and the R and JS doors."""
        def host(x: Any) -> Any:
            return x.tolist() if hasattr(x, "tolist") else x

        return {"names": list(self.names),
                "ranks": {k: host(v) for k, v in self.ranks.items()},
                "truth": {k: host(v) for k, v in self.truth.items()},
                "counts": {k: host(v) for k, v in self.counts.items()},
                "p_values": dict(self.p_values), "passed": dict(self.passed),
                "threshold": self.threshold, "divergences": host(self.divergences),
                "ess_bulk_min": host(self.ess_bulk_min), "nsim": self.nsim,
                "thin_to": self.thin_to, "bins": self.bins, "seed": self.seed,
                "alpha": self.alpha, "wall_s": self.wall_s}


def replication_seeds(seed: int, i: int) -> tuple[int, int]:
    """Replication ``i``'s seeds (prior simulation, chains): one Philox block of ``(seed, i)``."""
    s = int(seed) % (1 << 64)
    w = philox4x32((i & _M32, (i >> 32) & _M32, 0, _SEED_TAG), (s & _M32, s >> 32))
    return w[0] | (w[1] << 32), w[2] | (w[3] << 32)


def chi2_sf(x: float, df: int) -> float:
    """P(X > x) for X ~ chi-square(df): the regularised upper incomplete gamma Q(df/2, x/2)."""
    a, z = df / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    log_front = -z + a * math.log(z) - math.lgamma(a)
    if z < a + 1:  # the series of the lower function P(a, z)
        term = total = 1.0 / a
        k = a
        while term > total * 1e-16:
            k += 1
            term *= z / k
            total += term
        return min(1.0, max(0.0, 1.0 - total * math.exp(log_front)))
    # the continued fraction of Q(a, z), evaluated by the modified Lentz method
    tiny = 1e-300
    b = z + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return math.exp(log_front) * h


def rank_uniformity(ranks: Any, thin_to: int, bins: int) -> tuple[np.ndarray, float]:
    """Counts of ``ranks`` (0..thin_to) in ``bins`` equal bins and the chi-square p-value of
    uniform ranks (``bins - 1`` degrees of freedom)."""
    import numpy as np

    r = np.asarray(ranks, dtype=np.int64)
    counts = np.bincount(r * bins // (thin_to + 1), minlength=bins)
    expected = r.size / bins
    stat = float(((counts - expected) ** 2 / expected).sum())
    return counts, chi2_sf(stat, bins - 1)


def _positive_int(name: str, v: Any, lo: int = 1) -> int:
    if isinstance(v, bool) or not (isinstance(v, int) or type(v).__name__.startswith(
            ("int", "uint"))) or v < lo:
        raise ValueError(f"{name}: expected an integer >= {lo}, got {v!r}")
    return int(v)


def _lazies(x: Any, what: str) -> list[Any]:
    items = list(x.values()) if isinstance(x, dict) else (
        list(x) if isinstance(x, list | tuple) else [x])
    for a in items:
        if not isinstance(a, LazyArray):
            raise TypeError(f"{what}: expected lazy arrays, got {type(a).__name__}")
    return items


def sbc(model: Any, nsim: int = 100, *, data: Any = None, parameters: Any = None,
        n_samples: int = 250, warmup: int = 400, chains: int = 2, thin_to: int = 99,
        bins: int = 10, sampler: Any = None, backend: str = "auto", seed: int | None = None,
        alpha: float = 0.01, cluster: Any = None, n_cores: int | None = None,
        progress: bool | None = None) -> SBCResult:
    """Simulation-based calibration of ``mcmc`` on ``model`` (from :func:`tensorbridge.model`):
    ``nsim`` replications, each a prior draw of the parameters and data, a fit of the model to
    that data and the ranks of the true values among the thinned posterior draws.

    ``data``: the data arrays to simulate and refit (a lazy array, list or dict of them);
    default every data array of the model that has a distribution (its likelihood).
    ``parameters``: what to rank; default every variable of the model, named as in the draws;
    or a dict ``{name: lazy array}`` (derived quantities such as ``mu + tau * eta`` too).

    Each replication runs ``mcmc(model, n_samples, warmup, chains, sampler, backend=...)``; the
    ``chains * n_samples`` draws are thinned to ``thin_to`` (L), so ranks take L + 1 values,
    and ``bins`` must divide L + 1. ``backend`` is resolved here once (``"auto"``: the compiled
    sampler when the model can be compiled) and every replication uses it.

    ``seed``: replication ``i``'s simulation and chains draw from seeds of ``(seed, i)``
    (:func:`replication_seeds`), so the result is the same in-process, with ``n_cores`` and on
    any number of Dask workers; ``None`` draws a seed (kept in the result). ``cluster``: a
    ``distributed.Client`` or a scheduler address (``"tcp://host:8786"``), one replication per
    task; ``n_cores``: a local pool of that many processes (give at most one of the two).
    ``progress``: a line on standard error as replications finish (default: when it is a
    terminal). Returns an :class:`SBCResult`.
    """
    import numpy as np  # not in the JS door's pure-Python runtime

    from .executors import executor_for, run_tasks
    from .parallel import dumps_graph

    t0 = time.perf_counter()
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a tensorbridge model (from tb.model(...)), got "
                        f"{type(model).__name__}")
    nsim = _positive_int("nsim", nsim)
    n_samples = _positive_int("n_samples", n_samples)
    warmup = _positive_int("warmup", warmup, 0)
    chains = _positive_int("chains", chains)
    thin_to = _positive_int("thin_to", thin_to)
    bins = _positive_int("bins", bins, 2)
    if (thin_to + 1) % bins:
        raise ValueError(f"bins: must divide thin_to + 1 = {thin_to + 1} (ranks take that many "
                         f"values), got {bins}")
    if chains * n_samples < thin_to:
        raise ValueError(f"thin_to: {thin_to} is more than the chains * n_samples = "
                         f"{chains * n_samples} draws of a replication")
    if not (isinstance(alpha, float | int) and 0 < alpha < 1) or isinstance(alpha, bool):
        raise ValueError(f"alpha: expected a number in (0, 1), got {alpha!r}")
    if seed is None:
        seed = fresh_seed()
    seed = _positive_int("seed", seed, 0)
    executor = executor_for(cluster, n_cores, "sbc")

    flat = [name for v, name in zip(model.variables, model.variable_names())
            if v.distribution is None or v.distribution.target is not v]
    if flat:
        raise ValueError(f"model: {', '.join(flat)} have no prior distribution (a flat "
                         f"variable()); sbc draws every parameter from its prior")
    if data is None:
        data_nodes = [n for n in model.order if isinstance(n, DataNode)
                      and n.distribution is not None and n.distribution.target is n]
        if not data_nodes:
            raise ValueError("data: the model has no data array with a distribution to simulate")
    else:
        data_nodes = [node_of(a) for a in _lazies(data, "data")]
        for n in data_nodes:
            if not isinstance(n, DataNode) or n.distribution is None:
                raise ValueError(f"data: {n.label()} is not a data array with a distribution "
                                 f"(as_data(...) given one with distribution())")
    if parameters is None:
        pnames, pnodes = model.variable_names(), list(model.variables)
    elif isinstance(parameters, dict):
        pnames = [str(k) for k in parameters]
        pnodes = [node_of(a) for a in _lazies(parameters, "parameters")]
    else:
        pnodes = [node_of(a) for a in _lazies(parameters, "parameters")]
        known = dict(zip(model.variables, model.variable_names()))
        missing = [n.label() for n in pnodes if n not in known]
        if missing:
            raise ValueError(f"parameters: {', '.join(missing)} are not variables of the "
                             f"model; give a dict {{name: lazy array}} to rank other arrays")
        pnames = [known[n] for n in pnodes]

    numpy_only = _numpy_only(sampler)
    if getattr(model, "precision", "double") == "single":
        numpy_only = "a single-precision model"
    if numpy_only is not None and backend == "compiled":
        raise RuntimeError(f"backend='compiled': {numpy_only} runs on the NumPy sampler only")
    if backend not in ("auto", "compiled", "numpy"):
        raise ValueError(f"backend: expected 'auto', 'compiled' or 'numpy', got {backend!r}")
    density = None if numpy_only is not None else _compiled_density(model, backend)
    settings = {"n_samples": n_samples, "warmup": warmup, "chains": chains, "sampler": sampler,
                "backend": "numpy" if density is None else "compiled", "thin_to": thin_to,
                "seed": seed, "precision": getattr(model, "precision", "double")}
    blob = dumps_graph((model.targets, data_nodes, pnodes, settings), "sbc")

    show = sys.stderr.isatty() if progress is None else bool(progress)
    done = [0]

    def on_done(i: int) -> None:
        done[0] += 1
        if show:
            sys.stderr.write(f"\r     sbc [{'#' * (30 * done[0] // nsim):<30}] {done[0]}/{nsim} "
                             f"{time.perf_counter() - t0:5.1f}s")
            if done[0] == nsim:
                sys.stderr.write("\n")
            sys.stderr.flush()

    reps = run_tasks(executor, replicate, [(blob, i) for i in range(nsim)],
                     what="sbc: replication", on_done=on_done)

    # scalar names, 0-based as Draws' summary
    names: list[str] = []
    ranks: dict[str, np.ndarray] = {}
    truth: dict[str, np.ndarray] = {}
    for p, (name, node) in enumerate(zip(pnames, pnodes)):
        shape = tuple(node.shape)
        r_all = np.stack([rep["ranks"][p].reshape(shape) for rep in reps])
        t_all = np.stack([rep["truth"][p].reshape(shape) for rep in reps])
        for idx in np.ndindex(*shape):
            label = name if not shape else f"{name}[{','.join(map(str, idx))}]"
            names.append(label)
            ranks[label] = r_all[(slice(None), *idx)].astype(np.int64)
            truth[label] = t_all[(slice(None), *idx)].astype(np.float64)
    counts, pvals = {}, {}
    for n in names:
        counts[n], pvals[n] = rank_uniformity(ranks[n], thin_to, bins)
    threshold = alpha / len(names)
    return SBCResult(names=names, ranks=ranks, truth=truth, counts=counts, p_values=pvals,
                     passed={n: pvals[n] > threshold for n in names}, threshold=threshold,
                     divergences=np.array([rep["divergences"] for rep in reps], dtype=np.int64),
                     ess_bulk_min=np.array([rep["ess_bulk_min"] for rep in reps]),
                     nsim=nsim, thin_to=thin_to, bins=bins, seed=seed, alpha=float(alpha),
                     wall_s=time.perf_counter() - t0)


def replicate(item: tuple[bytes, int]) -> dict[str, Any]:
    """Replication ``i`` of the run in ``blob`` (a task: runs wherever the executor puts it).

    A fresh copy of the graph per replication (the pickle): its data arrays take the simulated
    values without touching the caller's model or another replication's."""
    import numpy as np

    blob, i = item
    targets, data_nodes, pnodes, s = pickle.loads(blob)
    sim_seed, fit_seed = replication_seeds(s["seed"], i)
    sims = simulate([_lazy(n) for n in (*pnodes, *data_nodes)], nsim=1, seed=sim_seed)
    true_values = [np.asarray(x.numpy())[0] for x in sims[:len(pnodes)]]
    for n, x in zip(data_nodes, sims[len(pnodes):]):
        ref = n.reference
        n.reference = tensor(np.asarray(x.numpy())[0], dtype=ref.dtype, backend=ref.backend)
    model = Model([_lazy(t) for t in targets], precision=s["precision"])
    draws = mcmc(model, n_samples=s["n_samples"], warmup=s["warmup"], chains=s["chains"],
                 sampler=s["sampler"], seed=fit_seed, progress=False, backend=s["backend"])
    post = calculate([_lazy(n) for n in pnodes], values=draws)  # (chains, draws, *shape) each
    total = s["chains"] * s["n_samples"]
    step = total // s["thin_to"]
    ranks, ess = [], math.inf
    for x, t in zip(post, true_values):
        flat = np.asarray(x).reshape(s["chains"], s["n_samples"], -1)
        kept = flat.reshape(total, -1)[::step][:s["thin_to"]]  # chain after chain, thinned
        ranks.append((kept < np.asarray(t).reshape(-1)).sum(axis=0))
        for j in range(flat.shape[2]):
            ess = min(ess, float(ess_bulk(flat[:, :, j])))
    return {"ranks": ranks, "truth": true_values, "divergences": int(draws.divergences),
            "ess_bulk_min": ess}
