"""Singularity-free floating base: spatial_v2 ``FDfb``, ``IDfb``, ``fbkin``, ``fbanim``.

A model made by :func:`multibody.models.floatbase` (or following its convention) emulates a
6-DoF joint between the fixed base and the floating base (body 6 of spatial_v2, index 5 here) by
three prismatic joints on x, y, z and three revolute joints on x, y, z, with five massless
bodies in between.  That chain is singular when the angle of joint 5 is ±π/2.  ``fd_fb`` and
``id_fb`` ignore the chain and take the floating base's state from a 13-vector instead:

    xfb = [qn (4); r (3); vfb (6)]

``qn`` is the unit quaternion ``[w, x, y, z]`` of the floating base's orientation relative to
the fixed base (``rq(qn)`` is the fixed → floating-base coordinate transform), ``r`` the
position of its origin in fixed-base coordinates, and ``vfb`` its spatial velocity ``[ω; v_O]``
in fixed-base coordinates (``v_O`` is the velocity of the body-fixed point at the fixed origin).
``q, qd, qdd, tau`` cover the real joints only (bodies 6 … nb−1; index k of these vectors
belongs to velocity variable 6 + k of the model).  External forces ``f_ext`` (…, nb, 6) are in
fixed-base coordinates; the first five rows (the massless chain) are ignored, as in the seed.

Every function takes leading batch dimensions; the dynamics run in the C core (``csrc/kernels/floating.c``),
the kinematics are vectorised NumPy.

Calling forms of :func:`fbkin` (argument counting and the length of the first argument, as in
spatial_v2; Python has no ``nargout``, so the inverse direction always returns what the inputs
determine):

=============================  ==========================================
``fbkin(q)``  (q: 6)           → ``p`` (7) = [qn; r]
``fbkin(q, qd)``               → ``x`` (13) = [qn; r; v]
``fbkin(q, qd, qdd)``          → ``(x, xd)``
``fbkin(p)``  (p: 7)           → ``q`` (6)
``fbkin(x)``  (x: 13)          → ``(q, qd)``
``fbkin(x, xd)``               → ``(q, qd, qdd)``
=============================  ==========================================

``fbkin_forward`` and ``fbkin_inverse`` are the same calculations with explicit names.  When
``q`` is an output, q[3] and q[5] (spatial_v2's q(4), q(6)) lie in ±π and q[4] (q(5)) in ±π/2.
"""
from __future__ import annotations

import weakref

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.joints import JointType
from ..model.model import Model
from ..spatial.rotations import matrix_to_quat, quat_derivative, quat_to_matrix

FB = 5  # index of the floating base (spatial_v2's body 6)

__all__ = ["fd_fb", "id_fb", "fbkin", "fbkin_forward", "fbkin_inverse", "fbanim",
           "check_floatbase_model"]


# --------------------------------------------------------------------------- model convention
_CHECKED = weakref.WeakKeyDictionary()  # models already found to follow the convention


def check_floatbase_model(model):
    """Raise ValueError unless ``model`` follows floatbase's convention (see module docstring)."""
    if model in _CHECKED:
        return
    _check_floatbase_model(model)
    _CHECKED[model] = True


def _check_floatbase_model(model):
    model._require_numeric()
    if model.planar:
        raise ValueError("model: FDfb/IDfb work only with spatial models, not planar ones")
    if model.nb < 6:
        raise ValueError(f"model: a floatbase model has at least 6 bodies, got {model.nb}")
    expect = [(JointType.PRISMATIC, 0), (JointType.PRISMATIC, 1), (JointType.PRISMATIC, 2),
              (JointType.REVOLUTE, 0), (JointType.REVOLUTE, 1), (JointType.REVOLUTE, 2)]
    for k, (jt, ax) in enumerate(expect):
        name = model.body_names[k]
        if model.parent[k] != k - 1:
            raise ValueError(f"model: body {k} ({name!r}) must hang from body {k - 1} (floatbase chain)")
        if model.jtype[k] != jt or not np.allclose(model.jaxis[k], np.eye(3)[ax]):
            raise ValueError(f"model: joint {k} must be {jt.name} about {'xyz'[ax]} (floatbase chain: "
                             "Px Py Pz Rx Ry Rz)")
        if not (np.allclose(model.tree_rotation[k], np.eye(3)) and np.allclose(model.tree_translation[k], 0)):
            raise ValueError(f"model: joint {k} must have an identity tree transform (floatbase chain)")
        if k < FB and model.mass[k] != 0:
            raise ValueError(f"model: body {k} ({name!r}) of the floatbase chain must be massless")
    for i in range(FB + 1, model.nb):
        if model.parent[i] < FB:
            raise ValueError(f"model: body {i} ({model.body_names[i]!r}) hangs from the emulation chain; "
                             "every real body must descend from the floating base (body 5)")


# --------------------------------------------------------------------------- public dynamics
def _fb_args(model, **named):
    """Validate xfb and the real-joint arrays; returns ((N, …) arrays in the order given, batch)."""
    check_floatbase_model(model)
    model._require_numeric()
    tails = {"xfb": (13,), "q": (model.nq - 6,), "qd": (model.nv - 6,), "qdd": (model.nv - 6,),
             "tau": (model.nv - 6,), "f_ext": (model.nb, 6)}
    hints = {"xfb": " = [qn(4); r(3); vfb(6)]", "q": f" (real joints: model.nq − 6 = {model.nq - 6})",
             "f_ext": ""}
    got = {}
    for name, x in named.items():
        if x is None and name != "f_ext":
            if name == "xfb" or model.nv > 6:
                raise ValueError(f"{name}: required (it may be omitted only when the model has no real "
                                 "joints, model.nb == 6)")
            x = np.zeros(tails[name])
        if x is not None:
            got[name] = B.as_batch(name, x, tails[name], hints.get(name, f" (real joints: model.nv − 6 = "
                                                                         f"{model.nv - 6})"))
    common = B.batch_shape(*(b for _, b in got.values()))
    return {k: B.flat_broadcast(k, a, b, common) for k, (a, b) in got.items()}, common


def fd_fb(model: Model, xfb: ArrayLike, q: ArrayLike | None = None, qd: ArrayLike | None = None,
          tau: ArrayLike | None = None,
          f_ext: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Floating-base forward dynamics without the emulation's singularity (spatial_v2 ``FDfb``; RBDA
    §9.3).

    The model emulates the 6-DoF joint by a chain of six one-dof joints (module docstring);
    ``fd_fb`` ignores that chain and takes the floating base's state from ``xfb`` instead.

    Parameters
    ----------
    model : Model
        A model following :func:`multibody.models.floatbase`'s convention.
    xfb : array_like, shape (..., 13)
        The floating base's state [qn; r; vfb]: ``qn`` the unit quaternion [w, x, y, z] of its
        orientation (``rq(qn)`` is the fixed → floating-base coordinate transform), ``r`` (m) its
        origin in fixed-base coordinates, ``vfb`` its spatial velocity [ω (rad/s); v_O (m/s)] in
        fixed-base coordinates (v_O: the velocity of the body-fixed point at the fixed origin).
    q : array_like, shape (..., nq − 6), optional
        Positions of the real joints (bodies 6 … nb−1): rad, m; quaternions [w, x, y, z].  May be
        omitted when ``model.nb == 6`` (a lone floating body).
    qd : array_like, shape (..., nv − 6), optional
        Velocities of the real joints: rad/s, m/s.
    tau : array_like, shape (..., nv − 6), optional
        Forces of the real joints: N·m, N.
    f_ext : array_like, shape (..., nb, 6), optional
        External spatial forces on the bodies in fixed-base coordinates, [moment (N·m) about the
        origin; force (N)]; the first five rows (the massless emulation chain) are ignored.

    Returns
    -------
    xdfb : ndarray, shape (..., 13)
        The time derivative of ``xfb``: [q̇n; ṙ; afb], ``afb`` the floating base's spatial
        acceleration [ω̇; a_O] in fixed-base coordinates (gravity included).
    qdd : ndarray, shape (..., nv − 6)
        The real joints' accelerations.

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; an array argument is a string, complex or object array.
    ValueError
        The model does not follow :func:`multibody.models.floatbase`'s convention (the message
        says how); a wrong shape, batch dimensions that do not broadcast, NaN or inf, a zero
        quaternion in ``xfb``; ``q``, ``qd`` or ``tau`` omitted although the model has real joints.
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.floatbase(mb.models.auto_tree(3))   # a floating base carrying two bodies
    >>> x = np.r_[1, 0, 0, 0, 0, 0, 0, np.zeros(6)]       # upright at the origin, at rest
    >>> xd, qdd = mb.fd_fb(m, x, np.zeros(2), np.zeros(2), np.zeros(2))
    >>> bool(np.allclose(xd[7:], [0, 0, 0, 0, 0, -9.81]))  # it falls freely
    True
    >>> xd, tau = mb.id_fb(m, x, np.zeros(2), np.zeros(2), qdd)
    >>> bool(np.allclose(tau, 0))                          # inverse dynamics gives τ back
    True
    """
    _checks.model(model)
    a, common = _fb_args(model, xfb=xfb, q=q, qd=qd, tau=tau, f_ext=f_ext)
    xd, qdd = _core.fdfb(model._c, a["xfb"], a["q"], a["qd"], a["tau"], a.get("f_ext"))
    return xd.reshape(common + (13,)), qdd.reshape(common + (model.nv - 6,))


def id_fb(model: Model, xfb: ArrayLike, q: ArrayLike | None = None, qd: ArrayLike | None = None,
          qdd: ArrayLike | None = None,
          f_ext: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Floating-base inverse dynamics (spatial_v2 ``IDfb``; RBDA table 9.6): the real joints' forces
    and the floating base's acceleration for given real-joint accelerations.

    A hybrid problem: ``qdd`` of the real joints is given, the floating base's acceleration is
    not (no force acts on it but gravity and ``f_ext``).

    Parameters
    ----------
    model : Model
        A model following :func:`multibody.models.floatbase`'s convention.
    xfb : array_like, shape (..., 13)
        The floating base's state [qn; r; vfb]: ``qn`` the unit quaternion [w, x, y, z] of its
        orientation (``rq(qn)`` is the fixed → floating-base coordinate transform), ``r`` (m) its
        origin in fixed-base coordinates, ``vfb`` its spatial velocity [ω (rad/s); v_O (m/s)] in
        fixed-base coordinates (v_O: the velocity of the body-fixed point at the fixed origin).
    q : array_like, shape (..., nq − 6), optional
        Positions of the real joints (bodies 6 … nb−1): rad, m; quaternions [w, x, y, z].  May be
        omitted when ``model.nb == 6`` (a lone floating body).
    qd : array_like, shape (..., nv − 6), optional
        Velocities of the real joints: rad/s, m/s.
    qdd : array_like, shape (..., nv − 6), optional
        Accelerations of the real joints: rad/s², m/s².
    f_ext : array_like, shape (..., nb, 6), optional
        External spatial forces on the bodies in fixed-base coordinates, [moment (N·m) about the
        origin; force (N)]; the first five rows (the massless emulation chain) are ignored.

    Returns
    -------
    xdfb : ndarray, shape (..., 13)
        The time derivative of ``xfb``, as :func:`fd_fb`'s.
    tau : ndarray, shape (..., nv − 6)
        The real joints' forces: N·m, N.

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; an array argument is a string, complex or object array.
    ValueError
        The model does not follow :func:`multibody.models.floatbase`'s convention (the message
        says how); a wrong shape, batch dimensions that do not broadcast, NaN or inf, a zero
        quaternion in ``xfb``; ``q``, ``qd`` or ``qdd`` omitted although the model has real joints.
    ResultOverflowError
        Finite inputs whose result overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.floatbase(mb.models.auto_tree(3))
    >>> x = np.r_[1, 0, 0, 0, 0, 0, 0, np.zeros(6)]
    >>> xd, tau = mb.id_fb(m, x, np.zeros(2), np.zeros(2), np.zeros(2))
    >>> bool(np.allclose(tau, 0))                          # in free fall no torque holds the pose
    True
    """
    _checks.model(model)
    a, common = _fb_args(model, xfb=xfb, q=q, qd=qd, qdd=qdd, f_ext=f_ext)
    xd, tau = _core.idfb(model._c, a["xfb"], a["q"], a["qd"], a["qdd"], a.get("f_ext"))
    return xd.reshape(common + (13,)), tau.reshape(common + (model.nv - 6,))




# --------------------------------------------------------------------------- fbkin
def _S(c4, s4, c5, s5):
    """ω = S(q) [q̇4 q̇5 q̇6]: columns e_x, Rx(q4) e_y, Rx(q4) Ry(q5) e_z (fixed-base coordinates)."""
    z, o = np.zeros_like(c4), np.ones_like(c4)
    return np.stack([np.stack([o, z, s5], -1), np.stack([z, c4, -s4 * c5], -1),
                     np.stack([z, s4, c4 * c5], -1)], -2)


def _Sdot(c4, s4, c5, s5, qd4, qd5):
    z = np.zeros_like(c4)
    c4d, s4d, c5d, s5d = -s4 * qd4, c4 * qd4, -s5 * qd5, c5 * qd5
    return np.stack([np.stack([z, z, s5d], -1), np.stack([z, c4d, -s4d * c5 - s4 * c5d], -1),
                     np.stack([z, s4d, c4d * c5 + c4 * c5d], -1)], -2)


def _E(q4, q5, q6):
    """Fixed → floating-base coordinate transform rz(q6) ry(q5) rx(q4) (spatial_v2 fbkin)."""
    c4, s4, c5, s5, c6, s6 = np.cos(q4), np.sin(q4), np.cos(q5), np.sin(q5), np.cos(q6), np.sin(q6)
    return np.stack([np.stack([c5 * c6, c4 * s6 + s4 * s5 * c6, s4 * s6 - c4 * s5 * c6], -1),
                     np.stack([-c5 * s6, c4 * c6 - s4 * s5 * s6, s4 * c6 + c4 * s5 * s6], -1),
                     np.stack([s5, -s4 * c5, c4 * c5], -1)], -2)


def _mv(M, v):
    return np.einsum("...ij,...j->...i", M, v)


def _arr(name, x, n):
    a, batch = B.as_batch(name, x, (n,))
    if not _checks.all_finite(a):
        raise ValueError(f"{name}: contains NaN or inf")
    return a.reshape(batch + (n,))


def fbkin_forward(q: ArrayLike, qd: ArrayLike | None = None, qdd: ArrayLike | None = None):
    """The six emulation joints' variables → the floating base's ``p``, ``x`` or ``(x, xd)``
    (spatial_v2 ``fbkin``, forward direction).

    Parameters
    ----------
    q : array_like, shape (..., 6)
        Positions of the emulation joints: [x, y, z] (m) of the three prismatic joints, then the
        angles (rad) of the revolute joints about x, y, z.
    qd : array_like, shape (..., 6), optional
        Their velocities (m/s, rad/s).
    qdd : array_like, shape (..., 6), optional
        Their accelerations (m/s², rad/s²); needs ``qd``.

    Returns
    -------
    p : ndarray, shape (..., 7)
        [qn; r] when only ``q`` is given.
    x : ndarray, shape (..., 13)
        [qn; r; v] (``xfb`` of :func:`fd_fb`) when ``qd`` is given.
    x, xd : ndarray, shape (..., 13)
        With ``qdd``: ``x`` and its time derivative [q̇n; ṙ; a], ``a`` the spatial acceleration
        [ω̇; a_O] in fixed-base coordinates.

    Raises
    ------
    TypeError
        An argument is None (``q``), a string, complex or object array.
    ValueError
        A last dimension other than 6, NaN or inf, ``qdd`` without ``qd``.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> x = mb.fbkin_forward([1.0, 2.0, 3.0, 0, 0, 0.5], [0, 0, 0, 0, 0, 1.0])   # at r, turning about z
    >>> bool(np.allclose(x[:4], [np.cos(0.25), 0, 0, np.sin(0.25)]))    # qn: 0.5 rad about z
    True
    >>> x[7:].tolist()                                  # [ω; v_O], v_O = ṙ + r × ω
    [0.0, 0.0, 1.0, 2.0, -1.0, 0.0]
    """
    q = _arr("q", q, 6)
    q4, q5, q6 = q[..., 3], q[..., 4], q[..., 5]
    qn = matrix_to_quat(_E(q4, q5, q6))
    r = q[..., :3]
    if qd is None:
        if qdd is not None:
            raise ValueError("fbkin: qdd given without qd")
        return np.concatenate([qn, r], -1)
    qd = _arr("qd", qd, 6)
    c4, s4, c5, s5 = np.cos(q4), np.sin(q4), np.cos(q5), np.sin(q5)
    S = _S(c4, s4, c5, s5)
    omega = _mv(S, qd[..., 3:])
    rd = qd[..., :3]
    batch = np.broadcast_shapes(qn.shape[:-1], omega.shape[:-1])
    bc = lambda a: np.broadcast_to(a, batch + a.shape[-1:])  # noqa: E731
    v = np.concatenate([omega, rd + np.cross(r, omega)], -1)       # [ω; ṙ + r × ω] at the fixed origin
    x = np.concatenate([bc(qn), bc(r), bc(v)], -1)
    if qdd is None:
        return x
    qdd = _arr("qdd", qdd, 6)
    omegad = _mv(S, qdd[..., 3:]) + _mv(_Sdot(c4, s4, c5, s5, qd[..., 3], qd[..., 4]), qd[..., 3:])
    rdd = qdd[..., :3]
    a = np.concatenate([omegad, rdd + np.cross(rd, omega) + np.cross(r, omegad)], -1)
    batch = np.broadcast_shapes(batch, a.shape[:-1])
    bc = lambda z: np.broadcast_to(z, batch + z.shape[-1:])  # noqa: E731
    xd = np.concatenate([bc(quat_derivative(qn, omega, frame="A")), bc(rd), bc(a)], -1)
    return np.broadcast_to(x, batch + (13,)).copy(), xd


def fbkin_inverse(x: ArrayLike, xd: ArrayLike | None = None):
    """The floating base's ``p``, ``x`` or ``(x, xd)`` → the six emulation joints' variables
    (spatial_v2 ``fbkin``, inverse direction).

    q[3], q[5] lie in [−π, π] and q[4] in [−π/2, π/2].  Velocities and accelerations are
    undefined at the singularity q[4] = ±π/2 (the positions are still right).

    Parameters
    ----------
    x : array_like, shape (..., 7) or (..., 13)
        ``p`` = [qn; r] or ``x`` = [qn; r; v] (``xfb`` of :func:`fd_fb`): the unit quaternion
        [w, x, y, z], the position r (m) and the spatial velocity [ω; v_O] in fixed-base
        coordinates.
    xd : array_like, shape (..., 13), optional
        The time derivative of a 13-element ``x``.

    Returns
    -------
    q : ndarray, shape (..., 6)
        From ``p``: the emulation joints' positions (m, rad).
    q, qd : ndarray, shape (..., 6)
        From ``x``: positions and velocities (m/s, rad/s).
    q, qd, qdd : ndarray, shape (..., 6)
        From ``x`` and ``xd``: with the accelerations (m/s², rad/s²).

    Raises
    ------
    TypeError
        An argument is None, a string, complex or object array.
    ValueError
        A last dimension other than 7 or 13 (13 for ``xd``), NaN or inf, a zero quaternion, ``xd``
        with a 7-element ``x``.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> q, qd = np.array([1.0, 2.0, 3.0, 0.3, -0.4, 2.5]), np.array([0.1, 0, 0, 0.5, 0, 1.0])
    >>> q2, qd2 = mb.fbkin_inverse(mb.fbkin_forward(q, qd))
    >>> bool(np.allclose(q2, q)), bool(np.allclose(qd2, qd))                    # a round trip
    (True, True)
    """
    x = _checks.array("x", x, None, copy=False)
    if x.ndim < 1 or x.shape[-1] not in (7, 13):
        raise ValueError(f"fbkin: x must have 7 ([qn; r]) or 13 ([qn; r; v]) elements, got shape {x.shape}")
    E = quat_to_matrix(x[..., :4])
    r = x[..., 4:7]
    q5 = np.arctan2(E[..., 2, 0], np.hypot(E[..., 0, 0], E[..., 1, 0]))
    q6 = np.arctan2(-E[..., 1, 0], E[..., 0, 0])
    # q4 from what remains: rx(q4) = ry(q5)ᵀ rz(q6)ᵀ E — exact even where q6 is ill-defined
    c5, s5, c6, s6 = np.cos(q5), np.sin(q5), np.cos(q6), np.sin(q6)
    # second row of ry(q5)ᵀ rz(q6)ᵀ is rz(q6)ᵀ's second row = [s6, c6, 0]; rx(q4)[1] = [0, c4, s4]
    row1 = s6[..., None] * E[..., 0, :] + c6[..., None] * E[..., 1, :]
    q4 = np.arctan2(row1[..., 2], row1[..., 1])
    q = np.concatenate([r, np.stack([q4, q5, q6], -1)], -1)
    if x.shape[-1] == 7:
        if xd is not None:
            raise ValueError("fbkin: xd needs the 13-element x")
        return q
    c4, s4 = np.cos(q4), np.sin(q4)
    S = _S(c4, s4, c5, s5)
    omega = x[..., 7:10]
    rd = x[..., 10:13] - np.cross(r, omega)
    qd = np.concatenate([rd, np.linalg.solve(S, omega[..., None])[..., 0]], -1)
    if xd is None:
        return q, qd
    xd = _arr("xd", xd, 13)
    omegad = xd[..., 7:10]
    rdd = xd[..., 10:13] - np.cross(rd, omega) - np.cross(r, omegad)
    Sd = _Sdot(c4, s4, c5, s5, qd[..., 3], qd[..., 4])
    rhs = omegad - _mv(Sd, qd[..., 3:])
    qdd = np.concatenate([rdd, np.linalg.solve(S, rhs[..., None])[..., 0]], -1)
    return q, qd, qdd


def fbkin(*args: ArrayLike) -> NDArray[np.float64] | tuple[NDArray[np.float64], ...]:
    """Between the six emulation joints' variables and the floating base's state (spatial_v2
    ``fbkin``).

    The direction follows from the length of the first argument (6: joint variables →
    :func:`fbkin_forward`; 7 or 13: the floating base's state → :func:`fbkin_inverse`), the
    calculation from the number of arguments (the table in the module docstring).

    Parameters
    ----------
    *args : array_like
        ``q`` (..., 6) [, ``qd`` [, ``qdd``]]: the emulation joints' positions (m, rad) and their
        derivatives; or ``p`` (..., 7) = [qn; r]; or ``x`` (..., 13) = [qn; r; v] [, ``xd``].

    Returns
    -------
    ndarray or tuple of ndarray
        ``p``, ``x`` or ``(x, xd)`` forward; ``q``, ``(q, qd)`` or ``(q, qd, qdd)`` inverse.

    Raises
    ------
    TypeError
        An argument is None, a string, complex or object array.
    ValueError
        No argument or more than three; a first argument whose length is not 6, 7 or 13; three
        arguments in the inverse direction; NaN or inf.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> q = np.array([1.0, 2.0, 3.0, 0.3, -0.4, 2.5])
    >>> mb.fbkin(q).shape                               # p = [qn; r]
    (7,)
    >>> bool(np.allclose(mb.fbkin(mb.fbkin(q)), q))     # and back
    True
    """
    if not 1 <= len(args) <= 3:
        raise ValueError(f"fbkin: expected 1 to 3 arguments, got {len(args)}")
    first = _checks.array("fbkin: first argument (q, p or x)", args[0], None, finite=False, copy=False)
    n = first.shape[-1] if first.ndim else 0
    if n == 6:
        return fbkin_forward(*args)
    if n in (7, 13):
        if len(args) > 2:
            raise ValueError("fbkin: the inverse direction takes x (and xd), not three arguments")
        return fbkin_inverse(*args)
    raise ValueError(f"fbkin: first argument must have 6 (q), 7 (p) or 13 (x) elements, got shape "
                     f"{np.shape(args[0])}")


# --------------------------------------------------------------------------- fbanim
def fbanim(X: ArrayLike, Qr: ArrayLike | None = None) -> NDArray[np.float64]:
    """Wrap-free joint angles of the floating base for animation (spatial_v2 ``fbanim``).

    Each sample goes through :func:`fbkin`; then jumps of 2π in q[3] and q[5] between
    neighbouring samples are removed and the correction carried forward (spatial_v2's q(4),
    q(6)), so that an animation turns smoothly instead of flipping.

    Parameters
    ----------
    X : array_like, shape (N, 13) or (N, 7)
        N samples of ``x`` = [qn; r; v] or ``p`` = [qn; r] as rows (this package's convention),
        or as columns like the seed: (13|7, N) or (13|7, 1, N).
    Qr : array_like, shape (N, M), optional
        The real joints' positions per sample, appended to the result ((M, N) or (M, 1, N) with
        column samples; a 1-D array is one joint).

    Returns
    -------
    Q : ndarray, shape (N, 6 + M)
        The emulation joints' positions (m, rad) and ``Qr``'s; (6 + M, N) for column input, as
        the seed.

    Raises
    ------
    TypeError
        ``X`` or ``Qr`` is None (``X``), a string, complex or object array.
    ValueError
        ``X`` of none of the shapes above, NaN or inf, a zero quaternion; ``Qr`` without one row
        per sample.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> yaw = np.linspace(0, 4 * np.pi, 9)                        # two turns about z
    >>> p = mb.fbkin(np.column_stack([np.zeros((9, 5)), yaw]))   # (9, 7) samples
    >>> Q = mb.fbanim(p)
    >>> bool(np.allclose(Q[:, 5], yaw))                           # no jumps of 2π
    True
    """
    A = _checks.array("X", X, None, copy=False)
    columns = False
    if A.ndim == 3 and A.shape[1] == 1 and A.shape[0] in (7, 13):
        A, columns = A[:, 0, :].T, True
    elif A.ndim == 2 and A.shape[1] not in (7, 13) and A.shape[0] in (7, 13):
        A, columns = A.T, True
    if A.ndim != 2 or A.shape[1] not in (7, 13):
        raise ValueError(f"fbanim: X must be (N, 13), (N, 7), (13, N), (7, N), (13, 1, N) or (7, 1, N); "
                         f"got {np.shape(X)}")
    Q = fbkin_inverse(A[:, :7])
    Q[:, 3] = np.unwrap(Q[:, 3])
    Q[:, 5] = np.unwrap(Q[:, 5])
    if Qr is not None:
        R = _checks.array("Qr", Qr, None, copy=False)
        if columns:
            if R.ndim == 3 and R.shape[1] == 1:
                R = R[:, 0, :]
            R = R.T
        if R.ndim == 1:
            R = R[:, None]
        if R.ndim != 2 or R.shape[0] != A.shape[0]:
            raise ValueError(f"fbanim: Qr must have one row of joint data per sample ({A.shape[0]}), "
                             f"got shape {np.shape(Qr)}")
        Q = np.concatenate([Q, R], axis=1)
    return Q.T if columns else Q
