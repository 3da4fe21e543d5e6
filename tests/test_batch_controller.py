"""simulate_batch under a Python controller of the whole batch, ``controller(t, Q (N, nq), QD (N, nv))
-> (N, nv)``: the runs advance in csrc/sim/rollout.c (the one fixed-step loop), which calls the
controller once a stage with every run still going, and must give the reference loop's batch
(tests/reference_loops.py, the Python loop the library had) bit for bit: the same operations
(stage states, the controller's τ, damping, ABA in the same order on the same numbers)."""
import dataclasses
from dataclasses import replace

import numpy as np
import pytest

import multibody as mb
from multibody.core import _core
from multibody.simulation import rollout
from multibody.simulation.rollout import FIXED_STEP
from multibody.simulation.system import System

import reference_loops
from test_rollout import _lane_kinds as lane_kinds

INTEGRATORS = list(FIXED_STEP)   # every row of rollout.c's stepper table


def reference(model, Q0, QD0, t_final, controller, dt=1e-3, integrator="rk4", record_every=1, f_ext=None):
    system = System(model, controller, f_ext)
    if integrator == "semi_implicit":   # its damping implicit, as simulate_batch sets it up
        system.implicit_damping(dt)
    return reference_loops.batch_loop(system, Q0, QD0, t_final, dt, integrator, record_every)


def assert_identical(a, b):
    assert a.status == b.status and a.messages == b.messages
    for k in ("t", "q", "qd", "qdd", "tau"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


def pd_batch(kp, kd, q_ref):
    """A PD written for the batch: numpy on the (N, nv) rows."""
    return lambda t, Q, QD: kp * (q_ref - Q) - kd * QD


class CountingController:
    """A PD that logs every call (t, rows): the handshake that proves one call per stage."""

    def __init__(self):
        self.calls = []

    def __call__(self, t, Q, QD):
        self.calls.append((float(t), Q.shape[0]))
        return 30.0 * (0.4 - Q) - 3.0 * QD


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_the_compiled_loop_gives_the_reference_loops_batch(integrator):
    """Double pendulum, 7 runs: plain; with damping, a constant f_ext, record_every and t_final off
    the grid; one run alone."""
    m = mb.models.double_pendulum()
    Q0 = np.pi / 4 + 0.01 * np.arange(7)[:, None] * [1.0, -1.0]
    QD0 = 0.1 * np.arange(14).reshape(7, 2)
    pd = pd_batch(np.array([20.0, 10.0]), np.array([2.0, 1.0]), np.array([0.3, -0.2]))
    a = mb.simulate_batch(m, Q0, QD0, 0.5, integrator=integrator, controller=pd)
    assert_identical(a, reference(m, Q0, QD0, 0.5, pd, integrator=integrator))
    assert a.q.shape == (7, 501, 2) and np.all(np.isfinite(a.tau))
    md = dataclasses.replace(m, damping=np.array([0.05, 0.02]))
    f = np.zeros((m.nb, 6))
    f[1] = [0.0, 0.0, 0.3, 0.1, -0.2, 0.0]
    b = mb.simulate_batch(md, Q0, QD0, 0.5123, integrator=integrator, controller=pd, f_ext=f, record_every=4)
    assert_identical(b, reference(md, Q0, QD0, 0.5123, pd, integrator=integrator, f_ext=f, record_every=4))
    assert b.t[-1] == 0.5123 and not np.array_equal(b.q[:, -1], mb.simulate_batch(
        md, Q0, QD0, 0.5123, integrator=integrator, controller=pd, record_every=4).q[:, -1])  # f_ext acts
    one = mb.simulate_batch(m, Q0[2:3], QD0[2:3], 0.3, integrator=integrator, controller=pd)
    assert_identical(one, reference(m, Q0[2:3], QD0[2:3], 0.3, pd, integrator=integrator))


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_quaternion_runs_give_the_reference_loops_batch(integrator):
    """A free body (CF4 for RK4, mb.integrate on the quaternion), started from unnormalised quaternions."""
    s = mb.models.singlebody()
    rng = np.random.default_rng(5)
    Q0 = np.tile(s.neutral(), (5, 1))
    Q0[:, 3:7] = rng.normal(size=(5, 4)) * 3.0                 # normalised by both loops
    QD0 = rng.normal(size=(5, 6))
    damp = lambda t, Q, QD: -0.5 * QD + 0.1 * np.sin(t)        # noqa: E731
    a = mb.simulate_batch(s, Q0, QD0, 0.2, integrator=integrator, controller=damp, record_every=3)
    assert_identical(a, reference(s, Q0, QD0, 0.2, damp, integrator=integrator, record_every=3))
    assert np.max(np.abs(np.linalg.norm(a.q[:, :, 3:7], axis=-1) - 1.0)) < 1e-12


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_the_controller_is_called_once_a_stage_with_every_run(integrator):
    """60 runs, 0.05 s at 1 ms: one call per stage (4 per RK4 step, 1 per Euler step) with all 60 rows,
    plus one at t_final for the final sample's τ — the reference loop's calls, in its order."""
    m = mb.models.double_pendulum()
    Q0 = np.linspace(-0.5, 0.5, 120).reshape(60, 2)
    c, r = CountingController(), CountingController()
    a = mb.simulate_batch(m, Q0, np.zeros((60, 2)), 0.05, integrator=integrator, controller=c)
    assert_identical(a, reference(m, Q0, np.zeros((60, 2)), 0.05, r, integrator=integrator))
    stages = {row[0]: row[2] for row in _core.steppers()}[integrator]   # (rollout.c's table)
    assert len(c.calls) == 50 * stages + 1 and {rows for _t, rows in c.calls} == {60}
    assert c.calls == r.calls
    row = {row[0]: row for row in _core.steppers()}[integrator]
    nodes = row[7] if row[7] is not None else ((0.0, 0.5, 0.5, 1.0) if stages == 4 else (0.0,))   # the stages' c_i
    assert c.calls[:stages] == [(0.0 + ci * 1e-3, 60) for ci in nodes]


def hang_or_blow_up():
    """Double pendulum runs near hanging (−π/2) and runs a controller drives unstable (anti-damping
    beyond 0.3 rad from hanging), which blow up at different steps."""
    hang = -np.pi / 2

    def controller(t, Q, QD):
        return 40.0 * QD * (np.abs(Q[:, :1] - hang) > 0.3)
    Q0 = np.zeros((6, 2))
    Q0[:, 0] = hang + np.array([0.01, 0.5, 0.1, 1.0, 0.05, 0.8])
    return mb.models.double_pendulum(), Q0, np.zeros((6, 2)), controller


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_runs_that_diverge_stop_and_the_others_go_on(integrator):
    m, Q0, QD0, controller = hang_or_blow_up()
    logs = [[], []]

    def logged(log):
        def call(t, Q, QD):
            log.append((t, Q.shape[0]))
            return controller(t, Q, QD)
        return call
    a = mb.simulate_batch(m, Q0, QD0, 2.0, dt=1e-2, integrator=integrator, controller=logged(logs[0]), record_every=3)
    assert_identical(a, reference(m, Q0, QD0, 2.0, logged(logs[1]), dt=1e-2, integrator=integrator, record_every=3))
    assert a.status == ["finished", "diverged", "finished", "diverged", "finished", "diverged"]
    assert all(msg.startswith("the state became non-finite in the step from t = ") for msg in a.messages[1::2])
    log = logs[0]
    assert log == logs[1] and log[0] == (0.0, 6)             # the same calls with the same rows
    end = len(log) - 1 - log[::-1].index((2.0, 3))          # the finished runs' final sample: one call
    rows = [n for _t, n in log[:end]]                        # while stepping, the rows fall as runs die
    assert sorted(rows, reverse=True) == rows and rows[-1] == 3
    assert all(n == 1 for _t, n in log[end + 1:])            # a diverged run's last sample whose q̈ overflowed
    for i in (1, 3, 5):                          # each keeps its samples up to its last finite state
        run = a[i]
        assert run.status == "diverged" and len(run) < len(a.t) and np.all(np.isfinite(run.q))
        t_from = float(a.messages[i].split("t = ")[1].split(";")[0])
        assert run.t[-1] <= t_from and np.all(np.isnan(a.q[i, np.searchsorted(a.t, t_from) + 1:]))
    assert np.all(np.isfinite(a.q[0::2])) and np.all(np.isfinite(a.tau[0::2]))


@pytest.fixture
def restore_lanes():
    before = _core.use_lanes("none")
    _core.use_lanes(before)
    yield
    _core.use_lanes(before)


def test_lanes_or_none_the_same_bits(restore_lanes):
    """The batch's forward dynamics in every kind of SIMD lanes or run by run: the same batch."""
    m = mb.models.double_pendulum()
    Q0 = np.linspace(-1.0, 1.0, 22).reshape(11, 2)           # 11 runs: not a multiple of any lanes' width
    pd = pd_batch(np.array([20.0, 10.0]), np.array([2.0, 1.0]), np.array([0.3, -0.2]))
    out = {}
    for kind in ["none", *lane_kinds()]:
        _core.use_lanes(kind)
        out[kind] = mb.simulate_batch(m, Q0, np.zeros((11, 2)), 0.2, controller=pd)
    for kind in out:
        assert_identical(out[kind], out["none"])


def test_a_controller_that_returns_a_wrong_shape_nan_or_raises_is_named():
    m = mb.models.double_pendulum()
    Q0, QD0 = np.full((4, 2), 0.3), np.zeros((4, 2))

    def late_nan(t, Q, QD):
        tau = -QD
        if t >= 0.0125:
            tau[2, 1] = np.nan
        return tau

    def raises(t, Q, QD):
        if t > 0.01:
            raise KeyError("gone")
        return -QD
    cases = [(lambda t, Q, QD: np.zeros((4, 3)), r"controller: in a batch it is called with \(t, Q \(N, nq\), QD "
              r"\(N, nv\)\) and must return \(N, nv\) = \(4, 2\); got shape \(4, 3\)"),
             (lambda t, Q, QD: np.zeros(3), r"must return \(N, nv\) = \(4, 2\); got shape \(3,\)"),
             (late_nan, r"controller: returned NaN or inf at t = 0\.0125")]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            mb.simulate_batch(m, Q0, QD0, 0.05, controller=bad)
    # text is named as what it is (it was "could not convert string to float")
    with pytest.raises(TypeError, match=r"controller: expected an array of numbers, got dtype <U2 \(returned at t = 0.0\)"):
        mb.simulate_batch(m, Q0, QD0, 0.05, controller=lambda t, Q, QD: "no")
    # an exception is wrapped with the time, as simulate does, and keeps its cause
    with pytest.raises(ValueError, match=r"controller: raised KeyError: 'gone' \(at t = 0\.01") as err:
        mb.simulate_batch(m, Q0, QD0, 0.05, controller=raises)
    assert isinstance(err.value.__cause__, KeyError)
    broadcast = mb.simulate_batch(m, Q0, QD0, 0.05, controller=lambda t, Q, QD: np.array([0.5, -0.5]))
    assert np.all(broadcast.tau == [0.5, -0.5])      # one τ (nv,) for every run, as before


def test_control_batch_is_checked_by_the_compiled_entry():
    """rollout's control_batch setting: a function, without kp, hard stops or one_step; a τ of the wrong
    size or not finite from it is an error naming the controller."""
    m = mb.models.double_pendulum()
    plan = System(m, lambda t, Q, QD: -QD).plan("rk4", batch=True)
    assert plan.control.call_batch is not None       # the batch's own function, called once a stage
    Q0, QD0 = np.zeros((3, 2)), np.zeros((3, 2))
    for call, message in ((lambda t, Q, QD: np.zeros((3, 3)), r"controller: in a batch it must return \(N, nv\) "
                           r"= \(3, 2\) numbers; got 9"),
                          (lambda t, Q, QD: np.full((3, 2), np.inf), r"controller: returned NaN or inf at t = 0\.0")):
        with pytest.raises(ValueError, match=message):
            rollout.run_compiled(m, replace(plan, control=replace(plan.control, call_batch=call)), Q0, QD0, 0.01, 1e-3,
                                 "rk4", 1, False)
    for bad in (replace(plan.control, call_batch=3.0), replace(plan.control, period=0.01)):
        bad = replace(plan, control=bad)
        with pytest.raises(ValueError, match="control_batch: expected a Python function"):
            rollout.run_compiled(m, bad, Q0, QD0, 0.01, 1e-3, "rk4", 1, False)


def test_a_sampled_controller_the_loop_cannot_hold_runs_per_state_and_keeps_its_hold():
    """An mb.PD with a callable reference and a period: each run is its simulate (zero-order hold),
    not a batch loop that would call it at every stage (which ignored the period before)."""
    m = mb.models.double_pendulum()
    Q0 = np.array([[0.3, 0.1], [0.5, -0.2], [0.1, 0.4]])
    sampled = mb.PD(kp=[20.0, 10.0], kd=[2.0, 1.0], q_ref=lambda t: np.array([0.3 * np.sin(5 * t), 0.0]),
                    period=0.02)
    batch = mb.simulate_batch(m, Q0, np.zeros((3, 2)), 0.3, controller=sampled)
    for i in range(3):
        one = mb.simulate(m, Q0[i], [0.0, 0.0], 0.3, controller=sampled)
        np.testing.assert_array_equal(batch[i].q, one.q)
        np.testing.assert_array_equal(batch[i].tau, one.tau)
    assert np.array_equal(batch.tau[0, 0], batch.tau[0, 19]) and not np.array_equal(batch.tau[0, 0], batch.tau[0, 20])
