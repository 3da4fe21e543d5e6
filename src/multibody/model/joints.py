"""Joint types: codes, sizes, motion subspaces, and the seed's jcalc.

Every joint here has a motion subspace S that is constant in the successor (body) frame, so a
kernel needs only the joint transform X_J(q); velocity variables of multi-DoF joints are body-frame
quantities (spherical: ω; free: [ω; v]; planar: [vx, vy, ω]).
"""
from __future__ import annotations

from enum import IntEnum

import numpy as np

from .. import _checks


class JointType(IntEnum):
    FIXED = 0
    REVOLUTE = 1
    PRISMATIC = 2
    HELICAL = 3
    SPHERICAL = 4  # q = quaternion [w, x, y, z]; qd = ω in body coordinates
    FREE = 5       # q = [x, y, z, w, qx, qy, qz] (position in parent, then quaternion); qd = [ω; v] body
    PLANAR = 6     # q = [x, y, θ] in the joint frame's x-y plane; qd = [vx, vy, ω] body coordinates


NQ = {JointType.FIXED: 0, JointType.REVOLUTE: 1, JointType.PRISMATIC: 1, JointType.HELICAL: 1,
      JointType.SPHERICAL: 4, JointType.FREE: 7, JointType.PLANAR: 3}
NV = {JointType.FIXED: 0, JointType.REVOLUTE: 1, JointType.PRISMATIC: 1, JointType.HELICAL: 1,
      JointType.SPHERICAL: 3, JointType.FREE: 6, JointType.PLANAR: 3}

_X, _Y, _Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)

# spatial_v2 jcalc codes (spatial and planar), plus readable names.  Planar codes 'r', 'px', 'py'
# are the same motions embedded in the x-y plane of a spatial model.
JOINT_CODES: dict[str, tuple[JointType, tuple[float, float, float] | None]] = {
    "Rx": (JointType.REVOLUTE, _X), "Ry": (JointType.REVOLUTE, _Y), "Rz": (JointType.REVOLUTE, _Z),
    "R": (JointType.REVOLUTE, _Z), "r": (JointType.REVOLUTE, _Z),
    "Px": (JointType.PRISMATIC, _X), "Py": (JointType.PRISMATIC, _Y), "Pz": (JointType.PRISMATIC, _Z),
    "P": (JointType.PRISMATIC, _Z), "px": (JointType.PRISMATIC, _X), "py": (JointType.PRISMATIC, _Y),
    "H": (JointType.HELICAL, _Z),
    "revolute": (JointType.REVOLUTE, None), "continuous": (JointType.REVOLUTE, None),
    "prismatic": (JointType.PRISMATIC, None), "helical": (JointType.HELICAL, None),
    "fixed": (JointType.FIXED, None), "spherical": (JointType.SPHERICAL, None),
    "ball": (JointType.SPHERICAL, None), "free": (JointType.FREE, None),
    "floating": (JointType.FREE, None), "planar": (JointType.PLANAR, None),
}


def parse_joint(joint, axis=None) -> tuple[JointType, np.ndarray]:
    """Resolve a joint code or name (``'Rz'``, ``'revolute'``, ``JointType.FREE`` …) and its unit axis."""
    if isinstance(joint, JointType):
        jtype, default_axis = joint, None
    elif isinstance(joint, (int, np.integer)) and not isinstance(joint, (bool, np.bool_)):
        if int(joint) not in {int(t) for t in JointType}:
            raise ValueError(f"joint: unknown joint type {joint!r}; expected one of {sorted(JOINT_CODES)} "
                             f"or a JointType code {sorted(int(t) for t in JointType)}")
        jtype, default_axis = JointType(int(joint)), None
    elif not isinstance(joint, str):
        raise TypeError(f"joint: expected a joint name or code (str) or a JointType, got {type(joint).__name__}")
    elif joint in JOINT_CODES:
        jtype, default_axis = JOINT_CODES[joint]
    else:
        raise ValueError(f"joint: unknown joint type {joint!r}; expected one of {sorted(JOINT_CODES)}")
    if axis is None:
        axis = default_axis if default_axis is not None else _Z
    elif default_axis is not None and joint not in ("H",):
        raise ValueError(f"joint: code {joint!r} fixes the axis to {default_axis}; use 'revolute'/'prismatic' "
                         f"with axis=... for another axis")
    axis = _checks.vector("axis", axis, 3)
    n = np.linalg.norm(axis)
    if n < 1e-12:
        raise ValueError("axis: must be a non-zero vector")
    return jtype, axis / n


def motion_subspace(jtype: JointType, axis, pitch: float = 0.0) -> np.ndarray:
    """Rows are the columns of S (nv_j × 6), in body coordinates, spatial order [ω; v]."""
    a = np.asarray(axis, dtype=float)
    z = np.zeros(3)
    if jtype == JointType.FIXED:
        return np.zeros((0, 6))
    if jtype == JointType.REVOLUTE:
        return np.concatenate([a, z])[None]
    if jtype == JointType.PRISMATIC:
        return np.concatenate([z, a])[None]
    if jtype == JointType.HELICAL:
        return np.concatenate([a, pitch * a])[None]
    if jtype == JointType.SPHERICAL:
        return np.eye(6)[:3]
    if jtype == JointType.FREE:
        return np.eye(6)
    if jtype == JointType.PLANAR:
        return np.eye(6)[[3, 4, 2]]
    raise ValueError(f"jtype: unknown joint type {jtype!r}")


def neutral_configuration(jtype: JointType) -> np.ndarray:
    """q of the joint at its zero pose (identity quaternions)."""
    if jtype == JointType.SPHERICAL:
        return np.array([1.0, 0.0, 0.0, 0.0])
    if jtype == JointType.FREE:
        return np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    return np.zeros(NQ[jtype])


def jcalc(code: str, q: float, pitch: float = 0.0):
    """spatial_v2 ``jcalc``: the joint transform ``X_J`` and motion subspace ``S`` of a one-dof joint.

    ``code`` is a seed joint code: ``'Rx'``, ``'Ry'``, ``'Rz'``, ``'Px'``, ``'Py'``, ``'Pz'``, ``'H'``
    (a screw about z advancing ``pitch`` per radian; the seed reads it from ``jtyp.pars.pitch``), or
    the planar ``'r'``, ``'px'``, ``'py'`` (3×3 planar transforms, S of length 3).  ``X_J`` maps
    predecessor coordinates to successor coordinates, as the seed's.

    >>> import numpy as np
    >>> X, S = jcalc("Rz", 0.3)
    >>> bool(np.allclose(X[:3, :3], [[np.cos(0.3), np.sin(0.3), 0], [-np.sin(0.3), np.cos(0.3), 0], [0, 0, 1]]))
    True
    >>> S.tolist()
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    """
    from ..spatial import plnr, rotx, roty, rotz, xlt
    q = float(q)
    if not np.isfinite(q):
        raise ValueError(f"q: expected a finite number, got {q!r}")
    spatial = {"Rx": (lambda: rotx(q), 0), "Ry": (lambda: roty(q), 1), "Rz": (lambda: rotz(q), 2),
               "Px": (lambda: xlt([q, 0, 0]), 3), "Py": (lambda: xlt([0, q, 0]), 4),
               "Pz": (lambda: xlt([0, 0, q]), 5)}
    planar = {"r": (lambda: plnr(q, [0, 0]), 0), "px": (lambda: plnr(0, [q, 0]), 1),
              "py": (lambda: plnr(0, [0, q]), 2)}
    if code == "H":
        return rotz(q) @ xlt([0, 0, q * pitch]), np.array([0, 0, 1, 0, 0, float(pitch)])
    if code in spatial or code in planar:
        make, k = spatial.get(code) or planar[code]
        S = np.zeros(6 if code in spatial else 3)
        S[k] = 1.0
        return np.asarray(make(), float), S
    raise ValueError(f"code: unknown jcalc joint code {code!r}; expected one of Rx, Ry, Rz, Px, Py, Pz, H, r, px, py")
