"""No import circle inside zabmc/ and models/ (issue #35): every `import` and `from ... import`
of every module, at module level or inside a function (a lazy import only hides a circle), read
with the standard library's `ast`; the circles are networkx's strongly connected components of
that graph. A package's own `__init__` is not counted as imported by its submodules (Python
loads it first, but it is not a dependency the submodule chose)."""

from __future__ import annotations

import ast
import pathlib

import networkx as nx

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("zabmc", "models")



def _modules() -> dict:
    """module name -> (path, is a package's __init__)"""
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts.pop()
            out[".".join(parts)] = (path, is_pkg)
    return out


def _imports(name: str, path: pathlib.Path, is_pkg: bool, modules: dict) -> set:
    here = name if is_pkg else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules:  # `import a.b.c` of a name inside a module
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def import_graph() -> nx.DiGraph:
    modules = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(modules)
    for name, (path, is_pkg) in modules.items():
        for t in _imports(name, path, is_pkg, modules):
            if not name.startswith(t + "."):  # a submodule and its own package: not a choice
                g.add_edge(name, t)
    return g


def circles() -> list:
    return [frozenset(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]


def test_the_graph_sees_lazy_and_relative_imports():
    g = import_graph()
    assert g.has_edge("zabmc.cli.check", "zabmc.cli.options")  # module level
    assert g.has_edge("zabmc.explore.liveness", "zabmc.core.events")  # `from . import events`
    assert g.has_edge("zabmc.cli.check", "zabmc.report.console")  # inside a function


def test_no_import_circle_in_zabmc_and_models():
    found = [sorted(c) for c in circles()]
    assert found == [], f"import circles: {found}"


def test_no_function_over_80_lines_in_cli_and_explore():
    """Issue #35: the command line and the search engines stay readable, function by function
    (decorators excluded, docstrings included)."""
    long = []
    for sub in ("cli", "explore"):
        for path in sorted((ROOT / "zabmc" / sub).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = node.end_lineno - node.lineno + 1
                    if n > 80:
                        long.append(f"{path.name}:{node.lineno} {node.name} ({n} lines)")
    assert long == []
