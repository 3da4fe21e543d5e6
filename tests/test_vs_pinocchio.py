"""multibody against Pinocchio on the same models, built with Pinocchio's own API
(``mb.pinocchio.to_pinocchio_model``; helpers in tests/pin_states.py).

Pinocchio orders joints depth-first and writes free-flyer velocities [v; ω], spherical quaternions
[x y z w], planar configurations [x y cosθ sinθ] and spatial vectors [linear; angular]; the twin
converts, the core never does.  Every quantity agrees to ≤ 1e-10 relative.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from pin_states import dfs_order, q_to_pin, random_state, to_pinocchio, v_perm
from test_dynamics_consistency import TREE_SHAPES, mixed

TOL = 1e-10

MODELS = {f"tree{k}": (lambda k=k: mb.models.auto_tree(TREE_SHAPES[k][0], bf=TREE_SHAPES[k][1],
                                                         skew=TREE_SHAPES[k][2], taper=TREE_SHAPES[k][3]))
          for k in range(len(TREE_SHAPES))}
MODELS.update({
    "mixed_floating": lambda: mixed(True, False),          # free, spherical, helical, prismatic,
    "mixed_fixed_base": lambda: mixed(False, False, seed=5),  # revolute (any axis), planar, Rx
    "planar4": lambda: mb.models.planar(4),
    "vee": lambda: mb.models.vee(1.3),
    "scissor": mb.models.scissor,
    "singlebody": mb.models.singlebody,
    "floatbase_tree": lambda: mb.models.floatbase(mb.models.auto_tree(4, bf=2, skew=0.5)),
})
NAMES = list(MODELS)
_cache = {}


def twin(name):
    """(model, pin model, pin data, permutation of velocity variables, joint id of each body)."""
    if name not in _cache:
        model = MODELS[name]()
        pm = to_pinocchio(model)
        order = dfs_order(model)
        jid = [0] * model.nb
        for k, i in enumerate(order):
            jid[i] = k + 1
        _cache[name] = (model, pm, v_perm(model), jid)
    model, pm, P, jid = _cache[name]
    return model, pm, pm.createData(), P, jid


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b), initial=0.0) / max(1.0, float(np.max(np.abs(b), initial=0.0))))


def sym(M):
    """Pinocchio's CRBA fills the upper triangle."""
    return np.triu(M) + np.triu(M, 1).T


def fext_local(model, q, f_base):
    """Our base-coordinate body wrenches [n; f] as Pinocchio's per-joint LOCAL forces."""
    R, p = mb.forward_kinematics(model, q)
    out = pin.StdVec_Force()
    out.append(pin.Force.Zero())
    for i in dfs_order(model):
        n, f = f_base[i, :3], f_base[i, 3:]
        out.append(pin.Force(R[i].T @ f, R[i].T @ (n - np.cross(p[i], f))))
    return out


def states(model, seed):
    rng = np.random.default_rng(seed)
    q, qd, qdd = random_state(model, rng)
    return q, qd, qdd, rng.normal(size=(model.nb, 6)), rng


# --------------------------------------------------------------------------- dynamics
@pytest.mark.parametrize("name", NAMES)
def test_rnea_crba_aba(name):
    model, pm, data, P, _ = twin(name)
    for seed in (0, 1):
        q, qd, qdd, _, _ = states(model, seed)
        qp = q_to_pin(model, q)
        assert rel(mb.rnea(model, q, qd, qdd)[P], pin.rnea(pm, data, qp, qd[P], qdd[P])) < TOL
        Hp = sym(np.reshape(pin.crba(pm, data, qp), (model.nv, model.nv)))
        assert rel(mb.crba(model, q)[np.ix_(P, P)], Hp) < TOL
        tau = qdd  # any torque
        assert rel(mb.aba(model, q, qd, tau)[P], pin.aba(pm, data, qp, qd[P], tau[P])) < TOL
        H, C = mb.hand_c(model, q, qd)
        assert rel(C[P], pin.nonLinearEffects(pm, data, qp, qd[P])) < TOL
        assert rel(mb.rnea(model, q, 0 * qd, 0 * qdd)[P], pin.computeGeneralizedGravity(pm, data, qp)) < TOL


@pytest.mark.parametrize("name", NAMES)
def test_rnea_and_aba_with_external_forces(name):
    model, pm, data, P, _ = twin(name)
    q, qd, qdd, fe, _ = states(model, 2)
    qp = q_to_pin(model, q)
    fl = fext_local(model, q, fe)
    assert rel(mb.rnea(model, q, qd, qdd, fe)[P], pin.rnea(pm, data, qp, qd[P], qdd[P], fl)) < TOL
    assert rel(mb.aba(model, q, qd, qdd, fe)[P], pin.aba(pm, data, qp, qd[P], qdd[P], fl)) < TOL
    # the forces matter (the comparison would catch a dropped f_ext)
    assert np.abs(mb.rnea(model, q, qd, qdd, fe) - mb.rnea(model, q, qd, qdd)).max() > 1e-2


# --------------------------------------------------------------------------- kinematics
@pytest.mark.parametrize("name", NAMES)
def test_forward_kinematics_and_body_velocities(name):
    model, pm, data, P, jid = twin(name)
    q, qd, qdd, _, _ = states(model, 3)
    qp = q_to_pin(model, q)
    pin.forwardKinematics(pm, data, qp, qd[P], qdd[P])
    s = mb.body_states(model, q, qd, qdd)
    for i in range(model.nb):
        M = data.oMi[jid[i]]
        assert rel(s.R[i], M.rotation) < TOL and rel(s.p[i], M.translation) < TOL
        v = pin.getVelocity(pm, data, jid[i], pin.LOCAL)
        a = pin.getAcceleration(pm, data, jid[i], pin.LOCAL)  # spatial acceleration, no gravity
        assert rel(s.v[i], np.concatenate([v.angular, v.linear])) < TOL
        assert rel(s.a[i], np.concatenate([a.angular, a.linear])) < TOL


def _add_point_frames(model, pm, jid, rng):
    """An OP frame at a random point of every body; returns (frame ids, points)."""
    fids, pts = [], []
    for i in range(model.nb):
        r = rng.normal(scale=0.3, size=3)
        fids.append(pm.addFrame(pin.Frame(f"pt{i}", jid[i], pin.SE3(np.eye(3), r), pin.FrameType.OP_FRAME)))
        pts.append(r)
    return fids, pts


FRAMES = {"local": pin.LOCAL, "world_aligned": pin.LOCAL_WORLD_ALIGNED, "world": pin.WORLD}


@pytest.mark.parametrize("name", NAMES)
def test_body_and_point_jacobians_in_three_frames(name):
    model, pm, _, P, jid = twin(name)
    pm = pin.Model(pm)  # a copy we may add frames to
    fids, pts = _add_point_frames(model, pm, jid, np.random.default_rng(4))
    data = pm.createData()
    q, _, _, _, _ = states(model, 5)
    qp = q_to_pin(model, q)
    pin.computeJointJacobians(pm, data, qp)
    pin.updateFramePlacements(pm, data)
    for i in range(model.nb):
        for ours, ref in FRAMES.items():
            J = mb.body_jacobian(model, q, i, point=pts[i], frame=ours)[:, P]
            Jp = np.reshape(pin.getFrameJacobian(pm, data, fids[i], ref), (6, model.nv))
            assert rel(J, np.vstack([Jp[3:], Jp[:3]])) < TOL, (i, ours)
        Jl = np.reshape(pin.getFrameJacobian(pm, data, fids[i], pin.LOCAL_WORLD_ALIGNED), (6, model.nv))
        assert rel(mb.point_jacobian(model, q, i, pts[i])[:, P], Jl[:3]) < TOL
        assert rel(mb.rotation_jacobian(model, q, i)[:, P], Jl[3:]) < TOL


@pytest.mark.parametrize("name", NAMES)
def test_jdot_qd_point_velocity_and_acceleration(name):
    model, pm, _, P, jid = twin(name)
    pm = pin.Model(pm)
    fids, pts = _add_point_frames(model, pm, jid, np.random.default_rng(6))
    data = pm.createData()
    q, qd, qdd, _, _ = states(model, 7)
    qp = q_to_pin(model, q)
    pin.forwardKinematics(pm, data, qp, qd[P], np.zeros(model.nv))  # q̈ = 0: the bias J̇·q̇
    pin.updateFramePlacements(pm, data)
    for i in range(model.nb):
        for ours, ref in (("local", pin.LOCAL), ("world_aligned", pin.LOCAL_WORLD_ALIGNED)):
            acc = pin.getFrameClassicalAcceleration(pm, data, fids[i], ref)
            got = mb.jdot_qd(model, q, qd, i, pts[i], frame=ours)
            assert rel(got, np.concatenate([acc.angular, acc.linear])) < TOL, (i, ours)
        v = pin.getFrameVelocity(pm, data, fids[i], pin.LOCAL_WORLD_ALIGNED)
        assert rel(mb.point_velocity(model, q, qd, i, pts[i]), v.linear) < TOL
    pin.forwardKinematics(pm, data, qp, qd[P], qdd[P])
    pin.updateFramePlacements(pm, data)
    for i in range(model.nb):
        acc = pin.getFrameClassicalAcceleration(pm, data, fids[i], pin.LOCAL_WORLD_ALIGNED)
        assert rel(mb.point_acceleration(model, q, qd, qdd, i, pts[i]), acc.linear) < TOL


@pytest.mark.parametrize("name", NAMES)
def test_center_of_mass_its_jacobian_and_energies(name):
    model, pm, data, P, _ = twin(name)
    q, qd, _, _, _ = states(model, 8)
    qp = q_to_pin(model, q)
    assert rel(mb.center_of_mass(model, q), pin.centerOfMass(pm, data, qp)) < TOL
    Jc = np.reshape(pin.jacobianCenterOfMass(pm, data, qp), (3, model.nv))  # 1 dof: Pinocchio gives (3,)
    assert rel(mb.com_jacobian(model, q)[:, P], Jc) < TOL
    pin.centerOfMass(pm, data, qp, qd[P])
    assert rel(mb.com_velocity(model, q, qd), data.vcom[0]) < TOL
    e = mb.energy(model, q, qd)
    assert rel(e.KE, pin.computeKineticEnergy(pm, data, qp, qd[P])) < TOL
    assert rel(e.PE, pin.computePotentialEnergy(pm, data, qp)) < TOL
    # total momentum about the base origin, base coordinates: Pinocchio's centroidal momentum
    # is about the CoM, so shift it: n_O = n_G + c × p
    pin.computeCentroidalMomentum(pm, data, qp, qd[P])
    hg = data.hg
    c = data.com[0]
    assert rel(e.htot, np.concatenate([hg.angular + np.cross(c, hg.linear), hg.linear])) < TOL


def test_batch_against_pinocchio_loop():
    """A batch call equals Pinocchio evaluated state by state."""
    model, pm, data, P, _ = twin("mixed_floating")
    rng = np.random.default_rng(9)
    Q, QD, QDD = (np.array(x) for x in zip(*(random_state(model, rng) for _ in range(20))))
    tau = mb.rnea(model, Q, QD, QDD)
    qdd = mb.aba(model, Q, QD, QDD)
    for k in range(20):
        qp = q_to_pin(model, Q[k])
        assert rel(tau[k][P], pin.rnea(pm, data, qp, QD[k][P], QDD[k][P])) < TOL
        assert rel(qdd[k][P], pin.aba(pm, data, qp, QD[k][P], QDD[k][P])) < TOL
