"""The probabilistic layer: distributions, MCMC (NUTS and HMC with adaptation, chains batched
along a leading dimension), diagnostics and draws, MAP optimisation."""

from .diagnostics import ess_bulk, ess_tail, rhat
from .draws import Draws
from .optimize import OptResult, opt
from .sampler import hmc, mcmc, nuts

__all__ = ["Draws", "ess_bulk", "ess_tail", "hmc", "mcmc", "nuts", "opt", "OptResult", "rhat"]
