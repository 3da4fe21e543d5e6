"""Batches on threads (csrc/py/py_batch.c): the threads claim blocks of states in order from a shared
counter, and a compiled batch's records are filled on the thread that runs each run.

Whatever the thread count, a batch gives the same numbers and reports the same first failure as
on one thread; rows a batch's run does not reach are NaN, filled by the C loop (the caller
allocates the records untouched)."""
from dataclasses import replace

import numpy as np
import pytest

import multibody as mb
from multibody.core import _core
from multibody.simulation.rollout import Callbacks, Contact, Control, Passive, Plan, Record, Run, Stops


@pytest.fixture
def restore_threads():
    threads = mb.get_num_threads()
    yield
    mb.set_num_threads(threads)


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
@pytest.mark.parametrize("bad_q, bad_qd", [(100, 900), (900, 100), (3, 4), (996, 995)])
def test_the_lowest_failing_state_is_reported(threads, bad_q, bad_qd, restore_threads):
    """Two states fail differently (a zero quaternion, a NaN rate); the error is always the lower
    one's, as one thread would report it, wherever the blocks fall."""
    m = mb.models.singlebody()
    N = 1000
    Q, QD, TAU = np.tile(m.neutral(), (N, 1)), np.zeros((N, 6)), np.zeros((N, 6))
    Q[bad_q, 3:7] = 0.0
    QD[bad_qd, 0] = np.nan
    mb.set_num_threads(threads)
    word = "quaternion" if bad_q < bad_qd else "qd: contains NaN"
    with pytest.raises(ValueError, match=word):
        mb.aba(m, Q, QD, TAU)


@pytest.mark.parametrize("threads", [2, 3])
def test_a_batch_on_threads_equals_its_single_runs(threads, restore_threads):
    """19 runs (two groups of the widest lanes and a partial one, blocks of one group each): every run
    is bit for bit its single mb.simulate, and the batch its one-thread batch."""
    m = mb.models.double_pendulum()
    rng = np.random.default_rng(3)
    Q0, QD0 = 0.5 * rng.normal(size=(19, 2)), rng.normal(size=(19, 2))
    mb.set_num_threads(1)
    one = mb.simulate_batch(m, Q0, QD0, 0.05, integrator="rk4")
    mb.set_num_threads(threads)
    batch = mb.simulate_batch(m, Q0, QD0, 0.05, integrator="rk4")
    for k in ("q", "qd", "qdd", "tau"):
        np.testing.assert_array_equal(getattr(batch, k), getattr(one, k))
    for i in (0, 8, 18):
        single = mb.simulate(m, Q0[i], QD0[i], 0.05, integrator="rk4")
        np.testing.assert_array_equal(batch[i].q, single.q)
        np.testing.assert_array_equal(batch[i].qdd, single.qdd)


PLAN = Plan(Control(), None, Passive(), Stops(), Contact(), Callbacks())
RUN = Run(integrator=2, t0=0.0, t_final=0.004, dt=1e-3, one_step=None, held0=None, n_sample0=0, Z0=None,
          record=Record(1, True))
CONTACT = (np.array([1]), np.zeros((1, 3)), 3, 1e4, 10.0, 0.5)   # a point on the second link: 2 states


def zero_outputs(N, R, contact=False):
    """The records of N double-pendulum runs of R rows, all 0.0 (not NaN) to start."""
    outs = dict(T=np.zeros((N, R)), Q=np.zeros((N, R, 2)), QD=np.zeros((N, R, 2)), QDD=np.zeros((N, R, 2)),
                TAU=np.zeros((N, R, 2)), Y_END=np.zeros((N, 4 + 2 * contact)), info=np.zeros((N, 4)))
    if contact:
        outs.update(Z=np.zeros((N, R, 2)), F=np.zeros((N, R, 1, 3)))
    return outs


@pytest.mark.parametrize("threads", [1, 2])
def test_the_c_loop_fills_the_rows_a_run_does_not_reach(threads, restore_threads):
    """The entry point fills a batch's records with NaN before its runs write them: the rows past
    each run's count are NaN (with contact states and forces too); a single run's are left as they
    were (0.0 here), unless it has hard stops."""
    m = mb.models.double_pendulum()
    mb.set_num_threads(threads)
    R = 9                                                    # 5 samples written, 4 rows to spare
    for contact in (False, True):
        N = 4
        outs = zero_outputs(N, R, contact)
        plan, run = (replace(PLAN, contact=Contact(ground=CONTACT)), replace(RUN, Z0=np.zeros((N, 2)))) if contact \
            else (PLAN, RUN)
        _core.rollout(m._c, np.full((N, 2), 0.3), np.zeros((N, 2)), outs, plan, run)
        assert (outs["info"][:, :2] == [5, 0]).all()
        for k in ("T", "Q", "QD", "QDD", "TAU") + (("Z", "F") if contact else ()):
            assert np.isfinite(outs[k][:, :5]).all(), k
            assert np.isnan(outs[k][:, 5:]).all(), k
    one = zero_outputs(1, R)
    _core.rollout(m._c, np.full((1, 2), 0.3), np.zeros((1, 2)), one, PLAN, RUN)
    assert (one["Q"][0, 5:] == 0.0).all()                   # unset: as the caller left them
    stops = np.array([[0.0, 0.0, 3.0, 1.0]])                 # a hard stop far from the run's path
    one = zero_outputs(1, R)
    _core.rollout(m._c, np.full((1, 2), 0.3), np.zeros((1, 2)), one, replace(PLAN, stops=Stops(rows=stops)), RUN)
    assert np.isnan(one["Q"][0, 5:]).all() and np.isfinite(one["Q"][0, :5]).all()


def test_a_run_refused_at_its_start_keeps_nan_rows(restore_threads):
    """A batch run whose start fails its checks writes nothing: all its rows are NaN, the others run."""
    m = mb.models.double_pendulum()
    mb.set_num_threads(2)
    outs = zero_outputs(3, 9)
    Q0 = np.full((3, 2), 0.3)
    QD0 = np.zeros((3, 2))
    QD0[1, 0] = np.inf
    _core.rollout(m._c, Q0, QD0, outs, PLAN, RUN)
    assert outs["info"][1, 0] == 0 and outs["info"][1, 1] > 0
    assert np.isnan(outs["Q"][1]).all() and np.isnan(outs["T"][1]).all()
    assert np.isfinite(outs["Q"][[0, 2], :5]).all()


def test_the_records_are_allocated_as_the_cores_large_outputs():
    """run_compiled's records come from _core.output_array: uninitialised, and large ones from the
    core's reuse handler (no huge-page advice; a freed record's block serves the next of its size)."""
    try:  # NumPy ≥ 2
        from numpy._core.multiarray import get_handler_name
    except ImportError:  # pragma: no cover - NumPy 1.x
        from numpy.core.multiarray import get_handler_name
    m = mb.models.double_pendulum()
    batch = mb.simulate_batch(m, np.full((200, 2), 0.3), np.zeros((200, 2)), 1.0)   # Q: 200 · 1005 · 2 doubles
    assert get_handler_name(batch.q.base) == "multibody_reuse_large_outputs"
    assert get_handler_name(_core.output_array((2, 3))) == get_handler_name(np.empty(3))   # small: NumPy's
    assert _core.output_array((4, 0, 2)).shape == (4, 0, 2)
    with pytest.raises(TypeError, match="shape: expected a tuple"):
        _core.output_array([3])
    for bad in ((3, -1), (3, "a")):
        with pytest.raises(ValueError, match="shape: expected sizes >= 0"):
            _core.output_array(bad)


def test_a_loop_of_batches_reuses_the_records_blocks():
    """A batch dropped before the next of its size hands its records' blocks to that one (no fresh
    pages to touch), and the new batch's numbers are its own."""
    m = mb.models.double_pendulum()
    Q0, QD0 = np.full((200, 2), 0.3), np.zeros((200, 2))
    _core.release_output_memory()
    first = mb.simulate_batch(m, Q0, QD0, 1.0)
    blocks = {a.base.__array_interface__["data"][0] for a in (first.q, first.qd, first.qdd, first.tau)}
    keep = first.q.copy()
    del first
    assert _core.kept_output_bytes() >= 4 * keep.nbytes
    second = mb.simulate_batch(m, Q0 + 0.1, QD0, 1.0)
    assert {a.base.__array_interface__["data"][0] for a in (second.q, second.qd, second.qdd, second.tau)} == blocks
    np.testing.assert_array_equal(mb.simulate_batch(m, Q0, QD0, 1.0).q, keep)
    np.testing.assert_array_equal(second[7].q, mb.simulate(m, Q0[7] + 0.1, QD0[7], 1.0).q)
    _core.release_output_memory()
