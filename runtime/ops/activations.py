"""Activation functions built from primitives (their gradients come from composition)."""

from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor
from .arithmetic import maximum, where
from .creation import as_tensor
from .elementwise import erf, exp, expm1, tanh
from .reduction import logsumexp

__all__ = ["elu", "gelu", "log_softmax", "relu", "selu", "softmax"]


def relu(x: Any) -> Tensor:
    return maximum(as_tensor(x, "x"), 0.0)


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    x = as_tensor(x, "x")
    return where(x > 0, x, alpha * expm1(where(x > 0, 0.0, x)))


def selu(x: Any) -> Tensor:
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return scale * elu(x, alpha)


def gelu(x: Any, approximate: bool = False) -> Tensor:
    """Gaussian error linear unit (exact erf form, or the tanh approximation)."""
    x = as_tensor(x, "x")
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    x = as_tensor(x, "x")
    return x - logsumexp(x, axis, keepdims=True)


def softmax(x: Any, axis: int = -1) -> Tensor:
    return exp(log_softmax(x, axis))
