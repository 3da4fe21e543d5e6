"""The fixed-step methods as one table (csrc/sim/rollout.c's mb_steppers), checked row by row against
references that do not come from the table: Butcher's order conditions, the stability polynomial's
real-axis bound, the measured order of convergence against a tight DOP853 run (a double pendulum on
R², a free body on SE(3)), energy over 10⁵ steps, and the sensitivities against five-point differences
of the computed flow.  The compiled loop against the Python reference loop and batches against single
runs, for every row, are test_rollout.py's and test_batch_controller.py's (they run every row too)."""
import math
from fractions import Fraction

import numpy as np
import pytest

import multibody as mb
from multibody.core import _core
from multibody.simulation import rollout
from multibody.simulation.rollout import FIXED_STEP, ORDER, SYMPLECTIC

import reference_steppers
from reference_steppers import STEPPERS, python_loop

from test_sensitivities import _tangent_fd, compiled_only  # noqa: F401  (a fixture)

TABLE = {row[0]: row for row in _core.steppers()}
TABLEAU_ROWS = [name for name in FIXED_STEP if TABLE[name][5] is not None]


def test_python_reads_the_c_table():
    """Names, codes, orders, damping bounds and flags come from rollout.c's rows, in their order."""
    rows = _core.steppers()
    assert FIXED_STEP == tuple(r[0] for r in rows) and "rk3" in FIXED_STEP
    assert rollout.INTEGRATOR_CODES == {r[0]: code for code, r in enumerate(rows)}
    assert rollout.STABLE_DECAY == {r[0]: r[3] for r in rows}
    assert set(STEPPERS) == set(FIXED_STEP)
    for name in TABLEAU_ROWS:
        assert STEPPERS[name].tableau == tuple(TABLE[name][5:8])
    with pytest.raises(ValueError, match="integrator: expected one of .*'rk3'"):
        mb.simulate(mb.models.single_pendulum(), [0.0], [0.0], 0.1, integrator="verlet")


@pytest.mark.parametrize("name", TABLEAU_ROWS)
def test_tableau_meets_the_order_conditions(name):
    """Explicit (strictly lower a), c = row sums, Butcher's conditions up to the row's order
    (Hairer, Nørsett & Wanner I, §II.2, Table 2.2) and, for a Crouch–Grossman method of order 3, its
    extra Lie-group condition Σ bᵢ²cᵢ + 2 Σ_{i<j} bᵢcᵢbⱼ = 1/3 (Owren & Marthinsen 1999)."""
    _, order, s, _, _, a, b, c, _ = TABLE[name]
    A = np.array(a).reshape(s, s)
    b, c = np.array(b), np.array(c)
    assert np.all(np.triu(A) == 0.0)
    np.testing.assert_allclose(A.sum(axis=1), c, atol=1e-15)
    conditions = [(b.sum(), 1.0), (b @ c, 1 / 2), (b @ c ** 2, 1 / 3), (b @ A @ c, 1 / 6),
                  (b @ c ** 3, 1 / 4), (b @ (c * (A @ c)), 1 / 8), (b @ A @ c ** 2, 1 / 12), (b @ A @ A @ c, 1 / 24)]
    for value, want in conditions[:{1: 1, 2: 2, 3: 4, 4: 8}[order]]:
        assert value == pytest.approx(want, abs=1e-14)
    if order == 3:
        lie = np.sum(b ** 2 * c) + 2 * sum(b[i] * c[i] * b[j] for i in range(s) for j in range(i + 1, s))
        assert lie == pytest.approx(1 / 3, abs=1e-14)


@pytest.mark.parametrize("name", [n for n in FIXED_STEP if n != "semi_implicit"])
def test_damping_bound_is_the_stability_polynomials(name):
    """B of limits.py: |R(−B)| = 1 for R(z) = Σ_{k ≤ p} z^k / k! (an explicit s-stage method of order p = s),
    found here by bisection (rk4's row keeps the library's rounded 2.785)."""
    _, order, stages, bound, *_ = TABLE[name]
    assert order == stages
    R = lambda z: sum(z ** k / math.factorial(k) for k in range(order + 1))   # noqa: E731
    lo, hi = -3.0, -1.0                                   # R(lo) is outside, R(hi) inside the unit interval
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if abs(R(mid)) <= 1.0 else (mid, hi)
    assert bound == pytest.approx(-hi, abs=1e-3 if name == "rk4" else 1e-12)


def _slopes(errors):
    return np.diff(np.log(errors)) / np.log(0.5)


@pytest.mark.parametrize("name", FIXED_STEP)
def test_order_of_convergence_on_a_double_pendulum(name):
    """The largest error over 2 s (samples every 0.04 s) against DOP853 at rtol 1e-13, dt halved three
    times: the slope is the row's order (the error at one instant alone can cross zero)."""
    m = mb.models.double_pendulum()
    q0, v0 = [0.7, -0.4], [0.1, 0.3]
    ref = mb.simulate(m, q0, v0, 2.0, dt=0.04, integrator="dop853", rtol=1e-13, atol=1e-14)
    steps = (0.02, 0.01, 0.005, 0.0025) if ORDER[name] >= 3 else (1e-3, 5e-4, 2.5e-4, 1.25e-4)
    errors = []
    for dt in steps:
        tr = mb.simulate(m, q0, v0, 2.0, dt=dt, integrator=name, limits="off", record_every=round(0.04 / dt))
        np.testing.assert_allclose(tr.t, ref.t, atol=1e-12)
        errors.append(np.abs(np.c_[tr.q - ref.q, tr.qd - ref.qd]).max())
    slopes = _slopes(errors)
    assert np.all(np.abs(slopes - ORDER[name]) < 0.2), (errors, slopes)


@pytest.mark.parametrize("name", TABLEAU_ROWS)
def test_order_of_convergence_on_a_free_body(name):
    """On SE(3) (a free joint, quaternion integrated by exponentials) the Crouch–Grossman form keeps the
    row's order: error at t = 1 against DOP853 (rtol 1e-13), differences of q taken on the group."""
    m = mb.models.singlebody()
    q0 = mb.integrate(m, m.neutral(), [0.3, -0.2, 0.5, 0.1, 0.2, -0.3])
    v0 = np.array([1.0, -2.0, 0.7, 0.3, 0.1, -0.5])
    ref = mb.simulate(m, q0, v0, 1.0, dt=0.1, integrator="dop853", rtol=1e-13, atol=1e-14)
    errors = []
    for dt in (0.1, 0.05, 0.025, 0.0125):
        tr = mb.simulate(m, q0, v0, 1.0, dt=dt, integrator=name)
        errors.append(np.abs(np.r_[mb.difference(m, ref.q[-1], tr.q[-1]), tr.qd[-1] - ref.qd[-1]]).max())
        s = tr.quaternion_starts[0]
        assert abs(np.linalg.norm(tr.q[-1, s:s + 4]) - 1.0) < 1e-14
    slopes = _slopes(errors)
    assert np.all(np.abs(slopes - ORDER[name]) < 0.2), (errors, slopes)


def _energy_error(name, dt, steps=100_000):
    m = mb.models.single_pendulum()
    tr = mb.simulate(m, [2.0], [0.0], steps * dt, dt=dt, integrator=name, record_every=100, limits="off")
    return np.abs(tr.total_energy - tr.total_energy[0])


@pytest.mark.parametrize("name", [n for n in FIXED_STEP if TABLE[n][4] & SYMPLECTIC])
def test_symplectic_rows_keep_the_energy_error_bounded_over_1e5_steps(name):
    """A pendulum swinging to 115° (q̈ independent of q̇: the symplectic rows are symplectic there),
    10⁵ steps of 1 ms: the energy error of the whole run is that of its first tenth (no drift)."""
    e = _energy_error(name, 1e-3)
    assert e.max() <= 1.01 * e[:len(e) // 10].max()
    assert e.max() < 0.02


@pytest.mark.parametrize("name", [n for n in FIXED_STEP if ORDER[n] >= 3])
def test_energy_drift_of_the_higher_order_rows_falls_with_their_order(name):
    """Not symplectic: the energy drifts, over a fixed time (100 s: 10⁵ steps of 1 ms) as h^p for an odd
    order p and h^(p+1) for an even one (|R(iy)|² = 1 − O(y^(p+1)), the odd power absent for even p)."""
    fine, coarse = _energy_error(name, 1e-3)[-1], _energy_error(name, 2e-3, steps=50_000)[-1]
    p = ORDER[name] + (ORDER[name] % 2 == 0)
    assert fine < {3: 2e-6, 4: 1e-10}[ORDER[name]]
    assert 2 ** p * 0.7 < coarse / fine < 2 ** p * 1.3


@pytest.mark.parametrize("name", TABLEAU_ROWS)
def test_sensitivities_of_a_tableau_row_ride_in_the_compiled_loop(name, compiled_only):
    """Z = [Φ | ∂x/∂τ] as the loop's extra states, with no code of the row's own: one compiled stretch,
    the state's bits the plain run's, Φ the five-point derivative of the computed flow (PD, damping,
    friction); the Python reference loop (reference_steppers.sensitivity_step's tableau branch) agrees."""
    import dataclasses
    model = dataclasses.replace(mb.models.double_pendulum(), damping=[0.3, 0.1], friction=[0.05, 0.0])
    q0, v0 = np.array([0.7, -0.4]), np.array([0.1, 0.3])
    kw = dict(dt=1e-2, controller=mb.PD(kp=20.0, kd=2.0, q_ref=[0.2, 0.1]), limits="off", integrator=name)
    traj = mb.simulate(model, q0, v0, 0.6, sensitivities=True, **kw)
    assert compiled_only == {"stretch": 1, "one step": 0}
    plain = mb.simulate(model, q0, v0, 0.6, **kw)   # (the Z run's FD gets f_ext = 0, the plain run's none:
    np.testing.assert_allclose(traj.q, plain.q, rtol=0, atol=1e-14)   # q̈ may differ in the last bit)
    fd = _tangent_fd(model, lambda q, v: mb.simulate(model, q, v, 0.6, **kw), q0, v0, h=1e-4, points=4)
    assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-8 * max(1.0, np.abs(fd).max())


@pytest.mark.parametrize("name", TABLEAU_ROWS)
def test_sensitivities_of_a_tableau_row_in_the_python_loop_and_on_a_group(name):
    """The Python loop steps [y, vec Z] with the row's reference stepper as the compiled loop does (Z
    to rounding); on SE(3) Φ is the flow's derivative to the method's order (five-point differences)."""
    m = mb.models.double_pendulum()
    q0, v0 = np.array([0.7, -0.4]), np.array([0.1, 0.3])
    compiled = mb.simulate(m, q0, v0, 0.5, dt=1e-2, integrator=name, sensitivities=True)
    with python_loop():
        python = mb.simulate(m, q0, v0, 0.5, dt=1e-2, integrator=name, sensitivities=True)
    np.testing.assert_allclose(compiled.q, python.q, rtol=0, atol=1e-14)
    assert np.max(np.abs(compiled.stm - python.stm)) < 1e-12
    body = mb.models.singlebody()
    q0 = mb.integrate(body, body.neutral(), [0.3, -0.2, 0.5, 0.1, 0.2, -0.3])
    v0 = np.array([1.0, -2.0, 0.7, 0.3, 0.1, -0.5])
    kw = dict(dt=1e-3, integrator=name)
    traj = mb.simulate(body, q0, v0, 0.5, sensitivities=True, **kw)
    fd = _tangent_fd(body, lambda q, v: mb.simulate(body, q, v, 0.5, **kw), q0, v0)
    assert np.max(np.abs(traj.stm[-1] - fd)) < 1e-7


def test_a_new_tableau_row_needs_no_python_code():
    """The reference stepper of a tableau is built from the numbers alone: Heun's method (not in the
    table) takes the textbook step, and rk3's row matches Kutta-style hand arithmetic on R."""
    heun = reference_steppers.tableau_stepper((0.0, 0.0, 1.0, 0.0), (0.5, 0.5), (0.0, 1.0))
    space = rollout.StateSpace(mb.models.single_pendulum())
    f = lambda t, y: (np.array([y[1], -y[0] + t]), None)     # noqa: E731
    y0, h = np.array([1.0, 0.5]), 0.1
    k1 = f(0.0, y0)[0]
    k2 = f(h, y0 + h * k1)[0]
    np.testing.assert_array_equal(heun(space, f, 0.0, y0, h)[0], y0 + h * (0.5 * k1 + 0.5 * k2))
    a = (Fraction(3, 4), Fraction(119, 216), Fraction(17, 108))        # Crouch & Grossman's, by hand
    b = (Fraction(13, 51), Fraction(-2, 3), Fraction(24, 17))
    k1 = f(0.0, y0)[0]
    k2 = f(0.75 * h, y0 + h * (float(a[0]) * k1))[0]
    k3 = f(17 / 24 * h, y0 + h * (float(a[1]) * k1 + float(a[2]) * k2))[0]
    want = y0 + h * (float(b[0]) * k1 + float(b[1]) * k2 + float(b[2]) * k3)
    np.testing.assert_array_equal(STEPPERS["rk3"](space, f, 0.0, y0, h)[0], want)
