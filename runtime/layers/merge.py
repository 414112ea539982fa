"""Layers that combine several inputs (for functional models): Add, Subtract, Multiply, Average,
Concatenate."""

from __future__ import annotations

import functools
from typing import Any

from .. import ops
from ..errors import ShapeError
from .base import Layer, register_layer
from .symbolic import format_shape

__all__ = ["Add", "Average", "Concatenate", "Multiply", "Subtract"]


def _broadcast(layer: Layer, shapes: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    rank = max(len(s) for s in shapes)
    out: list[Any] = []
    for axis in range(rank):
        dims = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0}
        known = {d for d in dims if d not in (None, 1)}
        if len(known) > 1:
            raise ShapeError(f"layer {layer.name!r} ({type(layer).__name__}): input shapes "
                             f"{', '.join(format_shape(s) for s in shapes)} do not broadcast")
        out.append(known.pop() if known else (None if None in dims else 1))
    return tuple(out)


class _Merge(Layer):
    def build(self, input_shape: Any) -> None:
        if not isinstance(input_shape, list) or len(input_shape) < 2:
            raise ValueError(f"layer {self.name!r} ({type(self).__name__}) must be called on a "
                             f"list of at least two inputs")
        _broadcast(self, input_shape)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return _broadcast(self, input_shape)

    def compute_output_dtype(self, input_dtype: Any) -> Any:
        return input_dtype[0]

    def _merge(self, xs: list[Any]) -> Any:
        raise NotImplementedError

    def call(self, inputs: Any) -> Any:
        return self._merge(list(inputs))


@register_layer
class Add(_Merge):
    def _merge(self, xs):
        return functools.reduce(ops.add, xs)


@register_layer
class Subtract(_Merge):
    def build(self, input_shape):
        super().build(input_shape)
        if len(input_shape) != 2:
            raise ValueError(f"layer {self.name!r} (Subtract) needs exactly two inputs")

    def _merge(self, xs):
        return xs[0] - xs[1]


@register_layer
class Multiply(_Merge):
    def _merge(self, xs):
        return functools.reduce(ops.multiply, xs)


@register_layer
class Average(_Merge):
    def _merge(self, xs):
        return functools.reduce(ops.add, xs) * (1.0 / len(xs))


@register_layer
class Concatenate(Layer):
    """Joins its inputs along ``axis`` (default: the last)."""

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = int(axis)

    def compute_output_shape(self, input_shape: Any) -> Any:
        if not isinstance(input_shape, list) or len(input_shape) < 2:
            raise ValueError(f"layer {self.name!r} (Concatenate) must be called on a list of at "
                             f"least two inputs")
        rank = len(input_shape[0])
        if any(len(s) != rank for s in input_shape):
            raise ShapeError(f"layer {self.name!r} (Concatenate): inputs of different ranks "
                             f"{', '.join(format_shape(s) for s in input_shape)}")
        axis = self.axis % rank
        out = list(input_shape[0])
        for s in input_shape[1:]:
            for i in range(rank):
                if i == axis:
                    continue
                if None not in (out[i], s[i]) and out[i] != s[i]:
                    raise ShapeError(
                        f"layer {self.name!r} (Concatenate): shapes "
                        f"{', '.join(format_shape(t) for t in input_shape)} differ outside "
                        f"axis {self.axis}")
                out[i] = out[i] if out[i] is not None else s[i]
        sizes = [s[axis] for s in input_shape]
        out[axis] = None if None in sizes else sum(sizes)
        return tuple(out)

    def build(self, input_shape: Any) -> None:
        self.compute_output_shape(input_shape)

    def compute_output_dtype(self, input_dtype: Any) -> Any:
        return input_dtype[0]

    def call(self, inputs: Any) -> Any:
        return ops.concat(list(inputs), axis=self.axis)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axis": self.axis}
