"""The C build cache: one compile per machine, safe across processes, clear errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tensorbridge.runtime.compiled import build

pytestmark = pytest.mark.skipif(build.compiler_available() is not None,
                                reason=f"no C here: {build.compiler_available()}")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORBRIDGE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "_loaded", {})
    return tmp_path / "c"


def test_compiles_once_then_loads_from_disk_in_another_process(cache):
    src = "double tb_twice(double x) { return 2.0 * x; }"
    mod = build.compile_module("twice", "double tb_twice(double x);", src)
    assert not mod.cached and mod.compile_seconds > 0
    assert mod.lib.tb_twice(1.25) == 2.5
    assert mod.path.parent == cache and mod.path.exists()
    child = textwrap.dedent(f"""
        from tensorbridge.runtime.compiled.build import compile_module
        m = compile_module("twice", "double tb_twice(double x);", {src!r})
        print(m.cached, m.compile_seconds, m.lib.tb_twice(4.0))
    """)
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                         env={**__import__("os").environ, "TENSORBRIDGE_CACHE_DIR":
                              str(cache.parent)}, check=True)
    assert out.stdout.split() == ["True", "0.0", "8.0"]
    assert [p.name for p in cache.iterdir() if p.name.startswith("_tb_twice")] == [
        mod.path.name]  # no leftover build directories either
    assert not [p for p in cache.iterdir() if p.name.startswith("build-")]


def test_a_changed_source_is_a_new_module(cache):
    a = build.compile_module("k", "int tb_k(void);", "int tb_k(void) { return 1; }")
    b = build.compile_module("k", "int tb_k(void);", "int tb_k(void) { return 2; }")
    assert a.path != b.path and (a.lib.tb_k(), b.lib.tb_k()) == (1, 2)


def test_a_compile_error_names_the_module_and_the_problem(cache):
    with pytest.raises(RuntimeError, match="compiling _tb_broken_"):
        build.compile_module("broken", "int tb_broken(void);", "int tb_broken(void) { return }")


def test_module_names_are_checked():
    with pytest.raises(ValueError, match="name: expected letters"):
        build.compile_module("no/slashes", "", "")


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("TENSORBRIDGE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert build.cache_dir() == tmp_path / "tensorbridge" / "c"
