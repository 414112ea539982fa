"""Small synthetic problems shared by the layers tests."""

from __future__ import annotations

import numpy as np


def blobs(n: int, d: int, k: int, seed: int = 0, scale: float = 4.0,
          dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """A separable ``k``-class problem: unit Gaussian clouds around centres ``scale`` apart."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d))
    centers *= scale / np.linalg.norm(centers, axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    x = centers[y] + rng.normal(size=(n, d)) / np.sqrt(d) * 2.0
    return x.astype(dtype), y.astype(np.int64)


def one_hot(y: np.ndarray, k: int, dtype=np.float32) -> np.ndarray:
    return np.eye(k, dtype=dtype)[y]
