"""Defining new primitives: a forward function plus derivative rules.

    import tensorbridge as tb

    @tb.primitive
    def logaddexp(x, y):                     # forward: runs on concrete tensors
        m = tb.maximum(x, y)
        return m + tb.log(tb.exp(x - m) + tb.exp(y - m))

    logaddexp.defvjp(                        # one rule per argument: (g, ans, *args) -> cotangent
        lambda g, ans, x, y: g * tb.exp(x - ans),
        lambda g, ans, x, y: g * tb.exp(y - ans),
    )
    # optional: logaddexp.defjvp(lambda t, ans, x, y: t * tb.exp(x - ans), ...)
    # without JVP rules forward mode transposes the VJP rules, so both modes work.

    tb.check_grads(logaddexp, (x, y), order=2)

Rules receive the output cotangent ``g`` (or tangent ``t``), the forward result ``ans``, the
arguments and any keyword parameters; they must use tensorbridge ops so they can be
differentiated again. Returning ``None`` means a zero derivative. Keyword arguments of the
primitive are static parameters (never differentiated).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ops.arguments import is_scalar
from ..ops.creation import as_tensor, tensor
from ..tensor import Tensor
from .core import Primitive, bind

__all__ = ["CustomPrimitive", "primitive"]


class CustomPrimitive(Primitive):
    """A user-defined primitive; call it like a function."""

    def __init__(self, forward: Callable[..., Any], name: str | None = None) -> None:
        self.forward = forward
        self.__name__ = name or getattr(forward, "__name__", "primitive")
        self.__doc__ = getattr(forward, "__doc__", None)
        super().__init__(self.__name__, self._impl)

    def _impl(self, *args: Any, **params: Any) -> Any:
        out = self.forward(*args, **params)
        if not isinstance(out, Tensor):
            like = next((a for a in args if isinstance(a, Tensor)), None)
            out = tensor(out, backend=like.backend if like is not None else None)
        return out

    def __call__(self, *args: Any, **params: Any) -> Any:
        conv = [a if isinstance(a, Tensor) or is_scalar(a) else as_tensor(a, f"argument {i}")
                for i, a in enumerate(args)]
        return bind(self, conv, params)


def primitive(fn: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Make ``fn`` a primitive (decorator, with or without ``name=``); then attach derivative
    rules with ``.defvjp(...)`` and optionally ``.defjvp(...)``."""
    if fn is None:
        return lambda f: CustomPrimitive(f, name)
    return CustomPrimitive(fn, name)
