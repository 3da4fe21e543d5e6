"""The per-Model set-up caches of ``mb.simulate`` (issue 33): a run repeated on the same model gives the
same bits as a fresh model's run, and a cached check never lets through what it refuses."""
import dataclasses

import numpy as np
import pytest

import multibody as mb

PENDULUM = """<mujoco><worldbody><geom type="plane" size="1 1 .1"/>
<body pos="0 0 1"><joint name="h" type="hinge" axis="0 1 0" damping="0.1"/>
<geom type="capsule" fromto="0 0 0 0 0 -.5" size=".05" mass="1"/></body>
</worldbody><actuator><position joint="h" kp="20000" kv="5"/></actuator></mujoco>"""

BALL = """<mujoco><worldbody><body pos="0 0 .3"><freejoint/><geom type="sphere" size=".1" mass="1"/>
</body></worldbody></mujoco>"""


def test_repeated_runs_equal_a_fresh_models_run():
    """semi_implicit's implicit-armature model is reused per (model, armature): the second run on the
    model, and a run of another dt, equal bit for bit the runs of a model loaded afresh."""
    kw = dict(integrator="semi_implicit")
    q0 = np.array([0.3])
    m = mb.load_mjcf(PENDULUM)
    first = mb.simulate(m, q0, None, 0.5, dt=0.002, **kw).q
    again = mb.simulate(m, q0, None, 0.5, dt=0.002, **kw).q
    other = mb.simulate(m, q0, None, 0.5, dt=0.001, **kw).q
    assert np.array_equal(first, again)
    assert np.array_equal(first, mb.simulate(mb.load_mjcf(PENDULUM), q0, None, 0.5, dt=0.002, **kw).q)
    assert np.array_equal(other, mb.simulate(mb.load_mjcf(PENDULUM), q0, None, 0.5, dt=0.001, **kw).q)
    assert not np.array_equal(first[-1], other[-1])   # (the dt reaches the armature: not one shared model)
    # a model replaced from it (another damping) has its own caches: its run is not the first one's
    stiff = dataclasses.replace(m, damping=np.array([5.0]))
    assert not np.array_equal(mb.simulate(stiff, q0, None, 0.5, dt=0.002, **kw).q[-1], first[-1])


def test_actuator_step_check_refuses_after_a_pass():
    """The stiff servo (kp 20000 on 0.09 kg·m²) is refused at an explicit 50 ms step before and after
    a run at 1 ms has passed the check on the same model and start."""
    m = mb.load_mjcf(PENDULUM)
    q0 = np.array([0.3])
    for dt in (0.05, 0.001, 0.05):
        if dt > 0.01:
            with pytest.raises(ValueError, match="kp = 20000"):
                mb.simulate(m, q0, None, 0.1, dt=dt, integrator="rk4", contact="off")
        else:
            assert mb.simulate(m, q0, None, 0.1, dt=dt, integrator="rk4", contact="off").status == "finished"


def test_floored_geoms_are_kept_per_height():
    """``ground=True`` gives the same floored table each run; another height its own, at that height."""
    from multibody.kinematics.contacts import scene_geoms
    m = mb.load_mjcf(BALL)
    g0, g1 = scene_geoms(m, True), scene_geoms(m, 0.0)
    assert g0 is g1 and g0.translation[-1, 2] == 0.0
    g2 = scene_geoms(m, 0.05)
    assert g2 is not g0 and g2.translation[-1, 2] == 0.05 and g2 is scene_geoms(m, 0.05)
    q = m.q_default
    a = mb.simulate(m, q, None, 0.5, dt=0.002, integrator="semi_implicit", ground=0.05)
    b = mb.simulate(m, q, None, 0.5, dt=0.002, integrator="semi_implicit", ground=True)
    assert a.q[-1, 2] == pytest.approx(0.15, abs=0.005) and b.q[-1, 2] == pytest.approx(0.10, abs=0.005)
