"""ModelBuilder: the human side of Model — bodies by name, readable errors."""
from __future__ import annotations

import math
import sys

import numpy as np

from .. import _checks
from .inertia import check_inertia
from .joints import parse_joint
from .model import Frame, Geometry, Mimic, Model, mimic_cycle


def _is_symbolic(x) -> bool:
    """True when ``x`` (a number, or nested sequences / arrays of them) holds a SymPy or SymEngine
    expression with a free symbol: a *symbolic parameter*, kept as it is for the derivations."""
    if isinstance(x, (list, tuple, np.ndarray)):
        return any(_is_symbolic(v) for v in np.asarray(x, dtype=object).ravel())
    mod = type(x).__module__ or ""
    return mod.startswith(("sympy", "symengine")) and bool(getattr(x, "free_symbols", ()))


def _symbolic(name, x, shape):
    """``x`` as an object array of SymPy entries (numbers exact where they are integral), of ``shape``."""
    from .tree import sympy_entry

    a = np.asarray(x, dtype=object)
    if shape == (3, 3) and a.shape == (3,):
        a = np.diag(a).astype(object)
    if a.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {a.shape}")
    out = np.empty(shape, dtype=object)
    for idx, v in np.ndenumerate(a):
        try:
            e = sympy_entry(v)
        except Exception:
            raise TypeError(f"{name}: expected numbers or SymPy expressions, got {v!r}") from None
        if e.is_number and not (e.is_real and e.is_finite):
            raise ValueError(f"{name}: expected finite real entries, got {e}")
        out[idx] = e
    return out[()] if shape == () else out


def _at_random_values(name, a):
    """A symbolic array with its symbols at random values in [0.5, 1.5] (for the checks that are
    identities: a rotation stays a rotation for every value)."""
    import sympy as sp

    syms = sorted(set().union(*(sp.sympify(e).free_symbols for e in a.ravel())), key=str)
    vals = dict(zip(syms, np.random.default_rng(0).uniform(0.5, 1.5, len(syms))))
    return np.array([[float(sp.sympify(e).xreplace(vals)) for e in row] for row in a], dtype=float)


def _vec3(name, v):
    if _is_symbolic(v):
        return _symbolic(name, v, (3,))
    return _checks.array(name, v, (3,), what="3 finite numbers")


def _rotation(name, R):
    if R is None:
        return np.eye(3)
    if _is_symbolic(R):
        a = _symbolic(name, R, (3, 3))
        r = _at_random_values(name, a)
        if not np.allclose(r @ r.T, np.eye(3), atol=1e-8) or np.linalg.det(r) < 0:
            raise ValueError(f"{name}: not a proper rotation matrix for all values of its symbols (RRᵀ ≠ I or det < 0)")
        return a
    a = _checks.array(name, R, (3, 3), what="a finite 3×3 rotation matrix")
    if not np.allclose(a @ a.T, np.eye(3), atol=1e-8) or np.linalg.det(a) < 0:
        raise ValueError(f"{name}: not a proper rotation matrix (RRᵀ ≠ I or det < 0)")
    return a


def _name(what, name):
    if not isinstance(name, str):
        raise TypeError(f"{what}: expected a non-empty string, got {type(name).__name__}")
    if not name:
        raise ValueError(f"{what}: expected a non-empty string, got ''")
    return name


def _limits(body, q_lower, q_upper, velocity_limit, effort_limit, damping, friction):
    """The joint's limits and losses, each None (none) or one number; refused when meaningless."""
    def opt(what, v, **rule):
        return None if v is None else _checks.number(f"{what} of {body!r}", v, **rule)
    lo, hi = opt("q_lower", q_lower, allow_inf=True), opt("q_upper", q_upper, allow_inf=True)
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"q_lower, q_upper: body {body!r} has q_lower {lo!r} > q_upper {hi!r}")
    return (lo, hi, opt("velocity_limit", velocity_limit, nonneg=True, allow_inf=True),
            opt("effort_limit", effort_limit, nonneg=True, allow_inf=True),
            opt("damping", damping, nonneg=True), opt("friction", friction, nonneg=True))


def _mimics(given, joint_names, nv_joint):
    """Mimic records from (joint, mimicked, multiplier, offset): names resolved, one-variable
    joints only, each joint mimicking at most one other, and no cycle (a joint geared to itself
    through others has no consistent position)."""
    out, leader = [], {}
    for j, mj, mult, off in given:
        ji = _checks.name_index("mimic joint", j, joint_names, kind="joint")
        mi = _checks.name_index("mimic mimicked", mj, joint_names, kind="joint")
        for k in (ji, mi):
            if nv_joint[k] != 1:
                raise ValueError(f"mimic: joint {joint_names[k]!r} has {nv_joint[k]} velocity variables; "
                                 f"a mimic gears two one-variable joints")
        if ji == mi:
            raise ValueError(f"mimic: joint {joint_names[ji]!r} cannot mimic itself")
        if ji in leader:
            raise ValueError(f"mimic: joint {joint_names[ji]!r} already mimics {joint_names[leader[ji]]!r}")
        leader[ji] = mi
        out.append(Mimic(ji, mi, mult, off))
    cycle = mimic_cycle(leader.items())
    if cycle:
        raise ValueError("mimic: joints " + " → ".join(repr(joint_names[i]) for i in cycle + cycle[:1]) +
                         " mimic each other in a cycle")
    return out


class ModelBuilder:
    """Build a :class:`Model` body by body.

    Any number that describes the mechanism (gravity; a body's mass, CoM, inertia, joint pitch,
    joint placement ``joint_rotation``/``joint_translation``) may be a SymPy expression: the model
    is then *symbolic*, the derivations (``multibody.symbolic.derive``) keep those symbols, and the
    numeric kernels refuse it, naming the symbols, until ``model.subs({symbol: value})``.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> b = mb.ModelBuilder("pendulum")
    >>> b.add_body("link", parent=None, joint="revolute", axis=[0, 1, 0], mass=1.0,
    ...            com=[0, 0, -0.5], inertia=np.diag([0.1, 0.1, 0.01]))
    0
    >>> b.build().nv
    1
    >>> import sympy as sp
    >>> m, l = sp.symbols("m l")
    >>> s = mb.ModelBuilder("pendulum", gravity=(0, 0, -sp.Symbol("g")))
    >>> s.add_body("link", joint="revolute", axis=[0, 1, 0], mass=m, com=(0, 0, -l))
    0
    >>> from multibody.symbolic import derive
    >>> derive(s.build()).g[0]
    g*l*m*sin(q0)
    """

    def __init__(self, name: str = "model", gravity=(0.0, 0.0, -9.81)):
        self.name = _name("name", name)
        self.gravity = _vec3("gravity", gravity)      # symbolic entries stay symbolic (see the class)
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
        _name("name", name)
        if name in self.body_names:
            raise ValueError(f"name: a body named {name!r} already exists")
        joint_name = name + "_joint" if joint_name is None else _name("joint_name", joint_name)
        if joint_name in (b["joint_name"] for b in self._bodies):
            raise ValueError(f"joint_name: body {name!r}: a joint named {joint_name!r} already exists")
        p = self._parent_index(parent, name)
        jtype, ax = parse_joint(joint, axis)
        pitch = (_symbolic(f"pitch of {name!r}", pitch, ()) if _is_symbolic(pitch)
                 else _checks.number(f"pitch of {name!r}", pitch))
        if _is_symbolic(mass):
            m = _symbolic(f"mass of {name!r}", mass, ())
            if m.is_nonpositive:
                raise ValueError(f"mass: body {name!r} has mass {mass}, which is not positive")
        else:
            try:
                m = _checks.number("mass", mass, nonneg=True)
            except ValueError:
                m = math.nan
            if not m > 0 and not (m == 0 and allow_massless):
                raise ValueError(f"mass: body {name!r} has mass {mass}; expected a positive number or a SymPy expression")
            if 0 < m < sys.float_info.min:   # the dynamics divide by it: 1/m overflows to inf
                raise ValueError(f"mass: body {name!r} has mass {mass!r}, below the smallest normal double "
                                 f"({sys.float_info.min:.3g}); expected a mass the dynamics can divide by, or 0 "
                                 f"with allow_massless=True")
        limits = _limits(name, q_lower, q_upper, velocity_limit, effort_limit, damping, friction)
        c = _vec3(f"com of {name!r}", com)
        if inertia is not None and _is_symbolic(inertia):
            Ic = _symbolic(f"inertia of {name!r}", inertia, (3, 3))
            if any((Ic[i, j] - Ic[j, i]).expand() != 0 for i in range(3) for j in range(i)):
                raise ValueError(f"inertia: body {name!r} has an inertia that is not symmetric")
        else:
            Ic = np.zeros((3, 3)) if inertia is None else _checks.array("inertia", inertia, None, finite=False)
            if Ic.shape == (3,):
                Ic = np.diag(Ic)
            if Ic.shape != (3, 3) or not np.all(np.isfinite(Ic)):
                raise ValueError(f"inertia: body {name!r} expects a finite 3×3 matrix (or 3 principal moments)")
            check_inertia(Ic, f"body {name!r}")
        from .joints import NV
        arm = np.zeros(NV[jtype]) if armature is None else _checks.array("armature", armature, None, finite=False)
        if arm.ndim == 0:
            arm = np.full(NV[jtype], float(arm))
        if arm.shape != (NV[jtype],) or not np.all(np.isfinite(arm)) or np.any(arm < 0):
            raise ValueError(f"armature: body {name!r} expects one finite value ≥ 0, or {NV[jtype]} (one per "
                             f"dof of its {jtype.name} joint), got {armature!r}")
        self._bodies.append(dict(name=name, parent=p, jtype=jtype, axis=ax, pitch=pitch, mass=m, armature=arm,
                                 com=c, inertia=Ic, R=_rotation(f"joint_rotation of {name!r}", joint_rotation),
                                 t=_vec3(f"joint_translation of {name!r}", joint_translation),
                                 joint_name=joint_name, limits=limits))
        return len(self._bodies) - 1

    def add_frame(self, name: str, body, rotation=None, translation=(0.0, 0.0, 0.0)) -> None:
        """A named frame fixed in ``body`` at (A_BF, B_r_BF)."""
        _name("name", name)
        if name in (f.name for f in self._frames):
            raise ValueError(f"name: a frame named {name!r} already exists")
        i = self._parent_index(body, name)
        self._frames.append(Frame(name, i, _rotation(f"rotation of frame {name!r}", rotation),
                                  _vec3(f"translation of frame {name!r}", translation)))

    def add_geometry(self, geometry: Geometry) -> None:
        self._geoms.append(geometry)

    def add_mimic(self, joint, mimicked, multiplier=1.0, offset=0.0) -> None:
        """Gear ``joint`` to ``mimicked`` (names or indices): q[joint] = multiplier · q[mimicked] + offset.

        The joints are looked up when the model is built (they may be added later); both must have
        one variable, a joint mimics at most one other, and mimics may not form a cycle."""
        for what, j in (("joint", joint), ("mimicked", mimicked)):
            if isinstance(j, (bool, np.bool_)) or not isinstance(j, (str, int, np.integer)):
                raise TypeError(f"{what}: expected a joint name or index, got {type(j).__name__}")
        self._mimics.append((joint, mimicked, _checks.number("multiplier", multiplier),
                             _checks.number("offset", offset)))

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
        mimics = _mimics(self._mimics, joint_names, [NV[b["jtype"]] for b in B])
        return Model(
            parent=[b["parent"] for b in B], jtype=[int(b["jtype"]) for b in B],
            jaxis=[b["axis"] for b in B], jpitch=[b["pitch"] for b in B],
            tree_rotation=[b["R"] for b in B], tree_translation=[b["t"] for b in B],
            mass=[b["mass"] for b in B], com=[b["com"] for b in B], inertia_com=[b["inertia"] for b in B],
            gravity=self.gravity, body_names=tuple(b["name"] for b in B), joint_names=tuple(joint_names),
            name=self.name, frames=tuple(self._frames), geometries=tuple(self._geoms), mimics=tuple(mimics),
            q_lower=q_lo, q_upper=q_hi, velocity_limit=vmax, effort_limit=emax, damping=damp, friction=fric,
            armature=np.concatenate([b["armature"] for b in B]))
