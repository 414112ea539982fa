"""Activation functions by name, built from the runtime's ops (so every backend and both autodiff
modes support them).

``get("relu")`` (or ``"Relu"``, or a callable) returns the function; ``serialize(fn)`` gives the
name saved in model files.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ops
from ..autodiff.core import Primitive, bind
from ..ops.creation import as_tensor
from ..tensor import Tensor
from .registry import Registry

__all__ = [
    "elu",
    "gelu",
    "get",
    "linear",
    "relu",
    "selu",
    "serialize",
    "sigmoid",
    "softmax",
    "softplus",
    "tanh",
]

_REG = Registry("activation")


@_REG.register("linear", "identity")
def linear(x: Tensor) -> Tensor:
    return x


def _relu_impl(x: Tensor) -> Tensor:
    return ops.maximum(x, 0.0)


# ``max(x, 0)`` with the gradient ``g * (relu(x) > 0)``: a multiply by the mask instead of the
# generic ``where`` of ``maximum``'s rule, which is branchy on NumPy and about 6x slower on the
# unpredictable masks of real data.
_relu = Primitive("relu", _relu_impl)
_relu.defvjp(lambda g, ans, x: g * ops.cast(ans > 0, g.dtype))


@_REG.register("relu")
def relu(x: Tensor) -> Tensor:
    return bind(_relu, (as_tensor(x, "x"),), {})


@_REG.register("elu")
def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    return ops.elu(x, alpha)


@_REG.register("selu")
def selu(x: Tensor) -> Tensor:
    return ops.selu(x)


@_REG.register("gelu")
def gelu(x: Tensor, approximate: bool = False) -> Tensor:
    return ops.gelu(x, approximate)


@_REG.register("tanh")
def tanh(x: Tensor) -> Tensor:
    return ops.tanh(x)


@_REG.register("sigmoid")
def sigmoid(x: Tensor) -> Tensor:
    return ops.sigmoid(x)


@_REG.register("softplus")
def softplus(x: Tensor) -> Tensor:
    return ops.softplus(x)


@_REG.register("softmax")
def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return ops.softmax(x, axis)


def get(identifier: Any) -> Callable[[Tensor], Tensor]:
    """The activation for a name (any spelling), ``None`` (linear) or a callable."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        return _REG.lookup(identifier)
    if callable(identifier):
        return identifier
    raise TypeError(f"activation: expected a name or a callable, got {identifier!r}")


def serialize(fn: Callable[[Tensor], Tensor]) -> str:
    name = getattr(fn, "__name__", None)
    if name is None or name not in _REG or _REG.lookup(name) is not fn:
        raise TypeError(
            f"activation {fn!r} is not a named activation and cannot be saved; use one of "
            f"{', '.join(_REG.names())}"
        )
    return name


def names() -> list[str]:
    return _REG.names()
