"""Benchmark: steps per second of the engine against MuJoCo on the same scenes, one run.

    python -m multibody.bench.engine [--steps N] [--repeat R]
    (before the bench package exists: PYTHONPATH=src python src/multibody/bench/engine.py)

Scenes: a 10-link chain of hinged boxes swinging from horizontal (no contacts; the engine solves
the joint rows by its linear-time tree factorization, MuJoCo in reduced coordinates), and a
falling pile of 100 boxes onto a plane (the engine's quick step, MuJoCo's default solver).
Both run their loops in C (the engine's ``World.run``, MuJoCo's ``rollout``); every timing is
the best of ``--repeat`` runs of this process's CPU time (``time.process_time``: the machine's
load does not count), engine and MuJoCo interleaved.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from multibody import engine as E

CHAIN_N, CHAIN_L, DT = 10, 0.3, 1e-3
PILE_N, PILE_SIDE = 100, 0.2


def chain_world():
    world = E.World(dt=DT, contacts=False)
    prev = None
    for i in range(CHAIN_N):
        body = world.add_body(E.Box(CHAIN_L, 0.05, 0.05), mass=1.0, position=(CHAIN_L * (i + 0.5), 0, 0))
        world.add_hinge(body, prev, anchor=(CHAIN_L * i, 0, 0), axis=(0, 1, 0))
        prev = body
    return world


def chain_mjcf():
    body, close = "", ""
    for i in range(CHAIN_N):
        body += (f'<body pos="{CHAIN_L if i else 0} 0 0"><joint type="hinge" axis="0 1 0"/>'
                 f'<geom type="box" size="{CHAIN_L / 2} 0.025 0.025" pos="{CHAIN_L / 2} 0 0" mass="1" '
                 'contype="0" conaffinity="0"/>')
        close += "</body>"
    return (f'<mujoco><option timestep="{DT}" integrator="Euler"/><worldbody>{body}{close}</worldbody></mujoco>')


def pile_poses(seed=0):
    rng = np.random.default_rng(seed)
    poses = []
    for i in range(PILE_N):
        layer, k = divmod(i, 25)
        x, y = (k % 5 - 2) * 0.3, (k // 5 - 2) * 0.3
        q = rng.normal(size=4) * [1, 0.15, 0.15, 0.15] + [3, 0, 0, 0]
        poses.append(((x + rng.uniform(-0.03, 0.03), y + rng.uniform(-0.03, 0.03), 0.15 + 0.3 * layer),
                      q / np.linalg.norm(q)))
    return poses


def pile_world(iterations=20):
    world = E.World(dt=DT, solver="pgs", iterations=iterations)
    world.add_geom(E.Plane((0, 0, 1), 0.0))
    for p, q in pile_poses():
        world.add_body(E.Box(PILE_SIDE, PILE_SIDE, PILE_SIDE), mass=1.0, position=p, quaternion=q, mu=0.8)
    return world


def pile_mjcf():
    h = PILE_SIDE / 2
    bodies = "".join(f'<body pos="{p[0]} {p[1]} {p[2]}" quat="{q[0]} {q[1]} {q[2]} {q[3]}"><freejoint/>'
                     f'<geom type="box" size="{h} {h} {h}" mass="1" friction="0.8"/></body>' for p, q in pile_poses())
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


def time_engine(make, steps):
    world = make()
    t0 = time.process_time()
    world.run(steps)
    return steps / (time.process_time() - t0), world


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
    args = ap.parse_args(argv)
    if args.steps < 1 or args.repeat < 1:
        ap.error("--steps and --repeat must be ≥ 1")
    rows = []
    for name, make, xml in (("10-link hinge chain", chain_world, chain_mjcf()),
                            ("pile of 100 boxes", pile_world, pile_mjcf())):
        eng, mj = 0.0, 0.0
        for _ in range(args.repeat):
            rate, world = time_engine(make, args.steps)
            eng = max(eng, rate)
            mj = max(mj, time_mujoco(xml, args.steps))
        last = world.last_step
        rows.append((name, eng, mj, last))
        print(f"{name:22s} engine {eng:10.0f} steps/s   MuJoCo {mj:10.0f} steps/s   engine/MuJoCo = {eng / mj:5.2f}"
              f"   ({last.solver}{', tree' if last.tree else ''}, {last.n_contacts} contacts in the last step)")
    for kind in ("box", "cylinder"):
        eng_us, coal_us, per = narrow_phase_cost(kind)
        print(f"box-{kind:8s} narrow phase: engine C {eng_us:6.2f} µs/pair ({per:.0f} points)   coal via Python "
              f"{coal_us:6.2f} µs/pair   coal/engine = {coal_us / eng_us:5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
