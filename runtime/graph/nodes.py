"""Nodes of the model graph and the lazy arrays users hold.

There are four kinds of node: **data** (known values), **variable** (unknown, to be inferred),
**operation** (a primitive applied to other nodes) and **distribution** (a density over a target
node, with parameter nodes). A :class:`LazyArray` is the handle a user computes with: it is a
tracer of the graph trace, so every tensorbridge op applied to it records an operation node, with
the shape and dtype inferred at that line from a *reference value* (data as given, variables at a
feasible point of their support). Shape errors therefore surface where they are made, naming both
shapes. Values that depend on a variable are unknown and print as ``?``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import sys
from collections.abc import Sequence
from typing import Any

from ..argument_checks import ArgSpec, FunctionSpec, check_call
from ..autodiff.core import Primitive, Trace, Tracer, bind
from ..dtypes import as_dtype
from ..ops.creation import eye, ones, tensor, zeros
from ..ops.shape import broadcast_shapes, broadcast_to
from ..tensor import Tensor
from .bijectors import (
    Bijector,
    Constraint,
    biject_to,
    bounded,
    cholesky_factor,
    correlation_cholesky,
    from_bounds,
    ordered,
    simplex,
)
from .printing import format_lazy

__all__ = [
    "VARIABLES",
    "DataNode",
    "DistributionNode",
    "GraphNode",
    "LazyArray",
    "OperationNode",
    "VariableNode",
    "as_data",
    "cholesky_variable",
    "distribution",
    "model_backend",
    "ordered_variable",
    "set_model_backend",
    "simplex_variable",
    "variable",
]

_ids = itertools.count(1).__next__


class GraphNode:
    """A node in the model DAG. ``parents`` are the nodes it reads; ``children`` read it."""

    kind = "node"

    def __init__(self, parents: Sequence[GraphNode], reference: Any, name: str | None) -> None:
        self.id = _ids()
        self.parents: list[GraphNode] = list(parents)
        self.children: list[GraphNode] = []
        self.reference = reference  # a concrete tensor of the node's shape and dtype
        self.name = name
        self.distribution: DistributionNode | None = None
        for p in self.parents:
            p.children.append(self)
        # decided once, from parents that never change: no recursion through long op chains
        self._known = all(p.known for p in self.parents)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.reference.shape)

    @property
    def dtype(self) -> Any:
        return self.reference.dtype

    @property
    def known(self) -> bool:
        """True when the value depends on data only."""
        return self._known

    def neighbours(self) -> list[GraphNode]:
        out = [*self.parents, *self.children]
        if self.distribution is not None:
            out.append(self.distribution)
        return out

    def label(self) -> str:
        return self.name or f"{self.kind}_{self.id}"

    def __repr__(self) -> str:
        return f"<{self.kind} node {self.id} {list(self.shape)} {self.dtype}>"


class DataNode(GraphNode):
    kind = "data"

    def __init__(self, value: Tensor, name: str | None = None) -> None:
        super().__init__((), value, name)

    @property
    def known(self) -> bool:
        return True

    @property
    def value(self) -> Tensor:
        return self.reference


class VariableNode(GraphNode):
    kind = "variable"

    def __init__(self, constraint: Constraint, shape: tuple[int, ...], dtype: Any,
                 backend: Any, name: str | None = None) -> None:
        self.constraint = constraint
        if constraint.bijectable:
            self.bijector: Bijector | None = biject_to(constraint)
            self.free_shape = self.bijector.free_shape(shape)
            reference = self.bijector.forward(zeros(self.free_shape, dtype, backend))
        else:  # discrete / observed-only: a placeholder until assigned to data
            self.bijector = None
            self.free_shape = tuple(shape)
            reference = zeros(shape, dtype, backend)
        super().__init__((), reference, name)

    @property
    def known(self) -> bool:
        return False

    @property
    def size(self) -> int:
        """Number of free (unconstrained) coordinates: ``prod(free_shape)``."""
        return math.prod(self.free_shape)


class OperationNode(GraphNode):
    kind = "operation"

    def __init__(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any],
                 reference: Any) -> None:
        # args: GraphNode for graph inputs, anything else is a constant
        self.prim = prim
        self.args = list(args)
        self.params = params
        super().__init__([a for a in args if isinstance(a, GraphNode)], reference, None)

    def compute(self, values: dict[GraphNode, Any]) -> Any:
        args = [values[a] if isinstance(a, GraphNode) else a for a in self.args]
        return bind(self.prim, args, self.params)


class DistributionNode(GraphNode):
    """A density ``family`` with parameter arguments (nodes or constants) over ``target``."""

    kind = "distribution"

    def __init__(self, family: Any, params: dict[str, Any], target: GraphNode | None) -> None:
        self.family = family
        self.param_args = params
        self.target = target
        parents = [v for v in params.values() if isinstance(v, GraphNode)]
        super().__init__(parents, None, None)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.target.shape if self.target is not None else ()

    def neighbours(self) -> list[GraphNode]:
        out = [*self.parents, *self.children]
        if self.target is not None:
            out.append(self.target)
        return out

    def log_prob(self, values: dict[GraphNode, Any]) -> Any:
        params = {k: values[v] if isinstance(v, GraphNode) else v
                  for k, v in self.param_args.items()}
        return self.family.log_prob(values[self.target], **params)

    def __repr__(self) -> str:
        return f"<distribution node {self.id} {self.family.name}>"


# -- lazy arrays: tracers of the graph trace ------------------------------------------------------
class GraphTrace(Trace):
    """The single trace that turns op calls on lazy arrays into operation nodes."""

    __slots__ = ()

    def process(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        refs = list(args)
        node_args: list[Any] = list(args)
        for i, a in enumerate(args):
            if isinstance(a, LazyArray) and a._trace is self:
                refs[i] = a._primal
                node_args[i] = a.node
        try:
            reference = bind(prim, refs, params)
        except (ArithmeticError, ValueError) as err:  # LinAlgError is a ValueError
            # a variable's reference is one feasible point (zeros on the free scale): an op that
            # fails there (the Cholesky factor or a solve of a zero matrix) is not a bad model.
            # The reference only gives the shape and dtype of an unknown value, so take them
            # from well-conditioned stand-ins; an error that persists (shapes) is the user's.
            reference = _stand_in_reference(prim, args, refs, params, err)
        node = OperationNode(prim, node_args, params, reference)
        return _lazy(node, self)


def _stand_in_reference(prim: Primitive, args: Sequence[Any], refs: list[Any],
                        params: dict[str, Any], err: Exception) -> Any:
    """``prim`` at identity matrices (square trailing axes) or ones in place of the reference
    values of its unknown arguments; raises ``err`` when there are none or it fails there too."""
    stand_ins = list(refs)
    unknown = False
    for i, a in enumerate(args):
        if isinstance(a, LazyArray) and not a.node.known:
            unknown = True
            r = refs[i]
            shape = tuple(r.shape)
            if len(shape) >= 2 and shape[-1] == shape[-2]:
                value = ones(shape, dtype=r.dtype, backend=r.backend) * eye(
                    shape[-1], dtype=r.dtype, backend=r.backend)
            else:
                value = ones(shape, dtype=r.dtype, backend=r.backend)
            stand_ins[i] = value
    if not unknown:
        raise err
    try:
        return bind(prim, stand_ins, params)
    except (ArithmeticError, ValueError):
        raise err from None


_GRAPH = GraphTrace()


class LazyArray(Tracer):
    """An array in a model: its value is computed later, for given variable values."""

    __slots__ = ("node",)

    node: GraphNode

    def __repr__(self) -> str:
        return format_lazy(self)

    # Lazy arrays have no value to read: refuse instead of leaking the reference point.
    def numpy(self) -> Any:
        if self.node.known:
            return self._primal.numpy()
        raise ValueError(
            f"this {self.node.kind} array has no value yet (it depends on variables); use "
            f"tensorbridge.calculate(array, values={{variable: value, ...}}) or fit a model"
        )

    def tolist(self) -> Any:
        if self.node.known:
            return self._primal.tolist()
        self.numpy()

    def _raw(self) -> Any:
        if not self.node.known:
            self.numpy()  # raises: no value yet
        return self._primal._raw()

    def observe(self, family: LazyArray) -> LazyArray:
        """Give this data array a distribution: ``y.observe(tb.normal(mu, sd))``."""
        distribution(self, family)
        return self


def _lazy(node: GraphNode, trace: GraphTrace = _GRAPH) -> LazyArray:
    t = object.__new__(LazyArray)
    t._data = None
    t._primal = node.reference
    t._trace = trace
    t.node = node
    t.shape = tuple(node.reference.shape)
    t.dtype = node.reference.dtype
    t.backend = node.reference.backend
    return t


# The backend new data and variables are made on when none is named: None is the runtime's
# default backend. Pyodide's hosts name "python" (float64 in pure Python) because TF.js, their
# default backend for tensors and layers, has no float64: models stay float64 in every door.
_MODEL_BACKEND: list[Any] = [None]


def set_model_backend(backend: Any) -> None:
    """Make ``backend`` (a name, or None for the default backend) the one that new data and
    variables of models are made on when they name none."""
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"backend: expected a backend name or None, got {backend!r}")
    _MODEL_BACKEND[0] = backend


def model_backend(backend: Any = None) -> Any:
    """``backend`` if given, else the models' backend (see :func:`set_model_backend`)."""
    return backend if backend is not None else _MODEL_BACKEND[0]


# -- the front door's variable types and data, as data (argument_checks.FunctionSpec) -----------
# Each argument's name, kind (argument_checks.ARG_KINDS) and the pairs that must be ordered: the
# Python functions below check their arguments at entry with these, and the R and JS doors ask
# the runtime to check with them (runtime/spec.py check_call), so every door refuses the same
# values with the same words, naming the argument as that door spells it.
_NAME = ArgSpec("name", "name", False)
_DTYPE = ArgSpec("dtype", "dtype", False)
_BACKEND = ArgSpec("backend", "backend", False)
VARIABLES: tuple[FunctionSpec, ...] = (
    FunctionSpec("variable", (ArgSpec("lower", "bounds", False),
                              ArgSpec("upper", "bounds", False),
                              ArgSpec("dim", "dims", False), _DTYPE, _NAME, _BACKEND),
                 less_than=(("lower", "upper"),)),
    FunctionSpec("ordered_variable", (ArgSpec("dim", "dims", True), _DTYPE, _NAME, _BACKEND)),
    FunctionSpec("simplex_variable", (ArgSpec("dim", "dims", True), _DTYPE, _NAME, _BACKEND)),
    FunctionSpec("cholesky_variable", (ArgSpec("dim", "dims", True),
                                       ArgSpec("correlation", "flag", False),
                                       ArgSpec("upper", "flag", False),
                                       _DTYPE, _NAME, _BACKEND)),
    # greta's as_data(x): the value is x in R
    FunctionSpec("as_data", (ArgSpec("value", "array", True), _NAME, _DTYPE, _BACKEND),
                 door_names={"value": {"r": "x"}}),
)
_SPECS = {s.name: s for s in VARIABLES}


def _frame_columns(value: Any) -> Any:
    """A pandas DataFrame as a float64 matrix of its columns; every column must be numeric,
    else an error naming the others. pandas is optional: a data frame exists only once pandas
    is imported, so it is looked up, never imported (no import attempt per call without it)."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(value, pd.DataFrame):
        return None
    bad = [str(c) for c, t in value.dtypes.items()
           if not (pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t))]
    if bad:
        raise TypeError(f"as_data: value is a data frame with non-numeric columns: "
                        f"{', '.join(bad)} (only numeric columns can be data)")
    return value.to_numpy(dtype="float64")


def as_data(value: Any, name: str | None = None, dtype: Any = None,
            backend: Any = None) -> LazyArray:
    """Wrap known values (array-like; a pandas DataFrame of numeric columns) as a data array of
    the model.

    Python floats become float64 (as variables are, and as R's doubles arrive), so the same
    model gives the same numbers from every front door; typed arrays keep their dtype.
    """
    if isinstance(value, LazyArray):
        if value.node.kind != "data":
            raise TypeError(f"as_data: value is already a {value.node.kind} array")
        return value
    check_call(_SPECS["as_data"], {"value": value, "name": name, "dtype": dtype,
                                   "backend": backend})
    frame = _frame_columns(value)
    if frame is not None:
        value = frame
    backend = model_backend(backend)
    t = tensor(value, dtype=dtype, backend=backend)
    if dtype is None and not hasattr(value, "dtype") and t.dtype.name == "float32":
        t = tensor(value, dtype="float64", backend=backend)
    return _lazy(DataNode(t, name))


def _shape(dim: Any) -> tuple[int, ...]:
    return (int(dim),) if not isinstance(dim, (list, tuple)) else tuple(int(d) for d in dim)


def _float_dtype(dtype: Any) -> Any:
    dt = as_dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"dtype: variables must be floating point, got {dt}")
    return dt


def _bounds_constraint(lower: Any, upper: Any, shape: tuple[int, ...]) -> Constraint:
    """Scalar bounds: one constraint for every element; array bounds: broadcast against the
    variable's shape (an error naming the bound that does not fit), one pair per element."""
    if isinstance(lower, (int, float)) and isinstance(upper, (int, float)):
        return from_bounds(lower, upper)
    flat = []
    for arg, b in (("lower", lower), ("upper", upper)):
        t = tensor(b, dtype="float64", backend="python")
        try:
            if broadcast_shapes(t.shape, shape) != shape:
                raise ValueError
        except Exception:
            raise ValueError(f"variable: {arg} of shape {list(t.shape)} does not broadcast to "
                             f"dim {list(shape)}") from None
        flat.append([float(x) for x in _flatten(broadcast_to(t, shape).tolist())])
    lo, hi = flat
    if len(set(lo)) <= 1 and len(set(hi)) <= 1:  # the same bounds everywhere
        return from_bounds(lo[0] if lo else -math.inf, hi[0] if hi else math.inf)
    return bounded(lo, hi, shape)


def _bounds_shape(lower: Any, upper: Any) -> tuple[int, ...]:
    shapes = [tuple(tensor(b, dtype="float64", backend="python").shape)
              for b in (lower, upper) if not isinstance(b, (int, float))]
    try:
        return broadcast_shapes(*shapes) if shapes else ()
    except Exception:
        raise ValueError(f"variable: lower and upper of shapes {[list(s) for s in shapes]} do "
                         f"not broadcast against each other") from None


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, list):
        return [e for item in x for e in _flatten(item)]
    return [x]


def variable(lower: Any = -math.inf, upper: Any = math.inf, dim: Any = None,
             dtype: Any = "float64", name: str | None = None, backend: Any = None) -> LazyArray:
    """An unknown array with support ``(lower, upper)``; ``dim`` is its shape (int or tuple).
    The bounds are numbers, or arrays that broadcast against ``dim`` (each element its own
    bounds; either may be infinite); without ``dim`` the shape is the bounds' (as greta's), a
    scalar for number bounds.

    It has a flat (improper) prior unless a distribution is assigned to it; samplers and
    optimisers see it through a bijector onto R^n.
    """
    check_call(_SPECS["variable"], {"lower": lower, "upper": upper, "dim": dim, "dtype": dtype,
                                    "name": name, "backend": backend})
    shape = _shape(dim) if dim is not None else _bounds_shape(lower, upper)
    dt = _float_dtype(dtype)
    return _lazy(VariableNode(_bounds_constraint(lower, upper, shape), shape, dt,
                              model_backend(backend), name))


def _event_shape(fn: str, dim: Any) -> tuple[int, ...]:
    """greta's ``dim`` for the constrained variables: the constraint acts on the last axis,
    and a single number ``n`` is a vector of n."""
    shape = _shape(dim)
    if not shape or shape[-1] < 2:
        raise ValueError(f"{fn}: dim's last dimension must be at least 2 (the constraint acts on "
                         f"it), got {list(shape)}")
    return shape


def ordered_variable(dim: Any, dtype: Any = "float64", name: str | None = None,
                     backend: Any = None) -> LazyArray:
    """An unknown array increasing along its last axis (greta's ``ordered_variable``), with a
    flat prior; seen by samplers through ``x_1 = y_1, x_k = x_{k-1} + exp(y_k)``."""
    check_call(_SPECS["ordered_variable"], {"dim": dim, "dtype": dtype, "name": name,
                                            "backend": backend})
    shape = _event_shape("ordered_variable", dim)
    return _lazy(VariableNode(ordered, shape, _float_dtype(dtype), model_backend(backend), name))


def simplex_variable(dim: Any, dtype: Any = "float64", name: str | None = None,
                     backend: Any = None) -> LazyArray:
    """An unknown array of positive values summing to 1 along its last axis (greta's
    ``simplex_variable``), with a flat prior on the simplex (stick-breaking bijector)."""
    check_call(_SPECS["simplex_variable"], {"dim": dim, "dtype": dtype, "name": name,
                                            "backend": backend})
    shape = _event_shape("simplex_variable", dim)
    return _lazy(VariableNode(simplex, shape, _float_dtype(dtype), model_backend(backend), name))


def cholesky_variable(dim: Any, correlation: bool = False, upper: bool = False,
                      dtype: Any = "float64", name: str | None = None,
                      backend: Any = None) -> LazyArray:
    """An unknown lower-triangular ``dim`` x ``dim`` matrix with a positive diagonal: the
    Cholesky factor of a covariance matrix, or with ``correlation=True`` of a correlation
    matrix (rows of unit length). ``dim`` is n or (n, n). ``upper=True``: the upper factor
    (its transpose, R's ``chol``), which the R door makes as greta does."""
    check_call(_SPECS["cholesky_variable"], {"dim": dim, "correlation": correlation,
                                             "upper": upper, "dtype": dtype, "name": name,
                                             "backend": backend})
    shape = _shape(dim)
    if len(shape) == 1:
        shape = (shape[0], shape[0])
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < (2 if correlation else 1):
        raise ValueError(f"cholesky_variable: dim must be n or c(n, n) (a square matrix"
                         f"{', n >= 2' if correlation else ''}), got {list(_shape(dim))}")
    support = correlation_cholesky if correlation else cholesky_factor
    if upper:
        support = dataclasses.replace(support, upper_factor=True)
    return _lazy(VariableNode(support, shape, _float_dtype(dtype), model_backend(backend), name))


def node_of(x: Any) -> GraphNode:
    if isinstance(x, LazyArray):
        return x.node
    raise TypeError(f"expected a lazy array (data, variable or operation), got {type(x).__name__}")


def distribution(target: Any, dist: Any) -> None:
    """Assign a distribution to ``target`` (data, or an operation on data): the Python form of
    greta's ``distribution(y) <- normal(mu, sd)``, written ``distribution(y, normal(mu, sd))``.
    """
    t = node_of(target)
    d_var = node_of(dist)
    dnode = d_var.distribution
    if not isinstance(d_var, VariableNode) or dnode is None:
        raise TypeError("dist: expected a distribution such as tensorbridge.normal(mu, sd)")
    if isinstance(t, VariableNode):
        raise TypeError(
            "target: to give a variable a prior, create it from the distribution "
            "(mu = tb.normal(0, 10)) instead of assigning one afterwards"
        )
    if not t.known:
        raise TypeError(
            f"target: a distribution can be assigned to data only, not to a {t.kind} array "
            f"that depends on variables"
        )
    if t.distribution is not None:
        raise ValueError(f"target: {t.label()} already has a distribution")
    if d_var.shape != t.shape:
        try:
            if broadcast_shapes(d_var.shape, t.shape) != t.shape:
                raise ValueError
        except Exception:
            raise ValueError(
                f"distribution: parameters of shape {list(d_var.shape)} do not match the "
                f"target's shape {list(t.shape)}"
            ) from None
    dnode.family.check_data(dnode.param_args, t)  # discrete families refuse impossible data
    dnode.target = t  # the placeholder variable made by normal(...) drops out of the graph
    t.distribution = dnode
    d_var.distribution = None
