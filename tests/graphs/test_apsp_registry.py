"""The APSP method registry (issue 37): one :class:`~kernels.registry.Registry`, filled explicitly by
:mod:`kernels.graphs.apsp` in a fixed order, and a class accepted wherever a method name is (as
scipy's ``solve_ivp(method=…)`` takes ``"RK45"`` or ``RK45``)."""
import networkx as nx
import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.graphs.data import generators as G
from kernels.graphs.apsp import FAMILIES, METHODS, APSPMethod, APSPResult, apsp, method_names
from kernels.graphs.apsp.core import ScipyAPSP
from kernels.graphs.data.graph import Graph
from kernels.registry import Registry


class NetworkxAPSP(APSPMethod):
    """Hop counts by networkx's BFS, written here (not registered): a stand-in for a new method."""
    name = ""                                       # unregistered: it needs no name
    gpu, cpu, hops_only = False, True, True

    def run(self, csr, backend, weighted, dtype="auto", progress=None, cancel=None):
        H = nx.Graph()
        H.add_nodes_from(range(csr.n))
        H.add_edges_from(zip(csr.sources().tolist(), csr.indices.tolist()))
        d = np.full((csr.n, csr.n), 255, dtype=np.uint8)
        for s, row in nx.all_pairs_shortest_path_length(H):
            for t, k in row.items():
                d[s, t] = k
        return APSPResult(d, "networkx", 0.0, 0.0, 0, False)


def random_graph(rng):
    n = int(rng.integers(20, 120))
    return G.erdos_renyi(n, float(rng.uniform(1.0, 4.0)) / n, int(rng.integers(1 << 31)))


def test_methods_is_one_registry_in_the_families_order():
    assert isinstance(METHODS, Registry)
    order = [cls.name for family in FAMILIES.values() for cls in family]
    assert list(METHODS)[: len(order)] == order and list(METHODS)[0] == "cpu"
    assert set(method_names(gpu=False)) == {k for k, c in METHODS.items() if c.cpu}
    assert set(method_names(gpu=True)) | set(method_names(gpu=False)) == set(METHODS)
    assert METHODS.register(ScipyAPSP) is ScipyAPSP               # the same class again: no-op
    with pytest.raises(ValueError, match="registered twice"):
        METHODS.register(type("Impostor", (ScipyAPSP,), {}))       # another class under "cpu"


def test_a_class_is_accepted_wherever_a_name_is(rng):
    g = random_graph(rng)
    ref = apsp(g, "cpu")
    by_class = apsp(g, ScipyAPSP)                                  # a registered class
    np.testing.assert_array_equal(by_class.dist, ref.dist)
    new = apsp(g, NetworkxAPSP)                                   # an unregistered APSPMethod subclass
    assert ref.dist.dtype == np.uint8                              # n < 255: 255 means unreachable in both
    np.testing.assert_array_equal(new.dist, ref.dist)
    assert "NetworkxAPSP" not in METHODS and "" not in METHODS


def test_refusals_name_the_choices(rng):
    g = random_graph(rng)
    with pytest.raises(InvalidParameter, match="unknown APSP method 'nope': use one of cpu, gpu-bfs"):
        apsp(g, "nope")
    with pytest.raises(InvalidParameter, match="is not a registered APSP method"):
        apsp(g, dict)                                              # a class, but no APSPMethod
    w = Graph(g.n, g.edges, weights=rng.uniform(0.5, 2.0, g.m).astype(np.float32))
    with pytest.raises(InvalidParameter, match="NetworkxAPSP counts hops"):
        apsp(w, NetworkxAPSP, weighted=True)
