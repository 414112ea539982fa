"""Running a layer graph: topological order computed once, a feed dict, early release.

``GraphExecutor(inputs, outputs)`` walks the graph back from ``outputs`` once, orders the nodes so
every node comes after the nodes that produce its inputs, and notes for each intermediate tensor
the step after which nothing needs it. ``run(feed)`` then calls the layers in that order and
drops each intermediate as soon as its last consumer has run (``release="dispose"`` also frees its
buffer, TensorFlow.js style, when nothing else refers to it — for eager inference; under autodiff
or staging values are only dropped, since the backward pass still needs them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..autodiff import core as _prim
from ..errors import ShapeError
from ..tensor import Tensor
from .base import Layer
from .symbolic import Node, SymbolicTensor, format_shape

__all__ = ["GraphExecutor", "topological_nodes"]


def topological_nodes(outputs: Sequence[SymbolicTensor]) -> list[Node]:
    """Every node the outputs depend on, each once, producers before consumers."""
    order: list[Node] = []
    state: dict[int, int] = {}  # id(node) -> 1 visiting, 2 done
    for out in outputs:
        if out.node is None:
            continue
        stack: list[tuple[Node, int]] = [(out.node, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0:
                s = state.get(id(node))
                if s == 2:
                    continue
                if s == 1:
                    raise ValueError(f"the layer graph has a cycle through {node.layer.name!r}")
                state[id(node)] = 1
            parents = node.inputs
            if i < len(parents):
                stack.append((node, i + 1))
                p = parents[i].node
                if p is not None and state.get(id(p)) != 2:
                    stack.append((p, 0))
            else:
                state[id(node)] = 2
                order.append(node)
    return order


class GraphExecutor:
    """Evaluates ``outputs`` from values for ``inputs``. Build once, run many times."""

    def __init__(self, inputs: Sequence[SymbolicTensor], outputs: Sequence[SymbolicTensor]) -> None:
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        input_ids = {id(t) for t in self.inputs}
        if len(input_ids) != len(self.inputs):
            raise ValueError("a model input is listed twice")
        nodes = topological_nodes(self.outputs)
        known = set(input_ids)
        steps: list[Node] = []
        for node in nodes:
            if not node.inputs:  # an InputLayer: its tensor must be a model input
                t = node.outputs[0]
                if id(t) not in input_ids:
                    raise ValueError(
                        f"the outputs depend on input {t.name!r} {format_shape(t.shape)}, which "
                        f"is not among the model's inputs "
                        f"({', '.join(i.name for i in self.inputs) or 'none'})"
                    )
                continue
            for t in node.inputs:
                if id(t) not in known:
                    raise ValueError(f"layer {node.layer.name!r} consumes {t.name!r}, which "
                                     f"cannot be computed from the model's inputs")
            steps.append(node)
            known.update(id(t) for t in node.outputs)
        self.nodes = steps
        # last consumer of each tensor -> release lists
        last: dict[int, int] = {}
        for k, node in enumerate(steps):
            for t in node.inputs:
                last[id(t)] = k
        keep = {id(t) for t in self.outputs}
        release: list[list[SymbolicTensor]] = [[] for _ in steps]
        for k, node in enumerate(steps):
            for t in node.outputs:  # produced but never consumed
                if id(t) not in last and id(t) not in keep:
                    release[k].append(t)
        seen: set[int] = set()
        for k, node in enumerate(steps):
            for t in node.inputs:
                if last[id(t)] == k and id(t) not in keep and id(t) not in seen:
                    seen.add(id(t))
                    release[k].append(t)
        self._plan = list(zip(steps, release))
        self._random_nodes = [n for n in steps if _has_randomness(n.layer)]

    # -- layers ---------------------------------------------------------------------------------
    @property
    def layers(self) -> list[Any]:
        """Every layer of the graph once, input layers first, in execution order."""
        out: list[Any] = []
        seen: set[int] = set()
        for node in topological_nodes(self.outputs):
            if id(node.layer) not in seen:
                seen.add(id(node.layer))
                out.append(node.layer)
        return out

    # -- running --------------------------------------------------------------------------------
    def run(self, feed: Mapping[SymbolicTensor, Tensor] | Sequence[Tensor], training: bool = False,
            release: str = "drop") -> list[Tensor]:
        """Values of the outputs. ``feed``: a value per input (a dict keyed by the symbolic inputs,
        or a list in input order). ``release``: ``"drop"`` forgets intermediates after their
        last use, ``"dispose"`` also disposes them (eager inference only)."""
        values: dict[int, Any] = {}
        if isinstance(feed, Mapping):
            for t in self.inputs:
                if t not in feed:
                    raise ValueError(f"feed: no value for input {t.name!r}")
                values[id(t)] = feed[t]
        else:
            if len(feed) != len(self.inputs):
                raise ValueError(f"feed: the model has {len(self.inputs)} input(s), got "
                                 f"{len(feed)} value(s)")
            for t, v in zip(self.inputs, feed):
                values[id(t)] = v
        dispose = release == "dispose"  # never disposes a tracer (staging, autodiff)
        protected = {id(v) for v in values.values()} if dispose else set()
        for node, rel in self._plan:
            args = [values[id(t)] for t in node.inputs]
            out = node.layer._invoke(args if node.input_is_list else args[0], training,
                                     node.kwargs)
            outs = out if node.output_is_list else [out]
            if len(outs) != len(node.outputs):
                raise ValueError(f"layer {node.layer.name!r} returned {len(outs)} output(s); "
                                 f"its graph node has {len(node.outputs)}")
            for t, v in zip(node.outputs, outs):
                if isinstance(v, Tensor) and t.shape and len(v.shape) != len(t.shape):
                    raise ShapeError(f"layer {node.layer.name!r} returned shape {v.shape}; "
                                     f"expected {format_shape(t.shape)}")
                values[id(t)] = v
            for t in rel:
                v = values.pop(id(t))
                if dispose:
                    _dispose_if_unreferenced(v, values, protected)
        return [values[id(t)] for t in self.outputs]

    def random_plan(self, input_shapes: Sequence[tuple[int, ...]]) -> list[tuple[Any, list]]:
        """``[(layer, [shape, ...]), ...]``: the uniform draws a training run with inputs of these
        concrete shapes makes, in execution order (nested models included)."""
        if not self._random_nodes:
            return []
        concrete = _concrete_shapes(self, input_shapes)
        plan: list[tuple[Any, list]] = []
        for node in self._random_nodes:
            shapes = [concrete[id(t)] for t in node.inputs]
            layer = node.layer
            arg = shapes if node.input_is_list else shapes[0]
            sub = getattr(layer, "_random_plan", None)
            if sub is not None:
                plan.extend(sub(shapes))
            else:
                plan.append((layer, [tuple(s) for s in layer.random_shapes(arg)]))
        return plan


def _has_randomness(layer: Any) -> bool:
    if hasattr(layer, "_random_plan"):
        return bool(layer._executor_or_none() and layer._executor_or_none()._random_nodes)
    return type(layer).random_shapes is not Layer.random_shapes


def _concrete_shapes(ex: GraphExecutor, input_shapes: Sequence[tuple[int, ...]]
                     ) -> dict[int, tuple[int, ...]]:
    """Concrete shapes of every tensor, from the inputs' (batch size substituted for None)."""
    batch = input_shapes[0][0] if input_shapes and input_shapes[0] else None
    out: dict[int, tuple[int, ...]] = {}
    for t, s in zip(ex.inputs, input_shapes):
        out[id(t)] = tuple(s)
    for node in ex.nodes:
        for t in node.outputs:
            dims = []
            for i, d in enumerate(t.shape):
                if d is None:
                    if i != 0 or batch is None:
                        raise ShapeError(
                            f"layer {node.layer.name!r}: output shape {format_shape(t.shape)} has "
                            f"an unknown non-batch dimension; random draws need it known")
                    d = batch
                dims.append(d)
            out[id(t)] = tuple(dims)
    return out


def _dispose_if_unreferenced(v: Any, live: dict[int, Any], protected: set[int]) -> None:
    if not isinstance(v, Tensor) or isinstance(v, _prim.Tracer) or id(v) in protected:
        return
    for other in live.values():
        if other is v:
            return
    v.dispose()
