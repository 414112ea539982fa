"""The Python half of the JavaScript door's ``tb.odeSolve`` (``js-client/src/ode.js``).

The JS right-hand side ``fn(t, y, ...args)`` is traced once into a program, as ``tb.scan``'s
step is (``bridge/js/scan.py``): its own values are ``{"$scan": i}`` (input 0 is t, 1 is y,
then the args), anything it closes over crosses as it is. Here that program is ``fn`` of
:func:`tensorbridge.ode_solve`, which stages it and its Jacobian. ``y0`` and the args may be
tensors, JS numbers and arrays, or a model's lazy arrays (the result is then one).
"""

from __future__ import annotations

from typing import Any

from ... import runtime as tb
from ...runtime.argument_checks import door_name
from .scan import _floats, _run

__all__ = ["ODE_OPTIONS", "ode_program"]

#: the options object's keys (camelCase, the JS door's) -> tb.ode_solve's arguments
ODE_OPTIONS = {door_name(n, "js"): n for n in ("t0", "method", "rtol", "atol", "max_steps")}


def _rate(out: Any, y: Any) -> Any:
    """fn's result: a tensor, or an array of tensors and numbers (stacked into a vector; the
    numbers on y's backend)."""
    if isinstance(out, list | tuple):
        return tb.stack([v.astype("float64") if isinstance(v, tb.Tensor)
                         else tb.tensor(float(v), dtype="float64", backend=y.backend)
                         for v in out])
    return out


def ode_program(program: dict[str, Any], y0: Any, times: Any, args: Any,
                options: dict[str, Any] | None) -> Any:
    """``tb.ode_solve`` with the traced JS program as ``fn``; ``options`` by their JS names."""
    kwargs: dict[str, Any] = {}
    for key, value in dict(options or {}).items():
        if key not in ODE_OPTIONS:
            raise TypeError(f"odeSolve: unknown option {key!r}; the options are "
                            f"{', '.join(ODE_OPTIONS)}")
        if value is not None:
            kwargs[ODE_OPTIONS[key]] = value
    if isinstance(kwargs.get("max_steps"), float) and kwargs["max_steps"].is_integer():
        kwargs["max_steps"] = int(kwargs["max_steps"])  # JS has one number type

    def fn(t: Any, y: Any, *a: Any) -> Any:
        return _rate(_run(program, [t, y, *a]), y)

    fn.__name__ = "fn"
    if isinstance(times, memoryview):
        times = times.tolist()
    values = [_floats(y0), *_floats(list(args or []))]
    # JS numbers and arrays go where the tensors are (a model's lazy arrays: its backend)
    like = next((v for v in values if isinstance(v, tb.Tensor)), None)
    if like is not None:
        values = [v if isinstance(v, tb.Tensor) else
                  tb.tensor(v, dtype="float64", backend=like.backend) for v in values]
    try:
        return tb.ode_solve(fn, values[0], times, *values[1:], **kwargs)
    except (TypeError, ValueError, tb.OdeSolveError) as e:
        if type(e) not in (TypeError, ValueError, tb.OdeSolveError):
            raise
        # the runtime's checks and failures, naming the arguments as the JS door spells them
        raise type(e)(str(e).replace("ode_solve:", "odeSolve:")
                      .replace("max_steps", "maxSteps")) from None
