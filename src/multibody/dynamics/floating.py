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

from .. import _boundary as B
from .. import _checks
from ..core import _core
from ..model.joints import JointType
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


def fd_fb(model, xfb, q=None, qd=None, tau=None, f_ext=None):
    """spatial_v2 ``FDfb``: floating-base forward dynamics without the emulation's singularity.

    ``xfb`` (…, 13) = [qn; r; vfb] (see the module docstring); ``q`` (…, nq − 6), ``qd`` and
    ``tau`` (…, nv − 6) belong to the real joints (they may be omitted when ``model.nb == 6``,
    a lone floating body, as in the seed).  Returns ``(xdfb, qdd)``: the time derivative
    of ``xfb`` (``[rqd(ω, qn); Vpt(vfb, r); afb]``, ``afb`` the floating base's spatial
    acceleration in fixed-base coordinates, gravity included) and the real joints' accelerations.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> from multibody.dynamics.floating import fd_fb
    >>> m = mb.models.floatbase(mb.models.auto_tree(3))
    >>> x = np.r_[1, 0, 0, 0, 0, 0, 0, np.zeros(6)]
    >>> xd, qdd = fd_fb(m, x, np.zeros(2), np.zeros(2), np.zeros(2))
    >>> np.allclose(xd[7:], [0, 0, 0, 0, 0, -9.81])      # it falls freely
    True
    """
    _checks.model(model)
    a, common = _fb_args(model, xfb=xfb, q=q, qd=qd, tau=tau, f_ext=f_ext)
    xd, qdd = _core.fdfb(model._c, a["xfb"], a["q"], a["qd"], a["tau"], a.get("f_ext"))
    return xd.reshape(common + (13,)), qdd.reshape(common + (model.nv - 6,))


def id_fb(model, xfb, q=None, qd=None, qdd=None, f_ext=None):
    """spatial_v2 ``IDfb`` (RBDA table 9.6): joint forces and base acceleration for given q̈.

    A hybrid problem: the real joints' accelerations ``qdd`` are given, the floating base's is
    not.  Returns ``(xdfb, tau)`` with ``xdfb`` as in :func:`fd_fb`.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> from multibody.dynamics.floating import id_fb
    >>> m = mb.models.floatbase(mb.models.auto_tree(3))
    >>> x = np.r_[1, 0, 0, 0, 0, 0, 0, np.zeros(6)]
    >>> xd, tau = id_fb(m, x, np.zeros(2), np.zeros(2), np.zeros(2))
    >>> np.allclose(tau, 0)                            # in free fall no torque holds the pose
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
    return a.reshape(batch + (n,))


def fbkin_forward(q, qd=None, qdd=None):
    """Joint variables of the six emulation joints → ``p`` (7), ``x`` (13) or ``(x, xd)``."""
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


def fbkin_inverse(x, xd=None):
    """``p`` (7) → ``q``; ``x`` (13) → ``(q, qd)``; ``(x, xd)`` → ``(q, qd, qdd)``.

    q[3], q[5] ∈ [−π, π], q[4] ∈ [−π/2, π/2].  Velocities and accelerations are undefined at the
    singularity q[4] = ±π/2 (the positions are still right).
    """
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("fbkin: x must be an array of numbers") from None
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


def fbkin(*args):
    """spatial_v2 ``fbkin``: between the six emulation joints' variables and xfb (see module doc).

    Direction from the length of the first argument (6 → forward; 7 or 13 → inverse), the
    calculation from the number of arguments.

    Example
    -------
    >>> import numpy as np
    >>> from multibody.dynamics.floating import fbkin
    >>> q = np.array([1.0, 2.0, 3.0, 0.3, -0.4, 2.5])
    >>> np.allclose(fbkin(fbkin(q)), q)
    True
    """
    if not 1 <= len(args) <= 3:
        raise ValueError(f"fbkin: expected 1 to 3 arguments, got {len(args)}")
    n = np.shape(args[0])[-1] if np.ndim(args[0]) else 0
    if n == 6:
        return fbkin_forward(*args)
    if n in (7, 13):
        if len(args) > 2:
            raise ValueError("fbkin: the inverse direction takes x (and xd), not three arguments")
        return fbkin_inverse(*args)
    raise ValueError(f"fbkin: first argument must have 6 (q), 7 (p) or 13 (x) elements, got shape "
                     f"{np.shape(args[0])}")


# --------------------------------------------------------------------------- fbanim
def fbanim(X, Qr=None):
    """spatial_v2 ``fbanim``: wrap-free joint angles of the floating base for animation.

    ``X`` holds N samples of ``x`` (13) or ``p`` (7) — as rows, shape (N, 13|7) (this package's
    convention), or as columns like the seed, shape (13|7, N) or (13|7, 1, N).  Each sample goes
    through :func:`fbkin`; then jumps of 2π in q[3] and q[5] between neighbouring samples are
    removed and the correction carried forward (spatial_v2's q(4), q(6)).  ``Qr`` (N, M) — or
    (M, N) / (M, 1, N) with column samples — is appended.  Returns (N, 6 [+ M]), or the seed's
    (6 [+ M], N) for column input.
    """
    A = np.asarray(X, dtype=float)
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
        R = np.asarray(Qr, dtype=float)
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
