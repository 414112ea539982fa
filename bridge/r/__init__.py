"""tensorbridge.bridge.r: the Python side of R hosts.

* :mod:`.types` — R-shaped values (:class:`StrVector`, :class:`RList`, :class:`Factor`,
  :class:`DataFrame`) and their converters on the "r" tables.
* :mod:`.rhost` — an R session embedding Python through reticulate (the R package's back end).
* :mod:`.api` — helpers behind the R package's tensor API (tensors by handle, grad...).
* :mod:`.rpy2host` — a Python program embedding R through rpy2 (``to_r`` / ``from_r``).

Importing this package installs the R-specific converters on ``py_to_foreign["r"]`` and
``foreign_to_py["r"]``.
"""

from __future__ import annotations

from ..registry import foreign_to_py, py_to_foreign
from .rhost import r_wire_in
from .types import (
    DataFrame,
    Factor,
    RDataFrame,
    RFactor,
    RList,
    RVector,
    StrVector,
    install_r_types,
)


def install() -> None:
    """(Re)register the R-specific converters (idempotent)."""
    out, inp = py_to_foreign["r"], foreign_to_py["r"]
    install_r_types(out, inp)
    inp.register(dict, r_wire_in)


install()

__all__ = [
    "DataFrame",
    "Factor",
    "RDataFrame",
    "RFactor",
    "RList",
    "RVector",
    "StrVector",
    "install",
    "install_r_types",
]
