"""``function``: compile a tensor function for its backend.

On TensorFlow the function is traced once per input signature into a ``tf.function`` graph (so a
whole ``value_and_grad`` runs as one graph call); on NumPy and TF.js it is staged (``staging.py``:
the kernel calls are recorded once per input signature and replayed on raw arrays). Each backend's
compiler is registered here, above the backends (``register_compiler``), so that no backend
imports the staging machinery.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from .backends import get_backend, register_compiler
from .pytree import tree_leaves
from .staging import StagedFunction
from .tensor import Tensor

__all__ = ["function"]



def _tensorflow(fn: Callable[..., Any], backend: Any) -> Any:
    # TensorFlow is optional: its compiler is imported when a TensorFlow backend first compiles
    from .backends.tensorflow_function import CompiledFunction

    return CompiledFunction(backend, fn, jit_compile=os.environ.get("TENSORBRIDGE_TF_JIT") == "1")


register_compiler("numpy", StagedFunction)
register_compiler("tfjs", StagedFunction)  # replays on raw host ids: ~1.8x in Pyodide
register_compiler("python", StagedFunction)  # replays kernels on pure-Python arrays
register_compiler("tensorflow", _tensorflow)


def function(fn: Callable[..., Any] | None = None, *, backend: Any = None) -> Any:
    """Decorator: compile ``fn`` for the backend of its tensor arguments (or ``backend``)."""
    if fn is None:
        return lambda f: function(f, backend=backend)
    compiled: dict[str, Callable[..., Any]] = {}

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        be = get_backend(backend) if backend is not None else _backend_of(args)
        c = compiled.get(be.name)
        if c is None:
            c = compiled[be.name] = be.compile(fn)
        return c(*args, **kwargs)

    return wrapper


def _backend_of(args: Any) -> Any:
    if args and isinstance(args[0], Tensor):
        return args[0].backend
    for leaf in tree_leaves(list(args)):
        if isinstance(leaf, Tensor):
            return leaf.backend
    return get_backend()
