"""``Layer``: the base class of every layer (and of models).

A layer owns :class:`~.variables.Variable` weights, creates them in ``build(input_shape)`` the
first time it is called (so shapes come from the data, never typed twice) and computes in
``call(inputs, training=False)`` with the runtime's ops. Calling a layer

* on concrete tensors (or arrays) computes eagerly and returns tensors;
* on :class:`~.symbolic.SymbolicTensor` inputs records a graph node and returns symbolic outputs
  whose shapes come from ``compute_output_shape`` (a shape mismatch is raised at that call,
  naming the layer and both shapes).

Layers that need random numbers when training (``Dropout``) declare their draws with
``random_shapes(input_shape)`` and take them with ``self.random_uniform(shape, dtype)``: when the
training loop has drawn them in advance (so the staged training step stays free of random
draws), they come from that feed, otherwise from the layer's own seeded generator.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from .. import dtypes as D
from .. import random as _random
from ..errors import ShapeError
from ..ops.creation import tensor, zeros
from ..tensor import Tensor
from . import initializers as _init
from .registry import Registry
from .symbolic import Node, SymbolicTensor, format_shape
from .variables import Variable

__all__ = ["LAYERS", "InputSpec", "Layer", "clear_session", "random_feed", "register_layer",
           "unique_name"]

LAYERS = Registry("layer class")


def register_layer(cls: type) -> type:
    """Make a layer class loadable from saved models by its class name (decorator)."""
    LAYERS.add(cls.__name__, cls)
    return cls


# -- names ---------------------------------------------------------------------------------------
_name_lock = threading.Lock()
_name_counts: dict[str, int] = {}


def _snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def unique_name(base: str) -> str:
    """``base``, then ``base_1``, ``base_2``… (per process, like Keras)."""
    with _name_lock:
        n = _name_counts.get(base, 0)
        _name_counts[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def clear_session() -> None:
    """Restart automatic layer names (``dense``, ``dense_1``…) from the beginning."""
    with _name_lock:
        _name_counts.clear()


# -- random numbers drawn ahead of a staged step -------------------------------------------------
_feed_local = threading.local()


@contextlib.contextmanager
def random_feed(feed: dict[Any, list[Tensor]]) -> Iterator[None]:
    """Within the block, ``layer.random_uniform`` takes tensors from ``feed[layer]`` in order."""
    previous = getattr(_feed_local, "feed", None)
    _feed_local.feed = {k: list(v) for k, v in feed.items()}
    try:
        yield
    finally:
        _feed_local.feed = previous


# -- input checks --------------------------------------------------------------------------------
class InputSpec:
    """What a built layer accepts: rank (exact or minimum) and fixed sizes of some axes."""

    __slots__ = ("axes", "max_ndim", "min_ndim", "ndim")

    def __init__(self, ndim: int | None = None, min_ndim: int | None = None,
                 max_ndim: int | None = None, axes: dict[int, int] | None = None) -> None:
        self.ndim, self.min_ndim, self.max_ndim = ndim, min_ndim, max_ndim
        self.axes = dict(axes or {})

    def check(self, layer: Layer, shape: tuple[int | None, ...]) -> None:
        rank = len(shape)
        where = f"layer {layer.name!r} ({type(layer).__name__})"
        if self.ndim is not None and rank != self.ndim:
            raise ShapeError(f"{where} expects inputs of rank {self.ndim}, got shape "
                             f"{format_shape(shape)}")
        if self.min_ndim is not None and rank < self.min_ndim:
            raise ShapeError(f"{where} expects inputs of rank >= {self.min_ndim}, got shape "
                             f"{format_shape(shape)}")
        if self.max_ndim is not None and rank > self.max_ndim:
            raise ShapeError(f"{where} expects inputs of rank <= {self.max_ndim}, got shape "
                             f"{format_shape(shape)}")
        for axis, size in self.axes.items():
            d = shape[axis] if -rank <= axis < rank else None
            if d is not None and d != size:
                want = list(shape)
                want[axis] = size
                raise ShapeError(
                    f"{where} was built for inputs of shape {format_shape(tuple(want))} but got "
                    f"{format_shape(shape)} (axis {axis}: {d} != {size})"
                )


def _accepts(fn: Any, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _as_shape(shape: Any) -> tuple[int | None, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(None if d is None else int(d) for d in shape)


class Layer:
    """Base class of layers. Subclasses override ``build``, ``call`` and, for speed and better
    error messages, ``compute_output_shape``; ``get_config`` makes them savable.

    Keyword arguments common to all layers: ``name``, ``trainable``, ``dtype`` (of the weights
    and outputs; ``None``: the input's floating dtype, else float32), and for the first layer of
    a ``Sequential`` model ``input_shape`` (without the batch dimension) or ``batch_input_shape``.
    """

    _call_takes_training: bool | None = None
    # a Model (a layer holding layers): serialization names its weights under its name and
    # rebuilds it from its own config
    _is_model = False

    def __init__(self, *, name: str | None = None, trainable: bool = True, dtype: Any = None,
                 input_shape: Any = None, batch_input_shape: Any = None,
                 input_dim: int | None = None, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected argument(s) "
                            f"{', '.join(sorted(kwargs))}")
        self.name = name if name is not None else unique_name(_snake(type(self).__name__))
        self.trainable = bool(trainable)
        self.dtype: D.DType | None = D.as_dtype(dtype) if dtype is not None else None
        if input_dim is not None and input_shape is None:
            input_shape = (int(input_dim),)
        if batch_input_shape is not None:
            self.batch_input_shape: tuple[int | None, ...] | None = _as_shape(batch_input_shape)
        elif input_shape is not None:
            self.batch_input_shape = (None, *_as_shape(input_shape))
        else:
            self.batch_input_shape = None
        self.built = False
        self.input_spec: InputSpec | None = None
        self._weights: list[Variable] = []
        self._inbound_nodes: list[Node] = []
        self._seed: int | None = None
        self._generator: _random.Generator | None = None
        cls = type(self)
        if cls._call_takes_training is None:
            cls._call_takes_training = _accepts(cls.call, "training")

    # -- weights ------------------------------------------------------------------------------
    def add_weight(self, name: str, shape: Sequence[int], initializer: Any = "glorot_uniform",
                   dtype: Any = None, trainable: bool = True, backend: Any = None) -> Variable:
        """Create a weight (call from ``build``). Its full name is ``"<layer>/<name>"``."""
        dt = D.as_dtype(dtype) if dtype is not None else (self.dtype or D.float32)
        value = _init.get(initializer)(tuple(int(d) for d in shape), dt, backend)
        if value.dtype is not dt:
            value = value.astype(dt)
        var = Variable(value, f"{self.name}/{name}", trainable=trainable)
        self._weights.append(var)
        return var

    @property
    def weights(self) -> list[Variable]:
        return list(self._weights)

    @property
    def trainable_weights(self) -> list[Variable]:
        return [w for w in self._weights if w.trainable and self.trainable]

    @property
    def non_trainable_weights(self) -> list[Variable]:
        return [w for w in self._weights if not (w.trainable and self.trainable)]

    def count_params(self) -> int:
        return sum(w.size for w in self.weights)

    def get_weights(self) -> list[Any]:
        """The weights as NumPy arrays (in ``weights`` order)."""
        return [w.numpy() for w in self.weights]

    def set_weights(self, values: Sequence[Any]) -> None:
        ws = self.weights
        if len(values) != len(ws):
            raise ValueError(f"layer {self.name!r} has {len(ws)} weight(s), got {len(values)}")
        for w, v in zip(ws, values):
            w.assign(v)

    # -- building and calling -----------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        """Create the weights for inputs of ``input_shape`` (batch dimension may be None)."""
        self.built = True

    def call(self, inputs: Any, training: bool = False) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement call()")

    def compute_output_shape(self, input_shape: Any) -> Any:
        """Output shape(s) for ``input_shape``; the default runs ``call`` on zeros."""
        return _probe_output(self, input_shape)[0]

    def compute_output_dtype(self, input_dtype: Any) -> Any:
        """The output dtype; by default the layer's dtype."""
        return self.dtype or D.float32

    def random_shapes(self, input_shape: Any) -> list[tuple[int, ...]]:
        """The shapes of the uniform [0, 1) draws ``call(training=True)`` makes for a concrete
        ``input_shape`` (in the order it makes them). Layers without randomness return []."""
        return []

    def random_uniform(self, shape: tuple[int, ...], dtype: Any = "float32",
                       backend: Any = None) -> Tensor:
        """Uniform [0, 1) numbers: from the active random feed, else the layer's generator."""
        feed = getattr(_feed_local, "feed", None)
        if feed is not None and self in feed and feed[self]:
            t = feed[self].pop(0)
            if tuple(t.shape) != tuple(shape):
                raise ShapeError(f"layer {self.name!r}: random feed has shape {t.shape}, "
                                 f"needed {tuple(shape)}")
            return t
        return self.generator.uniform(tuple(shape), dtype=dtype, backend=backend)

    @property
    def generator(self) -> _random.Generator:
        """This layer's random stream (seeded from ``seed`` or the default generator)."""
        if self._generator is None:
            seed = self._seed
            if seed is None:
                seed = int(_random.default_generator().integers(0, 2**31 - 1).item())
            self._generator = _random.Generator(seed)
        return self._generator

    def _resolve_dtype(self, input_dtype: Any) -> None:
        if self.dtype is None:
            dt = input_dtype[0] if isinstance(input_dtype, list) else input_dtype
            self.dtype = dt if isinstance(dt, D.DType) and dt.kind == "f" else D.float32

    def _maybe_build(self, shape: Any, dtype: Any) -> None:
        if not self.built:
            self._resolve_dtype(dtype)
            self.build(shape)
            self.built = True
        if self.input_spec is not None:
            for s in shape if isinstance(shape, list) else [shape]:
                self.input_spec.check(self, s)

    def __call__(self, inputs: Any, training: bool | None = None, **kwargs: Any) -> Any:
        is_list = isinstance(inputs, list | tuple)
        flat = list(inputs) if is_list else [inputs]
        if any(isinstance(x, SymbolicTensor) for x in flat):
            if not all(isinstance(x, SymbolicTensor) for x in flat):
                raise TypeError(f"layer {self.name!r}: cannot mix symbolic and concrete inputs")
            return self._call_symbolic(flat, is_list, kwargs)
        tensors = [self._convert_input(x) for x in flat]
        shape = [t.shape for t in tensors] if is_list else tensors[0].shape
        dtype = [t.dtype for t in tensors] if is_list else tensors[0].dtype
        self._maybe_build(shape, dtype)
        return self._invoke(tensors if is_list else tensors[0], bool(training), kwargs)

    def _invoke(self, inputs: Any, training: bool, kwargs: dict[str, Any]) -> Any:
        if self._call_takes_training:
            return self.call(inputs, training=training, **kwargs)
        return self.call(inputs, **kwargs)

    def _convert_input(self, x: Any) -> Tensor:
        if isinstance(x, Tensor):
            t = x
        else:
            backend = self._weights[0].backend if self._weights else None
            t = tensor(x, backend=backend)
        if self.dtype is not None and t.dtype.kind == "f" and t.dtype is not self.dtype:
            t = t.astype(self.dtype)  # autocast floating inputs to the layer's dtype
        return t

    def _call_symbolic(self, inputs: list[SymbolicTensor], is_list: bool,
                       kwargs: dict[str, Any]) -> Any:
        shape = [t.shape for t in inputs] if is_list else inputs[0].shape
        dtype = [t.dtype for t in inputs] if is_list else inputs[0].dtype
        self._maybe_build(shape, dtype)
        out_shape = self.compute_output_shape(shape)
        out_dtype = self.compute_output_dtype(dtype)
        node = Node(self, list(inputs), is_list, dict(kwargs))
        multi = isinstance(out_shape, list)
        shapes = out_shape if multi else [out_shape]
        dtypes = out_dtype if isinstance(out_dtype, list) else [out_dtype] * len(shapes)
        outs = []
        for i, (s, dt) in enumerate(zip(shapes, dtypes)):
            suffix = f"_{node.index}" if node.index else ""
            label = f"{self.name}{suffix}" + (f"[{i}]" if multi else "")
            outs.append(SymbolicTensor(tuple(s), dt, label, node, i))
        node.outputs = outs
        node.output_is_list = multi
        return outs if multi else outs[0]

    # -- graph information --------------------------------------------------------------------
    @property
    def output(self) -> Any:
        """The symbolic output of this layer's first call."""
        if not self._inbound_nodes:
            raise AttributeError(f"layer {self.name!r} has not been called on a symbolic input")
        node = self._inbound_nodes[0]
        return node.outputs if node.output_is_list else node.outputs[0]

    @property
    def output_shape(self) -> Any:
        out = self.output
        return [t.shape for t in out] if isinstance(out, list) else out.shape

    @property
    def input(self) -> Any:
        if not self._inbound_nodes:
            raise AttributeError(f"layer {self.name!r} has not been called on a symbolic input")
        node = self._inbound_nodes[0]
        return node.inputs if node.input_is_list else node.inputs[0]

    # -- serialization ------------------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        """The constructor arguments that recreate this layer (JSON-compatible)."""
        config: dict[str, Any] = {"name": self.name, "trainable": self.trainable,
                                  "dtype": self.dtype.name if self.dtype else None}
        if self.batch_input_shape is not None:
            config["batch_input_shape"] = list(self.batch_input_shape)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r} built={self.built}>"


def _probe_output(layer: Layer, input_shape: Any) -> tuple[Any, Any]:
    """Run ``layer.call`` on zeros with unknown dimensions set to 1; shapes get their None back."""
    is_list = isinstance(input_shape, list)
    shapes = input_shape if is_list else [input_shape]
    dtype = layer.dtype or D.float32
    probes = [zeros(tuple(1 if d is None else d for d in s), dtype) for s in shapes]
    out = layer._invoke(probes if is_list else probes[0], False, {})
    outs = out if isinstance(out, list | tuple) else [out]
    unknown_batch = all(s and s[0] is None for s in shapes)
    res = []
    for o in outs:
        s = tuple(o.shape)
        res.append((None, *s[1:]) if unknown_batch and s else s)
    if isinstance(out, list | tuple):
        return res, [o.dtype for o in outs]
    return res[0], outs[0].dtype
