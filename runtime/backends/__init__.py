"""The backend table: name -> how to construct it. Backends load lazily on first use, so
``import tensorbridge`` works where NumPy or TensorFlow is absent (e.g. Pyodide without NumPy).

    >>> tb.list_backends()          # {'numpy': 'loaded', 'tensorflow': 'available', ...}
    >>> tb.set_backend("tensorflow")
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..kernels import KernelTable, registry
from .base import Backend, register_compiler

__all__ = [
    "Backend",
    "get_backend",
    "kernel_table",
    "list_backends",
    "load_all",
    "loaded_backends",
    "memory",
    "register_backend",
    "register_compiler",
    "set_backend",
    "use_backend",
]

# name -> "module:Class" (imported on first use) or a factory callable
_FACTORIES: dict[str, str | Callable[[], Backend]] = {
    "numpy": "tensorbridge.runtime.backends.numpy_backend:NumpyBackend",
    "tensorflow": "tensorbridge.runtime.backends.tensorflow_backend:TensorflowBackend",
    "python": "tensorbridge.runtime.backends.python_backend:PythonBackend",
}
_LOADED: dict[str, Backend] = {}
_lock = threading.RLock()
_default = os.environ.get("TENSORBRIDGE_BACKEND", "numpy")


def register_backend(name: str, factory: str | Callable[[], Backend]) -> None:
    """Make a backend available under ``name`` (a factory or ``"module:Class"``)."""
    with _lock:
        _FACTORIES[name] = factory
        _LOADED.pop(name, None)


def get_backend(backend: Any = None) -> Backend:
    """The backend object for a name (``None``: the default backend)."""
    if isinstance(backend, Backend):
        return backend
    name = _default if backend is None else backend
    found = _LOADED.get(name)
    if found is not None:
        return found
    if not isinstance(name, str):
        raise TypeError(f"backend: expected a backend name such as 'numpy', got {name!r}")
    with _lock:
        if name in _LOADED:
            return _LOADED[name]
        factory = _FACTORIES.get(name)
        if factory is None:
            raise ValueError(
                f"backend: unknown backend {name!r}; registered: {', '.join(sorted(_FACTORIES))}"
            )
        if isinstance(factory, str):
            module, _, cls = factory.partition(":")
            try:
                factory = getattr(importlib.import_module(module), cls)
            except ImportError as e:
                raise ImportError(
                    f"backend {name!r} is not available: {e}. "
                    + _INSTALL_HINTS.get(name, "")
                ) from e
        inst = factory()
        _LOADED[name] = inst
        return inst


_INSTALL_HINTS = {
    "numpy": "Install it with: pip install numpy",
    "tensorflow": "Install it with: pip install 'tensorbridge[tensorflow]'",
}


def set_backend(name: str) -> Backend:
    """Set the default backend for new tensors; returns it."""
    global _default
    be = get_backend(name)
    _default = be.name
    return be


@contextlib.contextmanager
def use_backend(name: str) -> Iterator[Backend]:
    """Temporarily make ``name`` the default backend."""
    global _default
    previous = _default
    be = set_backend(name)
    try:
        yield be
    finally:
        _default = previous


def default_backend_name() -> str:
    return _default


def loaded_backends() -> list[Backend]:
    return list(_LOADED.values())


def load_all() -> list[str]:
    """Load every registered backend that can be imported; returns the names loaded."""
    for name in list(_FACTORIES):
        with contextlib.suppress(ImportError):
            get_backend(name)
    return sorted(_LOADED)


def list_backends() -> dict[str, str]:
    """Each registered backend with its state: 'loaded' or 'registered'."""
    return {n: ("loaded" if n in _LOADED else "registered") for n in sorted(_FACTORIES)}


def kernel_table() -> KernelTable:
    """Which backend implements which kernel (loads the backends that are importable)."""
    load_all()
    return registry.table()


def memory(backend: Any = None) -> dict[str, Any]:
    """Live tensors and bytes. ``memory()`` totals every loaded backend and lists each under
    ``"backends"``; ``memory("numpy")`` gives one backend's counts."""
    if backend is not None:
        return get_backend(backend).memory()
    per = {b.name: b.memory() for b in loaded_backends()}
    return {
        "num_tensors": sum(m["num_tensors"] for m in per.values()),
        "num_data_buffers": sum(m["num_data_buffers"] for m in per.values()),
        "num_bytes": sum(m["num_bytes"] for m in per.values()),
        "backends": per,
    }
