"""Fixtures for the layers suite: fresh layer names and a seeded default generator per test."""

from __future__ import annotations

import pytest

import tensorbridge as tb
from tensorbridge.runtime import layers as L


@pytest.fixture(autouse=True)
def _fresh_names() -> None:
    L.clear_session()
    tb.random.seed(1234)


@pytest.fixture
def mlp_factory():
    """A small MLP; softmax outputs unless ``logits=True``."""

    def make(d: int = 8, k: int = 3, hidden: int = 16, dtype: str = "float32", seed: int = 0,
             logits: bool = False):
        return L.Sequential([
            L.Dense(hidden, activation="relu", input_shape=(d,), dtype=dtype,
                    kernel_initializer=L.initializers.GlorotUniform(seed)),
            L.Dense(k, dtype=dtype, kernel_initializer=L.initializers.GlorotUniform(seed + 1),
                    activation=None if logits else "softmax"),
        ])

    return make
