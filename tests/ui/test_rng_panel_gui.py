"""The "Random numbers (paper 001)" dock of the Cahn–Hilliard workspace: Table 1 re-run and the
quality checks, off the GUI thread (CPU backend: gpu1/gpu2 as CUDA source run on the CPU, on virtual
GPUs)."""
import csv

from kernels.rng import streams as st


def wait_done(panel, qtbot, start):
    with qtbot.waitSignal(panel.finished, timeout=120_000):
        assert start()


def test_dock_is_beside_diagnostics_with_tooltips(ws):
    panel = ws.rng_panel
    assert panel.dock.windowTitle() == "Random numbers (paper 001)"
    assert panel.dock in ws.tabifiedDockWidgets(ws.plots_dock)
    for w in (panel.bt_run, panel.bt_cancel, panel.bt_csv, panel.sp_count, panel.sp_gpus, panel.sp_seed,
              panel.cb_source, panel.sp_streams, panel.sp_per, panel.sp_bins, panel.bt_check,
              *panel.ck_app.values()):
        assert w.toolTip(), w
    assert panel.approaches() == list(st.APPROACHES)
    # no GPU: gpu1 / gpu2 are enabled and say that their CUDA source runs on the CPU
    for name, cls in st.APPROACHES.items():
        ck = panel.ck_app[name]
        assert ck.isEnabled() and ck.text().endswith("(CUDA source run on the CPU)") == cls.on_devices


def test_table1_rows_on_virtual_gpus_and_csv(ws, qtbot, tmp_path):
    panel = ws.rng_panel
    panel.sp_count.setValue(1)
    panel.sp_gpus.setValue(2)
    for n, ck in panel.ck_app.items():
        ck.setChecked(n in ("seq", "gpu2"))
    wait_done(panel, qtbot, panel.run_table1)
    got = [(r.approach, r.gpus) for r in panel.rows]
    assert got == [("seq", 1), ("gpu2", 1), ("gpu2", 2)]
    assert [r.devices for r in panel.rows] == ["CPU"] + ["virtual GPU (CUDA source run on the CPU)"] * 2
    assert panel.table.rowCount() == 3 and panel.table.item(2, 8).text() == "8.33"
    assert all(r.test_vector for r in panel.rows) and "fastest" in panel.lbl.text()
    path = panel.export_csv(str(tmp_path / "t1.csv"))
    rows = list(csv.DictReader(open(path)))
    assert [r["approach"] for r in rows] == ["seq", "gpu2", "gpu2"] and float(rows[0]["paper_seconds"]) == 256.45


def test_quality_shows_why_streams_need_distinct_seeds(ws, qtbot):
    panel = ws.rng_panel
    panel.sp_streams.setValue(8)
    panel.sp_per.setValue(5000)
    panel.cb_source.setCurrentIndex(panel.cb_source.findData("distinct"))
    wait_done(panel, qtbot, panel.run_quality)
    good = panel.last_quality
    assert good.passes and "looks uniform" in panel.lbl_quality.text()
    assert sum(good.hist) == 8 * 5000 and len(good.hist) == panel.sp_bins.value()
    panel.cb_source.setCurrentIndex(panel.cb_source.findData("shared"))
    wait_done(panel, qtbot, panel.run_quality)
    bad = panel.last_quality
    assert not bad.passes and bad.identical_streams == 7 and "distinct seeds" in panel.lbl_quality.text()


def test_state_round_trip_and_nothing_checked(ws):
    panel = ws.rng_panel
    s = dict(panel.state(), approaches=["gpu1"], count=5, seed=42, source="shared", streams=32)
    panel.restore(s)
    assert panel.state() == s
    panel.restore({"approaches": []})
    assert panel.run_table1() is False and "at least one" in panel.lbl.text()
    panel.restore("garbage")                     # ignored
