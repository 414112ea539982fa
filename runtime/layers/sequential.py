"""``Sequential``: a linear stack of layers, built as soon as its input shape is known."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes as D
from ..tensor import Tensor
from . import data as _data
from .base import Layer, register_layer, unique_name
from .core import Embedding
from .input_layer import InputLayer
from .model import Model
from .serialization import deserialize_layer, serialize_layer
from .symbolic import SymbolicTensor

__all__ = ["Sequential"]


@register_layer
class Sequential(Model):
    """A linear stack of layers: ``Sequential([Dense(128, activation="relu",
    input_shape=(784,)), Dense(10)])`` or ``model.add(layer)`` one at a time.

    The model is built as soon as the input shape is known: from the first layer's
    ``input_shape``, from a leading ``tb.layers.input(...)``, or from the first data given to
    ``fit``/``predict``/a call.
    """

    _is_sequential = True

    def __init__(self, layers: Sequence[Any] | None = None, name: str | None = None,
                 trainable: bool = True, **kwargs: Any) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        self._stack: list[Layer] = []
        self._input_layer: InputLayer | None = None
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self) -> list[Layer]:
        return list(self._stack)

    def add(self, layer: Any) -> None:
        """Append a layer (or, first, a ``tb.layers.input(...)``/``InputLayer``)."""
        if isinstance(layer, SymbolicTensor):
            if not isinstance(layer.layer, InputLayer):
                raise TypeError("Sequential.add: only tb.layers.input(...) tensors can be added")
            layer = layer.layer
        if isinstance(layer, InputLayer):
            if self._stack or self._input_layer is not None:
                raise ValueError("Sequential: an input can only be added first")
            self._input_layer = layer
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential.add: expected a layer, got {type(layer).__name__}")
        if any(lay.name == layer.name for lay in self._stack):
            raise ValueError(f"Sequential: a layer named {layer.name!r} is already in the model")
        self._stack.append(layer)
        if self._input_layer is None and len(self._stack) == 1 and \
                layer.batch_input_shape is not None:
            dtype = _first_input_dtype(layer, None)
            self._input_layer = InputLayer(batch_input_shape=layer.batch_input_shape,
                                           dtype=dtype, name=unique_name("input"))
        if self._input_layer is not None:
            if self._executor is None or len(self._stack) == 1:
                self._rebuild()
            else:
                out = layer(self.outputs[0])
                self._init_graph(self.inputs[0], out)

    def pop(self) -> Layer:
        """Remove and return the last layer."""
        if not self._stack:
            raise ValueError("Sequential.pop: the model has no layers")
        layer = self._stack.pop()
        if self._input_layer is not None and self._stack:
            self._rebuild()
        elif not self._stack:
            self._executor = None
            self.inputs, self.outputs = [], []
        return layer

    def _rebuild(self) -> None:
        x = self._input_layer.output
        out = x
        for layer in self._stack:
            out = layer(out)
        if self._stack:
            self._init_graph(x, out)

    def _ensure_built(self, data: list[Any]) -> None:
        if self._executor is not None or not data:
            return
        if not self._stack:
            raise ValueError("Sequential: add layers before using the model")
        first = data[0]
        if isinstance(first, Tensor):
            shape, dtype = tuple(first.shape), first.dtype
        else:
            arr = _data.as_host(first, D.float64, "x") if not hasattr(first, "dtype") else first
            shape = tuple(arr.shape)
            dtype = _data.host_dtype(arr) if hasattr(arr, "dtype") else D.float32
        self._input_layer = InputLayer(batch_input_shape=(None, *shape[1:]),
                                       dtype=_first_input_dtype(self._stack[0], dtype),
                                       name=unique_name("input"))
        self._rebuild()

    def build(self, input_shape: Any = None) -> None:
        """Build for inputs of ``input_shape`` (with the batch dimension, which may be None)."""
        if self._executor is not None:
            return
        if input_shape is None or not self._stack:
            self._require_graph()
        self._input_layer = InputLayer(batch_input_shape=tuple(input_shape),
                                       dtype=_first_input_dtype(self._stack[0], None),
                                       name=unique_name("input"))
        self._rebuild()

    def get_config(self) -> dict[str, Any]:
        layers = []
        for i, layer in enumerate(self._stack):
            entry = serialize_layer(layer)
            if i == 0 and self._input_layer is not None:
                entry["config"]["batch_input_shape"] = list(
                    self._input_layer.batch_input_shape)
                if self._input_layer.dtype.kind != "f":
                    entry["config"]["input_dtype"] = self._input_layer.dtype.name
            layers.append(entry)
        return {"name": self.name, "trainable": self.trainable, "layers": layers}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Sequential:
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for i, spec in enumerate(config["layers"]):
            spec = {"class_name": spec["class_name"], "config": dict(spec["config"])}
            input_dtype = spec["config"].pop("input_dtype", None)
            layer = deserialize_layer(spec)
            if i == 0 and input_dtype is not None and layer.batch_input_shape is not None:
                model.add(InputLayer(batch_input_shape=layer.batch_input_shape,
                                     dtype=input_dtype, name=unique_name("input")))
            model.add(layer)
        return model


def _first_input_dtype(layer: Layer, data_dtype: D.DType | None) -> D.DType:
    """The dtype of a Sequential model's input: integer ids for an Embedding first layer (or
    integer data), else the first layer's dtype, else float32."""
    if isinstance(layer, Embedding):
        return data_dtype if data_dtype is not None and data_dtype.kind == "i" else D.int32
    if layer.dtype is not None:
        return layer.dtype
    return D.float32
