"""MJCF elements beyond the tree, against MuJoCo: tendons, gravcomp, equalities, state conversion.

Each element class is written into a small MJCF here and checked on real numbers:

* tendons that only drive an actuator (or nothing) leave M, C and g as MuJoCo computes them and
  are ignored with one warning naming them and their joints; limited or sprung tendons are refused
  by name, or dropped with ``unsupported="warn"``;
* ``gravcomp``: ``aba(..., f_ext=gravity_compensation_forces(model, q))`` equals ``mj_forward``'s
  qacc (constraints off on MuJoCo's side);
* joint (polynomial ``polycoef``), fixed-tendon, connect and weld equalities become
  ``model.constraints`` whose residuals and Jacobians are MuJoCo's (``efc_pos``, ``efc_J``) —
  for a weld the three orientation rows are another function of the same relative rotation
  (MuJoCo: the quaternion's vector part; here: three axis-perpendicularity rows), compared by
  value at zero and by row space;
* a 2 s passive run of a finger coupling and of a four-bar loop agrees with MuJoCo's.
"""
from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import multibody as mb
from multibody.model.joints import JointType
from multibody.model.mjcf import MJCFError, MJCFWarning, load_mjcf
from multibody.simulation.constraints import ConstraintSet, JointCoupling, PointConstraint, TendonCoupling, \
    WeldConstraint

# A free torso carrying an arm (two hinges in one body, a ball wrist, two slide fingers) and a leg.
ROBOT = """<mujoco model="robot">
  <option gravity="0.3 -0.2 -9.5"/>
  <worldbody>
    <body name="torso" pos="0 0 1" gravcomp="0.7">
      <freejoint name="root"/>
      <geom type="box" size=".2 .1 .1" mass="3" pos="0.05 0 0"/>
      <body name="arm" pos="0.3 0 0" gravcomp="1">
        <joint name="a1" axis="0 1 0" pos="0.02 0 0"/><joint name="a2" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 .4 0 0" size=".04" mass="1"/>
        <body name="hand" pos="0.45 0 0" gravcomp="2">
          <joint name="wrist" type="ball"/>
          <geom size=".05" mass=".5" pos=".05 0 0"/>
          <body name="f1" pos="0.1 0 0.02"><joint name="f1" type="slide" axis="0 0 1"/><geom size=".02" mass=".1"/></body>
          <body name="f2" pos="0.1 0 -0.02"><joint name="f2" type="slide" axis="0 0 1" ref="0.01"/>
            <geom size=".02" mass=".1"/></body>
        </body>
      </body>
      <body name="leg" pos="0 0 -0.2">
        <joint name="hip" axis="1 0 0"/><geom type="capsule" fromto="0 0 0 0 0 -.4" size=".04" mass="2"/>
        <body name="shin" pos="0 0 -0.4">
          <joint name="knee" axis="1 0 0"/><geom type="capsule" fromto="0 0 0 0 0 -.4" size=".04" mass="1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="grip"><joint joint="f1" coef="1"/><joint joint="f2" coef="-0.5"/></fixed>
    <fixed name="legs"><joint joint="hip" coef="1"/><joint joint="knee" coef="1"/></fixed>
    <fixed><joint joint="a1" coef="1"/></fixed>
  </tendon>
  <actuator><motor tendon="grip"/></actuator>
  <equality>
    <joint joint1="f2" joint2="f1" polycoef="0.01 -1 0.5 0.2 0"/>
    <tendon tendon1="legs" polycoef="0.1 0 0 0 0"/>
    <connect body1="shin" body2="arm" anchor="0 0 -0.4"/>
    <weld body1="hand" body2="torso" relpose="0.5 0.1 0 1 0.2 0 0.1" anchor="0.1 0 0"/>
  </equality>
</mujoco>"""


def load(xml, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MJCFWarning)
        return load_mjcf(xml, **kw)


def random_state(model, mj, rng, scale=0.3):
    q = mj.qpos0 + scale * rng.normal(size=mj.nq)
    for i in np.flatnonzero(np.isin(model.jtype, [JointType.FREE, JointType.SPHERICAL])):
        s = model.q_start[i] + (3 if model.jtype[i] == JointType.FREE else 0)
        q[s:s + 4] /= np.linalg.norm(q[s:s + 4])
    return q, rng.normal(size=model.nv)


def velocity_map(model, q):
    """P with MuJoCo's qvel = P q̇ (mb.mjcf.to_mujoco_state on the unit vectors)."""
    return mb.mjcf.to_mujoco_state(model, np.broadcast_to(q, (model.nv, model.nq)), np.eye(model.nv))[1].T


# --------------------------------------------------------------------------- tendons
def test_unused_tendons_are_ignored_with_one_warning_and_actuated_ones_kept_as_transmissions():
    with pytest.warns(MJCFWarning) as rec:
        model = load_mjcf(ROBOT)
    lines = [str(w.message) for w in rec if "tendons" in str(w.message)]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "'grip'" not in lines[0]            # drives the motor: its transmission (model.actuators)
    f1, f2 = (model.v_start[model.joint_index(j)] for j in ("f1", "f2"))
    assert model.actuators.terms[:, 2].tolist() == [f1, f2]
    assert "<tendon><fixed> #2 (joints ['a1'], line 29) (unused)" in lines[0]
    assert "'legs'" not in lines[0]            # in an equality: a constraint, not ignored
    assert len(model.constraints) == 4


@pytest.mark.parametrize("attrs,effect", [('limited="true" range="0 0.3"', r"limited \(range 0 … 0.3\)"),
                                          ('limited="true" range="0 0.3" stiffness="10"',
                                           r"limited \(range 0 … 0.3\) and a spring \(stiffness=10\)"),
                                          ('frictionloss="1"', "frictionloss=1")])
def test_tendons_that_change_the_motion_are_refused_by_name_or_dropped_on_request(attrs, effect):
    xml = ROBOT.replace('<fixed name="grip">', f'<fixed name="grip" {attrs}>')
    pattern = rf"<tendon><fixed> 'grip' \(joints \['f1', 'f2'\], line 27\): {effect} — changes the motion"
    with pytest.raises(MJCFError, match=r"not expressible as a Model .*\n" + pattern):
        load_mjcf(xml)
    with pytest.warns(MJCFWarning, match="dropped: " + pattern):
        model = load_mjcf(xml, unsupported="warn")
    assert model.nv == 15 and len(model.constraints) == 4
    with pytest.raises(MJCFError, match="unsupported: expected 'error' or 'warn', got 'ignore'"):
        load_mjcf(xml, unsupported="ignore")


def test_fixed_tendon_springs_and_dampers_are_kept_as_model_tendons():
    xml = ROBOT.replace('<fixed name="grip">', '<fixed name="grip" stiffness="10" damping="2">')
    model = load(xml)
    (grip,) = model.tendons
    assert (grip.joints, grip.coef, grip.stiffness, grip.damping) == (("f1", "f2"), (1.0, -0.5), 10.0, 2.0)


def test_spatial_tendon_with_a_limit_names_the_bodies_it_spans():
    xml = ROBOT.replace("<tendon>", '<tendon><spatial name="rope" limited="true" range="0 1">'
                                    '<site site="s1"/><site site="s2"/></spatial>').replace(
        '<geom size=".05" mass=".5" pos=".05 0 0"/>', '<geom size=".05" mass=".5" pos=".05 0 0"/><site name="s1"/>').replace(
        '<freejoint name="root"/>', '<freejoint name="root"/><site name="s2"/>')
    with pytest.raises(MJCFError, match=r"<tendon><spatial> 'rope' \(bodies \['hand', 'torso'\], sites \['s1', 's2'\], line \d+\): "
                                          r"limited"):
        load_mjcf(xml)


# --------------------------------------------------------------------------- gravcomp
def test_gravcomp_as_external_forces_matches_mujoco_forward():
    model = load(ROBOT)
    assert model.gravcomp[model.body_index("torso")] == 0.7 and model.gravcomp[model.body_index("hand")] == 2
    assert model.gravcomp[model.body_index("arm/a1")] == 0           # the massless link of a two-joint body
    xml = ROBOT.replace("<option ", '<option><flag constraint="disable"/></option><option ')
    mj = mujoco.MjModel.from_xml_string(xml)          # equalities and contacts off: the tree alone
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(1)
    Q, QD, QDD = [], [], []
    for _ in range(10):
        q, qd = random_state(model, mj, rng)
        d.qpos[:], d.qvel[:] = mb.mjcf.to_mujoco_state(model, q, qd)
        mujoco.mj_forward(mj, d)
        assert np.abs(d.qfrc_gravcomp).max() > 1                        # it matters
        Q.append(q), QD.append(qd), QDD.append(mb.mjcf.from_mujoco_state(model, d.qpos, d.qvel, d.qacc)[2])
    Q, QD, QDD = map(np.array, (Q, QD, QDD))
    f = mb.gravity_compensation_forces(model, Q)                          # batched: (10, nb, 6)
    assert f.shape == (10, model.nb, 6)
    qdd = mb.aba(model, Q, QD, np.zeros_like(QD), f_ext=f)
    assert np.abs(qdd - QDD).max() <= 1e-9 * np.abs(QDD).max()
    plain = mb.aba(model, Q, QD, np.zeros_like(QD))
    assert np.abs(plain - QDD).max() > 1e-2                               # without it they differ


def test_gravcomp_of_bodies_welded_together_must_agree():
    xml = ROBOT.replace('<body name="f1" pos="0.1 0 0.02">', '<body name="lump" pos="0 .1 0" gravcomp="0.5">'
                        '<geom size=".03" mass=".3"/></body><body name="f1" pos="0.1 0 0.02">')
    with pytest.raises(MJCFError, match=r"<body> 'hand': the bodies welded into it have different gravcomp "
                                        r"\('hand': 2, 'lump': 0.5\)"):
        load_mjcf(xml)
    with pytest.warns(MJCFWarning, match="mass-weighted mean 1.4375"):
        model = load_mjcf(xml, unsupported="warn")
    assert model.gravcomp[model.body_index("hand")] == pytest.approx((2 * 0.5 + 0.5 * 0.3) / 0.8)


# --------------------------------------------------------------------------- equalities
def test_equalities_become_constraints_with_mujocos_residuals_and_jacobians():
    model = load(ROBOT)
    xml = ROBOT.replace("<option ", '<option><flag contact="disable"/></option><option ')
    kinds = [type(c) for c in model.constraints]
    assert kinds == [JointCoupling, TendonCoupling, PointConstraint, WeldConstraint]
    coupling = model.constraints[0]
    assert coupling.polynomial == (0.01, -1.0, 0.5, 0.2, 0.0) and coupling.reference == (0.01, 0.0)
    mj = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(4)
    for _ in range(10):
        q, qd = random_state(model, mj, rng)
        d.qpos[:], d.qvel[:] = mb.mjcf.to_mujoco_state(model, q, qd)
        mujoco.mj_forward(mj, d)
        assert d.nefc == 11
        terms = ConstraintSet(*model.constraints).evaluate(model, q, qd)
        Jmj = d.efc_J.reshape(d.nefc, mj.nv) @ velocity_map(model, q)       # MuJoCo's rows, our q̇
        rows = slice(0, 8)                                                   # all but the weld's rotation
        assert np.allclose(terms.c[rows], d.efc_pos[rows], rtol=0, atol=1e-12)
        assert np.allclose(terms.J[rows], Jmj[rows], rtol=0, atol=1e-12)
        assert np.allclose(terms.cdot[rows], Jmj[rows] @ qd, rtol=0, atol=1e-12)
        # the bias c̈ − J q̈ against a finite difference of ċ along the motion (q ⊕ h q̇, q̇ + h q̈)
        qdd = rng.normal(size=model.nv)
        h = 1e-6
        cd = [ConstraintSet(*model.constraints).evaluate(model, mb.integrate(model, q, qd, s * h), qd + s * h * qdd).cdot
              for s in (-1, 1)]
        assert np.allclose((cd[1] - cd[0]) / (2 * h), terms.J @ qdd + terms.bias, rtol=0, atol=1e-6)
    # the weld's orientation rows: where the weld holds (at qpos0 when MuJoCo computes relpose
    # from it), zero as MuJoCo's are, with the same row space
    xml = xml.replace('relpose="0.5 0.1 0 1 0.2 0 0.1" ', "")
    model, mj = load(xml), mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    mujoco.mj_forward(mj, d)
    q0 = mj.qpos0.copy()
    weld = ConstraintSet(model.constraints[3]).evaluate(model, q0, np.zeros(model.nv))
    assert np.allclose(weld.c, 0, atol=1e-12) and np.allclose(d.efc_pos[8:], 0, atol=1e-12)
    Jrot = d.efc_J.reshape(d.nefc, mj.nv)[8:] @ velocity_map(model, q0)
    assert np.linalg.matrix_rank(weld.J[3:], tol=1e-9) == 3
    assert np.linalg.matrix_rank(np.vstack([weld.J[3:], Jrot]), tol=1e-9) == 3


def weld_rotation_error(model, weld, q):
    """MuJoCo's weld orientation residual from our frames: the vector part of the quaternion of
    R_bᵀ R_a (F_a, F_b in world coordinates)."""
    R, _ = mb.forward_kinematics(model, q)
    Ra, Rb = ((Rl if body is None else R[model.body_index(body)] @ Rl)
              for body, Rl in ((weld.body_a, weld.rotation_a), (weld.body_b, weld.rotation_b)))
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, (Rb.T @ Ra).ravel())
    return quat[1:] * np.sign(quat[0])


def test_weld_frames_and_site_equalities_are_mujocos():
    """Our weld frames give MuJoCo's orientation residual, for a body weld with relpose and for
    site-based connect and weld (MuJoCo ties the sites' frames)."""
    xml = ROBOT.replace("<option ", '<option><flag contact="disable"/></option><option ').replace(
        '<geom size=".05" mass=".5" pos=".05 0 0"/>',
        '<geom size=".05" mass=".5" pos=".05 0 0"/><site name="s1" pos="0.1 0.2 0" euler="10 20 30"/>').replace(
        '<freejoint name="root"/>', '<freejoint name="root"/><site name="s2" pos="0.3 0 .1" euler="-5 3 40"/>').replace(
        "</equality>", '<connect site1="s1" site2="s2"/><weld site1="s1" site2="s2"/></equality>')
    model, mj = load(xml), mujoco.MjModel.from_xml_string(xml)
    assert [type(c) for c in model.constraints[4:]] == [PointConstraint, WeldConstraint]
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, qd = random_state(model, mj, rng)
        d.qpos[:], d.qvel[:] = mb.mjcf.to_mujoco_state(model, q, qd)
        mujoco.mj_forward(mj, d)
        terms = ConstraintSet(*model.constraints).evaluate(model, q, qd)
        Jmj = d.efc_J.reshape(d.nefc, mj.nv) @ velocity_map(model, q)
        # rows: joint 0, tendon 1, connect 2–4, weld 5–10 (rotation 8–10), site connect 11–13,
        # site weld 14–19 (rotation 17–19)
        for rows in (slice(0, 8), slice(11, 17)):
            assert np.allclose(terms.c[rows], d.efc_pos[rows], rtol=0, atol=1e-12)
            assert np.allclose(terms.J[rows], Jmj[rows], rtol=0, atol=1e-12)
        torquescale = mj.eq_data[3, 10]                      # MuJoCo scales the body weld's rotation rows
        assert np.allclose(torquescale * weld_rotation_error(model, model.constraints[3], q), d.efc_pos[8:11],
                           rtol=0, atol=1e-12)
        assert np.allclose(weld_rotation_error(model, model.constraints[5], q), d.efc_pos[17:20], rtol=0, atol=1e-12)


def test_unnamed_equalities_name_their_joints_and_included_files_give_file_and_line(tmp_path):
    inc = b"""<mujoco><equality>
      <tendon tendon1="rope"/>
    </equality></mujoco>"""
    xml = ROBOT.replace("<tendon>", '<tendon><spatial name="rope"><site site="s1"/><site site="s2"/></spatial>').replace(
        '<geom size=".05" mass=".5" pos=".05 0 0"/>', '<geom size=".05" mass=".5" pos=".05 0 0"/><site name="s1"/>').replace(
        '<freejoint name="root"/>', '<freejoint name="root"/><site name="s2"/>').replace(
        "</equality>", '</equality><include file="more.xml"/>')
    with pytest.raises(MJCFError, match=r"<equality><tendon> #4 \(tendons \['rope'\], more.xml line 2\): couples "
                                        r"spatial tendon\(s\) \['rope'\]"):
        load_mjcf(xml, assets={"more.xml": inc})
    (tmp_path / "more.xml").write_bytes(inc)                 # the same through files
    (tmp_path / "robot.xml").write_text(xml)
    with pytest.raises(MJCFError, match=r"<equality><tendon> #4 \(tendons \['rope'\], more.xml line 2\)"):
        load_mjcf(tmp_path / "robot.xml")
    xml = ROBOT.replace('<fixed name="grip">', '<fixed name="grip" limited="true" range="0 1">')
    with pytest.raises(MJCFError) as e:
        load_mjcf(xml)
    assert "<tendon><fixed> 'grip' (joints ['f1', 'f2'], line 27): limited" in str(e.value)


def test_inactive_equalities_are_dropped_with_a_warning():
    xml = ROBOT.replace('<joint joint1="f2"', '<joint active="false" joint1="f2"')
    with pytest.warns(MJCFWarning, match=r"<equality><joint> #0 \(joints \['f2', 'f1'\], line 33\): inactive at the "
                                         "start; not kept"):
        model = load_mjcf(xml)
    assert [type(c) for c in model.constraints] == [TendonCoupling, PointConstraint, WeldConstraint]


# --------------------------------------------------------------------------- state conversion
def test_state_conversion_round_trips_batched_and_leaves_hinges_and_balls_alone():
    model = load(ROBOT)
    mj = mujoco.MjModel.from_xml_string(ROBOT)
    rng = np.random.default_rng(7)
    states = [random_state(model, mj, rng) for _ in range(5)]
    Q, QD = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    QDD = rng.normal(size=QD.shape)
    qpos, qvel, qacc = mb.mjcf.to_mujoco_state(model, Q, QD, QDD)
    assert qpos.shape == Q.shape and np.array_equal(qpos, Q) and np.array_equal(qvel[:, 6:], QD[:, 6:])
    back = mb.mjcf.from_mujoco_state(model, qpos, qvel, qacc)
    for a, b in zip(back, (Q, QD, QDD)):
        assert np.allclose(a, b, rtol=0, atol=1e-13)
    # one state: MuJoCo's free-joint velocity is the world velocity of the body origin
    d = mujoco.MjData(mj)
    d.qpos[:], d.qvel[:] = qpos[0], qvel[0]
    mujoco.mj_forward(mj, d)
    vel = np.zeros(6)
    mujoco.mj_objectVelocity(mj, d, mujoco.mjtObj.mjOBJ_XBODY, 1, vel, 0)   # [ω; v] world, body origin
    assert np.allclose(vel[3:], qvel[0, :3]) and np.allclose(vel[:3], d.xmat[1].reshape(3, 3) @ QD[0, :3])
    with pytest.raises(ValueError, match=r"qvel: expected shape \(…, 15\)"):
        mb.mjcf.from_mujoco_state(model, qpos, qvel[:, :5])


# --------------------------------------------------------------------------- simulation
# Both runs are passive (no contacts, limits, springs or damping) and stiff on MuJoCo's side.
# MuJoCo's equality is soft: it asks J q̈ = a_ref = −b ċ − k c (solref 0.5 ms: k = 1/(0.5 ms)²
# = 4e6 /s², b = 4000 /s), lets (1 − d) = 1e-4 of the unconstrained acceleration through
# (solimp), and leaves out the curvature term J̇q̇ (a connect's centripetal ω²L ≈ 2 m/s² here).
# Each is held off by the reference dynamics: |c| ≲ a/k ≈ 2 / 4e6 = 5e-7 (the J̇q̇ term) and
# 1e-4 · 100 / 4e6 ≈ 3e-9 (the leak).  We solve the hard constraint exactly (Baumgarte T = 20 ms
# only corrects the integrator's drift: |c| < 1e-7).  MuJoCo integrates with RK4 at 0.1 ms, we with
# RK4 at 1 ms (local error ~1e-12 per step).  The trajectories therefore differ by MuJoCo's
# constraint violation, ≲ 1e-6, carried along the motion; measured: 3e-7 (fingers, whose wrist
# turns 3 rad) and 3e-10 (four-bar, whose coupler's J̇q̇ vanishes: it translates).  Tolerance 1e-5
# rad (m): thirty times the finger's, which grows with the 2 s of a triple pendulum's sensitivity.
STIFF = 'solref="0.0005 1" solimp="0.9999 0.9999 0.001 0.5 2"'
OPTIONS = '<option timestep="1e-4" integrator="RK4"><flag contact="disable" limit="disable"/></option>'

FINGERS = f"""<mujoco>{OPTIONS}<worldbody>
  <body name="palm" pos="0 0 1"><joint name="wrist" axis="0 1 0"/><geom type="box" size=".05 .05 .02" mass="1" pos=".1 0 0"/>
    <body name="knuckle" pos=".15 0 0"><joint name="k1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .1 0 0" size=".01" mass=".2"/>
      <body name="tip" pos=".1 0 0"><joint name="k2" axis="0 1 0" ref="0.2"/><geom type="capsule" fromto="0 0 0 .08 0 0" size=".01" mass=".1"/>
      </body></body></body></worldbody>
  <equality><joint joint1="k2" joint2="k1" polycoef="0 0.8 0 0 0" {STIFF}/></equality></mujoco>"""

FOUR_BAR = f"""<mujoco>{OPTIONS}<worldbody>
  <body name="crank"><joint name="c" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -.5" size=".02" mass="1"/>
    <body name="coupler" pos="0 0 -.5"><joint name="m" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 1 0 0" size=".02" mass="2"/></body></body>
  <body name="rocker" pos="1 0 0"><joint name="r" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -.5" size=".02" mass="1"/></body>
  </worldbody><equality><connect body1="coupler" body2="rocker" anchor="1 0 0" {STIFF}/></equality></mujoco>"""


def run_both(xml, qd0, constraints_kw):
    model = load(xml)
    mj = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    q0 = mj.qpos0.copy()
    d.qpos[:], d.qvel[:] = q0, qd0
    theirs = [d.qpos.copy()]
    for _ in range(20):                      # every 0.1 s for 2 s
        for _ in range(1000):
            mujoco.mj_step(mj, d)
        theirs.append(d.qpos.copy())
    cons = ConstraintSet(*model.constraints, **constraints_kw)
    traj = mb.simulate(model, q0, qd0, 2.0, dt=1e-3, constraints=cons)
    ours = traj.q[::100]
    c = np.array([cons.residual(model, q, qd)[0] for q, qd in zip(traj.q[::100], traj.qd[::100])])
    return np.array(theirs), ours, c


def test_finger_coupling_moves_as_in_mujoco():
    # a finger mimic: q_k2 − 0.2 = 0.8 q_k1 (MuJoCo's qpos0 of k2 is its ref, 0.2) → q̇_k2 = 0.8 q̇_k1
    theirs, ours, c = run_both(FINGERS, np.array([1.0, -2.0, -1.6]), {})
    assert np.abs(ours[-1] - ours[0]).max() > 0.5                         # it moves
    assert np.abs(c).max() < 1e-7
    assert np.abs(ours - theirs).max() < 1e-5, np.abs(ours - theirs).max()


def test_four_bar_loop_moves_as_in_mujoco():
    # a parallelogram hanging down: the coupler stays level, q_m = −q_c, q_r = q_c.  The planar
    # loop's y row is identically zero: its multiplier is taken as the minimum-norm one.
    theirs, ours, c = run_both(FOUR_BAR, np.array([2.0, -2.0, 2.0]), {"redundant": "least_squares"})
    assert np.abs(ours[:, 0]).max() > 0.3
    assert np.abs(c).max() < 1e-7
    assert np.abs(ours - theirs).max() < 1e-5, np.abs(ours - theirs).max()


def test_one_joint_equalities_and_couplings_of_two_tendons_are_mujocos():
    xml = """<mujoco><compiler angle="radian"/><option><flag contact="disable"/></option><worldbody>
      <body name="a"><joint name="a" axis="0 1 0" ref="0.1"/><geom size=".1" mass="1"/>
        <body name="b" pos=".3 0 0"><joint name="b" type="slide" axis="1 0 0"/><geom size=".1" mass="1"/>
          <body name="c" pos=".3 0 0"><joint name="c" axis="0 0 1"/><geom size=".1" mass="1"/>
            <body name="e" pos=".3 0 0"><joint name="e" axis="1 0 0"/><geom size=".1" mass="1"/></body>
          </body></body></body></worldbody>
      <tendon><fixed name="t1"><joint joint="b" coef="2"/><joint joint="c" coef="-1"/></fixed>
              <fixed name="t2"><joint joint="e" coef="0.5"/><joint joint="a" coef="1"/></fixed></tendon>
      <equality><joint joint1="a" polycoef="0.3 0 0 0 0"/>
                <tendon tendon1="t1" tendon2="t2" polycoef="0.1 0.5 0.2 0.05 0"/></equality></mujoco>"""
    model, mj = load(xml), mujoco.MjModel.from_xml_string(xml)
    hold, couple = model.constraints
    assert hold.joint_b is None and hold.polynomial[0] == 0.3 and hold.reference[0] == pytest.approx(0.1)
    assert couple.tendon_a == {1: 2.0, 2: -1.0} and couple.tendon_b == {3: 0.5, 0: 1.0}
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, qd = random_state(model, mj, rng, scale=1.0)
        d.qpos[:], d.qvel[:] = q, qd
        mujoco.mj_forward(mj, d)
        terms = ConstraintSet(*model.constraints).evaluate(model, q, qd)
        assert np.allclose(terms.c, d.efc_pos, rtol=0, atol=1e-12)
        assert np.allclose(terms.J, d.efc_J.reshape(d.nefc, mj.nv), rtol=0, atol=1e-12)
        h, qdd = 1e-6, rng.normal(size=model.nv)
        cd = [ConstraintSet(*model.constraints).evaluate(model, q + s * h * qd, qd + s * h * qdd).cdot for s in (-1, 1)]
        assert np.allclose((cd[1] - cd[0]) / (2 * h), terms.J @ qdd + terms.bias, rtol=0, atol=1e-6)
        assert abs(terms.bias[1]) > 1e-3                       # the polynomial's curvature term is there


def test_model_checks_its_new_fields():
    model = load(ROBOT)
    with pytest.raises(ValueError, match=r"gravcomp: expected 8 finite numbers \(one per body\)"):
        mb.Model(**{**_fields(model), "gravcomp": [1.0] * 7})
    with pytest.raises(ValueError, match="gravcomp: expected 8 finite numbers"):
        mb.Model(**{**_fields(model), "gravcomp": [np.nan] * 8})
    with pytest.raises(TypeError, match="constraints: expected a tuple of constraint objects, got list"):
        mb.Model(**{**_fields(model), "constraints": list(model.constraints)})
    with pytest.raises(TypeError, match=r"constraints\[1\]: expected a constraint description "
                                        r"\(multibody.model.constraints, .* got str"):
        mb.Model(**{**_fields(model), "constraints": (model.constraints[0], "weld")})
    plain = mb.models.planar(2)
    assert plain.gravcomp.tolist() == [0.0, 0.0] and plain.constraints == ()
    import pickle
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(back.gravcomp, model.gravcomp) and len(back.constraints) == 4
    q, qd = random_state(back, mujoco.MjModel.from_xml_string(ROBOT), np.random.default_rng(0))
    assert np.array_equal(ConstraintSet(*back.constraints).evaluate(back, q, qd).c,
                          ConstraintSet(*model.constraints).evaluate(model, q, qd).c)


def _fields(model):
    import dataclasses
    return {f.name: getattr(model, f.name) for f in dataclasses.fields(model) if f.init}


def test_flex_is_refused_by_name_and_dropped_on_request():
    xml = """<mujoco><worldbody><body name="b"><joint name="h"/><geom size=".1" mass="1"/></body>
      <flexcomp name="cloth" type="grid" count="3 3 1" spacing=".1 .1 .1" dim="2" radius="0.01" mass="0.1"/>
      </worldbody></mujoco>"""
    pattern = r"<flex> 'cloth': a deformable body \(9 vertices, bodies \['cloth_0', .*\]\) is not represented"
    with pytest.raises(MJCFError, match=r"not expressible as a Model .*\n" + pattern):
        load_mjcf(xml)
    with pytest.warns(MJCFWarning, match="dropped: " + pattern):
        model = load_mjcf(xml, unsupported="warn")
    assert model.body_names[0] == "b" and model.nb > 1       # the tree: the hinge and the vertices' bodies


def test_a_limited_ball_joint_is_refused_by_name_and_dropped_on_request():
    # MuJoCo bounds a limited ball joint's rotation angle (a cone); the Model's limits are per coordinate,
    # so loading it silently would let the joint swing past its stop
    xml = """<mujoco><compiler angle="radian"/><worldbody><body name="arm" pos="0 0 1">
      <joint name="shoulder" type="ball" range="0 0.6" limited="true"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size=".04" mass="1"/></body></worldbody></mujoco>"""
    pattern = r"ball <joint> 'shoulder': limited \(its rotation angle at most 0.6 rad\)"
    with pytest.raises(MJCFError, match=pattern):
        load_mjcf(xml)
    with pytest.warns(MJCFWarning, match="dropped: " + pattern):
        model = load_mjcf(xml, unsupported="warn")
    assert model.nq == 4 and np.all(np.isinf(model.q_lower)) and np.all(np.isinf(model.q_upper))
    # with limits disabled MuJoCo has none either: nothing to refuse
    off = xml.replace("<worldbody>", '<option><flag limit="disable"/></option><worldbody>')
    with warnings.catch_warnings():
        warnings.simplefilter("error", MJCFWarning)
        assert load_mjcf(off).nq == 4
