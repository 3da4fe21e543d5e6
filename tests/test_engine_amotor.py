"""The angular motor (World.add_amotor, AMotor rows in c/joints.c): a motor limited by fmax spins a
free body up as ω = fmax t / I until the target rate, stops hold an angle and bounce, user-mode
angles are the twist about the axis, and euler-mode angles are ODE's decomposition."""
import numpy as np
import pytest

from multibody.engine import AMotor, Box, Sphere, World
from multibody.engine.world import matrix_to_quat


def rot(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def free_body(w, inertia=(1.5, 1.8, 2.0), **kw):
    return w.add_body(mass=1.0, inertia=np.diag(inertia), **kw)


@pytest.mark.parametrize("frame", ["world", "body1"])
def test_motor_spins_a_free_body_up_at_fmax_over_i_until_the_target(frame):
    w = World(gravity=(0, 0, 0))
    b = free_body(w)
    m = w.add_amotor(b, None, axes=[(0, 0, 1)], frames=[frame])
    assert isinstance(m, AMotor) and m.naxes == 1
    fmax, target, I = 0.5, 2.0, 2.0
    m.set_motor(target, max_force=fmax)
    t_star = target * I / fmax                             # 8 s
    for t in (1.0, 4.0, 7.5):
        w.run(int(round((t - w.time) / w.dt)))
        assert b.angular_velocity[2] == pytest.approx(fmax / I * t, rel=1e-9)
        assert m.rates[0] == pytest.approx(fmax / I * t, rel=1e-9)
    w.run(int(round((t_star + 1.0 - w.time) / w.dt)))
    assert b.angular_velocity[2] == pytest.approx(target, rel=1e-9)
    np.testing.assert_allclose(b.angular_velocity[:2], 0, atol=1e-12)
    assert m.angles[0] == pytest.approx(np.angle(np.exp(1j * (0.5 * fmax / I * t_star ** 2 + target * 1.0))), abs=1e-2)


def test_motor_between_two_bodies_applies_equal_and_opposite_torques():
    w = World(gravity=(0, 0, 0))
    a = free_body(w, (1, 1, 1.0))
    b = free_body(w, (2, 2, 3.0), position=(2, 0, 0))
    m = w.add_amotor(a, b, axes=[(0, 0, 1)], frames=["body2"])
    m.set_motor(-1.0, max_force=0.3)
    w.run(1000)
    assert a.angular_velocity[2] == pytest.approx(-0.3, rel=1e-9)
    assert b.angular_velocity[2] == pytest.approx(0.1, rel=1e-9)
    assert m.rates[0] == pytest.approx(-0.4, rel=1e-9)
    w.run(3000)                                            # relative rate reaches -1 and holds
    assert m.rates[0] == pytest.approx(-1.0, rel=1e-9)
    assert a.angular_velocity[2] * 1 + b.angular_velocity[2] * 3 == pytest.approx(0, abs=1e-12)   # momentum


def test_stops_hold_an_angle_against_a_torque_and_bounce():
    w = World(gravity=(0, 0, 0))
    b = free_body(w, (1, 1, 1.0))
    m = w.add_amotor(b, None, axes=[(0, 0, 1)], frames=["world"])
    m.set_limits(-0.5, 0.5)
    for _ in range(3000):
        b.add_torque((0, 0, 1.0))
        w.step()
    assert m.angles[0] == pytest.approx(0.5, abs=2e-4)      # held, within the surface layer
    assert abs(m.rates[0]) < 1e-6
    # bounce: spin into the low stop and come back at half the speed
    w2 = World(gravity=(0, 0, 0))
    b2 = free_body(w2, (1, 1, 1.0), angular_velocity=(0, 0, -2.0))
    m2 = w2.add_amotor(b2, None, axes=[(0, 0, 1)], frames=["world"])
    m2.set_limits(-0.5, 0.5, bounce=0.5)
    w2.run(400)
    assert b2.angular_velocity[2] == pytest.approx(1.0, rel=1e-6)


def test_user_angles_are_the_twist_about_each_axis():
    w = World(gravity=(0, 0, 0))
    b = free_body(w, quaternion=matrix_to_quat(rot((1, 1, 0), 0.4)))   # attached at any pose
    m = w.add_amotor(b, None, axes=[(0, 0, 1), (1, 0, 0), (0, 1, 0)], frames=["world", "world", "body1"])
    np.testing.assert_allclose(m.angles, 0, atol=1e-15)
    R0 = b.rotation
    b.quaternion = matrix_to_quat(rot((0, 0, 1), 0.7) @ R0)
    assert m.angles[0] == pytest.approx(0.7, abs=1e-12)
    assert m.angles[1] == pytest.approx(0.0, abs=1e-12)
    b.quaternion = matrix_to_quat(rot((1, 0, 0), -1.1) @ R0)
    np.testing.assert_allclose(m.angles[:2], [0, -1.1], atol=1e-12)
    # the third axis is fixed in the body: turning about it keeps it in place
    ax = R0 @ (R0.T @ np.array([0, 1, 0]))
    b.quaternion = matrix_to_quat(rot(ax, 2.0) @ R0)
    assert m.angles[2] == pytest.approx(2.0, abs=1e-12)
    np.testing.assert_allclose(m.axes[2], [0, 1, 0], atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_euler_angles_match_the_analytic_decomposition(seed):
    rng = np.random.default_rng(seed)
    a, c = rng.uniform(-3, 3, 2)
    bta = rng.uniform(-1.4, 1.4)
    w = World(gravity=(0, 0, 0))
    body = free_body(w)
    m = w.add_amotor(body, None, mode="euler", axes=[(1, 0, 0), (0, 0, 1)])
    assert m.naxes == 3
    R = rot((0, 0, 1), c) @ rot((0, 1, 0), bta) @ rot((1, 0, 0), a)
    body.quaternion = matrix_to_quat(R)
    np.testing.assert_allclose(m.angles, [a, bta, c], atol=1e-12)
    np.testing.assert_allclose(m.axes[0], R[:, 0], atol=1e-12)         # axis 0 moves with body 1
    np.testing.assert_allclose(m.axes[2], [0, 0, 1], atol=1e-12)       # axis 2 stays in the world
    # two bodies: only the relative rotation counts
    w2 = World(gravity=(0, 0, 0))
    Q = rot(rng.normal(size=3), 0.8)
    p = free_body(w2, quaternion=matrix_to_quat(Q))
    ch = free_body(w2, quaternion=matrix_to_quat(Q), position=(1, 0, 0))
    m2 = w2.add_amotor(ch, p, mode="euler", axes=[Q[:, 0], Q[:, 2]])
    ch.quaternion = matrix_to_quat(Q @ R)
    np.testing.assert_allclose(m2.angles, [a, bta, c], atol=1e-12)


def test_euler_motors_and_stops_with_a_ball_joint():
    # ODE's usual rig: a ball joint for position, an euler AMotor for the three rotations
    w = World(gravity=(0, 0, -9.81))
    b = w.add_body(Box(0.1, 0.1, 0.6), mass=1.0, position=(0, 0, -0.3))
    w.add_ball(b, None, anchor=(0, 0, 0))
    m = w.add_amotor(b, None, mode="euler", axes=[(1, 0, 0), (0, 0, 1)])
    for k in range(3):
        m.set_limits(-0.2, 0.2, axis=k)
    b.angular_velocity = (3.0, 0.0, 1.0)                   # swing and spin into the stops
    for _ in range(2000):
        b.add_torque((0.5, 0.3, -0.4))
        w.step()
    assert np.all(np.abs(m.angles) < 0.2 + 5e-3)
    assert np.linalg.norm(w.joint_error(w.joints[0])) < 1e-4
    # motors: spin about world z at 1 rad/s while the other two axes hold zero rate
    w2 = World(gravity=(0, 0, 0))
    b2 = free_body(w2)
    m2 = w2.add_amotor(b2, None, mode="euler", axes=[(1, 0, 0), (0, 0, 1)])
    for k, v in enumerate((0.0, 0.0, 1.0)):
        m2.set_motor(v, max_force=100.0, axis=k)
    b2.angular_velocity = (0.3, -0.2, 0.0)
    w2.run(500)
    # the rows hold the rates at the start of each step; the body's gyroscopic torque (inertia
    # 1.5, 1.8, 2) then turns ω by O(dt²) within the step, far below the motors' reach
    np.testing.assert_allclose(m2.rates, [0, 0, 1.0], atol=1e-6)
    # (ω·axis_k are not ω's components: axis 0 tilted off axis 2 during the first steps, so ω is
    # 1 rad/s along axis 0 × axis 1, as in ODE, whose euler rows are the same)
    n = np.cross(m2.axes[0], m2.axes[1])
    np.testing.assert_allclose(b2.angular_velocity, n / (n @ m2.axes[2]), atol=1e-6)


def test_an_amotor_beside_hinges_in_a_chain_steps_as_without_it_when_idle():
    def chain(with_motor):
        w = World()
        prev = None
        bodies = []
        for i in range(3):
            b = w.add_body(Box(0.1, 0.1, 0.5), mass=1.0, position=(0, 0, -0.25 - 0.5 * i))
            w.add_hinge(b, prev, anchor=(0, 0, -0.5 * i), axis=(0, 1, 0))
            bodies.append(b)
            prev = b
        bodies[-1].angular_velocity = (0, 2.0, 0)
        if with_motor:
            w.add_amotor(bodies[0], bodies[2], axes=[(0, 1, 0)])   # no motor, no stops: no rows
        w.run(300)
        return np.array([b.position for b in bodies])
    np.testing.assert_allclose(chain(True), chain(False), atol=1e-9)


def test_bad_amotors():
    w = World()
    b = w.add_body(Sphere(0.1), mass=1.0)
    with pytest.raises(ValueError, match="mode"):
        w.add_amotor(b, mode="fixed")
    with pytest.raises(ValueError, match="axes"):
        w.add_amotor(b, axes=[(1, 0, 0)] * 4)
    with pytest.raises(ValueError, match="axes"):
        w.add_amotor(b, axes=[])
    with pytest.raises(ValueError, match="axes"):
        w.add_amotor(b, mode="euler", axes=[(1, 0, 0), (1, 1, 0)])
    with pytest.raises(ValueError, match="frames"):
        w.add_amotor(b, axes=[(1, 0, 0)], frames=["world", "body1"])
    with pytest.raises(ValueError, match="frames"):
        w.add_amotor(b, axes=[(1, 0, 0)], frames=["elsewhere"])
    with pytest.raises(ValueError, match="axes\\[0\\]"):
        w.add_amotor(b, axes=[(0, 0, 0)])
    with pytest.raises(ValueError, match="body2"):
        w.add_amotor(b, b)
    m = w.add_amotor(b, axes=[(1, 0, 0), (0, 1, 0)])
    with pytest.raises(ValueError, match="axis"):
        m.set_motor(1.0, 1.0, axis=2)
    with pytest.raises(ValueError, match="max_force"):
        m.set_motor(1.0, -1.0, axis=1)
    with pytest.raises(ValueError, match="lo, hi"):
        m.set_limits(1.0, -1.0)
