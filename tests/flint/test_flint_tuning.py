"""Issue 38: the GPU runtimes' block-size search on a short prefix, cached per model, GPU and engine
(kernels/flint/runtimes/tuning.py and its driver in gpu.py).  The logic runs on the CPU with a fake
timer (a random per-step cost for each block size); the GPU behaviour (first advance ≤ 1.2× a warm
one) is marked ``gpu``."""
import json
from types import SimpleNamespace

import numpy as np
import pytest

from kernels.flint.runtimes.gpu import GpuRuntime
from kernels.flint.runtimes.tuning import VERSION, BlockSearch, TuningCache, cache_key, default_path, size_class


def fake_cost(rng):
    """A random per-step cost over block sizes with one minimum (few blocks: SMs idle; huge blocks:
    one SM crowded), as measured curves look; plus multiplicative noise-free values."""
    best = int(rng.integers(1, 33)) * 32
    a, c = rng.uniform(0.5, 2), rng.uniform(0.1, 3)
    return lambda b: a + c * abs(np.log2(b / best)) + 1e-3 * b / 1024, best


def drive(search, cost):
    launches = 0
    while not search.done:
        search.record(cost(search.block))
        launches += 1
        assert launches < 20
    return launches


def test_search_finds_the_best_of_what_it_tried_within_few_launches():
    rng = np.random.default_rng()
    for _ in range(50):
        cost, _ = fake_cost(rng)
        n = int(rng.integers(1, 200_000))
        s = BlockSearch(int(rng.choice([256, 512, 768, 1024])), n, window=100)
        launches = drive(s, cost)
        assert launches <= 1 + 6 + 1 + 2                      # warm-up, 32…1024 (+ top), two midpoints
        tried = [b for b, _ in s.history]
        assert s.best == min(tried, key=lambda b: (cost(b), b)) and s.block == s.best
        assert all(b % 32 == 0 and 32 <= b <= s.top for b in tried)
        assert s.top <= max(32, -(-n // 32) * 32)             # never a block larger than the ensemble
        assert all(abs(ms - 100 * cost(b)) < 1e-9 for b, ms in s.history)
        coarse = [b for b in s.candidates if b in tried]
        assert cost(s.best) <= min(cost(b) for b in coarse)


def test_search_ignores_the_warm_up_launch():
    s = BlockSearch(1024, 10_000)
    s.record(1e6)                                             # module load: would poison block 32
    assert s.block == 32 and not s.history
    drive(s, lambda b: 1.0 if b == 32 else 2.0)
    assert s.best == 32


def test_cache_key_separates_model_gpu_engine_and_size():
    base = ("src", ("-O3",), "H100|sm_90|driver 13000", "ts/cell/euler", 1000)
    k = cache_key(*base)
    assert k == cache_key(*base) and k == cache_key("src", ("-O3",), base[2], base[3], 1024)
    for i, other in ((0, "src2"), (1, ("-O2",)), (2, "H200|sm_90|driver 13000"), (3, "is/cell/euler"), (4, 100_000)):
        changed = list(base)
        changed[i] = other
        assert cache_key(*changed) != k
    assert size_class(1000) == size_class(1024) == 10 and size_class(1025) == 11


def test_cache_round_trip_invalidation_and_corrupt_files(tmp_path, monkeypatch):
    path = tmp_path / "sub" / "blocks.json"
    c = TuningCache(path)
    assert c.get("k", 1024) is None                           # no file yet
    c.put("k", 160, 9000, [(32, 1.5), (64, 1.0)])
    assert c.get("k", 1024) == {"block": 160, "steps": 9000, "history": [(32, 1.5), (64, 1.0)]}
    assert c.get("k", 128) is None                            # the kernel's limit shrank: retune
    assert TuningCache(path).get("other", 1024) is None
    path.write_text("{ not json")                             # corrupt: a miss, then rewritten
    assert c.get("k", 1024) is None
    c.put("k2", 64, 0, [])
    assert c.get("k2", 1024)["block"] == 64 and json.loads(path.read_text())["version"] == VERSION
    path.write_text(json.dumps({"version": VERSION + 1, "entries": {"k2": {"block": 64}}}))
    assert c.get("k2", 1024) is None                          # another format version
    for bad in ({"block": 100}, {"block": "x"}, {"steps": 5}, {"block": 64, "history": [[1]]}, None, 3):
        path.write_text(json.dumps({"version": VERSION, "entries": {"k": bad}}))
        assert c.get("k", 1024) is None, bad
    monkeypatch.setenv("GSE_FLINT_TUNING_CACHE", "off")
    assert default_path() is None and TuningCache().get("k", 1024) is None
    TuningCache().put("k", 64, 0, [])                         # no file: nothing happens
    monkeypatch.setenv("GSE_FLINT_TUNING_CACHE", str(tmp_path / "x.json"))
    assert default_path() == tmp_path / "x.json"


class FakeRuntime(GpuRuntime):
    """The shared driver's tuning without CuPy: the device is named, launches are timed by a fake."""
    name = "fake"

    def __init__(self, n, max_block=1024, device="FakeGPU|sm_90|driver 1"):
        super().__init__("euler", "cell")
        self.prog = SimpleNamespace(n_members=n)
        self.loop_source, self.loop_options = f"kernel for {n}", ("-x",)
        self._loop_max_block, self._loop_steps, self._tuning = max_block, self.TUNE_STEPS, True
        self.device_name, self._fused = device, None

    def _device_id(self):
        return self.device_name


def run(rt, cost, steps):
    """The driver's loop (gpu.py run_loop) with launches timed by ``cost`` (ms a step for a block)."""
    rt.tune_begin()
    done = launches = 0
    while done < steps:
        kl = min(steps - done, rt._loop_steps)
        rt.adapt_launch(kl, cost(rt.block_size) * kl)
        done += kl
        launches += 1
    return launches


def test_a_new_runtime_reuses_the_cached_tuning(tmp_path, monkeypatch):
    monkeypatch.setenv("GSE_FLINT_TUNING_CACHE", str(tmp_path / "t.json"))
    rng = np.random.default_rng()
    cost, _ = fake_cost(rng)
    n = int(rng.integers(500, 200_000))
    first = FakeRuntime(n)
    l1 = run(first, lambda b: cost(b) * 1e-3, 200_000)
    assert first.tuned_from == "search" and len(first.block_history) >= 2
    second = FakeRuntime(n)
    l2 = run(second, lambda b: cost(b) * 1e-3, 200_000)
    assert second.tuned_from == "cache" and second.block_size == first.block_size
    assert second.block_history == first.block_history and second.info()["tuned_from"] == "cache"
    assert l2 < l1                                            # no search, and at the settled launch length
    other = FakeRuntime(n, device="OtherGPU")
    other.tune_begin()
    assert other.tuned_from == "search"                       # another GPU: its own tuning
    small = FakeRuntime(n, max_block=32)                      # another block limit is part of the key: its
    small.tune_begin()                                        # own search (an entry that no longer fits the
    assert small.tuned_from == "search"                       # limit is a miss too: test_cache_round_trip_invalidation_and_corrupt_files)


def test_cache_off_searches_every_time(tmp_path, monkeypatch):
    monkeypatch.setenv("GSE_FLINT_TUNING_CACHE", str(tmp_path / "t.json"))
    monkeypatch.setattr(FakeRuntime, "tune_cache", False)
    for _ in range(2):
        rt = FakeRuntime(4000)
        run(rt, lambda b: 1e-3 * (1 + abs(b - 256) / 256), 50_000)
        assert rt.tuned_from == "search" and rt.block_size == 256
    assert not (tmp_path / "t.json").exists()


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1000, 100_000])
def test_first_advance_within_1_2x_of_a_warm_one(n, tmp_path, monkeypatch):
    """Issue 38 target on the GPU: with the model tuned once (cache filled by a first Simulation), a
    new Simulation's first advance of 100 000 steps takes ≤ 1.2× a warm advance."""
    import time

    from kernels.flint import Simulation, load_model
    monkeypatch.setenv("GSE_FLINT_TUNING_CACHE", str(tmp_path / "t.json"))
    lr = load_model("luo_rudy_1991")
    Simulation(lr, "ts", n=n).advance(100_000, 0.01, record=[0], every=1000)      # tunes, fills the cache
    sim = Simulation(lr, "ts", n=n)
    t0 = time.perf_counter()
    sim.advance(100_000, 0.01, record=[0], every=1000)
    sim.engine.synchronize()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    sim.advance(100_000, 0.01, record=[0], every=1000)
    sim.engine.synchronize()
    warm = time.perf_counter() - t0
    assert sim.engine.tuned_from == "cache"
    assert first <= 1.2 * warm, (first, warm)
