"""Sweeps and ensembles on Dask ``distributed``: many independent runs of the existing kernels,
on an embedded local cluster (one worker per core, or per GPU with dask-cuda), on an existing
cluster (``tcp://host:8786``) or serially.

* :mod:`.points`  — values typed as ``a:b:n`` / ``a..b`` / lists, their product, a sweep's identity;
* :mod:`.base`    — the task registry (``TASKS``), :class:`SweepTask`;
* :mod:`.tasks`   — ``ch``; :mod:`.flint_tasks` — ``flint-slice`` (a :class:`FlintRun` over
  members); :mod:`.sbml_members` — ``sbml-members`` (an SBML ensemble's members on the CPU reference); graph and SBML suite tasks in :mod:`.graph_tasks` and :mod:`.suite_tasks`; ``experiment``, any paper figure or
  table, in :mod:`.experiment_task`) — registered in this ``__init__``;
* :mod:`.cluster` — the ``--scheduler`` option (local / tcp://… / none);
* :mod:`.run`     — :class:`Sweep`: submit, yield rows as they complete, append each to the
  result file at once (:mod:`.results`), resume, cancel;
* :mod:`.commands` — what the CLI commands ``ch-sweep`` and ``--scheduler``
  of graph-reproduce / graph-clustering / flint-suite call.

The systems (cahn_hilliard, graphs, flint) do not import this package; it calls their public API.
Qt-free.
"""
from .base import TASKS, SweepTask, make_task, register
from .experiment_task import ExperimentTask, experiment_sweep
from .graph_tasks import ClusteringTimingTask, GraphReproduceTask
from .suite_tasks import SBMLCaseTask
from .flint_tasks import FlintSliceTask
from .sbml_members import SbmlMembersTask
from .tasks import CHTask
from .points import identity, parse_axes, parse_values, parse_vary, product
from .results import ResultFile, read_rows
from .run import Sweep

# every task class, registered here (a new task: its class and one entry below)
for _cls in (CHTask, FlintSliceTask, GraphReproduceTask, ClusteringTimingTask, SBMLCaseTask, ExperimentTask,
             SbmlMembersTask):
    register(_cls)

__all__ = ["ExperimentTask", "experiment_sweep", "identity", "parse_axes", "parse_values", "parse_vary", "product", "ResultFile", "read_rows",
           "Sweep", "TASKS", "SweepTask", "make_task"]
