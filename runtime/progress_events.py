"""Progress events: what long runtime loops (``mcmc``, ``Model.fit``) report, and the sinks that
receive it.

The loops build one frozen event per report and :func:`emit` it; everything that shows progress
is a sink, a function of one event: the terminal bars, ``mcmc``'s ``callback=``, and the R and
JavaScript doors, which register sinks in their hosts (``bridge/r``, ``bridge/js``) as they
register an interrupt check with :mod:`.interrupts`. The runtime knows nothing of R or JS.

The events' field names are the spec the doors read: ``event.as_dict("r")`` names them in
snake_case, ``event.as_dict("js")`` in camelCase (:func:`.argument_checks.door_name`).

Sinks are either registered for the process (:func:`register_sink`, e.g. a host's log) or
scoped to a block of code in this thread or task (:func:`progress_sinks`, e.g. one ``mcmc`` call's
bar). Process sinks get each event first, in registration order, then the scoped ones, innermost
last. A sink that raises an ``Exception`` does not stop the work: the error is reported once as
a :class:`ProgressSinkWarning` and that sink gets no more events from the same run (an
interrupt, ``KeyboardInterrupt`` or another ``BaseException``, still propagates).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .argument_checks import door_name

__all__ = [
    "FIT_STAGES",
    "FitProgress",
    "McmcProgress",
    "ProgressEvent",
    "ProgressSinkWarning",
    "Sink",
    "emit",
    "every_nth",
    "has_sinks",
    "progress_sinks",
    "register_sink",
    "sinks_table",
    "unregister_sink",
]

Sink = Callable[["ProgressEvent"], Any]


class ProgressSinkWarning(RuntimeWarning):
    """A progress sink raised; the work went on without it."""


@dataclass(frozen=True)
class ProgressEvent:
    """Base of the events; ``kind`` names the loop that reports ("mcmc", "fit")."""

    kind: ClassVar[str] = ""

    def as_dict(self, door: str = "python", kind: bool = True) -> dict[str, Any]:
        """The fields (first ``kind``, unless ``kind=False``) named for ``door``: "python", "r"
        or "js"."""
        out: dict[str, Any] = {"kind": self.kind} if kind else {}
        for f in dataclasses.fields(self):
            out[door_name(f.name, door)] = getattr(self, f.name)
        return out


@dataclass(frozen=True)
class McmcProgress(ProgressEvent):
    """Sampling reached ``iteration`` (1-based; warmup's come first) of ``total`` in every
    chain (chains run in lockstep). ``divergences``: all so far (warmup's and the kept
    draws'); ``warmup_divergences``: those of warmup so far; ``elapsed``: seconds since
    sampling started."""

    kind: ClassVar[str] = "mcmc"
    iteration: int
    total: int
    phase: str  # "warmup" or "sampling"
    divergences: int
    warmup_divergences: int
    elapsed: float


FIT_STAGES = ("train_begin", "epoch_begin", "batch_begin", "batch_end", "epoch_end",
              "train_end")


@dataclass(frozen=True)
class FitProgress(ProgressEvent):
    """``Model.fit`` reached ``stage`` (one of ``FIT_STAGES``). ``epoch`` and ``batch`` are
    0-based (``None`` where the stage has none), ``epochs`` and ``steps`` the totals (steps per
    epoch), ``logs`` the loss and metrics so far (plain floats; empty at a beginning)."""

    kind: ClassVar[str] = "fit"
    stage: str
    epoch: int | None
    epochs: int
    batch: int | None
    steps: int | None
    logs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.stage not in FIT_STAGES:
            raise ValueError(f"stage: expected one of {', '.join(FIT_STAGES)}, got "
                             f"{self.stage!r}")


_sinks: tuple[Sink, ...] = ()  # the process's, registered by hosts
_lock = threading.Lock()
_scoped: contextvars.ContextVar[tuple[Sink, ...]] = contextvars.ContextVar(
    "tensorbridge_progress_sinks", default=())


def register_sink(sink: Sink) -> Sink:
    """Send every progress event of this process to ``sink(event)`` (once, however often it is
    registered); returns ``sink`` so that it can be used as a decorator."""
    global _sinks
    if not callable(sink):
        raise TypeError(f"sink: expected a function of one event, got {type(sink).__name__}")
    with _lock:
        if sink not in _sinks:
            _sinks = (*_sinks, sink)
    return sink


def unregister_sink(sink: Sink) -> None:
    """Stop sending events to ``sink`` (nothing happens when it was not registered)."""
    global _sinks
    with _lock:
        _sinks = tuple(s for s in _sinks if s is not sink)


@contextlib.contextmanager
def progress_sinks(*sinks: Sink | None) -> Iterator[None]:
    """Send the events emitted in this block (in this thread or task) to ``sinks`` as well;
    ``None`` entries are skipped."""
    live = tuple(s for s in sinks if s is not None)
    for s in live:
        if not callable(s):
            raise TypeError(f"sinks: expected functions of one event, got {type(s).__name__}")
    token = _scoped.set(_scoped.get() + live)
    try:
        yield
    finally:
        _scoped.reset(token)


def has_sinks() -> bool:
    """Whether an event emitted here would reach any sink (loops skip building events when
    not)."""
    return bool(_sinks) or bool(_scoped.get())


def emit(event: ProgressEvent, muted: set[int] | None = None,
         also: tuple[Sink, ...] = ()) -> None:
    """Send ``event`` to the process's sinks, then to the scoped ones, then to ``also`` (a run's
    own: ``mcmc``'s bar and ``callback``). ``muted``: the ids of the sinks that failed earlier
    in this run (a run keeps one set; a sink that raises is added to it and warned about
    once)."""
    for sink in (*_sinks, *_scoped.get(), *also):
        if muted is not None and id(sink) in muted:
            continue
        try:
            sink(event)
        except Exception as e:
            if muted is not None:
                muted.add(id(sink))
            warnings.warn(f"progress sink {_name(sink)} failed on a {event.kind} event "
                          f"({type(e).__name__}: {e}); the {event.kind} run goes on without it",
                          ProgressSinkWarning, stacklevel=2)


def _name(sink: Sink) -> str:
    name = getattr(sink, "__qualname__", None) or type(sink).__qualname__
    module = getattr(sink, "__module__", None) or type(sink).__module__
    return f"{module}.{name}" if module else name


def sinks_table() -> str:
    """The sinks an event emitted here would reach, in order, one per line."""
    rows = [("process", _name(s)) for s in _sinks] + [("scoped", _name(s))
                                                      for s in _scoped.get()]
    if not rows:
        return "no progress sinks"
    width = max(len(scope) for scope, _ in rows)
    lines = [f"{'#':>2}  {'scope':<{width}}  sink"]
    lines += [f"{i:>2}  {scope:<{width}}  {name}" for i, (scope, name) in enumerate(rows, 1)]
    return "\n".join(lines)


def every_nth(sink: Sink, every: int, name: str = "every") -> Sink:
    """``sink`` fed the ``mcmc`` events of every ``every``-th iteration and of the last one (the
    cadence of ``mcmc(callback_every=)``, R's ``pb_update``, JS's ``callbackEvery``); other
    events pass through. ``name``: the argument ``every`` came from, for the error."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"{name}: expected an integer >= 1, got {every!r}")

    def thinned(event: ProgressEvent) -> Any:
        if isinstance(event, McmcProgress) and not (
                event.iteration % every == 0 or event.iteration == event.total):
            return None
        return sink(event)

    thinned.__qualname__ = f"every_nth({_name(sink)}, {every})"
    thinned.__module__ = ""
    return thinned
