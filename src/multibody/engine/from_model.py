"""A tree :class:`~multibody.Model` as engine bodies and joints, and the way back to (q, q̇).

The OpenDE report (ch. 5) runs one double pendulum in generalized coordinates (Matlab) and in
maximal coordinates (OpenDE); here both run from the same Model.

>>> import numpy as np, multibody as mb
>>> from multibody.engine import World
>>> model = mb.models.double_pendulum()
>>> world = World.from_model(model, [np.pi / 4, -np.pi / 4], [0.5, -1.0])
>>> np.round(world.joint_positions(), 12).tolist(), np.round(world.joint_velocities(), 12).tolist()
([0.785398163397, -0.785398163397], [0.5, -1.0])
"""
from __future__ import annotations

import numpy as np

from ..kinematics.forward import body_states
from ..model.geometry import hull_points
from ..model.joints import JointType
import warnings

from .shapes import Box, Capsule, Convex, Cylinder, Sphere
from .world import matrix_to_quat

_SHAPES = {"box": lambda s: Box(*s), "sphere": lambda s: Sphere(s[0]), "cylinder": lambda s: Cylinder(s[0], s[1]),
           "capsule": lambda s: Capsule(s[0], s[1])}


def mesh_hull(geometry):
    """The convex hull of a collision mesh (trimesh reads STL, OBJ, PLY, and DAE with pycollada),
    or None with a warning saying why it was left out.  A hull of more than HULL_MAX_VERTICES
    vertices keeps that many of them, spread by farthest-point sampling (with a warning)."""
    where = f"collision mesh {geometry.name!r}" + (f" ({geometry.mesh})" if geometry.mesh else "")
    if geometry.mesh is None:
        warnings.warn(f"{where}: has no file (inline MJCF vertices are not read); left out of the engine world",
                      stacklevel=3)
        return None
    try:
        import trimesh
        mesh = trimesh.load(str(geometry.mesh), force="mesh")
        points = np.asarray(mesh.vertices, dtype=float) * np.asarray(geometry.scale, dtype=float)
        if len(points) == 0:
            raise ValueError("no vertices")
    except Exception as e:  # a missing reader (pycollada for DAE) or an unreadable file
        warnings.warn(f"{where}: trimesh could not read {geometry.mesh!r} ({type(e).__name__}: {e}); "
                      "left out of the engine world", stacklevel=3)
        return None
    try:
        return Convex(hull_points(points, where, stacklevel=4))
    except Exception as e:
        warnings.warn(f"{where}: no convex hull ({e}); left out of the engine world", stacklevel=3)
        return None


class ModelMap:
    """Which engine joint and bodies stand for each Model joint, and the values at attach time."""

    def __init__(self, model, q0, joints):
        self.model, self.q0, self.joints = model, np.array(q0, dtype=float), joints

    def _frames(self, world, i):
        """(R, p, ω, v_origin) of Model body i's frame (origin, not centre of mass), world axes."""
        b = world.bodies[i]
        R = b.rotation
        c = R @ self.model.com[i]
        w = b.angular_velocity
        return R, b.position - c, w, b.velocity - np.cross(w, c)

    def _joint_frame(self, world, i):
        p = self.model.parent[i]
        A, r = self.model.tree_rotation[i], self.model.tree_translation[i]
        if p < 0:
            return A, r.copy(), np.zeros(3), np.zeros(3), np.zeros(3)
        Rp, pp, wp, vp = self._frames(world, p)
        return Rp @ A, pp + Rp @ r, wp, vp, pp

    def positions(self, world):
        m = self.model
        q = np.empty(m.nq)
        coords = world._joint_coords()[0]
        for i in range(m.nb):
            s, jt = m.q_start[i], JointType(m.jtype[i])
            if jt in (JointType.REVOLUTE, JointType.PRISMATIC):
                q[s] = self.q0[s] + coords[self.joints[i].index, 0]
            elif jt in (JointType.SPHERICAL, JointType.FREE):
                RJ, pJ, *_ = self._joint_frame(world, i)
                R, p, *_ = self._frames(world, i)
                quat = matrix_to_quat(RJ.T @ R)
                if jt == JointType.SPHERICAL:
                    q[s:s + 4] = quat
                else:
                    q[s:s + 3] = RJ.T @ (p - pJ)
                    q[s + 3:s + 7] = quat
        return q

    def velocities(self, world):
        m = self.model
        qd = np.empty(m.nv)
        rates = world._joint_coords()[1]
        for i in range(m.nb):
            s, jt = m.v_start[i], JointType(m.jtype[i])
            if jt in (JointType.REVOLUTE, JointType.PRISMATIC):
                qd[s] = rates[self.joints[i].index, 0]
            elif jt in (JointType.SPHERICAL, JointType.FREE):
                RJ, pJ, wJ, vJ, pp = self._joint_frame(world, i)
                R, p, w, v = self._frames(world, i)
                if m.parent[i] >= 0:
                    vJ = vJ + np.cross(wJ, p - pp)   # parent-fixed point at the child's origin
                qd[s:s + 3] = R.T @ (w - wJ)
                if jt == JointType.FREE:
                    qd[s + 3:s + 6] = R.T @ (v - vJ)
        return qd


#: joint types the engine has a constraint for (a free joint is no constraint at all)
ENGINE_JOINTS = frozenset({JointType.REVOLUTE, JointType.PRISMATIC, JointType.SPHERICAL, JointType.FIXED,
                           JointType.FREE})


def build_world(cls, model, q, qd=None, self_collision=False, **world_kw):
    if model.is_symbolic:
        raise ValueError("model: expected a numeric Model (call model.subs(...) first)")
    q = np.asarray(q, dtype=float)
    if q.shape != (model.nq,) or not np.all(np.isfinite(q)):
        raise ValueError(f"q: expected {model.nq} finite numbers, got shape {q.shape}")
    qd = np.zeros(model.nv) if qd is None else np.asarray(qd, dtype=float)
    if qd.shape != (model.nv,) or not np.all(np.isfinite(qd)):
        raise ValueError(f"qd: expected {model.nv} finite numbers, got shape {qd.shape}")
    for i, t in enumerate(model.jtype):
        if JointType(t) not in ENGINE_JOINTS:      # named positively: a new joint type is refused, never dropped
            raise ValueError(f"model: joint {model.joint_names[i]!r} is {JointType(t).name.lower()}; the engine "
                             "takes revolute, prismatic, spherical, fixed and free joints")
    world_kw.setdefault("gravity", model.gravity)
    world = cls(**world_kw)
    st = body_states(model, q, qd)
    joints = []
    for i in range(model.nb):
        R, p = st.R[i], st.p[i]
        w_b, v_b = st.v[i, :3], st.v[i, 3:]
        c = model.com[i]
        if not model.mass[i] > 0:
            raise ValueError(f"model: body {model.body_names[i]!r} has mass {model.mass[i]}; every engine body "
                             "needs a positive mass")
        world.add_body(mass=model.mass[i], inertia=model.inertia_com[i], position=p + R @ c,
                       quaternion=matrix_to_quat(R), velocity=R @ (v_b + np.cross(w_b, c)),
                       angular_velocity=R @ w_b, name=model.body_names[i])
    for i in range(model.nb):
        jt, par = JointType(model.jtype[i]), model.parent[i]
        body2 = None if par < 0 else world.bodies[par]
        R, p = st.R[i], st.p[i]
        axis = R @ model.jaxis[i]
        name = model.joint_names[i]
        if jt == JointType.REVOLUTE:
            joints.append(world.add_hinge(world.bodies[i], body2, anchor=p, axis=axis, name=name))
        elif jt == JointType.PRISMATIC:
            joints.append(world.add_slider(world.bodies[i], body2, axis=axis, name=name))
        elif jt == JointType.SPHERICAL:
            joints.append(world.add_ball(world.bodies[i], body2, anchor=p, name=name))
        elif jt == JointType.FIXED:
            joints.append(world.add_fixed(world.bodies[i], body2, name=name))
        else:
            joints.append(None)
    from . import _engine as C
    # A robot's collision meshes often overlap where links meet (the Panda's fingers, links 5 and
    # 7 at rest): unless self_collision, its bodies share one collision group (PyBullet's default).
    group = 0 if self_collision else 1 + int(max(world._gdat[:, C.GD_GROUP], default=0))
    hulls = {}                  # one hull per mesh file and scale
    for g in model.geometries:
        if g.role != "collision" or g.kind not in (*_SHAPES, "mesh"):
            continue
        if g.kind == "mesh":
            key = (g.mesh, tuple(g.scale))
            if key not in hulls:
                hulls[key] = mesh_hull(g)
            shape = hulls[key]
            if shape is None:
                continue
        else:
            shape = _SHAPES[g.kind](g.size)
        R = np.eye(3) if g.rotation is None else np.asarray(g.rotation, float)
        t = np.zeros(3) if g.translation is None else np.asarray(g.translation, float)
        geom = world.add_geom(shape, world.bodies[g.body], position=t - model.com[g.body], quaternion=matrix_to_quat(R))
        world._gdat[geom.index, C.GD_GROUP] = group
    for i, j in enumerate(joints):              # the model's joint limits as stops (angles from q), damping, friction
        if j is not None and JointType(model.jtype[i]) in (JointType.REVOLUTE, JointType.PRISMATIC):
            s = model.q_start[i]
            lo, hi = model.q_lower[s] - q[s], model.q_upper[s] - q[s]
            if np.isfinite(lo) or np.isfinite(hi):
                j.set_limits(lo, hi)
            # its damping and Coulomb friction, as mb.simulate applies them: viscous damping
            # (implicit), friction as a motor holding the rate at 0 with at most that force
            v = model.v_start[i]
            if model.damping is not None and model.damping[v] > 0:
                j.set_damping(model.damping[v])
            if model.friction is not None and model.friction[v] > 0:
                j.set_motor(0.0, model.friction[v])
    world._model_map = ModelMap(model, q, joints)
    return world


__all__ = ["build_world", "ModelMap", "mesh_hull"]
