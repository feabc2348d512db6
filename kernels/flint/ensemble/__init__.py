"""Adaptive ensembles of SBML models in the ODE core (:mod:`kernels.flint.sbml.core`): Dormand–Prince 5(4)
with dense output and root-found events, one member a thread — :mod:`.rk` (the NumPy twin, backend
``dopri-cpu``) and :mod:`.gpu` (the CUDA kernel ``ensemble_rk.cu`` with the model as generated C,
backend ``ts``, or through the bytecode interpreter, backend ``is``; the same sources compiled for the
host are engines ``c`` and ``c-is``).  Events run per member: a queue of pending instances (delays),
persistence, priorities, seeded random order, t0 firing.  The backends of the adaptive scheme are
listed in :mod:`kernels.flint.schemes`.
"""
