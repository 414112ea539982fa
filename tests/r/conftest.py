"""Python-hosted R (rpy2) for the "r" registries. R is embedded in the pytest process once;
the fixture restores the conversion tables afterwards so other suites see them unchanged."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("RPY2_CFFI_MODE", "API")


def _snapshot() -> dict:
    from tensorbridge.bridge import foreign_to_py, py_to_foreign

    return {
        "out": dict(py_to_foreign["r"].items()),
        "in": dict(foreign_to_py["r"].items()),
    }


def _restore(snap: dict) -> None:
    from tensorbridge.bridge import foreign_to_py, py_to_foreign

    for reg, saved in ((py_to_foreign["r"], snap["out"]), (foreign_to_py["r"], snap["in"])):
        for cls in list(reg):
            if cls not in saved:
                reg.unregister(cls)
        for cls, fn in saved.items():
            if cls not in reg or reg[cls] is not fn:
                reg.register(cls, fn)


@pytest.fixture(scope="session")
def rh():
    pytest.importorskip("rpy2.rinterface", reason="rpy2 (the 'r' extra) is not installed")
    snap = _snapshot()
    from tensorbridge.bridge.r import rpy2host

    rpy2host.start()
    yield rpy2host
    rpy2host.stop()
    _restore(snap)
