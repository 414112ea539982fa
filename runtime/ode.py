"""``ode_solve``: initial value problems dy/dt = fn(t, y, *args), differentiable in y0 and args.

Three integrators, all with error control on the state:

- ``"rk45"``: the explicit Dormand-Prince 5(4) pair (7 stages, first same as last), fifth-order
  solution, fourth-order embedded estimate; the steps are chosen by the error control alone and
  the requested times inside a step are read from the pair's fourth-order continuous extension
  (as Stan's and SciPy's integrators do), so many output times cost no extra steps.
- ``"rosenbrock"`` (also ``"bdf"``, ``"stiff"``): for stiff systems, linearly implicit Euler
  (the one-stage Rosenbrock method, I - h J with J from autodiff at the step's start)
  extrapolated from 1, 2, 3 and 4 substeps to fourth order, with the third-order value as the
  error estimate (the scheme of Deuflhard's and Hairer-Wanner's extrapolation codes).
- ``"ros2"``: the two-stage L-stable Rosenbrock-W method ROS2 (gamma = 1 + 1/sqrt(2)), second
  order with a first-order estimate: cheap steps, for loose tolerances.

The two stiff methods hit the output times exactly (a step is shortened to land on each one).

The integrators run on NumPy arrays (without NumPy, as in Pyodide's core, on the python arrays'
subset of NumPy, :mod:`.ode_pure`): ``fn`` is staged once (``tb.function``), together with its
Jacobian in (y, args) for the sensitivities and the linearly implicit methods, and the loop calls
the staged programs. Gradients come from forward sensitivities S = dy/dp (p: y0 and args,
flattened) integrated on the same steps as y: dS/dt = J_y S + J_p (for ``rk45``, with y as one
state vector [y, S] whose derivative is one staged program). The step sizes are chosen from y
alone, so y is the same whether or not S is carried, and for ``rk45`` S is the exact derivative of
the computed (and interpolated) y for those steps. ``ode_solve`` is one primitive (kernel
``ode_solve``) whose VJP reads S from a second primitive (``ode_sensitivities``): staged programs
and models record both as single steps. A solve whose sensitivities were asked for computes them
with the state on the next solve (exact-input cache), so value-and-gradient costs one augmented
solve.
Under ``vmap`` (a sampler's chains) ``rk45`` integrates the members together: each keeps its
own steps and error control, only the stages' derivatives are one staged call for all, so
each member's numbers are those of its own solve.

Failures (``max_steps`` exceeded, a step size below the time resolution, a non-finite
derivative) raise :class:`OdeSolveError`; inside a model (lazy-array arguments) the result is
NaN instead, which samplers treat as a rejected proposal.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

from . import compile as _compilers  # noqa: F401 - registers tb.function's compilers
from .autodiff.api import jvp
from .autodiff.batching import _loop, batch_rule, vmap
from .autodiff.core import Primitive, Tracer, bind
from .backends import get_backend
from .backends.python_backend import as_raw
from .errors import TensorBridgeError
from .host_namespace import to_host, to_tensor
from .kernels import register_kernel
from .ops.creation import as_tensor, eye, tensor
from .ops.shape import concat, reshape, transpose
from .tensor import Tensor

try:  # the integrators' arrays: NumPy's, else the python arrays' subset (Pyodide's core)
    import numpy as _np

    _PURE = False
except ImportError:  # tested in a subprocess that hides NumPy (tests/runtime/test_ode.py)
    from . import ode_pure as _np  # type: ignore[no-redef]

    _PURE = True

__all__ = ["OdeSolveError", "ode_solve"]

METHODS = {"rk45": "rk45", "dopri5": "rk45", "rosenbrock": "rosenbrock", "bdf": "rosenbrock",
           "stiff": "rosenbrock", "ros2": "ros2"}


class OdeSolveError(TensorBridgeError, ArithmeticError):
    """The integrator could not reach the requested times (step budget, step size, NaN)."""


# -- Dormand-Prince 5(4) tableau --------------------------------------------------------------
_DP_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_DP_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_DP_B = _DP_A[6] + (0.0,)  # fifth order (the last stage row: first same as last)
_DP_BHAT = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
_DP_E = tuple(b - bh for b, bh in zip(_DP_B, _DP_BHAT))

_ROS2_GAMMA = 1.0 + 1.0 / math.sqrt(2.0)


class _Problem:
    """One call site's right-hand side, shapes and options; the host-side functions staged once.

    Kept as the primitives' static parameter, so staged programs and model graphs replay it.
    """

    def __init__(self, fn: Callable[..., Any], y_shape: tuple[int, ...],
                 arg_shapes: list[tuple[int, ...]], backend: Any, times: Any, t0: float,
                 method: str, rtol: float, atol: float, max_steps: int, on_failure: str) -> None:
        self.fn = fn
        self.y_shape = y_shape
        self.n = math.prod(y_shape)
        self.arg_shapes = arg_shapes
        self.arg_sizes = [math.prod(s) for s in arg_shapes]
        self.n_params = self.n + sum(self.arg_sizes)
        self.backend = backend
        self.times = times
        self.t0 = t0
        self.method = method
        self.rtol = rtol
        self.atol = atol
        self.max_steps = max_steps
        self.on_failure = on_failure
        self.steps = 0  # accepted steps and rejections of the last solve (for tests, tuning)
        self.rejected = 0
        self._f: Any = None
        self._jac: Any = None
        self._aug: Any = None
        self._aug_b: dict[int, Any] = {}  # batch size -> the batched [y, S] derivative
        self._local = threading.local()

    def __getstate__(self) -> dict[str, Any]:  # mcmc(n_cores=...) sends models to workers
        skip = ("_f", "_jac", "_aug", "_aug_b", "_local")
        state = {k: v for k, v in self.__dict__.items() if k not in skip}
        state["backend"] = self.backend.name
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.backend = get_backend(state["backend"])
        self._f = self._jac = self._aug = None
        self._aug_b = {}
        self._local = threading.local()

    def __repr__(self) -> str:
        return (f"<ode problem {getattr(self.fn, '__name__', 'fn')} n={self.n} "
                f"method={self.method}>")

    # staged host functions -------------------------------------------------------------------
    def _rhs_flat(self, t: Tensor, y: Tensor, *args: Any) -> Tensor:
        out = self.fn(t, reshape(y, self.y_shape), *args)
        out = as_tensor(out, "ode_solve: fn's result")
        if tuple(out.shape) != self.y_shape:
            raise ValueError(f"ode_solve: fn(t, y, *args) must return dy/dt with y0's shape "
                             f"{list(self.y_shape)}, got shape {list(out.shape)}")
        return reshape(out, (self.n,))

    def _rhs_and_jac(self, t: Tensor, y: Tensor, *args: Any) -> Any:
        """f and [J_y | J_p] ([n, n + args' sizes]): one batched JVP over the unit vectors."""
        sizes = [self.n, *self.arg_sizes]
        basis = eye(sum(sizes), dtype=y.dtype, backend=y.backend)

        def column(e: Tensor) -> Tensor:
            tangents, lo = [], 0
            for size, x in zip(sizes, (y, *args)):
                tangents.append(reshape(e[lo:lo + size], x.shape))
                lo += size
            return jvp(lambda yy, *aa: self._rhs_flat(t, yy, *aa), (y, *args), tuple(tangents))[1]

        return self._rhs_flat(t, y, *args), transpose(vmap(column)(basis))

    def _rhs_aug(self, t: Tensor, z: Tensor, *args: Any) -> Tensor:
        """d/dt of the augmented state z = [y, S flattened] (S = dy/dp, [n, n_params]):
        [f, J_y S + J_p], all of S's columns in one batched JVP (tangent S[:, j] for y and
        the unit vector e_j for the args' part), so a stage is one call of one program."""
        n, n_p = self.n, self.n_params
        y = z[:n]
        s = reshape(z[n:], (n, n_p))  # one column of S per sensitivity
        basis = eye(n_p, dtype=z.dtype, backend=z.backend)[n:, :]  # the args' unit vectors

        def column(sy: Tensor, sp: Tensor) -> Tensor:
            tangents, lo = [sy], 0
            for size, a in zip(self.arg_sizes, args):
                tangents.append(reshape(sp[lo:lo + size], a.shape))
                lo += size
            return jvp(lambda yy, *aa: self._rhs_flat(t, yy, *aa), (y, *args),
                       tuple(tangents))[1]

        # batched over S's columns in place (no transposes of S in and out), and f on its own:
        # the JVP's primal is not batched, so vmap would broadcast it P times and take one row
        ds = vmap(column, in_axes=(1, 1), out_axes=1)(s, basis)  # [n, P]
        return concat([self._rhs_flat(t, y, *args), reshape(ds, (n * n_p,))], axis=0)

    def _program(self, staged: Any, raws: list[Any]) -> Callable[..., Any]:
        ts = [_tensor(r, self.backend) for r in raws]
        # NumPy's staged programs have one (the python backend's raw buffers are not host arrays)
        raw_program = None if _PURE else getattr(staged, "raw_program", None)
        raw = raw_program(*ts) if raw_program is not None else None
        if raw is not None:
            return raw
        be = self.backend

        def slow(*host: Any) -> Any:  # not stageable or not NumPy: through tensors
            out = staged(*[_tensor(h, be) for h in host])
            leaves = out if isinstance(out, tuple) else (out,)
            flat: list[Any] = []
            for leaf in leaves:
                flat.extend(leaf if isinstance(leaf, tuple) else (leaf,))
            return tuple(_host(x) for x in flat)

        return slow

    def f(self, t: float, y: Any, args: list[Any]) -> Any:
        if self._f is None:
            self._f = self._program(self.backend.compile(self._rhs_flat),
                                    [_np.float64(t), y, *args])
        return self._f(_np.float64(t), y, *args)[0]

    def aug(self, t: float, z: Any, args: list[Any]) -> Any:
        """The augmented state's derivative (see :meth:`_rhs_aug`)."""
        if self._aug is None:
            self._aug = self._program(self.backend.compile(self._rhs_aug),
                                      [_np.float64(t), z, *args])
        return self._aug(_np.float64(t), z, *args)[0]

    def jac(self, t: float, y: Any, args: list[Any]) -> tuple[Any, Any, Any]:
        """(f, J_y [n, n], J_p [n, args' sizes]) at (t, y)."""
        if self._jac is None:
            self._jac = self._program(self.backend.compile(self._rhs_and_jac),
                                      [_np.float64(t), y, *args])
        f, jac = self._jac(_np.float64(t), y, *args)
        return f, jac[:, :self.n], jac[:, self.n:]

    # the solve -------------------------------------------------------------------------------
    def solve(self, y0: Any, args: list[Any], sens: bool) -> tuple[Any, Any]:
        """y at the times [T, n] and, with ``sens``, S [T, n, n_params] (else None)."""
        y0 = _np.asarray(y0, dtype=_np.float64).reshape(self.n)
        args = [_np.asarray(a, dtype=_np.float64) for a in args]
        step, order = _STEPPERS[self.method]
        times = self.times
        T = len(times)
        ys = _np.empty((T, self.n))
        ss = _np.empty((T, self.n, self.n_params)) if sens else None
        n = self.n
        # the state: y, and with ``sens`` S = dy/dp flattened after it (S(t0) = [I | 0])
        z = y0.copy()
        if sens:
            s0 = _np.zeros((n, self.n_params))
            s0[:, :n] = _np.eye(n)
            z = _np.concatenate([y0, s0.reshape(-1)])
        t = self.t0
        f0 = self.f(t, y0, args)
        h = _initial_step(self, t, y0, f0, args, order, times[-1] - t)
        fsal: Any = None  # the stages of an accepted rk45 step (its last is the next one's first)
        steps = rejected = 0
        if self.method == "rk45":  # dense output: steps do not stop at the times
            return self._solve_dense(t, z, h, args, sens, ys, ss)
        for i, tout in enumerate(times):
            while t < tout:
                last = h >= tout - t
                hs = tout - t if last else h
                self._check_step(steps + rejected, t, tout, hs)
                z_new, err, fsal_new = step(self, t, hs, z, sens, args, fsal)
                e = self._error_norm(z, z_new, err, t, hs)
                if not math.isfinite(e):
                    h = hs * 0.2
                    rejected += 1
                    continue
                if e <= 1.0:
                    t = tout if last else t + hs
                    z, fsal = z_new, fsal_new
                    steps += 1
                    fac = 5.0 if e == 0 else min(5.0, 0.9 * e ** (-1.0 / (order + 1)))
                    # a step cut short to land on tout keeps the longer step it replaced
                    h = max(h, hs * fac) if last else hs * max(0.2, fac)
                else:
                    rejected += 1
                    h = hs * max(0.2, 0.9 * e ** (-1.0 / (order + 1)))
            ys[i] = z[:n]
            if sens:
                ss[i] = z[n:].reshape(n, self.n_params)
        self.steps, self.rejected = steps, rejected
        return ys, ss

    def _solve_dense(self, t: float, z: Any, h: float, args: list[Any], sens: bool, ys: Any,
                     ss: Any) -> tuple[Any, Any]:
        """rk45's loop: steps chosen by the error control alone (the last one shortened to end
        at the last time), the times inside a step read from Dormand-Prince's fourth-order
        continuous extension, a combination of the step's stages like the step itself (so, with
        S carried, the interpolated S is the interpolated y's exact derivative)."""
        times, T = self.times, len(self.times)
        tend = float(times[-1])
        i = 0
        k: Any = None
        steps = rejected = 0
        while i < T:
            if times[i] <= t:  # only t0 itself: the times are increasing and not before t0
                self._record(ys, ss, i, z, sens)
                i += 1
                continue
            last = h >= tend - t
            hs = tend - t if last else h
            self._check_step(steps + rejected, t, float(times[i]), hs)
            z_new, err, k_new = _dopri_step(self, t, hs, z, sens, args, k)
            e = self._error_norm(z, z_new, err, t, hs)
            if not math.isfinite(e):
                h = hs * 0.2
                rejected += 1
                continue
            if e > 1.0:
                rejected += 1
                h = hs * max(0.2, 0.9 * e ** -0.2)
                continue
            t_new = tend if last else t + hs
            while i < T and times[i] <= t_new:
                if times[i] == t_new:
                    self._record(ys, ss, i, z_new, sens)
                else:
                    self._record(ys, ss, i, _dopri_dense(z, z_new, k_new, hs,
                                                         (times[i] - t) / hs), sens)
                i += 1
            t, z, k = t_new, z_new, k_new
            steps += 1
            h = hs * (5.0 if e == 0 else min(5.0, max(0.2, 0.9 * e ** -0.2)))
        self.steps, self.rejected = steps, rejected
        return ys, ss

    def aug_batch(self, t: Any, z: Any, args: list[Any]) -> Any:
        """:meth:`aug` of B states at once (t [B], z [B, m], each arg [B, ...]): one staged call
        instead of B, whose cost is mostly per call for small systems."""
        prog = self._aug_b.get(z.shape[0])
        if prog is None:
            prog = self._aug_b[z.shape[0]] = self._program(
                self.backend.compile(vmap(self._rhs_aug)), [t, z, *args])
        return prog(t, z, *args)[0]

    def solve_batch(self, y0s: Any, args: list[Any], sens: bool) -> list[Any]:
        """rk45's :meth:`_solve_dense` for B initial values and arguments (y0s [B, n], each arg
        [B, ...]) at once: each member keeps its own steps, step sizes and rejections (the same
        arithmetic as its own solve, row by row), and only the stages' derivatives are
        evaluated together. Per member (ys, ss) or the OdeSolveError that stopped it."""
        B, n, n_p = y0s.shape[0], self.n, self.n_params
        times, T = self.times, len(self.times)
        tend = float(times[-1])
        ys = _np.empty((B, T, n))
        ss = _np.empty((B, T, n, n_p)) if sens else None
        z = _np.empty((B, n + n * n_p if sens else n))
        z[:, :n] = y0s
        if sens:
            s0 = _np.zeros((n, n_p))
            s0[:, :n] = _np.eye(n)
            z[:, n:] = s0.reshape(-1)
        rhs = self.aug_batch if sens else self._f_batch
        member = [[arg[b] for arg in args] for b in range(B)]
        t = [self.t0] * B
        h = [_initial_step(self, self.t0, y0s[b], self.f(self.t0, y0s[b], member[b]),
                           member[b], 4, tend - self.t0) for b in range(B)]
        i, steps, rejected = [0] * B, [0] * B, [0] * B
        out: list[Any] = [None] * B
        for b in range(B):  # the times at t0 itself
            while i[b] < T and times[i[b]] <= t[b]:
                self._record(ys[b], ss[b] if sens else None, i[b], z[b], sens)
                i[b] += 1
        k_now = None  # each member's derivative at its (t, z): first same as last
        while True:
            hs, last = [0.0] * B, [False] * B
            for b in range(B):
                if out[b] is not None or i[b] >= T:
                    continue  # finished or failed: its row rides along with h = 0
                last[b] = h[b] >= tend - t[b]
                hs[b] = tend - t[b] if last[b] else h[b]
                try:
                    self._check_step(steps[b] + rejected[b], t[b], float(times[i[b]]), hs[b])
                except OdeSolveError as err:
                    out[b], hs[b] = err, 0.0
            if not any(hs):
                break
            tv, hv = _np.array(t), _np.array(hs)
            k = _np.empty((7, *z.shape))
            k[0] = rhs(tv, z, args) if k_now is None else k_now
            for j in range(1, 6):
                k[j] = rhs(tv + _DP_C[j] * hv, _combine_rows(z, hv, _DP_A[j], k), args)
            z_new = _combine_rows(z, hv, _DP_B, k[:6])
            k[6] = rhs(tv + hv, z_new, args)
            err = _combine_rows(_np.zeros((B, n)), hv, _DP_E, k[:, :, :n])
            if k_now is None:
                k_now = k[0].copy()
            for b in range(B):
                if not hs[b]:
                    continue
                try:
                    e = self._error_norm(z[b], z_new[b], err[b], t[b], hs[b])
                except OdeSolveError as error:
                    out[b] = error
                    continue
                if not math.isfinite(e):
                    h[b] = hs[b] * 0.2
                    rejected[b] += 1
                    continue
                if e > 1.0:
                    rejected[b] += 1
                    h[b] = hs[b] * max(0.2, 0.9 * e ** -0.2)
                    continue
                t_new = tend if last[b] else t[b] + hs[b]
                kb = k[:, b]
                while i[b] < T and times[i[b]] <= t_new:
                    zi = z_new[b] if times[i[b]] == t_new else _dopri_dense(
                        z[b], z_new[b], kb, hs[b], (times[i[b]] - t[b]) / hs[b])
                    self._record(ys[b], ss[b] if sens else None, i[b], zi, sens)
                    i[b] += 1
                t[b] = t_new
                z[b] = z_new[b]
                k_now[b] = kb[6]
                steps[b] += 1
                h[b] = hs[b] * (5.0 if e == 0 else min(5.0, max(0.2, 0.9 * e ** -0.2)))
        self.steps, self.rejected = steps[-1], rejected[-1]
        return [out[b] if out[b] is not None else (ys[b], ss[b] if sens else None)
                for b in range(B)]

    def _f_batch(self, t: Any, z: Any, args: list[Any]) -> Any:
        return _np.stack([self.f(float(t[b]), z[b], [a[b] for a in args])
                          for b in range(z.shape[0])])

    def _check_step(self, taken: int, t: float, tout: float, hs: float) -> None:
        """Raises when the solve must stop: ``max_steps`` steps tried (accepted or not) before
        ``tout``, or a step ``hs`` too small to move ``t`` in floating point."""
        if taken >= self.max_steps:
            raise OdeSolveError(
                f"ode_solve: max_steps={self.max_steps} reached at t={t:.6g} before "
                f"t={tout:.6g}; the problem may be stiff (method='rosenbrock') or need "
                f"a larger max_steps")
        if hs <= 16 * _np.finfo(float).eps * max(abs(t), 1.0):
            raise OdeSolveError(f"ode_solve: step size {hs:.3g} too small at t={t:.6g}")

    def _error_norm(self, z: Any, z_new: Any, err: Any, t: float, hs: float) -> float:
        """The step's RMS error in units of the tolerance, over the state only (the
        sensitivities ride on the state's steps); non-finite asks for a smaller step, unless
        the step is already negligible and the state itself is not finite."""
        n = self.n
        scale = self.atol + self.rtol * _np.maximum(_np.abs(z[:n]), _np.abs(z_new[:n]))
        r = err / scale
        e = math.sqrt(float(r @ r) / n) if n else 0.0
        if not math.isfinite(e) and not _np.all(_np.isfinite(z_new[:n])) and hs < 1e-300:
            raise OdeSolveError(f"ode_solve: non-finite derivative at t={t:.6g}")
        return e

    def _record(self, ys: Any, ss: Any, i: int, z: Any, sens: bool) -> None:
        ys[i] = z[:self.n]
        if sens:
            ss[i] = z[self.n:].reshape(self.n, self.n_params)


def _initial_step(p: _Problem, t: float, y: Any, f0: Any, args: list[Any], order: int,
                  span: float) -> float:
    """A first step whose Euler error is about the tolerance (Hairer, Norsett and Wanner's
    recipe: compare norms of y, f and a finite-difference second derivative)."""
    if span <= 0:
        return 1.0
    scale = p.atol + p.rtol * _np.abs(y)
    d0 = float(_np.sqrt(_np.mean(_sq(y / scale)))) if p.n else 0.0
    d1 = float(_np.sqrt(_np.mean(_sq(f0 / scale)))) if p.n else 0.0
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, span)
    f1 = p.f(t + h0, y + h0 * f0, args)
    d2 = float(_np.sqrt(_np.mean(_sq((f1 - f0) / scale)))) / h0 if p.n else 0.0
    if max(d1, d2) <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / (order + 1))
    return min(100 * h0, h1, span)


def _sq(x: Any) -> Any:
    """x * x (NumPy's x ** 2 is the same product; the python arrays have no ``**``)."""
    return x * x


def _combine(z: Any, h: float, coefs: Sequence[float], k: Any) -> Any:
    """z + h sum_j coefs[j] k[j], elementwise (not a matrix product: BLAS may sum in another
    order for another width, and y must not depend on whether S is carried alongside)."""
    acc = None
    for c, kj in zip(coefs, k):
        if c:
            term = (h * c) * kj
            acc = term if acc is None else acc + term
    return z if acc is None else z + acc


def _combine_rows(z: Any, h: Any, coefs: Sequence[float], k: Any) -> Any:
    """:func:`_combine` for B rows at once, h [B] one step size per row: each row's numbers are
    those of :func:`_combine` on that row alone (the same products and sums, in the same
    order)."""
    acc = None
    for c, kj in zip(coefs, k):
        if c:
            term = (h * c)[:, None] * kj
            acc = term if acc is None else acc + term
    return z if acc is None else z + acc


def _dopri_step(p: _Problem, t: float, h: float, z: Any, sens: bool, args: list[Any],
                fsal: Any) -> tuple[Any, Any, Any]:
    """One Dormand-Prince step of the state z; with ``sens`` the stages are those of the
    augmented system [y, S], i.e. the same stages linearised (S's exact derivative)."""
    rhs = p.aug if sens else p.f
    k = [rhs(t, z, args) if fsal is None else fsal[6]]
    for i in range(1, 6):
        k.append(rhs(t + _DP_C[i] * h, _combine(z, h, _DP_A[i], k), args))
    z_new = _combine(z, h, _DP_B, k)  # the last stage's point (first same as last)
    k.append(rhs(t + h, z_new, args))
    n = p.n
    err = _combine(_np.zeros(n), h, _DP_E, [kj[:n] for kj in k])
    return z_new, err, k


# Dormand-Prince's continuous extension (Shampine's fourth-order interpolant, in Hairer, Norsett
# and Wanner's form): the coefficients of the stages in its highest-degree term
_DP_D = (-12715105075 / 11282082432, 0.0, 87487479700 / 32700410799,
         -10690763975 / 1880347072, 701980252875 / 199316789632, -1453857185 / 822651844,
         69997945 / 29380423)


def _dopri_dense(z: Any, z_new: Any, k: Sequence[Any], h: float, theta: float) -> Any:
    """The state at t + theta h inside an accepted step from z to z_new with stages k: the
    cubic Hermite interpolant (z, z_new, h k[0], h k[6]) plus a theta^2 (1 - theta)^2 term."""
    dz = z_new - z
    b = h * k[0] - dz
    c = dz - h * k[6] - b
    d = _combine(_np.zeros_like(z), h, _DP_D, k)
    u = 1.0 - theta
    return z + theta * (dz + u * (b + theta * (c + u * d)))


def _split(p: _Problem, z: Any, sens: bool) -> tuple[Any, Any]:
    return z[:p.n], (z[p.n:].reshape(p.n, p.n_params) if sens else None)


def _join(y: Any, S: Any) -> Any:
    return y if S is None else _np.concatenate([y, S.reshape(-1)])


def _ros2_step(p: _Problem, t: float, h: float, z: Any, sens: bool, args: list[Any],
               fsal: Any) -> tuple[Any, Any, Any]:
    """One ROS2 step: (I - g h J) k1 = f(t, y); (I - g h J) k2 = f(t + h, y + h k1) - 2 k1;
    y1 = y + h (3/2 k1 + 1/2 k2); error y1 - (y + h k1). S follows the same scheme with the
    same matrix (a W-method stays second order with any matrix)."""
    y, S = _split(p, z, sens)
    f, jy, jp = p.jac(t, y, args)
    n = p.n
    W = _np.eye(n) - (_ROS2_GAMMA * h) * jy
    try:
        k1 = _np.linalg.solve(W, f)
    except _np.linalg.LinAlgError:
        return z, _np.full(n, _np.inf), None
    y2 = y + h * k1
    if S is None:
        k2 = _np.linalg.solve(W, p.f(t + h, y2, args) - 2.0 * k1)
        s_new = None
    else:
        rs = jy @ S
        rs[:, n:] += jp
        ks1 = _np.linalg.solve(W, rs)
        s2 = S + h * ks1
        f2, jy2, jp2 = p.jac(t + h, y2, args)
        rs2 = jy2 @ s2
        rs2[:, n:] += jp2
        k2 = _np.linalg.solve(W, f2 - 2.0 * k1)
        ks2 = _np.linalg.solve(W, rs2 - 2.0 * ks1)
        s_new = S + h * (1.5 * ks1 + 0.5 * ks2)
    y_new = y + h * (1.5 * k1 + 0.5 * k2)
    err = h * 0.5 * (k1 + k2)
    return _join(y_new, s_new), err, None


_LIE_SEQUENCE = (1, 2, 3, 4)  # substeps of the linearly implicit Euler runs extrapolated


def _lie_step(p: _Problem, t: float, h: float, z: Any, sens: bool, args: list[Any],
              fsal: Any) -> tuple[Any, Any, Any]:
    """One step of linearly implicit Euler extrapolated to order 4: the step h is covered with
    n = 1, 2, 3, 4 substeps of (I - (h/n) J) d = (h/n) f(t_i, y_i), J the Jacobian at the
    step's start, and the four end values are extrapolated to h -> 0 (Aitken-Neville on a
    first-order error expansion). Error: the order-4 value minus the order-3 one. S follows
    the same substeps on its own (linear) equation dS/dt = J_y S + J_p."""
    y, S = _split(p, z, sens)
    f0, jy0, jp0 = p.jac(t, y, args)
    n = p.n
    eye = _np.eye(n)
    rows: list[Any] = []
    srows: list[Any] = []
    for nj in _LIE_SEQUENCE:
        hj = h / nj
        try:
            winv = _np.linalg.inv(eye - hj * jy0)
        except _np.linalg.LinAlgError:
            return z, _np.full(n, _np.inf), None
        yi, si = y, S
        for i in range(nj):
            if i == 0:
                fi, jyi, jpi = f0, jy0, jp0
            elif S is None:
                fi = p.f(t + i * hj, yi, args)
            else:
                fi, jyi, jpi = p.jac(t + i * hj, yi, args)
            if S is not None:
                rs = jyi @ si
                rs[:, n:] += jpi
                si = si + winv @ (hj * rs)
            yi = yi + winv @ (hj * fi)
        rows.append([yi])
        srows.append([si])
        j = len(rows) - 1
        for k in range(1, j + 1):  # T[j][k] from T[j][k-1] and T[j-1][k-1]
            r = _LIE_SEQUENCE[j] / _LIE_SEQUENCE[j - k] - 1.0
            rows[j].append(rows[j][k - 1] + (rows[j][k - 1] - rows[j - 1][k - 1]) / r)
            if S is not None:
                srows[j].append(srows[j][k - 1] + (srows[j][k - 1] - srows[j - 1][k - 1]) / r)
    y_new = rows[-1][-1]
    err = y_new - rows[-1][-2]
    return _join(y_new, srows[-1][-1] if S is not None else None), err, None


_STEPPERS = {"rk45": (_dopri_step, 4), "rosenbrock": (_lie_step, 3), "ros2": (_ros2_step, 1)}


# -- the primitives ---------------------------------------------------------------------------
def _same(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(
        x.shape == y.shape and _np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b))


def _run(problem: _Problem, raws: Sequence[Any], sens: bool) -> tuple[Any, Any]:
    host = [_np.array(r, dtype=_np.float64) for r in raws]
    try:
        return problem.solve(host[0], host[1:], sens)
    except (ArithmeticError, _np.linalg.LinAlgError):  # OdeSolveError among them
        if problem.on_failure == "raise":
            raise
        T = len(problem.times)
        nan_s = _np.full((T, problem.n, problem.n_params), _np.nan) if sens else None
        return _np.full((T, problem.n), _np.nan), nan_s


_PENDING = 64  # solves whose sensitivities were computed ahead and not read since, at most


def _solve_kernel(*raws: Any, problem: _Problem) -> Any:
    """y at the times [T, *y0.shape]. Once sensitivities have been asked for, each solve
    computes them alongside and keeps them for the ``ode_sensitivities`` calls on the same
    inputs that follow (value and gradient of a log density: one call per differentiated
    argument; under ``vmap`` all the solves come before all the sensitivities). When
    ``_PENDING`` solves in a row go unread, that stops."""
    local = problem._local
    want = getattr(local, "want", False)
    ys, ss = _run(problem, raws, want)
    if want:
        _keep_sensitivities(local, [_np.array(r, dtype=_np.float64) for r in raws], ss, _PENDING)
    return ys.reshape((len(problem.times), *problem.y_shape))


def _keep_sensitivities(local: Any, inputs: list[Any], ss: Any, cap: int) -> None:
    """Keep a solve's sensitivities for the VJP that reads them (keyed by the exact inputs); when
    more than ``cap`` solves in a row go unread, stop computing them."""
    pending = local.pending
    pending.append((inputs, ss))
    local.unread += 1
    if local.unread > cap:
        pending.clear()
        local.want = False
    elif len(pending) > cap:
        del pending[0]


def _sens_kernel(*raws: Any, problem: _Problem) -> Any:
    """S [T, n, n_params]: dy(times)/d(y0, args), flattened in that order."""
    local = problem._local
    if not getattr(local, "want", False):
        local.want = True
        local.pending = []
        local.unread = 0
    host = [_np.array(r, dtype=_np.float64) for r in raws]
    pending = local.pending
    for k in range(len(pending) - 1, -1, -1):  # newest first: the solve just made
        inputs, ss = pending[k]
        if _same(inputs, host):
            local.unread = 0  # entries stay: each argument's VJP reads the same S
            return ss
    return _run(problem, raws, True)[1]


def _host_impl(kernel: Callable[..., Any]) -> Callable[..., Tensor]:
    def impl(*args: Tensor, problem: _Problem) -> Tensor:
        be = args[0].backend
        k = be.kernels.get(kernel.__name__)
        if k is not None:
            return be.wrap(k(*[a._raw_unchecked() for a in args], problem=problem))
        host = [_host(a) for a in args]  # a backend without the kernel (TF.js): the host's
        return _tensor(kernel(*host, problem=problem), be)

    return impl


_solve_prim = Primitive("ode_solve", _host_impl(_solve_kernel), kernel="ode_solve", kind="nary")
_sens_prim = Primitive("ode_sensitivities", _host_impl(_sens_kernel), kernel="ode_sensitivities",
                       kind="nary")
_solve_kernel.__name__ = "ode_solve"
_sens_kernel.__name__ = "ode_sensitivities"
register_kernel("numpy", "ode_solve", _solve_kernel)
register_kernel("numpy", "ode_sensitivities", _sens_kernel)


def _tf_constant(out: Any) -> Any:
    import tensorflow as tf  # optional: only reached on the TensorFlow backend

    return tf.constant(out)


def _through_numpy(kernel: Callable[..., Any], backend: str,
                   back: Callable[[Any], Any]) -> Callable[..., Any]:
    """``backend``'s kernel: the integrators are host algorithms on NumPy arrays, so its buffers
    cross to NumPy and the result goes back with ``back``; without NumPy (Pyodide's core) the
    python backend's buffers are python arrays, which the integrators take as they are."""
    def run(*raws: Any, problem: _Problem, **params: Any) -> Any:
        if _PURE:
            return back(kernel(*raws, problem=problem, **params))
        be = get_backend(backend)
        return back(kernel(*[be.to_numpy(r) for r in raws], problem=problem, **params))

    run.__name__ = kernel.__name__
    return run


for _name, _back in (("python", as_raw), ("tensorflow", _tf_constant)):
    register_kernel(_name, "ode_solve", _through_numpy(_solve_kernel, _name, _back))
    register_kernel(_name, "ode_sensitivities", _through_numpy(_sens_kernel, _name, _back))


def _vjp_rule(i: int) -> Callable[..., Any]:
    def rule(g: Any, ans: Any, *args: Any, problem: _Problem) -> Any:
        S = bind(_sens_prim, args, {"problem": problem})  # [T, n, P]
        sizes = [problem.n, *problem.arg_sizes]
        lo = sum(sizes[:i])
        T = len(problem.times)
        gs = reshape(g, (1, T * problem.n))
        s_i = reshape(S[:, :, lo:lo + sizes[i]], (T * problem.n, sizes[i]))
        shape = problem.y_shape if i == 0 else problem.arg_shapes[i - 1]
        return reshape(gs @ s_i, shape)

    return rule


def _set_rules(n_args: int) -> None:
    if len(_solve_prim.vjp_rules) < n_args:
        _solve_prim.defvjp(*[_vjp_rule(i) for i in range(n_args)])


_set_rules(16)  # at import: worker processes bind the primitive without calling ode_solve


def _solve_batch_kernel(*raws: Any, problem: _Problem, batched: tuple[bool, ...]) -> Any:
    """``ode_solve`` of a batch (vmap: a sampler's chains), y [B, T, *y0.shape]: rk45's members
    integrated together (:meth:`_Problem.solve_batch`), each as by its own solve; sensitivities
    computed ahead are kept per member, as :func:`_solve_kernel` keeps them."""
    size = next(r.shape[0] for r, bt in zip(raws, batched) if bt)
    host = [_np.array(r, dtype=_np.float64) for r in raws]
    examples = [[x[b] if bt else x for x, bt in zip(host, batched)] for b in range(size)]
    local = problem._local
    want = getattr(local, "want", False)
    try:
        y0s = _np.stack([ex[0].reshape(problem.n) for ex in examples])
        args = [_np.stack([ex[j] for ex in examples]) for j in range(1, len(host))]
        results = problem.solve_batch(y0s, args, want)
    except (ArithmeticError, _np.linalg.LinAlgError):  # e.g. overflow under errstate "raise"
        results = [_run(problem, ex, want) for ex in examples]
    T = len(problem.times)
    ys = _np.empty((size, T, problem.n))
    cap = max(_PENDING, 2 * size)
    for b, res in enumerate(results):
        if isinstance(res, OdeSolveError):
            if problem.on_failure == "raise":
                raise res
            res = (_np.full((T, problem.n), _np.nan),
                   _np.full((T, problem.n, problem.n_params), _np.nan) if want else None)
        ys[b] = res[0]
        if want:
            _keep_sensitivities(local, examples[b], res[1], cap)
    return ys.reshape((size, T, *problem.y_shape))


def _solve_batch_impl(*args: Tensor, problem: _Problem, batched: tuple[bool, ...]) -> Tensor:
    be = args[0].backend
    return be.wrap(_solve_batch_kernel(*[a._raw_unchecked() for a in args], problem=problem,
                                       batched=batched))


_solve_batch_prim = Primitive("ode_solve_batch", _solve_batch_impl, kernel="ode_solve_batch",
                              kind="nary")
_solve_batch_kernel.__name__ = "ode_solve_batch"
register_kernel("numpy", "ode_solve_batch", _solve_batch_kernel)
for _name, _back in (("python", as_raw), ("tensorflow", _tf_constant)):  # every backend's table
    register_kernel(_name, "ode_solve_batch", _through_numpy(_solve_batch_kernel, _name, _back))


def _plain(x: Any) -> bool:
    """A NumPy tensor with a value or one being staged (not under grad or jvp, which the
    batched primitive has no rules for)."""
    if getattr(getattr(x, "backend", None), "name", None) != "numpy":
        return False
    return not isinstance(x, Tracer) or type(x._trace).__name__ == "StagingTrace"


@batch_rule("ode_solve")
def _batch_solve(values: list[Any], batched: list[bool], size: int, *, prim: Primitive,
                 problem: _Problem) -> Any:
    """vmap of ``ode_solve``: rk45 integrates the batch together. Elsewhere (the stiff
    methods, grad or jvp inside the vmap, other backends), and where fn would be staged again
    for this batch size off the main thread (a host callback must not be called from a
    sampler's threads), one solve per member."""
    if (_PURE or problem.method != "rk45" or size < 2 or not all(map(_plain, values))
            or (size not in problem._aug_b
                and threading.current_thread() is not threading.main_thread())):
        return _loop(prim, values, batched, size, {"problem": problem})
    return bind(_solve_batch_prim, values, {"problem": problem, "batched": tuple(batched)})


def _host(t: Tensor) -> Any:
    """A tensor's values as a float64 array of the integrators' namespace."""
    if _PURE:
        return to_host(t, float)
    return _np.asarray(t.numpy(), dtype=_np.float64)


def _tensor(host: Any, backend: Any) -> Tensor:
    """A float64 tensor on ``backend`` from a host array (or scalar) of that namespace."""
    if _PURE:
        return to_tensor(host, "float64", backend)
    return tensor(host, dtype="float64", backend=backend)


def _in_model(x: Any) -> bool:
    while isinstance(x, Tracer):
        if type(x._trace).__name__ == "GraphTrace":  # graph/ sits above this module
            return True
        x = x._primal
    return False


def _stand_in(x: Tensor) -> Any:
    """Values of ``x``'s shape for staging fn: the ones under any tracers (under ``vmap`` they
    carry a batch axis: one example's worth of them)."""
    inner = x
    while isinstance(inner, Tracer):
        inner = inner._primal
    flat = _host(inner).reshape(-1)
    return flat[:math.prod(x.shape)].reshape(x.shape)


def ode_solve(fn: Callable[..., Any], y0: Any, times: Any, *args: Any, method: str = "rk45",
              t0: float | None = None, rtol: float = 1e-6, atol: float = 1e-6,
              max_steps: int = 100_000) -> Tensor:
    """Solve dy/dt = fn(t, y, *args) from y(t0) = y0; y at each of ``times``.

    ``fn(t, y, *args)`` is written with tensorbridge ops and returns dy/dt with ``y0``'s shape
    (``t`` is a 0-d float64 tensor). Returns a tensor of shape ``[len(times), *y0.shape]``.
    ``t0`` defaults to ``times[0]`` (then the first row is ``y0``); ``times`` must be
    increasing and not before ``t0``. Differentiable with respect to ``y0`` and ``args``
    (tensors; pass a model's parameters here rather than closing over them), not ``times``.
    ``method``: ``"rk45"`` (Dormand-Prince 5(4)) or, for stiff systems, ``"rosenbrock"``
    (linearly implicit Euler extrapolated to order 4; ``"bdf"`` is an alias) or ``"ros2"``.
    The error of each step is kept below ``atol + rtol * |y|`` (RMS
    over the components); ``max_steps`` bounds accepted plus rejected steps.
    """
    if not callable(fn):
        raise TypeError(f"ode_solve: fn must be a function fn(t, y, *args), got {type(fn)}")
    key = str(method).lower()
    if key not in METHODS:
        raise ValueError(f"ode_solve: method must be one of {sorted(METHODS)}, got {method!r}")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
            raise ValueError(f"ode_solve: {name} must be a positive number, got {v!r}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise ValueError(f"ode_solve: max_steps must be a positive integer, got {max_steps!r}")
    y0 = as_tensor(y0, "ode_solve: y0")
    if y0.dtype.name != "float64":
        y0 = y0.astype("float64")
    if isinstance(times, Tensor):
        if isinstance(times, Tracer):
            raise TypeError("ode_solve: times must be data (numbers), not a traced tensor: "
                            "gradients with respect to times are not supported")
        times = _host(times)
    tt = _np.asarray(times, dtype=_np.float64)
    if tt.ndim != 1 or tt.size == 0:
        raise ValueError(f"ode_solve: times must be a non-empty vector, got shape "
                         f"{list(tt.shape)}")
    if not _np.all(_np.isfinite(tt)):
        raise ValueError("ode_solve: times must be finite")
    if tt.size > 1 and not _np.all(_np.diff(tt) > 0):
        bad = int(_np.argmax(_np.diff(tt) <= 0))
        raise ValueError(f"ode_solve: times must be strictly increasing; times[{bad + 1}] = "
                         f"{tt[bad + 1]:g} follows times[{bad}] = {tt[bad]:g}")
    start = float(tt[0]) if t0 is None else float(t0)
    if tt[0] < start:
        raise ValueError(f"ode_solve: times[0] = {tt[0]:g} is before t0 = {start:g}")
    targs = []
    for i, a in enumerate(args):
        a = as_tensor(a, f"ode_solve: args[{i}]")
        if a.backend is not y0.backend:
            raise TypeError(f"ode_solve: args[{i}] is on backend {a.backend.name}, y0 on "
                            f"{y0.backend.name}")
        targs.append(a if a.dtype.name == "float64" else a.astype("float64"))
    # fn is staged on NumPy whatever the arrays' backend: the integrators run on NumPy arrays
    # (each backend's kernel crosses to NumPy and back); without NumPy on the python backend
    problem = _Problem(fn, tuple(y0.shape), [tuple(a.shape) for a in targs],
                       get_backend("python" if _PURE else "numpy"),
                       tuple(float(x) for x in tt), start, METHODS[key], float(rtol),
                       float(atol), max_steps,
                       "nan" if any(_in_model(x) for x in (y0, *targs)) else "raise")
    # stage fn and its Jacobian now, on the values underneath any tracers (read without
    # ending a staging: only shapes matter to the recording): fn's shape is checked here, and
    # a host callback (R, JavaScript) is not called again from a sampler's threads
    problem.times = _np.asarray(problem.times)
    values = [_stand_in(x) for x in (y0, *targs)]
    y_start = values[0].reshape(-1)
    problem.f(start, y_start, values[1:])
    if problem.method == "rk45":
        s_start = _np.zeros((problem.n, problem.n_params))
        problem.aug(start, _np.concatenate([y_start, s_start.reshape(-1)]), values[1:])
    else:
        problem.jac(start, y_start, values[1:])
    _set_rules(1 + len(targs))
    return bind(_solve_prim, (y0, *targs), {"problem": problem})
