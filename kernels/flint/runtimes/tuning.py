"""Block-size tuning of the GPU runtimes' many-steps kernels (issue 38): a short search on the first
launches of a run, remembered per model, GPU and engine so that the next Simulation starts tuned.

Thesis §5.6 tunes the block size while the model runs: every window the next size (+32) until a
window gets slower.  On a new Simulation that walk spends up to 32 launches at sizes far from the
best (1 000 cells in one block of 1024 threads run on one SM), and every later Simulation of the same
model walks it again.  Here:

* :class:`BlockSearch` — the search over a short prefix of the run: one warm-up launch (module load,
  first touch: not judged), then the block sizes 32·2^i up to the kernel's limit and the ensemble's
  size, stopping once a size is :attr:`BlockSearch.STOP` times slower than the best so far, then the
  two midpoints beside the best (best ± half the gap to its neighbours, whole warps).  Each candidate
  is one launch of ``TUNE_STEPS`` steps; the steps are the run's own (nothing is recomputed).
* :class:`TuningCache` — the result (block size, the search's history, the launch length the run
  settled on) in a JSON file in the user cache folder (:func:`kernels.appdirs.cache_dir`
  ``("flint-tuning")``), keyed by :func:`cache_key`: a hash of the kernel's source and compile options
  (model, integrator, precision, code generator), the GPU (name, compute capability, driver) and the
  engine (runtime, mapping, register cap, ensemble size class).  A missing, unreadable or corrupt
  file, a file of another :data:`VERSION`, or an entry that no longer fits the kernel (block above
  its limit) counts as a miss: the search runs and the entry is rewritten.  ``GSE_FLINT_TUNING_CACHE``
  names another file, or ``off`` for none.

Qt-free and CuPy-free (the runtime hands it timings), so the logic is tested on the CPU with a
fake timer.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from pathlib import Path

from ... import appdirs

VERSION = 1
ENV = "GSE_FLINT_TUNING_CACHE"
MAX_ENTRIES = 512


def size_class(n: int) -> int:
    """The ensemble size as the key sees it: ⌈log2 n⌉ (1 000 and 1 024 cells share a tuning,
    1 000 and 100 000 do not)."""
    return max(0, math.ceil(math.log2(max(1, int(n)))))


def cache_key(source: str, options, device: str, engine: str, n: int) -> str:
    """The key of one tuning: kernel source + compile options, GPU, engine, :func:`size_class`."""
    h = hashlib.sha256()
    for part in (source, "\0".join(map(str, options or ())), device, engine, str(size_class(n))):
        h.update(part.encode())
        h.update(b"\x1f")
    return h.hexdigest()[:32]


def default_path() -> Path | None:
    """The cache file: ``$GSE_FLINT_TUNING_CACHE`` (``off``: None), else ``<user cache>/flint-tuning/blocks.json``."""
    env = os.environ.get(ENV)
    if env:
        return None if env.lower() == "off" else Path(env)
    return appdirs.cache_dir("flint-tuning") / "blocks.json"


class TuningCache:
    """Tunings by key in one JSON file (``{"version": VERSION, "entries": {key: entry}}``), read on
    every :meth:`get` (another process may have tuned meanwhile) and rewritten atomically on :meth:`put`."""

    def __init__(self, path: Path | None | str = "default"):
        self.path = default_path() if path == "default" else (Path(path) if path else None)

    def _load(self) -> dict:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):           # missing or corrupt: a miss, rewritten on the next put
            return {}
        if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("entries"), dict):
            return {}
        return data["entries"]

    def get(self, key: str, max_block: int) -> dict | None:
        """The entry of ``key`` when it is well-formed and its block size fits (a multiple of 32 up
        to ``max_block``), else None."""
        e = self._load().get(key)
        try:
            block = int(e["block"])
            steps = int(e.get("steps", 0))
            hist = [(int(b), float(ms)) for b, ms in e.get("history", [])]
        except (TypeError, KeyError, ValueError):
            return None
        if block < 32 or block % 32 or block > max_block or steps < 0:
            return None
        return {"block": block, "steps": steps, "history": hist}

    def put(self, key: str, block: int, steps: int, history) -> None:
        """Store a tuning (the oldest entries go beyond :data:`MAX_ENTRIES`); a cache that cannot be
        written is skipped silently (the next run tunes again)."""
        if self.path is None:
            return
        entries = self._load()
        entries.pop(key, None)
        entries[key] = {"block": int(block), "steps": int(steps), "history": [[int(b), float(ms)] for b, ms in history]}
        while len(entries) > MAX_ENTRIES:
            entries.pop(next(iter(entries)))
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".blocks-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump({"version": VERSION, "entries": entries}, fh)
                os.replace(tmp, self.path)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


class BlockSearch:
    """The block-size search over the first launches (module docstring).  Drive it as
    ``while not s.done: launch at s.block; s.record(ms_per_step)``; then :attr:`best`;
    :attr:`history` holds (block, ms per ``window`` steps) of every judged launch."""

    STOP = 1.3          #: stop growing once a size is this many times slower than the best

    def __init__(self, max_block: int, n: int, window: int = 100, warmup: bool = True):
        top = max(32, min(int(max_block) // 32 * 32, -(-int(n) // 32) * 32))
        self.candidates = [b for b in (32 << i for i in range(6)) if b <= top]
        if top not in self.candidates:
            self.candidates.append(top)
        self.top, self.window = top, window
        self.history: list = []
        self._times: dict = {}
        self._warmup = warmup
        self._queue = list(self.candidates)
        self._refined = False
        self.block = self._queue[0]
        self.done = False

    @property
    def best(self) -> int:
        return min(self._times, key=lambda b: (self._times[b], b)) if self._times else self.block

    def record(self, ms_per_step: float) -> None:
        """The launch at :attr:`block` took ``ms_per_step`` per step; move to the next size."""
        if self.done:
            return
        if self._warmup:                       # the first launch loads the module: not judged
            self._warmup = False
            return
        b = self.block
        self._times[b] = min(ms_per_step, self._times.get(b, math.inf))
        self.history.append((b, ms_per_step * self.window))
        self._queue = [c for c in self._queue if c != b]
        if not self._refined and self._times[b] > self.STOP * self._times[self.best]:
            self._queue = []                   # past the best: larger sizes only get slower
        if not self._queue and not self._refined:
            self._refined = True
            self._queue = self._midpoints(self.best)
        if self._queue:
            self.block = self._queue[0]
        else:
            self.block, self.done = self.best, True

    def _midpoints(self, best: int) -> list:
        tried = sorted(self._times)
        i = tried.index(best)
        out = []
        for j in (i - 1, i + 1):
            if 0 <= j < len(tried):
                m = (best + tried[j]) // 2 // 32 * 32
                if m not in self._times and 32 <= m <= self.top and m not in out:
                    out.append(m)
        return out
