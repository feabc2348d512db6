"""What the Graphs workspace does with a new graph on its worker thread: the layout's first
positions and the clustering coefficients, every step cancellable.

``prepare_graph`` is the one place for it (generate, open and session restore all use it).  The
generators poll ``cancel`` between chunks (``kernels.graphs.data.generators``); the clustering kernel
has no cancel hook, so :func:`run_abandonable` runs such a step on a thread of its own and gives up
on it as soon as ``cancelled()`` says so: the job ends at once, the step finishes in the
background and its result is dropped.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from kernels.graphs.algorithms.clustering import local_clustering
from kernels.graphs.algorithms.frontier import distance_from, row_kernel

#: seconds between two looks at ``cancelled()`` while a step runs on its own thread
POLL_S = 0.01


def run_abandonable(fn, cancelled, poll: float = POLL_S):
    """``fn()``'s result, or InterruptedError within ``poll`` seconds of ``cancelled()`` turning
    true (``fn`` then runs on to its end on its daemon thread, its result dropped).  An exception
    raised by ``fn`` is raised here."""
    box: dict = {}
    done = threading.Event()

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, daemon=True, name="graphs-step").start()
    while not done.wait(poll):
        if cancelled():
            raise InterruptedError("cancelled")
    if "error" in box:
        raise box["error"]
    return box["result"]


def global_from_local(g, lc: np.ndarray) -> float:
    """Transitivity 3·triangles / connected triples from the local coefficients:
    Σ_v c_v·d_v(d_v − 1)/2 / Σ_v d_v(d_v − 1)/2 (c_v·d_v(d_v − 1)/2 is the triangle count at v)."""
    d = g.degrees().astype(np.float64)
    triples = d * (d - 1) / 2
    tot = float(triples.sum())
    return float((np.asarray(lc, np.float64) * triples).sum() / tot) if tot > 0 else 0.0


@dataclass
class Prepared:
    """A graph ready to show: positions (host), local clustering, transitivity and the force
    layout to stream (None for a non-iterative layout)."""

    graph: object
    pos: np.ndarray
    local_cc: np.ndarray
    global_cc: float
    layout: object = None


def prepare_graph(g, layout_panel, backend, progress, cancelled) -> Prepared:
    """Layout start positions (``layout_panel.initial_positions``), then local clustering (on the
    GPU with a GPU backend) and one distance row by the frontier kernels that readies the click path
    (where a click runs them: ``row_kernel``); each step cancellable (InterruptedError)."""
    pos, lay = run_abandonable(lambda: layout_panel.initial_positions(g, cancelled), cancelled)
    progress(0.6)
    be = backend if backend.is_gpu else None
    lc = run_abandonable(lambda: local_clustering(g, be), cancelled)
    if g.n and row_kernel(g, backend):
        # the first click's row by the frontier kernels (GPU, or their CUDA source on the CPU): compile
        # the kernel and lay the CSR out now, so the click itself costs one search
        # (kernels.graphs.algorithms.frontier keeps both while the graph lives)
        run_abandonable(lambda: distance_from(g, 0, backend, kernel=True), cancelled)
    progress(0.95)
    return Prepared(g, np.asarray(pos, np.float32), lc, global_from_local(g, lc), lay)
