"""Linear algebra: batched matmul, Cholesky, triangular solves, triangle masks.

Gradients: matmul's are the usual ``g @ b^T`` and ``a^T @ g`` (summed over broadcast batch
dimensions); Cholesky's follow Murray (2016), "Differentiation of the Cholesky decomposition";
the triangular solve's come from ``x = A^{-1} b``: ``b_bar = A^{-T} g`` and
``A_bar = -b_bar x^T`` restricted to the triangle that is read (the general solve's likewise,
unrestricted). The symmetric eigendecomposition ``A = V diag(w) V^T``: from
``dw = diag(V^T dA V)`` and ``dV = V (F o (V^T dA V))`` with ``F_ij = 1 / (w_j - w_i)``
(``i != j``, 0 on the diagonal), ``A_bar = V (diag(w_bar) + F o (V^T V_bar)) V^T``, symmetrised
(defined for distinct eigenvalues).
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as D
from ..autodiff.core import bind
from ..errors import ShapeError
from ..tensor import Tensor
from .arguments import check_same_backend
from .arithmetic import where
from .creation import arange, as_tensor
from .elementwise import cast
from .kernel_impls import nary_primitive, unary_primitive
from .shape import (
    broadcast_shapes,
    broadcast_to,
    expand_dims,
    reshape,
    squeeze,
    swapaxes,
    unbroadcast,
)

__all__ = ["cholesky", "eigh", "matmul", "solve", "tril", "triangular_solve", "triu"]


def _mT(x: Any) -> Any:
    return swapaxes(x, -1, -2)


def _matmul_vjp_a(g: Any, ans: Any, a: Any, b: Any) -> Any:
    if a.ndim == 1:  # (n,) @ (..., n, k): g is (..., k) -> b g
        ga = matmul(b, g) if g.ndim == 1 else squeeze(matmul(b, expand_dims(g, -1)), -1)
        return unbroadcast(ga, a.shape)
    if b.ndim == 1:  # (..., m, n) @ (n,): g is (..., m) -> outer(g, b)
        return unbroadcast(matmul(expand_dims(g, -1), expand_dims(b, 0)), a.shape)
    return unbroadcast(matmul(g, _mT(b)), a.shape)


def _matmul_vjp_b(g: Any, ans: Any, a: Any, b: Any) -> Any:
    if b.ndim == 1:  # (..., m, n) @ (n,): g is (..., m) -> a^T g
        gb = matmul(g, a) if g.ndim == 1 else squeeze(matmul(expand_dims(g, -2), a), -2)
        return unbroadcast(gb, b.shape)
    if a.ndim == 1:  # (n,) @ (..., n, k): g is (..., k) -> outer(a, g)
        return unbroadcast(matmul(expand_dims(a, -1), expand_dims(g, -2)), b.shape)
    return unbroadcast(matmul(_mT(a), g), b.shape)


_matmul = nary_primitive("matmul")
_matmul.defvjp(_matmul_vjp_a, _matmul_vjp_b)
_matmul.defjvp(lambda t, ans, a, b: matmul(t, b), lambda t, ans, a, b: matmul(a, t))


def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product with NumPy semantics: 1-d operands are vectors, leading dims batch."""
    if not isinstance(a, Tensor):
        a = as_tensor(a, "a", like=b if isinstance(b, Tensor) else None)
    if not isinstance(b, Tensor):
        b = as_tensor(b, "b", like=a)
    if a.backend is not b.backend:
        check_same_backend("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(
            f"matmul: operands must have at least one dimension, got shapes {list(a.shape)} "
            f"and {list(b.shape)} (use * for scalars)"
        )
    if a.dtype is not b.dtype:
        dt = D.promote(a.dtype, b.dtype)
        a, b = cast(a, dt), cast(b, dt)
    if a.dtype is D.bool_:
        a, b = cast(a, D.int32), cast(b, D.int32)
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if k_a != k_b:
        raise ShapeError(
            f"matmul: inner dimensions differ: a has shape {list(a.shape)} "
            f"(columns {k_a}), b has shape {list(b.shape)} (rows {k_b})"
        )
    if a.ndim > 2 or b.ndim > 2:
        try:
            broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ShapeError:
            raise ShapeError(
                f"matmul: batch dimensions {list(a.shape[:-2])} and {list(b.shape[:-2])} "
                f"cannot be broadcast"
            ) from None
    if a.ndim == 1 and b.ndim == 1:  # inner product: keep kernels on matrices
        return squeeze(bind(_matmul, (expand_dims(a, 0), b), {}), -1)
    return bind(_matmul, (a, b), {})


# -- triangle masks -----------------------------------------------------------------------------
def _band(x: Tensor, lower: bool, k: int) -> Tensor:
    n, m = x.shape[-2], x.shape[-1]
    rows = reshape(arange(n, backend=x.backend), (n, 1))
    cols = reshape(arange(m, backend=x.backend), (1, m))
    return (cols - rows <= k) if lower else (cols - rows >= k)


def tril(x: Any, k: int = 0) -> Tensor:
    """Lower triangle (elements above the k-th diagonal set to zero)."""
    x = as_tensor(x, "x")
    return where(_band(x, True, k), x, 0)


def triu(x: Any, k: int = 0) -> Tensor:
    """Upper triangle (elements below the k-th diagonal set to zero)."""
    x = as_tensor(x, "x")
    return where(_band(x, False, k), x, 0)


def _phi(x: Any) -> Any:
    """Lower triangle with the diagonal halved."""
    return tril(x) - 0.5 * where(_band(x, True, 0) & _band(x, False, 0), x, 0)


# -- Cholesky -----------------------------------------------------------------------------------
def _cholesky_vjp(g: Any, L: Any, a: Any) -> Any:
    # S = L^{-T} Phi(L^T g) L^{-1}, symmetrised (the input is read as a symmetric matrix)
    P = _phi(matmul(_mT(L), g))
    tmp = triangular_solve(L, P, lower=True, transpose_a=True)  # L^{-T} P
    S = _mT(triangular_solve(L, _mT(tmp), lower=True, transpose_a=True))  # (L^{-T} tmp^T)^T
    return 0.5 * (S + _mT(S))


def _cholesky_jvp(t: Any, L: Any, a: Any) -> Any:
    # dL = L Phi(L^{-1} dA L^{-T})
    tmp = triangular_solve(L, t, lower=True)
    inner = _mT(triangular_solve(L, _mT(tmp), lower=True))
    return matmul(L, _phi(inner))


_cholesky = unary_primitive("cholesky")
_cholesky.defvjp(_cholesky_vjp).defjvp(_cholesky_jvp)


def cholesky(a: Any) -> Tensor:
    """Lower Cholesky factor of symmetric positive definite matrices (batched over leading
    dims). Only the lower triangle of ``a`` is read; gradients treat ``a`` as symmetric."""
    a = as_tensor(a, "a")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"cholesky: a must be square matrices [..., n, n], got {list(a.shape)}")
    if a.dtype.kind != "f":
        a = cast(a, D.float32)
    return bind(_cholesky, (a,), {})


# -- triangular solve ---------------------------------------------------------------------------
def _ts_vjp_b(g: Any, x: Any, a: Any, b: Any, *, lower: bool, transpose_a: bool) -> Any:
    return triangular_solve(a, g, lower=lower, transpose_a=not transpose_a)


def _ts_vjp_a(g: Any, x: Any, a: Any, b: Any, *, lower: bool, transpose_a: bool) -> Any:
    bbar = triangular_solve(a, g, lower=lower, transpose_a=not transpose_a)
    abar = -matmul(x, _mT(bbar)) if transpose_a else -matmul(bbar, _mT(x))
    return tril(abar) if lower else triu(abar)


def _ts_jvp_a(t: Any, x: Any, a: Any, b: Any, *, lower: bool, transpose_a: bool) -> Any:
    t = tril(t) if lower else triu(t)
    op_t = _mT(t) if transpose_a else t
    return -triangular_solve(a, matmul(op_t, x), lower=lower, transpose_a=transpose_a)


def _ts_jvp_b(t: Any, x: Any, a: Any, b: Any, *, lower: bool, transpose_a: bool) -> Any:
    return triangular_solve(a, t, lower=lower, transpose_a=transpose_a)


_tsolve = nary_primitive("triangular_solve")
_tsolve.defvjp(_ts_vjp_a, _ts_vjp_b).defjvp(_ts_jvp_a, _ts_jvp_b)


def _square_system(name: str, a: Any, b: Any) -> tuple[Tensor, Tensor, bool]:
    """The checked operands of ``name``'s system ``a @ x = b``: ``a`` square [..., n, n], ``b``
    [..., n, k] or a vector [n] (returned as a column, with True), batch dimensions broadcast,
    both cast to their common floating dtype (integers solve in float32)."""
    a = as_tensor(a, "a")
    b = as_tensor(b, "b", like=a)
    check_same_backend(name, a, b)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: a must be square [..., n, n], got {list(a.shape)}")
    vec = b.ndim == 1
    if vec:
        b = expand_dims(b, -1)
    if b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"{name}: b has shape {list(b.shape)} but a is {list(a.shape)}: b needs "
                         f"{a.shape[-1]} rows")
    if a.shape[:-2] != b.shape[:-2]:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = broadcast_to(a, batch + a.shape[-2:])
        b = broadcast_to(b, batch + b.shape[-2:])
    dt = D.promote(a.dtype, b.dtype)
    if dt.kind != "f":
        dt = D.float32
    return cast(a, dt), cast(b, dt), vec


def triangular_solve(a: Any, b: Any, lower: bool = True, transpose_a: bool = False) -> Tensor:
    """Solve ``op(a) @ x = b`` for triangular ``a`` (``op`` transposes when ``transpose_a``).

    ``a``: [..., n, n]; ``b``: [..., n, k] or [n] (a vector gives a vector).
    """
    a, b, vec = _square_system("triangular_solve", a, b)
    out = bind(_tsolve, (a, b), {"lower": bool(lower), "transpose_a": bool(transpose_a)})
    return squeeze(out, -1) if vec else out


# -- general solve ------------------------------------------------------------------------------
def _solve_vjp_b(g: Any, x: Any, a: Any, b: Any) -> Any:
    return solve(_mT(a), g)


def _solve_vjp_a(g: Any, x: Any, a: Any, b: Any) -> Any:
    return -matmul(solve(_mT(a), g), _mT(x))


_solve = nary_primitive("solve")
_solve.defvjp(_solve_vjp_a, _solve_vjp_b)
_solve.defjvp(lambda t, x, a, b: -solve(a, matmul(t, x)), lambda t, x, a, b: solve(a, t))


def solve(a: Any, b: Any) -> Tensor:
    """``x`` with ``a @ x = b`` (NumPy's ``linalg.solve``): ``a`` [..., n, n], ``b``
    [..., n, k] or [n] (a vector gives a vector); batch dimensions broadcast."""
    a, b, vec = _square_system("solve", a, b)
    out = bind(_solve, (a, b), {})
    return squeeze(out, -1) if vec else out


# -- symmetric eigendecomposition -----------------------------------------------------------------
def _eigh_vjp(g: Any, packed: Any, a: Any) -> Any:
    w, v = packed[..., 0, :], packed[..., 1:, :]
    gw, gv = g[..., 0, :], g[..., 1:, :]
    eye = _band(v, True, 0) & _band(v, False, 0)
    diff = expand_dims(w, -2) - expand_dims(w, -1)  # [i, j] = w_j - w_i
    f = where(eye, 0.0, 1.0 / where(eye, 1.0, diff))
    inner = f * matmul(_mT(v), gv) + where(eye, expand_dims(gw, -2), 0.0)
    ga = matmul(matmul(v, inner), _mT(v))
    return 0.5 * (ga + _mT(ga))


_eigh = unary_primitive("eigh")
_eigh.defvjp(_eigh_vjp)


def eigh(a: Any) -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and eigenvectors (the columns of a matrix) of symmetric
    matrices ``a`` [..., n, n] (NumPy's ``linalg.eigh``); only the lower triangle is read and
    gradients treat ``a`` as symmetric. The eigenvectors' gradient needs distinct eigenvalues
    (and a function of them that does not depend on each vector's sign)."""
    a = as_tensor(a, "a")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"eigh: a must be square matrices [..., n, n], got {list(a.shape)}")
    if a.dtype.kind != "f":
        a = cast(a, D.float32)
    packed = bind(_eigh, (a,), {})
    return packed[..., 0, :], packed[..., 1:, :]
