"""Compatibility path: the host array module moved to :mod:`tensorbridge.runtime.host_namespace`.

Kept only for ``ppl/chains.py`` and ``ppl/sampler.py`` (being edited elsewhere right now),
which still import ``.array_namespace``; new code imports ``..host_namespace``. Remove this
module once they do.
"""

from ..host_namespace import ENV_VAR, NAME, np, to_host, to_tensor

__all__ = ["ENV_VAR", "NAME", "np", "to_host", "to_tensor"]
