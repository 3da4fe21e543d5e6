"""Gravity compensation as external forces: MuJoCo's ``gravcomp`` (``Model.gravcomp``).

MuJoCo lifts body i by the force gravcomp_i · m_i · (−g) applied at its centre of mass (a
passive force; gravcomp = 1 cancels the body's weight, > 1 makes it buoyant).  ``rnea`` and
``aba`` stay pure — M q̈ + C(q, q̇) = τ + Σ Jᵢᵀ fᵢ — so the compensation enters through their
``f_ext`` argument: spatial forces [n; f] in base coordinates, n the moment about the base origin,

    f_i = gravcomp_i m_i (−g),    n_i = c_i × f_i      (c_i: world position of body i's CoM).

The same lifts as a generalized force (MuJoCo's ``qfrc_gravcomp``), g = Σ_i J_i(c_i)ᵀ f_i with J_i
the linear Jacobian of body i's centre of mass: :func:`gravity_compensation_torques`.  A joint with
MJCF ``actuatorgravcomp`` and an ``actuatorfrcrange`` clips its actuators' force together with its
g_j (``model/actuators.py``).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _boundary as B
from .. import _checks
from ..kinematics.forward import forward_kinematics
from ..kinematics.jacobians import body_jacobian
from ..model.model import Model

__all__ = ["gravity_compensation_forces", "gravity_compensation_torques"]


def gravity_compensation_forces(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """The external forces that apply ``model.gravcomp`` as MuJoCo does (MuJoCo's ``gravcomp``).

    Body i is lifted by f_i = gravcomp_i m_i (−g) at its centre of mass c_i: the spatial force
    [c_i × f_i; f_i] in base coordinates.  Pass the result to :func:`multibody.aba`,
    :func:`multibody.rnea`, :func:`multibody.hand_c` or :func:`multibody.simulate` as ``f_ext``.

    Parameters
    ----------
    model : Model
        A numeric model; ``model.gravcomp`` (nb,) is 0 for a body without compensation, 1 to
        cancel its weight, more to make it buoyant.
    q : array_like, shape (..., nq)
        Joint positions: rad (revolute), m (prismatic); a spherical joint's unit quaternion
        [w, x, y, z], a free joint's [position (m, parent frame); quaternion].

    Returns
    -------
    f_ext : ndarray, shape (..., nb, 6)
        Spatial forces in base coordinates, [moment (N·m) about the base origin; force (N)].

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; ``q`` is None, a string, complex or object array.
    ValueError
        ``q`` of a wrong shape, NaN or inf; a symbolic model.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> m = mb.load_mjcf('''<mujoco><worldbody><body name="arm" gravcomp="1">
    ...   <joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/>
    ... </body></worldbody></mujoco>''')
    >>> q = np.array([0.3])
    >>> qdd = mb.aba(m, q, np.zeros(1), np.zeros(1), f_ext=mb.gravity_compensation_forces(m, q))
    >>> bool(abs(qdd[0]) < 1e-12)                                  # the arm floats
    True
    """
    _checks.model(model)
    model._require_numeric()
    q = B.as_array("q", q)
    R, p = forward_kinematics(model, q)
    lift = (model.gravcomp * model.mass)[:, None] * -np.asarray(model.gravity)        # (nb, 3)
    c = p + np.einsum("...ij,...j->...i", R, model.com)                                  # world CoMs
    f = np.broadcast_to(lift, c.shape)
    return np.concatenate([np.cross(c, f), f], axis=-1)


def gravity_compensation_torques(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """The generalized force of ``model.gravcomp``'s lifts (MuJoCo's ``qfrc_gravcomp``).

    g = Σ_i J_i(c_i)ᵀ f_i, with f_i = gravcomp_i m_i (−g) the lift of body i at its centre of mass
    c_i and J_i(c_i) that point's linear Jacobian (world-aligned): the joint forces the spatial
    forces of :func:`gravity_compensation_forces` exert.  With gravcomp = 1 on every body it is the
    gravity torque g(q) = ``rnea(model, q, 0, 0)``.  A joint with MJCF ``actuatorgravcomp`` and an
    ``actuatorfrcrange`` clips its actuators' force together with its entry of g
    (:meth:`multibody.model.actuators.Actuators.forces`).

    Parameters
    ----------
    model : Model
        A numeric model; ``model.gravcomp`` (nb,) as for :func:`gravity_compensation_forces`.
    q : array_like, shape (..., nq)
        Joint positions (as for :func:`gravity_compensation_forces`).

    Returns
    -------
    tau : ndarray, shape (..., nv)
        Generalized forces (N·m for a revolute joint, N for a prismatic one).

    Raises
    ------
    TypeError
        ``model`` is not a ``mb.Model``; ``q`` is None, a string, complex or object array.
    ValueError
        ``q`` of a wrong shape, NaN or inf; a symbolic model.

    Examples
    --------
    >>> import dataclasses, numpy as np, multibody as mb
    >>> m = mb.models.planar(2)
    >>> lifted = dataclasses.replace(m, gravcomp=np.ones(m.nb))
    >>> q = np.array([0.3, -0.5])
    >>> bool(np.allclose(mb.gravity_compensation_torques(lifted, q), mb.rnea(m, q, np.zeros(2), np.zeros(2))))
    True
    """
    _checks.model(model)
    model._require_numeric()
    q = B.as_array("q", q)
    if q.ndim < 1 or q.shape[-1] != model.nq:
        raise ValueError(f"q: expected shape (..., {model.nq}), got {q.shape}")
    lift = (model.gravcomp * model.mass)[:, None] * -np.asarray(model.gravity)                      # (nb, 3)
    tau = np.zeros(q.shape[:-1] + (model.nv,))
    for i in range(model.nb):
        f = lift[i]
        if f[0] == 0.0 and f[1] == 0.0 and f[2] == 0.0:
            continue
        J = body_jacobian(model, q, i, model.com[i])                                    # (..., 6, nv)
        tau = tau + J[..., 3, :] * f[0] + J[..., 4, :] * f[1] + J[..., 5, :] * f[2]     # passive.c's order
    return tau
