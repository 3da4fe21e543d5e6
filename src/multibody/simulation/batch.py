"""``mb.simulate_batch``: many simulations of one model at once, here or on a cluster.

Fixed-step runs without events or contact advance in ``csrc/sim/rollout.c``, the one fixed-step loop
(``simulate``'s), constrained ones too where their constraints are of the kinds solved in C
(``csrc/sim/constraints.c``; a singular solve stops that run): with a built-in controller in groups
of the SIMD lanes' width on all threads; with a Python controller of the whole batch all N states in lockstep, the controller
called once a stage with every run still going, the rest in C.  Anything else (adaptive integrators, events, per-run
``params``) runs ``mb.simulate`` once per initial state.  Given ``executor`` — any
``concurrent.futures.Executor`` or a ``dask.distributed.Client`` — the states are cut into chunks
and each chunk is submitted as one task, so a sweep scales out to a cluster; results come back in
order and are bit-identical to a local run.
"""
from __future__ import annotations

import numpy as np

from .. import _checks
from ..spatial.rotations import unit_quaternion
from . import rollout
from .core import (Recorder, _fixed_machine, _resume_together, build_trajectory, check_record_size,
                   contact_record_width, default_start, model_constraints, release_by_step, simulate)
from .rollout import FIXED_STEP, FLAGS, IMPLICIT_DAMPING, StateSpace
from .controllers import PD
from .limits import FRICTION_VELOCITY, JointLimits, check_pd_steps, joint_springs, limit_mode, step_friction_velocity
from .constraints import ConstraintSet, with_model_constraints
from .system import (System, _check_model, _positive, check_actuator_steps, check_spring_steps, default_integrator,
                     default_step, scene_contact)
from .trajectory import (_NO_ENERGY, STATE_LIMIT, EnergyUnavailable, Trajectory, blow_up, cut_at_blow_up,
                         energies_of, model_fingerprint)
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model


class BatchTrajectory:
    """N runs on a common time grid: ``t`` (T,), ``q`` (N, T, nq), ``qd``/``qdd``/``tau`` (N, T, nv),
    energies (N, T), ``status`` (N,) and ``messages``.  ``batch[i]`` is run i as a :class:`Trajectory`.

    A run that blew up keeps its samples up to its last finite state, or its last within 1e10 (as
    :func:`multibody.simulate`'s); later samples are NaN and its ``status`` is ``"diverged"`` (message
    with the time).  ``passive`` and ``contact`` say, as a :class:`Trajectory`'s, what the runs applied
    from the model (limits, damping, friction and its v_s, a softened default contact, …) and the contact
    model's name (the first run's, where a ``params`` sweep's runs differ: each ``batch[i]`` says its own).
    Batches of runs with events, whose sample times differ, hold the runs as a list (``runs``) instead of
    stacked arrays.  As in a :class:`Trajectory`, the energies are computed from ``q``, ``qd`` on first
    access (one batched ``mb.energy`` call over every finite sample) and cached.
    """

    def __init__(self, t, q, qd, qdd, tau, kinetic_energy=None, potential_energy=None, status=(), messages=(),
                 integrator="", model_name="", model_fingerprint="", quaternion_starts=(), runs=None, model=None,
                 passive=(), contact=None):
        self.t, self.q, self.qd, self.qdd, self.tau = t, q, qd, qdd, tau
        self.passive, self.contact = tuple(passive), contact
        self._ke, self._pe = kinetic_energy, potential_energy
        self.status, self.messages = list(status), list(messages)
        self.integrator, self.model_name, self.model_fingerprint = integrator, model_name, model_fingerprint
        self.quaternion_starts = quaternion_starts
        self.runs = runs
        self.model = model

    def _energies(self):
        if self._ke is None:
            if self.q is None:
                return None, None
            if self.runs is not None:  # runs may differ in their model (params sweeps): each its own
                self._ke = np.stack([r.kinetic_energy for r in self.runs])
                self._pe = np.stack([r.potential_energy for r in self.runs])
            elif self.model is None:
                raise EnergyUnavailable(_NO_ENERGY)
            else:
                self._ke, self._pe = energies_of(self.model, self.q, self.qd)
        return self._ke, self._pe

    @property
    def kinetic_energy(self):
        """Kinetic energy (N, T), computed on first access (NaN after a run stopped)."""
        return self._energies()[0]

    @property
    def potential_energy(self):
        """Gravitational potential energy (N, T), computed on first access."""
        return self._energies()[1]

    @property
    def total_energy(self):
        ke, pe = self._energies()
        return None if ke is None else ke + pe

    def __len__(self):
        return len(self.status)

    def __repr__(self):
        shape = "runs of differing sample times" if self.q is None else f"{self.q.shape[1]} samples each"
        passive = f", {', '.join(self.passive)}" if self.passive else ""
        return (f"BatchTrajectory({self.model_name!r}, {len(self)} runs, {shape}, "
                f"{sum(s != 'finished' for s in self.status)} not finished{passive})")

    def __getitem__(self, i) -> Trajectory:
        if not isinstance(i, (int, np.integer)):
            raise TypeError("batch index: expected an integer run number")
        if not -len(self) <= i < len(self):
            raise IndexError(f"run {i} out of range 0…{len(self) - 1}")
        if self.runs is not None:
            return self.runs[i]
        keep = np.all(np.isfinite(self.q[i]), axis=-1)
        cached = self._ke is not None
        run = Trajectory(t=self.t[keep], q=self.q[i][keep], qd=self.qd[i][keep], qdd=self.qdd[i][keep],
                         tau=self.tau[i][keep], kinetic_energy=self._ke[i][keep] if cached else None,
                         potential_energy=self._pe[i][keep] if cached else None, status=self.status[i],
                         message=self.messages[i], integrator=self.integrator,
                         model_fingerprint=self.model_fingerprint, model_name=self.model_name,
                         quaternion_starts=self.quaternion_starts, model=self.model)
        run.passive, run.contact = self.passive, self.contact
        return run

    @classmethod
    def from_runs(cls, runs: list) -> "BatchTrajectory":
        same = all(len(r.t) == len(runs[0].t) and np.array_equal(r.t, runs[0].t) for r in runs)
        first = runs[0]
        meta = dict(status=[r.status for r in runs], messages=[r.message for r in runs],
                    integrator=first.integrator, model_name=first.model_name,
                    model_fingerprint=first.model_fingerprint, quaternion_starts=first.quaternion_starts,
                    passive=first.passive, contact=getattr(first, "contact", None))
        if same and len({(r.q.shape[1], r.qd.shape[1]) for r in runs}) == 1:
            st = lambda k: np.stack([getattr(r, k) for r in runs])  # noqa: E731
            return cls(t=first.t, q=st("q"), qd=st("qd"), qdd=st("qdd"), tau=st("tau"), runs=runs, **meta)
        return cls(t=None, q=None, qd=None, qdd=None, tau=None, runs=runs, **meta)


def _batch_states(name, X, n):
    a = _checks.array(name, X, None, finite=False)
    if a.ndim != 2 or a.shape[1] != n:
        raise ValueError(f"{name}: expected shape (N, {n}) (one row per simulation), got {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(a), axis=1))[0])
        raise ValueError(f"{name}: row {bad} contains NaN or inf")
    return a


def _run_compiled_batch(model, plan, Q0, QD0, t_final, dt, integrator, record_every, make_system=None):
    """N fixed-step runs in ``csrc/sim/rollout.c``: every run is ``simulate``'s compiled run, bit for bit
    (groups of runs advance in lockstep, their forward dynamics in SIMD lanes).

    With hard stops, a run handed back before a step that reaches a stop goes on through the event
    machinery (``make_system()`` gives it its own System and stops), as its ``simulate`` would, the
    handed-back runs together (:func:`_finish_handed_back`)."""
    space = StateSpace(model)
    Q0 = np.array(Q0, dtype=float)
    for s in space.quaternion_starts:
        zero = ~np.any(Q0[:, s:s + 4], axis=1)
        if np.any(zero):
            raise ValueError(f"Q0: the quaternion at Q0[{int(np.argmax(zero))}, {s}:{s + 4}] is zero; "
                             f"expected a unit quaternion")
        Q0[:, s:s + 4] = unit_quaternion(Q0[:, s:s + 4])
    # runs that start on a hard stop start in the event machinery, as simulate's (JointLimits.start: an
    # impact at t = 0 or rest on it; the compiled loop sees a stop only where its guard crosses from > 0)
    on_stop = set()
    if plan.stops.rows is not None and len(plan.stops.rows):
        qi, pos = plan.stops.rows[:, 0].astype(int), plan.stops.rows[:, 2]
        on_stop = set(np.flatnonzero(np.any(Q0[:, qi] == pos, axis=1)).tolist())
    out = rollout.run_compiled(model, plan, Q0, QD0, t_final, dt, integrator, record_every, keep_last=False)
    T, Q, QD, QDD, TAU, Y_END, info = out[:7]
    back = np.flatnonzero(info[:, 1] == rollout.HANDED_BACK)
    if len(back) or on_stop:
        return _finish_handed_back(model, space, plan, out, t_final, dt, integrator, record_every, make_system,
                                   {i: (Q0[i], QD0[i]) for i in on_stop})
    counts = info[:, 0].astype(int)
    R = int(counts.max())
    full = int(np.flatnonzero(counts == R)[0])
    dead = info[:, 1] < 0
    status = ["diverged" if d else "finished" for d in dead]
    messages = [f"the state became non-finite in the step from t = {float(info[i, 2])!r}; the run keeps its "
                f"samples up to then" if dead[i] else "" for i in range(len(dead))]
    return BatchTrajectory(t=T[full, :R].copy(), q=Q[:, :R], qd=QD[:, :R], qdd=QDD[:, :R], tau=TAU[:, :R],
                           model=model, status=status, messages=messages, integrator=integrator,  # energies: lazy
                           model_name=model.name, model_fingerprint=model_fingerprint(model),
                           quaternion_starts=space.quaternion_starts)


def _finish_handed_back(model, space, plan, out, t_final, dt, integrator, record_every, make_system, starts=None):
    """Every run as a Trajectory: those handed back at a hard stop continue through the event machinery
    (``core._fixed_machine``, with a sampled controller's hold where they stopped), all of them together
    (``core._resume_together``: between their events their compiled stretches run as one call on all
    threads); ``starts`` (run → (q0, q̇0)): runs starting on a hard stop, which enter the machinery from
    their start as simulate's (after ``JointLimits.start``).  Each run's numbers are its ``simulate``'s."""
    T, Q, QD, QDD, TAU, Y_END, info = out[:7]
    runs, machines, which, systems = [], [], [], []
    for i in range(Q.shape[0]):
        if starts and i in starts:
            system, events = make_system()
            systems.append(system)
            release_by_step(model, plan, system, space, integrator, dt)
            system.last_z = np.zeros(0)
            q0, qd0 = system.limits.start(0.0, starts[i][0].copy(), starts[i][1].copy())
            machines.append(_fixed_machine(model, space, system, events, np.concatenate((q0, qd0)), t_final, dt,
                                           integrator, record_every, 0.0, 0.0, False, plan))
            which.append(i)
            runs.append(None)
            continue
        n = int(info[i, 0])
        rec = Recorder()
        Y = np.concatenate((Q[i, :n], QD[i, :n]), axis=1)
        finite = np.isfinite(QDD[i, :n, 0]).tolist()
        rec.extend(T[i, :n], Y, [(a, b, None) if f else None for a, b, f in zip(QDD[i, :n], TAU[i, :n], finite)])
        if info[i, 1] == rollout.HANDED_BACK:
            system, events = make_system()
            systems.append(system)
            release_by_step(model, plan, system, space, integrator, dt)
            t0, n_sample = float(info[i, 2]), 0
            if out.held is not None:
                system.held_tau, n_sample = out.held[i].copy(), int(out.n_sample[i])
            machines.append(_fixed_machine(model, space, system, events, Y_END[i].copy(), t_final, dt, integrator,
                                           record_every, 0.0, 0.0, False, plan, t0=t0, rec=rec, n_sample=n_sample))
            which.append(i)
            runs.append(None)
            continue
        runs.append(build_trajectory(model, space, System(model, warn=False), rec, [], "finished", "", integrator))
    try:
        for i, traj in zip(which, _resume_together(model, plan, machines, dt, integrator, record_every)):
            runs[i] = traj
    finally:   # the stops' events lent to the handed-back runs go back to the model (limits.JointLimits.release)
        for system in systems:
            if system.limits is not None:
                system.limits.release()
    return BatchTrajectory.from_runs(runs)


def _batch_system(model, kwargs, warn=False, events=True):
    """(System, stop events) of one vectorised run: the controller, forces and the model's passive terms.

    ``events``: False for a System that runs no event machinery (no stop events lent: ``()``); a run
    that takes them gives them back when it is over (``system.limits.release()``).

    ``warn``: the System's warnings (filtered actuators leaving their start) — True only for the one
    System simulate_batch builds to check the gains, so a batch call warns once, not per chunk."""
    stops = JointLimits(model, kwargs.get("limits"), kwargs.get("limit_restitution", 0.0), kwargs["dt"])
    contact = kwargs.get("contact")   # None, or hard contact (its constraints and limits rows of its LCP, in C)
    system = System(model, kwargs["controller"], kwargs["f_ext"], limits=stops, contact=contact,
                    constraints=model_constraints(model, None) if contact is not None
                    else _c_constraints(model, kwargs.get("constraints")),
                    friction_velocity=kwargs.get("friction_velocity", FRICTION_VELOCITY), ctrl=kwargs.get("ctrl"),
                    warn=warn)
    system.friction_velocity = step_friction_velocity(model, system.damping, system.friction,   # as simulate
                                                      system.friction_velocity, kwargs["dt"], kwargs["integrator"])
    if FLAGS[kwargs["integrator"]] & IMPLICIT_DAMPING:   # semi_implicit (System.implicit_damping)
        system.implicit_damping(kwargs["dt"])
    return system, tuple(stops.events(system)) if events and system.hard_stops else ()


def _check_gains(model, system, kwargs, Q0):
    """A stiff PD, actuator or joint spring the fixed step cannot follow is refused up front, as simulate refuses it,
    at every distinct start of the batch (the effective inertia, and so the mode, depends on q)."""
    controller, dt, integrator = kwargs["controller"], kwargs["dt"], kwargs["integrator"]
    pd = isinstance(controller, PD) and controller.period is None
    springs = bool(np.any(joint_springs(model)))
    if not (pd or system.actuators is not None or springs):
        return
    starts = np.unique(Q0, axis=0, return_index=True)[1]
    if springs:   # (first: the PD's and the servos' checks linearise the springs beside their gains)
        check_spring_steps(model, system.damping, Q0[starts], dt, integrator, runs=starts)
    if pd:
        check_pd_steps(model, controller, system.damping, Q0[starts], dt, integrator, runs=starts)
    if system.actuators is not None:
        check_actuator_steps(model, system.actuators, system.damping, Q0[starts], dt, integrator, runs=starts)


def _run_chunk(task):
    """One executor task: a chunk of initial states, vectorised or one simulate() per state."""
    kind, model, Q0, QD0, t_final, kwargs, params = task
    if kind == "vectorised":
        system, _events = _batch_system(model, kwargs, events=False)
        plan = system.plan(kwargs["integrator"], batch=True)   # every run in C, on all threads
        if system.hard_stops:   # rows beyond a stop start on it, warned (as simulate's)
            Q0 = system.limits.enter(Q0)
        return _run_compiled_batch(model, plan, Q0, QD0, t_final, kwargs["dt"], kwargs["integrator"],
                                   kwargs["record_every"], lambda: _batch_system(model, kwargs))
    runs = []
    for i in range(Q0.shape[0]):
        kw = dict(kwargs)
        m = model
        if params is not None:
            extra = dict(params[i])
            m = extra.pop("model", model)
            kw.update(extra)
        runs.append(simulate(m, Q0[i], QD0[i], t_final, **kw))
    return runs


def _concat(parts):
    first = parts[0]
    cat = lambda k, ax: np.concatenate([getattr(p, k) for p in parts], axis=ax)  # noqa: E731
    cached = all(p._ke is not None for p in parts)
    return BatchTrajectory(t=first.t, q=cat("q", 0), qd=cat("qd", 0), qdd=cat("qdd", 0), tau=cat("tau", 0),
                           kinetic_energy=cat("_ke", 0) if cached else None,
                           potential_energy=cat("_pe", 0) if cached else None, model=first.model,
                           status=sum((p.status for p in parts), []), messages=sum((p.messages for p in parts), []),
                           integrator=first.integrator, model_name=first.model_name,
                           model_fingerprint=first.model_fingerprint, quaternion_starts=first.quaternion_starts,
                           passive=first.passive, contact=first.contact)


def _passive_beyond_damping(model, limits):
    """Does the model carry terms only ``simulate`` applies (limits, friction, gravcomp, constraints, tendons)?"""
    if getattr(model, "constraints", ()) or getattr(model, "tendons", ()) or np.any(model.friction != 0):
        return True
    gc = getattr(model, "gravcomp", None)
    if gc is not None and np.any(np.asarray(gc) != 0):
        return True
    return limits != "off" and bool(JointLimits(model, limits))


def _c_constraints(model, constraints):
    """The ConstraintSet a vectorised batch solves in C (``csrc/sim/constraints.c``: the model's own
    constraints joined with ``constraints``, all of the kinds of fixed geometry; a singular solve
    stops that run), None without constraints, or False when they need one ``simulate`` per state
    (another kind, ``redundant="least_squares"``, a GammaQ, a user's object, a ``model.gamma_q``)."""
    if getattr(model, "gamma_q", None) is not None:
        return False
    try:
        cs = with_model_constraints(model, constraints)
    except TypeError:
        return False
    if cs is None:
        return None
    if (type(cs) is not ConstraintSet or cs.redundant != "error"
            or cs.tables(model) is None):   # a redundant set's minimum-norm solve is the Python statement's
        return False
    return cs


def _compiled_passive(model, controller, integrator, kwargs):
    """Can the compiled loop apply the model's passive terms (limits, friction, gravcomp, tendons) to this batch?"""
    if integrator not in rollout.INTEGRATOR_CODES:
        return False
    ok, _ctrl, period = rollout.controller_tables(model, controller)
    hard = limit_mode(model, kwargs.get("limits")) == "hard" and bool(JointLimits(model, "hard"))
    return ok and not (hard and period)


def _sampled_in_python(model, controller):
    """Is the controller sampled (a ``period``) but not one the compiled loop holds itself (an mb.PD with
    callable references, a function with a ``period``)?  Such a batch runs one ``simulate`` per state,
    which keeps the hold; the batch loop calls a Python controller at every stage."""
    return getattr(controller, "period", None) is not None and not rollout.controller_tables(model, controller)[0]


def simulate_batch(model: Model, Q0: ArrayLike | None, QD0: ArrayLike | None, t_final: float, dt: float | None = None,
                   integrator: str | None = None, controller: object | None = None,
                   f_ext: ArrayLike | None = None, events: object = (), record_every: int = 1,
                   params: list[dict] | None = None, executor: object | None = None, chunks: int | None = None,
                   **kwargs) -> BatchTrajectory:
    """Run N simulations of ``model`` from the rows of ``Q0`` (N, nq) and ``QD0`` (N, nv).

    Parameters
    ----------
    model : Model
        The mechanism.
    Q0, QD0 : array_like, shape (N, nq) and (N, nv), or None
        The runs' starts; None: rows of the model's default state (``keyframe=`` a keyframe's), as
        many as the other one has (one run when both are None).
    t_final, dt, integrator, controller, f_ext, events, record_every
        As for :func:`simulate`; ``controller`` may also be a Python controller of the whole batch
        (below).
    **kwargs
        :func:`simulate`'s other keyword arguments (``limits``, ``contact``, ``ground``, ``ctrl``,
        ``keyframe``, ``progress``, …), the same for every run.

    params : None or N dicts of per-run keyword arguments for ``simulate`` (a dict may hold
        ``"model"`` to run a variant of the model: a parameter sweep).
    executor, chunks : None (run here), a ``concurrent.futures.Executor`` or a ``dask.distributed.Client``;
        the runs are split into ``chunks`` tasks (default: 4 per worker, at most N).
    progress : a bar over the runs (tqdm), moved as groups of runs finish (without an executor
        the batch then runs in about 50 groups; the results are the same).

    The model's position limits (``limits``, ``limit_restitution``), friction (``friction_velocity``)
    and gravity compensation are applied as ``mb.simulate`` applies them: in the compiled loop
    with a built-in controller (a run that reaches a hard stop takes that step in Python, as its
    ``simulate`` would), else by one ``mb.simulate`` per state.  Constraints (``constraints=``, the
    model's own) of the kinds solved in C (:mod:`multibody.dynamics.constraint_tables`) run in the
    compiled loop too; others run one ``mb.simulate`` per state.
    In the vectorised case (fixed step, no events/contact/params) a Python controller
    is called with the whole batch: ``controller(t, Q (N, nq), QD (N, nv)) -> (N, nv)`` (or one
    τ (nv,) for all), once per integrator stage with the runs still going, from the compiled loop
    (which does the rest; the runs advance together on one thread); a built-in ``mb.PD`` works
    unchanged.  A sampled controller (``period``) that is not a built-in one the compiled loop
    holds runs one ``simulate`` per state (it is called with one state).

    Returns
    -------
    BatchTrajectory
        ``t`` (n,) and ``q`` (N, n, nq), ``qd``, ``qdd``, ``tau`` (N, n, nv); ``batch[i]`` is run i's
        :class:`Trajectory`.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an argument of the wrong kind, named.
    ValueError
        Starts of different counts or shapes, NaN or inf, or any of :func:`simulate`'s refusals
        (named with the run it concerns).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> model = mb.models.double_pendulum()
    >>> Q0 = np.pi / 4 + 0.01 * np.arange(8)[:, None] * [1.0, -1.0]
    >>> batch = mb.simulate_batch(model, Q0, np.zeros((8, 2)), 0.5)
    >>> batch.q.shape
    (8, 501, 2)
    >>> one = mb.simulate(model, Q0[3], [0.0, 0.0], 0.5)
    >>> bool(np.array_equal(batch[3].q, one.q))
    True
    >>> calls = []
    >>> def pd(t, Q, QD):              # a controller of the batch: one call per stage, all 8 runs
    ...     calls.append(len(Q))
    ...     return 20.0 * (0.3 - Q) - 2.0 * QD
    >>> held = mb.simulate_batch(model, Q0, np.zeros((8, 2)), 0.5, controller=pd)
    >>> len(calls), set(calls)        # 500 RK4 steps × 4 stages, and the final sample's τ
    (2001, {8})
    """
    _check_model(model)
    if integrator is None:   # rk4, or semi_implicit under contact="hard" and on a floor (as simulate)
        integrator = default_integrator(kwargs.get("contact"), model, kwargs.get("ground", False))
    keyframe = kwargs.pop("keyframe", None)
    if Q0 is None or QD0 is None or keyframe is not None:   # the model's default state (or a keyframe's), N rows
        q_d, qd_d = default_start(model, None, None, keyframe, kwargs.get("ground", False))
        rows = next((len(np.atleast_2d(X)) for X in (Q0, QD0) if X is not None), 1)
        Q0 = np.tile(q_d, (rows, 1)) if Q0 is None else Q0
        QD0 = np.tile(qd_d, (rows, 1)) if QD0 is None else QD0
    if kwargs.get("ctrl") is None and keyframe is not None and getattr(model, "actuators", None) is not None:
        kwargs["ctrl"] = model.actuators.keyframe_ctrl(model.keyframes[keyframe])   # as simulate: its ctrl too
    if kwargs.get("ctrl") is None:
        kwargs.pop("ctrl", None)
    Q0 = _batch_states("Q0", Q0, model.nq)
    QD0 = _batch_states("QD0", QD0, model.nv)
    if Q0.shape[0] != QD0.shape[0]:
        raise ValueError(f"QD0: expected {Q0.shape[0]} rows like Q0, got {QD0.shape[0]}")
    N = Q0.shape[0]
    if N == 0:
        raise ValueError("Q0: expected at least one initial state")
    t_final = _positive("t_final", t_final, allow_zero=True)
    dt = _positive("dt", default_step(model) if dt is None else dt)   # (the file's own step, as simulate's)
    if params is not None:
        params = list(params)
        if len(params) != N or not all(isinstance(p, dict) for p in params):
            raise ValueError(f"params: expected {N} dicts of keyword arguments (one per run)")
    contact = scene_contact(model, kwargs.get("contact"), kwargs.get("ground", False))
    in_lcp = getattr(contact, "name", None) == "hard"   # hard contact: the model's constraints are rows of its LCP
    if in_lcp:
        contact.check_run(integrator)
    vectorised = (integrator in FIXED_STEP and not events and params is None
                  and (contact is None or in_lcp)
                  and not callable(f_ext) and not callable(kwargs.get("ctrl"))   # ctrl(t, q, q̇): a run's controller
                  and ((in_lcp and not kwargs.get("constraints") and getattr(model, "gamma_q", None) is None)
                       or (not in_lcp and _c_constraints(model, kwargs.get("constraints")) is not False))
                  and not _sampled_in_python(model, controller)
                  and (not _passive_beyond_damping(model, limit_mode(model, kwargs.get("limits")))
                       or _compiled_passive(model, controller, integrator, kwargs)))
    unknown = set(kwargs) - {"constraints", "contact", "ground", "rtol", "atol", "progress", "limits", "limit_restitution",
                             "friction_velocity", "ctrl"}
    if unknown:
        raise TypeError(f"simulate_batch: unexpected keyword argument(s) {sorted(unknown)}")
    check_record_size(model, StateSpace(model), t_final, dt,
                      _checks.integer("record_every", record_every, lo=1), integrator, runs=N,
                      extra=contact_record_width(contact, states=True))
    progress = bool(kwargs.pop("progress", False))
    if vectorised:
        record_every = _checks.integer("record_every", record_every, lo=1)
        if f_ext is not None:
            f_ext = np.array(f_ext, dtype=float)
            if f_ext.shape != (model.nb, 6) or not np.all(np.isfinite(f_ext)):
                raise ValueError(f"f_ext: expected finite spatial forces of shape ({model.nb}, 6)")
        run_kw = dict(dt=dt, integrator=integrator, controller=controller, f_ext=f_ext,
                      record_every=int(record_every), contact=contact, **{k: v for k, v in kwargs.items() if k in (
                          "limits", "limit_restitution", "friction_velocity", "constraints", "ctrl")})
        kind = "vectorised"
        # per run, simulate checks them; this System is the batch's one that warns (the chunks' are quiet)
        checked = _batch_system(model, run_kw, warn=True, events=False)[0]
        _check_gains(model, checked, run_kw, Q0)
        applied = (checked.passive(), None if contact is None else getattr(contact, "name", type(contact).__name__))
    else:
        run_kw = dict(dt=dt, integrator=integrator, controller=controller, f_ext=f_ext, events=events,
                      record_every=record_every, **kwargs)
        kind = "per_run"
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor: expected a concurrent.futures.Executor or a dask.distributed.Client, got "
                        f"{type(executor).__name__}")
    if executor is None and not progress:
        out = _run_chunk((kind, model, Q0, QD0, t_final, run_kw, params))
        if kind == "vectorised":
            return _labelled(_cut_blow_ups(model, out), *applied)
        return BatchTrajectory.from_runs(out)
    if chunks is None:
        chunks = 50 if executor is None else min(N, 4 * _worker_count(executor))
    chunks = _checks.integer("chunks", chunks, lo=1)
    bounds = np.linspace(0, N, min(int(chunks), N) + 1).astype(int)
    tasks = [(kind, model, Q0[a:b], QD0[a:b], t_final, run_kw, None if params is None else params[a:b])
             for a, b in zip(bounds[:-1], bounds[1:])]
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=N, unit="run", desc="simulate_batch")
    parts = []
    futures = [executor.submit(_run_chunk, task) for task in tasks] if executor is not None else tasks
    for task, f in zip(tasks, futures):
        parts.append(f.result() if executor is not None else _run_chunk(task))
        if bar is not None:
            bar.update(len(task[2]))
    if bar is not None:
        bar.close()
    if kind == "vectorised":
        return _labelled(_cut_blow_ups(model, _concat(parts)), *applied)
    return BatchTrajectory.from_runs([r for p in parts for r in p])


def _labelled(batch, passive, contact):
    """A compiled batch (whose runs do not go through ``simulate``) with ``passive`` and ``contact`` said, on the
    batch and on runs it holds as Trajectories."""
    batch.passive, batch.contact = tuple(passive), contact
    for run in batch.runs or ():
        run.passive, run.contact = batch.passive, contact
    return batch


def _cut_blow_ups(model, batch):
    """``simulate``'s cut at a blow-up (trajectory.cut_at_blow_up) on every run of a compiled batch (whose
    runs do not go through ``simulate``): a run list's runs cut, stacked samples NaN from the blow-up on (as
    after a non-finite state), the run "diverged" with the message; a run that ended at a non-finite state
    keeps its samples, its message noting where it passed the bound."""
    if batch.runs is not None:
        runs = [cut_at_blow_up(model, r) for r in batch.runs]
        return batch if all(a is b for a, b in zip(runs, batch.runs)) else BatchTrajectory.from_runs(runs)
    # a finished run has no NaN: its largest magnitude tells it within the bound (one pass over the batch);
    # blow_up reads the others
    largest = np.maximum(np.abs(batch.q).max(axis=(1, 2), initial=0.0), np.abs(batch.qd).max(axis=(1, 2), initial=0.0))
    for i, status in enumerate(batch.status):
        if status == "finished" and largest[i] <= STATE_LIMIT:
            continue
        found = blow_up(model, batch.t, batch.q[i], batch.qd[i])
        if found is None:
            continue
        k, message, note = found
        if status == "diverged":
            batch.messages[i] += note
            continue
        batch.status[i], batch.messages[i] = "diverged", message
        for X in (batch.q, batch.qd, batch.qdd, batch.tau):
            X[i, k:] = np.nan
    return batch


def _worker_count(executor) -> int:
    info = getattr(executor, "scheduler_info", None)
    if callable(info):   # dask.distributed.Client
        try:
            return max(1, sum(w.get("nthreads", 1) for w in info()["workers"].values()))
        except Exception:  # noqa: BLE001  (an unreachable scheduler: fall back to one chunk per state group)
            return 1
    return max(1, int(getattr(executor, "_max_workers", 1) or 1))
