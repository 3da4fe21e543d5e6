"""Numeric dynamics: RNEA, CRBA/HandC, ABA, FDcrb, fd_sparse, HD, EnerMo, floating base (C core, batched).

Modules are named after the spatial_v2 functions in lower case (``id``, ``handc``, ``fdab``,
``fdcrb``, ``fdsparse``, ``hd``, ``enermo``, ``floating``); the functions they export carry the
readable names, so no function shadows its module (the seed spellings are in ``multibody.spatial_v2``).
"""
from .derivatives import aba_derivatives, minv, rnea_derivatives
from .enermo import Energy, energy
from .fdab import aba
from .fdcrb import fd_crb
from .fdsparse import fd_sparse
from .handc import crba, hand_c
from .hd import hybrid_dynamics
from .id import rnea

__all__ = ["rnea", "crba", "hand_c", "aba", "fd_crb", "fd_sparse", "hybrid_dynamics", "energy", "Energy",
           "rnea_derivatives", "aba_derivatives", "minv"]
