"""Model inputs: ``input(shape=(784,))`` makes a symbolic tensor of shape ``(None, 784)``."""

from __future__ import annotations

import builtins
from typing import Any

from .. import dtypes as D
from .base import Layer, _as_shape, register_layer, unique_name
from .symbolic import Node, SymbolicTensor

__all__ = ["Input", "InputLayer", "input"]


@register_layer
class InputLayer(Layer):
    """The layer behind a model input; it has no weights and is never called."""

    def __init__(self, shape: Any = None, dtype: Any = "float32", name: str | None = None,
                 batch_size: int | None = None, batch_input_shape: Any = None,
                 input_shape: Any = None, **kwargs: Any) -> None:
        if batch_input_shape is None:
            shape = shape if shape is not None else input_shape
            if shape is None:
                raise ValueError("input: give shape=(...) without the batch dimension")
            batch_input_shape = (batch_size, *_as_shape(shape))
        kwargs.pop("sparse", None)
        kwargs.pop("ragged", None)
        name = name if name is not None else unique_name("input")
        super().__init__(name=name, dtype=dtype, batch_input_shape=batch_input_shape, **kwargs)
        self.built = True
        node = Node(self, [], False, {})
        out = SymbolicTensor(self.batch_input_shape, self.dtype, self.name, node, 0)
        node.outputs = [out]

    def call(self, inputs: Any, training: bool = False) -> Any:
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict[str, Any]:
        return {"batch_input_shape": list(self.batch_input_shape), "dtype": self.dtype.name,
                "name": self.name}


def input(shape: Any = None, dtype: Any = "float32", name: str | None = None,
          batch_size: int | None = None) -> SymbolicTensor:
    """A symbolic model input: ``shape`` excludes the batch dimension, which stays unknown.

    >>> x = tb.layers.input(shape=(784,))      # SymbolicTensor(shape=(None, 784), ...)
    """
    if isinstance(shape, builtins.int):
        shape = (shape,)
    layer = InputLayer(shape=shape, dtype=D.as_dtype(dtype), name=name, batch_size=batch_size)
    return layer.output


Input = input
