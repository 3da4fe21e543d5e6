"""ModelBuilder: the human side of Model — bodies by name, readable errors."""
from __future__ import annotations

import numpy as np

from .inertia import check_inertia
from .joints import parse_joint
from .model import Frame, Geometry, Mimic, Model


def _vec3(name, v):
    a = np.asarray(v, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected 3 finite numbers, got {v!r}")
    return a


def _rotation(name, R):
    if R is None:
        return np.eye(3)
    a = np.asarray(R, dtype=float)
    if a.shape != (3, 3) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected a finite 3×3 rotation matrix, got shape {a.shape}")
    if not np.allclose(a @ a.T, np.eye(3), atol=1e-8) or np.linalg.det(a) < 0:
        raise ValueError(f"{name}: not a proper rotation matrix (RRᵀ ≠ I or det < 0)")
    return a


class ModelBuilder:
    """Build a :class:`Model` body by body.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> b = mb.ModelBuilder("pendulum")
    >>> b.add_body("link", parent=None, joint="revolute", axis=[0, 1, 0], mass=1.0,
    ...            com=[0, 0, -0.5], inertia=np.diag([0.1, 0.1, 0.01]))
    0
    >>> b.build().nv
    1
    """

    def __init__(self, name: str = "model", gravity=(0.0, 0.0, -9.81)):
        self.name = name
        self.gravity = _vec3("gravity", gravity)
        self._bodies: list[dict] = []
        self._frames: list[Frame] = []
        self._geoms: list[Geometry] = []
        self._mimics: list[tuple] = []

    @property
    def body_names(self) -> list[str]:
        return [b["name"] for b in self._bodies]

    def _parent_index(self, parent, child):
        if parent is None or (isinstance(parent, (int, np.integer)) and parent == -1):
            return -1
        if isinstance(parent, (int, np.integer)):
            if not 0 <= parent < len(self._bodies):
                raise ValueError(f"parent: body {child!r} names parent index {parent}, but only bodies "
                                 f"0…{len(self._bodies) - 1} exist (add parents before children)")
            return int(parent)
        names = self.body_names
        if parent not in names:
            raise ValueError(f"parent: body {child!r} names parent {parent!r}, which is not defined yet; "
                             f"known bodies: {names}")
        return names.index(parent)

    def add_body(self, name: str, parent=None, joint="revolute", *, axis=None, pitch: float = 0.0,
                 mass: float = 1.0, com=(0.0, 0.0, 0.0), inertia=None,
                 joint_rotation=None, joint_translation=(0.0, 0.0, 0.0), joint_name: str | None = None,
                 q_lower=None, q_upper=None, velocity_limit=None, effort_limit=None,
                 damping=None, friction=None, armature=None, allow_massless: bool = False) -> int:
        """Add a body hanging from ``parent`` (name, index or None for the base) through a joint.

        ``joint_rotation``/``joint_translation`` place the joint frame in the parent (A_PJ, P_r_PJ);
        ``com`` and ``inertia`` (about the CoM) are in body coordinates.  ``armature`` is the rotor
        inertia of the joint's dofs (one value for all, or one per dof), added to the diagonal of
        the joint-space inertia as MuJoCo's ``armature``.  Returns the body index.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"name: expected a non-empty string, got {name!r}")
        if name in self.body_names:
            raise ValueError(f"name: a body named {name!r} already exists")
        p = self._parent_index(parent, name)
        jtype, ax = parse_joint(joint, axis)
        if not np.isfinite(pitch):
            raise ValueError(f"pitch: body {name!r} has non-finite pitch")
        m = float(mass)
        if not np.isfinite(m) or m < 0 or (m == 0 and not allow_massless):
            raise ValueError(f"mass: body {name!r} has mass {mass}; expected a positive number")
        c = _vec3(f"com of {name!r}", com)
        Ic = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
        if Ic.shape == (3,):
            Ic = np.diag(Ic)
        if Ic.shape != (3, 3) or not np.all(np.isfinite(Ic)):
            raise ValueError(f"inertia: body {name!r} expects a finite 3×3 matrix (or 3 principal moments)")
        check_inertia(Ic, f"body {name!r}")
        from .joints import NV
        arm = np.zeros(NV[jtype]) if armature is None else np.asarray(armature, dtype=float)
        if arm.ndim == 0:
            arm = np.full(NV[jtype], float(arm))
        if arm.shape != (NV[jtype],) or not np.all(np.isfinite(arm)) or np.any(arm < 0):
            raise ValueError(f"armature: body {name!r} expects one finite value ≥ 0, or {NV[jtype]} (one per "
                             f"dof of its {jtype.name} joint), got {armature!r}")
        self._bodies.append(dict(name=name, parent=p, jtype=jtype, axis=ax, pitch=float(pitch), mass=m, armature=arm,
                                 com=c, inertia=Ic, R=_rotation(f"joint_rotation of {name!r}", joint_rotation),
                                 t=_vec3(f"joint_translation of {name!r}", joint_translation),
                                 joint_name=joint_name or name + "_joint",
                                 limits=(q_lower, q_upper, velocity_limit, effort_limit, damping, friction)))
        return len(self._bodies) - 1

    def add_frame(self, name: str, body, rotation=None, translation=(0.0, 0.0, 0.0)) -> None:
        """A named frame fixed in ``body`` at (A_BF, B_r_BF)."""
        i = self._parent_index(body, name)
        self._frames.append(Frame(name, i, _rotation(f"rotation of frame {name!r}", rotation),
                                  _vec3(f"translation of frame {name!r}", translation)))

    def add_geometry(self, geometry: Geometry) -> None:
        self._geoms.append(geometry)

    def add_mimic(self, joint, mimicked, multiplier=1.0, offset=0.0) -> None:
        self._mimics.append((joint, mimicked, float(multiplier), float(offset)))

    def build(self) -> Model:
        """Freeze into an immutable :class:`Model`."""
        if not self._bodies:
            raise ValueError("build: the model has no bodies")
        B = self._bodies
        from .joints import NQ, NV
        q_lo, q_hi, vmax, emax, damp, fric = [], [], [], [], [], []
        for b in B:
            nq, nv = NQ[b["jtype"]], NV[b["jtype"]]
            lo, hi, vl, el, d, f = b["limits"]
            q_lo += [(-np.inf if lo is None else lo)] * nq if nq <= 1 else [-np.inf] * nq
            q_hi += [(np.inf if hi is None else hi)] * nq if nq <= 1 else [np.inf] * nq
            vmax += [np.inf if vl is None else vl] * nv
            emax += [np.inf if el is None else el] * nv
            damp += [0.0 if d is None else d] * nv
            fric += [0.0 if f is None else f] * nv
        joint_names = [b["joint_name"] for b in B]
        mimics = []
        for j, mj, mult, off in self._mimics:
            ji = joint_names.index(j) if isinstance(j, str) else int(j)
            mi = joint_names.index(mj) if isinstance(mj, str) else int(mj)
            mimics.append(Mimic(ji, mi, mult, off))
        return Model(
            parent=[b["parent"] for b in B], jtype=[int(b["jtype"]) for b in B],
            jaxis=[b["axis"] for b in B], jpitch=[b["pitch"] for b in B],
            tree_rotation=[b["R"] for b in B], tree_translation=[b["t"] for b in B],
            mass=[b["mass"] for b in B], com=[b["com"] for b in B], inertia_com=[b["inertia"] for b in B],
            gravity=self.gravity, body_names=tuple(b["name"] for b in B), joint_names=tuple(joint_names),
            name=self.name, frames=tuple(self._frames), geometries=tuple(self._geoms), mimics=tuple(mimics),
            q_lower=q_lo, q_upper=q_hi, velocity_limit=vmax, effort_limit=emax, damping=damp, friction=fric,
            armature=np.concatenate([b["armature"] for b in B]))
