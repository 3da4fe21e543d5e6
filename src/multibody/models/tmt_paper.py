"""The TMT paper's mechanisms (seed 002, table 1) as tree ``Model`` s with their extra elements.

* :func:`biped_upper_body` — passive biped walker with an upper body and heel strike
* :func:`flapping_flyer`   — two-winged flyer with quasi-steady aerodynamic forces
* :func:`clemens_joint`    — 3-RSR parallel mechanism (loop closures)

Each returns a :class:`~multibody.model.mechanism.Mechanism`: the kinematic tree as a ``Model`` plus the
hip spring, aerodynamic forces, constraints (loop closures, a pinned stance foot, a flapping
input) and contact points, written with the model's own kinematics. ``derive(mech, "tmt")``
derives the whole system; ``mech.model`` is the tree alone (every method derives it).

Where the paper's table is garbled or silent, the choice made here is written in the docstring.
"""
from __future__ import annotations

import math
from dataclasses import replace

from ..model.seed import Parameters, attach
from ..model.tree import build_tree
from ..model.mechanism import Mechanism
from .._extras import require

__all__ = ["biped_upper_body", "flapping_flyer", "clemens_joint"]


def _real_symbols(names):
    sp = require("sympy", "symbolic", "symbolic models")

    return tuple(sp.Symbol(n, real=True) for n in names)


def _mechanism(P, model, q_names, dq_names, q0, dq0, **elements):
    """Mechanism of ``model`` with coordinate symbols named ``q_names``; ``elements(mech)`` builds the rest."""
    sp = require("sympy", "symbolic", "symbolic models")

    mech = Mechanism(model, _real_symbols(q_names), _real_symbols(dq_names), name=model.name)
    build = elements.pop("build", None)
    extra = build(mech) if build else {}
    values = {s: P.values[n] for n, s in P.symbols.items() if isinstance(s, sp.Symbol)}
    params = tuple(s for s in P.symbols.values() if isinstance(s, sp.Symbol))
    mech = replace(mech, params=params, values=values, q0=tuple(q0), dq0=tuple(dq0), **extra)
    return attach(mech, P.info(model.name, q_names, dq_names, q0=q0, dq0=dq0))


def biped_upper_body(symbolic=False, *, stance_foot_coordinates=True, m_u=1.0, m_b=1000.0, m_f=1.0,
                     l_f=1.0, l_u=0.4, k_h=0.0035, g=1.0, gamma=0.004, I_0=1e-6) -> Mechanism:
    """Passive biped walker with an upper body and heel strike (TMT paper, table 1, column 1).

    Planar, in the x-y plane of slope coordinates (x down the slope, y normal to it), gravity
    ``g·[sin γ, −cos γ, 0]``. Concentrated masses, each with the paper's small inertia ``I_0``:
    the stance foot ``m_f``, the hip ``m_b``, the swing foot ``m_f`` and the upper body ``m_u``;
    legs of length ``l_f``, upper body length ``l_u``; a hip spring ``k_h`` between the legs (on
    q2, rest angle 0). Tree: stance foot position (xs, ys: two prismatic joints), the stance leg
    (revolute z, q1: angle from the slope normal, carrying the stance foot mass at its foot and
    the hip mass, fixed, at its top), the swing leg (q2, relative to the stance leg) and the
    upper body (q3, relative to the stance leg), both hinged at the hip.

    Coordinates ``q = [xs, ys, q1, q2, q3]`` (rates u_xs, u_ys, u1, u2, u3); during a step the
    constraint c = [xs, ys] = 0 (eq. 5) pins the stance foot; the contact is the swing foot
    (heel strike, eq. 9, rows along x and y). At heel strike the trailing foot is released
    (``active_constraints=[]`` in ``TMTSystem.impact``); the paper's plastic, no-slip impact is
    E = 0. ``stance_foot_coordinates=False`` leaves out xs, ys and the constraint: q = [q1, q2, q3],
    the paper's states.

    Paper values (non-dimensional): m_u = 1, m_b = 1000, m_f = 1, l_f = 1, l_u = 0.4,
    k_h = 0.0035, g = 1; initial state [q1, q2, q3, u1, u2, u3] = [0.2, −0.4, −0.1, −0.2, 0.3, 0.1].
    The slope γ is not given in the paper; 0.004 is this project's choice (a typical value for a
    walker with a heavy hip). The paper's l_c/J tables are garbled in the seed text; the angle
    conventions above are this project's reading (at q0 both feet touch the slope).

    Parameters
    ----------
    symbolic : bool, collection of str, or mapping str → sympy.Expr, default False
        Which parameters become SymPy symbols: none (a numeric model), all (``True``), the named
        ones, or the given expressions; the numbers below stay their values (``parameters(model)``).
    stance_foot_coordinates : bool, default True
        Keep the stance foot's xs, ys and their pin constraint (False: q = [q1, q2, q3]).
    m_u, m_b, m_f : float
        Upper-body, hip and foot masses (1, 1000, 1; non-dimensional).
    l_f, l_u : float
        Leg and upper-body lengths (1, 0.4).
    k_h : float, default 0.0035
        The hip spring's stiffness (torque per rad).
    g : float, default 1.0
        Gravity.
    gamma : float, default 0.004
        The slope (rad).
    I_0 : float, default 1e-6
        Each concentrated mass's small inertia.

    Returns
    -------
    Mechanism
        The tree model, its coordinate symbols, the hip spring, the heel-strike contact and (with
        ``stance_foot_coordinates``) the stance-foot constraint; :class:`SeedInfo` attached.

    Raises
    ------
    TypeError
        A parameter that is not a number (a string, None), or ``symbolic`` of another kind.
    ValueError
        A parameter NaN or inf, ``symbolic`` naming an unknown parameter, or a mass the model
        builder refuses (negative).
    multibody._extras.MissingExtraError
        SymPy is not installed (the ``symbolic`` extra): a Mechanism's elements are SymPy expressions.

    Examples
    --------
    >>> import multibody as mb
    >>> mech = mb.models.biped_upper_body()
    >>> mech.model.nv, [str(s) for s in mech.q]
    (5, ['xs', 'ys', 'q1', 'q2', 'q3'])
    """
    P = Parameters("biped_upper_body", symbolic,
                   dict(m_u=m_u, m_b=m_b, m_f=m_f, l_f=l_f, l_u=l_u, k_h=k_h, g=g, gamma=gamma, I_0=I_0))
    m_u, m_b, m_f, l_f, l_u, k_h, g, gamma, I0 = P.take("m_u", "m_b", "m_f", "l_f", "l_u", "k_h", "g", "gamma",
                                                          "I_0")
    inertia = P.diag(I0, I0, I0)
    legs = [dict(name="stance_leg", joint="Rz", mass=m_f, inertia=inertia, joint_name="q1"),
            dict(name="hip", parent="stance_leg", joint="fixed", translation=(0, l_f, 0), mass=m_b,
                 inertia=inertia, joint_name="hip_fixed"),
            dict(name="swing_leg", parent="hip", joint="Rz", mass=m_f, com=(0, -l_f, 0), inertia=inertia,
                 joint_name="q2"),
            dict(name="upper_body", parent="hip", joint="Rz", mass=m_u, com=(0, l_u, 0), inertia=inertia,
                 joint_name="q3")]
    if stance_foot_coordinates:
        legs[0]["parent"] = "foot_y"
        tree = [dict(name="foot_x", joint="Px", joint_name="xs"),
                dict(name="foot_y", parent="foot_x", joint="Py", joint_name="ys")] + legs
        q_names, dq_names = ("xs", "ys", "q1", "q2", "q3"), ("u_xs", "u_ys", "u1", "u2", "u3")
        q0, dq0 = (0.0, 0.0, 0.2, -0.4, -0.1), (0.0, 0.0, -0.2, 0.3, 0.1)
    else:
        tree = legs
        q_names, dq_names = ("q1", "q2", "q3"), ("u1", "u2", "u3")
        q0, dq0 = (0.2, -0.4, -0.1), (-0.2, 0.3, 0.1)
    model = build_tree("biped_upper_body", tree, gravity=(g * P.sin(gamma), -g * P.cos(gamma), 0))

    def elements(mech):
        from ..symbolic.tmt import Constraint, Contact, RotationalSpring, mechanism_point

        q2 = mech.q[q_names.index("q2")]
        out = dict(springs=[RotationalSpring(q2, k_h, 0, name="hip_spring")],
                   contacts=[Contact(mechanism_point(mech, "swing_leg", (0, -l_f, 0)),
                                     directions=[[1, 0, 0], [0, 1, 0]], name="heel_strike")])
        if stance_foot_coordinates:
            sp = require("sympy", "symbolic", "symbolic models")

            out["constraints"] = [Constraint(sp.Matrix(mech.q[:2]), name="stance_foot_pin")]
        return out

    return _mechanism(P, model, q_names, dq_names, q0, dq0, build=elements)


def flapping_flyer(symbolic=False, *, input_as_constraint=True, m_b=1.0, m_w=0.1, l_w=20.0, w=10.0, g=1.0,
                   alpha_e=math.radians(-6), rho=1.2041, c_d0=0.05, c_dm=1.0, c_lm=2.0, I_0=1e-6,
                   phi_u=math.radians(5), phi_d=math.radians(-30), omega_f=0.5) -> Mechanism:
    """Flapping flyer with two wings and quasi-steady aerodynamics (TMT paper, table 1, column 2).

    Tree: the body (mass ``m_b``) translates freely (x, y, z: three prismatic joints, the paper's
    joint 1 "t"); wing 1 (+y side) hinges about +x by phi1, wing 2 (−y side) about −x by phi2, so
    phi1 = phi2 is symmetric flapping. Wings of mass ``m_w``, span ``l_w`` (CoM at ±l_w/2), chord
    ``w``; every body has inertia ``I_0``·1. Gravity [0, 0, −g]. Input u acts on both hinges
    (S = [0 0 0 1 1], the paper's J_kd(3,1,4..5) = u).

    Aerodynamic force on each wing at the quarter chord (w/4 ahead of the wing CoM), with
    v_re = −v (still air) and wing area s = l_w·w:
        drag = ½ ρ |v_re| s c_d v_re,   lift = ½ ρ |v_re| s c_l (ê_span × v_re),
        c_d = c_d0 + c_dm sin²(α_e),   c_l = c_lm sin(2 α_e).
    Constraints: synchronized flapping phi1 − phi2 = 0 and the flapping input
    phi1 = (φ_u − φ_d)/2 · sin(ω t − π/2) + (φ_u + φ_d)/2 (φ_u = 5°, φ_d = −30°, ω = ``omega_f``),
    so the multipliers are the hinge torques; ``input_as_constraint=False`` keeps only the
    synchronisation and leaves u as the input.

    Paper values: m_b = 1, m_w = 0.1, l_w = 20, w = 10, g = 1, α_e = −6°, ρ = 1.2041,
    c_d0 = 0.05, c_dm = 1, c_lm = 2, inertias 1e-6; initial [q, u_x, u_z] = [−30°, −0.01, 0.01].

    Parameters
    ----------
    symbolic : bool, collection of str, or mapping str → sympy.Expr, default False
        Which parameters become SymPy symbols: none (a numeric model), all (``True``), the named
        ones, or the given expressions; the numbers below stay their values (``parameters(model)``).
    input_as_constraint : bool, default True
        Impose the flapping motion as a constraint (False: keep only the synchronisation, u is the input).
    m_b, m_w : float
        Body and wing masses (1, 0.1).
    l_w, w : float
        Wing span and chord (20, 10).
    g : float, default 1.0
        Gravity along −z.
    alpha_e : float
        The effective angle of attack (rad; −6°).
    rho : float
        Air density (1.2041).
    c_d0, c_dm, c_lm : float
        Drag and lift coefficients (0.05, 1, 2).
    I_0 : float, default 1e-6
        Every body's inertia.
    phi_u, phi_d : float
        Upper and lower flapping angles (rad; 5°, −30°).
    omega_f : float, default 0.5
        Flapping frequency (rad per time unit).

    Returns
    -------
    Mechanism
        Five coordinates [x, y, z, phi1, phi2], two aerodynamic point forces, the constraints,
        the input u and time symbol t; :class:`SeedInfo` attached.

    Raises
    ------
    TypeError
        A parameter that is not a number (a string, None), or ``symbolic`` of another kind.
    ValueError
        A parameter NaN or inf, ``symbolic`` naming an unknown parameter, or a mass the model
        builder refuses (negative).
    multibody._extras.MissingExtraError
        SymPy is not installed (the ``symbolic`` extra): a Mechanism's elements are SymPy expressions.

    Examples
    --------
    >>> import multibody as mb
    >>> [str(s) for s in mb.models.flapping_flyer().q]
    ['x', 'y', 'z', 'phi1', 'phi2']
    """
    P = Parameters("flapping_flyer", symbolic,
                   dict(m_b=m_b, m_w=m_w, l_w=l_w, w=w, g=g, alpha_e=alpha_e, rho=rho, c_d0=c_d0, c_dm=c_dm,
                        c_lm=c_lm, I_0=I_0, phi_u=phi_u, phi_d=phi_d, omega_f=omega_f))
    m_b, m_w, l_w, w, I0 = P.take("m_b", "m_w", "l_w", "w", "I_0")
    inertia = P.diag(I0, I0, I0)
    model = build_tree("flapping_flyer", [
        dict(name="body_x", joint="Px", joint_name="x"),
        dict(name="body_y", parent="body_x", joint="Py", joint_name="y"),
        dict(name="body", parent="body_y", joint="Pz", mass=m_b, inertia=inertia, joint_name="z"),
        dict(name="wing1", parent="body", joint="Rx", mass=m_w, com=(0, l_w / 2, 0), inertia=inertia,
             joint_name="phi1"),
        dict(name="wing2", parent="body", joint="revolute", axis=(-1, 0, 0), mass=m_w, com=(0, -l_w / 2, 0),
             inertia=inertia, joint_name="phi2"),
    ], gravity=(0, 0, -P["g"]))

    def elements(mech):
        sp = require("sympy", "symbolic", "symbolic models")

        from ..symbolic.tmt import Constraint, PointForce, mechanism_point, mechanism_rotation

        t, u = sp.Symbol("t", real=True), sp.Symbol("u", real=True)
        rho, cd0, cdm, clm, alpha = P.take("rho", "c_d0", "c_dm", "c_lm", "alpha_e")
        s = l_w * w
        cd = cd0 + cdm * sp.sin(alpha) ** 2
        cl = clm * sp.sin(2 * alpha)
        dq = sp.Matrix(mech.dq)
        forces = []
        for k, side in ((1, 1), (2, -1)):
            pa = mechanism_point(mech, f"wing{k}", (w / 4, side * l_w / 2, 0))
            v_re = -(pa.jacobian(list(mech.q)) * dq)
            speed = sp.sqrt((v_re.T * v_re)[0])
            e_span = mechanism_rotation(mech, f"wing{k}") * sp.Matrix([0, 1, 0])
            force = rho * s * speed * (cd * v_re + cl * e_span.cross(v_re)) / 2
            forces.append(PointForce(pa, force, name=f"aero_wing{k}"))
        p1, p2 = mech.q[3], mech.q[4]
        phi_u, phi_d, omega = P.take("phi_u", "phi_d", "omega_f")
        phi_ref = (phi_u - phi_d) / 2 * sp.sin(omega * t - sp.pi / 2) + (phi_u + phi_d) / 2
        constraints = [Constraint(p1 - p2, name="synchronized_flapping")]
        if input_as_constraint:
            constraints.append(Constraint(p1 - phi_ref, name="flapping_input"))
        return dict(forces=forces, constraints=constraints, tau=(u,), S=[[0, 0, 0, 1, 1]], time=t)

    deg = math.pi / 180
    return _mechanism(P, model, ("x", "y", "z", "phi1", "phi2"), ("dx", "dy", "dz", "dphi1", "dphi2"),
                      (0, 0, 0, -30 * deg, -30 * deg), (-0.01, 0, 0.01, 0, 0), build=elements)


_CLEMENS_Q = ("q_y1", "q_x2", "q_y2", "q_x2b", "q_y3", "q_y4", "q_x5", "q_y5", "q_x5b",
              "q_y6", "q_x7", "q_y7", "q_x7b")


def clemens_joint(symbolic=False, *, m_p=1.0, I_p=0.001, m_l=0.0, I_l=0.0, l=1.0, l_b=1.0, l_p=1.0,
                  g=1.0) -> Mechanism:
    """Clemens joint: 3-RSR parallel mechanism with loop-closure constraints (table 1, column 3).

    Three legs stand on base joints at radius ``l_b``, 120° apart; each leg is a revolute joint
    about its local y axis (tangential), a link of length ``l`` along local z, a spherical joint
    as x-y-x rotations (two massless bodies between), a second link of length ``l``, and a
    revolute joint about local y into the top platform (its joints at radius ``l_p``). The tree
    runs through leg 1 into the platform; legs 2 and 3 hang from the base and close their loops
    by constraints (eq. 5), five rows each: the leg's end point equals the platform's joint point
    (3 rows) and the leg's last revolute axis (its link's local y) is orthogonal to the
    platform's radial and normal directions (2 rows) → 13 coordinates, 3 DOF:
    leg 1 → platform [q_y1, q_x2, q_y2, q_x2b, q_y3], leg 2 [q_y4, q_x5, q_y5, q_x5b],
    leg 3 [q_y6, q_x7, q_y7, q_x7b].

    Paper values: m_p = 1, I_p = 0.001 (platform inertia I_p·1), l = 1, l_b = l_p = 1, g = 1,
    links massless (m_l = 0, I_l = 0 here). Gravity is [0, 0, −g] with the platform above the base
    (the seed prints g = [0, 0, 1]). q0 is the paper's π/6·[−1, 0, 2, 0, −1, …] leg posture
    (knee bent by π/3, platform level at height √3·l) without its ±1e-3 perturbations, so that
    the constraints hold exactly.

    Parameters
    ----------
    symbolic : bool, collection of str, or mapping str → sympy.Expr, default False
        Which parameters become SymPy symbols: none (a numeric model), all (``True``), the named
        ones, or the given expressions; the numbers below stay their values (``parameters(model)``).
    m_p, I_p : float
        Platform mass and inertia (1, 0.001).
    m_l, I_l : float
        Each link's mass and inertia (0, 0: massless links).
    l : float, default 1.0
        Link length.
    l_b, l_p : float, default 1.0
        Radii of the base's and the platform's joints.
    g : float, default 1.0
        Gravity along −z.

    Returns
    -------
    Mechanism
        13 coordinates, the loop-closure constraints of legs 2 and 3; :class:`SeedInfo` attached.

    Raises
    ------
    TypeError
        A parameter that is not a number (a string, None), or ``symbolic`` of another kind.
    ValueError
        A parameter NaN or inf, ``symbolic`` naming an unknown parameter, or a mass the model
        builder refuses (negative).
    multibody._extras.MissingExtraError
        SymPy is not installed (the ``symbolic`` extra): a Mechanism's elements are SymPy expressions.

    Examples
    --------
    >>> import multibody as mb
    >>> mech = mb.models.clemens_joint()
    >>> mech.model.nv, len(mech.constraints)
    (13, 4)
    """
    P = Parameters("clemens_joint", symbolic, dict(m_p=m_p, I_p=I_p, m_l=m_l, I_l=I_l, l=l, l_b=l_b, l_p=l_p, g=g))
    m_p, I_p, m_l, I_l, l, l_b, l_p = P.take("m_p", "I_p", "m_l", "I_l", "l", "l_b", "l_p")
    angles = (0, 2 * P.pi / 3, -2 * P.pi / 3)
    link_inertia = P.diag(I_l, I_l, I_l)
    tree, q_iter = [], iter(_CLEMENS_Q)

    def leg(i):
        a = angles[i]
        base = f"leg{i + 1}"
        tree.extend([
            dict(name=f"{base}_link1", joint="Ry", rotation=P.rot_z(a),
                 translation=(l_b * P.cos(a), l_b * P.sin(a), 0), mass=m_l, com=(0, 0, l / 2),
                 inertia=link_inertia, joint_name=next(q_iter)),
            dict(name=f"{base}_sx", parent=f"{base}_link1", joint="Rx", translation=(0, 0, l),
                 joint_name=next(q_iter)),
            dict(name=f"{base}_sy", parent=f"{base}_sx", joint="Ry", joint_name=next(q_iter)),
            dict(name=f"{base}_link2", parent=f"{base}_sy", joint="Rx", mass=m_l, com=(0, 0, l / 2),
                 inertia=link_inertia, joint_name=next(q_iter)),
        ])

    leg(0)
    tree.append(dict(name="platform", parent="leg1_link2", joint="Ry", translation=(0, 0, l), mass=m_p,
                     com=(-l_p, 0, 0), inertia=P.diag(I_p, I_p, I_p), joint_name=next(q_iter)))
    leg(1)
    leg(2)
    model = build_tree("clemens_joint", tree, gravity=(0, 0, -P["g"]))

    def elements(mech):
        sp = require("sympy", "symbolic", "symbolic models")

        from ..symbolic.tmt import Constraint, mechanism_point, mechanism_rotation

        Rp = mechanism_rotation(mech, "platform")
        out = []
        for i in (1, 2):
            a = angles[i]
            end = mechanism_point(mech, f"leg{i + 1}_link2", (0, 0, l))
            joint = mechanism_point(mech, "platform", (-l_p + l_p * sp.cos(a), l_p * sp.sin(a), 0))
            radial = Rp * sp.Matrix([sp.cos(a), sp.sin(a), 0])
            normal = Rp * sp.Matrix([0, 0, 1])
            axis = mechanism_rotation(mech, f"leg{i + 1}_link2") * sp.Matrix([0, 1, 0])
            out.append(Constraint(end - joint, name=f"leg{i + 1}_position"))
            out.append(Constraint(sp.Matrix([(axis.T * radial)[0], (axis.T * normal)[0]]), name=f"leg{i + 1}_axis"))
        return dict(constraints=out)

    p6 = math.pi / 6
    leg0 = [-p6, 0.0, 2 * p6, 0.0]
    return _mechanism(P, model, _CLEMENS_Q, tuple("d" + n for n in _CLEMENS_Q), leg0 + [-p6] + leg0 + leg0,
                      (0.0,) * 13, build=elements)
