"""Tests for multibody.spatial: spatial_v2 semantics checked against independent computations."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

import multibody as mb
import multibody.spatial as sp
from multibody.spatial import (
    Fpt, Vpt, Xpt, XtoV, crf, crm, mcI, plnr, pluho, plux, rotx, roty, rotz, rq, rqd, rv, rx, ry,
    rz, skew, xlt,
)

RNG = np.random.default_rng(20261122)


def rand_E(rng=RNG):
    return rv(rng.uniform(-1, 1, 3)) @ rz(rng.uniform(-3, 3))


def rand_X(rng=RNG):
    return plux(rand_E(rng), rng.normal(size=3))


# --------------------------------------------------------------------------- rx ry rz
def test_rx_ry_rz_explicit_matrices():
    c, s = np.cos(0.4), np.sin(0.4)
    np.testing.assert_allclose(rx(0.4), [[1, 0, 0], [0, c, s], [0, -s, c]])
    np.testing.assert_allclose(ry(0.4), [[c, 0, -s], [0, 1, 0], [s, 0, c]])
    np.testing.assert_allclose(rz(0.4), [[c, s, 0], [-s, c, 0], [0, 0, 1]])


@pytest.mark.parametrize("f, axis", [(rx, 0), (ry, 1), (rz, 2)])
def test_axis_rotations_are_transposed_active_rotations(f, axis):
    # Coordinate transform A->B = transpose of the active rotation taking A's axes to B's.
    for th in [-2.0, 0.3, 1.7, np.pi]:
        rvec = np.zeros(3)
        rvec[axis] = th
        np.testing.assert_allclose(f(th), Rotation.from_rotvec(rvec).as_matrix().T, atol=1e-14)


@pytest.mark.parametrize("f", [rx, ry, rz, rotx, roty, rotz])
def test_axis_rotation_batch(f):
    th = RNG.normal(size=(4, 5))
    out = f(th)
    n = 3 if f in (rx, ry, rz) else 6
    assert out.shape == (4, 5, n, n)
    np.testing.assert_allclose(out[2, 3], f(th[2, 3]))


# --------------------------------------------------------------------------- skew
def test_skew_is_cross_product_and_round_trip():
    a, b = RNG.normal(size=3), RNG.normal(size=3)
    np.testing.assert_allclose(skew(a) @ b, np.cross(a, b), atol=1e-15)
    np.testing.assert_allclose(skew(skew(a)), a)
    S = skew(a)
    np.testing.assert_allclose(S, -S.T)


def test_skew_of_arbitrary_matrix_is_skew_part():
    A = RNG.normal(size=(3, 3))
    v = skew(A)
    np.testing.assert_allclose(skew(v), 0.5 * (A - A.T), atol=1e-15)


def test_skew_batch():
    v = RNG.normal(size=(7, 3))
    S = skew(v)
    assert S.shape == (7, 3, 3)
    np.testing.assert_allclose(S[4] @ v[2], np.cross(v[4], v[2]), atol=1e-15)
    np.testing.assert_allclose(sp.vee(S), v)
    np.testing.assert_allclose(sp.hat(v), S)


# --------------------------------------------------------------------------- rv
def test_rv_seed_examples():
    np.testing.assert_allclose(rv([1, 0, 0]), rx(1), atol=1e-15)
    np.testing.assert_allclose(rv(ry(2)), [0, 2, 0], atol=1e-14)
    np.testing.assert_allclose(rv(np.zeros(3)), np.eye(3))
    np.testing.assert_allclose(rv(np.eye(3)), np.zeros(3))


def test_rv_matches_scipy_and_axis_invariant():
    for _ in range(20):
        v = RNG.normal(size=3)
        E = rv(v)
        np.testing.assert_allclose(E, Rotation.from_rotvec(v).as_matrix().T, atol=1e-13)
        np.testing.assert_allclose(E @ v, v, atol=1e-13)


@pytest.mark.parametrize("angle", [1e-9, 1e-3, 0.5, 2.0, 2.9, 3.0, 3.1, np.pi - 1e-7])
def test_rv_round_trip_all_angle_ranges(angle):
    for _ in range(10):
        u = RNG.normal(size=3)
        v = angle * u / np.linalg.norm(u)
        np.testing.assert_allclose(rv(rv(v)), v, atol=1e-9 * max(1, angle / (np.pi - angle)))


def test_rv_half_turn_either_sign():
    # exactly π: the skew part vanishes, the axis comes from the symmetric part
    for E, axis in [(np.diag([1.0, -1, -1]), 0), (np.diag([-1.0, 1, -1]), 1),
                    (np.diag([-1.0, -1, 1]), 2)]:
        v = rv(E)
        assert abs(abs(v[axis]) - np.pi) < 1e-15 and np.count_nonzero(v) == 1
    for axis in np.eye(3):
        v = rv(rv(np.pi * axis))
        assert abs(np.linalg.norm(v) - np.pi) < 1e-12
        np.testing.assert_allclose(rv(v), rv(np.pi * axis), atol=1e-12)
    u = np.array([1.0, 2.0, -2.0]) / 3
    v = rv(rv(np.pi * u))
    np.testing.assert_allclose(np.abs(v), np.pi * np.abs(u), atol=1e-12)


def test_rv_batch():
    v = RNG.normal(size=(3, 4, 3))
    E = rv(v)
    assert E.shape == (3, 4, 3, 3)
    np.testing.assert_allclose(E[1, 2], rv(v[1, 2]))
    vb = sp.matrix_to_rotvec(E)
    assert vb.shape == (3, 4, 3)
    np.testing.assert_allclose(vb[2, 1], rv(E[2, 1]))
    np.testing.assert_allclose(rv(vb), E, atol=1e-13)
    # explicit forms are unambiguous for a batch of three vectors
    v3 = RNG.normal(size=(3, 3))
    assert sp.rotvec_to_matrix(v3).shape == (3, 3, 3)


# --------------------------------------------------------------------------- rq
def test_rq_seed_example_x_rotation():
    for h in [0.0, 0.3, -1.2, 2.9]:
        q = [np.cos(h / 2), np.sin(h / 2), 0, 0]
        np.testing.assert_allclose(rq(q), rx(h), atol=1e-15)
        np.testing.assert_allclose(rq(rx(h)), q, atol=1e-14)


def test_rq_matches_scipy_scalar_last_quaternion():
    for _ in range(20):
        q = RNG.normal(size=4)
        R = Rotation.from_quat(np.r_[q[1:], q[0]]).as_matrix()  # active rotation of B's axes
        np.testing.assert_allclose(rq(q), R.T, atol=1e-14)


def test_rq_round_trip_and_sign():
    for _ in range(200):
        q = RNG.normal(size=4)
        q /= np.linalg.norm(q)
        q2 = rq(rq(q))
        assert q2[0] >= 0
        np.testing.assert_allclose(q2, np.sign(q[0]) * q, atol=1e-13)


def test_rq_normalizes_and_branch_with_negative_trace():
    q = np.array([0.01, 3.0, -2.0, 1.0])  # trace of E < 0: the second branch of Etoq
    E = rq(q)
    assert np.trace(E) < 0
    np.testing.assert_allclose(rq(5.0 * q), E)
    np.testing.assert_allclose(rq(E), q / np.linalg.norm(q), atol=1e-14)
    np.testing.assert_allclose(E @ E.T, np.eye(3), atol=1e-14)
    assert np.isclose(np.linalg.det(E), 1.0)


def test_rq_batch():
    q = RNG.normal(size=(5, 2, 4))
    E = rq(q)
    assert E.shape == (5, 2, 3, 3)
    np.testing.assert_allclose(E[3, 1], rq(q[3, 1]))
    qb = rq(E)
    assert qb.shape == (5, 2, 4)
    np.testing.assert_allclose(rq(qb), E, atol=1e-13)


def test_rq_composition_matches_hamilton_product():
    # B rel. A is q1, C rel. B is q2  =>  C rel. A is q1 ⊗ q2, and E_AC = E_BC @ E_AB
    def qmul(a, b):
        a0, av, b0, bv = a[0], a[1:], b[0], b[1:]
        return np.r_[a0 * b0 - av @ bv, a0 * bv + b0 * av + np.cross(av, bv)]

    q1, q2 = RNG.normal(size=4), RNG.normal(size=4)
    q1 /= np.linalg.norm(q1)
    q2 /= np.linalg.norm(q2)
    np.testing.assert_allclose(rq(qmul(q1, q2)), rq(q2) @ rq(q1), atol=1e-14)


# --------------------------------------------------------------------------- rqd
def _quat_path(E0, wB, t):
    q = rq(rv(wB * t) @ E0)  # B keeps turning about wB (constant in B coordinates)
    return q


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rqd_matches_finite_difference_both_forms(seed):
    rng = np.random.default_rng(seed)
    q0 = rng.normal(size=4)
    q0 /= np.linalg.norm(q0)
    q0 *= np.sign(q0[0])
    E0 = rq(q0)
    wB = rng.normal(size=3)
    wA = E0.T @ wB
    h = 1e-6
    qp, qm = _quat_path(E0, wB, h), _quat_path(E0, wB, -h)
    qp *= np.sign(qp @ q0)
    qm *= np.sign(qm @ q0)
    fd = (qp - qm) / (2 * h)
    np.testing.assert_allclose(rqd(q0, wB), fd, atol=1e-8)
    np.testing.assert_allclose(rqd(wA, q0), fd, atol=1e-8)
    np.testing.assert_allclose(sp.quat_derivative(q0, wB), fd, atol=1e-8)
    np.testing.assert_allclose(sp.quat_derivative(q0, wA, frame="A"), fd, atol=1e-8)


def test_rqd_stabilizing_term():
    q = 1.3 * np.array([0.5, 0.5, -0.5, 0.5])
    w = np.array([0.3, -2.0, 1.0])
    qd = rqd(q, w)
    nq = np.linalg.norm(q)
    # the rotation part is orthogonal to q; only Kstab*|w|*(1-|q|)/2 * q changes |q|
    assert np.isclose(q @ qd, 0.5 * 0.1 * np.linalg.norm(w) * (1 - nq) * nq**2)
    assert q @ qd < 0
    # integrating keeps |q| near 1 where plain integration would drift
    qi = q.copy()
    for _ in range(6000):  # 30 s of explicit Euler
        qi = qi + 5e-3 * rqd(qi, w)
    assert abs(np.linalg.norm(qi) - 1) < 0.05
    # without the stabilising term the same integration drifts away from 1
    qj = q.copy()
    for _ in range(6000):
        qj = qj + 5e-3 * (rqd(qj, w) - 0.5 * sp.KSTAB * np.linalg.norm(w) * (1 - np.linalg.norm(qj)) * qj)
    assert np.linalg.norm(qj) > nq


def test_rqd_batch_broadcast():
    q = RNG.normal(size=(6, 4))
    w = RNG.normal(size=3)
    out = rqd(q, w)
    assert out.shape == (6, 4)
    np.testing.assert_allclose(out[2], rqd(q[2], w))
    wA = RNG.normal(size=(6, 3))
    out2 = rqd(wA, q)
    assert out2.shape == (6, 4)
    for i in range(6):  # the vectorised path agrees with the single-vector path
        np.testing.assert_allclose(out2[i], rqd(wA[i], q[i]), atol=1e-15)
        np.testing.assert_allclose(out[i], rqd(q[i], w), atol=1e-15)


# --------------------------------------------------------------------------- crm / crf
def _cross_m(v, m):
    w, vo, mw, mo = v[:3], v[3:], m[:3], m[3:]
    return np.r_[np.cross(w, mw), np.cross(w, mo) + np.cross(vo, mw)]


def _cross_f(v, f):
    w, vo, n, fl = v[:3], v[3:], f[:3], f[3:]
    return np.r_[np.cross(w, n) + np.cross(vo, fl), np.cross(w, fl)]


def test_crm_crf_spatial_against_definition():
    for _ in range(10):
        v, m, f = RNG.normal(size=(3, 6))
        np.testing.assert_allclose(crm(v) @ m, _cross_m(v, m), atol=1e-14)
        np.testing.assert_allclose(crf(v) @ f, _cross_f(v, f), atol=1e-14)
        np.testing.assert_allclose(crf(v), -crm(v).T)
        # duality: (v x m) . f + m . (v x* f) = 0
        assert abs((crm(v) @ m) @ f + m @ (crf(v) @ f)) < 1e-12
        assert np.allclose(crm(v) @ v, 0)


def test_crm_is_derivative_of_transform():
    # d/dt X(t) m with X = expm(-t crm(v)) at t=0 is -crm(v) m
    v, m = RNG.normal(size=(2, 6))
    h = 1e-6
    d = (expm(-h * crm(v)) - expm(h * crm(v))) @ m / (2 * h)
    np.testing.assert_allclose(d, -crm(v) @ m, atol=1e-8)


def test_crm_planar_explicit_and_restriction_of_spatial():
    w, vx, vy = 0.7, -1.1, 2.3
    np.testing.assert_allclose(crm([w, vx, vy]), [[0, 0, 0], [vy, 0, -w], [-vx, w, 0]])
    idx = [2, 3, 4]
    v6 = np.array([0, 0, w, vx, vy, 0])
    np.testing.assert_allclose(crm([w, vx, vy]), crm(v6)[np.ix_(idx, idx)])
    np.testing.assert_allclose(crf([w, vx, vy]), crf(v6)[np.ix_(idx, idx)])
    np.testing.assert_allclose(crf([w, vx, vy]), -crm([w, vx, vy]).T)


def test_crm_crf_batch():
    v = RNG.normal(size=(4, 3, 6))
    M, F = crm(v), crf(v)
    assert M.shape == F.shape == (4, 3, 6, 6)
    np.testing.assert_allclose(M[1, 2], crm(v[1, 2]))
    np.testing.assert_allclose(F[3, 0], crf(v[3, 0]))
    assert crm(RNG.normal(size=(5, 3))).shape == (5, 3, 3)


# --------------------------------------------------------------------------- mcI
def test_mcI_spatial_momentum_physics():
    m, c = 2.5, np.array([0.3, -0.2, 0.5])
    A = RNG.normal(size=(3, 3))
    Ic = A @ A.T + np.eye(3)
    rbi = mcI(m, c, Ic)
    w, vO = RNG.normal(size=(2, 3))
    h = rbi @ np.r_[w, vO]
    vc = vO + np.cross(w, c)  # velocity of the CoM
    np.testing.assert_allclose(h[3:], m * vc, atol=1e-13)
    np.testing.assert_allclose(h[:3], Ic @ w + np.cross(c, m * vc), atol=1e-13)
    np.testing.assert_allclose(rbi, rbi.T)


def test_mcI_round_trip_spatial_and_planar():
    m, c = 1.7, np.array([0.1, 0.2, -0.3])
    Ic = np.array([[2.0, 0.1, 0.2], [0.1, 3.0, -0.1], [0.2, -0.1, 1.5]])
    m2, c2, I2 = mcI(mcI(m, c, Ic))
    assert m2 == pytest.approx(m)
    np.testing.assert_allclose(c2, c)
    np.testing.assert_allclose(I2, Ic, atol=1e-14)
    mp, cp, Ip = mcI(mcI(0.8, [0.4, -1.2], 0.35))
    assert (mp, Ip) == (pytest.approx(0.8), pytest.approx(0.35))
    np.testing.assert_allclose(cp, [0.4, -1.2])
    assert isinstance(Ip, float)


def test_mcI_planar_is_restriction_of_spatial():
    m, cx, cy, Izz = 1.3, 0.4, -0.7, 0.21
    R6 = mcI(m, [cx, cy, 0.0], np.diag([0.5, 0.6, Izz]))
    idx = [2, 3, 4]
    np.testing.assert_allclose(mcI(m, [cx, cy], Izz), R6[np.ix_(idx, idx)])


def test_mcI_batch_and_aliases():
    m = np.array([1.0, 2.0, 3.0])
    c = RNG.normal(size=(3, 3))
    I = np.broadcast_to(np.eye(3), (3, 3, 3))
    R = sp.rigid_body_inertia(m, c, I)
    assert R.shape == (3, 6, 6)
    np.testing.assert_allclose(R[1], mcI(2.0, c[1], np.eye(3)))
    m2, c2, I2 = sp.inertia_parameters(R)
    np.testing.assert_allclose(m2, m)
    np.testing.assert_allclose(c2, c)
    np.testing.assert_allclose(I2, I, atol=1e-13)
    assert sp.mci is mcI


# --------------------------------------------------------------------------- transforms
def test_rotx_xlt_explicit():
    np.testing.assert_allclose(rotx(0.3)[:3, :3], rx(0.3))
    np.testing.assert_allclose(rotx(0.3)[3:, 3:], rx(0.3))
    assert np.all(rotx(0.3)[:3, 3:] == 0) and np.all(rotx(0.3)[3:, :3] == 0)
    r = np.array([1.0, -2.0, 0.5])
    X = xlt(r)
    w, v = RNG.normal(size=(2, 3))
    # velocity at B's origin (at r) = v_O + w x r
    np.testing.assert_allclose(X @ np.r_[w, v], np.r_[w, v + np.cross(w, r)], atol=1e-14)


def test_plux_seed_example_and_round_trip():
    np.testing.assert_allclose(plux(rx(1), [2, 3, 4]), rotx(1) @ xlt([2, 3, 4]), atol=1e-15)
    np.testing.assert_allclose(plux(rz(0.5) @ ry(-0.2), [1, 0, 2]),
                               rotz(0.5) @ roty(-0.2) @ xlt([1, 0, 2]), atol=1e-15)
    for _ in range(10):
        E, r = rand_E(), RNG.normal(size=3)
        E2, r2 = plux(plux(E, r))
        np.testing.assert_allclose(E2, E)
        np.testing.assert_allclose(r2, r, atol=1e-14)


def test_plux_batch():
    E = rv(RNG.normal(size=(4, 3)))
    r = RNG.normal(size=(4, 3))
    X = plux(E, r)
    assert X.shape == (4, 6, 6)
    np.testing.assert_allclose(X[2], plux(E[2], r[2]))
    E2, r2 = plux(X)
    np.testing.assert_allclose(r2, r, atol=1e-14)
    # a single E broadcast against many r
    assert plux(E[0], r).shape == (4, 6, 6)


def test_transform_composition_and_force_duality():
    X1, X2 = rand_X(), rand_X()
    E1, r1 = plux(X1)
    E2, r2 = plux(X2)
    np.testing.assert_allclose(X2 @ X1, plux(E2 @ E1, r1 + E1.T @ r2), atol=1e-13)
    m, f = RNG.normal(size=(2, 6))
    Xf = np.linalg.inv(X1).T
    assert abs((X1 @ m) @ (Xf @ f) - m @ f) < 1e-12
    # crm transforms covariantly: X crm(v) X^-1 = crm(X v)
    v = RNG.normal(size=6)
    np.testing.assert_allclose(X1 @ crm(v) @ np.linalg.inv(X1), crm(X1 @ v), atol=1e-12)


def test_pluho_round_trip_and_points():
    for _ in range(10):
        X = rand_X()
        T = pluho(X)
        E, r = plux(X)
        np.testing.assert_allclose(T[:3, :3], E)
        np.testing.assert_allclose(T[:3, 3], -E @ r, atol=1e-14)
        np.testing.assert_allclose(T[3], [0, 0, 0, 1])
        np.testing.assert_allclose(pluho(T), X, atol=1e-14)
        p = RNG.normal(size=(3, 5))
        np.testing.assert_allclose(Xpt(X, p), (T @ np.vstack([p, np.ones(5)]))[:3], atol=1e-13)
    Xb = plux(rv(RNG.normal(size=(2, 3))), RNG.normal(size=(2, 3)))
    np.testing.assert_allclose(pluho(pluho(Xb)), Xb, atol=1e-14)
    np.testing.assert_allclose(sp.homogeneous_to_plucker(sp.plucker_to_homogeneous(Xb)), Xb,
                               atol=1e-14)


# --------------------------------------------------------------------------- planar
def test_plnr_explicit_round_trip_and_restriction():
    th, x, y = 0.8, 1.5, -0.4
    c, s = np.cos(th), np.sin(th)
    X = plnr(th, [x, y])
    np.testing.assert_allclose(X, [[1, 0, 0], [s * x - c * y, c, s], [c * x + s * y, -s, c]])
    idx = [2, 3, 4]
    np.testing.assert_allclose(X, (rotz(th) @ xlt([x, y, 0]))[np.ix_(idx, idx)], atol=1e-15)
    th2, r2 = plnr(X)
    assert th2 == pytest.approx(th)
    np.testing.assert_allclose(r2, [x, y])
    # batch
    ths = RNG.uniform(-3, 3, 6)
    rs = RNG.normal(size=(6, 2))
    Xb = plnr(ths, rs)
    assert Xb.shape == (6, 3, 3)
    tb, rb = plnr(Xb)
    np.testing.assert_allclose(tb, ths)
    np.testing.assert_allclose(rb, rs)


def test_planar_xpt_vpt_fpt_match_spatial():
    th, r = -1.1, np.array([0.3, 0.9])
    X3, X6 = plnr(th, r), rotz(th) @ xlt([*r, 0])
    p = RNG.normal(size=(2, 4))
    p3 = np.vstack([p, np.zeros(4)])
    np.testing.assert_allclose(Xpt(X3, p), Xpt(X6, p3)[:2], atol=1e-14)
    np.testing.assert_allclose(Xpt(X3, r), [0, 0], atol=1e-15)
    v = np.array([0.4, -1.0, 2.0])
    v6 = np.array([0, 0, v[0], v[1], v[2], 0])
    np.testing.assert_allclose(Vpt(v, p), Vpt(v6, p3)[:2], atol=1e-14)
    fp = RNG.normal(size=(2, 4))
    f6 = Fpt(np.vstack([fp, np.zeros(4)]), p3)
    np.testing.assert_allclose(Fpt(fp, p), f6[[2, 3, 4]], atol=1e-14)


# --------------------------------------------------------------------------- XtoV
@pytest.mark.parametrize("angle", [1e-6, 1e-2, 0.5, 2.0, 3.0])
def test_XtoV_invariant_spatial_and_planar(angle):
    for _ in range(5):
        u = RNG.normal(size=3)
        X = plux(rv(angle * u / np.linalg.norm(u)), RNG.normal(size=3))
        v = XtoV(X)
        np.testing.assert_allclose(X @ v, v, atol=1e-13)
        Xp = plnr(angle * RNG.choice([-1, 1]), RNG.normal(size=2))
        vp = XtoV(Xp)
        np.testing.assert_allclose(Xp @ vp, vp, atol=1e-13)


def test_XtoV_approximates_displacement_velocity():
    # X = expm(-t crm(u)) carries A onto B by moving with velocity u for time t
    for t in [1e-2, 1e-3]:
        u = RNG.normal(size=6)
        v = XtoV(expm(-t * crm(u)))
        assert np.linalg.norm(v - t * u) < 10 * t**3 * np.linalg.norm(u) ** 3
        up = RNG.normal(size=3)
        vp = XtoV(expm(-t * crm(up)))
        assert np.linalg.norm(vp - t * up) < 10 * t**3 * np.linalg.norm(up) ** 3
    np.testing.assert_allclose(XtoV(xlt([0.1, 0.2, 0.3])), [0, 0, 0, 0.1, 0.2, 0.3])
    Xb = plux(sp.rotvec_to_matrix(RNG.normal(size=(3, 3))), RNG.normal(size=(3, 3)))
    vb = XtoV(Xb)
    np.testing.assert_allclose(np.einsum("bij,bj->bi", Xb, vb), vb, atol=1e-13)


# --------------------------------------------------------------------------- points
def test_Xpt_single_and_many_points():
    X = rand_X()
    E, r = plux(X)
    p = RNG.normal(size=(3, 6))
    xp = Xpt(X, p)
    assert xp.shape == (3, 6)
    np.testing.assert_allclose(xp, E @ (p - r[:, None]), atol=1e-14)
    np.testing.assert_allclose(Xpt(X, p[:, 2]), xp[:, 2])
    np.testing.assert_allclose(Xpt(X, r), 0, atol=1e-14)


def test_Vpt_against_transform_of_velocity():
    v = RNG.normal(size=6)
    p = RNG.normal(size=(3, 5))
    vp = Vpt(v, p)
    for i in range(5):
        np.testing.assert_allclose(vp[:, i], (xlt(p[:, i]) @ v)[3:], atol=1e-14)
    V = RNG.normal(size=(6, 5))
    vp2 = Vpt(V, p)
    for i in range(5):
        np.testing.assert_allclose(vp2[:, i], Vpt(V[:, i], p[:, i]), atol=1e-14)
    vpl = np.array([0.5, 1.0, -2.0])
    pp = RNG.normal(size=(2, 3))
    for i in range(3):
        np.testing.assert_allclose(Vpt(vpl, pp)[:, i], (plnr(0.0, pp[:, i]) @ vpl)[1:])


def test_Fpt_resultant_and_power():
    fp = RNG.normal(size=(3, 4))
    p = RNG.normal(size=(3, 4))
    f = Fpt(fp, p)
    assert f.shape == (6, 4)
    res = f.sum(axis=1)
    np.testing.assert_allclose(res[3:], fp.sum(axis=1))
    np.testing.assert_allclose(res[:3], np.cross(p.T, fp.T).sum(axis=0))
    for i in range(4):  # force at p is [0; f] in a frame at p; back to A by X^T
        np.testing.assert_allclose(f[:, i], xlt(p[:, i]).T @ np.r_[0, 0, 0, fp[:, i]], atol=1e-14)
    v = RNG.normal(size=6)
    assert np.isclose(res @ v, np.sum(fp * Vpt(v, p)))
    fp2, p2 = RNG.normal(size=(2, 2, 3))
    f2 = Fpt(fp2, p2)
    np.testing.assert_allclose(f2[0], p2[0] * fp2[1] - p2[1] * fp2[0])
    np.testing.assert_allclose(Fpt(fp2[:, 0], p2[:, 0]), f2[:, 0])


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: crm([1, 2, 3, 4]),
         r"^crm: v must have length 6 \(spatial\) or 3 \(planar\), got shape \(4,\)$"),
        (lambda: crf(np.zeros((2, 5))), r"crf: v must have length 6"),
        (lambda: crm([1, np.nan, 0]), r"crm: v contains NaN or inf"),
        (lambda: rx(np.inf), r"rx: theta contains NaN or inf"),
        (lambda: xlt([1, 2]), r"xlt: r must have shape \(\.\.\., 3\), got shape \(2,\)"),
        (lambda: skew([1, 2]), r"skew: x must be a 3-vector"),
        (lambda: rv(np.zeros(4)), r"rv: x must be"),
        (lambda: rq([1, 2, 3]), r"rq: x must be a quaternion \(\.\.\., 4\)"),
        (lambda: rq([0, 0, 0, 0]), r"rq: q must be a nonzero quaternion"),
        (lambda: rqd([1, 2], [1, 0, 0, 0]), r"rqd: first argument must be"),
        (lambda: rqd([1, 0, 0, 0], [1, 2]), r"rqd: wB \(second argument\) must have shape"),
        (lambda: sp.quat_derivative([1, 0, 0, 0], [1, 2, 3], frame="C"), r"frame must be"),
        (lambda: mcI(1.0, [1, 2, 3, 4], np.eye(3)), r"mcI: c must have length 3"),
        (lambda: mcI(1.0, [1, 2, 3], np.eye(2)), r"mcI: I \(spatial"),
        (lambda: mcI(np.nan, [1, 2, 3], np.eye(3)), r"mcI: m contains NaN"),
        (lambda: mcI(np.zeros((6, 6))), r"mcI: rbi has zero mass"),
        (lambda: mcI(np.eye(4)), r"mcI: rbi must be a 6×6"),
        (lambda: plux(np.eye(3)), r"plux: X must have shape \(\.\.\., 6, 6\), got shape \(3, 3\)"),
        (lambda: plux(np.eye(2), [1, 2, 3]), r"plux: E must have shape"),
        (lambda: plnr(0.1, [1, 2, 3]), r"plnr: r must have shape \(\.\.\., 2\)"),
        (lambda: plnr(np.eye(6)), r"plnr: X must have shape"),
        (lambda: pluho(np.eye(5)), r"pluho: X must be a 6×6"),
        (lambda: XtoV(np.eye(4)), r"XtoV: X must be"),
        (lambda: Xpt(np.eye(6), np.zeros((2, 3))), r"Xpt: p must be a 3×n array"),
        (lambda: Xpt(np.eye(5), np.zeros((3, 3))), r"Xpt: X must be"),
        (lambda: Vpt(np.zeros(5), np.zeros(3)), r"Vpt: v must be"),
        (lambda: Vpt(np.zeros((6, 2)), np.zeros((3, 3))), r"Vpt: v has 2 columns but p has 3"),
        (lambda: Fpt(np.zeros((3, 2)), np.zeros((2, 2))), r"Fpt: p must be a 3×n"),
        (lambda: Fpt(np.zeros((3, 2)), np.zeros((3, 4))), r"Fpt: fp has 2 forces but p has 4"),
        (lambda: Fpt([[np.inf], [0], [0]], np.zeros((3, 1))), r"Fpt: fp contains NaN"),
    ],
)
def test_bad_input_raises_value_error_naming_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "call, match",
    [   # a wrong number of arguments is a TypeError, as Python's own calls say (was ValueError)
        (lambda: mcI(1.0, [1, 2, 3]), r"^mcI: expected 1 argument \(rbi\) or 3 arguments \(m, c, I\), got 2$"),
        (lambda: plux(), r"^plux: expected 1 argument \(X\) or 2 arguments \(E, r\), got 0$"),
        (lambda: plnr(1, 2, 3), r"^plnr: expected 1 argument \(X\) or 2 arguments \(theta, r\), got 3$"),
    ],
)
def test_wrong_number_of_arguments_raises_type_error(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize(
    "call, match",
    [   # batches that do not broadcast name the function and the arguments' batch shapes (was numpy's
        # "shape mismatch: objects cannot be broadcast … arg 0 … arg 1")
        (lambda: mcI([1.0, 2.0, 3.0], np.zeros((2, 3)), np.eye(3)),
         r"^mcI: the leading \(batch\) dimensions do not broadcast: m \(3,\), c \(2,\), I \(\)$"),
        (lambda: sp.rigid_body_inertia([1.0, 2.0, 3.0], np.zeros((2, 2)), 0.1),
         r"^rigid_body_inertia: the leading \(batch\) dimensions do not broadcast: m \(3,\), c \(2,\), I \(\)$"),
        (lambda: plnr([0.1, 0.2, 0.3], np.zeros((2, 2))), r"^plnr: .* theta \(3,\), r \(2,\)$"),
        (lambda: plux(np.zeros((2, 3, 3)), np.zeros((3, 3))), r"^plux: .* E \(2,\), r \(3,\)$"),
        (lambda: rqd(np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((3, 3))), r"^rqd: .* q \(2,\), w \(3,\)$"),
        (lambda: sp.quat_derivative(np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((3, 3))),
         r"^quat_derivative: .* q \(2,\), w \(3,\)$"),
    ],
)
def test_batches_that_do_not_broadcast_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


_BIG = 1e308


@pytest.mark.parametrize(
    "name, call",
    [   # finite input, a result beyond the double range: was a silent inf/NaN (with numpy's RuntimeWarnings)
        ("rv", lambda: rv([_BIG, _BIG, 0])),
        ("rotvec_to_matrix", lambda: sp.rotvec_to_matrix([_BIG, _BIG, _BIG])),
        ("rigid_body_inertia", lambda: sp.rigid_body_inertia(1e300, [1e10, 0, 0], np.eye(3))),
        ("mcI", lambda: mcI(1e300, [1e10, 0], 1.0)),
        ("plux", lambda: plux(np.eye(3) * _BIG, [_BIG, 0, 0])),
        ("Xpt", lambda: Xpt(xlt([_BIG, 0, 0]), [-_BIG, 0, 0])),
        ("Vpt", lambda: Vpt([0, 0, _BIG, _BIG, 0, 0], [0, _BIG, 0])),
        ("Fpt", lambda: Fpt([_BIG, _BIG, 0], [_BIG, -_BIG, 0])),
        ("pluho", lambda: pluho(plux(np.eye(3), [_BIG, _BIG, 0]))),
        ("homogeneous_to_plucker", lambda: sp.homogeneous_to_plucker(np.full((4, 4), _BIG))),
        ("vee", lambda: sp.vee(np.array([[0, 0, 0], [0, 0, _BIG], [0, -_BIG, 0]]))),
        ("rq", lambda: rq(np.full((3, 3), _BIG))),
    ],
)
def test_a_result_that_overflows_is_an_error_naming_the_function(name, call):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # and no RuntimeWarning on the way
        with pytest.raises(mb.errors.ResultOverflowError, match=f"^{name}: the result overflows the double range"):
            call()


def test_aliases_point_to_seed_functions():
    assert sp.cross_motion is crm and sp.cross_force is crf
    assert sp.rot_x is rotx and sp.translation is xlt and sp.plucker is plux
    assert sp.x_to_v is XtoV and sp.transform_points is Xpt
    assert sp.point_velocities is Vpt and sp.point_forces is Fpt
    assert sp.planar_transform is plnr and sp.coord_rotation_x is rx
    for name in ["rx", "ry", "rz", "rv", "rq", "rqd", "skew", "crm", "crf", "mcI", "rotx",
                 "roty", "rotz", "xlt", "plnr", "plux", "pluho", "XtoV", "Xpt", "Vpt", "Fpt"]:
        assert name in sp.__all__ and callable(getattr(sp, name))
        assert name in getattr(sp, name).__doc__


# --------------------------------------------------------------------------- properties
finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, 4, elements=finite))
def test_property_rq_round_trip(q):
    n = np.linalg.norm(q)
    if n < 1e-3:
        return
    E = rq(q)
    np.testing.assert_allclose(E @ E.T, np.eye(3), atol=1e-12)
    q2 = rq(E)
    assert q2[0] >= 0
    qn = q / n
    assert min(np.linalg.norm(q2 - qn), np.linalg.norm(q2 + qn)) < 1e-9


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, 3, elements=st.floats(-3, 3)))
def test_property_rv_round_trip(v):
    if np.linalg.norm(v) >= np.pi - 1e-6:
        return
    np.testing.assert_allclose(rv(rv(v)), v, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, 3, elements=st.floats(-3, 3)), arrays(np.float64, 3, elements=finite),
       arrays(np.float64, 6, elements=finite))
def test_property_plux_inverse_and_xtov(v, r, m):
    X = plux(rv(v), r)
    Xinv = plux(rv(v).T, -rv(v) @ r)
    np.testing.assert_allclose(Xinv @ X, np.eye(6), atol=1e-9)
    w = XtoV(X)
    np.testing.assert_allclose(X @ w, w, atol=1e-9)
    E2, r2 = plux(X)
    np.testing.assert_allclose(r2, r, atol=1e-9)


def test_docstring_examples_run():
    import doctest

    import multibody.spatial.rotations as rot
    import multibody.spatial.vectors as vec

    for mod in (rot, vec):
        res = doctest.testmod(mod)
        assert res.failed == 0 and res.attempted > 10


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: rx("a"), r"rx: theta must be a real numeric array, got str"),
        (lambda: rx(1j), r"rx: theta must be real, got a complex array"),
        (lambda: rx(None), r"rx: theta must be a real numeric array, got NoneType"),
        (lambda: xlt([1, None, 2]), r"xlt: r must be a real numeric array, got list"),
    ],
)
def test_wrong_kind_of_input_raises_type_error_naming_argument(call, match):
    """multibody._checks' rule: what is not real numbers is a TypeError (NaN, shapes: ValueError)."""
    with pytest.raises(TypeError, match=match):
        call()
