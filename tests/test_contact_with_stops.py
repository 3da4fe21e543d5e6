"""The compliant scene's law implicit in a semi_implicit step while joints rest on their hard stops
(scene_contact.c's mb_scene_contact_implicit with the held joints: the correction solved on the free
joints' block of M), and linearised over the run's dt in the partial steps that locate an event."""
import os
import warnings

import numpy as np
import pytest

import multibody as mb
from reference_steppers import python_loop
from test_loop_contact import NumpyScene

# a box on a floor with a flap hinged at its edge: the flap falls onto its stop (3°) as the box lands,
# and rests on it while the floor carries the box
FLAP = ('<mujoco><worldbody><geom type="plane" size="2 2 .1"/>'
        '<body pos="0 0 0.3" euler="0 0 0.3"><freejoint/><geom type="box" size="0.2 0.1 0.05" mass="2"/>'
        '<body pos="0.2 0 0"><joint name="flap" type="hinge" axis="0 1 0" range="-30 3" limited="true"/>'
        '<geom type="box" pos="0.1 0 0" size="0.1 0.08 0.02" mass="0.5"/></body></body></worldbody></mujoco>')


def test_resting_stop_under_the_implicit_law_matches_its_python_statement():
    """The compiled loop against the Python loop (SceneContact.implicit_step with the resting joints
    held) and against the NumPy statement of the whole law: the same events at the same times, the
    same trajectory to 1e-10; at the end the flap rests exactly on its stop and the floor carries m g."""
    model = mb.load_mjcf(FLAP)
    qd0 = np.array([0.5, -0.3, 0, 0.2, 0.4, -1.0, 0.0])
    kw = dict(dt=0.005, integrator="semi_implicit", limits="hard")
    fast = mb.simulate(model, model.q_default, qd0, 1.0, **kw)
    with python_loop():
        slow = mb.simulate(model, model.q_default, qd0, 1.0, **kw)
        ref = mb.simulate(model, model.q_default, qd0, 1.0, contact=NumpyScene(model), **kw)
    names = [e.name for e in fast.events]
    assert "flap upper limit" in names and "flap upper limit release" in names
    for other in (slow, ref):
        assert [e.name for e in other.events] == names
        assert np.abs(np.array([e.t for e in other.events]) - [e.t for e in fast.events]).max() <= 1e-10
        assert np.abs(other.q - fast.q).max() <= 1e-10
    assert np.abs(slow.contact_forces - fast.contact_forces).max() <= 1e-7
    assert fast.q[-1, 7] == np.deg2rad(3.0)                   # held exactly on its stop
    resting = fast.t > fast.events[-1].t
    assert np.all(fast.q[resting, 7] == np.deg2rad(3.0))
    assert fast.contact_forces[-1, :, 2].sum() == pytest.approx(2.5 * 9.81, rel=1e-6)


def test_humanoid_on_its_hard_stops_at_its_own_step():
    """dm_control's humanoid as the file runs it (semi_implicit at its 5 ms, compliant contact, the
    default hard stops): with joints resting on stops the contact used to fall back to the explicit
    law, which 5 ms cannot hold — 254 kN at 0.37 s and the body thrown 100 m.  It now falls and lies."""
    import dm_control
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_mjcf(os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml"))
    tr = mb.simulate(model, None, None, 2.0)
    assert tr.status == "finished" and tr.integrator == "semi_implicit"
    assert len(tr.events) > 0                                  # stops were hit (and rested on)
    assert np.abs(tr.contact_forces[..., 2]).max() < 20e3      # MuJoCo's largest at landing ~5 kN
    assert 0.1 < tr.q[-1, 2] < 0.5                             # lying on the floor (MuJoCo: 0.26 m at rest)
    E = np.asarray(tr.total_energy)
    assert E.max() <= E[0] + 1e-6                              # nothing pumped energy in
