"""Training data: matching arrays to model inputs/outputs, validation split, shuffled batches.

Data stays on the host as NumPy arrays (converted once to the model's dtypes); each batch is cut
from them and handed to the backend without a further copy on the NumPy backend. Where NumPy is
absent (Pyodide), the arrays are runtime tensors and batches are cut with the runtime's indexing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .. import dtypes as D
from ..host_arrays import dtype_from_numpy, numpy_dtypes, numpy_or_none
from ..ops.creation import tensor
from ..tensor import Tensor

__all__ = ["Batches", "as_host", "host_dtype", "num_samples", "split_tail", "structure", "take",
           "to_backend"]


def as_host(x: Any, dtype: D.DType, what: str) -> Any:
    """``x`` as a host array of ``dtype`` (NumPy when available, else a tensor)."""
    np = numpy_or_none()
    if np is None:
        t = tensor(x)
        return t if t.dtype is dtype else t.astype(dtype)
    if isinstance(x, Tensor):
        x = x.numpy()
    arr = np.asarray(x)
    if arr.dtype == object:
        raise TypeError(f"{what}: cannot convert {type(x).__name__} to a numeric array")
    want = numpy_dtypes()[0][dtype]
    if dtype.kind in "ib" and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise TypeError(f"{what}: expected integer values, got non-integer floats")
    return arr if arr.dtype == want else arr.astype(want)


def num_samples(arrays: Sequence[Any], what: str) -> int:
    ns = {int(a.shape[0]) if len(a.shape) else 0 for a in arrays}
    if len(ns) > 1:
        raise ValueError(f"{what}: arrays have different numbers of samples: {sorted(ns)}")
    return ns.pop() if ns else 0


def structure(x: Any, names: Sequence[str], what: str) -> list[Any]:
    """One entry per name from a single array, a list/tuple in order, or a dict by name."""
    if isinstance(x, dict):
        missing = [n for n in names if n not in x]
        if missing:
            raise ValueError(f"{what}: no data for {', '.join(missing)} (got keys "
                             f"{', '.join(map(str, x))})")
        return [x[n] for n in names]
    if isinstance(x, list | tuple) and len(names) > 1:
        if len(x) != len(names):
            raise ValueError(f"{what}: the model has {len(names)} of them ({', '.join(names)}), "
                             f"got {len(x)} arrays")
        return list(x)
    if len(names) != 1:
        raise ValueError(f"{what}: the model has {len(names)} of them ({', '.join(names)}); give "
                         f"a list or a dict")
    return [x]


def take(arr: Any, index: Any) -> Any:
    """Rows of ``arr``: a slice (a view) or an integer index array/list (a copy)."""
    return arr[index]


def split_tail(arrays: list[Any], fraction: float) -> tuple[list[Any], list[Any]]:
    """Keras ``validation_split``: the last ``fraction`` of the samples (before shuffling)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"validation_split: must be in (0, 1), got {fraction}")
    n = num_samples([a for a in arrays if a is not None], "validation_split")
    cut = int(n * (1.0 - fraction))
    if cut <= 0 or cut >= n:
        raise ValueError(f"validation_split={fraction} leaves no training or no validation "
                         f"samples out of {n}")
    head = [None if a is None else take(a, slice(0, cut)) for a in arrays]
    tail = [None if a is None else take(a, slice(cut, n)) for a in arrays]
    return head, tail


def to_backend(arr: Any, dtype: D.DType, backend: Any) -> Tensor:
    """A batch as a tensor on ``backend`` (no copy for NumPy arrays on the NumPy backend)."""
    if isinstance(arr, Tensor):
        return arr if arr.backend is backend else arr.to(backend)
    return backend.from_host(arr, dtype, copy=False)


class Batches:
    """Index ranges (or shuffled index arrays) of successive batches of one epoch."""

    def __init__(self, n: int, batch_size: int, shuffle: bool = False,
                 generator: Any = None) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size: must be positive, got {batch_size}")
        self.n = n
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generator = generator

    def __len__(self) -> int:
        return (self.n + self.batch_size - 1) // self.batch_size

    def epoch(self) -> Iterator[Any]:
        """Yield one index per batch: a slice when not shuffling, else an index array."""
        n, bs = self.n, self.batch_size
        if not self.shuffle:
            for start in range(0, n, bs):
                yield slice(start, min(start + bs, n))
            return
        perm: Any = self.generator.permutation(n)
        np = numpy_or_none()
        if np is not None:
            perm = np.asarray(perm, dtype=np.int64)
        for start in range(0, n, bs):
            yield perm[start:start + bs]


def host_dtype(arr: Any) -> D.DType:
    """The runtime dtype of a tensor or a host (NumPy) array."""
    if isinstance(arr, Tensor):
        return arr.dtype
    return dtype_from_numpy(arr.dtype)
