"""explorer.graphs.prepare (issue 32): transitivity from the local coefficients, and a step the job
abandons at once when cancelled."""
import threading
import time

import numpy as np
import pytest

from explorer.graphs.prepare import global_from_local, run_abandonable
from kernels.graphs.data import generators as gen
from kernels.graphs.algorithms.clustering import global_clustering, local_clustering


@pytest.mark.parametrize("kind", ["ws", "ba", "er", "spatial"])
def test_global_from_local_is_the_transitivity(kind, rng):
    g = gen.generate(kind, int(rng.integers(200, 2000)), k=4, p=0.01, seed=int(rng.integers(1 << 30)))
    assert global_from_local(g, local_clustering(g)) == pytest.approx(global_clustering(g), rel=1e-9, abs=1e-12)


def test_run_abandonable_returns_raises_and_gives_up_on_cancel(rng):
    x = rng.random(10)
    assert np.array_equal(run_abandonable(lambda: x * 2, lambda: False), x * 2)
    with pytest.raises(ZeroDivisionError):
        run_abandonable(lambda: 1 / 0, lambda: False)
    release = threading.Event()
    flag = threading.Event()
    threading.Timer(0.05, flag.set).start()
    t0 = time.perf_counter()
    with pytest.raises(InterruptedError):
        run_abandonable(lambda: release.wait(10), flag.is_set)    # a step with no cancel hook
    assert time.perf_counter() - t0 < 0.05 + 0.2
    release.set()
