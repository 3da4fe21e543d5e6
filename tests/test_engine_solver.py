"""The engine's default solver, 'auto': exact pivoting for small steps, the quick step for large
ones, and a pivot budget so that no step stalls (issue 20, item 1).

Work is read from ``last_step`` (pivots, quick-step sweeps), never from the clock.
"""
import math

import numpy as np
import pytest

import multibody as mb
from multibody import engine as E
from multibody.engine.world import EXACT_ROWS, matrix_to_quat


def resting_pile(n=20, **kw):
    """n boxes of 0.2 m resting on the floor in a grid, four contacts each from the first step."""
    world = E.World(**kw)
    world.add_geom(E.Plane((0, 0, 1), 0.0))
    for i in range(n):
        x, y = (i % 5) * 0.3, (i // 5) * 0.3
        world.add_body(E.Box(0.2, 0.2, 0.2), mass=1.0, position=(x, y, 0.0999), mu=0.8)
    return world


def box_on_slope(degrees=20.0, mu=0.5, **kw):
    a = math.radians(degrees)
    n = np.array([-math.sin(a), 0, math.cos(a)])
    world = E.World(**kw)
    world.add_geom(E.Plane(n, 0.0), mu=mu)
    R = np.array([[math.cos(a), 0, -math.sin(a)], [0, 1, 0], [math.sin(a), 0, math.cos(a)]])
    world.add_body(E.Box(0.2, 0.2, 0.2), mass=1.0, position=n * 0.1, quaternion=matrix_to_quat(R), mu=mu)
    return world


def colliding_pendulum(**kw):
    """The report's appendix C.5 scene (multibody.engine.report.colliding_pendulum)."""
    world = E.World(gravity=(0, 0, -9.8), bounce_vel=0.0, **kw)
    link = world.add_body(E.Box(1.0, 0.1, 0.1), mass=1.0, position=(1.5, 0, 3), bounce=1.0)
    world.add_hinge(link, None, anchor=(1, 0, 3), axis=(0, 1, 0))
    world.add_geom(E.Box(1.8, 2.0, 5.5), None, bounce=1.0)
    return world


def double_pendulum(**kw):
    return E.World.from_model(mb.models.double_pendulum(), np.array([math.pi / 4, -math.pi / 4]), **kw)


def chain(n=10, factor_trees=True, **kw):
    world = E.World(contacts=False, **kw)
    world.factor_trees = factor_trees
    prev = None
    for i in range(n):
        body = world.add_body(E.Box(0.3, 0.05, 0.05), mass=1.0, position=(0.3 * (i + 0.5), 0, 0))
        world.add_hinge(body, prev, anchor=(0.3 * i, 0, 0), axis=(0, 1, 0))
        prev = body
    return world


def steps(world, n):
    """Step n times, yielding last_step after each."""
    for _ in range(n):
        world.step()
        yield world.last_step


def test_auto_is_the_default_and_the_threshold_is_the_measured_one():
    world = E.World()
    assert world.solver == "auto" and world.exact_rows == EXACT_ROWS == 48
    assert world.max_pivots > 0


def test_a_small_scene_pivots_exactly_and_a_large_pile_takes_the_quick_step():
    small = box_on_slope()
    last = list(steps(small, 5))[-1]
    assert len(last.lam) == 12 and last.solver == "dantzig" and last.fallback == 0
    assert last.pivots > 0 and last.iterations == 0 and "auto" in last.why and "<= exact_rows" in last.why
    pile = resting_pile(20)
    last = list(steps(pile, 5))[-1]
    assert last.n_contacts == 80 and len(last.lam) == 240
    assert last.solver == "pgs" and last.fallback == 0 and "rows > exact_rows" in last.why
    assert last.pivots == 0 and 1 <= last.iterations < pile.iterations       # resting: it converged early


def test_twenty_box_pile_with_defaults_does_bounded_work_every_step():
    # the old default pivoted 240 rows here: thousands of pivots, each refactoring A_CC (2.8 s a step)
    world = resting_pile(20)
    for last in steps(world, 200):
        assert last.pivots <= world.max_pivots and last.iterations <= world.iterations
        if len(last.lam) > world.exact_rows:
            assert last.solver == "pgs" and last.pivots == 0
    z = np.array([b.position[2] for b in world.bodies])
    assert np.all(np.abs(z - 0.1) < 2e-3)                           # and the pile rests


def test_asked_for_pivoting_stops_at_max_pivots_and_the_quick_step_takes_over():
    world = resting_pile(20, solver="dantzig", max_pivots=100)
    world.step()
    last = world.last_step
    assert last.fallback == 5 and last.pivots == 100 and last.solver == "pgs" and "max_pivots" in last.why
    assert 1 <= last.iterations <= world.iterations and np.all(np.isfinite(last.lam))
    # the same budget on a box alone: a step of 12 rows pivots about 15 times per friction pass
    small = box_on_slope(solver="dantzig", max_pivots=3)
    small.step()
    assert small.last_step.fallback == 5 and small.last_step.pivots == 3
    roomy = box_on_slope(solver="dantzig")
    roomy.step()
    assert roomy.last_step.fallback == 0 and 3 < roomy.last_step.pivots <= roomy.max_pivots


@pytest.mark.parametrize("make, n", [(box_on_slope, 700), (colliding_pendulum, 600), (double_pendulum, 1000),
                                     (chain, 500)], ids=["box on slope", "colliding pendulum", "double pendulum",
                                                         "10-link chain"])
def test_report_scenes_keep_the_exact_solve_bit_for_bit(make, n):
    auto, exact = make(), make(solver="dantzig")
    whys = set()
    for a, e in zip(steps(auto, n), steps(exact, n)):
        assert a.solver == e.solver == "dantzig" and a.fallback == 0
        whys.add(a.why)
        np.testing.assert_array_equal(a.lam, e.lam)
    np.testing.assert_array_equal(auto._state, exact._state)
    assert any("auto" in w or "tree" in w or "no constraint rows" in w for w in whys)
    if make is colliding_pendulum:
        assert any("rows <= exact_rows" in w for w in whys)            # the wall was hit


def test_equality_rows_pivot_up_to_twice_exact_rows_and_trees_at_any_size():
    dense = list(steps(chain(10, factor_trees=False), 3))[-1]           # 50 rows, one factorization
    assert dense.solver == "dantzig" and not dense.tree and "equality rows only" in dense.why
    assert dense.pivots == 0
    big = list(steps(chain(30, factor_trees=False), 3))[-1]             # 150 rows > 96
    assert big.solver == "pgs" and "equality rows only but rows > 2 exact_rows" in big.why
    tree = list(steps(chain(30), 3))[-1]
    assert tree.solver == "dantzig" and tree.tree and "tree" in tree.why


def test_exact_rows_moves_the_threshold():
    world = box_on_slope(exact_rows=11)
    last = list(steps(world, 5))[-1]
    assert len(last.lam) == 12 and last.solver == "pgs"
    world.exact_rows = 12
    assert list(steps(world, 1))[-1].solver == "dantzig"


def test_switching_between_solvers_keeps_a_resting_pair_still():
    # 24 rows: the quick step (exact_rows 16), then pivoting (24), then the quick step again, which
    # starts from the pivoting step's forces (the warm start follows both under 'auto')
    world = resting_pile(2, exact_rows=16)
    for limit, solver in ((16, "pgs"), (24, "dantzig"), (16, "pgs")):
        world.exact_rows = limit
        assert {last.solver for last in steps(world, 150)} == {solver}
        assert all(np.linalg.norm(b.velocity) < 1e-3 for b in world.bodies)
        assert all(abs(b.position[2] - 0.1) < 1e-3 for b in world.bodies)


@pytest.mark.parametrize("kw, error, match", [
    ({"exact_rows": -1}, ValueError, "exact_rows"), ({"exact_rows": 2.5}, TypeError, "exact_rows"),
    ({"exact_rows": True}, TypeError, "exact_rows"), ({"max_pivots": 0}, ValueError, "max_pivots"),
    ({"max_pivots": 2**31}, ValueError, "max_pivots"), ({"iterations": 0}, ValueError, "iterations"),
    ({"iterations": "20"}, TypeError, "iterations"), ({"solver": "lemke"}, ValueError, "auto"),
    ({"tolerance": -1e-3}, ValueError, "tolerance"), ({"tolerance": float("nan")}, ValueError, "tolerance"),
    ({"tolerance": 2.0}, ValueError, "tolerance"), ({"tolerance": "1e-4"}, TypeError, "tolerance")])
def test_bad_solver_settings_name_the_argument(kw, error, match):
    """A wrong value is a ValueError, a count of the wrong kind (2.5, True, '20') a TypeError (_checks' rule)."""
    with pytest.raises(error, match=match):
        E.World(**kw)


def test_quick_step_stops_once_a_sweep_changes_no_lambda_and_tolerance_zero_sweeps_them_all():
    """The convergence stop: on a settled, warm-started pile a sweep soon changes no λ by more than
    ``tolerance`` × max|λ| and the step ends there (``last_step.iterations`` < ``iterations``);
    ``tolerance=0`` sweeps ``iterations`` times, as ODE's quick step does; the early stop's λ agree
    with the full sweeps' to about the tolerance, and a tighter tolerance takes at least as many sweeps."""
    worlds = [resting_pile(20, solver="pgs") for _ in range(3)]
    for w in worlds:
        w.run(300)                                      # the same bits in each: settled the same way
    default, tight, full = worlds
    assert default.tolerance == pytest.approx(5e-5) and default.iterations == 50
    tight.tolerance, full.tolerance = 1e-9, 0.0
    for w in worlds:
        w.step()
    sweeps = [w.last_step.iterations for w in worlds]
    assert 1 <= sweeps[0] < default.iterations                 # stopped early
    assert sweeps[0] <= sweeps[1] <= full.iterations
    assert sweeps[2] == full.iterations                         # tolerance 0: every sweep
    lam, lam_full = default.last_step.lam, full.last_step.lam
    assert np.abs(lam - lam_full).max() < 1e-2 * np.abs(lam_full).max()


# ---- the quick step's sweeps against Gauss-Seidel taken row by row -----------------------------
def mixed_chain(kinds, **kw):
    """A chain of the given joint kinds (no contacts); a motor on each hinge listed in `motors`
    gives that joint a bounded row beside its block of free rows."""
    world = E.World(contacts=False, solver="pgs", **kw)
    prev = None
    for i, kind in enumerate(kinds):
        body = world.add_body(E.Box(0.3, 0.05, 0.05), mass=1.0 + 0.25 * i, position=(0.3 * (i + 0.5), 0, 0),
                              angular_velocity=(0.3 * i, 0.2, -0.1 * i))
        anchor = (0.3 * i, 0, 0)
        if kind == "hinge" or kind == "motor":
            world.add_hinge(body, prev, anchor=anchor, axis=(0, 1, 0))
            if kind == "motor":
                world.joints[-1].set_motor(1.0, 0.05)      # weak: its row sits on a bound
        elif kind == "ball":
            world.add_ball(body, prev, anchor=anchor)
        elif kind == "fixed":
            world.add_fixed(body, prev)
        elif kind == "universal":
            world.add_universal(body, prev, anchor=anchor, axis=(0, 1, 0), axis2=(0, 0, 1))
        prev = body
    return world


def gauss_seidel_rows(poses, h, last, lam0, sweeps):
    """ODE's quick step on last_step's rows in their own order, one row at a time: λ_i += (b_i −
    J_i fc − CFM_i/h λ_i) / (J_i W J_iᵀ + CFM_i/h), clamped to [lo, hi], fc += Δλ_i W J_iᵀ; W from
    the bodies' (rotation, mass, inertia) at the start of the step, λ warm-started with the last
    step's multipliers."""
    Winv = [(1.0 / mass, R @ np.linalg.inv(inertia) @ R.T) for R, mass, inertia in poses]
    m = len(last.lam)
    MJ = np.zeros((m, 2, 6))                        # W Jᵀ per side
    for i in range(m):
        for s in range(2):
            b = last.row_bodies[i, s]
            if b >= 0:
                im, Ii = Winv[b]
                MJ[i, s, :3] = im * last.J[i, s, :3]
                MJ[i, s, 3:] = Ii @ last.J[i, s, 3:]
    cfmh = last.cfm / h
    fc = np.zeros((len(poses), 6))
    x = lam0.copy()
    for i in range(m):
        for s in range(2):
            if last.row_bodies[i, s] >= 0:
                fc[last.row_bodies[i, s]] += x[i] * MJ[i, s]
    for _ in range(sweeps):
        for i in range(m):
            live = [(s, last.row_bodies[i, s]) for s in range(2) if last.row_bodies[i, s] >= 0]
            a = sum(last.J[i, s] @ MJ[i, s] for s, _ in live) + cfmh[i]
            jfc = sum(last.J[i, s] @ fc[b] for s, b in live)
            nx = min(max(x[i] + (last.b[i] - jfc - cfmh[i] * x[i]) / a, last.lo[i]), last.hi[i])
            for s, b in live:
                fc[b] += (nx - x[i]) * MJ[i, s]
            x[i] = nx
    return x


@pytest.mark.parametrize("kinds, tolerance", [
    (["hinge"] * 10, 0.0),                                        # blocks of five, sweeps pipelined
    (["hinge", "ball", "fixed", "universal", "motor", "hinge", "ball", "motor"], 0.0),  # 3, 6, 4 rows; bounded rows
    (["hinge", "motor", "fixed", "hinge", "ball"], 1e-3),          # a tolerance: sweeps one at a time, tracked
])
def test_quick_step_sweeps_equal_gauss_seidel_row_by_row(kinds, tolerance):
    """The quick step takes a joint's free rows as one block (couplings J_i W J_jᵀ instead of fc
    between them) and, at fixed sweeps, pipelines the sweeps along a chain; both only reorder
    independent work, so its λ is the row-by-row Gauss-Seidel λ to rounding."""
    world = mixed_chain(kinds, iterations=7, tolerance=tolerance)
    world.run(25)
    lam0 = world.last_step.lam
    poses = [(b.rotation, b.mass, b.inertia) for b in world.bodies]      # W at the start of the step
    world.step()
    last = world.last_step
    assert last.solver == "pgs" and len(last.lam) == len(lam0)
    assert 1 <= last.iterations <= 7 and (tolerance > 0 or last.iterations == 7)
    ref = gauss_seidel_rows(poses, world.dt, last, lam0, last.iterations)
    scale = np.abs(ref).max()
    assert scale > 0.1
    assert np.abs(last.lam - ref).max() < 1e-9 * scale                  # seen 1e-15
    # one sweep fewer is 1e-2 away: the comparison tells the sweeps apart
    assert np.abs(gauss_seidel_rows(poses, world.dt, last, lam0, last.iterations - 1) - ref).max() > 1e-4 * scale
    # a bounded motor row really sits on its bound (the clamp is exercised)
    bounded = np.isfinite(last.hi)
    if bounded.any():
        assert np.isclose(np.abs(last.lam[bounded]), last.hi[bounded]).any()
