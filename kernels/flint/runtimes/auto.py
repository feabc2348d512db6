"""``--runtime auto`` (issue 23): the runtime picked for the run — by the number of cells, whether
they are coupled, the thread mapping, and what this machine has (a CUDA device for ``ts``, a host
C++ compiler for ``c``) — and one line saying why.

The rule follows the measurements in benchmarks/RESULTS.md (LR-1991, 100,000 Euler steps):

* a GPU thread is slower than a host core at one cell's sequential steps (TS many steps a launch
  ≈ 3.8–4.4 µs a step of latency; runtime ``c`` ≈ 0.5 µs a step plus ≈ 0.25 µs a further member), so up
  to :data:`ENSEMBLE_CPU_MAX` members go to ``c``; more members to ``ts``, whose cost stays flat
  while the GPU has idle lanes;
* coupled cells (lines, rings) that fit the GPU at once take many steps a launch with a grid-wide
  barrier between steps (≈ 4.2 µs a step up to one block, ≈ 7–9 µs beyond), so the host wins up to
  :data:`NETWORK_CPU_MAX` cells;
* the expression mapping is a GPU thread layout: ``ts`` (on the CPU only ``cpu`` emulates it);
* without a GPU: ``c`` when a compiler exists, else ``cpu`` (NumPy, always there).
"""
from __future__ import annotations

from dataclasses import dataclass

from .base import runtime_class

AUTO = "auto"
#: ensembles of at most this many members run on a host core (runtime c) even with a GPU present.
#: Measured by ``benchmarks/flint_thesis.py --sections auto`` (LR-1991, 100,000 Euler steps, with the
#: GPU machine's host core; benchmarks/RESULTS.md): c ≈ 0.1 s + 0.025 s a member against TS many
#: steps a launch flat up to 10,000 members (≈ 0.37 s on the H100 with the literal-constant loop), so
#: they cross near 14 members (12: c 0.35 s; 16: c 0.43 s, TS 0.37 s).
ENSEMBLE_CPU_MAX = 12
#: lines/rings of at most this many cells run on a host core: TS takes many steps a launch with a
#: barrier between steps (≈ 0.385 s for 100,000 steps of a line of up to 100 cells, H100), c 0.026–
#: 0.043 s a cell on the two H100 hosts measured (benchmarks/RESULTS.md), so the crossover is 9–15
#: cells depending on the host's core; 11 bounds the worse ratio near ≈ 1.2× on both hosts.
NETWORK_CPU_MAX = 11
AUTO_HELP = (f"picked for the run: c for up to {ENSEMBLE_CPU_MAX} members (or a line/ring of up to "
             f"{NETWORK_CPU_MAX} cells), ts on a GPU for more, NumPy when neither a GPU nor a C++ compiler is "
             "here; the choice and why are shown")


@dataclass(frozen=True)
class Choice:
    """The runtime ``auto`` picked and why (one line for the CLI's output and the GUI's note)."""
    runtime: str
    why: str

    def __str__(self) -> str:
        return f"auto → {self.runtime}: {self.why}"


def choose_runtime(cells: int, network: bool = False, mapping: str = "cell", gpu: bool | None = None,
                   compiler: bool | None = None) -> Choice:
    """The runtime for ``cells`` members (``network``: coupled cells of a line/ring) in ``mapping``.

    ``gpu`` / ``compiler``: whether runtime ts / c can run here (default: asked of the runtimes,
    :meth:`Runtime.unavailable`)."""
    gpu = runtime_class("ts").unavailable() is None if gpu is None else bool(gpu)
    compiler = runtime_class("c").unavailable() is None if compiler is None else bool(compiler)
    cells = int(cells)
    what = f"{cells:,} {'coupled cells' if network else ('member' if cells == 1 else 'members')}"
    if mapping == "expression":
        if gpu:
            return Choice("ts", f"the expression mapping is a GPU thread layout; {what} on the GPU")
        return Choice("cpu", "the expression mapping without a GPU: NumPy emulates it")
    limit = NETWORK_CPU_MAX if network else ENSEMBLE_CPU_MAX
    if gpu and cells > limit:
        how = "neighbours' states each step (grid-synchronised or one launch a step)" if network else \
            "one thread a member, many steps a launch"
        return Choice("ts", f"{what} (> {limit}) on the GPU: the translator, {how}")
    if gpu and not compiler:
        return Choice("ts", f"{what} on the GPU (no host C++ compiler for runtime c)")
    if compiler:
        why = f"{what} (≤ {limit}): a host core steps them faster than GPU launches" if gpu else \
            f"no GPU here; {what} as compiled C on host cores"
        return Choice("c", why)
    return Choice("cpu", f"{'no host C++ compiler' if gpu else 'no GPU and no host C++ compiler'}; "
                         f"{what} with NumPy")
