"""Python helpers for the R package's test suite and benchmarks (threads, errors, lifetimes)."""

from __future__ import annotations

import threading
import time
from typing import Any

import tensorbridge

from ..dispatch import check_cancelled

__all__ = [
    "call_from_threads",
    "call_in_thread",
    "identity",
    "noop",
    "raise_error",
    "spin",
]


def noop(*args: Any, **kwargs: Any) -> None:
    return None


def identity(x: Any) -> Any:
    return x


def describe(*args: Any, **kwargs: Any) -> list[str]:
    """Type names of the arguments (kwargs as name=type)."""
    out = [type(a).__module__ + "." + type(a).__qualname__ for a in args]
    out += [f"{k}={type(v).__module__}.{type(v).__qualname__}" for k, v in kwargs.items()]
    return out


def raise_error(kind: str = "ValueError", message: str = "bad value") -> None:
    exc = {
        "ValueError": ValueError,
        "KeyError": KeyError,
        "TypeError": TypeError,
        "RuntimeError": RuntimeError,
        "ZeroDivisionError": ZeroDivisionError,
    }[kind]
    raise exc(message)


def call_from_threads(fn: Any, n_threads: int = 8, n_calls: int = 1000) -> dict[str, Any]:
    """Call ``fn(thread_index, call_index)`` from ``n_threads`` threads ``n_calls`` times each
    and join them (plain ``join()``: the R host must serve the callbacks meanwhile). Returns
    counts of results that equalled ``thread_index * 100000 + call_index``, errors, and the
    error messages seen (first 5)."""
    n_threads, n_calls = int(n_threads), int(n_calls)
    ok = [0] * n_threads
    errors: list[str] = []
    main_ident = threading.get_ident()
    off_main = [0]

    def work(t: int) -> None:
        if threading.get_ident() != main_ident:
            off_main[0] += 1
        for i in range(n_calls):
            try:
                r = fn(t, i)
                if r == t * 100000 + i:
                    ok[t] += 1
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return {
        "ok": sum(ok),
        "errors": len(errors),
        "messages": errors[:5],
        "threads": off_main[0],
    }


def call_in_thread(fn: Any, *args: Any) -> Any:
    """Call ``fn(*args)`` on a new thread, join it, and return its result or raise its error."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:
            box["error"] = exc

    th = threading.Thread(target=work)
    th.start()
    th.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def spin(seconds: float, callback: Any = None, every: float = 0.05) -> int:
    """Busy work for ``seconds`` that reaches a safe point (``check_cancelled``) every
    ``every`` seconds and calls ``callback(i)`` there if given. Returns the number of steps."""
    end = time.monotonic() + float(seconds)
    i = 0
    while time.monotonic() < end:
        time.sleep(float(every))
        check_cancelled()
        if callback is not None:
            callback(i)
        i += 1
    return i


class Counter:
    """Counts live instances (for lifetime tests)."""

    live = 0

    def __init__(self) -> None:
        Counter.live += 1

    def __del__(self) -> None:
        Counter.live -= 1


def make_counters(n: int) -> list[Counter]:
    return [Counter() for _ in range(int(n))]


def hold(obj: Any) -> Any:
    """Keep ``obj`` (an R value) on the Python side until :func:`drop` is called."""
    _held.append(obj)
    return len(_held)


def drop() -> None:
    _held.clear()


_held: list[Any] = []


_fixed: dict[int, Any] = {}


def fixed_array(n: float) -> Any:
    """The same float64 array of ``n`` random values on every call (benchmarks)."""
    import numpy as np

    n = int(n)
    arr = _fixed.get(n)
    if arr is None:
        arr = _fixed[n] = np.random.default_rng(1).random(n)
    return arr


def shares_r_memory(arr: Any) -> bool:
    """True when ``arr`` (an R vector seen from Python) is a view of memory Python does not
    own (no copy was made)."""
    import numpy as np

    a = np.asarray(arr)
    base = a
    while getattr(base, "base", None) is not None and isinstance(base.base, np.ndarray):
        base = base.base
    return not a.flags.owndata and not a.flags.writeable and type(base.base).__name__ == "RMemory"


# -- references: the Python API on the same inputs (tensor API tests compare with these) -------
def _tb() -> Any:
    return tensorbridge


def ref_op(name: str, *args: Any) -> Any:
    """``tensorbridge.<name>(*args)`` with array arguments made tensors as ``as_tensor`` does."""
    tb = _tb()
    conv = [tb.tensor(a) if hasattr(a, "__array_interface__") else a for a in args]
    return getattr(tb, name)(*conv)


def ref_expression(which: str, x: Any, y: Any = None) -> Any:
    """A few composite expressions, written with the Python API."""
    tb = _tb()
    x = tb.tensor(x)
    y = tb.tensor(y) if y is not None else None
    if which == "tanh_gram":
        return tb.tanh(x @ x.T) + 1.0
    if which == "mixed":
        return tb.exp(-(x * 2.0)) / (1.0 + tb.abs(x)) - tb.sqrt(tb.abs(x)) ** 2
    if which == "matmul":
        return x @ y
    raise ValueError(which)


def ref_grad(which: str, w: Any, x: Any = None) -> Any:
    tb = _tb()
    w = tb.tensor(w)
    x = tb.tensor(x) if x is not None else None
    if which == "tanh_sum_matmul":
        return tb.grad(lambda w: tb.sum(tb.tanh(w @ x)))(w)
    if which == "value_and_grad_logistic":
        v, g = tb.value_and_grad(lambda w: tb.sum(tb.log1p(tb.exp(-(x @ w)))))(w)
        return {"value": v, "grad": g}
    if which == "jacobian_tanh":
        return tb.jacobian(lambda w: tb.tanh(w) * 2.0)(w)
    if which == "grad_index":
        return tb.grad(lambda w: tb.sum(w[0:2, 1] ** 2.0))(w)
    raise ValueError(which)


def catch(fn: Any, *args: Any) -> BaseException | None:
    """Call ``fn(*args)`` and return the exception it raised (None if it did not)."""
    try:
        fn(*args)
    except Exception as exc:
        return exc
    return None


class Later:
    """Calls ``fn()`` on a new thread after ``delay`` seconds and records its ``value`` and how
    long the call ``waited`` for R's main thread (``done`` is set when it returned)."""

    def __init__(self, fn: Any, delay: float) -> None:
        self.value: Any = None
        self.error: str | None = None
        self.waited: float | None = None
        self.done = threading.Event()
        self._fn = fn
        self._delay = float(delay)
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        time.sleep(self._delay)
        start = time.perf_counter()
        try:
            self.value = self._fn()
        except BaseException as exc:  # reported to the test
            self.error = f"{type(exc).__name__}: {exc}"
        self.waited = time.perf_counter() - start
        self.done.set()


def call_later(fn: Any, delay: float = 0.2) -> Later:
    """A :class:`Later`: a Python thread calling ``fn`` (an R function) after ``delay`` s."""
    return Later(fn, delay)


def warn(message: str = "careful", category: str = "UserWarning") -> int:
    """Raise a Python warning (of a builtin category) and return 1."""
    import builtins
    import warnings

    warnings.warn(message, getattr(builtins, category), stacklevel=1)
    return 1
