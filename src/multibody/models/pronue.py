"""The proNEu manual's example systems (seed 000, section 3) as ``Model`` s.

* :func:`ra3link`           — 3-link robot arm, revolute joints about z, x, y (section 3.1)
* :func:`ra3link_prismatic` — 3-link arm, revolute z, revolute y and a prismatic joint along x (3.2)
* :func:`starleth`          — free-floating quadruped StarlETH, 18 DoF, Euler x-y-z base (3.3)

Parameters carry the manual's names (``Th1_xx`` for ``Th1.xx``, ``b2hx`` …) and its ``paramDef``
values; coordinates, rates and torques are named as in the manual (``q1``, ``Dq1``, ``T1``;
``qLF_HAA``, ``TLF_HAA`` …) and ``derive`` uses those names. The proNEu body list of any of these
models is ``multibody.symbolic.pne_system(model)``: the same symbols, derived from the model.
"""
from __future__ import annotations

from ..model.model import Model
from ..model.seed import Parameters, attach
from ..model.tree import build_tree
from .._extras import require

__all__ = ["ra3link", "ra3link_prismatic", "starleth", "support_jacobian"]


def _link_values(kw):
    return {f"{p}{k}{s}": kw[f"{p}{k}{s}"] for k in (1, 2, 3)
            for p, s in (("l", ""), ("s", ""), ("m", ""), ("Th", "_xx"), ("Th", "_yy"), ("Th", "_zz"))}


def _link(P, k):
    return (P[f"l{k}"], P[f"s{k}"], P[f"m{k}"], P.diag(P[f"Th{k}_xx"], P[f"Th{k}_yy"], P[f"Th{k}_zz"]))


def ra3link(symbolic=False, *, l1=1.0, s1=0.5, m1=1.0, Th1_xx=1.0, Th1_yy=1.0, Th1_zz=1.0,
            l2=1.0, s2=0.5, m2=1.0, Th2_xx=1.0, Th2_yy=1.0, Th2_zz=1.0,
            l3=1.0, s3=0.5, m3=1.0, Th3_xx=1.0, Th3_yy=1.0, Th3_zz=1.0, g=9.81) -> Model:
    """RA3Link: 3-link robot arm with revolute joints about z, x and y (proNEu manual 3.1).

    Link k: length ``lk`` [m] (its joint sits at (0, 0, l_{k−1}) on the previous link), CoM at
    (0, 0, ``sk``), mass ``mk`` [kg], principal inertia ``Thk_xx/yy/zz`` [kg m²] about the CoM;
    gravity ``g`` [m/s²] along −z. Defaults: the manual's paramDef ``[1 0.5 1 1 1 1]`` per link
    and 9.81; qDef = π/4 for every joint. Coordinates q1, q2, q3; torques T1, T2, T3.

    Parameters
    ----------
    symbolic : bool, collection of str, or mapping str → sympy.Expr, default False
        Which parameters become SymPy symbols: none (a numeric model), all (``True``), the named
        ones, or the given expressions; the numbers below stay their values (``parameters(model)``).
    l1, l2, l3 : float, default 1.0
        Link lengths (m); ``l3`` is the seed's and does not enter the model (nothing hangs on link 3).
    s1, s2, s3 : float, default 0.5
        Centre-of-mass offsets along each link (m).
    m1, m2, m3 : float, default 1.0
        Link masses (kg).
    Th1_xx, Th1_yy, Th1_zz, Th2_xx, Th2_yy, Th2_zz, Th3_xx, Th3_yy, Th3_zz : float, default 1.0
        Principal inertias about each link's centre of mass (kg·m²).
    g : float, default 9.81
        Gravity (m/s²) along −z.

    Returns
    -------
    Model
        Three revolute joints (about z, x, y) named q1, q2, q3, with :class:`SeedInfo` attached.

    Raises
    ------
    TypeError
        A parameter that is not a number (a string, None), or ``symbolic`` of another kind.
    ValueError
        A parameter NaN or inf, ``symbolic`` naming an unknown parameter, or a mass the model
        builder refuses (negative).
    multibody._extras.MissingExtraError
        ``symbolic`` asks for symbols and SymPy is not installed (the ``symbolic`` extra).

    Examples
    --------
    >>> import multibody as mb
    >>> model = mb.models.ra3link()
    >>> model.nv, [mb.JointType(t).name for t in model.jtype]
    (3, ['REVOLUTE', 'REVOLUTE', 'REVOLUTE'])
    >>> mb.models.ra3link(symbolic=True).mass[0]
    m1
    """
    P = Parameters("ra3link", symbolic, {**_link_values(locals()), "g": g})
    l1, s1, m1, Th1 = _link(P, 1)
    l2, s2, m2, Th2 = _link(P, 2)
    _, s3, m3, Th3 = _link(P, 3)
    model = build_tree("RA3Link", [
        dict(name="link1", joint="Rz", mass=m1, com=(0, 0, s1), inertia=Th1, joint_name="q1"),
        dict(name="link2", parent="link1", joint="Rx", translation=(0, 0, l1), mass=m2, com=(0, 0, s2),
             inertia=Th2, joint_name="q2"),
        dict(name="link3", parent="link2", joint="Ry", translation=(0, 0, l2), mass=m3, com=(0, 0, s3),
             inertia=Th3, joint_name="q3"),
    ], gravity=(0, 0, -P["g"]))
    pi4 = P.pi / 4
    return attach(model, P.info("RA3Link", ("q1", "q2", "q3"), actuators=("T1", "T2", "T3"),
                                actuated=(0, 1, 2), q0=(pi4, pi4, pi4), dq0=(0, 0, 0)))


def ra3link_prismatic(symbolic=False, *, l1=1.0, s1=0.5, m1=1.0, Th1_xx=1.0, Th1_yy=1.0, Th1_zz=1.0,
                      l2=1.0, s2=0.5, m2=1.0, Th2_xx=1.0, Th2_yy=1.0, Th2_zz=1.0,
                      l3=1.0, s3=0.5, m3=1.0, Th3_xx=1.0, Th3_yy=1.0, Th3_zz=1.0, g=9.81) -> Model:
    """RA3LinkPrismatic: revolute z, revolute y, prismatic x (proNEu manual 3.2).

    Link 1 turns about z (CoM (0, 0, s1)); link 2 about y at (0, 0, l1) (CoM (s2, 0, 0)); link 3
    slides along x, its joint frame at (l2, 0, 0) (CoM (s3, 0, 0)). Parameters as in
    :func:`ra3link`; coordinates q1, q2, x; actuators T1, T2, F1; qDef = [π/4, π/4, 0.2].

    Parameters
    ----------
    symbolic : bool, collection of str, or mapping str → sympy.Expr, default False
        Which parameters become SymPy symbols: none (a numeric model), all (``True``), the named
        ones, or the given expressions; the numbers below stay their values (``parameters(model)``).
    l1, l2, l3 : float, default 1.0
        Link lengths (m); ``l3`` is the seed's and does not enter the model (nothing hangs on link 3).
    s1, s2, s3 : float, default 0.5
        Centre-of-mass offsets along each link (m).
    m1, m2, m3 : float, default 1.0
        Link masses (kg).
    Th1_xx, Th1_yy, Th1_zz, Th2_xx, Th2_yy, Th2_zz, Th3_xx, Th3_yy, Th3_zz : float, default 1.0
        Principal inertias about each link's centre of mass (kg·m²).
    g : float, default 9.81
        Gravity (m/s²) along −z.

    Returns
    -------
    Model
        Revolute z, revolute y, prismatic x, named q1, q2, x, with :class:`SeedInfo` attached.

    Raises
    ------
    TypeError
        A parameter that is not a number (a string, None), or ``symbolic`` of another kind.
    ValueError
        A parameter NaN or inf, ``symbolic`` naming an unknown parameter, or a mass the model
        builder refuses (negative).
    multibody._extras.MissingExtraError
        ``symbolic`` asks for symbols and SymPy is not installed (the ``symbolic`` extra).

    Examples
    --------
    >>> import multibody as mb
    >>> [mb.JointType(t).name for t in mb.models.ra3link_prismatic().jtype]
    ['REVOLUTE', 'REVOLUTE', 'PRISMATIC']
    """
    P = Parameters("ra3link_prismatic", symbolic, {**_link_values(locals()), "g": g})
    l1, s1, m1, Th1 = _link(P, 1)
    l2, s2, m2, Th2 = _link(P, 2)
    _, s3, m3, Th3 = _link(P, 3)
    model = build_tree("RA3LinkPrismatic", [
        dict(name="link1", joint="Rz", mass=m1, com=(0, 0, s1), inertia=Th1, joint_name="q1"),
        dict(name="link2", parent="link1", joint="Ry", translation=(0, 0, l1), mass=m2, com=(s2, 0, 0),
             inertia=Th2, joint_name="q2"),
        dict(name="link3", parent="link2", joint="Px", translation=(l2, 0, 0), mass=m3, com=(s3, 0, 0),
             inertia=Th3, joint_name="x"),
    ], gravity=(0, 0, -P["g"]))
    pi4 = P.pi / 4
    return attach(model, P.info("RA3LinkPrismatic", ("q1", "q2", "x"), actuators=("T1", "T2", "F1"),
                                actuated=(0, 1, 2), q0=(pi4, pi4, 0.2), dq0=(0, 0, 0)))


_LEGS = (("LF", 1, 1), ("RF", 1, -1), ("LH", -1, 1), ("RH", -1, -1))


def starleth(symbolic=False, *, mB=16.0, ThB_xx=0.3, ThB_yy=0.4, ThB_zz=0.4, sB=0.0,
             mH=1.5, ThH_xx=0.004, ThH_yy=0.004, ThH_zz=0.003, sH=0.03,
             mT=1.8, ThT_xx=0.02, ThT_yy=0.02, ThT_zz=0.003, sT=-0.1,
             mS=0.4, ThS_xx=0.005, ThS_yy=0.005, ThS_zz=0.0005, sS=-0.1,
             b2hx=0.2, b2hy=0.1, lH=0.05, lT=-0.2, lS=-0.2, g=9.81) -> Model:
    """StarlETH: free-floating quadruped, 18 DoF (proNEu manual 3.3).

    The main body (mass ``mB``, inertia ``ThB_*``, CoM (0, 0, ``sB``)) sits at (qX, qY, qZ) with
    A_IB = eulerToRotMat_A_IB(qAL, qBE, qGA): three prismatic and three revolute joints (x, y, z)
    through five massless bodies. Each leg LF, RF, LH, RH has HAA about x at (±b2hx, ±b2hy, 0),
    HFE about y at (0, 0, lH), KFE about y at (0, 0, lT), and a massless foot body fixed at
    (0, 0, lS) for the contact Jacobians; hip, thigh and shank have mass ``mH``, ``mT``, ``mS``,
    inertia ``Th{H,T,S}_*`` and CoM (0, 0, ``s{H,T,S}``). Gravity ``g`` along −z.

    q = [qX, qY, qZ, qAL, qBE, qGA, then per leg qLF_HAA, qLF_HFE, qLF_KFE, …]; twelve torques
    TLF_HAA … act on the leg joints, the six base coordinates are not actuated. The manual's
    paramDef block is not legible in the seed copy: the defaults are illustrative values of a
    robot of StarlETH's size (lengths in m, masses in kg).

    Parameters
    ----------
    symbolic : bool, collection of str, or mapping str → sympy.Expr, default False
        Which parameters become SymPy symbols: none (a numeric model), all (``True``), the named
        ones, or the given expressions; the numbers below stay their values (``parameters(model)``).
    mB, mH, mT, mS : float
        Masses (kg) of the main body, hips, thighs, shanks.
    ThB_xx, ThB_yy, ThB_zz, ThH_xx, ThH_yy, ThH_zz, ThT_xx, ThT_yy, ThT_zz, ThS_xx, ThS_yy, ThS_zz : float
        Principal inertias (kg·m²) of each about its centre of mass.
    sB, sH, sT, sS : float
        Centre-of-mass offsets along each body's z axis (m).
    b2hx, b2hy : float
        The hips' offsets from the main body's centre along x and y (m).
    lH, lT, lS : float
        Hip → knee-flexion, thigh and shank offsets along z (m).
    g : float, default 9.81
        Gravity (m/s²) along −z.

    Returns
    -------
    Model
        18 dof: the base's qX, qY, qZ, qAL, qBE, qGA, then per leg (LF, RF, LH, RH) HAA, HFE, KFE;
        massless foot bodies ``LF_Foot`` …; :class:`SeedInfo` attached.

    Raises
    ------
    TypeError
        A parameter that is not a number (a string, None), or ``symbolic`` of another kind.
    ValueError
        A parameter NaN or inf, ``symbolic`` naming an unknown parameter, or a mass the model
        builder refuses (negative).
    multibody._extras.MissingExtraError
        ``symbolic`` asks for symbols and SymPy is not installed (the ``symbolic`` extra).

    Examples
    --------
    >>> import multibody as mb
    >>> model = mb.models.starleth()
    >>> model.nv, mb.models.seed_info(model).coordinates[6]
    (18, 'qLF_HAA')
    """
    values = {k: v for k, v in locals().items() if k != "symbolic"}
    P = Parameters("starleth", symbolic, values)
    ThB = P.diag(*P.take("ThB_xx", "ThB_yy", "ThB_zz"))
    ThH = P.diag(*P.take("ThH_xx", "ThH_yy", "ThH_zz"))
    ThT = P.diag(*P.take("ThT_xx", "ThT_yy", "ThT_zz"))
    ThS = P.diag(*P.take("ThS_xx", "ThS_yy", "ThS_zz"))
    b2hx, b2hy, lH, lT, lS = P.take("b2hx", "b2hy", "lH", "lT", "lS")
    base = ("qX", "qY", "qZ", "qAL", "qBE", "qGA")
    bodies = [dict(name="base_x", joint="Px", joint_name="qX"),
              dict(name="base_y", parent="base_x", joint="Py", joint_name="qY"),
              dict(name="base_z", parent="base_y", joint="Pz", joint_name="qZ"),
              dict(name="base_al", parent="base_z", joint="Rx", joint_name="qAL"),
              dict(name="base_be", parent="base_al", joint="Ry", joint_name="qBE"),
              dict(name="main_body", parent="base_be", joint="Rz", joint_name="qGA",
                   mass=P["mB"], com=(0, 0, P["sB"]), inertia=ThB)]
    joints, torques, feet = [], [], []
    for leg, sx, sy in _LEGS:
        names = [f"q{leg}_{j}" for j in ("HAA", "HFE", "KFE")]
        joints += names
        torques += [f"T{leg}_{j}" for j in ("HAA", "HFE", "KFE")]
        bodies += [
            dict(name=f"{leg}_HAA", parent="main_body", joint="Rx", translation=(sx * b2hx, sy * b2hy, 0),
                 mass=P["mH"], com=(0, 0, P["sH"]), inertia=ThH, joint_name=names[0]),
            dict(name=f"{leg}_HFE", parent=f"{leg}_HAA", joint="Ry", translation=(0, 0, lH),
                 mass=P["mT"], com=(0, 0, P["sT"]), inertia=ThT, joint_name=names[1]),
            dict(name=f"{leg}_KFE", parent=f"{leg}_HFE", joint="Ry", translation=(0, 0, lT),
                 mass=P["mS"], com=(0, 0, P["sS"]), inertia=ThS, joint_name=names[2]),
            dict(name=f"{leg}_Foot", parent=f"{leg}_KFE", joint="fixed", translation=(0, 0, lS),
                 joint_name=f"{leg}_foot_fixed"),
        ]
        feet.append(f"{leg}_Foot")
    model = build_tree("StarlETH", bodies, gravity=(0, 0, -P["g"]))
    q = base + tuple(joints)
    return attach(model, P.info("StarlETH", q, actuators=torques, actuated=tuple(range(6, 18)),
                                q0=(0.0,) * 18, dq0=(0.0,) * 18, notes={"feet": tuple(feet), "base": base}))


def support_jacobian(eom, feet=("LF_Foot", "RF_Foot", "LH_Foot", "RH_Foot")):
    """Stacked foot-point Jacobians ``I_J_O`` of a derived StarlETH (proNEu manual 3.3, its ``Js``).

    Parameters
    ----------
    eom : multibody.symbolic.EquationsOfMotion
        Equations derived with per-body kinematics: ``derive(starleth(...), "pne")``.
    feet : sequence of str, default the four feet
        The bodies whose origin Jacobians are stacked, in order (a single name is one body).

    Returns
    -------
    Js : sympy.Matrix, shape (3·len(feet), nv)
        The feet's position Jacobians in the inertial frame I, stacked, in the model's coordinates
        (qX … qGA, the legs' joints).

    Raises
    ------
    TypeError
        ``eom`` is not equations of motion.
    ValueError
        The equations carry no body kinematics (derived with another method), or a foot names no body.
    multibody._extras.MissingExtraError
        SymPy is not installed (the ``symbolic`` extra).

    Examples
    --------
    >>> import multibody as mb
    >>> from multibody.symbolic import derive
    >>> eom = derive(mb.models.starleth(symbolic=True), "pne")
    >>> mb.models.support_jacobian(eom).shape
    (12, 18)
    """
    sp = require("sympy", "symbolic", "symbolic models")
    if not hasattr(eom, "kinematics"):
        raise TypeError(f"eom: expected the EquationsOfMotion of derive(model, 'pne'), got {type(eom).__name__}")
    kin = eom.kinematics or {}
    if "I_J_O" not in kin:
        raise ValueError("support_jacobian: these equations have no body kinematics; derive with method='pne'")
    names = kin["names"]
    feet = (feet,) if isinstance(feet, str) else tuple(feet)
    missing = [f for f in feet if f not in names]
    if missing:
        raise ValueError(f"support_jacobian: no body named {missing}; bodies are {names}")
    return sp.Matrix.vstack(*[kin["I_J_O"][names.index(f)] for f in feet])
