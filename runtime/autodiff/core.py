"""Primitives and the dispatch that lets autodiff see them.

A :class:`Primitive` is an operation the differentiation machinery treats as atomic: it has a
concrete implementation (usually one backend kernel) and derivative rules written with
tensorbridge ops, so rules are themselves differentiable (higher order, forward-over-reverse).

``bind(prim, args, params)`` is the single entry point: with no tracer among ``args`` it runs the
implementation; otherwise the innermost active transformation (the tracer with the highest trace
level) processes the call, unwraps its own tracers and binds again on the values underneath.
Every transformation is a :class:`Trace` of this kind: ``grad``/``jvp`` (reverse, forward),
``vmap`` (batching), staging for ``tb.function`` and the model graph.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from ..errors import NonDifferentiableError
from ..tensor import Tensor

__all__ = ["Primitive", "Trace", "Tracer", "bind", "has_placeholder_values", "new_tracer"]

VJPRule = Callable[..., Any]  # (g, ans, *args, **params) -> cotangent for one argument
JVPRule = Callable[..., Any]  # (t, ans, *args, **params) -> tangent of the output

# Every primitive by name, filled as primitives are made (the runtime's, at import; their names
# are unique): worker processes look up the primitives a pickled model graph names here. A later
# primitive with a name already taken (a user's) is not entered; it travels by its module.
PRIMITIVES: dict[str, Primitive] = {}


class Primitive:
    """An atomic operation with a concrete implementation and derivative rules.

    ``vjp_rules[i]`` maps the output cotangent ``g`` to argument ``i``'s cotangent;
    ``jvp_rules[i]`` maps argument ``i``'s tangent to the output tangent. A missing JVP rule is
    derived from the VJP rule by transposition (the VJP is linear in ``g``; see
    ``forward.jvp_rule``), so defining VJPs is enough for both modes. A missing VJP rule makes
    the argument non-differentiable.

    ``kernel`` names the backend kernel that ``impl`` calls once on the raw buffers of its tensor
    arguments, and ``kind`` how arguments reach it ("unary": one tensor and parameters;
    "binary": two operands, one may be a Python scalar; "nary": any tensors). Staging records
    such a call as one step. Without a kernel the primitive is a composite: its implementation
    calls other ops, and a trace sees those calls instead.
    """

    __slots__ = ("impl", "jvp_rules", "kernel", "kind", "name", "vjp_rules")

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        vjp: Sequence[VJPRule | None] | None = None,
        jvp: Sequence[JVPRule | None] | None = None,
        *,
        kernel: str | None = None,
        kind: str | None = None,
    ) -> None:
        self.name = name
        self.impl = impl
        self.kernel = kernel
        self.kind = kind
        self.vjp_rules: list[VJPRule | None] = list(vjp or [])
        self.jvp_rules: list[JVPRule | None] = list(jvp or [])
        PRIMITIVES.setdefault(name, self)

    def defvjp(self, *rules: VJPRule | None) -> Primitive:
        """Set the VJP rule of each argument in order (``None``: not differentiable)."""
        self.vjp_rules = list(rules)
        return self

    def defjvp(self, *rules: JVPRule | None) -> Primitive:
        """Set the JVP rule of each argument in order (``None``: derive from the VJP)."""
        self.jvp_rules = list(rules)
        return self

    def vjp_rule(self, i: int) -> VJPRule:
        rules = self.vjp_rules
        rule = rules[i] if i < len(rules) else None
        if rule is None:
            raise NonDifferentiableError(
                f"op '{self.name}' is not differentiable with respect to argument {i}; "
                f"wrap that input in tensorbridge.stop_gradient(...) if no gradient should flow"
            )
        return rule

    def __call__(self, *args: Any, **params: Any) -> Any:
        return bind(self, args, params)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


_levels = itertools.count(1).__next__


class Trace:
    """One active transformation (a `grad` or `jvp` call). Higher level = more inner."""

    __slots__ = ("level",)

    # True where a tracer's value stands for the values of later calls (staging): reading it
    # ends the staging, so an op must not choose a path by reading such a value
    placeholder_values: ClassVar[bool] = False

    def __init__(self) -> None:
        self.level = _levels()

    def process(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        raise NotImplementedError

    def concretized(self, what: str) -> None:
        """A value of one of this trace's tracers was read; only placeholder traces care."""


class Tracer(Tensor):
    """A tensor seen by a transformation: it wraps the value (``_primal``) one level down."""

    __slots__ = ("_primal", "_trace")

    _primal: Tensor
    _trace: Trace

    @property  # type: ignore[override]
    def id(self) -> int:
        return self._primal.id

    @property  # type: ignore[override]
    def data_id(self) -> int:
        return self._primal.data_id

    def numpy(self) -> Any:
        return self._primal.numpy()

    def tolist(self) -> Any:
        return self._primal.tolist()

    def _raw(self) -> Any:
        return self._primal._raw()

    def dispose(self) -> None:  # the transformation owns the value
        return None

    @property
    def is_disposed(self) -> bool:
        return self._primal.is_disposed

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._primal!r})"


T = TypeVar("T", bound=Tracer)


def new_tracer(cls: type[T], primal: Any, trace: Trace) -> T:
    """A tracer of class ``cls`` wrapping ``primal`` for ``trace`` (shape, dtype and backend are
    the value's); subclasses set their own fields on the result."""
    t = object.__new__(cls)
    t._data = None
    t._primal = primal
    t._trace = trace
    t.shape = primal.shape
    t.dtype = primal.dtype
    t.backend = primal.backend
    return t


def bind(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    top: Trace | None = None
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if top is None or t.level > top.level:
                top = t
    if top is None:
        return prim.impl(*args, **params)
    return top.process(prim, args, params)


def has_placeholder_values(x: Any) -> bool:
    """Whether ``x`` is, or wraps, a tracer whose values stand for later calls' values."""
    while isinstance(x, Tracer):
        if x._trace.placeholder_values:
            return True
        x = x._primal
    return False


def primal_value(x: Any) -> Any:
    """Strip every tracer: the concrete value underneath, for an op that reads it. Reading
    through a placeholder tracer (staging) ends that staging, as reading the tracer itself does:
    an op that picks its path from the values (integer indices, say) would otherwise bake one
    call's values into the recording. Check :func:`has_placeholder_values` first to avoid it."""
    while isinstance(x, Tracer):
        if x._trace.placeholder_values:
            x._trace.concretized(f"a value of tensor {x.id} with shape {x.shape} was read")
        x = x._primal
    return x


def not_float_error(argname: str, x: Any) -> NonDifferentiableError:
    return NonDifferentiableError(
        f"{argname}: can only differentiate with respect to floating-point tensors, "
        f"got dtype {x.dtype} (cast with .astype('float32') first)"
    )
