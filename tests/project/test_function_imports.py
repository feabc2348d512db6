"""Imports inside functions say why (issue 37): a module of ``kernels``, ``cli`` or ``explorer`` that
imports anything inside a function body has exactly one comment line starting
``# Imports inside functions:`` with its module-level imports (before its first function or class),
giving the reason: keeping ``--help`` or the app's start fast, or an optional library (CuPy, SciPy,
libcellml …) optional.  A module without such imports has no such comment (it would be stale)."""
from __future__ import annotations

import ast
from pathlib import Path

from support.paths import ROOT

PACKAGES = ("kernels", "cli", "explorer")
MARK = "# Imports inside functions:"



def function_imports(tree: ast.AST) -> list[int]:
    """Line numbers of the import statements inside function bodies (at any depth)."""
    out = []

    def visit(node, inside):
        for child in ast.iter_child_nodes(node):
            if inside and isinstance(child, (ast.Import, ast.ImportFrom)):
                out.append(child.lineno)
            visit(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return out


def problems(text: str) -> list[str]:
    """What is wrong with one module's source: the comment missing, repeated, placed after the first
    function or class, or present without any import inside a function."""
    tree = ast.parse(text)
    inside = function_imports(tree)
    marks = [i for i, line in enumerate(text.splitlines(), 1) if line.startswith(MARK)]
    first_def = min((n.lineno for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                   ast.ClassDef))), default=None)
    if inside and not marks:
        return [f"imports inside functions (line {inside[0]}) without a '{MARK} <why>' comment"]
    if not inside and marks:
        return [f"'{MARK}' comment (line {marks[0]}) but no import inside a function"]
    out = []
    if len(marks) > 1:
        out.append(f"{len(marks)} '{MARK}' comments (lines {marks}); one per module")
    if marks and first_def is not None and marks[0] > first_def:
        out.append(f"the '{MARK}' comment (line {marks[0]}) is below the first function or class "
                   f"(line {first_def}); put it with the module-level imports")
    return out


def modules() -> dict[str, Path]:
    return {p.relative_to(ROOT).as_posix(): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def test_the_check_finds_a_missing_stale_or_misplaced_comment():
    bare = "import os\n\n\ndef f():\n    import json\n    return json\n"
    assert problems(bare) and "without" in problems(bare)[0]
    said = f"{MARK} keep --help fast.\nimport os\n\n\ndef f():\n    import json\n    return json\n"
    assert problems(said) == []
    stale = said.replace("    import json\n", "")
    assert "but no import inside a function" in problems(stale)[0]
    late = "import os\n\n\ndef f():\n    import json\n    return json\n" + MARK + " why\n"
    assert "below the first function" in problems(late)[0]
    twice = MARK + " a\n" + said
    assert "one per module" in problems(twice)[0]
    nested = "class A:\n    def m(self):\n        def g():\n            from . import x\n        return g\n"
    assert problems(nested) and function_imports(ast.parse(nested)) == [4]


def test_every_module_with_imports_inside_functions_says_why():
    bad = [f"{name}: {why}" for name, path in modules().items()
           for why in problems(path.read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)
