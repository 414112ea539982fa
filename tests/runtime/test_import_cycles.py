"""No import cycles among tensorbridge's modules, beyond an explicit allowlist (issue 13).

The walk reads every module of ``tensorbridge`` (``package/``), ``tensorbridge.runtime``
(``runtime/``) and ``tensorbridge.bridge`` (``bridge/``) with ``ast`` and counts every import,
at module level and inside functions alike (a function-level import that hides a cycle is still
a cycle; imports under ``if TYPE_CHECKING:`` are the only ones left out). A cycle is a strongly
connected component of more than one module.

``ALLOWED`` lists the cycles that exist today, each as the exact set of its modules: a new cycle
fails, and so does an allowlisted one that grows or shrinks (update the entry when it shrinks).
The allowlist must shrink to empty: issue 13 asks for zero import cycles in ``runtime/`` and
``bridge/``; remove an entry as soon as its cycle is broken.

Two layering rules ride on the same walk. Imports of the package's own modules sit at module
level: a function-level one (relative, or ``tensorbridge...``) fails unless ``LAZY_ALLOWED``
lists it with its reason; only optional dependencies (TensorFlow, NumPy where it may be absent,
...) are imported inside functions. And ``runtime.graph`` imports nothing from ``runtime.ppl``
(the probabilistic layer is built on the graph; ``TYPE_CHECKING`` imports count here too).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

_R = "tensorbridge.runtime."

# Cycles tolerated for now, each as the exact set of its modules (issue 13 wants none).
ALLOWED: frozenset[frozenset[str]] = frozenset()

_B = "tensorbridge.bridge."
# Function-level imports of the package's own modules, as (importing module, imported module):
# each needs a reason below. Only an optional dependency (imported by the target at its module
# level) is one; a cycle is not (move the function to the layer that owns it instead).
LAZY_ALLOWED: dict[tuple[str, str], str] = {
    (_R + "compile", _R + "backends.tensorflow_function"):
        "TensorFlow is optional: tensorflow_function imports tensorflow at module level",
    (_B + "arrays", _B + "na_arrays"):
        "NumPy is optional in the bridge (Pyodide): na_arrays subclasses numpy.ma",
    (_R + "ppl.sampler", _R + "ppl.executors"):
        "NumPy is optional (Pyodide): the executors ship NumPy arrays to processes (parallel.py)",
    (_R + "ppl.parallel", _R + "ppl.compiled_density"):
        "cffi is optional: a worker without it reports why instead of failing to import",
    (_R + "ppl.sampler", _R + "ppl.compiled_density"):
        "NumPy and cffi are optional (Pyodide): the C density hands NumPy arrays to C",
    (_R + "ppl.compiled_chains", _R + "compiled.sampler"):
        "NumPy and cffi are optional (Pyodide): the C chains fill NumPy buffers",
    # ppl imports sbc and tasks at load (tb.sbc, tb.map), and ppl must load in Pyodide
    (_R + "ppl.sbc", _R + "ppl.executors"):
        "NumPy is optional (Pyodide): the executors ship NumPy arrays to processes (parallel.py)",
    (_R + "ppl.sbc", _R + "ppl.parallel"):
        "NumPy is optional (Pyodide): parallel.py imports NumPy at module level",
    (_R + "ppl.tasks", _R + "ppl.executors"):
        "NumPy is optional (Pyodide): the executors ship NumPy arrays to processes (parallel.py)",
    (_R + "ppl.tasks", _R + "ppl.parallel"):
        "NumPy is optional (Pyodide): parallel.py imports NumPy at module level",
}


def _package_dirs() -> dict[str, Path]:
    return {name: Path(importlib.import_module(name).__file__).parent
            for name in ("tensorbridge", "tensorbridge.runtime", "tensorbridge.bridge")}


def _modules() -> dict[str, Path]:
    dirs = _package_dirs()
    found: dict[str, Path] = {}
    for pkg, base in dirs.items():
        # an installed wheel nests runtime/ and bridge/ inside tensorbridge/: walk each once
        others = [d for p, d in dirs.items() if p != pkg and d != base and base in d.parents]
        for path in base.rglob("*.py"):
            if any(o in path.parents for o in others):
                continue
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            found[".".join([pkg, *parts])] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.Import):
                out.update(r for a in child.names if (r := resolve(a.name)))
            elif isinstance(child, ast.ImportFrom):
                base = here[: len(here) - (child.level - 1)] if child.level else []
                mod = ".".join([*base, child.module] if child.module else base)
                for a in child.names:
                    sub = f"{mod}.{a.name}"
                    r = sub if sub in known else resolve(mod)
                    if r:
                        out.add(r)
            visit(child)

    visit(tree)
    out.discard(name)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    comps.append(frozenset(comp))
    return comps


def _function_level_imports(name: str, path: Path, known: dict[str, Path],
                            ) -> list[tuple[int, str]]:
    """(line, imported module) for each import of a known module inside a function body."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit(sub, in_function)
                continue
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                # the same resolution as the cycle walk, on this one statement
                one = ast.Module(body=[child], type_ignores=[])
                out.extend((child.lineno, t) for t in sorted(_resolve(name, path, one, known)))
            visit(child, in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return out


def _resolve(name: str, path: Path, tree: ast.AST, known: dict[str, Path]) -> set[str]:
    """The known modules that every import in ``tree`` names (``TYPE_CHECKING`` ones too)."""
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(r for a in node.names if (r := resolve(a.name)))
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - (node.level - 1)] if node.level else []
            mod = ".".join([*base, node.module] if node.module else base)
            for a in node.names:
                sub = f"{mod}.{a.name}"
                r = sub if sub in known else resolve(mod)
                if r:
                    out.add(r)
    out.discard(name)
    return out


def _import_graph() -> dict[str, set[str]]:
    known = _modules()
    return {m: _imports_of(m, p, known) for m, p in known.items()}


def test_the_walk_sees_the_packages() -> None:
    graph = _import_graph()
    assert len(graph) > 50
    assert {"tensorbridge", _R + "tensor", "tensorbridge.bridge"} <= set(graph)
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [frozenset({"a", "b"})]


def test_function_level_imports_count(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    mod.write_text("from typing import TYPE_CHECKING\n"
                   "if TYPE_CHECKING:\n    from .t import T\n"
                   "def f():\n    from .g import h\n    from . import s\n")
    known = dict.fromkeys(["p", "p.m", "p.g", "p.s", "p.t"], mod)
    assert _imports_of("p.m", mod, known) == {"p.g", "p.s"}


def test_no_import_cycles_beyond_the_allowlist() -> None:
    found = set(_cycles(_import_graph()))
    new = [sorted(c) for c in found - ALLOWED]
    gone = [sorted(c) for c in ALLOWED - found]
    assert not new, (
        "import cycles not in the allowlist (break them: move what both sides need to a module "
        "below both, or inject it; an allowlisted cycle that grew shows here too): "
        + "; ".join(f"{len(c)}: {', '.join(c)}" for c in new))
    assert not gone, (
        "allowlisted cycles that no longer exist as listed (broken or shrunk): remove or shrink "
        "their ALLOWED entry: " + "; ".join(", ".join(c) for c in gone))


def test_function_level_imports_are_found(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    mod.write_text("import os\nfrom . import s\n"
                   "from typing import TYPE_CHECKING\n"
                   "if TYPE_CHECKING:\n    from .t import T\n"
                   "def f():\n    import json\n    from .g import h\n"
                   "    if TYPE_CHECKING:\n        from .t import T\n"
                   "class C:\n    def m(self):\n        from p import s\n")
    known = dict.fromkeys(["p", "p.m", "p.g", "p.s", "p.t"], mod)
    assert _function_level_imports("p.m", mod, known) == [(8, "p.g"), (13, "p.s")]


def test_own_modules_are_imported_at_module_level() -> None:
    """Issue 13: function-level imports only for optional dependencies (see LAZY_ALLOWED)."""
    known = _modules()
    found: dict[tuple[str, str], list[str]] = {}
    for name, path in sorted(known.items()):
        for line, target in _function_level_imports(name, path, known):
            found.setdefault((name, target), []).append(f"{path}:{line}")
    new = {k: v for k, v in found.items() if k not in LAZY_ALLOWED}
    assert not new, (
        "function-level imports of tensorbridge's own modules (import them at module level; "
        "if that makes a cycle, move the function to the layer that owns it; only an optional "
        "dependency may justify a LAZY_ALLOWED entry, with its reason): "
        + "; ".join(f"{', '.join(v)} imports {t}" for (_, t), v in new.items()))
    gone = sorted(set(LAZY_ALLOWED) - set(found))
    assert not gone, (
        "LAZY_ALLOWED entries with no such function-level import any more: remove them: "
        + "; ".join(f"{a} -> {b}" for a, b in gone))


def test_graph_imports_nothing_from_ppl() -> None:
    """runtime.graph sits below runtime.ppl: no import of ppl from graph, wherever it is."""
    known = _modules()
    bad = []
    for name, path in sorted(known.items()):
        if name == _R + "graph" or name.startswith(_R + "graph."):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            targets = _resolve(name, path, tree, known)
            bad += [f"{name} imports {t}" for t in sorted(targets)
                    if t == _R + "ppl" or t.startswith(_R + "ppl.")]
    assert not bad, "graph must not import ppl (issue 13 layering): " + "; ".join(bad)
