import signal

import numpy as np
import pytest

from kernels.backend import Backend, gpu_available

_GPU_OK, _GPU_WHY = gpu_available()


def pytest_configure(config):
    """Ctrl+C as in a terminal: a test run started in the background (``bash test.sh &``, some CI
    runners) ignores SIGINT, and every process it starts would inherit that, so the tests of what
    Ctrl+C does to a command would fail for a reason of the harness.  With a handler here, the
    processes the tests start get the default disposition back."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: test modules holding the suite's longest tests (10–60 s each on a 2-core box, measured with
#: ``--durations``), longest first.  They run first: pytest-xdist hands tests out one at a time in
#: collection order, and one of them started last would keep one worker busy while the other idles.
LONG_FIRST = (
    "flint/test_flint_source_hashes.py",
    "project/test_benchmarks.py",
    "flint/sbml/test_sbml_suite.py",
    "project/test_packaging_files.py",
    "ui/test_flint_gui.py",
    "flint/test_flint_optimizations.py",
    "graphs/test_graph_layout.py",
    "sweep/test_sweep_suite.py",
    "sweep/test_sweep_cluster.py",
    "ui/test_graphs_sweep_scheduler_gui.py",
    "flint/test_flint_protocols.py",
    "flint/test_flint_models.py",
    "flint/test_flint_host_c.py",
)


def _long_first(items) -> None:
    """Whole modules of :data:`LONG_FIRST` move to the front, in that order (a module stays together,
    so its module-scoped fixtures are made once); the rest keep their order."""
    rank = {name: i for i, name in enumerate(LONG_FIRST)}

    def key(item):
        rel = item.nodeid.split("::", 1)[0].removeprefix("tests/")
        return rank.get(rel, len(rank))
    items.sort(key=key)                     # stable: the order inside a module is kept


def pytest_collection_modifyitems(config, items):
    _long_first(items)
    if _GPU_OK:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU with CuPy: {_GPU_WHY}")
    for item in items:
        if item.get_closest_marker("gpu") is not None:     # a marker, not a folder or name called gpu
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _user_folders(tmp_path_factory, monkeypatch):
    """No test reads or writes the user's real settings, presets or recent files: the app's
    folders (kernels.appdirs) point into a fresh temporary folder for every test."""
    base = tmp_path_factory.mktemp("userdirs")
    monkeypatch.setenv("GSE_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("GSE_DATA_DIR", str(base / "data"))


@pytest.fixture(autouse=True, scope="session")
def _flint_tuning_cache(tmp_path_factory):
    """The Flint block-size tuning cache (kernels/flint/runtimes/tuning.py) of the whole session lives
    in a temporary folder: GPU tests never read or write the user's real cache file."""
    mp = pytest.MonkeyPatch()
    mp.setenv("GSE_FLINT_TUNING_CACHE", str(tmp_path_factory.mktemp("tuning") / "blocks.json"))
    yield
    mp.undo()


@pytest.fixture
def cpu():
    """The NumPy backend (not the global selection)."""
    return Backend("cpu", np)


@pytest.fixture
def rng():
    """Fresh, unseeded random numbers: tests must hold for any input."""
    return np.random.default_rng()
