"""The interface every distribution family implements; the catalogue of families is
``ppl.distributions``.

A family is stateless: parameters arrive as tensors at evaluation time, so one family object
serves every node and every batch of parameter values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ops.shape import broadcast_shapes
from .bijectors import Constraint, real

__all__ = ["Family"]


class Family:
    """``log_prob(value, **params)`` (elementwise, broadcasting), ``support(**params)``,
    ``sample(generator, shape, **params)``, ``value_shape(**param_shapes)``; ``param_names``
    in positional order."""

    name = "family"
    param_names: tuple[str, ...] = ()
    # A fast path the model compiler takes: when the parameter named here is ``sigmoid(eta)`` of
    # the model and the value is data, the density comes from :meth:`logit_log_density` (on the
    # logit scale) instead of ``log_prob``. None: the family has no such path.
    logit_param: str | None = None

    def support(self, **params: Any) -> Constraint:
        return real

    def value_shape(self, **param_shapes: tuple[int, ...]) -> tuple[int, ...]:
        """Shape of one draw for parameters of these shapes (multivariate families add their
        event axes); raises when the shapes do not fit together."""
        return tuple(broadcast_shapes(*param_shapes.values()))

    def log_prob(self, value: Any, **params: Any) -> Any:
        raise NotImplementedError

    def sample(self, generator: Any, shape: tuple[int, ...], /, **params: Any) -> Any:
        # positional-only: greta families have parameters called "shape" (gamma, weibull)
        raise NotImplementedError

    def logit_log_density(self, data: Any, dtype: Any, backend: Any
                          ) -> Callable[[Any], Any] | None:
        """For ``logit_param``'s fast path: given the data (a constant tensor), a function of
        ``eta`` (the logit of that parameter; ``dtype`` on ``backend``) returning the data's
        summed log density, or None when these data cannot take the path. Called while the
        density is being staged: read the data's raw values, never the data as a traced value."""
        return None

    def check_data(self, params: dict[str, Any], value: Any) -> None:
        """Refuse (ValueError naming ``target``) data this family cannot produce, when
        ``distribution(value, ...)`` assigns it; ``params`` are the family's arguments (graph
        nodes or tensors). By default nothing is checked; the discrete families check."""

    def __repr__(self) -> str:
        return f"<family {self.name}>"
