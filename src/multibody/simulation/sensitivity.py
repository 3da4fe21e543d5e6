"""State-transition matrices of a run (``mb.simulate(..., sensitivities=True)``): variational
equations along the flow and the saltation matrix at every event.

**Tangent coordinates.**  A state is y = [q, v, z]; its perturbations are tangent vectors
δx = [η, δv, δz] (length n = 2·nv + nz) with the configuration moved by ``mb.integrate``:
q ⊕ η (body-frame, the tangent space of ``mb.aba_derivatives``).  The run returns
Φ(t) = ∂x(t)/∂x(0) in these coordinates (``traj.stm``, shape (T, n, n)) and ∂x(t)/∂τ
(``traj.dx_dtau``, (T, n, nv)): the derivative with respect to a constant joint torque added to
the controller's output over the whole run (for a constant-torque controller, the derivative with
respect to that constant; the run itself is the one with nothing added).  The two arrays are
attributes of the returned Trajectory only: slices (``traj[a:b]``) and saved files do not carry them.

**Along the flow** (Hairer, Nørsett & Wanner, *Solving ODEs I*, §I.14): Z = [Φ | ∂x/∂τ] obeys
Ż = A(t) Z + [0 | B(t)] with A = ∂f/∂x, B = ∂f/∂τ = [0; ∂q̈/∂τ].  On a joint group (spherical:
SO(3), free: SE(3), planar: SE(2)) the kinematic rows are η̇ = δv − ad_v η (the derivative of
q(t) ⊕ η(t) moving with body velocity v + δv); the dynamic rows ∂q̈/∂x come from
``mb.aba_derivatives`` (analytic, Carpentier & Mansard 2018) plus the analytic parts of damping
and smoothed friction and the controller's ∂τ/∂x (five-point differences of the controller).  Runs
the analytic path does not cover (constraints, contact, gravity compensation, tendon springs, soft or resting
stops, force callables) difference the whole right-hand side with the five-point stencil
(truncation h⁴ and round-off ε/h both near 1e-12 at h = 1e-3).  A sampled (zero-order-hold)
controller's held τ is a function of the state at its sample time: its sensitivity
Ψ = ∂τ/∂x · Z(t_s) is updated there and drives Ż with B Ψ.

Z is integrated with the *same* integrator and steps as the state: for fixed steps the Butcher
tableau with A at the same stage states (for vector joints Φ is then exactly the derivative of the
computed step map, Hairer et al. "internal differentiation"; on a group it is the derivative of the
flow to the method's order — first order for ``euler`` and ``semi_implicit``); adaptive runs
integrate the augmented system [y, Z] under one error control.  Fixed-step runs go through the one
fixed-step loop, ``csrc/sim/rollout.c`` with ``core._run_fixed``'s event machinery around it
(:class:`SensitivityFlow`): vec Z rides as the compiled loop's extra states, its rates Ż = A Z + …
from a call back at every stage (one ``aba_derivatives`` call; the state's ABA stays in C).  A
sampled controller's runs and the step after an event take one compiled step at a time; under
``semi_implicit`` the loop moves Z's η rows with the new δv as it moves q with the new v.  The
Python steppers of [y, Z] the loop follows are the tests' reference (``tests/reference_steppers.py``).
A run with sensitivities is still slower than a plain one (the double pendulum's 1 s at 1 ms RK4:
about 0.05 s against 0.0007 s).

**At an event** with guard g(t, x) and reset x⁺ = R(t, x⁻), crossing at t_e(x₀)
(Aizerman & Gantmacher 1958; Hiskens & Pai, IEEE TCAS-I 47(2), 2000, eq. 16):

    Φ(t_e⁺) = S Φ(t_e⁻),   S = R_x + (f⁺ − R_x f⁻ − R_t) ∇gᵀ / (∇g · f⁻ + ∂g/∂t)

with f⁻, f⁺ the tangent derivatives before and after, R_x, R_t the reset's Jacobians (five-point
differences of the reset — for the TMT paper's impact map eq. (9) an algebraic, smooth function of
(q, q̇) away from degenerate contacts) and ∇g the guard's gradient (differences).  At a *terminal*
event the run stops at the crossing, so the last sample is the state at t_e(x₀) itself: f⁺ = 0.
Without a reset and not terminal, S = I.  A grazing crossing (∇g · f⁻ + ∂g/∂t ≈ 0) has no
saltation matrix: a ``ValueError`` says so.

Fixed steps locate t_e on the step's own polynomial and restart the grid there.  The step that ends
at the event uses its own rate ∂y/∂t_e (five-point differences in time) for f⁻, and the step that
starts there adds ∂y/∂t_a · ∂t_e/∂x₀ in place of S's f⁺ term, so across events too Φ at the grid
samples is the derivative of the computed flow (the two samples at t_e hold Φ(t_e⁻) and S Φ(t_e⁻)).

Example — the double pendulum's Φ after 1 s, and the OpenDE report's colliding pendulum's jump
of Φ at the wall (appendix D.5, bounce 1.0):

>>> import numpy as np, multibody as mb
>>> model = mb.models.double_pendulum()
>>> traj = mb.simulate(model, [0.7, -0.4], [0.1, 0.3], 1.0, dt=1e-2, sensitivities=True)
>>> traj.stm.shape, traj.dx_dtau.shape
((101, 4, 4), (101, 4, 2))
>>> wall = mb.joint_wall(model, "th1", -np.pi / 2, side="lower", restitution=1.0)
>>> traj = mb.simulate(model, [0.0, 0.0], [-3.0, 0.0], 1.0, events=wall, sensitivities=True, limits="off")
>>> k = int(np.flatnonzero(traj.t == traj.events[0].t)[0])      # samples k, k + 1: before and after
>>> bool(np.abs(traj.stm[k + 1] - traj.stm[k]).max() > 1.0)
True
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core import ResultOverflowError
from ..dynamics.derivatives import aba_derivatives
from ..errors import SimulationError
from ..model.configuration import difference
from ..model.joints import JointType
from . import rollout
from .adaptive import adaptive_loop
from .rollout import ADAPTIVE, StateSpace
from .limits import smoothed_friction
from .system import _NonFinite
from .trajectory import EventRecord, Trajectory, model_fingerprint
from .._extras import require

#: relative step of the five-point differences of right-hand sides, guards and resets
DIFF_STEP = 1e-3


def five_point(fn, n, steps):
    """∂fn/∂s at s = 0 (s ∈ Rⁿ): column k is (f(−2h) − 8 f(−h) + 8 f(h) − f(2h)) / 12h, h = steps[k]."""
    cols = []
    for k in range(n):
        h = steps[k]
        e = np.zeros(n)
        e[k] = h
        f = [np.asarray(fn(c * e), float) for c in (-2.0, -1.0, 1.0, 2.0)]
        cols.append((f[0] - 8.0 * f[1] + 8.0 * f[2] - f[3]) / (12.0 * h))
    return np.column_stack(cols) if cols else np.zeros((0, 0))


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def kinematic_block(space, v):
    """∂η̇/∂η = −ad_v (nv × nv): zero for 1-dof joints, −[ω]× on SO(3), −ad on SE(3) / SE(2)."""
    nv = space.nv
    K = np.zeros((nv, nv))
    for jt, _qs, vs in space.manifold:
        if jt == JointType.SPHERICAL:
            K[vs:vs + 3, vs:vs + 3] = -_skew(v[vs:vs + 3])
        elif jt == JointType.FREE:     # twist [ω, u] (body frame): ad = [[ω×, 0], [u×, ω×]]
            w, u = v[vs:vs + 3], v[vs + 3:vs + 6]
            K[vs:vs + 3, vs:vs + 3] = -_skew(w)
            K[vs + 3:vs + 6, vs:vs + 3] = -_skew(u)
            K[vs + 3:vs + 6, vs + 3:vs + 6] = -_skew(w)
        else:                          # planar [vx, vy, ω]: ad_v η = (ω J η_u − η_θ J u, 0)
            ux, uy, w = v[vs:vs + 3]
            K[vs:vs + 2, vs:vs + 2] = [[0.0, w], [-w, 0.0]]
            K[vs:vs + 2, vs + 2] = [-uy, ux]
    return K


class Linearization:
    """A(t, y) = ∂f/∂x and B(t, y) = ∂f/∂τ of a :class:`System` in tangent coordinates."""

    def __init__(self, system, space):
        self.system, self.space = system, space
        self.nv, self.nz = space.nv, space.nz
        self.n = 2 * self.nv + self.nz
        s = system
        self.smooth = (s.constraints is None and s.contact is None and s.f_ext_fn is None and s.gravcomp is None
                       and not s.tendons and not s.soft)
        self.eye = np.eye(self.nv)

    def analytic(self):
        s = self.system
        return self.smooth and not (s.limits is not None and s.limits.resting)

    def perturbed(self, y, d):
        """y ⊕ d for a tangent vector d."""
        return self.space.advance(y, d, 1.0)

    def steps(self, y):
        nq, nv = self.space.nq, self.nv
        mags = np.concatenate((np.zeros(nv), np.abs(y[nq:])))
        return DIFF_STEP * np.maximum(1.0, mags)

    def __call__(self, t, y):
        nv, n = self.nv, self.n
        s, space = self.system, self.space
        q, v, z = space.split(y)
        A = np.zeros((n, n))
        if not space.vector:
            A[:nv, :nv] = kinematic_block(space, v)
        A[:nv, nv:2 * nv] = self.eye
        if self.analytic():
            tau = s.control(t, q, v)
            tau_all = tau if s.damping is None else tau - s.damping * v
            dtau_dv = None if s.damping is None else -np.diag(s.damping)
            if s.friction is not None:
                tau_all = tau_all + smoothed_friction(s.friction, v, s.friction_velocity)
                vs = s.friction_velocity
                dfr = np.diag(s.friction / vs * (1.0 - np.tanh(v / vs) ** 2))   # f/v_s sech²
                dtau_dv = -dfr if dtau_dv is None else dtau_dv - dfr
            Dq, Dv, Minv = aba_derivatives(s.dynamics_model, q, v, tau_all, s.f_ext_const)
            A[nv:, :nv], A[nv:, nv:] = Dq, Dv if dtau_dv is None else Dv + Minv @ dtau_dv
            if s.controller is not None and s.period is None:   # a continuous controller: ∂τ/∂x
                D = self.controller_jacobian(t, y)
                A[nv:, :] += Minv @ D
            return A, Minv
        # everything else: differences of the right-hand side (controller included)

        def rates(yy, tau=None):
            qq, vv, zz = space.split(yy)
            qdd, _tau, zd, _info = s.accelerations(t, qq, vv, zz, tau=tau)
            return np.concatenate((qdd, zd))

        A[nv:, :] = five_point(lambda d: rates(self.perturbed(y, d)), n, self.steps(y))
        tau0 = np.array(s.control(t, q, v), float)
        B = five_point(lambda d: rates(y, tau0 + d), nv, DIFF_STEP * np.maximum(1.0, np.abs(tau0)))
        return A, B[:nv]

    def controller_jacobian(self, t, y):
        """∂τ/∂x (nv × n) of the controller's output, five-point differences."""
        s = self.system

        def tau(d):
            qq, vv, _ = self.space.split(self.perturbed(y, d))
            return s._call_controller(t, qq, vv)
        return five_point(tau, self.n, self.steps(y))

    def forcing(self, B, psi):
        """The ∂x/∂τ columns' and the held τ's drive: [0; B] (Ψ + [0 | I]) (n × (n + nv))."""
        nv, n = self.nv, self.n
        P = psi.copy()
        P[:, n:] += np.eye(nv)
        out = np.zeros((n, n + nv))
        out[nv:2 * nv] = B @ P
        return out


# ---- events -----------------------------------------------------------------------------------
def saltation(lin, ev, te, y_minus, terminal, f_minus=None):
    """(S, y⁺, f⁺, ∂t_e/∂x⁻): the saltation matrix of event ``ev`` at (t_e, y⁻) (module docstring),
    the reset state, the flow after it and the crossing time's gradient.  ``f_minus``: the rate at
    which the (computed) state reaches y⁻ (default: the vector field f(y⁻))."""
    space, system = lin.space, lin.system
    nq, nv = space.nq, space.nv
    model = space.model

    stops = system.limits

    def reset(tt, yy, keep=False):
        """The reset; unless ``keep``, the hard stops' resting set is restored afterwards (a stop's
        reset decides whether its joint comes to rest: only the nominal call may decide)."""
        saved = None if stops is None else dict(stops.resting)
        qq, vv, zz = space.split(yy)
        try:
            q1, v1 = ev.apply_reset(tt, qq, vv, nq, nv)
        finally:
            if saved is not None and not keep:
                stops.resting.clear()
                stops.resting.update(saved)
        return space.normalise(np.concatenate((q1, v1, zz)))

    if ev.reset is None and not terminal and f_minus is None:   # adaptive runs: S = I
        return np.eye(lin.n), reset(te, y_minus, keep=True), None, np.zeros(lin.n)

    def guard(tt, yy):
        qq, vv, _ = space.split(yy)
        return [ev.value(tt, qq, vv)]

    # what depends on the state before the event first: a reset may change the system's state (a
    # hard stop's joint coming to rest on it), so the nominal reset is the last one called
    steps = lin.steps(y_minus)
    h_t = DIFF_STEP * max(1.0, abs(te)) * 1e-1
    if f_minus is None:
        f_minus = system.deriv(te, y_minus)[0]
    grad = five_point(lambda d: guard(te, lin.perturbed(y_minus, d)), lin.n, steps)[0]
    g_t = five_point(lambda d: guard(te + d[0], y_minus), 1, [h_t])[0, 0]
    y_ref = reset(te, y_minus)

    def tangent(yy):   # y ⊖ y⁺ in tangent coordinates
        if space.vector:
            return yy - y_ref
        return np.concatenate((difference(model, y_ref[:nq], yy[:nq]), yy[nq:] - y_ref[nq:]))

    R_x = five_point(lambda d: tangent(reset(te, lin.perturbed(y_minus, d))), lin.n, steps)
    R_t = five_point(lambda d: tangent(reset(te + d[0], y_minus)), 1, [h_t])[:, 0]
    y_plus = reset(te, y_minus, keep=True)
    f_plus = np.zeros(lin.n) if terminal else system.deriv(te, y_plus)[0]
    denom = grad @ f_minus + g_t
    if abs(denom) <= 1e-12 * max(1.0, np.linalg.norm(grad) * np.linalg.norm(f_minus)):
        raise ValueError(f"sensitivities: event {ev.name!r} at t = {float(te)!r} grazes its guard "
                         f"(∇g · f = {denom:.3g}); the flow's derivative does not exist there")
    return R_x + np.outer(f_plus - R_x @ f_minus - R_t, grad) / denom, y_plus, f_plus, -grad / denom


# ---- the runs ---------------------------------------------------------------------------------
class _Record:
    """The samples of an adaptive run (``core.Recorder``'s interface): t and w = [y, vec Z]."""

    def __init__(self):
        self.t, self.y, self.derived, self.held = [], [], [], []

    def add(self, t, y, derived=None, held=None):
        self.t.append(t)
        self.y.append(np.array(y, float))
        self.derived.append(derived)
        self.held.append(held)


def _fire(lin, monitor, i, te, ye, Ze, rec, fired, system, f_minus=None):
    """Record the samples before and after event i, S Z⁻ after; returns (y⁺, S Z⁻, f⁺, ∂t_e/∂[x₀, τ])."""
    ev = monitor.events[i]
    S, y1, f_plus, dte = saltation(lin, ev, te, ye, ev.terminal, f_minus)
    Z1 = S @ Ze
    space = lin.space
    q, v, _ = space.split(ye)
    rec.add(te, np.concatenate((ye, Ze.ravel())), held=system.held_tau)
    fired.append(EventRecord(te, ev.name, q.copy(), v.copy(), y1[:space.nq].copy(),
                             y1[space.nq:space.nq + space.nv].copy()))
    rec.add(te, np.concatenate((y1, Z1.ravel())), held=system.held_tau)
    monitor.fired(i, te, monitor.g[i], ev.reset is not None, state=tuple(space.split(y1)[:2]))
    monitor.g = monitor.values(te, *space.split(y1)[:2])
    return y1, Z1, f_plus, dte @ Ze


class _Held:
    """Ψ = ∂τ_held/∂[x₀, τ] of a sampled controller (zero for continuous ones)."""

    def __init__(self, lin):
        self.lin = lin
        self.psi = np.zeros((lin.nv, lin.n + lin.nv))
        self.zero = True

    def sample(self, t, y, Z):
        s = self.lin.system
        s.sample(t, *self.lin.space.split(y)[:2])
        self.psi = self.lin.controller_jacobian(t, y) @ Z
        self.zero = False


def _drive(lin, held, A, B, Z):
    """Ż = A Z + [0; B] (Ψ + [0 | I]) (:meth:`Linearization.forcing`, without its zero rows)."""
    nv, n = lin.nv, lin.n
    with np.errstate(over="ignore", invalid="ignore"):   # a blow-up is caught (and said) by the loop
        D = A @ Z
        if not held.zero:
            D[nv:2 * nv] += B @ held.psi
        D[nv:2 * nv, n:] += B
    return D


class SensitivityFlow:
    """What ``core._run_fixed`` steps in a run with sensitivities: w = [y, vec Z], Z = [Φ | ∂x/∂τ]
    (n × (n + nv)) after the state (the hooks are ``core._FixedFlow``'s).

    In the compiled loop (``csrc/sim/rollout.c``) vec Z rides as extra states after [q, v, z]: the plan's
    contact callback (:meth:`rates`, once a stage at the stage's state) returns the contact law's
    forces and ż (zeros without contact; ``GroundContact`` is then evaluated here, not in C) and
    Ż = A Z + [0 | B] (Ψ + [0 | I]) with A, B from :class:`Linearization`.  Its stages are then the
    run's method's on Z with A at the state's stage states (RK4's, on a group CF4's; a tableau row of
    ``rollout.TABLE``, e.g. rk3, its tableau's: no code of its own here).  A row flagged
    ``NEW_VELOCITY`` (semi_implicit) moves Z's η rows with the new δv, η₁ = η + h (−ad_{v₁} η + δv₁),
    as it moves q with the new v (``Callbacks.z_columns`` tells the loop where Z is); a sampled
    controller's runs take one compiled step at a time (Ψ = ∂τ/∂x · Z is updated at each sample time,
    in :meth:`sample`), and so does the step after an event (the time-rate term below).
    ``state_step``: a stepper of the state alone (``core._compiled_step``), whose computed step the
    time rates differentiate.

    The step that ends at an event ends at t_e(x₀): its Z gains ∂y/∂t_e · ∂t_e/∂[x₀, τ] with the
    computed step's own rate ∂y/∂t_e (for f⁻ in S), and the step after it, which starts at t_e(x₀),
    gains ∂y/∂t_a · ∂t_e/∂[x₀, τ] in place of S's f⁺ term — so Φ at the grid samples is the
    derivative of the computed flow across events too."""

    plain = False

    def __init__(self, state_space, system, integrator, dt, state_step=None):
        self.state_space, self.system, self.integrator, self.dt = state_space, system, integrator, dt
        self.state_step = state_step
        self.lin = lin = Linearization(system, state_space)
        self.held = _Held(lin)
        self.shape = (lin.n, lin.n + lin.nv)
        self.space = StateSpace(state_space.model, state_space.nz + lin.n * (lin.n + lin.nv))
        self.dt_a = None      # ∂(the next step's start time)/∂[x₀, τ] when it starts at an event
        self.Zs = None
        self.no_contact = np.zeros(6 * state_space.model.nb)

    # ---- the augmented state
    def start(self, y0):
        n, nv = self.lin.n, self.lin.nv
        return np.concatenate((y0, np.hstack((np.eye(n), np.zeros((n, nv)))).ravel()))

    def split(self, w):
        ns = self.state_space.n
        return w[:ns], w[ns:].reshape(self.shape)

    @staticmethod
    def join(y, Z):
        return np.concatenate((y, Z.ravel()))

    def G(self, t, y, Z):
        """(K, info, Ż) at (t, y, Z): the state's right-hand side and Z's."""
        K, info = self.system.deriv(t, y)
        A, B = self.lin(t, y)
        return K, info, _drive(self.lin, self.held, A, B, Z)

    def deriv(self, t, w):
        y, Z = self.split(w)
        K, info, D = self.G(t, y, Z)
        return np.concatenate((K, D.ravel())), info

    def plan(self, plan):
        """The compiled loop's plan with Z along: its rates from :meth:`rates`, where Z sits from
        ``Callbacks.z_columns`` (None without a plan)."""
        if plan is None:
            return None
        return dataclasses.replace(plan, contact=rollout.Contact(call=self.rates, states=self.space.nz),
                                   callbacks=dataclasses.replace(plan.callbacks, z_columns=self.shape[1]))

    def rates(self, t, q, v, z):
        """[f_ext (the contact law's, 6·nb), ż (its states'), vec Ż] at a stage (the compiled loop's call;
        NaN where the state blew up: the loop reports that)."""
        s, nz = self.system, self.state_space.nz
        try:
            head = self.no_contact
            if s.contact is not None:
                fc, zdot, _info = s.contact_forces(q, v, z[:nz])
                head = np.concatenate((fc.reshape(-1), zdot))
            A, B = self.lin(t, np.concatenate((q, v, z[:nz])))
        except (_NonFinite, ResultOverflowError):
            return np.full(len(self.no_contact) + self.space.nz, np.nan)
        return np.concatenate((head, _drive(self.lin, self.held, A, B, z[nz:].reshape(self.shape)).ravel()))

    # ---- core._run_fixed's hooks
    def may_stretch(self):
        return self.system.period is None and self.dt_a is None

    def sample(self, t, w):
        self.held.sample(t, *self.split(w))

    def stepped(self, t, w, t1, w1):
        if self.dt_a is None:
            return w1
        D_a = _time_rates(self.state_step, self.state_space, self.system, t, self.split(w)[0], t1, self.dt_a,
                          self.dt)[0]
        y1, Z1 = self.split(w1)
        w1 = self.join(y1, Z1 + np.outer(D_a, self.dt_a))
        self.dt_a = None
        return w1

    def fire(self, monitor, i, te, we, rec, fired, t, w):
        ye, Ze = self.split(we)
        D_a, D_b = _time_rates(self.state_step, self.state_space, self.system, t, self.split(w)[0], te, self.dt_a,
                               self.dt)
        if self.dt_a is not None:
            Ze = Ze + np.outer(D_a, self.dt_a)
        y1, Z1, f_plus, dte = _fire(self.lin, monitor, i, te, ye, Ze, rec, fired, self.system, f_minus=D_b)
        self.dt_a = None
        if f_plus is not None and not monitor.events[i].terminal:   # S Z⁻ + f⁺ δt_e: the reset state's
            Z1 = Z1 + np.outer(f_plus, dte)    # own derivative; the next step adds its ∂y/∂t_a δt_e
            self.dt_a = dte
        return self.join(y1, Z1)

    def contact_info(self, q, v, z):
        return None if self.system.contact is None else self.system.contact_info(q, v, z[:self.state_space.nz])

    def finish(self, rec):
        """Z out of the record (kept for :meth:`annotate`), the state's samples left in it."""
        ns = self.state_space.n
        W = np.array(rec.y, float).reshape(len(rec.y), self.space.n)
        self.Zs = W[:, ns:].reshape(len(rec.y), *self.shape)
        rec.y = list(W[:, :ns])

    def annotate(self, traj):
        n = self.lin.n
        traj.stm, traj.dx_dtau = self.Zs[:, :, :n].copy(), self.Zs[:, :, n:].copy()
        return traj


def run_with_sensitivities(model, space, system, events, y, t_final, dt, integrator, record_every, rtol, atol):
    """``simulate``'s adaptive run with Z = [Φ | ∂x/∂τ] along (the fixed-step runs are
    ``core._run_fixed``'s with a :class:`SensitivityFlow`); a Trajectory with ``stm`` (T, n, n) and
    ``dx_dtau`` (T, n, nv)."""
    si = require("scipy.integrate", "sim", "adaptive integrators (SciPy's solve_ivp)")
    flow = SensitivityFlow(space, system, integrator, dt)
    rec, fired = _Record(), []
    aug = _AugmentedFlow(flow, rec, fired)
    status, message, t, w = adaptive_loop(aug, integrator, getattr(si, ADAPTIVE[integrator]), space, events,
                                          flow.start(y), t_final, dt * record_every, system.period, rtol, atol)
    if not rec.t or rec.t[-1] != t:
        aug.record(t, w)
    traj = _trajectory(model, space, system, flow, rec, fired, status, message, integrator)
    if status == "failed":
        raise SimulationError(message, traj)
    return traj


def _time_rates(step, space, system, t_a, y_a, t_b, dt_a, dt):
    """(∂y_b/∂t_a, ∂y_b/∂t_b) of the computed step y_b = step(t_a, y_a, t_b − t_a) (five-point
    differences in time of the compiled step ``step``; ∂/∂t_a only when the step starts at an event,
    ``dt_a`` not None)."""
    h = 1e-2 * dt     # the step is smooth in its ends (a polynomial in them for linear flows)

    def end(d):
        return np.asarray(step(space, system.deriv, t_a, y_a, t_b + d[0] - t_a)[0], float)

    def start(d):
        return np.asarray(step(space, system.deriv, t_a + d[0], y_a, t_b - t_a - d[0])[0], float)

    def tangent(fn):
        y_ref = fn(np.zeros(1))
        if space.vector:
            return five_point(lambda d: fn(d) - y_ref, 1, [h])[:, 0]
        nq = space.nq
        return five_point(lambda d: np.concatenate((difference(space.model, y_ref[:nq], fn(d)[:nq]),
                                                    fn(d)[nq:] - y_ref[nq:])), 1, [h])[:, 0]
    return (None if dt_a is None else tangent(start)), tangent(end)


class _AugmentedFlow:
    """The state with Z = [Φ | ∂x/∂τ] after it, for :func:`adaptive_loop`."""

    def __init__(self, flow, rec, fired):
        self.flow, self.lin, self.rec, self.fired = flow, flow.lin, rec, fired
        self.n = flow.state_space.n

    def rate(self, t, w):
        space, n = self.lin.space, self.n
        nq, nv = space.nq, space.nv
        yy = np.array(w[:n], dtype=float)
        if space.quaternion_starts:
            space.normalise(yy)
        K, _info, D = self.flow.G(t, yy, w[n:].reshape(self.flow.shape))
        out = np.empty(len(w))
        out[:nq] = space.coordinate_rate(yy[:nq], yy[nq:nq + nv]) if not space.vector else K[:nv]
        out[nq:n] = K[nv:]
        out[n:] = D.ravel()
        return out

    def normalise(self, w):
        w = np.array(w, dtype=float)
        self.lin.space.normalise(w[:self.n])
        return w

    def record(self, t, w):
        self.rec.add(t, w, held=self.lin.system.held_tau)

    def fire(self, monitor, i, te, w):
        y, Z = self.flow.split(np.asarray(w, float))
        y, Z = _fire(self.lin, monitor, i, te, y, Z, self.rec, self.fired, self.lin.system)[:2]
        return np.concatenate((y, Z.ravel()))

    def sample(self, t, w):
        self.flow.sample(t, np.asarray(w, float))


def _trajectory(model, space, system, flow, rec, fired, status, message, integrator):
    flow.finish(rec)
    T = np.array(rec.t, float)
    Y = np.array(rec.y).reshape(len(T), space.n)
    nq, nv = space.nq, space.nv
    qdd, tau = np.full((len(T), nv), np.nan), np.full((len(T), nv), np.nan)
    for k in range(len(T)):
        try:
            a, tu, _zd, _info = system.accelerations(T[k], Y[k, :nq], Y[k, nq:nq + nv], Y[k, nq + nv:],
                                                     tau=rec.held[k])
            qdd[k], tau[k] = a, tu
        except _NonFinite:
            pass
    traj = Trajectory(t=T, q=Y[:, :nq].copy(), qd=Y[:, nq:nq + nv].copy(), qdd=qdd, tau=tau, model=model,
                      events=fired, contact_state=Y[:, nq + nv:].copy() if space.nz else None, status=status,
                      message=message, integrator=integrator, model_fingerprint=model_fingerprint(model),
                      model_name=model.name, quaternion_starts=space.quaternion_starts)
    return flow.annotate(traj)
