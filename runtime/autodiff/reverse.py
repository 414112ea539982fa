"""Reverse mode: record a graph of primitive calls, then pull cotangents back through it.

Each traced primitive call becomes a :class:`Node` that keeps its inputs, output and the nodes of
its traced inputs, and is appended to its trace's tape. ``backward`` walks the tape from the end
(a valid reverse topological order: inputs are always recorded before outputs), skipping nodes no
cotangent reached, and applies the VJP rules. Cotangents live on the nodes while the walk runs.
Rules are bound like any op, so an enclosing trace records them too: this is how higher
derivatives and forward-over-reverse products work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .core import Primitive, Trace, Tracer, bind, new_tracer

__all__ = ["Node", "ReverseTrace", "ReverseTracer", "backward"]

class ReverseTracer(Tracer):
    """A value under reverse-mode tracing; it is also its own tape entry: the primitive that made
    it, that call's inputs and parameters, and the tracers it read (one object per traced op)."""

    __slots__ = ("args", "g", "params", "parents", "prim")

    prim: Primitive | None
    args: Sequence[Any]
    params: dict[str, Any]
    parents: list[tuple[int, ReverseTracer]]
    g: Any  # cotangent accumulated during a backward walk

    @property
    def _node(self) -> ReverseTracer:
        return self

    @property
    def ans(self) -> Any:
        return self._primal


Node = ReverseTracer  # a tape entry is the tracer itself


def new_reverse_tracer(primal: Any, trace: Trace, prim: Primitive | None, args: Sequence[Any],
                       params: dict[str, Any], parents: list[tuple[int, Any]]) -> ReverseTracer:
    t = new_tracer(ReverseTracer, primal, trace)
    t.prim = prim
    t.args = args
    t.params = params
    t.parents = parents
    t.g = None
    return t


class ReverseTrace(Trace):
    __slots__ = ("tape",)

    def __init__(self) -> None:
        super().__init__()
        self.tape: list[ReverseTracer] = []

    def leaf(self, value: Any) -> ReverseTracer:
        return new_reverse_tracer(value, self, None, (), {}, [])

    def process(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        primals = list(args)
        parents: list[tuple[int, ReverseTracer]] = []
        lower = False  # does a tracer of an enclosing transformation remain?
        i = 0
        for a in args:
            if isinstance(a, Tracer):
                if a._trace is self:
                    p = a._primal
                    primals[i] = p
                    parents.append((i, a))
                    if isinstance(p, Tracer):
                        lower = True
                else:
                    lower = True
            i += 1
        ans = bind(prim, primals, params) if lower else prim.impl(*primals, **params)
        if not parents or ans.dtype.kind != "f":
            return ans  # integer/bool outputs (comparisons, argmax) carry no gradient
        rules = prim.vjp_rules
        for i, _ in parents:
            if i >= len(rules) or rules[i] is None:
                prim.vjp_rule(i)  # raises at the op that cannot be differentiated
        out = new_reverse_tracer(ans, self, prim, primals, params, parents)
        self.tape.append(out)
        return out


def backward(trace: ReverseTrace, roots: Sequence[tuple[Node, Any]],
             wanted: Sequence[Node]) -> list[Any]:
    """Cotangents of the ``wanted`` nodes given ``(node, cotangent)`` pairs for outputs of
    ``trace``. A missing cotangent (None) stands for zero and costs nothing."""
    touched: list[Node] = []
    try:
        for node, g in roots:
            if g is not None:
                node.g = g if node.g is None else node.g + g
                touched.append(node)
        for w in wanted:
            touched.append(w)
        tape = trace.tape
        for k in range(len(tape) - 1, -1, -1):
            node = tape[k]
            gn = node.g
            if gn is None:
                continue
            node.g = None
            args = node.args
            params = node.params
            ans = node._primal
            rules = node.prim.vjp_rules
            for i, parent in node.parents:
                gi = rules[i](gn, ans, *args, **params)
                if gi is None:
                    continue
                prev = parent.g
                parent.g = gi if prev is None else prev + gi
        return [w.g for w in wanted]
    except BaseException:
        for n in trace.tape:  # a walk that raised may leave cotangents anywhere on the tape
            n.g = None
        raise
    finally:
        for n in touched:
            n.g = None


def is_reverse_tracer_of(x: Any, trace: Trace) -> bool:
    return isinstance(x, ReverseTracer) and x._trace is trace


__all__ += ["is_reverse_tracer_of", "new_reverse_tracer"]
