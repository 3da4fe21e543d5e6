"""Pinocchio states: ``mb.pinocchio``, as :mod:`multibody.mjcf` is for MuJoCo.

A ``pin.Model`` built from the same URDF as ours (``pin.buildModelFromUrdf(path)``, with
``pin.JointModelFreeFlyer()`` for ``load_urdf(path, floating=True)``) has the same joints, matched
here by name (our floating base is ``"root_joint"``, as Pinocchio names it), in its own order:
Pinocchio orders the joints depth-first with siblings as urdfdom lists them, we in the file's
order, so the two differ on branched robots (ANYmal, Talos).  The conventions differ joint by joint:

==============================  ================================  ================================
joint                           ours                              Pinocchio
==============================  ================================  ================================
free (floating base)            q = [x y z  w qx qy qz],          q = [x y z  qx qy qz w],
                                q̇ = [ω; v]                        v = [v; ω]
spherical                       q = [w qx qy qz]                  q = [qx qy qz w]
revolute without limits         q = θ (URDF ``continuous``)       q = [cos θ, sin θ]
planar                          q = [x y θ]                       q = [x y cos θ, sin θ]
==============================  ================================  ================================

Both write a free joint's velocity in **body** coordinates — ω the body's angular velocity and v
its origin's velocity, both in the body frame (Pinocchio's LOCAL) — so velocities, accelerations
and generalized forces only swap the two halves: [ω; v] ↔ [v; ω], [ω̇; v̇] ↔ [ω̇; v̇] swapped, [n; f] ↔
[f; n].  (MuJoCo differs: its free-joint v is in world coordinates; see :mod:`multibody.mjcf`.)
Every velocity-space vector — q̇, q̈, τ, a Jacobian's rows read as covectors — maps by the same
permutation, :func:`to_pinocchio_v`.

Pinocchio is not imported here: the functions read the ``pin.Model`` they are given (``names``,
``joints``, ``nq``, ``nv``).  Leading dimensions are batches, as in :mod:`multibody.mjcf`.
"""
from __future__ import annotations

import numpy as np

from . import _checks
from .model.joints import JointType

# the docstring examples' robot: a base with two arms, b (revolute) listed before a (continuous)
V_URDF = """<robot name="vee"><link name="base"><inertial><mass value="2"/>
  <inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="jb" type="revolute"><parent link="base"/><child link="b"/><origin xyz="0.2 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="a"><inertial><origin xyz="0 0 -0.4"/><mass value="0.5"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ja" type="continuous"><parent link="base"/><child link="a"/><origin xyz="-0.2 0 0"/>
    <axis xyz="1 0 0"/></joint>
</robot>"""

__all__ = ["to_pinocchio_model", "joint_order", "to_pinocchio_q", "from_pinocchio_q", "to_pinocchio_v", "from_pinocchio_v",
           "to_pinocchio_state", "from_pinocchio_state"]


class _Map:
    """Where each of our joints sits in a pin.Model: per joint (q start, v start, kind, pin idx_q,
    pin idx_v), and the velocity permutation vp with x_pin[vp] = x_ours."""

    def __init__(self, model, pin_model):
        _checks.model(model)
        try:
            names = [str(n) for n in pin_model.names]
            joints = list(pin_model.joints)
            self.nq, self.nv = int(pin_model.nq), int(pin_model.nv)
        except AttributeError:
            raise TypeError(f"pin_model: expected a pinocchio.Model, got {type(pin_model).__name__}") from None
        where = {n: j for j, n in enumerate(names) if j > 0}   # joint 0 is Pinocchio's "universe"
        self.joints, vp, used = [], np.empty(model.nv, dtype=np.int64), set()
        for i in range(model.nb):
            jt, name = JointType(model.jtype[i]), model.joint_names[i]
            if model.nv_joint[i] == 0:
                continue
            if name not in where:
                from .model.model import _known
                raise ValueError(f"pin_model: has no joint named {name!r} (our joint {i}, {jt.name.lower()}); "
                                 f"{_known('its joints', name, list(where))}")
            j = where[name]
            used.add(j)
            jm = joints[j]
            pq, pv, nq, nv = int(jm.idx_q), int(jm.idx_v), int(jm.nq), int(jm.nv)
            qs, vs = int(model.q_start[i]), int(model.v_start[i])
            kind = {(JointType.REVOLUTE, 1, 1): "plain", (JointType.PRISMATIC, 1, 1): "plain",
                    (JointType.HELICAL, 1, 1): "plain", (JointType.REVOLUTE, 2, 1): "unbounded",
                    (JointType.SPHERICAL, 4, 3): "spherical", (JointType.FREE, 7, 6): "free",
                    (JointType.PLANAR, 4, 3): "planar"}.get((jt, nq, nv))
            if kind is None:
                raise ValueError(f"pin_model: joint {name!r} is {jm.shortname()} (nq {nq}, nv {nv}) there and "
                                 f"{jt.name.lower()} (nq {model.nq_joint[i]}, nv {model.nv_joint[i]}) here: "
                                 "no conversion between them")
            self.joints.append((qs, vs, kind, pq, pv))
            vp[vs:vs + nv] = pv + (np.array([3, 4, 5, 0, 1, 2]) if kind == "free" else np.arange(nv))
        extra = [names[j] for j in where.values() if j not in used and joints[j].nv > 0]
        if extra or model.nv != self.nv:
            raise ValueError(f"pin_model: has joints that the model has not: {extra[:8]} (nv {self.nv} there, "
                             f"{model.nv} here)")
        self.vp = vp
        self.order = [model.joint_names.index(names[j]) for j in range(1, len(names)) if j in used]


def _last(name, x, n, what):
    x = _checks.array(name, x, None, what=f"{what} (…, {n})")
    if x.ndim == 0 or x.shape[-1] != n:
        raise ValueError(f"{name}: expected {what}, shape (…, {n}), got {x.shape}")
    return x


def _depth_first(model):
    """Bodies in depth-first order: Pinocchio needs each subtree's dofs to be contiguous."""
    children = [[] for _ in range(model.nb)]
    roots = []
    for i in range(model.nb):
        (roots if model.parent[i] < 0 else children[model.parent[i]]).append(i)
    order, stack = [], roots[::-1]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(children[i][::-1])
    return order


def to_pinocchio_model(model):
    """Pinocchio's twin of our model, built with Pinocchio's own API: same joints (named as ours),
    placements, inertias and gravity, for models that have no URDF (spatial_v2's trees, a builder's).

    Joints go in depth-first (Pinocchio keeps each subtree's dofs contiguous); the converters of this
    module then map states between the two (joints matched by name).  Revolute, prismatic and helical
    joints become Pinocchio's *Unaligned* kinds about our axis; spherical, free and planar their
    namesakes.  A body on a fixed joint has no Pinocchio joint: it may only be a massless leaf (a
    frame), which is left out.

    Parameters
    ----------
    model : Model
        Our numeric model.

    Returns
    -------
    pinocchio.Model

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`.
    ValueError
        ``model`` is symbolic, or a body on a fixed (or other unsupported) joint has mass or children.
    ImportError
        Pinocchio (the ``pin`` package) is not installed.

    Examples
    --------
    >>> import numpy as np, multibody as mb, pinocchio as pin
    >>> arm = mb.models.auto_tree(3)
    >>> pm = mb.pinocchio.to_pinocchio_model(arm)
    >>> q, qd, qdd = np.array([0.1, 0.2, 0.3]), np.zeros(3), np.array([1.0, 0.0, 0.0])
    >>> tau_pin = pin.rnea(pm, pm.createData(), mb.pinocchio.to_pinocchio_q(arm, pm, q), qd, qdd)
    >>> bool(np.allclose(tau_pin, mb.pinocchio.to_pinocchio_v(arm, pm, mb.rnea(arm, q, qd, qdd))))
    True
    """
    _checks.model(model)
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    ids = [None] * model.nb
    for i in _depth_first(model):
        kind, axis = JointType(model.jtype[i]), model.jaxis[i]
        if kind == JointType.REVOLUTE:
            joint = pin.JointModelRevoluteUnaligned(axis)
        elif kind == JointType.PRISMATIC:
            joint = pin.JointModelPrismaticUnaligned(axis)
        elif kind == JointType.HELICAL:
            joint = pin.JointModelHelicalUnaligned(axis, model.jpitch[i])
        elif kind == JointType.SPHERICAL:
            joint = pin.JointModelSpherical()
        elif kind == JointType.FREE:
            joint = pin.JointModelFreeFlyer()
        elif kind == JointType.PLANAR:
            joint = pin.JointModelPlanar()
        elif model.mass[i] == 0 and not any(model.parent[j] == i for j in range(model.nb)):
            continue  # a massless leaf on a fixed joint: a frame, nothing to simulate
        else:
            raise ValueError(f"to_pinocchio_model: body {model.body_names[i]!r} on a {kind.name} joint has mass "
                             "or children; only massless leaves may hang on fixed joints here")
        parent = 0 if model.parent[i] < 0 else ids[model.parent[i]]
        jid = pm.addJoint(parent, joint, pin.SE3(model.tree_rotation[i], model.tree_translation[i]),
                          model.joint_names[i])
        pm.appendBodyToJoint(jid, pin.Inertia(model.mass[i], model.com[i], model.inertia_com[i]), pin.SE3.Identity())
        ids[i] = jid
    return pm


def joint_order(model, pin_model) -> list[int]:
    """Our joint index of each of Pinocchio's joints, in Pinocchio's order (its universe left out).

    Pinocchio orders joints depth-first, we in the file's order: the two differ on branched robots.
    Fixed joints (no velocity) are left out, as Pinocchio leaves them out.

    Parameters
    ----------
    model : Model
        Our numeric model, e.g. ``mb.load_urdf(path)``.
    pin_model : pinocchio.Model
        Pinocchio's model of the same robot (``pin.buildModelFromUrdf(path)``, with
        ``pin.JointModelFreeFlyer()`` for a floating base); joints are matched by name.

    Returns
    -------
    list of int
        ``order[k]`` is our index (into ``model.joint_names``) of Pinocchio's joint k + 1.

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`, ``pin_model`` not a pinocchio.Model.
    ValueError
        ``model`` is symbolic; ``pin_model`` lacks one of our joints, has one we lack, or a joint
        of another kind.

    Examples
    --------
    >>> import multibody as mb, pinocchio as pin
    >>> robot = mb.load_urdf(V_URDF, floating=True)       # a base with two arms, listed b, a
    >>> robot.joint_names
    ('root_joint', 'jb', 'ja')
    >>> mb.pinocchio.joint_order(robot, pin.buildModelFromXML(V_URDF, pin.JointModelFreeFlyer()))
    [0, 2, 1]
    """
    return list(_Map(model, pin_model).order)


def to_pinocchio_q(model, pin_model, q) -> np.ndarray:
    """Pinocchio's configuration for our ``q``: joints reordered, conventions as the module's table.

    A free joint's quaternion goes scalar-last, a continuous (unbounded) revolute joint's and a
    planar joint's angle θ becomes [cos θ, sin θ].

    Parameters
    ----------
    model : Model
        Our numeric model, e.g. ``mb.load_urdf(path)``.
    pin_model : pinocchio.Model
        Pinocchio's model of the same robot (``pin.buildModelFromUrdf(path)``, with
        ``pin.JointModelFreeFlyer()`` for a floating base); joints are matched by name.
    q : array_like, shape (..., model.nq)
        Our joint positions (rad, m; quaternions scalar-first); leading dimensions are a batch.

    Returns
    -------
    q_pin : ndarray, shape (..., pin_model.nq)

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`, ``pin_model`` not a pinocchio.Model, ``q`` not real numbers.
    ValueError
        ``model`` is symbolic; ``pin_model`` lacks one of our joints, has one we lack, or a joint
        of another kind; ``q`` whose last dimension is wrong, NaN or inf.

    Examples
    --------
    >>> import numpy as np, multibody as mb, pinocchio as pin
    >>> robot = mb.load_urdf(V_URDF, floating=True)       # a free base with two arms: jb, ja (continuous)
    >>> pm = pin.buildModelFromXML(V_URDF, pin.JointModelFreeFlyer())
    >>> q = np.array([1, 2, 3,  1, 0, 0, 0,  0.3, np.pi / 2])
    >>> mb.pinocchio.to_pinocchio_q(robot, pm, q).round(6).tolist()
    [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.3]
    """
    return _to_q(_Map(model, pin_model), model, q, "q")


def _to_q(mp, model, q, name):
    q = _last(name, q, model.nq, "positions")
    out = np.zeros(q.shape[:-1] + (mp.nq,))
    for qs, _, kind, pq, _ in mp.joints:
        if kind == "plain":
            out[..., pq] = q[..., qs]
        elif kind == "unbounded":
            out[..., pq], out[..., pq + 1] = np.cos(q[..., qs]), np.sin(q[..., qs])
        elif kind == "spherical":
            out[..., pq:pq + 3], out[..., pq + 3] = q[..., qs + 1:qs + 4], q[..., qs]
        elif kind == "free":
            out[..., pq:pq + 3] = q[..., qs:qs + 3]
            out[..., pq + 3:pq + 6], out[..., pq + 6] = q[..., qs + 4:qs + 7], q[..., qs + 3]
        else:  # planar
            out[..., pq:pq + 2] = q[..., qs:qs + 2]
            out[..., pq + 2], out[..., pq + 3] = np.cos(q[..., qs + 2]), np.sin(q[..., qs + 2])
    return out


def from_pinocchio_q(model, pin_model, q_pin) -> np.ndarray:
    """Our configuration for Pinocchio's ``q_pin``: the inverse of :func:`to_pinocchio_q`.

    Angles come from [cos θ, sin θ] by atan2 (in (−π, π]), quaternions are reordered to
    scalar-first (not renormalised).

    Parameters
    ----------
    model : Model
        Our numeric model, e.g. ``mb.load_urdf(path)``.
    pin_model : pinocchio.Model
        Pinocchio's model of the same robot (``pin.buildModelFromUrdf(path)``, with
        ``pin.JointModelFreeFlyer()`` for a floating base); joints are matched by name.
    q_pin : array_like, shape (..., pin_model.nq)
        Pinocchio's configuration; leading dimensions are a batch.

    Returns
    -------
    q : ndarray, shape (..., model.nq)

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`, ``pin_model`` not a pinocchio.Model, ``q_pin`` not real numbers.
    ValueError
        ``model`` is symbolic; ``pin_model`` lacks one of our joints, has one we lack, or a joint
        of another kind; ``q_pin`` whose last dimension is wrong, NaN or inf.

    Examples
    --------
    >>> import numpy as np, multibody as mb, pinocchio as pin
    >>> robot = mb.load_urdf(V_URDF, floating=True)       # a free base with two arms: jb, ja (continuous)
    >>> pm = pin.buildModelFromXML(V_URDF, pin.JointModelFreeFlyer())
    >>> q = np.array([1, 2, 3,  np.cos(0.5), 0, 0, np.sin(0.5),  0.3, 2.0])
    >>> np.allclose(mb.pinocchio.from_pinocchio_q(robot, pm, mb.pinocchio.to_pinocchio_q(robot, pm, q)), q)
    True
    """
    return _from_q(_Map(model, pin_model), model, q_pin, "q_pin")


def _from_q(mp, model, q_pin, name):
    qp = _last(name, q_pin, mp.nq, "Pinocchio positions")
    out = np.zeros(qp.shape[:-1] + (model.nq,))
    for qs, _, kind, pq, _ in mp.joints:
        if kind == "plain":
            out[..., qs] = qp[..., pq]
        elif kind == "unbounded":
            out[..., qs] = np.arctan2(qp[..., pq + 1], qp[..., pq])
        elif kind == "spherical":
            out[..., qs], out[..., qs + 1:qs + 4] = qp[..., pq + 3], qp[..., pq:pq + 3]
        elif kind == "free":
            out[..., qs:qs + 3] = qp[..., pq:pq + 3]
            out[..., qs + 3], out[..., qs + 4:qs + 7] = qp[..., pq + 6], qp[..., pq + 3:pq + 6]
        else:  # planar
            out[..., qs:qs + 2] = qp[..., pq:pq + 2]
            out[..., qs + 2] = np.arctan2(qp[..., pq + 3], qp[..., pq + 2])
    return out


def to_pinocchio_v(model, pin_model, x) -> np.ndarray:
    """Pinocchio's ordering of a velocity-space vector of ours: q̇, q̈ or τ.

    A permutation: joints into Pinocchio's order, a free joint's halves swapped ([ω; v] → [v; ω];
    both in body coordinates, Pinocchio's LOCAL). A Jacobian J of ours (rows [ω; v]) and
    Pinocchio's J_pin (rows [v; ω]) satisfy ``J == J_pin[..., [3, 4, 5, 0, 1, 2], :] @ P`` with
    ``P = to_pinocchio_v(model, pin_model, I).T``.

    Parameters
    ----------
    model : Model
        Our numeric model, e.g. ``mb.load_urdf(path)``.
    pin_model : pinocchio.Model
        Pinocchio's model of the same robot (``pin.buildModelFromUrdf(path)``, with
        ``pin.JointModelFreeFlyer()`` for a floating base); joints are matched by name.
    x : array_like, shape (..., model.nv)
        Velocities (rad/s, m/s), accelerations or generalized forces (N·m, N) in our order.

    Returns
    -------
    x_pin : ndarray, shape (..., pin_model.nv)

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`, ``pin_model`` not a pinocchio.Model, ``x`` not real numbers.
    ValueError
        ``model`` is symbolic; ``pin_model`` lacks one of our joints, has one we lack, or a joint
        of another kind; ``x`` whose last dimension is wrong, NaN or inf.

    Examples
    --------
    >>> import numpy as np, multibody as mb, pinocchio as pin
    >>> robot = mb.load_urdf(V_URDF, floating=True)       # a free base with two arms: jb, ja (continuous)
    >>> pm = pin.buildModelFromXML(V_URDF, pin.JointModelFreeFlyer())
    >>> mb.pinocchio.to_pinocchio_v(robot, pm, np.arange(8.0)).tolist()   # [ω; v] → [v; ω]; jb, ja → ja, jb
    [3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 7.0, 6.0]
    """
    return _to_v(_Map(model, pin_model), model, x, "x")


def _to_v(mp, model, x, name):
    x = _last(name, x, model.nv, "velocity-space values")
    out = np.empty(x.shape[:-1] + (mp.nv,))
    out[..., mp.vp] = x
    return out


def from_pinocchio_v(model, pin_model, x_pin) -> np.ndarray:
    """Our ordering of Pinocchio's velocity-space vector ``x_pin`` (v, a or τ): the inverse
    permutation of :func:`to_pinocchio_v`.

    Parameters
    ----------
    model : Model
        Our numeric model, e.g. ``mb.load_urdf(path)``.
    pin_model : pinocchio.Model
        Pinocchio's model of the same robot (``pin.buildModelFromUrdf(path)``, with
        ``pin.JointModelFreeFlyer()`` for a floating base); joints are matched by name.
    x_pin : array_like, shape (..., pin_model.nv)
        Pinocchio's velocities, accelerations or generalized forces.

    Returns
    -------
    x : ndarray, shape (..., model.nv)

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`, ``pin_model`` not a pinocchio.Model, ``x_pin`` not real numbers.
    ValueError
        ``model`` is symbolic; ``pin_model`` lacks one of our joints, has one we lack, or a joint
        of another kind; ``x_pin`` whose last dimension is wrong, NaN or inf.

    Examples
    --------
    >>> import numpy as np, multibody as mb, pinocchio as pin
    >>> robot = mb.load_urdf(V_URDF, floating=True)       # a free base with two arms: jb, ja (continuous)
    >>> pm = pin.buildModelFromXML(V_URDF, pin.JointModelFreeFlyer())
    >>> mb.pinocchio.from_pinocchio_v(robot, pm, [3, 4, 5, 0, 1, 2, 7, 6]).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """
    return _from_v(_Map(model, pin_model), x_pin, "x_pin")


def _from_v(mp, x_pin, name):
    return _last(name, x_pin, mp.nv, "Pinocchio velocity-space values")[..., mp.vp]


def to_pinocchio_state(model, pin_model, q, qd, qdd=None):
    """Pinocchio's ``(q, v)`` — and ``a`` when ``qdd`` is given — for our (q, q̇[, q̈]).

    :func:`to_pinocchio_q` and :func:`to_pinocchio_v` in one call.

    Parameters
    ----------
    model : Model
        Our numeric model, e.g. ``mb.load_urdf(path)``.
    pin_model : pinocchio.Model
        Pinocchio's model of the same robot (``pin.buildModelFromUrdf(path)``, with
        ``pin.JointModelFreeFlyer()`` for a floating base); joints are matched by name.
    q : array_like, shape (..., model.nq)
        Our joint positions.
    qd : array_like, shape (..., model.nv)
        Our joint velocities.
    qdd : array_like, shape (..., model.nv), optional
        Our joint accelerations.

    Returns
    -------
    tuple of ndarray
        ``(q_pin, v_pin)``, or ``(q_pin, v_pin, a_pin)`` with ``qdd``.

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`, ``pin_model`` not a pinocchio.Model, ``q``, ``qd`` or ``qdd`` not real numbers.
    ValueError
        ``model`` is symbolic; ``pin_model`` lacks one of our joints, has one we lack, or a joint
        of another kind; ``q``, ``qd`` or ``qdd`` whose last dimension is wrong, NaN or inf.

    Examples
    --------
    >>> import numpy as np, multibody as mb, pinocchio as pin
    >>> robot = mb.load_urdf(V_URDF, floating=True)
    >>> pm = pin.buildModelFromXML(V_URDF, pin.JointModelFreeFlyer())
    >>> q = np.array([1, 2, 3,  np.cos(0.5), 0, 0, np.sin(0.5),  0.3, np.pi / 2])   # ja continuous
    >>> q_pin, v_pin = mb.pinocchio.to_pinocchio_state(robot, pm, q, np.arange(8.0))
    >>> q_pin.round(6).tolist()                    # [x y z qx qy qz w], then ja as [cos, sin], then jb
    [1.0, 2.0, 3.0, 0.0, 0.0, 0.479426, 0.877583, 0.0, 1.0, 0.3]
    >>> v_pin.tolist()                             # [v; ω] of the base, then ja, jb
    [3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 7.0, 6.0]
    >>> np.allclose(pin.rnea(pm, pm.createData(), q_pin, v_pin, v_pin),
    ...             mb.pinocchio.to_pinocchio_v(robot, pm, mb.rnea(robot, q, np.arange(8.0), np.arange(8.0))))
    True
    """
    mp = _Map(model, pin_model)
    q_pin, v_pin = _to_q(mp, model, q, "q"), _to_v(mp, model, qd, "qd")
    return (q_pin, v_pin) if qdd is None else (q_pin, v_pin, _to_v(mp, model, qdd, "qdd"))


def from_pinocchio_state(model, pin_model, q_pin, v_pin, a_pin=None):
    """Our ``(q, q̇)`` — and ``q̈`` when ``a_pin`` is given — for Pinocchio's (q, v[, a]).

    :func:`from_pinocchio_q` and :func:`from_pinocchio_v` in one call.

    Parameters
    ----------
    model : Model
        Our numeric model, e.g. ``mb.load_urdf(path)``.
    pin_model : pinocchio.Model
        Pinocchio's model of the same robot (``pin.buildModelFromUrdf(path)``, with
        ``pin.JointModelFreeFlyer()`` for a floating base); joints are matched by name.
    q_pin : array_like, shape (..., pin_model.nq)
        Pinocchio's configuration.
    v_pin : array_like, shape (..., pin_model.nv)
        Pinocchio's velocity.
    a_pin : array_like, shape (..., pin_model.nv), optional
        Pinocchio's acceleration.

    Returns
    -------
    tuple of ndarray
        ``(q, qd)``, or ``(q, qd, qdd)`` with ``a_pin``.

    Raises
    ------
    TypeError
        ``model`` is not a :class:`multibody.Model`, ``pin_model`` not a pinocchio.Model, ``q_pin``, ``v_pin`` or ``a_pin`` not real numbers.
    ValueError
        ``model`` is symbolic; ``pin_model`` lacks one of our joints, has one we lack, or a joint
        of another kind; ``q_pin``, ``v_pin`` or ``a_pin`` whose last dimension is wrong, NaN or inf.

    Examples
    --------
    >>> import numpy as np, multibody as mb, pinocchio as pin
    >>> robot = mb.load_urdf(V_URDF, floating=True)       # a free base with two arms: jb, ja (continuous)
    >>> pm = pin.buildModelFromXML(V_URDF, pin.JointModelFreeFlyer())
    >>> q, qd = mb.pinocchio.from_pinocchio_state(robot, pm, pin.neutral(pm), np.arange(8.0))
    >>> q.tolist(), qd.tolist()
    ([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 7.0, 6.0])
    """
    mp = _Map(model, pin_model)
    q, qd = _from_q(mp, model, q_pin, "q_pin"), _from_v(mp, v_pin, "v_pin")
    return (q, qd) if a_pin is None else (q, qd, _from_v(mp, a_pin, "a_pin"))
