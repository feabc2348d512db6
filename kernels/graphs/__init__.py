"""Graphs (paper 000 §4, paper 001 §5, paper 002, paper 004 ch. 3–4): generators, CSR and int4
layouts, all-pairs shortest paths on CPU and GPU, clustering coefficients, statistics.

* :mod:`.apsp` — the APSP API (:func:`kernels.graphs.apsp.apsp`), its method registry ``METHODS`` and
  one module per family (BFS, MS-BFS, Floyd–Warshall, SSSP, Dijkstra, several GPUs);
* :mod:`.algorithms` — clustering (one GPU and several), one source's distance row, the overlays;
* :mod:`.data` — graphs and their files, generators, directed graphs, statistics, the picking grid;
* :mod:`.experiments` — the papers' figures and tables re-run (:class:`kernels.experiments.Experiment`);
* :mod:`.layout` — graph layouts; ``cuda/`` — the CUDA sources and their compile site.

No Qt/VisPy here; the Graphs workspace (explorer/graphs/) and ``main.py graph`` use this package.
"""
from .apsp import METHODS, APSPResult, shortest_path
from .algorithms.clustering import global_clustering, local_clustering, ring_lattice_clustering
from .data.generators import GENERATORS, generate
from .data.graph import CSR, Graph, PackedInt4, from_networkx, load_graph, save_graph, to_networkx
from .data.stats import summary

__all__ = ["METHODS", "APSPResult", "shortest_path", "global_clustering", "local_clustering",
           "ring_lattice_clustering", "GENERATORS", "generate", "CSR", "Graph", "PackedInt4",
           "from_networkx", "load_graph", "save_graph", "to_networkx", "summary"]
