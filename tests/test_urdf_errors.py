"""URDF loader: what it keeps (merging, frames, limits, mimic, geometry, planar, floating), what it
refuses (each malformed case → URDFError naming the element and line), and a fuzz run over 10 000
mutated documents (no crash, no hang, every failure a URDFError with a message)."""
from __future__ import annotations

import copy
import math
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from lxml import etree

from multibody.dynamics import aba
from multibody.dynamics import crba
from multibody.dynamics import rnea
from multibody.kinematics.forward import forward_kinematics, frame_pose
from multibody.model.builder import ModelBuilder
from multibody.model.joints import JointType
from multibody.model.urdf import URDFError, URDFWarning, load_urdf, rpy_to_rot

VALID = """<?xml version="1.0"?>
<robot name="testbot">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="base">
    <inertial><origin xyz="0 0 0.1"/><mass value="4"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
    <visual><geometry><box size="0.3 0.2 0.1"/></geometry><material name="blue"/></visual>
  </link>
  <joint name="hip" type="revolute">
    <parent link="base"/><child link="thigh"/>
    <origin xyz="0.1 0 0" rpy="0.1 0.2 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1.5" effort="30" velocity="4"/>
    <dynamics damping="0.5" friction="0.1"/>
  </joint>
  <link name="thigh">
    <inertial><origin xyz="0 0 -0.2" rpy="0.3 -0.2 0.1"/><mass value="1.5"/>
      <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0" izz="0.015"/></inertial>
    <collision><origin xyz="0 0 -0.2"/><geometry><cylinder radius="0.03" length="0.4"/></geometry></collision>
  </link>
  <joint name="knee" type="continuous">
    <parent link="thigh"/><child link="shank"/><origin xyz="0 0 -0.4"/><axis xyz="0 1 0"/>
  </joint>
  <link name="shank">
    <inertial><origin xyz="0 0 -0.15"/><mass value="0.8"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/></inertial>
  </link>
  <joint name="foot_fix" type="fixed">
    <parent link="shank"/><child link="foot"/><origin xyz="0 0 -0.3" rpy="0 0 1.0"/>
  </joint>
  <link name="foot">
    <inertial><origin xyz="0.02 0 0"/><mass value="0.2"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.002"/></inertial>
    <collision><geometry><sphere radius="0.02"/></geometry></collision>
  </link>
  <joint name="slide" type="prismatic">
    <parent link="base"/><child link="rail"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.2" effort="100" velocity="1"/>
  </joint>
  <link name="rail">
    <inertial><mass value="0.5"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>
    <visual><geometry><mesh filename="package://testpkg/meshes/rail.stl" scale="2 2 2"/></geometry></visual>
  </link>
  <joint name="slide2" type="prismatic">
    <parent link="base"/><child link="rail2"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.2" effort="100" velocity="1"/>
    <mimic joint="slide" multiplier="-1" offset="0.05"/>
  </joint>
  <link name="rail2">
    <inertial><mass value="0.5"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>
  </link>
</robot>
"""


@pytest.fixture()
def pkg(tmp_path):
    """A package folder holding the mesh that VALID refers to."""
    d = tmp_path / "testpkg" / "meshes"
    d.mkdir(parents=True)
    (d / "rail.stl").write_text("solid rail\nendsolid rail\n")
    return tmp_path


def load(doc, **kw):
    kw.setdefault("check_meshes", False)
    return load_urdf(doc, **kw)


def line_of(doc, needle):
    """1-based line of the first occurrence of ``needle`` in ``doc``."""
    return doc[:doc.index(needle)].count("\n") + 1


# --------------------------------------------------------------------------- what is kept
def test_valid_document_loads_with_everything_kept(pkg):
    m = load_urdf(VALID, package_dirs=[pkg])
    assert m.name == "testbot"
    assert m.body_names == ("thigh", "shank", "rail", "rail2")
    assert m.joint_names == ("hip", "knee", "slide", "slide2")
    assert [JointType(t) for t in m.jtype] == [JointType.REVOLUTE, JointType.REVOLUTE, JointType.PRISMATIC,
                                              JointType.PRISMATIC]
    assert m.parent.tolist() == [-1, 0, -1, -1]
    assert m.q_lower.tolist() == [-1, -math.inf, 0, 0] and m.q_upper.tolist() == [1.5, math.inf, 0.2, 0.2]
    assert m.effort_limit[0] == 30 and m.velocity_limit[0] == 4 and m.damping[0] == 0.5 and m.friction[0] == 0.1
    assert len(m.mimics) == 1 and (m.mimics[0].joint, m.mimics[0].mimicked) == (3, 2)
    assert (m.mimics[0].multiplier, m.mimics[0].offset) == (-1.0, 0.05)
    names = [f.name for f in m.frames]
    for n in ("base", "thigh", "shank", "foot", "rail", "rail2", "hip", "knee", "foot_fix", "slide", "slide2"):
        assert n in names
    assert m.frame("base").body == -1 and m.frame("foot").body == 1 and m.frame("foot_fix").body == 1
    assert np.allclose(m.frame("foot").translation, [0, 0, -0.3])
    assert np.allclose(m.frame("foot").rotation, rpy_to_rot(0, 0, 1.0))
    kinds = sorted((g.kind, g.role, g.body) for g in m.geometries)
    assert kinds == [("box", "visual", -1), ("cylinder", "collision", 0), ("mesh", "visual", 2),
                     ("sphere", "collision", 1)]
    mesh = next(g for g in m.geometries if g.kind == "mesh")
    assert os.path.samefile(mesh.mesh, pkg / "testpkg" / "meshes" / "rail.stl") and mesh.scale == (2, 2, 2)
    box = next(g for g in m.geometries if g.kind == "box")
    assert box.rgba == (0, 0, 1, 1) and box.size == (0.3, 0.2, 0.1)
    sphere = next(g for g in m.geometries if g.kind == "sphere")
    assert np.allclose(sphere.translation, [0, 0, -0.3])  # the foot's geometry moved onto the shank
    assert np.allclose(m.tree_rotation[0], rpy_to_rot(0.1, 0.2, 0.3))
    # frame poses, including frames on the fixed base (body −1)
    q = np.array([[0.3, -0.7, 0.1, 0.05], [0.0, 0.0, 0.0, 0.0]])
    R, p = frame_pose(m, q, "base")
    assert R.shape == (2, 3, 3) and np.allclose(R, np.eye(3)) and np.allclose(p, 0)
    Rb, pb = forward_kinematics(m, q)
    R, p = frame_pose(m, q, "foot")
    assert np.allclose(R, Rb[:, 1] @ rpy_to_rot(0, 0, 1.0)) and np.allclose(p, pb[:, 1] + Rb[:, 1] @ [0, 0, -0.3])


def test_fixed_child_merged_with_parallel_axis_theorem():
    m = load(VALID)
    # shank (0.8 kg, CoM (0,0,-0.15)) + foot (0.2 kg at (0,0,-0.3) + Rz(1)·(0.02,0,0), own inertia rotated)
    R = rpy_to_rot(0, 0, 1.0)
    c2 = np.array([0, 0, -0.3]) + R @ [0.02, 0, 0]
    c1 = np.array([0, 0, -0.15])
    M = 1.0
    c = (0.8 * c1 + 0.2 * c2) / M
    I1, I2 = np.diag([0.01, 0.01, 0.002]), R @ np.diag([0.001, 0.002, 0.002]) @ R.T
    pa = lambda mm, d: mm * ((d @ d) * np.eye(3) - np.outer(d, d))  # noqa: E731
    I = I1 + pa(0.8, c1 - c) + I2 + pa(0.2, c2 - c)  # noqa: E741
    assert np.isclose(m.mass[1], 1.0) and np.allclose(m.com[1], c) and np.allclose(m.inertia_com[1], I)
    # inertial origin with rpy: thigh inertia rotated into the link frame
    Ri = rpy_to_rot(0.3, -0.2, 0.1)
    Ith = np.array([[0.02, 0.001, 0], [0.001, 0.03, 0], [0, 0, 0.015]])
    assert np.allclose(m.inertia_com[0], Ri @ Ith @ Ri.T) and np.allclose(m.com[0], [0, 0, -0.2])


def test_floating_adds_a_free_root_joint():
    m = load(VALID, floating=True)
    assert m.body_names[0] == "base" and m.joint_names[0] == "root_joint"
    assert m.jtype[0] == JointType.FREE and m.nq == 7 + 4 and m.nv == 6 + 4
    assert m.frame("base").body == 0 and m.frame("root_joint").body == 0
    assert np.isclose(m.mass[0], 4.0)


def test_from_file_with_relative_mesh(tmp_path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "rail.stl").write_text("solid\nendsolid\n")
    doc = VALID.replace("package://testpkg/meshes/rail.stl", "meshes/rail.stl")
    f = tmp_path / "bot.urdf"
    f.write_text(doc)
    m = load_urdf(f)
    mesh = next(g for g in m.geometries if g.kind == "mesh")
    assert os.path.samefile(mesh.mesh, tmp_path / "meshes" / "rail.stl")
    m2 = load_urdf(str(f))
    assert m2.nq == m.nq


def test_mimic_of_missing_joint_is_dropped_with_a_warning():
    doc = VALID.replace('<mimic joint="slide"', '<mimic joint="nope"')
    with pytest.warns(URDFWarning, match="'nope' is not defined"):
        m = load(doc)
    assert m.mimics == ()


MIMIC_CYCLE = """<robot name="m"><link name="base"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="c"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j1" type="continuous"><parent link="base"/><child link="a"/><mimic joint="j3"/></joint>
<joint name="j2" type="continuous"><parent link="a"/><child link="b"/><mimic joint="j1"/></joint>
<joint name="j3" type="prismatic"><parent link="b"/><child link="c"/><mimic joint="j2" multiplier="2"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def test_a_mimic_cycle_is_refused_naming_its_joints():
    with pytest.raises(URDFError, match=r"<mimic> \(line 5\): joints 'j1' → 'j3' → 'j2' → 'j1' mimic each other "
                                        r"in a cycle"):
        load(MIMIC_CYCLE)
    # the builder finds cycles in the same place
    b = ModelBuilder()
    for name in ("a", "b"):
        b.add_body(name, None if name == "a" else "a", "Rz", mass=1.0, inertia=np.eye(3))
    b.add_mimic("a_joint", "b_joint")
    b.add_mimic("b_joint", "a_joint")
    with pytest.raises(ValueError, match="mimic each other in a cycle"):
        b.build()
    # a chain of mimics is not a cycle
    assert len(load(MIMIC_CYCLE.replace('<mimic joint="j3"/>', "")).mimics) == 2


PLANAR = """<robot name="pl">
  <link name="world"/>
  <joint name="pj" type="planar"><parent link="world"/><child link="puck"/>
    <origin xyz="0.1 0.2 0.3" rpy="{rpy}"/><axis xyz="{axis}"/></joint>
  <link name="puck"><inertial><origin xyz="{com}" rpy="{irpy}"/><mass value="2"/>
    <inertia ixx="0.05" ixy="0" ixz="0" iyy="0.08" iyz="0" izz="0.1"/></inertial></link>
  <joint name="arm_j" type="revolute"><parent link="puck"/><child link="arm"/>
    <origin xyz="{t}" rpy="{trpy}"/><axis xyz="0 0.6 0.8"/><limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="0.7"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
</robot>"""


def _fmt(v):
    return " ".join(repr(float(x)) for x in v)


def test_planar_joint_uses_the_axis_as_plane_normal_and_matches_pinocchio():
    import pinocchio as pin
    n = np.array([1.0, 0, 0])
    com, t = np.array([0.1, -0.2, 0.05]), np.array([0.3, 0.1, -0.2])
    ours = load(PLANAR.format(rpy="0 0 0", axis=_fmt(n), com=_fmt(com), irpy="0 0 0", t=_fmt(t), trpy="0 0 0"))
    # the same system for Pinocchio (which always takes z as the normal): fold Ry(π/2), which
    # takes z onto n, into the joint origin and re-express the child link in the rotated frame
    Rn = rpy_to_rot(0, np.pi / 2, 0)
    assert np.allclose(Rn @ [0, 0, 1], n)
    twin = PLANAR.format(rpy=_fmt([0, np.pi / 2, 0]), axis="0 0 1", com=_fmt(Rn.T @ com), irpy=_fmt([0, -np.pi / 2, 0]),
                         t=_fmt(Rn.T @ t), trpy=_fmt([0, -np.pi / 2, 0]))
    pm = pin.buildModelFromXML(twin)
    pd = pm.createData()
    assert ours.jtype[0] == JointType.PLANAR and ours.nq == 4
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, v, a = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
        qp = np.r_[q[0], q[1], np.cos(q[2]), np.sin(q[2]), q[3]]
        assert np.allclose(rnea(ours, q, v, a), pin.rnea(pm, pd, qp, v, a), rtol=1e-10, atol=1e-10)
        Mp = pin.crba(pm, pd, qp)
        assert np.allclose(crba(ours, q), np.triu(Mp) + np.triu(Mp, 1).T, rtol=1e-10, atol=1e-10)
        assert np.allclose(aba(ours, q, v, a), pin.aba(pm, pd, qp, v, a), rtol=1e-9, atol=1e-9)
    # motion stays in the plane normal to n through the joint origin
    R, p = forward_kinematics(ours, rng.normal(size=(50, 4)))
    assert np.allclose(p[:, 0, 0], 0.1)
    # with axis z the file means the same to us and to Pinocchio, no folding needed
    doc = PLANAR.format(rpy="0.2 0.1 0", axis="0 0 1", com=_fmt(com), irpy="0.1 0 0", t=_fmt(t), trpy="0 0 0.3")
    oz, pz = load(doc), pin.buildModelFromXML(doc)
    q, v, a = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
    qp = np.r_[q[0], q[1], np.cos(q[2]), np.sin(q[2]), q[3]]
    assert np.allclose(rnea(oz, q, v, a), pin.rnea(pz, pz.createData(), qp, v, a), rtol=1e-10, atol=1e-10)


def test_robot_without_movable_joints():
    doc = """<robot name="rigid"><link name="a"><inertial><mass value="2"/>
      <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="w" type="fixed"><parent link="a"/><child link="b"/><origin xyz="0 0 1"/></joint>
      <link name="b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
    </robot>"""
    m = load(doc)  # welded to the fixed base: no bodies, only base frames
    assert m.nb == 0 and m.nq == 0 and {f.name: f.body for f in m.frames} == {"a": -1, "b": -1, "w": -1}
    assert rnea(m, np.zeros(0), np.zeros(0), np.zeros(0)).shape == (0,)
    mf = load(doc, floating=True)  # one free body carrying both links
    assert mf.nb == 1 and np.isclose(mf.mass[0], 3) and np.allclose(mf.com[0], [0, 0, 1 / 3])


def test_floating_joint_in_the_file():
    doc = """<robot name="f"><link name="world"/>
      <joint name="fj" type="floating"><parent link="world"/><child link="b"/><origin xyz="1 2 3"/></joint>
      <link name="b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
    </robot>"""
    m = load(doc)
    assert m.jtype[0] == JointType.FREE and m.joint_names == ("fj",) and np.allclose(m.tree_translation[0], [1, 2, 3])


# --------------------------------------------------------------------------- what is refused
def _sub(old, new, count=1):
    assert old in VALID, old
    return VALID.replace(old, new, count)


CASES = [
    # (name, document, regex the message must match, text locating the element's line or None)
    ("malformed XML", VALID.replace("</robot>", ""), r"malformed XML \(line \d+\)", None),
    ("not a robot", "<robut name='x'/>", r"<robut.*root element must be <robot>", None),
    ("robot without name", _sub('<robot name="testbot">', "<robot>"), r"<robot> \(line 2\): missing attribute 'name'",
     None),
    ("link without name", _sub('<link name="rail2">', "<link>"), r"<link> \(line \d+\): missing attribute 'name'",
     None),
    ("joint without type", _sub('<joint name="knee" type="continuous">', '<joint name="knee">'),
     r"<joint name='knee'> \(line {line}\): missing attribute 'type'", '<joint name="knee"'),
    ("joint without child", _sub('<parent link="thigh"/><child link="shank"/>', '<parent link="thigh"/>'),
     r"<joint name='knee'> \(line {line}\): missing element <child>", '<joint name="knee"'),
    ("parent without link", _sub('<parent link="thigh"/>', '<parent/>'), r"<parent> \(line {line}\): missing attribute 'link'",
     '<parent/>'),
    ("undefined link", _sub('<child link="shank"/>', '<child link="shin"/>'),
     r"<child> \(line {line}\): child link 'shin' is not defined", '<child link="shin"/>'),
    ("bad number: text", _sub('<mass value="1.5"/>', '<mass value="heavy"/>'),
     r"<mass> \(line {line}\): attribute value='heavy': 'heavy' is not a number", '<mass value="heavy"/>'),
    ("bad number: NaN", _sub('xyz="0 0 -0.4"', 'xyz="0 nan -0.4"'), r"<origin> \(line {line}\).*'nan' is not a number",
     'xyz="0 nan -0.4"'),
    ("bad number: inf", _sub('xyz="0 0 -0.4"', 'xyz="0 1e999 -0.4"'), r"<origin> \(line {line}\).*not finite",
     'xyz="0 1e999 -0.4"'),
    ("bad number: count", _sub('<axis xyz="0 1 0"/>', '<axis xyz="0 1"/>'),
     r"<axis> \(line {line}\): attribute xyz='0 1': expected 3 numbers", '<axis xyz="0 1"/>'),
    ("unknown joint type", _sub('type="continuous"', 'type="hinge"'),
     r"<joint name='knee'> \(line {line}\): unknown joint type 'hinge'", 'type="hinge"'),
    ("two parents", _sub('<parent link="base"/><child link="rail2"/>', '<parent link="thigh"/><child link="rail"/>'),
     r"<joint name='slide2'> \(line {line}\): link 'rail' has two parents: joint 'slide' \(line \d+\) and joint 'slide2'",
     '<joint name="slide2"'),
    ("cycle", """<robot name="c"><link name="a"/><link name="b"/>
      <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>
      <joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>""",
     r"<robot name='c'> \(line 1\): no root link: every link has a parent, so the joints form a cycle", None),
    ("cycle through the root's child", _sub('<parent link="base"/><child link="rail2"/>',
                                             '<parent link="thigh"/><child link="base"/>'),
     r"link is not reachable from the root 'rail2'.*form a cycle", None),
    ("cycle beside the tree", VALID.replace("</robot>", """<link name="a"/><link name="b"/>
      <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>
      <joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>"""),
     r"<link name='a'> \(line {line}\): link is not reachable from the root 'base'.*form a cycle", '<link name="a"/>'),
    ("own parent", _sub('<parent link="thigh"/><child link="shank"/>', '<parent link="shank"/><child link="shank"/>'),
     r"<joint name='knee'> \(line {line}\): link 'shank' is its own parent", '<joint name="knee"'),
    ("two roots", VALID.replace("</robot>", '<link name="stray"/></robot>'),
     r"<robot name='testbot'> \(line 2\): 2 root links .*'base' \(line \d+\), 'stray' \(line \d+\)", None),
    ("no links", '<robot name="e"></robot>', r"<robot name='e'> \(line 1\): no <link> elements", None),
    ("negative mass", _sub('<mass value="0.8"/>', '<mass value="-0.8"/>'), r"<mass> \(line {line}\): negative mass",
     '<mass value="-0.8"/>'),
    # (an indefinite inertia loads with a warning: tests/test_model_validation.py)
    ("missing inertia", _sub('<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/>', ''),
     r"<inertial> \(line \d+\): missing element <inertia>", None),
    ("inertia attribute missing", _sub('ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"',
                                       'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0"'),
     r"<inertia> \(line \d+\): missing attribute 'izz'", None),
    ("zero axis", _sub('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'), r"<axis> \(line {line}\): joint axis is zero",
     '<axis xyz="0 0 0"/>'),
    ("limit without effort", _sub('effort="30" ', ''), r"<limit> \(line {line}\): missing attribute 'effort'",
     'lower="-1"'),
    ("lower above upper", _sub('lower="-1" upper="1.5"', 'lower="2" upper="1.5"'),
     r"<limit> \(line {line}\): lower limit 2.0 exceeds upper limit 1.5", 'lower="2"'),
    ("duplicate link", VALID.replace("</robot>", '<link name="thigh"/></robot>'),
     r"<link name='thigh'> \(line \d+\): duplicate link name 'thigh' \(first defined on line \d+\)", None),
    ("duplicate joint", _sub('<joint name="slide2"', '<joint name="slide"'),
     r"<joint name='slide'> \(line \d+\): duplicate joint name 'slide'", None),
    ("unknown geometry", _sub('<sphere radius="0.02"/>', '<cone radius="0.02"/>'),
     r"<cone> \(line {line}\): unknown geometry 'cone'", '<cone'),
    ("box with two sizes", _sub('size="0.3 0.2 0.1"', 'size="0.3 0.2"'), r"<box> \(line {line}\).*expected 3 numbers",
     'size="0.3 0.2"'),
    ("mimic itself", _sub('<mimic joint="slide"', '<mimic joint="slide2"'),
     r"<mimic> \(line {line}\): a joint cannot mimic itself", '<mimic'),
    ("doctype / entities", VALID.replace('<?xml version="1.0"?>',
                                         '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]>'),
     r"document type declarations and entities are not allowed", None),
    ("empty document", "", r"no such URDF file|malformed|empty", None),
    ("not a string or path", 42, r"expected a path or an XML string", None),
]


@pytest.mark.parametrize("name,doc,pattern,locate", CASES, ids=[c[0] for c in CASES])
def test_malformed_documents_name_element_and_line(name, doc, pattern, locate):
    if locate is not None:
        pattern = pattern.replace("{line}", str(line_of(doc, locate)))
    with pytest.raises(URDFError) as ei:
        load(doc)
    assert re.search(pattern, str(ei.value)), f"{name}: {ei.value}"


def test_missing_mesh_files(tmp_path):
    with pytest.raises(URDFError, match=r"<mesh> \(line \d+\): mesh 'package://testpkg/meshes/rail.stl' not found"):
        load_urdf(VALID, package_dirs=[tmp_path], check_meshes=True)
    doc = VALID.replace("package://testpkg/meshes/rail.stl", "meshes/none.stl")
    with pytest.raises(URDFError, match=r"<mesh> \(line \d+\): mesh file '.*none.stl' does not exist"):
        load_urdf(doc, check_meshes=True)
    assert load_urdf(doc, check_meshes=False).nb == 4
    with pytest.warns(URDFWarning, match=r"1 mesh file\(s\) not found; loaded without them .*: <mesh> \(line \d+\): "
                                         r"mesh file '.*none.stl' does not exist"):
        m = load_urdf(doc)                     # the default: warn, as Pinocchio loads without meshes
    assert m.nb == 4 and any(g.mesh and g.mesh.endswith("none.stl") for g in m.geometries)
    doc = VALID.replace("package://testpkg/meshes/rail.stl", "m" * 5000 + ".stl")
    with pytest.raises(URDFError, match=r"<mesh> \(line \d+\): mesh .* (cannot be looked up|does not exist)"):
        load_urdf(doc, check_meshes=True)
    assert load_urdf(doc, check_meshes=False).nb == 4
    with pytest.warns(URDFWarning, match=r"mesh .* (cannot be looked up|does not exist)"):
        assert load_urdf(doc).nb == 4
    with pytest.raises(TypeError, match="check_meshes: expected True, False or 'warn', got 'yes'"):
        load_urdf(doc, check_meshes="yes")


def test_huge_files_are_refused_before_parsing(tmp_path):
    big = tmp_path / "big.urdf"
    with open(big, "wb") as f:
        f.write(VALID.encode())
        f.write(b"<!--" + b"x" * (2 * 1024 * 1024) + b"-->")
    with pytest.raises(URDFError, match="exceeds the limit"):
        load_urdf(big, max_bytes=1024 * 1024)
    with pytest.raises(URDFError, match="exceeds the limit"):
        load_urdf(VALID + " " * 2000, max_bytes=2000)
    with pytest.raises(URDFError, match="no such URDF file"):
        load_urdf(tmp_path / "missing.urdf")
    # found by the fuzzer: text that is not XML is taken for a path; it must not raise OSError
    with pytest.raises(URDFError, match="cannot read the URDF file|no such URDF file"):
        load_urdf("x" * 5000)
    with pytest.raises(URDFError, match="cannot read the URDF file|no such URDF file"):
        load_urdf("bad\0name.urdf")
    with pytest.raises(URDFError, match="malformed XML"):
        load_urdf("> <robot name='r'><link name='a'/></robot>")


def test_entity_expansion_is_never_performed():
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
            '<robot name="&lol2;"><link name="a"/></robot>')
    # refused at the declaration, before any expansion (the message says why); no clock needed
    with pytest.raises(URDFError, match="entities are not allowed"):
        load(bomb)


def test_deep_nesting_is_refused_or_ignored():
    deep = VALID.replace("</robot>", "<gazebo>" + "<x>" * 5000 + "</x>" * 5000 + "</gazebo></robot>")
    with pytest.raises(URDFError, match="malformed XML"):
        load(deep)  # libxml2's depth limit (huge_tree=False)
    shallow = VALID.replace("</robot>", "<gazebo>" + "<x>" * 50 + "</x>" * 50 + "</gazebo></robot>")
    assert load(shallow).nb == 4  # unknown top-level elements are ignored, as urdfdom does


def test_long_chains_do_not_hit_the_recursion_limit():
    n = 3000
    parts = ['<robot name="chain"><link name="l0"/>']
    for i in range(1, n + 1):
        parts.append(f'<joint name="j{i}" type="continuous"><parent link="l{i - 1}"/><child link="l{i}"/>'
                     f'<origin xyz="0 0 0.1"/></joint><link name="l{i}"><inertial><mass value="1"/>'
                     '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>')
    m = load("".join(parts) + "</robot>")
    assert m.nb == n and m.parent[-1] == n - 2


# --------------------------------------------------------------------------- fuzzing
BASE_TREE = etree.fromstring(VALID.encode())
ALL_ELEMENTS = [e for e in BASE_TREE.iter() if isinstance(e.tag, str)]
BAD_VALUES = ["", "nan", "NaN", "inf", "-inf", "1e999", "-1e999", "1e308", "-1e308", "1e-320", "abc", "1,2,3",
              "0x10", "1_0", "  ", "1 2", "1 2 3 4", "-0", "+.5", "5.", "1e12", "1e13", "-1", "0", "∞", "١",
              "base", "thigh", "shank", "foot", "rail", "rail2", "hip", "knee", "slide", "revolute", "fixed",
              "planar", "floating", "prismatic", "continuous", "hinge"]
TAGS = ["link", "joint", "inertial", "origin", "mass", "inertia", "axis", "limit", "parent", "child", "mimic",
        "geometry", "box", "sphere", "cylinder", "mesh", "visual", "collision", "dynamics", "material", "robot",
        "gazebo", "transmission", "x"]
ATTRS = ["name", "type", "link", "xyz", "rpy", "value", "ixx", "ixy", "ixz", "iyy", "iyz", "izz", "lower",
         "upper", "effort", "velocity", "joint", "multiplier", "offset", "size", "radius", "length",
         "filename", "scale", "damping", "friction", "rgba"]

mutation = st.one_of(
    st.tuples(st.just("remove_attr"), st.integers(0, 10_000), st.integers(0, 100)),
    st.tuples(st.just("set_attr"), st.integers(0, 10_000), st.sampled_from(ATTRS),
              st.one_of(st.sampled_from(BAD_VALUES), st.text(max_size=12),
                        st.floats(allow_nan=True, allow_infinity=True).map(repr),
                        st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=4).map(
                            lambda v: " ".join(map(repr, v))))),
    st.tuples(st.just("set_existing"), st.integers(0, 10_000), st.integers(0, 100),
              st.one_of(st.sampled_from(BAD_VALUES), st.text(max_size=12))),
    st.tuples(st.just("set_existing"), st.integers(0, 10_000), st.integers(0, 100),
              st.tuples(st.sampled_from(["x", "1", "/", "package://", " ", "9" * 400]), st.integers(1, 20_000))
              .map(lambda t: (t[0] * t[1])[:40_000])),
    st.tuples(st.just("remove_elem"), st.integers(0, 10_000)),
    st.tuples(st.just("add_elem"), st.integers(0, 10_000), st.sampled_from(TAGS), st.sampled_from(ATTRS),
              st.sampled_from(BAD_VALUES)),
    st.tuples(st.just("duplicate"), st.integers(0, 10_000)),
    st.tuples(st.just("move"), st.integers(0, 10_000), st.integers(0, 10_000)),
    st.tuples(st.just("nest"), st.integers(0, 10_000), st.integers(1, 400)),
    st.tuples(st.just("truncate"), st.integers(0, 5000)),
    st.tuples(st.just("inject"), st.integers(0, 5000), st.sampled_from(["<", ">", "&", "&lol;", "<!--", "]]>",
                                                                        "<?pi x?>", "\x01", "<!DOCTYPE x>", "\"",
                                                                        "<a b='1' b='2'/>"])),
)


def mutate(ops):
    tree = copy.deepcopy(BASE_TREE)
    text_ops = []
    for op in ops:
        els = [e for e in tree.iter() if isinstance(e.tag, str)]
        kind = op[0]
        if kind == "remove_attr":
            e = els[op[1] % len(els)]
            keys = list(e.attrib)
            if keys:
                del e.attrib[keys[op[2] % len(keys)]]
        elif kind == "set_attr":
            e = els[op[1] % len(els)]
            try:
                e.set(op[2], op[3])
            except ValueError:  # text that XML cannot hold (control characters)
                pass
        elif kind == "set_existing":
            e = els[op[1] % len(els)]
            keys = list(e.attrib)
            if keys:
                try:
                    e.set(keys[op[2] % len(keys)], op[3])
                except ValueError:
                    pass
        elif kind == "remove_elem":
            e = els[op[1] % len(els)]
            if e.getparent() is not None:
                e.getparent().remove(e)
        elif kind == "add_elem":
            e = els[op[1] % len(els)]
            etree.SubElement(e, op[2], {op[3]: op[4]})
        elif kind == "duplicate":
            e = els[op[1] % len(els)]
            if e.getparent() is not None:
                e.getparent().append(copy.deepcopy(e))
        elif kind == "move":
            e, target = els[op[1] % len(els)], els[op[2] % len(els)]
            if e.getparent() is not None and e is not target and e not in target.iterancestors():
                e.getparent().remove(e)
                target.append(e)
        elif kind == "nest":
            e = els[op[1] % len(els)]
            for _ in range(op[2]):
                w = etree.SubElement(e, "x")
                e = w
        else:
            text_ops.append(op)
    doc = etree.tostring(tree, encoding="unicode")
    for op in text_ops:
        if op[0] == "truncate":
            doc = doc[:op[1] % (len(doc) + 1)]
        else:
            k = op[1] % (len(doc) + 1)
            doc = doc[:k] + op[2] + doc[k:]
    return doc


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(mutation, min_size=1, max_size=4), st.booleans())
def test_fuzz_mutated_documents(ops, floating):
    doc = mutate(ops)
    try:
        with _quiet():
            m = load(doc, floating=floating)
    except URDFError as e:
        event("refused with URDFError")
        assert str(e).strip(), "URDFError without a message"
        assert len(str(e)) < 2000
    else:
        # whatever loads is a usable model
        event("loaded")
        q = m.neutral()
        tau = rnea(m, q, np.zeros(m.nv), np.zeros(m.nv))
        assert tau.shape == (m.nv,) and np.all(np.isfinite(tau))


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", URDFWarning)
        warnings.simplefilter("error", RuntimeWarning)  # overflow or invalid arithmetic is a bug too

    def __exit__(self, *a):
        return self._w.__exit__(*a)


def test_fuzz_mutator_produces_both_outcomes():
    """The fuzz test is not vacuous: its mutations yield accepted and refused documents."""
    ok = bad = 0
    rng = np.random.default_rng(0)
    for _ in range(300):
        ops = [("set_existing", int(rng.integers(10_000)), int(rng.integers(100)),
                BAD_VALUES[rng.integers(len(BAD_VALUES))])]
        try:
            with _quiet():
                load(mutate(ops))
            ok += 1
        except URDFError:
            bad += 1
    assert ok > 20 and bad > 20


def test_a_missing_file_is_named_once():
    """The doubled "URDFError: … (URDFError: …)" of issue 36: the message says it once."""
    with pytest.raises(URDFError) as e:
        load_urdf("/nonexistent/robot.urdf")
    assert str(e.value) == "/nonexistent/robot.urdf: no such URDF file"
