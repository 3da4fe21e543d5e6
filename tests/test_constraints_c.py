"""Loop and coupling constraints in C (csrc/sim/constraints.c) against the Python statement.

The Python evaluation of each kind (dynamics/constraints.py: TERMS) and its solve
(``ConstraintSet.reference_accelerations``: hand_c and kkt.c) are the reference; the C rows and the C
right-hand side must equal them to 1e-12 on random states, for every kind of fixed geometry — on the
four-bar, on an MJCF robot whose equalities are a connect (point), a weld, a polynomial joint
equality and a fixed-tendon equality (a free joint and a ball joint among its joints), and on the
MJCF fingers and four-bar of test_mjcf_constraints.  A redundant set keeps the Python path's
diagnostics and minimum-norm multipliers; sets with kinds that stay in Python are solved there; the
compiled loop integrates the C right-hand side to the trajectory of the Python callback's.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from reference_steppers import python_loop
from scipy.spatial.transform import Rotation

import multibody as mb
from multibody.core import _core
from multibody.dynamics.constraint_tables import constraint_tables, packed_table
from multibody.model.joints import JointType
from multibody.model.mjcf import MJCFWarning, load_mjcf
from multibody.simulation.closed_loops import flyer_constraints, four_bar, spatial_loop
from multibody.simulation.constraints import (AxisConstraint, ConstraintError, ConstraintSet, FunctionConstraint,
                                            JointCoupling, PointConstraint, TendonCoupling, WeldConstraint,
                                            gamma_q_partitioned, revolute_closure)
from multibody.simulation.system import System

from test_mjcf_constraints import FINGERS, FOUR_BAR, ROBOT

RNG = np.random.default_rng(11)


def load(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MJCFWarning)
        return load_mjcf(xml)


def random_state(model, scale=0.7):
    q = mb.random_configuration(model, rng=RNG) if model.nq != model.nv else scale * RNG.normal(size=model.nq)
    return q, RNG.normal(size=model.nv)


def robot():
    """The MJCF robot with a free root and a ball wrist, constrained by all four equality kinds."""
    model = load(ROBOT.replace("<option ", '<option><flag contact="disable"/></option><option '))
    assert {type(c) for c in model.constraints} == {JointCoupling, TendonCoupling, PointConstraint, WeldConstraint}
    assert {JointType.FREE, JointType.SPHERICAL} <= set(model.jtype)
    return model


def spatial_chain():
    """A skewed 4-link tree with points, axes with two directions against another body, and couplings."""
    model = mb.models.auto_tree(10, skew=0.6)
    cs = ConstraintSet(PointConstraint(7, [0.3, -0.2, 0.1], 2, [0.2, 0.4, -0.1], axes="zx"),
                       AxisConstraint(5, [0.2, 0.5, 1.0], 0, ([1.0, 0, 0], [0.3, 1.0, 0])),
                       AxisConstraint(9, [1.0, 0, 0], None, ([0, 0, 1.0],)),
                       JointCoupling(0, 4, ratio=-0.7, offset=0.2),
                       TendonCoupling({1: 0.5, 3: -1.0}, {6: 2.0}, polynomial=(0.1, -0.3, 0.8), reference=(0.05, -0.1)),
                       time_constant=0.05)
    return model, cs


def quadruped():
    """dm_control's quadruped: four fixed-tendon equalities (pitch + knee + ankle of each leg) on a branched
    tree under a free joint — kkt.c's sparse (LTL) solve with rows on a few joints each."""
    import os

    import dm_control
    model = load(os.path.join(os.path.dirname(dm_control.__file__), "suite", "quadruped.xml"))
    assert len(model.constraints) == 4 and {type(c) for c in model.constraints} == {TendonCoupling}
    return model


def sets():
    """(name, model, ConstraintSet) for every kind of fixed geometry."""
    bar, closure = four_bar()
    model, cs = spatial_chain()
    rob = robot()
    loop, ground_joint, _, _ = spatial_loop()
    fingers, mj_bar, quad = load(FINGERS), load(FOUR_BAR), quadruped()
    weld = ConstraintSet(WeldConstraint(8, [0.1, 0.2, 0.3], 2, [0.0, 0.1, -0.2],
                                        rotation_a=Rotation.from_rotvec([0.2, -0.1, 0.3]).as_matrix()), alpha=3.0, beta=7.0)
    return [("four-bar", bar, ConstraintSet(closure)), ("spatial chain", model, cs),
            ("weld", mb.models.auto_tree(10, skew=0.6), weld), ("spatial loop", loop, ConstraintSet(ground_joint)), ("MJCF robot", rob, ConstraintSet(*rob.constraints)),
            ("MJCF fingers", fingers, ConstraintSet(*fingers.constraints)),
            ("MJCF four-bar", mj_bar, ConstraintSet(*mj_bar.constraints, redundant="least_squares")),
            ("dm_control quadruped", quad, ConstraintSet(*quad.constraints))]


@pytest.mark.parametrize("name, model, cs", sets(), ids=lambda x: x if isinstance(x, str) else "")
def test_c_rows_equal_the_python_evaluation(name, model, cs):
    tables = cs.tables(model)
    assert tables is not None, name
    for _ in range(20):
        q, qd = random_state(model)
        ref = cs.evaluate(model, q, qd)
        c, cdot, J, bias = _core.constraint_rows(model._c, packed_table(*tables), q, qd)
        for ours, theirs in ((c, ref.c), (cdot, ref.cdot), (J, ref.J), (bias, ref.bias)):
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12 * max(1.0, np.abs(theirs).max()))
        # the curvature terms are there (not a vacuous comparison); a linear coupling has none
        assert np.abs(bias).max() > 1e-3 or name in ("MJCF fingers", "dm_control quadruped")


@pytest.mark.parametrize("name, model, cs", sets(), ids=lambda x: x if isinstance(x, str) else "")
def test_c_accelerations_equal_the_python_statement(name, model, cs):
    solved = 0
    for k in range(20):
        q, qd = random_state(model)
        tau = RNG.normal(size=model.nv)
        f_ext = RNG.normal(size=(model.nb, 6)) if k % 2 else None
        try:
            ref = cs.reference_accelerations(model, q, qd, tau, f_ext)
        except ConstraintError:          # a singular posture: the C path must say the same
            with pytest.raises(ConstraintError):
                cs.accelerations(model, q, qd, tau, f_ext)
            continue
        # 1e-12 relative to the largest entry, or the rounding the solve's conditioning allows: random
        # states of the MJCF robot, far off its weld and connect, come near singular ones (κ(J H⁻¹Jᵀ)
        # ~ 1e10: q̈ ~ 1e6), where the rows' last-bit differences (1e-16) grow by κ
        H = mb.crba(model, q)
        J = cs.evaluate(model, q, qd).J
        kappa = np.linalg.cond(J @ np.linalg.solve(H, J.T))
        tol = max(1e-12, 1e-16 * kappa) if np.isfinite(kappa) else 1e-12   # redundant: one statement, twice
        st, qdd, lam = _core.constrained_accelerations(model._c, packed_table(*cs.tables(model)), q, qd, tau, f_ext)
        ours = cs.accelerations(model, q, qd, tau, f_ext)
        if cs.redundant == "error":
            assert st == 0, name
            np.testing.assert_allclose(qdd, ours[0], rtol=0, atol=0)
            solved += 1
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1.0, np.abs(b).max()))
    assert solved >= 15 or cs.redundant != "error", name


def test_a_redundant_set_keeps_the_python_diagnostics_and_minimum_norm_multipliers():
    """A planar loop closed by a revolute joint (5 rows, rank 2: a Bricard-like redundant closure):
    the C solve reports J H⁻¹Jᵀ singular and the Python statement answers."""
    model = mb.models.auto_tree(4, skew=0.0)
    closure = revolute_closure(3, [1.0, 0, 0], [0, 0, 1], None, [1.5, 0.5, 0], [0, 0, 1])
    q, qd, tau = RNG.normal(size=4), RNG.normal(size=4), RNG.normal(size=4)
    st, _, _ = _core.constrained_accelerations(model._c, packed_table(*closure.tables(model)), q, qd, tau, None)
    assert st == 2
    with pytest.raises(ConstraintError, match=r"rows \[.*revolute.*\] are linearly dependent"):
        closure.accelerations(model, q, qd, tau)
    lsq = ConstraintSet(closure, redundant="least_squares")
    qdd, lam = lsq.accelerations(model, q, qd, tau)
    ref = lsq.reference_accelerations(model, q, qd, tau)
    np.testing.assert_allclose(qdd, ref[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(lam, ref[1], rtol=0, atol=1e-12)


def test_sets_with_kinds_that_stay_in_python_are_solved_there():
    bar, closure = four_bar()
    fn = FunctionConstraint(lambda q: np.array([q[0] - 2 * q[2]]), jacobian=lambda q: np.array([[1.0, 0, -2.0]]))
    assert ConstraintSet(closure, fn).tables(bar) is None
    flyer = mb.models.flapping_flyer().model
    cf = flyer_constraints()                              # a JointPath: φ(t) is a Python function
    assert cf.tables(flyer) is None
    q, qd, tau = np.array([0.3, 0.0, -0.2, -0.5, -0.5]), np.array([0.1, 0.0, 0.1, 0.0, 0.0]), np.zeros(5)
    a, b = cf.accelerations(flyer, q, qd, tau, t=0.3), cf.reference_accelerations(flyer, q, qd, tau, t=0.3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert ConstraintSet(PointConstraint("nope", [0, 0, 0])).tables(bar) is None   # the Python error names it
    with pytest.raises(ValueError, match="nope"):
        ConstraintSet(PointConstraint("nope", [0, 0, 0])).accelerations(bar, np.zeros(3), np.zeros(3), np.zeros(3))


def test_bad_tables_are_refused_by_name():
    bar, closure = four_bar()
    items, terms, coef, gains = constraint_tables(ConstraintSet(closure), bar)
    q = np.zeros(3)
    bad = items.copy()
    bad[0, 1] = 7                                          # no body 7
    with pytest.raises(ValueError, match="body index"):
        _core.constraint_rows(bar._c, packed_table(bad, terms, coef, gains), q, q)
    bad = items.copy()
    bad[0, 0] = 9
    with pytest.raises(ValueError, match="unknown kind"):
        _core.constraint_rows(bar._c, packed_table(bad, terms, coef, gains), q, q)
    with pytest.raises(ValueError, match="gains"):
        _core.constraint_rows(bar._c, packed_table(items, terms, coef, [1.0, np.inf, 0.0]), q, q)
    lin = constraint_tables(ConstraintSet(JointCoupling(0, 1)), bar)
    with pytest.raises(ValueError, match="linear item"):
        _core.constraint_rows(bar._c, packed_table(lin[0], lin[1][:1], lin[2], lin[3]), q, q)


def test_the_compiled_loop_integrates_the_c_right_hand_side(monkeypatch):
    """The four-bar and a spatial loop (a revolute closure: point and axis rows) for 0.5 s: the plan carries
    the C tables (no Python callback a stage) and the trajectory is the Python callback's."""

    class PythonSet(ConstraintSet):    # a subclass: solved by its own accelerations, called back
        def accelerations(self, model, q, qd, tau, f_ext=None, t=None):
            return self.reference_accelerations(model, q, qd, tau, f_ext, t)

    bar, closure = four_bar()
    q0, qd0, _, _ = gamma_q_partitioned(closure, [0])(bar, np.array([np.pi / 2, -1.0, -1.8]), np.array([2.0, 0, 0]))
    loop, ground_joint, q1, qd1 = spatial_loop()
    for model, q, qd, cons in ((bar, q0, qd0, (closure,)), (loop, q1, qd1, (ground_joint,))):
        cs = ConstraintSet(*cons)
        plan = System(model, constraints=cs).plan("rk4", callables=True)
        assert plan.constraints is not None and plan.callbacks.dynamics is not None   # C, Python where singular
        calls = []
        python_statement = ConstraintSet.reference_accelerations
        monkeypatch.setattr(ConstraintSet, "reference_accelerations",
                            lambda self, *a, **k: calls.append(1) or python_statement(self, *a, **k))
        ours = mb.simulate(model, q, qd, 0.5, dt=1e-3, constraints=cs)
        assert not calls                        # no stage took the Python statement
        monkeypatch.undo()
        theirs = mb.simulate(model, q, qd, 0.5, dt=1e-3, constraints=PythonSet(*cons))
        assert np.abs(ours.q[-1] - ours.q[0]).max() > 0.05                 # it moves
        np.testing.assert_allclose(ours.q, theirs.q, rtol=0, atol=1e-10)
        np.testing.assert_allclose(ours.qdd, theirs.qdd, rtol=0, atol=1e-8)
        c = np.array([cs.residual(model, a, b)[0] for a, b in zip(ours.q[::50], ours.qd[::50])])
        assert np.abs(c).max() < 1e-6


def test_a_redundant_set_in_the_compiled_loop_takes_the_python_minimum_norm_solve():
    model = load(FOUR_BAR)
    cs = ConstraintSet(*model.constraints, redundant="least_squares")
    q0, qd0 = model.default_state()
    qd0 = np.array([2.0, -2.0, 2.0])
    ours = mb.simulate(model, q0, qd0, 0.3, dt=1e-3, constraints=cs)
    with python_loop():   # the reference steppers, the Python statement at every stage
        theirs = mb.simulate(model, q0, qd0, 0.3, dt=1e-3, constraints=cs)
    np.testing.assert_allclose(ours.q, theirs.q, rtol=0, atol=1e-10)
    with pytest.raises(ConstraintError, match="linearly dependent"):
        mb.simulate(model, q0, qd0, 0.3, dt=1e-3, constraints=ConstraintSet(*model.constraints))


def test_a_batch_of_constrained_runs_goes_through_the_compiled_loop(monkeypatch):
    """simulate_batch with constraints of fixed geometry (given, or the model's own MJCF equalities)
    runs vectorised in C — no per-state simulate — and each run is its single run's."""
    from multibody.simulation import batch as batch_module

    bar, closure = four_bar()
    start = gamma_q_partitioned(closure, [0])
    states = [start(bar, np.array([a, -1.0, -1.8]), np.array([w, 0, 0])) for a, w in ((1.4, 2.0), (1.7, -1.0), (2.0, 0.5))]
    Q0, QD0 = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    fingers = load(FINGERS)
    F0 = np.tile(fingers.default_state()[0], (3, 1))
    FD0 = np.array([[1.0, -2.0, -1.6], [0.5, 1.0, 0.8], [-1.0, 0.0, 0.0]])
    cs = ConstraintSet(closure)
    singles = [[mb.simulate(bar, q, qd, 0.5, constraints=cs) for q, qd in zip(Q0, QD0)],
               [mb.simulate(fingers, q, qd, 0.5) for q, qd in zip(F0, FD0)]]

    def no_single_runs(*a, **k):
        raise AssertionError("simulate_batch fell back to one simulate per state")

    monkeypatch.setattr(batch_module, "simulate", no_single_runs)
    for out, runs in zip((mb.simulate_batch(bar, Q0, QD0, 0.5, constraints=cs),
                          mb.simulate_batch(fingers, F0, FD0, 0.5)), singles):
        assert all(s == "finished" for s in out.status)
        for i, run in enumerate(runs):
            np.testing.assert_allclose(out.q[i], run.q, rtol=0, atol=1e-12)
            assert np.abs(run.q[-1] - run.q[0]).max() > 0.05


def test_a_batch_whose_solve_turns_singular_raises_the_python_diagnostics():
    """The MJCF four-bar's planar loop (its y row ≡ 0): with the model's own set (redundant="error") a
    batch run's C solve is singular and the Python statement raises its diagnostics, as a single run
    does; with redundant="least_squares" each run is its single run (the minimum-norm solve)."""
    model = load(FOUR_BAR)
    Q0 = np.tile(model.default_state()[0], (2, 1))
    QD0 = np.array([[2.0, -2.0, 2.0], [1.0, -1.0, 1.0]])
    with pytest.raises(ConstraintError, match="linearly dependent"):
        mb.simulate_batch(model, Q0, QD0, 0.2)
    lsq = ConstraintSet(*model.constraints, redundant="least_squares")
    out = mb.simulate_batch(model, Q0, QD0, 0.2, constraints=lsq)
    for i in range(2):
        np.testing.assert_allclose(out.q[i], mb.simulate(model, Q0[i], QD0[i], 0.2, constraints=lsq).q, rtol=0,
                                   atol=1e-12)
