"""tensorbridge: one tensor and model runtime for Python, R and the browser.

The runtime (``tensorbridge.runtime``) is re-exported here; the language boundary lives in
``tensorbridge.bridge``.
"""

from tensorbridge.runtime import *  # noqa: F403
from tensorbridge.runtime import __all__ as _runtime_all

__version__ = "0.1.0"
__all__ = ["__version__", *_runtime_all]
