"""Primitives the layers need beyond the core op set; the backends register their kernels
(``backends/layer_kernels.py``).

``embedding_lookup(table, indices)``: rows of ``table`` at integer ``indices`` (any shape), with
the scatter-add of rows as its gradient. The core ``take`` builds an index plan from the index
*values* on the host, which a staged training step cannot do (the values change every batch);
these kernels take the indices as a tensor argument, so the lookup is staged like any op.
``fused_update`` runs one optimizer step per variable as one kernel;
``sparse_softmax_cross_entropy`` is the loss with integer labels. Where a backend has no such
kernel the layers use the composite formulas; another backend adds its own with
``tb.register_kernel(backend, "layers.gather_rows", fn)`` (and the other ``layers.*`` names).
"""

from __future__ import annotations

from typing import Any

from .. import ops
from ..autodiff.core import Tracer, bind
from ..backends.layer_kernels import (
    ADAM,
    GATHER,
    RMSPROP,
    SCATTER,
    SGD_MOMENTUM,
    SPARSE_CE,
    SPARSE_CE_GRAD,
)
from ..ops.indexing import take
from ..ops.kernel_impls import nary_primitive
from ..staging import StagingTracer
from ..tensor import Tensor

__all__ = [
    "ADAM",
    "RMSPROP",
    "SGD_MOMENTUM",
    "embedding_lookup",
    "fused_update",
    "sparse_softmax_cross_entropy",
]


_gather = nary_primitive("embedding_lookup", GATHER)
_scatter = nary_primitive("embedding_scatter_add", SCATTER)
_gather.defvjp(
    lambda g, ans, table, indices: bind(_scatter, (g, indices), {"num_rows": table.shape[0]}),
    None,
)
_scatter.defvjp(lambda g, ans, updates, indices, *, num_rows: bind(_gather, (g, indices), {}),
                None)


def embedding_lookup(table: Tensor, indices: Tensor) -> Tensor:
    """``table[indices]`` along axis 0 for an integer tensor of any shape (differentiable in
    ``table``)."""
    if indices.dtype.kind != "i":
        raise TypeError(f"indices: expected an integer tensor, got {indices.dtype}")
    if GATHER not in table.backend.kernels or SCATTER not in table.backend.kernels:
        return take(table, indices, axis=0)  # without these kernels (reads the indices)
    return bind(_gather, (table, indices), {})


# -- fused optimizer updates ---------------------------------------------------------------------
# One kernel call per variable instead of about a dozen elementwise ops, taking the new value and
# slots out of the kernel's (k, *shape) result as rows; backends without these kernels use the
# composite formulas.
_FUSED = {name: nary_primitive(name) for name in (ADAM, SGD_MOMENTUM, RMSPROP)}


def fused_update(name: str, *args: Tensor, **params: Any) -> list[Tensor] | None:
    """The rows of a fused update kernel's result, or None when it cannot be used here (the
    backend lacks the kernel, or the arguments are being differentiated)."""
    p = args[0]
    if name not in p.backend.kernels or any(isinstance(a, Tracer) and not isinstance(
            a, StagingTracer) for a in args):
        return None
    out = bind(_FUSED[name], args, params)
    return [out[i] for i in range(out.shape[0])]


# -- softmax cross-entropy with integer labels ---------------------------------------------------
# ``logsumexp(z) - z[label]`` per sample, and its gradient ``(softmax(z) - onehot) * g``, each
# one kernel. The gradient is itself a primitive whose derivative rules are written with ops, so
# second derivatives work too.
_sce = nary_primitive("sparse_softmax_cross_entropy", SPARSE_CE)
_sce_grad = nary_primitive("sparse_softmax_cross_entropy_grad", SPARSE_CE_GRAD)
_sce.defvjp(lambda g, ans, z, labels, *, reduce: bind(_sce_grad, (z, labels, g),
                                                     {"reduce": reduce}), None)


def _per_row(g: Any, labels: Any, reduce: str) -> Any:
    """The cotangent of each sample's loss as a trailing-axis column."""
    if reduce == "mean":
        return g * (1.0 / max(labels.size, 1))
    return ops.expand_dims(g, -1)


def _sce_grad_vjp_z(u: Any, ans: Any, z: Any, labels: Any, g: Any, *, reduce: str) -> Any:
    p = ops.softmax(z, -1)
    gu = u * _per_row(g, labels, reduce)
    return p * gu - p * ops.sum(p * gu, axis=-1, keepdims=True)


def _sce_grad_vjp_g(u: Any, ans: Any, z: Any, labels: Any, g: Any, *, reduce: str) -> Any:
    p = ops.softmax(z, -1)
    per = ops.sum(u * (p - ops.one_hot(labels, z.shape[-1], z.dtype)), axis=-1)
    if reduce == "mean":
        return ops.sum(per) * (1.0 / max(labels.size, 1))
    return per


_sce_grad.defvjp(_sce_grad_vjp_z, None, _sce_grad_vjp_g)


def sparse_softmax_cross_entropy(labels: Tensor, logits: Tensor,
                                 reduce: str = "none") -> Tensor | None:
    """``-log softmax(logits)[label]`` over the last axis, per sample (``reduce="none"``) or
    averaged (``"mean"``); None when the backend has no kernel for it (callers then use the
    composite formula)."""
    if SPARSE_CE not in logits.backend.kernels or SPARSE_CE_GRAD not in logits.backend.kernels:
        return None
    if labels.dtype.kind != "i" or tuple(labels.shape) != tuple(logits.shape[:-1]):
        return None
    return bind(_sce, (logits, labels), {"reduce": reduce})
