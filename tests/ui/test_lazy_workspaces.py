"""Workspaces are built lazily: the main window builds a workspace the first time it is shown or
asked for (``MainWindow.workspace``), and nothing a user keeps is lost for one never built in a run:
its remembered settings stay as they were, a session of it opens (building it), lecture mode reaches
it when it is built later.  The GUI tests' window opens on the workspace the test is about, so
that it builds no other one first (tests/ui/conftest.py ``start_workspace``)."""
from __future__ import annotations

import random

import pytest

from explorer.main_window import workspace_keys


def built(win) -> list[str]:
    """Keys of the workspaces the window has built (its stack holds exactly those)."""
    return [win.stack.widget(i).objectName() for i in range(win.stack.count())]


def test_only_the_shown_workspace_is_built_until_another_is_asked_for(open_window, tmp_path):
    win = open_window(tmp_path / "s.ini", "occupancy")
    assert built(win) == ["occupancy"] and win.current_key() == "occupancy"
    flint = win.workspace("flint")                    # asked for, not shown: built, not brought forward
    assert built(win) == ["occupancy", "flint"] and win.current_key() == "occupancy"
    assert win.workspace("flint") is flint            # built once
    win.show_workspace("flint")
    assert built(win) == ["occupancy", "flint"] and win.current_key() == "flint"


def test_settings_of_a_workspace_not_built_in_a_run_are_kept(open_window, tmp_path):
    rng = random.Random()
    threads, regs = 32 * rng.randint(1, 32), rng.randint(16, 128)
    first = open_window(tmp_path / "s.ini", "occupancy")
    first.workspace().set_inputs(cc="8.6", threads=threads, regs=regs)
    first.close()
    middle = open_window(tmp_path / "s.ini", "flint")  # occupancy is never built here
    assert "occupancy" not in built(middle)
    middle.close()
    last = open_window(tmp_path / "s.ini", "occupancy")
    occ = last.workspace()
    assert occ.cc.currentData() == "8.6"
    assert occ.inputs()["threads_per_block"] == threads and occ.inputs()["regs_per_thread"] == regs


def test_a_session_opens_its_workspace_when_it_was_not_built(open_window, tmp_path):
    rng = random.Random()
    threads = 32 * rng.randint(1, 32)
    first = open_window(tmp_path / "a.ini", "occupancy")
    first.workspace().set_inputs(cc="9.0", threads=threads, regs=40)
    path = first.save_session(str(tmp_path / "occ"))
    assert path is not None
    other = open_window(tmp_path / "b.ini", "flint")
    assert "occupancy" not in built(other)
    assert other.open_session(str(path))
    assert other.current_key() == "occupancy"
    occ = other.workspace()
    assert occ.cc.currentData() == "9.0" and occ.inputs()["threads_per_block"] == threads


def test_a_workspace_built_in_lecture_mode_gets_lecture_mode(open_window, qtbot, tmp_path):
    win = open_window(tmp_path / "s.ini", "occupancy")
    win.set_lecture_mode(True)
    graphs = win.show_workspace("graphs")              # built now, while lecture mode is on
    assert graphs.bt_apsp.text() == "APSP"             # the lecture label of the button
    win.set_lecture_mode(False)
    assert graphs.bt_apsp.text() == "Compute APSP"
    qtbot.wait(50)


# -------------------------------------------- the GUI tests' window opens on the tested workspace
def test_a_workspace_fixture_opens_the_window_on_its_workspace(main_window, graphs_ws):
    assert built(main_window) == ["graphs"] and main_window.workspace() is graphs_ws


def test_the_cahn_hilliard_fixture_keeps_the_default_window(main_window, ws):
    assert built(main_window) == ["cahn_hilliard"] and main_window.workspace() is ws


@pytest.mark.parametrize("key", ["occupancy", "flint"])
def test_a_key_parameter_opens_the_window_on_that_workspace(main_window, key):
    assert key in workspace_keys()
    assert built(main_window) == [key] and main_window.current_key() == key
