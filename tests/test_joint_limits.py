"""mb.simulate applies the model's position limits, damping, friction, gravity compensation and constraints;
runs that diverge say so loudly."""
import contextlib
import dataclasses
import os
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.simulation.events import EVENT_TIME_TOL
from multibody import cli
from multibody.errors import SimulationError, SimulationWarning
from multibody.simulation.constraints import JointCoupling
from multibody.simulation.limits import LIMIT_SOFTNESS, SOFT_LIMIT_TIME, impedance, soft_reference

from reference_steppers import python_loop


BOTTOM = -np.pi / 2


def pendulum(**kw):
    """planar(1): a link along x in the xy-plane, gravity −y: q = 0 is horizontal, it hangs at q = −π/2."""
    return dataclasses.replace(mb.models.planar(1), **kw)


def energy(m, q, qd):
    e = mb.energy(m, np.atleast_1d(q), np.atleast_1d(qd))
    return float(e.KE + e.PE)


def gravity_torque(m, q):
    return float(mb.rnea(m, [q], [0.0], [0.0])[0])


# ---- hard limits ------------------------------------------------------------------------------------
@pytest.mark.parametrize("e", [1.0, 0.5, 0.2])
def test_bounce_keeps_the_restitution_and_loses_the_predicted_energy(e):
    wall = BOTTOM - 0.3
    m = pendulum(q_lower=[wall])
    traj = mb.simulate(m, [0.0], [0.0], 1.5, limit_restitution=e)
    hit = traj.events[0]
    assert hit.name == "joint1 lower limit"
    assert abs(hit.q_before[0] - wall) < 1e-11 and hit.q_after[0] == hit.q_before[0]
    assert hit.qd_before[0] < -1.0
    assert hit.qd_after[0] == pytest.approx(-e * hit.qd_before[0], rel=1e-12)
    ke = 0.5 * float(mb.crba(m, hit.q_before)[0, 0]) * hit.qd_before[0] ** 2
    lost = energy(m, hit.q_before, hit.qd_before) - energy(m, hit.q_after, hit.qd_after)
    assert lost == pytest.approx((1 - e ** 2) * ke, rel=1e-9, abs=1e-12)
    # between impacts the energy is kept (RK4 at 1 ms), and the joint never passes its stop
    E = traj.total_energy
    i = int(np.searchsorted(traj.t, hit.t, side="right"))
    j = int(np.searchsorted(traj.t, traj.events[1].t)) if len(traj.events) > 1 else len(traj.t)
    assert abs(E[i:j] - E[i]).max() < 1e-6 and abs(E[:i - 1] - E[0]).max() < 1e-6
    assert traj.q.min() >= wall - 1e-11


def test_plastic_stop_with_gravity_away_from_it_swings_back():
    m = pendulum(q_lower=[BOTTOM - 0.3])
    traj = mb.simulate(m, [0.0], [0.0], 2.5)             # default restitution 0
    assert [ev.name for ev in traj.events] == ["joint1 lower limit"]
    assert traj.events[0].qd_after[0] == 0.0
    after = traj.t > traj.events[0].t
    assert traj.q[after].max() == pytest.approx(BOTTOM + 0.3, abs=1e-6)   # swings to the stop's mirror


def test_pressed_into_its_stop_a_joint_rests_and_is_released_when_the_force_turns():
    m = pendulum(q_lower=[0.3])                         # the stop is above the bottom: gravity presses on it
    G = gravity_torque(m, 0.3)                          # τ holding the pendulum at the stop
    rate = 10.0                                         # a torque ramp from t = 0.5 lifts it off at 0.5 + G / rate
    traj = mb.simulate(m, [0.4], [0.0], 1.5, controller=lambda t, q, qd: np.array([rate * max(0.0, t - 0.5)]))
    names = [ev.name for ev in traj.events]
    assert names[:2] == ["joint1 lower limit", "joint1 lower limit release"]
    t_hit, t_release = traj.events[0].t, traj.events[1].t
    resting = (traj.t > t_hit) & (traj.t < t_release)
    assert resting.sum() > 100
    assert np.all(traj.q[resting, 0] == 0.3) and np.all(traj.qd[resting, 0] == 0.0)
    assert t_release == pytest.approx(0.5 + G / rate, abs=1e-9)
    assert traj.q[-1, 0] > 0.3                          # lifted off


def test_panda_without_controller_keeps_its_fingers_within_their_limits():
    from test_urdf_robots import robots_dir
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mb.load_urdf(os.path.join(robots_dir(), "panda_description/urdf/panda.urdf"))
    q0 = 0.5 * (m.q_lower + m.q_upper)
    q0[-2:] = 0.02
    traj = mb.simulate(m, q0, np.zeros(m.nv), 1.0)
    fingers = traj.q[:, -2:]
    assert fingers.min() >= -1e-12 and fingers.max() <= 0.04 + 1e-12
    assert np.all(traj.q >= m.q_lower - 1e-12) and np.all(traj.q <= m.q_upper + 1e-12)
    assert any("finger" in ev.name for ev in traj.events)
    assert "limits hard" in repr(traj) and "damping" in repr(traj)
    free = mb.simulate(m, q0, np.zeros(m.nv), 1.0, limits="off")
    assert free.q[:, -2:].min() < -0.1                  # what the limits prevent
    assert free.passive == ("damping",)


def test_a_plastic_stop_left_by_gravity_does_not_hold_an_explicit_euler_run():
    # The Panda's joint 7 meets its lower stop plastically (q̇⁺ = 0) with gravity pulling it away:
    # an explicit Euler step after the reset leaves q where the impact put it, so a crossing located a
    # rounding error past the stop read as "fires forever" (g = −4.4e-16 at t = 1.067) before the reset
    # placed the joint on the stop exactly.
    from test_urdf_robots import robots_dir
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mb.load_urdf(os.path.join(robots_dir(), "panda_description/urdf/panda.urdf"))
    q0 = 0.5 * (m.q_lower + m.q_upper)
    q0[-2:] = 0.02
    q0 += np.r_[0.3 * np.ones(7), 0.005, -0.005]
    traj = mb.simulate(m, q0, np.zeros(m.nv), 1.2, dt=1e-3, integrator="euler")
    hits = [ev for ev in traj.events if ev.name == "panda_joint7 lower limit"]
    assert hits and traj.t[-1] == pytest.approx(1.2)
    # the sample before an impact lies where the crossing was located: up to |q̇| EVENT_TIME_TOL past
    slack = 2.0 * EVENT_TIME_TOL * np.abs(traj.qd).max()   # (joint 6 meets its stop at 13.9 rad/s)
    assert np.all(traj.q >= m.q_lower - slack) and np.all(traj.q <= m.q_upper + slack)
    after = np.array([ev.q_after for ev in traj.events])   # every reset puts the joint on or inside its stop
    assert np.all(after >= m.q_lower - 1e-15) and np.all(after <= m.q_upper + 1e-15)


def test_a_start_outside_the_limits_starts_on_them_with_a_warning():
    """A start beyond a hard stop is accepted as MuJoCo accepts it: the joint starts on the stop it lies
    beyond (the stop active from t = 0), with one warning naming the joint, its value and its range."""
    m = pendulum(q_lower=[-0.3], q_upper=[0.5])
    with pytest.warns(SimulationWarning, match=r"joint 'joint1' starts at 1.0, outside its range \[-0.3, 0.5\]") as w:
        traj = mb.simulate(m, [1.0], [0.0], 0.3)
    assert len([x for x in w if issubclass(x.category, SimulationWarning)]) == 1
    assert traj.q[0, 0] == 0.5 and traj.status == "finished"
    assert np.all(traj.q[:, 0] <= 0.5) and np.all(traj.q[:, 0] >= -0.3)
    # the same as a run started on the stop (the projection is the whole difference)
    on = mb.simulate(m, [0.5], [0.0], 0.3)
    np.testing.assert_array_equal(traj.q, on.q)
    np.testing.assert_array_equal(traj.qd, on.qd)
    # moving further out at the start: the stop's impact at t = 0 (plastic: the joint's rate into it is gone)
    with pytest.warns(SimulationWarning, match="starts at 1.0"):
        out = mb.simulate(m, [1.0], [2.0], 0.3)
    assert out.q[0, 0] == 0.5 and out.qd[0, 0] <= 0.0 and np.all(out.q[:, 0] <= 0.5)
    assert mb.simulate(m, [1.0], [0.0], 0.1, limits="off").q[0, 0] == 1.0   # limits="off": no stop, no warning
    with pytest.raises(ValueError, match="limits"):
        mb.simulate(m, [0.0], [0.0], 0.1, limits="rigid")
    with pytest.raises(ValueError, match="limit_restitution"):
        mb.simulate(m, [0.0], [0.0], 0.1, limit_restitution=1.5)
    Q0 = np.array([[0.0], [0.5 + 1e-13], [0.7], [0.1], [-0.9]])   # row 1 on its stop to rounding: inside
    with pytest.warns(SimulationWarning, match=r"starts at 0.7 \(run 2\), outside its range") as w:
        batch = mb.simulate_batch(m, Q0, np.zeros((5, 1)), 0.1)
    assert len([x for x in w if issubclass(x.category, SimulationWarning)]) == 1   # once per joint
    assert batch.q[2, 0, 0] == 0.5 and batch.q[4, 0, 0] == -0.3 and batch.q[1, 0, 0] == 0.5 + 1e-13
    assert batch.status == ["finished"] * 5
    assert np.all(batch.q[..., 0] <= 0.5 + 1e-13) and np.all(batch.q[..., 0] >= -0.3)
    for i in (2, 4):   # a run starting on its stop (row 4 rests on it) is its simulate's, bit for bit
        with pytest.warns(SimulationWarning):
            one = mb.simulate(m, Q0[i], [0.0], 0.1)
        np.testing.assert_array_equal(batch[i].t, one.t)
        np.testing.assert_array_equal(batch[i].q, one.q)
        np.testing.assert_array_equal(batch[i].qd, one.qd)


def test_hopper_starting_outside_its_knee_range_runs_as_mujoco_qualitatively():
    """dm_control's hopper.xml: qpos0's knee (0) lies below its range (5…150°).  MuJoCo accepts it and
    its soft limit pushes the knee in within ~0.05 s; here the knee starts on its stop (warned), and
    both end the second inside the range, finite."""
    import dm_control
    import mujoco

    path = os.path.join(os.path.dirname(dm_control.__file__), "suite", "hopper.xml")
    mj = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(mj)
    knee = mj.joint("knee")
    lo, hi = mj.jnt_range[knee.id]
    for _ in range(round(1.0 / mj.opt.timestep)):
        mujoco.mj_step(mj, d)
    mj_knee = d.qpos[mj.jnt_qposadr[knee.id]]
    assert np.all(np.isfinite(d.qpos)) and lo - 1e-3 <= mj_knee <= hi + 1e-3   # (soft: a little past)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.errors.MJCFWarning)
        hopper = mb.load_mjcf(path)
    qi = int(hopper.q_start[hopper.joint_names.index("knee")])
    assert hopper.q_default[qi] == 0.0 and hopper.q_lower[qi] == pytest.approx(lo)
    with pytest.warns(SimulationWarning, match=r"joint 'knee' starts at 0.0, outside its range \[0.087"):
        traj = mb.simulate(hopper, None, None, 1.0, limits="hard")
    assert traj.status == "finished" and np.all(np.isfinite(traj.q))
    assert traj.q[0, qi] == hopper.q_lower[qi]
    slack = 2.0 * EVENT_TIME_TOL * np.abs(traj.qd).max()   # a located impact: up to |q̇| EVENT_TIME_TOL past
    assert np.all(traj.q[:, qi] >= hopper.q_lower[qi] - slack) and np.all(traj.q[:, qi] <= hopper.q_upper[qi] + slack)
    assert abs(traj.q[-1, qi] - mj_knee) < 0.05    # both fold the knee onto its upper limit within the second
    # the soft stop pushes it in, as MuJoCo's (under rk4: the file's own semi_implicit ends 1.3e-2 past at 1 s)
    soft = mb.simulate(hopper, None, None, 1.0, limits="soft", integrator="rk4")
    assert soft.status == "finished" and np.all(np.isfinite(soft.q)) and soft.q[0, qi] == 0.0
    inside = np.flatnonzero(soft.q[:, qi] >= lo)
    assert len(inside) and soft.t[inside[0]] < 0.2 and lo - 1e-2 <= soft.q[-1, qi] <= hi + 1e-2


# ---- soft limits ---------------------------------------------------------------------------------
def test_soft_stop_holds_its_load_as_mujocos_does():
    """MuJoCo's soft limit holds a load but for its (1 − d) share: at rest the stop's force f = (a_ref − a₀)/(A + R)
    equals the load L (a₀ = −L/H), so d² K p = (1 − d) L / H with d the impedance of the depth p (solimp) and
    K from solref — 20 times shallower than a spring of the same time constant (p = L T² / H, the law before)."""
    m = pendulum(q_lower=[0.3])
    traj = mb.simulate(m, [1.0], [0.0], 3.0, limits="soft")
    assert traj.passive == ("limits soft",) and not traj.events
    H = float(mb.crba(m, [0.3])[0, 0])
    q = traj.q[-1, 0]
    p, load = 0.3 - q, gravity_torque(m, q)   # (the torque holding it: the stop's)
    d = impedance(LIMIT_SOFTNESS[2:7], p)
    K = soft_reference(LIMIT_SOFTNESS, 1e-3)[1]
    assert 0.9 < d < 0.95 and p == pytest.approx((1 - d) * load / (H * K * d * d), rel=1e-6)
    assert p < 0.1 * load * SOFT_LIMIT_TIME ** 2 / H
    assert abs(traj.qd[-1, 0]) < 1e-6
    assert "nb" in dir(m)          # (the stops' rows kept on the model under a name: dir() sorts its names)


@pytest.mark.parametrize("solimp, solref", [("0.9 0.95 0.001 0.5 2", "0.03 0.8"), ("0 0.99 0.01 0.5 2", "0.03 0.8"),
                                            ("0.5 0.8 0.05 0.3 3", "0.03 0.8"), ("0.9 0.9 0.01 0.5 1", "0.03 0.8"),
                                            ("0.9 0.95 0.001 0.5 2", "-2000 -30")])   # (direct: −k, −b)
def test_soft_limits_follow_mujocos_to_round_off(solimp, solref):
    """limits="soft" is MuJoCo's soft constraint on the limits (solreflimit, solimplimit, margin read from the
    file, Â its dof_invweight0): a double pendulum swinging into both its limits, which then hold it against
    gravity together (their rows coupled through J M⁻¹ Jᵀ), under MuJoCo's Euler and ours (semi_implicit) at its
    2 ms, in each of the three places the stops are solved — alone (the engine's LCP: contact off), as rows of
    the compliant scene's implicit solve (the file's floor, which the second link could meet but does not), as
    rows of hard contact's LCP: the same q over 2 s to 1e-10 rad (measured 2e-12), hard contact's to 1e-7 (its
    LCP's regularisation of 1e-8: measured 7e-9)."""
    import mujoco
    xml = f"""<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 1">
      <joint type="hinge" axis="0 1 0" range="-30 30" solimplimit="{solimp}" solreflimit="{solref}"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1" contype="0" conaffinity="0"/>
      <body pos="0.5 0 0"><joint type="hinge" axis="0 1 0" range="-10 10" margin="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/>
      </body></body></worldbody></mujoco>"""
    mj = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    want = []
    for _ in range(1000):
        mujoco.mj_step(mj, d)
        want.append(d.qpos.copy())
    model = mb.load_mjcf(xml)
    for contact, tol in (("off", 1e-10), (None, 1e-10), ("hard", 1e-7)):
        tr = mb.simulate(model, None, None, 2.0, limits="soft", contact=contact)
        assert tr.integrator == "semi_implicit" and tr.contact == {"off": None, None: "compliant"}.get(contact, contact)
        assert np.max(np.abs(tr.q[-1] - np.radians([30, 10]))) < 0.02                       # resting on both
        assert np.abs(tr.q[1:] - np.array(want)).max() < tol, contact


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit"])
def test_a_soft_stop_in_the_middle_of_a_chain_keeps_its_time_constant(integrator):
    """MuJoCo's soft limit moves its joint as r̈ = d a_ref + (1 − d) a₀, R scaled by the joint's effective
    inverse inertia Â = (H⁻¹)_jj (at the default configuration, as MuJoCo's dof_invweight0): with the links on
    both sides free (no gravity, a₀ = 0) the penetration is that of p̈ = −d B ṗ − d² K p whatever the chain
    (d = dmin = 0.9 this shallow: the stop's frequency 1/T, its damping ratio 0.9).  Scaled by H_jj instead the
    middle joint of three met a stop 27× too stiff, and explicit steps on longer chains blew up (a six-link
    chain under euler at 1 ms: 1e300 rad/s)."""
    m = dataclasses.replace(mb.models.planar(3), gravity=[0.0, 0.0, 0.0], q_lower=[-np.inf, 0.0, -np.inf])
    H = mb.crba(m, np.zeros(3))
    assert H[1, 1] * np.linalg.inv(H)[1, 1] > 20.0         # the chain gives way: H_jj overstates it 27×
    v, T = -1e-4, SOFT_LIMIT_TIME                          # slow: the velocity products are ~1e-8 of it
    traj = mb.simulate(m, [0.0, 0.0, 0.0], [0.0, v, 0.0], 2 * T, dt=1e-5, limits="soft", integrator=integrator)
    B, K = soft_reference(LIMIT_SOFTNESS, 1e-5)[:2]
    roots = np.roots([1.0, 0.9 * B, 0.81 * K])             # p̈ + d B ṗ + d² K p = 0, p(0) = 0, ṗ(0) = −v
    expect = np.real(-v * (np.exp(roots[0] * traj.t) - np.exp(roots[1] * traj.t)) / (roots[0] - roots[1]))
    tol = 1e-3 if integrator == "rk4" else 2e-3             # semi-implicit Euler: first order in dt / T
    assert np.max(np.abs(-traj.q[:, 1] - expect)) < tol * np.max(expect)


def test_soft_stops_keep_a_six_link_chain_finite_under_explicit_steps():
    import dataclasses
    m = dataclasses.replace(mb.models.planar(6), **SIX_LINKS)
    for integrator in ("euler", "semi_implicit"):
        traj = mb.simulate(m, SIX_Q0, SIX_QD0, 0.3, integrator=integrator, dt=0.002, limits="soft",
                           on_divergence="raise")
        assert traj.status == "finished" and np.abs(traj.qd).max() < 20.0
        # 0.03–0.05 rad deep where the chain presses hardest, alike under rk4 at 1 ms (the law's, not the step's)
        assert np.max(m.q_lower - traj.q) < 0.06 and np.max(traj.q - m.q_upper) < 0.06


# ---- damping, friction ------------------------------------------------------------------------------
def _integral(t, f):
    return float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(t)))


def test_damping_removes_energy_at_the_rate_c_qd_squared():
    c = 0.05
    m = pendulum(damping=[c])
    traj = mb.simulate(m, [1.0], [0.0], 3.0, dt=1e-3)
    E = traj.total_energy
    assert traj.passive == ("damping",) and "damping" in repr(traj)
    lost = E[0] - E[-1]
    assert lost > 0.1
    assert lost == pytest.approx(_integral(traj.t, c * traj.qd[:, 0] ** 2), rel=1e-5)


def test_small_angle_damped_energy_decays_like_exp_minus_c_t_over_inertia():
    c = 0.02
    m = pendulum(damping=[c])
    I = float(mb.crba(m, [0.0])[0, 0])
    traj = mb.simulate(m, [BOTTOM + 0.01], [0.0], 4.0, dt=1e-3)
    E = traj.total_energy - energy(m, BOTTOM, 0.0)
    T = 2 * np.pi * np.sqrt(I / (gravity_torque(m, BOTTOM + 1e-6) / 1e-6))
    # average over whole periods: E ∝ exp(−c t / I) for ζ ≪ 1
    k = int(round(T / 1e-3))
    mean0, mean1 = E[:k].mean(), E[-k:].mean()
    span = traj.t[-k:].mean() - traj.t[:k].mean()
    assert np.log(mean0 / mean1) / span == pytest.approx(c / I, rel=2e-3)


def test_smoothed_coulomb_friction_removes_energy_at_the_rate_f_qd_tanh():
    f, vs = 0.1, 0.05
    m = pendulum(friction=[f])
    traj = mb.simulate(m, [1.0], [0.0], 2.0, friction_velocity=vs)
    assert traj.passive == ("friction (tanh, v_s = 0.05)",)
    E = traj.total_energy
    qd = traj.qd[:, 0]
    assert E[0] - E[-1] == pytest.approx(_integral(traj.t, f * qd * np.tanh(qd / vs)), rel=1e-5)


LIGHT_FINGER = """<robot name="light_finger">
  <link name="base"/>
  <link name="arm"><inertial><mass value="2"/><origin xyz="0.2 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="finger"><inertial><mass value="0.05"/><origin xyz="0.02 0 0"/>
    <inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
  <joint name="knuckle" type="revolute"><parent link="arm"/><child link="finger"/><origin xyz="0.4 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="5"/>
    <dynamics damping="{damping}" friction="{friction}"/></joint>
</robot>"""


def light_finger(tmp_path, damping=0.0, friction=0.1):
    """A 2 kg arm carrying a 50 g finger (3e-5 kg·m² about its knuckle), like the grippers of real
    robot files (z1, tiago, talos): friction 0.1 smoothed at v_s = 0.01 decays its velocity at
    f (M⁻¹)_jj / v_s ≈ 3e5 /s, far beyond what a 1 ms explicit step follows."""
    path = tmp_path / "finger.urdf"
    path.write_text(LIGHT_FINGER.format(damping=damping, friction=friction))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mb.load_urdf(str(path))


@pytest.mark.parametrize("integrator", ["rk4", "euler", "semi_implicit"])
def test_friction_on_a_light_joint_keeps_a_fixed_step_stable(tmp_path, integrator):
    """The step raises that joint's v_s until its damper f / v_s takes half the stable decay per step
    (limits.step_friction_velocity): friction and gravity then only take energy out of an RK4 run, and
    the falling finger's velocity does not chatter (at v_s = 0.01 it flipped sign 85 times in 0.5 s and
    the RK4 run's energy rose within steps); a batch applies the same v_s as its single runs."""
    from multibody.simulation.limits import step_friction_velocity
    m = light_finger(tmp_path)
    vs = step_friction_velocity(m, None, m.friction, 0.01, 1e-3, integrator)
    mobility = np.diag(mb.minv(m, m.neutral()))
    assert vs[0] == 0.01 and vs[1] == pytest.approx(0.1 * mobility[1] * 1e-3 / 0.5) and vs[1] > 1.0
    traj = mb.simulate(m, [0.0, 0.0], [0.0, 0.0], 0.5, integrator=integrator)
    assert traj.status == "finished"
    assert traj.passive[-1] == f"friction (tanh, v_s = 0.01; for a stable step knuckle {vs[1]:.3g})"
    if integrator == "rk4":   # (explicit Euler steps gain energy on their own)
        E = traj.total_energy
        assert np.diff(E).max() <= 1e-9 * abs(E).max()
    assert np.count_nonzero(np.diff(np.sign(traj.qd[5:, 1]))) <= 2
    batch = mb.simulate_batch(m, np.array([[0.0, 0.0], [0.3, -0.2]]), np.zeros((2, 2)), 0.5, integrator=integrator)
    assert np.array_equal(batch[0].q, traj.q)
    assert batch.passive == batch[1].passive == traj.passive and traj.passive[-1] in repr(batch)   # said there too


def test_damping_a_fixed_step_cannot_follow_is_refused_naming_the_joint_and_a_step_that_works(tmp_path):
    """Damping is the model's: it is not smoothed away.  Damping 1 on the finger (c (M⁻¹)_jj dt ≈ 33
    at 1 ms; RK4 is stable below 2.785) is refused before the run with a dt that works, and the run
    at that dt and with an implicit integrator loses energy at exactly the damping's rate."""
    m = light_finger(tmp_path, damping=1.0, friction=0.0)
    with pytest.raises(ValueError, match=r"damping: 'knuckle' has damping 1 .* dt ≤ (\S+), integrator='semi_impl") as err:
        mb.simulate(m, [0.0, 0.0], [0.0, 0.0], 0.1)
    dt = float(err.value.args[0].split("dt ≤ ")[1].split(",")[0])
    for kw in (dict(dt=dt), dict(integrator="bdf", rtol=1e-9, atol=1e-12)):
        traj = mb.simulate(m, [0.0, 0.0], [0.0, 0.0], 0.1, **kw)
        E, qd = traj.total_energy, traj.qd[:, 1]
        assert traj.status == "finished" and np.all(np.isfinite(traj.q))
        assert E[0] - E[-1] == pytest.approx(_integral(traj.t, qd * qd), rel=1e-2)
    with pytest.raises(ValueError, match="damping: 'knuckle'"):
        mb.simulate_batch(m, np.zeros((2, 2)), np.zeros((2, 2)), 0.1)


def test_semi_implicit_takes_the_damping_implicitly_so_any_damping_is_stable(tmp_path):
    """semi_implicit solves (M + dt·D) q̈ = τ − C − D q̇ (MuJoCo's Euler): a damped rotor's velocity
    falls by exactly H / (H + dt·c) a step, in the compiled loop and the Python reference loop alike;
    the finger damped 1 on 2.8e-5 kg·m² (c (M⁻¹)_jj dt = 36, refused under rk4) runs, its velocity
    relaxing without a sign flip, and a batch equals its single runs bit for bit."""
    rotor = dataclasses.replace(mb.models.planar(1), damping=[0.5], gravity=np.zeros(3))
    H = float(mb.crba(rotor, [0.0])[0, 0])
    for compiled in (True, False):
        with contextlib.nullcontext() if compiled else python_loop():
            traj = mb.simulate(rotor, [0.0], [1.0], 0.2, integrator="semi_implicit")
        np.testing.assert_allclose(traj.qd[:, 0], (H / (H + 1e-3 * 0.5)) ** np.arange(len(traj.t)), rtol=1e-13)
    m = light_finger(tmp_path, damping=1.0, friction=0.0)
    traj = mb.simulate(m, [0.0, 0.0], [0.0, 3.0], 0.3, integrator="semi_implicit")
    assert traj.status == "finished" and np.all(np.isfinite(traj.qd))
    finger = traj.qd[:, 1]
    assert finger[1] < 0.3 * finger[0]          # 3 rad/s relaxes within a step or two
    assert np.count_nonzero(np.diff(np.sign(finger[1:]))) <= 2
    batch = mb.simulate_batch(m, np.array([[0.0, 0.0], [0.2, 0.1]]), np.array([[0.0, 3.0], [0.0, 0.0]]), 0.3,
                              integrator="semi_implicit")
    assert np.array_equal(batch[0].q, traj.q) and np.array_equal(batch[0].qd, traj.qd)


def test_equal_lower_and_upper_limits_are_not_enforced_as_mujoco_reads_them(tmp_path, capsys):
    """URDF's lower and upper default to 0: a file giving only effort and velocity (a wheel, a knee,
    example-robot-data's double pendulum) means no position limit.  The loader keeps 0, 0 on the Model
    with a URDFWarning; simulate, repr and `multibody info` treat the joint as unlimited (the knee
    used to swing through both 'stops' unnoticed: its guards start at exactly 0 and never cross)."""
    text = LIGHT_FINGER.format(damping=0.0, friction=0.0).replace(
        '<limit lower="-3" upper="3" effort="1" velocity="5"/>', '<limit effort="1" velocity="5"/>')
    path = tmp_path / "knee.urdf"
    path.write_text(text)
    with pytest.warns(mb.URDFWarning, match="'knuckle' has equal lower and upper limits"):
        m = mb.load_urdf(str(path))
    assert m.q_lower[1] == m.q_upper[1] == 0.0                     # as written
    assert repr(m) == "Model('light_finger', nb=2, nq=2, nv=2, limits 1)"
    traj = mb.simulate(m, [0.0, 0.0], [0.0, 0.0], 0.5)
    assert not [ev for ev in traj.events if ev.name.startswith("knuckle")]
    assert traj.q[:, 1].min() < -0.1 and traj.q[-1, 1] != 0.0
    assert cli.main(["info", str(path)]) == 0
    table = [line.strip() for line in capsys.readouterr().out.splitlines()
             if line.strip().startswith(("shoulder", "knuckle"))]
    assert table[0].split()[:2] == ["shoulder", "[-3,"] and table[1].split()[:2] == ["knuckle", "—"]


# ---- model fields another loader fills: gravcomp, constraints -----------------------------------
def test_gravity_compensation_cancels_the_weight_share():
    m = mb.models.double_pendulum()
    object.__setattr__(m, "gravcomp", np.ones(m.nb))
    still = mb.simulate(m, [0.7, -0.4], [0.0, 0.0], 0.5)
    assert still.passive == ("gravcomp",)
    assert np.abs(still.q - still.q[0]).max() < 1e-12
    half = mb.models.double_pendulum()
    object.__setattr__(half, "gravcomp", np.full(half.nb, 0.5))
    weak = dataclasses.replace(mb.models.double_pendulum(), gravity=0.5 * half.gravity)
    a = mb.simulate(half, [0.7, -0.4], [0.0, 0.0], 0.5)
    b = mb.simulate(weak, [0.7, -0.4], [0.0, 0.0], 0.5)
    assert np.abs(a.q - b.q).max() < 1e-10


def test_model_constraints_are_solved_with_the_users():
    m = mb.models.double_pendulum()
    object.__setattr__(m, "constraints", (JointCoupling("th2", "th1", ratio=-1.0),))
    traj = mb.simulate(m, [0.5, -0.5], [0.0, 0.0], 0.5)
    assert np.abs(traj.q[:, 0] + traj.q[:, 1]).max() < 1e-6
    with pytest.raises(TypeError, match="model carries constraints"):
        mb.simulate(m, [0.5, -0.5], [0.0, 0.0], 0.1, constraints=object())


def test_a_constrained_model_resting_on_a_stop_steps_in_c_as_the_reference_loop(monkeypatch):
    """A coupled chain (joint2 = −joint1 / 2) falls onto joint1's lower stop, rests there and is lifted
    off by a torque table: while it rests, each step is one compiled step whose q̈ solves the stop and
    the coupling together (System.resting_accelerations, the loop's dynamics callback) — the run of
    the tests' Python reference loop (reference_steppers.python_loop) bit for bit."""
    from multibody.simulation import rollout
    from multibody.simulation.system import System
    m = dataclasses.replace(mb.models.planar(2), q_lower=np.array([0.3, -np.inf]))
    coupling = JointCoupling("joint2", "joint1", ratio=-0.5)
    table = mb.TorqueTable(np.array([0.0, 0.5, 0.8]), [[0.0, 0.0], [0.0, 0.0], [60.0, 0.0]])
    kw = dict(controller=table, constraints=coupling)
    resting_steps = []
    run_compiled = rollout.run_compiled

    def counted(model, plan, *args, **kwargs):
        if kwargs.get("one_step") and getattr(plan.callbacks.dynamics, "__func__", None) is System.resting_accelerations:
            resting_steps.append(kwargs["t0"])
        return run_compiled(model, plan, *args, **kwargs)
    monkeypatch.setattr(rollout, "run_compiled", counted)
    a = mb.simulate(m, [0.4, -0.2], [0.0, 0.0], 1.2, **kw)
    with python_loop():
        b = mb.simulate(m, [0.4, -0.2], [0.0, 0.0], 1.2, **kw)
    assert [ev.name for ev in a.events] == ["joint1 lower limit", "joint1 lower limit release"]
    assert [(ev.name, ev.t) for ev in a.events] == [(ev.name, ev.t) for ev in b.events]
    for k in ("t", "q", "qd", "qdd", "tau"):
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=0, atol=1e-12)
    resting = (a.t > a.events[0].t) & (a.t < a.events[1].t)
    assert resting.sum() > 100 and np.all(a.q[resting, 0] == 0.3)
    assert np.abs(a.q[:, 1] + 0.5 * a.q[:, 0]).max() < 1e-6                # the coupling holds throughout
    assert len(resting_steps) > 100 and all(a.events[0].t <= t < a.events[1].t + 1e-3 for t in resting_steps)


# ---- runs that fail ---------------------------------------------------------------------------------
def test_a_diverged_run_says_so_once_and_raises_when_asked():
    m = mb.models.double_pendulum()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        traj = mb.simulate(m, [2.0, -1.0], [0.0, 0.0], 60.0, dt=0.3, integrator="euler")
    assert traj.status == "diverged" and "non-finite" in traj.message
    assert len([x for x in w if issubclass(x.category, SimulationWarning)]) == 1
    assert np.all(np.isfinite(traj.q))
    with pytest.raises(SimulationError, match="non-finite") as err:
        mb.simulate(m, [2.0, -1.0], [0.0, 0.0], 60.0, dt=0.3, integrator="euler", on_divergence="raise")
    assert err.value.trajectory.status == "diverged"
    with pytest.raises(ValueError, match="on_divergence"):
        mb.simulate(m, [0.0, 0.0], [0.0, 0.0], 0.1, on_divergence="ignore")


@pytest.mark.parametrize("extra", [["--t-final", "60", "--quiet"], []])
def test_cli_simulate_of_a_diverging_run_exits_non_zero(tmp_path, capsys, extra):
    """Also as the issue typed it: the default 5 s, with the progress bar (its pieces run in C)."""
    out = tmp_path / "run.npz"
    code = cli.main(["simulate", "double_pendulum", "--dt", "0.3", "--integrator", "euler", *extra,
                     "--out", str(out)])
    err = capsys.readouterr().err
    assert code != 0
    assert err.count("non-finite") == 1 and "smaller --dt" in err
    assert out.exists()


def test_a_record_beyond_the_available_memory_is_refused_before_the_run():
    m = mb.models.double_pendulum()
    with pytest.raises(MemoryError, match="record_every"):
        mb.simulate(m, [0.1, 0.0], [0.0, 0.0], 1e12)


def test_only_a_record_of_more_than_64_mib_asks_for_the_available_memory(monkeypatch):
    """Short runs (the many calls of an MPC loop) skip reading /proc/meminfo; a large one reads it."""
    from multibody.simulation import core
    asked = []
    monkeypatch.setattr(core, "_available_memory", lambda: asked.append(1) or 2**40)
    m = mb.models.double_pendulum()
    mb.simulate(m, [0.1, 0.0], [0.0, 0.0], 1.0)
    assert asked == []
    core.check_record_size(m, core.StateSpace(m), 1e5, 1e-3, 1, "rk4")   # 10⁸ samples: ~10 GiB
    assert asked == [1]


def test_a_batch_applies_the_limits_like_single_runs():
    m = pendulum(q_lower=[BOTTOM - 0.3], friction=[0.05])
    Q0 = np.array([[0.0], [-0.5]])
    batch = mb.simulate_batch(m, Q0, np.zeros((2, 1)), 1.0, limit_restitution=0.5)
    for i in range(2):
        one = mb.simulate(m, Q0[i], [0.0], 1.0, limit_restitution=0.5)
        assert np.array_equal(batch[i].q, one.q)
        assert one.q.min() >= BOTTOM - 0.3 - 1e-11
    free = mb.simulate_batch(m, Q0, np.zeros((2, 1)), 1.0, limits="off")
    assert free.q.min() < BOTTOM - 0.4


def test_adaptive_runs_rest_and_release_the_same_way():
    m = pendulum(q_lower=[0.3])
    G = gravity_torque(m, 0.3)
    traj = mb.simulate(m, [0.4], [0.0], 1.5, integrator="rk45",
                       controller=lambda t, q, qd: np.array([10.0 * max(0.0, t - 0.5)]))
    assert [ev.name for ev in traj.events] == ["joint1 lower limit", "joint1 lower limit release"]
    assert traj.events[1].t == pytest.approx(0.5 + G / 10.0, abs=1e-8)


def test_a_batch_beyond_the_available_memory_is_refused_before_it_runs():
    m = mb.models.double_pendulum()
    with pytest.raises(MemoryError, match="record_every"):
        mb.simulate_batch(m, np.zeros((1000, 2)), np.zeros((1000, 2)), 1e9)


def test_cli_simulate_starts_a_robot_inside_its_limits_and_names_what_it_applied(tmp_path, capsys):
    from test_urdf_robots import robots_dir
    urdf = os.path.join(robots_dir(), "panda_description/urdf/panda.urdf")   # neutral q4 = 0 > upper −0.0698
    code = cli.main(["simulate", urdf, "--t-final", "0.2", "--quiet", "--out", str(tmp_path / "p.npz")])
    out = capsys.readouterr().out
    assert code == 0
    assert "applied from the model: limits hard (restitution 0), damping" in out


def test_a_model_hashes_its_fingerprint_once_and_a_changed_copy_gets_its_own(monkeypatch):
    """simulate asks for the model's fingerprint every call: a Model (immutable) keeps it."""
    import dataclasses
    import hashlib
    from multibody.simulation import model_fingerprint
    m = mb.models.double_pendulum()
    first = model_fingerprint(m)
    monkeypatch.setattr(hashlib, "sha256", lambda *a: pytest.fail("hashed again"))
    assert mb.simulate(m, [0.1, 0.0], [0.0, 0.0], 0.01).model_fingerprint == first
    monkeypatch.undo()
    damped = dataclasses.replace(m, damping=[0.1, 0.0])
    assert model_fingerprint(damped) not in ("", first)


#: found by a fuzz of random chains with stops, damping and friction: a six-link chain whose joint5
#: reaches its lower stop 0.7 ms in (plastic, its free q̈ then away from the stop: held on it, not
#: resting), and 0.26 ms later joint1 hits its upper stop, whose impulse drives joint5 into its stop
SIX_LINKS = dict(
    q_lower=[-0.8888358077296334, -0.23525152020535517, -np.inf, -0.14681917095796865, -0.1816777410572097,
             -0.7047953901607235],
    q_upper=[0.4964752703880289, 0.22356878071523917, np.inf, 0.13280555121110202, 0.19627234747703662,
             0.49301526025502856],
    damping=[0.0, 0.18255508412241428, 0.052747639785114764, 0.0, 0.0, 0.0],
    friction=[0.0, 0.0, 0.0, 0.2646560800983852, 0.0, 0.0])
SIX_Q0 = [0.4954752703880289, -0.08621631234259988, 0.47232248365337604, -0.12983575415477902,
          -0.1806777410572097, 0.07493561146760006]
SIX_QD0 = [1.0314530848694723, 0.16100957671534466, -0.5855288241233366, -1.341219714076669, -1.401520214917428,
           0.5026828498748657]


@pytest.mark.parametrize("integrator", ["euler", "semi_implicit", "rk4"])
def test_an_impact_that_drives_a_joint_held_on_its_stop_into_it_is_an_impact_of_both(integrator):
    """Before, the run ended in "joint5 lower limit fires forever".  Now a joint sitting exactly on its
    stop joins the other joint's impact as a closed row (euler: it is exactly on the stop), or — moved a
    hair off it by the step (semi_implicit, rk4) — its stop's event is armed again from the step's
    start and fires its own impact a moment later."""
    import dataclasses
    m = dataclasses.replace(mb.models.planar(6), **SIX_LINKS)
    traj = mb.simulate(m, SIX_Q0, SIX_QD0, 0.3, integrator=integrator, dt=0.002, on_divergence="raise")
    assert traj.status == "finished"
    assert np.all(traj.q >= m.q_lower - 1e-9) and np.all(traj.q <= m.q_upper + 1e-9)
    names = [ev.name for ev in traj.events]
    assert names[:2] == ["joint5 lower limit", "joint1 upper limit"]
    hit = traj.events[1]
    if integrator == "euler":   # one impact of both stops: joint1 plastic, joint5 held (TMT eq. 9)
        row, closed = np.eye(6)[[0]], np.eye(6)[[4]]
        expect = mb.impact_map(m, hit.q_after, hit.qd_before, row, constraint_jacobian=closed)
        expect[4] = 0.0
        assert hit.qd_after[4] == 0.0 and abs(hit.qd_after[0]) < 1e-14
        np.testing.assert_allclose(hit.qd_after, expect, atol=1e-14)
    else:                       # joint5's own impact follows within the step
        assert names[2] == "joint5 lower limit" and traj.events[2].t - hit.t < 0.002


#: found by the fuzz (tests/test_fuzz_simulate.py): a floating tree whose base x reaches its lower stop
#: (plastic; the joint then sits past it by a rounding error, its velocity 1e-16), and 10 µs later
#: fb_Ry hits its upper stop, whose impulse drives the base back into its stop
FLOATING_STOPS = dict(
    q_lower=[-0.21993521533201726, -np.inf, -np.inf, -np.inf, -0.5853189283359028, -np.inf, -0.1959878795635924,
             -0.6452721594572389],
    q_upper=[0.29312108525170455, np.inf, np.inf, np.inf, 0.29843501657745924, np.inf, 0.2051669321395095,
             0.3333941389414243],
    damping=[0.0, 0.0, 0.30495370811198763, 0.0, 0.31818893772247087, 0.0, 0.14339181295596565, 0.0],
    friction=[0.0, 0.4513616669558058, 0.4023012303271336, 0.16148616545005184, 0.0, 0.07666988704604022, 0.0,
              0.32317661203578707])
FLOATING_Q0 = [-0.21893521533201726, 0.21406926427174006, 0.20515624559503495, 0.22845472177805323,
               0.29743501657745924, 0.19762045282640903, -0.16846731310175614, 0.3323941389414243]
FLOATING_QD0 = [-1.1073125456047812, -0.4627235943580139, -0.964469711004393, -0.1027607995418483,
                1.0822192832103554, 1.297785956840585, 0.46351741580390327, -0.6093910635812475]


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit", "euler", "rk45", "radau"])
def test_a_joint_a_rounding_error_past_its_stop_joins_the_next_impact(integrator):
    """Before, every integrator but semi_implicit ended in "fb_Ry upper limit fires forever": a plastic
    impact left the joint 3.5e-13 past its stop (q̇ = 1.6e-16, not 0), so it was not 'on' the stop
    when the next impact drove it in.  A plastic impact now stops the joint exactly and puts it on
    its stop, and a joint on or a rounding error past its stop joins an impact that presses it."""
    import dataclasses
    m = dataclasses.replace(mb.models.floatbase(mb.models.auto_tree(3, 1.5, 1.0, 1.0)), **FLOATING_STOPS)
    traj = mb.simulate(m, FLOATING_Q0, FLOATING_QD0, 0.3, integrator=integrator, dt=0.002, on_divergence="raise")
    assert traj.status == "finished"
    slack = 2.0 * EVENT_TIME_TOL * np.abs(traj.qd).max()   # (joint 6 meets its stop at 13.9 rad/s)
    assert np.all(traj.q >= m.q_lower - slack) and np.all(traj.q <= m.q_upper + slack)
    assert [ev.name for ev in traj.events[:2]] == ["fb_Px lower limit", "fb_Ry upper limit"]
    for ev in traj.events:
        if ev.name.endswith(" limit"):   # plastic (the default): the joint stops exactly on its stop
            j = m.joint_names.index(ev.name.split()[0])
            side = m.q_lower if " lower " in ev.name else m.q_upper
            assert ev.qd_after[j] == 0.0 and ev.q_after[j] == side[j]


# ---- the resting set as a whole (issue 33: dm_control's humanoid's 'abdomen_x upper limit release') ----
#: planar(3) under gravity and a constant τ: joint1 starts on its upper stop, pressed into it (it rests);
#: joint2 starts 1 mm above its lower stop and is driven onto it (plastic: it comes to rest).  Held together,
#: joint1's stop pulls (λ < 0): joint2's impact frees joint1 — found by a search over random states and τ
CHAIN_Q0 = np.array([-1.4, 0.65, -1.45])
CHAIN_TAU = np.array([10.0, 0.5, 17.0])
CHAIN_STOPS = [(0, -1.0, -1.4), (1, 1.0, 0.649)]      # (joint, sign: +1 lower / −1 upper, position)


def _chain():
    return dataclasses.replace(mb.models.planar(3), q_upper=np.array([-1.4, np.inf, np.inf]),
                               q_lower=np.array([-np.inf, 0.649, -np.inf]))


def _held(m, q, qd, tau, held):
    """q̈ and the stops' forces (each in its push's sense) with the joints ``held`` fixed: the KKT
    system of CRBA's H and RNEA's bias solved by NumPy, H q̈ = τ − C + Jᵀλ, J q̈ = 0."""
    H = mb.crba(m, q)
    f = tau - mb.rnea(m, q, qd, np.zeros(m.nv))
    J = np.zeros((len(held), m.nv))
    for k, (j, _s, _p) in enumerate(held):
        J[k, j] = 1.0
    K = np.block([[H, -J.T], [J, np.zeros((len(held), len(held)))]])
    x = np.linalg.solve(K, np.concatenate([f, np.zeros(len(held))]))
    return x[:m.nv], np.array([s * lam for (_j, s, _p), lam in zip(held, x[m.nv:])])


def _complementary_sets(m, q, qd, tau, stops):
    """Every held set of the stops that solves the complementarity problem (λ ≥ 0 held, sign·q̈ ≥ 0
    free), by enumerating all subsets: the reference the pivoting in JointLimits.settle is held to."""
    import itertools
    out = []
    for r in range(len(stops) + 1):
        for held in itertools.combinations(stops, r):
            qdd, push = _held(m, q, qd, tau, list(held))
            if np.all(push >= 0.0) and all(s * qdd[j] >= 0.0 for (j, s, p) in stops if (j, s, p) not in held):
                out.append({j for j, _s, _p in held})
    return out


def test_the_complementarity_reference_sees_the_chain_as_built():
    """The chain's premise, from the reference alone: joint1 alone pushes on its stop and joint2, free,
    is driven into its own; both held, joint1's stop would pull."""
    m = _chain()
    qdd, push = _held(m, CHAIN_Q0, np.zeros(3), CHAIN_TAU, CHAIN_STOPS[:1])
    assert push[0] > 1.0 and qdd[1] < -1.0
    _qdd, push = _held(m, CHAIN_Q0, np.zeros(3), CHAIN_TAU, CHAIN_STOPS)
    assert push[0] < -1.0 and push[1] > 1.0
    assert _complementary_sets(m, CHAIN_Q0, np.zeros(3), CHAIN_TAU, CHAIN_STOPS) == [{1}]


@pytest.mark.parametrize("integrator", ["euler", "semi_implicit", "rk4", "rk45"])
def test_an_impact_that_turns_another_resting_stop_to_pull_releases_it(integrator):
    """Before, joint2's impact added it to the resting set and left joint1 resting on a stop that pulls
    (its release guard already below zero: never a crossing) — joint1 stayed glued at −1.4 for the whole
    run.  Now the resting set is solved as a whole after the impact (JointLimits.settle): it is the one
    set the enumeration of the complementarity problem finds at the state after the impact, joint1
    leaves its stop at once, joint2 stays on its own, and (rk4, rk45) joint1's motion is the reference's
    with joint2 held, integrated by SciPy from the impact on."""
    from scipy.integrate import solve_ivp
    m = _chain()
    T = 0.1
    traj = mb.simulate(m, CHAIN_Q0, np.zeros(3), T, controller=lambda t, q, qd: CHAIN_TAU, integrator=integrator)
    assert traj.status == "finished" and [e.name for e in traj.events] == ["joint2 lower limit"]
    hit = traj.events[0]
    before = traj.t < hit.t
    assert np.all(traj.q[before, 0] == -1.4) and np.all(traj.qd[before, 0] == 0.0)   # joint1 rested until then
    assert _complementary_sets(m, hit.q_after, hit.qd_after, CHAIN_TAU, CHAIN_STOPS) == [{1}]
    after = traj.t > hit.t
    assert np.all(traj.q[after, 1] == 0.649) and np.all(traj.qd[after, 1] == 0.0)    # joint2 rests
    qa = traj.q[after, 0]                                # joint1 let go, downwards (Euler's first step: at rest)
    assert np.all(qa <= -1.4) and np.all(qa[1:] < -1.4) and np.all(np.diff(qa) < 0.0) and qa[-1] < -1.44
    if integrator in ("rk4", "rk45"):
        def rate(t, y):
            qdd, _ = _held(m, y[:3], y[3:], CHAIN_TAU, CHAIN_STOPS[1:])
            return np.concatenate([y[3:], qdd])
        ref = solve_ivp(rate, (hit.t, T), np.concatenate([hit.q_after, hit.qd_after]), rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(traj.q[-1], ref.y[:3, -1], atol=1e-7)


@pytest.mark.slow
def test_dm_control_humanoid_runs_its_ten_seconds_on_compliant_contact_within_its_ranges():
    """Bench part 9's humanoid row: 10 s at 2 ms semi-implicit from qpos0 on the default (compliant)
    contact.  Before, it ended at t = 5.67 s in "event 'abdomen_x upper limit release' fires forever":
    that release was left unarmed while other joints' impacts fired step after step (EventMonitor's
    re-arm), and left_hip_z's impact turned abdomen_x's resting stop from pushing (+2.0e5) to pulling
    (−2.5e5) (JointLimits.settle).  Now the run finishes, comes to rest (kinetic energy below 1e-2 J
    over its last second) exactly inside every joint's range, and lies above the floor (torso z above
    its capsule's radius, 0.07 m).  On the way it is inside its ranges to 1e-2 rad: the compliant law
    at this step gains energy at touchdown (E 389 → 966 J in the step at t = 0.212 s, with soft stops
    as well: the contact's, not the stops'), joints reach 1300 rad/s, and four times (t = 0.37 …
    2.5 s) a joint passes its stop inside a 2 ms step whose end finds it out again (guards are read at
    a step's ends), another event cuts that step while it is past, and it stays there until a later
    impact presses it back (9.9e-3 rad at most).  Its rest is not MuJoCo's.  (Since the implicit law
    also holds while joints rest on stops, the touchdown no longer gains energy and the run has ~70
    events, not hundreds.)"""
    import dm_control
    path = os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = mb.load_mjcf(path)
    traj = mb.simulate(h, h.q_default, None, 10.0, dt=0.002, integrator="semi_implicit", record_every=5,
                       limits="hard")
    assert traj.status == "finished" and traj.contact == "compliant" and traj.t[-1] == pytest.approx(10.0)
    assert np.all(np.isfinite(traj.q)) and len(traj.events) > 20
    hinge = [int(h.q_start[j]) for j in range(h.nb) if h.nq_joint[j] == 1]
    beyond = np.maximum(h.q_lower[hinge] - traj.q[:, hinge], traj.q[:, hinge] - h.q_upper[hinge])
    last = traj.t >= 9.0
    assert beyond.max() < 1e-2 and beyond[last].max() <= 1e-12
    assert traj.kinetic_energy[last].max() < 1e-2
    assert traj.q[-1, 2] > 0.07


def test_a_start_outside_the_limits_is_warned_at_the_callers_line_for_single_runs_and_batches():
    """The warning points at the user's call of simulate and of simulate_batch (it pointed at batch.py)."""
    m = dataclasses.replace(mb.models.planar(2), q_lower=np.array([0.0, -1.0]), q_upper=np.array([1.0, 1.0]))
    for call in (lambda: mb.simulate_batch(m, np.array([[-0.5, 0.0], [0.5, 0.0]]), np.zeros((2, 2)), 0.01),
                 lambda: mb.simulate(m, np.array([-0.5, 0.0]), np.zeros(2), 0.01)):
        with pytest.warns(SimulationWarning, match="outside its range") as record:
            call()
        assert [os.path.basename(w.filename) for w in record] == [os.path.basename(__file__)]


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit", "rk45"])
def test_a_guard_that_crosses_and_returns_within_a_step_fires_when_another_event_cuts_it(integrator):
    """Step (0, 0.1): guard A dips below zero on (0.04, 0.06) and is positive again at the step's end,
    so the end of the step cannot see it; B crosses at 0.055, where A stands past its wall.  The cut
    at B is read again (EventMonitor._crossed_before), and A fires first, at its own crossing."""
    a = mb.Event(lambda t, q, qd: (t - 0.05) ** 2 - 1e-4, direction=-1, name="A")
    b = mb.Event(lambda t, q, qd: 0.055 - t, direction=-1, terminal=True, name="B")
    kw = dict(rtol=1e-3, atol=1e-3) if integrator == "rk45" else {}    # loose: a step spans the dip
    tr = mb.simulate(mb.models.single_pendulum(), [0.3], [0.0], 0.2, dt=0.1, events=[a, b], integrator=integrator, **kw)
    assert [e.name for e in tr.events] == ["A", "B"]
    assert abs(tr.events[0].t - 0.04) < 1e-9 and abs(tr.events[1].t - 0.055) < 1e-9


@pytest.mark.slow
def test_no_joint_of_the_falling_humanoid_passes_its_stop_when_another_stop_cuts_the_step():
    """dm_control's humanoid, compliant at 2 ms: its limbs' stops fire many times a step.  A joint that
    hit its stop and came back within a step cut by another joint's stop used to be left up to
    9.9e-3 rad through it (right_hip_x at t = 0.366 s, left_hip_x at 0.410 s); and a knee let go exactly on
    its stop (g = 0) that came back in was never seen to cross (1.5e-2 rad: Event.crosses, crosses_stop).
    (The cut-step case itself is test_a_guard_that_crosses_and_returns_within_a_step_…; with the
    implicit law holding while joints rest, this fall has a handful of stops, not dozens.)"""
    import dm_control
    m = mb.load_mjcf(os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml"))
    tr = mb.simulate(m, None, None, 0.45, dt=2e-3, integrator="semi_implicit", limits="hard")
    lo, hi = np.where(np.isfinite(m.q_lower), m.q_lower, -np.inf), np.where(np.isfinite(m.q_upper), m.q_upper, np.inf)
    past = np.maximum(tr.q - hi, lo - tr.q).max()
    assert len(tr.events) >= 5 and past < 1e-8, past


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit", "rk45"])
def test_a_user_reset_that_kicks_a_resting_joint_off_its_stop_lets_gravity_act_on_it(integrator):
    """A pendulum rests on its lower stop (gravity presses it there); a user event at t = 0.3 s gives it
    3 rad/s away from the stop.  It used to stay in the resting set, its q̈ held at 0 while it moved
    (q linear in t, up to 1.2 rad); now the stops' resting set is solved again after the reset
    (JointLimits.after_reset) and the swing is a free pendulum's from (0.3, 3), up to 0.646 rad."""
    m = dataclasses.replace(mb.models.single_pendulum(), q_lower=np.array([0.3]), q_upper=np.array([1.5]))
    kick = mb.Event(lambda t, q, qd: (0.3 - t) + 10 * (q[0] - 0.3), direction=-1,
                    reset=lambda t, q, qd: (q, qd + 3.0), name="kick")
    tr = mb.simulate(m, [0.3], [0.0], 0.45, events=[kick], integrator=integrator, dt=1e-3)
    assert [e.name for e in tr.events] == ["kick"]
    free = mb.simulate(mb.models.single_pendulum(), [0.3], [3.0], 0.45 - tr.events[0].t, integrator="rk45",
                       rtol=1e-11, atol=1e-12, dt=1e-3)
    tol = 2e-3 if integrator == "semi_implicit" else 1e-6       # first order: its own error, not the stop's
    assert abs(tr.q[-1, 0] - free.q[-1, 0]) < tol and abs(tr.qd[-1, 0] - free.qd[-1, 0]) < tol


def test_the_command_line_takes_the_files_limits_or_the_ones_asked_for(tmp_path, capsys):
    """``multibody simulate`` runs an MJCF file's limits as MuJoCo's soft ones by default, a URDF's as rigid
    stops; ``--limits`` picks (hard: the stop's impact is an event)."""
    path = tmp_path / "arm.xml"
    path.write_text('<mujoco><worldbody><body pos="0 0 1"><joint type="hinge" axis="0 1 0" range="-30 30"/>'
                    '<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/></body></worldbody></mujoco>')
    out = tmp_path / "t.npz"
    for flags, applied in (([], "limits soft"), (["--limits", "hard"], "limits hard"), (["--limits", "off"], None)):
        assert cli.main(["simulate", str(path), "--t-final", "0.5", "--quiet", "--out", str(out), *flags]) == 0
        text = capsys.readouterr().out
        assert (applied in text) if applied else ("limits" not in text.split("applied from the model")[-1]), text
        events = mb.Trajectory.load(out).events
        assert (len(events) > 0) == (applied == "limits hard")
    with pytest.raises(SystemExit) as e:
        cli.main(["simulate", str(path), "--limits", "rigid", "--out", str(out)])
    assert e.value.code == 2 and "invalid choice: 'rigid'" in capsys.readouterr().err


def test_the_memory_check_counts_a_scenes_contact_record(monkeypatch):
    """A scene records each contact slot's force (and, in a batch, its compliant state) every sample: a file of
    many geoms has thousands of slots (dm_control's fruit fly: 5 564), which the check must count."""
    import re
    from multibody.simulation import core
    balls = "".join(f'<body pos="{i} 0 1"><freejoint/><geom type="sphere" size=".1"/></body>' for i in range(4))
    m = mb.load_mjcf(f'<mujoco><worldbody><geom type="plane" size="9 9 .1"/>{balls}</worldbody></mujoco>')
    slots = m.geoms.n_slots
    assert slots >= 4
    monkeypatch.setattr(core, "_available_memory", lambda: 1)
    T, dt = 1000.0, 1e-3
    samples = core.record_samples(T, dt, 1)

    def refused_gib(run, **kw):
        with pytest.raises(MemoryError, match="record_every") as e:
            run(T, dt=dt, **kw)
        return float(re.search(r"about ([0-9.]+) GiB", str(e.value)).group(1))

    def single(T, **kw):
        return mb.simulate(m, None, None, T, **kw)

    def batch(T, **kw):
        return mb.simulate_batch(m, np.tile(m.q_default, (2, 1)), np.zeros((2, m.nv)), T, **kw)

    # (fixed steps: the check counts the Python lists' copy too, twice the arrays)
    for run, per_slot, runs in ((single, 5, 1), (batch, 5, 2)):    # force 3 + the compliant law's state 2
        extra = refused_gib(run) - refused_gib(run, contact="off")
        assert extra == pytest.approx(2 * runs * samples * 8 * per_slot * slots / 2**30, abs=0.06)
    extra = refused_gib(single, contact="hard") - refused_gib(single, contact="off")
    assert extra == pytest.approx(2 * samples * 8 * 3 * slots / 2**30, abs=0.06)
