"""Hard contact (``contact="hard"``, ``csrc/sim/hard_contact.c``): a velocity-level time stepper whose
impulses come from the engine's LCP on J M⁻¹ Jᵀ — held to closed forms (a body at rest carries its
weight, Coulomb's sliding deceleration, the incline's stick/slip threshold, Newton's restitution) and
to MuJoCo on dm_control's quadruped."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

import multibody as mb
from multibody.models.dm_control_scenes import sprung_quadruped
from multibody.simulation.contact import HARD_SLOP
from multibody.simulation.core import model_constraints

G = 9.81
FLOOR = '<geom type="plane" size="5 5 .1" friction="{mu}" {floor}/>'


def _scene(body, mu=0.5, floor=""):
    return mb.load_mjcf(f'<mujoco><worldbody>{FLOOR.format(mu=mu, floor=floor)}{body}</worldbody></mujoco>')


def _box(mu=0.5, floor=""):
    return _scene('<body pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1" '
                  f'friction="{mu}"/></body>', mu, floor)


def test_a_box_and_a_sphere_at_rest_carry_their_weight_each_step():
    """Σ normal impulses over a step = m g h (to 1e-9), every step once settled; the depth stays within
    the slop and does not drift."""
    h = 1e-3
    for model in (_box(), _scene('<body pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.1" mass="2"/></body>')):
        tr = mb.simulate(model, model.q_default, np.zeros(6), 1.0, dt=h, contact="hard")
        assert tr.contact == "hard" and tr.integrator == "semi_implicit" and tr.status == "finished"
        m = float(np.sum(model.mass))
        impulse = tr.contact_forces[:, :, 2].sum(axis=1) * h
        assert np.abs(impulse[10:] - m * G * h).max() < 1e-9 * m * G * h / h   # m g h, to 1e-9 relative to m g
        z = tr.q[:, 2]
        assert z.min() > 0.1 - HARD_SLOP - 1e-9                     # no deeper than the slop
        assert abs(z[-1] - z[len(z) // 2]) < 1e-9                    # and no drift
        assert np.abs(tr.qd[-1]).max() < 1e-8


def test_a_sliding_box_decelerates_at_mu_g_then_sticks():
    """Coulomb: v(t) = v0 − μ g t exactly (semi-implicit steps of a constant deceleration) until it stops,
    then it stays put."""
    mu, v0, h = 0.5, 1.0, 1e-3
    model = _box(mu)
    qd0 = np.zeros(6)
    qd0[3] = v0                                                      # [ω, v]: linear x
    tr = mb.simulate(model, model.q_default, qd0, 0.4, dt=h, contact="hard")
    t, vx = tr.t, tr.qd[:, 3]
    sliding = t < v0 / (mu * G) - 2 * h
    assert np.abs(vx[sliding] - (v0 - mu * G * t[sliding])).max() < 1e-9
    assert np.abs(vx[t > v0 / (mu * G) + 2 * h]).max() < 1e-9       # stopped and stuck
    x_stop = v0 ** 2 / (2 * mu * G)                                  # the closed form's distance
    assert tr.q[-1, 0] == pytest.approx(x_stop, abs=v0 * h)          # (semi-implicit: within one step's travel)
    F = tr.contact_forces[50]                                        # friction = μ N while sliding
    assert F[:, 0].sum() == pytest.approx(-mu * F[:, 2].sum(), rel=1e-9)


def _planar_box(mu=0.5):
    """A box in the x-z plane (slide x, slide z, hinge y): no dof moves it across the plane, so each
    contact's second tangent row of J is zero."""
    return _scene('<body pos="0 0 0.1"><joint name="x" type="slide" axis="1 0 0"/>'
                  '<joint name="z" type="slide" axis="0 0 1"/><joint name="pitch" type="hinge" axis="0 1 0"/>'
                  f'<geom type="box" size="0.1 0.1 0.1" mass="1" friction="{mu}"/></body>', mu)


def test_a_planar_box_slides_at_mu_g_and_rests_on_its_weight():
    """Rows no dof can move (a planar model's friction across its plane: A_rr = 0) are held at zero; they
    made the pivoting's A_CC singular ("found no impulses ... even regularised") on every planar model.
    The in-plane law is untouched: Coulomb's v0 − μ g t while sliding, then at rest on m g each step."""
    mu, v0, h = 0.5, 1.0, 1e-3
    model = _planar_box(mu)
    tr = mb.simulate(model, model.q_default, [v0, 0.0, 0.0], 0.5, dt=h, contact="hard")
    assert tr.status == "finished"
    t, vx = tr.t, tr.qd[:, 0]
    sliding = t < v0 / (mu * G) - 2 * h
    assert np.abs(vx[sliding] - (v0 - mu * G * t[sliding])).max() < 1e-9
    assert np.abs(tr.qd[-1]).max() < 1e-8
    assert tr.contact_forces[-1, :, 2].sum() == pytest.approx(G, rel=1e-9)
    assert np.all(tr.contact_forces[:, :, 1] == 0.0)                # nothing across the plane


@pytest.mark.parametrize("name", ["cheetah", "walker", "hopper"])
def test_dm_controls_planar_robots_fall_and_rest_under_hard_contact(name):
    """dm_control's planar robots (rootx, rootz, rooty), 4 s from their qpos0 at MuJoCo's timestep: they
    fall, come to rest with the floor carrying m g (to 0.1 %), no deeper than the slop.  The cheetah lands
    on its feet and rests within 1 cm of MuJoCo's soft contact (measured 7 mm: MuJoCo's sink); the walker
    and hopper topple, to poses that depend on every impact."""
    import warnings

    import dm_control
    import mujoco
    path = os.path.join(os.path.dirname(dm_control.__file__), "suite", name + ".xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_mjcf(path)
        mjm = mujoco.MjModel.from_xml_path(path)
    T, dt = 4.0, mjm.opt.timestep
    tr = mb.simulate(model, None, None, T, dt=dt, contact="hard", record_every=int(round(0.5 / dt)))
    assert tr.status == "finished" and np.abs(tr.qd[-1]).max() < 1e-2
    weight = float(np.sum(model.mass)) * G
    assert tr.contact_forces[-1, :, 2].sum() == pytest.approx(weight, rel=1e-3)
    assert np.max(mb.contacts(model, tr.q[-1]).depth, initial=0.0) < HARD_SLOP + 1e-6
    if name == "cheetah":
        d = mujoco.MjData(mjm)
        for _ in range(int(round(T / dt))):
            mujoco.mj_step(mjm, d)
        assert abs(tr.q[-1, 1] - d.qpos[1]) < 1e-2                  # rootz


@pytest.mark.parametrize("theta_deg,mu", [(20.0, 0.5), (30.0, 0.5), (30.0, 0.3)])
def test_a_box_on_an_incline_sticks_below_the_friction_angle_and_slides_above(theta_deg, mu):
    """tan θ < μ: it stays; tan θ > μ: it slides down with a = g (sin θ − μ cos θ)."""
    th = np.radians(theta_deg)
    n = np.array([np.sin(th), 0.0, np.cos(th)])                     # the plane's normal (tilted about y)
    down = np.array([np.cos(th), 0.0, -np.sin(th)])                  # downhill
    c = (0.1 - HARD_SLOP / 2) * n                                    # resting on it from the start (within the slop)
    model = _scene(f'<body pos="{c[0]} {c[1]} {c[2]}" euler="0 {theta_deg} 0"><freejoint/>'
                   f'<geom type="box" size="0.1 0.1 0.1" mass="1" friction="{mu}"/></body>', mu,
                   f'euler="0 {theta_deg} 0"')
    T, dt = 0.5, model.timestep                  # the file's step (MuJoCo's 0.002 s): simulate's default
    assert dt == 0.002
    tr = mb.simulate(model, model.q_default, np.zeros(6), T, contact="hard")
    assert tr.status == "finished" and tr.t[1] == dt
    v_down = tr.qd[:, 3]                         # body coordinates: the box's x axis is downhill (it stays aligned)
    if np.tan(th) < mu:
        assert np.abs(tr.qd[-1]).max() < 1e-8
        assert abs((tr.q[-1, :3] - c) @ down) < 1e-6                   # not a micrometre down the slope
        assert abs((tr.q[-1, :3] - c) @ n) < 1e-9                        # and not into it
    else:
        a = G * (np.sin(th) - mu * np.cos(th))
        assert v_down[-1] == pytest.approx(a * T, rel=1e-6)
        assert np.abs(tr.qd[-1, :3]).max() < 1e-8                    # no tumbling
        assert (tr.q[-1, :3] - c) @ n == pytest.approx(0.0, abs=1e-9)   # on the plane
        assert (tr.q[-1, :3] - c) @ down == pytest.approx(0.5 * a * T * (T + dt), rel=1e-6)    # semi-implicit's s


@pytest.mark.parametrize("e", [0.5, 0.8])
def test_a_dropped_ball_bounces_to_e_squared_h(e):
    """Newton's restitution on the approach speed: dropped from H, the first bounce reaches e² H."""
    r, H, h = 0.1, 1.0, 1e-4
    model = _scene(f'<body pos="0 0 {r + H}"><freejoint/><geom type="sphere" size="{r}" mass="1"/></body>')
    contact = mb.HardContact(model, restitution=e)
    tr = mb.simulate(model, model.q_default, np.zeros(6), 2.0 * np.sqrt(2 * H / G) + 0.2, dt=h, contact=contact)
    z = tr.q[:, 2] - r
    first = int(np.argmax(tr.qd[:, 5] > 0))                          # leaving the floor
    apex = z[first:][: int(np.argmax(tr.qd[first:, 5] < 0)) + 1].max()
    assert apex == pytest.approx(e ** 2 * H, rel=2e-3)
    assert tr.contact == "hard"


def test_bad_input_is_named():
    model = _box()
    with pytest.raises(ValueError, match=r"contact: expected a contact object, None or one of 'compliant', 'hard', "
                                         r"'off', got 'hardd'"):
        mb.simulate(model, None, None, 0.1, contact="hardd")
    with pytest.raises(ValueError, match=r"contact='hard'.*integrator='semi_implicit', not 'rk4'"):
        mb.simulate(model, None, None, 0.1, contact="hard", integrator="rk4")
    with pytest.raises(ValueError, match=r"contact='hard'.*integrator='semi_implicit', not 'rk45'"):
        mb.simulate(model, None, None, 0.1, contact="hard", integrator="rk45")
    with pytest.raises(ValueError, match=r"restitution: expected a number in \[0, 1\], got 2"):
        mb.HardContact(model, restitution=2)
    with pytest.raises(ValueError, match=r"sensitivities=True"):
        mb.simulate(model, None, None, 0.1, contact="hard", sensitivities=True)
    with pytest.raises(ValueError, match=r"contact='hard' with events"):
        mb.simulate(model, None, None, 0.1, contact="hard", events=mb.Event(lambda t, q, qd: q[2] - 0.05))
    free = mb.load_mjcf('<mujoco><worldbody><body><freejoint/><geom type="sphere" size=".1"/></body></worldbody>'
                        '</mujoco>')
    with pytest.raises(ValueError, match=r"no candidate contact pairs .* ground=True"):
        mb.simulate(free, None, None, 0.1, contact="hard")
    from reference_steppers import python_loop
    with python_loop(), pytest.raises(ValueError, match=r"runs in the compiled loop only"):
        mb.simulate(model, None, None, 0.01, contact="hard")


def test_a_urdf_on_a_ground_and_joint_limits_as_rows():
    """A ground under a model without a floor (``ground=True``), and joint limits held as rows of the same
    LCP: a pendulum falling onto its stop stays at it (no stop events), to the slop."""
    pend = mb.load_mjcf('<mujoco><worldbody><body pos="0 0 1"><joint type="hinge" axis="0 1 0" range="-30 30"/>'
                        '<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/></body>'
                        '<body pos="0 0 0.3"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>'
                        '</worldbody></mujoco>')
    tr = mb.simulate(pend, None, None, 1.0, contact="hard", ground=True, limits="hard")
    assert tr.status == "finished" and tr.events == []
    assert tr.q[-1, 0] == pytest.approx(np.radians(30.0), abs=1e-3)   # on its upper stop (gravity pushes it there)
    assert tr.q[:, 0].max() < np.radians(30.0) + 1e-3
    assert tr.q[-1, 3] == pytest.approx(0.1, abs=HARD_SLOP + 1e-9)    # the ball on the added ground


def test_batch_runs_as_single_runs():
    model = _box()
    Q0 = np.tile(model.q_default, (3, 1))
    QD0 = np.zeros((3, 6))
    QD0[:, 3] = [0.5, 1.0, 1.5]
    batch = mb.simulate_batch(model, Q0, QD0, 0.3, contact="hard")
    for i in range(3):
        one = mb.simulate(model, Q0[i], QD0[i], 0.3, contact="hard")
        np.testing.assert_array_equal(batch[i].q, one.q)


def _quadruped(tmp_path, frictionless):
    """dm_control's quadruped with springs in its joints (stiffness 1000 at the zero pose: a stance both
    simulators hold with actuation disabled in the file, for both: its tendon actuators are tested in
    test_actuators.py), the falling ball taken out; ``frictionless``: toes and floor condim 1.
    (model, its file, the default state lowered until the toes touch the floor)."""
    path, model, q0 = sprung_quadruped(str(tmp_path), frictionless)
    return model, path, q0


def _mujoco_rest(path, q0, T):
    import mujoco
    mj = mujoco.MjModel.from_xml_path(path)
    mj.opt.disableflags = mujoco.mjtDisableBit.mjDSBL_ACTUATION   # the springs hold it, as in multibody
    d = mujoco.MjData(mj)
    d.qpos[:] = q0
    while d.time < T - 1e-12:
        mujoco.mj_step(mj, d)
    return mj, d


@pytest.mark.parametrize("frictionless", [True, False])
def test_the_quadruped_stands_as_mujocos(tmp_path, frictionless):
    """dm_control's quadruped (its tendon couplings kept as the LCP's bilateral rows, its joint limits as
    its rows) stands 2 s at MuJoCo's timestep: base steady, the floor carrying m g to 0.1 %.  Without
    friction the stance is unique and the base height is MuJoCo's to 1.5 mm (MuJoCo's soft contact
    sinks 0.9 mm, ours at most the slop, 0.1 mm); with the toes' friction (μ = 1.5) the feet stick where
    they land and carry 246 N inward each, while MuJoCo's soft friction lets them creep until they carry
    none, so its base stands 9.6 mm lower (its legs splayed further)."""
    model, path, q0 = _quadruped(tmp_path, frictionless)
    T = 2.0
    mj, d = _mujoco_rest(path, q0, T)
    tr = mb.simulate(model, q0, None, T, dt=mj.opt.timestep, contact="hard")
    assert tr.status == "finished" and tr.contact == "hard"
    z = tr.q[:, 2]
    assert np.ptp(z[tr.t >= 1.0]) < 5e-4                           # steady
    g = model.geoms
    floor = np.flatnonzero(g.body[g.pairs[:, 0]] < 0)
    slots = np.flatnonzero(np.isin(g.slot_pair, floor))
    weight = float(np.sum(model.mass)) * G
    assert tr.contact_forces[-1, slots, 2].sum() == pytest.approx(weight, rel=1e-3)
    residual, _rate = model_constraints(model, None).residual(model, tr.q[-1], tr.qd[-1])
    assert np.abs(residual).max() < 1e-6                             # the couplings held
    if frictionless:
        assert abs(z[-1] - d.qpos[2]) < 1.5e-3
        np.testing.assert_allclose(tr.q[-1, 7:], d.qpos[7:], atol=1e-3)
    else:
        assert 5e-3 < z[-1] - d.qpos[2] < 12e-3


def _mujoco_near_hard(path, q0, T, noslip):
    """MuJoCo's rest with its laws' give taken out: contacts and the couplings' equalities near-hard
    (solref 0.002, solimp 0.99–0.999: at rest its toes sink 0.1–0.3 mm, not 0.9–1.7 mm, and the couplings
    give 0.2–0.4 mrad), and ``noslip`` iterations of its post-solve, which stops its soft friction's creep
    (without it the toes slide until they carry no tangential force)."""
    import mujoco
    mj = mujoco.MjModel.from_xml_path(path)
    mj.geom_solref[:] = [0.002, 1.0]
    mj.geom_solimp[:, :3] = [0.99, 0.999, 0.001]
    mj.eq_solref[:] = [0.002, 1.0]
    mj.eq_solimp[:, :3] = [0.99, 0.999, 0.001]
    mj.opt.noslip_iterations = noslip
    d = mujoco.MjData(mj)
    d.qpos[:] = q0
    while d.time < T - 1e-12:
        mujoco.mj_step(mj, d)
    return d


@pytest.mark.parametrize("frictionless", [True, False])
def test_the_quadruped_rests_where_a_near_hard_mujoco_rests(tmp_path, frictionless):
    """The rest state, not only the stance: after 4 s (both at rest: ours |q̇| < 1e-6, MuJoCo's < 1e-4) our hard contact's base is
    MuJoCo's to 1 mm and its joints to 1 mrad (3 mrad with friction: where the toes stuck) once MuJoCo's constraints are made near-hard (measured: 0.15 mm
    without friction, 0.42 mm with μ = 1.5 and MuJoCo's noslip), and the floor carries m g to 0.1 %.  With
    MuJoCo's own soft constraints the frictionless rest is 1.0 mm lower (its toes sink 0.9 mm, its couplings
    give 0.26 mrad)."""
    model, path, q0 = _quadruped(tmp_path, frictionless)
    T = 4.0
    tr = mb.simulate(model, q0, None, T, dt=0.005, contact="hard", record_every=100)
    d = _mujoco_near_hard(path, q0, T, noslip=0 if frictionless else 20)
    assert np.abs(tr.qd[-1]).max() < 1e-6 and np.abs(d.qvel).max() < 1e-4      # both at rest (noslip jitters ~4e-5)
    assert abs(tr.q[-1, 2] - d.qpos[2]) < 1e-3
    # with friction the stance is where the toes stuck on landing: the knees and ankles differ by 2.4 mrad
    np.testing.assert_allclose(tr.q[-1, 7:], d.qpos[7:], atol=1e-3 if frictionless else 3e-3)
    weight = float(np.sum(model.mass)) * G
    assert tr.contact_forces[-1, :, 2].sum() == pytest.approx(weight, rel=1e-3)
    if frictionless:   # MuJoCo's own soft rest: the difference is its toes' 0.9 mm sink and the couplings' give
        _, soft = _mujoco_rest(path, q0, T)
        assert 0 < tr.q[-1, 2] - soft.qpos[2] < 1.2e-3


def test_the_quadruped_rests_under_the_compliant_law_as_mujocos(tmp_path):
    """The default (compliant) law at MuJoCo's 5 ms, frictionless toes (the stance then unique): the base
    rests within 1 mm of MuJoCo's own soft-contact rest (measured 0.71 mm: MuJoCo's toes sink 0.89 mm, ours
    0.25 mm under a quarter of the weight) and the floor carries m g to 0.1 %."""
    model, path, q0 = _quadruped(tmp_path, True)
    T = 4.0
    tr = mb.simulate(model, q0, None, T, dt=0.005, integrator="semi_implicit", record_every=100)
    assert tr.contact == "compliant" and np.abs(tr.qd[-1]).max() < 1e-6
    _, d = _mujoco_rest(path, q0, T)
    assert abs(tr.q[-1, 2] - d.qpos[2]) < 1e-3
    assert tr.contact_forces[-1, :, 2].sum() == pytest.approx(float(np.sum(model.mass)) * G, rel=1e-3)


def test_a_urdf_quadruped_on_its_meshes_rests_as_mujocos(recwarn):
    """example-robot-data's solo12 (URDF, floating) on its own collision meshes with ``ground=True``, a leg PD
    (kp 5, kd 0.2), 4 s at 1 ms under hard contact: at rest, the floor carrying m g to 0.1 %, its base within
    1 mm of MuJoCo compiling the same URDF with its meshes and a plane (measured 0.66 mm: MuJoCo sinks 0.69 mm,
    our hulls keep 256 vertices each), with MuJoCo's noslip (its soft friction otherwise creeps: 1 cm lower
    and still moving at 4 s)."""
    import mujoco
    from test_urdf_robots import ROBOTS    # example-robot-data's robots folder, found once there
    path = os.path.join(ROBOTS, "solo_description/robots/solo12.urdf")
    share = os.path.dirname(os.path.dirname(ROBOTS))
    model = mb.load_urdf(path, floating=True, package_dirs=[share])
    kp, kd, h, T = 5.0, 0.2, 1e-3, 4.0
    q_ref = model.neutral()
    q_ref[7:] = [0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6]
    q0 = q_ref.copy()
    q0[2] = 0.24                                         # its lowest hull vertex 1 mm above the floor
    pd = mb.PD(kp=np.r_[np.zeros(6), np.full(12, kp)], kd=np.r_[np.zeros(6), np.full(12, kd)], q_ref=q_ref)
    tr = mb.simulate(model, q0, None, T, dt=h, contact="hard", ground=True, controller=pd, record_every=100)
    assert tr.status == "finished" and np.abs(tr.qd[-1]).max() < 1e-5
    assert tr.contact_forces[-1, :, 2].sum() == pytest.approx(float(np.sum(model.mass)) * G, rel=1e-3)
    text = re.sub(r"<visual>.*?</visual>", "", open(path).read().replace("package://", share + "/"), flags=re.S)
    spec = mujoco.MjSpec.from_string(text)
    spec.bodies[1].add_freejoint()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1.0])
    for j in spec.joints:
        if j.type == mujoco.mjtJoint.mjJNT_HINGE:
            a = spec.add_actuator()
            a.target, a.trntype = j.name, mujoco.mjtTrn.mjTRN_JOINT
            a.set_to_position(kp=kp, kv=kd)
    mj = spec.compile()
    mj.jnt_actfrclimited[:] = 0                          # the URDF's effort limits: our PD does not clamp
    mj.opt.timestep, mj.opt.noslip_iterations = h, 20
    floor = mj.geom_type == mujoco.mjtGeom.mjGEOM_PLANE  # the robot meets the floor only (MuJoCo's parent-child
    mj.geom_contype[:], mj.geom_conaffinity[:] = ~floor, floor   # filter leaves overlapping hip meshes; ours none)
    d = mujoco.MjData(mj)
    d.qpos[:], d.ctrl[:] = q0, q_ref[7:]
    while d.time < T - 1e-9:
        mujoco.mj_step(mj, d)
    assert np.abs(d.qvel).max() < 1e-5
    assert abs(tr.q[-1, 2] - d.qpos[2]) < 1e-3
    np.testing.assert_allclose(tr.q[-1, 7:], d.qpos[7:], atol=3e-3)


def test_the_command_line_runs_hard_contact(tmp_path, capsys):
    from multibody import cli
    path = tmp_path / "box.xml"
    path.write_text(f'<mujoco><worldbody>{FLOOR.format(mu=0.5, floor="")}<body pos="0 0 0.1"><freejoint/>'
                    '<geom type="box" size="0.1 0.1 0.1" mass="2"/></body></worldbody></mujoco>')
    out = tmp_path / "t.npz"
    assert cli.main(["simulate", str(path), "--t-final", "0.2", "--contact", "hard", "--quiet", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "semi_implicit" in text and "under the hard law; the static geoms (the floor) carry 19.62 N at the end" in text
    assert cli.main(["simulate", str(path), "--t-final", "0.2", "--contact", "hard", "--integrator", "rk4",
                     "--quiet", "--out", str(out)]) != 0
    assert "integrator='semi_implicit', not 'rk4'" in capsys.readouterr().err


def test_the_friction_is_a_pyramid_on_the_contact_tangents():
    """The pyramid |λ_t1|, |λ_t2| ≤ μ λ_n on the tangents (e_x, e_y on a floor): a box sliding along a
    diagonal decelerates at μ g on each axis (μ g √2 in all), its direction kept; along an axis, at μ g."""
    mu, h = 0.5, 1e-3
    model = _box(mu)
    qd0 = np.zeros(6)
    qd0[3:5] = 1.0
    tr = mb.simulate(model, model.q_default, qd0, 0.1, dt=h, contact="hard")
    np.testing.assert_allclose(tr.qd[-1, 3:5], 1.0 - mu * G * tr.t[-1], rtol=1e-9)
    assert np.abs(tr.qd[-1, :3]).max() < 1e-8                       # no spin


def _cold_step_errors(model, tr, h):
    """Each step of ``tr`` against the same step taken alone: a run's first step solves its LCP cold (Dantzig's
    pivoting from nothing), the run's later ones warm from the last step's row states (lcp.c's
    mb_lcp_friction_warm).  Returns the largest force difference relative to max(1 N, |F|) and the largest
    velocity difference after the step."""
    df = dv = 0.0
    for k in range(len(tr.t) - 1):
        one = mb.simulate(model, tr.q[k], tr.qd[k], h, dt=h, contact="hard")
        F = one.contact_forces[0]
        df = max(df, np.abs(tr.contact_forces[k] - F).max() / max(1.0, np.abs(F).max()))
        dv = max(dv, np.abs(tr.qd[k + 1] - one.qd[1]).max())
    return df, dv


@pytest.mark.parametrize("frictionless", [False, True])
def test_a_warm_started_step_solves_the_cold_steps_lcp(tmp_path, frictionless):
    """The warm start is the LCP's own solution, not an approximation: dm_control's quadruped thrown from 5 cm
    (1 m/s sideways, rolling at 1.5 rad/s: landing, toes sliding and lifting, then sticking — rows entering,
    leaving and changing state) steps as the same steps solved cold, forces to 1e-12 relative and velocities
    to 1e-12 m/s.  (With friction some of those cold solves are first passes whose states block principal
    pivoting corrected, lcp.c's mb_lcp_friction with its scratch: 14 of them when this was written.)"""
    model, _, q0 = _quadruped(tmp_path, frictionless)
    q0 = q0.copy()
    q0[2] += 0.05
    qd0 = np.zeros(model.nv)
    qd0[0], qd0[4] = 1.5, 1.0
    h = 0.005
    tr = mb.simulate(model, q0, qd0, 0.6, dt=h, contact="hard")
    assert tr.status == "finished" and np.abs(tr.contact_forces).sum(axis=(1, 2)).min() == 0.0  # starts in the air
    df, dv = _cold_step_errors(model, tr, h)
    assert df < 1e-12 and dv < 1e-12


def test_a_warm_started_sliding_box_solves_the_cold_steps_lcp():
    """A box sliding diagonally (friction rows held at μ λ_n of their free normal: the warm start's
    non-symmetric solve) and one spun on its face, each step as the step solved cold, to what the LCP
    determines: a box's four coplanar contacts share its weight by CFM alone (their normal block's
    condition is near 1e8, lcp.c), so any double-precision solve fixes their split to about 1e-8 (the cold
    solve's passes stop at that change) and the motion to about 1e-10 m/s; the box's speed is 1 m/s."""
    model = _box(0.5)
    for qd0 in ([0, 0, 0, 1.0, 1.0, 0], [0, 0, 4.0, 0.3, 0, 0]):
        tr = mb.simulate(model, model.q_default, np.array(qd0), 0.3, dt=1e-3, contact="hard")
        df, dv = _cold_step_errors(model, tr, 1e-3)
        assert df < 1e-7 and dv < 1e-9


def _contact_lcp(rng, contacts=8, nv=30, mu=0.8):
    """A pyramid LCP shaped as a step's: A = J M⁻¹ Jᵀ (+ CFM) on `contacts` contacts of three rows (normal,
    two tangents bounded by μ of their normal), b pressing some normals in and pulling others out."""
    J = rng.standard_normal((3 * contacts, nv))
    L = rng.standard_normal((nv, nv)) / np.sqrt(nv)
    M = L @ L.T + np.eye(nv)
    A = J @ np.linalg.solve(M, J.T)
    A = 0.5 * (A + A.T) + 1e-6 * np.eye(3 * contacts)
    b = rng.standard_normal(3 * contacts)
    normal = np.arange(3 * contacts) % 3 == 0
    lo = np.where(normal, 0.0, -np.inf)
    findex = np.where(normal, -1, np.arange(3 * contacts) // 3 * 3)
    return A, b, lo, np.full(3 * contacts, np.inf), findex, np.where(normal, 0.0, mu)


def _lcp_states(x, lo, hi):
    return np.where(x == lo, 2, np.where(x == hi, 3, 1))          # lcp.c's MB_LCP_AT_LO, AT_HI, FREE


def _assert_pyramid_solution(A, b, findex, mu, x, lo, hi):
    """x solves the pyramid LCP: every row complementary under the bounds it used, and a friction row's bounds
    μ |x_n| of its normal's force."""
    w, scale = A @ x - b, 1e-9 * max(1.0, np.abs(x).max(), np.abs(b).max())
    friction = findex >= 0
    np.testing.assert_allclose(hi[friction], mu[friction] * np.abs(x[findex[friction]]), atol=scale)
    assert np.all(x >= lo - scale) and np.all(x <= hi + scale)
    free, point = (x > lo + scale) & (x < hi - scale), hi - lo <= scale   # (a point: any w, its normal at 0)
    assert np.abs(w[free]).max(initial=0.0) < scale
    assert np.all(w[~free & ~point & (np.abs(x - lo) <= scale)] > -scale)
    assert np.all(w[~free & ~point & (np.abs(x - hi) <= scale)] < scale)


def test_a_cold_lcp_seeded_with_its_free_rows_pivots_less_to_the_same_solution():
    """When the warm start fails, the cold solve's pivoting starts from the last step's free rows (lcp.c:
    seed_free_rows) — kept where they lie inside their bounds, so that a row that stays free costs no pivot.
    Seeded with the cold solution's own free set it reaches that solution with fewer pivots; seeded with a
    wrong guess it still reaches a solution of the LCP.  (The hard contact's steps: dm_control's falling
    humanoid pivoted 45 times a cold step unseeded, 25 seeded.)"""
    from multibody.engine import _engine
    rng = np.random.default_rng(7)
    fewer = 0
    for trial in range(20):
        A, b, lo, hi, findex, mu = _contact_lcp(rng)
        st, x, lo_used, hi_used, pivots = _engine.lcp_friction(A, b, lo, hi, findex, mu, None)
        assert st == 0
        _assert_pyramid_solution(A, b, findex, mu, x, lo_used, hi_used)
        seed = _lcp_states(x, lo_used, hi_used)
        st, xs, lo_s, hi_s, pivots_s = _engine.lcp_friction(A, b, lo, hi, findex, mu, seed)
        assert st == 0
        _assert_pyramid_solution(A, b, findex, mu, xs, lo_s, hi_s)
        np.testing.assert_allclose(xs, x, atol=1e-9 * max(1.0, np.abs(x).max()))
        assert pivots_s <= pivots
        fewer += pivots_s < pivots
        wrong = rng.integers(1, 4, size=len(b))
        st, xw, lo_w, hi_w, _ = _engine.lcp_friction(A, b, lo, hi, findex, mu, wrong)
        assert st == 0
        _assert_pyramid_solution(A, b, findex, mu, xw, lo_w, hi_w)
    assert fewer >= 15


def test_a_quadruped_batch_runs_as_single_runs(tmp_path):
    """Each run of a batch warm-starts from its own last step (its own row states: the workspace keeps them per
    run of a group): perturbed quadrupeds in one batch, on all threads, are the single runs bit for bit."""
    model, _, q0 = _quadruped(tmp_path, False)
    rng = np.random.default_rng(3)
    Q0 = np.tile(q0, (4, 1))
    Q0[:, 7:] += 0.02 * rng.standard_normal((4, model.nq - 7))
    QD0 = np.zeros((4, model.nv))
    batch = mb.simulate_batch(model, Q0, QD0, 0.3, dt=0.005, contact="hard")
    for i in range(4):
        one = mb.simulate(model, Q0[i], QD0[i], 0.3, dt=0.005, contact="hard")
        np.testing.assert_array_equal(batch[i].q, one.q)
        np.testing.assert_array_equal(batch[i].qd, one.qd)


@pytest.mark.parametrize("contact", ["compliant", "hard"])
def test_the_command_lines_floor_force_leaves_out_the_bodies_contacts_with_each_other(tmp_path, capsys, contact):
    """A ball resting on a box on the floor: the floor carries both (3 kg), and the ball–box contact, which acts on
    both bodies, adds nothing — the summary used to sum every slot's z force (2 or 4 kg's worth here), and for
    dm_control's dog, whose limbs touch each other, printed −1.7 N against its 101 N."""
    from multibody import cli
    path = tmp_path / "stack.xml"
    path.write_text(f'<mujoco><worldbody>{FLOOR.format(mu=0.5, floor="")}<body pos="0 0 0.05"><freejoint/>'
                    '<geom type="box" size="0.1 0.1 0.05" mass="2"/></body><body pos="0 0 0.15"><freejoint/>'
                    '<geom type="sphere" size="0.05" mass="1"/></body></worldbody></mujoco>')
    out = tmp_path / "t.npz"
    assert cli.main(["simulate", str(path), "--t-final", "1", "--contact", contact, "--quiet", "--out", str(out)]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    carried = float(line.split("(the floor) carry ")[1].split(" N")[0])
    assert carried == pytest.approx(3 * 9.81, rel=1e-3), line
    every_slot = np.load(out)["contact_forces"][-1, :, 2].sum()   # + or − the ball's weight (on the ball or box)
    assert min(abs(every_slot - 2 * 9.81), abs(every_slot - 4 * 9.81)) < 0.05


def test_support_force_is_the_floors_share_per_sample_and_survives_a_reload(tmp_path):
    """``traj.support_force``: the stack's floor carries both bodies at rest (3 kg), not the ball–box contact;
    a reloaded trajectory (no run geoms kept) finds its slots' geoms from the model, and a run without the
    model's contact says what it lacks."""
    path = tmp_path / "stack.xml"
    path.write_text(f'<mujoco><worldbody>{FLOOR.format(mu=0.5, floor="")}<body pos="0 0 0.05"><freejoint/>'
                    '<geom type="box" size="0.1 0.1 0.05" mass="2"/></body><body pos="0 0 0.15"><freejoint/>'
                    '<geom type="sphere" size="0.05" mass="1"/></body></worldbody></mujoco>')
    model = mb.load_mjcf(path)
    traj = mb.simulate(model, None, None, 1.0, contact="hard")
    assert traj.support_force.shape == (len(traj.t),)
    assert traj.support_force[-1] == pytest.approx(3 * 9.81, rel=1e-3)
    traj.save(tmp_path / "t.npz")
    again = mb.Trajectory.load(tmp_path / "t.npz", model)
    np.testing.assert_array_equal(again.support_force, traj.support_force)
    off = mb.simulate(model, None, None, 0.01, contact="off")
    with pytest.raises(ValueError, match="support_force: this trajectory has no recorded contact forces"):
        off.support_force
