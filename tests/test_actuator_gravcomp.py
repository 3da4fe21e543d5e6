"""MJCF ``actuatorgravcomp`` with its clamp, against MuJoCo.

MuJoCo moves the gravity compensation g_j of a joint with ``actuatorgravcomp`` from ``qfrc_passive``
into ``qfrc_actuator`` before clamping that to the joint's ``actuatorfrcrange``.  Ours applies
gravcomp as f_ext on every variable and the actuators add clip(τ_j + g_j) − g_j there
(model/actuators.py; csrc/sim/passive.c's mb_passive_actuators).  References: MuJoCo's
``qfrc_gravcomp``, ``qfrc_actuator + qfrc_passive`` and ``qacc`` on the same file, at random states,
and the Python statement (``Actuators.forces``) for the C function.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import multibody as mb
from multibody.core import _core
from multibody.simulation.rollout import Passive
from multibody.simulation.system import System

import mujoco  # a test dependency, installed with .[test]: a missing one must fail, not skip

# a shoulder clamped tightly (its lift alone exceeds the range at most states), an elbow clamped
# where its position actuator's force with the lift leaves the range at most states but not all, a
# slide unclamped, a ball with actuatorgravcomp (MuJoCo clamps only hinge and slide joints), a joint
# with a range but no actuatorgravcomp; gravity off-axis; no contact (the geoms would touch at some states)
ARM = """<mujoco><option gravity="0.7 -0.4 -9.81"/><default><geom contype="0" conaffinity="0"/></default>
<worldbody>
 <body name="upper" gravcomp="1"><joint name="shoulder" axis="0 1 0.2" {shoulder}/>
  <geom type="capsule" fromto="0 0 0 .4 0 0" size=".04" mass="2"/>
  <body name="lower" pos=".4 0 0" gravcomp="0.6"><joint name="elbow" axis="0 1 0" {elbow}/>
   <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" mass="1"/>
   <body name="slider" pos=".3 0 0" gravcomp="1.3"><joint name="slide" type="slide" axis="1 0 0.3" {slide}/>
    <geom type="box" size=".04 .03 .02" mass=".7"/>
    <body name="hand" pos=".05 0 0" gravcomp="1"><joint name="wrist" type="ball" {wrist}/>
     <geom type="box" size=".05 .02 .01" pos=".05 0 0" mass=".5"/>
     <body name="finger" pos=".1 0 0"><joint name="finger" axis="0 0 1" actuatorfrcrange="-.05 .05"/>
      <geom type="capsule" fromto="0 0 0 .05 0 0" size=".01" mass=".1"/></body></body></body></body></body>
</worldbody>
<actuator><motor name="m_shoulder" joint="shoulder" gear="2"/><position name="p_elbow" joint="elbow" kp="20"/>
 <motor name="m_slide" joint="slide"/><motor name="m_finger" joint="finger"/></actuator>
</mujoco>"""
ATTRS = dict(shoulder='actuatorgravcomp="true" actuatorfrcrange="-4 4"',
             elbow='actuatorgravcomp="true" actuatorfrclimited="true" actuatorfrcrange="-3 2.5"',
             slide='actuatorgravcomp="true"', wrist='actuatorgravcomp="true" actuatorfrcrange="-.01 .01"')
STATES = 40


def xml(**over):
    return ARM.format(**{**ATTRS, **over})


def mj_state(mj, rng):
    """A random (qpos, qvel, ctrl) of the arm: the ball's quaternion normalised."""
    q = rng.uniform(-1.2, 1.2, mj.nq)
    q[3:7] /= np.linalg.norm(q[3:7])
    return q, rng.normal(0.0, 1.5, mj.nv), rng.normal(0.0, 3.0, mj.nu)


@pytest.fixture(scope="module")
def arm():
    text = xml()
    return mb.load_mjcf(text), mujoco.MjModel.from_xml_string(text)


def test_the_loader_keeps_the_clamped_joints(arm):
    model, _mj = arm
    acts = model.actuators
    assert acts.gravcomp_dofs.tolist() == [True, True, True, True, True, True, False]
    assert acts.gravcomp_clipped().tolist() == [0, 1]                 # shoulder and elbow: the ball is not clamped
    assert acts.dof_forcerange[6].tolist() == [-0.05, 0.05]


def test_gravity_compensation_torques_are_mujocos_qfrc_gravcomp(arm):
    model, mj = arm
    d, rng = mujoco.MjData(mj), np.random.default_rng(3)
    Q = []
    for _ in range(STATES):
        d.qpos[:], d.qvel[:], _c = mj_state(mj, rng)
        mujoco.mj_forward(mj, d)
        Q.append(d.qpos.copy())
        np.testing.assert_allclose(mb.gravity_compensation_torques(model, d.qpos), d.qfrc_gravcomp, rtol=0, atol=1e-10)
    batch = mb.gravity_compensation_torques(model, np.array(Q))          # batched, row by row the same
    np.testing.assert_array_equal(batch[-1], mb.gravity_compensation_torques(model, Q[-1]))


def test_actuator_and_passive_forces_are_mujocos_at_random_states(arm):
    """Σ of what acts on each variable — the actuators' law with the clamp, and gravcomp's lift —
    equals MuJoCo's qfrc_actuator + qfrc_passive; the clamp binds on both clamped joints at some states."""
    model, mj = arm
    d, rng = mujoco.MjData(mj), np.random.default_rng(11)
    lo, hi = model.actuators.dof_forcerange[:, 0], model.actuators.dof_forcerange[:, 1]
    bound = np.zeros(model.nv, dtype=int)
    for _ in range(STATES):
        q, v, ctrl = mj_state(mj, rng)
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, ctrl
        mujoco.mj_forward(mj, d)
        g = mb.gravity_compensation_torques(model, q)
        ours = model.actuators.forces(q, v, ctrl, model.nv, g) + g
        np.testing.assert_allclose(ours, d.qfrc_actuator + d.qfrc_passive, rtol=0, atol=1e-10)
        bound += (d.qfrc_actuator <= lo + 1e-12) | (d.qfrc_actuator >= hi - 1e-12)
    assert bound[0] > STATES // 2 and 0 < bound[1] < STATES              # (33 and 39 of 40 with this seed)
    assert bound[2] == 0 and bound[3:6].sum() == 0                      # slide, ball: never clamped
    with pytest.raises(ValueError, match=r"gravcomp: the actuators clip the gravity compensation of variables "
                                         r"\[0, 1\] .*gravity_compensation_torques"):
        model.actuators.forces(q, v, ctrl)


def test_a_run_accelerates_as_mujoco(arm):
    """The compiled loop's q̈ at the start (its Plan: gravcomp as f_ext, the clamp in passive.c) and the
    Python loop's (System._loads) are MuJoCo's qacc, at states where the clamps bind."""
    from reference_steppers import python_loop
    model, mj = arm
    d, rng = mujoco.MjData(mj), np.random.default_rng(5)
    for _ in range(4):
        q, v, ctrl = mj_state(mj, rng)
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, ctrl
        mujoco.mj_forward(mj, d)
        traj = mb.simulate(model, q, v, 1e-3, dt=1e-3, ctrl=ctrl, limits="off", contact="off")
        np.testing.assert_allclose(traj.qdd[0], d.qacc, rtol=0, atol=1e-9)
        with python_loop():
            ref = mb.simulate(model, q, v, 1e-3, dt=1e-3, ctrl=ctrl, limits="off", contact="off")
        np.testing.assert_allclose(traj.q, ref.q, rtol=0, atol=1e-13)
        # ctrl as a function: the actuators' law is the run's controller, the clamp the same
        fn = mb.simulate(model, q, v, 1e-3, dt=1e-3, ctrl=lambda t, q_, v_: ctrl, limits="off", contact="off")
        np.testing.assert_allclose(fn.qdd[0], d.qacc, rtol=0, atol=1e-9)


def test_c_law_is_the_python_statement(arm):
    """passive.c's clamp with gravcomp (mb_passive_actuators) against Actuators.forces, alone."""
    model, mj = arm
    system = System(model, ctrl=np.array([0.3, -0.2, 1.0, 0.5]))
    rec = system.passive_record()
    assert rec.actuator_gravcomp.tolist() == [0.0, 1.0]
    keep = ("actuators", "actuator_terms", "actuator_ctrl", "actuator_dof_range", "actuator_gravcomp", "gc_lift",
            "gc_com")
    rec = dataclasses.replace(rec, **{f.name: None for f in dataclasses.fields(Passive)
                                      if f.name not in keep})
    rng = np.random.default_rng(2)
    for _ in range(STATES):
        q, v, _c = mj_state(mj, rng)
        tau = rng.normal(size=model.nv)
        want = tau + model.actuators.forces(q, v, system.ctrl, model.nv, mb.gravity_compensation_torques(model, q))
        got, _fext = _core.passive(model._c, rec, q, v, tau, None)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    for bad in (np.array([1.0, 0.0]), np.array([0.0, 9.0]), np.array([0.5])):
        with pytest.raises(ValueError, match="actuator_gravcomp: expected increasing v indices"):
            _core.passive(model._c, dataclasses.replace(rec, actuator_gravcomp=bad), q, v, tau, None)
    with pytest.raises(ValueError, match="actuator_gravcomp: expected increasing v indices .* gc_lift"):
        _core.passive(model._c, dataclasses.replace(rec, gc_lift=None, gc_com=None), q, v, tau, None)


def test_unclamped_and_gravity_free_runs_are_unchanged(arm):
    """Without a limited range, or without gravcomp, the clamp takes nothing more (the same bits)."""
    model, _mj = arm
    free = dataclasses.replace(model, gravcomp=np.zeros(model.nb))
    assert System(free).passive_record().actuator_gravcomp is None
    loose = mb.load_mjcf(xml(shoulder='actuatorgravcomp="true"', elbow='actuatorgravcomp="true"'))
    assert loose.actuators.gravcomp_clipped().tolist() == [] and System(loose).passive_record().actuator_gravcomp is None
    q, v = loose.q_default, np.zeros(loose.nv)
    np.testing.assert_array_equal(loose.actuators.forces(q, v, np.ones(4)),
                                  dataclasses.replace(loose.actuators, gravcomp_dofs=None).forces(q, v, np.ones(4)))
    with pytest.raises(ValueError, match="gravcomp_dofs: expected 7 booleans"):
        dataclasses.replace(loose.actuators, gravcomp_dofs=np.ones(3, bool))


def test_refused_where_mujoco_drops_it_or_no_actuator_is_kept():
    # no actuators, or actuation disabled: MuJoCo applies none of the joint's gravity compensation
    bare = xml().split("<actuator>")[0] + "</mujoco>"
    off = xml().replace("<option gravity", '<option><flag actuation="disable"/></option><option gravity')
    for text in (bare, off):
        with pytest.raises(mb.MJCFError, match=r"<joint> 'shoulder' \(body 'upper'\): actuatorgravcomp in a model "
                                               r"without actuators \(or with actuation disabled\)"):
            mb.load_mjcf(text)
        d = mujoco.MjData(m := mujoco.MjModel.from_xml_string(text))
        mujoco.mj_forward(m, d)
        assert d.qfrc_gravcomp[0] != 0 and d.qfrc_actuator[0] == 0 == d.qfrc_passive[0]
    # actuators, none kept (a site transmission): the clamp has no place to live
    site = xml().split("<actuator>")[0].replace('<geom type="capsule" fromto="0 0 0 .05', '<site name="s"/><geom '
                                                 'type="capsule" fromto="0 0 0 .05') + \
        '<actuator><motor site="s" gear="0 0 0 0 0 1"/></actuator></mujoco>'
    with pytest.raises(mb.MJCFError, match=r"actuatorgravcomp with actuatorfrcrange -4 … 4 — MuJoCo clamps the gravity "
                                           r"compensation .* no actuator of the model is kept"):
        with pytest.warns(mb.MJCFWarning, match="actuators not kept"):
            mb.load_mjcf(site)


def test_a_batch_runs_the_clamp_as_single_runs(arm):
    """simulate_batch (its ctrl: zeros, the default) and one simulate per state agree bit for bit,
    under semi_implicit (the position actuator's kv implicit) as well; the shoulder's clamp binds."""
    model, mj = arm
    rng = np.random.default_rng(8)
    states = [mj_state(mj, rng)[:2] for _ in range(3)]
    Q0, QD0 = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    assert np.all(np.abs(mb.gravity_compensation_torques(model, Q0)[:, 0]) > 4)
    for integrator in ("rk4", "semi_implicit"):
        batch = mb.simulate_batch(model, Q0, QD0, 0.02, dt=1e-3, integrator=integrator, limits="off", contact="off")
        for n in range(len(Q0)):
            one = mb.simulate(model, Q0[n], QD0[n], 0.02, dt=1e-3, integrator=integrator, limits="off",
                              contact="off")
            np.testing.assert_array_equal(batch.q[n], one.q)
