"""Metrics: running averages of per-sample quantities over an epoch.

A metric is split the way a staged training step needs it:

* ``batch_stats(y_true, y_pred, sample_weight)`` is pure tensor code run *inside* the step; it
  returns ``(total, count)`` for one batch;
* ``update(total, count)`` / ``result()`` / ``reset_state()`` accumulate those numbers on the
  host across batches.

``update_state(y_true, y_pred)`` does both at once for use outside ``fit``. ``"accuracy"`` given to
``compile`` becomes binary, categorical or sparse categorical accuracy according to the loss (and
uses threshold 0 for a binary cross-entropy ``from_logits=True``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes as D
from .. import ops
from ..ops.creation import as_tensor, full
from ..tensor import Tensor
from . import losses as _losses
from .base import _snake
from .registry import Registry

__all__ = [
    "Accuracy",
    "BinaryAccuracy",
    "CategoricalAccuracy",
    "Mean",
    "MeanAbsoluteError",
    "MeanMetricWrapper",
    "MeanSquaredError",
    "Metric",
    "SparseCategoricalAccuracy",
    "get",
    "resolve",
]

_REG = Registry("metric")


class Metric:
    """Base class: a named running value. Subclasses implement ``batch_stats``."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or _snake(type(self).__name__)
        self.total = 0.0
        self.count = 0.0

    def batch_stats(self, y_true: Any, y_pred: Tensor,
                    sample_weight: Any = None) -> tuple[Tensor, Tensor]:
        raise NotImplementedError

    def update(self, total: float, count: float) -> None:
        self.total += float(total)
        self.count += float(count)

    def result(self) -> float:
        return self.total / self.count if self.count else 0.0

    def reset_state(self) -> None:
        self.total = 0.0
        self.count = 0.0

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_pred = as_tensor(y_pred, "y_pred")
        total, count = self.batch_stats(y_true, y_pred, sample_weight)
        self.update(float(total), float(count))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Metric:
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}={self.result():.6g}>"


def _weighted_stats(per: Tensor, sample_weight: Any) -> tuple[Tensor, Tensor]:
    if sample_weight is None:
        return ops.sum(per), _count(per)
    w = ops.broadcast_to(_losses.align_sample_weight(sample_weight, per), per.shape)
    return ops.sum(per * w), ops.sum(w)


def _count(per: Tensor) -> Tensor:
    return full((), float(per.size), per.dtype, per.backend)


class MeanMetricWrapper(Metric):
    """The weighted mean of a per-sample function ``fn(y_true, y_pred) -> (batch, ...)``."""

    def __init__(self, fn: Callable[..., Tensor], name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name or getattr(fn, "__name__", "metric"))
        self.fn = fn
        self._fn_kwargs = kwargs

    def batch_stats(self, y_true, y_pred, sample_weight=None):
        per = self.fn(y_true, y_pred, **self._fn_kwargs)
        if per.dtype.kind != "f":
            per = ops.cast(per, y_pred.dtype if y_pred.dtype.kind == "f" else D.float32)
        return _weighted_stats(per, sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


# -- per-sample functions ------------------------------------------------------------------------
def _labels_like(y_true: Any, y_pred: Tensor) -> Tensor:
    return as_tensor(y_true, "y_true", like=y_pred)


def binary_accuracy(y_true: Any, y_pred: Tensor, threshold: float = 0.5) -> Tensor:
    t = _labels_like(y_true, y_pred)
    hit = ops.equal(ops.cast(t > 0.5, D.int32), ops.cast(y_pred > threshold, D.int32))
    return ops.mean(ops.cast(hit, y_pred.dtype), axis=-1)


def categorical_accuracy(y_true: Any, y_pred: Tensor) -> Tensor:
    t = _labels_like(y_true, y_pred)
    hit = ops.equal(ops.argmax(t, axis=-1), ops.argmax(y_pred, axis=-1))
    return ops.cast(hit, y_pred.dtype)


def sparse_categorical_accuracy(y_true: Any, y_pred: Tensor) -> Tensor:
    labels = _losses._sparse_labels(y_true, y_pred)
    hit = ops.equal(ops.cast(labels, D.int64), ops.argmax(y_pred, axis=-1))
    return ops.cast(hit, y_pred.dtype)


def accuracy(y_true: Any, y_pred: Tensor) -> Tensor:
    t = _labels_like(y_true, y_pred)
    if t.dtype is not y_pred.dtype:
        t = ops.cast(t, y_pred.dtype)
    return ops.cast(ops.equal(t, y_pred), y_pred.dtype)


# -- classes -------------------------------------------------------------------------------------
@_REG.register("Accuracy")
class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels exactly."""

    def __init__(self, name: str = "accuracy") -> None:
        super().__init__(accuracy, name)


@_REG.register("BinaryAccuracy", "binary_accuracy")
class BinaryAccuracy(MeanMetricWrapper):
    """How often ``y_pred > threshold`` matches ``y_true > 0.5``."""

    def __init__(self, name: str = "binary_accuracy", threshold: float = 0.5) -> None:
        super().__init__(binary_accuracy, name, threshold=float(threshold))


@_REG.register("CategoricalAccuracy", "categorical_accuracy")
class CategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of ``y_pred`` is the arg-max of the one-hot ``y_true``."""

    def __init__(self, name: str = "categorical_accuracy") -> None:
        super().__init__(categorical_accuracy, name)


@_REG.register("SparseCategoricalAccuracy", "sparse_categorical_accuracy")
class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of ``y_pred`` is the integer label ``y_true``."""

    def __init__(self, name: str = "sparse_categorical_accuracy") -> None:
        super().__init__(sparse_categorical_accuracy, name)


@_REG.register("MeanSquaredError", "mse")
class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_squared_error") -> None:
        super().__init__(_losses.mean_squared_error, name)


@_REG.register("MeanAbsoluteError", "mae")
class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_absolute_error") -> None:
        super().__init__(_losses.mean_absolute_error, name)


class Mean(Metric):
    """A plain running mean of values given to ``update`` (how ``fit`` tracks the loss)."""

    def batch_stats(self, y_true, y_pred, sample_weight=None):
        return _weighted_stats(y_pred, sample_weight)


_ACCURACY = {"binary": BinaryAccuracy, "categorical": CategoricalAccuracy,
             "sparse": SparseCategoricalAccuracy}


def resolve(identifier: Any, loss: Any = None) -> Metric:
    """``get`` with ``"accuracy"``/``"acc"`` specialised to ``loss`` (as ``compile`` does)."""
    if isinstance(identifier, str) and identifier.lower() in ("accuracy", "acc"):
        kind = getattr(loss, "accuracy_kind", None)
        cls = _ACCURACY.get(kind) if kind else None
        if cls is None:
            return Accuracy(name=identifier)
        if cls is BinaryAccuracy:
            threshold = 0.0 if getattr(loss, "from_logits", False) else 0.5
            return BinaryAccuracy(name=identifier, threshold=threshold)
        return cls(name=identifier)
    return get(identifier)


def get(identifier: Any) -> Metric:
    """A metric from a name (any spelling; loss names give the mean of that loss), a config dict,
    an instance or a per-sample function."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        if identifier in _REG:
            return _REG.lookup(identifier)(name=identifier)
        if identifier.lower() in ("accuracy", "acc"):
            return Accuracy(name=identifier)
        try:
            loss = _losses.get(identifier)  # e.g. "binary_crossentropy" as a metric
        except ValueError:
            known = ", ".join(sorted({"accuracy", *_REG.names(), *_losses._FN_REG.names()}))
            raise ValueError(f"unknown metric {identifier!r}; known: {known}") from None
        return MeanMetricWrapper(loss.call, name=identifier)
    if isinstance(identifier, dict):
        return _REG.from_config(identifier)
    if callable(identifier):
        return MeanMetricWrapper(identifier)
    raise TypeError(f"metric: cannot interpret {identifier!r}")


def serialize(metric: Metric) -> Any:
    if type(metric) in (MeanMetricWrapper, Mean):
        return metric.name
    return {"class_name": type(metric).__name__, "config": metric.get_config()}
