"""A model's adjusted log density and gradient as a C function (issue 14, compiled sampling).

:func:`compile_density` takes ``Model.log_density_recording()`` (the staged value and
gradient of the log density of one free state, traced once), lowers it to C
(``compiled.lowering``) and compiles it with ``compiled.build`` (cached on disk by a hash of the
source, which depends on the model's shapes and structure, not on its data). The C function,

    int f(void *ctx, const double *q, double *logp, double *grad);

is what the compiled samplers call through :attr:`CompiledDensity.fn_address`; each thread
passes its own context (:meth:`CompiledDensity.new_context`).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..compiled.build import compile_module, compiler_available
from ..compiled.lowering import CTX_DECL, LoweredFunction, LoweringError, lower

__all__ = ["CompiledDensity", "LoweringError", "compile_density"]


class CompiledDensity:
    """The compiled ``(logp, grad)`` of a model's free state.

    ``n``: the free state's length; ``fn_address``: the C function's address;
    ``compile_seconds`` (0.0 when loaded from the disk cache) and ``cached``: what building
    cost; ``source``: the C source; ``lowered``: the lowering (constants, workspace size).
    """

    def __init__(self, lowered: LoweredFunction, module: Any) -> None:
        self.lowered = lowered
        self.n = lowered.n
        self.source = lowered.source
        self.name = lowered.name
        self.compile_seconds = float(module.compile_seconds)
        self.cached = bool(module.cached)
        self._ffi = module.ffi
        self._lib = module.lib
        self._fn = getattr(module.lib, lowered.name)
        self.fn_address = int(self._ffi.cast("uintptr_t",
                                             self._ffi.addressof(module.lib, lowered.name)))
        self._consts = lowered.constants  # read-only, shared by every context
        self._local = threading.local()

    def new_context(self) -> tuple[int, Any]:
        """A fresh ``tb_ctx`` with its own workspace: ``(address, keepalive)``. The address is
        valid while ``keepalive`` is referenced."""
        ffi = self._ffi
        ptrs = ffi.new("void *[]", max(len(self._consts), 1))
        for k, c in enumerate(self._consts):
            ptrs[k] = ffi.cast("void *", c.ctypes.data)
        ws = ffi.new("double[]", max(self.lowered.workspace_bytes // 8, 1))
        ctx = ffi.new("tb_ctx *", {"c": ptrs, "ws": ffi.cast("char *", ws)})
        keepalive = (ctx, ptrs, ws, self._consts)
        return int(ffi.cast("uintptr_t", ctx)), keepalive

    def _context(self) -> Any:
        ctx = getattr(self._local, "ctx", None)
        if ctx is None:
            _, keep = self.new_context()
            ctx = self._local.ctx = keep
        return ctx

    def call(self, q: Any) -> tuple[float, np.ndarray, int]:
        """``(logp, grad, status)`` at free state ``q`` [n]; status 0, or nonzero when the C
        code detected a numerical failure (the values are then NaN, as on NumPy)."""
        q = np.ascontiguousarray(q, dtype=np.float64)
        if q.shape != (self.n,):
            raise ValueError(f"q: expected a free state of shape [{self.n}], got {list(q.shape)}")
        ffi = self._ffi
        keep = self._context()
        grad = np.empty(self.n)
        logp = ffi.new("double *")
        status = self._fn(keep[0], ffi.from_buffer("double[]", q),
                          logp, ffi.from_buffer("double[]", grad))
        return float(logp[0]), grad, int(status)

    def __call__(self, q: Any) -> tuple[float, np.ndarray]:
        """``(logp, grad)`` at free state ``q`` [n], through the C function."""
        logp, grad, _ = self.call(q)
        return logp, grad


def compile_density(model: Any) -> CompiledDensity:
    """Lower and compile ``model``'s adjusted log density and gradient of one free state.

    Raises :class:`LoweringError` (a NotImplementedError) when the model is not float64 on the
    NumPy or Python backend, its log density cannot be staged, or a kernel has no C lowering; and
    RuntimeError when no C compiler works here (the reason from ``compiler_available``).
    """
    if model.backend.name not in ("numpy", "python"):  # float64 values the lowering reads
        raise LoweringError(f"compiled densities need a float64 backend ('numpy' or "
                            f"'python'), not {model.backend.name!r}")
    if model.dtype.name != "float64":
        raise LoweringError(f"compiled densities are float64 only; this model is "
                            f"{model.dtype.name}")
    reason = compiler_available()
    if reason is not None:
        raise RuntimeError(f"compiled density: {reason}")
    lowered = lower(model.log_density_recording())
    # errno is never read: libm calls (sqrt) may be inlined; values are unchanged
    module = compile_module(lowered.name, f"{CTX_DECL}\n{lowered.cdef}", lowered.source,
                            extra_compile_args=("-fno-math-errno",))
    return CompiledDensity(lowered, module)
