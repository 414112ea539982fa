"""Shared fixtures: the `backend` fixture runs a test on every backend the runtime has."""

from __future__ import annotations

import importlib.util
import os

import pytest

# TENSORBRIDGE_TEST_BACKENDS (comma-separated) narrows the list: the OpenBLAS kernel-family
# suites run only the backends that call BLAS (the python backend never does)
BACKENDS = [b for b in ("numpy", "tensorflow", "python")
            if b in os.environ.get("TENSORBRIDGE_TEST_BACKENDS", "numpy,tensorflow,python")
            .split(",")]


def backend_available(name: str) -> bool:
    if name == "tensorflow":
        return importlib.util.find_spec("tensorflow") is not None
    return True


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name = request.param
    if not backend_available(name):
        if os.environ.get("TENSORBRIDGE_REQUIRE_TF") == "1":
            pytest.fail(f"backend {name!r} is required (TENSORBRIDGE_REQUIRE_TF=1) but missing")
        pytest.skip(f"backend {name!r} is not installed")
    return name
