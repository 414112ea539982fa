"""What the graph needs from posterior draws, as a protocol: graph sits below ``ppl``.

``calculate(targets, values=draws)`` and ``simulate(targets, values=draws)`` compute over the
draws of an MCMC run. The draws are ``ppl.draws.Draws``, but ``ppl`` is built on the graph, so
the graph must not import it (issue 13: layers point one way). Rather than move ``Draws`` (it
carries the summaries and diagnostics of ``ppl``) below the graph, the graph states the four
members it reads; ``Draws`` has them, and any other object with them works the same way.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["ON_EXECUTOR", "PosteriorDraws"]

# ``calculate``/``simulate`` over draws with ``cluster=``: the executors live in ``ppl``, which
# fills this table when it is imported ({"calculate": fn, "simulate": fn}); the graph only calls
ON_EXECUTOR: dict[str, Any] = {}


@runtime_checkable
class PosteriorDraws(Protocol):
    """Draws the graph can compute over (``isinstance`` checks that the members exist)."""

    #: variable name -> host array ``(chains, draws, *shape)``
    values: dict[str, Any]
    #: variable node -> its name in ``values`` (for variables made without a name)
    node_names: dict[Any, str]

    @property
    def chains(self) -> int: ...

    @property
    def n_draws(self) -> int: ...
