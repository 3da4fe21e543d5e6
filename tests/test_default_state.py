"""The model's own start (issue 33, items 2 and 4): neutral() inside the limits, MJCF qpos0 as
``model.q_default``, keyframes (``model.keyframes[name]``, ``model.default_state(name)``) against
MuJoCo's ``mj_resetDataKeyframe``, and ``mb.random_configuration`` within the limits."""
from __future__ import annotations

import dataclasses
import glob
import os
import pickle
import warnings

import mujoco
import numpy as np
import pytest

import multibody as mb
from multibody.model.model import enforced_position_limits
from test_urdf_robots import robots_dir

SITE = os.path.dirname(os.path.dirname(mujoco.__file__))
SUITE = os.path.join(SITE, "dm_control", "suite")


def urdf(rel, floating=False):
    share = os.path.dirname(os.path.dirname(robots_dir()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mb.load_urdf(os.path.join(robots_dir(), rel), floating=floating, package_dirs=[share],
                            check_meshes=False)


def mjcf(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.MJCFWarning)
        return mb.load_mjcf(path, unsupported="warn")


ALL_URDFS = sorted(os.path.relpath(p, robots_dir()) for p in glob.glob(os.path.join(robots_dir(), "**", "*.urdf"),
                                                                        recursive=True))


def _quaternion_slots(model):
    out = np.zeros(model.nq, dtype=bool)
    for i in range(model.nb):
        o = {int(mb.JointType.SPHERICAL): 0, int(mb.JointType.FREE): 3}.get(int(model.jtype[i]))
        if o is not None:
            out[model.q_start[i] + o:model.q_start[i] + o + 4] = True
    return out


# --------------------------------------------------------------------------- neutral, q_default
def test_neutral_is_inside_the_limits_of_every_robot():
    checked = 0
    for rel in ALL_URDFS:
        try:
            model = urdf(rel, floating=True)
        except (mb.URDFError, ValueError):
            continue
        lo, hi = enforced_position_limits(model)
        q = model.neutral()
        assert np.all((q >= lo) & (q <= hi)), rel
        np.testing.assert_array_equal(model.q_default, q)          # a URDF starts at neutral
        checked += 1
    assert checked > 20
    panda = urdf("panda_description/urdf/panda.urdf")
    k = panda.joint_names.index("panda_joint4")
    assert panda.q_upper[k] < 0 and panda.neutral()[k] == panda.q_upper[k]   # zero is outside: nearest bound
    assert np.count_nonzero(panda.neutral()) == 1


def test_neutral_keeps_quaternions_whole_and_ignores_equal_bounds():
    m = mb.models.singlebody()
    m = dataclasses.replace(m, q_lower=np.full(7, 0.2), q_upper=np.full(7, 0.5))   # translation box above 0
    np.testing.assert_array_equal(m.neutral(), [0.2, 0.2, 0.2, 1, 0, 0, 0])
    p = dataclasses.replace(mb.models.planar(2), q_lower=[0.3, 0.3], q_upper=[0.3, 1.0])  # equal: no limit
    np.testing.assert_array_equal(p.neutral(), [0.0, 0.3])


def test_q_default_is_mujocos_qpos0():
    """Every dm_control suite file the loader takes (what it refuses is tested in test_mjcf)."""
    loaded = []
    for path in sorted(glob.glob(os.path.join(SUITE, "*.xml"))):
        try:
            model = mjcf(path)
        except mb.MJCFError:
            continue
        mj = mujoco.MjModel.from_xml_path(path)
        q, qd = mb.mjcf.from_mujoco_state(model, mj.qpos0, np.zeros(mj.nv))
        np.testing.assert_array_equal(model.q_default, q)
        np.testing.assert_array_equal(model.default_state()[0], q)
        np.testing.assert_array_equal(model.default_state()[1], qd)
        loaded.append(os.path.basename(path))
        if loaded[-1] == "humanoid.xml":
            assert model.q_default[2] == 1.5 and model.neutral()[2] == 0.0    # the torso where the file put it
    assert {"humanoid.xml", "quadruped.xml", "cheetah.xml", "walker.xml"} <= set(loaded), loaded


# --------------------------------------------------------------------------- keyframes
KEYS_XML = """<mujoco>
  <worldbody>
    <body name="base" pos="0 0 1"><freejoint name="root"/><geom size="0.1" mass="2"/>
      <body name="arm" pos="0.2 0 0"><joint name="ball" type="ball"/><geom size="0.05" mass="1"/>
        <body name="hand" pos="0 0 -0.3"><joint name="elbow" axis="0 1 0" range="-1 2"/>
          <geom size="0.04" mass="0.5"/></body></body></body>
  </worldbody>
  <actuator><motor joint="elbow"/><position joint="elbow" kp="10"/>
    <general joint="elbow" dyntype="integrator"/></actuator>
  <keyframe>
    <key name="home" time="0.25" qpos="0.1 0.2 1.3  0.8 0.36 0 0.48  0.5 0.5 0.5 0.5  1.1"
         qvel="1 2 3  0.4 0.5 0.6  -1 0 2  0.7" ctrl="0.5 0.2 -1" act="0.3"/>
    <key qpos="0 0 2 1 0 0 0  1 0 0 0  -0.5"/>
  </keyframe>
</mujoco>"""


def _mujoco_key(xml_or_path, key):
    mj = (mujoco.MjModel.from_xml_string(xml_or_path) if "<" in xml_or_path
          else mujoco.MjModel.from_xml_path(xml_or_path))
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, key)
    return mj, data


@pytest.mark.parametrize("source", ["inline", "mujoco/testdata/model.xml",
                                    "dm_control/mujoco/testing/assets/cartpole.xml"])
def test_keyframes_agree_with_mj_resetDataKeyframe(source):
    xml = KEYS_XML if source == "inline" else os.path.join(SITE, source)
    model = mb.load_mjcf(xml) if source == "inline" else mjcf(xml)
    assert len(model.keyframes.records) >= 1
    for k, key in enumerate(model.keyframes.records):
        mj, data = _mujoco_key(xml, k)
        q, qd = mb.mjcf.from_mujoco_state(model, data.qpos, data.qvel)
        np.testing.assert_allclose(key.q, q, atol=1e-15, rtol=0)
        np.testing.assert_allclose(key.qd, qd, atol=1e-14, rtol=0)
        np.testing.assert_array_equal(key.ctrl, data.ctrl)
        np.testing.assert_array_equal(key.act, data.act)
        assert key.time == data.time
        if key.name:
            assert model.keyframes[key.name] is key
            q2, qd2 = model.default_state(key.name)
            np.testing.assert_array_equal(q2, key.q)
            np.testing.assert_array_equal(qd2, key.qd)
    if source == "inline":
        home = model.keyframes["home"]
        assert home.time == 0.25 and home.ctrl.tolist() == [0.5, 0.2, -1.0] and home.act.tolist() == [0.3]
        assert list(model.keyframes) == ["home"] and model.keyframes[1].name == ""    # the unnamed one by index
        # a free joint's qvel [v (world); ω (body)] → ours [ω; v (body)]
        R = mb.frame_placement(model, home.q, "base")[0]
        np.testing.assert_allclose(home.qd[:3], [0.4, 0.5, 0.6])
        np.testing.assert_allclose(R @ home.qd[3:6], [1, 2, 3], atol=1e-12)


def test_keyframe_errors_name_the_key_and_the_line():
    """(libxml2 gives an element the line its start tag ends on: 12 for the two-line "home")"""
    short = KEYS_XML.replace('qpos="0 0 2 1 0 0 0  1 0 0 0  -0.5"', 'qpos="0 0 2 1 0 0 0  1 0 0 0"')
    with pytest.raises(mb.MJCFError, match=r"<key> #1 \(line 13\): qpos has 11 number\(s\), the model has 12 \(nq\)"):
        mb.load_mjcf(short)
    with pytest.raises(mb.MJCFError, match=r"<key> 'home' \(line 12\): qvel has 9 number\(s\), the model has 10"):
        mb.load_mjcf(KEYS_XML.replace('qvel="1 2 3', 'qvel="2 3'))
    with pytest.raises(mb.MJCFError, match=r"keyframe 0: invalid ctrl size.*'home'.*\(<key> at line 12\)"):
        mb.load_mjcf(KEYS_XML.replace('ctrl="0.5 0.2 -1"', 'ctrl="0.5 0.2 -1 4"'))
    model = mb.load_mjcf(KEYS_XML)
    with pytest.raises(ValueError, match=r"keyframe: no keyframe named 'hom'; close matches \['home'\]"):
        model.default_state("hom")
    with pytest.raises(KeyError, match="out of range"):
        model.keyframes[2]
    with pytest.raises(TypeError, match="keyframe: expected a keyframe name or index"):
        model.default_state(1.5)
    with pytest.raises(ValueError, match=r"qpos0: expected 12 finite numbers"):
        dataclasses.replace(model, qpos0=np.zeros(11))


def test_a_model_with_keyframes_pickles_and_replaces():
    model = mb.load_mjcf(KEYS_XML)
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.keyframes["home"].q, model.keyframes["home"].q)
    np.testing.assert_array_equal(back.q_default, model.q_default)
    heavy = model.with_gravity([0, 0, -20])
    assert heavy.keyframes["home"] is model.keyframes["home"]
    assert not model.keyframes["home"].q.flags.writeable


# --------------------------------------------------------------------------- random configurations
@pytest.mark.parametrize("rel", ["panda_description/urdf/panda.urdf", "talos_data/robots/talos_full_v2.urdf",
                                 "anymal_b_simple_description/robots/anymal.urdf",
                                 "ur_description/urdf/ur5_robot.urdf"])
def test_random_configurations_fill_the_limits(rel):
    model = urdf(rel, floating=True)
    Q = mb.random_configuration(model, np.random.default_rng(0), size=4000)
    lo, hi = enforced_position_limits(model)
    quat = _quaternion_slots(model)
    free_translation = np.zeros(model.nq, dtype=bool)
    free_translation[:3] = True                                          # the floating base
    lo_d = np.where(np.isfinite(lo), lo, np.where(free_translation, -1.0, -np.pi))
    hi_d = np.where(np.isfinite(hi), hi, np.where(free_translation, 1.0, np.pi))
    plain = ~quat
    assert np.all(Q[:, plain] >= lo_d[plain]) and np.all(Q[:, plain] <= hi_d[plain])
    # uniform: each coordinate reaches within 1 % of both ends and its mean is the midpoint (±3 %)
    span = hi_d[plain] - lo_d[plain]
    assert np.all(Q[:, plain].min(0) - lo_d[plain] < 0.01 * span)
    assert np.all(hi_d[plain] - Q[:, plain].max(0) < 0.01 * span)
    assert np.all(np.abs(Q[:, plain].mean(0) - (lo_d[plain] + hi_d[plain]) / 2) < 0.03 * span)
    quats = Q[:, quat].reshape(4000, -1, 4)
    np.testing.assert_allclose(np.linalg.norm(quats, axis=-1), 1.0, atol=1e-14)
    # uniform rotations: E[q qᵀ] = I/4 for a quaternion uniform on S³
    np.testing.assert_allclose(np.einsum("nki,nkj->kij", quats, quats)[0] / 4000, np.eye(4) / 4, atol=0.02)


def test_random_configuration_defaults_and_arguments():
    m = dataclasses.replace(mb.models.planar(3), q_lower=[-np.inf, 1.0, -np.inf], q_upper=[np.inf, np.inf, -2.0])
    Q = mb.random_configuration(m, 4, size=(50, 2))
    assert Q.shape == (50, 2, 3)
    assert Q[..., 0].min() >= -np.pi and Q[..., 0].max() <= np.pi                # unbounded angle: [−π, π]
    assert Q[..., 1].min() >= 1.0 and Q[..., 1].max() <= 1.0 + 2 * np.pi          # one bound: that bound + 2π
    assert Q[..., 2].min() >= -2.0 - 2 * np.pi and Q[..., 2].max() <= -2.0
    np.testing.assert_array_equal(mb.random_configuration(m, 4), mb.random_configuration(m, np.random.default_rng(4)))
    free = mb.models.singlebody()
    q = mb.random_configuration(free, 0, size=500, translation=(2.0, 3.0))
    assert q[:, :3].min() >= 2.0 and q[:, :3].max() <= 3.0
    with pytest.raises(ValueError, match=r"translation: expected \(lower, upper\) in metres with lower < upper"):
        mb.random_configuration(free, 0, translation=(1.0, -1.0))
    with pytest.raises(TypeError, match="rng: expected a numpy.random.Generator"):
        mb.random_configuration(free, "seed")
    huge = dataclasses.replace(mb.models.planar(1), q_lower=[-1.7e308], q_upper=[1.7e308])
    with pytest.raises(ValueError, match="variable 0 has limits .* too wide"):
        mb.random_configuration(huge, 0)
