"""``python -m multibody.bench.simulate``: the OpenDE report's double pendulum, ours against MuJoCo.

One run measures, on the same machine and in the same process:

1. **single trajectory** — the report's double pendulum (two 1 kg boxes 1 × 0.1 × 0.1 m, hinges,
   q0 = [π/4, −π/4], section 5.1) for 10 s at 1 ms: our RK4, Euler and semi-implicit Euler
   (``mb.simulate``) against MuJoCo's RK4 and Euler (the same masses, inertias and hinge joints,
   ``mujoco.rollout``): time and energy drift (max |E(t) − E(0)| / |E(0)|, E from ``mb.energy``
   for both, so the measure is the same);
2. **batch** — N simulations from perturbed initial states in one ``mb.simulate_batch`` call
   against one ``mujoco.rollout`` call over the same N states (one thread, and one thread per core);
3. **table 5.2 redone** — the report's cases 3 (ode45, i.e. RK45), 4 (Euler, 10 000 steps) and
   5 (OpenDE, Euler 10 000 steps) next to ours and MuJoCo's, with the report's 2010 times;
4. **right-hand sides run from Python** — the per-call cost of ``GroundContact.forces`` (C kernel
   csrc/sim/contact.c), ``mb.fd_gq`` and ``ConstraintSet.accelerations`` (C solves csrc/sim/kkt.c), as
   multiples of one ``mb.aba`` call on the same model;
5. **a real robot** — example-robot-data's Panda (the same URDF compiled by MuJoCo, meshes
   stripped, contacts off, joint limits on in both) under a joint PD with gravity compensation,
   10 s at 1 ms RK4: one run on one thread, and ``--batch`` perturbed runs in one
   ``mb.simulate_batch`` against one ``mujoco.rollout`` call.  MuJoCo does the same law inside
   its rollout with position actuators (kp, kv) and ``gravcomp="1"`` on every body (its passive
   gravity compensation g(q), evaluated at every RK4 stage like ours); its limits are its soft
   constraints, ours hard stops (neither is reached in these runs: the bench says so);
6. **compliant ground** (report only) — solo12 standing on ``mb.GroundContact`` for 10 s
   (compiled loop: the contact law and its states in csrc/sim/rollout.c, a PD on the legs) against
   MuJoCo's contact on the same robot: at the bench's dt and at a quarter of it (at 1 ms RK4 the law
   does not come to rest on this robot), with friction and without, and MuJoCo with noslip (its soft
   friction otherwise creeps to the frictionless stance); the rest columns as in part 7;
7. **hard contact** — dm_control's quadruped (``suite/quadruped.xml``: its floor, toes, tendon
   couplings and joint limits; springs of 1000 N·m/rad at the zero pose, actuation disabled in the
   file — ``<flag actuation="disable"/>``, so both simulators read it —, the falling ball taken out) standing
   ``--seconds`` at MuJoCo's timestep under ``contact="hard"`` (csrc/sim/hard_contact.c: the LCP on
   J M⁻¹ Jᵀ each step) against ``mujoco.rollout`` of the same file: one run on one thread, and
   ``--batch`` runs of ``--batch-seconds`` in one ``mb.simulate_batch`` against one ``mujoco.rollout``
   call (one thread per core each); the rest at the end, with friction and without: base height and its
   difference to MuJoCo's, Σ normal force / m g − 1, the deepest penetration, and MuJoCo with its
   constraints made near-hard (and noslip) as the reference with the laws' differences taken out;
   and dm_control's humanoid (``suite/humanoid.xml``) falling from its qpos0 and lying on its floor, the same
   rows (its joint limits as LCP rows, and as compliant stops, MuJoCo's being soft), and its batch lifted past
   its fall (1 km for 1 s; no contact on either side: the floor under the batch's goal, the cost of a step
   without contact rows).
9. **compliant contact** — the default contact law (``SceneContact``: csrc/sim/scene_contact.c) on
   dm_control's quadruped (as in part 7) and humanoid (``suite/humanoid.xml``, falling from its qpos0 onto
   its floor; its joint limits soft, as MuJoCo's), ``--seconds`` semi-implicit: ours at MuJoCo's own 5 ms (semi_implicit takes the law implicit
   in the step, scene_contact.c's mb_scene_contact_implicit: the explicit law needed 2 ms, and blew up at
   5 ms), MuJoCo's rollout at its own timestep and at ours.
8. **closed loops** (ours only) — the constrained right-hand side (TMT eq. 6 with Baumgarte
   stabilisation, csrc/sim/constraints.c) on the planar four-bar and a spatial 6R loop closed by a
   revolute joint, as a multiple of one ABA of the same tree: from Python (``ConstraintSet.accelerations``
   against ``mb.aba``), and in C (the compiled loop's CPU time per stage above the same tree's run
   without constraints — with a zero f_ext, so that its stages run one scalar ABA each — plus that
   ABA, against that ABA, timed as a batch of 200 states in one call, one state at a time, so that
   the boundary's cost is spread thin; the three measured in turn, the best of each kept); and the
   four-bar's 10 s RK4 run at 1 ms with its right-hand side in C against the same run with the
   Python statement called back each stage.

Times are best-of-``--repeat`` of the process's CPU time (``time.process_time``; robust when other
jobs share the machine) for single-threaded work, and wall time for the batch (it uses threads).
Ratios are MuJoCo time ÷ our time: > 1 means we are faster.  Our fixed-step runs here take the
compiled loop (csrc/sim/rollout.c: the whole run in C, batches split across threads with the GIL
released); every fixed step of the library is the compiled loop's (its Python reference steppers
are the tests').
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

import multibody as mb
from multibody._extras import robots_dir  # the one finder of example-robot-data (tests use it too)
from multibody.models.dm_control_scenes import sprung_quadruped  # (tests build it too)

Q0 = np.array([np.pi / 4, -np.pi / 4])

MJCF = """
<mujoco model="double_pendulum">
  <option timestep="{dt}" integrator="{integrator}" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="link1">
      <joint name="th1" type="hinge" axis="1 0 0"/>
      <inertial pos="0 0.5 0" mass="1" diaginertia="{ixx} {iyy} {izz}"/>
      <body name="link2" pos="0 1 0">
        <joint name="th2" type="hinge" axis="1 0 0"/>
        <inertial pos="0 0.5 0" mass="1" diaginertia="{ixx} {iyy} {izz}"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def mujoco_model(model, dt, integrator):
    """The same double pendulum in MJCF: masses, CoMs and inertias copied from our Model."""
    import mujoco
    I = np.diag(model.inertia_com[0])
    assert np.allclose(model.inertia_com[0], np.diag(I)) and np.allclose(model.inertia_com[1], model.inertia_com[0])
    xml = MJCF.format(dt=dt, integrator=integrator, ixx=repr(float(I[0])), iyy=repr(float(I[1])), izz=repr(float(I[2])))
    m = mujoco.MjModel.from_xml_string(xml)
    m.dof_damping[:] = 0.0
    m.dof_armature[:] = 0.0
    return m


def mujoco_rollout(mjm, q0s, qd0s, nstep, nthread=1):
    """States (N, nstep, nq + nv) from one mujoco.rollout call; the initial states prepended."""
    import mujoco
    from mujoco import rollout
    datas = [mujoco.MjData(mjm) for _ in range(nthread)]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    n = mujoco.mj_stateSize(mjm, spec)
    init = np.empty((len(q0s), n))
    d = datas[0]
    for i, (q, v) in enumerate(zip(q0s, qd0s)):
        mujoco.mj_resetData(mjm, d)
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_getState(mjm, d, init[i], spec)
    t = time.perf_counter()
    c = time.process_time()
    state, _ = rollout.rollout(mjm, datas if nthread > 1 else datas[0], init, nstep=nstep)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    nq, nv = mjm.nq, mjm.nv
    qv = state[:, :, 1:1 + nq + nv]   # FULLPHYSICS: time, qpos, qvel, …
    return np.concatenate([np.concatenate([q0s, qd0s], axis=1)[:, None], qv], axis=1), wall, cpu


def mb_threads() -> int:
    """Threads the batched kernels may use (Numba today, the C core's pool later)."""
    for name in ("get_num_threads",):
        if hasattr(mb, name):
            return int(getattr(mb, name)())
    try:
        import numba
        return int(numba.get_num_threads())
    except ImportError:  # pragma: no cover
        return 1


def drift(model, q, qd):
    e = mb.energy(model, q, qd)
    E = e.KE + e.PE
    return float(np.max(np.abs(E - E[..., :1])) / np.max(np.abs(E[..., 0])))


def best(fn, repeat):
    """(best CPU time, best wall time, last result) over ``repeat`` runs."""
    return versus(fn, None, repeat)[0]


def best_mujoco(fn, repeat):
    """:func:`best` for the MuJoCo helpers (mujoco_rollout, mujoco_controlled), whose result ends with the
    rollout call's own wall and CPU time: (best CPU, best wall, the last result with those two replaced by
    the best), both over ``repeat`` runs — the same best-of-N as ours (a row read the last run's time)."""
    return versus(None, fn, repeat)[1]


def versus(ours, mujoco, repeat):
    """(:func:`best` of ``ours``, :func:`best_mujoco` of ``mujoco``) with their runs alternated, the order
    swapped every round, so that a slow spell of a shared machine falls on both sides rather than on
    whichever block it hit: this VM's speed swings by up to 2× for longer than a run (the Panda's 10 s
    read 0.036 s in one process and 0.067 s in the next, with MuJoCo's block timed in a faster spell).
    Either side None: the other's runs alone (its entry None)."""
    sides = [None, None]
    for k in range(repeat):
        for side in ((0, 1) if k % 2 == 0 else (1, 0)):
            fn = (ours, mujoco)[side]
            if fn is None:
                continue
            t, c = time.perf_counter(), time.process_time()
            out = fn()
            wall, cpu = (time.perf_counter() - t, time.process_time() - c) if side == 0 else out[-2:]
            was = sides[side] or (np.inf, np.inf, None)
            sides[side] = (min(was[0], cpu), min(was[1], wall), out)
    if sides[1] is not None:   # MuJoCo's result carries the best times, not the last run's
        cpu, wall, out = sides[1]
        sides[1] = (cpu, wall, (*out[:-2], wall, cpu))
    return tuple(sides)


def parser() -> argparse.ArgumentParser:
    """The command's options (``bench.pinocchio_cpp --goals`` runs part 5 with them)."""
    ap = argparse.ArgumentParser(prog="python -m multibody.bench.simulate", description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="simulated time of the single run (10 s)")
    ap.add_argument("--dt", type=float, default=1e-3, help="fixed step (1 ms)")
    ap.add_argument("--batch", type=int, default=1000, help="number of simulations in the batch (1000)")
    ap.add_argument("--batch-seconds", type=float, default=1.0, help="simulated time of each batch run (1 s)")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs (3)")
    ap.add_argument("--parts", default="1,2,3,4,5,6,7,8,9", help="which parts to run (default all: 1,...,9)")
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    parts = {int(p) for p in args.parts.split(",") if p.strip()}
    import mujoco

    model = mb.models.double_pendulum()
    dt, T = args.dt, args.seconds
    nstep = int(round(T / dt))
    print(f"multibody.bench.simulate — {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {sys.version.split()[0]}, MuJoCo {mujoco.__version__}")
    rng = np.random.default_rng(0)
    if parts & {1, 2, 3, 4}:
        double_pendulum(args, model, parts, rng)
    if 5 in parts:
        panda(args, rng)
    if 6 in parts:
        solo_standing(args)
    if 7 in parts:
        quadruped_hard(args, rng)
        humanoid_hard(args, rng)
    if 8 in parts:
        closed_loops(args)
    if 9 in parts:
        compliant_scenes(args)
    return 0


def double_pendulum(args, model, parts, rng):
    """Parts 1–4: the OpenDE report's double pendulum."""
    dt, T = args.dt, args.seconds
    nstep = int(round(T / dt))
    print(f"double pendulum of the OpenDE report, q0 = [π/4, −π/4], {T:g} s at dt = {dt:g} s ({nstep} steps)")

    # the two models agree: same accelerations at a random state
    import mujoco as mj
    mjm = mujoco_model(model, dt, "RK4")
    d = mj.MjData(mjm)
    q, v = rng.normal(size=2), rng.normal(size=2)
    d.qpos[:], d.qvel[:] = q, v
    mj.mj_forward(mjm, d)
    print(f"  check: |q̈_MuJoCo − q̈_ABA| = {np.abs(d.qacc - mb.aba(model, q, v, np.zeros(2))).max():.1e} "
          f"at a random state")

    # warm-up (compiled kernels loaded, first-call costs out of the timings)
    mb.simulate(model, Q0, [0, 0], 0.01)
    mb.simulate(model, Q0, [0, 0], 1.0, integrator="rk45")      # batched kernels on ≥ 1000 samples
    mb.simulate_batch(model, np.tile(Q0, (args.batch, 1)), np.zeros((args.batch, 2)), 0.002)

    if 1 in parts:
        single_runs(args, model, dt, T, nstep)
    if 2 in parts:
        batch_runs(args, model, dt, rng)
    if 3 in parts:
        table_5_2(args, model)
    if 4 in parts:
        right_hand_sides(args.repeat)


def single_runs(args, model, dt, T, nstep):
    print("\n1. single trajectory (CPU time, best of %d)" % args.repeat)
    print(f"  {'method':34s} {'time [s]':>10s} {'drift':>10s} {'MuJoCo/ours':>12s}")
    rows = {}
    for integ in ("rk4", "euler", "semi_implicit"):
        cpu, wall, tr = best(lambda: mb.simulate(model, Q0, [0, 0], T, dt=dt, integrator=integ), args.repeat)
        rows[integ] = (cpu, drift(model, tr.q, tr.qd))
    # the double pendulum is planar, so FDab runs in planar vectors (csrc/kernels/planar.c); a zero f_ext
    # keeps the same run on the 6-D spatial ABA, to show what a non-planar model of this size costs
    cpu, wall, tr = best(lambda: mb.simulate(model, Q0, [0, 0], T, dt=dt, integrator="rk4",
                                             f_ext=np.zeros((model.nb, 6))), args.repeat)
    rows["rk4_spatial"] = (cpu, drift(model, tr.q, tr.qd))
    for integ, name in (("RK4", "rk4"), ("Euler", "euler")):
        m = mujoco_model(model, dt, integ)
        cpu, wall, out = best_mujoco(lambda: mujoco_rollout(m, Q0[None], np.zeros((1, 2)), nstep), args.repeat)
        states = out[0]
        rows["mujoco_" + name] = (out[2], drift(model, states[0, :, :2], states[0, :, 2:]))
    for key, label in (("rk4", "multibody RK4 (compiled loop)"), ("rk4_spatial", "  the same on the 6-D ABA"),
                       ("mujoco_rk4", "MuJoCo RK4 (rollout)"),
                       ("euler", "multibody explicit Euler"), ("mujoco_euler", "MuJoCo Euler (semi-implicit)"),
                       ("semi_implicit", "multibody semi-implicit Euler")):
        ref = rows.get("mujoco_" + key.replace("_spatial", ""))
        ratio = f"{ref[0] / rows[key][0]:12.2f}" if ref else ""
        print(f"  {label:34s} {rows[key][0]:10.4f} {rows[key][1]:10.2e} {ratio}")
    print("  (MuJoCo's 'Euler' is semi-implicit in velocity; compare it with ours of the same kind)")



def batch_runs(args, model, dt, rng):
    print(f"\n2. batch: {args.batch} simulations × {args.batch_seconds:g} s at {dt:g} s, RK4 (wall time)")
    N = args.batch
    Q0s = Q0 + 0.1 * rng.normal(size=(N, 2))
    QD0s = np.zeros((N, 2))
    nb = int(round(args.batch_seconds / dt))
    from multibody.core import _core
    threads = _core.get_num_threads()
    ours_by_threads = {}
    for nthread in sorted({1, threads}):
        _core.set_num_threads(nthread)
        t, c = time.perf_counter(), time.process_time()
        batch = mb.simulate_batch(model, Q0s, QD0s, args.batch_seconds, dt=dt, record_every=1)
        ours_by_threads[nthread] = (time.perf_counter() - t, time.process_time() - c)
    _core.set_num_threads(threads)
    ours = ours_by_threads[threads][0]
    our_drift = max(drift(model, batch.q[i], batch.qd[i]) for i in range(0, N, max(1, N // 50)))
    m = mujoco_model(model, dt, "RK4")
    results = []
    for nthread in sorted({1, os.cpu_count() or 1}):
        states, wall, cpu = mujoco_rollout(m, Q0s, QD0s, nb, nthread=nthread)
        results.append((nthread, wall, states))
    diff = np.abs(results[0][2][:, -1, :2] - batch.q[:, -1]).max()
    for nthread, (wall, cpu) in ours_by_threads.items():
        print(f"  multibody simulate_batch, {nthread:2d} thread(s)   {wall:10.3f} s   drift ≤ {our_drift:.1e}   "
              f"(CPU {cpu:.3f} s)")
    for nthread, wall, states in results:
        ours = ours_by_threads.get(nthread, (ours,))[0]
        dmj = max(drift(model, states[i, :, :2], states[i, :, 2:]) for i in range(0, N, max(1, N // 50)))
        print(f"  MuJoCo rollout, {nthread:2d} thread(s)              {wall:10.3f} s   drift ≤ {dmj:.1e}"
              f"   MuJoCo/ours {wall / ours:6.2f}")
    print(f"  final states agree to {diff:.1e} rad (same RK4, same model)")



def table_5_2(args, model):
    print("\n3. the report's table 5.2 redone (10 s; report times on 2010 hardware)")
    print(f"  {'case':4s} {'solver':28s} {'report [s]':>10s} {'ours [s]':>9s} {'MuJoCo [s]':>10s}  drift (ours)")
    cpu45, _, tr45 = best(lambda: mb.simulate(model, Q0, [0, 0], 10.0, dt=0.02, integrator="rk45",
                                              rtol=1e-3, atol=1e-6), args.repeat)
    cpu45t, _, tr45t = best(lambda: mb.simulate(model, Q0, [0, 0], 10.0, dt=0.02, integrator="rk45"), 1)
    cpue, _, tre = best(lambda: mb.simulate(model, Q0, [0, 0], 10.0, dt=1e-3, integrator="euler"), args.repeat)
    me = mujoco_model(model, 1e-3, "Euler")
    mje = best_mujoco(lambda: mujoco_rollout(me, Q0[None], np.zeros((1, 2)), 10000), args.repeat)[2][2]
    print(f"  3    RK45 (ode45 tolerances)      {0.35:10.2f} {cpu45:9.4f} {'':>10s}  {drift(model, tr45.q, tr45.qd):.1e}")
    print(f"  3'   RK45 (rtol 1e-9, atol 1e-12) {'':>10s} {cpu45t:9.4f} {'':>10s}  {drift(model, tr45t.q, tr45t.qd):.1e}")
    print(f"  4    Euler, 10 000 steps          {1.13:10.2f} {cpue:9.4f} {'':>10s}  {drift(model, tre.q, tre.qd):.1e}")
    print(f"  5    OpenDE Euler, 10 000 steps   {0.29:10.2f} {'':>9s} {mje:10.4f}  (MuJoCo semi-implicit Euler)")


# ---- 5. a real robot: the Panda under PD + gravity compensation, with its limits ---------------------------
def urdf_without_meshes(path):
    """The URDF's text without <visual>/<collision> (MuJoCo would need the mesh files; contacts are off)."""
    import re
    text = open(path).read()
    return re.sub(r"<(visual|collision)>.*?</\1>", "", text, flags=re.S)


def panda_mujoco(path, kp, kd, dt):
    """The Panda URDF in MuJoCo: position actuators (kp, kv), gravcomp on every body, RK4, no contacts.

    MuJoCo turns the fingers' URDF <mimic> into an equality constraint; our loader keeps it as a
    record only (model.mimic), so the equality is removed here: both integrate the same 9 joints.
    MuJoCo also clamps a joint's actuator force to the URDF's ``effort``; our PD does not limit τ,
    so the clamp is switched off (``jnt_actfrclimited``) for the same law."""
    import mujoco
    spec = mujoco.MjSpec.from_string(urdf_without_meshes(path))
    for eq in list(spec.equalities):
        spec.delete(eq)
    for b in spec.bodies:
        b.gravcomp = 1.0
    m = _compile_with_pd(spec, spec.joints, kp, kd, dt)
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    return m


def _compile_with_pd(spec, joints, kp, kd, dt):
    """MuJoCo model of ``spec`` with a position actuator (kp, kv = kd, unclamped) on each joint,
    RK4 at ``dt``: the same PD law as ``mb.PD`` inside ``mujoco.rollout``."""
    import mujoco
    for j in joints:
        a = spec.add_actuator()
        a.target, a.trntype = j.name, mujoco.mjtTrn.mjTRN_JOINT
        a.set_to_position(kp=kp, kv=kd)
    m = spec.compile()
    m.jnt_actfrclimited[:] = 0
    m.opt.timestep = dt
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    return m


def mujoco_controlled(mjm, q0s, qd0s, ctrl, nstep, nthread=1, velocities=False):
    """mujoco_rollout with a constant control vector (the actuators' reference): positions (N, nstep, nq),
    or with ``velocities`` positions and velocities (N, nstep, nq + nv)."""
    import mujoco
    from mujoco import rollout
    datas = [mujoco.MjData(mjm) for _ in range(nthread)]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    init = np.empty((len(q0s), mujoco.mj_stateSize(mjm, spec)))
    d = datas[0]
    for i, (q, v) in enumerate(zip(q0s, qd0s)):
        mujoco.mj_resetData(mjm, d)
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_getState(mjm, d, init[i], spec)
    control = np.broadcast_to(ctrl, (len(q0s), nstep, mjm.nu))
    t, c = time.perf_counter(), time.process_time()
    state, _ = rollout.rollout(mjm, datas if nthread > 1 else datas[0], init, control, nstep=nstep)
    return state[:, :, 1:1 + mjm.nq + (mjm.nv if velocities else 0)], time.perf_counter() - t, time.process_time() - c


def panda(args, rng):
    """Part 5; returns ``{"rk4": (our CPU time, MuJoCo's)}`` of the 10 s RK4 run (issue 37's goal row)."""
    import warnings
    import mujoco
    path = os.path.join(robots_dir(), "panda_description", "urdf", "panda.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(path)
    dt, T = args.dt, args.seconds
    nstep = int(round(T / dt))
    kp, kd = 100.0, 10.0
    q_ref = 0.5 * (model.q_lower + model.q_upper)
    q_ref[-2:] = 0.02
    q0 = q_ref + np.r_[0.3 * np.ones(7), 0.005, -0.005]
    pd = mb.PD(kp=kp, kd=kd, q_ref=q_ref, gravity_compensation=True)
    mjm = panda_mujoco(path, kp, kd, dt)
    d = mujoco.MjData(mjm)
    v = rng.normal(size=model.nv)
    d.qpos[:], d.qvel[:], d.ctrl[:] = q0, v, q_ref
    mujoco.mj_forward(mjm, d)
    ours = mb.aba(model, q0, v, pd.bind(model)(0.0, q0, v) - model.damping * v)
    print(f"\n5. a real robot: example-robot-data's Panda ({model.nq} joints, URDF damping), PD kp = {kp:g}, "
          f"kd = {kd:g} + g(q), {T:g} s at dt = {dt:g} s RK4")
    print(f"  check: |q̈_MuJoCo − q̈_ours| = {np.abs(d.qacc - ours).max():.1e} at q0 with a random q̇ "
          f"(MuJoCo: position actuators + gravcomp=1, the URDF's finger <mimic> equality")
    print("  and effort clamps removed; limits: MuJoCo's soft constraints, our hard stops)")
    mb.simulate(model, q0, np.zeros(model.nv), 0.01, controller=pd)
    (cpu, _, tr), (mcpu, _, out) = versus(
        lambda: mb.simulate(model, q0, np.zeros(model.nv), T, dt=dt, controller=pd),
        lambda: mujoco_controlled(mjm, q0[None], np.zeros((1, model.nv)), q_ref, nstep), args.repeat)
    mj_q = out[0][0]
    print(f"  {'method':34s} {'time [s]':>10s} {'MuJoCo/ours':>12s}")
    print(f"  {'multibody RK4 (compiled loop)':34s} {cpu:10.4f} {out[2] / cpu:12.2f}   "
          f"(goal ≥ 4, issue 37; the older line: ≥ 10)")
    print(f"  {'MuJoCo RK4 (rollout, 1 thread)':34s} {out[2]:10.4f}")
    rk4_times = (cpu, out[2])
    within = bool(np.all(tr.q >= model.q_lower - 1e-12) and np.all(tr.q <= model.q_upper + 1e-12))
    print(f"  trajectories agree to {np.abs(mj_q - tr.q[1:]).max():.1e} rad; stops reached: {len(tr.events)} "
          f"(ours), limit rows active at the end: {mujoco_limit_rows(mjm, mj_q[-1])} (MuJoCo); "
          f"within limits: {within}")

    # the issue's PD (kp 200, kd 20, g(q)) at 1 ms: past RK4's stability at joint 7 (refused by name), so
    # semi-implicit (implicit in its damping) against MuJoCo's position actuators under implicitfast
    kp2, kd2 = 200.0, 20.0
    pd2 = mb.PD(kp=kp2, kd=kd2, q_ref=q_ref, gravity_compensation=True)
    try:
        mb.simulate(model, q0, np.zeros(model.nv), 0.01, dt=dt, controller=pd2)
        rk4 = "runs"
    except ValueError as e:
        rk4 = "refused: " + str(e).split(":")[0] + ": " + str(e).split(":")[1].split("(")[0].strip()
    mjm2 = panda_mujoco(path, kp2, kd2, dt)
    mjm2.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    (cpu2, _, tr2), (mcpu2, _, out2) = versus(
        lambda: mb.simulate(model, q0, np.zeros(model.nv), T, dt=dt, controller=pd2, integrator="semi_implicit"),
        lambda: mujoco_controlled(mjm2, q0[None], np.zeros((1, model.nv)), q_ref, nstep), args.repeat)
    mq2 = out2[0][0]
    print(f"  PD kp = {kp2:g}, kd = {kd2:g} + g(q) at dt = {dt:g} s: RK4 {rk4}")
    print(f"  {'multibody semi-implicit':34s} {cpu2:10.4f} {out2[2] / cpu2:12.2f}   final |q − q_ref| "
          f"{np.abs(tr2.q[-1] - q_ref).max():.1e} rad ({tr2.status})")
    print(f"  {'MuJoCo implicitfast (rollout)':34s} {out2[2]:10.4f} {'':12s}   final |q − q_ref| "
          f"{np.abs(mq2[-1] - q_ref).max():.1e} rad")
    print(f"  the two trajectories differ by at most {np.abs(mq2 - tr2.q[1:]).max():.1e} rad "
          f"(at the end {np.abs(mq2[-1] - tr2.q[-1]).max():.1e} rad)")

    N, Tb = args.batch, args.batch_seconds
    nb = int(round(Tb / dt))
    Q0s = q0 + np.c_[0.2 * rng.uniform(-1, 1, size=(N, 7)), 0.01 * rng.uniform(-1, 1, size=(N, 2))]
    QD0s = np.zeros((N, model.nv))
    print(f"  batch: {N} perturbed runs × {Tb:g} s, one simulate_batch vs one mujoco.rollout call (1 thread: "
          f"CPU time; more: wall time)")
    from multibody.core import _core
    threads = _core.get_num_threads()
    mb.simulate_batch(model, Q0s[:8], QD0s[:8], 0.01, dt=dt, controller=pd)
    rows = []
    for nthread in sorted({1, threads, os.cpu_count() or 1}):
        _core.set_num_threads(nthread)
        t, c = time.perf_counter(), time.process_time()
        batch = mb.simulate_batch(model, Q0s, QD0s, Tb, dt=dt, controller=pd)
        ours = (time.perf_counter() - t, time.process_time() - c)
        _core.set_num_threads(threads)
        states, wall, cpu = mujoco_controlled(mjm, Q0s, QD0s, q_ref, nb, nthread=nthread)
        k = 1 if nthread == 1 else 0
        rows.append((nthread, ours[k], (wall, cpu)[k]))
    for nthread, ours, theirs in rows:
        print(f"  {nthread:2d} thread(s): multibody {ours:8.3f} s   MuJoCo {theirs:8.3f} s   "
              f"MuJoCo/ours {theirs / ours:6.2f}   (goal ≥ 10)")
    print(f"  trajectories agree to {np.abs(states - batch.q[:, 1:]).max():.1e} rad; "
          f"runs that reached a stop: {sum(bool(batch[i].events) for i in range(N)) if batch.runs else 0}")
    return {"rk4": rk4_times}


def mujoco_limit_rows(mjm, q):
    import mujoco
    d = mujoco.MjData(mjm)
    d.qpos[:] = q
    mujoco.mj_forward(mjm, d)
    return int(d.nefc)


# ---- 6. compliant ground: solo12 standing (report only) ----------------------------------------------------
FOOT_RADIUS = 0.005     # MuJoCo needs a geom: a 5 mm sphere at each foot point (ours: the point itself)
SOLO_LEGS = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])   # FL FR HL HR


def solo_mujoco(path, feet, kp, kd, dt, foot_radius):
    """solo12's URDF in MuJoCo: a free joint, a sphere at each foot point, a floor, position actuators."""
    import mujoco
    spec = mujoco.MjSpec.from_string(urdf_without_meshes(path))
    spec.bodies[1].add_freejoint()
    for body, point in feet:
        g = spec.body(body).add_geom()
        g.type, g.size[0], g.pos = mujoco.mjtGeom.mjGEOM_SPHERE, foot_radius, point
        g.mass = 0.0
    floor = spec.worldbody.add_geom()
    floor.type, floor.size = mujoco.mjtGeom.mjGEOM_PLANE, [0.0, 0.0, 1.0]
    return _compile_with_pd(spec, [j for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_HINGE], kp, kd, dt)


def solo_meshes_mujoco(path, share, kp, kd, dt):
    """solo12's URDF in MuJoCo with its own collision meshes (``package://`` resolved under ``share``), a free
    joint, a floor and position actuators, MuJoCo's Euler (its semi-implicit step) at ``dt``.  The robot's geoms
    meet the floor only: its meshes of non-adjacent links overlap at the hips (MuJoCo's parent–child filter
    leaves those pairs, and their contacts would push inside the robot); ours find none there."""
    import re
    import mujoco
    text = re.sub(r"<visual>.*?</visual>", "", open(path).read().replace("package://", share + "/"), flags=re.S)
    spec = mujoco.MjSpec.from_string(text)
    spec.bodies[1].add_freejoint()
    floor = spec.worldbody.add_geom()
    floor.type, floor.size = mujoco.mjtGeom.mjGEOM_PLANE, [0.0, 0.0, 1.0]
    m = _compile_with_pd(spec, [j for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_HINGE], kp, kd, dt)
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    is_floor = m.geom_type == mujoco.mjtGeom.mjGEOM_PLANE
    m.geom_contype[:], m.geom_conaffinity[:] = np.where(is_floor, 0, 1), np.where(is_floor, 1, 0)
    return m


def solo_standing(args):
    """Part 6 (report only): solo12 holding its stance on compliant ground, ours vs MuJoCo's contact."""
    import copy
    import warnings
    path = os.path.join(robots_dir(), "solo_description", "robots", "solo12.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(path, floating=True)
    dt, T = args.dt, args.seconds
    nstep = int(round(T / dt))
    feet = [(model.body_names[f.body], f.translation) for f in model.frames if f.name.endswith("_FOOT")]
    q_ref = model.neutral()
    q_ref[7:] = SOLO_LEGS
    R, p = mb.forward_kinematics(model, q_ref)
    foot_z = [float(p[model.body_index(b), 2] + R[model.body_index(b)][2] @ point) for b, point in feet]
    q0 = q_ref.copy()
    q0[2] = -min(foot_z)                                       # feet on the ground
    mass = float(np.sum(model.mass))
    K, D = mb.contact_parameters(mass, 1e-3, n_points=4)
    kp, kd = 5.0, 0.2
    weight = mass * float(np.linalg.norm(model.gravity))
    # the joint PD on the 12 leg joints, none on the free base: the compiled loop runs it
    pd = mb.PD(kp=np.r_[np.zeros(6), np.full(12, kp)], kd=np.r_[np.zeros(6), np.full(12, kd)], q_ref=q_ref)
    print(f"\n6. compliant ground (report, no goal): solo12 ({mass:.2f} kg, floating base) standing {T:g} s RK4, "
          f"joint PD kp = {kp:g}, kd = {kd:g}")
    print(f"  {'method':50s} {'time [s]':>10s} {'MuJoCo/ours':>12s}  base height, − MuJoCo's, ΣF_n/(m g) − 1, "
          "max |q̇| (at the end)")
    mjm = solo_mujoco(path, feet, kp, kd, dt, foot_radius=FOOT_RADIUS)
    mq0 = q0.copy()
    mq0[2] += FOOT_RADIUS                                      # the spheres' bottoms on the floor
    ctrl = q_ref[7:]
    mcpu, _, out = best_mujoco(lambda: mujoco_controlled(mjm, mq0[None], np.zeros((1, model.nv)), ctrl, nstep,
                                                         velocities=True), args.repeat)
    # MuJoCo's base height less the spheres' radius: our feet are the points at the spheres' centres
    z_mj = out[0][0, -1, 2] - FOOT_RADIUS
    for mu in (1.0, 0.0):
        contact = mb.GroundContact(model, K, D, mu=mu, points=feet)
        # at the bench's dt and at a quarter of it: at 1 ms RK4 the law does not come to rest on this robot
        # (its feet hopped: no force at the end's sample, |q̇| ~ 0.6 rad/s, the base 1.5 cm low; the same at
        # 0.5 ms) and is refused up front now (GroundContact.check_step: dt <= 0.39 ms); at 0.25 ms it rests
        for h in ((dt, dt / 4) if mu else (dt / 4,)):
            label = f"multibody GroundContact μ = {mu:g}, dt {h * 1e3:g} ms"
            try:
                cpu, _, tr = best(lambda: mb.simulate(model, q0, np.zeros(model.nv), T, dt=h, controller=pd,
                                                      contact=contact, record_every=int(round(0.01 / h))),
                                  args.repeat)
            except ValueError as e:   # the refusal is the row: it names the step that works
                print(f"  {label:50s} refused: …{str(e)[str(e).find('Pass dt'):][:40]}")
                continue
            print(f"  {label:50s} {cpu:10.4f} {out[2] / cpu:12.2f}  "
                  + rest_columns(tr.q[-1, 2], tr.contact_forces[-1, :, 2].sum(), weight, z_mj)   # (the ground's points)
                  + f" {np.abs(tr.qd[-1]).max():9.2e} ({tr.status})")
    m2 = copy.copy(mjm)
    for label, noslip, condim in (("MuJoCo contact (soft, rollout, 1 thread), μ = 1", 0, 3),
                                  ("  MuJoCo μ = 1 with noslip 20 (not timed)", 20, 3),
                                  ("  MuJoCo frictionless, condim 1 (not timed)", 0, 1)):
        m2.opt.noslip_iterations = noslip
        m2.geom_condim[:] = condim
        _, _, o = best_mujoco(lambda: mujoco_controlled(m2, mq0[None], np.zeros((1, model.nv)), ctrl, nstep,
                                                        velocities=True), 1)
        end = o[0][0, -1]
        fn, _ = mujoco_rest(m2, end[:model.nq], end[model.nq:], ctrl)
        timed = f"{o[2]:10.4f}" if noslip == 0 and condim == 3 else f"{'':10s}"
        print(f"  {label:50s} {timed} {'':12s}  "
              + rest_columns(end[2] - FOOT_RADIUS, fn, weight, z_mj) + f" {np.abs(end[model.nq:]).max():9.2e}")
    solo_meshes(args, q_ref, pd, kp, kd, weight)
    print("  (ours: compliant Hunt–Crossley points sinking 1 mm under the robot's weight, friction μ, the contact law "
          "and its deformation states in csrc/sim/rollout.c; heights of MuJoCo less its spheres' 5 mm radius;")
    print("  MuJoCo: its default soft contacts, 5 mm spheres at the foot points on a plane.  Its soft friction creeps "
          "until the feet carry no tangential force — the frictionless stance; with noslip the feet stay where")
    print("  they land, as ours at 0.25 ms do (within ~1 mm of each other; its spheres sink 1.6–2.1 mm, our points "
          "0.25 mm).  On its meshes, hard contact (the LCP, semi-implicit) rests within 1 mm of MuJoCo's noslip rest;")
    print("  MuJoCo's soft friction is still creeping at the end)")


def solo_meshes(args, q_ref, pd, kp, kd, weight):
    """Part 6's rows for solo12 on its own collision meshes (convex hulls) and a floor (``ground=True``) under
    hard contact, ours against MuJoCo compiling the same URDF with its meshes: the rest columns."""
    import copy
    import warnings
    path = os.path.join(robots_dir(), "solo_description", "robots", "solo12.urdf")
    share = os.path.dirname(os.path.dirname(robots_dir()))       # package://example-robot-data/… lives here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                             # the hulls' vertices sampled down to 256
        meshed = mb.load_urdf(path, floating=True, package_dirs=[share])
        mb.contacts(meshed, q_ref)                                  # reads the meshes once, before the timing
    dt, T = args.dt, args.seconds
    nstep = int(round(T / dt))
    q0 = q_ref.copy()
    q0[2] = 0.0
    st, g = mb.body_states(meshed, q0), mb.contacts(meshed, q0).geoms
    q0[2] = -min(float((st.R[g.body[k]] @ (g.rotation[k] @ np.asarray(g.hulls[k]).T + g.translation[k][:, None]))[2].min()
                       + st.p[g.body[k]][2]) for k in range(len(g.kind)) if g.body[k] >= 0)   # the lowest vertex on the floor
    cpu, _, tr = best(lambda: mb.simulate(meshed, q0, None, T, dt=dt, contact="hard", ground=True, controller=pd,
                                          record_every=nstep), args.repeat)
    mjm = solo_meshes_mujoco(path, share, kp, kd, dt)
    ctrl = q_ref[7:]
    rows = []
    for noslip in (0, 20):
        m = copy.copy(mjm)
        m.opt.noslip_iterations = noslip
        mcpu, _, out = best_mujoco(lambda: mujoco_controlled(m, q0[None], np.zeros((1, meshed.nv)), ctrl, nstep,
                                                             velocities=True), args.repeat if noslip == 0 else 1)
        end = out[0][0, -1]
        fn, pen = mujoco_rest(m, end[:meshed.nq], end[meshed.nq:], ctrl)
        rows.append((noslip, out[2], end, fn, pen))
    z_mj = rows[0][2][2]
    pen = float(np.max(mb.contacts(meshed, tr.q[-1], ground=True).depth, initial=0.0))
    print(f"  {f'multibody contact=hard, its meshes, ground=True, {dt * 1e3:g} ms':50s} {cpu:10.4f} {rows[0][1] / cpu:12.2f}  "
          + rest_columns(tr.q[-1, 2], tr.support_force[-1], weight, z_mj)
          + f" {np.abs(tr.qd[-1]).max():9.2e} ({tr.status}; penetration {pen * 1e3:.2f} mm)")
    for noslip, mcpu, end, fn, pen_mj in rows:
        label = "MuJoCo, the same meshes (soft, Euler)" if noslip == 0 else "  MuJoCo, the same meshes, noslip 20 (not timed)"
        timed = f"{mcpu:10.4f}" if noslip == 0 else f"{'':10s}"
        print(f"  {label:50s} {timed} {'':12s}  " + rest_columns(end[2], fn, weight, z_mj)
              + f" {np.abs(end[meshed.nq:]).max():9.2e} (penetration {pen_mj * 1e3:.2f} mm"
              + (f"; ours − this {1e3 * (tr.q[-1, 2] - end[2]):+.2f} mm)" if noslip else ")"))


def right_hand_sides(repeat):
    """Part 4: per-call cost of the right-hand sides that run from Python (contact, constraints)."""
    import timeit

    from multibody.simulation.constraints import ConstraintSet, gamma_q_partitioned
    from multibody.simulation.contact import GroundContact
    from multibody.simulation.closed_loops import flyer_constraints, four_bar

    def per_call(fn, n=2000):
        return min(timeit.repeat(fn, number=n, repeat=max(repeat, 3))) / n

    print("\n4. right-hand sides run from Python, per call (best of %d × 2000 calls)" % max(repeat, 3))
    disc = mb.models.rolling_disc(8)
    K, D = mb.contact_parameters(1.0, 1e-3, n_points=2)
    contact = GroundContact(disc, K, D, mu=0.5)
    q = mb.integrate(disc, disc.neutral(), np.array([0.3, 0.1, 0, 0, 0, 0]))
    q[2] = 0.0
    q[2] = -mb.gc_pos_vel(disc, q, np.zeros(6))[2].min() - 1e-3      # the lowest point 1 mm deep
    qd, z = np.full(6, 0.01), np.full(contact.n_states, 1e-4)
    t_aba = per_call(lambda: mb.aba(disc, q, qd, np.zeros(6)))
    t = per_call(lambda: contact.forces(disc, q, qd, z))
    print(f"  GroundContact.forces, rolling disc, 16 points     {t * 1e6:7.1f} µs   ({t / t_aba:5.1f} × mb.aba {t_aba * 1e6:.2f} µs)")
    elbow = mb.models.double_elbow()
    qe, qde, tz = np.array([0.3, 0.2, 0.2]), np.array([0.0, 1.0, 1.0]), np.zeros(3)
    t_aba = per_call(lambda: mb.aba(elbow, qe, qde, tz))
    t = per_call(lambda: mb.fd_gq(elbow, qe, qde, tz))
    print(f"  mb.fd_gq, double elbow (spatial_v2 FDgq)          {t * 1e6:7.1f} µs   ({t / t_aba:5.1f} × mb.aba {t_aba * 1e6:.2f} µs)")
    bar, closure = four_bar()
    q0, qd0, _, _ = gamma_q_partitioned(closure, [0])(bar, np.array([np.pi / 2, -1.0, -1.8]), np.array([2.0, 0, 0]))
    cs = ConstraintSet(closure)
    t_aba = per_call(lambda: mb.aba(bar, q0, qd0, tz))
    t = per_call(lambda: cs.accelerations(bar, q0, qd0, tz))
    print(f"  ConstraintSet.accelerations, four-bar (TMT eq. 6) {t * 1e6:7.1f} µs   ({t / t_aba:5.1f} × mb.aba {t_aba * 1e6:.2f} µs)")
    flyer = mb.models.flapping_flyer().model
    cf = flyer_constraints()
    qf, qdf, t5 = np.array([0.3, 0.0, -0.2, -0.5, -0.5]), np.array([0.1, 0.0, 0.1, 0.0, 0.0]), np.zeros(5)
    t_aba = per_call(lambda: mb.aba(flyer, qf, qdf, t5))
    t = per_call(lambda: cf.accelerations(flyer, qf, qdf, t5, t=0.3))
    print(f"  ConstraintSet.accelerations, TMT flyer, c(t, q)   {t * 1e6:7.1f} µs   ({t / t_aba:5.1f} × mb.aba {t_aba * 1e6:.2f} µs)")


def mujoco_rest(mjm, q, qd, ctrl=None):
    """MuJoCo's contacts at the state (q, q̇) under the controls ``ctrl``: (Σ normal force [N], deepest
    penetration [m]) — its forces as mj_forward solves them there (the constraint forces of its last step)."""
    import mujoco
    d = mujoco.MjData(mjm)
    d.qpos[:], d.qvel[:] = q, qd
    if ctrl is not None:
        d.ctrl[:] = ctrl
    mujoco.mj_forward(mjm, d)
    f, total = np.zeros(6), 0.0
    for i in range(d.ncon):
        mujoco.mj_contactForce(mjm, d, i, f)
        total += f[0]
    return total, max([-c.dist for c in d.contact[:d.ncon]], default=0.0)


def mujoco_settled(mjm, q0, T, stiff=False, noslip=0):
    """MuJoCo's state after ``T`` s from rest at ``q0`` (mj_step), optionally with its constraints made
    near-hard (contacts and equalities solref 0.002, solimp 0.99–0.999: the penetration and the couplings'
    give at rest shrink to ~0.1–0.3 mm) and ``noslip`` iterations (its post-solve that removes the soft
    friction's creep: the feet then stay where they land, as Coulomb's law keeps them) — the references
    hard contact's rest is held to, the law's differences taken out one at a time."""
    import copy
    import mujoco
    m = copy.copy(mjm)   # a deep copy: MjModel's __copy__ copies its arrays
    if stiff:
        m.geom_solref[:] = [0.002, 1.0]
        m.geom_solimp[:, :3] = [0.99, 0.999, 0.001]
        m.eq_solref[:] = [0.002, 1.0]
        m.eq_solimp[:, :3] = [0.99, 0.999, 0.001]
    m.opt.noslip_iterations = noslip
    d = mujoco.MjData(m)
    d.qpos[:] = q0
    for _ in range(int(round(T / m.opt.timestep))):
        mujoco.mj_step(m, d)
    return m, d.qpos.copy(), d.qvel.copy()


def rest_columns(z, fn, weight, z_mj, pen=None):
    """The rest columns of a row: base height, its difference to MuJoCo's default run, Σ normal / m g − 1
    (goal: within 1 mm where the laws agree, and 0.1 %), the deepest penetration."""
    return (f"{z:.4f} m {1e3 * (z - z_mj):+7.2f} mm {100 * (fn / weight - 1):+8.3f} %"
            + ("" if pen is None else f"  {1e3 * pen:5.2f} mm"))


def hard_batch(args, rng, model, mjm, q0, Tb, dt, lift=0.0):
    """Part 7's batch: ``args.batch`` runs of Tb s under ``contact="hard"`` from q0 with its joints perturbed
    (0.02 rad) and its base raised by ``lift``, ours (mb.simulate_batch, the file's own limits: an MJCF file's
    soft, MuJoCo's soft constraints) against one mujoco.rollout call, all threads on both sides.  Returns
    (cpu, wall, batch, MuJoCo's cpu, its wall, its rollout output, its threads, ours)."""
    from multibody.core import _core
    N, nstep = args.batch, int(round(Tb / dt))
    Q0 = np.tile(q0, (N, 1))
    Q0[:, 2] += lift
    Q0[:, 7:] += 0.02 * rng.standard_normal((N, model.nq - 7))
    QD0 = np.zeros((N, model.nv))
    threads = os.cpu_count() or 1
    (cpu, wall, b), (mcpu, mwall, out) = versus(
        lambda: mb.simulate_batch(model, Q0, QD0, Tb, dt=dt, contact="hard", record_every=nstep),
        lambda: mujoco_rollout(mjm, Q0, QD0, nstep, nthread=threads), args.repeat)
    return cpu, wall, b, mcpu, mwall, out, threads, _core.get_num_threads()


def quadruped_hard(args, rng):
    """Part 7: hard contact on dm_control's quadruped, ours against mujoco.rollout of the same file."""
    import tempfile
    import mujoco
    folder = tempfile.mkdtemp()
    T = args.seconds
    print(f"\n7. hard contact: dm_control's quadruped (springs 1000 N·m/rad, no actuators, no ball) standing {T:g} s "
          "at MuJoCo's timestep")
    print(f"  {'method':52s} {'time [s]':>10s} {'MuJoCo/ours':>12s}  base height, − MuJoCo's, ΣF_n/(m g) − 1, "
          "penetration (at the end)")
    for frictionless in (False, True):
        path, model, q0 = sprung_quadruped(folder, frictionless)
        mjm = mujoco.MjModel.from_xml_path(path)
        dt = mjm.opt.timestep
        nstep = int(round(T / dt))
        qd0 = np.zeros((1, model.nv))
        (cpu, _, tr), (mcpu, _, out) = versus(
            lambda: mb.simulate(model, q0, None, T, dt=dt, contact="hard", record_every=nstep),
            lambda: mujoco_rollout(mjm, q0[None], qd0, nstep), args.repeat)
        weight = float(np.sum(model.mass)) * float(np.linalg.norm(model.gravity))
        end = out[0][0, -1]
        z_mj = end[2]
        fn_mj, pen_mj = mujoco_rest(mjm, end[:model.nq], end[model.nq:])
        pen = float(np.max(mb.contacts(model, tr.q[-1]).depth, initial=0.0))
        what = "frictionless toes" if frictionless else "toes μ = 1.5"
        print(f"  {'multibody contact=hard (' + what + ')':52s} {cpu:10.4f} {out[2] / cpu:12.2f}  "
              + rest_columns(tr.q[-1, 2], tr.support_force[-1], weight, z_mj, pen) + f" ({tr.status})")
        print(f"  {'MuJoCo rollout (soft contact, ' + what + ')':52s} {out[2]:10.4f} {'':12s}  "
              + rest_columns(z_mj, fn_mj, weight, z_mj, pen_mj))
        # the references with the laws' differences taken out (not timed): near-hard constraints; with
        # friction also MuJoCo's noslip, without which its soft friction creeps until the toes carry no
        # tangential force (their stance then is the frictionless one); hard Coulomb friction keeps the
        # toes where they land, carrying ~220 N inward each
        m2, q2, v2 = mujoco_settled(mjm, q0, min(T, 4.0), stiff=True, noslip=0 if frictionless else 20)
        fn2, pen2 = mujoco_rest(m2, q2, v2)
        label = "  MuJoCo near-hard (solref .002" + ("" if frictionless else ", noslip 20") + ", not timed)"
        print(f"  {label:52s} {'':10s} {'':12s}  " + rest_columns(q2[2], fn2, weight, z_mj, pen2)
              + f"; ours − this {1e3 * (tr.q[-1, 2] - q2[2]):+.2f} mm")
    # the batch: perturbed starts, all threads on both sides
    path, model, q0 = sprung_quadruped(folder, False)
    mjm = mujoco.MjModel.from_xml_path(path)
    dt, N, Tb = mjm.opt.timestep, args.batch, args.batch_seconds
    cpu, wall, b, mcpu, mwall, out, threads, ours_threads = hard_batch(args, rng, model, mjm, q0, Tb, dt)
    print(f"  {f'batch: {N} runs of {Tb:g} s, mb.simulate_batch, {ours_threads} threads (wall)':52s} {wall:10.4f} "
          f"{mwall / wall:12.2f}  mean {np.mean(b.q[:, -1, 2]):.4f} m")
    print(f"  {f'batch: one mujoco.rollout call, {threads} threads (wall)':52s} {mwall:10.4f} {'':12s}  "
          f"mean {np.mean(out[0][:, -1, 2]):.4f} m")
    print(f"  {'  the same batch, CPU time of all threads: ours':52s} {cpu:10.4f} {mcpu / cpu:12.2f}  "
          f"(MuJoCo {mcpu:.4f} s; goal ≥ 5)")
    print("  (ours: impulses from the engine's Dantzig LCP on J M^-1 J^T each step, warm-started from the last step's "
          "row states, pyramid friction, the couplings and limits as its rows; MuJoCo: soft constraints, pyramidal cone, Newton solver.  With friction the")
    print("  toes stick where they land (~220 N inward each) and MuJoCo's soft friction lets them creep to none: the "
          "stances differ by ~1 cm; with MuJoCo's constraints near-hard (and noslip) the rests agree to < 1 mm)")


def humanoid_hard(args, rng):
    """Part 7's rows for dm_control's humanoid (``suite/humanoid.xml``, from its qpos0 at MuJoCo's own timestep: it
    falls and lies on its floor) under ``contact="hard"``, ours against mujoco.rollout of the same file: one run,
    the batch, and the rest columns as the quadruped's."""
    import warnings
    import dm_control
    import mujoco
    path = os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_mjcf(path)
    mjm = mujoco.MjModel.from_xml_path(path)
    T, dt = args.seconds, mjm.opt.timestep
    nstep = int(round(T / dt))
    q0 = model.q_default
    mb.contacts(model, q0)                                          # packs its geoms once, before the timing
    print(f"  humanoid (dm_control suite/humanoid.xml) falling from its qpos0, {T:g} s at MuJoCo's dt = {dt:g} s")
    out = best_mujoco(lambda: mujoco_rollout(mjm, q0[None], np.zeros((1, model.nv)), nstep), 1)[2]   # (its rest)
    end = out[0][0, -1]
    z_mj = end[2]
    weight = float(np.sum(model.mass)) * float(np.linalg.norm(model.gravity))
    # its joint limits as rows of the LCP (hard, the default under contact="hard") and, as MuJoCo's are soft
    # constraints, as the compliant stops (limits="soft"); each row timed alternately with MuJoCo's run
    for limits in ("hard", "soft"):
        (cpu, _, tr), (_, _, o) = versus(
            lambda: mb.simulate(model, q0, None, T, dt=dt, contact="hard", record_every=nstep, limits=limits),
            lambda: mujoco_rollout(mjm, q0[None], np.zeros((1, model.nv)), nstep), args.repeat)
        out = o if o[2] < out[2] else out
        pen = float(np.max(mb.contacts(model, tr.q[-1]).depth, initial=0.0))
        print(f"  {f'humanoid: multibody contact=hard, limits={limits}':52s} {cpu:10.4f} {o[2] / cpu:12.2f}  "
              + rest_columns(tr.q[-1, 2], tr.support_force[-1], weight, z_mj, pen)
              + f" ({tr.status}; goal ≥ 1.5)")
    fn_mj, pen_mj = mujoco_rest(mjm, end[:model.nq], end[model.nq:])
    print(f"  {'humanoid: MuJoCo rollout (soft contact and limits)':52s} {out[2]:10.4f} {'':12s}  "
          + rest_columns(z_mj, fn_mj, weight, z_mj, pen_mj))
    N, Tb = args.batch, args.batch_seconds
    cpu, wall, b, mcpu, mwall, out, threads, ours_threads = hard_batch(args, rng, model, mjm, q0, Tb, dt)
    print(f"  {f'humanoid batch: {N} runs of {Tb:g} s, {ours_threads} threads (wall)':52s} {wall:10.4f} "
          f"{mwall / wall:12.2f}  mean torso height {np.mean(b.q[:, -1, 2]):.4f} m (goal ≥ 5)")
    print(f"  {f'humanoid batch: one mujoco.rollout call, {threads} threads (wall)':52s} {mwall:10.4f} {'':12s}  "
          f"mean torso height {np.mean(out[0][:, -1, 2]):.4f} m")
    print(f"  {'  the same batch, CPU time of all threads: ours':52s} {cpu:10.4f} {mcpu / cpu:12.2f}  "
          f"(MuJoCo {mcpu:.4f} s)")
    # the floor under the 5× goal: the batch lifted past its fall (1 km for 1 s), where neither side solves a contact
    lift = max(1000.0, 10.0 * Tb ** 2 + 10.0)
    acpu, _, _, amcpu, _, _, _, _ = hard_batch(args, rng, model, mjm, q0, Tb, dt, lift=lift)
    steps = N * int(round(Tb / dt))
    print(f"  {f'  lifted {lift:g} m (no contact), CPU time: ours':52s} {acpu:10.4f} {amcpu / acpu:12.2f}  "
          f"(MuJoCo {amcpu:.4f} s): ours {1e6 * acpu / steps:.2f} µs a step without a contact row, against "
          f"MuJoCo's {1e6 * mcpu / steps:.2f} µs with its contacts: 5× on the floor needs {1e6 * mcpu / steps / 5:.2f}")
    print("  (the batches run the file's own limits: soft, MuJoCo's soft constraints as rows of the LCP)")


def compliant_scenes(args):
    """Part 9: the default (compliant) contact law on dm_control's quadruped and humanoid against MuJoCo."""
    import tempfile
    import warnings
    import dm_control
    import mujoco
    T, dt = args.seconds, 0.005   # MuJoCo's own step: the law is implicit under semi_implicit
    suite = os.path.join(os.path.dirname(dm_control.__file__), "suite")
    quadruped = sprung_quadruped(tempfile.mkdtemp(), False)
    print(f"\n9. compliant contact (the default law, SceneContact), {T:g} s semi-implicit: ours at dt = {dt:g} s "
          "(the law implicit in the step), MuJoCo's rollout at its own timestep and at ours")
    print(f"  {'method':52s} {'time [s]':>10s} {'MuJoCo/ours':>12s}  base height, − MuJoCo's (its step), "
          "ΣF_n/(m g) − 1, penetration (at the end)")
    for name, path, q0 in (("quadruped", quadruped[0], quadruped[2]), ("humanoid", os.path.join(suite, "humanoid.xml"), None)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = mb.load_mjcf(path)
        mjm = mujoco.MjModel.from_xml_path(path)
        if name == "quadruped":
            mjm.opt.disableflags = mujoco.mjtDisableBit.mjDSBL_ACTUATION
        q0 = model.q_default if q0 is None else q0
        nstep = int(round(T / dt))
        try:
            limits = "soft" if name == "humanoid" else "hard"   # MuJoCo's limits are soft constraints
            # one untimed run of two steps first: the first simulate of a session imports multibody.simulation
            # (~0.1 s) and builds the Model's once-per-Model tables, as MuJoCo's model is compiled before its timing
            mb.simulate(model, q0, None, 2 * dt, dt=dt, integrator="semi_implicit", limits=limits)
            own = mjm.opt.timestep   # the goal's row (MuJoCo at its own step) timed alternately with ours
            (cpu, _, tr), (_, _, out) = versus(
                lambda: mb.simulate(model, q0, None, T, dt=dt, integrator="semi_implicit", record_every=nstep,
                                    limits=limits),
                lambda: mujoco_rollout(mjm, q0[None], np.zeros((1, model.nv)), int(round(T / own))), args.repeat)
        except ValueError as e:   # reported as the row, not hidden: the other rows still run
            print(f"  {f'{name}: multibody compliant (dt {dt:g} s)':52s} fails: {str(e)[:160]}")
            continue
        rows = [(own, out[2], out[0][0, -1, 2], out[0][0, -1])]
        mjm.opt.timestep = dt
        out = best_mujoco(lambda: mujoco_rollout(mjm, q0[None], np.zeros((1, model.nv)), nstep), args.repeat)[2]
        rows.append((dt, out[2], out[0][0, -1, 2], out[0][0, -1]))
        weight = float(np.sum(model.mass)) * float(np.linalg.norm(model.gravity))
        z_mj = rows[0][2]
        pen = float(np.max(mb.contacts(model, tr.q[-1]).depth, initial=0.0))
        print(f"  {f'{name}: multibody compliant (dt {dt:g} s)':52s} {cpu:10.4f} {rows[0][1] / cpu:12.2f}  "
              + rest_columns(tr.q[-1, 2], tr.support_force[-1], weight, z_mj, pen)
              + f" ({tr.status}; goal ≥ 3 against MuJoCo at its own step)")
        for mdt, mcpu, z, end in rows:
            fn, pen_mj = mujoco_rest(mjm, end[:model.nq], end[model.nq:])
            print(f"  {f'{name}: MuJoCo rollout (dt {mdt:g} s)':52s} {mcpu:10.4f} {mcpu / cpu:12.2f}  "
                  + rest_columns(z, fn, weight, z_mj, pen_mj))
        if name == "humanoid" and T > 3.0:   # where both lie still: MuJoCo's pose creeps after it
            mjm.opt.timestep = dt
            _, _, out = best_mujoco(lambda: mujoco_rollout(mjm, q0[None], np.zeros((1, model.nv)), int(round(3.0 / dt))), 1)
            k = int(round(3.0 / dt))
            ours = mb.simulate(model, q0, None, 3.0, dt=dt, integrator="semi_implicit", record_every=k, limits="soft")
            print(f"  (humanoid torso at 3 s, both lying on head, hands and feet: ours {ours.q[-1, 2]:.4f} m, MuJoCo "
                  f"{out[0][0, -1, 2]:.4f} m; MuJoCo's soft friction then creeps it down, and the pose is unstable sideways "
                  "in both: MuJoCo's rolls over at ~10.5 s, at ~5.5 s with noslip_iterations)")


def closed_loops(args):
    """Part 8: the constrained right-hand side in C against ABA, and the four-bar's run before/after."""
    import timeit

    from multibody.core import _core
    from multibody.simulation import core
    from multibody.simulation.closed_loops import four_bar, spatial_loop
    from multibody.simulation.constraints import ConstraintSet, gamma_q_partitioned

    class PythonStatement(ConstraintSet):   # the Python statement, called back from the loop each stage
        def accelerations(self, model, q, qd, tau, f_ext=None, t=None):
            return self.reference_accelerations(model, q, qd, tau, f_ext, t)

    repeat = max(args.repeat, 3)

    def per_call(fn, n=2000):
        return min(timeit.repeat(fn, number=n, repeat=repeat)) / n

    def run_time(fn):
        return best(fn, repeat)[0]

    bar, closure = four_bar()
    q0, qd0, _, _ = gamma_q_partitioned(closure, [0])(bar, np.array([np.pi / 2, -1.0, -1.8]), np.array([2.0, 0, 0]))
    loop, ground_joint, q1, qd1 = spatial_loop()
    T = 10.0                                     # the before/after run: 10 s of RK4 at 1 ms
    print(f"\n8. closed loops: the constrained right-hand side (TMT eq. 6, Baumgarte; csrc/sim/constraints.c) "
          f"against ABA of the same tree")
    residuals = core.constraint_residuals        # the loop alone: the per-sample residual record off
    for name, model, q, qd, cons in (("four-bar (planar, 3 dof, 2 rows)", bar, q0, qd0, closure),
                                     ("spatial 6R loop (6 dof, 5 rows)", loop, q1, qd1, ground_joint)):
        cs = ConstraintSet(cons)
        tau = np.zeros(model.nv)
        t_aba = per_call(lambda: mb.aba(model, q, qd, tau))
        t_py = per_call(lambda: cs.accelerations(model, q, qd, tau))
        Q, QD, TAU = (np.tile(x, (200, 1)) for x in (q, qd, tau))
        F = np.zeros((200, model.nb, 6))
        zero_forces = np.zeros((model.nb, 6))    # keeps the plain run off the SIMD lanes: one scalar ABA a stage
        # CPU time per stage (or per state), the three measured in turn and the best of each kept: the
        # loop with constraints, the loop without, and the ABA that loop runs (with f_ext, one state at a
        # time: a batch of 200 in one call, so that the boundary's cost is spread thin)
        t_con = t_plain = t_aba_c = np.inf
        lanes = _core.use_lanes("none")
        try:
            core.constraint_residuals = lambda *a: None
            for _ in range(3 * repeat):
                t_con = min(t_con, best(lambda: mb.simulate(model, q, qd, 2.0, dt=1e-3, constraints=cs), 1)[0] / 8000)
                t_plain = min(t_plain, best(lambda: mb.simulate(model, q, qd, 2.0, dt=1e-3, f_ext=zero_forces),
                                            1)[0] / 8000)
                t_aba_c = min(t_aba_c, best(lambda: [_core.aba(model._c, Q, QD, TAU, F) for _ in range(40)],
                                            1)[0] / 8000)
        finally:
            core.constraint_residuals = residuals
            _core.use_lanes(lanes)
        rhs_c = t_aba_c + (t_con - t_plain)
        print(f"  {name}")
        print(f"    from Python: ConstraintSet.accelerations {t_py * 1e6:6.2f} µs   ({t_py / t_aba:5.2f} × mb.aba "
              f"{t_aba * 1e6:.2f} µs)")
        print(f"    in C: {rhs_c * 1e6:6.2f} µs a stage   ({rhs_c / t_aba_c:5.2f} × ABA {t_aba_c * 1e6:.2f} µs; "
              f"goal ≤ 3)   [loop {t_con * 1e6:.2f} µs/stage constrained, {t_plain * 1e6:.2f} without]")
    cs = ConstraintSet(closure)
    t_after = run_time(lambda: mb.simulate(bar, q0, qd0, T, dt=1e-3, constraints=cs))
    t_before = best(lambda: mb.simulate(bar, q0, qd0, T, dt=1e-3, constraints=PythonStatement(closure)), 1)[0]
    tr = mb.simulate(bar, q0, qd0, T, dt=1e-3, constraints=cs)
    c = max(np.abs(cs.residual(bar, a, b)[0]).max() for a, b in zip(tr.q[::100], tr.qd[::100]))
    print(f"  four-bar, 10 s RK4 at 1 ms: right-hand side in C {t_after:.3f} s, the Python statement called back "
          f"{t_before:.3f} s ({t_before / t_after:.0f}× faster); max |c| {c:.1e} m")


if __name__ == "__main__":
    sys.exit(main())
