"""Mechanism: a tree ``Model`` plus what a kinematic tree cannot carry.

A ``Model`` is a kinematic tree with rigid bodies, joints and gravity. The TMT paper's
mechanisms (seed 002) need more: loop closures and other position constraints c(q, t) = 0
(eq. 5), springs and dampers, applied forces such as aerodynamics (eq. 4), contact points for the
impact map (eqs. 7–9), and an actuator selection. A :class:`Mechanism` holds the tree model and
these elements, written as SymPy expressions of the mechanism's coordinate symbols ``q`` (and
rates ``dq``, time ``time``), in the element classes of :mod:`multibody.symbolic.tmt`
(:class:`~multibody.symbolic.tmt.Constraint`, ``RotationalSpring``, ``PointForce``, ``Contact`` …).

A Mechanism is data: its symbolic side lives in :mod:`multibody.symbolic.tmt`.  Body points for
the elements come from the model's own kinematics (:func:`~multibody.symbolic.tmt.mechanism_point`,
:func:`~multibody.symbolic.tmt.mechanism_rotation`), so the elements and the tree share the
coordinates and parameter symbols; :func:`~multibody.symbolic.tmt.tmt_system` gives its
:class:`~multibody.symbolic.tmt.TMTSystem`.  ``derive(mechanism, "tmt")`` derives everything (TMT
handles constraints, springs, dampers, forces and impacts); the other methods derive trees only and say so —
``derive(mechanism.model, "rnea")`` gives the tree without the extra elements.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Model

__all__ = ["Mechanism"]


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A tree :class:`~multibody.Model` with constraints, force elements and contacts.

    model        : the kinematic tree (numeric or symbolic)
    q, dq        : coordinate and rate symbols, in the model's dof order (length model.nv)
    constraints  : :class:`~multibody.symbolic.tmt.Constraint` s, c(q[, time]) = 0 (TMT eq. 5)
    springs, dampers, forces : the TMT paper's force elements (eq. 4)
    contacts     : :class:`~multibody.symbolic.tmt.Contact` points for the impact map (eq. 9)
    tau, S       : actuator symbols and their selection matrix (f = Sᵀτ); default: none
    time         : the time symbol when an element depends on time
    params       : parameter symbols of the elements that are not in the model's arrays
    values       : numeric value of every parameter symbol (model's and elements')
    q0, dq0      : an initial state
    name         : the mechanism's name
    """

    model: Model
    q: tuple
    dq: tuple
    constraints: tuple = ()
    springs: tuple = ()
    dampers: tuple = ()
    forces: tuple = ()
    contacts: tuple = ()
    tau: tuple = ()
    S: Any = None
    time: Any = None
    params: tuple = ()
    values: dict = field(default_factory=dict)
    q0: tuple | None = None
    dq0: tuple | None = None
    name: str = ""

    def __post_init__(self):
        if not isinstance(self.model, Model):
            raise TypeError(f"Mechanism: model must be a multibody.Model, got {type(self.model).__name__}")
        if self.model.nq != self.model.nv:
            raise ValueError(f"Mechanism {self.name!r}: the model has quaternion joints (nq ≠ nv); a mechanism "
                             "needs one coordinate per dof")
        for k in ("q", "dq", "constraints", "springs", "dampers", "forces", "contacts", "tau", "params"):
            object.__setattr__(self, k, tuple(getattr(self, k)))
        if len(self.q) != self.model.nv or len(self.dq) != self.model.nv:
            raise ValueError(f"Mechanism {self.name!r}: q and dq need {self.model.nv} symbols each (one per dof), "
                             f"got {len(self.q)} and {len(self.dq)}")

    @property
    def nv(self) -> int:
        return self.model.nv

    def __repr__(self):
        parts = [f"{len(v)} {k}" for k, v in (("constraints", self.constraints), ("springs", self.springs),
                                              ("dampers", self.dampers), ("forces", self.forces),
                                              ("contacts", self.contacts)) if v]
        return f"Mechanism({self.name!r}, {self.model!r}{', ' if parts else ''}{', '.join(parts)})"
