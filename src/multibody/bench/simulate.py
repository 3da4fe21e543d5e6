"""``python -m multibody.bench.simulate``: the OpenDE report's double pendulum, ours against MuJoCo.

One run prints, measured in the same process on the same machine:

1. **single run** — the report's double pendulum (section 5.6: q0 = [π/4, −π/4], at rest) for
   10 s at 1 ms: ``mb.simulate`` with the compiled loop (core/rollout.c) for RK4, explicit and
   semi-implicit Euler, the Python loop for reference, and MuJoCo's RK4 and Euler (MuJoCo's
   "Euler" is semi-implicit) through ``mujoco.rollout`` on a twin model with the same masses,
   inertias and hinge joints.  Wall time (best of ``--repeat``) and the relative energy drift
   max|E − E0| / max(|E0|, max KE) (``Trajectory.energy_drift``), energies of both computed by
   ``mb.energy`` from the recorded states, so the measure is the same;
2. **batch** — ``--batch`` initial states near the report's (seeded random), one
   ``mb.simulate_batch`` call against one ``mujoco.rollout`` call over the same states (both
   on all CPUs, every step recorded), ``--batch-seconds`` of simulated time each.

Ratios are MuJoCo time ÷ our time (> 1: we are faster).  The twin's accelerations at q0 are
checked against ``mb.aba`` first (printed), so both integrate the same equations.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import multibody as mb
from multibody.model.joints import JointType
from multibody.simulate import rollout as _rollout


def _f(values):
    """Numbers for an MJCF attribute, written exactly (repr of Python floats)."""
    return " ".join(repr(float(v)) for v in np.ravel(values))


def mujoco_twin(model):
    """MJCF of a model of revolute joints: same tree poses, masses, CoMs, inertias, gravity."""
    import mujoco
    from scipy.spatial.transform import Rotation

    bodies = {}
    for i in range(model.nb):
        if int(model.jtype[i]) != int(JointType.REVOLUTE):
            raise ValueError("mujoco_twin: revolute joints only")
        x, y, z, w = Rotation.from_matrix(np.asarray(model.tree_rotation[i], float)).as_quat()
        p = np.asarray(model.tree_translation[i], float)
        c = np.asarray(model.com[i], float)
        I = np.asarray(model.inertia_com[i], float)
        a = np.asarray(model.jaxis[i], float)
        bodies[i] = (f'<body name="b{i}" pos="{_f(p)}" quat="{_f([w, x, y, z])}">'
                     f'<joint name="j{i}" type="hinge" axis="{_f(a)}"/>'
                     f'<inertial pos="{_f(c)}" mass="{_f([model.mass[i]])}" '
                     f'fullinertia="{_f([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])}"/>')

    def nest(i):
        kids = [k for k in range(model.nb) if int(model.parent[k]) == i]
        return bodies[i] + "".join(nest(k) for k in kids) + "</body>"

    g = np.asarray(model.gravity, float)
    roots = "".join(nest(i) for i in range(model.nb) if int(model.parent[i]) < 0)
    xml = (f'<mujoco><option timestep="0.001" gravity="{_f(g)}" integrator="RK4">'
           f'<flag contact="disable" constraint="disable"/></option>'
           f'<worldbody>{roots}</worldbody></mujoco>')
    return mujoco.MjModel.from_xml_string(xml)


def _best(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _drift(model, q, qd):
    e = mb.energy(model, q, qd)
    E, KE = np.asarray(e.KE + e.PE, float), np.asarray(e.KE, float)
    scale = max(abs(E[0]), float(np.max(KE)), 1e-300)
    return float(np.max(np.abs(E - E[0])) / scale)


def _mujoco_states(mj, data, Q0, QD0):
    import mujoco
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    states = np.empty((len(Q0), mujoco.mj_stateSize(mj, spec)))
    for n in range(len(Q0)):
        mujoco.mj_resetData(mj, data)
        data.qpos[:], data.qvel[:] = Q0[n], QD0[n]
        mujoco.mj_getState(mj, data, states[n], spec)
    return states


def _split_mujoco(mj, state):
    """(qpos, qvel) of rollout output (…, nstate) for mjSTATE_FULLPHYSICS: [time, qpos, qvel, …]."""
    nq, nv = mj.nq, mj.nv
    return state[..., 1:1 + nq], state[..., 1 + nq:1 + nq + nv]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m multibody.bench.simulate", description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="simulated time of the single run (10)")
    ap.add_argument("--dt", type=float, default=1e-3, help="step (1e-3)")
    ap.add_argument("--batch", type=int, default=1000, help="initial states in the batch (1000)")
    ap.add_argument("--batch-seconds", type=float, default=1.0, help="simulated time of each batch run (1)")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many timings (3)")
    args = ap.parse_args(argv)
    import mujoco
    from mujoco import rollout as mj_rollout

    model = mb.models.double_pendulum()
    q0, qd0 = np.array([np.pi / 4, -np.pi / 4]), np.zeros(2)
    mj = mujoco_twin(model)
    data = mujoco.MjData(mj)
    data.qpos[:], data.qvel[:] = q0, qd0
    mujoco.mj_forward(mj, data)
    twin_err = float(np.max(np.abs(data.qacc - mb.aba(model, q0, qd0, np.zeros(2)))))
    T, dt = args.seconds, args.dt
    nstep = int(round(T / dt))
    mj.opt.timestep = dt
    print(f"multibody {mb.__version__ if hasattr(mb, '__version__') else ''} vs MuJoCo {mujoco.__version__}; "
          f"{os.cpu_count()} CPUs; twin check |qacc_mujoco − mb.aba| at q0 = {twin_err:.1e}")
    print(f"\n1. double pendulum (OpenDE report §5.6), {T:g} s at dt = {dt:g} ({nstep} steps), "
          f"wall time best of {args.repeat}")
    rows = []
    for name, integ in (("ours rk4 (C)", "rk4"), ("ours euler (C)", "euler"),
                        ("ours semi_implicit (C)", "semi_implicit")):
        t, tr = _best(lambda: mb.simulate(model, q0, qd0, T, dt=dt, integrator=integ), args.repeat)
        rows.append((name, t, tr.energy_drift))
    _rollout.USE_COMPILED = False
    try:
        t, tr = _best(lambda: mb.simulate(model, q0, qd0, T, dt=dt, integrator="rk4"), 1)
        rows.append(("ours rk4 (Python loop)", t, tr.energy_drift))
    finally:
        _rollout.USE_COMPILED = True
    state0 = _mujoco_states(mj, data, q0[None], qd0[None])
    for name, code in (("mujoco rk4", mujoco.mjtIntegrator.mjINT_RK4),
                       ("mujoco euler (semi-implicit)", mujoco.mjtIntegrator.mjINT_EULER)):
        mj.opt.integrator = code
        t, (st, _) = _best(lambda: mj_rollout.rollout(mj, data, state0, nstep=nstep), args.repeat)
        qp, qv = _split_mujoco(mj, st[0])
        rows.append((name, t, _drift(model, np.vstack([q0, qp]), np.vstack([qd0, qv]))))
    ref = dict((r[0], r[1]) for r in rows)
    for name, t, drift in rows:
        print(f"   {name:30s} {t * 1e3:9.2f} ms   energy drift {drift:9.2e}")
    print(f"   ratio mujoco rk4 / ours rk4 (C)        = {ref['mujoco rk4'] / ref['ours rk4 (C)']:.1f}×")
    print(f"   ratio mujoco euler / ours semi_impl (C) = "
          f"{ref['mujoco euler (semi-implicit)'] / ref['ours semi_implicit (C)']:.1f}×")

    N, TB = args.batch, args.batch_seconds
    nb_step = int(round(TB / dt))
    rng = np.random.default_rng(0)
    Q0 = q0 + rng.uniform(-0.2, 0.2, size=(N, 2))
    QD0 = rng.uniform(-0.5, 0.5, size=(N, 2))
    threads = os.cpu_count() or 1
    print(f"\n2. batch: {N} initial states, {TB:g} s each at dt = {dt:g} ({nb_step} steps, every step "
          f"recorded), {threads} threads each")
    t_ours, bt = _best(lambda: mb.simulate_batch(model, Q0, QD0, TB, dt=dt, integrator="rk4"), args.repeat)
    d_ours = max(_drift(model, bt.q[n], bt.qd[n]) for n in range(N))
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    datas = [mujoco.MjData(mj) for _ in range(threads)]
    states = _mujoco_states(mj, data, Q0, QD0)
    t_mj, (st, _) = _best(lambda: mj_rollout.rollout(mj, datas, states, nstep=nb_step), args.repeat)
    qp, qv = _split_mujoco(mj, st)
    d_mj = max(_drift(model, np.vstack([Q0[n], qp[n]]), np.vstack([QD0[n], qv[n]])) for n in range(N))
    print(f"   ours simulate_batch rk4 (C)    {t_ours * 1e3:9.2f} ms   max energy drift {d_ours:9.2e}")
    print(f"   mujoco rollout rk4             {t_mj * 1e3:9.2f} ms   max energy drift {d_mj:9.2e}")
    print(f"   ratio mujoco / ours            = {t_mj / t_ours:.1f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
