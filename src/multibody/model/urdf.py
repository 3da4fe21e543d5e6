"""URDF import: ``load_urdf(path_or_string, floating=False, package_dirs=None) -> Model``.

Parser
------
The XML is read with **lxml** (libxml2), not a hand-written parser and not ``urdfdom``: lxml is
well kept, already a dependency of this package, reports the source line of every element
(``sourceline``) so that every :class:`URDFError` can name the element *and* its line, and has safe
options for hostile input.  It is called with ``resolve_entities=False`` (no entity expansion, so
no "billion laughs"), ``no_network=True`` (no external DTD or entity fetches), ``load_dtd=False``
and ``huge_tree=False`` (libxml2's limits on depth and text size stay on).  Documents with a
``<!DOCTYPE`` are refused outright, and the input size is checked against ``max_bytes`` before
parsing.  The URDF semantics (which attributes are required, defaults) follow urdfdom, the
reference parser used by ROS and Pinocchio.

Lenient where the peers agree, strict where they don't
------------------------------------------------------
Where urdfdom or Drake give a document a reading, it loads, with a :class:`URDFWarning` that names
the oddity, its element and line; where the content is ambiguous or physically invalid it is
refused with a :class:`URDFError` naming element and line.

* Elements and attributes of other XML namespaces (``drake:…``, ``gazebo:…``, ``xacro:…``) are
  ignored everywhere, inside ``<geometry>`` too; a default ``xmlns`` on ``<robot>`` is accepted.  A
  prefix used without its ``xmlns:`` declaration (TinyXML, under urdfdom and Drake, does not care)
  loads with a warning.  Unknown un-namespaced elements (``<gazebo>``, ``<transmission>``,
  ``<calibration>`` …) are ignored, as in urdfdom.
* A joint whose parent is ``world`` with no ``world`` link declared hangs from an empty root link
  ``world`` — the fixed base (Drake's reading; urdfdom refuses) — with a warning.
* ``revolute``/``prismatic`` joints without ``<limit>`` load unbounded (Drake's reading) with a warning.
* A second ``<inertial>`` in a link or a second ``<origin>`` in any element is ignored with a warning:
  urdfdom and Drake both take the first.  A second copy of another single-valued element
  (``<parent>``, ``<child>``, ``<axis>``, ``<limit>``, ``<mass>``, ``<inertia>``, ``<geometry>`` …) is refused.
* A link with zero mass keeps its rotational inertia, as Pinocchio does.
* ``package://NAME/…`` resolves through a folder named NAME in a package dir, or a package dir (or one
  of its sub-folders) whose ``package.xml`` declares ``<name>NAME</name>``.
* Inertias that no rigid body has — not positive semi-definite, or principal moments violating the
  triangle inequality — load as written with a :class:`URDFWarning` naming the link, as urdfdom and
  Pinocchio accept them (several shipped robots have them); ``ModelBuilder`` refuses the same inertia
  (one check, :mod:`multibody.model.inertia`).

Mapping onto :class:`~multibody.model.model.Model`
---------------------------------------------------
* Joints ``revolute`` and ``continuous`` → REVOLUTE, ``prismatic`` → PRISMATIC, ``floating`` →
  FREE (q = [x y z w qx qy qz], v = [ω; v] body frame), ``planar`` → PLANAR with the URDF axis as
  the plane normal (URDF spec).  The rotation taking z onto that normal is folded into the tree
  transform, and the child link's inertia, frames, geometry and child joints are re-expressed in
  the rotated body frame, so the dynamics are those of the URDF.  (Pinocchio 4.1 ignores the axis
  of a planar joint and always uses z; the two agree when the axis is z.)
* ``fixed`` joints are removed: the child link is welded to the parent's body, its mass, centre of
  mass and inertia combined with the parent's (parallel-axis theorem), as Pinocchio does.
* Bodies are numbered depth-first from the root (parents first), children in document order.
* With ``floating=False`` the root link is the fixed base: it and every link welded to it become
  frames of the base (``Frame.body == -1``) and their mass is ignored (Pinocchio puts it on the
  "universe", outside every algorithm).  A fixed-base robot without movable joints gives a model
  with no bodies (nq = nv = 0) whose links are all base frames.  With ``floating=True`` the root
  link is body 0, attached by a FREE joint named ``root_joint`` (Pinocchio's name).
* Every link and every joint becomes a :class:`Frame` named after it (a joint's frame coincides
  with its child link's frame, as in URDF); link frames come first in ``model.frames``, then joint
  frames, so where a link and a joint share a name ``model.frame(name)`` is the link's.
  Limits (``q_lower``/``q_upper`` for revolute and prismatic joints, ``velocity_limit``,
  ``effort_limit``), ``damping`` and ``friction`` are kept; ``<mimic>`` becomes a :class:`Mimic` record (the mimicking joint stays a coordinate of the
  model, as in Pinocchio's default); visuals and collisions become :class:`Geometry` (box,
  cylinder, sphere, capsule, mesh), mesh paths resolved through ``package_dirs``.
"""
from __future__ import annotations

import math
import os
import re
import warnings
from pathlib import Path

import numpy as np
from lxml import etree

from ..errors import URDFError, URDFWarning
from .inertia import check_inertia
from .joints import NQ, NV, JointType
from .model import Frame, Geometry, Mimic, Model, mimic_cycle

MAX_BYTES = 32 * 1024 * 1024  # default size limit of a URDF document
MAX_LINKS = 100_000           # default limit on links + joints

__all__ = ["URDFError", "URDFWarning", "load_urdf", "MAX_BYTES"]


_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


def _q(name) -> str:
    """A name quoted for an error message, cut to 80 characters (hostile files have huge names)."""
    if isinstance(name, str) and len(name) > 80:
        name = name[:80] + "…"
    return repr(name)


def _where(el) -> str:
    if el is None:
        return "document"
    tag = el.tag[:40] if isinstance(el.tag, str) else "?"
    name = el.get("name")
    s = f"<{tag}" + (f" name={_q(name)}" if name is not None else "") + ">"
    if el.sourceline is not None:
        s += f" (line {el.sourceline})"
    return s


def _err(el, msg) -> URDFError:
    return URDFError(f"{_where(el)}: {msg}")


def _numbers(el, attr, n, default=None, *, required=False, positive=False, nonneg=False):
    """Parse ``n`` finite numbers from an attribute (strict decimal syntax)."""
    s = el.get(attr)
    if s is None:
        if required or default is None:
            raise _err(el, f"missing attribute {attr!r}")
        return np.array(default, dtype=float)
    toks = s.split()
    if len(toks) != n:
        raise _err(el, f"attribute {attr}={s[:60]!r}: expected {n} number{'s' if n > 1 else ''}, "
                       f"got {len(toks)} item(s)")
    out = np.empty(n)
    for k, t in enumerate(toks):
        if not _NUMBER.match(t):
            raise _err(el, f"attribute {attr}={s[:60]!r}: {t[:30]!r} is not a number")
        x = float(t)
        if not math.isfinite(x):
            raise _err(el, f"attribute {attr}={s[:60]!r}: {t[:30]!r} is not finite")
        if positive and not x > 0:
            raise _err(el, f"attribute {attr}={s[:60]!r}: expected positive values")
        if nonneg and x < 0:
            raise _err(el, f"attribute {attr}={s[:60]!r}: expected non-negative values")
        out[k] = x
    return out


def _number(el, attr, default=None, **kw):
    return float(_numbers(el, attr, 1, None if default is None else [default], **kw)[0])


def _children(el, tag):
    return [c for c in el if isinstance(c.tag, str) and c.tag == tag]


# Single-valued elements.  A second <inertial> or <origin> is ignored with a warning: urdfdom and
# Drake both read the first (TinyXML ``FirstChildElement``), so every peer computes the same dynamics.
# A second copy of any other single-valued element stays an error: it rewires the kinematics
# (parent, child, axis) or its limits, and is far likelier an editing slip than an intent.
_FIRST_WINS = ("inertial", "origin")
_SINGLE = ("mass", "inertia", "axis", "parent", "child", "limit", "dynamics", "mimic", "geometry")


def _warn(el, msg):
    warnings.warn(f"{_where(el)}: {msg}", URDFWarning, stacklevel=3)


def _child(el, tag, required=False):
    cs = _children(el, tag)
    if len(cs) > 1 and tag in _FIRST_WINS:
        _warn(cs[1], f"second <{tag}> in {_where(el)} ignored; the first (line {cs[0].sourceline}) is "
                     "used, as urdfdom and Drake do")
    elif len(cs) > 1 and tag in _SINGLE:
        raise _err(cs[1], f"element <{tag}> given more than once in {_where(el)}")
    if not cs:
        if required:
            raise _err(el, f"missing element <{tag}>")
        return None
    return cs[0]


def rpy_to_rot(r, p, y):
    """URDF fixed-axis roll-pitch-yaw: R = Rz(y) Ry(p) Rx(r)."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _origin(el):
    """(R, t) of an element's <origin> (identity if absent)."""
    o = _child(el, "origin")
    if o is None:
        return np.eye(3), np.zeros(3)
    t = _numbers(o, "xyz", 3, [0, 0, 0])
    rpy = _numbers(o, "rpy", 3, [0, 0, 0])
    if np.abs(t).max() > 1e12 or np.abs(rpy).max() > 1e12:
        raise _err(o, "origin values exceed 1e12")
    return rpy_to_rot(*rpy), t


def _rotation_onto(n):
    """A proper rotation whose third column is the unit vector n (R e_z = n)."""
    z = np.array([0.0, 0.0, 1.0])
    c = float(z @ n)
    if c > 1 - 1e-15:
        return np.eye(3)
    if c < -1 + 1e-15:
        return np.diag([1.0, -1.0, -1.0])
    a = np.cross(z, n)
    s = np.linalg.norm(a)
    a /= s
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + s * K + (1 - c) * K @ K


def _combine(m1, c1, I1, m2, c2, I2):
    """Sum of two rigid bodies' inertia (same coordinates): mass, CoM and inertia about the CoM."""
    m = m1 + m2
    if m == 0:
        return 0.0, np.zeros(3), I1 + I2
    c = (m1 * c1 + m2 * c2) / m
    d = c1 - c2
    mu = m1 * m2 / m
    return m, c, I1 + I2 + mu * ((d @ d) * np.eye(3) - np.outer(d, d))


class _Link:
    __slots__ = ("el", "name", "mass", "com", "inertia", "parent_joint", "child_joints")

    def __init__(self, el, name):
        self.el, self.name = el, name
        self.mass, self.com, self.inertia = 0.0, np.zeros(3), np.zeros((3, 3))
        self.parent_joint = None
        self.child_joints = []


class _Joint:
    __slots__ = ("el", "name", "type", "parent", "child", "R", "t", "axis", "limits", "mimic")


_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


def _read_link(el):
    name = el.get("name")
    if name is None or not name.strip():
        raise _err(el, "missing attribute 'name'")
    L = _Link(el, name)
    inertial = _child(el, "inertial")
    if inertial is not None:
        R, t = _origin(inertial)
        mel = _child(inertial, "mass", required=True)
        m = _number(mel, "value", required=True)
        if m < 0:
            raise _err(mel, f"negative mass {m}")
        if m > 1e12:
            raise _err(mel, f"mass {m} exceeds 1e12")
        iel = _child(inertial, "inertia", required=True)
        vals = {k: _number(iel, k, required=True) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        if max(abs(v) for v in vals.values()) > 1e12:
            raise _err(iel, "inertia values exceed 1e12")
        Ii = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]],
                       [vals["ixy"], vals["iyy"], vals["iyz"]],
                       [vals["ixz"], vals["iyz"], vals["izz"]]])
        check_inertia(Ii, f"link {_q(name)}" + (f" (line {iel.sourceline})" if iel.sourceline else ""),
                      warning=URDFWarning, stacklevel=3)
        L.mass, L.com, L.inertia = m, t, R @ Ii @ R.T
    return L


def _read_joint(el, links):
    J = _Joint()
    J.el = el
    J.name = el.get("name")
    if J.name is None or not J.name.strip():
        raise _err(el, "missing attribute 'name'")
    J.type = el.get("type")
    if J.type is None:
        raise _err(el, "missing attribute 'type'")
    if J.type not in _JOINT_TYPES:
        raise _err(el, f"unknown joint type {J.type[:40]!r}; expected one of {list(_JOINT_TYPES)}")
    for side in ("parent", "child"):
        c = _child(el, side, required=True)
        ln = c.get("link")
        if ln is None:
            raise _err(c, "missing attribute 'link'")
        if ln not in links:
            raise _err(c, f"{side} link {ln[:80]!r} is not defined")
        setattr(J, side, ln)
    if J.parent == J.child:
        raise _err(el, f"link {_q(J.parent)} is its own parent")
    J.R, J.t = _origin(el)
    J.axis = np.array([1.0, 0.0, 0.0])
    if J.type in ("revolute", "continuous", "prismatic", "planar"):
        a = _child(el, "axis")
        if a is not None:
            ax = _numbers(a, "xyz", 3, required=True)
            big = float(np.abs(ax).max())
            if big == 0.0:
                raise _err(a, "joint axis is zero")
            ax = ax / big  # scale first: the norm of (1e300, 1e300, 0) must not overflow
            J.axis = ax / np.linalg.norm(ax)
    lo, hi, vel, eff = None, None, None, None
    lim = _child(el, "limit")
    if lim is None and J.type in ("revolute", "prismatic"):  # urdfdom refuses; Drake reads it unbounded
        _warn(el, f"{J.type} joint without <limit>: loaded with unbounded position, velocity and "
                  "effort limits (as Drake does)")
    if lim is not None:  # urdfdom: effort and velocity required, lower/upper default 0
        vel, eff = _number(lim, "velocity", required=True), _number(lim, "effort", required=True)
        if J.type in ("revolute", "prismatic"):
            lo, hi = _number(lim, "lower", 0.0), _number(lim, "upper", 0.0)
            if lo > hi:
                raise _err(lim, f"lower limit {lo} exceeds upper limit {hi}")
            if lo == hi:   # most often both omitted (URDF's default 0, 0) on a joint that turns freely
                _warn(lim, f"{J.type} joint {J.name!r} has equal lower and upper limits ({lo:g}): kept on the "
                           f"Model as written, not enforced by simulate (as MuJoCo: 'limit ignored')")
    for v, nm in ((vel, "velocity"), (eff, "effort")):
        if v is not None and v < 0:
            raise _err(lim, f"negative {nm} limit {v}")
    damping = friction = None
    dyn = _child(el, "dynamics")
    if dyn is not None:
        damping = _number(dyn, "damping", 0.0)
        friction = _number(dyn, "friction", 0.0)
    J.limits = (lo, hi, vel, eff, damping, friction)
    J.mimic = None
    mim = _child(el, "mimic")
    if mim is not None:
        target = mim.get("joint")
        if target is None:
            raise _err(mim, "missing attribute 'joint'")
        J.mimic = (mim, target, _number(mim, "multiplier", 1.0), _number(mim, "offset", 0.0))
    return J


def _resolve_mesh(filename, el, base_dir, package_dirs, check, missing=None):
    """Absolute path of a mesh reference (package://, file://, relative or absolute).

    A mesh that cannot be found raises when ``check`` is True; with ``check="warn"`` its message
    goes to ``missing`` (the caller warns once, naming them all) and the reference is kept as
    resolved as it can be — dynamics never read meshes."""
    try:
        return _resolve_mesh_path(filename, el, base_dir, package_dirs, bool(check))
    except URDFError as e:  # already names the element: pass it on as it is (URDFError is a ValueError)
        if check is True:
            raise
        missing.append(str(e))
    except (OSError, ValueError) as e:  # a name too long for the file system, NUL bytes, …
        problem = _err(el, f"mesh {filename[:200]!r} cannot be looked up ({type(e).__name__}: {str(e)[:120]})")
        if check is True:
            raise problem from None
        if check:
            missing.append(str(problem))
        return filename
    try:
        return _resolve_mesh_path(filename, el, base_dir, package_dirs, False)
    except (OSError, ValueError):
        return filename


def _resolve_mesh_path(filename, el, base_dir, package_dirs, check):
    if filename.startswith("package://"):
        rest = filename[len("package://"):].lstrip("/")
        pkg, _, sub = rest.partition("/")
        cands = []
        for d in package_dirs:
            d = Path(d)
            cands += [d / pkg / sub, d / sub] if d.name == pkg else [d / pkg / sub]
        for c in cands:
            if c.is_file():
                return str(c.resolve())
        for d in _packages_named(pkg, package_dirs):  # folder name ≠ package name: ask package.xml
            c = d / sub
            if c.is_file():
                return str(c.resolve())
        if check:
            raise _err(el, f"mesh {filename[:200]!r} not found in package_dirs "
                           f"{[str(d) for d in package_dirs][:8]}")
        return str(cands[0]) if cands else filename
    path = Path(filename[len("file://"):] if filename.startswith("file://") else filename)
    if not path.is_absolute():
        path = Path(base_dir) / path
    if check and not path.is_file():
        raise _err(el, f"mesh file {str(path)[:200]!r} does not exist")
    return str(path)


def _package_name(folder: Path):
    """The ``<name>`` declared in ``folder/package.xml`` (ROS REP 149), or None."""
    f = folder / "package.xml"
    try:
        if not f.is_file() or f.stat().st_size > 1_000_000:
            return None
        data = f.read_bytes()
    except (OSError, ValueError):
        return None
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        return None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except (etree.LxmlError, ValueError):
        return None
    if root is None or root.tag != "package":
        return None
    name = root.find("name")
    return name.text.strip() if name is not None and name.text else None


def _packages_named(pkg, package_dirs):
    """Folders whose package.xml declares ``<name>pkg</name>``: each package dir and its children."""
    for d in package_dirs:
        d = Path(d)
        try:
            folders = [d] + sorted(c for c in d.iterdir() if c.is_dir())
        except (OSError, ValueError):
            continue
        for c in folders:
            if _package_name(c) == pkg:
                yield c


def _read_geometries(L, role, materials, base_dir, package_dirs, check, missing):
    """(R, t, kind, size, mesh, scale, rgba, name, element) of a link's visuals or collisions."""
    out = []
    for g in _children(L.el, role):
        R, t = _origin(g)
        gel = _child(g, "geometry", required=True)
        shapes = [c for c in gel if isinstance(c.tag, str)]
        if len(shapes) != 1:
            raise _err(gel, f"expected exactly one shape element, got {len(shapes)}")
        s = shapes[0]
        mesh, scale = None, (1.0, 1.0, 1.0)
        if s.tag == "box":
            kind, size = "box", tuple(_numbers(s, "size", 3, required=True, nonneg=True))
        elif s.tag == "cylinder":
            kind, size = "cylinder", (_number(s, "radius", required=True, nonneg=True),
                                      _number(s, "length", required=True, nonneg=True))
        elif s.tag == "capsule":
            kind, size = "capsule", (_number(s, "radius", required=True, nonneg=True),
                                     _number(s, "length", required=True, nonneg=True))
        elif s.tag == "sphere":
            kind, size = "sphere", (_number(s, "radius", required=True, nonneg=True),)
        elif s.tag == "mesh":
            fn = s.get("filename")
            if fn is None or not fn.strip():
                raise _err(s, "missing attribute 'filename'")
            kind, size = "mesh", ()
            mesh = _resolve_mesh(fn.strip(), s, base_dir, package_dirs, check, missing)
            if s.get("scale") is not None:
                sc = s.get("scale").split()
                scale = tuple(_numbers(s, "scale", 1, required=True)) * 3 if len(sc) == 1 else \
                    tuple(_numbers(s, "scale", 3, required=True))
        else:
            raise _err(s, f"unknown geometry {s.tag[:40]!r}; expected box, cylinder, sphere, capsule or mesh")
        rgba = None
        mat = _child(g, "material") if role == "visual" else None
        if mat is not None:
            col = _child(mat, "color")
            if col is not None:
                rgba = tuple(_numbers(col, "rgba", 4, required=True))
            elif mat.get("name") in materials:
                rgba = materials[mat.get("name")]
        out.append((R, t, kind, size, mesh, scale, rgba, g.get("name")))
    return out


def _read_source(source, max_bytes):
    """(bytes, base directory, label) from a path or an XML string."""
    if isinstance(source, bytes):
        data, base, label = source, os.getcwd(), "<string>"
    elif isinstance(source, str) and "<" in source:  # XML text (no sensible path contains '<')
        data, base, label = source.encode("utf-8", errors="replace"), os.getcwd(), "<string>"
    elif isinstance(source, (str, os.PathLike)):
        p = Path(source)
        try:
            if not p.is_file():
                raise URDFError(f"{str(p)[:300]}: no such URDF file")
            size = p.stat().st_size
            if size > max_bytes:
                raise URDFError(f"{str(p)[:300]}: file of {size} bytes exceeds the limit of {max_bytes} bytes "
                                "(max_bytes)")
            data, base, label = p.read_bytes(), str(p.parent.resolve()), str(p)
        except URDFError:  # already says what is wrong (it is a ValueError too)
            raise
        except (OSError, ValueError) as e:  # name too long, embedded NUL, permission, …
            raise URDFError(f"{str(p)[:300]}: cannot read the URDF file ({type(e).__name__}: "
                            f"{str(e)[:200]})") from None
    else:
        raise URDFError(f"expected a path or an XML string, got {type(source).__name__}")
    if len(data) > max_bytes:
        raise URDFError(f"{label}: document of {len(data)} bytes exceeds the limit of {max_bytes} bytes "
                        "(max_bytes)")
    return data, base, label


def _parse_xml(data, label):
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise URDFError(f"{label}: document type declarations and entities are not allowed in URDF")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False,
                             dtd_validation=False, remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as e:
        # this parse's errors only (the exception's log also holds earlier documents'), warnings aside
        log = [x for x in parser.error_log if x.level >= etree.ErrorLevels.ERROR]
        undeclared = [x for x in log if x.type_name == "NS_ERR_UNDEFINED_NAMESPACE"]
        if not undeclared or len(undeclared) != len(log):
            worst = next((x for x in log if x.type_name != "NS_ERR_UNDEFINED_NAMESPACE"), None)
            lineno, msg = (worst.line, worst.message.strip()) if worst is not None else (e.lineno, e.msg)
            line = f" (line {lineno})" if lineno else ""
            raise URDFError(f"{label}: malformed XML{line}: {msg}") from None
        # Only undeclared prefixes (``<drake:joint>`` without ``xmlns:drake``): TinyXML, which urdfdom
        # and Drake use, has no namespaces and reads such files, so re-read them keeping the
        # prefixed names; _drop_foreign then removes them like any other foreign element.
        warnings.warn(f"{label}: namespace prefix used without a declaration (line {undeclared[0].line}: "
                      f"{undeclared[0].message[:120]}); its elements and attributes are ignored",
                      URDFWarning, stacklevel=3)
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False,
                                 dtd_validation=False, remove_comments=True, remove_pis=True, recover=True)
        root = etree.fromstring(data, parser)
    except (ValueError, etree.LxmlError) as e:
        raise URDFError(f"{label}: malformed XML: {e}") from None
    if root is None:
        raise URDFError(f"{label}: empty document")
    _drop_foreign(root)
    return root


def _namespace(name: str):
    """Namespace of an lxml tag or attribute name ('{uri}local'), or the undeclared 'prefix:'."""
    if name.startswith("{"):
        return name[1:name.find("}")]
    return name.partition(":")[0] + ":" if ":" in name else None


def _drop_foreign(root):
    """Keep only URDF: elements and attributes of other XML namespaces go, inside <geometry> too.

    URDF has no namespace of its own; a default ``xmlns`` on <robot> puts every unprefixed element
    in that namespace, and those are URDF.  Anything else (``drake:…``, ``gazebo:…``, ``xacro:…``)
    is an extension of another tool: urdfdom and Drake skip what they do not know, and so do we.
    """
    urdf_ns = _namespace(root.tag) if isinstance(root.tag, str) else None
    foreign = []
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        if _namespace(el.tag) != urdf_ns:
            foreign.append(el)
            continue
        if urdf_ns is not None:
            el.tag = el.tag[el.tag.find("}") + 1:]
        for k in [k for k in el.attrib if _namespace(k) is not None]:
            del el.attrib[k]
    for el in foreign:
        parent = el.getparent()
        if parent is not None:
            parent.remove(el)


def load_urdf(source, floating: bool = False, package_dirs=None, *, check_meshes: bool | str = "warn",
              max_bytes: int = MAX_BYTES, gravity=(0.0, 0.0, -9.81)) -> Model:
    """Build a :class:`Model` from a URDF file path or XML string.

    ``floating=True`` attaches the root link through a FREE joint (``root_joint``).
    ``package_dirs`` lists directories searched for ``package://pkg/…`` mesh references (a
    directory named ``pkg`` or one containing ``pkg``); when None, ``ROS_PACKAGE_PATH`` and the
    ancestors of the file's directory are searched.  Mesh files that cannot be found give one
    :class:`URDFWarning` naming them all (``check_meshes="warn"``, the default: the dynamics do
    not need them, and Pinocchio's model builder does not read them), raise :class:`URDFError`
    with ``check_meshes=True``, and pass silently with ``check_meshes=False``.  Documents larger than ``max_bytes`` are
    refused before parsing.

    Parameters
    ----------
    source : str or os.PathLike
        A URDF file's path, or the XML text itself.
    floating : bool, optional
        Attach the root link through a free joint (default: fixed to the world).
    package_dirs : sequence of str, optional
        Directories searched for ``package://`` mesh references.
    check_meshes : {'warn', True, False}, optional
        What a mesh file that cannot be found does: one warning, an error, or nothing.
    max_bytes : int, optional
        The largest document read (32 MiB by default).
    gravity : array_like, shape (3,), optional
        Gravity in world coordinates, m/s² (URDF has no element for it).

    Returns
    -------
    Model
        The robot's kinematic tree with its inertias, limits, damping and friction, collision
        geometry (``model.geoms``) and visuals.

    Raises
    ------
    URDFError
        A malformed document (named with its element and line), an unknown joint type, a link
        with two parents, a cycle, a missing mesh with ``check_meshes=True``, or a document
        larger than ``max_bytes``, or a path that names no readable file.

    Example
    -------
    >>> from multibody.model.urdf import load_urdf
    >>> m = load_urdf('''<robot name="p"><link name="base"/>
    ...   <joint name="j" type="continuous"><parent link="base"/><child link="arm"/></joint>
    ...   <link name="arm"><inertial><mass value="1"/><origin xyz="0 0 -0.5"/>
    ...     <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
    ... </robot>''')
    >>> m.nq, m.body_names, m.joint_names
    (1, ('arm',), ('j',))
    """
    if check_meshes not in (True, False, "warn") or not isinstance(check_meshes, (bool, str)):
        raise TypeError(f"check_meshes: expected True, False or 'warn', got {check_meshes!r}"[:200])
    data, base_dir, label = _read_source(source, max_bytes)
    root = _parse_xml(data, label)
    if not isinstance(root.tag, str) or root.tag != "robot":
        raise _err(root, "the root element must be <robot>")
    robot_name = root.get("name")
    if robot_name is None or not robot_name.strip():
        raise _err(root, "missing attribute 'name'")
    if package_dirs is None:
        package_dirs = [d for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
        package_dirs += [str(p) for p in Path(base_dir).parents] + [base_dir]
    elif isinstance(package_dirs, (str, os.PathLike)):
        package_dirs = [package_dirs]
    package_dirs = [str(d) for d in package_dirs]

    materials = {}
    for mat in _children(root, "material"):
        col = _child(mat, "color")
        if mat.get("name") and col is not None:
            materials[mat.get("name")] = tuple(_numbers(col, "rgba", 4, required=True))

    link_els = _children(root, "link")
    joint_els = _children(root, "joint")
    if len(link_els) + len(joint_els) > MAX_LINKS:
        raise _err(root, f"more than {MAX_LINKS} links and joints")
    if not link_els:
        raise _err(root, "no <link> elements")
    links: dict[str, _Link] = {}
    for el in link_els:
        L = _read_link(el)
        if L.name in links:
            raise _err(el, f"duplicate link name {_q(L.name)} (first defined on line {links[L.name].el.sourceline})")
        links[L.name] = L
    if "world" not in links and any(p.get("link") == "world" for el in joint_els for p in _children(el, "parent")):
        # Drake (and Gazebo) read an undeclared parent "world" as the world body; urdfdom refuses.
        first = next(p for el in joint_els for p in _children(el, "parent") if p.get("link") == "world")
        _warn(first, "parent link 'world' is not declared; it is taken as the fixed world (an empty "
                     "root link), as Drake does")
        links["world"] = _Link(etree.Element("link", name="world"), "world")
    joints: dict[str, _Joint] = {}
    for el in joint_els:
        J = _read_joint(el, links)
        if J.name in joints:
            raise _err(el, f"duplicate joint name {_q(J.name)} (first defined on line {joints[J.name].el.sourceline})")
        C = links[J.child]
        if C.parent_joint is not None:
            raise _err(el, f"link {_q(J.child)} has two parents: joint {_q(C.parent_joint.name)} "
                           f"(line {C.parent_joint.el.sourceline}) and joint {_q(J.name)}")
        C.parent_joint = J
        links[J.parent].child_joints.append(J)
        joints[J.name] = J

    roots = [L for L in links.values() if L.parent_joint is None]
    if not roots:
        raise _err(root, "no root link: every link has a parent, so the joints form a cycle")
    if len(roots) > 1:
        names = ", ".join(f"{_q(L.name)} (line {L.el.sourceline})" for L in roots[:6])
        raise _err(root, f"{len(roots)} root links (links without a parent joint): {names}"
                         f"{' …' if len(roots) > 6 else ''}; a URDF must be one tree")
    root_link = roots[0]

    # Depth-first traversal (iterative: deep chains must not hit Python's recursion limit).
    # Each visited link is attached to a body b (−1 = fixed base) at pose (A_bL, b_r_bL).
    attach: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
    bodies: list[dict] = []   # name, parent, jtype, axis, R, t, joint, inertia accumulator
    frames: list[tuple[str, int, np.ndarray, np.ndarray]] = []
    if floating:
        bodies.append(dict(name=root_link.name, parent=-1, jtype=JointType.FREE, axis=None, R=np.eye(3),
                           t=np.zeros(3), joint=None, jname="root_joint", m=0.0, c=np.zeros(3),
                           I=np.zeros((3, 3)), link=root_link))
        attach[root_link.name] = (0, np.eye(3), np.zeros(3))
        frames.append(("joint", "root_joint", 0, np.eye(3), np.zeros(3)))
    else:
        attach[root_link.name] = (-1, np.eye(3), np.zeros(3))
    order = []
    stack = [(root_link, None)]
    with np.errstate(all="ignore"):
        while stack:  # pre-order: a body is created when its link is popped, so parents come first
            C, J = stack.pop()
            if J is not None:
                b, A, r = attach[J.parent]
                Aj, rj = A @ J.R, A @ J.t + r
                if not (np.all(np.isfinite(Aj)) and np.all(np.isfinite(rj))):
                    raise _err(J.el, "joint placement overflows")
                if J.type == "fixed":
                    attach[C.name] = (b, Aj, rj)
                    frames.append(("joint", J.name, b, Aj, rj))
                else:
                    jt = {"revolute": JointType.REVOLUTE, "continuous": JointType.REVOLUTE,
                          "prismatic": JointType.PRISMATIC, "floating": JointType.FREE,
                          "planar": JointType.PLANAR}[J.type]
                    Rfold = _rotation_onto(J.axis) if jt == JointType.PLANAR else np.eye(3)
                    bodies.append(dict(name=C.name, parent=b, jtype=jt, axis=J.axis, R=Aj @ Rfold, t=rj,
                                       joint=J, jname=J.name, m=0.0, c=np.zeros(3), I=np.zeros((3, 3)),
                                       link=C))
                    attach[C.name] = (len(bodies) - 1, Rfold.T, np.zeros(3))
                    frames.append(("joint", J.name) + attach[C.name])
            b, A, r = attach[C.name]
            frames.append(("link", C.name, b, A, r))
            order.append(C)
            if b >= 0:
                B = bodies[b]
                B["m"], B["c"], B["I"] = _combine(B["m"], B["c"], B["I"], C.mass, A @ C.com + r,
                                                  A @ C.inertia @ A.T)
                if not (math.isfinite(B["m"]) and np.all(np.isfinite(B["c"])) and np.all(np.isfinite(B["I"]))):
                    raise _err(C.el, "inertia overflows when combined with its body")
            for J2 in reversed(C.child_joints):
                stack.append((links[J2.child], J2))
    if len(attach) != len(links):
        lost = [n for n in links if n not in attach]
        L = links[lost[0]]
        raise _err(L.el, f"link is not reachable from the root {_q(root_link.name)}: the joints through "
                         f"{', '.join(repr(n) for n in lost[:6])} form a cycle")

    q_lo, q_hi, vmax, emax, damp, fric = [], [], [], [], [], []
    for B in bodies:
        lo, hi, vel, eff, d, f = B["joint"].limits if B["joint"] is not None else (None,) * 6
        nq, nv = NQ[B["jtype"]], NV[B["jtype"]]  # the joint table
        q_lo += [-math.inf if lo is None else lo] * nq
        q_hi += [math.inf if hi is None else hi] * nq
        vmax += [math.inf if vel is None else vel] * nv
        emax += [math.inf if eff is None else eff] * nv
        damp += [0.0 if d is None else d] * nv
        fric += [0.0 if f is None else f] * nv
        # A massless body keeps its rotational inertia, as Pinocchio does (a rotor, or an inertia
        # whose mass was put elsewhere): zeroing it would change the dynamics silently.
        B["I"] = 0.5 * (B["I"] + B["I"].T)
    # links first, then joints: a name shared by a link and a joint (allowed by URDF) gives two
    # frames, and model.frame(name) finds the link's
    frame_list = [Frame(name, body, A, r) for kind in ("link", "joint")
                  for k, name, body, A, r in frames if k == kind]
    geoms, missing = [], []
    for L in order:
        b, A, r = attach[L.name]
        for role in ("visual", "collision"):
            for R, t, kind, size, mesh, scale, rgba, gname in _read_geometries(
                    L, role, materials, base_dir, package_dirs, check_meshes, missing):
                geoms.append(Geometry(body=b, kind=kind, size=size, rotation=A @ R, translation=A @ t + r,
                                      mesh=mesh, scale=scale, role=role, rgba=rgba, name=gname or L.name))
    if missing:  # as Pinocchio's model builder: the dynamics do not need the meshes
        more = f" … and {len(missing) - 8} more" if len(missing) > 8 else ""
        warnings.warn(f"{label}: {len(missing)} mesh file(s) not found; loaded without them (the Geometry "
                      f"keeps the reference): {'; '.join(missing[:8])}{more}", URDFWarning, stacklevel=2)
    body_of_joint = {B["jname"]: k for k, B in enumerate(bodies)}
    mimics, mimic_elements = [], {}
    for J in joints.values():
        if J.mimic is None:
            continue
        mel, target, mult, off = J.mimic
        if target not in joints:  # urdfdom and Pinocchio load such files; the record is dropped
            warnings.warn(f"{_where(mel)}: mimicked joint {target[:80]!r} is not defined; mimic ignored",
                          URDFWarning, stacklevel=2)
            continue
        if target == J.name:
            raise _err(mel, "a joint cannot mimic itself")
        if J.name not in body_of_joint or target not in body_of_joint:
            continue  # a fixed joint has no coordinate to constrain (urdfdom and Pinocchio ignore it too)
        if bodies[body_of_joint[J.name]]["jtype"] not in (JointType.REVOLUTE, JointType.PRISMATIC) or \
                bodies[body_of_joint[target]]["jtype"] not in (JointType.REVOLUTE, JointType.PRISMATIC):
            raise _err(mel, "mimic joints must both be revolute, continuous or prismatic")
        mimics.append(Mimic(body_of_joint[J.name], body_of_joint[target], mult, off))
        mimic_elements[body_of_joint[J.name]] = mel
    cycle = mimic_cycle((m.joint, m.mimicked) for m in mimics)
    if cycle:   # urdfdom loads such a file; it has no consistent position
        raise _err(mimic_elements[cycle[0]], "joints " + " → ".join(repr(bodies[i]["jname"]) for i in cycle + cycle[:1])
                   + " mimic each other in a cycle (a joint geared to itself has no consistent position)")
    nb = len(bodies)  # 0 when a fixed-base robot has no movable joint: everything is a base frame
    try:
        return Model(
            parent=np.array([B["parent"] for B in bodies], dtype=np.int64),
            jtype=np.array([int(B["jtype"]) for B in bodies], dtype=np.int64),
            jaxis=np.array([B["axis"] if B["jtype"] in (JointType.REVOLUTE, JointType.PRISMATIC)
                            else (0.0, 0.0, 1.0) for B in bodies]).reshape(nb, 3),
            jpitch=np.zeros(nb), tree_rotation=np.array([B["R"] for B in bodies]).reshape(nb, 3, 3),
            tree_translation=np.array([B["t"] for B in bodies]).reshape(nb, 3),
            mass=np.array([B["m"] for B in bodies], dtype=float),
            com=np.array([B["c"] for B in bodies]).reshape(nb, 3),
            inertia_com=np.array([B["I"] for B in bodies]).reshape(nb, 3, 3),
            gravity=np.asarray(gravity, dtype=float), body_names=tuple(B["name"] for B in bodies),
            joint_names=tuple(B["jname"] for B in bodies), name=robot_name, frames=tuple(frame_list),
            geometries=tuple(geoms), mimics=tuple(mimics), q_lower=q_lo, q_upper=q_hi, _inertia_as_written=True,
            velocity_limit=vmax, effort_limit=emax, damping=damp, friction=fric)
    except ValueError as e:
        raise _err(root, f"cannot build the model: {e}") from None
