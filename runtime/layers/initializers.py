"""Weight initializers (Keras / TensorFlow.js names and defaults).

An initializer is called as ``init(shape, dtype, backend)`` and returns a tensor. Random ones
draw from a :class:`tensorbridge.random.Generator`:

* ``seed=<int>``: the initializer owns ``Generator(seed)``; successive calls continue its stream,
  so two layers sharing one seeded initializer get different (but reproducible) weights;
* ``seed=None``: draws from the runtime's default generator, so ``tb.random.seed(n)`` before
  building a model makes every unseeded initializer reproducible.

Because the generator is Philox, the same seed gives the same weights on every backend and in
every front door.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as D
from .. import random as _random
from ..ops.creation import full, tensor
from ..tensor import Tensor
from .registry import Registry

__all__ = [
    "Constant",
    "GlorotNormal",
    "GlorotUniform",
    "HeNormal",
    "HeUniform",
    "Initializer",
    "LecunNormal",
    "LecunUniform",
    "Ones",
    "RandomNormal",
    "RandomUniform",
    "TruncatedNormal",
    "VarianceScaling",
    "Zeros",
    "compute_fans",
    "get",
    "serialize",
]

_REG = Registry("initializer")


class Initializer:
    """Base class: subclasses implement ``__call__(shape, dtype, backend)``."""

    def __call__(self, shape: tuple[int, ...], dtype: Any = "float32",
                 backend: Any = None) -> Tensor:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Initializer:
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


class _Seeded(Initializer):
    def __init__(self, seed: int | None = None) -> None:
        if seed is not None and (not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed: expected a non-negative int or None, got {seed!r}")
        self.seed = seed
        self._gen = _random.Generator(seed) if seed is not None else None

    @property
    def generator(self) -> _random.Generator:
        return self._gen if self._gen is not None else _random.default_generator()


@_REG.register("zeros", "Zeros")
class Zeros(Initializer):
    def __call__(self, shape, dtype="float32", backend=None):
        return full(tuple(shape), 0, D.as_dtype(dtype), backend)


@_REG.register("ones", "Ones")
class Ones(Initializer):
    def __call__(self, shape, dtype="float32", backend=None):
        return full(tuple(shape), 1, D.as_dtype(dtype), backend)


@_REG.register("constant", "Constant")
class Constant(Initializer):
    def __init__(self, value: float = 0.0) -> None:
        self.value = float(value)

    def __call__(self, shape, dtype="float32", backend=None):
        return full(tuple(shape), self.value, D.as_dtype(dtype), backend)

    def get_config(self):
        return {"value": self.value}


@_REG.register("random_normal", "RandomNormal", "normal")
class RandomNormal(_Seeded):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None) -> None:
        super().__init__(seed)
        self.mean, self.stddev = float(mean), float(stddev)

    def __call__(self, shape, dtype="float32", backend=None):
        return self.generator.normal(tuple(shape), self.mean, self.stddev, dtype, backend)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


@_REG.register("random_uniform", "RandomUniform", "uniform")
class RandomUniform(_Seeded):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05,
                 seed: int | None = None) -> None:
        super().__init__(seed)
        self.minval, self.maxval = float(minval), float(maxval)

    def __call__(self, shape, dtype="float32", backend=None):
        return self.generator.uniform(tuple(shape), self.minval, self.maxval, dtype, backend)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


@_REG.register("truncated_normal", "TruncatedNormal")
class TruncatedNormal(_Seeded):
    """Normal(mean, stddev) with values beyond two standard deviations redrawn."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None) -> None:
        super().__init__(seed)
        self.mean, self.stddev = float(mean), float(stddev)

    def __call__(self, shape, dtype="float32", backend=None):
        return self.generator.truncated_normal(tuple(shape), self.mean, self.stddev, -2.0, 2.0,
                                               dtype, backend)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


def compute_fans(shape: tuple[int, ...]) -> tuple[float, float]:
    """(fan_in, fan_out) as Keras computes them: a kernel ``(..., in, out)`` has fans
    ``in * receptive_field`` and ``out * receptive_field``."""
    shape = tuple(shape)
    if len(shape) == 0:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = 1
    for d in shape[:-2]:
        receptive *= d
    return float(shape[-2] * receptive), float(shape[-1] * receptive)


# the standard deviation of a unit normal truncated to [-2, 2]
_TRUNC_STD = 0.87962566103423978


@_REG.register("variance_scaling", "VarianceScaling")
class VarianceScaling(_Seeded):
    """Scale-aware random weights: variance ``scale / n`` where ``n`` is the fan-in, fan-out or
    their average (``mode``), drawn from a truncated normal, a normal or a uniform."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in",
                 distribution: str = "truncated_normal", seed: int | None = None) -> None:
        super().__init__(seed)
        if scale <= 0:
            raise ValueError(f"scale: must be positive, got {scale}")
        mode = mode.replace("fanIn", "fan_in").replace("fanOut", "fan_out").replace(
            "fanAvg", "fan_avg")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"mode: expected fan_in, fan_out or fan_avg, got {mode!r}")
        dist = {"normal": "truncated_normal", "truncatednormal": "truncated_normal",
                "untruncatednormal": "untruncated_normal"}.get(
                    distribution.replace("_", "").lower(), distribution)
        if dist not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(
                f"distribution: expected truncated_normal, untruncated_normal or uniform, got "
                f"{distribution!r}"
            )
        self.scale, self.mode, self.distribution = float(scale), mode, dist

    def __call__(self, shape, dtype="float32", backend=None):
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[
            self.mode]
        var = self.scale / max(1.0, n)
        g = self.generator
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * var)
            return g.uniform(tuple(shape), -limit, limit, dtype, backend)
        if self.distribution == "truncated_normal":
            return g.truncated_normal(tuple(shape), 0.0, math.sqrt(var) / _TRUNC_STD, -2.0, 2.0,
                                      dtype, backend)
        return g.normal(tuple(shape), 0.0, math.sqrt(var), dtype, backend)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed}


class _Preset(VarianceScaling):
    """A VarianceScaling with fixed settings; only the seed is configurable."""

    preset: tuple[float, str, str] = (1.0, "fan_in", "truncated_normal")

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(*self.preset, seed=seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self.seed}


@_REG.register("glorot_uniform", "GlorotUniform", "xavier_uniform")
class GlorotUniform(_Preset):
    """Uniform in ``[-limit, limit]``, ``limit = sqrt(6 / (fan_in + fan_out))``."""

    preset = (1.0, "fan_avg", "uniform")


@_REG.register("glorot_normal", "GlorotNormal", "xavier_normal")
class GlorotNormal(_Preset):
    """Truncated normal with ``stddev = sqrt(2 / (fan_in + fan_out))``."""

    preset = (1.0, "fan_avg", "truncated_normal")


@_REG.register("he_normal", "HeNormal")
class HeNormal(_Preset):
    """Truncated normal with ``stddev = sqrt(2 / fan_in)``."""

    preset = (2.0, "fan_in", "truncated_normal")


@_REG.register("he_uniform", "HeUniform")
class HeUniform(_Preset):
    """Uniform in ``[-limit, limit]``, ``limit = sqrt(6 / fan_in)``."""

    preset = (2.0, "fan_in", "uniform")


@_REG.register("lecun_normal", "LecunNormal")
class LecunNormal(_Preset):
    """Truncated normal with ``stddev = sqrt(1 / fan_in)``."""

    preset = (1.0, "fan_in", "truncated_normal")


@_REG.register("lecun_uniform", "LecunUniform")
class LecunUniform(_Preset):
    """Uniform in ``[-limit, limit]``, ``limit = sqrt(3 / fan_in)``."""

    preset = (1.0, "fan_in", "uniform")


def get(identifier: Any) -> Initializer:
    """An initializer from a name (any spelling), a ``{"class_name", "config"}`` dict, an
    instance, or a plain callable ``(shape, dtype, backend) -> Tensor``."""
    if isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str):
        return _REG.lookup(identifier)()
    if isinstance(identifier, dict):
        return _REG.from_config(identifier)
    if callable(identifier):
        return _CallableInitializer(identifier)
    raise TypeError(f"initializer: cannot interpret {identifier!r}")


class _CallableInitializer(Initializer):
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __call__(self, shape, dtype="float32", backend=None):
        out = self.fn(tuple(shape), D.as_dtype(dtype), backend)
        if not isinstance(out, Tensor):
            out = tensor(out, dtype=dtype, backend=backend)
        return out

    def get_config(self):
        raise TypeError("a plain-function initializer cannot be serialized; use a named one")


def serialize(init: Initializer) -> dict[str, Any]:
    return {"class_name": type(init).__name__, "config": init.get_config()}
