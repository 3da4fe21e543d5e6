"""EquationsOfMotion: the common result of every symbolic derivation (proNEu, TMT, Lagrange, RNEA).

    M(q) q̈ + b(q, q̇) + g(q) = Sᵀ τ   (proNEu notation; f = Sᵀ τ)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp


@dataclass
class EquationsOfMotion:
    """Symbolic equations of motion ``M q̈ + b + g = Sᵀ τ``.

    Attributes
    ----------
    q, dq : sympy.Matrix (n×1)   generalized coordinates and their rates
    M : sympy.Matrix (n×n)        mass matrix
    b : sympy.Matrix (n×1)        Coriolis and centrifugal terms
    g : sympy.Matrix (n×1)        gravity terms
    S : sympy.Matrix (m×n)        selection matrix of the actuators (f = Sᵀ τ)
    tau : sympy.Matrix (m×1)      actuator symbols
    params : tuple                model parameters (symbols) the expressions may contain
    kinematics : dict             per-body global kinematics, e.g. {"A_IB": [...], "I_r_O": [...]}
    extra : dict                  method-specific results (constraints, impact maps, ...)
    """

    q: sp.Matrix
    dq: sp.Matrix
    M: sp.Matrix
    b: sp.Matrix
    g: sp.Matrix
    S: sp.Matrix
    tau: sp.Matrix
    params: tuple = ()
    kinematics: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def f(self) -> sp.Matrix:
        """Generalized actuator forces f = Sᵀ τ."""
        return self.S.T * self.tau
