"""``scan``: a loop with carried state, ``fn(carry, x) -> (carry, y)`` over the leading axis of
``xs``, differentiable in every argument and every value ``fn`` closes over.

    def ar1(carry, eps):                  # s[t] = phi s[t-1] + eps[t]
        s = phi * carry + eps
        return s, s

    last, path = tb.scan(ar1, s0, eps)    # last = s[T-1], path = s[0..T-1] stacked on axis 0

Semantics follow ``jax.lax.scan``: ``init``, the slices of ``xs`` and ``fn``'s outputs are
pytrees (tuples, lists, dicts, None) of tensors; the carry keeps its structure, shapes and dtypes
from step to step; the per-step outputs ``y`` are stacked on a new leading axis (in the order of
``xs`` also with ``reverse=True``, which runs the steps from the last slice to the first).

The loop runs ``fn`` once per step on tensors, so every transformation around it sees the
steps' ops: ``grad``/``vjp`` pull cotangents back through the steps in reverse order, ``jvp``
pushes tangents forward, ``vmap`` batches each step, and in a model each step is part of the
graph. Under ``tb.function`` the recording holds each step's kernels once per step: a
straight-line program that the compiled lowering turns into C or JavaScript like any other
(a T-step loop of a few scalar ops is a few thousand lines, compiled once and cached), so a
model with a recurrence samples on the compiled sampler.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ops.arguments import is_scalar
from .ops.creation import as_tensor
from .ops.shape import stack
from .pytree import TreeDef, tree_flatten, tree_unflatten
from .tensor import Tensor

__all__ = ["scan"]


def _fn_name(fn: Any) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _describe(x: Any) -> str:
    if isinstance(x, Tensor):
        return f"shape {list(x.shape)} {x.dtype}"
    return f"{type(x).__name__} {x!r}"


def _leaf_tensors(tree: Any, what: str) -> tuple[list[Any], TreeDef]:
    """The leaves of ``tree`` as tensors (Python numbers kept for :func:`_numbers_as`)."""
    leaves, td = tree_flatten(tree)
    out = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor) or is_scalar(leaf):
            out.append(leaf)
            continue
        try:
            out.append(as_tensor(leaf, what))
        except TypeError as e:
            where = what if len(leaves) == 1 else f"{what} (leaf {i})"
            raise TypeError(
                f"{where}: expected tensors (or nested tuples, lists and dicts of them), "
                f"got {type(leaf).__name__}"
            ) from e
    return out, td


def _numbers_as(leaves: list[Any], others: list[Any]) -> list[Tensor]:
    """Python numbers among ``leaves`` as 0-d tensors: a float takes the dtype and backend of
    the first floating tensor among ``leaves`` and ``others`` (a carry started at ``0.0`` next
    to float64 data is float64), an int or bool its own dtype."""
    like = next((t for t in (*leaves, *others)
                 if isinstance(t, Tensor) and t.dtype.kind == "f"), None)
    out = []
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            floating = isinstance(leaf, float) and like is not None
            leaf = as_tensor(leaf, "init", like=like, dtype=like.dtype if floating else None)
        out.append(leaf)
    return out


def _step_length(xs_leaves: list[Tensor], length: int | None) -> int:
    n = length
    for i, x in enumerate(xs_leaves):
        if x.ndim == 0:
            raise ValueError(
                f"xs: every tensor needs a leading axis to scan over, got a 0-d tensor "
                f"(leaf {i})"
            )
        if n is None:
            n = int(x.shape[0])
        elif int(x.shape[0]) != n:
            source = "length" if length is not None else "the first tensor of xs"
            raise ValueError(
                f"xs: leaf {i} has {x.shape[0]} steps on its leading axis but {source} says "
                f"{n}; every tensor in xs must have the same leading length"
            )
    if n is None:
        raise ValueError("length: give length when xs is None (the number of steps to run)")
    return n


def scan(fn: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False) -> tuple[Any, Any]:
    """Run ``carry, y = fn(carry, x)`` for each slice ``x`` of ``xs`` along its leading axis.

    ``init``: the first carry, a pytree of tensors (a Python float takes the dtype of the first
    floating tensor among ``init`` and ``xs``). ``xs``: a pytree of tensors sharing their
    leading length T, or None (then ``fn`` gets ``x = None`` and ``length`` gives T).
    ``reverse``: run from the last slice to the first. Returns ``(final carry, ys)``, with each
    leaf of ``fn``'s ``y`` stacked to shape ``(T, *y.shape)`` in the order of ``xs`` (``ys`` is
    None when ``fn`` returns ``y = None``).
    """
    if not callable(fn):
        raise TypeError(f"fn: expected a function (carry, x) -> (carry, y), got "
                        f"{type(fn).__name__}")
    if length is not None:
        if isinstance(length, bool | Tensor) or not hasattr(length, "__index__"):
            raise TypeError(f"length: expected an integer number of steps, got {length!r}")
        length = int(length.__index__())
        if length < 1:
            raise ValueError(f"length: need at least one step, got {length}")
    if not isinstance(reverse, bool):
        raise TypeError(f"reverse: expected True or False, got {reverse!r}")
    init_leaves, init_def = _leaf_tensors(init, "init")
    if xs is None:
        xs_leaves: list[Any] = []
        xs_def = None
    else:
        xs_leaves, xs_def = tree_flatten(xs)
        xs_leaves = [x if isinstance(x, Tensor) else as_tensor(x, "xs") for x in xs_leaves]
    n = _step_length(xs_leaves, length)
    if n < 1:
        raise ValueError("xs: need at least one step, got a leading axis of length 0")
    init_leaves = _numbers_as(init_leaves, xs_leaves)

    name = _fn_name(fn)
    expected = [(tuple(c.shape), c.dtype) for c in init_leaves]  # each carry leaf's
    carry_leaves = init_leaves
    ys_steps: list[list[Any]] = []
    y_def: TreeDef | None = None
    y_meta: list[Any] = []
    order = range(n - 1, -1, -1) if reverse else range(n)
    for step in order:
        carry = tree_unflatten(init_def, carry_leaves)
        x = None if xs_def is None else tree_unflatten(xs_def, [v[step] for v in xs_leaves])
        out = fn(carry, x)
        if not (isinstance(out, tuple | list) and len(out) == 2):
            raise TypeError(
                f"fn: {name} must return a pair (carry, y), got "
                f"{'a tensor' if isinstance(out, Tensor) else type(out).__name__}"
                + (f" of length {len(out)}" if isinstance(out, tuple | list) else "")
            )
        new_carry, y = out
        new_leaves, new_def = tree_flatten(new_carry)
        if new_def != init_def:
            raise TypeError(
                f"fn: {name}'s carry changed structure at step {step}: init is {init_def}, "
                f"{name} returned {new_def}; the carry must keep its structure"
            )
        checked = []
        for i, (c, exp) in enumerate(zip(new_leaves, expected)):
            if not isinstance(c, Tensor):
                if not is_scalar(c):
                    raise TypeError(
                        f"fn: {name}'s carry (leaf {i}) at step {step} is a "
                        f"{type(c).__name__}, expected a tensor"
                    )
                c = as_tensor(c, "fn's carry", like=init_leaves[i], dtype=exp[1])
            if (tuple(c.shape), c.dtype) != exp:
                raise TypeError(
                    f"fn: {name}'s carry (leaf {i}) changed from shape {list(exp[0])} "
                    f"{exp[1]} to {_describe(c)} at step {step}; the carry must keep its shape "
                    f"and dtype (cast or reshape it inside {name})"
                )
            checked.append(c)
        carry_leaves = checked
        leaves, td = tree_flatten(y)
        leaves = [v if isinstance(v, Tensor) else as_tensor(v, "fn's y") for v in leaves]
        if y_def is None:
            y_def = td
            y_meta = [(tuple(v.shape), v.dtype) for v in leaves]
        else:
            if td != y_def:
                raise TypeError(
                    f"fn: {name}'s output y changed structure at step {step}: {y_def} at the "
                    f"first step, {td} now"
                )
            for i, (v, exp) in enumerate(zip(leaves, y_meta)):
                if (tuple(v.shape), v.dtype) != exp:
                    raise TypeError(
                        f"fn: {name}'s output y (leaf {i}) changed from shape {list(exp[0])} "
                        f"{exp[1]} to {_describe(v)} at step {step}; each step's y must have "
                        f"the same shape and dtype to be stacked"
                    )
        ys_steps.append(leaves)
    if reverse:
        ys_steps.reverse()  # stacked in the order of xs
    assert y_def is not None
    stacked = [stack([s[i] for s in ys_steps], axis=0) for i in range(len(y_meta))]
    return tree_unflatten(init_def, carry_leaves), tree_unflatten(y_def, stacked)
