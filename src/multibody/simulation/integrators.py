"""Fixed-step integrators on the configuration manifold, and the configuration rate q̇(q, v).

The state is ``y = [q (nq), v (nv), z (nz)]``: joint configuration, joint velocity and extra
continuous states (e.g. ground-contact deformation).  A step moves ``q`` with ``mb.integrate``
(q ⊕ v·h, exact for a constant body velocity, so quaternions stay unit) and ``v``, ``z`` by
vector arithmetic.  For models whose joints all have one degree of freedom, q ⊕ v·h is q + v·h and
the steppers reduce to the textbook formulas.

* ``euler``          y₁ = y₀ ⊕ h·f(y₀)                                  (the report's eq. 5.15)
* ``semi_implicit``  v₁ = v₀ + h·a(y₀),  q₁ = q₀ ⊕ h·v₁                 (symplectic Euler), with the
                     model's joint damping D implicit as in MuJoCo's Euler integrator:
                     (M + dt·D) a = τ − C − D v₀ (``System.implicit_damping``), stable for
                     any damping; dt the run's step, also in a step cut short
* ``rk4``            classical Runge–Kutta; with quaternion joints the commutator-free
                     4th-order Lie-group method of Celledoni, Marthinsen & Owren (2003, "CF4"),
                     which is classical RK4 on vector spaces and keeps order 4 on SO(3)/SE(3).
* ``rk3``            Crouch & Grossman's (1993) third-order method (Hairer, Lubich & Wanner, *Geometric
                     Numerical Integration*, §IV.8.1): an explicit Runge–Kutta tableau on vector
                     spaces, its stages composed exponentials y ⊕ h a₁k₁ ⊕ h a₂k₂ ⊕ … on the joint
                     groups, where it keeps order 3.  It is the table's row with no code of its own
                     (:func:`tableau_stepper`): picked over a Störmer–Verlet because a multibody q̈
                     depends on q̇ (Coriolis, damping, PD), where the explicit velocity Verlet is neither
                     symplectic nor of second order, and because one tableau for the whole state makes the
                     sensitivities riding in the compiled loop the exact derivative of the computed step.

**One table.**  The methods are the rows of ``csrc/sim/rollout.c``'s ``mb_steppers`` (read here through
``_core.steppers()``): name, order, stages, the damping bound B of ``limits.py``, flags and, for an
explicit Runge–Kutta method, its Butcher tableau.  A row with a tableau is stepped by the compiled
loop's one tableau stepper and here by :func:`tableau_stepper` from the same numbers; adding such a
method is one row in ``rollout.c``.  The older three keep their own stage code on both sides.

>>> FIXED_STEP
('euler', 'semi_implicit', 'rk4', 'rk3')
>>> ORDER["rk3"], STEPPERS["rk3"].tableau[1], STEPPERS["rk3"].tableau[2]
(3, (0.2549019607843137, -0.6666666666666666, 1.411764705882353), (0.0, 0.75, 0.7083333333333334))

Each stepper is ``step(f, t, y, h) -> (y₁, k₁)`` with ``f(t, y) -> (K, info)`` the tangent
derivative ``K = [v, a, ż]`` (length 2·nv + nz); ``k₁`` is f at the step's start, which the
caller keeps as the sample's accelerations.  The fixed-step loop runs in ``csrc/sim/rollout.c``, which
takes these steps operation for operation; the Python steppers take the steps it hands back (while
joints rest on stops, or a run without a compiled plan) and are the tests' reference loops.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import _core
from ..model.configuration import integrate
from ..model.joints import JointType, spec

#: rollout.c's table: (name, order, stages, stable_decay, flags, a, b, c, source), row i = code i
TABLE = _core.steppers()
IMPLICIT_DAMPING, Z_IN_PYTHON, SYMPLECTIC = 1, 2, 4   # core.h's MB_STEP_* flags
FIXED_STEP = tuple(row[0] for row in TABLE)
#: the compiled loop's integrator codes
CODES = {row[0]: code for code, row in enumerate(TABLE)}
ORDER = {row[0]: row[1] for row in TABLE}
#: B: a step of h follows the decay v̇ = −λ v while λ·h < B (limits.py)
STABLE_DECAY = {row[0]: row[3] for row in TABLE}
FLAGS = {row[0]: row[4] for row in TABLE}
ADAPTIVE = {"rk45": "RK45", "dop853": "DOP853", "radau": "Radau", "lsoda": "LSODA", "rk23": "RK23",
            "bdf": "BDF"}

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
        manifold = [(JointType(int(model.jtype[i])), int(model.q_start[i]), int(model.v_start[i]))
                    for i in range(model.nb)
                    if not spec(model.jtype[i]).vector]
        self.manifold = manifold
        self.vector = not manifold
        self.quaternion_starts = tuple(qs + spec(jt).quat for jt, qs, _ in manifold if spec(jt).quat >= 0)

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


def step_euler(space, f, t, y, h):
    k1, info = f(t, y)
    return space.advance(y, k1, h), (k1, info)


def step_semi_implicit(space, f, t, y, h):
    k1, info = f(t, y)
    nq, nv = space.nq, space.nv
    v1 = y[..., nq:nq + nv] + h * k1[..., nv:2 * nv]
    K = k1.copy()
    K[..., :nv] = v1  # position update with the new velocity
    return space.advance(y, K, h), (k1, info)


def step_rk4(space, f, t, y, h):
    k1, info = f(t, y)
    if space.vector:  # classical RK4
        k2, _ = f(t + 0.5 * h, y + (0.5 * h) * k1)
        k3, _ = f(t + 0.5 * h, y + (0.5 * h) * k2)
        k4, _ = f(t + h, y + h * k3)
        return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4), (k1, info)
    # CF4 (Celledoni–Marthinsen–Owren), body-velocity (right) form: exponentials compose on the right
    adv = space.advance
    y2 = adv(y, k1, 0.5 * h)
    k2, _ = f(t + 0.5 * h, y2)
    k3, _ = f(t + 0.5 * h, adv(y, k2, 0.5 * h))
    k4, _ = f(t + h, adv(y2, k3 - 0.5 * k1, h))
    first = 0.25 * k1 + (k2 + k3) / 6.0 - k4 / 12.0
    second = -k1 / 12.0 + (k2 + k3) / 6.0 + 0.25 * k4
    return adv(adv(y, first, h), second, h), (k1, info)


def _combine(space, y, coef, ks, h):
    """y + h·Σⱼ coef[j]·k_j (zero coefficients skipped, summed left to right); on joint groups
    y ⊕ h coef₀ k₀ ⊕ h coef₁ k₁ ⊕ … — rollout.c's tableau_state, the same operations."""
    terms = [(c, k) for c, k in zip(coef, ks) if c != 0.0]
    if not terms:
        return y.copy()
    if space.vector:
        acc = terms[0][0] * terms[0][1]
        for c, k in terms[1:]:
            acc = acc + c * k
        return y + h * acc
    for c, k in terms:
        y = space.advance(y, k, c * h)
    return y


def tableau_stepper(a, b, c):
    """The stepper of an explicit Runge–Kutta tableau (a row-major, s × s): stage i at
    y + h Σⱼ a_ij k_j and t + c_i h, y₁ = y + h Σⱼ b_j k_j; on joint groups the Crouch–Grossman form
    (Hairer, Lubich & Wanner, GNI §IV.8.1), the terms composed as exponentials in order.

    >>> import numpy as np, multibody as mb
    >>> space = StateSpace(mb.models.double_pendulum())
    >>> heun = tableau_stepper((0.0, 0.0, 1.0, 0.0), (0.5, 0.5), (0.0, 1.0))
    >>> f = lambda t, y: (np.r_[y[2:], -y[:2]], None)             # two unit oscillators
    >>> y1, _ = heun(space, f, 0.0, np.array([1.0, 0.0, 0.0, 1.0]), 0.1)
    >>> y1.round(6).tolist()
    [0.995, 0.1, -0.1, 0.995]
    """
    s = len(b)
    rows = [tuple(a[i * s:i * s + i]) for i in range(s)]

    def step(space, f, t, y, h):
        k1, info = f(t, y)
        ks = [k1]
        for i in range(1, s):
            ks.append(f(t + c[i] * h, _combine(space, y, rows[i], ks, h))[0])
        return _combine(space, y, b, ks, h), (k1, info)
    step.tableau = (tuple(a), tuple(b), tuple(c))
    return step


_OWN = {"euler": step_euler, "semi_implicit": step_semi_implicit, "rk4": step_rk4}
#: the Python reference steppers, one per row of the table
STEPPERS = {row[0]: _OWN[row[0]] if row[5] is None else tableau_stepper(*row[5:8]) for row in TABLE}
