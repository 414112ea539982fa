"""The Python half of the JavaScript door's ``tb.scan`` (``js-client/src/scan.js``).

The JS step function is traced once into a program (as a function given to ``tb.grad`` is):
nodes naming runtime ops, its own values as ``{"$scan": i}`` (inputs first: the carry's leaves,
then the slice's), anything else (tensors, lazy arrays, a ``$call`` target) as it crossed. Here
that program is the step of :func:`tensorbridge.scan`, replayed once per step.
"""

from __future__ import annotations

from typing import Any

from ... import runtime as tb
from ...runtime.pytree import tree_leaves
from .host import JsHost

__all__ = ["pick", "scan_program"]


def _floats(tree: Any) -> Any:
    """JS numbers that crossed as Python ints are floats here (JS has one number type)."""
    if isinstance(tree, list | tuple):
        return [_floats(v) for v in tree]
    if isinstance(tree, int) and not isinstance(tree, bool):
        return float(tree)
    return tree


def _run(program: dict[str, Any], env: list[Any]) -> Any:
    def ref(a: Any) -> Any:
        if isinstance(a, dict):
            if len(a) == 1 and "$scan" in a:
                return env[int(a["$scan"])]
            return {k: ref(v) for k, v in a.items()}
        if isinstance(a, list | tuple):
            return [ref(x) for x in a]
        if isinstance(a, memoryview):
            raise TypeError("scan: fn used a typed array; make it a tensor (tb.tensor) outside "
                            "fn and use that")
        return a

    for node in program["nodes"]:
        name = node["fn"]
        op = node["target"] if name == "$call" else getattr(tb, JsHost._METHODS.get(name, name))
        env.append(op(*ref(node["args"]), **ref(node.get("kwargs") or {})))
    return ref(program["out"])


def scan_program(program: dict[str, Any], init: Any, xs: Any, length: Any,
                 reverse: bool) -> list[Any]:
    """``tb.scan`` with the traced JS program as its step: ``[carry, ys]``."""
    init = _floats(init)

    def step(carry: Any, x: Any) -> Any:
        env = [*tree_leaves(carry), *tree_leaves(x)]
        out = _run(program, env)
        return out[0], out[1]

    step.__name__ = "fn"
    carry, ys = tb.scan(step, init, xs, length=None if length is None else int(length),
                        reverse=bool(reverse))
    return [carry, ys]


def pick(tree: Any, *path: Any) -> Any:
    """``tree[path[0]][path[1]]...``: one result of a scan recorded inside ``tb.grad``."""
    for p in path:
        tree = tree[int(p)]
    return tree
