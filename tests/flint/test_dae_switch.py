"""A DAE whose algebraic equation switches branch (SBML Test Suite 01568 / 01570: a fast reaction's rate
`piecewise(S1·k, k > 0, S2·k)` with k = 5.5 − t or k' = −1): every Rodas4 step across the switch is
rejected (the algebraic solution jumps there), so a rejected step whose end has the watch switched is
cut to just past the switch (rosenbrock.switch_in / ro_switch_in).  The twin and the kernel's host build
pass both cases by the suite's rule and agree bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import hostcc
from kernels.flint.ensemble.rodas_gpu import integrate_device, stiff_problem
from kernels.flint.ensemble.rosenbrock import StiffProblem, integrate, simulate_file
from kernels.flint.sbml import conformance as suite
from kernels.flint.sbml.core import lower_system
from support.paths import SUITE

CASES = ["01568", "01570"]


def _cases():
    if not (SUITE / "cases").is_dir():
        pytest.skip(f"SBML Test Suite not found at {SUITE}")
    return suite.discover(SUITE, CASES)


def test_twin_passes_the_switching_cases():
    outs = [suite.run_case(c, simulate_file) for c in _cases()]
    assert [o.status for o in outs] == ["passed"] * 2, [(o.case, o.message) for o in outs]


@pytest.mark.skipif(hostcc.find_compiler() is None, reason="no host C++ compiler")
@pytest.mark.parametrize("flavour", ["ts", "is"])
def test_host_build_equals_twin_across_the_switch(flavour):
    for case in _cases():
        path = str(case.model)
        times = np.linspace(0.0, 10.0, 21)
        twin = integrate(StiffProblem(lower_system(path, ["S1", "S2"], {"S1", "S2"}, set(), dae=True, delays=True), 1),
                         times)
        core = lower_system(path, ["S1", "S2"], {"S1", "S2"}, set(), dae=True, delays=True)
        host = integrate_device(stiff_problem(core), times, flavour, "host")
        assert np.array_equal(host, twin, equal_nan=True), case.case
