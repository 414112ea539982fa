"""Random numbers for chains run in lockstep, each chain from its own stream.

Why: a chain's draws must not depend on which other chains share its batch, so that the same
seed gives the same draws whether the chains run in one process or split over worker processes
(``mcmc(..., n_cores=k)``). One shared generator cannot give that: lockstep NUTS draws for the
whole batch while *any* chain is still doubling its tree, so the numbers a chain sees depend on
its neighbours' tree depths.

So chain ``c`` (its index among *all* chains of the run) owns a Philox key derived from
``(seed, c)``, and the sampler restarts every chain's stream at the start of each iteration
(``restart(i, purpose)`` puts ``(i, purpose)`` in Philox's counter). Within an iteration every
call draws for every chain of the batch, in the same order whatever the batch, so chain ``c``'s
numbers are a function of ``(seed, c, i)`` and of its own trajectory only; the numbers drawn
for a chain that has already stopped are never read.

Chain axis: ``standard_normal``/``normal``/``uniform`` take ``size`` with the chains first;
``random`` with the chains last (NUTS draws its ``(depth, chain)`` uniforms that way). 1-D sizes
are one number per chain either way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

try:
    import numpy
except ImportError:  # Pyodide's core: chain_rng() falls back to the array module's generator
    numpy = None

__all__ = ["ChainStreams", "chain_rng", "fresh_seed", "restart"]

# Philox counter words: (0, 0, iteration, purpose); draws advance the low words
PURPOSE_TRANSITION, PURPOSE_STEP_SEARCH, PURPOSE_INIT = 0, 1, 2


def fresh_seed() -> int:
    """A random seed, drawn once in the parent so every worker shares it."""
    if numpy is None:
        import secrets

        return secrets.randbits(63)
    return int(numpy.random.SeedSequence().entropy)


class ChainStreams:
    """A ``numpy.random.Generator``-like object drawing each chain's numbers from its stream.

    Uniforms are drawn per chain in chunks and handed out by a position shared by the batch
    (one NumPy call per chain per chunk instead of per request: NUTS asks for a few numbers
    per chain at every tree depth).
    """

    _CHUNK = 64

    def __init__(self, seed: int, chain_ids: Sequence[int]) -> None:
        self.chain_ids = [int(c) for c in chain_ids]
        self.b = len(self.chain_ids)
        self._bits = []
        self._states = []
        for c in self.chain_ids:
            key = numpy.random.SeedSequence([int(seed), c]).generate_state(2, numpy.uint64)
            bits = numpy.random.Philox(key=key)
            st = bits.state
            # restart() rewrites the counter in place and sets this state: ~10x cheaper than
            # building a new Philox per chain per iteration
            self._states.append({"bit_generator": "Philox",
                                 "state": {"counter": numpy.zeros(4, numpy.uint64),
                                           "key": st["state"]["key"]},
                                 "buffer": st["buffer"], "buffer_pos": 4, "has_uint32": 0,
                                 "uinteger": 0})
            self._bits.append(bits)
        self._gens = [numpy.random.Generator(bits) for bits in self._bits]
        self.restart(0, PURPOSE_INIT)

    def restart(self, iteration: int, purpose: int = PURPOSE_TRANSITION) -> None:
        for bits, st in zip(self._bits, self._states):
            ctr = st["state"]["counter"]
            ctr[2], ctr[3] = iteration, purpose
            bits.state = st
        self._u = numpy.empty((self.b, 0))
        self._pos = 0

    def _uniforms(self, m: int) -> numpy.ndarray:
        """The next ``m`` uniforms of every chain: ``(b, m)``."""
        if self._pos + m > self._u.shape[1]:
            more = numpy.stack([g.random(max(self._CHUNK, m)) for g in self._gens])
            self._u = numpy.concatenate([self._u[:, self._pos:], more], axis=1)
            self._pos = 0
        out = self._u[:, self._pos:self._pos + m]
        self._pos += m
        return out

    def _rest(self, size: Any, axis: int) -> tuple[int, ...]:
        size = (size,) if isinstance(size, int | numpy.integer) else tuple(size)
        if not size or size[axis] != self.b:
            where = "first" if axis == 0 else "last"
            raise ValueError(f"chain streams: size {size} must have the {self.b} chains on its "
                             f"{where} axis")
        return size[1:] if axis == 0 else size[:-1]

    def standard_normal(self, size: Any) -> numpy.ndarray:
        rest = self._rest(size, 0)
        return numpy.stack([g.standard_normal(rest) for g in self._gens])

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> numpy.ndarray:
        return loc + scale * self.standard_normal(self.b if size is None else size)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> numpy.ndarray:
        rest = self._rest(self.b if size is None else size, 0)
        u = self._uniforms(math.prod(rest)).reshape(self.b, *rest)
        return low + (high - low) * u

    def random(self, size: Any = None) -> numpy.ndarray:
        rest = self._rest(self.b if size is None else size, -1)
        u = self._uniforms(math.prod(rest))  # (b, m) -> (*rest, b)
        return numpy.ascontiguousarray(u.T).reshape(*rest, self.b)


def chain_rng(seed: int | None, chains: int, chain_ids: Sequence[int] | None = None,
              np: Any = numpy) -> Any:
    """Per-chain streams on NumPy; elsewhere (the pure-Python arrays of Pyodide) the array
    module's own generator, shared by the batch."""
    if numpy is None or np is not numpy:
        return np.random.default_rng(seed)
    ids = list(range(chains)) if chain_ids is None else list(chain_ids)
    return ChainStreams(fresh_seed() if seed is None else seed, ids)


def restart(rng: Any, iteration: int, purpose: int = PURPOSE_TRANSITION) -> None:
    """Restart per-chain streams (a no-op for a shared generator)."""
    if isinstance(rng, ChainStreams):
        rng.restart(iteration, purpose)
