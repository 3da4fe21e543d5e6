"""The compiled fixed-step loop: whole runs of ``mb.simulate`` / ``mb.simulate_batch`` in C.

``core/rollout.c`` integrates a run from start to end — explicit Euler, semi-implicit Euler and
RK4 (CF4 on quaternion joints) on q̈ = FDab(q, q̇, τ − damping ⊙ q̇, f_ext) — with the built-in
controllers evaluated in C: none, ``mb.PD`` with constant references or time tables (continuous or
zero-order hold with a ``period``).  It follows ``_run_fixed`` operation for operation (grid, sample
instants, what is recorded), so results agree with the Python loop to rounding (tests: ≤ 1e-12).

``System.plan`` (``simulation/system.py``) says whether a run qualifies: fixed-step integrator,
no events, constraints, contact, callable forces, passive terms beyond damping (limits, friction,
gravity compensation) or progress bar, and a controller that is None or an ``mb.PD`` whose
references are constants or tables on a model with one-dof joints (:func:`controller_tables`).
:func:`run_compiled` runs N initial states (N = 1: one ``mb.simulate``).  Everything else stays
on the Python path.  This module imports nothing from the rest of ``simulation`` but the
controllers.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import _core
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


def controller_tables(model, controller):
    """(expressible, C controller tables or None, period) of a run's controller (bound to ``model``)."""
    if controller is None:
        return True, None, 0.0
    if type(controller) is PD:
        ctrl = _pd_tables(model, controller)
        return ctrl is not None, ctrl, controller.period or 0.0
    if type(controller) is TorqueTable:
        if model.nq != model.nv or not all(int(j) in (0, 1, 2, 3) for j in model.jtype):
            return False, None, 0.0
        controller.bind(model)
        M, nv = len(controller.times), model.nv
        zero = np.zeros(nv)
        ctrl = (zero, zero.copy(), np.ascontiguousarray(controller.times),
                np.ascontiguousarray(np.broadcast_to(model.neutral(), (M, model.nq))), np.zeros((M, nv)),
                np.ascontiguousarray(controller.tau))
        return True, ctrl, controller.period or 0.0
    return False, None, 0.0


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
