"""Staging: turn a tensor function into a straight-line list of kernel calls.

Backends without a graph compiler (NumPy, TF.js) compile with this. The first call for an input
signature (tree structure, shapes, dtypes and the values of non-tensor arguments) runs the function
eagerly while a :class:`Recorder` notes every kernel the primitives call — the forward pass and,
inside ``value_and_grad``, the backward pass. Later calls replay only the kernel calls that the
outputs depend on, on raw backend arrays: no op validation, promotion, tracing or Tensor objects
in between.

The recording is only valid if the function's Python control flow does not depend on tensor
values. Any read of a value during tracing (``float(x)``, ``.numpy()``, ``if x > 0:``, a random
draw, a data-dependent index) marks the signature *unstageable* and the function then always runs
eagerly for it — never a silently frozen value.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

from .autodiff import core as _prim_mod
from .pytree import tree_flatten, tree_unflatten
from .tensor import ConcreteTensor, Tensor

__all__ = ["Recorder", "StagedFunction", "note_concretization"]


class Recorder:
    """Collects kernel calls made on one thread while a staged function is traced."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.slots: dict[int, int] = {}  # id(Tensor) -> slot
        self.keep: list[Any] = []  # keep traced tensors alive so ids are not reused
        self.consts: list[tuple[int, Any]] = []  # (slot, raw value) fixed at trace time
        self.steps: list[tuple[Any, tuple[Any, ...], dict[str, Any], int]] = []
        self.nslots = 0
        self.reason: str | None = None

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
            self.consts.append((s, t._raw_unchecked()))
        return s

    def add_input(self, t: Tensor) -> int:
        s = self._new_slot()
        self.slots[id(t)] = s
        self.keep.append(t)
        return s

    def call(self, prim: Any, args: Any, params: dict[str, Any]) -> Any:
        if threading.get_ident() != self.thread:
            return prim.impl(*args, **params)
        impl = prim.impl
        kind = getattr(impl, "kernel_kind", None)
        if kind is None:  # composite (custom primitive, identity): its inner calls record
            return impl(*args, **params)
        out = impl(*args, **params)
        be = out.backend
        kernel = be.kernels[impl.kernel_name]
        refs: list[Any] = []
        if kind == "binary":
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
        self.steps.append((kernel, tuple(refs), params, s))
        return out

    def _const(self, raw: Any) -> int:
        s = self._new_slot()
        self.consts.append((s, raw))
        return s


_lock = threading.RLock()


def note_concretization(what: str) -> None:
    """Called when a tensor's value is read; spoils an active recording on this thread."""
    rec = _prim_mod.recorder
    if rec is not None and rec.reason is None and threading.get_ident() == rec.thread:
        rec.reason = what


class _Program:
    __slots__ = ("_fn", "consts", "in_slots", "nslots", "out_def", "out_items", "steps")

    def __init__(self, rec: Recorder, in_slots: list[int], out_def: Any,
                 out_items: list[Any]) -> None:
        consts = dict(rec.consts)
        alias: dict[int, int] = {}  # slot -> the earlier slot computing the same value
        seen: dict[Any, int] = {}
        live_steps = []
        for kernel, refs, params, out in rec.steps:
            refs = tuple(alias.get(r, r) for r in refs)
            if all(r in consts for r in refs):
                # constant folding: inputs fixed at trace time (data, constant parameters)
                consts[out] = kernel(*[consts[r] for r in refs], **params)
                continue
            key = _step_key(kernel, refs, params)
            if key is not None and key in seen:  # common subexpression
                alias[out] = seen[key]
                continue
            if key is not None:
                seen[key] = out
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
        self.consts = tuple((s, v) for s, v in consts.items() if s in needed)
        self.nslots = rec.nslots
        self.in_slots = tuple(in_slots)
        self.out_def = out_def
        self.out_items = items
        self._fn = self._generate()

    def _generate(self) -> Any:
        """Python source for the straight-line program: one local variable per slot, kernels,
        constants and parameters bound as globals of the generated function."""
        env: dict[str, Any] = {}
        lines = [f"def program({', '.join(f'v{s}' for s in self.in_slots)}):"]
        for s, v in self.consts:
            env[f"c{s}"] = v
            lines.append(f"    v{s} = c{s}")
        for i, (kernel, refs, params, out) in enumerate(self.steps):
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
        if prog == "eager" or any(isinstance(x, _prim_mod.Tracer) for x in leaves):
            return self.fn(*args, **kwargs)
        raws = [x._raw() for x in leaves if isinstance(x, Tensor)]
        return prog.run(self.backend, raws)  # type: ignore[union-attr]

    def _trace(self, key: Any, leaves: list[Any], treedef: Any, args: Any, kwargs: Any) -> Any:
        if any(isinstance(x, _prim_mod.Tracer) for x in leaves):
            return self.fn(*args, **kwargs)  # called inside grad/jvp: no staging
        with _lock:
            rec = Recorder()
            in_slots = [rec.add_input(x) for x in leaves if isinstance(x, Tensor)]
            previous = _prim_mod.recorder
            _prim_mod.recorder = rec
            try:
                out = self.fn(*args, **kwargs)
            finally:
                _prim_mod.recorder = previous
        out_leaves, out_def = tree_flatten(out)
        items: list[Any] = []
        for o in out_leaves:
            if isinstance(o, Tensor):
                s = rec.slots.get(id(o))
                if s is None:
                    s = rec.slot_of(o)
                items.append(("slot", s))
            else:
                items.append(("const", o))
        if rec.reason is not None:
            self.cache[key] = "eager"
            warnings.warn(
                f"tensorbridge.function({self.__name__}): runs eagerly for this input signature "
                f"because it reads a tensor value while tracing ({rec.reason}); "
                f"staging needs control flow that does not depend on tensor values",
                RuntimeWarning,
                stacklevel=3,
            )
        else:
            self.cache[key] = _Program(rec, in_slots, out_def, items)
        return out
