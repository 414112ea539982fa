"""``model(*targets)``: collect the DAG, order it, compile it to a backend function.

A :class:`Model` owns the connected graph around its targets — walking parents, children and
distribution links, as greta does, so that a likelihood attached to data is found from the
parameters. Nodes are ordered topologically (each once, dependencies first). Evaluation runs the
operation nodes in that order on a feed of values and drops each intermediate as soon as its last
consumer has run. The variables map to one unconstrained *free state* vector; the joint log density
and its gradient are functions of it, for one state ``[n]`` or a batch ``[batch, n]`` (vectorised
with ``vmap``, not a Python loop per state), compiled with ``tensorbridge.function`` (a staged
straight-line program on NumPy, a ``tf.function`` on TensorFlow).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import ops
from ..autodiff.api import value_and_grad
from ..autodiff.batching import vmap
from ..compile import function
from ..compiled.lowering import LoweringError
from ..dtypes import float32 as _float32
from ..host_namespace import raw_is_host, to_host, to_tensor, xp
from ..ops.creation import tensor
from ..ops.shape import broadcast_shapes
from ..pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor
from .bijectors import Bijector
from .families import Family
from .nodes import (
    DataNode,
    DistributionNode,
    GraphNode,
    LazyArray,
    OperationNode,
    VariableNode,
    _lazy,
    distribution,
    model_backend,
    node_of,
)
from .posterior_draws import ON_EXECUTOR, PosteriorDraws  # ppl's Draws, not importing ppl
from .toposort import topological_order

__all__ = ["Model", "calculate", "distribution", "model", "variables_by_name"]


def make_distribution(family: Family, params: dict[str, Any], dim: Any = None) -> LazyArray:
    """A variable distributed as ``family(**params)``: what ``normal(mu, sd)`` returns."""
    args: dict[str, Any] = {}
    shapes = []
    refs = {}
    for k, v in params.items():
        if isinstance(v, LazyArray):
            args[k] = v.node
            refs[k] = v.node.reference
        else:
            t = v if isinstance(v, Tensor) else tensor(v, dtype="float64",
                                                       backend=model_backend())
            if t.dtype.kind != "f":
                t = t.astype("float64")
            args[k] = t
            refs[k] = t
        shapes.append(tuple(refs[k].shape))
    try:
        shape = family.value_shape(**dict(zip(params, shapes)))
    except Exception:
        described = ", ".join(f"{k}{list(s)}" for k, s in zip(params, shapes))
        raise ValueError(
            f"{family.name}: parameter shapes {described} cannot be broadcast together"
        ) from None
    if dim is not None:
        want = (int(dim),) if isinstance(dim, int) else tuple(int(d) for d in dim)
        if broadcast_shapes(shape, want) != want:
            raise ValueError(f"dim: {list(want)} does not fit parameters of shape {list(shape)}")
        shape = want
    constraint = family.support(**refs)
    dtype = next((r.dtype for r in refs.values() if r.dtype.kind == "f"), "float64")
    backend = next(iter(refs.values())).backend if refs else None
    var = VariableNode(constraint, shape, dtype, backend)
    dnode = DistributionNode(family, args, var)
    var.distribution = dnode
    return _lazy(var)


PRECISIONS = ("double", "single")  # greta's model(precision=): float64 or float32


class Model:
    """The compiled joint model of the graph connected to some target arrays."""

    def __init__(self, targets: Sequence[Any], precision: str = "double") -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"model: precision must be 'double' or 'single', got {precision!r}")
        self.precision = precision
        if not targets:
            raise ValueError("model: give at least one lazy array (usually the parameters)")
        self.targets = [node_of(t) for t in targets]
        nodes = self._connected(self.targets)
        self.order: list[GraphNode] = self._topological(nodes)
        self.variables: list[VariableNode] = [n for n in self.order
                                              if isinstance(n, VariableNode)]
        for v in self.variables:
            if v.bijector is None:
                _not_a_prior(v)
        self.distributions: list[DistributionNode] = [
            n for n in self.order if isinstance(n, DistributionNode) and n.target is not None
        ]
        self.offsets: list[int] = []
        off = 0
        for v in self.variables:
            self.offsets.append(off)
            off += v.size
        self.n_free = off
        if self.variables:
            self.dtype = self.variables[0].dtype
            self.backend = self.variables[0].reference.backend
            if precision == "single":  # the log density in float32: free state and data cast
                self.dtype = _float32
        else:
            raise ValueError("model: the graph around these arrays has no variables to infer")
        self._compiled: dict[str, Callable[..., Any]] = {}

    # -- structure ----------------------------------------------------------------------------
    @staticmethod
    def _connected(start: Sequence[GraphNode]) -> set[GraphNode]:
        seen: set[GraphNode] = set()
        stack = list(start)
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            stack.extend(m for m in n.neighbours() if m not in seen)
        return seen

    @staticmethod
    def _topological(nodes: set[GraphNode]) -> list[GraphNode]:
        """Each node once, after everything it reads (distribution nodes after their target)."""
        def deps(n: GraphNode) -> list[GraphNode]:
            d = list(n.parents)
            if isinstance(n, DistributionNode) and n.target is not None:
                d.append(n.target)
            return [p for p in d if p in nodes]

        return topological_order(sorted(nodes, key=lambda n: n.id), deps, "model")

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for n in self.order:
            counts[n.kind] = counts.get(n.kind, 0) + 1
        parts = ", ".join(f"{v} {k}" for k, v in counts.items())
        return f"<tensorbridge model: {parts}; {self.n_free} free parameters>"

    # -- free state <-> variable values --------------------------------------------------------
    def _split(self, free: Any) -> list[Any]:
        """Free vector [n] -> free value per variable, in variable shapes."""
        out = []
        for v, off in zip(self.variables, self.offsets):
            piece = free[off:off + v.size]
            out.append(ops.reshape(piece, v.free_shape))
        return out

    def constrain(self, free: Any) -> dict[LazyArray, Any]:
        """Variable values (on their supports) for a free state [n] or [batch, n]."""
        free = self._as_free(free)
        if free.ndim == 2:
            vals = vmap(lambda f: [v.bijector.forward(p) for v, p in
                                   zip(self.variables, self._split(f))])(free)
        else:
            vals = [v.bijector.forward(p) for v, p in zip(self.variables, self._split(free))]
        return {_lazy(v): x for v, x in zip(self.variables, vals)}

    def unconstrain(self, values: dict[Any, Any]) -> Tensor:
        """The free state [n] for a dict {variable: value}."""
        by_node = {node_of(k): v for k, v in values.items()}
        pieces = []
        for v in self.variables:
            if v not in by_node:
                raise KeyError(f"values: no value for variable {v.label()}")
            x = tensor(by_node[v], dtype=v.dtype, backend=self.backend)
            if x.shape != v.shape:
                raise ValueError(
                    f"values: variable {v.label()} has shape {list(v.shape)}, got "
                    f"{list(x.shape)}"
                )
            pieces.append(ops.reshape(v.bijector.inverse(x), (-1,)))
        return ops.concat(pieces) if len(pieces) > 1 else pieces[0]

    def _as_free(self, free: Any) -> Tensor:
        free = to_tensor(free, dtype=self.dtype, backend=self.backend) if not isinstance(
            free, Tensor) else free
        if free.shape[-1:] != (self.n_free,) or free.ndim not in (1, 2):
            raise ValueError(
                f"free: expected a free state of shape [{self.n_free}] or [batch, "
                f"{self.n_free}], got {list(free.shape)}"
            )
        return free

    # -- evaluation ------------------------------------------------------------------------------
    def _values(self, free: Any, wanted: Sequence[GraphNode]) -> tuple[dict, Any]:
        """Evaluate the graph for one free state: node values for ``wanted`` and the log-Jacobian.

        Intermediates are dropped after their last consumer.
        """
        values: dict[GraphNode, Any] = {}
        logdet = 0.0
        for v, piece in zip(self.variables, self._split(free)):
            values[v] = v.bijector.forward(piece)
            if _is_identity(v.bijector):
                continue  # log |det J| = 0: no terms in the compiled program
            logdet = logdet + ops.sum(v.bijector.log_det_jacobian(piece))
        needed = _ancestors(wanted, stop=set())
        remaining = {n: 0 for n in self.order}
        for n in needed:
            for p in n.parents:
                remaining[p] = remaining.get(p, 0) + 1
        keep = set(wanted)
        for n in self.order:
            if n not in needed:
                continue
            if isinstance(n, DataNode):
                ref = n.reference
                single = self.precision == "single" and ref.dtype.kind == "f"
                values[n] = ops.cast(ref, _float32) if single and ref.dtype != _float32 else ref
            elif isinstance(n, OperationNode):
                values[n] = n.compute(values)
                self._release(n.parents, remaining, keep, values)
        return values, logdet

    @staticmethod
    def _release(parents: Sequence[GraphNode], remaining: dict, keep: set, values: dict) -> None:
        for p in parents:
            remaining[p] -= 1
            if remaining[p] == 0 and p not in keep and not isinstance(p, DataNode | VariableNode):
                values.pop(p, None)

    def _log_density_one(self, free: Any, adjusted: bool = True) -> Any:
        logit = self._logit_terms()
        wanted = [t for d in self.distributions for t in (d.target, *d.parents)]
        wanted += [eta for eta, _ in logit.values()]
        values, logdet = self._values(free, wanted)
        total = logdet if adjusted else 0.0
        for d in self.distributions:
            term = logit.get(d)
            if term is None:
                total = total + ops.sum(d.log_prob(values))
            else:
                eta, log_density = term
                total = total + log_density(values[eta])
        if not isinstance(total, Tensor):
            total = ops.full((), float(total), self.dtype, self.backend)
        if self.precision == "single" and total.dtype != _float32:
            total = ops.cast(total, _float32)  # a float64 constant of a family promoted it
        return total

    def _logit_terms(self) -> dict[DistributionNode, tuple[GraphNode, Callable[[Any], Any]]]:
        """Data whose family declares a logit-scale fast path (``Family.logit_param``) and whose
        parameter is ``sigmoid(eta)`` of the model: {distribution: (eta, log density of eta)}."""
        terms = self.__dict__.get("_logit")
        if terms is not None:
            return terms
        terms = {}
        for d in self.distributions:
            param = d.family.logit_param
            prob = d.param_args.get(param) if param is not None else None
            if (not isinstance(prob, OperationNode) or prob.prim.name != "sigmoid" or prob.params
                    or not isinstance(prob.args[0], GraphNode)
                    or not isinstance(d.target, DataNode)):
                continue
            eta = prob.args[0]
            log_density = d.family.logit_log_density(d.target.reference, eta.dtype, self.backend)
            if log_density is not None:
                terms[d] = (eta, log_density)
        self.__dict__["_logit"] = terms
        return terms

    def log_density(self, free: Any, adjusted: bool = True) -> Tensor:
        """Joint log density at a free state [n] (scalar) or a batch [batch, n] ([batch]).

        ``adjusted`` adds the bijectors' log-Jacobians (the density of the free state, what
        samplers need); unadjusted is the density of the constrained values.
        """
        free = self._as_free(free)
        key = f"ld{int(adjusted)}{free.ndim}"
        fn = self._compiled.get(key)
        if fn is None:

            def one(f: Any) -> Any:
                return self._log_density_one(f, adjusted)

            fn = function(vmap(one) if free.ndim == 2 else one)
            self._compiled[key] = fn
        return fn(free)

    def log_density_and_grad(self, free: Any, adjusted: bool = True) -> tuple[Tensor, Tensor]:
        """Log density and its gradient with respect to the free state ([n] or [batch, n])."""
        free = self._as_free(free)
        return self._ldg_function(adjusted, free.ndim)(free)

    def _ldg_function(self, adjusted: bool, ndim: int) -> Callable[..., Any]:
        key = f"ldg{int(adjusted)}{ndim}"
        fn = self._compiled.get(key)
        if fn is None:
            vg = value_and_grad(lambda f: self._log_density_one(f, adjusted))
            # compiled for the model's backend directly (what ``function`` would pick for the
            # free state), so that the raw path below can reach the staged program
            fn = self.backend.compile(vmap(vg) if ndim == 2 else vg)
            self._compiled[key] = fn
        return fn

    def log_density_recording(self) -> Any:
        """The staged recording of the adjusted log density and gradient of one free state:
        what the C and JavaScript lowerings compile. Raises :class:`LoweringError` when the log
        density is not a staged program or cannot be staged."""
        recording = getattr(self._ldg_function(True, 1), "recording", None)
        if recording is None:
            raise LoweringError("the model's log density is not a staged program")
        rec = recording(self._as_free(xp.zeros(self.n_free)))
        if rec is None:
            raise LoweringError("the model's log density cannot be staged (it reads a tensor value "
                                "while tracing), so it has no straight-line program to lower")
        return rec

    def compiled_target(self, batch: int) -> Callable[[Any], tuple[Any, Any]]:
        """The samplers' hot path: adjusted log density and gradient for ``batch`` free states as
        a function on NumPy float64 arrays, ``[batch, n] -> ([batch], [batch, n])``.

        On NumPy it calls the staged program itself on raw arrays: no Tensor objects, tree
        flattening, signature lookup or dispatch per call (that wrapping cost as much as a small
        model's whole gradient). Other backends (and signatures that cannot be staged) go
        through :meth:`log_density_and_grad`. The returned arrays must not be modified.
        """
        key = f"raw{batch}"
        fn = self._compiled.get(key)
        if fn is not None:
            return fn
        staged = self._ldg_function(True, 2)
        program: Callable[..., Any] | None = None
        traced = False

        def slow(q: Any) -> tuple[Any, Any]:
            lp, g = self.log_density_and_grad(q)
            return to_host(lp, xp.float64), to_host(g, xp.float64)

        def target(q: Any) -> tuple[Any, Any]:
            nonlocal program, traced
            if program is not None:
                return program(q)
            out = slow(q)
            if not traced and q.shape == (batch, self.n_free):
                traced = True  # the first call traced the staged program: look it up once
                raw = getattr(staged, "raw_program", None)
                # the raw program takes the backend's own arrays: usable when they are the
                # host arrays (NumPy's, on the numpy backend)
                if (raw is not None and self.dtype.name == "float64"
                        and raw_is_host(self.backend)):
                    program = raw(self._as_free(q))
            return out

        self._compiled[key] = target
        return target

    # -- names and initial values -------------------------------------------------------------
    def derived_targets(self) -> list[OperationNode]:
        """Targets that are operations, not variables: the sampler records their values too."""
        seen: set[GraphNode] = set()
        out = []
        for t in self.targets:
            if isinstance(t, OperationNode) and t not in seen:
                seen.add(t)
                out.append(t)
        return out

    def variable_names(self) -> list[str]:
        """A name per variable: given names, else ``variable_<id>``; names must be unique."""
        names = []
        seen: dict[str, int] = {}
        for v in self.variables:
            base = v.name or f"variable_{v.id}"
            k = seen.get(base, 0)
            seen[base] = k + 1
            names.append(base if k == 0 else f"{base}_{k}")
        return names

    def check_initial_values(self, values: dict[Any, Any], fill: Any = None) -> Any:
        """Free state [n] (as NumPy) for initial values, naming any value off its support.

        Variables without a value take their slice of ``fill``, a free state [n] the caller
        draws from the user's seed (the origin of the free space when ``fill`` is None).
        """
        by_node = {node_of(k): val for k, val in values.items()}
        pieces = []
        for v, name, off in zip(self.variables, self.variable_names(), self.offsets):
            if v not in by_node:
                pieces.append(xp.zeros(v.size) if fill is None
                              else xp.asarray(fill[off:off + v.size], dtype=xp.float64))
                continue
            x = tensor(by_node[v], dtype=v.dtype, backend=self.backend)
            if tuple(x.shape) != v.shape:
                try:
                    x = ops.broadcast_to(x, v.shape)
                except Exception:
                    raise ValueError(
                        f"initial_values: variable '{name}' has shape {list(v.shape)}, got "
                        f"{list(x.shape)}"
                    ) from None
            inside = v.constraint.check(x)
            if not bool(ops.sum(ops.cast(ops.logical_not(inside), "int32")) == 0):
                raise ValueError(
                    f"initial_values: variable '{name}' has values {x.tolist()} outside its "
                    f"support {v.constraint}"
                )
            pieces.append(to_host(v.bijector.inverse(x), xp.float64).ravel())
        return xp.concatenate(pieces) if pieces else xp.zeros(0)

    def describe_infinite_density(self, free: Any) -> str:
        """Which distribution terms are not finite at ``free``, named by target and variables."""
        free_t = self._as_free(free)
        wanted = [t for d in self.distributions for t in (d.target, *d.parents)]
        values, _ = self._values(free_t, wanted)
        names = dict(zip(self.variables, self.variable_names()))
        bad = []
        for d in self.distributions:
            lp = float(ops.sum(d.log_prob(values)))
            if not math.isfinite(lp):
                involved = sorted({names[n] for n in _ancestors([d.target, *d.parents],
                                                                stop=set())
                                   if n in names})
                what = names.get(d.target, d.target.label())
                bad.append(f"the {d.family.name} distribution of {what} has log density {lp}"
                           + (f" (depends on {', '.join(involved)})" if involved else ""))
        return "; ".join(bad) if bad else "the log-Jacobian is not finite"

    def evaluate(self, targets: Any, values: dict[Any, Any]) -> Any:
        """Values of lazy array(s) ``targets`` given values for the variables they need."""
        return calculate(targets, values=values)


def model(*targets: Any, **named: Any) -> Model:
    """Define a model from the arrays of interest (usually its parameters).

    Variables are named after the Python names they are bound to in the calling scope (as greta
    uses R's argument names), or by keyword: ``model(mu=mu, tau=tau)``.

    ``precision="double"`` (default) or ``"single"`` (greta's): the log density and its
    gradient computed in float64 or float32 (the data and the free state cast to float32; the
    samplers' bookkeeping stays float64, and a single-precision model samples on the NumPy
    sampler: the compiled ones are float64). It applies on whatever backend the model's arrays
    live on (``tb.set_model_backend``), as long as that backend has float32 kernels.
    """
    import sys

    precision = named.pop("precision", "double") if isinstance(named.get("precision"), str) \
        else "double"
    m = Model([*targets, *named.values()], precision=precision)
    for k, v in named.items():
        node_of(v).name = k
    frame = sys._getframe(1)
    scopes = [frame.f_locals, frame.f_globals]
    # derived targets (operations such as theta = mu + tau * eta) are traced too, as in greta
    for v in [*m.variables, *m.derived_targets()]:
        if v.name:
            continue
        for scope in scopes:
            hit = next((k for k, x in scope.items()
                        if isinstance(x, LazyArray) and x.node is v and not k.startswith("_")),
                       None)
            if hit:
                v.name = hit
                break
    return m


def variables_by_name(targets: Sequence[Any], names: Iterable[str], arg: str = "values"
                      ) -> dict[str, Any]:
    """``{name: lazy array}`` for the variables called ``names`` among the ancestors of
    ``targets`` (lazy arrays): a variable answers to its name and to its label
    (``variable_<id>`` when it has none). An unknown name is a ``ValueError`` naming it and the
    variables there are, in every door."""
    # the variables the targets depend on, oldest first (a name given twice: the first wins)
    pending = [t.node for t in targets if isinstance(t, LazyArray)]
    reached = set(pending)
    while pending:
        parents = [p for p in pending.pop().parents if p not in reached]
        reached.update(parents)
        pending += parents
    known: dict[str, Any] = {}
    for n in sorted((n for n in reached if isinstance(n, VariableNode)), key=lambda n: n.id):
        for label in (n.name, n.label()):
            if label:
                known.setdefault(label, n)
    out = {}
    for k in names:
        node = known.get(k)
        if node is None:
            named = sorted({n.name for n in known.values() if n.name}, key=str)
            raise ValueError(f"{arg}: there is no variable named {k} among the variables these "
                             f"arrays depend on (named: {', '.join(named) or 'none'})")
        out[k] = _lazy(node)
    return out


def calculate(targets: Any, values: dict[Any, Any] | None = None, cluster: Any = None) -> Any:
    """Evaluate lazy array(s) with a feed dict ``{lazy array: value}``; data fills the rest.

    ``targets`` may be one lazy array or a list/tuple/dict of them; the result has the same
    structure. Feeding an operation node overrides its computation. A key may also be a
    variable's name (``{"mu": 1.0}``), looked up among the targets' ancestors as every front
    door does (:func:`variables_by_name`); an unknown name is an error naming the variables.

    ``cluster`` (with ``values=draws`` only): evaluate blocks of the draws as tasks on a Dask
    cluster (a ``distributed.Client`` or ``"tcp://host:8786"``) or an executor of
    ``runtime.ppl.executors``; the same values as in one process (each draw is evaluated on
    its own; kernels that reduce a batch of draws along another path than one draw are the
    exception, as for ``mcmc``'s blocks of chains).
    """
    if cluster is not None:
        if not isinstance(values, PosteriorDraws):
            raise ValueError("cluster: calculate runs on a cluster over posterior draws only "
                             "(values=draws from mcmc)")
        return ON_EXECUTOR["calculate"](targets, values, cluster)
    if isinstance(values, PosteriorDraws):
        return _calculate_over_draws(targets, values)
    leaves, td = tree_flatten(targets)
    nodes = [node_of(t) for t in leaves]
    values = dict(values or {})
    names = [k for k in values if isinstance(k, str)]
    if names:
        found = variables_by_name(leaves, names)
        values = {found[k] if isinstance(k, str) else k: v for k, v in values.items()}
    feed = {node_of(k): v for k, v in values.items()}
    order = Model._topological(_ancestors(nodes, stop=set(feed)))
    env: dict[GraphNode, Any] = {}
    for n in order:
        if n in feed:
            ref = n.reference
            x = tensor(feed[n], dtype=ref.dtype, backend=ref.backend)
            if tuple(x.shape) != tuple(ref.shape):
                raise ValueError(
                    f"values: {n.label()} has shape {list(ref.shape)}, got {list(x.shape)}"
                )
            env[n] = x
        elif isinstance(n, DataNode):
            env[n] = n.reference
        elif isinstance(n, VariableNode):
            raise ValueError(
                f"values: {n.label()} (a variable of shape {list(n.shape)}) is needed but has "
                f"no value; pass it in values={{...}}"
            )
        elif isinstance(n, OperationNode):
            env[n] = n.compute(env)
    return tree_unflatten(td, [env[n] for n in nodes])


def _not_a_prior(v: VariableNode) -> None:
    family = v.distribution.family.name if v.distribution is not None else "this distribution"
    c = v.constraint
    if c.discrete:
        raise TypeError(
            f"{family} is a discrete distribution (support: {c}): it can only be observed, by "
            f"assigning it to data with distribution(y, {family}(...)); it cannot be the prior "
            f"of a variable, since samplers need a continuous, unconstrained parameter"
        )
    raise TypeError(
        f"{family} can only be assigned to data here, not used as a prior"
        + (f": {c.note}" if c.note else "")
    )


def _calculate_over_draws(targets: Any, draws: Any) -> Any:
    """Evaluate ``targets`` at every posterior draw: arrays ``(chains, draws, *shape)``.

    The variables needed are looked up in the draws by name; all draws are evaluated in one
    vectorised pass (``vmap``), not a Python loop.
    """
    leaves, td = tree_flatten(targets)
    nodes = [node_of(t) for t in leaves]
    variables = [n for n in _ancestors(nodes, stop=set()) if isinstance(n, VariableNode)]
    by_name = {}
    for v in variables:
        name = draws.node_names.get(v) or v.name
        if name is None or name not in draws.values:
            d = v.distribution
            if d is not None and d.target is v:  # greta: simulate it, given nsim
                raise ValueError(
                    f"values: variable {v.label()} has a distribution and is not in the draws, "
                    f"so it cannot be calculated from them alone; give nsim to simulate it "
                    f"given each draw (simulate(..., values=draws, nsim=...))"
                )
            raise ValueError(
                f"values: the draws have no values for variable {v.label()}; they hold "
                f"{', '.join(draws.values)}"
            )
        by_name[v] = draws.values[name]
    chains, n_draws = draws.chains, draws.n_draws
    order = sorted(by_name, key=lambda n: n.id)
    stacked = [to_tensor(xp.asarray(by_name[v]).reshape(chains * n_draws, *v.shape),
                         dtype=v.dtype, backend=v.reference.backend) for v in order]

    def one(*vals: Any) -> Any:
        return [calculate(_lazy(n), values={_lazy(v): x for v, x in zip(order, vals)})
                for n in nodes]

    if stacked:
        arrays = [to_host(o).reshape(chains, n_draws, *n.shape)
                  for o, n in zip(vmap(one)(*stacked), nodes)]
    else:  # no variable involved: the same value at every draw
        arrays = [xp.zeros((chains, n_draws, *n.shape)) + to_host(calculate(_lazy(n)))
                  for n in nodes]
    return tree_unflatten(td, arrays)


def _is_identity(bijector: Any) -> bool:
    return type(bijector) is Bijector and bijector.constraint.kind == "real"


def _ancestors(nodes: Sequence[GraphNode], stop: set[GraphNode]) -> set[GraphNode]:
    seen: set[GraphNode] = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n not in stop:
            stack.extend(n.parents)
    return seen

