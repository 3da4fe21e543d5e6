"""Numeric dynamics: RNEA, CRBA/HandC, ABA, FDcrb, HD, EnerMo (compiled, batched)."""
from .aba import FDab, aba, forward_dynamics
from .crba import HandC, crba, hand_c
from .energy import Energy, EnerMo, energy
from .fd_crb import FDcrb, fd_crb
from .fd_sparse import FDsparse, fd_sparse
from .hybrid import HD, hybrid_dynamics
from .rnea import ID, inverse_dynamics, rnea

__all__ = ["rnea", "ID", "inverse_dynamics", "crba", "hand_c", "HandC", "aba", "FDab", "forward_dynamics",
           "fd_crb", "FDcrb", "fd_sparse", "FDsparse", "hybrid_dynamics", "HD", "energy", "EnerMo", "Energy"]
