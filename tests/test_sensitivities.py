"""simulate(..., sensitivities=True): state-transition matrices by variational equations, saltation at events."""
import numpy as np
import pytest

import multibody as mb
from multibody.simulation.rollout import FIXED_STEP


def ball(g=9.81):
    """A point mass on a vertical prismatic joint (height q, up)."""
    b = mb.ModelBuilder("ball", gravity=(0.0, -g, 0.0))
    b.add_body("ball", None, "Py", mass=1.0, inertia=np.eye(3) * 1e-3)
    return b.build()


def final_state(traj):
    return np.concatenate((traj.q[-1], traj.qd[-1]))


@pytest.mark.parametrize("integrator", ["rk4", "dop853"])
def test_bouncing_ball_saltation_matches_the_closed_form(integrator):
    g, e, h0, v0, T = 9.81, 0.7, 1.0, 0.5, 0.8
    floor = mb.Event(lambda t, q, qd: q[0], direction=-1, reset=lambda t, q, qd: (q, -e * qd), name="floor")
    traj = mb.simulate(ball(g), [h0], [v0], T, dt=1e-3, integrator=integrator, events=floor, sensitivities=True,
                       rtol=1e-12, atol=1e-13)
    assert [ev.name for ev in traj.events] == ["floor"]
    # closed form: impact at t_e (h0 + v0 t − g t²/2 = 0), then v⁺ = −e v⁻ and free flight
    te = (v0 + np.sqrt(v0 ** 2 + 2 * g * h0)) / g
    v_minus = v0 - g * te
    dte = np.array([-1.0, -te]) / v_minus                         # ∂t_e/∂(h0, v0)
    dv_minus = np.array([0.0, 1.0]) - g * dte
    dv_plus = -e * dv_minus
    s, v_plus = T - te, -e * v_minus
    dh = dv_plus * s - v_plus * dte + g * s * dte
    dv = dv_plus + g * dte
    exact = np.array([dh, dv])
    assert traj.events[0].t == pytest.approx(te, abs=1e-11)
    np.testing.assert_allclose(traj.stm[-1], exact, rtol=0, atol=1e-9)
    # at the event: the sample before and after differ by the saltation matrix
    k = int(np.flatnonzero(traj.t == traj.events[0].t)[0])
    S = np.array([[-e, 0.0], [-(1 + e) * g / v_minus, -e]])    # the ball's saltation matrix
    np.testing.assert_allclose(traj.stm[k + 1], S @ traj.stm[k], rtol=0, atol=1e-9)
    # ∂x/∂τ (a constant force added over the run) against differences of two runs
    # eps is large enough that the adaptive run's own error (≈ rtol, its step sequence changes with the force)
    # stays far below the difference: 1e-12 / 1e-4; the central difference's truncation is O(eps²)
    eps = 1e-4
    up = mb.simulate(ball(g), [h0], [v0], T, dt=1e-3, integrator=integrator, events=floor, rtol=1e-12, atol=1e-13,
                     controller=lambda t, q, qd: [eps])
    dn = mb.simulate(ball(g), [h0], [v0], T, dt=1e-3, integrator=integrator, events=floor, rtol=1e-12, atol=1e-13,
                     controller=lambda t, q, qd: [-eps])
    np.testing.assert_allclose(traj.dx_dtau[-1][:, 0], (final_state(up) - final_state(dn)) / (2 * eps), atol=1e-8)


def test_linear_hybrid_system_matches_the_closed_form():
    """A free particle in the plane (flow linear), a planar guard a·q = c and a linear reset v⁺ = R v⁻."""
    b = mb.ModelBuilder("particle", gravity=(0.0, 0.0, 0.0))
    b.add_body("x", None, "Px", mass=0.0, allow_massless=True)
    b.add_body("p", "x", "Py", mass=2.0, inertia=np.eye(3) * 1e-3)
    model = b.build()
    a, c = np.array([1.0, 0.5]), 1.2
    R = np.array([[-0.5, 0.2], [0.1, -0.8]])   # turns the particle back from the wall
    wall = mb.Event(lambda t, q, qd: c - a @ q, direction=-1, reset=lambda t, q, qd: (q, R @ qd), name="wall")
    x0, v0, T = np.array([0.1, 0.2]), np.array([1.0, 0.4]), 2.0
    traj = mb.simulate(model, x0, v0, T, dt=1e-2, events=wall, sensitivities=True)
    te = (c - a @ x0) / (a @ v0)
    assert traj.events[0].t == pytest.approx(te, abs=1e-11)
    I, Z = np.eye(2), np.zeros((2, 2))
    dte = -np.concatenate((a, a * te)) / (a @ v0)                # ∂t_e/∂(x0, v0)
    dxe = np.hstack((I, te * I)) + np.outer(v0, dte)            # ∂x(t_e)/∂(x0, v0)
    dx = dxe + np.hstack((Z, R * (T - te))) - np.outer(R @ v0, dte)
    dv = np.hstack((Z, R))
    np.testing.assert_allclose(traj.stm[-1], np.vstack((dx, dv)), rtol=0, atol=1e-12)
    # the saltation matrix S = R_x + (f⁺ − R_x f⁻) ∇gᵀ / (∇g · f⁻) itself
    k = int(np.flatnonzero(traj.t == traj.events[0].t)[0])
    Rx = np.block([[I, Z], [Z, R]])
    f_minus, f_plus = np.concatenate((v0, [0, 0])), np.concatenate((R @ v0, [0, 0]))
    grad = np.concatenate((-a, [0, 0]))
    S = Rx + np.outer(f_plus - Rx @ f_minus, grad) / (grad @ f_minus)
    np.testing.assert_allclose(traj.stm[k + 1], S @ traj.stm[k], rtol=0, atol=1e-12)
    assert traj.dx_dtau.shape == (len(traj), 4, 2)


def _tangent_fd(model, run, q0, v0, h=1e-6, points=2):
    """Central (``points`` = 2) or five-point (4: truncation h⁴, round-off ε/h, about 1e-11 with
    h = 1e-4) differences of (q, v)(T) in mb.integrate / mb.difference's tangent coordinates."""
    nv = model.nv
    steps = (-1.0, 1.0) if points == 2 else (-2.0, -1.0, 1.0, 2.0)
    cols = []
    for k in range(2 * nv):
        d = np.zeros(2 * nv)
        d[k] = h
        ends = []
        for s in steps:
            tr = run(mb.integrate(model, q0, s * d[:nv]), v0 + s * d[nv:])
            ends.append((tr.q[-1], tr.qd[-1]))
        q_ref = ends[steps.index(-1.0)][0]   # differences of q taken on the manifold, from one of the ends
        f = [np.concatenate((mb.difference(model, q_ref, q), v)) for q, v in ends]
        cols.append((f[1] - f[0]) / (2 * h) if points == 2 else (f[0] - 8.0 * f[1] + 8.0 * f[2] - f[3]) / (12.0 * h))
    return np.column_stack(cols)


@pytest.mark.parametrize("integrator", ["rk4", "dop853"])
def test_free_floating_body_with_quaternions_flow_jacobian_matches_differences(integrator):
    model = mb.models.singlebody()
    q0 = mb.integrate(model, model.neutral(), [0.3, -0.2, 0.5, 0.1, 0.2, -0.3])
    v0 = np.array([1.0, -2.0, 0.7, 0.3, 0.1, -0.5])
    kw = dict(dt=1e-3, integrator=integrator, rtol=1e-12, atol=1e-13)
    traj = mb.simulate(model, q0, v0, 0.5, sensitivities=True, **kw)
    assert traj.stm.shape == (len(traj), 12, 12)
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, 0.5, **kw), q0, v0)
    assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-7
    assert np.max(np.abs(traj.stm[-1] - np.eye(12))) > 0.1      # the rotation couples the coordinates


def test_double_pendulum_stm_and_torque_sensitivity_match_differences():
    model = mb.models.double_pendulum()
    q0, v0 = np.array([0.7, -0.4]), np.array([0.1, 0.3])
    traj = mb.simulate(model, q0, v0, 1.0, dt=1e-2, sensitivities=True)
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, 1.0, dt=1e-2), q0, v0)
    assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-7
    np.testing.assert_allclose(traj.stm[0], np.eye(4))
    # the run itself is the plain run's, step for step
    plain = mb.simulate(model, q0, v0, 1.0, dt=1e-2)
    np.testing.assert_array_equal(traj.q, plain.q)
    eps = 1e-6
    cols = []
    for k in range(2):
        d = np.zeros(2)
        d[k] = eps
        up = mb.simulate(model, q0, v0, 1.0, dt=1e-2, controller=lambda t, q, qd, d=d: d)
        dn = mb.simulate(model, q0, v0, 1.0, dt=1e-2, controller=lambda t, q, qd, d=d: -d)
        cols.append((final_state(up) - final_state(dn)) / (2 * eps))
    assert np.max(np.abs(traj.dx_dtau[-1] - np.column_stack(cols))) < 1e-7


@pytest.mark.parametrize("period, integrator", [(None, "rk4"), (0.05, "rk4"), (0.05, "dop853")])
def test_pd_controller_damping_and_friction_enter_the_stm(period, integrator):
    """Continuous PD (∂τ/∂x in A), a sampled PD (its held τ's sensitivity Ψ), joint damping and friction."""
    import dataclasses
    model = dataclasses.replace(mb.models.double_pendulum(), damping=[0.3, 0.1], friction=[0.05, 0.0])
    pd = mb.PD(kp=20.0, kd=2.0, q_ref=[0.2, 0.1], period=period)
    q0, v0 = np.array([0.7, -0.4]), np.array([0.1, 0.3])
    kw = dict(dt=1e-2, controller=pd, limits="off", integrator=integrator, rtol=1e-12, atol=1e-13)
    traj = mb.simulate(model, q0, v0, 0.6, sensitivities=True, **kw)
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, 0.6, **kw), q0, v0)
    assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-7


def test_constrained_run_uses_differences_of_the_right_hand_side():
    """A walker's stance phase (pinned joints, hybrid dynamics) with its hip spring: Φ vs differences."""
    from multibody.simulation.walker import tmt_biped
    model, walker = tmt_biped(upper_body=False)
    q0, v0 = walker.state([0.15, -0.3, -0.15, 0.01])
    walker.pin.position = q0[walker.pin.q_index].copy()
    kw = dict(dt=0.1, controller=walker.controller, constraints=walker.pin)
    traj = mb.simulate(model, q0, v0, 1.0, sensitivities=True, **kw)
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, 1.0, **kw), q0, v0)
    free = np.concatenate((walker.pin.free_q, model.nq + walker.pin.free_v))
    assert np.max(np.abs(traj.stm[-1][np.ix_(free, free)] - fd[np.ix_(free, free)])) < 1e-7


@pytest.mark.parametrize("integrator", ["rk4", "dop853"])
def test_impact_map_reset_saltation_matches_differences(integrator):
    """The colliding double pendulum (OpenDE report D.5): a joint wall whose reset is TMT eq. 9.
    With fixed steps Φ is the derivative of the computed flow across the events too (the step's own
    rate at t_e, not f: with f alone it was 3e-3 off at dt = 1e-2)."""
    model = mb.models.double_pendulum()
    wall = mb.joint_wall(model, "th1", -np.pi / 2, side="lower", restitution=0.8)
    q0, v0 = np.array([0.0, 0.3]), np.array([-3.0, 1.0])
    kw = dict(dt=1e-2, integrator=integrator, events=wall, limits="off", rtol=1e-12, atol=1e-13)
    traj = mb.simulate(model, q0, v0, 1.0, sensitivities=True, **kw)
    assert len(traj.events) == 2                 # it strikes, swings back and strikes again
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, 1.0, **kw), q0, v0)
    assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-7 * max(1.0, np.abs(fd).max())


def test_terminal_event_gives_the_derivative_of_the_state_where_the_run_stopped():
    g = 9.81
    floor = mb.Event(lambda t, q, qd: q[0], direction=-1, terminal=True, name="floor")
    traj = mb.simulate(ball(g), [1.0], [0.5], 2.0, dt=1e-3, events=floor, sensitivities=True)
    assert traj.status == "terminated"
    te = traj.t[-1]
    v_minus = 0.5 - g * te
    # at the floor h = 0 whatever the start; v⁻ = −√(v0² + 2 g h0): ∂v⁻/∂(h0, v0) = (g, v0) / v⁻
    np.testing.assert_allclose(traj.stm[-1], [[0.0, 0.0], [g / v_minus, 0.5 / v_minus]], atol=1e-9)


def test_hard_joint_limit_impacts_carry_the_stm():
    """simulate's own hard stops (events with the impact map as reset) under sensitivities=True."""
    import dataclasses
    model = dataclasses.replace(mb.models.double_pendulum(), q_lower=[-1.0, -np.inf], q_upper=[np.inf, np.inf])
    q0, v0 = np.array([0.0, 0.3]), np.array([-3.0, 1.0])
    kw = dict(dt=1e-2, integrator="dop853", limit_restitution=0.5, rtol=1e-12, atol=1e-13)
    traj = mb.simulate(model, q0, v0, 0.6, sensitivities=True, **kw)
    assert any("limit" in ev.name for ev in traj.events)
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, 0.6, **kw), q0, v0)
    assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-6 * max(1.0, np.abs(fd).max())


def test_compliant_ground_contact_goes_through_differences_of_the_right_hand_side():
    """A disc pressed 1 mm into GroundContact (tangential deformations z in the state): Φ over 8 steps
    vs differences.  The contact is stiff and the disc's free joint makes the run CF4, for which Z's
    RK4 is the flow's derivative to the method's order: over 5 ms 3e-2 relative at dt = 1e-3, 2e-5 at 2.5e-4."""
    model = mb.models.rolling_disc(8)
    contact = mb.GroundContact(model, 2e5, 3e3, 0.4)
    q0 = mb.integrate(model, model.neutral(), [0.1, 0.2, 0.0, 0, 0, 0.3])
    q0[2] = -mb.gc_pos_vel(model, q0, np.zeros(6))[2].min() - 1e-3
    v0 = np.array([0.1, 0.0, 0.2, 0.3, 0.1, 0.0])
    kw = dict(dt=2.5e-4, contact=contact)
    traj = mb.simulate(model, q0, v0, 2e-3, sensitivities=True, **kw)
    n = 12 + contact.n_states
    assert traj.stm.shape == (len(traj), n, n) and traj.dx_dtau.shape == (len(traj), n, 6)
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, 2e-3, **kw), q0, v0)
    assert np.max(np.abs(traj.stm[-1][:12, :12] - fd)) < 1e-4 * np.abs(fd).max()
    assert np.abs(traj.stm[-1][12:, :12]).max() > 0      # the deformations depend on the start


def test_a_diverging_run_with_sensitivities_ends_diverged_with_one_warning():
    model = mb.models.double_pendulum()
    with pytest.warns(mb.SimulationWarning) as record:
        traj = mb.simulate(model, [1.0, 2.0], [0.0, 10.0], 20.0, dt=0.3, integrator="euler", sensitivities=True)
    assert traj.status == "diverged" and len(record) == 1
    assert np.all(np.isfinite(traj.stm)) and len(traj.stm) == len(traj)


# ---- one loop: Z rides in the compiled loop (csrc/sim/rollout.c) ---------------------------------
@pytest.fixture
def compiled_only(monkeypatch):
    """The handshake: the Python one-step stepper of the state with Z (the tests' reference,
    reference_steppers.sensitivity_step) raises, and every compiled call of a sensitivity run is
    counted with the plan that carries Z."""
    import reference_steppers
    from multibody.simulation import rollout, sensitivity

    def no_python_step(*args, **kwargs):
        raise AssertionError("sensitivity_step: the run stepped Z in Python")
    monkeypatch.setattr(reference_steppers, "sensitivity_step", no_python_step)
    calls = {"stretch": 0, "one step": 0}
    run_compiled = rollout.run_compiled

    def counted(model, plan, *args, **kwargs):
        law = plan.contact.call
        if isinstance(getattr(law, "__self__", None), sensitivity.SensitivityFlow):
            calls["one step" if kwargs.get("one_step") else "stretch"] += 1
        return run_compiled(model, plan, *args, **kwargs)
    monkeypatch.setattr(rollout, "run_compiled", counted)
    return calls


def _panda():
    from test_rollout import panda_model
    return panda_model()


@pytest.mark.parametrize("robot", ["double pendulum", "panda"])
def test_fixed_step_sensitivities_run_in_the_compiled_loop(robot, compiled_only):
    """Z = [Φ | ∂x/∂τ] rides as the compiled loop's extra states: the whole run is one compiled stretch
    (the Python stepper is never called), and Φ is the five-point derivative of the computed flow."""
    if robot == "panda":
        model = _panda()
        q0 = 0.5 * (model.q_lower + model.q_upper)
        q0[-2:] = 0.02                                   # fingers mid-range, still: no stop reached
        v0 = np.r_[0.3 * np.sin(np.arange(model.nv - 2)), 0.0, 0.0]
        kw = dict(dt=1e-3, controller=mb.PD(kp=20.0, kd=2.0, q_ref=q0))
        T = 0.03
    else:
        model = mb.models.double_pendulum()
        q0, v0 = np.array([0.7, -0.4]), np.array([0.1, 0.3])
        kw = dict(dt=1e-2)
        T = 1.0
    traj = mb.simulate(model, q0, v0, T, sensitivities=True, **kw)
    assert compiled_only == {"stretch": 1, "one step": 0}
    plain = mb.simulate(model, q0, v0, T, **kw)
    np.testing.assert_array_equal(traj.q, plain.q)        # the state's bits are the plain run's
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, T, **kw), q0, v0, h=1e-4, points=4)
    assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-8 * max(1.0, np.abs(fd).max())
    assert np.max(np.abs(traj.stm[-1] - np.eye(2 * model.nv))) > 1e-2


def test_hard_stop_impacts_in_fixed_steps_carry_z_through_the_compiled_loop(compiled_only):
    """simulate's own hard stop (restitution 0.5) with RK4: the run goes on in compiled stretches, the
    steps that reach the stop (and the step after each impact) are single compiled steps, and Φ
    across the impacts is the five-point derivative of the computed flow."""
    import dataclasses
    model = dataclasses.replace(mb.models.double_pendulum(), q_lower=[-1.0, -np.inf], q_upper=[np.inf, np.inf])
    q0, v0 = np.array([0.0, 0.3]), np.array([-3.0, 1.0])
    kw = dict(dt=1e-2, limit_restitution=0.5)
    T = 0.39            # two impacts; the fourth (t = 0.417) would leave the joint resting on its stop
    traj = mb.simulate(model, q0, v0, T, sensitivities=True, **kw)
    assert [ev.name for ev in traj.events] == ["th1 lower limit"] * 2
    assert compiled_only["stretch"] >= 2 and compiled_only["one step"] >= 2
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, T, **kw), q0, v0, h=1e-4, points=4)
    assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-7 * max(1.0, np.abs(fd).max())
    k = int(np.flatnonzero(traj.t == traj.events[0].t)[0])   # the impact's jump of Φ is recorded
    assert np.abs(traj.stm[k + 1] - traj.stm[k]).max() > 0.1


def test_semi_implicit_and_sampled_runs_go_through_the_same_loop(compiled_only):
    """Semi-implicit runs ride the compiled loop too, Z's η taking the new δv (one stretch); a sampled
    controller's run takes one compiled step at a time (Ψ at its samples): both are Φ = the
    derivative of their computed flows."""
    model = mb.models.double_pendulum()
    q0, v0 = np.array([0.7, -0.4]), np.array([0.1, 0.3])
    for kw in (dict(dt=1e-2, integrator="semi_implicit"),
               dict(dt=1e-2, controller=mb.PD(kp=20.0, kd=2.0, q_ref=[0.2, 0.1], period=0.03))):
        compiled_only.update({"stretch": 0, "one step": 0})
        traj = mb.simulate(model, q0, v0, 0.5, sensitivities=True, **kw)
        if "integrator" in kw:
            assert compiled_only == {"stretch": 1, "one step": 0}
        else:
            assert compiled_only["one step"] == 50 and compiled_only["stretch"] == 0
        fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, 0.5, **kw), q0, v0, h=1e-4, points=4)
        assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-8 * max(1.0, np.abs(fd).max())


@pytest.mark.parametrize("integrator", FIXED_STEP)
@pytest.mark.parametrize("robot", ["double pendulum", "free body", "planar base"])
def test_compiled_z_is_the_reference_steppers(integrator, robot):
    """Z in the compiled loop against the tests' Python reference loop (reference_steppers.python_loop:
    every step of [y, Z] in NumPy) to rounding, on R², on SE(3) (the free joint: semi_implicit's η
    takes −ad_{v₁} η, rollout.c's minus_ad) and on SE(2) (a planar base), with an event reset (a wall)
    whose steps around it carry the time rates."""
    from reference_steppers import python_loop
    if robot == "double pendulum":
        model = mb.models.double_pendulum()
        q0, v0 = np.array([0.7, -0.4]), np.array([0.1, 0.3])
        wall = mb.joint_wall(model, "th1", 0.6, side="lower", restitution=0.7)   # th1 falls from 0.7
    elif robot == "free body":
        model = mb.models.singlebody()
        q0 = mb.integrate(model, model.neutral(), [0.3, -0.2, 0.5, 0.1, 0.2, -0.3])
        v0 = np.array([1.0, -2.0, 0.7, 0.3, 0.1, -0.5])
        wall = mb.Event(lambda t, q, qd: q[2], direction=1, reset=lambda t, q, qd: (q, -0.5 * qd), name="up")
    else:
        builder = mb.ModelBuilder()
        builder.add_body("base", joint="planar", mass=2.0, com=[0.1, 0.05, 0.0], inertia=np.diag([0.1, 0.2, 0.3]))
        model = builder.build()
        q0, v0 = np.array([0.2, -0.1, 0.4]), np.array([0.5, -0.3, 1.5])
        wall = mb.Event(lambda t, q, qd: q[2] - 0.6, direction=1, reset=lambda t, q, qd: (q, -0.5 * qd), name="turned")
    kw = dict(dt=1e-2, integrator=integrator, events=wall, limits="off")
    compiled = mb.simulate(model, q0, v0, 0.4, sensitivities=True, **kw)
    with python_loop():
        python = mb.simulate(model, q0, v0, 0.4, sensitivities=True, **kw)
    assert len(compiled.events) == len(python.events) >= 1 and len(compiled) == len(python)
    np.testing.assert_allclose(compiled.q, python.q, rtol=0, atol=1e-12)
    scale = max(1.0, np.abs(python.stm).max())
    assert np.max(np.abs(compiled.stm - python.stm)) < 1e-10 * scale
    assert np.max(np.abs(compiled.dx_dtau - python.dx_dtau)) < 1e-10 * max(1.0, np.abs(python.dx_dtau).max())


@pytest.mark.parametrize("sensitivities", [False, True])
def test_a_run_diverging_inside_a_compiled_piece_ends_diverged(sensitivities):
    """With a progress bar the compiled loop runs in pieces; a piece whose state turns non-finite ends
    the run "diverged" at the last finite state (it used to be reported "finished")."""
    model = mb.models.double_pendulum()
    with pytest.warns(mb.SimulationWarning) as record:
        traj = mb.simulate(model, [1.0, 2.0], [0.0, 10.0], 20.0, dt=0.3, integrator="euler", progress=True,
                           sensitivities=sensitivities)
    assert traj.status == "diverged" and len(record) == 1
    assert np.all(np.isfinite(traj.q)) and traj.t[-1] < 20.0
    if sensitivities:
        assert np.all(np.isfinite(traj.stm)) and len(traj.stm) == len(traj)
