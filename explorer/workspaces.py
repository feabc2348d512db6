"""Registry of the workspaces shown in the main window's mode bar.

Each entry is a :class:`WorkspaceSpec` ``(key, title, factory)``.  A factory is
called as ``factory(backend, parent=None, **options)`` and returns a QWidget that
derives from :class:`explorer.workspace_api.Workspace`: the hooks the main window
calls (settings, shutdown, busy, lecture mode, captions, sessions …, no-op by default)
and ``CAPABILITIES``, the optional menu commands and features it offers.  It has a Qt
signal ``status_changed(dict)`` for the status bar, with any of the keys ``fps
steps_per_s t steps display info``, ``running`` (bool; when sent, steps/s shows only while
True), ``cursor`` (the value under the mouse, "" when
none) and ``progress`` (``(fraction, text)`` of a slow step, or None when it is done).

:data:`WORKSPACES` is a :class:`kernels.registry.Registry` (key → spec, in mode-bar order).  To add a
workspace (Graphs, Occupancy, Flint …) register a spec with :func:`register` in this module; nothing
else in the main window changes.  Each workspace's module is imported inside a function (the first
time its class is asked for): the window starts without importing the workspaces it does not show.
"""
from __future__ import annotations

# Imports inside functions: keep the app's start fast: each workspace's module loads the first time its
# class is asked for, so the window starts without the workspaces it does not show.
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kernels.registry import Registry


@dataclass(frozen=True)
class WorkspaceSpec:
    key: str                 # stable id, used in QSettings
    title: str               # shown in the mode bar
    factory: Callable        # factory(backend, parent=None, **options) -> QWidget
    short: str = ""          # 2–3 letters drawn on the mode-bar icon
    description: str = ""    # tooltip: the system and the paper it comes from
    color: str = "#3b6ea8"   # icon colour
    workspace_class: Callable[[], type] | None = None   # the class (imported when called): FILE_TYPES


#: key → :class:`WorkspaceSpec`, in mode-bar order
WORKSPACES: Registry[WorkspaceSpec] = Registry("workspace", key=lambda spec: spec.key)


def register(spec: WorkspaceSpec) -> WorkspaceSpec:
    """Add ``spec`` under ``spec.key`` (another spec under a taken key: ValueError)."""
    return WORKSPACES.register(spec)


def get(key: str) -> WorkspaceSpec:
    """The spec registered under ``key`` (KeyError otherwise, whatever ``key`` is: a session file's)."""
    try:
        return WORKSPACES[key]
    except TypeError:                        # an unhashable key
        raise KeyError(key) from None


def file_types(spec: WorkspaceSpec) -> dict[str, str]:
    """{suffix: kind} of the files the workspace opens (its class's ``FILE_TYPES`` when it declares
    the ``open_files`` capability), without creating it."""
    cls = spec.workspace_class() if spec.workspace_class is not None else None
    if cls is None or "open_files" not in cls.CAPABILITIES:
        return {}
    return {k.lower(): v for k, v in cls.FILE_TYPES.items()}


def workspace_for(path, prefer: str | None = None) -> str | None:
    """The key of the workspace that opens ``path`` (by its suffix; ``prefer``, the current
    workspace, first when it opens that suffix too), or None."""
    suffix = Path(str(path)).suffix.lower()
    specs = sorted(WORKSPACES.values(), key=lambda s: s.key != prefer)
    for spec in specs:
        if suffix and suffix in file_types(spec):
            return spec.key
    return None


def _cahn_hilliard_cls():
    from .cahn_hilliard.workspace import CahnHilliardWorkspace
    return CahnHilliardWorkspace


def _graphs_cls():
    from .graphs.workspace import GraphsWorkspace
    return GraphsWorkspace


def _occupancy_cls():
    from .occupancy.workspace import OccupancyWorkspace
    return OccupancyWorkspace


def _flint_cls():
    from .flint.workspace import FlintWorkspace
    return FlintWorkspace


def _cahn_hilliard(backend, parent=None, **options):
    return _cahn_hilliard_cls()(backend, parent=parent, **options)


register(WorkspaceSpec(
    key="cahn_hilliard",
    title="Cahn–Hilliard",
    factory=_cahn_hilliard,
    short="CH",
    description="Cahn–Hilliard phase separation on a 2D/3D finite-difference grid\n"
                "(Leist, Playne & Hawick 2009 §3.1; Hawick, Leist & Playne §4)",
    color="#2f6f9f",
    workspace_class=_cahn_hilliard_cls,
))


def _graphs(backend, parent=None, **options):
    return _graphs_cls()(backend, parent=parent, **options)


register(WorkspaceSpec(
    key="graphs",
    title="Graphs",
    factory=_graphs,
    short="G",
    description="Graph generators, all-pairs shortest paths (GPU BFS, Floyd–Warshall, SSSP) and clustering\n"
                "(Leist, Playne & Hawick 2009 §4; Hawick, Leist & Playne §5; papers 002, 004)",
    color="#6a4c93",
    workspace_class=_graphs_cls,
))


def _occupancy(backend, parent=None, **options):
    return _occupancy_cls()(backend, parent=parent, **options)


register(WorkspaceSpec(
    key="occupancy",
    title="Occupancy",
    factory=_occupancy,
    short="OC",
    description="CUDA occupancy calculator for every compute capability, the app's own kernels on this GPU,\n"
                "and the papers' block-size choosers (Solano-Quinde et al. 2011; Okuyama 2013 §4.4; "
                "Leist et al. 2009 Listing 1)",
    color="#2a9d8f",
    workspace_class=_occupancy_cls,
))


def _flint(backend, parent=None, **options):
    return _flint_cls()(backend, parent=parent, **options)


register(WorkspaceSpec(
    key="flint",
    title="Flint",
    factory=_flint,
    short="FL",
    description="Flint: SBML/CellML cell models compiled to bytecode (interpreter IS) or CUDA C (translator TS),\n"
                "ensembles and coupled LR lines/rings, traces streaming live (Okuyama 2013, paper 004 ch. 5)",
    color="#c0392b",
    workspace_class=_flint_cls,
))
