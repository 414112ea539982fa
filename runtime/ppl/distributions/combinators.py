"""greta's ``mixture()`` and ``joint()``: families built from other distributions.

A component is what a distribution constructor returned (``normal(0, 1)``): its family and
parameters are taken over, prefixed ``c<i>_`` so that one parameter table holds them all, and
the component's own variable is dropped from the graph (it is never a parameter of the model).

* ``Mixture``: log p(x) = logsumexp_i (log w_i + log p_i(x)), the weights ``[K, ...]``
  normalised along their first axis; the components share one shape and one support.
* ``Joint``: scalar components side by side on a new last axis, independent: log p(x) =
  sum_i log p_i(x[..., i]); components with different interval supports make a prior with
  each column's own bounds.
"""

from __future__ import annotations

import math
from typing import Any

from ... import ops
from ...graph.bijectors import Constraint, bounded, observed_only
from ...graph.families import Family
from . import sampling as smp

__all__ = ["Joint", "Mixture", "component_key"]


def component_key(i: int, param: str) -> str:
    """The key of component ``i``'s parameter ``param`` in the combined parameter table."""
    return f"c{i}_{param}"


class _Combined(Family):
    """Families with components ``(family, param_names)``: each component's parameters are
    found under :func:`component_key` in the combined table."""

    def __init__(self, components: list[Any]) -> None:
        self.components = list(components)
        self.param_names = tuple(component_key(i, p) for i, f in enumerate(self.components)
                                 for p in f.param_names)
        self.discrete = bool(self.components[0].discrete)
        # each component parameter's event rank, for simulate() (graph/simulate.py)
        self.param_event_ndim = {
            component_key(i, p): dict(getattr(f, "param_event_ndim", {})).get(
                p, getattr(f, "event_ndim", 0))
            for i, f in enumerate(self.components) for p in f.param_names}

    def _sub(self, i: int, params: dict[str, Any]) -> dict[str, Any]:
        return {p: params[component_key(i, p)] for p in self.components[i].param_names}

    def _support(self, params: dict[str, Any], what: str) -> Constraint:
        supports = [f.support(**self._sub(i, params)) for i, f in enumerate(self.components)]
        if all(s == supports[0] for s in supports[1:]):
            return supports[0]
        return observed_only(f"as a prior, the components of {what} must have the same "
                             f"support, got {', '.join(str(s) for s in supports)}")

    def check_data(self, params: dict[str, Any], value: Any) -> None:
        return None  # data a component cannot produce has density zero (reported at build)

    def __repr__(self) -> str:
        return f"<family {self.name} of {', '.join(f.name for f in self.components)}>"


class Mixture(_Combined):
    """A mixture of same-shaped components with ``weights`` ``[K, *batch]`` (normalised along
    the first axis; its other axes 1 or the batch's): the constructor gives the weights that
    shape, so simulated weights line up with the value's batch axes."""

    name = "mixture"
    param_checks = (("weights", "positive"),)

    def __init__(self, components: list[Any]) -> None:
        super().__init__(components)
        self.event_ndim = int(getattr(self.components[0], "event_ndim", 0))
        self.param_names = (*self.param_names, "weights")
        self.param_event_ndim["weights"] = 1  # (nsim, K, ...) when simulated: no padding

    def support(self, **params: Any) -> Constraint:
        return self._support(params, "mixture()")

    def value_shape(self, **shapes: tuple[int, ...]) -> tuple[int, ...]:
        outs = [tuple(f.value_shape(**self._sub(i, shapes))) for i, f in
                enumerate(self.components)]
        shape = tuple(ops.broadcast_shapes(*outs))
        weights = tuple(shapes["weights"])[1:]
        batch = shape[:len(shape) - self.event_ndim]
        return (*ops.broadcast_shapes(batch, weights), *shape[len(batch):])

    def _log_weights(self, weights: Any, batch_ndim: int, simulated: bool = False) -> Any:
        """log of the normalised weights as [K, *batch] (broadcastable), K first."""
        if simulated:  # (nsim, K, ...) -> (K, nsim, ...)
            perm = [1, 0, *range(2, weights.ndim)]
            weights = ops.transpose(weights, perm)
        log_w = ops.log(weights) - ops.log(ops.sum(weights, axis=0, keepdims=True))
        extra = batch_ndim - (log_w.ndim - 1)
        if extra > 0:
            log_w = ops.reshape(log_w, (log_w.shape[0], *([1] * extra), *log_w.shape[1:]))
        return log_w

    def log_prob(self, value: Any, **params: Any) -> Any:
        lps = [f.log_prob(value, **self._sub(i, params)) for i, f in enumerate(self.components)]
        shape = ops.broadcast_shapes(*(tuple(lp.shape) for lp in lps))
        stacked = ops.stack([ops.broadcast_to(lp, shape) for lp in lps], axis=0)
        total = stacked + self._log_weights(params["weights"], len(shape))
        top = ops.max(total, axis=0)
        top = ops.where(ops.isfinite(top), top, 0.0)  # every term -inf: the sum is log 0
        return top + ops.log(ops.sum(ops.exp(total - top), axis=0))

    def sample(self, generator: Any, shape: tuple[int, ...], /, **params: Any) -> Any:
        batch = tuple(shape[:len(shape) - self.event_ndim])
        draws = [f.sample(generator, shape, **self._sub(i, params))
                 for i, f in enumerate(self.components)]
        weights = params["weights"]
        simulated = weights.ndim == len(batch) + 1  # batch counts nsim: (nsim, K, ...)
        w = ops.exp(self._log_weights(weights, len(batch), simulated))
        k = w.shape[0]
        (w,) = smp.params_like((k, *batch), w)
        # the component of each draw by inversion of the cumulative weights
        cdf = ops.cumsum(w, axis=0)
        u = smp.open_uniform(generator, batch, w)
        which = ops.sum(ops.cast(ops.expand_dims(u, 0) > cdf[:-1], "int32"), axis=0)
        for _ in range(self.event_ndim):
            which = ops.expand_dims(which, -1)
        out = draws[0]
        for i in range(1, k):
            out = ops.where(which == i, draws[i], out)
        return out

    def mean(self, **params: Any) -> Any:
        w = ops.exp(self._log_weights(params["weights"], 0))
        means = [f.mean(**self._sub(i, params)) for i, f in enumerate(self.components)]
        return sum((w[i] * means[i] for i in range(len(means))), 0.0 * means[0])


class Joint(_Combined):
    """Independent scalar components side by side on the last axis."""

    name = "joint"
    event_ndim = 1

    def __init__(self, components: list[Any], shape: tuple[int, ...] | None = None) -> None:
        super().__init__(components)
        self.shape = shape  # the value's shape (*batch, n), for elementwise bounds
        for f in self.components:
            if getattr(f, "event_ndim", 0):
                raise ValueError(f"joint: the components must be univariate distributions, "
                                 f"got {f.name}")

    def support(self, **params: Any) -> Constraint:
        # components with different interval supports (greta's joint(normal(), beta())): each
        # column its own bounds
        supports = [f.support(**self._sub(i, params)) for i, f in enumerate(self.components)]
        scalar = ("real", "greater_than", "less_than", "interval")
        if (self.shape is not None and any(c != supports[0] for c in supports[1:])
                and all(c.kind in scalar for c in supports)):
            rows = math.prod(self.shape[:-1])
            return bounded([c.lower for _ in range(rows) for c in supports],
                           [c.upper for _ in range(rows) for c in supports], self.shape)
        return self._support(params, "joint()")

    def value_shape(self, **shapes: tuple[int, ...]) -> tuple[int, ...]:
        outs = [tuple(f.value_shape(**self._sub(i, shapes))) for i, f in
                enumerate(self.components)]
        return (*ops.broadcast_shapes(*outs), len(self.components))

    def log_prob(self, value: Any, **params: Any) -> Any:
        total = 0.0
        for i, f in enumerate(self.components):
            total = total + f.log_prob(value[..., i], **self._sub(i, params))
        return total

    def sample(self, generator: Any, shape: tuple[int, ...], /, **params: Any) -> Any:
        parts = [f.sample(generator, tuple(shape[:-1]), **self._sub(i, params))
                 for i, f in enumerate(self.components)]
        return ops.stack(parts, axis=-1)

    def mean(self, **params: Any) -> Any:
        return ops.stack([f.mean(**self._sub(i, params))
                          for i, f in enumerate(self.components)], axis=-1)

