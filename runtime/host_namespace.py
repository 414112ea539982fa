"""The host array namespace ``xp``: NumPy where it can be imported, else the python backend's
arrays (:mod:`.backends.python_arrays`).

The samplers, the diagnostics and the graph's draw-wise ``calculate``/``simulate`` keep their
host-side bookkeeping in it, so it sits below both ``graph`` and ``ppl`` (it needs only
tensors, backends and ``ops.creation``).

``xp`` (the array-API convention's name: code written once against a namespace, never ``np``,
which means NumPy only) is NumPy when it can be imported (the fast path: it *is* ``numpy``),
else :mod:`.backends.python_arrays` (Pyodide, whose core has no NumPy). The environment variable
``TENSORBRIDGE_PPL_ARRAYS`` (``auto``, ``numpy`` or ``pure``), read once at import, forces a
choice, so tests can run the pure path where NumPy is installed. ``to_host``/``to_tensor`` move
values between runtime tensors and arrays of that module.

This module is the only place that asks which module ``xp`` is. Code above it is written once:
against ``xp``'s NumPy names (the python arrays implement the subset used), through
``to_host``/``to_tensor``/``raw_is_host``, and, where a kernel is written twice for speed (the
diagnostics' NumPy kernels and their list-of-floats kernels), through :func:`for_namespace`,
which picks one of the two implementations once, at import.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

from .backends import get_backend, python_arrays
from .dtypes import as_dtype
from .ops.creation import _host_array, tensor
from .tensor import Tensor

__all__ = ["ENV_VAR", "NAME", "NUMPY_MISSING", "for_namespace", "raw_is_host", "to_host",
           "to_tensor", "xp"]

ENV_VAR = "TENSORBRIDGE_PPL_ARRAYS"


def _choose(preference: str) -> Any:
    if preference not in ("auto", "numpy", "pure"):
        raise ValueError(f"{ENV_VAR}: expected 'auto', 'numpy' or 'pure', got {preference!r}")
    if preference == "pure":
        return python_arrays
    try:
        import numpy
    except ImportError:
        if preference == "numpy":
            raise
        return python_arrays
    return numpy


xp: Any = _choose(os.environ.get(ENV_VAR, "auto").strip().lower() or "auto")
NAME = "pure" if xp is python_arrays else "numpy"

#: why what needs NumPy host arrays (the compiled C sampler) cannot run here; None where it can
NUMPY_MISSING: str | None = None if NAME == "numpy" else "NumPy is not available"

_T = TypeVar("_T")


def for_namespace(numpy: _T, python: _T) -> _T:
    """Of two implementations of one thing, the one written for ``xp``: ``numpy`` where it is
    NumPy, else ``python`` (written for the python arrays, or for plain lists of floats)."""
    return numpy if NAME == "numpy" else python


def raw_is_host(backend: Any) -> bool:
    """Whether ``backend``'s raw buffers are arrays of ``xp``, so that a staged program's raw
    entry point can take and return host arrays as they are: the numpy backend's, where ``xp``
    is NumPy (the python backend's buffers carry a runtime dtype the host arrays lack)."""
    return NAME == "numpy" and backend.name == "numpy"


if NAME == "numpy":

    def to_host(t: Any, dtype: Any = None) -> Any:
        """A tensor's values as an array of ``xp`` (``dtype``: default the tensor's)."""
        return xp.asarray(t.numpy() if isinstance(t, Tensor) else t, dtype=dtype)

    def to_tensor(a: Any, dtype: Any = None, backend: Any = None) -> Tensor:
        """An array of ``xp`` (or anything ``tensor()`` takes) as a runtime tensor."""
        return tensor(a, dtype=dtype, backend=backend)

else:

    def to_host(t: Any, dtype: Any = None) -> Any:
        """A tensor's values as a python array: the python backend's buffer copied, other
        backends' read through ``tolist()`` (no NumPy needed)."""
        if not isinstance(t, Tensor):
            return python_arrays.asarray(t, dtype)
        raw = t._raw()
        shape = tuple(t.shape)
        if isinstance(raw, python_arrays.ndarray):  # the python backend's buffer: flat already
            values = list(raw._data)  # a copy: host arrays are written in place, buffers never
        else:
            values = t.tolist()
            if len(shape) == 0:
                values = [values]
            elif len(shape) > 1:
                for _ in range(len(shape) - 1):
                    values = [v for row in values for v in row]
        kind = t.dtype.kind
        src = python_arrays.float64 if kind == "f" else (
            python_arrays.bool_ if kind == "b" else python_arrays.int64)
        if kind == "f" and values and values[0].__class__ is not float:
            values = [float(v) for v in values]
        a = python_arrays.from_flat(values, shape, src)
        return a if dtype is None else a.astype(dtype, copy=False)

    def to_tensor(a: Any, dtype: Any = None, backend: Any = None) -> Tensor:
        """A pure array (or anything ``tensor()`` takes) as a runtime tensor."""
        if not isinstance(a, python_arrays.ndarray):
            return tensor(a, dtype=dtype, backend=backend)
        dt = as_dtype(dtype) if dtype is not None else as_dtype(a.dtype.name)
        values = list(a._data)  # backends may keep host lists; the array stays mutable
        if a.dtype.kind != dt.kind:
            cast = float if dt.kind == "f" else (bool if dt.kind == "b" else int)
            values = [cast(v) for v in values]
        be = get_backend(backend)
        return be.from_host(_host_array(values, dt, tuple(a.shape)), dt, copy=False)
