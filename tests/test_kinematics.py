"""Kinematics against finite differences of the configuration map, and q ⊕ v / q ⊖ q round trips.

Every velocity-level quantity (body twists, Jacobians, CoM velocity) is the time derivative of a
position-level one (forward kinematics, points, CoM) along the curve t ↦ q ⊕ q̇·t, so checking
them by a high-order finite difference also checks that ``integrate`` and the joint motion
subspaces use the same velocity convention (body-frame ω for ball and free joints, [vx vy ω] for
planar joints).
"""
from __future__ import annotations

import numpy as np
import pytest

import multibody as mb
from multibody.model.joints import JointType
from test_dynamics_consistency import ALL, _curve_derivative, model_named, rel, state

CURVED = ["mixed_floating", "mixed_fixed_base", "vee", "singlebody", "tree5", "tree8", "planar4",
          "floatbase_tree"]


def _vee3(S):
    return np.array([S[2, 1], S[0, 2], S[1, 0]])


@pytest.mark.parametrize("name", CURVED)
def test_body_twists_are_derivatives_of_forward_kinematics(name):
    model = model_named(name)
    q, qd, _ = state(model, 30)
    R, p = mb.forward_kinematics(model, q)
    Rdot = _curve_derivative(model, q, qd, np.zeros(model.nv),
                             lambda Q, QD: mb.forward_kinematics(model, Q)[0])
    pdot = _curve_derivative(model, q, qd, np.zeros(model.nv),
                             lambda Q, QD: mb.forward_kinematics(model, Q)[1])
    v = mb.body_states(model, q, qd).v
    for i in range(model.nb):
        Wb = R[i].T @ Rdot[i]
        assert rel(Wb, -Wb.T) < 1e-8                 # Rᵀ Ṙ is skew
        assert rel(_vee3(Wb), v[i, :3]) < 1e-8       # ω in body coordinates
        assert rel(R[i].T @ pdot[i], v[i, 3:]) < 1e-8  # velocity of the body origin, body coordinates


@pytest.mark.parametrize("name", CURVED)
@pytest.mark.parametrize("frame", ["world_aligned", "local", "world"])
def test_jacobians_map_qd_to_twists_and_point_velocities(name, frame):
    model = model_named(name)
    q, qd, _ = state(model, 31)
    s = mb.body_states(model, q, qd)
    r = np.array([0.2, -0.1, 0.3])
    for i in range(model.nb):
        J = mb.body_jacobian(model, q, i, point=r, frame=frame)
        w, v = s.v[i, :3], s.v[i, 3:]
        R, p = s.R[i], s.p[i]
        if frame == "local":
            expected = np.concatenate([w, v + np.cross(w, r)])
        elif frame == "world_aligned":
            expected = np.concatenate([R @ w, R @ (v + np.cross(w, r))])
        else:  # spatial velocity in world coordinates, linear part at the world origin
            expected = np.concatenate([R @ w, R @ v + np.cross(p, R @ w)])
        assert rel(J @ qd, expected) < 1e-12, i
    pv = mb.point_velocity(model, q, qd, model.nb - 1, r)
    assert rel(pv, mb.point_jacobian(model, q, model.nb - 1, r) @ qd) < 1e-12
    dpos = _curve_derivative(model, q, qd, np.zeros(model.nv),
                             lambda Q, QD: mb.point_position(model, Q, model.nb - 1, r))
    assert rel(pv, dpos) < 1e-8


@pytest.mark.parametrize("name", CURVED)
def test_jdot_qd_is_the_derivative_of_J_qd_at_constant_qd(name):
    model = model_named(name)
    q, qd, _ = state(model, 32)
    qd = qd / max(1.0, np.abs(qd).max())
    r = np.array([0.1, 0.25, -0.2])
    body = model.nb - 1
    d = _curve_derivative(model, q, qd, np.zeros(model.nv),
                          lambda Q, QD: mb.body_jacobian(model, Q, body, point=r) @ qd)
    got = mb.jdot_qd(model, q, qd, body, r)
    assert rel(got, d) < 1e-7
    R = mb.forward_kinematics(model, q)[0][body]
    local = mb.jdot_qd(model, q, qd, body, r, frame="local")
    assert rel(np.concatenate([R @ local[:3], R @ local[3:]]), got) < 1e-12
    # the bias is what the point acceleration is at q̈ = 0, and q̈ adds J q̈
    qdd = np.random.default_rng(33).normal(size=model.nv)
    J = mb.body_jacobian(model, q, body, point=r)
    assert rel(mb.point_acceleration(model, q, qd, qdd, body, r), got[3:] + J[3:] @ qdd) < 1e-12


@pytest.mark.parametrize("name", CURVED)
def test_center_of_mass_velocity_and_jacobian(name):
    model = model_named(name)
    q, qd, _ = state(model, 34)
    vcm = mb.com_velocity(model, q, qd)
    assert rel(mb.com_jacobian(model, q) @ qd, vcm) < 1e-12
    d = _curve_derivative(model, q, qd, np.zeros(model.nv), lambda Q, QD: mb.center_of_mass(model, Q))
    assert rel(vcm, d) < 1e-8
    R, p = mb.forward_kinematics(model, q)
    manual = sum(m * (pp + RR @ c) for m, pp, RR, c in zip(model.mass, p, R, model.com)) / model.mass.sum()
    assert rel(mb.center_of_mass(model, q), manual) < 1e-13


def test_forward_kinematics_of_a_hand_computed_chain():
    """planar(3) at (π/2, −π/2, π/2): links go up, right, up; points and frames follow."""
    model = mb.models.planar(3)
    q = np.array([np.pi / 2, -np.pi / 2, np.pi / 2])
    R, p = mb.forward_kinematics(model, q)
    assert rel(p, np.array([[0, 0, 0], [0, 1, 0], [1, 1, 0]])) < 1e-15
    assert rel(mb.point_position(model, q, "link3", [1, 0, 0]), [1, 2, 0]) < 1e-15
    assert rel(R[2], [[0, -1, 0], [1, 0, 0], [0, 0, 1]]) < 1e-15
    b = mb.ModelBuilder()
    b.add_body("arm", None, "Rz", mass=1.0, inertia=[0.1, 0.1, 0.1])
    b.add_frame("tool", "arm", rotation=[[0, -1, 0], [1, 0, 0], [0, 0, 1]], translation=[2, 0, 0])
    m = b.build()
    Rf, pf = mb.frame_pose(m, [np.pi / 2], "tool")
    assert rel(pf, [0, 2, 0]) < 1e-15
    assert rel(Rf, [[-1, 0, 0], [0, -1, 0], [0, 0, 1]]) < 1e-15


# --------------------------------------------------------------------------- q ⊕ v and q ⊖ q
@pytest.mark.parametrize("name", ["mixed_floating", "mixed_fixed_base", "vee", "singlebody", "planar4"])
def test_integrate_difference_round_trips(name):
    model = model_named(name)
    rng = np.random.default_rng(35)
    q0, _, _ = state(model, 36)
    for scale in (1e-3, 0.3, 1.0):
        v = scale * rng.uniform(-1, 1, model.nv)  # rotation angles below π: the logarithm is unique
        q1 = mb.integrate(model, q0, v)
        assert rel(mb.difference(model, q0, q1), v) < 1e-9
        q1b = mb.integrate(model, q0, mb.difference(model, q0, q1))
        assert _same_configuration(model, q1b, q1) < 1e-9
    # quaternions stay unit, and integrating by dt is integrating dt·v
    v = rng.normal(size=model.nv)
    qa = mb.integrate(model, q0, v, 0.37)
    assert rel(qa, mb.integrate(model, q0, 0.37 * v)) < 1e-14
    for i in range(model.nb):
        if model.jtype[i] in (JointType.SPHERICAL, JointType.FREE):
            s = model.q_start[i] + (3 if model.jtype[i] == JointType.FREE else 0)
            assert abs(np.linalg.norm(qa[s:s + 4]) - 1) < 1e-14
    # batched
    V = rng.normal(size=(4, model.nv)) * 0.5
    Q1 = mb.integrate(model, q0, V)
    assert Q1.shape == (4, model.nq)
    assert rel(mb.difference(model, q0, Q1), V) < 1e-9


def _same_configuration(model, qa, qb):
    """Largest difference, with q and −q the same rotation for quaternions."""
    err = 0.0
    for i in range(model.nb):
        s, n = model.q_start[i], model.nq_joint[i]
        a, b = qa[s:s + n], qb[s:s + n]
        if model.jtype[i] in (JointType.SPHERICAL, JointType.FREE):
            k = 3 if model.jtype[i] == JointType.FREE else 0
            err = max(err, np.abs(a[:k] - b[:k]).max(initial=0.0),
                      min(np.abs(a[k:] - b[k:]).max(), np.abs(a[k:] + b[k:]).max()))
        else:
            err = max(err, np.abs(a - b).max(initial=0.0))
    return err


@pytest.mark.parametrize("name", ["singlebody", "mixed_floating"])
def test_integrate_with_a_constant_twist_is_exact(name):
    """A free body with constant body twist: q ⊕ v·(t₁+t₂) = (q ⊕ v·t₁) ⊕ v·t₂ (a one-parameter group)."""
    model = model_named(name)
    q0, v, _ = state(model, 37)
    a = mb.integrate(model, q0, v, 0.9)
    b = mb.integrate(model, mb.integrate(model, q0, v, 0.4), v, 0.5)
    assert _same_configuration(model, a, b) < 1e-13


def test_free_joint_integration_by_hand():
    """Half a turn about body z at unit forward speed: the body moves on a semicircle of radius 1/π."""
    model = mb.models.singlebody()
    q0 = model.neutral()
    v = np.array([0, 0, np.pi, 1.0, 0, 0])  # ω = π ẑ, v = x̂ (body coordinates)
    q1 = mb.integrate(model, q0, v)
    assert rel(q1[:3], [0.0, 2 / np.pi, 0.0]) < 1e-14
    assert _same_configuration(model, q1, np.array([0, 2 / np.pi, 0, 0, 0, 0, 1.0])) < 1e-14


@pytest.mark.parametrize("name", ALL)
def test_neutral_configuration_and_sizes(name):
    model = model_named(name)
    q = model.neutral()
    assert q.shape == (model.nq,)
    R, p = mb.forward_kinematics(model, q)
    assert np.allclose(np.einsum("bij,bkj->bik", R, R), np.eye(3), atol=1e-14)
    assert model.nv == model.S.shape[0] == len(model.dof_parent)
