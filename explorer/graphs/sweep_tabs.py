"""The Graphs workspace's experiment tabs (each a sweep panel that re-runs a paper's measurements)
as one table: settings/session key, tab text, figure name and how the figure is found.

:func:`add_sweep_tabs` builds them into a QTabWidget (each in a scroll area) and returns them by
key; :func:`sweep_figures` lists their figures for *Export figure*.
"""
from __future__ import annotations

# Imports inside functions: the experiment panels load when the workspace is built, not when its class is only asked for FILE_TYPES.
from ..widgets import scrolled


def _panels():
    """key → (panel class, tab text, figure name, figure of a panel)."""
    from .bfs_evolution import BFSEvolutionPanel, BlockSweepPanel
    from .cc_timing import ClusteringTimingPanel
    from .fw_family import FWFamilyPanel
    from .reproduce import ReproducePanel
    from .sssp_table import SSSPTablePanel
    plots = lambda p: p.plots          # noqa: E731
    return {
        "reproduce": (ReproducePanel, "Reproduce (paper 000)", "Reproduce plots (paper 000 Fig. 14)", plots),
        "cc_timing": (ClusteringTimingPanel, "Clustering timings (paper 001)",
                      "Reproduce clustering timings (paper 001 Figs. 14–15)", plots),
        "bfs_evolution": (BFSEvolutionPanel, "BFS kernels (paper 000)", "BFS kernel evolution (paper 000 Figs. 10–13)",
                          plots),
        "block_sweep": (BlockSweepPanel, "Block sweep (paper 000)", "BFS block-size sweep (paper 000 Fig. 15)", plots),
        "sssp_table": (SSSPTablePanel, "SSSP (paper 004)", "SSSP methods (paper 004 ch. 3)", lambda p: p.shown()),
        "fw_family": (FWFamilyPanel, "Floyd–Warshall family (papers 002, 004)",
                      "Floyd–Warshall family timings (papers 002, 004)", plots),
    }


def add_sweep_tabs(tabs, backend, message) -> dict:
    """Build every experiment tab into ``tabs``; {key: panel}."""
    out = {}
    for key, (cls, text, _fig, _get) in _panels().items():
        out[key] = cls(backend, message=message)
        tabs.addTab(scrolled(out[key]), text)
    return out


def sweep_figures(sweeps: dict) -> list:
    """(figure name, widget) of every experiment tab in ``sweeps``."""
    table = _panels()
    return [(table[k][2], table[k][3](p)) for k, p in sweeps.items()]
