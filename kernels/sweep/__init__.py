"""Sweeps and ensembles on Dask ``distributed``: many independent runs of the existing kernels,
on an embedded local cluster (one worker per core, or per GPU with dask-cuda), on an existing
cluster (``tcp://host:8786``) or serially.

* :mod:`.points`  — values typed as ``a:b:n`` / ``a..b`` / lists, their product, a sweep's identity;
* :mod:`.base`    — the task registry (``TASKS``), :class:`SweepTask`;
* :mod:`.tasks`   — ``ch``, ``flint-slice`` (+ graph and SBML
  suite tasks in :mod:`.graph_tasks` and :mod:`.suite_tasks`);
* :mod:`.cluster` — the ``--scheduler`` option (local / tcp://… / none);
* :mod:`.run`     — :class:`Sweep`: submit, yield rows as they complete, append each to the
  result file at once (:mod:`.results`), resume, cancel;
* :mod:`.commands` — what the CLI commands ``ch-sweep``, ``flint --sweep`` and ``--scheduler``
  of graph-reproduce / graph-clustering / flint-suite call.

The systems (cahn_hilliard, graphs, flint) do not import this package; it calls their public API.
Qt-free.
"""
from . import graph_tasks, suite_tasks, tasks  # noqa: F401  (explicit registration of every task class)
from .base import TASKS, SweepTask, make_task
from .points import identity, parse_axes, parse_values, parse_vary, product
from .results import ResultFile, read_rows
from .run import Sweep

__all__ = ["identity", "parse_axes", "parse_values", "parse_vary", "product", "ResultFile", "read_rows",
           "Sweep", "TASKS", "SweepTask", "make_task"]
