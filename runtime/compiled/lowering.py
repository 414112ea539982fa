"""Lower a staged program (``staging.Recording``) of one free state to one C function.

The C function has the signature the compiled samplers call through a function pointer::

    int NAME(void *ctx, const double *q, double *logp, double *grad);

``q``, ``logp`` and ``grad`` must not overlap. It returns 0, or nonzero when it detects a
numerical failure (a Cholesky factor of a matrix that is not positive definite, a triangular
solve with a zero pivot); the results are then the NaN values the NumPy kernels give. ``ctx``
points to a ``tb_ctx`` (:data:`CTX_DECL`: ``{const void *const *c; char *ws;}``): pointers to the
constants (data arrays and values folded at lowering time, passed at run time so that the
source, and its hash, depend on shapes and structure only) and a workspace for intermediates
(8-byte aligned). The function keeps no static mutable state (``lgamma_r``, not ``lgamma``):
each thread passes its own ctx.

What is lowered, with the NumPy kernels' semantics (``backends/numpy_backend.py``): float64
elementwise arithmetic and math (NaN-propagating maximum/minimum/clip, NumPy's floor division
and remainder, ``logaddexp``-based softplus, SciPy's expit, lgamma, digamma (our own fits, within 2
ulp), erf, erfc, log1p, expm1...), comparisons, logical ops, where, casts, broadcasting, the
reductions sum/prod/max/min/logsumexp over any axes, cumsum (either way), reshape, transpose,
broadcast_to, concat, gather/scatter-add of flat positions (basic slices as offsets into the
same memory, other indexes as int64 position arrays in ctx), batched matmul (C loops, no BLAS:
each output summed in order along the inner dimension, independent outputs side by side),
Cholesky and triangular solves. Integer and bool slots are kept in their C types but
only moved, compared, selected and cast. Any other kernel, parameter or dtype raises
:class:`LoweringError` (a ``NotImplementedError``) naming it: nothing is lowered approximately.

Consecutive elementwise steps of one shape (or shapes equal but for 1s) become one loop, whose
intermediates that no later step reads stay in registers; full sums of a loop's values are
accumulated in that loop, wherever the program takes them (for loops of _SPLIT_SUM elements or
more, right after it, in _LANES interleaved accumulators, so that the loop itself vectorises).

Speed without giving up reproducibility: exp, log and log1p (and the softplus and sigmoid
built on them) in loops of _VECTOR_MIN elements or more are tb_vmath.h's branch-free versions
(about 1 ulp; libm's calls would keep the loops scalar), libm's elsewhere; the generated code is
compiled at -O3 without trapping math (vectorised loops; no value changes: no -ffast-math, no
contraction) and, on x86-64 with GCC, twice: for SSE2 and for AVX2, chosen at run time. The
two builds give the same bits (tests/compiled/test_vectorised.py), so the disk cache can be
shared between x86-64 machines.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TensorBridgeError

try:  # the C path hands NumPy arrays to ctx; the JavaScript path (Pyodide) needs no NumPy
    import numpy as np
except ImportError:  # pragma: no cover - Pyodide
    np = None

__all__ = ["LoweredFunction", "LoweredJs", "LoweringError", "lower", "lower_js"]


class LoweringError(TensorBridgeError, NotImplementedError):
    """A staged program holds a kernel, parameter or dtype that has no C lowering; the message
    names it and says why. A NotImplementedError: the program still runs on NumPy."""


@dataclass(frozen=True)
class LoweredFunction:
    """C source of one ``int NAME(void *ctx, const double *q, double *logp, double *grad)``.

    ``constants``: the arrays ``ctx->c[k]`` must point to, in order (C-contiguous, of the dtype
    the source reads); ``workspace_bytes``: the size of ``ctx->ws`` (8-byte aligned);
    ``n``: the length of ``q`` and ``grad``; ``cdef``: the declarations for cffi."""

    name: str
    source: str
    cdef: str
    constants: tuple[Any, ...]
    workspace_bytes: int
    n: int
    steps: int  # the program's steps after folding and dead-code elimination


_CTYPE = {"float64": "double", "int64": "int64_t", "int32": "int32_t", "bool": "unsigned char"}

CTX_DECL = "typedef struct { const void *const *c; char *ws; } tb_ctx;"


def _paste(name: str) -> str:
    """A header of this folder with its local ``#include "..."`` lines replaced by the files."""
    out = []
    for line in (Path(__file__).with_name(name)).read_text().splitlines(keepends=True):
        if line.startswith('#include "'):
            out.append(_paste(line.split('"')[1]))
        else:
            out.append(line)
    return "".join(out)


# tb_prelude.h: pragmas, includes, NumPy's semantics for max/min/clip/floor division, lgamma_r,
# digamma, Cholesky and triangular solves, and tb_vmath.h's exp, log and log1p written to be
# vectorised (about 1 ulp, no libm calls); pasted into every source, so its text is part of the
# source's hash
_PRELUDE = _paste("tb_prelude.h") + CTX_DECL + "\n"

# The function is compiled twice on x86-64 with GCC: for the baseline (SSE2) and for AVX2,
# chosen when the module is called by what the CPU has. Both run the same IEEE operations on
# every element in the same order (no FMA: AVX2 does not imply it, and contraction is off;
# sums keep their accumulators whatever the vector width), so they give the same bits; AVX2
# only does four elements per instruction instead of two. TB_BASELINE_ONLY builds the baseline
# alone (the tests compare the two).
_DISPATCH = r"""
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(TB_BASELINE_ONLY)
__attribute__((target("avx2"))) static int @NAME@_avx2(void *ctx, const double *restrict q,
        double *restrict logp, double *restrict grad) {
    return @NAME@_body(ctx, q, logp, grad);
}
#define TB_DISPATCH_@NAME@ 1
#endif
int @NAME@(void *ctx, const double *restrict q, double *restrict logp, double *restrict grad) {
#ifdef TB_DISPATCH_@NAME@
    if (__builtin_cpu_supports("avx2")) return @NAME@_avx2(ctx, q, logp, grad);
#endif
    return @NAME@_body(ctx, q, logp, grad);
}
"""

_UNARY_F = {
    "neg": "(-{0})", "abs": "fabs({0})", "sign": "tb_sign({0})", "exp": "exp({0})",
    "log": "log({0})", "log1p": "log1p({0})", "expm1": "expm1({0})", "sqrt": "sqrt({0})",
    "square": "({0} * {0})", "reciprocal": "(1.0 / {0})", "rsqrt": "(1.0 / sqrt({0}))",
    "tanh": "tanh({0})", "sin": "sin({0})", "cos": "cos({0})", "tan": "tan({0})",
    "arcsin": "asin({0})", "arccos": "acos({0})", "arctan": "atan({0})",
    "arcsinh": "asinh({0})", "arccosh": "acosh({0})", "arctanh": "atanh({0})",
    "round": "nearbyint({0})", "floor": "floor({0})", "ceil": "ceil({0})",
    "erf": "erf({0})", "erfc": "erfc({0})", "lgamma": "tb_lgamma({0})",
    "digamma": "tb_digamma({0})",
    "softplus": "tb_logaddexp(0.0, {0})",
}
# in loops of _VECTOR_MIN elements or more: tb_vmath.h's functions, which vectorise (one at a
# time, in a loop too short to vectorise or a reduction, libm's are faster)
_VECTOR_F = {"exp": "tb_vexp({0})", "log": "tb_vlog({0})", "log1p": "tb_vlog1p({0})",
             "softplus": "tb_vlogaddexp(0.0, {0})"}
_VECTOR_MIN = 16
_BINARY_F = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
    "pow": "pow({0}, {1})", "maximum": "tb_max({0}, {1})", "minimum": "tb_min({0}, {1})",
    "floordiv": "tb_floordiv({0}, {1})", "mod": "tb_mod({0}, {1})",
}
_COMPARE = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
            "greater_equal": ">="}
_ELEMENTWISE = frozenset((*_UNARY_F, *_BINARY_F, *_COMPARE, "logical_and", "logical_or",
                          "logical_not", "isnan", "isfinite", "sigmoid", "polygamma", "where",
                          "clip", "cast", "broadcast_to"))
# full sums of loops at least this long are taken after the loop, in _LANES accumulators
_SPLIT_SUM = 64
_LANES = 4
_NOT_YET = {
    "argmax": "index results are not lowered yet", "argmin": "index results are not lowered yet",
    "one_hot": "not lowered yet",
    # a model using these samples with the interpreted sampler
    "solve": "the general solve is not lowered yet", "eigh": "not lowered yet",
}


def lower(recording: Any, *, name: str = "tb_ldg") -> LoweredFunction:
    """C source for the recording of a function of one float64 vector ``q [n]`` returning
    ``(logp [], grad [n])`` (``value_and_grad`` of a log density), as :class:`LoweredFunction`.

    ``name`` is a prefix: the C function is ``name`` plus a hash of the source, so that modules
    loaded side by side never share a symbol. Raises :class:`LoweringError`.
    """
    gen = _Generator(recording, _C)
    body = gen.generate()
    placeholder = "TB_FUNCTION_NAME"
    source = _PRELUDE + body.replace("@NAME@", placeholder)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    fname = f"{name}_{digest}"
    source = source.replace(placeholder, fname)
    cdef = f"int {fname}(void *ctx, const double *q, double *logp, double *grad);"
    return LoweredFunction(fname, source, cdef, tuple(gen.const_arrays), gen.ws_bytes, gen.n,
                           len(gen.steps))


def lower_js(recording: Any, *, name: str = "tb_ldg") -> LoweredJs:
    """JavaScript source for the same recording as :func:`lower` (the same program, steps,
    fusion and summation order; issue 15): a factory ``makeDensity(C, TB)`` returning
    ``density(q, logp, grad) -> status`` over Float64Arrays, as :class:`LoweredJs`. It needs
    no NumPy, so Pyodide lowers the programs its ``python`` backend stages. Raises
    :class:`LoweringError`."""
    gen = _Generator(recording, _JS)
    source = gen.generate()
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    return LoweredJs(f"{name}_{digest}", source, tuple(gen.const_arrays), gen.ws_bytes // 8,
                     gen.n, len(gen.steps))


@dataclass(frozen=True)
class JsConstant:
    """A constant of a JavaScript density: ``dtype`` (float64 -> Float64Array, int64/int32
    -> Int32Array of positions, bool -> Uint8Array) and its row-major ``values``."""

    dtype: str
    values: list[Any]


@dataclass(frozen=True)
class LoweredJs:
    """JavaScript source of ``function makeDensity(C, TB)`` (see :func:`lower_js`).

    ``constants``: what ``C[k]`` must hold, in order; ``workspace``: float64 elements of the
    workspace the factory allocates; ``n``: the length of ``q`` and ``grad``."""

    name: str
    source: str
    constants: tuple[JsConstant, ...]
    workspace: int
    n: int
    steps: int


def _shape_dtype(raw: Any) -> tuple[tuple[int, ...], str]:
    """Shape and dtype name of a constant: a NumPy or pure array, or a Python scalar."""
    if isinstance(raw, bool):
        return (), "bool"
    if isinstance(raw, int):
        return (), "int64"
    if isinstance(raw, float):
        return (), "float64"
    return tuple(int(d) for d in raw.shape), str(raw.dtype.name if hasattr(raw.dtype, "name")
                                                 else raw.dtype)


def _flat_values(raw: Any) -> list[Any]:
    """Row-major values of a constant or of index positions (NumPy, pure array, list)."""
    if isinstance(raw, bool | int | float):
        return [raw]
    if isinstance(raw, list):
        return raw
    data = getattr(raw, "_data", None)  # python_arrays.ndarray: already flat, row-major
    if isinstance(data, list):
        return data
    return raw.ravel().tolist()


def _consecutive(pos: list[int]) -> bool:
    return all(b - a == 1 for a, b in itertools.pairwise(pos))


def _broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise LoweringError(f"matmul: batch shapes {list(a)} and {list(b)} do not broadcast")
        out.append(x if y == 1 else y)
    return tuple(out)


def _convert(v: str, src: str, dst: str, d: _CDialect) -> str:
    """Operand ``v`` of dtype ``src`` as ``dst`` (unchanged when they are the same)."""
    return v if src == dst else d.cast(v, dst)


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _squeeze(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


def _strides(shape: tuple[int, ...]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= int(d)
    return out[::-1]


def _literal(v: float) -> str:
    """A float64 as an exact C literal."""
    v = float(v)
    if v != v:
        return "NAN"
    if v in (float("inf"), float("-inf")):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    return f"({v.hex()})"


class _CDialect:
    """What the generated text says in C. The generator writes C-shaped code (loops, blocks,
    expressions, calls of the prelude's ``tb_*`` functions); a dialect supplies the parts that
    differ between C and JavaScript: declarations, casts, literals, pointers and buffers."""

    name = "c"
    int_var = "long"  # loop counters
    float_var = "double"  # accumulators
    vector = True  # tb_vmath.h's vectorisable exp/log/log1p in long loops

    def const(self, dtype: str) -> str:
        return f"const {_CTYPE[dtype]}"

    def var(self, dtype: str) -> str:
        """The type of a mutable local of ``dtype``."""
        return _CTYPE[dtype]

    def cast(self, v: str, dtype: str) -> str:
        return f"({_CTYPE[dtype]}){v}"

    def literal(self, v: float) -> str:
        return _literal(v)

    def elem_bytes(self, dtype: str) -> int:
        return 1 if dtype == "bool" else 8

    def const_decl(self, k: int, dtype: str) -> str:
        return f"    const {_CTYPE[dtype]} *restrict c{k} = (const {_CTYPE[dtype]} *)cx->c[{k}];"

    def ws_decl(self, buf: str, dtype: str, offset: int) -> str:
        # no restrict: a block is reused by later values, through other pointers
        return f"    {_CTYPE[dtype]} *{buf} = ({_CTYPE[dtype]} *)(cx->ws + {offset});"

    def ptr(self, buf: str, off: str) -> str:
        """An argument pointing at element ``off`` of ``buf`` (one argument in C)."""
        return f"{buf} + {off}"

    def zero(self, buf: str, size: int) -> str:
        return f"memset({buf}, 0, {size} * sizeof(double));"

    def scratch(self, gen: _Generator, name: str, n: int) -> str:
        """A float64 array of ``n`` local to one kernel's loop: declared where it is used."""
        return f"double {name}[{n}];"

    def function(self, gen: _Generator, body: list[str]) -> str:
        head = ["TB_BODY int @NAME@_body(void *ctx, const double *restrict q,",
                "         double *restrict logp, double *restrict grad) {",
                "    const tb_ctx *cx = (const tb_ctx *)ctx;",
                "    int status = 0;"]
        return "\n".join(head + gen.buffers + body + ["}", _DISPATCH])

    def store_logp(self, value: str) -> str:
        return f"    *logp = {value};"


class _JsDialect(_CDialect):
    """JavaScript over Float64Arrays (exact float64; V8 compiles it). The function is made by
    a factory, ``makeDensity(C, TB)``, given the constants ``C`` (typed arrays) and the
    prelude ``TB`` (``tb_prelude.js``); the workspace is one Float64Array allocated there, and
    every value lives in it as a float64 (bool as 0/1, integers exactly: only positions and
    flags, far below 2**53). Names the C code calls (``exp``, ``tb_max``, ``NAN``...) are bound
    once in the factory, so the expressions are the C lowering's own text."""

    name = "js"
    int_var = "let"
    float_var = "let"
    vector = False  # Math.exp and friends: V8 has no vectorised variants to choose

    def const(self, dtype: str) -> str:
        return "const"

    def var(self, dtype: str) -> str:
        return "let"

    def cast(self, v: str, dtype: str) -> str:
        if dtype == "float64":
            return f"(+{v})"  # a bool (true/false) as 1/0
        if dtype == "bool":
            return f"({v} != 0)"
        return f"Math.trunc({v})"  # C's conversion of a double to an integer

    def literal(self, v: float) -> str:
        v = float(v)
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return "Infinity" if v > 0 else "(-Infinity)"
        return f"({v!r})"  # the shortest repr reads back as the same double in JavaScript

    def elem_bytes(self, dtype: str) -> int:
        return 8

    def const_decl(self, k: int, dtype: str) -> str:
        return f"  const c{k} = C[{k}];"

    def ws_decl(self, buf: str, dtype: str, offset: int) -> str:
        return f"  const {buf} = W.subarray({offset // 8});"

    def ptr(self, buf: str, off: str) -> str:
        return f"{buf}, {off}"

    def zero(self, buf: str, size: int) -> str:
        return f"{buf}.fill(0, 0, {size});"

    def scratch(self, gen: _Generator, name: str, n: int) -> str:
        gen.buffers.append(f"  const {name} = new Float64Array({n});")
        return ""

    def function(self, gen: _Generator, body: list[str]) -> str:
        head = ["function makeDensity(C, TB) {",
                '  "use strict";',
                *_JS_NAMES,
                f"  const W = new Float64Array({max(gen.ws_bytes // 8, 1)});"]
        return "\n".join(head + gen.buffers + [
            "  return function density(q, logp, grad) {",
            "    let status = 0;",
            *[f"  {x}" for x in body],
            "  };",
            "}"]) + "\n"

    def store_logp(self, value: str) -> str:
        return f"    logp[0] = {value};"


# the C names the generated expressions call, bound once per density in JavaScript
_JS_NAMES = (
    "  const exp = Math.exp, log = Math.log, log1p = Math.log1p, expm1 = Math.expm1;",
    "  const sqrt = Math.sqrt, tanh = Math.tanh, sin = Math.sin, cos = Math.cos;",
    "  const tan = Math.tan, floor = Math.floor, ceil = Math.ceil, fabs = Math.abs;",
    "  const asin = Math.asin, acos = Math.acos, atan = Math.atan, asinh = Math.asinh;",
    "  const acosh = Math.acosh, atanh = Math.atanh;",
    "  const isnan = Number.isNaN, isfinite = Number.isFinite;",
    # C's pow (1 ** NaN is 1, where Math.pow gives NaN)
    "  const pow = TB.pow;",
    "  const NAN = NaN, INFINITY = Infinity;",
    "  const nearbyint = TB.nearbyint, erf = TB.erf, erfc = TB.erfc;",
    "  const tb_max = TB.max, tb_min = TB.min, tb_clip = TB.clip, tb_sign = TB.sign;",
    "  const tb_logaddexp = TB.logaddexp, tb_expit = TB.expit, tb_expit_np = TB.expitNp;",
    "  const tb_floordiv = TB.floordiv, tb_mod = TB.mod;",
    "  const tb_lgamma = TB.lgamma, tb_digamma = TB.digamma, tb_trigamma = TB.trigamma;",
    "  const tb_tetragamma = TB.tetragamma;",
    "  const tb_cholesky = TB.cholesky, tb_trisolve = TB.trisolve;",
)
_C = _CDialect()
_JS = _JsDialect()


class _Generator:
    def __init__(self, rec: Any, dialect: _CDialect | None = None) -> None:
        self.rec = rec
        self.d = dialect or _C
        self.meta: dict[int, tuple[tuple[int, ...], str]] = {}
        self.consts: dict[int, Any] = {}
        self.steps: list[tuple[str, tuple[int, ...], dict[str, Any], int]] = []
        self.const_arrays: list[Any] = []
        self.ws_bytes = 0
        self.blocks: dict[str, tuple[int, int]] = {}  # workspace buffer -> (offset, bytes)
        self.last: dict[str, int] = {}  # live buffer -> the last step that reads it
        self.free: list[tuple[int, int]] = []  # blocks no live value uses
        self.storage: dict[int, tuple[str, int]] = {}  # slot -> (C buffer, element offset)
        self.buffers: list[str] = []  # declarations
        self.lines: list[str] = []
        self.n = 0
        self._fold()

    # -- the program: folding, common subexpressions, dead code --------------------------------
    def _fold(self) -> None:
        rec = self.rec
        if len(rec.in_slots) != 1:
            raise LoweringError(f"expected one input (the free state), got {len(rec.in_slots)}")
        (inp,) = rec.in_slots
        shape, dtype = rec.meta[inp]
        if dtype != "float64" or len(shape) != 1:
            raise LoweringError(f"input: expected a float64 vector, got {dtype}{list(shape)}")
        self.n = int(shape[0])
        self.input = inp
        consts = dict(rec.consts)  # raw values: folded steps see what staging's kernels see
        alias: dict[int, int] = {}
        seen: dict[Any, int] = {}
        live = []
        for name, kernel, refs, params, out in rec.steps:
            refs = tuple(alias.get(r, r) for r in refs)
            if all(r in consts for r in refs):  # fixed at trace time: computed here, once
                consts[out] = kernel(*[consts[r] for r in refs], **params)
                continue
            try:
                key = (name, refs, tuple(sorted(params.items())))
                hash(key)
            except TypeError:
                key = None
            if key is not None and key in seen:
                alias[out] = seen[key]
                continue
            if key is not None:
                seen[key] = out
            live.append((name, refs, params, out))
        items = []
        for kind, v in rec.out_items:
            if kind != "slot":
                raise LoweringError(f"output: a non-tensor output {v!r} is not lowered")
            items.append(alias.get(v, v))
        if len(items) != 2:
            raise LoweringError(f"expected outputs (logp, grad), got {len(items)} outputs")
        needed = set(items)
        kept = []
        for step in reversed(live):
            if step[3] in needed:
                kept.append(step)
                needed.update(step[1])
        self.steps = kept[::-1]
        self.outputs = items
        for s in needed:
            if s in consts:
                self.consts[s] = consts[s]
                cshape, cdtype = _shape_dtype(consts[s])
                if cdtype not in _CTYPE:
                    raise LoweringError(f"constant: dtype {cdtype} is not lowered (float64, "
                                        f"int64, int32, bool)")
                self.meta[s] = (cshape, cdtype)
        self.meta[inp] = (tuple(shape), dtype)
        for name, _refs, _params, out in self.steps:
            oshape, odtype = rec.meta[out]
            if odtype not in _CTYPE:
                raise LoweringError(f"{name}: result dtype {odtype} is not lowered "
                                    f"(float64, int64, int32, bool)")
            self.meta[out] = (tuple(oshape), odtype)
        for i, (want, s) in enumerate(zip(((), (self.n,)), items)):
            if self.meta[s] != (want, "float64"):
                raise LoweringError(f"output {i}: expected float64{list(want)}, got "
                                    f"{self.meta[s][1]}{list(self.meta[s][0])}")

    # -- storage -----------------------------------------------------------------------------
    def _ref(self, slot: int) -> tuple[str, int]:
        st = self.storage.get(slot)
        if st is not None:
            return st
        if slot == self.input:
            st = ("q", 0)
        elif slot in self.consts:
            k = len(self.const_arrays)
            dtype = self.meta[slot][1]
            self.const_arrays.append(self._constant(self.consts[slot], dtype))
            self.buffers.append(self.d.const_decl(k, dtype))
            st = (f"c{k}", 0)
        else:
            raise AssertionError(f"slot {slot} read before it is computed")
        self.storage[slot] = st
        return st

    def _alloc(self, slot: int) -> tuple[str, int]:
        """Workspace for ``slot``: a block no live value uses (best fit), else a new one."""
        shape, dtype = self.meta[slot]
        nbytes = (max(_size(shape), 1) * self.d.elem_bytes(dtype) + 7) // 8 * 8
        fits = [b for b in self.free if b[1] >= nbytes]
        if fits:
            block = min(fits, key=lambda b: b[1])
            self.free.remove(block)
        else:
            block = (self.ws_bytes, nbytes)
            self.ws_bytes += nbytes
        buf = f"w{slot}"
        self.buffers.append(self.d.ws_decl(buf, dtype, block[0]))
        self.blocks[buf] = block
        self.storage[slot] = (buf, 0)
        self._keep(slot)
        return self.storage[slot]

    def _keep(self, slot: int) -> None:
        """Note that ``slot`` lives in its buffer until its last reader (aliases extend it)."""
        buf = self.storage[slot][0]
        if buf in self.blocks:
            last = max(self.uses.get(slot, [0]))
            self.last[buf] = max(self.last.get(buf, 0), last)

    def _release(self, before: int) -> None:
        """Free the blocks of the values no step from ``before`` on reads."""
        for buf, last in list(self.last.items()):
            if last < before:
                self.free.append(self.blocks[buf])
                del self.last[buf]

    def _at(self, slot: int, index: str) -> str:
        buf, off = self._ref(slot)
        return f"{buf}[{off} + {index}]" if off else f"{buf}[{index}]"

    # -- code ----------------------------------------------------------------------------------
    def generate(self) -> str:
        uses: dict[int, list[int]] = {}
        for i, (_n, refs, _p, _o) in enumerate(self.steps):
            for r in refs:
                uses.setdefault(r, []).append(i)
        for s in self.outputs:
            uses.setdefault(s, []).append(len(self.steps))
        self.uses = uses
        done: set[int] = set()  # steps already emitted inside an earlier loop
        i = 0
        while i < len(self.steps):
            if i in done:
                i += 1
                continue
            name, refs, params, out = self.steps[i]
            if name in _ELEMENTWISE:
                j = i
                shape = self.meta[out][0]
                while (j + 1 < len(self.steps) and j + 1 not in done
                       and self._fusable(self.steps[j + 1], shape)):
                    j += 1
                # full sums of the loop's values, wherever they come later: they read nothing
                # else, so they can be accumulated in this loop
                members = {self.steps[k][3] for k in range(i, j + 1)}
                totals = [k for k in range(j + 1, len(self.steps))
                          if k not in done and self._full_sum(self.steps[k], members, shape)]
                done.update(totals)
                self._release(i)
                self._fused(i, j, totals)
                i = j + 1
                continue
            self._release(i)
            self._emit(name, refs, params, out)
            i += 1
        body = list(self.lines)
        lp, g = self.outputs
        body.append(self.d.store_logp(self._at(lp, '0')))
        body.append(f"    for ({self.d.int_var} i = 0; i < {self.n}; i++) "
                    f"grad[i] = {self._at(g, 'i')};")
        body.append("    return status;")
        return self.d.function(self, body)

    def _constant(self, raw: Any, dtype: str) -> Any:
        """A constant as ctx holds it: a C-contiguous NumPy array for C, ``(dtype, flat
        values)`` for JavaScript (the host makes the typed array)."""
        if self.d is _C:
            # the NumPy dtype of the same name ("bool" is NumPy's np.bool_)
            if isinstance(raw, list):  # index positions
                return np.ascontiguousarray(raw, dtype=dtype)
            return np.ascontiguousarray(_flat_values(raw) if hasattr(raw, "_data") else raw,
                                        dtype=dtype).reshape(_shape_dtype(raw)[0])
        return JsConstant(dtype, _flat_values(raw))

    def _fusable(self, step: Any, shape: tuple[int, ...]) -> bool:
        """Whether an elementwise ``step`` can join a loop over ``shape``: the same shape, or
        the same elements in the same order (shapes equal but for 1s) with operands that are
        read element by element or are single values."""
        name, refs, _params, out = step
        if name not in _ELEMENTWISE:
            return False
        oshape = self.meta[out][0]
        if oshape == shape:
            return True
        if _squeeze(oshape) != _squeeze(shape):
            return False
        return all(_size(self.meta[r][0]) == 1 or _squeeze(self.meta[r][0]) == _squeeze(shape)
                   for r in refs)

    def _full_sum(self, step: Any, members: set[int], shape: tuple[int, ...]) -> bool:
        name, refs, params, out = step
        if name != "sum" or self.meta[out][1] != "float64" or refs[0] not in members:
            return False
        sshape, sdtype = self.meta[refs[0]]
        return (sdtype == "float64" and _squeeze(sshape) == _squeeze(shape)
                and sorted(params["axis"]) == list(range(len(sshape))))

    def _operand(self, slot: int, shape: tuple[int, ...], local: dict[int, str],
                 flat: str, idx: list[str]) -> tuple[str, str]:
        """(C expression, dtype) of ``slot`` read at the current element of a loop over
        ``shape`` (flat counter ``flat``, index variables ``idx``), broadcasting it."""
        if slot in local:
            return local[slot], self.meta[slot][1]
        oshape, dtype = self.meta[slot]
        if _size(oshape) == 1:
            return self._at(slot, "0"), dtype
        if oshape == shape or _squeeze(oshape) == _squeeze(shape):
            return self._at(slot, flat), dtype  # the same elements in the same order
        nd = len(shape)
        full = (1,) * (nd - len(oshape)) + tuple(oshape)
        st = _strides(full)
        terms = [f"{idx[k]} * {st[k]}" if st[k] != 1 else idx[k]
                 for k in range(nd) if full[k] != 1]
        return self._at(slot, " + ".join(terms)), dtype

    def _needs_nd(self, group: list[Any], shape: tuple[int, ...]) -> bool:
        for _n, refs, _p, _o in group:
            for r in refs:
                s = self.meta[r][0]
                if _squeeze(s) != _squeeze(shape) and _size(s) != 1:
                    return True
        return False

    def _fused(self, i: int, j: int, totals: list[int]) -> None:
        """One loop for steps ``i..j`` (elementwise, one shape) and the full sums ``totals``
        (step indices) of their values."""
        group = self.steps[i:j + 1]
        shape = self.meta[group[0][3]][0]
        size = _size(shape)
        inner: list[str] = []
        local: dict[int, str] = {}
        nd = self._needs_nd(group, shape)
        idx = [f"i{k}" for k in range(len(shape))]
        flat = "f"
        summed = set(totals)
        stored = []
        for name, refs, params, out in group:
            args = [self._operand(r, shape, local, flat, idx) for r in refs]
            dtype = self.meta[out][1]
            expr = _elementwise(name, args, dtype, params, self.d,
                                vector=self.d.vector and size >= _VECTOR_MIN)
            tmp = f"t{out}"
            inner.append(f"{self.d.const(dtype)} {tmp} = {expr};")
            local[out] = tmp
            if any(u > j and u not in summed for u in self.uses.get(out, [])):
                stored.append(out)  # read after the loop: kept in the workspace
        # a long loop's sums are taken after it, over its stored values, with _LANES
        # accumulators: a running sum would keep the loop from being vectorised
        split = size >= _SPLIT_SUM
        if split:
            for k in totals:
                ref = self.steps[k][1][0]
                if ref not in stored:
                    stored.append(ref)
        for out in stored:
            self._alloc(out)
            inner.append(f"{self._at(out, flat)} = {local[out]};")
        pre, post = [], []
        for n, k in enumerate(totals):
            _name, refs, _params, out = self.steps[k]
            self._alloc(out)
            if split:
                post += self._sum_lines(refs[0], size, self._at(out, "0"))
                continue
            pre.append(f"{self.d.float_var} acc{n} = 0.0;")
            inner.append(f"acc{n} += {local[refs[0]]};")
            post.append(f"{self._at(out, '0')} = acc{n};")
        out_lines = ["    {"] + [f"        {x}" for x in pre]
        if nd:
            out_lines.append(f"        {self.d.int_var} f = 0;")
            ind = "        "
            for k, d in enumerate(shape):
                out_lines.append(f"{ind}for ({self.d.int_var} {idx[k]} = 0; {idx[k]} < {d}; "
                                 f"{idx[k]}++) {{")
                ind += "    "
            out_lines += [f"{ind}{x}" for x in inner] + [f"{ind}f++;"]
            for _ in shape:
                ind = ind[:-4]
                out_lines.append(f"{ind}}}")
        else:
            out_lines.append(f"        for ({self.d.int_var} f = 0; f < {size}; f++) {{")
            out_lines += [f"            {x}" for x in inner]
            out_lines.append("        }")
        out_lines += [f"        {x}" for x in post] + ["    }"]
        self.lines += out_lines

    def _sum_lines(self, slot: int, size: int, target: str) -> list[str]:
        """``target = sum`` of ``slot``'s ``size`` elements: element f added to accumulator
        f % _LANES in order, the accumulators then added pairwise (the same order on every
        machine; vectorisable without reassociating anything)."""
        acc = [f"s{a}" for a in range(_LANES)]
        whole = size - size % _LANES
        lines = ["{", f"    {self.d.float_var} " + ", ".join(f"{a} = 0.0" for a in acc) + ";",
                 f"    for ({self.d.int_var} f = 0; f < {whole}; f += {_LANES}) {{",
                 *[f"        {a} += {self._at(slot, f'f + {n}')};" for n, a in enumerate(acc)],
                 "    }",
                 *[f"    {acc[n]} += {self._at(slot, str(whole + n))};"
                   for n in range(size - whole)]]
        while len(acc) > 1:
            lines.append(f"    {acc[0]} = " + " + ".join(
                f"({acc[n]} + {acc[n + 1]})" for n in range(0, len(acc), 2)) + ";"
                if len(acc) == 2 else
                "    " + " ".join(f"{acc[n]} += {acc[n + 1]};" for n in range(0, len(acc), 2)))
            acc = acc[::2]
        lines += [f"    {target} = {acc[0]};", "}"]
        return lines

    # -- the other kernels ---------------------------------------------------------------------
    def _emit(self, name: str, refs: tuple[int, ...], params: dict[str, Any], out: int) -> None:
        if name in _NOT_YET:
            raise LoweringError(f"{name}: {_NOT_YET[name]}")
        fn = getattr(self, f"_k_{name}", None)
        if fn is None:
            raise LoweringError(f"{name}: no C lowering for this kernel")
        oshape = self.meta[out][0]
        for r in refs:
            if self.meta[r][1] != "float64" and name not in ("reshape", "gather_flat",
                                                              "concat", "transpose", "max",
                                                              "min", "sum"):
                raise LoweringError(f"{name}: operand dtype {self.meta[r][1]} is not lowered "
                                    f"(float64 only)")
        fn(refs, params, out, oshape)

    def _loop(self, shape: tuple[int, ...], body: list[str], prefix: str = "i") -> list[str]:
        lines, ind = [], "    "
        for k, d in enumerate(shape):
            lines.append(f"{ind}for ({self.d.int_var} {prefix}{k} = 0; {prefix}{k} < {d}; "
                         f"{prefix}{k}++) {{")
            ind += "    "
        lines += [f"{ind}{b}" for b in body]
        for _ in shape:
            ind = ind[:-4]
            lines.append(f"{ind}}}")
        return lines

    def _k_reshape(self, refs: Any, params: Any, out: int, oshape: Any) -> None:
        self.storage[out] = self._ref(refs[0])  # contiguous buffers: the same memory
        self._keep(out)

    def _k_gather_flat(self, refs: Any, params: Any, out: int, oshape: Any) -> None:
        pos = [int(p) for p in _flat_values(params["index"].flat_positions())]
        n = len(pos)
        buf, off = self._ref(refs[0])
        if not params["index"].has_arrays and n and _consecutive(pos):
            # a contiguous slice (structure, not data): the same memory at an offset
            self.storage[out] = (buf, off + pos[0])
            self._keep(out)
            return
        k = self._index_const(pos)
        self._alloc(out)
        self.lines.append(f"    for ({self.d.int_var} i = 0; i < {n}; i++) "
                          f"{self._at(out, 'i')} = {self._at(refs[0], f'c{k}[i]')};")

    def _index_const(self, pos: list[int]) -> int:
        k = len(self.const_arrays)
        self.const_arrays.append(self._constant(pos, "int64"))
        self.buffers.append(self.d.const_decl(k, "int64"))
        return k

    def _k_scatter_add_flat(self, refs: Any, params: Any, out: int, oshape: Any) -> None:
        pos = [int(p) for p in _flat_values(params["index"].flat_positions())]
        n, size = len(pos), _size(oshape)
        self._alloc(out)
        self.lines.append(f"    {self.d.zero(self._ref(out)[0], size)}")
        loop = f"for ({self.d.int_var} i = 0; i < {n}; i++)"
        if not params["index"].has_arrays and n and _consecutive(pos):
            start = pos[0]
            self.lines.append(f"    {loop} {self._at(out, f'{start} + i')} = "
                              f"{self._at(refs[0], 'i')};")
            return
        k = self._index_const(pos)
        self.lines.append(f"    {loop} {self._at(out, f'c{k}[i]')} += {self._at(refs[0], 'i')};")

    def _k_concat(self, refs: Any, params: Any, out: int, oshape: Any) -> None:
        axis = int(params["axis"])
        dtype = self.meta[out][1]
        self._alloc(out)
        outer = _size(oshape[:axis])
        row = _size(oshape[axis:])
        at = 0
        for r in refs:
            if self.meta[r][1] != dtype:
                raise LoweringError(f"concat: operands of dtypes {self.meta[r][1]} and {dtype}")
            inner = _size(self.meta[r][0][axis:])
            if inner:
                self.lines.append(
                    f"    for ({self.d.int_var} o = 0; o < {outer}; o++) "
                    f"for ({self.d.int_var} i = 0; i < {inner}; i++) "
                    f"{self._at(out, f'o * {row} + {at} + i')} = "
                    f"{self._at(r, f'o * {inner} + i')};")
            at += inner

    def _k_cumsum(self, refs: Any, params: Any, out: int, oshape: Any) -> None:
        # sequential, as np.cumsum: the same sums in the same order (from the end if reverse)
        axis = int(params["axis"])
        length = oshape[axis]
        outer, inner = _size(oshape[:axis]), _size(oshape[axis + 1:])
        self._alloc(out)
        k = f"({length - 1} - k)" if params["reverse"] else "k"
        L = self.d.int_var
        ix = f"(o * {length} + {k}) * {inner} + i"
        self.lines += [
            f"    for ({L} o = 0; o < {outer}; o++) for ({L} i = 0; i < {inner}; i++) {{",
            f"        {self.d.float_var} acc = 0.0;",
            f"        for ({L} k = 0; k < {length}; k++) {{",
            f"            acc += {self._at(refs[0], ix)};",
            f"            {self._at(out, ix)} = acc;",
            "        }",
            "    }"]

    def _k_transpose(self, refs: Any, params: Any, out: int, oshape: Any) -> None:
        perm = tuple(int(p) for p in params["perm"])
        ishape = self.meta[refs[0]][0]
        ist = _strides(ishape)
        self._alloc(out)
        src = " + ".join([f"i{k} * {ist[p]}" for k, p in enumerate(perm)] or ["0"])
        ost = _strides(oshape)
        dst = " + ".join([f"i{k} * {ost[k]}" for k in range(len(oshape))] or ["0"])
        self.lines += self._loop(oshape, [f"{self._at(out, dst)} = {self._at(refs[0], src)};"])

    def _k_matmul(self, refs: Any, params: Any, out: int, oshape: Any) -> None:
        # plain C loops, no BLAS yet: the models' products are small
        a, b = refs
        ash, bsh = self.meta[a][0], self.meta[b][0]
        if not ash or not bsh:
            raise LoweringError("matmul: 0-d operands")
        a2 = (1, *ash) if len(ash) == 1 else ash
        b2 = (*bsh, 1) if len(bsh) == 1 else bsh
        m, k, n = a2[-2], a2[-1], b2[-1]
        if b2[-2] != k:
            raise LoweringError(f"matmul: shapes {ash} and {bsh} do not match")
        batch = _broadcast_shapes(a2[:-2], b2[:-2])
        self._alloc(out)

        def offset(sh: tuple[int, ...], mat: int) -> str:
            full = (1,) * (len(batch) - len(sh)) + tuple(sh)
            st = _strides(full)
            terms = [f"b{d} * {st[d] * mat}" for d in range(len(batch)) if full[d] != 1]
            return " + ".join(terms) or "0"

        oa, ob = offset(a2[:-2], m * k), offset(b2[:-2], k * n)
        oo = " + ".join([f"b{d} * {s * m * n}" for d, s in enumerate(_strides(batch))]) or "0"
        # every output is the sum over l in order, as a plain dot product would add it (the
        # same bits in any loop order); the loops are ordered so that independent outputs are
        # accumulated side by side (vectorised, and not one long chain of dependent additions)
        def at_a(ix: str) -> str:
            return self._at(a, f"{oa} + {ix}")

        def at_b(ix: str) -> str:
            return self._at(b, f"{ob} + {ix}")

        def at_o(ix: str) -> str:
            return self._at(out, f"{oo} + {ix}")

        L, F = self.d.int_var, self.d.float_var
        CF = self.d.const("float64")

        if n == 1 and k >= 2 * _LANES:
            # matrix-vector: each row's dot product in _LANES interleaved partial sums (element
            # l to sum l % _LANES, added pairwise at the end, as _sum_lines), which vectorises
            # along the row the same way for every vector width
            acc = [f"s{a}" for a in range(_LANES)]
            whole = k - k % _LANES
            body = [f"for ({L} i = 0; i < {m}; i++) {{",
                    f"    {F} " + ", ".join(f"{x} = 0.0" for x in acc) + ";",
                    f"    for ({L} l = 0; l < {whole}; l += {_LANES}) {{",
                    *[f"        {x} += {at_a(f'i * {k} + l + {r}')} * {at_b(f'l + {r}')};"
                      for r, x in enumerate(acc)],
                    "    }",
                    *[f"    {acc[r]} += {at_a(f'i * {k} + {whole + r}')} * "
                      f"{at_b(str(whole + r))};" for r in range(k - whole)],
                    f"    {at_o('i')} = {_pairwise(acc)};",
                    "}"]
        elif n == 1:  # matrix-vector: R rows at once, each its own accumulator
            R = 4
            rows = m - m % R
            body = [f"for ({L} i = 0; i < {rows}; i += {R}) {{",
                    *[f"    {F} acc{r} = 0.0;" for r in range(R)],
                    f"    for ({L} l = 0; l < {k}; l++) {{",
                    f"        {CF} bl = {at_b('l')};",
                    *[f"        acc{r} += {at_a(f'(i + {r}) * {k} + l')} * bl;" for r in range(R)],
                    "    }",
                    *[f"    {at_o(f'i + {r}')} = acc{r};" for r in range(R)],
                    "}",
                    f"for ({L} i = {rows}; i < {m}; i++) {{",
                    f"    {F} acc = 0.0;",
                    f"    for ({L} l = 0; l < {k}; l++) "
                    f"acc += {at_a(f'i * {k} + l')} * {at_b('l')};",
                    f"    {at_o('i')} = acc;",
                    "}"]
        else:  # row i of the product accumulated along B's rows: independent columns j
            acc = f"acc_{out}"
            body = [f"for ({L} i = 0; i < {m}; i++) {{",
                    f"    {self.d.scratch(self, acc, n)}",
                    f"    for ({L} j = 0; j < {n}; j++) {acc}[j] = 0.0;",
                    f"    for ({L} l = 0; l < {k}; l++) {{",
                    f"        {CF} al = {at_a(f'i * {k} + l')};",
                    f"        for ({L} j = 0; j < {n}; j++) "
                    f"{acc}[j] += al * {at_b(f'l * {n} + j')};",
                    "    }",
                    f"    for ({L} j = 0; j < {n}; j++) {at_o(f'i * {n} + j')} = {acc}[j];",
                    "}"] if n <= 64 else [
                    f"for ({L} i = 0; i < {m}; i++) {{",
                    f"    for ({L} j = 0; j < {n}; j++) {at_o(f'i * {n} + j')} = 0.0;",
                    f"    for ({L} l = 0; l < {k}; l++) {{",
                    f"        {CF} al = {at_a(f'i * {k} + l')};",
                    f"        for ({L} j = 0; j < {n}; j++) {at_o(f'i * {n} + j')} += "
                    f"al * {at_b(f'l * {n} + j')};",
                    "    }",
                    "}"]
        self.lines += self._loop(batch, body, prefix="b")

    def _k_cholesky(self, refs: Any, params: Any, out: int, oshape: Any) -> None:
        n = oshape[-1]
        batch = _size(oshape[:-2])
        self._alloc(out)
        abuf, aoff = self._ref(refs[0])
        obuf, _ = self._ref(out)
        self.lines.append(f"    for ({self.d.int_var} b = 0; b < {batch}; b++) status |= "
                          f"tb_cholesky({self.d.ptr(abuf, f'{aoff} + b * {n * n}')}, "
                          f"{self.d.ptr(obuf, f'b * {n * n}')}, {n});")

    def _k_triangular_solve(self, refs: Any, params: Any, out: int, oshape: Any) -> None:
        a, b = refs
        ash, bsh = self.meta[a][0], self.meta[b][0]
        if len(ash) < 2 or (len(bsh) == 1 and len(ash) != 2) or not bsh:
            raise LoweringError(f"triangular_solve: shapes {ash}, {bsh} are not lowered")
        n = ash[-1]
        m = bsh[-1] if len(bsh) >= 2 else 1
        b2 = tuple(bsh) if len(bsh) >= 2 else (*bsh, 1)
        # batch dimensions broadcast as in the NumPy kernel (np.linalg.solve): one solve each
        batch = _broadcast_shapes(tuple(ash[:-2]), b2[:-2])
        self._alloc(out)
        abuf, aoff = self._ref(a)
        bbuf, boff = self._ref(b)
        obuf, _ = self._ref(out)

        def offset(sh: tuple[int, ...], mat: int) -> str:
            full = (1,) * (len(batch) - len(sh)) + tuple(sh)
            st = _strides(full)
            terms = [f"b{d} * {st[d] * mat}" for d in range(len(batch)) if full[d] != 1]
            return " + ".join(terms) or "0"

        oo = " + ".join([f"b{d} * {s * n * m}" for d, s in enumerate(_strides(batch))]) or "0"
        call = (f"status |= tb_trisolve({self.d.ptr(abuf, f'{aoff} + {offset(ash[:-2], n * n)}')}, "
                f"{self.d.ptr(bbuf, f'{boff} + {offset(b2[:-2], n * m)}')}, "
                f"{self.d.ptr(obuf, oo)}, {n}, {m}, {int(bool(params['lower']))}, "
                f"{int(bool(params['transpose_a']))});")
        self.lines += self._loop(batch, [call], prefix="b")

    def _reduce(self, name: str, refs: Any, params: Any, out: int, oshape: Any) -> None:
        x = refs[0]
        ishape = self.meta[x][0]
        axes = sorted(int(a) for a in params["axis"])
        kept = [d for d in range(len(ishape)) if d not in axes]
        red = _size(tuple(ishape[d] for d in axes))
        if red == 0 and name in ("max", "min"):
            raise LoweringError(f"{name}: a reduction over no elements")
        self._alloc(out)
        ist = _strides(ishape)
        kshape = tuple(ishape[d] for d in kept)
        kst = _strides(kshape)
        o_ix = " + ".join([f"i{k} * {kst[k]}" for k in range(len(kept))] or ["0"])
        base = " + ".join([f"i{k} * {ist[d]}" for k, d in enumerate(kept)] or ["0"])
        rshape = tuple(ishape[d] for d in axes)
        rix = " + ".join([f"r{k} * {ist[d]}" for k, d in enumerate(axes)] or ["0"])
        read = self._at(x, f"{base} + {rix}")
        first = self._at(x, base)

        def inner(stmt: str) -> list[str]:
            return [x[4:] for x in self._loop(rshape, [stmt], prefix="r")]

        F = self.d.float_var
        odtype = self.meta[out][1]
        if odtype != "float64":
            # integer and bool reductions (an "all" is a min of 0/1 flags): exact in either
            # language, no NaN to propagate; sums wrap as NumPy's only beyond int64 in C
            # (JavaScript sums them exactly up to 2**53)
            if name not in ("max", "min", "sum") or self.meta[x][1] != odtype:
                raise LoweringError(f"{name}: {self.meta[x][1]} -> {odtype} is not lowered")
            L = self.d.var(odtype)
            if name == "sum":
                body = [f"{L} acc = 0;", *inner(f"acc += {read};")]
            else:
                cmp = ">" if name == "max" else "<"
                body = [f"{L} acc = {first};",
                        *inner(f"if ({read} {cmp} acc) acc = {read};")]
        elif name == "sum":
            body = [f"{F} acc = 0.0;", *inner(f"acc += {read};")]
        elif name == "prod":
            body = [f"{F} acc = 1.0;", *inner(f"acc *= {read};")]
        elif name in ("max", "min"):
            body = [f"{F} acc = {first};", *inner(f"acc = tb_{name}(acc, {read});")]
        else:  # logsumexp, as the NumPy kernel: shift by a finite max, then log-sum-exp
            body = [f"{F} m = -INFINITY;" if red == 0 else f"{F} m = {first};",
                    *inner(f"m = tb_max(m, {read});"),
                    "if (!isfinite(m)) m = 0.0;",
                    f"{F} acc = 0.0;",
                    *inner(f"acc += exp({read} - m);"),
                    "acc = log(acc) + m;"]
        body.append(f"{self._at(out, o_ix)} = acc;")
        self.lines += self._loop(kshape, ["{", *[f"    {b}" for b in body], "}"])

    def _k_sum(self, *a: Any) -> None:
        self._reduce("sum", *a)

    def _k_prod(self, *a: Any) -> None:
        self._reduce("prod", *a)

    def _k_max(self, *a: Any) -> None:
        self._reduce("max", *a)

    def _k_min(self, *a: Any) -> None:
        self._reduce("min", *a)

    def _k_logsumexp(self, *a: Any) -> None:
        self._reduce("logsumexp", *a)


def _pairwise(terms: list[str]) -> str:
    """``((t0 + t1) + (t2 + t3)) + ...`` as a C expression."""
    while len(terms) > 1:
        terms = [f"({terms[n]} + {terms[n + 1]})" if n + 1 < len(terms) else terms[n]
                 for n in range(0, len(terms), 2)]
    return terms[0]


@functools.cache
def _scipy_expit() -> bool:
    """Whether the backends' sigmoid kernels are SciPy's expit (SciPy importable), or
    exp(-logaddexp(0, -x)) (the NumPy and Python backends make the same choice)."""
    try:
        import scipy.special  # noqa: F401 - optional, as in the backends
    except ImportError:
        return False
    return True


def _sigmoid_template(vector: bool = False) -> str:
    # the kernels' own formula: SciPy's expit when SciPy is there, else logaddexp
    v = "v" if vector else ""
    return f"tb_{v}expit({{0}})" if _scipy_expit() else f"tb_{v}expit_np({{0}})"


def _elementwise(name: str, args: list[tuple[str, str]], dtype: str,
                 params: dict[str, Any], d: _CDialect, vector: bool = False) -> str:
    """One element of an elementwise kernel, as an expression of type ``dtype`` in dialect
    ``d`` (``vector``: in a loop long enough to be vectorised)."""
    vals = [a for a, _ in args]
    kinds = [d for _, d in args]
    if name in _COMPARE:
        return f"({vals[0]} {_COMPARE[name]} {vals[1]})"
    # operands compared with 0, not used as truth values: JavaScript's && returns an operand,
    # and a NaN is true in C (and NumPy) but falsy in JavaScript
    if name == "logical_and":
        return f"({vals[0]} != 0 && {vals[1]} != 0)"
    if name == "logical_or":
        return f"({vals[0]} != 0 || {vals[1]} != 0)"
    if name == "logical_not":
        return f"({vals[0]} == 0)"
    if name == "where":
        return (f"({vals[0]} != 0 ? {_convert(vals[1], kinds[1], dtype, d)} : "
                f"{_convert(vals[2], kinds[2], dtype, d)})")
    if name == "broadcast_to":
        return _convert(vals[0], kinds[0], dtype, d)
    if name == "cast":
        if dtype == "bool":
            return f"({vals[0]} != 0)"
        return _convert(vals[0], kinds[0], dtype, d)
    if name in ("isnan", "isfinite"):
        if kinds[0] != "float64":
            return "1" if name == "isfinite" else "0"
        return f"({name}({vals[0]}) != 0)"
    if name in ("floor", "ceil") and kinds[0] != "float64" and dtype == kinds[0]:
        return vals[0]  # integers are already whole
    if dtype != "float64":
        raise LoweringError(f"{name}: {dtype} arithmetic is not lowered (float64 only)")
    vals = [_convert(v, k, "float64", d) for v, k in zip(vals, kinds)]
    if vector and name in _VECTOR_F:
        return _VECTOR_F[name].format(*vals)
    if name in _UNARY_F:
        return _UNARY_F[name].format(*vals)
    if name in _BINARY_F:
        return _BINARY_F[name].format(*vals)
    if name == "sigmoid":
        return _sigmoid_template(vector).format(*vals)
    if name == "polygamma":
        if params.get("n") not in (0, 1, 2):
            raise LoweringError(f"polygamma: order n={params.get('n')!r} is not lowered (only "
                                f"n=0, digamma, n=1, trigamma, and n=2, tetragamma)")
        return f"tb_{('di', 'tri', 'tetra')[params['n']]}gamma({vals[0]})"
    if name == "clip":
        lo = -float("inf") if params.get("lo") is None else params["lo"]
        hi = float("inf") if params.get("hi") is None else params["hi"]
        if not all(isinstance(v, int | float) for v in (lo, hi)):
            raise LoweringError(f"clip: bounds {lo!r}, {hi!r} are not Python numbers")
        return f"tb_clip({vals[0]}, {d.literal(lo)}, {d.literal(hi)})"
    raise LoweringError(f"{name}: no C lowering for this kernel")
