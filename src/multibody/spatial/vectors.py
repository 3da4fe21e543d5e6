"""Spatial (6-D) and planar (3-D) vector arithmetic.

spatial_v2 (Featherstone) functions ``crm crf mcI rotx roty rotz xlt plnr plux pluho XtoV Xpt
Vpt Fpt`` with the same conventions and argument forms:

* Spatial vectors are ``[angular; linear]``; planar motion vectors are ``[ω, vx, vy]`` and planar
  force vectors ``[n, fx, fy]``.
* A transform ``X`` maps motion vectors from A to B coordinates; B is rotated/translated
  relative to A. ``plux(E, r) = [[E, 0], [-E·skew(r), E]]`` and
  ``plux(rx(1), [2, 3, 4]) == rotx(1) @ xlt([2, 3, 4])``. Force vectors transform with
  ``X⁻ᵀ``.
* Where spatial_v2 "counts arguments" (``mcI``, ``plnr``, ``plux``) the Python function takes a
  variable number of positional arguments and returns a tuple when there are several outputs;
  where it inspects shapes (``crm``, ``crf``, ``pluho``, ``XtoV``, ``Xpt``, ``Vpt``, ``Fpt``)
  so do these functions.

``rotx roty rotz xlt plux crm crf mcI plnr pluho XtoV`` accept a leading batch dimension and are
vectorised with numpy. ``Xpt Vpt Fpt`` work on one transform/vector and a ``3×n``/``2×n`` array of
points (columns are points, as in spatial_v2); a single point may be given as a 1-D array.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validate import as_real, batch_shape, check_last, check_last2, finite_result, shape_error
from .rotations import _hat, _vee, rx, ry, rz

__all__ = [
    "crm", "crf", "mcI", "rotx", "roty", "rotz", "xlt", "plnr", "plux", "pluho", "XtoV",
    "Xpt", "Vpt", "Fpt",
    "cross_motion", "cross_force", "mci", "rigid_body_inertia", "inertia_parameters",
    "rot_x", "rot_y", "rot_z", "translation", "planar_transform", "plucker",
    "plucker_to_homogeneous", "homogeneous_to_plucker", "x_to_v", "transform_points",
    "point_velocities", "point_forces",
]


# --------------------------------------------------------------------------- cross products
def crm(v: ArrayLike) -> NDArray[np.float64]:
    """Motion cross-product matrix, ``crm(v) @ m == v ×ₘ m`` (spatial_v2 ``crm``; RBDA §2.9).

    Spatial::

        crm(v) = [[ω×, 0], [v_O×, ω×]]

    planar (``[ω, vx, vy]``)::

        crm(v) = [[0, 0, 0], [vy, 0, -ω], [-vx, ω, 0]]

    Parameters
    ----------
    v : array_like, shape (..., 6) or (..., 3)
        A spatial motion vector [ω; v_O] (rad/s; m/s), or a planar one [ω, vx, vy].

    Returns
    -------
    ndarray, shape (..., 6, 6) or (..., 3, 3)
        The matrix of ``v ×ₘ``, acting on motion vectors in the same coordinates.

    Raises
    ------
    TypeError
        ``v`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``v`` whose last dimension is not 6 or 3, NaN or inf.

    Examples
    --------
    >>> crm([0, 0, 1, 0, 0, 0]) @ np.array([0, 0, 0, 1, 0, 0])   # ω=ẑ turns x̂ into ŷ
    array([0., 0., 0., 0., 1., 0.])
    """
    a = as_real(v, "crm", "v")
    return _crm(a, "crm")


def _crm(a: np.ndarray, fn: str) -> np.ndarray:
    if a.ndim == 1 and a.shape[0] == 6:  # fast path for the common single-vector call
        wx, wy, wz, vx, vy, vz = a.tolist()
        return np.array([[0.0, -wz, wy, 0.0, 0.0, 0.0],
                         [wz, 0.0, -wx, 0.0, 0.0, 0.0],
                         [-wy, wx, 0.0, 0.0, 0.0, 0.0],
                         [0.0, -vz, vy, 0.0, -wz, wy],
                         [vz, 0.0, -vx, wz, 0.0, -wx],
                         [-vy, vx, 0.0, -wy, wx, 0.0]])
    if a.ndim >= 1 and a.shape[-1] == 6:
        X = np.zeros(a.shape[:-1] + (6, 6))
        W = _hat(a[..., :3])
        X[..., :3, :3] = W
        X[..., 3:, 3:] = W
        X[..., 3:, :3] = _hat(a[..., 3:])
        return X
    if a.ndim >= 1 and a.shape[-1] == 3:
        X = np.zeros(a.shape[:-1] + (3, 3))
        w, vx, vy = a[..., 0], a[..., 1], a[..., 2]
        X[..., 1, 0] = vy
        X[..., 1, 2] = -w
        X[..., 2, 0] = -vx
        X[..., 2, 1] = w
        return X
    raise shape_error(fn, "v", "have length 6 (spatial) or 3 (planar)", a)


def crf(v: ArrayLike) -> NDArray[np.float64]:
    """Force cross-product matrix, ``crf(v) @ f == v ×_f f`` = ``-crm(v)ᵀ @ f`` (spatial_v2 ``crf``;
    RBDA §2.9).

    Parameters
    ----------
    v : array_like, shape (..., 6) or (..., 3)
        A spatial motion vector [ω; v_O], or a planar one [ω, vx, vy].

    Returns
    -------
    ndarray, shape (..., 6, 6) or (..., 3, 3)
        The matrix of ``v ×_f``, acting on force vectors [n; f] in the same coordinates.

    Raises
    ------
    TypeError
        ``v`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``v`` whose last dimension is not 6 or 3, NaN or inf.

    Examples
    --------
    >>> np.allclose(crf([1, 2, 3, 4, 5, 6]), -crm([1, 2, 3, 4, 5, 6]).T)
    True
    >>> v, m = np.array([1., 2, 3, 4, 5, 6]), np.array([.5, 0, 1, 2, 0, 1])
    >>> f = np.array([1., 0, 2, 0, 3, 1])
    >>> bool(np.isclose(m @ (crf(v) @ f), -(crm(v) @ m) @ f))    # the power of v ×_f f
    True
    """
    a = as_real(v, "crf", "v")
    return -np.swapaxes(_crm(a, "crf"), -1, -2)


cross_motion = crm
cross_force = crf


# --------------------------------------------------------------------------- rigid-body inertia
@finite_result
def rigid_body_inertia(m, c, I) -> np.ndarray:
    """Rigid-body spatial or planar inertia from mass, centre of mass and inertia at the CoM.

    The compose half of spatial_v2 ``mcI`` (RBDA §2.13). Spatial: ``[[I + m·C·Cᵀ, m·C],
    [m·Cᵀ, m·1]]`` with ``C = skew(c)``. Planar: ``[[I + m·|c|², -m·cy, m·cx], [-m·cy, m, 0],
    [m·cx, 0, m]]``. The leading dimensions of ``m``, ``c`` and ``I`` broadcast.

    Parameters
    ----------
    m : array_like, shape (...)
        The mass (kg).
    c : array_like, shape (..., 3) or (..., 2)
        The centre of mass (m) in the body's coordinates; its length chooses spatial or planar.
    I : array_like, shape (..., 3, 3) or (...)
        The rotational inertia (kg·m²) about the centre of mass, in the body's axes: a 3×3 matrix
        (spatial) or a scalar (planar).

    Returns
    -------
    rbi : ndarray, shape (..., 6, 6) or (..., 3, 3)
        The inertia at the body frame's origin, acting on [angular; linear] motion vectors.

    Raises
    ------
    TypeError
        An argument is not real numbers (None, a string, complex, objects).
    ValueError
        ``c`` of length other than 3 or 2, a spatial ``I`` that is not (..., 3, 3), leading
        dimensions that do not broadcast, NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> rigid_body_inertia(2.0, [0, 0, 0], np.eye(3))[3:, 3:]
    array([[2., 0., 0.],
           [0., 2., 0.],
           [0., 0., 2.]])
    >>> rigid_body_inertia(2.0, [0.5, 0.0], 0.1) + 0.0          # planar (+ 0.0: no -0.)
    array([[0.6, 0. , 1. ],
           [0. , 2. , 0. ],
           [1. , 0. , 2. ]])
    """
    return _mcI_to_rbi(m, c, I, "rigid_body_inertia")


def _mcI_to_rbi(m, c, I, fn: str) -> np.ndarray:
    m = as_real(m, fn, "m")
    c = as_real(c, fn, "c")
    I = as_real(I, fn, "I")
    if c.ndim >= 1 and c.shape[-1] == 3:
        check_last2(I, 3, 3, fn, "I (spatial, c has length 3)")
        batch = batch_shape(fn, m=m.shape, c=c.shape[:-1], I=I.shape[:-2])
        mm = np.broadcast_to(m, batch)[..., None, None]
        C = _hat(np.broadcast_to(c, batch + (3,)))
        Ct = np.swapaxes(C, -1, -2)
        rbi = np.empty(batch + (6, 6))
        rbi[..., :3, :3] = I + mm * (C @ Ct)
        rbi[..., :3, 3:] = mm * C
        rbi[..., 3:, :3] = mm * Ct
        rbi[..., 3:, 3:] = mm * np.eye(3)
        return rbi
    if c.ndim >= 1 and c.shape[-1] == 2:
        batch = batch_shape(fn, m=m.shape, c=c.shape[:-1], I=I.shape)
        mm = np.broadcast_to(m, batch)
        cc = np.broadcast_to(c, batch + (2,))
        cx, cy = cc[..., 0], cc[..., 1]
        rbi = np.zeros(batch + (3, 3))
        rbi[..., 0, 0] = I + mm * (cx * cx + cy * cy)
        rbi[..., 0, 1] = rbi[..., 1, 0] = -mm * cy
        rbi[..., 0, 2] = rbi[..., 2, 0] = mm * cx
        rbi[..., 1, 1] = mm
        rbi[..., 2, 2] = mm
        return rbi
    raise shape_error(fn, "c", "have length 3 (spatial) or 2 (planar)", c)


@finite_result
def inertia_parameters(rbi):
    """Mass, centre of mass and rotational inertia about the CoM of a rigid-body inertia.

    The decompose half of spatial_v2 ``mcI``; inverse of :func:`rigid_body_inertia`.

    Parameters
    ----------
    rbi : array_like, shape (..., 6, 6) or (..., 3, 3)
        A spatial or planar rigid-body inertia with nonzero mass.

    Returns
    -------
    m : float or ndarray, shape (...)
        The mass (kg).
    c : ndarray, shape (..., 3) or (..., 2)
        The centre of mass (m).
    I : ndarray, shape (..., 3, 3), or float / ndarray (...) for planar
        The rotational inertia about the centre of mass (kg·m²).

    Raises
    ------
    TypeError
        ``rbi`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``rbi`` neither 6×6 nor 3×3, zero mass, NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308, a mass near 0); a
        ``ValueError``.

    Examples
    --------
    >>> m, c, I = inertia_parameters(rigid_body_inertia(2.0, [0.5, -1.0], 0.3))
    >>> m, c, round(I, 12)
    (2.0, array([ 0.5, -1. ]), 0.3)
    """
    return _rbi_to_mcI(rbi, "inertia_parameters")


def _rbi_to_mcI(rbi, fn: str):
    R = as_real(rbi, fn, "rbi")
    if R.ndim >= 2 and R.shape[-2:] == (6, 6):
        m = R[..., 5, 5]
        if np.any(m == 0):
            raise ValueError(f"{fn}: rbi has zero mass; m, c and I are defined only for m != 0")
        mC = R[..., :3, 3:]
        c = _vee(mC) / m[..., None]
        I = R[..., :3, :3] - mC @ np.swapaxes(mC, -1, -2) / m[..., None, None]
        return m.copy() if m.ndim else float(m), c, I
    if R.ndim >= 2 and R.shape[-2:] == (3, 3):
        m = R[..., 2, 2]
        if np.any(m == 0):
            raise ValueError(f"{fn}: rbi has zero mass; m, c and I are defined only for m != 0")
        c = np.stack([R[..., 2, 0], -R[..., 1, 0]], axis=-1) / m[..., None]
        I = R[..., 0, 0] - m * np.sum(c * c, axis=-1)
        if m.ndim == 0:
            return float(m), c, float(I)
        return m.copy(), c, I
    raise shape_error(fn, "rbi", "be a 6×6 (spatial) or 3×3 (planar) inertia", R)


@finite_result
def mcI(*args):
    """spatial_v2 ``mcI``: compose or decompose a rigid-body inertia (also ``mci``).

    ``mcI(m, c, I)`` returns ``rbi`` (:func:`rigid_body_inertia`: spatial 6×6 if ``len(c) == 3``,
    planar 3×3 if ``len(c) == 2`` with scalar ``I``); ``mcI(rbi)`` returns the tuple
    ``(m, c, I)`` (:func:`inertia_parameters`).

    Parameters
    ----------
    *args : array_like
        ``m, c, I``: mass (kg), centre of mass (m) (..., 3) or (..., 2), rotational inertia about
        the CoM (kg·m²) (..., 3, 3) or scalar; or ``rbi`` (..., 6, 6) or (..., 3, 3).

    Returns
    -------
    rbi : ndarray, shape (..., 6, 6) or (..., 3, 3)
        From ``m, c, I``.
    m, c, I : tuple
        From ``rbi``.

    Raises
    ------
    TypeError
        Not one or three arguments; an argument that is not real numbers.
    ValueError
        A wrong shape, zero mass (decomposing), NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308, a mass near 0); a
        ``ValueError``.

    Examples
    --------
    >>> rbi = mcI(1.5, [0.1, 0.2, 0.3], np.diag([1.0, 2.0, 3.0]))
    >>> m, c, I = mcI(rbi)
    >>> m, c.round(12), np.diag(I).round(12)
    (1.5, array([0.1, 0.2, 0.3]), array([1., 2., 3.]))
    """
    if len(args) == 1:
        return _rbi_to_mcI(args[0], "mcI")
    if len(args) == 3:
        return _mcI_to_rbi(*args, "mcI")
    raise TypeError(f"mcI: expected 1 argument (rbi) or 3 arguments (m, c, I), got {len(args)}")


mci = mcI


# --------------------------------------------------------------------------- elementary transforms
def _spatial_rotation(E: np.ndarray) -> np.ndarray:
    X = np.zeros(E.shape[:-2] + (6, 6))
    X[..., :3, :3] = E
    X[..., 3:, 3:] = E
    return X


def rotx(theta: ArrayLike) -> NDArray[np.float64]:
    """6×6 spatial coordinate transform for a rotation θ about x (spatial_v2 ``rotx``; RBDA
    §2.8): ``rotx(θ) = diag(rx(θ), rx(θ))``.

    Parameters
    ----------
    theta : array_like, shape (...)
        The angle (rad) by which B is rotated relative to A about their common x axis.

    Returns
    -------
    X : ndarray, shape (..., 6, 6)
        The A → B transform of motion vectors (forces: ``X⁻ᵀ``).

    Raises
    ------
    TypeError
        ``theta`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``theta`` contains NaN or inf.

    Examples
    --------
    >>> np.allclose(rotx(0.3)[3:, 3:], rx(0.3)), np.allclose(rotx(0.3)[:3, 3:], 0)
    (True, True)
    >>> rotx([0.1, 0.2]).shape                                  # one transform per angle
    (2, 6, 6)
    """
    return _spatial_rotation(rx(theta))


def roty(theta: ArrayLike) -> NDArray[np.float64]:
    """6×6 spatial coordinate transform for a rotation θ about y (spatial_v2 ``roty``; RBDA
    §2.8): ``roty(θ) = diag(ry(θ), ry(θ))``.

    Parameters
    ----------
    theta : array_like, shape (...)
        The angle (rad) by which B is rotated relative to A about their common y axis.

    Returns
    -------
    X : ndarray, shape (..., 6, 6)
        The A → B transform of motion vectors (forces: ``X⁻ᵀ``).

    Raises
    ------
    TypeError
        ``theta`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``theta`` contains NaN or inf.

    Examples
    --------
    >>> np.allclose(roty(0.3)[3:, 3:], ry(0.3)), np.allclose(roty(0.3)[:3, 3:], 0)
    (True, True)
    >>> roty([0.1, 0.2]).shape                                  # one transform per angle
    (2, 6, 6)
    """
    return _spatial_rotation(ry(theta))


def rotz(theta: ArrayLike) -> NDArray[np.float64]:
    """6×6 spatial coordinate transform for a rotation θ about z (spatial_v2 ``rotz``; RBDA
    §2.8): ``rotz(θ) = diag(rz(θ), rz(θ))``.

    Parameters
    ----------
    theta : array_like, shape (...)
        The angle (rad) by which B is rotated relative to A about their common z axis.

    Returns
    -------
    X : ndarray, shape (..., 6, 6)
        The A → B transform of motion vectors (forces: ``X⁻ᵀ``).

    Raises
    ------
    TypeError
        ``theta`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``theta`` contains NaN or inf.

    Examples
    --------
    >>> np.allclose(rotz(0.3)[3:, 3:], rz(0.3)), np.allclose(rotz(0.3)[:3, 3:], 0)
    (True, True)
    >>> rotz([0.1, 0.2]).shape                                  # one transform per angle
    (2, 6, 6)
    """
    return _spatial_rotation(rz(theta))


def xlt(r: ArrayLike) -> NDArray[np.float64]:
    """6×6 spatial coordinate transform for a translation (spatial_v2 ``xlt``; RBDA §2.8):
    ``xlt(r) = [[1, 0], [-skew(r), 1]]``.

    Parameters
    ----------
    r : array_like, shape (..., 3)
        The origin of B in A coordinates (m); B's axes are parallel to A's.

    Returns
    -------
    X : ndarray, shape (..., 6, 6)
        The A → B transform of motion vectors (forces: ``X⁻ᵀ``).

    Raises
    ------
    TypeError
        ``r`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``r`` whose last dimension is not 3, NaN or inf.

    Examples
    --------
    >>> xlt([1, 0, 0]) @ np.array([0, 0, 1, 0, 0, 0])   # spin about A's z axis moves B's origin along +y
    array([0., 0., 1., 0., 1., 0.])
    """
    a = as_real(r, "xlt", "r")
    check_last(a, 3, "xlt", "r")
    X = np.zeros(a.shape[:-1] + (6, 6))
    X[..., :3, :3] = np.eye(3)
    X[..., 3:, 3:] = np.eye(3)
    X[..., 3:, :3] = -_hat(a)
    return X


rot_x = rotx
rot_y = roty
rot_z = rotz
translation = xlt


# --------------------------------------------------------------------------- planar
@finite_result
def plnr(*args):
    """spatial_v2 ``plnr``: compose or decompose a planar coordinate transform (also
    ``planar_transform``).

    ``plnr(theta, r)`` returns the 3×3 transform from A to B coordinates, where B's origin is
    at ``r`` (A coordinates) and B is rotated by ``theta`` (counter-clockwise)::

        X = [[1, 0, 0], [s·rx − c·ry, c, s], [c·rx + s·ry, −s, c]]

    ``plnr(X)`` returns the tuple ``(theta, r)``.

    Parameters
    ----------
    *args : array_like
        ``theta, r``: the angle (rad) (...) and B's origin (m) (..., 2), whose leading dimensions
        broadcast; or ``X`` (..., 3, 3).

    Returns
    -------
    X : ndarray, shape (..., 3, 3)
        From ``theta, r``: the A → B transform of planar motion vectors ``[ω, vx, vy]``.
    theta, r : tuple
        From ``X``: theta (float or (...), in [−π, π]) and r (..., 2).

    Raises
    ------
    TypeError
        Not one or two arguments; an argument that is not real numbers.
    ValueError
        ``r`` not (..., 2), ``X`` not (..., 3, 3), leading dimensions that do not broadcast, NaN
        or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> theta, r = plnr(plnr(0.5, [1.0, 2.0]))
    >>> round(float(theta), 12), r.round(12)
    (0.5, array([1., 2.]))
    """
    if len(args) == 2:
        th = as_real(args[0], "plnr", "theta")
        r = as_real(args[1], "plnr", "r")
        check_last(r, 2, "plnr", "r")
        batch = batch_shape("plnr", theta=th.shape, r=r.shape[:-1])
        c = np.broadcast_to(np.cos(th), batch)
        s = np.broadcast_to(np.sin(th), batch)
        x, y = r[..., 0], r[..., 1]
        X = np.zeros(batch + (3, 3))
        X[..., 0, 0] = 1.0
        X[..., 1, 0] = s * x - c * y
        X[..., 1, 1] = c
        X[..., 1, 2] = s
        X[..., 2, 0] = c * x + s * y
        X[..., 2, 1] = -s
        X[..., 2, 2] = c
        return X
    if len(args) == 1:
        X = as_real(args[0], "plnr", "X")
        check_last2(X, 3, 3, "plnr", "X")
        c, s = X[..., 1, 1], X[..., 1, 2]
        theta = np.arctan2(s, c)
        r = np.stack([s * X[..., 1, 0] + c * X[..., 2, 0], s * X[..., 2, 0] - c * X[..., 1, 0]],
                     axis=-1)
        return (float(theta) if theta.ndim == 0 else theta), r
    raise TypeError(f"plnr: expected 1 argument (X) or 2 arguments (theta, r), got {len(args)}")


planar_transform = plnr


# --------------------------------------------------------------------------- Plücker transforms
@finite_result
def plux(*args):
    """Compose or decompose a Plücker coordinate transform (spatial_v2 ``plux``; RBDA §2.8):
    ``X = [[E, 0], [-E·skew(r), E]]`` = ``rotation(E) @ xlt(r)``.

    Parameters
    ----------
    *args : array_like
        ``E, r``: the 3×3 A → B coordinate rotation (..., 3, 3) and the origin of B in A
        coordinates (..., 3) (m), to compose; or ``X`` (..., 6, 6), to decompose.

    Returns
    -------
    X : ndarray, shape (..., 6, 6)
        From ``E, r``: the A → B transform of motion vectors (forces: ``X⁻ᵀ``).
    E, r : tuple of ndarray, shapes (..., 3, 3) and (..., 3)
        From ``X``.

    Raises
    ------
    TypeError
        Not one or two arguments; an argument that is not real numbers.
    ValueError
        A wrong shape, leading dimensions of ``E`` and ``r`` that do not broadcast, NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> np.allclose(plux(rx(1), [2, 3, 4]), rotx(1) @ xlt([2, 3, 4]))
    True
    >>> E, r = plux(plux(rx(1), [2, 3, 4]))                    # and back
    >>> np.allclose(E, rx(1)), np.allclose(r, [2, 3, 4])
    (True, True)
    """
    if len(args) == 2:
        E = as_real(args[0], "plux", "E")
        r = as_real(args[1], "plux", "r")
        check_last2(E, 3, 3, "plux", "E")
        check_last(r, 3, "plux", "r")
        batch = batch_shape("plux", E=E.shape[:-2], r=r.shape[:-1])
        X = np.zeros(batch + (6, 6))
        X[..., :3, :3] = E
        X[..., 3:, 3:] = E
        X[..., 3:, :3] = -(E @ _hat(r))
        return X
    if len(args) == 1:
        X = as_real(args[0], "plux", "X")
        check_last2(X, 6, 6, "plux", "X")
        E = X[..., :3, :3].copy()
        r = -_vee(np.swapaxes(E, -1, -2) @ X[..., 3:, :3])
        return E, r
    raise TypeError(f"plux: expected 1 argument (X) or 2 arguments (E, r), got {len(args)}")


plucker = plux


@finite_result
def plucker_to_homogeneous(X) -> np.ndarray:
    """4×4 homogeneous transform of a Plücker coordinate transform (the 6×6 half of spatial_v2
    ``pluho``).

    ``T = [[E, -E·r], [0, 1]]``: ``T @ [p; 1]`` gives the B coordinates of a point with A
    coordinates ``p``.

    Parameters
    ----------
    X : array_like, shape (..., 6, 6)
        A → B Plücker transform ``[[E, 0], [-E·skew(r), E]]``.

    Returns
    -------
    T : ndarray, shape (..., 4, 4)
        The same A → B transform acting on homogeneous points (translation in m).

    Raises
    ------
    TypeError
        ``X`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``X`` not (..., 6, 6), NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> plucker_to_homogeneous(xlt([1, 2, 3]))[:3, 3]
    array([-1., -2., -3.])
    """
    a = as_real(X, "plucker_to_homogeneous", "X")
    check_last2(a, 6, 6, "plucker_to_homogeneous", "X")
    return _plux_to_ho(a)


def _plux_to_ho(X: np.ndarray) -> np.ndarray:
    E = X[..., :3, :3]
    mErx = X[..., 3:, :3]  # -E·skew(r) = skew(-E r)·E
    T = np.zeros(X.shape[:-2] + (4, 4))
    T[..., :3, :3] = E
    T[..., :3, 3] = _vee(mErx @ np.swapaxes(E, -1, -2))
    T[..., 3, 3] = 1.0
    return T


@finite_result
def homogeneous_to_plucker(T) -> np.ndarray:
    """Plücker transform of a 4×4 homogeneous coordinate transform (the 4×4 half of spatial_v2
    ``pluho``; inverse of :func:`plucker_to_homogeneous`).

    Parameters
    ----------
    T : array_like, shape (..., 4, 4)
        A → B homogeneous transform ``[[E, -E·r], [0, 1]]`` (translation in m); its last row is
        not read.

    Returns
    -------
    X : ndarray, shape (..., 6, 6)
        The A → B Plücker transform of motion vectors.

    Raises
    ------
    TypeError
        ``T`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``T`` not (..., 4, 4), NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> T = np.eye(4); T[:3, 3] = [-1, -2, -3]
    >>> np.allclose(homogeneous_to_plucker(T), xlt([1, 2, 3]))
    True
    """
    a = as_real(T, "homogeneous_to_plucker", "T")
    check_last2(a, 4, 4, "homogeneous_to_plucker", "T")
    return _ho_to_plux(a)


def _ho_to_plux(T: np.ndarray) -> np.ndarray:
    E = T[..., :3, :3]
    X = np.zeros(T.shape[:-2] + (6, 6))
    X[..., :3, :3] = E
    X[..., 3:, 3:] = E
    X[..., 3:, :3] = _hat(T[..., :3, 3]) @ E
    return X


@finite_result
def pluho(X) -> np.ndarray:
    """spatial_v2 ``pluho``: Plücker (6×6) ↔ homogeneous (4×4) coordinate transform.

    The shape of the argument decides the direction (:func:`plucker_to_homogeneous`,
    :func:`homogeneous_to_plucker`); both express the transform from A to B coordinates
    (``T = [[E, -E·r], [0, 1]]``).

    Parameters
    ----------
    X : array_like, shape (..., 6, 6) or (..., 4, 4)
        A Plücker or a homogeneous A → B transform.

    Returns
    -------
    ndarray, shape (..., 4, 4) or (..., 6, 6)
        The other form of the same transform.

    Raises
    ------
    TypeError
        ``X`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``X`` neither (..., 6, 6) nor (..., 4, 4), NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> X = plux(rz(0.3), [1, 2, 3])
    >>> np.allclose(pluho(pluho(X)), X)
    True
    """
    a = as_real(X, "pluho", "X")
    if a.ndim >= 2 and a.shape[-2:] == (6, 6):
        return _plux_to_ho(a)
    if a.ndim >= 2 and a.shape[-2:] == (4, 4):
        return _ho_to_plux(a)
    raise shape_error("pluho", "X", "be a 6×6 Plücker or 4×4 homogeneous transform", a)


# --------------------------------------------------------------------------- XtoV
@finite_result
def XtoV(X) -> np.ndarray:
    """spatial_v2 ``XtoV``: displacement vector of a coordinate transform (also ``x_to_v``).

    Returns the motion vector ``v`` that approximates the velocity carrying frame A onto B in
    one time unit (exact as the rotation angle → 0) and is an invariant of ``X``:
    ``X @ v == v``. Spatial: ``v = ½·[X₂₃−X₃₂, X₃₁−X₁₃, X₁₂−X₂₁, X₅₃−X₆₂, X₆₁−X₄₃, X₄₂−X₅₁]``
    (1-based).

    Parameters
    ----------
    X : array_like, shape (..., 6, 6) or (..., 3, 3)
        A spatial or planar A → B coordinate transform.

    Returns
    -------
    v : ndarray, shape (..., 6) or (..., 3)
        ``[angular (rad); linear (m)]`` (spatial) or ``[ω, x, y]`` (planar), in A (= B) coordinates.

    Raises
    ------
    TypeError
        ``X`` is not real numbers (None, a string, complex, objects).
    ValueError
        ``X`` neither (..., 6, 6) nor (..., 3, 3), NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> XtoV(xlt([0.1, 0.2, 0.3]))
    array([0. , 0. , 0. , 0.1, 0.2, 0.3])
    """
    a = as_real(X, "XtoV", "X")
    if a.ndim >= 2 and a.shape[-2:] == (6, 6):
        return 0.5 * np.stack(
            [
                a[..., 1, 2] - a[..., 2, 1],
                a[..., 2, 0] - a[..., 0, 2],
                a[..., 0, 1] - a[..., 1, 0],
                a[..., 4, 2] - a[..., 5, 1],
                a[..., 5, 0] - a[..., 3, 2],
                a[..., 3, 1] - a[..., 4, 0],
            ],
            axis=-1,
        )
    if a.ndim >= 2 and a.shape[-2:] == (3, 3):
        # Invariant of X = [[1,0,0],[a,c,s],[b,-s,c]] with ω = s: solve (X - 1) v = 0.
        c, s = a[..., 1, 1], a[..., 1, 2]
        xa, xb = a[..., 1, 0], a[..., 2, 0]
        return np.stack(
            [0.5 * (a[..., 1, 2] - a[..., 2, 1]), 0.5 * ((1 + c) * xb + s * xa),
             0.5 * (s * xb - (1 + c) * xa)],
            axis=-1,
        )
    raise shape_error("XtoV", "X", "be a 6×6 (spatial) or 3×3 (planar) transform", a)


x_to_v = XtoV


# --------------------------------------------------------------------------- points
def _points(p, dim: int, fn: str, name: str = "p"):
    a = as_real(p, fn, name)
    if a.ndim == 1 and a.shape[0] == dim:
        return a[:, None], True
    if a.ndim == 2 and a.shape[0] == dim:
        return a, False
    raise shape_error(fn, name, f"be a {dim}×n array of points (or a single {dim}-vector)", a)


@finite_result
def Xpt(X, p) -> np.ndarray:
    """spatial_v2 ``Xpt``: apply a coordinate transform to points (also ``transform_points``).

    Returns the B coordinates ``E·(p − r)`` of each point given in A coordinates.

    Parameters
    ----------
    X : array_like, shape (6, 6) or (3, 3)
        One A → B Plücker (spatial) or planar transform.
    p : array_like, shape (3, n) or (2, n)
        Points (m) in A coordinates, one per column (3-D with a 6×6 ``X``, 2-D with a 3×3); a
        single point may be 1-D.

    Returns
    -------
    ndarray, same shape as ``p``
        The points in B coordinates (m).

    Raises
    ------
    TypeError
        An argument is not real numbers (None, a string, complex, objects).
    ValueError
        ``X`` neither 6×6 nor 3×3 (no batch), ``p`` not 3×n / 2×n to match, NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> Xpt(xlt([1, 0, 0]), [1, 2, 3])
    array([0., 2., 3.])
    """
    Xa = as_real(X, "Xpt", "X")
    if Xa.shape == (6, 6):
        E = Xa[:3, :3]
        r = -_vee(E.T @ Xa[3:, :3])
        P, single = _points(p, 3, "Xpt")
    elif Xa.shape == (3, 3):
        E = Xa[1:, 1:]
        r = np.array([Xa[1, 2] * Xa[1, 0] + Xa[2, 2] * Xa[2, 0],
                      Xa[1, 2] * Xa[2, 0] - Xa[2, 2] * Xa[1, 0]])
        P, single = _points(p, 2, "Xpt")
    else:
        raise shape_error("Xpt", "X", "be a 6×6 (spatial) or 3×3 (planar) transform", Xa)
    xp = E @ (P - r[:, None])
    return xp[:, 0] if single else xp


@finite_result
def Vpt(v, p) -> np.ndarray:
    """spatial_v2 ``Vpt``: linear velocities of points of a moving body (also ``point_velocities``).

    Returns ``v_O + ω × p`` for each point ``p`` (planar: ``[vx − ω·py, vy + ω·px]``).

    Parameters
    ----------
    v : array_like, shape (6,) or (6, n); (3,) or (3, n) planar
        The body's spatial velocity ``[ω (rad/s); v_O (m/s)]`` (or planar ``[ω, vx, vy]``),
        one for all points or one per point (column i for point i).
    p : array_like, shape (3, n) or (2, n)
        The points (m), in the same coordinates as ``v``; a single point may be 1-D.

    Returns
    -------
    ndarray, shape of ``p`` (3, n) / (2, n)
        Each point's linear velocity (m/s), in the same coordinates.

    Raises
    ------
    TypeError
        An argument is not real numbers (None, a string, complex, objects).
    ValueError
        ``v`` not 6 / 3 rows, ``p`` rows not matching, column counts that differ, NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> Vpt([0, 0, 1, 0, 0, 0], [1, 0, 0])
    array([0., 1., 0.])
    """
    va = as_real(v, "Vpt", "v")
    if va.ndim not in (1, 2) or va.shape[0] not in (6, 3):
        raise shape_error("Vpt", "v", "be a 6-vector or 6×n array (spatial) or a 3-vector or "
                          "3×n array (planar)", va)
    V = va[:, None] if va.ndim == 1 else va
    P, single = _points(p, 3 if V.shape[0] == 6 else 2, "Vpt")
    if va.ndim == 2 and V.shape[1] != P.shape[1]:
        raise ValueError(f"Vpt: v has {V.shape[1]} columns but p has {P.shape[1]} points")
    if V.shape[0] == 6:
        w, vo = V[:3], V[3:]
        vp = vo + np.cross(w, P, axis=0)
    else:
        w = V[0]
        vp = V[1:] + np.stack([-w * P[1], w * P[0]])
    return vp[:, 0] if (single and va.ndim == 1) else vp


@finite_result
def Fpt(fp, p) -> np.ndarray:
    """spatial_v2 ``Fpt``: spatial forces of linear forces acting at points (also ``point_forces``).

    3-D: ``[p × f; f]``; planar: ``[px·fy − py·fx, fx, fy]``. The resultant of the whole system is
    ``Fpt(fp, p).sum(1)``.

    Parameters
    ----------
    fp : array_like, shape (3, n) or (2, n)
        Linear forces (N), one per column; a single force may be 1-D.
    p : array_like, same shape as ``fp``
        Their points of application (m), in the same coordinates.

    Returns
    -------
    ndarray, shape (6, n) or (3, n); (6,) / (3,) for a single 1-D force
        The spatial forces ``[moment about the origin (N·m); force (N)]``.

    Raises
    ------
    TypeError
        An argument is not real numbers (None, a string, complex, objects).
    ValueError
        ``fp`` not 3 / 2 rows, ``p`` rows not matching, counts that differ, NaN or inf.
    multibody.errors.ResultOverflowError
        Finite input whose result is beyond the double range (entries near 1e308); a ``ValueError``.

    Examples
    --------
    >>> Fpt([0, 1, 0], [1, 0, 0])
    array([0., 0., 1., 0., 1., 0.])
    """
    F = as_real(fp, "Fpt", "fp")
    if F.ndim not in (1, 2) or F.shape[0] not in (3, 2):
        raise shape_error("Fpt", "fp", "be a 3×n (3-D) or 2×n (planar) array of forces", F)
    dim = F.shape[0]
    Fm = F[:, None] if F.ndim == 1 else F
    P, single = _points(p, dim, "Fpt")
    if Fm.shape[1] != P.shape[1]:
        raise ValueError(f"Fpt: fp has {Fm.shape[1]} forces but p has {P.shape[1]} points")
    if dim == 3:
        f = np.concatenate([np.cross(P, Fm, axis=0), Fm])
    else:
        f = np.concatenate([(P[0] * Fm[1] - P[1] * Fm[0])[None], Fm])
    return f[:, 0] if (F.ndim == 1 and single) else f


transform_points = Xpt
point_velocities = Vpt
point_forces = Fpt
