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

Each stepper is ``step(f, t, y, h) -> (y₁, k₁)`` with ``f(t, y) -> (K, info)`` the tangent
derivative ``K = [v, a, ż]`` (length 2·nv + nz); ``k₁`` is f at the step's start, which the
caller keeps as the sample's accelerations.  The fixed-step loop runs in ``core/rollout.c``, which
takes these steps operation for operation; the Python steppers take the steps it hands back (while
joints rest on stops, or a run without a compiled plan) and are the tests' reference loops.
"""
from __future__ import annotations

import math

import numpy as np

from ..model.configuration import integrate
from ..model.joints import JointType, spec

FIXED_STEP = ("euler", "semi_implicit", "rk4")
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


STEPPERS = {"euler": step_euler, "semi_implicit": step_semi_implicit, "rk4": step_rk4}
