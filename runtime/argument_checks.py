"""Argument kinds and their checks, as data: the words every door (Python, R, JS) shows when a
front-door function refuses an argument ("normal: mean must be a number, an array, a tensor or
a lazy array, got str 'x'").

This module sits at the bottom of the runtime (it imports nothing of the package, nor NumPy:
the JS door runs the runtime in Pyodide), so the distribution constructors check their own
arguments with it (``runtime/ppl/distributions``), and the front-door spec (``runtime/spec.py``)
shows the same catalogue to the R and JS doors:

* **Naming** — :func:`door_name`: snake_case in Python and R, camelCase in JS, with the
  exceptions kept as data (:data:`R_NAMES`; a keyword escape ``lambda_`` is ``lambda``).
* **Kinds** — :data:`ARG_KINDS` (kind -> test and what the argument must be) and
  :func:`check_arg`, which raises naming the function and the argument as the door spells them.
* **A catalogue** — :class:`ArgSpec` and :class:`DistributionSpec`, read from a constructor's
  signature by :func:`distribution_spec`; :func:`arg_tests` turns a catalogue into the tables
  :func:`check_values` runs at the entry of every constructor (a few isinstance tests per
  argument).
"""

from __future__ import annotations

import inspect
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ARG_KINDS",
    "CAMEL",
    "OPTION_KINDS",
    "R_NAMES",
    "SNAKE",
    "ArgSpec",
    "DistributionSpec",
    "arg_tests",
    "check_arg",
    "check_values",
    "distribution_spec",
    "door_name",
    "signature_args",
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
def _is_whole(d: Any) -> bool:
    """A positive whole number: an int, or an integer scalar of an array library (``__index__``),
    never a bool or a float."""
    if isinstance(d, bool):
        return False
    if isinstance(d, int):
        return d >= 1
    try:
        return operator.index(d) >= 1
    except TypeError:
        return False


def _is_shape(v: Any) -> bool:
    if type(v) is int:  # the common case, first
        return v >= 1
    dims = v if isinstance(v, (list, tuple)) else (v,)
    return bool(dims) and all(_is_whole(d) for d in dims)


def _is_pair(v: Any) -> bool:
    if not (isinstance(v, (list, tuple)) and len(v) == 2):
        return False
    try:
        lo, hi = float(v[0]), float(v[1])
    except (TypeError, ValueError):
        return False
    return not (math.isnan(lo) or math.isnan(hi))


_NOT_ARRAYS = (str, bytes, dict, bool)
_NOT_ELEMENTS = (str, dict)


def _is_array_like(v: Any) -> bool:
    t = type(v)
    if t is float or t is int:  # the common case, first
        return True
    if isinstance(v, _NOT_ARRAYS):
        return False
    return not (isinstance(v, (list, tuple)) and any(isinstance(e, _NOT_ELEMENTS) for e in v))


def _is_name(v: Any) -> bool:
    return isinstance(v, str)


# kind -> (test, what it must be): the words every door shows in "<fn>: <arg> must be <what>"
ARG_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "array": (_is_array_like, "a number, an array, a tensor or a lazy array"),
    "shape": (_is_shape, "a positive integer or a list of them (a shape)"),
    "interval": (_is_pair, "two numbers [lower, upper]"),
    "count": (_is_whole, "a positive whole number"),
    "name": (_is_name, "a string"),
}

# the error class of a refused kind: a value of the wrong type, or a wrong value
_TYPE_KINDS = frozenset({"array", "name"})

# options of the distribution constructors, by name (every other argument is a parameter)
OPTION_KINDS: dict[str, str] = {"dim": "shape", "truncation": "interval",
                                "n_realisations": "count", "dimension": "count"}


def _describe(v: Any) -> str:
    return f"{type(v).__name__} {v!r}"


def check_arg(fn: str, arg: str, kind: str, value: Any, door: str = "python") -> None:
    """Raise, naming ``fn`` and ``arg`` as ``door`` spells them (:func:`door_name`), when
    ``value`` is not of ``kind`` (:data:`ARG_KINDS`): TypeError for a value of the wrong type
    (kinds "array" and "name"), ValueError for a wrong value. ``None`` (not given) passes."""
    if value is None:
        return
    test, what = ARG_KINDS[kind]
    if not test(value):
        cls = TypeError if kind in _TYPE_KINDS else ValueError
        raise cls(f"{door_name(fn, door)}: {door_name(arg, door)} must be {what}, got "
                  f"{_describe(value)}")


# -- a catalogue -------------------------------------------------------------------------------
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


def signature_args(fn: Callable[..., Any], skip: Iterable[str] = ()) -> list[tuple[str, bool]]:
    """``(name, required)`` of each named argument of ``fn``, in signature order."""
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name in skip or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out.append((p.name, p.default is inspect.Parameter.empty))
    return out


def distribution_spec(name: str, fn: Callable[..., Any],
                      checks: dict[str, str] | None = None) -> DistributionSpec:
    """The spec of constructor ``fn``, read from its signature: the options are the arguments
    named in :data:`OPTION_KINDS`, every other argument is a parameter of kind "array" (with
    its value check from ``checks``, a family's ``param_checks``)."""
    checks = checks or {}
    params, options = [], []
    for arg, required in signature_args(fn):
        if arg in OPTION_KINDS:
            options.append(ArgSpec(arg, OPTION_KINDS[arg], False))
        else:
            params.append(ArgSpec(arg, "array", required, checks.get(arg)))
    return DistributionSpec(name, tuple(params), tuple(options))


# name -> ((arg, kind, test), ...) in signature order: what check_values runs
ArgTests = dict[str, tuple[tuple[str, str, Callable[[Any], bool]], ...]]


def arg_tests(specs: Iterable[DistributionSpec],
              functions: Mapping[str, Callable[..., Any]]) -> ArgTests:
    """The tables :func:`check_values` runs, from a catalogue and its constructors (by name):
    each constructor's arguments in its signature's order (a spec lists the parameters first,
    then the options; ``multivariate_normal``'s keyword ``cholesky`` comes last in its
    signature)."""
    out: ArgTests = {}
    for s in specs:
        kinds = {a.name: a.kind for a in s.args}
        out[s.name] = tuple((n, kinds[n], ARG_KINDS[kinds[n]][0])
                            for n, _ in signature_args(functions[s.name]))
    return out


def check_values(tests: ArgTests, fn: str, values: Sequence[Any]) -> None:
    """Check the arguments of ``fn`` given in signature order (``values``) against their kinds
    (``tests``, from :func:`arg_tests`); the first wrong one raises as :func:`check_arg` does,
    with its Python name."""
    for (arg, kind, test), v in zip(tests[fn], values):
        if v is not None and not test(v):
            check_arg(fn, arg, kind, v)
