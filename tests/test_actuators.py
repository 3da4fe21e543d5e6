"""Joint springs and joint actuators read from MJCF, against MuJoCo on the same files.

``model.stiffness``/``springref`` (MuJoCo's ``qfrc_spring``) and ``model.actuators``
(``actuator_force``, ``qfrc_actuator``) at random states and controls, on dm_control's suite files
and a small file with every kind of actuator; a run under a constant ctrl against MuJoCo's.
"""
from __future__ import annotations

import os
import re
import warnings
from concurrent.futures import ThreadPoolExecutor

import dm_control
import mujoco
import numpy as np
import pytest

import multibody as mb
from multibody.simulation import limits

from reference_steppers import python_loop

SUITE = os.path.join(os.path.dirname(dm_control.__file__), "suite")
TOL = 1e-12

SMALL = """<mujoco><option timestep="0.001" integrator="RK4"/>
<worldbody><body name="a"><joint name="h1" type="hinge" axis="0 1 0" stiffness="3" springref="0.3" damping="0"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05" mass="1"/>
  <body name="b" pos="0 0 -0.5"><joint name="h2" type="hinge" axis="1 0 0" stiffness="1.5"
       actuatorfrcrange="-2 2" actuatorfrclimited="true"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04" mass="0.7"/>
    <body name="c" pos="0 0 -0.4"><joint name="s" type="slide" axis="0 0 1" stiffness="20" springref="-0.1"/>
      <geom type="sphere" size="0.05" mass="0.3"/></body></body></body></worldbody>
<actuator><motor name="m" joint="h1" gear="2" ctrlrange="-1 1" ctrllimited="true"/>
  <position name="p" joint="h2" kp="8" ctrlrange="-0.5 0.5" forcerange="-3 3" forcelimited="true"/>
  <velocity name="v" joint="s" kv="4" gear="1.5"/>
  <general name="g" joint="h1" gainprm="2.5" biasprm="0.2 -1.1 -0.3" biastype="affine"/></actuator>
<keyframe><key name="home" qpos="0.2 -0.1 0.05" ctrl="0.5 0.1 -0.2 0.4"/></keyframe></mujoco>"""


def load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mb.load_mjcf(path), mujoco.MjModel.from_xml_path(path) if os.path.exists(str(path)) \
            else mujoco.MjModel.from_xml_string(path)


def random_states(m, mj, n, rng):
    """(our q, v, MuJoCo data) at n random states (qpos from MuJoCo's qpos0 plus noise)."""
    d = mujoco.MjData(mj)
    for _ in range(n):
        d.qpos[:] = mj.qpos0 + rng.normal(0, 0.4, mj.nq)
        mujoco.mj_normalizeQuat(mj, d.qpos)
        d.qvel[:] = rng.normal(0, 1.0, mj.nv)
        q, v = mb.mjcf.from_mujoco_state(m, d.qpos.copy(), d.qvel.copy())
        yield q, v, d


def ours_from_mujoco_v(m, x):
    """A MuJoCo per-dof vector in our velocity order (free joints [v; ω] → [ω; v])."""
    return mb.mjcf.from_mujoco_state(m, m.q_default, x)[1]


FILES = ["cartpole", "acrobot", "humanoid", "cheetah", "walker", "hopper", "finger", "reacher", "fish",
         "humanoid_CMU", "manipulator", "quadruped"]


@pytest.mark.parametrize("name", FILES + ["small"])
def test_springs_and_actuators_match_mujoco(name):
    m, mj = load(SMALL if name == "small" else os.path.join(SUITE, name + ".xml"))
    rng = np.random.default_rng(3)
    acts = m.actuators
    checked = 0
    for q, v, d in random_states(m, mj, 20, rng):
        d.ctrl[:] = rng.uniform(-1.5, 1.5, mj.nu)
        for a in np.flatnonzero(mj.actuator_dyntype == mujoco.mjtDyn.mjDYN_FILTER):   # at its steady state
            d.act[mj.actuator_actadr[a]] = np.clip(d.ctrl[a], *mj.actuator_ctrlrange[a])
        mujoco.mj_forward(mj, d)
        spring = limits.spring_forces(m, q) + limits.tendon_forces(m, q, np.zeros(m.nv))  # (tendons' springs too)
        np.testing.assert_allclose(spring, ours_from_mujoco_v(m, d.qfrc_spring), rtol=0, atol=TOL)
        if acts is None:
            continue
        ctrl = d.ctrl[acts.mujoco_index]
        np.testing.assert_allclose(acts.actuator_force(q, v, ctrl), d.actuator_force[acts.mujoco_index],
                                   rtol=0, atol=TOL)
        if len(acts) == mj.nu:   # every actuator kept: the generalized forces are all of MuJoCo's
            np.testing.assert_allclose(acts.forces(q, v, ctrl), ours_from_mujoco_v(m, d.qfrc_actuator),
                                       rtol=0, atol=TOL)
            checked += 1
    if mj.nu and name not in ("fish", "manipulator"):
        assert checked == 20


def test_what_is_kept_and_skipped():
    m, _ = load(os.path.join(SUITE, "quadruped.xml"))   # 12 actuators with filter dynamics, 8 on fixed tendons
    assert len(m.actuators) == 12 and m.actuators.filter_tau.tolist() == [0.1] * 12
    assert np.count_nonzero(m.actuators.q_index < 0) == 8 and len(m.actuators.terms) == 4 * (1 + 2 + 3)
    xml = """<mujoco><worldbody><body><joint name="j"/><geom size=".1" mass="1"/>
      <site name="s"/></body></worldbody><actuator><motor site="s" gear="0 0 0 0 0 1"/></actuator></mujoco>"""
    with pytest.warns(mb.mjcf.MJCFWarning, match=r"actuators not kept.*\(line 2\): transmission mjTRN_SITE"):
        assert mb.load_mjcf(xml).actuators is None
    m, mj = load(SMALL)
    assert m.actuators.names == ("m", "p", "v", "g")
    assert np.count_nonzero(m.stiffness) == 3 and m.springref.tolist() == pytest.approx([np.radians(0.3), 0.0, -0.1])
    assert m.actuators.dof_forcerange[1].tolist() == [-2.0, 2.0]
    assert m.actuators.keyframe_ctrl(m.keyframes["home"]).tolist() == [0.5, 0.1, -0.2, 0.4]


def test_ball_joint_spring_is_warned_and_skipped():
    xml = """<mujoco><worldbody><body><joint name="ball" type="ball" stiffness="2"/>
      <geom type="sphere" size=".1" mass="1" pos="0 0 -.3"/></body></worldbody></mujoco>"""
    with pytest.warns(mb.mjcf.MJCFWarning, match="'ball'"):
        m = mb.load_mjcf(xml)
    assert not np.any(m.stiffness)


def test_bad_ctrl_is_refused():
    m, _ = load(SMALL)
    with pytest.raises(ValueError, match="ctrl: expected 4 finite numbers"):
        mb.simulate(m, None, None, 0.01, ctrl=[1.0, 2.0])
    with pytest.raises(ValueError, match="ctrl: the model has no actuators"):
        mb.simulate(mb.models.planar(2), None, None, 0.01, ctrl=[1.0])


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit"])
def test_run_under_constant_ctrl_follows_mujoco(integrator):
    """1 s under the keyframe's ctrl from its state, beside MuJoCo's RK4 at the same 1 ms step."""
    m, mj = load(SMALL)
    traj = mb.simulate(m, None, None, 1.0, dt=1e-3, keyframe="home", limits="off", integrator=integrator)
    assert "actuators" in traj.passive and "springs" in traj.passive
    d = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, d, 0)
    for _ in range(1000):
        mujoco.mj_step(mj, d)
    err = np.max(np.abs(traj.q[-1] - d.qpos))
    assert err < (1e-9 if integrator == "rk4" else 2e-2), err


def test_compiled_and_python_loops_agree():
    m, _ = load(SMALL)
    a = mb.simulate(m, None, None, 0.3, keyframe="home", limits="off")
    with python_loop():
        b = mb.simulate(m, None, None, 0.3, keyframe="home", limits="off")
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12)


def test_ctrl_function_is_the_constant_run_when_constant_and_follows_time():
    m, _ = load(SMALL)
    const = mb.simulate(m, None, None, 0.2, ctrl=[0.5, 0.1, -0.2, 0.4], limits="off")
    fn = mb.simulate(m, None, None, 0.2, ctrl=lambda t, q, qd: [0.5, 0.1, -0.2, 0.4], limits="off")
    np.testing.assert_allclose(fn.q, const.q, rtol=0, atol=1e-13)
    assert fn.passive[-1] == "actuators (ctrl function)"
    # a servo target moving in time: the compiled constant runs bracket it
    ramp = mb.simulate(m, None, None, 0.2, ctrl=lambda t, q, qd: [0, 0.5 * t / 0.2, 0, 0], limits="off")
    lo = mb.simulate(m, None, None, 0.2, ctrl=[0, 0, 0, 0], limits="off")
    hi = mb.simulate(m, None, None, 0.2, ctrl=[0, 0.5, 0, 0], limits="off")
    assert lo.q[-1, 1] < ramp.q[-1, 1] < hi.q[-1, 1]
    with pytest.raises(ValueError, match="ctrl: expected 4 finite numbers"):
        mb.simulate(m, None, None, 0.01, ctrl=lambda t, q, qd: [1.0])
    with pytest.raises(ValueError, match="give controller=None"):
        mb.simulate(m, None, None, 0.01, ctrl=lambda t, q, qd: np.zeros(4), controller=lambda t, q, qd: np.zeros(3))


def test_cli_simulate_takes_ctrl_and_the_keyframes(tmp_path, capsys):
    from multibody import cli
    path = tmp_path / "small.xml"
    path.write_text(SMALL)
    for extra, want in ((["--ctrl", "0.5,0.1,-0.2,0.4"], [0.5, 0.1, -0.2, 0.4]),
                        (["--keyframe", "home"], [0.5, 0.1, -0.2, 0.4]), (["--ctrl", "0,0,0,0"], [0, 0, 0, 0])):
        out = tmp_path / "t.npz"
        assert cli.main(["simulate", str(path), "--t-final", "0.1", "--out", str(out), "--quiet"]
                        + (["--q0", "0.2,-0.1,0.05"] if "--keyframe" not in extra else []) + extra) == 0
        m, _ = load(SMALL)
        ref = mb.simulate(m, [0.2, -0.1, 0.05], None, 0.1, ctrl=want)
        got = np.load(out)["q"]
        np.testing.assert_allclose(got[-1], ref.q[-1], rtol=0, atol=1e-12)
    assert cli.main(["simulate", str(path), "--ctrl", "1,2", "--out", str(tmp_path / "x.npz")]) == 2
    assert "--ctrl" in capsys.readouterr().err


def test_actuators_that_do_not_fit_the_model_are_refused():
    import dataclasses
    m, _ = load(SMALL)
    with pytest.raises(ValueError, match="actuators: their joint indices"):
        dataclasses.replace(mb.models.planar(2), actuators=m.actuators)
    assert dataclasses.replace(m, actuators=None).actuators is None


def test_quadruped_stands_on_its_tendon_actuators_where_mujoco_does():
    """dm_control's quadruped holds its legs with 12 filtered actuators, 8 of them on fixed tendons
    (their bias −1000 l is a spring on each tendon's length); without them it lay on its belly
    (base 0.199 m).  Its feet's rest place depends on how they slid on landing (MuJoCo's soft
    friction lets them slide out to the frictionless balance: 0.28 N tangential on a 296 N normal at
    rest), so the comparison takes the floor's friction away: then the balance is unique, and ours
    (hard contact, MuJoCo's 5 ms step) must sit where MuJoCo's does — base height within 1 mm once
    MuJoCo's contact penetration is added back, joint angles within 2 mrad, Σ normal = m g to 0.1 %."""
    import dataclasses
    m, mj = load(os.path.join(SUITE, "quadruped.xml"))
    d = mujoco.MjData(mj)
    while d.time < 4.0 - 1e-9:
        mujoco.mj_step(mj, d)
    qm, _ = mb.mjcf.from_mujoco_state(m, d.qpos.copy(), d.qvel.copy())
    toes = [mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, f"toe_{s}") for s in
            ("front_left", "front_right", "back_right", "back_left")]
    depth = -np.mean([d.contact[i].dist for i in range(d.ncon) if d.contact[i].geom2 in toes])
    assert 1e-3 < depth < 3e-3          # MuJoCo's soft contact sinks the toes ≈ 1.7 mm
    friction = np.array(m.geoms.pair_friction)
    friction[:, 0] = 0.0
    frictionless = dataclasses.replace(m, geoms=dataclasses.replace(m.geoms, pair_friction=friction))
    traj = mb.simulate(frictionless, None, None, 4.0, contact="hard", dt=mj.opt.timestep)
    q = traj.q[-1]
    c = mb.contacts(frictionless, q)
    ours_depth = np.mean(c.depth[np.asarray(c.position)[:, 2] < 0.1])        # the four toes on the floor
    assert abs((q[2] + ours_depth) - (qm[2] + depth)) < 1e-3, (q[2], qm[2], depth, ours_depth)
    np.testing.assert_allclose(q[7:23], qm[7:23], rtol=0, atol=2e-3)
    weight = -m.gravity[2] * sum(mj.body_mass[1:])                      # the ball rests on the torso
    forces = traj.contact_forces[-1]
    assert abs(forces[:, 2][forces[:, 2] > 0].sum() - weight) < 1e-3 * weight


URDF_ARM = """<robot name="arm"><link name="base"/>
<link name="l1"><inertial><origin xyz="0 0 -0.25"/><mass value="1"/>
  <inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="l2"><inertial><origin xyz="0 0 -0.2"/><mass value="0.6"/>
  <inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
  <limit lower="-3" upper="3" effort="4" velocity="10"/></joint>
<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 -0.5"/><axis xyz="0 1 0"/>
  <limit lower="-3" upper="3" effort="1.5" velocity="10"/></joint></robot>"""


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit"])
def test_urdf_effort_limits_clip_the_controller_when_asked(integrator):
    """simulate(..., effort_limits=True) runs the PD's τ clipped to the URDF's <limit effort>: under
    RK4 the same run as a Python controller that clips its own τ (called back); the compiled loop and
    the Python one agree (semi_implicit too, where the PD's kd stays implicit, as MuJoCo's
    implicitfast keeps a clamped actuator's velocity gain); without the option the PD is not clipped
    (a different motion)."""
    m = mb.load_urdf(URDF_ARM)
    assert m.effort_limit.tolist() == [4.0, 1.5]
    kp, kd, ref = np.array([60.0, 40.0]), np.array([3.0, 2.0]), np.array([1.2, -0.9])
    pd = mb.PD(kp=kp, kd=kd, q_ref=ref)

    def clipped(t, q, qd):
        return np.clip(kp * (ref - q) - kd * qd, -m.effort_limit, m.effort_limit)

    kw = dict(dt=1e-3, integrator=integrator, limits="off")
    got = mb.simulate(m, np.zeros(2), np.zeros(2), 1.0, controller=pd, effort_limits=True, **kw)
    want = mb.simulate(m, np.zeros(2), np.zeros(2), 1.0, controller=clipped, **kw)
    with python_loop():
        slow = mb.simulate(m, np.zeros(2), np.zeros(2), 1.0, controller=pd, effort_limits=True, **kw)
    free = mb.simulate(m, np.zeros(2), np.zeros(2), 1.0, controller=pd, **kw)
    assert "effort limits" in got.passive
    if integrator == "rk4":
        np.testing.assert_allclose(got.q, want.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(slow.q, got.q, rtol=0, atol=1e-12)
    assert np.abs(free.q - got.q).max() > 1e-2


STIFF = """<mujoco><option timestep="0.001" integrator="implicitfast"/><worldbody><body>
  <joint name="wrist" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.01" mass="0.05"/></body></worldbody>
  <actuator><position name="servo" joint="wrist" kp="2000" kv="5"/></actuator></mujoco>"""


def test_a_stiff_position_servo_runs_implicit_or_is_refused_by_name():
    """kv/I ≈ 2.7e4 /s outruns RK4 at 1 ms: refused up front naming the actuator, its kv, the joint
    and a step that works (which then runs); semi_implicit — the default for this file, whose
    <option integrator="implicitfast"> it stands for — takes the kv implicit as MuJoCo's implicitfast
    does and follows MuJoCo's run of the same file to the reference."""
    m, mj = load(STIFF)
    with pytest.raises(ValueError, match=r"actuator 'servo': kv = 5 \(gear 1\) on 'wrist' .* rk4 step of "
                                         r"dt = 0.001 s.* Pass dt ≤ ([0-9.e-]+)") as e:
        mb.simulate(m, None, None, 0.2, ctrl=[0.5], dt=1e-3, integrator="rk4")
    works = float(str(e.value).split("dt ≤ ")[1].split(",")[0])
    # a batch checks its distinct starts together and names the run refused (the inertia does not
    # depend on this joint's angle: every start is refused, one named)
    Q0 = np.array([[0.1], [0.1], [-0.2]])
    with pytest.raises(ValueError, match=r"^run [0-2]: actuator 'servo': kv = 5 .* Pass dt ≤ " + re.escape(f"{works:.3g}")):
        mb.simulate_batch(m, Q0, np.zeros((3, 1)), 0.01, ctrl=[0.5], dt=1e-3, integrator="rk4")
    fine = mb.simulate(m, None, None, 0.05, ctrl=[0.5], dt=works, integrator="rk4")
    assert np.all(np.isfinite(fine.q)) and abs(fine.q[-1, 0] - 0.5) < 1e-3
    assert m.integrator == "semi_implicit"      # the file's implicitfast: simulate's default for it
    traj = mb.simulate(m, None, None, 0.3, ctrl=[0.5], dt=1e-3)
    assert traj.integrator == "semi_implicit"
    d = mujoco.MjData(mj)
    d.ctrl[:] = 0.5
    qs = []
    for _ in range(300):
        mujoco.mj_step(mj, d)
        qs.append(d.qpos[0])
    assert abs(traj.q[-1, 0] - 0.5) < 1e-4
    np.testing.assert_allclose(traj.q[1:, 0], qs, rtol=0, atol=2e-3)


def test_filtered_actuators_warn_by_name_when_ctrl_leaves_their_start():
    """The quadruped's filtered actuators are exact at ctrl = 0 (MuJoCo's start activation): no warning;
    a run whose ctrl is not 0 there, or a ctrl function, warns naming them and τ."""
    m, _ = load(os.path.join(SUITE, "quadruped.xml"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", mb.SimulationWarning)
        mb.simulate(m, None, None, 0.01, contact="off")
    with pytest.warns(mb.SimulationWarning, match=r"'yaw_front_left' \(τ = 0.1 s\).*steady state"):
        mb.simulate(m, None, None, 0.01, contact="off", ctrl=np.full(12, 0.2))
    with pytest.warns(mb.SimulationWarning, match=r"filter activation dynamics.*ctrl\(t\)"):
        mb.simulate(m, None, None, 0.01, contact="off", ctrl=lambda t, q, qd: np.zeros(12))


def test_a_batch_warns_once_about_filtered_actuators():
    """simulate_batch's warning on filtered actuators comes once per call: the batch used to build one
    System to check the gains and one per chunk, each warning (twice in one call, chunks + 1 with
    chunks). The batch's runs still equal simulate's (the quiet Systems run the same law)."""
    m, _ = load(os.path.join(SUITE, "quadruped.xml"))
    ctrl = np.full(12, 0.2)
    Q0, QD0 = np.tile(m.q_default, (4, 1)), np.zeros((4, m.nv))
    with ThreadPoolExecutor(2) as pool:
        for extra in ({}, {"chunks": 3}, {"chunks": 2, "executor": pool}):
            with pytest.warns(mb.SimulationWarning) as record:
                batch = mb.simulate_batch(m, Q0, QD0, 0.01, contact="off", ctrl=ctrl, **extra)
            assert len(record) == 1, (extra, [str(w.message) for w in record])
            assert "'yaw_front_left' (τ = 0.1 s)" in str(record[0].message)
    with pytest.warns(mb.SimulationWarning):
        one = mb.simulate(m, Q0[0], QD0[0], 0.01, contact="off", ctrl=ctrl)
    np.testing.assert_array_equal(batch.q[0], one.q)


def test_actuators_repr_is_one_line_with_counts_read_from_mujoco():
    """``repr(model.actuators)`` is one line (the dataclass's printed every array), and its counts are
    MuJoCo's own for the file: actuators, ctrl-limited, force-limited, filtered (dyntype filter) and
    on tendons (trntype tendon)."""
    for name in ("humanoid.xml", "quadruped.xml"):
        path = os.path.join(SUITE, name)
        model, mj = load(path)
        act = model.actuators
        text = repr(act)
        assert "\n" not in text and len(text) < 200
        n, tendons = mj.nu, int(np.sum(mj.actuator_trntype == mujoco.mjtTrn.mjTRN_TENDON))
        filtered = int(np.sum(mj.actuator_dyntype == mujoco.mjtDyn.mjDYN_FILTER))
        assert text.startswith(f"Actuators({n} actuators: {mj.actuator(0).name}, ")
        assert text.endswith(f"; ctrl-limited {int(mj.actuator_ctrllimited.sum())}, force-limited "
                             f"{int(mj.actuator_forcelimited.sum())}, filtered {filtered}, on tendons {tendons})")


def test_lengths_and_forces_sum_each_actuators_terms_in_order_as_the_term_loop_does():
    """Actuators.lengths/forces add the transmission terms in vectorised passes (each target's r-th
    term); the statement is the term-by-term loop in the terms' order (csrc/sim/passive.c's), so a
    tendon actuator of three terms and three actuators on one variable give the loop's bits, for one
    state and for a batch's rows."""
    acts = mb.model.actuators.Actuators(
        names=("motor", "servo", "general", "tendon"), q_index=[0, 2, 0, -1], v_index=[0, 2, 0, -1],
        gear=[2.0, 1.0, -1.5, 1.3], gain=[1.0, 5.0, 0.7, 4.0],
        bias=[[0, 0, 0], [0, -5.0, -0.5], [0.1, -0.3, 0.2], [0.2, -6.0, -0.4]],
        ctrlrange=[[-0.5, 0.5], [-1, 1], [0, 0], [-0.3, 0.8]], ctrllimited=[True, False, False, True],
        forcerange=[[0, 0], [-2.0, 2.5], [0, 0], [-1.5, 3.0]], forcelimited=[False, True, False, True],
        mujoco_index=[0, 1, 2, 3], dof_forcerange=[[-1.2, 1.2], [-np.inf, np.inf], [-np.inf, np.inf]],
        terms=[(0, 0, 0, 1.0), (1, 2, 2, 1.0), (2, 0, 0, 1.0), (3, 0, 0, 0.5), (3, 1, 1, -0.25), (3, 2, 2, 0.3)])
    rng = np.random.default_rng(7)
    Q, V = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    ctrl = np.array([0.9, 0.4, -0.6, 0.5])
    for q, v in zip(Q, V):
        L, Ld = np.zeros(4), np.zeros(4)
        for a, qi, vi, c in acts.terms:        # the statement: term by term, in order
            L[int(a)] += c * q[int(qi)]
            Ld[int(a)] += c * v[int(vi)]
        L, Ld = acts.gear * L, acts.gear * Ld
        got = acts.lengths(q, v)
        assert np.array_equal(got[0], L) and np.array_equal(got[1], Ld)
        force = acts.actuator_force(q, v, ctrl)
        tau = np.zeros(3)
        for a, _qi, vi, c in acts.terms:
            tau[int(vi)] += (acts.gear[int(a)] * c) * force[int(a)]
        tau = np.clip(tau, acts.dof_forcerange[:, 0], acts.dof_forcerange[:, 1])
        assert np.array_equal(acts.forces(q, v, ctrl, 3), tau)
    rows = acts.lengths(Q, V)                  # a batch's rows: each row's own numbers
    assert all(np.array_equal(rows[k][i], acts.lengths(Q[i], V[i])[k]) for i in range(5) for k in range(2))
