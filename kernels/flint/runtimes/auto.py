"""``--runtime auto`` (issue 23): the runtime picked for the run — by the number of cells, whether
they are coupled, the thread mapping, and what this machine has (a CUDA device for ``ts``, a host
C++ compiler for ``c``) — and one line saying why.

The rule (the measurements behind it, and the limits' crossovers, are in benchmarks/RESULTS.md,
"``--runtime auto`` against the fastest runtime"; ``benchmarks/flint_thesis.py --sections auto``):

* a GPU thread is slower than a host core at one cell's sequential steps, so up to
  :data:`ENSEMBLE_CPU_MAX` members go to ``c``; more members to ``ts``, whose cost stays flat while
  the GPU has idle lanes;
* coupled cells (lines, rings) that fit the GPU at once take many steps a launch with a grid-wide
  barrier between steps, slower a step than an ensemble's, so the host wins up to
  :data:`NETWORK_CPU_MAX` cells;
* the expression mapping is a GPU thread layout: ``ts`` (on the CPU only ``cpu`` emulates it);
* without a GPU: ``c`` when a compiler exists, else ``cpu`` (NumPy, always there);
* the global ``--backend`` (the array library) is followed: ``cpu`` keeps the run on the host (``c``,
  else ``cpu``) even with a GPU present, ``gpu`` puts it on the GPU (``ts``) whatever its size.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import BackendUnavailable, InvalidParameter
from .base import runtime_class

AUTO = "auto"
#: ensembles of at most this many members run on a host core (runtime c) even with a GPU present:
#: near the crossover of c (a fixed cost plus a cost a member) and TS many steps a launch (flat)
ENSEMBLE_CPU_MAX = 12
#: lines/rings of at most this many cells run on a host core: the crossover of c and TS with a
#: barrier between steps moves with the host's core, and this limit bounds the worse ratio on the
#: hosts measured
NETWORK_CPU_MAX = 11
AUTO_HELP = (f"picked for the run: c for up to {ENSEMBLE_CPU_MAX} members (or a line/ring of up to "
             f"{NETWORK_CPU_MAX} cells), ts on a GPU for more, NumPy when neither a GPU nor a C++ compiler is "
             "here; the choice and why are shown; it follows the global --backend: cpu keeps the run on the "
             "host (c, else NumPy), gpu puts it on the GPU (ts)")


@dataclass(frozen=True)
class Choice:
    """The runtime ``auto`` picked and why (one line for the CLI's output and the GUI's note)."""
    runtime: str
    why: str

    def __str__(self) -> str:
        return f"auto → {self.runtime}: {self.why}"


def choose_runtime(cells: int, network: bool = False, mapping: str = "cell", gpu: bool | None = None,
                   compiler: bool | None = None, backend: str | None = None) -> Choice:
    """The runtime for ``cells`` members (``network``: coupled cells of a line/ring) in ``mapping``.

    ``gpu`` / ``compiler``: whether runtime ts / c can run here (default: asked of the runtimes,
    :meth:`Runtime.unavailable`).  ``backend``: the global ``--backend`` (``cpu`` / ``gpu``; None or
    ``auto``: the rule above) — ``cpu`` rules the GPU out, ``gpu`` picks ``ts`` (BackendUnavailable
    saying why when there is no GPU)."""
    if backend not in (None, AUTO, "cpu", "gpu"):
        raise InvalidParameter(f"backend must be auto, cpu or gpu (got {backend!r})")
    cells = int(cells)
    what = f"{cells:,} {'coupled cells' if network else ('member' if cells == 1 else 'members')}"
    if backend == "gpu":
        why = runtime_class("ts").unavailable() if gpu is None else (None if gpu else "no GPU here")
        if why:
            raise BackendUnavailable(f"--backend gpu: engine auto would run ts, but {why}")
        return Choice("ts", f"--backend gpu: {what} on the GPU (the translator)")
    if backend == "cpu":
        gpu = False
    gpu = runtime_class("ts").unavailable() is None if gpu is None else bool(gpu)
    compiler = runtime_class("c").unavailable() is None if compiler is None else bool(compiler)
    if backend == "cpu" and mapping != "expression":
        if compiler:
            return Choice("c", f"--backend cpu: {what} as compiled C on host cores")
        return Choice("cpu", f"--backend cpu and no host C++ compiler: {what} with NumPy")
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
