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


def test_method_auto_has_one_rule_for_the_library_and_the_cli(tmp_path):
    """resolve_auto is the CLI's pick and EnsembleRun's alike: on numpy (no stiffness test) Rodas4 for a
    model only the full core takes (an algebraic rule), Dormand–Prince otherwise; on an engine with its
    own pick, auto; engine auto takes such an engine first."""
    from kernels.flint.adaptive_run import resolve_auto
    from support.paths import SHARED
    dae = SHARED / "sbml-test-suite" / "cases" / "00039" / "00039-sbml-l3v2.xml"
    if not dae.is_file():
        pytest.skip(f"{dae} not found")
    plain = event_sbml(tmp_path, 1.0, 2.0)
    assert resolve_auto(dae, "auto", "numpy")[:2] == ("rodas4", "numpy")
    assert EnsembleRun(str(dae), method="auto", engine="numpy").method == "rodas4"
    assert resolve_auto(plain, None, "numpy")[:2] == ("dopri5", "numpy")
    assert EnsembleRun(str(plain), method="auto", engine="numpy").method == "dopri5"
    assert resolve_auto(plain, "rodas4", "auto") == ("rodas4", None, [])        # not auto: as given
    own = [e for e in available_engines("dopri5", "cpu") if engine_offers_auto(e)]
    method, engine, why = resolve_auto(plain, "auto", None, "cpu")
    if own:
        assert (method, engine) == ("auto", own[0]) and why[-1] == "the engine's own pick"
        assert EnsembleRun(str(plain), method="auto", backend="cpu").engine == own[0]
    else:
        assert (method, engine) == ("dopri5", "numpy")
