"""``simulate(targets, nsim, seed)``: draws from the prior (and prior predictive), as greta's.

Ancestral sampling through the graph: nodes are visited in dependency order; a variable with a
distribution, or data with a distribution (a likelihood), is drawn from its family given its
parents' simulated values; operations are recomputed on those values; data without a distribution
keeps its value. Every node carries a leading axis of ``nsim`` simulations, filled by one call per
node (a batched ``family.sample`` and a ``vmap`` of each operation), never a loop over ``nsim``.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from typing import Any

from ..autodiff.batching import vmap
from ..host_namespace import to_host, to_tensor, xp
from ..ops.creation import tensor
from ..ops.elementwise import cast
from ..ops.shape import broadcast_to, reshape
from ..pytree import tree_flatten, tree_unflatten
from ..random import Generator, default_generator
from ..tensor import Tensor
from .nodes import (
    DataNode,
    DistributionNode,
    GraphNode,
    LazyArray,
    OperationNode,
    VariableNode,
    node_of,
)
from .posterior_draws import ON_EXECUTOR, PosteriorDraws  # ppl's Draws, not importing ppl
from .toposort import topological_order

__all__ = ["pick_draws", "simulate"]

# Event rank of each parameter of the multivariate families: the batch axes of a parameter sit
# before these, and a simulated parameter needs singleton axes after ``nsim`` to line up with the
# value's batch axes. Univariate families' parameters are all rank 0 per event.
_PARAM_EVENT_NDIM = {
    "multivariate_normal": {"mean": 1, "cholesky": 2},
    "dirichlet": {"alpha": 1},
    "categorical": {"prob": 1},
    "multinomial": {"size": 0, "prob": 1},
    "lkj_correlation": {"eta": 0},
}


def simulate(targets: Any, nsim: int | None = None, seed: int | None = None,
             values: Any = None, cluster: Any = None) -> Any:
    """Simulate ``targets`` (a lazy array, or a list/tuple/dict of them) ``nsim`` times from the
    model's prior: variables from their prior distributions, data that has a distribution from
    that distribution (prior predictive), operations from the values they depend on.

    ``values``: ``{lazy array: value}`` held fixed in every simulation (e.g. a parameter, to
    simulate data given it), or posterior :class:`Draws` from ``mcmc`` for the posterior
    predictive distribution (as greta's ``calculate(y, values = draws, nsim)``): each simulation
    takes the variables of one posterior draw, picked at random (without replacement while
    ``nsim`` does not exceed the number of draws, else with replacement and a warning, as
    greta's; ``nsim=None``: every draw, in order). Variables that are not in the draws but have
    a distribution (new stochastic arrays) are simulated given each picked draw.

    Returns tensors of shape ``(nsim, *shape)`` in the structure of ``targets``; ``nsim``
    defaults to 1 from the prior. The same ``seed`` gives the same simulations. A variable with
    no distribution (``variable()``, a flat prior) cannot be simulated: that is an error naming
    it.

    ``cluster``: posterior predictive simulation (``values=draws``) as tasks on a Dask cluster
    (a ``distributed.Client`` or ``"tcp://host:8786"``) or an executor of
    ``runtime.ppl.executors``: the draws are picked here as in one process, then simulated in
    blocks of ``ppl.tasks.DRAWS_PER_TASK``, block ``b`` from a stream of ``(seed, b)``, so the
    result is the same on any number of workers and with ``cluster=InProcess()``; the picked
    draws and every value computed from them alone are those of ``cluster=None``, the new
    random draws (e.g. replicated data) come from the blocks' streams instead.
    """
    if cluster is not None:
        if not isinstance(values, PosteriorDraws):
            raise ValueError("cluster: simulate runs on a cluster over posterior draws only "
                             "(values=draws from mcmc)")
        return ON_EXECUTOR["simulate"](targets, nsim, seed, values, cluster)
    if nsim is not None and (isinstance(nsim, bool) or not isinstance(nsim, int) or nsim < 1):
        raise ValueError(f"nsim: expected an integer >= 1, got {nsim!r}")
    gen = default_generator() if seed is None else Generator(int(seed))
    leaves, td = tree_flatten(targets)
    nodes = [node_of(t) for t in leaves]
    names = _caller_names(sys._getframe(1))
    posterior: dict[GraphNode, Any] = {}  # variable -> (nsim, *shape) values from the draws
    if isinstance(values, PosteriorDraws):
        nsim, posterior = _posterior_values(nodes, values, nsim, gen)
        feed: dict[GraphNode, Any] = {}
    else:
        nsim = 1 if nsim is None else nsim
        feed = {node_of(k): v for k, v in (values or {}).items()}

    env: dict[GraphNode, tuple[Any, bool]] = {}  # node -> (value, has the nsim axis)
    for n in _order(nodes, {**feed, **posterior}):
        if n in posterior:
            env[n] = (posterior[n], True)
        elif n in feed:
            ref = n.reference
            x = tensor(feed[n], dtype=ref.dtype, backend=ref.backend)
            if tuple(x.shape) != tuple(ref.shape):
                raise ValueError(f"values: {_name(n, names)} has shape {list(ref.shape)}, got "
                                 f"{list(x.shape)}")
            env[n] = (x, False)
        elif _stochastic(n):
            env[n] = (_draw(n, env, gen, nsim), True)
        elif isinstance(n, DataNode):
            env[n] = (n.reference, False)
        elif isinstance(n, VariableNode):
            raise ValueError(
                f"simulate: {_name(n, names)} is a variable without a distribution (a flat "
                f"prior, as from variable()), so it cannot be drawn from its prior; give it a "
                f"distribution (e.g. normal(0, 1)) or a fixed value in values={{...}}"
            )
        elif isinstance(n, OperationNode):
            env[n] = _compute(n, env)
        else:  # pragma: no cover - distribution nodes are never scheduled
            raise TypeError(f"simulate: unexpected node {n!r}")

    out = []
    for n in nodes:
        x, batched = env[n]
        out.append(x if batched else broadcast_to(x, (nsim, *x.shape)))
    return tree_unflatten(td, out)


def _posterior_values(nodes: list[GraphNode], draws: Any, nsim: int | None,
                      gen: Any) -> tuple[int, dict[GraphNode, Any]]:
    """Pick ``nsim`` posterior draws; each variable the targets need gets ``(nsim, *shape)``."""
    total = draws.chains * draws.n_draws
    idx = pick_draws(total, nsim, gen, stacklevel=4)
    out: dict[GraphNode, Any] = {}
    for n in _order(nodes, {}):
        if not isinstance(n, VariableNode):
            continue
        name = draws.node_names.get(n) or n.name
        if name not in draws.values:
            if _stochastic(n):  # a new stochastic array: simulated given each draw
                continue
            raise ValueError(f"values: the draws have no values for variable {n.label()}; they "
                             f"hold {', '.join(draws.values)}")
        flat = xp.asarray(draws.values[name]).reshape(total, *n.shape)
        out[n] = to_tensor(flat[xp.asarray(idx)], dtype=n.dtype, backend=n.reference.backend)
    return len(idx), out


def pick_draws(total: int, nsim: int | None, gen: Any, stacklevel: int = 2) -> list[int]:
    """Which of ``total`` pooled draws ``nsim`` simulations take (``None``: all, in order)."""
    if total == 0:
        raise ValueError("values: the draws are empty (the run was interrupted before sampling)")
    if nsim is None:
        return list(range(total))
    if nsim <= total:  # a random subset: the order of uniforms is a random permutation
        keys = to_host(gen.uniform((total,), dtype="float64")).tolist()
        return sorted(range(total), key=keys.__getitem__)[:nsim]
    warnings.warn(f"nsim: {nsim} is more than the {total} posterior draws in values, so the "
                  f"draws were picked with replacement", UserWarning, stacklevel=stacklevel)
    u = to_host(gen.uniform((nsim,), dtype="float64")).tolist()
    return [min(int(x * total), total - 1) for x in u]


def _stochastic(n: GraphNode) -> bool:
    """A node drawn from its own distribution: a variable's prior or a likelihood on data."""
    d = n.distribution
    return isinstance(d, DistributionNode) and d.target is n


def _order(targets: Sequence[GraphNode], feed: dict[GraphNode, Any]) -> list[GraphNode]:
    """The nodes ``targets`` need, each after what it reads (a stochastic node reads its
    distribution's parameters); fixed values cut the walk."""

    def deps(n: GraphNode) -> list[GraphNode]:
        if n in feed:
            return []
        if _stochastic(n):
            if isinstance(n, OperationNode):
                raise ValueError(
                    f"simulate: {n.label()} is an operation on data with a distribution; only "
                    f"data arrays themselves (as_data) can be simulated from a likelihood"
                )
            return list(n.distribution.parents)
        return list(n.parents)

    return topological_order(targets, deps, "simulate")


def _draw(n: GraphNode, env: dict, gen: Any, nsim: int) -> Tensor:
    d = n.distribution
    family = d.family
    event_ndim = getattr(family, "event_ndim", 0)
    # a family may say its parameters' event ranks itself ((name, rank) pairs, or a dict)
    ranks = dict(getattr(family, "param_event_ndim", ())) or _PARAM_EVENT_NDIM.get(family.name, {})
    value_batch_ndim = len(n.shape) - event_ndim
    params = {}
    for k, a in d.param_args.items():
        if not isinstance(a, GraphNode):
            params[k] = a
            continue
        x, batched = env[a]
        if batched:
            # (nsim, *batch, *event) -> (nsim, 1.., *batch, *event) to match the value's batch
            own = tuple(x.shape[1:])
            ep = ranks.get(k, event_ndim)
            pad = value_batch_ndim - (len(own) - ep)
            if pad > 0:
                x = reshape(x, (nsim, *([1] * pad), *own))
        params[k] = x
    y = family.sample(gen, (nsim, *n.shape), **params)
    return y if y.dtype == n.dtype else cast(y, n.dtype)


def _compute(n: OperationNode, env: dict) -> tuple[Any, bool]:
    parents = list(dict.fromkeys(n.parents))  # x * x reads x twice
    vals = [env[p][0] for p in parents]
    batched = [env[p][1] for p in parents]
    if not any(batched):
        return n.compute(dict(zip(parents, vals))), False

    def one(*xs: Any) -> Any:
        return n.compute(dict(zip(parents, xs)))

    axes = tuple(0 if b else None for b in batched)
    return vmap(one, in_axes=axes)(*vals), True


def _caller_names(frame: Any) -> dict[GraphNode, str]:
    """Python names bound to lazy arrays in the caller, for error messages (as model() names
    variables)."""
    out: dict[GraphNode, str] = {}
    for scope in (frame.f_globals, frame.f_locals):
        for k, x in scope.items():
            if isinstance(x, LazyArray) and not k.startswith("_"):
                out[x.node] = k
    return out


def _name(n: GraphNode, names: dict[GraphNode, str]) -> str:
    if n.name:
        return f"'{n.name}'"
    if n in names:
        return f"'{names[n]}'"
    return f"{n.label()} (shape {list(n.shape)})"
