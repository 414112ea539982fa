"""The kernel registry: one table keyed by (backend name, kernel name).

A *kernel* is the backend's implementation of one primitive on raw backend arrays (``numpy.ndarray``
for ``numpy``, ``tf.Tensor`` for ``tensorflow``…). Ops, autodiff and everything above are written
once against kernel *names*; a backend is whatever set of kernels is registered under its name.
See ``ADDING_OPS.md`` next to this file for the recipe.

Backends register into this table (``backends`` imports it, never the other way);
``tb.kernel_table()`` (in ``backends``, since it loads them) prints which backend implements what.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .errors import MissingKernelError

__all__ = [
    "KERNEL_NAMES",
    "KernelRegistry",
    "KernelTable",
    "register_kernel",
    "registry",
]

# Every kernel the runtime's ops call, with the signature a backend implements. Raw arguments are
# backend arrays; ``dtype`` arguments are :class:`~tensorbridge.runtime.dtypes.DType`.
KERNEL_NAMES: dict[str, str] = {
    # elementwise unary (x) -> y
    **{
        n: "(x) -> same shape"
        for n in (
            "neg abs sign exp log log1p expm1 sqrt rsqrt square reciprocal tanh sigmoid softplus "
            "sin cos tan erf erfc lgamma digamma floor ceil round logical_not isnan isfinite "
            "arcsin arccos arctan arcsinh arccosh arctanh"
        ).split()
    },
    "polygamma": "(x, *, n: int) -> same shape",
    "cast": "(x, *, dtype) -> same shape, new dtype",
    # elementwise binary with NumPy broadcasting (x, y) -> y
    **{
        n: "(x, y) -> broadcast shape"
        for n in (
            "add sub mul div floordiv mod pow maximum minimum equal not_equal less less_equal "
            "greater greater_equal logical_and logical_or"
        ).split()
    },
    "where": "(cond, x, y) -> broadcast shape",
    "clip": "(x, *, lo, hi) -> same shape",
    # reductions (axis: tuple of non-negative ints, never None)
    **{n: "(x, *, axis: tuple, keepdims: bool)" for n in "sum prod max min logsumexp".split()},
    "argmax": "(x, *, axis: int) -> int64",
    "argmin": "(x, *, axis: int) -> int64",
    "cumsum": "(x, *, axis: int, reverse: bool)",
    # shape and data movement
    "reshape": "(x, *, shape: tuple)",
    "transpose": "(x, *, perm: tuple)",
    "broadcast_to": "(x, *, shape: tuple)",
    "concat": "(*xs, axis: int)",
    "gather_flat": "(x, *, index: IndexPlan) -> x[index] (any NumPy-style index)",
    "scatter_add_flat": "(updates, *, index: IndexPlan, shape: tuple) -> zeros(shape) with "
    "updates added at index (duplicates accumulate)",
    "one_hot": "(indices, *, depth: int, dtype)",
    # linear algebra (batched over leading dims)
    "matmul": "(a, b) -> a @ b, NumPy semantics: a 1-d operand is a vector (never both), "
    "batch dims broadcast",
    "cholesky": "(a) -> lower factor",
    "triangular_solve": "(a, b, *, lower: bool, transpose_a: bool) -> solve(op(a), b)",
    "solve": "(a, b) -> a^-1 b for square a [..., n, n] and b [..., n, k] (same batch)",
    "eigh": "(a) -> [..., n + 1, n]: row 0 the eigenvalues of the symmetric a (its lower "
    "triangle read) in ascending order, rows 1.. the matrix of eigenvectors (as columns)",
    # creation and host transfer
    "fill": "(*, shape: tuple, value, dtype)",
    "arange": "(*, start, stop, step, dtype)",
    "linspace": "(*, start, stop, num: int, dtype)",
    "eye": "(*, n: int, m: int, dtype)",
    "from_uniform_bits": "(u: host float64 array, *, shape, dtype) -> backend array",
}


class KernelRegistry:
    """Process-global table ``backend -> kernel name -> function``. Thread-safe to write."""

    def __init__(self) -> None:
        self._table: dict[str, dict[str, Callable[..., Any]]] = {}
        self._lock = threading.Lock()

    def register(self, backend: str, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(fn):
            raise TypeError(f"register_kernel: fn for {backend}/{name} must be callable")
        with self._lock:
            self._table.setdefault(backend, {})[name] = fn
        return fn

    def kernels_for(self, backend: str) -> dict[str, Callable[..., Any]]:
        """The live name -> function dict of one backend (backends keep it for fast lookup)."""
        with self._lock:
            return self._table.setdefault(backend, {})

    def get(self, backend: str, name: str) -> Callable[..., Any]:
        try:
            return self._table[backend][name]
        except KeyError:
            raise MissingKernelError(backend, name) from None

    def backends(self) -> list[str]:
        return sorted(self._table)

    def names(self) -> list[str]:
        names = set(KERNEL_NAMES)
        for table in self._table.values():
            names.update(table)
        return sorted(names)

    def table(self) -> KernelTable:
        return KernelTable(self)


class KernelTable:
    """A printable view: one row per kernel, one column per backend."""

    def __init__(self, reg: KernelRegistry) -> None:
        self.backends = reg.backends()
        self.rows = {n: {b: n in reg.kernels_for(b) for b in self.backends} for n in reg.names()}

    def missing(self, backend: str) -> list[str]:
        return [n for n, row in self.rows.items() if not row.get(backend)]

    def __repr__(self) -> str:
        width = max(len(n) for n in self.rows) if self.rows else 6
        head = "kernel".ljust(width) + "  " + "  ".join(self.backends)
        lines = [head, "-" * len(head)]
        for name, row in self.rows.items():
            cells = "  ".join(("yes" if row[b] else "-").center(len(b)) for b in self.backends)
            lines.append(name.ljust(width) + "  " + cells)
        return "\n".join(lines)


registry = KernelRegistry()


def register_kernel(backend: str, name: str, fn: Callable[..., Any] | None = None):
    """Register ``fn`` as ``backend``'s kernel ``name``; usable as a decorator."""
    if fn is not None:
        return registry.register(backend, name, fn)

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        return registry.register(backend, name, f)

    return deco
