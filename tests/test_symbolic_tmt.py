"""TMT method (IRIS 2015 paper, eqs. 1–9) against DP_EOM, Lagrange, the numeric kernels and physics."""
import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.symbolic.lagrange import derive_lagrange, lagrange_from_energies
from multibody.symbolic.tmt import (
    Constraint,
    Contact,
    LinearDamper,
    LinearSpring,
    PointForce,
    RotationalDamper,
    RotationalSpring,
    TMTBody,
    TMTSystem,
    derive_tmt,
    joint_chain,
    newton_restitution,
    tmt_system,
    tmt_system_from_model,
    tree_kinematics,
)
from multibody.symbolic import model_symbols


# --- the seed mechanisms as TMT systems (built from the models in multibody.models) ---------
def double_pendulum_report_model():
    model = mb.models.double_pendulum(symbolic=True)
    q, dq, _, _, params = model_symbols(model)
    return model, (tuple(q), tuple(dq), params, mb.models.parameters(model))


def double_pendulum_report():
    model, (q, dq, _, values) = double_pendulum_report_model()
    info = mb.models.seed_info(model)
    return tmt_system_from_model(model, q=q, dq=dq, actuated=[], values=values, q0=info.q0, dq0=info.dq0)


def biped_upper_body(**kw):
    return tmt_system(mb.models.biped_upper_body(symbolic=True, **kw))


def flapping_flyer(**kw):
    return tmt_system(mb.models.flapping_flyer(symbolic=True, **kw))


def clemens_joint():
    return tmt_system(mb.models.clemens_joint(symbolic=True))


# --- OpenDE report, appendix D.2 (xD_DP.m): the matrices DP_EOM.m saved ---------------------
th1, th2, Dth1, Dth2 = sp.symbols("th1 th2 Dth1 Dth2", real=True)
D_q = sp.Matrix([[sp.Rational(1001, 600) + sp.cos(th2), sp.cos(th2) / 2 + sp.Rational(401, 1200)],
                 [sp.cos(th2) / 2 + sp.Rational(401, 1200), sp.Rational(401, 1200)]])
C_q = sp.Matrix([[-sp.sin(th2) * Dth2 / 2, -sp.sin(th2) * Dth1 / 2 - sp.sin(th2) * Dth2 / 2],
                 [sp.sin(th2) * Dth1 / 2, 0]])
g_q = sp.Matrix([sp.Rational(2943, 200) * sp.cos(th1) + sp.Rational(981, 200) * sp.cos(th1 + th2),
                 sp.Rational(981, 200) * sp.cos(th1 + th2)])


def _zero(m):
    return all(sp.simplify(e) == 0 for e in m)


def _rng(seed):
    return np.random.default_rng(seed)


# ==============================================================================================
# DP_EOM exactly
# ==============================================================================================
def test_report_double_pendulum_tmt_system_reproduces_DP_EOM():
    s = double_pendulum_report()
    e = s.equations()
    v = s.values
    assert _zero(e.M.subs(v) - D_q)
    assert _zero(e.b.subs(v) - C_q * sp.Matrix([Dth1, Dth2]))
    assert _zero(e.g.subs(v) - g_q)
    np.testing.assert_allclose(s.q0, [np.pi / 4, -np.pi / 4])


def test_report_double_pendulum_model_via_derive_tmt_reproduces_DP_EOM():
    model, (q, dq, params, values) = double_pendulum_report_model()
    e = derive_tmt(model, q=q, dq=dq)
    assert _zero(e.M.subs(values) - D_q)
    assert _zero(e.b.subs(values) - C_q * sp.Matrix([Dth1, Dth2]))
    assert _zero(e.g.subs(values) - g_q)


def test_report_double_pendulum_tmt_terms():
    s = double_pendulum_report()
    e = s.equations()
    n = 2
    assert e.extra["T"].shape == (12, n) and e.extra["Mdiag"].shape == (12, 12)
    assert e.extra["D"].shape == (12, n)
    # D q̇ is the convective part of ẍ: ẍ = T q̈ + D q̇ (eq. 3), checked by finite differences
    rng = _rng(0)
    q, dq, qdd = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
    h = 1e-4
    x = lambda t: s.evaluate("x", q=q + dq * t + qdd * t * t / 2)  # noqa: E731
    xdd_fd = (x(h) - 2 * x(0) + x(-h)) / h**2
    T = s.evaluate("T", q=q)
    Dqd = s.evaluate("Dqd", q=q, dq=dq)
    # translational rows of x are the CoM positions (3 per body)
    rows = [0, 1, 2, 6, 7, 8]
    np.testing.assert_allclose(xdd_fd.ravel(), (T @ qdd + Dqd.ravel())[rows], atol=1e-6)


# ==============================================================================================
# TMT = Lagrange = numeric kernels
# ==============================================================================================
def _fns(eom):
    import symengine as se

    args = list(eom.q) + list(eom.dq)
    fs = [se.Lambdify(args, m, cse=True) for m in (eom.M, eom.b, eom.g)]

    def f(q, dq):
        x = np.concatenate([q, dq])
        M, b, g = (np.asarray(fn(x), float) for fn in fs)
        return M.reshape(len(q), len(q)), b.reshape(-1), g.reshape(-1)
    return f


def test_tmt_equals_lagrange_on_report_double_pendulum():
    model, (q, dq, params, values) = double_pendulum_report_model()
    a = derive_tmt(model, q=q, dq=dq).subs(values)
    b = derive_lagrange(model, q=q, dq=dq).subs(values)
    fa, fb = _fns(a), _fns(b)
    rng = _rng(1)
    for _ in range(5):
        x, v = rng.uniform(-3, 3, 2), rng.normal(size=2)
        for u, w in zip(fa(x, v), fb(x, v)):
            np.testing.assert_allclose(u, w, atol=1e-10, rtol=0)


def _planar_n_link(n):
    q = sp.symbols(f"a0:{n}")
    dq = sp.symbols(f"da0:{n}")
    ls = sp.symbols(f"l0:{n}")
    ms = sp.symbols(f"m0:{n}")
    g = sp.Symbol("g")
    bodies, joint, ang = [], sp.zeros(2, 1), 0
    for i in range(n):
        ang = ang + q[i]
        e = sp.Matrix([sp.cos(ang), sp.sin(ang)])
        bodies.append(TMTBody(ms[i], ms[i] * ls[i] ** 2 / 12, joint + e * ls[i] / 2, ang, name=f"link{i}"))
        joint = joint + e * ls[i]
    params = ls + ms + (g,)
    rng = _rng(n)
    values = {p: float(rng.uniform(0.5, 1.5)) for p in params}
    values[g] = 9.81
    return TMTSystem(q, dq, bodies, params=params, gravity=[0, -g], values=values)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_tmt_equals_lagrange_on_planar_n_link_pendulum(n):
    s = _planar_n_link(n)
    e = s.equations()
    T, V = s.energy()
    lag = lagrange_from_energies(T, V, s.q, s.dq, params=s.params)
    fa, fb = _fns(e.subs(s.values)), _fns(lag.subs(s.values))
    rng = _rng(10 + n)
    for _ in range(4):
        x, v = rng.uniform(-3, 3, n), rng.normal(size=n)
        for u, w in zip(fa(x, v), fb(x, v)):
            np.testing.assert_allclose(u, w, atol=1e-10, rtol=0)


def test_tmt_equals_lagrange_and_kernels_on_3d_chain():
    from multibody.dynamics import crba, rnea
    from multibody.models import auto_tree

    model = auto_tree(4, 1, 0.9, 0.85)   # a skewed spatial chain
    ft, fl = _fns(derive_tmt(model)), _fns(derive_lagrange(model))
    rng = _rng(4)
    for _ in range(4):
        q, dq = rng.uniform(-np.pi, np.pi, 4), rng.normal(size=4)
        Mt, bt, gt = ft(q, dq)
        Ml, bl, gl = fl(q, dq)
        np.testing.assert_allclose(Mt, Ml, atol=1e-10, rtol=0)
        np.testing.assert_allclose(bt, bl, atol=1e-10, rtol=0)
        np.testing.assert_allclose(gt, gl, atol=1e-10, rtol=0)
        np.testing.assert_allclose(Mt, crba(model, q), atol=1e-10, rtol=0)
        np.testing.assert_allclose(bt + gt, rnea(model, q, dq, 0 * dq), atol=1e-10, rtol=0)


@pytest.mark.slow
def test_tmt_agrees_with_crba_rnea_on_random_auto_trees():
    from multibody.dynamics import crba, rnea
    from multibody.models import auto_tree

    rng = _rng(5)
    for nb, bf, skew, taper in [(5, 1.5, 0.4, 0.9), (7, 2, 0.3, 0.8), (5, 1, -1.2, 0.95), (10, 2, 0.4, 0.9)]:
        model = auto_tree(nb, bf, skew, taper)
        f = _fns(derive_tmt(model))
        for _ in range(3):
            q, dq = rng.uniform(-np.pi, np.pi, nb), rng.normal(size=nb)
            M, b, g = f(q, dq)
            np.testing.assert_allclose(M, crba(model, q), atol=1e-10, rtol=0)
            np.testing.assert_allclose(g, rnea(model, q, 0 * dq, 0 * dq), atol=1e-10, rtol=0)
            np.testing.assert_allclose(b + g, rnea(model, q, dq, 0 * dq), atol=1e-10, rtol=0)


def test_same_axis_rotations_merge_correctly_across_joint_types():
    """Rz–Rz–Px–Rz (merged into one angle sum), a skewed Ry, a helical and a fixed body."""
    from multibody.dynamics import crba, rnea
    from multibody.model.builder import ModelBuilder

    b = ModelBuilder("merge")
    I = np.diag([0.02, 0.03, 0.04])
    b.add_body("a", -1, "Rz", mass=1.0, com=[0.4, 0.1, 0], inertia=I)
    b.add_body("b", 0, "Rz", mass=0.8, com=[0.3, 0, 0.1], inertia=I, joint_translation=[0.9, 0, 0])
    b.add_body("c", 1, "Px", mass=0.6, com=[0.1, 0.2, 0], inertia=I, joint_translation=[0.7, 0, 0])
    b.add_body("d", 2, "Rz", mass=0.5, com=[0.2, 0, 0], inertia=I, joint_translation=[0.1, 0.2, 0])
    b.add_body("e", 3, "Ry", mass=0.4, com=[0.1, 0.1, 0.1], inertia=I, joint_translation=[0.5, 0, 0],
               joint_rotation=[[1, 0, 0], [0, np.cos(0.6), -np.sin(0.6)], [0, np.sin(0.6), np.cos(0.6)]])
    b.add_body("f", 4, "helical", axis=[0, 0, 1], pitch=0.2, mass=0.3, com=[0, 0.1, 0.2], inertia=I,
               joint_translation=[0.3, 0, 0])
    b.add_body("g", 5, "fixed", mass=0.2, com=[0.1, 0, 0], inertia=I, joint_translation=[0.2, 0.1, 0])
    model = b.build()
    kin = tree_kinematics(model)
    q = kin["q"]
    # body d's rotation is one angle sum, as in DP_EOM's cos(th1 + th2)
    assert kin["R"][3][0, 0] == sp.cos(q[0] + q[1] + q[3])
    rng = _rng(12)
    for f in (derive_tmt, derive_lagrange):
        fn = _fns(f(model))
        for _ in range(3):
            qq, dq = rng.uniform(-2, 2, model.nq), rng.normal(size=model.nq)
            M, bb, g = fn(qq, dq)
            np.testing.assert_allclose(M, crba(model, qq), atol=1e-10, rtol=0)
            np.testing.assert_allclose(bb + g, rnea(model, qq, dq, 0 * dq), atol=1e-10, rtol=0)


def test_free_3d_body_gyroscopic_term_equals_lagrange():
    """Euler angles x-y-z, full inertia: TMT (eq. 2 in body coordinates + ω×Iω) = Lagrange."""
    x, y, z, a, b, c = sp.symbols("x y z a b c")
    q = [x, y, z, a, b, c]
    dq = sp.symbols("dx dy dz da db dc")
    m, g = sp.symbols("m g")
    I = sp.Matrix([[0.3, 0.02, -0.01], [0.02, 0.5, 0.03], [-0.01, 0.03, 0.7]])
    R, _, _ = joint_chain([("x", a), ("y", b), ("z", c)], q)
    s = TMTSystem(q, dq, [TMTBody(m, I, sp.Matrix([x, y, z]), R, name="box")], params=[m, g],
                  gravity=[0, 0, -g], values={m: 2.0, g: 9.81})
    e = s.equations()
    # Lagrange with ω from Ṙ = R skew(ω_B), written out independently of the TMT code
    Rd = sum((R.diff(qi) * dqi for qi, dqi in zip(q, dq)), sp.zeros(3, 3))
    W = R.T * Rd
    w = sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])
    v = sp.Matrix(dq[:3])
    T = m * (v.T * v)[0] / 2 + (w.T * I * w)[0] / 2
    lag = lagrange_from_energies(T, m * g * z, q, dq, params=[m, g])
    fa, fb = _fns(e.subs(s.values)), _fns(lag.subs(s.values))
    rng = _rng(6)
    for _ in range(4):
        qq, vv = rng.uniform(-1.2, 1.2, 6), rng.normal(size=6)
        for u, w_ in zip(fa(qq, vv), fb(qq, vv)):
            np.testing.assert_allclose(u, w_, atol=1e-10, rtol=0)
    # the gyroscopic part is really there: without it b would differ
    assert any(sp.sympify(r) != 0 for r in e.extra["b_convective"])


# ==============================================================================================
# forces: gravity, general point forces, springs, dampers (eq. 4)
# ==============================================================================================
def test_springs_dampers_point_forces():
    x, y, dx, dy = sp.symbols("x y dx dy")
    m, k, l0, c, kr, cr, Fx, Fy = sp.symbols("m k l0 c k_r c_r F_x F_y")
    r = sp.Matrix([x, y])
    s = TMTSystem([x, y], [dx, dy], [TMTBody(m, 0, r, 0, name="point")],
                  params=[m, k, l0, c, kr, cr, Fx, Fy],
                  springs=[LinearSpring([0, 0], r, k, l0), RotationalSpring(sp.atan2(y, x), kr, 0.3)],
                  dampers=[LinearDamper([0, 0], r, c), RotationalDamper(x, cr)],
                  forces=[PointForce(r, [Fx, Fy])],
                  values={m: 1.0, k: 3.0, l0: 0.5, c: 0.7, kr: 0.2, cr: 0.4, Fx: 1.5, Fy: -0.5})
    e = s.equations()
    # g = ∂V/∂q (springs; no gravity here)
    V = e.extra["potential_energy"]
    assert _zero(e.g - sp.Matrix([V.diff(x), V.diff(y)]))
    L = sp.sqrt(x**2 + y**2)
    expected_fk = -k * (L - l0) * r / L
    assert _zero(e.extra["f_springs"] - expected_fk - (-kr * (sp.atan2(y, x) - 0.3)) * sp.Matrix(
        [sp.atan2(y, x).diff(x), sp.atan2(y, x).diff(y)]))
    # dampers: linear damper to the origin is −c·v; rotational damper on x is −c_r ẋ
    assert _zero(e.extra["f_dampers"] - (-c * sp.Matrix([dx, dy]) - cr * sp.Matrix([dx, 0])))
    assert _zero(e.extra["f_forces"] - sp.Matrix([Fx, Fy]))
    # b collects −f_v − f_c/nc, so M q̈ = Σ forces
    qdd, _ = s.solve_accelerations(q=[0.8, 0.6], dq=[0.2, -0.1])
    vals = s.values
    f = np.array([float(v) for v in (e.extra["f_springs"] + e.extra["f_dampers"] + e.extra["f_forces"]).subs(
        {**vals, x: 0.8, y: 0.6, dx: 0.2, dy: -0.1})])
    np.testing.assert_allclose(qdd, f / 1.0, atol=1e-12)
    # dampers dissipate
    rng = _rng(7)
    for _ in range(5):
        pos, vel = rng.normal(size=2), rng.normal(size=2)
        fv = s.evaluate("f_dampers", q=pos, dq=vel).ravel()
        assert vel @ fv < 0


def test_point_force_is_virtual_work():
    s = _planar_n_link(3)
    ls = s.params[:3]
    tip = sp.Matrix([sum(ls[i] * sp.cos(sum(s.q[: i + 1])) for i in range(3)),
                     sum(ls[i] * sp.sin(sum(s.q[: i + 1])) for i in range(3))])
    F = sp.Matrix([2.0, -1.0])
    s2 = TMTSystem(s.q, s.dq, s.bodies, params=s.params, gravity=s.gravity,
                   forces=[PointForce(tip, F, name="tip")], values=s.values)
    fq = s2.evaluate("f_forces", q=[0.3, -0.4, 0.9]).ravel()
    # δW = F·δr for each δq_i, by finite differences of the tip position
    ftip = sp.lambdify([s.q, s.params], tip)
    p = [s.values[k] for k in s.params]
    h = 1e-6
    for i in range(3):
        dqv = np.zeros(3)
        dqv[i] = h
        q0 = np.array([0.3, -0.4, 0.9])
        dr = (np.array(ftip(q0 + dqv, p), float) - np.array(ftip(q0 - dqv, p), float)).ravel() / (2 * h)
        assert fq[i] == pytest.approx(float(np.array([2.0, -1.0]) @ dr), abs=1e-7)


# ==============================================================================================
# constraints: eq. (5), (6)
# ==============================================================================================
def _four_bar():
    a1, a2, a3 = sp.symbols("a1 a2 a3")
    d1, d2, d3 = sp.symbols("da1 da2 da3")
    L0, L1, L2, L3, m, g = sp.symbols("L0 L1 L2 L3 m g")
    e = lambda a: sp.Matrix([sp.cos(a), sp.sin(a)])  # noqa: E731
    p1 = L1 * e(a1)
    p2 = p1 + L2 * e(a2)
    p3 = p2 + L3 * e(a3)
    bodies = [TMTBody(m * L1, m * L1**3 / 12, L1 / 2 * e(a1), a1, name="crank"),
              TMTBody(m * L2, m * L2**3 / 12, p1 + L2 / 2 * e(a2), a2, name="coupler"),
              TMTBody(m * L3, m * L3**3 / 12, p2 + L3 / 2 * e(a3), a3, name="rocker")]
    return TMTSystem([a1, a2, a3], [d1, d2, d3], bodies, params=[L0, L1, L2, L3, m, g],
                     gravity=[0, -g], constraints=[Constraint(p3 - sp.Matrix([L0, 0]), name="ground_pivot")],
                     contacts=[Contact(p2, directions=[[0, 1]], name="coupler_joint")],
                     values={L0: 2.0, L1: 0.8, L2: 1.9, L3: 1.2, m: 1.0, g: 9.81})


def _consistent_four_bar_state(s, a1=0.9, w1=1.3):
    from scipy.optimize import fsolve

    def res(x):
        return s.evaluate("constraint", q=[a1, *x]).ravel()
    x = fsolve(res, [0.3, 1.8], xtol=1e-13)
    q = np.array([a1, *x])
    J = s.evaluate("constraint_jacobian", q=q)
    # q̇ with q̇_1 = w1 in the null space of T_cn
    dq23 = np.linalg.solve(J[:, 1:], -J[:, 0] * w1)
    return q, np.array([w1, *dq23])


def _energy_rate(s, q, dq, qdd, h=1e-6):
    T = lambda qq, vv: s.evaluate("kinetic_energy", q=qq, dq=vv).item()  # noqa: E731
    V = lambda qq: s.evaluate("potential_energy", q=qq).item()  # noqa: E731
    return (T(q + h * dq, dq + h * qdd) - T(q - h * dq, dq - h * qdd)) / (2 * h) + \
        (V(q + h * dq) - V(q - h * dq)) / (2 * h)


def _cdd_fd(s, q, dq, qdd, t=0.0, h=1e-4):
    c = lambda tt: s.evaluate("constraint", q=q + dq * tt + qdd * tt * tt / 2, t=t + tt).ravel()  # noqa: E731
    return (c(h) - 2 * c(0) + c(-h)) / h**2


def test_four_bar_augmented_system():
    s = _four_bar()
    e = s.equations()
    assert e.extra["constraint_jacobian"].shape == (2, 3)
    q, dq = _consistent_four_bar_state(s)
    assert np.abs(s.evaluate("constraint", q=q)).max() < 1e-12
    qdd, lam = s.solve_accelerations(q=q, dq=dq)
    # c̈ = 0 along the motion (finite differences, independent of D_cn)
    np.testing.assert_allclose(_cdd_fd(s, q, dq, qdd), 0, atol=2e-6)
    # energy is conserved: the multipliers do no work
    assert abs(_energy_rate(s, q, dq, qdd)) < 1e-6
    # the augmented matrix is the paper's (6): its first block row is M q̈ − T_cnᵀ λ = d
    M = s.evaluate("M", q=q)
    Tcn = s.evaluate("constraint_jacobian", q=q)
    d = -(s.evaluate("b", q=q, dq=dq) + s.evaluate("g", q=q)).ravel()
    np.testing.assert_allclose(M @ qdd - Tcn.T @ lam, d, atol=1e-10)
    # the sign of the multiplier rows matters: with +D_cn q̇ (the paper's print) c̈ ≠ 0
    gamma = s.evaluate("constraint_convective", q=q, dq=dq).ravel()
    A = np.block([[M, -Tcn.T], [Tcn, np.zeros((2, 2))]])
    wrong = np.linalg.solve(A, np.concatenate([d, +gamma]))[:3]
    assert np.abs(_cdd_fd(s, q, dq, wrong)).max() > 1e-3


def test_four_bar_energy_rate_with_torque():
    s0 = _four_bar()
    tau = sp.Symbol("tau")
    s = TMTSystem(s0.q, s0.dq, s0.bodies, params=s0.params, gravity=s0.gravity,
                  constraints=s0.constraints, tau=[tau], S=[[1, 0, 0]], values=s0.values)
    q, dq = _consistent_four_bar_state(s, a1=2.0, w1=-0.7)
    qdd, _ = s.solve_accelerations(q=q, dq=dq, tau=[3.0])
    assert _energy_rate(s, q, dq, qdd) == pytest.approx(3.0 * dq[0], abs=1e-6)


def test_biped_constrained_equals_pinned_and_momentum_balance():
    s5, s3 = biped_upper_body(), biped_upper_body(stance_foot_coordinates=False)
    q5, dq5 = s5.q0, s5.dq0
    qdd5, lam = s5.solve_accelerations(q=q5, dq=dq5)
    qdd3, _ = s3.solve_accelerations(q=s3.q0, dq=s3.dq0)
    np.testing.assert_allclose(qdd5[2:], qdd3, atol=1e-10)     # q = [xs, ys, q1, q2, q3]
    np.testing.assert_allclose(qdd5[:2], 0, atol=1e-10)
    # Σ m_i a_i = Σ m_i g + λ (λ: the ground's force on the stance foot)
    h = 1e-4
    x = lambda t: s5.evaluate("x", q=q5 + dq5 * t + qdd5 * t * t / 2).ravel()  # noqa: E731
    xdd = (x(h) - 2 * x(0) + x(-h)) / h**2
    v = s5.values
    sym = {str(k): val for k, val in v.items()}
    masses = [sym["m_f"], sym["m_b"], sym["m_f"], sym["m_u"]]
    acc = sum(mi * xdd[3 * i:3 * i + 2] for i, mi in enumerate(masses))
    grav = sum(masses) * sym["g"] * np.array([np.sin(sym["gamma"]), -np.cos(sym["gamma"])])
    np.testing.assert_allclose(acc, grav + lam, rtol=1e-5, atol=1e-4)
    # the paper's initial state has both feet on the slope
    assert abs(s5.evaluate("x", q=q5).ravel()[7]) < 1e-12


def test_flapping_flyer_time_dependent_constraints():
    s = flapping_flyer()
    e = s.equations()
    assert e.extra["time"] is not None
    vals = {str(k): v for k, v in s.values.items()}
    w, pu, pd = vals["omega_f"], vals["phi_u"], vals["phi_d"]
    for t in (0.0, 1.3, 4.0):
        phi = (pu - pd) / 2 * np.sin(w * t - np.pi / 2) + (pu + pd) / 2
        dphi = (pu - pd) / 2 * w * np.cos(w * t - np.pi / 2)
        q = np.array([0.3, 0.0, -0.2, phi, phi])
        dq = np.array([0.1, 0.0, 0.05, dphi, dphi])
        qdd, lam = s.solve_accelerations(q=q, dq=dq, t=t)
        np.testing.assert_allclose(_cdd_fd(s, q, dq, qdd, t=t), 0, atol=1e-5)
        assert qdd[3] == pytest.approx(-(pu - pd) / 2 * w * w * np.sin(w * t - np.pi / 2), abs=1e-9)
        assert qdd[3] == pytest.approx(qdd[4], abs=1e-9)
        assert abs(qdd[1]) < 1e-9       # mirror symmetry: no sideways acceleration
    # the paper's initial state satisfies the flapping input at t = 0
    assert np.abs(s.evaluate("constraint", q=s.q0)).max() < 1e-12
    # aerodynamic forces vanish at rest; drag alone takes energy out
    assert np.abs(s.evaluate("f_forces", q=s.q0, dq=np.zeros(5))).max() == 0
    rng = _rng(8)
    for _ in range(5):
        dq = rng.normal(size=5)
        p = s.evaluate("f_forces", values={"c_lm": 0.0}, q=s.q0, dq=dq).ravel()
        assert dq @ p < 0


def test_flapping_flyer_without_input_constraint_uses_u():
    s = flapping_flyer(input_as_constraint=False)
    assert s.equations().S == sp.Matrix([[0, 0, 0, 1, 1]])
    q = np.array(s.q0, float)
    a0, _ = s.solve_accelerations(q=q, dq=np.zeros(5), tau=[0.0])
    a1, _ = s.solve_accelerations(q=q, dq=np.zeros(5), tau=[1.0])
    assert a1[3] > a0[3]                          # a positive hinge torque opens the wings up
    np.testing.assert_allclose(a1[3], a1[4], atol=1e-12)


def test_clemens_joint_constraints_and_energy():
    s = clemens_joint()
    e = s.equations()
    assert len(s.q) == 13 and e.extra["constraint"].shape == (10, 1)
    q0 = np.array(s.q0)
    assert np.abs(s.evaluate("constraint", q=q0)).max() < 1e-12
    assert np.linalg.matrix_rank(s.evaluate("constraint_jacobian", q=q0)) == 10   # 3 DOF
    # massless links (the paper): the platform falls freely, no constraint forces
    qdd, lam = s.solve_accelerations(q=q0, dq=np.zeros(13))
    np.testing.assert_allclose(lam, 0, atol=1e-9)
    h = 1e-4
    x = lambda t: s.evaluate("x", q=q0 + qdd * t * t / 2).ravel()  # noqa: E731
    k = [b.name for b in s.bodies].index("platform")
    platform_acc = ((x(h) - 2 * x(0) + x(-h)) / h**2)[3 * k:3 * k + 3]
    np.testing.assert_allclose(platform_acc, [0, 0, -1.0], atol=1e-5)
    # links with mass, moving: c̈ = 0 and energy conserved
    vals = {"m_l": 0.2, "I_l": 0.01}
    J = s.evaluate("constraint_jacobian", q=q0)
    _, _, Vt = np.linalg.svd(J)
    dq = Vt[10:].T @ np.array([0.4, -0.3, 0.2])
    qdd, lam = s.solve_accelerations(values=vals, q=q0, dq=dq)
    c = lambda t: s.evaluate("constraint", values=vals, q=q0 + dq * t + qdd * t * t / 2).ravel()  # noqa: E731
    np.testing.assert_allclose((c(h) - 2 * c(0) + c(-h)) / h**2, 0, atol=1e-5)
    T = lambda qq, vv: s.evaluate("kinetic_energy", values=vals, q=qq, dq=vv).item()  # noqa: E731
    V = lambda qq: s.evaluate("potential_energy", values=vals, q=qq).item()  # noqa: E731
    hh = 1e-6
    rate = (T(q0 + hh * dq, dq + hh * qdd) - T(q0 - hh * dq, dq - hh * qdd)) / (2 * hh) + \
        (V(q0 + hh * dq) - V(q0 - hh * dq)) / (2 * hh)
    assert abs(rate) < 1e-6


# ==============================================================================================
# impact map, eq. (9)
# ==============================================================================================
def _free_planar_body():
    x, y, th = sp.symbols("x y theta")
    dx, dy, dth = sp.symbols("dx dy dtheta")
    m, I, a, b = sp.symbols("m I a b")
    R = sp.Matrix([[sp.cos(th), -sp.sin(th)], [sp.sin(th), sp.cos(th)]])
    corner = sp.Matrix([x, y]) + R * sp.Matrix([a, -b])
    frictionless = TMTSystem([x, y, th], [dx, dy, dth], [TMTBody(m, I, sp.Matrix([x, y]), th, name="box")],
                             params=[m, I, a, b], contacts=[Contact(corner, directions=[[0, 1]], name="corner")],
                             values={m: 2.0, I: 0.3, a: 0.4, b: 0.25})
    sticking = TMTSystem([x, y, th], [dx, dy, dth], [TMTBody(m, I, sp.Matrix([x, y]), th, name="box")],
                         params=[m, I, a, b], contacts=[Contact(corner, name="corner")],
                         values={m: 2.0, I: 0.3, a: 0.4, b: 0.25})
    return frictionless, sticking


@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_impact_restitution_energy_and_momentum(e):
    fr, st = _free_planar_body()
    q = np.array([0.1, 0.5, 0.35])
    dq_minus = np.array([0.8, -1.5, 2.0])
    # frictionless: only the normal row; E = −e
    dqp, rl, rho = fr.impact(q=q, dq_minus=dq_minus, E=[[-e]])
    Tr = fr.evaluate("contact_jacobian", q=q)
    vn_minus, vn_plus = (Tr @ dq_minus).item(), (Tr @ dqp).item()
    assert vn_minus < 0
    assert vn_plus == pytest.approx(-e * vn_minus, abs=1e-12)
    K = lambda v: fr.evaluate("kinetic_energy", q=q, dq=v).item()  # noqa: E731
    assert K(dqp) <= K(dq_minus) + 1e-12
    if e == 1.0:
        assert K(dqp) == pytest.approx(K(dq_minus), rel=1e-12)
    # momentum balance: m Δv = ρ n, I Δθ̇ = (r × ρ n)_z, i.e. M Δq̇ = T_ρᵀ ρ
    M = fr.evaluate("M", q=q)
    np.testing.assert_allclose(M @ (dqp - dq_minus), Tr.T @ rho, atol=1e-12)
    assert rho.item() >= 0       # the floor pushes
    np.testing.assert_allclose(2.0 * (dqp[:2] - dq_minus[:2]), [0, rho.item()], atol=1e-12)
    # no slip: Newton's law along the normal, tangential velocity removed
    E = newton_restitution(e, [0, 1])
    dqp2, _, rho2 = st.impact(q=q, dq_minus=dq_minus, E=E)
    Ts = st.evaluate("contact_jacobian", q=q)
    np.testing.assert_allclose(Ts @ dqp2, [0.0, -e * (Ts @ dq_minus)[1]], atol=1e-12)
    assert K(dqp2) <= K(dq_minus) + 1e-12
    np.testing.assert_allclose(M @ (dqp2 - dq_minus), Ts.T @ rho2, atol=1e-12)


def test_impact_map_symbolic_matches_numeric():
    fr, _ = _free_planar_body()
    e = fr.equations()
    im = e.extra["impact_map"]
    assert im["A"].shape == (4, 4) and im["B"].shape == (4, 3) and im["E"].shape == (1, 1)
    q, dqm = np.array([0.0, 0.4, -0.2]), np.array([0.1, -1.0, 0.5])
    subs = {**fr.values, **dict(zip(fr.q, q)), im["E"][0, 0]: -0.7}
    A = np.array(im["A"].subs(subs).evalf(), float)
    B = np.array(im["B"].subs(subs).evalf(), float)
    x = np.linalg.solve(A, B @ dqm)
    dqp, _, _ = fr.impact(q=q, dq_minus=dqm, E=-0.7)
    np.testing.assert_allclose(x[:3], dqp, atol=1e-12)


def test_impact_with_constraint_rows():
    """Four-bar hitting a floor at the coupler joint: constraints stay closed (eq. 9 rows T_cn)."""
    s = _four_bar()
    q, dq = _consistent_four_bar_state(s, a1=0.9, w1=-1.3)
    Tr = s.evaluate("contact_jacobian", q=q)
    if (Tr @ dq).item() > 0:
        dq = -dq
    dqp, rl, rho = s.impact(q=q, dq_minus=dq, E=-0.6)
    np.testing.assert_allclose(s.evaluate("constraint_jacobian", q=q) @ dqp, 0, atol=1e-12)
    assert (Tr @ dqp).item() == pytest.approx(-0.6 * (Tr @ dq).item(), abs=1e-12)
    K = lambda v: s.evaluate("kinetic_energy", q=q, dq=v).item()  # noqa: E731
    assert K(dqp) < K(dq)
    M, Tcn = s.evaluate("M", q=q), s.evaluate("constraint_jacobian", q=q)
    np.testing.assert_allclose(M @ (dqp - dq), Tcn.T @ rl + Tr.T @ rho, atol=1e-10)


def test_biped_heel_strike():
    s = biped_upper_body()
    q = np.array(s.q0)
    dq = np.array(s.dq0)            # [0, 0, −0.2, 0.3, 0.1]: q = [xs, ys, q1, q2, q3]
    # pre-impact: make the swing foot move down (time-reverse the paper's post-impact state)
    Tr = s.evaluate("contact_jacobian", q=q)
    if (Tr @ dq)[1] > 0:
        dq = -dq
    K = lambda v: s.evaluate("kinetic_energy", q=q, dq=v).item()  # noqa: E731
    # plastic, no-slip heel strike with the trailing foot released (E = 0)
    dqp, rl, rho = s.impact(q=q, dq_minus=dq, E=np.zeros((2, 2)), active_constraints=[])
    np.testing.assert_allclose(Tr @ dqp, 0, atol=1e-12)
    assert K(dqp) < K(dq)
    assert rl.size == 0 and rho[1] > 0
    M = s.evaluate("M", q=q)
    np.testing.assert_allclose(M @ (dqp - dq), Tr.T @ rho, atol=1e-9)
    # with the stance foot kept (all constraint rows), both feet stay put
    dqp2, rl2, _ = s.impact(q=q, dq_minus=dq, E=0.0)
    np.testing.assert_allclose(dqp2[:2], 0, atol=1e-12)
    assert rl2.size == 2


# ==============================================================================================
# bad input
# ==============================================================================================
def _one_link():
    a, da, m, l, g = sp.symbols("a da m l g")
    return a, da, m, l, g


def test_bad_input_names_the_element():
    a, da, m, l, g = _one_link()
    z = sp.Symbol("z")
    pos = sp.Matrix([l * sp.cos(a), l * sp.sin(a)])
    with pytest.raises(ValueError, match="q has 1 entries but dq has 2"):
        TMTSystem([a], [da, z], [TMTBody(m, 1, pos, a)], params=[m, l])
    with pytest.raises(ValueError, match=r"body 0 \('arm'\) position.*z"):
        TMTSystem([a], [da], [TMTBody(m, 1, pos * z, a, name="arm")], params=[m, l])
    with pytest.raises(ValueError, match=r"body 0 \('arm'\) mass.*z"):
        TMTSystem([a], [da], [TMTBody(m * z, 1, pos, a, name="arm")], params=[m, l])
    with pytest.raises(ValueError, match="gravity.*g"):
        TMTSystem([a], [da], [TMTBody(m, 1, pos, a)], params=[m, l], gravity=[0, -g])
    with pytest.raises(ValueError, match=r"force 0 \('push'\) force.*z"):
        TMTSystem([a], [da], [TMTBody(m, 1, pos, a)], params=[m, l], forces=[PointForce(pos, [z, 0], "push")])
    with pytest.raises(ValueError, match=r"constraint 0 \('c'\).*da"):
        TMTSystem([a], [da], [TMTBody(m, 1, pos, a)], params=[m, l], constraints=[Constraint(a * da, "c")])
    with pytest.raises(ValueError, match="S has shape"):
        TMTSystem([a], [da], [TMTBody(m, 1, pos, a)], params=[m, l], tau=sp.symbols("t0:2"), S=[[1]])
    with pytest.raises(ValueError, match="mix planar and 3-D"):
        TMTSystem([a], [da], [TMTBody(m, 1, pos, a), TMTBody(m, sp.eye(3), [0, 0, a], sp.eye(3))], params=[m, l])
    with pytest.raises(ValueError, match="values: z is not one of the parameters"):
        TMTSystem([a], [da], [TMTBody(m, 1, pos, a)], params=[m, l], values={z: 1.0})
    with pytest.raises(ValueError, match="must be symbols"):
        TMTSystem([a + 1], [da], [TMTBody(m, 1, pos, a)], params=[m, l])
    s = TMTSystem([a], [da], [TMTBody(m, 1, pos, a)], params=[m, l], values={m: 1.0})
    with pytest.raises(ValueError, match="no numeric value for parameter.*l"):
        s.solve_accelerations(q=[0.1], dq=[0.0])
    with pytest.raises(ValueError, match="q and dq need 1 entries"):
        s.solve_accelerations(values={l: 1.0}, q=[0.1, 0.2], dq=[0.0])
    with pytest.raises(ValueError, match="impact: the system has no contacts"):
        s.impact(values={l: 1.0}, q=[0.1], dq_minus=[0.0], E=0)


def test_non_orthonormal_rotation_names_the_body():
    a, da, m, l, g = _one_link()
    R = sp.Matrix([[sp.cos(a), -sp.sin(a), 0], [sp.sin(a), 2 * sp.cos(a), 0], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"body 1 \('forearm'\): orientation is not a rotation"):
        TMTSystem([a], [da], [TMTBody(m, sp.eye(3), [0, 0, 0], sp.eye(3), name="upper"),
                              TMTBody(m, sp.eye(3), [l * sp.cos(a), 0, 0], R, name="forearm")], params=[m, l])
    mirror = sp.diag(1, 1, -1)
    with pytest.raises(ValueError, match=r"body 0 \('m'\): orientation is not a rotation"):
        TMTSystem([a], [da], [TMTBody(m, sp.eye(3), [a, 0, 0], mirror, name="m")], params=[m, l])
    with pytest.raises(ValueError, match="inertia is not symmetric"):
        TMTSystem([a], [da], [TMTBody(m, sp.Matrix([[1, 2, 0], [0, 1, 0], [0, 0, 1]]), [a, 0, 0], sp.eye(3))],
                  params=[m, l])


def test_joint_chain_bad_steps():
    a = sp.Symbol("a")
    with pytest.raises(ValueError, match="step 1: unknown kind 'w'"):
        joint_chain([("x", a), ("w", 1)], [a])
    with pytest.raises(ValueError, match="step 0: translation needs 3 entries"):
        joint_chain([("t", [1, 2])], [a])


# ==============================================================================================
# integration: derive() dispatcher, save/load
# ==============================================================================================
def test_derive_dispatcher_and_save_load(tmp_path):
    from multibody.models import auto_tree
    from multibody.symbolic import derive
    from multibody.symbolic.eom import EquationsOfMotion

    model = auto_tree(3, 2, 0.5, 0.9)
    ref = _fns(derive(model, method="rnea"))
    rng = _rng(11)
    q, dq = rng.uniform(-2, 2, 3), rng.normal(size=3)
    for method in ("tmt", "lagrange"):
        msgs = []
        e = derive(model, method=method, progress=msgs.append)
        assert e.extra["method"] == method and msgs
        for u, w in zip(_fns(e)(q, dq), ref(q, dq)):
            np.testing.assert_allclose(u, w, atol=1e-10, rtol=0)
        path = tmp_path / f"{method}.json"
        e.save(path)
        back = EquationsOfMotion.load(path)
        assert back.M == e.M and back.b == e.b and back.g == e.g
    # the saved TMT terms come back too
    e = double_pendulum_report().equations()
    e.save(tmp_path / "dp.json")
    back = EquationsOfMotion.load(tmp_path / "dp.json")
    assert back.extra["T"] == e.extra["T"] and back.extra["impact_map"]["A"] == e.extra["impact_map"]["A"]


def test_tmt_of_a_bare_tree_equals_the_recursive_newton_euler_equations():
    """derive(Model, "tmt") takes the TMT paper's eqs. 3–4 straight from the tree's kinematics (no
    TMTSystem): against the symbolic RNEA on a 3-D chain with symbolic masses, lengths and inertias
    (gyroscopic terms), and the compiled core's CRBA and RNEA on MA23 (numeric, 6 DoF), at random states."""
    import multibody as mb
    from multibody.symbolic import derive as _derive
    from multibody.symbolic.sym_models import spatial_chain

    rng = _rng(11)
    chain = spatial_chain(4)
    e_t, e_r = _derive(chain, "tmt"), _derive(chain, "rnea")
    values = {p: rng.uniform(0.3, 1.5) for p in e_t.params}
    nt, nr = e_t.to_numeric(values), e_r.to_numeric(values)
    for _ in range(3):
        q, dq = rng.normal(size=4), rng.normal(size=4)
        np.testing.assert_allclose(nt.M(q), nr.M(q), atol=1e-12)
        np.testing.assert_allclose(nt.b(q, dq), nr.b(q, dq), atol=1e-12)
        np.testing.assert_allclose(nt.g(q), nr.g(q), atol=1e-12)
    model = mb.models.ma23()
    num = _derive(model, "tmt").to_numeric()
    for _ in range(3):
        q, dq = rng.normal(size=model.nq), rng.normal(size=model.nv)
        np.testing.assert_allclose(num.M(q), mb.crba(model, q), atol=1e-10)
        np.testing.assert_allclose(np.ravel(num.b(q, dq)) + np.ravel(num.g(q)), mb.rnea(model, q, dq, np.zeros(model.nv)),
                                   atol=1e-10)


# ==============================================================================================
# the SymEngine road: extra converted when read, the tree's terms from the numeric core
# ==============================================================================================
def test_bare_tree_extra_holds_the_tmt_terms_and_T_is_the_cores_com_jacobian():
    """derive(Model, "tmt") again fills extra with T, D, the impact map (they were dropped when the
    bare tree stopped going through TMTSystem); read lazily, they are the model's TMTSystem's, and
    T's position rows are the CoM Jacobians of the compiled core's forward kinematics."""
    from multibody.kinematics.forward import forward_kinematics
    from multibody.models import auto_tree
    from multibody.symbolic import derive
    from multibody.symbolic.tmt.system import EXTRA_KEYS

    model = auto_tree(4, 1.5, 0.6, 0.9)            # a branched, skewed 3-D tree
    e = derive(model, "tmt")
    assert set(EXTRA_KEYS) <= set(e.extra)
    ref = tmt_system_from_model(model, q=e.q, dq=e.dq, tau=e.tau, S=e.S).equations()
    for key in ("T", "D", "x", "constraint_jacobian", "contact_jacobian"):
        assert e.extra[key] == ref.extra[key], key
    assert e.extra["impact_map"]["A"] == ref.extra["impact_map"]["A"]
    assert e.kinematics["A_IB"] == ref.kinematics["A_IB"]
    # T = ∂x/∂q (eq. 3): its CoM rows by central differences of the core's CoM positions
    fT = sp.lambdify([list(e.q)], e.extra["T"], "numpy")
    rng = _rng(21)
    q = rng.uniform(-1.5, 1.5, model.nq)
    h = 1e-6

    def coms(qq):
        R, p = forward_kinematics(model, qq)
        return np.concatenate([p[i] + R[i] @ model.com[i] for i in range(model.nb)])
    J = np.column_stack([(coms(q + h * np.eye(model.nq)[k]) - coms(q - h * np.eye(model.nq)[k])) / (2 * h)
                         for k in range(model.nq)])
    T = np.asarray(fT(q), dtype=float)
    rows = [6 * i + a for i in range(model.nb) for a in range(3)]
    np.testing.assert_allclose(T[rows], J, atol=1e-8)
    # the impact map of a bare tree is M q̇* = M q̇: its A is M̄ (= the core's CRBA)
    fA = sp.lambdify([list(e.q)], e.extra["impact_map"]["A"], "numpy")
    np.testing.assert_allclose(np.asarray(fA(q), dtype=float), mb.crba(model, q), atol=1e-10)


def test_lazy_extra_copies_share_saves_and_reads_like_a_dict(tmp_path):
    """extra is a LazyDict: derive's readable copy does not convert it, copies compute an entry
    once for all, and every way of reading all of it (dict(), items(), save) gives the values."""
    from multibody.symbolic import derive
    from multibody.symbolic.eom import EquationsOfMotion
    from multibody.symbolic.tmt.system import LazyDict

    calls = []
    d = LazyDict(a=1)
    d.lazy("b", lambda: calls.append("b") or sp.Integer(2))
    c = d.copy()
    assert calls == [] and isinstance(c, LazyDict) and set(c) == {"a", "b"}
    assert c["b"] == 2 and d["b"] == 2 and calls == ["b"]          # computed once, for both copies
    d.lazy("c", lambda: 3)
    assert dict(d) == {"a": 1, "b": 2, "c": 3} and {**d} == dict(d) and d == {"a": 1, "b": 2, "c": 3}
    d.lazy("e", lambda: 5)
    assert d.get("e") == 5 and d.get("zz", 7) == 7 and d.setdefault("e", 0) == 5 and d.pop("e") == 5
    assert "e" not in d and list(d.values()) == [1, 2, 3]
    e = derive(mb.models.biped_upper_body(), "tmt")
    assert isinstance(e.extra, LazyDict)
    e.save(tmp_path / "biped.json")
    back = EquationsOfMotion.load(tmp_path / "biped.json")
    assert back.extra["constraint_jacobian"] == e.extra["constraint_jacobian"]
    assert back.extra["impact_map"]["B"] == e.extra["impact_map"]["B"]


def test_tree_bodies_read_as_the_tree_kinematics_and_take_new_values():
    """tmt_system_from_model's bodies carry the tree walk's SymEngine kinematics; read, they are
    tree_kinematics' SymPy matrices, and a field set by hand is what the system derives from."""
    model = mb.models.double_pendulum(symbolic=True)
    q, dq, _, _, params = model_symbols(model)
    kin = tree_kinematics(model, q)
    s = tmt_system_from_model(model, q=q, dq=dq, actuated=[])
    for b in s.bodies:
        i = kin["names"].index(b.name)
        assert b.position == kin["r_com"][i] and b.orientation == kin["R"][i] and b.T_omega == kin["T_omega"][i]
    m1 = s.bodies[0].mass
    M0 = s.equations().M
    s2 = tmt_system_from_model(model, q=q, dq=dq, actuated=[])
    s2.bodies[0].mass = 2 * m1                     # the first link twice as heavy, its inertia kept
    M2 = s2.equations().M
    # M = Σ m J_rᵀ J_r + T_ωᵀ Θ T_ω: the extra mass adds m1 J_rᵀ J_r of the first link's CoM
    Jr = kin["r_com"][kin["names"].index(s.bodies[0].name)].jacobian(list(q))
    assert sp.simplify(M2 - M0 - m1 * Jr.T * Jr) == sp.zeros(2, 2)


@pytest.mark.parametrize("method", ["rnea", "pne", "tmt", "lagrange"])
def test_joints_about_negative_axes_against_the_core(method):
    """A joint about −x, −y or −z is the elementary rotation by −q in every derivation (it was
    Rodrigues' matrix, whose angular velocity needed SymPy's trigonometric canonical form): M, b, g
    against the compiled CRBA and RNEA at random states."""
    from multibody.model.builder import ModelBuilder
    from multibody.symbolic import derive

    b = ModelBuilder("negative_axes")
    I = np.diag([0.02, 0.03, 0.04])
    b.add_body("a", None, "revolute", axis=[0, 0, -1], mass=1.0, com=[0.4, 0.1, 0], inertia=I)
    b.add_body("b", "a", "revolute", axis=[0, 0, 1], mass=0.8, com=[0.3, 0, 0.1], inertia=I,
               joint_translation=[0.9, 0, 0])
    b.add_body("c", "b", "revolute", axis=[-1, 0, 0], mass=0.6, com=[0.1, 0.2, 0], inertia=I,
               joint_translation=[0.7, 0, 0])
    b.add_body("d", "c", "revolute", axis=[0, -1, 0], mass=0.5, com=[0.2, 0, 0.1], inertia=I,
               joint_translation=[0.1, 0.2, 0.3])
    model = b.build()
    num = derive(model, method).to_numeric({})
    rng = _rng(22)
    for _ in range(3):
        q, dq = rng.uniform(-2, 2, model.nq), rng.normal(size=model.nq)
        np.testing.assert_allclose(num.M(q), mb.crba(model, q), atol=1e-10)
        np.testing.assert_allclose(np.ravel(num.b(q, dq)) + np.ravel(num.g(q)), mb.rnea(model, q, dq, 0 * dq),
                                   atol=1e-10)


def test_sympy_to_symengine_walk_equals_sympify():
    """The memoised SymPy → SymEngine walk of the elements gives what se.sympify gives (the flyer's
    aerodynamic forces: sums, products, square roots, floats), and hands what it does not know
    (a high-precision float, an undefined function) to se.sympify."""
    import symengine as se

    from multibody.symbolic.tmt.system import _to_se

    mech = mb.models.flapping_flyer()
    memo = {}
    for f in mech.forces:
        for x in list(sp.Matrix(f.force)) + list(sp.Matrix(f.point)):
            assert _to_se(x, memo) == se.sympify(x)
    a = sp.Symbol("a")
    odd = sp.Float("0.1", 40) * a + sp.Function("f")(a) + sp.Rational(3, 7) * sp.atan2(a, 2)
    assert _to_se(odd, {}) == se.sympify(odd)
