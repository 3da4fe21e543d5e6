"""The system a run integrates: the state derivative of y = [q, v, z], validated once.

:class:`System` checks a run's controller, forces, constraints and contact once, evaluates the
right-hand side for one state (``deriv``) or for N states together (``deriv_batch``), and says
whether the compiled loop (``csrc/sim/rollout.c``) can do the whole run (:meth:`System.plan`).  Every
fixed-step and adaptive run of ``mb.simulate`` and ``mb.simulate_batch`` goes through it.
"""
from __future__ import annotations

import math

import weakref

import numpy as np

from .. import _checks
from ..dynamics import aba
from ..core import ResultOverflowError
from ..spatial.rotations import unit_quaternion
from . import rollout
from .constraints import Constraint, ConstraintSet
from ..model.geometry import model_geoms
from ..model.model import velocity_names
from .contact import SCENE_DEPTH, GroundContact, HardContact, SceneContact
from .controllers import PD, TorqueTable
from .events import _NonFinite
from ..dynamics.gravcomp import gravity_compensation_forces, gravity_compensation_torques
from .limits import (FRICTION_VELOCITY, model_stop_table, smoothed_friction, spring_forces,
                     spring_rows, tendon_forces)


def non_finite_message(t0, t1):
    return (f"the state became non-finite between t = {float(t0)!r} and t = {float(t1)!r}; the trajectory ends at the "
            f"last finite state (t = {float(t0)!r})")


# ---- argument checks --------------------------------------------------------------------------
def _check_model(model):
    _checks.model(model)


def _state_vector(name, x, n):
    return _checks.vector(name, x, n)


def _positive(name, x, allow_zero=False):
    if type(x) is float and (0.0 <= x if allow_zero else 0.0 < x) and x < math.inf:   # the common case, at once
        return x
    return _checks.number(name, x, nonneg=allow_zero, positive=not allow_zero)


def check_initial_state(model, space, q0, qd0):
    q = _state_vector("q0", q0, model.nq)
    qd = _state_vector("qd0", qd0, model.nv)
    for s in space.quaternion_starts:
        if not np.any(q[s:s + 4]):
            raise ValueError(f"q0: the quaternion at q0[{s}:{s + 4}] is zero; expected a unit quaternion")
        q[s:s + 4] = unit_quaternion(q[s:s + 4])
    return q, qd


# ---- the right-hand side ----------------------------------------------------------------------
_TAKES_TIME = weakref.WeakKeyDictionary()   # function -> bool: a signature is read once, not per run


def _takes_time(method) -> bool:
    """True if ``method`` accepts a keyword argument ``t`` (the time-aware constraint protocol)."""
    fn = getattr(method, "__func__", method)   # a bound method's function: the same for every instance
    try:
        return _TAKES_TIME[fn]
    except (KeyError, TypeError):   # TypeError: not weakly referenceable (a builtin): read it each time
        pass
    got = _read_takes_time(method)
    try:
        _TAKES_TIME[fn] = got
    except TypeError:
        pass
    return got


def _read_takes_time(method) -> bool:
    import inspect
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    return "t" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class _ModelFacts:
    """What a run reads of its model alone — the passive laws' arrays and their compiled loop's rows —
    computed once per Model (:func:`model_facts`).  A Model is immutable (frozen fields, read-only
    arrays; ``dataclasses.replace`` makes another Model, with its own facts), so they stay true; the
    arrays here are read-only too, shared by every run of the model."""

    def __init__(self, model):
        def frozen(a):
            if a is not None:
                a.setflags(write=False)
            return a
        self.damping = frozen(np.array(model.damping, float)) if np.any(model.damping != 0) else None
        self.friction = frozen(np.array(model.friction, float)) if np.any(model.friction != 0) else None
        gc = getattr(model, "gravcomp", None)
        self.gravcomp = None if gc is None or not np.any(np.asarray(gc) != 0) else frozen(np.array(gc, float))
        self.tendons = tuple(getattr(model, "tendons", ()) or ())   # sprung/damped fixed tendons (MJCF)
        springs = spring_rows(model)                                  # joint springs (MJCF stiffness)
        self.springs = frozen(np.ascontiguousarray(springs)) if len(springs) else None
        self.gc_lift = self.gc_com = None
        if self.gravcomp is not None:   # dynamics/gravcomp.py's lift, computed the same way
            self.gc_lift = frozen(np.ascontiguousarray((self.gravcomp * model.mass)[:, None]
                                                       * -np.asarray(model.gravity), dtype=float))
            self.gc_com = frozen(np.array(model.com, dtype=float))
        self.tendon_rows = self.tendon_terms = None
        if self.tendons:   # model/tendons.py: (k, d, L_lo, L_hi) per tendon, (tendon, q index, v index, c) per term
            self.tendon_rows = frozen(np.array([(t.stiffness, t.damping, *t.spring_length) for t in self.tendons],
                                               dtype=float))
            self.tendon_terms = frozen(np.array([(i, qi, vi, c) for i, t in enumerate(self.tendons)
                                                 for qi, vi, c in zip(*t._indices(model), t.coef)], dtype=float))


def model_facts(model) -> _ModelFacts:
    """The model's :class:`_ModelFacts`, cached on the Model (as ``model_fingerprint`` is)."""
    facts = model.__dict__.get("_run_facts")
    if facts is None:
        facts = model.__dict__["_run_facts"] = _ModelFacts(model)
    return facts


def actuator_gains(acts, nv):
    """``acts.gains(nv)`` (K, D, kv), computed once per Actuators record (immutable) and cached on it
    as read-only arrays: each run's set-up reads them twice (the implicit kv, the step check)."""
    key = f"_run_gains{nv}"
    got = acts.__dict__.get(key)
    if got is None:
        got = tuple(a.setflags(write=False) or a for a in acts.gains(nv))
        object.__setattr__(acts, key, got)
    return got


class System:
    """State derivative of y = [q, v, z]: controller, forces, contact, constraints or ABA.

    ``deriv(t, y) -> (K, (qdd, tau, contact_info))`` with K = [v, q̈, ż] the tangent derivative.
    """

    def __init__(self, model, controller=None, f_ext=None, constraints=None, contact=None, limits=None,
                 friction_velocity=FRICTION_VELOCITY, ctrl=None, effort_limits=False, warn=True):
        # warn=False: the filtered actuators' start-up warning is the caller's (simulate_batch warns
        # once per call, not once per System it builds for its chunks and resumed runs)
        self.model = model
        self.dynamics_model = model   # the model FD runs on: with semi_implicit's damping in it (implicit_damping)
        self.contact_step = None      # semi_implicit's dt: the scene's law implicit in the step (implicit_damping)
        nv, nb = model.nv, model.nb
        self.ctrl_function = callable(ctrl)
        if self.ctrl_function:   # the actuators' law under ctrl(t, q, qd): the run's controller (called back)
            if getattr(model, "actuators", None) is None:
                raise ValueError("ctrl: the model has no actuators (model.actuators is None); drive it with a controller")
            if controller is not None:
                raise ValueError("ctrl: a function (t, q, qd) -> ctrl runs as the run's controller; give "
                                 "controller=None, or call model.actuators.forces(q, qd, ctrl) in your controller")
            controller = _ActuatorControl(model, ctrl, nv)
            acts = model.actuators
            if np.any(acts.filter_tau > 0):
                import warnings

                from ..errors import SimulationWarning
                names = [f"{acts.names[a]!r} (τ = {acts.filter_tau[a]:g} s)"
                         for a in np.flatnonzero(acts.filter_tau)[:6]]
                warnings.warn(f"ctrl: actuators {', '.join(names)} have filter activation dynamics, taken at their "
                              "steady state a = ctrl(t) (MuJoCo lags ctrl by that time constant)", SimulationWarning,
                              stacklevel=4)
        self.controller = controller
        if isinstance(controller, (PD, TorqueTable)):
            controller.bind(model)
        elif controller is not None and not callable(controller):
            raise TypeError(f"controller: expected None, an mb.PD or a callable (t, q, qd) -> tau, "
                            f"got {type(controller).__name__}")
        self.period = getattr(controller, "period", None)
        self.held_tau = None
        self.f_ext_const, self.f_ext_fn = None, None
        if callable(f_ext):
            self.f_ext_fn = f_ext
        elif f_ext is not None:
            a = np.array(f_ext, dtype=float)
            if a.shape != (nb, 6):
                raise ValueError(f"f_ext: expected an array of shape ({nb}, 6) (spatial forces in base "
                                 f"coordinates) or a callable (t, q, qd) -> ({nb}, 6), got shape {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError("f_ext: contains NaN or inf")
            self.f_ext_const = a
        if constraints is not None:
            for attr in ("accelerations", "residual"):
                if not callable(getattr(constraints, attr, None)):
                    raise TypeError(f"constraints: expected an object with .accelerations(model, q, qd, tau, "
                                    f"f_ext, t=...) and .residual(model, q, qd, t=...); it has no {attr!r}")
        self.constraints = constraints
        # c(t, q) = 0 needs the time: objects whose methods take ``t`` get it; older two-argument
        # protocols (no ``t``) keep working unchanged
        self.constraints_take_time = constraints is not None and all(
            _takes_time(getattr(constraints, attr)) for attr in ("accelerations", "residual"))
        self.nz = 0
        if contact is not None:
            for attr in ("initial_state", "forces"):
                if not callable(getattr(contact, attr, None)):
                    raise TypeError(f"contact: expected an object with .n_states, .initial_state(model, q, qd) "
                                    f"and .forces(model, q, qd, z); it has no {attr!r}")
            self.nz = _checks.integer("contact.n_states", getattr(contact, "n_states", 0), lo=0)
        self.contact = contact
        facts = self.facts = model_facts(model)   # the model's own laws, computed once per model
        self.damping, self.friction, self.gravcomp = facts.damping, facts.friction, facts.gravcomp
        self.friction_velocity = _positive("friction_velocity", friction_velocity)
        self.friction_velocity_asked = self.friction_velocity   # (a fixed step may raise it per joint)
        self.tendons, self.springs = facts.tendons, facts.springs
        self.actuators = None if self.ctrl_function else getattr(model, "actuators", None)   # under a constant ctrl
        if self.actuators is None and ctrl is not None and not self.ctrl_function:
            raise ValueError("ctrl: the model has no actuators (model.actuators is None); drive it with a controller")
        self.ctrl = None if self.actuators is None else (
            np.zeros(len(self.actuators)) if ctrl is None else self.actuators.check_ctrl(ctrl))
        if self.actuators is not None and warn:
            self._warn_filter_transient(self.actuators, self.ctrl)
        self.effort = None       # the controller's τ within ±model.effort_limit (URDF <limit effort>), when asked
        if effort_limits:
            e = np.asarray(getattr(model, "effort_limit", None) if getattr(model, "effort_limit", None) is not None
                           else np.full(nv, np.inf), dtype=float)
            if not np.any(np.isfinite(e)):
                raise ValueError("effort_limits: the model has no finite effort limit (model.effort_limit is inf on "
                                 "every variable; a URDF's <limit effort=...>, an MJCF joint's actuatorfrcrange)")
            self.effort = np.ascontiguousarray(e)
        self.limits = limits if limits else None        # a JointLimits with at least one finite bound
        self.hard_limits = None   # hard contact takes hard stops as rows of its LCP (hard_contact.c), not events
        if type(contact) is HardContact and self.limits is not None and self.limits.mode == "hard":
            self.hard_limits, self.limits = self.limits, None
        self.soft = self.limits is not None and self.limits.mode == "soft"
        self.last_z = np.zeros(self.nz)
        self.zero_tau = np.zeros(nv)
        self.nq, self.nv = model.nq, nv
        self.plain = (controller is None and f_ext is None and constraints is None and contact is None
                      and self.damping is None and self.passive_free)

    @staticmethod
    def _warn_filter_transient(acts, ctrl):
        """Filtered actuators are kept at their steady state a = clip(ctrl) (model/actuators.py): exact
        from MuJoCo's start activation 0 only while that is the ctrl; otherwise say so, once, by name."""
        import warnings

        from ..errors import SimulationWarning
        lo, hi, _, _ = acts.bounds()
        moved = np.flatnonzero((acts.filter_tau > 0) & (np.minimum(np.maximum(ctrl, lo), hi) != 0))
        if len(moved):
            names = [f"{acts.names[a]!r} (τ = {acts.filter_tau[a]:g} s)" for a in moved[:6]]
            more = " …" if len(moved) > 6 else ""
            warnings.warn(f"ctrl: actuators {', '.join(names)}{more} have filter activation "
                          "dynamics, taken at their steady state a = ctrl from the start; MuJoCo starts them at a = 0 "
                          "and reaches ctrl with that time constant", SimulationWarning, stacklevel=4)

    def implicit_damping(self, dt):
        """Make the run's forward dynamics (M + dt·D) q̈ = τ − C − D q̇ (``semi_implicit``: its joint
        damping implicit, as MuJoCo's Euler integrator): the model FD runs on carries
        dt·damping as extra armature — and dt·kd of a continuous ``mb.PD`` (its velocity gain a
        damper toward q̇_ref, implicit as MuJoCo's implicitfast takes an actuator's).  The Model itself (energies, impacts, records) is unchanged."""
        if hasattr(self.contact, "implicit_step"):   # the compliant scene's law too (SceneContact.implicit_step)
            self.contact_step = float(dt)
        implicit = np.zeros(self.nv) if self.damping is None else self.damping
        if isinstance(self.controller, PD) and self.controller.period is None:   # its kd too (MuJoCo's implicitfast)
            implicit = implicit + self.controller._kd
        if self.actuators is not None:   # joint actuators' velocity gain (position kv, velocity kv): implicitfast's
            implicit = implicit + actuator_gains(self.actuators, self.nv)[2]
        if not np.any(implicit):
            return
        armature = np.asarray(self.model.armature, float) + float(dt) * implicit
        # the same Model for the same armature: built (and validated, its C model packed) once per
        # (model, armature), not once per run — a short run's set-up was mostly this (issue 33)
        models = self.model.__dict__.get("_implicit_models")
        if models is None:
            models = self.model.__dict__["_implicit_models"] = {}
        key = armature.tobytes()
        dyn = models.get(key)
        if dyn is None:
            import dataclasses
            dyn = dataclasses.replace(self.model, armature=armature)
            if len(models) >= 8:   # a few steps and gains per model; a sweep over dt does not grow it unbounded
                models.pop(next(iter(models)))
            models[key] = dyn
        self.dynamics_model = dyn

    def plan(self, integrator, events=(), callables=False, batch=False):
        """The run's :class:`~multibody.simulation.rollout.Plan` for the compiled loop — the one factory
        ``simulate``, ``simulate_batch``, the sensitivities and the walker (through ``simulate``) build
        their runs with — or None where the compiled loop does not run it (an adaptive integrator, or,
        without ``callables``, a part the loop would have to call back).

        ``events`` are the user's: the hard stops' own events are handled by the plan (a step
        crossing a stop is handed back to the Python loop, a sampled controller's hold with it).
        ``callables``: a Python controller or force function, the constraints' accelerations and a
        contact object other than ``GroundContact`` are called from the compiled loop at every stage,
        the user's events' guards after every step (one run).  ``batch``: a batch's controller that is
        no built-in one is a Python function of all its states, called once a stage from the compiled
        loop (``System.control_batch``); a batch with the others runs one ``simulate`` each."""
        if integrator not in rollout.INTEGRATOR_CODES:
            return None
        in_lcp = type(self.contact) is HardContact   # hard contact's constraints are rows of its LCP, in C
        tables = None if in_lcp else self.constraint_tables()
        if not callables and (events or (self.constraints is not None and tables is None and not in_lcp)
                              or self.f_ext_fn is not None
                              or (self.contact is not None and
                                  type(self.contact) not in (GroundContact, SceneContact, HardContact))):
            return None
        ok, control, _period = rollout.controller_tables(self.model, self.controller)
        if not ok and batch:    # the batch's function of (t, Q, QD), called once a stage
            control = rollout.Control(call_batch=None if self.controller is None else self.control_batch)
        elif not ok and callables:    # checked (shape, finite) and its errors named as in the Python loop
            control = rollout.Control(period=float(self.period or 0.0), call=self._call_controller)
        elif not ok:
            return None
        ground = type(self.contact) is GroundContact    # in C; another contact law is called back
        scene = type(self.contact) in (SceneContact, HardContact)   # the model's geoms, in C (scene_contact.c)
        law = self.contact is not None and not ground and not scene
        contact = rollout.Contact(ground=(self.contact.bodies, self.contact.points, self.contact.nd, self.contact.K,
                                          self.contact.D, self.contact.mu) if ground else None,
                                  scene=self.contact.table if scene else None,
                                  call=self._contact_call if law else None, states=self.nz if law else 0,
                                  slots=self.contact.n_slots if scene else 0,
                                  hard=np.r_[self.contact.hard, self.hard_limits.restitution if self.hard_limits else 0.0]
                                  if type(self.contact) is HardContact else None,
                                  hard_limits=np.ascontiguousarray([(qi, vi, pos, sign) for _n, qi, vi, pos, sign
                                                                    in self.hard_limits.stops], dtype=float)
                                  if self.hard_limits else None,
                                  hard_rows=self.contact.constraint_rows(self.model, self.constraints)
                                  if type(self.contact) is HardContact and self.constraints is not None else None,
                                  implicit_step=float(self.contact_step or 0.0))
        callbacks = rollout.Callbacks(
            forces=self.forces if self.f_ext_fn is not None else None,
            guards=(lambda t, q, v: [ev.value(t, q, v) for ev in events]) if events else None,
            directions=np.array([ev.direction for ev in events], dtype=np.int32) if events else None,
            dynamics=self.constrained_accelerations
            if self.constraints is not None and not in_lcp and (callables or tables is not None)
            else None)   # beside C tables: only where their solve is singular (a batch's runs too)
        return rollout.Plan(control=control,
                            f_ext=None if self.f_ext_const is None else np.ascontiguousarray(self.f_ext_const),
                            passive=self.passive_record(),
                            stops=rollout.Stops(self._stop_rows() if self.hard_stops else None),
                            contact=contact, callbacks=callbacks,
                            constraints=None if tables is None else rollout.Constraints(*tables))

    def constraint_tables(self):
        """The constraints' tables for the compiled loop (``csrc/sim/constraints.c``: a ConstraintSet
        of the kinds of fixed geometry, :mod:`multibody.dynamics.constraint_tables`), or None."""
        if type(self.constraints) is not ConstraintSet:   # a subclass may solve otherwise
            return None
        return self.constraints.tables(self.model)

    def passive_record(self):
        """The plan's :class:`~multibody.simulation.rollout.Passive`: this run's passive laws as
        ``csrc/sim/passive.c`` reads them (None where a law is absent)."""
        model, facts = self.model, self.facts   # gravcomp's lift and the tendons' rows: the model's (_ModelFacts)
        gc_lift, gc_com, tendon_rows, tendon_terms = facts.gc_lift, facts.gc_com, facts.tendon_rows, facts.tendon_terms
        friction = self.friction
        return rollout.Passive(
            damping=self.damping, friction=friction,   # (the model's, float and contiguous: _ModelFacts)
            friction_velocity=None if friction is None else np.ascontiguousarray(
                np.broadcast_to(np.asarray(self.friction_velocity, dtype=float), (model.nv,))),
            gc_lift=gc_lift, gc_com=gc_com, tendons=tendon_rows, tendon_terms=tendon_terms,
            soft_stops=self.limits.soft_rows() if self.soft else None,
            implicit_armature=None if self.dynamics_model is model
            else np.ascontiguousarray(self.dynamics_model.armature, dtype=float),
            springs=self.springs,   # (no limit: the largest double, the core's gate takes finite numbers)
            effort=None if self.effort is None else np.minimum(self.effort, np.finfo(float).max),
            actuators=None if self.actuators is None else self.actuators.rows(),
            actuator_terms=None if self.actuators is None else self.actuators.term_rows(),
            actuator_ctrl=None if self.actuators is None else np.ascontiguousarray(self.ctrl, dtype=float),
            actuator_dof_range=None if self.actuators is None
            else np.ascontiguousarray(self.actuators.dof_forcerange, dtype=float),
            actuator_gravcomp=self._actuator_gravcomp_rows())

    def _actuator_gravcomp_rows(self):
        """The variables whose actuator force range clips gravcomp's share with the actuators' force
        (MJCF actuatorgravcomp: model/actuators.py), where the run applies gravcomp; else None."""
        if self.actuators is None or self.gravcomp is None:
            return None
        k = self.actuators.gravcomp_clipped()
        return np.ascontiguousarray(k, dtype=float) if len(k) else None

    def _stop_rows(self):
        """The stops' rows (q index, v index, position, sign) for the compiled loop."""
        return model_stop_table(self.model)   # (the limits' stops are the model's: built once per Model)

    @property
    def hard_stops(self):
        return self.limits is not None and self.limits.mode == "hard"

    # N states at once (mb.simulate_batch's vectorised runs): the controller sees (t, Q, QD)
    def control_batch(self, t, Q, V):
        N = Q.shape[0]
        if self.controller is None:
            return np.zeros((N, self.nv))
        try:
            out = self.controller(t, Q, V)
        except Exception as e:            # as simulate says it: which call, at what time
            raise ValueError(f"controller: raised {type(e).__name__}: {e} (at t = {float(t)!r})") from e
        tau = _controller_output(out, t)
        if tau.shape == (self.nv,):
            tau = np.broadcast_to(tau, (N, self.nv))
        if tau.shape != (N, self.nv):
            raise ValueError(f"controller: in a batch it is called with (t, Q (N, nq), QD (N, nv)) and must "
                             f"return (N, nv) = ({N}, {self.nv}); got shape {tau.shape}")
        if not np.all(np.isfinite(tau)):
            raise ValueError(f"controller: returned NaN or inf at t = {t!r}")
        return tau

    def deriv_batch(self, t, Y):
        """K = [V, Q̈] for N states (rows of Y): one batched ABA call."""
        nq, nv = self.nq, self.nv
        Q, V = Y[:, :nq], Y[:, nq:nq + nv]
        tau = self.control_batch(t, Q, V)
        tau_all = tau if self.damping is None else tau - self.damping * V
        A = aba(self.dynamics_model, Q, V, tau_all, self.f_ext_const)
        return np.concatenate((V, A), axis=1), (A, tau, None)

    @property
    def passive_free(self):
        return (self.friction is None and self.gravcomp is None and self.limits is None and not self.tendons
                and self.springs is None and self.actuators is None and self.effort is None)

    def supplies_energy(self):
        """Whether anything the run applies may add energy: a controller, the user's forces, actuators (their
        controls), gravcomp, springs (joints' and tendons' — their potential is not in the recorded energy) or
        constraints (their stabilisation).  Without these only the contact's and the stops' stored energy can
        come back (:func:`~multibody.simulation.trajectory.cut_at_energy_gain`)."""
        return (self.controller is not None or self.f_ext_fn is not None or self.f_ext_const is not None
                or self.actuators is not None or self.ctrl_function or self.gravcomp is not None
                or self.springs is not None or bool(self.tendons) or self.constraints is not None)

    def passive(self):
        """What the run applies besides the controller and the user's forces (for the record)."""
        out = []
        if self.limits is not None:
            out.append(f"limits {self.limits.mode}" + (f" (restitution {self.limits.restitution:g})"
                                                       if self.limits.mode == "hard" else ""))
        if self.effort is not None:
            out.append("effort limits")
        if self.damping is not None:
            out.append("damping")
        if self.friction is not None:
            out.append(self._friction_description())
        if self.gravcomp is not None:
            out.append("gravcomp")
        if self.springs is not None:
            out.append("springs")
        if self.tendons:
            out.append("tendons")
        if self.actuators is not None or self.ctrl_function:
            out.append("actuators" + (" (ctrl function)" if self.ctrl_function else ""))
        depth = getattr(self.contact, "depth", None)   # SceneContact's default, sunk deeper for the step
        if depth is not None and depth > SCENE_DEPTH:
            out.append(f"contact softened to {1e3 * depth:.3g} mm (the step's stability)")
        return tuple(out)

    def _friction_description(self):
        """'friction (tanh, v_s = …)', naming the variables whose v_s the step's stability raised."""
        vs = np.broadcast_to(np.asarray(self.friction_velocity, dtype=float), (self.nv,))
        base = float(self.friction_velocity_asked)
        raised = [f"{name} {v:.3g}" for name, v, f in zip(velocity_names(self.model), vs, self.friction)
                  if v > base and f > 0.0]
        return f"friction (tanh, v_s = {base:g}" + (f"; for a stable step {', '.join(raised)}" if raised else "") + ")"

    # the constraints that stay closed through an impact, and the hard stops' forces
    def closed_rows(self, t, q, v):
        rows = []
        if self.constraints is not None and isinstance(self.constraints, (Constraint, ConstraintSet)):
            rows.append(self.constraints.evaluate(self.model, q, v, t).J)
        if self.limits is not None and self.limits.resting:
            rows.append(self.limits.rows())
        return np.vstack(rows) if rows else None

    def stop_forces(self, t, q, v):
        """λ of the joints resting on hard stops (positive sense of each joint).

        Each resting stop's release guard reads its own λ from this one solve, so the guards of R
        resting stops at one state asked for R identical solves (dm_control's humanoid: seven a state,
        a third of its run).  The last result is kept, keyed on everything it reads — the state, the
        contact states, the resting set and a sampled controller's hold — where no user function
        takes part (a controller, f_ext or contact of the user's might keep state of its own, and
        constraints read t: then every call solves).  A fixed-step run's are its step's
        (``JointLimits.step_forces``, :func:`core.release_by_step`), which its releases are decided on."""
        step_forces = self.limits.step_forces
        if step_forces is not None:
            lam = step_forces(t, q, v)
            if lam is not None:
                return lam.copy()
        key = self.resting_state_key(t, q, v)
        if key is not None:
            memo = self.__dict__.get("_stop_forces_memo")
            if (memo is not None and memo[0] == key and memo[2] is self.dynamics_model
                    and memo[3] is self.friction_velocity):   # (both set up before a run, never during it)
                return memo[1].copy()
        tau = self.control(t, q, v)
        tau_all, fe, zdot, info = self._loads(t, q, v, self.last_z, tau)
        qdd, lam = self.limits.resting_accelerations(q, v, tau_all, fe, self._constraint_rows(t, q, v),
                                                     self.dynamics_model)
        if self.contact_step is not None and info is not None:   # the scene's law implicit: its load on the stops
            lam = lam + self.contact.implicit_step(self.model, self.dynamics_model, q, v, qdd, self.last_z, zdot,
                                                   info, self.contact_step, list(self.limits.resting),
                                                   held_share=True)[3]
        if key is not None:
            self._stop_forces_memo = (key, lam.copy(), self.dynamics_model, self.friction_velocity)
        return lam

    def resting_state_key(self, t, q, v):
        """What the stops' forces and the step's q̈ at (t, q, q̇) read — the state, the contact states, the
        resting set and a sampled controller's hold — as a key for keeping them; None where a user function
        takes part (:meth:`_stop_forces_pure`: then nothing is kept)."""
        if not self._stop_forces_pure():
            return None
        held = self.held_tau
        return (float(t), q.tobytes(), v.tobytes(), np.asarray(self.last_z).tobytes(),
                tuple(self.limits.resting.items()), None if held is None else held.tobytes())

    def _stop_forces_pure(self):
        """Is :meth:`stop_forces` a function of (t, q, q̇, z, resting set, held τ) alone: no user callable?"""
        pure = self.__dict__.get("_pure_stop_forces")
        if pure is None:
            c = self.controller
            pure = ((c is None or self.period is not None or type(c) in (PD, TorqueTable))
                    and self.f_ext_fn is None and self.constraints is None
                    and (self.contact is None or type(self.contact).__module__.startswith("multibody.")))
            self._pure_stop_forces = pure
        return pure

    def _constraint_rows(self, t, q, v):
        """(J, rhs) of the constraints, for a solve together with resting stops."""
        if self.constraints is None:
            return None
        if not isinstance(self.constraints, (Constraint, ConstraintSet)):
            raise ValueError(f"limits: a joint came to rest on its hard stop while constraints is a "
                             f"{type(self.constraints).__name__}, which cannot be solved together with it; "
                             f"use Constraint/ConstraintSet constraints or limits='soft'")
        cs = self.constraints if isinstance(self.constraints, ConstraintSet) else ConstraintSet(self.constraints)
        terms = cs.evaluate(self.model, q, v, t if self.constraints_take_time else 0.0)
        return terms.J, terms.stabilized_rhs(cs.alpha, cs.beta)

    # controller output, checked
    def control(self, t, q, v):
        if self.controller is None:
            return self.zero_tau
        if self.period is not None:
            if self.held_tau is None:
                self.sample(t, q, v)
            return self.held_tau
        return self._call_controller(t, q, v)

    def _call_controller(self, t, q, v):
        try:
            tau = self.controller(t, q.copy(), v.copy())
        except ValueError:
            raise
        except Exception as e:
            raise ValueError(f"controller: raised {type(e).__name__}: {e} (at t = {float(t)!r})") from e
        tau = _controller_output(tau, t)
        if tau.shape != (self.nv,):
            raise ValueError(f"controller: returned shape {tau.shape} at t = {float(t)!r}; expected ({self.nv},) "
                             f"(one joint force per velocity variable)")
        if not np.all(np.isfinite(tau)):
            raise ValueError(f"controller: returned NaN or inf at t = {float(t)!r}: {tau}")
        return tau

    def sample(self, t, q, v):
        """Zero-order hold: sample a sampled controller now."""
        self.held_tau = self._call_controller(t, q, v)

    def forces(self, t, q, v):
        if self.f_ext_fn is None:
            return self.f_ext_const
        try:
            f = self.f_ext_fn(t, q.copy(), v.copy())
        except Exception as e:
            raise ValueError(f"f_ext: the force function raised {type(e).__name__}: {e} (at t = {float(t)!r})") from e
        f = np.asarray(f, dtype=float)
        if f.shape != (self.model.nb, 6):
            raise ValueError(f"f_ext: the force function returned shape {f.shape} at t = {float(t)!r}; expected "
                             f"({self.model.nb}, 6)")
        if not np.all(np.isfinite(f)):
            raise ValueError(f"f_ext: the force function returned NaN or inf at t = {float(t)!r}")
        return f if self.f_ext_const is None else f + self.f_ext_const

    def contact_forces(self, q, v, z):
        """(f_ext (nb, 6), ż, info) of the contact object at a state, checked; _NonFinite when not finite."""
        model = self.model
        fc, zdot, info = self.contact.forces(model, q, v, z)
        fc = np.asarray(fc, dtype=float)
        zdot = np.asarray(zdot, dtype=float).reshape(-1)
        if fc.shape != (model.nb, 6) or zdot.shape != (self.nz,):
            raise ValueError(f"contact: forces() returned f_ext of shape {fc.shape} and zdot of shape "
                             f"{zdot.shape}; expected ({model.nb}, 6) and ({self.nz},)")
        if not (np.all(np.isfinite(fc)) and np.all(np.isfinite(zdot))):
            raise _NonFinite()
        return fc, zdot, info

    def _contact_call(self, t, q, v, z):
        """[f_ext, ż] for the compiled loop (NaN where the state blew up: it reports that)."""
        try:
            fc, zdot, _info = self.contact_forces(q, v, z)
        except _NonFinite:
            return np.full(6 * self.model.nb + self.nz, np.nan)
        return np.concatenate((fc.reshape(-1), zdot))

    def contact_info(self, q, v, z):
        """The contact object's info at a recorded sample (the compiled loop keeps only the ground's)."""
        try:
            return self.contact_forces(q, v, z)[2]
        except _NonFinite:
            return None

    def _loads(self, t, q, v, z, tau):
        """(τ + passive joint forces, f_ext with contact and gravity compensation, ż, contact info)."""
        model = self.model
        fe = self.forces(t, q, v)
        zdot, info = np.zeros(0), None
        if self.contact is not None:
            fc, zdot, info = self.contact_forces(q, v, z)
            fe = fc if fe is None else fe + fc
        if self.gravcomp is not None:
            fg = gravity_compensation_forces(model, q)   # MuJoCo's gravcomp, as f_ext
            fe = fg if fe is None else fe + fg
        if self.effort is not None:     # passive.c's mb_passive_effort: the controller's τ clipped first
            tau = np.minimum(np.maximum(tau, -self.effort), self.effort)
        tau_all = tau if self.damping is None else tau - self.damping * v
        if self.friction is not None:
            tau_all = tau_all + smoothed_friction(self.friction, v, self.friction_velocity)
        if self.springs is not None:
            tau_all = tau_all + spring_forces(model, q)
        if self.tendons:
            tau_all = tau_all + tendon_forces(model, q, v)
        if self.actuators is not None:
            tau_all = tau_all + self.actuators.forces(q, v, self.ctrl, model.nv, actuator_gravcomp(model, q))
        if self.soft and self.contact_step is None:   # (else solved with the contacts: accelerations)
            ts = self.limits.soft_forces(q, v, tau_all, fe)
            if ts is not None:
                tau_all = tau_all + ts
        return tau_all, fe, zdot, info

    def accelerations(self, t, q, v, z, tau=None):
        """(q̈, τ_controller, ż, contact info) at a state; raises _NonFinite on a blown-up state."""
        model = self.model
        if tau is None:
            tau = self.control(t, q, v)
        tau_all, fe, zdot, info = self._loads(t, q, v, z, tau)
        if self.limits is not None and self.limits.resting:
            qdd = self.limits.resting_accelerations(q, v, tau_all, fe, self._constraint_rows(t, q, v),
                                                    self.dynamics_model)[0]
        elif self.constraints is not None:
            qdd = self.constrained_accelerations(t, q, v, tau_all, fe)
        else:
            try:
                qdd = aba(self.dynamics_model, q, v, tau_all, fe)
            except ResultOverflowError:  # a huge finite state overflows in ABA: the run blew up
                raise _NonFinite() from None
        if self.contact_step is not None and info is not None:   # semi_implicit: the scene's law implicit (tree's M)
            held = sorted(self.limits.resting) if self.limits is not None and self.limits.resting else ()
            qdd, zdot, info = self.contact.implicit_step(model, self.dynamics_model, q, v, qdd, z, zdot, info,
                                                         self.contact_step, held,
                                                         soft=self.limits.soft_terms(q, v) if self.soft else None)
        if not np.all(np.isfinite(qdd)):
            raise _NonFinite()
        return qdd, tau, zdot, info

    def resting_accelerations(self, t, q, v, tau_all, fe):
        """q̈ with the joints resting on hard stops held and the constraints solved together with them
        (TMT eq. 6): the compiled loop's dynamics callback while a constrained model rests on a stop."""
        return self.limits.resting_accelerations(q, v, tau_all, fe, self._constraint_rows(t, q, v),
                                                 self.dynamics_model)[0]

    def constrained_accelerations(self, t, q, v, tau_all, fe):
        """q̈ of the constrained model from the joint forces and f_ext (also the compiled loop's)."""
        if self.constraints_take_time:
            qdd, _lam = self.constraints.accelerations(self.dynamics_model, q, v, tau_all, fe, t=t)
        else:
            qdd, _lam = self.constraints.accelerations(self.dynamics_model, q, v, tau_all, fe)
        return np.asarray(qdd, dtype=float)

    def deriv(self, t, y):
        nq, nv = self.nq, self.nv
        q, v = y[:nq], y[nq:nq + nv]
        if self.plain:  # the hot path: one compiled ABA call (a NaN here shows in the step's result)
            try:
                a = aba(self.model, q, v, self.zero_tau)
            except ValueError as exc:  # a huge finite state overflows in ABA: the run blew up too
                if isinstance(exc, ResultOverflowError) or not np.all(np.isfinite(y)):
                    raise _NonFinite() from None
                raise
            return np.concatenate((v, a)), (a, self.zero_tau, None)
        if not np.all(np.isfinite(y)):
            raise _NonFinite()
        self.last_z = y[nq + nv:]
        qdd, tau, zdot, info = self.accelerations(t, q, v, self.last_z)
        return np.concatenate((v, qdd, zdot)), (qdd, tau, info)


def actuator_gravcomp(model, q):
    """The gravity compensation the actuators' clip takes (``Actuators.forces``' ``gravcomp``): g at q
    where a variable clips it (MJCF actuatorgravcomp with actuatorfrcrange), zeros without gravcomp,
    None where no variable needs it."""
    if not len(model.actuators.gravcomp_clipped()):
        return None
    if not np.any(model.gravcomp != 0):
        return np.zeros(model.nv)
    return gravity_compensation_torques(model, q)


class _ActuatorControl:
    """The actuators' law (model/actuators.py) under the caller's ctrl(t, q, qd), as a controller."""

    def __init__(self, model, ctrl, nv):
        self.model, self.actuators, self.ctrl, self.nv = model, model.actuators, ctrl, nv

    def __call__(self, t, q, qd):
        try:
            c = self.ctrl(t, q, qd)
        except Exception as e:
            raise ValueError(f"ctrl: raised {type(e).__name__}: {e} (at t = {float(t)!r})") from e
        return self.actuators.forces(q, qd, self.actuators.check_ctrl(c), self.nv, actuator_gravcomp(self.model, q))


def _controller_output(out, t):
    """A controller's forces as float64 through the one array gate: complex numbers (whose imaginary
    part ``dtype=float`` dropped without a word), strings and objects are a TypeError naming the
    controller and the time."""
    try:
        return _checks.array("controller", out, None, finite=False, copy=False)
    except TypeError as e:
        raise TypeError(f"{e} (returned at t = {float(t)!r})") from None


#: the contact models ``simulate(contact=...)`` names
CONTACT_MODELS = ("compliant", "hard", "off")


def default_integrator(contact, model=None, ground=False):
    """``simulate``'s integrator when none is given: ``"semi_implicit"`` under hard contact (its time
    stepper is that step), else the model's own (``model.integrator``: an MJCF's ``<option
    integrator>``, MuJoCo's Euler as ``"semi_implicit"``), else ``"semi_implicit"`` where the run puts
    the model on a floor under the compliant law (``ground`` with ``contact`` None or ``"compliant"``:
    the law is implicit in that step, as MuJoCo's default Euler takes a robot's contact and damping, so a
    stiff foot, a light finger or a damped wrist runs at 1 ms where an explicit step would be refused),
    else ``"rk4"``.

    >>> import multibody as mb
    >>> m = mb.load_mjcf('<mujoco><worldbody><body><joint damping="5"/><geom size="0.01"/></body>'
    ...                  '</worldbody></mujoco>')
    >>> default_integrator(None, m), default_integrator("hard", m), default_integrator(None)
    ('semi_implicit', 'semi_implicit', 'rk4')
    >>> arm = mb.models.planar(2)
    >>> default_integrator(None, arm, ground=True), default_integrator("off", arm, ground=True)
    ('semi_implicit', 'rk4')
    """
    hard = (isinstance(contact, str) and contact == "hard") or getattr(contact, "name", None) == "hard"
    if hard:
        return "semi_implicit"
    own = getattr(model, "integrator", None)
    if own is not None:
        return own
    on_floor = ground is not False and ground is not None and (contact is None or (isinstance(contact, str)
                                                                                   and contact == "compliant"))
    return "semi_implicit" if on_floor else "rk4"


def default_step(model):
    """``simulate``'s dt when none is given: the file's own step (``model.timestep``: an MJCF's ``<option
    timestep>``, MuJoCo's 0.002 s where the file sets none), else 1 ms.

    >>> import multibody as mb
    >>> m = mb.load_mjcf('<mujoco><option timestep="0.005"/><worldbody><body><joint/><geom size="0.1"/></body>'
    ...                  '</worldbody></mujoco>')
    >>> default_step(m), default_step(mb.models.planar(2))
    (0.005, 0.001)
    """
    own = getattr(model, "timestep", None)
    return float(own) if own is not None else 1e-3


def scene_contact(model, contact=None, ground=False, step=None):
    """The contact object a run takes: ``contact`` itself when given (a contact object), None for
    ``"off"``; the model's geoms (with a floor when ``ground`` asks for one) under the compliant law
    (:class:`SceneContact`) for ``"compliant"`` or under hard contact (:class:`HardContact`) for
    ``"hard"``; for None a :class:`SceneContact` when ``ground`` asks for a floor or the model's geoms
    hold one (a static plane or height field with candidate pairs), else None.  ``step``: (dt, integrator)
    of the explicit fixed step a compliant law built here will be taken in (its default fits it)."""
    if isinstance(contact, str):
        if contact not in CONTACT_MODELS:
            raise ValueError(f"contact: expected a contact object, None or one of {', '.join(map(repr, CONTACT_MODELS))}, "
                             f"got {contact!r}")
        if contact == "hard":
            return HardContact(model, ground=ground)
        if contact == "compliant":
            return SceneContact(model, ground=ground, step=step)
        return None
    if contact is not None:
        if ground is not False and ground is not None:
            raise ValueError("ground: a floor for the model's geoms; not with an explicit contact object")
        return contact
    if ground is not False and ground is not None:
        return SceneContact(model, ground=ground, step=step)
    geoms = getattr(model, "geoms", None)   # a loader's (MJCF) may hold the file's floor; collision records never do
    if geoms is not None and len(geoms.pairs) and np.any((geoms.body < 0) & np.isin(geoms.kind, ("plane", "hfield"))):
        return SceneContact(model, geoms=geoms, step=step)
    return None


def check_actuator_step(model, acts, damping, q, dt, integrator):
    """Refuse, before the run, actuators whose gains the fixed step cannot follow (MJCF position and
    velocity servos: bias b1 = −kp, b2 = −kv).

    Linearised at the start configuration q, the actuators act as the stiffness K and damping D of
    :meth:`~multibody.model.actuators.Actuators.gains`: ẏ = [0 I; −M⁻¹(K + K_joint), −M⁻¹(D + D_joint)] y,
    K_joint the joints' own springs.  An
    explicit step of dt maps it by the tableau's stability function (``limits.oscillator_step_radii``);
    ``semi_implicit`` by its symplectic Euler with the joint damping and the joint actuators' kv
    implicit (M̃ = M + dt (D_joint + kv), MuJoCo's implicitfast), the rest explicit.  When the map's
    spectral radius passes 1 the run would blow up: the ValueError names the actuator, its gain,
    the joint that leads the fastest mode and the largest dt that works.
    """
    from .limits import unless_passed_before
    q = np.asarray(q, float)
    key = ("actuators", id(acts), q.tobytes(), None if damping is None else np.asarray(damping, float).tobytes(),
           float(dt), integrator)
    unless_passed_before(model, key, acts, lambda: check_actuator_steps(model, acts, damping, q[None], dt, integrator))


def check_actuator_steps(model, acts, damping, Q, dt, integrator, runs=None):
    """:func:`check_actuator_step` at every start of a batch (the rows of Q), linearised together (one
    batched CRBA and eigenvalue solve); the first start refused raises, prefixed "run i: " with i from
    ``runs`` (the starts' run numbers) when given."""
    from .limits import _round_down, first_unstable_start, joint_springs
    nv = model.nv
    K, D, kv = actuator_gains(acts, nv)
    if nv == 0 or not (np.any(K) or np.any(D)):
        return
    d = np.zeros(nv) if damping is None else np.asarray(damping, float)
    # the joints' own springs act beside the servos' kp: the step must follow the sum
    springs = joint_springs(model)
    found = first_unstable_start(model, Q, K + np.diag(springs), D + np.diag(d), d + kv, dt, integrator)
    if found is None:
        return
    i, H, w, j, damper, lo = found
    on_j = ([a for a in range(len(acts)) if np.any(acts.terms[acts.terms[:, 0] == a][:, 2] == j)]
            or list(range(len(acts))))
    a = max(on_j, key=lambda a: abs(acts.bias[a, 2 if damper else 1]) * acts.gear[a] ** 2)
    gain, value = ("kv", -acts.bias[a, 2]) if damper else ("kp", -acts.bias[a, 1])
    works = f"dt ≤ {_round_down(0.8 * lo):.3g}" if lo > 0 else "no step of this integrator"
    raise ValueError(
        ("" if runs is None else f"run {int(runs[i])}: ")
        + f"actuator {acts.names[a]!r}: {gain} = {value:g} (gear {acts.gear[a]:g}) on {velocity_names(model)[j]!r} "
        + (f"with its joint spring of {springs[j]:g} " if gain == "kp" and springs[j] else "")
        + f"(inertia {H[j, j]:.3g} at the start) is too stiff for a {integrator} step of dt = {dt:g} s: its fastest "
        f"mode (eigenvalue {w:.4g}) leaves the step's stability region and the run would blow up.  "
        f"Pass {works}" + ("" if integrator == "semi_implicit" else
                           ", integrator='semi_implicit' (joint actuators' kv implicit, as MuJoCo's implicitfast)")
        + ", or smaller gains")


def check_spring_step(model, damping, q, dt, integrator):
    """Refuse, before the run, joint springs (the model's ``stiffness``: MJCF ``<joint stiffness>``)
    the fixed step cannot follow, as :func:`check_actuator_step` refuses servos: linearised at q,
    ẏ = [0 I; −M⁻¹K, −M⁻¹D] y with K = diag(stiffness) and D the joint damping (implicit under
    ``semi_implicit``, the springs explicit, as in MuJoCo's implicitfast).  Where the step's map passes
    spectral radius 1 the run would blow up (a spring of 1e5 N·m/rad on a link of inertia 1/3 at
    dt = 0.01 grew 33× a step): the ValueError names the joint, its stiffness and the largest dt that
    works.

    >>> import dataclasses, numpy as np, multibody as mb
    >>> m = dataclasses.replace(mb.models.planar(1), stiffness=np.array([1e5]))
    >>> check_spring_step(m, None, m.neutral(), 1e-3, "rk4")        # passes
    >>> check_spring_step(m, None, m.neutral(), 1e-2, "rk4")
    Traceback (most recent call last):
    ...
    ValueError: joint spring: stiffness = 100000 on 'joint1' (inertia 0.333 at the start) is too stiff ...
    """
    from .limits import unless_passed_before
    q = np.asarray(q, float)
    key = ("springs", q.tobytes(), None if damping is None else np.asarray(damping, float).tobytes(), float(dt),
           integrator)
    unless_passed_before(model, key, True, lambda: check_spring_steps(model, damping, q[None], dt, integrator))


def check_spring_steps(model, damping, Q, dt, integrator, runs=None):
    """:func:`check_spring_step` at every start of a batch (the rows of Q), linearised together; the first
    start refused raises, prefixed "run i: " with i from ``runs`` when given."""
    from .limits import _round_down, first_unstable_start, joint_springs
    nv = model.nv
    k = joint_springs(model)
    if nv == 0 or not np.any(k):
        return
    d = np.zeros(nv) if damping is None else np.asarray(damping, float)
    found = first_unstable_start(model, Q, np.diag(k), np.diag(d), d, dt, integrator)
    if found is None:
        return
    i, H, w, j, _, lo = found
    if k[j] == 0.0:   # the mode led by a joint without a spring: name the stiffest one
        j = int(np.argmax(k))
    works = f"dt ≤ {_round_down(0.8 * lo):.3g}" if lo > 0 else "no step of this integrator"
    raise ValueError(
        ("" if runs is None else f"run {int(runs[i])}: ")
        + f"joint spring: stiffness = {k[j]:g} on {velocity_names(model)[j]!r} (inertia {H[j, j]:.3g} at the "
        f"start) is too stiff for a {integrator} step of dt = {dt:g} s: its fastest mode (eigenvalue {w:.4g}) "
        f"leaves the step's stability region and the run would blow up.  Pass {works}, or a softer spring")
