"""Log densities computed from a logit when a probability is ``sigmoid(eta)``.

greta evaluates ``bernoulli(ilogit(eta))`` on the logit scale (its "representations"); so does
:class:`~tensorbridge.runtime.graph.model_compiler.Model`:
``y log s(eta) + (1 - y) log(1 - s(eta))`` is ``-softplus((1 - 2y) eta)`` for y in {0, 1},
which never forms the probability (no rounding to 0 or 1, no log(0)) and costs one softplus
forward and one exponential backward per element instead of a sigmoid, two guarded logarithms
and their derivatives.
"""

from __future__ import annotations

from typing import Any

from .. import ops
from ..autodiff.batching import batch_rule
from ..autodiff.core import Primitive, bind

__all__ = ["bernoulli_logit_log_prob", "softplus_stable"]


def _softplus_impl(x: Any) -> Any:
    # max(x, 0) + log1p(exp(-|x|)): accurate for large |x| of either sign, and a few times
    # cheaper than logaddexp(0, x) on NumPy
    return ops.maximum(x, 0.0) + ops.log1p(ops.exp(-ops.abs(x)))


# a primitive (not a composite) so that its derivative is one rule: d softplus(x) / dx =
# sigmoid(x) = exp(x - softplus(x)), reusing the forward result
_SOFTPLUS = Primitive("softplus_stable", _softplus_impl,
                      vjp=[lambda g, ans, x: g * ops.exp(x - ans)])


@batch_rule("softplus_stable")
def _elementwise(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
                 **params: Any) -> Any:
    return bind(prim, values, params)  # elementwise: the batch axis is just another axis


def softplus_stable(x: Any) -> Any:
    """log(1 + exp(x)), differentiable."""
    return bind(_SOFTPLUS, [x], {})


def bernoulli_logit_log_prob(sign: Any, eta: Any) -> Any:
    """Elementwise Bernoulli log probability of y given prob = sigmoid(eta); ``sign`` = 1 - 2y
    (the data, y in {0, 1})."""
    return -softplus_stable(sign * eta)
