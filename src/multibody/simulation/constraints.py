"""The constraints ``mb.simulate(..., constraints=...)`` takes, at the address simulation users know.

Nothing is defined here: the descriptions (what a user or a loader writes down) are model data in
:mod:`multibody.model.constraints`, and their evaluation and solve — the TMT paper's augmented
system (eq. 6) with Baumgarte stabilisation, spatial_v2's ``FDgq`` by coordinate partitioning —
live beside ``fd_gq`` in :mod:`multibody.dynamics.constraints`.  This module gathers both for
the simulation side (it sits above both floors); the library below simulation imports the homes.

Example
-------
>>> import numpy as np, multibody as mb
>>> from multibody.simulation.constraints import ConstraintSet, PointConstraint
>>> model = mb.models.planar(2)                 # tip of link 2 pinned to the point (1, 1, 0)
>>> pin = ConstraintSet(PointConstraint("link2", [1, 0, 0], None, [1, 1, 0], axes="xy"))
>>> c, cdot = pin.residual(model, np.array([np.pi / 2, -np.pi / 2]), np.zeros(2))
>>> bool(np.allclose(c, 0))
True
"""
from __future__ import annotations

from ..dynamics.constraints import (DEFAULT_BAUMGARTE_TIME, ConstraintSet, ConstraintTerms, GammaQ, constraint_terms,
                                    gamma_q_partitioned, revolute_closure, solve_constrained, with_model_constraints)
from ..errors import ConstraintError
from ..model.constraints import (AxisConstraint, Constraint, FunctionConstraint, JointCoupling, JointPath,
                                 PointConstraint, RollingContact, TendonCoupling, VelocityConstraint, WeldConstraint)

__all__ = [
    "DEFAULT_BAUMGARTE_TIME", "ConstraintError", "gamma_q_partitioned", "GammaQ",
    "ConstraintTerms", "Constraint", "PointConstraint", "AxisConstraint", "JointCoupling", "JointPath",
    "FunctionConstraint", "WeldConstraint", "TendonCoupling", "VelocityConstraint", "RollingContact",
    "ConstraintSet", "revolute_closure", "solve_constrained", "with_model_constraints", "constraint_terms",
]
