"""Primitives and the dispatch that lets autodiff see them.

A :class:`Primitive` is an operation the differentiation machinery treats as atomic: it has a
concrete implementation (usually one backend kernel) and derivative rules written with
tensorbridge ops, so rules are themselves differentiable (higher order, forward-over-reverse).

``bind(prim, args, params)`` is the single entry point: with no tracer among ``args`` it runs the
implementation; otherwise the innermost active transformation (the tracer with the highest trace
level) processes the call, unwraps its own tracers and binds again on the values underneath.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import NonDifferentiableError
from ..tensor import Tensor

__all__ = ["Primitive", "Trace", "Tracer", "bind"]

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
    """

    __slots__ = ("impl", "jvp_rules", "name", "vjp_rules")

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        vjp: Sequence[VJPRule | None] | None = None,
        jvp: Sequence[JVPRule | None] | None = None,
    ) -> None:
        self.name = name
        self.impl = impl
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

    def __init__(self) -> None:
        self.level = _levels()

    def process(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        raise NotImplementedError


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


# The staging recorder (runtime/staging.py) while a compiled function is being traced, else None.
recorder: Any = None


def bind(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    top: Trace | None = None
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if top is None or t.level > top.level:
                top = t
    if top is None:
        if recorder is None:
            return prim.impl(*args, **params)
        return recorder.call(prim, args, params)
    return top.process(prim, args, params)


def primal_value(x: Any) -> Any:
    """Strip every tracer: the concrete value underneath."""
    while isinstance(x, Tracer):
        x = x._primal
    return x


def not_float_error(argname: str, x: Any) -> NonDifferentiableError:
    return NonDifferentiableError(
        f"{argname}: can only differentiate with respect to floating-point tensors, "
        f"got dtype {x.dtype} (cast with .astype('float32') first)"
    )
