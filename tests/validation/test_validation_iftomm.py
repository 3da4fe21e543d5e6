"""The IFToMM benchmark problems A01–A03 meet their thresholds against references that are not ours
(:mod:`multibody.validation.problems`: closed forms, the problem's own one-coordinate ODE, the Test
Set for IVP Solvers' published values); the models' structure against the papers' equations."""
import numpy as np
import pytest

import multibody as mb
from multibody.models.iftomm import (ANDREWS, ANDREWS_ORDER, ANDREWS_Q0, a01_pendulum, a02_n_four_bar, a02_start,
                                     a03_andrews, a03_forces)
from multibody.validation import benchmark_error, level
from multibody.validation.problems import a01, a01_reference, a02, a02_reference, a03


def test_a01_reference_closed_form_solves_the_pendulum_equation():
    """The elliptic-function reference against SciPy's DOP853 on θ̈ = −(g/L) sin φ (an independent check
    of the reference itself), over 50 s."""
    from scipy.integrate import solve_ivp
    t = np.linspace(0, 50, 501)
    sol = solve_ivp(lambda _, y: [y[1], -9.81 * np.sin(y[0])], (0, 50), [np.pi / 2, 0], method="DOP853",
                    rtol=1e-12, atol=1e-12, t_eval=t)
    xy = np.column_stack([np.sin(sol.y[0]), -np.cos(sol.y[0])])
    np.testing.assert_allclose(a01_reference(t), xy, atol=1e-9)


def test_a01_meets_high_precision():
    row = a01(quick=True)
    assert row.level == "high" and row.error < 1e-6


@pytest.mark.slow
def test_a01_full_2000_s_meets_high_precision():
    row = a01()
    assert row.level == "high", row


def test_a02_closures_lose_rank_when_flat_and_the_start_is_consistent():
    model = a02_n_four_bar(4)
    cs = mb.ConstraintSet(*model.constraints)
    q, qd = a02_start(model)
    c, cdot = cs.residual(model, q, qd)
    assert np.abs(c).max() < 1e-14 and np.abs(cdot).max() < 1e-14
    J_up = cs.evaluate(model, q, qd).J
    J_flat = cs.evaluate(model, *a02_start(model, theta=0.0)).J
    assert np.linalg.matrix_rank(J_up) == 8 and np.linalg.matrix_rank(J_flat) == 4   # N rows of rank lost
    with pytest.raises(mb.errors.ConstraintError, match="singular"):
        cs.accelerations(model, *a02_start(model, theta=0.0), np.zeros(model.nv))


def test_a02_through_the_singular_positions_quick():
    """2 s: the cranks pass the flat (singular) position θ = 0; B0 against the one-coordinate ODE."""
    row = a02(quick=True)
    assert row.level == "high" and row.error < 1e-5


@pytest.mark.slow
def test_a02_full_20_s_meets_high_precision():
    row = a02()
    assert row.level == "high", row


def test_a02_reference_conserves_energy():
    """The reference ODE's own check: T + V of the parallelogram chain is constant along it."""
    n, t = 40, np.linspace(0, 20, 401)
    r = a02_reference(t, n)
    th, w = np.arctan2(r[:, 1], r[:, 0]), np.hypot(r[:, 2], r[:, 3]) * np.sign(r[:, 3] * r[:, 0] - r[:, 2] * r[:, 1])
    E = 0.5 * w ** 2 * ((n + 1) / 3 + n) + 9.81 * np.sin(th) * ((n + 1) / 2 + n)
    assert np.ptp(E) < 1e-9 * np.abs(E).max()


def test_a03_inertia_and_forces_are_hairer_wanners():
    """Our tree's joint-space inertia is the paper's M(q) and our loads its f(q, q̇) at random states
    (the paper's formulas written out here, in its order)."""
    p = ANDREWS
    model = a03_andrews()
    order = list(ANDREWS_ORDER)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q_pap, v = rng.uniform(-3, 3, 7), rng.normal(size=7)
        be, th, ga, ph, de, om, ep = q_pap
        q = np.empty(7)
        q[order] = q_pap
        qd = np.empty(7)
        qd[order] = v
        M = np.zeros((7, 7))
        M[0, 0] = p["m1"] * p["ra"] ** 2 + p["m2"] * (p["rr"] ** 2 - 2 * p["da"] * p["rr"] * np.cos(th) + p["da"] ** 2) \
            + p["i1"] + p["i2"]
        M[0, 1] = M[1, 0] = p["m2"] * (p["da"] ** 2 - p["da"] * p["rr"] * np.cos(th)) + p["i2"]
        M[1, 1] = p["m2"] * p["da"] ** 2 + p["i2"]
        M[2, 2] = p["m3"] * (p["sa"] ** 2 + p["sb"] ** 2) + p["i3"]
        M[3, 3] = p["m4"] * (p["e"] - p["ea"]) ** 2 + p["i4"]
        M[3, 4] = M[4, 3] = p["m4"] * ((p["e"] - p["ea"]) ** 2 + p["zt"] * (p["e"] - p["ea"]) * np.sin(ph)) + p["i4"]
        M[4, 4] = p["m4"] * (p["zt"] ** 2 + 2 * p["zt"] * (p["e"] - p["ea"]) * np.sin(ph) + (p["e"] - p["ea"]) ** 2) \
            + p["m5"] * (p["ta"] ** 2 + p["tb"] ** 2) + p["i4"] + p["i5"]
        M[5, 5] = p["m6"] * (p["zf"] - p["fa"]) ** 2 + p["i6"]
        M[5, 6] = M[6, 5] = p["m6"] * ((p["zf"] - p["fa"]) ** 2 - p["u"] * (p["zf"] - p["fa"]) * np.sin(om)) + p["i6"]
        M[6, 6] = p["m6"] * ((p["zf"] - p["fa"]) ** 2 - 2 * p["u"] * (p["zf"] - p["fa"]) * np.sin(om) + p["u"] ** 2) \
            + p["m7"] * (p["ua"] ** 2 + p["ub"] ** 2) + p["i6"] + p["i7"]
        H, C = mb.hand_c(model, q, qd, a03_forces(model, q))
        np.testing.assert_allclose(H[np.ix_(order, order)], M, rtol=1e-12, atol=1e-18)
        # the paper's f: spring, drive and velocity terms (its right-hand side: M q̈ = f − Gᵀλ)
        xd = p["sd"] * np.cos(ga) + p["sc"] * np.sin(ga) + p["xb"]
        yd = p["sd"] * np.sin(ga) - p["sc"] * np.cos(ga) + p["yb"]
        L = np.hypot(xd - p["xc"], yd - p["yc"])
        F = -p["c0"] * (L - p["l0"]) / L
        Fx, Fy = F * (xd - p["xc"]), F * (yd - p["yc"])
        v1, v2, v3, v4, v5, v6, v7 = v
        f = [p["mom"] - p["m2"] * p["da"] * p["rr"] * v2 * (v2 + 2 * v1) * np.sin(th),
             p["m2"] * p["da"] * p["rr"] * v1 ** 2 * np.sin(th),
             Fx * (p["sc"] * np.cos(ga) - p["sd"] * np.sin(ga)) + Fy * (p["sd"] * np.cos(ga) + p["sc"] * np.sin(ga)),
             p["m4"] * p["zt"] * (p["e"] - p["ea"]) * v5 ** 2 * np.cos(ph),
             -p["m4"] * p["zt"] * (p["e"] - p["ea"]) * v4 * (v4 + 2 * v5) * np.cos(ph),
             -p["m6"] * p["u"] * (p["zf"] - p["fa"]) * v7 ** 2 * np.cos(om),
             p["m6"] * p["u"] * (p["zf"] - p["fa"]) * v6 * (v6 + 2 * v7) * np.cos(om)]
        np.testing.assert_allclose(-C[order], f, rtol=1e-10, atol=1e-12)


def test_a03_matches_the_test_set_reference_at_0_03_s():
    row = a03()
    assert row.level == "high"
    assert row.error < 1e-6          # ≥ 6 significant correct digits on all 14 published components


def test_a03_start_is_the_papers_consistent_start():
    """Hairer–Wanner's consistent initial accelerations and multipliers come out of our KKT solve."""
    model = a03_andrews()
    order = list(ANDREWS_ORDER)
    q0 = np.array(ANDREWS_Q0)[order]
    qdd, lam = mb.ConstraintSet(*model.constraints).accelerations(model, q0, np.zeros(7), np.zeros(7),
                                                                  a03_forces(model, q0))
    np.testing.assert_allclose(qdd[order][:2], [14222.4439199541138705911625887, -10666.8329399655854029433719415],
                               rtol=1e-9)
    assert np.abs(qdd[order][2:]).max() < 1e-6
    np.testing.assert_allclose(np.abs(lam[:2]), [98.5668703962410896057654982170, 6.12268834425566265503114393122],
                               rtol=1e-9)


def test_benchmark_error_and_levels():
    assert benchmark_error([[1.0, 0.0]], [[1.0, 0.0]], 1e-3) == 0.0
    assert benchmark_error([[1.1]], [[1.0]], 1e-3) == pytest.approx(0.1)
    assert np.isnan(benchmark_error([[np.nan]], [[1.0]], 1e-3))
    assert level(1e-3, 1e-1, 1e-3) == "high" and level(0.1, 1e-1, 1e-3) == "low" and level(0.2, 1e-1, 1e-3) == "missed"
    with pytest.raises(ValueError, match="shape"):
        benchmark_error([[1.0]], [[1.0, 2.0]], 1e-3)
    with pytest.raises(ValueError, match="threshold"):
        benchmark_error([[1.0]], [[1.0]], 0.0)


def test_a01_model_is_the_specified_pendulum():
    m = a01_pendulum()
    H, C = mb.hand_c(m, [0.3], [0.0])
    assert H[0, 0] == pytest.approx(1.0) and C[0] == pytest.approx(9.81 * np.cos(0.3))


def test_a02_started_exactly_flat_follows_the_reference_branch():
    """At θ = 0 the closure Jacobian has lost N rows of rank at the very first stage: the default set
    refuses (naming the rows); minimum-norm multipliers (redundant='least_squares') carry the run on
    the mechanism's one-degree-of-freedom branch, against the one-coordinate ODE from the same start."""
    from scipy.integrate import solve_ivp
    n = 40
    model = a02_n_four_bar(n)
    q0, qd0 = a02_start(model, theta=0.0, theta_dot=-1.0)
    with pytest.raises(mb.errors.ConstraintError, match="singular"):
        mb.ConstraintSet(*model.constraints).accelerations(model, q0, qd0, np.zeros(model.nv))
    cs = mb.ConstraintSet(*model.constraints, redundant="least_squares")
    traj = mb.simulate(model, q0, qd0, 1.0, dt=5e-3, integrator="rk4", constraints=cs, record_every=10)
    c = 9.81 * ((n + 1) / 2 + n) / ((n + 1) / 3 + n)
    sol = solve_ivp(lambda _, y: [y[1], -c * np.cos(y[0])], (0, 1.0), [0.0, -1.0], method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=traj.t)
    assert np.abs(traj.q[:, 0] - sol.y[0]).max() < 1e-5
    assert np.abs(traj.qd[:, 0] - sol.y[1]).max() < 1e-4
    assert np.abs(traj.q[:, :n + 1] - traj.q[:, :1]).max() < 1e-5        # the windows stay parallelograms


# ------------------------------------------------------------------------------------ A04, A05
def test_a04_closure_is_redundant_and_the_mechanism_moves_with_one_dof():
    """Grübler: 5 joints − 5 closure rows = 0; the rows' rank is 4 at the start and along the motion, so
    one degree of freedom remains; the default set refuses the singular solve, least squares carries it."""
    from multibody.models.iftomm import a04_bricard
    model = a04_bricard()
    cs = mb.ConstraintSet(*model.constraints, redundant="least_squares")
    z = np.zeros(5)
    traj = mb.simulate(model, z, z, 0.5, dt=5e-3, integrator="rk4", constraints=cs, record_every=20)
    for q, qd in zip(traj.q, traj.qd):
        J = cs.evaluate(model, q, qd).J
        assert np.linalg.matrix_rank(J, tol=1e-9) == 4
        assert np.abs(J @ qd).max() < 1e-5 * max(1.0, np.abs(qd).max())     # rk4 drift at h = 5 ms, Baumgarte-held
    assert np.ptp(traj.q[:, 0]) > 0.1                       # it moves from rest under gravity
    with pytest.raises(mb.errors.ConstraintError, match="singular"):
        mb.ConstraintSet(*model.constraints).accelerations(model, z, z, z)


def test_a04_quick_meets_high_precision_and_conserves_energy():
    from multibody.validation.problems import a04
    row = a04(quick=True)
    assert row.level == "high" and row.error < 1e-5, row
    from multibody.models.iftomm import a04_bricard
    model = a04_bricard()
    cs = mb.ConstraintSet(*model.constraints, redundant="least_squares")
    traj = mb.simulate(model, np.zeros(5), np.zeros(5), 2.0, dt=5e-3, integrator="rk4", constraints=cs, record_every=10)
    e = mb.energy(model, traj.q, traj.qd)
    E = e.KE + e.PE
    assert np.abs(E - E[0]).max() < 1e-7 * abs(E[0])       # no dissipation: T + V stays
    assert e.KE.max() > 1.0                                 # while real energy moves between T and V


@pytest.mark.slow
def test_a04_full_10_s_meets_high_precision():
    from multibody.validation.problems import a04
    row = a04()
    assert row.level == "high", row


def test_a05_forces_are_the_spring_dampers_law_on_point_kinematics():
    """a05_forces against the law written on the library's point kinematics, at random states."""
    from multibody.models.iftomm import FLYBALL, a05_flyball_governor, a05_forces
    model = a05_flyball_governor()
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, qd = rng.normal(size=4) * 0.3 + [0.0, 0.5, 0.0, 0.0], rng.normal(size=4)
        f = a05_forces(model, q, qd)
        for k, side in ((1, 1.0), (2, -1.0)):
            a_pt, b_pt = [side * 0.05, 0, 0], [0.5, 0, 0]
            A, B = mb.point_position(model, q, "slider", a_pt), mb.point_position(model, q, f"rod{k}", b_pt)
            vA, vB = mb.point_velocity(model, q, qd, "slider", a_pt), mb.point_velocity(model, q, qd, f"rod{k}", b_pt)
            d = np.linalg.norm(B - A)
            e = (B - A) / d
            F = (FLYBALL["K"] * (d - FLYBALL["rest"]) + FLYBALL["C"] * e @ (vB - vA)) * e
            i = model.body_index(f"rod{k}")
            np.testing.assert_allclose(f[i], -np.concatenate([np.cross(B, F), F]), rtol=1e-12, atol=1e-6)
        np.testing.assert_allclose(f.sum(0), 0.0, atol=1e-6)          # internal forces: no net wrench


@pytest.mark.slow
def test_a05_quick_meets_high_precision():
    """1 s (9 s of CPU on the loaded shared machine: SymPy's derivation of the reference is most of it)."""
    from multibody.validation.problems import a05
    row = a05(quick=True)
    assert row.level == "high" and row.error < 1e-5, row


@pytest.mark.slow
def test_a05_full_10_s_meets_high_precision():
    from multibody.validation.problems import a05
    row = a05()
    assert row.level == "high", row
