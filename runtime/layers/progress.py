"""The training progress display.

``ProgressBar`` draws ``12/32 [===========>..................] - 0s 1ms/step - loss: 0.4121``:
redrawn in place (``\\r``) at most every ``interval`` seconds when the stream is a terminal, and
printed once per epoch otherwise (so logs and notebooks do not fill with partial lines).
``resolve_verbose`` turns ``fit``'s ``verbose`` into a mode: ``"auto"`` shows the bar only when
standard output is a terminal.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

__all__ = ["ProgressBar", "format_logs", "is_tty", "resolve_verbose"]


def is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def resolve_verbose(verbose: Any, stream: Any = None) -> int:
    """0 silent, 1 progress bar, 2 one line per epoch. ``"auto"``: 1 on a terminal, else 0."""
    if verbose == "auto" or verbose is None:
        return 1 if is_tty(stream if stream is not None else sys.stdout) else 0
    v = int(verbose)
    if v not in (0, 1, 2):
        raise ValueError(f"verbose: expected 0, 1, 2 or 'auto', got {verbose!r}")
    return v


def _fmt_value(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if f != 0.0 and (abs(f) < 1e-3 or abs(f) >= 1e5):
        return f"{f:.4e}"
    return f"{f:.4f}"


def format_logs(logs: dict[str, Any] | None) -> str:
    if not logs:
        return ""
    return " - ".join(f"{k}: {_fmt_value(v)}" for k, v in logs.items())


def _fmt_duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{int(seconds // 3600)}:{int(seconds % 3600 // 60):02d}:{int(seconds % 60):02d}"
    if seconds >= 60:
        return f"{int(seconds // 60)}:{int(seconds % 60):02d}"
    return f"{seconds:.0f}s"


def _fmt_per_step(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.0f}s/step"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/step"
    return f"{seconds * 1e6:.0f}us/step"


class ProgressBar:
    """A bar for ``target`` steps on ``stream`` (standard output by default)."""

    def __init__(self, target: int | None, width: int = 30, stream: TextIO | None = None,
                 interval: float = 0.05, dynamic: bool | None = None) -> None:
        self.target = target
        self.width = width
        self.stream = stream if stream is not None else sys.stdout
        self.interval = interval
        self.dynamic = is_tty(self.stream) if dynamic is None else dynamic
        self.start = time.perf_counter()
        self._last_draw = 0.0
        self._last_len = 0
        self.seen = 0

    def _bar(self, current: int) -> str:
        if not self.target:
            return f"{current}"
        n = len(str(self.target))
        frac = min(current / self.target, 1.0)
        filled = int(self.width * frac)
        bar = "=" * filled
        if current < self.target:
            bar = bar[:-1] + ">" if filled else ">"
        bar = bar.ljust(self.width, ".")
        return f"{current:>{n}}/{self.target} [{bar}]"

    def line(self, current: int, logs: dict[str, Any] | None = None) -> str:
        elapsed = time.perf_counter() - self.start
        per = elapsed / current if current else 0.0
        if self.target and current < self.target:
            timing = f"ETA: {_fmt_duration(per * (self.target - current))}"
        else:
            timing = f"{_fmt_duration(elapsed)} {_fmt_per_step(per)}"
        text = f"{self._bar(current)} - {timing}"
        extra = format_logs(logs)
        return f"{text} - {extra}" if extra else text

    def update(self, current: int, logs: dict[str, Any] | None = None,
               finalize: bool = False) -> None:
        """Show progress at step ``current``; ``finalize`` ends the line."""
        self.seen = current
        now = time.perf_counter()
        if not finalize:
            if not self.dynamic or now - self._last_draw < self.interval:
                return
        self._last_draw = now
        text = self.line(current, logs)
        if self.dynamic:
            pad = " " * max(0, self._last_len - len(text))
            self.stream.write("\r" + text + pad)
            self._last_len = len(text)
        else:
            self.stream.write(text)
        if finalize:
            self.stream.write("\n")
        self.stream.flush()
