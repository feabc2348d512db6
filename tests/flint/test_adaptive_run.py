"""EnsembleRun (kernels/flint/adaptive_run.py): an SBML model with events as an ensemble on an adaptive
engine — the pair resolved from the registries, the streamed prefixes equal to one full run, the
members' varied parameters, the event firings, sessions."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.flint import schemes
from kernels.flint.adaptive_run import EnsembleRun, available_engines, ensemble_engines, ensemble_refusal
from kernels.flint.run import Vary
from support.sbml_docs import event_sbml


def sawtooth(t, k, thr):
    """x of event_sbml: dx/dt = k, reset to 0 when x > thr."""
    return np.mod(k * t, thr)


def test_engines_come_from_the_registries():
    table = schemes.engine_table("flint-suite")
    for m in ("dopri5", "rodas4"):
        engines = ensemble_engines(m)
        assert set(engines) == {e for e, ms in table.items() if m in ms
                                and schemes.ADAPTIVE_BACKENDS[schemes.engine_named(e).backend(m)].ensemble}
        assert engines[-1] == "numpy" and "numpy" in available_engines(m)
        assert all(schemes.engine_named(e).device == "cpu" for e in available_engines(m, "cpu"))


def test_streamed_prefixes_are_the_full_run(tmp_path, rng):
    k, thr = float(rng.uniform(0.5, 2.0)), float(rng.uniform(1.0, 3.0))
    path = event_sbml(tmp_path, k, thr)
    assert ensemble_refusal(path) is None
    n = int(rng.integers(2, 5))
    run = EnsembleRun(str(path), engine="numpy", n=n, t_end=float(rng.uniform(8, 12)), dt=0.05,
                      vary=(Vary("k", k, 1.5 * k),), record=("x",))
    assert (run.method, run.engine, run.backend_name) == ("dopri5", "numpy", "dopri-cpu")
    got, final = {}, {}

    def on_chunk(i0, t, y):
        for j in range(len(t)):
            got.setdefault(i0 + j, y[j].copy())        # the first value sent of each point
            final[i0 + j] = y[j].copy()
    res = run.run(on_chunk=on_chunk)
    assert res.complete and sorted(final) == list(range(len(res.times)))
    np.testing.assert_array_equal(np.array([final[i] for i in sorted(final)]), res.values)
    np.testing.assert_array_equal(res.values, run.run().values)         # streaming changes nothing
    resent = [i for i in got if not np.array_equal(got[i], res.values[i])]
    assert len(resent) <= 2 * 6                        # only the re-sent ends of the prefixes differ
    ks = np.linspace(k, 1.5 * k, n)
    for m in range(n):                                 # the members' own rate, away from the resets
        want = sawtooth(res.times, ks[m], thr)
        away = np.abs(want - thr / 2) < 0.45 * thr
        np.testing.assert_allclose(res.values[away, 0, m], want[away], atol=1e-6)


def test_event_firings_are_reported_where_the_integrator_reports_them(tmp_path, rng):
    k, thr = float(rng.uniform(0.5, 2.0)), float(rng.uniform(1.0, 3.0))
    run = EnsembleRun(str(event_sbml(tmp_path, k, thr)), engine="numpy", n=2, t_end=9.0, dt=0.1,
                      vary=(Vary("k", k, 2 * k),), record=("x",))
    res = run.run()
    from kernels.flint.ensemble.rk import integrate
    import inspect
    assert res.reports_events == ("fired" in inspect.signature(integrate).parameters)
    if not res.reports_events:
        pytest.skip("the NumPy Dormand–Prince does not report firings here")
    for m, km in enumerate((k, 2 * k)):
        want = thr / km * np.arange(1, int(9.0 * km / thr) + 1)
        np.testing.assert_allclose(res.event_times(m), want, rtol=1e-7)
    assert {e for _m, _t, e in res.events} == {"E"}


def test_bad_runs_are_refused_and_sessions_round_trip(tmp_path, rng):
    path = str(event_sbml(tmp_path, 1.0, 2.0))
    with pytest.raises(InvalidParameter, match="method"):
        EnsembleRun(path, method="euler")
    with pytest.raises(InvalidParameter, match="engine"):
        EnsembleRun(path, method="dopri5", engine="roadrunner")     # the suite's peer: no ensembles
    with pytest.raises(InvalidParameter, match="method"):
        EnsembleRun(path, method="lsoda")                           # the reference: one instance
    with pytest.raises(InvalidParameter, match="not a constant parameter"):
        EnsembleRun(path, vary=(Vary("nope", 1, 2),))
    with pytest.raises(InvalidParameter, match="runs on the GPU"):
        EnsembleRun(path, engine="ts", backend="cpu")
    with pytest.raises(InvalidParameter, match="dt"):
        EnsembleRun(path, dt=0.0)
    for e in ("c", "c-is"):                                # the host builds' own pick: method auto
        if e in available_engines("rodas4"):
            assert (lambda r: (r.method, r.backend_name))(EnsembleRun(path, engine=e)) == ("auto", f"auto-{e}")
    run = EnsembleRun(path, engine="numpy", n=3, t_end=4.0, dt=0.5, params=(("thr", 1.5),),
                      vary=(Vary("k", 0.5, 1.0),), record=("x",))
    again = EnsembleRun.from_dict(run.to_dict())
    assert again == run and again.to_dict() == run.to_dict()
    np.testing.assert_array_equal(again.member_params()["thr"], np.full(3, 1.5))


@pytest.mark.parametrize("engine", ["c", "c-is"])
def test_host_builds_equal_the_numpy_twin(tmp_path, rng, engine):
    """dopri5 on the host builds of the GPU kernel (c: generated C, c-is: the interpreter) gives the NumPy
    twin's traces and event firings, for fresh random rates."""
    if engine not in available_engines("dopri5"):
        pytest.skip(f"engine {engine} cannot run here (no host C++ compiler, or no host Dormand–Prince)")
    k, thr = float(rng.uniform(0.5, 2.0)), float(rng.uniform(1.0, 3.0))
    path = str(event_sbml(tmp_path, k, thr))
    kw = dict(method="dopri5", n=3, t_end=7.0, dt=0.1, vary=(Vary("k", k, 1.7 * k),), record=("x",))
    host, twin = EnsembleRun(path, engine=engine, **kw).run(), EnsembleRun(path, engine="numpy", **kw).run()
    np.testing.assert_allclose(host.values, twin.values, rtol=1e-9, atol=1e-9)
    if host.reports_events and twin.reports_events:
        for m in range(3):
            np.testing.assert_allclose(host.event_times(m), twin.event_times(m), rtol=1e-9)


def test_the_model_file_is_read_once(tmp_path, monkeypatch):
    """EnsembleRun reads its SBML file once: the default record and the lowering share it, and the files
    read are kept on the run (the CLI's --json lists them without reading the model again)."""
    from kernels.flint.sbml import core, reference
    path = event_sbml(tmp_path, 1.0, 2.0)
    reads = []
    for mod in (reference, core):
        real = mod.read_sbml_system
        monkeypatch.setattr(mod, "read_sbml_system", lambda *a, _real=real, **k: reads.append(a) or _real(*a, **k))
    for record in ((), ("x",)):
        reads.clear()
        run = EnsembleRun(str(path), method="dopri5", engine="numpy", n=2, t_end=1.0, dt=0.1, record=record)
        assert len(reads) == 1 and run.core is not None
        assert run.files_read == tuple(reference.load_reference(path).system.files_read) and run.files_read
        assert run.record == (record or tuple(reference.load_reference(path).default_record()))
