"""simulate()'s set-up on one Model: what depends only on the Model (the hard stops' events, M⁻¹ at
the neutral configuration, the model's constraint set and its C tables, the stop and actuator
tables) is built once per Model, and a run on the cached set-up is bit for bit a run on a fresh
Model (issue 33)."""
import dataclasses
import os
import threading
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.dynamics import constraint_tables as tables_module
from multibody.simulation import events as events_module


def chain():
    """planar(3) with stops on every joint, falling from the horizontal: many impacts and rests."""
    return dataclasses.replace(mb.models.planar(3), q_lower=np.array([-1.0, -0.4, -0.3]),
                               q_upper=np.array([0.5, 0.4, 0.3]), damping=np.array([0.0, 0.1, 0.0]),
                               friction=np.array([0.0, 0.0, 0.2]))


def run(m, **kw):
    return mb.simulate(m, [0.2, 0.3, -0.2], [0.0, 2.0, 0.0], 1.5, dt=1e-3, **kw)


def same(a, b):
    assert a.status == b.status
    assert [(e.name, e.t) for e in a.events] == [(e.name, e.t) for e in b.events]
    for k in ("t", "q", "qd", "qdd", "tau"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k


class Counter:
    def __init__(self, monkeypatch, owner, name):
        self.n = 0
        original = getattr(owner, name)

        def counted(*a, **kw):
            self.n += 1
            return original(*a, **kw)
        monkeypatch.setattr(owner, name, counted)


def test_a_second_run_on_a_model_builds_no_stop_event_and_no_neutral_inertia(monkeypatch):
    """The first run builds the stops' events (two per stop) and M⁻¹ at the neutral configuration; a
    second run on the same Model builds neither (before: 12 Events and a neutral() per call)."""
    m = chain()
    first = run(m)
    assert len(first.events) > 3   # it does reach its stops
    built = Counter(monkeypatch, events_module.Event, "__post_init__")
    neutral = Counter(monkeypatch, type(m), "neutral")
    second = run(m)
    assert built.n == 0 and neutral.n == 0
    same(first, second)


def test_runs_on_the_cached_set_up_are_bit_for_bit_runs_on_a_fresh_model():
    """Cached (second and third runs of one Model, RK4 and semi-implicit) against a run of a fresh copy
    of the Model (nothing cached), and a batch (its handed-back runs take the cached events too)."""
    m = chain()
    for integrator in ("rk4", "semi_implicit"):
        run(m, integrator=integrator)
        cached = run(m, integrator=integrator)
        fresh = run(chain(), integrator=integrator)
        same(cached, fresh)
    Q0 = np.array([[0.2, 0.3, -0.2], [0.1, -0.3, 0.25]])
    batch = mb.simulate_batch(m, Q0, np.zeros((2, 3)), 1.0, dt=1e-3)
    for i in range(2):
        single = mb.simulate(chain(), Q0[i], np.zeros(3), 1.0, dt=1e-3)
        assert len(single.events) > 3
        same(batch[i], single)
    same(run(m), run(chain()))


def test_a_run_inside_a_run_of_the_same_model_gets_stop_events_of_its_own():
    """A controller that runs a simulation of the same Model while its own run is going (the outer
    run holds the Model's stop events): the inner run builds its own set, and neither run changes."""
    m = chain()
    plain = run(m, controller=lambda t, q, qd: np.zeros(3))
    inner = []

    def controller(t, q, qd):
        if not inner and t >= 0.4:
            inner.append(run(m))
        return np.zeros(3)
    nested = run(m, controller=controller)
    same(plain, nested)
    same(inner[0], run(chain()))


def test_runs_on_threads_share_one_model():
    """Four threads run the same Model at once: each takes a stop-event set nobody else holds, and
    each run is the single run's."""
    m = chain()
    reference = run(chain())
    out = [None] * 4

    def work(i):
        out[i] = run(m)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for tr in out:
        same(tr, reference)


def test_the_model_constraint_set_and_its_tables_are_built_once_per_model(monkeypatch):
    """dm_control's quadruped carries tendon couplings (its <equality>): its ConstraintSet and the C
    tables of it were built anew in every simulate call."""
    import dm_control   # (a test dependency: CI installs it, so a missing one fails)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mb.load_mjcf(os.path.join(os.path.dirname(dm_control.__file__), "suite", "quadruped.xml"))
    assert m.constraints
    first = mb.simulate(m, None, None, 0.02, dt=0.005)
    built = Counter(monkeypatch, tables_module, "constraint_tables")
    from multibody.dynamics import constraints as constraints_module
    monkeypatch.setattr(constraints_module, "constraint_tables", tables_module.constraint_tables)
    second = mb.simulate(m, None, None, 0.02, dt=0.005)
    assert built.n == 0
    same(first, second)
    import pickle
    same(mb.simulate(pickle.loads(pickle.dumps(m)), None, None, 0.02, dt=0.005), first)   # the caches travel


def test_a_model_with_its_cached_set_up_still_pickles_and_its_copy_runs_the_same():
    """A Model goes to other processes (simulate_batch's process executors, dask) by pickle: the
    cached stop events are closures, so they travel as an empty pool and the copy builds its own."""
    import pickle
    m = chain()
    first = run(m)
    copy = pickle.loads(pickle.dumps(m))
    assert len(copy.__dict__.get("_stop_event_sets", ())) == 0
    same(run(copy), first)
