"""The findings of the fuzz tests (known.py): the open ones still reproduce — a strict expected
failure — and the fixed ones keep the contract (regression cases).

Each open finding is let through by the fuzz tests (so the suite is green while its fix is
pending) and reproduced here from a small input.  When a fix lands the reproducer keeps the
contract, this test fails, and the id moves from ``OPEN`` to the fixed ones in known.py.
"""
from __future__ import annotations

import pytest

from harness import check, contract_problems
from known import FINDINGS, FIXED, KNOWN


@pytest.mark.parametrize("finding", KNOWN or [None], ids=lambda k: f"finding-{k.id}" if k else "none-open")
def test_open_finding_still_reproduces(harness, finding):
    if finding is None:
        pytest.skip("no open fuzz findings (tests/fuzz/known.py: OPEN is empty)")
    d = harness.scratch()
    argv, env = finding.reproduce(d, harness)
    slow = finding.slower_than
    o = harness.run(argv, d, env=env, **({"timeout": slow + 1.0} if slow else {}))
    if finding.slower_than is not None:
        assert o.seconds > finding.slower_than or o.deadline, (
            f"finding {finding.id} ({finding.what}) looks fixed (refused in {o.seconds:.2f} s): move it from OPEN "
            f"to fixed in tests/fuzz/known.py\n{o.describe()}")
        return
    bad = contract_problems(o)
    assert bad and finding.explains(o.describe()), (
        f"finding {finding.id} ({finding.what}) no longer reproduces: move it from OPEN to fixed in "
        f"tests/fuzz/known.py\n{o.describe()}")


@pytest.mark.parametrize("fid", sorted(FIXED), ids=lambda i: f"finding-{i}")
def test_fixed_finding_keeps_the_contract(harness, fid):
    d = harness.scratch()
    argv, env = FINDINGS[fid].reproduce(d, harness)
    o = harness.run(argv, d, env=env)
    check(o, what=f"finding {fid} ({FINDINGS[fid].what}), fixed")
    if FINDINGS[fid].slower_than is not None:              # room for a loaded machine, far below the old times
        assert o.seconds <= 4 * FINDINGS[fid].slower_than, o.describe()
