"""The Python steppers: fixed steps of ``csrc/sim/rollout.c``'s methods, operation for operation, in
NumPy — the oracle the tests hold the compiled loop to.

Every step of a library run is the compiled loop's; its methods, their names and flags are its table
``mb_steppers`` (read in :mod:`multibody.simulation.rollout`: ``FIXED_STEP``, ``ORDER``, ``FLAGS``, …).
:func:`python_loop` runs ``mb.simulate`` with these steppers instead (``simulation/core.py``'s
``_run_fixed`` taking every step itself: its seam ``_compiled_step``), for the state and for the
sensitivities' [y, Z] (:func:`sensitivity_step`), so a test compares the two runs.

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

import contextlib

import numpy as np

from multibody.simulation import batch as _batch
from multibody.simulation import core as _core_loop
from multibody.simulation.rollout import TABLE, StateSpace
from multibody.simulation.sensitivity import SensitivityFlow, kinematic_block
from multibody.simulation.system import System


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


# ---- the sensitivities' [y, Z]: the steps the compiled loop takes with Z as its extra states ------------
def sensitivity_step(integrator, space, G, t, y, Z, h):
    """One fixed step of the state (the operations of :data:`STEPPERS`) and of Z, with
    G(t, y, Z) -> (K, info, Ż) (``SensitivityFlow.G``).  A tableau row steps [y, vec Z] with its
    stepper, Z as the compiled loop's extra states; ``semi_implicit`` moves η with the new δv."""
    adv = space.advance
    if getattr(STEPPERS[integrator], "tableau", None):   # a tableau row: Z as the compiled loop's z
        n = space.n
        w1, (k1, info) = STEPPERS[integrator](_Augmented(space, Z.size), _augmented(G, n, Z.shape), t,
                                              np.concatenate((y, Z.ravel())), h)
        return w1[:n], w1[n:].reshape(Z.shape), (k1[:space.nv * 2 + space.nz], info)
    k1, info, d1 = G(t, y, Z)
    if integrator == "euler":
        return adv(y, k1, h), Z + h * d1, (k1, info)
    if integrator == "semi_implicit":
        nq, nv = space.nq, space.nv
        v1 = y[nq:nq + nv] + h * k1[nv:2 * nv]
        K = k1.copy()
        K[:nv] = v1
        Z1 = Z + h * d1
        # η₁ = η + h (−ad_{v₁} η + δv₁): exact for vector joints, first order on a group
        Z1[:nv] = Z[:nv] + h * (kinematic_block(space, v1) @ Z[:nv] + Z1[nv:2 * nv])
        return adv(y, K, h), Z1, (k1, info)
    if space.vector:   # classical RK4, the stage states of step_rk4
        k2, _, d2 = G(t + 0.5 * h, y + (0.5 * h) * k1, Z + (0.5 * h) * d1)
        k3, _, d3 = G(t + 0.5 * h, y + (0.5 * h) * k2, Z + (0.5 * h) * d2)
        k4, _, d4 = G(t + h, y + h * k3, Z + h * d3)
        return (y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4), Z + (h / 6.0) * (d1 + 2.0 * d2 + 2.0 * d3 + d4),
                (k1, info))
    y2 = adv(y, k1, 0.5 * h)           # CF4 stage states; Z by classical RK4 along them
    k2, _, d2 = G(t + 0.5 * h, y2, Z + (0.5 * h) * d1)
    k3, _, d3 = G(t + 0.5 * h, adv(y, k2, 0.5 * h), Z + (0.5 * h) * d2)
    k4, _, d4 = G(t + h, adv(y2, k3 - 0.5 * k1, h), Z + h * d3)
    first = 0.25 * k1 + (k2 + k3) / 6.0 - k4 / 12.0
    second = -k1 / 12.0 + (k2 + k3) / 6.0 + 0.25 * k4
    return adv(adv(y, first, h), second, h), Z + (h / 6.0) * (d1 + 2.0 * d2 + 2.0 * d3 + d4), (k1, info)


class _Augmented(StateSpace):
    """The layout [y, vec Z] with vec Z after z: Z moves by z + h·Ż, as in the compiled loop."""

    def __init__(self, space, size):
        super().__init__(space.model, space.nz + size)


def _augmented(G, n, shape):
    """f(t, w) = ([K, vec Ż], info) of w = [y, vec Z] from G(t, y, Z)."""
    def f(t, w):
        K, info, D = G(t, w[:n], w[n:].reshape(shape))
        return np.concatenate((K, D.ravel())), info
    return f


def reference_step(model, plan, system, flow, integrator):
    """``core._compiled_step``'s stand-in in :func:`python_loop`: the Python stepper of the flow (the
    state's, or [y, Z]'s for a ``SensitivityFlow``)."""
    if isinstance(flow, SensitivityFlow):
        def step(space, f, t, w, h):
            y, Z = flow.split(w)
            y1, Z1, k = sensitivity_step(integrator, flow.state_space, flow.G, t, y, Z, h)
            return flow.join(y1, Z1), k
        return step
    return STEPPERS[integrator]


@contextlib.contextmanager
def python_loop():
    """Within it, ``mb.simulate`` steps every fixed step in Python with these steppers (what the
    library did with ``rollout.USE_COMPILED = False``): no compiled plan for a single run
    (``System.plan`` None, so ``_run_fixed`` takes every step), :func:`reference_step` for each step
    and for the sensitivities' time rates, and batches one ``simulate`` per run."""
    saved = (System.plan, _core_loop._compiled_step, _batch._compiled_passive, _batch._sampled_in_python)
    plan = System.plan

    def python_plan(self, integrator, events=(), callables=False, batch=False):
        return plan(self, integrator, events, callables, batch) if batch else None
    System.plan = python_plan
    _core_loop._compiled_step = reference_step
    _batch._compiled_passive = lambda *a, **k: False
    _batch._sampled_in_python = lambda model, controller: getattr(controller, "period", None) is not None
    try:
        yield
    finally:
        System.plan, _core_loop._compiled_step, _batch._compiled_passive, _batch._sampled_in_python = saved
