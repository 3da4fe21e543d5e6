"""Compliant ground contact: spatial_v2's ``gcPosVel``, ``gcontact`` and ``gcFD`` (Simulink ground-contact model).

The ground is the plane z = 0 with z up (planar models: the x axis, y up).  A set of np
**contact points** is fixed in the bodies; each is a (body, point) pair.  On a model they are
stored as frames whose names start with ``"gc"`` (``Model.frames``: ``add_frame("gc0", body,
translation=point)``), the seed's ``model.gc.body`` / ``model.gc.point``; frames move with their
bodies through ``floatbase``.  :func:`contact_points` reads them back; every function here also
takes explicit ``points``.

The force law (``gcontact``) is the nonlinear spring–damper of Azad & Featherstone (ACRA 2010)
applied to points.  With depth d = −z and z̊ the normal velocity::

    f_n = √d (K d − D ż)            (clipped at 0: the ground only pushes)

and friction from a tangential ground deformation u (a state, 1 or 2 per point)::

    sticking:  f_t = −√d (K u + D u̇),   u̇ = ṗ_t (the ground moves with the point)
    sliding:   |f_t| would exceed μ f_n → f_t scaled to μ f_n, u̇ from the same law
    no contact: f = 0, u̇ = −(K/D) u (the ground relaxes)

``fcone = |f_t| / (μ f_n)``: a point is in contact when f_n > 0 and sticking when fcone ≤ 1.
Units: K in N/m^1.5 and D in N·s/m^1.5 (the √d factor makes the law nonlinear);
:func:`contact_parameters` picks them from physical quantities — the weight a point carries,
the static penetration depth and a damping ratio.

:class:`GroundContact` is the object ``mb.simulate(..., contact=...)`` calls::

    n_states; initial_state(model, q, qd) -> z0; forces(model, q, qd, z) -> (f_ext, zdot, info)

Example
-------
>>> import numpy as np, multibody as mb
>>> f = mb.gcontact(1e5, 1e3, 0, np.array([-1e-3, 0.01]), np.array([0.0, 0.0]))   # frictionless
>>> f.round(6).tolist()                                           # 1e5 · (1e-3)^1.5, and no contact
[3.162278, 0.0]
"""
from __future__ import annotations

import math

import numpy as np

from .. import _checks
from ..core import _core
from ..kinematics.forward import body_states

__all__ = ["GC_PREFIX", "contact_points", "gc_pos_vel", "gc_pos_vel_fb", "gcontact",
           "contact_parameters", "point_forces_to_f_ext", "gc_fd", "GroundContact", "SceneContact",
           "lightest_contact", "surface_points"]

GC_PREFIX = "gc"   # frames named gc0, gc1, … (any name starting with "gc") are ground-contact points


# ------------------------------------------------------------------------------------ points
def contact_points(model):
    """(bodies (np,), points (np, 3)) of the model's ground-contact frames (names starting ``gc``).

    The frame's translation is the point in body coordinates (spatial_v2 ``model.gc.point``).
    """
    fr = [f for f in model.frames if f.name.startswith(GC_PREFIX)]
    if not fr:
        raise ValueError(f"model: has no ground-contact points (frames named {GC_PREFIX!r}…); "
                         "add them with ModelBuilder.add_frame('gc0', body, translation=point) or pass points=")
    return np.array([f.body for f in fr], dtype=np.int64), np.array([f.translation for f in fr], dtype=float)


def _resolve_points(model, points):
    if points is None:
        return contact_points(model)
    if isinstance(points, tuple) and len(points) == 2 and np.ndim(points[1]) == 2:
        bodies, pts = points
        bodies = [model.body_index(b) for b in np.atleast_1d(bodies)]
    else:
        try:
            pairs = [(b, p) for b, p in points]
        except (TypeError, ValueError):
            raise TypeError(f"points: expected (body, point) pairs or (bodies, points (np, 3)), got "
                            f"{type(points).__name__}") from None
        bodies = [model.body_index(b) for b, _ in pairs]
        pts = [p for _, p in pairs]
    pts = _checks.array("points", pts, None)
    if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] != len(bodies) or len(bodies) == 0:
        raise ValueError(f"points: expected np ≥ 1 points of 3 coordinates, one body each; got {pts.shape} "
                         f"for {len(bodies)} bodies")
    if any(b < 0 for b in bodies):
        raise ValueError("points: a contact point must be fixed in a body, not in the fixed base")
    return np.asarray(bodies, dtype=np.int64), pts


def _nd(model):
    return 2 if model.planar else 3


def _cross_rows(a, b):
    """Row-wise a × b for (n, 3) arrays (np.cross spends microseconds on argument handling)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def _world_points(R, p, v, bodies, pts):
    """World positions and velocities of points from body poses and body-coordinate velocities."""
    Rb = R[bodies]                                             # (np, 3, 3)
    w, vo = v[bodies, :3], v[bodies, 3:]
    pos = p[bodies] + np.einsum("nij,nj->ni", Rb, pts)
    vel = np.einsum("nij,nj->ni", Rb, vo + _cross_rows(w, pts))
    return pos, vel


def gc_pos_vel(model: Model, q: ArrayLike, qd: ArrayLike, points: tuple | None = None) -> NDArray[np.float64]:
    """spatial_v2 ``gcPosVel``: positions and linear velocities of the ground-contact points.

    Parameters
    ----------
    model : Model
        The mechanism.
    q, qd : array_like, shape (nq,) and (nv,)
        Configuration and joint velocities.
    points : tuple of (bodies, points), optional
        The contact points: body indices (np,) and points in body coordinates (np, 3); by default
        the model's frames named ``gc…`` (:func:`contact_points`).

    Returns
    -------
    ndarray, shape (2·nd, np)
        In base coordinates: the top nd rows are positions (m), the bottom nd rows velocities
        (m/s); nd = 3, or 2 for planar models (x and y).

    Raises
    ------
    ValueError
        The model has no ground-contact points and none are given, or a wrong shape.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.rolling_disc(8)
    >>> q = m.neutral(); q[2] = 0.5                                  # disc centre 0.5 m up
    >>> pv = mb.gc_pos_vel(m, q, np.zeros(6))
    >>> pv.shape, bool(np.allclose(pv[3:], 0))
    ((6, 16), True)
    """
    model._require_numeric()
    bodies, pts = _resolve_points(model, points)
    s = body_states(model, q, qd)
    if s.p.ndim != 2:
        raise ValueError("q, qd: gc_pos_vel takes one state (1-D q and qd)")
    pos, vel = _world_points(s.R, s.p, s.v, bodies, pts)
    nd = _nd(model)
    return np.concatenate([pos[:, :nd].T, vel[:, :nd].T])




def gc_pos_vel_fb(model, xfb, q=None, qd=None, points=None):
    """``gcPosVel(model, xfb, q, qd)`` for a floatbase model driven by ``fd_fb``.

    ``xfb`` = [qn; r; vfb] (13) as in :func:`multibody.fd_fb`; ``q``, ``qd`` the real joints
    (omit both when the floating base is the only body).  The chain's emulated coordinates are
    not used for velocities, so this is singularity-free like FDfb itself.
    """
    from ..dynamics.floating import check_floatbase_model, fbkin_inverse
    check_floatbase_model(model)
    x = np.asarray(xfb, dtype=float)
    if x.shape != (13,) or not np.all(np.isfinite(x)):
        raise ValueError(f"xfb: expected 13 finite numbers [qn; r; vfb], got shape {x.shape}")
    nreal = model.nv - 6
    q = np.zeros(nreal) if q is None else np.asarray(q, dtype=float)
    qd = np.zeros(nreal) if qd is None else np.asarray(qd, dtype=float)
    if q.shape != (model.nq - 6,) or qd.shape != (nreal,):
        raise ValueError(f"q, qd: expected shapes ({model.nq - 6},), ({nreal},) for the real joints")
    bodies, pts = _resolve_points(model, points)
    q6 = fbkin_inverse(x[:7])                      # chain angles for the pose only
    s = body_states(model, np.concatenate([q6, q]), np.concatenate([np.zeros(6), qd]))
    pos, vel_rel = _world_points(s.R, s.p, s.v, bodies, pts)   # base held still: relative velocities
    w, vO = x[7:10], x[10:13]                       # vfb in fixed coordinates
    vel = vel_rel + vO + np.cross(w, pos)
    return np.concatenate([pos.T, vel.T])


# ------------------------------------------------------------------------------------ forces
def _pos_scalar(name, v, allow_zero=False):
    return _checks.number(name, v, nonneg=allow_zero, positive=not allow_zero)


def gcontact(K: float, D: float, mu: float, p: ArrayLike, pd: ArrayLike, u: ArrayLike | None = None
            ) -> NDArray[np.float64] | tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """spatial_v2 ``gcontact``: ground-reaction forces on points against a compliant ground.

    The normal force is K z^1.5 + D z^0.5 ż (a Hunt–Crossley law, z the penetration), the
    tangential one a spring–damper on the deformation u, held inside the friction cone; see the
    module docstring.

    Parameters
    ----------
    K : float
        Stiffness, N/m^1.5, > 0.
    D : float
        Damping, N·s/m^1.5, > 0 (≥ 0 frictionless).
    mu : float
        Coulomb friction coefficient ≥ 0 (0: frictionless).
    p, pd : array_like, shape (nd, np) (with friction) or (np,) (frictionless)
        Positions and velocities of the points (nd = 2 or 3, the last row normal), or only their
        normal components when frictionless.
    u : array_like, shape (nd − 1, np), optional
        The tangential deformations (with friction).

    Returns
    -------
    f : ndarray, shape (nd, np) or (np,)
        Forces on the points, N.
    ud : ndarray, shape (nd − 1, np)
        Rates of the tangential deformations (with friction only).
    fcone : ndarray, shape (np,)
        > 1 where a point slides (on the cone), (with friction only).

    Raises
    ------
    ValueError
        K or D not finite and positive, a negative ``mu``, or mismatched shapes.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> p = np.array([[0.0], [0.0], [-1e-3]]); pd = np.array([[0.1], [0.0], [0.0]])
    >>> f, ud, fcone = mb.gcontact(1e5, 1e3, 0.5, p, pd, np.zeros((2, 1)))
    >>> bool(fcone[0] > 1 and np.isclose(np.hypot(*f[:2, 0]), 0.5 * f[2, 0]))   # sliding: on the cone
    True
    """
    K = _pos_scalar("K", K)
    mu = _pos_scalar("mu", mu, allow_zero=True)
    D = _pos_scalar("D", D, allow_zero=(mu == 0))
    p = np.asarray(p, dtype=float)
    pd = np.asarray(pd, dtype=float)
    if p.shape != pd.shape:
        raise ValueError(f"p, pd: shapes differ: {p.shape} and {pd.shape}")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(pd))):
        raise ValueError("p, pd: contain NaN or inf")
    if mu == 0:
        if not (p.ndim == 1 or (p.ndim == 2 and p.shape[0] == 1)):
            raise ValueError(f"p: the frictionless call takes normal components (np,) or (1, np), got {p.shape}")
        z, zd = p, pd
        depth = np.maximum(0.0, -z)
        return np.maximum(0.0, np.sqrt(depth) * (K * depth - D * zd))
    if p.ndim != 2 or p.shape[0] not in (2, 3):
        raise ValueError(f"p: expected shape (nd, np) with nd = 2 or 3, got {p.shape}")
    nd, npt = p.shape
    u = np.zeros((nd - 1, npt)) if u is None else np.asarray(u, dtype=float)
    if u.shape != (nd - 1, npt):
        raise ValueError(f"u: expected shape ({nd - 1}, {npt}) (tangential deformations), got {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ValueError("u: contains NaN or inf")
    z, zd = p[-1], pd[-1]
    zr = np.sqrt(np.maximum(0.0, -z))
    fn = zr * (-K * z - D * zd)
    # (1) values for points out of contact
    f = np.zeros((nd, npt))
    ud = (-K / D) * u
    fcone = np.full(npt, 2.0)                      # any value > 1: not sticking
    c = fn > 0
    if np.any(c):
        # (2a) sticking: the ground deforms with the point
        fnc = fn[c]
        udc = pd[:-1, c].copy()
        Kc, Dc = K * zr[c], D * zr[c]
        fK = Kc * u[:, c]
        ftc = -fK - Dc * udc
        # (2b) sliding: scale the tangential force back onto the friction cone
        fconec = np.sqrt(np.sum(ftc ** 2, axis=0)) / (mu * fnc)
        s = fconec > 1
        if np.any(s):
            fts = ftc[:, s] / fconec[s]
            ftc[:, s] = fts
            udc[:, s] = -(fts + fK[:, s]) / Dc[s]
        # (2c)
        f[:-1, c] = ftc
        f[-1, c] = fnc
        ud[:, c] = udc
        fcone[c] = np.minimum(2.0, fconec)
    return f, ud, fcone


def contact_parameters(mass: float, depth: float, damping_ratio: float = 1.0, gravity: float = 9.81,
                       n_points: int = 1) -> tuple[float, float]:
    """(K, D) of :func:`gcontact` from physical quantities.

    ``mass`` resting on ``n_points`` points sinks ``depth`` at equilibrium: K d^1.5 = m g / n.
    Linearised about that depth the contact is a spring k = 1.5 K √d and a damper c = D √d on the
    mass m/n; ``damping_ratio`` ζ sets c = 2ζ√(k m/n).

    Parameters
    ----------
    mass : float
        The mass carried, kg, > 0.
    depth : float
        The penetration at rest, m, > 0.
    damping_ratio : float, optional
        ζ of the linearised contact (default 1, critical).
    gravity : float, optional
        g, m/s².
    n_points : int, optional
        The points sharing the load.

    Returns
    -------
    K : float
        Stiffness, N/m^1.5.
    D : float
        Damping, N·s/m^1.5.

    Raises
    ------
    ValueError
        An argument that is not a finite positive number.

    Example
    -------
    >>> import multibody as mb
    >>> K, D = mb.contact_parameters(1.0, 1e-3)
    >>> round(K * 1e-3 ** 1.5, 6)                        # carries 1 kg at 1 mm
    9.81
    """
    m = _pos_scalar("mass", mass)
    d = _pos_scalar("depth", depth)
    z = _pos_scalar("damping_ratio", damping_ratio, allow_zero=True)
    g = _pos_scalar("gravity", gravity)
    n = _checks.integer("n_points", n_points, lo=1)
    K = m * g / n / d ** 1.5
    k = 1.5 * K * math.sqrt(d)
    D = 2.0 * z * math.sqrt(k * m / n) / math.sqrt(d)
    return K, D


def point_forces_to_f_ext(model, bodies, pos, forces):
    """Spatial forces (nb, 6) in base coordinates from linear forces at world points.

    Row b sums [p × f; f] over the points on body b (spatial_v2 ``Fpt`` then summation).
    """
    fs = np.concatenate([np.cross(pos, forces), forces], axis=1)
    f_ext = np.zeros((model.nb, 6))
    np.add.at(f_ext, bodies, fs)
    return f_ext


def gc_fd(model: Model, fd: Callable, *args, gc_forces: ArrayLike | None = None, points: tuple | None = None
         ) -> NDArray[np.float64]:
    """spatial_v2 ``gcFD``: call a forward-dynamics function with ground-contact forces as f_ext.

    Parameters
    ----------
    model : Model
        The mechanism.
    fd : callable
        ``mb.aba``, ``mb.fd_crb``, ``mb.fd_gq`` (arguments ``q, qd, tau``) or ``mb.fd_fb``
        (arguments ``xfb, q, qd, tau``).
    *args
        The arguments of ``fd`` after the model.
    gc_forces : array_like, shape (np, nd), optional
        The point forces of :func:`gcontact`, transposed (one row per point), N.
    points : tuple of (bodies, points), optional
        The contact points: body indices (np,) and points in body coordinates (np, 3); by default
        the model's frames named ``gc…`` (:func:`contact_points`).

    Returns
    -------
    ndarray
        ``fd``'s result; for ``fd_fb`` the concatenation of x̃ḋfb and q̈, as in the seed.

    Raises
    ------
    ValueError
        The model has no ground-contact points and none are given, or ``gc_forces`` of the wrong
        shape.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.rolling_disc(8)
    >>> q, v = m.neutral(), np.zeros(6)
    >>> lift = np.zeros((16, 3)); lift[:, 2] = m.mass.sum() * 9.81 / 16   # the ground carries the disc
    >>> bool(np.abs(mb.gc_fd(m, mb.aba, q, v, np.zeros(6), gc_forces=lift)).max() < 1e-12)
    True
    """
    from ..dynamics.floating import fd_fb
    bodies, pts = _resolve_points(model, points)
    f_ext = None
    if gc_forces is not None:
        F = np.asarray(gc_forces, dtype=float)
        nd = _nd(model)
        if F.shape != (len(bodies), nd):
            raise ValueError(f"gc_forces: expected shape ({len(bodies)}, {nd}), got {F.shape}")
        if fd is fd_fb:
            pv = gc_pos_vel_fb(model, *args[:3], points=(bodies, pts)) if len(args) >= 3 else \
                gc_pos_vel_fb(model, args[0], points=(bodies, pts))
        else:
            pv = gc_pos_vel(model, args[0], args[1], points=(bodies, pts))
        pos = _lift(pv[:nd].T)
        f_ext = point_forces_to_f_ext(model, bodies, pos, _lift(F))
    out = fd(model, *args, f_ext=f_ext)
    if fd is fd_fb:
        xd, qdd = out
        return np.concatenate([xd, qdd])
    return out




def _lift(a2):
    """(n, 2) planar vectors → (n, 3) with z = 0; (n, 3) unchanged."""
    if a2.shape[1] == 3:
        return a2
    return np.concatenate([a2, np.zeros((a2.shape[0], 1))], axis=1)


class GroundContact:
    """Compliant ground contact for ``mb.simulate(..., contact=GroundContact(model, K, D, mu))``.

    ``points`` defaults to the model's ``gc`` frames.  ``mu = 0`` is the frictionless variant
    (no states); otherwise the tangential deformations u ((nd−1)·np states, point by point) are
    integrated with the state.  ``K``, ``D`` as in :func:`gcontact` (see
    :func:`contact_parameters`).  ``forces`` returns ``info`` with ``"force"`` (np, 3) ground
    reactions in world coordinates, ``"position"`` (np, 3), ``"in_contact"`` and ``"sticking"``
    (np,) booleans.

    ``forces`` runs in the C core (``csrc/sim/contact.c``: gcPosVel, gcontact and Fpt for all points
    in one call, the same law as :func:`gcontact`), so a call costs a few microseconds.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> disc = mb.models.rolling_disc(8)
    >>> K, D = mb.contact_parameters(1.0, 1e-3, n_points=2)
    >>> contact = GroundContact(disc, K, D, mu=0.5)
    >>> q = disc.neutral()
    >>> q[2] = -mb.gc_pos_vel(disc, q, np.zeros(6))[2].min() - 1e-3    # lowest points 1 mm deep
    >>> f_ext, zdot, info = contact.forces(disc, q, np.zeros(6), np.zeros(contact.n_states))
    >>> int(info["in_contact"].sum()), bool(np.isclose(f_ext[0, 5], 9.81))   # 2 points carry 1 kg
    (2, True)
    """

    def __init__(self, model, K, D, mu=0.0, points=None):
        model._require_numeric()
        self.K = _pos_scalar("K", K)
        self.mu = _pos_scalar("mu", mu, allow_zero=True)
        self.D = _pos_scalar("D", D, allow_zero=(self.mu == 0))
        bodies, pts = _resolve_points(model, points)
        self.bodies = np.ascontiguousarray(bodies, dtype=np.int64)
        self.points = np.ascontiguousarray(pts, dtype=float)
        self.nd = _nd(model)
        self.np = len(self.bodies)
        self.n_states = (self.nd - 1) * self.np if self.mu > 0 else 0
        self._nb = model.nb
        self._no_states = np.zeros(0)

    def initial_state(self, model, q, qd):
        """Undeformed ground: u = 0."""
        return np.zeros(self.n_states)

    def check_step(self, model, dt, integrator, q0):
        """Refuse a fixed step the contact outruns (the points law is explicit under every stepper),
        as :meth:`SceneContact.check_step`: the law linearised where one point carries the model's
        whole weight, on the least effective mass of a point along the floor's normal at the run's
        start ``q0`` (1/(J_z M⁻¹ J_zᵀ)).  solo12 on contact_parameters(2.5 kg, 1 mm, 4 points) used
        to hop for the whole run at 1 ms and at 0.5 ms RK4, silently (this bound: 0.39 ms; it rests
        at 0.25 ms), while StarlETH's stance, heavier at its feet, is quiet at 1 ms (bound 15 ms)."""
        from ..dynamics.derivatives import minv
        from ..kinematics.jacobians import body_jacobian
        Minv = minv(model, q0)
        lightest = None
        for b, p in zip(self.bodies, self.points):
            jz = body_jacobian(model, q0, int(b), point=p)[5]
            mobility = float(jz @ Minv @ jz)
            if mobility > 0 and (lightest is None or 1.0 / mobility < lightest[1]):
                lightest = (int(b), 1.0 / mobility)
        if lightest is not None:
            weight = model_weight(model)
            _check_contact_step(model, dt, integrator, self.K, self.D, weight, *lightest,
                                "along the floor's normal at the start",
                                "a softer contact (mb.contact_parameters with a deeper depth or less damping)")

    def forces(self, model, q, qd, z=None):
        """(f_ext (nb, 6), zdot (n_states,), info) at one state; ``z`` the tangential deformations."""
        if model.nb != self._nb:
            raise ValueError("model: not the model this GroundContact was built for")
        if z is None:
            z = self._no_states if self.n_states == 0 else np.zeros(self.n_states)
        f_ext, zdot, F, pos, in_contact, sticking = _core.ground_contact(
            model._c, q, qd, z, self.bodies, self.points, self.nd, self.K, self.D, self.mu)
        info = {"force": F, "position": pos, "in_contact": in_contact, "sticking": sticking}
        return f_ext, zdot, info

    def forces_fb(self, model, xfb, q=None, qd=None, z=None):
        """:meth:`forces` for a floatbase model driven by ``fd_fb`` (state ``xfb``, real joints q, q̇).

        Positions and velocities come from :func:`gc_pos_vel_fb` (singularity-free), the law from
        :func:`gcontact`; returns (f_ext (nb, 6), zdot, info) like :meth:`forces`.
        """
        if self.nd != 3:
            raise ValueError("model: FDfb works only with spatial models")
        pv = gc_pos_vel_fb(model, xfb, q, qd, points=(self.bodies, self.points))
        pos, vel = pv[:3].T, pv[3:].T
        if self.mu == 0:
            F = np.zeros((self.np, 3))
            F[:, 2] = gcontact(self.K, self.D, 0.0, pos[:, 2], vel[:, 2])
            zdot, sticking = np.zeros(0), np.zeros(self.np, dtype=bool)
        else:
            z = np.zeros(self.n_states) if z is None else np.asarray(z, dtype=float)
            if z.shape != (self.n_states,):
                raise ValueError(f"z: expected {self.n_states} contact states, got shape {z.shape}")
            f, ud, fcone = gcontact(self.K, self.D, self.mu, pos.T, vel.T, z.reshape(self.np, 2).T)
            F, zdot, sticking = f.T.copy(), ud.T.reshape(-1), (fcone <= 1) & (f[2] > 0)
        info = {"force": F, "position": pos, "in_contact": F[:, 2] > 0, "sticking": sticking}
        return point_forces_to_f_ext(model, self.bodies, pos, F), zdot, info


from numpy.typing import ArrayLike, NDArray
from typing import Callable

from ..model.model import Model
#: the default static depth (m) the model's weight sinks on one contact, and damping ratio
SCENE_DEPTH, SCENE_DAMPING_RATIO = 1e-3, 1.0
#: the deepest the default may sink to fit an explicit step (m): past it the floor no longer reads as rigid,
#: and the step is refused instead (:meth:`SceneContact.check_step` names the step that works)
SCENE_MAX_DEPTH = 1e-2
STEP_MARGIN = 0.6   # a softened default's contact mode takes this share of the stepper's stable bound: at 0.9 a box
#                     dropped on its corners rocked for seconds (RK4 at 2–5 ms) and RK3 threw it 20 cm up


def _explicit_step(step):
    """``step`` = (dt, integrator) as (dt, the stepper's stable bound ``STABLE_DECAY``), None for None;
    anything else refused by name."""
    from .rollout import STABLE_DECAY
    if step is None:
        return None
    if not (isinstance(step, tuple) and len(step) == 2 and step[1] in STABLE_DECAY):
        raise ValueError(f"step: expected (dt, integrator) with integrator one of {', '.join(STABLE_DECAY)}, "
                         f"got {step!r}")
    return _pos_scalar("step: dt", step[0]), STABLE_DECAY[step[1]]


def model_weight(model):
    """The model's whole weight m |g| under its own gravity (a file in centimetres and grams has g = 981: the
    law's default stiffness scales with it), Earth's 9.81 where it has none (a law still needs a scale)."""
    g = float(np.linalg.norm(model.gravity))
    return max(float(np.sum(model.mass)), 1e-9) * (g if g > 0 else 9.81)


def _default_law(weight, depth, m):
    """(K, D) of the default law: the whole ``weight`` on one contact sinks ``depth``, and the contact is
    critically damped (``SCENE_DAMPING_RATIO``) there on the effective mass ``m``."""
    K = weight / depth ** 1.5
    return K, 2.0 * SCENE_DAMPING_RATIO * math.sqrt(1.5 * K * math.sqrt(depth) * m) / math.sqrt(depth)


def _refuse_an_unmet_floor(model, ground, geoms):
    """A floor asked for (``ground``) must meet some body's collision geometry: a URDF without
    <collision> elements fell through it silently, its run 'finished' in free fall."""
    if ground is not False and ground is not None and not len(geoms.pairs):
        raise ValueError(f"ground: no body of model {model.name!r} has collision geometry the floor can meet "
                         f"(URDF <collision>, MJCF geoms with contype/conaffinity): it would fall through "
                         f"the floor; add collision geometry, or contact points with "
                         f"contact=mb.GroundContact(model, K, D, mu, points=[(body, point), ...])")


class SceneContact:
    """The model's own collision geometry under the compliant law, the contact ``mb.simulate`` takes
    by default for a model whose geoms include a floor (``Model.geoms``; ``ground=`` adds one).

    Each stage collides the candidate pairs (``mb.contacts``: the engine's narrow phase) and applies
    the law of ``mb.contact_forces`` (this module's ground law along each contact's normal).  The
    tangential deformation u of every contact point is a state in z with a fixed layout: slot
    ``geoms.slot_start[p] + k`` (2 numbers) belongs to point k of candidate pair p (a slot per point its
    collider can report: ``Geoms.slot_start``) — its feature where the collider names fixed points (a
    box's corner, a capsule's end on a plane: ``Contacts.slot``, so a point keeps its deformation as the
    others touch down), else the k-th point reported; a slot
    without a contact relaxes as the ground law's released point does
    (u̇ = −(K/D) u, to 0).  ``stiffness`` defaults to the model's whole weight sinking one contact
    ``SCENE_DEPTH`` (1 mm), ``damping`` to critical damping (``SCENE_DAMPING_RATIO``) of that
    contact on the lightest contacting body (:func:`lightest_contact`): heavier modes ring a little
    longer, none chatters.  ``step=(dt, integrator)``, an explicit fixed step the law will be taken in
    (``simulate`` passes its own unless the law is implicit in it, as under ``semi_implicit``): where
    :meth:`check_step` would refuse that step for the 1 mm contact, the default sinks deeper, as far as
    ``SCENE_MAX_DEPTH`` (1 cm), as MuJoCo softens a contact whose ``solref`` time constant is under two steps,
    so that a file's own RK4 step runs as MuJoCo runs it (:meth:`_default_depth` says how deep; a run's
    ``traj.passive`` says so).  ``depth`` is the default's static depth (None for a stiffness given).
    ``simulate`` refuses a fixed step this contact mode outruns (:meth:`check_step`).  The compiled loop
    runs it in C (``rollout.Contact.scene``); :meth:`forces` is its Python statement (the Python
    reference loop calls it).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.load_mjcf('<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 0.1">'
    ...                  '<freejoint/><geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>')
    >>> c = mb.SceneContact(m)
    >>> c.n_states, c.name                       # one pair, a sphere on a plane: 1 slot of 2
    (2, 'compliant')
    >>> traj = mb.simulate(m, m.q_default, np.zeros(6), 1.0)     # the floor is the file's: on by default
    >>> traj.contact, round(float(traj.q[-1, 2]), 4), round(float(traj.contact_forces[-1, :, 2].sum()), 3)
    ('compliant', 0.099, 9.81)
    >>> slider = mb.load_mjcf('<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 0.1">'
    ...                       '<joint type="slide" axis="0 0 1"/><geom type="sphere" size="0.1" mass="1"/>'
    ...                       '</body></worldbody></mujoco>')
    >>> [round(mb.SceneContact(slider, step=(dt, "rk4")).depth, 5) for dt in (0.02, 0.03)]   # RK4 at 30 ms: deeper
    [0.001, 0.00474]
    """
    name = "compliant"

    def __init__(self, model, stiffness=None, damping=None, ground=False, geoms=None, step=None):
        from ..kinematics.contacts import scene_geoms
        _checks.model(model)
        self.geoms = scene_geoms(model, ground) if geoms is None else geoms
        _refuse_an_unmet_floor(model, ground, self.geoms)
        if (stiffness is None) != (damping is None):
            raise ValueError("stiffness, damping: give both or neither (the defaults come from the model's weight)")
        self.weight = model_weight(model)
        self.lightest = lightest_contact(model, self.geoms)     # (body, effective mass) or None
        step = _explicit_step(step)   # checked whether or not the default reads it
        self.depth = None
        if stiffness is None:   # the weight on one contact sinks the depth; the lightest body's mode critically
            # damped (heavy ones less); without one, the whole model's mass
            m_eff = self.lightest[1] if self.lightest else max(float(np.sum(model.mass)), 1e-9)
            depth = self.depth = self._default_depth(model, m_eff, step)
            stiffness, damping = _default_law(self.weight, depth, m_eff)
        self.K = _pos_scalar("stiffness", stiffness)
        self.D = _pos_scalar("damping", damping)
        self.packed = self.geoms.packed          # hulls packed once, parsed once per run in C
        self.n_pairs = len(self.geoms.pairs)
        self.n_slots = self.geoms.n_slots
        self.n_states = 2 * self.n_slots
        mu = self.geoms.pair_friction[:, 0] * (self.geoms.pair_condim >= 3) if self.n_pairs else np.zeros(0)
        self._decay = np.repeat(np.where(mu > 0, -self.K / self.D, 0.0)[self.geoms.slot_pair], 2)

    def _default_depth(self, model, m_eff, step):
        """The default's static depth: ``SCENE_DEPTH``, unless :meth:`check_step` would refuse the explicit
        ``step`` (dt, its stepper's bound: :func:`_explicit_step`) for it; then the depth where the
        contact mode on the least effective mass of the geoms' surface points (:func:`lightest_contact`
        ``at="surface"``: a box's corners, lighter than the centre the check reads, and overdamped by the
        default damping, critical at the centre) takes ``STEP_MARGIN`` of the stepper's bound, if that is
        no deeper than ``SCENE_MAX_DEPTH`` (else 1 mm, and the check refuses the step, naming the one that
        works).  So no run the check passes changes, and a step it refused runs only where the stricter
        estimate says it may.  With K = W/d^1.5 and D critical on ``m_eff`` at d, the law's k = 1.5 W/d
        and c ∝ 1/√d, so every root of m s² + c s + k goes as 1/√d: the depth is closed-form."""
        if step is None or self.lightest is None:
            return SCENE_DEPTH
        dt, bound = step
        K, D = _default_law(self.weight, SCENE_DEPTH, m_eff)
        if _contact_rate(K, D, self.weight, self.lightest[1]) * dt < bound:
            return SCENE_DEPTH          # the check passes the 1 mm contact: it stays
        point = lightest_contact(model, self.geoms, at="surface")
        if point is None:
            return SCENE_DEPTH
        rate = _contact_rate(K, D, self.weight, point[1])
        need = SCENE_DEPTH * (rate * dt / (STEP_MARGIN * bound)) ** 2
        return need if need <= SCENE_MAX_DEPTH else SCENE_DEPTH

    def fastest_rate(self):
        """|λ| (1/s) of the fastest root of m s² + c s + k: the law linearised at the depth d where one
        contact carries the model's whole weight (k = 1.5 K √d, c = D √d) on the lightest body's
        effective mass m (:func:`lightest_contact`)."""
        return _contact_rate(self.K, self.D, self.weight, None if self.lightest is None else self.lightest[1])

    def check_step(self, model, dt, integrator, implicit=True):
        """Refuse a fixed step the contact oscillator outruns (|λ| dt ≥ the stepper's STABLE_DECAY
        bound, :meth:`fastest_rate`), naming the stiffness, damping, body and the largest dt that
        works: never a run that chatters or blows up silently.

        ``semi_implicit`` takes the law implicit in the step (:meth:`implicit_step`, the compiled
        loop's ``mb_scene_contact_implicit``): each active contact's force at the step's end
        linearised in its velocity (damping D √d, stiffness 1.5 K √d normal and K √d sticking,
        through h v⁺) on the Delassus operator of all active contacts, the deformations' relaxation
        implicit too, so the contact mode bounds no step there (backward Euler on the linearised
        law); what stays explicit is the geometry (normals, points, which pairs touch) and a sliding
        contact's direction, which bound accuracy, not stability.  ``implicit=False``: a run whose steps
        take the law explicitly all the same (a sensitivity run: its Z rides the explicit law's
        derivatives) is checked as any other."""
        from .rollout import FLAGS, IMPLICIT_DAMPING
        if implicit and FLAGS[integrator] & IMPLICIT_DAMPING:
            return
        if self.lightest is not None:   # (semi_implicit named where it would take the law implicitly)
            implicit_there = "" if FLAGS[integrator] & IMPLICIT_DAMPING else (
                "integrator='semi_implicit' (it takes this law implicitly: no contact stiffness bounds its step), or ")
            _check_contact_step(model, dt, integrator, self.K, self.D, self.weight, *self.lightest,
                                "in its lightest direction at the model's default state",
                                implicit_there + "a softer contact (mb.SceneContact(model, stiffness, damping), "
                                "e.g. from mb.contact_parameters)")

    @property
    def table(self):
        """The compiled loop's record (``rollout.Contact.scene``)."""
        return (*self.packed, self.K, self.D)

    def initial_state(self, model, q, qd):
        return np.zeros(self.n_states)

    def stored_energy(self, model, q):
        """The energy the law's normal springs hold at ``q``: Σ 0.4 K d^2.5 over the contacts (f_n = K d^1.5
        integrated over the depth d) — what a start inside a floor gives back as it is pushed out.

        >>> import numpy as np, multibody as mb
        >>> m = mb.load_mjcf('<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 0.099">'
        ...                  '<freejoint/><geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>')
        >>> c = mb.SceneContact(m)                   # 1 kg sinks 1 mm: K = 9.81 / 0.001^1.5
        >>> round(c.stored_energy(m, m.q_default) / (0.4 * 9.81 * 0.001), 6)    # 1 mm deep: 0.4 m g d
        1.0
        """
        _, _, _, depth, _ = _core.scene_contacts(model._c, np.asarray(q, dtype=float), *self.packed)
        return float(0.4 * self.K * np.sum(np.maximum(np.asarray(depth, dtype=float), 0.0) ** 2.5))

    def forces(self, model, q, qd, z=None):
        """(f_ext (nb, 6), zdot (n_states,), info) at one state; ``info["force"]`` (slots, 3) each
        slot's force on its geom b (zero where apart), ``info["state"]`` 0 apart, 1 sticking, 2 sliding."""
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        z = np.zeros(self.n_states) if z is None else np.asarray(z, dtype=float)
        pair, pos, normal, depth, slot = _core.scene_contacts(model._c, q, *self.packed)
        u = z.reshape(-1, 2)[slot] if len(slot) else np.zeros((0, 2))
        f_ext, ud, F, state = _core.scene_forces(model._c, q, qd, *self.packed, pair, pos, normal, depth,
                                                 self.K, self.D, np.ascontiguousarray(u))
        zdot = self._decay * z
        zdot.reshape(-1, 2)[slot] = ud
        force = np.zeros((self.n_slots, 3))
        force[slot] = F
        st = np.zeros(self.n_slots, np.uint8)
        st[slot] = state
        return f_ext, zdot, {"force": force, "state": st}


    def implicit_step(self, model, dynamics_model, q, qd, qdd, z, zdot, info, h, held=(), held_share=False,
                      soft=None):
        """The law implicit in a ``semi_implicit`` step of h: (q̈, ż, info) from the explicit ones
        (:meth:`forces`' ż and info, q̈ the forward dynamics' with its forces) — the NumPy statement of
        the compiled loop's ``mb_scene_contact_implicit`` (csrc/sim/scene_contact.c says the method).

        Each active contact's rows (its normal; t1, t2 where it has friction) get the force at the step's end
        linearised in the row's velocity, f⁺ = f − D_r (v⁺ − v) − h K_r v⁺ (D_r = D √d; K_r = 1.5 K √d
        normal, K √d sticking), with v⁺ = v_free + h W Δf on the Delassus operator W = J M⁻¹ Jᵀ of the
        step's M (``dynamics_model``: semi_implicit's damping in its armature): the symmetric positive
        definite (G⁻¹ + h W) Δf = −G⁻¹ (D_r h a_r + h K_r v_free), G = diag(D_r + h K_r).  A contact
        sliding at the step's start linearises its sticking law too (beyond the cone; b takes the
        difference from the applied force).  A contact in the floor that the law judged apart at the
        step's start (its damping pulled harder than its depth pushed: f = √d (K d − D v) < 0) is a
        candidate: its rows, with that unclamped force (and its sticking law's from u = 0, −√d D v_t)
        less none applied in b, so that the step's end decides (else an overdamped contact leaving at a
        crawl lets go for a whole step, falls back in faster, and the alternation grows); it enters with
        its tangential deformation zeroed, and one that leaves the floor within the step at its speed
        (d − h v_n ≤ 0) is none.  A tangential force past the cone is fixed on it (μ f_n⁺
        along the solve's direction: sliding) and the rest solved again; then a normal that would pull
        is released and the rest solved again, until nothing changes.  The deformations relax
        implicitly (D → D + h K); a slot apart at the step's end (force zero) forgets its deformation
        (ż = −z/h: z = 0 after the step), so that no contact entering later reads a stale one.  Joints
        resting on stops (``held``: their v indices) stay held: the correction solves on the free joints'
        block of M (held rows and columns the identity's, held columns of J zero); their stops take up the
        correction's load, (M Δq̈)_j − (Jᵀ Δf)_j, returned as a fourth value (in ``held``'s order) when
        ``held_share``: what the step's stop forces add to the forward dynamics' λ.  ``soft``: the soft stops
        the joints have passed (``JointLimits.soft_terms``: v index, sign, a_ref, R), MuJoCo's soft constraints
        solved with the contacts as MuJoCo solves them: each a row sign·e_j whose force at the step's q̈ is
        (a_ref − sign q̈_j)/R (G = 1/(R h) here), released where it would pull; ``qdd`` then comes without them."""
        # This statement solves the Delassus form; the C its joint-space twin, (M + h J_Fᵀ G J_F) q̈ (Woodbury's
        # identity), so the tests that hold the two together check that algebra as well.
        from ..dynamics.handc import crba
        from ..kinematics.jacobians import body_jacobian
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        qdd, zdot = np.array(qdd, float), np.array(zdot, float)
        K, D, Dh = self.K, self.D, self.D + h * self.K
        zdot *= D / Dh
        force, state = info["force"].copy(), info["state"]
        z = np.asarray(z, float)

        held = list(held)
        share = np.zeros(len(held))

        def reset_apart():   # a slot apart at the step's end forgets its tangential deformation (z₁ = 0)
            apart = np.repeat(~force.any(axis=1), 2)
            zdot[apart] = -z[apart] / h
            out = qdd, zdot, {"force": force, "state": state}
            return out + (share,) if held_share else out

        pair, pos, normal, depth, slots = _core.scene_contacts(model._c, q, *self.packed) if len(self.geoms.pairs) \
            else (np.zeros(0, np.int64), None, None, np.zeros(0), np.zeros(0, np.int64))
        # the candidates: the contacts the law pushes at the step's start, and those in the floor that it
        # judged apart (their damping pulled harder than their depth pushed) — the step's end decides
        candidates = [i for i in range(len(pair)) if state[slots[i]] or depth[i] > 0.0]
        st = body_states(model, q)
        g = self.geoms
        rows, J3s, meta = [], {}, []
        for i in candidates:
            s = int(slots[i])
            p = int(pair[i])
            ba, bb = (int(g.body[k]) for k in g.pairs[p])
            J3 = np.zeros((3, model.nv))
            for b, sign in ((bb, 1.0), (ba, -1.0)):
                if b >= 0:
                    J3 += sign * body_jacobian(model, q, b, point=st.R[b].T @ (pos[i] - st.p[b]))[3:]
            if not state[s] and not depth[i] - h * (normal[i] @ J3 @ qd) > 0.0:
                continue   # a candidate that leaves the floor within the step at its speed: not one
            J3s[s] = J3
            mu = float(g.pair_friction[p, 0]) if g.pair_condim[p] >= 3 else 0.0
            t1, t2 = _tangents(normal[i])
            dirs = [normal[i]] + ([t1, t2] if mu > 0 else [])   # sticking or sliding: the tangents too
            zr = math.sqrt(max(0.0, depth[i]))
            meta.append((s, i, len(rows), len(dirs), mu, zr, normal[i], t1, t2))
            for k, d in enumerate(dirs):
                rows.append((d @ J3, zr * D, (1.5 if k == 0 else 1.0) * zr * K))
        ncr = len(rows)   # the contacts' rows; the soft stops' follow
        stops = list(zip(*soft)) if soft is not None else []
        for vi, sign, _aref, _R in stops:
            rows.append((sign * np.eye(model.nv)[vi], 0.0, 0.0))
        if not rows:
            return reset_apart()
        Jr = np.array([r[0] for r in rows])
        Dr, Kr = np.array([r[1] for r in rows]), np.array([r[2] for r in rows])
        jv, ja = Jr @ qd, Jr @ qdd
        G = Dr + h * Kr
        b = -(Dr * h * ja + h * Kr * (jv + h * ja))
        for k, (_vi, _sign, aref, R) in enumerate(stops):   # f = (a_ref − J q̈)/R: G = 1/(R h), b = (a_ref − J q̈₀)/R
            G[ncr + k], b[ncr + k] = 1.0 / (R * h), (aref - ja[ncr + k]) / R
        for s, i, r, nr, mu, zr, nrm, t1, t2 in meta:   # a sliding contact's tangents: its sticking law's
            if nr == 3 and state[s] == 2:             # force, beyond the cone, less the force applied
                for k, t in ((1, t1), (2, t2)):
                    b[r + k] += -zr * (K * z[2 * s + k - 1] + D * jv[r + k]) - force[s] @ t
            elif not state[s]:   # a candidate: the law's normal force unclamped (it pulls), and its sticking
                b[r] += zr * (K * depth[i] - D * jv[r])   # law's from u = 0, −√d D v_t; none applied
                for k in range(1, nr):
                    b[r + k] += -zr * D * jv[r + k]
        M = crba(dynamics_model, q)
        held_rows, qdd0 = M[held].copy(), qdd.copy()
        M[held, :] = 0.0
        M[:, held] = 0.0
        M[held, held] = 1.0
        Jr[:, held] = 0.0
        W = Jr @ np.linalg.solve(M, Jr.T)
        n = len(rows)
        fixed = np.zeros(n, bool)
        # a sliding contact's tangent rows: Δf_t = e + μ tdir Δf_n (on the cone with its normal's solved force,
        # exactly), e = μ tdir f_n − f_t; their normal's row, μ
        slide, e, of, mus = np.zeros(n, bool), np.zeros(n), np.zeros(n, int), np.zeros(n)
        df, tdir = np.zeros(n), np.zeros(n)
        for _ in range(2 * (len(meta) + len(stops)) + 9):
            free = ~fixed & ~slide
            pos = np.cumsum(free) - 1   # a free row's place among the free rows
            A = h * W[np.ix_(free, free)] + np.diag(1.0 / G[free])
            rhs = b[free] / G[free] - h * W[np.ix_(free, fixed)] @ df[fixed]
            for j in np.flatnonzero(slide):
                A[:, pos[of[j]]] += h * W[free, j] * mus[j] * tdir[j]
                rhs -= h * W[free, j] * e[j]
            df[free] = np.linalg.solve(A, rhs)
            df[slide] = e[slide] + mus[slide] * tdir[slide] * df[of[slide]]
            changed = False
            for s, i, r, nr, mu, zr, nrm, t1, t2 in meta:   # past the cone: slides on it, the rest again
                if nr != 3 or fixed[r] or slide[r + 1]:
                    continue
                fn = force[s] @ nrm + df[r]
                ft = np.array([force[s] @ t1 + df[r + 1], force[s] @ t2 + df[r + 2]])
                norm, lim = math.sqrt(ft[0] * ft[0] + ft[1] * ft[1]), mu * max(fn, 0.0)
                if norm <= lim * (1.0 + 1e-12):
                    continue
                tdir[r + 1], tdir[r + 2] = ft[0] / norm, ft[1] / norm
                for k, t in ((1, t1), (2, t2)):
                    slide[r + k], of[r + k], mus[r + k] = True, r, mu
                    e[r + k] = mu * tdir[r + k] * (force[s] @ nrm) - force[s] @ t
                changed = True
            if changed:
                continue
            for s, i, r, nr, *_ in meta:
                if fixed[r] or force[s] @ normal[i] + df[r] >= 0.0:
                    continue
                dirs = [normal[i]] + ([_tangents(normal[i])[0], _tangents(normal[i])[1]] if nr == 3 else [])
                for k in range(nr):
                    fixed[r + k], slide[r + k], df[r + k] = True, False, -(force[s] @ dirs[k])
                changed = True
            for r in range(ncr, n):   # the contacts settled: each soft stop pushes or is let go (and comes back)
                if changed:
                    break
                if not fixed[r] and df[r] < 0.0:
                    fixed[r], df[r], changed = True, 0.0, True
                elif fixed[r] and b[r] - h * G[r] * (W[r] @ df) > 0.0:
                    fixed[r], changed = False, True
            if not changed:
                break
        tau = np.zeros(model.nv)
        sticking = []
        for s, i, r, nr, mu, zr, nrm, t1, t2 in meta:
            f0 = force[s]
            u = z[2 * s:2 * s + 2]
            ui = u if state[s] else np.zeros(2)   # a candidate's deformation zeroed (u̇ carries −u/h)
            fn0 = f0 @ nrm
            fn = max(0.0, fn0 + df[r])
            if fn <= 0.0:   # released: apart (its deformation zeroed)
                ft = np.zeros(2)
                zdot[2 * s:2 * s + 2] = -u / h
            elif nr == 3:
                ft = np.array([f0 @ t1 + df[r + 1], f0 @ t2 + df[r + 2]])
                cone = math.sqrt(ft @ ft) / (mu * fn)
                if cone > 1.0:
                    ft = ft / cone
                if cone > 1.0 or slide[r + 1]:   # slides: the law's sliding rate at f_t⁺
                    zdot[2 * s:2 * s + 2] = -(ft + zr * K * ui) / (zr * Dh) + (ui - u) / h
                else:
                    sticking.append((s, r, (ui - u) / h))
            else:
                ft = (fn / fn0 if fn0 > 0 else 0.0) * np.array([f0 @ t1, f0 @ t2])
                if mu > 0 and zr > 0:
                    zdot[2 * s:2 * s + 2] = -(ft + zr * K * u) / (zr * Dh)
            f = fn * nrm + ft[0] * t1 + ft[1] * t2
            tau += J3s[s].T @ (f - f0)
            force[s] = f
        for k, (vi, sign, _aref, _R) in enumerate(stops):   # the soft stops' forces of the last solve
            tau[vi] += sign * df[ncr + k]
        load = tau[held].copy()
        tau[held] = 0.0
        qdd = qdd + np.linalg.solve(M, tau)
        share[:] = held_rows @ (qdd - qdd0) - load
        for s, r, jump in sticking:
            zdot[2 * s:2 * s + 2] = Jr[r + 1:r + 3] @ (qd + h * qdd) + jump
        return reset_apart()


def _tangents(n):
    """scene_contact.c's mb_scene_tangents: t1 = e_x (e_y near ±e_x) orthogonal to n, t2 = n × t1."""
    e = np.array([0.0, 1.0, 0.0]) if abs(n[0]) > 0.9 else np.array([1.0, 0.0, 0.0])
    t1 = e - (e @ n) * n
    t1 = t1 / np.linalg.norm(t1)
    return t1, np.cross(n, t1)


#: hard contact's defaults: Baumgarte's error reduction per step (ODE's ERP), the depth left uncorrected
#: (m), and the LCP's relative regularisation (A + ε diag A)
HARD_ERP, HARD_SLOP, HARD_CFM = 0.2, 1e-4, 1e-8


class HardContact:
    """The model's own collision geometry under hard contact: ``mb.simulate(..., contact="hard")``.

    A velocity-level time stepper (Stewart & Trinkle 1996, Anitescu & Potra 1997; ODE's and MuJoCo's
    scheme): every step of h the contacts at q (``mb.contacts``) give rows J (normal, and two
    tangents where the pair has sliding friction), and the impulses λ solve the LCP on the Delassus
    operator A = J M⁻¹ Jᵀ (from the core's LTL factor of M) with the engine's pivoting solver
    (``csrc/engine/lcp.c``: friction pyramid |λ_t| ≤ μ λ_n, followed to its fixed point), so that
    v⁺ = v + M⁻¹(h (τ − C) + Jᵀ λ) and q⁺ = q ⊕ h v⁺ (``semi_implicit``, the one stepper it runs
    with).  A contact approaching at speed u leaves at ``restitution`` · u; a depth beyond ``slop``
    is removed at ``erp`` per step (Baumgarte stabilisation, ODE's ERP); ``cfm`` regularises A
    (A + cfm·diag A) where contacts are redundant (a box's four corners).  No states; the recorded
    force of a slot is its impulse over the step, λ/h (``traj.contact_forces``, the compliant law's
    slots).  Runs in the compiled loop only (``csrc/sim/hard_contact.c``).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.load_mjcf('<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 0.1">'
    ...                  '<freejoint/><geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>')
    >>> traj = mb.simulate(m, m.q_default, np.zeros(6), 1.0, contact="hard")
    >>> traj.contact, traj.integrator, round(float(traj.q[-1, 2]), 4), round(float(traj.contact_forces[-1, :, 2].sum()), 6)
    ('hard', 'semi_implicit', 0.1, 9.81)
    """
    name = "hard"
    n_states = 0
    integrator = "semi_implicit"

    def __init__(self, model, restitution=0.0, erp=HARD_ERP, slop=HARD_SLOP, cfm=HARD_CFM, ground=False, geoms=None):
        from ..kinematics.contacts import scene_geoms
        _checks.model(model)
        self.geoms = scene_geoms(model, ground) if geoms is None else geoms
        _refuse_an_unmet_floor(model, ground, self.geoms)
        self.restitution = _unit_interval("restitution", restitution)
        self.erp = _unit_interval("erp", erp)
        self.slop = _pos_scalar("slop", slop, allow_zero=True)
        self.cfm = _pos_scalar("cfm", cfm)
        self.packed = self.geoms.packed
        self.n_pairs = len(self.geoms.pairs)
        if not self.n_pairs:
            raise ValueError("contact='hard': the model's geoms have no candidate contact pairs (no floor in the "
                             "file? pass ground=True for a floor z = 0)")
        self.n_slots = self.geoms.n_slots
        self.hard = np.array([self.restitution, self.erp, self.slop, self.cfm])

    @property
    def table(self):
        """The compiled loop's scene record (``rollout.Contact.scene``; K, D unused under ``hard``)."""
        return (*self.packed, 0.0, 0.0)

    def initial_state(self, model, q, qd):
        return np.zeros(0)

    def check_run(self, integrator, sensitivities=False, events=()):
        """Refuse what the time stepper cannot run with, naming what works."""
        if integrator != "semi_implicit":
            raise ValueError(f"contact='hard' is a velocity-level time stepper (v⁺ = v + M⁻¹(h(τ − C) + Jᵀλ), "
                             f"q⁺ = q ⊕ h v⁺): it runs with integrator='semi_implicit', not {integrator!r} "
                             "(or use contact='compliant' with that integrator)")
        if sensitivities:
            raise ValueError("contact='hard' with sensitivities=True: the LCP's impulses carry no variational "
                             "equations; use contact='compliant'")
        if events:
            raise ValueError("contact='hard' with events: an event's sample is recorded outside a step, where "
                             "hard contact has no force law to evaluate (its impulses belong to steps); use "
                             "contact='compliant', or stop the run at a time instead")

    def constraint_rows(self, model, constraints):
        """The run's constraints as rows of the LCP (its bilateral rows, Baumgarte's target
        G v⁺ = −erp·c/h; the free step is FDab's): per row G (nv), and c = G_q q − c₀ as G_q (nq)
        and c₀.  Constant Jacobians only — joint and tendon couplings that are linear (MJCF
        ``<equality>`` joint and tendon, e.g. dm_control's quadruped) on one-variable joints; any
        other constraint is refused by name."""
        from ..dynamics.constraints import ConstraintSet, constraint_terms
        from ..model.constraints import JointCoupling, TendonCoupling
        items = constraints.constraints if isinstance(constraints, ConstraintSet) else (constraints,)
        q, rows = model.q_default if hasattr(model, "q_default") else model.neutral(), []
        for c in items:
            second = getattr(c, "tendon_b", None) if isinstance(c, TendonCoupling) else getattr(c, "joint_b", None)
            if not isinstance(c, (JointCoupling, TendonCoupling)) or (
                    second is not None and any(float(k) != 0.0 for k in tuple(c.polynomial)[2:])):
                raise ValueError(f"contact='hard' keeps constraints whose Jacobian is constant (linear joint and "
                                 f"tendon couplings); {getattr(c, 'name', None) or type(c).__name__!r} is not: use "
                                 "contact='compliant'")
            terms = constraint_terms(c, model, q, np.zeros(model.nv))
            for J, c0 in zip(terms.J, terms.c):
                Gq = np.zeros(model.nq)
                for j in range(model.nb):   # one-variable joints: q̇ = v, the row in q as in v
                    if model.nq_joint[j] == 1 and model.nv_joint[j] == 1:
                        Gq[int(model.q_start[j])] = J[int(model.v_start[j])]
                rows.append(np.r_[J, Gq, Gq @ q - c0])   # c = G_q q − (G_q q_d − c(q_d))
        return np.ascontiguousarray(np.vstack(rows), dtype=float)

    def check_step(self, model, dt, integrator):
        """(The fixed-step check ``simulate`` calls: hard contact has no stiffness to outrun.)"""
        self.check_run(integrator)

    def forces(self, model, q, qd, z=None):
        """Hard contact has no force law at a state: its impulses belong to a step (the compiled loop's)."""
        raise ValueError("contact='hard' runs in the compiled loop only (csrc/sim/hard_contact.c): a step "
                         "taken outside it (the tests' reference steppers) cannot take it; use "
                         "contact='compliant' there")


def _contact_rate(K, D, weight, m):
    """|λ| (1/s) of the fastest root of m s² + c s + k: the law K d^1.5, D √d ḋ linearised at the depth
    d where one contact carries the whole ``weight`` (k = 1.5 K √d, c = D √d), on the effective mass m
    (None: no contact, rate 0)."""
    if m is None:
        return 0.0
    d = (weight / K) ** (2.0 / 3.0) if K > 0 else SCENE_DEPTH
    k, c = 1.5 * K * math.sqrt(d), D * math.sqrt(d)
    disc = c * c - 4.0 * m * k
    return (c + math.sqrt(disc)) / (2.0 * m) if disc >= 0 else math.sqrt(k / m)


def _check_contact_step(model, dt, integrator, K, D, weight, body, m, where, softer):
    """Refuse an explicit fixed step the compliant contact's fastest mode outruns (|λ| dt ≥ the
    stepper's STABLE_DECAY bound), naming K, D, the body, its effective mass and the largest dt."""
    from .rollout import STABLE_DECAY
    bound, rate = STABLE_DECAY[integrator], _contact_rate(K, D, weight, m)
    if rate * dt < bound:
        return
    raise ValueError(
        f"contact: stiffness K = {K:.4g} N/m^1.5 and damping D = {D:.4g} N·s/m^1.5 on body "
        f"{model.body_names[body]!r} (effective mass {m:.3g} kg {where}) make a contact mode of rate {rate:.4g} "
        f"1/s: an explicit {integrator} step of dt = {dt:g} s is stable below {bound:g}/rate; it would chatter or "
        f"blow up.  Pass dt <= {0.99 * bound / rate:.3g} or {softer}")


def _unit_interval(name, v):
    v = _pos_scalar(name, v, allow_zero=True)
    if v > 1.0:
        raise ValueError(f"{name}: expected a number in [0, 1], got {v!r}")
    return v


def lightest_contact(model, geoms, at="centre"):
    """(body, m_eff) of the body with geoms in a candidate pair whose effective mass in its lightest
    direction, m_eff = 1/λ_max(J M⁻¹ Jᵀ) (J the linear Jacobian of a point, at the model's default state),
    is the least; None when no moving geom has a pair.  The lightest direction, not the normal's: sticking,
    the law's tangential spring and damper (K √d, D √d) act along the floor, where a foot is often lighter
    (the first runs of ANYmal chattered sideways).  ``at="centre"``: the point is the body's first geom's
    centre (the default damping's mass); ``at="surface"``: the least over the points where its geoms can
    touch (:func:`surface_points`) — a box rests on corners six times lighter than its centre."""
    if not len(geoms.pairs):
        return None
    _checks.one_of("at", at, ("centre", "surface"))
    # computed once per (Model, Geoms), both immutable: every SceneContact a run builds asks (issue 33)
    cache = model.__dict__.get("_lightest_contact")
    if cache is None:
        cache = model.__dict__["_lightest_contact"] = {}
    got = cache.get((id(geoms), at))
    if got is None or got[0] is not geoms:   # the Geoms kept with it: its id is not reused meanwhile
        if len(cache) >= 16:
            cache.pop(next(iter(cache)))
        find = _lightest_contact if at == "centre" else _lightest_surface_point
        got = cache[(id(geoms), at)] = (geoms, find(model, geoms))
    return got[1]


def surface_points(geoms, g):
    """Points (k, 3) in its body's coordinates where geom ``g`` can touch another: its surface's extremes
    along its own axes (sphere and ellipsoid ±radii, a capsule's caps and the rims of its cylinder, a
    cylinder's rims, a box's corners), a convex geom's hull vertices; the centre for a plane or height
    field (static in every loader)."""
    kind, (a, b, c) = geoms.kind[g], geoms.size[g]    # full lengths (geometry.py): box edges, radius and length
    if kind == "box":
        a, b, c = a / 2, b / 2, c / 2
        P = np.array([(x, y, z) for x in (-a, a) for y in (-b, b) for z in (-c, c)])
    elif kind in ("sphere", "ellipsoid"):    # radius; semi-axes
        r = np.array([a, a, a]) if kind == "sphere" else np.array([a, b, c])
        P = np.vstack([np.diag(r), -np.diag(r)])
    elif kind in ("capsule", "cylinder"):   # radius a, length b along z
        b = b / 2
        rims = [(x, y, z) for z in (-b, b) for x, y in ((a, 0), (-a, 0), (0, a), (0, -a))]
        P = np.array(rims + ([(0, 0, b + a), (0, 0, -b - a)] if kind == "capsule" else []), float)
    elif kind == "convex":
        P = np.asarray(geoms.hulls[g], float)
    else:
        P = np.zeros((1, 3))
    return P @ geoms.rotation[g].T + geoms.translation[g]


def _lightest_surface_point(model, geoms):
    """:func:`lightest_contact` ``at="surface"``, computed: per body, W = J M⁻¹ Jᵀ (6 × 6) of its local
    Jacobian once, then each point p's A_p = P W Pᵀ with P = [−[p]× I] (the point's velocity v + ω × p)."""
    from ..dynamics.derivatives import minv
    from ..kinematics.jacobians import body_jacobian
    q = model.q_default if hasattr(model, "q_default") else model.neutral()
    Minv = minv(model, q)
    points: dict = {}
    for g in np.unique(geoms.pairs):
        b = int(geoms.body[g])
        if b >= 0:
            points.setdefault(b, []).append(surface_points(geoms, g))
    best = None
    for b, Ps in points.items():
        J = body_jacobian(model, q, b, frame="local")
        W = J @ Minv @ J.T
        P = np.concatenate(Ps)
        X = np.zeros((len(P), 3, 6))
        X[:, 0, 1], X[:, 0, 2] = P[:, 2], -P[:, 1]       # −[p]× (rows of −p × ω)
        X[:, 1, 0], X[:, 1, 2] = -P[:, 2], P[:, 0]
        X[:, 2, 0], X[:, 2, 1] = P[:, 1], -P[:, 0]
        X[:, :, 3:] = np.eye(3)
        mobility = float(np.linalg.eigvalsh(X @ W @ X.transpose(0, 2, 1))[:, -1].max())
        if mobility > 0 and (best is None or 1.0 / mobility < best[1]):
            best = (b, 1.0 / mobility)
    return best


def _lightest_contact(model, geoms):
    """:func:`lightest_contact`, computed."""
    from ..dynamics.derivatives import minv
    from ..kinematics.jacobians import body_jacobian
    q = model.q_default if hasattr(model, "q_default") else model.neutral()
    Minv = minv(model, q)
    best = None
    for g in np.unique(geoms.pairs):
        b = int(geoms.body[g])
        if b < 0 or (best is not None and b == best[0]):
            continue
        Jp = body_jacobian(model, q, b, point=geoms.translation[g])[3:]   # the point's linear rows
        mobility = float(np.linalg.eigvalsh(Jp @ Minv @ Jp.T)[-1])   # its lightest direction: the law
        # acts along the normal and, sticking, along the floor with the same K √d and D √d
        if mobility > 0 and (best is None or 1.0 / mobility < best[1]):
            best = (b, 1.0 / mobility)
    return best
