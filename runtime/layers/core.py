"""Core layers: Dense, Activation, Flatten, Dropout, Embedding."""

from __future__ import annotations

from typing import Any

from .. import dtypes as D
from .. import ops
from ..errors import ShapeError
from ..ops.creation import tensor
from ..tensor import Tensor
from . import activations as _act
from . import initializers as _init
from .base import InputSpec, Layer, register_layer
from .primitives import embedding_lookup
from .symbolic import format_shape

__all__ = ["Activation", "Dense", "Dropout", "Embedding", "Flatten"]


def _keep_float_dtype(layer: Layer, input_dtype: Any) -> Any:
    dt = input_dtype[0] if isinstance(input_dtype, list) else input_dtype
    return dt if dt.kind == "f" else (layer.dtype or D.float32)


@register_layer
class Dense(Layer):
    """``activation(inputs @ kernel + bias)``: a fully connected layer on the last axis.

    ``kernel`` has shape ``(input_dim, units)``; inputs of rank > 2 are transformed on their last
    axis (``(batch, t, d) -> (batch, t, units)``).
    """

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if int(units) <= 0:
            raise ValueError(f"units: must be a positive integer, got {units!r}")
        self.units = int(units)
        self.activation = _act.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _init.get(kernel_initializer)
        self.bias_initializer = _init.get(bias_initializer)
        self.kernel: Any = None
        self.bias: Any = None

    def build(self, input_shape: Any) -> None:
        if len(input_shape) < 2:
            raise ShapeError(f"layer {self.name!r} (Dense) needs inputs of rank >= 2 (batch, "
                             f"features), got shape {format_shape(input_shape)}")
        in_dim = input_shape[-1]
        if in_dim is None:
            raise ShapeError(f"layer {self.name!r} (Dense): the last dimension of its input "
                             f"must be known, got shape {format_shape(input_shape)}")
        self.kernel = self.add_weight("kernel", (in_dim, self.units), self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer)
        self.input_spec = InputSpec(min_ndim=2, axes={-1: in_dim})

    def call(self, inputs: Any) -> Any:
        y = ops.matmul(inputs, self.kernel.value)
        if self.use_bias:
            y = y + self.bias.value
        return self.activation(y)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return (*input_shape[:-1], self.units)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "units": self.units,
                "activation": _act.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": _init.serialize(self.kernel_initializer),
                "bias_initializer": _init.serialize(self.bias_initializer)}


@register_layer
class Activation(Layer):
    """Applies an activation function (``"relu"``, ``"softmax"``… or a callable)."""

    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.activation = _act.get(activation)

    def call(self, inputs: Any) -> Any:
        return self.activation(inputs)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def compute_output_dtype(self, input_dtype: Any) -> Any:
        return _keep_float_dtype(self, input_dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "activation": _act.serialize(self.activation)}


@register_layer
class Flatten(Layer):
    """Flattens every dimension but the batch: ``(batch, a, b) -> (batch, a * b)``."""

    def build(self, input_shape: Any) -> None:
        if any(d is None for d in input_shape[1:]):
            raise ShapeError(f"layer {self.name!r} (Flatten) needs every non-batch dimension "
                             f"known, got shape {format_shape(input_shape)}")
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs: Any) -> Any:
        if inputs.ndim <= 1:
            return ops.reshape(inputs, (inputs.shape[0] if inputs.ndim else 1, 1))
        return ops.reshape(inputs, (inputs.shape[0], -1))

    def compute_output_shape(self, input_shape: Any) -> Any:
        n = 1
        for d in input_shape[1:]:
            n *= d
        return (input_shape[0], n)

    def compute_output_dtype(self, input_dtype: Any) -> Any:
        return input_dtype


@register_layer
class Dropout(Layer):
    """Sets a fraction ``rate`` of its inputs to zero while training and scales the rest by
    ``1 / (1 - rate)``; the identity otherwise (``predict``, ``evaluate``).

    ``noise_shape`` broadcasts one mask over some axes (``(None, 1, d)``: the same units dropped
    at every time step); ``seed`` makes the masks reproducible.
    """

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0.0 <= float(rate) < 1.0:
            raise ValueError(f"rate: must be in [0, 1), got {rate!r}")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self._seed = seed

    def _mask_shape(self, shape: Any) -> tuple[int, ...]:
        if self.noise_shape is None:
            return tuple(shape)
        if len(self.noise_shape) != len(shape):
            raise ShapeError(f"layer {self.name!r} (Dropout): noise_shape {self.noise_shape} "
                             f"does not match the input's rank ({format_shape(shape)})")
        return tuple(s if n is None else n for n, s in zip(self.noise_shape, shape))

    def random_shapes(self, input_shape: Any) -> list[tuple[int, ...]]:
        return [self._mask_shape(input_shape)] if self.rate > 0 else []

    def call(self, inputs: Any, training: bool = False) -> Any:
        if not training or self.rate == 0.0:
            return inputs
        u = self.random_uniform(self._mask_shape(inputs.shape), inputs.dtype, inputs.backend)
        keep = ops.cast(u >= self.rate, inputs.dtype)
        return inputs * (keep * (1.0 / (1.0 - self.rate)))

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def compute_output_dtype(self, input_dtype: Any) -> Any:
        return _keep_float_dtype(self, input_dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "rate": self.rate,
                "noise_shape": list(self.noise_shape) if self.noise_shape else None,
                "seed": self.seed}


@register_layer
class Embedding(Layer):
    """Maps integer ids in ``[0, input_dim)`` to trainable vectors of length ``output_dim``:
    ``(batch, ...) -> (batch, ..., output_dim)``."""

    def __init__(self, input_dim: int, output_dim: int,
                 embeddings_initializer: Any = "random_uniform", input_length: int | None = None,
                 **kwargs: Any) -> None:
        if input_length is not None and "input_shape" not in kwargs and \
                "batch_input_shape" not in kwargs:
            kwargs["input_shape"] = (int(input_length),)
        super().__init__(**kwargs)
        if int(input_dim) <= 0 or int(output_dim) <= 0:
            raise ValueError("Embedding: input_dim and output_dim must be positive")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = _init.get(embeddings_initializer)
        self.embeddings: Any = None

    def _resolve_dtype(self, input_dtype: Any) -> None:
        if self.dtype is None:
            self.dtype = D.float32  # integer inputs; the table is float32 unless told

    def build(self, input_shape: Any) -> None:
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          self.embeddings_initializer)

    def _convert_input(self, x: Any) -> Any:
        t = x if isinstance(x, Tensor) else tensor(x, backend=self._weights[0].backend
                                                    if self._weights else None)
        return t

    def call(self, inputs: Any) -> Any:
        if inputs.dtype.kind != "i":
            inputs = ops.cast(inputs, D.int32)
        return embedding_lookup(self.embeddings.value, inputs)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return (*input_shape, self.output_dim)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim,
                "embeddings_initializer": _init.serialize(self.embeddings_initializer)}
