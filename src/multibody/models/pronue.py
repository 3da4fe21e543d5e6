"""The proNEu manual's example systems, as proNEu body lists (manual section 3).

* :func:`ra3link`           — 3-link robot arm, revolute joints about z, x, y (section 3.1)
* :func:`ra3link_prismatic` — 3-link arm, revolute z, y and a prismatic joint along x (section 3.2)
* :func:`starleth`          — free-floating quadruped StarlETH, 18 DoF, Euler x-y-z base (section 3.3)

Each returns a :class:`PneSystem` (bodies, force elements, q, dq, tau, params, gravity and the
manual's default values); ``system.derive()`` runs :func:`multibody.symbolic.pne.compute_pne`.
Parameter symbols are named as in the manual (``Th1_xx`` for ``Th1.xx``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from ..symbolic.pne import Body, LinForce, RotForce, compute_pne
from ..symbolic.utils import euler_to_rot_A_IB

__all__ = ["PneSystem", "ra3link", "ra3link_prismatic", "starleth"]


@dataclass
class PneSystem:
    """A proNEu input set: everything ``computePNE`` takes, plus default values."""

    name: str
    bodies: list
    force_elements: list
    q: sp.Matrix
    dq: sp.Matrix
    tau: sp.Matrix
    params: tuple
    gravity: sp.Matrix
    param_values: dict = field(default_factory=dict)   # paramDef
    q_default: dict = field(default_factory=dict)      # qDef
    info: dict[str, Any] = field(default_factory=dict)

    def derive(self, **kwargs):
        """``compute_pne`` of this system (keyword arguments are passed on)."""
        return compute_pne(self.bodies, self.force_elements, self.q, self.dq, self.tau,
                           self.gravity, params=self.params, **kwargs)

    def __iter__(self):
        """Unpack as ``bodies, force_elements, q, dq, tau, params``."""
        return iter((self.bodies, self.force_elements, self.q, self.dq, self.tau, self.params))


def _syms(names):
    return sp.symbols(names, real=True)


def _link_params(k):
    l, s, m, xx, yy, zz = _syms(f"l{k} s{k} m{k} Th{k}_xx Th{k}_yy Th{k}_zz")
    return l, s, m, sp.diag(xx, yy, zz), (l, s, m, xx, yy, zz)


def ra3link() -> PneSystem:
    """RA3Link: 3-link robot arm with revolute joints about z, x and y (manual section 3.1)."""
    q1, q2, q3 = _syms("q1 q2 q3")
    Dq1, Dq2, Dq3 = _syms("Dq1 Dq2 Dq3")
    T1, T2, T3 = _syms("T1 T2 T3")
    l1, s1, m1, Th1, p1 = _link_params(1)
    l2, s2, m2, Th2, p2 = _link_params(2)
    l3, s3, m3, Th3, p3 = _link_params(3)
    g = sp.Symbol("g", real=True)
    params = p1 + p2 + p3 + (g,)
    bodies = [
        Body("link1", m1, Th1, sp.Matrix([0, 0, s1]), sp.Matrix([0, 0, 0]),
             euler_to_rot_A_IB(0, 0, q1), parent=None),
        Body("link2", m2, Th2, sp.Matrix([0, 0, s2]), sp.Matrix([0, 0, l1]),
             euler_to_rot_A_IB(q2, 0, 0), parent="link1"),
        Body("link3", m3, Th3, sp.Matrix([0, 0, s3]), sp.Matrix([0, 0, l2]),
             euler_to_rot_A_IB(0, q3, 0), parent="link2"),
    ]
    ftel = [RotForce(None, "link1", sp.Matrix([0, 0, T1])),
            RotForce("link1", "link2", sp.Matrix([T2, 0, 0])),
            RotForce("link2", "link3", sp.Matrix([0, T3, 0]))]
    values = dict(zip(params, [1, 0.5, 1, 1, 1, 1] * 3 + [9.81]))
    return PneSystem("RA3Link", bodies, ftel, sp.Matrix([q1, q2, q3]), sp.Matrix([Dq1, Dq2, Dq3]),
                     sp.Matrix([T1, T2, T3]), params, sp.Matrix([0, 0, -g]), values,
                     {q1: sp.pi / 4, q2: sp.pi / 4, q3: sp.pi / 4})


def ra3link_prismatic() -> PneSystem:
    """RA3LinkPrismatic: revolute z, revolute y, prismatic x (manual section 3.2)."""
    q1, q2, x = _syms("q1 q2 x")
    Dq1, Dq2, Dx = _syms("Dq1 Dq2 Dx")
    T1, T2, F1 = _syms("T1 T2 F1")
    l1, s1, m1, Th1, p1 = _link_params(1)
    l2, s2, m2, Th2, p2 = _link_params(2)
    l3, s3, m3, Th3, p3 = _link_params(3)
    g = sp.Symbol("g", real=True)
    params = p1 + p2 + p3 + (g,)
    bodies = [
        Body("link1", m1, Th1, sp.Matrix([0, 0, s1]), sp.Matrix([0, 0, 0]),
             euler_to_rot_A_IB(0, 0, q1), parent=None),
        Body("link2", m2, Th2, sp.Matrix([s2, 0, 0]), sp.Matrix([0, 0, l1]),
             euler_to_rot_A_IB(0, q2, 0), parent="link1"),
        Body("link3", m3, Th3, sp.Matrix([s3, 0, 0]), sp.Matrix([l2 + x, 0, 0]),
             euler_to_rot_A_IB(0, 0, 0), parent="link2"),
    ]
    ftel = [RotForce(None, "link1", sp.Matrix([0, 0, T1])),
            RotForce("link1", "link2", sp.Matrix([0, T2, 0])),
            LinForce("link2", "link3", P_r_R=sp.Matrix([0, 0, 0]), B_r_A=sp.Matrix([0, 0, 0]),
                     B_F=sp.Matrix([F1, 0, 0]))]
    values = dict(zip(params, [1, 0.5, 1, 1, 1, 1] * 3 + [9.81]))
    return PneSystem("RA3LinkPrismatic", bodies, ftel, sp.Matrix([q1, q2, x]),
                     sp.Matrix([Dq1, Dq2, Dx]), sp.Matrix([T1, T2, F1]), params,
                     sp.Matrix([0, 0, -g]), values, {q1: sp.pi / 4, q2: sp.pi / 4, x: sp.Rational(1, 5)})


_LEGS = (("LF", 1, 1), ("RF", 1, -1), ("LH", -1, 1), ("RH", -1, -1))


def starleth() -> PneSystem:
    """StarlETH: free-floating quadruped, 18 DoF (manual section 3.3).

    q = [qX, qY, qZ, qAL, qBE, qGA, then per leg LF, RF, LH, RH: q*_HAA, q*_HFE, q*_KFE]. The
    main body sits at (qX, qY, qZ) with A_IB = eulerToRotMat_A_IB(qAL, qBE, qGA); each leg has
    HAA about x at (±b2hx, ±b2hy, 0), HFE about y at (0, 0, lH), KFE about y at (0, 0, lT) and a
    massless foot body at (0, 0, lS) for the contact Jacobians (``info["feet"]``). Twelve joint
    torques act between neighbouring bodies; the six base coordinates are not actuated.
    """
    base = _syms("qX qY qZ qAL qBE qGA")
    qX, qY, qZ, qAL, qBE, qGA = base
    joints, torques = [], []
    for leg, _, _ in _LEGS:
        for j in ("HAA", "HFE", "KFE"):
            joints.append(sp.Symbol(f"q{leg}_{j}", real=True))
            torques.append(sp.Symbol(f"T{leg}_{j}", real=True))
    q = list(base) + joints
    dq = [sp.Symbol(f"D{s.name}", real=True) for s in q]
    mB, sB, mH, sH, mT, sT, mS, sS = _syms("mB sB mH sH mT sT mS sS")
    ThB = _syms("ThB_xx ThB_yy ThB_zz")
    ThH = _syms("ThH_xx ThH_yy ThH_zz")
    ThT = _syms("ThT_xx ThT_yy ThT_zz")
    ThS = _syms("ThS_xx ThS_yy ThS_zz")
    b2hx, b2hy, lH, lT, lS, g = _syms("b2hx b2hy lH lT lS g")
    params = (mB, *ThB, sB, mH, *ThH, sH, mT, *ThT, sT, mS, *ThS, sS, b2hx, b2hy, lH, lT, lS, g)
    Z3 = sp.zeros(3, 3)
    bodies = [Body("main_body", mB, sp.diag(*ThB), sp.Matrix([0, 0, sB]), sp.Matrix([qX, qY, qZ]),
                   euler_to_rot_A_IB(qAL, qBE, qGA), parent=None)]
    ftel = []
    feet = []
    for k, (leg, sx, sy) in enumerate(_LEGS):
        qHAA, qHFE, qKFE = joints[3 * k: 3 * k + 3]
        tHAA, tHFE, tKFE = torques[3 * k: 3 * k + 3]
        hip, thigh, shank, foot = (f"{leg}_HAA", f"{leg}_HFE", f"{leg}_KFE", f"{leg}_Foot")
        bodies += [
            Body(hip, mH, sp.diag(*ThH), sp.Matrix([0, 0, sH]), sp.Matrix([sx * b2hx, sy * b2hy, 0]),
                 euler_to_rot_A_IB(qHAA, 0, 0), parent="main_body"),
            Body(thigh, mT, sp.diag(*ThT), sp.Matrix([0, 0, sT]), sp.Matrix([0, 0, lH]),
                 euler_to_rot_A_IB(0, qHFE, 0), parent=hip),
            Body(shank, mS, sp.diag(*ThS), sp.Matrix([0, 0, sS]), sp.Matrix([0, 0, lT]),
                 euler_to_rot_A_IB(0, qKFE, 0), parent=thigh),
            Body(foot, 0, Z3, sp.Matrix([0, 0, 0]), sp.Matrix([0, 0, lS]),
                 euler_to_rot_A_IB(0, 0, 0), parent=shank),
        ]
        feet.append(foot)
        ftel += [RotForce("main_body", hip, sp.Matrix([tHAA, 0, 0])),
                 RotForce(hip, thigh, sp.Matrix([0, tHFE, 0])),
                 RotForce(thigh, shank, sp.Matrix([0, tKFE, 0]))]
    # illustrative values (the manual's paramDef block is not legible in the seed copy)
    values = dict(zip(params, [
        16.0, 0.3, 0.4, 0.4, 0.0,          # main body: mB, ThB_xx/yy/zz, sB
        1.5, 0.004, 0.004, 0.003, 0.03,    # hip: mH, ThH, sH
        1.8, 0.02, 0.02, 0.003, -0.1,      # thigh: mT, ThT, sT
        0.4, 0.005, 0.005, 0.0005, -0.1,   # shank: mS, ThS, sS
        0.2, 0.1, 0.05, -0.2, -0.2,        # b2hx, b2hy, lH, lT, lS
        9.81]))
    return PneSystem("StarlETH", bodies, ftel, sp.Matrix(q), sp.Matrix(dq), sp.Matrix(torques),
                     params, sp.Matrix([0, 0, -g]), values, {s: 0 for s in q},
                     {"feet": feet, "base": list(base)})


def support_jacobian(eom, feet=("LF_Foot", "RF_Foot", "LH_Foot", "RH_Foot")) -> sp.Matrix:
    """Stacked foot-point Jacobians I_J_O of a derived StarlETH (the manual's ``Js``)."""
    names = eom.kinematics["names"]
    return sp.Matrix.vstack(*[eom.kinematics["I_J_O"][names.index(f)] for f in feet])
