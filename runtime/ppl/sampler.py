"""``mcmc()``: warmup with adaptation, then draws, for chains batched along a leading dimension.

The model's log density and gradient are compiled once for a ``[chains, n]`` batch (vectorised
with ``vmap`` and staged, see ``Model.log_density_and_grad``); the sampler keeps its bookkeeping
in NumPy on the host. A Ctrl-C (or a ``should_stop`` callback returning True) ends the run at the
next iteration and returns the draws taken so far, marked ``interrupted``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .array_namespace import np
from .chain_rng import fresh_seed
from .chains import SamplerConfig, hmc, nuts, run_chains
from .draws import Draws
from .sampling_threads import sampling_tuning

__all__ = ["hmc", "mcmc", "nuts"]


def mcmc(model: Any, n_samples: int = 1000, warmup: int = 1000, chains: int = 4,
         sampler: SamplerConfig | None = None, initial_values: Any = None,
         seed: int | None = None, thin: int = 1, progress: bool | None = None,
         callback: Callable[[dict], Any] | None = None, callback_every: int = 50,
         should_stop: Callable[[], bool] | None = None, n_cores: int | None = None) -> Draws:
    """Draw from the posterior of ``model`` (from :func:`tensorbridge.model`).

    ``sampler``: :func:`nuts` (default) or :func:`hmc`. ``initial_values``: None (uniform(-2, 2)
    on the free scale, as Stan), a dict ``{variable: value}`` for every chain, or a list of such
    dicts, one per chain. ``progress``: a terminal progress bar (default: when stderr is a
    terminal). ``callback(info)`` is called every ``callback_every`` iterations with the phase,
    iteration and divergences (this is how R and JavaScript report progress).

    ``n_cores`` (as greta's): run the chains in that many worker processes, each sampling its
    share of the chains batched in lockstep, merged into one :class:`Draws`. Every chain draws
    its random numbers from its own stream of ``seed``, so the same seed gives the same draws
    whatever ``n_cores`` (up to floating-point differences between batch sizes in the model's
    kernels). ``should_stop`` and Ctrl-C stop every worker and keep the draws taken so far.
    """
    if seed is None:
        seed = fresh_seed()  # one seed for every worker: chains stay distinct streams of it
    if n_cores is not None and n_cores != 1:
        from .parallel import run_parallel

        return run_parallel(model, n_cores, n_samples=n_samples, warmup=warmup, chains=chains,
                            sampler=sampler, initial_values=initial_values, seed=seed,
                            thin=thin, progress=progress, callback=callback,
                            callback_every=callback_every, should_stop=should_stop)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"), \
            sampling_tuning():
        # divergent trajectories overflow by design; they are counted, not warned about. The
        # chains' matrix products are too small for BLAS threads to pay, and their temporaries
        # too large for glibc's default heap thresholds (see sampling_threads.py)
        return run_chains(model, n_samples, warmup, chains, sampler, initial_values, seed, thin,
                          progress, callback, callback_every, should_stop)
