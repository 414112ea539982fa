"""The probabilistic layer: distributions, MCMC (NUTS and HMC with adaptation, chains batched
along a leading dimension), diagnostics and draws, MAP optimisation.

Inference keeps its host-side bookkeeping in NumPy, or in pure Python where NumPy is absent
(Pyodide): see ``tensorbridge.runtime.host_namespace``."""

from . import distributions
from .diagnostics import ess_bulk, ess_tail, rhat
from .distributions import (
    bernoulli,
    beta,
    beta_binomial,
    binomial,
    categorical,
    cauchy,
    chi_squared,
    dirichlet,
    dirichlet_multinomial,
    exponential,
    f,
    gamma,
    hypergeometric,
    icauchit,
    icloglog,
    imultilogit,
    inverse_gamma,
    iprobit,
    joint,
    laplace,
    lkj_correlation,
    logistic,
    lognormal,
    mixture,
    multinomial,
    multivariate_normal,
    negative_binomial,
    normal,
    pareto,
    poisson,
    student,
    uniform,
    weibull,
    wishart,
)
from .draws import Draws
from .extra import extra_samples
from .optimisers import (
    Optimiser,
    adadelta,
    adagrad,
    adam,
    adamax,
    bfgs,
    gradient_descent,
    l_bfgs_b,
    momentum,
    nadam,
    nelder_mead,
    rms_prop,
)
from .optimize import OptResult, opt
from .sampler import hmc, mcmc, nuts, rwmh, slice
from .sbc import SBCResult, sbc
from .tasks import map

__all__ = ["Draws", "OptResult", "Optimiser", "adadelta", "adagrad", "adam", "adamax", "bfgs",
           "distributions", "ess_bulk", "ess_tail", "extra_samples", "gradient_descent", "hmc",
           "l_bfgs_b", "map", "mcmc", "momentum", "nadam", "nelder_mead", "nuts", "opt", "rhat",
           "rms_prop", "rwmh", "SBCResult", "sbc", "slice",
           *distributions.DISTRIBUTIONS, *distributions.COMBINATORS, *distributions.LINKS]
