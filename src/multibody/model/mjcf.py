"""MJCF import: ``load_mjcf(path_or_string) -> Model``, built on MuJoCo's own compiler.

The file is compiled by ``mujoco.MjModel.from_xml_path`` / ``from_xml_string`` — includes, defaults
classes, ``fromto``, inertia from geoms, angle units, ``ref`` all resolved by MuJoCo — and the
compiled mjModel is read into a :class:`~multibody.model.model.Model`:

* Bodies, in MuJoCo's order (parents first).  A body with several joints becomes a chain of
  massless intermediate bodies, one per joint (named ``body/joint``), the last carrying the body's
  name and mass; a body without joints is welded to its parent (mass, centre of mass and inertia
  combined by the parallel-axis theorem, as for URDF fixed joints) and kept as a :class:`Frame`.
  Bodies welded to the world (static bodies, mocap bodies) are frames of the fixed base.
* Joints: hinge → REVOLUTE, slide → PRISMATIC, ball → SPHERICAL (q = [w x y z], q̇ = ω in body
  coordinates, as MuJoCo), free → FREE.  Our body frame sits on the joint anchor (``jnt_pos``), so
  the body's centre of mass, frames and geometry are shifted by it.  MuJoCo rotates a hinge by
  ``qpos − qpos0`` (``ref``); that offset is folded into the tree transform, so **q is MuJoCo's
  qpos** for every joint.  Velocities are MuJoCo's qvel except for free joints: MuJoCo's free qvel
  is [v (world), ω (body)], ours is [ω; v] with v the body origin's velocity in body coordinates.
* Per dof: ``armature`` (``dof_armature``; it enters M and inverse dynamics as in MuJoCo),
  ``damping`` (``dof_damping``, zero when the damper flag is disabled), ``friction``
  (``dof_frictionloss``); joint ranges become ``q_lower``/``q_upper`` (hinge, slide), actuator force
  ranges ``effort_limit``.  Gravity is ``opt.gravity`` (zero when the gravity flag is disabled).
* Sites become :class:`Frame` s, named as in MuJoCo, or ``site:NAME`` where a body has the same
  name (MuJoCo keeps a namespace per kind; frames share one); geoms of type box, sphere, capsule, cylinder and mesh become
  :class:`Geometry` (sizes converted to full lengths: box edges, cylinder/capsule length; a
  mesh's pose and scale are those of the mesh *file*, undoing MuJoCo's re-centring).  Every geom
  in the groups MuJoCo shows by default (0–2) is a visual; every geom that collides is also a
  collision.  Planes, ellipsoids and SDFs are not kept there (a height field is drawn as its surface,
  a ``solid``); contact reads
  ``Model.geoms`` (``model/geometry.py``: every colliding geom, planes and ellipsoids included,
  with MuJoCo's pair filters).

* The file's start: MuJoCo's ``qpos0`` → ``Model.qpos0`` (read as ``model.q_default``), and
  ``<keyframe><key>`` → ``model.keyframes`` (``model/mjcf_keys.py``: sizes checked, free-joint
  velocities converted, mocap poses not kept).

Beyond the tree (``_Reading`` sorts them; each message is one line naming the element, its
joints or bodies, and where it was written — file and line through ``<include>``):

* ``gravcomp`` → ``Model.gravcomp`` (per body; :func:`multibody.gravity_compensation_forces`
  turns it into the ``f_ext`` MuJoCo applies).  Bodies welded into one must agree on it.
* Equalities → ``Model.constraints``: ``<joint>`` (MuJoCo's polynomial ``polycoef`` about qpos0)
  a :class:`~multibody.model.constraints.JointCoupling`; ``<tendon>`` between fixed tendons a
  :class:`~multibody.model.constraints.TendonCoupling`; ``<connect>`` a
  :class:`~multibody.model.constraints.PointConstraint`; ``<weld>`` a
  :class:`~multibody.model.constraints.WeldConstraint` (bodies or sites).  Kept as hard
  constraints (MuJoCo's ``solref``/``solimp`` softness is not).  Inactive ones (``active="false"``,
  or equalities disabled) are dropped with an :class:`MJCFWarning`.
* Tendons with no limit, spring, damping, friction loss or armature, in no equality and driving
  no actuator leave M, C and g as they are: ignored, with one :class:`MJCFWarning` naming them and
  the joints (bodies) they span.  A fixed tendon that drives an actuator is that actuator's
  transmission (``Model.actuators``).
* Fixed tendons with a linear spring or damper (``stiffness``, ``damping``, ``springlength``)
  → ``Model.tendons`` (:class:`~multibody.model.tendons.FixedTendon`, a passive generalized force:
  ``multibody.simulation.limits.tendon_forces``).
* ``actuatorgravcomp`` on a joint moves its gravity compensation from MuJoCo's passive to its
  actuator force: the same force, unless ``actuatorfrclimited`` clamps the sum (kept:
  ``Actuators.gravcomp_dofs``, :mod:`multibody.model.actuators`; refused where no actuator is
  kept) or the model has no actuators or actuation disabled (MuJoCo then drops it: refused).
* What changes the motion and is not represented — limited or frictional tendons, sprung or
  damped spatial tendons (or polynomial springs), equalities between spatial tendons, flexes,
  ``actuatorgravcomp`` without actuators, limited ball joints (MuJoCo's cone on the rotation
  angle; the Model's limits are per coordinate, hinge and slide) — is refused with an
  :class:`MJCFError` naming each, unless ``unsupported="warn"``, which loads the tree and warns
  once per element dropped.  Armature on a free joint (MuJoCo adds it in world-aligned
  translation coordinates) is always refused.

Not kept, with an :class:`MJCFWarning` naming them because the passive forces of a simulation
would differ: springs on ball and free joints and fluid forces (``density``/``viscosity``).
Hinge and slide joints' springs (``stiffness``, ``springref``) → ``Model.stiffness`` and
``Model.springref``; their limits' softness (``solreflimit``, ``solimplimit``, ``margin``) →
``Model.limit_softness`` (``simulate(..., limits="soft")`` is MuJoCo's soft limit with them);
joint- and fixed-tendon-transmission actuators → ``Model.actuators``
(:mod:`multibody.model.actuators`; the others are skipped with a warning naming each); sensors →
``Model.sensors`` (:mod:`multibody.model.sensors`: the kinds computed here; the others skipped
with one warning naming each element and its line).  Cameras and lights are rendering matters and
are ignored.  Malformed files: MuJoCo's compiler message (which names the element and its line)
wrapped in an :class:`MJCFError`; so is any other failure of the compiler.  Before MuJoCo sees
a document, the sizes it declares (height fields, textures, replication, included and asset
files) are checked against limits (``mjcf_sizes``), because MuJoCo's compiler allocates them and
can crash the process.
"""
from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import numpy as np

from .._io import open_regular
from .joints import JointType
from .mjcf_keys import key_line, read_keyframes
from .mjcf_sizes import check_declared_sizes
from .geometry import from_mjmodel as from_mjmodel_geoms
from .model import Frame, Geometry, Model
from .tendons import FixedTendon
from .actuators import from_mjmodel_actuators
from .sensors import from_mjmodel_sensors
from .._extras import require

__all__ = ["MJCFError", "MJCFWarning", "load_mjcf", "from_mjmodel"]

MAX_BYTES = 32 * 1024 * 1024


class MJCFError(ValueError):
    """An MJCF document that cannot be turned into a model; the message names the element."""


class MJCFWarning(UserWarning):
    """Something in an MJCF model that the Model does not keep (springs, fluid forces)."""


def _mujoco():
    return require("mujoco", "mjcf", "load_mjcf (MuJoCo's own compiler reads the file)")


def _rotation(quat) -> np.ndarray:
    """Rotation matrix of a unit quaternion [w, x, y, z] (MuJoCo's order, and ours)."""
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _axis_rotation(axis, angle) -> np.ndarray:
    """Rodrigues: rotation by ``angle`` about the unit vector ``axis``."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _combine(m1, c1, I1, m2, c2, I2):
    """Sum of two rigid bodies' inertia (same coordinates): mass, CoM and inertia about the CoM."""
    m = m1 + m2
    if m == 0:
        return 0.0, np.zeros(3), I1 + I2
    c = (m1 * c1 + m2 * c2) / m
    d = c1 - c2
    return m, c, I1 + I2 + m1 * m2 / m * ((d @ d) * np.eye(3) - np.outer(d, d))


def _compile(source, assets):
    """(mjModel, label, XML text, directory relative file names start from)."""
    mujoco = _mujoco()
    if isinstance(source, bytes):
        source = source.decode("utf-8", errors="replace")
    if isinstance(source, str) and "<" in source:  # XML text (no sensible path contains '<')
        label, text, path, base_dir = "<string>", source, None, Path.cwd()
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        label, base_dir = str(path)[:300], path.resolve().parent
        try:
            if not path.is_file():
                raise MJCFError(f"{label}: no such MJCF file")
            if path.stat().st_size > MAX_BYTES:
                raise MJCFError(f"{label}: file exceeds the limit of {MAX_BYTES} bytes")
            with open_regular(path, "source") as fh:   # not a FIFO swapped in after is_file()
                text = fh.read(MAX_BYTES + 1).decode("utf-8", errors="replace")
        except (OSError, ValueError) as e:
            if isinstance(e, MJCFError):
                raise
            raise MJCFError(f"{label}: cannot read the MJCF file ({type(e).__name__}: {str(e)[:200]})") from None
    else:
        raise MJCFError(f"expected a path or an XML string, got {type(source).__name__}")
    if len(text) > MAX_BYTES:
        raise MJCFError(f"{label}: document exceeds the limit of {MAX_BYTES} bytes")
    root = re.search(r"<\s*([^\s?!/>][^\s/>]*)", re.sub(r"<!--.*?-->|<\?.*?\?>|<!DOCTYPE[^>]*>", "", text, flags=re.S))
    if root is None or root.group(1) != "mujoco":
        found = f"<{root.group(1)[:40]}>" if root else "no element"
        hint = " (a URDF: use load_urdf)" if root and root.group(1) == "robot" else ""
        raise MJCFError(f"{label}: the root element must be <mujoco>, found {found}{hint}")
    if assets is not None and not (isinstance(assets, dict) and all(
            isinstance(k, str) and isinstance(v, bytes) for k, v in assets.items())):
        raise MJCFError("assets: expected a dict {file name: bytes}")
    check_declared_sizes(text, label, base_dir, assets, MJCFError)   # MuJoCo allocates what is declared
    try:
        if path is not None:
            mj = mujoco.MjModel.from_xml_path(str(path), assets)
        else:
            mj = mujoco.MjModel.from_xml_string(text, assets)
    except Exception as e:  # noqa: BLE001 - the compiler's message (element, line), or its "unknown exception"
        msg = " ".join(str(e).split()) or type(e).__name__
        msg += key_line(msg, _section_children(text, "keyframe", base_dir, assets) or [])
        kind = "" if isinstance(e, (ValueError, TypeError)) else f" ({type(e).__name__})"
        raise MJCFError(f"{label}: MuJoCo's compiler refused the model{kind}: {msg[:1500]}") from None
    return mj, label, text, base_dir


def _section_lines(text, section, count, base_dir=None, assets=None):
    """Where the children of top-level <section> elements were written, in document order — the
    main file's and (one level at a time) those of files it includes at the top level — as
    "line N" or "FILE line N", when exactly ``count`` of them are found (compiled order =
    document order); else Nones."""
    found = _section_children(text, section, base_dir, assets)
    if found is None or len(found) != count:
        return [None] * count
    return [where for where, _ in found]


def _section_children(text, section, base_dir=None, assets=None):
    """The children of top-level <section> elements as ("line N" or "FILE line N", element), in
    document order (see :func:`_section_lines`); None when the text cannot be walked."""
    if text is None:
        return None
    from lxml import etree
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True)
    out = []

    def walk(data, file, depth):
        try:
            root = etree.fromstring(data, parser)
        except (etree.LxmlError, ValueError):
            return False
        for s in root:
            if s.tag == "include" and s.get("file") and depth < 8:
                name = s.get("file")
                if assets and name in assets:
                    sub = bytes(assets[name])
                else:
                    try:
                        path = name if os.path.isabs(name) or base_dir is None else os.path.join(base_dir, name)
                        with open_regular(path, "include") as fh:
                            sub = fh.read(MAX_BYTES)
                    except (OSError, ValueError):
                        return False
                if not walk(sub, name, depth + 1):
                    return False
            elif s.tag == section:
                out.extend((f"{file + ' ' if file else ''}line {c.sourceline}", c) for c in s if isinstance(c.tag, str))
        return True

    ok = walk(text.encode("utf-8", errors="replace"), "", 0)
    return out if ok else None


class _Reading:
    """What the compiled mjModel holds beyond the tree, sorted (module notes): constraints to
    build, tendons ignored, elements refused (or dropped with ``unsupported="warn"``)."""

    def __init__(self, mj, label, text, base_dir, assets):
        mujoco = self.mujoco = _mujoco()
        self.mj, self.label = mj, label
        self.refused, self.dropped, self.ignored_tendons = [], [], []
        self.fatal = []        # refused whatever ``unsupported`` says (dropping them would change M)
        self.equalities = []   # (eq id, element label) to become constraints
        obj, flags = mujoco.mjtObj, mj.opt.disableflags
        D = mujoco.mjtDisableBit
        self.name = lambda o, i: mujoco.mj_id2name(mj, o, i)  # noqa: E731
        off = lambda *bits: any(flags & b for b in bits)  # noqa: E731
        eq_lines = _section_lines(text, "equality", mj.neq, base_dir, assets)
        ten_lines = _section_lines(text, "tendon", mj.ntendon, base_dir, assets)

        # tendons: what they do to the motion, and who uses them
        in_equality = {}
        for i in range(mj.neq):
            if mj.eq_type[i] == mujoco.mjtEq.mjEQ_TENDON:
                for t in (mj.eq_obj1id[i], mj.eq_obj2id[i]):
                    if t >= 0:
                        in_equality.setdefault(int(t), i)
        actuated = {int(mj.actuator_trnid[a, 0]) for a in range(mj.nu)
                    if mj.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_TENDON}
        none = np.zeros((mj.ntendon, 1))   # fields that older MuJoCo versions do not have
        stiff_poly, damp_poly = (getattr(mj, k, none) for k in ("tendon_stiffnesspoly", "tendon_dampingpoly"))
        self.sprung = []       # (tendon id, stiffness, damping): fixed tendons kept as Model.tendons
        for t in range(mj.ntendon):
            effects = []
            if mj.tendon_limited[t] and not off(D.mjDSBL_LIMIT, D.mjDSBL_CONSTRAINT):
                effects.append(f"limited (range {mj.tendon_range[t, 0]:g} … {mj.tendon_range[t, 1]:g})")
            if mj.tendon_frictionloss[t] > 0 and not off(D.mjDSBL_FRICTIONLOSS, D.mjDSBL_CONSTRAINT):
                effects.append(f"frictionloss={mj.tendon_frictionloss[t]:g}")
            if getattr(mj, "tendon_armature", np.zeros(mj.ntendon))[t] > 0:
                effects.append(f"armature={mj.tendon_armature[t]:g}")
            spring = not off(D.mjDSBL_SPRING) and bool(mj.tendon_stiffness[t] or np.any(stiff_poly[t]))
            damper = not off(D.mjDSBL_DAMPER) and bool(mj.tendon_damping[t] or np.any(damp_poly[t]))
            linear = not (np.any(stiff_poly[t]) or np.any(damp_poly[t]))
            what = self.tendon_label(t, ten_lines[t])
            if (spring or damper) and not effects and linear and self.fixed_tendon(t):
                # a linear spring and damper on L = Σ c q: a passive generalized force (Model.tendons)
                self.sprung.append((t, float(mj.tendon_stiffness[t]) if spring else 0.0,
                                    float(mj.tendon_damping[t]) if damper else 0.0))
                continue
            if spring:
                effects.append(f"a spring (stiffness={mj.tendon_stiffness[t]:g}"
                               f"{'' if linear else ', polynomial'})")
            if damper:
                effects.append(f"damping={mj.tendon_damping[t]:g}{'' if linear else ' (polynomial)'}")
            if effects:
                self.refused.append(f"{what}: {' and '.join(effects)} — changes the motion and is not represented")
            elif t not in in_equality and t not in actuated:
                # (a tendon that drives an actuator is that actuator's transmission: model/actuators.py,
                # or named with the actuator where it is skipped)
                self.ignored_tendons.append(f"{what} (unused)")

        # equalities: joint and fixed-tendon couplings, connect and weld loop closures
        E = _Ints(mujoco.mjtEq)
        for i in range(mj.neq):
            kind = mujoco.mjtEq(mj.eq_type[i]).name.removeprefix("mjEQ_").lower()
            nm = self.name(obj.mjOBJ_EQUALITY, i)
            where = f", {eq_lines[i]}" if eq_lines[i] else ""
            what = f"<equality><{kind}> {repr(nm) if nm else '#' + str(i)} ({self.touches(i)}{where})"
            t = int(mj.eq_type[i])
            if off(D.mjDSBL_EQUALITY, D.mjDSBL_CONSTRAINT) or not mj.eq_active0[i]:
                why = "inactive at the start" if not mj.eq_active0[i] else "equality constraints are disabled"
                self.note_dropped(f"{what}: {why}; not kept")
            elif t in (E.mjEQ_CONNECT, E.mjEQ_WELD, E.mjEQ_JOINT):
                self.equalities.append((i, what))
            elif t == E.mjEQ_TENDON:
                spatial = [int(x) for x in (mj.eq_obj1id[i], mj.eq_obj2id[i]) if x >= 0 and not self.fixed_tendon(x)]
                if spatial:
                    self.refused.append(f"{what}: couples spatial tendon(s) "
                                        f"{[self.name(obj.mjOBJ_TENDON, x) or '#' + str(x) for x in spatial]}, "
                                        "whose lengths are not represented")
                else:
                    self.equalities.append((i, what))
            else:
                self.refused.append(f"{what}: a {kind} equality is not represented")
        for f in range(mj.nflex):
            nm = self.name(obj.mjOBJ_FLEX, f)
            a, n = mj.flex_vertadr[f], mj.flex_vertnum[f]
            bodies = sorted({self.body(b) for b in mj.flex_vertbodyid[a:a + n]})
            self.refused.append(f"<flex> {repr(nm) if nm else '#' + str(f)}: a deformable body ({n} vertices, "
                                f"bodies {_few(bodies)}) is not represented")
        self.actuator_gravcomp(off(D.mjDSBL_GRAVITY))
        limits_on = not off(D.mjDSBL_LIMIT, D.mjDSBL_CONSTRAINT)
        for j in range(mj.njnt):
            arm = mj.dof_armature[mj.jnt_dofadr[j]]
            if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL and mj.jnt_limited[j] and limits_on:
                # MuJoCo's cone on the rotation angle: the Model's limits are per coordinate (hinge, slide)
                self.refused.append(f"ball <joint> {self.joint(j)!r}: limited (its rotation angle at most "
                                    f"{max(mj.jnt_range[j]):g} rad) — changes the motion and is not represented")
            if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE and arm != 0:
                self.fatal.append(f"free <joint> {self.joint(j)!r}: armature={arm} (MuJoCo adds it in "
                                    "world-aligned translation coordinates; a per-dof armature in body coordinates "
                                    "cannot express that)")

    def actuator_gravcomp(self, gravity_off):
        """``actuatorgravcomp``: MuJoCo adds the joint's gravity compensation to its actuator force
        (``qfrc_actuator`` instead of ``qfrc_passive``).  Unclamped, that is bookkeeping: the same
        force, the same motion (Model.gravcomp).  With ``actuatorfrclimited`` the sum is clamped to
        ``actuatorfrcrange`` together with the actuators' forces: ``Actuators.gravcomp_dofs``
        (model/actuators.py), which needs an actuator kept (``clamped`` lists these joints for
        _build to refuse where none is).  In a model without actuators, or with actuation
        disabled, MuJoCo applies none of it (``mj_fwdActuation`` returns first): refused."""
        mj = self.mj
        self.clamped = []
        lifted = np.zeros(mj.nbody, dtype=bool)          # bodies with gravcomp in their subtree
        for b in range(mj.nbody - 1, 0, -1):
            lifted[b] |= mj.body_gravcomp[b] != 0 and mj.body_mass[b] > 0
            lifted[mj.body_parentid[b]] |= lifted[b]
        no_actuation = mj.nu == 0 or bool(mj.opt.disableflags & self.mujoco.mjtDisableBit.mjDSBL_ACTUATION)
        for j in np.flatnonzero(getattr(mj, "jnt_actgravcomp", np.zeros(mj.njnt))):
            b = int(mj.jnt_bodyid[j])
            if gravity_off or not lifted[b]:
                continue
            what = f"<joint> {self.joint(j)!r} (body {self.body(b)!r}): actuatorgravcomp"
            if no_actuation:  # mj_fwdActuation stops before adding it
                self.refused.append(f"{what} in a model without actuators (or with actuation disabled) — MuJoCo "
                                    "then applies none of this joint's gravity compensation, which one gravcomp per "
                                    "body cannot express")
            elif mj.jnt_actfrclimited[j] and int(mj.jnt_type[j]) in (int(self.mujoco.mjtJoint.mjJNT_HINGE),
                                                                    int(self.mujoco.mjtJoint.mjJNT_SLIDE)):
                lo, hi = mj.jnt_actfrcrange[j]
                self.clamped.append(f"{what} with actuatorfrcrange {lo:g} … {hi:g} — MuJoCo clamps the gravity "
                                    "compensation together with the joint's actuator forces, and no actuator of the "
                                    "model is kept (model.actuators is None)")

    # ---- names -----------------------------------------------------------------------------------
    def body(self, b):
        return "world" if b == 0 else self.name(self.mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"

    def joint(self, j):
        """The joint's name in our Model (MuJoCo's, or BODY_jointN as _build names it)."""
        mj = self.mj
        b = int(mj.jnt_bodyid[j])
        return self.name(self.mujoco.mjtObj.mjOBJ_JOINT, j) or f"{self.body(b)}_joint{j - mj.body_jntadr[b]}"

    def fixed_tendon(self, t):
        mj, W = self.mj, _Ints(self.mujoco.mjtWrap)
        a, n = mj.tendon_adr[t], mj.tendon_num[t]
        return all(mj.wrap_type[w] == W.mjWRAP_JOINT for w in range(a, a + n))

    def tendon_spans(self, t):
        """'joints [...]' for a fixed tendon, 'bodies [...]' for a spatial one."""
        mj, W = self.mj, _Ints(self.mujoco.mjtWrap)
        a, n = mj.tendon_adr[t], mj.tendon_num[t]
        if self.fixed_tendon(t):
            return "joints " + _few([self.joint(mj.wrap_objid[w]) for w in range(a, a + n)])
        bodies, sites = [], []
        for w in range(a, a + n):
            o = mj.wrap_objid[w]
            if mj.wrap_type[w] == W.mjWRAP_SITE:
                bodies.append(self.body(mj.site_bodyid[o]))
                sites.append(self.name(self.mujoco.mjtObj.mjOBJ_SITE, o) or f"#{o}")
            elif mj.wrap_type[w] in (W.mjWRAP_SPHERE, W.mjWRAP_CYLINDER):
                bodies.append(self.body(mj.geom_bodyid[o]))
        return f"bodies {_few(list(dict.fromkeys(bodies)))}, sites {_few(sites)}"

    def tendon_label(self, t, line=None):
        nm = self.name(self.mujoco.mjtObj.mjOBJ_TENDON, t)
        kind = "fixed" if self.fixed_tendon(t) else "spatial"
        return (f"<tendon><{kind}> {repr(nm) if nm else '#' + str(t)} ({self.tendon_spans(t)}"
                f"{', ' + line if line else ''})")

    def touches(self, i):
        mj, E = self.mj, _Ints(self.mujoco.mjtEq)
        ids = [int(x) for x in (mj.eq_obj1id[i], mj.eq_obj2id[i]) if x >= 0]
        t = int(mj.eq_type[i])
        if t == E.mjEQ_JOINT:
            return "joints " + _few([self.joint(j) for j in ids])
        if t == E.mjEQ_TENDON:
            return "tendons " + _few([self.name(self.mujoco.mjtObj.mjOBJ_TENDON, x) or f"#{x}" for x in ids])
        if t in (E.mjEQ_CONNECT, E.mjEQ_WELD):
            if int(mj.eq_objtype[i]) == int(self.mujoco.mjtObj.mjOBJ_SITE):
                return "sites " + _few([self.name(self.mujoco.mjtObj.mjOBJ_SITE, x) or f"#{x}" for x in ids])
            return "bodies " + _few([self.body(b) for b in ids] + (["world"] if len(ids) == 1 else []))
        return "flex" if t != getattr(E, "mjEQ_DISTANCE", -1) else "geoms"

    def note_dropped(self, line):
        self.dropped.append(line)

    # ---- what to do about it -------------------------------------------------------------------
    def settle(self, unsupported, stacklevel):
        if self.fatal:
            raise MJCFError(f"{self.label}: not expressible as a Model:\n" + "\n".join(self.fatal))
        if self.refused and unsupported == "error":
            more = f"\n… and {len(self.refused) - 20} more" if len(self.refused) > 20 else ""
            raise MJCFError(f"{self.label}: not expressible as a Model (load_mjcf(..., unsupported='warn') loads "
                            "the tree without them):\n" + "\n".join(self.refused[:20]) + more)
        for line in self.refused:
            warnings.warn(f"{self.label}: dropped: {line}", MJCFWarning, stacklevel=stacklevel)
        for line in self.dropped:
            warnings.warn(f"{self.label}: {line}", MJCFWarning, stacklevel=stacklevel)
        if self.ignored_tendons:
            warnings.warn(f"{self.label}: tendons that leave the dynamics unchanged (no limit, spring, damping, "
                          f"friction or equality) are not kept: {'; '.join(self.ignored_tendons)}", MJCFWarning,
                          stacklevel=stacklevel)


class _Ints:
    """An enum of the mujoco bindings with its members as plain ints (arrays hold ints)."""

    def __init__(self, enum):
        self._enum = enum

    def __getattr__(self, name):
        return int(getattr(self._enum, name))


def _few(names, n=8):
    names = [str(x) for x in names]
    return "[" + ", ".join(repr(x) for x in names[:n]) + (", …" if len(names) > n else "") + "]"


def _warn_what_is_not_kept(mj, label):
    mujoco = _mujoco()
    springs = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) or f"#{j}" for j in np.flatnonzero(mj.jnt_stiffness)
               if int(mj.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_BALL), int(mujoco.mjtJoint.mjJNT_FREE))]
    if springs and not mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_SPRING:
        warnings.warn(f"{label}: springs (stiffness) of ball and free joints are not kept in the Model: joints "
                      f"{springs[:6]}{' …' if len(springs) > 6 else ''}", MJCFWarning, stacklevel=4)
    if mj.opt.density > 0 or mj.opt.viscosity > 0:
        warnings.warn(f"{label}: fluid forces (<option density={mj.opt.density} viscosity={mj.opt.viscosity}>) "
                      "are not kept in the Model", MJCFWarning, stacklevel=4)


def load_mjcf(source, *, assets: dict | None = None, unsupported: str = "error") -> Model:
    """Build a :class:`Model` from an MJCF file path or XML string, compiled by MuJoCo.

    ``assets`` maps file names to bytes for a model given as a string (MuJoCo's ``assets``).
    ``unsupported``: ``"error"`` (default) refuses a model holding elements that change the
    motion and are not represented (limited or sprung tendons, spatial-tendon equalities,
    flexes), naming each; ``"warn"`` loads the tree without them, one :class:`MJCFWarning` per
    element dropped.

    Parameters
    ----------
    source : str or os.PathLike
        An MJCF file's path, or the XML text itself.
    assets : dict of str to bytes, optional
        Files a model given as text refers to (meshes, included files), by name.
    unsupported : {'error', 'warn'}, optional
        What an element that changes the motion but is not represented does.

    Returns
    -------
    Model
        The kinematic tree as MuJoCo compiles it (our q is MuJoCo's qpos), with its geoms,
        actuators, joint springs, damping, armature, equality constraints, keyframes and default
        state ``qpos0``.

    Raises
    ------
    MJCFError
        MuJoCo cannot compile the document (its message, with the file), an unsupported element
        with ``unsupported="error"`` (named), or a bad ``unsupported`` value.
    MissingExtraError
        The ``mujoco`` package (the ``[mjcf]`` extra) is not installed; the message names the extra.

    Example
    -------
    >>> import multibody as mb
    >>> m = mb.load_mjcf('''<mujoco><worldbody><body name="arm">
    ...   <joint name="shoulder" type="hinge" axis="0 1 0" armature="0.1"/>
    ...   <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05" mass="1"/>
    ... </body></worldbody></mujoco>''')
    >>> m.nq, m.body_names, m.joint_names, m.armature.tolist()
    (1, ('arm',), ('shoulder',), [0.1])
    """
    _unsupported(unsupported)
    mj, label, text, base_dir = _compile(source, assets)
    return _build(mj, label, text, base_dir, assets, unsupported)


def from_mjmodel(mj, *, base_dir=None, unsupported: str = "error") -> Model:
    """Read a compiled ``mujoco.MjModel`` into a :class:`Model` (see the module notes).

    What :func:`load_mjcf` does after MuJoCo compiled the document, for a model compiled
    elsewhere (``mujoco.MjModel.from_xml_path``, dm_control's ``physics.model.ptr``).

    Parameters
    ----------
    mj : mujoco.MjModel
        The compiled model.
    base_dir : str or os.PathLike, optional
        The directory that the model's relative mesh paths start from (default: the current
        directory).
    unsupported : {'error', 'warn'}, optional
        What an element that changes the motion but is not represented does, as for
        :func:`load_mjcf`.

    Returns
    -------
    Model
        The kinematic tree (our q is MuJoCo's qpos), geoms, actuators, joint springs, damping,
        armature, equality constraints, keyframes and default state ``qpos0``.

    Raises
    ------
    TypeError
        ``mj`` is not a ``mujoco.MjModel``.
    MJCFError
        An unsupported element with ``unsupported="error"`` (named), or a bad ``unsupported``
        value (a ``ValueError``).
    MissingExtraError
        The ``mujoco`` package (the ``[mjcf]`` extra) is not installed.

    Warns
    -----
    MJCFWarning
        Something the Model does not keep (springs of ball and free joints, fluid forces), and
        each element dropped with ``unsupported="warn"``.

    Examples
    --------
    >>> import mujoco, multibody as mb
    >>> mj = mujoco.MjModel.from_xml_string('''<mujoco><worldbody><body name="arm">
    ...   <joint name="shoulder" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
    ... </body></worldbody></mujoco>''')
    >>> m = mb.mjcf.from_mjmodel(mj)
    >>> m.nq, m.body_names, m.joint_names
    (1, ('arm',), ('shoulder',))
    """
    mujoco = _mujoco()
    if not isinstance(mj, mujoco.MjModel):
        raise TypeError(f"mj: expected a mujoco.MjModel, got {type(mj).__name__}")
    _unsupported(unsupported)
    return _build(mj, "mjModel", None, Path.cwd() if base_dir is None else Path(base_dir), None, unsupported)


def _unsupported(value):
    if value not in ("error", "warn"):
        raise MJCFError(f"unsupported: expected 'error' or 'warn', got {value!r}")


def _build(mj, label, text, base_dir, assets, unsupported) -> Model:
    mujoco = _mujoco()
    reading = _Reading(mj, label, text, base_dir, assets)
    reading.settle(unsupported, stacklevel=4)
    _warn_what_is_not_kept(mj, label)
    obj = mujoco.mjtObj
    HINGE, SLIDE, BALL, FREE = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE),
                                int(mujoco.mjtJoint.mjJNT_BALL), int(mujoco.mjtJoint.mjJNT_FREE))
    jtype_of = {HINGE: JointType.REVOLUTE, SLIDE: JointType.PRISMATIC, BALL: JointType.SPHERICAL,
                FREE: JointType.FREE}
    body_name = [mujoco.mj_id2name(mj, obj.mjOBJ_BODY, b) or ("world" if b == 0 else f"body{b}")
                 for b in range(mj.nbody)]

    # attach[b] = (our body k, A, r): MuJoCo body b's frame in our body k's coordinates
    # (x_ours = A x_mj + r); k = −1 is the fixed base.
    attach = {0: (-1, np.eye(3), np.zeros(3))}
    bodies: list[dict] = []
    frames: list[Frame] = [Frame(body_name[0], -1, np.eye(3), np.zeros(3))]
    for b in range(1, mj.nbody):
        k, A, r = attach[int(mj.body_parentid[b])]
        A, r = A @ _rotation(mj.body_quat[b]), A @ mj.body_pos[b] + r  # body frame at qpos0
        joints = range(mj.body_jntadr[b], mj.body_jntadr[b] + mj.body_jntnum[b])
        for n, j in enumerate(joints):
            jt = int(mj.jnt_type[j])
            jname = mujoco.mj_id2name(mj, obj.mjOBJ_JOINT, j) or f"{body_name[b]}_joint{n}"
            last = n == len(joints) - 1
            if jt == FREE:  # MuJoCo: only on top-level bodies, qpos = world pose of the body frame
                R_J, t_J, anchor = np.eye(3), np.zeros(3), np.zeros(3)
            else:
                anchor, axis = np.array(mj.jnt_pos[j], float), np.array(mj.jnt_axis[j], float)
                q0 = mj.qpos0[mj.jnt_qposadr[j]]
                # MuJoCo moves the body by qpos − qpos0 about the anchor; fold −qpos0 into the
                # joint frame so that our q is MuJoCo's qpos.
                fold_R = _axis_rotation(axis, -q0) if jt == HINGE else np.eye(3)
                fold_t = -axis * q0 if jt == SLIDE else np.zeros(3)
                R_J, t_J = A @ fold_R, A @ (anchor + fold_t) + r
            bodies.append(dict(name=body_name[b] if last else f"{body_name[b]}/{jname}", jname=jname,
                               parent=k, jtype=jtype_of[jt], jnt=j, R=R_J, t=t_J,
                               axis=np.array(mj.jnt_axis[j], float) if jt in (HINGE, SLIDE) else np.zeros(3),
                               m=0.0, c=np.zeros(3), I=np.zeros((3, 3))))
            # our body frame sits on the anchor, oriented as MuJoCo's body frame
            k, A, r = len(bodies) - 1, np.eye(3), -anchor
        attach[b] = (k, A, r)
        frames.append(Frame(body_name[b], k, A, r))
        if k >= 0 and mj.body_mass[b] > 0:
            bodies[k].setdefault("gravcomp", []).append((body_name[b], float(mj.body_gravcomp[b]),
                                                         float(mj.body_mass[b])))
        if k >= 0:  # mass welded to the fixed base takes no part in the dynamics
            Rin = A @ _rotation(mj.body_iquat[b])
            B = bodies[k]
            B["m"], B["c"], B["I"] = _combine(B["m"], B["c"], B["I"], float(mj.body_mass[b]),
                                              A @ mj.body_ipos[b] + r, Rin @ np.diag(mj.body_inertia[b]) @ Rin.T)

    taken = set(body_name)
    for s in range(mj.nsite):  # MuJoCo names sites apart from bodies; our frames share one namespace
        k, A, r = attach[int(mj.site_bodyid[s])]
        sname = mujoco.mj_id2name(mj, obj.mjOBJ_SITE, s) or f"site{s}"
        frames.append(Frame(f"site:{sname}" if sname in taken else sname, k,
                            A @ _rotation(mj.site_quat[s]), A @ mj.site_pos[s] + r))
    geometries = _geometries(mj, attach, base_dir)
    geoms = from_mjmodel_geoms(mj, attach, label, MJCFWarning)

    # per-dof and per-coordinate arrays, in our order (= MuJoCo's, free joints' v reordered)
    nb = len(bodies)
    q_lo, q_hi, arm, damp, fric, eff, stiff, soft = [], [], [], [], [], [], [], []
    spring_on = not mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_SPRING
    damper_on = not mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_DAMPER
    for B in bodies:
        j = B["jnt"]
        jt = int(mj.jnt_type[j])
        dofs = np.arange(mj.jnt_dofadr[j], mj.jnt_dofadr[j] + (6 if jt == FREE else 3 if jt == BALL else 1))
        if jt == FREE:
            dofs = dofs[[3, 4, 5, 0, 1, 2]]  # MuJoCo [v; ω] → ours [ω; v]
        nq = {FREE: 7, BALL: 4}.get(jt, 1)
        limited = jt in (HINGE, SLIDE) and mj.jnt_limited[j]
        q_lo += [mj.jnt_range[j, 0] if limited else -np.inf] * nq
        q_hi += [mj.jnt_range[j, 1] if limited else np.inf] * nq
        arm += mj.dof_armature[dofs].tolist()
        damp += (mj.dof_damping[dofs] if damper_on else 0 * dofs).tolist()
        fric += mj.dof_frictionloss[dofs].tolist()
        e = max(abs(mj.jnt_actfrcrange[j, 0]), abs(mj.jnt_actfrcrange[j, 1])) if mj.jnt_actfrclimited[j] else np.inf
        eff += [e] * len(dofs)
        stiff += [float(mj.jnt_stiffness[j]) if spring_on and jt in (HINGE, SLIDE) else 0.0] * len(dofs)
        soft += [[*mj.jnt_solref[j], *mj.jnt_solimp[j], mj.jnt_margin[j]]] * len(dofs)
        B["I"] = 0.5 * (B["I"] + B["I"].T)
    gravity = np.zeros(3) if mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY else np.array(mj.opt.gravity)
    model_name = bytes(mj.names).split(b"\0", 1)[0].decode("utf-8", errors="replace") or "mjcf"
    names = [B["name"] for B in bodies]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise MJCFError(f"{label}: two bodies named {dup!r} (a body/joint chain name collides with a body name)")
    gravcomp = _gravcomp(bodies, reading, unsupported)
    constraints = _constraints(mj, reading, attach, bodies)
    tendons = _tendons(mj, reading)
    keyframes = read_keyframes(mj, label, _section_children(text, "keyframe", base_dir, assets), MJCFError)
    actuators = from_mjmodel_actuators(mj, label, MJCFWarning,
                                       _section_lines(text, "actuator", mj.nu, base_dir, assets))
    if actuators is None and reading.clamped:   # the clamp lives in Model.actuators (model/actuators.py)
        reading.refused, reading.dropped = reading.clamped, []
        reading.settle(unsupported, stacklevel=4)
    sensors = from_mjmodel_sensors(mj, attach, actuators, label, _section_children(text, "sensor", base_dir, assets),
                                   MJCFWarning)
    try:
        return Model(
            parent=np.array([B["parent"] for B in bodies], dtype=np.int64),
            jtype=np.array([int(B["jtype"]) for B in bodies], dtype=np.int64),
            jaxis=np.array([B["axis"] if B["jtype"] in (JointType.REVOLUTE, JointType.PRISMATIC) else (0, 0, 1.0)
                            for B in bodies], dtype=float).reshape(nb, 3),
            jpitch=np.zeros(nb), tree_rotation=np.array([B["R"] for B in bodies]).reshape(nb, 3, 3),
            tree_translation=np.array([B["t"] for B in bodies]).reshape(nb, 3),
            mass=np.array([B["m"] for B in bodies], dtype=float), com=np.array([B["c"] for B in bodies]).reshape(nb, 3),
            inertia_com=np.array([B["I"] for B in bodies]).reshape(nb, 3, 3), gravity=gravity,
            body_names=tuple(names), joint_names=tuple(B["jname"] for B in bodies), name=model_name,
            frames=tuple(frames), geometries=geometries, geoms=geoms, q_lower=q_lo, q_upper=q_hi, effort_limit=eff,
            damping=damp, friction=fric, armature=arm, gravcomp=gravcomp, constraints=constraints,
            tendons=tendons, qpos0=np.array(mj.qpos0), keyframes=keyframes, stiffness=stiff,
            springref=np.array(mj.qpos_spring), limit_softness=np.array(soft, float).reshape(-1, 8),
            actuators=actuators, sensors=sensors,
            integrator=_integrator(mujoco, mj), timestep=float(mj.opt.timestep))
    except ValueError as e:
        raise MJCFError(f"{label}: cannot build the model: {e}") from None


def _integrator(mujoco, mj):
    """Our fixed step for the file's ``<option integrator>``: MuJoCo's Euler (semi-implicit, with the
    joint damping implicit), implicit and implicitfast (implicit in the damping too) → ``semi_implicit``,
    whose damping is implicit as theirs; RK4 → ``rk4``."""
    return "rk4" if mj.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4 else "semi_implicit"


def _gravcomp(bodies, reading, unsupported):
    """One gravcomp per body of ours; MuJoCo bodies welded into one must agree on it (else the
    moment of the lift differs): refused, or with unsupported="warn" their mass-weighted mean."""
    out = np.zeros(len(bodies))
    for k, B in enumerate(bodies):
        parts = B.get("gravcomp", [])
        if not parts:
            continue
        values = {g for _, g, _ in parts}
        out[k] = values.pop() if len(values) == 1 else sum(g * m for _, g, m in parts) / sum(m for _, _, m in parts)
        if len(parts) > 1 and len({g for _, g, _ in parts}) > 1:
            line = (f"<body> {B['name']!r}: the bodies welded into it have different gravcomp "
                    f"({', '.join(f'{n!r}: {g:g}' for n, g, _ in parts)}); one value per body cannot express that")
            if unsupported == "error":
                raise MJCFError(f"{reading.label}: not expressible as a Model (load_mjcf(..., unsupported='warn') "
                                f"uses their mass-weighted mean {out[k]:g}):\n{line}")
            warnings.warn(f"{reading.label}: {line}; using their mass-weighted mean {out[k]:g}", MJCFWarning,
                          stacklevel=4)
    return out


def _tendons(mj, reading):
    """The sprung or damped fixed tendons (reading.sprung) as FixedTendon on our joints."""
    out = []
    for t, k, d in reading.sprung:
        a, n = mj.tendon_adr[t], mj.tendon_num[t]
        name = reading.name(reading.mujoco.mjtObj.mjOBJ_TENDON, t) or f"tendon{t}"
        out.append(FixedTendon(name, tuple(reading.joint(mj.wrap_objid[w]) for w in range(a, a + n)),
                               tuple(float(mj.wrap_prm[w]) for w in range(a, a + n)), stiffness=k, damping=d,
                               spring_length=tuple(float(x) for x in np.ravel(mj.tendon_lengthspring[t])[:2])))
    return tuple(out)


def _constraints(mj, reading, attach, bodies):
    """The equalities kept (reading.equalities) as constraint objects on our bodies and joints."""
    from .constraints import JointCoupling, PointConstraint, TendonCoupling, WeldConstraint
    mujoco = reading.mujoco
    E, obj = _Ints(mujoco.mjtEq), mujoco.mjtObj
    body_of_joint = {B["jnt"]: k for k, B in enumerate(bodies)}
    out = []
    for i, what in reading.equalities:
        name = reading.name(obj.mjOBJ_EQUALITY, i) or f"equality #{i}"
        t, data = int(mj.eq_type[i]), np.array(mj.eq_data[i], dtype=float)
        ids = [int(mj.eq_obj1id[i]), int(mj.eq_obj2id[i])]
        if t == E.mjEQ_JOINT:
            j1, j2 = ids
            ref = (mj.qpos0[mj.jnt_qposadr[j1]], mj.qpos0[mj.jnt_qposadr[j2]] if j2 >= 0 else 0.0)
            for j in (j1, j2):
                if j >= 0 and int(mj.jnt_type[j]) not in (int(mujoco.mjtJoint.mjJNT_HINGE),
                                                           int(mujoco.mjtJoint.mjJNT_SLIDE)):
                    raise MJCFError(f"{reading.label}: {what}: joint {reading.joint(j)!r} is not a hinge or slide")
            out.append(JointCoupling(body_of_joint[j1], body_of_joint[j2] if j2 >= 0 else None, name=name,
                                     polynomial=data[:5], reference=ref))
        elif t == E.mjEQ_TENDON:
            def lengths(tt):
                a, n = mj.tendon_adr[tt], mj.tendon_num[tt]
                coef = {}
                for w in range(a, a + n):
                    k = body_of_joint[int(mj.wrap_objid[w])]
                    coef[k] = coef.get(k, 0.0) + float(mj.wrap_prm[w])
                return coef
            t1, t2 = ids
            out.append(TendonCoupling(lengths(t1), lengths(t2) if t2 >= 0 else None, polynomial=data[:5],
                                      reference=(mj.tendon_length0[t1], mj.tendon_length0[t2] if t2 >= 0 else 0.0),
                                      name=name))
        else:  # connect, weld: frames on two MuJoCo bodies (or sites) → points/frames on ours
            if int(mj.eq_objtype[i]) == int(obj.mjOBJ_SITE):
                b = [int(mj.site_bodyid[x]) for x in ids]
                p = [mj.site_pos[x] for x in ids]
                R = [_rotation(mj.site_quat[x]) for x in ids]
            elif t == E.mjEQ_CONNECT:
                b, p, R = [ids[0], max(ids[1], 0)], [data[0:3], data[3:6]], [np.eye(3), np.eye(3)]
            else:   # weld: point data[3:6] of body1 on data[0:3] of body2, and R1·relpose = R2
                b, p, R = [ids[0], max(ids[1], 0)], [data[3:6], data[0:3]], [_rotation(data[6:10]), np.eye(3)]
            ends = []
            for bb, pp, RR in zip(b, p, R):
                k, A, r = attach[bb]
                ends.append((bodies[k]["name"] if k >= 0 else None, A @ pp + r, A @ RR))
            if ends[0][0] is None:
                ends.reverse()
            (ka, pa, Ra), (kb, pb, Rb) = ends
            if ka is None or ka == kb:
                reading.note_dropped(f"{what}: both ends are on one rigid body; nothing to constrain")
                warnings.warn(f"{reading.label}: {what}: both ends are on one rigid body; not kept", MJCFWarning,
                              stacklevel=4)
                continue
            if t == E.mjEQ_CONNECT:
                out.append(PointConstraint(ka, pa, kb, pb, name=name))
            else:
                out.append(WeldConstraint(ka, pa, kb, pb, rotation_a=Ra, rotation_b=Rb, name=name))
    return tuple(out)


def _geometries(mj, attach, base):
    """Drawable geoms as Geometry records (box/sphere/capsule/cylinder/mesh), in body coordinates."""
    mujoco = _mujoco()
    G = mujoco.mjtGeom
    paths = bytes(mj.paths)
    default_rgba = np.array([0.5, 0.5, 0.5, 1.0], dtype=np.float32)
    out = []
    for g in range(mj.ngeom):
        gt, s = int(mj.geom_type[g]), mj.geom_size[g]
        k, A, r = attach[int(mj.geom_bodyid[g])]
        R, t = A @ _rotation(mj.geom_quat[g]), A @ mj.geom_pos[g] + r
        mesh, scale, verts, faces = None, (1.0, 1.0, 1.0), None, None
        if gt == G.mjGEOM_BOX:
            kind, size = "box", tuple(2.0 * s)
        elif gt == G.mjGEOM_SPHERE:
            kind, size = "sphere", (float(s[0]),)
        elif gt == G.mjGEOM_CAPSULE:
            kind, size = "capsule", (float(s[0]), 2.0 * float(s[1]))
        elif gt == G.mjGEOM_CYLINDER:
            kind, size = "cylinder", (float(s[0]), 2.0 * float(s[1]))
        elif gt == G.mjGEOM_MESH:
            kind, size = "mesh", ()
            i = mj.geom_dataid[g]
            if mj.mesh_pathadr[i] >= 0:
                rel = paths[mj.mesh_pathadr[i]:].split(b"\0", 1)[0].decode("utf-8", errors="replace")
                mesh = str(rel if os.path.isabs(rel) else base / rel)
            # MuJoCo stores v = Rmᵀ(s v_file − pm); the file's frame sits at (Rmᵀ, −Rmᵀ pm) in the geom
            Rm = _rotation(mj.mesh_quat[i])
            R, t = R @ Rm.T, t - R @ Rm.T @ mj.mesh_pos[i]
            scale = tuple(float(x) for x in mj.mesh_scale[i])
        elif gt == G.mjGEOM_HFIELD:   # its top surface as a solid, triangulated as the collider cuts it
            from .geometry import HeightField
            i = int(mj.geom_dataid[g])
            nr, nc, a = int(mj.hfield_nrow[i]), int(mj.hfield_ncol[i]), int(mj.hfield_adr[i])
            verts, F = HeightField(np.array(mj.hfield_size[i], float),
                                   np.array(mj.hfield_data[a:a + nr * nc], float).reshape(nr, nc)).surface()
            kind, size, faces = "solid", (), tuple(map(tuple, F.tolist()))
        else:  # plane, ellipsoid, SDF: not drawable as our Geometry kinds
            continue
        matid = mj.geom_matid[g]
        rgba = mj.mat_rgba[matid] if matid >= 0 and np.array_equal(mj.geom_rgba[g], default_rgba) else mj.geom_rgba[g]
        rgba = tuple(round(float(x), 6) for x in rgba)
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom{g}"
        roles = (["visual"] if mj.geom_group[g] < 3 else []) + \
                (["collision"] if mj.geom_contype[g] or mj.geom_conaffinity[g] else [])
        for role in roles:
            if kind == "solid" and role == "collision":
                continue     # the collision copy of a height field is Model.geoms' (model/geometry.py)
            out.append(Geometry(body=k, kind=kind, size=size, rotation=R, translation=t, mesh=mesh, scale=scale,
                                role=role, rgba=rgba, name=name, vertices=verts, faces=faces))
    return tuple(out)
