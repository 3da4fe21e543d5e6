"""The compiled fixed-step loop: whole runs of ``mb.simulate`` / ``mb.simulate_batch`` in C.

``csrc/sim/rollout.c`` integrates a run from start to end — explicit Euler, semi-implicit Euler and
RK4 (CF4 on quaternion joints) on q̈ = FDab(q, q̇, τ_all, f_ext) — with the built-in controllers
evaluated in C: none, ``mb.PD`` (optionally with gravity compensation) with constant references
or time tables (continuous or zero-order hold with a ``period``), and the model's passive forces
as :mod:`multibody.simulation.limits` defines them: damping, smoothed Coulomb friction,
``gravcomp``, fixed tendons' springs and dampers, soft position limits, and compliant ground contact (``GroundContact``: its
deformation states integrated with q and q̇).  It follows ``_run_fixed`` operation for operation (grid,
sample instants, what is recorded), so results agree with the Python loop to rounding (tests:
≤ 1e-12).  Hard position limits run here too: the loop watches the stops and hands a step that
crosses one back to ``_run_fixed`` (its event machinery fires the impact), which resumes the
compiled loop at once (``stop_mode`` 2); joints left resting on their stops are held there by hybrid
dynamics (``resting``), and the step where a stop lets go is handed back as its release event.

``System.plan`` (``simulation/system.py``) says whether a run qualifies: a fixed-step integrator
(a run with user events hands the steps where one fires to the Python loop, like a hard stop's; a
constrained model's accelerations and a contact object other than ``GroundContact`` are called
back, one run).  Built-in
controllers run in C: a ``TorqueTable`` or an ``mb.PD`` whose references are constants or tables,
with no position gain on joints of several dofs (a floating base: their error is
``mb.difference``'s) (:func:`controller_tables`); any other controller, and a force function, is a
Python function the loop calls back at every stage (single runs; a batch's controller
``(t, Q, QD) -> (N, nv)``, the plan's ``call_batch``, is called once a stage with the states of
all its runs still going, which then advance as one group).  :func:`run_compiled` runs N initial states (N = 1: one
``mb.simulate``); a batch advances in lockstep groups of the SIMD lanes' width (``_core.LANES``),
each stage's forward dynamics one ``aba_group`` call for the group (bit for bit each run's own
result; ``_core.use_lanes("none")`` runs them one at a time).  Everything else stays on the
Python path.  This module imports nothing from
the rest of ``simulation`` but the controllers.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..core import _core
from .controllers import PD, TorqueTable

#: False sends every run through the Python loop (the tests compare the two paths).
USE_COMPILED = True

#: the compiled loop's integrator codes: row i of rollout.c's stepper table (integrators.CODES)
INTEGRATOR_CODES = {row[0]: code for code, row in enumerate(_core.steppers())}
STOP_MODES = {None: 0, "soft": 1, "hard": 2}
#: info code of a run handed back to the Python loop before a step that crosses a hard stop
HANDED_BACK = -2
#: info code of a run whose next step turned its state non-finite (it ends at the last finite state)
NON_FINITE = -1


def _pd_tables(model, pd):
    """(kp, kd, times, q_ref, qd_ref, tau_ff) tables for the C controller, or None if not expressible."""
    if pd._model is not model:
        pd.bind(model)
    if callable(pd.q_ref) or callable(pd.qd_ref):
        return None
    if not pd._vector and np.any(pd._kp[_several_dofs(model)] != 0):   # their error is mb.difference's
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
            np.ascontiguousarray(np.broadcast_to(pd._ff, (M, nv)), dtype=float), int(pd.gravity_compensation))


def _several_dofs(model):
    """Mask of the velocity variables of joints with several (spherical, free, planar)."""
    mask = np.zeros(model.nv, dtype=bool)
    for i in range(model.nb):
        if int(model.nv_joint[i]) > 1:
            mask[int(model.v_start[i]):int(model.v_start[i]) + int(model.nv_joint[i])] = True
    return mask


def controller_tables(model, controller):
    """(expressible, C controller tables or None, period) of a run's controller (bound to ``model``)."""
    if controller is None:
        return True, None, 0.0
    if type(controller) is PD:
        ctrl = _pd_tables(model, controller)
        return ctrl is not None, ctrl, controller.period or 0.0
    if type(controller) is TorqueTable:   # kp = kd = 0: any model
        controller.bind(model)
        M, nv = len(controller.times), model.nv
        zero = np.zeros(nv)
        ctrl = (zero, zero.copy(), np.ascontiguousarray(controller.times),
                np.ascontiguousarray(np.broadcast_to(model.neutral(), (M, model.nq))), np.zeros((M, nv)),
                np.ascontiguousarray(controller.tau), 0)
        return True, ctrl, controller.period or 0.0
    return False, None, 0.0


def capacity(t_final, dt, record_every):
    """Rows enough for every sample a run can record (grid samples, the final one, the last finite)."""
    steps = math.floor(t_final / dt + 1e-9) + 2
    return steps // record_every + 3


def passive_tables(model, damping, friction, friction_velocity, gravcomp, limits, soft_time, tendons=()):
    """The plan's entries for the model's passive forces (None where a term is absent)."""
    gc_lift = gc_com = stops = None
    if gravcomp is not None:   # dynamics/gravcomp.py's lift, computed the same way
        gc_lift = np.ascontiguousarray((gravcomp * model.mass)[:, None] * -np.asarray(model.gravity), dtype=float)
        gc_com = np.ascontiguousarray(model.com, dtype=float)
    mode = None
    if limits is not None and limits.mode in ("soft", "hard"):
        mode = limits.mode
        stops = np.ascontiguousarray([(qi, vi, pos, sign) for _n, qi, vi, pos, sign in limits.stops], dtype=float)
    tendon_rows = tendon_terms = None
    if tendons:   # model/tendons.py: (k, d, L_lo, L_hi) per tendon, (tendon, q index, v index, c) per term
        tendon_rows = np.array([(t.stiffness, t.damping, *t.spring_length) for t in tendons], dtype=float)
        tendon_terms = np.array([(i, qi, vi, c) for i, t in enumerate(tendons)
                                 for qi, vi, c in zip(*t._indices(model), t.coef)], dtype=float)
    return dict(damping=None if damping is None else np.ascontiguousarray(damping, dtype=float),
                tendons=tendon_rows, tendon_terms=tendon_terms,
                friction=None if friction is None else np.ascontiguousarray(friction, dtype=float),
                friction_velocity=None if friction is None else np.ascontiguousarray(
                    np.broadcast_to(np.asarray(friction_velocity, dtype=float), (model.nv,))),
                gc_lift=gc_lift, gc_com=gc_com, stops=stops,
                stop_mode=STOP_MODES[mode], soft_time=float(soft_time))


def contact_table(contact):
    """The plan's entry for a ``GroundContact`` (bodies, points, nd, K, D, μ), or None."""
    if contact is None:
        return None
    return (contact.bodies, contact.points, contact.nd, contact.K, contact.D, contact.mu)


class CompiledRuns(NamedTuple):
    """What :func:`run_compiled` returns for N runs of R samples."""
    T: np.ndarray          # (N, R) sample times
    Q: np.ndarray          # (N, R, nq)
    QD: np.ndarray         # (N, R, nv)
    QDD: np.ndarray        # (N, R, nv)
    TAU: np.ndarray        # (N, R, nv) the controller's τ
    Y_END: np.ndarray      # (N, nq + nv + nz) the state where each run ended or was handed back
    info: np.ndarray       # (N, 4) (count, code, t_from, t_to): code 0 finished, −1 non-finite, HANDED_BACK
    Z: np.ndarray | None   # (N, R, nz) contact states, or None without contact
    F: np.ndarray | None   # (N, R, points, 3) ground contact forces, or None
    held: np.ndarray | None      # (N, nv) a sampled controller's held τ where each run stopped, or None
    n_sample: np.ndarray | None  # (N,) and the index of its next sample there


def run_compiled(model, plan, Q0, QD0, t_final, dt, integrator, record_every, keep_last, t0=0.0, Z0=None,
                 held=None, n_sample=0, one_step=None):
    """Run N initial states from t0 (:class:`CompiledRuns`); with ground contact the states start
    from Z0 (zeros if None); a sampled controller resumed at t0 holds ``held`` until sample
    ``n_sample`` (None: it samples at t0).  ``one_step`` h: only one step of size h from t0 (no
    sampling: ``held`` holds; no checks; row 0 has the start's q̈ and τ, Y_END the step's end).

    Rows past a run's count are NaN (batches: a run that stopped early; runs with hard stops), or
    unset for one run: the C loop fills them, each run's on the thread that runs it (the records are
    allocated here untouched, as the core allocates its large outputs, so no serial pass over them
    precedes the threads)."""
    N = Q0.shape[0]
    R = capacity(t_final - t0, dt, record_every)
    nq, nv = model.nq, model.nv
    new = _core.output_array
    Q, QD, QDD, TAU = new((N, R, nq)), new((N, R, nv)), new((N, R, nv)), new((N, R, nv))
    T = new((N, R))   # after them: a batch keeps Q…TAU, so a loop's next batch finds their blocks first
    contact, law = plan.get("contact"), plan.get("contact_call")
    Z = F = None
    if contact is not None or law is not None:
        nz = plan["contact_states"] if law is not None else (contact[2] - 1) * len(contact[0]) if contact[5] > 0 else 0
        Z0 = np.zeros((N, nz)) if Z0 is None else np.ascontiguousarray(Z0, dtype=float)
        Z = new((N, R, nz))
    if contact is not None:
        F = new((N, R, len(contact[0]), 3))
    Y_END = np.empty((N, nq + nv + (0 if Z is None else Z.shape[2])))
    info = np.zeros((N, 4))
    sampled = plan["period"] > 0
    HELD, NS = (np.zeros((N, nv)), np.zeros(N)) if sampled else (None, None)
    held = None if held is None or not sampled else np.ascontiguousarray(held, dtype=float)
    outputs = dict(T=T, Q=Q, QD=QD, QDD=QDD, TAU=TAU, Y_END=Y_END, info=info)
    if Z is not None:
        outputs.update(Z=Z)
    if F is not None:
        outputs.update(F=F)
    if sampled:
        outputs.update(HELD_END=HELD, N_SAMPLE_END=NS)
    kp, kd, times, q_ref, qd_ref, tau_ff, gravity = plan["ctrl"] or (None,) * 6 + (0,)
    settings = dict(integrator=INTEGRATOR_CODES[integrator], t0=float(t0), t_final=float(t_final), dt=float(dt),
                    record_every=int(record_every), keep_last=int(keep_last), period=plan["period"], kp=kp, kd=kd,
                    times=times, q_ref=q_ref, qd_ref=qd_ref, tau_ff=tau_ff, gravity=gravity, contact=contact,
                    Z0=Z0, held0=held, n_sample0=int(n_sample), control=plan.get("call_control"),
                    forces=plan.get("call_forces"), guards=plan.get("call_guards"),
                    dynamics=plan.get("call_dynamics"), contact_call=law, contact_states=plan.get("contact_states"),
                    one_step=None if one_step is None else float(one_step), control_batch=plan.get("call_batch"),
                    **{k: plan.get(k) for k in ("f_ext", "damping", "friction", "friction_velocity", "gc_lift",
                                                "gc_com", "stops", "stop_mode", "soft_time", "directions",
                                                "tendons", "tendon_terms", "resting", "implicit_armature")})
    _core.rollout(model._c, np.ascontiguousarray(Q0, dtype=float), np.ascontiguousarray(QD0, dtype=float), outputs,
                  {k: v for k, v in settings.items() if v is not None})
    bad = np.flatnonzero(info[:, 1] > 0)
    if len(bad):
        n = int(bad[0])
        msg = _core.status_message(int(info[n, 1]))
        where = f" at t = {info[n, 2]!r}"
        raise ValueError(f"{msg}{where}" + (f" (run {n})" if N > 1 else ""))
    return CompiledRuns(T, Q, QD, QDD, TAU, Y_END, info, Z, F, HELD, NS)
