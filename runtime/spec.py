"""The front-door spec: what every door (Python, R, JS) decides the same way, as data.

The R and JS packages are thin codecs over the runtime: they turn host values into runtime
values and back, and leave the decisions to this module:

* **Naming** — one rule: snake_case in Python and R, camelCase in JS (:func:`door_name`), with
  the exceptions kept as data (:data:`R_NAMES`: greta's names in R; a Python keyword escaped as
  ``lambda_`` is ``lambda`` in R and JS).
* **The distribution catalogue** — :data:`DISTRIBUTIONS`, read from the runtime's constructors:
  each argument's name, kind (:data:`ARG_KINDS`) and check (the family's ``param_checks``).
  :func:`check_distribution_args` checks a call and names the argument it refuses. The kinds,
  :func:`check_arg` and :func:`door_name` live below the distributions
  (``runtime/argument_checks.py``) and the catalogue next to them
  (``runtime/ppl/distributions``: ``CATALOGUE``), so the Python door's constructors run the
  same checks at entry, with the same words: this module is the other doors' view of them.
* **Variables and data** — :data:`VARIABLES`: ``variable``, ``ordered_variable``,
  ``simplex_variable``, ``cholesky_variable`` and ``as_data``, each argument's name, kind and
  the bounds that must be ordered (``runtime/graph/nodes.py``, where the Python functions check
  their arguments at entry with them); :func:`check_call` is how the R and JS doors check a
  call before making it, naming a wrong argument as the door spells it.
* **Options** — of the sampler kernels, ``mcmc``, ``opt`` and ``fit`` (:data:`OPTIONS`), read
  from the signatures of the runtime functions, with the ones no door exposes (:data:`INTERNAL`).
* **Variable naming** — :func:`name_variables`: every variable of a model gets a distinct name
  (the one a door chose, else its own, else its label ``variable_<id>``), so draws and
  ``calculate`` find each by name.
* **Values by name** — :func:`variables_by_name` (the graph's, re-exported):
  ``calculate(x, values={"mu": 1})`` finds the variable called ``mu`` among the targets'
  ancestors, and an unknown name is an error naming it, in every door.

* **The whole spec as JSON** — :func:`as_dict`: what the doors' own drift tests
  (``r-client/tests/testthat/test-front-door-spec.R``,
  ``js-client/test/node/front_door_spec.test.mjs``) ask the runtime for, to compare with the
  installed R package and the loaded JS client.

Nothing here knows R or JS values.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from typing import Any

from . import layers as _layers_mod
from .argument_checks import (
    ARG_KINDS,
    CAMEL,
    R_NAMES,
    SNAKE,
    ArgSpec,
    DistributionSpec,
    FunctionSpec,
    check_arg,
    door_name,
    signature_args,
)
from .argument_checks import check_call as _check_call
from .graph.model_compiler import calculate, variables_by_name
from .graph.nodes import VARIABLES
from .graph.simulate import simulate
from .layers import Model
from .ode import ode_solve
from .ppl import distributions as _distributions
from .ppl import extra_samples, hmc, mcmc, nuts, opt, rwmh, sbc, slice
from .ppl import map as tb_map
from .ppl import optimisers as _optimisers

__all__ = [
    "ARG_KINDS",
    "CAMEL",
    "DISTRIBUTIONS",
    "INTERNAL",
    "NOT_IN_DOOR",
    "OPTIONS",
    "R_NAMES",
    "SNAKE",
    "ArgSpec",
    "DistributionSpec",
    "FunctionSpec",
    "VARIABLES",
    "as_dict",
    "check_arg",
    "check_call",
    "check_distribution_args",
    "door_name",
    "name_variables",
    "variables_by_name",
]

# -- the distribution catalogue ----------------------------------------------------------------
# Naming (door_name, R_NAMES), the argument kinds (ARG_KINDS) and check_arg live in
# runtime/argument_checks.py, and the catalogue next to the constructors, which check their own
# arguments at entry with it (the Python door): here they are the doors' view of the same data.
DISTRIBUTIONS: tuple[DistributionSpec, ...] = _distributions.CATALOGUE
_BY_NAME = {s.name: s for s in DISTRIBUTIONS}


def check_distribution_args(name: str, args: Sequence[Any], kwargs: dict[str, Any],
                            door: str = "python") -> dict[str, Any]:
    """The arguments of ``<name>(*args, **kwargs)`` (Python names) by name, each checked
    against its kind; a wrong one is named as ``door`` spells it (``multivariateNormal:
    nRealisations must be a positive whole number, got int 0`` in JS)."""
    spec = _BY_NAME.get(name)
    if spec is None:
        raise ValueError(f"no distribution {door_name(name, door)!r}; the distributions are "
                         f"{', '.join(door_name(n, door) for n in _BY_NAME)}")
    try:
        bound = inspect.signature(getattr(_distributions, name)).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{door_name(name, door)}: {e}") from None
    kinds = {a.name: a.kind for a in spec.args}
    for arg, v in bound.arguments.items():
        check_arg(name, arg, kinds[arg], v, door)
    for a in spec.params:  # then the known values (sd > 0...), named for the door too
        v = bound.arguments.get(a.name)
        if v is not None and a.kind == "array":
            _distributions.check_value(name, a.name, a.check, v, door)
    return dict(bound.arguments)


# -- variables and data ------------------------------------------------------------------------
_FUNCTIONS = {s.name: s for s in VARIABLES}


def check_call(name: str, kwargs: dict[str, Any], door: str = "python") -> None:
    """Check the arguments (Python names -> values, as the door received them) of the
    front-door function ``name`` (one of :data:`VARIABLES`), naming a wrong one as ``door``
    spells it: ``variable: lower must be less than upper, got lower = 1, upper = 0``."""
    spec = _FUNCTIONS.get(name)
    if spec is None:
        raise ValueError(f"no front-door function {name!r}; they are {', '.join(_FUNCTIONS)}")
    unknown = set(kwargs) - {a.name for a in spec.args}
    if unknown:
        raise TypeError(f"{door_name(name, door)}: unknown argument "
                        f"{', '.join(sorted(spec.arg_name(u, door) for u in unknown))}")
    _check_call(spec, kwargs, door)


# -- options -----------------------------------------------------------------------------------
def _options() -> dict[str, tuple[str, ...]]:
    return {
        "nuts": tuple(n for n, _ in signature_args(nuts)),
        "hmc": tuple(n for n, _ in signature_args(hmc)),
        "rwmh": tuple(n for n, _ in signature_args(rwmh)),
        "slice": tuple(n for n, _ in signature_args(slice)),
        "extra_samples": tuple(n for n, _ in signature_args(extra_samples, skip=("draws",))),
        "mcmc": tuple(n for n, _ in signature_args(mcmc, skip=("model",))),
        "opt": tuple(n for n, _ in signature_args(opt, skip=("model",))),
        "fit": tuple(n for n, _ in signature_args(Model.fit, skip=("self",))),
        # issue 17: simulation-based calibration, sweeps, and calculate/simulate over draws on
        # an executor (R's calculate() is greta's: it simulates too, given nsim)
        "sbc": tuple(n for n, _ in signature_args(sbc, skip=("model",))),
        "map": tuple(n for n, _ in signature_args(tb_map, skip=("fn", "datasets"))),
        "calculate": tuple(n for n, _ in signature_args(calculate, skip=("targets",))),
        "simulate": tuple(n for n, _ in signature_args(simulate, skip=("targets",))),
        # issue 16: ODEs (y0, times and the right-hand side's arguments are positional)
        "ode_solve": tuple(n for n, _ in signature_args(ode_solve, skip=("fn", "y0", "times"))),
        # greta's optimiser objects for opt(optimiser=)
        **{o: tuple(n for n, _ in signature_args(getattr(_optimisers, o)))
           for o in _optimisers.OPTIMISERS},
    }


# function -> its options, in signature order (the runtime's signatures are the spec)
OPTIONS: dict[str, tuple[str, ...]] = _options()

# per door, the functions of OPTIONS it does not offer at all, and why (their options are then
# INTERNAL to that door too)
NOT_IN_DOOR: dict[str, dict[str, str]] = {
    "r": {"map": "an R function cannot run in tensorbridge's Python workers; R's own parallel "
                 "or future packages map R functions"},
    "js": {"sbc": "NumPy-based and nsim full mcmc fits: the JS door's runtime has no NumPy and "
                  "a page no cluster; run sbc from Python or R",
           "map": "a JS function cannot run in tensorbridge's Python workers, and Pyodide has "
                  "no processes or sockets to a Dask scheduler"},
}

# per door, the options it does not take by that name, and why: the door provides them itself
# (the variable functions' too: R takes greta's arguments only, and names variables after its
# objects; the backend is the door's own, and the upper Cholesky factor is what R's door makes)
_R_VARIABLE = frozenset({"dtype", "name", "backend"})
INTERNAL: dict[str, dict[str, frozenset[str]]] = {
    # R's mcmc reports progress through its own bar (verbose/pb_update) and Ctrl-C
    "r": {"mcmc": frozenset({"callback", "should_stop"}),
          "extra_samples": frozenset({"callback", "should_stop"}),
          "variable": _R_VARIABLE, "ordered_variable": _R_VARIABLE,
          "simplex_variable": _R_VARIABLE, "cholesky_variable": _R_VARIABLE | {"upper"},
          "as_data": _R_VARIABLE},
    # JS: onProgress and an AbortSignal stand for callback and should_stop; no progress bar;
    # Pyodide has no processes to split chains over (n_cores) and no socket to reach a Dask
    # scheduler from a page or a worker (cluster: issue 17 documents it as not applicable)
    "js": {"mcmc": frozenset({"callback", "should_stop", "progress", "n_cores", "cluster"}),
           "extra_samples": frozenset({"callback", "should_stop", "progress"}),
           "fit": frozenset({"verbose"}),
           "calculate": frozenset({"cluster"}), "simulate": frozenset({"cluster"}),
           **{v.name: frozenset({"backend"}) for v in VARIABLES},
           "cholesky_variable": frozenset({"backend", "upper"})},
}

for _door, _fns in NOT_IN_DOOR.items():
    for _fn in _fns:
        INTERNAL[_door][_fn] = frozenset(OPTIONS[_fn])


# -- variable naming ---------------------------------------------------------------------------
def name_variables(m: Any, chosen: dict[Any, str] | None = None) -> None:
    """Give every variable of model ``m`` a distinct name: ``chosen`` (variable node -> name,
    what the door found: R's argument and object names, JS's keys), else the name it had if no
    other variable took it, else its label (``variable_<id>``)."""
    chosen = dict(chosen or {})
    used = set(chosen.values())
    for v in m.variables:
        if v not in chosen and v.name is not None and v.name not in used:
            chosen[v] = v.name
            used.add(v.name)
    for v in m.variables:
        v.name = chosen.get(v) or f"{v.kind}_{v.id}"



# -- the spec as data the doors can read --------------------------------------------------------
def _layers() -> list[str]:
    """The runtime's layer classes that every door makes (models, the base class and Input's
    layer are not layers a door makes by name)."""
    skip = {"Layer", "Model", "Sequential", "InputLayer"}
    return [n for n in _layers_mod.__all__ if n not in skip
            and isinstance(getattr(_layers_mod, n), type)
            and issubclass(getattr(_layers_mod, n), _layers_mod.Layer)]


def _arg(a: ArgSpec, fn: str, door_names: Any = None) -> dict[str, Any]:
    names = {d: (door_names or {}).get(a.name, {}).get(d) or door_name(a.name, d)
             for d in ("python", "r", "js")}
    return {"name": a.name, "kind": a.kind, "required": a.required, "check": a.check,
            "names": names}


def as_dict() -> dict[str, Any]:
    """The front-door spec as JSON-able data, each name also as every door spells it:
    ``{"distributions": [...], "variables": [...], "options": {...}, "internal": {...},
    "layers": [...], "kinds": {kind: what}}`` (lists of plain dicts, strings and bools)."""
    def names(n: str) -> dict[str, str]:
        return {d: door_name(n, d) for d in ("python", "r", "js")}

    return {
        "distributions": [
            {"name": d.name, "names": names(d.name), "multivariate": d.multivariate,
             "params": [_arg(a, d.name) for a in d.params],
             "options": [_arg(a, d.name) for a in d.options]}
            for d in DISTRIBUTIONS],
        "variables": [
            {"name": f.name, "names": names(f.name),
             "args": [_arg(a, f.name, f.door_names) for a in f.args],
             "less_than": [list(p) for p in f.less_than]}
            for f in VARIABLES],
        "options": {fn: [{"name": o, "names": names(o)} for o in opts]
                    for fn, opts in OPTIONS.items()},
        "internal": {door: {fn: sorted(v) for fn, v in t.items()}
                     for door, t in INTERNAL.items()},
        "not_in_door": {door: dict(t) for door, t in NOT_IN_DOOR.items()},
        "layers": [{"name": c, "names": {"python": c, "r": "layer_" + _snake(c),
                                         "js": door_name(_snake(c), "js")}}
                   for c in _layers()],
        "kinds": {k: what for k, (_, what) in ARG_KINDS.items()},
    }


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
