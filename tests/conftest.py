"""Shared fixtures: the `backend` fixture runs a test on every backend the runtime has."""

from __future__ import annotations

import importlib.util
import os

import pytest

BACKENDS = ["numpy", "tensorflow", "python"]


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
