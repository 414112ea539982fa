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
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ARG_KINDS",
    "CAMEL",
    "OPTION_KINDS",
    "R_NAMES",
    "SNAKE",
    "ArgSpec",
    "DistributionSpec",
    "FunctionSpec",
    "arg_tests",
    "check_call",
    "check_arg",
    "check_values",
    "distribution_spec",
    "door_name",
    "signature_args",
]

# -- naming ------------------------------------------------------------------------------------
# Python names whose R name is greta's rather than the rule's (mcmc's progress options), or
# that would mask base R (scan() reads files: tensorbridge's is tb_scan())
R_NAMES: dict[str, str] = {"callback_every": "pb_update", "progress": "verbose",
                           "scan": "tb_scan", "l_min": "Lmin", "l_max": "Lmax"}


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


# greta's Sigma (and hmc's Lmin, Lmax in R) are kept
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$|^Sigma$|^Lm(in|ax)$")
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


def _is_scalar(v: Any) -> bool:
    """One number: a Python or array-library number, or an array, tensor or lazy array of one
    element (greta's "a scalar value or a scalar greta array"); never a bool or a string."""
    if isinstance(v, (bool, str, bytes, dict)):
        return False
    if isinstance(v, (int, float)):
        return True
    shape = getattr(v, "shape", None)
    if shape is not None and not isinstance(v, (list, tuple)):
        return math.prod(int(d) for d in shape) == 1
    if isinstance(v, (list, tuple)):
        return len(v) == 1 and _is_scalar(v[0])
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _is_name(v: Any) -> bool:
    return isinstance(v, str)


def _is_dims(v: Any) -> bool:
    """A shape that may be empty (a scalar) or hold zeros: ``()``, ``3``, ``[2, 0]``."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (list, tuple)):
        return all(_is_whole(d) or _is_zero(d) for d in v)
    return _is_whole(v) or _is_zero(v)


def _is_zero(d: Any) -> bool:
    if isinstance(d, bool):
        return False
    try:
        return operator.index(d) == 0
    except TypeError:
        return False


def _flat_numbers(v: Any) -> list[float] | None:
    """The numbers of a number or a (nested) array of numbers, flat in C order; None when
    something in it is not a number (a bool, a string...). Arrays of any library (``tolist``)."""
    if isinstance(v, (bool, str, bytes, dict)):
        return None
    if type(v) is not list and type(v) is not tuple and hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        out: list[float] = []
        for e in v:
            sub = _flat_numbers(e)
            if sub is None:
                return None
            out += sub
        return out
    if isinstance(v, (bool, str, bytes, dict)):  # a bool array's tolist()
        return None
    try:
        return [float(v)]
    except (TypeError, ValueError):
        return None


def _is_bounds(v: Any) -> bool:
    nums = _flat_numbers(v)
    return nums is not None and bool(nums) and not any(math.isnan(x) for x in nums)


def _is_dtype(v: Any) -> bool:
    return isinstance(v, (str, type)) or hasattr(v, "kind")


# kind -> (test, what it must be): the words every door shows in "<fn>: <arg> must be <what>"
ARG_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "array": (_is_array_like, "a number, an array, a tensor or a lazy array"),
    "shape": (_is_shape, "a positive integer or a list of them (a shape)"),
    "interval": (_is_pair, "two numbers [lower, upper]"),
    "count": (_is_whole, "a positive whole number"),
    "scalar": (_is_scalar, "a single number (a scalar)"),
    "name": (_is_name, "a string"),
    "dims": (_is_dims, "a non-negative whole number or a list of them (a shape)"),
    "bounds": (_is_bounds, "a number or an array of numbers (not NaN)"),
    "dtype": (_is_dtype, "a dtype or its name"),
    "flag": (lambda v: isinstance(v, bool), "TRUE/FALSE (a bool)"),
    "backend": (lambda v: isinstance(v, str) or hasattr(v, "name"), "a backend or its name"),
}

# the error class of a refused kind: a value of the wrong type, or a wrong value
_TYPE_KINDS = frozenset({"array", "name", "dtype", "flag", "backend"})

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
                      checks: dict[str, str] | None = None,
                      kinds: dict[str, str] | None = None) -> DistributionSpec:
    """The spec of constructor ``fn``, read from its signature: the options are the arguments
    named in :data:`OPTION_KINDS`, every other argument is a parameter of kind "array" or its
    kind in ``kinds`` (a family's ``param_kinds``), with its value check from ``checks`` (a
    family's ``param_checks``)."""
    checks, kinds = checks or {}, kinds or {}
    params, options = [], []
    for arg, required in signature_args(fn):
        if arg in OPTION_KINDS:
            options.append(ArgSpec(arg, OPTION_KINDS[arg], False))
        else:
            # a parameter is an array, unless the family says otherwise ("scalar")
            params.append(ArgSpec(arg, kinds.get(arg, "array"), required, checks.get(arg)))
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


# -- other front-door functions (variables, data) ----------------------------------------------
@dataclass(frozen=True)
class FunctionSpec:
    """A front-door function other than a distribution (``variable``, ``as_data``...): its
    arguments in signature order, the pairs ``(a, b)`` whose values must satisfy ``a < b``
    elementwise (broadcast against each other), and the arguments a door names otherwise than
    the rule (``{"value": {"r": "x"}}``: greta's ``as_data(x)``)."""

    name: str
    args: tuple[ArgSpec, ...]
    less_than: tuple[tuple[str, str], ...] = ()
    door_names: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def arg_name(self, arg: str, door: str) -> str:
        return self.door_names.get(arg, {}).get(door) or door_name(arg, door)


def _shape_of(v: Any) -> tuple[int, ...]:
    if type(v) is not list and type(v) is not tuple and hasattr(v, "shape"):
        return tuple(int(d) for d in v.shape)
    if isinstance(v, (list, tuple)):
        return (len(v), *(_shape_of(v[0]) if v else ()))
    return ()


def _pairs(a: Any, b: Any) -> list[tuple[float, float]] | None:
    """``a`` and ``b`` broadcast against each other, element by element (None when their
    shapes do not broadcast: the function's own check says so)."""
    fa, fb = _flat_numbers(a) or [], _flat_numbers(b) or []
    sa, sb = _shape_of(a), _shape_of(b)
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    out_shape = []
    for x, y in zip(sa, sb):
        if x != y and 1 not in (x, y):
            return None
        out_shape.append(max(x, y) if 0 not in (x, y) else 0)
    if len(fa) != math.prod(sa) or len(fb) != math.prod(sb):
        return None  # ragged
    out = []
    for flat in range(math.prod(out_shape)):
        ia = ib = 0
        for d, size in enumerate(out_shape):
            idx = (flat // math.prod(out_shape[d + 1:])) % size
            ia = ia * sa[d] + (idx if sa[d] > 1 else 0)
            ib = ib * sb[d] + (idx if sb[d] > 1 else 0)
        out.append((fa[ia], fb[ib]))
    return out


def check_call(spec: FunctionSpec, values: Mapping[str, Any], door: str = "python") -> None:
    """Check the arguments ``values`` (Python names -> values; absent or None: not given) of a
    call of ``spec``'s function against their kinds and its ``less_than`` pairs; the first wrong
    one raises, naming the function and the argument as ``door`` spells them."""
    fn = door_name(spec.name, door)
    for a in spec.args:
        v = values.get(a.name)
        if v is None:
            continue
        test, what = ARG_KINDS[a.kind]
        if not test(v):
            cls = TypeError if a.kind in _TYPE_KINDS else ValueError
            raise cls(f"{fn}: {spec.arg_name(a.name, door)} must be {what}, got {_describe(v)}")
    for lo, hi in spec.less_than:
        if values.get(lo) is None or values.get(hi) is None:
            continue
        for x, y in _pairs(values[lo], values[hi]) or ():
            if not x < y:
                raise ValueError(
                    f"{fn}: {spec.arg_name(lo, door)} must be less than "
                    f"{spec.arg_name(hi, door)}, got {spec.arg_name(lo, door)} = {x:g}, "
                    f"{spec.arg_name(hi, door)} = {y:g}")
