"""Process settings for sampling: ``sampling_tuning()`` = ``single_threaded_blas()`` +
``retain_freed_memory()``.

``single_threaded_blas()``: run NumPy's OpenBLAS on one thread for a while.

The samplers' matrix products are small (chains x data x coefficients: a few hundred thousand
multiply-adds per gradient), where OpenBLAS's threads cost more than they save — 1.5-3x slower
on an idle two-core machine, several times slower when other processes compete for the cores.
NumPy exposes no setting, so this calls OpenBLAS's own ``openblas_set_num_threads`` (as
threadpoolctl does) and restores the previous count afterwards; where the library cannot be
found (another BLAS, no NumPy, not Linux) it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator
from typing import Any

__all__ = ["retain_freed_memory", "sampling_tuning", "single_threaded_blas"]

_API: list[tuple[Any, Any]] | None = None


def _openblas() -> list[tuple[Any, Any]]:
    """(get, set) thread-count functions of every OpenBLAS loaded in this process."""
    global _API
    if _API is not None:
        return _API
    found: list[tuple[Any, Any]] = []
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower()
                            and "/" in line})
    except OSError:
        paths = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for suffix in ("64_", ""):  # NumPy's wheels build the ILP64 library with a suffix
            get = getattr(lib, f"openblas_get_num_threads{suffix}", None)
            set_ = getattr(lib, f"openblas_set_num_threads{suffix}", None)
            if get is not None and set_ is not None:
                get.restype = ctypes.c_int
                set_.argtypes = [ctypes.c_int]
                found.append((get, set_))
                break
    _API = found
    return found


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    try:
        api = _openblas()
        before = [get() for get, _ in api]
        for _, set_ in api:
            set_(1)
    except Exception:  # never let a tuning knob break sampling
        api, before = [], []
    try:
        yield
    finally:
        for (_, set_), n in zip(api, before):
            set_(n)


_RETAINED = False


def retain_freed_memory() -> None:
    """Keep freed memory in the C heap instead of returning it to the system (glibc only; once
    per process; elsewhere nothing).

    A gradient over data allocates temporaries of a few hundred kilobytes per operation (chains x
    observations). glibc serves blocks that large with fresh mmap()s, or trims the heap when they
    are freed, depending on its allocation history, so every operation may page-fault its memory
    in again: the same run of the same model was measured 3x slower in one process than in
    another. Fixed thresholds (32 MB, glibc's largest mmap threshold) make it always the fast
    case, at the cost of the process keeping up to that much freed memory.
    """
    global _RETAINED
    if _RETAINED:
        return
    _RETAINED = True
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 64 << 20)


@contextlib.contextmanager
def sampling_tuning() -> Iterator[None]:
    """What ``mcmc()`` runs under: one BLAS thread and freed memory kept in the heap."""
    retain_freed_memory()
    with single_threaded_blas():
        yield
