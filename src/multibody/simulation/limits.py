"""Passive joint forces the model carries: position limits, damping, Coulomb friction, gravity compensation.

``mb.simulate`` applies what the model says (URDF ``<limit>``/``<dynamics>``, MJCF ``range``,
``damping``, ``frictionloss``, ``gravcomp``) unless told otherwise:

* **Position limits** (``limits=``), on every one-variable joint with a finite ``q_lower`` or
  ``q_upper`` — but not where the two are equal: that is URDF's default 0, 0 for omitted bounds,
  and MuJoCo ignores such a limit too (:func:`multibody.model.model.enforced_position_limits`):

  - ``"hard"`` (default): a rigid unilateral stop.  Reaching a bound is an :class:`Event` whose
    reset is the impact map of the TMT paper's eq. (9) with the joint's own row as the contact
    Jacobian (:func:`multibody.impact_map`): the joint's rate is reversed and scaled by the
    restitution e (``limit_restitution``, default 0: plastic), the other joints take their share
    of the impulse, joints already resting on a stop and closed model constraints stay closed, and
    a joint sitting on its own stop that the impulse would drive into it joins the impact (plastic).
    A joint whose rebound is too slow to leave the stop within a step (|q̇⁺| ≤ |q̈| dt / 2,
    every plastic impact) comes to *rest* on it: the stop becomes a constraint q̈_j = 0 solved
    with the others (TMT eq. 6: :meth:`JointLimits.resting_accelerations`, which the compiled loop
    follows operation for operation in C), and a second event releases it when the stop's force
    λ_j (≥ 0 while it pushes) crosses zero — the complementarity condition of a unilateral
    contact.  A run starting outside its limits is refused.
  - ``"soft"``: MuJoCo's soft constraint on the limit, to round-off (a double pendulum on both its
    limits follows MuJoCo's run to 1e-12 rad).  A joint past its bound by dist = sign (q − pos) below
    the limit's ``margin`` gets a force f ≥ 0 along sign·e_j, the stops passed solved together:
    (A + R) f = a_ref − J a₀ + w, f ⊥ w ≥ 0, with A = J M⁻¹ Jᵀ, a₀ the acceleration without the
    stops, a_ref = −B J q̇ − K d dist and R = (1 − d)/d · Â; d is the impedance of dist (``solimp``:
    :func:`impedance`), B and K come from ``solref`` (:func:`soft_reference`: time constant and damping
    ratio, at least two steps as MuJoCo keeps it) and Â is (M⁻¹)_jj at the model's default
    configuration (MuJoCo's ``dof_invweight0``).  So a stop rings down with B and K whatever the
    joint's inertia, and holds a load but for its (1 − d) share (a 20th of a spring's sag at MuJoCo's
    defaults).  The parameters are the model's ``limit_softness`` (an MJCF file's ``solreflimit``,
    ``solimplimit``, ``margin``), MuJoCo's defaults ``LIMIT_SOFTNESS`` elsewhere.  Under
    ``semi_implicit`` with the model's compliant contact the stops are rows of the contacts' implicit
    solve (:meth:`~multibody.simulation.contact.SceneContact.implicit_step`), and under ``contact="hard"``
    rows of its LCP (J v⁺ + R λ = J v + h a_ref for the impulse λ = h f), as MuJoCo solves its limits
    with its contacts; otherwise each stage solves them on their own (the engine's LCP).
  - ``"off"``: the limits are ignored.

* **Damping** c ≥ 0 per velocity variable: τ −= c ⊙ q̇ (viscous, exact).
* **Coulomb friction** f ≥ 0 per velocity variable, *smoothed*: τ −= f ⊙ tanh(q̇ / v_s) with
  v_s = ``friction_velocity`` (default ``FRICTION_VELOCITY`` = 0.01 rad/s or m/s).  Below v_s
  the friction acts like a damper f / v_s, so a joint does not truly stick.  That damper is stiff
  on a light joint: an explicit step of dt follows a velocity decay rate λ = c (M⁻¹)_jj only while
  λ dt stays below about 2 (2.79 for RK4), and real robot files carry grippers and fingers with
  f = 1 on 1e-4 kg·m² or less (λ dt in the hundreds at v_s = 0.01 and dt = 1 ms: the run
  blows up).  So a fixed-step run raises v_s on such a joint to f (M⁻¹)_jj dt / ``FRICTION_STEP``
  (:func:`step_friction_velocity`, like MuJoCo keeping a soft constraint's time constant at
  least two steps; with damping on the joint the friction gets what the damping leaves): its
  friction is then as sticky as the step can hold, and exact once |q̇| ≫ v_s.  ``traj.passive``
  names the joints and their v_s.
* **Damping, stiff.**  ``semi_implicit`` takes the damping implicitly — (M + dt·D) q̈ = τ − C − D q̇,
  as MuJoCo's Euler integrator — so any damping is stable there.  Under ``euler`` and ``rk4``
  damping so stiff that the step cannot follow it is refused before the run, naming the joint and
  what would work (a smaller dt, ``semi_implicit``, an implicit adaptive integrator, less damping):
  damping is the model's physics, not a smoothing of ours to adjust.
* **A stiff PD.**  A continuous ``mb.PD`` on a fixed step is checked at the start state
  (:func:`check_pd_step`: the linearised oscillator through the stepper's exact step map): gains
  the step cannot follow are refused before the run, naming the gain, the joint and the largest dt
  that works; ``semi_implicit`` takes the PD's kd implicitly, as the damping.
* **Gravity compensation** (MuJoCo's ``gravcomp``): body i receives the force
  gravcomp_i · m_i · (−g) at its centre of mass.

The run's :class:`Trajectory` lists what was applied in ``traj.passive`` and in its ``repr``.
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np

from .. import _checks
from ..dynamics import crba
from ..dynamics.handc import hand_c
from ..dynamics.mobility import massless_note, neutral_inverse_inertia
from ..errors import SimulationWarning
from ..model.model import enforced_position_limits, velocity_names
from .events import Event
from .impact import impact_map
from .rollout import FLAGS, IMPLICIT_DAMPING, STABLE_DECAY, TABLE

#: MuJoCo's default softness of a joint limit — solref (timeconst s, dampratio), solimp (dmin, dmax, width,
#: midpoint, power) and margin: a row of ``Model.limit_softness``
LIMIT_SOFTNESS = (0.02, 1.0, 0.9, 0.95, 0.001, 0.5, 2.0, 0.0)
#: s, the soft stop's default time constant (MuJoCo's default solref timeconst)
SOFT_LIMIT_TIME = LIMIT_SOFTNESS[0]
#: rad/s or m/s, the velocity scale of the smoothed Coulomb friction f·tanh(q̇ / v_s)
FRICTION_VELOCITY = 0.01
#: the share of a fixed step's stable decay rate (λ dt) the smoothed friction's damper f / v_s may take
FRICTION_STEP = 0.5
LIMIT_MODES = ("hard", "soft", "off")


def limit_mode(model, limits=None):
    """The limits a run takes: ``limits`` ("hard", "soft" or "off") as given, or None, the model's own —
    "soft" where the model carries its limits' softness (``limit_softness``: an MJCF file's limits, MuJoCo's
    soft constraints, run as MuJoCo runs them), "hard" elsewhere (URDF, built models).

    >>> import multibody as mb
    >>> limit_mode(mb.models.planar(2)), limit_mode(mb.models.planar(2), "off")
    ('hard', 'off')
    """
    if limits is None:
        return "soft" if getattr(model, "limit_softness", None) is not None else "hard"
    _checks.one_of("limits", limits, LIMIT_MODES)
    return limits


def model_stops(model):
    """The stops (joint name, q index, v index, position, sign) of the model's finite position limits
    on its one-variable joints; computed once per Model (immutable) and cached on it."""
    stops = model.__dict__.get("_stops")
    if stops is None:
        stops = []
        lower, upper = enforced_position_limits(model)   # equal bounds: URDF's omitted ones, not a limit
        for j in range(model.nb):
            if model.nq_joint[j] != 1 or model.nv_joint[j] != 1:
                continue
            qi, vi = int(model.q_start[j]), int(model.v_start[j])
            for pos, sign in ((lower[qi], 1.0), (upper[qi], -1.0)):
                if np.isfinite(pos):
                    stops.append((model.joint_names[j], qi, vi, float(pos), sign))
        stops = model.__dict__["_stops"] = tuple(stops)
    return stops


def model_stop_table(model):
    """The stops of :func:`model_stops` as one read-only (n, 4) array of (q index, v index, position,
    sign): the compiled loop's stop rows and the start's check against them; once per Model."""
    table = model.__dict__.get("_stop_table")
    if table is None:
        table = np.ascontiguousarray([(qi, vi, pos, sign) for _n, qi, vi, pos, sign in model_stops(model)],
                                     dtype=float).reshape(-1, 4)
        table.setflags(write=False)
        model.__dict__["_stop_table"] = table
    return table


class JointLimits:
    """The model's position limits on its one-variable joints, as ``mb.simulate`` enforces them.

    ``stops``: (joint name, q index, v index, position, sign) per finite bound; sign +1 for a lower
    bound (the stop pushes the joint up), −1 for an upper one.  ``resting`` maps the v index of a
    joint resting on a stop to that stop.
    """

    def __init__(self, model, mode=None, restitution=0.0, dt=1e-3):
        mode = limit_mode(model, mode)
        self.model, self.mode, self.dt = model, mode, float(dt)
        self.restitution = _checks.number("limit_restitution", restitution, nonneg=True)
        if self.restitution > 1.0:
            raise ValueError(f"limit_restitution: expected a number in [0, 1], got {restitution!r}")
        self.stops = list(model_stops(model)) if mode != "off" else []
        self.resting: dict[int, tuple] = {}
        self.system = None
        self.impact_events = {}   # stop -> its impact Event (events())
        self.step_acceleration = None   # (t, q, v) -> q̈ of the run's fixed step at its start (released_acceleration)
        self.step_forces = None         # (t, q, v) -> that step's resting stops' λ, or None (System.stop_forces)
        self._cycle_hold = None         # (t, v indices) held from t for a step by a settle that met a cycle

    def __bool__(self):
        return bool(self.stops)

    # ---- a start outside the stops ------------------------------------------------------------
    def outside(self, q):
        """(row, stop) of each start beyond a stop, for a start q (nq,) or a batch's rows Q (N, nq): one
        array test (a Python loop over a 1000-run batch's rows took longer than its runs' setup).  A start
        beyond a bound by rounding (1e-12 of it) is on it."""
        if not self.stops:
            return []
        Q = np.atleast_2d(q)
        table = model_stop_table(self.model)   # (self.stops is the model's stops, in their order)
        qi, pos, sign = table[:, 0].astype(np.intp), table[:, 2], table[:, 3]
        beyond = sign * (Q[:, qi] - pos) < -1e-12 * np.maximum(1.0, np.abs(pos))
        return [(int(row), self.stops[k]) for row, k in np.argwhere(beyond)]

    def enter(self, q):
        """A start q (nq,) or a batch's rows Q (N, nq) with every joint that starts beyond a hard stop
        placed on it, warning once per joint (:class:`~multibody.errors.SimulationWarning`) with its
        value and its range.

        A file may start a joint outside its range (dm_control's hopper: qpos0's knee at 0 against its
        range of 5…150°), and MuJoCo accepts it: its soft limit pushes the joint in within about its
        time constant.  A rigid stop cannot push a joint that is already through it, so the stop is
        active from t = 0 by projection onto the admissible set (the closest start that satisfies every
        stop: each joint on the bound it lies beyond); a joint on its stop that moves further out then
        meets it at once (:meth:`start`: its impact), one pressed into it rests there.  Rounding
        (1e-12 of the bound) is not outside.  Returns a new array; the input is left as it was."""
        Q = np.array(q, dtype=float)
        rows = np.atleast_2d(Q)
        seen = set()
        for row, (name, qi, _vi, pos, sign) in self.outside(rows):
            if name not in seen:
                seen.add(name)
                lo, hi = (pos, next((s[3] for s in self.stops if s[1] == qi and s[4] < 0), math.inf)) if sign > 0 \
                    else (next((s[3] for s in self.stops if s[1] == qi and s[4] > 0), -math.inf), pos)
                where = "" if Q.ndim == 1 else f" (run {row})"
                warnings.warn(f"q0: joint {name!r} starts at {float(rows[row, qi])!r}{where}, outside its range "
                              f"[{lo!r}, {hi!r}]; it starts on its {'lower' if sign > 0 else 'upper'} limit {pos!r} "
                              f"(limits='soft' pushes it in as MuJoCo's soft limit does; limits='off' ignores "
                              f"the range)", SimulationWarning, stacklevel=_caller_level())
            rows[row, qi] = pos
        return Q

    # ---- soft stops --------------------------------------------------------------------------
    def soft_rows(self):
        """The soft stops as the compiled loop reads them (``csrc/sim/passive.c``): one row per stop of
        (q index, v index, position, sign, B, K, dmin, dmax, width, midpoint, power, margin, Â) —
        :func:`soft_reference`'s B, K and solimp from the model's ``limit_softness`` (MuJoCo's defaults
        where it has none) at this run's step, Â = (M⁻¹)_jj at the model's default configuration (MuJoCo's
        ``dof_invweight0``).  Once per model and step."""
        memo = self.model.__dict__.setdefault("_soft_rows", {})   # (per step: solref's refsafe reads it)
        rows = memo.get(self.dt)
        if rows is None:
            model = self.model
            softness = model.limit_softness
            inverse = np.linalg.pinv(crba(model, model.q_default)) if self.stops else None
            rows = []
            for name, qi, vi, pos, sign in self.stops:
                row = LIMIT_SOFTNESS if softness is None else tuple(float(x) for x in softness[vi])
                weight = float(inverse[vi, vi])
                if not (np.isfinite(weight) and weight > 0.0):
                    raise ValueError(f"limits='soft': joint {name!r} has no finite inverse inertia at the model's "
                                     f"default configuration ((M⁻¹)_jj = {weight!r}: a body without inertia "
                                     "there), which scales its soft limit as MuJoCo's dof_invweight0; give the joint "
                                     "an armature, or use limits='hard' or 'off'")
                rows.append((qi, vi, pos, sign, *soft_reference(row, self.dt, name), weight))
            rows = np.ascontiguousarray(rows, dtype=float).reshape(-1, 13)
            rows.setflags(write=False)
            memo[self.dt] = rows
        return rows

    def soft_terms(self, q, v):
        """(v index, sign, a_ref, R) of each soft stop its joint has passed at (q, q̇) (dist = sign (q − pos)
        less the margin < 0): MuJoCo's reference acceleration a_ref = −B sign q̇_j − K d dist and regulariser
        R = (1 − d)/d · Â, d the impedance of dist — a stop's force at the step's q̈ is f = (a_ref − sign q̈_j)/R
        (``csrc/sim/passive.c`` mb_soft_stop_terms)."""
        rows = self.soft_rows()
        dist = rows[:, 3] * (np.asarray(q)[rows[:, 0].astype(np.intp)] - rows[:, 2]) - rows[:, 11]
        active = np.flatnonzero(dist < 0.0)
        r, dist = rows[active], dist[active]
        vi, sign = r[:, 1].astype(np.intp), r[:, 3]
        imp = np.array([impedance(row[6:11], x) for row, x in zip(r, dist)]).reshape(-1)
        R = np.maximum(1e-15, (1.0 - imp) / imp * r[:, 12])
        aref = -r[:, 4] * sign * np.asarray(v, dtype=float)[vi] - r[:, 5] * imp * dist
        return vi, sign, aref, R

    def soft_forces(self, q, v, tau_all=None, f_ext=None):
        """τ of the soft stops at (q, q̇) under the joint forces ``tau_all`` (the other laws' sum; None:
        zero) and ``f_ext``, or None when no joint has passed a limit (by its margin).

        MuJoCo's soft constraints on the limits passed, solved together as its solver solves them: with
        J's rows sign·e_j, A = J M⁻¹ Jᵀ, the acceleration without the stops a₀ = M⁻¹ (τ_all − C(q, q̇, f_ext))
        and per row the impedance d of its violation, R = (1 − d)/d · Â and a_ref = −B J q̇ − K d (dist −
        margin), the forces f ≥ 0 of (A + R) f = a_ref − J a₀ + w, w ≥ 0 ⊥ f — a convex problem, solved
        here as the bounded least squares it is (SciPy's NNLS on A + R's Cholesky factor; the compiled
        loop: the engine's LCP)."""
        from scipy.linalg import cho_factor, cho_solve
        from scipy.optimize import nnls
        vi, sign, aref, R = self.soft_terms(q, v)
        if vi.size == 0:
            return None
        model = self.model
        tau_all = np.zeros(model.nv) if tau_all is None else np.asarray(tau_all, dtype=float)
        H, C = hand_c(model, q, v, f_ext)
        try:
            factor = cho_factor(H)
        except np.linalg.LinAlgError:   # M singular: the forward dynamics names the body
            return None
        a0 = cho_solve(factor, tau_all - C)
        A = sign[:, None] * sign[None, :] * cho_solve(factor, np.eye(model.nv)[:, vi])[vi] + np.diag(R)
        b = aref - sign * a0[vi]
        G = np.linalg.cholesky(A)
        f, _ = nnls(G.T, np.linalg.solve(G, b))
        tau = np.zeros(model.nv)
        np.add.at(tau, vi, sign * f)
        return tau

    # ---- hard stops: resting contact --------------------------------------------------------
    def rows(self):
        """Constraint rows (J, which stop) of the joints resting on stops."""
        nv = self.model.nv
        J = np.zeros((len(self.resting), nv))
        for k, vi in enumerate(self.resting):
            J[k, vi] = 1.0
        return J

    def resting_table(self):
        """(body, v index, sign) of each resting joint's stop: the compiled loop's ``resting`` rows."""
        body = self.__dict__.get("_body_of_v")
        if body is None:   # (the model's, once: every compiled step around an event asks for the table)
            m = self.model
            body = self._body_of_v = {int(m.v_start[j]): j for j in range(m.nb) if m.nv_joint[j] == 1}
        return np.array([(body[vi], vi, stop[4]) for vi, stop in self.resting.items()], dtype=float)

    def held_events(self):
        """The impact events of the resting joints (unarmed while the joint sits on its stop)."""
        return [self.impact_events[stop] for stop in self.resting.values()]

    def resting_accelerations(self, q, v, tau, fe, extra=None, model=None):
        """q̈ and the stop forces λ (one per resting joint, in the joint's positive sense) with the
        resting joints held (TMT eq. 6; ``csrc/sim/rollout.c``'s resting_dynamics takes the same
        operations in C); ``extra`` = (J, rhs) of model/user constraints solved with them;
        ``model``: the one forward dynamics runs on (System.dynamics_model; default the limits' own)."""
        from .constraints import solve_constrained
        H, C = hand_c(self.model if model is None else model, q, v, fe)
        J = self.rows()
        rhs = np.zeros(len(J))
        n_extra = 0
        if extra is not None:
            n_extra = extra[0].shape[0]
            J, rhs = np.vstack([extra[0], J]), np.concatenate([extra[1], rhs])
        qdd, lam = solve_constrained(H, tau - C, J, rhs)
        qdd = np.asarray(qdd, dtype=float).copy()
        for vi in self.resting:      # exactly zero: a resting joint does not creep off its stop
            qdd[vi] = 0.0
        return qdd, np.asarray(lam, dtype=float)[n_extra:]

    def wall_force(self, vi, t, q, v):
        """The stop's push on resting joint vi (≥ 0 while it pushes), at a state."""
        keys = list(self.resting)
        lam = self.system.stop_forces(t, q, v)
        return self.resting[vi][4] * lam[keys.index(vi)]

    def released_acceleration(self, vi, t, q, v):
        """q̈ of resting joint vi at a state were its stop to let go (the other resting joints held): the
        run's own dynamics with vi's row left out of the KKT system — the q̈ the fixed stepper starts its
        step with (``step_acceleration``, set by the run: ``core._compiled_step``'s, which differs from
        the Python statement ``System.accelerations`` by rounding, and a release decided on the one
        and stepped by the other crept into the stop), else ``System.accelerations`` (adaptive runs).  By TMT eq. (6) it is −S_jj λ_j with S_jj ≥ 0, so it points away from the stop exactly
        when the stop stops pushing — up to rounding, where λ_j and it are both zero."""
        saved = dict(self.resting)
        del self.resting[vi]
        try:
            if self.step_acceleration is not None:   # the fixed stepper's own q̈ (rollout.c's, bit for bit)
                return float(self.step_acceleration(t, q, v)[vi])
            return float(self.system.accelerations(t, q, v, self.system.last_z)[0][vi])
        finally:   # the same dict, in its order (the KKT rows' order is the resting table's)
            self.resting.clear()
            self.resting.update(saved)

    def release_guard(self, vi, t, q, v):
        """The release of resting joint vi, as a guard that crosses zero downwards where the joint lets go.

        Complementarity decides it on one consistent rule: the stop lets go where its multiplier stops
        pushing (sign·λ ≤ 0) **and** the joint, let go, would not move into the stop (sign·q̈ ≥ 0,
        :meth:`released_acceleration`, from the very dynamics the stepper then takes).  In exact
        arithmetic the two are one condition; where rounding splits them (a stop that holds an
        equilibrium on itself: the Panda's finger under a PD whose reference is the stop, λ = 0 to
        rounding) the joint stays at rest, q̈ = 0 exactly, rather than being let go with an
        acceleration into its stop — which crept 1.25e-22 past it and read as an impact event
        that "fires forever".  The value is the stop's push sign·λ wherever the two agree (the
        located release is the multiplier's); where they disagree, −sign·q̈ > 0 (still held)."""
        push = self.wall_force(vi, t, q, v)
        if push > 0.0:
            return push
        hold = self._cycle_hold
        if hold is not None and hold[0] <= t < hold[0] + self.dt and vi in hold[1]:   # held for a step (settle's
            return -push if push < 0.0 else 1e-300                                     # cycle)
        away = self.resting[vi][4] * self.released_acceleration(vi, t, q, v)
        return push if away >= 0.0 else -away

    # ---- events --------------------------------------------------------------------------------
    def events(self, system):
        """The hard stops as events: impact at each bound, and release from rest on it.

        The events depend only on the model's stops, so they are built once per Model
        (:class:`_StopEvents`) and lent to one run's limits at a time: their guards and resets read
        the run's state (``resting``, ``system``) through the set's ``limits``.  A set in use (a run
        inside a run's callback, another thread's run) is not lent again: a new one is built.
        :meth:`release` gives the set back when the run is over."""
        self.system = system
        lease = self.__dict__.get("_lease")
        if lease is None:
            pool = self.model.__dict__.setdefault("_stop_event_sets", _StopEventPool())
            try:
                lease = pool.pop()   # (atomic: two threads never take one set)
            except IndexError:
                lease = _StopEvents(self.model)
            lease.limits = self
            self._lease = lease
            self.impact_events = lease.impact
        return list(lease.events)

    def release(self):
        """Give the stops' events lent by :meth:`events` back to the model's pool (the run is over)."""
        lease = self.__dict__.pop("_lease", None)
        if lease is not None:
            lease.limits = None
            pool = self.model.__dict__.setdefault("_stop_event_sets", _StopEventPool())
            if len(pool) < _POOL_SIZE:
                pool.append(lease)

    def start(self, t, q, v):
        """The state the run starts from at t, (q, v): a joint on its stop moving into it meets it at once
        (the stop's impact, as at any impact: the run's guard reads 0 there and would never see it cross);
        joints at rest on a stop and pressed into it rest there (:meth:`settle`: the resting set as a whole)."""
        for stop in self.stops:
            _name, qi, vi, pos, sign = stop
            if q[qi] == pos and sign * v[vi] < 0.0 and vi not in self.resting:
                q, v = self.impact_events[stop].reset(t, np.array(q, dtype=float), np.array(v, dtype=float))
        self.settle(t, q, v)
        return q, v

    def after_reset(self, t, q, v):
        """The state after an outside reset (a user event's, at t), with the stops caught up: a joint
        resting on its stop that the reset moved off it or set moving leaves the resting set (held,
        its q̈ would stay 0 while it moves); then, as at the start (:meth:`start`), a joint on its stop
        moving into it meets it and the resting set is solved again as a whole."""
        for vi, stop in list(self.resting.items()):
            if q[stop[1]] != stop[3] or v[vi] != 0.0:
                del self.resting[vi]
        return self.start(t, q, v)

    def _impact_reset(self, stop, row, t, q, qd):
        """The reset of ``stop``'s impact event (``row``: the joint's own row, the contact Jacobian)."""
        _name, qi, vi, pos, _sign = stop
        qd_e, qd_0, joined = self._impact(t, q, qd, row)
        if self.restitution == 0.0:     # plastic exactly (the impact map leaves ~1e-16)
            qd_e[vi] = qd_0[vi] = 0.0
        q = q.copy()
        for s in joined:                # the joints it pressed: exactly on their stops
            q[s[1]] = s[3]
        on = q.copy()
        on[qi] = pos                    # a resting joint sits exactly on its stop (the guard reads 0)
        a = self.system.accelerations(t, on, qd_0, self.system.last_z)[0]   # the stop not yet holding
        slow = abs(qd_e[vi]) <= 0.5 * abs(a[vi]) * self.dt   # too slow to leave the stop within a step
        self.settle(t, on, qd_0, ([stop] if slow else []) + joined, exclude=() if slow else [stop])
        if vi in self.resting:
            qd_0[vi] = 0.0              # at rest on it
            return on, qd_0
        if qd_e[vi] == 0.0:
            # plastic: an explicit Euler step leaves q where it is, and a crossing located a
            # rounding error past the stop would read as "never leaves the guard"; on the stop
            # exactly the guard reads 0 ("held on the guard") until the joint moves off
            return on, qd_e
        return q, qd_e

    def _impact(self, t, q, qd, row):
        """q̇ after the impact on ``row`` with the limits' restitution and plastic, and the stops it
        presses: a joint sitting on its own stop (held there by an earlier plastic impact, not resting;
        on it or past it by a rounding error) whose rate the impulse would turn into that stop joins
        the impact as one more closed row (plastic: it approached at rate 0), row by row until no such
        joint is left — the impacts of several unilateral stops at one instant."""
        touching = [s for s in self.stops if s[2] not in self.resting and row[0, s[2]] == 0.0
                    and s[4] * (q[s[1]] - s[3]) <= 1e-12 * max(1.0, abs(s[3]))]
        joined = []
        while True:
            closed = self.system.closed_rows(t, q, qd)
            if joined:
                extra = np.zeros((len(joined), self.model.nv))
                extra[np.arange(len(joined)), [s[2] for s in joined]] = 1.0
                closed = extra if closed is None else np.vstack([closed, extra])
            qd_e = impact_map(self.model, q, qd, row, restitution=self.restitution, constraint_jacobian=closed,
                              redundant="drop")
            pressed = [s for s in touching if s not in joined and s[4] * qd_e[s[2]] < 0.0]
            if not pressed:
                break
            joined += pressed
        qd_0 = impact_map(self.model, q, qd, row, restitution=0.0, constraint_jacobian=closed, redundant="drop")
        # exactly still on their stops (the guard reads 0 until they move off): the joints the impact
        # pressed, and the resting ones (closed rows: the solve left them ~1e-12, which on dm_control's
        # humanoid drove a resting hip into its own stop, and that stop's impact then met its own row
        # among the closed ones: rows dependent, which redundant="drop" now solves)
        for vi in [s[2] for s in joined] + list(self.resting):
            qd_e[vi] = qd_0[vi] = 0.0
        return qd_e, qd_0, joined

    def on_stop(self, q, v):
        """The stops whose joints sit exactly on them at rate 0 at (q, v): the candidates to rest."""
        return [s for s in self.stops if q[s[1]] == s[3] and v[s[2]] == 0.0]

    #: principal pivots :meth:`settle` takes at most, per candidate (Murty's rule ends far sooner on the
    #: positive definite J H⁻¹ Jᵀ of distinct joints; the cap only stops a rounding cycle)
    SETTLE_PIVOTS = 8

    def settle(self, t, q, v, candidates=(), exclude=(), released=None):
        """Re-solve which joints rest on their stops at (q, v), all together: the resting active set.

        The candidates are the joints resting now, the ``candidates`` given, and every other joint
        sitting exactly on a stop at rate 0 (:meth:`on_stop`) but those in ``exclude``.  A unilateral
        stop j holds with a force λ_j ≥ 0 (its push, :meth:`wall_force`) or lets go with an
        acceleration a_j = sign·q̈_j ≥ 0 away from it, and λ_j a_j = 0: a linear complementarity
        problem a = A λ + a₀ over the candidates, A = S J H⁻¹ Jᵀ S positive definite for distinct
        joints, so it has one solution.  It is found by Murty's principal pivoting (K. G. Murty, "Note
        on a Bard-type scheme for solving the complementarity problem", Opsearch 11, 1974: the
        least-index rule, finite on a P-matrix) on the run's own dynamics rather than on A: a trial set
        W held, the stops in W read their forces (one KKT solve) and the others their accelerations
        (one step's q̈, as :meth:`released_acceleration`); the first candidate in the stops' order that
        breaks its condition changes sides, until none does.  Releasing or admitting one joint at a
        time by its own sign is not enough: after another joint's impact a stop can pull while the
        joint it would free is pressed into its own stop (dm_control's humanoid at t = 5.675 s), and a
        greedy release leaves such a joint driving into its stop from rest, which its impact event
        (g = 0) cannot see.

        One rule decides both sides, on a's sign for a joint alone (a_j: its q̈ let go, W's others
        held): a > 0 lets go, a < 0 holds, and a = 0 — the degenerate tie of λ = a = 0, such as a
        joint on its stop in free fall — holds too (held, its release event sees it leave; free, a
        later push into the stop starts from g = 0 and is not a crossing), but for ``released``, the
        stop whose release event fires (let go with q̈ = 0, as :meth:`release_guard` decides).  A held
        stop that pushes (λ ≥ 0) keeps its place without a's evaluation.

        The run's step is not always that linear problem: under ``semi_implicit`` the compliant contact is
        implicit in it, and which contacts its solve keeps changes with the set held, so a light finger
        pressed by the floor can have no set that satisfies every condition (alex_psyonic_hands' pinky:
        its two joints' sets visited in a cycle).  A trial set met a second time ends the pivoting with
        the set of that cycle that holds the most joints (one that holds ``released`` only where all do),
        and those joints are held for a step (``_cycle_hold``: their release guards read "held" from t to
        t + dt, so the run steps on and decides again from a later state, rather than firing the events
        of one instant in a loop: Zeno).

        Sets ``self.resting`` (the stops kept in their order, new ones after them) and returns it.
        """
        pool = list(self.resting.values())
        for s in list(candidates) + [s for s in self.on_stop(q, v) if s not in exclude]:
            if s not in pool and s[2] not in (p[2] for p in pool):
                pool.append(s)
        if not pool:
            return self.resting
        order = sorted(range(len(pool)), key=lambda k: self.stops.index(pool[k]))
        held = [s[2] in self.resting or s in candidates for s in pool]

        def lets_go(s, a):
            return a > 0.0 or (a == 0.0 and s == released)
        trail = []   # the trial sets, in order
        for _ in range(self.SETTLE_PIVOTS * len(pool) + 8):
            if tuple(held) in trail:   # a cycle: no set satisfies every condition (see above)
                cycle = trail[trail.index(tuple(held)):]
                if released in pool:   # (a set that lets the released stop go, where the cycle has one)
                    cycle = [c for c in cycle if not c[pool.index(released)]] or cycle
                best = max(cycle, key=sum)
                self.resting.clear()
                self.resting.update({s[2]: s for k, s in enumerate(pool) if best[k]})
                self._cycle_hold = (t, frozenset(self.resting))
                return self.resting
            trail.append(tuple(held))
            self.resting.clear()
            self.resting.update({s[2]: s for k, s in enumerate(pool) if held[k]})
            lam = self.system.stop_forces(t, q, v) if self.resting else None
            qdd = self._held_acceleration(t, q, v) if not all(held) else None
            keys = list(self.resting)
            flip = None
            for k in order:
                s = pool[k]
                if held[k]:
                    bad = (s[4] * lam[keys.index(s[2])] < 0.0
                           and lets_go(s, s[4] * self.released_acceleration(s[2], t, q, v)))
                else:
                    bad = not lets_go(s, s[4] * qdd[s[2]])
                if bad:
                    flip = k
                    break
            if flip is None:
                return self.resting
            held[flip] = not held[flip]
        return self.resting     # (a rounding cycle: the last trial set; the run's events go on from it)

    def _held_acceleration(self, t, q, v):
        """q̈ at a state with the joints now in ``self.resting`` held: the run's fixed step's
        (``step_acceleration``) as :meth:`released_acceleration` reads it, else ``System.accelerations``."""
        if self.step_acceleration is not None:
            return np.asarray(self.step_acceleration(t, q, v), dtype=float)
        return np.asarray(self.system.accelerations(t, q, v, self.system.last_z)[0], dtype=float)

    def _release_reset(self, stop, t, q, qd):
        """The reset of ``stop``'s release event: the joint let go from its stop exactly, at rest."""
        _name, qi, vi, pos, _sign = stop
        self.resting.pop(vi, None)
        q, qd = q.copy(), qd.copy()
        q[qi], qd[vi] = pos, 0.0     # let go from the stop exactly, at rest (its q̈ points away or is 0)
        self.settle(t, q, qd, released=stop)   # the others' forces change with it: the set as a whole
        return q, qd


#: stop-event sets a Model keeps for its runs (one per run that holds one at the same time)
_POOL_SIZE = 8


class _StopEventPool(list):
    """The stop-event sets a Model keeps (:meth:`JointLimits.events`), pickled empty: their events are
    closures, and a Model sent to another process (a process pool's batch, dask) builds its own."""

    def __reduce__(self):
        return (_StopEventPool, ())


class _StopEvents:
    """The hard stops of one Model as events (an impact and a release per stop), built once per Model
    and lent to one run's :class:`JointLimits` at a time (``limits``: :meth:`JointLimits.events`).

    Building them was most of a short run's set-up (two Events a stop, each checking its functions:
    84 on dm_control's humanoid, per ``simulate`` call).  The impact's guard is the model's alone; the
    resets and the release guard read the run's limits."""

    def __init__(self, model):
        self.limits = None
        self.impact = {}
        events = []
        for stop in model_stops(model):
            self.impact[stop] = self._impact_event(model, stop)
            events += [self.impact[stop], self._release_event(stop)]
        self.events = tuple(events)

    def _impact_event(self, model, stop):
        name, qi, vi, pos, sign = stop
        row = np.zeros((1, model.nv))
        row[0, vi] = 1.0
        side = "lower" if sign > 0 else "upper"

        def guard(t, q, qd):
            return sign * (q[qi] - pos)

        def reset(t, q, qd):
            return self.limits._impact_reset(stop, row, t, q, qd)

        return Event(guard, direction=-1, reset=reset, name=f"{name} {side} limit")

    def _release_event(self, stop):
        name, _qi, vi, _pos, sign = stop
        side = "lower" if sign > 0 else "upper"

        def guard(t, q, qd):
            limits = self.limits
            if limits.resting.get(vi) is not stop:
                return 1.0
            return limits.release_guard(vi, t, q, qd)

        def reset(t, q, qd):
            return self.limits._release_reset(stop, t, q, qd)

        return Event(guard, direction=-1, reset=reset, name=f"{name} {side} limit release")


def _caller_level():
    """The ``stacklevel`` of a warning raised by the function that calls this one that names the first
    frame outside the package: the user's call of ``simulate`` or ``simulate_batch``, however many of
    the package's frames lie between (a fixed level named ``batch.py`` for ``simulate_batch``)."""
    import sys
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def impedance(solimp, x):
    """MuJoCo's impedance d of a constraint violated by x (solimp = dmin, dmax, width, midpoint, power):
    dmin at 0, dmax from ``width`` on, between them x / width through two polynomial halves a u^p and
    1 − b (1 − u)^p meeting at the midpoint; dmin and dmax kept in [1e-4, 0.9999] as MuJoCo keeps them.

    >>> impedance((0.9, 0.95, 0.001, 0.5, 2.0), 0.0), impedance((0.9, 0.95, 0.001, 0.5, 2.0), 0.01)
    (0.9, 0.95)
    >>> round(impedance((0.9, 0.95, 0.001, 0.5, 2.0), 0.0005), 12)   # the midpoint: halfway
    0.925
    """
    lo, hi = (min(max(float(d), 1e-4), 0.9999) for d in solimp[:2])
    width, mid, power = (float(x) for x in solimp[2:5])
    if lo == hi or width <= 1e-15:
        return 0.5 * (lo + hi)
    u = abs(x) / width
    if u >= 1.0:
        return hi
    if u <= 0.0:
        return lo
    y = u
    if power == 2.0:   # (MuJoCo's default: squares, as passive.c takes them)
        y = u * u / mid if u <= mid else 1.0 - (1.0 - u) * (1.0 - u) / (1.0 - mid)
    elif power != 1.0:
        y = u ** power / mid ** (power - 1.0) if u <= mid else 1.0 - (1.0 - u) ** power / (1.0 - mid) ** (power - 1.0)
    return lo + y * (hi - lo)


def soft_reference(softness, dt=None, name="joint"):
    """(B, K, dmin, dmax, width, midpoint, power, margin) of a limit of ``softness`` (a row of
    ``Model.limit_softness``: solref, solimp, margin) as MuJoCo makes them: solref (timeconst, dampratio)
    > 0 gives B = 2 / (dmax T), K = 1 / (dmax² T² ζ²) with T at least two steps of ``dt`` (MuJoCo's
    refsafe), solref ≤ 0 is (−stiffness, −damping): K = −solref₀ / dmax², B = −solref₁ / dmax.

    >>> [round(x, 6) for x in soft_reference(LIMIT_SOFTNESS, 1e-3)[:2]]
    [105.263158, 2770.083102]
    """
    timeconst, dampratio, dmin, dmax, width, mid, power, margin = (float(x) for x in softness)
    if not (0.0 <= dmin <= 1.0 and 0.0 <= dmax <= 1.0 and width >= 0.0 and 0.0 <= mid <= 1.0 and power >= 1.0):
        raise ValueError(f"limit_softness: joint {name!r} has solimp {(dmin, dmax, width, mid, power)}; expected "
                         "dmin and dmax in [0, 1], width ≥ 0, midpoint in [0, 1] and power ≥ 1")
    d = min(max(dmax, 1e-4), 0.9999)
    if timeconst > 0.0 and dampratio > 0.0:
        T = max(timeconst, 2.0 * dt) if dt else timeconst
        return (2.0 / (d * T), 1.0 / (d * d * T * T * dampratio * dampratio), dmin, dmax, width, mid, power, margin)
    if timeconst <= 0.0 and dampratio <= 0.0 and (timeconst, dampratio) != (0.0, 0.0):
        return (-dampratio / d, -timeconst / (d * d), dmin, dmax, width, mid, power, margin)
    raise ValueError(f"limit_softness: joint {name!r} has solref {(timeconst, dampratio)}; expected (timeconst, "
                     "dampratio) both > 0, or (−stiffness, −damping) both ≤ 0")


def _fastest_decay(inverse_inertia, rates):
    """(λ, k): the fastest velocity decay λ of q̈ = −M⁻¹ C q̇ for C = diag(rates) — the largest
    eigenvalue of C^½ M⁻¹ C^½ — and the variable k that leads its mode.  Coupled joints decay faster
    than any one alone (dm_control's dog: 3.8 / dt against 2.0 / dt for its stiffest joint)."""
    root = np.sqrt(np.asarray(rates, float))
    w, V = np.linalg.eigh(root[:, None] * inverse_inertia * root[None, :])
    return float(w[-1]), int(np.argmax(np.abs(V[:, -1])))


def step_friction_velocity(model, damping, friction, friction_velocity, dt, integrator):
    """Per velocity variable, the smoothing velocity v_s of the friction f·tanh(q̇ / v_s) a fixed step
    of ``dt`` with ``integrator`` stays stable with (module docstring).  A step of dt follows the
    decay q̈ = −M⁻¹ C q̇ of a diagonal damper C while λ dt < B = STABLE_DECAY[integrator], λ its
    fastest rate (:func:`_fastest_decay`).  Damping with λ dt > 0.8 B is refused (the step cannot
    follow it; ``semi_implicit`` takes damping implicitly and never refuses).  Friction's damper
    f / v_s gets what the damping leaves: v_s starts at f (M⁻¹)_jj dt / min(FRICTION_STEP,
    0.9 B − λ_damping dt) per joint (``friction_velocity`` at least) and doubles on the joints it
    raised until damping and friction together decay no faster than 0.9 B / dt.  M⁻¹ is taken at
    the model's neutral configuration (a model property: single runs and batches from any state
    agree); the margins to B cover its change with the configuration.

    >>> import dataclasses, numpy as np, multibody as mb
    >>> m = dataclasses.replace(mb.models.planar(2), friction=[0.0, 5.0])
    >>> step_friction_velocity(m, None, m.friction, 0.01, 1e-3, "rk4").round(3).tolist()
    [0.01, 0.137]
    """
    base = np.full(model.nv, float(friction_velocity))
    if (damping is None and friction is None) or model.nv == 0:
        return base
    # a function of the model and these numbers alone: kept per Model (immutable), since every run
    # asks (M⁻¹ at the neutral configuration and its eigenvalues were a tenth of a short run's set-up)
    key = (None if damping is None else np.asarray(damping, float).tobytes(),
           None if friction is None else np.asarray(friction, float).tobytes(), float(friction_velocity), float(dt),
           integrator)
    memo = model.__dict__.setdefault("_step_friction_velocity", {})
    hit = memo.get(key)
    if hit is None:
        hit = _step_friction_velocity(model, damping, friction, base, dt, integrator)
        if len(memo) >= 16:
            memo.clear()
        memo[key] = hit
    return hit.copy()


def _step_friction_velocity(model, damping, friction, base, dt, integrator):
    """:func:`step_friction_velocity` computed (``base``: ``friction_velocity`` per variable)."""
    inverse_inertia = neutral_inverse_inertia(model)
    bound = STABLE_DECAY[integrator]
    explicit = damping is not None and not FLAGS[integrator] & IMPLICIT_DAMPING   # (semi_implicit's is implicit)
    c = np.asarray(damping, float) if explicit else np.zeros(model.nv)
    decay, k = _fastest_decay(inverse_inertia, c)
    if decay * dt > 0.8 * bound:
        name, mobility = velocity_names(model)[k], inverse_inertia[k, k]
        massless = massless_note(model, k)
        raise ValueError(
            f"damping: {name!r} has damping {c[k]:g} on an effective inertia of {1 / mobility:.3g} "
            f"(1/(M⁻¹)_jj at the neutral configuration{massless}): with the damped joints coupled to it, a velocity "
            f"relaxes in {1 / decay:.3g} s, faster than an explicit {integrator} step of dt = {dt:g} s can follow "
            f"(the largest eigenvalue of c M⁻¹ dt is {decay * dt:.3g}; stable below {bound:g}, and this run keeps "
            f"it below {0.8 * bound:.3g}): the run would blow up.  Pass dt ≤ {_round_down(0.8 * bound / decay):.3g}, "
            f"integrator='semi_implicit' (its damping is implicit, as MuJoCo's Euler), an implicit adaptive "
            f"integrator ('bdf' or 'radau'), or less damping (dataclasses.replace(model, damping=...))")
    if friction is None:
        return base
    f = np.asarray(friction, float)
    share = min(FRICTION_STEP, 0.9 * bound - decay * dt)
    vs = np.maximum(base, f * np.diag(inverse_inertia) * dt / share)
    for _ in range(60):     # coupled, the dampers together may decay faster than each alone
        if _fastest_decay(inverse_inertia, c + f / vs)[0] * dt <= 0.9 * bound:
            break
        vs = np.where(f > 0.0, 2.0 * vs, vs)
    return vs


def _round_down(x, digits=3):
    """x rounded down to ``digits`` significant digits (a step to print that still meets the bound)."""
    scale = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return math.floor(x / scale) * scale


def smoothed_friction(friction, v, velocity_scale):
    """τ of the smoothed Coulomb friction: −f ⊙ tanh(q̇ / v_s)."""
    return -friction * np.tanh(v / velocity_scale)


def spring_rows(model):
    """The joint springs' rows (q index, v index, stiffness, springref) of the variables with a
    stiffness (model.stiffness; one-to-one joints only, so each variable has its q); (0, 4) if none."""
    rows = model.__dict__.get("_spring_rows")   # computed once per Model (immutable): a run reads it per event
    if rows is None:
        k = np.asarray(getattr(model, "stiffness", None) if getattr(model, "stiffness", None) is not None
                       else np.zeros(model.nv), dtype=float)
        rows = []
        for j in range(model.nb):
            for i in range(int(model.nv_joint[j])):
                vi = int(model.v_start[j]) + i
                if k[vi] != 0.0:
                    qi = int(model.q_start[j]) + i
                    rows.append((qi, vi, k[vi], float(model.springref[qi])))
        rows = np.array(rows, dtype=float).reshape(-1, 4)
        rows.setflags(write=False)
        model.__dict__["_spring_rows"] = rows
    return rows


def spring_forces(model, q):
    """Generalized forces (nv,) of the joint springs, τ = −k (q − q_spring) (MJCF ``stiffness``,
    ``springref``; MuJoCo's ``qfrc_spring``): the statement ``csrc/sim/passive.c``'s
    ``mb_passive_springs`` is held to.

    >>> import dataclasses, numpy as np, multibody as mb
    >>> m = dataclasses.replace(mb.models.planar(2), stiffness=np.array([2.0, 0.0]))
    >>> spring_forces(m, np.array([0.5, 1.0])).tolist()
    [-1.0, 0.0]
    """
    tau = np.zeros(model.nv)
    rows = spring_rows(model)
    if len(rows):   # one row per variable: a vectorised sum takes the loop's operations (0 + −k (q − ref))
        qi, vi = rows[:, 0].astype(np.intp), rows[:, 1].astype(np.intp)
        tau[vi] = tau[vi] + -rows[:, 2] * (np.asarray(q, dtype=float)[qi] - rows[:, 3])
    return tau


def tendon_forces(model, q, v):
    """Generalized forces (…, nv) of the model's sprung and damped fixed tendons (``model.tendons``,
    MuJoCo's tendon ``stiffness``/``damping``: :mod:`multibody.model.tendons`); zeros when none.

    A passive force like the joints' damping: add it to τ of ``rnea``/``aba`` to include it.

    >>> import numpy as np, multibody as mb
    >>> tendon_forces(mb.models.planar(2), np.zeros(2), np.zeros(2)).tolist()
    [0.0, 0.0]
    """
    out = np.zeros(np.broadcast_shapes(np.shape(q)[:-1], np.shape(v)[:-1]) + (model.nv,))
    for t in getattr(model, "tendons", ()):
        out = out + t.forces(model, q, v)
    return out


# ---- a stiff PD against the step ------------------------------------------------------------------
#: explicit Runge–Kutta tableaus (a, b) of the steppers rollout.c's table gives none for (its rows'
#: own a, b where it does: rk3); linear stability is the tableau's, also on groups (CF4, Crouch–Grossman)
_TABLEAUS = {"euler": ([[0.0]], [1.0]),
             "rk4": ([[0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 1.0, 0]], [1 / 6, 1 / 3, 1 / 3, 1 / 6])}


def _tableau(integrator):
    """The explicit Runge–Kutta tableau (a, b) of a fixed-step integrator (rollout.c's table row's
    own a, b where it gives them)."""
    if integrator in _TABLEAUS:
        a, b = _TABLEAUS[integrator]
    else:   # rollout.c's row: a (s×s, row major), b (s)
        row = next(r for r in TABLE if r[0] == integrator)
        s = int(row[2])
        a, b = np.reshape(row[5], (s, s)), row[6]
    return np.asarray(a, float), np.asarray(b, float)


def _stability_polynomial(integrator):
    """Coefficients c_k, k = 0 … s, of an explicit tableau's stability function R(z) = Σ c_k z^k:
    c_0 = 1, c_{k+1} = bᵀ a^k 1 (Hairer & Wanner II, IV.2).  On ẏ = A y one step is R(hA), whose
    eigenvalues are R(hλ) for A's eigenvalues λ (spectral mapping): A's are computed once, for
    every h."""
    a, b = _tableau(integrator)
    c, v = [1.0], np.ones(len(b))
    for _ in range(len(b)):
        c.append(float(b @ v))
        v = a @ v
    return np.array(c)


def unless_passed_before(model, key, token, check):
    """Run ``check()`` (a step's stability check, which raises when the step is refused) unless it
    passed before on this model with this ``key``: the same run again (a benchmark's repeats, a
    batch's equal starts, a loop of short runs) is not linearised again.  ``token`` is stored
    with the pass and must be the same object next time (an actuator set's identity; ``True``
    where the key holds every value).  The last 64 passes are remembered per model.

    >>> import multibody as mb
    >>> m, calls = mb.models.planar(2), []
    >>> for _ in range(3):
    ...     unless_passed_before(m, ("doc",), True, lambda: calls.append(1))
    >>> len(calls)
    1
    """
    passed = model.__dict__.get("_steps_ok")
    if passed is None:
        passed = model.__dict__["_steps_ok"] = {}
    if passed.get(key) is token:
        return
    check()
    if len(passed) >= 64:
        passed.pop(next(iter(passed)))
    passed[key] = token


def check_pd_step(model, pd, damping, q, dt, integrator):
    """Refuse a continuous ``mb.PD`` whose gains the fixed step cannot follow, before the run.

    Linearised at the start configuration q, the PD on the model is the oscillator
    ẏ = [0 I; −M⁻¹(K_p + K), −M⁻¹(K_d + D)] y (K the joints' springs, D the model's damping: a kp the
    step follows alone can fail beside a joint's spring).  An explicit Runge–Kutta step of
    dt maps it by R(dt·A), R the tableau's stability function (exact for the linear system), and
    ``semi_implicit`` by its symplectic Euler with D and K_d implicit (M̃ = M + dt (D + K_d), as
    MuJoCo's implicitfast treats an actuator's velocity gain).  When that map's spectral radius
    passes 1 the run would blow up: the error names the gain (kd where the fastest mode is a
    damper's, kp where it is a spring's), the joint that leads the mode and the largest dt that
    works, instead of a limit event firing forever or a 'singular inertia' later.

    >>> import multibody as mb
    >>> m = mb.models.planar(2)
    >>> pd = mb.PD(kp=1e6, kd=0.0).bind(m)
    >>> check_pd_step(m, pd, None, m.neutral(), 1e-3, "rk4")
    Traceback (most recent call last):
    ...
    ValueError: controller: kp = 1e+06 on 'joint2' (effective inertia 0.0729 at the start) is too stiff ...
    """
    nv = model.nv
    kp, kd = np.asarray(pd._kp, float), np.asarray(pd._kd, float)
    if nv == 0 or not (np.any(kp) or np.any(kd)):
        return
    q = np.asarray(q, float)
    d = np.zeros(nv) if damping is None else np.asarray(damping, float)
    key = ("pd", kp.tobytes(), kd.tobytes(), q.tobytes(), d.tobytes(), float(dt), integrator)
    unless_passed_before(model, key, True, lambda: check_pd_steps(model, pd, damping, q[None], dt, integrator))


def check_pd_steps(model, pd, damping, Q, dt, integrator, runs=None):
    """:func:`check_pd_step` at every start of a batch (the rows of Q), linearised together: one
    batched M⁻¹ and eigenvalue solve for all (a 1 000-run batch paid one solve per run).  The first
    start refused raises check_pd_step's ValueError, prefixed "run i: " with i from ``runs`` (the
    starts' run numbers) when given.

    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> Q = np.array([[0.0, 0.0], [0.3, -0.2]])
    >>> check_pd_steps(m, mb.PD(kp=10.0, kd=1.0).bind(m), None, Q, 1e-3, "rk4")   # both pass
    >>> check_pd_steps(m, mb.PD(kp=1e6, kd=0.0).bind(m), None, Q, 1e-3, "rk4", runs=[4, 7])
    Traceback (most recent call last):
    ...
    ValueError: run 4: controller: kp = 1e+06 on 'joint2' (effective inertia 0.0729 at the start) is too stiff ...
    """
    nv = model.nv
    kp, kd = np.asarray(pd._kp, float), np.asarray(pd._kd, float)
    if nv == 0 or not (np.any(kp) or np.any(kd)):
        return
    d = np.zeros(nv) if damping is None else np.asarray(damping, float)
    springs = joint_springs(model)   # the joints' own springs act beside kp: the step must follow the sum
    found = first_unstable_start(model, Q, np.diag(kp + springs), np.diag(kd + d), kd + d, dt, integrator)
    if found is None:
        return
    i, H, w, j, damper, lo = found
    gain = "kd" if damper else "kp"
    value = kd[j] if gain == "kd" else kp[j]
    works = f"dt ≤ {_round_down(0.8 * lo):.3g}" if lo > 0 else "no step of this integrator (an undamped spring)"
    raise ValueError(
        ("" if runs is None else f"run {int(runs[i])}: ")
        + f"controller: {gain} = {value:g} on {velocity_names(model)[j]!r} "
        + (f"with its joint spring of {springs[j]:g} " if gain == "kp" and springs[j] else "")
        + f"(effective inertia {1 / np.linalg.inv(H)[j, j]:.3g} at the start) is too stiff for a {integrator} step of "
        f"dt = {dt:g} s: the PD's fastest mode (eigenvalue {w:.4g} of [0 I; −M⁻¹(Kp+K), −M⁻¹(Kd+D)], K the joint "
        f"springs) leaves the step's stability region and the run would blow up.  Pass {works}"
        + ("" if integrator == "semi_implicit" or gain == "kp" else
           ", integrator='semi_implicit' (the PD's kd implicit, as MuJoCo's implicitfast)")
        + ", or smaller gains")


def joint_springs(model):
    """The joints' spring stiffnesses (the model's ``stiffness``, MJCF ``<joint stiffness>``), zeros where there
    are none: the PD's, the servos' and the springs' own step checks all linearise them.

    >>> import dataclasses, numpy as np, multibody as mb
    >>> joint_springs(mb.models.planar(2)).tolist(), joint_springs(dataclasses.replace(mb.models.planar(1), stiffness=np.array([5.0]))).tolist()
    ([0.0, 0.0], [5.0])
    """
    return np.zeros(model.nv) if model.stiffness is None else np.asarray(model.stiffness, float).reshape(model.nv)


def first_unstable_start(model, Q, K, C, C_implicit, dt, integrator):
    """The linearised step test the PD's, the servos' and the joint springs' checks share: None when a
    fixed step of ``dt`` follows ẏ = [0 I; −M⁻¹K, −M⁻¹C] y (:func:`oscillator_step_radii`, ``C_implicit``
    the damping semi_implicit takes implicitly) at every start (the rows of Q: one batched CRBA and
    eigenvalue solve), else (i, M at start i, the fastest eigenvalue, the velocity leading its mode,
    whether it is a damper's, the largest stable step ≤ dt) for the first start it does not.

    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(1)
    >>> first_unstable_start(m, m.neutral(), np.diag([10.0]), np.zeros((1, 1)), np.zeros(1), 1e-3, "rk4") is None
    True
    >>> round(first_unstable_start(m, m.neutral(), np.diag([1e5]), np.zeros((1, 1)), np.zeros(1), 1e-2, "rk4")[-1], 5)
    0.00516
    """
    nv = model.nv
    Q = np.reshape(np.asarray(Q, float), (-1, model.nq))
    H = np.reshape(crba(model, Q), (len(Q), nv, nv))
    A, radii = oscillator_step_radii(H, K, C, C_implicit, integrator)
    refused = np.flatnonzero(radii(dt) > 1.0 + 1e-9)
    if len(refused) == 0:
        return None
    i = int(refused[0])
    lo = largest_stable_step(oscillator_step_radii(H[i:i + 1], K, C, C_implicit, integrator)[1], dt)
    w, j, damper = fastest_mode(A[i], nv)
    return i, H[i], w, j, damper, lo


def oscillator_step_radii(H, K, C, C_implicit, integrator):
    """(A, h ↦ spectral radii) of a fixed step on the linearised ẏ = A y, A = [0 I; −H⁻¹K, −H⁻¹C],
    stacked over starts (H: (n, nv, nv); K, C: (nv, nv)): for an explicit tableau R(hλ) on A's
    eigenvalues (:func:`_stability_polynomial`, A's computed once for every h); for ``semi_implicit``
    the eigenvalues of the symplectic Euler map (MuJoCo's implicitfast: M̃ (q̇₁ − q̇₀) = h(−K q₀ − C q̇₀) with M̃ = H + h diag(C_implicit),
    so q̇₁ = (I − h M̃⁻¹C) q̇₀ − h M̃⁻¹K q₀, then q₁ = q₀ + h q̇₁; without the damping's own term the map has
    determinant 1 and passes a damped spring up to h²k/(m + hc) = 4, where the run blows up past 2 + 2m/(m + hc)).  The PD's and the
    actuators' step checks both ask it (a batch's starts in one call).

    >>> import numpy as np
    >>> A, radii = oscillator_step_radii(np.ones((1, 1, 1)), np.eye(1), np.zeros((1, 1)), np.zeros(1), "euler")
    >>> round(float(radii(0.5)[0]), 6)       # |1 + h·i| for the undamped unit oscillator's λ = ±i
    1.118034
    """
    n, nv = H.shape[0], H.shape[-1]
    H_inv = np.linalg.inv(H)
    A = np.zeros((n, 2 * nv, 2 * nv))
    A[:, :nv, nv:] = np.eye(nv)
    A[:, nv:, :nv] = -H_inv @ K
    A[:, nv:, nv:] = -H_inv @ C
    if integrator == "semi_implicit":
        def radii(h):   # the semi_implicit map, stacked over the starts
            M_inv = np.linalg.inv(H + np.diag(h * C_implicit))
            vq, vv = -h * (M_inv @ K), np.eye(nv) - h * (M_inv @ C)
            S = np.block([[np.eye(nv) + h * vq, h * vv], [vq, vv]])
            return np.abs(np.linalg.eigvals(S)).max(axis=-1)
        return A, radii
    lam = np.linalg.eigvals(A)
    c = _stability_polynomial(integrator)[::-1]
    return A, lambda h: np.abs(np.polyval(c, h * lam)).max(axis=-1)


def largest_stable_step(radius, dt):
    """The largest step ≤ dt at which ``radius(h)`` (a one-start spectral radius) is ≤ 1, by
    bisection (every stepper here is stable near h = 0)."""
    lo, hi = 0.0, dt
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if radius(mid)[0] <= 1.0 + 1e-9 else (lo, mid)
    return lo


def fastest_mode(A, nv):
    """(eigenvalue, velocity index leading it, whether a damper's) of A's fastest mode."""
    w, V = np.linalg.eig(A)
    k = int(np.argmax(np.abs(w)))
    return complex(w[k]), int(np.argmax(np.abs(V[nv:, k]))), abs(w[k].imag) < abs(w[k].real)
