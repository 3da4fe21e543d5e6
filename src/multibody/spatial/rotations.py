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

from ._validate import as_real, batch_shape, check_last, check_last2, finite_result, shape_error

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

    ``rx(θ) = [[1, 0, 0], [0, c, s], [0, -s, c]]``, mapping A- to B-coordinates when frame B is rotated by θ about their
    common x axis (the transpose of the matrix that rotates vectors). Also named
    ``coord_rotation_x``.

    Parameters
    ----------
    theta : array_like, shape (...)
        The angle (rad) of B relative to A about the x axis; an array gives one transform per angle.

    Returns
    -------
    E : ndarray, shape (..., 3, 3)
        The A → B coordinate transform of 3-vectors.

    Raises
    ------
    TypeError
        ``theta`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``theta`` contains NaN or inf, or is a ragged nested sequence.

    Examples
    --------
    >>> rx(np.pi / 2).round(12)
    array([[ 1.,  0.,  0.],
           [ 0.,  0.,  1.],
           [ 0., -1.,  0.]])
    >>> rx([0.0, 0.1, 0.2]).shape
    (3, 3, 3)
    """
    return _axis_rotation(theta, "rx", 0)


def ry(theta) -> np.ndarray:
    """spatial_v2 ``ry``: 3×3 coordinate transform for a rotation θ about the y axis.

    ``ry(θ) = [[c, 0, -s], [0, 1, 0], [s, 0, c]]``, mapping A- to B-coordinates when frame B is rotated by θ about their
    common y axis (the transpose of the matrix that rotates vectors). Also named
    ``coord_rotation_y``.

    Parameters
    ----------
    theta : array_like, shape (...)
        The angle (rad) of B relative to A about the y axis; an array gives one transform per angle.

    Returns
    -------
    E : ndarray, shape (..., 3, 3)
        The A → B coordinate transform of 3-vectors.

    Raises
    ------
    TypeError
        ``theta`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``theta`` contains NaN or inf, or is a ragged nested sequence.

    Examples
    --------
    >>> ry(np.pi / 2).round(12)
    array([[ 0.,  0., -1.],
           [ 0.,  1.,  0.],
           [ 1.,  0.,  0.]])
    """
    return _axis_rotation(theta, "ry", 1)


def rz(theta) -> np.ndarray:
    """spatial_v2 ``rz``: 3×3 coordinate transform for a rotation θ about the z axis.

    ``rz(θ) = [[c, s, 0], [-s, c, 0], [0, 0, 1]]``, mapping A- to B-coordinates when frame B is rotated by θ about their
    common z axis (the transpose of the matrix that rotates vectors). Also named
    ``coord_rotation_z``.

    Parameters
    ----------
    theta : array_like, shape (...)
        The angle (rad) of B relative to A about the z axis; an array gives one transform per angle.

    Returns
    -------
    E : ndarray, shape (..., 3, 3)
        The A → B coordinate transform of 3-vectors.

    Raises
    ------
    TypeError
        ``theta`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``theta`` contains NaN or inf, or is a ragged nested sequence.

    Examples
    --------
    >>> rz(np.pi / 2).round(12)
    array([[ 0.,  1.,  0.],
           [-1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    return _axis_rotation(theta, "rz", 2)


# --------------------------------------------------------------------------- skew
def hat(v) -> np.ndarray:
    """3×3 skew-symmetric matrix of a 3-vector: ``hat(a) @ b == cross(a, b)``.

    The vector → matrix half of spatial_v2 ``skew``; :func:`vee` is its inverse.

    Parameters
    ----------
    v : array_like, shape (..., 3)
        The vector (any unit; an angular velocity in rad/s gives the matrix of ``ω ×``).

    Returns
    -------
    S : ndarray, shape (..., 3, 3)
        ``[[0, -z, y], [z, 0, -x], [-y, x, 0]]``.

    Raises
    ------
    TypeError
        ``v`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``v`` whose last dimension is not 3, NaN or inf.

    Examples
    --------
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


@finite_result
def vee(A) -> np.ndarray:
    """3-vector of the skew-symmetric part of a 3×3 matrix (inverse of :func:`hat`).

    ``vee(A) = ½·[A[2,1] − A[1,2], A[0,2] − A[2,0], A[1,0] − A[0,1]]``: the matrix → vector half of
    spatial_v2 ``skew``.

    Parameters
    ----------
    A : array_like, shape (..., 3, 3)
        The matrix; its symmetric part is ignored.

    Returns
    -------
    v : ndarray, shape (..., 3)
        The vector whose :func:`hat` is the skew-symmetric part of ``A``.

    Raises
    ------
    TypeError
        ``A`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``A`` whose last two dimensions are not (3, 3), NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
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


@finite_result
def skew(x) -> np.ndarray:
    """spatial_v2 ``skew``: 3-vector → skew-symmetric matrix, or matrix → 3-vector.

    If the last two dimensions of ``x`` are ``(3, 3)`` it is a matrix ``A`` and the vector of its
    skew-symmetric part is returned (:func:`vee`); otherwise ``x`` must have shape ``(..., 3)``
    and its skew-symmetric matrix is returned (:func:`hat`). Use ``hat``/``vee`` when a batch of
    three vectors could be mistaken for a matrix.

    Parameters
    ----------
    x : array_like, shape (..., 3) or (..., 3, 3)
        A vector or a matrix.

    Returns
    -------
    ndarray, shape (..., 3, 3) or (..., 3)
        ``hat(x)`` for a vector, ``vee(x)`` for a matrix.

    Raises
    ------
    TypeError
        ``x`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``x`` is neither (..., 3) nor (..., 3, 3); NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
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
@finite_result
def rotvec_to_matrix(v) -> np.ndarray:
    """Coordinate transform ``E`` of a rotation vector (the vector half of spatial_v2 ``rv``).

    B is rotated relative to A by ``θ = |v|`` radians about ``u = v/θ``:
    ``E = cos θ·1 − sin θ·skew(u) + (1 − cos θ)·u uᵀ``; ``v`` has the same coordinates in A and B.

    Parameters
    ----------
    v : array_like, shape (..., 3)
        The rotation vector (rad) of B relative to A.

    Returns
    -------
    E : ndarray, shape (..., 3, 3)
        The A → B coordinate transform.

    Raises
    ------
    TypeError
        ``v`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``v`` whose last dimension is not 3, NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
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


@finite_result
def matrix_to_rotvec(E) -> np.ndarray:
    """Rotation vector of a coordinate transform (the matrix half of spatial_v2 ``rv``).

    ``E`` must be accurately orthonormal (it is not checked). The result has magnitude in
    ``[0, π]``; at exactly π its sign is arbitrary (``v`` and ``−v`` are the same rotation).

    Parameters
    ----------
    E : array_like, shape (..., 3, 3)
        An A → B coordinate transform.

    Returns
    -------
    v : ndarray, shape (..., 3)
        The rotation vector (rad) of B relative to A: ``rotvec_to_matrix(v) == E``.

    Raises
    ------
    TypeError
        ``E`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``E`` whose last two dimensions are not (3, 3), NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
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


@finite_result
def rv(x) -> np.ndarray:
    """spatial_v2 ``rv``: rotation vector ↔ 3×3 coordinate transform (also ``rotation_vector``).

    ``rv(v)`` returns ``E`` (:func:`rotvec_to_matrix`); ``rv(E)`` returns ``v``
    (:func:`matrix_to_rotvec`). An argument whose last two dimensions are ``(3, 3)`` is ``E``.
    ``v`` is common to both frames: ``rv(v) @ v == v``.

    Parameters
    ----------
    x : array_like, shape (..., 3) or (..., 3, 3)
        A rotation vector (rad) of B relative to A, or an orthonormal A → B coordinate transform.

    Returns
    -------
    ndarray, shape (..., 3, 3) or (..., 3)
        ``E`` for a vector, ``v`` (magnitude in [0, π]) for a matrix.

    Raises
    ------
    TypeError
        ``x`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``x`` is neither (..., 3) nor (..., 3, 3); NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
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
    """A → B coordinate transform of a quaternion (the quaternion half of spatial_v2 ``rq``).

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Scalar-first ``[w, x, y, z]``: the orientation of B relative to A. Any nonzero magnitude;
        it is normalised first (without overflow, even at 1e200).

    Returns
    -------
    E : ndarray, shape (..., 3, 3)
        The A → B coordinate transform.

    Raises
    ------
    TypeError
        ``q`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``q`` whose last dimension is not 4, the zero quaternion, NaN or inf.

    Examples
    --------
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


@finite_result
def matrix_to_quat(E) -> np.ndarray:
    """Unit quaternion of a coordinate transform (the matrix half of spatial_v2 ``rq``).

    ``E`` must be accurately orthonormal (it is not checked).

    Parameters
    ----------
    E : array_like, shape (..., 3, 3)
        An A → B coordinate transform.

    Returns
    -------
    q : ndarray, shape (..., 4)
        Scalar-first ``[w, x, y, z]`` with ``|q| = 1`` and ``w >= 0``: the orientation of B relative to A.

    Raises
    ------
    TypeError
        ``E`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``E`` whose last two dimensions are not (3, 3), NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
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


@finite_result
def rq(x) -> np.ndarray:
    """spatial_v2 ``rq``: quaternion ↔ 3×3 coordinate transform (also ``quaternion``).

    ``rq(q)`` returns ``E`` (:func:`quat_to_matrix`); ``rq(E)`` returns the unit quaternion with
    ``q[0] >= 0`` (:func:`matrix_to_quat`). An argument whose last two dimensions are ``(3, 3)``
    is ``E``.

    Parameters
    ----------
    x : array_like, shape (..., 4) or (..., 3, 3)
        A scalar-first quaternion ``[w, x, y, z]`` (any nonzero magnitude) giving B's orientation
        relative to A, or an orthonormal A → B coordinate transform.

    Returns
    -------
    ndarray, shape (..., 3, 3) or (..., 4)
        ``E`` for a quaternion, the unit quaternion for a matrix.

    Raises
    ------
    TypeError
        ``x`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``x`` is neither (..., 4) nor (..., 3, 3); the zero quaternion; NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
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
    makes ``|q|`` converge to 1 when ``q`` is integrated from ``qd``. :func:`quat_derivative`
    is the same with the frame named.

    Parameters
    ----------
    a : array_like, shape (..., 4) or (..., 3)
        ``q`` (scalar-first ``[w, x, y, z]``) or ``wA`` (rad/s, A coordinates).
    b : array_like, shape (..., 3) or (..., 4)
        ``wB`` (rad/s, B coordinates) when ``a`` is ``q``; ``q`` when ``a`` is ``wA``. The
        leading dimensions of ``q`` and ``w`` broadcast.

    Returns
    -------
    qd : ndarray, shape (..., 4)
        dq/dt (1/s).

    Raises
    ------
    TypeError
        An argument is not real numbers (None, a string, complex, objects).
    ValueError
        ``a`` of neither length 4 nor 3, ``b`` of the wrong length, leading dimensions that do
        not broadcast, NaN or inf.
    multibody.errors.ResultOverflowError
        The rate overflows for finite input (``|q|`` far from 1, e.g. 1e200); a ``ValueError``.

    Examples
    --------
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
    batch = batch_shape(fn, q=q.shape[:-1], w=w.shape[:-1])
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
    """Quaternion derivative ``qd`` for an angular velocity expressed in frame "A" or "B".

    Pythonic form of spatial_v2 ``rqd``: ``quat_derivative(q, wB) == rqd(q, wB)`` and
    ``quat_derivative(q, wA, frame="A") == rqd(wA, q)``, magnitude stabilisation included.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Scalar-first ``[w, x, y, z]``: the orientation of B relative to A.
    w : array_like, shape (..., 3)
        The angular velocity (rad/s) of B relative to A, in ``frame``'s coordinates; the leading
        dimensions of ``q`` and ``w`` broadcast.
    frame : {"B", "A"}, default "B"
        The coordinates of ``w``.

    Returns
    -------
    qd : ndarray, shape (..., 4)
        dq/dt (1/s).

    Raises
    ------
    TypeError
        ``q`` or ``w`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``q`` not (..., 4), ``w`` not (..., 3), leading dimensions that do not broadcast, NaN or
        inf; ``frame`` not "A" or "B".
    multibody.errors.ResultOverflowError
        The rate overflows for finite input (``|q|`` far from 1, e.g. 1e200); a ``ValueError``.

    Examples
    --------
    >>> quat_derivative([1, 0, 0, 0], [2, 0, 0])
    array([0., 1., 0., 0.])
    >>> quat_derivative([1, 0, 0, 0], [2, 0, 0], frame="A")
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
