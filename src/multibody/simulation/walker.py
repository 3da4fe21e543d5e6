"""Passive walkers: stance phases, heel strike (TMT eq. 9), leg swap, the stride map and its fixed point.

A planar biped walks as a hybrid system (the TMT paper's passive biped with upper body, seed 002):

* **stance phase** — the stance foot is pinned: the joints that place it (``stance_joints``) are
  held at zero acceleration and the rest move by forward dynamics (spatial_v2 ``HD``, hybrid
  dynamics), with an optional passive controller (e.g. the paper's hip spring k_h);
* **heel strike** — when the swing foot reaches the ground ahead of the stance foot, the
  velocities jump by :func:`multibody.impact_map` (eq. 9) with the swing foot's Jacobian as the
  contact Jacobian; the trailing foot is released (no constraint row), the impact is plastic and
  without slip by default (E = 0);
* **swap** — the legs exchange roles: a model-specific relabelling ``swap(model, q, qd)``.

The **stride map** P takes the state just after a heel strike (foot at the origin) to the state
just after the next one.  :func:`find_periodic_orbit` solves P(x) = x by Newton's method and
returns the Floquet multipliers: the eigenvalues of ∂P/∂x at the fixed point (a gait is stable
when all lie inside the unit circle; one is ≈ 0 because every image lies on the heel-strike
surface).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import _checks
from ..dynamics import hybrid_dynamics
from ..kinematics import point_position, point_velocity
from ..kinematics import point_jacobian
from ..model.builder import ModelBuilder
from .core import simulate
from .events import Event
from .impact import impact_map
from .trajectory import EventRecord


class PinnedJoints:
    """Constraint object (``simulate``'s protocol): some joints held still, the rest free (``HD``).

    ``position`` is where the held coordinates are kept (for the recorded residual).
    """

    def __init__(self, model, joints, position=None):
        idx = [model.joint_index(j) for j in joints]
        for j in idx:
            if model.nv_joint[j] != 1:
                raise ValueError(f"stance_joints: joint {model.joint_names[j]!r} has {model.nv_joint[j]} dofs; "
                                 f"expected 1-dof joints")
        self.joints = idx
        self.fd = np.ones(model.nb, dtype=bool)
        self.fd[idx] = False
        self.q_index = np.array([model.q_start[j] for j in idx], dtype=int)
        self.v_index = np.array([model.v_start[j] for j in idx], dtype=int)
        self.free_v = np.setdiff1d(np.arange(model.nv), self.v_index)
        self.free_q = np.setdiff1d(np.arange(model.nq), self.q_index)
        self.position = np.zeros(len(idx)) if position is None else np.asarray(position, float)

    def accelerations(self, model, q, qd, tau, f_ext):
        qdd, tau_out = hybrid_dynamics(model, self.fd, q, qd, np.zeros(model.nv), tau, f_ext)
        return qdd, tau_out[self.v_index] - tau[self.v_index]

    def residual(self, model, q, qd):
        return q[self.q_index] - self.position, qd[self.v_index]


@dataclass
class Stride:
    """One step of a walker: times, states before/after heel strike, energies, step length."""
    duration: float
    q_minus: np.ndarray
    qd_minus: np.ndarray
    q_plus: np.ndarray
    qd_plus: np.ndarray
    energy_before_impact: float
    energy_after_impact: float
    energy_start: float
    step_length: float
    gravity_work: float
    trajectory: object = field(repr=False, default=None)

    @property
    def impact_loss(self) -> float:
        """Mechanical energy lost at heel strike (kinetic + potential + spring)."""
        return self.energy_before_impact - self.energy_after_impact


class Walker:
    """A planar biped as a hybrid system: pinned-foot stance phases, heel strike, leg swap.

    Parameters
    ----------
    model : the biped, rooted at the stance foot through ``stance_joints`` (e.g. prismatic x and y)
    swing_foot, stance_foot : ``(body, point)`` of each foot (point in body coordinates)
    swap : ``swap(model, q, qd) -> (q, qd)``: relabel after heel strike (new stance = old swing)
    controller : passive joint forces during stance (e.g. a hip spring), ``(t, q, qd) -> tau``
    potential : extra stored energy ``potential(q)`` (e.g. ½ k_h q_hip²) for the energy balance
    normal, forward : ground normal and walking direction in base coordinates
    restitution : of the heel strike, per contact row [normal, forward] (default plastic, no slip)
    min_step : heel strike counts only with the swing foot this far ahead (ignores foot scuffing)
    """

    def __init__(self, model, swing_foot, stance_foot, swap, stance_joints, *, controller=None,
                 potential=None, normal=(0.0, 1.0, 0.0), forward=(1.0, 0.0, 0.0), restitution=0.0,
                 min_step=0.05, integrator="dop853", rtol=1e-11, atol=1e-12, max_stride_time=50.0):
        self.model = model
        self.swing_body, self.swing_point = model.body_index(swing_foot[0]), np.asarray(swing_foot[1], float)
        self.stance_body, self.stance_point = model.body_index(stance_foot[0]), np.asarray(stance_foot[1], float)
        if not callable(swap):
            raise TypeError("swap: expected a callable swap(model, q, qd) -> (q, qd)")
        self.swap = swap
        self.pin = PinnedJoints(model, stance_joints)
        self.controller = controller
        self.potential = potential
        self.normal = np.asarray(normal, float) / np.linalg.norm(normal)
        self.forward = np.asarray(forward, float) / np.linalg.norm(forward)
        self.restitution = restitution
        self.min_step = float(min_step)
        self.integrator, self.rtol, self.atol = integrator, rtol, atol
        self.max_stride_time = float(max_stride_time)
        self.n_free = len(self.pin.free_q)
        self.record_every = 0.01   # time between kept samples of a stride's trajectory

    # ---- geometry and energy ---------------------------------------------------------------
    def feet(self, q):
        """World positions (swing, stance) of the two feet."""
        return (point_position(self.model, q, self.swing_body, self.swing_point),
                point_position(self.model, q, self.stance_body, self.stance_point))

    def heel_height(self, t, q, qd):
        """Guard: swing-foot height above the ground, raised by the distance still missing to
        ``min_step`` ahead (continuous; a foot scuffing while it passes the stance foot is ignored)."""
        swing, stance = self.feet(q)
        d = swing - stance
        return float(d @ self.normal + max(0.0, self.min_step - d @ self.forward))

    def energy(self, q, qd):
        """Kinetic + gravitational + stored (``potential``) energy."""
        from ..dynamics import energy
        e = energy(self.model, q, qd)
        return float(e.KE + e.PE) + (float(self.potential(q)) if self.potential is not None else 0.0)

    def contact_jacobian(self, q):
        """Rows of T_ρ: the swing foot's velocity along the ground normal and the walking direction."""
        J = point_jacobian(self.model, q, self.swing_body, self.swing_point)
        return np.stack([self.normal @ J, self.forward @ J])

    def heel_strike(self, q, qd):
        """Impact (TMT eq. 9, trailing foot released) then leg swap: the post-strike state."""
        qd_plus = impact_map(self.model, q, qd, self.contact_jacobian(q), restitution=self.restitution)
        q2, qd2 = self.swap(self.model, np.array(q, float), qd_plus)
        q2, qd2 = np.asarray(q2, float), np.asarray(qd2, float)
        qd2 = qd2.copy()
        qd2[self.pin.v_index] = 0.0   # the new stance foot is at rest (it is, to round-off)
        return q2, qd2

    # ---- section coordinates -----------------------------------------------------------------
    def state(self, x):
        """Full (q, qd) with the stance foot at the origin from section coordinates x = [q_free, qd_free]."""
        x = np.asarray(x, float)
        if x.shape != (2 * self.n_free,) or not np.all(np.isfinite(x)):
            raise ValueError(f"x: expected {2 * self.n_free} finite numbers [q_free, qd_free], got {x!r}")
        q = np.zeros(self.model.nq)
        qd = np.zeros(self.model.nv)
        q[self.pin.free_q] = x[:self.n_free]
        qd[self.pin.free_v] = x[self.n_free:]
        return q, qd

    def section(self, q, qd):
        return np.concatenate([np.asarray(q)[self.pin.free_q], np.asarray(qd)[self.pin.free_v]])

    # ---- strides -------------------------------------------------------------------------------
    def _sample_interval(self, record_every, keep):
        if record_every is None:
            return self.record_every if keep else self.max_stride_time / 20
        return _checks.number("record_every", record_every, positive=True)

    def _stance(self, q, qd, sample, sensitivities=False):
        """The stance phase from (q, qd) to the heel strike (a terminal event): a Trajectory."""
        self.pin.position = np.asarray(q, float)[self.pin.q_index].copy()
        strike = Event(self.heel_height, direction=-1, terminal=True, name="heel strike")
        traj = simulate(self.model, q, qd, self.max_stride_time, dt=sample,
                        integrator=self.integrator, rtol=self.rtol, atol=self.atol, controller=self.controller,
                        constraints=self.pin, events=[strike], sensitivities=sensitivities)
        if traj.status != "terminated":
            raise ValueError(f"walker: no heel strike within {self.max_stride_time} s from this state "
                             f"(the walker fell or stood still: {traj.status}, {traj.message})")
        return traj

    def stride(self, q, qd, keep_trajectory=False, record_every=None) -> Stride:
        """Simulate from a post-strike state to (and through) the next heel strike.

        ``record_every``: the time between the kept trajectory's samples (default
        ``Walker.record_every`` = 0.01 with ``keep_trajectory``; the heel strike's state is always
        kept; the integration accuracy is ``rtol``/``atol`` either way)."""
        q = np.asarray(q, float)
        traj = self._stance(q, qd, self._sample_interval(record_every, keep_trajectory))
        ev = traj.events[-1]
        q_minus, qd_minus = ev.q_before, ev.qd_before
        q_plus, qd_plus = self.heel_strike(q_minus, qd_minus)
        E0 = self.energy(q, qd)
        E_minus = self.energy(q_minus, qd_minus)
        # gravity work over the stride: −ΔPE of the continuous phase (the strike does not move q)
        from ..dynamics import energy as _en
        w_grav = float(_en(self.model, q, np.zeros_like(qd)).PE - _en(self.model, q_minus, np.zeros_like(qd)).PE)
        swing, stance = self.feet(q_minus)
        # after the swap, re-express the state with the stance foot at the origin
        E_plus = self.energy(q_plus, qd_plus)
        return Stride(duration=ev.t, q_minus=q_minus, qd_minus=qd_minus, q_plus=q_plus, qd_plus=qd_plus,
                      energy_before_impact=E_minus, energy_after_impact=E_plus, energy_start=E0,
                      step_length=float((swing - stance) @ self.forward), gravity_work=w_grav,
                      trajectory=traj if keep_trajectory else None)

    def stride_map(self, x) -> np.ndarray:
        """Poincaré map P: section coordinates just after a heel strike → just after the next one."""
        q, qd = self.state(x)
        s = self.stride(q, qd)
        return self.section(s.q_plus, s.qd_plus)

    def stride_jacobian(self, x):
        """(P(x), ∂P/∂x): the stride map and its Jacobian by variational equations.

        The stance phase runs with ``simulate(..., sensitivities=True)``: Φ along the flow and, at
        the terminal heel-strike event, ∂y⁻/∂y(0) = (I − f⁻ ∇gᵀ / (∇g · f⁻)) Φ(t⁻)
        (:mod:`multibody.simulation.sensitivity`).  The heel-strike map H (impact, TMT eq. 9, and
        leg swap; algebraic and smooth) contributes its Jacobian ∂H/∂y⁻ (five-point differences),
        and ∂P/∂x = S ∂H/∂y⁻ ∂y⁻/∂y(0) E with E, S the section's embedding and projection.  Exact
        to the integration tolerance.

        >>> from multibody.simulation.walker import tmt_biped
        >>> model, walker = tmt_biped(upper_body=False, k_h=0.0, gamma=0.009)
        >>> Px, J = walker.stride_jacobian([0.2003, -0.4006, -0.1998, 0.0])
        >>> J.shape
        (4, 4)
        """
        from .sensitivity import DIFF_STEP, five_point
        model = self.model
        if model.nq != model.nv:
            raise ValueError("walker: variational stride Jacobians need vector joints (nq == nv)")
        q0, qd0 = self.state(x)
        traj = self._stance(q0, qd0, self.max_stride_time, sensitivities=True)
        nq, n = model.nq, model.nq + model.nv
        y_minus = np.concatenate((traj.q[-1], traj.qd[-1]))
        dy_minus = traj.stm[-1]

        def strike(yy):
            qp, qdp = self.heel_strike(yy[:nq], yy[nq:])
            return self.section(qp, qdp)
        H = five_point(lambda d: strike(y_minus + d), n, DIFF_STEP * np.maximum(1.0, np.abs(y_minus)))
        E = np.zeros((n, 2 * self.n_free))
        E[self.pin.free_q, np.arange(self.n_free)] = 1.0
        E[nq + self.pin.free_v, self.n_free + np.arange(self.n_free)] = 1.0
        return strike(y_minus), H @ dy_minus @ E

    def walk(self, x, n_strides, keep_trajectory=False, record_every=None) -> "Walk":
        """n strides from section state x; each starts with the stance foot moved back to the origin.

        Returns a :class:`Walk`: the list of :class:`Stride` and, with ``keep_trajectory`` (or a
        ``record_every``), ``walk.trajectory``: one :class:`Trajectory` across the strides in world
        (slope) coordinates, sampled every ``record_every`` (default 0.01) — see :meth:`gait`.

        >>> from multibody.simulation.walker import tmt_biped
        >>> model, walker = tmt_biped(upper_body=False, k_h=0.0, gamma=0.009)
        >>> walk = walker.walk([0.2003, -0.4006, -0.1998, 0.0], 2, record_every=0.05)
        >>> len(walk), [ev.name for ev in walk.trajectory.events]
        (2, ['heel strike 1', 'heel strike 2'])
        """
        keep = bool(keep_trajectory) or record_every is not None
        out = Walk()
        for _ in range(_checks.integer("n_strides", n_strides, lo=0)):
            q, qd = self.state(x)
            s = self.stride(q, qd, keep, record_every)
            out.append(s)
            x = self.section(s.q_plus, s.qd_plus)
        if keep and out:
            out.trajectory = self._joined(out)
        return out

    def gait(self, x, n_strides, record_every=0.01):
        """(one :class:`Trajectory` across ``n_strides`` strides, the strides) from section state x.

        The trajectory is sampled every ``record_every`` within each stride (plus each heel strike's states
        before and after), its time runs on across strides, and the stance-foot coordinates carry
        the ground position (the strides themselves restart the stance foot at the origin): the
        walk in the slope's coordinates.  After each strike the legs swap labels, as in the TMT
        paper's figure of the state variables over 4 steps.

        Example — the simplest walking model, 2 strides sampled every 0.05 (``walk(...).trajectory`` is the same):

        >>> import numpy as np
        >>> from multibody.simulation.walker import tmt_biped
        >>> model, walker = tmt_biped(upper_body=False, k_h=0.0, gamma=0.009)
        >>> traj, strides = walker.gait([0.2003, -0.4006, -0.1998, 0.0], 2, record_every=0.05)
        >>> bool(len(traj) > 2 * strides[0].duration / 0.05), [ev.name for ev in traj.events]
        (True, ['heel strike 1', 'heel strike 2'])
        """
        walk = self.walk(x, n_strides, keep_trajectory=True, record_every=record_every)
        return walk.trajectory, list(walk)

    def _joined(self, strides):
        """One Trajectory across the strides, stance-foot coordinates carrying the ground position."""
        cols = self.pin.v_index
        t0, offset = 0.0, np.zeros(3)
        T, Q, QD, QDD, TAU, events = [], [], [], [], [], []
        for k, s in enumerate(strides):
            tr = s.trajectory
            J = point_jacobian(self.model, tr.q[0], self.stance_body, self.stance_point)[:, cols]
            shift = np.linalg.lstsq(J, offset, rcond=None)[0]   # stance-foot coordinates of the ground position
            q = tr.q.copy()
            q[:, self.pin.q_index] += shift
            T.append(tr.t + t0)
            Q.append(q)
            QD.append(tr.qd), QDD.append(tr.qdd), TAU.append(tr.tau)
            for ev in tr.events:
                qb, qa = ev.q_before.copy(), ev.q_after.copy()
                qb[self.pin.q_index] += shift
                qa[self.pin.q_index] += shift
                events.append(EventRecord(ev.t + t0, f"{ev.name} {k + 1}", qb, ev.qd_before, qa, ev.qd_after))
            swing, stance = self.feet(s.q_minus)
            offset = offset + (swing - stance)
            t0 += s.duration
        from .trajectory import Trajectory, model_fingerprint
        return Trajectory(t=np.concatenate(T), q=np.concatenate(Q), qd=np.concatenate(QD), qdd=np.concatenate(QDD),
                          tau=np.concatenate(TAU), model=self.model, events=events, status="finished",
                          integrator=self.integrator, model_fingerprint=model_fingerprint(self.model),
                          model_name=self.model.name)


class Walk(list):
    """The strides of :meth:`Walker.walk` (a list of :class:`Stride`) and, when kept,
    ``trajectory``: one :class:`Trajectory` across them in world coordinates."""
    trajectory = None


@dataclass
class PeriodicOrbit:
    """Result of :func:`find_periodic_orbit`: fixed point, Floquet multipliers, convergence record."""
    x: np.ndarray
    multipliers: np.ndarray
    jacobian: np.ndarray
    residual: float
    iterations: int
    converged: bool

    @property
    def stable(self) -> bool:
        """All multipliers strictly inside the unit circle."""
        return bool(np.all(np.abs(self.multipliers) < 1.0))


def find_periodic_orbit(stride_map, x0, *, tol=1e-10, max_iter=30, fd_step=1e-6, jacobian=None) -> PeriodicOrbit:
    """Fixed point x* = P(x*) of a stride (Poincaré) map by Newton's method, and its multipliers.

    Newton solves (∂P/∂x − I) δ = x − P(x).  ``jacobian="variational"`` (the default for a
    Walker with vector joints) integrates the variational equations with the stride and applies
    the heel strike's saltation (:meth:`Walker.stride_jacobian` with
    :mod:`multibody.simulation.sensitivity`), so the multipliers are exact to the integration
    tolerance; ``"differences"`` (the default for a callable) takes central differences of P with
    step ``fd_step`` per coordinate (good to about tolerance / fd_step).

    Parameters
    ----------
    stride_map : callable or Walker
        x -> P(x), or a :class:`Walker` (its ``stride_map``).
    x0 : array_like, shape (n,)
        The first guess.
    tol : float, optional
        Stop when |P(x) − x| < tol.
    max_iter : int, optional
        Newton steps at most.
    fd_step : float, optional
        Step of the central differences.
    jacobian : {'variational', 'differences'} or callable, optional
        How ∂P/∂x is computed, or a callable x -> ∂P/∂x.

    Returns
    -------
    PeriodicOrbit
        ``x`` (the fixed point), ``multipliers`` (eigenvalues of ∂P/∂x, the Floquet multipliers),
        ``jacobian``, ``residual``, ``iterations``, ``converged`` and ``stable``.

    Raises
    ------
    TypeError
        ``stride_map`` is neither a callable nor a Walker.
    ValueError
        The iteration does not converge in ``max_iter`` steps (the message gives the residual).

    Example
    -------
    A linear map with a known fixed point:

    >>> import numpy as np, multibody as mb
    >>> A = np.array([[0.5, 0.1], [0.0, -0.3]])
    >>> orbit = mb.find_periodic_orbit(lambda x: A @ (x - 1) + 1, [0.0, 0.0])
    >>> orbit.x.round(6).tolist(), sorted(orbit.multipliers.real.round(6).tolist())
    ([1.0, 1.0], [-0.3, 0.5])
    """
    P = stride_map.stride_map if isinstance(stride_map, Walker) else stride_map
    if not callable(P):
        raise TypeError("stride_map: expected a callable x -> P(x) or an mb Walker")
    x = np.array(x0, dtype=float)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ValueError(f"x0: expected a 1-D array of finite numbers, got {x0!r}")
    n = len(x)

    def call(xx):
        y = np.asarray(P(xx), dtype=float)
        if y.shape != (n,) or not np.all(np.isfinite(y)):
            raise ValueError(f"stride_map: returned {y!r} for x = {xx!r}; expected {n} finite numbers")
        return y

    walker = stride_map if isinstance(stride_map, Walker) else None
    if jacobian is None:
        jacobian = "variational" if walker is not None and walker.model.nq == walker.model.nv else "differences"
    _checks.one_of("jacobian", jacobian, ("variational", "differences"))
    if jacobian == "variational" and walker is None:
        raise ValueError("jacobian: 'variational' needs a Walker (its stride map's dynamics); a callable stride "
                         "map takes 'differences'")

    def jacobian_at(xx):
        if jacobian == "variational":
            return walker.stride_jacobian(xx)[1]
        J = np.empty((n, n))
        for k in range(n):
            dx = np.zeros(n)
            dx[k] = fd_step
            J[:, k] = (call(xx + dx) - call(xx - dx)) / (2 * fd_step)
        return J

    Px = call(x)
    res = float(np.max(np.abs(Px - x)))
    it = 0
    while res > tol and it < max_iter:
        J = jacobian_at(x)
        try:
            dx = np.linalg.solve(J - np.eye(n), x - Px)
        except np.linalg.LinAlgError:
            raise ValueError("find_periodic_orbit: ∂P/∂x − I is singular (a multiplier equals 1)") from None
        x = x + dx
        Px = call(x)
        res = float(np.max(np.abs(Px - x)))
        it += 1
    if res > tol:
        raise ValueError(f"find_periodic_orbit: no convergence in {max_iter} Newton steps (|P(x) − x| = {res:.3g}); "
                         f"start closer to the gait")
    J = jacobian_at(x)
    return PeriodicOrbit(x=x, multipliers=np.linalg.eigvals(J), jacobian=J, residual=res, iterations=it,
                         converged=True)


# ---- the TMT paper's passive biped with upper body -------------------------------------------------
def tmt_biped(m_u=1.0, m_b=1000.0, m_f=1.0, l_f=1.0, l_u=0.4, k_h=0.0035, g=1.0, gamma=0.004, I_0=1e-6,
              upper_body=True):
    """The TMT paper's 3-link passive biped with upper body (table 1) as a ``(Model, Walker)`` pair.

    The model has the tree of ``mb.models.biped_upper_body(...).model`` (built here, so that the
    simulation package does not depend on the catalogue).  ``upper_body=False`` builds the same
    biped without the upper body (the "simplest walking model" of Garcia et al. 1998 when
    k_h = 0).

    Coordinates ``q = [xs, ys, q1, q2, q3]``: stance-foot position (x down the slope, y along its
    normal), stance-leg angle from the normal (hip at foot + l_f·[−sin q1, cos q1]), swing leg and
    upper body relative to the stance leg.  The walker pins xs, ys during a step, applies the
    hip spring τ₂ = −k_h q2, strikes with the swing foot and swaps the legs.

    Parameters
    ----------
    m_u, m_b, m_f : float
        Upper-body, hip and foot masses (the paper's non-dimensional 1, 1000, 1), > 0.
    l_f : float, default 1.0
        Leg length, > 0.
    l_u : float, default 0.4
        Upper-body length (its point mass's distance above the hip).
    k_h : float, default 0.0035
        The hip spring's stiffness (torque per rad).
    g : float, default 1.0
        Gravity, > 0.
    gamma : float, default 0.004
        The slope (rad); this project's choice, the paper gives none.
    I_0 : float, default 1e-6
        Each point mass's small inertia, ≥ 0.
    upper_body : bool, default True
        Build the upper body (False: the two-leg walker, q = [xs, ys, q1, q2]).

    Returns
    -------
    model : Model
        The planar tree (gravity tilted by the slope).
    walker : Walker
        Its hybrid system: stance constraint, hip spring, heel-strike event, leg swap.

    Raises
    ------
    TypeError
        A parameter is not a real number, ``upper_body`` not a bool.
    ValueError
        A mass, ``l_f`` or ``g`` ≤ 0, ``I_0`` < 0, a value NaN or inf.

    Examples
    --------
    >>> from multibody.simulation.walker import tmt_biped
    >>> model, walker = tmt_biped()
    >>> [str(n) for n in model.joint_names if n != "hip_fixed"]
    ['xs', 'ys', 'q1', 'q2', 'q3']
    """
    for name, v in dict(m_u=m_u, m_b=m_b, m_f=m_f, l_f=l_f, g=g).items():
        _checks.number(name, v, positive=True)
    for name, v in dict(l_u=l_u, k_h=k_h, gamma=gamma).items():
        _checks.number(name, v)
    _checks.number("I_0", I_0, nonneg=True)
    if not isinstance(upper_body, (bool, np.bool_)):
        raise TypeError(f"upper_body: expected True or False, got {type(upper_body).__name__} {upper_body!r}")
    b = ModelBuilder("biped_upper_body" if upper_body else "simplest_walker",
                     gravity=(g * np.sin(gamma), -g * np.cos(gamma), 0.0))
    I0 = I_0 * np.eye(3)
    b.add_body("foot_x", None, "Px", mass=0.0, allow_massless=True, joint_name="xs")
    b.add_body("foot_y", "foot_x", "Py", mass=0.0, allow_massless=True, joint_name="ys")
    if upper_body:   # the paper's point masses (mb.models.biped_upper_body's tree, built here)
        b.add_body("stance_leg", "foot_y", "Rz", mass=m_f, inertia=I0, joint_name="q1", allow_massless=True)
        b.add_body("hip", "stance_leg", "fixed", mass=m_b, inertia=I0, joint_translation=[0.0, l_f, 0.0],
                   joint_name="hip_fixed", allow_massless=True)
        b.add_body("swing_leg", "hip", "Rz", mass=m_f, com=[0.0, -l_f, 0.0], inertia=I0, joint_name="q2",
                   allow_massless=True)
        b.add_body("upper_body", "hip", "Rz", mass=m_u, com=[0.0, l_u, 0.0], inertia=I0, joint_name="q3",
                   allow_massless=True)
    else:
        # stance leg: stance foot (m_f) at its origin, hip (m_b) at its far end, each with inertia I_0
        m_leg = m_f + m_b
        c = m_b * l_f / m_leg
        Ipt = m_f * c ** 2 + m_b * (l_f - c) ** 2
        b.add_body("stance_leg", "foot_y", "Rz", mass=m_leg, com=[0.0, c, 0.0],
                   inertia=np.diag([Ipt, 0.0, Ipt]) + 2 * I0, joint_name="q1")
        b.add_body("swing_leg", "stance_leg", "Rz", mass=m_f, com=[0.0, -l_f, 0.0], inertia=I0,
                   joint_translation=[0.0, l_f, 0.0], joint_name="q2")
    model = b.build()
    hip_v = 3   # velocity index of q2

    def swap(model, q, qd):
        """New stance leg = old swing leg: foot position, angles and rates relabelled."""
        foot = point_position(model, q, "swing_leg", [0.0, -l_f, 0.0])
        vfoot = point_velocity(model, q, qd, "swing_leg", [0.0, -l_f, 0.0])
        q2, qd2 = q.copy(), qd.copy()
        q2[0], q2[1] = foot[0], foot[1]
        qd2[0], qd2[1] = vfoot[0], vfoot[1]
        q2[2], q2[3] = q[2] + q[3], -q[3]
        qd2[2], qd2[3] = qd[2] + qd[3], -qd[3]
        if upper_body:   # the upper body keeps its absolute angle q1 + q3
            q2[4], qd2[4] = q[4] - q[3], qd[4] - qd[3]
        return q2, qd2

    def hip_spring(t, q, qd):
        tau = np.zeros(model.nv)
        tau[hip_v] = -k_h * q[hip_v]
        return tau

    walker = Walker(model, swing_foot=("swing_leg", [0.0, -l_f, 0.0]), stance_foot=("stance_leg", [0.0, 0.0, 0.0]),
                    swap=swap, stance_joints=["xs", "ys"], controller=hip_spring if k_h else None,
                    potential=(lambda q: 0.5 * k_h * q[hip_v] ** 2) if k_h else None)
    return model, walker
