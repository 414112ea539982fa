"""R-shaped Python values and the "r" converters for them (shared by both R hosts).

R has vectors where Python has scalars and lists, and R has factors and data frames. These
small classes let such values cross R -> Python -> R unchanged:

* :class:`StrVector` (a ``list`` of ``str``, ``NA_character`` for NA): an R character vector.
* :class:`RList` (a ``list``, optional ``names``): an R list that is not a plain named list.
* :class:`Factor`: an R factor (0-based ``codes`` with -1 for NA, ``levels``, ``ordered``).
* :class:`DataFrame` (a ``dict`` of columns, ``row_names``): an R data.frame.

Python -> R: ``StrVector``, ``RList``, ``Factor``, ``DataFrame`` become what they came from
(descriptors :class:`RVector`, :class:`RListDesc`, :class:`RFactor`, :class:`RDataFrame`, which
each host turns into native R objects). These converters are additions to the "r" tables; no
built-in is overridden.

Hosts present a plain ``List`` descriptor whose items are all strings (or NA_character), all
logicals (or NA), all R integers (or NA_integer) or all doubles (or NA_real_) as an atomic R
vector (reticulate's rule, :func:`atomic_kind`); an ``RListDesc`` always stays an R list, so
an R list makes the round trip R -> Python -> R unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..arrays import array_to_descriptor
from ..builtins_r import R_ARRAYS, R_INT_MAX
from ..descriptors import Bool, Desc, Dict, Float, Int, List, NAValue, Str
from ..errors import ConversionError
from ..na import INT_MIN, NA_REAL, NA_character, NAType, na_for
from ..registry import Context, Registry

__all__ = [
    "DataFrame",
    "Factor",
    "RDataFrame",
    "RFactor",
    "RList",
    "RListDesc",
    "RVector",
    "StrVector",
    "atomic_kind",
    "atomic_values",
    "install_r_types",
]


# -- values ---------------------------------------------------------------------------------------
class StrVector(list):
    """An R character vector: a list of ``str`` with ``NA_character`` for missing values."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"StrVector({list.__repr__(self)})"


class RList(list):
    """An R list that does not map to a plain dict (unnamed, or with empty/duplicate names).

    ``names`` is None or a list of str (one per item)."""

    __slots__ = ("names",)

    def __init__(self, items: Iterable[Any] = (), names: list[str] | None = None) -> None:
        super().__init__(items)
        if names is not None and len(names) != len(self):
            raise ValueError(f"RList: {len(names)} names for {len(self)} items")
        self.names = names

    def __repr__(self) -> str:
        if self.names is None:
            return f"RList({list.__repr__(self)})"
        return f"RList({list.__repr__(self)}, names={self.names!r})"


class Factor:
    """An R factor: ``codes`` (int32, 0-based, -1 = NA), ``levels`` (list of str),
    ``ordered``. Iterating gives the labels (``NA_character`` for missing values)."""

    __slots__ = ("codes", "levels", "ordered")

    def __init__(self, codes: Any, levels: Iterable[str], ordered: bool = False) -> None:
        c = np.asarray(codes, dtype=np.int32)
        if c.ndim != 1:
            raise ValueError("Factor: codes must be one-dimensional")
        self.levels = [str(v) for v in levels]
        if c.size and (c.min() < -1 or c.max() >= len(self.levels)):
            raise ValueError("Factor: codes must be in -1 .. len(levels) - 1")
        self.codes = c
        self.ordered = bool(ordered)

    @classmethod
    def from_labels(
        cls, labels: Iterable[Any], levels: Iterable[str] | None = None, ordered: bool = False
    ) -> Factor:
        labels = list(labels)
        if levels is None:
            levels = sorted({str(v) for v in labels if not isinstance(v, NAType)})
        lv = list(levels)
        index = {v: i for i, v in enumerate(lv)}
        codes = [-1 if isinstance(v, NAType) else index.get(str(v), -1) for v in labels]
        return cls(codes, lv, ordered)

    def __len__(self) -> int:
        return int(self.codes.size)

    def __getitem__(self, i: int) -> Any:
        c = int(self.codes[i])
        return NA_character if c < 0 else self.levels[c]

    def __iter__(self) -> Iterator[Any]:
        lv = self.levels
        for c in self.codes.tolist():
            yield NA_character if c < 0 else lv[c]

    def tolist(self) -> list[Any]:
        return list(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Factor):
            return NotImplemented
        return (
            self.levels == other.levels
            and self.ordered == other.ordered
            and np.array_equal(self.codes, other.codes)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        kind = "ordered " if self.ordered else ""
        shown = ", ".join(repr(v) for v in list(self)[:10])
        more = ", ..." if len(self) > 10 else ""
        return f"Factor([{shown}{more}], {kind}levels={self.levels!r})"


class DataFrame(dict):
    """An R data.frame: an ordered dict of equal-length columns plus ``row_names`` (None for
    R's automatic 1..n, else a list of str)."""

    __slots__ = ("row_names",)

    def __init__(self, columns: Any = (), row_names: list[str] | None = None) -> None:
        super().__init__(columns)
        self.row_names = row_names

    @property
    def nrow(self) -> int:
        for col in self.values():
            return len(col)
        return len(self.row_names) if self.row_names is not None else 0

    def __repr__(self) -> str:
        cols = ", ".join(f"{k}: {type(v).__name__}[{len(v)}]" for k, v in self.items())
        return f"DataFrame({self.nrow} rows; {cols})"


# -- descriptors ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RVector(Desc):
    """An atomic R vector given as Python scalars. ``rtype`` is "character", "logical",
    "integer" or "double"; NA items are the bridge's NA values."""

    rtype: str
    values: tuple[Any, ...]
    kind: ClassVar[str] = "r_vector"


@dataclass(frozen=True, slots=True)
class RFactor(Desc):
    """An R factor: ``codes`` an Array descriptor of 1-based int32 codes (NA = INT_MIN)."""

    codes: Any
    levels: tuple[str, ...]
    ordered: bool = False
    kind: ClassVar[str] = "r_factor"


@dataclass(frozen=True, slots=True)
class RDataFrame(Desc):
    """An R data.frame: column names, column descriptors, row names (None: automatic)."""

    names: tuple[str, ...]
    columns: tuple[Any, ...]
    row_names: tuple[str, ...] | None = None
    kind: ClassVar[str] = "r_data_frame"


@dataclass(frozen=True, slots=True)
class RListDesc(List):
    """An R list that must stay a list in R (no simplification to an atomic vector)."""

    kind: ClassVar[str] = "r_list"


# -- Python -> R ----------------------------------------------------------------------------------
_SCALAR_KIND = {Str: "character", Bool: "logical", Int: "integer", Float: "double"}
_NA_KIND = {"str": "character", "logical": "logical", "int32": "integer", "float64": "double"}


def atomic_kind(items: tuple[Any, ...]) -> str | None:
    """The R vector type a plain list of scalar descriptors simplifies to, or None."""
    if not items:
        return None
    kind = None
    for d in items:
        t = type(d)
        k = _SCALAR_KIND.get(t) if t is not NAValue else _NA_KIND.get(d.dtype)
        if k is None or (kind is not None and k != kind):
            return None
        kind = k
    return kind


def atomic_values(items: tuple[Any, ...]) -> tuple[Any, ...]:
    """The Python values of scalar descriptors (NA descriptors as the bridge's NA values)."""
    return tuple(na_for(d.dtype) if type(d) is NAValue else d.value for d in items)


def _atomic_kind(items: list[Any]) -> str | None:
    """The R type a list of Python scalars simplifies to (for data frame columns)."""
    if not items:
        return None
    kind = None
    for v in items:
        t = type(v)
        if t is str:
            k = "character"
        elif t is bool:
            k = "logical"
        elif t is int:
            k = "integer" if INT_MIN < v <= R_INT_MAX else None
        elif t is float:
            k = "double"
        elif isinstance(v, NAType):
            k = {"str": "character", "logical": "logical", "int32": "integer"}[v.dtype]
        else:
            k = None
        if k is None or (kind is not None and k != kind):
            return None
        kind = k
    return kind


def str_vector_out(value: StrVector, cx: Context) -> RVector:
    for i, v in enumerate(value):
        if not (isinstance(v, str) or v is NA_character):
            raise ConversionError(
                f"StrVector item {i} is {type(v).__name__}, not str or NA_character"
            )
    return RVector("character", tuple(value))


def rlist_out(value: RList, cx: Context) -> Any:
    cx.enter(value)
    try:
        items = tuple(cx.convert(item, i) for i, item in enumerate(value))
    finally:
        cx.leave(value)
    if value.names is None:
        return RListDesc(items)
    return Dict(tuple(str(n) for n in value.names), items)


def _codes_descriptor(codes: np.ndarray) -> Any:
    r = codes.astype(np.int32) + 1
    missing = codes < 0
    if missing.any():
        r = np.ma.MaskedArray(r, mask=missing)  # NA_integer_ in R
    return array_to_descriptor(r, R_ARRAYS)


def factor_out(value: Factor, cx: Context) -> RFactor:
    return RFactor(_codes_descriptor(value.codes), tuple(value.levels), value.ordered)


def data_frame_out(value: DataFrame, cx: Context) -> RDataFrame:
    n = None
    names, cols = [], []
    cx.enter(value)
    try:
        for k, col in value.items():
            length = len(col)
            if n is None:
                n = length
            elif length != n:
                raise ConversionError(
                    f"DataFrame column {k!r} has {length} rows, expected {n}"
                )
            if isinstance(col, list) and not isinstance(col, (StrVector, RList)):
                kind = _atomic_kind(col)
                desc = RVector(kind, tuple(col)) if kind else cx.convert(col, k)
            else:
                desc = cx.convert(col, k)
            names.append(str(k))
            cols.append(desc)
    finally:
        cx.leave(value)
    rn = tuple(str(r) for r in value.row_names) if value.row_names is not None else None
    return RDataFrame(tuple(names), tuple(cols), rn)


# -- R -> Python (for descriptors a host sends) ---------------------------------------------------
def r_vector_in(value: RVector, cx: Context) -> Any:
    if value.rtype == "character":
        return StrVector(value.values)
    if value.rtype == "double":
        return np.array(
            [NA_REAL if isinstance(v, NAType) else v for v in value.values], dtype=np.float64
        )
    if value.rtype == "integer":
        mask = [isinstance(v, NAType) for v in value.values]
        data = np.array([0 if m else v for v, m in zip(value.values, mask)], dtype=np.int32)
        return np.ma.MaskedArray(data, mask=mask) if any(mask) else data
    if value.rtype == "logical":
        mask = [isinstance(v, NAType) for v in value.values]
        data = np.array([False if m else bool(v) for v, m in zip(value.values, mask)])
        return np.ma.MaskedArray(data, mask=mask) if any(mask) else data
    raise ConversionError(f"unknown R vector type {value.rtype!r}")


def r_list_in(value: RListDesc, cx: Context) -> RList:
    return RList([cx.convert(item, i) for i, item in enumerate(value.items)])


def codes_from_r(codes: Any) -> np.ndarray:
    """0-based codes (-1 = NA) from 1-based R codes (masked or INT_MIN = NA)."""
    mask = np.ma.getmaskarray(codes) if isinstance(codes, np.ma.MaskedArray) else None
    c = np.asarray(codes.data if mask is not None else codes, dtype=np.int32) - 1
    bad = c == INT_MIN - 1 if mask is None else mask
    if np.any(bad):
        c = c.copy() if not c.flags.writeable else c
        c[bad] = -1
    return c


def r_factor_in(value: RFactor, cx: Context) -> Factor:
    return Factor(codes_from_r(cx.convert(value.codes)), value.levels, value.ordered)


def r_data_frame_in(value: RDataFrame, cx: Context) -> DataFrame:
    cols = {n: cx.convert(c, n) for n, c in zip(value.names, value.columns)}
    rn = list(value.row_names) if value.row_names is not None else None
    return DataFrame(cols, rn)


def install_r_types(out: Registry, inp: Registry) -> None:
    """Register the R-shaped types on the "r" tables (idempotent)."""
    out.register(StrVector, str_vector_out)
    out.register(RList, rlist_out)
    out.register(Factor, factor_out)
    out.register(DataFrame, data_frame_out)
    inp.register(RVector, r_vector_in)
    inp.register(RListDesc, r_list_in)
    inp.register(RFactor, r_factor_in)
    inp.register(RDataFrame, r_data_frame_in)

