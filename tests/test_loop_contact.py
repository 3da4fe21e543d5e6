"""Contact from the model's own files in the compiled loop (SceneContact, the Plan's Contact.scene):
the file's floor is on by default, ``ground=`` adds one, ``contact="off"`` turns it off; the compiled
loop, batches and the Python reference loop (with the NumPy statement of the law) agree."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.simulation.contact import SCENE_PAIR_MAX, SceneContact

from reference_steppers import python_loop
from scene_contact_reference import contact_forces as reference_forces

BALL = ('<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 0.1"><freejoint/>'
        '<geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>')
BOX = ('<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 0.12" euler="3 2 0"><freejoint/>'
       '<geom type="box" size="0.1 0.08 0.05" mass="2"/></body></worldbody></mujoco>')


class NumpyScene(SceneContact):
    """The same contact with the law stated in NumPy (tests/scene_contact_reference.py) and the slots
    mapped here: the reference the compiled loop's stage is held to."""
    name = "numpy"

    def forces(self, model, q, qd, z=None):
        c = mb.contacts(model, q, geoms=self.geoms)
        slot = self.slots(c.pair)
        u = z.reshape(-1, 2)[slot]
        f_ext, ud, F, _state = reference_forces(model, q, qd, c, self.K, self.D, u)
        zdot = self._decay * z
        zdot.reshape(-1, 2)[slot] = ud
        force = np.zeros((self.n_slots, 3))
        force[slot] = F
        return f_ext, zdot, {"force": force}


def _python_loop(*args, **kw):
    with python_loop():
        return mb.simulate(*args, **kw)


@pytest.mark.parametrize("xml, qd0", [(BALL, [0, 0, 0, 1.0, 0.3, 0]), (BOX, [1.0, -2.0, 0.5, 0.5, 0, -0.5])])
def test_compiled_loop_matches_the_python_reference(xml, qd0):
    model = mb.load_mjcf(xml)
    qd0 = np.array(qd0)
    fast = mb.simulate(model, model.q_default, qd0, 0.4)
    assert fast.contact == "compliant" and fast.contact_state.shape[1] == 2 * SCENE_PAIR_MAX
    assert np.abs(fast.contact_forces[:, :, 2]).max() > 1.0      # it touched
    slow = _python_loop(model, model.q_default, qd0, 0.4)
    assert np.abs(slow.q - fast.q).max() <= 1e-12
    assert np.abs(slow.contact_forces - fast.contact_forces).max() <= 1e-9
    ref = _python_loop(model, model.q_default, qd0, 0.4, contact=NumpyScene(model))
    assert ref.contact == "numpy"
    assert np.abs(ref.q - fast.q).max() <= 1e-10
    assert np.abs(ref.contact_state - fast.contact_state).max() <= 1e-10


def test_box_at_rest_carries_its_weight_on_four_slots():
    model = mb.load_mjcf(BOX.replace('euler="3 2 0"', ''))
    tr = mb.simulate(model, model.q_default, np.zeros(6), 1.0)
    F = tr.contact_forces[-1]
    assert np.count_nonzero(F[:, 2]) == 4                         # the box's four corners, one slot each
    assert F[:, 2].sum() == pytest.approx(2 * 9.81, rel=1e-3)
    assert np.abs(tr.qd[-1]).max() < 1e-3


def test_contact_off_and_the_default():
    model = mb.load_mjcf(BALL)
    off = mb.simulate(model, model.q_default, np.zeros(6), 0.3, contact="off")
    assert off.contact is None and off.q[-1, 2] < 0.0              # falls through the floor
    with pytest.raises(ValueError, match="'of'"):
        mb.simulate(model, model.q_default, np.zeros(6), 0.3, contact="of")


def test_batch_agrees_with_single_runs():
    model = mb.load_mjcf(BOX)
    Q0 = np.array([model.q_default, model.q_default])
    Q0[1, 2] += 0.05
    QD0 = np.zeros((2, 6))
    QD0[0, 0] = 1.0
    batch = mb.simulate_batch(model, Q0, QD0, 0.3)
    for n in range(2):
        one = mb.simulate(model, Q0[n], QD0[n], 0.3)
        assert np.abs(batch.q[n] - one.q).max() == 0.0


def test_urdf_on_a_ground():
    """ANYmal (example-robot-data URDF, floating) dropped on ``ground=True``: its feet carry it."""
    from test_urdf_robots import ROBOTS    # example-robot-data's robots folder, found once there
    path = os.path.join(ROBOTS, "anymal_b_simple_description/robots/anymal.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(path, floating=True, check_meshes=False)
    q = model.neutral().copy()
    q[2] = 0.6
    falls = mb.simulate(model, q, np.zeros(model.nv), 0.3, limits="off")
    assert falls.contact is None                                   # no floor in a URDF
    tr = mb.simulate(model, q, np.zeros(model.nv), 0.3, ground=True, limits="off")
    assert tr.contact == "compliant" and tr.q[-1, 2] > 0.2
    assert tr.contact_forces[:, :, 2].sum(axis=1).max() > 100.0


def _anymal():
    from test_urdf_robots import ROBOTS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mb.load_urdf(os.path.join(ROBOTS, "anymal_b_simple_description/robots/anymal.urdf"), floating=True,
                            check_meshes=False)


def test_anymal_stands_quietly_at_1ms_or_is_refused():
    """ANYmal under a PD stance on ground=True, 1 s at 1 ms RK4 with the default contact: quiet at
    the end (the default damping is the lightest contacting body's critical one, so no chatter);
    a step the contact mode outruns is refused with a message naming K, D, the body and the dt."""
    model = _anymal()
    q = model.neutral().copy()
    q[7:] = [0, 0.4, -0.8, 0, 0.4, -0.8, 0, -0.4, 0.8, 0, -0.4, 0.8]
    contact = SceneContact(model, ground=True)
    st, g = mb.body_states(model, q), contact.geoms
    feet = [k for k in range(len(g)) if g.kind[k] == "sphere"]
    q[2] -= min((st.R[g.body[k]] @ g.translation[k] + st.p[g.body[k]])[2] - g.size[k][0] for k in feet)
    pd = mb.PD(kp=np.r_[np.zeros(6), np.full(12, 200.0)], kd=np.r_[np.zeros(6), np.full(12, 5.0)], q_ref=q.copy())
    tr = mb.simulate(model, q, np.zeros(model.nv), 1.0, ground=True, controller=pd)
    assert tr.status == "finished"
    assert np.abs(tr.qd[-1, :6]).max() < 0.05                     # the base is quiet
    assert 0.40 < tr.q[-1, 2] < q[2]
    floor = np.flatnonzero(g.body[g.pairs[:, 0]] < 0)
    slots = (floor[:, None] * SCENE_PAIR_MAX + np.arange(SCENE_PAIR_MAX)).ravel()
    assert tr.contact_forces[-100:, slots, 2].sum(axis=1).mean() == pytest.approx(np.sum(model.mass) * 9.81, rel=1e-3)
    assert np.abs(tr.qd[-1, 6:]).max() < 0.01                      # and so are the legs (no sideways chatter)
    body = model.body_names[contact.lightest[0]]
    with pytest.raises(ValueError, match=rf"stiffness K = .* damping D = .* on body '{body}'.*dt <= 0\.00"):
        mb.simulate(model, q, np.zeros(model.nv), 0.1, ground=True, dt=0.01)


def test_humanoid_falls_and_lies_on_its_floor():
    """dm_control's humanoid from its qpos0, no control: it falls onto the file's floor and lies there
    (MuJoCo's lies too; the fall's direction is chaotic, so the torso heights differ by how it lies)."""
    import dm_control
    import mujoco
    xml = os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_mjcf(xml)
    tr = mb.simulate(model, model.q_default, np.zeros(model.nv), 4.0, limits="soft", record_every=10)
    mj = mujoco.MjModel.from_xml_path(xml)
    d = mujoco.MjData(mj)
    while d.time < 4.0:
        mujoco.mj_step(mj, d)
    assert tr.status == "finished" and tr.contact == "compliant"
    assert tr.q[:, 2].min() > 0.07                                  # never through the floor (torso radius 0.07)
    assert np.abs(tr.qd[-1]).max() < 0.05                           # at rest
    # lying, as MuJoCo's does (its torso at 0.28 m; ours 0.12-0.19 m: the fall's direction is chaotic)
    assert tr.q[-1, 2] < 0.35 and d.qpos[2] < 0.35
    weight = np.sum(model.mass) * 9.81
    g = model.geoms
    floor = np.flatnonzero(g.body[g.pairs[:, 0]] < 0)
    slots = (floor[:, None] * SCENE_PAIR_MAX + np.arange(SCENE_PAIR_MAX)).ravel()
    assert tr.contact_forces[-1, slots, 2].sum() == pytest.approx(weight, rel=5e-3)   # the floor carries it
