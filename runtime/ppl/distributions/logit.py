"""Log densities computed from a logit when a probability is ``sigmoid(eta)``.

greta evaluates ``bernoulli(ilogit(eta))`` on the logit scale (its "representations"); so does
the model compiler, through the fast path a family declares (``Family.logit_param``):
``y log s(eta) + (1 - y) log(1 - s(eta))`` is ``-softplus((1 - 2y) eta)`` for y in {0, 1},
which never forms the probability (no rounding to 0 or 1, no log(0)) and costs one softplus
forward and one exponential backward per element instead of a sigmoid, two guarded logarithms
and their derivatives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import ops
from ...autodiff.batching import batch_rule
from ...autodiff.core import Primitive, bind
from ...host_namespace import to_host, to_tensor, xp
from ...tensor import Tensor

__all__ = ["bernoulli_logit_log_density", "softplus_stable"]


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


def bernoulli_logit_log_density(data: Tensor, dtype: Any, backend: Any
                                ) -> Callable[[Any], Any] | None:
    """The summed Bernoulli log probability of ``data`` as a function of ``eta`` when
    prob = sigmoid(eta); None unless every value is 0 or 1 (the general density gives the
    others probability zero)."""
    # the data are constants: reading them does not tie a staged program to values
    y = to_host(data, xp.float64)
    if not xp.all((y == 0.0) | (y == 1.0)):
        return None
    sign = to_tensor(1.0 - 2.0 * y, dtype=dtype, backend=backend)

    def log_density(eta: Any) -> Any:
        # the sum is negated, not every element (nor its cotangent)
        return -ops.sum(softplus_stable(sign * eta))

    return log_density
