"""The samplers in C (``sampler.c``): NUTS and static-HMC transitions, step-size and metric
adaptation, and whole chains run in blocks of iterations without returning to Python.

The C code reads the same per-chain Philox streams as the Python sampler (a chain's key, then a
counter ``(block, iteration, purpose)``), so a chain's draws are the Python sampler's given the
same log density. The density is a C function pointer ``int f(void *ctx, const double *q,
double *logp, double *grad)`` (0: success; nonzero: a numerical failure, taken as log density
-inf) with one context per chain, so chains run in threads: cffi releases the GIL around C calls.

This module knows nothing of models (``graph``) or of ``ppl``: ``ppl/compiled_chains.py`` calls it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol

import numpy as np

from .build import CompiledModule, compile_module, compiler_available

__all__ = ["CDEF", "ChainRun", "Density", "PythonDensity", "TransitionResult",
           "compiler_available", "hmc_transition", "nuts_transition", "python_density",
           "sampler_module", "stream_normals", "stream_uniforms"]

CDEF = """
typedef int (*tb_density_fn)(void *ctx, const double *q, double *logp, double *grad);

typedef struct {
    uint32_t key[2];
    uint32_t iteration, purpose;
    uint64_t block;
    double buf[2];
    int pos;
} tb_rng;

typedef struct {
    double accept_stat;
    int64_t n_leapfrog;
    int64_t tree_depth;
    int32_t divergent;
    double energy;
} tb_stats;

typedef struct {
    int n;
    int kind;
    int max_depth, n_leapfrog, jitter, adapt_step, pairwise_accept;
    double target_accept, step_size, max_delta_h;
    int warmup, n_samples, thin;
    uint32_t key0, key1;
} tb_chain_config;

typedef struct {
    double *draws;
    double *accept_stat;
    int64_t *n_leapfrog;
    int64_t *tree_depth;
    uint8_t *divergent;
    double *energy;
    double *lp;
    uint8_t *iter_divergent;
} tb_chain_out;

typedef ... tb_chain;

void tb_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
void tb_rng_init(tb_rng *r, uint32_t key0, uint32_t key1);
void tb_rng_restart(tb_rng *r, uint32_t iteration, uint32_t purpose);
double tb_rng_uniform(tb_rng *r);
void tb_rng_normals(tb_rng *r, int m, double *out);

int tb_nuts_transition(int n, const double *q, double logp, const double *grad, double step,
                       const double *inv_metric, tb_density_fn fn, void *ctx, tb_rng *rng,
                       int max_depth, double max_delta_h, int pairwise_accept, double *q_out,
                       double *logp_out, double *grad_out, tb_stats *stats);
int tb_hmc_transition(int n, const double *q, double logp, const double *grad, double step,
                      const double *inv_metric, tb_density_fn fn, void *ctx, tb_rng *rng,
                      int n_leapfrog, int jitter, double max_delta_h, double *q_out,
                      double *logp_out, double *grad_out, tb_stats *stats);

tb_chain *tb_chain_new(const tb_chain_config *cfg, const double *q0, tb_density_fn fn,
                       void *ctx);
void tb_chain_free(tb_chain *c);
int tb_chain_run(tb_chain *c, int n_iter, const tb_chain_out *out);
int tb_chain_iteration(const tb_chain *c);
int tb_chain_kept(const tb_chain *c);
double tb_chain_step(const tb_chain *c);
int64_t tb_chain_warmup_divergences(const tb_chain *c);
void tb_chain_inv_metric(const tb_chain *c, double *out);

extern "Python" int tb_py_density(void *ctx, const double *q, double *logp, double *grad);
"""

PURPOSE_TRANSITION, PURPOSE_STEP_SEARCH = 0, 1  # as chain_rng's counter word 3


@functools.lru_cache(maxsize=1)
def sampler_module() -> CompiledModule:
    """The compiled sampler (built once per machine, then loaded from the disk cache)."""
    source = resources.files(__package__).joinpath("sampler.c").read_text(encoding="utf-8")
    mod = compile_module("sampler", CDEF, source)
    _bind_python_density(mod)
    return mod


class Density(Protocol):
    """What the sampler needs of a log density: a C function pointer and per-chain contexts."""

    n: int
    fn_address: int

    def new_context(self) -> tuple[int, Any]: ...


# --------------------------------------------------------------------- Python densities
class PythonDensity:
    """A Python function ``f(q[n]) -> (logp, grad[n])`` as a C density (for tests and
    comparisons: every call takes the GIL). ``f`` returns None for a numerical failure (the
    C density's nonzero return); an exception in ``f`` counts as a failure for the sampler and
    is raised again by :meth:`raise_pending`."""

    def __init__(self, f: Any, n: int) -> None:
        ffi, lib = sampler_module().ffi, sampler_module().lib
        self.f, self.n = f, int(n)
        self.fn_address = int(ffi.cast("uintptr_t", lib.tb_py_density))
        self.error: BaseException | None = None

    def new_context(self) -> tuple[int, Any]:
        handle = sampler_module().ffi.new_handle(self)
        return int(sampler_module().ffi.cast("uintptr_t", handle)), handle

    def __call__(self, q: Any) -> tuple[float, np.ndarray]:
        lp, g = self.f(np.array(q, dtype=np.float64))
        return float(lp), np.asarray(g, dtype=np.float64)

    def raise_pending(self) -> None:
        err, self.error = self.error, None
        if err is not None:
            raise err


def python_density(f: Any, n: int) -> PythonDensity:
    return PythonDensity(f, n)


def _bind_python_density(mod: CompiledModule) -> None:
    ffi = mod.ffi

    @ffi.def_extern(name="tb_py_density", error=1)
    def _density(ctx: Any, q: Any, logp: Any, grad: Any) -> int:
        dens: PythonDensity = ffi.from_handle(ctx)
        try:
            n = dens.n
            out = dens.f(np.frombuffer(ffi.buffer(q, 8 * n), dtype=np.float64).copy())
            if out is None:
                return 1
            lp, g = out
            g = np.ascontiguousarray(g, dtype=np.float64)
            if g.shape != (n,):
                raise ValueError(f"density: gradient of shape {g.shape}, expected ({n},)")
            logp[0] = float(lp)
            ffi.memmove(grad, g, 8 * n)
        except Exception as e:
            if dens.error is None:
                dens.error = e
            return 1
        return 0


# ------------------------------------------------------------------------------ streams
def _rng(key: tuple[int, int], iteration: int, purpose: int) -> Any:
    mod = sampler_module()
    r = mod.ffi.new("tb_rng *")
    mod.lib.tb_rng_init(r, key[0], key[1])
    mod.lib.tb_rng_restart(r, iteration, purpose)
    return r


def stream_uniforms(key: tuple[int, int], iteration: int, purpose: int, m: int) -> np.ndarray:
    """The first ``m`` uniforms of a chain's stream at ``(iteration, purpose)``."""
    r, lib = _rng(key, iteration, purpose), sampler_module().lib
    return np.array([lib.tb_rng_uniform(r) for _ in range(m)])


def stream_normals(key: tuple[int, int], iteration: int, purpose: int, m: int) -> np.ndarray:
    """``m`` standard normals from the start of a chain's stream at ``(iteration, purpose)``."""
    mod = sampler_module()
    out = np.empty(m)
    mod.lib.tb_rng_normals(_rng(key, iteration, purpose), m, mod.ffi.from_buffer("double[]", out))
    return out


# -------------------------------------------------------------------------- transitions
@dataclass
class TransitionResult:
    q: np.ndarray
    logp: float
    grad: np.ndarray
    accept_stat: float
    n_leapfrog: int
    tree_depth: int
    divergent: bool
    energy: float


def _transition(kind: str, q: Any, logp: float, grad: Any, step: float, inv_metric: Any,
                density: Density, key: tuple[int, int], iteration: int, purpose: int,
                *args: Any) -> TransitionResult:
    mod = sampler_module()
    ffi, lib = mod.ffi, mod.lib
    n = density.n
    arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in (q, grad, inv_metric)]
    if any(a.shape != (n,) for a in arrays):
        raise ValueError(f"q, grad, inv_metric: expected shape ({n},)")
    q_out, g_out = np.empty(n), np.empty(n)
    lp_out, stats = ffi.new("double *"), ffi.new("tb_stats *")
    ctx, keep = density.new_context()
    buf = [ffi.from_buffer("double[]", a) for a in (*arrays, q_out, g_out)]
    fn = lib.tb_nuts_transition if kind == "nuts" else lib.tb_hmc_transition
    rc = fn(n, buf[0], float(logp), buf[1], float(step), buf[2],
            ffi.cast("tb_density_fn", density.fn_address), ffi.cast("void *", ctx),
            _rng(key, iteration, purpose), *args, buf[3], lp_out, buf[4], stats)
    del keep
    if rc != 0:
        raise MemoryError(f"{kind} transition: out of memory (code {rc})")
    raise_pending = getattr(density, "raise_pending", None)
    if raise_pending is not None:
        raise_pending()
    return TransitionResult(q_out, lp_out[0], g_out, stats.accept_stat, stats.n_leapfrog,
                            stats.tree_depth, bool(stats.divergent), stats.energy)


def nuts_transition(q: Any, logp: float, grad: Any, step: float, inv_metric: Any,
                    density: Density, key: tuple[int, int], iteration: int,
                    purpose: int = PURPOSE_TRANSITION, max_depth: int = 10,
                    max_delta_h: float = 1000.0,
                    pairwise_accept: bool = False) -> TransitionResult:
    """One NUTS transition of one chain from ``q`` (with its ``logp`` and ``grad``), reading the
    chain's stream ``key`` restarted at ``(iteration, purpose)``.

    ``pairwise_accept``: sum the leaves' acceptance probabilities pairwise, as NumPy does in
    the Python sampler for a batch of one chain (for several chains it sums them in order).
    """
    if not 1 <= max_depth <= 30:
        raise ValueError(f"max_depth: expected 1..30, got {max_depth}")
    return _transition("nuts", q, logp, grad, step, inv_metric, density, key, iteration,
                       purpose, int(max_depth), float(max_delta_h), int(bool(pairwise_accept)))


def hmc_transition(q: Any, logp: float, grad: Any, step: float, inv_metric: Any,
                   density: Density, key: tuple[int, int], iteration: int,
                   purpose: int = PURPOSE_TRANSITION, n_leapfrog: int = 10, jitter: bool = True,
                   max_delta_h: float = 1000.0) -> TransitionResult:
    """One static-HMC transition of one chain, as :func:`nuts_transition`."""
    return _transition("hmc", q, logp, grad, step, inv_metric, density, key, iteration,
                       purpose, int(n_leapfrog), int(bool(jitter)), float(max_delta_h))


# ------------------------------------------------------------------------------- chains
class ChainRun:
    """One chain's warmup and sampling in C, advanced ``run(k)`` iterations at a time.

    ``step_size`` is the initial step, searched from (Stan's heuristic) and adapted by dual
    averaging when ``adapt_step``. Kept draws and their statistics land in this object's arrays
    (``draws``, ``stats``); ``pairwise_accept`` as in :func:`nuts_transition`;
    ``iter_divergent`` flags every iteration's divergence (warmup included) for progress.
    """

    def __init__(self, density: Density, q0: Any, key: tuple[int, int], *, kind: str = "nuts",
                 warmup: int, n_samples: int, thin: int = 1, max_depth: int = 10,
                 n_leapfrog: int = 10, jitter: bool = True, target_accept: float = 0.8,
                 step_size: float = 1.0, adapt_step: bool = True,
                 max_delta_h: float = 1000.0, pairwise_accept: bool = False) -> None:
        mod = sampler_module()
        ffi, lib = mod.ffi, mod.lib
        n = self.n = density.n
        if kind not in ("nuts", "hmc"):
            raise ValueError(f"kind: expected 'nuts' or 'hmc', got {kind!r}")
        if kind == "nuts" and not 1 <= max_depth <= 30:
            raise ValueError(f"max_depth: expected 1..30, got {max_depth}")
        self.total = warmup + n_samples * thin
        self.draws = np.zeros((n_samples, n))
        self.stats = {"accept_stat": np.zeros(n_samples),
                      "n_leapfrog": np.zeros(n_samples, np.int64),
                      "tree_depth": np.zeros(n_samples, np.int64),
                      "divergent": np.zeros(n_samples, bool),
                      "energy": np.zeros(n_samples), "lp": np.zeros(n_samples)}
        self.iter_divergent = np.zeros(self.total, bool)
        cfg = ffi.new("tb_chain_config *", {
            "n": n, "kind": 0 if kind == "nuts" else 1, "max_depth": max_depth,
            "n_leapfrog": n_leapfrog, "jitter": int(jitter), "adapt_step": int(adapt_step),
            "target_accept": target_accept, "step_size": step_size,
            "max_delta_h": max_delta_h, "pairwise_accept": int(pairwise_accept),
            "warmup": warmup, "n_samples": n_samples, "thin": thin,
            "key0": key[0], "key1": key[1]})
        out = self._out = ffi.new("tb_chain_out *")
        self._buffers = []
        for field, arr in (("draws", self.draws), *self.stats.items(),
                           ("iter_divergent", self.iter_divergent)):
            ctype = {np.float64: "double[]", np.int64: "int64_t[]", np.bool_: "uint8_t[]"}[
                arr.dtype.type]
            buf = ffi.from_buffer(ctype, arr, require_writable=True)
            self._buffers.append(buf)
            setattr(out, field, buf)
        ctx, self._keepalive = density.new_context()
        self._density = density
        q0 = np.ascontiguousarray(q0, dtype=np.float64)
        if q0.shape != (n,):
            raise ValueError(f"q0: expected shape ({n},), got {q0.shape}")
        ptr = lib.tb_chain_new(cfg, ffi.from_buffer("double[]", q0),
                               ffi.cast("tb_density_fn", density.fn_address),
                               ffi.cast("void *", ctx))
        if ptr == ffi.NULL:
            raise MemoryError("compiled chain: cannot allocate its state")
        self._chain = ffi.gc(ptr, lib.tb_chain_free)
        self._lib = lib

    def run(self, n_iter: int) -> int:
        """Run up to ``n_iter`` more iterations (the GIL is released meanwhile); returns how many
        ran."""
        done = self._lib.tb_chain_run(self._chain, n_iter, self._out)
        if done < 0:
            raise MemoryError(f"compiled chain: failed with code {done}")
        return done

    def divergent(self, start: int, stop: int) -> np.ndarray:
        """Whether each iteration ``start..stop-1`` (warmup included) diverged."""
        return self.iter_divergent[start:stop]

    def draws_rows(self, kept: int) -> np.ndarray:
        """The first ``kept`` draws of the free state, one row each."""
        return self.draws[:kept]

    def stat(self, name: str, kept: int) -> np.ndarray:
        """The first ``kept`` values of a per-draw statistic (``chains.STATS``)."""
        return self.stats[name][:kept]

    def raise_pending(self) -> None:
        """Raise an error a Python density recorded during :meth:`run`."""
        pending = getattr(self._density, "raise_pending", None)
        if pending is not None:
            pending()

    @property
    def iteration(self) -> int:
        return self._lib.tb_chain_iteration(self._chain)

    @property
    def kept(self) -> int:
        return self._lib.tb_chain_kept(self._chain)

    @property
    def step_size(self) -> float:
        return self._lib.tb_chain_step(self._chain)

    @property
    def warmup_divergences(self) -> int:
        return int(self._lib.tb_chain_warmup_divergences(self._chain))

    @property
    def inv_metric(self) -> np.ndarray:
        out = np.empty(self.n)
        self._lib.tb_chain_inv_metric(self._chain, sampler_module().ffi.from_buffer("double[]",
                                                                                   out))
        return out
