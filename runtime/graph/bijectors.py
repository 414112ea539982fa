"""Bijectors: smooth invertible maps from the unconstrained "free state" R^n to a variable's
support, with the log-Jacobian that keeps densities correct after the change of variables.

``biject_to(constraint)`` picks the bijector for a support, so samplers and optimisers always
work on R^n:

=====================  ==========================================  =====================
support                forward(free)                               log |det J|
=====================  ==========================================  =====================
real                   free                                        0
greater_than(lo)       lo + exp(free)                              free
less_than(hi)          hi - exp(free)                              free
interval(lo, hi)       lo + (hi - lo) * sigmoid(free)              log(hi-lo) + log s(1-s)
bounded(lo[], hi[])    each element by its own bounds, as above    as above, per element
=====================  ==========================================  =====================

(s = sigmoid(free).) ``bounded`` is ``variable(lower=, upper=)`` with array bounds (broadcast to
the variable's shape): each element takes the map of its own pair of bounds.

Vector and matrix supports map a free block of a different shape (``free_shape``); their
log-Jacobian is per event (summed over the event's free coordinates):

=====================  ==================  ====================================================
support                value shape         free shape and map
=====================  ==================  ====================================================
simplex                [..., K]            [..., K-1]; stick-breaking (Stan), z = sigmoid(y -
                                           log(K-k)), x_k = z_k * (1 - sum_{j<k} x_j)
correlation_cholesky   [..., n, n]         [..., n(n-1)/2]; canonical partial correlations
                                           tanh(y) filled row by row into a Cholesky factor
correlation_matrix     [..., n, n]         as above, then R = L L^T (Jacobian onto the strictly
                                           lower triangle of R)
positive_definite      [..., n, n]         [..., n(n+1)/2]; lower-triangular L with exp
                                           diagonal, then S = L L^T (Jacobian onto the lower
                                           triangle of S)
cholesky_factor        [..., n, n]         [..., n(n+1)/2]; the same L, the value itself
                                           (log |J| = sum log L_ii)
ordered                [..., K]            [..., K]; x_1 = y_1, x_k = x_{k-1} + exp(y_k)
                                           (log |J| = sum_{k>=2} y_k)
=====================  ==================  ====================================================

Discrete supports (``integers``, ``one_hot``, ``counts``) and ``observed_only`` have no bijector:
a distribution on them can only be assigned to data; ``biject_to`` raises a ``TypeError``
explaining that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import ops
from ..ops.creation import tensor

__all__ = [
    "Bijector",
    "Constraint",
    "biject_to",
    "bounded",
    "cholesky_factor",
    "correlation_cholesky",
    "correlation_matrix",
    "counts",
    "greater_than",
    "integers",
    "interval",
    "less_than",
    "observed_only",
    "one_hot",
    "ordered",
    "positive_definite",
    "real",
    "simplex",
]

_CONTINUOUS_SCALAR = ("real", "greater_than", "less_than", "interval")
_STRUCTURED = ("simplex", "correlation_cholesky", "correlation_matrix", "positive_definite",
               "cholesky_factor", "ordered", "bounded")
_DISCRETE = ("integers", "one_hot", "counts")


@dataclass(frozen=True)
class Constraint:
    """A support: ``kind`` in {"real", "greater_than", "less_than", "interval"} (elementwise,
    open bounds), {"simplex", "correlation_cholesky", "correlation_matrix",
    "positive_definite"} (per event over the last one or two axes), or the non-bijectable
    {"integers" (closed bounds), "one_hot", "counts", "observed_only"}. ``note`` says why an
    ``observed_only`` support cannot be a prior."""

    kind: str
    lower: float = -math.inf
    upper: float = math.inf
    note: str = field(default="", compare=False)
    # kind "bounded": each element's bounds, flat in C order, for values of shape bounds_shape
    lowers: tuple[float, ...] = ()
    uppers: tuple[float, ...] = ()
    bounds_shape: tuple[int, ...] = ()
    # kinds "cholesky_factor" and "correlation_cholesky": the upper factor (R's chol) instead
    upper_factor: bool = False

    @property
    def discrete(self) -> bool:
        return self.kind in _DISCRETE

    @property
    def bijectable(self) -> bool:
        return self.kind in _CONTINUOUS_SCALAR or self.kind in _STRUCTURED

    @property
    def event_ndim(self) -> int:
        """Trailing axes that form one event (0 for elementwise supports)."""
        if self.kind in ("simplex", "one_hot", "counts", "ordered"):
            return 1
        if self.kind in ("correlation_cholesky", "correlation_matrix", "positive_definite",
                         "cholesky_factor"):
            return 2
        return 0

    def check(self, value: Any, atol: float = 1e-8) -> Any:
        """Is ``value`` inside the support? Elementwise for scalar supports, per event (over
        the last ``event_ndim`` axes) for the others. (NaN never is.)"""
        kind = self.kind
        ok = ops.logical_not(ops.isnan(value))
        if kind == "bounded":
            lo, hi = _bound_tensors(self, value)
            return ok & (value > lo) & (value < hi)
        if kind == "ordered":
            ok = ops.min(ops.cast(ok, "int32"), axis=-1) > 0
            steps = value[..., 1:] - value[..., :-1]
            return ok & (ops.min(ops.cast(steps > 0.0, "int32"), axis=-1) > 0)
        if kind in _CONTINUOUS_SCALAR or kind == "observed_only":
            if math.isfinite(self.lower):
                ok = ok & (value > self.lower)
            if math.isfinite(self.upper):
                ok = ok & (value < self.upper)
            return ok
        if kind == "integers":
            ok = ok & (ops.floor(value) == value)
            if math.isfinite(self.lower):
                ok = ok & (value >= self.lower)
            if math.isfinite(self.upper):
                ok = ok & (value <= self.upper)
            return ok
        if kind in ("simplex", "one_hot", "counts"):
            if kind == "simplex":
                ok = ok & (value > 0.0)
            else:
                ok = ok & (ops.floor(value) == value) & (value >= 0.0)
            ok = ops.min(ops.cast(ok, "int32"), axis=-1) > 0
            if kind == "simplex":
                ok = ok & (ops.abs(ops.sum(value, axis=-1) - 1.0) <= atol)
            if kind == "one_hot":
                ok = ok & (ops.sum(value, axis=-1) == 1.0)
            return ok
        # matrices: symmetric (or lower triangular) with the right diagonal; positive
        # definiteness from the pivots of an unrolled Cholesky factorisation (no exceptions)
        allok = ops.min(ops.cast(ok, "int32"), axis=(-2, -1)) > 0
        safe = ops.where(ops.isnan(value), 0.0, value)
        eye = ops.eye(value.shape[-1], dtype=value.dtype, backend=value.backend)
        diag = ops.sum(safe * eye, axis=-1)
        if self.upper_factor:
            safe = ops.swapaxes(safe, -1, -2)
        if kind == "cholesky_factor":
            upper = ops.max(ops.abs(ops.triu(safe, 1)), axis=(-2, -1))
            return allok & (upper == 0.0) & (ops.min(diag, axis=-1) > 0.0)
        if kind == "correlation_cholesky":
            upper = ops.max(ops.abs(ops.triu(safe, 1)), axis=(-2, -1))
            rows = ops.sum(safe * safe, axis=-1)
            return (allok & (upper == 0.0) & (ops.min(diag, axis=-1) > 0.0)
                    & (ops.max(ops.abs(rows - 1.0), axis=-1) <= atol))
        sym = ops.max(ops.abs(safe - ops.swapaxes(safe, -1, -2)), axis=(-2, -1)) <= atol
        ok = allok & sym & (_min_cholesky_pivot(safe) > 0.0)
        if kind == "correlation_matrix":
            ok = ok & (ops.max(ops.abs(diag - 1.0), axis=-1) <= atol)
        return ok

    def __str__(self) -> str:
        if self.kind == "integers":
            if self.lower == -math.inf and self.upper == math.inf:
                return "integers"
            if self.upper == math.inf:
                return f"integers >= {self.lower:g}"
            return f"integers in [{self.lower:g}, {self.upper:g}]"
        if self.kind == "bounded":
            return "elementwise bounds"
        if self.upper_factor:
            return self.kind.replace("_", " ") + " (upper)"
        if self.kind in _STRUCTURED or self.kind in ("one_hot", "counts"):
            return self.kind.replace("_", " ")
        if self.kind == "observed_only":
            return "observed only"
        if self.kind == "real":
            return "real"
        if self.kind == "greater_than":
            return f"> {self.lower:g}"
        if self.kind == "less_than":
            return f"< {self.upper:g}"
        return f"({self.lower:g}, {self.upper:g})"


real = Constraint("real")


def greater_than(lower: float) -> Constraint:
    return Constraint("greater_than", lower=float(lower))


def less_than(upper: float) -> Constraint:
    return Constraint("less_than", upper=float(upper))


def interval(lower: float, upper: float) -> Constraint:
    if not lower < upper:
        raise ValueError(f"interval: lower ({lower}) must be below upper ({upper})")
    return Constraint("interval", lower=float(lower), upper=float(upper))


simplex = Constraint("simplex")
correlation_cholesky = Constraint("correlation_cholesky")
correlation_matrix = Constraint("correlation_matrix")
positive_definite = Constraint("positive_definite")
cholesky_factor = Constraint("cholesky_factor")  # lower triangular, positive diagonal
ordered = Constraint("ordered")  # increasing along the last axis
one_hot = Constraint("one_hot")
counts = Constraint("counts")


def integers(lower: float = -math.inf, upper: float = math.inf) -> Constraint:
    """Integers in the closed range ``[lower, upper]``: a discrete, non-bijectable support."""
    return Constraint("integers", lower=float(lower), upper=float(upper))


def observed_only(note: str) -> Constraint:
    """A continuous support that cannot be given a bijector (``note`` says why): the
    distribution can only be assigned to data."""
    return Constraint("observed_only", note=note)


def bounded(lowers: list[float], uppers: list[float], shape: tuple[int, ...]) -> Constraint:
    """Elementwise bounds: element i of a value of ``shape`` (flat, C order) lies in
    ``(lowers[i], uppers[i])`` (either may be infinite)."""
    n = math.prod(shape)
    if len(lowers) != n or len(uppers) != n:
        raise ValueError(f"bounded: {n} bounds needed for shape {list(shape)}, got "
                         f"{len(lowers)} and {len(uppers)}")
    for lo, hi in zip(lowers, uppers):
        if not lo < hi:
            raise ValueError(f"bounded: lower ({lo}) must be below upper ({hi})")
    return Constraint("bounded", lowers=tuple(map(float, lowers)),
                      uppers=tuple(map(float, uppers)), bounds_shape=tuple(shape))


def from_bounds(lower: float = -math.inf, upper: float = math.inf) -> Constraint:
    """The constraint for ``variable(lower, upper)`` with scalar bounds."""
    lower, upper = float(lower), float(upper)
    if math.isnan(lower) or math.isnan(upper):
        raise ValueError("lower/upper: bounds must not be NaN")
    if lower == -math.inf and upper == math.inf:
        return real
    if upper == math.inf:
        return greater_than(lower)
    if lower == -math.inf:
        return less_than(upper)
    return interval(lower, upper)


class Bijector:
    """``forward`` maps free values to the support; ``inverse`` maps back;
    ``log_det_jacobian(free)`` is elementwise log |d forward / d free|."""

    def __init__(self, constraint: Constraint) -> None:
        self.constraint = constraint

    def __repr__(self) -> str:
        return f"Bijector(to {self.constraint})"

    def free_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """Shape of the free block for a value of ``shape`` (the same for scalar supports)."""
        return tuple(shape)

    def value_shape(self, free_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(free_shape)

    def forward(self, free: Any) -> Any:
        c = self.constraint
        if c.kind == "real":
            return free
        if c.kind == "greater_than":
            return ops.exp(free) + c.lower
        if c.kind == "less_than":
            return c.upper - ops.exp(free)
        return c.lower + (c.upper - c.lower) * ops.sigmoid(free)

    def inverse(self, value: Any) -> Any:
        c = self.constraint
        if c.kind == "real":
            return value
        if c.kind == "greater_than":
            return ops.log(value - c.lower)
        if c.kind == "less_than":
            return ops.log(c.upper - value)
        p = (value - c.lower) / (c.upper - c.lower)
        return ops.log(p) - ops.log1p(-p)

    def log_det_jacobian(self, free: Any) -> Any:
        c = self.constraint
        if c.kind == "real":
            return free * 0.0
        if c.kind in ("greater_than", "less_than"):
            return free
        # log sigmoid(x) + log(1 - sigmoid(x)) = -softplus(-x) - softplus(x)
        return math.log(c.upper - c.lower) - ops.softplus(-free) - ops.softplus(free)


def biject_to(constraint: Constraint) -> Bijector:
    """The bijector from R^n onto ``constraint``'s support."""
    kind = constraint.kind
    if kind in _CONTINUOUS_SCALAR:
        return Bijector(constraint)
    if kind == "simplex":
        return SimplexBijector(constraint)
    if kind in ("correlation_cholesky", "correlation_matrix"):
        return CorrelationBijector(constraint)
    if kind == "cholesky_factor":
        return CholeskyFactorBijector(constraint)
    if kind == "ordered":
        return OrderedBijector(constraint)
    if kind == "bounded":
        return BoundedBijector(constraint)
    if kind == "positive_definite":
        return PositiveDefiniteBijector(constraint)
    if constraint.discrete:
        raise TypeError(
            f"support {constraint}: a discrete distribution can only be observed (assigned to "
            f"data with distribution(y, ...)); it cannot be the prior of a variable"
        )
    raise TypeError(
        f"support {constraint}: this distribution can only be assigned to data, not used as a "
        f"prior" + (f" ({constraint.note})" if constraint.note else "")
    )


# -- structured bijectors -------------------------------------------------------------------------
def _min_cholesky_pivot(a: Any) -> Any:
    """Smallest pivot of the Cholesky factorisation of symmetric ``a`` [..., n, n] (positive
    iff ``a`` is positive definite), unrolled over columns so that it never raises."""
    n = a.shape[-1]
    cols: list[Any] = []
    worst = None
    for j in range(n):
        s = a[..., j:, j]
        for k, col in enumerate(cols):
            s = s - col[..., j - k:] * col[..., j - k:j - k + 1]
        pivot = s[..., 0]
        worst = pivot if worst is None else ops.minimum(worst, pivot)
        cols.append(s / ops.sqrt(ops.where(pivot > 0.0, pivot, 1.0))[..., None])
    return worst


def _exclusive_cumsum(x: Any, axis: int = -1) -> Any:
    return ops.cumsum(x, axis=axis) - x


def _log1m_tanh_sq(y: Any) -> Any:
    """log(1 - tanh(y)^2), stable for large |y|."""
    a = ops.abs(y)
    return 2.0 * (math.log(2.0) - a - ops.softplus(-2.0 * a))


def _tril_indices(n: int, k: int) -> tuple[list[int], list[int]]:
    """Row-major (row, column) pairs of the lower triangle below diagonal offset ``k``."""
    rows, cols = [], []
    for i in range(n):
        for j in range(n):
            if j <= i + k:
                rows.append(i)
                cols.append(j)
    return rows, cols


def _fill_tril(vec: Any, n: int, k: int) -> Any:
    """[..., m] -> [..., n, n]: ``vec`` laid row by row into the triangle (diagonal offset k);
    zeros elsewhere."""

    rows, cols = _tril_indices(n, k)
    pos = {(r, c): i for i, (r, c) in enumerate(zip(rows, cols))}
    m = len(rows)
    # gather from [..., m + 1] where slot m holds a zero
    padded = ops.concat([vec, ops.zeros_like(vec[..., :1])], axis=-1)
    idx = [pos.get((i, j), m) for i in range(n) for j in range(n)]
    flat = ops.take(padded, idx, axis=vec.ndim - 1)  # a static index: no value is read
    return ops.reshape(flat, (*vec.shape[:-1], n, n))


def _read_tril(mat: Any, k: int) -> Any:
    """[..., n, n] -> [..., m]: the triangle below diagonal offset ``k``, row by row."""

    n = mat.shape[-1]
    rows, cols = _tril_indices(n, k)
    flat = ops.reshape(mat, (*mat.shape[:-2], n * n))
    return ops.take(flat, [r * n + c for r, c in zip(rows, cols)], axis=flat.ndim - 1)


def _tri_size_to_n(m: int, diagonal: bool) -> int:
    # m = n(n-1)/2 (strict) or n(n+1)/2 (with diagonal)
    n = round((math.sqrt(8 * m + 1) + (-1 if diagonal else 1)) / 2)
    if (n * (n + (1 if diagonal else -1))) // 2 != m:
        raise ValueError(f"free block of {m} values does not fill a triangular matrix")
    return n


class SimplexBijector(Bijector):
    """Stick-breaking (Stan's): y in R^{K-1} -> x on the (K-1)-simplex in R^K.

    z_k = sigmoid(y_k - log(K - k)), x_k = z_k r_k with r_k = 1 - sum_{j<k} x_j = prod_{j<k}
    (1 - z_j), x_K = r_K; log |J| = sum_k log z_k + log(1 - z_k) + log r_k. The offsets make
    y = 0 the uniform point."""

    def free_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if not shape or shape[-1] < 2:
            raise ValueError(f"simplex: values need a last axis of length >= 2, got {shape}")
        return (*shape[:-1], shape[-1] - 1)

    def value_shape(self, free_shape: tuple[int, ...]) -> tuple[int, ...]:
        return (*free_shape[:-1], free_shape[-1] + 1)

    @staticmethod
    def _offsets(free: Any) -> Any:
        km1 = free.shape[-1]
        return tensor([math.log(km1 + 1 - k) for k in range(1, km1 + 1)], dtype=free.dtype,
                      backend=free.backend)

    def _parts(self, free: Any) -> tuple[Any, Any, Any]:
        t = free - self._offsets(free)
        log_z = -ops.softplus(-t)
        log1m_z = -ops.softplus(t)
        log_r = _exclusive_cumsum(log1m_z)  # log r_k, k = 1..K-1
        return log_z, log1m_z, log_r

    def forward(self, free: Any) -> Any:
        log_z, log1m_z, log_r = self._parts(free)
        head = ops.exp(log_z + log_r)
        last = ops.exp(ops.sum(log1m_z, axis=-1, keepdims=True))
        return ops.concat([head, last], axis=-1)

    def inverse(self, value: Any) -> Any:
        head = value[..., :-1]
        rest = ops.cumsum(value, axis=-1, reverse=True)  # r_k = sum_{j>=k} x_j
        z_num, z_rest = head, rest[..., 1:]  # z_k / (1 - z_k) = x_k / r_{k+1}
        free = ops.log(z_num) - ops.log(z_rest)
        return free + self._offsets(free)

    def log_det_jacobian(self, free: Any) -> Any:
        log_z, log1m_z, log_r = self._parts(free)
        return ops.sum(log_z + log1m_z + log_r, axis=-1)


class CorrelationBijector(Bijector):
    """Canonical partial correlations (Stan's ``cholesky_corr``): y in R^{n(n-1)/2} ->
    z = tanh(y) laid row by row below the diagonal -> the Cholesky factor L of a correlation
    matrix, L_ij = z_ij w_ij and L_ii = w_ii with w_ij = prod_{k<j} sqrt(1 - z_ik^2); for the
    ``correlation_matrix`` support the value is R = L L^T.

    log |J| onto L's strictly lower triangle: sum log(1 - z^2) + sum_{i>j} log w_ij; onto R's
    strictly lower triangle it adds sum_i (n - 1 - i) log L_ii (0-based rows).
    """

    def free_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] < 2:
            raise ValueError(f"{self.constraint}: values must be [..., n, n] with n >= 2, got "
                             f"{list(shape)}")
        n = shape[-1]
        return (*shape[:-2], n * (n - 1) // 2)

    def value_shape(self, free_shape: tuple[int, ...]) -> tuple[int, ...]:
        n = _tri_size_to_n(free_shape[-1], diagonal=False)
        return (*free_shape[:-1], n, n)

    def _cholesky(self, free: Any) -> tuple[Any, Any]:
        n = _tri_size_to_n(free.shape[-1], diagonal=False)
        z = _fill_tril(ops.tanh(free), n, -1)
        log1m = _fill_tril(_log1m_tanh_sq(free), n, -1)
        log_w = 0.5 * _exclusive_cumsum(log1m)
        eye = ops.eye(n, dtype=free.dtype, backend=free.backend)
        return (z + eye) * ops.exp(log_w), log_w

    def forward(self, free: Any) -> Any:
        L, _ = self._cholesky(free)
        if self.constraint.kind == "correlation_cholesky":
            return ops.swapaxes(L, -1, -2) if self.constraint.upper_factor else L
        return ops.matmul(L, ops.swapaxes(L, -1, -2))

    def inverse(self, value: Any) -> Any:
        if self.constraint.upper_factor:
            value = ops.swapaxes(value, -1, -2)
        L = value if self.constraint.kind == "correlation_cholesky" else ops.cholesky(value)
        lower = _read_tril(L, -1)
        # w_ij = sqrt(1 - sum_{k<j} L_ik^2), read on the strict lower triangle only
        w = ops.sqrt(_read_tril(1.0 - _exclusive_cumsum(ops.tril(L * L, -1)), -1))
        z = lower / w
        return 0.5 * (ops.log1p(z) - ops.log1p(-z))

    def log_det_jacobian(self, free: Any) -> Any:
        n = _tri_size_to_n(free.shape[-1], diagonal=False)
        _, log_w = self._cholesky(free)
        strict = _read_tril(log_w, -1)
        out = ops.sum(_log1m_tanh_sq(free), axis=-1) + ops.sum(strict, axis=-1)
        if self.constraint.kind == "correlation_matrix":
            eye = ops.eye(n, dtype=free.dtype, backend=free.backend)
            log_diag = ops.sum(log_w * eye, axis=-1)  # log L_ii = log w_ii
            weights = tensor([float(n - 1 - i) for i in range(n)], dtype=free.dtype,
                             backend=free.backend)
            out = out + ops.sum(log_diag * weights, axis=-1)
        return out


class PositiveDefiniteBijector(Bijector):
    """y in R^{n(n+1)/2} -> lower-triangular L (row by row, diagonal exp(y_ii)) -> S = L L^T.

    log |J| onto S's lower triangle: n log 2 + sum_i (n - i + 1) log L_ii (0-based rows)."""

    def free_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ValueError(f"positive definite: values must be [..., n, n], got {list(shape)}")
        n = shape[-1]
        return (*shape[:-2], n * (n + 1) // 2)

    def value_shape(self, free_shape: tuple[int, ...]) -> tuple[int, ...]:
        n = _tri_size_to_n(free_shape[-1], diagonal=True)
        return (*free_shape[:-1], n, n)

    def _cholesky(self, free: Any) -> tuple[Any, Any]:
        n = _tri_size_to_n(free.shape[-1], diagonal=True)
        raw = _fill_tril(free, n, 0)
        eye = ops.eye(n, dtype=free.dtype, backend=free.backend)
        log_diag = ops.sum(raw * eye, axis=-1)
        L = raw * (1.0 - eye) + eye * ops.expand_dims(ops.exp(log_diag), -1)
        return L, log_diag

    def forward(self, free: Any) -> Any:
        L, _ = self._cholesky(free)
        return ops.matmul(L, ops.swapaxes(L, -1, -2))

    def inverse(self, value: Any) -> Any:
        L = ops.cholesky(value)
        eye = ops.eye(L.shape[-1], dtype=L.dtype, backend=L.backend)
        log_diag = ops.log(ops.sum(L * eye, axis=-1))
        return _read_tril(L * (1.0 - eye) + eye * ops.expand_dims(log_diag, -1), 0)

    def log_det_jacobian(self, free: Any) -> Any:
        _, log_diag = self._cholesky(free)
        n = log_diag.shape[-1]
        weights = tensor([float(n - i + 1) for i in range(n)], dtype=free.dtype,
                         backend=free.backend)
        return n * math.log(2.0) + ops.sum(log_diag * weights, axis=-1)


class CholeskyFactorBijector(PositiveDefiniteBijector):
    """y in R^{n(n+1)/2} -> lower-triangular L, row by row, with diagonal exp(y_ii): the
    Cholesky factor of a covariance matrix (greta's ``cholesky_variable``). log |J| onto L's
    lower triangle: sum_i log L_ii."""

    def forward(self, free: Any) -> Any:
        L, _ = self._cholesky(free)
        return ops.swapaxes(L, -1, -2) if self.constraint.upper_factor else L

    def inverse(self, value: Any) -> Any:
        if self.constraint.upper_factor:
            value = ops.swapaxes(value, -1, -2)
        eye = ops.eye(value.shape[-1], dtype=value.dtype, backend=value.backend)
        log_diag = ops.log(ops.sum(value * eye, axis=-1))
        return _read_tril(value * (1.0 - eye) + eye * ops.expand_dims(log_diag, -1), 0)

    def log_det_jacobian(self, free: Any) -> Any:
        _, log_diag = self._cholesky(free)
        return ops.sum(log_diag, axis=-1)


class OrderedBijector(Bijector):
    """y in R^K -> increasing x: x_1 = y_1, x_k = x_{k-1} + exp(y_k) (Stan's ordered
    transform); log |J| = sum_{k>=2} y_k (the Jacobian is triangular)."""

    def free_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if not shape or shape[-1] < 2:
            raise ValueError(f"ordered: values need a last axis of length >= 2, got "
                             f"{list(shape)}")
        return tuple(shape)

    def forward(self, free: Any) -> Any:
        steps = ops.concat([free[..., :1], ops.exp(free[..., 1:])], axis=-1)
        return ops.cumsum(steps, axis=-1)

    def inverse(self, value: Any) -> Any:
        return ops.concat([value[..., :1], ops.log(value[..., 1:] - value[..., :-1])], axis=-1)

    def log_det_jacobian(self, free: Any) -> Any:
        return ops.sum(free[..., 1:], axis=-1)


def _bound_tensors(c: Constraint, like: Any) -> tuple[Any, Any]:
    def t(v: tuple[float, ...]) -> Any:
        return ops.reshape(tensor(list(v), dtype=like.dtype, backend=like.backend),
                           c.bounds_shape)
    return t(c.lowers), t(c.uppers)


class BoundedBijector(Bijector):
    """Elementwise bounds (``variable(lower = c(0, -Inf), upper = c(1, Inf))``): each element
    takes the map of its own pair of bounds (the table above). Each branch reads a safe free
    value (0 where another branch applies) and finite stand-ins for infinite bounds, so that no
    branch makes an infinity or a NaN that a gradient would multiply by zero."""

    def _parts(self, like: Any) -> dict[str, Any]:
        c = self.constraint

        def t(v: list[float]) -> Any:
            return ops.reshape(tensor(v, dtype=like.dtype, backend=like.backend),
                               c.bounds_shape)
        lo_fin = [math.isfinite(x) for x in c.lowers]
        hi_fin = [math.isfinite(x) for x in c.uppers]
        both = [a and b for a, b in zip(lo_fin, hi_fin)]
        return {
            "both": t([float(b) for b in both]) > 0.5,
            "lo": t([float(a and not b) for a, b in zip(lo_fin, hi_fin)]) > 0.5,
            "hi": t([float(b and not a) for a, b in zip(lo_fin, hi_fin)]) > 0.5,
            "lower": t([x if f else 0.0 for x, f in zip(c.lowers, lo_fin)]),
            "upper": t([x if f else 0.0 for x, f in zip(c.uppers, hi_fin)]),
            "width": t([(h - lo) if b else 1.0 for lo, h, b in zip(c.lowers, c.uppers, both)]),
        }

    def forward(self, free: Any) -> Any:
        p = self._parts(free)
        both = p["lower"] + p["width"] * ops.sigmoid(ops.where(p["both"], free, 0.0))
        lo = p["lower"] + ops.exp(ops.where(p["lo"], free, 0.0))
        hi = p["upper"] - ops.exp(ops.where(p["hi"], free, 0.0))
        return ops.where(p["both"], both, ops.where(p["lo"], lo, ops.where(p["hi"], hi, free)))

    def inverse(self, value: Any) -> Any:
        p = self._parts(value)
        mid = p["lower"] + 0.5 * p["width"]  # a safe value inside every branch's support
        u = (ops.where(p["both"], value, mid) - p["lower"]) / p["width"]
        both = ops.log(u) - ops.log1p(-u)
        lo = ops.log(ops.where(p["lo"], value - p["lower"], 1.0))
        hi = ops.log(ops.where(p["hi"], p["upper"] - value, 1.0))
        return ops.where(p["both"], both, ops.where(p["lo"], lo, ops.where(p["hi"], hi, value)))

    def log_det_jacobian(self, free: Any) -> Any:
        p = self._parts(free)
        y = ops.where(p["both"], free, 0.0)
        both = ops.log(p["width"]) - ops.softplus(-y) - ops.softplus(y)
        one = ops.where(p["lo"], free, 0.0) + ops.where(p["hi"], free, 0.0)
        return ops.where(p["both"], both, one)
