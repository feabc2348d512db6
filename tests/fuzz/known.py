"""Findings of the fuzz tests that are still open (no tests here; test_fuzz_known.py runs them).

Each :class:`Known` names one broken contract the fuzzer found, by its signature (a regular
expression searched in the outcome's description: command line, status and stderr), and carries a
small reproducer.  :func:`harness.check` lets an outcome pass when it is explained by an *open*
finding, so the suite stays green while the fix is pending; test_fuzz_known.py runs every open
reproducer and fails once one no longer reproduces (like a strict xfail): then its id moves from
:data:`OPEN` to the fixed ones, whose reproducers are kept as regression cases.
The findings' full write-ups (input, output, owner) are in the report of issue 35.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import model_docs as M
import strategies as S


@dataclass(frozen=True)
class Known:
    id: int
    what: str
    signature: str                                       # regex over Outcome.describe()
    reproduce: Callable[..., tuple[list, dict]]          # (folder, harness) → (argv, environment)
    #: seconds beyond which the reproducer still shows the finding (a slow refusal; it runs with a
    #: deadline just past this), else None: it shows it when it breaks the contract as the signature says
    slower_than: float | None = None

    def explains(self, description: str) -> bool:
        return re.search(self.signature, description, re.S) is not None


def _sweep_csv(d: Path, header: bytes, extra: bytes = b"") -> list:
    cols = (b"point,seed,steps,t,mean_final,free_energy_final,length_scale_final,coarsening_exponent,"
            b"compute_seconds,backend,field,error,worker,task_seconds\n")
    f = d / "s.csv"
    if header:
        f.write_bytes(header + b"\n" + cols + extra)
    return ["ch-sweep", "--vary", "seed=1..3", "--size", "8", "--steps", "2", "--record-every", "1",
            "--scheduler", "none", "--quiet", "--json", "--csv", str(f), "--resume"]


def _f1(d: Path, harness):
    argv = _sweep_csv(d, b"")
    o = harness.run(argv[:-1] + ["--overwrite"], d)          # a real result file of this very sweep
    assert o.status == 0, o.describe()
    with open(d / "s.csv", "ab") as fh:
        fh.write(b"0," + b"9" * 200_000 + b"\n")
    return argv, {}


def _f2(d: Path, harness):
    return _sweep_csv(d, b'# gse-sweep {"task": "ch", "fixed": 1, "points": 3}'), {}


def _f3(d: Path, harness):
    import io
    import zipfile

    import numpy as np
    data = bytearray(S.zip_bytes({"t.npy": S.npy_bytes(np.array(0.0)), "phi.npy": S.npy_bytes(np.zeros((8, 8)))}))
    at = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("phi.npy").header_offset
    data[at + 3] = 0x05                                  # phi's local header signature, damaged
    (d / "f.npz").write_bytes(bytes(data))
    return ["ch", "--load", str(d / "f.npz"), "--steps", "1"], {}


def _f4(d: Path, harness):
    hdr = b"{'descr': '<f8', 'fortran_order': False, 'shape': (8, 8), }    ), }"
    hdr += b" " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + b"\n"
    (d / "f.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr + bytes(512))
    return ["ch", "--load", str(d / "f.npy"), "--steps", "1"], {}


def _sbml(d: Path, name: str, fdefs: str, rate: str, xval: str = "1") -> Path:
    math = '<math xmlns="http://www.w3.org/1998/Math/MathML">{}</math>'
    text = ('<?xml version="1.0" encoding="UTF-8"?>\n<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" '
            'level="3" version="2"><model id="m">' + fdefs +
            f'<listOfParameters><parameter id="x" value="{xval}" constant="false"/></listOfParameters>'
            '<listOfRules><rateRule variable="x">' + math.format(rate) + "</rateRule></listOfRules></model></sbml>")
    (d / name).write_text(text, encoding="utf-8")
    return d / name


def _f5(d: Path, harness):
    f = _sbml(d, "chain.xml", M.fdef_chain(40), "<apply><ci>f39</ci><ci>x</ci></apply>")
    return ["flint", str(f), "--t-end", "1", "--dt", "0.1"], {}


def _f6(d: Path, harness):
    f = _sbml(d, "nan.xml", "", "<apply><minus/><ci>x</ci></apply>", xval="nan")
    return ["flint", str(f), "--runtime", "sbml", "--t-end", "1", "--dt", "0.1"], {}


def _f8(d: Path, harness):
    """libcellml's analyser dies (SIGSEGV) on a comment before the name inside ``<ci>``."""
    f = d / "m.cellml"
    f.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<model xmlns="http://www.cellml.org/cellml/2.0#" '
                 'name="m"><component name="c"><variable name="t" units="dimensionless" '
                 'interface="public_and_private"/><variable name="x" units="dimensionless" initial_value="1" '
                 'interface="public_and_private"/><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/>'
                 "<apply><diff/><bvar><ci>t</ci></bvar><ci>x</ci></apply><apply><minus/><ci><!-- c -->x</ci></apply>"
                 "</apply></math></component></model>", encoding="utf-8")
    return ["flint", str(f), "--t-end", "0.5", "--dt", "0.1"], {}


def _f10(d: Path, harness):
    """libcellml's Model.hasUnresolvedImports() dies (SIGSEGV) when a variable's units are built
    from a units name that is not defined."""
    f = d / "m.cellml"
    f.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<model xmlns="http://www.cellml.org/cellml/2.0#" '
                 'name="m"><units name="per_s"><unit units="nosuch" exponent="-1"/></units><component name="c">'
                 '<variable name="t" units="dimensionless" interface="public_and_private"/><variable name="x" '
                 'units="per_s" initial_value="1" interface="public_and_private"/><math '
                 'xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/><apply><diff/><bvar><ci>t</ci></bvar>'
                 "<ci>x</ci></apply><apply><minus/><ci>x</ci></apply></apply></math></component></model>",
                 encoding="utf-8")
    return ["flint", str(f), "--t-end", "0.5", "--dt", "0.1"], {}


def _f11(d: Path, harness):
    """libcellml's Analyser dies (SIGSEGV) on an ``<apply>`` whose first child is not an operator
    (an equation that lost its ``<eq/>``)."""
    f = d / "m.cellml"
    f.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<model xmlns="http://www.cellml.org/cellml/2.0#" '
                 'name="m"><component name="c"><variable name="t" units="dimensionless" '
                 'interface="public_and_private"/><variable name="x" units="dimensionless" initial_value="1" '
                 'interface="public_and_private"/><variable name="y" units="dimensionless" '
                 'interface="public_and_private"/><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/>'
                 "<apply><diff/><bvar><ci>t</ci></bvar><ci>x</ci></apply><apply><minus/><ci>x</ci></apply></apply>"
                 "<apply><ci>y</ci><apply><minus/><ci>x</ci></apply></apply></math></component></model>",
                 encoding="utf-8")
    return ["flint", str(f), "--t-end", "0.5", "--dt", "0.1"], {}


def _f9(d: Path, harness):
    """The SBML reference simulator integrates dx/dt = 256x + 255 (an 8-deep function-definition
    chain) for tens of seconds before "too many steps"."""
    f = _sbml(d, "grow.xml", M.fdef_chain(8), "<apply><ci>f7</ci><ci>x</ci></apply>", xval="1e-243")
    return ["flint", str(f), "--runtime", "sbml", "--t-end", "1", "--dt", "0.1"], {}


def _f7(d: Path, harness):
    return ["flint", str(S_MODEL), "--t-end", "0.5", "--dt", "0.1", "--max-model-mb", "64"], {}


S_MODEL = Path(__file__).resolve().parents[2] / "resources" / "models" / "luo_rudy_1991.flint"


#: every finding, by id as in the issue-35 report (the write-ups: input, output, owner)
FINDINGS: dict[int, Known] = {k.id: k for k in (
    Known(1, "sweep CSV cell > 128 KiB: csv.Error", r"status: 2 .*error: Error: field larger than field limit", _f1),
    Known(2, "sweep CSV identity of the wrong JSON type",
          r"status: 2 .*error: (TypeError|AttributeError): "
          r".*(not iterable|has no attribute 'get'|not supported between)", _f2),
    Known(3, ".npz member with a damaged local header: BadZipFile",
          r"status: 2 .*error: BadZipFile: Bad magic number for file header", _f3),
    Known(4, ".npy header numpy's tokenizer rejects: TokenError", r"status: 2 .*error: TokenError: ", _f4),
    Known(5, "function-definition chain refused only after seconds of inlining",
          r"deadline: True .*expands to more than [\d,]+ expression nodes", _f5, slower_than=2.0),
    Known(6, "SBML non-finite initial value with --runtime sbml: scipy ValueError",
          r"status: 2 .*error: ValueError: All components of the initial state", _f6),
    Known(8, "libcellml segfaults on a comment inside <ci> (the worker dies)",
          r"argv: \['flint', '[^']*/m\.(cellml|xml)'.*died: -11", _f8),
    Known(10, "libcellml segfaults on units built from an undefined units name (the worker dies)",
          r"argv: \['flint', '[^']*/m\.(cellml|xml)'.*died: -11", _f10),
    Known(11, "libcellml segfaults on an <apply> without an operator (the worker dies)",
          r"argv: \['flint', '[^']*/m\.(cellml|xml)'.*died: -11", _f11),
    Known(9, "SBML reference simulator runs tens of seconds on an exponentially growing rate before refusing",
          r"argv: \['flint', [^\]]*'--runtime', 'sbml'.*deadline: True", _f9, slower_than=3.0),
    Known(7, "flint --max-model-mb / --allow-outside-references write os.environ: a later command inherits them",
          r"environment changed: \[[^\]]*'GSE_(MAX_MODEL_MB|ALLOW_OUTSIDE_REFERENCES)'", _f7),
)}
#: the findings still open: let through by the fuzz tests, reproduced by test_fuzz_known.py; move an
#: id to FIXED when its fix lands (the test says so)
OPEN: set[int] = set()
#: the fixed ones: their reproducers keep the contract (regression cases)
FIXED = set(FINDINGS) - OPEN
KNOWN = [FINDINGS[i] for i in sorted(OPEN)]


def explained(description: str) -> Known | None:
    """The open finding that explains this broken contract, if any."""
    return next((k for k in KNOWN if k.explains(description)), None)
