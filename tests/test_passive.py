"""Each passive law in its one C place (csrc/sim/passive.c) against its Python statement.

The compiled loop applies the model's passive forces through ``mb_passive_forces`` and
``mb_passive_gravcomp``; ``_core.passive`` evaluates them at one state from a Plan's ``Passive``
record (the one the factory, ``System.plan``, builds).  Each law is held here, alone, on random
states, to the Python statement the Python loop uses — the statement is the reference, the C
function must agree to rounding (they are the same operations: in practice bit for bit).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import multibody as mb
from multibody.core import _core
from multibody.dynamics.gravcomp import gravity_compensation_forces
from multibody.model.actuators import Actuators
from multibody.model.tendons import FixedTendon
from multibody.simulation.limits import (FRICTION_VELOCITY, LIMIT_SOFTNESS, JointLimits, smoothed_friction,
                                        soft_reference, spring_forces, tendon_forces)
from multibody.simulation.rollout import Passive
from multibody.simulation.system import System

TOL = 1e-14
STATES = 50
SOFT = (*soft_reference(LIMIT_SOFTNESS, 1e-3), 1.0)   # a soft stop's row after (q index, v index, position, sign)


def passive_model():
    """A three-link arm carrying every law: damping, friction, gravcomp, joint springs, two fixed
    tendons (one with a dead band, one naming a joint twice), four actuators (two on one joint; one
    through a fixed tendon over all three; a ctrl range, a force range, an actuator force range on a
    joint) and position limits."""
    m = mb.models.planar(3)
    return dataclasses.replace(
        m, damping=np.array([0.3, 0.02, 0.7]), friction=np.array([0.05, 0.0, 0.4]),
        gravcomp=np.array([0.0, 0.6, 1.0]), q_lower=np.array([-0.9, -0.4, -1.0]), q_upper=np.array([1.2, 2.0, 0.5]),
        tendons=(FixedTendon("band", ("joint1", "joint3"), (2.0, -1.0), stiffness=3.0, damping=0.5,
                             spring_length=(0.1, 0.4)),
                 FixedTendon("twice", ("joint2", "joint3", "joint2"), (0.5, 0.25, 0.5), stiffness=1.5, damping=0.1)),
        stiffness=np.array([2.0, 0.0, 0.8]), springref=np.array([0.3, 0.0, -0.2]),
        effort_limit=np.array([1.5, np.inf, 0.8]),
        actuators=Actuators(names=("motor", "servo", "general", "tendon"), q_index=[0, 2, 0, -1],
                            v_index=[0, 2, 0, -1], gear=[2.0, 1.0, -1.5, 1.3], gain=[1.0, 5.0, 0.7, 4.0],
                            bias=[[0, 0, 0], [0, -5.0, -0.5], [0.1, -0.3, 0.2], [0.2, -6.0, -0.4]],
                            ctrlrange=[[-0.5, 0.5], [-1, 1], [0, 0], [-0.3, 0.8]],
                            ctrllimited=[True, False, False, True],
                            forcerange=[[0, 0], [-2.0, 2.5], [0, 0], [-1.5, 3.0]],
                            forcelimited=[False, True, False, True], mujoco_index=[0, 1, 2, 3],
                            dof_forcerange=[[-1.2, 1.2], [-np.inf, np.inf], [-np.inf, np.inf]],
                            # the fourth drives a fixed tendon L = 0.5 q1 − 0.25 q2 + 0.3 q3 (MJCF tendon=…)
                            terms=[(0, 0, 0, 1.0), (1, 2, 2, 1.0), (2, 0, 0, 1.0), (3, 0, 0, 0.5), (3, 1, 1, -0.25),
                                   (3, 2, 2, 0.3)]))


CTRL = np.array([0.9, 0.4, -0.6, 0.5])


def only(record, *laws):
    """The record with every law but ``laws`` (field names) removed."""
    keep = {f.name for f in dataclasses.fields(Passive)} & set(laws)
    return dataclasses.replace(record, **{f.name: None for f in dataclasses.fields(Passive)
                                          if f.name not in keep})


@pytest.fixture(scope="module")
def setup():
    m = passive_model()
    system = System(m, limits=JointLimits(m, "soft"), ctrl=CTRL, effort_limits=True)
    system.friction_velocity = np.array([0.01, 0.02, 0.05])   # per variable, as a fixed step may raise it
    rng = np.random.default_rng(7)
    states = [(rng.uniform(-1.5, 2.2, 3), rng.normal(0.0, 2.0, 3), rng.normal(0.0, 3.0, 3)) for _ in range(STATES)]
    return m, system, system.passive_record(), states


def c_forces(m, record, q, v, tau, f_ext=None):
    return _core.passive(m._c, record, q, v, tau, f_ext)


def test_damping(setup):
    m, system, record, states = setup
    for q, v, tau in states:
        want = tau - system.damping * v                        # System._loads
        np.testing.assert_allclose(c_forces(m, only(record, "damping"), q, v, tau)[0], want, rtol=0, atol=TOL)


def test_friction(setup):
    m, system, record, states = setup
    for q, v, tau in states:
        want = tau + smoothed_friction(system.friction, v, system.friction_velocity)
        got = c_forces(m, only(record, "friction", "friction_velocity"), q, v, tau)[0]
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL)


def test_tendons(setup):
    m, _system, record, states = setup
    for q, v, tau in states:
        want = tau + tendon_forces(m, q, v)
        got = c_forces(m, only(record, "tendons", "tendon_terms"), q, v, tau)[0]
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL)


def test_springs(setup):
    m, _system, record, states = setup
    for q, v, tau in states:
        want = tau + spring_forces(m, q)                        # System._loads
        got = c_forces(m, only(record, "springs"), q, v, tau)[0]
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL)


def test_actuators(setup):
    m, system, record, states = setup
    clipped = 0
    for q, v, tau in states:
        act = m.actuators.forces(q, v, system.ctrl)            # System._loads
        clipped += abs(act[0]) == 1.2
        laws = only(record, "actuators", "actuator_terms", "actuator_ctrl", "actuator_dof_range")
        got = c_forces(m, laws, q, v, tau)[0]
        np.testing.assert_allclose(got, tau + act, rtol=0, atol=TOL)
    assert 0 < clipped < STATES          # the joint's actuator force range binds at some states only


def test_soft_stops(setup):
    """MuJoCo's soft limits (limits.py JointLimits.soft_forces, NNLS on A + R) against passive.c's (the engine's
    LCP), under the other laws' τ and an f_ext: the free acceleration a₀ they meet is the stops' load."""
    m, system, record, states = setup
    beyond = 0
    rng = np.random.default_rng(3)
    for q, v, tau in states:
        f_ext = rng.normal(0.0, 2.0, (m.nb, 6))
        push = system.limits.soft_forces(q, v, tau, f_ext)
        beyond += push is not None
        want = tau if push is None else tau + push
        got = c_forces(m, only(record, "soft_stops"), q, v, tau, f_ext)[0]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * max(1.0, np.abs(want).max()))
    assert 10 < beyond < STATES      # the states reach both sides of the stops
    # a load past double precision (τ − C overflows) has no forces: a status naming the law, not a silent zero
    q = np.array([m.q_upper[0] + 0.2, 0.0, 0.0])
    f_ext = np.zeros((m.nb, 6))
    f_ext[0, 2] = 1.7e308
    with pytest.raises(ValueError, match="limits='soft': the soft stops' LCP"):
        for t0 in (1.7e308, -1.7e308):
            c_forces(m, only(record, "soft_stops"), q, np.zeros(3), np.array([t0, 0.0, 0.0]), f_ext)


def test_gravity_compensation(setup):
    m, _system, record, states = setup
    for q, v, tau in states:
        tau_all, fext = c_forces(m, only(record, "gc_lift", "gc_com"), q, v, tau)
        np.testing.assert_array_equal(tau_all, tau)            # gravcomp acts as f_ext only
        np.testing.assert_allclose(fext, gravity_compensation_forces(m, q), rtol=0, atol=TOL)


def test_all_laws_together_in_the_python_loops_order(setup):
    """τ + damping, friction, springs, tendons, actuators, soft stops: System._loads's sum, in its order."""
    m, system, record, states = setup
    for q, v, tau in states:
        want = np.clip(tau, -m.effort_limit, m.effort_limit) - system.damping * v   # the controller's τ first
        want = want + smoothed_friction(system.friction, v, system.friction_velocity)
        want = want + spring_forces(m, q)
        want = want + tendon_forces(m, q, v)
        want = want + m.actuators.forces(q, v, system.ctrl)
        push = system.limits.soft_forces(q, v, want)
        want = want if push is None else want + push
        got, fext = c_forces(m, record, q, v, tau)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * max(1.0, np.abs(want).max()))
        np.testing.assert_allclose(fext, gravity_compensation_forces(m, q), rtol=0, atol=TOL)


def test_effort_limits(setup):
    """simulate(..., effort_limits=True): the controller's τ clipped to ±effort (URDF <limit effort>)."""
    m, system, record, states = setup
    clipped = 0
    for q, v, tau in states:
        got = c_forces(m, only(record, "effort"), q, v, tau)[0]
        want = np.clip(tau, -m.effort_limit, m.effort_limit)
        clipped += np.any(want != tau)
        np.testing.assert_array_equal(got, want)
    assert 0 < clipped < STATES
    with pytest.raises(ValueError, match="effort_limits: the model has no finite effort limit"):
        System(mb.models.double_pendulum(), effort_limits=True)
    with pytest.raises(ValueError, match="effort: expected"):
        _core.passive(m._c, Passive(effort=np.array([1.0, -1.0, 1.0])), *states[0], None)


def test_the_plan_carries_only_the_laws_the_model_has():
    """A model without passive forces gives an empty Passive record (the compiled loop then skips them);
    the factory's record names each law the model carries, and friction's v_s per variable."""
    plain = System(mb.models.double_pendulum()).passive_record()
    assert all(getattr(plain, f.name) is None for f in dataclasses.fields(Passive))
    full = System(passive_model(), limits=JointLimits(passive_model(), "soft")).passive_record()
    assert full.springs.tolist() == [[0, 0, 2.0, 0.3], [2, 2, 0.8, -0.2]] and full.actuators.shape == (4, 11)
    assert full.actuator_terms.shape == (6, 3) and full.actuators[:, :2].tolist() == [[0, 1], [1, 1], [2, 1], [3, 3]]
    assert full.actuator_ctrl.tolist() == [0.0] * 4
    assert full.friction_velocity.tolist() == [FRICTION_VELOCITY] * 3
    assert full.tendons.shape == (2, 4) and full.tendon_terms.shape == (5, 4) and full.soft_stops.shape == (6, 13)
    assert full.gc_lift.shape == (3, 3) and full.implicit_armature is None


def test_bad_passive_records_are_refused_by_name():
    m = mb.models.double_pendulum()
    q = v = tau = np.zeros(2)
    for fields, word in ((dict(damping=np.full(2, np.nan)), "damping"), (dict(friction=np.ones(2)), "friction_velocity"),
                         (dict(gc_lift=np.zeros((2, 3))), "gc_lift, gc_com"),
                         (dict(soft_stops=np.array([[0.0, 7.0, 0.1, 1.0, *SOFT]])), "soft_stops"),
                         (dict(soft_stops=np.array([[0.0, 1.0, 0.1, 1.0, *SOFT[:8], 0.0]])), "invweight > 0"),
                         (dict(soft_stops=np.array([[0.0, 1.0, 0.1, 1.0, *SOFT[:6], 0.5, *SOFT[7:]]])), "power >= 1"),
                         (dict(springs=np.array([[0.0, 2.0, 1.0, 0.0]])), "springs"),
                         (dict(actuators=np.zeros((1, 11))), "actuator_terms"),
                         (dict(actuators=np.zeros((1, 11)), actuator_terms=np.array([[0.0, 2.0, 1.0]])),
                          "actuator_terms"),
                         (dict(actuators=np.zeros((1, 11)), actuator_terms=np.array([[0.0, 0.0, 1.0]])),
                          "actuator_ctrl"),
                         (dict(actuators=np.array([[0.0, 1, 1, 1, 0, 0, 0, 1, -1, 0, 0]]), actuator_ctrl=np.zeros(1),
                               actuator_terms=np.array([[0.0, 0.0, 1.0]]), actuator_dof_range=np.zeros((2, 2))),
                          "actuators"),
                         (dict(actuators=np.array([[0.0, 2, 1, 1, 0, 0, 0, -1, 1, 0, 0]]), actuator_ctrl=np.zeros(1),
                               actuator_terms=np.array([[0.0, 0.0, 1.0]]), actuator_dof_range=np.zeros((2, 2))),
                          "actuators")):
        with pytest.raises(ValueError, match=word):
            _core.passive(m._c, Passive(**fields), q, v, tau, None)
    with pytest.raises(ValueError, match="q"):
        _core.passive(m._c, Passive(), np.full(2, np.nan), v, tau, None)


def test_the_lanes_rk4_step_takes_its_damping_from_passive_c():
    """The lanes' RK4 step (rollout_lanes.h) applies passive.c's damping law compiled on lanes
    (mb_passive_damping_lanes): a damped 3-D arm under a continuous PD, as a batch in every lanes kind,
    equals the batch run by run ("none": rollout.c's stage-by-stage rhs through mb_passive_forces)
    and the Python reference loop (System._loads: τ − c ⊙ q̇ in NumPy) bit for bit; the damping
    acts (the undamped batch differs)."""
    from reference_steppers import python_loop
    from test_rollout import LANE_KINDS

    m = mb.models.auto_tree(5)                          # spatial_v2's autoTree: a 3-D chain
    md = dataclasses.replace(m, damping=np.linspace(0.05, 0.4, m.nv))
    rng = np.random.default_rng(5)
    N = 9                                              # not a multiple of any lanes' width
    Q0, QD0 = rng.uniform(-1, 1, size=(N, m.nq)), rng.uniform(-1, 1, size=(N, m.nv))
    pd = mb.PD(kp=20.0, kd=2.0, q_ref=np.full(m.nq, 0.3), gravity_compensation=True)
    before = _core.use_lanes("none")
    try:
        out = {}
        for kind in ["none", *LANE_KINDS]:
            _core.use_lanes(kind)
            out[kind] = mb.simulate_batch(md, Q0, QD0, 0.1, controller=pd)
        undamped = mb.simulate_batch(m, Q0, QD0, 0.1, controller=pd)
    finally:
        _core.use_lanes(before)
    for kind in LANE_KINDS:
        for k in ("q", "qd", "qdd", "tau"):
            np.testing.assert_array_equal(getattr(out[kind], k), getattr(out["none"], k), err_msg=f"{kind}: {k}")
    assert np.abs(out["none"].qd - undamped.qd).max() > 1e-3
    with python_loop():
        for i in (0, 4, 8):
            ref = mb.simulate(md, Q0[i], QD0[i], 0.1, controller=pd)
            np.testing.assert_array_equal(out[LANE_KINDS[-1]][i].q, ref.q)
            np.testing.assert_array_equal(out[LANE_KINDS[-1]][i].qd, ref.qd)
