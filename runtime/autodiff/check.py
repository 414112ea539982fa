"""``check_grads``: compare derivatives with central finite differences, in both modes, to any
order. Directions are random but seeded, so a failure reproduces."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..pytree import tree_flatten, tree_unflatten
from ..random import Generator
from ..tensor import Tensor
from .api import jvp, vjp

__all__ = ["check_grads"]


def _floats(args: Sequence[Any]) -> list[bool]:
    return [isinstance(a, Tensor) and a.dtype.kind == "f" for a in tree_flatten(list(args))[0]]


def _tol(dtype_name: str) -> tuple[float, float, float]:
    # (eps, rtol, atol) for central differences
    return (1e-6, 1e-5, 1e-6) if dtype_name == "float64" else (1e-3, 3e-2, 3e-3)


def _vdot(a: Any, b: Any) -> float:
    la, lb = tree_flatten(a)[0], tree_flatten(b)[0]
    total = 0.0
    for x, y in zip(la, lb):
        if isinstance(x, Tensor) and isinstance(y, Tensor):
            total += float((x.astype("float64") * y.astype("float64")).sum().item())
    return total


def _axpy(alpha: float, dirs: list[Any], args: list[Any], mask: list[bool]) -> list[Any]:
    leaves, td = tree_flatten(list(args))
    out = []
    for x, d, m in zip(leaves, dirs, mask):
        out.append(x + alpha * d if m else x)
    return tree_unflatten(td, out)


def _random_like(leaves: list[Any], mask: list[bool], gen: Any) -> list[Any]:
    return [gen.normal(x.shape, dtype=x.dtype, backend=x.backend) if m else None
            for x, m in zip(leaves, mask)]


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int = 2,
    modes: Sequence[str] = ("fwd", "rev"),
    eps: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    seed: int = 0,
) -> None:
    """Raise AssertionError unless ``f``'s derivatives at ``args`` match finite differences.

    Forward mode: ``jvp(f)(v)`` vs ``(f(x + eps v) - f(x - eps v)) / 2 eps`` for a random ``v``.
    Reverse mode: ``<vjp(u), v>`` vs ``<u, jvp(v)>`` checked the same way. For ``order > 1`` the
    derivative functions themselves are checked recursively. Every floating-point tensor among
    ``args`` (nested structures allowed) is perturbed; others are held fixed.
    """
    gen = Generator(seed)
    args = list(args)
    leaves, _ = tree_flatten(args)
    mask = _floats(args)
    if not any(mask):
        raise ValueError("check_grads: args contain no floating-point tensor to differentiate")
    dname = next(x.dtype.name for x, m in zip(leaves, mask) if m)
    d_eps, d_rtol, d_atol = _tol(dname)
    eps = eps or d_eps
    rtol = rtol or d_rtol
    atol = atol or d_atol

    dirs = _random_like(leaves, mask, gen)
    dirs_tree = tree_unflatten(tree_flatten(args)[1],
                               [d if m else _zero_tangent(x) for x, d, m in zip(leaves, dirs,
                                                                                mask)])
    f_plus = f(*_axpy(eps, dirs, args, mask))
    f_minus = f(*_axpy(-eps, dirs, args, mask))
    fd = _tree_sub_scale(f_plus, f_minus, 1.0 / (2 * eps))

    def jvp_of(*xs: Any) -> Any:
        return jvp(lambda *a: f(*_restore(a, xs, mask)), tuple(_diff_only(xs, mask)),
                   tuple(_diff_only(dirs_tree, mask)))[1]

    _, jv = jvp(lambda *a: f(*_restore(a, args, mask)), tuple(_diff_only(args, mask)),
                tuple(_diff_only(dirs_tree, mask)))
    if "fwd" in modes:
        _assert_close(jv, fd, rtol, atol, f"forward mode (jvp) of {_fname(f)}")
    if "rev" in modes:
        out, fn = vjp(lambda *a: f(*_restore(a, args, mask)), *_diff_only(args, mask))
        out_leaves, out_def = tree_flatten(out)
        u = tree_unflatten(out_def, [gen.normal(o.shape, dtype=o.dtype, backend=o.backend)
                                     for o in out_leaves])
        vj = fn(u)
        lhs = _vdot(list(vj), _diff_only(dirs_tree, mask))
        rhs = _vdot(u, fd)
        if not abs(lhs - rhs) <= atol * 10 + rtol * max(abs(lhs), abs(rhs)):
            raise AssertionError(
                f"reverse mode (vjp) of {_fname(f)}: <vjp(u), v> = {lhs!r} but finite "
                f"differences give <u, J v> = {rhs!r}"
            )
    if order > 1:
        if "fwd" in modes:
            check_grads(jvp_of, args, order - 1, ("fwd",) if "rev" not in modes else modes,
                        eps, rtol, atol, seed + 1)
        if "rev" in modes:

            def vjp_of(*xs: Any) -> Any:
                o, fn2 = vjp(lambda *a: f(*_restore(a, xs, mask)), *_diff_only(xs, mask))
                ol, od = tree_flatten(o)
                uu = tree_unflatten(od, [_fixed_like(x, seed + 7) for x in ol])
                return fn2(uu)

            check_grads(vjp_of, args, order - 1, modes, eps, rtol, atol, seed + 2)


def _fixed_like(x: Any, seed: int) -> Any:
    return Generator(seed).normal(x.shape, dtype=x.dtype, backend=x.backend)


def _zero_tangent(x: Any) -> Any:
    return x


def _diff_only(args: Sequence[Any], mask: list[bool]) -> list[Any]:
    """The differentiable leaves of ``args`` in order."""
    leaves, _ = tree_flatten(list(args))
    return [x for x, m in zip(leaves, mask) if m]


def _restore(diff: Sequence[Any], args: Sequence[Any], mask: list[bool]) -> list[Any]:
    """Rebuild the full argument list, putting ``diff`` back in the differentiable slots."""
    leaves, td = tree_flatten(list(args))
    it = iter(diff)
    return tree_unflatten(td, [next(it) if m else x for x, m in zip(leaves, mask)])


def _tree_sub_scale(a: Any, b: Any, scale: float) -> Any:
    la, td = tree_flatten(a)
    lb, _ = tree_flatten(b)
    return tree_unflatten(td, [(x - y) * scale for x, y in zip(la, lb)])


def _assert_close(got: Any, want: Any, rtol: float, atol: float, what: str) -> None:
    import numpy as np

    lg, _ = tree_flatten(got)
    lw, _ = tree_flatten(want)
    for k, (g, w) in enumerate(zip(lg, lw)):
        gv = np.asarray(g.numpy() if isinstance(g, Tensor) else g, dtype=np.float64)
        wv = np.asarray(w.numpy() if isinstance(w, Tensor) else w, dtype=np.float64)
        if gv.shape != wv.shape:
            raise AssertionError(f"{what}: output {k} has shape {gv.shape}, expected {wv.shape}")
        if not np.allclose(gv, wv, rtol=rtol, atol=atol, equal_nan=True):
            err = np.max(np.abs(gv - wv))
            raise AssertionError(
                f"{what}: output {k} differs from finite differences by up to {err:.3g}\n"
                f"  derivative: {gv.ravel()[:6]}\n  finite diff: {wv.ravel()[:6]}"
            )


def _fname(f: Callable[..., Any]) -> str:
    return getattr(f, "__name__", repr(f))
