"""EnsembleRun's small additions for the `flint` CLI (issue 34): a bad setting names its field
(EnsembleSettingError), engine auto's pick (default_engine), and the method that ran (method auto's pick
on the host builds: Dormand–Prince for a non-stiff model, Rodas4 for Robertson's)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.flint.adaptive_run import (EnsembleRun, EnsembleSettingError, available_engines, default_engine,
                                        engine_offers_auto)
from kernels.flint.run import Vary
from support.sbml_docs import event_sbml
from support.stiff_sbml import robertson_rules


def test_bad_settings_name_their_field(tmp_path, rng):
    path = str(event_sbml(tmp_path, float(rng.uniform(0.5, 2)), 2.0))
    for kw, field in ((dict(method="euler"), "method"), (dict(engine="gpu"), "engine"),
                      (dict(method="dopri5", engine="roadrunner"), "engine"), (dict(params=(("nope", 1.0),)), "params"),
                      (dict(vary=(Vary("nope", 1, 2),)), "vary")):
        with pytest.raises(EnsembleSettingError) as info:
            EnsembleRun(path, **kw)
        assert info.value.field == field, kw
    with pytest.raises(EnsembleSettingError, match="'nope' is not a constant parameter"):
        EnsembleRun(path, params=(("nope", 1.0),))


def test_default_engine_is_what_engine_auto_picks(tmp_path):
    path = str(event_sbml(tmp_path, 1.0, 2.0))
    for method in ("dopri5", "rodas4"):
        for backend in (None, "cpu"):
            here = available_engines(method, backend)
            assert default_engine(method, backend) == here[0]
            assert EnsembleRun(path, method=method, backend=backend).engine == here[0]
    assert default_engine("dopri5", "cpu") != "ts"


def test_result_says_the_method_that_ran(tmp_path, rng):
    k = float(rng.uniform(0.5, 2.0))
    path = str(event_sbml(tmp_path, k, 2.0))
    res = EnsembleRun(path, method="dopri5", engine="numpy", n=2, t_end=3.0, dt=0.5, record=("x",)).run()
    assert res.method == "dopri5"
    hosts = [e for e in ("c", "c-is") if e in available_engines("rodas4") and engine_offers_auto(e)]
    if not hosts:
        pytest.skip("no host build here (no host C++ compiler)")
    auto = EnsembleRun(path, method="auto", engine=hosts[0], n=2, t_end=3.0, dt=0.5, record=("x",)).run()
    assert auto.method == "dopri5"                                  # not stiff: Dormand–Prince
    np.testing.assert_allclose(auto.values, res.values, rtol=1e-9, atol=1e-9)
    rob = robertson_rules(tmp_path / "rob.xml")                     # Robertson: stiff, Rodas4
    stiff = EnsembleRun(str(rob), method="auto", engine=hosts[0], n=1, t_end=4e4, dt=4e3).run()
    assert stiff.method == "rodas4"
    assert abs(stiff.values[-1, :, 0].sum() - 1.0) < 1e-8                # A + B + C is conserved
