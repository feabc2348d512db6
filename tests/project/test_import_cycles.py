"""No import circle in the app (issue 37): no set of modules imports each other in a loop, counting
imports inside functions (they hide edges from import-linter, not from this graph).

Every ``import`` / ``from … import`` statement anywhere in a module of ``kernels``, ``cli`` and
``explorer`` is an edge to the module it names (``from pkg import name`` → ``pkg.name`` when that is
a module, else ``pkg``); a strongly connected component of more than one module is a circle."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import networkx as nx
from support.paths import ROOT

PACKAGES = ("kernels", "cli", "explorer")


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _known(name: str, mods) -> str:
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name


@functools.cache
def import_graph() -> nx.DiGraph:
    """The import graph of the checkout, made once a test process (both tests read it; neither
    modifies it)."""
    mods = modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = ".".join(base[: len(base) - (node.level - 1)])
                    base = f"{base}.{node.module}" if node.module else base
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for t in targets:
                t = _known(t, mods)
                if t and t != mod:
                    g.add_edge(mod, t)
    return g


def test_the_graph_sees_imports_inside_functions():
    g = import_graph()
    assert g.number_of_nodes() > 200 and g.has_edge("cli.flint", "cli.flint_options")
    # an import inside a function body (cli/graph_view.py imports the layouts lazily, for --help speed)
    assert g.has_edge("cli.graph_view", "kernels.graphs.layout")


def test_no_import_circles():
    circles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert not circles, "import circles: " + "; ".join(" ↔ ".join(c) for c in circles)
