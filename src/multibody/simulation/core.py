"""``mb.simulate``: forward dynamics integrated in time, with controllers, forces, events and resets.

The equations integrated are q̈ = FD(q, q̇, τ, f_ext) — spatial_v2's ``FDab`` (``mb.aba``), or the
``constraints`` object's constrained accelerations (TMT eq. 6 / spatial_v2 ``FDgq``) — with
τ = controller(t, q, q̇) − damping ⊙ q̇ and f_ext = the user's forces plus the ``contact`` object's.

Fixed-step runs (``euler``, ``semi_implicit``, ``rk4``, ``rk3``: ``rollout.FIXED_STEP``) step on the grid t_k = k·dt (the last step
ends exactly at t_final).  Adaptive runs (``rk45``, ``dop853``, ``radau``, ``lsoda``, ``rk23``,
``bdf``) use the solvers behind SciPy's ``solve_ivp`` step by step, with this module's event
location on their dense output; samples are taken on the same grid k·dt·record_every.

One :class:`~multibody.simulation.system.System` validates a run's arguments once and evaluates
its right-hand side.  Fixed-step runs it can compile (``System.plan``: built-in controllers, constant
forces, compliant ground contact (``GroundContact``), the model's damping, friction, gravcomp, fixed
tendons and soft limits, constraint sets of fixed geometry (``csrc/sim/constraints.c``); a Python
controller or force function, other constraints' accelerations and another contact object's forces
are called back from the loop) run whole in ``csrc/sim/rollout.c``, for
one state or N (``simulate_batch``); with a progress bar, in pieces.  With hard limits or user events
they run there too, except the steps that reach a stop or fire an event: rollout.c hands such a step
back to ``_run_fixed``, whose event machinery locates and fires it, taking it as one compiled step at a
time, and the compiled loop resumes (joints resting on their stops held in C by the KKT solve).
Every step of a fixed-step run is rollout.c's; the Python steppers it follows operation for
operation are the tests' reference (``tests/reference_steppers.py``).  Runs with sensitivities go
through the same loop with the state-transition matrix riding as extra states
(``sensitivity.SensitivityFlow``).
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import NamedTuple

import numpy as np

from .. import _checks
from ..core import ResultOverflowError
from ..dynamics import aba
from ..errors import SimulationError, SimulationWarning
from . import rollout
from .constraints import with_model_constraints as _with_model_constraints
from .adaptive import adaptive_loop
from .events import EventMonitor, FiresForever, check_events
from .controllers import PD
from .contact import GroundContact
from .limits import FRICTION_VELOCITY, JointLimits, check_pd_step, step_friction_velocity
from .rollout import ADAPTIVE, FIXED_STEP, FLAGS, IMPLICIT_DAMPING, StateSpace, next_step_end
from .system import (System, _NonFinite, _check_model, _positive, check_actuator_step, check_initial_state,
                     check_spring_step,
                     default_integrator, default_step, non_finite_message, scene_contact)
from .trajectory import EventRecord, Trajectory, cut_at_blow_up, cut_at_energy_gain, model_fingerprint
from .._extras import require


# ---- recording --------------------------------------------------------------------------------
class Recorder:
    """Samples (t, y) and, where the stepper already computed them, (q̈, τ, contact info)."""

    def __init__(self):
        self.t, self.y, self.derived, self.held = [], [], [], []

    def add(self, t, y, derived=None, held=None):
        """Keep a sample; ``y`` must not be modified afterwards (steppers return new arrays)."""
        self.t.append(t)
        self.y.append(y)
        self.derived.append(derived)
        self.held.append(held)

    def extend(self, T, Y, derived):
        """Keep the samples T (n,), rows of Y (n, …) and their ``derived`` (n entries) at once, as n calls
        of :meth:`add` would (a compiled stretch's records: one list operation each, not n calls)."""
        self.t.extend(T.tolist())
        self.y.extend(Y)
        self.derived.extend(derived)
        self.held.extend([None] * len(T))

    def fill_last(self, t, derived):
        if self.derived and self.t[-1] == t and self.derived[-1] is None:
            self.derived[-1] = derived


def constraint_residuals(model, system, T, Q, V):
    """(c, ċ) of the run's constraints at each sample (n, 2, rows), or None without constraints."""
    if system.constraints is None or not len(T):
        return None
    out = None
    for k, (t, q, v) in enumerate(zip(T, Q, V)):
        c, cd = (system.constraints.residual(model, q, v, t=t) if system.constraints_take_time
                 else system.constraints.residual(model, q, v))
        if out is None:   # filled in place: np.stack per sample cost more than a residual in C
            out = np.empty((len(T), 2, np.size(c)))
        out[k, 0], out[k, 1] = np.ravel(c), np.ravel(cd)
    return out


def contact_force_record(infos):
    """The samples' contact forces from their contact infos' "force" entries (NaN where a sample has
    none), or None when no sample has one."""
    if not any(inf is not None and "force" in inf for inf in infos):
        return None
    shape = next(np.shape(inf["force"]) for inf in infos if inf is not None and "force" in inf)
    return np.array([np.asarray(inf["force"], float) if inf is not None and "force" in inf
                     else np.full(shape, np.nan) for inf in infos])


def build_trajectory(model, space, system, rec, events_fired, status, message, integrator):
    n = len(rec.t)
    nq, nv = model.nq, model.nv
    Y = np.array(rec.y).reshape(n, space.n)
    T = np.array(rec.t, dtype=float)
    Q, V, Z = Y[:, :nq], Y[:, nq:nq + nv], Y[:, nq + nv:]
    qdd = np.empty((n, nv))
    tau = np.empty((n, nv))
    infos = [None] * n
    missing = [i for i in range(n) if rec.derived[i] is None]
    if missing and system.plain:  # one batched kernel call for all of them
        try:
            qdd[missing] = aba(model, Q[missing], V[missing], np.zeros((len(missing), nv)))
            tau[missing] = 0.0
            missing = []
        except ResultOverflowError:  # a state on the way to blowing up: one at a time below
            pass
    for i in missing:
        try:
            a, tu, _zd, info = system.accelerations(T[i], Q[i], V[i], Z[i], tau=rec.held[i])
        except _NonFinite:
            a, tu, info = np.full(nv, np.nan), np.full(nv, np.nan), None
        rec.derived[i] = (a, tu, info)
    rows = [i for i in range(n) if rec.derived[i] is not None]
    A = np.array([rec.derived[i][0] for i in rows], dtype=float) if rows else None
    B = np.array([rec.derived[i][1] for i in rows], dtype=float) if rows else None
    if rows and A.shape == B.shape == (len(rows), nv):   # every sample's (q̈, τ) at once
        qdd[rows], tau[rows] = A, B
        for i in rows:
            infos[i] = rec.derived[i][2]
    else:
        for i in rows:
            qdd[i], tau[i], infos[i] = rec.derived[i][0], rec.derived[i][1], rec.derived[i][2]
    residual = constraint_residuals(model, system, T, Q, V)
    forces = contact_force_record(infos) if system.contact is not None else None
    return Trajectory(t=T, q=Q.copy(), qd=V.copy(), qdd=qdd, tau=tau, model=model,  # energies: lazy
                      events=events_fired, constraint_residual=residual, contact_forces=forces,
                      contact_state=Z.copy() if system.nz else None, status=status, message=message,
                      integrator=integrator, model_fingerprint=model_fingerprint(model), model_name=model.name,
                      quaternion_starts=space.quaternion_starts)


# ---- the public function ----------------------------------------------------------------------
def simulate(model, q0, qd0, t_final, dt=None, integrator=None, controller=None, f_ext=None, events=(),
             constraints=None, contact=None, record_every=1, rtol=1e-9, atol=1e-12,
             progress=False, limits=None, limit_restitution=0.0, friction_velocity=FRICTION_VELOCITY,
             on_divergence="warn", sensitivities=False, keyframe=None, ground=False, ctrl=None,
             effort_limits: bool = False) -> Trajectory:
    """Integrate the model's motion from (q0, qd0) over [0, t_final] and return a :class:`Trajectory`.

    Parameters
    ----------
    model : Model
        The mechanism (its limits, damping, friction, actuators, constraints and geoms come along).
    q0, qd0 : the start (nq,), (nv,); None: the model's default state (``model.default_state()``:
        the file's ``qpos0`` — MuJoCo's — else the neutral configuration, at rest), or the
        keyframe's when ``keyframe`` is given.
    keyframe : None, or a keyframe's name or index (``model.keyframes``): its q and q̇ where
        ``q0``/``qd0`` are None, and its ``ctrl`` where ``ctrl`` is None.
    ctrl : None, one constant control per actuator of ``model.actuators`` (MJCF motor, position,
        velocity, general on joints: :mod:`multibody.model.actuators`), held through the run (in C),
        or a function ``(t, q, qd) -> ctrl`` (called back as the run's controller; then no
        ``controller``); None: the keyframe's, else zeros (MuJoCo's default).
    effort_limits : bool
        True: the controller's torque is clipped to ±``model.effort_limit`` (a URDF's
        ``<limit effort=...>``) before the passive forces are added (``csrc/sim/passive.c``); a
        model with no finite limit is refused.  Default False (the controller's τ as it is).
    t_final : float
        The end time, s (≥ 0).
    dt : float, optional
        Step size of fixed-step integrators; sample interval (× ``record_every``) of adaptive ones.
        Default: the file's own step (``model.timestep``: an MJCF's ``<option timestep>``, MuJoCo's
        0.002 s where it sets none), else 1e-3 s.
    rtol, atol : float
        The adaptive integrators' relative and absolute tolerances.
    integrator : str, optional
        ``"rk4"`` by default; ``"semi_implicit"`` under ``contact="hard"``, and on the floor that ``ground``
        adds (the compliant law implicit in its step); a file's own ``model.integrator`` — an MJCF's
        ``<option integrator>``, MuJoCo's default Euler as ``"semi_implicit"`` — where the file names one.
        Fixed step (``rollout.FIXED_STEP``, rollout.c's table): ``"rk4"``, ``"euler"``, ``"semi_implicit"``
        (symplectic Euler with the joint damping implicit, as MuJoCo's Euler: stable for any damping),
        ``"rk3"`` (Crouch–Grossman, order 3); adaptive (SciPy's solvers, tolerances ``rtol``/``atol``,
        defaults 1e-9/1e-12): ``"rk45"``, ``"dop853"``, ``"radau"``, ``"lsoda"``, ``"rk23"``, ``"bdf"``.  A
        fixed step refuses damping it cannot follow and smooths a light joint's friction no stiffer than it
        can follow (:mod:`multibody.simulation.limits`).
    controller : None, a built-in controller (``mb.PD``, continuous or sampled; it runs in C) or a
        Python callable ``(t, q, qd) -> tau`` (called back from the compiled loop at every stage, so
        its own cost is what it adds).
    f_ext : None, spatial forces (nb, 6) in base coordinates (as ``mb.aba``), or a callable
        ``(t, q, qd) -> (nb, 6)``.
    events : ``mb.Event`` or a sequence of them (guards located in time, resets applied; in fixed-step
        runs the compiled loop checks the guards after each step and hands a firing step to Python).
    constraints, contact : objects of the constraint / contact protocols (``multibody.simulation``
        docs); the run uses ``constraints.accelerations`` instead of ``mb.aba`` when given.  The
        model's own constraints (``model.constraints``, e.g. from an MJCF ``<equality>``) are
        solved together with them.  By default a model whose geoms include a floor (an MJCF
        plane) stands on it: the file's contacts under the compliant law (``SceneContact``;
        ``contact="compliant"`` asks for it, with a floor from ``ground``); ``contact="hard"``: hard
        contact with Coulomb friction and restitution (:class:`~multibody.simulation.contact.HardContact`,
        impulses from an LCP each step; ``semi_implicit`` only); ``contact="off"`` turns them off;
        ``traj.contact`` names the contact model (``traj.passive`` says where the default compliant
        contact was softened for an explicit step, ``SceneContact``'s ``step``).
    record_every : keep every k-th grid sample (the final state and event states are always kept).
    progress : show a progress bar (tqdm).
    limits : the model's position limits: ``"hard"`` (rigid stops, impacts with restitution
        ``limit_restitution``, default 0), ``"soft"`` (MuJoCo's soft limit: the file's solreflimit,
        solimplimit) or ``"off"``; None (default): the model's own — ``"soft"`` for an MJCF file's (MuJoCo's
        soft constraints), ``"hard"`` elsewhere.  The model's damping, Coulomb friction (smoothed:
        f·tanh(q̇ / ``friction_velocity``))
        and gravity compensation are always applied; see :mod:`multibody.simulation.limits`.
        ``traj.passive`` lists what was applied.
    limit_restitution : float
        Coefficient of restitution of the hard stops (0: they stop the joint).
    friction_velocity : float
        The speed, rad/s or m/s, over which Coulomb friction is smoothed (tanh).
    on_divergence : ``"warn"`` (default) or ``"raise"`` (a :class:`SimulationError` carrying the
        trajectory up to the last finite state, or the last within 1e10; see below).
    ground : bool or float
        add a floor z = 0 (or z = ``ground``) under the model's geoms, for files without one (URDF);
        a start from the default state (``q0`` None, no keyframe) is lifted onto it
        (:func:`~multibody.kinematics.contacts.lift_onto_ground`).  A model with no collision
        geometry for the floor to meet is refused (ValueError), not dropped through it.
    sensitivities : also return ``traj.stm`` = ∂x(t)/∂x(0) and ``traj.dx_dtau`` = ∂x(t)/∂τ (held τ)
        at every sample, by variational equations and saltation matrices at events
        (:mod:`multibody.simulation.sensitivity`; fixed steps in the compiled loop, its Python
        callback evaluating Z's rates at every stage).

    Returns
    -------
    Trajectory
        ``t`` (n,), ``q`` (n, nq), ``qd`` and ``qdd`` (n, nv), ``tau`` (n, nv) and what the run
        recorded (contact forces, sensor data, constraint residuals, sensitivities), with
        ``status`` ("finished", or "diverged" with the time in ``message``).

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an argument of the wrong kind (a controller that is not
        callable, …), each named.
    ValueError
        A wrong shape, NaN or inf, a negative ``t_final``, a step that is not positive, an
        unknown integrator, contact model or limits mode, a stiff
        PD or contact the fixed step cannot follow (naming the gain and the step that works), or
        a run whose record would not fit in memory.
    SimulationError
        With ``on_divergence="raise"``, a run that diverged (carrying the trajectory up to where it
        did).

    A run whose state becomes non-finite stops, warns once (:class:`SimulationWarning`) and returns
    the samples up to the last finite state with ``status == "diverged"`` and the time in ``message``.
    A run that blows up without overflowing — a recorded ``|q|`` or ``|q̇|`` past 1e10, MuJoCo's bound
    (past its start, for a coordinate that starts beyond it) — is diverged the same way from the first
    such sample, its message naming the coordinate.  So is a run under the compliant contact law in which
    nothing supplies energy (no controller, forces, actuators, gravcomp, springs, tendons, constraints
    or resets) whose energy rises past what its contacts' springs could give back — a body the contact
    flung off the floor, its state far from 1e10 (:func:`~multibody.simulation.trajectory.cut_at_energy_gain`).
    A run whose record would not fit in the available memory is refused before it starts.

    Example — the OpenDE report's double pendulum (section 5.6), 1 s with RK4 at 1 ms:

    >>> import numpy as np, multibody as mb
    >>> traj = mb.simulate(mb.models.double_pendulum(), [np.pi / 4, -np.pi / 4], [0, 0], 1.0)
    >>> len(traj), bool(traj.energy_drift < 1e-9)
    (1001, True)
    """
    _check_model(model)
    q0, qd0 = default_start(model, q0, qd0, keyframe, ground)
    if integrator is None:   # hard contact is a time stepper of its own: semi_implicit's step; else the file's
        integrator = default_integrator(contact, model, ground)
    _checks.one_of("integrator", integrator, list(FIXED_STEP) + list(ADAPTIVE))
    t_final = _positive("t_final", t_final, allow_zero=True)
    dt = _positive("dt", default_step(model) if dt is None else dt)
    record_every = _checks.integer("record_every", record_every, lo=1)
    rtol, atol = _positive("rtol", rtol), _positive("atol", atol)
    events = check_events(events)
    _checks.one_of("on_divergence", on_divergence, ("warn", "raise"))
    constraints = model_constraints(model, constraints)
    stops = JointLimits(model, limits, limit_restitution, dt)
    if ctrl is None and keyframe is not None and getattr(model, "actuators", None) is not None:
        ctrl = model.actuators.keyframe_ctrl(model.keyframes[keyframe])
    # the file's floor and geoms by default (system.py), the default law soft enough for an explicit step
    explicit = integrator in FIXED_STEP and (sensitivities or not FLAGS[integrator] & IMPLICIT_DAMPING)
    contact = scene_contact(model, contact, ground, step=(dt, integrator) if explicit else None)
    if hasattr(contact, "check_run"):   # hard contact: semi_implicit, no sensitivities, no events
        contact.check_run(integrator, sensitivities, events)
    system = System(model, controller, f_ext, constraints, contact, stops, friction_velocity, ctrl=ctrl,
                    effort_limits=effort_limits)
    if integrator in FIXED_STEP:   # the smoothed friction as sticky as the step can hold (limits.py)
        system.friction_velocity = step_friction_velocity(model, system.damping, system.friction,
                                                          system.friction_velocity, dt, integrator)
    if integrator in FIXED_STEP and hasattr(contact, "check_step"):   # the contact mode the step can follow
        if hasattr(contact, "implicit_step"):   # SceneContact: implicit under semi_implicit, not in a sensitivity run
            contact.check_step(model, dt, integrator, implicit=not sensitivities)
        elif not isinstance(contact, GroundContact):   # (its points' masses at the checked start: below)
            contact.check_step(model, dt, integrator)
    if integrator in FIXED_STEP and FLAGS[integrator] & IMPLICIT_DAMPING:   # semi_implicit (System.implicit_damping)
        system.implicit_damping(dt)
    space = StateSpace(model, system.nz)
    q, qd = check_initial_state(model, space, q0, qd0)
    if integrator in FIXED_STEP and isinstance(contact, GroundContact):
        contact.check_step(model, dt, integrator, q)
    if system.hard_stops:   # a start beyond a stop starts on it, warned (limits.JointLimits.enter)
        q = stops.enter(q)
    if integrator in FIXED_STEP:                                      # stiff joint springs refused up front,
        check_spring_step(model, system.damping, q, dt, integrator)
    if integrator in FIXED_STEP and isinstance(controller, PD) and controller.period is None:
        check_pd_step(model, controller, system.damping, q, dt, integrator)   # a PD too stiff beside them
    if integrator in FIXED_STEP and system.actuators is not None:    # and actuators (position servos)
        check_actuator_step(model, system.actuators, system.damping, q, dt, integrator)
    n_tangent = 2 * model.nv + system.nz   # Z = [Φ | ∂x/∂τ] rides with every sample
    tangents = n_tangent * (n_tangent + model.nv) if sensitivities else 0
    check_record_size(model, space, t_final, dt, record_every, integrator,
                      extra=tangents + contact_record_width(contact))
    z = np.zeros(0)
    if contact is not None:
        z = np.asarray(contact.initial_state(model, q, qd), dtype=float).reshape(-1)
        if z.shape != (system.nz,) or not np.all(np.isfinite(z)):
            raise ValueError(f"contact: initial_state returned {z!r}; expected {system.nz} finite numbers")
    system.last_z = z
    user_resets = any(getattr(ev, "reset", None) is not None for ev in events)   # (they may add energy)
    if system.hard_stops:   # a user's reset leaves the stops' resting set to be solved again
        events = tuple(_with_stops(ev, stops, model) for ev in events)
    # the user's events: C hands back the steps where one fires
    plan = system.plan(integrator, events, callables=True)
    try:
        if system.hard_stops:
            events = events + tuple(stops.events(system))
            if integrator in FIXED_STEP:
                release_by_step(model, plan, system, space, integrator, dt)
            q, qd = stops.start(0.0, q, qd)
        y0 = np.concatenate((q, qd, z))
        if sensitivities and integrator in FIXED_STEP:   # Z along in the compiled loop's extra states
            from .sensitivity import SensitivityFlow
            flow = SensitivityFlow(space, system, integrator, dt,
                                   state_step=_compiled_step(model, plan, system, _FixedFlow(space, system, integrator),
                                                             integrator))
            traj = _run_fixed(model, space, system, events, flow.start(y0), t_final, dt, integrator, int(record_every),
                              rtol, atol, progress, flow.plan(plan), flow=flow)
        elif sensitivities:
            from .sensitivity import run_with_sensitivities
            traj = run_with_sensitivities(model, space, system, events, y0, t_final, dt, integrator, int(record_every),
                                          rtol, atol)
        elif plan is not None and not system.hard_stops and not events and not progress:   # the whole run in C
            traj = _run_compiled(model, space, system, y0, t_final, dt, integrator, int(record_every), plan)
        elif integrator in FIXED_STEP:   # in C between the steps that reach a hard stop
            traj = _run_fixed(model, space, system, events, y0, t_final, dt, integrator, int(record_every), rtol,
                              atol, progress, plan)
        else:
            traj = _run_adaptive(model, space, system, events, y0, t_final, dt, integrator, int(record_every), rtol,
                                 atol, progress)
    except FiresForever as e:   # a joint without inertia: no step follows it, and what it drives is rounding
        from ..dynamics.mobility import massless_cause
        cause = massless_cause(model)
        if not cause:
            raise
        raise FiresForever(f"{e}; {cause}") from e
    finally:   # the stops' events, lent to this run, go back to the model (limits.JointLimits.release)
        stops.release()
    traj = cut_at_blow_up(model, traj)
    if getattr(contact, "name", None) == "compliant" and not system.supplies_energy() and not user_resets:
        traj = cut_at_energy_gain(model, traj, contact.stored_energy(model, q))   # a bounded blow-up
    traj.passive = system.passive()
    traj.contact = None if contact is None else getattr(contact, "name", type(contact).__name__)
    traj.ctrl, traj.contact_geoms = system.ctrl, getattr(contact, "geoms", None)   # what traj.sensordata reads
    if sensitivities and system.soft:
        check_soft_stop_sensitivities(stops, traj)
    if traj.status == "diverged":
        if on_divergence == "raise":
            raise SimulationError(f"simulate: {traj.message}", traj)
        warnings.warn(f"simulate: {traj.message}", SimulationWarning, stacklevel=2)
    return traj


def _with_stops(event, stops, model):
    """The user's event with its reset followed by the hard stops' :meth:`~limits.JointLimits.after_reset`."""
    if event.reset is None:
        return event

    def reset(t, q, qd):
        q1, qd1 = event.apply_reset(t, q, qd, model.nq, model.nv)
        return stops.after_reset(t, np.array(q1, dtype=float), np.array(qd1, dtype=float))
    return dataclasses.replace(event, reset=reset)


def default_start(model, q0, qd0, keyframe=None, ground=False):
    """``(q0, qd0)`` with None filled from the model's default state or a keyframe
    (:meth:`~multibody.model.model.Model.default_state`).  Under a floor added with ``ground`` the
    default state (not a keyframe: the file's own) is lifted onto it
    (:func:`~multibody.kinematics.contacts.lift_onto_ground`): a URDF's neutral configuration has
    the base at the origin, half the robot inside that floor."""
    if q0 is None or qd0 is None or keyframe is not None:
        q_d, qd_d = model.default_state(keyframe)
        if q0 is None and keyframe is None and ground is not False and ground is not None:
            from ..kinematics.contacts import lift_onto_ground
            q_d = lift_onto_ground(model, q_d, ground)
        q0 = q_d if q0 is None else q0
        qd0 = qd_d if qd0 is None else qd0
    return q0, qd0


def check_soft_stop_sensitivities(stops, traj):
    """Refuse sensitivities across a soft stop's switch: the soft law's force jumps where a joint
    enters or leaves its stop, and the variational equations carry no saltation matrix there, so
    ``traj.stm`` came out wrong (one entry −67.5 against −9.5 from central differences). Runs that
    stay on one side of every stop are right and pass; hard stops carry their saltation matrices."""
    for (name, qi, _vi, pos, sign), row in zip(stops.stops, stops.soft_rows()):
        beyond = sign * (np.asarray(traj.q)[:, qi] - pos) < row[11]   # (passed by its margin: the law's switch)
        if beyond.size and np.any(beyond != beyond[0]):
            k = int(np.argmax(beyond != beyond[0]))
            what = "entered" if beyond[k] else "left"
            raise ValueError(f"sensitivities: joint {name!r} {what} its soft stop at {pos!r} near t = "
                             f"{float(traj.t[k]):.6g} s; the variational equations do not cross the soft law's "
                             "switch (no saltation matrix): use limits='hard' (its impacts carry them), "
                             "limits='off', or a run that stays on one side of the stop")


def _run_compiled(model, space, system, y0, t_final, dt, integrator, record_every, plan):
    """A fixed-step run in ``csrc/sim/rollout.c`` (N = 1); the same Trajectory as ``_run_fixed``."""
    nq, nv = model.nq, model.nv
    out = rollout.run_compiled(model, plan, y0[None, :nq], y0[None, nq:nq + nv], t_final, dt, integrator,
                               record_every, keep_last=True, Z0=y0[None, nq + nv:])
    return _compiled_trajectory(model, space, system, out, integrator)


def _compiled_trajectory(model, space, system, out, integrator):
    T, Q, QD, QDD, TAU, _y, info, Z, F = out[:9]
    n = int(info[0, 0])
    status, message = "finished", ""
    if info[0, 1] < 0:
        status, message = "diverged", non_finite_message(float(info[0, 2]), float(info[0, 3]))

    def rows(A):   # the run's n samples: a view of the output where they fill most of it (no second copy of a
        return A[0, :n] if 4 * n >= 3 * A.shape[1] else A[0, :n].copy()   # large contact record), else a copy
    forces = None if F is None else rows(F)
    if F is None and Z is not None:   # another contact law: its forces at the samples, from its info
        forces = contact_force_record([system.contact_info(Q[0, k], QD[0, k], Z[0, k]) for k in range(n)])
    return Trajectory(t=rows(T), q=rows(Q), qd=rows(QD), qdd=rows(QDD),
                      tau=rows(TAU), model=model, events=[], status=status, message=message,
                      constraint_residual=constraint_residuals(model, system, T[0, :n], Q[0, :n], QD[0, :n]),
                      contact_state=None if Z is None or not Z.shape[2] else rows(Z),
                      contact_forces=forces,
                      integrator=integrator, model_fingerprint=model_fingerprint(model), model_name=model.name,
                      quaternion_starts=space.quaternion_starts)


def model_constraints(model, constraints):
    """The constraints a run solves: the user's with the model's own — its equalities
    (``model.constraints``) or its explicit gearing ``model.gamma_q`` (spatial_v2 FDgq). A model
    that carries a constraint is never run without it: ``double_elbow``'s gears drifted 7.86 rad in
    2 s when ``gamma_q`` was left to ``constraints=GammaQ()``.

    >>> import multibody as mb
    >>> type(model_constraints(mb.models.double_elbow(), None)).__name__
    'GammaQ'
    """
    from .constraints import GammaQ

    if getattr(model, "gamma_q", None) is None:
        if constraints is None and getattr(model, "constraints", ()):   # the model's own set: one per Model
            own = model.__dict__.get("_own_constraint_set")          # (its C tables are built once, on it)
            if own is None:
                own = model.__dict__["_own_constraint_set"] = _with_model_constraints(model, None)
            return own
        return _with_model_constraints(model, constraints)
    if constraints is None or isinstance(constraints, GammaQ):
        return GammaQ() if constraints is None else constraints
    raise ValueError("constraints: the model carries gamma_q (explicit constraints q = γ(y), spatial_v2 FDgq), "
                     "which the run must solve; pass constraints=GammaQ() (with your constraints inside its "
                     "gamma_q), or a model without gamma_q")


def record_samples(t_final, dt, record_every):
    """At most how many samples a run keeps: the grid k·dt·record_every, the final state, a spare."""
    return math.floor(t_final / (dt * record_every) + 1e-9) + 2


MAX_STEPS = 2**53     # steps (and a sample stride) a double counts exactly, and C's long holds


def check_step_count(t_final, dt, record_every):
    """Refuse a step count no run can hold: ``t_final / dt`` past 2**53 (``t_final=1e308`` or
    ``dt=1e-320`` overflowed to an OverflowError about 'float infinity') or a ``record_every`` past it
    (2**70 reached C as 'Python int too large to convert to C long').

    >>> check_step_count(1e308, 1e-3, 1)
    Traceback (most recent call last):
    ...
    ValueError: dt: 1e+308 s in steps of 0.001 s is more than 2**53 steps; use a larger dt or a shorter t_final
    """
    if not t_final / dt < MAX_STEPS:
        raise ValueError(f"dt: {t_final:g} s in steps of {dt:g} s is more than 2**53 steps; use a larger dt or a "
                         "shorter t_final")
    if record_every > MAX_STEPS:
        raise ValueError(f"record_every: expected an integer ≤ 2**53, got {record_every}")


def contact_record_width(contact, states=False):
    """Numbers a sample records for a scene's contact slots beyond the state: each slot's force (3), and with
    ``states`` its compliant law's deformation (``n_states``, where the state space does not count it).  A scene
    of many geoms has many slots (dm_control's fruit fly: 5 564, 0.13 MB of forces a sample)."""
    return 3 * getattr(contact, "n_slots", 0) + (getattr(contact, "n_states", 0) if states else 0)


def check_record_size(model, space, t_final, dt, record_every, integrator, runs=1, extra=0):
    """Refuse a run whose record would not fit in the available memory (before allocating it).

    A sample holds t, the state, q̈, τ, the two energies and ``extra`` numbers more (a run with
    sensitivities: Z = [Φ | ∂x/∂τ]; a scene's contact forces: :func:`contact_record_width`), 8 bytes
    each; the Python loops keep lists while they run, about twice the final arrays (three times for
    adaptive runs)."""
    check_step_count(t_final, dt, record_every)
    samples = record_samples(t_final, dt, record_every)
    per_sample = 8 * (1 + space.n + 3 * model.nv + 2 + extra)
    need = samples * per_sample * runs * (2 if integrator in FIXED_STEP else 3)  # Python lists: ~2-3× the arrays
    if need <= 2**26:   # 64 MiB any machine running Python has: short runs skip reading /proc/meminfo
        return
    avail = _available_memory()
    if avail is not None and need > avail:
        raise MemoryError(f"t_final: the run would record {samples * runs:,} samples (about {need / 2**30:.1f} GiB) "
                          f"but only {avail / 2**30:.1f} GiB of memory is available; pass record_every = "
                          f"{math.ceil(need / (0.5 * avail))} or more, or simulate a shorter span (in pieces, "
                          f"saving each with traj.save)")


def _available_memory():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import os
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


class _Progress:
    def __init__(self, enabled, t_final):
        self.bar = None
        if enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=t_final, unit="s", unit_scale=True, desc="simulate")
        self.shown = 0.0

    def update(self, t):
        if self.bar is not None and t - self.shown >= 0.005 * self.bar.total:
            self.bar.update(t - self.shown)
            self.shown = t

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _fire(monitor, i, te, ye, space, system, rec, fired):
    """Record the state before, apply event i's reset, record the state after; returns the new y."""
    ev = monitor.events[i]
    q, v, z = space.split(ye)
    rec.add(te, ye, held=system.held_tau)
    q1, v1 = ev.apply_reset(te, q, v, space.nq, space.nv)
    y1 = space.normalise(np.concatenate((q1, v1, z)))
    fired.append(EventRecord(te, ev.name, q.copy(), v.copy(), y1[:space.nq].copy(),
                             y1[space.nq:space.nq + space.nv].copy()))
    rec.add(te, y1, held=system.held_tau)
    qa, va, _ = space.split(y1)
    monitor.fired(i, te, monitor.g[i], ev.reset is not None, state=(qa, va))
    monitor.g = monitor.values(te, qa, va)
    return y1


class _FixedFlow:
    """What :func:`_run_fixed` steps: the state alone (the sensitivity run's flow, the state with
    Z = [Φ | ∂x/∂τ] after it, is ``sensitivity.SensitivityFlow``, with the same hooks).

    - ``space``, ``deriv``: the stepped state's layout and right-hand side (for the guards and the
      resets); ``state_space``: the layout of the state [q, v, z] itself;
    - ``may_stretch()``: whether the compiled loop may run on from here (else one step at a time);
    - ``sample(t, y)``: a sampled controller takes its sample;
    - ``stepped(t, y, t1, y1)``: y1 of a step that fired no event, as the run goes on with it;
    - ``fire(monitor, i, te, ye, rec, fired, t, y)``: record before/after, apply event i's reset
      (the step from (t, y) crossed it at te, ending at ye); returns the state after it;
    - ``contact_info(q, v, z)``: a recorded sample's contact info;
    - ``finish(rec)``, ``annotate(traj)``: the record as the state's, and what the trajectory gains."""

    plain = True

    def __init__(self, space, system, integrator):
        self.space = self.state_space = space
        self.system, self.deriv, self.integrator = system, system.deriv, integrator

    def may_stretch(self):
        return True

    def sample(self, t, y):
        self.system.sample(t, *self.space.split(y)[:2])

    def stepped(self, t, y, t1, y1):
        return y1

    def fire(self, monitor, i, te, ye, rec, fired, t, y):
        return _fire(monitor, i, te, ye, self.space, self.system, rec, fired)

    def contact_info(self, q, v, z):
        return self.system.contact_info(q, v, z)

    def finish(self, rec):
        pass

    def annotate(self, traj):
        return traj


def _compiled_stretch(model, plan, system, flow, rec, t, y, n_sample, t_final, dt, integrator, record_every,
                      whole_run=True, piece_end=False, out=None):
    """Run on in ``csrc/sim/rollout.c`` from (t, y) until t_final or a step that crosses a hard stop; a
    sampled controller's hold (``system.held_tau``, next sample ``n_sample``) goes on in C and comes
    back.  Returns (t, y, n_sample, info, out) where it stopped, ``info`` (count, code, t_from, t_to)
    (code ``rollout.HANDED_BACK``: the step from t is the Python loop's; ``rollout.NON_FINITE``: that
    step turned the state non-finite, y is the last finite one), ``out`` run_compiled's arrays; the samples join
    ``rec`` unless the stretch is the whole run (``whole_run``: t_final is the run's end, ``rec``
    holds only its start, and the stretch was not handed back; ``piece_end``: t_final is a progress
    bar's piece's end, not the run's).  ``out``: the stretch already run (this run's row of a batch's
    call, :func:`_resume_together`), else it runs here."""
    nq, nv = model.nq, model.nv
    if out is None:
        out = rollout.run_compiled(model, plan, y[None, :nq], y[None, nq:nq + nv], t_final, dt, integrator,
                                   record_every, keep_last=False, t0=t, Z0=y[None, nq + nv:], held=system.held_tau,
                                   n_sample=n_sample)
    T, Q, QD, QDD, TAU, Y_END, info, Z, F, held, next_sample, _stop_force = out
    if held is not None:
        system.held_tau, n_sample = held[0].copy(), int(next_sample[0])
    stopped = info[0, 1] < 0   # handed back, or non-finite
    t_end = float(info[0, 2]) if stopped else t_final
    if whole_run and len(rec.t) == 1 and not stopped:
        return t_end, Y_END[0].copy(), n_sample, info[0].copy(), out
    n = int(info[0, 0])
    def contact_info(k):   # the ground's forces are all build_trajectory reads of its contact info
        if F is not None:
            return {"force": F[0, k].copy()}
        return None if Z is None else flow.contact_info(Q[0, k], QD[0, k], Z[0, k])
    if rec.t[-1] == t and rec.derived[-1] is None and np.isfinite(QDD[0, 0, 0]):
        rec.derived[-1] = (QDD[0, 0].copy(), TAU[0, 0].copy(), contact_info(0))   # the sample it started from
    Y = np.concatenate((Q[0, 1:n], QD[0, 1:n]) + (() if Z is None else (Z[0, 1:n],)), axis=1)
    finite = np.isfinite(QDD[0, :n, 0]).tolist()
    # (rows of compact copies: a batch's call holds every run's records, which then go at once)
    rec.extend(T[0, 1:n], Y, [(a, b, contact_info(k)) if f else None
                              for k, a, b, f in zip(range(1, n), QDD[0, 1:n].copy(), TAU[0, 1:n].copy(), finite[1:])])
    if piece_end and not stopped and n > 1:
        rec.derived[-1] = None   # a piece's end: q̈, τ come from the next piece's first step (after a sample there)
    return t_end, Y_END[0].copy(), n_sample, info[0].copy(), None


def _resting_plan(plan, system):
    """The plan with the joints resting on hard stops held (TMT eq. 6): in C by the KKT solve
    (``Stops.resting``: ``csrc/sim/rollout.c``'s resting_dynamics over ``csrc/sim/kkt.c``), or, with
    constraints (whose rows Python evaluates), by the dynamics callback solving both together
    (``System.resting_accelerations``); the plan itself when no joint rests."""
    limits = system.limits
    if limits is None or not limits.resting:
        return plan
    # The same resting set gives the same plan: kept per (plan, set), since every compiled step around an
    # event (a crossing's location takes dozens) asked for it anew (two dataclasses.replace and the table).
    key = tuple(limits.resting.items())
    memo = system.__dict__.get("_resting_plan_memo")
    if memo is not None and memo[0] is plan and memo[1] == key:
        return memo[2]
    if system.constraints is not None:   # (not the constraints' C tables: this callback solves them too)
        out = dataclasses.replace(plan, constraints=None,
                                  callbacks=dataclasses.replace(plan.callbacks, dynamics=system.resting_accelerations))
    else:
        out = dataclasses.replace(plan, stops=dataclasses.replace(plan.stops, resting=limits.resting_table()))
    system._resting_plan_memo = (plan, key, out)
    return out


def _compiled_plan(plan, system, monitor):
    """The plan for a compiled stretch from here, or None while ``_run_fixed`` must take one step at a
    time: every event armed, but a resting joint's own stop (it sits on that guard, g = 0; the compiled
    loop holds the joint and hands back its release), and no constraints with resting joints (the
    loop reads the stops' forces for their release from its own KKT solve only)."""
    if plan is None:
        return None
    limits = system.limits
    resting = limits is not None and limits.resting
    if resting and system.constraints is not None:
        return None
    if monitor is not None and not all(monitor.armed):
        held = limits.held_events() if resting else []
        if not all(not monitor.blocks(i) or (any(ev is h for h in held) and g == 0.0)
                   for i, (ev, g) in enumerate(zip(monitor.events, monitor.g))):
            return None
    return _resting_plan(plan, system)


def _compiled_step(model, plan, system, flow, integrator):
    """A stepper (space, f, t, y, h) -> (y1, (None, (q̈, τ, contact info) at the start)) that takes the
    step in ``csrc/sim/rollout.c`` — the steps ``_run_fixed`` takes one at a time around an event, and
    the steps the sensitivities' time rates differentiate — with the joints resting on stops at the
    time of the call held (:func:`_resting_plan`)."""
    nq = model.nq

    def step(space, f, t, y, h):
        out = _one_step(model, plan, system, integrator, t, y, h)
        if out.info[0, 1] < 0:
            raise _NonFinite()
        info = None
        if out.F is not None:
            info = {"force": out.F[0, 0].copy()}
        elif out.Z is not None:
            info = flow.contact_info(out.Q[0, 0], out.QD[0, 0], out.Z[0, 0])
        return out.Y_END[0].copy(), (None, (out.QDD[0, 0].copy(), out.TAU[0, 0].copy(), info))
    return step


def _one_step(model, plan, system, integrator, t, y, h):
    """One compiled step of h from (t, y) with the joints resting on stops now held (h < 0: the
    sensitivities' time rates' differences): :func:`rollout.run_compiled`'s record."""
    nq, nv = model.nq, model.nv
    return rollout.run_compiled(model, _resting_plan(plan, system), y[None, :nq], y[None, nq:nq + nv], t + h,
                                abs(h), integrator, 1, keep_last=False, t0=t, Z0=y[None, nq + nv:],
                                held=system.held_tau, one_step=h)


def release_by_step(model, plan, system, space, integrator, dt):
    """Let the hard stops decide a release on the step the run takes: ``JointLimits.step_acceleration``,
    one compiled step of dt, its q̈ at the start with the joints then resting held, so a joint let go is
    stepped with the acceleration it was let go on; and ``JointLimits.step_forces``, the resting stops'
    forces λ of that same step, which hold the joints as the step does — under ``semi_implicit`` with
    the compliant scene implicit in it, the stops take up the implicit contact's load too, which the
    forward dynamics' λ leaves out (tiago_pro's fingertips on their stops and on the floor were let go
    on that λ while the step pressed them into the stops: an impact that "fired forever").  One step per
    (state, resting set) serves both.  Without a compiled plan (the tests' Python loop) the stepper is
    :func:`_compiled_step`'s stand-in and the forces are the Python statement's (``System.stop_forces``)."""
    if plan is None:
        stepper = _compiled_step(model, plan, system, _FixedFlow(space, system, integrator), integrator)
        system.limits.step_acceleration = lambda t, q, v: stepper(space, system.deriv, t,
                                                                  np.concatenate((q, v, system.last_z)), dt)[1][1][0]
        return
    memo = {}

    def stepped(t, q, v):   # (kept for the last state where no user function takes part: System.stop_forces')
        key = system.resting_state_key(t, q, v)
        out = memo["out"] if key is not None and memo.get("key") == key else None
        if out is None:
            y = np.concatenate((q, v, system.last_z))
            run = _one_step(model, plan, system, integrator, t, y, dt)
            if run.info[0, 1] < 0:
                raise _NonFinite()
            n = len(system.limits.resting)
            lam = None if run.stop_force is None else run.stop_force[0, :n].copy()
            out = (run.QDD[0, 0].copy(), None if lam is None or not np.all(np.isfinite(lam)) else lam)
            memo.update(key=key, out=out)
        return out

    system.limits.step_acceleration = lambda t, q, v: stepped(t, q, v)[0]
    system.limits.step_forces = lambda t, q, v: stepped(t, q, v)[1]


def _run_fixed(model, space, system, events, y, t_final, dt, integrator, record_every, rtol, atol, progress,
               plan=None, t0=0.0, rec=None, n_sample=0, flow=None):
    """One run through the event machinery (:func:`_fixed_machine`), its compiled stretches run as it asks."""
    machine = _fixed_machine(model, space, system, events, y, t_final, dt, integrator, record_every, rtol, atol,
                            progress, plan, t0, rec, n_sample, flow)
    try:
        next(machine)
        while True:
            machine.send(None)
    except StopIteration as done:
        return done.value


class _Stretch(NamedTuple):
    """A compiled stretch a run's event machinery asks for: its plan, from (t, y) with a sampled
    controller's hold (``held``, next sample ``n_sample``) to ``t_stop``."""
    plan: rollout.Plan
    t: float
    y: np.ndarray
    n_sample: int
    t_stop: float
    held: np.ndarray | None


def _shares_plan(stretch, plan):
    """Can this stretch run in one call with others of ``plan``: the same records but for its resting
    joints (``Stops.resting``), a continuous controller and no Python function (each run's own)?"""
    p = stretch.plan
    return (stretch.held is None and plan.control.period == 0.0 and plan.control.call is None
            and plan.control.call_batch is None and plan.contact.call is None
            and all(getattr(plan.callbacks, k) is None for k in ("forces", "guards", "dynamics"))
            and not plan.callbacks.z_columns and p.stops.rows is plan.stops.rows
            and all(getattr(p, k) is getattr(plan, k) for k in ("control", "f_ext", "passive", "contact",
                                                                  "callbacks", "constraints")))


def _resume_together(model, plan, machines, dt, integrator, record_every):
    """Drive several runs' event machineries (:func:`_fixed_machine`) to their ends: each goes on in
    Python until it asks for a compiled stretch; the stretches of ``plan`` that end at one time run in
    one compiled call (``Run.starts``: each run from its own start with its own resting joints, a
    group of one, on all threads without the GIL), each run sent its row; the others run alone.
    Every run's numbers are those of its own :func:`_run_fixed`.  Returns the Trajectories in order."""
    nq, nv = model.nq, model.nv
    results, asks = [None] * len(machines), {}

    def advance(i, out):
        try:
            asks[i] = machines[i].send(out) if out is not None or i in asks else next(machines[i])
        except StopIteration as done:
            asks.pop(i, None)
            results[i] = done.value
    for i in range(len(machines)):
        advance(i, None)
    while asks:
        together = {}
        for i, ask in list(asks.items()):
            if _shares_plan(ask, plan):
                together.setdefault(ask.t_stop, []).append(i)
            else:   # alone: the machine runs its stretch itself
                asks[i] = None
                advance(i, None)
        for t_stop, runs in together.items():
            if len(runs) == 1:
                i = runs[0]
                advance(i, rollout.run_compiled(
                    model, asks[i].plan, asks[i].y[None, :nq], asks[i].y[None, nq:nq + nv], t_stop, dt, integrator,
                    record_every, keep_last=False, t0=asks[i].t, Z0=asks[i].y[None, nq + nv:]))
                continue
            Y = np.stack([asks[i].y for i in runs])
            starts = np.array([asks[i].t for i in runs])
            resting = None
            if any(asks[i].plan.stops.resting is not None for i in runs):
                resting = np.full((len(runs), nv, 3), -1.0)
                for r, i in enumerate(runs):
                    table = asks[i].plan.stops.resting
                    if table is not None:
                        resting[r, :len(table)] = table
            base = dataclasses.replace(asks[runs[0]].plan, stops=plan.stops)
            out = rollout.run_compiled(model, base, Y[:, :nq], Y[:, nq:nq + nv], t_stop, dt, integrator,
                                       record_every, keep_last=False, t0=float(starts.min()), Z0=Y[:, nq + nv:],
                                       starts=starts, resting=resting)
            for r, i in enumerate(runs):
                advance(i, rollout.CompiledRuns(*(None if a is None else a[r:r + 1] for a in out)))
    return results


def _fixed_machine(model, space, system, events, y, t_final, dt, integrator, record_every, rtol, atol, progress,
                  plan=None, t0=0.0, rec=None, n_sample=0, flow=None):
    """The event machinery around the compiled loop.  The run goes on in ``csrc/sim/rollout.c``
    whenever every event is armed (but a resting joint's own stop, which the compiled loop holds)
    until a step reaches a stop, a stop lets go or an event fires; that step is taken here, one
    compiled step at a time (:func:`_compiled_step`, the seam where the tests' reference loop puts
    its Python steppers), to locate and fire the event.  ``t0``, ``rec``, ``n_sample``:
    continue a run handed back at t0 (its samples so far in ``rec``, the last one at t0 or before; a
    sampled controller's hold in ``system.held_tau`` until sample ``n_sample``).  With a progress
    bar the compiled loop runs in pieces of about 1/200 of the run that end on recorded samples,
    and the bar moves between them.  ``flow``: what is stepped (:class:`_FixedFlow`, the default:
    the state; ``sensitivity.SensitivityFlow``: the state and Z = [Φ | ∂x/∂τ], ``y`` and ``plan``
    its own).

    A generator: it yields each compiled stretch it wants as a :class:`_Stretch` and is sent back
    that stretch's :class:`~multibody.simulation.rollout.CompiledRuns` (the run's row, N = 1), or None
    to run it itself; it returns the Trajectory.  One run (:func:`_run_fixed`) sends None; a batch's
    runs (:func:`_resume_together`) are sent their rows of one compiled call."""
    flow = flow or _FixedFlow(space, system, integrator)
    space, f = flow.space, flow.deriv
    z_from, z_to = model.nq + model.nv, model.nq + model.nv + system.nz

    def at(y):   # the guards (a resting stop's force: its contact forces) read the contact states of the state they see
        system.last_z = y[z_from:z_to]
        return y
    fired = []
    status, message = "finished", ""
    t = t0
    monitor = EventMonitor(events, t, *space.split(y)[:2]) if events else None
    period = system.period
    bar = _Progress(progress, t_final)
    if rec is None:
        rec = Recorder()
        rec.add(t, y)
    last_recorded_t = rec.t[-1]
    eps = 1e-9 * dt
    piece = record_every * max(1, math.ceil(t_final / dt / record_every / 200))   # steps a compiled piece
    while t < t_final:
        stretch = _compiled_plan(plan, system, monitor) if flow.may_stretch() else None
        if stretch is not None:
            t_stop = t_final if not progress else min(t_final, (math.floor(t / dt + 1e-9) // piece + 1) * piece * dt)
            out = yield _Stretch(stretch, t, y, n_sample, t_stop, system.held_tau)   # run by the driver, or here
            t, y, n_sample, info, whole = _compiled_stretch(model, stretch, system, flow, rec, t, y, n_sample,
                                                            t_stop, dt, integrator, record_every,
                                                            whole_run=not progress and flow.plain,
                                                            piece_end=t_stop < t_final, out=out)
            if whole is not None:   # no stop reached: the run is the compiled one
                return _compiled_trajectory(model, space, system, whole, integrator)
            last_recorded_t = rec.t[-1]
            bar.update(t)
            if info[1] == rollout.NON_FINITE:   # y is the last finite state
                status, message = "diverged", non_finite_message(info[2], info[3])
                break
            if info[1] != rollout.HANDED_BACK:
                if t >= t_final:
                    break
                continue
            monitor.g = monitor.values(t, *space.split(at(y))[:2])   # as the Python steps would have left it
        step = _compiled_step(model, plan, system, flow, integrator)

        def sample(t, y=y):
            flow.sample(t, y)
            if rec.t[-1] == t:
                rec.held[-1] = system.held_tau
        t_next, k_next, n_sample = next_step_end(t, dt, t_final, period, n_sample, sample)
        h = t_next - t
        try:
            y1, (k1, info) = step(space, f, t, y, h)
            if not math.isfinite(y1.sum()):
                raise _NonFinite()
        except _NonFinite:
            status, message = "diverged", non_finite_message(t, t_next)
            break
        if rec.t[-1] == t and rec.derived[-1] is None:
            rec.derived[-1] = info
        hit = None
        if monitor is not None:
            q1, v1, _ = space.split(at(y1))
            try:   # (a resting stop's release guard takes a step: from a blown-up state it overflows)
                g_new = monitor.values(t_next, q1, v1)
            except _NonFinite:
                status, message = "diverged", non_finite_message(t, t_next)
                break

            # The state at tt in the step from (t, y), the step re-taken: the crossing's location, the
            # look at the cut (g_all) and the event's state ask for the same tt more than once; each
            # answer is kept for this step (keyed on what the compiled step reads besides tt: the
            # resting set and a sampled controller's hold), so each is taken once — the same numbers.
            partial = {}

            def state_at(tt, t0=t, y0=y, partial=partial):
                held = system.held_tau
                key = (tt, tuple(system.limits.resting.items()) if system.limits is not None else (),
                       None if held is None else held.tobytes())
                ys = partial.get(key)
                if ys is None:
                    ys = partial[key] = step(space, f, t0, y0, tt - t0)[0]
                return ys.copy()

            def g_at(i, tt):
                qs, vs, _ = space.split(at(state_at(tt)))
                return monitor.events[i].value(tt, qs, vs)
            def g_all(tt):
                qs, vs, _ = space.split(at(state_at(tt)))
                return monitor.values(tt, qs, vs)
            try:
                hit = monitor.earliest(t, t_next, g_new, g_at, g_all)
                if hit is not None:
                    te, i = hit
                    ye = at(state_at(te))
                    if not np.all(np.isfinite(ye)):
                        raise _NonFinite()
            except _NonFinite:
                status, message = "diverged", non_finite_message(t, t_next)
                break
            if hit is not None:
                try:   # (a hard stop's reset computes the dynamics: from a blown-up state they overflow)
                    y = flow.fire(monitor, i, te, ye, rec, fired, t, y)
                except _NonFinite:
                    status, message = "diverged", non_finite_message(t, te)
                    break
                t = last_recorded_t = te
                if monitor.events[i].terminal:
                    status, message = "terminated", f"terminal event {monitor.events[i].name!r} at t = {float(te)!r}"
                    break
                continue
            monitor.g = g_new
        try:
            y1 = flow.stepped(t, y, t_next, y1)
        except _NonFinite:
            status, message = "diverged", non_finite_message(t, t_next)
            break
        t, y = t_next, y1
        on_grid = abs(t - k_next * dt) <= eps
        if t >= t_final or (on_grid and k_next % record_every == 0):
            rec.add(t, y, held=system.held_tau)
            last_recorded_t = t
        if progress:
            bar.update(t)
    bar.close()
    if status == "diverged" and last_recorded_t != t:
        rec.add(t, y, held=system.held_tau)
    flow.finish(rec)
    return flow.annotate(build_trajectory(model, flow.state_space, system, rec, fired, status, message,
                                          integrator))


def _run_adaptive(model, space, system, events, y, t_final, dt, integrator, record_every, rtol, atol,
                  progress):
    si = require("scipy.integrate", "sim", "adaptive integrators (SciPy's solve_ivp)")
    rec, fired = Recorder(), []
    flow = _PlainFlow(space, system, rec, fired)
    bar = _Progress(progress, t_final)
    status, message, t, y = adaptive_loop(flow, integrator, getattr(si, ADAPTIVE[integrator]), space, events, y,
                                          t_final, dt * record_every, system.period, rtol, atol, bar.update)
    bar.close()
    if not rec.t or rec.t[-1] != t:
        rec.add(t, y, held=system.held_tau)
    traj = build_trajectory(model, space, system, rec, fired, status, message, integrator)
    if status == "failed":
        raise SimulationError(message, traj)
    return traj


class _PlainFlow:
    """The state alone, for :func:`adaptive_loop`."""

    def __init__(self, space, system, rec, fired):
        self.space, self.system, self.rec, self.fired = space, system, rec, fired

    def rate(self, t, yy):
        space = self.space
        yy = np.asarray(yy, dtype=float)
        K, _ = self.system.deriv(t, space.normalise(yy.copy()) if space.quaternion_starts else yy)
        if space.vector:
            return K
        nq, nv = space.nq, space.nv
        out = np.empty(space.n)
        out[:nq] = space.coordinate_rate(yy[:nq], yy[nq:nq + nv])
        out[nq:] = K[nv:]
        return out

    def normalise(self, w):
        return self.space.normalise(np.array(w, dtype=float))

    def record(self, t, w):
        self.rec.add(t, w, held=self.system.held_tau)

    def fire(self, monitor, i, te, w):
        return _fire(monitor, i, te, w, self.space, self.system, self.rec, self.fired)

    def sample(self, t, w):
        self.system.sample(t, *self.space.split(w)[:2])
