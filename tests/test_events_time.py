"""Time events: a user event whose guard reads only the time ("kick at t = 0.3": guard 0.3 − t with a
reset) fires once where t crosses its zero.  Its guard stays past zero after the reset, which the
re-arm rule read as a reset that cannot separate ("fires forever", issue 33); a state reset that
truly cannot separate keeps that diagnosis."""
import dataclasses

import numpy as np
import pytest

import multibody as mb
from multibody.simulation import rollout

T_KICK = 0.3


def kick(guard=lambda t, q, qd: T_KICK - t):
    return mb.Event(guard, direction=-1, reset=lambda t, q, qd: (q, qd + 3.0), name="kick")


def reference(m, q0, qd0, t_final, **kw):
    """The run to T_KICK, then a second run from (q, q̇ + 3) for the rest: what the kick must give."""
    a = mb.simulate(m, q0, qd0, T_KICK, **kw)
    return mb.simulate(m, a.q[-1], a.qd[-1] + 3.0, t_final - T_KICK, **kw)


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit", "rk3", "rk45"])
def test_a_kick_at_a_time_fires_once_and_the_run_goes_on_from_the_kicked_state(integrator):
    m = mb.models.double_pendulum()
    q0, qd0 = [0.4, -0.2], [0.0, 0.0]
    kw = dict(integrator=integrator, dt=1e-3) | (dict(rtol=1e-10, atol=1e-12) if integrator == "rk45" else {})
    tr = mb.simulate(m, q0, qd0, 1.0, events=[kick()], **kw)
    assert tr.status == "finished" and [e.name for e in tr.events] == ["kick"]
    assert tr.events[0].t == pytest.approx(T_KICK, abs=1e-12)
    assert np.array_equal(tr.events[0].qd_after, tr.events[0].qd_before + 3.0)
    ref = reference(m, q0, qd0, 1.0, **kw)
    tol = 1e-7 if integrator == "rk45" else 1e-9   # the kick's time located to 1e-12 s, not on the grid's
    assert np.allclose(tr.q[-1], ref.q[-1], atol=tol) and np.allclose(tr.qd[-1], ref.qd[-1], atol=tol)


def test_after_the_kick_the_run_goes_back_to_the_compiled_loop(monkeypatch):
    """A spent time event does not keep the run stepping in Python: after the kick one step is taken
    there (where the event is seen to be a time event) and the rest is one compiled stretch."""
    starts = []
    original = rollout.run_compiled

    def counted(*a, **kw):
        starts.append(kw.get("t0", 0.0))
        return original(*a, **kw)
    monkeypatch.setattr(rollout, "run_compiled", counted)
    tr = mb.simulate(mb.models.single_pendulum(), [0.3], [0.0], 2.0, events=[kick()], dt=1e-3)
    assert [e.name for e in tr.events] == ["kick"] and tr.t[-1] == pytest.approx(2.0)
    assert len([t for t in starts if t > T_KICK]) <= 2


def test_a_batch_with_a_time_event_kicks_every_run():
    m = mb.models.single_pendulum()
    Q0 = np.array([[0.3], [-0.5]])
    b = mb.simulate_batch(m, Q0, np.zeros((2, 1)), 0.8, events=[kick()])
    for i in range(2):
        assert [e.name for e in b[i].events] == ["kick"]
        ref = reference(m, Q0[i], [0.0], 0.8)
        assert np.allclose(b[i].q[-1], ref.q[-1], atol=1e-9)


def test_a_periodic_time_event_fires_each_period():
    """sin(2π t / 0.2) falls through zero at t = 0.1, 0.3, 0.5: armed again each time its guard
    returns positive."""
    ev = mb.Event(lambda t, q, qd: np.sin(2 * np.pi * t / 0.2), direction=-1,
                  reset=lambda t, q, qd: (q, qd + 1.0), name="tick")
    tr = mb.simulate(mb.models.single_pendulum(), [0.3], [0.0], 0.65, events=[ev], dt=1e-3)
    assert np.allclose([e.t for e in tr.events], [0.1, 0.3, 0.5], atol=1e-11)


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit", "rk45"])
def test_a_kick_at_a_time_moves_a_joint_resting_on_its_stop(integrator):
    """Gravity presses a pendulum on its lower stop (it rests there); the kick at t = 0.3 s (guard
    0.3 − t, without the state term the hard-stop test needed to dodge "fires forever") sets it
    swinging as a free pendulum from (0.3, 3)."""
    m = dataclasses.replace(mb.models.single_pendulum(), q_lower=np.array([0.3]), q_upper=np.array([1.5]))
    tr = mb.simulate(m, [0.3], [0.0], 0.45, events=[kick()], integrator=integrator, dt=1e-3)
    assert [e.name for e in tr.events] == ["kick"]
    free = mb.simulate(mb.models.single_pendulum(), [0.3], [3.0], 0.45 - tr.events[0].t, integrator="rk45",
                       rtol=1e-11, atol=1e-12, dt=1e-3)
    tol = 2e-3 if integrator == "semi_implicit" else 1e-6
    assert abs(tr.q[-1, 0] - free.q[-1, 0]) < tol and abs(tr.qd[-1, 0] - free.qd[-1, 0]) < tol


@pytest.mark.parametrize("integrator", ["rk4", "rk45"])
def test_a_state_reset_that_cannot_separate_still_fires_forever(integrator):
    """A wall at q = −0.2 whose reset leaves the state as it is: the pendulum goes on through it.
    Its guard reads the state, so this is still the error (with the state term, a guard of time and
    state is one too)."""
    for guard in (lambda t, q, qd: q[0] + 0.2, lambda t, q, qd: q[0] + 0.2 + 0.0 * t):
        wall = mb.Event(guard, direction=-1, reset=lambda t, q, qd: (q, qd), name="wall")
        with pytest.raises(ValueError, match="'wall' fires forever"):
            mb.simulate(mb.models.single_pendulum(), [0.3], [0.0], 2.0, events=[wall], integrator=integrator,
                        dt=1e-3)


def test_an_event_that_fires_forever_names_a_joint_without_inertia():
    """Where the model has a joint without inertia (no step follows it, and what it drives is rounding), an event
    that fires forever says so too, as the solves' failures do (dynamics.mobility.massless_cause): icub's head,
    a point mass on neck_yaw's axis, ended a run in a hard ankle stop's "fires forever"."""
    point = ('<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" '
             'ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"><inertial><mass value="1"/><inertia '
             'ixx="1e-19" iyy="1e-19" izz="1e-19" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="spin" '
             'type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint><link name="c"><inertial>'
             '<origin xyz="0 0 -0.5"/><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" '
             'iyz="0"/></inertial></link><joint name="swing" type="revolute"><parent link="a"/><child link="c"/>'
             '<axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint></robot>')
    model = mb.load_urdf(point)
    wall = mb.Event(lambda t, q, qd: q[1] + 0.2, direction=-1, reset=lambda t, q, qd: (q, qd), name="wall")
    with pytest.raises(ValueError, match="'wall' fires forever.*joint 'spin' has almost no inertia.*armature"):
        mb.simulate(model, [0.0, 0.3], [0.0, 0.0], 2.0, events=[wall], integrator="rk4", dt=1e-3)
    wall = mb.Event(lambda t, q, qd: q[0] + 0.2, direction=-1, reset=lambda t, q, qd: (q, qd), name="wall")
    with pytest.raises(ValueError, match="'wall' fires forever") as info:   # (a model without one: as it was)
        mb.simulate(mb.models.single_pendulum(), [0.3], [0.0], 2.0, events=[wall], integrator="rk4", dt=1e-3)
    assert "inertia" not in str(info.value)


def test_sensitivities_across_a_time_event():
    """The variational run carries the kick too (its saltation matrix: a time event moves no
    crossing time with the state): the STM against central differences of the final state."""
    m = mb.models.single_pendulum()
    x0 = np.array([0.3, 0.0])
    tr = mb.simulate(m, x0[:1], x0[1:], 0.6, events=[kick()], sensitivities=True, dt=1e-3)
    assert [e.name for e in tr.events] == ["kick"]
    h, fd = 1e-6, np.zeros((2, 2))
    for k in range(2):
        xs = []
        for s in (1, -1):
            x = x0.copy()
            x[k] += s * h
            r = mb.simulate(m, x[:1], x[1:], 0.6, events=[kick()], dt=1e-3)
            xs.append(np.r_[r.q[-1], r.qd[-1]])
        fd[:, k] = (xs[0] - xs[1]) / (2 * h)
    assert np.allclose(tr.stm[-1], fd, atol=1e-5)


def _evaluations(guard, t0, t1):
    from multibody.simulation.events import EVENT_TIME_TOL, locate_crossing
    calls = []

    def g(t):
        calls.append(t)
        return guard(t)
    tc = locate_crossing(g, t0, t1, guard(t0), guard(t1))
    return tc, len(calls), EVENT_TIME_TOL


@pytest.mark.parametrize("guard, root, most", [
    (lambda t: 1e-18 - 1.8 * t * t, np.sqrt(1e-18 / 1.8), 6),      # a joint from rest 1e-18 off its stop
    (lambda t: 1e-19 - 0.12 * t * t, np.sqrt(1e-19 / 0.12), 20),
    (lambda t: 0.3e-3 - t, 0.3e-3, 4),                              # a straight line: the secant hits it
    (lambda t: (1e-3 - t) ** 2 * 1e3 - 1e-14, 1e-3 - np.sqrt(1e-17), 8),   # a crossing just before the end
])
def test_a_crossing_near_an_end_of_the_step_is_located_in_a_few_guard_evaluations(guard, root, most):
    """Each guard evaluation is a stepped state.  A guard that starts at rest on its wall leaves it
    quadratically: the secant landed 1e-13 of the step in and Illinois crept out from there (79
    evaluations for the first guard; tiago_dual's fingers met their stops 636 times in its first
    millisecond at ~90 each, a 2 ms run past 4 minutes), and a secant landing exactly on the crossing
    was followed by bisection down to the tolerance (30 for the straight line)."""
    tc, n, tol = _evaluations(guard, 0.0, 1e-3)
    assert n <= most
    assert abs(tc - root) <= 2 * tol and guard(tc) <= 0.0 < guard(tc - tol)


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_a_guard_that_crosses_after_the_earliest_crossing_is_read_once_not_searched(order):
    """Two guards crossing in one step: the earliest crossing is the event, whichever is looked at
    first; the other one, not crossed by then, is read at that time once (each read a stepped state)
    rather than located to tolerance for nothing."""
    from multibody.simulation.events import EventMonitor
    times = (0.3e-3, 0.7e-3)
    events = [mb.Event(lambda t, q, qd, c=times[k]: c - t, direction=-1, name=f"at {times[k]}") for k in order]
    q = qd = np.zeros(1)
    monitor = EventMonitor(events, 0.0, q, qd)
    reads = [0, 0]

    def g_at(i, t):
        reads[i] += 1
        return events[i].value(t, q, qd)
    tc, i = monitor.earliest(0.0, 1e-3, [ev.value(1e-3, q, qd) for ev in events], g_at)
    early = order.index(0)
    assert i == early and abs(tc - times[0]) <= 1e-12
    if early == 0:      # found first: the later guard is read at its time, once
        assert reads[1] == 1


def test_a_guard_its_reset_left_on_zero_and_past_its_wall_by_the_step_end_is_located_without_a_grid_search():
    """A joint let go exactly on its stop and back into it within the step (simple_humanoid's shoulder
    at λ = 0, hundreds of times a second): the crossing is located from the step's start, where the
    reset left the guard at 0.  A dyadic search for a point off the wall (255 stepped states when
    there is none) only chose between two ways to that same locate."""
    from multibody.simulation.events import EventMonitor
    q = qd = np.zeros(1)
    t0, t1 = 0.3, 0.301
    wall = mb.Event(lambda t, q, qd: q[0], direction=-1, reset=lambda t, q, qd: (q, qd), name="wall")
    position = lambda t: np.array([-1e-3 * (t - t0) ** 2])     # from rest on the wall, into it  # noqa: E731
    monitor = EventMonitor([wall], t0, q, qd)
    monitor.fired(0, t0, 1.0, True, state=(q, qd))      # its reset at t0: unarmed, on the guard
    reads = []

    def g_at(i, t):
        reads.append(t)
        return wall.value(t, position(t), qd)
    tc, i = monitor.earliest(t0, t1, [wall.value(t1, position(t1), qd)], g_at)
    assert i == 0 and t0 < tc <= t0 + 1e-9
    assert len(reads) <= 60
