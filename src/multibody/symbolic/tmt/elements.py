"""The TMT paper's input elements (IRIS 2015, seed 002): bodies, forces, springs, dampers,
constraints and contacts — the paper's l_c / m / I / J / J_kd input as Python objects — and the
cube J of a joint (eq. 1) as :func:`joint_chain`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from ..utils import rot_x, rot_y, rot_z

__all__ = ["TMTBody", "PointForce", "LinearSpring", "RotationalSpring", "LinearDamper", "RotationalDamper",
           "Constraint", "Contact", "newton_restitution", "joint_chain", "column"]


def column(x, what: str) -> sp.Matrix:
    """A column sympy.Matrix from a scalar, sequence or matrix."""
    try:
        if isinstance(x, (sp.MatrixBase, np.ndarray, list, tuple)):
            m = sp.Matrix(x)
        else:
            m = sp.Matrix([sp.sympify(x)])
    except (sp.SympifyError, TypeError, ValueError) as exc:
        raise ValueError(f"{what}: cannot read {x!r} as a vector ({exc})") from None
    if m.shape[1] != 1:
        if m.shape[0] == 1:
            m = m.T
        else:
            raise ValueError(f"{what}: expected a vector, got shape {m.shape}")
    return m


def newton_restitution(e, normal, tangential=0) -> np.ndarray:
    """Restitution matrix E of eq. (8) for Newton's law along a unit ``normal``.

    ``T_ρ q̇* = E T_ρ q̇`` with ``E = −e n nᵀ + t (I − n nᵀ)``: the normal contact velocity is
    reversed and scaled by e, the tangential one multiplied by ``tangential`` (0: no slip).
    """
    n = np.asarray(normal, dtype=float).reshape(-1)
    n = n / np.linalg.norm(n)
    P = np.outer(n, n)
    return -float(e) * P + float(tangential) * (np.eye(n.size) - P)


# --------------------------------------------------------------------------------------------
# input elements (the paper's l_c / J / J_kd input, as Python objects)
# --------------------------------------------------------------------------------------------
@dataclass
class TMTBody:
    """One rigid body of the TMT input.

    mass        m_i
    inertia     planar: the scalar moment of inertia about the CoM; 3-D: the 3×3 inertia about
                the CoM in body coordinates (I_B)
    position    CoM position r_i(q) in the reference frame (2 entries: planar, 3: spatial)
    orientation planar: the absolute angle θ_i(q); 3-D: the rotation matrix R_i(q) = A_IB
                (body coordinates → reference coordinates)
    T_omega     optional 3×n body-frame angular velocity Jacobian (ω_B = T_omega q̇) when it is
                known in a simpler form than eq. (2) gives (e.g. from joint axes)
    """

    mass: Any
    inertia: Any
    position: Any
    orientation: Any = 0
    name: str = ""
    T_omega: Any = None


class TreeBody(TMTBody):
    """A :class:`TMTBody` of a Model's tree (:func:`~multibody.symbolic.tmt.tmt_system_from_model`):
    its mass, inertia, CoM position, rotation and T_ω are the SymEngine expressions of the tree
    walk, which :meth:`TMTSystem.equations` derives from as they are; the fields read as SymPy
    (converted on first read, once). Why: converting a tree's kinematics to SymPy and back was a
    third of a small mechanism's derivation.

    ``se`` holds the twins: ``"m"`` (an expression), ``"I"`` (3×3), ``"r"`` (3×1), ``"R"`` (3×3),
    ``"To"`` (3×n); ``convert`` turns one into SymPy. Assigning a field replaces its twin (the
    system then reads the new SymPy value).
    """

    _TWIN = {"mass": "m", "inertia": "I", "position": "r", "orientation": "R", "T_omega": "To"}

    def __init__(self, name, se, convert):
        self.__dict__.update(name=name, se=dict(se), _convert=convert, _sp={})

    def _get(self, field):
        if field not in self._sp:
            self._sp[field] = self._convert(self.se[self._TWIN[field]])
        return self._sp[field]

    def _set(self, field, value):
        self._sp[field] = value
        self.se.pop(self._TWIN[field], None)

    mass = property(lambda self: self._get("mass"), lambda self, v: self._set("mass", v))
    inertia = property(lambda self: self._get("inertia"), lambda self, v: self._set("inertia", v))
    position = property(lambda self: self._get("position"), lambda self, v: self._set("position", v))
    orientation = property(lambda self: self._get("orientation"), lambda self, v: self._set("orientation", v))
    T_omega = property(lambda self: self._get("T_omega"), lambda self, v: self._set("T_omega", v))


@dataclass
class PointForce:
    """General force F acting at point r_f(q): generalized force ``T_fᵀ F``, ``T_f = ∂r_f/∂q``.

    ``force`` may depend on q, q̇, time, parameters and actuator symbols (e.g. aerodynamics).
    """

    point: Any
    force: Any
    name: str = ""


@dataclass
class LinearSpring:
    """Linear spring between points r_s1(q), r_s2(q): f_k = −k(|l| − l0)(T_s2 − T_s1)ᵀ l̂."""

    point1: Any
    point2: Any
    stiffness: Any
    rest_length: Any = 0
    name: str = ""


@dataclass
class RotationalSpring:
    """Rotational spring on an angle θ(q): f_k = −k (θ − θ0) ∂θ/∂q, V = ½ k (θ − θ0)²."""

    angle: Any
    stiffness: Any
    rest_angle: Any = 0
    name: str = ""


@dataclass
class LinearDamper:
    """Linear damper between points r_v1(q), r_v2(q): f_v = −c (T_v2 − T_v1)ᵀ l̇, l̇ = (T_v2 − T_v1) q̇."""

    point1: Any
    point2: Any
    damping: Any
    name: str = ""


@dataclass
class RotationalDamper:
    """Rotational damper on an angle θ(q): f_v = −c θ̇ ∂θ/∂q."""

    angle: Any
    damping: Any
    name: str = ""


@dataclass
class Constraint:
    """Position constraint(s) c(q[, t]) = 0 (a scalar or a vector)."""

    expr: Any
    name: str = ""


@dataclass
class Contact:
    """Contact (collision) point x_ρ(q) for the impact map (9).

    ``directions`` (k × dim rows) restricts the impulse to chosen directions, e.g. ``[[0, 1]]``
    for a frictionless impact on a floor with normal y; default: all Cartesian directions.
    """

    point: Any
    directions: Any = None
    name: str = ""




# --------------------------------------------------------------------------------------------
# the paper's joint description (cube J): consecutive rotations and translations
# --------------------------------------------------------------------------------------------
def joint_chain(steps, q, start=None):
    """Frames along a chain of elementary motions, as the paper's cube J describes a joint.

    ``steps`` is a sequence of ``("t", v)`` (translate by v in the current frame),
    ``("x" | "y" | "z", θ)`` (rotate about the current frame's axis by θ, an expression of q or a
    constant) or ``("R", C)`` (a constant rotation). This is eq. (1): Γ_Ri = Π Γ_Rfi with
    post-multiplied rotations. ``start`` is a previous result to continue from.

    Returns ``(R, p, T_omega)``: the rotation (frame → reference), the origin, and the body-frame
    angular velocity Jacobian (ω_B = T_omega q̇), propagated step by step
    (ω_new = R_stepᵀ ω_old + a θ̇), which is eq. (2) without differentiating R.
    """
    q = sp.Matrix(list(q))
    n = len(q)
    if start is None:
        R, p, Tw = sp.eye(3), sp.zeros(3, 1), sp.zeros(3, n)
    else:
        R, p, Tw = (sp.Matrix(x) for x in start)
    axes = {"x": sp.Matrix([1, 0, 0]), "y": sp.Matrix([0, 1, 0]), "z": sp.Matrix([0, 0, 1])}
    for k, step in enumerate(steps):
        try:
            kind, val = step
        except (TypeError, ValueError):
            raise ValueError(f"joint_chain step {k}: expected (kind, value), got {step!r}") from None
        if kind == "t":
            v = column(val, f"joint_chain step {k}")
            if v.shape[0] != 3:
                raise ValueError(f"joint_chain step {k}: translation needs 3 entries")
            p = p + R * v
        elif kind in axes:
            th = sp.sympify(val)
            Rs = {"x": rot_x, "y": rot_y, "z": rot_z}[kind](th)
            R = R * Rs
            dth = sp.Matrix([th]).jacobian(q) if n else sp.zeros(1, 0)
            Tw = Rs.T * Tw + axes[kind] * dth
        elif kind == "R":
            C = sp.Matrix(val)
            if C.shape != (3, 3):
                raise ValueError(f"joint_chain step {k}: rotation needs a 3×3 matrix")
            R = R * C
            Tw = C.T * Tw
        else:
            raise ValueError(f"joint_chain step {k}: unknown kind {kind!r} (use 't', 'x', 'y', 'z', 'R')")
    return R.applyfunc(sp.expand), p.applyfunc(sp.expand), Tw.applyfunc(sp.expand)
