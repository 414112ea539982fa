"""``tb.function`` on TensorFlow: a tensor function traced into a ``tf.function`` graph, once per
input signature (registered for the ``tensorflow`` backend by ``compile.py``).

Inside the trace the same ops, autodiff and kernels run on symbolic tensors, whose static shapes
play the part of the eager shapes; ``TENSORBRIDGE_TF_JIT=1`` compiles the graphs with XLA
(``jit_compile=True``).
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from ..autodiff.core import Tracer
from ..errors import BackendMismatchError
from ..pytree import tree_flatten, tree_unflatten
from ..staging import StagingTrace, StagingTracer, staging
from ..tensor import Tensor
from .tensorflow_backend import SymbolicValueError, TensorflowBackend
from .tensorflow_kernels import TO_TF

__all__ = ["CompiledFunction"]

_TENSOR = object()  # marks tensor positions in argument and result templates
_EAGER = "eager"  # a signature whose trace read a tensor value: runs op by op


def _static_key(value: Any) -> Any:
    """A hashable key for an argument leaf that is not a tensor (it is baked into the trace)."""
    if isinstance(value, float):
        return (float, repr(value))  # tells 0.0 from -0.0, and nan from nan
    if isinstance(value, np.ndarray):
        return (np.ndarray, value.dtype.str, value.shape, value.tobytes())
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"tb.function: argument of type {type(value).__name__} is neither a tensor nor a "
            f"hashable Python value; pass tensors (traced as graph inputs) or constants"
        ) from None
    return (type(value), value)


class CompiledFunction:
    """``fn`` traced into a ``tf.function`` graph once per input signature, then run as one
    graph call.

    The signature is the argument structure (nested tuples/lists/dicts), each tensor's shape and
    dtype, and the value of every argument that is not a tensor (Python numbers, strings…: those
    are constants of the trace, and a new value traces again).

    The graph is traced with the function's tensor arguments as tracers of a
    :class:`~tensorbridge.runtime.staging.StagingTrace` (one without a recorder: TensorFlow keeps
    the graph). As with staging on NumPy, a trace that reads a tensor value (``float(x)``,
    ``.numpy()``, ``if x > 0:``, a data-dependent index, a random draw) is dropped: that
    signature then runs op by op, with a ``RuntimeWarning`` — never a silently frozen value.
    Called with autodiff tracers (``tb.grad(tb.function(f))``), ``fn`` also runs op by op, so
    the transformation sees every op.
    """

    def __init__(self, backend: TensorflowBackend, fn: Callable[..., Any],
                 jit_compile: bool = False) -> None:
        self.backend = backend
        self.fn = fn
        self.jit_compile = jit_compile
        self._traces: dict[Any, Any] = {}
        self._lock = threading.RLock()
        functools.update_wrapper(self, fn)

    @property
    def num_traces(self) -> int:
        """How many input signatures were traced into graphs."""
        return sum(1 for v in self._traces.values() if v is not _EAGER)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        be = self.backend
        leaves, treedef = tree_flatten((args, kwargs))
        raws = []
        key: list[Any] = [treedef]
        for leaf in leaves:
            if isinstance(leaf, Tensor):
                if isinstance(leaf, Tracer):
                    return self.fn(*args, **kwargs)
                if leaf.backend is not be:
                    raise BackendMismatchError(
                        f"tb.function: an argument is on backend '{leaf.backend.name}' but the "
                        f"function is compiled for '{be.name}'; move it with .to('{be.name}')"
                    )
                raws.append(leaf._raw_unchecked())
                key.append((_TENSOR, leaf.shape, leaf.dtype.name))
            else:
                key.append(_static_key(leaf))
        k = tuple(key)
        trace = self._traces.get(k)
        if trace is None:
            with self._lock:
                trace = self._traces.get(k)
                if trace is None:
                    trace = self._traces[k] = self._trace(leaves, treedef)
        if trace is _EAGER:
            return self.fn(*args, **kwargs)
        concrete, out_def, out_template = trace
        outs = iter(concrete(*raws))
        wrap = be.wrap
        return tree_unflatten(out_def, [wrap(next(outs)) if o is _TENSOR else o
                                        for o in out_template])

    def _trace(self, leaves: list[Any], treedef: Any) -> Any:
        be = self.backend
        fn = self.fn
        name = getattr(fn, "__name__", "fn")
        template = [_TENSOR if isinstance(x, Tensor) else x for x in leaves]
        specs = [tf.TensorSpec(x.shape, TO_TF[x.dtype]) for x in leaves if isinstance(x, Tensor)]
        result: dict[str, Any] = {}
        trace = StagingTrace()

        def graph_fn(*raw_in: Any) -> list[Any]:
            it = iter(raw_in)
            filled = [trace.new_tracer(be.wrap(next(it))) if x is _TENSOR else x
                      for x in template]
            args, kwargs = tree_unflatten(treedef, filled)
            out = fn(*args, **kwargs)
            out_leaves, out_def = tree_flatten(out)
            raw_out, out_template = [], []
            for o in out_leaves:
                if isinstance(o, StagingTracer) and o._trace is trace:
                    o = o._primal
                if isinstance(o, Tensor):
                    if isinstance(o, Tracer) or o.backend is not be:
                        raise TypeError(
                            f"tb.function: {name} returned a tensor that is not a plain "
                            f"'{be.name}' tensor ({type(o).__name__} on '{o.backend.name}')"
                        )
                    raw_out.append(o._raw_unchecked())
                    out_template.append(_TENSOR)
                else:
                    out_template.append(o)
            result["out"] = (out_def, out_template)
            return raw_out

        graph_fn.__name__ = "".join(c if c.isalnum() else "_" for c in name)
        tf_fn = tf.function(graph_fn, input_signature=specs, autograph=False,
                            jit_compile=self.jit_compile or None)
        try:
            with staging(trace):
                concrete = tf_fn.get_concrete_function()
        except SymbolicValueError as e:
            trace.concretized(str(e))
        if trace.reason is not None:
            warnings.warn(
                f"tensorbridge.function({name}): runs eagerly for this input signature because "
                f"it reads a tensor value while tracing ({trace.reason}); a TensorFlow graph "
                f"needs control flow that does not depend on tensor values",
                RuntimeWarning,
                stacklevel=4,
            )
            return _EAGER
        out_def, out_template = result["out"]
        return concrete, out_def, out_template
