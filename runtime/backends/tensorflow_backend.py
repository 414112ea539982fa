"""The optional ``tensorflow`` backend: tensors are ``tf.Tensor``, kernels are TF ops.

    import tensorbridge as tb
    x = tb.tensor([[1.0, 2.0]], backend="tensorflow")        # or tb.set_backend("tensorflow")
    step = tb.function(tb.value_and_grad(loss))              # forward + backward: one graph

Eager tensors live wherever TensorFlow's default placement puts them (the first GPU when TF sees
one). ``compile`` traces a tensor function into a ``tf.function`` graph, once per input signature;
inside the trace the same ops, autodiff and kernels run on symbolic tensors, whose static shapes
play the part of the eager shapes. Kernels are in ``tensorflow_kernels.py``.

On a GPU, TensorFloat-32 matmuls are switched off when the backend loads, so float32 results
agree with NumPy to float32 precision; set ``TENSORBRIDGE_TF_ALLOW_TF32=1`` to keep TF's default.
``TENSORBRIDGE_TF_JIT=1`` compiles ``tb.function`` graphs with XLA (``jit_compile=True``).
"""

from __future__ import annotations

import functools
import os
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from .. import staging as _staging
from ..autodiff.core import Tracer
from ..dtypes import DType
from ..errors import BackendMismatchError, TensorBridgeError
from ..host_arrays import HostList, dtype_from_numpy, numpy_dtypes
from ..pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor
from .base import Backend, make_tensor
from .tensorflow_kernels import FROM_TF, NAME, TO_TF, constant

__all__ = ["CompiledFunction", "SymbolicValueError", "TensorflowBackend"]

_EagerTensor = type(tf.constant(0))
TO_NUMPY = numpy_dtypes()[0]


class SymbolicValueError(TensorBridgeError, TypeError):
    """The values of a tensor were asked for while ``tb.function`` traces it into a graph."""


class TensorflowBackend(Backend):
    name = NAME

    def __init__(self) -> None:
        super().__init__()
        self.gpus = tf.config.list_physical_devices("GPU")
        if self.gpus and os.environ.get("TENSORBRIDGE_TF_ALLOW_TF32") != "1":
            tf.config.experimental.enable_tensor_float_32_execution(False)

    # -- raw tensors ------------------------------------------------------------------------
    def shape_of(self, raw: Any) -> tuple[int, ...]:
        shape = tuple(raw.shape.as_list()) if raw.shape.rank is not None else None
        if shape is None or None in shape:
            raise TypeError(
                f"tensorflow backend: a tensor of unknown static shape {raw.shape} reached the "
                f"runtime; every tensor must have a fully known shape (inside tb.function too)"
            )
        return shape

    def dtype_of(self, raw: Any) -> DType:
        found = FROM_TF.get(raw.dtype)
        if found is None:
            raise TypeError(
                f"tensorflow backend: dtype {raw.dtype.name} is not supported; expected one of "
                f"{', '.join(sorted(d.name for d in TO_TF))}"
            )
        return found

    def is_symbolic(self, raw: Any) -> bool:
        """True for the graph tensors seen while ``tb.function`` traces (values unknown)."""
        return raw.__class__ is not _EagerTensor

    def wrap(self, raw: Any) -> Tensor:
        # The hot path of every op: no TensorShape objects, one dict lookup for the dtype.
        try:
            shape = raw._shape_tuple()
            dtype = FROM_TF[raw.dtype]
            n = dtype.itemsize
            for d in shape:
                n *= d
        except (AttributeError, KeyError, TypeError):
            return self._wrap_checked(raw)
        return self._make(raw, shape, dtype, n)

    def _wrap_checked(self, raw: Any) -> Tensor:
        if not isinstance(raw, tf.Tensor):
            raise TypeError(
                f"tensorflow backend: a kernel returned {type(raw).__name__}, not a tf.Tensor"
            )
        shape, dtype = self.shape_of(raw), self.dtype_of(raw)
        n = dtype.itemsize
        for d in shape:
            n *= d
        return self._make(raw, shape, dtype, n)

    def _make(self, raw: Any, shape: tuple[int, ...], dtype: DType, nbytes: int) -> Tensor:
        data_id = self._next_data_id()
        self._live[data_id] = nbytes
        return make_tensor(self, raw, shape, dtype, data_id)

    # -- host transfer ----------------------------------------------------------------------
    def from_host(self, value: Any, dtype: DType | None = None, copy: bool = True) -> Tensor:
        # tf.constant always copies into a buffer TensorFlow owns, so `copy` needs no handling.
        if isinstance(value, HostList):
            dt = dtype or value.dtype
            arr = np.asarray(value.values, dtype=TO_NUMPY[dt]).reshape(value.shape)
        else:
            arr = np.asarray(value)
            if dtype is not None:
                npd = TO_NUMPY[dtype]
                if arr.dtype != npd:
                    arr = arr.astype(npd)
            else:
                dtype_from_numpy(arr.dtype)  # rejects float16, unsigned, object…
        raw = tf.constant(arr)
        if self.gpus:
            raw = tf.identity(raw)  # an op, so default placement puts the buffer on the GPU
        return self.wrap(raw)

    def to_numpy(self, raw: Any) -> Any:
        if raw.__class__ is _EagerTensor:
            arr = raw.numpy()
        else:
            arr = tf.get_static_value(raw)  # a traced tensor: only constants have values
            if arr is None:
                raise SymbolicValueError(
                    "tensorflow backend: this tensor is being traced by tb.function, so its "
                    "values are not known yet (.numpy(), .item(), .tolist(), bool(x), float(x) "
                    "and indexing with a tensor need values). Compute with tensor ops, or call "
                    "the function without tb.function."
                )
        arr = np.asarray(arr)
        if arr.flags.writeable:
            arr.flags.writeable = False  # tensors are immutable; copy() to get a writable array
        return arr

    def to_list(self, raw: Any) -> Any:
        return self.to_numpy(raw).tolist()

    def scalar(self, value: Any, dtype: DType) -> Any:
        return constant(value, dtype)

    # -- compilation ------------------------------------------------------------------------
    def compile(self, fn: Any) -> Any:
        return CompiledFunction(self, fn, jit_compile=os.environ.get("TENSORBRIDGE_TF_JIT") == "1")


# ------------------------------------------------------------------------------------------------
# tb.function on TensorFlow
# ------------------------------------------------------------------------------------------------
_TENSOR = object()  # marks tensor positions in argument and result templates
_EAGER = "eager"  # a signature whose trace read a tensor value: runs op by op


def _static_key(value: Any) -> Any:
    """A hashable key for an argument leaf that is not a tensor (it is baked into the trace)."""
    if isinstance(value, float):
        return (float, repr(value))  # tells 0.0 from -0.0, and nan from nan
    if isinstance(value, np.ndarray):
        return (np.ndarray, value.dtype.str, value.shape, value.tobytes())
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"tb.function: argument of type {type(value).__name__} is neither a tensor nor a "
            f"hashable Python value; pass tensors (traced as graph inputs) or constants"
        ) from None
    return (type(value), value)


class _TraceMonitor:
    """Stands in ``autodiff.core.recorder`` while a graph is traced, with the protocol of
    ``staging.Recorder``: primitives run as usual, and ``staging.note_concretization`` (a read of
    a tensor value, a random draw) leaves its reason here."""

    __slots__ = ("reason", "thread")

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.reason: str | None = None

    def call(self, prim: Any, args: Any, params: dict[str, Any]) -> Any:
        return prim.impl(*args, **params)


class CompiledFunction:
    """``fn`` traced into a ``tf.function`` graph once per input signature, then run as one
    graph call.

    The signature is the argument structure (nested tuples/lists/dicts), each tensor's shape and
    dtype, and the value of every argument that is not a tensor (Python numbers, strings…: those
    are constants of the trace, and a new value traces again).

    As with staging on NumPy, a trace that reads a tensor value (``float(x)``, ``.numpy()``,
    ``if x > 0:``, a data-dependent index, a random draw) is dropped: that signature then runs op
    by op, with a ``RuntimeWarning`` — never a silently frozen value. Called with autodiff tracers
    (``tb.grad(tb.function(f))``), ``fn`` also runs op by op, so the transformation sees every op.
    """

    def __init__(self, backend: TensorflowBackend, fn: Callable[..., Any],
                 jit_compile: bool = False) -> None:
        self.backend = backend
        self.fn = fn
        self.jit_compile = jit_compile
        self._traces: dict[Any, Any] = {}
        self._lock = threading.RLock()
        functools.update_wrapper(self, fn)

    @property
    def num_traces(self) -> int:
        """How many input signatures were traced into graphs."""
        return sum(1 for v in self._traces.values() if v is not _EAGER)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        be = self.backend
        leaves, treedef = tree_flatten((args, kwargs))
        raws = []
        key: list[Any] = [treedef]
        for leaf in leaves:
            if isinstance(leaf, Tensor):
                if isinstance(leaf, Tracer):
                    return self.fn(*args, **kwargs)
                if leaf.backend is not be:
                    raise BackendMismatchError(
                        f"tb.function: an argument is on backend '{leaf.backend.name}' but the "
                        f"function is compiled for '{be.name}'; move it with .to('{be.name}')"
                    )
                raws.append(leaf._raw_unchecked())
                key.append((_TENSOR, leaf.shape, leaf.dtype.name))
            else:
                key.append(_static_key(leaf))
        k = tuple(key)
        trace = self._traces.get(k)
        if trace is None:
            with self._lock:
                trace = self._traces.get(k)
                if trace is None:
                    trace = self._traces[k] = self._trace(leaves, treedef)
        if trace is _EAGER:
            return self.fn(*args, **kwargs)
        concrete, out_def, out_template = trace
        outs = iter(concrete(*raws))
        wrap = be.wrap
        return tree_unflatten(out_def, [wrap(next(outs)) if o is _TENSOR else o
                                        for o in out_template])

    def _trace(self, leaves: list[Any], treedef: Any) -> Any:
        be = self.backend
        fn = self.fn
        name = getattr(fn, "__name__", "fn")
        template = [_TENSOR if isinstance(x, Tensor) else x for x in leaves]
        specs = [tf.TensorSpec(x.shape, TO_TF[x.dtype]) for x in leaves if isinstance(x, Tensor)]
        result: dict[str, Any] = {}

        def graph_fn(*raw_in: Any) -> list[Any]:
            it = iter(raw_in)
            filled = [be.wrap(next(it)) if x is _TENSOR else x for x in template]
            args, kwargs = tree_unflatten(treedef, filled)
            out = fn(*args, **kwargs)
            out_leaves, out_def = tree_flatten(out)
            raw_out, out_template = [], []
            for o in out_leaves:
                if isinstance(o, Tensor):
                    if isinstance(o, Tracer) or o.backend is not be:
                        raise TypeError(
                            f"tb.function: {name} returned a tensor that is not a plain "
                            f"'{be.name}' tensor ({type(o).__name__} on '{o.backend.name}')"
                        )
                    raw_out.append(o._raw_unchecked())
                    out_template.append(_TENSOR)
                else:
                    out_template.append(o)
            result["out"] = (out_def, out_template)
            return raw_out

        graph_fn.__name__ = "".join(c if c.isalnum() else "_" for c in name)
        tf_fn = tf.function(graph_fn, input_signature=specs, autograph=False,
                            jit_compile=self.jit_compile or None)
        monitor = _TraceMonitor()
        try:
            with _staging.recording(monitor):
                concrete = tf_fn.get_concrete_function()
        except SymbolicValueError as e:
            monitor.reason = monitor.reason or str(e)
        if monitor.reason is not None:
            warnings.warn(
                f"tensorbridge.function({name}): runs eagerly for this input signature because "
                f"it reads a tensor value while tracing ({monitor.reason}); a TensorFlow graph "
                f"needs control flow that does not depend on tensor values",
                RuntimeWarning,
                stacklevel=4,
            )
            return _EAGER
        out_def, out_template = result["out"]
        return concrete, out_def, out_template
