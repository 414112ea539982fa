"""Optimizers: SGD (momentum, Nesterov), Adam (AMSGrad), RMSprop (centered, momentum), Adagrad.

Formulas and defaults are those of Keras 3, which agree with TensorFlow.js:

* SGD (lr 0.01): ``v = momentum * v - lr * g``; ``w += v`` (Nesterov: ``w += momentum * v - lr *
  g``); with ``momentum=0``, ``w -= lr * g``.
* Adam (lr 0.001, beta_1 0.9, beta_2 0.999, epsilon 1e-7): ``m += (g - m)(1 - beta_1)``,
  ``v += (g^2 - v)(1 - beta_2)``, ``w -= lr_t m / (sqrt(v) + epsilon)`` with
  ``lr_t = lr sqrt(1 - beta_2^t) / (1 - beta_1^t)`` (AMSGrad uses the running max of ``v``).
* RMSprop (lr 0.001, rho 0.9, momentum 0, epsilon 1e-7): ``s = rho s + (1 - rho) g^2``;
  ``inc = lr g / sqrt(s + epsilon)`` (centered: ``s - mean_g^2 + epsilon`` with
  ``mean_g = rho mean_g + (1 - rho) g``); ``w -= inc``, or with momentum
  ``mom = momentum mom + inc``, ``w -= mom``.
* Adagrad (lr 0.001, initial accumulator 0.1, epsilon 1e-7): ``a += g^2``;
  ``w -= lr g / sqrt(a + epsilon)``.

The core is functional — ``apply(params, grads, state, lr, hyper) -> (params, state)`` is pure
tensor code that a staged training step records once and replays — and the learning rate and
step counter are tensors *inputs*, so changing the rate (a callback, a schedule) never recompiles
or silently keeps an old value. Constant hyperparameters (``beta_1``…) are passed as plain values
in ``hyper``; changing one recompiles the step. Around the core, the object keeps the state for a
list of variables (``build``) and offers the eager ``apply_gradients`` and ``minimize``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as D
from .. import ops
from ..autodiff.api import value_and_grad
from ..ops.creation import full
from ..pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor
from . import primitives as _k
from .base import _snake
from .registry import Registry
from .variables import Variable, substitute

__all__ = ["SGD", "Adagrad", "Adam", "Optimizer", "RMSprop", "get", "serialize"]

_REG = Registry("optimizer")


class Optimizer:
    """Base class. Subclasses set ``slot_names``/``defaults`` and implement ``update_one``."""

    slot_names: tuple[str, ...] = ()
    default_learning_rate = 0.001

    def __init__(self, learning_rate: Any = None, *, clipnorm: float | None = None,
                 clipvalue: float | None = None, global_clipnorm: float | None = None,
                 name: str | None = None) -> None:
        if sum(v is not None for v in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError("give at most one of clipnorm, clipvalue, global_clipnorm")
        self.learning_rate = self.default_learning_rate if learning_rate is None \
            else learning_rate
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, \
            global_clipnorm
        self.name = name or _snake(type(self).__name__)
        self.variables: list[Variable] = []
        self._state: dict[str, Any] | None = None
        self._state_leaves: list[Tensor] | None = None  # the same state, flat (training loops)
        self._state_def: Any = None
        self.iterations = 0  # host mirror of state["iterations"] (for schedules and logs)
        self._lr_cache: dict[tuple[Any, ...], Tensor] = {}

    # -- learning rate ----------------------------------------------------------------------
    @property
    def learning_rate(self) -> Any:
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        if not callable(value):
            value = float(value)
            if not value >= 0.0:
                raise ValueError(f"learning_rate: expected a non-negative number, got {value}")
        self._learning_rate = value

    def current_learning_rate(self) -> float:
        """The rate for the next step (a schedule is called with the step number)."""
        lr = self._learning_rate
        return float(lr(self.iterations)) if callable(lr) else lr

    def learning_rate_tensor(self, dtype: Any, backend: Any) -> Tensor:
        value = self.current_learning_rate()
        key = (value, dtype, backend)
        t = self._lr_cache.get(key)
        if t is None:
            if len(self._lr_cache) > 8:
                self._lr_cache.clear()
            t = self._lr_cache[key] = full((), value, dtype, backend)
        return t

    # -- functional core ----------------------------------------------------------------------
    def hyper(self) -> tuple[tuple[str, Any], ...]:
        """The constant hyperparameters, as hashable plain values (part of a step's signature)."""
        return (("clipnorm", self.clipnorm), ("clipvalue", self.clipvalue),
                ("global_clipnorm", self.global_clipnorm))

    def init_slots(self, value: Tensor) -> dict[str, Tensor]:
        return {name: ops.zeros_like(value) for name in self.slot_names}

    def init_state(self, params: Sequence[Tensor]) -> dict[str, Any]:
        backend = params[0].backend if params else None
        return {"iterations": full((), 0, D.int64, backend),
                "slots": [self.init_slots(p) for p in params]}

    def shared(self, lr: Tensor, t: Tensor, hp: dict[str, Any]) -> dict[str, Any]:
        """Scalars shared by every variable of one step (e.g. Adam's bias-corrected rate)."""
        return {"lr": lr}

    def update_one(self, p: Tensor, g: Tensor, slots: dict[str, Tensor], s: dict[str, Any],
                   hp: dict[str, Any]) -> tuple[Tensor, dict[str, Tensor]]:
        raise NotImplementedError

    def apply(self, params: Sequence[Tensor], grads: Sequence[Tensor], state: dict[str, Any],
              lr: Tensor, hyper: tuple[tuple[str, Any], ...] | None = None
              ) -> tuple[list[Tensor], dict[str, Any]]:
        """One step for every parameter: pure, so it can run inside a staged function."""
        hp = dict(hyper if hyper is not None else self.hyper())
        it = state["iterations"] + 1
        grads = _clip(list(grads), hp)
        shared: dict[Any, dict[str, Any]] = {}
        new_params, new_slots = [], []
        for p, g, slots in zip(params, grads, state["slots"]):
            s = shared.get(p.dtype)
            if s is None:
                lr_p = lr if lr.dtype is p.dtype else ops.cast(lr, p.dtype)
                s = shared[p.dtype] = self.shared(lr_p, ops.cast(it, p.dtype), hp)
            if g.dtype is not p.dtype:
                g = ops.cast(g, p.dtype)
            np_, ns = self.update_one(p, g, slots, s, hp)
            new_params.append(np_)
            new_slots.append(ns)
        return new_params, {"iterations": it, "slots": new_slots}

    # -- stateful wrapper -----------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any] | None:
        """``{"iterations": int64 scalar, "slots": [{slot: tensor}, ...]}`` for ``variables``."""
        if self._state is None and self._state_leaves is not None:
            self._state = tree_unflatten(self._state_def, self._state_leaves)
        return self._state

    @state.setter
    def state(self, value: dict[str, Any] | None) -> None:
        self._state = value
        self._state_leaves = None
        self._state_def = None

    def state_leaves(self) -> tuple[list[Tensor], Any]:
        """The state as a flat list of tensors and its tree structure."""
        if self._state_leaves is None:
            self._state_leaves, self._state_def = tree_flatten(self._state)
        return self._state_leaves, self._state_def

    def set_state_leaves(self, leaves: list[Tensor], treedef: Any) -> None:
        self._state_leaves, self._state_def = leaves, treedef
        self._state = None

    def build(self, variables: Sequence[Variable]) -> None:
        """Create the state for ``variables`` (kept if already built for the same list)."""
        variables = list(variables)
        if self.state is not None and len(variables) == len(self.variables) and all(
                a is b for a, b in zip(variables, self.variables)):
            return
        self.variables = variables
        self.state = self.init_state([v.value for v in variables])
        self.iterations = 0

    def apply_gradients(self, grads_and_vars: Any) -> None:
        """Eagerly update variables: ``apply_gradients(zip(grads, variables))``."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            return
        variables = [v for _, v in pairs]
        if self.state is None:
            self.build(variables)
        else:
            missing = [v for v in variables if not any(v is w for w in self.variables)]
            if missing:  # variables seen for the first time get fresh slots
                self.variables = [*self.variables, *missing]
                self.state = {"iterations": self.state["iterations"],
                              "slots": [*self.state["slots"],
                                        *[self.init_slots(v.value) for v in missing]]}
        index = {id(v): i for i, v in enumerate(self.variables)}
        sel = [index[id(v)] for v in variables]
        state = self.state
        sub = {"iterations": state["iterations"], "slots": [state["slots"][i] for i in sel]}
        params = [v.value for v in variables]
        lr = self.learning_rate_tensor(params[0].dtype, params[0].backend)
        new_params, new_state = self.apply(params, [g for g, _ in pairs], sub, lr)
        for v, p in zip(variables, new_params):
            v.assign(p)
        slots = list(state["slots"])
        for i, s in zip(sel, new_state["slots"]):
            slots[i] = s
        self.state = {"iterations": new_state["iterations"], "slots": slots}
        self.iterations += 1

    def minimize(self, loss_fn: Callable[[], Tensor], var_list: Sequence[Variable]) -> Tensor:
        """One eager step on ``loss_fn()`` (a scalar computed from ``var.value``); returns the
        loss (TensorFlow.js ``optimizer.minimize``)."""
        var_list = list(var_list)

        def f(values: list[Tensor]) -> Tensor:
            with substitute(dict(zip(var_list, values))):
                return loss_fn()

        loss, grads = value_and_grad(f)([v.value for v in var_list])
        self.apply_gradients(zip(grads, var_list))
        return loss

    # -- configuration --------------------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        lr = self._learning_rate
        config: dict[str, Any] = {
            "name": self.name,
            "learning_rate": lr if not callable(lr) else self.current_learning_rate(),
        }
        for k in ("clipnorm", "clipvalue", "global_clipnorm"):
            if getattr(self, k) is not None:
                config[k] = getattr(self, k)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Optimizer:
        return cls(**config)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.get_config()})"


def _clip(grads: list[Tensor], hp: dict[str, Any]) -> list[Tensor]:
    if hp.get("clipvalue") is not None:
        c = float(hp["clipvalue"])
        return [ops.clip(g, -c, c) for g in grads]
    if hp.get("clipnorm") is not None:
        c = float(hp["clipnorm"])
        return [g * (c / ops.maximum(ops.sqrt(ops.sum(g * g)), c)) for g in grads]
    if hp.get("global_clipnorm") is not None and grads:
        c = float(hp["global_clipnorm"])
        sq = [ops.sum(g * g) for g in grads]
        total = sq[0]
        for s in sq[1:]:
            total = total + (s if s.dtype is total.dtype else ops.cast(s, total.dtype))
        scale = c / ops.maximum(ops.sqrt(total), c)
        return [g * (scale if scale.dtype is g.dtype else ops.cast(scale, g.dtype))
                for g in grads]
    return grads


@_REG.register("SGD")
class SGD(Optimizer):
    """Stochastic gradient descent with optional (Nesterov) momentum."""

    default_learning_rate = 0.01

    def __init__(self, learning_rate: Any = None, momentum: float = 0.0, nesterov: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        if not 0.0 <= float(momentum) <= 1.0:
            raise ValueError(f"momentum: must be in [0, 1], got {momentum}")
        self.momentum, self.nesterov = float(momentum), bool(nesterov)
        self.slot_names = ("momentum",) if self.momentum > 0 else ()

    def hyper(self):
        return (*super().hyper(), ("momentum", self.momentum), ("nesterov", self.nesterov))

    def update_one(self, p, g, slots, s, hp):
        lr = s["lr"]
        mu = hp["momentum"]
        if mu == 0.0:
            return p - lr * g, slots
        fused = _k.fused_update(_k.SGD_MOMENTUM, p, g, slots["momentum"], lr, momentum=mu,
                                nesterov=bool(hp["nesterov"]))
        if fused is not None:
            return fused[0], {"momentum": fused[1]}
        step = lr * g
        v = mu * slots["momentum"] - step
        if hp["nesterov"]:
            return p + (mu * v - step), {"momentum": v}
        return p + v, {"momentum": v}

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


@_REG.register("Adam")
class Adam(Optimizer):
    """Adam (Kingma & Ba), with the bias correction folded into the step size."""

    def __init__(self, learning_rate: Any = None, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, amsgrad: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)
        self.epsilon, self.amsgrad = float(epsilon), bool(amsgrad)
        self.slot_names = ("m", "v", "vhat") if self.amsgrad else ("m", "v")

    def hyper(self):
        return (*super().hyper(), ("beta_1", self.beta_1), ("beta_2", self.beta_2),
                ("epsilon", self.epsilon), ("amsgrad", self.amsgrad))

    def shared(self, lr, t, hp):
        alpha = lr * ops.sqrt(1.0 - ops.power(hp["beta_2"], t)) / (
            1.0 - ops.power(hp["beta_1"], t))
        return {"alpha": alpha}

    def update_one(self, p, g, slots, s, hp):
        if not hp["amsgrad"]:
            fused = _k.fused_update(_k.ADAM, p, g, slots["m"], slots["v"], s["alpha"],
                                    beta_1=hp["beta_1"], beta_2=hp["beta_2"],
                                    epsilon=hp["epsilon"])
            if fused is not None:
                return fused[0], {"m": fused[1], "v": fused[2]}
        m = slots["m"] + (g - slots["m"]) * (1.0 - hp["beta_1"])
        v = slots["v"] + (g * g - slots["v"]) * (1.0 - hp["beta_2"])
        out = {"m": m, "v": v}
        denom_v = v
        if hp["amsgrad"]:
            denom_v = out["vhat"] = ops.maximum(slots["vhat"], v)
        return p - s["alpha"] * m / (ops.sqrt(denom_v) + hp["epsilon"]), out

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon, "amsgrad": self.amsgrad}


@_REG.register("RMSprop")
class RMSprop(Optimizer):
    """RMSprop (Hinton), optionally centered and with momentum."""

    def __init__(self, learning_rate: Any = None, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.rho, self.momentum = float(rho), float(momentum)
        self.epsilon, self.centered = float(epsilon), bool(centered)
        names = ["velocity"]
        if self.centered:
            names.append("average_gradient")
        if self.momentum > 0:
            names.append("momentum")
        self.slot_names = tuple(names)

    def hyper(self):
        return (*super().hyper(), ("rho", self.rho), ("momentum", self.momentum),
                ("epsilon", self.epsilon), ("centered", self.centered))

    def update_one(self, p, g, slots, s, hp):
        rho = hp["rho"]
        if not hp["centered"] and hp["momentum"] == 0:
            fused = _k.fused_update(_k.RMSPROP, p, g, slots["velocity"], s["lr"], rho=rho,
                                    epsilon=hp["epsilon"])
            if fused is not None:
                return fused[0], {"velocity": fused[1]}
        vel = rho * slots["velocity"] + (1.0 - rho) * (g * g)
        out = {"velocity": vel}
        if hp["centered"]:
            avg = rho * slots["average_gradient"] + (1.0 - rho) * g
            out["average_gradient"] = avg
            denom = vel - avg * avg + hp["epsilon"]
        else:
            denom = vel + hp["epsilon"]
        inc = s["lr"] * g * ops.rsqrt(denom)
        if hp["momentum"] > 0:
            mom = hp["momentum"] * slots["momentum"] + inc
            out["momentum"] = mom
            return p - mom, out
        return p - inc, out

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum,
                "epsilon": self.epsilon, "centered": self.centered}


@_REG.register("Adagrad")
class Adagrad(Optimizer):
    """Adagrad: per-coordinate rates shrinking with the sum of squared gradients."""

    slot_names = ("accumulator",)

    def __init__(self, learning_rate: Any = None, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(learning_rate, **kwargs)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)

    def hyper(self):
        return (*super().hyper(), ("epsilon", self.epsilon))

    def init_slots(self, value):
        return {"accumulator": ops.full_like(value, self.initial_accumulator_value)}

    def update_one(self, p, g, slots, s, hp):
        acc = slots["accumulator"] + g * g
        return p - s["lr"] * g * ops.rsqrt(acc + hp["epsilon"]), {"accumulator": acc}

    def get_config(self):
        return {**super().get_config(),
                "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}


def get(identifier: Any) -> Optimizer:
    """An optimizer from a name (``"adam"``, ``"sgd"``, ``"rmsprop"``, ``"adagrad"``; default
    settings), a ``{"class_name", "config"}`` dict or an instance."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        return _REG.lookup(identifier)()
    if isinstance(identifier, dict):
        return _REG.from_config(identifier)
    raise TypeError(f"optimizer: cannot interpret {identifier!r}")


def serialize(opt: Optimizer) -> dict[str, Any]:
    return {"class_name": type(opt).__name__, "config": opt.get_config()}

