"""Exceptions raised by the runtime. Each names the argument, the values involved and what was
expected, so that the message stays useful after crossing into R or JavaScript."""

from __future__ import annotations

__all__ = [
    "BackendMismatchError",
    "DisposedTensorError",
    "MissingKernelError",
    "NonDifferentiableError",
    "SamplingInterrupted",
    "ShapeError",
    "TensorBridgeError",
]


class TensorBridgeError(Exception):
    """Base class of the runtime's own errors."""


class ShapeError(TensorBridgeError, ValueError):
    """Shapes that do not fit together."""


class MissingKernelError(TensorBridgeError, NotImplementedError):
    def __init__(self, backend: str, kernel: str) -> None:
        self.backend = backend
        self.kernel = kernel
        super().__init__(
            f"backend '{backend}' has no kernel '{kernel}'; register one with "
            f"tensorbridge.register_kernel('{backend}', '{kernel}', fn) "
            f"(see tensorbridge.kernel_table() for what each backend implements)"
        )


class BackendMismatchError(TensorBridgeError, ValueError):
    """Tensors of two backends met in one op without an explicit transfer."""


class DisposedTensorError(TensorBridgeError, RuntimeError):
    def __init__(self, tensor_id: int) -> None:
        self.tensor_id = tensor_id
        super().__init__(
            f"tensor {tensor_id} was disposed; its data is no longer available "
            f"(keep it with tensorbridge.keep() or return it from tidy())"
        )


class NonDifferentiableError(TensorBridgeError, TypeError):
    """Differentiation reached an op (or an input) that has no derivative rule."""


class SamplingInterrupted(RuntimeWarning):
    """``mcmc`` was interrupted and returned the draws taken so far (``Draws.interrupted``).
    A category of its own so that a front door that reports interrupts itself (R, JS, the
    parent of worker processes) filters exactly this warning and no other."""


class CompiledSamplingUnavailable(UserWarning):
    """``mcmc(..., backend="auto")`` sampled on NumPy because the compiled sampler cannot run
    here (no C compiler, or a model the C lowering does not handle yet); the message says why.
    The draws are the same; only speed differs."""
