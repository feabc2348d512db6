"""Graph algorithms other than all-pairs shortest paths (those are :mod:`kernels.graphs.apsp`).

* :mod:`.clustering` — clustering coefficients on the CPU and as CUDA (paper 001 §5);
  :mod:`.clustering_multi` — the same counts over several GPUs (paper 001 §5.5);
* :mod:`.frontier` — one source's distance row and predecessors (BFS / SSSP, kept per graph);
* :mod:`.overlays` — per-vertex values the Graphs view colours by (registry ``OVERLAYS``).
"""
