"""Floating base: FDfb/IDfb against ABA/RNEA/HD, fbkin, fbanim, FREE joint against Pinocchio,
and a tumbling body integrated with FDfb conserving energy and momentum."""
from __future__ import annotations

import numpy as np
import pytest

from multibody.dynamics import aba
from multibody.dynamics import crba
from multibody.dynamics import energy
from multibody.dynamics.floating import (check_floatbase_model, fbanim, fbkin, fbkin_forward, fbkin_inverse,
                                         fd_fb, id_fb)
from multibody.dynamics import hybrid_dynamics
from multibody.dynamics import rnea
from multibody.model.builder import ModelBuilder
from multibody.model.joints import JointType
from multibody.models import auto_tree, floatbase, singlebody
from multibody.spatial import quat_to_matrix

RNG = np.random.default_rng(7)


def branched_model(gravity=(0.0, 0.0, -9.81)):
    """A fixed-base tree with revolute, prismatic, helical and spherical joints, to be floated."""
    b = ModelBuilder("branched", gravity=gravity)
    I = lambda *d: np.diag(d)  # noqa: E731,E741
    b.add_body("torso", None, "Rz", mass=5.0, com=[0.1, 0.0, 0.2], inertia=I(0.3, 0.4, 0.2))
    b.add_body("arm", "torso", "revolute", axis=[0.3, 0.4, 0.866], mass=1.0, com=[0.3, 0, 0],
               inertia=I(0.01, 0.05, 0.05), joint_translation=[0.2, 0.1, 0.3])
    b.add_body("slider", "arm", "prismatic", axis=[1, 0, 0], mass=0.5, com=[0.1, 0.05, 0],
               inertia=I(0.002, 0.003, 0.004), joint_translation=[0.6, 0, 0],
               joint_rotation=quat_to_matrix([0.9, 0.1, -0.3, 0.2]))
    b.add_body("ball", "torso", "spherical", mass=2.0, com=[0, 0, -0.3], inertia=I(0.05, 0.05, 0.02),
               joint_translation=[-0.1, 0.0, -0.2])
    b.add_body("screw", "ball", "H", pitch=0.05, mass=0.3, com=[0, 0.1, 0], inertia=I(0.01, 0.002, 0.01),
               joint_translation=[0, 0, -0.6])
    return b.build()


FB_MODELS = {
    "auto_tree": floatbase(auto_tree(7, bf=2, skew=0.4, taper=0.9)),
    "branched": floatbase(branched_model()),
}


def free_twin(fbm):
    """The same system with a FREE joint in place of floatbase's six-joint chain."""
    b = ModelBuilder(f"free({fbm.name})", gravity=fbm.gravity)
    b.add_body(fbm.body_names[5], None, "free", mass=fbm.mass[5], com=fbm.com[5], inertia=fbm.inertia_com[5],
               allow_massless=True)
    for i in range(6, fbm.nb):
        b.add_body(fbm.body_names[i], int(fbm.parent[i]) - 5, JointType(fbm.jtype[i]), axis=fbm.jaxis[i],
                   pitch=fbm.jpitch[i], mass=fbm.mass[i], com=fbm.com[i], inertia=fbm.inertia_com[i],
                   joint_rotation=fbm.tree_rotation[i], joint_translation=fbm.tree_translation[i],
                   allow_massless=True)
    return b.build()


def x_to_free(x, q, qd):
    """xfb and real-joint state → FREE-model state (q = [r; qn; q_r], qd = [ω_B; v_B; qd_r])."""
    E = quat_to_matrix(x[..., :4])                    # fixed → base coordinates
    r, w, vO = x[..., 4:7], x[..., 7:10], x[..., 10:13]
    wB = np.einsum("...ij,...j->...i", E, w)
    vB = np.einsum("...ij,...j->...i", E, vO + np.cross(w, r))   # velocity of the base origin
    return np.concatenate([r, x[..., :4], q], -1), np.concatenate([wB, vB, qd], -1)


def a_free_to_fixed(x, qdd_free):
    """Base acceleration of the FREE model (body coords, = spatial accel.) → fixed coords at O."""
    E = quat_to_matrix(x[..., :4])
    r = x[..., 4:7]
    al = np.einsum("...ji,...j->...i", E, qdd_free[..., :3])
    aB = np.einsum("...ji,...j->...i", E, qdd_free[..., 3:6])
    return np.concatenate([al, aB - np.cross(al, r)], -1)


def random_real(model, n, rng=RNG):
    """Random real-joint states (quaternions of spherical joints normalised)."""
    q = rng.normal(size=(n, model.nq - 6))
    for i in range(6, model.nb):
        if model.jtype[i] == JointType.SPHERICAL:
            s = model.q_start[i] - 6
            q[:, s:s + 4] /= np.linalg.norm(q[:, s:s + 4], axis=1, keepdims=True)
    return q, rng.normal(size=(n, model.nv - 6)), rng.normal(size=(n, model.nv - 6))


def random_emulation(n, rng=RNG, margin=0.3):
    """Six emulation-joint states away from the singularity |q5| = π/2."""
    q = np.concatenate([rng.normal(size=(n, 3)), rng.uniform(-np.pi, np.pi, (n, 1)),
                        rng.uniform(-np.pi / 2 + margin, np.pi / 2 - margin, (n, 1)),
                        rng.uniform(-np.pi, np.pi, (n, 1))], 1)
    return q, rng.normal(size=(n, 6)), rng.normal(size=(n, 6))


# --------------------------------------------------------------------------- FDfb / IDfb
@pytest.mark.parametrize("name", FB_MODELS)
def test_fd_fb_agrees_with_aba_on_the_floatbase_model(name):
    m = FB_MODELS[name]
    N = 40
    qe, qde, _ = random_emulation(N)
    qr, qdr, taur = random_real(m, N)
    fext = RNG.normal(size=(N, m.nb, 6))
    fext[:, :5] = 0.0  # massless chain: FDfb ignores these rows, ABA would not
    x = fbkin(qe, qde)
    xd, qdd = fd_fb(m, x, qr, qdr, taur, fext)
    qf, qdf = np.concatenate([qe, qr], 1), np.concatenate([qde, qdr], 1)
    qddf = aba(m, qf, qdf, np.concatenate([np.zeros((N, 6)), taur], 1), fext)
    _, xd_ref = fbkin(qe, qde, qddf[:, :6])
    assert np.allclose(qdd, qddf[:, 6:], rtol=1e-10, atol=1e-10)
    assert np.allclose(xd, xd_ref, rtol=1e-10, atol=1e-10)
    # the first five rows of f_ext are ignored, as in the seed
    junk = fext.copy()
    junk[:, :5] = RNG.normal(size=(N, 5, 6))
    xd2, qdd2 = fd_fb(m, x, qr, qdr, taur, junk)
    assert np.array_equal(xd2, xd) and np.array_equal(qdd2, qdd)


@pytest.mark.parametrize("name", FB_MODELS)
def test_id_fb_agrees_with_rnea_and_hybrid_dynamics(name):
    m = FB_MODELS[name]
    N = 40
    qe, qde, _ = random_emulation(N)
    qr, qdr, qddr = random_real(m, N)
    fext = RNG.normal(size=(N, m.nb, 6))
    fext[:, :5] = 0.0
    x = fbkin(qe, qde)
    xd, tau = id_fb(m, x, qr, qdr, qddr, fext)
    qdde = fbkin(x, xd)[2]  # the base acceleration IDfb found, as emulation-joint accelerations
    qf, qdf = np.concatenate([qe, qr], 1), np.concatenate([qde, qdr], 1)
    tauf = rnea(m, qf, qdf, np.concatenate([qdde, qddr], 1), fext)
    assert np.allclose(tauf[:, :6], 0, atol=1e-9)           # the floating base is unactuated
    assert np.allclose(tau, tauf[:, 6:], rtol=1e-10, atol=1e-10)
    fd = np.array([True] * 6 + [False] * (m.nb - 6))
    qddh, tauh = hybrid_dynamics(m, fd, qf, qdf, np.concatenate([np.zeros((N, 6)), qddr], 1),
                                 np.zeros((N, m.nv)), fext)
    assert np.allclose(qddh[:, :6], qdde, rtol=1e-9, atol=1e-9)
    assert np.allclose(tauh[:, 6:], tau, rtol=1e-10, atol=1e-10)
    # IDfb inverts FDfb
    xd2, qdd2 = fd_fb(m, x, qr, qdr, tau, fext)
    assert np.allclose(qdd2, qddr, rtol=1e-9, atol=1e-9) and np.allclose(xd2, xd, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", FB_MODELS)
def test_fd_fb_equals_aba_with_a_free_joint_even_at_the_singularity(name):
    m = FB_MODELS[name]
    fm = free_twin(m)
    N = 30
    qe, qde, _ = random_emulation(N)
    qe[:10, 4] = np.pi / 2          # exactly singular for the emulation
    qe[10:20, 4] = -np.pi / 2 + 1e-9
    qr, qdr, taur = random_real(m, N)
    x = fbkin(qe, qde)
    x[:, :4] = RNG.normal(size=(N, 4))  # any orientation, not normalised: FDfb normalises for rq
    x[:, :4] /= np.linalg.norm(x[:, :4], axis=1, keepdims=True)
    xd, qdd = fd_fb(m, x, qr, qdr, taur)
    qf, qdf = x_to_free(x, qr, qdr)
    qddf = aba(fm, qf, qdf, np.concatenate([np.zeros((N, 6)), taur], 1))
    assert np.all(np.isfinite(xd)) and np.all(np.isfinite(qdd))
    assert np.allclose(qdd, qddf[:, 6:], rtol=1e-10, atol=1e-10)
    assert np.allclose(xd[:, 7:], a_free_to_fixed(x, qddf), rtol=1e-10, atol=1e-10)
    _, tau = id_fb(m, x, qr, qdr, qdd)
    assert np.allclose(tau, taur, rtol=1e-9, atol=1e-9)
    # whereas the emulation's joint-space inertia is singular there (ABA on it is meaningless)
    qf6 = np.concatenate([qe[:10], qr[:10]], 1)
    M = crba(m, qf6)
    assert np.all(np.linalg.svd(M[:, :6, :6], compute_uv=False)[:, -1] < 1e-10 * np.abs(M).max())


def test_xdfb_kinematic_part():
    m = FB_MODELS["auto_tree"]
    qe, qde, _ = random_emulation(5)
    x = fbkin(qe, qde)
    qr, qdr, taur = random_real(m, 5)
    xd, _ = fd_fb(m, x, qr, qdr, taur)
    # ṙ of the base origin is Vpt(v, r) = v_O + ω × r, and the quaternion rate is rqd(ω, qn)
    assert np.allclose(xd[:, 4:7], qde[:, :3])
    from multibody.spatial import rqd
    assert np.allclose(xd[:, :4], rqd(x[:, 7:10], x[:, :4]))


def test_batching_and_broadcasting():
    m = FB_MODELS["branched"]
    qe, qde, _ = random_emulation(6)
    qr, qdr, taur = random_real(m, 6)
    x = fbkin(qe, qde)
    xd, qdd = fd_fb(m, x.reshape(2, 3, 13), qr.reshape(2, 3, -1), qdr.reshape(2, 3, -1), taur.reshape(2, 3, -1))
    assert xd.shape == (2, 3, 13) and qdd.shape == (2, 3, m.nv - 6)
    for k in range(6):
        xk, qk = fd_fb(m, x[k], qr[k], qdr[k], taur[k])
        assert xk.shape == (13,) and np.allclose(xk, xd.reshape(6, 13)[k]) and np.allclose(qk, qdd.reshape(6, -1)[k])
    xb, _ = fd_fb(m, x[0], qr[0], qdr[0], taur)       # one state, many torques
    assert xb.shape == (6, 13)


def test_bad_input():
    m = FB_MODELS["auto_tree"]
    x = np.r_[1.0, 0, 0, 0, np.zeros(9)]
    z = np.zeros(m.nv - 6)
    with pytest.raises(ValueError, match="xfb"):
        fd_fb(m, x[:12], z, z, z)
    with pytest.raises(ValueError, match="tau"):
        fd_fb(m, x, z, z, np.zeros(m.nv))
    with pytest.raises(ValueError, match="xfb"):
        fd_fb(m, np.r_[np.nan, x[1:]], z, z, z)
    with pytest.raises(ValueError, match="zero norm"):
        id_fb(m, np.r_[0.0, 0, 0, 0, x[4:]], z, z, z)
    with pytest.raises(ValueError, match="floatbase"):
        fd_fb(auto_tree(8), x, np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="floatbase|hangs from"):
        b = ModelBuilder()
        for k, c in enumerate(["Px", "Py", "Pz", "Rx", "Ry"]):
            b.add_body(f"c{k}", k - 1 if k else None, c, mass=0, allow_massless=True)
        b.add_body("base", 4, "Rz", mass=1, inertia=np.eye(3))
        b.add_body("stray", 2, "Rz", mass=1, inertia=np.eye(3))
        check_floatbase_model(b.build())


def test_floatbase_convention_and_seed_warning():
    with pytest.warns(UserWarning, match="offset is lost"):
        b = ModelBuilder()
        b.add_body("a", None, "Rz", mass=1, inertia=np.eye(3), joint_translation=[1, 0, 0])
        floatbase(b.build())
    m = FB_MODELS["auto_tree"]
    assert m.nb == 7 + 5 and np.all(m.mass[:5] == 0) and m.parent.tolist()[:6] == [-1, 0, 1, 2, 3, 4]
    # a free joint 1 is replaced as any other: the same body, its velocity [ω; v] read as the chain's
    # translation and Euler rates (equal at the zero pose), as symbolic derivation takes it
    body = singlebody()
    fb = floatbase(body)
    assert fb.joint_names[:6] == ("fb_Px", "fb_Py", "fb_Pz", "fb_Rx", "fb_Ry", "fb_Rz") and fb.nv == 6
    swap = [3, 4, 5, 0, 1, 2]
    H_free = crba(body, np.array([0, 0, 0, 1.0, 0, 0, 0]))
    assert np.allclose(crba(fb, np.zeros(6)), H_free[np.ix_(swap, swap)], atol=1e-14)


# --------------------------------------------------------------------------- fbkin / fbanim
def test_fbkin_forms_and_round_trips():
    N = 200
    q, qd, qdd = random_emulation(N, margin=1e-3)
    p = fbkin(q)
    assert p.shape == (N, 7) and np.allclose(np.linalg.norm(p[:, :4], axis=1), 1)
    assert np.allclose(fbkin(p), q, atol=1e-12)
    x = fbkin(q, qd)
    assert x.shape == (N, 13)
    q1, qd1 = fbkin(x)
    assert np.allclose(q1, q, atol=1e-12) and np.allclose(qd1, qd, rtol=1e-7, atol=1e-7)
    x2, xd = fbkin(q, qd, qdd)
    assert np.allclose(x2, x)
    q2, qd2, qdd2 = fbkin(x, xd)
    ok = np.abs(np.cos(q[:, 4])) > 0.05  # velocities and accelerations degrade near the singularity
    assert np.allclose(q2, q, atol=1e-12)
    assert np.allclose(qd2[ok], qd[ok], rtol=1e-9, atol=1e-9)
    assert np.allclose(qdd2[ok], qdd[ok], rtol=1e-8, atol=1e-8)
    # explicit names do the same
    assert np.allclose(fbkin_forward(q[0], qd[0]), x[0]) and np.allclose(fbkin_inverse(x[0])[1], qd1[0])


def test_fbkin_normalises_angles_and_reproduces_any_orientation():
    N = 500
    qn = RNG.normal(size=(N, 4))
    qn /= np.linalg.norm(qn, axis=1, keepdims=True)
    qn[:20] = [np.cos(0.3), 0, np.sin(0.3), 0]        # q5 = ±π/2 exactly (rotation about y by ±π/2)
    qn[:10] = [np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0]
    p = np.concatenate([qn, RNG.normal(size=(N, 3))], 1)
    q = fbkin(p)
    assert np.all(np.abs(q[:, [3, 5]]) <= np.pi) and np.all(np.abs(q[:, 4]) <= np.pi / 2 + 1e-15)
    p2 = fbkin(q)
    assert np.allclose(quat_to_matrix(p2[:, :4]), quat_to_matrix(qn), atol=1e-12)
    assert np.allclose(p2[:, 4:], p[:, 4:])
    # out-of-range angles come back normalised, same orientation
    wild = np.array([[0, 0, 0, 5.0, 2.0, -7.0]])
    qw = fbkin(fbkin(wild))
    assert np.all(np.abs(qw[:, [3, 5]]) <= np.pi) and abs(qw[0, 4]) <= np.pi / 2
    assert np.allclose(quat_to_matrix(fbkin(qw)[:, :4]), quat_to_matrix(fbkin(wild)[:, :4]))


def test_fbkin_derivatives_match_finite_differences():
    q0, qd0, qdd0 = random_emulation(20, margin=0.2)
    x, xd = fbkin(q0, qd0, qdd0)
    h = 1e-6
    qt = lambda t: q0 + qd0 * t + 0.5 * qdd0 * t * t  # noqa: E731
    qdt = lambda t: qd0 + qdd0 * t  # noqa: E731
    num = (fbkin(qt(h), qdt(h)) - fbkin(qt(-h), qdt(-h))) / (2 * h)
    sign = np.sign(np.sum(fbkin(qt(h), qdt(h))[:, :4] * x[:, :4], 1))
    assert np.all(sign > 0)  # no quaternion sign flip inside the difference
    assert np.allclose(num, xd, rtol=1e-6, atol=1e-6)


def test_fbkin_bad_input():
    with pytest.raises(ValueError, match="6 \\(q\\), 7 \\(p\\) or 13"):
        fbkin(np.zeros(5))
    with pytest.raises(ValueError, match="1 to 3"):
        fbkin()
    with pytest.raises(ValueError, match="inverse"):
        fbkin(np.zeros(13), np.zeros(13), np.zeros(13))
    with pytest.raises(ValueError, match="13-element"):
        fbkin(np.r_[1.0, 0, 0, 0, 0, 0, 0], np.zeros(13))


def test_fbanim_removes_wraparounds():
    t = np.linspace(0, 10, 401)
    ang = 2.0 * t                                       # spins about x through several turns
    qn = np.stack([np.cos(ang / 2), np.sin(ang / 2), 0 * t, 0 * t], 1)
    X = np.concatenate([qn, np.zeros((len(t), 3)), np.zeros((len(t), 6))], 1)
    raw = np.stack([fbkin(x[:7]) for x in X])
    assert np.ptp(raw[:, 3]) <= 2 * np.pi and np.abs(np.diff(raw[:, 3])).max() > 6  # wraps
    Q = fbanim(X)
    assert np.allclose(Q[:, 3], ang, atol=1e-9) and np.allclose(Q[:, [4, 5]], 0, atol=1e-9)
    Qr = np.arange(len(t) * 2.0).reshape(-1, 2)
    Qc = fbanim(X.T, Qr.T)                               # the seed's column layout
    assert Qc.shape == (8, len(t)) and np.allclose(Qc[:6].T, Q) and np.allclose(Qc[6:].T, Qr)
    Q3 = fbanim(X.T[:7, None, :], Qr.T[:, None, :])      # 7×1×N and M×1×N
    assert np.allclose(Q3, Qc)
    with pytest.raises(ValueError, match="fbanim"):
        fbanim(np.zeros((5, 9)))
    with pytest.raises(ValueError, match="Qr"):
        fbanim(X, np.zeros((3, 2)))


# --------------------------------------------------------------------------- integration
def _fb_single():
    """spatial_v2's singlebody as a floatbase model: the same 3×2×1 box on floatbase's chain."""
    s = singlebody()
    b = ModelBuilder("box", gravity=(0, 0, 0))
    b.add_body("box", None, "Rz", mass=s.mass[0], com=s.com[0], inertia=s.inertia_com[0])
    return floatbase(b.build()), s


def _rk4(f, x, dt, steps):
    for _ in range(steps):
        k1 = f(x)
        k2 = f(x + 0.5 * dt * k1)
        k3 = f(x + 0.5 * dt * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


def test_tumbling_singlebody_conserves_energy_and_momentum():
    m, s = _fb_single()
    N = 8  # eight tumbling boxes at once (one batched FDfb call per stage)
    rng = np.random.default_rng(11)   # its own draw: the module's RNG depends on which tests ran before
    x0 = np.zeros((N, 13))
    x0[:, :4] = rng.normal(size=(N, 4))
    x0[:, :4] /= np.linalg.norm(x0[:, :4], axis=1, keepdims=True)
    x0[:, 4:7] = rng.normal(size=(N, 3))
    x0[:, 7:10] = rng.normal(size=(N, 3)) * 3          # spinning about every axis: tumbling
    x0[0, 7:10] = quat_to_matrix(x0[0, :4]).T @ [0.01, 4.0, 0.01]  # near the intermediate axis
    x0[:, 10:13] = rng.normal(size=(N, 3))
    e = np.zeros((N, 0))
    f = lambda x: fd_fb(m, x, e, e, e)[0]  # noqa: E731
    x1 = _rk4(f, x0, 1e-3, 5000)                        # 5 s

    def invariants(x):
        x = x.copy()
        x[:, :4] /= np.linalg.norm(x[:, :4], axis=1, keepdims=True)
        qf, qdf = x_to_free(x, e, e)
        en = energy(s, qf, qdf)
        return en.KE, en.htot
    KE0, h0 = invariants(x0)
    KE1, h1 = invariants(x1)
    assert np.allclose(KE1, KE0, rtol=1e-9)
    # momentum is as good as RK4's orientation after 5 s of fast tumbling at dt = 1 ms: over 40 draws
    # 2e-10 … 6e-8 of |h|, where a wrong FDfb is off by O(1) (1e-9 held for only half of the draws)
    assert np.allclose(h1, h0, rtol=0, atol=1e-7 * np.abs(h0).max())
    assert np.allclose(np.linalg.norm(x1[:, :4], axis=1), 1, atol=1e-9)  # rqd's stabiliser
    # the near-intermediate-axis box really tumbles: its body-frame spin flips sign
    xs, flips = x0[:1], []
    for _ in range(40):                                 # 8 s
        xs = _rk4(lambda x: fd_fb(m, x, e, e, e)[0], xs, 4e-3, 50)
        flips.append((quat_to_matrix(xs[0, :4]) @ xs[0, 7:10])[1])
    assert min(flips) < -3.5 and flips[0] > 3.5


def test_floating_tree_under_gravity_conserves_energy():
    m = FB_MODELS["branched"]
    fm = free_twin(m)
    N = 4
    qe, qde, _ = random_emulation(N)
    qr, qdr, _ = random_real(m, N)
    x0 = np.concatenate([fbkin(qe, qde), qr, qdr], 1)
    nq = m.nq - 6

    def f(z):
        x, q, qd = z[:, :13], z[:, 13:13 + nq], z[:, 13 + nq:]
        xd, qdd = fd_fb(m, x, q, qd, np.zeros_like(qd))
        # q̇ of the real joints: spherical joints need the quaternion rate from ω
        qdot = np.zeros_like(q)
        for i in range(6, m.nb):
            s, v = m.q_start[i] - 6, m.v_start[i] - 6
            if m.jtype[i] == JointType.SPHERICAL:
                from multibody.spatial import rqd
                qdot[:, s:s + 4] = rqd(q[:, s:s + 4], qd[:, v:v + 3])
            else:
                qdot[:, s] = qd[:, v]
        return np.concatenate([xd, qdot, qdd], 1)

    def total(z):
        x, q, qd = z[:, :13], z[:, 13:13 + nq], z[:, 13 + nq:]
        qf, qdf = x_to_free(x, q, qd)
        en = energy(fm, qf, qdf)
        return en.KE + en.PE
    z1 = _rk4(f, x0, 5e-4, 2000)                        # 1 s
    assert np.allclose(total(z1), total(x0), rtol=1e-8)


# --------------------------------------------------------------------------- FREE joint vs Pinocchio
@pytest.mark.parametrize("name", ["singlebody", "branched_free"])
def test_free_joint_against_pinocchio_free_flyer(name):
    import pinocchio as pin
    from pin_states import q_to_pin, random_state, to_pinocchio, v_perm
    m = singlebody() if name == "singlebody" else free_twin(FB_MODELS["branched"])
    pm = to_pinocchio(m)
    pd = pm.createData()
    assert isinstance(pm.joints[1].extract(), pin.JointModelFreeFlyer)
    p = v_perm(m)
    for _ in range(20):
        q, qd, qdd = random_state(m, RNG)
        qp = q_to_pin(m, q)
        tau = rnea(m, q, qd, qdd)
        assert np.allclose(tau[p], pin.rnea(pm, pd, qp, qd[p], qdd[p]), rtol=1e-10, atol=1e-10)
        M = pin.crba(pm, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        assert np.allclose(crba(m, q)[np.ix_(p, p)], M, rtol=1e-10, atol=1e-10)
        assert np.allclose(aba(m, q, qd, tau)[p], pin.aba(pm, pd, qp, qd[p], tau[p]), rtol=1e-9, atol=1e-9)
