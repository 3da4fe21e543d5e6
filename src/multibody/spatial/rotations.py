"""3-D rotations: coordinate rotations, rotation vectors, quaternions, skew matrices.

spatial_v2 (Featherstone) functions ``rx ry rz rv rq rqd skew``, with the same conventions:

* ``E = rx(θ)`` is the *coordinate transform* from A to B coordinates when frame B is rotated
  relative to A by θ about their common x axis: ``rx(θ) = [[1,0,0],[0,c,s],[0,-s,c]]``.
  It is the transpose of the "rotation matrix" that rotates vectors.
* Quaternions are scalar-first ``[w, x, y, z]`` and give the orientation of B relative to A;
  ``rq(q)`` returns the A→B coordinate transform ``E``.
* Vectors are 1-D numpy arrays (spatial_v2's column vectors).

Every function accepts a leading batch dimension, e.g. ``rx(theta)`` with ``theta.shape == (N,)``
returns ``(N, 3, 3)``; the work is vectorised with numpy, never a Python loop over the batch.
Where spatial_v2 decides what to do from the argument's shape (``rv``, ``rq``, ``skew``), an
argument whose last two dimensions are ``(3, 3)`` is a matrix; use the explicit functions
(``rotvec_to_matrix``, ``matrix_to_rotvec``, ``quat_to_matrix``, ``matrix_to_quat``, ``hat``,
``vee``) when a batch of three vectors could be mistaken for a matrix.
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import as_real, check_last, check_last2, shape_error

__all__ = [
    "rx", "ry", "rz", "rv", "rq", "rqd", "skew",
    "coord_rotation_x", "coord_rotation_y", "coord_rotation_z",
    "rotvec_to_matrix", "matrix_to_rotvec", "rotation_vector",
    "quat_to_matrix", "matrix_to_quat", "quaternion", "quat_derivative",
    "hat", "vee", "KSTAB",
]

#: Magnitude-stabilisation constant of ``rqd`` (spatial_v2: ``Kstab = 0.1``).
KSTAB = 0.1


# --------------------------------------------------------------------------- elementary rotations
def _axis_rotation(theta, fn: str, axis: int) -> np.ndarray:
    th = as_real(theta, fn, "theta")
    c, s = np.cos(th), np.sin(th)
    E = np.zeros(th.shape + (3, 3))
    i, j = [k for k in range(3) if k != axis]
    E[..., axis, axis] = 1.0
    E[..., i, i] = c
    E[..., j, j] = c
    # y axis is the odd one out: rotating about y mixes (z, x) in cyclic order.
    if axis == 1:
        i, j = j, i
    E[..., i, j] = s
    E[..., j, i] = -s
    return E


def rx(theta) -> np.ndarray:
    """spatial_v2 ``rx``: 3×3 coordinate transform for a rotation θ about the x axis.

    ``rx(θ) = [[1, 0, 0], [0, c, s], [0, -s, c]]``, mapping A- to B-coordinates when frame B is
    rotated by θ about their common x axis. ``theta`` may be an array of shape ``(...)``; the
    result then has shape ``(..., 3, 3)``.

    >>> rx(np.pi / 2).round(12)
    array([[ 1.,  0.,  0.],
           [ 0.,  0.,  1.],
           [ 0., -1.,  0.]])
    """
    return _axis_rotation(theta, "rx", 0)


def ry(theta) -> np.ndarray:
    """spatial_v2 ``ry``: 3×3 coordinate transform for a rotation θ about the y axis.

    ``ry(θ) = [[c, 0, -s], [0, 1, 0], [s, 0, c]]``; batched over ``theta``.

    >>> ry(np.pi / 2).round(12)
    array([[ 0.,  0., -1.],
           [ 0.,  1.,  0.],
           [ 1.,  0.,  0.]])
    """
    return _axis_rotation(theta, "ry", 1)


def rz(theta) -> np.ndarray:
    """spatial_v2 ``rz``: 3×3 coordinate transform for a rotation θ about the z axis.

    ``rz(θ) = [[c, s, 0], [-s, c, 0], [0, 0, 1]]``; batched over ``theta``.

    >>> rz(np.pi / 2).round(12)
    array([[ 0.,  1.,  0.],
           [-1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    return _axis_rotation(theta, "rz", 2)


# --------------------------------------------------------------------------- skew
def hat(v) -> np.ndarray:
    """3×3 skew-symmetric matrix of ``v`` (``hat(a) @ b == cross(a, b)``); batched ``(..., 3)``.

    >>> hat([1, 2, 3])
    array([[ 0., -3.,  2.],
           [ 3.,  0., -1.],
           [-2.,  1.,  0.]])
    """
    a = as_real(v, "hat", "v")
    check_last(a, 3, "hat", "v")
    return _hat(a)


def _hat(a: np.ndarray) -> np.ndarray:
    if a.ndim == 1:  # fast path for the common single-vector call
        x, y, z = a.tolist()
        return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    S = np.zeros(a.shape[:-1] + (3, 3))
    x, y, z = a[..., 0], a[..., 1], a[..., 2]
    S[..., 0, 1] = -z
    S[..., 0, 2] = y
    S[..., 1, 0] = z
    S[..., 1, 2] = -x
    S[..., 2, 0] = -y
    S[..., 2, 1] = x
    return S


def vee(A) -> np.ndarray:
    """3-D vector of the skew-symmetric part of ``A`` (inverse of :func:`hat`); batched.

    ``vee(A) = 0.5 * [A[2,1]-A[1,2], A[0,2]-A[2,0], A[1,0]-A[0,1]]``.

    >>> vee(hat([1, 2, 3]))
    array([1., 2., 3.])
    """
    a = as_real(A, "vee", "A")
    check_last2(a, 3, 3, "vee", "A")
    return _vee(a)


def _vee(A: np.ndarray) -> np.ndarray:
    return 0.5 * np.stack(
        [A[..., 2, 1] - A[..., 1, 2], A[..., 0, 2] - A[..., 2, 0], A[..., 1, 0] - A[..., 0, 1]],
        axis=-1,
    )


def skew(x) -> np.ndarray:
    """spatial_v2 ``skew``: vector → skew-symmetric matrix, or matrix → vector.

    If the last two dimensions of ``x`` are ``(3, 3)`` it is taken to be a matrix ``A`` and the
    vector of its skew-symmetric part is returned (:func:`vee`); otherwise ``x`` must have
    shape ``(..., 3)`` and the skew-symmetric matrix is returned (:func:`hat`).

    >>> skew([1, 2, 3]) @ np.array([4, 5, 6])      # == cross([1,2,3], [4,5,6])
    array([-3.,  6., -3.])
    >>> skew(skew([1, 2, 3]))
    array([1., 2., 3.])
    """
    a = as_real(x, "skew", "x")
    if a.ndim >= 2 and a.shape[-2:] == (3, 3):
        return _vee(a)
    if a.ndim >= 1 and a.shape[-1] == 3:
        return _hat(a)
    raise shape_error("skew", "x", "be a 3-vector (..., 3) or a 3×3 matrix (..., 3, 3)", a)


# --------------------------------------------------------------------------- rotation vectors
def rotvec_to_matrix(v) -> np.ndarray:
    """Coordinate transform ``E`` for the rotation vector ``v`` (spatial_v2 ``rv(v)``); batched.

    B is rotated relative to A by ``|v|`` radians about ``v``:
    ``E = cos θ·1 − sin θ·skew(u) + (1 − cos θ)·u uᵀ``, ``u = v/θ``.

    >>> np.allclose(rotvec_to_matrix([1, 0, 0]), rx(1))
    True
    """
    a = as_real(v, "rotvec_to_matrix", "v")
    check_last(a, 3, "rotvec_to_matrix", "v")
    return _rotvec_to_matrix(a)


def _rotvec_to_matrix(v: np.ndarray) -> np.ndarray:
    theta = np.linalg.norm(v, axis=-1)
    safe = np.where(theta > 0, theta, 1.0)
    u = v / safe[..., None]
    c = np.cos(theta)[..., None, None]
    s = np.sin(theta)[..., None, None]
    c1 = 2.0 * np.sin(theta / 2) ** 2  # 1 - cos θ without cancellation
    E = c * np.eye(3) - s * _hat(u) + c1[..., None, None] * (u[..., :, None] * u[..., None, :])
    return E


def matrix_to_rotvec(E) -> np.ndarray:
    """Rotation vector of the coordinate transform ``E`` (spatial_v2 ``rv(E)``); batched.

    ``E`` must be accurately orthonormal. The result has magnitude in ``[0, π]``; at exactly π
    its sign is arbitrary (``v`` and ``−v`` are the same rotation).

    >>> matrix_to_rotvec(ry(2)).round(12) + 0.0
    array([0., 2., 0.])
    """
    a = as_real(E, "matrix_to_rotvec", "E")
    check_last2(a, 3, 3, "matrix_to_rotvec", "E")
    return _matrix_to_rotvec(a)


def _matrix_to_rotvec(E: np.ndarray) -> np.ndarray:
    w = -_vee(E)  # == sin(θ)·u
    s = np.linalg.norm(w, axis=-1)
    c = (np.trace(E, axis1=-2, axis2=-1) - 1.0) / 2.0
    theta = np.arctan2(s, c)
    # small/medium angles: v = θ/s · w (and 0 for the identity)
    small = theta < 0.9 * np.pi
    v_small = np.where(
        (s > 0)[..., None], (theta / np.where(s > 0, s, 1.0))[..., None] * w, 0.0
    )
    # large angles: the symmetric part carries u uᵀ; take its biggest column, sign from w
    M = E - c[..., None, None] * np.eye(3)
    M = M + np.swapaxes(M, -1, -2)  # == 2(1 - c) u uᵀ
    d = np.diagonal(M, axis1=-2, axis2=-1)
    k = np.argmax(d, axis=-1)  # first maximum, as in spatial_v2's >= tests
    col = np.take_along_axis(M, k[..., None, None], axis=-1)[..., 0]
    wk = np.take_along_axis(w, k[..., None], axis=-1)[..., 0]
    col = np.where((wk >= 0)[..., None], col, -col)
    ncol = np.linalg.norm(col, axis=-1)
    v_large = (theta / np.where(ncol > 0, ncol, 1.0))[..., None] * col
    return np.where(small[..., None], v_small, v_large)


def rv(x) -> np.ndarray:
    """spatial_v2 ``rv``: rotation vector ↔ 3×3 coordinate transform.

    ``rv(v)`` returns ``E`` (:func:`rotvec_to_matrix`); ``rv(E)`` returns ``v``
    (:func:`matrix_to_rotvec`). An argument whose last two dimensions are ``(3, 3)`` is ``E``.
    ``v`` is common to both frames: ``rv(v) @ v == v``.

    >>> np.allclose(rv([1, 0, 0]), rx(1))
    True
    >>> rv(ry(2)).round(12) + 0.0
    array([0., 2., 0.])
    """
    a = as_real(x, "rv", "x")
    if a.ndim >= 2 and a.shape[-2:] == (3, 3):
        return _matrix_to_rotvec(a)
    if a.ndim >= 1 and a.shape[-1] == 3:
        return _rotvec_to_matrix(a)
    raise shape_error("rv", "x", "be a rotation vector (..., 3) or a matrix (..., 3, 3)", a)


rotation_vector = rv
coord_rotation_x = rx
coord_rotation_y = ry
coord_rotation_z = rz


# --------------------------------------------------------------------------- quaternions
def quat_to_matrix(q) -> np.ndarray:
    """A→B coordinate transform ``E`` of quaternion ``q = [w, x, y, z]`` (spatial_v2 ``rq(q)``).

    ``q`` gives the orientation of B relative to A; it may have any nonzero magnitude and is
    normalised first. Batched over ``(..., 4)``.

    >>> h = 0.7
    >>> np.allclose(quat_to_matrix([np.cos(h/2), np.sin(h/2), 0, 0]), rx(h))
    True
    """
    a = as_real(q, "quat_to_matrix", "q")
    check_last(a, 4, "quat_to_matrix", "q")
    return _quat_to_matrix(a, "quat_to_matrix")


def unit_quaternion(q, fn: str = "q") -> np.ndarray:
    """``q / |q|`` over the last axis, for any finite nonzero ``q`` — entries of 1e200 or 1e-200 too.

    The entries are first scaled by the power of two that brings the largest into [0.5, 1): exact,
    so ordinary quaternions give the same bits as ``q / |q|``, and the squared norm can neither
    overflow nor underflow.  A zero quaternion raises ``ValueError`` naming ``fn``.

    >>> unit_quaternion(1e200 * np.array([1.0, 1.0, 0.0, 0.0])) * np.sqrt(2)
    array([1., 1., 0., 0.])
    """
    q = np.asarray(q, dtype=float)
    top = np.max(np.abs(q), axis=-1, keepdims=True)
    if np.any(top == 0):
        raise ValueError(f"{fn}: q must be a nonzero quaternion, got norm 0")
    q = np.ldexp(q, -np.frexp(top)[1])
    return q / np.sqrt(np.sum(q * q, axis=-1, keepdims=True))


def _quat_to_matrix(q: np.ndarray, fn: str) -> np.ndarray:
    q = unit_quaternion(q, fn)
    q0, q1, q2, q3 = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    E = np.empty(q.shape[:-1] + (3, 3))
    E[..., 0, 0] = q0 * q0 + q1 * q1 - 0.5
    E[..., 0, 1] = q1 * q2 + q0 * q3
    E[..., 0, 2] = q1 * q3 - q0 * q2
    E[..., 1, 0] = q1 * q2 - q0 * q3
    E[..., 1, 1] = q0 * q0 + q2 * q2 - 0.5
    E[..., 1, 2] = q2 * q3 + q0 * q1
    E[..., 2, 0] = q1 * q3 + q0 * q2
    E[..., 2, 1] = q2 * q3 - q0 * q1
    E[..., 2, 2] = q0 * q0 + q3 * q3 - 0.5
    return 2.0 * E


def matrix_to_quat(E) -> np.ndarray:
    """Unit quaternion ``[w, x, y, z]`` with ``w >= 0`` of the coordinate transform ``E``.

    spatial_v2 ``rq(E)``; ``E`` must be accurately orthonormal. Batched over ``(..., 3, 3)``.

    >>> matrix_to_quat(rz(np.pi / 2)).round(12) + 0.0
    array([0.70710678, 0.        , 0.        , 0.70710678])
    """
    a = as_real(E, "matrix_to_quat", "E")
    check_last2(a, 3, 3, "matrix_to_quat", "E")
    return _matrix_to_quat(a)


def _matrix_to_quat(E: np.ndarray) -> np.ndarray:
    tr = np.trace(E, axis1=-2, axis2=-1)  # == 4 q0² − 1
    v = -_vee(E)  # == 2 q0 [q1, q2, q3]
    q_pos = np.concatenate([((tr + 1.0) / 2.0)[..., None], v], axis=-1)
    # tr <= 0: the symmetric part gives 4 q_k [q1,q2,q3] in column k; choose the largest
    M = E - ((tr - 1.0) / 2.0)[..., None, None] * np.eye(3)
    M = M + np.swapaxes(M, -1, -2)
    k = np.argmax(np.diagonal(M, axis1=-2, axis2=-1), axis=-1)
    col = np.take_along_axis(M, k[..., None, None], axis=-1)[..., 0]
    vk = np.take_along_axis(v, k[..., None], axis=-1)[..., 0]
    q_neg = np.concatenate([(2.0 * vk)[..., None], col], axis=-1)
    q_neg = np.where((q_neg[..., :1] < 0), -q_neg, q_neg)
    q = np.where((tr > 0)[..., None], q_pos, q_neg)
    return q / np.linalg.norm(q, axis=-1)[..., None]


def rq(x) -> np.ndarray:
    """spatial_v2 ``rq``: quaternion ↔ 3×3 coordinate transform.

    ``rq(q)`` (``q`` of shape ``(..., 4)``, any nonzero magnitude) returns ``E`` (A→B
    coordinates, B's orientation relative to A is ``q``); ``rq(E)`` (shape ``(..., 3, 3)``)
    returns the unit quaternion with ``q[0] >= 0``.

    >>> h = 1.2
    >>> np.allclose(rq([np.cos(h/2), np.sin(h/2), 0, 0]), rx(h))
    True
    >>> np.allclose(rq(rx(h)), [np.cos(h/2), np.sin(h/2), 0, 0])
    True
    """
    a = as_real(x, "rq", "x")
    if a.ndim >= 2 and a.shape[-2:] == (3, 3):
        return _matrix_to_quat(a)
    if a.ndim >= 1 and a.shape[-1] == 4:
        return _quat_to_matrix(a, "rq")
    raise shape_error("rq", "x", "be a quaternion (..., 4) or a matrix (..., 3, 3)", a)


quaternion = rq


def rqd(a, b) -> np.ndarray:
    """spatial_v2 ``rqd``: quaternion derivative from angular velocity.

    ``rqd(q, wB)`` and ``rqd(wA, q)`` both return ``qd``, the time derivative of ``q`` (the
    orientation of B relative to A), given the angular velocity of B relative to A expressed in
    B coordinates (``wB``) or A coordinates (``wA``). If the first argument has length 4 it is
    ``q``, otherwise it is ``wA``. With ``Q(q)`` the quaternion-product matrix,

        ``qd = 0.5 · Q(q) · [Kstab·|w|·(1 − |q|); w]``,    ``Kstab = 0.1``,

    i.e. ``qd = ½ q ⊗ (0, wB)`` (or ``½ (0, wA) ⊗ q``) plus a magnitude-stabilising term that
    makes ``|q|`` converge to 1 when ``q`` is integrated from ``qd``. Batched over the leading
    dimensions (broadcast between ``q`` and ``w``).

    >>> rqd([1, 0, 0, 0], [0, 0, 2])
    array([0., 0., 0., 1.])
    """
    A = as_real(a, "rqd", "first argument")
    B = as_real(b, "rqd", "second argument")
    if A.ndim >= 1 and A.shape[-1] == 4:
        q, w, frame = A, B, "B"
        check_last(w, 3, "rqd", "wB (second argument)")
    elif A.ndim >= 1 and A.shape[-1] == 3:
        w, q, frame = A, B, "A"
        check_last(q, 4, "rqd", "q (second argument)")
    else:
        raise shape_error("rqd", "first argument", "be q (..., 4) or wA (..., 3)", A)
    return _rqd(q, w, frame)


def _norm(q: np.ndarray) -> np.ndarray:
    """|q| over the last axis without overflow or underflow (scaled by the largest entry)."""
    top = np.max(np.abs(q), axis=-1)
    safe = np.where(top > 0, top, 1.0)
    return top * np.sqrt(np.sum((q / safe[..., None]) ** 2, axis=-1))


def _finite_rate(qd: np.ndarray, fn: str) -> np.ndarray:
    """The quaternion rate, or ValueError when finite inputs give a rate beyond the double range
    (|q| ~ 1e200 with the magnitude stabilisation): never a silent inf or NaN."""
    if not np.isfinite(qd).all():
        from ..core import ResultOverflowError  # the one class for finite input whose result overflows
        raise ResultOverflowError(f"{fn}: the quaternion rate overflows (|q| far from 1, e.g. 1e200); normalise q first")
    return qd


def _rqd(q: np.ndarray, w: np.ndarray, frame: str, fn: str = "rqd") -> np.ndarray:
    if q.ndim == 1 and w.ndim == 1:  # fast path for the common single-quaternion call
        return _finite_rate(_rqd1(q.tolist(), w.tolist(), frame), fn)
    batch = np.broadcast_shapes(q.shape[:-1], w.shape[:-1])
    q = np.broadcast_to(q, batch + (4,))
    w = np.broadcast_to(w, batch + (3,))
    q0, q1, q2, q3 = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    w1, w2, w3 = w[..., 0], w[..., 1], w[..., 2]
    sgn = 1.0 if frame == "B" else -1.0  # q ⊗ (0,w) vs (0,w) ⊗ q differ in the cross term
    qd = np.empty(q.shape)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        k = KSTAB * np.linalg.norm(w, axis=-1) * (1.0 - _norm(q))
        qd[..., 0] = q0 * k - q1 * w1 - q2 * w2 - q3 * w3
        qd[..., 1] = q1 * k + q0 * w1 + sgn * (q2 * w3 - q3 * w2)
        qd[..., 2] = q2 * k + q0 * w2 + sgn * (q3 * w1 - q1 * w3)
        qd[..., 3] = q3 * k + q0 * w3 + sgn * (q1 * w2 - q2 * w1)
        qd *= 0.5
    return _finite_rate(qd, fn)


def quat_derivative(q, w, frame: str = "B") -> np.ndarray:
    """Quaternion derivative ``qd`` for angular velocity ``w`` expressed in ``frame`` "A" or "B".

    Pythonic form of :func:`rqd`: ``quat_derivative(q, wB) == rqd(q, wB)`` and
    ``quat_derivative(q, wA, frame="A") == rqd(wA, q)``.

    >>> quat_derivative([1, 0, 0, 0], [2, 0, 0])
    array([0., 1., 0., 0.])
    """
    Q = as_real(q, "quat_derivative", "q")
    W = as_real(w, "quat_derivative", "w")
    check_last(Q, 4, "quat_derivative", "q")
    check_last(W, 3, "quat_derivative", "w")
    if frame not in ("A", "B"):
        raise ValueError(f"quat_derivative: frame must be 'A' or 'B', got {frame!r}")
    return _rqd(Q, W, frame, "quat_derivative")


def _rqd1(q, w, frame: str) -> np.ndarray:
    q0, q1, q2, q3 = q
    w1, w2, w3 = w
    k = KSTAB * math.sqrt(w1 * w1 + w2 * w2 + w3 * w3) * (1.0 - math.hypot(q0, q1, q2, q3))
    sgn = 1.0 if frame == "B" else -1.0
    return 0.5 * np.array([
        q0 * k - q1 * w1 - q2 * w2 - q3 * w3,
        q1 * k + q0 * w1 + sgn * (q2 * w3 - q3 * w2),
        q2 * k + q0 * w2 + sgn * (q3 * w1 - q1 * w3),
        q3 * k + q0 * w3 + sgn * (q1 * w2 - q2 * w1),
    ])
