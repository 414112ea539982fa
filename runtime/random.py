"""Reproducible random numbers: the same seed gives the same numbers on every backend and in
every front door (Python, R, JavaScript).

Bits come from Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC 2011), a counter-based generator: block ``i`` of a stream is a pure function of (key, i), so
it is computed the same way by NumPy here and by plain Python where NumPy is absent. Values are
made on the host from those bits (uniform: the top 24/53 bits; normal: Box-Muller) and then handed
to the backend.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

from . import dtypes as D
from .backends import get_backend
from .dtypes import as_dtype
from .host_arrays import HostList, numpy_dtypes
from .staging import note_concretization
from .tensor import Tensor

__all__ = ["Generator", "default_generator", "normal", "seed", "uniform"]

_M0, _M1 = 0xD2511F53, 0xCD9E8D57
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK32 = 0xFFFFFFFF


def _philox_numpy(key: Any, start: int, nblocks: int, c2: int = 0, c3: int = 0) -> Any:
    """uint32 words of blocks ``start .. start + nblocks - 1`` (counter ``(block, c2, c3)``).

    ``key``: a pair of ints (returns ``4 * nblocks`` words) or a ``(streams, 2)`` array of
    keys, one stream each (returns ``(streams, 4 * nblocks)``, vectorised across streams).
    """
    import numpy as np

    u64 = np.uint64
    keys = np.asarray(key, dtype=u64)
    k0, k1 = keys[..., 0:1], keys[..., 1:2]  # (1,) for a pair, (streams, 1) for an array
    ctr = np.arange(start, start + nblocks, dtype=u64)
    shape = (*k0.shape[:-1], nblocks)
    c0 = np.broadcast_to(ctr & u64(_MASK32), shape)
    c1 = np.broadcast_to(ctr >> u64(32), shape)
    c2a = np.full(shape, c2, dtype=u64)
    c3a = np.full(shape, c3, dtype=u64)
    m0, m1, mask, s32 = u64(_M0), u64(_M1), u64(_MASK32), u64(32)
    for _ in range(10):
        p0 = m0 * c0
        p1 = m1 * c2a
        c0, c1, c2a, c3a = (p1 >> s32) ^ c1 ^ k0, p1 & mask, (p0 >> s32) ^ c3a ^ k1, p0 & mask
        k0 = (k0 + u64(_W0)) & mask
        k1 = (k1 + u64(_W1)) & mask
    return np.stack([c0, c1, c2a, c3a], axis=-1).astype(np.uint32).reshape(
        *shape[:-1], 4 * nblocks)


def _uniform53(words: Any) -> Any:
    """Doubles in [0, 1) from pairs of words (the last axis): ``((w0 >> 5) * 2**26 + (w1 >> 6))
    * 2**-53``; a NumPy array of words or a list."""
    if isinstance(words, list):
        return [((words[k] >> 5) * 67108864.0 + (words[k + 1] >> 6)) * 2.0**-53
                for k in range(0, len(words) - 1, 2)]
    import numpy as np

    a = (words[..., 0::2] >> np.uint32(5)).astype(np.float64)
    b = (words[..., 1::2] >> np.uint32(6)).astype(np.float64)
    return (a * 67108864.0 + b) * 2.0**-53


def philox4x32(counter: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, ...]:
    """One Philox-4x32-10 block: four 32-bit words from a 128-bit counter and a 64-bit key."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & _MASK32, (p0 >> 32) ^ c3 ^ k1, p0 & _MASK32
        k0 = (k0 + _W0) & _MASK32
        k1 = (k1 + _W1) & _MASK32
    return c0, c1, c2, c3


def _philox_python(key: tuple[int, int], start: int, nblocks: int, c2: int = 0,
                   c3: int = 0) -> list[int]:
    out: list[int] = []
    for i in range(start, start + nblocks):
        out.extend(philox4x32((i & _MASK32, (i >> 32) & _MASK32, c2, c3), key))
    return out


# Pyodide without NumPy: the same blocks computed by JavaScript (uint32 arithmetic with exact
# 32 x 32 -> 64-bit products from 16-bit halves), ~50x faster than the Python loop; one FFI call
# per draw. Checked word for word against philox4x32 (js-client/test/node/layers.test.mjs).
_PHILOX_JS = r"""
const M0 = 0xD2511F53, M1 = 0xCD9E8D57, W0 = 0x9E3779B9, W1 = 0xBB67AE85;
function mulhilo(a, b, out, i) {  // out[i] = high word, out[i + 1] = low word of a * b
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const lolo = a0 * b0, hilo = a1 * b0, lohi = a0 * b1, hihi = a1 * b1;
  const mid = (lolo >>> 16) + (hilo & 0xffff) + (lohi & 0xffff);
  out[i + 1] = ((mid << 16) | (lolo & 0xffff)) >>> 0;
  out[i] = (hihi + (hilo >>> 16) + (lohi >>> 16) + (mid >>> 16)) >>> 0;
}
const out = new Uint32Array(4 * n), p = new Uint32Array(4);
let lo = startLo >>> 0, hi = startHi >>> 0;
for (let b = 0; b < n; b++) {
  let c0 = lo, c1 = hi, c2 = ctr2 >>> 0, c3 = ctr3 >>> 0, k0 = key0 >>> 0, k1 = key1 >>> 0;
  for (let r = 0; r < 10; r++) {
    mulhilo(M0, c0, p, 0);
    mulhilo(M1, c2, p, 2);
    const n0 = (p[2] ^ c1 ^ k0) >>> 0, n2 = (p[0] ^ c3 ^ k1) >>> 0;
    c1 = p[3]; c3 = p[1]; c0 = n0; c2 = n2;
    k0 = (k0 + W0) >>> 0; k1 = (k1 + W1) >>> 0;
  }
  out[4 * b] = c0; out[4 * b + 1] = c1; out[4 * b + 2] = c2; out[4 * b + 3] = c3;
  lo = (lo + 1) >>> 0;
  if (lo === 0) hi = (hi + 1) >>> 0;
}
return out;
"""
_PHILOX_JS_FN: list[Any] = []


def _philox_js(key: tuple[int, int], start: int, nblocks: int, c2: int = 0,
               c3: int = 0) -> list[int] | None:
    """The blocks from JavaScript in Pyodide (None elsewhere, or for tiny draws); ``c2``, ``c3``
    are the counter's high words (0 for :class:`Generator`)."""
    if sys.platform != "emscripten" or nblocks < 64:
        return None
    if not _PHILOX_JS_FN:
        import js

        _PHILOX_JS_FN.append(js.Function.new("key0", "key1", "startLo", "startHi", "n",
                                             "ctr2", "ctr3", _PHILOX_JS))
    words = _PHILOX_JS_FN[0](key[0], key[1], start & _MASK32, (start >> 32) & _MASK32, nblocks,
                             c2, c3)
    return words.to_py().tolist()


def _has_numpy() -> bool:
    try:
        import numpy  # noqa: F401

        return True
    except ImportError:  # pragma: no cover
        return False


class Generator:
    """A stream of random numbers. ``Generator(seed)`` twice gives the same numbers.

    Every draw advances the stream; ``split(n)`` derives independent child streams (for
    parallel chains), and ``state``/``set_state`` save and restore a position.
    """

    def __init__(self, seed: int = 0) -> None:
        if not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed: expected a non-negative int, got {seed!r}")
        self._key = (seed & _MASK32, (seed >> 32) & _MASK32)
        self._counter = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Generator(key={self._key}, counter={self._counter})"

    @property
    def state(self) -> dict[str, Any]:
        return {"key": list(self._key), "counter": self._counter}

    def set_state(self, state: dict[str, Any]) -> None:
        self._key = (int(state["key"][0]), int(state["key"][1]))
        self._counter = int(state["counter"])

    # -- raw bits ------------------------------------------------------------------------------
    def _words(self, n: int) -> Any:
        note_concretization("a random number was drawn")  # a staged replay would repeat it
        nblocks = (n + 3) // 4
        with self._lock:
            start = self._counter
            self._counter += nblocks
        if _has_numpy():
            return _philox_numpy(self._key, start, nblocks)[:n]
        words = _philox_js(self._key, start, nblocks)
        if words is None:
            words = _philox_python(self._key, start, nblocks)
        return words[:n]

    def _uniform_host(self, n: int, dtype: D.DType) -> Any:
        """n floats in [0, 1) as a NumPy float64 array (or a list)."""
        if dtype is D.float64:
            return _uniform53(self._words(2 * n))
        w = self._words(n)
        if _has_numpy():
            import numpy as np

            return (w >> np.uint32(8)).astype(np.float64) / 16777216.0
        return [(x >> 8) / 16777216.0 for x in w]

    def _to_backend(self, values: Any, shape: tuple[int, ...], dtype: D.DType,
                    backend: Any) -> Tensor:
        be = get_backend(backend)
        if _has_numpy():
            import numpy as np

            arr = np.asarray(values).astype(numpy_dtypes()[0][dtype]).reshape(shape)
            return be.from_host(arr, dtype, copy=False)
        cast = float if dtype.kind == "f" else int
        return be.from_host(HostList([cast(v) for v in values], shape, dtype), dtype, copy=False)

    # -- distributions --------------------------------------------------------------------------
    def uniform(self, shape: Any = (), low: float = 0.0, high: float = 1.0,
                dtype: Any = "float32", backend: Any = None) -> Tensor:
        """Uniform on ``[low, high)``."""
        shape, dt = _shape(shape), as_dtype(dtype)
        if not low < high:
            raise ValueError(f"uniform: need low < high, got low={low}, high={high}")
        n = _size(shape)
        u = self._uniform_host(n, dt)
        if _has_numpy():
            vals = low + (high - low) * u
            if dt is D.float32:
                import numpy as np

                vals = np.minimum(vals.astype(np.float32), np.nextafter(np.float32(high),
                                                                        np.float32(low)))
        else:
            vals = [low + (high - low) * x for x in u]
        return self._to_backend(vals, shape, dt, backend)

    def normal(self, shape: Any = (), mean: float = 0.0, std: float = 1.0,
               dtype: Any = "float32", backend: Any = None) -> Tensor:
        """Normal(mean, std), by the Box-Muller transform of 53-bit uniforms."""
        shape, dt = _shape(shape), as_dtype(dtype)
        if std < 0:
            raise ValueError(f"normal: std must be >= 0, got {std}")
        z = self._std_normal_host(_size(shape))
        vals = mean + std * z if _has_numpy() else [mean + std * v for v in z]
        return self._to_backend(vals, shape, dt, backend)

    def _std_normal_host(self, n: int) -> Any:
        u = self._uniform_host(2 * n, D.float64)
        if _has_numpy():
            import numpy as np

            u1, u2 = u[0::2], u[1::2]
            return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
        return [math.sqrt(-2.0 * math.log1p(-u[2 * i])) * math.cos(2.0 * math.pi * u[2 * i + 1])
                for i in range(n)]

    def truncated_normal(self, shape: Any = (), mean: float = 0.0, std: float = 1.0,
                         lower: float = -2.0, upper: float = 2.0, dtype: Any = "float32",
                         backend: Any = None) -> Tensor:
        """Normal(mean, std) restricted to ``[mean + lower*std, mean + upper*std]``
        (rejection sampling: redraw outside values)."""
        shape, dt = _shape(shape), as_dtype(dtype)
        n = _size(shape)
        if not lower < upper:
            raise ValueError("truncated_normal: need lower < upper")
        kept: list[float] = []
        while len(kept) < n:
            z = self._std_normal_host(max(16, 2 * (n - len(kept))))
            kept.extend(float(v) for v in z if lower <= v <= upper)
        vals = [mean + std * v for v in kept[:n]]
        return self._to_backend(vals, shape, dt, backend)

    def integers(self, low: int, high: int | None = None, shape: Any = (),
                 dtype: Any = "int32", backend: Any = None) -> Tensor:
        """Uniform integers in ``[low, high)`` (``integers(n)`` draws from ``[0, n)``)."""
        if high is None:
            low, high = 0, low
        if not low < high:
            raise ValueError(f"integers: need low < high, got {low}, {high}")
        shape = _shape(shape)
        u = self._uniform_host(_size(shape), D.float64)
        span = high - low
        vals = [low + min(int(x * span), span - 1) for x in (u.tolist() if _has_numpy() else u)]
        return self._to_backend(vals, shape, as_dtype(dtype), backend)

    def bernoulli(self, p: float = 0.5, shape: Any = (), dtype: Any = "float32",
                  backend: Any = None) -> Tensor:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"bernoulli: p must be in [0, 1], got {p}")
        shape = _shape(shape)
        u = self._uniform_host(_size(shape), D.float64)
        vals = [1 if x < p else 0 for x in (u.tolist() if _has_numpy() else u)]
        return self._to_backend(vals, shape, as_dtype(dtype), backend)

    def permutation(self, n: int) -> list[int]:
        """A random permutation of ``range(n)`` (Fisher-Yates), as a Python list."""
        u = self._uniform_host(n, D.float64)
        u = u.tolist() if _has_numpy() else u
        perm = list(range(n))
        for i in range(n - 1, 0, -1):
            j = min(int(u[i] * (i + 1)), i)
            perm[i], perm[j] = perm[j], perm[i]
        return perm

    def split(self, n: int = 2) -> list[Generator]:
        """``n`` independent generators whose keys are drawn from this stream."""
        words = self._words(2 * n)
        words = words.tolist() if _has_numpy() else words
        kids = []
        for i in range(n):
            g = Generator(0)
            g._key = (int(words[2 * i]), int(words[2 * i + 1]))
            kids.append(g)
        return kids


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(d) for d in shape)


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


_default = Generator(0)


def default_generator() -> Generator:
    return _default


def seed(value: int) -> Generator:
    """Reset the default generator to ``value``; returns it."""
    global _default
    _default = Generator(value)
    return _default


def normal(shape: Any = (), mean: float = 0.0, std: float = 1.0, dtype: Any = "float32",
           backend: Any = None, generator: Generator | None = None) -> Tensor:
    return (generator or _default).normal(shape, mean, std, dtype, backend)


def uniform(shape: Any = (), low: float = 0.0, high: float = 1.0, dtype: Any = "float32",
            backend: Any = None, generator: Generator | None = None) -> Tensor:
    return (generator or _default).uniform(shape, low, high, dtype, backend)
