"""tensorbridge.runtime: tensors on pluggable backends, autodiff, memory accounting.

Everything here is re-exported as ``tensorbridge``::

    import tensorbridge as tb
    x = tb.tensor([[1.0, 2.0], [3.0, 4.0]])
    tb.grad(lambda x: tb.tanh(x @ x).sum())(x)
"""

from . import dtypes, layers, random, testing
from .autodiff.api import (
    grad,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jvp,
    value_and_grad,
    vjp,
)
from .autodiff.batching import vmap
from .autodiff.check import check_grads
from .autodiff.core import Primitive, Tracer
from .autodiff.custom import CustomPrimitive, primitive
from .backends import (
    Backend,
    get_backend,
    kernel_table,
    list_backends,
    memory,
    register_backend,
    set_backend,
    use_backend,
)
from .compile import function
from .dtypes import DType, bool_, float32, float64, int32, int64
from .errors import (
    BackendMismatchError,
    CompiledSamplingUnavailable,
    DisposedTensorError,
    MissingKernelError,
    NonDifferentiableError,
    SamplingInterrupted,
    ShapeError,
    TensorBridgeError,
)
from .graph import (
    LazyArray,
    Model,
    as_data,
    calculate,
    cholesky_variable,
    distribution,
    model,
    model_backend,
    ordered_variable,
    set_model_backend,
    simplex_variable,
    simulate,
    variable,
)
from .kernels import KERNEL_NAMES, register_kernel
from .lifetime import dispose, keep, tidy
from .ode import OdeSolveError, ode_solve
from .ops import *  # noqa: F403 - the op namespace is the public API
from .ops import __all__ as _ops_all
from .ppl import Draws, hmc, mcmc, nuts, opt  # bookkeeping in NumPy, or pure Python without it
from .ppl.distributions import (
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
from .pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten
from .random import Generator
from .scan import scan
from .tensor import Tensor

_ppl_all = ["Draws", "hmc", "mcmc", "nuts", "opt"]

__all__ = [
    "KERNEL_NAMES",
    "Backend",
    "BackendMismatchError",
    "CustomPrimitive",
    "DType",
    "DisposedTensorError",
    "CompiledSamplingUnavailable",
    "Generator",
    "LazyArray",
    "Model",
    "MissingKernelError",
    "NonDifferentiableError",
    "OdeSolveError",
    "Primitive",
    "SamplingInterrupted",
    "ShapeError",
    "Tensor",
    "TensorBridgeError",
    "Tracer",
    "as_data",
    "bool_",
    "calculate",
    "check_grads",
    "dispose",
    "distribution",
    "dtypes",
    "float32",
    "float64",
    "function",
    "get_backend",
    "grad",
    "hessian",
    "hvp",
    "int32",
    "int64",
    "jacfwd",
    "jacobian",
    "jvp",
    "keep",
    "kernel_table",
    "layers",
    "list_backends",
    "memory",
    "model",
    "normal",
    "ode_solve",
    "primitive",
    "random",
    "testing",
    "register_backend",
    "register_kernel",
    "scan",
    "set_backend",
    "set_model_backend",
    "simulate",
    "tidy",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_unflatten",
    "use_backend",
    "model_backend",
    "value_and_grad",
    "variable",
    "ordered_variable",
    "simplex_variable",
    "cholesky_variable",
    "vjp",
    "vmap",
    *_ops_all,
    "bernoulli",
    "beta",
    "beta_binomial",
    "binomial",
    "categorical",
    "cauchy",
    "chi_squared",
    "dirichlet",
    "exponential",
    "gamma",
    "inverse_gamma",
    "laplace",
    "lkj_correlation",
    "logistic",
    "lognormal",
    "multinomial",
    "multivariate_normal",
    "negative_binomial",
    "pareto",
    "poisson",
    "student",
    "uniform",
    "weibull",
    *_ppl_all,
]
