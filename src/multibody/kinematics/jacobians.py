"""Jacobians of bodies, points and the centre of mass, and their bias terms J̇·q̇."""
from __future__ import annotations

import numpy as np

from .. import _boundary as B
from .. import _checks
from ..core import _core
from .forward import _point, _required, body_states
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model

FRAMES = ("world_aligned", "local", "world")


def body_jacobian(model: Model, q: ArrayLike, body: str | int, point: ArrayLike = (0.0, 0.0, 0.0),
                  frame: str = "world_aligned") -> NDArray[np.float64]:
    """Jacobian mapping q̇ to [ω; v_P] of ``body`` at ``point`` (body coordinates).

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    body : str or int
        The body's name (a URDF link, an MJCF body) or its index (−1 is the fixed base).
    point : array_like, shape (3,), optional
        The point in body coordinates, m (default the body's origin).
    frame : {'world_aligned', 'local', 'world'}, optional
        Coordinates of the result: ``'world_aligned'`` (world axes at the point, Pinocchio's
        LOCAL_WORLD_ALIGNED), ``'local'`` (body axes, LOCAL) or ``'world'`` (a spatial vector with its linear
        part at the world origin, WORLD).

    Returns
    -------
    ndarray, shape (..., 6, nv)
        Rows 0–2 the angular velocity, rows 3–5 the point's linear velocity, per unit q̇.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        An unknown body (the message lists the bodies), the fixed base, an unknown ``frame``, a wrong shape,
        NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> J = mb.body_jacobian(mb.models.planar(2), [0.0, 0.0], "link2", point=[1, 0, 0])
    >>> J[3:5].round(6).tolist()   # tip velocity in the plane
    [[0.0, 0.0], [2.0, 1.0]]
    """
    _checks.model(model)
    _checks.one_of("frame", frame, FRAMES)
    i = model.body_index(body)
    if i < 0:
        raise ValueError("body: the fixed base has no Jacobian")
    r = _point("point", point)
    c, code = model._c, FRAMES.index(frame)
    J = _core.jacobian(c, q, i, r, code)
    if J is not None:
        return J
    args, batch = B.states(model, q=q)
    return _core.jacobian(c, args["q"], i, r, code).reshape(batch + (6, model.nv))


def point_jacobian(model: Model, q: ArrayLike, body: str | int, point: ArrayLike = (0.0, 0.0, 0.0),
                   frame: str = "world_aligned") -> NDArray[np.float64]:
    """Translational Jacobian of a point fixed in ``body`` (proNEu's I_J_P).

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    body : str or int
        The body's name (a URDF link, an MJCF body) or its index (−1 is the fixed base).
    point : array_like, shape (3,), optional
        The point in body coordinates, m (default the body's origin).
    frame : {'world_aligned', 'local'}, optional
        Coordinates of the result: ``'world_aligned'`` (world axes at the point, Pinocchio's
        LOCAL_WORLD_ALIGNED), ``'local'`` (body axes, LOCAL).

    Returns
    -------
    ndarray, shape (..., 3, nv)
        The point's linear velocity per unit q̇.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        An unknown body (the message lists the bodies), ``frame='world'``, a wrong shape, NaN or inf in the
        arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> mb.point_jacobian(mb.models.planar(2), [0.0, 0.0], "link2", [1, 0, 0])[:2].tolist()
    [[0.0, 0.0], [2.0, 1.0]]
    """
    _checks.model(model)
    if frame == "world":
        raise ValueError("frame: a point Jacobian is 'world_aligned' or 'local'")
    return body_jacobian(model, q, body, point, frame)[..., 3:, :]


def rotation_jacobian(model: Model, q: ArrayLike, body: str | int, frame: str = "world_aligned"
                     ) -> NDArray[np.float64]:
    """Rotational Jacobian of ``body`` (proNEu's I_J_R).

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    body : str or int
        The body's name (a URDF link, an MJCF body) or its index (−1 is the fixed base).
    frame : {'world_aligned', 'local', 'world'}, optional
        Coordinates of the result: ``'world_aligned'`` (world axes at the point, Pinocchio's
        LOCAL_WORLD_ALIGNED), ``'local'`` (body axes, LOCAL) or ``'world'`` (a spatial vector with its linear
        part at the world origin, WORLD).

    Returns
    -------
    ndarray, shape (..., 3, nv)
        The body's angular velocity per unit q̇.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        An unknown body (the message lists the bodies), an unknown ``frame``, a wrong shape, NaN or inf in the
        arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> mb.rotation_jacobian(mb.models.planar(2), [0.0, 0.0], "link2")[2].tolist()
    [1.0, 1.0]
    """
    _checks.model(model)
    return body_jacobian(model, q, body, (0.0, 0.0, 0.0), frame)[..., :3, :]


def jdot_qd(model: Model, q: ArrayLike, qd: ArrayLike, body: str | int, point: ArrayLike = (0.0, 0.0, 0.0),
            frame: str = "world_aligned") -> NDArray[np.float64]:
    """Bias J̇·q̇ = [α; a_P] of ``body`` at ``point`` for q̈ = 0 (classical acceleration).

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    qd : array_like, shape (nv,) or (..., nv)
        Joint velocities.
    body : str or int
        The body's name (a URDF link, an MJCF body) or its index (−1 is the fixed base).
    point : array_like, shape (3,), optional
        The point in body coordinates, m (default the body's origin).
    frame : {'world_aligned', 'local'}, optional
        Coordinates of the result: ``'world_aligned'`` (world axes at the point, Pinocchio's
        LOCAL_WORLD_ALIGNED), ``'local'`` (body axes, LOCAL).

    Returns
    -------
    ndarray, shape (..., 6)
        Angular then linear acceleration of the point at q̈ = 0, in the coordinates of ``frame``.

    Raises
    ------
    TypeError
        ``model`` is not a Model, an array argument is not numeric, or ``qd`` is None.
    ValueError
        An unknown body (the message lists the bodies), an unknown ``frame``, a wrong shape, NaN or inf in the
        arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> mb.jdot_qd(mb.models.planar(2), [0.0, 0.0], [1.0, 0.0], "link2", [1, 0, 0]).tolist()
    [0.0, 0.0, 0.0, -2.0, 0.0, 0.0]
    """
    _checks.model(model)
    _checks.one_of("frame", frame, FRAMES[:2])
    i = model.body_index(body)
    r = _point("point", point)
    _required(qd=qd)
    s = body_states(model, q, qd, np.zeros(model.nv))
    w, v = s.v[..., i, :3], s.v[..., i, 3:]
    al, a = s.a[..., i, :3], s.a[..., i, 3:]
    acc = a + np.cross(al, r) + np.cross(w, v + np.cross(w, r))
    out = np.concatenate([al, acc], axis=-1)
    if frame == "world_aligned":
        Rb = s.R[..., i, :, :]
        out = np.concatenate([np.einsum("...ij,...j->...i", Rb, out[..., :3]),
                              np.einsum("...ij,...j->...i", Rb, out[..., 3:])], axis=-1)
    return out


def center_of_mass(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """Centre of mass of the whole tree in world coordinates.

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).

    Returns
    -------
    ndarray, shape (..., 3)
        Σ mᵢ cᵢ / Σ mᵢ over the bodies, m.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        A wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> mb.center_of_mass(mb.models.planar(2), [0.0, 0.0]).tolist()
    [1.0, 0.0, 0.0]
    """
    _checks.model(model)
    s = body_states(model, q)
    x = s.p + np.einsum("...bij,bj->...bi", s.R, model.com)
    return np.einsum("b,...bi->...i", model.mass, x) / model.mass.sum()


def com_jacobian(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """Jacobian of the centre of mass: Σ mᵢ Jᵢ(cᵢ) / Σ mᵢ (``csrc/kernels/kinematics.c``).

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).

    Returns
    -------
    ndarray, shape (..., 3, nv)
        The centre of mass's velocity per unit q̇.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        A wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> mb.com_jacobian(mb.models.planar(2), [0.0, 0.0])[1].tolist()
    [1.0, 0.25]
    """
    _checks.model(model)
    c = model._c
    Jc = _core.com_jacobian(c, q)
    if Jc is None:
        args, batch = B.states(model, q=q)
        Jc = _core.com_jacobian(c, args["q"]).reshape(batch + (3, model.nv))
    return Jc / model.mass.sum()


def com_velocity(model: Model, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
    """Velocity of the centre of mass.

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (a batch of them with leading dimensions).
    qd : array_like, shape (nv,) or (..., nv)
        Joint velocities.

    Returns
    -------
    ndarray, shape (..., 3)
        The centre of mass's velocity in world coordinates, m/s.

    Raises
    ------
    TypeError
        ``model`` is not a Model, an array argument is not numeric, or ``qd`` is None.
    ValueError
        a wrong shape, NaN or inf in the arrays.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> mb.com_velocity(mb.models.planar(2), [0.0, 0.0], [1.0, 0.0]).tolist()
    [0.0, 1.0, 0.0]
    """
    _checks.model(model)
    _required(qd=qd)
    s = body_states(model, q, qd)
    vc = s.v[..., 3:] + np.cross(s.v[..., :3], np.broadcast_to(model.com, s.v.shape[:-1] + (3,)))
    vw = np.einsum("...bij,...bj->...bi", s.R, vc)
    return np.einsum("b,...bi->...i", model.mass, vw) / model.mass.sum()
