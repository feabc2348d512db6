"""The graph papers' figures and tables, re-run: one :class:`kernels.experiments.Experiment` each.

* :mod:`.reproduce` — paper 000 Fig. 14 / Table II (mean path length vs N): ``FIG14``;
* :mod:`.bfs_evolution` — paper 000 §4.3's BFS kernel evolution and Fig. 15's block sweep:
  ``EVOLUTION``, ``BLOCK_SWEEP``;
* :mod:`.cc_timing` — paper 001 §5.7's clustering timings (Figs. 14–15): ``TIMINGS``;
* :mod:`.sssp_table` — paper 004 ch. 3's SSSP Table 3.1, scaling figures and path overhead:
  ``TABLE31``, ``SCALING``, ``PATH_OVERHEAD``;
* :mod:`.fw_sweep` — paper 002's Table II and paper 004's Tables 4.6–4.8 (the FW family): ``TIMINGS``.

:data:`EXPERIMENTS` lists them by name, as lazy ``"module:ATTRIBUTE"`` entries (importing this package
imports none of the modules: ``from kernels.graphs.experiments import reproduce`` stays as cheap as
before).  A new figure or table: one module with an :class:`~kernels.experiments.Experiment` subclass
and one line below.
"""
from ...registry import Registry

#: name → experiment instance (a :class:`~kernels.experiments.Experiment`), resolved on first use
EXPERIMENTS: Registry = Registry("graph experiment")
for _name, _entry in (("paper000-fig14", "reproduce:FIG14"),
                      ("paper000-bfs-evolution", "bfs_evolution:EVOLUTION"),
                      ("paper000-fig15", "bfs_evolution:BLOCK_SWEEP"),
                      ("paper001-cc-timing", "cc_timing:TIMINGS"),
                      ("paper004-table3.1", "sssp_table:TABLE31"),
                      ("paper004-sssp-scaling", "sssp_table:SCALING"),
                      ("paper004-fig3.14", "sssp_table:PATH_OVERHEAD"),
                      ("fw-timings", "fw_sweep:TIMINGS")):
    EXPERIMENTS.register(f"{__name__}.{_entry}", name=_name)
