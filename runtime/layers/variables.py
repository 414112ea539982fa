"""Variables: the mutable holders of a layer's weights.

Tensors are immutable, so a layer keeps each weight in a :class:`Variable` whose ``value`` is
replaced by ``assign``. Layer code reads ``variable.value`` and never cares where it came from:

* normally it is the stored tensor;
* inside :func:`substitute` (how the training step runs) it is whatever tensor the step passed in
  for that variable — a tracer under ``value_and_grad``, a staged input under ``tb.function``.

This is what keeps the training step a pure function of its inputs (weights in, new weights out)
while layers are written in the familiar object style (Keras 3 calls the same idea a stateless
scope).
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from .. import dtypes as D
from ..errors import ShapeError
from ..ops.creation import tensor
from ..tensor import Tensor

__all__ = ["Variable", "current_substitution", "substitute"]

_local = threading.local()


def current_substitution() -> Mapping[Variable, Tensor] | None:
    """The innermost active substitution on this thread (None outside any)."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def substitute(values: Mapping[Variable, Tensor]) -> Iterator[None]:
    """Within the block, ``var.value`` returns ``values[var]`` for the variables given.

    Substitutions nest; an inner one sees the outer one's entries it does not override.
    """
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    merged = dict(stack[-1]) if stack else {}
    merged.update(values)
    stack.append(merged)
    try:
        yield
    finally:
        stack.pop()


class Variable:
    """A named, shaped, typed weight. ``value`` reads it; ``assign`` replaces it.

    ``name`` is the path used in summaries and in saved files (``"dense/kernel"``);
    ``trainable`` variables receive gradients in ``fit``.
    """

    __slots__ = ("__weakref__", "_value", "dtype", "name", "shape", "trainable")

    def __init__(self, value: Tensor, name: str, trainable: bool = True) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable {name!r}: expected a Tensor, got {type(value).__name__}")
        self._value = value
        self.name = name
        self.shape: tuple[int, ...] = tuple(value.shape)
        self.dtype: D.DType = value.dtype
        self.trainable = bool(trainable)

    # Variables are dict keys (substitutions, optimizer slots): identity semantics.
    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other

    @property
    def value(self) -> Tensor:
        stack = getattr(_local, "stack", None)
        if stack:
            found = stack[-1].get(self)
            if found is not None:
                return found
        return self._value

    def read(self) -> Tensor:
        """The stored tensor, ignoring any substitution."""
        return self._value

    def assign(self, value: Any) -> None:
        """Replace the stored value (same shape; converted to this variable's dtype/backend)."""
        backend = self._value.backend
        t = value if isinstance(value, Tensor) else tensor(value, backend=backend)
        if t.backend is not backend:
            t = t.to(backend)
        if tuple(t.shape) != self.shape:
            raise ShapeError(
                f"Variable {self.name!r}: cannot assign a value of shape {list(t.shape)} to a "
                f"variable of shape {list(self.shape)}"
            )
        if t.dtype is not self.dtype:
            t = t.astype(self.dtype)
        self._value = t

    @property
    def backend(self) -> Any:
        return self._value.backend

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def numpy(self) -> Any:
        return self._value.numpy()

    def __repr__(self) -> str:
        kind = "" if self.trainable else ", trainable=False"
        return f"<Variable {self.name!r} shape={self.shape} dtype={self.dtype.name}{kind}>"
