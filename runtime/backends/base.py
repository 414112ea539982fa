"""What every backend provides: buffer ownership, memory accounting and host transfer.

A backend owns raw buffers (``numpy.ndarray``, ``tf.Tensor``, a TF.js tensor…) and hands out
``data_id`` numbers for them. Kernels live in the registry (``kernels.py``); this class holds the
few methods that are not kernels: wrapping a raw buffer as a Tensor, converting from and to host
values, and counting what is alive.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from .. import lifetime as _lifetime
from ..dtypes import DType
from ..kernels import registry
from ..tensor import ConcreteTensor, Tensor, next_tensor_id

__all__ = ["Backend", "make_tensor", "register_compiler"]

_new = object.__new__


def make_tensor(backend: Backend, raw: Any, shape: tuple[int, ...], dtype: DType,
                data_id: int) -> Tensor:
    """The Tensor object for a raw buffer: the one place tensors are made (``Backend.wrap`` and
    ``share`` call it; users call ``tensorbridge.tensor``). Open ``tidy`` scopes record it."""
    t = _new(ConcreteTensor)
    t.id = next_tensor_id()
    t._data = raw
    t.backend = backend
    t.data_id = data_id
    t.shape = shape
    t.dtype = dtype
    if _lifetime.open_scopes:
        _lifetime.record(t)
    return t


# backend name -> compiler(fn, backend), filled from above (``compile.py``): a backend does not
# import the staging or graph machinery that compiles for it
_COMPILERS: dict[str, Callable[[Callable[..., Any], Backend], Any]] = {}


def register_compiler(backend: str,
                      compiler: Callable[[Callable[..., Any], Backend], Any]) -> None:
    """Make ``compiler(fn, backend)`` what ``Backend.compile`` (``tb.function``) uses for
    ``backend``."""
    _COMPILERS[backend] = compiler


class Backend:
    """Base class of backends. Subclasses set ``name`` and implement the host-transfer hooks."""

    name: str = "abstract"

    def __init__(self) -> None:
        self.kernels = registry.kernels_for(self.name)
        self._next_data_id = itertools.count(1).__next__
        # data_id -> bytes, for every live buffer. Plain dict stores/pops are atomic under the
        # GIL, so tensors released from any thread (or a finalizer) need no lock on this path.
        self._live: dict[int, int] = {}
        # data_id -> number of tensors sharing the buffer, only for buffers shared by > 1.
        self._shared: dict[int, int] = {}
        self._share_lock = threading.RLock()

    def __repr__(self) -> str:
        return f"<backend {self.name}>"

    def __str__(self) -> str:
        return self.name

    # -- hooks a backend implements ---------------------------------------------------------
    def shape_of(self, raw: Any) -> tuple[int, ...]:
        raise NotImplementedError

    def dtype_of(self, raw: Any) -> DType:
        raise NotImplementedError

    def from_host(self, value: Any, dtype: DType | None = None, copy: bool = True) -> Tensor:
        """A tensor from a NumPy array or nested Python lists/scalars (already validated)."""
        raise NotImplementedError

    def to_numpy(self, raw: Any) -> Any:
        raise NotImplementedError

    def to_list(self, raw: Any) -> Any:
        raise NotImplementedError

    def to_host(self, raw: Any) -> Any:
        """NumPy where available (fast), else nested lists."""
        try:
            return self.to_numpy(raw)
        except ImportError:
            return self.to_list(raw)

    def is_symbolic(self, raw: Any) -> bool:
        """True for a placeholder inside a graph being traced (its values cannot be read)."""
        return False

    def compile(self, fn: Any) -> Any:
        """A compiled version of a tensor function: the registered compiler's (see
        ``register_compiler``), else the function itself."""
        compiler = _COMPILERS.get(self.name)
        return fn if compiler is None else compiler(fn, self)

    def scalar(self, value: Any, dtype: DType) -> Any:
        """A Python scalar as the kernels of this backend want it next to a ``dtype`` tensor."""
        return value

    # -- buffers and tensors ----------------------------------------------------------------
    def wrap(self, raw: Any) -> Tensor:
        """Make a Tensor that owns the new buffer ``raw``."""
        shape = self.shape_of(raw)
        dtype = self.dtype_of(raw)
        data_id = self._next_data_id()
        n = dtype.itemsize
        for d in shape:
            n *= d
        self._live[data_id] = n
        return make_tensor(self, raw, shape, dtype, data_id)

    def share(self, tensor: Tensor, raw: Any, shape: tuple[int, ...]) -> Tensor:
        """A new Tensor reading the same buffer as ``tensor`` (a view: reshape, identity)."""
        data_id = tensor.data_id
        with self._share_lock:
            if data_id not in self._live:
                return self.wrap(raw)
            self._shared[data_id] = self._shared.get(data_id, 1) + 1
        return make_tensor(self, raw, shape, tensor.dtype, data_id)

    def _release(self, data_id: int) -> None:
        shared = self._shared
        if data_id in shared:
            with self._share_lock:
                left = shared.get(data_id, 1) - 1
                if left > 1:
                    shared[data_id] = left
                    return
                shared.pop(data_id, None)
                if left == 1:
                    return
        self._live.pop(data_id, None)

    def memory(self) -> dict[str, Any]:
        live = dict(self._live)
        shared = dict(self._shared)
        return {
            "num_tensors": len(live) + sum(shared.values()) - len(shared),
            "num_data_buffers": len(live),
            "num_bytes": sum(live.values()),
        }
