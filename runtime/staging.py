"""Staging: turn a tensor function into a straight-line list of kernel calls.

Backends without a graph compiler (NumPy, TF.js) compile with this. The first call for an input
signature (tree structure, shapes, dtypes and the values of non-tensor arguments) runs the function
under a :class:`StagingTrace`: its inputs are tracers, and a :class:`Recorder` notes every kernel
the primitives call on them — the forward pass and, inside ``value_and_grad``, the backward pass.
Later calls replay only the kernel calls that the outputs depend on, on raw backend arrays: no op
validation, promotion, tracing or Tensor objects in between.

The recording is only valid if the function's Python control flow does not depend on tensor
values. Any read of a traced value (``float(x)``, ``.numpy()``, ``if x > 0:``, a data-dependent
index) or a random draw during tracing marks the signature *unstageable* and the function then
always runs eagerly for it — never a silently frozen value.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .autodiff.core import Primitive, Trace, Tracer, bind, new_tracer
from .pytree import tree_flatten, tree_unflatten
from .tensor import ConcreteTensor, Tensor

try:  # the peephole pass reads NumPy constants; without NumPy (Pyodide + TF.js) it is skipped
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None

__all__ = ["Recorder", "Recording", "StagedFunction", "StagingTrace", "StagingTracer",
           "note_concretization"]


class Recorder:
    """The kernel calls a :class:`StagingTrace` sees, on slots of concrete tensors."""

    def __init__(self) -> None:
        self.slots: dict[int, int] = {}  # id(Tensor) -> slot
        self.tensors: dict[int, Tensor] = {}  # slot -> traced tensor (shapes for the peephole)
        self.keep: list[Any] = []  # keep traced tensors alive so ids are not reused
        self.consts: list[tuple[int, Any]] = []  # (slot, raw value) fixed at trace time
        self.steps: list[tuple[Any, tuple[Any, ...], dict[str, Any], int]] = []
        self.names: dict[int, str] = {}  # output slot -> kernel name (for the peephole pass)
        self.nslots = 0

    def _new_slot(self) -> int:
        s = self.nslots
        self.nslots += 1
        return s

    def slot_of(self, t: Tensor) -> int:
        s = self.slots.get(id(t))
        if s is None:  # a tensor made outside the traced ops (zeros, a closure constant)
            s = self._new_slot()
            self.slots[id(t)] = s
            self.keep.append(t)
            self.tensors[s] = t
            self.consts.append((s, t._raw_unchecked()))
        return s

    def add_input(self, t: Tensor) -> int:
        s = self._new_slot()
        self.slots[id(t)] = s
        self.keep.append(t)
        self.tensors[s] = t
        return s

    def keep_shape(self, out: int, raws: dict[int, Any]) -> Callable[[int], bool] | None:
        """A test whether another slot has ``out``'s shape and dtype (None if unknown);
        ``raws``: the constants by slot."""
        t = self.tensors.get(out)
        if t is None:
            return None
        target = (tuple(t.shape), t.dtype.name)

        def same(slot: int) -> bool:
            o = self.tensors.get(slot)
            if o is not None:
                return (tuple(o.shape), o.dtype.name) == target
            raw = raws.get(slot)
            return raw is not None and (tuple(getattr(raw, "shape", (None,))),
                                        str(getattr(raw, "dtype", ""))) == target

        return same

    def record(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any],
               out: Tensor) -> None:
        """Note the kernel call of ``prim`` (``args``: concrete tensors and Python values) that
        made ``out``."""
        be = out.backend
        refs: list[Any] = []
        if prim.kind == "binary":
            x, y = args
            for v, other in ((x, y), (y, x)):
                if isinstance(v, Tensor):
                    refs.append(self.slot_of(v))
                else:
                    refs.append(self._const(be.scalar(v, other.dtype)))
        else:
            for a in args:
                refs.append(self.slot_of(a) if isinstance(a, Tensor) else self._const(a))
        s = self._new_slot()
        self.slots[id(out)] = s
        self.keep.append(out)
        self.tensors[s] = out
        self.steps.append((be.kernels[prim.kernel], tuple(refs), params, s))
        self.names[s] = prim.kernel

    def _const(self, raw: Any) -> int:
        s = self._new_slot()
        self.consts.append((s, raw))
        return s


class StagingTracer(Tracer):
    """A value inside a function being staged: it stands for the values of later calls, so
    reading it ends the staging of that input signature."""

    __slots__ = ()

    def _raw(self) -> Any:
        self._trace.concretized(f"a value of tensor {self.id} with shape {self.shape} was read")
        return self._primal._raw()

    def numpy(self) -> Any:
        self._raw()
        return self._primal.numpy()

    def tolist(self) -> Any:
        self._raw()
        return self._primal.tolist()


class StagingTrace(Trace):
    """The trace of one staging run: ops on its tracers run eagerly and, with a ``recorder``,
    each kernel call is noted for replay. ``reason`` says why the run cannot be staged (a value
    was read, a random number drawn), or is None."""

    __slots__ = ("reason", "recorder")

    placeholder_values = True

    def __init__(self, recorder: Recorder | None = None) -> None:
        super().__init__()
        self.recorder = recorder
        self.reason: str | None = None

    def new_tracer(self, value: Tensor) -> StagingTracer:
        return new_tracer(StagingTracer, value, self)

    def concretized(self, what: str) -> None:
        if self.reason is None:
            self.reason = what

    def process(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        if prim.kernel is None:  # a composite: its inner calls reach this trace
            return prim.impl(*args, **params)
        primals = [a._primal if isinstance(a, StagingTracer) and a._trace is self else a
                   for a in args]
        if any(isinstance(a, Tracer) for a in primals):
            # a tracer of an enclosing transformation (captured by the function): its kernel
            # calls are not ours to replay
            self.concretized(f"'{prim.name}' used a value of an enclosing grad, jvp or vmap")
            return self.new_tracer(bind(prim, primals, params))
        out = prim.impl(*primals, **params)
        if self.recorder is not None and self.reason is None:
            self.recorder.record(prim, primals, params, out)
        return self.new_tracer(out)


# The staging traces running on each thread, innermost last: what a random draw spoils.
_active = threading.local()


@contextlib.contextmanager
def staging(trace: StagingTrace) -> Iterator[StagingTrace]:
    """Run the block with ``trace`` active on this thread (see :func:`note_concretization`)."""
    stack = getattr(_active, "stack", None)
    if stack is None:
        stack = _active.stack = []
    stack.append(trace)
    try:
        yield trace
    finally:
        stack.pop()


def note_concretization(what: str) -> None:
    """Spoil the staging runs active on this thread: ``what`` (a random draw, say) would be
    frozen into the replay."""
    for trace in getattr(_active, "stack", ()):
        trace.concretized(what)


class Recording:
    """A portable copy of a staging run's recording, as traced (before the peephole passes,
    which replace kernels with NumPy closures): what ``compiled.lowering`` reads.

    ``steps``: ``(kernel name, kernel, refs, params, out slot)``; ``meta``: slot -> (shape,
    dtype name) of every traced tensor; ``consts``: slot -> raw value fixed at trace time;
    ``in_slots``/``out_items`` as in the program (``("slot", s)`` or ``("const", v)``)."""

    __slots__ = ("consts", "in_slots", "meta", "out_items", "steps")

    def __init__(self, rec: Recorder, in_slots: list[int], out_items: list[Any]) -> None:
        self.steps = tuple((rec.names[out], kernel, refs, params, out)
                           for kernel, refs, params, out in rec.steps)
        self.meta = {s: (tuple(t.shape), t.dtype.name) for s, t in rec.tensors.items()}
        self.consts = dict(rec.consts)
        self.in_slots = tuple(in_slots)
        self.out_items = tuple(out_items)


class _Program:
    __slots__ = ("_fn", "_inline", "consts", "in_slots", "nslots", "out_def", "out_items",
                 "recording", "steps")

    def __init__(self, rec: Recorder, in_slots: list[int], out_def: Any,
                 out_items: list[Any]) -> None:
        self.recording = Recording(rec, in_slots, out_items)
        consts = dict(rec.consts)
        alias: dict[int, int] = {}  # slot -> the earlier slot computing the same value
        seen: dict[Any, int] = {}
        scatters: dict[int, tuple[tuple[int, ...], tuple[Any, ...], Any]] = {}
        transposed: dict[int, Any] = {}  # constant slot -> contiguous transpose (matmuls)
        signed: dict[int, tuple[int, int]] = {}  # slot -> (x, c): x * c with c all +-1
        live_steps = []
        for kernel, refs, params, out in rec.steps:
            refs = tuple(alias.get(r, r) for r in refs)
            if all(r in consts for r in refs):
                # constant folding: inputs fixed at trace time (data, constant parameters)
                consts[out] = kernel(*[consts[r] for r in refs], **params)
                continue
            name = rec.names.get(out)
            same = _identity_operand(name, refs, consts, rec.keep_shape(out, consts))
            if same is not None:  # x + 0, x * 1, where(all true, x, y), ...
                alias[out] = same
                continue
            key = _step_key(kernel, refs, params)
            if key is not None and key in seen:  # common subexpression
                alias[out] = seen[key]
                continue
            if key is not None:
                seen[key] = out
            kernel = _specialise(name, kernel, refs, consts, transposed) or kernel
            refs = _fold_signs(name, refs, out, consts, signed, rec)
            merged = _merge_scatters(name, kernel, refs, params, out, scatters, rec)
            if merged is not None:
                kernel, refs, params = merged
            live_steps.append((kernel, refs, params, out))
        items = [(kind, alias.get(v, v)) if kind == "slot" else (kind, v)
                 for kind, v in out_items]
        needed = {v for kind, v in items if kind == "slot"}
        kept = []
        for step in reversed(live_steps):  # dead-code elimination
            if step[3] in needed:
                kept.append(step)
                needed.update(step[1])
        self.steps = tuple(reversed(kept))
        self.nslots = rec.nslots
        if _np is not None:
            self.steps = self._broadcast_constants(rec, consts)
            needed = {v for kind, v in items if kind == "slot"}
            needed.update(r for step in self.steps for r in step[1])
        self._inline = {out: t for kernel, refs, params, out in self.steps
                        if (t := _inline(kernel, params, rec.tensors.get(out))) is not None}
        self.consts = tuple((s, v) for s, v in consts.items() if s in needed)
        self.in_slots = tuple(in_slots)
        self.out_def = out_def
        self.out_items = items
        self._fn = self._generate()

    def _broadcast_constants(self, rec: Recorder, consts: dict[int, Any]) -> tuple[Any, ...]:
        """Constants of small elementwise steps stored at the step's full output shape: on
        NumPy 1 a 0-d operand takes the value-based casting path, so x * c costs 1.5-2x
        x * full_like(x, c) for arrays of up to about a thousand elements (chains x
        coefficients); the values are the same."""
        made: dict[tuple[int, tuple[int, ...]], int] = {}
        steps = []
        for kernel, refs, params, out in self.steps:
            t = rec.tensors.get(out)
            if (rec.names.get(out) in _BROADCASTING and t is not None
                    and (isinstance(kernel, _np.ufunc) or kernel.__name__ == "_where")
                    and 0 < _prod(t.shape) <= _SMALL and any(r in consts for r in refs)):
                shape = tuple(t.shape)
                new_refs = []
                for r in refs:
                    c = _np_const(consts, r)
                    if c is not None and c.shape != shape and c.size <= _SMALL:
                        slot = made.get((r, shape))
                        if slot is None:
                            slot = made[(r, shape)] = self.nslots
                            self.nslots += 1
                            consts[slot] = _np.array(_np.broadcast_to(c, shape))
                        r = slot
                    new_refs.append(r)
                refs = tuple(new_refs)
            steps.append((kernel, refs, params, out))
        return tuple(steps)

    def _generate(self) -> Any:
        """Python source for the straight-line program: one local variable per slot, kernels,
        constants and parameters bound as globals of the generated function."""
        env: dict[str, Any] = {}
        lines = [f"def program({', '.join(f'v{s}' for s in self.in_slots)}):"]
        for s, v in self.consts:
            env[f"c{s}"] = v
            lines.append(f"    v{s} = c{s}")
        for i, (kernel, refs, params, out) in enumerate(self.steps):
            inline = self._inline.get(out)
            if inline is not None:  # a NumPy method or indexing: no wrapper call
                template, value = inline
                env[f"p{i}"] = value
                lines.append(f"    v{out} = " + template.format(*(f"v{r}" for r in refs),
                                                                 p=f"p{i}"))
                continue
            env[f"k{i}"] = kernel
            args = [f"v{r}" for r in refs]
            for name, value in params.items():
                env[f"p{i}_{name}"] = value
                args.append(f"{name}=p{i}_{name}")
            lines.append(f"    v{out} = k{i}({', '.join(args)})")
        outs = [f"v{v}" for kind, v in self.out_items if kind == "slot"]
        lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
        exec("\n".join(lines), env)  # the source is generated from our own recording
        return env["program"]

    def run(self, backend: Any, raws: list[Any]) -> Any:
        results = iter(self._fn(*raws))
        leaves = [backend.wrap(next(results)) if kind == "slot" else v
                  for kind, v in self.out_items]
        return tree_unflatten(self.out_def, leaves)


# -- peephole rules (NumPy constants only; other backends' programs are left as recorded) --------
_BROADCASTING = frozenset(("add", "sub", "mul", "div", "pow", "maximum", "minimum", "equal",
                           "not_equal", "less", "less_equal", "greater", "greater_equal",
                           "logical_and", "logical_or", "where"))
_SMALL = 1024  # elements: above this a broadcast scalar is the cheaper operand


def _prod(shape: Any) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _np_const(consts: dict[int, Any], ref: int) -> Any:
    v = consts.get(ref)
    if _np is None or not isinstance(v, _np.ndarray | _np.generic):
        return None
    return v


def _all_equal(v: Any, x: float | bool) -> bool:
    return v is not None and v.size > 0 and bool(_np.all(v == x))


_NEUTRAL = {"add": (0, 1, 0.0), "mul": (0, 1, 1.0), "sub": (1, None, 0.0),
            "div": (1, None, 1.0)}


def _identity_operand(name: str | None, refs: tuple[int, ...], consts: dict[int, Any],
                      out_meta: Any) -> int | None:
    """The slot a step merely copies (x + 0, 0 + x, x - 0, x * 1, x / 1, where with a constant
    all-true or all-false mask) when that slot already has the output's shape and dtype."""
    if out_meta is None or _np is None:
        return None
    keep = None
    if name in _NEUTRAL:
        const_pos_a, const_pos_b, neutral = _NEUTRAL[name]
        for pos in (const_pos_a, const_pos_b):
            if pos is not None and _all_equal(_np_const(consts, refs[pos]), neutral):
                keep = refs[1 - pos]
                break
    elif name == "where":
        mask = _np_const(consts, refs[0])
        if mask is not None and mask.dtype == bool and mask.size > 0:
            keep = refs[1] if mask.all() else refs[2] if not mask.any() else None
    if keep is None:
        return None
    return keep if out_meta(keep) else None


def _specialise(name: str | None, kernel: Any, refs: tuple[int, ...], consts: dict[int, Any],
                transposed: dict[int, Any]) -> Any:
    """A faster kernel for a step: a vmapped matrix-vector product against a constant matrix
    (C[M, K] @ x[..., K, 1], or x[..., 1, K] @ C[K, N]) is one matrix-matrix product over the
    flattened batch instead of NumPy's loop of small products. Both read one contiguous copy
    of C^T (``transposed``, by slot), so a gradient's forward and backward products stream the
    same memory."""
    if name != "matmul" or len(refs) != 2:
        return None
    a, b = (_np_const(consts, r) for r in refs)
    if a is not None and b is None and a.ndim == 2:
        ct = transposed.setdefault(refs[0], _np.ascontiguousarray(a.T))
        m, k = a.shape

        def const_left(_c: Any, x: Any) -> Any:
            if x.ndim < 3 or x.shape[-1] != 1 or x.shape[-2] != k:
                return _np.matmul(a, x)
            return (x.reshape(-1, k) @ ct).reshape(*x.shape[:-2], m, 1)

        return const_left
    if b is not None and a is None and b.ndim == 2:
        bt = transposed.setdefault(refs[1], _np.ascontiguousarray(b.T))
        k, n = b.shape

        def const_right(x: Any, _c: Any) -> Any:
            if x.ndim < 3 or x.shape[-2] != 1 or x.shape[-1] != k:
                return _np.matmul(x, b)
            return (bt @ x.reshape(-1, k).T).T.reshape(*x.shape[:-2], 1, n)

        return const_right
    return None


def _fold_signs(name: str | None, refs: tuple[int, ...], out: int, consts: dict[int, Any],
                signed: dict[int, tuple[int, int]], rec: Recorder) -> tuple[int, ...]:
    """(x * s) * c -> x * (s * c) for constants s of +-1 (a negated cotangent times a constant
    factor, say): one elementwise product fewer, bit for bit the same values. Notes products
    by such constants in ``signed``; returns the step's (possibly new) operands."""
    if name != "mul" or len(refs) != 2:
        return refs
    for pos in (0, 1):
        c = _np_const(consts, refs[pos])
        other = refs[1 - pos]
        if c is None or c.dtype.kind != "f":
            continue
        inner = signed.get(other)
        if inner is not None:
            x, s_ref = inner
            s = consts[s_ref]
            if s.dtype == c.dtype:
                slot = rec._new_slot()
                consts[slot] = s * c  # exact: s is +-1
                return (x, slot)
        if c.size and bool(_np.all(_np.abs(c) == 1.0)):
            signed[out] = (other, refs[pos])
        return refs
    return refs


def _scatter_sum(*updates: Any, indexes: tuple[Any, ...], shape: tuple[int, ...]) -> Any:
    out = _np.zeros(shape, dtype=updates[0].dtype)
    for u, index in zip(updates, indexes):
        if index.has_arrays:
            _np.add.at(out, index.numpy_index, u)
        else:
            out[index.numpy_index] += u
    return out


def _merge_scatters(name: str | None, kernel: Any, refs: tuple[int, ...], params: dict[str, Any],
                    out: int, scatters: dict[int, Any], rec: Recorder) -> Any:
    """Sums of scatter-adds into zeros of one shape (a gradient assembled from the pieces of a
    split input, one per variable) as one kernel: one zeros array instead of one per piece and
    no additions. Notes scatters in ``scatters``; returns the replacement (kernel, refs, params)
    or None."""
    if _np is None:
        return None
    if name == "scatter_add_flat" and getattr(kernel, "__module__", "").endswith(
            "numpy_backend") and len(refs) == 1:
        scatters[out] = (refs, (params["index"],), tuple(params["shape"]))
        return None
    if name != "add" or len(refs) != 2 or not all(r in scatters for r in refs):
        return None
    (ra, ia, sa), (rb, ib, sb) = scatters[refs[0]], scatters[refs[1]]
    same = rec.keep_shape(out, {})
    if sa != sb or same is None or not (same(refs[0]) and same(refs[1])):
        return None
    merged = (ra + rb, ia + ib, sa)
    scatters[out] = merged
    return _scatter_sum, merged[0], {"indexes": merged[1], "shape": sa}


def _inline(kernel: Any, params: dict[str, Any], out: Tensor | None) -> Any:
    """(source template, parameter) for NumPy kernels that are one method call or one basic
    index, written into the program instead of calling the kernel's Python wrapper."""
    if _np is None or out is None or not getattr(kernel, "__module__", "").endswith(
            "numpy_backend"):
        return None
    name = getattr(kernel, "__name__", "")
    if name == "_reshape":
        return "{0}.reshape({p})", tuple(params["shape"])
    if name == "_where":
        return "{p}({0}, {1}, {2})", _np.where
    if name == "_gather" and not params["index"].has_arrays and len(out.shape) > 0:
        return "{0}[{p}]", params["index"].numpy_index  # a view, as the kernel returns
    return None


def _step_key(kernel: Any, refs: tuple[int, ...], params: dict[str, Any]) -> Any:
    try:
        key = (kernel, refs, tuple(sorted(params.items())))
        hash(key)
        return key
    except TypeError:
        return None


class StagedFunction:
    """A function compiled by staging; call it like the original."""

    def __init__(self, fn: Callable[..., Any], backend: Any) -> None:
        self.fn = fn
        self.backend = backend
        self.cache: dict[Any, _Program | str] = {}
        self.__name__ = getattr(fn, "__name__", "staged")
        self.__doc__ = getattr(fn, "__doc__", None)

    def _key(self, leaves: list[Any], treedef: Any) -> Any:
        parts = []
        for x in leaves:
            if isinstance(x, Tensor):
                parts.append((x.shape, x.dtype.name, x.backend.name))
            else:
                try:
                    hash(x)
                except TypeError:
                    return None
                parts.append(("py", type(x).__name__, x))
        return (treedef, tuple(parts))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and all(a.__class__ is ConcreteTensor for a in args):
            # fast path: positional concrete tensors, keyed without building a tree
            key = ("flat", *((a.shape, a.dtype, a.backend) for a in args))
            prog = self.cache.get(key)
            if prog is not None and prog != "eager":
                return prog.run(self.backend, [a._raw() for a in args])  # type: ignore[union-attr]
            if prog is None:
                leaves, treedef = list(args), None
                return self._trace(key, leaves, treedef, args, kwargs)
        leaves, treedef = tree_flatten((args, kwargs))
        key = self._key(leaves, treedef)
        prog = self.cache.get(key) if key is not None else "eager"
        if prog is None:
            return self._trace(key, leaves, treedef, args, kwargs)
        if prog == "eager" or any(isinstance(x, Tracer) for x in leaves):
            return self.fn(*args, **kwargs)
        raws = [x._raw() for x in leaves if isinstance(x, Tensor)]
        return prog.run(self.backend, raws)  # type: ignore[union-attr]

    def raw_program(self, *args: Tensor) -> Callable[..., tuple[Any, ...]] | None:
        """The generated program for the signature of ``args`` (positional concrete tensors),
        traced if need be: raw backend arrays in, the tuple of the outputs' raw arrays out (in
        tree order). None when that signature runs eagerly or returns non-tensor leaves."""
        key = ("flat", *((a.shape, a.dtype, a.backend) for a in args))
        if key not in self.cache:
            self(*args)
        prog = self.cache.get(key)
        if not isinstance(prog, _Program) or any(k != "slot" for k, _ in prog.out_items):
            return None
        return prog._fn

    def recording(self, *args: Tensor) -> Recording | None:
        """The recording behind :meth:`raw_program` for the signature of ``args`` (traced if
        need be), for lowering to other languages; None when that signature runs eagerly."""
        key = ("flat", *((a.shape, a.dtype, a.backend) for a in args))
        if key not in self.cache:
            self(*args)
        prog = self.cache.get(key)
        return prog.recording if isinstance(prog, _Program) else None

    def _trace(self, key: Any, leaves: list[Any], treedef: Any, args: Any, kwargs: Any) -> Any:
        if any(isinstance(x, Tracer) for x in leaves):
            return self.fn(*args, **kwargs)  # called inside grad/jvp/vmap: no staging
        rec = Recorder()
        trace = StagingTrace(rec)
        in_slots = [rec.add_input(x) for x in leaves if isinstance(x, Tensor)]
        traced = [trace.new_tracer(x) if isinstance(x, Tensor) else x for x in leaves]
        if treedef is None:  # the fast path's positional tensors
            args, kwargs = traced, {}
        else:
            args, kwargs = tree_unflatten(treedef, traced)
        with staging(trace):
            out = self.fn(*args, **kwargs)
        out_leaves, out_def = tree_flatten(out)
        out_leaves = [o._primal if isinstance(o, StagingTracer) and o._trace is trace else o
                      for o in out_leaves]
        if trace.reason is not None:
            self.cache[key] = "eager"
            warnings.warn(
                f"tensorbridge.function({self.__name__}): runs eagerly for this input signature "
                f"because it reads a tensor value while tracing ({trace.reason}); "
                f"staging needs control flow that does not depend on tensor values",
                RuntimeWarning,
                stacklevel=3,
            )
        else:
            items = [("slot", rec.slot_of(o)) if isinstance(o, Tensor) else ("const", o)
                     for o in out_leaves]
            self.cache[key] = _Program(rec, in_slots, out_def, items)
        return tree_unflatten(out_def, out_leaves)
