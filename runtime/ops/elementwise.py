"""Elementwise functions of one tensor, each a primitive with its derivative.

The table ``UNARY`` maps op name -> derivative ``d(x, ans)``; the VJP is ``g * d`` and the JVP
``t * d``. Derivatives are written with tensorbridge ops, so they are differentiable again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..autodiff.core import Primitive, bind
from ..dtypes import DType, as_dtype
from ..tensor import Tensor
from .arguments import floating
from .creation import as_tensor
from .kernel_impls import unary_primitive

__all__ = [
    "UNARY",
    "abs",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "cast",
    "ceil",
    "cos",
    "cospi",
    "digamma",
    "erf",
    "erfc",
    "exp",
    "expm1",
    "floor",
    "isfinite",
    "isnan",
    "lgamma",
    "log",
    "log1p",
    "logical_not",
    "negative",
    "polygamma",
    "reciprocal",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "sinpi",
    "softplus",
    "sqrt",
    "square",
    "stop_gradient",
    "tan",
    "tanh",
    "tanpi",
    "trigamma",
]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _primitive(name: str, deriv: Callable[[Any, Any], Any] | None) -> Primitive:
    prim = unary_primitive(name)
    if deriv is not None:
        prim.defvjp(lambda g, ans, x: g * deriv(x, ans))
        prim.defjvp(lambda t, ans, x: t * deriv(x, ans))
    return prim


def _zero(g: Any, ans: Any, x: Any) -> None:
    return None  # piecewise constant: the derivative is zero wherever it exists


# name -> derivative d(x, ans); None = zero derivative (piecewise constant)
UNARY: dict[str, Callable[[Any, Any], Any] | None] = {
    "neg": lambda x, ans: -1.0,
    "abs": lambda x, ans: sign(x),
    "exp": lambda x, ans: ans,
    "log": lambda x, ans: reciprocal(x),
    "log1p": lambda x, ans: reciprocal(x + 1.0),
    "expm1": lambda x, ans: ans + 1.0,
    "sqrt": lambda x, ans: 0.5 / ans,
    "rsqrt": lambda x, ans: -0.5 * ans / x,
    "square": lambda x, ans: 2.0 * x,
    "reciprocal": lambda x, ans: -square(ans),
    "tanh": lambda x, ans: 1.0 - square(ans),
    "sigmoid": lambda x, ans: ans * (1.0 - ans),
    "softplus": lambda x, ans: sigmoid(x),
    "sin": lambda x, ans: cos(x),
    "cos": lambda x, ans: -sin(x),
    "tan": lambda x, ans: 1.0 + square(ans),
    "arcsin": lambda x, ans: rsqrt((1.0 - x) * (1.0 + x)),
    "arccos": lambda x, ans: -rsqrt((1.0 - x) * (1.0 + x)),
    "arctan": lambda x, ans: reciprocal(1.0 + square(x)),
    "arcsinh": lambda x, ans: rsqrt(1.0 + square(x)),
    "arccosh": lambda x, ans: rsqrt((x - 1.0) * (x + 1.0)),
    "arctanh": lambda x, ans: reciprocal((1.0 - x) * (1.0 + x)),
    "erf": lambda x, ans: _TWO_OVER_SQRT_PI * exp(-square(x)),
    "erfc": lambda x, ans: -_TWO_OVER_SQRT_PI * exp(-square(x)),
    "lgamma": lambda x, ans: digamma(x),
    "digamma": lambda x, ans: polygamma(1, x),
    "sign": None,
    "floor": None,
    "ceil": None,
    "round": None,
}

_PRIMS: dict[str, Primitive] = {}
for _name, _d in UNARY.items():
    _p = _primitive(_name, _d)
    if _d is None:
        _p.defvjp(_zero).defjvp(lambda t, ans, x: None)
    _PRIMS[_name] = _p

# outputs are bool: no derivative rules needed
for _name in ("logical_not", "isnan", "isfinite"):
    _PRIMS[_name] = unary_primitive(_name)


def _float_unary(name: str) -> Callable[[Any], Tensor]:
    prim = _PRIMS[name]

    def op(x: Any) -> Tensor:
        if not isinstance(x, Tensor):
            x = as_tensor(x, "x")
        if x.dtype.kind != "f":
            x = cast(x, floating(x.dtype))
        return bind(prim, (x,), {})

    op.__name__ = name
    op.__doc__ = f"Elementwise {name} (integer inputs compute in float32)."
    return op


def _same_dtype_unary(name: str) -> Callable[[Any], Tensor]:
    prim = _PRIMS[name]

    def op(x: Any) -> Tensor:
        if not isinstance(x, Tensor):
            x = as_tensor(x, "x")
        return bind(prim, (x,), {})

    op.__name__ = name
    op.__doc__ = f"Elementwise {name}."
    return op


exp = _float_unary("exp")
log = _float_unary("log")
log1p = _float_unary("log1p")
expm1 = _float_unary("expm1")
sqrt = _float_unary("sqrt")
rsqrt = _float_unary("rsqrt")
reciprocal = _float_unary("reciprocal")
tanh = _float_unary("tanh")
sigmoid = _float_unary("sigmoid")
softplus = _float_unary("softplus")
sin = _float_unary("sin")
cos = _float_unary("cos")
tan = _float_unary("tan")
erf = _float_unary("erf")
erfc = _float_unary("erfc")
lgamma = _float_unary("lgamma")
digamma = _float_unary("digamma")
arcsin = _float_unary("arcsin")
arccos = _float_unary("arccos")
arctan = _float_unary("arctan")
arcsinh = _float_unary("arcsinh")
arccosh = _float_unary("arccosh")
arctanh = _float_unary("arctanh")
negative = _same_dtype_unary("neg")
abs = _same_dtype_unary("abs")
sign = _same_dtype_unary("sign")
square = _same_dtype_unary("square")
floor = _same_dtype_unary("floor")
ceil = _same_dtype_unary("ceil")
round = _same_dtype_unary("round")
isnan = _same_dtype_unary("isnan")
isfinite = _same_dtype_unary("isfinite")
negative.__name__ = "negative"


def logical_not(x: Any) -> Tensor:
    x = as_tensor(x, "x")
    if x.dtype.kind != "b":
        x = cast(x, "bool")
    return bind(_PRIMS["logical_not"], (x,), {})


_polygamma = unary_primitive("polygamma")
_polygamma.defvjp(lambda g, ans, x, *, n: g * polygamma(n + 1, x))
_polygamma.defjvp(lambda t, ans, x, *, n: t * polygamma(n + 1, x))


def polygamma(n: int, x: Any) -> Tensor:
    """The n-th derivative of digamma (``n >= 0``; ``polygamma(0, x) == digamma(x)``)."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"polygamma: n must be a non-negative int, got {n!r}")
    if n == 0:
        return digamma(x)
    x = as_tensor(x, "x")
    if x.dtype.kind != "f":
        x = cast(x, floating(x.dtype))
    return bind(_polygamma, (x,), {"n": n})


def trigamma(x: Any) -> Tensor:
    """The derivative of digamma, ``polygamma(1, x)``."""
    return polygamma(1, x)


# -- sinpi, cospi, tanpi --------------------------------------------------------------------------
# Exact at integers and half-integers: x = n / 2 + f with n = round(2x) and |f| <= 1/4 (2x - n and
# the halving are exact in floating point), then sin(pi x) is sin(pi f), cos(pi f), -sin(pi f),
# -cos(pi f) for n mod 4 = 0, 1, 2, 3, and f = 0 exactly at every multiple of 1/2. n is a constant
# of differentiation, so derivatives flow through f alone. Composites of existing ops: every
# backend and both compiled dialects run them as they are.
def _pi_parts(x: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(sin(pi f), cos(pi f), odd, sgn): ``odd`` is n mod 2, ``sgn`` is +1 for n mod 4 in {0, 1}."""
    if not isinstance(x, Tensor):
        x = as_tensor(x, "x")
    if x.dtype.kind != "f":
        x = cast(x, floating(x.dtype))
    n = stop_gradient(round(x * 2.0))
    f = x - n * 0.5
    q = n - floor(n * 0.25) * 4.0  # n mod 4 in {0, 1, 2, 3}
    odd = q - floor(q * 0.5) * 2.0
    sgn = 1.0 - floor(q * 0.5) * 2.0
    pf = f * math.pi
    return sin(pf), cos(pf), odd, sgn


def sinpi(x: Any) -> Tensor:
    """``sin(pi * x)``, exactly 0 at integers and +-1 at half-integers."""
    s, c, odd, sgn = _pi_parts(x)
    return sgn * ((1.0 - odd) * s + odd * c)


def cospi(x: Any) -> Tensor:
    """``cos(pi * x)``, exactly 0 at half-integers and +-1 at integers."""
    s, c, odd, sgn = _pi_parts(x)
    return sgn * ((1.0 - odd) * c - odd * s)


def tanpi(x: Any) -> Tensor:
    """``tan(pi * x)``: exactly 0 at integers, NaN at half-integers (the pole, as R's tanpi)."""
    s, c, odd, _ = _pi_parts(x)
    t = ((1.0 - odd) * s + odd * c) / ((1.0 - odd) * c - odd * s)
    return t + (t - t)  # t - t is 0 where t is finite and NaN at the pole's +-inf


# -- cast and stop_gradient ---------------------------------------------------------------------
def _cast_vjp(g: Any, ans: Any, x: Any, *, dtype: DType) -> Any:
    return cast(g, x.dtype) if x.dtype.kind == "f" else None


_cast = unary_primitive("cast")
_cast.defvjp(_cast_vjp)
_cast.defjvp(lambda t, ans, x, *, dtype: cast(t, dtype))


def cast(x: Any, dtype: Any) -> Tensor:
    """``x`` converted to ``dtype`` (differentiable between float dtypes)."""
    x = as_tensor(x, "x")
    dt = as_dtype(dtype)
    if dt is x.dtype:
        return x
    return bind(_cast, (x,), {"dtype": dt})


def _identity_impl(x: Tensor) -> Tensor:
    return x


_stop_gradient = Primitive("stop_gradient", _identity_impl)
_stop_gradient.defvjp(lambda g, ans, x: None).defjvp(lambda t, ans, x: None)


def stop_gradient(x: Any) -> Tensor:
    """``x`` itself, treated as a constant by differentiation."""
    return bind(_stop_gradient, (as_tensor(x, "x"),), {})
