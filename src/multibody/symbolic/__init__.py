"""Symbolic equations of motion M q̈ + b + g = Sᵀτ: proNEu, TMT, Lagrange and symbolic RNEA/CRBA.

>>> import multibody as mb
>>> from multibody.symbolic import derive
>>> eom = derive(mb.models.double_pendulum(symbolic=True))
>>> eom.M.shape, [str(s) for s in eom.q]
((2, 2), ['th1', 'th2'])
"""
from .._extras import require as _require

for _module in ("sympy", "symengine"):   # a clear message, not a ModuleNotFoundError deep in an import
    _require(_module, "symbolic", "multibody.symbolic (symbolic derivation)")

from .cylinder import cylinder_angle, cylinder_element, cylinder_torque
from .derivation import derive, model_symbols
from .eom import EquationsOfMotion, register_method
from .lagrange import christoffel_C, derive_lagrange, lagrange_from_energies
from .pne import Body, LinForce, RotForce, compute_pne
from .pne_input import PneSystem, pne_system
from .tmt import (Constraint, Contact, LinearDamper, LinearSpring, PointForce, RotationalDamper, RotationalSpring,
                  TMTBody, TMTSystem, derive_tmt, tmt_system_from_model)
from .utils import dMATdt, euler_to_rot_A_BI, euler_to_rot_A_IB, is_orthonormal, skew, unskew
from .nonholonomic import ReducedEquations, kane_equations, rolling_rows
from .mechanics_bridge import from_mechanics, to_mechanics

__all__ = ["derive", "model_symbols", "EquationsOfMotion", "register_method",
           "compute_pne", "Body", "RotForce", "LinForce", "PneSystem", "pne_system",
           "cylinder_torque", "cylinder_angle", "cylinder_element",
           "TMTSystem", "TMTBody", "PointForce", "LinearSpring", "RotationalSpring", "LinearDamper",
           "RotationalDamper", "Constraint", "Contact", "derive_tmt", "tmt_system_from_model",
           "derive_lagrange", "lagrange_from_energies", "christoffel_C",
           "euler_to_rot_A_IB", "euler_to_rot_A_BI", "dMATdt", "skew", "unskew", "is_orthonormal",
           "kane_equations", "rolling_rows", "ReducedEquations", "from_mechanics", "to_mechanics"]
