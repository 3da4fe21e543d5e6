"""The Python steppers: fixed steps of ``rollout.c``'s methods, operation for operation, in NumPy.

The compiled loop (``csrc/sim/rollout.c``) takes every step of a run; the methods, their names and
flags are its table ``mb_steppers`` (read in :mod:`multibody.simulation.rollout`: ``FIXED_STEP``,
``ORDER``, ``FLAGS``, …).  The steppers here take the same steps in Python where the library still
needs a step the compiled loop does not take, and are the tests' reference loops
(``rollout.USE_COMPILED = False``):

* joints resting on hard stops: the step's KKT solve (``JointLimits.resting_accelerations``)
  locates a stop's release exactly as the reference loop does — the compiled loop's hybrid dynamics
  gives the same λ only to rounding, and a release whose λ crosses zero slowly moves with it;
* the sensitivities' Z where it cannot ride as the loop's extra states (``semi_implicit``: η takes
  the new δv) and the time rates of a step at an event (``sensitivity._time_rates``).

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
                     (:func:`tableau_stepper`).

A row of the table with a tableau is stepped here by :func:`tableau_stepper` from the same numbers;
the older three keep their own stage code on both sides.

>>> STEPPERS["rk3"].tableau[1], STEPPERS["rk3"].tableau[2]
((0.2549019607843137, -0.6666666666666666, 1.411764705882353), (0.0, 0.75, 0.7083333333333334))

Each stepper is ``step(space, f, t, y, h) -> (y₁, k₁)`` with ``space`` a ``rollout.StateSpace`` and
``f(t, y) -> (K, info)`` the tangent derivative ``K = [v, a, ż]`` (length 2·nv + nz); ``k₁`` is f at
the step's start, which the caller keeps as the sample's accelerations.
"""
from __future__ import annotations

from .rollout import TABLE


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
    >>> from multibody.simulation.rollout import StateSpace
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
