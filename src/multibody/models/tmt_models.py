"""Seed mechanisms of the TMT paper (IRIS 2015, seed 002) and the OpenDE report (seed 003).

Each constructor returns a :class:`multibody.symbolic.tmt.TMTSystem` whose parameters are SymPy
symbols; ``system.values`` holds the numbers the seed gives (exact rationals where the seed
prints exact numbers), ``system.q0``/``system.dq0`` the seed's initial state.
``double_pendulum_report_model()`` is the same double pendulum as an array-based ``Model``.

Where the paper's table is garbled or silent, the choice made here is written in the docstring.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from ..symbolic.tmt import (
    Constraint,
    Contact,
    PointForce,
    RotationalSpring,
    TMTBody,
    TMTSystem,
    joint_chain,
)

__all__ = [
    "double_pendulum_report",
    "double_pendulum_report_model",
    "double_pendulum_report_symbols",
    "biped_upper_body",
    "flapping_flyer",
    "clemens_joint",
]


# --------------------------------------------------------------------------------------------
# OpenDE report, chapter 5 / appendix D.1 (DP_EOM.m)
# --------------------------------------------------------------------------------------------
def double_pendulum_report_symbols():
    """Symbols of DP_EOM.m: coordinates (th1, th2), rates (Dth1, Dth2) and the parameters."""
    th1, th2, Dth1, Dth2 = sp.symbols("th1 th2 Dth1 Dth2")
    params = sp.symbols("m1 m2 l1 l2 h1 h2 w1 w2 d1 d2 g")
    return (th1, th2), (Dth1, Dth2), params


def _dp_values(params):
    m1, m2, l1, l2, h1, h2, w1, w2, d1, d2, g = params
    tenth = sp.Rational(1, 10)
    # DP_EOM.m: l1=1; l2=1; h=1; w=0.1; d=0.1; m=1; gv=[0 9.81 0]
    return {m1: 1, m2: 1, l1: 1, l2: 1, h1: 1, h2: 1, w1: tenth, w2: tenth, d1: tenth, d2: tenth,
            g: sp.Rational(981, 100)}


def _box_inertia(m, h, w, d):
    # DP_EOM.m: I = diag([1/12 m (w²+d²), 1/12 m (h²+d²), 1/12 m (h²+w²)]), link along body x
    return sp.diag(m * (w**2 + d**2) / 12, m * (h**2 + d**2) / 12, m * (h**2 + w**2) / 12)


def double_pendulum_report() -> TMTSystem:
    """The double pendulum of the OpenDE report (section 5.1, appendix D.1 DP_EOM.m).

    Two homogeneous boxes (m = 1 kg, h × w × d = 1 × 0.1 × 0.1 m) on two z-axis hinges.
    Coordinates as in DP_EOM.m (Denavit-Hartenberg, a = l, α = d = 0): ``th1`` is the angle of
    link 1 from the horizontal x axis, ``th2`` the angle of link 2 relative to link 1; y points
    up and gravity is ``[0, −g, 0]`` (``gv = [0 9.81 0]``, P = m gvᵀ r). Link i's CoM is at
    ``r_ic = [−l_i/2, 0, 0]`` in DH frame i (the frame at the link's far end). Initial state
    ``q0 = [π/4, −π/4]``, ``q̇0 = 0`` (simDP.m).

    Bodies are 3-D with the DH rotation matrices R01, R02 and the full box inertias, as in
    DP_EOM.m (``DR = Jwᵀ R I Rᵀ Jw``).
    """
    (th1, th2), (Dth1, Dth2), params = double_pendulum_report_symbols()
    m1, m2, l1, l2, h1, h2, w1, w2, d1, d2, g = params

    def dh(a, th):  # A{ii}: DH transform with alpha = 0, d = 0
        c, s = sp.cos(th), sp.sin(th)
        return sp.Matrix([[c, -s, 0, a * c], [s, c, 0, a * s], [0, 0, 1, 0], [0, 0, 0, 1]])

    H01 = dh(l1, th1)
    H02 = H01 * dh(l2, th2)
    r0c1 = (H01 * sp.Matrix([-l1 / 2, 0, 0, 1]))[:3, 0]
    r0c2 = (H02 * sp.Matrix([-l2 / 2, 0, 0, 1]))[:3, 0]
    bodies = [
        TMTBody(m1, _box_inertia(m1, h1, w1, d1), r0c1, H01[:3, :3], name="link1"),
        TMTBody(m2, _box_inertia(m2, h2, w2, d2), r0c2, H02[:3, :3], name="link2"),
    ]
    return TMTSystem([th1, th2], [Dth1, Dth2], bodies, params=params, gravity=[0, -g, 0],
                     values=_dp_values(params), q0=[np.pi / 4, -np.pi / 4], dq0=[0.0, 0.0],
                     name="double_pendulum_report")


def double_pendulum_report_model():
    """The same double pendulum as a symbolic array-based ``Model`` (for ``derive(model, …)``).

    Body frames sit at the hinges (joint frame = hinge, z axis); the CoM is at ``[l_i/2, 0, 0]``
    in body coordinates, which is DP_EOM's ``r_ic = [−l_i/2, 0, 0]`` in the DH frame at the far
    end. Returns ``(model, (q, dq, params, values))`` with DP_EOM's symbols.
    """
    from ..model.model import Model  # the array-based Model (imported lazily)

    (th1, th2), (Dth1, Dth2), params = double_pendulum_report_symbols()
    m1, m2, l1, l2, h1, h2, w1, w2, d1, d2, g = params
    O = sp.S.Zero
    I3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]

    def obj(a):
        arr = np.empty(np.shape(a), dtype=object)
        for idx, v in np.ndenumerate(np.array(a, dtype=object)):
            arr[idx] = sp.sympify(v)
        return arr

    model = Model(
        parent=np.array([-1, 0]),
        jtype=np.array([1, 1]),  # REVOLUTE
        jaxis=obj([[0, 0, 1], [0, 0, 1]]),
        jpitch=obj([0, 0]),
        tree_rotation=obj([I3, I3]),
        tree_translation=obj([[O, O, O], [l1, O, O]]),
        mass=obj([m1, m2]),
        com=obj([[l1 / 2, O, O], [l2 / 2, O, O]]),
        inertia_com=obj([np.array(_box_inertia(m1, h1, w1, d1)).tolist(),
                         np.array(_box_inertia(m2, h2, w2, d2)).tolist()]),
        gravity=obj([O, -g, O]),
        body_names=("link1", "link2"),
        name="double_pendulum_report",
    )
    return model, ((th1, th2), (Dth1, Dth2), params, _dp_values(params))


# --------------------------------------------------------------------------------------------
# TMT paper, table: 3-link passive biped walker with upper body
# --------------------------------------------------------------------------------------------
def biped_upper_body(stance_foot_coordinates: bool = True) -> TMTSystem:
    """Passive biped walker with an upper body and heel strike (TMT paper, table 1, column 1).

    Planar, concentrated masses (each body also carries the paper's inertia 1e-6):
    stance foot m_f, hip m_b, swing foot m_f, upper body m_u; legs of length l_f, upper body
    length l_u, hip spring k_h between the legs (on q2, rest angle 0), gravity
    ``g·[sin γ, −cos γ]`` in slope coordinates (x down the slope, y normal to it).

    Coordinates ``q = [q1, q2, q3, xs, ys]``:
      q1  stance-leg angle from the slope normal (hip at foot + l_f·[−sin q1, cos q1]),
      q2  swing-leg angle relative to the stance leg (swing foot at hip + l_f·[sin(q1+q2), −cos(q1+q2)]),
      q3  upper-body angle relative to the stance leg (CoM at hip + l_u·[−sin(q1+q3), cos(q1+q3)]),
      xs, ys  the stance foot position, held at 0 by the constraint c = [xs, ys] (eq. 5) during a
      step. The contact is the swing foot (heel strike, eq. 9); at heel strike the trailing foot
      is released: ``system.impact(..., active_constraints=[])``. The paper's plastic, no-slip
      impact is ``E = 0``.
    ``stance_foot_coordinates=False`` gives the 3-coordinate form (stance foot pinned by the
    choice of coordinates, the paper's states [q1, q2, q3]).

    Paper values (non-dimensional): m_u = 1, m_b = 1000, m_f = 1, l_f = 1, l_u = 0.4,
    k_h = 0.0035, g = 1; initial state [q1, q2, q3, u1, u2, u3] = [0.2, −0.4, −0.1, −0.2, 0.3, 0.1].
    The slope γ is not given in the paper; 0.004 is this project's choice (a typical value for a
    walker with a heavy hip). The paper's l_c/J tables are garbled in the seed text; the angle
    conventions above are this project's reading (checked: at q0 both feet touch the slope).
    """
    q1, q2, q3, xs, ys = sp.symbols("q1 q2 q3 xs ys")
    u1, u2, u3, uxs, uys = sp.symbols("u1 u2 u3 u_xs u_ys")
    m_u, m_b, m_f, l_f, l_u, k_h, g, gamma, I0 = sp.symbols("m_u m_b m_f l_f l_u k_h g gamma I_0")
    if stance_foot_coordinates:
        q, dq = [q1, q2, q3, xs, ys], [u1, u2, u3, uxs, uys]
        foot = sp.Matrix([xs, ys])
    else:
        q, dq = [q1, q2, q3], [u1, u2, u3]
        foot = sp.Matrix([0, 0])
    hip = foot + l_f * sp.Matrix([-sp.sin(q1), sp.cos(q1)])
    swing = hip + l_f * sp.Matrix([sp.sin(q1 + q2), -sp.cos(q1 + q2)])
    upper = hip + l_u * sp.Matrix([-sp.sin(q1 + q3), sp.cos(q1 + q3)])
    bodies = [
        TMTBody(m_f, I0, foot, q1, name="stance_foot"),
        TMTBody(m_b, I0, hip, q1, name="hip"),
        TMTBody(m_f, I0, swing, q1 + q2, name="swing_foot"),
        TMTBody(m_u, I0, upper, q1 + q3, name="upper_body"),
    ]
    values = {m_u: 1.0, m_b: 1000.0, m_f: 1.0, l_f: 1.0, l_u: 0.4, k_h: 0.0035, g: 1.0,
              gamma: 0.004, I0: 1e-6}
    constraints = [Constraint(sp.Matrix([xs, ys]), name="stance_foot_pin")] if stance_foot_coordinates else []
    q0 = [0.2, -0.4, -0.1] + ([0.0, 0.0] if stance_foot_coordinates else [])
    dq0 = [-0.2, 0.3, 0.1] + ([0.0, 0.0] if stance_foot_coordinates else [])
    return TMTSystem(
        q, dq, bodies,
        params=(m_u, m_b, m_f, l_f, l_u, k_h, g, gamma, I0),
        gravity=[g * sp.sin(gamma), -g * sp.cos(gamma)],
        springs=[RotationalSpring(q2, k_h, 0, name="hip_spring")],
        constraints=constraints,
        contacts=[Contact(swing, name="heel_strike")],
        values=values, q0=q0, dq0=dq0, name="biped_upper_body",
    )


# --------------------------------------------------------------------------------------------
# TMT paper, table: 2-link flapping flyer
# --------------------------------------------------------------------------------------------
def flapping_flyer(input_as_constraint: bool = True) -> TMTSystem:
    """Flapping flyer with two wings and quasi-steady aerodynamics (TMT paper, table 1, column 2).

    Coordinates ``q = [x, y, z, phi1, phi2]``: the body translates freely (the paper's joint 1,
    "t"); wing 1 (+y side) hinges about +x by phi1, wing 2 (−y side) about −x by phi2, so
    ``phi1 = phi2`` is symmetric flapping (the paper's "q1 = q2 = q"). Wing CoMs at ±l_w/2 along
    the span. Input u acts on both wing hinges (S = [0 0 0 1 1], the paper's J_kd(3,1,4..5) = u).

    Aerodynamic force on each wing at the quarter chord (w/4 ahead of the wing CoM), with
    ``v_re = −v`` (still air) and wing area ``s = l_w·w``:
        drag = ½ ρ |v_re| s c_d v_re                    (|drag| = ½ ρ v_reᵀv_re s c_d, along v_re)
        lift = ½ ρ |v_re| s c_l (ê_span × v_re)         (perpendicular to v_re; ê_span = wing's
                                                          rotated y axis; full ½ρ|v|²s c_l when
                                                          v_re ⟂ span)
        c_d = c_d0 + c_dm sin²(α_e),  c_l = c_lm sin(2 α_e)
    The paper's constraints: synchronized flapping ``phi1 − phi2 = 0`` and the flapping input
    ``phi1 = φ(t) = (φ_u − φ_d)/2 · sin(ω t − π/2) + (φ_u + φ_d)/2`` (φ_u = 5°, φ_d = −30°,
    ω = 0.5), so the multipliers are the hinge torques; ``input_as_constraint=False`` keeps only
    the synchronisation and leaves u as the input.

    Paper values: m_b = 1, m_w = 0.1, l_w = 20, w = 10, g = 1 (gravity [0, 0, −g]), α_e = −6°,
    ρ = 1.2041, c_d0 = 0.05, c_dm = 1, c_lm = 2, inertias 1e-6·I; initial
    [q, u_x, u_z, u_q] = [−30°, −0.01, 0.01, 0].
    """
    x, y, z, p1, p2 = sp.symbols("x y z phi1 phi2")
    dx, dy, dz, dp1, dp2 = sp.symbols("dx dy dz dphi1 dphi2")
    t, u = sp.symbols("t u")
    m_b, m_w, l_w, w, g, alpha_e, rho, cd0, cdm, clm, I0, phi_u, phi_d, omega = sp.symbols(
        "m_b m_w l_w w g alpha_e rho c_d0 c_dm c_lm I_0 phi_u phi_d omega_f")
    q = [x, y, z, p1, p2]
    dq = sp.Matrix([dx, dy, dz, dp1, dp2])
    base = (sp.eye(3), sp.Matrix([x, y, z]), sp.zeros(3, 5))
    R1, o1, Tw1 = joint_chain([("x", p1)], q, start=base)
    R2, o2, Tw2 = joint_chain([("x", -p2)], q, start=base)
    c1 = o1 + R1 * sp.Matrix([0, l_w / 2, 0])
    c2 = o2 + R2 * sp.Matrix([0, -l_w / 2, 0])
    s = l_w * w
    cd = cd0 + cdm * sp.sin(alpha_e) ** 2
    cl = clm * sp.sin(2 * alpha_e)
    forces = []
    for k, (c, R) in enumerate(((c1, R1), (c2, R2)), start=1):
        pa = c + R * sp.Matrix([w / 4, 0, 0])
        v = pa.jacobian(q) * dq
        v_re = -v
        speed = sp.sqrt((v_re.T * v_re)[0])
        e_span = R * sp.Matrix([0, 1, 0])
        drag = rho * s * cd * speed * v_re / 2
        lift = rho * s * cl * speed * e_span.cross(v_re) / 2
        forces.append(PointForce(pa, drag + lift, name=f"aero_wing{k}"))
    bodies = [
        TMTBody(m_b, I0 * sp.eye(3), sp.Matrix([x, y, z]), sp.eye(3), name="body"),
        TMTBody(m_w, I0 * sp.eye(3), c1, R1, name="wing1", T_omega=Tw1),
        TMTBody(m_w, I0 * sp.eye(3), c2, R2, name="wing2", T_omega=Tw2),
    ]
    phi_ref = (phi_u - phi_d) / 2 * sp.sin(omega * t - sp.pi / 2) + (phi_u + phi_d) / 2
    constraints = [Constraint(p1 - p2, name="synchronized_flapping")]
    if input_as_constraint:
        constraints.append(Constraint(p1 - phi_ref, name="flapping_input"))
    deg = np.pi / 180
    values = {m_b: 1.0, m_w: 0.1, l_w: 20.0, w: 10.0, g: 1.0, alpha_e: -6 * deg, rho: 1.2041,
              cd0: 0.05, cdm: 1.0, clm: 2.0, I0: 1e-6, phi_u: 5 * deg, phi_d: -30 * deg, omega: 0.5}
    return TMTSystem(
        q, list(dq), bodies,
        params=(m_b, m_w, l_w, w, g, alpha_e, rho, cd0, cdm, clm, I0, phi_u, phi_d, omega),
        gravity=[0, 0, -g], forces=forces, constraints=constraints,
        tau=[u], S=[[0, 0, 0, 1, 1]], time=t, values=values,
        q0=[0, 0, 0, -30 * deg, -30 * deg], dq0=[-0.01, 0, 0.01, 0, 0], name="flapping_flyer",
    )


# --------------------------------------------------------------------------------------------
# TMT paper, table: Clemens joint (3-RSR parallel mechanism)
# --------------------------------------------------------------------------------------------
def clemens_joint() -> TMTSystem:
    """Clemens joint: 3-RSR parallel mechanism with loop-closure constraints (table 1, column 3).

    Three legs stand on base joints at radius l_b, 120° apart (``rb_0i``); each leg is a
    revolute joint about the local y axis (tangential), a link of length l along local z, a
    spherical joint as x-y-x rotations, a second link of length l, and a revolute joint about
    local y into the top platform (joints at radius l_p). Tree and coordinates, the paper's 13:
      leg 1 → platform: [q_y1, q_x2, q_y2, q_x2b, q_y3] (ends in the platform's joint 1),
      leg 2: [q_y4, q_x5, q_y5, q_x5b], leg 3: [q_y6, q_x7, q_y7, q_x7b] (from the base).
    Loop closures (eq. 5), 5 per leg 2, 3: the leg's end point equals the platform joint point
    (3 rows) and the leg's last revolute axis (its link's local y) is parallel to the platform's
    joint axis (2 rows: orthogonal to the platform's radial and normal directions) → 3 DOF.

    Paper values: m_p = 1, I_p = 0.001·I, l = 1, l_b = l_p = 1, g = 1, links massless (m_l = 0,
    I_l = 0 here; give them mass through ``values``). Gravity is taken as ``[0, 0, −g]`` with the
    platform above the base (the seed prints g = [0, 0, 1]). ``q0`` is the paper's
    π/6·[−1, 0, 2, 0, −1, …] leg posture (knee bent by π/3, platform level at height √3·l)
    without its ±1e-3 perturbations, so that the constraints hold exactly.
    """
    names = ["q_y1", "q_x2", "q_y2", "q_x2b", "q_y3", "q_y4", "q_x5", "q_y5", "q_x5b",
             "q_y6", "q_x7", "q_y7", "q_x7b"]
    q = list(sp.symbols(" ".join(names)))
    dq = list(sp.symbols(" ".join("d" + n for n in names)))
    m_p, I_p, m_l, I_l, l, l_b, l_p, g = sp.symbols("m_p I_p m_l I_l l l_b l_p g")
    ang = [0, 2 * sp.pi / 3, -2 * sp.pi / 3]

    def base_start(i):
        Rz = sp.Matrix([[sp.cos(ang[i]), -sp.sin(ang[i]), 0], [sp.sin(ang[i]), sp.cos(ang[i]), 0], [0, 0, 1]])
        rb = l_b * sp.Matrix([sp.cos(ang[i]), sp.sin(ang[i]), 0])
        return Rz, rb

    bodies, constraints = [], []

    def leg(i, qa, qs):
        Rz, rb = base_start(i)
        st = joint_chain([("R", Rz)], q, start=(sp.eye(3), rb, sp.zeros(3, len(q))))
        f1 = joint_chain([("y", qa)], q, start=st)
        link1 = joint_chain([("t", [0, 0, l / 2])], q, start=f1)
        knee = joint_chain([("t", [0, 0, l]), ("x", qs[0]), ("y", qs[1]), ("x", qs[2])], q, start=f1)
        link2 = joint_chain([("t", [0, 0, l / 2])], q, start=knee)
        end = joint_chain([("t", [0, 0, l])], q, start=knee)
        for nm, fr in ((f"leg{i + 1}_link1", link1), (f"leg{i + 1}_link2", link2)):
            bodies.append(TMTBody(m_l, I_l * sp.eye(3), fr[1], fr[0], name=nm, T_omega=fr[2]))
        return end

    end1 = leg(0, q[0], q[1:4])
    pj1 = joint_chain([("y", q[4])], q, start=end1)       # platform joint 1 frame
    platform = joint_chain([("t", [-l_p, 0, 0])], q, start=pj1)
    bodies.append(TMTBody(m_p, I_p * sp.eye(3), platform[1], platform[0], name="platform",
                          T_omega=platform[2]))
    Rp, pc = platform[0], platform[1]
    for i, (qa, qs) in ((1, (q[5], q[6:9])), (2, (q[9], q[10:13]))):
        end = leg(i, qa, qs)
        Rz, _ = base_start(i)
        p_joint = pc + Rp * (l_p * sp.Matrix([sp.cos(ang[i]), sp.sin(ang[i]), 0]))
        radial = Rp * Rz * sp.Matrix([1, 0, 0])
        normal = Rp * sp.Matrix([0, 0, 1])
        axis = end[0] * sp.Matrix([0, 1, 0])
        constraints.append(Constraint(end[1] - p_joint, name=f"leg{i + 1}_position"))
        constraints.append(Constraint(sp.Matrix([(axis.T * radial)[0], (axis.T * normal)[0]]),
                                      name=f"leg{i + 1}_axis"))
    p6 = float(np.pi / 6)
    leg0 = [-p6, 0.0, 2 * p6, 0.0]
    q0 = leg0 + [-p6] + leg0 + leg0
    values = {m_p: 1.0, I_p: 0.001, m_l: 0.0, I_l: 0.0, l: 1.0, l_b: 1.0, l_p: 1.0, g: 1.0}
    return TMTSystem(q, dq, bodies, params=(m_p, I_p, m_l, I_l, l, l_b, l_p, g),
                     gravity=[0, 0, -g], constraints=constraints, values=values,
                     q0=q0, dq0=[0.0] * 13, name="clemens_joint")
