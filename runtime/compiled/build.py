"""Build C sources into Python extension modules with cffi (API mode), cached on disk.

A module's file name carries a hash of everything that decides its machine code (the C
declarations and source, compiler flags and libraries, the compiler's identity, the Python
ABI and cffi's version), so a program compiles once per machine and is loaded from the cache
afterwards, by any process. Builds go to a private temporary directory and are moved into the
cache with one ``os.replace``: processes compiling the same module at once do not see half a
file.

The cache directory is ``$TENSORBRIDGE_CACHE_DIR/c`` when that is set, else
``$XDG_CACHE_HOME/tensorbridge/c`` (default ``~/.cache/tensorbridge/c``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CompiledModule", "cache_dir", "compile_module", "compiler_available"]

# -O2 without -march: the cache may sit on a disk shared by different x86-64 machines, and
# FP contraction off so that a * b + c rounds twice, as NumPy's separate kernels do
DEFAULT_FLAGS = ("-O2", "-std=c99", "-fno-fast-math", "-ffp-contract=off")

_lock = threading.Lock()  # one build at a time per process; the loaded modules are shared
_loaded: dict[str, CompiledModule] = {}


@dataclass(frozen=True)
class CompiledModule:
    """A loaded extension: its cffi ``ffi`` and ``lib``, where it lives, and what it cost."""

    name: str
    ffi: Any
    lib: Any
    path: Path
    compile_seconds: float  # 0.0 when it came from the cache
    cached: bool


def cache_dir() -> Path:
    """Where compiled modules are kept (created on first use)."""
    root = os.environ.get("TENSORBRIDGE_CACHE_DIR")
    if root:
        base = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "tensorbridge"
    return base / "c"


@functools.lru_cache(maxsize=1)
def _compiler_identity() -> str:
    """The C compiler's name and version line: a new compiler gets new cache entries."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    exe = shutil.which(cc.split()[0]) if cc else None
    if exe is None:
        return f"missing:{cc}"
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
        first = out.stdout.splitlines()[0] if out.stdout else ""
    except (OSError, subprocess.SubprocessError):
        first = ""
    return f"{cc}|{first}"


def _key(name: str, cdef: str, source: str, flags: tuple[str, ...],
         libraries: tuple[str, ...]) -> str:
    import cffi

    h = hashlib.sha256()
    for part in (name, cdef, source, " ".join(flags), " ".join(libraries), _compiler_identity(),
                 sysconfig.get_config_var("EXT_SUFFIX") or "", sys.version, cffi.__version__,
                 platform.machine()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def _load(modname: str, path: Path) -> Any:
    loader = importlib.machinery.ExtensionFileLoader(modname, str(path))
    spec = importlib.util.spec_from_file_location(modname, str(path), loader=loader)
    if spec is None:  # pragma: no cover - only for a path the loader cannot read
        raise ImportError(f"cannot load compiled module {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def compile_module(name: str, cdef: str, source: str, *,
                   extra_compile_args: tuple[str, ...] | list[str] = (),
                   libraries: tuple[str, ...] | list[str] = ("m",)) -> CompiledModule:
    """Compile (or load from the cache) C ``source`` exposing the declarations ``cdef``.

    ``name``: a short identifier for the module (letters, digits, underscores), part of its
    file name. Raises ``RuntimeError`` naming the compiler's complaint when the build fails.
    """
    if not name.replace("_", "").isalnum():
        raise ValueError(f"name: expected letters, digits and underscores, got {name!r}")
    flags = (*DEFAULT_FLAGS, *extra_compile_args)
    libs = tuple(libraries)
    modname = f"_tb_{name}_{_key(name, cdef, source, flags, libs)}"
    with _lock:
        hit = _loaded.get(modname)
        if hit is not None:
            return hit
        directory = cache_dir()
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        path = directory / f"{modname}{suffix}"
        seconds, cached = 0.0, path.exists()
        if not cached:
            seconds = _build(modname, cdef, source, flags, libs, directory, path)
        module = _load(modname, path)
        built = CompiledModule(name, module.ffi, module.lib, path, seconds, cached)
        _loaded[modname] = built
        return built


def _build(modname: str, cdef: str, source: str, flags: tuple[str, ...],
           libs: tuple[str, ...], directory: Path, path: Path) -> float:
    import cffi

    directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="build-", dir=directory) as tmp:
        ffi = cffi.FFI()
        ffi.cdef(cdef)
        ffi.set_source(modname, source, libraries=list(libs), extra_compile_args=list(flags))
        try:
            built = ffi.compile(tmpdir=tmp, verbose=False)
        except Exception as e:  # cffi.VerificationError, distutils/setuptools errors
            raise RuntimeError(f"compiling {modname} failed: {e}") from None
        os.replace(built, path)  # atomic: concurrent builders of one module both succeed
    return time.perf_counter() - start


_PROBE = "int tb_probe(int x) { return x + 1; }"


@functools.lru_cache(maxsize=1)
def compiler_available() -> str | None:
    """None when C code can be compiled and loaded here, else the reason (one line)."""
    try:
        import cffi  # noqa: F401
    except ImportError:
        return "cffi is not installed (pip install cffi)"
    if os.environ.get("TENSORBRIDGE_NO_C"):
        return "TENSORBRIDGE_NO_C is set"
    if _compiler_identity().startswith("missing:"):
        return f"no C compiler found ({_compiler_identity()[8:]}; install gcc or set CC)"
    try:
        mod = compile_module("probe", "int tb_probe(int x);", _PROBE)
        if mod.lib.tb_probe(41) != 42:  # pragma: no cover - a broken toolchain
            return "the C compiler produced a module that computes wrong results"
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return f"the C compiler does not work here: {first}"
    return None
