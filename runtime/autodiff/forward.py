"""Forward mode: carry a tangent next to every value and push it through each primitive."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ops.creation import zeros_like
from ..ops.shape import broadcast_to
from .core import JVPRule, Primitive, Trace, Tracer, bind, new_tracer
from .reverse import ReverseTrace, ReverseTracer, backward

__all__ = ["ForwardTrace", "ForwardTracer", "jvp_from_vjp", "jvp_rule"]


class ForwardTracer(Tracer):
    __slots__ = ("_tangent",)

    _tangent: Any


def new_forward_tracer(primal: Any, trace: Trace, tangent: Any) -> ForwardTracer:
    t = new_tracer(ForwardTracer, primal, trace)
    t._tangent = tangent
    return t


class ForwardTrace(Trace):
    __slots__ = ()

    def process(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        primals = list(args)
        tangents: list[tuple[int, Any]] = []
        for i, a in enumerate(args):
            if isinstance(a, ForwardTracer) and a._trace is self:
                primals[i] = a._primal
                if a._tangent is not None:
                    tangents.append((i, a._tangent))
        ans = bind(prim, primals, params)
        if not tangents or ans.dtype.kind != "f":
            return ans
        out = None
        for i, t in tangents:
            ti = jvp_rule(prim, i)(t, ans, *primals, **params)
            if ti is None:
                continue
            out = ti if out is None else out + ti
        if out is not None and tuple(out.shape) != tuple(ans.shape):
            out = broadcast_to(out, ans.shape)
        return new_forward_tracer(ans, self, out)


def jvp_rule(prim: Primitive, i: int) -> JVPRule:
    """Argument ``i``'s JVP rule: the primitive's own, else derived from its VJP rule (once)."""
    rules = prim.jvp_rules
    rule = rules[i] if i < len(rules) else None
    if rule is None:
        rule = jvp_from_vjp(prim.vjp_rule(i))
        while len(rules) <= i:
            rules.append(None)
        rules[i] = rule
    return rule


def jvp_from_vjp(vjp_rule: Any) -> Any:
    """Derive a JVP rule from a VJP rule.

    ``g -> vjp(g)`` is linear, equal to ``J^T g``; the VJP of that linear map applied to the
    tangent ``t`` is ``J t``. So run the VJP rule under a reverse trace in ``g`` (at any point, we
    use zeros) and pull ``t`` back through it.
    """

    def rule(t: Any, ans: Any, *args: Any, **params: Any) -> Any:
        trace = ReverseTrace()
        g0 = trace.leaf(zeros_like(ans))
        out = vjp_rule(g0, ans, *args, **params)
        if not (isinstance(out, ReverseTracer) and out._trace is trace):
            return None  # the cotangent does not depend on g: derivative is zero
        (res,) = backward(trace, [(out._node, t)], [g0._node])
        return res

    return rule


