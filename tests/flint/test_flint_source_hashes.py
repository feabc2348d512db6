"""Every source the Flint wing generates (NumPy, C, IS bytecode and source, TS CUDA, the adaptive
ensemble kernel and its twin, the SBML simulator's Python) hashes to the values recorded in
``tests/data/flint_source_hashes.json`` — the guard of behaviour-preserving refactors (issue 22: the
GPU paths cannot run here, but their sources can be compared byte for byte).

When a change of a generated source is intended, regenerate the file and commit it with the change,
saying why in the commit body::

    GSE_SBML_SUITE=../shared/sbml-test-suite python tests/support/flint_source_hashes.py \\
        --write tests/data/flint_source_hashes.json

(the script fixes PYTHONHASHSEED itself; without the SBML Test Suite the ``suite:`` entries are
left out of the check, so write the file where the suite is present)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from support.paths import DATA, TESTS

RECORDED = DATA / "flint_source_hashes.json"


def test_generated_sources_hash_as_recorded(tmp_path):
    out = tmp_path / "now.json"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    r = subprocess.run([sys.executable, str(TESTS / "support" / "flint_source_hashes.py"), "--write", str(out)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    now = json.loads(out.read_text())
    want = json.loads(RECORDED.read_text())
    suite_here = any(k.startswith("suite:") for k in now)
    expected = {k: v for k, v in want.items() if suite_here or not k.startswith("suite:")}
    missing = sorted(set(expected) - set(now))
    extra = sorted(set(now) - set(want))
    changed = sorted(k for k in expected if k in now and now[k] != expected[k])
    assert not missing and not extra and not changed, (
        f"{len(changed)} changed: {changed[:20]}; {len(missing)} missing: {missing[:10]}; "
        f"{len(extra)} new: {extra[:10]} (see this test's docstring to regenerate when intended)")
