"""The joint table (multibody.model.joints.JOINTS) is the one source of joint facts, and the
cylindrical joint added through it works end to end.

* csrc/model/joints.h and the viewer's constants are generated from the table and must match it;
* the C jcalc (csrc/model/poses.h), the viewer's JavaScript and the code generator's tracer give the
  pose the table's steps describe, for every joint type;
* a cylindrical joint equals the chain revolute + prismatic on the same axis through a massless
  body (M, C, ABA, RNEA, both derivative sets, simulate, batches), equals Pinocchio's composite
  of RevoluteUnaligned + PrismaticUnaligned, and the symbolic derivation matches the numeric core.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import multibody as mb
from multibody.model import joints as J
from multibody.model.joints import JOINTS, JointType, joint_pose, spec

ROOT = Path(mb.__file__).resolve().parent
TOL = 1e-12


# --------------------------------------------------------------------------- the table itself
def test_c_header_is_generated_from_the_table():
    text = (ROOT / "csrc" / "model" / "joints.h").read_text(encoding="utf-8")
    assert text == J.c_header(), "csrc/model/joints.h is stale: run `python -m multibody.model.joints`"


def test_viewer_gets_the_generated_constants():
    from multibody.view.animation import _viewer_js
    js = _viewer_js()
    assert J.js_constants() in js and "{{JOINT_POSE}}" not in js


def test_table_rows_are_consistent():
    assert [s.code for s in JOINTS] == list(range(len(JOINTS)))
    assert [t.name for t in JointType] == [s.name.upper() for s in JOINTS]
    for s in JOINTS:
        a = np.array([0.6, 0.0, 0.8])
        assert s.subspace(a, 0.1).shape == (s.nv, 6)
        assert len(s.neutral) == s.nq
        assert not s.vector or s.nq == s.nv
        assert (s.quat >= 0) == any(op == "quat" for op, _ in s.pose)
        assert J.NQ[JointType(s.code)] == s.nq and J.NV[JointType(s.code)] == s.nv
        R, p = joint_pose(s.code, a, 0.1, s.neutral)
        assert np.allclose(R, np.eye(3)) and np.allclose(p, 0), s.name  # neutral is the zero pose
    with pytest.raises(ValueError, match="jtype"):
        spec(len(JOINTS))


def _random_q(s, rng):
    q = rng.normal(size=s.nq)
    if s.quat >= 0:
        q[s.quat:s.quat + 4] /= np.linalg.norm(q[s.quat:s.quat + 4])
    return q


def _one_of_each(rng):
    """A chain with one body per joint type, tilted joint frames and unaligned axes."""
    b = mb.ModelBuilder("each")
    parent = None
    for s in JOINTS:
        ax = rng.normal(size=3)
        Rt = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        Rt *= np.sign(np.linalg.det(Rt))
        parent = b.add_body(f"b{s.code}", parent, s.name, axis=ax / np.linalg.norm(ax), pitch=0.3,
                            mass=1.0 + s.code, com=rng.normal(size=3) * 0.1, inertia=[0.1, 0.2, 0.3],
                            joint_rotation=Rt, joint_translation=rng.normal(size=3))
    return b.build()


def test_c_jcalc_follows_the_table_for_every_joint_type():
    rng = np.random.default_rng(3)
    model = _one_of_each(rng)
    for _ in range(3):
        q = np.concatenate([_random_q(s, rng) for s in JOINTS])
        R, p = mb.forward_kinematics(model, q)
        Rw, pw = np.eye(3), np.zeros(3)
        for i, s in enumerate(JOINTS):
            qs = int(model.q_start[i])
            Rj, pj = joint_pose(s.code, model.jaxis[i], model.jpitch[i], q[qs:qs + s.nq])
            T, t = model.tree_rotation[i], model.tree_translation[i]
            Rw, pw = Rw @ T @ Rj, pw + Rw @ (t + T @ pj)
            assert np.allclose(R[i], Rw, atol=1e-12) and np.allclose(p[i], pw, atol=1e-12), s.name


def test_viewer_javascript_follows_the_table():
    from system_deps import require_program          # Debian's nodejs (tools/system-deps); fails under CI
    from multibody.view.animation import _viewer_js
    require_program(["node"], "nodejs", "the viewer's joint poses run in JavaScript")
    js = _viewer_js()
    helpers = js[js.index("  function mul3"):js.index("  const dot")]
    poses = js[js.index("  const JOINT_POSE"):js.index("  function bodyPoses")]
    rng = np.random.default_rng(5)
    axes = [list(a / np.linalg.norm(a)) for a in rng.normal(size=(len(JOINTS), 3))]
    qs = [list(_random_q(s, rng)) for s in JOINTS]
    M = {"axis": axes, "pitch": [0.3] * len(JOINTS), "jtype": [s.code for s in JOINTS], "q_start": [0] * len(JOINTS)}
    script = (f"const M = {json.dumps(M)}; const Q = {json.dumps(qs)};\n{helpers}\n{poses}\n"
              "console.log(JSON.stringify(Q.map((q, i) => jointPose(i, q))));")
    out = json.loads(subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout)
    for s, (R, p), a, q in zip(JOINTS, out, axes, qs):
        Rr, pr = joint_pose(s.code, a, 0.3, q)
        assert np.allclose(np.reshape(R, (3, 3)), Rr, atol=1e-12) and np.allclose(p, pr, atol=1e-12), s.name


def test_codegen_tracer_follows_the_table():
    import symengine as se
    from multibody.codegen import trace
    rng = np.random.default_rng(9)
    model = _one_of_each(rng)
    q = np.concatenate([_random_q(s, rng) for s in JOINTS])
    for i, s in enumerate(JOINTS):
        qs = int(model.q_start[i])
        syms = [se.Symbol(f"q{k}") for k in range(model.nq)]
        R, p, _ = trace.joint_pose(model, i, syms)
        sub = {syms[k]: q[k] for k in range(model.nq)}
        Rn = np.array([[float(se.sympify(x).subs(sub)) for x in row] for row in R])
        pn = np.array([float(se.sympify(x).subs(sub)) for x in p])
        Rj, pj = joint_pose(s.code, model.jaxis[i], model.jpitch[i], q[qs:qs + s.nq])
        T, t = model.tree_rotation[i], model.tree_translation[i]
        assert np.allclose(Rn, T @ Rj, atol=1e-12) and np.allclose(pn, t + T @ pj, atol=1e-12), s.name


# --------------------------------------------------------------------------- the cylindrical joint
AXIS = np.array([0.36, -0.48, 0.8])
ROT = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def cylinder_model(as_chain=False):
    """base —revolute— arm —cylindrical (unaligned axis)— sleeve —revolute— tip; ``as_chain``
    builds the cylindrical joint as revolute + prismatic through a massless body."""
    b = mb.ModelBuilder("cylinder" + "_chain" * as_chain)
    b.add_body("arm", None, "revolute", axis=[0, 1, 0], mass=1.2, com=[0.2, 0, -0.1], inertia=[0.02, 0.03, 0.04])
    place = dict(joint_rotation=ROT, joint_translation=[0.4, 0.1, -0.2])
    inert = dict(mass=0.8, com=[0.05, 0.1, 0.3], inertia=[[0.05, 0.01, 0], [0.01, 0.04, 0.002], [0, 0.002, 0.03]])
    if as_chain:
        b.add_body("sleeve_turn", "arm", "revolute", axis=AXIS, mass=0.0, allow_massless=True, **place)
        b.add_body("sleeve", "sleeve_turn", "prismatic", axis=AXIS, **inert)
    else:
        b.add_body("sleeve", "arm", "cylindrical", axis=AXIS, **place, **inert)
    b.add_body("tip", "sleeve", "revolute", axis=[1, 0, 0], mass=0.5, com=[0, 0.1, 0.2], inertia=[0.01, 0.01, 0.02],
               joint_translation=[0.1, 0.0, 0.3])
    return b.build()


def _close(a, b, tol=TOL):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape
    assert np.max(np.abs(a - b), initial=0.0) <= tol * max(1.0, np.max(np.abs(b), initial=0.0))


def test_builder_makes_a_cylindrical_joint():
    m = cylinder_model()
    assert JointType(m.jtype[1]) == JointType.CYLINDRICAL
    assert (m.nq, m.nv, list(m.nq_joint), list(m.nv_joint)) == (4, 4, [1, 2, 1], [1, 2, 1])
    assert np.allclose(m.S[1:3], [np.r_[m.jaxis[1], 0, 0, 0], np.r_[0, 0, 0, m.jaxis[1]]])
    assert np.allclose(m.neutral(), 0)


@pytest.mark.parametrize("seed", range(4))
def test_cylindrical_equals_revolute_plus_prismatic(seed):
    cyl, chain = cylinder_model(), cylinder_model(as_chain=True)
    rng = np.random.default_rng(seed)
    q, qd, qdd, tau = (rng.normal(size=4) for _ in range(4))
    f_cyl = rng.normal(size=(3, 6))
    f_chain = np.insert(f_cyl, 1, 0.0, axis=0)  # no force on the massless body
    _close(mb.crba(cyl, q), mb.crba(chain, q))
    for a, b in zip(mb.hand_c(cyl, q, qd), mb.hand_c(chain, q, qd)):
        _close(a, b)
    _close(mb.rnea(cyl, q, qd, qdd, f_cyl), mb.rnea(chain, q, qd, qdd, f_chain))
    _close(mb.aba(cyl, q, qd, tau, f_cyl), mb.aba(chain, q, qd, tau, f_chain))
    _close(mb.fd_crb(cyl, q, qd, tau), mb.fd_crb(chain, q, qd, tau))
    _close(mb.minv(cyl, q), mb.minv(chain, q))
    for a, b in zip(mb.rnea_derivatives(cyl, q, qd, qdd), mb.rnea_derivatives(chain, q, qd, qdd)):
        _close(a, b)
    for a, b in zip(mb.aba_derivatives(cyl, q, qd, tau), mb.aba_derivatives(chain, q, qd, tau)):
        _close(a, b, 1e-11)
    R, p = mb.forward_kinematics(cyl, q)
    Rc, pc = mb.forward_kinematics(chain, q)
    _close(R, Rc[[0, 2, 3]]), _close(p, pc[[0, 2, 3]])


def test_cylindrical_batches_equal_single_states():
    m = cylinder_model()
    rng = np.random.default_rng(11)
    Q, QD, TAU = (rng.normal(size=(9, 4)) for _ in range(3))
    batch = mb.aba(m, Q, QD, TAU)
    for k in range(9):
        assert np.array_equal(batch[k], mb.aba(m, Q[k], QD[k], TAU[k]))
    _close(mb.rnea(m, Q, QD, TAU)[4], mb.rnea(m, Q[4], QD[4], TAU[4]))


def test_cylindrical_simulates_as_the_chain():
    cyl, chain = cylinder_model(), cylinder_model(as_chain=True)
    q0, qd0 = np.array([0.3, 0.5, -0.2, 0.4]), np.array([0.1, -0.3, 0.2, 0.0])
    a = mb.simulate(cyl, q0, qd0, 0.5, dt=1e-3)
    b = mb.simulate(chain, q0, qd0, 0.5, dt=1e-3)
    _close(a.q, b.q, 1e-10), _close(a.qd, b.qd, 1e-10)
    pd = mb.PD(kp=[5.0, 4.0, 3.0, 2.0], kd=1.0) if hasattr(mb, "PD") else None
    if pd is not None:  # position gains on both dofs of the cylindrical joint: q is a plain vector
        a = mb.simulate(cyl, q0, qd0, 0.3, controller=pd)
        b = mb.simulate(chain, q0, qd0, 0.3, controller=pd)
        _close(a.q, b.q, 1e-10)
    Q0 = np.stack([q0, -q0, 0.5 * q0])
    QD0 = np.stack([qd0, qd0, -qd0])
    batch = mb.simulate_batch(cyl, Q0, QD0, 0.2, dt=1e-3)
    one = mb.simulate(cyl, Q0[1], QD0[1], 0.2, dt=1e-3)
    _close(batch.q[1], one.q, 1e-12)


def test_cylindrical_in_the_viewer(tmp_path):
    m = cylinder_model()
    traj = mb.simulate(m, np.zeros(4), np.ones(4), 0.1, dt=1e-2)
    from multibody.view.animation import showmotion
    page = Path(showmotion(m, traj, out=str(tmp_path / "cyl.html"))).read_text(encoding="utf-8")
    assert J.js_constants() in page


def test_cylindrical_against_pinocchio():
    import pinocchio as pin          # a test dependency (pyproject's [test])
    m = cylinder_model()
    pm = pin.Model()
    pm.gravity.linear = np.asarray(m.gravity, float)
    parent = 0
    for i in range(m.nb):
        a = m.jaxis[i]
        if JointType(m.jtype[i]) == JointType.CYLINDRICAL:
            jm = pin.JointModelComposite()
            jm.addJoint(pin.JointModelRevoluteUnaligned(a))
            jm.addJoint(pin.JointModelPrismaticUnaligned(a))
        else:
            jm = pin.JointModelRevoluteUnaligned(a)
        place = pin.SE3(np.asarray(m.tree_rotation[i], float), np.asarray(m.tree_translation[i], float))
        parent = pm.addJoint(parent, jm, place, f"j{i}")
        pm.appendBodyToJoint(parent, pin.Inertia(float(m.mass[i]), np.asarray(m.com[i], float),
                                                 np.asarray(m.inertia_com[i], float)), pin.SE3.Identity())
    data = pm.createData()
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, qd, qdd = (rng.normal(size=4) for _ in range(3))
        _close(mb.rnea(m, q, qd, qdd), pin.rnea(pm, data, q, qd, qdd), 1e-10)
        H = pin.crba(pm, data, q)
        _close(mb.crba(m, q), np.triu(H) + np.triu(H, 1).T, 1e-10)
        _close(mb.aba(m, q, qd, qdd), pin.aba(pm, data, q, qd, qdd), 1e-10)


def test_cylindrical_derived_symbolically():
    from multibody.symbolic import derive
    m = cylinder_model()
    num = derive(m, "rnea").to_numeric({})
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, dq = rng.uniform(-1.5, 1.5, 4), rng.normal(size=4)
        g = mb.rnea(m, q, np.zeros(4), np.zeros(4))
        _close(num.M(q), mb.crba(m, q), 1e-10)
        _close(num.g(q), g, 1e-10)
        _close(num.b(q, dq), mb.rnea(m, q, dq, np.zeros(4)) - g, 1e-10)


def test_unknown_joint_names_the_argument():
    with pytest.raises(ValueError, match=r"joint: unknown joint type 'cylinder'.*cylindrical"):
        mb.ModelBuilder().add_body("a", None, "cylinder")
    assert re.search(r"MB_CYLINDRICAL = 7", J.c_header())


def test_jcalc_names_its_bad_arguments():
    """jcalc('Rz', 'a') said "could not convert string to float", None and arrays gave float()'s own
    messages, a list code "unhashable type", a NaN pitch "xlt: r contains NaN or inf", a True q
    passed as 1.0, and an overflowing screw advance was reported as NaN in xlt."""
    import multibody as mb
    from multibody.model.joints import jcalc
    with pytest.raises(TypeError, match=r"^q: expected a real number, got str 'a'$"):
        jcalc("Rz", "a")
    with pytest.raises(TypeError, match=r"^q: expected a real number, got True$"):
        jcalc("Rz", True)
    with pytest.raises(TypeError, match=r"^code: expected a joint code \(str\), got list \['Rz'\]$"):
        jcalc(["Rz"], 1.0)
    with pytest.raises(ValueError, match=r"^pitch: expected a finite number, got nan$"):
        jcalc("H", 1.0, np.nan)
    with pytest.raises(mb.errors.ResultOverflowError, match=r"^jcalc: the screw's advance q·pitch overflows"):
        jcalc("H", 1e308, 1e308)
    assert jcalc("R", np.float32(0.5))[1].tolist() == jcalc("Rz", 0.5)[1].tolist()
