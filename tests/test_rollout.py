"""The compiled fixed-step loop (core/rollout.c) against the Python loop of mb.simulate.

Every case runs twice — ``rollout.USE_COMPILED`` on (the whole run in C) and off (the Python
stepper calling the ABA kernel per stage) — and the trajectories must agree to 1e-12: same
samples, same times, same q, q̇, q̈ and τ.  Batches must equal single runs exactly."""
import dataclasses
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.simulation import rollout
from multibody.simulation.system import System

INTEGRATORS = ["euler", "semi_implicit", "rk4"]


def plan(m, integrator, controller, f_ext=None, events=()):
    """The compiled plan of a run (None: the Python loop)."""
    return System(m, controller, f_ext).plan(integrator, events)


def both(*args, **kw):
    """(compiled, python) trajectories of the same mb.simulate call."""
    compiled = mb.simulate(*args, **kw)
    rollout.USE_COMPILED = False
    try:
        python = mb.simulate(*args, **kw)
    finally:
        rollout.USE_COMPILED = True
    return compiled, python


def assert_same(a, b, tol=1e-12):
    assert a.status == b.status and len(a) == len(b)
    np.testing.assert_array_equal(a.t, b.t)
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
    assert plan(m, "rk4", lambda t, q, qd: np.zeros(2), None) is None
    assert plan(m, "rk45", None, None) is None
    assert plan(m, "rk4", None, None, events=(mb.Event(lambda t, q, qd: q[0]),)) is None


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
    pd = mb.PD(kp=1e9, kd=0.0, q_ref=[1.0, 0.0])
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
    pd = mb.PD(kp=1e9, kd=0.0, q_ref=[1.0, 0.0])
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
    """The C entry point itself refuses bad arrays with named errors (no crash)."""
    from multibody.core import _core
    m = mb.models.double_pendulum()
    Z = np.zeros((1, 2))
    T, Q = np.zeros((1, 5)), np.zeros((1, 5, 2))
    args = [m._c, 2, Z, Z, 0.004, 1e-3, 1, 1, 0.0, None, None, None, None, None, None, None, None,
            T, Q, Q.copy(), Q.copy(), Q.copy(), np.zeros((1, 4))]
    _core.rollout(*args)
    assert np.isfinite(Q).all()
    for k, bad, word in ((1, 7, "integrator"), (5, -1.0, "dt"), (6, 0, "record_every"),
                         (2, np.zeros((1, 3)), "Q0"), (18, np.zeros((1, 5, 3)), "Q"),
                         (15, np.full((2, 6), np.nan), "f_ext")):
        bad_args = list(args)
        bad_args[k] = bad
        with pytest.raises(ValueError, match=word):
            _core.rollout(*bad_args)
    with pytest.raises(TypeError, match="23 arguments"):
        _core.rollout(*args[:5])


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
