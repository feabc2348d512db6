"""Registry of the workspaces shown in the main window's mode bar.

Each entry is a :class:`WorkspaceSpec` ``(key, title, factory)``.  A factory is
called as ``factory(backend, parent=None, **options)`` and returns a QWidget that
derives from :class:`explorer.workspace_api.Workspace`: the hooks the main window
calls (settings, shutdown, busy, lecture mode, captions, sessions …, no-op by default)
and ``CAPABILITIES``, the optional menu commands and features it offers.  It has a Qt
signal ``status_changed(dict)`` for the status bar, with any of the keys ``fps
steps_per_s t steps display info``, ``cursor`` (the value under the mouse, "" when
none) and ``progress`` (``(fraction, text)`` of a slow step, or None when it is done).

To add a workspace (Graphs, Occupancy, Flint …) append a spec with
:func:`register` in this module; nothing else in the main window changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class WorkspaceSpec:
    key: str                 # stable id, used in QSettings
    title: str               # shown in the mode bar
    factory: Callable        # factory(backend, parent=None, **options) -> QWidget
    short: str = ""          # 2–3 letters drawn on the mode-bar icon
    description: str = ""    # tooltip: the system and the paper it comes from
    color: str = "#3b6ea8"   # icon colour


WORKSPACES: list[WorkspaceSpec] = []


def register(spec: WorkspaceSpec) -> WorkspaceSpec:
    if any(w.key == spec.key for w in WORKSPACES):
        raise ValueError(f"workspace {spec.key!r} is already registered")
    WORKSPACES.append(spec)
    return spec


def get(key: str) -> WorkspaceSpec:
    for w in WORKSPACES:
        if w.key == key:
            return w
    raise KeyError(key)


def _cahn_hilliard(backend, parent=None, **options):
    from .cahn_hilliard.workspace import CahnHilliardWorkspace
    return CahnHilliardWorkspace(backend, parent=parent, **options)


register(WorkspaceSpec(
    key="cahn_hilliard",
    title="Cahn–Hilliard",
    factory=_cahn_hilliard,
    short="CH",
    description="Cahn–Hilliard phase separation on a 2D/3D finite-difference grid\n"
                "(Leist, Playne & Hawick 2009 §3.1; Hawick, Leist & Playne §4)",
    color="#2f6f9f",
))


def _graphs(backend, parent=None, **options):
    from .graphs.workspace import GraphsWorkspace
    return GraphsWorkspace(backend, parent=parent, **options)


register(WorkspaceSpec(
    key="graphs",
    title="Graphs",
    factory=_graphs,
    short="G",
    description="Graph generators, all-pairs shortest paths (GPU BFS, Floyd–Warshall, SSSP) and clustering\n"
                "(Leist, Playne & Hawick 2009 §4; Hawick, Leist & Playne §5; papers 002, 004)",
    color="#6a4c93",
))


def _occupancy(backend, parent=None, **options):
    from .occupancy.workspace import OccupancyWorkspace
    return OccupancyWorkspace(backend, parent=parent, **options)


register(WorkspaceSpec(
    key="occupancy",
    title="Occupancy",
    factory=_occupancy,
    short="OC",
    description="CUDA occupancy calculator for every compute capability, the app's own kernels on this GPU,\n"
                "and the papers' block-size choosers (Solano-Quinde et al. 2011; Okuyama 2013 §4.4; "
                "Leist et al. 2009 Listing 1)",
    color="#2a9d8f",
))


def _flint(backend, parent=None, **options):
    from .flint.workspace import FlintWorkspace
    return FlintWorkspace(backend, parent=parent, **options)


register(WorkspaceSpec(
    key="flint",
    title="Flint",
    factory=_flint,
    short="FL",
    description="Flint: SBML/CellML cell models compiled to bytecode (interpreter IS) or CUDA C (translator TS),\n"
                "ensembles and coupled LR lines/rings, traces streaming live (Okuyama 2013, paper 004 ch. 5)",
    color="#c0392b",
))
