"""Spatial and planar vector algebra (spatial_v2 ``rx … Fpt``, RBDA ch. 2 and 4).

Conventions (the same as Featherstone's spatial_v2):

* spatial vectors are ``[angular; linear]``; planar motion vectors ``[ω, vx, vy]``;
* ``X`` maps motion vectors from A to B coordinates, ``rx(θ) = [[1,0,0],[0,c,s],[0,-s,c]]``,
  ``plux(E, r) = [[E, 0], [-E·skew(r), E]]``, ``plux(rx(1), [2,3,4]) == rotx(1) @ xlt([2,3,4])``;
* quaternions are scalar-first ``[w, x, y, z]``; ``rq(q)`` is the A→B coordinate transform for
  the orientation ``q`` of B relative to A.

Seed names (``rx``, ``crm``, ``mcI``, ``plux``, ``XtoV`` …) and snake_case aliases
(``cross_motion``, ``rigid_body_inertia``, ``plucker``, ``x_to_v`` …) are both exported.
"""

from .rotations import (
    KSTAB,
    coord_rotation_x,
    coord_rotation_y,
    coord_rotation_z,
    hat,
    matrix_to_quat,
    matrix_to_rotvec,
    quat_derivative,
    quat_to_matrix,
    quaternion,
    rotation_vector,
    rotvec_to_matrix,
    rq,
    rqd,
    rv,
    rx,
    ry,
    rz,
    skew,
    vee,
)
from .vectors import (
    Fpt,
    Vpt,
    Xpt,
    XtoV,
    crf,
    crm,
    cross_force,
    cross_motion,
    homogeneous_to_plucker,
    inertia_parameters,
    mcI,
    mci,
    planar_transform,
    plnr,
    pluho,
    plucker,
    plucker_to_homogeneous,
    plux,
    point_forces,
    point_velocities,
    rigid_body_inertia,
    rot_x,
    rot_y,
    rot_z,
    rotx,
    roty,
    rotz,
    transform_points,
    translation,
    x_to_v,
    xlt,
)

__all__ = [
    # seed names
    "rx", "ry", "rz", "rv", "rq", "rqd", "skew",
    "crm", "crf", "mcI", "rotx", "roty", "rotz", "xlt", "plnr", "plux", "pluho", "XtoV",
    "Xpt", "Vpt", "Fpt",
    # snake_case and explicit forms
    "coord_rotation_x", "coord_rotation_y", "coord_rotation_z",
    "rotation_vector", "rotvec_to_matrix", "matrix_to_rotvec",
    "quaternion", "quat_to_matrix", "matrix_to_quat", "quat_derivative", "KSTAB",
    "hat", "vee",
    "cross_motion", "cross_force", "mci", "rigid_body_inertia", "inertia_parameters",
    "rot_x", "rot_y", "rot_z", "translation", "planar_transform", "plucker",
    "plucker_to_homogeneous", "homogeneous_to_plucker", "x_to_v",
    "transform_points", "point_velocities", "point_forces",
]
