"""The Python half of R's ``tb_scan()`` (R's own ``scan()`` reads files): tb.scan with an R
function as the step.

R's ``fn(carry, x)`` returns ``list(carry, y)``; carries, slices and outputs are tensors, lazy
arrays, R numbers, or R lists of them. In a model (``lazy``: a lazy array among ``init`` and
``xs``) R data becomes data arrays and ``fn`` sees lazy arrays, so that it can combine them with
the model's parameters; otherwise ``fn`` sees tensors (tracers under ``grad()``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import runtime as tb
from ...runtime.graph import LazyArray
from ...runtime.pytree import tree_flatten, tree_unflatten
from ..descriptors import Dict, Int, List, Null, Str
from .api import _no_na, wrap
from .ppl import lazy_out

__all__ = ["scan"]


def _leaf_in(x: Any, where: str, lazy: bool) -> Any:
    """An R value as a tensor: lazy arrays and tensors as they are, R numbers as float64."""
    if isinstance(x, tb.Tensor):
        return tb.as_data(x) if lazy and not isinstance(x, LazyArray) else x
    if isinstance(x, bool | int | float):
        x = np.float64(x)
    a = np.asarray(_no_na(x, where))
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    return tb.as_data(a) if lazy else tb.tensor(a)


def _plain(x: Any) -> Any:
    """R lists (RList, a list subclass) and named lists as plain lists and dicts: pytrees."""
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _tree_in(x: Any, where: str, lazy: bool) -> Any:
    if x is None:
        return None
    leaves, td = tree_flatten(_plain(x))
    return tree_unflatten(td, [_leaf_in(v, where, lazy) for v in leaves])


def _tree_out(x: Any) -> Any:
    """Descriptors for R: tensors by handle, lazy arrays as R's new_lazy() takes them (inside
    ``list(lazy = ...)``), lists and named lists walked."""
    if isinstance(x, LazyArray):
        out = lazy_out(x)
        inner = Dict(("ref", "shape", "kind"),
                     (out["ref"], List(tuple(Int(d) for d in out["shape"])), Str(out["kind"])))
        return Dict(("lazy",), (inner,))
    if isinstance(x, tb.Tensor):
        return wrap(x)
    if isinstance(x, list | tuple):
        return List(tuple(_tree_out(v) for v in x))
    if isinstance(x, dict):
        return Dict(tuple(str(k) for k in x), tuple(_tree_out(v) for v in x.values()))
    return Null() if x is None else x


def scan(fn: Callable[..., Any], init: Any, xs: Any, length: Any, reverse: bool,
         lazy: bool) -> Any:
    lazy = bool(lazy)
    init = _tree_in(init, "tb_scan: init", lazy)
    xs = _tree_in(xs, "tb_scan: xs", lazy)

    def step(carry: Any, x: Any) -> Any:
        out = fn(_tree_out(carry), _tree_out(x))
        if not (isinstance(out, list | tuple) and len(out) == 2):
            raise TypeError(f"fn: must return list(carry, y), got {type(out).__name__}"
                            + (f" of length {len(out)}" if isinstance(out, list | tuple)
                               else ""))
        return (_tree_in(out[0], "fn's carry", lazy), _tree_in(out[1], "fn's y", lazy))

    step.__name__ = "fn"
    carry, ys = tb.scan(step, init, xs, length=None if length is None else int(length),
                        reverse=bool(reverse))
    return List((_tree_out(carry), _tree_out(ys)))
