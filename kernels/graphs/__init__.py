"""Graphs (paper 000 §4, paper 001 §5, paper 002, paper 004 ch. 3–4): generators, CSR and int4
layouts, all-pairs shortest paths on CPU and GPU, clustering coefficients, statistics.

No Qt/VisPy here; the Graphs workspace (explorer/graphs/) and ``main.py graph`` use this package.
(all-pairs shortest paths: ``kernels.graphs.apsp.apsp``).
"""
from .apsp import METHODS, APSPResult, shortest_path
from .algorithms.clustering import global_clustering, local_clustering, ring_lattice_clustering
from .data.generators import GENERATORS, generate
from .data.graph import CSR, Graph, PackedInt4, from_networkx, load_graph, save_graph, to_networkx
from .data.stats import summary

__all__ = ["METHODS", "APSPResult", "shortest_path", "global_clustering", "local_clustering",
           "ring_lattice_clustering", "GENERATORS", "generate", "CSR", "Graph", "PackedInt4",
           "from_networkx", "load_graph", "save_graph", "to_networkx", "summary"]
