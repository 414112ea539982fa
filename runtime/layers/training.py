"""The compiled steps behind ``fit``, ``evaluate`` and ``predict``.

Each step is a pure function of tensors — weights in, new weights out — wrapped in
:func:`tensorbridge.function`. On NumPy the first call for a batch shape records every kernel the
step runs (forward pass, loss, backward pass, optimizer update, metrics) and later calls replay
that straight-line program; on TensorFlow the step becomes one ``tf.function`` graph. Everything
that changes between steps is an argument: the weights, the optimizer state (step counter and
slots), the learning rate, the batch and the random numbers dropout needs (drawn before the step
from the layers' seeded generators). Nothing inside reads a tensor value, so the recording stays
valid and a replay gives exactly the numbers an eager step gives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autodiff.api import value_and_grad
from ..pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor
from .base import random_feed
from .variables import substitute

__all__ = ["Static", "Trainer", "compiled_per_backend"]


class Static(tuple):
    """A tuple of plain values passed to a compiled step as *one* static argument: part of the
    step's signature (a change recompiles) without adding a leaf per value."""

    __slots__ = ()


class compiled_per_backend:  # noqa: N801 - used like a function decorator
    """``tb.function`` for callers that know the backend: ``f(backend, *args)`` runs ``fn``
    compiled by ``backend.compile`` (staged on NumPy, ``tf.function`` on TensorFlow), without
    searching the arguments for a tensor on every call. ``eager=True`` runs ``fn`` as is."""

    def __init__(self, fn: Callable[..., Any], eager: bool = False) -> None:
        self.fn = fn
        self.eager = eager
        self.compiled: dict[str, Callable[..., Any]] = {}

    def __call__(self, backend: Any, *args: Any) -> Any:
        if self.eager:
            return self.fn(*args)
        c = self.compiled.get(backend.name)
        if c is None:
            c = self.compiled[backend.name] = backend.compile(self.fn)
        return c(*args)


class Trainer:
    """The compiled steps of one ``compile`` call on one model."""

    def __init__(self, model: Any, optimizer: Any, losses: list[Any], loss_weights: list[float],
                 metrics: list[tuple[int, Any]], run_eagerly: bool = False) -> None:
        self.model = model
        self.optimizer = optimizer
        self.losses = losses
        self.loss_weights = loss_weights
        self.metrics = metrics  # (output index, Metric)
        # run_eagerly: plain Python calls (for debugging, and to check staging against eager)
        self.train_fn = compiled_per_backend(self._train_flat, eager=run_eagerly)
        self.eval_fn = compiled_per_backend(self._eval_flat, eager=run_eagerly)
        self._state_def: Any = None
        self._state_version = 0
        self._plans: dict[Any, list[tuple[Any, list]]] = {}
        self._vars_key: tuple[int, ...] | None = None
        self.trainable: list[Any] = []
        self.frozen: list[Any] = []

    # -- pure steps (traced once per input signature) --------------------------------------------
    def _forward(self, params: list[Tensor], frozen: list[Tensor], xs: list[Tensor],
                 training: bool, noise: list[Tensor] | None = None) -> list[Tensor]:
        mapping = dict(zip(self.trainable, params))
        mapping.update(zip(self.frozen, frozen))
        ex = self.model._executor
        feed: dict[Any, list[Tensor]] = {}
        if noise:
            it = iter(noise)
            for layer, shapes in ex.random_plan([x.shape for x in xs]):
                feed.setdefault(layer, []).extend(next(it) for _ in shapes)
        with substitute(mapping), random_feed(feed):
            return ex.run(xs, training=training)

    def _total_loss(self, ys: list[Any], outs: list[Tensor], sws: list[Any]) -> Tensor:
        total = None
        for i, (loss, w) in enumerate(zip(self.losses, self.loss_weights)):
            if loss is None:
                continue
            v = loss(ys[i], outs[i], sws[i])
            v = v * w if w != 1.0 else v
            total = v if total is None else total + v
        if total is None:
            raise ValueError("compile: no output has a loss")
        return total

    def _stats(self, ys: list[Any], outs: list[Tensor], sws: list[Any]) -> list[Any]:
        return [m.batch_stats(ys[i], outs[i], sws[i]) for i, m in self.metrics]

    def _train_step(self, params, opt_state, frozen, xs, ys, sws, noise, lr, hyper):
        def objective(p):
            outs = self._forward(p, frozen, xs, True, noise)
            return self._total_loss(ys, outs, sws), outs

        if params:
            (loss, outs), grads = value_and_grad(objective, has_aux=True)(params)
            params, opt_state = self.optimizer.apply(params, grads, opt_state, lr, hyper)
        else:  # everything frozen: report the loss, change nothing
            loss, outs = objective(params)
        return params, opt_state, loss, self._stats(ys, outs, sws)

    def _eval_step(self, params, frozen, xs, ys, sws):
        outs = self._forward(params, frozen, xs, False)
        return self._total_loss(ys, outs, sws), self._stats(ys, outs, sws)

    # The compiled functions take one flat list of tensors plus a static layout (counts, which
    # targets/weights are present, hyperparameters): a small argument tree keeps the per-call
    # cost of matching a compiled program low.
    def _train_flat(self, flat: list[Tensor], layout: Static) -> list[Tensor]:
        n_p, n_s, n_f, n_x, y_mask, w_mask, n_noise, hyper, _ = layout
        take = _Taker(flat)
        params, leaves, frozen, xs = take(n_p), take(n_s), take(n_f), take(n_x)
        ys, sws = take.masked(y_mask), take.masked(w_mask)
        noise, lr = take(n_noise), take(1)[0]
        state = tree_unflatten(self._state_def, leaves)
        params, state, loss, stats = self._train_step(params, state, frozen, xs, ys, sws, noise,
                                                      lr, hyper)
        return [*params, *tree_flatten(state)[0], loss, *(t for pair in stats for t in pair)]

    def _eval_flat(self, flat: list[Tensor], layout: Static) -> list[Tensor]:
        n_p, n_f, n_x, y_mask, w_mask = layout
        take = _Taker(flat)
        params, frozen, xs = take(n_p), take(n_f), take(n_x)
        ys, sws = take.masked(y_mask), take.masked(w_mask)
        loss, stats = self._eval_step(params, frozen, xs, ys, sws)
        return [loss, *(t for pair in stats for t in pair)]

    # -- host side -------------------------------------------------------------------------------
    def sync_variables(self) -> None:
        """Pick up the model's current trainable/frozen split (rebuilding optimizer state when
        it changed)."""
        trainable = self.model.trainable_weights
        frozen = self.model.non_trainable_weights
        key = (tuple(id(v) for v in trainable), tuple(id(v) for v in frozen))
        if key != self._vars_key:
            self.trainable, self.frozen = trainable, frozen
            self._vars_key = key
        self.optimizer.build(self.trainable)
        state_def = self.optimizer.state_leaves()[1]
        if state_def != self._state_def:
            self._state_def = state_def
            self._state_version += 1

    def noise_for(self, xs: list[Tensor]) -> list[Tensor]:
        """The uniform draws this batch's dropout layers need, from their generators."""
        ex = self.model._executor
        if not ex._random_nodes:
            return []
        key = tuple(tuple(x.shape) for x in xs)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = ex.random_plan([x.shape for x in xs])
        backend = xs[0].backend
        out = []
        for layer, shapes in plan:
            dt = layer.dtype or xs[0].dtype
            for s in shapes:
                out.append(layer.generator.uniform(s, dtype=dt, backend=backend))
        return out

    def train_batch(self, xs: list[Tensor], ys: list[Any], sws: list[Any]) -> tuple[Any, Any]:
        """One optimizer step; updates the variables and the optimizer state, returns the loss
        and the metrics' ``(total, count)`` pairs (tensors)."""
        opt = self.optimizer
        params = [v._value for v in self.trainable]
        frozen = [v._value for v in self.frozen]
        like = params[0] if params else xs[0]
        lr = opt.learning_rate_tensor(like.dtype if like.dtype.kind == "f" else
                                      self.model._float_dtype(), like.backend)
        noise = self.noise_for(xs)
        state_leaves, state_def = opt.state_leaves()
        ys_p = [y for y in ys if y is not None]
        sws_p = [w for w in sws if w is not None]
        layout = Static((len(params), len(state_leaves), len(frozen), len(xs),
                         tuple(y is not None for y in ys), tuple(w is not None for w in sws),
                         len(noise), Static(opt.hyper()), self._state_version))
        out = self.train_fn(like.backend,
                            [*params, *state_leaves, *frozen, *xs, *ys_p, *sws_p, *noise, lr],
                            layout)
        n_p, n_s = len(params), len(state_leaves)
        for v, p in zip(self.trainable, out[:n_p]):
            v._value = p
        opt.set_state_leaves(out[n_p:n_p + n_s], state_def)
        opt.iterations += 1
        rest = out[n_p + n_s:]
        return rest[0], _pairs(rest[1:])

    def eval_batch(self, xs: list[Tensor], ys: list[Any], sws: list[Any]) -> tuple[Any, Any]:
        params = [v._value for v in self.trainable]
        frozen = [v._value for v in self.frozen]
        layout = Static((len(params), len(frozen), len(xs), tuple(y is not None for y in ys),
                         tuple(w is not None for w in sws)))
        out = self.eval_fn(xs[0].backend,
                           [*params, *frozen, *xs, *(y for y in ys if y is not None),
                            *(w for w in sws if w is not None)], layout)
        return out[0], _pairs(out[1:])


class _Taker:
    """Consecutive slices of a flat list."""

    __slots__ = ("flat", "pos")

    def __init__(self, flat: list[Any]) -> None:
        self.flat = flat
        self.pos = 0

    def __call__(self, n: int) -> list[Any]:
        out = self.flat[self.pos:self.pos + n]
        self.pos += n
        return out

    def masked(self, mask: tuple[bool, ...]) -> list[Any]:
        return [self(1)[0] if present else None for present in mask]


def _pairs(flat: list[Any]) -> list[tuple[Any, Any]]:
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
