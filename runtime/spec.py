"""The front-door spec: what every door (Python, R, JS) decides the same way, as data.

The R and JS packages are thin codecs over the runtime: they turn host values into runtime
values and back, and leave the decisions to this module:

* **Naming** — one rule: snake_case in Python and R, camelCase in JS (:func:`door_name`), with
  the exceptions kept as data (:data:`R_NAMES`: greta's names in R; a Python keyword escaped as
  ``lambda_`` is ``lambda`` in R and JS).
* **The distribution catalogue** — :data:`DISTRIBUTIONS`, read from the runtime's constructors:
  each argument's name, kind (:data:`ARG_KINDS`) and check (the family's ``param_checks``).
  :func:`check_distribution_args` checks a call and names the argument it refuses.
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
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .graph.model_compiler import variables_by_name
from .layers import Model
from .ppl import distributions as _distributions
from .ppl import hmc, mcmc, nuts, opt
from .ppl.distributions import families as _families

__all__ = [
    "ARG_KINDS",
    "DISTRIBUTIONS",
    "INTERNAL",
    "OPTIONS",
    "R_NAMES",
    "ArgSpec",
    "DistributionSpec",
    "check_arg",
    "check_distribution_args",
    "door_name",
    "name_variables",
    "variables_by_name",
]

# -- naming ------------------------------------------------------------------------------------
# Python names whose R name is greta's rather than the rule's (mcmc's progress options)
R_NAMES: dict[str, str] = {"callback_every": "pb_update", "progress": "verbose"}


def door_name(name: str, door: str) -> str:
    """The name of a Python argument or function in ``door`` ("python", "r" or "js"):
    snake_case in Python and R, camelCase in JS; a keyword escape (``lambda_``) is dropped."""
    if door == "python":
        return name
    base = name[:-1] if name.endswith("_") else name
    if door == "r":
        return R_NAMES.get(name, base)
    if door == "js":
        head, *rest = base.split("_")
        return head + "".join(p[:1].upper() + p[1:] for p in rest)
    raise ValueError(f"door: expected 'python', 'r' or 'js', got {door!r}")


SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$|^Sigma$")  # greta's Sigma is kept
CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$|^Sigma$")


# -- argument kinds and checks -----------------------------------------------------------------
def _is_shape(v: Any) -> bool:
    dims = v if isinstance(v, list | tuple) else [v]
    return bool(dims) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 1
                              for d in dims)


def _is_pair(v: Any) -> bool:
    if not (isinstance(v, list | tuple) and len(v) == 2):
        return False
    try:
        lo, hi = (float(t) for t in v)
    except (TypeError, ValueError):
        return False
    return not (math.isnan(lo) or math.isnan(hi))


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _is_array_like(v: Any) -> bool:
    if isinstance(v, str | bytes | dict | bool):
        return False
    return not (isinstance(v, list | tuple) and any(isinstance(e, str | dict) for e in v))


# kind -> (test, what it must be): the words every door shows in "<fn>: <arg> must be <what>"
ARG_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "array": (_is_array_like, "a number, an array, a tensor or a lazy array"),
    "shape": (_is_shape, "a positive integer or a list of them (a shape)"),
    "interval": (_is_pair, "two numbers [lower, upper]"),
    "count": (_is_count, "a positive whole number"),
    "name": (lambda v: isinstance(v, str), "a string"),
}

# options of the distribution constructors, by name (every other argument is a parameter)
_OPTION_KINDS = {"dim": "shape", "truncation": "interval", "n_realisations": "count",
                 "dimension": "count"}


def _describe(v: Any) -> str:
    return f"{type(v).__name__} {v!r}"


def check_arg(fn: str, arg: str, kind: str, value: Any, door: str = "python") -> None:
    """Raise, naming ``fn`` and ``arg`` as ``door`` spells them (:func:`door_name`), when
    ``value`` is not of ``kind`` (:data:`ARG_KINDS`). ``None`` (not given) passes."""
    if value is None:
        return
    test, what = ARG_KINDS[kind]
    if not test(value):
        cls = TypeError if kind in ("array", "name") else ValueError
        raise cls(f"{door_name(fn, door)}: {door_name(arg, door)} must be {what}, got "
                  f"{_describe(value)}")


@dataclass(frozen=True)
class ArgSpec:
    """One argument: its Python name, its kind (:data:`ARG_KINDS`), whether it is required, and
    the check of its values when known (a family's ``param_checks``: "positive", "unit"...)."""

    name: str
    kind: str
    required: bool
    check: str | None = None


@dataclass(frozen=True)
class DistributionSpec:
    """A distribution constructor: its parameters and options, in signature order."""

    name: str
    params: tuple[ArgSpec, ...]
    options: tuple[ArgSpec, ...]

    @property
    def args(self) -> tuple[ArgSpec, ...]:
        return self.params + self.options

    @property
    def multivariate(self) -> bool:
        """The event is on the last axis (the family takes ``dimension``)."""
        return any(a.name == "dimension" for a in self.options)


def _signature_args(fn: Callable[..., Any], skip: Iterable[str] = ()) -> list[tuple[str, bool]]:
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name in skip or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out.append((p.name, p.default is inspect.Parameter.empty))
    return out


def _family_checks() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for obj in vars(_families).values():
        name = getattr(obj, "name", None)
        if isinstance(obj, type) and isinstance(name, str):
            out[name] = dict(getattr(obj, "param_checks", ()))
    return out


def _catalogue() -> tuple[DistributionSpec, ...]:
    checks = _family_checks()
    specs = []
    for name in _distributions.DISTRIBUTIONS:
        params, options = [], []
        for arg, required in _signature_args(getattr(_distributions, name)):
            if arg in _OPTION_KINDS:
                options.append(ArgSpec(arg, _OPTION_KINDS[arg], False))
            else:
                params.append(ArgSpec(arg, "array", required, checks.get(name, {}).get(arg)))
        specs.append(DistributionSpec(name, tuple(params), tuple(options)))
    return tuple(specs)


DISTRIBUTIONS: tuple[DistributionSpec, ...] = _catalogue()
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
        "nuts": tuple(n for n, _ in _signature_args(nuts)),
        "hmc": tuple(n for n, _ in _signature_args(hmc)),
        "mcmc": tuple(n for n, _ in _signature_args(mcmc, skip=("model",))),
        "opt": tuple(n for n, _ in _signature_args(opt, skip=("model",))),
        "fit": tuple(n for n, _ in _signature_args(Model.fit, skip=("self",))),
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

