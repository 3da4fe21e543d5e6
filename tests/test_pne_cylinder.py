"""proNEu manual §2.2.2 (Figure 2.2, eqs. 2.1–2.2): a cylinder across a revolute joint as a torque
element. Checked against the manual's formula, a finite-difference virtual-work check on the
cylinder's length, and compute_pne with the same cylinder as a 'lin' force element between its two
mount points."""
import numpy as np
import pytest
import sympy as sp

from multibody.symbolic import Body, LinForce, compute_pne, cylinder_angle, cylinder_element, cylinder_torque
from multibody.symbolic.utils import rot_z

RNG = np.random.default_rng(2012)


def manual(q, a, b, F):
    """Eqs. 2.1–2.2 as printed: φ = tan⁻¹(a sin q1 / (b + a cos q1)), T1 = F1 b sin φ."""
    phi = np.arctan(a * np.sin(q) / (b + a * np.cos(q)))
    return phi, F * b * np.sin(phi)


def mounts(q, a, b):
    """The mount points in the joint's plane: P's at (−b, 0), B's at a (cos q1, sin q1)."""
    return np.array([-b, 0.0]), a * np.array([np.cos(q), np.sin(q)])


def test_numeric_torque_is_the_manual_formula():
    q = RNG.uniform(-np.pi, np.pi, 400)
    a, b = RNG.uniform(0.05, 1.0, 400), RNG.uniform(0.05, 1.0, 400)
    F = RNG.uniform(-5e3, 5e3, 400)
    phi, T = manual(q, a, b, F)
    folded = b + a * np.cos(q) < 0
    assert 20 < folded.sum() < 380
    T_here, phi_here = cylinder_torque(q, a, b, F), cylinder_angle(q, a, b)
    assert np.allclose(T_here[~folded], T[~folded], rtol=1e-13, atol=1e-10)
    assert np.allclose(phi_here[~folded], phi[~folded], atol=1e-14)
    # where b + a cos q1 < 0 the printed one-argument tan⁻¹ is off by π, which flips the sign of
    # T1 (the virtual-work test below says which sign is right); atan2 keeps the quadrant
    assert np.allclose(np.abs(phi_here[folded] - phi[folded]), np.pi, atol=1e-14)
    assert np.allclose(T_here[folded], -T[folded], rtol=1e-13, atol=1e-10)
    assert np.allclose(T_here, F * b * np.sin(phi_here), rtol=1e-13, atol=1e-10)     # eq. 2.2 with atan2


def test_torque_is_the_virtual_work_of_the_cylinder_force():
    """T1 = −F1 ∂L/∂q1 (F1 > 0 pulls the mounts together), L by central differences of the mount
    points' distance."""
    h, folded = 1e-6, 0
    for _ in range(200):
        q, a, b, F = RNG.uniform(-3.1, 3.1), RNG.uniform(0.1, 1.0), RNG.uniform(0.1, 1.0), RNG.uniform(-1e3, 1e3)
        length = lambda x: np.linalg.norm(np.subtract(*mounts(x, a, b)))  # noqa: E731
        T_fd = -F * (length(q + h) - length(q - h)) / (2 * h)
        assert abs(cylinder_torque(q, a, b, F) - T_fd) <= 1e-7 * max(1.0, abs(F))
        folded += b + a * np.cos(q) < 0
        # and the lever arm: the distance from the axis to the cylinder's line is b sin φ
        R, A = mounts(q, a, b)
        u = (A - R) / np.linalg.norm(A - R)
        arm = abs(R[0] * u[1] - R[1] * u[0])
        assert np.isclose(abs(cylinder_torque(q, a, b, 1.0)), arm, rtol=1e-12, atol=1e-15)
    assert folded > 10                     # the folded configurations are checked too


def test_symbolic_torque_equals_the_numeric_one_and_the_length_derivative():
    q, a, b, F = sp.symbols("q1 a b F1", real=True)
    T = cylinder_torque(q, a, b, F)
    L = sp.sqrt(a**2 + b**2 + 2 * a * b * sp.cos(q))
    assert sp.simplify(T + F * sp.diff(L, q)) == 0
    assert sp.simplify(T - F * b * sp.sin(cylinder_angle(q, a, b))) == 0
    f = sp.lambdify((q, a, b, F), T, "numpy")
    x = RNG.uniform(0.1, 1.0, (4, 50))
    x[0] = RNG.uniform(-3, 3, 50)
    assert np.allclose(f(*x), cylinder_torque(*x), rtol=1e-14, atol=1e-14)


def _arm(force_element):
    """Two links in a horizontal plane (z axes vertical), joint 2 at l1 on link 1."""
    q1, q2, dq1, dq2, F = sp.symbols("q1 q2 dq1 dq2 F1", real=True)
    l1 = 0.8
    bodies = [Body("link1", 2.0, sp.diag(0.01, 0.1, 0.1), sp.Matrix([0.4, 0, 0]), sp.zeros(3, 1), rot_z(q1)),
              Body("link2", 1.5, sp.diag(0.01, 0.08, 0.08), sp.Matrix([0.3, 0, 0]), sp.Matrix([l1, 0, 0]),
                   rot_z(q2), parent="link1")]
    return compute_pne(bodies, [force_element(q2, F, l1)], [q1, q2], [dq1, dq2], [F], (0, 0, -9.81),
                       kinematics=False), (q1, q2, F)


def test_compute_pne_torque_element_equals_the_cylinder_as_a_lin_element():
    a, b = 0.25, 0.35

    def as_torque(q2, F, l1):
        return cylinder_element("link1", "link2", q2, a, b, F, name="cylinder")

    def as_force(q2, F, l1):
        # the cylinder's force on B at its mount, pulling toward P's mount, in B coordinates
        R_P = sp.Matrix([l1 - b, 0, 0])
        A_P = sp.Matrix([l1 + a * sp.cos(q2), a * sp.sin(q2), 0])
        d = R_P - A_P
        B_F = rot_z(q2).T * d * F / sp.sqrt(d.dot(d))
        return LinForce("link1", "link2", P_r_R=R_P, B_r_A=sp.Matrix([a, 0, 0]), B_F=B_F)

    (eom_T, (q1, q2, F)), (eom_F, _) = _arm(as_torque), _arm(as_force)
    fT = sp.lambdify((q1, q2, F), eom_T.f, "numpy")
    fF = sp.lambdify((q1, q2, F), eom_F.f, "numpy")
    for _ in range(20):
        x = (RNG.uniform(-3, 3), RNG.uniform(-3, 3), RNG.uniform(-100, 100))
        got, want = np.ravel(fT(*x)).astype(float), np.ravel(fF(*x)).astype(float)
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12)
        assert abs(got[0]) < 1e-12 and np.isclose(got[1], cylinder_torque(x[1], a, b, x[2]), rtol=1e-13)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="a: expected a positive"):
        cylinder_torque(0.3, -0.1, 0.5, 10.0)
    with pytest.raises(ValueError, match="b: expected a positive"):
        cylinder_torque(0.3, 0.1, np.nan, 10.0)
    with pytest.raises(ValueError, match="F: expected a finite"):
        cylinder_torque(0.3, 0.1, 0.2, np.inf)
    with pytest.raises(ValueError, match="q: expected finite"):
        cylinder_angle(np.nan, 0.1, 0.2)
    with pytest.raises(ValueError, match="mounts coincide"):
        cylinder_torque(np.pi, 0.4, 0.4, 10.0)
    q, F = sp.symbols("q F")
    with pytest.raises(TypeError, match="q: expected the joint's coordinate"):
        cylinder_element(None, 0, 0.3, 0.1, 0.2, F)
    with pytest.raises(ValueError, match="axis: expected a unit vector"):
        cylinder_element(None, 0, q, 0.1, 0.2, F, axis=(0, 0, 2))
    with pytest.raises(ValueError, match="a: expected a positive"):
        cylinder_element(None, 0, q, 0.0, 0.2, F)
