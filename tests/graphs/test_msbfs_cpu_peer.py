"""The MS-BFS CPU peer (benchmarks/peers, Then et al. VLDB 2015) gives scipy's hop distances exactly,
on fresh random graphs: undirected and directed, every bitset width, source subsets, uint8 overflow."""
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from support.paths import ROOT

sys.path.insert(0, str(ROOT))
from benchmarks.peers.msbfs_cpu import WIDTHS, hops_like_scipy, msbfs_hops, pick_width  # noqa: E402


def random_graph(rng, n, m, directed):
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    a = sp.coo_matrix((np.ones(m), (u, v)), shape=(n, n)).tocsr()
    if not directed:
        a = (a + a.T).tocsr()
    a.data[:] = 1
    a.sort_indices()
    return a


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("width", WIDTHS)
def test_equals_scipy_on_random_graphs(directed, width):
    rng = np.random.default_rng()
    n = int(rng.integers(150, 700))
    a = random_graph(rng, n, int(rng.integers(n // 2, 4 * n)), directed)   # sparse: several components
    want = shortest_path(a, unweighted=True, directed=directed)
    got = msbfs_hops(a.indptr, a.indices, n, directed=directed, width=width)
    assert got.shape == (n, n)
    assert np.array_equal(hops_like_scipy(got), want)


def test_source_subset_and_threads():
    rng = np.random.default_rng()
    n = 900
    a = random_graph(rng, n, 2500, False)
    src = rng.integers(0, n, 333)                      # repeats allowed, not a multiple of 64
    want = shortest_path(a, unweighted=True, indices=src)
    for th in (1, 2):
        got = msbfs_hops(a.indptr, a.indices, n, sources=src, threads=th)
        assert np.array_equal(hops_like_scipy(got), want)


def test_long_paths_widen_the_dtype():
    rng = np.random.default_rng()
    n = int(rng.integers(300, 600))                    # a shuffled path: diameter n - 1 > 254
    perm = rng.permutation(n)
    a = sp.coo_matrix((np.ones(n - 1), (perm[:-1], perm[1:])), shape=(n, n)).tocsr()
    a = (a + a.T).tocsr()
    a.sort_indices()
    got = msbfs_hops(a.indptr, a.indices, n)
    assert got.dtype == np.uint16
    assert np.array_equal(hops_like_scipy(got), shortest_path(a, unweighted=True))
    with pytest.raises(OverflowError):
        msbfs_hops(a.indptr, a.indices, n, dtype=np.uint8)


def test_width_choice_and_bad_input():
    assert pick_width(30000, 2) == 8 and pick_width(600, 2) == 2 and pick_width(100, 2) == 1
    with pytest.raises(ValueError):
        msbfs_hops(np.array([0, 1]), np.array([0]), 1, sources=[3])
    with pytest.raises(ValueError):
        msbfs_hops(np.array([0, 0]), np.array([], int), 1, width=3)
