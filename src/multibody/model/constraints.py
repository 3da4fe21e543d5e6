"""Constraint descriptions: what a user or a loader writes down about c(t, q) = 0 on a tree.

Each kind is plain data with its arguments checked here — bodies, points, axes, joints,
coefficients and a name — and nothing else: a constraint is evaluated (c, ċ, J, J̇q̇) and solved
(the TMT paper's augmented system, eq. 6) in :mod:`multibody.dynamics.constraints`, one
evaluation function per kind beside these descriptions.  Models carry them in
``Model.constraints`` (the MJCF loader writes a file's equalities as these kinds).

Kinds: :class:`PointConstraint` (two points coincide — a spherical loop joint),
:class:`AxisConstraint` (an axis of one body perpendicular to directions of another),
:class:`JointCoupling` (q_a = r q_b + offset, or MuJoCo's polynomial joint equality),
:class:`JointPath` (q_j = φ(t), a joint driven along a prescribed motion),
:class:`FunctionConstraint` (any c(q) or c(t, q)), :class:`WeldConstraint` (two frames coincide,
MuJoCo's ``<weld>``) and :class:`TendonCoupling` (MuJoCo's tendon equality) — all holonomic —
and the nonholonomic kinds, whose rows constrain velocities, A(q) q̇ + a(t, q) = 0, without being
the time derivative of a constraint on positions: :class:`VelocityConstraint` (any A, a given as
functions) and :class:`RollingContact` (a knife-edge wheel or disc rolling without slipping on a
plane: the velocity of its material contact point is zero in the plane; the contact point's height
stays a holonomic row).

A new kind is one description here and one evaluation function in ``dynamics/constraints.py``.

Example
-------
>>> from multibody.model.constraints import PointConstraint
>>> pin = PointConstraint("link2", [1, 0, 0], None, [1, 1, 0], axes="xy")
>>> pin.axes, pin.point_b.tolist(), pin.name
([0, 1], [1.0, 1.0, 0.0], 'point(link2, None)')
>>> pin.name = "other"
Traceback (most recent call last):
...
AttributeError: point(link2, None): a constraint description is read-only; build a new one
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .. import _checks

__all__ = ["Constraint", "PointConstraint", "AxisConstraint", "JointCoupling", "JointPath",
           "FunctionConstraint", "WeldConstraint", "TendonCoupling", "VelocityConstraint", "RollingContact"]


def _finite(a) -> bool:
    """All entries finite (one dot product decides unless it overflows or is not finite)."""
    r = a.ravel()
    return math.isfinite(r.dot(r)) or bool(np.isfinite(a).all())


def _point3(name, p):
    return _checks.vector(name, p, 3, copy=False)


def _step(name, h):
    """A positive difference step (in seconds for a time, in q units for a position)."""
    return _checks.number(f"{name} (a time constant in seconds)", h, positive=True)


class Constraint:
    """Base class of the descriptions: m rows of c(t, q) = 0, named ``name``.

    Evaluated by :func:`multibody.dynamics.constraints.constraint_terms`; solved (alone with the
    default Baumgarte gains, or several together) by
    :class:`~multibody.dynamics.constraints.ConstraintSet`, which ``mb.simulate`` builds from
    a single constraint.  Descriptions are read-only once built.
    """

    name: str = "constraint"
    time_dependent = False

    def __setattr__(self, key, value):
        if self.__dict__.get("_built"):
            raise AttributeError(f"{self.name}: a constraint description is read-only; build a new one")
        object.__setattr__(self, key, value)

    def _seal(self):
        object.__setattr__(self, "_built", True)

    def row_names(self, n):
        return [f"{self.name}[{k}]" for k in range(n)]

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


def _axes(axes):
    if axes is None:
        return [0, 1, 2]
    if isinstance(axes, str):
        bad = set(axes) - set("xyz")
        if bad or not axes:
            raise ValueError(f"axes: expected letters from 'xyz', got {axes!r}")
        return ["xyz".index(a) for a in axes]
    out = [int(a) for a in axes]
    if not out or any(a not in (0, 1, 2) for a in out) or len(set(out)) != len(out):
        raise ValueError(f"axes: expected distinct world axes among 0, 1, 2, got {axes!r}")
    return out


class PointConstraint(Constraint):
    """Point ``point_a`` of ``body_a`` coincides with point ``point_b`` of ``body_b`` (a spherical
    loop joint).  ``body_b=None`` is the fixed base (``point_b`` in world coordinates).

    c = p_a − p_b in world coordinates, rows restricted to ``axes`` (e.g. ``"xy"`` for a planar
    loop, whose z row would be identically zero and make J singular).
    """

    def __init__(self, body_a, point_a, body_b=None, point_b=(0.0, 0.0, 0.0), axes=None, name=None):
        self.body_a, self.body_b = body_a, body_b
        self.point_a, self.point_b = _point3("point_a", point_a), _point3("point_b", point_b)
        self.axes = _axes(axes)
        self.name = name or f"point({body_a}, {body_b})"
        self._seal()


class AxisConstraint(Constraint):
    """Unit axis ``axis_a`` of ``body_a`` stays perpendicular to each direction in
    ``directions_b`` fixed in ``body_b`` (None: the base): c_k = (R_a u)·(R_b w_k) = 0.

    With two directions perpendicular to ``axis_b`` this keeps the axes parallel (2 rows); with a
    :class:`PointConstraint` at a point of that axis it closes a loop with a revolute joint
    (:func:`~multibody.dynamics.constraints.revolute_closure`).
    """

    def __init__(self, body_a, axis_a, body_b=None, directions_b=((1.0, 0.0, 0.0),), name=None):
        self.body_a, self.body_b = body_a, body_b
        u = _point3("axis_a", axis_a)
        if np.linalg.norm(u) < 1e-12:
            raise ValueError("axis_a: must be a non-zero vector")
        self.axis_a = u / np.linalg.norm(u)
        W = np.atleast_2d(np.asarray(directions_b, dtype=float))
        if W.ndim != 2 or W.shape[1] != 3 or not _finite(W) or np.any(np.linalg.norm(W, axis=1) < 1e-12):
            raise ValueError(f"directions_b: expected non-zero 3-vectors, got {directions_b!r}")
        self.directions_b = W / np.linalg.norm(W, axis=1, keepdims=True)
        self.name = name or f"axis({body_a}, {body_b})"
        self._seal()


def _polynomial_coefficients(polynomial):
    """MuJoCo's polycoef (c0, c1, …) as a tuple of finite floats (JointCoupling, TendonCoupling)."""
    coef = np.atleast_1d(np.asarray(polynomial, dtype=float))
    if coef.ndim != 1 or coef.size == 0 or not _finite(coef):
        raise ValueError(f"polynomial: expected finite coefficients (c0, c1, …), got {polynomial!r}")
    return tuple(float(c) for c in coef)


def _reference_values(reference):
    """The two reference values the polynomial is written about (MuJoCo: the joints' qpos0)."""
    ref = _checks.vector("reference", reference, 2)
    return float(ref[0]), float(ref[1])


class JointCoupling(Constraint):
    """Gear between two one-variable joints: q_a = ratio · q_b + offset (c = q_a − r q_b − offset).

    ``polynomial=(c₀, c₁, …)`` couples them by a polynomial instead — MuJoCo's joint equality
    (``polycoef``): q_a − a₀ = Σ_k c_k (q_b − b₀)^k with ``reference=(a₀, b₀)`` (MuJoCo's qpos0);
    ``joint_b=None`` then holds q_a at a₀ + c₀.  A ratio and offset are stored as the polynomial
    (offset, ratio).

    Example
    -------
    >>> JointCoupling(1, 0, ratio=2.0, offset=0.5).polynomial
    (0.5, 2.0)
    """

    def __init__(self, joint_a, joint_b, ratio=1.0, offset=0.0, name=None, *, polynomial=None,
                 reference=(0.0, 0.0)):
        self.joint_a, self.joint_b = joint_a, joint_b
        self.ratio, self.offset = _checks.number("ratio", ratio), _checks.number("offset", offset)
        if polynomial is None:
            if joint_b is None:
                raise ValueError("joint_b: None holds joint_a at a constant and needs polynomial=(c0,)")
            self.polynomial = (self.offset, self.ratio)
        else:
            if (self.ratio, self.offset) != (1.0, 0.0):
                raise ValueError("ratio, offset: give either ratio/offset or polynomial, not both")
            self.polynomial = _polynomial_coefficients(polynomial)
        self.reference = _reference_values(reference)
        self.name = name or f"coupling({joint_a}, {joint_b})"
        self._seal()


class JointPath(Constraint):
    """A one-variable joint driven along a prescribed motion: c(t, q) = q_j − φ(t) = 0.

    A rheonomic constraint (TMT paper, flapping flyer: "flapping input (q = …) implemented as a
    constraint"); its multiplier is the joint force that produces the motion.  ``velocity`` φ̇(t)
    and ``acceleration`` φ̈(t) are used where given, else central differences of φ with step
    ``h`` (errors O(h²)): :meth:`motion`.

    Example
    -------
    >>> import numpy as np
    >>> drive = JointPath(0, np.sin, velocity=np.cos)
    >>> [round(x, 6) for x in drive.motion(0.5)]     # φ̈ by a central difference of φ
    [0.479426, 0.877583, -0.479426]
    """

    time_dependent = True

    def __init__(self, joint, path: Callable, velocity: Callable | None = None,
                 acceleration: Callable | None = None, name: str | None = None, h: float = 1e-4):
        for nm, f in (("path", path), ("velocity", velocity), ("acceleration", acceleration)):
            if f is not None and not callable(f):
                raise TypeError(f"{nm}: expected a callable of t, got {type(f).__name__}")
        if path is None:
            raise TypeError("path: expected a callable φ(t), got None")
        self.joint, self.path, self.velocity, self.acceleration = joint, path, velocity, acceleration
        self.h = _step("h", h)
        self.name = name or f"path({joint})"
        self._seal()

    def _value(self, f, nm, t):
        try:
            v = float(f(t))
        except (TypeError, ValueError) as e:
            raise ValueError(f"{self.name}: {nm}(t) must return one number, at t = {t!r}: {e}") from None
        if not math.isfinite(v):
            raise ValueError(f"{self.name}: {nm}(t) returned {v!r} at t = {t!r}")
        return v

    def motion(self, t):
        """(φ, φ̇, φ̈) at time t: the prescribed motion itself (no model needed)."""
        p = lambda tt: self._value(self.path, "path", tt)  # noqa: E731
        h = self.h
        phi = p(t)
        phid = self._value(self.velocity, "velocity", t) if self.velocity else (p(t + h) - p(t - h)) / (2 * h)
        phidd = (self._value(self.acceleration, "acceleration", t) if self.acceleration
                 else (p(t + h) - 2 * phi + p(t - h)) / (h * h))
        return phi, phid, phidd


class FunctionConstraint(Constraint):
    """Any c(q) = 0 (or c(t, q) = 0 with ``time_dependent=True``) given as a function.

    ``jacobian(q)`` (or ``jacobian(t, q)``) returns ∂c/∂q in velocity coordinates (n, nv);
    without it the Jacobian is taken by central differences in the tangent space (q ⊕ h e_k).
    ``bias(q, qd)`` (or ``bias(t, q, qd)``) returns c̈ − J q̈; without it, it is the second
    difference of c along the constant-velocity path s ↦ c(t + s, q ⊕ s q̇), which holds the
    rheonomic terms 2 (∂J/∂t) q̇ + ∂²c/∂t² too.  ``dc_dt(t, q)`` returns ∂c/∂t for ċ = J q̇ + ∂c/∂t;
    without it, a central difference in t.  Differences use steps ``h`` — errors are O(h²) and
    ~1e-9 at the default h = 1e-5 for functions of order one (the second difference of the bias
    also carries ~1e-6 of rounding, which Baumgarte stabilisation absorbs).
    """

    def __init__(self, c: Callable, jacobian: Callable | None = None, bias: Callable | None = None,
                 time_dependent: bool = False, name: str | None = None, h: float = 1e-5,
                 dc_dt: Callable | None = None):
        if not callable(c):
            raise TypeError(f"c: expected a callable, got {type(c).__name__}")
        for nm, f in (("jacobian", jacobian), ("bias", bias), ("dc_dt", dc_dt)):
            if f is not None and not callable(f):
                raise TypeError(f"{nm}: expected a callable or None, got {type(f).__name__}")
        if dc_dt is not None and not time_dependent:
            raise ValueError("dc_dt: given for a constraint that is not time_dependent (pass time_dependent=True)")
        self.c, self.jac, self.bias_fn, self.time_dependent = c, jacobian, bias, bool(time_dependent)
        self.dc_dt = dc_dt
        self.h = _step("h", h)
        self.name = name or getattr(c, "__name__", "function")
        self._seal()


def _rotation3(name, R):
    R = _checks.array(name, R, (3, 3), what="a rotation matrix")
    if not np.allclose(R @ R.T, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ValueError(f"{name}: expected a proper rotation matrix (orthonormal, det +1)")
    return np.array(R, dtype=float)


class WeldConstraint(Constraint):
    """Frame F_a fixed in ``body_a`` coincides with frame F_b fixed in ``body_b`` (None: the fixed
    base, pose in world coordinates): a weld that closes a loop, 6 rows.

    F_a sits at ``point_a`` with axes ``rotation_a`` (columns, body-a coordinates; default the
    body's axes), F_b likewise.  Rows: p_a − p_b (3, world, as :class:`PointConstraint`: ``.point``)
    and three :class:`AxisConstraint` rows (x_a·y_b, y_a·z_b, z_a·x_b: ``.axes``) that vanish when
    the axes agree and whose Jacobian there is the relative angular velocity — MuJoCo's
    ``<weld>`` as a hard constraint.

    Example
    -------
    >>> weld = WeldConstraint("link2", [1, 0, 0], None, [1, 1, 0])   # its axes along the world's
    >>> weld.point.point_b.tolist(), [a.directions_b.round(12).tolist() for a in weld.axes]
    ([1.0, 1.0, 0.0], [[[0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]]])
    """

    def __init__(self, body_a, point_a, body_b=None, point_b=(0.0, 0.0, 0.0), rotation_a=None, rotation_b=None,
                 name=None):
        self.body_a, self.body_b = body_a, body_b
        self.name = name or f"weld({body_a}, {body_b})"
        Ra, Rb = (np.eye(3) if R is None else _rotation3(nm, R) for nm, R in (("rotation_a", rotation_a),
                                                                             ("rotation_b", rotation_b)))
        self.rotation_a, self.rotation_b = Ra, Rb
        self.point = PointConstraint(body_a, point_a, body_b, point_b, name=self.name + ".point")
        self.axes = tuple(AxisConstraint(body_a, Ra[:, i], body_b, (Rb[:, (i + 1) % 3],), name=self.name + ".axis")
                          for i in range(3))
        self.point_a, self.point_b = self.point.point_a, self.point.point_b
        self._seal()

    def row_names(self, n):
        return [f"{self.name}.{r}" for r in ("x", "y", "z", "rx", "ry", "rz")][:n]


class TendonCoupling(Constraint):
    """Lengths of two fixed tendons coupled by a polynomial — MuJoCo's tendon equality.

    A fixed tendon's length is linear in the joint variables, L = Σ_j k_j q_j; ``tendon_a`` and
    ``tendon_b`` map one-variable joints (index or name) to their coefficients k_j.  Then::

        c = (L_a − a₀) − Σ_k c_k (L_b − b₀)^k        (``polynomial``, ``reference=(a₀, b₀)``)

    and with ``tendon_b=None``, c = L_a − a₀ − c₀.  A linear polynomial (the common case, e.g.
    dm_control's manipulator gripper coupling) makes c linear in q.

    Example
    -------
    >>> TendonCoupling({0: 1.0, 1: -1.0}).tendon_a          # q₀ − q₁ = 0 (c₀ = 0)
    {0: 1.0, 1: -1.0}
    """

    def __init__(self, tendon_a, tendon_b=None, polynomial=(0.0, 1.0), reference=(0.0, 0.0), name=None):
        for nm, td in (("tendon_a", tendon_a), ("tendon_b", tendon_b)):
            if td is not None and (not isinstance(td, dict) or not td):
                raise TypeError(f"{nm}: expected a non-empty dict {{joint: coefficient}}, got {type(td).__name__}")
        self.tendon_a = {j: _checks.number("tendon_a coefficient", k) for j, k in tendon_a.items()}
        self.tendon_b = None if tendon_b is None else {j: _checks.number("tendon_b coefficient", k)
                                                       for j, k in tendon_b.items()}
        self.polynomial = _polynomial_coefficients(polynomial)
        self.reference = _reference_values(reference)
        self.name = name or "tendon coupling"
        self._seal()


class VelocityConstraint(Constraint):
    """Nonholonomic rows A(q) q̇ + a(q) = 0 (or a(t, q) with ``time_dependent=True``), given as
    functions: velocities constrained without a constraint on positions behind them.

    ``A(q)`` returns the (m, nv) matrix (velocity coordinates); ``a`` the (m,) offset (None: 0).
    ``bias(q, qd)`` (or ``bias(t, q, qd)``) returns d/dt(A q̇ + a) − A q̈; without it, it is the
    central difference of s ↦ A(q ⊕ s q̇) q̇ + a(t + s, q ⊕ s q̇) with step ``h`` (O(h²), ~1e-9 at
    the default for functions of order one).  The rows are stabilised at the velocity level only
    (Baumgarte: ṡ + α s = 0 for s = A q̇ + a), and their residual is reported as c = 0, ċ = s.

    Example
    -------
    >>> import numpy as np
    >>> skate = VelocityConstraint(lambda q: np.array([[-np.sin(q[2]), np.cos(q[2]), 0.0]]), name="skate")
    >>> skate.name, skate.time_dependent             # a Chaplygin sleigh's blade: no sideways slip
    ('skate', False)
    """

    def __init__(self, A: Callable, a: Callable | None = None, bias: Callable | None = None,
                 time_dependent: bool = False, name: str | None = None, h: float = 1e-5):
        if not callable(A):
            raise TypeError(f"A: expected a callable A(q) returning the (m, nv) matrix, got {type(A).__name__}")
        for nm, f in (("a", a), ("bias", bias)):
            if f is not None and not callable(f):
                raise TypeError(f"{nm}: expected a callable or None, got {type(f).__name__}")
        if time_dependent and a is None:
            raise ValueError("a: a time_dependent velocity constraint needs its offset a(t, q)")
        self.A, self.a, self.bias_fn, self.time_dependent = A, a, bias, bool(time_dependent)
        self.h = _step("h", h)
        self.name = name or getattr(A, "__name__", "velocity")
        self._seal()


class RollingContact(Constraint):
    """A wheel (a thin disc or knife edge) rolling without slipping on a plane.

    The wheel is the rim of radius ``radius`` about ``center`` (body coordinates) in the plane
    normal to ``axis`` (body coordinates) of ``body``.  The plane is {x : n·x = height}, n =
    ``normal`` (world, pointing to the wheel's side).  The contact point is the rim's lowest point
    along n, P = C + r d with d = (−n + (a·n) a)/√(1 − (a·n)²) (a the wheel's axis in the world).

    Rows: the height of P above the plane, n·P − height = 0 (holonomic; ``holonomic=False`` leaves
    it out for a wheel whose joints keep it on the plane already, where its row would vanish), and
    the velocity of the wheel's material point at P along two directions of the plane, t₁·v_P =
    t₂·v_P = 0 (nonholonomic: rolling, no slip; no position constraint lies behind them).  The
    wheel's axis must not be normal to the plane (a disc lying flat has no rim contact point).

    Example
    -------
    >>> wheel = RollingContact("rear_wheel", 0.3)
    >>> wheel.axis.tolist(), wheel.normal.tolist(), wheel.tangents.round(12).tolist()
    ([0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    >>> RollingContact("w", 0.3, holonomic=False).row_names(2)
    ['rolling(w).x', 'rolling(w).y']
    """

    def __init__(self, body, radius, axis=(0.0, 1.0, 0.0), center=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0),
                 height=0.0, holonomic=True, name=None):
        self.body = body
        self.radius = _checks.number("radius (m)", radius, positive=True)
        self.axis = _unit("axis", axis)
        self.center = _point3("center", center)
        self.normal = _unit("normal", normal)
        self.height = _checks.number("height (m)", height)
        self.holonomic = bool(holonomic)
        e = np.eye(3)[int(np.argmin(np.abs(self.normal)))]
        t1 = e - (e @ self.normal) * self.normal
        t1 /= np.linalg.norm(t1)
        self.tangents = np.array([t1, np.cross(self.normal, t1)])
        # the rows' directions (n for the height, then t₁, t₂) and which of them are velocity rows
        self.directions = np.vstack([self.normal, self.tangents]) if self.holonomic else self.tangents.copy()
        self.velocity_rows = np.array([False, True, True][3 - len(self.directions):])
        for a in (self.axis, self.center, self.normal, self.tangents, self.directions, self.velocity_rows):
            a.setflags(write=False)
        self.name = name or f"rolling({body})"
        self._seal()

    def row_names(self, n):
        names = ([f"{self.name}.height"] if self.holonomic else []) + [f"{self.name}.x", f"{self.name}.y"]
        return names[:n]


def _unit(name, v):
    u = _point3(name, v)
    n = float(np.linalg.norm(u))
    if not n > 1e-12:
        raise ValueError(f"{name}: expected a non-zero 3-vector, got {u.tolist()}")
    return u / n
