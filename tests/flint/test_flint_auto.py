"""``--runtime auto`` (issue 23): the choice by cells, coupling, mapping and what the machine has, its
reason, and its use by FlintRun, the CLI (the default) and the GUI's runtime list."""
from __future__ import annotations

import json

import pytest

from kernels.flint import load_model
from kernels.flint.run import FlintRun
from kernels.flint.runtimes.auto import AUTO_HELP, ENSEMBLE_CPU_MAX, NETWORK_CPU_MAX, choose_runtime


@pytest.mark.parametrize("cells, network, mapping, gpu, cc, want", [
    (1, False, "cell", True, True, "c"),
    (ENSEMBLE_CPU_MAX, False, "cell", True, True, "c"),
    (ENSEMBLE_CPU_MAX + 1, False, "cell", True, True, "ts"),
    (100_000, False, "cell", True, True, "ts"),
    (NETWORK_CPU_MAX, True, "cell", True, True, "c"),
    (NETWORK_CPU_MAX + 1, True, "cell", True, True, "ts"),
    (100_000, False, "cell", False, True, "c"),
    (1, False, "cell", False, False, "cpu"),
    (1, False, "cell", True, False, "ts"),
    (1, False, "expression", True, True, "ts"),
    (1, False, "expression", False, True, "cpu"),
])
def test_choice(cells, network, mapping, gpu, cc, want):
    ch = choose_runtime(cells, network, mapping, gpu=gpu, compiler=cc)
    assert ch.runtime == want
    assert f"{cells:,}" in ch.why or mapping == "expression" and not gpu
    assert str(ch).startswith(f"auto → {want}: ")


def test_help_states_the_thresholds():
    """The GUI tooltip and --help say the limits the rule uses (they move with the measurements)."""
    assert f"up to {ENSEMBLE_CPU_MAX} members" in AUTO_HELP and f"up to {NETWORK_CPU_MAX} cells" in AUTO_HELP
    assert 1 <= ENSEMBLE_CPU_MAX and 1 <= NETWORK_CPU_MAX
    for cells, network, limit in ((ENSEMBLE_CPU_MAX, False, ENSEMBLE_CPU_MAX), (NETWORK_CPU_MAX, True, NETWORK_CPU_MAX)):
        assert f"(≤ {limit})" in choose_runtime(cells, network, gpu=True, compiler=True).why
        assert f"(> {limit})" in choose_runtime(cells + 1, network, gpu=True, compiler=True).why


def test_flint_run_resolves_auto():
    lr = load_model("luo_rudy_1991")
    run = FlintRun(lr, runtime="auto", n=1)
    want = choose_runtime(1)
    assert run.runtime == want.runtime and run.choice == want
    ring = FlintRun(lr, runtime="auto", members="ring", n=40)
    assert ring.runtime == choose_runtime(40, True).runtime
    assert FlintRun(lr, runtime="cpu").choice is None
    sim = FlintRun(lr, runtime="auto", t_end=1.0).simulation()     # it runs
    t, y = sim.advance(100, 0.01, every=50)
    assert y.shape == (2, lr.n_states, 1)


def test_cli_default_is_auto_and_says_why(capsys):
    from cli import main
    assert main(["flint", "luo_rudy_1991", "--t-end", "1", "--record", "V", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    want = choose_runtime(1)
    assert out["runtime"] == want.runtime and out["runtime_choice"] == str(want)
    assert main(["flint", "luo_rudy_1991", "--t-end", "1", "--record", "V", "--runtime", "cpu", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runtime_choice"] is None
    assert main(["flint", "luo_rudy_1991", "--t-end", "1", "--record", "V"]) == 0
    assert str(want) in capsys.readouterr().out


def test_gui_lists_auto_first():
    pytest.importorskip("PyQt6")
    from explorer.flint.run_form import gui_engines
    for gpu in (False, True):
        engines = gui_engines(gpu=gpu)
        assert engines[0] == "auto" and "cpu" not in engines and "numpy" in engines
        assert ("ts" in engines) == gpu


@pytest.mark.parametrize("compiler", [True, False])
def test_auto_follows_the_backend(compiler):
    """--backend cpu keeps any size on the host (c, else NumPy); gpu is ts for any size, refused without a GPU."""
    from kernels.errors import BackendUnavailable
    for cells in (1, 50_000):
        for network in (False, True):
            ch = choose_runtime(cells, network, gpu=True, compiler=compiler, backend="cpu")
            assert ch.runtime == ("c" if compiler else "cpu") and "--backend cpu" in ch.why
            assert choose_runtime(cells, network, gpu=True, compiler=compiler, backend="gpu").runtime == "ts"
            assert choose_runtime(cells, network, gpu=True, compiler=compiler, backend=None) == \
                choose_runtime(cells, network, gpu=True, compiler=compiler)
    assert choose_runtime(5, mapping="expression", gpu=True, backend="cpu").runtime == "cpu"
    with pytest.raises(BackendUnavailable, match="--backend gpu"):
        choose_runtime(1, gpu=False, backend="gpu")


def test_cli_engine_auto_follows_the_backend(capsys):
    """``--backend cpu flint`` runs engine auto on the host and says so; an explicit GPU engine is refused."""
    from cli import main
    assert main(["--backend", "cpu", "flint", "luo_rudy_1991", "--t-end", "1", "--record", "V", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["engine"] in ("c", "numpy") and "--backend cpu" in out["runtime_choice"]
    assert main(["flint", "luo_rudy_1991", "--t-end", "1", "--backend", "cpu", "--engine", "ts"]) == 2
    assert "--engine ts runs on the GPU, but --backend cpu" in capsys.readouterr().err
