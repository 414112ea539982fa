"""Independent tasks on ``mcmc``'s executors (in-process, ``n_cores``' local pool, a Dask
cluster): :func:`map` over datasets, and ``calculate``/``simulate`` over posterior draws split
into blocks (``calculate(..., values=draws, cluster=)``, ``simulate(..., values=draws,
cluster=)``, installed into the graph's ``ON_EXECUTOR`` table when ``ppl`` is imported).

Blocks of draws travel as data: the targets' graph (``parallel.dumps_graph``) and the block's
values by variable name; each task evaluates its block with the in-process function, and the
blocks are joined in order. Block sizes are fixed (:data:`DRAWS_PER_TASK`), never derived from
the cluster, so a result does not depend on the number of workers.

NumPy and the executors are imported when a function runs: the module loads without NumPy
(the JS door's pure-Python runtime), where none of this is offered.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable
from typing import Any

from ..graph.model_compiler import Model, calculate
from ..graph.nodes import VariableNode, _lazy, node_of
from ..graph.posterior_draws import ON_EXECUTOR
from ..graph.simulate import pick_draws, simulate
from ..ops.creation import tensor
from ..pytree import tree_flatten, tree_unflatten
from ..random import Generator, philox4x32
from .chain_rng import fresh_seed

__all__ = ["DRAWS_PER_TASK", "calculate_on", "map", "simulate_on"]

DRAWS_PER_TASK = 1000  # posterior draws per task of calculate/simulate(cluster=)
_BLOCK_TAG = 0x626c6b73  # "blks": the counter word of simulate's per-block seeds
_M32 = 0xFFFFFFFF


def map(fn: Callable[[Any], Any], datasets: Iterable[Any], cluster: Any = None,
        n_cores: int | None = None) -> Any:
    """``[fn(d) for d in datasets]`` as independent tasks: in this process (default), on a
    local pool of ``n_cores`` processes or on a Dask cluster (``cluster``: a
    ``distributed.Client`` or ``"tcp://host:8786"``). For sweeps and one-model-per-group fits:
    ``fn`` builds its model from its dataset and returns what it wants kept (draws, a summary).

    ``datasets``: a sequence (the results are a list in its order) or a dict (a dict of the
    results under the same keys). ``fn`` is sent to other processes by reference when it is a
    module-level function of an importable module, else by value with cloudpickle (a lambda or
    a function defined in a script or notebook: the workers need cloudpickle, as Dask's do, and
    every module ``fn`` imports). A dataset that makes ``fn`` raise is an error naming its
    index (``TaskError.index``), chained to ``fn``'s exception; the other tasks are cancelled.
    Ctrl-C cancels the tasks too (on Dask a task already running finishes on its worker, its
    result dropped: a Python function cannot be stopped from outside).
    """
    from .executors import executor_for, run_tasks

    if not callable(fn):
        raise TypeError(f"fn: expected a function of one dataset, got {type(fn).__name__}")
    keys = None
    if isinstance(datasets, dict):
        keys, items = list(datasets), list(datasets.values())
    elif isinstance(datasets, str | bytes) or not isinstance(datasets, Iterable):
        raise TypeError(f"datasets: expected a list (or a dict) of datasets, got "
                        f"{type(datasets).__name__}")
    else:
        items = list(datasets)
    out = run_tasks(executor_for(cluster, n_cores, "map"), fn, items, what="map: dataset")
    return out if keys is None else dict(zip(keys, out))


# ------------------------------------------------------------------- draws split into blocks
class _Block:
    """A block of posterior draws as one chain: what ``calculate``/``simulate`` read."""

    def __init__(self, values: dict[str, Any], node_names: dict[Any, str], n: int) -> None:
        self.values, self.node_names, self._n = values, node_names, n

    @property
    def chains(self) -> int:
        return 1

    @property
    def n_draws(self) -> int:
        return self._n


def _graph_and_names(nodes: list[Any], draws: Any, who: str) -> tuple[bytes, list[str]]:
    """The targets' graph with the draws' name of each variable around them, as bytes, and the
    names the tasks need values for."""
    from .parallel import dumps_graph

    variables = [n for n in Model._connected(nodes) if isinstance(n, VariableNode)]
    names = {v: draws.node_names.get(v) or v.name for v in variables}
    names = {v: k for v, k in names.items() if k is not None}
    needed = sorted({k for k in names.values() if k in draws.values})
    return dumps_graph((nodes, names), who), needed


def _blocks(n: int) -> list[tuple[int, int]]:
    return [(a, min(a + DRAWS_PER_TASK, n)) for a in range(0, n, DRAWS_PER_TASK)]


def calculate_on(targets: Any, draws: Any, cluster: Any) -> Any:
    """``calculate(targets, values=draws)`` over blocks of the draws on ``cluster``."""
    import numpy as np

    from .executors import as_executor, run_tasks

    leaves, td = tree_flatten(targets)
    nodes = [node_of(t) for t in leaves]
    blob, needed = _graph_and_names(nodes, draws, "calculate")
    chains, n_draws = draws.chains, draws.n_draws
    total = chains * n_draws
    flat = {k: np.asarray(draws.values[k]).reshape(total, *np.shape(draws.values[k])[2:])
            for k in needed}
    items = [(blob, {k: v[a:b] for k, v in flat.items()}, b - a) for a, b in _blocks(total)]
    parts = run_tasks(as_executor(cluster), _calculate_block, items,
                      what="calculate: block of draws")
    out = [np.concatenate([p[j] for p in parts]).reshape(chains, n_draws, *n.shape)
           for j, n in enumerate(nodes)]
    return tree_unflatten(td, out)


def _calculate_block(item: tuple[bytes, dict[str, Any], int]) -> list[Any]:
    """A task: ``calculate`` of the targets at one block of draws, ``(k, *shape)`` each."""
    import numpy as np

    blob, values, k = item
    nodes, names = pickle.loads(blob)
    block = _Block({n: v[None] for n, v in values.items()}, names, k)
    return [np.asarray(x)[0] for x in calculate([_lazy(n) for n in nodes], values=block)]


def block_seed(seed: int, b: int) -> int:
    """Block ``b``'s seed of ``simulate(..., cluster=)``: one Philox block of ``(seed, b)``."""
    s = int(seed) % (1 << 64)
    w = philox4x32((b & _M32, (b >> 32) & _M32, 0, _BLOCK_TAG), (s & _M32, s >> 32))
    return w[0] | (w[1] << 32)


def simulate_on(targets: Any, nsim: int | None, seed: int | None, draws: Any,
                cluster: Any) -> Any:
    """``simulate(targets, nsim, seed, values=draws)`` over blocks of the picked draws."""
    import numpy as np

    from .executors import as_executor, run_tasks

    if nsim is not None and (isinstance(nsim, bool) or not isinstance(nsim, int) or nsim < 1):
        raise ValueError(f"nsim: expected an integer >= 1, got {nsim!r}")
    seed = fresh_seed() if seed is None else int(seed)
    leaves, td = tree_flatten(targets)
    nodes = [node_of(t) for t in leaves]
    blob, needed = _graph_and_names(nodes, draws, "simulate")
    total = draws.chains * draws.n_draws
    idx = np.asarray(pick_draws(total, nsim, Generator(seed), stacklevel=4), dtype=np.int64)
    picked = {k: np.asarray(draws.values[k]).reshape(total, *np.shape(draws.values[k])[2:])[idx]
              for k in needed}
    items = [(blob, {k: v[a:b] for k, v in picked.items()}, b - a, block_seed(seed, i))
             for i, (a, b) in enumerate(_blocks(len(idx)))]
    parts = run_tasks(as_executor(cluster), _simulate_block, items,
                      what="simulate: block of draws")
    out = []
    for j, n in enumerate(nodes):
        ref = n.reference
        out.append(tensor(np.concatenate([p[j] for p in parts]), dtype=ref.dtype,
                          backend=ref.backend))
    return tree_unflatten(td, out)


def _simulate_block(item: tuple[bytes, dict[str, Any], int, int]) -> list[Any]:
    """A task: ``simulate`` at every draw of one block (in order), from the block's seed."""
    import numpy as np

    blob, values, k, seed = item
    nodes, names = pickle.loads(blob)
    block = _Block({n: v[None] for n, v in values.items()}, names, k)
    sims = simulate([_lazy(n) for n in nodes], seed=seed, values=block)
    return [np.asarray(x.numpy()) for x in sims]


ON_EXECUTOR.update(calculate=calculate_on, simulate=simulate_on)
