"""Cahn–Hilliard phase separation (paper 000 §3.1, paper 001 §4).

dφ/dt = m ∇²( −bφ + uφ³ − K∇²φ ), finite differences on the 13-point radius-2
stencil, 2D and 3D, periodic / mirror / fixed boundaries.
"""
from .params import CHParams, BOUNDARIES, INITIALS, INTEGRATORS
from .simulation import CahnHilliard

__all__ = ["CHParams", "CahnHilliard", "BOUNDARIES", "INITIALS", "INTEGRATORS"]
