"""The engine against reduced coordinates, analytic results and its own invariants (OpenDE report ch. 5, 6)."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import multibody as mb
from multibody import engine as E
from multibody.engine import report
from multibody.engine.world import matrix_to_quat

G = 9.81


# ---- the report's double pendulum (ch. 5, figures 5.9 and 5.13 as numbers) -------------------------
@pytest.fixture(scope="module")
def double_pendulum_runs():
    runs = {erp: report.double_pendulum(T=10.0, dt=1e-3, erp=erp, every=10) for erp in (0.2, 0.0)}
    return runs[0.2]["q_reduced"], {erp: (r["q_engine"], r["energy_engine"], r["joint_gap"]) for erp, r in runs.items()}


def test_double_pendulum_follows_the_reduced_solution_with_default_feedback(double_pendulum_runs):
    q_ref, runs = double_pendulum_runs
    q, energy, gap = runs[0.2]
    err = np.abs(q - q_ref)
    # fig. 5.13: OpenDE follows Runge-Kutta closely "until just over 6 s", then the chaos takes over
    assert err[:301].max() < 0.01           # t ≤ 3 s, measured 0.0089 rad
    assert err[:501].max() < 0.06           # t ≤ 5 s, measured 0.046 rad
    assert err.max() > 0.5                  # and it does part later (sensitivity, fig. 5.14)
    # fig. 5.9: the energy fluctuates with the feedback forces, but stays bounded
    assert np.abs(energy - energy[0]).max() < 0.1      # J, measured 0.085 of |E| ≈ 15 J
    assert gap.max() < 1e-3                             # m, anchors held together by ERP 0.2


def test_double_pendulum_drifts_with_feedback_off(double_pendulum_runs):
    q_ref, runs = double_pendulum_runs
    q, energy, gap = runs[0.0]
    assert gap[-1] > 0.01 and gap[-1] > 50 * runs[0.2][2].max()    # joints come apart (measured 0.053 m)
    assert np.abs(energy - energy[0]).max() > 1.0                  # measured 8.9 J
    assert np.abs(q - q_ref)[:201].max() > 0.05                   # worse than with feedback by 2 s


# ---- the colliding pendulum (ch. 6, figures 6.3 and 6.4) ------------------------------------------
@pytest.mark.parametrize("erp", [0.2, 0.0])
def test_colliding_pendulum_sees_the_wall_within_one_step_of_the_event(erp):
    r = report.colliding_pendulum(dt=1e-3, erp=erp)
    # the report's OpenDE run saw the wall about 10 steps late (fig. 6.4) and suspected ERP/CFM;
    # here the contact is found at the first step that starts inside the wall, with or without ERP
    assert 0 <= r["steps_late"] <= 2, r                 # measured +0.6 (ERP 0.2), +1.6 (ERP 0)
    assert r["rate_after"] == pytest.approx(-r["rate_event"], rel=0.02)   # bounce 1.0 reverses the rate


# ---- contact --------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", ["dantzig", "pgs"])
def test_box_dropped_on_a_plane_comes_to_rest(solver):
    world = E.World(solver=solver)
    world.add_geom(E.Plane((0, 0, 1), 0.0))
    box = world.add_body(E.Box(0.4, 0.3, 0.2), mass=2.0, position=(0, 0, 0.5), quaternion=(0.98, 0.1, 0.15, 0.05))
    world.run(2000)
    assert np.linalg.norm(box.velocity) < 1e-6
    assert np.linalg.norm(box.angular_velocity) < 1e-6
    assert box.position[2] == pytest.approx(0.1, abs=2e-4)                # on a face, within the surface layer
    last = world.last_step
    assert last.n_contacts == 4
    assert last.contact_force.sum(axis=0) == pytest.approx([0, 0, 2.0 * G], abs=1e-5)


@pytest.mark.parametrize("e", [1.0, 0.8, 0.5])
def test_sphere_bounce_apex_heights(e):
    world = E.World(bounce_vel=0.0)
    world.add_geom(E.Plane((0, 0, 1), 0.0), bounce=e)
    ball = world.add_body(E.Sphere(0.1), mass=1.0, position=(0, 0, 1.1), bounce=e)
    z, vz = [], []
    for _ in range(6000):
        world.step()
        z.append(ball.position[2])
        vz.append(ball.velocity[2])
    apex = [z[i] - 0.1 for i in range(1, len(z)) if vz[i - 1] > 0 >= vz[i]]
    # every apex down to 5 cm (below that the step's own free-flight error, ~g h / 2v, nears 1 %)
    n = min(6, sum(e ** (2 * k) >= 0.05 for k in range(1, 20)))
    assert len(apex) >= n >= 2
    for k, a in enumerate(apex[:n], start=1):
        assert a == pytest.approx(e ** (2 * k) * 1.0, rel=0.01)


@pytest.mark.parametrize("friction", ["pyramid", "cone", "force"])
@pytest.mark.parametrize("solver", ["dantzig", "pgs"])
@pytest.mark.parametrize("mu, degrees", [(0.5, 20.0), (0.5, 30.0), (0.3, 25.0)])
def test_box_on_a_slope_sticks_below_tan_alpha_and_slides_above(friction, solver, mu, degrees):
    a = math.radians(degrees)
    n = np.array([-math.sin(a), 0, math.cos(a)])
    # "force" mode: mu is a force limit per direction and contact; four contacts carry m g cos α
    mu_in = mu * G * math.cos(a) / 4 if friction == "force" else mu
    world = E.World(friction=friction, solver=solver, iterations=300)
    world.add_geom(E.Plane(n, 0.0), mu=mu_in)
    R = np.array([[math.cos(a), 0, -math.sin(a)], [0, 1, 0], [math.sin(a), 0, math.cos(a)]])
    box = world.add_body(E.Box(0.2, 0.2, 0.2), mass=1.0, position=n * 0.1, quaternion=matrix_to_quat(R), mu=mu_in)
    world.run(200)
    v0 = box.velocity
    world.run(500)
    down = np.array([-math.cos(a), 0, -math.sin(a)])
    acc = (box.velocity - v0) @ down / 0.5
    if math.tan(a) < mu:
        assert abs(acc) < 1e-3 and np.linalg.norm(box.velocity) < 1e-3
    else:
        assert acc == pytest.approx(G * (math.sin(a) - mu * math.cos(a)), rel=2e-3)


def test_soft_contact_sinks_by_weight_over_stiffness():
    k, c, h = 2e4, 200.0, 1e-3
    erp, cfm = E.contact_params(k, c, h)
    assert erp == pytest.approx(h * k / (h * k + c)) and cfm == pytest.approx(1 / (h * k + c))
    world = E.World(dt=h, contact_erp=erp, contact_cfm=cfm, surface_layer=0.0)
    world.add_geom(E.Plane((0, 0, 1), 0.0))
    ball = world.add_body(E.Sphere(0.1), mass=2.0, position=(0, 0, 0.1))
    world.run(3000)
    assert 0.1 - ball.position[2] == pytest.approx(2.0 * G / k, rel=1e-3)   # 0.98 mm


# ---- joints -------------------------------------------------------------------------------------
def hanging_chain(n=10, L=0.3, start=math.pi / 3, solver="dantzig"):
    world = E.World(contacts=False, solver=solver)
    d = np.array([math.cos(start), 0, -math.sin(start)])
    prev, joints = None, []
    for i in range(n):
        body = world.add_body(E.Box(L, 0.05, 0.05), mass=1.0, position=d * L * (i + 0.5),
                              quaternion=(math.cos(start / 2), 0, math.sin(start / 2), 0))
        joints.append(world.add_hinge(body, prev, anchor=d * L * i, axis=(0, 1, 0)))
        prev = body
    return world, joints


@pytest.mark.parametrize("solver", ["dantzig", "pgs"])
def test_chain_of_ten_hinged_boxes_keeps_its_joints(solver):
    world, joints = hanging_chain(solver=solver)
    worst = 0.0
    for k in range(3000):
        world.step()
        if k % 5 == 0:
            worst = max(worst, max(np.linalg.norm(world.joint_error(j)) for j in joints))
    assert worst <= 1e-4                           # measured 2.8e-5 m over 3 s
    last = world.last_step
    assert last.tree == (solver == "dantzig")      # the linear-time tree factorization served it
    assert last.residual < 1e-9 if solver == "dantzig" else True


def test_tree_factorization_matches_dense_pivoting():
    lams = []
    for factor in (True, False):
        world, _ = hanging_chain(n=6)
        world.factor_trees = factor
        world.run(50)
        last = world.last_step
        assert last.tree == factor and last.residual < 1e-9
        lams.append(last.lam)
    assert lams[0] == pytest.approx(lams[1], rel=1e-8, abs=1e-10)


def branched_tree(slider_and_hinge2):
    """(world, rows): a tree on a ball-jointed root — a hinge, a universal and a fixed joint on one
    branch; on the other a second ball, or with ``slider_and_hinge2`` a slider and a hinge2 (3 to 6
    rows each)."""
    world = E.World(contacts=False)
    box = E.Box(0.3, 0.1, 0.08)
    root = world.add_body(box, mass=1.0, position=(0, 0, 0), angular_velocity=(0.3, -0.2, 0.5))
    world.add_ball(root, None, anchor=(-0.15, 0, 0))
    b = world.add_body(box, mass=0.8, position=(0.3, 0, 0), velocity=(0, 0.2, 0))
    world.add_hinge(b, root, anchor=(0.15, 0, 0), axis=(0, 0.6, 0.8))
    c = world.add_body(box, mass=1.2, position=(0, 0.3, 0), angular_velocity=(0, 0, 1.0))
    d = world.add_body(box, mass=0.7, position=(0.6, 0, 0), quaternion=(0.96, 0.2, 0.1, 0.17))
    world.add_universal(d, b, anchor=(0.45, 0, 0), axis=(1, 0, 0), axis2=(0, 0, 1))
    if not slider_and_hinge2:
        world.add_ball(c, root, anchor=(0, 0.15, 0))
        f = world.add_body(box, mass=0.5, position=(0.9, 0, 0))
        world.add_fixed(f, d)
        return world, 3 + 5 + 4 + 6 + 3
    world.add_slider(c, root, axis=(0, 1, 0))
    e = world.add_body(box, mass=0.9, position=(0, 0.6, 0), angular_velocity=(0.4, 0, 0))
    world.add_hinge2(e, c, anchor=(0, 0.45, 0), axis=(0, 0, 1), axis2=(0, 1, 0))
    f = world.add_body(box, mass=0.5, position=(0.9, 0, 0))
    world.add_fixed(f, d)
    return world, 3 + 5 + 5 + 4 + 4 + 6


def assert_tree_matches_dense_pivoting(build, steps=40):
    """The linear-time factorization's multipliers and rows equal dense pivoting's on build()'s world."""
    lams, Js = [], []
    for factor in (True, False):
        world, rows = build()
        world.factor_trees = factor
        world.run(steps)
        last = world.last_step
        assert last.tree == factor and last.residual < 1e-9
        assert len(last.lam) == rows
        lams.append(last.lam)
        Js.append(last.J)
    assert lams[0] == pytest.approx(lams[1], rel=1e-7, abs=1e-9)
    assert Js[0] == pytest.approx(Js[1], rel=1e-9, abs=1e-12)


def test_tree_of_ball_based_joints_matches_dense_pivoting():
    """Ball, hinge, universal and fixed joints (blocks from the rows' angular parts, no W J^T),
    and a hinge chain whose middle joint has stops (the free hinges before it keep their rows as
    terms until then): the tree's multipliers and rows equal dense pivoting's."""
    def stopped_chain():
        world, joints = hanging_chain(n=6)
        joints[3].set_limits(-3.0, 3.0)                # far from its stops: no stop row, but not free
        return world, 6 * 5

    assert_tree_matches_dense_pivoting(lambda: branched_tree(False))
    assert_tree_matches_dense_pivoting(stopped_chain)


def test_tree_factorization_matches_dense_pivoting_for_every_joint_type():
    """A branched tree with a ball, hinge, slider, universal, hinge2 and fixed joint (3 to 6 rows
    each): the linear-time factorization's multipliers equal dense pivoting's."""
    assert_tree_matches_dense_pivoting(lambda: branched_tree(True))


def test_hinge_angle_and_rate_read_back():
    world = E.World(gravity=(0, 0, 0), contacts=False)
    link = world.add_body(E.Box(1.0, 0.1, 0.1), mass=1.0, position=(0.5, 0, 0), angular_velocity=(0, 0, 2.0))
    hinge = world.add_hinge(link, None, anchor=(0, 0, 0), axis=(0, 0, 1))
    link.velocity = (0, 1.0, 0)                    # consistent with ω = 2 about the anchor
    world.run(2000)                                # 2 s at 2 rad/s: more than half a turn, unwrapped
    assert hinge.rate == pytest.approx(2.0, rel=1e-4)
    assert hinge.angle == pytest.approx(4.0, rel=1e-3)
    assert np.linalg.norm(world.joint_error(hinge)) < 1e-5


def test_hinge_motor_reaches_its_speed_and_respects_its_force_limit():
    world = E.World(gravity=(0, 0, 0), contacts=False)
    wheel = world.add_body(E.Cylinder(0.2, 0.05), mass=2.0)
    hinge = world.add_hinge(wheel, None, anchor=(0, 0, 0), axis=(0, 0, 1))
    hinge.set_motor(5.0, 0.1)                      # I = m r²/2 = 0.04: at most 2.5 rad/s² of speed-up
    world.run(100)
    assert hinge.rate == pytest.approx(0.1 / 0.04 * 0.1, rel=1e-6)
    motor_rows = [i for i, (lo, hi) in enumerate(zip(world.last_step.lo, world.last_step.hi)) if hi == 0.1]
    assert abs(world.last_step.lam[motor_rows[0]]) == pytest.approx(0.1)
    world.run(3000)
    assert hinge.rate == pytest.approx(5.0, rel=1e-9)


def test_joint_changes_after_stepping_take_effect():
    """The step keeps which joints are free hinges and which have an ERP/CFM of their own: a motor,
    stops or parameters set after the world has stepped act from the next step on."""
    world = E.World(gravity=(0, 0, 0), contacts=False)
    wheel = world.add_body(E.Cylinder(0.2, 0.05), mass=2.0)
    hinge = world.add_hinge(wheel, None, anchor=(0, 0, 0), axis=(0, 0, 1))
    world.run(10)                                  # a free hinge so far
    hinge.set_motor(5.0, 0.1)                      # at most 2.5 rad/s² (I = 0.04)
    world.run(100)
    assert hinge.rate == pytest.approx(0.25, rel=1e-6)
    hinge.set_motor(0.0, 0.0)                      # off: free again, spinning on
    world.run(100)
    assert hinge.rate == pytest.approx(0.25, rel=1e-6) and hinge.angle == pytest.approx(0.0375, rel=1e-2)
    hinge.set_limits(-0.05, 0.05)                  # reached after 0.05 s: the stop holds it
    world.run(200)
    assert hinge.rate < 1e-3 and hinge.angle < 0.051          # stopped (pushed back a little)
    spinner = E.World(gravity=(0, 0, 0), contacts=False)
    disc = spinner.add_body(E.Cylinder(0.2, 0.05), mass=2.0, angular_velocity=(0, 0, 1.0))
    axle = spinner.add_hinge(disc, None, anchor=(0, 0, 0), axis=(0, 0, 1))
    spinner.run(10)                                # free: spinning at 1 rad/s
    assert axle.rate == pytest.approx(1.0, rel=1e-9)
    axle.set_damping(0.04)                         # c/I = 1/s: each implicit step divides by 1 + h
    spinner.run(100)
    assert axle.rate == pytest.approx((1 + spinner.dt) ** -100, rel=1e-6)

    def pendulum():
        w = E.World(contacts=False)
        link = w.add_body(E.Box(1.0, 0.1, 0.1), mass=1.0, position=(0.5, 0, 0))
        return w, link, w.add_hinge(link, None, anchor=(0, 0, 0), axis=(0, 1, 0))

    (a, la, ha), (b, lb, _) = pendulum(), pendulum()
    a.run(10)
    b.run(10)
    ha.set_params(cfm=0.1)                         # very soft: the anchor gives way
    a.run(50)
    b.run(50)
    assert np.linalg.norm(a.joint_error(ha)) > 100 * np.linalg.norm(b.joint_error(0))


@pytest.mark.parametrize("bounce", [0.0, 1.0])
def test_hinge_stop(bounce):
    # a pendulum falls from horizontal onto a stop at -0.5 rad (gravity along -y, hinge about z)
    world = E.World(gravity=(0, -G, 0), contacts=False, bounce_vel=0.0)
    link = world.add_body(E.Box(1.0, 0.1, 0.1), mass=1.0, position=(0.5, 0, 0))
    hinge = world.add_hinge(link, None, anchor=(0, 0, 0), axis=(0, 0, 1))
    hinge.set_limits(-0.5, 0.5, bounce=bounce)
    before = None
    for _ in range(1500):
        rate = hinge.rate
        world.step()
        if before is None and hinge.rate > 0 > rate:
            before = rate                                  # the step that hit the stop
        if before is not None and bounce == 1.0:
            break
    assert before is not None and before < -1.0
    if bounce == 0:
        assert hinge.angle == pytest.approx(-0.5, abs=2e-4)      # resting on the stop (surface layer)
        assert abs(hinge.rate) < 1e-9
    else:
        assert hinge.rate == pytest.approx(-before, rel=1e-6)   # reversed exactly


def test_slider_universal_hinge2_ball_fixed_hold_and_read_back():
    world = E.World(contacts=False)
    base = world.add_body(E.Box(0.2, 0.2, 0.2), mass=5.0, position=(0, 0, 1))
    world.add_fixed(base, None)
    car = world.add_body(E.Box(0.2, 0.1, 0.1), mass=1.0, position=(0.5, 0, 1))
    slider = world.add_slider(car, base, axis=(1, 0, 0))
    arm = world.add_body(E.Capsule(0.03, 0.4), mass=0.5, position=(0.5, 0, 0.7))
    uni = world.add_universal(arm, car, anchor=(0.5, 0, 0.95), axis=(1, 0, 0), axis2=(0, 1, 0))
    tip = world.add_body(E.Sphere(0.05), mass=0.3, position=(0.5, 0, 0.45), velocity=(0.3, 0.2, 0))
    ball = world.add_ball(tip, arm, anchor=(0.5, 0, 0.48))
    wheel = world.add_body(E.Cylinder(0.1, 0.04), mass=0.4, position=(0.8, 0, 1))
    h2 = world.add_hinge2(car, wheel, anchor=(0.8, 0, 1), axis=(0, 0, 1), axis2=(0, 1, 0))
    slider.set_motor(0.2, 50.0)
    h2.set_motor(3.0, 10.0, axis=1)
    prev = None
    for k in range(1500):
        world.step()
        coords = np.array([slider.angle, uni.angle, uni.angle2, h2.angle2])
        rates = np.array([slider.rate, uni.rate, uni.rate2, h2.rate2])
        if prev is not None and k > 5:
            # the rates are the derivatives of the read-back coordinates
            fd = (coords - prev) / world.dt
            assert np.all(np.abs(fd - rates) <= 2e-2 + 2e-2 * np.abs(rates)), (k, fd, rates)
        prev = coords
    assert slider.rate == pytest.approx(0.2, rel=1e-3)
    assert slider.angle == pytest.approx(0.2 * 1.5, rel=0.02)
    assert h2.rate2 == pytest.approx(-3.0, rel=1e-3) or h2.rate2 == pytest.approx(3.0, rel=1e-3)
    for j in (uni, ball, h2):
        assert np.linalg.norm(world.joint_error(j)) < 1e-4
    assert np.linalg.norm(base.velocity) < 1e-6                   # fixed to the world


def test_dantzig_failure_falls_back_to_the_quick_step():
    # a closed four-bar with CFM = 0: its out-of-plane rows are redundant, J W Jᵀ is singular
    world = E.World(cfm=0.0, contacts=False)
    a = world.add_body(E.Box(1.0, 0.05, 0.05), mass=1.0, position=(0, 0, 0.5), quaternion=(math.cos(math.pi / 4), 0, math.sin(math.pi / 4), 0))
    b = world.add_body(E.Box(1.0, 0.05, 0.05), mass=1.0, position=(0.5, 0, 1.0))
    c = world.add_body(E.Box(1.0, 0.05, 0.05), mass=1.0, position=(1.0, 0, 0.5), quaternion=(math.cos(math.pi / 4), 0, math.sin(math.pi / 4), 0))
    world.add_hinge(a, None, anchor=(0, 0, 0), axis=(0, 1, 0))
    world.add_hinge(b, a, anchor=(0, 0, 1), axis=(0, 1, 0))
    world.add_hinge(c, b, anchor=(1, 0, 1), axis=(0, 1, 0))
    world.add_hinge(c, None, anchor=(1, 0, 0), axis=(0, 1, 0))
    a.angular_velocity = (0, 0.5, 0)
    world.run(200)
    last = world.last_step
    assert last.fallback > 0 and last.solver == "pgs"
    assert np.all(np.isfinite(last.lam))
    assert all(np.linalg.norm(world.joint_error(j)) < 1e-3 for j in world.joints)


# ---- generalized coordinates both ways -------------------------------------------------------------
def mixed_model():
    b = mb.ModelBuilder("mixed", gravity=(0, 0, -9.81))
    I = np.diag([0.02, 0.03, 0.04])
    b.add_body("base", None, "free", mass=2.0, com=[0.1, 0, 0], inertia=I)
    b.add_body("upper", "base", "Rx", mass=1.0, com=[0, 0.2, 0], inertia=I, joint_translation=[0.2, 0, 0])
    b.add_body("carriage", "upper", "Py", mass=0.5, com=[0, 0.05, 0], inertia=I, joint_translation=[0, 0.4, 0])
    b.add_body("head", "carriage", "spherical", mass=0.7, com=[0, 0, 0.1], inertia=I, joint_translation=[0, 0.1, 0])
    b.add_body("tool", "head", "fixed", mass=0.2, com=[0, 0, 0.05], inertia=I, joint_translation=[0, 0, 0.2])
    return b.build()


def test_from_model_maps_back_to_q_and_qd():
    model = mixed_model()
    rng = np.random.default_rng(3)
    q = model.neutral() if callable(model.neutral) else np.array(model.neutral)
    q = np.array(q, dtype=float)
    q[0:3] = rng.normal(size=3)
    q[3:7] = rng.normal(size=4); q[3:7] /= np.linalg.norm(q[3:7])
    q[3:7] *= np.sign(q[3])
    q[7], q[8] = 0.3, 0.05
    q[9:13] = rng.normal(size=4); q[9:13] /= np.linalg.norm(q[9:13]); q[9:13] *= np.sign(q[9])
    qd = rng.normal(size=model.nv)
    world = E.World.from_model(model, q, qd)
    assert [j.kind for j in world.joints] == ["hinge", "slider", "ball", "fixed"]
    assert world.joint_positions() == pytest.approx(q, abs=1e-12)
    assert world.joint_velocities() == pytest.approx(qd, abs=1e-12)


def test_from_model_dynamics_agree_with_aba():
    model = mixed_model()
    q0 = np.array(model.neutral() if callable(model.neutral) else model.neutral, dtype=float)
    q0[2] = 1.0
    qd0 = np.zeros(model.nv)
    qd0[:6] = [0.3, -0.2, 0.5, 0.1, 0.0, 0.2]
    qd0[6], qd0[7] = 1.0, 0.2
    world = E.World.from_model(model, q0, qd0, dt=1e-4, contacts=False)
    T = 0.2
    world.run(int(round(T / world.dt)))

    def f(t, x):
        q, qd = x[:model.nq], x[model.nq:]
        return np.r_[_qdot(model, q, qd), mb.aba(model, q, qd, np.zeros(model.nv))]
    sol = solve_ivp(f, (0, T), np.r_[q0, qd0], rtol=1e-10, atol=1e-10)
    q_ref = sol.y[:model.nq, -1]
    qd_ref = sol.y[model.nq:, -1]
    q_eng, qd_eng = world.joint_positions(), world.joint_velocities()
    assert q_eng[[7, 8]] == pytest.approx(q_ref[[7, 8]], abs=5e-3)      # hinge, slider
    assert q_eng[:3] == pytest.approx(q_ref[:3], abs=5e-3)              # base position
    assert qd_eng == pytest.approx(qd_ref, abs=3e-2)


def _qdot(model, q, qd):
    """dq/dt for the mixed model (free: position rate = A ω-frame velocity, quaternion rates)."""
    out = np.zeros(model.nq)
    quat = q[3:7] / np.linalg.norm(q[3:7])
    w, x, y, z = quat
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    out[0:3] = R @ qd[3:6]
    out[3:7] = 0.5 * _qmul(quat, np.r_[0, qd[0:3]])
    out[7], out[8] = qd[6], qd[7]
    qs = q[9:13] / np.linalg.norm(q[9:13])
    out[9:13] = 0.5 * _qmul(qs, np.r_[0, qd[8:11]])
    return out


def _qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def test_last_step_is_consistent():
    world, _ = hanging_chain(n=3)
    world.run(10)
    s = world.last_step
    m = len(s.lam)
    assert s.J.shape == (m, 2, 6) and s.row_bodies.shape == (m, 2) and m == 15
    # w = A λ − b vanishes for equality rows; every row's bodies are the chain's neighbours
    assert np.abs(s.w).max() < 1e-9
    assert set(map(tuple, s.row_bodies)) == {(0, -1), (1, 0), (2, 1)}
    assert s.residual < 1e-9


def test_joint_turns_survive_adding_bodies():
    world = E.World(gravity=(0, 0, 0), contacts=False)
    wheel = world.add_body(E.Cylinder(0.2, 0.05), mass=1.0, angular_velocity=(0, 0, 10.0))
    hinge = world.add_hinge(wheel, None, anchor=(0, 0, 0), axis=(0, 0, 1))
    world.run(1000)                                      # 10 rad: more than a turn and a half
    before = hinge.angle
    assert before == pytest.approx(10.0, rel=1e-4)
    world.add_body(E.Sphere(0.1), mass=1.0, position=(3, 0, 0))   # rebuilds the C world
    assert hinge.angle == pytest.approx(before, abs=1e-12)
    world.run(100)
    assert hinge.angle == pytest.approx(11.0, rel=1e-4)


@pytest.mark.parametrize("spin", [-25.0, 25.0])
def test_hinge_turns_are_counted_both_ways_every_step(spin):
    # the step counts a hinge's turns from its half-angle vector (no angle computed); read back
    # after every step, the angle moves by spin * dt each step (no jump of 2 pi at +-pi) through
    # four turns either way
    world = E.World(gravity=(0, 0, 0), contacts=False)
    wheel = world.add_body(E.Cylinder(0.2, 0.05), mass=1.0, angular_velocity=(0, 0, spin))
    hinge = world.add_hinge(wheel, None, anchor=(0, 0, 0), axis=(0, 0, 1))
    angles = []
    for _ in range(1000):
        world.step()
        angles.append(hinge.angle)
    steps = np.diff(np.concatenate([[0.0], angles]))
    assert np.abs(steps - spin * 1e-3).max() < 1e-4 * abs(spin) * 1e-3
    assert angles[-1] == pytest.approx(spin, rel=1e-4)


def test_pile_of_boxes_settles_with_the_warm_started_quick_step():
    rng = np.random.default_rng(1)
    world = E.World(solver="pgs", iterations=20)
    world.add_geom(E.Plane((0, 0, 1), 0.0))
    for i in range(27):
        layer, k = divmod(i, 9)
        q = rng.normal(size=4) * [1, 0.15, 0.15, 0.15] + [3, 0, 0, 0]
        world.add_body(E.Box(0.2, 0.2, 0.2), mass=1.0, quaternion=q / np.linalg.norm(q), mu=0.8,
                       position=((k % 3 - 1) * 0.3, (k // 3 - 1) * 0.3, 0.15 + 0.3 * layer))
    world.run(3000)
    assert max(np.linalg.norm(b.velocity) for b in world.bodies) < 1e-3
    assert min(b.position[2] for b in world.bodies) > 0.099
    last = world.last_step
    assert last.n_contacts >= 4 * 9 and last.residual < 1e-4


def _rot(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


@pytest.mark.parametrize("kind", ["universal", "hinge2"])
def test_two_axis_joint_angles_read_back_exactly(kind):
    world = E.World(contacts=False)
    cross = world.add_body(E.Box(0.1, 0.1, 0.1), mass=1.0)
    yoke = world.add_body(E.Box(0.1, 0.1, 0.1), mass=1.0, position=(0, 0, -0.3))
    a1, a2 = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    j = world.add_joint(kind, yoke, cross, anchor=(0, 0, 0), axis=a1, axis2=a2)
    for th1, th2 in [(0.3, -0.7), (-1.2, 0.4), (2.5, -2.9)]:
        # body 1 relative to body 2 (at rest): Rot(axis 2, θ2) · Rot(axis 1, θ1)
        R = _rot(a2, th2) @ _rot(a1, th1)
        yoke.quaternion = matrix_to_quat(R)
        yoke.position = R @ [0, 0, -0.3]
        world._coords = None
        assert (j.angle, j.angle2) == pytest.approx((th1, th2), abs=1e-12)


def test_hinge2_suspension_sags_by_weight_over_stiffness():
    k, c, h = 5e3, 50.0, 1e-3
    world = E.World(dt=h, contacts=False)
    wheel = world.add_body(E.Cylinder(0.1, 0.05), mass=2.0, quaternion=matrix_to_quat(_rot([1, 0, 0], math.pi / 2)))
    chassis = world.add_body(E.Box(0.2, 0.2, 0.1), mass=1.0, position=(0, 0, 0.3))
    world.add_fixed(chassis, None)
    # hinge2: body 1 = chassis side (steering axis z, the suspension), body 2 = wheel (axle y)
    j = world.add_hinge2(chassis, wheel, anchor=(0, 0, 0), axis=(0, 0, 1), axis2=(0, 1, 0))
    j.set_suspension(*E.contact_params(k, c, h))
    world.run(3000)
    assert -wheel.position[2] == pytest.approx(2.0 * 9.81 / k, rel=1e-3)     # 3.9 mm
    assert abs(wheel.position[0]) < 1e-9 and abs(wheel.position[1]) < 1e-9  # only along the axis


@pytest.mark.parametrize("joint", ["cylindrical", "helical", "planar"])
def test_from_model_refuses_a_joint_type_it_has_no_constraint_for(joint):
    """The engine names the joint it cannot build; a new type (the cylindrical joint) is never dropped
    silently (it used to become two free bodies with one joint)."""
    b = mb.ModelBuilder("m")
    b.add_body("a", None, "Rz", mass=1.0, inertia=np.eye(3))
    b.add_body("b", "a", joint, mass=1.0, inertia=np.eye(3), joint_name="odd")
    model = b.build()
    with pytest.raises(ValueError, match=f"joint 'odd' is {joint}; the engine takes revolute"):
        E.World.from_model(model, model.neutral())


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_a_copied_world_is_independent_and_continues_the_run(how):
    import copy
    import pickle
    make = {"copy": copy.copy, "deepcopy": copy.deepcopy, "pickle": lambda w: pickle.loads(pickle.dumps(w))}[how]
    model = mb.models.double_pendulum()
    world, twin = (E.World.from_model(model, [0.5, -0.3]) for _ in range(2))
    for _ in range(100):
        world.step()
        twin.step()
    clone = make(world)
    assert clone.bodies is not world.bodies and clone.bodies[0] is not world.bodies[0]
    before = world.bodies[1].position.copy()
    for _ in range(200):
        clone.step()
        twin.step()
    assert np.array_equal(world.bodies[1].position, before)          # the original did not move
    assert np.array_equal(clone.bodies[1].position, twin.bodies[1].position)   # bit for bit: no contacts
    assert clone.time == pytest.approx(0.3) and world.time == pytest.approx(0.1)
    # with contacts the copy's solver starts cold: the same run to the solver's tolerance
    pile, pile_twin = report.pile_world(n=20), report.pile_world(n=20)
    for _ in range(50):
        pile.step()
        pile_twin.step()
    pile_clone = make(pile)
    for _ in range(50):
        pile_clone.step()
        pile_twin.step()
    gap = max(np.abs(a.position - b.position).max() for a, b in zip(pile_clone.bodies, pile_twin.bodies))
    assert gap < 1e-3
