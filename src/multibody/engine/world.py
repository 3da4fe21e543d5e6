"""The maximal-coordinate world (OpenDE report ch. 3, 5, 6): rigid bodies in Cartesian coordinates
with quaternions, joints as constraints with Lagrange multipliers, ERP/CFM error feedback,
contacts with bounce and friction, and a semi-implicit Euler step in C.

>>> import numpy as np
>>> from multibody import engine
>>> world = engine.World(gravity=(0, 0, -9.81), dt=1e-3)
>>> link = world.add_body(engine.Box(1.0, 0.1, 0.1), mass=1.0, position=(0.5, 0, 0))
>>> hinge = world.add_hinge(link, None, anchor=(0, 0, 0), axis=(0, -1, 0))
>>> for _ in range(100):
...     world.step()
>>> bool(hinge.angle < 0), world.last_step.solver        # falls: negative angle about -y
(True, 'dantzig')
>>> float(np.linalg.norm(world.joint_error(hinge))) < 1e-4   # ERP keeps the anchors together
True
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from .. import _checks
from ..errors import SimulationError
from ..spatial.rotations import unit_quaternion
from . import _engine as C
from .shapes import HField, Plane, Shape, TriangleMesh

__all__ = ["World", "Body", "Joint", "Geom", "LastStep", "SimulationError", "contact_params", "AMotor", "RayHit"]

_SOLVERS = {"dantzig": 0, "pgs": 1, "quickstep": 1, "auto": 2}
_FRICTION = {"force": 0, "pyramid": 1, "cone": 2}
_JOINTS = {"ball": C.J_BALL, "hinge": C.J_HINGE, "slider": C.J_SLIDER, "fixed": C.J_FIXED,
           "universal": C.J_UNIVERSAL, "hinge2": C.J_HINGE2}


def contact_params(stiffness, damping, dt):
    """ERP and CFM of a contact spring with damping at a time step (OpenDE report eqs. 3.6–3.7).

    ``ERP = h k / (h k + c)``, ``CFM = 1 / (h k + c)``: the error-reduction parameter and
    constraint-force mixing that make a constraint behave as a spring ``k`` with damper ``c``
    under the engine's implicit step ``h``.

    Parameters
    ----------
    stiffness : float
        The spring constant k (N/m), ≥ 0.
    damping : float
        The damping c (N·s/m), ≥ 0; k and c are not both zero.
    dt : float
        The time step h (s), > 0.

    Returns
    -------
    erp : float
        In [0, 1).
    cfm : float
        In m/N per step (1 / (h k + c)).

    Raises
    ------
    TypeError
        An argument is not a real number (a string, None, a bool, an array).
    ValueError
        A negative, NaN or infinite value, ``dt`` ≤ 0, or stiffness and damping both zero.
    multibody.errors.ResultOverflowError
        ``h k + c`` overflows (a ``ValueError``).

    Examples
    --------
    >>> contact_params(1e5, 1e3, 1e-3)
    (0.09090909090909091, 0.0009090909090909091)
    """
    k = _checks.number("stiffness", stiffness, nonneg=True)
    c = _checks.number("damping", damping, nonneg=True)
    h = _checks.number("dt", dt, positive=True)
    if h * k + c <= 0:
        raise ValueError("stiffness, damping: at least one must be positive")
    if not math.isfinite(h * k + c):
        from ..core import ResultOverflowError     # finite inputs whose result overflows
        raise ResultOverflowError(f"contact_params: dt·stiffness + damping overflows ({h:g}·{k:g} + {c:g})")
    return h * k / (h * k + c), 1.0 / (h * k + c)


def _vec(name, value, n=3):
    return _checks.vector(name, value, n)


def _unit(name, value):
    a = _vec(name, value)
    n = np.linalg.norm(a)
    if n < 1e-12:
        raise ValueError(f"{name}: expected a non-zero vector")
    return a / n


def _quat(name, value):
    q = _vec(name, value, 4)
    if not np.any(q):
        raise ValueError(f"{name}: expected a non-zero quaternion [w, x, y, z]")
    return unit_quaternion(q)


def quat_to_matrix(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def matrix_to_quat(R):
    """Scalar-first unit quaternion of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    t = np.trace(R)
    if t > 0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * math.sqrt(max(1.0 + R[i, i] - R[j, j] - R[k, k], 1e-300))
        q = [0.0] * 4
        q[0] = (R[k, j] - R[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (R[j, i] + R[i, j]) / s
        q[1 + k] = (R[k, i] + R[i, k]) / s
    q = np.array(q)
    return q / np.linalg.norm(q) * (1 if q[0] >= 0 else -1)


def quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _inertia(name, value):
    I = np.asarray(value, dtype=float)
    if I.shape == (3,):
        I = np.diag(I)
    if I.shape != (3, 3):
        raise ValueError(f"{name}: expected 3 principal moments or a 3×3 matrix, got shape {I.shape}")
    if not np.all(np.isfinite(I)):
        raise ValueError(f"{name}: expected finite numbers")
    if not np.allclose(I, I.T, rtol=1e-10, atol=1e-14 * max(1.0, np.abs(I).max())):
        raise ValueError(f"{name}: expected a symmetric matrix")
    ev = np.linalg.eigvalsh(I)
    if ev[0] <= 0 or ev[0] + ev[1] < ev[2] * (1 - 1e-9):
        raise ValueError(f"{name}: degenerate inertia, principal moments {ev.tolist()} must be > 0 and satisfy "
                         "the triangle inequality I1 + I2 ≥ I3")
    return I


@dataclass
class LastStep:
    """What the last step solved (report eq. 5.34 with the feedback of 5.38 and CFM of 3.5).

    ``J`` (m, 2, 6): each row's Jacobian, [linear; angular] for body 1 and body 2 (``row_bodies``,
    −1 = world); ``lam`` (m,) the multipliers λ (forces, N or N·m); ``rhs`` the velocity targets;
    ``lo``/``hi`` the bounds used; ``w`` = Aλ − b; ``row_source`` the joint index, or −1 − contact
    index; contacts: ``contact_position``, ``contact_normal`` (from geom 2 into geom 1),
    ``contact_depth``, ``contact_ids`` (geom 1, geom 2, body 1, body 2) and ``contact_force`` (the
    force on body 1, world axes); ``residual`` the natural-map complementarity residual
    max|λ − proj_[lo,hi](λ − w)|; ``solver`` the solver that produced λ, 'dantzig' (exact pivoting)
    or 'pgs' (the quick step); ``why`` says why that one ran this step: asked for, chosen by
    ``solver='auto'`` from the number of rows (against ``World.exact_rows``), a joint tree (its
    equality rows alone, or with other rows pivoted on their Schur complement), or a fallback; ``fallback`` > 0 when pivoting gave up and the quick step solved the step instead
    (1 A_CC singular, 2 a pivot step without limit, 3 a row cycling, 4 a result not finite,
    5 the step's ``max_pivots`` spent); ``pivots`` the pivots taken this step over all friction
    passes (≤ ``max_pivots``) and ``iterations`` the quick step's sweeps actually run (≤
    ``World.iterations``; fewer when the sweeps met ``World.tolerance``): the work of the step; ``tree`` True when the equality-only rows of a joint tree were solved by
    the linear-time block factorization (Baraff 1996) instead of dense pivoting.
    """
    J: np.ndarray
    lam: np.ndarray
    rhs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    cfm: np.ndarray
    b: np.ndarray
    w: np.ndarray
    row_bodies: np.ndarray
    row_source: np.ndarray
    contact_position: np.ndarray
    contact_normal: np.ndarray
    contact_depth: np.ndarray
    contact_ids: np.ndarray
    contact_force: np.ndarray
    residual: float
    solver: str
    fallback: int
    why: str
    pivots: int
    iterations: int
    step: int
    tree: bool

    @property
    def n_contacts(self):
        return len(self.contact_depth)


class Body:
    """Handle of a rigid body; state is read from and written to the world's arrays."""

    def __init__(self, world, index, name):
        self._world, self.index, self.name = world, index, name

    def _s(self):
        return self._world._state[self.index]

    @property
    def position(self):
        """Centre of mass in world coordinates [m]."""
        return self._s()[C.BS_POS:C.BS_POS + 3].copy()

    @position.setter
    def position(self, value):
        self._s()[C.BS_POS:C.BS_POS + 3] = _vec(f"body {self.name!r} position", value)

    @property
    def quaternion(self):
        """Orientation, scalar-first unit quaternion [w, x, y, z]."""
        return self._s()[C.BS_QUAT:C.BS_QUAT + 4].copy()

    @quaternion.setter
    def quaternion(self, value):
        self._s()[C.BS_QUAT:C.BS_QUAT + 4] = _quat(f"body {self.name!r} quaternion", value)

    @property
    def rotation(self):
        """A_IB, body axes into world axes."""
        return quat_to_matrix(self.quaternion)

    @property
    def velocity(self):
        """Velocity of the centre of mass, world axes [m/s]."""
        return self._s()[C.BS_VEL:C.BS_VEL + 3].copy()

    @velocity.setter
    def velocity(self, value):
        self._s()[C.BS_VEL:C.BS_VEL + 3] = _vec(f"body {self.name!r} velocity", value)

    @property
    def angular_velocity(self):
        """ω in world axes [rad/s]."""
        return self._s()[C.BS_OMEGA:C.BS_OMEGA + 3].copy()

    @angular_velocity.setter
    def angular_velocity(self, value):
        self._s()[C.BS_OMEGA:C.BS_OMEGA + 3] = _vec(f"body {self.name!r} angular_velocity", value)

    @property
    def mass(self):
        return float(self._world._bprop[self.index, C.BP_MASS])

    @property
    def inertia(self):
        """Inertia about the centre of mass in body axes [kg·m²]."""
        return self._world._bprop[self.index, C.BP_I:C.BP_I + 9].reshape(3, 3).copy()

    def point(self, local):
        """World position of a point given in body axes relative to the centre of mass."""
        return self.position + self.rotation @ _vec("local", local)

    def add_force(self, force, at=None):
        """Apply a force [N] (world axes) for the next step, at the centre of mass or at world point ``at``."""
        f = _vec("force", force)
        load = self._world._load[self.index]
        load[C.BL_FORCE:C.BL_FORCE + 3] += f
        if at is not None:
            load[C.BL_TORQUE:C.BL_TORQUE + 3] += np.cross(_vec("at", at) - self.position, f)

    def add_torque(self, torque):
        """Apply a torque [N·m] (world axes) for the next step."""
        self._world._load[self.index, C.BL_TORQUE:C.BL_TORQUE + 3] += _vec("torque", torque)

    def energy(self, gravity):
        v, w, I = self.velocity, self.angular_velocity, self.rotation @ self.inertia @ self.rotation.T
        return 0.5 * self.mass * v @ v + 0.5 * w @ I @ w - self.mass * np.asarray(gravity) @ self.position

    def __repr__(self):
        return f"Body({self.name!r}, index={self.index})"


class Geom:
    """Handle of a collision geometry (its surface parameters ``mu`` and ``bounce`` are settable)."""

    def __init__(self, world, index, shape, body):
        self._world, self.index, self.shape, self.body = world, index, shape, body

    @property
    def mu(self):
        return float(self._world._gdat[self.index, C.GD_MU])

    @mu.setter
    def mu(self, value):
        self._world._gdat[self.index, C.GD_MU] = _nonneg("mu", value, allow_inf=True)

    @property
    def bounce(self):
        return float(self._world._gdat[self.index, C.GD_BOUNCE])

    @bounce.setter
    def bounce(self, value):
        self._world._gdat[self.index, C.GD_BOUNCE] = _bounce(value)

    def __repr__(self):
        return f"Geom({self.shape!r}, body={self.body.name if self.body else None!r})"


def _nonneg(name, value, allow_inf=False):
    return _checks.number(name, value, nonneg=True, allow_inf=allow_inf)


def _bounce(value):
    return _checks.number("bounce (a restitution)", value, lo=0, hi=1)


class Joint:
    """Handle of a joint: angle/rate read-back (body 1 relative to body 2), motors and stops.

    Axis 0 is the hinge/slider axis (universal, hinge2: axis 1); axis 1 is axis 2 of a universal
    or hinge2 joint.
    """

    def __init__(self, world, index, kind, body1, body2, name):
        self._world, self.index, self.kind, self.body1, self.body2, self.name = world, index, kind, body1, body2, name

    @property
    def naxes(self):
        return {"hinge": 1, "slider": 1, "universal": 2, "hinge2": 2}.get(self.kind, 0)

    def _axis(self, axis):
        if axis not in range(self.naxes):
            raise ValueError(f"axis: joint {self.name!r} ({self.kind}) has axes {list(range(self.naxes))}, got {axis!r}")
        return C.JD_AXES + C.JA_SIZE * axis

    @property
    def angle(self):
        """Angle [rad] (slider: displacement [m]) of axis 0, zero at attach time, unwrapped."""
        return float(self._world._joint_coords()[0][self.index, 0])

    @property
    def rate(self):
        return float(self._world._joint_coords()[1][self.index, 0])

    @property
    def angle2(self):
        return float(self._world._joint_coords()[0][self.index, 1])

    @property
    def rate2(self):
        return float(self._world._joint_coords()[1][self.index, 1])

    def set_motor(self, velocity, max_force, axis=0):
        """Drive the axis at ``velocity`` (rad/s or m/s) with at most ``max_force`` (N·m or N); 0 turns it off."""
        o = self._axis(axis)
        v = _vec("velocity", [velocity], 1)[0]
        self._world._jdat[self.index, o + C.JA_MOTOR_VEL] = v
        self._world._jdat[self.index, o + C.JA_MOTOR_FMAX] = _nonneg("max_force", max_force)
        self._world._joints_changed()

    def set_damping(self, damping, axis=0):
        """Viscous damping of the axis [N·m·s/rad or N·s/m]: a torque −``damping`` × rate, applied
        implicitly (a row J v = −λ/``damping``, the rate after the step), so any value is stable;
        0 turns it off.

        >>> from multibody.engine import World, Box
        >>> w = World(contacts=False)
        >>> b = w.add_body(Box(0.1, 0.1, 0.1), mass=1.0, angular_velocity=(0, 0, 1.0))
        >>> j = w.add_hinge(b, None, anchor=(0, 0, 0), axis=(0, 0, 1)); j.set_damping(1e5)
        >>> w.step(); bool(abs(j.rate) < 1e-3)          # a large damping stops it in one step
        True
        """
        o = self._axis(axis)
        self._world._jdat[self.index, o + C.JA_DAMPING] = _nonneg("damping", damping)
        self._world._joints_changed()

    def set_limits(self, lo=-np.inf, hi=np.inf, bounce=0.0, erp=None, cfm=None, axis=0):
        """Stops at ``lo`` ≤ angle ≤ ``hi`` with restitution ``bounce`` (and optional stop ERP/CFM)."""
        o = self._axis(axis)
        lo, hi = float(lo), float(hi)
        if math.isnan(lo) or math.isnan(hi) or lo > hi:
            raise ValueError(f"lo, hi: expected lo ≤ hi, got {lo}, {hi}")
        d = self._world._jdat[self.index]
        d[o + C.JA_LO], d[o + C.JA_HI], d[o + C.JA_BOUNCE] = lo, hi, _bounce(bounce)
        d[o + C.JA_STOP_ERP] = np.nan if erp is None else _erp(erp)
        d[o + C.JA_STOP_CFM] = np.nan if cfm is None else _nonneg("cfm", cfm)
        self._world._joints_changed()

    def set_params(self, erp=None, cfm=None):
        """This joint's own ERP and CFM (None: the world's)."""
        self._world._jdat[self.index, C.JD_ERP] = np.nan if erp is None else _erp(erp)
        self._world._jdat[self.index, C.JD_CFM] = np.nan if cfm is None else _nonneg("cfm", cfm)
        self._world._joints_changed()

    def set_suspension(self, erp, cfm):
        """hinge2: soft anchor along axis 1 (use :func:`contact_params` for stiffness and damping)."""
        if self.kind != "hinge2":
            raise ValueError(f"set_suspension: joint {self.name!r} is a {self.kind}, not a hinge2")
        self._world._jdat[self.index, C.JD_SUSP_ERP] = _erp(erp)
        self._world._jdat[self.index, C.JD_SUSP_CFM] = _nonneg("cfm", cfm)
        self._world._joints_changed()

    def __repr__(self):
        b2 = self.body2.name if self.body2 is not None else "world"
        return f"Joint({self.name!r}, {self.kind}, {self.body1.name!r} – {b2!r})"


class AMotor(Joint):
    """Handle of an angular motor (``dJointCreateAMotor``): motors and stops on up to three axes
    of the rotation of body 1 relative to body 2, with no constraint of its own.

    Made by :meth:`World.add_amotor`.  ``set_motor`` and ``set_limits`` take ``axis`` 0, 1 or 2
    (stops with bounce, ERP and CFM as a hinge's); ``angles`` and ``rates`` give all axes.

    * ``mode='user'``: each axis fixed in the world, body 1 or body 2.  An axis's angle is the
      twist of the relative rotation about it (zero at attach time): exactly the angle turned
      when the bodies turn about that axis.  (ODE leaves user-mode angles to the caller.)
    * ``mode='euler'``: axis 0 fixed in body 1, axis 2 in body 2 (perpendicular at attach time),
      axis 1 = axis 2 × axis 0; the angles are ODE's Euler decomposition: with axis 0 = x of
      body 1 and axis 2 = z of the world, body 1 turned by Rz(angles[2]) Ry(angles[1]) Rx(angles[0]).

    Motor and stop rows act on (ω1 − ω2)·axis, as ODE's.  Angles lie in (−π, π], not unwrapped.

    >>> from multibody.engine import World, Box
    >>> w = World(gravity=(0, 0, 0))
    >>> b = w.add_body(Box(1, 1, 1), mass=6.0)           # inertia 1 about every axis
    >>> m = w.add_amotor(b, None, mode="user", axes=[(0, 0, 1)], frames=["world"])
    >>> m.set_motor(2.0, max_force=10.0)                 # 2 rad/s, at most 10 N·m
    >>> w.run(100)                                       # 0.1 s: 10 N·m / 1 kg·m² gives 1 rad/s
    >>> round(float(m.rates[0]), 6)
    1.0
    """

    @property
    def naxes(self):
        return int(self._world._jdat[self.index, C.JD_AM_NAXES])

    def _axis(self, axis):
        if axis not in range(self.naxes):
            raise ValueError(f"axis: AMotor {self.name!r} has axes {list(range(self.naxes))}, got {axis!r}")
        return C.JD_AXES + C.JA_SIZE * axis if axis < 2 else C.JD_AM_AXIS3

    def _read(self):
        return self._world._ensure().amotor(self.index)

    @property
    def angles(self):
        """Angles [rad] of the axes (unused axes: 0)."""
        return self._read()[0][:self.naxes]

    @property
    def rates(self):
        """(ω1 − ω2)·axis [rad/s] of each axis."""
        return self._read()[1][:self.naxes]

    @property
    def axes(self):
        """The axes in world coordinates now, (naxes, 3)."""
        return self._read()[2][:self.naxes]

    @property
    def angle(self):
        return float(self.angles[0])

    @property
    def rate(self):
        return float(self.rates[0])

    @property
    def angle2(self):
        raise AttributeError("angle2: an AMotor gives all its angles in .angles")

    rate2 = angle2

    def set_suspension(self, erp, cfm):
        raise ValueError(f"set_suspension: joint {self.name!r} is an AMotor, not a hinge2")


class RayHit:
    """A ray's hit: ``geom`` (a :class:`Geom`), ``body`` (its body, None if static), ``point``,
    ``normal`` (unit, facing back along the ray) and ``distance`` from the origin [m]."""
    __slots__ = ("geom", "body", "point", "normal", "distance")

    def __init__(self, geom, point, normal, distance):
        self.geom, self.body, self.point, self.normal, self.distance = geom, geom.body, point, normal, distance

    def __repr__(self):
        p = ", ".join(f"{x:.6g}" for x in self.point)
        return f"RayHit({self.geom!r}, point=({p}), distance={self.distance:.6g})"


EXACT_ROWS = 48
TOLERANCE = 5e-5
MAX_PIVOTS = 2000


def _erp(value):
    return _checks.number("erp", value, lo=0, hi=1)


class World:
    """A world of rigid bodies, joints and collision geometries (``dWorldCreate``).

    Parameters: ``gravity`` [m/s²]; ``erp``, ``cfm`` the global error reduction and constraint
    force mixing (report §3.4); ``dt`` the default step; keywords: ``solver`` 'auto' (default),
    'dantzig' (exact pivoting, ``dWorldStep``) or 'pgs' (projected Gauss-Seidel quick step,
    ``dWorldQuickStep``, warm-started, up to ``iterations`` sweeps with over-relaxation ``sor``,
    ending early once a sweep changes no multiplier λ by more than ``tolerance`` × the largest |λ|;
    ``tolerance=0`` sweeps ``iterations`` times, as ODE does);
    ``exact_rows`` and ``max_pivots`` (below); ``friction`` 'pyramid' (μ a ratio, bounds from the
    normal force, report §3.3 approximation 2), 'force' (μ a force limit in N, approximation 1)
    or 'cone'; ``bounce_vel`` the least approach speed that bounces; ``contact_erp``,
    ``contact_cfm`` the soft-contact parameters (default: erp, cfm; see :func:`contact_params`);
    ``surface_layer`` the depth allowed without correction (stops jitter; joint stops hold from
    this far before their limit, in rad or m); ``max_correcting_vel``;
    ``max_speed`` the bound beyond which a step fails with :class:`SimulationError`;
    ``contacts`` False to skip collision detection.

    Which solver: pivoting is exact but refactors the active rows at every pivot, about one pivot
    per bounded row and friction pass, so its cost grows like m⁴ in the m constraint rows; the
    quick step's grows like m.  ``solver='auto'`` therefore chooses per step: the exact solve
    while the step has at most ``exact_rows`` rows (default 48), or at most 2 ``exact_rows`` when
    all rows are equalities (joints without stops or motors: one factorization, no pivot), and a
    joint tree of equality rows exactly at any size (linear time); a joint tree with other rows
    (contacts, stops, motors, damping: a robot from :meth:`from_model` on a table) exactly while
    those other rows are at most ``exact_rows``, the tree's rows eliminated through its
    linear-time factorization and the others pivoted on their Schur complement
    (``last_step.why`` 'dantzig: auto, joint tree factorized, other rows <= exact_rows pivoted on
    the Schur complement'; with ``solver='dantzig'`` at any size); the quick step beyond.  On the
    Panda dropped on a table (55 rows, A's condition 2e9) that costs 0.16 ms a step against
    0.085 ms for the quick step and 7.6 ms for dense pivoting on all rows, and gives the dense
    pivoting's velocities to 3e-10 m/s where the quick step's are off by up to 26 m/s
    (docs/engine.md, "Robots resting on contacts").
    Measured with ``python -m multibody.bench.engine --solvers`` (one core): on settled box piles
    a pivoting step takes 0.02 ms at 12 rows, 0.07 ms at 24, 0.19 ms at 36, 0.54 ms at 48 and
    2.5 ms at 69 (1.8×, 3.8×, 7×, 15×, 38× the quick step), so 48 rows keeps a pivoting step
    under 1 ms, real time at the default ``dt``; on dense chains one factorization costs 0.8× to
    1.8× the quick step up to 100 rows (1.2 ms at 200).  So the OpenDE report's scenes
    (pendulums, box on a slope, the 10-link chain) are solved exactly, and a pile of boxes runs at
    the quick step's speed.  Every pivoting solve, asked for or chosen, stops after
    ``max_pivots`` pivots in a step (default 2000; a 48-row step takes about 110) and the quick
    step solves that step instead, so no step pivots without end (pivoting asked for on a large
    system stays slow: each pivot costs up to m³/6).  ``last_step.solver`` and
    ``last_step.why`` say which solver ran and why.

    The quick step's stop, ``tolerance`` (default 5e-5, relative): a warm-started pile at rest
    meets it after one to a few sweeps, a tumbling pile mostly needs all ``iterations``.  Chosen
    by measurement: 1e-4 let a sliding box in ``friction='force'`` mode lose a corner's contact
    (its acceleration 75 % off) while 5e-5 and tighter solve it as the full sweeps do; on the
    bench's 100-box pile (5 s from the drop) 5e-5 takes 31 sweeps a step on average, against 49
    for ``tolerance=0`` (``last_step.iterations``).

    Over-relaxation ``sor`` (default 1, plain Gauss-Seidel): 1.2 cuts the tumbling 100-box pile's
    sweeps from 31 to 26 a step with the same depths (2.8 mm at most, 0.09 mm once resting), but
    a resting stack of 5 boxes then needs 8.6 sweeps a step instead of 2.8 to meet ``tolerance``
    and ends with an 18× larger complementarity residual (3.3e-3 against 1.9e-4): the overshoot
    that speeds up a moving pile keeps a resting one from converging, so the default stays 1.

    >>> from multibody.engine import Box, Plane
    >>> w = World()
    >>> floor = w.add_geom(Plane((0, 0, 1), 0.0))
    >>> box = w.add_body(Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0.0999))
    >>> w.step(); (w.last_step.solver, w.last_step.why)      # 4 contacts, 12 rows
    ('dantzig', 'dantzig: auto, rows <= exact_rows')
    >>> w.exact_rows = 8; w.step(); w.last_step.solver
    'pgs'
    >>> w.run(100); w.last_step.iterations < w.iterations      # at rest: converged early
    True
    >>> w.tolerance = 0; w.step(); w.last_step.iterations      # ODE's fixed sweeps
    50
    """

    def __init__(self, gravity=(0.0, 0.0, -9.81), erp=0.2, cfm=1e-10, dt=1e-3, *, solver="auto",
                 iterations=50, tolerance=TOLERANCE, sor=1.0, friction="pyramid", bounce_vel=0.01, contact_erp=None, contact_cfm=None,
                 surface_layer=1e-4, max_correcting_vel=np.inf, max_speed=1e4, contacts=True,
                 exact_rows=EXACT_ROWS, max_pivots=MAX_PIVOTS):
        self._wpar = np.zeros(C.WP_SIZE)
        self.gravity = gravity
        self.erp, self.cfm, self.dt = erp, cfm, dt
        self.solver, self.iterations, self.sor, self.friction = solver, iterations, sor, friction
        self.tolerance = tolerance
        self.exact_rows, self.max_pivots = exact_rows, max_pivots
        self.bounce_vel = bounce_vel
        self.contact_erp = erp if contact_erp is None else contact_erp
        self.contact_cfm = cfm if contact_cfm is None else contact_cfm
        self.surface_layer, self.max_correcting_vel, self.max_speed = surface_layer, max_correcting_vel, max_speed
        self.contacts = contacts
        self._wpar[C.WP_TREE] = 1.0
        self._state = np.zeros((0, C.BS_SIZE))
        self._load = np.zeros((0, C.BL_SIZE))
        self._bprop = np.zeros((0, C.BP_SIZE))
        self._jint = np.zeros((0, C.JI_SIZE), dtype=np.int64)
        self._jdat = np.zeros((0, C.JD_SIZE))
        self._gint = np.zeros((0, C.GI_SIZE), dtype=np.int64)
        self._gdat = np.zeros((0, C.GD_SIZE))
        self._hulls = []                      # packed Convex hulls; a G_CONVEX geometry names its index
        self.bodies: list[Body] = []
        self.joints: list[Joint] = []
        self.geoms: list[Geom] = []
        self._meshes = {}                   # geom index -> (vertices in world, triangles)
        self._sim = None
        self._sim_nj = 0
        self._saved_angles = None
        self._coords = None
        self.time = 0.0
        self._model_map = None

    # ---- copies and pickles: independent worlds ----------------------------------------------
    def __getstate__(self):
        """Everything but the compiled step, which the copy rebuilds from the arrays on its first
        step (keeping the joints' whole turns, as after any change to the world). A copy continues
        bit for bit where there are no contacts; with contacts its solver starts cold (the
        original's warm start stays behind), so the two agree to the solver's tolerance."""
        state = dict(self.__dict__)
        if self._sim is not None and self._sim_nj:
            state["_saved_angles"] = self._sim.joint_coords()[0]
        state["_sim"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __copy__(self):
        """``copy.copy(world)`` is a whole copy: a shallow one would share the bodies' arrays, and a
        step of either world would move the other's bodies."""
        return copy.deepcopy(self)

    # ---- parameters (validated, stored in the array the C step reads) -------------------------
    def _param(k, check):  # noqa: N805  (property factory)
        def get(self):
            return float(self._wpar[k])

        def set_(self, value):
            self._wpar[k] = check(value)
        return property(get, set_)

    erp = _param(C.WP_ERP, _erp)
    cfm = _param(C.WP_CFM, lambda v: _nonneg("cfm", v))
    contact_erp = _param(C.WP_CONTACT_ERP, _erp)
    contact_cfm = _param(C.WP_CONTACT_CFM, lambda v: _nonneg("contact_cfm", v))
    bounce_vel = _param(C.WP_BOUNCE_VEL, lambda v: _nonneg("bounce_vel", v))
    surface_layer = _param(C.WP_SURFACE_LAYER, lambda v: _nonneg("surface_layer", v))
    max_correcting_vel = _param(C.WP_MAX_CORRECTING_VEL, lambda v: _nonneg("max_correcting_vel", v, allow_inf=True))
    sor = _param(C.WP_SOR, lambda v: _positive_num("sor", v))
    tolerance = _param(C.WP_TOLERANCE, lambda v: _checks.number("tolerance", v, lo=0, hi=1))
    max_speed = _param(C.WP_MAX_SPEED, lambda v: _positive_num("max_speed", v, allow_inf=True))
    del _param

    @property
    def dt(self):
        return float(self._wpar[C.WP_DT])

    @dt.setter
    def dt(self, value):
        self._wpar[C.WP_DT] = _dt(value)

    @property
    def gravity(self):
        return self._wpar[C.WP_GRAVITY:C.WP_GRAVITY + 3].copy()

    @gravity.setter
    def gravity(self, value):
        self._wpar[C.WP_GRAVITY:C.WP_GRAVITY + 3] = _vec("gravity", value)

    @property
    def solver(self):
        return {0: "dantzig", 1: "pgs", 2: "auto"}[int(self._wpar[C.WP_SOLVER])]

    @solver.setter
    def solver(self, value):
        if value not in _SOLVERS:
            raise ValueError(f"solver: expected one of {sorted(_SOLVERS)}, got {value!r}")
        self._wpar[C.WP_SOLVER] = _SOLVERS[value]

    @property
    def iterations(self):
        return int(self._wpar[C.WP_ITERATIONS])

    @iterations.setter
    def iterations(self, value):
        self._wpar[C.WP_ITERATIONS] = _checks.integer("iterations", value, lo=1)

    @property
    def exact_rows(self):
        """solver='auto': a step with at most this many constraint rows pivots exactly, a larger one
        takes the quick step (joint trees of equality rows are factored exactly at any size)."""
        return int(self._wpar[C.WP_EXACT_ROWS])

    @exact_rows.setter
    def exact_rows(self, value):
        self._wpar[C.WP_EXACT_ROWS] = _checks.integer("exact_rows", value, lo=0)   # constraint rows

    @property
    def max_pivots(self):
        """Pivots one step's exact solve may take (all its friction passes) before it stops and the
        quick step solves that step instead (``last_step.fallback`` 5)."""
        return int(self._wpar[C.WP_MAX_PIVOTS])

    @max_pivots.setter
    def max_pivots(self, value):
        self._wpar[C.WP_MAX_PIVOTS] = _checks.integer("max_pivots", value, lo=1, hi=2**31 - 1)

    @property
    def friction(self):
        return {v: k for k, v in _FRICTION.items()}[int(self._wpar[C.WP_FRICTION])]

    @friction.setter
    def friction(self, value):
        if value not in _FRICTION:
            raise ValueError(f"friction: expected one of {sorted(_FRICTION)}, got {value!r}")
        self._wpar[C.WP_FRICTION] = _FRICTION[value]

    @property
    def factor_trees(self):
        """Solve joint trees with only equality rows by the linear-time block factorization (default
        True); False sends them through dense pivoting (same λ, to compare)."""
        return bool(self._wpar[C.WP_TREE])

    @factor_trees.setter
    def factor_trees(self, value):
        self._wpar[C.WP_TREE] = 1.0 if value else 0.0

    @property
    def contacts(self):
        return bool(self._wpar[C.WP_CONTACTS])

    @contacts.setter
    def contacts(self, value):
        self._wpar[C.WP_CONTACTS] = 1.0 if value else 0.0

    # ---- building ----------------------------------------------------------------------------
    def _changed(self):
        if self._sim is not None and self._sim_nj:
            self._saved_angles = self._sim.joint_coords()[0]    # unwrapped, to keep whole turns
        self._sim = None

    def _body(self, body, what, allow_world=False):
        if body is None and allow_world:
            return None
        if isinstance(body, Body) and body._world is self:
            return body
        if isinstance(body, str):
            for b in self.bodies:
                if b.name == body:
                    return b
            raise ValueError(f"{what}: no body named {body!r}")
        if isinstance(body, (int, np.integer)) and 0 <= body < len(self.bodies):
            return self.bodies[body]
        raise ValueError(f"{what}: expected a Body of this world, its name or index{' or None (world)' if allow_world else ''}, "
                         f"got {body!r}")

    def add_body(self, shape=None, *, mass=None, density=None, inertia=None, position=(0, 0, 0),
                 quaternion=(1, 0, 0, 0), velocity=(0, 0, 0), angular_velocity=(0, 0, 0), name=None,
                 mu=1.0, bounce=0.0):
        """Add a body: a ``shape`` (Box, Sphere, Capsule, Cylinder) with ``mass`` or ``density``,
        or bare mass properties ``mass`` and ``inertia`` (about the centre of mass, body axes).
        The shape is centred on the centre of mass and also collides (surface ``mu``, ``bounce``)."""
        name = f"body{len(self.bodies)}" if name is None else str(name)
        if any(b.name == name for b in self.bodies):
            raise ValueError(f"name: a body named {name!r} exists already")
        if shape is not None:
            if not isinstance(shape, Shape) or isinstance(shape, (Plane, TriangleMesh, HField)):
                raise TypeError(f"shape: expected Box, Sphere, Capsule, Cylinder or Convex, got {shape!r}")
            if inertia is not None:
                raise ValueError("inertia: the shape gives the inertia; pass mass or density only")
            m, I = shape.mass_properties(mass=mass, density=density)
        else:
            if density is not None:
                raise ValueError("density: needs a shape")
            if mass is None or inertia is None:
                raise ValueError("mass, inertia: a body without a shape needs both")
            m = _positive_num(f"body {name!r} mass", mass)
            I = _inertia(f"body {name!r} inertia", inertia)
        I = _inertia(f"body {name!r} inertia", I)
        row = np.zeros(C.BS_SIZE)
        row[C.BS_POS:C.BS_POS + 3] = _vec(f"body {name!r} position", position)
        row[C.BS_QUAT:C.BS_QUAT + 4] = _quat(f"body {name!r} quaternion", quaternion)
        row[C.BS_VEL:C.BS_VEL + 3] = _vec(f"body {name!r} velocity", velocity)
        row[C.BS_OMEGA:C.BS_OMEGA + 3] = _vec(f"body {name!r} angular_velocity", angular_velocity)
        prop = np.zeros(C.BP_SIZE)
        prop[C.BP_MASS], prop[C.BP_INVMASS] = m, 1.0 / m
        prop[C.BP_I:C.BP_I + 9] = I.ravel()
        prop[C.BP_INVI:C.BP_INVI + 9] = np.linalg.inv(I).ravel()
        self._state = np.vstack([self._state, row])
        self._load = np.vstack([self._load, np.zeros(C.BL_SIZE)])
        self._bprop = np.vstack([self._bprop, prop])
        body = Body(self, len(self.bodies), name)
        self.bodies.append(body)
        self._changed()
        if shape is not None:     # centred on the centre of mass (a Convex's centroid may be elsewhere)
            self.add_geom(shape, body, position=-np.asarray(getattr(shape, "centroid", np.zeros(3))), mu=mu, bounce=bounce)
        return body

    def add_geom(self, shape, body=None, *, position=(0, 0, 0), quaternion=(1, 0, 0, 0), mu=1.0, bounce=0.0):
        """Add a collision geometry fixed to ``body`` (pose relative to its centre of mass, body
        axes) or static in the world (``body=None``, pose in world).  Planes are always static."""
        if not isinstance(shape, Shape):
            raise TypeError(f"shape: expected Box, Sphere, Capsule, Cylinder, Convex or Plane, got {shape!r}")
        b = self._body(body, "body", allow_world=True)
        if isinstance(shape, (Plane, TriangleMesh, HField)) and b is not None:
            raise ValueError(f"body: a {type(shape).__name__} is static; add it with body=None")
        gi = np.array([[shape.code, -1 if b is None else b.index]], dtype=np.int64)
        gd = np.zeros((1, C.GD_SIZE))
        gd[0, C.GD_POS:C.GD_POS + 3] = _vec("position", position)
        gd[0, C.GD_QUAT:C.GD_QUAT + 4] = _quat("quaternion", quaternion)
        gd[0, C.GD_SIZE3:C.GD_SIZE3 + 3] = shape.size
        if shape.code in (C.G_CONVEX, C.G_HFIELD):     # a height field's block rides in the hull list
            gd[0, C.GD_SIZE3] = len(self._hulls)
            self._hulls.append(shape.packed())
        gd[0, C.GD_MU] = _nonneg("mu", mu, allow_inf=True)
        gd[0, C.GD_BOUNCE] = _bounce(bounce)
        if isinstance(shape, Plane):
            gd[0, C.GD_PLANE_D] = shape.offset
        if isinstance(shape, TriangleMesh):       # kept in world coordinates: the mesh never moves
            R = quat_to_matrix(gd[0, C.GD_QUAT:C.GD_QUAT + 4])
            v = np.ascontiguousarray(shape.vertices @ R.T + gd[0, C.GD_POS:C.GD_POS + 3])
            self._meshes[len(self.geoms)] = (v, shape.triangles)
        self._gint = np.vstack([self._gint, gi])
        self._gdat = np.vstack([self._gdat, gd])
        g = Geom(self, len(self.geoms), shape, b)
        self.geoms.append(g)
        self._changed()
        return g

    def _joint_ends(self, name, body1, body2, what):
        """A new joint's name (unique; ``joint<k>`` by default) and its two bodies (body2 may be the
        world), refused by name where they clash."""
        name = f"joint{len(self.joints)}" if name is None else str(name)
        if any(j.name == name for j in self.joints):
            raise ValueError(f"name: a joint named {name!r} exists already")
        b1 = self._body(body1, "body1")
        b2 = self._body(body2, "body2", allow_world=True)
        if b2 is b1:
            raise ValueError(f"body2: {what} {name!r} would attach body {b1.name!r} to itself")
        return name, b1, b2

    def add_joint(self, kind, body1, body2=None, *, anchor=None, axis=None, axis2=None, name=None):
        """Join ``body1`` to ``body2`` (None: the static world) with anchor and axes in world
        coordinates at the bodies' current poses (``dJointCreate*``, ``dJointAttach``,
        ``dJointSet*Anchor/Axis``).  kind: ball, hinge, slider, fixed, universal, hinge2."""
        if kind not in _JOINTS:
            raise ValueError(f"kind: expected one of {sorted(_JOINTS)}, got {kind!r}")
        name, b1, b2 = self._joint_ends(name, body1, body2, "joint")
        for j in self.joints:
            if kind == "amotor" or j.kind == "amotor":       # a motor beside a joint, as in ODE
                continue
            if {j.body1.index, -1 if j.body2 is None else j.body2.index} == {b1.index, -1 if b2 is None else b2.index}:
                other = "the world" if b2 is None else repr(b2.name)
                raise ValueError(f"body1, body2: joint {j.name!r} already joins {b1.name!r} and {other}; "
                                 "a second joint on the same pair over-constrains it")
        R1, p1 = b1.rotation, b1.position
        R2, p2 = (np.eye(3), np.zeros(3)) if b2 is None else (b2.rotation, b2.position)
        q1 = b1.quaternion
        q2 = np.array([1.0, 0, 0, 0]) if b2 is None else b2.quaternion
        d = np.zeros(C.JD_SIZE)
        d[C.JD_ERP] = d[C.JD_CFM] = d[C.JD_SUSP_ERP] = d[C.JD_SUSP_CFM] = np.nan
        for a in range(2):
            o = C.JD_AXES + C.JA_SIZE * a
            d[o + C.JA_LO], d[o + C.JA_HI] = -np.inf, np.inf
            d[o + C.JA_STOP_ERP] = d[o + C.JA_STOP_CFM] = np.nan
        d[C.JD_QREL:C.JD_QREL + 4] = quat_mul(q2 * [1, -1, -1, -1], q1)
        needs_anchor = kind in ("ball", "hinge", "universal", "hinge2")
        needs_axis = kind in ("hinge", "slider", "universal", "hinge2")
        if needs_anchor:
            if anchor is None:
                raise ValueError(f"anchor: a {kind} joint needs an anchor point (world coordinates)")
            a = _vec("anchor", anchor)
        elif anchor is not None:
            raise ValueError(f"anchor: a {kind} joint takes no anchor")
        else:
            a = p1                                   # fixed: body 1's centre; slider: unused
        if needs_axis:
            if axis is None:
                raise ValueError(f"axis: a {kind} joint needs an axis (world coordinates)")
            u = _unit("axis", axis)
        elif axis is not None:
            raise ValueError(f"axis: a {kind} joint takes no axis")
        if kind in ("universal", "hinge2"):
            if axis2 is None:
                raise ValueError(f"axis2: a {kind} joint needs a second axis")
            u2 = _unit("axis2", axis2)
            if abs(u @ u2) > 1 - 1e-6:
                raise ValueError("axis, axis2: the two axes of a universal/hinge2 joint must not be parallel")
            d[C.JD_AXIS2:C.JD_AXIS2 + 3] = R2.T @ u2
            d[C.JD_DOT0] = u @ u2
        elif axis2 is not None:
            raise ValueError(f"axis2: a {kind} joint has one axis")
        d[C.JD_ANCHOR1:C.JD_ANCHOR1 + 3] = R1.T @ (a - p1)
        d[C.JD_ANCHOR2:C.JD_ANCHOR2 + 3] = R2.T @ (a - p2) if b2 is not None else a
        if needs_axis:
            d[C.JD_AXIS1:C.JD_AXIS1 + 3] = R1.T @ u
            d[C.JD_AXIS1_B2:C.JD_AXIS1_B2 + 3] = R2.T @ u
        d[C.JD_OFFSET:C.JD_OFFSET + 3] = R2.T @ (p1 - p2)
        self._jint = np.vstack([self._jint, np.array([[_JOINTS[kind], b1.index, -1 if b2 is None else b2.index]],
                                                     dtype=np.int64)])
        self._jdat = np.vstack([self._jdat, d])
        j = Joint(self, len(self.joints), kind, b1, b2, name)
        self.joints.append(j)
        self._changed()
        return j

    def add_ball(self, body1, body2=None, anchor=None, **kw):
        return self.add_joint("ball", body1, body2, anchor=anchor, **kw)

    def add_hinge(self, body1, body2=None, anchor=None, axis=None, **kw):
        return self.add_joint("hinge", body1, body2, anchor=anchor, axis=axis, **kw)

    def add_slider(self, body1, body2=None, axis=None, **kw):
        return self.add_joint("slider", body1, body2, axis=axis, **kw)

    def add_fixed(self, body1, body2=None, **kw):
        return self.add_joint("fixed", body1, body2, **kw)

    def add_universal(self, body1, body2=None, anchor=None, axis=None, axis2=None, **kw):
        return self.add_joint("universal", body1, body2, anchor=anchor, axis=axis, axis2=axis2, **kw)

    def add_hinge2(self, body1, body2=None, anchor=None, axis=None, axis2=None, **kw):
        return self.add_joint("hinge2", body1, body2, anchor=anchor, axis=axis, axis2=axis2, **kw)

    def add_amotor(self, body1, body2=None, *, mode="user", axes=((0.0, 0.0, 1.0),), frames=None, name=None):
        """Angular motor on body 1 relative to body 2 (None: the world), ``dJointCreateAMotor``.

        ``mode='user'``: ``axes`` 1 to 3 axes in world coordinates now, each fixed in the frame
        named by ``frames`` ('world', 'body1' or 'body2'; default 'body1').  ``mode='euler'``:
        ``axes`` = (axis 0 fixed in body 1, axis 2 fixed in body 2 or the world), perpendicular.
        Returns an :class:`AMotor`; its motors and stops start off."""
        mode = _checks.one_of("mode", mode, ("user", "euler"))
        name, b1, b2 = self._joint_ends(name, body1, body2, "AMotor")
        if isinstance(axes, np.ndarray):
            axes = list(axes)
        if not isinstance(axes, (list, tuple)):
            raise TypeError(f"axes: expected a list of 3-vectors, got {axes!r}")
        axes = [_unit(f"axes[{k}]", a) for k, a in enumerate(axes)]
        R1, q1 = b1.rotation, b1.quaternion
        R2 = np.eye(3) if b2 is None else b2.rotation
        q2 = np.array([1.0, 0, 0, 0]) if b2 is None else b2.quaternion
        d = np.zeros(C.JD_SIZE)
        d[C.JD_ERP] = d[C.JD_CFM] = d[C.JD_SUSP_ERP] = d[C.JD_SUSP_CFM] = np.nan
        for o in (C.JD_AXES, C.JD_AXES + C.JA_SIZE, C.JD_AM_AXIS3):
            d[o + C.JA_LO], d[o + C.JA_HI] = -np.inf, np.inf
            d[o + C.JA_STOP_ERP] = d[o + C.JA_STOP_CFM] = np.nan
        in_frame = {"world": np.eye(3), "body1": R1, "body2": R2}
        if mode == "user":
            if not 1 <= len(axes) <= 3:
                raise ValueError(f"axes: a user-mode AMotor has 1 to 3 axes, got {len(axes)}")
            frames = ["body1"] * len(axes) if frames is None else list(frames)
            if len(frames) != len(axes):
                raise ValueError(f"frames: expected one frame per axis ({len(axes)}), got {len(frames)}")
            for k, (a, f) in enumerate(zip(axes, frames)):
                f = _checks.one_of(f"frames[{k}]", f, ("world", "body1", "body2"))
                if f == "body2" and b2 is None:
                    f = "world"                              # body 2 is the world
                d[C.JD_AM_AXES + 3 * k:C.JD_AM_AXES + 3 * k + 3] = in_frame[f].T @ a
                d[C.JD_AM_REL + k] = {"world": 0, "body1": 1, "body2": 2}[f]
            d[C.JD_AM_NAXES] = len(axes)
        else:
            if frames is not None:
                raise ValueError("frames: an euler-mode AMotor fixes axis 0 in body 1 and axis 2 in body 2")
            if len(axes) != 2:
                raise ValueError(f"axes: an euler-mode AMotor takes (axis 0, axis 2), got {len(axes)} axes")
            a0, a2 = axes
            if abs(a0 @ a2) > 1e-6:
                raise ValueError(f"axes: euler mode needs axis 0 ⟂ axis 2, got a dot product of {a0 @ a2:.3g}")
            d[C.JD_AM_AXES:C.JD_AM_AXES + 3] = R1.T @ a0
            d[C.JD_AM_AXES + 6:C.JD_AM_AXES + 9] = R2.T @ a2
            d[C.JD_AM_REL:C.JD_AM_REL + 3] = (1, 0, 2)
            d[C.JD_AM_REF1:C.JD_AM_REF1 + 3] = R1.T @ a2
            d[C.JD_AM_REF2:C.JD_AM_REF2 + 3] = R2.T @ a0
            d[C.JD_AM_MODE], d[C.JD_AM_NAXES] = 1, 3
        d[C.JD_AM_QREL:C.JD_AM_QREL + 4] = quat_mul(q2 * [1, -1, -1, -1], q1)
        self._jint = np.vstack([self._jint, np.array([[C.J_AMOTOR, b1.index, -1 if b2 is None else b2.index]],
                                                     dtype=np.int64)])
        self._jdat = np.vstack([self._jdat, d])
        j = AMotor(self, len(self.joints), "amotor", b1, b2, name)
        self.joints.append(j)
        self._changed()
        return j

    # ---- rays ----------------------------------------------------------------------------------
    def ray_cast(self, origin, direction, max_distance=np.inf, *, all_hits=False):
        """The first geometry on the ray ``origin + t direction``, 0 ≤ t ≤ ``max_distance`` [m]:
        a :class:`RayHit` or None (``all_hits=True``: every geometry hit, nearest first, one hit
        each).  ``direction`` need not be unit.

        A ray starting inside a solid shape hits where it leaves it, with the normal negated
        (facing back along the ray), as ODE's rays; planes and triangle meshes are surfaces, hit
        from either side.  Touching counts.  Done in C, each geometry's bounding box first.

        >>> from multibody.engine import World, Sphere, Plane
        >>> w = World()
        >>> ball = w.add_body(Sphere(0.5), mass=1.0, position=(0, 0, 2))
        >>> floor = w.add_geom(Plane((0, 0, 1), 0.0))
        >>> hit = w.ray_cast((0, 0, 5), (0, 0, -1))
        >>> hit.body is ball, hit.point.round(6).tolist(), hit.normal.tolist(), hit.distance
        (True, [0.0, 0.0, 2.5], [0.0, 0.0, 1.0], 2.5)
        >>> [h.geom is floor for h in w.ray_cast((0, 0, 5), (0, 0, -1), all_hits=True)]
        [False, True]
        """
        o = _vec("origin", origin)
        u = _unit("direction", direction)
        tmax = _positive_num("max_distance", max_distance, allow_inf=True) if max_distance != 0 else 0.0
        if not self.geoms:
            return [] if all_hits else None
        ray, geom, t, nrm = self._ensure(need_bodies=False).ray_cast(o[None], u[None], tmax, bool(all_hits))
        hits = [RayHit(self.geoms[int(g)], o + ti * u, n, float(ti)) for g, ti, n in zip(geom, t, nrm)]
        hits.sort(key=lambda h: h.distance)
        return hits if all_hits else (hits[0] if hits else None)

    def ray_cast_many(self, origins, directions, max_distance=np.inf):
        """Nearest hits of many rays in one call: a dict of ``geom`` (n,) indices into
        ``world.geoms`` (−1: no hit), ``distance`` (n,) (inf: none), ``point`` and ``normal`` (n, 3)
        (NaN: none)."""
        o = _checks.array("origins", origins, (None, 3))
        u = _checks.array("directions", directions, (len(o), 3))
        length = np.linalg.norm(u, axis=1)
        if np.any(length < 1e-12):
            raise ValueError(f"directions: expected non-zero vectors, row {int(np.argmin(length))} is zero")
        u = np.ascontiguousarray(u / length[:, None])
        tmax = _positive_num("max_distance", max_distance, allow_inf=True) if max_distance != 0 else 0.0
        n = len(o)
        out = {"geom": np.full(n, -1, dtype=np.int64), "distance": np.full(n, np.inf),
               "point": np.full((n, 3), np.nan), "normal": np.full((n, 3), np.nan)}
        if not self.geoms or n == 0:
            return out
        ray, geom, t, nrm = self._ensure(need_bodies=False).ray_cast(np.ascontiguousarray(o), u, tmax, False)
        out["geom"][ray], out["distance"][ray], out["normal"][ray] = geom, t, nrm
        out["point"][ray] = o[ray] + t[:, None] * u[ray]
        return out

    # ---- stepping ------------------------------------------------------------------------------
    def _ensure(self, need_bodies=True):
        if self._sim is None:
            if not self.bodies and need_bodies:
                raise ValueError("World: add a body before stepping")
            bad = ~np.isfinite(self._state).all(axis=1)
            if bad.any():
                raise ValueError(f"body {self.bodies[int(np.argmax(bad))].name!r}: the state has NaN or infinite values")
            hulls = np.concatenate(self._hulls) if self._hulls else np.zeros(0)     # Convex shapes
            self._sim = C.Sim(self._state, self._load, self._bprop, self._jint, self._jdat, self._gint, self._gdat,
                              self._wpar, hulls)
            for g, (v, t) in self._meshes.items():
                self._sim.set_mesh(g, v, t)
            self._sim_nj = len(self.joints)
            if self._saved_angles is not None:               # a rebuild keeps the joints' whole turns
                saved = self._saved_angles
                turns = np.zeros((len(self.joints), 2))
                now = self._sim.joint_coords()[0][:len(saved)]
                turns[:len(saved)] = np.round((saved - now) / (2 * np.pi))
                self._sim.set_turns(turns)
                self._saved_angles = None
        return self._sim

    def _joints_changed(self):
        # the C step keeps which joints are free hinges and which have their own ERP/CFM; a change
        # to a joint's stops, motors or parameters moves this count, and the step looks again
        self._wpar[C.WP_JOINTS_VERSION] += 1

    def _check_state(self):
        if not np.isfinite(self._state).all():
            i = int(np.argmax(~np.isfinite(self._state).all(axis=1)))
            raise ValueError(f"body {self.bodies[i].name!r}: the state has NaN or infinite values")

    def step(self, dt=None):
        """Advance one step of ``dt`` (default ``world.dt``) seconds (``dWorldStep``)."""
        self.run(1, dt)

    def record(self, t_final, every=1):
        """Step for ``t_final`` seconds and return the motion for the browser viewer
        (:func:`multibody.engine.recording.record`): ``mb.view.showmotion(world.record(2.0))``."""
        from .recording import record
        return record(self, t_final, every)

    def run(self, n, dt=None):
        """Advance ``n`` steps in one call into C."""
        h = self.dt if dt is None else _dt(dt)
        n = _checks.integer("n", n, lo=0)
        sim = self._ensure()
        self._check_state()
        self._coords = None
        steps0 = sim.steps()
        try:
            sim.step(h, int(n))
        except C.SimulationError as e:  # the C step's private signal; users get errors.SimulationError
            msg, body, step = e.args
            self._last = None
            raise SimulationError(f"simulation stopped at step {step}: body {self.bodies[body].name!r}: {msg} "
                                  "(state kept from before that step)", body=self.bodies[body], step=step) from None
        finally:   # Ctrl-C (or an error) stops between steps: the clock counts the steps taken
            self._coords = None
            self.time += (sim.steps() - steps0) * h

    @property
    def last_step(self):
        """:class:`LastStep` of the most recent step (Jacobian, λ, contact forces, residual)."""
        if self._sim is None:
            raise ValueError("last_step: no step has been taken since the world was built or changed")
        return LastStep(**{("lam" if k == "lambda" else k): v for k, v in self._sim.last_step().items()})

    def collide(self):
        """Run collision detection alone at the current poses: dict of contact arrays."""
        return self._ensure().collide()

    def _joint_coords(self):
        if self._coords is None:
            self._coords = self._ensure().joint_coords()
        return self._coords

    def joint_error(self, joint):
        """World distance between the joint's two anchor points (ball, hinge, universal, hinge2) [m]."""
        j = joint if isinstance(joint, Joint) else self.joints[joint]
        d = self._jdat[j.index]
        a1 = j.body1.point(d[C.JD_ANCHOR1:C.JD_ANCHOR1 + 3])
        a2 = d[C.JD_ANCHOR2:C.JD_ANCHOR2 + 3] if j.body2 is None else j.body2.point(d[C.JD_ANCHOR2:C.JD_ANCHOR2 + 3])
        return a2 - a1

    def energy(self):
        """Kinetic plus potential energy of all bodies [J]."""
        return float(sum(b.energy(self.gravity) for b in self.bodies))

    # ---- generalized coordinates ---------------------------------------------------------------
    @classmethod
    def from_model(cls, model, q, qd=None, **world_kw):
        """Bodies and joints of a tree :class:`~multibody.Model` at ``q``, ``qd`` (default zero).

        Revolute → hinge, prismatic → slider, spherical → ball, fixed → fixed, free → no joint.
        ``joint_positions()``/``joint_velocities()`` map the state back, so one mechanism runs
        both ways (the report's ch. 5 comparison).  The model's joint limits become stops, its
        joint damping :meth:`Joint.set_damping` and its Coulomb friction a motor holding the rate
        at zero with at most that force (``mb.simulate`` applies both too); its
        collision shapes become geometries, meshes as their convex hulls (:class:`Convex`, read by
        trimesh; a mesh it cannot read is left out with a warning), all in one collision group
        unless ``self_collision=True`` (a robot's meshes often overlap where links meet)."""
        from .from_model import build_world
        return build_world(cls, model, q, qd, **world_kw)

    def joint_positions(self):
        """q of the Model this world was made from (:meth:`from_model`)."""
        if self._model_map is None:
            raise ValueError("joint_positions: this world was not made by World.from_model")
        return self._model_map.positions(self)

    def joint_velocities(self):
        """q̇ of the Model this world was made from (:meth:`from_model`)."""
        if self._model_map is None:
            raise ValueError("joint_velocities: this world was not made by World.from_model")
        return self._model_map.velocities(self)

    def __repr__(self):
        return f"World({len(self.bodies)} bodies, {len(self.joints)} joints, {len(self.geoms)} geoms, t={self.time:g})"


def _positive_num(name, value, allow_inf=False):
    return _checks.number(name, value, positive=True, allow_inf=allow_inf)


def _dt(value):
    return _checks.number("dt", value, positive=True)
