"""Sessions of the Graphs workspace, as data: the controls, colour-by, clicked vertices, plot tab,
the sweep tabs' states and (with data) the graph, its positions and the distance matrix.

:func:`read_session` checks a saved state and its arrays and returns a :class:`GraphSessionPlan`
before anything changes (the workspace then shows it); :func:`session_data` gives the arrays.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kernels.errors import InvalidParameter
from kernels.graphs.data.graph import Graph

from .generator_form import check_params


def jsonable(d: dict) -> dict:
    """Generator parameters as JSON values (numpy scalars → Python)."""
    out = {}
    for k, v in (d or {}).items():
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, (str, int, float, bool)) or v is None:
            out[str(k)] = v
    return out


@dataclass
class GraphSessionPlan:
    """What a session restores: the controls (``params``), the colour-by, the sweep tabs' states
    (``sweeps``: key → state), the named preset, the clicked vertices, the plot tab, the ``graph``
    (None: regenerate from the seed when ``has_graph``) and its distances with their method."""

    params: dict
    color_by: str | None = None
    sweeps: dict = field(default_factory=dict)
    preset: dict | None = None
    selected: list = field(default_factory=list)
    tab: int | None = None
    graph: Graph | None = None
    has_graph: bool = False
    dist: np.ndarray | None = None
    apsp_method: str = "session"
    apsp_seconds: float = 0.0


def graph_state(graph, result) -> dict:
    """The session keys that describe the graph and its APSP result."""
    return {"has_graph": graph is not None, "graph_name": graph.name if graph is not None else "",
            "graph_params": jsonable(graph.params) if graph is not None else {},
            "apsp_method": result.method if result is not None else None,
            "apsp_seconds": result.seconds if result is not None else None}


def session_data(graph, pos, result) -> dict:
    """The arrays of a session: n, edges, positions (weights, distances where there are)."""
    if graph is None:
        return {}
    out = {"n": np.array([graph.n], np.int64), "edges": graph.edges, "positions": pos}
    if graph.weights is not None:
        out["weights"] = graph.weights
    if result is not None:
        out["distances"] = result.dist
    return out


def read_session(state: dict, data: dict, sweep_keys=()) -> GraphSessionPlan:
    """Check ``state`` / ``data`` (InvalidParameter, KeyError, TypeError or ValueError when they do
    not hold a Graphs session) and say what to restore."""
    prm = dict(check_params(state["params"]))
    g = None
    if "edges" in data:
        n = int(np.asarray(data["n"]).ravel()[0])
        edges = np.asarray(data["edges"], np.int32).reshape(-1, 2)
        if len(edges) and (edges.min() < 0 or edges.max() >= n):
            raise InvalidParameter("the session's edge list refers to vertices outside 0…n−1")
        pos = data.get("positions")
        if pos is not None and pos.shape != (n, 2):
            raise InvalidParameter(f"the session's vertex positions have shape {pos.shape}, expected ({n}, 2)")
        g = Graph(n, edges, weights=data.get("weights"), positions=pos,
                  name=state.get("graph_name") or "graph", params=dict(state.get("graph_params") or {}))
    pre = state.get("preset")
    color = state.get("color_by")
    return GraphSessionPlan(
        params=prm, color_by=color if isinstance(color, str) else None,
        sweeps={k: state.get(k) for k in sweep_keys}, preset=pre if isinstance(pre, dict) and "name" in pre
        and "paper" in pre else None, selected=[int(i) for i in state.get("selected", [])],
        tab=int(state["tab"]) if "tab" in state else None, graph=g, has_graph=bool(state.get("has_graph")),
        dist=data.get("distances"), apsp_method=state.get("apsp_method") or "session",
        apsp_seconds=float(state.get("apsp_seconds") or 0.0))
