"""The Pinocchio twin of a multibody Model, built with Pinocchio's own API, and state conversion.

Pinocchio is the peer the tests and benchmarks check against (an optional dependency, imported
here on use).  Conventions are converted here, never in the core: free-flyer q = [x y z qx qy qz
qw], v = [v; ω]; spherical q = [qx qy qz qw]; planar q = [x y cosθ sinθ].  Bodies on fixed joints
have no Pinocchio joint: they may only be massless leaves (frames), which are left out.
"""
from __future__ import annotations

import numpy as np

from ..model.joints import JointType


def dfs_order(model):
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


def to_pinocchio(model):
    """pin.Model with the same joints (depth-first, see :func:`dfs_order`), placements and inertias."""
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    ids = [None] * model.nb
    for i in dfs_order(model):
        jt = JointType(model.jtype[i])
        a = model.jaxis[i]
        if jt == JointType.REVOLUTE:
            jm = pin.JointModelRevoluteUnaligned(a)
        elif jt == JointType.PRISMATIC:
            jm = pin.JointModelPrismaticUnaligned(a)
        elif jt == JointType.HELICAL:
            jm = pin.JointModelHelicalUnaligned(a, model.jpitch[i])
        elif jt == JointType.SPHERICAL:
            jm = pin.JointModelSpherical()
        elif jt == JointType.FREE:
            jm = pin.JointModelFreeFlyer()
        elif jt == JointType.PLANAR:
            jm = pin.JointModelPlanar()
        elif model.mass[i] == 0 and not any(model.parent[j] == i for j in range(model.nb)):
            continue  # a massless leaf on a fixed joint: a frame, nothing to simulate
        else:
            raise ValueError(f"pin_twin: body {model.body_names[i]!r} on a {jt.name} joint has mass or children; "
                             "only massless leaves may hang on fixed joints here")
        parent = 0 if model.parent[i] < 0 else ids[model.parent[i]]
        placement = pin.SE3(model.tree_rotation[i], model.tree_translation[i])
        jid = pm.addJoint(parent, jm, placement, model.joint_names[i])
        pm.appendBodyToJoint(jid, pin.Inertia(model.mass[i], model.com[i], model.inertia_com[i]), pin.SE3.Identity())
        ids[i] = jid
    return pm


def q_to_pin(model, q):
    """Our configuration in Pinocchio's joint order and conventions."""
    out = []
    for i in dfs_order(model):
        jt, s = JointType(model.jtype[i]), model.q_start[i]
        if jt == JointType.FREE:
            out += list(q[s:s + 3]) + list(q[s + 4:s + 7]) + [q[s + 3]]
        elif jt == JointType.SPHERICAL:
            out += list(q[s + 1:s + 4]) + [q[s]]
        elif jt == JointType.PLANAR:
            out += [q[s], q[s + 1], np.cos(q[s + 2]), np.sin(q[s + 2])]
        else:
            out += list(q[s:s + model.nq_joint[i]])
    return np.array(out)


def v_perm(model):
    """Index array p with v_pin = v[p] (free joints swap [ω; v] into [v; ω])."""
    p = []
    for i in dfs_order(model):
        s = model.v_start[i]
        if model.jtype[i] == JointType.FREE:
            p += [s + 3, s + 4, s + 5, s, s + 1, s + 2]
        else:
            p += list(range(s, s + model.nv_joint[i]))
    return np.array(p, dtype=int)


def random_state(model, rng):
    """(q, q̇, q̈) with angles in [−π, π], unit quaternions and normal rates."""
    q = []
    for i in range(model.nb):
        jt = JointType(model.jtype[i])
        if jt in (JointType.SPHERICAL, JointType.FREE):
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)
            q += (list(rng.normal(size=3)) if jt == JointType.FREE else []) + list(quat)
        else:
            q += list(rng.uniform(-np.pi, np.pi, size=model.nq_joint[i]))
    return np.array(q), rng.normal(size=model.nv), rng.normal(size=model.nv)


def pinocchio_twin(model):
    """(pin.Model, perm) with v_pin = v[perm], or None when Pinocchio is not installed."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return None
    return to_pinocchio(model), v_perm(model)
