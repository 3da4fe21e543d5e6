"""The compiled fixed-step loop: whole runs of ``mb.simulate`` / ``mb.simulate_batch`` in C.

``core/rollout.c`` integrates a run from start to end — explicit Euler, semi-implicit Euler and
RK4 (CF4 on quaternion joints) on q̈ = FDab(q, q̇, τ − damping ⊙ q̇, f_ext) — with the built-in
controllers evaluated in C: none, ``mb.PD`` with constant references or time tables (continuous or
zero-order hold with a ``period``).  It follows ``_run_fixed`` operation for operation (grid, sample
instants, what is recorded), so results agree with the Python loop to rounding (tests: ≤ 1e-12).

:func:`compiled_plan` says whether a run qualifies: fixed-step integrator, no events, constraints,
contact, callable forces or progress bar, and a controller that is None or an ``mb.PD`` whose
references are constants or tables on a model with one-dof joints.  Everything else stays on
the Python path.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import _core
from ..spatial.rotations import unit_quaternion
from .controllers import PD, TorqueTable

#: False sends every run through the Python loop (the tests compare the two paths).
USE_COMPILED = True

INTEGRATOR_CODES = {"euler": 0, "semi_implicit": 1, "rk4": 2}


def _pd_tables(model, pd):
    """(kp, kd, times, q_ref, qd_ref, tau_ff) tables for the C controller, or None if not expressible."""
    if pd._model is not model:
        pd.bind(model)
    if not pd._vector or callable(pd.q_ref) or callable(pd.qd_ref):
        return None
    nq, nv = model.nq, model.nv
    if pd.times is not None:
        times = np.ascontiguousarray(pd._times, dtype=float)
    else:
        times = np.zeros(1)
    M = len(times)

    def table(ref, n, default):
        if ref is None:
            return np.ascontiguousarray(np.broadcast_to(default, (M, n)), dtype=float)
        a = np.asarray(ref, dtype=float)
        return np.ascontiguousarray(np.broadcast_to(a, (M, n)) if a.ndim == 1 else a, dtype=float)

    return (np.ascontiguousarray(pd._kp, dtype=float), np.ascontiguousarray(pd._kd, dtype=float), times,
            table(pd.q_ref, nq, model.neutral()), table(pd.qd_ref, nv, np.zeros(nv)),
            np.ascontiguousarray(np.broadcast_to(pd._ff, (M, nv)), dtype=float))


def compiled_plan(model, integrator, controller, f_ext, events=(), constraints=None, contact=None,
                  progress=False):
    """The C controller tables and constant forces for a run the compiled loop can do, else None."""
    if integrator not in INTEGRATOR_CODES or events or constraints is not None or contact is not None or progress:
        return None
    if f_ext is not None and callable(f_ext):
        return None
    if controller is None:
        ctrl, period = None, 0.0
    elif type(controller) is PD:
        ctrl = _pd_tables(model, controller)
        if ctrl is None:
            return None
        period = controller.period or 0.0
    elif type(controller) is TorqueTable:
        controller.bind(model)
        M, nv = len(controller.times), model.nv
        zero = np.zeros(nv)
        ctrl = (zero, zero.copy(), np.ascontiguousarray(controller.times),
                np.ascontiguousarray(np.broadcast_to(model.neutral(), (M, model.nq))), np.zeros((M, nv)),
                np.ascontiguousarray(controller.tau))
        if model.nq != model.nv or not all(int(j) in (0, 1, 2, 3) for j in model.jtype):
            return None
        period = controller.period or 0.0
    else:
        return None
    fe = None if f_ext is None else np.ascontiguousarray(f_ext, dtype=float)
    damping = np.asarray(model.damping, dtype=float) if np.any(model.damping != 0) else None
    return dict(ctrl=ctrl, period=float(period), f_ext=fe,
                damping=None if damping is None else np.ascontiguousarray(damping))


def capacity(t_final, dt, record_every):
    """Rows enough for every sample a run can record (grid samples, the final one, the last finite)."""
    steps = math.floor(t_final / dt + 1e-9) + 2
    return steps // record_every + 3


def run_compiled(model, plan, Q0, QD0, t_final, dt, integrator, record_every, keep_last):
    """Run N initial states; returns (T, Q, QD, QDD, TAU, info), info[n] = (count, code, t0, t1).

    Rows past a run's count are NaN (batches: a run that stopped early), or unset for one run."""
    N = Q0.shape[0]
    R = capacity(t_final, dt, record_every)
    nq, nv = model.nq, model.nv
    new = (lambda shape: np.empty(shape)) if N == 1 else (lambda shape: np.full(shape, np.nan))
    T = new((N, R))
    Q, QD, QDD, TAU = new((N, R, nq)), new((N, R, nv)), new((N, R, nv)), new((N, R, nv))
    info = np.zeros((N, 4))
    ctrl = plan["ctrl"] or (None,) * 6
    _core.rollout(model._c, INTEGRATOR_CODES[integrator], np.ascontiguousarray(Q0, dtype=float),
                  np.ascontiguousarray(QD0, dtype=float), float(t_final), float(dt), int(record_every),
                  int(keep_last), plan["period"], *ctrl, plan["f_ext"], plan["damping"], T, Q, QD, QDD, TAU,
                  info)
    bad = np.flatnonzero(info[:, 1] > 0)
    if len(bad):
        n = int(bad[0])
        msg = _core.status_message(int(info[n, 1]))
        where = f" at t = {info[n, 2]!r}"
        raise ValueError(f"{msg}{where}" + (f" (run {n})" if N > 1 else ""))
    return T, Q, QD, QDD, TAU, info


def simulate_compiled(model, space, q0, qd0, t_final, dt, integrator, record_every, plan):
    """``mb.simulate``'s fixed-step run in C; the same Trajectory (and warning) as ``_run_fixed``."""
    from .core import _non_finite_message
    from .trajectory import Trajectory, model_fingerprint

    T, Q, QD, QDD, TAU, info = run_compiled(model, plan, q0[None], qd0[None], t_final, dt, integrator,
                                            record_every, keep_last=True)
    n = int(info[0, 0])
    t, q, qd = T[0, :n].copy(), Q[0, :n].copy(), QD[0, :n].copy()
    status, message = "finished", ""
    if info[0, 1] < 0:   # simulate warns (or raises) once
        status, message = "diverged", _non_finite_message(float(info[0, 2]), float(info[0, 3]))
    return Trajectory(t=t, q=q, qd=qd, qdd=QDD[0, :n].copy(), tau=TAU[0, :n].copy(),
                      model=model, events=[], constraint_residual=None,
                      contact_forces=None, contact_state=None, status=status, message=message,
                      integrator=integrator, model_fingerprint=model_fingerprint(model), model_name=model.name,
                      quaternion_starts=space.quaternion_starts)


def batch_compiled(model, plan, Q0, QD0, t_final, dt, integrator, record_every):
    """``mb.simulate_batch``'s vectorised case in C: every run is ``simulate``'s compiled run."""
    from .batch import BatchTrajectory
    from .integrators import StateSpace
    from .trajectory import model_fingerprint

    space = StateSpace(model)
    Q0 = np.array(Q0, dtype=float)
    for s in space.quaternion_starts:
        zero = ~np.any(Q0[:, s:s + 4], axis=1)
        if np.any(zero):
            raise ValueError(f"Q0: the quaternion at Q0[{int(np.argmax(zero))}, {s}:{s + 4}] is zero; "
                             f"expected a unit quaternion")
        Q0[:, s:s + 4] = unit_quaternion(Q0[:, s:s + 4])
    T, Q, QD, QDD, TAU, info = run_compiled(model, plan, Q0, QD0, t_final, dt, integrator, record_every,
                                            keep_last=False)
    counts = info[:, 0].astype(int)
    R = int(counts.max())
    full = int(np.flatnonzero(counts == R)[0])
    t = T[full, :R].copy()
    q, qd, qdd, tau = Q[:, :R], QD[:, :R], QDD[:, :R], TAU[:, :R]
    dead = info[:, 1] < 0
    status = ["diverged" if d else "finished" for d in dead]
    messages = [f"the state became non-finite in the step from t = {float(info[i, 2])!r}; the run keeps its "
                f"samples up to then" if dead[i] else "" for i in range(len(dead))]
    return BatchTrajectory(t=t, q=q, qd=qd, qdd=qdd, tau=tau, model=model,  # energies: lazy
                           status=status, messages=messages, integrator=integrator, model_name=model.name,
                           model_fingerprint=model_fingerprint(model), quaternion_starts=space.quaternion_starts)
