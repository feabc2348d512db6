"""Flattened benchmark models of paper 004 Table 5.1 (kernels/flint/catalog.py), their shipped files,
and the SBML / CellML round trips (NumPy runtime, CPU only)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.flint import Network, Simulation, compile_model, load_model, parse_text
from kernels.flint.catalog import CATALOG, build, lr_network, rybak, synchrony, wang_buzsaki
from kernels.flint.cellml import parse_units, read_cellml, write_cellml
from kernels.flint.loaders import MODELS_DIR
from kernels.flint.runtimes import network_stimulus
from kernels.flint.sbml import read_sbml, write_sbml

# (functions = named assignments, ODEs); thesis Table 5.1 in the catalog docstring
SIZES = {"wang": (1200, 400), "rybak": (1980, 474), "lr-ring": (2640, 640), "lr-100": (3300, 800)}


@pytest.mark.parametrize("name", list(SIZES))
def test_catalog_model_sizes_validate_and_compile(name):
    m = build(name)
    assert (len(m.assigns), m.n_states) == SIZES[name]
    p = compile_model(m)
    assert p.stats()["odes"] == m.n_states and p.code.size > 0


def test_catalog_names_and_big_lines():
    assert set(CATALOG) == {"wang", "rybak", "lr-ring", "lr-100", "mix", "lr-1000", "lr-2000", "lr-3000",
                            "lr-4000", "lr-5000"}
    m = load_model("LR-1000")                               # built on demand, not shipped
    assert m.n_states == 8000 and len(m.assigns) == 33 * 1000
    mx = load_model("mix")
    assert mx.n_states == 400 + 474 + 800 and mx.params["wang_g_syn"] == 0.1
    assert {s.split("_", 1)[0] for s in mx.states} == {"wang", "rybak", "lr"}
    with pytest.raises(InvalidParameter, match="no such model"):
        load_model("lr-7")


def test_wang_sum_is_one_nary_node():
    """I_syn,i holds Σ_j s_j as one N-term ADD (what the thesis's ≥ 32-term parallel sum acts on)."""
    m = wang_buzsaki(40)
    adds = [a for a in m.assigns["I_syn_3"].args if a.op == "add"]
    assert len(adds) == 1 and len(adds[0].args) == 40


@pytest.mark.parametrize("stem, name", [("wang_buzsaki_1996", "wang"), ("rybak_2006", "rybak"),
                                        ("lr_ring_80", "lr-ring"), ("lr_100", "lr-100"), ("mix", "mix")])
def test_shipped_native_files_are_up_to_date(stem, name):
    """scripts/make_models.py output is what the builders make now (deterministic, seeded)."""
    assert (MODELS_DIR / f"{stem}.flint").read_text(encoding="utf-8") == build(name).to_text()


def _traces(m, names, steps, dt=0.01, integrator="euler", every=50):
    st = list(m.states)
    sim = Simulation(m, integrator=integrator)
    return sim.advance(steps, dt, record=[st.index(n) for n in names], every=every)[1][:, :, 0]


def _same_model(a, b, steps=2000, integrator="euler"):
    assert b.states == a.states and b.params == a.params and set(b.assigns) == set(a.assigns)
    names = list(a.states)
    ta, tb = _traces(a, names, steps, integrator=integrator), _traces(b, names, steps, integrator=integrator)
    np.testing.assert_allclose(tb, ta, rtol=1e-10, atol=1e-12 * np.abs(ta).max())


@pytest.mark.parametrize("which", ["lr", "wang", "rybak"])
def test_sbml_and_cellml_round_trips_keep_the_model(which):
    m = {"lr": lambda: load_model("luo_rudy_1991.flint"), "wang": lambda: wang_buzsaki(12),
         "rybak": lambda: rybak(2)}[which]()
    steps = 1500 if which == "lr" else 2000                     # LR: through the stimulus at 10 ms
    _same_model(m, read_sbml(write_sbml(m)), steps)
    x = write_cellml(m)
    assert 'xmlns="http://www.cellml.org/cellml/2.0#"' in x
    _same_model(m, read_cellml(x), steps)


def test_shipped_cellml_and_sbml_files_load():
    lr = load_model("luo_rudy_1991.flint")
    c = load_model("luo_rudy_1991.cellml")
    assert c.states == lr.states and c.params == lr.params        # CellML keeps names, not the order
    order = [list(c.states).index(s) for s in lr.states]
    for t in (0.0, 11.0):
        got = np.array(c.rhs_reference(t, list(c.states.values())))[order]
        np.testing.assert_allclose(got, lr.rhs_reference(t, list(lr.states.values())), rtol=1e-14)
    w = load_model("wang_buzsaki_1996.xml")
    assert w.n_states == 400 and w.params == build("wang").params


def test_cellml_units_and_refusals():
    assert parse_units("mS/cm^2") == [("siemens", "milli", 1.0), ("metre", "centi", -2.0)]
    assert parse_units("mJ/(K*mol)") == [("joule", "milli", 1.0), ("kelvin", None, -1.0), ("mole", None, -1.0)]
    assert parse_units("mM") == [("mole", "milli", 1.0), ("litre", None, -1.0)]
    assert parse_units("1/ms") == [("second", "milli", -1.0)] and parse_units("furlong") is None
    m = parse_text("model c\nstate x = 1 [mV]\nparam k = 2 [foo]\nlet y = where(x > 0.5 and x < 3, 1, 0)*(x > 0)\n"
                   "ode x = -k*x*y + nb(x, 1)\n")
    with pytest.raises(InvalidParameter, match="nb"):
        write_cellml(m)
    m.odes["x"] = parse_text("model d\nstate x = 1\node x = -x\n").odes["x"]
    with pytest.raises(InvalidParameter, match="units mismatch"):     # dx/dt in mV/ms, -x in mV
        read_cellml(write_cellml(m))
    m.params["r"], m.units["r"] = 1.0, "1/ms"
    m.odes["x"] = parse_text("model d\nparam r = 1\nstate x = 1\node x = -r*x\n").odes["x"]
    m2 = read_cellml(write_cellml(m))                  # comparisons used as numbers, unknown units
    y = [1.0]
    assert m2.rhs_reference(0.0, y) == m.rhs_reference(0.0, y)


def _spikes(t, V):
    i = np.where((V[:-1] < 0.0) & (V[1:] >= 0.0))[0]
    return t[i]


def test_wang_buzsaki_single_neuron_fires_periodically():
    """Wang & Buzsáki 1996: an uncoupled interneuron with I_app = 1 µA/cm² fires tonically (~60 Hz)."""
    m = wang_buzsaki(1, g_syn=0.0, I_mean=1.0, I_sd=0.0, V0=(-64.0, -64.0))
    sim = Simulation(m)
    t, y = sim.advance(20000, 0.01, record=[0], every=1)
    sp = _spikes(t, y[:, 0, 0])
    isi = np.diff(sp[2:])
    assert len(sp) >= 8 and y[:, 0, 0].max() > 20
    assert np.ptp(isi) < 0.01 * isi.mean() and 40.0 < 1000.0 / isi.mean() < 80.0


def test_wang_buzsaki_inhibition_synchronises():
    """With synaptic inhibition (g_syn = 0.1 mS/cm²) the coherence χ of 20 neurons started at random
    potentials rises to near 1; uncoupled it stays low (Wang & Buzsáki 1996, Fig. 3)."""
    from kernels import hostcc        # 40 000 steps of 80 ODEs: the compiled host runtime, as rybak's test
    runtime = "c" if hostcc.find_compiler() else "cpu"
    chi = {}
    for g in (0.0, 0.1):
        m = wang_buzsaki(20, g_syn=g, I_sd=0.0, seed=3)
        t, y = Simulation(m, runtime).advance(40000, 0.01, record=[list(m.states).index(f"V_{i}") for i in range(20)],
                                              every=10)
        V = y[:, :, 0]
        chi[g] = (synchrony(V[:500]), synchrony(V[-500:]))
    assert chi[0.0][1] < 0.5
    assert chi[0.1][1] > 0.9 and chi[0.1][1] > chi[0.1][0] + 0.3, chi


@pytest.mark.parametrize("kind", ["line", "ring"])
def test_flattened_lr_equals_network(kind):
    """lr_network(n) (every cell written out) integrates exactly like Network(kind, n) (one thread a cell)."""
    n, D = 4, 0.5
    lr = load_model("luo_rudy_1991.flint")
    flat = lr_network(n, kind, D=D, stim_cells=2)
    for integ, steps in (("euler", 2500), ("rk4", 300)):
        net = Network(kind, n, "V", D)
        sim = Simulation(lr, network=net, member_params=network_stimulus(lr, n, first=2), integrator=integ)
        _, y = sim.advance(steps, 0.01, record=list(range(8)), every=50)
        ref = y.transpose(0, 2, 1).reshape(y.shape[0], -1)               # (k, cell*8 + state)
        names = [f"{s}_{c}" for c in range(n) for s in lr.states]
        got = _traces(flat, names, steps, integrator=integ)
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
        if integ == "euler":
            assert ref[:, 0].max() > 0 and ref[:, 8 * (n - 1)].max() > 0    # both ends fired (t = 25 ms)


def test_rybak_neurons_spike_and_populations_fire():
    m = rybak(3)
    st = list(m.states)
    pops = [s for s in st if s.startswith("S_")]
    t, y = Simulation(m).advance(5000, 0.02, record=[st.index("V_RG_E_0")] + [st.index(p) for p in pops], every=5)
    assert y[:, 0, 0].max() > 0 and y[:, 0, 0].min() < -40               # spikes
    assert np.all(np.isfinite(y)) and (y[:, 1:, 0].max(axis=0) > 0.5).sum() >= 4   # ≥ 4 populations active


def test_rybak_flexor_extensor_alternation():
    """The default rybak() (tuning "rhythm") alternates flexor and extensor bursts as in Rybak et al.
    2006 Fig. 3: over the last 2 s of 3 s (Euler, dt 0.01 ms, 474 ODEs) the RG-F/RG-E and Mn-F/Mn-E
    population activities (traces S_P, 50 ms bins) are anti-correlated, and each population both
    bursts and falls silent (not tonic)."""
    m = rybak()
    assert m.n_states == 474 and m.params["w_RG_F_InRG_E"] == 1.5
    st = list(m.states)
    pops = ["S_RG_F", "S_RG_E", "S_Mn_F", "S_Mn_E"]
    dt, every = 0.01, 100                                   # samples every 1 ms
    from kernels import hostcc        # 300 000 steps: the compiled host runtime (seconds), else NumPy (minutes)
    runtime = "c" if hostcc.find_compiler() else "cpu"
    _t, y = Simulation(m, runtime).advance(300_000, dt, record=[st.index(p) for p in pops], every=every)
    act = y[1000:, :, 0].reshape(40, 50, 4).mean(axis=1)    # last 2000 ms in 50 ms bins
    for f, e in ((0, 1), (2, 3)):
        assert np.corrcoef(act[:, f], act[:, e])[0, 1] < -0.7, (pops[f], pops[e])
    for k in range(4):
        assert act[:, k].max() > 1.0 and act[:, k].min() < 0.2 * act[:, k].max(), pops[k]   # bursts, pauses
    paper = rybak(tuning="paper")
    assert paper.params["w_RG_F_InRG_E"] == 0.45 and paper.params["g_K"] == 5.0
    with pytest.raises(InvalidParameter, match="tuning"):
        rybak(tuning="fast")


def test_select_states_lists_and_patterns():
    from kernels.flint.model import select_states
    m = rybak(2)
    assert select_states(m, "S_RG_F, S_RG_E") == ["S_RG_F", "S_RG_E"]
    assert select_states(m, ["S_Mn_*", "S_Mn_F"]) == ["S_Mn_F", "S_Mn_E"]          # order kept, no repeats
    assert select_states(m, "V_RG_?_1") == ["V_RG_F_1", "V_RG_E_1"]
    for bad in ("S_XX", "Q_*", " , "):
        with pytest.raises(InvalidParameter):
            select_states(m, bad)


def test_too_many_members_refused_before_allocating():
    """An ensemble that cannot fit is refused with GridTooLarge before compiling or allocating."""
    from kernels.errors import GridTooLarge
    from kernels.flint.runtimes import memory_estimate
    lr = load_model("luo_rudy_1991.flint")
    h1, _ = memory_estimate(lr, 1000, 1, "cpu")
    h2, g2 = memory_estimate(lr, 2000, 1, "is", "expression")
    assert h1 > 0 and g2 > 0 and memory_estimate(lr, 2000, 1, "cpu")[0] == 2 * h1
    with pytest.raises(GridTooLarge, match="host memory"):
        Simulation(lr, n=10**11, member_params=None)
    with pytest.raises(InvalidParameter, match="≥ 1"):
        Simulation(lr, n=0)
