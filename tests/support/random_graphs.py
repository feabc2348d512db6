"""Fresh random graphs of random families for tests (some disconnected, some with isolated vertices)."""
from kernels.graphs.data import generators as G
from kernels.graphs.data.graph import Graph


def random_graph(rng, n=None) -> Graph:
    """A fresh random graph of a random family; some disconnected, some with isolated vertices."""
    n = int(n or rng.integers(30, 160))
    seed = int(rng.integers(1 << 31))
    kind = rng.choice(["ba", "ws", "er", "random"])
    g = {"ba": lambda: G.barabasi_albert(n, int(rng.integers(1, 4)), seed),
         "ws": lambda: G.watts_strogatz(n, 2 * int(rng.integers(1, 4)), float(rng.random()) * 0.3, seed),
         "er": lambda: G.erdos_renyi(n, 1.5 / n, seed),
         "random": lambda: G.dimacs_random(n, 2.5, False, seed)}[kind]()
    extra = int(rng.integers(0, 4))                     # isolated vertices at the end
    return Graph(g.n + extra, g.edges, g.weights, name=g.name)
