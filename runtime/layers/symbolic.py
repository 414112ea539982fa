"""Symbolic tensors and the nodes that connect layers into a graph.

Calling a layer on a :class:`SymbolicTensor` (made by :func:`~.input_layer.input` or by another
layer) computes nothing: it records a :class:`Node` — the layer, the symbolic tensors it consumed
and the ones it produced — and returns the outputs. A functional ``Model(inputs, outputs)`` later
walks these nodes back from its outputs (see ``executor.py``).

Shapes are tuples whose unknown dimensions (always the batch dimension) are ``None``.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..dtypes import DType

__all__ = ["Node", "SymbolicTensor", "format_shape", "is_symbolic"]

_next_id = itertools.count(1).__next__


def format_shape(shape: Any) -> str:
    """``(None, 128)`` style text for a shape (or a list of shapes)."""
    if isinstance(shape, list):
        return "[" + ", ".join(format_shape(s) for s in shape) + "]"
    dims = ", ".join("None" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


class SymbolicTensor:
    """A placeholder for a tensor in a layer graph: shape (``None`` = unknown), dtype, producer.

    ``node`` is the :class:`Node` that produced it and ``index`` its position among that node's
    outputs. Symbolic tensors hold no values; pass them to layers or to ``Model(inputs, ...)``.
    """

    __slots__ = ("dtype", "id", "index", "name", "node", "shape")

    def __init__(self, shape: tuple[int | None, ...], dtype: DType, name: str,
                 node: Node | None = None, index: int = 0) -> None:
        self.id = _next_id()
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = dtype
        self.name = name
        self.node = node
        self.index = index

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def layer(self) -> Any:
        return self.node.layer if self.node is not None else None

    def __bool__(self) -> bool:
        raise TypeError(
            f"symbolic tensor {self.name!r} has no value: it stands for data that will be fed "
            f"later (use it as a layer input or as a Model input/output)"
        )

    def numpy(self) -> Any:
        raise TypeError(
            f"symbolic tensor {self.name!r} has no value; call model.predict(x) to compute one"
        )

    def __repr__(self) -> str:
        return (f"SymbolicTensor(shape={format_shape(self.shape)}, dtype={self.dtype.name}, "
                f"name={self.name!r})")


class Node:
    """One call of a layer in a graph: ``outputs = layer(inputs, **kwargs)``.

    ``input_structure`` remembers whether the layer was called on one tensor or a list, so the
    executor calls it the same way with real tensors.
    """

    __slots__ = ("index", "input_is_list", "inputs", "kwargs", "layer", "output_is_list",
                 "outputs")

    def __init__(self, layer: Any, inputs: list[SymbolicTensor], input_is_list: bool,
                 kwargs: dict[str, Any]) -> None:
        self.layer = layer
        self.inputs = inputs
        self.input_is_list = input_is_list
        self.kwargs = kwargs
        self.outputs: list[SymbolicTensor] = []
        self.output_is_list = False
        self.index = len(layer._inbound_nodes)
        layer._inbound_nodes.append(self)

    @property
    def parents(self) -> list[Node]:
        return [t.node for t in self.inputs if t.node is not None]

    def __repr__(self) -> str:
        ins = ", ".join(t.name for t in self.inputs)
        return f"<Node {self.layer.name}[{self.index}]({ins})>"


def is_symbolic(x: Any) -> bool:
    if isinstance(x, SymbolicTensor):
        return True
    if isinstance(x, list | tuple):
        return any(isinstance(v, SymbolicTensor) for v in x)
    return False
