"""Frames by name (issue 33, item 3) against Pinocchio and MuJoCo on real robots.

``mb.frame_placement / frame_velocity / frame_acceleration / frame_jacobian`` of every frame that
Pinocchio also has (URDF links, fixed-joint links merged into their parents such as the Panda's
``panda_hand``, joints), in Pinocchio's three references, compared with ``pin.updateFramePlacements``
(``oMf``), ``getFrameVelocity``, ``getFrameAcceleration`` (spatial), ``getFrameClassicalAcceleration``
and ``getFrameJacobian``; states converted by ``mb.pinocchio``.  MJCF sites against MuJoCo's
``site_xpos``/``site_xmat``, ``mj_jacSite`` and ``mj_objectVelocity`` (dm_control's suite files).

Error measure: max |ours − theirs| / max(1, max |theirs|) over all frames and states.
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from pinocchio_twins import twin

TOL = 1e-12
ROBOTS = {"Panda": ("panda_description/urdf/panda.urdf", False),
          "ANYmal": ("anymal_b_simple_description/robots/anymal.urdf", True),
          "Talos": ("talos_data/robots/talos_reduced.urdf", True)}
REFS = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
SWAP = [3, 4, 5, 0, 1, 2]   # Pinocchio's [linear; angular] ↔ our [angular; linear]
def robot(label):
    return twin(*ROBOTS[label])


def err(ours, theirs):
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    return float(np.max(np.abs(ours - theirs), initial=0.0) / max(1.0, np.max(np.abs(theirs), initial=0.0)))


@pytest.mark.parametrize("label", list(ROBOTS))
def test_frames_agree_with_pinocchio(label):
    model, pm = robot(label)
    data = pm.createData()
    rng = np.random.default_rng(3)
    P = mb.pinocchio.to_pinocchio_v(model, pm, np.eye(model.nv)).T     # v_pin = P q̇
    names = [f.name for f in pm.frames if f.name != "universe"]
    assert "panda_hand" in names or label != "Panda"
    worst = {}
    for _ in range(3):
        q = mb.random_configuration(model, rng)
        qd, qdd = rng.normal(size=model.nv), rng.normal(size=model.nv)
        qp, vp, ap = mb.pinocchio.to_pinocchio_state(model, pm, q, qd, qdd)
        pin.forwardKinematics(pm, data, qp, vp, ap)
        pin.updateFramePlacements(pm, data)
        pin.computeJointJacobians(pm, data, qp)
        for name in names:
            fid = pm.getFrameId(name)
            R, p = mb.frame_placement(model, q, name)
            worst["placement"] = max(worst.get("placement", 0), err(R, data.oMf[fid].rotation),
                                     err(p, data.oMf[fid].translation))
            for ref, pref in REFS.items():
                v = mb.frame_velocity(model, q, qd, name, reference=ref)
                a_s = mb.frame_acceleration(model, q, qd, qdd, name, reference=ref, kind="spatial")
                a_c = mb.frame_acceleration(model, q, qd, qdd, name, reference=ref, kind="classical")
                J = mb.frame_jacobian(model, q, name, reference=ref)
                Jp = pin.getFrameJacobian(pm, data, fid, pref)[SWAP] @ P
                for what, ours, theirs in (
                        ("velocity", v, pin.getFrameVelocity(pm, data, fid, pref).vector[SWAP]),
                        ("spatial acceleration", a_s, pin.getFrameAcceleration(pm, data, fid, pref).vector[SWAP]),
                        ("classical acceleration", a_c,
                         pin.getFrameClassicalAcceleration(pm, data, fid, pref).vector[SWAP]),
                        ("jacobian", J, Jp), ("J q̇ = velocity", J @ qd, v)):
                    key = f"{what} {ref}"
                    worst[key] = max(worst.get(key, 0.0), err(ours, theirs))
    print(label, {k: f"{e:.1e}" for k, e in worst.items()})
    bad = {k: e for k, e in worst.items() if not e <= TOL}
    assert not bad, bad


def test_frames_take_a_batch_and_merged_links():
    model, pm = robot("Panda")
    f = model.frame("panda_hand")          # a link welded to panda_link8 by a fixed joint, itself welded to link7
    assert model.body_names[f.body] == "panda_link7" and np.linalg.norm(f.translation) > 0.1
    Q = mb.random_configuration(model, 0, size=(4, 2))
    QD = np.random.default_rng(1).normal(size=(4, 2, model.nv))
    J = mb.frame_jacobian(model, Q, "panda_hand", "local")
    V = mb.frame_velocity(model, Q, QD, "panda_hand", "local")
    assert J.shape == (4, 2, 6, model.nv) and V.shape == (4, 2, 6)
    np.testing.assert_allclose(np.einsum("...ij,...j->...i", J, QD), V, atol=1e-12)
    R, p = mb.frame_placement(model, Q, "panda_hand")
    assert R.shape == (4, 2, 3, 3) and p.shape == (4, 2, 3)
    np.testing.assert_allclose(p[2, 1], mb.frame_placement(model, Q[2, 1], "panda_hand")[1], atol=0)
    # a frame welded to the fixed base: at rest, with q's batch
    assert model.frame("panda_link0").body == -1
    np.testing.assert_array_equal(mb.frame_jacobian(model, Q, "panda_link0"), np.zeros((4, 2, 6, model.nv)))
    np.testing.assert_array_equal(mb.frame_velocity(model, Q, QD, "panda_link0", "world"), np.zeros((4, 2, 6)))


def test_unknown_frame_lists_close_matches():
    model, _ = robot("Panda")
    with pytest.raises(ValueError, match=r"no frame or body named 'panda_hnd'; close matches \['panda_hand'"):
        mb.frame_jacobian(model, model.neutral(), "panda_hnd")
    with pytest.raises(ValueError, match="reference"):
        mb.frame_jacobian(model, model.neutral(), "panda_hand", reference="LOCAL")
    with pytest.raises(ValueError, match="kind"):
        mb.frame_acceleration(model, model.neutral(), np.zeros(9), np.zeros(9), "panda_hand", kind="proper")
    with pytest.raises(TypeError, match="qd"):
        mb.frame_velocity(model, model.neutral(), None, "panda_hand")
    with pytest.raises(TypeError, match="frame"):
        mb.frame_placement(model, model.neutral(), 3)


def _suite(name):
    import dm_control
    return os.path.join(os.path.dirname(dm_control.__file__), "suite", name)


@pytest.mark.parametrize("xml", ["humanoid.xml", "quadruped.xml"])
def test_sites_agree_with_mujoco(xml):
    """Sites by name against MuJoCo: placement (site_xpos, site_xmat), world-aligned Jacobian
    (mj_jacSite, columns through the free joint's velocity map) and velocity (mj_objectVelocity)."""
    import mujoco
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.MJCFWarning)
        model = mb.load_mjcf(_suite(xml))
    mj = mujoco.MjModel.from_xml_path(_suite(xml))
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(7)
    assert mj.nsite > 3
    worst = 0.0
    for _ in range(3):
        q = mb.random_configuration(model, rng)
        qd = rng.normal(size=model.nv)
        data.qpos[:], data.qvel[:] = mb.mjcf.to_mujoco_state(model, q, qd)
        mujoco.mj_forward(mj, data)
        # MuJoCo's qvel is linear in our q̇: its columns give the map T (qvel = T q̇)
        T = np.stack([mb.mjcf.to_mujoco_state(model, q, e)[1] for e in np.eye(model.nv)], axis=1)
        for s in range(mj.nsite):
            name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_SITE, s)
            fname = name if name not in model.body_names else "site:" + name
            R, p = mb.frame_placement(model, q, fname)
            jacp, jacr = np.zeros((3, mj.nv)), np.zeros((3, mj.nv))
            mujoco.mj_jacSite(mj, data, jacp, jacr, s)
            J = mb.frame_jacobian(model, q, fname, "local_world_aligned")
            vel = np.zeros(6)
            mujoco.mj_objectVelocity(mj, data, mujoco.mjtObj.mjOBJ_SITE, s, vel, 1)   # local: [ω; v]
            v = mb.frame_velocity(model, q, qd, fname, "local")
            worst = max(worst, err(p, data.site_xpos[s]), err(R, data.site_xmat[s].reshape(3, 3)),
                        err(J, np.vstack([jacr, jacp]) @ T), err(v, vel))
    print(xml, f"{worst:.1e}")
    assert worst <= TOL


def test_a_body_function_given_a_frame_name_points_to_the_frame_functions():
    model, _ = robot("Panda")
    with pytest.raises(ValueError, match=r"'panda_hand' is a frame fixed on body 'panda_link7': use mb.frame_"):
        mb.body_jacobian(model, model.neutral(), "panda_hand")
