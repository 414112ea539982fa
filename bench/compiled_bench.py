"""The compiled log density (issue 14): one C call of a model's lowered log density and gradient
against the NumPy sampler's staged program for the same single free state.

Models: eight schools (non-centred, as ``ppl_bench``), Bayesian logistic regression
(N = 5000, D = 20, ``ppl_bench``'s data) and posteriordb's kidiq-kidscore_momiq. The C side
is timed by a C loop calling the function pointer (what the compiled sampler does per leapfrog
step), so no Python or cffi call is in the time; the NumPy side calls the staged program
(``raw_program``, raw arrays in and out, no Tensor objects). Both results are checked against
each other first. Timed in interleaved rounds (``_timing.compare``); the C cache starts empty,
so the compile time in the notes is a cold one. Issue 14's physical reference: a compiled
eight-schools gradient is about 1 us.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from _timing import compare, row_timing

ROOT = Path(__file__).resolve().parent.parent

_HARNESS_CDEF = """
double tb_bench_density(uintptr_t fn, void *ctx, const double *q, double *logp, double *grad,
                        long n);
"""
_HARNESS = r"""
#include <stdint.h>
#include <time.h>
typedef int (*tb_density_fn)(void *, const double *, double *, double *);
double tb_bench_density(uintptr_t fn, void *ctx, const double *q, double *logp, double *grad,
                        long n) {
    tb_density_fn f = (tb_density_fn)fn;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) f(ctx, q, logp, grad);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}
"""


def _models() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    import ppl_bench

    import tensorbridge as tb
    from tests.ppl import posteriordb_models as P

    out = {}
    y, sigma = tb.as_data(ppl_bench.Y8), tb.as_data(ppl_bench.SIGMA8)
    mu = tb.normal(0.0, 5.0)
    tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float("inf")))
    eta = tb.normal(0.0, 1.0, dim=8)
    tb.distribution(y, tb.normal(mu + tau * eta, sigma))
    out["eight schools"] = tb.model(mu=mu, tau=tau, eta=eta)
    xv, yv = ppl_bench.logistic_data()
    alpha = tb.normal(0.0, 5.0)
    beta = tb.normal(0.0, 1.0, dim=xv.shape[1])
    tb.distribution(tb.as_data(yv), tb.bernoulli(tb.sigmoid(alpha + tb.as_data(xv) @ beta)))
    out["logistic regression N=5000 D=20"] = tb.model(alpha=alpha, beta=beta)
    name = "kidiq-kidscore_momiq"
    builder, _ = P.MODELS[name]
    out[f"posteriordb {name}"] = builder(P.load(name)["data"])[0]
    return out


def main() -> list[dict[str, Any]]:
    os.environ["TENSORBRIDGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tb-cache-")  # cold compile
    from tensorbridge.runtime.compiled.build import compile_module, compiler_available
    from tensorbridge.runtime.ppl.compiled_density import compile_density

    reason = compiler_available()
    if reason is not None:
        return [{"name": "compiled log density", "value_us": None, "peer": "NumPy",
                 "peer_us": None, "ratio": None, "value_note": reason}]
    harness = compile_module("bench_density", _HARNESS_CDEF, _HARNESS)
    return [_row(title, m, harness, compile_density(m)) for title, m in _models().items()]


def _row(title: str, m: Any, harness: Any, density: Any) -> dict[str, Any]:
    ffi, lib = harness.ffi, harness.lib
    q = np.random.default_rng(7).uniform(-1.0, 1.0, m.n_free)
    raw = m._ldg_function(True, 1).raw_program(m._as_free(q))
    lp_np, g_np = (np.asarray(a) for a in raw(q))
    lp_c, g_c = density(q)
    scale = max(1.0, abs(float(lp_np)), float(np.max(np.abs(g_np))))
    if abs(lp_c - float(lp_np)) > 1e-9 * scale or np.max(np.abs(g_c - g_np)) > 1e-9 * scale:
        raise AssertionError(f"{title}: C and NumPy disagree")
    ctx, keep = density.new_context()
    grad = np.empty(m.n_free)  # the buffers behind the casts below live as long as this frame
    args = (density.fn_address, ffi.cast("void *", ctx), ffi.cast("double *", q.ctypes.data),
            ffi.new("double *"), ffi.cast("double *", grad.ctypes.data))
    calls = 50 if m.n_free > 20 else 1000

    def c_loop() -> float:
        return lib.tb_bench_density(*args, calls)

    def numpy_loop() -> None:
        for _ in range(calls):
            raw(q)

    t = compare({"c": c_loop, "numpy": numpy_loop})
    del keep, grad
    c_us, np_us = t["c"].median_us / calls, t["numpy"].median_us / calls
    row: dict[str, Any] = {
        "name": f"compiled log density + gradient, {title} (one free state)",
        "value_us": c_us, "peer": "NumPy staged program (one state)", "peer_us": np_us,
        "ratio": c_us / np_us, **row_timing(t["c"], t["numpy"], per=calls),
        "notes": [f"{title}: {m.n_free} free parameters; C compile "
                  f"{density.compile_seconds:.2f} s from an empty cache; one Python-to-C call "
                  f"per {calls} gradients"],
    }
    if title == "eight schools":
        row["target"] = "about 1 us (issue 14's physical reference)"
        row["passed"] = c_us <= 1.5
    return row


if __name__ == "__main__":
    import json

    print(json.dumps(main(), indent=1, default=str))
