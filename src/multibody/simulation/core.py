"""``mb.simulate``: forward dynamics integrated in time, with controllers, forces, events and resets.

The equations integrated are q̈ = FD(q, q̇, τ, f_ext) — spatial_v2's ``FDab`` (``mb.aba``), or the
``constraints`` object's constrained accelerations (TMT eq. 6 / spatial_v2 ``FDgq``) — with
τ = controller(t, q, q̇) − damping ⊙ q̇ and f_ext = the user's forces plus the ``contact`` object's.

Fixed-step runs (``euler``, ``semi_implicit``, ``rk4``) step on the grid t_k = k·dt (the last step
ends exactly at t_final).  Adaptive runs (``rk45``, ``dop853``, ``radau``, ``lsoda``, ``rk23``,
``bdf``) use the solvers behind SciPy's ``solve_ivp`` step by step, with this module's event
location on their dense output; samples are taken on the same grid k·dt·record_every.

Current state of the implementation: a single trajectory loops over steps in Python, each stage
one call of the compiled ABA kernel (about 4 calls per RK4 step); ``simulate_batch`` advances N
trajectories at once, one batched kernel call per stage.  The steppers are written stage by stage
so that the loop can move into the compiled core.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _checks
from ..dynamics import aba
from ..errors import SimulationError, SimulationWarning
from ..spatial.rotations import unit_quaternion
from . import rollout
from .controllers import PD, TorqueTable
from .constraints import Constraint, ConstraintSet
from .events import Event, EventMonitor, check_events
from .limits import FRICTION_VELOCITY, JointLimits, gravity_compensation, smoothed_friction
from .integrators import ADAPTIVE, FIXED_STEP, STEPPERS, StateSpace
from .trajectory import EventRecord, Trajectory, model_fingerprint


class _NonFinite(Exception):
    pass


# ---- argument checks --------------------------------------------------------------------------
def _check_model(model):
    _checks.model(model)


def _state_vector(name, x, n):
    return _checks.vector(name, x, n)


def _positive(name, x, allow_zero=False):
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
def _takes_time(method) -> bool:
    """True if ``method`` accepts a keyword argument ``t`` (the time-aware constraint protocol)."""
    import inspect
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    return "t" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class System:
    """State derivative of y = [q, v, z]: controller, forces, contact, constraints or ABA.

    ``deriv(t, y) -> (K, (qdd, tau, contact_info))`` with K = [v, q̈, ż] the tangent derivative.
    """

    def __init__(self, model, controller=None, f_ext=None, constraints=None, contact=None, limits=None,
                 friction_velocity=FRICTION_VELOCITY):
        self.model = model
        nv, nb = model.nv, model.nb
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
            self.nz = int(getattr(contact, "n_states", 0))
        self.contact = contact
        self.damping = np.asarray(model.damping, float) if np.any(model.damping != 0) else None
        self.friction = np.asarray(model.friction, float) if np.any(model.friction != 0) else None
        self.friction_velocity = _positive("friction_velocity", friction_velocity)
        gc = getattr(model, "gravcomp", None)
        self.gravcomp = None if gc is None or not np.any(np.asarray(gc) != 0) else np.asarray(gc, float)
        self.limits = limits if limits else None        # a JointLimits with at least one finite bound
        self.soft = self.limits is not None and self.limits.mode == "soft"
        self.last_z = np.zeros(self.nz)
        self.zero_tau = np.zeros(nv)
        self.nq, self.nv = model.nq, nv
        self.plain = (controller is None and f_ext is None and constraints is None and contact is None
                      and self.damping is None and self.passive_free)
        # the compiled loop applies damping but none of the other passive forces
        self.compilable = self.passive_free

    @property
    def passive_free(self):
        return self.friction is None and self.gravcomp is None and self.limits is None

    def passive(self):
        """What the run applies besides the controller and the user's forces (for the record)."""
        out = []
        if self.limits is not None:
            out.append(f"limits {self.limits.mode}" + (f" (restitution {self.limits.restitution:g})"
                                                       if self.limits.mode == "hard" else ""))
        if self.damping is not None:
            out.append("damping")
        if self.friction is not None:
            out.append(f"friction (tanh, v_s = {self.friction_velocity:g})")
        if self.gravcomp is not None:
            out.append("gravcomp")
        return tuple(out)

    # the constraints that stay closed through an impact, and the hard stops' forces
    def closed_rows(self, t, q, v):
        rows = []
        if self.constraints is not None and isinstance(self.constraints, (Constraint, ConstraintSet)):
            rows.append(self.constraints.evaluate(self.model, q, v, t).J)
        if self.limits is not None and self.limits.resting:
            rows.append(self.limits.rows())
        return np.vstack(rows) if rows else None

    def stop_forces(self, t, q, v):
        """λ of the joints resting on hard stops (positive sense of each joint)."""
        tau = self.control(t, q, v)
        tau_all, fe, _zdot, _info = self._loads(t, q, v, self.last_z, tau)
        return self.limits.resting_accelerations(q, v, tau_all, fe, self._constraint_rows(t, q, v))[1]

    def _constraint_rows(self, t, q, v):
        """(J, rhs) of the constraints, for a solve together with resting stops."""
        if self.constraints is None:
            return None
        if not isinstance(self.constraints, (Constraint, ConstraintSet)):
            raise ValueError(f"limits: a joint came to rest on its hard stop while constraints is a "
                             f"{type(self.constraints).__name__}, which cannot be solved together with it; "
                             f"use Constraint/ConstraintSet constraints or limits='soft'")
        cs = self.constraints if isinstance(self.constraints, ConstraintSet) else self.constraints._as_set()
        terms = cs.evaluate(self.model, q, v, t if self.constraints_take_time else 0.0)
        return terms.J, -terms.bias - 2.0 * cs.alpha * terms.cdot - cs.beta ** 2 * terms.c

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
        tau = np.asarray(tau, dtype=float)
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

    def _loads(self, t, q, v, z, tau):
        """(τ + passive joint forces, f_ext with contact and gravity compensation, ż, contact info)."""
        model = self.model
        fe = self.forces(t, q, v)
        zdot, info = np.zeros(0), None
        if self.contact is not None:
            fc, zdot, info = self.contact.forces(model, q, v, z)
            fc = np.asarray(fc, dtype=float)
            zdot = np.asarray(zdot, dtype=float).reshape(-1)
            if fc.shape != (model.nb, 6) or zdot.shape != (self.nz,):
                raise ValueError(f"contact: forces() returned f_ext of shape {fc.shape} and zdot of shape "
                                 f"{zdot.shape}; expected ({model.nb}, 6) and ({self.nz},)")
            if not (np.all(np.isfinite(fc)) and np.all(np.isfinite(zdot))):
                raise _NonFinite()
            fe = fc if fe is None else fe + fc
        if self.gravcomp is not None:
            fg = gravity_compensation(model, self.gravcomp, q)
            fe = fg if fe is None else fe + fg
        tau_all = tau if self.damping is None else tau - self.damping * v
        if self.friction is not None:
            tau_all = tau_all + smoothed_friction(self.friction, v, self.friction_velocity)
        if self.soft:
            ts = self.limits.soft_forces(q, v)
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
            qdd = self.limits.resting_accelerations(q, v, tau_all, fe, self._constraint_rows(t, q, v))[0]
        elif self.constraints is not None:
            if self.constraints_take_time:
                qdd, _lam = self.constraints.accelerations(model, q, v, tau_all, fe, t=t)
            else:
                qdd, _lam = self.constraints.accelerations(model, q, v, tau_all, fe)
            qdd = np.asarray(qdd, dtype=float)
        else:
            qdd = aba(model, q, v, tau_all, fe)
        if not np.all(np.isfinite(qdd)):
            raise _NonFinite()
        return qdd, tau, zdot, info

    def deriv(self, t, y):
        nq, nv = self.nq, self.nv
        q, v = y[:nq], y[nq:nq + nv]
        if self.plain:  # the hot path: one compiled ABA call (a NaN here shows in the step's result)
            try:
                a = aba(self.model, q, v, self.zero_tau)
            except ValueError:
                if not np.all(np.isfinite(y)):
                    raise _NonFinite() from None
                raise
            return np.concatenate((v, a)), (a, self.zero_tau, None)
        if not np.all(np.isfinite(y)):
            raise _NonFinite()
        self.last_z = y[nq + nv:]
        qdd, tau, zdot, info = self.accelerations(t, q, v, self.last_z)
        return np.concatenate((v, qdd, zdot)), (qdd, tau, info)


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

    def fill_last(self, t, derived):
        if self.derived and self.t[-1] == t and self.derived[-1] is None:
            self.derived[-1] = derived


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
        qdd[missing] = aba(model, Q[missing], V[missing], np.zeros((len(missing), nv)))
        tau[missing] = 0.0
        missing = []
    for i in missing:
        try:
            a, tu, _zd, info = system.accelerations(T[i], Q[i], V[i], Z[i], tau=rec.held[i])
        except _NonFinite:
            a, tu, info = np.full(nv, np.nan), np.full(nv, np.nan), None
        rec.derived[i] = (a, tu, info)
    for i in range(n):
        if rec.derived[i] is not None:
            qdd[i], tau[i], infos[i] = rec.derived[i][0], rec.derived[i][1], rec.derived[i][2]
    residual = None
    if system.constraints is not None and n:
        rows = []
        for i in range(n):
            c, cd = (system.constraints.residual(model, Q[i], V[i], t=T[i]) if system.constraints_take_time
                     else system.constraints.residual(model, Q[i], V[i]))
            rows.append(np.stack([np.asarray(c, float).reshape(-1), np.asarray(cd, float).reshape(-1)]))
        residual = np.array(rows)
    forces = None
    if system.contact is not None and n and any(inf is not None and "force" in inf for inf in infos):
        shape = next(np.shape(inf["force"]) for inf in infos if inf is not None and "force" in inf)
        forces = np.array([np.asarray(inf["force"], float) if inf is not None and "force" in inf
                           else np.full(shape, np.nan) for inf in infos])
    return Trajectory(t=T, q=Q.copy(), qd=V.copy(), qdd=qdd, tau=tau, model=model,  # energies: lazy
                      events=events_fired, constraint_residual=residual, contact_forces=forces,
                      contact_state=Z.copy() if system.nz else None, status=status, message=message,
                      integrator=integrator, model_fingerprint=model_fingerprint(model), model_name=model.name,
                      quaternion_starts=space.quaternion_starts)


# ---- the public function ----------------------------------------------------------------------
def simulate(model, q0, qd0, t_final, dt=1e-3, integrator="rk4", controller=None, f_ext=None, events=(),
             constraints=None, contact=None, record_every=1, rtol=1e-9, atol=1e-12,
             progress=False, limits="hard", limit_restitution=0.0, friction_velocity=FRICTION_VELOCITY,
             on_divergence="warn") -> Trajectory:
    """Integrate the model's motion from (q0, qd0) over [0, t_final] and return a :class:`Trajectory`.

    Parameters
    ----------
    dt : step size of fixed-step integrators; sample interval (× ``record_every``) of adaptive ones.
    integrator : ``"rk4"`` (default), ``"euler"``, ``"semi_implicit"`` — fixed step; ``"rk45"``,
        ``"dop853"``, ``"radau"``, ``"lsoda"``, ``"rk23"``, ``"bdf"`` — adaptive (SciPy's solvers,
        tolerances ``rtol``/``atol``, defaults 1e-9/1e-12).
    controller : None, a built-in controller (``mb.PD``, continuous or sampled) or a Python
        callable ``(t, q, qd) -> tau`` (slower: it runs in Python at every stage).
    f_ext : None, spatial forces (nb, 6) in base coordinates (as ``mb.aba``), or a callable
        ``(t, q, qd) -> (nb, 6)``.
    events : ``mb.Event`` or a sequence of them (guards located in time, resets applied).
    constraints, contact : objects of the constraint / contact protocols (``multibody.simulation``
        docs); the run uses ``constraints.accelerations`` instead of ``mb.aba`` when given.  The
        model's own constraints (``model.constraints``, e.g. from an MJCF ``<equality>``) are
        solved together with them.
    record_every : keep every k-th grid sample (the final state and event states are always kept).
    progress : show a progress bar (tqdm).
    limits : the model's position limits: ``"hard"`` (default; rigid stops, impacts with restitution
        ``limit_restitution``, default 0), ``"soft"`` (a critically damped spring–damper stop) or
        ``"off"``.  The model's damping, Coulomb friction (smoothed: f·tanh(q̇ / ``friction_velocity``))
        and gravity compensation are always applied; see :mod:`multibody.simulation.limits`.
        ``traj.passive`` lists what was applied.
    on_divergence : ``"warn"`` (default) or ``"raise"`` (a :class:`SimulationError` carrying the
        trajectory up to the last finite state).

    A run whose state becomes non-finite stops, warns once (:class:`SimulationWarning`) and returns
    the samples up to the last finite state with ``status == "diverged"`` and the time in ``message``.
    A run whose record would not fit in the available memory is refused before it starts.

    Example — the OpenDE report's double pendulum (section 5.6), 1 s with RK4 at 1 ms:

    >>> import numpy as np, multibody as mb
    >>> traj = mb.simulate(mb.models.double_pendulum(), [np.pi / 4, -np.pi / 4], [0, 0], 1.0)
    >>> len(traj), bool(traj.energy_drift < 1e-9)
    (1001, True)
    """
    _check_model(model)
    _checks.one_of("integrator", integrator, list(FIXED_STEP) + list(ADAPTIVE))
    t_final = _positive("t_final", t_final, allow_zero=True)
    dt = _positive("dt", dt)
    record_every = _checks.integer("record_every", record_every, lo=1)
    rtol, atol = _positive("rtol", rtol), _positive("atol", atol)
    events = check_events(events)
    _checks.one_of("on_divergence", on_divergence, ("warn", "raise"))
    constraints = _with_model_constraints(model, constraints)
    stops = JointLimits(model, limits, limit_restitution, dt)
    system = System(model, controller, f_ext, constraints, contact, stops, friction_velocity)
    space = StateSpace(model, system.nz)
    q, qd = check_initial_state(model, space, q0, qd0)
    check_record_size(model, space, t_final, dt, record_every, integrator)
    z = np.zeros(0)
    if contact is not None:
        z = np.asarray(contact.initial_state(model, q, qd), dtype=float).reshape(-1)
        if z.shape != (system.nz,) or not np.all(np.isfinite(z)):
            raise ValueError(f"contact: initial_state returned {z!r}; expected {system.nz} finite numbers")
    system.last_z = z
    if system.limits is not None and limits == "hard":
        stops.check_start(q)
        events = events + tuple(stops.events(system))
        stops.start(0.0, q, qd)
    y0 = np.concatenate((q, qd, z))
    traj = None
    if integrator in FIXED_STEP and rollout.USE_COMPILED and system.compilable:  # the whole run in C
        plan = rollout.compiled_plan(model, integrator, controller, system.f_ext_const if f_ext is not None
                                     else None, events, constraints, contact, progress)
        if plan is not None and not callable(f_ext):
            traj = rollout.simulate_compiled(model, space, q, qd, t_final, dt, integrator, int(record_every), plan)
    if traj is None:
        run = _run_fixed if integrator in FIXED_STEP else _run_adaptive
        traj = run(model, space, system, events, y0, t_final, dt, integrator, int(record_every), rtol, atol,
                   progress)
    traj.passive = system.passive()
    if traj.status == "diverged":
        if on_divergence == "raise":
            raise SimulationError(f"simulate: {traj.message}", traj)
        warnings.warn(f"simulate: {traj.message}", SimulationWarning, stacklevel=2)
    return traj


def _with_model_constraints(model, constraints):
    """The user's constraints joined with the model's own (``model.constraints``), solved as one set."""
    own = tuple(getattr(model, "constraints", ()) or ())
    if not own:
        return constraints
    if constraints is None:
        return ConstraintSet(*own)
    if isinstance(constraints, ConstraintSet):
        return ConstraintSet(*own, *constraints.constraints, alpha=constraints.alpha, beta=constraints.beta,
                             redundant=constraints.redundant, rank_tol=constraints.rank_tol)
    if isinstance(constraints, Constraint):
        return ConstraintSet(*own, constraints)
    raise TypeError(f"constraints: the model carries constraints ({len(own)}: model.constraints) that must be "
                    f"solved with yours; expected a Constraint or ConstraintSet, got "
                    f"{type(constraints).__name__}")


#: bytes of one recorded sample beyond its state numbers (time, accelerations, torques, energies)
def check_record_size(model, space, t_final, dt, record_every, integrator, runs=1):
    """Refuse a run whose record would not fit in the available memory (before allocating it)."""
    samples = math.floor(t_final / (dt * record_every) + 1e-9) + 2
    per_sample = 8 * (1 + space.n + 3 * model.nv + 2)
    need = samples * per_sample * runs * (2 if integrator in FIXED_STEP else 3)  # Python lists: ~2-3× the arrays
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
    monitor.fired(i, te, monitor.g[i], ev.reset is not None)
    qa, va, _ = space.split(y1)
    monitor.g = monitor.values(te, qa, va)
    return y1


def _non_finite_message(t0, t1):
    return (f"the state became non-finite between t = {float(t0)!r} and t = {float(t1)!r}; the trajectory ends at the "
            f"last finite state (t = {float(t0)!r})")


def _run_fixed(model, space, system, events, y, t_final, dt, integrator, record_every, rtol, atol, progress):
    step = STEPPERS[integrator]
    f = system.deriv
    rec, fired = Recorder(), []
    status, message = "finished", ""
    t = 0.0
    monitor = EventMonitor(events, t, *space.split(y)[:2]) if events else None
    period = system.period
    n_sample = 0
    bar = _Progress(progress, t_final)
    rec.add(t, y)
    last_recorded_t = t
    eps = 1e-9 * dt
    while t < t_final:
        next_sample = math.inf
        if period is not None:
            if t >= n_sample * period - eps:
                q, v, _ = space.split(y)
                system.sample(t, q, v)
                n_sample = math.floor((t + eps) / period) + 1
                if rec.t[-1] == t:
                    rec.held[-1] = system.held_tau
            next_sample = n_sample * period
        k_next = math.floor(t / dt + 1e-9) + 1
        t_next = min(k_next * dt, t_final)
        if next_sample < t_next - eps:
            t_next = next_sample
        h = t_next - t
        try:
            y1, (k1, info) = step(space, f, t, y, h)
            if not math.isfinite(y1.sum()):
                raise _NonFinite()
        except _NonFinite:
            status, message = "diverged", _non_finite_message(t, t_next)
            break
        if rec.t[-1] == t and rec.derived[-1] is None:
            rec.derived[-1] = info
        if monitor is not None:
            q1, v1, _ = space.split(y1)
            g_new = monitor.values(t_next, q1, v1)

            def g_at(i, tt, t0=t, y0=y):
                ys = step(space, f, t0, y0, tt - t0)[0]
                qs, vs, _ = space.split(ys)
                return monitor.events[i].value(tt, qs, vs)
            try:
                hit = monitor.earliest(t, t_next, g_new, g_at)
                if hit is not None:
                    te, i = hit
                    ye = step(space, f, t, y, te - t)[0]
                    if not np.all(np.isfinite(ye)):
                        raise _NonFinite()
            except _NonFinite:
                status, message = "diverged", _non_finite_message(t, t_next)
                break
            if hit is not None:
                y = _fire(monitor, i, te, ye, space, system, rec, fired)
                t = last_recorded_t = te
                if monitor.events[i].terminal:
                    status, message = "terminated", f"terminal event {monitor.events[i].name!r} at t = {float(te)!r}"
                    break
                continue
            monitor.g = g_new
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
    return build_trajectory(model, space, system, rec, fired, status, message, integrator)


def _run_adaptive(model, space, system, events, y, t_final, dt, integrator, record_every, rtol, atol,
                  progress):
    import scipy.integrate as si
    Solver = getattr(si, ADAPTIVE[integrator])
    nq, nv = space.nq, space.nv

    def fun(t, yy):
        yy = np.asarray(yy, dtype=float)
        K, _ = system.deriv(t, space.normalise(yy.copy()) if space.quaternion_starts else yy)
        if space.vector:
            return K
        out = np.empty(space.n)
        out[:nq] = space.coordinate_rate(yy[:nq], yy[nq:nq + nv])
        out[nq:] = K[nv:]
        return out

    rec, fired = Recorder(), []
    status, message = "finished", ""
    t = 0.0
    monitor = EventMonitor(events, t, *space.split(y)[:2]) if events else None
    sample_dt = dt * record_every
    k_out = 1  # next output grid index
    next_sample, n_sample = math.inf, 1
    bar = _Progress(progress, t_final)
    if system.period is not None:
        system.sample(t, *space.split(y)[:2])
        next_sample = system.period
    rec.add(t, y, held=system.held_tau)

    def emit_grid(sol, t_hi):
        nonlocal k_out
        while k_out * sample_dt <= t_hi + 1e-12 * sample_dt and k_out * sample_dt < t_final - 1e-12 * sample_dt:
            tk = k_out * sample_dt
            rec.add(tk, space.normalise(np.asarray(sol(tk), dtype=float)), held=system.held_tau)
            k_out += 1

    while t < t_final:
        t_bound = t_final if next_sample >= t_final - 1e-12 * max(1.0, t_final) else next_sample
        try:
            solver = Solver(fun, t, y, t_bound, rtol=rtol, atol=atol)
        except _NonFinite:
            status, message = "diverged", _non_finite_message(t, t)
            break
        restart = False
        while solver.status == "running":
            try:
                msg = solver.step()
            except _NonFinite:
                status, message = "diverged", _non_finite_message(t, solver.t)
                break
            if solver.status == "failed":
                traj = build_trajectory(model, space, system, rec, fired, "failed", str(msg), integrator)
                raise SimulationError(f"integrator {integrator!r}: step failed at t = {float(solver.t)!r}: {msg}", traj)
            t_old, t_new = solver.t_old, solver.t
            y_new = space.normalise(np.array(solver.y, dtype=float))
            if not np.all(np.isfinite(y_new)):
                status, message = "diverged", _non_finite_message(t_old, t_new)
                break
            sol = solver.dense_output()
            if monitor is not None:
                g_new = monitor.values(t_new, *space.split(y_new)[:2])

                def g_at(i, tt, sol=sol):
                    ys = space.normalise(np.asarray(sol(tt), dtype=float))
                    qs, vs, _ = space.split(ys)
                    return monitor.events[i].value(tt, qs, vs)
                hit = monitor.earliest(t_old, t_new, g_new, g_at)
                if hit is not None:
                    te, i = hit
                    emit_grid(sol, te)
                    ye = space.normalise(np.asarray(sol(te), dtype=float))
                    y = _fire(monitor, i, te, ye, space, system, rec, fired)
                    t = te
                    if monitor.events[i].terminal:
                        status, message = "terminated", f"terminal event {monitor.events[i].name!r} at t = {float(te)!r}"
                    restart = True
                    break
                monitor.g = g_new
            emit_grid(sol, t_new)
            t, y = t_new, y_new
            bar.update(t)
        if status != "finished":
            break
        if restart:
            continue
        if t >= t_final:
            break
        if system.period is not None and t >= next_sample - 1e-12:
            system.sample(t, *space.split(y)[:2])
            n_sample += 1
            next_sample = n_sample * system.period
    bar.close()
    if status in ("finished", "terminated") and (not rec.t or rec.t[-1] != t):
        rec.add(t, y, held=system.held_tau)
    if status == "diverged" and rec.t[-1] != t:
        rec.add(t, y, held=system.held_tau)
    return build_trajectory(model, space, system, rec, fired, status, message, integrator)
