"""SBML in Flint (paper 004 ch. 5): :mod:`.reader` (an SBML file → a Flint :class:`~kernels.flint.model.Model`
for the fixed-step runtimes, and back), :mod:`.system` (the whole SBML model as data: species,
compartments, rules, events), :mod:`.solver` (the CPU reference simulator: LSODA with root-found
events, delays, algebraic rules, fast reactions), :mod:`.reference` (that simulator as a runtime of the
CLI and the GUI: streaming, stopping), :mod:`.core` (lowering to the ODE core the adaptive ensembles
integrate) and :mod:`.roadrunner` (libRoadRunner as a peer).
"""
from .reader import read_sbml, write_sbml

__all__ = ["read_sbml", "write_sbml"]
