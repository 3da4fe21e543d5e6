"""Benchmark: steps per second of the engine against MuJoCo on the same scenes, one run.

    python -m multibody.bench.engine [--steps N] [--repeat R] [--only chain|pile|convex] [--solvers]
    (before the bench package exists: PYTHONPATH=src python src/multibody/bench/engine.py)

Scenes: a 10-link chain of hinged boxes swinging from horizontal (no contacts; the engine solves
the joint rows by its linear-time tree factorization, MuJoCo in reduced coordinates), and a
falling pile of 100 boxes onto a plane (five piles, ``pile_poses(seed)`` for seeds 0-4: steps/s over
all five; the ODE rows use the first), with the engine's defaults (``solver='auto'``) and with
``solver='pgs'`` asked for (MuJoCo's default solver).  Both run their loops in C (the engine's
``World.run``, MuJoCo's ``rollout``); every timing is the best of ``--repeat`` runs of this
process's CPU time (``time.process_time``: the machine's load does not count), engine and MuJoCo
and the scenes interleaved.

ODE rows: the same two scenes in the Open Dynamics Engine 0.16 itself (Debian's libode-dev,
:mod:`multibody.engine.ode`; ``OdeWorld.from_engine`` copies the engine's world), stepped in C
(``ode_loop.c``: collide, contact joints, step), with ``dWorldQuickStep`` at its default 20
sweeps, against the engine's quick step asked for at the same 20 sweeps without early stop
(``solver='pgs'``, ``tolerance=0``) and against the engine's defaults; and with ``dWorldStep``
(exact pivoting).  Without libode one line says so.

Every "defaults" row is ``World()``'s defaults (quick step: up to 50 sweeps, stopping at
``tolerance``), and prints the iterations each side used a step: the engine's mean quick-step
sweeps (``last_step.iterations``), MuJoCo's mean Newton iterations (``solver_niter``), both
counted on an untimed rerun.
Last, a convex-mesh pile: 50 random hulls (8-19 corners each) dropped onto a plane, against
MuJoCo with the same hulls as meshes (a report, no goal), and the hull-hull narrow phase per pair
in contact against coal called from Python.

``--solvers`` instead times one step of exact pivoting against one quick step as the rows grow,
on piles of k settled boxes and on chains whose joint rows go to dense pivoting: the measurement
behind ``World.exact_rows``.
"""
from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np

from multibody import engine as E

from multibody.engine.report import CHAIN_L, CHAIN_N, DT, PILE_N, PILE_SIDE, chain_world, pile_poses, pile_world

ODE_SWEEPS = 20                      # dWorldQuickStep's default iterations
PILE_SEEDS = 5        # the pile rows' piles (pile_poses(seed), seed 0 … PILE_SEEDS − 1)


def chain_mjcf():
    body, close = "", ""
    for i in range(CHAIN_N):
        body += (f'<body pos="{CHAIN_L if i else 0} 0 0"><joint type="hinge" axis="0 1 0"/>'
                 f'<geom type="box" size="{CHAIN_L / 2} 0.025 0.025" pos="{CHAIN_L / 2} 0 0" mass="1" '
                 'contype="0" conaffinity="0"/>')
        close += "</body>"
    return (f'<mujoco><option timestep="{DT}" integrator="Euler"/><worldbody>{body}{close}</worldbody></mujoco>')


def chain_same_sweeps(sweeps):
    """The chain with the quick step asked for at ODE's fixed sweeps (no early stop)."""
    world = chain_world()
    world.solver, world.iterations, world.tolerance = "pgs", sweeps, 0.0
    return world


def pile_mjcf(seed=0):
    h = PILE_SIDE / 2
    bodies = "".join(f'<body pos="{p[0]} {p[1]} {p[2]}" quat="{q[0]} {q[1]} {q[2]} {q[3]}"><freejoint/>'
                     f'<geom type="box" size="{h} {h} {h}" mass="1" friction="0.8"/></body>' for p, q in pile_poses(seed))
    return (f'<mujoco><option timestep="{DT}" integrator="Euler"/><worldbody>'
            f'<geom type="plane" size="10 10 0.1"/>{bodies}</worldbody></mujoco>')


def narrow_phase_cost(kind, pairs=400, repeat=20):
    """µs per touching pair: the engine's C collision pass over `pairs` separated pairs, and coal
    called from Python on the same pairs (what a Python binding would cost per pair per step)."""
    import coal
    from multibody.engine.world import quat_to_matrix
    other = (E.Box(0.4, 0.4, 0.2), coal.Box(0.4, 0.4, 0.2)) if kind == "box" else (E.Cylinder(0.15, 0.3), coal.Cylinder(0.15, 0.3))
    world = E.World(gravity=(0, 0, 0))
    poses = []
    q = np.array([0.97, 0.1, 0.2, 0.05])
    q /= np.linalg.norm(q)
    for i in range(pairs):
        x, y = (i % 20) * 2.0, (i // 20) * 2.0
        world.add_body(E.Box(0.4, 0.4, 0.2), mass=1.0, position=(x, y, 0))
        world.add_body(other[0], mass=1.0, position=(x, y, 0.24), quaternion=q)
        poses.append(((x, y, 0), (x, y, 0.24)))
    world.collide()
    t0 = time.process_time()
    for _ in range(repeat):
        n = len(world.collide()["contact_depth"])
    engine_us = (time.process_time() - t0) / repeat / pairs * 1e6
    req = coal.CollisionRequest()
    req.enable_contact, req.num_max_contacts = True, 8
    a, b = coal.Box(0.4, 0.4, 0.2), other[1]
    tfs = []
    for pa, pb in poses:
        ta, tb = coal.Transform3s(), coal.Transform3s()
        ta.setTranslation(np.array(pa, float))
        tb.setTranslation(np.array(pb, float))
        tb.setRotation(quat_to_matrix(q))
        tfs.append((ta, tb))
    t0 = time.process_time()
    for _ in range(repeat):
        for ta, tb in tfs:
            res = coal.CollisionResult()
            coal.collide(a, ta, b, tb, req, res)
    coal_us = (time.process_time() - t0) / repeat / pairs * 1e6
    return engine_us, coal_us, n / pairs


# ---- convex-mesh pile (helper `convex`): 50 random hulls, the same hulls as MuJoCo meshes ---------
CONVEX_N = 50


def convex_hull_points(n=CONVEX_N, seed=0):
    """n point sets (8-19 points on ellipsoids of semi-axes 2.5-6 cm), each a hull's corners."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        d = rng.normal(size=(rng.integers(8, 20), 3))
        d /= np.linalg.norm(d, axis=1)[:, None]
        out.append(d * rng.uniform(0.025, 0.06, 3))
    return out


def convex_pile_positions(n=CONVEX_N):
    return [(0.13 * (i % 4) - 0.2, 0.13 * ((i // 4) % 4) - 0.2, 0.08 + 0.13 * (i // 16)) for i in range(n)]


def convex_pile_world():
    world = E.World(dt=DT)
    world.add_geom(E.Plane((0, 0, 1), 0.0))
    for pts, p in zip(convex_hull_points(), convex_pile_positions()):
        hull = E.Convex(pts)
        world.add_body(hull, density=1000.0, position=np.asarray(p) + hull.centroid)
    return world


def convex_pile_mjcf():
    """The same hulls as MuJoCo meshes (MuJoCo takes their convex hull for contacts), same density."""
    assets = "".join(f'<mesh name="h{i}" vertex="{" ".join(f"{x:.17g}" for x in pts.ravel())}"/>'
                     for i, pts in enumerate(convex_hull_points()))
    bodies = "".join(f'<body pos="{p[0]} {p[1]} {p[2]}"><freejoint/><geom type="mesh" mesh="h{i}" density="1000"/></body>'
                     for i, p in enumerate(convex_pile_positions()))
    return (f'<mujoco><option timestep="{DT}" integrator="Euler"/><asset>{assets}</asset><worldbody>'
            f'<geom type="plane" size="10 10 0.1"/>{bodies}</worldbody></mujoco>')


def convex_narrow_phase_cost(pairs=300, repeat=20, seed=1):
    """µs per hull-hull pair in contact: the engine's C collision pass (broad phase included) over
    `pairs` pairs 5 m apart, and coal called from Python on the same pairs.  Each pair is two of
    the pile's hulls, B moved along coal's closest-point normal until it penetrates by 0-2 mm
    (resting and impact contacts)."""
    import coal
    from multibody.engine.world import quat_to_matrix
    rng = np.random.default_rng(seed)
    world = E.World(gravity=(0, 0, 0))
    pts = convex_hull_points(2 * pairs, seed)
    calls = []
    for i in range(pairs):
        a, b = E.Convex(pts[2 * i]), E.Convex(pts[2 * i + 1])
        qa, qb = (q / np.linalg.norm(q) for q in rng.normal(size=(2, 4)))
        shapes = []
        for s in (a, b):
            v = coal.StdVec_Vec3s()
            v.extend([np.array(x) for x in s.vertices])
            shapes.append(coal.Convex.convexHull(v, False, ""))
        Ta = coal.Transform3s(quat_to_matrix(qa), np.zeros(3))
        d = rng.normal(size=3)
        pb = d / np.linalg.norm(d) * 0.5
        dres = coal.DistanceResult()
        gap = coal.distance(shapes[0], Ta, shapes[1], coal.Transform3s(quat_to_matrix(qb), pb), coal.DistanceRequest(), dres)
        u = np.asarray(dres.getNearestPoint2()) - np.asarray(dres.getNearestPoint1())
        pb = pb - u / np.linalg.norm(u) * (gap + rng.uniform(0, 2e-3))
        o = np.array([5.0 * i, 0, 0])
        world.add_geom(a, world.add_body(mass=1, inertia=np.eye(3), position=o, quaternion=qa))
        world.add_geom(b, world.add_body(mass=1, inertia=np.eye(3), position=o + pb, quaternion=qb))
        calls.append((shapes[0], Ta, shapes[1], coal.Transform3s(quat_to_matrix(qb), pb)))
    sim = world._ensure()
    t0 = time.process_time()
    for _ in range(repeat):
        n = len(sim.collide()["contact_depth"])
    engine_us = (time.process_time() - t0) / repeat / pairs * 1e6
    req = coal.CollisionRequest()
    req.enable_contact = True
    touching = 0
    t0 = time.process_time()
    for _ in range(repeat):
        for sa, ta, sb, tb in calls:
            res = coal.CollisionResult()
            coal.collide(sa, ta, sb, tb, req, res)
            touching += res.isCollision()
    coal_us = (time.process_time() - t0) / repeat / pairs * 1e6
    return engine_us, coal_us, n / pairs, touching / repeat / pairs


def convex_rows(steps, repeat):
    """The convex-mesh pile against MuJoCo (report, no goal) and the hull-hull narrow phase against coal."""
    eng = mj = 0.0
    for _ in range(repeat):
        rate, world = time_engine(convex_pile_world, steps)
        eng, ls = max(eng, rate), world.last_step
        mj = max(mj, time_mujoco(convex_pile_mjcf(), steps))
    print(f"{'convex pile of 50':22s} engine {eng:10.0f} steps/s   MuJoCo {mj:10.0f} steps/s   engine/MuJoCo = {eng / mj:5.2f}"
          f"   ({ls.solver}, {ls.n_contacts} contacts in the last step)")
    try:
        e_us, c_us, per, touching = convex_narrow_phase_cost()
    except ImportError:
        print("hull-hull narrow phase: coal not installed, skipped")
        return
    print(f"hull-hull     narrow phase: engine C {e_us:6.2f} µs/pair ({per:.1f} points, {touching:.0%} touching)   "
          f"coal via Python {c_us:6.2f} µs/pair   coal/engine = {c_us / e_us:5.1f}")


def dense_chain_world(n, solver):
    """A chain of n hinged boxes whose rows the tree factorization may not take: dense pivoting."""
    world = E.World(dt=DT, contacts=False, solver=solver)
    world.factor_trees = False
    prev = None
    for i in range(n):
        body = world.add_body(E.Box(CHAIN_L, 0.05, 0.05), mass=1.0, position=(CHAIN_L * (i + 0.5), 0, 0))
        world.add_hinge(body, prev, anchor=(CHAIN_L * i, 0, 0), axis=(0, 1, 0))
        prev = body
    return world


def solver_crossover(steps=20, piles=(1, 2, 3, 4, 6, 8), chains=(5, 10, 15, 20, 30, 40)):
    """Rows of (scene, rows, ms per dantzig step, ms per pgs step, dantzig pivots per step): each
    scene is brought to its state by the quick step (piles settle for 1.5 s, chains swing 0.1 s),
    then both solvers step from that same state."""
    out = []
    scenes = [(f"pile of {k} boxes", lambda solver, k=k: pile_world(50, solver, k), 1500) for k in piles]
    scenes += [(f"chain of {n} links", lambda solver, n=n: dense_chain_world(n, solver), 100) for n in chains]
    for name, make, settle in scenes:
        start = make("pgs")
        start.run(settle)
        ms, pivots, rows = {}, 0, 0
        for solver in ("dantzig", "pgs"):
            world = make(solver)
            world._state[:] = start._state
            t0 = time.process_time()
            for _ in range(steps):
                world.step()
                pivots += world.last_step.pivots if solver == "dantzig" else 0
            ms[solver] = (time.process_time() - t0) / steps * 1e3
            rows = len(world.last_step.lam)
        out.append((name, rows, ms["dantzig"], ms["pgs"], pivots / steps))
    return out


def time_engine(make, steps, skip=0):
    world = make()
    world.run(skip)
    t0 = time.process_time()
    world.run(steps)
    return steps / (time.process_time() - t0), world


def engine_sweeps(make, steps):
    """Mean quick-step sweeps a step over ``steps`` steps (untimed, stepped from Python), and the
    most allowed."""
    world = make()
    total = 0
    for _ in range(steps):
        world.step()
        total += world.last_step.iterations
    return total / steps, world.iterations


def mujoco_iterations(xml, steps):
    """Mean solver iterations a step of MuJoCo (``solver_niter``, untimed), and its ``opt.iterations``."""
    import mujoco
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    total = 0
    for _ in range(steps):
        mujoco.mj_step(model, data)
        total += int(data.solver_niter[0])
    return total / steps, model.opt.iterations


def time_ode(make, steps, quick, skip=0):
    """Steps per second of ODE on the engine world ``make()``, over the ``steps`` steps that
    follow ``skip`` untimed quick steps, and the contacts of the last step."""
    from multibody.engine.ode import OdeWorld
    ode = OdeWorld.from_engine(make(), fdir="plane")
    ode.run(skip, True)
    t0 = time.process_time()
    ode.run(steps, quick)
    rate = steps / (time.process_time() - t0)
    n = ode.n_contacts
    ode.close()
    return rate, n


def time_mujoco(xml, steps):
    import mujoco
    from mujoco import rollout
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.zeros((1, mujoco.mj_stateSize(model, spec)))
    mujoco.mj_getState(model, data, state[0], spec)
    t0 = time.process_time()
    rollout.rollout(model, data, state, nstep=steps)
    return steps / (time.process_time() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m multibody.bench.engine", description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5000, help="steps per timed run (default 5000)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per scene, best kept (default 3)")
    ap.add_argument("--ode-exact-steps", type=int, default=500,
                    help="steps per timed ODE dWorldStep run of the pile (slow: pivoting; default 500)")
    ap.add_argument("--no-ode", action="store_true", help="leave out the ODE rows")
    ap.add_argument("--only", choices=("chain", "pile", "convex"),
                    help="only that scene's rows (chain or pile: against MuJoCo and ODE; convex: the convex pile "
                         "and the narrow phase rows)")
    ap.add_argument("--solvers", action="store_true",
                    help="time exact pivoting against the quick step as the rows grow (behind World.exact_rows)")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.repeat < 1:
        ap.error("--steps and --repeat must be ≥ 1")
    if args.solvers:
        print(f"{'scene':20s} {'rows':>5s} {'dantzig ms/step':>16s} {'pgs ms/step':>12s} {'ratio':>7s} {'pivots/step':>12s}")
        for name, m, d, q, piv in solver_crossover():
            print(f"{name:20s} {m:5d} {d:16.3f} {q:12.3f} {d / q:7.1f} {piv:12.0f}")
        return 0
    if args.only == "convex":
        convex_rows(args.steps, args.repeat)
        return 0
    # a pile's cost follows the heap it settles into, and which one that is turns on rounding in its
    # first steps (a change in the last bits of the exact solve moved the first pile from 3566 to
    # 2969 steps/s while four others moved by under 5 %): the pile rows time PILE_SEEDS piles
    piles = range(PILE_SEEDS)
    scenes = (("10-link hinge chain", [chain_world], [chain_mjcf()]),
              ("pile of 100 boxes", [partial(pile_world, seed=k) for k in piles], [pile_mjcf(k) for k in piles]),
              ("pile, solver='pgs'", [partial(pile_world, solver="pgs", seed=k) for k in piles],
               [pile_mjcf(k) for k in piles]))
    # ODE's quick step sweeps a fixed count (its default 20): the engine at the same count, no early stop
    same = (partial(chain_same_sweeps, ODE_SWEEPS), partial(pile_world, iterations=ODE_SWEEPS, tolerance=0.0))
    wanted = {None: (0, 1, 2), "chain": (0,), "pile": (1, 2)}[args.only]
    eng, mj, last = [0.0] * len(scenes), [0.0] * len(scenes), [None] * len(scenes)
    ode_quick, eng_same, ode_exact, eng_tail, ode_why = [0.0] * 2, [0.0] * 2, [0.0] * 2, [0.0] * 2, None
    if not args.no_ode:
        from multibody.engine.ode import OdeUnavailable, load
        try:
            load()
        except OdeUnavailable as e:
            ode_why = str(e)
    else:
        ode_why = "--no-ode"
    for _ in range(args.repeat):                 # the scenes interleaved too: the defaults against 'pgs'
        for k, (name, makes, xmls) in enumerate(scenes):
            if k not in wanted:
                continue
            runs = [time_engine(make, args.steps) for make in makes]   # steps/s over all of a scene's worlds
            eng[k], last[k] = max(eng[k], len(runs) / sum(1 / r for r, _ in runs)), runs[0][1].last_step
            mj[k] = max(mj[k], len(xmls) / sum(1 / time_mujoco(xml, args.steps) for xml in xmls))
            make = makes[0]                      # ODE: the first pile
            if ode_why is None and k < 2:
                ode_quick[k] = max(ode_quick[k], time_ode(same[k], args.steps, True)[0])
                eng_same[k] = max(eng_same[k], time_engine(same[k], args.steps)[0])
                # ODE's pivoting on the whole pile takes seconds a step: the last steps only, and
                # the engine's defaults timed on the same steps for its ratio
                tail = args.steps if k == 0 else min(args.steps, args.ode_exact_steps)
                ode_exact[k] = max(ode_exact[k], time_ode(make, tail, False, args.steps - tail)[0])
                eng_tail[k] = max(eng_tail[k], time_engine(make, tail, args.steps - tail)[0])
    for k, ((name, makes, xmls), e, m, ls) in enumerate(zip(scenes, eng, mj, last)):
        if k not in wanted:
            continue
        sweeps = [engine_sweeps(make, args.steps) for make in makes]
        mj_its = [mujoco_iterations(xml, args.steps) for xml in xmls]
        over = f" ({len(makes)} piles: seeds 0-{len(makes) - 1})" if len(makes) > 1 else ""
        print(f"{name:22s} engine {e:10.0f} steps/s   MuJoCo {m:10.0f} steps/s   engine/MuJoCo = {e / m:5.2f}"
              f"   ({ls.solver}{', tree' if ls.tree else ''}, {ls.n_contacts} contacts in the last step){over}")
        print(f"{'':22s} iterations a step: engine {np.mean([w for w, _ in sweeps]):5.1f} quick-step sweeps "
              f"(≤ {sweeps[0][1]}, tolerance {makes[0]().tolerance:g}), MuJoCo {np.mean([i for i, _ in mj_its]):5.1f} "
              f"Newton iterations (≤ {mj_its[0][1]})"
              + (f"; engine sweeps per pile {', '.join(f'{w:.1f}' for w, _ in sweeps)}" if len(makes) > 1 else ""))
    if ode_why is None:
        for k in (k for k in range(2) if k in wanted):
            name, make = scenes[k][0], scenes[k][1][0]
            tail = args.steps if k == 0 else min(args.steps, args.ode_exact_steps)
            print(f"{name:22s} ODE 0.16 dWorldQuickStep ({ODE_SWEEPS} sweeps) {ode_quick[k]:10.0f} steps/s   engine, the "
                  f"same {ODE_SWEEPS} sweeps (solver='pgs', tolerance=0) {eng_same[k]:10.0f} steps/s   "
                  f"engine/ODE quick = {eng_same[k] / ode_quick[k]:5.2f}   engine defaults/ODE quick = {eng[k] / ode_quick[k]:5.2f}")
            print(f"{'':22s} ODE 0.16 dWorldStep, last {tail} steps {ode_exact[k]:10.0f} steps/s   "
                  f"engine defaults on the same steps/ODE dWorldStep = {eng_tail[k] / ode_exact[k]:5.2f}")
    else:
        print(f"ODE rows left out: {ode_why}")
    if args.only:
        return 0
    for kind in ("box", "cylinder"):
        eng_us, coal_us, per = narrow_phase_cost(kind)
        print(f"box-{kind:8s} narrow phase: engine C {eng_us:6.2f} µs/pair ({per:.0f} points)   coal via Python "
              f"{coal_us:6.2f} µs/pair   coal/engine = {coal_us / eng_us:5.1f}")
    convex_rows(args.steps, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
