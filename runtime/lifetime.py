"""Tensor lifetimes in the style of TensorFlow.js: ``tidy()``, ``keep()``, ``dispose()``
(``memory()``, the counts per backend, is in ``backends``).

Python frees a tensor's buffer when the last reference goes, so most code needs none of this.
It matters for long loops on accelerators and for tensors owned by R or JavaScript, where the
garbage collector runs late: ``tidy`` disposes every tensor created inside it that is neither
returned nor kept, and ``memory()`` lets tests check that counts return to their baseline.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from .pytree import tree_leaves
from .tensor import Tensor

__all__ = ["dispose", "keep", "record", "tidy"]

# Tidy scopes are per thread, so a tidy on one thread never disposes another thread's tensors.
# `open_scopes` counts open scopes in all threads: tensor creation checks it (one global read)
# before paying for the thread-local lookup.
_local = threading.local()
open_scopes = 0
_count_lock = threading.Lock()
_kept_ids: set[int] = set()


def _thread_scopes() -> list[list[Any]]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def record(tensor: Any) -> None:
    """Called for each new tensor while any scope is open."""
    stack = _thread_scopes()
    if stack:
        stack[-1].append(tensor)


def _push() -> None:
    global open_scopes
    _thread_scopes().append([])
    with _count_lock:
        open_scopes += 1


def _pop(keep_tree: Any) -> None:
    global open_scopes
    stack = _thread_scopes()
    created = stack.pop()
    with _count_lock:
        open_scopes -= 1
    survivors = {id(t) for t in tree_leaves(keep_tree) if isinstance(t, Tensor)}
    parent = stack[-1] if stack else None
    for t in created:
        if id(t) in _kept_ids:
            continue
        if id(t) in survivors:
            if parent is not None:
                parent.append(t)  # a returned tensor belongs to the enclosing scope
            continue
        t.dispose()


class _TidyScope:
    def __enter__(self) -> _TidyScope:
        _push()
        return self

    def __exit__(self, *exc: Any) -> None:
        _pop(keep_tree=None)


def tidy(fn: Callable[..., Any] | None = None, *args: Any, **kwargs: Any) -> Any:
    """Dispose every tensor created inside that is neither returned nor kept.

    ``tidy(fn, *args)`` runs ``fn`` now and returns its result (tensors anywhere in a returned
    list/tuple/dict survive); ``with tidy(): ...`` is the context-manager form, where survivors
    must be marked with :func:`keep`.
    """
    if fn is None:
        return _TidyScope()
    _push()
    result = None
    try:
        result = fn(*args, **kwargs)
        return result
    finally:
        _pop(keep_tree=result)


def keep(tensor: Any) -> Any:
    """Exempt ``tensor`` (or every tensor in a nested structure) from enclosing tidy scopes."""
    for t in tree_leaves(tensor):
        if isinstance(t, Tensor):
            _kept_ids.add(id(t))
            _forget_when_dead(t)
    return tensor


def _forget_when_dead(t: Any) -> None:
    tid = id(t)
    weakref.finalize(t, _kept_ids.discard, tid)


def dispose(tree: Any) -> None:
    """Dispose a tensor or every tensor in a nested structure (lists, tuples, dicts)."""
    for t in tree_leaves(tree):
        if isinstance(t, Tensor):
            t.dispose()
