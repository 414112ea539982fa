"""greta's inverse link functions beyond ``ilogit`` (which is the ``sigmoid`` op): ``iprobit``,
``icloglog``, ``icauchit`` and ``imultilogit``, written with tensorbridge ops, so they work on
tensors and on lazy arrays (and are differentiable) alike."""

from __future__ import annotations

import math
from typing import Any

from ... import ops
from .special import atan, ndtr

__all__ = ["icauchit", "icloglog", "imultilogit", "iprobit"]


def iprobit(x: Any) -> Any:
    """The standard normal CDF, Phi(x): the inverse of the probit link."""
    return ndtr(x)


def icloglog(x: Any) -> Any:
    """1 - exp(-exp(x)): the inverse of the complementary log-log link (as -expm1, accurate
    where the result is small)."""
    return -ops.expm1(-ops.exp(x))


def icauchit(x: Any) -> Any:
    """1/2 + atan(x) / pi: the standard Cauchy CDF, the inverse of the cauchit link."""
    return 0.5 + atan(x) / math.pi


def imultilogit(x: Any) -> Any:
    """greta's inverse multilogit: an n x (K - 1) matrix of log-odds against the last category
    to n x K probabilities (the softmax of each row with a zero appended)."""
    if not hasattr(x, "backend"):  # numbers or a host array
        x = ops.tensor(x, dtype="float64")
    if x.ndim != 2:
        raise ValueError(f"imultilogit: x must be a 2-dimensional array (n x (K - 1)), got "
                         f"shape {list(x.shape)}")
    zero = ops.zeros((x.shape[0], 1), dtype=x.dtype, backend=x.backend)
    return ops.softmax(ops.concat([x, zero], axis=-1), axis=-1)
