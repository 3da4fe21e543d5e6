"""The Whipple bicycle: Meijaard, Papadopoulos, Ruina and Schwab, "Linearized dynamics equations for
the balance and steer of a bicycle: a benchmark and review", Proc. R. Soc. A 463 (2007) 1955–1982.

Four rigid bodies — rear frame B with its rider, rear wheel R, front frame H (fork and handlebar),
front wheel F — and two knife-edge wheels rolling without slipping on level ground.  The model is
built from the public API alone: a :class:`~multibody.ModelBuilder` chain from the ground to the
rear contact point P (x, y: prismatic; yaw ψ, roll φ: revolute about the contact point), the rear
frame's pitch θ_B about the rear axle, the rear wheel's rotation θ_R, the steer δ about the tilted
steer axis and the front wheel's rotation θ_F — the paper's eight coordinates — and two
:class:`~multibody.model.constraints.RollingContact` constraints in ``model.constraints``: the rear
wheel's two no-slip rows (its height is held by the chain), the front wheel's height (holonomic:
it fixes θ_B) and two no-slip rows.  Seven positions, three speeds (φ̇, δ̇, θ̇_R) remain.

World axes: x forward, y left, z up (the paper's x forward, y right, z down turned by π about x);
every angle keeps the paper's sense (roll and steer positive to the right, forward speed
v = −θ̇_R r_R), so the linearised equations read as the paper's (its eq. 5.3)::

    M q̈ + v C1 q̇ + (g K0 + v² K2) q = f,      q = (φ, δ),  f = (T_φ, T_δ)

:func:`whipple_linear` computes M, C1, K0, K2 of a built model with exact derivatives
(:func:`whipple_linear` says how), :func:`whipple_eigenvalues` and :func:`whipple_speeds` the
eigenvalues over v and the weave and capsize speeds.

Example
-------
>>> import multibody as mb
>>> bike = mb.models.whipple_bicycle()
>>> bike.nq, bike.nv, [c.name for c in bike.constraints]
(8, 8, ['rolling(rear_wheel)', 'rolling(front_wheel)'])
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..dynamics.constraints import ConstraintSet, rolling_contact_terms
from ..model.builder import ModelBuilder
from ..model.constraints import RollingContact
from ..model.model import Model

__all__ = ["BicycleParameters", "BENCHMARK", "whipple_bicycle", "whipple_linear", "whipple_eigenvalues",
           "whipple_speeds", "whipple_state"]


@dataclass(frozen=True)
class BicycleParameters:
    """The benchmark bicycle's parameters (Meijaard et al. 2007, Table 1), in the paper's frame
    (x forward, y right, z down, origin at the rear contact point), SI units.

    w wheelbase, c trail, lam steer-axis tilt (rad), g gravity; r_R, m_R, (I_Rxx, I_Ryy) rear wheel;
    (x_B, z_B), m_B, I_B rear frame and rider (I_B: (I_xx, I_xz, I_yy, I_zz) about its centre of
    mass); (x_H, z_H), m_H, I_H front frame; r_F, m_F, (I_Fxx, I_Fyy) front wheel.
    """
    w: float = 1.02
    c: float = 0.08
    lam: float = np.pi / 10
    g: float = 9.81
    r_R: float = 0.3
    m_R: float = 2.0
    I_Rxx: float = 0.0603
    I_Ryy: float = 0.12
    x_B: float = 0.3
    z_B: float = -0.9
    m_B: float = 85.0
    I_B: tuple = (9.2, 2.4, 11.0, 2.8)
    x_H: float = 0.9
    z_H: float = -0.7
    m_H: float = 4.0
    I_H: tuple = (0.05892, -0.00756, 0.06, 0.00708)
    r_F: float = 0.35
    m_F: float = 3.0
    I_Fxx: float = 0.1405
    I_Fyy: float = 0.28


#: the benchmark bicycle of Meijaard et al. (2007), Table 1
BENCHMARK = BicycleParameters()

# the paper's frame (x forward, y right, z down) in ours (x forward, y left, z up): a turn by π about x
_P = np.diag([1.0, -1.0, -1.0])
#: the names of the joints in the order of the paper's coordinates, and the independent speeds
COORDINATES = ("x", "y", "yaw", "roll", "pitch", "rear_wheel", "steer", "front_wheel")
_INDEPENDENT = ("roll", "steer", "rear_wheel")


def _inertia(Ixx, Ixz, Iyy, Izz):
    return _P @ np.array([[Ixx, 0.0, Ixz], [0.0, Iyy, 0.0], [Ixz, 0.0, Izz]]) @ _P


def _check(params):
    if not isinstance(params, BicycleParameters):
        raise TypeError(f"params: expected a BicycleParameters (e.g. BENCHMARK), got {type(params).__name__}")
    for f in dataclasses.fields(params):
        v = np.asarray(getattr(params, f.name), dtype=float)
        if not np.all(np.isfinite(v)):
            raise ValueError(f"params.{f.name}: expected finite numbers, got {getattr(params, f.name)!r}")
    for name in ("w", "r_R", "r_F", "m_R", "m_B", "m_H", "m_F", "g"):
        if not getattr(params, name) > 0:
            raise ValueError(f"params.{name}: expected a positive number, got {getattr(params, name)!r}")
    return params


def whipple_bicycle(params: BicycleParameters = BENCHMARK) -> Model:
    """The Whipple bicycle of Meijaard et al. (2007) as a model with its rolling constraints.

    Parameters
    ----------
    params : BicycleParameters, optional
        The bicycle (default :data:`BENCHMARK`, the paper's Table 1).

    Returns
    -------
    Model
        Eight joints named as :data:`COORDINATES` (x, y, yaw, roll, pitch, rear_wheel, steer,
        front_wheel); bodies rear_frame, rear_wheel, front_frame, front_wheel (and four massless
        links of the contact point's chain); ``model.constraints`` the two wheels'
        :class:`~multibody.model.constraints.RollingContact` (2 + 3 rows); gravity −g along z.
        At q = 0 the bicycle stands upright on the x axis, steer straight, on both wheels.

    Raises
    ------
    TypeError
        ``params`` is not a :class:`BicycleParameters`.
    ValueError
        A parameter that is not finite, a non-positive mass, radius, wheelbase or gravity.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> bike = mb.models.whipple_bicycle()
    >>> c, cdot = mb.ConstraintSet(*bike.constraints).residual(bike, np.zeros(8), np.zeros(8))
    >>> bool(np.allclose(c, 0)), c.shape                 # upright, both wheels on the ground
    (True, (5,))
    """
    p = _check(params)
    b = ModelBuilder("whipple_bicycle", gravity=(0.0, 0.0, -p.g))
    axis_y = _P @ np.array([0.0, 1.0, 0.0])                  # the paper's y (wheel axles, pitch)
    b.add_body("contact_x", None, "prismatic", axis=[1, 0, 0], mass=0.0, allow_massless=True, joint_name="x")
    b.add_body("contact_y", "contact_x", "prismatic", axis=[0, 1, 0], mass=0.0, allow_massless=True,
               joint_name="y")
    b.add_body("heading", "contact_y", "revolute", axis=_P @ [0.0, 0.0, 1.0], mass=0.0, allow_massless=True,
               joint_name="yaw")
    b.add_body("lean", "heading", "revolute", axis=[1, 0, 0], mass=0.0, allow_massless=True, joint_name="roll")
    # the rear frame turns (pitch θ_B) about the rear axle, r_R above the contact point
    b.add_body("rear_frame", "lean", "revolute", axis=axis_y, joint_translation=[0.0, 0.0, p.r_R],
               mass=p.m_B, com=_P @ [p.x_B, 0.0, p.z_B + p.r_R], inertia=_inertia(*p.I_B), joint_name="pitch")
    b.add_body("rear_wheel", "rear_frame", "revolute", axis=axis_y, mass=p.m_R,
               inertia=np.diag([p.I_Rxx, p.I_Ryy, p.I_Rxx]), joint_name="rear_wheel")
    # the steer axis meets the ground a trail c ahead of the front contact point (w + c from P);
    # its joint frame sits there, the axis pointing down the paper's way (its z, tilted back by λ)
    steer_axis = _P @ [np.sin(p.lam), 0.0, np.cos(p.lam)]
    b.add_body("front_frame", "rear_frame", "revolute", axis=steer_axis,
               joint_translation=_P @ [p.w + p.c, 0.0, p.r_R], mass=p.m_H,
               com=_P @ [p.x_H - p.w - p.c, 0.0, p.z_H], inertia=_inertia(*p.I_H), joint_name="steer")
    b.add_body("front_wheel", "front_frame", "revolute", axis=axis_y, joint_translation=_P @ [-p.c, 0.0, -p.r_F],
               mass=p.m_F, inertia=np.diag([p.I_Fxx, p.I_Fyy, p.I_Fxx]), joint_name="front_wheel")
    model = b.build()
    rolling = (RollingContact("rear_wheel", p.r_R, axis=[0, 1, 0], holonomic=False),
               RollingContact("front_wheel", p.r_F, axis=[0, 1, 0]))
    return dataclasses.replace(model, constraints=rolling)


# =============================================================================================
# the exact linearisation: a complex step through a NumPy statement of the model's dynamics
# =============================================================================================
def _rotation(axis, angle):
    """Rodrigues' rotation about a unit axis (any number type: a complex angle stays analytic)."""
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


class _ComplexTree:
    """Poses, velocities, accelerations, Jacobians and inverse dynamics of a chain of revolute and
    prismatic joints, in world coordinates, written for any number type (NumPy complex included).

    The NumPy statement the complex step runs through; ``tests/test_whipple.py`` holds it to the
    compiled kernels (``mb.body_states``, ``mb.rnea``, ``constraint_terms``) on random states."""

    def __init__(self, model, q, qd, qdd):
        from ..model.joints import JointType
        kinds = {int(JointType.REVOLUTE): "R", int(JointType.PRISMATIC): "P"}
        nb, dt = model.nb, np.result_type(q, qd, qdd, float)
        self.model, self.nv = model, model.nv
        self.R = np.zeros((nb, 3, 3), dt)
        self.p, self.w, self.v, self.al, self.a = (np.zeros((nb, 3), dt) for _ in range(5))
        self.s, self.o = np.zeros((nb, 3), dt), np.zeros((nb, 3), dt)
        self.kind, self.chain = [], []
        for i in range(nb):
            k = kinds.get(int(model.jtype[i]))
            if k is None or model.nv_joint[i] != 1:
                raise ValueError(f"model: joint {model.joint_names[i]!r} is neither revolute nor prismatic")
            j = int(model.v_start[i])
            lam = int(model.parent[i])
            if lam < 0:
                Rl, pl, wl, vl, all_, al = np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)
                chain = []
            else:
                Rl, pl, wl, vl, all_, al = self.R[lam], self.p[lam], self.w[lam], self.v[lam], self.al[lam], self.a[lam]
                chain = list(self.chain[lam])
            r = Rl @ model.tree_translation[i]
            o = pl + r
            vo = vl + np.cross(wl, r)
            ao = al + np.cross(all_, r) + np.cross(wl, np.cross(wl, r))
            RJ = Rl @ model.tree_rotation[i]
            axis = np.asarray(model.jaxis[i], dtype=float)
            s = RJ @ axis
            if k == "R":
                self.R[i] = RJ @ _rotation(axis, q[j])
                self.p[i], self.v[i], self.a[i] = o, vo, ao
                self.w[i] = wl + s * qd[j]
                self.al[i] = all_ + s * qdd[j] + np.cross(wl, s) * qd[j]
            else:
                d = s * q[j]
                self.R[i] = RJ
                self.p[i] = o + d
                self.w[i], self.al[i] = wl, all_
                self.v[i] = vo + np.cross(wl, d) + s * qd[j]
                self.a[i] = (ao + np.cross(all_, d) + np.cross(wl, np.cross(wl, d)) + 2 * np.cross(wl, s) * qd[j]
                             + s * qdd[j])
            self.s[i], self.o[i] = s, o
            self.kind.append(k)
            self.chain.append(chain + [i])

    def point(self, i, r_body):
        """World position, velocity, acceleration of a point fixed in body i."""
        r = self.R[i] @ r_body
        return (self.p[i] + r, self.v[i] + np.cross(self.w[i], r),
                self.a[i] + np.cross(self.al[i], r) + np.cross(self.w[i], np.cross(self.w[i], r)))

    def jacobians(self, i, x):
        """(J_v (3, nv), J_ω (3, nv)) of the world point x moving with body i."""
        Jv = np.zeros((3, self.nv), self.R.dtype)
        Jw = np.zeros((3, self.nv), self.R.dtype)
        for k in self.chain[i]:
            j = int(self.model.v_start[k])
            if self.kind[k] == "R":
                Jw[:, j] = self.s[k]
                Jv[:, j] = np.cross(self.s[k], x - self.o[k])
            else:
                Jv[:, j] = self.s[k]
        return Jv, Jw

    def inverse_dynamics(self, gravity):
        """τ = Σ_i J_iᵀ [m_i (a_Ci − g); I_i α_i + ω_i × I_i ω_i] (Newton–Euler at each centre of mass)."""
        m = self.model
        tau = np.zeros(self.nv, self.R.dtype)
        for i in range(m.nb):
            if m.mass[i] == 0:
                continue
            x, _, ac = self.point(i, m.com[i])
            I = self.R[i] @ m.inertia_com[i] @ self.R[i].T
            force = m.mass[i] * (ac - gravity)
            moment = I @ self.al[i] + np.cross(self.w[i], I @ self.w[i])
            Jv, Jw = self.jacobians(i, x)
            tau = tau + Jv.T @ force + Jw.T @ moment
        return tau

    def rolling(self, con):
        """(c, ċ, J, bias) of a RollingContact from these kinematics (the library's statement)."""
        i = self.model.body_index(con.body)
        x, v, a = self.point(i, con.center)
        Jv, Jw = self.jacobians(i, x)
        return rolling_contact_terms(con, x, v, a, self.R[i], self.w[i], self.al[i], Jv, Jw)


def _constraint_rows(model, q, qd):
    """The stacked rolling rows (c, ċ, J, bias) of the model's constraints, any number type."""
    tree = _ComplexTree(model, q, qd, np.zeros(model.nv))
    parts = [tree.rolling(c) for c in model.constraints]
    return tuple(np.concatenate([getattr(p, k) for p in parts]) for k in ("c", "cdot", "J", "bias"))


def _indices(model):
    ind = [model.v_start[model.joint_index(n)] for n in _INDEPENDENT]
    dep = [k for k in range(model.nv) if k not in ind]
    return np.array(ind), np.array(dep)


def _upright(model, roll, steer, tol=1e-15, max_iter=50):
    """q at (φ, δ) with the rear frame's pitch solving the front wheel's height (Newton)."""
    dt = np.result_type(roll, steer, float)
    q = np.zeros(model.nq, dt)
    q[model.q_start[model.joint_index("roll")]] = roll
    q[model.q_start[model.joint_index("steer")]] = steer
    k = model.q_start[model.joint_index("pitch")]
    holo = 2                 # the rows: rear x, y; front height, x, y
    for _ in range(max_iter):
        c, _, J, _ = _constraint_rows(model, q, np.zeros(model.nv))
        step = c[holo] / J[holo, k]
        q[k] = q[k] - step
        if abs(step) < tol:
            break
    else:
        raise ValueError(f"roll, steer: no rear-frame pitch puts the front wheel on the ground at φ = {roll!r}, "
                         f"δ = {steer!r}")
    return q


def _reduced(model, roll, steer, u, ud, gravity):
    """Nᵀ τ (3,): the generalised forces along the independent speeds u = (φ̇, δ̇, θ̇_R) that the motion
    (φ, δ, u, u̇) needs, every other coordinate, speed and acceleration following from the constraints.

    q̇ = N u, the dependent speeds solving the constraint rows K q̇ = 0; q̈ likewise from
    K q̈ + bias = 0; τ = ID(q, q̇, q̈) (Kane's equations: Nᵀ(τ_applied − ID) = 0)."""
    q = _upright(model, roll, steer)
    ind, dep = _indices(model)
    dt = np.result_type(q, np.asarray(u), np.asarray(ud), float)
    u, ud = np.asarray(u, dtype=dt), np.asarray(ud, dtype=dt)
    _, _, K, _ = _constraint_rows(model, q, np.zeros(model.nv))
    N = np.zeros((model.nv, 3), dt)
    N[ind, np.arange(3)] = 1.0
    N[dep] = -np.linalg.solve(K[:, dep], K[:, ind])
    qd = N @ u
    _, _, _, bias = _constraint_rows(model, q, qd)
    qdd = N @ ud
    qdd[dep] = qdd[dep] - np.linalg.solve(K[:, dep], bias)
    tau = _ComplexTree(model, q, qd, qdd).inverse_dynamics(gravity)
    return N.T @ tau


def _reduced_residual(model, x, speed, gravity):
    """The roll and steer rows of :func:`_reduced` at x = (φ, δ, φ̇, δ̇, φ̈, δ̈) and forward speed
    ``speed`` held (θ̈_R = 0)."""
    rR = model.constraints[0].radius
    return _reduced(model, x[0], x[1], [x[2], x[3], -speed / rR], [x[4], x[5], 0.0], gravity)[:2]


def _complex_step(f, x0, h=1e-30):
    """∂f/∂x at x0 by the complex step (Squire and Trapp 1998): Im f(x0 + i h e_k)/h, exact to rounding."""
    cols = []
    for k in range(len(x0)):
        x = np.array(x0, dtype=complex)
        x[k] += 1j * h
        cols.append(np.imag(f(x)) / h)
    return np.column_stack(cols)


def whipple_linear(model: Model | BicycleParameters | None = None):
    """The linearised equations M q̈ + v C1 q̇ + (g K0 + v² K2) q = f of the Whipple bicycle about
    upright straight running, in q = (φ, δ) (Meijaard et al. 2007, eq. 5.3).

    Computed from the model (``whipple_bicycle``'s joints and rolling constraints), with exact
    derivatives: the reduced equations — the roll and steer rows of Nᵀ ID(q, q̇, q̈) with q̇ = N u
    on the independent speeds u = (φ̇, δ̇, θ̇_R) and the dependent coordinates, speeds and
    accelerations solved from the constraints — are differentiated by the complex step through a
    NumPy statement of the tree's kinematics and inverse dynamics and of the library's own
    rolling-contact terms (``rolling_contact_terms``).  Why this way: the linearised reduced
    equations need second derivatives of the contact kinematics (∂(J q̇)/∂q in every direction),
    which neither the compiled kernels nor ``mb.aba_derivatives`` provide; finite differences
    stop at ~1e-9; the complex step has no subtraction and is exact to rounding (1e-15 relative).
    The NumPy statement is held to the compiled kernels on random states by the tests.

    M = ∂R/∂(φ̈, δ̈), g K0 = ∂R/∂(φ, δ) at v = 0, C1 = ∂R/∂(φ̇, δ̇) at v = 1, K2 = ∂R/∂(φ, δ)
    at v = 1 without gravity.

    Parameters
    ----------
    model : Model or BicycleParameters, optional
        A model built by :func:`whipple_bicycle`, or the parameters to build one (default
        :data:`BENCHMARK`).

    Returns
    -------
    M, C1, K0, K2 : ndarray, shape (2, 2)

    Raises
    ------
    ValueError
        A model without the joints of :data:`COORDINATES` or the two rolling constraints.

    Examples
    --------
    >>> import numpy as np
    >>> M, C1, K0, K2 = whipple_linear()
    >>> np.round(M, 8).tolist()
    [[80.81722, 2.31941332], [2.31941332, 0.29784188]]
    >>> np.round(K2[:, 1], 8).tolist()
    [76.5973459, 2.65431524]
    """
    if model is None or isinstance(model, BicycleParameters):
        model = whipple_bicycle(BENCHMARK if model is None else model)
    missing = [n for n in COORDINATES if n not in model.joint_names]
    if missing or len(model.constraints) != 2 or not all(isinstance(c, RollingContact) for c in model.constraints):
        raise ValueError(f"model: expected a whipple_bicycle model (joints {COORDINATES} and two RollingContact "
                         f"constraints, rear then front){'; missing joints ' + str(missing) if missing else ''}")
    g = np.asarray(model.gravity, dtype=float)
    gn = float(np.linalg.norm(g))
    x0 = np.zeros(6)
    D0 = _complex_step(lambda x: _reduced_residual(model, x, 0.0, g), x0)              # standing: M, g K0
    D1 = _complex_step(lambda x: _reduced_residual(model, x, 1.0, np.zeros(3)), x0)    # 1 m/s, no gravity
    return D0[:, 4:], D1[:, 2:4], D0[:, :2] / gn, D1[:, :2]


def whipple_eigenvalues(speeds, matrices=None):
    """Eigenvalues of the linearised bicycle at each forward speed (m/s): the roots s of
    det(M s² + v C1 s + g K0 + v² K2) = 0, four per speed, sorted by real part (descending).

    Parameters
    ----------
    speeds : float or array_like
        Forward speeds v (m/s).
    matrices : tuple, optional
        (M, C1, K0, K2, g) — e.g. ``(*whipple_linear(model), g)``; None: :data:`BENCHMARK`'s.

    Returns
    -------
    ndarray, shape (len(speeds), 4), complex
        The eigenvalues (1/s) at each speed.

    Examples
    --------
    >>> import numpy as np
    >>> ev = whipple_eigenvalues([0.0, 5.0])
    >>> ev.shape, bool(np.all(ev[1].real < 0))          # self-stable at 5 m/s
    ((2, 4), True)
    """
    M, C1, K0, K2, g = _matrices(matrices)
    v = np.atleast_1d(np.asarray(speeds, dtype=float))
    out = np.empty((v.size, 4), complex)
    Minv = np.linalg.inv(M)
    for k, vk in enumerate(v):
        A = np.zeros((4, 4))
        A[:2, 2:] = np.eye(2)
        A[2:, :2] = -Minv @ (g * K0 + vk * vk * K2)
        A[2:, 2:] = -Minv @ (vk * C1)
        e = np.linalg.eigvals(A)
        out[k] = e[np.lexsort((e.imag, -e.real))]
    return out


_BENCHMARK_MATRICES = []


def _matrices(matrices):
    if matrices is None:
        if not _BENCHMARK_MATRICES:
            _BENCHMARK_MATRICES.append((*whipple_linear(), BENCHMARK.g))
        return _BENCHMARK_MATRICES[0]
    M, C1, K0, K2, g = matrices
    return (*(np.asarray(a, dtype=float) for a in (M, C1, K0, K2)), float(g))


def whipple_speeds(matrices=None, bracket=(0.5, 10.0), xtol=1e-15):
    """(weave speed, capsize speed) in m/s: where the weave mode's real part and the capsize mode's
    eigenvalue cross zero — the bounds of the self-stable speed range (the paper's v_w, v_c).

    Found by Brent's method on the exact linearised matrices (``matrices`` as in
    :func:`whipple_eigenvalues`) inside ``bracket`` (m/s).

    Parameters
    ----------
    matrices : tuple, optional
        (M, C1, K0, K2, g); None: :data:`BENCHMARK`'s.
    bracket : (float, float)
        The speeds (m/s) searched, 0 ≤ low < high.
    xtol : float
        Brent's tolerance on the speed (m/s).

    Returns
    -------
    (float, float)
        The weave and capsize speeds (m/s).

    Raises
    ------
    ValueError
        A bracket that is not 0 ≤ low < high, or in which a mode does not cross (named).

    Examples
    --------
    >>> vw, vc = whipple_speeds()
    >>> round(vw, 10), round(vc, 10)
    (4.2923825363, 6.0242620154)
    """
    from scipy.optimize import brentq

    mats = _matrices(matrices)

    def weave(v):         # the largest real part of a complex pair
        e = whipple_eigenvalues(v, mats)[0]
        return max(x.real for x in e if abs(x.imag) > 1e-9)

    def capsize(v):       # the largest real eigenvalue among the real ones
        e = whipple_eigenvalues(v, mats)[0]
        return max(x.real for x in e if abs(x.imag) <= 1e-9)

    lo, hi = (float(b) for b in bracket)
    if not 0 <= lo < hi or not np.isfinite(hi):
        raise ValueError(f"bracket: expected speeds 0 ≤ low < high (m/s), got {bracket!r}")
    vs = np.linspace(lo, hi, 200)
    ev = whipple_eigenvalues(vs, mats)
    oscillating = np.abs(ev.imag) > 1e-9
    wv = [e[o].real.max() if o.any() else np.nan for e, o in zip(ev, oscillating)]
    cv = [e[~o].real.max() if (~o).any() else np.nan for e, o in zip(ev, oscillating)]
    k = [i for i in range(len(vs) - 1) if wv[i] > 0 and wv[i + 1] < 0]
    if not k:
        raise ValueError(f"bracket: the weave mode does not become stable between {lo} and {hi} m/s")
    v_w = brentq(weave, vs[k[0]], vs[k[0] + 1], xtol=xtol, rtol=4 * np.finfo(float).eps)
    k = [i for i in range(len(vs) - 1) if vs[i] > v_w and cv[i] < 0 and cv[i + 1] > 0]
    if not k:
        raise ValueError(f"bracket: the capsize mode does not become unstable between {v_w} and {hi} m/s")
    v_c = brentq(capsize, vs[k[0]], vs[k[0] + 1], xtol=xtol, rtol=4 * np.finfo(float).eps)
    return float(v_w), float(v_c)


def whipple_state(model: Model, roll=0.0, steer=0.0, roll_rate=0.0, steer_rate=0.0, speed=0.0):
    """(q, q̇) of the bicycle on its constraints: at lean ``roll`` and steer ``steer`` (rad), the rear
    frame's pitch putting the front wheel on the ground, moving with the given roll and steer rates
    (rad/s) and forward speed (m/s, v = −θ̇_R r_R); every other speed follows from rolling.

    Parameters
    ----------
    model : Model
        A model built by :func:`whipple_bicycle`.
    roll, steer : float
        φ, δ (rad).
    roll_rate, steer_rate : float
        φ̇, δ̇ (rad/s).
    speed : float
        Forward speed v (m/s).

    Returns
    -------
    q, qd : ndarray, shape (8,)
        On the constraints: the front wheel's height and both wheels' slip are zero.

    Raises
    ------
    ValueError
        A value that is not finite, or a lean and steer at which no pitch puts the front wheel on
        the ground.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> bike = mb.models.whipple_bicycle()
    >>> q, qd = whipple_state(bike, roll=0.1, speed=4.6)
    >>> c, cdot = mb.ConstraintSet(*bike.constraints).residual(bike, q, qd)
    >>> bool(np.abs(c).max() < 1e-14 and np.abs(cdot).max() < 1e-12)
    True
    """
    values = [float(x) for x in (roll, steer, roll_rate, steer_rate, speed)]
    if not np.all(np.isfinite(values)):
        raise ValueError(f"roll, steer, roll_rate, steer_rate, speed: expected finite numbers, got {values}")
    q = _upright(model, values[0], values[1])
    ind, dep = _indices(model)
    K = ConstraintSet(*model.constraints).evaluate(model, q, np.zeros(model.nv)).J
    u = np.array([roll_rate, steer_rate, -float(speed) / model.constraints[0].radius], dtype=float)
    qd = np.zeros(model.nv)
    qd[ind] = u
    qd[dep] = -np.linalg.solve(K[:, dep], K[:, ind] @ u)
    return q, qd
