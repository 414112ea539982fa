"""A model's adjusted log density and gradient as a JavaScript function (issue 15: the browser
door at native speed).

:func:`compile_js_density` takes ``Model.log_density_recording()`` (traced once), lowers it
to JavaScript (``compiled.lowering.lower_js``, the C lowering's front end) and
makes it a function of the page's engine (``compiled.js_sampler.JsDensity``). It needs a
float64 model: in Pyodide the models are built on the ``python`` backend (exact float64; TF.js
has no float64), whose staged program is what gets lowered.
"""

from __future__ import annotations

from typing import Any

from ..compiled.js_sampler import JsDensity, js_available
from ..compiled.lowering import LoweringError, lower_js

__all__ = ["compile_js_density"]

# the backends whose staged programs hold float64 values the lowering can read
_FLOAT64_BACKENDS = ("python", "numpy")


def compile_js_density(model: Any) -> JsDensity:
    """Lower ``model``'s log density and gradient of one free state to JavaScript.

    Raises :class:`LoweringError` (a NotImplementedError) when the model is not float64 on a
    float64 backend, cannot be staged, or holds a kernel without a lowering; RuntimeError where
    no JavaScript host is (outside Pyodide)."""
    reason = js_available()
    if reason is not None:
        raise RuntimeError(reason)
    if model.backend.name not in _FLOAT64_BACKENDS:
        raise LoweringError(f"the JavaScript sampler needs a float64 model on the 'python' "
                            f"backend, not {model.backend.name!r}")
    if model.dtype.name != "float64":
        raise LoweringError(f"the JavaScript sampler is float64 only; this model is "
                            f"{model.dtype.name}")
    return JsDensity(lower_js(model.log_density_recording()))
