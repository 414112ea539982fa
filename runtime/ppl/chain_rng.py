"""Random numbers for chains run in lockstep, each chain from its own stream, the same numbers
with NumPy (Python, R) and without it (Pyodide: Node and the browser).

Why per chain: a chain's draws must not depend on which other chains share its batch, so that
the same seed gives the same draws whether the chains run in one process or split over worker
processes (``mcmc(..., n_cores=k)``). One shared generator cannot give that: lockstep NUTS draws
for the whole batch while *any* chain is still doubling its tree, so the numbers a chain sees
depend on its neighbours' tree depths.

Why one design everywhere: a seed must mean the same numbers through every front door. So the
streams are built on the runtime's own Philox-4x32-10 (:mod:`tensorbridge.runtime.random`,
checked against Random123's known answers), never on NumPy's generators:

* chain ``c`` (its index among *all* chains of the run) has the key
  ``philox4x32((c_lo, c_hi, 0, KEY_TAG), (seed_lo, seed_hi))[:2]`` (the seed taken mod 2**64);
* the sampler restarts every chain's stream at the start of each iteration:
  ``restart(i, purpose)`` sets the counter to ``(block_lo, block_hi, i, purpose)`` with the
  block index from 0, so chain ``c``'s numbers are a function of ``(seed, c, i)`` and of its own
  trajectory only (the numbers drawn for a chain that has already stopped are never read);
* a uniform double takes two words: ``((w0 >> 5) * 2**26 + (w1 >> 6)) * 2**-53``, in [0, 1);
* a standard normal takes two uniforms (Box-Muller, both outputs used, in order):
  ``r = sqrt(-2 log(1 - u1))``, ``r cos(2 pi u2)``, ``r sin(2 pi u2)``, computed with Python's
  ``math`` (the platform's libm: bit for bit the same wherever the libm is, and within a few
  ulps elsewhere, e.g. in a browser).

With NumPy the words and uniforms are computed vectorised across chains (the same integers and
the same doubles), without it in plain Python (or JavaScript in Pyodide, word for word).

Chain axis: ``standard_normal``/``normal``/``uniform`` take ``size`` with the chains first;
``random`` with the chains last (NUTS draws its ``(depth, chain)`` uniforms that way). 1-D sizes
are one number per chain either way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..host_namespace import xp as _default_xp
from ..random import _philox_js, _philox_numpy, _philox_python, _uniform53, philox4x32

try:
    import numpy
except ImportError:  # Pyodide's core: the same streams in plain Python
    numpy = None

__all__ = ["ChainStreams", "chain_key", "chain_rng", "fresh_seed", "restart"]

# Philox counter words: (block_lo, block_hi, iteration, purpose)
PURPOSE_TRANSITION, PURPOSE_STEP_SEARCH, PURPOSE_INIT = 0, 1, 2
KEY_TAG = 0x6B657973  # "keys": the counter word that derives chain keys from the seed
_MASK32 = 0xFFFFFFFF
_TWO_PI = 2.0 * math.pi


def fresh_seed() -> int:
    """A random seed, drawn once in the parent so every worker shares it."""
    import secrets

    return secrets.randbits(63)


def chain_key(seed: int, chain: int) -> tuple[int, int]:
    """The Philox key of chain ``chain`` of a run seeded with ``seed``."""
    s = int(seed) & 0xFFFFFFFFFFFFFFFF
    w = philox4x32((chain & _MASK32, (chain >> 32) & _MASK32, 0, KEY_TAG),
                   (s & _MASK32, s >> 32))
    return w[0], w[1]


def _words_python(key: tuple[int, int], start: int, nblocks: int, c2: int,
                  c3: int) -> list[int]:
    fast = _philox_js(key, start, nblocks, c2, c3)  # Pyodide: the same words from JavaScript
    return fast if fast is not None else _philox_python(key, start, nblocks, c2, c3)


def _box_muller(u: Sequence[float], m: int) -> list[float]:
    """``m`` standard normals from ``2 * ceil(m / 2)`` uniforms."""
    out: list[float] = []
    log, sqrt, cos, sin = math.log, math.sqrt, math.cos, math.sin
    for k in range(0, 2 * ((m + 1) // 2), 2):
        r = sqrt(-2.0 * log(1.0 - u[k]))
        t = _TWO_PI * u[k + 1]
        out.append(r * cos(t))
        out.append(r * sin(t))
    return out[:m]


class ChainStreams:
    """A ``numpy.random.Generator``-like object drawing each chain's numbers from its stream.

    ``xp`` is the array module the sampler runs on (NumPy, or the pure-Python arrays of
    Pyodide); the numbers are the same either way. Uniforms are made per chain in chunks and
    handed out by a position shared by the batch (NUTS asks for a few numbers per chain at
    every tree depth).
    """

    _CHUNK = 32  # Philox blocks per refill: 64 doubles per chain

    def __init__(self, seed: int, chain_ids: Sequence[int], xp: Any = None) -> None:
        xp = _default_xp if xp is None else xp
        self.xp = xp
        self.chain_ids = [int(c) for c in chain_ids]
        self.b = len(self.chain_ids)
        self.keys = [chain_key(seed, c) for c in self.chain_ids]
        self._native = numpy is not None and xp is numpy
        if self._native:
            self._key_array = numpy.array(self.keys, dtype=numpy.uint64).reshape(self.b, 2)
        self.restart(0, PURPOSE_INIT)

    def restart(self, iteration: int, purpose: int = PURPOSE_TRANSITION) -> None:
        self._c2, self._c3 = iteration & _MASK32, purpose & _MASK32
        self._block = 0
        self._pending: Any = numpy.empty((self.b, 0)) if self._native else [[] for _ in
                                                                            range(self.b)]

    def _refill(self, m: int) -> None:
        have = self._pending.shape[1] if self._native else len(self._pending[0])
        nblocks = max(self._CHUNK, (m - have + 1) // 2)
        start, self._block = self._block, self._block + nblocks
        if self._native:
            u = _uniform53(_philox_numpy(self._key_array, start, nblocks, self._c2, self._c3))
            self._pending = numpy.concatenate([self._pending, u], axis=1)
        else:
            for c, key in enumerate(self.keys):
                self._pending[c].extend(_uniform53(_words_python(key, start, nblocks, self._c2,
                                                                 self._c3)))

    def _take(self, m: int) -> Any:
        """The next ``m`` uniforms of every chain: ``(b, m)`` (NumPy) or ``b`` lists."""
        have = self._pending.shape[1] if self._native else len(self._pending[0])
        if have < m:
            self._refill(m)
        if self._native:
            out, self._pending = self._pending[:, :m], self._pending[:, m:]
            return out
        out = [row[:m] for row in self._pending]
        self._pending = [row[m:] for row in self._pending]
        return out

    def _rest(self, size: Any, axis: int) -> tuple[int, ...]:
        size = (size,) if isinstance(size, int) or (numpy is not None and isinstance(
            size, numpy.integer)) else tuple(size)
        if not size or size[axis] != self.b:
            where = "first" if axis == 0 else "last"
            raise ValueError(f"chain streams: size {size} must have the {self.b} chains on its "
                             f"{where} axis")
        return size[1:] if axis == 0 else size[:-1]

    def _array(self, rows: Any, shape: tuple[int, ...]) -> Any:
        if self._native:
            return numpy.asarray(rows, dtype=numpy.float64).reshape(shape)
        return self.xp.from_flat([v for row in rows for v in row], shape)

    def standard_normal(self, size: Any) -> Any:
        rest = self._rest(size, 0)
        m = math.prod(rest)
        u = self._take(2 * ((m + 1) // 2))
        rows = [_box_muller(row.tolist() if self._native else row, m) for row in u]
        return self._array(rows, (self.b, *rest))

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        return loc + scale * self.standard_normal(self.b if size is None else size)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> Any:
        rest = self._rest(self.b if size is None else size, 0)
        u = self._take(math.prod(rest))
        if self._native:
            return low + (high - low) * u.reshape(self.b, *rest)
        rows = [[low + (high - low) * v for v in row] for row in u]
        return self._array(rows, (self.b, *rest))

    def random(self, size: Any = None) -> Any:
        rest = self._rest(self.b if size is None else size, -1)
        m = math.prod(rest)
        u = self._take(m)  # (b, m) -> (*rest, b)
        if self._native:
            return numpy.ascontiguousarray(u.T).reshape(*rest, self.b)
        cols = [[u[c][k] for c in range(self.b)] for k in range(m)]
        return self._array(cols, (*rest, self.b))


def chain_rng(seed: int | None, chains: int, chain_ids: Sequence[int] | None = None,
              xp: Any = None) -> ChainStreams:
    """Per-chain streams for ``chains`` chains (``chain_ids``: their indices in the run)."""
    ids = list(range(chains)) if chain_ids is None else list(chain_ids)
    return ChainStreams(fresh_seed() if seed is None else seed, ids, xp)


def restart(rng: Any, iteration: int, purpose: int = PURPOSE_TRANSITION) -> None:
    """Restart the per-chain streams at ``(iteration, purpose)``."""
    rng.restart(iteration, purpose)
