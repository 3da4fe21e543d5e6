"""mb.pinocchio: our states ↔ Pinocchio's conventions and joint order (issue 33, item 4).

Round trips on example-robot-data's robots (a pin.Model from the same URDF, Pinocchio's own joint
order), then the dynamics: RNEA, ABA and CRBA of ours equal Pinocchio's after conversion (ANYmal,
Talos, solo12: floating; Panda, UR5: fixed).  A hand-built twin covers the joints URDF has not
(spherical, planar, helical) and a continuous joint ([cos θ, sin θ] in Pinocchio).
"""
from __future__ import annotations

import os

import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from pinocchio_twins import twin
from test_urdf_robots import robots_dir

TOL = 1e-12
ROBOTS = {"ANYmal": ("anymal_b_simple_description/robots/anymal.urdf", True),
          "Talos": ("talos_data/robots/talos_reduced.urdf", True),
          "solo12": ("solo_description/robots/solo12.urdf", True),
          "Panda": ("panda_description/urdf/panda.urdf", False),
          "UR5": ("ur_description/urdf/ur5_robot.urdf", False)}
def robot(label):
    return twin(*ROBOTS[label])


def rel(ours, theirs):
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    assert ours.shape == theirs.shape
    return float(np.max(np.abs(ours - theirs)) / max(1.0, np.max(np.abs(theirs))))


@pytest.mark.parametrize("label", list(ROBOTS))
def test_round_trips_and_joint_order(label):
    model, pm = robot(label)
    rng = np.random.default_rng(1)
    Q = mb.random_configuration(model, rng, size=20)
    V = rng.normal(size=(20, model.nv))
    Qp, Vp = mb.pinocchio.to_pinocchio_state(model, pm, Q, V)
    assert Qp.shape == (20, pm.nq) and Vp.shape == (20, pm.nv)
    q2, v2 = mb.pinocchio.from_pinocchio_state(model, pm, Qp, Vp)
    np.testing.assert_allclose(q2, Q, atol=1e-15, rtol=0)
    np.testing.assert_array_equal(v2, V)
    # Pinocchio's own configurations come back to Pinocchio unchanged
    qp = pin.integrate(pm, pin.neutral(pm), rng.normal(size=pm.nv))
    np.testing.assert_allclose(mb.pinocchio.to_pinocchio_q(model, pm, mb.pinocchio.from_pinocchio_q(model, pm, qp)),
                               qp, atol=1e-15, rtol=0)
    order = mb.pinocchio.joint_order(model, pm)
    assert [model.joint_names[i] for i in order] == list(pm.names)[1:]
    if label in ("ANYmal", "Talos"):
        assert order != sorted(order)        # the two orders differ: the map is doing work


@pytest.mark.parametrize("label", list(ROBOTS))
def test_dynamics_agree_after_conversion(label):
    model, pm = robot(label)
    data = pm.createData()
    rng = np.random.default_rng(2)
    P = mb.pinocchio.to_pinocchio_v(model, pm, np.eye(model.nv)).T
    worst = {"rnea": 0.0, "aba": 0.0, "crba": 0.0}
    for _ in range(5):
        q = mb.random_configuration(model, rng)
        qd, qdd = rng.normal(size=model.nv), rng.normal(size=model.nv)
        qp, vp, ap = mb.pinocchio.to_pinocchio_state(model, pm, q, qd, qdd)
        tau = mb.rnea(model, q, qd, qdd)
        tau_pin = pin.rnea(pm, data, qp, vp, ap)
        worst["rnea"] = max(worst["rnea"], rel(mb.pinocchio.to_pinocchio_v(model, pm, tau), tau_pin))
        a_pin = pin.aba(pm, data, qp, vp, mb.pinocchio.to_pinocchio_v(model, pm, tau))
        qdd_pin = mb.pinocchio.from_pinocchio_v(model, pm, a_pin)
        worst["aba"] = max(worst["aba"], rel(mb.aba(model, q, qd, tau), qdd_pin))
        M = pin.crba(pm, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        worst["crba"] = max(worst["crba"], rel(mb.crba(model, q), P.T @ M @ P))
    print(label, {k: f"{e:.1e}" for k, e in worst.items()})
    assert max(worst.values()) <= TOL, worst


def _twin():
    """Ours and Pinocchio's model of one chain: free → spherical → planar → helical → continuous
    revolute, built joint by joint through each library's API with the same placements and inertias."""
    rng = np.random.default_rng(5)
    b = mb.ModelBuilder("chain")
    pm = pin.Model()
    parent, pid = None, 0
    for k, (jt, pin_joint) in enumerate([("free", pin.JointModelFreeFlyer()), ("spherical", pin.JointModelSpherical()),
                                         ("planar", pin.JointModelPlanar()),
                                         ("helical", pin.JointModelHelicalUnaligned(np.array([0.0, 0.6, 0.8]), 0.1)),
                                         ("revolute", pin.JointModelRUBZ())]):
        t, m, c = rng.normal(size=3) * 0.3, 1.0 + k, rng.normal(size=3) * 0.1
        inertia = np.diag([0.1, 0.2, 0.3]) * (k + 1)
        axis = {"helical": [0.0, 0.6, 0.8], "revolute": [0.0, 0.0, 1.0]}.get(jt)
        b.add_body(f"b{k}", parent=parent, joint=jt, axis=axis, pitch=0.1 if jt == "helical" else 0.0, mass=m,
                   com=c, inertia=inertia, joint_translation=t, joint_name=f"j{k}")
        pid = pm.addJoint(pid, pin_joint, pin.SE3(np.eye(3), t), f"j{k}")
        pm.appendBodyToJoint(pid, pin.Inertia(m, c, inertia), pin.SE3.Identity())
        parent = f"b{k}"
    return b.build(), pm


def test_every_joint_kind_and_the_dynamics_on_a_hand_built_twin():
    model, pm = _twin()
    data = pm.createData()
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = mb.random_configuration(model, rng)
        qd, qdd = rng.normal(size=model.nv), rng.normal(size=model.nv)
        qp, vp, ap = mb.pinocchio.to_pinocchio_state(model, pm, q, qd, qdd)
        assert abs(np.linalg.norm(qp[3:7]) - 1) < 1e-14 and abs(np.hypot(qp[-2], qp[-1]) - 1) < 1e-14
        np.testing.assert_allclose(mb.pinocchio.from_pinocchio_q(model, pm, qp), q, atol=1e-15, rtol=0)
        tau = mb.rnea(model, q, qd, qdd)
        assert rel(mb.pinocchio.to_pinocchio_v(model, pm, tau), pin.rnea(pm, data, qp, vp, ap)) <= TOL
        a_pin = pin.aba(pm, data, qp, vp, mb.pinocchio.to_pinocchio_v(model, pm, tau))
        assert rel(mb.pinocchio.from_pinocchio_v(model, pm, a_pin), qdd) <= 1e-11
    # spherical [w x y z] ↔ [x y z w]; planar θ ↔ [cos θ, sin θ]; continuous θ ↔ [cos θ, sin θ]
    q = model.neutral()
    q[7:11] = [0.5, 0.5, -0.5, 0.5]
    q[13], q[-1] = 0.3, -2.0
    qp = mb.pinocchio.to_pinocchio_q(model, pm, q)
    np.testing.assert_allclose(qp[7:11], [0.5, -0.5, 0.5, 0.5])
    np.testing.assert_allclose(qp[13:15], [np.cos(0.3), np.sin(0.3)])
    np.testing.assert_allclose(qp[-2:], [np.cos(-2.0), np.sin(-2.0)])


def test_a_model_that_does_not_match_is_refused_by_name():
    model, pm = robot("Panda")
    other, _ = robot("UR5")
    with pytest.raises(ValueError, match=r"pin_model: has no joint named 'shoulder_pan_joint'.*its joints are \["):
        mb.pinocchio.to_pinocchio_q(other, pm, other.neutral())
    with pytest.raises(TypeError, match="pin_model: expected a pinocchio.Model"):
        mb.pinocchio.to_pinocchio_q(model, "panda", model.neutral())
    with pytest.raises(ValueError, match=r"q: expected positions, shape \(…, 9\)"):
        mb.pinocchio.to_pinocchio_q(model, pm, np.zeros(8))
    with pytest.raises(ValueError, match=r"x_pin: expected Pinocchio velocity-space values, shape \(…, 9\)"):
        mb.pinocchio.from_pinocchio_v(model, pm, np.zeros(7))
    floating, _ = robot("ANYmal")
    pm_fixed = pin.buildModelFromUrdf(os.path.join(robots_dir(), ROBOTS["ANYmal"][0]))
    with pytest.raises(ValueError, match=r"no joint named 'root_joint'"):
        mb.pinocchio.to_pinocchio_q(floating, pm_fixed, floating.neutral())


def test_the_state_functions_name_the_argument_that_is_wrong():
    """to/from_pinocchio_state named a bad qd, qdd, v_pin or a_pin as 'x' / 'x_pin' (the names of the
    functions they called); they name their own arguments now."""
    from multibody.pinocchio import V_URDF
    robot = mb.load_urdf(V_URDF, floating=True)
    pm = pin.buildModelFromXML(V_URDF, pin.JointModelFreeFlyer())
    q = np.r_[0, 0, 0, 1, 0, 0, 0, 0, 0.0]
    with pytest.raises(ValueError, match=r"^qd: expected velocity-space values, shape \(…, 8\), got \(3,\)$"):
        mb.pinocchio.to_pinocchio_state(robot, pm, q, np.zeros(3))
    with pytest.raises(ValueError, match=r"^qdd: expected velocity-space values, shape \(…, 8\), got \(2,\)$"):
        mb.pinocchio.to_pinocchio_state(robot, pm, q, np.zeros(8), np.zeros(2))
    with pytest.raises(ValueError, match=r"^v_pin: expected Pinocchio velocity-space values"):
        mb.pinocchio.from_pinocchio_state(robot, pm, pin.neutral(pm), np.zeros(9))
    with pytest.raises(TypeError, match=r"^a_pin: expected an array of numbers"):
        mb.pinocchio.from_pinocchio_state(robot, pm, pin.neutral(pm), np.zeros(8), "x")
    with pytest.raises(ValueError, match=r"^x: expected velocity-space values"):   # the one-vector function: x
        mb.pinocchio.to_pinocchio_v(robot, pm, np.zeros(3))
