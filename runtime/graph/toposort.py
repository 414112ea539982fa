"""Depth-first topological order of graph nodes, shared by ``model()`` and ``simulate()``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

N = TypeVar("N")

__all__ = ["topological_order"]


def topological_order(roots: Iterable[N], deps: Callable[[N], Iterable[N]],
                      who: str) -> list[N]:
    """Every node reachable from ``roots`` through ``deps``, each once, after its dependencies.

    Iterative (deep graphs must not hit the recursion limit); ``who`` names the caller in the
    error raised on a cycle.
    """
    order: list[N] = []
    state: dict[N, int] = {}  # 1: on the stack, 2: done
    for root in roots:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(deps(root)))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[node] = 2
                order.append(node)
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(deps(nxt))))
            elif state[nxt] == 1:
                raise ValueError(f"{who}: the graph has a cycle")
    return order
