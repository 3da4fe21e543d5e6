"""Build the Pinocchio twin of a multibody Model with Pinocchio's own API, and convert states.

Used only by tests: Pinocchio is the peer we check against. Conventions converted here, never in
the core: free-flyer q = [x y z qx qy qz qw], v = [v; ω]; spherical q = [qx qy qz qw];
planar q = [x y cosθ sinθ].
"""
import numpy as np
import pinocchio as pin

from multibody.model.joints import JointType


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
        else:
            raise ValueError("pin_twin: fixed joints have no Pinocchio twin here (the URDF test compares fixed joints)")
        parent = 0 if model.parent[i] < 0 else ids[model.parent[i]]
        placement = pin.SE3(model.tree_rotation[i], model.tree_translation[i])
        jid = pm.addJoint(parent, jm, placement, model.joint_names[i])
        pm.appendBodyToJoint(jid, pin.Inertia(model.mass[i], model.com[i], model.inertia_com[i]), pin.SE3.Identity())
        ids[i] = jid
    return pm


def q_to_pin(model, q):
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
