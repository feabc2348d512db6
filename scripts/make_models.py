"""Regenerate the shipped benchmark models in resources/models (deterministic: seeded builders).

    .venv/bin/python scripts/make_models.py          # write all
    .venv/bin/python scripts/make_models.py --check  # only report what would change

Writes, from kernels/flint/catalog.py (paper 004 Table 5.1 models, flattened):
wang_buzsaki_1996, rybak_2006, lr_ring_80, lr_100 as .flint (native), .xml (SBML L3V2 via
kernels.flint.sbml.write_sbml) and .cellml (CellML 2.0 via kernels.flint.cellml.write_cellml);
mix.flint (its SBML/CellML exceed the ~3 MB limit and stay generated on demand); and
luo_rudy_1991.cellml from the hand-written luo_rudy_1991.flint.  XML indentation is dropped
(one element a line) to keep the files small; the content is what the writers produce.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernels.flint.catalog import build  # noqa: E402
from kernels.flint.cellml import write_cellml  # noqa: E402
from kernels.flint.loaders import MODELS_DIR, load_model  # noqa: E402
from kernels.flint.sbml import write_sbml  # noqa: E402

MAX_BYTES = 3_200_000
#: file stem → catalog name
SHIPPED = {"wang_buzsaki_1996": "wang", "rybak_2006": "rybak", "lr_ring_80": "lr-ring", "lr_100": "lr-100",
           "mix": "mix"}


def _compact(xml: str) -> str:
    return re.sub(r">\n[ \t]+<", ">\n<", xml)


def outputs() -> dict[str, str]:
    out: dict[str, str] = {}
    lr = load_model(MODELS_DIR / "luo_rudy_1991.flint")
    out["luo_rudy_1991.cellml"] = _compact(write_cellml(lr))
    for stem, name in SHIPPED.items():
        m = build(name)
        out[f"{stem}.flint"] = m.to_text()
        for ext, writer in ((".xml", write_sbml), (".cellml", write_cellml)):
            text = _compact(writer(m))
            if len(text.encode()) <= MAX_BYTES:
                out[f"{stem}{ext}"] = text
            else:
                print(f"  {stem}{ext}: {len(text.encode()) / 1e6:.1f} MB > {MAX_BYTES / 1e6:.1f} MB, not shipped "
                      f"(load_model({name!r}) builds it)")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report differences, write nothing")
    a = ap.parse_args(argv)
    changed = 0
    for fname, text in outputs().items():
        p = MODELS_DIR / fname
        old = p.read_text(encoding="utf-8") if p.exists() else None
        same = old == text
        changed += not same
        print(f"{'same   ' if same else ('differs' if a.check else 'wrote  ')} {fname} ({len(text.encode()) / 1e6:.2f} MB)")
        if not same and not a.check:
            p.write_text(text, encoding="utf-8")
    return 1 if (a.check and changed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
