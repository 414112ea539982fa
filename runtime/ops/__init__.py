"""Every public op, one module per family. ``tensorbridge`` re-exports these names.

Importing this package installs the ops behind Tensor's operators and methods
(``tensor.set_op_table``): ``tensor.py`` does not import the ops.
"""

import types as _types

from .. import tensor as _tensor
from . import creation as _creation
from .activations import elu, gelu, log_softmax, relu, selu, softmax
from .arithmetic import (
    add,
    clip,
    divide,
    equal,
    floor_divide,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_or,
    maximum,
    minimum,
    mod,
    multiply,
    not_equal,
    power,
    subtract,
    where,
)
from .array_functions import cumprod, kron, outer, repeat, segment_sum, tile
from .creation import (
    arange,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from .elementwise import (
    abs,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    cast,
    ceil,
    cos,
    cospi,
    digamma,
    erf,
    erfc,
    exp,
    expm1,
    floor,
    isfinite,
    isnan,
    lgamma,
    log,
    log1p,
    logical_not,
    negative,
    polygamma,
    reciprocal,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinpi,
    softplus,
    sqrt,
    square,
    stop_gradient,
    tan,
    tanh,
    tanpi,
    trigamma,
)
from .indexing import IndexPlan, getitem, index_add, index_update, one_hot, take
from .linalg import cholesky, eigh, matmul, solve, triangular_solve, tril, triu
from .reduction import argmax, argmin, cumsum, logsumexp, max, mean, min, prod, sum
from .shape import (
    broadcast_shapes,
    broadcast_to,
    concat,
    expand_dims,
    flatten,
    reshape,
    squeeze,
    stack,
    swapaxes,
    transpose,
    unbroadcast,
)

__all__ = [
    _n for _n, _v in list(globals().items())
    if not _n.startswith("_") and not isinstance(_v, _types.ModuleType)
]

_tensor.set_op_table(_types.SimpleNamespace(
    to_backend=_creation.to_backend,
    **{_n: globals()[_n] for _n in _tensor.OP_TABLE_NAMES if _n != "to_backend"}))
