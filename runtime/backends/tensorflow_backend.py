"""The optional ``tensorflow`` backend: tensors are ``tf.Tensor``, kernels are TF ops.

    import tensorbridge as tb
    x = tb.tensor([[1.0, 2.0]], backend="tensorflow")        # or tb.set_backend("tensorflow")
    step = tb.function(tb.value_and_grad(loss))              # forward + backward: one graph

Eager tensors live wherever TensorFlow's default placement puts them (the first GPU when TF sees
one). ``compile`` traces a tensor function into a ``tf.function`` graph, once per input signature;
inside the trace the same ops, autodiff and kernels run on symbolic tensors, whose static shapes
play the part of the eager shapes. Kernels are in ``tensorflow_kernels.py``, ``tb.function`` in
``tensorflow_function.py``.

On a GPU, TensorFloat-32 matmuls are switched off when the backend loads, so float32 results
agree with NumPy to float32 precision; set ``TENSORBRIDGE_TF_ALLOW_TF32=1`` to keep TF's default.
``TENSORBRIDGE_TF_JIT=1`` compiles ``tb.function`` graphs with XLA (``jit_compile=True``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import tensorflow as tf

from ..dtypes import DType
from ..errors import TensorBridgeError
from ..host_arrays import HostList, dtype_from_numpy, numpy_dtypes
from ..tensor import Tensor
from .base import Backend, make_tensor
from .tensorflow_kernels import FROM_TF, NAME, TO_TF, constant

__all__ = ["SymbolicValueError", "TensorflowBackend"]

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

