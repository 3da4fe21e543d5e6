"""The Whipple bicycle derived symbolically: Kane's projection (multibody.symbolic.nonholonomic) of the
tree's equations onto the roll, steer and rear-wheel speeds, and its linearisation about upright
straight running.

References, independent of the symbolic code: the paper's M, C1, K0, K2 (Meijaard, Papadopoulos,
Ruina and Schwab 2007, eq. 5.4, 14 digits) and ``whipple_linear`` (a complex step through a NumPy
statement of the dynamics); the compiled KKT solve ``ConstraintSet.accelerations`` at random
leaning, steered, turning states; ``whipple_state``'s dependent speeds (a numeric solve of the rows).
"""
import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.models.bicycle import whipple_bicycle, whipple_linear, whipple_state
from multibody.symbolic.nonholonomic import kane_equations

PAPER = {       # Meijaard et al. (2007), eq. 5.4 (as printed in tests/test_whipple.py)
    "M": [[80.81722, 2.31941332208709], [2.31941332208709, 0.29784188199686]],
    "C1": [[0.0, 33.86641391492494], [-0.85035641456978, 1.68540397397560]],
    "K0": [[-80.95, -2.59951685249872], [-2.59951685249872, -0.80329488458618]],
    "K2": [[0.0, 76.59734589573222], [0.0, 2.65431523794604]],
}
# joints: x, y, yaw, roll, pitch, rear_wheel, steer, front_wheel; u = (φ̇, δ̇, θ̇_R)
ROLL, PITCH, REAR, STEER = 3, 4, 5, 6
IND = [ROLL, STEER, REAR]


@pytest.fixture(scope="module")
def bike():
    return whipple_bicycle()


@pytest.fixture(scope="module")
def reduced(bike):
    q = sp.symbols("x y psi phi theta_B theta_R delta theta_F")
    dq = sp.symbols("dx dy dpsi dphi dtheta_B dtheta_R ddelta dtheta_F")
    return kane_equations(bike, bike.constraints, independent=IND, q=q, dq=dq)


def _coefficients(reduced, g=9.81, r_R=0.3):
    """M, C1, K0, K2 from the symbolic linearisation with the forward speed v a symbol
    (v = −θ̇_R r_R): C = v C1, K = g K0 + v² K2."""
    v = sp.Symbol("v")
    point = {s: 0 for s in reduced.q}
    point.update({reduced.dq[ROLL]: 0, reduced.dq[STEER]: 0, reduced.dq[REAR]: -v / r_R})
    M, C, K = reduced.linearize(point, coordinates=[ROLL, STEER], follow=[PITCH])
    C, K = C.applyfunc(sp.expand), K.applyfunc(sp.expand)
    as_array = lambda m: np.array(m.tolist(), dtype=float)              # noqa: E731
    return (as_array(M), as_array(C.applyfunc(lambda e: e.coeff(v, 1))),
            as_array(K.applyfunc(lambda e: e.coeff(v, 0))) / g, as_array(K.applyfunc(lambda e: e.coeff(v, 2))),
            C.applyfunc(lambda e: e.coeff(v, 0)), K.applyfunc(lambda e: e.coeff(v, 1)))


def test_linearisation_equals_the_paper_and_the_complex_step(bike, reduced):
    """M, C1, K0, K2 of the symbolic equations against the paper's 14 digits and whipple_linear
    (1e-12); no v⁰ term in C and no v¹ term in K (the form of eq. 5.3)."""
    M, C1, K0, K2, C_v0, K_v1 = _coefficients(reduced)
    for name, mine, ref in zip(("M", "C1", "K0", "K2"), (M, C1, K0, K2), whipple_linear(bike)):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(mine, PAPER[name], rtol=0, atol=1e-12, err_msg=name)
    assert all(abs(float(e)) < 1e-12 for e in list(C_v0) + list(K_v1))


def test_nonlinear_equations_agree_with_the_kkt_dynamics(bike, reduced):
    """u̇ = −M⁻¹ f of the symbolic equations against the compiled constrained dynamics at random
    leaning, steered, moving states (anywhere on the plane, any heading and wheel angles); q̇ = N u
    against whipple_state's dependent speeds."""
    M, f, N = reduced.to_numeric()
    cs = mb.ConstraintSet(*bike.constraints)
    rng = np.random.default_rng(5)
    for _ in range(4):
        roll, steer = rng.uniform(-0.5, 0.5, 2)
        q, qd = whipple_state(bike, roll, steer, *rng.normal(size=2), speed=rng.uniform(0.5, 6.0))
        u = qd[IND]
        np.testing.assert_allclose(N(q) @ u, qd, atol=1e-12)
        q = q.copy()
        q[[0, 1, 2, REAR, 7]] = rng.uniform(-3, 3, 5)        # position, heading, wheel angles: ignorable
        qd = N(q) @ u
        qdd, _ = cs.accelerations(bike, q, qd, np.zeros(8))
        ud = np.linalg.solve(M(q, u), -f(q, u))
        np.testing.assert_allclose(ud, qdd[IND], rtol=1e-9, atol=1e-9)


def test_a_singular_dependent_block_is_found_numerically():
    """The rows' dependent block is tested at random states, not simplified: sin² + cos² − 1 is zero
    without looking so, and is refused; a block that is structurally zero too."""
    b = mb.ModelBuilder("sleigh", gravity=(0, 0, 0))
    b.add_body("cx", None, "prismatic", axis=[1, 0, 0], mass=0, allow_massless=True)
    b.add_body("cy", "cx", "prismatic", axis=[0, 1, 0], mass=0, allow_massless=True)
    b.add_body("s", "cy", "revolute", axis=[0, 0, 1], mass=1.0, inertia=[0.1, 0.1, 0.1])
    model = b.build()
    q = sp.symbols("x y th")
    hidden = sp.Matrix([[-sp.sin(q[2]), sp.cos(q[2]), sp.sin(q[2]) ** 2 + sp.cos(q[2]) ** 2 - 1]])
    with pytest.raises(ValueError, match=r"dependent speeds \[2\] \(A_D is singular"):
        kane_equations(model, [hidden], independent=[0, 1], q=q)
    blade = sp.Matrix([[-sp.sin(q[2]), sp.cos(q[2]), 0]])
    with pytest.raises(ValueError, match="A_D is singular"):
        kane_equations(model, [blade], independent=[0, 1], q=q)
    red = kane_equations(model, [hidden], independent=[0, 2], q=q)       # ẏ = tan θ ẋ: fine
    assert sp.simplify(red.N[1, 0] - sp.tan(q[2])) == 0


def test_linearize_and_to_numeric_name_what_is_missing(reduced):
    with pytest.raises(ValueError, match="point: no value for"):
        reduced.linearize({reduced.q[ROLL]: 0}, coordinates=[ROLL, STEER])
    with pytest.raises(ValueError, match=r"coordinates: the rates of \[0\] are not independent"):
        reduced.linearize({}, coordinates=[0])
    with pytest.raises(ValueError, match="index 9"):
        reduced.linearize({}, coordinates=[ROLL], follow=[9])
