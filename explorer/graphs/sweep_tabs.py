"""The Graphs workspace's experiment tabs (each a sweep panel that re-runs a paper's measurements)
as one table: settings/session key, tab text, figure name and how the figure is found.

:func:`add_sweep_tabs` adds them to a QTabWidget, each as an :class:`explorer.lazy_panel.LazyPanel`
page that builds its panel (in a scroll area) the first time the tab is shown or the panel is asked
for, and returns them as :class:`explorer.lazy_panel.LazyPanels` by key, followed by one generic
:class:`explorer.experiment_tab.ExperimentTab` (key: the experiment's name) for every experiment of
:data:`kernels.graphs.experiments.EXPERIMENTS` that no dedicated tab shows (:func:`shown_experiments`):
a new paper table needs its module and registry line, no GUI code.  :func:`sweep_figures` lists the
built tabs' figures for *Export figure*; :data:`DEDICATED` names the dedicated tabs.
"""
from __future__ import annotations

from kernels.graphs.experiments import EXPERIMENTS

from ..experiment_tab import ExperimentTab
from ..lazy_panel import LazyPanel, LazyPanels
from ..widgets import scrolled

#: the dedicated tabs' keys, in the table's order (the workspace's attributes of the same names)
DEDICATED = ("reproduce", "cc_timing", "bfs_evolution", "block_sweep", "sssp_table", "fw_family")

# Imports inside functions: the experiment panels load when the workspace is built, not when its class is only asked for FILE_TYPES.


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


def shown_experiments(panel_cls) -> list:
    """The experiments a dedicated tab class shows: its ``SHOWS`` (a tuple; a tab that picks its
    experiment at run time, e.g. the SSSP tab's three) when it declares one, else its ``EXPERIMENT``."""
    declared = getattr(panel_cls, "SHOWS", None)
    if declared:
        return list(declared)
    return [] if getattr(panel_cls, "EXPERIMENT", None) is None else [panel_cls.EXPERIMENT]


def add_sweep_tabs(tabs, backend, message) -> LazyPanels:
    """Add every experiment tab to ``tabs``, each built on first show or access: the dedicated ones,
    then a generic :class:`ExperimentTab` for each registered experiment none of them shows."""
    lazy = {}
    shown = set()
    for key, (cls, text, _fig, _get) in _panels().items():
        lazy[key] = LazyPanel(lambda cls=cls: cls(backend, message=message), scrolled)
        tabs.addTab(lazy[key], text)
        shown.update(id(e) for e in shown_experiments(cls))
    for name in EXPERIMENTS:
        exp = EXPERIMENTS[name]
        if id(exp) not in shown and name not in lazy:
            lazy[name] = LazyPanel(lambda exp=exp: ExperimentTab(exp, backend, message=message))
            tabs.addTab(lazy[name], exp.title or name)
    return LazyPanels(lazy)


def sweep_figures(built: dict) -> list:
    """(figure name, widget) of every experiment tab in ``built`` ({key: panel}, e.g.
    :meth:`LazyPanels.built`; a generic tab: its table)."""
    table = _panels()
    return [(table[k][2], table[k][3](p)) if k in table else (p.experiment.title or k, p.shown())
            for k, p in built.items()]
