"""The dynamics algorithms checked against each other and against mechanics (RBDA's own checks).

RNEA, CRBA, ABA, FDcrb, the sparse path and HD are independent implementations of one equation of
motion H(q) q̈ + C(q, q̇, f_ext) = τ; energy and momentum are independent again.  Each test states
a relation that holds exactly in exact arithmetic and checks it to a relative tolerance close to
round-off, on many spatial_v2 ``autoTree`` shapes and on models with every joint type.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import multibody as mb
from multibody.dynamics import fd_sparse
from multibody.model.joints import JointType
from multibody.sparse import ancestor_mask, ltdl, ltl
from multibody.spatial import crf, crm, mcI, plnr, rq

from pin_states import random_state

# --------------------------------------------------------------------------- models
# (nb, bf, skew, taper): chains, binary/ternary and non-integer branching, skew 0 (planar), π/4 and
# "random" fixed values, taper 0.8…1.2, 1…30 bodies.
TREE_SHAPES = [
    (1, 1, 0.0, 1.0),
    (2, 1, math.pi / 4, 1.0),
    (6, 1, math.pi / 4, 0.9),
    (7, 2, 0.0, 1.0),
    (10, 1.5, math.pi / 4, 1.1),
    (12, 3, 0.37, 0.8),
    (16, 2.5, -1.13, 1.2),
    (20, 1.5, 2.61, 0.95),
    (30, 2, math.pi / 4, 0.95),
    (30, 3, 0.61, 1.0),
    (30, 1, 0.29, 0.97),
]


def _rot(rng):
    q = rng.normal(size=4)
    return rq(q / np.linalg.norm(q)).T


def _inertia(rng, m):
    """Inertia about the CoM of a box of random size in a random orientation (a real rigid body)."""
    a, b, c = rng.uniform(0.05, 0.6, 3)
    R = _rot(rng)
    return R @ (m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])) @ R.T


def _unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def mixed(floating=True, fixed=True, gravity=(0.0, 0.0, -9.81), seed=3):
    """Every joint type: free (or spherical) root, spherical, helical, prismatic and revolute about
    random axes, a planar joint on a branch, and optionally a fixed joint carrying a child."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder("mixed", gravity=gravity)

    def body(name, parent, joint, **kw):
        m = rng.uniform(0.5, 2.0)
        b.add_body(name, parent, joint, mass=m, com=rng.normal(scale=0.2, size=3), inertia=_inertia(rng, m),
                   joint_rotation=_rot(rng) if parent is not None else None,
                   joint_translation=rng.normal(scale=0.4, size=3) if parent is not None else (0, 0, 0), **kw)

    body("root", None, "free" if floating else "spherical")
    body("ball", "root", "spherical")
    body("screw", "ball", "helical", axis=_unit(rng), pitch=0.13)
    body("slider", "screw", "prismatic", axis=_unit(rng))
    body("hinge", "slider", "revolute", axis=_unit(rng))
    body("plate", "root", "planar")
    body("flap", "plate", "Rx")
    if fixed:
        body("bracket", "ball", "fixed")
        body("tip", "bracket", "Ry")
        body("tip2", "bracket", "Pz")
    return b.build()


@functools.lru_cache(maxsize=None)
def model_named(name):
    if name.startswith("tree"):
        nb, bf, skew, taper = TREE_SHAPES[int(name[4:])]
        return mb.models.auto_tree(nb, bf=bf, skew=skew, taper=taper)
    return {"mixed_floating": lambda: mixed(True, True),
            "mixed_fixed_base": lambda: mixed(False, True, seed=5),
            "mixed_zero_g": lambda: mixed(True, True, gravity=(0, 0, 0), seed=7),
            "planar4": lambda: mb.models.planar(4),
            "vee": lambda: mb.models.vee(1.3),
            "scissor": mb.models.scissor,
            "singlebody": mb.models.singlebody,
            "floatbase_tree": lambda: mb.models.floatbase(mb.models.auto_tree(4, bf=2, skew=0.5)),
            }[name]()


ALL = [f"tree{k}" for k in range(len(TREE_SHAPES))] + [
    "mixed_floating", "mixed_fixed_base", "mixed_zero_g", "planar4", "vee", "scissor", "singlebody",
    "floatbase_tree"]
FLOATING_ZERO_G = ["vee", "scissor", "singlebody", "mixed_zero_g"]


def state(model, seed=0, n=None):
    """Random (q, q̇, q̈) — or n of them stacked — with unit quaternions for spherical/free joints."""
    rng = np.random.default_rng(seed)
    if n is None:
        return random_state(model, rng)
    qs, vs, as_ = zip(*(random_state(model, rng) for _ in range(n)))
    return np.array(qs), np.array(vs), np.array(as_)


def rel(a, b):
    """max |a − b| relative to the size of b (at least 1)."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b), initial=0.0) / max(1.0, float(np.max(np.abs(b), initial=0.0))))


def random_fext(model, rng, n=None):
    return rng.normal(size=(model.nb, 6) if n is None else (n, model.nb, 6))


# --------------------------------------------------------------------------- RNEA / CRBA / HandC
@pytest.mark.parametrize("name", ALL)
def test_rnea_with_zero_acceleration_is_the_bias_of_hand_c(name):
    model = model_named(name)
    q, qd, qdd = state(model, 1)
    fe = random_fext(model, np.random.default_rng(2))
    for f in (None, fe):
        H, C = mb.hand_c(model, q, qd, f)
        assert rel(mb.rnea(model, q, qd, np.zeros(model.nv), f), C) < 1e-13
        # and the full equation of motion: H q̈ + C = ID(q, q̇, q̈)
        assert rel(H @ qdd + C, mb.rnea(model, q, qd, qdd, f)) < 1e-11


@pytest.mark.parametrize("name", ALL)
def test_crba_columns_are_rnea_unit_acceleration_responses(name):
    model = model_named(name)
    q, _, _ = state(model, 3)
    nv = model.nv
    E = np.eye(nv)
    cols = mb.rnea(model, q, np.zeros(nv), E) - mb.rnea(model, q, np.zeros(nv), np.zeros(nv))
    H = mb.crba(model, q)
    assert rel(H, cols.T) < 1e-12
    assert rel(H, H.T) < 1e-14
    assert np.all(np.linalg.eigvalsh(H) > 0)


# --------------------------------------------------------------------------- forward dynamics
def _fd_tol(H):
    """Solving with H loses about cond(H)·eps; the algorithms differ in rounding, not in maths."""
    return 1e-12 + 1e-16 * np.linalg.cond(H)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("with_fext", [False, True])
def test_aba_is_H_inverse_times_tau_minus_C(name, with_fext):
    model = model_named(name)
    q, qd, tau = state(model, 4)
    fe = random_fext(model, np.random.default_rng(5)) if with_fext else None
    H, C = mb.hand_c(model, q, qd, fe)
    ref = np.linalg.solve(H, tau - C)
    tol = _fd_tol(H)
    assert rel(mb.aba(model, q, qd, tau, fe), ref) < tol
    assert rel(mb.fd_crb(model, q, qd, tau, fe), ref) < tol
    assert rel(fd_sparse(model, q, qd, tau, fe), ref) < tol
    # and back through inverse dynamics
    assert rel(mb.rnea(model, q, qd, mb.aba(model, q, qd, tau, fe), fe), tau) < 1e-9


@pytest.mark.parametrize("name", ["tree8", "tree9", "mixed_floating", "vee", "floatbase_tree"])
def test_fd_crb_and_fd_sparse_equal_aba_on_a_batch(name):
    model = model_named(name)
    q, qd, tau = state(model, 6, n=40)
    fe = random_fext(model, np.random.default_rng(7), n=40)
    ref = mb.aba(model, q, qd, tau, fe)
    H = mb.crba(model, q)
    tol = max(_fd_tol(h) for h in H)
    assert rel(mb.fd_crb(model, q, qd, tau, fe), ref) < tol
    assert rel(fd_sparse(model, q, qd, tau, fe), ref) < tol


@pytest.mark.parametrize("name", ALL)
def test_hybrid_dynamics_agrees_with_rnea_and_aba(name):
    model = model_named(name)
    rng = np.random.default_rng(8)
    q, qd, qdd_true = state(model, 9)
    fe = random_fext(model, rng)
    tau_true = mb.rnea(model, q, qd, qdd_true, fe)
    masks = [np.ones(model.nb, bool), np.zeros(model.nb, bool)] + [rng.random(model.nb) < 0.5 for _ in range(4)]
    dof_body = model.dof_body
    for fd in masks:
        fd_dof = fd[dof_body]
        # inputs are garbage where they are outputs: HD must not read them
        qdd_in = np.where(fd_dof, 1e3 * rng.normal(size=model.nv), qdd_true)
        tau_in = np.where(fd_dof, tau_true, 1e3 * rng.normal(size=model.nv))
        qdd_out, tau_out = mb.hybrid_dynamics(model, fd, q, qd, qdd_in, tau_in, fe)
        H = mb.crba(model, q)
        assert rel(qdd_out, qdd_true) < 1e-9 * max(1.0, 1e-6 * np.linalg.cond(H)), fd
        assert rel(tau_out, tau_true) < 1e-9, fd
        assert np.array_equal(qdd_out[~fd_dof], qdd_true[~fd_dof])  # copied through
        assert np.array_equal(tau_out[fd_dof], tau_true[fd_dof])
    # all-FD is ABA, all-ID is RNEA
    qdd_out, _ = mb.hybrid_dynamics(model, np.ones(model.nb, bool), q, qd, qdd_true, tau_true, fe)
    assert rel(qdd_out, mb.aba(model, q, qd, tau_true, fe)) < 1e-13
    _, tau_out = mb.hybrid_dynamics(model, np.zeros(model.nb, bool), q, qd, qdd_true, tau_true, fe)
    assert rel(tau_out, tau_true) < 1e-13


# --------------------------------------------------------------------------- energy and momentum
def _curve_derivative(model, q, qd, qdd, fn, h=1e-3):
    """d/dt fn(q(t), q̇(t)) at t = 0 along any curve with q'(0) = q̇, q̇'(0) = q̈.

    The curve is t ↦ (q ⊕ q̇ t, q̇ + q̈ t); a 5-point central stencil is exact to O(h⁴)."""
    ts = np.array([-2, -1, 1, 2]) * h
    Q = mb.integrate(model, np.broadcast_to(q, (4, model.nq)), np.outer(ts, np.ones(model.nv)) * qd)
    QD = qd + ts[:, None] * qdd
    F = fn(Q, QD)
    return (F[0] - 8 * F[1] + 8 * F[2] - F[3]) / (12 * h)


@pytest.mark.parametrize("name", ALL)
def test_energy_rate_equals_power_of_joint_and_external_forces(name):
    """dE/dt = q̇ᵀτ + Σ (spatial velocity of body i)·f_ext,i for E = KE + PE (gravity conservative)."""
    model = model_named(name)
    rng = np.random.default_rng(10)
    q, qd, tau = state(model, 11)
    qd = qd / max(1.0, np.abs(qd).max())
    fe = random_fext(model, rng)
    for f, ext_power in ((None, 0.0), (fe, None)):
        if ext_power is None:  # power of base-coordinate wrenches: velocity of each body at the base origin
            s = mb.body_states(model, q, qd)
            w = np.einsum("bij,bj->bi", s.R, s.v[:, :3])
            v0 = np.einsum("bij,bj->bi", s.R, s.v[:, 3:]) + np.cross(s.p, w)
            ext_power = float(np.sum(w * f[:, :3]) + np.sum(v0 * f[:, 3:]))
        qdd = mb.aba(model, q, qd, tau, f)
        dE = _curve_derivative(model, q, qd, qdd, lambda Q, QD: mb.energy(model, Q, QD).total)
        power = qd @ tau + ext_power
        e = mb.energy(model, q, qd)
        scale = max(1.0, abs(power), abs(e.KE), abs(e.PE))
        assert abs(dE - power) < 1e-8 * scale, (dE, power)
    # conservative: no torque, no external force → dE/dt = 0 (and it is not trivially so: KE changes)
    qdd = mb.aba(model, q, qd, np.zeros(model.nv))
    dE = _curve_derivative(model, q, qd, qdd, lambda Q, QD: mb.energy(model, Q, QD).total)
    dKE = _curve_derivative(model, q, qd, qdd, lambda Q, QD: mb.energy(model, Q, QD).KE)
    assert abs(dE) < 1e-8 * max(1.0, abs(dKE))


@pytest.mark.parametrize("name", ALL)
def test_kinetic_energy_is_half_qd_H_qd_and_energy_fields(name):
    model = model_named(name)
    q, qd, _ = state(model, 12)
    e = mb.energy(model, q, qd)
    H = mb.crba(model, q)
    assert rel(e.KE, 0.5 * qd @ H @ qd) < 1e-12
    assert rel(e.mass, model.mass.sum()) < 1e-14
    assert rel(e.cm, mb.center_of_mass(model, q)) < 1e-12
    assert rel(e.vcm, mb.com_velocity(model, q, qd)) < 1e-12
    assert rel(e.PE, -model.mass.sum() * e.cm @ model.gravity) < 1e-12
    # htot = linear momentum M·vcm in its lower half; Itot's mass block is M·1
    assert rel(e.htot[3:], model.mass.sum() * e.vcm) < 1e-12
    assert rel(e.Itot[3:, 3:], model.mass.sum() * np.eye(3)) < 1e-12


@pytest.mark.parametrize("name", FLOATING_ZERO_G)
def test_momentum_is_conserved_without_gravity_and_external_force(name):
    """Internal joint torques cannot change the total momentum; a wrench on the free root does."""
    model = model_named(name)
    assert not np.any(model.gravity)
    rng = np.random.default_rng(13)
    q, qd, tau = state(model, 14)
    root = model.jtype[0]
    assert root == JointType.FREE
    tau[:6] = 0.0  # free joint unactuated
    h = lambda Q, QD: mb.energy(model, Q, QD).htot  # noqa: E731
    qdd = mb.aba(model, q, qd, tau)
    dh = _curve_derivative(model, q, qd, qdd, h)
    scale = max(1.0, np.abs(mb.energy(model, q, qd).htot).max(), np.abs(tau).max())
    assert np.abs(dh).max() < 1e-8 * scale
    # a wrench w = [n; f] on the root (body coordinates, the free joint's τ) changes htot by X*_{0,root} w
    w = rng.normal(size=6)
    tau2 = tau.copy()
    tau2[:6] = w
    dh2 = _curve_derivative(model, q, qd, mb.aba(model, q, qd, tau2), h)
    R, p = mb.forward_kinematics(model, q)
    f0 = R[0] @ w[3:]
    expected = np.concatenate([R[0] @ w[:3] + np.cross(p[0], f0), f0])
    assert rel(dh2, expected) < 1e-8 * scale


def test_momentum_rate_under_gravity_is_the_weight_wrench():
    """d htot/dt = [c × M g; M g] for a free-floating system with only internal torques."""
    model = model_named("mixed_floating")
    q, qd, tau = state(model, 15)
    tau[:6] = 0.0
    qdd = mb.aba(model, q, qd, tau)
    dh = _curve_derivative(model, q, qd, qdd, lambda Q, QD: mb.energy(model, Q, QD).htot)
    M, c, g = model.mass.sum(), mb.center_of_mass(model, q), model.gravity
    assert rel(dh, np.concatenate([np.cross(c, M * g), M * g])) < 1e-8


def _rk4(model, q, qd, dt, steps):
    """Classical RK4 on (q, q̇) with the configuration update q ⊕ k·dt (each stage from q)."""
    for _ in range(steps):
        k1v, k1a = qd, mb.aba(model, q, qd, np.zeros(model.nv))
        q2 = mb.integrate(model, q, k1v, dt / 2)
        k2v = qd + dt / 2 * k1a
        k2a = mb.aba(model, q2, k2v, np.zeros(model.nv))
        q3 = mb.integrate(model, q, k2v, dt / 2)
        k3v = qd + dt / 2 * k2a
        k3a = mb.aba(model, q3, k3v, np.zeros(model.nv))
        q4 = mb.integrate(model, q, k3v, dt)
        k4v = qd + dt * k3a
        k4a = mb.aba(model, q4, k4v, np.zeros(model.nv))
        q = mb.integrate(model, q, (k1v + 2 * k2v + 2 * k3v + k4v) / 6, dt)
        qd = qd + dt / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
    return q, qd


@pytest.mark.parametrize("name", ["vee", "scissor"])
def test_momentum_and_energy_along_an_integrated_free_floating_trajectory(name):
    """Free-floating, zero gravity: htot and KE stay put along 0.3 s of motion while the body turns."""
    model = model_named(name)
    q0, qd0, _ = state(model, 16)
    e0 = mb.energy(model, q0, qd0)
    q1, qd1 = _rk4(model, q0, qd0, 1e-3, 300)
    e1 = mb.energy(model, q1, qd1)
    assert np.abs(q1 - q0).max() > 0.1  # it did move
    assert rel(e1.htot, e0.htot) < 1e-7
    assert abs(e1.KE - e0.KE) < 1e-7 * e0.KE


# --------------------------------------------------------------------------- planar
def planar_id(n, q, qd, qdd):
    """spatial_v2 ID on planar(n) written with 3×3 planar arithmetic (plnr, crm, crf, mcI)."""
    I = mcI(1.0, np.array([0.5, 0.0]), 1.0 / 12)
    a_grav = np.array([0.0, 0.0, -9.81])
    S = np.array([1.0, 0.0, 0.0])
    Xup, v, a, f = [], [], [], []
    for i in range(n):
        XJ = plnr(q[i], np.zeros(2))
        Xtree = plnr(0.0, np.array([1.0 if i else 0.0, 0.0]))
        X = XJ @ Xtree
        vJ = S * qd[i]
        if i == 0:
            vi, ai = vJ, X @ -a_grav + S * qdd[i]
        else:
            vi = X @ v[i - 1] + vJ
            ai = X @ a[i - 1] + S * qdd[i] + crm(vi) @ vJ
        Xup.append(X)
        v.append(vi)
        a.append(ai)
        f.append(I @ ai + crf(vi) @ I @ vi)
    tau = np.zeros(n)
    for i in range(n - 1, -1, -1):
        tau[i] = S @ f[i]
        if i:
            f[i - 1] = f[i - 1] + Xup[i].T @ f[i]
    return tau


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_planar_model_equals_genuinely_planar_rnea(n):
    model = mb.models.planar(n)
    rng = np.random.default_rng(17 + n)
    for _ in range(3):
        q, qd, qdd = rng.normal(size=(3, n))
        assert rel(mb.rnea(model, q, qd, qdd), planar_id(n, q, qd, qdd)) < 1e-13


@pytest.mark.parametrize("n", [1, 2, 4])
def test_planar_model_equals_its_spatial_twin(n):
    b = mb.ModelBuilder("spatial twin", gravity=(0, -9.81, 0))
    for i in range(n):
        b.add_body(f"b{i}", i - 1 if i else None, "Rz", mass=1.0, com=[0.5, 0, 0],
                   inertia=np.diag([0.2, 0.15, 1 / 12]), joint_translation=[1.0 if i else 0.0, 0, 0])
    twin = b.build()
    model = mb.models.planar(n)
    rng = np.random.default_rng(20)
    q, qd, tau = rng.normal(size=(3, 4, n))
    assert rel(mb.rnea(model, q, qd, tau), mb.rnea(twin, q, qd, tau)) < 1e-12
    assert rel(mb.crba(model, q), mb.crba(twin, q)) < 1e-12
    assert rel(mb.aba(model, q, qd, tau), mb.aba(twin, q, qd, tau)) < 1e-10
    # only the in-plane inertia matters (the twin's x and y moments differ from planar(n)'s);
    # and CRBA agrees with a CRBA written in 3×3 planar arithmetic
    assert rel(mb.crba(model, q), np.stack([_planar_H(n, qq) for qq in q])) < 1e-12


def _planar_H(n, q):
    """H of planar(n) from planar CRBA with 3×3 arithmetic."""
    I = [mcI(1.0, np.array([0.5, 0.0]), 1.0 / 12) for _ in range(n)]
    X = [plnr(q[i], np.zeros(2)) @ plnr(0.0, np.array([1.0 if i else 0.0, 0.0])) for i in range(n)]
    S = np.array([1.0, 0.0, 0.0])
    for i in range(n - 1, 0, -1):
        I[i - 1] = I[i - 1] + X[i].T @ I[i] @ X[i]
    H = np.zeros((n, n))
    for i in range(n):
        F = I[i] @ S
        H[i, i] = S @ F
        j = i
        while j > 0:
            F = X[j].T @ F
            j -= 1
            H[i, j] = H[j, i] = S @ F
    return H


# --------------------------------------------------------------------------- sparse factorisations
@pytest.mark.parametrize("name", ALL)
def test_sparse_factorisations_reproduce_H(name):
    model = model_named(name)
    q, _, _ = state(model, 21, n=3)
    H = mb.crba(model, q)
    lam = model.dof_parent
    mask = ancestor_mask(lam)
    # H itself has branch-induced sparsity for the expanded parent array
    assert np.all(H[:, ~(mask | mask.T)] == 0)
    L, d = ltdl(H, lam)
    assert rel(np.swapaxes(L, -1, -2) @ (d[..., None] * L), H) < 1e-12
    assert np.all(L[:, ~mask] == 0) and np.all(np.diagonal(L, axis1=1, axis2=2) == 1)
    assert np.all(d > 0)
    Lc = ltl(H, lam)
    assert rel(np.swapaxes(Lc, -1, -2) @ Lc, H) < 1e-12
    assert np.all(Lc[:, ~mask] == 0)


def test_expanded_parent_array_of_multi_dof_joints():
    model = model_named("mixed_floating")
    lam = model.dof_parent
    # free root: dofs 0..5 chained; spherical "ball" hangs from dof 5; planar "plate" too
    assert lam[:6].tolist() == [-1, 0, 1, 2, 3, 4]
    ball = model.v_start[model.body_index("ball")]
    plate = model.v_start[model.body_index("plate")]
    assert lam[ball] == 5 and lam[plate] == 5
    tip = model.v_start[model.body_index("tip")]  # child of the fixed bracket: hangs from ball's last dof
    assert lam[tip] == ball + 2


# --------------------------------------------------------------------------- batches
@pytest.mark.parametrize("name", ["tree5", "mixed_floating", "vee", "planar4"])
def test_batch_results_equal_per_state_results(name):
    model = model_named(name)
    Q, QD, QDD = state(model, 22, n=6)
    fe = random_fext(model, np.random.default_rng(23), n=6)
    shape = (2, 3)
    Qb, QDb, QDDb, FEb = (x.reshape(shape + x.shape[1:]) for x in (Q, QD, QDD, fe))
    fd = np.arange(model.nb) % 2 == 0
    batched = {
        "rnea": mb.rnea(model, Qb, QDb, QDDb, FEb),
        "crba": mb.crba(model, Qb),
        "aba": mb.aba(model, Qb, QDb, QDDb, FEb),
        "fd_crb": mb.fd_crb(model, Qb, QDb, QDDb, FEb),
        "fd_sparse": fd_sparse(model, Qb, QDb, QDDb, FEb),
        "hd": np.concatenate(mb.hybrid_dynamics(model, fd, Qb, QDb, QDDb, QDDb, FEb), axis=-1),
        "KE": mb.energy(model, Qb, QDb).KE,
        "J": mb.body_jacobian(model, Qb, model.nb - 1, point=[0.1, 0.2, 0.3]),
    }
    for k in range(6):
        i, j = divmod(k, 3)
        single = {
            "rnea": mb.rnea(model, Q[k], QD[k], QDD[k], fe[k]),
            "crba": mb.crba(model, Q[k]),
            "aba": mb.aba(model, Q[k], QD[k], QDD[k], fe[k]),
            "fd_crb": mb.fd_crb(model, Q[k], QD[k], QDD[k], fe[k]),
            "fd_sparse": fd_sparse(model, Q[k], QD[k], QDD[k], fe[k]),
            "hd": np.concatenate(mb.hybrid_dynamics(model, fd, Q[k], QD[k], QDD[k], QDD[k], fe[k])),
            "KE": mb.energy(model, Q[k], QD[k]).KE,
            "J": mb.body_jacobian(model, Q[k], model.nb - 1, point=[0.1, 0.2, 0.3]),
        }
        for key, val in single.items():
            assert batched[key][i, j].shape == np.shape(val), key
            assert rel(batched[key][i, j], val) < 1e-14, key


def test_batch_broadcasts_a_shared_argument_and_large_batches_match():
    """One q with many q̇ (broadcast in the kernel), and a batch big enough for the parallel path."""
    model = model_named("tree8")
    q, _, _ = state(model, 24)
    rng = np.random.default_rng(25)
    QD = rng.normal(size=(300, model.nv))
    tau = rng.normal(size=model.nv)
    out = mb.aba(model, q, QD, tau)
    assert out.shape == (300, model.nv)
    for k in (0, 137, 299):
        assert rel(out[k], mb.aba(model, q, QD[k], tau)) < 1e-14
    out = fd_sparse(model, q, QD, tau)
    for k in (0, 255, 299):
        assert rel(out[k], fd_sparse(model, q, QD[k], tau)) < 1e-14
    R = mb.rnea(model, np.broadcast_to(q, (300, model.nq)), QD, np.zeros((1, model.nv)))
    assert rel(R[42], mb.rnea(model, q, QD[42], np.zeros(model.nv))) < 1e-14
