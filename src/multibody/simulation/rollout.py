"""The compiled fixed-step loop: whole runs of ``mb.simulate`` / ``mb.simulate_batch`` in C.

``csrc/sim/rollout.c`` integrates a run from start to end — explicit Euler, semi-implicit Euler and
RK4 (CF4 on quaternion joints) on q̈ = FDab(q, q̇, τ_all, f_ext) — with the built-in controllers
evaluated in C: none, ``mb.PD`` (optionally with gravity compensation) with constant references
or time tables (continuous or zero-order hold with a ``period``), and the model's passive forces
as :mod:`multibody.simulation.limits` defines them: damping, smoothed Coulomb friction,
``gravcomp``, fixed tendons' springs and dampers, soft position limits, and compliant ground contact (``GroundContact``: its
deformation states integrated with q and q̇).  It follows ``_run_fixed`` operation for operation (grid,
sample instants, what is recorded), so results agree with the tests' Python reference loop
(``tests/reference_steppers.py``) to rounding (≤ 1e-12).  Hard position limits run here too: the loop watches the stops and hands a step that
crosses one back to ``_run_fixed`` (its event machinery fires the impact), which resumes the
compiled loop at once (the plan's :class:`Stops`); joints left resting on their stops are held there
by TMT eq. (6)'s KKT solve (``Stops.resting``; ``csrc/sim/kkt.c``, the operations of
``JointLimits.resting_accelerations``), and the step where a stop lets go is handed back as its
release event.

**The Plan.**  What the loop runs is a typed, frozen :class:`Plan` — one record per part, each read
by ``csrc/py/py_rollout.c`` into its small struct of ``csrc/common/core.h``: :class:`Control`
(mb_control), :class:`Passive` (mb_passive: the laws of ``csrc/sim/passive.c``), :class:`Stops`
(mb_stops), :class:`Contact` (mb_contact), :class:`Callbacks` (mb_callbacks), and per call a
:class:`Run` with its :class:`Record` (mb_record).  One factory builds it, ``System.plan``.

``System.plan`` (``simulation/system.py``) says whether a run qualifies: a fixed-step integrator
(a run with user events hands the steps where one fires to the Python loop, like a hard stop's; a
constrained model's accelerations and a contact object other than ``GroundContact`` are called
back, one run).  Built-in
controllers run in C: a ``TorqueTable`` or an ``mb.PD`` whose references are constants or tables,
with no position gain on joints of several dofs (a floating base: their error is
``mb.difference``'s) (:func:`controller_tables`); any other controller, and a force function, is a
Python function the loop calls back at every stage (single runs; a batch's controller
``(t, Q, QD) -> (N, nv)``, ``Control.call_batch``, is called once a stage with the states of
all its runs still going, which then advance as one group).  :func:`run_compiled` runs N initial states (N = 1: one
``mb.simulate``); a batch advances in lockstep groups of the SIMD lanes' width (``_core.LANES``),
each stage's forward dynamics one ``aba_group`` call for the group (bit for bit each run's own
result; ``_core.use_lanes("none")`` runs them one at a time).  Everything else stays on the
Python path.  This module imports nothing from
the rest of ``simulation`` but the controllers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from ..core import _core
from ..model.configuration import integrate
from ..model.joints import JointType, spec
from .controllers import PD, TorqueTable

# ---- the fixed-step methods: rollout.c's table mb_steppers, one row each -----------------------------
#: rollout.c's table: (name, order, stages, stable_decay, flags, a, b, c, source), row i = code i
TABLE = _core.steppers()
IMPLICIT_DAMPING, NEW_VELOCITY, SYMPLECTIC = 1, 2, 4   # core.h's MB_STEP_* flags
FIXED_STEP = tuple(row[0] for row in TABLE)
#: the compiled loop's integrator codes: row i of the table is code i
INTEGRATOR_CODES = {row[0]: code for code, row in enumerate(TABLE)}
ORDER = {row[0]: row[1] for row in TABLE}
#: B: a step of h follows the decay v̇ = −λ v while λ·h < B (limits.py)
STABLE_DECAY = {row[0]: row[3] for row in TABLE}
FLAGS = {row[0]: row[4] for row in TABLE}
ADAPTIVE = {"rk45": "RK45", "dop853": "DOP853", "radau": "Radau", "lsoda": "LSODA", "rk23": "RK23",
            "bdf": "BDF"}

#: info code of a run handed back to the Python loop before a step that crosses a hard stop
HANDED_BACK = -2
#: info code of a run whose next step turned its state non-finite (it ends at the last finite state)
NON_FINITE = -1
#: status codes (csrc/common/status.h) of a solve that failed: MB_SINGULAR, MB_CONTACT_LCP, MB_CONTACT_STIFF —
#: the message names a joint without inertia where the model has one (dynamics.mobility.massless_cause)
SOLVE_FAILURES = (7, 16, 17)


# ---- the state and the step grid ------------------------------------------------------------------
def next_step_end(t, dt, t_final, period, n_sample, sample):
    """Where a fixed-step loop's step from t ends: (t_next, k_next, n_sample).

    The step ends on the grid point k_next·dt (or t_final), or earlier at the next sample time
    n_sample·period of a sampled controller; when t itself is a sample time, ``sample(t)`` is called
    first and n_sample moves on (n_sample counts the samples taken).
    """
    eps = 1e-9 * dt
    next_sample = math.inf
    if period is not None:
        if t >= n_sample * period - eps:
            sample(t)
            n_sample = math.floor((t + eps) / period) + 1
        next_sample = n_sample * period
    k_next = math.floor(t / dt + 1e-9) + 1
    t_next = min(k_next * dt, t_final)
    if next_sample < t_next - eps:
        t_next = next_sample
    return t_next, k_next, n_sample



class StateSpace:
    """Layout of y = [q, v, z] for a model, and q ⊕ v·h on it."""

    def __init__(self, model, nz: int = 0):
        self.model = model
        self.nq, self.nv, self.nz = model.nq, model.nv, nz
        self.n = self.nq + self.nv + nz
        layout = model.__dict__.get("_state_layout")   # the model's alone: once per (immutable) Model
        if layout is None:
            manifold = tuple((JointType(int(model.jtype[i])), int(model.q_start[i]), int(model.v_start[i]))
                             for i in range(model.nb)
                             if not spec(model.jtype[i]).vector)
            layout = model.__dict__["_state_layout"] = (
                manifold, tuple(qs + spec(jt).quat for jt, qs, _ in manifold if spec(jt).quat >= 0))
        self.manifold, self.quaternion_starts = layout
        self.vector = not self.manifold

    def split(self, y):
        nq, nv = self.nq, self.nv
        return y[:nq], y[nq:nq + nv], y[nq + nv:]

    def advance(self, y, K, h):
        """y ⊕ h·K: q moves on the manifold with velocity K[:nv], the rest adds (y may be a batch (N, n))."""
        if self.vector:
            return y + h * K
        nq, nv = self.nq, self.nv
        out = np.empty_like(y)
        out[..., :nq] = integrate(self.model, y[..., :nq], K[..., :nv], h)
        out[..., nq:] = y[..., nq:] + h * K[..., nv:]
        return out

    def normalise(self, y):
        """Unit quaternions in y (used after adaptive steps, which move q in coordinates)."""
        for s in self.quaternion_starts:
            y[..., s:s + 4] /= np.linalg.norm(y[..., s:s + 4], axis=-1, keepdims=True)
        return y

    def coordinate_rate(self, q, v):
        """q̇ for q̇ = G(q) v: quaternion ½ q ⊗ (0, ω); free-joint position R(quat)·v; planar R(θ)·v."""
        if self.vector:
            return v
        qdot = np.empty(self.nq)
        # plain-vector joints: q̇ = v, copied joint by joint (their q and v indices differ after a quaternion)
        m = self.model
        for i in range(m.nb):
            if spec(m.jtype[i]).vector:
                qs, vs, n = int(m.q_start[i]), int(m.v_start[i]), int(m.nv_joint[i])
                qdot[qs:qs + n] = v[vs:vs + n]
        for jt, qs, vs in self.manifold:
            if jt == JointType.PLANAR:
                th = q[qs + 2]
                c, s = np.cos(th), np.sin(th)
                qdot[qs] = c * v[vs] - s * v[vs + 1]
                qdot[qs + 1] = s * v[vs] + c * v[vs + 1]
                qdot[qs + 2] = v[vs + 2]
                continue
            s0 = qs + (3 if jt == JointType.FREE else 0)
            w0, w1, w2, w3 = q[s0:s0 + 4] / np.linalg.norm(q[s0:s0 + 4])
            ox, oy, oz = v[vs:vs + 3]
            qdot[s0:s0 + 4] = 0.5 * np.array([-w1 * ox - w2 * oy - w3 * oz,
                                              w0 * ox + w2 * oz - w3 * oy,
                                              w0 * oy - w1 * oz + w3 * ox,
                                              w0 * oz + w1 * oy - w2 * ox])
            if jt == JointType.FREE:
                R = np.array([[1 - 2 * (w2 * w2 + w3 * w3), 2 * (w1 * w2 - w0 * w3), 2 * (w1 * w3 + w0 * w2)],
                              [2 * (w1 * w2 + w0 * w3), 1 - 2 * (w1 * w1 + w3 * w3), 2 * (w2 * w3 - w0 * w1)],
                              [2 * (w1 * w3 - w0 * w2), 2 * (w2 * w3 + w0 * w1), 1 - 2 * (w1 * w1 + w2 * w2)]])
                qdot[qs:qs + 3] = R @ v[vs + 3:vs + 6]
        return qdot


# ---- the Plan: what the compiled loop runs, one record per part (core.h's small structs) ----------
Array = Any   # a float64 array (C-contiguous), or None where the part is absent


@dataclass(frozen=True)
class Control:
    """The controller: a PD's or torque table's C tables (kp … tau_ff, ``gravity``: the PD adds g(q)),
    or the caller's function of one run (``call``: (t, q, qd) -> τ) or of a whole batch (``call_batch``:
    (t, Q, QD) -> (N, nv)); ``period`` > 0: sampled with a zero-order hold.  (core.h: mb_control)"""
    kp: Array = None
    kd: Array = None
    times: Array = None
    q_ref: Array = None
    qd_ref: Array = None
    tau_ff: Array = None
    gravity: int = 0
    period: float = 0.0
    call: Callable | None = None
    call_batch: Callable | None = None


@dataclass(frozen=True)
class Passive:
    """The model's passive forces, one field (or pair) per law of ``csrc/sim/passive.c`` (core.h:
    mb_passive): damping (nv); friction (nv) with its v_s ``friction_velocity`` (nv); gravcomp's lift
    gravcomp·m·(−g) ``gc_lift`` (nb, 3) at the centres of mass ``gc_com`` (nb, 3); the fixed tendons
    (k, d, L_lo, L_hi) per tendon with their ``tendon_terms`` (tendon, q index, v index, c); the soft
    stops' rows ``soft_stops`` (13 numbers each: limits.py JointLimits.soft_rows); the armature forward
    dynamics runs with (``semi_implicit``'s damping); the joint springs' rows (q index, v index, k,
    q_spring) ``springs``; the actuators' rows ``actuators`` (model/actuators.py ROW) with their
    transmissions' ``actuator_terms`` (k, 3) (q index, v index, coefficient), their constant
    ``actuator_ctrl`` (n,) and each variable's actuator force range
    ``actuator_dof_range`` (nv, 2); ``actuator_gravcomp`` (k,): the increasing v indices whose range
    clips the actuators' force together with gravcomp's generalized force (MJCF ``actuatorgravcomp``
    with ``actuatorfrcrange``; needs ``gc_lift``); ``effort`` (nv,): the controller's τ clipped to
    ±effort first (``simulate(..., effort_limits=True)``; the largest double where a variable has none)."""
    damping: Array = None
    friction: Array = None
    friction_velocity: Array = None
    gc_lift: Array = None
    gc_com: Array = None
    tendons: Array = None
    tendon_terms: Array = None
    soft_stops: Array = None
    implicit_armature: Array = None
    springs: Array = None
    actuators: Array = None
    effort: Array = None
    actuator_terms: Array = None
    actuator_ctrl: Array = None
    actuator_dof_range: Array = None
    actuator_gravcomp: Array = None


@dataclass(frozen=True)
class Stops:
    """Hard stops (core.h: mb_stops): ``rows`` (q index, v index, position, sign); a step that crosses
    one is handed back to the Python loop's events.  ``resting``: (body, v index, sign) of the joints
    resting on their stops (one run), held by the KKT solve until their release is handed back."""
    rows: Array = None
    resting: Array = None


#: the contact points one candidate pair may give: scene_contact.h's MB_SCENE_PAIR_MAX
SCENE_PAIR_MAX = 8


@dataclass(frozen=True)
class Contact:
    """Contact (core.h: mb_contact): the ground's table (bodies, points, nd, K, D, μ) of a
    ``GroundContact``; or ``scene`` (gint, gdat, hulls, pairs, pdat, K, D) of a ``SceneContact``: the
    model's geoms (``Geoms.packed``) under the compliant law, 2 states per slot (pair, point: ``Contacts.slot``),
    or with ``hard`` (restitution, erp, slop, cfm, the limits' restitution: ``csrc/sim/hard_contact.h``)
    under hard contact, no
    states (K, D unused), keeping the rows ``hard_rows`` (n, nv) of the run's constant-Jacobian
    constraints, with the joint limits ``hard_limits`` (q index, v index, position, sign) as rows of
    its LCP; or another law the loop calls back, ``call`` (t, q, qd, z) -> [f_ext, ż], with
    its ``states``.  ``implicit_step``: the step the compliant scene's law is implicit over under
    ``semi_implicit`` (the run's dt, also in the partial steps that locate an event, as the implicit
    damping's armature is; 0: each step's own size).  ``slots``: the scene's contact slots
    (``Geoms.n_slots``: the size of its recorded forces, and half its states under the compliant law)."""
    ground: tuple | None = None
    scene: tuple | None = None
    call: Callable | None = None
    states: int = 0
    slots: int = 0
    hard: Array = None
    hard_rows: Array = None
    hard_limits: Array = None
    implicit_step: float = 0.0


@dataclass(frozen=True)
class Callbacks:
    """The caller's functions the loop calls (one run; core.h: mb_callbacks): ``forces`` (t, q, qd) ->
    f_ext, ``guards`` (t, q, qd) -> the events' guard values with their ``directions`` (int32), and a
    constrained model's ``dynamics`` (t, q, qd, τ_all, f_ext | None) -> q̈.  ``z_columns`` > 0: the
    contact law's states end with the sensitivities' Z ((2 nv + its own states) × z_columns, row
    major), which a ``NEW_VELOCITY`` step (semi_implicit) moves with the new δv."""
    forces: Callable | None = None
    guards: Callable | None = None
    directions: Array = None
    dynamics: Callable | None = None
    z_columns: int = 0


@dataclass(frozen=True)
class Constraints:
    """A constrained model's rows in C (core.h: mb_constraints; ``csrc/sim/constraints.c``): the tables
    of :func:`multibody.dynamics.constraint_tables.constraint_tables` — ``items`` (n, 16), ``terms``
    (t, 3), ``coef`` (k,) and ``gains`` (α, β, rank_tol).  The loop's forward dynamics is then TMT
    eq. (6) in C; ``Callbacks.dynamics`` (the Python statement), where given, takes the stages whose
    solve is singular (a redundant set's minimum-norm multipliers, or its diagnostics)."""
    items: Array
    terms: Array
    coef: Array
    gains: Array


@dataclass(frozen=True)
class Plan:
    """A run's plan: what ``csrc/sim/rollout.c`` integrates, one record per part, read by
    ``csrc/py/py_rollout.c`` into core.h's structs (one small function per record).  Built by one
    factory, :meth:`System.plan <multibody.simulation.system.System.plan>`; the event machinery
    around the loop and the sensitivities amend it with ``dataclasses.replace``."""
    control: Control
    f_ext: Array
    passive: Passive
    stops: Stops
    contact: Contact
    callbacks: Callbacks
    constraints: Constraints | None = None


@dataclass(frozen=True)
class Record:
    """What a compiled stretch keeps (core.h: mb_record): every ``record_every``-th grid sample and, with
    ``keep_last``, a run's last finite state off the grid."""
    record_every: int = 1
    keep_last: bool = False


@dataclass(frozen=True)
class Run:
    """One call's window over a Plan: the integrator's code, [t0, t_final] in steps of dt (or one step
    of ``one_step``), a sampled controller's hold at t0 (``held0``, next sample ``n_sample0``), the
    contact states' start ``Z0`` and its Record.  ``starts`` (N,): runs of their own windows (a batch's
    runs handed back, resumed together between their events), run n from ``starts[n]`` ≥ t0 with
    ``resting[n]`` (nv, 3) its joints resting on their stops (``Stops.resting``'s rows, then rows of
    body −1); each run is then advanced exactly as its own single call would advance it."""
    integrator: int
    t0: float
    t_final: float
    dt: float
    one_step: float | None
    held0: Array
    n_sample0: int
    Z0: Array
    record: Record
    starts: Array = None
    resting: Array = None


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
    """(expressible, its :class:`Control` or None, period) of a run's controller (bound to ``model``)."""
    if controller is None:
        return True, Control(), 0.0
    period = float(controller.period or 0.0) if type(controller) in (PD, TorqueTable) else 0.0
    if type(controller) is PD:
        ctrl = _pd_tables(model, controller)
        if ctrl is None:
            return False, None, period
        kp, kd, times, q_ref, qd_ref, tau_ff, gravity = ctrl
        return True, Control(kp, kd, times, q_ref, qd_ref, tau_ff, gravity, period), period
    if type(controller) is TorqueTable:   # kp = kd = 0: any model
        controller.bind(model)
        M, nv = len(controller.times), model.nv
        zero = np.zeros(nv)
        return True, Control(zero, zero.copy(), np.ascontiguousarray(controller.times),
                             np.ascontiguousarray(np.broadcast_to(model.neutral(), (M, model.nq))), np.zeros((M, nv)),
                             np.ascontiguousarray(controller.tau), 0, period), period
    return False, None, 0.0


def capacity(t_final, dt, record_every):
    """Rows enough for every sample a run can record (grid samples, the final one, the last finite)."""
    steps = math.floor(t_final / dt + 1e-9) + 2
    return steps // record_every + 3


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
    stop_force: np.ndarray | None = None   # (N, nv) one step's resting stops' λ at its start (first n_resting), or None


def run_compiled(model, plan, Q0, QD0, t_final, dt, integrator, record_every, keep_last, t0=0.0, Z0=None,
                 held=None, n_sample=0, one_step=None, starts=None, resting=None):
    """Run N initial states from t0 (:class:`CompiledRuns`); with ground contact the states start
    from Z0 (zeros if None); a sampled controller resumed at t0 holds ``held`` until sample
    ``n_sample`` (None: it samples at t0).  ``one_step`` h: only one step of size h from t0 (no
    sampling: ``held`` holds; no checks; row 0 has the start's q̈ and τ, Y_END the step's end; h < 0
    steps backwards, with ``dt`` = |h|; with joints resting on stops, ``stop_force`` has their λ at
    its start, as the step holds them).  ``plan``: a
    :class:`Plan`, the window and recording become its :class:`Run`.  ``starts`` (N,), ``resting``
    (N, nv, 3) or None: each run from its own start with its own resting joints (``Run.starts``;
    ``t0`` is then their earliest).

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
    ground, scene, law = plan.contact.ground, plan.contact.scene, plan.contact.call
    Z = F = None
    slots = plan.contact.slots if scene is not None else 0
    if ground is not None or scene is not None or law is not None:
        nz = plan.contact.states if law is not None else (0 if plan.contact.hard is not None else 2 * slots) \
            if scene is not None else \
            (ground[2] - 1) * len(ground[0]) if ground[5] > 0 else 0
        Z0 = np.zeros((N, nz)) if Z0 is None else np.ascontiguousarray(Z0, dtype=float)
        Z = new((N, R, nz))
    if ground is not None or slots:
        F = new((N, R, len(ground[0]) if ground is not None else slots, 3))
    Y_END = np.empty((N, nq + nv + (0 if Z is None else Z.shape[2])))
    info = np.zeros((N, 4))
    sampled = plan.control.period > 0
    HELD, NS = (np.zeros((N, nv)), np.zeros(N)) if sampled else (None, None)
    held = None if held is None or not sampled else np.ascontiguousarray(held, dtype=float)
    outputs = dict(T=T, Q=Q, QD=QD, QDD=QDD, TAU=TAU, Y_END=Y_END, info=info)
    if Z is not None:
        outputs.update(Z=Z)
    if F is not None:
        outputs.update(F=F)
    if sampled:
        outputs.update(HELD_END=HELD, N_SAMPLE_END=NS)
    STOP = None
    if one_step is not None and plan.stops.resting is not None and len(plan.stops.resting):
        STOP = outputs["STOP_FORCE"] = np.full((N, nv), np.nan)
    run = Run(INTEGRATOR_CODES[integrator], float(t0), float(t_final), float(dt),
              None if one_step is None else float(one_step), held, int(n_sample), Z0,
              Record(int(record_every), bool(keep_last)), starts, resting)
    _core.rollout(model._c, np.ascontiguousarray(Q0, dtype=float), np.ascontiguousarray(QD0, dtype=float), outputs,
                  plan, run)
    bad = np.flatnonzero(info[:, 1] > 0)
    if len(bad):
        n = int(bad[0])
        msg = _core.status_message(int(info[n, 1]))
        where = f" at t = {float(info[n, 2])!r}"
        if int(info[n, 1]) in SOLVE_FAILURES:   # a joint without inertia makes every solve through it rounding
            from ..dynamics.mobility import massless_cause
            cause = massless_cause(model)
            msg += f"; {cause}" if cause else ""
        raise ValueError(f"{msg}{where}" + (f" (run {n})" if N > 1 else ""))
    return CompiledRuns(T, Q, QD, QDD, TAU, Y_END, info, Z, F, HELD, NS, STOP)
