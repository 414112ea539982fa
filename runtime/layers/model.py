"""Models: the functional ``Model(inputs, outputs)`` (``Sequential`` in ``sequential.py``).

    x = tb.layers.input(shape=(784,))
    h = tb.layers.Dense(128, activation="relu")(x)
    model = tb.layers.Model(x, tb.layers.Dense(10, activation="softmax")(h))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x_train, y_train, epochs=5, batch_size=64, validation_split=0.1)
    model.predict(x_test)

A model is itself a layer (it can be called inside another model). Training, evaluation and
prediction run compiled steps (``training.py``); data handling is in ``data.py``, display in
``summary.py``/``progress.py``, files in ``serialization.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from .. import dtypes as D
from .. import random as _random
from ..backends import get_backend
from ..interrupts import safe_point
from ..ops.creation import tensor
from ..ops.shape import concat
from ..pytree import tree_map
from ..tensor import Tensor
from . import data as _data
from . import losses as _losses
from . import metrics as _metrics
from . import optimizers as _optimizers
from .base import LAYERS as _LAYERS
from .base import Layer, register_layer
from .callbacks import CallbackList, History, ProgbarLogger
from .executor import GraphExecutor, topological_nodes
from .input_layer import InputLayer
from .progress import format_logs, resolve_verbose
from .serialization import (
    deserialize_layer,
    load_weights,
    model_topology,
    save_model,
    save_weights,
    serialize_layer,
)
from .summary import format_summary
from .symbolic import SymbolicTensor, format_shape
from .training import Trainer, compiled_per_backend
from .variables import substitute

__all__ = ["Model"]


def _as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else [x]


@register_layer
class Model(Layer):
    """A graph of layers from symbolic ``inputs`` to ``outputs`` (each one tensor or a list)."""

    _is_model = True
    _is_sequential = False  # summary: a Sequential lists its layers without the input layer

    def __init__(self, inputs: Any = None, outputs: Any = None, name: str | None = None,
                 trainable: bool = True, **kwargs: Any) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.stop_training = False
        self.optimizer: Any = None
        self.history: History | None = None
        self._compile_args: dict[str, Any] | None = None
        self._trainer: Trainer | None = None
        self._predictor: Any = None
        self._executor: GraphExecutor | None = None
        self.inputs: list[SymbolicTensor] = []
        self.outputs: list[SymbolicTensor] = []
        self._single_input = True
        self._single_output = True
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("Model: give both inputs and outputs")
            self._init_graph(inputs, outputs)

    # -- graph ----------------------------------------------------------------------------------
    def _init_graph(self, inputs: Any, outputs: Any) -> None:
        ins, outs = _as_list(inputs), _as_list(outputs)
        for t in ins + outs:
            if not isinstance(t, SymbolicTensor):
                raise TypeError(f"Model: inputs and outputs must be symbolic tensors (from "
                                f"tb.layers.input() and layer calls), got {type(t).__name__}")
        for t in ins:
            if not isinstance(t.layer, InputLayer):
                raise ValueError(f"Model: input {t.name!r} is not made by tb.layers.input()")
        self._single_input = not isinstance(inputs, list | tuple)
        self._single_output = not isinstance(outputs, list | tuple)
        self.inputs, self.outputs = ins, outs
        self._executor = GraphExecutor(ins, outs)
        names: dict[str, Any] = {}
        for layer in self._executor.layers:
            other = names.setdefault(layer.name, layer)
            if other is not layer:
                raise ValueError(f"Model: two different layers are named {layer.name!r}; layer "
                                 f"names must be unique within a model")
        self.built = True
        self._trainer = None
        self._predictor = None

    def _executor_or_none(self) -> GraphExecutor | None:
        return self._executor

    def _random_plan(self, input_shapes: list[tuple[int, ...]]) -> list[tuple[Any, list]]:
        return self._executor.random_plan(input_shapes) if self._executor else []

    def _require_graph(self) -> GraphExecutor:
        if self._executor is None:
            raise ValueError(
                f"model {self.name!r} has not been built: give the first layer an input_shape, "
                f"add tb.layers.input(...) first, or call fit/predict on data")
        return self._executor

    @property
    def layers(self) -> list[Layer]:
        """The model's layers, in execution order (input layers first)."""
        return self._executor.layers if self._executor is not None else []

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        layers = self.layers
        if index is not None:
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"model {self.name!r} has no layer {name!r}; layers: "
                         f"{', '.join(lay.name for lay in layers)}")

    @property
    def input_names(self) -> list[str]:
        return [t.layer.name for t in self.inputs]

    @property
    def output_names(self) -> list[str]:
        names = []
        for t in self.outputs:
            n = t.layer.name
            names.append(n if n not in names else f"{n}_{len(names)}")
        return names

    # -- weights --------------------------------------------------------------------------------
    @property
    def weights(self) -> list[Any]:
        seen: set[int] = set()
        out = []
        for layer in self.layers:
            for w in layer.weights:
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        return out

    @property
    def trainable_weights(self) -> list[Any]:
        if not self.trainable:
            return []
        seen: set[int] = set()
        out = []
        for layer in self.layers:
            for w in layer.trainable_weights:
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        return out

    @property
    def non_trainable_weights(self) -> list[Any]:
        train = {id(w) for w in self.trainable_weights}
        return [w for w in self.weights if id(w) not in train]

    def count_params(self) -> int:
        return sum(w.size for w in self.weights)

    def _backend(self) -> Any:
        ws = self.weights
        return ws[0].backend if ws else get_backend()

    def _float_dtype(self) -> D.DType:
        for w in self.weights:
            if w.dtype.kind == "f":
                return w.dtype
        return D.float32

    def to_backend(self, backend: Any) -> Model:
        """Move every weight (and the optimizer state) to ``backend``; returns the model."""
        be = get_backend(backend)
        for w in self.weights:
            w._value = w._value.to(be)
        opt = self.optimizer
        if opt is not None and opt.state is not None:
            opt.state = tree_map(lambda t: t.to(be) if isinstance(t, Tensor) else t, opt.state)
        return self

    # -- calling --------------------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        self._require_graph()

    def call(self, inputs: Any, training: bool = False) -> Any:
        ex = self._require_graph()
        outs = ex.run(_as_list(inputs) if not self._single_input else [inputs],
                      training=training)
        return outs[0] if self._single_output else outs

    def compute_output_shape(self, input_shape: Any) -> Any:
        self._require_graph()
        shapes = [t.shape for t in self.outputs]
        return shapes[0] if self._single_output else shapes

    def compute_output_dtype(self, input_dtype: Any) -> Any:
        dts = [t.dtype for t in self.outputs]
        return dts[0] if self._single_output else dts

    def __call__(self, inputs: Any, training: bool | None = None, **kwargs: Any) -> Any:
        flat = _as_list(inputs)
        if any(isinstance(x, SymbolicTensor) for x in flat):
            return super().__call__(inputs, training=training, **kwargs)
        self._ensure_built(flat)
        ex = self._require_graph()
        xs = self._feed_tensors(flat)
        outs = ex.run(xs, training=bool(training), release="dispose")
        return outs[0] if self._single_output else outs

    def stateless_call(self, weights: Sequence[Tensor], inputs: Any,
                       training: bool = False) -> Any:
        """The outputs for ``inputs`` computed with ``weights`` (one tensor per
        ``model.weights``, in that order) instead of the stored values.

        This is the form to differentiate or compile yourself: ``tb.grad(lambda w:
        loss(model.stateless_call(w, x)))(ws)``, or ``tb.function(lambda w, x:
        model.stateless_call(w, x))`` — a compiled function that read the stored weights
        instead would keep the values it saw when it was traced.
        """
        ws = self.weights
        weights = list(weights)
        if len(weights) != len(ws):
            raise ValueError(f"model {self.name!r} has {len(ws)} weight(s), got {len(weights)}")
        flat = _as_list(inputs)
        self._ensure_built(flat)
        ex = self._require_graph()
        with substitute(dict(zip(ws, weights))):
            outs = ex.run(self._feed_tensors(flat), training=bool(training))
        return outs[0] if self._single_output else outs

    def _ensure_built(self, data: list[Any]) -> None:
        """Sequential models without an input shape build on their first data."""

    def _feed_tensors(self, values: list[Any]) -> list[Tensor]:
        if len(values) != len(self.inputs):
            raise ValueError(f"model {self.name!r} has {len(self.inputs)} input(s), got "
                             f"{len(values)}")
        be = self._backend()
        out = []
        for v, t in zip(values, self.inputs):
            x = v if isinstance(v, Tensor) else tensor(_data.as_host(v, t.dtype, t.name),
                                                       backend=be)
            if x.backend is not be:
                x = x.to(be)
            if x.dtype is not t.dtype:
                x = x.astype(t.dtype)
            _check_shape(t, x.shape)
            out.append(x)
        return out

    # -- compile --------------------------------------------------------------------------------
    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None,
                loss_weights: Any = None, run_eagerly: bool = False) -> None:
        """Choose the optimizer, the loss(es) and the metrics for ``fit``/``evaluate``.

        ``loss`` and ``metrics`` may be one value for every output, a list (one per output) or a
        dict keyed by output name; ``run_eagerly=True`` skips compilation of the steps.
        """
        if loss is None:
            raise ValueError("compile: give a loss (e.g. 'mse' or 'categorical_crossentropy')")
        # all or nothing: a compile that fails (unknown loss, optimizer or metric) leaves the
        # model as it was, still usable with its previous configuration
        before = (self.optimizer, self._compile_args, self._trainer)
        try:
            self.optimizer = _optimizers.get(optimizer)
            self._compile_args = {"loss": loss, "metrics": metrics,
                                  "loss_weights": loss_weights, "run_eagerly": bool(run_eagerly)}
            self._trainer = None
            if self._executor is not None:
                self._make_trainer()
            else:
                self._check_compile_args()
        except BaseException:
            self.optimizer, self._compile_args, self._trainer = before
            raise

    def _check_compile_args(self) -> None:
        """Resolve the names given to ``compile`` of a model that is not built yet, so that an
        unknown loss or metric is reported by ``compile``, not by the first ``fit``."""
        args = self._compile_args or {}
        for spec in _spec_values(args.get("loss")):
            if spec is not None:
                _losses.get(spec)
        for spec in _spec_values(args.get("metrics")):
            if isinstance(spec, str):
                _metrics.resolve(spec, None)

    @property
    def compiled(self) -> bool:
        return self._compile_args is not None

    def _per_output(self, spec: Any, what: str) -> list[Any]:
        names = self.output_names
        if isinstance(spec, dict):
            unknown = [k for k in spec if k not in names]
            if unknown:
                raise ValueError(f"compile: {what} for unknown output(s) {unknown}; outputs: "
                                 f"{names}")
            return [spec.get(n) for n in names]
        if isinstance(spec, list | tuple) and what != "metrics":
            if len(spec) != len(names):
                raise ValueError(f"compile: {len(spec)} {what} for {len(names)} output(s)")
            return list(spec)
        return [spec] * len(names)

    def _make_trainer(self) -> Trainer:
        if self._trainer is not None:
            return self._trainer
        if self._compile_args is None:
            raise RuntimeError(f"model {self.name!r} must be compiled before training or "
                               f"evaluation: call model.compile(optimizer, loss, metrics)")
        self._require_graph()
        args = self._compile_args
        names = self.output_names
        losses = [None if s is None else _losses.get(s)
                  for s in self._per_output(args["loss"], "loss")]
        lw = args["loss_weights"]
        weights = [1.0] * len(names) if lw is None else [
            1.0 if w is None else float(w) for w in self._per_output(lw, "loss_weights")]
        metric_specs = args["metrics"]
        per_out: list[list[Any]] = [[] for _ in names]
        if isinstance(metric_specs, dict):
            for i, spec in enumerate(self._per_output(metric_specs, "metrics")):
                per_out[i] = _as_list(spec) if spec is not None else []
        elif metric_specs is not None:
            specs = list(metric_specs) if isinstance(metric_specs, list | tuple) else [
                metric_specs]
            if specs and all(isinstance(s, list | tuple) for s in specs) and \
                    len(specs) == len(names):
                per_out = [list(s) for s in specs]
            else:
                per_out = [list(specs) for _ in names]
        metrics: list[tuple[int, Any]] = []
        for i, specs in enumerate(per_out):
            for spec in specs:
                m = _metrics.resolve(spec, losses[i])
                if len(names) > 1:  # one accumulator per output, named after it
                    m = copy.copy(m) if m is spec else m
                    m.name = f"{names[i]}_{m.name}"
                metrics.append((i, m))
        self._trainer = Trainer(self, self.optimizer, losses, weights, metrics,
                                run_eagerly=args["run_eagerly"])
        return self._trainer

    @property
    def metrics_names(self) -> list[str]:
        t = self._make_trainer()
        return ["loss", *(m.name for _, m in t.metrics)]

    # -- data -----------------------------------------------------------------------------------
    def _input_arrays(self, x: Any) -> list[Any]:
        if x is None:
            raise ValueError("x: no input data given")
        self._ensure_built(_as_list(x) if not isinstance(x, dict) else list(x.values()))
        self._require_graph()
        vals = _data.structure(x, self.input_names, "x (model inputs)")
        arrays = [_data.as_host(v, t.dtype, f"x[{t.name}]") for v, t in zip(vals, self.inputs)]
        for a, t in zip(arrays, self.inputs):
            _check_shape(t, tuple(a.shape))
        return arrays

    def _target_arrays(self, y: Any, trainer: Trainer) -> list[Any]:
        if y is None:
            raise ValueError("y: no targets given")
        vals = _data.structure(y, self.output_names, "y (model outputs)")
        out = []
        for v, t, loss in zip(vals, self.outputs, trainer.losses):
            if v is None:
                out.append(None)
                continue
            sparse = getattr(loss, "sparse_labels", False)
            dt = D.int32 if sparse else (t.dtype if t.dtype.kind == "f" else D.float32)
            arr = _data.as_host(v, dt, f"y[{t.name}]")
            if sparse:
                _check_class_ids(arr, t.shape[-1], f"y[{t.name}]")
            if len(arr.shape) == 1 and not sparse and len(t.shape) == 2 and t.shape[1] == 1:
                arr = arr.reshape(-1, 1)  # targets (n,) for outputs (None, 1)
            out.append(arr)
        return out

    def _weight_arrays(self, sample_weight: Any, n_outputs: int) -> list[Any]:
        if sample_weight is None:
            return [None] * n_outputs
        if isinstance(sample_weight, dict) or (isinstance(sample_weight, list | tuple) and
                                               n_outputs > 1):
            vals = _data.structure(sample_weight, self.output_names, "sample_weight")
        else:
            vals = [sample_weight] * n_outputs
        return [None if v is None else _data.as_host(v, self._float_dtype(), "sample_weight")
                for v in vals]

    def _batch(self, arrays: list[Any], idx: Any, dtypes: list[Any], be: Any) -> list[Any]:
        return [None if a is None else _data.to_backend(_data.take(a, idx), dt, be)
                for a, dt in zip(arrays, dtypes)]

    # -- fit ------------------------------------------------------------------------------------
    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1,
            verbose: Any = "auto", callbacks: Sequence[Any] | None = None,
            validation_split: float = 0.0, validation_data: Any = None, shuffle: bool = True,
            sample_weight: Any = None, initial_epoch: int = 0, seed: int | None = None,
            validation_batch_size: int | None = None) -> History:
        """Train for ``epochs`` passes over ``(x, y)``; returns the :class:`History`.

        ``validation_split`` holds out the *last* fraction of the samples (before shuffling);
        ``validation_data=(x_val, y_val)`` gives them explicitly; either adds ``val_*`` entries
        to the logs. ``shuffle`` reorders the training samples every epoch with a generator
        seeded by ``seed`` (``None``: drawn from ``tb.random``'s default generator).
        ``verbose``: ``"auto"`` (a progress bar when standard output is a terminal), 0, 1, 2.
        ``callbacks``: :class:`Callback` objects, functions ``fn(epoch, logs)`` or dicts of hook
        functions.
        """
        xs = self._input_arrays(x)
        trainer = self._make_trainer()
        trainer.sync_variables()
        ys = self._target_arrays(y, trainer)
        sws = self._weight_arrays(sample_weight, len(self.outputs))
        n = _data.num_samples(xs + [a for a in ys + sws if a is not None], "fit")
        val: tuple[list[Any], list[Any], list[Any]] | None = None
        if validation_data is not None:
            vd = tuple(validation_data)
            if len(vd) not in (2, 3):
                raise ValueError("validation_data: expected (x_val, y_val) or (x_val, y_val, "
                                 "sample_weight)")
            val = (self._input_arrays(vd[0]), self._target_arrays(vd[1], trainer),
                   self._weight_arrays(vd[2] if len(vd) == 3 else None, len(self.outputs)))
        elif validation_split:
            head, tail = _data.split_tail(xs + ys + sws, float(validation_split))
            nx, ny = len(xs), len(ys)
            xs, ys, sws = head[:nx], head[nx:nx + ny], head[nx + ny:]
            val = (tail[:nx], tail[nx:nx + ny], tail[nx + ny:])
            n = _data.num_samples(xs, "fit")
        if n == 0:
            raise ValueError("fit: no training samples")
        bs = int(batch_size or 32)
        if seed is not None:
            gen = _random.Generator(int(seed))
        else:
            gen = _random.Generator(int(_random.default_generator().integers(0, 2**31 - 1)
                                        .item()))
        batches = _data.Batches(n, bs, bool(shuffle), gen)
        mode = resolve_verbose(verbose)
        history = History()
        cbs: list[Any] = [ProgbarLogger(mode)] if mode else []
        cbs.extend(callbacks or [])
        cbs.append(history)
        params = {"epochs": int(epochs), "steps": len(batches), "verbose": mode,
                  "batch_size": bs, "samples": n}
        cb = CallbackList(cbs, model=self, params=params)
        be = self._backend()
        in_dt = [t.dtype for t in self.inputs]
        y_dt = [None if a is None else _data.host_dtype(a) for a in ys]
        w_dt = [self._float_dtype()] * len(sws)
        metrics = [m for _, m in trainer.metrics]
        self.stop_training = False
        self.history = history
        cb.on_train_begin()
        logs: dict[str, Any] = {}
        for epoch in range(int(initial_epoch), int(epochs)):
            for m in metrics:
                m.reset_state()
            cb.on_epoch_begin(epoch)
            loss_sum, seen = 0.0, 0
            for step, idx in enumerate(batches.epoch()):
                safe_point()  # a host's interrupt stops here, between batches
                if cb.batch_hooks:
                    cb.on_train_batch_begin(step, {"batch": step, "size": 0})
                xb = self._batch(xs, idx, in_dt, be)
                yb = self._batch(ys, idx, y_dt, be)
                wb = self._batch(sws, idx, w_dt, be)
                loss, stats = trainer.train_batch(xb, yb, wb)
                nb = xb[0].shape[0]
                loss_sum += float(loss) * nb
                seen += nb
                for m, (tot, cnt) in zip(metrics, stats):
                    m.update(float(tot), float(cnt))
                if cb.batch_hooks:
                    blogs = {"loss": loss_sum / seen}
                    blogs.update((m.name, m.result()) for m in metrics)
                    cb.on_train_batch_end(step, blogs)
                if self.stop_training:
                    break
            logs = {"loss": loss_sum / max(seen, 1)}
            logs.update((m.name, m.result()) for m in metrics)
            if val is not None:
                vlogs = self._evaluate_arrays(trainer, *val, int(validation_batch_size or bs))
                logs.update((f"val_{k}", v) for k, v in vlogs.items())
            cb.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        cb.on_train_end(logs)
        return history

    def _evaluate_arrays(self, trainer: Trainer, xs: list[Any], ys: list[Any], sws: list[Any],
                         batch_size: int, cb: CallbackList | None = None) -> dict[str, float]:
        n = _data.num_samples(xs, "evaluate")
        be = self._backend()
        in_dt = [t.dtype for t in self.inputs]
        y_dt = [None if a is None else _data.host_dtype(a) for a in ys]
        w_dt = [self._float_dtype()] * len(sws)
        metrics = [m for _, m in trainer.metrics]
        for m in metrics:
            m.reset_state()
        loss_sum, seen = 0.0, 0
        for step, idx in enumerate(_data.Batches(n, batch_size).epoch()):
            if cb is not None and cb.batch_hooks:
                cb.on_test_batch_begin(step, {})
            xb = self._batch(xs, idx, in_dt, be)
            loss, stats = trainer.eval_batch(xb, self._batch(ys, idx, y_dt, be),
                                             self._batch(sws, idx, w_dt, be))
            nb = xb[0].shape[0]
            loss_sum += float(loss) * nb
            seen += nb
            for m, (tot, cnt) in zip(metrics, stats):
                m.update(float(tot), float(cnt))
            if cb is not None and cb.batch_hooks:
                cb.on_test_batch_end(step, {"loss": loss_sum / seen})
        out = {"loss": loss_sum / max(seen, 1)}
        out.update((m.name, m.result()) for m in metrics)
        return out

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None,
                 verbose: Any = "auto", sample_weight: Any = None,
                 callbacks: Sequence[Any] | None = None, return_dict: bool = False) -> Any:
        """Loss and metrics on ``(x, y)``: the loss alone when there are no metrics, else
        ``[loss, *metrics]`` (or a dict with ``return_dict=True``)."""
        xs = self._input_arrays(x)
        trainer = self._make_trainer()
        trainer.sync_variables()
        ys = self._target_arrays(y, trainer)
        sws = self._weight_arrays(sample_weight, len(self.outputs))
        cb = CallbackList(callbacks or [], model=self, params={"verbose": 0})
        cb.on_test_begin()
        logs = self._evaluate_arrays(trainer, xs, ys, sws, int(batch_size or 32), cb)
        cb.on_test_end(logs)
        if resolve_verbose(verbose):
            print(format_logs(logs))
        if return_dict:
            return logs
        values = list(logs.values())
        return values[0] if len(values) == 1 else values

    # -- predict --------------------------------------------------------------------------------
    def _predict_step(self, params: list[Tensor], xs: list[Tensor]) -> list[Tensor]:
        with substitute(dict(zip(self.weights, params))):
            return self._executor.run(xs, training=False)

    def predict(self, x: Any, batch_size: int | None = None, verbose: Any = 0,
                callbacks: Sequence[Any] | None = None) -> Any:
        """Model outputs for ``x`` (computed in batches): a tensor, or a list for several
        outputs. Dropout and other training-only behaviour is off."""
        xs = self._input_arrays(x)
        n = _data.num_samples(xs, "predict")
        if self._predictor is None:
            self._predictor = compiled_per_backend(self._predict_step)
        be = self._backend()
        in_dt = [t.dtype for t in self.inputs]
        params = [w._value for w in self.weights]
        cb = CallbackList(callbacks or [], model=self, params={"verbose": 0})
        cb.on_predict_begin()
        parts: list[list[Tensor]] = [[] for _ in self.outputs]
        for step, idx in enumerate(_data.Batches(n, int(batch_size or 32)).epoch()):
            if cb.batch_hooks:
                cb.on_predict_batch_begin(step, {})
            outs = self._predictor(be, params, self._batch(xs, idx, in_dt, be))
            for p, o in zip(parts, outs):
                p.append(o)
            if cb.batch_hooks:
                cb.on_predict_batch_end(step, {"outputs": outs})
        cb.on_predict_end()
        if n == 0:
            raise ValueError("predict: no samples")
        res = [p[0] if len(p) == 1 else concat(p, axis=0) for p in parts]
        return res[0] if self._single_output else res

    def predict_on_batch(self, x: Any) -> Any:
        return self.predict(x, batch_size=max(_data.num_samples(
            [a for a in self._input_arrays(x)], "predict_on_batch"), 1))

    def train_on_batch(self, x: Any, y: Any, sample_weight: Any = None) -> Any:
        """One optimizer step on exactly this batch; returns the loss (and metrics)."""
        xs = self._input_arrays(x)
        trainer = self._make_trainer()
        trainer.sync_variables()
        ys = self._target_arrays(y, trainer)
        sws = self._weight_arrays(sample_weight, len(self.outputs))
        be = self._backend()
        n = _data.num_samples(xs, "train_on_batch")
        idx = slice(0, n)
        loss, stats = trainer.train_batch(
            self._batch(xs, idx, [t.dtype for t in self.inputs], be),
            self._batch(ys, idx, [None if a is None else _data.host_dtype(a) for a in ys], be),
            self._batch(sws, idx, [self._float_dtype()] * len(sws), be))
        if not trainer.metrics:
            return float(loss)
        return [float(loss), *(float(t) / max(float(c), 1e-300) for t, c in stats)]

    def test_on_batch(self, x: Any, y: Any, sample_weight: Any = None) -> Any:
        n = _data.num_samples(self._input_arrays(x), "test_on_batch")
        return self.evaluate(x, y, batch_size=max(n, 1), verbose=0, sample_weight=sample_weight)

    # -- display and files ----------------------------------------------------------------------
    def summary(self, print_fn: Any = None, line_length: int | None = None) -> None:
        """Print a table of the layers with output shapes (``None``: the batch dimension) and
        parameter counts."""
        text = format_summary(self, line_length)
        (print_fn or print)(text)

    def summary_text(self, line_length: int | None = None) -> str:
        return format_summary(self, line_length)

    def save(self, path: Any, include_optimizer: bool = True, overwrite: bool = True) -> None:
        """Save architecture, weights (and optimizer state, training config) to a directory or,
        for a path ending in ``.zip``, one zip file. See ``serialization.py`` for the format."""
        save_model(self, path, include_optimizer=include_optimizer, overwrite=overwrite)

    def save_weights(self, path: Any, overwrite: bool = True) -> None:
        save_weights(self, path, overwrite=overwrite)

    def load_weights(self, path: Any, by_name: bool = False) -> None:
        load_weights(self, path, by_name=by_name)

    def get_weights(self) -> list[Any]:
        return [w.numpy() for w in self.weights]

    def set_weights(self, values: Sequence[Any]) -> None:
        ws = self.weights
        if len(values) != len(ws):
            raise ValueError(f"model {self.name!r} has {len(ws)} weight(s), got {len(values)}")
        for w, v in zip(ws, values):
            w.assign(v)

    def to_json(self) -> str:
        import json

        return json.dumps(model_topology(self))

    # -- config ---------------------------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        """Keras-style functional config: layers with their inbound nodes, input and output
        layers (``[layer_name, node_index, tensor_index]``)."""
        ex = self._require_graph()
        node_ids: dict[int, int] = {}  # id(node) -> index among the layer's nodes in this model
        per_layer: dict[int, int] = {}
        model_nodes = [n for lay in ex.layers for n in lay._inbound_nodes]
        member = {id(n) for n in _all_nodes(ex)}
        for n in model_nodes:
            if id(n) in member:
                k = per_layer.get(id(n.layer), 0)
                node_ids[id(n)] = k
                per_layer[id(n.layer)] = k + 1

        def ref(t: SymbolicTensor) -> list[Any]:
            return [t.layer.name, node_ids[id(t.node)], t.index]

        layers = []
        for layer in ex.layers:
            inbound = []
            for n in layer._inbound_nodes:
                if id(n) in member and n.inputs:
                    inbound.append([[*ref(t), {}] for t in n.inputs])
            entry = serialize_layer(layer)
            entry["name"] = layer.name
            entry["inbound_nodes"] = inbound
            layers.append(entry)
        return {"name": self.name, "trainable": self.trainable, "layers": layers,
                "input_layers": [ref(t) for t in self.inputs],
                "output_layers": [ref(t) for t in self.outputs]}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Model:
        created: dict[str, Layer] = {}
        outputs_of: dict[tuple[str, int], list[SymbolicTensor]] = {}
        pending: list[tuple[Layer, list[Any]]] = []
        for spec in config["layers"]:
            layer = deserialize_layer(spec)
            created[spec["name"]] = layer
            if isinstance(layer, InputLayer):
                outputs_of[(layer.name, 0)] = [layer.output]
            pending.append((layer, list(spec.get("inbound_nodes") or [])))
        counters: dict[str, int] = {}
        progress = True
        while progress and any(nodes for _, nodes in pending):
            progress = False
            for layer, nodes in pending:
                while nodes:
                    args = nodes[0]
                    if isinstance(args, dict):  # Keras 3 style {"args": [...]} is not read
                        raise ValueError("model config: unsupported inbound node format")
                    refs = [(a[0], a[1], a[2]) for a in args]
                    if not all((n, k) in outputs_of for n, k, _ in refs):
                        break
                    ins = [outputs_of[(n, k)][i] for n, k, i in refs]
                    out = layer(ins if len(ins) > 1 else ins[0])
                    k = counters.get(layer.name, 0)
                    counters[layer.name] = k + 1
                    outputs_of[(layer.name, k)] = _as_list(out)
                    nodes.pop(0)
                    progress = True
        if any(nodes for _, nodes in pending):
            raise ValueError("model config: some layers' inputs could not be resolved")

        def get(refs: Any) -> list[SymbolicTensor]:
            return [outputs_of[(r[0], r[1])][r[2]] for r in refs]

        ins, outs = get(config["input_layers"]), get(config["output_layers"])
        model = cls(ins if len(ins) > 1 else ins[0], outs if len(outs) > 1 else outs[0],
                    name=config.get("name"), trainable=config.get("trainable", True))
        return model

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r} layers={len(self.layers)}>"


def _all_nodes(ex: GraphExecutor) -> list[Any]:
    return topological_nodes(ex.outputs)


def _check_class_ids(arr: Any, n_classes: Any, what: str) -> None:
    """Sparse labels must be class ids in [0, n_classes): one-hot of any other id is all zeros,
    which would give a loss of 0 instead of an error."""
    if not isinstance(n_classes, int) or isinstance(arr, Tensor) or not getattr(arr, "size", 0):
        return
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= n_classes:
        raise ValueError(f"{what}: class ids must be whole numbers from 0 to {n_classes - 1} "
                         f"(the model has {n_classes} outputs), got values from {lo} to {hi}")


def _check_shape(t: SymbolicTensor, shape: tuple[int, ...]) -> None:
    if len(shape) != len(t.shape) or any(
            d is not None and d != s for d, s in zip(t.shape[1:], shape[1:])):
        raise ValueError(f"input {t.name!r} expects data of shape {format_shape(t.shape)}, got "
                         f"{format_shape(tuple(shape))}")


_LAYERS.add("Functional", Model)  # what Keras 3 calls a functional model in saved configs


def _spec_values(spec: Any) -> list[Any]:
    """The single specs inside a compile argument (one value, a list, a dict, nested lists)."""
    if isinstance(spec, dict):
        return [v for x in spec.values() for v in _spec_values(x)]
    if isinstance(spec, list | tuple):
        return [v for x in spec for v in _spec_values(x)]
    return [spec]
