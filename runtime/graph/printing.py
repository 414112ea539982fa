"""How lazy arrays print: unknown values as ``?`` (greta style), known ones as numbers."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["format_lazy"]

_MAX_SHOWN = 200


def format_lazy(arr: Any) -> str:
    node = arr.node
    head = f"LazyArray({node.kind}, shape={tuple(node.shape)}, dtype={node.dtype}"
    if node.kind == "variable":
        head += f", support={node.constraint}"
    if node.distribution is not None:
        head += f", distribution={node.distribution.family.name}"
    head += ")"
    if node.known:
        body = _grid(node.shape, lambda idx: _fmt(node.reference, idx))
    else:
        body = _grid(node.shape, lambda idx: "?")
    return head + "\n" + body


def _fmt(t: Any, idx: tuple[int, ...]) -> str:
    v = t.tolist()
    for i in idx:
        v = v[i]
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _grid(shape: tuple[int, ...], cell: Any) -> str:
    if math.prod(shape) > _MAX_SHOWN:
        return f"<{math.prod(shape)} values>"
    if not shape:
        return cell(())

    def build(prefix: tuple[int, ...], depth: int) -> str:
        if depth == len(shape) - 1:
            return "[" + ", ".join(cell((*prefix, i)) for i in range(shape[depth])) + "]"
        sep = ",\n" + " " * (depth + 1)
        return "[" + sep.join(build((*prefix, i), depth + 1) for i in range(shape[depth])) + "]"

    return build((), 0)
