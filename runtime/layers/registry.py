"""Name lookup shared by activations, initializers, losses, metrics, optimizers and layers.

Every front door spells names its own way: Python and R write ``glorot_uniform``, Keras configs
``GlorotUniform``, TensorFlow.js ``glorotUniform``. :func:`canonical` maps all of them to one key
(lower case, no underscores), so each registry accepts every spelling.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Registry", "canonical"]


def canonical(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


class Registry:
    """``kind`` objects by name: ``register`` once, ``lookup`` with any spelling."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, Any] = {}
        self._names: dict[str, str] = {}  # canonical -> preferred spelling (for messages)

    def register(self, *names: str) -> Callable[[Any], Any]:
        def deco(obj: Any) -> Any:
            for n in names or (obj.__name__,):
                self.add(n, obj)
            return obj

        return deco

    def add(self, name: str, obj: Any) -> None:
        key = canonical(name)
        self._items[key] = obj
        self._names.setdefault(key, name)

    def lookup(self, name: str) -> Any:
        found = self._items.get(canonical(name))
        if found is None:
            known = ", ".join(sorted(set(self._names.values())))
            raise ValueError(f"unknown {self.kind} {name!r}; known: {known}")
        return found

    def from_config(self, config: dict[str, Any]) -> Any:
        """An instance from a Keras-style ``{"class_name", "config"}`` dict."""
        return self.lookup(config["class_name"]).from_config(dict(config.get("config") or {}))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and canonical(name) in self._items

    def names(self) -> list[str]:
        return sorted(set(self._names.values()))
