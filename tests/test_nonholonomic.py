"""Nonholonomic constraints: rows A(q) q̇ + a = 0 (VelocityConstraint) and a wheel rolling on a plane
(RollingContact), in the constrained dynamics, the simulation and the linearisation.

References: the Chaplygin sleigh's reduced equations (Chaplygin 1911; Bloch, Nonholonomic
Mechanics and Control, §1.7) solved by SciPy; the rolling disc's stability speed
ω² = m g R A / (C (C + m R²)) (Routh; for a uniform disc v² = g R / 3); finite differences of the
constraints along q ⊕ s q̇ for the biases; energy conservation (rolling does no work)."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import multibody as mb
from multibody.dynamics.constraints import ConstraintSet, constraint_terms, gamma_q_partitioned
from multibody.errors import ConstraintError
from multibody.model.constraints import RollingContact, VelocityConstraint


# ---- models ----------------------------------------------------------------------------------
def sleigh(m=2.0, a=0.4, I=0.05):
    """A Chaplygin sleigh: (x, y) of the blade point P, heading θ; the centre of mass a ahead of P."""
    b = mb.ModelBuilder("sleigh")
    b.add_body("px", None, "prismatic", axis=[1, 0, 0], mass=0.0, allow_massless=True)
    b.add_body("py", "px", "prismatic", axis=[0, 1, 0], mass=0.0, allow_massless=True)
    b.add_body("body", "py", "revolute", axis=[0, 0, 1], mass=m, com=[a, 0, 0], inertia=np.diag([0.03, 0.03, I]))
    return b.build()


def blade(with_bias):
    A = lambda q: np.array([[-np.sin(q[2]), np.cos(q[2]), 0.0]])                      # noqa: E731
    bias = (lambda q, qd: np.array([-(np.cos(q[2]) * qd[0] + np.sin(q[2]) * qd[1]) * qd[2]])) if with_bias else None
    return VelocityConstraint(A, bias=bias, name="blade")


def chain_disc(R=0.3, m=2.0, A=None, C=None):
    """A disc on the contact point's chain (x, y, yaw, lean at the ground, spin at the centre)."""
    A = m * R * R / 4 if A is None else A
    C = m * R * R / 2 if C is None else C
    b = mb.ModelBuilder("disc_chain")
    b.add_body("cx", None, "prismatic", axis=[1, 0, 0], mass=0.0, allow_massless=True)
    b.add_body("cy", "cx", "prismatic", axis=[0, 1, 0], mass=0.0, allow_massless=True)
    b.add_body("heading", "cy", "revolute", axis=[0, 0, 1], mass=0.0, allow_massless=True)
    b.add_body("lean", "heading", "revolute", axis=[1, 0, 0], mass=0.0, allow_massless=True)
    b.add_body("disc", "lean", "revolute", axis=[0, 1, 0], joint_translation=[0, 0, R], mass=m,
               inertia=np.diag([A, C, A]))
    return b.build(), RollingContact("disc", R, holonomic=False)


# ---- the terms ---------------------------------------------------------------------------------
def test_velocity_constraint_terms_and_its_difference_bias():
    model = sleigh()
    q, qd = np.array([0.3, -0.2, 0.7]), np.array([1.1, -0.4, 2.3])
    exact, diff = constraint_terms(blade(True), model, q, qd), constraint_terms(blade(False), model, q, qd)
    assert exact.velocity.tolist() == [True] and exact.c.tolist() == [0.0]
    assert exact.cdot[0] == pytest.approx(-np.sin(0.7) * 1.1 - np.cos(0.7) * 0.4, abs=1e-15)
    assert abs(exact.bias[0] - diff.bias[0]) < 1e-8
    np.testing.assert_array_equal(exact.J, diff.J)


@pytest.mark.parametrize("holonomic", [True, False])
def test_rolling_contact_bias_and_height_rate_are_derivatives(holonomic):
    """ċ = d/dt c and bias = d/dt (J q̇) at q̈ = 0, by central differences along q + s q̇ (the
    chain has no quaternion: q + s q̇ is a q̈ = 0 path), on a leaning, turning, spinning disc."""
    model, _ = chain_disc()
    con = RollingContact("disc", 0.3, holonomic=holonomic)
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = rng.uniform(-0.6, 0.6, 5)
        qd = rng.normal(size=5)
        t = constraint_terms(con, model, q, qd)
        h = 1e-5
        tp, tm = constraint_terms(con, model, q + h * qd, qd), constraint_terms(con, model, q - h * qd, qd)
        np.testing.assert_allclose(t.bias, (tp.J @ qd - tm.J @ qd) / (2 * h), atol=1e-8)
        if holonomic:
            assert t.cdot[0] == pytest.approx((tp.c[0] - tm.c[0]) / (2 * h), abs=1e-9)
            assert t.velocity.tolist() == [False, True, True]
        np.testing.assert_allclose(t.cdot, t.J @ qd, atol=1e-14)


def test_rolling_contact_point_is_the_lowest_point_of_the_rim():
    """The height row: centre height − R √(1 − (a·n)²) — the rim's lowest point, against a sampled
    rim, for a free disc in tilted poses above the plane."""
    model = mb.models.rolling_disc(8)
    con = RollingContact("disc", 0.05, height=0.01)
    rng = np.random.default_rng(7)
    th = np.linspace(0, 2 * np.pi, 200001)
    for _ in range(3):
        quat = rng.normal(size=4)
        q = np.concatenate([[0.1, -0.2, 0.3], quat / np.linalg.norm(quat)])
        s = mb.body_states(model, q)
        rim = s.p[0] + 0.05 * (np.outer(np.cos(th), s.R[0][:, 0]) + np.outer(np.sin(th), s.R[0][:, 2]))
        c = constraint_terms(con, model, q, np.zeros(6)).c[0]
        assert c == pytest.approx(rim[:, 2].min() - 0.01, abs=1e-10)


def test_velocity_rows_are_stabilised_at_the_velocity_level():
    """A q̈ + bias = −α s on the nonholonomic rows (ṡ + α s = 0); c̈ + 2αċ + β²c = 0 on the height row."""
    model = mb.models.rolling_disc(8)
    con = RollingContact("disc", 0.05)
    cs = ConstraintSet(con, time_constant=0.05)
    q = np.array([0.0, 0.0, 0.051, 1.0, 0.0, 0.0, 0.0])        # 1 mm high, sliding sideways
    qd = np.array([0.3, 5.0, 0.0, 0.25, 0.1, -0.02])
    qdd, _ = cs.accelerations(model, q, qd, np.zeros(6))
    t = constraint_terms(con, model, q, qd)
    cdd = t.J @ qdd + t.bias
    assert t.cdot[1:] @ t.cdot[1:] > 1e-4                         # the state does slide
    np.testing.assert_allclose(cdd[1:], -20.0 * t.cdot[1:], atol=1e-10)
    assert cdd[0] == pytest.approx(-40.0 * t.cdot[0] - 400.0 * t.c[0], abs=1e-10)


# ---- dynamics against references ---------------------------------------------------------------
def test_chaplygin_sleigh_against_its_reduced_equations():
    """mb.simulate with a VelocityConstraint against Chaplygin's reduced equations
    v̇ = a ω², (I + m a²) ω̇ = −m a v ω (SciPy, 1e-12), and the blade's drift measured."""
    m, a, I = 2.0, 0.4, 0.05
    model = sleigh(m, a, I)

    def reduced(t, y):
        v, w, th, x, yy = y
        return [a * w * w, -m * a * v * w / (I + m * a * a), w, v * np.cos(th), v * np.sin(th)]

    ref = solve_ivp(reduced, (0, 3), [1.0, 2.0, 0.0, 0.0, 0.0], rtol=1e-12, atol=1e-12, dense_output=True)
    for bias in (True, False):
        traj = mb.simulate(model, [0.0, 0.0, 0.0], [1.0, 0.0, 2.0], 3.0, dt=1e-3, constraints=blade(bias))
        y = ref.sol(traj.t)
        np.testing.assert_allclose(traj.q[:, 2], y[2], atol=1e-7)
        np.testing.assert_allclose(traj.q[:, 0], y[3], atol=1e-7)
        np.testing.assert_allclose(traj.q[:, 1], y[4], atol=1e-7)
        np.testing.assert_allclose(traj.qd[:, 2], y[1], atol=1e-7)
        assert np.abs(traj.constraint_residual[:, 1]).max() < 1e-9      # blade drift (m/s)
    assert abs(y[1][-1]) < 0.5 * 2.0 and y[0][-1] > 1.0                # it straightens and speeds up


def test_rolling_disc_stability_speed():
    """Upright rolling is stable above ω² = m g R A / (C (C + m R²)) — v² = g R / 3 for a uniform
    disc — the eigenvalues of mb.linearize in minimal coordinates across it."""
    R, m, g = 0.3, 2.0, 9.81
    model, con = chain_disc(R, m)
    A, C = m * R * R / 4, m * R * R / 2
    v_c = R * np.sqrt(m * g * R * A / (C * (C + m * R * R)))
    assert v_c == pytest.approx(np.sqrt(g * R / 3), rel=1e-14)
    for factor, stable in ((0.99, False), (1.01, True), (3.0, True), (0.5, False)):
        v = factor * v_c
        lin = mb.linearize(model, np.zeros(5), [v, 0, 0, 0, v / R], constraints=con)
        assert lin.A.shape == (2 * 5 - 2, 2 * 5 - 2)             # 5 positions, 3 speeds
        e = np.linalg.eigvals(lin.A)
        lean = e[np.abs(e) > 1e-3]              # the others: ignorable coordinates' zeros (±1e-5 by rounding)
        assert len(lean) == 2
        if stable:
            assert np.abs(lean.real).max() < 1e-6 and np.abs(lean.imag).min() > 0.1
        else:
            assert lean.real.max() > 1e-2
    # a hoop (A = m R²/2, C = m R²): v² = g R / 4
    model, con = chain_disc(R, m, A=m * R * R / 2, C=m * R * R)
    for factor, stable in ((0.99, False), (1.01, True)):
        v = factor * np.sqrt(g * R / 4)
        e = np.linalg.eigvals(mb.linearize(model, np.zeros(5), [v, 0, 0, 0, v / R], constraints=con).A)
        assert (np.abs(e[np.abs(e) > 1e-3].real).max() < 1e-6) == stable


@pytest.mark.slow
def test_rolling_disc_on_a_free_joint_conserves_energy_and_holds_its_constraints():
    """A free (quaternion) disc rolling, leaning and turning: rolling does no work, so the energy
    stays; the drift of the rows with Baumgarte against without."""
    model = mb.models.rolling_disc(8)
    con = RollingContact("disc", 0.05)
    lean = 0.2
    quat = np.array([np.cos(lean / 2), np.sin(lean / 2), 0, 0])     # leaning 0.2 rad about x
    q0 = np.concatenate([[0, 0, 0.05 * np.cos(lean)], quat])
    w = np.array([0.0, 15.0, 0.0])                                   # spin about the disc's axis
    t0 = constraint_terms(con, model, q0, np.concatenate([w, np.zeros(3)]))
    # choose v so that the material contact point is at rest: solve the 3 rows for the linear velocity
    Jv = t0.J[:, 3:]
    v = -np.linalg.solve(Jv, t0.J[:, :3] @ w)
    qd0 = np.concatenate([w, v])
    np.testing.assert_allclose(constraint_terms(con, model, q0, qd0).cdot, 0, atol=1e-14)
    E0 = mb.energy(model, q0, qd0)
    height = {}
    for gains in ({}, {"alpha": 0.0, "beta": 0.0}):
        traj = mb.simulate(model, q0, qd0, 3.0, dt=1e-3, constraints=ConstraintSet(con, **gains))
        E = mb.energy(model, traj.q, traj.qd)
        assert np.abs(E.KE + E.PE - (E0.KE + E0.PE)).max() < 1e-6 * E0.KE
        c = np.abs(traj.constraint_residual[:, 0, 0])              # the contact point's height (m)
        height[bool(gains)] = (c[traj.t <= 0.5].max(), c[traj.t >= 2.0].max())
        assert np.abs(traj.constraint_residual[:, 1]).max() < 1e-7  # the rows' rates (m/s)
    held, free = height[False], height[True]
    assert held[1] <= held[0] < 1e-9            # Baumgarte: the first steps' error, held
    assert free[1] > 10 * free[0]               # without it the height drifts away (∝ t²)


# ---- bad input ---------------------------------------------------------------------------------
def test_bad_input_is_named():
    with pytest.raises(ValueError, match="radius"):
        RollingContact("w", -0.3)
    with pytest.raises(ValueError, match="axis"):
        RollingContact("w", 0.3, axis=[0, 0, 0])
    with pytest.raises(TypeError, match="A: expected a callable"):
        VelocityConstraint(np.eye(3))
    with pytest.raises(ValueError, match="a: a time_dependent"):
        VelocityConstraint(lambda q: np.eye(3)[:1], time_dependent=True)
    model = sleigh()
    bad = VelocityConstraint(lambda q: np.ones((1, 2)), name="short")
    with pytest.raises(ValueError, match=r"short: A\(q\) must return a finite \(m, 3\)"):
        ConstraintSet(bad).accelerations(model, np.zeros(3), np.zeros(3), np.zeros(3))
    nan = VelocityConstraint(lambda q: np.array([[np.nan, 0, 0]]), name="nan rows")
    with pytest.raises(ValueError, match="nan rows"):
        ConstraintSet(nan).residual(model, np.zeros(3), np.zeros(3))
    disc, _ = chain_disc()
    flat = RollingContact("disc", 0.3, axis=[0, 0, 1], name="flat")
    with pytest.raises(ConstraintError, match="flat: the wheel's axis is normal to the plane"):
        constraint_terms(flat, disc, np.zeros(5), np.zeros(5))
    with pytest.raises(ValueError, match="nonholonomic rows"):
        gamma_q_partitioned(blade(True), [2])(model, np.zeros(3), np.zeros(3))


# ---- the symbolic side: Kane's equations by projection -----------------------------------------
def test_kane_equations_of_a_rolling_disc_agree_with_the_kkt_dynamics():
    """The symbolic rolling rows and Kane's projection give the accelerations the numeric KKT solve
    gives, at random leaning, turning, spinning states."""
    import sympy as sp
    from multibody.symbolic.nonholonomic import kane_equations

    model, con = chain_disc()
    q, dq = sp.symbols("x y psi phi theta"), sp.symbols("dx dy dpsi dphi dtheta")
    red = kane_equations(model, [con], independent=[2, 3, 4], q=q, dq=dq)
    assert sp.simplify(red.rows * red.N) == sp.zeros(2, 3)           # A N = 0: no work by the constraint forces
    f = sp.lambdify([q, dq], [red.M, red.f, red.N], "numpy")
    cs = ConstraintSet(con)
    rng = np.random.default_rng(3)
    for _ in range(4):
        qv = rng.uniform(-0.7, 0.7, 5)
        u = rng.normal(size=3)
        M, F, N = (np.array(x, dtype=float) for x in f(qv, np.zeros(5)))
        qd = N @ u
        M, F, N = (np.array(x, dtype=float) for x in f(qv, qd))
        ud = np.linalg.solve(M, -F.ravel())
        qdd, _ = cs.accelerations(model, qv, qd, np.zeros(5))
        np.testing.assert_allclose(ud, qdd[2:], atol=1e-10)


def test_kane_equations_give_the_discs_stability_speed_symbolically():
    """Linearised about upright rolling at spin Ω, the disc's characteristic polynomial is
    λ² [A (A + m R²) λ² + C (C + m R²) Ω² − m g R A] / (A (A + m R²)): stable for
    Ω² > m g R A / (C (C + m R²)) (Routh), with m, A, C, g symbols."""
    import sympy as sp
    from multibody.symbolic.nonholonomic import kane_equations

    m, A, C, g, W, lam = sp.symbols("m A C g Omega lambda", positive=True)
    R = sp.Rational(1, 2)
    b = mb.ModelBuilder("disc", gravity=(0, 0, -g))
    b.add_body("cx", None, "prismatic", axis=[1, 0, 0], mass=0, allow_massless=True)
    b.add_body("cy", "cx", "prismatic", axis=[0, 1, 0], mass=0, allow_massless=True)
    b.add_body("heading", "cy", "revolute", axis=[0, 0, 1], mass=0, allow_massless=True)
    b.add_body("lean", "heading", "revolute", axis=[1, 0, 0], mass=0, allow_massless=True)
    b.add_body("disc", "lean", "revolute", axis=[0, 1, 0], joint_translation=[0, 0, 0.5], mass=m,
               inertia=[A, C, A])
    q, dq = sp.symbols("x y psi phi theta"), sp.symbols("dx dy dpsi dphi dtheta")
    red = kane_equations(b.build(), [RollingContact("disc", 0.5, holonomic=False)], independent=[2, 3, 4],
                         q=q, dq=dq)
    state = [q[3], dq[2], dq[3], dq[4]]
    at = {q[0]: 0, q[1]: 0, q[2]: 0, q[3]: 0, q[4]: 0, dq[2]: 0, dq[3]: 0, dq[4]: W}   # x, y, ψ, θ ignorable
    M0, F = sp.nsimplify(red.M.subs(at)), sp.nsimplify(red.f.jacobian(state).subs(at))
    Amat = sp.zeros(4, 4)
    Amat[0, 2] = 1
    Amat[1:, :] = -M0.LUsolve(F)
    p = sp.cancel((Amat - lam * sp.eye(4)).det(method="berkowitz"))
    want = lam ** 2 * (A * (A + m * R ** 2) * lam ** 2 + C * (C + m * R ** 2) * W ** 2 - m * g * R * A) / (A * (A + m * R ** 2))
    assert sp.cancel(p - want) == 0
