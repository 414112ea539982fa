"""JavaScript half of the ``tfjs`` backend: the kernel host that runs next to TF.js.

The JavaScript is ``tfjs_host.js`` next to this file (package data: it ships in the wheel, and
linters see it); ``HOST_JS`` is its text plus ``return makeHost(tf);``, which
``tfjs_backend.install(tf)`` evaluates with Pyodide's ``js.Function`` and the TF.js namespace.
The host keeps every TF.js tensor in a ``Map`` keyed by a small integer id, so Python holds ids
(plain ints, no proxy per tensor) and every kernel is one FFI call that returns an id. Shapes
travel through a scratch ``Int32Array`` that is a zero-copy view of a Python ``array('i')``: the
host writes the result's rank and dims at ``[0..32)``, Python writes integer arguments (shapes,
index specs, id lists) from ``IN = 64`` (``IN_OFFSET``) on.

What TF.js lacks or gets wrong is implemented there (in double precision, rounded to float32):
``lgamma``, ``digamma``, ``polygamma``, ``erfc``, ``cholesky``, ``triangular_solve``; NumPy
semantics are restored where TF.js differs (``sign``/``clip`` of NaN, float -> bool casts,
integer floor division/modulo by zero, reductions over empty tensors, integer matmul).
"""

from __future__ import annotations

from importlib.resources import files

__all__ = ["HOST_JS", "IN_OFFSET", "SCRATCH_INTS"]

SCRATCH_INTS = 1024
IN_OFFSET = 64

# Read once at import: the backend evaluates it once per Pyodide instance (install(tf)).
HOST_JS = (
    files(__package__).joinpath("tfjs_host.js").read_text(encoding="utf-8")
    + "\nreturn makeHost(tf);\n"
)
