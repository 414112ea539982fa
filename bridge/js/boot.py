"""Start-up of the runtime inside Pyodide: what ``js-client/src/core.js`` runs once, after
registering TF.js as the JS module ``_tensorbridge_tf``. Kept here, not in a JS string, so
linters and tests see it."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from ...runtime import set_backend, set_model_backend
from ...runtime.backends import tfjs_backend
from .host import JsHost, install

__all__ = ["boot", "tfjs_kernels"]


def _no_numpy_probe() -> None:
    # Without NumPy the runtime's `import numpy` probes in hot paths (index plans, batches) each
    # search the file system (~0.5 ms in Pyodide); None in sys.modules makes them fail at once.
    # Loading NumPy later: `del sys.modules["numpy"]` first.
    if "numpy" not in sys.modules and importlib.util.find_spec("numpy") is None:
        sys.modules["numpy"] = None  # type: ignore[assignment]


def boot(js: Any, backend: str = "tfjs") -> JsHost:
    """Install the tfjs backend on the registered TF.js module and the process's
    :class:`JsHost` with ``js`` (the client's JS half), then select ``backend`` for tensors.
    Models are made on the ``python`` backend (float64: TF.js has none), sampled in
    JavaScript (``tb.mcmc``'s compiled sampler here)."""
    _no_numpy_probe()
    import _tensorbridge_tf  # registered by core.js (pyodide.registerJsModule)

    tfjs_backend.install(_tensorbridge_tf)
    host = install(js)
    set_backend(backend)
    set_model_backend("python")
    return host


def tfjs_kernels() -> Any:
    """The JS object holding the tfjs backend's tensors (``core.js`` reads them directly)."""
    return tfjs_backend._HOST
