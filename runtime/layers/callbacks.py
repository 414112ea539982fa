"""Callbacks: code that runs at points of ``fit``/``evaluate``/``predict``.

Hooks (all optional; ``logs`` is a dict of plain floats): ``on_train_begin/end(logs)``,
``on_epoch_begin/end(epoch, logs)``, ``on_train_batch_begin/end(batch, logs)`` (the Keras
aliases ``on_batch_begin/end`` are called for them), ``on_test_*`` and ``on_predict_*``.

Besides :class:`Callback` subclasses, ``fit(callbacks=...)`` accepts

* a plain function ``fn(epoch, logs)``: called at the end of every epoch;
* a dict of functions keyed by hook name, in ``snake_case`` or TensorFlow.js ``camelCase``
  (``{"on_epoch_end": f}`` or ``{"onEpochEnd": f}``);
* any object with such attributes (an R list or JavaScript object passed through the bridge).

``model.stop_training = True`` in a hook ends training after the current batch.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ..progress_events import FitProgress, Sink, emit, has_sinks
from .progress import ProgressBar

__all__ = [
    "HOOKS",
    "Callback",
    "CallbackList",
    "EarlyStopping",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "ProgbarLogger",
    "SinkCallback",
    "TerminateOnNaN",
    "fit_event",
    "to_callback",
]

HOOKS = (
    "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
    "on_train_batch_begin", "on_train_batch_end", "on_batch_begin", "on_batch_end",
    "on_test_begin", "on_test_end", "on_test_batch_begin", "on_test_batch_end",
    "on_predict_begin", "on_predict_end", "on_predict_batch_begin", "on_predict_batch_end",
)
_BATCH_HOOKS = ("on_train_batch_begin", "on_train_batch_end", "on_batch_begin", "on_batch_end")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


class Callback:
    """Base class: override the hooks you need. ``self.model`` and ``self.params`` (epochs,
    steps, verbose…) are set before training starts."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict[str, Any] = {}

    def set_model(self, model: Any) -> None:
        self.model = model

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None: ...
    def on_train_end(self, logs: dict[str, Any] | None = None) -> None: ...
    def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None: ...
    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None: ...
    def on_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None: ...
    def on_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None: ...

    def on_train_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self.on_batch_end(batch, logs)

    def on_test_begin(self, logs: dict[str, Any] | None = None) -> None: ...
    def on_test_end(self, logs: dict[str, Any] | None = None) -> None: ...
    def on_test_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None: ...
    def on_test_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None: ...
    def on_predict_begin(self, logs: dict[str, Any] | None = None) -> None: ...
    def on_predict_end(self, logs: dict[str, Any] | None = None) -> None: ...
    def on_predict_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None: ...
    def on_predict_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None: ...

    def wants_batch_hooks(self) -> bool:
        """Whether any batch-level hook is overridden (``fit`` skips building per-batch logs
        when no callback wants them)."""
        cls = type(self)
        return any(getattr(cls, h) is not getattr(Callback, h) for h in _BATCH_HOOKS)


class LambdaCallback(Callback):
    """A callback made of plain functions, e.g. ``LambdaCallback(on_epoch_end=lambda e, logs:
    print(e, logs))``. Functions for epoch/batch hooks take ``(index, logs)``, the others
    ``(logs)``."""

    def __init__(self, **hooks: Callable[..., Any] | None) -> None:
        super().__init__()
        self.hooks: dict[str, Callable[..., Any]] = {}
        for name, fn in hooks.items():
            key = _hook_name(name)
            if key is None:
                raise TypeError(f"LambdaCallback: unknown hook {name!r}; known: "
                                f"{', '.join(HOOKS)}")
            if fn is not None:
                if not callable(fn):
                    raise TypeError(f"LambdaCallback: {name} must be callable")
                self.hooks[key] = fn
        for name, fn in self.hooks.items():
            setattr(self, name, _bind(name, fn))

    def wants_batch_hooks(self) -> bool:
        return any(h in self.hooks for h in _BATCH_HOOKS)


def _bind(name: str, fn: Callable[..., Any]) -> Callable[..., None]:
    takes_index = "epoch" in name or "batch" in name

    if takes_index:
        def hook(index: int, logs: dict[str, Any] | None = None) -> None:
            fn(index, logs if logs is not None else {})
    else:
        def hook(logs: dict[str, Any] | None = None) -> None:  # type: ignore[misc]
            fn(logs if logs is not None else {})
    return hook


_HOOK_NAMES = {h: h for h in HOOKS}
_HOOK_NAMES.update({_camel(h): h for h in HOOKS})
_HOOK_NAMES.update({"onBatchBegin": "on_batch_begin", "onBatchEnd": "on_batch_end"})


def _hook_name(name: str) -> str | None:
    return _HOOK_NAMES.get(name)


def to_callback(obj: Any) -> Callback:
    """A :class:`Callback` from a callback, a function (end of epoch), a dict of functions or an
    object with hook attributes (snake_case or camelCase)."""
    if isinstance(obj, Callback):
        return obj
    if isinstance(obj, dict):
        return LambdaCallback(**{k: v for k, v in obj.items()})
    hooks = {}
    for attr in (*HOOKS, *(_camel(h) for h in HOOKS)):
        fn = getattr(obj, attr, None) if not isinstance(obj, type) else None
        if fn is not None and callable(fn):
            hooks[_hook_name(attr)] = fn
    if hooks:
        return LambdaCallback(**hooks)
    if callable(obj):
        return LambdaCallback(on_epoch_end=obj)
    raise TypeError(f"callbacks: cannot use {obj!r} as a callback (give a Callback, a function "
                    f"fn(epoch, logs), or a dict of hook functions)")


class CallbackList:
    """Calls every callback's hook in order."""

    def __init__(self, callbacks: Iterable[Any] = (), model: Any = None,
                 params: dict[str, Any] | None = None) -> None:
        self.callbacks = [to_callback(c) for c in callbacks]
        for c in self.callbacks:
            if model is not None:
                c.set_model(model)
            if params is not None:
                c.set_params(params)
        self.params = dict(params or {})
        # fit's progress also goes to the registered sinks (runtime.progress_events), as events
        self._sinks = has_sinks()
        self._muted: set[int] = set()
        self._epoch: int | None = None
        self.batch_hooks = self._sinks or any(c.wants_batch_hooks() for c in self.callbacks)

    def _call(self, name: str, *args: Any) -> None:
        for c in self.callbacks:
            getattr(c, name)(*args)

    def _emit(self, stage: str, index: int | None, logs: dict[str, Any] | None) -> None:
        if self._sinks:
            emit(fit_event(stage, index, logs, self.params, self._epoch), self._muted)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs)
        self._emit("train_begin", None, logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs)
        self._emit("train_end", None, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        self._call("on_epoch_begin", epoch, logs)
        self._emit("epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs)
        self._emit("epoch_end", epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call("on_train_batch_begin", batch, logs)
        self._emit("batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call("on_train_batch_end", batch, logs)
        self._emit("batch_end", batch, logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call("on_test_batch_end", batch, logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call("on_predict_batch_end", batch, logs)


class History(Callback):
    """Records every epoch's logs: ``history.history["loss"]`` is the list of epoch losses."""

    def __init__(self) -> None:
        super().__init__()
        self.epoch: list[int] = []
        self.history: dict[str, list[float]] = {}

    def on_train_begin(self, logs=None):
        self.epoch = []
        self.history = {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)

    def __getitem__(self, key: str) -> list[float]:
        return self.history[key]

    def __repr__(self) -> str:
        return f"<History epochs={len(self.epoch)} keys={list(self.history)}>"


def fit_event(stage: str, index: int | None, logs: dict[str, Any] | None,
              params: dict[str, Any], epoch: int | None = None) -> FitProgress:
    """The event of a ``fit`` hook: ``index`` is the epoch of an epoch stage and the batch of a
    batch stage (``epoch``: the current one); ``params``: the callbacks' (epochs, steps)."""
    is_batch = stage.startswith("batch")
    return FitProgress(stage, epoch if is_batch else index, int(params.get("epochs", 0)),
                       index if is_batch else None, params.get("steps"), dict(logs or {}))


class SinkCallback(Callback):
    """A progress sink (a function of one ``FitProgress`` event) used as a callback of one
    ``fit``: each training hook becomes the event the registered sinks get."""

    def __init__(self, sink: Sink | None = None, batch_events: bool = True) -> None:
        super().__init__()
        self.sink = sink if sink is not None else self.on_progress
        self.batch_events = batch_events
        self._epoch: int | None = None

    def on_progress(self, event: FitProgress) -> None:
        """Override (or give ``sink``) to receive the events."""

    def wants_batch_hooks(self) -> bool:
        return self.batch_events

    def _send(self, stage: str, index: int | None, logs: dict[str, Any] | None) -> None:
        self.sink(fit_event(stage, index, logs, self.params, self._epoch))

    def on_train_begin(self, logs=None):
        self._send("train_begin", None, logs)

    def on_train_end(self, logs=None):
        self._send("train_end", None, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        self._send("epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._send("epoch_end", epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._send("batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._send("batch_end", batch, logs)


class ProgbarLogger(SinkCallback):
    """Prints training progress: a bar per epoch (verbose=1) or one line per epoch (2). A sink
    of ``FitProgress`` events (``fit(verbose=)`` adds it; R's ``fit`` gives it R's console)."""

    def __init__(self, verbose: int = 1, stream: Any = None) -> None:
        super().__init__(batch_events=verbose == 1)
        self.verbose = verbose
        self.stream = stream
        self.bar: ProgressBar | None = None

    def _out(self) -> Any:
        return self.stream if self.stream is not None else sys.stdout

    def on_progress(self, event: FitProgress) -> None:
        if event.stage == "epoch_begin":
            out = self._out()
            if self.verbose == 1:
                out.write(f"Epoch {event.epoch + 1}/{event.epochs}\n")
                out.flush()
            self.bar = ProgressBar(event.steps, stream=out)
        elif event.stage == "batch_end":
            if self.verbose == 1 and self.bar is not None:
                self.bar.update(event.batch + 1, dict(event.logs))
        elif event.stage == "epoch_end" and self.bar is not None:
            steps = event.steps or self.bar.seen
            if self.verbose == 1:
                self.bar.update(steps, dict(event.logs), finalize=True)
            else:
                line = self.bar.line(steps, dict(event.logs)).split("] - ", 1)[-1]
                out = self._out()
                out.write(f"Epoch {event.epoch + 1}/{event.epochs} - {line}\n")
                out.flush()


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved for ``patience`` epochs.

    ``mode``: ``"min"``, ``"max"`` or ``"auto"`` (max for accuracy-like names). An improvement
    must exceed ``min_delta``. With ``restore_best_weights`` the model ends with the weights of
    the best epoch. ``baseline``: training also stops if the value does not beat it within
    ``patience`` epochs. Nothing is monitored before ``start_from_epoch``.
    """

    def __init__(self, monitor: str = "val_loss", min_delta: float = 0.0, patience: int = 0,
                 verbose: int = 0, mode: str = "auto", baseline: float | None = None,
                 restore_best_weights: bool = False, start_from_epoch: int = 0) -> None:
        super().__init__()
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"mode: expected 'auto', 'min' or 'max', got {mode!r}")
        self.monitor = monitor
        self.patience = int(patience)
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(float(min_delta))
        self.restore_best_weights = bool(restore_best_weights)
        self.start_from_epoch = int(start_from_epoch)
        if mode == "auto":
            low = monitor.lower()
            mode = "max" if any(k in low for k in ("acc", "auc", "precision", "recall")) \
                else "min"
        self.mode = mode
        self.wait = 0
        self.stopped_epoch = 0
        self.best = math.inf if mode == "min" else -math.inf
        self.best_weights: list[Any] | None = None
        self.best_epoch = 0

    def _better(self, current: float, reference: float | None) -> bool:
        if reference is None:
            return True
        if self.mode == "min":
            return current + self.min_delta < reference
        return current - self.min_delta > reference

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = math.inf if self.mode == "min" else -math.inf
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(
                f"EarlyStopping: metric {self.monitor!r} is not available; available: "
                f"{', '.join(logs or {})}", RuntimeWarning, stacklevel=2)
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._better(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._better(current, self.baseline):
                self.wait = 0
                return
            # improving but still not past the baseline: patience keeps counting (Keras
            # returns here, so a baseline never stops a run that improves slowly)
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class TerminateOnNaN(Callback):
    """Stop training as soon as the loss is NaN or infinite."""

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            print(f"Batch {batch}: invalid loss, terminating training")
            self.model.stop_training = True


class LearningRateScheduler(Callback):
    """Set the optimizer's learning rate at the start of each epoch to
    ``schedule(epoch, current_lr)`` (or ``schedule(epoch)``)."""

    def __init__(self, schedule: Callable[..., float], verbose: int = 0) -> None:
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        opt = self.model.optimizer
        try:
            lr = self.schedule(epoch, opt.current_learning_rate())
        except TypeError:
            lr = self.schedule(epoch)
        opt.learning_rate = float(lr)
        if self.verbose > 0:
            print(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = self.model.optimizer.current_learning_rate()

