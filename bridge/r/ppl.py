"""The Python half of the R package's greta-style modelling API (``r-client/R/lazy_arrays.R``,
``distributions.R``, ``inference.R``).

Lazy arrays cross to R by handle, with their shape and node kind (one round trip per operation,
no second call for ``dim()``). R's conventions are applied here, in one place:

* R vectors are column vectors (greta's rule): an R vector of length ``n`` given where an array
  is expected arrives as NumPy shape ``(n,)`` and becomes ``(n, 1)``; for the parameters of the
  multivariate families it becomes a row ``(1, n)`` (one realisation). R scalars stay scalars.
* Values that R gives for a lazy array (``calculate(values=)``, ``initial_values``) may be
  shaped as R holds them: an array of the right size is reshaped in R's column-major order.
* Draws go back to R as one F-ordered array ``(draws, columns, chains)`` (a single copy), the
  columns of every target flattened in column-major order, as greta names them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ... import runtime as tb
from ...runtime import spec as front_door
from ...runtime.graph.nodes import LazyArray, VariableNode, _lazy
from ...runtime.ppl.draws import Draws
from ...runtime.ppl.executors import DaskCluster
from ...runtime.progress_events import every_nth, progress_sinks
from ..descriptors import Ref
from ..errors import ConversionError
from ..handles import handles
from ..na import is_na
from .api import _no_na, r_subscript

__all__ = [
    "as_data",
    "assign_distribution",
    "build_model",
    "calculate_draws",
    "calculate_values",
    "constrained_variable",
    "distribution_of",
    "draws_info",
    "draws_values",
    "info",
    "make_distribution",
    "op",
    "optimise",
    "sample",
    "subset",
    "summarise",
    "variable",
]

MULTIVARIATE = frozenset(s.name for s in front_door.DISTRIBUTIONS if s.multivariate)


def lazy_out(x: Any) -> dict[str, Any]:
    """What R gets for a lazy array: the handle, its shape and its node kind."""
    if not isinstance(x, LazyArray):  # an op on constants only: make it data
        x = tb.as_data(x)
    return {"ref": Ref(handles.register(x), "LazyArray"),
            "shape": [int(d) for d in x.shape], "kind": x.node.kind}


def _r_array(x: Any, where: str, row: bool = False) -> Any:
    """An argument from R: lazy arrays and tensors as they are, R data as float64 arrays with
    R vectors as columns (rows for multivariate parameters)."""
    if isinstance(x, tb.Tensor) or x is None:
        return x
    if isinstance(x, (bool, int, float)):
        return float(x)
    x = _no_na(x, where)
    a = np.asarray(x)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    if a.ndim == 1:
        a = a.reshape((1, -1) if row else (-1, 1))
    return a


# -- creating lazy arrays ----------------------------------------------------------------------
def as_data(x: Any) -> dict[str, Any]:
    if isinstance(x, LazyArray):
        return lazy_out(tb.as_data(x))
    # the spec checks x as R gave it (naming it x, greta's name); R has no checks of its own
    front_door.check_call("as_data", {"value": _r_param(x, "as_data: x")}, "r")
    return lazy_out(tb.as_data(_r_array(x, "as_data: x")))


def _greta_shape(fn: str, dim: Any) -> tuple[int, ...] | None:
    """greta's ``dim`` checked by the spec: n is an n x 1 column; NULL is None (a scalar, or
    the bounds' shape for ``variable``)."""
    if dim is None:
        return None
    given = _r_value(dim, f"{fn}: dim")
    front_door.check_call(fn, {"dim": given}, "r")
    shape = tuple(given) if isinstance(given, list) else (given,)
    return shape + (1,) * (len(shape) == 1)


def _r_bound(x: Any, shape: tuple[int, ...] | None, where: str) -> Any:
    """A bound from R: a number, or an R vector or array laid out in R's column-major order
    over the variable's dimensions (a vector of another length is a column, as greta's)."""
    if not isinstance(x, np.ndarray):
        return _r_value(x, where)
    a = _no_na(x, where)
    if a.dtype.kind not in "fiu":
        return _r_value(a.tolist(), where)
    if a.size == 1:
        return float(a.reshape(-1)[0])
    if shape is not None and a.size == math.prod(shape):
        return np.asarray(a, np.float64).reshape(shape, order="F")
    return np.asarray(a, np.float64).reshape((-1, 1) if a.ndim == 1 else a.shape)


def variable(lower: Any, upper: Any, dim: Any) -> dict[str, Any]:
    shape = _greta_shape("variable", dim)
    given = {"lower": _r_bound(lower, shape, "variable: lower"),
             "upper": _r_bound(upper, shape, "variable: upper")}
    front_door.check_call("variable", given, "r")
    return lazy_out(tb.variable(**given, dim=shape))


def constrained_variable(fn: str, dim: Any, correlation: Any = None) -> dict[str, Any]:
    """greta's ``ordered_variable(dim)``, ``simplex_variable(dim)`` and
    ``cholesky_variable(dim, correlation)``: the constraint acts on the last dimension, so
    ``dim = n`` is a 1 x n row (greta's rule) for the first two and an n x n matrix for the
    third, which is upper triangular as greta's (R's ``chol``)."""
    if fn not in ("ordered_variable", "simplex_variable", "cholesky_variable"):
        raise ValueError(f"no variable type {fn!r}")
    given = _r_value(dim, f"{fn}: dim")
    kwargs: dict[str, Any] = {"dim": given}
    if fn == "cholesky_variable":
        kwargs["correlation"] = _r_value(correlation, f"{fn}: correlation")
    front_door.check_call(fn, kwargs, "r")
    shape = tuple(given) if isinstance(given, list) else (given,)
    if fn != "cholesky_variable" and len(shape) == 1:
        shape = (1, *shape)
    if fn == "cholesky_variable":
        kwargs["upper"] = True  # greta's factor is R's chol(): upper triangular
    return lazy_out(getattr(tb, fn)(**{**kwargs, "dim": shape}))


def _r_value(x: Any, where: str) -> Any:
    """An R value as the spec checks it, nothing lost: vectors as lists, whole doubles as ints
    (R's 3 is a double), so that ``dim = 2.5`` or ``c("a", "b")`` reach the check as given."""
    if isinstance(x, np.ndarray) and x.dtype.kind in "fiub":
        x = _no_na(x, where).reshape(-1).tolist()
    if isinstance(x, list):
        return [_r_value(t, where) for t in x]
    if is_na(x) is True:  # a scalar NA (R's NA is not NaN)
        raise ConversionError(f"{where}: the R data holds NA; lazy arrays have no missing values")
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _r_param(x: Any, where: str) -> Any:
    """A parameter as the spec checks it: lazy arrays, tensors and numeric R arrays as they are
    (no copy); R's TRUE/FALSE as numbers, as R's arithmetic has them; anything else (a factor,
    strings) through :func:`_r_value`, for the spec to refuse by name."""
    if isinstance(x, LazyArray | tb.Tensor):
        return x
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, np.ndarray) or hasattr(x, "__array__"):
        a = np.asarray(x)
        return a if a.dtype.kind in "fiub" else _r_value(a.tolist(), where)
    if isinstance(x, Iterable) and not isinstance(x, str | bytes | dict | list):
        return _r_value(list(x), where)  # a factor: its labels
    return _r_value(x, where)


def make_distribution(name: str, params: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """``tensorbridge.<name>(**params, **options)`` with R data converted (see module docs).
    The spec checks the arguments as R gave them (naming them as R does) before any
    conversion: R has no checks of its own."""
    opts = {k: _r_value(v, f"{name}: {k}") for k, v in options.items() if v is not None}
    as_given = {k: _r_param(v, f"{name}: {front_door.door_name(k, 'r')}")
                for k, v in params.items()}
    front_door.check_distribution_args(name, (), {**as_given, **opts}, "r")  # every door's checks
    row = name in MULTIVARIATE
    args = {k: _r_array(v, f"{name}: {front_door.door_name(k, 'r')}", row=row)
            for k, v in params.items()}
    if "dim" in opts:  # greta's dim = n is an n x 1 column
        opts["dim"] = tuple(opts["dim"]) if isinstance(opts["dim"], list) else (opts["dim"],)
        opts["dim"] += (1,) * (len(opts["dim"]) == 1)
    if "truncation" in opts:
        opts["truncation"] = tuple(float(t) for t in opts["truncation"])
    if name == "multivariate_normal" and args.get("Sigma") is not None:
        sigma = args["Sigma"]
        if getattr(sigma, "ndim", 2) < 2:  # a 1 x 1 covariance given as an R scalar
            args["Sigma"] = np.full((1, 1), float(sigma))
    try:
        return lazy_out(getattr(tb, name)(**args, **opts))
    except tb.ShapeError as e:
        given = ", ".join([*args, *(["dim"] if "dim" in opts else [])])
        raise tb.ShapeError(f"{name}: the dimensions of {given} do not fit together: {e}") from None


# -- operations ---------------------------------------------------------------------------------
def op(name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """``tensorbridge.<name>(*args, **kwargs)`` on lazy arrays and R data."""
    fn = getattr(tb, name, None)
    if fn is None or not callable(fn):
        raise AttributeError(f"tensorbridge has no operation {name!r}")
    with warnings.catch_warnings():
        # the shape is found by running the op on reference values (zeros for variables):
        # 2 / x or log(x) there warns about a division by zero that no draw will see
        warnings.simplefilter("ignore", RuntimeWarning)
        return lazy_out(fn(*(_r_array(a, name) for a in args), **kwargs))


def bind(arrays: Any, axis: int, fn: str) -> dict[str, Any]:
    """R's ``cbind`` (axis 1), ``rbind`` (axis 0) and ``c`` (axis -1: each array flattened in
    column-major order to a column) of lazy arrays and R data; scalars and vectors are
    columns, as greta has them."""
    xs = []
    scalars = set()  # R numbers, recycled along the other dimension as cbind()/rbind() do
    for a in arrays:
        x = _r_array(a, fn)
        if isinstance(x, float):
            scalars.add(len(xs))
            x = np.full((1, 1), x)
        if x.ndim < 2:
            x = tb.reshape(x, (-1, 1))
        if axis == -1 and x.ndim > 1:
            x = tb.reshape(tb.transpose(x), (-1, 1))
        xs.append(x)
    if len(xs) == 1:
        return lazy_out(xs[0])
    along = 0 if axis == -1 else int(axis)
    sized = [x for i, x in enumerate(xs) if i not in scalars and x.ndim == 2]
    if axis != -1 and scalars and sized:
        n = sized[0].shape[1 - along]
        for i in scalars:
            xs[i] = np.full((n, 1) if along == 1 else (1, n), float(xs[i][0, 0]))
    other = [tuple(x.shape[:along]) + tuple(x.shape[along + 1:]) for x in xs]
    if len({len(x.shape) for x in xs}) != 1 or len(set(other)) != 1:
        shapes = ", ".join("x".join(str(d) for d in x.shape) for x in xs)
        what = "rows" if along == 1 else "columns"
        raise ValueError(f"{fn}: the arrays must have the same number of {what} "
                         f"(dimensions {shapes})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return lazy_out(tb.concat(xs, axis=along))


def subset(x: LazyArray, specs: Any, linear: bool) -> dict[str, Any]:
    """R's ``x[i]`` and ``x[i, j, ...]`` on a lazy array, by greta's rules (see
    :func:`api.r_subscript`, which tensors share)."""
    return lazy_out(r_subscript(x, specs, linear=linear, drop=False, greta=True))


# -- printing -----------------------------------------------------------------------------------
def info(x: LazyArray) -> dict[str, Any]:
    """What ``print()`` shows: the node kind, known-ness, distribution, support and, for known
    arrays, the values (as the Python printing does: numbers when known, ``?`` otherwise)."""
    node = x.node
    dist = node.distribution.family.name if node.distribution is not None else None
    support = str(node.constraint) if isinstance(node, VariableNode) else None
    values = np.asarray(x._primal.numpy()) if node.known else None
    return {"kind": node.kind, "known": bool(node.known), "distribution": dist,
            "support": support, "dtype": node.dtype.name, "values": values}


def assign_distribution(target: Any, dist: Any) -> None:
    if not isinstance(target, LazyArray):
        target = tb.as_data(_r_array(target, "distribution"))
    tb.distribution(target, dist)


def distribution_of(x: LazyArray) -> Any:
    return lazy_out(x) if x.node.distribution is not None else None


# -- models -------------------------------------------------------------------------------------
def build_model(targets: Any, names: Any, others: Any, precision: str = "double") -> Any:
    """A model of ``targets`` (lazy arrays) named ``names``.

    Every variable of the model gets a distinct name, so that draws hold each by name: a
    target's argument name first, else the name of an R object holding it in the calling
    environment (``others``: name -> lazy array), else a name it had before, else
    ``variable_<id>`` (as greta names arrays after the R objects at ``model()`` time).
    """
    targets = list(targets)
    names = [str(n) for n in ([names] if isinstance(names, str) else names)]
    m = tb.model(*targets, precision=precision)
    chosen: dict[VariableNode, str] = {}
    for t, n in zip(targets, names):
        if isinstance(t.node, VariableNode):
            chosen[t.node] = n
    used = set(chosen.values())
    in_model = set(m.variables)
    for n, x in sorted((others or {}).items()):
        v = x.node if isinstance(x, LazyArray) else None
        if v in in_model and v not in chosen and n not in used:
            chosen[v] = n
            used.add(n)
    front_door.name_variables(m, chosen)
    return m


# R's sampler arguments that are whole numbers (R gives doubles), and greta's R spellings
_WHOLE = {"max_depth", "n_leapfrog", "max_treedepth", "l_min", "l_max", "max_doublings"}
_FROM_R = {"Lmin": "l_min", "Lmax": "l_max"}


def sampler(kind: str, **kwargs: Any) -> Any:
    """The runtime's sampler ``kind`` (nuts, hmc, rwmh, slice) from R's arguments (NULL ones
    left to the runtime's defaults; ``diag_sd`` a number or a vector)."""
    args: dict[str, Any] = {}
    for k, v in kwargs.items():
        if v is None:
            continue
        k = _FROM_R.get(k, k)
        if k in _WHOLE:
            v = int(v)
        elif k == "diag_sd":
            v = [float(x) for x in np.atleast_1d(np.asarray(v, dtype=np.float64))]
        elif k != "proposal":
            v = float(v)
        args[k] = v
    return getattr(tb.ppl, kind)(**args)


def _shaped(value: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """An R value for an array of ``shape``: as is, or reshaped column-major if the size fits."""
    a = np.asarray(_no_na(value, what) if not isinstance(value, tb.Tensor) else value.numpy(),
                   dtype=np.float64)
    if a.shape == shape:
        return a
    if a.size == math.prod(shape):
        return a.reshape(shape, order="F")
    raise ValueError(f"{what}: expected {math.prod(shape)} values (shape {list(shape)}), got "
                     f"{a.size} (shape {list(a.shape)})")


def _initial_values(m: Any, initial_values: Any) -> Any:
    """``{name: value}`` (or a list of them, one per chain) -> ``{variable: value}``."""
    if initial_values is None:
        return None
    if isinstance(initial_values, (list, tuple)):
        return [_initial_values(m, iv) for iv in initial_values]
    by_name = dict(zip(m.variable_names(), m.variables))
    out = {}
    for k, v in initial_values.items():
        node = by_name.get(k)
        if node is None:
            raise ValueError(f"initial_values: the model has no variable '{k}'; its variables "
                             f"are {', '.join(by_name)}")
        out[_lazy(node)] = _shaped(v, node.shape, f"initial_values: '{k}'")
    return out


def sample(m: Any, sampler: Any, n_samples: int, warmup: int, chains: int, thin: int,
           seed: int, initial_values: Any, callback: Callable[[dict], Any] | None,
           callback_every: int, n_cores: Any = None, backend: str = "auto",
           cluster: Any = None) -> Any:
    """``mcmc()`` on R's main thread: progress goes to the R callback, a progress sink for this
    call fed the ``McmcProgress`` events' fields by their R names (snake_case) every
    ``callback_every`` iterations; a Ctrl-C ends the run with the draws taken so far
    (``Draws.interrupted``; R warns). ``n_cores`` (chains split over worker processes) is
    passed on only when given, as ``cluster`` (:func:`cluster`'s executor); ``backend`` is
    checked by ``mcmc``."""
    extra: dict[str, Any] = {} if n_cores is None else {"n_cores": int(n_cores)}
    if cluster is not None:
        extra["cluster"] = cluster
    every = int(callback_every)
    sink = None if callback is None else every_nth(
        lambda event: callback(event.as_dict("r", kind=False)), every, "pb_update")
    with warnings.catch_warnings(), progress_sinks(sink):
        # R warns about an interrupt itself; every other warning (staging falling back to
        # eager, ...) reaches the user
        warnings.filterwarnings("ignore", category=tb.SamplingInterrupted)
        return tb.mcmc(m, n_samples=int(n_samples), warmup=int(warmup), chains=int(chains),
                       sampler=sampler, initial_values=_initial_values(m, initial_values),
                       seed=int(seed), thin=int(thin), progress=False,
                       callback_every=every, backend=backend, **extra)


def cluster(address: str, chains_per_task: int) -> Any:
    """R's ``tb_cluster()``: the Dask executor for a scheduler address (connected to when
    ``mcmc`` runs, closed after it)."""
    return DaskCluster(str(address), chains_per_task=int(chains_per_task))


def _columns(arrays: list[np.ndarray]) -> np.ndarray:
    """Arrays ``(chains, draws, *shape)`` -> one F-ordered ``(draws, columns, chains)``, each
    target's elements in column-major order."""
    blocks = []
    for a in arrays:
        a = np.asarray(a, dtype=np.float64)
        chains, n = a.shape[:2]
        el = a.transpose(0, 1, *range(a.ndim - 1, 1, -1)).reshape(chains, n, -1)
        blocks.append(el)
    out = np.concatenate(blocks, axis=2) if blocks else np.zeros((0, 0, 0))
    return np.asfortranarray(out.transpose(1, 2, 0))


def draws_values(draws: Any, targets: Any) -> np.ndarray:
    """The values of ``targets`` at every draw, for R's ``mcmc.list``."""
    return calculate_draws(targets, draws)


def calculate_draws(targets: Any, draws: Any, cluster: Any = None) -> np.ndarray:
    """Targets at every draw; targets that depend on no variable are repeated. ``cluster``:
    R's ``tb_cluster()`` executor (blocks of draws as tasks), or None."""
    targets = list(targets)
    unknown = [t for t in targets if not t.node.known]
    extra = {} if cluster is None else {"cluster": cluster}
    at_draws = iter(tb.calculate(unknown, values=draws, **extra) if unknown else [])
    shape = (draws.chains, draws.n_draws)
    out = [next(at_draws) if not t.node.known else
           np.broadcast_to(np.asarray(t._primal.numpy()), (*shape, *t.shape)) for t in targets]
    return _columns(out)


def draws_info(draws: Any) -> dict[str, Any]:
    """Sampler statistics as ``(draws, chains)`` arrays, and the run's bookkeeping."""
    stats = {k: np.asfortranarray(np.asarray(v, dtype=np.float64).T)
             for k, v in draws.stats.items()}
    warm = draws.warmup
    return {"stats": stats, "divergences": int(draws.divergences),
            "warmup_divergences": int(warm.get("divergences", 0)),
            "step_size": np.asarray(warm.get("step_size", np.zeros(0)), dtype=np.float64),
            "interrupted": bool(draws.interrupted), "n_draws": int(draws.n_draws),
            "chains": int(draws.chains)}


def _feed(targets: Any, values: Any, by_name: Any) -> dict[Any, Any]:
    """``{lazy array: value}`` from pairs (lazy array, R value) and from values named after
    variables of the targets' graph (``by_name``, for names R found no lazy array for)."""
    feed = {}
    for x, v in values or []:
        feed[x] = _shaped(v, tuple(x.shape), "values")
    if by_name:
        # names are the runtime's decision, as in JS: an unknown one is an error naming it
        for k, x in front_door.variables_by_name(targets, by_name).items():
            feed[x] = _shaped(by_name[k], tuple(x.shape), f"values: '{k}'")
    return feed


def calculate_values(targets: Any, values: Any, by_name: Any = None) -> list[Any]:
    """Targets evaluated with ``values`` (see :func:`_feed`)."""
    targets = list(targets)
    feed = _feed(targets, values, by_name)
    out = tb.calculate(targets, values=feed)
    return [np.asarray(o.numpy()) for o in out]


def summarise(values: np.ndarray, names: Any) -> dict[str, Any]:
    """The runtime's summary (``Draws.summary()``: mean, sd, quantiles, rank-normalised R-hat,
    bulk and tail ESS) of the columns of an R array ``(draws, columns, chains)``."""
    names = [names] if isinstance(names, str) else list(names)
    a = np.asarray(values, dtype=np.float64)
    per = {n: np.ascontiguousarray(a[:, j, :].T) for j, n in enumerate(names)}
    d = Draws(per, np.zeros((a.shape[2], a.shape[0], 0)), {})
    s = d.summary()
    cols = s.columns
    out: dict[str, Any] = {"parameter": list(s.names)}
    for c in cols:
        out[c] = np.array([v[c] for _, v in s.rows], dtype=np.float64)
    return out


def optimiser(name: str, **parameters: Any) -> Any:
    """greta's optimiser object ``name`` (``adam``, ``bfgs``...) from R's arguments."""
    whole = {"maxcor", "maxls"}
    args = {k: (int(v) if k in whole else bool(v) if isinstance(v, bool) else float(v))
            for k, v in parameters.items()}
    return getattr(tb.ppl, name)(**args)


def extra(draws: Any, n_samples: int, thin: int, callback: Callable[[dict], Any] | None,
          callback_every: int) -> Any:
    """``extra_samples()`` on R's main thread, progress as in :func:`sample`."""
    every = int(callback_every)
    sink = None if callback is None else every_nth(
        lambda event: callback(event.as_dict("r", kind=False)), every, "pb_update")
    with warnings.catch_warnings(), progress_sinks(sink):
        warnings.filterwarnings("ignore", category=tb.SamplingInterrupted)
        return tb.extra_samples(draws, n_samples=int(n_samples), thin=int(thin),
                                progress=False, callback_every=every)


def optimise(m: Any, targets: Any, optimiser: Any, initial_values: Any, max_iterations: int,
             tolerance: float, learning_rate: float, adjust: bool, seed: Any) -> dict[str, Any]:
    res = tb.opt(m, optimiser=optimiser, initial_values=_initial_values(m, initial_values),
                 max_iterations=int(max_iterations), tolerance=float(tolerance),
                 learning_rate=float(learning_rate), adjust=bool(adjust),
                 seed=None if seed is None else int(seed))
    values = m.constrain(res.free)
    par = tb.calculate(list(targets), values=values)
    return {"par": [np.asarray(p.numpy()) for p in par], "value": float(res.value),
            "iterations": int(res.iterations), "converged": bool(res.converged)}


def simulate_values(targets: Any, nsim: int, seed: Any, values: Any,
                    by_name: Any = None) -> list[Any]:
    """``tensorbridge.simulate`` of ``targets`` (draws from the prior and prior predictive),
    with ``values`` (see :func:`_feed`) held fixed: arrays ``(nsim, *shape)``."""
    if not hasattr(tb, "simulate"):
        raise NotImplementedError("this version of the tensorbridge runtime has no simulate()")
    targets = list(targets)
    feed = _feed(targets, values, by_name)
    out = tb.simulate(targets, nsim=int(nsim), seed=None if seed is None else int(seed),
                      values=feed or None)
    return [np.asarray(o.numpy()) for o in out]


def simulate_draws(targets: Any, nsim: int, seed: Any, draws: Any,
                   cluster: Any = None) -> list[Any]:
    """The posterior predictive (greta's ``calculate(y, values = draws, nsim)``): ``targets``
    simulated ``nsim`` times, each from one randomly chosen posterior draw: ``(nsim, *shape)``.
    ``cluster``: R's ``tb_cluster()`` executor, or None."""
    extra = {} if cluster is None else {"cluster": cluster}
    out = tb.simulate(list(targets), nsim=int(nsim), seed=None if seed is None else int(seed),
                      values=draws, **extra)
    return [np.asarray(o.numpy()) for o in out]


def _r_columns(labels: list[str]) -> list[tuple[str, str]]:
    """Scalars' 0-based row-major Python labels (``theta[0,1]``) as R's columns: per array in
    column-major order with 1-based indices, a one-element array by its name (as ``mcmc``'s
    columns, ``ppl_names``): pairs (Python label, R label)."""
    groups: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for lab in labels:
        name, _, idx = lab.partition("[")
        groups.setdefault(name, []).append(
            (lab, tuple(int(i) for i in idx[:-1].split(",")) if idx else ()))
    out = []
    for name, items in groups.items():
        if len(items) == 1:
            out.append((items[0][0], name))
            continue
        for lab, idx in sorted(items, key=lambda it: it[1][::-1]):
            out.append((lab, f"{name}[{','.join(str(i + 1) for i in idx)}]"))
    return out


def sbc_run(m: Any, nsim: int, data: Any, parameters: Any, n_samples: int, warmup: int,
            chains: int, thin_to: int, bins: int, sampler: Any, backend: str, seed: int,
            alpha: float, cluster: Any, n_cores: Any, verbose: bool) -> dict[str, Any]:
    """R's ``sbc()``: ``tb.sbc`` with R's values, the result as plain values with R's 1-based
    labels (``ranks``: an integer matrix, replications by scalars)."""
    res = tb.sbc(m, int(nsim), data=data, parameters=parameters,
                 n_samples=int(n_samples), warmup=int(warmup), chains=int(chains),
                 thin_to=int(thin_to), bins=int(bins), sampler=sampler, backend=backend,
                 seed=int(seed), alpha=float(alpha), cluster=cluster,
                 n_cores=None if n_cores is None else int(n_cores), progress=bool(verbose))
    cols = _r_columns(res.names)
    py = [c[0] for c in cols]
    return {"names": [c[1] for c in cols],
            "ranks": np.asfortranarray(np.stack([res.ranks[n] for n in py], axis=1)
                                       .astype(np.int32)),
            "truth": np.asfortranarray(np.stack([res.truth[n] for n in py], axis=1)),
            "counts": np.asfortranarray(np.stack([res.counts[n] for n in py], axis=1)
                                        .astype(np.int32)),
            "p_values": np.array([res.p_values[n] for n in py]),
            "passed": [bool(res.passed[n]) for n in py], "threshold": res.threshold,
            "divergences": res.divergences.astype(np.int32), "ess_bulk_min": res.ess_bulk_min,
            "nsim": res.nsim, "thin_to": res.thin_to, "bins": res.bins,
            "seed": float(res.seed), "alpha": res.alpha, "wall_s": res.wall_s}


def model_arrays(m: Any, others: Any) -> list[str]:
    """Names among ``others`` (name -> lazy array) of the model's stochastic arrays: variables
    with a prior and data with a likelihood (what ``simulate(model)`` draws)."""
    in_model = set(m.order)
    out = []
    for n, x in (others or {}).items():
        node = x.node if isinstance(x, LazyArray) else None
        if node in in_model and node.distribution is not None and \
                node.distribution.target is node:
            out.append(n)
    return out
