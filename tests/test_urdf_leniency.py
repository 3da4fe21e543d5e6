"""URDF as the peers read it: one test per leniency case of the loader (see multibody.model.urdf).

Lenient (loads, with a URDFWarning naming element and line where it is an oddity) where urdfdom or
Drake give the document a reading; the loaded dynamics are checked against the plain document or
against Pinocchio.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pinocchio as pin
import pytest

from multibody.dynamics import aba
from multibody.dynamics import crba
from multibody.dynamics import rnea
from multibody.model.urdf import URDFError, URDFWarning, load_urdf

INERTIA = '<inertia ixx="{a}" ixy="0" ixz="0" iyy="{b}" iyz="0" izz="{c}"/>'

PLAIN = """<robot name="arm">
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.1" rpy="0.1 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/></joint>
  <link name="l1"><inertial><origin xyz="0.2 0 0"/><mass value="1.2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial>
    <collision><geometry><box size="0.4 0.05 0.05"/></geometry></collision></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/></joint>
  <link name="l2"><inertial><origin xyz="0.15 0 0"/><mass value="0.7"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
</robot>
"""


def line_of(doc, needle):
    return doc[:doc.index(needle)].count("\n") + 1


def same_dynamics(m1, m2, seed=0):
    """M(q) and RNEA(q, q̇, q̈) agree at random states."""
    assert m1.nq == m2.nq and m1.nv == m2.nv and m1.parent.tolist() == m2.parent.tolist()
    rng = np.random.default_rng(seed)
    for _ in range(5):
        q = rng.normal(size=m1.nq)
        if m1.nq > m1.nv:  # a free root: normalise its quaternion q[3:7]
            q[3:7] /= np.linalg.norm(q[3:7])
        qd, qdd = rng.normal(size=(2, m1.nv))
        assert np.allclose(crba(m1, q), crba(m2, q), rtol=1e-14, atol=1e-14)
        assert np.allclose(rnea(m1, q, qd, qdd), rnea(m2, q, qd, qdd), rtol=1e-14, atol=1e-14)


def loads_quietly(doc, **kw):
    """Load with URDFWarning turned into an error: the case must not warn."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", URDFWarning)
        return load_urdf(doc, check_meshes=False, **kw)


def test_foreign_namespace_elements_and_attributes_are_ignored_everywhere():
    doc = PLAIN.replace('<robot name="arm">', '<robot name="arm" xmlns:drake="http://drake.mit.edu" '
                                              'xmlns:gz="http://gazebosim.org" gz:version="2">')
    doc = doc.replace('<limit lower="-2"', '<drake:rotor_inertia value="1e3"/><limit drake:acceleration="5" lower="-2"')
    doc = doc.replace('<geometry><box size="0.4 0.05 0.05"/></geometry>',
                      '<geometry><box size="0.4 0.05 0.05" drake:x="1"/><drake:capsule radius="1" length="2"/>'
                      '</geometry><drake:proximity_properties><drake:mu_static value="0.5"/>'
                      '</drake:proximity_properties>')
    doc = doc.replace("</robot>", '<drake:joint name="bad" type="ball"><parent link="l2"/><child link="l1"/>'
                                  '</drake:joint><gz:plugin name="p"/></robot>')
    m = loads_quietly(doc)
    same_dynamics(m, loads_quietly(PLAIN))
    (g,) = m.geometries  # the <drake:capsule> beside the box in <geometry> is not a second shape
    assert g.kind == "box" and g.size == (0.4, 0.05, 0.05)


def test_undeclared_namespace_prefix_loads_with_a_warning():
    doc = PLAIN.replace('<limit lower="-2"', '<limit drake:acceleration="5" lower="-2"')
    doc = doc.replace("</robot>", '<drake:collision_filter_group name="g"/></robot>')
    with pytest.warns(URDFWarning, match=rf"line {line_of(doc, 'drake:')}.*Namespace prefix drake.*ignored"):
        m = load_urdf(doc)
    same_dynamics(m, loads_quietly(PLAIN))
    # an undeclared prefix does not excuse real malformation: that error is the one reported
    with pytest.raises(URDFError, match=r"malformed XML \(line \d+\): Opening and ending tag mismatch"):
        load_urdf(doc.replace("</robot>", "<b></robot>"))


def test_default_xmlns_on_robot_is_accepted():
    doc = PLAIN.replace('<robot name="arm">', '<robot xmlns="http://www.ros.org" name="arm">')
    m = loads_quietly(doc)
    assert m.body_names == ("l1", "l2") and len(m.geometries) == 1
    same_dynamics(m, loads_quietly(PLAIN))


def test_undeclared_world_parent_is_the_fixed_base():
    doc = PLAIN.replace('<link name="base"/>', '').replace('<parent link="base"/>', '<parent link="world"/>')
    ln = line_of(doc, 'link="world"')
    with pytest.warns(URDFWarning, match=rf"<parent> \(line {ln}\): parent link "
                                         r"'world' is not declared; it is taken as the fixed world"):
        m = load_urdf(doc)
    assert m.parent.tolist() == [-1, 0] and m.frame("world").body == -1
    same_dynamics(m, loads_quietly(PLAIN))
    # floating=True puts the free joint on the (massless) world link, exactly as a declared one would
    with pytest.warns(URDFWarning):
        mf = load_urdf(doc, floating=True)
    declared = PLAIN.replace('<link name="base"/>', '<link name="world"/>').replace('"base"', '"world"')
    same_dynamics(mf, loads_quietly(declared, floating=True))


def test_revolute_and_prismatic_without_limit_load_unbounded_with_a_warning():
    doc = PLAIN.replace('<limit lower="-2" upper="2" effort="10" velocity="3"/></joint>\n  <link name="l2">',
                        '</joint>\n  <link name="l2">').replace('type="revolute"><parent link="l1"/>',
                                                                 'type="prismatic"><parent link="l1"/>')
    ln = line_of(doc, 'name="j2"')
    with pytest.warns(URDFWarning, match=rf"<joint name='j2'> \(line {ln}\): "
                                         r"prismatic joint without <limit>: loaded with unbounded"):
        m = load_urdf(doc)
    assert m.q_lower.tolist() == [-2, -np.inf] and m.q_upper.tolist() == [2, np.inf]
    assert m.velocity_limit[1] == np.inf and m.effort_limit[1] == np.inf


def test_massless_link_keeps_its_inertia_and_matches_pinocchio():
    """A zero-mass link with rotational inertia (a rotor) is kept, as Pinocchio keeps it; M, RNEA
    and ABA of the chain agree with Pinocchio's to 1e-12."""
    doc = PLAIN.replace('<mass value="0.7"/>', '<mass value="0"/>')
    m = loads_quietly(doc)
    assert m.mass[1] == 0 and np.allclose(m.inertia_com[1], np.diag([0.005, 0.01, 0.01]), rtol=0, atol=1e-15)
    pm = pin.buildModelFromXML(doc)
    pd = pm.createData()
    assert pm.inertias[2].mass == 0 and np.allclose(pm.inertias[2].inertia, m.inertia_com[1])
    rng = np.random.default_rng(1)
    for _ in range(10):
        q, qd, qdd, tau = rng.normal(size=(4, 2))
        M = crba(m, q)
        Mp = pin.crba(pm, pd, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert np.allclose(M, Mp, rtol=1e-12, atol=1e-14)
        assert np.allclose(rnea(m, q, qd, qdd), pin.rnea(pm, pd, q, qd, qdd), rtol=1e-12, atol=1e-14)
        assert np.allclose(aba(m, q, qd, tau), pin.aba(pm, pd, q, qd, tau), rtol=1e-12, atol=1e-12)
    # the inertia is what makes the last joint's inertia non-zero: zeroing it would make M singular
    assert crba(m, np.zeros(2))[1, 1] == pytest.approx(0.01, rel=1e-12)


def test_missing_mesh_is_reported_once(tmp_path):
    doc = PLAIN.replace('<box size="0.4 0.05 0.05"/>', '<mesh filename="package://nopkg/meshes/x.stl"/>')
    with pytest.raises(URDFError) as ei:
        load_urdf(doc, package_dirs=[tmp_path], check_meshes=True)
    msg = str(ei.value)
    assert re.fullmatch(rf"<mesh> \(line {line_of(doc, '<mesh')}\): mesh 'package://nopkg/meshes/x.stl' not "
                        r"found in package_dirs \[.*\]", msg), msg
    assert msg.count("<mesh>") == 1 and "URDFError" not in msg and "cannot be looked up" not in msg


def test_package_uri_resolves_through_package_xml_name(tmp_path):
    folder = tmp_path / "src" / "arm_description-main"  # folder name ≠ package name
    (folder / "meshes").mkdir(parents=True)
    (folder / "meshes" / "l1.stl").write_text("solid l1\nendsolid l1\n")
    (folder / "package.xml").write_text('<?xml version="1.0"?>\n<package format="3">\n'
                                        '  <name>arm_description</name>\n  <version>1.0.0</version>\n</package>\n')
    doc = PLAIN.replace('<box size="0.4 0.05 0.05"/>', '<mesh filename="package://arm_description/meshes/l1.stl"/>')
    for dirs in ([tmp_path / "src"], [folder]):  # a folder holding packages, or the package itself
        m = loads_quietly(doc, package_dirs=dirs)
        assert m.geometries[0].mesh == str((folder / "meshes" / "l1.stl").resolve())
    with pytest.raises(URDFError, match="not found"):  # only the declared name resolves
        load_urdf(doc.replace("arm_description", "arm_descr"), package_dirs=[tmp_path / "src"], check_meshes=True)


def test_repeated_inertial_and_origin_take_the_first_with_a_warning():
    """urdfdom and Drake (TinyXML FirstChildElement) read the first; so do we, and say so."""
    second = ('<inertial><origin xyz="9 9 9"/><mass value="99"/>'
              '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>\n  <joint name="j2"')
    doc = PLAIN.replace('</link>\n  <joint name="j2"', second, 1)
    ln = line_of(doc, 'xyz="9 9 9"')
    with pytest.warns(URDFWarning, match=rf"<inertial> \(line {ln}\): second <inertial> "
                                         r"in <link name='l1'> .* ignored; the first \(line \d+\) is used"):
        m = load_urdf(doc)
    same_dynamics(m, loads_quietly(PLAIN))
    doc = PLAIN.replace('<origin xyz="0.4 0 0"/>', '<origin xyz="0.4 0 0"/><origin xyz="5 5 5" rpy="1 1 1"/>')
    with pytest.warns(URDFWarning, match=rf"<origin> \(line {line_of(doc, '5 5 5')}\): second <origin> in "
                                         r"<joint name='j2'>.*ignored"):
        m = load_urdf(doc)
    same_dynamics(m, loads_quietly(PLAIN))
    # other single-valued elements given twice change the kinematics ambiguously: refused
    doc = PLAIN.replace('<axis xyz="0 1 0"/>', '<axis xyz="0 1 0"/><axis xyz="1 0 0"/>')
    ln = line_of(doc, 'xyz="1 0 0"')
    with pytest.raises(URDFError, match=rf"<axis> \(line {ln}\): element <axis> given "
                                        "more than once"):
        load_urdf(doc)


def test_massless_body_loads_and_only_forward_dynamics_refuses_it_naming_the_body():
    """romeo's case: a link without <inertial> at the end of a chain.  The model loads (Pinocchio's
    does too); M is singular, so what needs M⁻¹ refuses, saying which body; the rest is defined."""
    doc = PLAIN.replace('''<inertial><origin xyz="0.15 0 0"/><mass value="0.7"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>''', "")
    m = loads_quietly(doc)
    assert m.body_names == ("l1", "l2") and m.mass[1] == 0
    q, qd = np.array([0.3, -0.4]), np.array([0.5, 1.0])
    assert np.linalg.matrix_rank(crba(m, q)) == 1 and np.all(np.isfinite(rnea(m, q, qd, qd)))
    with pytest.raises(ValueError, match=r"^model: singular joint-space inertia: the articulated inertia at the "
                                         r"joint of body 'l2' \(model.body_names\[1\]\) is singular"):
        aba(m, q, qd, np.zeros(2))
    with pytest.raises(ValueError, match=r"of body 'l2' "):                                 # batched, on workers
        aba(m, np.tile(q, (64, 1)), np.tile(qd, (64, 1)), np.zeros((64, 2)))
    from multibody.dynamics import fd_crb                                               # no body to name
    with pytest.raises(ValueError, match=r"^model: singular joint-space inertia \(a massless body"):
        fd_crb(m, q, qd, np.zeros(2))
