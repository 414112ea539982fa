"""Warmup adaptation as in Stan: dual-averaging step size (Hoffman & Gelman 2014) and a diagonal
inverse metric learned in doubling windows (75-iteration initial buffer, windows of 25, 50, 100…,
50-iteration terminal buffer), regularised towards 1e-3 and followed by a step-size restart.
Every quantity is per chain."""

from __future__ import annotations

import math

from ..host_namespace import xp
from .hamiltonian import PhasePoint, Target, hamiltonian, leapfrog

__all__ = ["DualAveraging", "WindowSchedule", "Welford", "find_reasonable_step"]


class DualAveraging:
    def __init__(self, step: xp.ndarray, target_accept: float = 0.8, gamma: float = 0.05,
                 t0: float = 10.0, kappa: float = 0.75) -> None:
        self.delta, self.gamma, self.t0, self.kappa = target_accept, gamma, t0, kappa
        self.restart(step)

    def restart(self, step: xp.ndarray) -> None:
        self.mu = xp.log(10.0 * step)
        self.s_bar = xp.zeros_like(step)
        self.x_bar = xp.zeros_like(step)
        self.counter = 0

    def update(self, accept_stat: xp.ndarray) -> xp.ndarray:
        """Feed one iteration's acceptance statistic; returns the next step size."""
        self.counter += 1
        a = xp.minimum(xp.nan_to_num(accept_stat, nan=0.0), 1.0)
        eta = 1.0 / (self.counter + self.t0)
        self.s_bar = (1 - eta) * self.s_bar + eta * (self.delta - a)
        x = self.mu - self.s_bar * math.sqrt(self.counter) / self.gamma
        x_eta = self.counter ** (-self.kappa)
        self.x_bar = x_eta * x + (1 - x_eta) * self.x_bar
        return xp.exp(x)

    def final(self) -> xp.ndarray:
        return xp.exp(self.x_bar)


class Welford:
    """Running mean and variance per chain and coordinate."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self.n = 0
        self.mean = xp.zeros(shape)
        self.m2 = xp.zeros(shape)

    def add(self, x: xp.ndarray) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    def variance(self) -> xp.ndarray:
        return self.m2 / max(self.n - 1, 1)


class WindowSchedule:
    """Stan's windowed-adaptation schedule for ``num_warmup`` iterations."""

    def __init__(self, num_warmup: int, init_buffer: int = 75, term_buffer: int = 50,
                 base_window: int = 25) -> None:
        self.num_warmup = num_warmup
        self.enabled = num_warmup >= 20
        if init_buffer + base_window + term_buffer > num_warmup:
            init_buffer = int(0.15 * num_warmup)
            term_buffer = int(0.1 * num_warmup)
            base_window = num_warmup - (init_buffer + term_buffer)
        self.init_buffer, self.term_buffer = init_buffer, term_buffer
        self.window_size = base_window
        self.next_window_end = init_buffer + base_window - 1

    def in_window(self, i: int) -> bool:
        return (self.enabled and self.init_buffer <= i < self.num_warmup - self.term_buffer)

    def window_ends(self, i: int) -> bool:
        """True at the last iteration of a window; advances to the next window."""
        if not self.enabled or i != self.next_window_end or i == self.num_warmup:
            return False
        last = self.num_warmup - self.term_buffer - 1
        if self.next_window_end != last:
            self.window_size *= 2
            self.next_window_end = i + self.window_size
            if self.next_window_end != last and self.next_window_end + 2 * self.window_size > last:
                self.next_window_end = last
        return True


def regularised_variance(w: Welford) -> xp.ndarray:
    n = w.n
    return (n / (n + 5.0)) * w.variance() + 1e-3 * (5.0 / (n + 5.0))


def find_reasonable_step(z: PhasePoint, step: xp.ndarray, inv_metric: xp.ndarray,
                         target: Target, rng: xp.random.Generator,
                         max_rounds: int = 100) -> xp.ndarray:
    """Stan's heuristic: double or halve each chain's step until one leapfrog step's acceptance
    crosses 0.8."""
    step = step.copy()
    b, n = z.q.shape
    log08 = math.log(0.8)

    def delta_h(eps: xp.ndarray) -> xp.ndarray:
        p = rng.standard_normal((b, n)) / xp.sqrt(inv_metric)
        zz = PhasePoint(z.q, p, z.logp, z.grad)
        h0 = hamiltonian(zz, inv_metric)
        h = hamiltonian(leapfrog(zz, eps, inv_metric, target), inv_metric)
        return h0 - h

    direction = xp.where(delta_h(step) > log08, 1.0, -1.0)
    done = xp.zeros(b, dtype=bool)
    for _ in range(max_rounds):
        dh = delta_h(step)
        stop = xp.where(direction > 0, ~(dh > log08), ~(dh < log08))
        done |= stop
        if done.all():
            break
        # only a chain still searching moves (and is kept within bounds): a finished chain's
        # step must not depend on its batch, as in the compiled sampler, one chain at a time
        moved = xp.clip(xp.where(direction > 0, step * 2.0, step * 0.5), 1e-10, 1e7)
        step = xp.where(done, step, moved)
    return step
