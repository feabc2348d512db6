"""The overlays on the GPU (kernels/graphs/algorithms/overlays.py, cuda/frontier.cu) against the CPU kernels on
fresh random graphs: hop counts, integer-weighted distances, degrees, components and clustering
exactly; every recorded predecessor chain is a shortest path, and each predecessor is the smallest
neighbour that continues one (the documented deterministic choice)."""
import numpy as np
import pytest

from kernels.graphs.data import generators as G
from kernels.graphs.algorithms.frontier import distance_from
from kernels.graphs.data.graph import Graph
from kernels.graphs.algorithms.overlays import overlay_values
from kernels.graphs.apsp.paths import is_shortest_path
from support.random_graphs import random_graph

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    from kernels.backend import make
    return make("gpu")


def expected_pred(g: Graph, dist: np.ndarray, s: int) -> np.ndarray:
    """pred[v] = smallest neighbour u with d(u) < d(v) and d(u) + w(u, v) = d(v), −1 when none."""
    csr = g.csr()
    out = np.full(g.n, -1, np.int32)
    for v in range(g.n):
        if v == s or not np.isfinite(dist[v]):
            continue
        lo, hi = csr.indptr[v], csr.indptr[v + 1]
        nb = csr.indices[lo:hi]
        w = np.ones(nb.size) if csr.weights is None else csr.weights[lo:hi].astype(np.float64)
        ok = (dist[nb] < dist[v]) & (dist[nb] + w == dist[v])
        if ok.any():
            out[v] = nb[ok].min()
    return out


@pytest.mark.parametrize("weights", ["none", "int", "float"])
def test_gpu_distance_row_equals_cpu(gpu, rng, weights):
    for _ in range(3):
        g = random_graph(rng, int(rng.integers(50, 2000)))
        if weights != "none":
            g = G.with_weights(g, weights, seed=int(rng.integers(1 << 31)))
        s = int(rng.integers(g.n))
        got, ref = distance_from(g, s, gpu), distance_from(g, s, None)
        assert got.backend == "gpu" and ref.backend == "cpu"
        if weights == "float":
            assert np.allclose(got.dist, ref.dist, rtol=1e-12, atol=0)
        else:
            assert np.array_equal(got.dist, ref.dist)
        assert np.array_equal(got.pred, expected_pred(g, got.dist, s))
        csr = g.csr()
        for t in rng.choice(g.n, size=min(g.n, 60), replace=False):
            path = got.path_to(int(t))
            if np.isfinite(got.dist[t]):
                assert is_shortest_path(csr, path, s, int(t), got.dist[t], g.weighted)
            else:
                assert path == []


def test_gpu_distance_on_a_hubby_graph(gpu, rng):
    g = G.barabasi_albert(int(rng.integers(20_000, 60_000)), int(rng.integers(3, 8)), int(rng.integers(1 << 31)))
    for s in rng.choice(g.n, size=3, replace=False):
        got, ref = distance_from(g, int(s), gpu), distance_from(g, int(s), None)
        assert np.array_equal(got.dist, ref.dist)
        assert got.levels >= int(ref.dist.max())
        t = int(np.argmax(got.dist))
        assert is_shortest_path(g.csr(), got.path_to(t), int(s), t, got.dist[t], False)


def test_gpu_overlays_equal_cpu(gpu, rng):
    for _ in range(2):
        g = random_graph(rng, int(rng.integers(200, 3000)))
        s = int(rng.integers(g.n))
        for name in ("degree", "component", "clustering", "distance"):
            a = overlay_values(g, name, source=s, backend=gpu)
            b = overlay_values(g, name, source=s, backend=None)
            assert a.label == b.label and a.integer == b.integer
            assert np.array_equal(a.values, b.values, equal_nan=True), name
        assert overlay_values(g, "distance", source=s, backend=gpu).backend == "gpu"


def test_zero_weights_take_the_cpu_path(gpu, rng):
    g = random_graph(rng)
    w = rng.integers(0, 3, size=g.m).astype(np.float32)          # zero-weight edges: no strict order
    gz = Graph(g.n, g.edges, w)
    s = int(rng.integers(g.n))
    row = distance_from(gz, s, gpu)
    assert row.backend == "cpu"
    assert np.array_equal(row.dist, distance_from(gz, s, None).dist)
