"""The import graph of zabmc/ and models/ (issues #35, #61): no circle, and no edge that
docs/architecture.md does not allow. Every `import` and `from ... import` of every module, at
module level or inside a function (a lazy import only hides a dependency), read with the standard
library's `ast`, and every string constant that names a module of the two packages (as
`importlib` is given one, `"pkg.module"` or `"pkg.module:attr"`); the circles are networkx's
strongly connected components of that graph. A package's own `__init__` is not counted as
imported by its submodules (Python loads it first, but it is not a dependency the submodule
chose)."""

from __future__ import annotations

import ast
import pathlib
import re

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


#: a string that names a module for importlib: "zabmc.explore.bfs" or "models.zk:MODEL"
_MODULE_STRING = re.compile(r"(?:zabmc|models)(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")


def _imports(name: str, path: pathlib.Path, is_pkg: bool, modules: dict) -> set:
    here = name if is_pkg else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and _MODULE_STRING.fullmatch(node.value):
            targets = [node.value.partition(":")[0]]
        elif isinstance(node, ast.Import):
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


def test_the_graph_sees_lazy_and_relative_imports_and_module_strings():
    g = import_graph()
    assert g.has_edge("zabmc.cli.check", "zabmc.cli.options")  # module level
    assert g.has_edge("zabmc.explore.liveness", "zabmc.core.events")  # `from zabmc.core import`
    assert g.has_edge("zabmc.core.events", "zabmc.core.model")  # `from .model import`
    assert g.has_edge("zabmc.cli.check", "zabmc.report.console")  # inside a function
    assert g.has_edge("zabmc.strategies", "zabmc.explore.bfs")  # "zabmc.explore.bfs:BFS"


def _allowed() -> dict:
    """unit -> the units it may import, from docs/architecture.md's table."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("<!-- allowed-imports: read by tests/test_imports.py -->")[1]
    block = block.split("<!-- end allowed-imports -->")[0].strip().strip("`").strip()
    out = {}
    for line in block.splitlines():
        unit, _, deps = line.partition(":")
        out[unit.strip()] = set(deps.split())
    return out


def _unit(module: str, units) -> str:
    """The longest unit that prefixes `module`; `models.*` makes each model package a unit."""
    parts = module.split(".")
    if parts[0] == "models" and len(parts) > 1 and "models." + parts[1] not in units:
        return "models.*"
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in units:
            return ".".join(parts[:k])
    raise AssertionError(f"{module} belongs to no unit of docs/architecture.md")


def _unit_name(module: str, units) -> str:
    unit = _unit(module, units)
    return "models." + module.split(".")[1] if unit == "models.*" else unit


def test_every_import_is_one_docs_architecture_allows():
    allowed = _allowed()
    bad = []
    for a, b in import_graph().edges():
        ua, ub = _unit(a, allowed), _unit(b, allowed)
        if _unit_name(a, allowed) == _unit_name(b, allowed):
            continue
        if ub not in allowed[ua]:
            bad.append(f"{a} -> {b}")
    assert bad == [], "imports docs/architecture.md does not allow: " + ", ".join(sorted(bad))


def test_the_architecture_test_fails_on_a_forbidden_edge():
    """The check above is not vacuous: the table forbids what the layering forbids."""
    allowed = _allowed()
    assert "zabmc.explore" not in allowed[_unit("zabmc.core.model", allowed)]
    assert "models.*" not in allowed[_unit("zabmc.explore.bfs", allowed)]
    assert "models.common" in allowed[_unit("models.zk.model", allowed)]
    assert _unit_name("models.zk.model", allowed) != _unit_name("models.zab.model", allowed)


def test_no_string_in_zabmc_names_a_model_module():
    """Issue #61: the core and the engines find models through the registry only
    (zabmc/core/registry.py); a string such as "models.zk:MODEL" would be an import no check
    sees."""
    g = import_graph()
    assert [(a, b) for a, b in g.edges() if a.startswith("zabmc") and b.startswith("models")] == []


def test_pyspark_and_kazoo_stay_at_their_edges():
    """pyspark only in zabmc.spark, kazoo only in zabmc.real (docs/architecture.md)."""
    where = {"pyspark": "zabmc.spark", "kazoo": "zabmc.real"}
    bad = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            mod = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                for n in names:
                    top = n.split(".")[0]
                    if top in where and not mod.startswith(where[top]):
                        bad.append(f"{mod} imports {n}")
    assert bad == []


def test_no_import_circle_in_zabmc_and_models():
    found = [sorted(c) for c in circles()]
    assert found == [], f"import circles: {found}"


def test_no_function_over_80_lines_in_zabmc_and_models():
    """Issues #35 and #61: the code stays readable, function by function (decorators excluded,
    docstrings included)."""
    long = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = node.end_lineno - node.lineno + 1
                    if n > 80:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} "
                                    f"({n} lines)")
    assert long == []
