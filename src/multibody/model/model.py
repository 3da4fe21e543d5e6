"""Model: an immutable, array-based kinematic tree (like mjModel), read by every kernel.

Bodies are numbered 0…nb-1 with parents first; parent −1 is the fixed base.  Body i hangs from
its parent through joint i: the joint frame J is fixed in the parent at (tree_rotation,
tree_translation) = (A_PJ, P_r_PJ) — A_PJ rotates J-coordinates into parent coordinates — and
the body frame B is J moved by the joint (see ``multibody.model.joints``).  The spatial_v2 tree
transform is ``Xtree = plux(A_PJᵀ, P_r_PJ)``.

Mass properties are per body: ``mass``, ``com`` (body coordinates) and ``inertia_com`` (about the
centre of mass, body coordinates).  Arrays of dtype object holding SymPy expressions make a
*symbolic* model: symbolic derivations read it; numeric kernels ask for ``model.subs(...)``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from .. import _checks
from .constraints import Constraint
from .inertia import inertia_fault
from .joints import NQ, NV, JointType, motion_subspace, neutral_configuration, spec


@dataclass(frozen=True)
class Frame:
    """A named frame fixed in a body: pose (rotation A_BF, translation B_r_BF) in body coordinates."""
    name: str
    body: int
    rotation: np.ndarray
    translation: np.ndarray


@dataclass(frozen=True, eq=False)
class Keyframe:
    """A named state saved with a model (MJCF ``<keyframe><key>``): ``model.keyframes["home"]``.

    ``q`` (nq,) and ``qd`` (nv,) are in this library's conventions (for a model read from MJCF, q
    is MuJoCo's qpos; a free joint's qd is [ω; v] in body coordinates, converted from MuJoCo's
    qvel as :func:`multibody.mjcf.from_mujoco_state` does).  ``act`` (MuJoCo's actuator
    activations) and ``ctrl`` (one control per MuJoCo actuator, in MuJoCo's actuator order) are kept
    as the file wrote them.  Mocap poses (``mpos``, ``mquat``) are not kept: mocap bodies are
    frames of the fixed base here.
    """
    name: str
    time: float
    q: np.ndarray
    qd: np.ndarray
    act: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ctrl: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self):
        for k in ("q", "qd", "act", "ctrl"):
            a = np.asarray(getattr(self, k), dtype=float)
            if a.ndim != 1 or not np.all(np.isfinite(a)):
                raise ValueError(f"keyframe {self.name!r}: {k}: expected a vector of finite numbers, got {a!r}"[:300])
            object.__setattr__(self, k, _readonly(a))
        object.__setattr__(self, "time", float(self.time))


class Keyframes(Mapping):
    """A model's keyframes by name, in file order (read-only): ``model.keyframes["home"]``.

    An unknown name is a ``KeyError`` naming the keyframes there are (close matches first);
    an unnamed MuJoCo key is reached by its position, ``model.keyframes[0]``.
    """

    def __init__(self, keys=()):
        self._list = tuple(keys)
        self._by_name = {k.name: k for k in self._list if getattr(k, "name", None)}

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not -len(self._list) <= key < len(self._list):
                raise KeyError(f"keyframe index {int(key)} out of range: the model has {len(self._list)} keyframe(s)")
            return self._list[key]
        if key in self._by_name:
            return self._by_name[key]
        raise KeyError(f"no keyframe named {key!r}; " + (_known("keyframes", key, list(self._by_name))
                                                        if self._list else "the model has no keyframes"))

    @property
    def records(self) -> tuple:
        """Every keyframe in file order, named or not."""
        return self._list

    def __iter__(self):
        return iter(self._by_name)

    def __len__(self):
        return len(self._by_name)

    def __repr__(self):
        return f"Keyframes({[k.name for k in self._list]})"


def _known(kind, name, names, n=12):
    """'KIND are [...]' with close matches to ``name`` first (difflib), for an unknown-name message."""
    import difflib  # only for an error message: kept off the import path (start-up, issue 37)

    close = difflib.get_close_matches(str(name), [str(x) for x in names], n=5, cutoff=0.5)
    rest = [x for x in names if x not in close]
    shown = close + rest[:max(0, n - len(close))]
    more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    lead = f"close matches {close}; " if close else ""
    return f"{lead}{kind} are {shown}{more}"


@dataclass(frozen=True)
class Geometry:
    """A visual or collision shape fixed in a body (kept for viewers and contact)."""
    body: int
    kind: str                    # "box" | "cylinder" | "sphere" | "capsule" | "mesh" | "line" | "solid" | "tiles"
    size: tuple = ()             # box: (sx, sy, sz); cylinder/capsule: (radius, length); sphere: (radius,);
    #                              line: (width in pixels,); tiles: (half-width x, half-width y, tile edge)
    rotation: Any = None         # A_BG (3×3)
    translation: Any = None      # B_r_BG
    mesh: str | None = None      # resolved mesh file path
    scale: tuple = (1.0, 1.0, 1.0)
    role: str = "visual"         # "visual" | "collision"
    rgba: tuple | None = None
    name: str | None = None
    vertices: Any = None         # line: (n, 3) polyline; solid: (n, 3) vertices (geometry coordinates)
    faces: Any = None            # solid: polygons as tuples of vertex indices (spatial_v2 vertex/face solids)


@dataclass(frozen=True)
class Mimic:
    """Gear constraint q[joint] = multiplier · q[mimicked] + offset (URDF <mimic>)."""
    joint: int
    mimicked: int
    multiplier: float = 1.0
    offset: float = 0.0


def mimic_cycle(pairs) -> list[int]:
    """The joints of a mimic cycle, in order (each mimics the next, the last the first), or ``[]``.

    ``pairs`` are (joint, mimicked) indices, each joint mimicking at most one other. A joint geared
    to itself through others has no consistent position, so the builder and the URDF loader refuse
    a cycle — this is the one place that finds it.

    >>> mimic_cycle([(0, 1), (1, 2), (2, 0)]), mimic_cycle([(0, 1), (2, 1)])
    ([0, 1, 2], [])
    """
    leader = dict(pairs)
    for start in leader:
        seen, k = [start], leader[start]
        while k in leader and k not in seen:
            seen.append(k)
            k = leader[k]
        if k == start:
            return seen
    return []


def _readonly(a):
    a = np.array(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Model:
    """An immutable kinematic tree.

    Build one with :class:`multibody.ModelBuilder` or a constructor in :mod:`multibody.models`.

    Example
    -------
    >>> import multibody as mb
    >>> model = mb.models.planar(2)
    >>> model.nb, model.nq, model.nv
    (2, 2, 2)
    """

    parent: np.ndarray
    jtype: np.ndarray
    jaxis: np.ndarray
    jpitch: np.ndarray
    tree_rotation: np.ndarray
    tree_translation: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia_com: np.ndarray
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    body_names: tuple[str, ...] = ()
    joint_names: tuple[str, ...] = ()
    name: str = "model"
    frames: tuple[Frame, ...] = ()
    geometries: tuple[Geometry, ...] = ()
    # collision geoms and their candidate pairs (model/geometry.py Geoms), as the MJCF loader reads
    # them; None: made from the collision `geometries` on first use (multibody.model.geometry.model_geoms)
    geoms: Any = None
    mimics: tuple[Mimic, ...] = ()
    q_lower: np.ndarray | None = None
    q_upper: np.ndarray | None = None
    velocity_limit: np.ndarray | None = None
    effort_limit: np.ndarray | None = None
    damping: np.ndarray | None = None
    friction: np.ndarray | None = None
    armature: np.ndarray | None = None   # (nv,) rotor inertia added to each dof's diagonal of M (MJCF armature)
    planar: bool = False
    camera: Any = None   # how a viewer looks at the model (multibody.view.Camera; spatial_v2 model.camera)
    # spatial_v2 model.gamma_q: None or a callable gamma_q(model, q, qd) -> (qn, qdn, G, gs) describing
    # constraints q = γ(y) among the joint variables (gears, loops); read by multibody.fd_gq (FDgq).
    gamma_q: Any = None
    # (nb,) MuJoCo's gravity compensation per body: a force gravcomp_i · m_i · (−g) at the body's
    # centre of mass (multibody.gravity_compensation_forces gives it as f_ext); zeros: none.
    gravcomp: np.ndarray | None = None
    # constraints on the tree read from a file (MJCF equalities: joint couplings, loop closures):
    # descriptions of model/constraints.py — e.g. multibody.JointCoupling, PointConstraint, WeldConstraint —
    # solved together with a run's own by dynamics.constraints.with_model_constraints.
    constraints: tuple = ()
    # fixed tendons with a spring and a damper (MJCF <tendon><fixed stiffness damping>): a passive
    # generalized force (multibody.model.tendons.FixedTendon; simulation.limits.tendon_forces sums them)
    tendons: tuple = ()
    # (nq,) the configuration a file starts from (MJCF: MuJoCo's qpos0); None: neutral(). Read it
    # as model.q_default (always an array) or model.default_state().
    qpos0: np.ndarray | None = None
    # named states saved with the model (MJCF <keyframe>): Keyframes of Keyframe records
    keyframes: Keyframes = field(default_factory=Keyframes)
    # joint springs (MJCF stiffness, springref): τ = −stiffness ⊙ (q − springref) on the variables of
    # one-to-one joints (nq = nv: revolute, prismatic, …); stiffness (nv), springref (nq); None: none
    stiffness: np.ndarray | None = None
    springref: np.ndarray | None = None
    # MuJoCo's softness of each velocity variable's position limit (MJCF solreflimit, solimplimit, margin):
    # (nv, 8) rows (timeconst, dampratio, dmin, dmax, width, midpoint, power, margin), solref's two as MuJoCo
    # reads them (negative: direct stiffness and damping), read by simulate(..., limits="soft"); None:
    # MuJoCo's defaults on every variable (simulation/limits.py LIMIT_SOFTNESS)
    limit_softness: np.ndarray | None = None
    # joint actuators driven by a run's ctrl (MJCF <actuator>): a multibody.model.actuators.Actuators, or None
    actuators: Any = None
    # sensors read from a file (MJCF <sensor>): a tuple of multibody.model.sensors.Sensor records
    # (name, type, dim, address, what each reads); computed by mb.sensors and traj.sensordata
    sensors: tuple = ()
    # the fixed-step scheme the file steps with (MJCF <option integrator>: MuJoCo's Euler, implicit and
    # implicitfast, whose joint damping is implicit → "semi_implicit"; RK4 → "rk4"): simulate's integrator
    # when none is given, so a file whose damping only an implicit step follows runs as it does in MuJoCo;
    # None: simulate's own default (rk4)
    integrator: str | None = None
    # the step the file steps with (MJCF <option timestep>, MuJoCo's 0.002 s where the file sets none), s:
    # simulate's dt when none is given, so a file runs at its own step as in MuJoCo; None: simulate's own (1 ms)
    timestep: float | None = None
    # True for models read from files (URDF, MJCF): an inertia that no rigid body has is kept as the
    # file wrote it (the reader warned, naming the link, see model/inertia.py) instead of refused.
    _inertia_as_written: bool = field(default=False, repr=False)

    def __post_init__(self):
        nb = len(self.parent)
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731  (frozen dataclass)
        put("nb", nb)
        put("parent", _readonly(np.asarray(self.parent, dtype=np.int64)))
        put("jtype", _readonly(np.asarray(self.jtype, dtype=np.int64)))
        symbolic = any(np.asarray(getattr(self, k)).dtype == object for k in
                       ("jaxis", "jpitch", "tree_rotation", "tree_translation", "mass", "com",
                        "inertia_com", "gravity"))
        dt = object if symbolic else float
        for k, shape in (("jaxis", (nb, 3)), ("jpitch", (nb,)), ("tree_rotation", (nb, 3, 3)),
                         ("tree_translation", (nb, 3)), ("mass", (nb,)), ("com", (nb, 3)),
                         ("inertia_com", (nb, 3, 3)), ("gravity", (3,))):
            a = np.asarray(getattr(self, k), dtype=dt)
            if a.shape != shape:
                raise ValueError(f"{k}: expected shape {shape}, got {a.shape}")
            put(k, _readonly(a))
        if not self.body_names:
            put("body_names", tuple(f"body{i}" for i in range(nb)))
        if not self.joint_names:
            put("joint_names", tuple(f"joint{i}" for i in range(nb)))
        if len(self.body_names) != nb or len(self.joint_names) != nb:
            raise ValueError(f"body_names/joint_names: expected {nb} names each")
        put("_symbolic", symbolic)
        _validate_tree(self.parent, self.jtype)
        if not symbolic:
            _validate_numbers_once(self)
        nq_j = np.array([NQ[JointType(t)] for t in self.jtype], dtype=np.int64)
        nv_j = np.array([NV[JointType(t)] for t in self.jtype], dtype=np.int64)
        put("nq_joint", _readonly(nq_j))
        put("nv_joint", _readonly(nv_j))
        put("q_start", _readonly(np.cumsum(nq_j) - nq_j))  # first q index of each joint
        put("v_start", _readonly(np.cumsum(nv_j) - nv_j))
        nv = int(nv_j.sum())
        put("nq", int(nq_j.sum()))
        put("nv", nv)
        put("_tails", {"q": (self.nq,), "qd": (nv,), "v": (nv,), "qdd": (nv,), "tau": (nv,), "f_ext": (nb, 6)})
        for k, default in (("q_lower", -np.inf), ("q_upper", np.inf)):
            a = getattr(self, k)
            put(k, _readonly(np.full(int(nq_j.sum()), default) if a is None else np.asarray(a, float)))
        for k, default in (("velocity_limit", np.inf), ("effort_limit", np.inf), ("damping", 0.0),
                           ("friction", 0.0), ("armature", 0.0)):
            a = getattr(self, k)
            a = np.full(nv, default) if a is None else np.asarray(a, float)
            if a.shape != (nv,):
                raise ValueError(f"{k}: expected shape ({nv},) (one value per velocity variable), got {a.shape}")
            put(k, _readonly(a))
        for k in ("armature", "damping", "friction"):
            a = getattr(self, k)
            if not np.all(np.isfinite(a)) or np.any(a < 0):
                raise ValueError(f"{k}: expected finite values ≥ 0, got {a}")
        for k in ("velocity_limit", "effort_limit"):
            if not np.all(getattr(self, k) >= 0):  # NaN fails too; inf means no limit
                raise ValueError(f"{k}: expected values ≥ 0 (inf: no limit), got {getattr(self, k)}")
        if self.q_lower.shape != (self.nq,) or self.q_upper.shape != (self.nq,):
            raise ValueError(f"q_lower, q_upper: expected shape ({self.nq},) each, got {self.q_lower.shape}, "
                             f"{self.q_upper.shape}")
        bad = np.flatnonzero(~(self.q_lower <= self.q_upper))  # NaN fails too
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"q_lower, q_upper: position variable {i} has q_lower {self.q_lower[i]} > "
                             f"q_upper {self.q_upper[i]} (or NaN)")
        gc = np.zeros(nb) if self.gravcomp is None else np.asarray(self.gravcomp, dtype=float)
        if gc.shape != (nb,) or not np.all(np.isfinite(gc)):
            raise ValueError(f"gravcomp: expected {nb} finite numbers (one per body), got {self.gravcomp!r}"[:300])
        put("gravcomp", _readonly(gc))
        k = np.zeros(nv) if self.stiffness is None else np.asarray(self.stiffness, dtype=float)
        ref = np.zeros(self.nq) if self.springref is None else np.asarray(self.springref, dtype=float)
        if not np.any(k):   # no springs: the arrays of a model this one was replaced from carry nothing
            k = np.zeros(nv) if k.shape != (nv,) else k
            ref = np.zeros(self.nq) if ref.shape != (self.nq,) else ref
        if k.shape != (nv,) or ref.shape != (self.nq,) or not np.all(np.isfinite(k)) or not np.all(np.isfinite(ref)):
            raise ValueError(f"stiffness, springref: expected ({nv},) and ({self.nq},) finite numbers, "
                             f"got shapes {k.shape}, {ref.shape}")
        for j in np.flatnonzero(nq_j != nv_j):
            if np.any(k[self.v_start[j]:self.v_start[j] + nv_j[j]]):
                raise ValueError(f"stiffness: joint {self.joint_names[j]!r} has nq ≠ nv (a ball or free joint); "
                                 "a spring is kept on revolute, prismatic and other one-to-one joints only")
        put("stiffness", _readonly(k))
        put("springref", _readonly(ref))
        if self.limit_softness is not None:
            soft = np.asarray(self.limit_softness, dtype=float)
            if soft.shape != (nv, 8) or not np.all(np.isfinite(soft)):
                raise ValueError(f"limit_softness: expected ({nv}, 8) finite numbers (timeconst, dampratio, dmin, "
                                 f"dmax, width, midpoint, power, margin per velocity variable), got shape {soft.shape}")
            put("limit_softness", _readonly(soft))
        acts = self.actuators
        if acts is not None and (len(acts.dof_forcerange) != nv or np.any(acts.terms[:, 2] >= nv)
                                 or np.any(acts.terms[:, 1] >= self.nq)):
            raise ValueError(f"actuators: their joint indices or dof_forcerange ({len(acts.dof_forcerange)} rows) do "
                             f"not fit this model (nq {self.nq}, nv {nv}); pass actuators=None or rebuild them")
        if not isinstance(self.sensors, tuple) or any(
                not hasattr(x, "bodies") or any(b >= nb or b < -1 for b in x.bodies()) for x in self.sensors):
            raise ValueError("sensors: expected a tuple of multibody.model.sensors.Sensor records on this model's "
                             f"bodies (−1 … {nb - 1})")
        cons = self.constraints
        if not isinstance(cons, tuple):
            raise TypeError(f"constraints: expected a tuple of constraint objects, got {type(cons).__name__}")
        for k, c in enumerate(cons):
            if not isinstance(c, Constraint):
                raise TypeError(f"constraints[{k}]: expected a constraint description (multibody.model.constraints, "
                                f"e.g. multibody.JointCoupling), got {type(c).__name__}")
        if not isinstance(self.tendons, tuple) or not all(callable(getattr(t, "forces", None)) for t in self.tendons):
            raise TypeError(f"tendons: expected a tuple of tendon objects with forces(model, q, v) (e.g. "
                            f"multibody.model.tendons.FixedTendon), got {self.tendons!r}"[:300])
        if self.integrator is not None and not isinstance(self.integrator, str):
            raise TypeError(f"integrator: expected None or a fixed-step integrator's name (e.g. 'rk4', "
                            f"'semi_implicit'), got {type(self.integrator).__name__}")
        if self.timestep is not None and not (isinstance(self.timestep, (int, float, np.floating))
                                              and not isinstance(self.timestep, bool)
                                              and 0.0 < float(self.timestep) < float("inf")):
            raise ValueError(f"timestep: expected None or a positive finite step in seconds, got {self.timestep!r}")
        if self.qpos0 is not None:
            q0 = np.asarray(self.qpos0, dtype=float)
            if q0.shape != (self.nq,) or not np.all(np.isfinite(q0)):
                raise ValueError(f"qpos0: expected {self.nq} finite numbers (one per position variable), "
                                 f"got {self.qpos0!r}"[:300])
            put("qpos0", _readonly(q0))
        if not isinstance(self.keyframes, Keyframes):
            keys = self.keyframes
            put("keyframes", Keyframes(keys.values() if isinstance(keys, Mapping) else keys))
        for k in self.keyframes._list:
            if not isinstance(k, Keyframe) or k.q.shape != (self.nq,) or k.qd.shape != (nv,):
                raise ValueError(f"keyframes: expected Keyframe records with q ({self.nq},) and qd ({nv},), got "
                                 f"{k!r}"[:300])
        if self.geoms is not None and not callable(getattr(self.geoms, "with_ground", None)):
            raise TypeError(f"geoms: expected None or a multibody.model.geometry.Geoms, got {type(self.geoms).__name__}")
        if not symbolic:
            put("_c", self._build_c())

    def __getstate__(self):
        # the C model holds C memory and is not picklable: send a flag, rebuild it on arrival
        state = dict(self.__dict__)
        state["_c"] = state.get("_c") is not None
        return state

    def __setstate__(self, state):
        state = dict(state)
        rebuild = state.pop("_c", False)
        self.__dict__.update(state)
        if rebuild:
            self.__dict__["_c"] = self._build_c()

    def __getattr__(self, name):
        # only reached when normal lookup fails: a symbolic model has no C model
        if name == "_c":
            self._require_numeric()
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- sizes (plain ints, set once: the boundary reads them on every call) -----------------
    @property
    def NB(self) -> int:  # spatial_v2 spelling
        return self.nb

    @property
    def is_symbolic(self) -> bool:
        return self._symbolic

    # ---- derived quantities (spatial_v2 view) ------------------------------------------------
    @cached_property
    def Xtree(self) -> np.ndarray:
        """spatial_v2 tree transforms (nb, 6, 6): parent coordinates → joint frame coordinates."""
        from ..spatial import plux
        return _readonly(np.array([plux(R.T, p) for R, p in zip(self.tree_rotation, self.tree_translation)]))

    @cached_property
    def I(self) -> np.ndarray:  # noqa: E743  (the book's name)
        """Spatial inertias (nb, 6, 6) about each body origin, in body coordinates (mcI)."""
        return _readonly(np.array([_spatial_inertia(m, c, Ic) for m, c, Ic in
                                   zip(self.mass, self.com, self.inertia_com)]))

    @cached_property
    def S(self) -> np.ndarray:
        """Motion subspace: row k is the column of S for velocity variable k (nv, 6), body coordinates."""
        rows = [motion_subspace(JointType(t), a, h) for t, a, h in zip(self.jtype, self.jaxis, self.jpitch)]
        return _readonly(np.concatenate(rows, axis=0) if rows else np.zeros((0, 6)))

    @cached_property
    def dof_body(self) -> np.ndarray:
        """Body that owns each velocity variable (nv,)."""
        return _readonly(np.repeat(np.arange(self.nb), self.nv_joint))

    @cached_property
    def dof_parent(self) -> np.ndarray:
        """Expanded parent array over velocity variables (RBDA table 6.4, expandLambda)."""
        lam = np.empty(self.nv, dtype=np.int64)
        last = np.full(self.nb, -1, dtype=np.int64)  # last variable of body i or its nearest ancestor
        for i in range(self.nb):
            par, vs, nj = int(self.parent[i]), int(self.v_start[i]), int(self.nv_joint[i])
            prev = -1 if par < 0 else last[par]
            for j in range(nj):
                lam[vs + j] = prev if j == 0 else vs + j - 1
            last[i] = vs + nj - 1 if nj > 0 else prev
        return _readonly(lam)

    def neutral(self) -> np.ndarray:
        """The neutral configuration (nq,): zero, with identity quaternions, inside the limits.

        Each coordinate that is not part of a quaternion is zero clipped into its position limits
        (:func:`enforced_position_limits`: a variable with equal bounds, URDF's "no limit", is not
        limited).  Pinocchio's ``neutral`` is zero whatever the limits; here a joint whose range
        excludes zero (the Panda's fourth joint, −3.07 … −0.07 rad) starts at its nearest bound.

        Example
        -------
        >>> import dataclasses, multibody as mb
        >>> m = dataclasses.replace(mb.models.planar(2), q_lower=[0.5, -1.0], q_upper=[1.0, 1.0])
        >>> m.neutral().tolist()
        [0.5, 0.0]
        """
        return self._neutral.copy()

    @cached_property
    def _neutral(self) -> np.ndarray:
        """:meth:`neutral`, computed once (the model is immutable; simulate asks for it per call)."""
        parts = [neutral_configuration(JointType(t)) for t in self.jtype]
        q = np.concatenate(parts) if parts else np.zeros(0)
        lower, upper = enforced_position_limits(self)
        plain = np.ones(self.nq, dtype=bool)
        for i in range(self.nb):
            o = spec(self.jtype[i]).quat
            if o >= 0:
                plain[self.q_start[i] + o:self.q_start[i] + o + 4] = False
        q[plain] = np.clip(q[plain], lower[plain], upper[plain])
        return _readonly(q)

    @property
    def q_default(self) -> np.ndarray:
        """The configuration the model starts from (nq,): the file's (MJCF ``qpos0``), else :meth:`neutral`.

        Example
        -------
        >>> import multibody as mb
        >>> m = mb.load_mjcf('<mujoco><worldbody><body pos="0 0 1.5"><freejoint/><geom size="0.1"/>'
        ...                  '</body></worldbody></mujoco>')
        >>> m.q_default.tolist()            # MuJoCo's qpos0: the body where the file put it
        [0.0, 0.0, 1.5, 1.0, 0.0, 0.0, 0.0]
        """
        return self.neutral() if self.qpos0 is None else self.qpos0.copy()

    def default_state(self, keyframe=None) -> tuple[np.ndarray, np.ndarray]:
        """``(q, qd)`` to start from: :attr:`q_default` at rest, or a keyframe's (by name or index).

        Example
        -------
        >>> import multibody as mb
        >>> m = mb.load_mjcf('<mujoco><worldbody><body><joint name="a" axis="0 1 0"/><geom size="0.1"/>'
        ...                  '</body></worldbody><keyframe><key name="home" qpos="0.5" qvel="-1"/></keyframe>'
        ...                  '</mujoco>')
        >>> [x.tolist() for x in m.default_state()], [x.tolist() for x in m.default_state("home")]
        ([[0.0], [0.0]], [[0.5], [-1.0]])
        """
        if keyframe is None:
            return self.q_default, np.zeros(self.nv)
        if not isinstance(keyframe, (str, int, np.integer)) or isinstance(keyframe, bool):
            raise TypeError(f"keyframe: expected a keyframe name or index, got {type(keyframe).__name__}")
        try:
            k = self.keyframes[keyframe]
        except KeyError as e:
            raise ValueError(f"keyframe: {e.args[0]}") from None
        return k.q.copy(), k.qd.copy()

    def _build_c(self):
        """The constant C model (multibody/csrc/model/model.h), built once and owned by this Model.

        A plain instance attribute ``_c`` (set in ``__post_init__`` for numeric models), so the
        single-state fast path reads it at the cost of a dict lookup."""
        from ..core import CModel
        I = self.I  # noqa: E741  (the book's name)
        inertia10 = np.column_stack([I[:, 5, 5], I[:, 2, 4], I[:, 0, 5], I[:, 1, 3], I[:, 0, 0], I[:, 0, 1],
                                     I[:, 0, 2], I[:, 1, 1], I[:, 1, 2], I[:, 2, 2]]) if self.nb else np.zeros((0, 10))
        a_grav = np.concatenate([np.zeros(3), self.gravity]).astype(float)
        return CModel(self.parent, self.jtype, self.q_start, self.nq_joint, self.v_start, self.nv_joint,
                      self.tree_rotation, self.tree_translation, self.jaxis, self.jpitch, inertia10,
                      np.ascontiguousarray(self.S, dtype=float), self.armature, self.dof_parent, a_grav,
                      tuple(str(n) for n in self.body_names) if self.body_names else None)

    # ---- names -------------------------------------------------------------------------------
    def body_index(self, body) -> int:
        """Index of a body given by index (−1: the fixed base) or name.

        An unknown name or an index out of range is a ``ValueError``; anything but an int or a
        str a ``TypeError`` (multibody._checks); a frame's name (a URDF link welded to its parent,
        an MJCF site) says so and points to the frame functions."""
        if isinstance(body, str) and body not in self.body_names:
            f = next((f for f in self.frames if f.name == body), None)
            if f is not None:
                on = "the fixed base" if f.body < 0 else f"body {self.body_names[f.body]!r}"
                raise ValueError(f"body: no body named {body!r}; {body!r} is a frame fixed on {on}: use "
                                 f"mb.frame_placement, frame_velocity, frame_acceleration or frame_jacobian")
        return _checks.name_index("body", body, self.body_names, kind="body", allow_base=True)

    def joint_index(self, joint) -> int:
        """Index of a joint given by index or name (the joint of body i has index i)."""
        return _checks.name_index("joint", joint, self.joint_names, kind="joint")

    def frame(self, name) -> Frame:
        """The frame named ``name``: one of :attr:`frames` (URDF links and joints, MJCF bodies and
        sites), else a body's own frame (identity placement in the body).

        An unknown name is a ``ValueError`` listing close matches.

        Example
        -------
        >>> import multibody as mb
        >>> mb.models.planar(2).frame("link2").body
        1
        >>> mb.models.planar(2).frame("lnk2")
        Traceback (most recent call last):
        ...
        ValueError: frame: no frame or body named 'lnk2'; close matches ['link2', 'link1']; names are ['link2', 'link1']
        """
        if not isinstance(name, str):
            raise TypeError(f"frame: expected a frame name, got {type(name).__name__}")
        for f in self.frames:
            if f.name == name:
                return f
        if name in self.body_names:
            return Frame(name, self.body_names.index(name), np.eye(3), np.zeros(3))
        names = list(dict.fromkeys([f.name for f in self.frames] + list(self.body_names)))
        raise ValueError(f"frame: no frame or body named {name!r}; {_known('names', name, names)}")

    # ---- symbolic ------------------------------------------------------------------------------
    def _require_numeric(self):
        if self._symbolic:
            where = {}
            for k in ("mass", "com", "inertia_com", "tree_translation", "tree_rotation", "jpitch", "jaxis", "gravity"):
                for idx, e in np.ndenumerate(np.asarray(getattr(self, k), dtype=object)):
                    for s in getattr(e, "free_symbols", ()):
                        body = f" of body {self.body_names[idx[0]]!r}" if k != "gravity" else ""
                        where.setdefault(str(s), f"{k}{body}")
            named = ", ".join(f"{s} ({w})" for s, w in sorted(where.items())[:8]) + (" …" if len(where) > 8 else "")
            raise ValueError("model has symbolic parameters; call model.subs({symbol: value, ...}) for numeric "
                             f"algorithms (model {self.name!r}: {named})")

    def subs(self, values: dict) -> "Model":
        """Numeric model from a symbolic one by substituting parameter values."""
        def num(a):
            a = np.asarray(a)
            if a.dtype != object:
                return a
            out = np.empty(a.shape)
            for idx, e in np.ndenumerate(a):
                v = e.subs(values) if hasattr(e, "subs") else e
                try:
                    out[idx] = float(v)
                except TypeError:
                    raise ValueError(f"subs: parameter(s) {sorted(map(str, v.free_symbols))} have no value") from None
            return out
        kw = {k: num(getattr(self, k)) for k in ("jaxis", "jpitch", "tree_rotation", "tree_translation",
                                                 "mass", "com", "inertia_com", "gravity")}
        return replace(self, **kw)

    def with_gravity(self, gravity) -> "Model":
        """A copy with another gravity vector."""
        return replace(self, gravity=np.asarray(gravity, dtype=float))

    def __repr__(self):
        passive = "".join(f", {k} {n}" for k, n, _lo, _hi in passive_terms(self))
        return (f"Model({self.name!r}, nb={self.nb}, nq={self.nq}, nv={self.nv}"
                f"{', symbolic' if self._symbolic else ''}{passive})")


_checks._MODEL.append(Model)   # _checks.model's type, handed down (_checks imports nothing of the package)

def velocity_names(model):
    """A name per velocity variable: its joint's, with the variable's index for joints of several."""
    return _variable_names(model, model.nv_joint)


def position_names(model):
    """A name per position variable (q): its joint's, with the variable's index for joints of several."""
    return _variable_names(model, model.nq_joint)


def _variable_names(model, counts):
    names = []
    for j in range(model.nb):
        n = int(counts[j])
        names += [model.joint_names[j]] if n == 1 else [f"{model.joint_names[j]}[{a}]" for a in range(n)]
    return names


def enforced_position_limits(model):
    """(lower, upper) (nq,) of the position limits ``mb.simulate`` enforces: the model's, except a
    variable whose two bounds are equal — URDF's default lower = upper = 0 where a file omits them
    (``<limit effort velocity/>`` on a wheel or a knee) — which is not limited at all, as MuJoCo
    reads it ("equal lower and upper limits, limit ignored").  The Model keeps the file's numbers.

    >>> import dataclasses, multibody as mb
    >>> m = dataclasses.replace(mb.models.planar(2), q_lower=[0.0, -1.0], q_upper=[0.0, 1.0])
    >>> [a.tolist() for a in enforced_position_limits(m)]
    [[-inf, -1.0], [inf, 1.0]]
    """
    lower, upper = np.array(model.q_lower, dtype=float), np.array(model.q_upper, dtype=float)
    equal = lower == upper
    lower[equal], upper[equal] = -np.inf, np.inf
    return lower, upper


def passive_terms(model):
    """(what, how many, smallest, largest) of the joint terms ``mb.simulate`` applies from the model:
    position limits (variables with a finite bound), damping, friction, armature (non-zero entries).

    >>> import dataclasses, multibody as mb
    >>> m = dataclasses.replace(mb.models.planar(2), damping=[0.1, 0.0], q_lower=[-1.0, -2.0])
    >>> m
    Model('planar(2)', nb=2, nq=2, nv=2, limits 2, damping 1)
    """
    out = []
    lower, upper = enforced_position_limits(model)
    bounded = np.isfinite(lower) | np.isfinite(upper)
    if bounded.any():
        out.append(("limits", int(bounded.sum()), None, None))
    for k in ("damping", "friction", "armature"):
        a = np.asarray(getattr(model, k), float)
        if np.any(a != 0):
            nz = a[a != 0]
            out.append((k, int(nz.size), float(nz.min()), float(nz.max())))
    return out


def _spatial_inertia(m, c, Ic):
    """mcI: 6×6 spatial inertia about the body origin from mass, CoM and inertia about the CoM."""
    C = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]], dtype=float)
    top = np.asarray(Ic, float) + m * C @ C.T
    return np.block([[top, m * C], [m * C.T, m * np.eye(3)]])


def _validate_tree(parent, jtype):
    for i, p in enumerate(parent):
        if not -1 <= p < i:
            raise ValueError(f"parent: body {i} has parent {p}; expected −1 (base) or an earlier body "
                             f"0…{i - 1} (bodies are numbered parents-first; a later parent would form a "
                             f"cycle or point forward)")
    valid = {int(t) for t in JointType}
    for i, t in enumerate(jtype):
        if int(t) not in valid:
            raise ValueError(f"jtype: body {i} has unknown joint type code {t}; expected one of "
                             f"{ {t.name: int(t) for t in JointType} }")


_VALIDATED: dict = {}   # digest of what _validate_numbers reads -> True, for the numbers that passed


def _validate_numbers_once(m: Model):
    """:func:`_validate_numbers`, skipped for numbers that already passed it: a pure function of the
    arrays, joint types and ``_inertia_as_written`` (the names only word its errors), so equal
    numbers pass again; ``dataclasses.replace`` of a valid model (semi_implicit's armature, each
    run's) revalidated every inertia otherwise (issue 33).  Keyed by a digest, bounded."""
    import hashlib
    h = hashlib.blake2b(digest_size=20)
    h.update(b"1" if m._inertia_as_written else b"0")
    for a in (m.jtype, m.jaxis, m.jpitch, m.tree_rotation, m.tree_translation, m.mass, m.com, m.inertia_com,
              m.gravity):
        h.update(repr(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    key = h.digest()
    if key in _VALIDATED:
        return
    _validate_numbers(m)
    if len(_VALIDATED) >= 1024:
        _VALIDATED.pop(next(iter(_VALIDATED)))
    _VALIDATED[key] = True


def _validate_numbers(m: Model):
    for k in ("jaxis", "jpitch", "tree_rotation", "tree_translation", "mass", "com", "inertia_com", "gravity"):
        if not np.all(np.isfinite(getattr(m, k))):
            raise ValueError(f"{k}: contains NaN or inf")
    for i in range(m.nb):
        name = m.body_names[i] if m.body_names else i
        if not m.mass[i] >= 0:
            raise ValueError(f"mass: body {name!r} has mass {m.mass[i]}; expected ≥ 0")
        if 0 < m.mass[i] < np.finfo(float).tiny:   # 1/m overflows: the dynamics would say "too large"
            raise ValueError(f"mass: body {name!r} has mass {float(m.mass[i])!r}, below the smallest normal "
                             f"double; expected 0 or a mass the dynamics can divide by")
        Ic = m.inertia_com[i]
        if not np.allclose(Ic, Ic.T, atol=1e-9 * max(1.0, np.abs(Ic).max())):
            raise ValueError(f"inertia: body {name!r} has a non-symmetric inertia matrix")
        if not m._inertia_as_written:  # a file's impossible inertia was reported (warned) by its reader
            fault = inertia_fault(Ic, triangle=False)
            if fault:
                raise ValueError(f"inertia: body {name!r} {fault}")
        R = m.tree_rotation[i]
        if not np.allclose(R @ R.T, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
            raise ValueError(f"tree_rotation: body {name!r} rotation is not a proper orthonormal matrix")
        if any(op in ("rot", "slide", "screw") for op, _ in spec(m.jtype[i]).pose):  # the joint moves on its axis
            if abs(np.linalg.norm(m.jaxis[i]) - 1) > 1e-9:
                raise ValueError(f"jaxis: body {name!r} joint axis must be a unit vector")
