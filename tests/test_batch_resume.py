"""A batch's runs handed back at their hard stops resume together (simulation/core.py
``_resume_together``): each run's event machinery (``_fixed_machine``) asks for its compiled stretches,
and those that end at one time run as ONE compiled call with a window per run (``Run.starts``,
``Run.resting``: csrc/py/py_rollout.c's own_windows), on all threads.  Every run stays bit for bit
its own ``mb.simulate``, events and all."""
import dataclasses
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.core import _core
from multibody.simulation import rollout
from multibody.simulation.limits import JointLimits
from multibody.simulation.system import System

from test_rollout import panda_model


@pytest.fixture
def restore_threads():
    threads = _core.get_num_threads()
    yield
    _core.set_num_threads(threads)


def pressed_into_a_stop(N, seed=5):
    """The Panda under PD + g(q) whose reference lies beyond joint 4's upper stop: every run reaches
    that stop, at its own time, and rests on it (the KKT-held stretches after the impact)."""
    m = panda_model()
    q_mid = 0.5 * (m.q_lower + m.q_upper)
    q_mid[-2:] = 0.02
    target = q_mid.copy()
    target[3] = m.q_upper[3] + 0.3
    pd = mb.PD(kp=100.0, kd=10.0, q_ref=target, gravity_compensation=True)
    rng = np.random.default_rng(seed)
    Q0 = q_mid + 0.2 * rng.uniform(-1, 1, size=(N, m.nq))
    Q0[:, -2:] = 0.02
    return m, pd, Q0, rng.normal(size=(N, m.nv))


@pytest.mark.parametrize("threads", [1, 2])
def test_handed_back_runs_resume_in_one_call_bit_for_bit(threads, restore_threads, monkeypatch):
    m, pd, Q0, QD0 = pressed_into_a_stop(5)
    calls = []
    run_compiled = rollout.run_compiled

    def spy(*args, **kw):
        calls.append((args[2].shape[0], kw.get("starts") is not None, kw.get("resting") is not None))
        return run_compiled(*args, **kw)
    monkeypatch.setattr(rollout, "run_compiled", spy)
    _core.set_num_threads(threads)
    batch = mb.simulate_batch(m, Q0, QD0, 0.3, controller=pd)
    monkeypatch.setattr(rollout, "run_compiled", run_compiled)
    resumed = [c for c in calls if c[1]]
    assert calls[0] == (5, False, False)                   # the batch
    assert resumed and all(n >= 2 for n, _s, _r in resumed)  # its runs' stretches after their events: together
    assert any(r for _n, _s, r in resumed)                 # with joints resting on their stops (per run)
    for i in range(len(Q0)):
        one = mb.simulate(m, Q0[i], QD0[i], 0.3, controller=pd)
        assert batch[i].events and batch[i].status == one.status == "finished"
        assert [(e.name, e.t) for e in batch[i].events] == [(e.name, e.t) for e in one.events]
        for k in ("t", "q", "qd", "qdd", "tau"):
            np.testing.assert_array_equal(getattr(batch[i], k), getattr(one, k), err_msg=f"run {i}: {k}")


def one_windows_call(m, plan, Y, starts, resting, t_final=0.05, dt=1e-3):
    nq, nv = m.nq, m.nv
    return rollout.run_compiled(m, plan, Y[:, :nq], Y[:, nq:nq + nv], t_final, dt, "rk4", 1, keep_last=False,
                                t0=float(np.min(starts)), starts=np.asarray(starts, float), resting=resting)


def test_windows_of_their_own_equal_single_calls():
    """Three runs from three times, two with a joint resting on its stop, in one call: each equals its
    single call (Run.t0 its start, Stops.resting its rows) in every recorded number."""
    m, pd, Q0, _ = pressed_into_a_stop(3)
    system = System(m, pd, limits=JointLimits(m, "hard"))
    plan = system.plan("rk4")
    j = 3                                                   # joint 4 (body 3) on its upper stop
    Y = np.c_[Q0, np.zeros((3, m.nv))]
    Y[:2, j] = m.q_upper[j]
    rest = np.full((3, m.nv, 3), -1.0)
    rest[:2, 0] = (j, j, -1.0)
    starts = [0.0123, 0.004, 0.02]
    out = one_windows_call(m, plan, Y, starts, rest)
    for i in range(3):
        p = plan if i == 2 else dataclasses.replace(plan, stops=dataclasses.replace(plan.stops, resting=rest[i, :1]))
        single = rollout.run_compiled(m, p, Y[i:i + 1, :m.nq], Y[i:i + 1, m.nq:], 0.05, 1e-3, "rk4", 1,
                                      keep_last=False, t0=starts[i])
        n = int(single.info[0, 0])
        assert n > 5 and out.info[i, 0] == n
        np.testing.assert_array_equal(out.info[i], single.info[0])
        for k in ("T", "Q", "QD", "QDD", "TAU"):
            np.testing.assert_array_equal(getattr(out, k)[i, :n], getattr(single, k)[0, :n], err_msg=f"run {i}: {k}")
        np.testing.assert_array_equal(out.Y_END[i], single.Y_END[0])


def test_bad_windows_are_refused_by_name():
    m, pd, Q0, _ = pressed_into_a_stop(2)
    system = System(m, pd, limits=JointLimits(m, "hard"))
    plan = system.plan("rk4")
    Y = np.c_[Q0, np.zeros((2, m.nv))]
    with pytest.raises(ValueError, match="starts"):        # before the call's t0 … past t_final
        one_windows_call(m, plan, Y, [0.01, 0.06], None)
    rest = np.full((2, m.nv, 3), -1.0)
    rest[0, 0] = (3, 4, -1.0)                               # body 3's v index is 3
    with pytest.raises(ValueError, match="resting"):
        one_windows_call(m, plan, Y, [0.0, 0.01], rest)
    rest[0, 0] = (3, 3, -1.0)
    rest[0, 1] = (3, 3, 1.0)                                # the same joint twice
    with pytest.raises(ValueError, match="resting"):
        one_windows_call(m, plan, Y, [0.0, 0.01], rest)
    with pytest.raises(ValueError, match="resting"):        # rows without starts
        rollout.run_compiled(m, plan, Y[:, :m.nq], Y[:, m.nq:], 0.05, 1e-3, "rk4", 1, keep_last=False,
                             resting=np.full((2, m.nv, 3), -1.0))
    no_stops = dataclasses.replace(plan, stops=rollout.Stops())
    rest[0, 1] = (-1.0, -1.0, -1.0)
    with pytest.raises(ValueError, match="hard stops"):
        one_windows_call(m, no_stops, Y, [0.0, 0.01], rest)


def test_a_batch_takes_simulates_ctrl_and_keyframe():
    """``ctrl`` (constant) and ``keyframe`` reach every run of a batch as they reach ``simulate``: each
    run equals its own simulate bit for bit; a ctrl function runs one simulate per state, likewise."""
    m = mb.load_mjcf('<mujoco><compiler angle="radian"/><worldbody><body><joint name="j" type="hinge" axis="0 1 0" range="-1 1"/>'
                     '<geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="1"/></body></worldbody>'
                     '<actuator><motor joint="j" gear="2" ctrlrange="-1 1"/></actuator>'
                     '<keyframe><key name="push" qpos="0.1" ctrl="0.5"/></keyframe></mujoco>')
    Q0, QD0 = np.array([[0.0], [0.3]]), np.zeros((2, 1))
    for ctrl in ([0.7], lambda t, q, qd: [np.sin(t)]):
        batch = mb.simulate_batch(m, Q0, QD0, 0.5, ctrl=ctrl)
        for i in range(2):
            single = mb.simulate(m, Q0[i], QD0[i], 0.5, ctrl=ctrl)
            assert np.array_equal(batch[i].q, single.q) and np.array_equal(batch[i].tau, single.tau)
    still = mb.simulate_batch(m, Q0, QD0, 0.5)
    assert not np.array_equal(batch[1].q[-1], still[1].q[-1])     # the control did act
    kf = mb.simulate_batch(m, None, None, 0.5, keyframe="push")
    single = mb.simulate(m, None, None, 0.5, keyframe="push")
    assert np.array_equal(kf[0].q, single.q) and kf[0].q[0, 0] == 0.1 and kf[0].q[-1, 0] != still[0].q[-1, 0]
    with pytest.raises(ValueError, match="ctrl"):
        mb.simulate_batch(m, Q0, QD0, 0.5, ctrl=[1.0, 2.0])


def test_a_batch_refuses_a_stiff_pd_up_front_as_simulate_does():
    """kd 20 on the Panda's wrist outruns RK4 at 1 ms: simulate refuses it by name before the run; the
    batch used to run it into 'singular joint-space inertia' at a finger's stop (issue 33's wrong
    diagnosis).  It is refused the same way now, naming the run; semi_implicit runs it."""
    m = panda_model()
    pd = mb.PD(kp=200, kd=20, q_ref=m.neutral(), gravity_compensation=True)
    Q0 = np.tile(m.neutral(), (3, 1))
    Q0[:, :7] += 0.1
    with pytest.raises(ValueError, match=r"run 0: controller: kd = 20 on 'panda_joint7'.*rk4"):
        mb.simulate_batch(m, Q0, np.zeros((3, m.nv)), 0.05, controller=pd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batch = mb.simulate_batch(m, Q0, np.zeros((3, m.nv)), 0.05, controller=pd, integrator="semi_implicit")
    assert batch.status == ["finished"] * 3 and np.all(np.isfinite(batch[0].q))
