"""The Flint workspace labels time in the loaded model's unit: the time axes and the dt / t end rows say
"ms" for a Flint model and for an SBML file declaring milliseconds, "model time" for an SBML file that
declares none (Robertson), also in SBML reference mode (BIOMD0000000127: ms)."""
from __future__ import annotations

from support.paths import ROOT, SHARED

MODELS = ROOT / "resources" / "models"


def _axis(ws) -> str:
    return ws.view.plot.getAxis("bottom").labelText


def test_time_labels_follow_the_model(flint_ws):
    ws = flint_ws
    assert ws.open_field(str(MODELS / "robertson.xml")) and not ws.in_sbml_mode()
    assert _axis(ws) == "t (model time units)" and ws.form.label("dt") == "dt (model time)"
    assert ws.form.label("t_end") == "t end (model time)" and "model time" in ws.form.sp_tend.toolTip()
    assert ws.open_field(str(MODELS / "luo_rudy_1991.xml"))
    assert _axis(ws) == "t (ms)" and ws.form.label("dt") == "dt (ms)" and ws.form.label("t_end") == "t end (ms)"
    assert ", ms" in ws.form.sp_dt.toolTip()
    izh = SHARED / "models" / "BIOMD0000000127.xml"
    if izh.is_file():
        assert ws.open_field(str(izh)) and ws.view.time_unit == "ms" and _axis(ws) == "t (ms)"
        assert ws.form.label("t_end") == "t end (ms)" and ws.form.label("dt") == "dt (output interval)"
