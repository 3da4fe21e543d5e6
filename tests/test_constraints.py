"""Constrained dynamics: FDgq (gamma_q) and Lagrange multipliers with Baumgarte stabilisation.

Cross-checks: FDgq against the Lagrange-multiplier solution of the same constraint and against
ABA when nothing is constrained; analytic Jacobians against finite differences; two independent
formulations of a four-bar linkage against each other; the stabilisation's error dynamics
against its closed-form solution.
"""
from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import multibody as mb
from multibody.dynamics.fdgq import gamma_q_linear, gamma_q_mimic
from multibody.simulation.constraints import (DEFAULT_BAUMGARTE_TIME, AxisConstraint, ConstraintError, ConstraintSet,
                                            FunctionConstraint, GammaQ, JointCoupling, PointConstraint,
                                            constraint_terms, gamma_q_partitioned, revolute_closure,
                                            solve_constrained)
from multibody.simulation.closed_loops import four_bar

RNG = np.random.default_rng(7)


def _solve(c):
    """A description is solved alone in a set with the default gains (as mb.simulate does); a set as it is."""
    return c if isinstance(c, ConstraintSet) else ConstraintSet(c)


def integrate_ode(model, acc, q0, qd0, t_final, rtol=1e-10, atol=1e-12, t_eval=None):
    """q̈ = acc(t, q, q̇) for models with nq = nv, by SciPy's DOP853 (a reference integrator)."""
    n = model.nv

    def rhs(t, y):
        return np.concatenate([y[n:], acc(t, y[:n], y[n:])])

    sol = solve_ivp(rhs, (0.0, t_final), np.concatenate([q0, qd0]), method="DOP853", rtol=rtol, atol=atol,
                    t_eval=t_eval)
    assert sol.success, sol.message
    return sol.t, sol.y[:n].T, sol.y[n:].T


# ------------------------------------------------------------------------------------ FDgq
def test_fd_gq_matches_lagrange_coupling_on_the_double_elbow():
    model = mb.models.double_elbow()
    coupling = JointCoupling("elbow2", "elbow1", ratio=1.0)
    for _ in range(5):
        y, yd, tau = RNG.normal(size=2), RNG.normal(size=2), RNG.normal(size=3)
        q, qd = np.array([y[0], y[1], y[1]]), np.array([yd[0], yd[1], yd[1]])
        qdd_gq = mb.fd_gq(model, q, qd, tau)
        qdd_l, lam = _solve(coupling).accelerations(model, q, qd, tau)
        np.testing.assert_allclose(qdd_gq, qdd_l, rtol=1e-10, atol=1e-10)
        assert qdd_gq[1] == pytest.approx(qdd_gq[2], abs=1e-12)   # 1:1 gearing in the accelerations
        # the constraint force is −Jᵀλ... and it does no work on consistent velocities
        H, C = mb.hand_c(model, q, qd)
        tau_c = H @ qdd_gq + C - tau
        np.testing.assert_allclose(tau_c, constraint_terms(coupling, model, q, qd).J.T @ lam, atol=1e-10)
        assert abs(qd @ tau_c) < 1e-10


def test_fd_gq_with_identity_gamma_is_aba():
    model = replace(mb.models.planar(3), gamma_q=gamma_q_linear(np.eye(3)))
    q, qd, tau = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=3)
    f_ext = RNG.normal(size=(3, 6))
    np.testing.assert_allclose(mb.fd_gq(model, q, qd, tau, f_ext), mb.aba(model, q, qd, tau, f_ext), atol=1e-10)
    # batch dimension
    Q = RNG.normal(size=(4, 3))
    np.testing.assert_allclose(mb.fd_gq(model, Q, qd, tau), mb.aba(model, Q, qd, tau), atol=1e-10)


def test_fd_gq_stabilisation_follows_its_critically_damped_law():
    """q3 − q2 obeys ë + 2/T ė + e/T² = 0 exactly: e(t) = e0 (1 + t/T) e^{−t/T}."""
    T = 0.1
    model = mb.models.double_elbow(Tstab=T)
    e0 = 0.01
    q0 = np.array([0.3, 0.2, 0.2 + e0])
    t_eval = np.linspace(0, 1.0, 11)
    t, Q, QD = integrate_ode(model, lambda t, q, qd: mb.fd_gq(model, q, qd, np.zeros(3)), q0, np.zeros(3), 1.0,
                             t_eval=t_eval)
    e = Q[:, 2] - Q[:, 1]
    np.testing.assert_allclose(e, e0 * (1 + t / T) * np.exp(-t / T), atol=1e-8)


def test_double_elbow_gearing_held_for_ten_seconds():
    """Example 6's constraint under PD control of the independent variables (shoulder, elbow)."""
    model = mb.models.double_elbow()
    y_ref = np.array([0.8, -0.6])
    G = model.gamma_q.G

    def acc(t, q, qd):
        y, yd = np.linalg.pinv(G) @ q, np.linalg.pinv(G) @ qd
        tau = G @ (80.0 * (y_ref - y) - 15.0 * yd)     # torques on the independent variables
        return mb.fd_gq(model, q, qd, tau)

    t, Q, QD = integrate_ode(model, acc, np.zeros(3), np.zeros(3), 10.0, t_eval=np.linspace(0, 10, 201))
    assert np.max(np.abs(Q[:, 1] - Q[:, 2])) < 1e-6
    assert np.max(np.abs(QD[:, 1] - QD[:, 2])) < 1e-6


def test_gamma_q_mimic_builds_the_gearing_from_model_mimics():
    b = mb.ModelBuilder("geared", gravity=(0, -9.81, 0))
    b.add_body("a", None, "Rz", mass=1.0, com=[0.5, 0, 0], inertia=np.diag([0, 0.1, 0.1]))
    b.add_body("b", "a", "Rz", mass=1.0, com=[0.5, 0, 0], inertia=np.diag([0, 0.1, 0.1]),
               joint_translation=[1, 0, 0])
    b.add_mimic(1, 0, multiplier=-2.0, offset=0.1)
    model = b.build()
    gq = gamma_q_mimic(model)
    qn, qdn, G, gs = gq(model, np.array([0.3, -0.5]), np.array([1.0, -2.0]))
    assert qn[1] == pytest.approx(-2.0 * qn[0] + 0.1)
    assert qdn[1] == pytest.approx(-2.0 * qdn[0])
    coupling = JointCoupling(1, 0, ratio=-2.0, offset=0.1)
    q, qd, tau = qn, qdn, np.array([0.4, -0.2])
    np.testing.assert_allclose(mb.fd_gq(replace(model, gamma_q=gq), q, qd, tau),
                               _solve(coupling).accelerations(model, q, qd, tau)[0], atol=1e-10)


# ---------------------------------------------------------------------- Lagrange multipliers
def _fd_jacobian(f, q, h=1e-6):
    return np.column_stack([(f(q + h * e) - f(q - h * e)) / (2 * h) for e in np.eye(len(q))])


@pytest.mark.parametrize("make", [
    lambda: PointConstraint(2, [0.3, 0.1, -0.2], 0, [0.5, 0.0, 0.1]),
    lambda: PointConstraint(3, [0.3, 0.1, -0.2], None, [0.5, 0.0, 0.1], axes="xz"),
    lambda: AxisConstraint(3, [0, 0, 1], 1, [[1, 0, 0], [0, 1, 0]]),
    lambda: AxisConstraint(2, [1, 1, 0], None, [[0, 0, 1]]),
])
def test_constraint_jacobian_and_bias_match_finite_differences(make):
    model = mb.models.auto_tree(4, skew=0.7)
    con = make()
    q, qd = RNG.normal(size=4), RNG.normal(size=4)
    terms = constraint_terms(con, model, q, qd)
    np.testing.assert_allclose(terms.J, _fd_jacobian(lambda x: constraint_terms(con, model, x, qd).c, q), atol=1e-7)
    np.testing.assert_allclose(terms.cdot, terms.J @ qd, atol=1e-12)
    # bias = d/ds (J(q + s q̇) q̇): the c̈ of the constant-velocity path
    h = 1e-5
    bias_fd = (constraint_terms(con, model, q + h * qd, qd).J @ qd - constraint_terms(con, model, q - h * qd, qd).J @ qd) / (2 * h)
    np.testing.assert_allclose(terms.bias, bias_fd, atol=1e-6)


def test_function_constraint_reproduces_the_point_constraint():
    model = mb.models.auto_tree(4, skew=0.4)
    point = PointConstraint(3, [0.2, 0.0, 0.1], None, [1.0, 0.5, 0.0])
    fun = FunctionConstraint(lambda q: mb.point_position(model, q, 3, [0.2, 0.0, 0.1]) - [1.0, 0.5, 0.0])
    with_jac = FunctionConstraint(fun.c, jacobian=lambda q: mb.point_jacobian(model, q, 3, [0.2, 0.0, 0.1]))
    q, qd = RNG.normal(size=4), RNG.normal(size=4)
    ref = constraint_terms(point, model, q, qd)
    for con in (fun, with_jac):
        t = constraint_terms(con, model, q, qd)
        np.testing.assert_allclose(t.c, ref.c, atol=1e-12)
        np.testing.assert_allclose(t.J, ref.J, atol=1e-8)
        np.testing.assert_allclose(t.bias, ref.bias, atol=2e-4 if con is fun else 1e-7)


def test_time_dependent_function_constraint_has_the_rheonomic_terms():
    """c(t, q) = q0 − sin t: ċ = q̇0 − cos t and the bias (c̈ − J q̈) = sin t."""
    model = mb.models.planar(2)
    con = FunctionConstraint(lambda t, q: np.array([q[0] - np.sin(t)]), time_dependent=True)
    terms = constraint_terms(con, model, np.array([0.2, 0.1]), np.array([0.5, 0.0]), t=0.7)
    assert terms.cdot[0] == pytest.approx(0.5 - np.cos(0.7), abs=1e-8)
    assert terms.bias[0] == pytest.approx(np.sin(0.7), abs=1e-5)
    with pytest.raises(ValueError, match="time-dependent"):        # no silent t = 0 inside mb.simulate
        _solve(con).accelerations(model, np.zeros(2), np.zeros(2), np.zeros(2))
    qdd, _ = _solve(con).accelerations(model, np.zeros(2), np.zeros(2), np.zeros(2), t=0.7)
    t = constraint_terms(con, model, np.zeros(2), np.zeros(2), t=0.7)
    np.testing.assert_allclose(t.J @ qdd + t.bias, -2 / DEFAULT_BAUMGARTE_TIME * t.cdot
                               - t.c / DEFAULT_BAUMGARTE_TIME ** 2, atol=1e-6)


def test_pinned_arm_at_rest_multipliers_carry_gravity():
    """Tip pinned: q̈ = 0 and Jᵀλ equals the gravity torques C(q, 0)."""
    model = mb.models.planar(2)
    pin = PointConstraint("link2", [1, 0, 0], None, [1, 1, 0], axes="xy")
    q = np.array([np.pi / 2, -np.pi / 2])
    qdd, lam = _solve(pin).accelerations(model, q, np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(qdd, 0, atol=1e-12)
    _, C = mb.hand_c(model, q, np.zeros(2))
    np.testing.assert_allclose(constraint_terms(pin, model, q, np.zeros(2)).J.T @ lam, C, atol=1e-12)
    assert lam[1] == pytest.approx(9.81 / 2)    # half of link 2's weight hangs on the pin


def test_baumgarte_error_dynamics_are_critically_damped():
    """Start 1 cm off the constraint: c(t) = c0 (1 + t/T) e^{−t/T} with T the time constant."""
    model, closure = four_bar()
    T = 0.05
    cs = ConstraintSet(closure, time_constant=T)
    q0, qd0 = four_bar_initial_state(model, closure)
    q0 = q0 + np.array([0.0, 0.0, 0.01])
    c0 = _solve(cs).residual(model, q0, np.zeros(3))[0]
    t_eval = np.linspace(0, 0.3, 7)
    t, Q, QD = integrate_ode(model, lambda t, q, qd: _solve(cs).accelerations(model, q, qd, np.zeros(3))[0],
                             q0, np.zeros(3), 0.3, t_eval=t_eval)
    c = np.array([_solve(cs).residual(model, q, qd)[0] for q, qd in zip(Q, QD)])
    np.testing.assert_allclose(c, c0 * ((1 + t / T) * np.exp(-t / T))[:, None], atol=1e-7)


def four_bar_initial_state(model, closure, crank_angle=np.pi / 2, crank_rate=2.0):
    gq = gamma_q_partitioned(closure, [0])
    q, qd, _, _ = gq(model, np.array([crank_angle, -1.0, -1.8]), np.array([crank_rate, 0.0, 0.0]))
    return q, qd


@pytest.mark.slow
def test_four_bar_lagrange_and_fdgq_agree_and_hold_the_loop_for_ten_seconds():
    model, closure = four_bar()
    q0, qd0 = four_bar_initial_state(model, closure)
    cs = ConstraintSet(closure)
    assert cs.alpha == cs.beta == 1 / DEFAULT_BAUMGARTE_TIME
    t_eval = np.linspace(0, 10, 101)
    _, QL, QDL = integrate_ode(model, lambda t, q, qd: _solve(cs).accelerations(model, q, qd, np.zeros(3))[0], q0, qd0, 10.0,
                               rtol=1e-9, atol=1e-11, t_eval=t_eval)
    viol = [np.max(np.abs(np.concatenate(_solve(cs).residual(model, q, qd)))) for q, qd in zip(QL, QDL)]
    assert max(viol) <= 1e-6
    E = mb.energy(model, QL, QDL)
    Etot = E.KE + E.PE
    assert np.max(np.abs(Etot - Etot[0])) / abs(Etot[0]) < 1e-7       # passive: energy conserved
    mg = replace(model, gamma_q=gamma_q_partitioned(closure, [0]))
    _, QG, _ = integrate_ode(model, lambda t, q, qd: mb.fd_gq(mg, q, qd, np.zeros(3)), q0, qd0, 10.0,
                             rtol=1e-9, atol=1e-11, t_eval=t_eval)
    np.testing.assert_allclose(QL, QG, atol=1e-5)                       # two formulations, one motion


def test_revolute_closure_of_a_spatial_loop_keeps_the_axes_parallel():
    """A 3-D four-bar closed by a revolute joint: 5 rows, J full rank, q̈ keeps c̈ = 0."""
    model = mb.models.auto_tree(4, skew=0.0)         # planar chain about z
    closure = revolute_closure(3, [1.0, 0, 0], [0, 0, 1], None, [1.5, 0.5, 0], [0, 0, 1])
    terms = constraint_terms(closure, model, np.zeros(4), np.zeros(4))
    assert terms.J.shape == (5, 4)
    with pytest.raises(ConstraintError, match="singular"):   # a planar loop: z rows are redundant
        _solve(closure).accelerations(model, RNG.normal(size=4), np.zeros(4), np.zeros(4))
    lsq = ConstraintSet(closure, redundant="least_squares")
    q, qd = RNG.normal(size=4), RNG.normal(size=4)
    qdd, _ = _solve(lsq).accelerations(model, q, qd, np.zeros(4))
    t = constraint_terms(lsq, model, q, qd)
    np.testing.assert_allclose(t.J @ qdd + t.bias, -2 * lsq.alpha * t.cdot - lsq.beta ** 2 * t.c, atol=1e-7)


def test_gammaq_object_reports_residuals():
    model = mb.models.double_elbow()
    obj = GammaQ()
    c, cd = obj.residual(model, np.array([0.0, 0.1, 0.3]), np.array([0.0, 1.0, 0.0]))
    np.testing.assert_allclose(c, [0, -0.1, 0.1], atol=1e-12)
    np.testing.assert_allclose(cd, [0, 0.5, -0.5], atol=1e-12)
    qdd, tau_c = obj.accelerations(model, np.zeros(3), np.zeros(3), np.zeros(3))
    assert tau_c.shape == (3,) and abs(tau_c[1] + tau_c[2]) < 1e-10    # equal and opposite at the gears


# ------------------------------------------------------------------------------- bad input
def test_bad_gains_and_shapes_are_named():
    model, closure = four_bar()
    for kw in ({"time_constant": np.nan}, {"time_constant": 0.0}, {"alpha": np.nan}, {"beta": -1.0}):
        name = next(iter(kw))
        with pytest.raises(ValueError, match=name):
            ConstraintSet(closure, **kw)
    with pytest.raises(ValueError, match="redundant"):
        ConstraintSet(closure, redundant="maybe")
    with pytest.raises(TypeError, match="Constraint"):
        ConstraintSet("not a constraint")
    cs = ConstraintSet(closure)
    with pytest.raises(ValueError, match="q: expected shape"):
        _solve(cs).accelerations(model, np.zeros(2), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="qd: contains NaN"):
        _solve(cs).accelerations(model, np.zeros(3), np.array([0, np.nan, 0]), np.zeros(3))
    with pytest.raises(ValueError, match="tau"):
        _solve(cs).accelerations(model, np.zeros(3), np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="f_ext"):
        _solve(cs).accelerations(model, np.zeros(3), np.zeros(3), np.zeros(3), f_ext=np.zeros((2, 6)))
    with pytest.raises(ValueError, match="axes"):
        PointConstraint(0, [0, 0, 0], axes="xw")
    with pytest.raises(ValueError, match="point_a"):
        PointConstraint(0, [0, 0])
    with pytest.raises(ValueError, match="body"):
        constraint_terms(PointConstraint("nope", [0, 0, 0]), model, np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="Tstab"):
        gamma_q_linear(np.eye(2), Tstab=np.nan)
    with pytest.raises(ValueError, match="G: columns"):
        gamma_q_linear([[1, 1], [1, 1]])


def test_singular_constraint_jacobian_names_the_rows():
    model, _ = four_bar()
    closure3 = PointConstraint("rocker", [2.0, 0, 0], None, [2.5, 0, 0], name="closure")   # z row ≡ 0
    with pytest.raises(ConstraintError, match=r"closure\[2\]"):
        _solve(closure3).accelerations(model, np.array([1.0, -1.0, -1.0]), np.zeros(3), np.zeros(3))


def test_fd_gq_bad_gamma_q_is_reported():
    model = mb.models.planar(2)
    with pytest.raises(ValueError, match="gamma_q"):
        mb.fd_gq(model, np.zeros(2), np.zeros(2), np.zeros(2))
    bad_shape = replace(model, gamma_q=lambda m, q, qd: (q, qd, np.eye(3), np.zeros(2)))
    with pytest.raises(ValueError, match="G must have shape"):
        mb.fd_gq(bad_shape, np.zeros(2), np.zeros(2), np.zeros(2))
    nan = replace(model, gamma_q=lambda m, q, qd: (q, qd, np.eye(2), np.full(2, np.nan)))
    with pytest.raises(ValueError, match="gs with NaN"):
        mb.fd_gq(nan, np.zeros(2), np.zeros(2), np.zeros(2))
    not_tuple = replace(model, gamma_q=lambda m, q, qd: q)
    with pytest.raises(ValueError, match="tuple"):
        mb.fd_gq(not_tuple, np.zeros(2), np.zeros(2), np.zeros(2))
    zero_G = replace(model, gamma_q=lambda m, q, qd: (q, qd, np.zeros((2, 1)), np.zeros(2)))
    with pytest.raises(ConstraintError, match="Gᵀ H G"):
        mb.fd_gq(zero_G, np.zeros(2), np.zeros(2), np.zeros(2))


def test_partitioned_gamma_q_fails_clearly_far_from_the_loop():
    model, closure = four_bar()
    gq = gamma_q_partitioned(closure, [0])
    with pytest.raises(ConstraintError, match="did not converge|singular"):
        gq(model, np.array([0.0, 0.0, 0.0]), np.zeros(3))    # links stretched out: no assembly there
    with pytest.raises(ValueError, match="independent"):
        gamma_q_partitioned(closure, [0, 1])(model, np.zeros(3), np.zeros(3))


def test_solve_constrained_least_squares_for_duplicated_rows():
    H = np.diag([2.0, 3.0])
    J = np.array([[1.0, 0.0], [1.0, 0.0]])
    qdd, lam = solve_constrained(H, np.array([1.0, 1.0]), J, np.zeros(2), redundant="least_squares")
    np.testing.assert_allclose(qdd, [0.0, 1 / 3], atol=1e-12)
    np.testing.assert_allclose(lam, [-0.5, -0.5], atol=1e-12)


# ---- time-dependent constraints c(t, q) = 0 inside mb.simulate ---------------------------------
def _planar_tip(q, lengths=(1.0, 1.0, 1.0)):
    """Tip of mb.models.planar(3) in the x-y plane (links along x, hinges about z)."""
    a = np.cumsum(q)
    return np.array([sum(l * np.cos(x) for l, x in zip(lengths, a)), sum(l * np.sin(x) for l, x in zip(lengths, a))])


def test_simulate_passes_time_and_a_moving_point_constraint_holds_with_baumgarte():
    """The tip of a 3-link arm follows a circle p(t) (c(t, q) = tip(q) − p(t), everything by finite
    differences): mb.simulate gives the constraint the time of every stage; |c| ≤ 1e-6 over 5 s."""
    model = mb.models.planar(3)
    centre, radius, w = np.array([1.5, 0.5]), 0.4, 2.0
    ref = lambda t: centre + radius * np.array([np.cos(w * t), np.sin(w * t)])  # noqa: E731
    con = FunctionConstraint(lambda t, q: _planar_tip(q) - ref(t), time_dependent=True, name="moving_tip")
    # a consistent start: the tip on the circle at t = 0, moving with it (solve by Newton, then the velocity)
    q0 = np.array([0.3, 0.4, 0.5])
    for _ in range(30):
        terms = constraint_terms(con, model, q0, np.zeros(3), t=0.0)
        q0 = q0 - np.linalg.pinv(terms.J) @ terms.c
    terms = constraint_terms(con, model, q0, np.zeros(3), t=0.0)
    qd0 = np.linalg.pinv(terms.J) @ (-terms.cdot)          # ċ = J q̇ + ∂c/∂t = 0 (cdot holds ∂c/∂t at q̇ = 0)
    traj = mb.simulate(model, q0, qd0, 5.0, dt=2e-3, constraints=ConstraintSet(con))
    assert traj.status == "finished"
    c, cdot = traj.constraint_residual[:, 0], traj.constraint_residual[:, 1]
    assert np.max(np.abs(c)) <= 1e-6 and np.max(np.abs(cdot)) <= 1e-5
    tips = np.array([_planar_tip(q) for q in traj.q])
    np.testing.assert_allclose(tips, np.array([ref(t) for t in traj.t]), atol=1e-6)
    assert np.ptp(tips[:, 0]) > 0.7                          # it really went round


def test_joint_path_multiplier_is_the_inverse_dynamics_torque():
    """A pendulum driven along φ(t): q tracks φ, and Jᵀλ = H φ̈ + C (the torque that makes the motion)."""
    model = mb.models.planar(2)
    phi = lambda t: 0.3 * np.sin(1.5 * t)                     # noqa: E731
    drive = mb.JointPath(0, phi, velocity=lambda t: 0.45 * np.cos(1.5 * t),
                         acceleration=lambda t: -0.675 * np.sin(1.5 * t))
    traj = mb.simulate(model, [0.0, 0.2], [0.45, 0.0], 4.0, constraints=drive, integrator="rk45")
    assert np.max(np.abs(traj.q[:, 0] - phi(traj.t))) <= 1e-6
    for k in (10, 1500, len(traj.t) - 1):
        q, qd, t = traj.q[k], traj.qd[k], traj.t[k]
        qdd, lam = _solve(drive).accelerations(model, q, qd, np.zeros(2), t=t)
        tau_id = mb.rnea(model, q, qd, qdd)
        np.testing.assert_allclose(np.array([1.0, 0.0]) * lam[0], tau_id, atol=1e-9)
    # finite differences of φ give the same terms
    fd = mb.JointPath(0, phi)
    a, b = constraint_terms(fd, model, traj.q[7], traj.qd[7], t=0.7), constraint_terms(drive, model, traj.q[7], traj.qd[7], t=0.7)
    assert abs(a.cdot[0] - b.cdot[0]) < 1e-8 and abs(a.bias[0] - b.bias[0]) < 1e-6
    with pytest.raises(ValueError, match="one-variable"):
        constraint_terms(mb.JointPath(0, phi), mb.models.singlebody(), np.r_[0, 0, 0, 1.0, 0, 0, 0], np.zeros(6))
    with pytest.raises(ValueError, match="path"):
        constraint_terms(mb.JointPath(0, lambda t: np.nan), model, np.zeros(2), np.zeros(2), t=0.0)


def test_analytic_dc_dt_equals_the_difference_and_old_protocol_objects_still_run():
    model = mb.models.planar(2)
    c = lambda t, q: np.array([q[0] + q[1] - np.sin(t)])   # noqa: E731
    fd = FunctionConstraint(c, time_dependent=True)
    an = FunctionConstraint(c, time_dependent=True, dc_dt=lambda t, q: np.array([-np.cos(t)]))
    q, qd = np.array([0.1, 0.2]), np.array([0.3, -0.1])
    assert abs(constraint_terms(fd, model, q, qd, t=0.4).cdot[0] - constraint_terms(an, model, q, qd, t=0.4).cdot[0]) < 1e-9
    with pytest.raises(ValueError, match="time_dependent"):
        FunctionConstraint(lambda q: q[:1], dc_dt=lambda t, q: np.zeros(1))

    class OldStyle:            # the two-argument protocol of before: no t anywhere
        n_states = 0
        inner = ConstraintSet(JointCoupling(1, 0, ratio=1.0))

        def accelerations(self, model, q, qd, tau, f_ext=None):
            return self.inner.accelerations(model, q, qd, tau, f_ext)

        def residual(self, model, q, qd):
            return self.inner.residual(model, q, qd)

    traj = mb.simulate(model, [0.2, 0.2], [0.0, 0.0], 0.5, constraints=OldStyle())
    assert np.max(np.abs(traj.q[:, 0] - traj.q[:, 1])) < 1e-9


# ---- the C kernels behind the constrained solves (csrc/sim/kkt.c) -------------------------------------
def test_kkt_kernel_equals_the_augmented_system_and_reports_singular_cases():
    from multibody.core import _core
    for n, m in ((3, 1), (6, 2), (13, 10)):
        B = RNG.normal(size=(n, n))
        H = B @ B.T + n * np.eye(n)
        J, d, r = RNG.normal(size=(m, n)), RNG.normal(size=n), RNG.normal(size=m)
        st, qdd, lam = _core.kkt_solve(H, d, J, r, 1e-13, 1e-10)
        K = np.block([[H, -J.T], [J, np.zeros((m, m))]])       # TMT eq. (6)
        x = np.linalg.solve(K, np.concatenate([d, r]))
        assert st == 0
        np.testing.assert_allclose(qdd, x[:n], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(lam, x[n:], rtol=1e-10, atol=1e-10)
    st, qdd, lam = _core.kkt_solve(H, d, np.zeros((0, n)), np.zeros(0), 1e-13, 1e-10)
    assert st == 0 and lam.shape == (0,)
    np.testing.assert_allclose(qdd, np.linalg.solve(H, d), rtol=1e-10)
    assert _core.kkt_solve(-H, d, J, r, 1e-13, 1e-10)[0] == 1           # H not positive definite
    assert _core.kkt_solve(H, d, np.vstack([J, J[:1]]), np.r_[r, 0.0], 1e-13, 1e-10)[0] == 2   # dependent rows
    with pytest.raises(ValueError, match="J"):
        _core.kkt_solve(H, d, np.zeros((2, n + 1)), np.zeros(2), 1e-13, 1e-10)


def test_fdgq_kernel_equals_rbda_3_20():
    from multibody.core import _core
    n, ny = 5, 3
    B = RNG.normal(size=(n, n))
    H = B @ B.T + np.eye(n)
    C, tau, gs = RNG.normal(size=n), RNG.normal(size=n), RNG.normal(size=n)
    G = RNG.normal(size=(n, ny))
    qdd, tauc = _core.fdgq_solve(H, C, tau, G, gs)
    ydd = np.linalg.solve(G.T @ H @ G, G.T @ (tau - C - H @ gs))
    np.testing.assert_allclose(qdd, G @ ydd + gs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tauc, H @ qdd + C - tau, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(G.T @ tauc, 0, atol=1e-10)                   # the constraint force does no work
    assert _core.fdgq_solve(H, C, tau, np.c_[G[:, :2], G[:, :1]], gs) is None   # GᵀHG singular
