"""Reverse mode: record a graph of primitive calls, then pull cotangents back through it.

Each traced primitive call becomes a :class:`Node` that keeps its inputs, output and the nodes of
its traced inputs. ``backward`` visits the nodes reachable from the output in decreasing creation
order (a valid reverse topological order, since inputs are always created before outputs) and
applies the VJP rules. Rules are bound like any op, so an enclosing trace records them too: this
is how higher derivatives and forward-over-reverse products work.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ..tensor import _next_id
from .primitive import Primitive, Trace, Tracer, bind

__all__ = ["Node", "ReverseTrace", "ReverseTracer", "backward"]

_seq = itertools.count().__next__


class Node:
    __slots__ = ("args", "ans", "params", "parents", "prim", "seq")

    def __init__(
        self,
        prim: Primitive | None,
        args: Sequence[Any],
        params: dict[str, Any],
        ans: Any,
        parents: list[tuple[int, Node]],
    ) -> None:
        self.prim = prim
        self.args = args
        self.params = params
        self.ans = ans
        self.parents = parents
        self.seq = _seq()


class ReverseTracer(Tracer):
    __slots__ = ("_node",)

    _node: Node


def new_reverse_tracer(primal: Any, trace: Trace, node: Node) -> ReverseTracer:
    t = object.__new__(ReverseTracer)
    t._data = None
    t._primal = primal
    t._trace = trace
    t._node = node
    t.id = _next_id()
    t.shape = primal.shape
    t.dtype = primal.dtype
    t.backend = primal.backend
    t.data_id = primal.data_id
    return t


class ReverseTrace(Trace):
    __slots__ = ()

    def leaf(self, value: Any) -> ReverseTracer:
        return new_reverse_tracer(value, self, Node(None, (), {}, value, []))

    def process(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        primals = list(args)
        parents: list[tuple[int, Node]] = []
        for i, a in enumerate(args):
            if isinstance(a, ReverseTracer) and a._trace is self:
                primals[i] = a._primal
                parents.append((i, a._node))
        ans = bind(prim, primals, params)
        if not parents or ans.dtype.kind != "f":
            return ans  # integer/bool outputs (comparisons, argmax) carry no gradient
        for i, _ in parents:
            prim.vjp_rule(i)  # fail at the op that cannot be differentiated, not later
        return new_reverse_tracer(ans, self, Node(prim, primals, params, ans, parents))


def backward(roots: Sequence[tuple[Node, Any]], wanted: Sequence[Node]) -> list[Any]:
    """Cotangents of the ``wanted`` nodes given ``(node, cotangent)`` pairs for the outputs.

    A missing cotangent (None) stands for zero and costs nothing.
    """
    seen: dict[int, Node] = {}
    stack = []
    for node, _ in roots:
        if id(node) not in seen:
            seen[id(node)] = node
            stack.append(node)
    while stack:
        node = stack.pop()
        for _, p in node.parents:
            if id(p) not in seen:
                seen[id(p)] = p
                stack.append(p)
    order = sorted(seen.values(), key=_by_seq, reverse=True)
    grads: dict[int, Any] = {}
    for node, g in roots:
        if g is not None:
            prev = grads.get(id(node))
            grads[id(node)] = g if prev is None else prev + g
    for node in order:
        prim = node.prim
        if prim is None:
            continue  # a leaf: keep its cotangent for the caller
        gn = grads.pop(id(node), None)
        if gn is None:
            continue
        args = node.args
        params = node.params
        ans = node.ans
        rules = prim.vjp_rules
        for i, parent in node.parents:
            gi = rules[i](gn, ans, *args, **params)
            if gi is None:
                continue
            pk = id(parent)
            prev = grads.get(pk)
            grads[pk] = gi if prev is None else prev + gi
    return [grads.get(id(n)) for n in wanted]


def _by_seq(node: Node) -> int:
    return node.seq


def is_reverse_tracer_of(x: Any, trace: Trace) -> bool:
    return isinstance(x, ReverseTracer) and x._trace is trace


__all__ += ["is_reverse_tracer_of", "new_reverse_tracer"]
_ = Tracer
