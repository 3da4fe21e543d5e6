"""MJCF sensors (``model.sensors``, ``mb.sensors``, ``traj.sensordata``) against MuJoCo on the same files.

Each sensor at random states of dm_control's suite files and of a file with every kind kept (all
object and reference frame types, a body welded into its parent, a ball joint, cutoffs), to
1e-10; along a run without contact, our ``traj.sensordata`` against MuJoCo's sensordata replayed
at the recorded states; touch and force sensors at rest on a floor, each model at its own rest.
"""
from __future__ import annotations

import os
import warnings

import dm_control
import mujoco
import numpy as np
import pytest

import multibody as mb

SUITE = os.path.join(os.path.dirname(dm_control.__file__), "suite")
TOL = 1e-10
SUITE_FILES = ("quadruped", "humanoid", "dog", "finger", "swimmer", "cheetah", "walker", "hopper", "fish")

EVERY = """<mujoco model="every sensor">
  <option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <site name="world_site" pos="0.1 0.2 0.3" quat="0.9 0.1 0.3 0.2"/>
    <camera name="world_cam" pos="1 0 1" euler="0.3 0.2 0.1"/>
    <body name="base" pos="0 0 1">
      <freejoint name="root"/>
      <geom name="torso" type="box" size=".2 .1 .05" mass="3" pos=".01 .02 0" euler="0.1 0 0.2"/>
      <site name="imu" pos=".05 -.03 .02" euler="0.3 -0.2 0.5"/>
      <camera name="cam" pos="0 0.1 0" euler="0.1 0.2 0.3"/>
      <body name="arm" pos=".2 0 0" euler="0.2 0.1 0">
        <joint name="shoulder" type="hinge" axis="0 1 0.2" pos="0 0 .01" ref="0.2"/>
        <joint name="twist" type="hinge" axis="1 0 0"/>
        <geom name="upper" type="capsule" fromto="0 0 0 .3 0 0" size=".03" mass=".7"/>
        <site name="elbow_site" pos=".3 0 0" euler="0.4 0 0.1"/>
        <body name="hand" pos=".3 0 0" euler="0 0.3 0">
          <geom name="palm" type="sphere" size=".04" pos=".02 0 0" mass=".3"/>
          <site name="palm_site" pos=".04 .01 0" euler="0.1 0.5 0"/>
          <body name="finger" pos=".05 0 0">
            <joint name="knuckle" type="ball"/>
            <geom name="tip" type="ellipsoid" size=".02 .03 .04" pos=".03 0 0" mass=".1"/>
            <site name="tip_site" pos=".06 0 0"/>
          </body>
        </body>
      </body>
      <body name="leg" pos="-.2 0 0">
        <joint name="hip" type="slide" axis="0 0.3 1"/>
        <geom name="shin" type="cylinder" size=".03 .1" mass=".5" pos="0 0 -.1"/>
        <site name="foot" type="box" size=".05 .05 .05" pos="0 0 -.2"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="m_shoulder" joint="shoulder" gear="2"/>
    <position name="p_hip" joint="hip" kp="30" ctrlrange="-0.5 0.5" forcerange="-4 4"/>
  </actuator>
  <sensor>
    <jointpos name="jp" joint="shoulder"/>
    <jointvel name="jv" joint="hip"/>
    <ballquat name="bq" joint="knuckle"/>
    <ballangvel name="bav" joint="knuckle"/>
    <actuatorfrc name="af" actuator="p_hip"/>
    <framepos name="fp_site" objtype="site" objname="tip_site"/>
    <framepos name="fp_body" objtype="body" objname="hand"/>
    <framepos name="fp_xbody" objtype="xbody" objname="hand" reftype="site" refname="imu"/>
    <framepos name="fp_geom" objtype="geom" objname="tip" reftype="camera" refname="cam"/>
    <framepos name="fp_cam" objtype="camera" objname="world_cam" reftype="body" refname="arm"/>
    <framequat name="fq" objtype="site" objname="palm_site"/>
    <framequat name="fq_ref" objtype="body" objname="finger" reftype="xbody" refname="arm"/>
    <framexaxis name="fx" objtype="geom" objname="upper"/>
    <frameyaxis name="fy" objtype="site" objname="palm_site" reftype="site" refname="world_site"/>
    <framezaxis name="fz" objtype="xbody" objname="finger" reftype="geom" refname="torso"/>
    <framelinvel name="flv" objtype="site" objname="tip_site"/>
    <framelinvel name="flv_ref" objtype="site" objname="tip_site" reftype="site" refname="imu"/>
    <frameangvel name="fav" objtype="body" objname="finger"/>
    <frameangvel name="fav_ref" objtype="geom" objname="tip" reftype="xbody" refname="arm"/>
    <gyro name="gyro" site="palm_site"/>
    <velocimeter name="vel" site="tip_site"/>
    <accelerometer name="acc" site="tip_site"/>
    <accelerometer name="acc_world" site="world_site"/>
    <subtreecom name="com_all" body="world"/>
    <subtreecom name="com_hand" body="hand"/>
    <subtreelinvel name="lv_arm" body="arm"/>
    <subtreelinvel name="lv_hand" body="hand"/>
    <subtreeangmom name="am_base" body="base"/>
    <subtreeangmom name="am_hand" body="hand"/>
    <force name="f_palm" site="palm_site"/>
    <torque name="t_palm" site="palm_site"/>
    <force name="f_elbow" site="elbow_site"/>
    <torque name="t_tip" site="tip_site"/>
    <force name="f_imu" site="imu"/>
    <gyro name="gyro_cut" site="tip_site" cutoff="0.5"/>
    <touch name="touch_foot" site="foot" cutoff="3"/>
  </sensor>
</mujoco>
"""

TABLE = """<mujoco model="table on touch pads">
  <worldbody>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <body name="top" pos="0 0 .12">
      <freejoint/>
      <geom name="slab" type="box" size=".2 .15 .02" mass="4" contype="0" conaffinity="0"/>
      <body name="foot_fl" pos=".15 .1 -.08"><geom name="pad_fl" type="sphere" size=".02" mass=".1"/>
        <site name="zone_fl" type="sphere" size=".03"/>
        <site name="inside_pad" type="sphere" size=".015"/>
        <site name="under_floor" type="box" size=".01 .01 .01" pos="0 0 -.08"/></body>
      <body name="foot_fr" pos=".15 -.1 -.08"><geom name="pad_fr" type="sphere" size=".02" mass=".1"/>
        <site name="zone_fr" type="box" size=".03 .03 .03"/></body>
      <body name="foot_bl" pos="-.15 .1 -.08"><geom name="pad_bl" type="sphere" size=".02" mass=".1"/>
        <site name="zone_bl" type="capsule" size=".025 .01"/></body>
      <body name="foot_br" pos="-.15 -.1 -.08"><geom name="pad_br" type="sphere" size=".02" mass=".1"/>
        <site name="zone_br" type="ellipsoid" size=".03 .03 .04"/></body>
    </body>
  </worldbody>
  <sensor>
    <touch name="touch_fl" site="zone_fl"/> <touch name="touch_fr" site="zone_fr"/>
    <touch name="touch_bl" site="zone_bl"/> <touch name="touch_br" site="zone_br"/>
    <touch name="touch_inside_pad" site="inside_pad"/> <touch name="touch_under_floor" site="under_floor"/>
    <force name="force_fl" site="zone_fl"/>
    <torque name="torque_fl" site="zone_fl"/>
  </sensor>
</mujoco>
"""


def load(source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mb.load_mjcf(source)
    mj = mujoco.MjModel.from_xml_path(source) if "<" not in source else mujoco.MjModel.from_xml_string(source)
    return m, mj, mujoco.MjData(mj)


def theirs(mj, d, sensor):
    i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_SENSOR, sensor.name)
    if i < 0:   # an unnamed sensor: "sensor<i>"
        i = int(sensor.name.removeprefix("sensor"))
    a = mj.sensor_adr[i]
    return d.sensordata[a:a + sensor.dim]


def difference(sensor, ref, ours):
    e = np.max(np.abs(ref - ours))
    if sensor.datatype == "quaternion":   # q and −q: one rotation (ours has w ≥ 0)
        e = min(e, np.max(np.abs(ref + ours)))
    return e


def random_state(m, rng):
    q = mb.random_configuration(m, rng)
    return q, rng.standard_normal(m.nv)


def compare_at(m, mj, d, q, qd, ctrl=None):
    """MuJoCo's sensordata at (q, q̇) without contact, and ours with MuJoCo's q̈: worst difference per sensor."""
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    qpos, qvel = mb.mjcf.to_mujoco_state(m, q, qd)
    d.qpos[:], d.qvel[:] = qpos, qvel
    if ctrl is not None:
        d.ctrl[:] = ctrl
    mujoco.mj_forward(mj, d)
    _, _, qdd = mb.mjcf.from_mujoco_state(m, d.qpos, d.qvel, d.qacc)
    ours = mb.sensors(m, q, qd, qdd, ctrl=ctrl)
    return {s.name: difference(s, theirs(mj, d, s), ours[s.address:s.address + s.dim]) for s in m.sensors}


@pytest.mark.parametrize("name", SUITE_FILES)
def test_suite_sensors_match_mujoco(name):
    m, mj, d = load(os.path.join(SUITE, name + ".xml"))
    assert m.sensors, name
    rng = np.random.default_rng(7)
    ctrl = np.zeros(len(m.actuators)) if any(s.type == "actuatorfrc" for s in m.sensors) else None
    for _ in range(3):
        q, qd = random_state(m, rng)
        err = compare_at(m, mj, d, q, qd, ctrl)
        assert max(err.values()) < TOL, {k: v for k, v in err.items() if v >= TOL}


def test_every_kind_matches_mujoco():
    m, mj, d = load(EVERY)
    assert [s.name for s in m.sensors] == [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_SENSOR, i)
                                           for i in range(mj.nsensor)]
    assert [s.address for s in m.sensors] == list(mj.sensor_adr) and sum(s.dim for s in m.sensors) == mj.nsensordata
    kinds = {s.type for s in m.sensors}
    assert kinds >= {"jointpos", "jointvel", "ballquat", "ballangvel", "actuatorfrc", "framepos", "framequat",
                     "framexaxis", "frameyaxis", "framezaxis", "framelinvel", "frameangvel", "gyro", "velocimeter",
                     "accelerometer", "subtreecom", "subtreelinvel", "subtreeangmom", "force", "torque", "touch"}
    rng = np.random.default_rng(3)
    for _ in range(4):
        q, qd = random_state(m, rng)
        err = compare_at(m, mj, d, q, 2.0 * qd, ctrl=rng.standard_normal(mj.nu))
        assert max(err.values()) < TOL, {k: v for k, v in err.items() if v >= TOL}


def test_cutoff_as_mujoco():
    m, mj, d = load(EVERY)
    s = {x.name: x for x in m.sensors}
    assert s["gyro_cut"].cutoff == 0.5 and s["touch_foot"].datatype == "positive" and s["fq"].datatype == "quaternion"
    q, qd = m.q_default, np.full(m.nv, 5.0)
    out = mb.sensors(m, q, qd, np.zeros(m.nv), ctrl=np.zeros(2))
    g = out[s["gyro_cut"].address:s["gyro_cut"].address + 3]
    raw = out[s["gyro"].address:s["gyro"].address + 3]
    assert np.max(np.abs(g)) == 0.5 and np.max(np.abs(raw)) > 0.5   # clipped on both sides
    err = compare_at(m, mj, d, q, qd, ctrl=np.zeros(2))
    assert err["gyro_cut"] < TOL


def test_run_sensordata_against_mujoco_replayed():
    """Humanoid, 0.3 s from a random velocity without contact (its limits off in both): our recorded
    sensordata against MuJoCo's at each recorded state, with our q̈ (it equals MuJoCo's qacc here)."""
    m, mj, d = load(os.path.join(SUITE, "humanoid.xml"))
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
    qd0 = np.random.default_rng(1).standard_normal(m.nv) * 0.5
    # rk4 by name: the file's own default, semi_implicit, records the q̈ of its implicit damping step
    traj = mb.simulate(m, m.q_default, qd0, 0.3, dt=1e-3, contact="off", limits="off", integrator="rk4")
    S = traj.sensordata
    assert S.shape == (len(traj.t), sum(s.dim for s in m.sensors)) == (301, mj.nsensordata)
    qpos, qvel, qacc = mb.mjcf.to_mujoco_state(m, traj.q, traj.qd, traj.qdd)
    worst, worst_qacc = 0.0, 0.0
    for n in range(0, len(traj.t), 10):
        d.qpos[:], d.qvel[:] = qpos[n], qvel[n]
        mujoco.mj_forward(mj, d)
        worst_qacc = max(worst_qacc, np.max(np.abs(d.qacc - qacc[n])))
        d.qacc[:] = qacc[n]                 # MuJoCo's acceleration sensors at our q̈ (the same to 1e-12)
        mujoco.mj_rnePostConstraint(mj, d)
        mujoco.mj_sensorAcc(mj, d)
        for s in m.sensors:
            worst = max(worst, difference(s, theirs(mj, d, s), S[n, s.address:s.address + s.dim]))
    assert worst_qacc < 1e-9 and worst < TOL, (worst_qacc, worst)
    s = next(x for x in m.sensors if x.type == "gyro")
    np.testing.assert_array_equal(traj.sensor(s.name), S[:, s.address:s.address + 3])
    np.testing.assert_array_equal(traj[0.1:0.2].sensordata, S[100:201])


def test_touch_and_force_at_rest():
    """A slab on four pads, each model at its own rest (ours: the compliant law, 2 s; MuJoCo: its soft
    contact, 2 s): every pad's touch carries a quarter of the weight in both, to 1e-6 relative — the
    two contact laws settle to the same static forces (a symmetric support), and what is left is each
    one's residual motion.  A zone inside the pad (the contact point outside it, the ray pointing
    into the floor) reads 0 in both; a zone under the floor on that ray reads the pad's force."""
    m, mj, d = load(TABLE)
    traj = mb.simulate(m, None, None, 2.0)
    assert traj.contact == "compliant" and np.abs(traj.qd[-1]).max() < 1e-9
    ours = traj.sensordata[-1]
    for _ in range(1000):
        mujoco.mj_step(mj, d)
    weight = float(np.sum(m.mass)) * 9.81
    s = {x.name: x for x in m.sensors}
    pads = [ours[s[f"touch_{k}"].address] for k in ("fl", "fr", "bl", "br")]
    np.testing.assert_allclose(pads, weight / 4, rtol=1e-6)
    for x in m.sensors:
        ref = theirs(mj, d, x)
        np.testing.assert_allclose(ours[x.address:x.address + x.dim], ref, rtol=1e-6, atol=1e-6 * weight,
                                   err_msg=x.name)
    assert ours[s["touch_inside_pad"].address] == 0.0
    assert ours[s["touch_under_floor"].address] == pytest.approx(weight / 4, rel=1e-6)
    f = ours[s["force_fl"].address:s["force_fl"].address + 3]   # the slab holds the pad down on its contact
    np.testing.assert_allclose(f, [0, 0, 0.1 * 9.81 - weight / 4], atol=1e-6 * weight)
    assert np.all(traj.sensor("touch_fl")[0] == 0)   # dropped from above the floor: no touch at t = 0
    assert traj[1.5:].sensor("touch_fl")[-1, 0] == ours[s["touch_fl"].address]   # a slice re-collides too


def test_a_saved_run_reads_its_sensors_again(tmp_path):
    m, _, _ = load(TABLE)
    traj = mb.simulate(m, None, None, 0.5)
    path = tmp_path / "run.npz"
    traj.save(path)
    again = mb.Trajectory.load(path, m)   # no contact geoms stored: the model's own, found by the slots
    np.testing.assert_array_equal(again.sensordata, traj.sensordata)
    assert again.sensordata[-1, 0] > 0
    with pytest.raises(ValueError, match="no model to read its sensors"):
        _ = mb.Trajectory.load(path).sensordata


def test_model_sensors_records_and_skipped_types():
    xml = """<mujoco><worldbody><body name="b"><joint name="j"/><geom size=".1"/><site name="s"/></body>
    </worldbody><sensor>
      <jointpos name="p" joint="j" noise="0.1"/>
      <rangefinder name="rf" site="s"/>
      <gyro name="g" site="s"/>
      <clock name="c"/>
    </sensor></mujoco>"""
    with pytest.warns(mb.MJCFWarning) as rec:
        m = mb.load_mjcf(xml)
    msgs = [str(w.message) for w in rec if "sensor" in str(w.message)]
    assert len(msgs) == 1 and "<rangefinder> 'rf' (line 4)" in msgs[0] and "<clock> 'c' (line 6)" in msgs[0]
    assert [(s.name, s.type, s.dim, s.address) for s in m.sensors] == [("p", "jointpos", 1, 0), ("g", "gyro", 3, 1)]
    assert m.sensors[0].noise == 0.1   # kept as written, not applied
    out = mb.sensors(m, [0.4], [1.5])
    assert out.tolist() == [0.4, 0.0, 0.0, 1.5]
    assert mb.sensors(m, np.full((5, 1), 0.4), np.ones((5, 1))).shape == (5, 4)


def test_bad_input_names_what_is_wrong():
    m, _, _ = load(EVERY)
    q, qd = m.q_default, np.zeros(m.nv)
    with pytest.raises(ValueError, match="qdd: sensors .*acc.* need the acceleration"):
        mb.sensors(m, q, qd, ctrl=np.zeros(2))
    with pytest.raises(ValueError, match="ctrl: actuatorfrc sensors \\['af'\\]"):
        mb.sensors(m, q, qd, np.zeros(m.nv))
    with pytest.raises(ValueError, match="qd: expected shape"):
        mb.sensors(m, q, np.zeros(3), np.zeros(m.nv), ctrl=np.zeros(2))
    with pytest.raises(ValueError, match="contacts, contact_forces: give both"):
        mb.sensors(m, q, qd, np.zeros(m.nv), ctrl=np.zeros(2), contacts=mb.contacts(m, q))
    with pytest.raises(ValueError, match="non-finite|NaN|finite"):
        mb.sensors(m, np.full(m.nq, np.nan), qd, np.zeros(m.nv), ctrl=np.zeros(2))
    traj = mb.simulate(m, None, None, 0.01, contact="off")
    with pytest.raises(KeyError, match="no sensor named 'gyr'.*gyro"):
        traj.sensor("gyr")
    assert traj.sensor("af").shape == (len(traj.t), 1)   # the run's constant ctrl (zeros) is kept
    plain = mb.simulate(mb.models.planar(2), [0.1, 0.0], [0.0, 0.0], 0.01)
    assert plain.sensordata.shape == (11, 0)
    with pytest.raises(KeyError, match="the model has no sensors"):
        plain.sensor("x")


def test_framequat_of_every_rotation_branch():
    """The matrix → quaternion step (Shepperd's four branches) against MuJoCo's mju_mat2Quat, up to sign."""
    from multibody.kinematics.sensors import _quaternion
    rng = np.random.default_rng(5)
    quats = rng.standard_normal((400, 4))
    quats[:4] = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]   # each branch exactly
    quats /= np.linalg.norm(quats, axis=1, keepdims=True)
    R = np.empty((len(quats), 9))
    for i, qu in enumerate(quats):
        mujoco.mju_quat2Mat(R[i], qu)
    ours = _quaternion(R.reshape(-1, 3, 3))
    assert np.all(ours[:, 0] >= 0)
    err = np.minimum(np.abs(ours - quats).max(axis=1), np.abs(ours + quats).max(axis=1))
    assert err.max() < 1e-12
