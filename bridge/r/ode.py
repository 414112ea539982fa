"""The Python half of R's ``ode_solve()``: greta.dynamics' calling convention on tb.ode_solve.

R's ``derivative(y, t, ...)`` receives tensors by handle (as functions given to ``grad()`` do)
and returns dy/dt as a tensor or as R's ``c()`` of tensors and numbers (a list here). ``y0`` and
the extra arguments may be lazy arrays (then the result is one, for models) or R data and
tensors (then it is a tensor).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import runtime as tb
from ...runtime.graph import LazyArray
from .api import wrap
from .ppl import _r_array, lazy_out

__all__ = ["ode_solve"]


def _as_rate(out: Any, n: int) -> Any:
    """fn's result as a float64 vector of n: a tensor, or a list of tensors and numbers."""
    if isinstance(out, (list, tuple)):
        parts = [tb.reshape(p.astype("float64"), (-1,)) if isinstance(p, tb.Tensor)
                 else tb.tensor([float(v) for v in (p if isinstance(p, (list, tuple)) else [p])],
                                dtype="float64") for p in out]
        out = tb.concat(parts) if len(parts) > 1 else parts[0]
    elif not isinstance(out, tb.Tensor):
        out = tb.tensor(out, dtype="float64")
    if out.size != n:
        raise ValueError(f"ode_solve: derivative(y, t, ...) must return {n} rates (one per "
                         f"element of y0), got {out.size}")
    return tb.reshape(out, (n,))


def _arg(x: Any, where: str) -> Any:
    x = _r_array(x, where)
    if isinstance(x, float):
        return tb.tensor(x, dtype="float64")
    return x


def ode_solve(fn: Callable[..., Any], y0: Any, times: Any, args: Any, method: str, rtol: float,
              atol: float, max_steps: int, t0: Any) -> dict[str, Any]:
    y0 = _arg(y0, "ode_solve: y0")
    n = 1
    for d in y0.shape:
        n *= int(d)
    y0 = tb.reshape(y0, (n,))
    extra = [_arg(a, f"ode_solve: argument {i + 1} of ...") for i, a in enumerate(args or [])]

    def rhs(t: Any, y: Any, *a: Any) -> Any:
        return _as_rate(fn(wrap(y), wrap(t), *(wrap(x) for x in a)), n)

    rhs.__name__ = "derivative"
    times = [float(v) for v in (times if isinstance(times, (list, tuple)) else
                                getattr(times, "reshape", lambda *_: [times])(-1))]
    out = tb.ode_solve(rhs, y0, times, *extra, method=str(method), rtol=float(rtol),
                       atol=float(atol), max_steps=int(max_steps),
                       t0=None if t0 is None else float(t0))
    if isinstance(out, LazyArray):
        return {"lazy": True, "value": lazy_out(out)}
    return {"lazy": False, "value": wrap(out)}
