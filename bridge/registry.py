"""Conversion registries: ``py_to_foreign[lang]`` and ``foreign_to_py[lang]``.

Each registry is an explicit table ``type -> converter`` for one language and direction.
``converter(value, cx)`` returns the converted value; it converts children with
``cx.convert(child, key)`` (which tracks the path for error messages and detects cycles) and may
return ``NotImplemented`` to decline, which sends the value to the fallback.

Dispatch follows the value's MRO (most derived registered class wins), then registered abstract
base classes (``collections.abc.Callable``...). A converter can also be registered for a type by
its qualified name (``"numpy.ndarray"``, ``"fractions.Fraction"``): the name is matched against
each class of the MRO, so the module need not be importable (or imported) when registering —
how the bridge supports NumPy only where it is present, and how clients register converters for
Python types by name. Fallbacks: a Python value no converter takes
crosses as a handle (:class:`Ref`), never as ``str()``; a foreign value no converter takes is
returned unchanged (FFIs hand over primitives and proxies that are already Python objects).

The tables are process-global (not context variables, which vanish in worker threads).
Registration is serialized by a lock and publishes a new table atomically (copy on write), so
lookups in other threads never lock and never see a half-made table.
"""

from __future__ import annotations

import abc
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .descriptors import Ref
from .errors import ConversionError
from .handles import handles

__all__ = [
    "Context",
    "Converter",
    "Registry",
    "define_language",
    "foreign_to_py",
    "from_foreign",
    "languages",
    "py_to_foreign",
    "to_foreign",
]

Converter = Callable[[Any, "Context"], Any]

_MISS: Any = object()
PY_TO_FOREIGN = "py_to_foreign"
FOREIGN_TO_PY = "foreign_to_py"


class Context:
    """State of one conversion: the language, the path to the current value, the containers
    being converted (to detect cycles)."""

    # One is made per top-level value, so it is kept cheap: ``path`` and the set of active
    # containers are made on first use (most values are leaves that never touch them).
    __slots__ = ("_active", "path", "registry")

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.path: list[Any] | None = None
        self._active: set[int] | None = None

    @property
    def lang(self) -> str:
        return self.registry.lang

    def convert(self, value: Any, key: Any = None) -> Any:
        """Convert a child value; ``key`` (index or dict key) locates errors inside it."""
        if key is None:
            return self.registry._convert_one(value, self)
        if self.path is None:
            self.path = []
        self.path.append(key)
        try:
            return self.registry._convert_one(value, self)
        except ConversionError as exc:
            if not exc.path:  # the innermost level knows the full path
                exc.locate(self.format_path())
            raise
        finally:
            self.path.pop()

    def enter(self, container: Any) -> None:
        """Mark a container as being converted; converting it again inside itself is a cycle."""
        key = id(container)
        if self._active is None:
            self._active = set()
        elif key in self._active:
            raise ConversionError(
                f"{type(container).__name__} contains itself; a cyclic structure cannot cross "
                f"by value (pass it inside an object that crosses as a handle)"
            )
        self._active.add(key)

    def leave(self, container: Any) -> None:
        if self._active is not None:
            self._active.discard(id(container))

    def format_path(self) -> str:
        return "".join(f"[{k!r}]" for k in self.path or ())


class Registry:
    """Converters for one language and direction. ``print(registry)`` shows the table."""

    def __init__(self, lang: str, direction: str) -> None:
        if direction not in (PY_TO_FOREIGN, FOREIGN_TO_PY):
            raise ValueError(f"direction must be {PY_TO_FOREIGN!r} or {FOREIGN_TO_PY!r}")
        self.lang = lang
        self.direction = direction
        self._lock = threading.Lock()
        self._table: dict[type | str, Converter] = {}
        self._names = False  # whether the table has entries by qualified name
        self._cache: dict[type, Converter | None] = {}

    # -- registration -----------------------------------------------------------------------
    def register(
        self, cls: type | str | tuple[type | str, ...], fn: Converter | None = None
    ) -> Any:
        """Register ``fn`` for ``cls`` (a type, a qualified type name such as
        ``"numpy.ndarray"``, or a tuple of them), replacing any converter there. Plain call
        ``register(T, fn)`` or decorator ``@register(T)``."""
        if fn is None:

            def decorator(f: Converter) -> Converter:
                self.register(cls, f)
                return f

            return decorator
        classes = cls if isinstance(cls, tuple) else (cls,)
        for c in classes:
            if isinstance(c, str):
                if not _QUALNAME.fullmatch(c):
                    raise TypeError(
                        f"register(): expected a type or a qualified type name like "
                        f"'module.Type', got {c!r}"
                    )
            elif not isinstance(c, type):
                raise TypeError(f"register(): expected a type or 'module.Type', got {c!r}")
        if not callable(fn):
            raise TypeError(f"register(): converter for {classes} is not callable: {fn!r}")
        with self._lock:
            table = dict(self._table)
            for c in classes:
                table[c] = fn
            self._publish(table)
        return fn

    def unregister(self, cls: type | str) -> Converter | None:
        """Remove the converter registered exactly for ``cls`` (a type or a qualified name);
        returns it (None if absent)."""
        with self._lock:
            table = dict(self._table)
            fn = table.pop(cls, None)
            self._publish(table)
        return fn

    def update(self, other: Registry) -> None:
        """Copy every converter of ``other`` into this registry (overriding same types)."""
        with self._lock:
            table = dict(self._table)
            table.update(other._table)
            self._publish(table)

    def _publish(self, table: dict[type | str, Converter]) -> None:
        # Order matters: lookups read the cache first and the table second, so a lookup that
        # sees the new cache also sees the new table.
        self._names = any(isinstance(c, str) for c in table)
        self._table = table
        self._cache = {}

    # -- dispatch ---------------------------------------------------------------------------
    def lookup(self, cls: type) -> Converter | None:
        """The converter for values of type ``cls``, or None when the fallback applies."""
        cache = self._cache
        try:
            return cache[cls]
        except KeyError:
            pass
        fn = _find(cls, self._table, self._names)
        cache[cls] = fn  # a concurrent registration may have swapped `cache`: harmless
        return fn

    def convert(self, value: Any) -> Any:
        """Convert one value (and everything inside it)."""
        t = type(value)
        fn = self._cache.get(t, _MISS)  # (lookup() inlined: this is every call's hot path)
        if fn is _MISS:
            fn = self.lookup(t)
        if fn is not None:
            out = fn(value, Context(self))
            if out is not NotImplemented:
                return out
        if self.direction == PY_TO_FOREIGN:
            return Ref(handles.register(value), t.__name__)
        return value

    def _convert_one(self, value: Any, cx: Context) -> Any:
        fn = self._cache.get(type(value), _MISS)
        if fn is _MISS:
            fn = self.lookup(type(value))
        if fn is not None:
            out = fn(value, cx)
            if out is not NotImplemented:
                return out
        if self.direction == PY_TO_FOREIGN:
            return Ref(handles.register(value), type(value).__name__)
        return value

    # -- introspection ----------------------------------------------------------------------
    def items(self) -> list[tuple[type | str, Converter]]:
        return list(self._table.items())

    def __iter__(self) -> Iterator[type | str]:
        return iter(list(self._table))

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, cls: object) -> bool:
        return cls in self._table

    def __getitem__(self, cls: type | str) -> Converter:
        return self._table[cls]

    def __repr__(self) -> str:
        lines = [f"{self.direction}[{self.lang!r}]: {len(self._table)} converters"]
        rows = sorted(self._table.items(), key=lambda kv: (_type_name(kv[0])))
        width = max((len(_type_name(c)) for c, _ in rows), default=0)
        for cls, fn in rows:
            lines.append(f"  {_type_name(cls):<{width}}  ->  {_fn_name(fn)}")
        fallback = "handle (Ref)" if self.direction == PY_TO_FOREIGN else "unchanged"
        lines.append(f"  {'(no match)':<{width}}  ->  {fallback}")
        return "\n".join(lines)


_QUALNAME = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+")


def _find(cls: type, table: Mapping[type | str, Converter], names: bool) -> Converter | None:
    mro = cls.__mro__
    for base in mro:
        fn = table.get(base)
        if fn is None and names:
            fn = table.get(f"{base.__module__}.{base.__qualname__}")
        if fn is not None:
            return fn
    # Abstract base classes (virtual subclasses do not show in the MRO): the most specific one.
    best: type | None = None
    for candidate in table:
        if isinstance(candidate, abc.ABCMeta) and candidate not in mro:
            try:
                ok = issubclass(cls, candidate)
            except TypeError:
                ok = False
            if ok and (best is None or issubclass(candidate, best)):
                best = candidate
    return table[best] if best is not None else None


def _type_name(cls: type | str) -> str:
    if isinstance(cls, str):
        return cls
    mod = cls.__module__
    return cls.__qualname__ if mod == "builtins" else f"{mod}.{cls.__qualname__}"


def _fn_name(fn: Any) -> str:
    name = getattr(fn, "__qualname__", None)
    if not isinstance(name, str):
        return repr(fn)  # a converter object: its repr says what it is
    mod = getattr(fn, "__module__", None) or ""
    return f"{mod}.{name}" if mod else name


class _Tables(Mapping[str, Registry]):
    """``py_to_foreign`` / ``foreign_to_py``: language name -> Registry."""

    def __init__(self, direction: str) -> None:
        self.direction = direction
        self._regs: dict[str, Registry] = {}

    def __getitem__(self, lang: str) -> Registry:
        try:
            return self._regs[lang]
        except KeyError:
            known = ", ".join(sorted(self._regs)) or "none"
            raise KeyError(
                f"no {self.direction} table for language {lang!r} (known: {known}); "
                f"create one with tensorbridge.bridge.define_language({lang!r}, like='js')"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._regs))

    def __len__(self) -> int:
        return len(self._regs)

    def __repr__(self) -> str:
        return "\n\n".join(repr(r) for r in self._regs.values()) or f"{self.direction}: empty"


py_to_foreign = _Tables(PY_TO_FOREIGN)
foreign_to_py = _Tables(FOREIGN_TO_PY)
_define_lock = threading.Lock()


def define_language(lang: str, *, like: str | None = None) -> tuple[Registry, Registry]:
    """Create (or return) the two registries of a language. ``like`` copies another language's
    converters as a starting point (a client for a new host starts from "js" or "r")."""
    with _define_lock:
        if lang in py_to_foreign._regs:
            return py_to_foreign._regs[lang], foreign_to_py._regs[lang]
        out_reg, in_reg = Registry(lang, PY_TO_FOREIGN), Registry(lang, FOREIGN_TO_PY)
        if like is not None:
            out_reg.update(py_to_foreign[like])
            in_reg.update(foreign_to_py[like])
        py_to_foreign._regs[lang] = out_reg
        foreign_to_py._regs[lang] = in_reg
        return out_reg, in_reg


def languages() -> list[str]:
    return list(py_to_foreign)


def to_foreign(lang: str, value: Any) -> Any:
    """Convert a Python value to descriptors for ``lang``."""
    return py_to_foreign[lang].convert(value)


def from_foreign(lang: str, value: Any) -> Any:
    """Convert descriptors (or FFI values) from ``lang`` to Python."""
    return foreign_to_py[lang].convert(value)
