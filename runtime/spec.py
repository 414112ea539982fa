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
* **Options** — of the sampler kernels, ``mcmc``, ``opt`` and ``fit`` (:data:`OPTIONS`), read
  from the signatures of the runtime functions, with the ones no door exposes (:data:`INTERNAL`).
* **Variable naming** — :func:`name_variables`: every variable of a model gets a distinct name
  (the one a door chose, else its own, else its label ``variable_<id>``), so draws and
  ``calculate`` find each by name.
* **Values by name** — :func:`variables_by_name` (the graph's, re-exported):
  ``calculate(x, values={"mu": 1})`` finds the variable called ``mu`` among the targets'
  ancestors, and an unknown name is an error naming it, in every door.

Nothing here knows R or JS values; ``tests/bridge/test_front_door_spec.py`` fails when a door
lacks a distribution or an option of the spec, or names one against the rule.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from .argument_checks import (
    ARG_KINDS,
    CAMEL,
    R_NAMES,
    SNAKE,
    ArgSpec,
    DistributionSpec,
    check_arg,
    door_name,
    signature_args,
)
from .graph.model_compiler import variables_by_name
from .layers import Model
from .ppl import distributions as _distributions
from .ppl import hmc, mcmc, nuts, opt

__all__ = [
    "ARG_KINDS",
    "CAMEL",
    "DISTRIBUTIONS",
    "INTERNAL",
    "OPTIONS",
    "R_NAMES",
    "SNAKE",
    "ArgSpec",
    "DistributionSpec",
    "check_arg",
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
    return dict(bound.arguments)


# -- options -----------------------------------------------------------------------------------
def _options() -> dict[str, tuple[str, ...]]:
    return {
        "nuts": tuple(n for n, _ in signature_args(nuts)),
        "hmc": tuple(n for n, _ in signature_args(hmc)),
        "mcmc": tuple(n for n, _ in signature_args(mcmc, skip=("model",))),
        "opt": tuple(n for n, _ in signature_args(opt, skip=("model",))),
        "fit": tuple(n for n, _ in signature_args(Model.fit, skip=("self",))),
    }


# function -> its options, in signature order (the runtime's signatures are the spec)
OPTIONS: dict[str, tuple[str, ...]] = _options()

# per door, the options it does not take by that name, and why: the door provides them itself
INTERNAL: dict[str, dict[str, frozenset[str]]] = {
    # R's mcmc reports progress through its own bar (verbose/pb_update) and Ctrl-C
    "r": {"mcmc": frozenset({"callback", "should_stop"})},
    # JS: onProgress and an AbortSignal stand for callback and should_stop; no progress bar;
    # Pyodide has no processes to split chains over (n_cores)
    "js": {"mcmc": frozenset({"callback", "should_stop", "progress", "n_cores"}),
           "fit": frozenset({"verbose"})},
}


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

