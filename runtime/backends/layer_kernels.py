"""The backends' kernels for the layers' primitives (``layers/primitives.py``).

Kernel names are ``"layers.*"``; each backend that has them registers its functions here, through
the public kernel API (another backend adds its own with ``tb.register_kernel(backend, name,
fn)``; the layers fall back to composite formulas where a backend has none):

* ``layers.gather_rows`` / ``layers.scatter_add_rows``: rows of a table at integer indices given
  as a tensor (so an embedding lookup is staged like any op), and the scatter-add of rows that is
  its gradient;
* ``layers.adam_step``, ``layers.sgd_momentum_step``, ``layers.rmsprop_step``: one optimizer step
  per variable as one kernel call, returning the new value and slots stacked as rows;
* ``layers.sparse_softmax_ce`` / ``layers.sparse_softmax_ce_grad``: softmax cross-entropy with
  integer labels and its gradient.

Kernels exist for ``numpy``, ``tensorflow`` (both imported only when a kernel runs) and ``tfjs``
(TF.js inside Pyodide: the JavaScript is ``tfjs_layer_kernels.js`` next to this file, evaluated
once next to the tfjs kernel host).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from typing import Any

from ..kernels import register_kernel
from . import tfjs_backend as tb_

__all__ = ["ADAM", "GATHER", "RMSPROP", "SCATTER", "SGD_MOMENTUM", "SPARSE_CE", "SPARSE_CE_GRAD"]

GATHER = "layers.gather_rows"
SCATTER = "layers.scatter_add_rows"
ADAM = "layers.adam_step"
SGD_MOMENTUM = "layers.sgd_momentum_step"
RMSPROP = "layers.rmsprop_step"
SPARSE_CE = "layers.sparse_softmax_ce"
SPARSE_CE_GRAD = "layers.sparse_softmax_ce_grad"


# -- rows of a table: gather, and the scatter-add of rows that is its gradient --------------------
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


def _tf_gather(table: Any, indices: Any) -> Any:
    import tensorflow as tf

    return tf.gather(table, indices, axis=0)


def _tf_scatter(updates: Any, indices: Any, *, num_rows: int) -> Any:
    import tensorflow as tf

    return tf.math.unsorted_segment_sum(updates, indices, num_rows)


# -- fused optimizer updates ---------------------------------------------------------------------
# The kernel allocates a single (k, *shape) buffer and computes the new value and slots into its
# rows in place (the inputs are never written); the layers take the rows out as views. On NumPy
# this removes most of the optimizer's memory traffic.
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


# -- softmax cross-entropy with integer labels ---------------------------------------------------
# ``logsumexp(z) - z[label]`` per sample, and its gradient ``(softmax(z) - onehot) * g``, each
# one kernel (TensorFlow's sparse_softmax_cross_entropy_with_logits).
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


# -- tfjs (TF.js inside Pyodide: the JS runs next to the tfjs backend's kernel host) -----------
# Each kernel is one FFI call into ``tfjs_layer_kernels.js``: the host's tensors are
# looked up by id, the result is registered with the host and wrapped as a TfjsArray.
_TFJS: list[Any] = []  # [the JS kernel object, tfjs_backend], made on first use


def _tfjs() -> tuple[Any, Any]:
    if not _TFJS:
        import js


        if tb_._HOST is None:
            raise RuntimeError("tfjs backend: not installed")
        src = files(__package__).joinpath("tfjs_layer_kernels.js").read_text(encoding="utf-8")
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


# each backend's layer kernels, registered in one place
_KERNELS: dict[str, dict[str, Callable[..., Any]]] = {
    "numpy": {
        GATHER: _np_gather,
        SCATTER: _np_scatter,
        ADAM: _np_adam,
        SGD_MOMENTUM: _np_sgd_momentum,
        RMSPROP: _np_rmsprop,
        SPARSE_CE: _np_sparse_ce,
        SPARSE_CE_GRAD: _np_sparse_ce_grad,
    },
    "tensorflow": {
        GATHER: _tf_gather,
        SCATTER: _tf_scatter,
        ADAM: _tf_adam,
        SGD_MOMENTUM: _tf_sgd_momentum,
        RMSPROP: _tf_rmsprop,
        SPARSE_CE: _tf_sparse_ce,
        SPARSE_CE_GRAD: _tf_sparse_ce_grad,
    },
    "tfjs": {
        GATHER: _tfjs_gather,
        SCATTER: _tfjs_scatter,
        ADAM: _tfjs_adam,
        SGD_MOMENTUM: _tfjs_sgd_momentum,
        RMSPROP: _tfjs_rmsprop,
        SPARSE_CE: _tfjs_sparse_ce,
        SPARSE_CE_GRAD: _tfjs_sparse_ce_grad,
    },
}
for _backend, _table in _KERNELS.items():
    for _name, _fn in _table.items():
        register_kernel(_backend, _name, _fn)
