"""The samplers in JavaScript (``sampler.js``) for Pyodide: issue 15's browser door at native
speed, the counterpart of ``sampler.py`` (C) where there is no C compiler but a JavaScript
engine.

A model's log density and gradient lowered to JavaScript (``lowering.lower_js``) becomes one JS
function over Float64Arrays (:class:`JsDensity`, compiled by V8 or the browser's engine, exact
float64); each chain's warmup and sampling run in ``sampler.js`` (:class:`JsChainRun`), the
port of ``sampler.c`` that reads the same per-chain Philox streams. Python crosses into
JavaScript once per block of iterations per chain, not once per kernel.

Only Pyodide has the ``js`` module this needs (:func:`js_available` says why not elsewhere);
its imports are function-level for that reason. The results are plain Python sequences, so
this module needs no NumPy; ``ppl/compiled_chains.py`` runs the chains.
"""

from __future__ import annotations

import sys
import time
from array import array
from importlib import resources
from typing import Any

from .lowering import LoweredJs

__all__ = ["JsChainRun", "JsDensity", "js_available", "stats_namespace"]

_NAMESPACES: list[Any] = []  # [sampler, prelude] once loaded in this interpreter
_STATS: list[Any] = []  # [makeStats(prelude)] once loaded


def js_available() -> str | None:
    """None when this interpreter can run JavaScript samplers (Pyodide), else why not."""
    if sys.platform != "emscripten":
        return "the JavaScript sampler runs only in Pyodide (a browser or Node)"
    try:
        import js  # noqa: F401 - Pyodide's bridge to the JavaScript global scope
    except ImportError:  # pragma: no cover - an Emscripten build without Pyodide
        return "no JavaScript host (the 'js' module of Pyodide) is available"
    return None


def _namespaces() -> tuple[Any, Any]:
    """``makeSampler()`` and ``makePrelude()``, evaluated once per interpreter (plain scripts,
    package data like ``backends/tfjs_host.js``)."""
    if not _NAMESPACES:
        import js

        def load(name: str, factory: str) -> Any:
            src = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
            return js.Function.new(f"{src}\nreturn {factory}();")()

        _NAMESPACES[:] = [load("sampler.js", "makeSampler"), load("tb_prelude.js", "makePrelude")]
    return _NAMESPACES[0], _NAMESPACES[1]


def stats_namespace() -> Any:
    """``makeStats(prelude)`` of ``tb_stats.js`` (the diagnostics' FFT autocovariance and
    inverse normal CDF), evaluated once per interpreter; only where :func:`js_available`."""
    if not _STATS:
        import js

        _, prelude = _namespaces()
        src = resources.files(__package__).joinpath("tb_stats.js").read_text(encoding="utf-8")
        _STATS.append(js.Function.new("TB", f"{src}\nreturn makeStats(TB);")(prelude))
    return _STATS[0]


def _typed(dtype: str, values: Any) -> Any:
    """A JavaScript typed array holding ``values`` (one copy, through a Python buffer)."""
    import js

    if dtype == "float64":
        buf, ctor = array("d", [float(v) for v in values]), js.Float64Array
    elif dtype == "bool":
        buf, ctor = array("B", [1 if v else 0 for v in values]), js.Uint8Array
    else:  # int64/int32 constants are positions into arrays: far below 2**31
        buf, ctor = array("i", [int(v) for v in values]), js.Int32Array
    out = ctor.new(len(buf))
    if len(buf):
        out.assign(buf)
    return out


def _read(typed: Any, start: int = 0, stop: int | None = None) -> list[Any]:
    """Elements ``start:stop`` of a JavaScript typed array as a Python list."""
    view = typed.subarray(start, typed.length if stop is None else stop)
    return view.to_py().tolist()


class JsDensity:
    """A lowered log density made a JavaScript function ``density(q, logp, grad) -> status``.

    ``n``: the free state's length; ``compile_seconds``: what making the function cost here
    (V8 compiles it lazily, on its first calls); ``lowered``: the lowering."""

    def __init__(self, lowered: LoweredJs) -> None:
        import js

        start = time.perf_counter()
        _, prelude = _namespaces()
        consts = js.Array.new()
        for c in lowered.constants:
            consts.push(_typed(c.dtype, c.values))
        make = js.Function.new("C", "TB", f"{lowered.source}\nreturn makeDensity(C, TB);")
        self.fn = make(consts, prelude)
        self._consts = consts
        self.lowered = lowered
        self.n = lowered.n
        self.name = lowered.name
        self.compile_seconds = time.perf_counter() - start
        self._q = js.Float64Array.new(max(self.n, 1))
        self._grad = js.Float64Array.new(max(self.n, 1))
        self._logp = js.Float64Array.new(1)

    def call(self, q: Any) -> tuple[float, list[float], int]:
        """``(logp, grad, status)`` at free state ``q`` (a sequence of n floats)."""
        values = [float(v) for v in q]
        if len(values) != self.n:
            raise ValueError(f"q: expected a free state of length {self.n}, got {len(values)}")
        if values:
            self._q.assign(array("d", values))
        status = int(self.fn(self._q, self._logp, self._grad))
        return float(self._logp[0]), _read(self._grad, 0, self.n), status

    def __call__(self, q: Any) -> tuple[float, list[float]]:
        logp, grad, _ = self.call(q)
        return logp, grad


class JsChainRun:
    """One chain's warmup and sampling in JavaScript, advanced ``run(k)`` iterations at a time;
    the arguments and their meaning are ``sampler.ChainRun``'s (the C chain)."""

    def __init__(self, density: JsDensity, q0: Any, key: tuple[int, int], *,
                 kind: str = "nuts", warmup: int, n_samples: int, thin: int = 1,
                 max_depth: int = 10, n_leapfrog: int = 10, jitter: bool = True,
                 target_accept: float = 0.8, step_size: float = 1.0, adapt_step: bool = True,
                 max_delta_h: float = 1000.0, pairwise_accept: bool = False) -> None:
        import js
        from pyodide.ffi import to_js

        if kind not in ("nuts", "hmc"):
            raise ValueError(f"kind: expected 'nuts' or 'hmc', got {kind!r}")
        sampler, _ = _namespaces()
        n = self.n = density.n
        q0 = [float(v) for v in q0]
        if len(q0) != n:
            raise ValueError(f"q0: expected {n} values, got {len(q0)}")
        cfg = to_js({
            "n": n, "kind": 0 if kind == "nuts" else 1, "maxDepth": int(max_depth),
            "nLeapfrog": int(n_leapfrog), "jitter": int(bool(jitter)),
            "adaptStep": int(bool(adapt_step)), "pairwiseAccept": int(bool(pairwise_accept)),
            "targetAccept": float(target_accept), "stepSize": float(step_size),
            "maxDeltaH": float(max_delta_h), "warmup": int(warmup), "nSamples": int(n_samples),
            "thin": int(thin), "key0": int(key[0]), "key1": int(key[1])},
            dict_converter=js.Object.fromEntries)
        self.total = warmup + n_samples * thin
        self._out = sampler.newOutput(cfg)
        self._chain = sampler.Chain.new(cfg, _typed("float64", q0), density.fn)
        self._density = density

    def run(self, n_iter: int) -> int:
        """Run up to ``n_iter`` more iterations; returns how many ran."""
        return int(self._chain.run(int(n_iter), self._out))

    def raise_pending(self) -> None:
        """Nothing is deferred: a JavaScript error surfaces from :meth:`run` itself."""

    def divergent(self, start: int, stop: int) -> list[bool]:
        """Whether each iteration ``start..stop-1`` (warmup included) diverged."""
        return [bool(v) for v in _read(self._out.iterDivergent, start, stop)]

    def draws_rows(self, kept: int) -> list[list[float]]:
        """The first ``kept`` draws of the free state, one row each."""
        flat = _read(self._out.draws, 0, kept * self.n)
        n = self.n
        return [flat[i * n:(i + 1) * n] for i in range(kept)]

    def stat(self, name: str, kept: int) -> list[Any]:
        """The first ``kept`` values of a per-draw statistic (``chains.STATS``)."""
        field = {"accept_stat": "acceptStat", "n_leapfrog": "nLeapfrog",
                 "tree_depth": "treeDepth", "divergent": "divergent", "energy": "energy",
                 "lp": "lp"}[name]
        values = _read(getattr(self._out, field), 0, kept)
        if name in ("n_leapfrog", "tree_depth"):
            return [int(v) for v in values]
        if name == "divergent":
            return [bool(v) for v in values]
        return values

    @property
    def iteration(self) -> int:
        return int(self._chain.iteration())

    @property
    def kept(self) -> int:
        return int(self._chain.kept())

    @property
    def step_size(self) -> float:
        return float(self._chain.step())

    @property
    def warmup_divergences(self) -> int:
        return int(self._chain.warmupDivergences())

    @property
    def inv_metric(self) -> list[float]:
        return self._chain.invMetric().to_py().tolist()
