"""Cancellation of the graph generators (issue 32): ``cancel`` polled between chunks raises
InterruptedError, and chunking changes no graph (same seed, same edges)."""
import numpy as np
import pytest

from kernels.graphs.data import generators as gen

KINDS = {"ws": dict(k=4, p=0.2), "ba": dict(k=3), "er": dict(p=4e-6), "spatial": dict(k=6),
         "random": dict(k=4), "rmat": dict(k=4), "alpha": dict(k=4, alpha=1.0, p=0.01)}


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(gen, "CHUNK", 4096)          # many chunks at a test's size


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_chunked_generation_gives_the_same_graph(kind, rng, small_chunks):
    seed = int(rng.integers(1 << 30))
    n = 60_000 if kind != "alpha" else 3000
    a = gen.generate(kind, n, seed=seed, **KINDS[kind])
    calls = []
    b = gen.generate(kind, n, seed=seed, cancel=lambda: calls.append(1) and False, **KINDS[kind])
    assert np.array_equal(a.edges, b.edges) and len(calls) >= 2


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_cancel_raises_between_chunks(kind, rng, small_chunks):
    stop_after = int(rng.integers(1, 4))
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > stop_after

    with pytest.raises(InterruptedError):
        gen.generate(kind, 60_000 if kind != "alpha" else 3000, seed=1, cancel=cancel, **KINDS[kind])
    assert len(calls) == stop_after + 1            # it stopped at the first check that said so


def test_checked_unique_and_isin_match_numpy(rng, small_chunks):
    for size in (10, 50_000):
        k = rng.integers(-7, int(rng.integers(5, 10 ** 6)), size)
        want = np.unique(k, return_index=True)
        got = gen.checked_unique(k, lambda: False)
        assert all(np.array_equal(x, y) for x, y in zip(want, got))
        other = rng.integers(-7, 1000, size // 3 + 1)
        assert np.array_equal(gen.checked_isin(k, other, lambda: False), np.isin(k, other))
