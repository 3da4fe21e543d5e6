"""Sensors (MJCF ``<sensor>``) as model data: ``model.sensors``, a tuple of :class:`Sensor`.

MuJoCo's compiler has already resolved each sensor (``mjModel.sensor_*``: its type, the object
it reads, a reference frame, dim, cutoff); this module keeps the ones it can compute from a
state of this library's model, each as a record naming what it reads in *our* bodies:

* the joint sensors ``jointpos``, ``jointvel``, ``ballquat``, ``ballangvel`` — an index into q or q̇
  (q is MuJoCo's qpos, and q̇ is qvel for hinge, slide and ball joints);
* ``actuatorfrc`` — a row of ``model.actuators``;
* the frame sensors ``framepos``, ``framequat``, ``framexaxis``/``y``/``z``, ``framelinvel``,
  ``frameangvel`` (object and optional reference: a site, geom, camera, body — MuJoCo's *inertial*
  frame — or xbody) and the site sensors ``gyro``, ``velocimeter``, ``accelerometer`` — a frame
  ``(body, R, r)`` fixed in one of our bodies (−1: the fixed base);
* ``subtreecom``, ``subtreelinvel``, ``subtreeangmom`` and the site's ``force`` and ``torque`` —
  the *parts* of MuJoCo's subtree: every MuJoCo body below and including the sensed one, each as
  (our body, mass, centre of mass, rotational inertia) — so that a body welded into its parent
  keeps its own subtree, as in MuJoCo;
* ``touch`` — the site's zone (shape, size) and the names of the geoms on its MuJoCo body.

The values are computed by :func:`multibody.sensors` (``kinematics/sensors.py``) for a state, and
``traj.sensordata`` for a recorded run.  ``address`` is each sensor's first column in that data
(``nsensordata`` = the sum of dims); it is MuJoCo's ``sensor_adr`` when every sensor of the file
is kept.  ``cutoff`` is applied as MuJoCo does (real data clipped to ±cutoff, positive data
(touch) to at most cutoff, axes and quaternions never); ``noise`` is kept as written and not
applied (MuJoCo adds it only with its ``sensornoise`` flag).  Any other sensor type (rangefinder,
tendon, limit, contact, camera projection, user, plugin sensors, a camera that is not fixed to its
body) is skipped with one :class:`~multibody.model.mjcf.MJCFWarning` naming each element and
where it was written.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["Sensor", "KINDS", "from_mjmodel_sensors", "sensor_names"]

# the kinds kept, with the stage their value needs: a position, a velocity, or an acceleration
# (q̈ and the contact forces, MuJoCo's mjSTAGE_ACC)
KINDS = {"jointpos": "pos", "ballquat": "pos", "framepos": "pos", "framequat": "pos", "framexaxis": "pos",
         "frameyaxis": "pos", "framezaxis": "pos", "subtreecom": "pos",
         "jointvel": "vel", "ballangvel": "vel", "framelinvel": "vel", "frameangvel": "vel", "gyro": "vel",
         "velocimeter": "vel", "subtreelinvel": "vel", "subtreeangmom": "vel",
         "accelerometer": "acc", "force": "acc", "torque": "acc", "touch": "acc", "actuatorfrc": "acc"}
ZONES = ("sphere", "capsule", "ellipsoid", "cylinder", "box")   # the site shapes a touch zone can have


def _ro(a, dtype=float):
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Sensor:
    """One sensor of ``model.sensors`` (module notes).

    ``name``, ``type`` (MuJoCo's name: "gyro", "framepos", …), ``dim``, ``address`` (first column
    in the sensor data), ``cutoff`` (0: none), ``datatype`` ("real", "positive", "axis",
    "quaternion"), ``noise`` (kept, not applied).  What it reads: ``index`` (a q or q̇ index, or an
    actuator row); ``frame`` and ``reference`` ((body, R (3, 3), r (3,)): a frame fixed in our body,
    −1 the fixed base); ``parts`` ((body (P,), mass (P,), com (P, 3), inertia (P, 3, 3)) in our
    bodies' coordinates: MuJoCo's subtree); ``zone`` (shape, half sizes (3,)) and ``geoms`` (geom
    names) for touch, force and torque.

    Example
    -------
    >>> import multibody as mb
    >>> m = mb.load_mjcf('''<mujoco><worldbody><body><joint name="j"/><geom size=".1"/><site name="s"/>
    ...   </body></worldbody><sensor><jointpos joint="j"/><gyro name="g" site="s"/></sensor></mujoco>''')
    >>> [(s.name, s.type, s.dim, s.address) for s in m.sensors]
    [('sensor0', 'jointpos', 1, 0), ('g', 'gyro', 3, 1)]
    """
    name: str
    type: str
    dim: int
    address: int
    cutoff: float = 0.0
    datatype: str = "real"
    noise: float = 0.0
    index: int = -1
    frame: tuple | None = None
    reference: tuple | None = None
    parts: tuple | None = None
    zone: tuple | None = None
    geoms: tuple = ()

    def __post_init__(self):
        if self.type not in KINDS:
            raise ValueError(f"sensor {self.name!r}: type {self.type!r} is not one of {sorted(KINDS)}")
        if self.datatype not in ("real", "positive", "axis", "quaternion"):
            raise ValueError(f"sensor {self.name!r}: datatype {self.datatype!r}")
        if not (np.isfinite(self.cutoff) and self.cutoff >= 0):
            raise ValueError(f"sensor {self.name!r}: cutoff must be ≥ 0 (0: none), got {self.cutoff!r}")
        for k in ("frame", "reference"):
            f = getattr(self, k)
            if f is not None:
                object.__setattr__(self, k, (int(f[0]), _ro(np.reshape(f[1], (3, 3))), _ro(np.reshape(f[2], (3,)))))
        if self.parts is not None:
            b, m, c, inertia = self.parts
            n = len(b)
            object.__setattr__(self, "parts", (_ro(b, np.int64), _ro(m), _ro(np.reshape(c, (n, 3))),
                                               _ro(np.reshape(inertia, (n, 3, 3)))))
        if self.zone is not None:
            if self.zone[0] not in ZONES:
                raise ValueError(f"sensor {self.name!r}: zone shape {self.zone[0]!r} is not one of {ZONES}")
            object.__setattr__(self, "zone", (self.zone[0], _ro(np.reshape(self.zone[1], (3,)))))
        object.__setattr__(self, "geoms", tuple(str(g) for g in self.geoms))

    @property
    def stage(self):
        """"pos", "vel" or "acc": what the value needs (q; q and q̇; also q̈ and the contact forces)."""
        return KINDS[self.type]

    def bodies(self):
        """Our bodies the sensor reads (for a check that it fits a model)."""
        out = [f[0] for f in (self.frame, self.reference) if f is not None]
        if self.parts is not None:
            out += [int(b) for b in self.parts[0]]
        return out

    def __repr__(self):
        return f"Sensor({self.name!r}, {self.type!r}, dim={self.dim}, address={self.address})"


def sensor_names(sensors):
    """{name: sensor} of a sensor tuple."""
    return {s.name: s for s in sensors}


def _rotation(quat):
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def from_mjmodel_sensors(mj, attach, actuators, label, elements, warning):
    """The sensors of a compiled ``mujoco.MjModel`` this library computes, as a tuple of Sensor.

    ``attach[b]`` = (k, A, r): MuJoCo body b's frame in our body k (as ``load_mjcf`` builds it);
    ``actuators``: the model's Actuators (or None), to find an ``actuatorfrc`` sensor's row;
    ``elements``: the <sensor> children with where they were written (``mjcf._section_children``),
    or None; ``warning``: the class of the one warning that lists the sensors skipped."""
    import mujoco
    if mj.nsensor == 0 or mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_SENSOR:
        return ()
    O, J = mujoco.mjtObj, mujoco.mjtJoint
    lines = [w for w, _ in elements] if elements is not None and len(elements) == mj.nsensor else [None] * mj.nsensor
    T = mujoco.mjtDataType
    datatypes = {int(T.mjDATATYPE_REAL): "real", int(T.mjDATATYPE_POSITIVE): "positive",
                 int(T.mjDATATYPE_AXIS): "axis", int(T.mjDATATYPE_QUATERNION): "quaternion"}
    zones = {int(getattr(mujoco.mjtGeom, f"mjGEOM_{z.upper()}")): z for z in ZONES}
    children = {}
    for b in range(1, mj.nbody):
        children.setdefault(int(mj.body_parentid[b]), []).append(b)

    def subtree(b):
        out, todo = [], [b]
        while todo:
            c = todo.pop()
            out.append(c)
            todo.extend(children.get(c, []))
        return sorted(out)

    def fixed(k, A, r, quat, pos):
        return (k, A @ _rotation(quat), A @ np.asarray(pos, float) + r)

    def frame_of(objtype, i):
        """(body, R, r) of MuJoCo object i in our body, or a reason it cannot be one."""
        if objtype == O.mjOBJ_SITE:
            return fixed(*attach[int(mj.site_bodyid[i])], mj.site_quat[i], mj.site_pos[i])
        if objtype == O.mjOBJ_GEOM:
            return fixed(*attach[int(mj.geom_bodyid[i])], mj.geom_quat[i], mj.geom_pos[i])
        if objtype == O.mjOBJ_XBODY:
            return attach[int(i)]
        if objtype == O.mjOBJ_BODY:   # MuJoCo's "body" frame is its inertial frame (xipos, ximat)
            return fixed(*attach[int(i)], mj.body_iquat[i], mj.body_ipos[i])
        if objtype == O.mjOBJ_CAMERA:
            if int(mj.cam_mode[i]) != int(mujoco.mjtCamLight.mjCAMLIGHT_FIXED):
                return "a camera that tracks or targets (its pose is not fixed in a body)"
            return fixed(*attach[int(mj.cam_bodyid[i])], mj.cam_quat[i], mj.cam_pos[i])
        return f"object type {mujoco.mjtObj(int(objtype)).name}"

    def parts_of(b):
        rows = []
        for c in subtree(b):
            if mj.body_mass[c] <= 0:
                continue
            k, A, r = attach[c]
            Rin = A @ _rotation(mj.body_iquat[c])
            rows.append((k, float(mj.body_mass[c]), A @ mj.body_ipos[c] + r, Rin @ np.diag(mj.body_inertia[c]) @ Rin.T))
        return ([x[0] for x in rows], [x[1] for x in rows], np.reshape([x[2] for x in rows], (-1, 3)),
                np.reshape([x[3] for x in rows], (-1, 3, 3)))

    def geoms_on(bodies):
        return tuple(mujoco.mj_id2name(mj, O.mjOBJ_GEOM, g) or f"geom{g}" for g in range(mj.ngeom)
                     if int(mj.geom_bodyid[g]) in bodies)

    out, skipped, address = [], [], 0
    for i in range(mj.nsensor):
        kind = mujoco.mjtSensor(int(mj.sensor_type[i])).name.removeprefix("mjSENS_").lower()
        name = mujoco.mj_id2name(mj, O.mjOBJ_SENSOR, i) or f"sensor{i}"
        where = f"<{kind}> {name!r}" + (f" ({lines[i]})" if lines[i] else "")
        objtype, obj = int(mj.sensor_objtype[i]), int(mj.sensor_objid[i])
        kw, why = {}, None
        if kind not in KINDS:
            why = "a sensor type this library does not compute"
        elif kind in ("jointpos", "ballquat"):
            kw["index"] = int(mj.jnt_qposadr[obj])
        elif kind in ("jointvel", "ballangvel"):
            if int(mj.jnt_type[obj]) == int(J.mjJNT_FREE):
                why = "a free joint"
            kw["index"] = int(mj.jnt_dofadr[obj])
        elif kind == "actuatorfrc":
            rows = [] if actuators is None else np.flatnonzero(actuators.mujoco_index == obj)
            if len(rows) == 0:
                why = "its actuator is not kept (model.actuators)"
            else:
                kw["index"] = int(rows[0])
        elif kind in ("subtreecom", "subtreelinvel", "subtreeangmom"):
            kw["parts"] = parts_of(obj)
            kw["frame"] = frame_of(O.mjOBJ_BODY, obj)     # a massless subtree's "centre": its body's xipos
        else:
            f = frame_of(objtype, obj)
            if isinstance(f, str):
                why = f
            else:
                kw["frame"] = f
            if int(mj.sensor_refid[i]) >= 0:
                ref = frame_of(int(mj.sensor_reftype[i]), int(mj.sensor_refid[i]))
                if isinstance(ref, str):
                    why = f"reference: {ref}"
                else:
                    kw["reference"] = ref
            if kind in ("force", "torque"):
                b = int(mj.site_bodyid[obj])
                kw["parts"] = parts_of(b)
                kw["geoms"] = geoms_on(set(subtree(b)))
            elif kind == "touch":
                st = int(mj.site_type[obj])
                if st not in zones:
                    why = f"its site's shape {mujoco.mjtGeom(st).name} has no zone"
                else:
                    kw["zone"] = (zones[st], np.array(mj.site_size[obj], float))
                    kw["geoms"] = geoms_on({int(mj.site_bodyid[obj])})
        if why:
            skipped.append(f"{where}: {why}")
            continue
        dim = int(mj.sensor_dim[i])
        out.append(Sensor(name=name, type=kind, dim=dim, address=address, cutoff=float(mj.sensor_cutoff[i]),
                          datatype=datatypes[int(mj.sensor_datatype[i])], noise=float(mj.sensor_noise[i]), **kw))
        address += dim
    if skipped:
        warnings.warn(f"{label}: sensors not kept (skipped): {'; '.join(skipped[:12])}"
                      f"{f' … ({len(skipped)} in all)' if len(skipped) > 12 else ''}", warning, stacklevel=4)
    return tuple(out)
