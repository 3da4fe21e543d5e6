"""Seed systems that move: spatial_v2's Simulink tutorial examples 1–7, a four-bar linkage, the TMT
paper's flapping flyer and Clemens joint.

Each ``example_*`` function runs one system end to end and returns an :class:`ExampleResult`
(the trajectory plus the numbers that state the example's physical fact); the tests in
``tests/test_examples_sim.py`` assert those facts.  ``python -m multibody.simulation.examples``
runs them all and prints the facts.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .. import _checks
from ..model.builder import ModelBuilder
from ..model.joints import JointType
from .constraints import (DEFAULT_BAUMGARTE_TIME, AxisConstraint, ConstraintSet, GammaQ, JointCoupling, JointPath,
                          PointConstraint)
from .contact import GroundContact, contact_parameters

__all__ = ["ExampleResult", "four_bar", "free_to_xfb", "simulate_fb", "example1_pd_planar2r",
           "example2_sampled_pd_planar2r", "example3_vee", "example4_singlebody", "example5_scissor",
           "example6_double_elbow", "example7_rolling_disc", "dropped_box", "flyer_aero_forces", "flyer_constraints",
           "flapping_flyer", "clemens_closures", "clemens_joint_tracking",
           "clemens_joint_dynamics", "run_all"]


@dataclass
class ExampleResult:
    """A run and the numbers that state its physical fact (``facts``: name → value)."""
    name: str
    trajectory: object
    facts: dict = field(default_factory=dict)

    def __repr__(self):
        body = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.facts.items())
        return f"{self.name}: {body}"


def four_bar(crank: float = 1.0, coupler: float = 2.0, rocker: float = 2.0, ground: float = 2.5,
             density: float = 1.0, gravity: float = 9.81):
    """A planar four-bar linkage: (model, closure constraint).

    The open chain crank → coupler → rocker hangs from the base pivot at the origin (revolute
    joints about z, the links uniform rods of ``density`` kg/m along their x axes); the loop is
    closed by pinning the rocker's free end to the second base pivot at (``ground``, 0, 0):
    a :class:`~multibody.simulation.constraints.PointConstraint` on the x and y rows (the z row of
    a planar loop is identically zero).  The defaults (1, 2, 2, 2.5 m) make a Grashof crank-rocker:
    the crank turns fully.  Gravity −``gravity`` along y.

    Example
    -------
    >>> import numpy as np
    >>> model, closure = four_bar()
    >>> model.nv, closure.evaluate(model, np.zeros(3), np.zeros(3)).c.shape
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


# =============================================================================================
# floating bases: spatial_v2's FDfb state x = [qn; r; vfb] next to the free joint's q, q̇
# =============================================================================================
def _fixed_to_floatbase(model):
    """The floatbase model (spatial_v2 layout, for ``fd_fb``) of a model whose body 0 has a free joint."""
    from ..models import floatbase
    if model.jtype[0] != JointType.FREE:
        raise ValueError("model: body 0 must have a free joint")
    jtype = model.jtype.copy()
    jtype[0] = int(JointType.REVOLUTE)
    jaxis = model.jaxis.copy()
    jaxis[0] = [0.0, 0.0, 1.0]
    fixed = replace(model, jtype=jtype, jaxis=jaxis, q_lower=None, q_upper=None, velocity_limit=None,
                    effort_limit=None, damping=None, friction=None, armature=None, gamma_q=None)
    return floatbase(fixed)


def free_to_xfb(model, q, qd):
    """(xfb (13), q_real, qd_real) of FDfb from a free-joint state (q, q̇) of the same body tree.

    qn: rq(qn) = A_IBᵀ (fixed → base coordinates); r: the base origin; vfb = [ω; v_O] in fixed
    coordinates with v_O the velocity of the body-fixed point at the fixed origin.
    """
    from ..kinematics.forward import body_states
    from ..spatial.rotations import matrix_to_quat
    s = body_states(model, q, qd)
    R, p = s.R[0], s.p[0]
    w, v = R @ s.v[0, :3], R @ s.v[0, 3:]
    vO = v - np.cross(w, p)
    x = np.concatenate([matrix_to_quat(R.T), p, w, vO])
    return x, np.asarray(q, float)[7:], np.asarray(qd, float)[6:]


def simulate_fb(model, xfb0, q0=None, qd0=None, t_final=1.0, dt=1e-2, tau=None, contact=None,
                method="DOP853", rtol=1e-10, atol=1e-12):
    """Integrate spatial_v2's FDfb state (xfb, q, q̇[, contact states]) with SciPy's ``solve_ivp``.

    ``model`` follows floatbase's convention; ``tau`` is None, constant, or a callable (t, xfb, q,
    q̇); ``contact`` a :class:`GroundContact` built on this model (its ``forces_fb`` is used, the
    gcFD path).  Returns a dict of sampled arrays ``t``, ``xfb``, ``q``, ``qd``, ``z`` (every
    ``dt``).  The quaternion is kept unit by FDfb's own stabilisation term (``rqd``).
    """
    from scipy.integrate import solve_ivp

    from ..dynamics.floating import check_floatbase_model, fd_fb
    check_floatbase_model(model)
    nr = model.nv - 6
    q0 = np.zeros(model.nq - 6) if q0 is None else np.asarray(q0, float)
    qd0 = np.zeros(nr) if qd0 is None else np.asarray(qd0, float)
    nz = contact.n_states if contact is not None else 0
    y0 = np.concatenate([np.asarray(xfb0, float), q0, qd0, np.zeros(nz)])
    nq = model.nq - 6

    def rhs(t, y):
        x, q, qd, z = y[:13], y[13:13 + nq], y[13 + nq:13 + nq + nr], y[13 + nq + nr:]
        f_ext, zdot = None, np.zeros(0)
        if contact is not None:
            f_ext, zdot, _ = contact.forces_fb(model, x, q, qd, z)
        u = np.zeros(nr) if tau is None else (tau(t, x, q, qd) if callable(tau) else np.asarray(tau, float))
        xd, qdd = fd_fb(model, x, q, qd, u, f_ext=f_ext)
        return np.concatenate([xd, qd, qdd, zdot])

    t_eval = np.linspace(0.0, t_final, int(round(t_final / dt)) + 1)
    sol = solve_ivp(rhs, (0.0, t_final), y0, method=method, rtol=rtol, atol=atol, t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(f"simulate_fb: the integrator failed: {sol.message}")
    Y = sol.y.T
    return {"t": sol.t, "xfb": Y[:, :13], "q": Y[:, 13:13 + nq], "qd": Y[:, 13 + nq:13 + nq + nr],
            "z": Y[:, 13 + nq + nr:]}


# =============================================================================================
# spatial_v2 Simulink tutorial examples 1–7
# =============================================================================================
def example1_pd_planar2r(kp=60.0, kd=12.0, q_ref=(np.pi / 4, -np.pi / 2), t_final=8.0):
    """Example 1: PD control of the planar 2R robot under gravity (no gravity compensation).

    Fact: the arm settles where the PD spring balances gravity, kp (q_ref − q_ss) = g(q_ss)
    (``gravity_balance`` is the residual of that equation), not at q_ref (``offset``).
    """
    from .. import hand_c, models
    from . import PD, simulate
    model = models.planar(2)
    traj = simulate(model, np.zeros(2), np.zeros(2), t_final, controller=PD(kp, kd, q_ref=list(q_ref)))
    q_ss = traj.q[-1]
    _, g = hand_c(model, q_ss, np.zeros(2))
    return ExampleResult("example1_pd_planar2r", traj, {
        "gravity_balance": float(np.max(np.abs(kp * (np.asarray(q_ref) - q_ss) - g))),
        "offset": float(np.max(np.abs(np.asarray(q_ref) - q_ss))),
        "final_speed": float(np.max(np.abs(traj.qd[-1])))})


def example2_sampled_pd_planar2r(kp=60.0, kd=12.0, q_ref=(np.pi / 4, -np.pi / 2), period=0.02, t_final=8.0):
    """Example 2: the same PD controller sampled every ``period`` (zero-order hold) on continuous dynamics.

    Facts: the torque is constant between samples (``hold_violation``: its largest change inside
    a sample interval) and the loop settles at the same equilibrium as the continuous one
    (``equilibrium_shift`` against example 1).
    """
    from .. import models
    from . import PD, simulate
    model = models.planar(2)
    traj = simulate(model, np.zeros(2), np.zeros(2), t_final, dt=1e-3,
                    controller=PD(kp, kd, q_ref=list(q_ref), period=period))
    k = np.floor(traj.t / period + 1e-9).astype(int)
    hold = 0.0
    for j in np.unique(k):
        seg = traj.tau[k == j]
        hold = max(hold, float(np.max(np.abs(seg - seg[0]))))
    cont = example1_pd_planar2r(kp, kd, q_ref, t_final)
    return ExampleResult("example2_sampled_pd_planar2r", traj, {
        "hold_violation": hold,
        "equilibrium_shift": float(np.max(np.abs(traj.q[-1] - cont.trajectory.q[-1]))),
        "samples": int(len(np.unique(k)))})


def example3_vee(t_final=4.0, kp=100.0, kd=20.0):
    """Example 3: the free-floating 'vee' robot turning its 45° joint through one revolution (zero gravity).

    The joint follows θ(t) = 2π (s − sin(2πs)/2π), s = t/T — one full turn, starting and ending
    at rest.  As in spatial_v2 (which uses HD here) the joint acceleration is prescribed: the
    controller asks hybrid dynamics (``mb.hybrid_dynamics``, joint = inverse-dynamics joint, free
    base = forward-dynamics joint) for the torque that gives θ̈ = θ̈_ref + kd ė + kp e — thin rods
    give the joint a tiny effective inertia, so a plain PD would be stiff.  Facts: the total
    momentum stays zero (``momentum_drift``), the centre of mass stays put (``com_drift``), and
    when the joint is back where it started (θ = 2π, ``joint_return``) the vee has turned by
    ``net_rotation`` radians: reorientation with zero angular momentum.
    """
    from .. import center_of_mass, energy, hybrid_dynamics, models
    from . import simulate
    model = models.vee()
    T = float(t_final)
    fd = [True, False]                              # base: forward dynamics; joint: prescribed

    def controller(t, q, qd):
        s = min(t / T, 1.0)
        th = 2 * np.pi * (s - np.sin(2 * np.pi * s) / (2 * np.pi))
        thd = 2 * np.pi / T * (1 - np.cos(2 * np.pi * s))
        thdd = (2 * np.pi / T) ** 2 * np.sin(2 * np.pi * s) if t < T else 0.0
        qdd = np.zeros(model.nv)
        qdd[6] = thdd + kd * (thd - qd[6]) + kp * (th - q[7])
        _, tau = hybrid_dynamics(model, fd, q, qd, qdd, np.zeros(model.nv))
        out = np.zeros(model.nv)
        out[6] = tau[6]                             # only the joint is actuated
        return out

    traj = simulate(model, model.neutral(), np.zeros(model.nv), T, dt=1e-3, controller=controller,
                    record_every=10)
    h = energy(model, traj.q, traj.qd).htot
    c = center_of_mass(model, traj.q)
    qa, qb = traj.q[0, 3:7], traj.q[-1, 3:7]
    net = 2 * np.arccos(min(1.0, abs(float(qa @ qb))))
    return ExampleResult("example3_vee", traj, {
        "momentum_drift": float(np.max(np.abs(h - h[0]))),
        "com_drift": float(np.max(np.linalg.norm(c - c[0], axis=1))),
        "joint_return": float(abs(traj.q[-1, 7] - 2 * np.pi)),
        "net_rotation": float(net)})


def example4_singlebody(t_final=10.0, spin=2.0, perturbation=1e-2):
    """Example 4: chaotic tumbling of the free 3×2×1 box, by ABA on a free joint and by FDfb.

    It spins mainly about its intermediate principal axis (body y) with a small perturbation:
    the spin axis flips over and back (the tennis-racket effect).  Facts: energy and momentum
    conserved (``energy_drift``, ``momentum_drift``), the body y axis reverses
    (``min_axis_alignment`` ≈ −1), and FDfb on spatial_v2's floatbase layout gives the same
    motion (``fdfb_difference``: largest difference of the body orientation and position).
    """
    from .. import body_states, energy, models
    from ..spatial.rotations import quat_to_matrix
    from . import simulate
    model = models.singlebody()
    c = model.com[0]
    w = np.array([perturbation, spin, perturbation])
    qd0 = np.concatenate([w, np.cross(c, w)])            # v_O = −ω × c: the centre of mass at rest
    traj = simulate(model, model.neutral(), qd0, t_final, dt=0.02, integrator="dop853", rtol=1e-11, atol=1e-13)
    E = energy(model, traj.q, traj.qd)
    Etot = E.KE + E.PE
    R = body_states(model, traj.q).R[:, 0]
    fb = _fixed_to_floatbase(model)
    x0, _, _ = free_to_xfb(model, traj.q[0], traj.qd[0])
    run = simulate_fb(fb, x0, t_final=t_final, dt=0.02)
    Rfb = np.swapaxes(quat_to_matrix(run["xfb"][:, :4]), -1, -2)        # A_IB = rq(qn)ᵀ
    return ExampleResult("example4_singlebody", traj, {
        "energy_drift": float(np.max(np.abs(Etot - Etot[0]))),
        "momentum_drift": float(np.max(np.abs(E.htot - E.htot[0]))),
        "min_axis_alignment": float(np.min(R[:, 1, 1])),
        "fdfb_difference": float(max(np.max(np.abs(Rfb - R)), np.max(np.abs(run["xfb"][:, 4:7] - traj.q[:, :3]))))})


def example5_scissor(t_final=10.0):
    """Example 5: the free-floating spinning scissor, by FDfb, animated with fbanim.

    The pair spins about the long axis (z) while the joint (on y) starts opening; the spin and
    the scissor motion exchange energy.  Facts: momentum and energy conserved
    (``momentum_drift``, ``energy_drift``); ``fbanim`` returns wrap-free angles (largest step
    between samples ``fbanim_max_step`` is small) although the spin passes ±π many times
    (``turns``).  The FDfb run is checked against ABA on the free-joint model (``aba_difference``).
    """
    from .. import energy, models
    from ..dynamics.floating import fbanim
    from . import simulate
    model = models.scissor()
    qd0 = np.array([0.0, 0.0, 6.0, 0.0, 0.0, 0.0, 0.5])     # spin about z, joint opening
    traj = simulate(model, model.neutral(), qd0, t_final, dt=1e-2, integrator="dop853", rtol=1e-11, atol=1e-13)
    fb = _fixed_to_floatbase(model)
    x0, qr0, qdr0 = free_to_xfb(model, traj.q[0], traj.qd[0])
    run = simulate_fb(fb, x0, qr0, qdr0, t_final=t_final, dt=1e-2)
    E = energy(model, traj.q, traj.qd)
    anim = fbanim(run["xfb"], run["q"])
    xs = np.array([free_to_xfb(model, q, qd)[0] for q, qd in zip(traj.q, traj.qd)])
    return ExampleResult("example5_scissor", traj, {
        "momentum_drift": float(np.max(np.abs(E.htot - E.htot[0]))),
        "energy_drift": float(np.max(np.abs((E.KE + E.PE) - (E.KE + E.PE)[0]))),
        "fbanim_max_step": float(np.max(np.abs(np.diff(anim[:, 3:6], axis=0)))),
        "turns": float(np.max(np.abs(anim[:, 3:6])) / (2 * np.pi)),
        "aba_difference": float(max(np.max(np.abs(xs[:, 4:7] - run["xfb"][:, 4:7])),
                                    np.max(np.abs(traj.q[:, 7] - run["q"][:, 0]))))})


def example6_double_elbow(y_ref=(0.8, -0.6), kp=80.0, kd=15.0, t_final=10.0):
    """Example 6: controlling a robot with kinematic constraints — the double elbow with FDgq.

    A PD law on the independent variables y = (shoulder, elbow half-angle), τ = G (kp (y_ref −
    y) − kd ẏ), drives the arm; ``mb.simulate`` uses ``GammaQ`` (FDgq).  Facts: the 1:1 gearing
    q₂ = q₃ holds (``gearing_error`` ≤ 1e-6 over the run) and the arm settles where the PD
    torque balances gravity in the reduced coordinates (``reduced_balance``).
    """
    from .. import hand_c, models
    from . import simulate
    model = models.double_elbow()
    G = model.gamma_q.G
    Gp = np.linalg.pinv(G)
    y_ref = np.asarray(y_ref, float)

    def controller(t, q, qd):
        return G @ (kp * (y_ref - Gp @ q) - kd * (Gp @ qd))

    traj = simulate(model, np.zeros(3), np.zeros(3), t_final, controller=controller, constraints=GammaQ())
    y = Gp @ traj.q[-1]
    _, C = hand_c(model, traj.q[-1], np.zeros(3))
    # started off the constraint (elbow2 1 mrad ahead), the FDgq stabilisation closes the gap
    off = simulate(model, np.array([0.0, 0.0, 1e-3]), np.zeros(3), t_final, controller=controller,
                   constraints=GammaQ())
    settled = off.t >= 2.0
    return ExampleResult("example6_double_elbow", traj, {
        "gearing_error": float(np.max(np.abs(traj.q[:, 1] - traj.q[:, 2]))),
        "gearing_rate_error": float(np.max(np.abs(traj.qd[:, 1] - traj.qd[:, 2]))),
        "gearing_error_after_2s": float(np.max(np.abs(off.q[settled, 1] - off.q[settled, 2]))),
        # equilibrium: Gᵀ(τ − C) = 0 with τ = G kp (y_ref − y)  →  kp (y_ref − y) = (GᵀG)⁻¹ Gᵀ C
        "reduced_balance": float(np.max(np.abs(kp * (y_ref - y) - np.linalg.solve(G.T @ G, G.T @ C))))})


def example7_rolling_disc(npt=48, height=0.1, speed=1.0, t_final=1.5, dt=2e-4, mu=0.3, damping_ratio=0.1):
    """Example 7: a disc dropped with forward speed and no spin bounces, slides, then rolls.

    Ground: K, D from :func:`contact_parameters` (0.1 mm static depth per face point, damping
    ratio ``damping_ratio``), friction ``mu``.  Facts: it bounces (``bounces`` ≥ 2 lift-offs),
    and ends rolling without slipping: contact points stick and the slip speed
    |v − ω × r_contact| is a small fraction of the speed (``final_slip_ratio``); the speed when
    rolling starts is near the 2/3·v₀ of a uniform disc that starts sliding without spin
    (``rolling_speed_ratio``; the drop, the polygon's corners and compliance take a little).
    """
    from .. import models
    from . import simulate
    model = models.rolling_disc(npt)
    m, R = float(model.mass[0]), 0.05
    K, D = contact_parameters(m, 1e-4, damping_ratio, n_points=2)
    contact = GroundContact(model, K, D, mu)
    q0 = model.neutral()
    q0[2] = R + height
    qd0 = np.zeros(6)
    qd0[3] = speed
    traj = simulate(model, q0, qd0, t_final, dt=dt, contact=contact, record_every=10)
    F = traj.contact_forces                                   # (N, np, 3)
    touching = F[:, :, 2].max(axis=1) > 0
    # bounces: flights of the centre more than 1 mm above rolling height after the first touchdown
    airborne = traj.q[:, 2] > R + 1e-3
    after = np.arange(len(airborne)) > np.argmax(touching)
    bounces = int(np.sum(~airborne[:-1] & airborne[1:] & after[1:]))
    from .. import body_states
    s = body_states(model, traj.q, traj.qd)
    w = np.einsum("nij,nj->ni", s.R[:, 0], s.v[:, 0, :3])
    v = np.einsum("nij,nj->ni", s.R[:, 0], s.v[:, 0, 3:])
    slip = v[:, 0] - w[:, 1] * R                              # contact point velocity (x), r = (0, 0, −R)
    last = traj.t > 0.8 * t_final
    rolling = np.flatnonzero((np.abs(slip) < 0.02 * np.abs(v[:, 0])) & touching & (traj.t > 0.05))
    v_roll = float(v[rolling[0], 0]) if rolling.size else float("nan")
    return ExampleResult("example7_rolling_disc", traj, {
        "bounces": bounces,
        "final_slip_ratio": float(np.max(np.abs(slip[last]) / np.abs(v[last, 0]))),
        "final_speed": float(v[-1, 0]),
        "rolling_speed_ratio": v_roll / speed,
        "tilt": float(np.max(np.abs(s.R[:, 0, 2, 1])))})          # world z of the disc axis


def dropped_box(t_final=2.0, drop=0.05, dt=5e-4):
    """The 3×2×1 box (``singlebody``, with gravity) dropped flat onto the ground: it comes to rest.

    Contact points at its 8 corners, critically damped ground (1 mm static depth).  Facts: over
    the last half second the box does not move — largest speed ``rest_speed`` and height change
    ``rest_jitter`` — and it rests at the design depth (``depth_error``).
    """
    from .. import models
    from . import simulate
    model = models.singlebody().with_gravity([0.0, 0.0, -9.81])
    corners = [(0, [x, y, z]) for x in (0, 3) for y in (0, 2) for z in (0, 1)]
    depth = 1e-3
    K, D = contact_parameters(1.0, depth, 1.0, n_points=4)
    contact = GroundContact(model, K, D, mu=0.5, points=corners)
    q0 = model.neutral()
    q0[2] = drop
    traj = simulate(model, q0, np.zeros(6), t_final, dt=dt, contact=contact, record_every=10)
    last = traj.t > t_final - 0.5
    return ExampleResult("dropped_box", traj, {
        "rest_speed": float(np.max(np.abs(traj.qd[last]))),
        "rest_jitter": float(np.ptp(traj.q[last, 2])),
        "depth_error": float(abs(-traj.q[-1, 2] - depth))})


# =============================================================================================
# TMT paper (seed 002): the flapping flyer and the Clemens joint
# =============================================================================================
def flyer_aero_forces(model, q, qd, rho=1.2041, c_d0=0.05, c_dm=1.0, c_lm=2.0, alpha_e=np.radians(-6),
                      l_w=20.0, w=10.0):
    """Quasi-steady aerodynamic forces of the TMT flyer as ``f_ext`` (nb, 6), base coordinates.

    On each wing, at the quarter chord (w/4 ahead of the wing CoM at ±l_w/2 along the span), with
    v_re = −v (still air), area s = l_w·w (TMT paper, table 1)::

        F = ½ ρ |v_re| s (c_d v_re + c_l ê_span × v_re),  c_d = c_d0 + c_dm sin²α_e,  c_l = c_lm sin 2α_e

    applied as the spatial force [p × F; F] on the wing body.
    """
    from .. import body_states
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


FLYER_PAPER = dict(m_b=1.0, m_w=0.1, l_w=20.0, w=10.0, g=1.0, alpha_e=np.radians(-6), rho=1.2041, c_d0=0.05,
                   c_dm=1.0, c_lm=2.0, I_0=1e-6, phi_u=np.radians(5), phi_d=np.radians(-30), omega_f=0.5)


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


def flapping_flyer(t_final=12.0, dt=2e-3, **paper):
    """The TMT paper's flapping flyer: aerodynamics as a force callback, synchronised flapping as a constraint.

    Model: ``mb.models.flapping_flyer().model`` (paper values).  As in the paper, both the wings'
    synchronisation φ₁ = φ₂ and the flapping input φ₁ = φ(t) are constraints
    (:func:`flyer_constraints`: a :class:`JointCoupling` and a time-dependent :class:`JointPath`),
    solved with Lagrange multipliers (TMT eq. 6) and Baumgarte stabilisation — ``mb.simulate``
    passes each stage's time to them.  Facts: the constraints hold (``constraint_violation``:
    max |c| of both rows), the hinge torques the multipliers produce are equal on both wings
    (``torque_asymmetry``, relative — mirror symmetry), the motion has no sideways drift
    (``lateral_drift``), the energy balance closes: the change of total energy equals the work
    of the constraint forces (the flapping drive) and of the aerodynamic forces
    (``energy_balance``, relative), and the wings' drag keeps the fall well below free fall
    (``fall_fraction``).  ``paper``: the TMT paper's parameters (``FLYER_PAPER``).
    """
    from .. import body_states, hand_c, models
    from . import simulate
    unknown = set(paper) - set(FLYER_PAPER)
    if unknown:
        raise ValueError(f"paper: unknown flyer parameters {sorted(unknown)}; expected some of {sorted(FLYER_PAPER)}")
    vals = {**FLYER_PAPER, **paper}
    mech = models.flapping_flyer(**vals)
    model = mech.model
    aero = dict(rho=vals["rho"], c_d0=vals["c_d0"], c_dm=vals["c_dm"], c_lm=vals["c_lm"], alpha_e=vals["alpha_e"],
                l_w=vals["l_w"], w=vals["w"])

    def f_ext(t, q, qd):
        return flyer_aero_forces(model, q, qd, **aero)

    constraints = flyer_constraints(vals["phi_u"], vals["phi_d"], vals["omega_f"])
    q0, dq0 = np.array(mech.q0, float), np.array(mech.dq0, float)
    dq0[3:5] = constraints.constraints[1].motion(0.0)[1]     # the wings start with the drive's rate
    traj = simulate(model, q0, dq0, t_final, dt=dt, f_ext=f_ext, constraints=constraints, record_every=5)
    # generalised constraint force Q_c = Jᵀλ = H q̈ + C(q, q̇, f_aero) (the hinge torques), and the
    # power of the constraint and aerodynamic forces along the run
    n = len(traj.t)
    Qc, P_aero = np.empty((n, model.nv)), np.empty(n)
    for k, (q, qd, qdd) in enumerate(zip(traj.q, traj.qd, traj.qdd)):
        f = f_ext(0.0, q, qd)
        H, C = hand_c(model, q, qd, f)
        Qc[k] = H @ qdd + C
        s = body_states(model, q, qd)
        v_world = np.einsum("bij,bj->bi", s.R, s.v[:, 3:]) - np.cross(np.einsum("bij,bj->bi", s.R, s.v[:, :3]), s.p)
        P_aero[k] = sum(f[b, :3] @ (s.R[b] @ s.v[b, :3]) + f[b, 3:] @ v_world[b] for b in range(model.nb))
    P_c = np.einsum("ni,ni->n", Qc, traj.qd)
    work = np.concatenate([[0.0], np.cumsum(0.5 * (P_c[1:] + P_c[:-1] + P_aero[1:] + P_aero[:-1]) * np.diff(traj.t))])
    E = traj.total_energy
    scale = max(np.max(np.abs(work)), np.max(np.abs(E - E[0])), 1e-12)
    return ExampleResult("flapping_flyer", traj, {
        "constraint_violation": float(np.max(np.abs(traj.constraint_residual[:, 0]))),
        "sync_error": float(np.max(np.abs(traj.q[:, 3] - traj.q[:, 4]))),
        "torque_asymmetry": float(np.max(np.abs(Qc[:, 3] - Qc[:, 4])) / max(np.max(np.abs(Qc[:, 3])), 1e-300)),
        "hinge_torque_peak": float(np.max(np.abs(Qc[:, 3]))),
        "lateral_drift": float(np.max(np.abs(traj.q[:, 1]))),
        "energy_balance": float(np.max(np.abs((E - E[0]) - work)) / scale),
        # drag holds the fall far below free fall ½ g t²
        "fall_fraction": float(abs(traj.q[-1, 2] - traj.q[0, 2]) / (0.5 * vals["g"] * t_final ** 2))})


def clemens_closures(model, l=1.0, l_p=1.0):
    """The Clemens joint's loop closures for legs 2 and 3 as numeric constraints (10 rows).

    For each leg: its end (0, 0, l) on ``leg{i}_link2`` coincides with the platform's joint point
    (−l_p + l_p cos a, l_p sin a, 0) (a :class:`PointConstraint`), and the leg's last revolute
    axis (local y of ``leg{i}_link2``) is orthogonal to the platform's radial (cos a, sin a, 0)
    and normal (0, 0, 1) directions (an :class:`AxisConstraint`) — the rows of
    ``mb.models.clemens_joint().constraints``.
    """
    parts = []
    for i, a in ((2, 2 * np.pi / 3), (3, -2 * np.pi / 3)):
        parts.append(PointConstraint(f"leg{i}_link2", [0, 0, l], "platform",
                                     [-l_p + l_p * np.cos(a), l_p * np.sin(a), 0], name=f"leg{i}_position"))
        parts.append(AxisConstraint(f"leg{i}_link2", [0, 1, 0], "platform",
                                    [[np.cos(a), np.sin(a), 0], [0, 0, 1]], name=f"leg{i}_axis"))
    return ConstraintSet(*parts)


def clemens_joint_tracking(t_final=10.0, radius=0.1, lift=0.03, omega=2 * np.pi / 5, gain=20.0, l=1.0, l_b=1.0,
                           l_p=1.0):
    """The Clemens joint (3-RSR) with its platform centre tracking a 3-D curve (TMT paper, fig. 1).

    Inverse kinematics by integrating a first-order ODE in q, as the paper does: at each instant
    the 13 joint rates solve [J_c; J_p] q̇ = [−k c − …; ẋ_d + k (x_d − x)], the 10 closure rows
    and the 3 rows of the platform centre's Jacobian (closed-loop inverse kinematics with gain k).
    The curve: x_d(t) = x₀ + (r sin ωt, r (1 − cos ωt), h sin 2ωt).  Facts: the loops stay closed
    (``constraint_violation`` ≤ 1e-6), the platform follows the curve (``tracking_error``), and the
    three base (actuated) joints move (``actuator_range``).  Returns t, q in ``trajectory``.
    """
    from scipy.integrate import solve_ivp

    from .. import models, point_jacobian, point_position
    mech = models.clemens_joint(l=l, l_b=l_b, l_p=l_p)
    model = mech.model
    closures = clemens_closures(model, l, l_p)
    centre = np.array([-l_p, 0.0, 0.0])                         # the platform's centre in its frame
    q0 = np.array(mech.q0, float)
    x0 = point_position(model, q0, "platform", centre)

    def x_des(t):
        return x0 + np.array([radius * np.sin(omega * t), radius * (1 - np.cos(omega * t)), lift * np.sin(2 * omega * t)])

    def xd_des(t):
        return np.array([radius * omega * np.cos(omega * t), radius * omega * np.sin(omega * t),
                         2 * lift * omega * np.cos(2 * omega * t)])

    def rates(t, q):
        terms = closures.evaluate(model, q, np.zeros(model.nv))
        Jp = point_jacobian(model, q, "platform", centre)
        x = point_position(model, q, "platform", centre)
        A = np.vstack([terms.J, Jp])
        b = np.concatenate([-gain * terms.c, xd_des(t) + gain * (x_des(t) - x)])
        return np.linalg.solve(A, b)

    t_eval = np.linspace(0, t_final, 201)
    sol = solve_ivp(rates, (0, t_final), q0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(f"clemens_joint_tracking: {sol.message}")
    Q = sol.y.T
    viol = max(np.max(np.abs(closures.evaluate(model, q, np.zeros(model.nv)).c)) for q in Q)
    err = max(np.linalg.norm(point_position(model, q, "platform", centre) - x_des(t)) for t, q in zip(sol.t, Q))
    act = [model.q_start[model.joint_index(n)] for n in ("q_y1", "q_y4", "q_y6")]
    return ExampleResult("clemens_joint_tracking", {"t": sol.t, "q": Q}, {
        "constraint_violation": float(viol),
        "tracking_error": float(err),
        "actuator_range": float(np.min(np.ptp(Q[:, act], axis=0)))})


def clemens_joint_dynamics(t_final=10.0, amplitude=0.1, omega=2.0, kp=30.0, kd=6.0, m_l=0.1, I_l=1e-3):
    """The Clemens joint moving under gravity, its loops closed by Lagrange multipliers (TMT eq. 6).

    Links get mass ``m_l`` and inertia ``I_l`` (the paper's are massless, which leaves H singular);
    PD servos on the three base joints follow q₀ + A sin(ωt + 2πk/3), so the platform wobbles in
    3-D.  The 10 closure rows of :func:`clemens_closures` with Baumgarte's default gains are
    solved by ``mb.simulate`` (RK4, 1 ms).  Facts: the loops stay closed
    (``constraint_violation`` over the run, from ``Trajectory.constraint_residual``) while the
    platform moves (``platform_travel``, m).
    """
    from .. import models, point_position
    from . import PD, simulate
    mech = models.clemens_joint(m_l=m_l, I_l=I_l)
    model = mech.model
    closures = clemens_closures(model)
    q0 = np.array(mech.q0, float)
    act = [int(model.q_start[model.joint_index(n)]) for n in ("q_y1", "q_y4", "q_y6")]
    gains_p, gains_d = np.zeros(model.nv), np.zeros(model.nv)
    gains_p[act], gains_d[act] = kp, kd

    def q_ref(t):
        q = q0.copy()
        for k, i in enumerate(act):
            q[i] += amplitude * np.sin(omega * t + 2 * np.pi * k / 3)
        return q

    traj = simulate(model, q0, np.zeros(model.nv), t_final, dt=1e-3, constraints=closures,
                    controller=PD(gains_p, gains_d, q_ref=q_ref), record_every=20)
    x = point_position(model, traj.q, "platform", [-1.0, 0.0, 0.0])
    return ExampleResult("clemens_joint_dynamics", traj, {
        "constraint_violation": float(np.max(np.abs(traj.constraint_residual[:, 0]))),
        "velocity_violation": float(np.max(np.abs(traj.constraint_residual[:, 1]))),
        "platform_travel": float(np.max(np.linalg.norm(x - x[0], axis=1)))})


def run_all():
    """Run every example and return the results."""
    return [f() for f in (example1_pd_planar2r, example2_sampled_pd_planar2r, example3_vee, example4_singlebody,
                          example5_scissor, example6_double_elbow, example7_rolling_disc, dropped_box,
                          flapping_flyer, clemens_joint_tracking, clemens_joint_dynamics)]


if __name__ == "__main__":  # pragma: no cover
    for r in run_all():
        print(r)
