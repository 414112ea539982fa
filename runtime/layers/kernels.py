"""Primitives the layers need beyond the core op set, registered through the public kernel API.

``embedding_lookup(table, indices)``: rows of ``table`` at integer ``indices`` (any shape), with
the scatter-add of rows as its gradient. The core ``take`` builds an index plan from the index
*values* on the host, which a staged training step cannot do (the values change every batch);
these kernels take the indices as a tensor argument, so the lookup is staged like any op.
Kernels exist for ``numpy``, ``tensorflow`` and ``tfjs`` (TF.js inside Pyodide: the JS is
``backends/tfjs_layer_kernels.js``, evaluated once next to the tfjs kernel host); another backend
adds its own with ``tb.register_kernel(backend, "layers.gather_rows", fn)`` (and
``"layers.scatter_add_rows"``).
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from ..autodiff.core import Primitive, bind
from ..kernels import register_kernel
from ..ops.kernel_impls import kernel_impl
from ..tensor import Tensor

__all__ = ["embedding_lookup", "fused_update", "sparse_softmax_cross_entropy"]

GATHER = "layers.gather_rows"
SCATTER = "layers.scatter_add_rows"


# -- numpy -----------------------------------------------------------------------------------
def _np_gather(table: Any, indices: Any) -> Any:
    import numpy as np

    return np.take(table, indices, axis=0)


def _np_scatter(updates: Any, indices: Any, *, num_rows: int) -> Any:
    import numpy as np

    idx = np.asarray(indices).reshape(-1)
    rows = updates.reshape((idx.size, *updates.shape[indices.ndim:]))
    out = np.zeros((num_rows, *rows.shape[1:]), dtype=updates.dtype)
    np.add.at(out, idx, rows)
    return out


register_kernel("numpy", GATHER, _np_gather)
register_kernel("numpy", SCATTER, _np_scatter)


# -- tensorflow (imported only when the backend runs these kernels) --------------------------
def _tf_gather(table: Any, indices: Any) -> Any:
    import tensorflow as tf

    return tf.gather(table, indices, axis=0)


def _tf_scatter(updates: Any, indices: Any, *, num_rows: int) -> Any:
    import tensorflow as tf

    return tf.math.unsorted_segment_sum(updates, indices, num_rows)


register_kernel("tensorflow", GATHER, _tf_gather)
register_kernel("tensorflow", SCATTER, _tf_scatter)


_gather = Primitive("embedding_lookup", kernel_impl(GATHER))
_scatter = Primitive("embedding_scatter_add", kernel_impl(SCATTER))
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
        from ..ops.indexing import take  # backends without these kernels (reads the indices)

        return take(table, indices, axis=0)
    return bind(_gather, (table, indices), {})


# -- fused optimizer updates ---------------------------------------------------------------------
# One kernel call per variable instead of about a dozen elementwise ops: the kernel allocates a
# single (k, *shape) buffer and computes the new value and slots into its rows in place (the
# inputs are never written), then the rows are taken out as views. On NumPy this removes most of
# the optimizer's memory traffic; backends without these kernels use the composite formulas.
ADAM = "layers.adam_step"
SGD_MOMENTUM = "layers.sgd_momentum_step"
RMSPROP = "layers.rmsprop_step"


_CHUNK_BYTES = 1 << 18  # per array: ~7 arrays of a chunk stay in a 2 MB L2 cache


def _chunks(n: int, itemsize: int) -> list[tuple[int, int]]:
    step = max(1, _CHUNK_BYTES // itemsize)
    return [(s, min(s + step, n)) for s in range(0, n, step)] or [(0, 0)]


def _flat(a: Any) -> Any:
    return a.reshape(-1)


def _np_adam(p: Any, g: Any, m: Any, v: Any, alpha: Any, *, beta_1: float, beta_2: float,
             epsilon: float) -> Any:
    import numpy as np

    dt = p.dtype.type
    c1, c2, eps = dt(1.0 - beta_1), dt(1.0 - beta_2), dt(epsilon)
    out = np.empty((3, *p.shape), dtype=p.dtype)
    o = out.reshape(3, -1)
    fp, fg, fm, fv = _flat(p), _flat(g), _flat(m), _flat(v)
    for s, e in _chunks(fp.size, p.dtype.itemsize):  # chunks keep every pass in cache
        p2, m2, v2 = o[0, s:e], o[1, s:e], o[2, s:e]
        gg, mm, vv = fg[s:e], fm[s:e], fv[s:e]
        np.subtract(gg, mm, out=m2)  # m + (g - m)(1 - beta_1)
        m2 *= c1
        m2 += mm
        np.multiply(gg, gg, out=v2)  # v + (g^2 - v)(1 - beta_2)
        v2 -= vv
        v2 *= c2
        v2 += vv
        np.sqrt(v2, out=p2)  # p - alpha m / (sqrt(v) + epsilon)
        p2 += eps
        np.divide(m2, p2, out=p2)
        p2 *= alpha
        np.subtract(fp[s:e], p2, out=p2)
    return out


def _np_sgd_momentum(p: Any, g: Any, vel: Any, lr: Any, *, momentum: float,
                     nesterov: bool) -> Any:
    import numpy as np

    mu = p.dtype.type(momentum)
    out = np.empty((2, *p.shape), dtype=p.dtype)
    o = out.reshape(2, -1)
    fp, fg, fv = _flat(p), _flat(g), _flat(vel)
    for s, e in _chunks(fp.size, p.dtype.itemsize):
        p2, v2 = o[0, s:e], o[1, s:e]
        np.multiply(fg[s:e], lr, out=p2)  # p2 holds lr * g for now
        np.multiply(fv[s:e], mu, out=v2)
        v2 -= p2  # v = momentum v - lr g
        if nesterov:  # p + momentum v - lr g
            p2 *= -1
            p2 += mu * v2
            p2 += fp[s:e]
        else:
            np.add(fp[s:e], v2, out=p2)
    return out


def _np_rmsprop(p: Any, g: Any, sq: Any, lr: Any, *, rho: float, epsilon: float) -> Any:
    import numpy as np

    dt = p.dtype.type
    out = np.empty((2, *p.shape), dtype=p.dtype)
    o = out.reshape(2, -1)
    fp, fg, fs = _flat(p), _flat(g), _flat(sq)
    for s, e in _chunks(fp.size, p.dtype.itemsize):
        p2, s2 = o[0, s:e], o[1, s:e]
        gg = fg[s:e]
        np.multiply(gg, gg, out=s2)  # rho s + (1 - rho) g^2
        s2 *= dt(1.0 - rho)
        np.multiply(fs[s:e], dt(rho), out=p2)
        s2 += p2
        np.add(s2, dt(epsilon), out=p2)  # p - lr g / sqrt(s + epsilon)
        np.sqrt(p2, out=p2)
        np.divide(gg, p2, out=p2)
        p2 *= lr
        np.subtract(fp[s:e], p2, out=p2)
    return out


def _tf_adam(p: Any, g: Any, m: Any, v: Any, alpha: Any, *, beta_1: float, beta_2: float,
             epsilon: float) -> Any:
    import tensorflow as tf

    m2 = m + (g - m) * (1.0 - beta_1)
    v2 = v + (g * g - v) * (1.0 - beta_2)
    return tf.stack([p - alpha * m2 / (tf.sqrt(v2) + epsilon), m2, v2])


def _tf_sgd_momentum(p: Any, g: Any, vel: Any, lr: Any, *, momentum: float,
                     nesterov: bool) -> Any:
    import tensorflow as tf

    step = lr * g
    v2 = momentum * vel - step
    return tf.stack([p + (momentum * v2 - step) if nesterov else p + v2, v2])


def _tf_rmsprop(p: Any, g: Any, sq: Any, lr: Any, *, rho: float, epsilon: float) -> Any:
    import tensorflow as tf

    s2 = rho * sq + (1.0 - rho) * (g * g)
    return tf.stack([p - lr * g / tf.sqrt(s2 + epsilon), s2])


register_kernel("numpy", ADAM, _np_adam)
register_kernel("numpy", SGD_MOMENTUM, _np_sgd_momentum)
register_kernel("numpy", RMSPROP, _np_rmsprop)
register_kernel("tensorflow", ADAM, _tf_adam)
register_kernel("tensorflow", SGD_MOMENTUM, _tf_sgd_momentum)
register_kernel("tensorflow", RMSPROP, _tf_rmsprop)

_FUSED = {name: Primitive(name, kernel_impl(name)) for name in (ADAM, SGD_MOMENTUM, RMSPROP)}


def fused_update(name: str, *args: Tensor, **params: Any) -> list[Tensor] | None:
    """The rows of a fused update kernel's result, or None when it cannot be used here (the
    backend lacks the kernel, or the arguments are being differentiated)."""
    from ..autodiff.core import Tracer

    p = args[0]
    if name not in p.backend.kernels or any(isinstance(a, Tracer) for a in args):
        return None
    out = bind(_FUSED[name], args, params)
    return [out[i] for i in range(out.shape[0])]


# -- softmax cross-entropy with integer labels ---------------------------------------------------
# ``logsumexp(z) - z[label]`` per sample, and its gradient ``(softmax(z) - onehot) * g``, each
# one kernel (TensorFlow's sparse_softmax_cross_entropy_with_logits). The gradient is itself a
# primitive whose derivative rules are written with ops, so second derivatives work too.
SPARSE_CE = "layers.sparse_softmax_ce"
SPARSE_CE_GRAD = "layers.sparse_softmax_ce_grad"


_ARANGE: dict[int, Any] = {}


def _rows(n: int) -> Any:
    import numpy as np

    r = _ARANGE.get(n)
    if r is None:
        if len(_ARANGE) > 64:
            _ARANGE.clear()
        r = _ARANGE[n] = np.arange(n)
    return r


def _flat_labels(labels: Any, depth: int) -> Any:
    lab = labels.reshape(-1)
    if lab.size and (lab.min() < 0 or lab.max() >= depth):
        raise ValueError(f"labels: class ids must be in [0, {depth}), got values in "
                         f"[{int(lab.min())}, {int(lab.max())}]")
    return lab


def _np_sparse_ce(z: Any, labels: Any, *, reduce: str) -> Any:
    import numpy as np

    depth = z.shape[-1]
    lab = _flat_labels(labels, depth)
    z2 = z.reshape(-1, depth)
    m = z2.max(axis=1)
    e = z2 - m[:, None]
    np.exp(e, out=e)
    loss = np.log(np.add.reduce(e, axis=1))
    loss += m
    loss -= z2[_rows(z2.shape[0]), lab]
    if reduce == "mean":
        return np.asarray(np.add.reduce(loss) / max(loss.size, 1), dtype=z.dtype)
    return loss.reshape(labels.shape)


def _np_sparse_ce_grad(z: Any, labels: Any, g: Any, *, reduce: str) -> Any:
    import numpy as np

    depth = z.shape[-1]
    z2 = z.reshape(-1, depth)
    p = z2 - z2.max(axis=1)[:, None]
    np.exp(p, out=p)
    p /= np.add.reduce(p, axis=1)[:, None]
    p[_rows(p.shape[0]), labels.reshape(-1)] -= 1  # labels were checked by the forward kernel
    if reduce == "mean":
        p *= g / max(p.shape[0], 1)
    else:
        p *= g.reshape(-1, 1)
    return p.reshape(z.shape)


def _tf_sparse_ce(z: Any, labels: Any, *, reduce: str) -> Any:
    import tensorflow as tf

    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=z)
    return tf.reduce_mean(loss) if reduce == "mean" else loss


def _tf_sparse_ce_grad(z: Any, labels: Any, g: Any, *, reduce: str) -> Any:
    import tensorflow as tf

    onehot = tf.one_hot(labels, tf.shape(z)[-1], dtype=z.dtype)
    if reduce == "mean":
        n = tf.cast(tf.size(labels), z.dtype)
        return (tf.nn.softmax(z) - onehot) * (g / n)
    return (tf.nn.softmax(z) - onehot) * g[..., None]


register_kernel("numpy", SPARSE_CE, _np_sparse_ce)
register_kernel("numpy", SPARSE_CE_GRAD, _np_sparse_ce_grad)
register_kernel("tensorflow", SPARSE_CE, _tf_sparse_ce)
register_kernel("tensorflow", SPARSE_CE_GRAD, _tf_sparse_ce_grad)

_sce = Primitive("sparse_softmax_cross_entropy", kernel_impl(SPARSE_CE))
_sce_grad = Primitive("sparse_softmax_cross_entropy_grad", kernel_impl(SPARSE_CE_GRAD))
_sce.defvjp(lambda g, ans, z, labels, *, reduce: bind(_sce_grad, (z, labels, g),
                                                     {"reduce": reduce}), None)


def _per_row(g: Any, labels: Any, reduce: str) -> Any:
    """The cotangent of each sample's loss as a trailing-axis column."""
    from .. import ops

    if reduce == "mean":
        return g * (1.0 / max(labels.size, 1))
    return ops.expand_dims(g, -1)


def _sce_grad_vjp_z(u: Any, ans: Any, z: Any, labels: Any, g: Any, *, reduce: str) -> Any:
    from .. import ops

    p = ops.softmax(z, -1)
    gu = u * _per_row(g, labels, reduce)
    return p * gu - p * ops.sum(p * gu, axis=-1, keepdims=True)


def _sce_grad_vjp_g(u: Any, ans: Any, z: Any, labels: Any, g: Any, *, reduce: str) -> Any:
    from .. import ops

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


# -- tfjs (TF.js inside Pyodide: the JS runs next to the tfjs backend's kernel host) -----------
# Each kernel is one FFI call into ``backends/tfjs_layer_kernels.js``: the host's tensors are
# looked up by id, the result is registered with the host and wrapped as a TfjsArray.
_TFJS: list[Any] = []  # [the JS kernel object, tfjs_backend], made on first use


def _tfjs() -> tuple[Any, Any]:
    if not _TFJS:
        import js

        from ..backends import tfjs_backend as tb_

        if tb_._HOST is None:
            raise RuntimeError("tfjs backend: not installed")
        src = files(tb_.__package__).joinpath("tfjs_layer_kernels.js").read_text(encoding="utf-8")
        make = js.Function.new("H", "tf", src + "\nreturn makeLayerKernels(H, tf);\n")
        _TFJS.extend([make(tb_._HOST, tb_._TF), tb_])
    return _TFJS[0], _TFJS[1]


def _scalar_arg(x: Any) -> tuple[int, float]:
    """(host id, 0.0) for a tfjs buffer, (0, value) for a Python number."""
    return (x.id, 0.0) if hasattr(x, "id") else (0, float(x))


def _tfjs_gather(table: Any, indices: Any) -> Any:
    k, be = _tfjs()
    return be._out(k.gather(table.id, indices.id), table.dtype)


def _tfjs_scatter(updates: Any, indices: Any, *, num_rows: int) -> Any:
    k, be = _tfjs()
    return be._out(k.scatter(updates.id, indices.id, int(num_rows)), updates.dtype)


def _tfjs_adam(p: Any, g: Any, m: Any, v: Any, alpha: Any, *, beta_1: float, beta_2: float,
               epsilon: float) -> Any:
    k, be = _tfjs()
    return be._out(k.adam(p.id, g.id, m.id, v.id, *_scalar_arg(alpha), float(beta_1),
                          float(beta_2), float(epsilon)), p.dtype)


def _tfjs_sgd_momentum(p: Any, g: Any, vel: Any, lr: Any, *, momentum: float,
                       nesterov: bool) -> Any:
    k, be = _tfjs()
    return be._out(k.sgd(p.id, g.id, vel.id, *_scalar_arg(lr), float(momentum),
                         bool(nesterov)), p.dtype)


def _tfjs_rmsprop(p: Any, g: Any, sq: Any, lr: Any, *, rho: float, epsilon: float) -> Any:
    k, be = _tfjs()
    return be._out(k.rmsprop(p.id, g.id, sq.id, *_scalar_arg(lr), float(rho),
                             float(epsilon)), p.dtype)


def _tfjs_sparse_ce(z: Any, labels: Any, *, reduce: str) -> Any:
    k, be = _tfjs()
    depth = z.shape[-1]
    lo, hi = k.labelRange(labels.id).to_py()
    if lo < 0 or hi >= depth:
        raise ValueError(f"labels: class ids must be in [0, {depth}), got values in "
                         f"[{int(lo)}, {int(hi)}]")
    return be._out(k.sce(z.id, labels.id, reduce == "mean"), z.dtype)


def _tfjs_sparse_ce_grad(z: Any, labels: Any, g: Any, *, reduce: str) -> Any:
    k, be = _tfjs()
    return be._out(k.sceGrad(z.id, labels.id, g.id, reduce == "mean"), z.dtype)


register_kernel("tfjs", GATHER, _tfjs_gather)
register_kernel("tfjs", SCATTER, _tfjs_scatter)
register_kernel("tfjs", ADAM, _tfjs_adam)
register_kernel("tfjs", SGD_MOMENTUM, _tfjs_sgd_momentum)
register_kernel("tfjs", RMSPROP, _tfjs_rmsprop)
register_kernel("tfjs", SPARSE_CE, _tfjs_sparse_ce)
register_kernel("tfjs", SPARSE_CE_GRAD, _tfjs_sparse_ce_grad)
