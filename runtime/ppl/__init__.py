"""The probabilistic layer: distributions, MCMC (NUTS and HMC with adaptation, chains batched
along a leading dimension), diagnostics and draws, MAP optimisation."""

from . import distributions
from .distributions import (
    bernoulli,
    beta,
    beta_binomial,
    binomial,
    categorical,
    cauchy,
    chi_squared,
    dirichlet,
    exponential,
    gamma,
    inverse_gamma,
    laplace,
    lkj_correlation,
    logistic,
    lognormal,
    multinomial,
    multivariate_normal,
    negative_binomial,
    normal,
    pareto,
    poisson,
    student,
    uniform,
    weibull,
)

__all__ = ["distributions", *distributions.DISTRIBUTIONS]

try:  # inference keeps its bookkeeping in NumPy; distributions and models work without it
    from .diagnostics import ess_bulk, ess_tail, rhat
    from .draws import Draws
    from .optimize import OptResult, opt
    from .sampler import hmc, mcmc, nuts

    __all__ += ["Draws", "OptResult", "ess_bulk", "ess_tail", "hmc", "mcmc", "nuts", "opt",
                "rhat"]
except ModuleNotFoundError as _e:  # pragma: no cover - Pyodide without NumPy
    if _e.name != "numpy":
        raise
