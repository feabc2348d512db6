"""The graph papers' figures and tables, re-run: one module each.

* :mod:`.reproduce` — paper 000 Fig. 14 / Table II (mean path length vs N);
* :mod:`.bfs_evolution` — paper 000 §4.3's BFS kernel evolution and block sweep;
* :mod:`.cc_timing` — paper 001 §5.7's clustering timings (Figs. 14–15);
* :mod:`.sssp_table` — paper 004 ch. 3's SSSP tables and scaling figures;
* :mod:`.fw_sweep` — paper 002's Table II and paper 004's Tables 4.6–4.8 (the FW family).
"""
