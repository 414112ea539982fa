"""User-facing transformations: grad, value_and_grad, vjp, jvp, jacobian, jacfwd, hessian, hvp.

Arguments and results may be nested tuples, lists and dicts of tensors; derivatives come back in
the same structure. Every transformation composes with every other (``hessian`` is
``jacfwd(jacobian(f))``; ``hvp`` is forward-over-reverse).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import NonDifferentiableError, ShapeError
from ..ops.creation import as_tensor, full, zeros, zeros_like
from ..ops.indexing import index_update
from ..ops.shape import reshape, stack
from ..pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor
from .forward import ForwardTrace, ForwardTracer, new_forward_tracer
from .reverse import ReverseTrace, ReverseTracer, backward

__all__ = ["grad", "hessian", "hvp", "jacfwd", "jacobian", "jvp", "value_and_grad", "vjp"]


def _to_float_tensor(x: Any, where: str) -> Tensor:
    t = x if isinstance(x, Tensor) else as_tensor(x, where)
    if t.dtype.kind != "f":
        raise NonDifferentiableError(
            f"{where}: can only differentiate with respect to floating-point values, got dtype "
            f"{t.dtype} (convert with .astype('float32') or pass floats)"
        )
    return t


def _argnums(argnums: int | Sequence[int], nargs: int, fname: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(
                f"argnums: {fname} was called with {nargs} positional argument(s), so argnum "
                f"{n} does not exist"
            )
    return tuple(n % nargs for n in nums)


def _with_args(f: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
               nums: Sequence[int]) -> Callable[..., Any]:
    """``f`` as a function of the arguments at positions ``nums`` only, the rest fixed."""

    def partial_f(*diff_args: Any) -> Any:
        full = list(args)
        for n, a in zip(nums, diff_args):
            full[n] = a
        return f(*full, **kwargs)

    return partial_f


def _name(f: Callable[..., Any]) -> str:
    return getattr(f, "__name__", type(f).__name__)


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), vjp_fn)``: ``vjp_fn(cotangent)`` returns one cotangent per primal.

    ``vjp_fn`` may be called many times (``jacobian`` does); with ``has_aux``, ``f`` returns
    ``(out, aux)`` and the result is ``(out, vjp_fn, aux)``.
    """
    trace = ReverseTrace()
    in_leaves: list[list[Any]] = []
    in_defs = []
    wrapped_args = []
    for i, p in enumerate(primals):
        leaves, td = tree_flatten(p)
        tensors = [_to_float_tensor(x, f"argument {i} of {_name(f)}") for x in leaves]
        tracers = [trace.leaf(t) for t in tensors]
        in_leaves.append(tracers)
        in_defs.append(td)
        wrapped_args.append(tree_unflatten(td, tracers))
    result = f(*wrapped_args)
    aux = None
    if has_aux:
        if not (isinstance(result, tuple) and len(result) == 2):
            raise TypeError(f"has_aux=True: {_name(f)} must return a pair (output, aux)")
        result, aux = result
    out_leaves, out_def = tree_flatten(result)
    out_values = [_unwrap_reverse(o, trace) for o in out_leaves]

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        g_leaves, g_def = tree_flatten(cotangent)
        if g_def != out_def:
            raise ShapeError(
                f"cotangent: structure {g_def} does not match the output structure {out_def}"
            )
        roots = []
        for o, g in zip(out_leaves, g_leaves):
            if g is not None and tuple(g.shape) != tuple(o.shape):
                raise ShapeError(
                    f"cotangent: shape {list(g.shape)} does not match the output's "
                    f"{list(o.shape)}"
                )
            if isinstance(o, ReverseTracer) and o._trace is trace:
                roots.append((o._node, g))
        flat_in = [t for group in in_leaves for t in group]
        grads = (backward(trace, roots, [t._node for t in flat_in]) if roots
                 else [None] * len(flat_in))
        out, k = [], 0
        for group, td in zip(in_leaves, in_defs):
            gs = []
            for t in group:
                g = grads[k]
                k += 1
                gs.append(_zeros_like(t._primal) if g is None else g)
            out.append(tree_unflatten(td, gs))
        return tuple(out)

    # Tracers point at their trace and the trace's tape points at the tracers: clear the tape
    # when the caller drops vjp_fn, so the recorded values are freed at once, not by the GC.
    vjp_fn.release = trace.tape.clear  # type: ignore[attr-defined]
    weakref.finalize(vjp_fn, trace.tape.clear)
    out_tree = tree_unflatten(out_def, out_values)
    return (out_tree, vjp_fn, _unwrap_tree(aux, trace)) if has_aux else (out_tree, vjp_fn)


def _unwrap_reverse(x: Any, trace: ReverseTrace) -> Any:
    return x._primal if isinstance(x, ReverseTracer) and x._trace is trace else x


def _unwrap_tree(tree: Any, trace: ReverseTrace) -> Any:
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, [_unwrap_reverse(x, trace) for x in leaves])


def _zeros_like(t: Any) -> Tensor:
    return zeros_like(t)


def _ones_like(t: Any) -> Tensor:
    return full(t.shape, 1, t.dtype, t.backend)


def value_and_grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning ``(f(*args), gradient)`` for a scalar-valued ``f``.

    The gradient has the structure of argument ``argnums`` (a tuple of them when ``argnums`` is
    a tuple). With ``has_aux``, ``f`` returns ``(value, aux)`` and the result is
    ``((value, aux), gradient)``.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), _name(f))

        partial_f = _with_args(f, args, kwargs, nums)

        res = vjp(partial_f, *(args[n] for n in nums), has_aux=has_aux)
        out, fn = res[0], res[1]
        if not isinstance(out, Tensor) or out.shape != ():
            shape = list(out.shape) if isinstance(out, Tensor) else type(out).__name__
            raise ShapeError(
                f"grad: {_name(f)} must return a scalar (shape []), got {shape}; use jacobian "
                f"or vjp for non-scalar outputs"
            )
        if out.dtype.kind != "f":
            raise NonDifferentiableError(
                f"grad: {_name(f)} returned dtype {out.dtype}; a gradient needs a float output"
            )
        grads = fn(_ones_like(out))
        fn.release()
        g = grads[0] if isinstance(argnums, int) else grads
        return ((out, res[2]), g) if has_aux else (out, g)

    return wrapper


def grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``f`` with respect to argument(s) ``argnums``."""
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """``(f(*primals), J @ tangents)``: forward-mode derivative along ``tangents``."""
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError("jvp: primals and tangents must be tuples (one entry per argument)")
    if len(primals) != len(tangents):
        raise ValueError(
            f"jvp: got {len(primals)} primal(s) but {len(tangents)} tangent(s); give one "
            f"tangent per primal"
        )
    trace = ForwardTrace()
    args = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        pl, pd = tree_flatten(p)
        tl, td = tree_flatten(t)
        if pd != td:
            raise ShapeError(f"tangents[{i}]: structure {td} does not match primal {pd}")
        wrapped = []
        for x, dx in zip(pl, tl):
            xt = _to_float_tensor(x, f"primals[{i}]")
            dxt = _to_float_tensor(dx, f"tangents[{i}]")
            if dxt.shape != xt.shape:
                raise ShapeError(
                    f"tangents[{i}]: shape {list(dxt.shape)} does not match the primal's "
                    f"{list(xt.shape)}"
                )
            if dxt.dtype is not xt.dtype:
                dxt = dxt.astype(xt.dtype)
            wrapped.append(new_forward_tracer(xt, trace, dxt))
        args.append(tree_unflatten(pd, wrapped))
    out = f(*args)
    leaves, od = tree_flatten(out)
    values, tans = [], []
    for o in leaves:
        if isinstance(o, ForwardTracer) and o._trace is trace:
            values.append(o._primal)
            tans.append(o._tangent if o._tangent is not None else _zeros_like(o._primal))
        else:
            values.append(o)
            tans.append(_zeros_like(o) if isinstance(o, Tensor) else 0.0)
    return tree_unflatten(od, values), tree_unflatten(od, tans)


def _basis(n: int, like: Tensor, k: int) -> Tensor:
    z = zeros((n,), like.dtype, like.backend)
    return index_update(z, k, full((), 1.0, like.dtype, like.backend))


def jacobian(f: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Reverse-mode Jacobian: for output leaf of shape O and input leaf of shape I, a tensor of
    shape O + I, arranged as the output structure of the input structure."""
    return _jac(f, argnums, mode="rev")


def jacfwd(f: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Forward-mode Jacobian (one JVP per input element); same layout as :func:`jacobian`."""
    return _jac(f, argnums, mode="fwd")


def _jac(f: Callable[..., Any], argnums: int | Sequence[int], mode: str) -> Callable[..., Any]:
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), _name(f))

        partial_f = _with_args(f, args, kwargs, nums)

        diff = [args[n] for n in nums]
        in_struct = [tree_flatten(a) for a in diff]
        in_leaves = [[_to_float_tensor(x, "argument") for x in leaves] for leaves, _ in in_struct]
        flat_in = [t for g in in_leaves for t in g]
        if mode == "rev":
            out, fn = vjp(partial_f, *diff)
            out_leaves, out_def = tree_flatten(out)
            # jac[o][i]: rows = output elements
            blocks: list[list[Any]] = []
            for oi, o in enumerate(out_leaves):
                rows = []
                for k in range(o.size):
                    cot = [None] * len(out_leaves)
                    cot[oi] = reshape(_basis(o.size, o, k), o.shape)
                    grads = fn(tree_unflatten(out_def, cot))
                    rows.append([g for gi in grads for g in tree_flatten(gi)[0]])
                per_in = []
                for j, t in enumerate(flat_in):
                    if rows:
                        per_in.append(reshape(stack([r[j] for r in rows]), o.shape + t.shape))
                    else:
                        per_in.append(_zeros_shape(o.shape + t.shape, t))
                blocks.append(per_in)
        else:
            cols: list[list[Any]] = []  # per flat input: list over its elements of out leaves
            out_def = None
            out_leaves = []
            for j, t in enumerate(flat_in):
                per_elem = []
                for k in range(t.size):
                    tangents = [_zeros_like(x) for x in flat_in]
                    tangents[j] = reshape(_basis(t.size, t, k), t.shape)
                    tan_trees, pos = [], 0
                    for leaves, td in in_struct:
                        tan_trees.append(tree_unflatten(td, tangents[pos:pos + len(leaves)]))
                        pos += len(leaves)
                    out, tan_out = jvp(partial_f, tuple(diff), tuple(tan_trees))
                    out_leaves, out_def = tree_flatten(out)
                    per_elem.append(tree_flatten(tan_out)[0])
                cols.append(per_elem)
            if out_def is None:  # no input elements at all
                out = partial_f(*diff)
                out_leaves, out_def = tree_flatten(out)
            blocks = []
            for oi, o in enumerate(out_leaves):
                per_in = []
                for j, t in enumerate(flat_in):
                    if cols[j]:
                        st = stack([c[oi] for c in cols[j]], axis=-1)  # O + (size,)
                        per_in.append(reshape(st, tuple(o.shape) + t.shape))
                    else:
                        per_in.append(_zeros_shape(tuple(o.shape) + t.shape, t))
                blocks.append(per_in)
        # rebuild: output structure of (input structure per argnum)
        result_leaves = []
        for per_in in blocks:
            pos, parts = 0, []
            for leaves, td in in_struct:
                parts.append(tree_unflatten(td, per_in[pos:pos + len(leaves)]))
                pos += len(leaves)
            result_leaves.append(parts[0] if isinstance(argnums, int) else tuple(parts))
        return tree_unflatten(out_def, result_leaves)

    return wrapper


def _zeros_shape(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return zeros(shape, like.dtype, like.backend)


def hessian(f: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Matrix of second derivatives: ``jacfwd(jacobian(f))`` (forward over reverse)."""
    return jacfwd(jacobian(f, argnums), argnums)


def hvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """Hessian-vector product of scalar ``f`` at ``primals`` along ``tangents``, computed
    forward-over-reverse without forming the Hessian. Returns the product (argument 0's
    structure for one argument, a tuple otherwise)."""
    nums = tuple(range(len(primals)))
    g = grad(f, argnums=nums)
    _, out = jvp(lambda *a: g(*a), tuple(primals), tuple(tangents))
    return out[0] if len(primals) == 1 else out
