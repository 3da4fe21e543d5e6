"""Closed-loop mechanisms built for simulation: a planar four-bar linkage and the TMT paper's flapping
flyer's prescribed flapping and aerodynamic forces (the constraints and forces ``mb.simulate``
takes; the scripts in the repository's ``examples/`` folder run them end to end)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import _checks
from ..model.builder import ModelBuilder
from .constraints import (DEFAULT_BAUMGARTE_TIME, ConstraintSet, JointCoupling, JointPath, PointConstraint,
                          revolute_closure)

__all__ = ["four_bar", "spatial_loop", "FLYER_PAPER", "flyer_aero_forces", "flyer_constraints"]


def four_bar(crank: float = 1.0, coupler: float = 2.0, rocker: float = 2.0, ground: float = 2.5,
             density: float = 1.0, gravity: float = 9.81):
    """A planar four-bar linkage: (model, closure constraint).

    The open chain crank → coupler → rocker hangs from the base pivot at the origin (revolute
    joints about z, the links uniform rods of ``density`` kg/m along their x axes); the loop is
    closed by pinning the rocker's free end to the second base pivot at (``ground``, 0, 0):
    a :class:`~multibody.model.constraints.PointConstraint` on the x and y rows (the z row of
    a planar loop is identically zero).  The defaults (1, 2, 2, 2.5 m) make a Grashof crank-rocker:
    the crank turns fully.  Gravity −``gravity`` along y.

    Example
    -------
    >>> import numpy as np
    >>> from multibody.simulation.constraints import constraint_terms
    >>> model, closure = four_bar()
    >>> model.nv, constraint_terms(closure, model, np.zeros(3), np.zeros(3)).c.shape
    (3, (2,))
    """
    lengths = dict(crank=crank, coupler=coupler, rocker=rocker, ground=ground, density=density)
    for name, v in lengths.items():
        _checks.number(name, v, positive=True)
    _checks.number("gravity", gravity)
    b = ModelBuilder("four_bar", gravity=(0.0, -float(gravity), 0.0))

    def rod(L):
        m = density * L
        return dict(mass=m, com=[L / 2, 0, 0], inertia=np.diag([0.0, m * L * L / 12, m * L * L / 12]))

    b.add_body("crank", None, "r", joint_name="base_pivot", **rod(crank))
    b.add_body("coupler", "crank", "r", joint_translation=[crank, 0, 0], joint_name="crank_pin", **rod(coupler))
    b.add_body("rocker", "coupler", "r", joint_translation=[coupler, 0, 0], joint_name="coupler_pin", **rod(rocker))
    model = replace(b.build(), planar=True)
    closure = PointConstraint("rocker", [rocker, 0, 0], None, [ground, 0, 0], axes="xy", name="closure")
    return model, closure


def spatial_loop(links: int = 6, skew: float = 1.0):
    """A spatial single loop: (model, closure, q0, qd0).

    spatial_v2's ``autoTree(links, 1, skew)`` — a serial chain of revolute joints whose axes are
    skewed by ``skew`` about the links (the links 1 m long, gravity −9.81 along z) — with the tip
    of its last link joined to the ground by a revolute joint
    (:func:`~multibody.dynamics.constraints.revolute_closure`: 3 point rows and 2 axis rows).  The
    ground joint sits where the tip is at ``q0`` (1, −1, 1, … rad), its axis along the last
    link's joint axis there, so that ``q0`` closes the loop; ``qd0`` is a unit velocity that keeps
    it closed (in the null space of the closure's Jacobian).  Six links leave one degree of freedom.

    Example
    -------
    >>> import numpy as np
    >>> model, closure, q0, qd0 = spatial_loop()
    >>> c, cdot = closure.residual(model, q0, qd0)
    >>> c.shape, bool(np.abs(c).max() < 1e-12 and np.abs(cdot).max() < 1e-12)
    ((5,), True)
    """
    from ..kinematics.forward import body_states
    from ..models.spatial_v2 import auto_tree
    from .constraints import constraint_terms

    n = _checks.integer("links", links, lo=3)
    model = auto_tree(n, skew=_checks.number("skew", skew))
    q0 = np.resize([1.0, -1.0], n)
    s = body_states(model, q0)
    tip, R = n - 1, s.R[n - 1]
    closure = revolute_closure(tip, [1.0, 0, 0], [0, 0, 1.0], None, s.p[tip] + R @ [1.0, 0, 0], R[:, 2],
                               name="ground_joint")
    J = constraint_terms(closure, model, q0, np.zeros(n)).J
    qd0 = np.linalg.svd(J)[2][-1]
    return model, closure, q0, qd0


FLYER_PAPER = dict(m_b=1.0, m_w=0.1, l_w=20.0, w=10.0, g=1.0, alpha_e=np.radians(-6), rho=1.2041, c_d0=0.05,
                   c_dm=1.0, c_lm=2.0, I_0=1e-6, phi_u=np.radians(5), phi_d=np.radians(-30), omega_f=0.5)


def flyer_aero_forces(model, q, qd, rho=1.2041, c_d0=0.05, c_dm=1.0, c_lm=2.0, alpha_e=np.radians(-6),
                      l_w=20.0, w=10.0):
    """Quasi-steady aerodynamic forces of the TMT flyer as ``f_ext`` (nb, 6), base coordinates.

    On each wing, at the quarter chord (w/4 ahead of the wing CoM at ±l_w/2 along the span), with
    v_re = −v (still air), area s = l_w·w (TMT paper, table 1)::

        F = ½ ρ |v_re| s (c_d v_re + c_l ê_span × v_re),  c_d = c_d0 + c_dm sin²α_e,  c_l = c_lm sin 2α_e

    applied as the spatial force [p × F; F] on the wing body.
    """
    from ..kinematics.forward import body_states
    s = body_states(model, q, qd)
    area = l_w * w
    cd = c_d0 + c_dm * np.sin(alpha_e) ** 2
    cl = c_lm * np.sin(2 * alpha_e)
    f_ext = np.zeros((model.nb, 6))
    for name, side in (("wing1", 1.0), ("wing2", -1.0)):
        b = model.body_index(name)
        r = np.array([w / 4, side * l_w / 2, 0.0])
        R, wb, vb = s.R[b], s.v[b, :3], s.v[b, 3:]
        p = s.p[b] + R @ r
        v_re = -(R @ (vb + np.cross(wb, r)))
        e_span = R[:, 1]
        F = 0.5 * rho * area * np.linalg.norm(v_re) * (cd * v_re + cl * np.cross(e_span, v_re))
        f_ext[b] = np.concatenate([np.cross(p, F), F])
    return f_ext


def flyer_constraints(phi_u=FLYER_PAPER["phi_u"], phi_d=FLYER_PAPER["phi_d"], omega_f=FLYER_PAPER["omega_f"],
                      time_constant=DEFAULT_BAUMGARTE_TIME):
    """The TMT flyer's two constraints, as the paper implements them ("Synchronized flapping
    (q₁ = q₂ = q) and flapping input (q = …) are implemented as constraints"):

    * ``synchronized_flapping``: φ₁ − φ₂ = 0 (:class:`JointCoupling`),
    * ``flapping_input``: φ₁ − φ(t) = 0 with φ(t) = (φ_u − φ_d)/2 sin(ωt − π/2) + (φ_u + φ_d)/2
      (:class:`JointPath`, φ̇ and φ̈ analytic),

    stacked in a :class:`ConstraintSet` (Baumgarte gains 1/``time_constant``).  The multipliers
    are the hinge torques that make the wings flap.
    """
    amp, mid = (phi_u - phi_d) / 2, (phi_u + phi_d) / 2
    drive = JointPath("phi1", lambda t: amp * np.sin(omega_f * t - np.pi / 2) + mid,
                      velocity=lambda t: amp * omega_f * np.cos(omega_f * t - np.pi / 2),
                      acceleration=lambda t: -amp * omega_f ** 2 * np.sin(omega_f * t - np.pi / 2),
                      name="flapping_input")
    sync = JointCoupling("phi1", "phi2", name="synchronized_flapping")
    return ConstraintSet(sync, drive, time_constant=time_constant)

