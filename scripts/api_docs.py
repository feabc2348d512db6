"""Build the API reference of ``kernels/`` from its docstrings with pdoc:

    python scripts/api_docs.py              # writes docs/api/ (open docs/api/index.html)
    python scripts/api_docs.py -o /tmp/api  # elsewhere

The same as ``python -m pdoc kernels -o docs/api`` with the project's options (Markdown
docstrings, no search index of the sources), run from the checkout so ``kernels`` is the one in
this tree.  pdoc imports each module: kernels/ imports no Qt, and CuPy stays optional.  Exit
status 2 with one ``error:`` line when pdoc is missing or a module cannot be documented.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build(out: Path) -> Path:
    """Write the reference of every module of ``kernels`` under ``out``; returns its index."""
    import pdoc
    import pdoc.render
    sys.path.insert(0, str(ROOT))
    pdoc.render.configure(docformat="markdown", show_source=False, search=True)
    pdoc.pdoc(*modules(), output_directory=out)
    return out / "index.html"


def modules() -> list[str]:
    """Every module of ``kernels`` (named: a package's ``__all__`` would hide the others)."""
    import pkgutil
    sys.path.insert(0, str(ROOT))
    import kernels
    return ["kernels"] + sorted(m.name for m in pkgutil.walk_packages(kernels.__path__, "kernels."))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default=str(ROOT / "docs" / "api"), help="output folder (default docs/api)")
    a = ap.parse_args(argv)
    try:
        index = build(Path(a.output))
    except ImportError as exc:
        print(f"error: pdoc is not installed ({exc}); pip install pdoc", file=sys.stderr)
        return 2
    except Exception as exc:      # noqa: BLE001 — one error line, as every command of this project
        print(f"error: could not build the API reference: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(index)
    return 0


if __name__ == "__main__":
    sys.exit(main())
