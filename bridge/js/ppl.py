"""The JavaScript front door of the probabilistic layer (``js-client/src/ppl.js``).

Models are built in JS with the same names as in Python (``asData``, ``variable``, ``normal``,
``distribution``, ``model``…): every lazy array is a Python object held by handle, arithmetic on
them goes through the runtime's ops (``tb.add(mu, tb.mul(tau, eta))``). ``mcmc`` here runs the
sampler with progress sent as fire-and-forget events and a stop flag read from JS (see
``bridge.js.layers`` for the event channel), and returns the draws as flat float64 buffers (chains x
draws x shape, row-major) plus the summary table, ready for typed arrays on the JS side.
"""

from __future__ import annotations

import inspect
import json
import math
import warnings
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import tensorbridge as tb

from ...runtime import ppl as _ppl
from ...runtime import spec
from ...runtime.graph import Model
from ...runtime.graph import calculate as _calculate
from ...runtime.graph import distribution as _distribution
from ...runtime.graph import model as _model
from ...runtime.graph.nodes import LazyArray
from ...runtime.graph.simulate import simulate as _simulate
from ...runtime.ppl.draws import Draws
from ...runtime.progress_events import McmcProgress, every_nth, progress_sinks

__all__ = ["calculate", "distribution", "draws_result", "make_distribution", "make_variable",
           "mcmc", "model", "opt", "summary_rows"]

_SUMMARY_KEYS = (("mean", "mean"), ("sd", "sd"), ("q5", "q5"), ("q50", "q50"), ("q95", "q95"),
                 ("rhat", "rhat"), ("ess_bulk", "essBulk"), ("ess_tail", "essTail"))


def _events() -> Any:
    import _tensorbridge_events  # registered by the JS client (core.js)

    return _tensorbridge_events


def _number(v: Any) -> Any:
    f = float(v)
    return f if math.isfinite(f) else repr(f)  # JS turns "nan"/"inf" back into numbers


def model(*targets: Any, **named: Any) -> Any:
    """``tb.model``: positional targets keep the names they were given (``name=`` when made),
    keyword targets are named by their key (a JS object ``{mu, tau, theta}``)."""
    m = _model(*targets, **named)
    # variables nobody named (eta in `theta = mu + tau * eta`, no Python scope to find names in
    # from JS) are named by the rule every door follows, so derived targets can be computed
    # over the draws
    spec.name_variables(m)
    return m


def format_lazy(x: Any) -> str:
    """``repr`` of a lazy array: values where known, ``?`` where they depend on variables."""
    if not isinstance(x, LazyArray):
        raise TypeError(f"format: x must be a lazy array (from tb.ppl), not {type(x).__name__}")
    return repr(x)


def make_variable(name: str, /, *args: Any, **kwargs: Any) -> Any:
    """``tb.<name>(*args, **kwargs)`` for ``variable``, the variable types and ``as_data``
    (``tb.ppl.variable({lower: 0})``, ``tb.ppl.asData(x)``), with the arguments checked by the
    runtime's spec first, named as JS spells them."""
    fn = getattr(tb, name)
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{spec.door_name(name, 'js')}: {e}") from None
    spec.check_call(name, bound.arguments, "js")
    return fn(*args, **kwargs)


def make_distribution(name: str, /, *args: Any, **kwargs: Any) -> Any:
    """``tb.<name>(*args, **kwargs)`` (``tb.ppl.normal(0, 1, {dim: 3})``) with its arguments
    checked by the runtime's spec first, so a wrong one is named: ``normal: sd must be a number,
    an array, a tensor or a lazy array, got str 'x'``; ``name`` names the variable it makes (as
    in the draws)."""


    label = kwargs.pop("name", None)  # normal(0, 1, {name: "mu"}): the variable's name
    spec.check_arg(name, "name", "name", label, "js")
    spec.check_distribution_args(name, args, kwargs, "js")
    out = getattr(tb, name)(*args, **kwargs)
    if label is not None:
        out.node.name = label
    return out


def simulate(target: Any, nsim: Any = None, seed: Any = None, values: Any = None) -> Any:
    """``simulate`` for JS: the prior (predictive), or with the draws as ``values`` the
    posterior predictive; a flat float64 buffer and the shape ``[nsim, ...shape]``."""
    if not isinstance(target, LazyArray):
        raise TypeError(f"simulate: target must be a lazy array (from tb.ppl), not "
                        f"{type(target).__name__}")
    for name, v in (("nsim", nsim), ("seed", seed)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ValueError(f"simulate: {name} must be a whole number, got {v!r}")
    out = _simulate(target, nsim=nsim, seed=seed, values=values)
    data, shape = _buffer(out)
    return {"data": data, "shape": shape, "dtype": "float64"}


def calculate(target: Any, values: Any = None) -> Any:
    """``calculate`` for JS: ``values`` may be the draws (the result comes back as a flat
    float64 buffer and a shape, chains x draws x shape), a dict keyed by lazy arrays (a JS
    ``Map``) or a dict keyed by variable *names* (a plain JS object: ``{beta: [[1], [0]]}``)."""
    if not isinstance(target, LazyArray):
        raise TypeError(f"calculate: target must be a lazy array (from tb.ppl), not "
                        f"{type(target).__name__}")
    if isinstance(values, Draws):
        data, shape = _buffer(_calculate(target, values))
        return {"data": data, "shape": shape, "dtype": "float64"}
    if isinstance(values, dict) and any(isinstance(k, str) for k in values):
        # names are the runtime's decision, as in R: an unknown one is an error naming it
        names = [k for k in values if isinstance(k, str)]
        found = spec.variables_by_name([target], names)
        values = {found[k] if isinstance(k, str) else k: v for k, v in values.items()}
    return _calculate(target, values)


def distribution(target: Any, dist: Any) -> Any:
    _distribution(target, dist)
    return target


def _flatten(x: Any) -> list[Any]:
    if not isinstance(x, list):
        return [x]
    out: list[Any] = []
    for v in x:
        out.extend(_flatten(v) if isinstance(v, list) else [v])
    return out


def _buffer(a: Any) -> tuple[Any, list[int]]:
    """A draws array (NumPy or the sampler's NumPy-free arrays) as float64 bytes and a shape."""
    shape = [int(d) for d in a.shape]
    try:
        import numpy as np

        if isinstance(a, np.ndarray):
            flat = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
            return flat, shape
    except ImportError:  # Pyodide without NumPy
        pass
    values = a.tolist() if hasattr(a, "tolist") else a
    return memoryview(array("d", [float(v) for v in _flatten(values)])), shape


def summary_rows(draws: Any) -> list[dict[str, Any]]:
    if draws.n_draws == 0:
        return []
    rows = []
    for name, vals in draws.summary().rows:
        row: dict[str, Any] = {"variable": name}
        for key, js in _SUMMARY_KEYS:
            if key in vals:
                row[js] = _number(vals[key])
        rows.append(row)
    return rows


def draws_result(draws: Any) -> dict[str, Any]:
    """What JS's ``Draws`` is made of: the Python object (a handle), buffers, shapes, summary."""
    variables, shapes = {}, {}
    for name, arr in draws.values.items():
        variables[name], shapes[name] = _buffer(arr)
    return {"handle": draws, "variables": variables, "shapes": shapes,
            "chains": int(draws.chains), "nDraws": int(draws.n_draws),
            "interrupted": bool(draws.interrupted), "divergences": int(draws.divergences),
            "backend": str(draws.backend),
            "summary": summary_rows(draws)}


def mcmc(m: Any, options: dict[str, Any] | None = None, channel: int | None = None,
         progress: bool = False) -> dict[str, Any]:
    """``tb.mcmc`` with the JS options (Python names); ``channel``: the JS event channel that
    receives the ``McmcProgress`` events' fields in camelCase (``{"iteration", "total", "phase",
    "divergences", "warmupDivergences", "elapsed"}``, every ``callbackEvery`` iterations: a
    progress sink for this call) and whose stop flag
    ends sampling (the draws so far are kept, ``interrupted`` is set)."""


    if not isinstance(m, Model):
        raise TypeError(f"mcmc: model must be a model from tb.ppl.model(...), not "
                        f"{type(m).__name__}")
    opts = dict(options or {})
    sampler = opts.pop("sampler", None)
    if isinstance(sampler, str):
        sampler = {"kind": sampler}
    if isinstance(sampler, dict):
        spec = dict(sampler)
        kind = spec.pop("kind", "nuts")
        if kind not in _SAMPLERS:
            raise ValueError(f"sampler: expected one of {', '.join(map(repr, _SAMPLERS))}, got "
                             f"{kind!r}")
        sampler = getattr(_ppl, kind)(**spec)
    with _progress(opts, channel):
        draws = tb.mcmc(m, sampler=sampler, progress=progress, **opts)
    return draws_result(draws)


_SAMPLERS = ("nuts", "hmc", "rwmh", "slice")


def extra_samples(draws: Any, options: dict[str, Any] | None = None,
                  channel: int | None = None) -> dict[str, Any]:
    """``tb.extra_samples`` of the Python Draws behind a JS Draws (its handle), progress and
    the stop flag as for :func:`mcmc`."""
    if not isinstance(draws, Draws):
        raise TypeError(f"extraSamples: draws must be the draws of tb.mcmc, not "
                        f"{type(draws).__name__}")
    opts = dict(options or {})
    with _progress(opts, channel):
        more = tb.extra_samples(draws, **opts)
    return draws_result(more)


@contextmanager
def _progress(opts: dict[str, Any], channel: int | None) -> Iterator[None]:
    """The JS channel's progress sink and stop flag for one run (``opts`` gains
    ``should_stop``): the ``McmcProgress`` events' fields in camelCase every ``callbackEvery``
    iterations; an interrupt is JS's ``.interrupted``, not a warning."""
    sink = None
    if channel is not None:
        ev = _events()
        send, aborted, ch = ev.emit, ev.aborted, int(channel)

        def forward(event: McmcProgress) -> None:
            if isinstance(event, McmcProgress):  # the event's fields, named for JS
                send(ch, json.dumps({k: v if isinstance(v, str | int) else _number(v)
                                     for k, v in event.as_dict("js", kind=False).items()}))

        sink = every_nth(forward, opts.get("callback_every", 50), "callbackEvery")
        opts["should_stop"] = lambda: bool(aborted(ch))
    with warnings.catch_warnings(), progress_sinks(sink):
        warnings.filterwarnings("ignore", category=tb.SamplingInterrupted)  # JS: .interrupted
        yield


def opt(m: Any, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """``tb.opt`` with the JS options (Python names): the mode by variable name as flat
    float64 buffers and shapes, the log density there, the iterations and convergence."""


    if not isinstance(m, Model):
        raise TypeError(f"opt: model must be a model from tb.ppl.model(...), not "
                        f"{type(m).__name__}")
    opts = dict(options or {})
    optimiser = opts.get("optimiser")
    if isinstance(optimiser, dict):  # greta's optimiser objects: {name, ...their options}
        spec = dict(optimiser)
        name = spec.pop("name", None)
        if name not in _ppl.optimisers.OPTIMISERS:
            raise ValueError(f"optimiser: expected one of "
                             f"{', '.join(_ppl.optimisers.OPTIMISERS)}, got {name!r}")
        opts["optimiser"] = getattr(_ppl, name)(**spec)
    res = tb.opt(m, **opts)
    par, shapes = {}, {}
    for name, v in res.par.items():
        par[name], shapes[name] = _buffer(v)
    return {"par": par, "shapes": shapes, "value": _number(res.value),
            "iterations": int(res.iterations), "converged": bool(res.converged)}
