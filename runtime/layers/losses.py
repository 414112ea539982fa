"""Losses (Keras / TensorFlow.js names, defaults and reductions).

Each loss has a per-sample function ``fn(y_true, y_pred) -> tensor of shape (batch, ...)``
(reducing the last axis) and a :class:`Loss` object that applies sample weights and reduces to a
scalar: ``"sum_over_batch_size"`` (the default: the weighted sum divided by the number of
per-sample values), ``"sum"`` or ``"none"``.

Cross-entropies take probabilities by default and logits with ``from_logits=True``. The logits
forms are exact and stable for any magnitude (``softplus``/``log_softmax``); the probability forms
clip to ``[1e-7, 1 - 1e-7]`` like Keras, so a saturated output gives a large finite loss, never
``inf``/``nan``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes as D
from .. import ops
from ..ops.creation import as_tensor
from ..tensor import Tensor
from .base import _snake
from .primitives import sparse_softmax_cross_entropy
from .registry import Registry

__all__ = [
    "EPSILON",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "Huber",
    "Loss",
    "LossFunctionWrapper",
    "MeanAbsoluteError",
    "MeanSquaredError",
    "SparseCategoricalCrossentropy",
    "binary_crossentropy",
    "categorical_crossentropy",
    "get",
    "huber",
    "mean_absolute_error",
    "mean_squared_error",
    "serialize",
    "sparse_categorical_crossentropy",
]

EPSILON = 1e-7
_REG = Registry("loss")
_FN_REG = Registry("loss function")
REDUCTIONS = ("sum_over_batch_size", "sum", "none")


def _float_like(y_true: Any, y_pred: Tensor) -> Tensor:
    t = as_tensor(y_true, "y_true", like=y_pred)
    return t if t.dtype is y_pred.dtype else ops.cast(t, y_pred.dtype)


# -- per-sample functions ------------------------------------------------------------------------
def mean_squared_error(y_true: Any, y_pred: Tensor) -> Tensor:
    y_true = _float_like(y_true, y_pred)
    return ops.mean(ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true: Any, y_pred: Tensor) -> Tensor:
    y_true = _float_like(y_true, y_pred)
    return ops.mean(ops.abs(y_pred - y_true), axis=-1)


def huber(y_true: Any, y_pred: Tensor, delta: float = 1.0) -> Tensor:
    y_true = _float_like(y_true, y_pred)
    err = ops.abs(y_pred - y_true)
    quad = ops.minimum(err, delta)
    return ops.mean(0.5 * quad * quad + delta * (err - quad), axis=-1)


def binary_crossentropy(y_true: Any, y_pred: Tensor, from_logits: bool = False,
                        label_smoothing: float = 0.0) -> Tensor:
    y_true = _float_like(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        # -[y log s(x) + (1-y) log(1-s(x))] = softplus(x) - y x, exact for every x
        per = ops.softplus(y_pred) - y_true * y_pred
    else:
        p = ops.clip(y_pred, EPSILON, 1.0 - EPSILON)
        per = -(y_true * ops.log(p) + (1.0 - y_true) * ops.log(1.0 - p))
    return ops.mean(per, axis=-1)


def categorical_crossentropy(y_true: Any, y_pred: Tensor, from_logits: bool = False,
                             label_smoothing: float = 0.0, axis: int = -1) -> Tensor:
    y_true = _float_like(y_true, y_pred)
    if label_smoothing:
        k = y_pred.shape[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / k
    if from_logits:
        return -ops.sum(y_true * ops.log_softmax(y_pred, axis), axis=axis)
    p = y_pred / ops.sum(y_pred, axis=axis, keepdims=True)
    p = ops.clip(p, EPSILON, 1.0 - EPSILON)
    return -ops.sum(y_true * ops.log(p), axis=axis)


def _sparse_labels(y_true: Any, y_pred: Tensor) -> Tensor:
    t = as_tensor(y_true, "y_true", like=y_pred)
    if t.ndim == y_pred.ndim and t.shape[-1] == 1:
        t = ops.squeeze(t, -1)
    if t.dtype.kind != "i":
        t = ops.cast(t, D.int32)
    return t


def sparse_categorical_crossentropy(y_true: Any, y_pred: Tensor, from_logits: bool = False,
                                    axis: int = -1) -> Tensor:
    labels = _sparse_labels(y_true, y_pred)
    if from_logits and axis in (-1, y_pred.ndim - 1):
        fused = sparse_softmax_cross_entropy(labels, y_pred)
        if fused is not None:
            return fused
    onehot = ops.one_hot(labels, y_pred.shape[axis], y_pred.dtype)
    return categorical_crossentropy(onehot, y_pred, from_logits=from_logits, axis=axis)


for _names, _fn in (
    (("mean_squared_error", "mse"), mean_squared_error),
    (("mean_absolute_error", "mae"), mean_absolute_error),
    (("huber",), huber),
    (("binary_crossentropy", "bce"), binary_crossentropy),
    (("categorical_crossentropy", "cce"), categorical_crossentropy),
    (("sparse_categorical_crossentropy", "scce"), sparse_categorical_crossentropy),
):
    for _n in _names:
        _FN_REG.add(_n, _fn)


# -- Loss objects --------------------------------------------------------------------------------
class Loss:
    """A loss: ``loss(y_true, y_pred, sample_weight=None)`` -> scalar (or per-sample with
    ``reduction="none"``). Subclasses implement ``call`` (per-sample values)."""

    def __init__(self, reduction: str = "sum_over_batch_size", name: str | None = None) -> None:
        reduction = {"auto": "sum_over_batch_size", "mean": "sum_over_batch_size"}.get(
            reduction, reduction)
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction: expected one of {REDUCTIONS}, got {reduction!r}")
        self.reduction = reduction
        self.name = name or _default_name(type(self).__name__)

    #: what "accuracy" means next to this loss: "binary", "categorical", "sparse" or None
    accuracy_kind: str | None = None
    from_logits: bool = False

    def call(self, y_true: Any, y_pred: Tensor) -> Tensor:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Tensor, sample_weight: Any = None) -> Tensor:
        per = self.call(y_true, y_pred)
        return reduce_weighted(per, sample_weight, self.reduction)

    def get_config(self) -> dict[str, Any]:
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Loss:
        return cls(**config)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.get_config()})"


def _default_name(cls_name: str) -> str:
    return _snake(cls_name)


def align_sample_weight(sample_weight: Any, per: Tensor) -> Tensor:
    """``sample_weight`` as a tensor of ``per``'s dtype whose axes line up with ``per``'s from
    the batch axis on (trailing 1s dropped, missing axes added), ready to broadcast."""
    w = as_tensor(sample_weight, "sample_weight", like=per)
    if w.dtype is not per.dtype:
        w = ops.cast(w, per.dtype)
    while w.ndim > per.ndim and w.shape[-1] == 1:
        w = ops.squeeze(w, -1)
    while w.ndim < per.ndim:
        w = ops.expand_dims(w, -1)
    return w


def reduce_weighted(per: Tensor, sample_weight: Any, reduction: str) -> Tensor:
    """Apply ``sample_weight`` (broadcast from the batch axis) and reduce."""
    if sample_weight is not None:
        per = per * align_sample_weight(sample_weight, per)
    if reduction == "none":
        return per
    total = ops.sum(per)
    if reduction == "sum":
        return total
    return total * (1.0 / max(per.size, 1))


class LossFunctionWrapper(Loss):
    """A :class:`Loss` around a per-sample function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn: Callable[..., Tensor], reduction: str = "sum_over_batch_size",
                 name: str | None = None, **kwargs: Any) -> None:
        super().__init__(reduction, name or getattr(fn, "__name__", "loss"))
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        out = self.fn(y_true, y_pred, **self._fn_kwargs)
        if not isinstance(out, Tensor):
            out = as_tensor(out, "loss", like=y_pred)
        return out

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


@_REG.register("MeanSquaredError")
class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error"):
        super().__init__(mean_squared_error, reduction, name)


@_REG.register("MeanAbsoluteError")
class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error"):
        super().__init__(mean_absolute_error, reduction, name)


@_REG.register("Huber")
class Huber(LossFunctionWrapper):
    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss"):
        super().__init__(huber, reduction, name, delta=float(delta))


@_REG.register("BinaryCrossentropy")
class BinaryCrossentropy(LossFunctionWrapper):
    accuracy_kind = "binary"

    def __init__(self, from_logits=False, label_smoothing=0.0,
                 reduction="sum_over_batch_size", name="binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction, name, from_logits=bool(from_logits),
                         label_smoothing=float(label_smoothing))
        self.from_logits = bool(from_logits)


@_REG.register("CategoricalCrossentropy")
class CategoricalCrossentropy(LossFunctionWrapper):
    accuracy_kind = "categorical"

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction, name, from_logits=bool(from_logits),
                         label_smoothing=float(label_smoothing), axis=int(axis))
        self.from_logits = bool(from_logits)


@_REG.register("SparseCategoricalCrossentropy")
class SparseCategoricalCrossentropy(LossFunctionWrapper):
    accuracy_kind = "sparse"
    sparse_labels = True

    def __init__(self, from_logits=False, axis=-1, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction, name,
                         from_logits=bool(from_logits), axis=int(axis))
        self.from_logits = bool(from_logits)

    def __call__(self, y_true, y_pred, sample_weight=None):
        if (sample_weight is None and self.from_logits and self.reduction ==
                "sum_over_batch_size" and self._fn_kwargs["axis"] in (-1, y_pred.ndim - 1)):
            fused = sparse_softmax_cross_entropy(_sparse_labels(y_true, y_pred), y_pred, "mean")
            if fused is not None:  # the mean in the same kernel: one op forward, one backward
                return fused
        return super().__call__(y_true, y_pred, sample_weight)


_BY_FUNCTION = {
    mean_squared_error: MeanSquaredError,
    mean_absolute_error: MeanAbsoluteError,
    huber: Huber,
    binary_crossentropy: BinaryCrossentropy,
    categorical_crossentropy: CategoricalCrossentropy,
    sparse_categorical_crossentropy: SparseCategoricalCrossentropy,
}


def get(identifier: Any) -> Loss:
    """A :class:`Loss` from a name (``"mse"``, ``"categorical_crossentropy"``,
    ``"CategoricalCrossentropy"``, ``"categoricalCrossentropy"``), a config dict, an instance or
    a callable ``(y_true, y_pred) -> per-sample losses``."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier in _REG:
            return _REG.lookup(identifier)()
        fn = _FN_REG.lookup(identifier)
        obj = _BY_FUNCTION[fn]()
        return obj
    if isinstance(identifier, dict):
        return _REG.from_config(identifier)
    if callable(identifier):
        cls = _BY_FUNCTION.get(identifier)
        return cls() if cls is not None else LossFunctionWrapper(identifier)
    raise TypeError(f"loss: cannot interpret {identifier!r}")


def serialize(loss: Loss) -> dict[str, Any]:
    if type(loss) is LossFunctionWrapper:
        raise TypeError(f"loss {loss.name!r} wraps a plain function and cannot be saved")
    return {"class_name": type(loss).__name__, "config": loss.get_config()}
