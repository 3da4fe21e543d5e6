"""Numeric dynamics: RNEA, CRBA/HandC, ABA, FDcrb, fd_sparse, HD, EnerMo, floating base (C core, batched).

Modules are named after the spatial_v2 functions in lower case (``id``, ``handc``, ``fdab``,
``fdcrb``, ``fdsparse``, ``hd``, ``enermo``, ``floating``); the functions they export carry the
readable names and the seed aliases, so no function shadows its module.
"""
from .derivatives import aba_derivatives, minv, rnea_derivatives
from .enermo import Energy, EnerMo, energy
from .fdab import FDab, aba, forward_dynamics
from .fdcrb import FDcrb, fd_crb
from .fdsparse import FDsparse, fd_sparse
from .handc import HandC, crba, hand_c
from .hd import HD, hybrid_dynamics
from .id import ID, inverse_dynamics, rnea

__all__ = ["rnea", "ID", "inverse_dynamics", "crba", "hand_c", "HandC", "aba", "FDab", "forward_dynamics",
           "fd_crb", "FDcrb", "fd_sparse", "FDsparse", "hybrid_dynamics", "HD", "energy", "EnerMo", "Energy",
           "rnea_derivatives", "aba_derivatives", "minv"]
