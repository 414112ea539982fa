"""Safe points: places in long runtime loops (sampling, fitting) where a host may stop the work.

The runtime knows nothing of R or JavaScript; the bridge registers a hook here that raises when
the host asked to cancel (Ctrl-C in R, an abort in JS). Loops call :func:`safe_point` between
iterations, where stopping leaves every object consistent: ``mcmc`` returns the draws taken so
far, ``fit`` keeps the weights of the last completed batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["register_safe_point", "safe_point", "unregister_safe_point"]

_hooks: tuple[Callable[[], None], ...] = ()
_lock = threading.Lock()


def register_safe_point(hook: Callable[[], None]) -> Callable[[], None]:
    """Call ``hook()`` at every safe point; it stops the work by raising."""
    global _hooks
    with _lock:
        if hook not in _hooks:
            _hooks = (*_hooks, hook)
    return hook


def unregister_safe_point(hook: Callable[[], None]) -> None:
    global _hooks
    with _lock:
        _hooks = tuple(h for h in _hooks if h is not hook)


def safe_point() -> None:
    """Run the registered hooks (cheap when there are none)."""
    for hook in _hooks:
        hook()
