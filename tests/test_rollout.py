"""The compiled fixed-step loop (csrc/sim/rollout.c) against the Python loop of mb.simulate.

Every case runs twice — the library's run (the whole run in C) and the tests' reference loop
(``reference_steppers.python_loop``: the Python stepper calling the ABA kernel per stage) — and the
trajectories must agree to 1e-12: same samples, same times, same q, q̇, q̈ and τ.  Batches must equal
single runs exactly."""
import contextlib
import dataclasses
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.core import _core
from multibody.simulation import rollout
from multibody.simulation.rollout import FIXED_STEP
from multibody.simulation.system import System

from reference_steppers import python_loop

INTEGRATORS = list(FIXED_STEP)   # every row of rollout.c's stepper table


def plan(m, integrator, controller, f_ext=None, events=()):
    """The compiled plan of a run (None: the Python loop)."""
    return System(m, controller, f_ext).plan(integrator, events)


def both(*args, **kw):
    """(compiled, python) trajectories of the same mb.simulate call."""
    compiled = mb.simulate(*args, **kw)
    with python_loop():
        python = mb.simulate(*args, **kw)
    return compiled, python


def assert_same(a, b, tol=1e-12):
    assert a.status == b.status and len(a) == len(b)
    if tol == 0.0:
        np.testing.assert_array_equal(a.t, b.t)
    else:   # event times (off the grid) to rounding
        assert np.max(np.abs(a.t - b.t), initial=0.0) <= tol * max(1.0, np.max(np.abs(b.t), initial=0.0))
    for k in ("q", "qd", "qdd", "tau", "kinetic_energy", "potential_energy", "total_energy"):
        x, y = getattr(a, k), getattr(b, k)
        assert x.shape == y.shape, k
        np.testing.assert_array_equal(np.isnan(x), np.isnan(y))
        x, y = np.nan_to_num(x), np.nan_to_num(y)
        assert np.max(np.abs(x - y), initial=0.0) <= tol * max(1.0, np.max(np.abs(y), initial=0.0)), k


def test_compiled_path_is_taken():
    """The plan says yes for built-in runs, no for Python callables/events (which keep the Python loop)."""
    m = mb.models.double_pendulum()
    assert plan(m, "rk4", None, None) is not None
    assert plan(m, "rk4", mb.PD(1.0, 1.0), None) is not None
    assert plan(m, "rk4", lambda t, q, qd: np.zeros(2), None) is None   # simulate: callables=True
    assert plan(m, "rk45", None, None) is None
    assert plan(m, "rk4", None, None, events=(mb.Event(lambda t, q, qd: q[0]),)) is None   # a batch's


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_double_pendulum_matches_python_loop(integrator):
    """The OpenDE report's double pendulum (section 5.6)."""
    m = mb.models.double_pendulum()
    a, b = both(m, [np.pi / 4, -np.pi / 4], [0.3, -0.2], 1.0, dt=1e-3, integrator=integrator)
    assert_same(a, b)
    assert len(a) == 1001 and a.t[-1] == 1.0


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_floating_body_quaternion_matches_python_loop(integrator):
    """spatial_v2's singlebody (free joint, CF4 on the quaternion), with gravity and a constant f_ext."""
    m = mb.models.singlebody()
    q0, qd0 = m.neutral(), np.array([2.0, -1.0, 0.5, 0.3, 0.0, -0.2])
    f = np.zeros((m.nb, 6))
    f[0] = [0.1, 0.0, -0.2, 0.0, 0.5, 1.0]
    for f_ext in (None, f):
        a, b = both(m, q0, qd0, 0.5, dt=1e-3, integrator=integrator, f_ext=f_ext, record_every=7)
        assert_same(a, b)
        s = a.quaternion_starts[0]
        assert np.max(np.abs(np.linalg.norm(a.q[:, s:s + 4], axis=1) - 1)) < 1e-12


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_pd_planar_2r_continuous_sampled_and_tables(integrator):
    """spatial_v2 Simulink example 1 and 2: PD on the planar 2R, continuous, sampled, time tables."""
    m = mb.models.planar(2)
    times = np.array([0.0, 0.4, 1.0, 1.7])
    q_tab = np.array([[0.0, 0.0], [0.5, -0.5], [0.2, 0.3], [-0.1, 0.4]])
    qd_tab = np.array([[0.0, 0.0], [1.0, -1.0], [0.0, 0.5], [0.0, 0.0]])
    controllers = [
        mb.PD(kp=100.0, kd=20.0, q_ref=[0.5, -0.5]),
        mb.PD(kp=[80.0, 50.0], kd=[10.0, 5.0], q_ref=[0.5, -0.5], qd_ref=[0.1, 0.0], tau_ff=[0.2, -0.1]),
        mb.PD(kp=100.0, kd=20.0, q_ref=[0.5, -0.5], period=0.0137),          # zero-order hold, off-grid
        mb.PD(kp=100.0, kd=20.0, q_ref=q_tab, qd_ref=qd_tab, times=times),    # reference time tables
        mb.PD(kp=100.0, kd=20.0, q_ref=q_tab, times=times, period=0.01),
    ]
    for pd in controllers:
        assert plan(m, integrator, pd, None) is not None
        a, b = both(m, [0.1, -0.2], [0.0, 0.3], 2.0, dt=1e-3, integrator=integrator, controller=pd,
                    record_every=3)
        assert_same(a, b)
        assert np.any(a.tau != 0)


def test_damping_and_t_final_off_grid():
    m = dataclasses.replace(mb.models.double_pendulum(), damping=np.array([0.05, 0.02]))
    a, b = both(m, [1.0, 0.5], [0.0, 0.0], 0.3337, dt=1e-3, record_every=10)
    assert_same(a, b)
    assert a.t[-1] == 0.3337
    assert a.total_energy[-1] < a.total_energy[0]       # damping dissipates
    a0, b0 = both(m, [1.0, 0.5], [0.0, 0.0], 0.0)       # no step: one sample
    assert_same(a0, b0)
    assert len(a0) == 1


def test_non_finite_run_stops_at_last_finite_state():
    """A huge PD gain blows the explicit Euler run up; both loops stop at the same step and say when."""
    m = mb.models.planar(2)
    # sampled every step (Euler's one stage: the same law; a continuous PD this stiff is refused up front)
    pd = mb.PD(kp=1e9, kd=0.0, q_ref=[1.0, 0.0], period=1e-2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a, b = both(m, [0.0, 0.0], [0.0, 0.0], 5.0, dt=1e-2, integrator="euler", controller=pd)
    assert a.status == b.status == "diverged"
    assert a.message == b.message and "non-finite" in a.message
    assert len([w for w in caught if issubclass(w.category, mb.SimulationWarning)]) == 2
    assert_same(a, b, tol=1e-12)
    assert np.all(np.isfinite(a.q)) and a.t[-1] < 5.0


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_batch_equals_single_runs(integrator):
    m = mb.models.double_pendulum()
    rng = np.random.default_rng(3)
    Q0 = rng.uniform(-1, 1, size=(5, 2))
    QD0 = rng.uniform(-1, 1, size=(5, 2))
    pd = mb.PD(kp=5.0, kd=1.0, q_ref=[0.2, 0.1], period=0.02)
    batch = mb.simulate_batch(m, Q0, QD0, 0.5, integrator=integrator, controller=pd, record_every=4)
    for i in range(5):
        one = mb.simulate(m, Q0[i], QD0[i], 0.5, integrator=integrator, controller=pd, record_every=4)
        np.testing.assert_array_equal(batch.t, one.t)
        for k in ("q", "qd", "qdd", "tau", "kinetic_energy", "potential_energy"):
            np.testing.assert_array_equal(getattr(batch[i], k), getattr(one, k))
        e = mb.energy(m, one.q, one.qd)
        np.testing.assert_allclose(one.total_energy, e.KE + e.PE, rtol=0, atol=1e-12)
    # a quaternion model, batch vs single
    s = mb.models.singlebody()
    Q0 = np.tile(s.neutral(), (3, 1))
    QD0 = rng.normal(size=(3, 6))
    batch = mb.simulate_batch(s, Q0, QD0, 0.2, integrator=integrator)
    one = mb.simulate(s, Q0[2], QD0[2], 0.2, integrator=integrator)
    np.testing.assert_array_equal(batch[2].q, one.q)


def test_batch_marks_the_run_that_blew_up():
    m = mb.models.planar(2).with_gravity([0.0, 0.0, 0.0])
    # sampled at the step (one Euler stage: the continuous PD's numbers), so the up-front gain check,
    # which would refuse the continuous PD by name, lets the run reach its blow-up
    pd = mb.PD(kp=1e9, kd=0.0, q_ref=[1.0, 0.0], period=1e-2)
    Q0 = np.array([[0.0, 0.0], [1.0, 0.0]])   # run 1 rests on the reference: τ = 0, no blow-up
    batch = mb.simulate_batch(m, Q0, np.zeros((2, 2)), 1.0, dt=1e-2, integrator="euler", controller=pd)
    assert batch.status == ["diverged", "finished"]
    assert "non-finite" in batch.messages[0]
    assert np.isnan(batch.q[0, -1]).all() and np.isfinite(batch.q[1]).all()


def test_bad_input_errors():
    m = mb.models.double_pendulum()
    with pytest.raises(ValueError, match="q0: contains NaN or inf"):
        mb.simulate(m, [np.nan, 0.0], [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match="dt"):
        mb.simulate(m, [0.0, 0.0], [0.0, 0.0], 1.0, dt=0.0)
    with pytest.raises(ValueError, match="kp"):
        mb.simulate(m, [0.0, 0.0], [0.0, 0.0], 1.0, controller=mb.PD(kp=[1.0, 2.0, 3.0], kd=1.0))
    with pytest.raises(ValueError, match="f_ext"):
        mb.simulate(m, [0.0, 0.0], [0.0, 0.0], 1.0, f_ext=np.zeros((3, 6)))
    with pytest.raises(ValueError, match="QD0: row 1"):
        mb.simulate_batch(m, np.zeros((2, 2)), [[0.0, 0.0], [np.inf, 0.0]], 1.0)
    with pytest.raises(ValueError, match="zero"):
        s = mb.models.singlebody()
        mb.simulate_batch(s, np.zeros((2, 7)), np.zeros((2, 6)), 1.0)


def test_entry_point_checks_its_arguments():
    """The C entry point itself refuses bad arrays and plan records with named errors (no crash)."""
    from dataclasses import replace

    from multibody.core import _core
    from multibody.simulation.rollout import Callbacks, Contact, Control, Passive, Plan, Record, Run, Stops
    m = mb.models.double_pendulum()
    Z = np.zeros((1, 2))

    def fresh_outputs():
        T, Q = np.zeros((1, 5)), np.zeros((1, 5, 2))
        return dict(T=T, Q=Q, QD=Q.copy(), QDD=Q.copy(), TAU=Q.copy(), Y_END=np.zeros((1, 4)), info=np.zeros((1, 4)))
    plan = Plan(Control(), None, Passive(), Stops(), Contact(), Callbacks())
    run = Run(integrator=2, t0=0.0, t_final=0.004, dt=1e-3, one_step=None, held0=None, n_sample0=0, Z0=None,
              record=Record(1, True))
    outputs = fresh_outputs()
    _core.rollout(m._c, Z, Z, outputs, plan, run)
    assert np.isfinite(outputs["Q"]).all()

    def refused(error, word, Q0=Z, outs=None, run_=None, **parts):
        """The plan with ``parts`` (record name -> dict of its changed fields, or f_ext) refused."""
        changed = plan
        for name, fields in parts.items():
            changed = replace(changed, **{name: fields if name == "f_ext" else replace(getattr(plan, name), **fields)})
        with pytest.raises(error, match=word):
            _core.rollout(m._c, Q0, Z, fresh_outputs() if outs is None else outs, changed, run if run_ is None else run_)
    bad_stops = np.array([[5.0, 0.0, 1.0, 1.0]])
    for changes, word in ((dict(integrator=7), "integrator"), (dict(dt=-1.0), "dt"),
                          (dict(record=Record(0, True)), "record_every")):
        refused(ValueError, word, run_=replace(run, **changes))
    refused(ValueError, "f_ext", f_ext=np.full((2, 6), np.nan))
    for fields, word in ((dict(friction=np.full(2, np.nan)), "friction"), (dict(soft_stops=bad_stops), "soft_stops"),
                         (dict(gc_lift=np.zeros((3, 3)), gc_com=np.zeros((2, 3))), "gc_lift"),
                         (dict(gc_lift=np.zeros((2, 3))), "gc_lift, gc_com: expected both"),
                         (dict(friction=np.ones(2)), "friction_velocity")):
        refused(ValueError, word, passive=fields)
    refused(ValueError, "rows", stops=dict(rows=bad_stops))
    refused(ValueError, "Q0", Q0=np.zeros((1, 3)))
    refused(ValueError, "Q", outs={**fresh_outputs(), "Q": np.zeros((1, 5, 3))})
    refused(ValueError, "Y_END", outs={**fresh_outputs(), "Y_END": np.zeros((1, 3))})
    refused(TypeError, "outputs: unknown entry 'YEND'", outs={**fresh_outputs(), "YEND": np.zeros((1, 4))})
    with pytest.raises(TypeError, match="Plan: expected a Plan record .* no field control"):   # not a Plan
        _core.rollout(m._c, Z, Z, fresh_outputs(), {"control": None}, run)
    with pytest.raises(TypeError, match="Passive: expected a Passive record .* no field damping"):
        _core.rollout(m._c, Z, Z, fresh_outputs(), replace(plan, passive=Stops()), run)
    with pytest.raises(TypeError, match="6 arguments"):
        _core.rollout(m._c, Z, Z)
    refused(TypeError, "control, forces", control=dict(call=5))
    pd = dict(kp=np.zeros(2), kd=np.zeros(2), times=np.zeros(1), q_ref=np.zeros((1, 2)), qd_ref=np.zeros((1, 2)),
              tau_ff=np.zeros((1, 2)))
    refused(ValueError, "without kp", control=dict(call=lambda t, q, qd: np.zeros(2), **pd))
    refused(TypeError, "directions", callbacks=dict(guards=lambda t, q, qd: [0.0], directions=np.array(["down"])))
    refused(TypeError, "guards", callbacks=dict(guards=5, directions=np.zeros(1, dtype=np.int32)))
    refused(ValueError, "events: returned 2 numbers; expected 1",             # two values for one direction
            callbacks=dict(guards=lambda t, q, qd: [0.0, 1.0], directions=np.zeros(1, dtype=np.int32)))
    tendon, term = np.array([[2.0, 0.1, 0.0, 0.0]]), np.array([[0.0, 0.0, 0.0, 0.5], [0.0, 1.0, 1.0, 0.5]])
    for (tendons, terms), word in (((np.array([[-1.0, 0.0, 0.0, 0.0]]), term), "stiffness"),
                                   ((np.array([[1.0, 0.0, 1.0, 0.0]]), term), "L_lo"),
                                   ((tendon, np.array([[1.0, 0.0, 0.0, 1.0]])), "grouped by tendon"),
                                   ((tendon, np.array([[0.0, 2.0, 0.0, 1.0]])), "inside the model"),
                                   ((tendon, np.array([[0.0, 0.0, 0.0, np.nan]])), "tendon_terms"),
                                   ((np.zeros((2, 4)), term), "every tendon"),
                                   ((tendon, np.zeros((1, 3))), "tendon_terms")):
        refused(ValueError, word, passive=dict(tendons=tendons, tendon_terms=terms))
    stop = np.array([[0.0, 0.0, -1.0, 1.0]])
    for bad in (np.array([[1.0, 0.0, 1.0]]), np.array([[0.0, 1.0, 1.0]]), np.array([[0.0, 0.0, 0.5]]),
                np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]), np.array([[2.0, 0.0, 1.0]])):
        refused(ValueError, "resting: expected rows", stops=dict(rows=stop, resting=bad))
    refused(ValueError, "resting", stops=dict(resting=np.array([[0.0, 0.0, 1.0]])))   # no hard stops: none rests
    refused(ValueError, "resting", stops=dict(rows=stop, resting=np.array([[0.0, 0.0, 1.0]])),   # solved elsewhere
            callbacks=dict(dynamics=lambda t, q, v, tau, f: np.zeros(2)))
    ground = (np.array([1]), np.zeros((1, 3)), 3, 1e4, 10.0, 0.5)    # a point on the second link, friction: 2 states
    with_ground = replace(plan, contact=Contact(ground=ground))
    on_ground = replace(run, Z0=np.zeros((1, 2)))

    def with_contact(**bad_outputs):
        outs = {**fresh_outputs(), "Y_END": np.zeros((1, 6)), "Z": np.zeros((1, 5, 2)), "F": np.zeros((1, 5, 1, 3))}
        return {**outs, **bad_outputs}
    _core.rollout(m._c, Z, Z, with_contact(), with_ground, on_ground)
    for k, bad, word in ((0, np.array([2]), "bodies"), (1, np.full((1, 3), np.nan), "points"), (2, 4, "nd"),
                         (3, -1.0, "K")):
        refused(ValueError, word, outs=with_contact(), contact=dict(ground=ground[:k] + (bad,) + ground[k + 1:]),
                run_=on_ground)
    refused(TypeError, "contact: expected a tuple", outs=with_contact(), contact=dict(ground=list(ground)),
            run_=on_ground)
    refused(ValueError, "not both", outs=with_contact(), run_=on_ground,
            contact=dict(ground=ground, call=lambda t, q, v, z: np.zeros(14), states=2))
    for outs, changes, word in ((with_contact(), dict(Z0=np.zeros((1, 3))), "Z0"),
                                (with_contact(Z=np.zeros((1, 5, 3))), {}, "Z"),
                                (with_contact(F=np.zeros((1, 5, 2, 3))), {}, "F"),
                                (with_contact(Y_END=np.zeros((1, 4))), {}, "Y_END"),
                                (with_contact(), dict(held0=np.full(2, np.nan)), "held0"),
                                (with_contact(), dict(n_sample0=-1), "n_sample0"),
                                (with_contact(HELD_END=np.zeros((2, 2)), N_SAMPLE_END=np.zeros(1)), {}, "HELD_END")):
        refused(ValueError, word, outs=outs, contact=dict(ground=ground), run_=replace(on_ground, **changes))
    outs = with_contact()
    _core.rollout(m._c, Z, Z, outs, with_ground, replace(run, Z0=np.full((1, 2), np.nan)))
    assert outs["info"][0, 1] > 0 and "contact states" in _core.status_message(int(outs["info"][0, 1]))


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_torque_table_matches_python_loop(integrator):
    """Open-loop τ from a time table (linear between rows, held after the end), continuous and sampled."""
    m = mb.models.double_pendulum()
    times = [0.0, 0.3, 0.45, 0.8]
    tau = [[0.0, 0.0], [2.0, -1.0], [-1.0, 0.5], [0.3, 0.3]]
    for table in (mb.TorqueTable(times, tau), mb.TorqueTable(times, tau, period=0.021)):
        assert plan(m, integrator, table, None) is not None
        a, b = both(m, [0.2, 0.1], [0.0, 0.0], 1.0, integrator=integrator, controller=table)
        assert_same(a, b)
        if table.period is None:
            np.testing.assert_allclose(a.tau[a.t == 0.3][0], [2.0, -1.0], rtol=0, atol=1e-12)
            np.testing.assert_allclose(a.tau[-1], [0.3, 0.3], rtol=0, atol=0)
    with pytest.raises(ValueError, match="columns"):
        mb.simulate(m, [0.0, 0.0], [0.0, 0.0], 0.1, controller=mb.TorqueTable([0.0], [[1.0, 2.0, 3.0]]))


# ---- passive forces, gravity compensation and stops in the compiled loop --------------------------------
def passive_pendulum(**kw):
    """The double pendulum with friction, damping, gravcomp on the second link and limits."""
    m = mb.models.double_pendulum()
    fields = dict(damping=np.array([0.02, 0.01]), friction=np.array([0.05, 0.03]), gravcomp=np.array([0.0, 0.6]),
                  q_lower=np.array([-0.9, -0.4]), q_upper=np.array([1.2, 2.0]))
    fields.update(kw)
    return dataclasses.replace(m, **fields)


class Counting:
    """Counts the compiled loop's calls (rollout.run_compiled): a handshake that the C path ran.
    ``calls``: the start of each compiled stretch; ``steps``: of each single step it took for the
    Python loop's event machinery."""

    def __init__(self, monkeypatch):
        self.calls, self.steps = [], []
        real = rollout.run_compiled

        def wrapped(*a, **k):
            (self.calls if k.get("one_step") is None else self.steps).append(k.get("t0", 0.0))
            return real(*a, **k)
        monkeypatch.setattr(rollout, "run_compiled", wrapped)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_friction_gravcomp_and_soft_limits_match_python_loop(integrator, monkeypatch):
    """Coulomb friction (tanh), gravcomp forces and soft stops (spring–damper) are the Python loop's laws."""
    m = passive_pendulum()
    count = Counting(monkeypatch)
    pd = mb.PD(kp=[30.0, 20.0], kd=[2.0, 1.0], q_ref=[1.5, -0.8])       # pushes both joints into a stop
    a, b = both(m, [0.2, 0.1], [0.0, 0.5], 1.5, integrator=integrator, controller=pd, limits="soft",
                record_every=3)
    assert count.calls == [0.0]                                        # the compiled run, once
    assert_same(a, b)
    assert a.passive == ("limits soft", "damping", "friction (tanh, v_s = 0.01)", "gravcomp")
    assert a.q[:, 0].max() > 1.2 + 1e-3 and a.q[:, 1].min() < -0.4 - 1e-3    # both stops pressed (soft)
    c, d = both(m, [0.2, 0.1], [0.0, 0.5], 0.7, integrator=integrator, limits="soft", friction_velocity=0.05)
    assert_same(c, d)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_pd_gravity_compensation_matches_python_loop(integrator):
    m = passive_pendulum(friction=np.zeros(2), gravcomp=np.zeros(2), damping=np.zeros(2))
    for pd in (mb.PD(kp=5.0, kd=1.0, q_ref=[0.4, -0.3], gravity_compensation=True),
               mb.PD(kp=5.0, kd=1.0, q_ref=[0.4, -0.3], gravity_compensation=True, period=0.01)):
        assert plan(m, integrator, pd) is not None
        a, b = both(m, [0.4, -0.3], [0.0, 0.0], 0.5, integrator=integrator, controller=pd, limits="off")
        assert_same(a, b)
        # at its reference the compensated PD holds the model: τ = g(q)
        np.testing.assert_allclose(a.tau[0], mb.rnea(m, [0.4, -0.3], [0.0, 0.0], [0.0, 0.0]), rtol=0, atol=1e-12)
        if pd.period is None:
            assert np.abs(a.q - [0.4, -0.3]).max() < 1e-10
    with pytest.raises(TypeError, match="gravity_compensation"):
        mb.PD(kp=1.0, kd=1.0, gravity_compensation="yes")


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_hard_stop_bounce_leaves_c_only_for_the_impact(integrator, monkeypatch):
    """A pendulum hits its lower stop with restitution 0.5 twice: C runs between, Python takes the steps at
    the stop (the impact, the step off the guard); the result is the Python loop's to 1e-12."""
    m = dataclasses.replace(mb.models.planar(1), q_lower=np.array([-np.pi / 2 - 0.3]))
    count = Counting(monkeypatch)
    a, b = both(m, [0.0], [0.0], 2.0, integrator=integrator, limit_restitution=0.5)
    assert_same(a, b)
    assert [ev.name for ev in a.events] == [ev.name for ev in b.events]
    assert len(a.events) >= 2 and all(ev.name == "joint1 lower limit" for ev in a.events)
    for x, y in zip(a.events, b.events):
        assert abs(x.t - y.t) < 1e-12 and np.allclose(x.qd_after, y.qd_after, rtol=0, atol=1e-12)
    # one compiled stretch from 0, and one more after each impact (resumed off the stop)
    assert count.calls[0] == 0.0 and len(count.calls) == len(a.events) + 1
    assert all(t > ev.t for t, ev in zip(count.calls[1:], a.events))
    c, d = both(m, [0.0], [0.0], 1.2345, integrator=integrator, limit_restitution=0.8, record_every=7)
    assert_same(c, d)                                   # thinned record, t_final off the grid
    assert len(c.events) >= 1 and c.t[-1] == 1.2345


def test_resting_stop_and_release_match_python_loop(monkeypatch):
    """A plastic impact on a stop gravity presses on: the joint rests (Python), a PD ramp-free reference
    change lifts it off (release event, Python), then C runs on."""
    m = dataclasses.replace(mb.models.planar(1), q_lower=np.array([0.3]))
    times = np.array([0.0, 0.5, 0.8])
    table = mb.TorqueTable(times, [[0.0], [0.0], [40.0]])              # lifts it off after t ≈ 0.5
    count = Counting(monkeypatch)
    resting_steps = []
    run_compiled = rollout.run_compiled

    def counted(model, plan, *args, **kwargs):   # (Counting's stretches call this one in turn)
        if kwargs.get("one_step") and plan.stops.resting is not None:
            resting_steps.append(kwargs["t0"])
        return run_compiled(model, plan, *args, **kwargs)
    monkeypatch.setattr(rollout, "run_compiled", counted)
    a, b = both(m, [0.4], [0.0], 1.2, controller=table)
    assert_same(a, b)
    names = [ev.name for ev in a.events]
    assert names[:2] == ["joint1 lower limit", "joint1 lower limit release"] == [ev.name for ev in b.events][:2]
    assert abs(a.events[1].t - b.events[1].t) < 1e-12
    assert len(count.calls) >= 3 and count.calls[-1] > a.events[1].t   # back in C after the release
    # and while it rests: C holds the joint (the KKT solve) and hands back the release step, which is
    # taken (and the release located in it, its guard read on the stop's forces of single compiled steps
    # held, up to the step's end) by single compiled steps with the joint held
    assert any(a.events[0].t <= t < a.events[1].t for t in count.calls)
    dt = 1e-3   # (simulate's default step)
    assert resting_steps and all(a.events[0].t <= t <= a.events[1].t + dt for t in resting_steps)
    resting = (a.t > a.events[0].t) & (a.t < a.events[1].t)
    assert resting.sum() > 100 and np.all(a.q[resting, 0] == 0.3) and np.all(a.qdd[resting, 0] == 0.0)


def test_panda_fingers_hard_limits_match_python_loop(monkeypatch):
    from test_urdf_robots import robots_dir
    import os
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mb.load_urdf(os.path.join(robots_dir(), "panda_description/urdf/panda.urdf"))
    q0 = 0.5 * (m.q_lower + m.q_upper)
    q0[-2:] = 0.02
    soft = np.r_[np.ones(m.nv - 2), 0.0, 0.0]           # fingers nearly free: they reach their stops
    pd = mb.PD(kp=50.0 * soft + 1.0, kd=5.0 * soft + 0.01, q_ref=q0, gravity_compensation=True)
    count = Counting(monkeypatch)
    for controller in (None, pd):
        a, b = both(m, q0, np.r_[np.zeros(m.nv - 2), -1.0, 1.0], 0.4, controller=controller)
        assert_same(a, b, tol=1e-11)
        assert [ev.name for ev in a.events] == [ev.name for ev in b.events]
        assert any("finger" in ev.name for ev in a.events)
        assert a.q[:, -2:].min() >= -1e-12 and a.q[:, -2:].max() <= 0.04 + 1e-12
    assert len(count.calls) >= 2


@pytest.mark.parametrize("limits", ["hard", "soft"])
def test_batch_with_passive_forces_and_stops_equals_single_runs(limits, monkeypatch):
    m = passive_pendulum()
    pd = mb.PD(kp=[30.0, 20.0], kd=[2.0, 1.0], q_ref=[1.5, -0.8], gravity_compensation=True)
    Q0 = np.array([[0.2, 0.1], [0.0, 0.0], [-0.5, 1.0]])
    QD0 = np.array([[0.0, 0.5], [0.0, 0.0], [1.0, -2.0]])
    count = Counting(monkeypatch)
    batch = mb.simulate_batch(m, Q0, QD0, 0.6, controller=pd, limits=limits, limit_restitution=0.3)
    assert count.calls[0] == 0.0
    for i in range(3):
        one = mb.simulate(m, Q0[i], QD0[i], 0.6, controller=pd, limits=limits, limit_restitution=0.3)
        assert_same(batch[i], one, tol=0.0)
        assert [ev.t for ev in batch[i].events] == [ev.t for ev in one.events]
    if limits == "hard":
        assert any(batch[i].events for i in range(3))


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_sampled_pd_with_hard_stops_keeps_its_hold_across_the_hand_back(integrator, monkeypatch):
    """A zero-order-hold PD (period off the step grid) swings a pendulum pair into its stops: the held τ
    and the next sample go from C to the Python loop at each impact and back; the run is the Python
    loop's to 1e-12, and a batch equals its single runs."""
    m = passive_pendulum()
    pd = mb.PD(kp=[30.0, 20.0], kd=[2.0, 1.0], q_ref=[1.5, -0.8], period=0.0137, gravity_compensation=True)
    assert System(m, pd, limits=mb.simulation.limits.JointLimits(m, "hard")).plan(integrator) is not None
    count = Counting(monkeypatch)
    a, b = both(m, [0.2, 0.1], [0.0, 0.5], 0.6, controller=pd, integrator=integrator, limit_restitution=0.3)
    assert_same(a, b)
    assert a.events and [ev.name for ev in a.events] == [ev.name for ev in b.events]
    assert len(count.calls) >= 2 and count.calls[1] > a.events[0].t     # C again after the impact
    grid = np.isclose(a.t / 1e-3, np.round(a.t / 1e-3), rtol=0, atol=1e-6)  # the hold: on the grid, τ changes
    t, tau = a.t[grid], a.tau[grid]                                         # only in steps holding a sample
    changes = t[1:][np.any(np.diff(tau, axis=0) != 0, axis=1)]
    assert len(changes) and np.all(np.mod(changes + 1e-9, 0.0137) < 1e-3 + 2e-9)
    Q0 = np.array([[0.2, 0.1], [0.0, 0.0], [-0.5, 1.0]])
    QD0 = np.array([[0.0, 0.5], [0.0, 0.0], [1.0, -2.0]])
    batch = mb.simulate_batch(m, Q0, QD0, 0.6, controller=pd, integrator=integrator, limit_restitution=0.3)
    for i in range(3):
        one = mb.simulate(m, Q0[i], QD0[i], 0.6, controller=pd, integrator=integrator, limit_restitution=0.3)
        assert_same(batch[i], one, tol=0.0)


def test_diverging_run_with_hard_stops_is_reported_by_the_python_loop(monkeypatch):
    """The compiled loop hands a non-finite step back; the run ends as the Python loop ends it."""
    far = 1.79e308                                      # stops the blow-up jumps over (to inf) without crossing
    m = dataclasses.replace(mb.models.planar(2), q_lower=np.array([-far, -far]), q_upper=np.array([far, far]))
    pd = mb.PD(kp=1e9, kd=0.0, q_ref=[1.0, 0.0], period=1e-2)   # sampled: a continuous one is refused up front
    count = Counting(monkeypatch)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        a, b = both(m, [0.0, 0.0], [0.0, 0.0], 5.0, dt=1e-2, integrator="euler", controller=pd)
    assert a.status == b.status == "diverged" and a.message == b.message
    assert_same(a, b)
    assert count.calls == [0.0]


# ---- batches in lockstep groups: a group's forward dynamics in SIMD lanes (aba_lanes.c) -----------------------
def _lane_kinds():
    """The lanes this CPU runs ("baseline", and "avx2" and "avx512" where built and supported)."""
    before = _core.use_lanes("baseline")
    kinds = ["baseline"]
    for kind in ("avx2", "avx512"):
        try:
            _core.use_lanes(kind)
            kinds.append(kind)
        except ValueError:
            pass
    _core.use_lanes(before)
    return kinds


LANE_KINDS = _lane_kinds()


@pytest.fixture
def restore_lanes():
    before, threads = _core.use_lanes("none"), _core.get_num_threads()
    _core.use_lanes(before)
    yield
    _core.use_lanes(before)
    _core.set_num_threads(threads)


def panda_model():
    from test_urdf_robots import robots_dir
    import os
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mb.load_urdf(os.path.join(robots_dir(), "panda_description/urdf/panda.urdf"))


def batches_by_lanes(*args, **kw):
    """{lanes: simulate_batch(...)} for "none" (one run at a time) and every lane kind."""
    out = {}
    for kind in ["none", *LANE_KINDS]:
        _core.use_lanes(kind)
        out[kind] = mb.simulate_batch(*args, **kw)
    return out


def assert_identical(a, b):
    """Two batches are equal bit for bit: every run's samples, status, message and events."""
    assert a.status == b.status and a.messages == b.messages
    for i in range(len(a)):
        x, y = a[i], b[i]
        for k in ("t", "q", "qd", "qdd", "tau"):
            np.testing.assert_array_equal(getattr(x, k), getattr(y, k), err_msg=f"run {i}: {k}")
        assert [(ev.name, ev.t) for ev in x.events] == [(ev.name, ev.t) for ev in y.events]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("integrator", ["semi_implicit", "rk4"])   # Euler: the fingers' stop is Zeno
def test_panda_batch_in_lanes_equals_run_by_run(integrator, threads, restore_lanes):
    """7 Panda runs (not a multiple of the lanes' width) under PD + g(q), damping and hard stops: the
    fingers of runs 0, 3 and 5 reach their stops (handed back to Python at that step), the others
    never leave C; lanes or not, threads or not, every run is bit for bit its run-by-run result and
    its single mb.simulate."""
    m = panda_model()
    q0 = 0.5 * (m.q_lower + m.q_upper)
    q0[-2:] = 0.02
    soft = np.r_[np.ones(m.nv - 2), 0.0, 0.0]
    pd = mb.PD(kp=50.0 * soft + 1.0, kd=5.0 * soft + 0.01, q_ref=q0, gravity_compensation=True)
    rng = np.random.default_rng(7)
    N = 7
    Q0 = q0 + np.c_[0.2 * rng.uniform(-1, 1, size=(N, m.nv - 2)), np.zeros((N, 2))]
    QD0 = np.zeros((N, m.nv))
    QD0[[0, 3, 5], -2:] = [-1.0, 1.0]                       # fingers thrown at their stops
    _core.set_num_threads(threads)
    out = batches_by_lanes(m, Q0, QD0, 0.3, integrator=integrator, controller=pd)
    for kind in LANE_KINDS:
        assert_identical(out[kind], out["none"])
    batch = out[LANE_KINDS[-1]]
    assert [bool(batch[i].events) for i in range(N)] == [i in (0, 3, 5) for i in range(N)]
    for i in (3, 4):
        one = mb.simulate(m, Q0[i], QD0[i], 0.3, integrator=integrator, controller=pd)
        for k in ("t", "q", "qd", "qdd", "tau"):
            np.testing.assert_array_equal(getattr(batch[i], k), getattr(one, k))


def panda_starts(N):
    """The Panda, its mid-range pose and N starts around it (arm joints perturbed, fingers still)."""
    m = panda_model()
    q0 = 0.5 * (m.q_lower + m.q_upper)
    rng = np.random.default_rng(11)
    Q0 = q0 + np.c_[0.3 * rng.uniform(-1, 1, size=(N, m.nv - 2)), np.zeros((N, 2))]
    QD0 = np.c_[0.5 * rng.uniform(-1, 1, size=(N, m.nv - 2)), np.zeros((N, 2))]
    return m, q0, Q0, QD0


def test_panda_lanes_with_sampled_pd_soft_stops_and_a_diverging_run(restore_lanes):
    """A run that turns non-finite leaves its group at that step (status diverged, as run by run);
    its group goes on.  Sampled PD, soft stops, thinned records, t_final off the grid, and f_ext
    (which the lanes leave to one run at a time) give the same bits with lanes and without."""
    m, q0, Q0, QD0 = panda_starts(6)
    N = len(Q0)
    QD0[2] = 1e160                                          # q̈ ~ v² overflows: non-finite at once
    Q0[4, 0] = m.q_upper[0] + 0.01                          # starts pressed into a soft stop
    pd = mb.PD(kp=20.0, kd=2.0, q_ref=q0, gravity_compensation=True, period=0.002)
    for kw in (dict(controller=pd, limits="soft", record_every=3),
               dict(controller=mb.PD(kp=80.0, kd=8.0, q_ref=q0), limits="off", integrator="semi_implicit"),
               # RK4 steps wholly in lanes (rollout_lanes.h): continuous PD + g(q), and no controller
               dict(controller=mb.PD(kp=20.0, kd=2.0, q_ref=q0, gravity_compensation=True), limits="off"),
               dict(limits="off", record_every=2),
               dict(f_ext=np.full((m.nb, 6), 0.1), limits="off")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mb.SimulationWarning)
            out = batches_by_lanes(m, Q0, QD0, 0.1234, **kw)
        for kind in LANE_KINDS:
            assert_identical(out[kind], out["none"])
        batch = out["none"]
        assert batch.status == ["finished"] * 2 + ["diverged"] + ["finished"] * 3, kw
        assert np.isfinite(batch.q[[0, 1, 3, 4, 5]]).all() and batch.t[-1] == 0.1234
        if kw.get("limits") == "soft":                      # run 4 pushed out of its stop
            assert batch.q[4, 0, 0] > m.q_upper[0] > batch.q[4, -1, 0]


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_free_floating_batch_in_lanes_equals_run_by_run(integrator, restore_lanes):
    """A free root (quaternion: CF4 for RK4) runs in the lanes too, bit for bit."""
    s = mb.models.singlebody()
    rng = np.random.default_rng(5)
    Q0 = np.tile(s.neutral(), (5, 1))
    QD0 = rng.normal(size=(5, 6))
    out = batches_by_lanes(s, Q0, QD0, 0.2, integrator=integrator)
    for kind in LANE_KINDS:
        assert_identical(out[kind], out["none"])


def test_planar_batch_rk4_steps_in_lanes_equal_single_runs(restore_lanes):
    """Planar trees (the double pendulum: FDab in planar vectors, planar.c) take their batches' RK4
    steps in lanes too, and their single runs two lanes (AVX2 code where the CPU has it): no controller, a continuous
    PD + g(q) with damping, and a run that diverges (its lane dies, the others go on) give every
    run's single mb.simulate bits, whatever the lanes (the single runs here: in lanes; the batch
    with "none": run by run, scalar)."""
    m = mb.models.double_pendulum()
    md = dataclasses.replace(m, damping=np.array([0.05, 0.02]))
    rng = np.random.default_rng(21)
    N = 11                                                  # not a multiple of any lanes' width
    Q0, QD0 = rng.uniform(-2, 2, size=(N, 2)), rng.uniform(-1, 1, size=(N, 2))
    QD0[4] = 1e200                                          # non-finite in its first step
    pd = mb.PD(kp=30.0, kd=3.0, q_ref=[0.3, -0.2], gravity_compensation=True)
    for model, kw in ((m, dict(record_every=3)), (md, dict(controller=pd))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mb.SimulationWarning)
            out = batches_by_lanes(model, Q0, QD0, 0.2003, **kw)
            ones = [mb.simulate(model, Q0[i], QD0[i], 0.2003, **kw) for i in range(N)]
        for kind in LANE_KINDS:
            assert_identical(out[kind], out["none"])
        batch = out[LANE_KINDS[-1]]
        assert batch.status[4] == "diverged" and batch.status.count("finished") == N - 1
        for i in range(N):
            for k in ("t", "q", "qd", "qdd", "tau"):
                np.testing.assert_array_equal(getattr(batch[i], k), getattr(ones[i], k), err_msg=f"run {i}: {k}")


def test_a_run_whose_dynamics_fail_inside_a_group_is_reported_as_run_by_run(restore_lanes, monkeypatch):
    """A sampled PD too slow for its gains drives runs 1, 3 and 5 to states where ABA finds a singular
    articulated inertia: inside a group the lanes' call fails, the group's runs are then computed
    one by one, and the error names the run, the body and the time that one run at a time names."""
    m, q0, Q0, QD0 = panda_starts(6)
    N = len(Q0)
    # sampled: stage by stage; continuous with a stiff gain (runs 0… singular at once): the RK4 step in
    # lanes (rollout_lanes.h) fails and the group's step is redone stage by stage
    # the continuous case's gain is one simulate_batch refuses up front (batch._check_gains): taken out
    # here to reach the lanes' failure path, which a run whose state turns stiff mid-run also reaches
    monkeypatch.setattr("multibody.simulation.batch._check_gains", lambda *a: None)
    for pd, limits, run in ((mb.PD(kp=80.0, kd=8.0, q_ref=q0, gravity_compensation=True, period=0.004), "off", 1),
                            (mb.PD(kp=1e6, kd=8.0, q_ref=q0, gravity_compensation=True), "off", 0)):
        messages = {}
        for kind in ["none", *LANE_KINDS]:
            _core.use_lanes(kind)
            with pytest.raises(ValueError, match="singular") as err, warnings.catch_warnings():
                warnings.simplefilter("ignore", mb.SimulationWarning)
                mb.simulate_batch(m, Q0, QD0, 0.1234, controller=pd, limits=limits)
            messages[kind] = str(err.value)
        assert f"(run {run})" in messages["none"]
        assert all(msg == messages["none"] for msg in messages.values())


# ---- compliant ground contact in the compiled loop -------------------------------------------------
def assert_same_contact(a, b, tol=None):
    """assert_same, and the contact states and forces: bit for bit, or to ``tol`` of their largest."""
    assert_same(a, b) if tol is None else assert_same(a, b, tol)
    for k in ("contact_state", "contact_forces"):
        x, y = getattr(a, k), getattr(b, k)
        assert (x is None) == (y is None), k
        if x is not None and tol is None:
            np.testing.assert_array_equal(x, y)
        elif x is not None:
            assert np.max(np.abs(x - y)) <= tol * max(1.0, np.max(np.abs(y))), k


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("mu", [0.5, 0.0])
def test_ground_contact_runs_in_c_like_the_python_loop(integrator, mu):
    """spatial_v2's rolling disc dropped spinning onto compliant ground: the contact law, its
    deformation states (with friction) and the recorded forces are the Python loop's, bit for bit."""
    disc = mb.models.rolling_disc(8)
    K, D = mb.contact_parameters(1.0, 1e-3, n_points=2)
    contact = mb.GroundContact(disc, K, D, mu=mu)
    assert System(disc, contact=contact).plan(integrator) is not None
    q = disc.neutral()
    q[2] = -mb.gc_pos_vel(disc, q, np.zeros(6))[2].min() + 0.01          # 1 cm above the ground
    a, b = both(disc, q, np.r_[0.0, 0.0, 3.0, 0.5, 0.0, 0.0], 0.4, integrator=integrator, contact=contact)
    assert_same_contact(a, b)
    assert np.nanmax(a.contact_forces[..., 2]) > 0.0                       # it landed
    assert (a.contact_state is None) == (mu == 0.0)


@pytest.fixture(scope="module")
def solo12():
    from test_urdf_robots import robots_dir
    import os
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mb.load_urdf(os.path.join(robots_dir(), "solo_description/robots/solo12.urdf"), floating=True)
    feet = [(m.body_names[f.body], f.translation) for f in m.frames if f.name.endswith("_FOOT")]
    q_ref = m.neutral()
    q_ref[7:] = [0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6]   # standing: FL FR HL HR
    R, p = mb.forward_kinematics(m, q_ref)
    q0 = q_ref.copy()
    q0[2] = -min(float(p[m.body_index(b), 2] + R[m.body_index(b)][2] @ x) for b, x in feet)
    # a third of critical damping for the whole robot: critical, its 34 g lower legs would need a step
    # below 0.39 ms (GroundContact.check_step; they hopped at 1 ms)
    K, D = mb.contact_parameters(float(np.sum(m.mass)), 1e-3, damping_ratio=0.3, n_points=4)
    return m, q_ref, q0, mb.GroundContact(m, K, D, mu=1.0, points=feet)


def test_floating_base_pd_on_compliant_ground_runs_in_c(solo12, monkeypatch):
    """solo12 standing: a PD on the 12 leg joints (no position gain on the free base, whose error would
    be mb.difference's), the feet on compliant ground — compiled; and with a knee stop it reaches, C
    hands the impact step (and the contact states) to the Python loop and takes the run back."""
    m, q_ref, q0, contact = solo12
    kp, kd = np.r_[np.zeros(6), 5.0 * np.ones(12)], np.r_[np.zeros(6), 0.2 * np.ones(12)]
    pd = mb.PD(kp=kp, kd=kd, q_ref=q_ref)
    assert System(m, pd, contact=contact).plan("rk4") is not None
    assert System(m, mb.PD(kp=np.ones(18), kd=kd, q_ref=q_ref), contact=contact).plan("rk4") is None
    a, b = both(m, q0, np.zeros(m.nv), 0.3, controller=pd, contact=contact)
    assert_same_contact(a, b)
    assert a.q[-1, 2] == pytest.approx(q0[2], abs=0.02)                    # still standing
    knee = 7 + 2                                                            # first leg's knee
    start = q0.copy()
    start[knee] += 0.3                                                      # the PD pulls it back, and it
    lower = m.q_lower.copy()                                                # overshoots onto a stop below
    lower[knee] = q_ref[knee] - 0.05                                        # its target: bounces, leaves
    stopped = dataclasses.replace(m, q_lower=lower)
    count = Counting(monkeypatch)
    c, d = both(stopped, start, np.zeros(m.nv), 0.3, controller=pd, contact=contact, limit_restitution=0.2)
    # the knee comes to rest on its stop: held by the same KKT system in C as in Python (its release at
    # the same instant: the guard reads the contact states of the state it sees), to rounding (C solves
    # it on H's tree-sparse factor, the Python statement on the dense one)
    assert_same_contact(c, d, tol=1e-12)
    assert c.events and all("limit" in ev.name for ev in c.events)
    assert len(count.calls) >= 2 and count.calls[1] >= c.events[0].t   # back in C from the impact on
    assert c.contact_state is not None


def test_pd_without_a_base_gain_takes_the_one_dof_errors_directly(solo12):
    """With kp = 0 on the free base the PD needs no mb.difference (a Newton solve per call): its τ is the
    one computed with difference's error, to rounding, and q_ref − q exactly on the leg joints."""
    m, q_ref, q0, _contact = solo12
    rng = np.random.default_rng(3)
    kp, kd = np.r_[np.zeros(6), rng.uniform(1, 5, 12)], rng.uniform(0.1, 1, 18)
    pd = mb.PD(kp=kp, kd=kd, q_ref=q_ref).bind(m)
    q = mb.integrate(m, q0, rng.normal(size=m.nv) * 0.1)
    qd = rng.normal(size=m.nv)
    e = mb.difference(m, q, q_ref)
    np.testing.assert_allclose(pd(0.0, q, qd), kp * e + kd * (0.0 - qd), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(pd(0.0, q, qd)[6:], kp[6:] * (q_ref[7:] - q[7:]) + kd[6:] * (0.0 - qd[6:]))
    Q = np.stack([q, q0])            # vectorised, as a batch calls it
    np.testing.assert_array_equal(pd(0.0, Q, np.stack([qd, qd]))[0], pd(0.0, q, qd))


# ---- Python callables called from the compiled loop ----------------------------------------------------
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_python_controller_and_forces_are_called_from_the_compiled_loop(integrator, monkeypatch):
    """A controller and a force function written in Python run inside csrc/sim/rollout.c's loop (called
    back at every stage with the GIL taken back): the run is the Python loop's bit for bit."""
    m = mb.models.double_pendulum()
    calls = []

    def controller(t, q, qd):
        calls.append(t)
        return np.array([np.sin(3 * t), -0.5 * qd[1]])

    def forces(t, q, qd):
        return np.tile([0.0, 0.0, 0.1 * np.cos(t), 0.2, 0.0, 0.0], (m.nb, 1))
    assert plan(m, integrator, controller) is None                          # a batch's plan: not in C
    assert System(m, controller, forces).plan(integrator, callables=True) is not None
    count = Counting(monkeypatch)
    a, b = both(m, [0.3, 0.1], [0.0, 0.0], 0.5, controller=controller, f_ext=forces, integrator=integrator)
    assert_same(a, b, tol=0.0)
    assert count.calls == [0.0]                                             # the handshake: C ran it
    stages = {row[0]: row[2] for row in _core.steppers()}[integrator]   # the table's right-hand sides a step
    assert len(calls) >= 2 * 500 * stages                                   # both runs called it


def test_a_sampled_python_controller_with_hard_stops_runs_in_c_around_the_impacts(monkeypatch):
    m = passive_pendulum()

    class Hold:
        period = 0.0137

        def __call__(self, t, q, qd):
            return np.array([30.0 * (1.5 - q[0]) - 2.0 * qd[0], 20.0 * (-0.8 - q[1]) - qd[1]])
    count = Counting(monkeypatch)
    a, b = both(m, [0.2, 0.1], [0.0, 0.5], 0.6, controller=Hold(), limit_restitution=0.3)
    assert_same(a, b)
    assert a.events and len(count.calls) >= 2 and count.calls[1] > a.events[0].t


def test_errors_of_python_functions_in_the_compiled_loop_are_the_python_loops():
    m = mb.models.double_pendulum()

    def fails_later(t, q, qd):
        if t > 0.25:
            raise RuntimeError("boom")
        return np.zeros(2)
    for bad, message in ((fails_later, r"controller: raised RuntimeError: boom \(at t = 0\.250"),
                         (lambda t, q, qd: np.zeros(3), r"controller: returned shape \(3,\)"),
                         (lambda t, q, qd: np.array([np.nan, 0.0]), "controller: returned NaN")):
        for compiled in (True, False):
            with contextlib.nullcontext() if compiled else python_loop():
                with pytest.raises(ValueError, match=message):
                    mb.simulate(m, [0.3, 0.1], [0.0, 0.0], 0.5, controller=bad)
    with pytest.raises(ValueError, match="f_ext: the force function raised KeyError"):
        mb.simulate(m, [0.3, 0.1], [0.0, 0.0], 0.5, f_ext=lambda t, q, qd: {}["x"])


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_user_events_are_watched_from_the_compiled_loop(integrator, monkeypatch):
    """The OpenDE report's colliding pendulum (a wall event with a restitution reset) and a terminal
    event: C calls the guards after every step and hands the step where one fires to the Python loop,
    which locates and fires it and hands the run back — the Python loop's run bit for bit."""
    m = mb.models.planar(1)
    wall = mb.Event(lambda t, q, qd: q[0] + np.pi / 2, direction=-1, reset=lambda t, q, qd: (q, -0.8 * qd),
                    name="wall")
    stop = mb.Event(lambda t, q, qd: q[0] + 1.0, direction=+1, terminal=True, name="back up")
    count = Counting(monkeypatch)
    a, b = both(m, [0.0], [0.0], 3.0, events=wall, integrator=integrator, limits="off")
    assert_same(a, b, tol=0.0)
    assert [ev.t for ev in a.events] == [ev.t for ev in b.events] and len(a.events) == 3
    assert len(count.calls) == len(a.events) + 1 and count.calls[1] > a.events[0].t   # back in C after each
    c, d = both(m, [0.0], [0.0], 3.0, events=[wall, stop], integrator=integrator, limits="off")
    assert_same(c, d, tol=0.0)
    assert c.status == "terminated" and [ev.name for ev in c.events] == ["wall", "back up"]


def test_a_guard_that_raises_in_the_compiled_loop_raises_as_in_the_python_loop():
    m = mb.models.planar(1)

    def guard(t, q, qd):
        if t > 0.2:
            raise KeyError("gone")
        return q[0] + 3.0
    for compiled in (True, False):
        with contextlib.nullcontext() if compiled else python_loop():
            with pytest.raises(ValueError, match=r"event 'guard': guard raised KeyError: 'gone' \(at t = 0\.20"):
                mb.simulate(m, [0.0], [0.0], 1.0, events=mb.Event(guard), limits="off")


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_a_progress_bar_keeps_the_run_in_c_in_pieces(integrator, monkeypatch, capsys):
    """progress=True runs the compiled loop in pieces (the bar moves between them) with the same
    samples as one compiled run, bit for bit: plain, thinned with t_final off the grid, and with a
    sampled PD bouncing on hard stops (the hold crosses the pieces and the hand-backs)."""
    m = passive_pendulum()
    pd = mb.PD(kp=[30.0, 20.0], kd=[2.0, 1.0], q_ref=[1.5, -0.8], period=0.0137, gravity_compensation=True)
    cases = [(mb.models.double_pendulum(), [0.7, -0.3], [0.0, 0.0], 1.0, {}),
             (mb.models.double_pendulum(), [0.7, -0.3], [0.1, 0.0], 1.2345, {"record_every": 7}),
             (m, [0.2, 0.1], [0.0, 0.5], 0.6, {"controller": pd, "limit_restitution": 0.3})]
    for model, q0, qd0, t_final, kw in cases:
        one = mb.simulate(model, q0, qd0, t_final, integrator=integrator, **kw)
        count = Counting(monkeypatch)
        shown = mb.simulate(model, q0, qd0, t_final, integrator=integrator, progress=True, **kw)
        assert_same(shown, one, tol=0.0)
        # in pieces of 1/200 of the run (more C stretches than the impacts alone make)
        assert len(count.calls) >= (100 if not one.events else len(one.events) + 10)
        assert [ev.t for ev in shown.events] == [ev.t for ev in one.events]
        monkeypatch.undo()
    assert "100%" in capsys.readouterr().err   # tqdm's bar reached the end


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_fixed_tendons_run_in_c_like_the_python_loop(integrator, monkeypatch):
    """Sprung and damped fixed tendons (one with a dead band, one naming a joint twice) with damping,
    friction and a PD: the compiled loop is the Python loop bit for bit, and a batch its single runs."""
    from multibody.model.tendons import FixedTendon
    m = dataclasses.replace(mb.models.planar(3), damping=np.array([0.01, 0.02, 0.0]),
                            friction=np.array([0.0, 0.03, 0.01]),
                            tendons=(FixedTendon("band", ("joint1", "joint3"), (2.0, -1.0), stiffness=3.0,
                                                 damping=0.5, spring_length=(0.1, 0.4)),
                                     FixedTendon("twice", ("joint2", "joint3", "joint2"), (0.5, 0.25, 0.5),
                                                 stiffness=1.5, damping=0.1)))
    pd = mb.PD(kp=[5.0, 4.0, 3.0], kd=[0.5, 0.4, 0.3], q_ref=[0.2, -0.1, 0.3])
    assert System(m, pd).plan(integrator) is not None
    count = Counting(monkeypatch)
    a, b = both(m, [0.6, -0.4, 0.9], [0.5, 0.0, -1.0], 0.8, controller=pd, integrator=integrator)
    assert len(count.calls) == 1 and "tendons" in a.passive
    assert_same(a, b, tol=0.0)
    tau_t = mb.simulation.limits.tendon_forces(m, a.q, a.qd)
    assert np.abs(tau_t).max() > 0.1            # the tendons pull
    Q0 = np.array([[0.6, -0.4, 0.9], [0.0, 0.2, 0.0], [-0.3, 0.1, 0.7]])
    QD0 = np.array([[0.5, 0.0, -1.0], [0.0, 0.0, 0.0], [1.0, -2.0, 0.5]])
    batch = mb.simulate_batch(m, Q0, QD0, 0.8, controller=pd, integrator=integrator)
    for i in range(3):
        assert_same(batch[i], mb.simulate(m, Q0[i], QD0[i], 0.8, controller=pd, integrator=integrator), tol=0.0)
    no_tendons = mb.simulate(dataclasses.replace(m, tendons=()), Q0[0], QD0[0], 0.8, controller=pd,
                             integrator=integrator)
    assert np.abs(no_tendons.q[-1] - a.q[-1]).max() > 1e-3      # and they change the motion


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_constrained_runs_step_in_c_with_their_dynamics_called_back(integrator, monkeypatch):
    """A four-bar closed by a point constraint, driven by a continuous PD with gravity compensation
    (the gravity then goes into τ, not cancelled out of ABA) and pushed by a constant force: the
    compiled loop solves the constraints in C (the plan's Constraints record; a Python dynamics
    function alone is called at every stage) and is the Python loop bit for bit, constraint residuals
    included; a terminal user event and a progress bar keep it compiled."""
    from multibody.simulation.closed_loops import four_bar
    model, closure = four_bar()
    q0 = np.array([0.5, 0.8, -1.0])
    for _ in range(30):                        # onto the loop (Newton on the closure)
        terms = mb.ConstraintSet(closure).evaluate(model, q0, np.zeros(3))
        q0 = q0 - np.linalg.pinv(terms.J) @ terms.c
    pd = mb.PD(kp=[20.0, 0.0, 0.0], kd=[2.0, 0.0, 0.0], q_ref=[1.2, 0.0, 0.0], gravity_compensation=True)
    f_ext = np.zeros((model.nb, 6))
    f_ext[1, 3] = 0.7
    kw = dict(controller=pd, constraints=closure, f_ext=f_ext, integrator=integrator)
    solved = mb.ConstraintSet(closure)               # what simulate's System gets for one description
    assert System(model, pd, f_ext, constraints=solved).plan(integrator, callables=True) is not None
    count = Counting(monkeypatch)
    a, b = both(model, q0, np.zeros(3), 0.6, **kw)
    assert len(count.calls) == 1
    assert_same(a, b, tol=0.0)
    np.testing.assert_array_equal(a.constraint_residual, b.constraint_residual)
    closed = 1e-6 if integrator == "rk4" else 2e-2     # Baumgarte holds the Euler runs' drift near the loop
    assert np.abs(a.constraint_residual).max() < closed and np.ptp(a.q[:, 0]) > 0.3   # closed, and it moves
    up = mb.Event(lambda t, q, qd: q[0] - 1.0, direction=1, terminal=True, name="crank up")
    c, d = both(model, q0, np.zeros(3), 0.6, events=(up,), progress=True, **kw)
    assert_same(c, d, tol=0.0) and c.status == "terminated"
    with pytest.raises(ValueError, match="constraints: returned 2 numbers; expected 3"):
        plan = System(model, pd, f_ext, constraints=solved).plan(integrator, callables=True)
        plan = dataclasses.replace(plan, constraints=None,    # the Python function alone, each stage
                                   callbacks=dataclasses.replace(plan.callbacks,
                                                                 dynamics=lambda t, q, v, tau, f: np.zeros(2)))
        rollout.run_compiled(model, plan, q0[None], np.zeros((1, 3)), 0.01, 1e-3, integrator, 1, True)


def test_a_batch_with_a_progress_bar_runs_in_groups_with_the_same_results(capsys):
    """simulate_batch(progress=True): one bar over the runs, moved group by group; the batch is the
    same bit for bit (compiled, and one simulate per run with params)."""
    m = mb.models.double_pendulum()
    Q0 = np.pi / 4 + 0.01 * np.arange(60)[:, None] * [1.0, -1.0]
    plain = mb.simulate_batch(m, Q0, np.zeros((60, 2)), 0.2)
    shown = mb.simulate_batch(m, Q0, np.zeros((60, 2)), 0.2, progress=True)
    np.testing.assert_array_equal(shown.q, plain.q)
    np.testing.assert_array_equal(shown.qdd, plain.qdd)
    params = [{"dt": 1e-3 * (1 + i % 2)} for i in range(3)]
    one = mb.simulate_batch(m, Q0[:3], np.zeros((3, 2)), 0.2, params=params)
    two = mb.simulate_batch(m, Q0[:3], np.zeros((3, 2)), 0.2, params=params, progress=True)
    for i in range(3):
        assert_same(one[i], two[i], tol=0.0)
    err = capsys.readouterr().err
    assert "60/60" in err and "3/3" in err


class FilteredWall:
    """A contact law of the user's (the contact protocol): a stop at q₀ = −0.4 whose push reaches the
    penalty k·p through a first-order lag (one state z), acting as a moment on the first body."""
    n_states = 1

    def __init__(self, k=400.0, lag=0.01, blow_up_at=None):
        self.k, self.lag, self.blow_up_at = k, lag, blow_up_at

    def initial_state(self, model, q, qd):
        return np.zeros(1)

    def forces(self, model, q, qd, z):
        pen = max(0.0, -0.4 - q[0])
        f = np.zeros((model.nb, 6))
        f[0, :3] = (z[0] - 0.5 * qd[0] * (pen > 0)) * np.asarray(model.S[0, :3])   # a moment about the joint
        if self.blow_up_at is not None and q[0] < self.blow_up_at:
            f[0, 0] = np.inf
        return f, np.array([(self.k * pen - z[0]) / self.lag]), {"force": np.array([z[0], pen])}


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_a_contact_law_of_the_users_steps_in_c_called_back(integrator, monkeypatch):
    """A Python contact object (states, forces, info): the compiled loop calls it at every stage and is
    the Python loop bit for bit, its states and its info's forces included; a law that blows up ends
    the run 'diverged' in both."""
    m = mb.models.planar(2)
    wall = FilteredWall()
    assert System(m, None, contact=wall).plan(integrator, callables=True) is not None
    count = Counting(monkeypatch)
    a, b = both(m, [0.3, 0.2], [-2.0, 0.0], 1.0, contact=wall, integrator=integrator)
    assert len(count.calls) == 1
    assert_same(a, b, tol=0.0)
    np.testing.assert_array_equal(a.contact_state, b.contact_state)
    np.testing.assert_array_equal(a.contact_forces, b.contact_forces)
    assert a.contact_forces.shape == (len(a), 2) and a.contact_state.max() > 1.0    # it pushed
    with pytest.warns(mb.SimulationWarning, match="non-finite") as caught:
        c, d = both(m, [0.3, 0.2], [-2.0, 0.0], 1.0, contact=FilteredWall(blow_up_at=-0.45), integrator=integrator)
    assert len(caught) == 2                                  # one warning a run
    assert c.status == d.status == "diverged" and len(c) == len(d)
    np.testing.assert_array_equal(c.q, d.q)



def test_implicit_damping_on_unit_axis_joints():
    """semi_implicit's damping rides in ABA as rotor inertia h·d on a copy of the model (rollout.c: md, the
    run's implicit armature) that the model compile never saw: the unit-axis hand-over chosen at compile
    (model.h: unit_handover) must still step aside for it.  A chain of z-axis revolute joints under URDF
    quarter turns (the Panda's layout), damped: the first step's q̈ against (M + h D) q̈ = −C − D q̇ by
    CRBA and RNEA (the law of MuJoCo's implicit damping), and the run against the Python stepper."""
    from multibody.model.urdf import rpy_to_rot
    b = mb.ModelBuilder("quarter turns", gravity=(0.0, 0.0, -9.81))
    for k in range(5):
        b.add_body(f"b{k}", f"b{k - 1}" if k else None, "revolute", axis=(0, 0, 1), mass=1.0 + 0.2 * k,
                   com=(0.05, 0.02 * k, 0.1), inertia=np.diag([0.02, 0.03, 0.01]),
                   joint_rotation=rpy_to_rot((-1) ** k * np.pi / 2, 0.0, 0.0), joint_translation=(0.0, -0.3, 0.0),
                   damping=2.0)
    m = b.build()
    h, q0, v0 = 1e-2, 0.3 * np.ones(5), np.array([1.0, -2.0, 0.5, 3.0, -1.0])
    tr = mb.simulate(m, q0, v0, h, dt=h, integrator="semi_implicit", limits="off")
    M, C = mb.crba(m, q0), mb.rnea(m, q0, v0, np.zeros(5))
    qdd = np.linalg.solve(M + h * np.diag(m.damping), -C - m.damping * v0)
    np.testing.assert_allclose(tr.qd[1], v0 + h * qdd, rtol=0, atol=1e-12)
    a, c = both(m, q0, np.zeros(5), 0.5, dt=1e-3, integrator="semi_implicit")
    assert_same(a, c)
