"""Joint types: the joint table (:data:`JOINTS`), and the seed's jcalc.

Every joint here has a motion subspace S that is constant in the successor (body) frame, so a
kernel needs only the joint transform X_J(q); velocity variables of multi-DoF joints are body-frame
quantities (spherical: ω; free: [ω; v]; planar: [vx, vy, ω]; cylindrical: [θ̇, ḋ]).

The table is the one place a joint type is described: the builder, the loaders' codes, the model's
S and neutral q, configuration-space arithmetic, the simulator's plain-vector test, the symbolic
side, the code generator's tracer and the viewer read it; C gets its codes and per-type facts from
csrc/model/joints.h and the viewer its constants from :func:`js_constants`, both generated from it.

Adding a joint type (S constant in the body frame):

1. a row of :data:`JOINTS` here (sizes, S, neutral q, pose steps, plain vector or not, chain);
2. ``python -m multibody.model.joints`` regenerates csrc/model/joints.h;
3. one case of ``mb_jcalc_inline`` in csrc/model/poses.h (its transform, as the pose steps say);
4. only if q is not a plain vector: one case of ``mb_integrate`` in csrc/kernels/kinematics.c and its
   Python twin in simulation/rollout.py (``StateSpace.coordinate_rate``).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Callable

import numpy as np

from .. import _checks


_X, _Y, _Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)


@dataclass(frozen=True)
class JointSpec:
    """Everything the library knows about one joint type: one row of :data:`JOINTS`.

    ``subspace(axis, pitch)`` gives S (rows are its columns, nv × 6, body coordinates, [ω; v]);
    ``pose`` is the joint transform as a product of steps applied left to right (the viewer and
    :func:`joint_pose` interpret it; csrc/model/poses.h has the same transform written out):
    ``("rot", k)`` turn about the axis by q[k], ``("slide", k)`` slide along the axis by q[k],
    ``("screw", k)`` slide along the axis by pitch·q[k], ``("xyz", k)`` translate by q[k:k+3],
    ``("xy", k)`` translate by (q[k], q[k+1], 0), ``("rotz", k)`` turn about z by q[k],
    ``("quat", k)`` rotate by the quaternion q[k:k+4] ([w, x, y, z], normalised).
    ``vector``: q is a plain vector with q̇ = v (integrated as q + v·dt); otherwise csrc/kernels/kinematics.c
    (mb_integrate) has its exponential map.  ``chain``: the one-dof joints ('revolute', 'prismatic',
    'helical', 'fixed') that make it through massless bodies, as the symbolic side derives it
    (None: not derivable).  ``codes``: seed codes (spatial_v2 jcalc) with the axis each fixes.
    """

    code: int
    name: str
    nq: int
    nv: int
    vector: bool
    neutral: tuple
    subspace: Callable
    pose: tuple
    chain: tuple | None
    aliases: tuple = ()
    codes: tuple = ()
    quat: int = -1  # offset of the unit quaternion in q, −1 = none
    doc: str = ""


def _rows(*cols):
    return lambda a, h: np.array([c(np.asarray(a, float), float(h)) for c in cols]).reshape(len(cols), 6)


_w = lambda a, h: np.concatenate([a, np.zeros(3)])       # noqa: E731  turn about the axis
_v = lambda a, h: np.concatenate([np.zeros(3), a])       # noqa: E731  slide along the axis
_e = lambda k: (lambda a, h: np.eye(6)[k])               # noqa: E731  unit column e_k

#: The joint table: the one place joint types are described.  Python reads it here; the C header
#: csrc/model/joints.h and the viewer's constants are generated from it (:func:`c_header`,
#: :func:`js_constants`; tests/test_joint_table.py holds them equal).
JOINTS: tuple[JointSpec, ...] = (
    JointSpec(0, "fixed", 0, 0, True, (), _rows(), (), ("fixed",), doc="no motion"),
    JointSpec(1, "revolute", 1, 1, True, (0.0,), _rows(_w), (("rot", 0),), ("revolute",),
              aliases=("continuous",), codes=(("Rx", _X), ("Ry", _Y), ("Rz", _Z), ("R", _Z), ("r", _Z)),
              doc="angle about axis; S = [a; 0]"),
    JointSpec(2, "prismatic", 1, 1, True, (0.0,), _rows(_v), (("slide", 0),), ("prismatic",),
              codes=(("Px", _X), ("Py", _Y), ("Pz", _Z), ("P", _Z), ("px", _X), ("py", _Y)),
              doc="slide along axis; S = [0; a]"),
    JointSpec(3, "helical", 1, 1, True, (0.0,), _rows(lambda a, h: np.concatenate([a, h * a])),
              (("rot", 0), ("screw", 0)), ("helical",), codes=(("H", _Z),),
              doc="angle, slide pitch·angle; S = [a; pitch·a]"),
    JointSpec(4, "spherical", 4, 3, False, (1.0, 0.0, 0.0, 0.0), _rows(_e(0), _e(1), _e(2)), (("quat", 0),), None,
              aliases=("ball",), quat=0, doc="quaternion [w,x,y,z]; v = ω in body coordinates"),
    JointSpec(5, "free", 7, 6, False, (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0),
              _rows(*(_e(k) for k in range(6))), (("xyz", 0), ("quat", 3)), None, aliases=("floating",), quat=3,
              doc="[x,y,z (in parent), w,qx,qy,qz]; v = [ω; v] body coordinates"),
    JointSpec(6, "planar", 3, 3, False, (0.0, 0.0, 0.0), _rows(_e(3), _e(4), _e(2)), (("xy", 0), ("rotz", 2)), None,
              doc="[x, y, θ] in the joint frame's x-y plane; v = [vx, vy, ω] body coordinates"),
    JointSpec(7, "cylindrical", 2, 2, True, (0.0, 0.0), _rows(_w, _v), (("rot", 0), ("slide", 1)),
              ("revolute", "prismatic"), doc="[angle about axis, slide along axis]; S = [a 0; 0 a]"),
)

JointType = IntEnum("JointType", [(s.name.upper(), s.code) for s in JOINTS], module=__name__)
JointType.__doc__ = "Joint type codes, one per row of :data:`JOINTS` (the same numbers as csrc/model/joints.h)."

NQ = {JointType(s.code): s.nq for s in JOINTS}
NV = {JointType(s.code): s.nv for s in JOINTS}

# spatial_v2 jcalc codes (spatial and planar), plus readable names.  Planar codes 'r', 'px', 'py'
# are the same motions embedded in the x-y plane of a spatial model.
JOINT_CODES: dict[str, tuple[JointType, tuple[float, float, float] | None]] = {
    **{c: (JointType(s.code), a) for s in JOINTS for c, a in s.codes},
    **{n: (JointType(s.code), None) for s in JOINTS for n in (s.name,) + s.aliases},
}


def spec(jtype) -> JointSpec:
    """The :data:`JOINTS` row of a joint type code.

    >>> spec(JointType.FREE).nq, spec(2).name
    (7, 'prismatic')
    """
    k = int(jtype)
    if not 0 <= k < len(JOINTS):
        raise ValueError(f"jtype: unknown joint type code {jtype!r}; expected 0…{len(JOINTS) - 1}")
    return JOINTS[k]


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
    return spec(jtype).subspace(axis, pitch)


def neutral_configuration(jtype: JointType) -> np.ndarray:
    """q of the joint at its zero pose (identity quaternions)."""
    return np.array(spec(jtype).neutral, dtype=float)


def joint_pose(jtype, axis, pitch, q) -> tuple[np.ndarray, np.ndarray]:
    """Pose (R_JB, J_r_JB) of a body in its joint frame, by the table's ``pose`` steps (RBDA table 4.1).

    The reference the C jcalc (csrc/model/poses.h) and the viewer are tested against.

    >>> R, p = joint_pose(JointType.PRISMATIC, [0, 0, 1], 0.0, [0.5])
    >>> R.tolist() == np.eye(3).tolist(), p.tolist()
    (True, [0.0, 0.0, 0.5])
    """
    a, q = np.asarray(axis, float), np.asarray(q, float)
    R, p = np.eye(3), np.zeros(3)
    for op, k in spec(jtype).pose:
        Rs, ps = np.eye(3), np.zeros(3)
        if op in ("rot", "rotz"):
            u = a if op == "rot" else np.array(_Z)
            K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
            Rs = np.eye(3) + np.sin(q[k]) * K + (1 - np.cos(q[k])) * K @ K
        elif op == "slide":
            ps = a * q[k]
        elif op == "screw":
            ps = a * float(pitch) * q[k]
        elif op == "xyz":
            ps = q[k:k + 3].copy()
        elif op == "xy":
            ps = np.array([q[k], q[k + 1], 0.0])
        elif op == "quat":
            w, x, y, z = q[k:k + 4] / np.linalg.norm(q[k:k + 4])
            Rs = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                           [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                           [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        else:  # pragma: no cover - the table is fixed
            raise ValueError(f"pose: unknown step {op!r}")
        R, p = R @ Rs, p + R @ ps
    return R, p


def c_header() -> str:
    """Text of csrc/model/joints.h: the C joint codes and per-type facts, generated from :data:`JOINTS`."""
    lines = ["/* joints.h — GENERATED from multibody/model/joints.py (JOINTS) by",
             " * `python -m multibody.model.joints`; do not edit: add a joint type to the table there.",
             " * The kernels read only these facts; each joint's transform is one case of mb_jcalc_inline",
             " * (poses.h), and a joint that is not a plain vector has one case of mb_integrate (kinematics.c). */",
             "#ifndef MULTIBODY_JOINTS_H", "#define MULTIBODY_JOINTS_H", "",
             "/* Joint type codes: the same numbers as multibody.model.joints.JointType. */",
             "enum mb_joint_type {"]
    for s in JOINTS:
        sep = "," if s is not JOINTS[-1] else ""
        lines.append(f"    MB_{s.name.upper()} = {s.code}{sep}  /* nq {s.nq}, nv {s.nv}: {s.doc} */")
    mask = sum(1 << s.code for s in JOINTS if s.vector)
    quat = sum((s.quat + 1) << (4 * s.code) for s in JOINTS)
    nq = sum(s.nq << (4 * s.code) for s in JOINTS)
    nv = sum(s.nv << (4 * s.code) for s in JOINTS)
    lines += ["};", "", f"enum {{ MB_JOINT_COUNT = {len(JOINTS)} }};", "",
              "/* Bit jt set: joint type jt has a plain-vector q with q̇ = v (nq = nv, q + v·dt). */",
              f"#define MB_VECTOR_JOINTS 0x{mask:x}u", "",
              "static inline int mb_joint_is_vector(int jt)",
              "{", "    return jt >= 0 && jt < MB_JOINT_COUNT && ((MB_VECTOR_JOINTS >> jt) & 1u);", "}", "",
              "/* Nibble jt: 1 + offset of the unit quaternion in the joint's q, 0 = none. */",
              f"#define MB_JOINT_QUATS 0x{quat:x}ull", "",
              "static inline int mb_joint_quat_offset(int jt)",
              "{", "    return jt >= 0 && jt < MB_JOINT_COUNT ? (int)((MB_JOINT_QUATS >> (4 * jt)) & 0xfu) - 1 : -1;",
              "}", "",
              "/* Nibble jt: the joint type's nq and nv (CModel checks the tables it is given against them). */",
              f"#define MB_JOINT_NQ 0x{nq:x}ull", f"#define MB_JOINT_NV 0x{nv:x}ull", "",
              "static inline int mb_joint_nq(int jt)",
              "{", "    return jt >= 0 && jt < MB_JOINT_COUNT ? (int)((MB_JOINT_NQ >> (4 * jt)) & 0xfu) : -1;", "}", "",
              "static inline int mb_joint_nv(int jt)",
              "{", "    return jt >= 0 && jt < MB_JOINT_COUNT ? (int)((MB_JOINT_NV >> (4 * jt)) & 0xfu) : -1;", "}", "",
              "#endif", ""]
    return "\n".join(lines)


def js_constants() -> str:
    """The viewer's joint constants (injected into viewer.js when a page is built), from :data:`JOINTS`."""
    import json
    pose = [[list(step) for step in s.pose] for s in JOINTS]
    return f"const JOINT_POSE = {json.dumps(pose)};  // generated from multibody.model.joints.JOINTS"


def jcalc(code: str, q: float, pitch: float = 0.0):
    """spatial_v2 ``jcalc``: the joint transform ``X_J`` and motion subspace ``S`` of a one-dof joint.

    ``X_J`` maps predecessor coordinates to successor coordinates, as the seed's.

    Parameters
    ----------
    code : str
        A seed joint code: ``'Rx'``, ``'Ry'``, ``'Rz'``, ``'Px'``, ``'Py'``, ``'Pz'``, ``'R'`` and
        ``'P'`` (the seed's older codes for ``'Rz'`` and ``'Pz'``), ``'H'`` (a screw about z), or
        the planar ``'r'``, ``'px'``, ``'py'``.
    q : float
        The joint variable (rad for revolute and helical joints, m for prismatic ones).
    pitch : float, default 0.0
        The helical joint's advance per radian (m/rad; the seed reads it from ``jtyp.pars.pitch``);
        other codes ignore it.

    Returns
    -------
    XJ : ndarray, shape (6, 6), or (3, 3) for a planar code
        The joint's Plücker (planar) coordinate transform.
    S : ndarray, shape (6,), or (3,) for a planar code
        The motion subspace: ``[angular; linear]`` (planar ``[ω, vx, vy]``) per unit q̇.

    Raises
    ------
    TypeError
        ``code`` is not a string, ``q`` or ``pitch`` not a real number.
    ValueError
        An unknown code; ``q`` or ``pitch`` NaN or inf.
    multibody.errors.ResultOverflowError
        A screw's advance ``q·pitch`` overflows (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np
    >>> X, S = jcalc("Rz", 0.3)
    >>> bool(np.allclose(X[:3, :3], [[np.cos(0.3), np.sin(0.3), 0], [-np.sin(0.3), np.cos(0.3), 0], [0, 0, 1]]))
    True
    >>> S.tolist()
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    >>> jcalc("H", 1.0, pitch=0.1)[1].tolist()
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.1]
    """
    from ..spatial import plnr, rotx, roty, rotz, xlt
    if not isinstance(code, str):
        raise TypeError(f"code: expected a joint code (str), got {type(code).__name__} {code!r}")
    q = _checks.number("q", q)
    pitch = _checks.number("pitch", pitch)
    spatial = {"Rx": (lambda: rotx(q), 0), "Ry": (lambda: roty(q), 1), "Rz": (lambda: rotz(q), 2),
               "Px": (lambda: xlt([q, 0, 0]), 3), "Py": (lambda: xlt([0, q, 0]), 4),
               "Pz": (lambda: xlt([0, 0, q]), 5)}
    spatial["R"], spatial["P"] = spatial["Rz"], spatial["Pz"]     # the seed's older codes: about / along z
    planar = {"r": (lambda: plnr(q, [0, 0]), 0), "px": (lambda: plnr(0, [q, 0]), 1),
              "py": (lambda: plnr(0, [0, q]), 2)}
    if code == "H":
        if not np.isfinite(q * pitch):
            from ..core import ResultOverflowError     # finite inputs whose result overflows
            raise ResultOverflowError(f"jcalc: the screw's advance q·pitch overflows ({q:g}·{pitch:g})")
        return rotz(q) @ xlt([0, 0, q * pitch]), np.array([0, 0, 1, 0, 0, pitch])
    if code in spatial or code in planar:
        make, k = spatial.get(code) or planar[code]
        S = np.zeros(6 if code in spatial else 3)
        S[k] = 1.0
        return np.asarray(make(), float), S
    raise ValueError(f"code: unknown jcalc joint code {code!r}; expected one of R, P, Rx, Ry, Rz, Px, Py, Pz, H, "
                     "r, px, py")


if __name__ == "__main__":  # regenerate csrc/model/joints.h from the table
    from pathlib import Path
    (Path(__file__).resolve().parent.parent / "csrc" / "model" / "joints.h").write_text(c_header(), encoding="utf-8")
