"""Nested containers of tensors ("pytrees"): tuples, lists, dicts and None.

Autodiff differentiates with respect to, and returns gradients in, the same structure the user
passed. Dicts keep insertion order; everything that is not a container is a leaf.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["tree_flatten", "tree_leaves", "tree_map", "tree_unflatten", "TreeDef"]


class TreeDef:
    """The shape of a nested structure with its leaves removed."""

    __slots__ = ("children", "kind", "meta")

    def __init__(self, kind: str, meta: Any = None, children: tuple = ()) -> None:
        self.kind = kind  # "leaf", "none", "tuple", "list", "dict"
        self.meta = meta  # dict keys / namedtuple type
        self.children = children

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TreeDef)
            and self.kind == other.kind
            and self.meta == other.meta
            and self.children == other.children
        )

    def __hash__(self) -> int:
        return hash((self.kind, str(self.meta), self.children))

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(map(repr, self.children))
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.meta, self.children))
            return "{" + inner + "}"
        return ("[" + inner + "]") if self.kind == "list" else ("(" + inner + ")")


_LEAF = TreeDef("leaf")


def tree_flatten(tree: Any) -> tuple[list[Any], TreeDef]:
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> TreeDef:
    cls = tree.__class__
    if cls is tuple or (isinstance(tree, tuple) and hasattr(tree, "_fields")):
        meta = None if cls is tuple else cls
        return TreeDef("tuple", meta, tuple(_flatten(x, leaves) for x in tree))
    if cls is list:
        return TreeDef("list", None, tuple(_flatten(x, leaves) for x in tree))
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeDef("dict", keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if tree is None:
        return TreeDef("none")
    leaves.append(tree)
    return _LEAF


def tree_unflatten(treedef: TreeDef, leaves: list[Any]) -> Any:
    it = iter(leaves)
    out = _build(treedef, it)
    return out


def _build(td: TreeDef, it: Any) -> Any:
    kind = td.kind
    if kind == "leaf":
        return next(it)
    if kind == "none":
        return None
    items = [_build(c, it) for c in td.children]
    if kind == "list":
        return items
    if kind == "dict":
        return dict(zip(td.meta, items))
    return td.meta(*items) if td.meta is not None else tuple(items)


def tree_leaves(tree: Any) -> list[Any]:
    return tree_flatten(tree)[0]


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    leaves, td = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten(td, [fn(x, *ys) for x, *ys in zip(leaves, *others)])
