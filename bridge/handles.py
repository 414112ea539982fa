"""Reference-counted handles: how Python objects are held by R and JavaScript.

A foreign proxy for a Python object holds a handle id. The table maps id -> (object, refcount)
until the count drops to zero. Guarantees:

* Ids come from one process-wide counter and are never reused, so a stale id can never resolve
  to a different object. Resolving a released or never-issued id raises :class:`HandleError`
  saying which id, that it was released, what it held and how it was released.
* Releasing an already released handle is a no-op (foreign finalizers may race explicit
  ``dispose()`` calls).
* No operation takes a lock. Under the GIL each step is a single atomic dict/list/deque
  operation: the refcount is a list of tokens (``append`` retains, ``pop`` releases), and only
  the thread whose ``dict.pop`` removes the entry runs the release bookkeeping. So a foreign
  finalizer can never deadlock against a main thread paused inside the table.
* :meth:`HandleTable.release_deferred` is the finalizer entry point: it only appends the id to a
  deque, so the object's own destructor (which may take runtime locks) does not run inside the
  foreign GC. Deferred releases are applied by :meth:`drain`, which the dispatcher's pump,
  ``register`` and ``stats`` call.
"""

from __future__ import annotations

import itertools
import operator
import warnings
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

from .errors import HandleError

__all__ = [
    "HandleTable",
    "drain",
    "handles",
    "refcount",
    "register",
    "release",
    "release_deferred",
    "resolve",
    "retain",
    "stats",
]

_RING_MASK = (1 << 16) - 1  # remembers how the last 65536 handles were released
_TOKEN = None

# An entry is a plain tuple (the hot path allocates one per handle):
# (object, refs: a list with one token per reference, type name, on_release hook or None).
_OBJ, _REFS, _TYPE, _HOOK = 0, 1, 2, 3


def _as_id(hid: Any) -> int:
    if type(hid) is int:
        return hid
    if isinstance(hid, float) and hid.is_integer():  # R passes numbers as doubles
        return int(hid)
    try:
        return operator.index(hid)
    except TypeError:
        raise HandleError(
            hid, "unknown", f"{hid!r} is not a handle id (expected an integer)"
        ) from None


class HandleTable:
    """A thread-safe, lock-free table of reference-counted handles."""

    def __init__(self, name: str = "handles") -> None:
        self.name = name
        self._entries: dict[int, tuple[Any, list[None], str, Any]] = {}
        self._ids = itertools.count(1)
        self._released = itertools.count()
        self._pending: deque[tuple[int, str]] = deque()
        self._ring: list[tuple[int, str, str] | None] = [None] * (_RING_MASK + 1)

    # -- lifetime ---------------------------------------------------------------------------
    def register(self, obj: Any, *, on_release: Callable[[Any], None] | None = None) -> int:
        """A new handle for ``obj`` with refcount 1; ``on_release(obj)`` runs when it is freed."""
        if self._pending:
            self.drain()
        hid = next(self._ids)
        self._entries[hid] = (obj, [_TOKEN], type(obj).__name__, on_release)
        return hid

    def retain(self, hid: Any) -> int:
        """Add a reference; returns the new count. The caller must already hold one."""
        if type(hid) is not int:
            hid = _as_id(hid)
        entry = self._entries.get(hid)
        if entry is None or not entry[_REFS]:
            raise self._dead(hid)
        entry[_REFS].append(_TOKEN)
        return len(entry[_REFS])

    def release(self, hid: Any, *, how: str = "by release()") -> bool:
        """Drop a reference. True when that freed the object; releasing a released handle is a
        no-op (False). Runs the object's destructor in this thread: from a finalizer use
        :meth:`release_deferred`."""
        if type(hid) is not int:
            hid = _as_id(hid)
        entry = self._entries.get(hid)
        if entry is None:
            if not 0 < hid < self._next_id():
                raise self._dead(hid)
            return False  # already released
        refs = entry[_REFS]
        try:
            refs.pop()
        except IndexError:
            return False  # another thread released the last reference a moment ago
        if refs:
            return False
        return self._free(hid, how)

    def release_deferred(self, hid: Any, *, how: str = "by a finalizer") -> None:
        """Schedule a release without running anything else: safe from any thread, from a
        foreign finalizer or a Python ``__del__``. Never raises for a bad id."""
        self._pending.append((hid, how))

    def drain(self) -> int:
        """Apply deferred releases; returns how many were applied."""
        n = 0
        pending = self._pending
        while True:
            try:
                hid, how = pending.popleft()
            except IndexError:
                return n
            try:
                self.release(hid, how=how)
            except HandleError:
                pass  # a finalizer for an id that was never valid: nothing to free
            except Exception as exc:  # an on_release hook failed; keep draining
                warnings.warn(
                    f"release hook of handle {hid} raised {exc!r}", RuntimeWarning, stacklevel=2
                )
            n += 1

    def _free(self, hid: int, how: str) -> bool:
        entry = self._entries.pop(hid, None)
        if entry is None:
            return False  # another releaser won the race
        next(self._released)
        self._ring[hid & _RING_MASK] = (hid, entry[_TYPE], how)
        hook = entry[_HOOK]
        if hook is not None:
            hook(entry[_OBJ])
        return True

    # -- lookup -----------------------------------------------------------------------------
    def resolve(self, hid: Any) -> Any:
        """The object behind a live handle."""
        entry = self._entries.get(hid) if type(hid) is int else self._entries.get(_as_id(hid))
        if entry is None or not entry[_REFS]:
            raise self._dead(_as_id(hid))
        return entry[_OBJ]

    def refcount(self, hid: Any) -> int:
        """The number of references held on a handle (0 once released)."""
        entry = self._entries.get(_as_id(hid))
        return len(entry[_REFS]) if entry is not None else 0

    def type_name(self, hid: Any) -> str:
        entry = self._entries.get(_as_id(hid))
        if entry is None or not entry[_REFS]:
            raise self._dead(_as_id(hid))
        return entry[_TYPE]

    def __contains__(self, hid: Any) -> bool:
        try:
            entry = self._entries.get(_as_id(hid))
        except HandleError:
            return False
        return entry is not None and bool(entry[_REFS])

    def stats(self) -> dict[str, Any]:
        """Live handles by type (after applying deferred releases), for leak tests."""
        self.drain()
        entries = list(self._entries.values())  # one atomic copy
        by_type = Counter(e[_TYPE] for e in entries)
        return {
            "live": len(entries),
            "refs": sum(len(e[_REFS]) for e in entries),
            "by_type": dict(sorted(by_type.items())),
            "issued": self._next_id() - 1,
            "released": _peek(self._released),
            "pending": len(self._pending),
        }

    def __repr__(self) -> str:
        s = self.stats()
        return f"<HandleTable {self.name!r}: {s['live']} live of {s['issued']} issued>"

    # -- helpers ----------------------------------------------------------------------------
    def _next_id(self) -> int:
        return _peek(self._ids)

    def _dead(self, hid: int) -> HandleError:
        if 0 < hid < self._next_id():
            record = self._ring[hid & _RING_MASK]
            detail = ""
            if record is not None and record[0] == hid:
                detail = f" (it held a {record[1]}; released {record[2]})"
            return HandleError(
                hid,
                "released",
                f"handle {hid} was released; the object is no longer available{detail}",
            )
        return HandleError(
            hid,
            "unknown",
            f"handle {hid} is unknown: no such handle was ever issued "
            f"(ids start at 1; the last one issued is {self._next_id() - 1})",
        )


def _peek(counter: itertools.count) -> int:
    """The next value of an itertools.count without consuming it (its repr is 'count(N)')."""
    return int(repr(counter)[6:-1])


#: The process-wide table every language shares.
handles = HandleTable()

register = handles.register
retain = handles.retain
release = handles.release
release_deferred = handles.release_deferred
drain = handles.drain
resolve = handles.resolve
refcount = handles.refcount
stats = handles.stats
