"""The Python side of the cross-language conformance suite (``tests/conformance/``).

Every front door replays the same table of cases: it builds a value as written in its own
language, hands it to Python, and asks this module whether what Python received is what the
case says (:func:`check`). The comparison is decided here, once, so the doors differ only in
how they write values and catch errors. Needs no NumPy (the browser door runs it in Pyodide).

A description (:func:`describe`) is plain JSON: ``{"type": ..., ...}`` with ``value`` for
scalars, ``items`` for lists, ``keys``/``values`` for dicts, and ``dtype``/``shape``/``values``
(flattened in C order) for arrays and tensors. Special numbers are strings: ``"nan"``,
``"inf"``, ``"-inf"``, and ``"NA"`` for a missing value (R's ``NA_real_``, a masked element, the
``NA`` singletons). An expectation is a partial description: only the keys it names are
compared; numbers compare exactly unless it says ``"tolerance": "policy"`` (then the tolerance
policy of :mod:`tensorbridge.runtime.testing` applies, for results of computations).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from ..runtime.testing import check_close
from .na import NAType, is_na_real

__all__ = ["check", "check_json", "describe", "describe_json", "echo"]


def echo(x: Any) -> Any:
    """The value itself: a round trip host -> Python -> host."""
    return x


def _number(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if is_na_real(v):
            return "NA"
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def _flat(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        out: list[Any] = []
        for v in x:
            out.extend(_flat(v))
        return out
    return [x]


_FORMATS = {"d": "float64", "f": "float32", "i": "int32", "l": "int64", "q": "int64",
            "b": "int8", "B": "uint8", "h": "int16", "H": "uint16", "I": "uint32",
            "L": "uint64", "Q": "uint64", "?": "bool"}


def describe(x: Any) -> dict[str, Any]:
    """What Python holds, as JSON-able data (see the module docstring)."""
    if x is None:
        return {"type": "None"}
    if isinstance(x, NAType):
        return {"type": "NA", "dtype": x.dtype}
    if isinstance(x, bool | int | float | str):
        return {"type": type(x).__name__, "value": _number(x)}
    if isinstance(x, bytes):
        return {"type": "bytes", "value": list(x)}
    if isinstance(x, list | tuple):
        out = {"type": type(x).__name__, "items": [describe(v) for v in x]}
        flat = _flat(list(x))
        if flat and all(isinstance(v, int | float) and not isinstance(v, bool) for v in flat):
            out["values"] = [_number(v) for v in flat]  # numbers: compared like an array's
        return out
    if isinstance(x, dict):
        return {"type": "dict", "keys": [str(k) for k in x], "values":
                [describe(v) for v in x.values()]}
    if isinstance(x, memoryview):
        shape = list(x.shape or ())
        values = x.tolist() if x.ndim else [x.tolist()]
        return {"type": "memoryview", "dtype": _FORMATS.get(x.format.lstrip("<=@"), x.format),
                "shape": shape, "values": [_number(v) for v in _flat(values)]}
    kind = type(x).__name__
    module = type(x).__module__.split(".")[0]
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(x, numpy.ndarray):
        module = "numpy"  # subclasses too (the bridge's NAArray: R's NA in a masked array)
    if module == "tensorbridge" and hasattr(x, "dtype") and hasattr(x, "tolist"):
        return {"type": "Tensor", "dtype": x.dtype.name, "shape": list(x.shape),
                "values": [_number(v) for v in _flat(x.tolist())]}
    if module == "numpy":
        import numpy as np  # only reached when NumPy made the value

        if isinstance(x, np.generic):
            return {"type": f"numpy.{kind}", "dtype": str(x.dtype), "value": _number(x.item())}
        if isinstance(x, np.ndarray):
            mask = np.ma.getmaskarray(x).ravel().tolist() if np.ma.isMaskedArray(x) else None
            data = np.asarray(x.data if mask is not None else x)
            values = [_number(v) for v in data.ravel(order="C").tolist()]
            if mask is not None:
                values = ["NA" if m else v for v, m in zip(values, mask)]
            out = {"type": "ndarray", "dtype": str(data.dtype), "shape": list(x.shape),
                   "values": values}
            if mask is not None:
                out["mask"] = mask
            return out
    return {"type": kind}


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, float) and isinstance(got, int | float) and not isinstance(got, bool):
        return float(got) == want
    if isinstance(want, bool) or isinstance(got, bool):
        return type(want) is type(got) and got == want
    return got == want


def _compare(got: Any, want: Any, path: str, policy: dict[str, Any] | None) -> str | None:
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{path}: expected {json.dumps(want)}, got {json.dumps(got)}"
        dtype = got.get("dtype") or ("float64" if got.get("type") in ("list", "tuple") else "")
        if policy is not None and "computed_in" in policy:
            dtype = policy["computed_in"]
        if "values" in want and policy is not None and dtype.startswith("float"):
            decode = [float(v) if isinstance(v, str) and v != "NA" else v
                      for v in got.get("values", [])]
            err = check_close(decode, [float(v) if isinstance(v, str) else v
                                       for v in want["values"]], dtype,
                              **{k: v for k, v in policy.items() if k != "computed_in"})
            if err:
                return f"{path}.values: {err}"
            want = {k: v for k, v in want.items() if k != "values"}
        for key, w in want.items():
            if key == "tolerance":
                continue
            if key not in got:
                return f"{path}.{key}: missing (got {json.dumps(got)})"
            err = _compare(got[key], w, f"{path}.{key}", policy)
            if err:
                return err
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{path}: expected {json.dumps(want)}, got {json.dumps(got)}"
        for i, (g, w) in enumerate(zip(got, want)):
            err = _compare(g, w, f"{path}[{i}]", policy)
            if err:
                return err
        return None
    if not _same(got, want):
        return f"{path}: expected {json.dumps(want)}, got {json.dumps(got)}"
    return None


def check(x: Any, expect: dict[str, Any]) -> str | None:
    """``None`` when ``x`` matches the expectation, else a message naming the first difference.

    ``{"tolerance": "policy"}`` in the expectation compares float values with the tolerance
    policy (``"n"`` and ``"ulps"`` may be given next to it, and ``"computed_in"``: the dtype
    the door computed in, when it is not the one the value arrives as: a float32 backend's
    numbers handed over as float64); otherwise values compare exactly.
    """
    policy = None
    if expect.get("tolerance") == "policy":
        policy = {k: expect[k] for k in ("n", "ulps", "computed_in") if k in expect}
        expect = {k: v for k, v in expect.items() if k not in ("n", "ulps", "computed_in")}
    return _compare(describe(x), expect, "received", policy)


def check_json(x: Any, expect: str) -> str | None:
    """:func:`check` with the expectation as a JSON string (what a door passes along)."""
    return check(x, json.loads(expect))


def describe_json(x: Any) -> str:
    return json.dumps(describe(x))
