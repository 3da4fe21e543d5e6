"""Model constructors of spatial_v2 (seed 001): autoTree, planar, floatbase and the Simulink
tutorial mechanisms vee, singlebody, scissor.

These are numeric models (their parameters are structural, or the mechanisms float freely on
quaternion joints, which symbolic derivation does not take)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _checks
from ..model.builder import ModelBuilder
from ..model.joints import JointType
from ..model.model import Model


def _rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def auto_tree(nb: int, bf: float = 1, skew: float = 0, taper: float = 1) -> Model:
    """spatial_v2 ``autoTree``: a breadth-first kinematic tree of revolute joints.

    Body i is a thin-walled cylinder of length taper^i and mass taper^(3i) (0-based i) along its
    x axis; joint i is on its z axis; a child's joint axis sits at (l_parent, 0, 0), rotated by
    ``skew`` about x.  The base always has one child.

    Parameters
    ----------
    nb : int
        The number of bodies, ≥ 1.
    bf : float, default 1
        The branching factor, ≥ 1 (1: an unbranched chain; 2: a binary tree; fractional values
        mix the two, as in the seed).
    skew : float, default 0
        The angle (rad) about x between a parent's joint axis and its children's.
    taper : float, default 1
        The ratio of a body's length to its parent's, > 0 (masses scale with its cube).

    Returns
    -------
    Model
        ``nb`` bodies on revolute joints, gravity −9.81 along z, with drawing instructions.

    Raises
    ------
    TypeError
        ``nb`` is not an integer, or ``bf``, ``skew``, ``taper`` not real numbers.
    ValueError
        ``nb`` < 1, ``bf`` < 1, ``taper`` ≤ 0, or a value NaN or inf.

    Examples
    --------
    >>> import multibody as mb
    >>> mb.models.auto_tree(7, bf=2).parent.tolist()
    [-1, 0, 0, 1, 1, 2, 2]
    """
    nb = _checks.integer("nb", nb, lo=1)
    _checks.number("bf", bf, lo=1)            # checked; the values as given name the model
    _checks.number("skew", skew)
    _checks.number("taper", taper, positive=True)
    b = ModelBuilder(f"auto_tree({nb}, bf={bf}, skew={skew}, taper={taper})")
    lengths = []
    for i in range(1, nb + 1):  # seed's 1-based loop, kept so the parent formula reads as in autoTree.m
        parent = math.floor((i - 2 + math.ceil(bf)) / bf)  # 0 = base
        length, mass = taper ** (i - 1), taper ** (3 * (i - 1))
        lengths.append(length)
        Icm = mass * length ** 2 * np.diag([0.0025, 1.015 / 12, 1.015 / 12])
        if parent == 0:
            R, t = np.eye(3), np.zeros(3)
        else:
            R, t = _rot_x(skew), np.array([lengths[parent - 1], 0.0, 0.0])
        b.add_body(f"B{i}", parent - 1, "Rz", mass=mass, com=[0.5 * length, 0, 0], inertia=Icm,
                   joint_rotation=R, joint_translation=t, joint_name=f"J{i}")
        _draw_rod(b, i - 1, length, length / 20, joint_axis=(0, 0, 1))   # autoTree's drawing instructions
    return b.build()


def planar(n: int) -> Model:
    """spatial_v2 ``planar``: n unit rods (unit mass, inertia 1/12 about the CoM) on revolute joints.

    The planar model is embedded in the x–y plane of a spatial model (joint code ``'r'`` = Rz);
    gravity is −9.81 along y.  That is our choice, not the seed's: spatial_v2's ``get_gravity``
    takes the planar gravity from the first two components of its spatial default [0, 0, −9.81],
    so a planar model without a ``gravity`` field falls with zero gravity there.

    Parameters
    ----------
    n : int
        The number of links, ≥ 1 (each 1 m long, 1 kg).

    Returns
    -------
    Model
        A planar chain (``model.planar`` is True), joints ``joint1 … jointn`` on bodies
        ``link1 … linkn``.

    Raises
    ------
    TypeError
        ``n`` is not an integer (a float or a bool too).
    ValueError
        ``n`` < 1.

    Examples
    --------
    >>> import multibody as mb
    >>> mb.models.planar(3).nv
    3
    """
    n = _checks.integer("n", n, lo=1)
    b = ModelBuilder(f"planar({n})", gravity=(0.0, -9.81, 0.0))
    for i in range(n):
        b.add_body(f"link{i + 1}", i - 1 if i else None, "r", mass=1.0, com=[0.5, 0, 0],
                   inertia=np.diag([0.0, 1 / 12, 1 / 12]),
                   joint_translation=[1.0 if i else 0.0, 0, 0], joint_name=f"joint{i + 1}")
        _draw_rod(b, i, 1.0, 0.04, joint_axis=(0, 0, 1), box=True)        # planar's drawing instructions
    m = b.build()
    from dataclasses import replace
    return replace(m, planar=True)


def _draw_rod(builder, body, length, radius, joint_axis=None, box=False):
    """Drawing instructions of a link on its body's x axis from 0 to ``length`` (and its joint)."""
    from ..model import appearance as look
    link = (0.55, 0.62, 0.78)
    if box:
        builder.add_geometry(look.box(body, (0, -radius, -radius), (length, radius, radius), link))
    else:
        builder.add_geometry(look.cylinder(body, (0, 0, 0), (length, 0, 0), radius, link))
    if joint_axis is not None:
        a = np.asarray(joint_axis, float) / np.linalg.norm(joint_axis)
        builder.add_geometry(look.cylinder(body, -2.2 * radius * a, 2.2 * radius * a, 1.6 * radius, (0.85, 0.55, 0.15)))


def _rod(length, mass, radius_ratio=0.02):
    """Inertia about the CoM of a thin solid cylinder along x."""
    r = radius_ratio * length
    return mass * np.diag([r * r / 2, length ** 2 / 12 + r * r / 4, length ** 2 / 12 + r * r / 4])


def vee(L2: float = 1.0) -> Model:
    """spatial_v2 ``vee`` (Simulink example 3): two rods joined by a revolute joint at 45°, free-floating.

    Rod 1 (mass and length 1) lies on the base x axis, rod 2 (mass and length L2) on the y axis,
    the joint axis is (1, 1, 0)/√2; zero gravity.  The floating base is a free joint (quaternion),
    so the model has no emulation singularity.  Rods are thin cylinders of radius 2 % of length;
    the page also shows the seed's construction lines and centre-of-mass spheres.

    Parameters
    ----------
    L2 : float, default 1.0
        Rod 2's length (m) and mass (kg).

    Returns
    -------
    Model
        nq = 8 (free joint: position, quaternion; then the hinge), nv = 7.

    Raises
    ------
    TypeError
        ``L2`` is not a real number.
    ValueError
        ``L2`` ≤ 0, NaN or inf.

    Examples
    --------
    >>> import multibody as mb
    >>> m = mb.models.vee(2.0)
    >>> m.nq, m.nv, float(m.mass.sum())
    (8, 7, 3.0)
    """
    L2 = _checks.number("L2", L2, positive=True)
    b = ModelBuilder("vee", gravity=(0, 0, 0))
    b.add_body("rod1", None, "free", mass=1.0, com=[0.5, 0, 0], inertia=_rod(1.0, 1.0))
    # rod 2 lies on y: its body frame is rotated +90° about z so that the rod is on its own x axis
    Rz90 = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    axis_in_joint = Rz90.T @ (np.array([1.0, 1.0, 0.0]) / math.sqrt(2))
    b.add_body("rod2", "rod1", "revolute", axis=axis_in_joint, mass=L2, com=[0.5 * L2, 0, 0],
               inertia=_rod(L2, L2), joint_rotation=Rz90)
    _draw_rod(b, 0, 1.0, 0.03)
    _draw_rod(b, 1, L2, 0.03, joint_axis=axis_in_joint)
    _vee_construction(b, float(L2))
    return b.build()


def _vee_construction(builder, L2):
    """The seed's construction lines and spheres (vee.m): in base coordinates the x, y and z axes,
    the line at 45° to x and y (the joint axis) and the line joining the rods' centres of mass; a
    red sphere on each rod's centre of mass; if L2 ≠ 1, orange spheres at the system's centre of
    mass and at the two rod points that coincide with it when the rods lie folded together."""
    from ..model import appearance as look
    grey, red, orange = (0.45, 0.45, 0.45), (0.85, 0.1, 0.1), (1.0, 0.55, 0.0)
    reach = 1.2 * max(1.0, L2)
    for axis in np.eye(3):
        builder.add_geometry(look.line(-1, [-0.2 * axis, reach * axis], grey, name="construction axis"))
    builder.add_geometry(look.line(-1, [(0, 0, 0), (reach / math.sqrt(2), reach / math.sqrt(2), 0)], grey,
                                   name="construction 45 degrees"))
    builder.add_geometry(look.line(-1, [(0.5, 0, 0), (0, 0.5 * L2, 0)], grey, name="construction centres of mass"))
    r = 0.04
    builder.add_geometry(look.sphere(0, (0.5, 0, 0), r, red, name="centre of mass rod1"))
    builder.add_geometry(look.sphere(1, (0.5 * L2, 0, 0), r, red, name="centre of mass rod2"))
    if abs(L2 - 1.0) > 1e-12:
        centre = np.array([0.5, 0.5 * L2 * L2, 0.0]) / (1.0 + L2)      # (m1 c1 + m2 c2) / (m1 + m2), m2 = L2
        folded = (0.5 + 0.5 * L2 * L2) / (1.0 + L2)                     # its distance from the joint, rods folded
        builder.add_geometry(look.sphere(-1, centre, r, orange, name="system centre of mass"))
        builder.add_geometry(look.sphere(0, (folded, 0, 0), r, orange, name="folded centre of mass rod1"))
        builder.add_geometry(look.sphere(1, (folded, 0, 0), r, orange, name="folded centre of mass rod2"))


def singlebody(mass: float = 1.0, size=(3.0, 2.0, 1.0)) -> Model:
    """spatial_v2 ``singlebody`` (Simulink example 4): a free-floating box, zero gravity.

    One vertex of the box is at the body origin, the opposite one at ``size``; uniform density.

    Parameters
    ----------
    mass : float, default 1.0
        The box's mass (kg).
    size : sequence of 3 floats, default (3.0, 2.0, 1.0)
        Its edges along the body's x, y, z axes (m): the seed's 3×2×1 m box.

    Returns
    -------
    Model
        One body on a free joint (nq = 7, nv = 6).

    Raises
    ------
    TypeError
        ``mass`` or ``size`` is not real numbers.
    ValueError
        ``size`` not three numbers; a value ≤ 0, NaN or inf.

    Examples
    --------
    >>> import multibody as mb
    >>> mb.models.singlebody().nv
    6
    """
    mass = _checks.number("mass", mass, positive=True)
    a, bb, c = _checks.vector("size", size, 3)
    if not (a > 0 and bb > 0 and c > 0):
        raise ValueError(f"size: expected three lengths > 0, got {tuple(float(x) for x in (a, bb, c))}")
    b = ModelBuilder("singlebody", gravity=(0, 0, 0))
    b.add_body("box", None, "free", mass=float(mass), com=[a / 2, bb / 2, c / 2],
               inertia=float(mass) * np.diag([bb * bb + c * c, a * a + c * c, a * a + bb * bb]) / 12)
    from ..model import appearance as look
    b.add_geometry(look.box(0, (0, 0, 0), (a, bb, c), (0.55, 0.62, 0.78), name="box"))
    return b.build()


def scissor(mass: float = 1.0, length: float = 1.0, width: float = 0.1, thickness: float = 0.02) -> Model:
    """spatial_v2 ``scissor`` (Simulink example 5): two identical strips joined at their middles.

    The joint lies on the y axis, the strips' long axes are parallel to z, the system's centre of
    mass is at the origin; zero gravity.  The strips lie side by side along y.

    Parameters
    ----------
    mass : float, default 1.0
        Each strip's mass (kg).
    length : float, default 1.0
        Each strip's extent along z (m).
    width : float, default 0.1
        Its extent along x (m).
    thickness : float, default 0.02
        Its extent along y (m).

    Returns
    -------
    Model
        Strip 1 on a free joint, strip 2 on a revolute joint about y (nq = 8, nv = 7).

    Raises
    ------
    TypeError
        An argument is not a real number.
    ValueError
        An argument ≤ 0, NaN or inf.

    Examples
    --------
    >>> import multibody as mb
    >>> mb.models.scissor().nv
    7
    """
    m = _checks.number("mass", mass, positive=True)
    lz = _checks.number("length", length, positive=True)
    lx = _checks.number("width", width, positive=True)
    ly = _checks.number("thickness", thickness, positive=True)
    b = ModelBuilder("scissor", gravity=(0, 0, 0))
    Ic = m * np.diag([ly * ly + lz * lz, lx * lx + lz * lz, lx * lx + ly * ly]) / 12
    b.add_body("strip1", None, "free", mass=m, com=[0, -ly / 2, 0], inertia=Ic)
    b.add_body("strip2", "strip1", "Ry", mass=m, com=[0, ly / 2, 0], inertia=Ic)
    from ..model import appearance as look
    for k, sign, colour in ((0, -1, (0.8, 0.3, 0.25)), (1, 1, (0.3, 0.45, 0.8))):
        b.add_geometry(look.box(k, (-lx / 2, sign * ly if sign > 0 else -ly, -lz / 2),
                                (lx / 2, 0.0 if sign < 0 else ly, lz / 2), colour, name=f"strip{k + 1}"))
    b.add_geometry(look.cylinder(1, (0, -1.5 * ly, 0), (0, 1.5 * ly, 0), 0.3 * lx, (0.85, 0.55, 0.15), name="pivot"))
    return b.build()


def floatbase(model: Model) -> Model:
    """spatial_v2 ``floatbase``: replace joint 1 by three prismatic and three revolute joints.

    Body 1 of ``model`` becomes body 6 (index 5) of the result; five massless bodies precede it
    (joints Px, Py, Pz, Rx, Ry, Rz).  The chain is singular when the angle of joint 5 is ±π/2
    (use a FREE joint, or ``fd_fb``, to avoid it).  A FREE joint 1 is replaced as any other: the
    same floating base in Euler angles, what symbolic derivation (no quaternions) takes.  Frames,
    geometry, mimic records and the real joints' limits move with their bodies.  The result follows
    the convention that :func:`multibody.dynamics.floating.fd_fb` / ``id_fb`` expect.

    Parameters
    ----------
    model : Model
        A numeric spatial model whose only root is body 0.

    Returns
    -------
    Model
        ``model`` with a floating base: nb + 5 bodies, nv + 5 velocities.

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`.
    ValueError
        ``model`` is symbolic, planar, or has more than one root or a root other than body 0.

    Warns
    -----
    UserWarning
        As the seed does, when Xtree{1} is not the identity (its offset is lost), and when the
        model's ``gamma_q`` is dropped (it reads joint variables by number, and floating the base
        renumbers them).

    Examples
    --------
    >>> import multibody as mb
    >>> fb = mb.models.floatbase(mb.models.auto_tree(3))
    >>> fb.nv, fb.body_names[5]
    (8, 'B1')
    >>> mb.models.floatbase(mb.models.vee()).joint_names     # a free base in Euler angles
    ('fb_Px', 'fb_Py', 'fb_Pz', 'fb_Rx', 'fb_Ry', 'fb_Rz', 'rod2_joint')
    """
    _checks.model(model)
    if model.planar:
        raise ValueError("model: floatbase requires a spatial model (spatial_v2: it must use spatial arithmetic)")
    roots = [i for i in range(model.nb) if model.parent[i] < 0]
    if len(roots) != 1 or roots[0] != 0:
        raise ValueError("model: floatbase requires exactly one body (body 0) connected to the base")
    if not (np.allclose(model.tree_rotation[0], np.eye(3)) and np.allclose(model.tree_translation[0], 0)):
        warnings.warn("floatbase: Xtree of joint 1 is not the identity; its offset is lost", stacklevel=2)
    if model.gamma_q is not None:
        warnings.warn("floatbase: model.gamma_q is dropped: floating the base renumbers the joints (joint i "
                      "becomes joint i + 5), so the constraint function would read the wrong variables; attach "
                      "one written for the new numbering to the result", stacklevel=2)
    b = ModelBuilder(f"floatbase({model.name})", gravity=model.gravity)
    codes = ["Px", "Py", "Pz", "Rx", "Ry", "Rz"]
    for k in range(5):
        b.add_body(f"fb{k + 1}", k - 1 if k else None, codes[k], mass=0.0, allow_massless=True,
                   joint_name=f"fb_{codes[k]}")
    b.add_body(model.body_names[0], 4, "Rz", mass=model.mass[0], com=model.com[0],
               inertia=model.inertia_com[0], joint_name="fb_Rz", allow_massless=True)
    for i in range(1, model.nb):
        qs, vs, one = model.q_start[i], model.v_start[i], model.nq_joint[i] == 1 and model.nv_joint[i] == 1
        b.add_body(model.body_names[i], int(model.parent[i]) + 5, JointType(model.jtype[i]),
                   axis=model.jaxis[i], pitch=model.jpitch[i], mass=model.mass[i], com=model.com[i],
                   inertia=model.inertia_com[i], joint_rotation=model.tree_rotation[i],
                   joint_translation=model.tree_translation[i], joint_name=model.joint_names[i],
                   allow_massless=True,
                   q_lower=model.q_lower[qs] if one else None, q_upper=model.q_upper[qs] if one else None,
                   velocity_limit=model.velocity_limit[vs] if one else None,
                   effort_limit=model.effort_limit[vs] if one else None,
                   damping=model.damping[vs] if one else None, friction=model.friction[vs] if one else None)
    for mm in model.mimics:  # joint numbers move by 5 (the seed warns about gamma_q for this reason)
        b.add_mimic(mm.joint + 5, mm.mimicked + 5, mm.multiplier, mm.offset)
    for f in model.frames:  # a frame on the fixed base (body −1) stays there
        b.add_frame(f.name, f.body + 5 if f.body >= 0 else None, f.rotation, f.translation)
    for g in model.geometries:
        from dataclasses import replace
        b.add_geometry(replace(g, body=g.body + 5 if g.body >= 0 else -1))
    return b.build()
