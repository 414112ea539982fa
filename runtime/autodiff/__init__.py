"""Automatic differentiation: reverse and forward mode over primitives, composable."""

from .api import grad, hessian, hvp, jacfwd, jacobian, jvp, value_and_grad, vjp
from .batching import vmap
from .check import check_grads
from .core import Primitive, Tracer
from .custom import CustomPrimitive, primitive

__all__ = [
    "CustomPrimitive",
    "Primitive",
    "Tracer",
    "check_grads",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jvp",
    "primitive",
    "value_and_grad",
    "vjp",
    "vmap",
]
