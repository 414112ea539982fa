"""Arrays with R's missing values whose reductions see them (needs NumPy).

R integer and logical vectors hold NA in-band (``INT_MIN``); in Python they are masked arrays
(``numpy.ma``), the data still a view of R's memory. A plain masked array's reductions *skip*
masked elements (``np.sum`` of ``c(1L, NA, 3L)`` would be 4): a missing value would vanish.
:class:`NAArray` is a masked array whose reductions follow R (``na.rm = FALSE``): a sum, mean,
product, minimum, maximum, variance... over a missing value is missing (a masked result), and
``any``/``all`` are three-valued as in R (``any(c(TRUE, NA))`` is TRUE, ``all(c(TRUE, NA))``
NA). Element-wise arithmetic keeps the mask, as ``numpy.ma`` always does, and the result stays
an :class:`NAArray`. Functions that ignore masks altogether (``np.asarray``, ``np.dot``) see the
data under the mask; fill the missing values first (``x.filled(...)``) or drop them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["NAArray"]


def _axis_mask(mask: Any, axis: Any, keepdims: bool) -> Any:
    if axis is None and not keepdims:
        return bool(mask.any())
    return mask.any(axis=axis, keepdims=keepdims)


def _result(data: Any, na: Any) -> Any:
    """``data`` with ``na`` masked: an NAArray (0-d for a full reduction, so the dtype stays),
    or the plain value when nothing is missing."""
    if not np.any(na):
        return data
    return NAArray(np.asarray(data), mask=np.asarray(na))


def _reduction(name: str) -> Any:
    def method(self: NAArray, axis: Any = None, *args: Any, **kwargs: Any) -> Any:
        mask = np.ma.getmaskarray(self)
        if not mask.any():
            return getattr(np.asarray(self.data), name)(axis, *args, **kwargs)
        if kwargs.get("out") is not None:
            raise TypeError(f"{name}(out=...) of an array with NA is not supported")
        data = getattr(np.asarray(self.filled(1)), name)(axis, *args, **kwargs)
        return _result(data, _axis_mask(mask, axis, bool(kwargs.get("keepdims", False))))

    method.__name__ = name
    method.__doc__ = f"R's {name} with na.rm = FALSE: missing when any value reduced is NA."
    return method


def _accumulation(name: str) -> Any:
    def method(self: NAArray, axis: Any = None, *args: Any, **kwargs: Any) -> Any:
        mask = np.ma.getmaskarray(self)
        data = getattr(np.asarray(self.filled(1)), name)(axis, *args, **kwargs)
        if not mask.any():
            return data
        flat = mask.ravel() if axis is None else mask
        na = np.logical_or.accumulate(flat, axis=0 if axis is None else axis)
        return _result(data, na)

    method.__name__ = name
    return method


class NAArray(np.ma.MaskedArray):
    """A masked array holding R's NA: reductions over a missing value are missing."""

    sum = _reduction("sum")
    prod = _reduction("prod")
    product = _reduction("prod")
    mean = _reduction("mean")
    var = _reduction("var")
    std = _reduction("std")
    min = _reduction("min")
    max = _reduction("max")
    ptp = _reduction("ptp")
    cumsum = _accumulation("cumsum")
    cumprod = _accumulation("cumprod")

    def any(self, axis: Any = None, out: Any = None, keepdims: Any = np._NoValue) -> Any:
        """R's ``any``: TRUE if any known value is TRUE, else NA if any is missing."""
        keep = keepdims is True
        mask = np.ma.getmaskarray(self)
        known = np.asarray(self.filled(False)).astype(bool).any(axis=axis, keepdims=keep)
        if not mask.any():
            return known
        return _result(known, np.logical_and(_axis_mask(mask, axis, keep), ~known))

    def all(self, axis: Any = None, out: Any = None, keepdims: Any = np._NoValue) -> Any:
        """R's ``all``: FALSE if any known value is FALSE, else NA if any is missing."""
        keep = keepdims is True
        mask = np.ma.getmaskarray(self)
        known = np.asarray(self.filled(True)).astype(bool).all(axis=axis, keepdims=keep)
        if not mask.any():
            return known
        return _result(known, np.logical_and(_axis_mask(mask, axis, keep), known))
