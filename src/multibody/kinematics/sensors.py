"""Sensor values of a state (MuJoCo's ``mj_sensorPos``/``Vel``/``Acc``): ``mb.sensors``.

The model's sensors (``model.sensors``, :mod:`multibody.model.sensors`) read frames fixed in its
bodies.  Every body's pose, velocity and acceleration comes from one call of the compiled
recursion (``csrc/kernels/kinematics.c``'s ``mb_body_states``) for the whole batch of states, and
each sensor follows by a rigid shift (RBDA §2.8) in NumPy, batched over the states — no Python
loop over samples.  With [ω; v] the body's velocity in its coordinates (v of its origin), a frame
F at r in body B with world pose (R_B, p_B):

* pose: R_F = R_B A_BF, p_F = p_B + R_B r;
* velocity of F's origin: R_B (v + ω × r);
* classical acceleration of F's origin: R_B (a + α × r + ω × (v + ω × r)) − g — MuJoCo's
  accelerometer feels the support holding it against gravity (a body at rest reads −g);
* a subtree (``subtreecom``, ``subtreelinvel``, ``subtreeangmom``): the mass-weighted sums over
  MuJoCo's bodies below the sensed one (each a *part*: our body, mass, centre of mass, inertia);
* ``force``/``torque``: the wrench the parent exerts on the site's subtree (MuJoCo's
  ``cfrc_int``): Σ over its parts of m (a_c − g) and I α + ω × I ω, less the contact forces on its
  geoms, at the site, in the site's coordinates;
* ``touch``: the sum of the normal forces of the contacts of the site's MuJoCo body whose ray
  (from the contact point along the normal, away from that body) meets the site's zone (MuJoCo's
  rule: always when the point lies inside it);
* framequat returns w ≥ 0 (q and −q are one rotation; MuJoCo's sign follows its quaternion
  products).

Cutoffs are applied as MuJoCo does (``model/sensors.py``).  The contact forces come from the
caller — a contact list and the force on each contact's geom b — or, along a run, from the
recorded ones (``traj.sensordata``); without them the state has no contact loads.
"""
from __future__ import annotations

import numpy as np

from .. import _checks
from .forward import body_states
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model

__all__ = ["sensors", "sensor_data", "nsensordata"]

MINVAL = 1e-15   # MuJoCo's mjMINVAL: a massless subtree's division


def nsensordata(model):
    """Columns of the sensor data: the sum of the sensors' dims."""
    return int(sum(s.dim for s in model.sensors))


def _cross(a, b):
    return np.cross(a, b)


def _mv(R, x):
    return np.einsum("...ij,...j->...i", R, x)


def _mtv(R, x):
    return np.einsum("...ji,...j->...i", R, x)


class _States:
    """Body poses and motions of a batch (N states), with the fixed base appended as body nb."""

    def __init__(self, model, q, v, a):
        s = body_states(model, q, v, a)
        n, nb = s.p.shape[0], model.nb
        self.R = np.concatenate([s.R, np.broadcast_to(np.eye(3), (n, 1, 3, 3))], axis=1)
        self.p = np.concatenate([s.p, np.zeros((n, 1, 3))], axis=1)
        z = np.zeros((n, 1, 6))
        self.v = None if s.v is None else np.concatenate([s.v, z], axis=1)
        self.a = None if s.a is None else np.concatenate([s.a, z], axis=1)
        self.g = np.asarray(model.gravity, dtype=float)
        self.nb = nb
        self.memo = {}   # parts and wrenches shared by sensors (a site's force and torque)

    def body(self, k):
        return self.nb if k < 0 else k

    def pose(self, f):
        k, A, r = f
        k = self.body(k)
        Rb = self.R[:, k]
        return Rb @ A, self.p[:, k] + _mv(Rb, r)

    def velocity(self, f):
        """(ω, v) of frame f's origin, world coordinates."""
        k, A, r = f
        k = self.body(k)
        Rb, w, v = self.R[:, k], self.v[:, k, :3], self.v[:, k, 3:]
        return _mv(Rb, w), _mv(Rb, v + _cross(w, r))

    def acceleration(self, f):
        """(α, a − g) of frame f's origin, world coordinates (classical, as MuJoCo's cacc with −g at the base)."""
        k, A, r = f
        k = self.body(k)
        Rb, w, v = self.R[:, k], self.v[:, k, :3], self.v[:, k, 3:]
        al, a = self.a[:, k, :3], self.a[:, k, 3:]
        return _mv(Rb, al), _mv(Rb, a + _cross(al, r) + _cross(w, v + _cross(w, r))) - self.g

    def parts(self, parts, need):
        """Per part (N, P, …): world centre of mass x, and as asked its velocity, ω, inertia I_w,
        and (α, a_c − g)."""
        key = ("parts", need) + tuple(a.tobytes() for a in parts)
        if key not in self.memo:
            self.memo[key] = self._parts(parts, need)
        return self.memo[key]

    def _parts(self, parts, need):
        b, m, c, inertia = parts
        k = np.where(b < 0, self.nb, b)
        Rb = self.R[:, k]                                   # (N, P, 3, 3)
        out = {"x": self.p[:, k] + _mv(Rb, c)}
        if need in ("vel", "acc"):
            w, v = self.v[:, k, :3], self.v[:, k, 3:]
            vc = v + _cross(w, c)
            out["w"], out["vc"] = _mv(Rb, w), _mv(Rb, vc)
            out["I"] = Rb @ inertia @ np.swapaxes(Rb, -1, -2)
        if need == "acc":
            al, a = self.a[:, k, :3], self.a[:, k, 3:]
            out["al"] = _mv(Rb, al)
            out["ac"] = _mv(Rb, a + _cross(al, c) + _cross(w, vc)) - self.g
        return out


def _quaternion(R):
    """Unit quaternions [w x y z] (N, 4), w ≥ 0, of rotation matrices (N, 3, 3) (Shepperd's method)."""
    n = R.shape[0]
    t = np.stack([R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2], R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]], axis=1)
    i = np.argmax(t, axis=1)
    q = np.empty((n, 4))
    r = np.arange(n)
    for case in range(4):
        s = r[i == case]
        if not len(s):
            continue
        M = R[s]
        if case == 0:
            w = 0.5 * np.sqrt(1 + t[s, 0])
            q[s] = np.stack([w, (M[:, 2, 1] - M[:, 1, 2]) / (4 * w), (M[:, 0, 2] - M[:, 2, 0]) / (4 * w),
                             (M[:, 1, 0] - M[:, 0, 1]) / (4 * w)], axis=1)
        else:
            a, b, c = case - 1, case % 3, (case + 1) % 3
            x = 0.5 * np.sqrt(1 + 2 * M[:, a, a] - t[s, 0])
            row = np.empty((len(s), 4))
            row[:, 0] = (M[:, c, b] - M[:, b, c]) / (4 * x)
            row[:, 1 + a] = x
            row[:, 1 + b] = (M[:, b, a] + M[:, a, b]) / (4 * x)
            row[:, 1 + c] = (M[:, c, a] + M[:, a, c]) / (4 * x)
            q[s] = row
    q *= np.where(q[:, :1] < 0, -1.0, 1.0)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _interval(lo, hi, p, d):
    """The ray's parameter interval inside the slab lo ≤ p + t d ≤ hi (M,) each."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (lo - p) / d, (hi - p) / d
    flat = d == 0
    inside = (p >= lo) & (p <= hi)
    t0 = np.where(flat, np.where(inside, -np.inf, np.inf), np.minimum(t1, t2))
    t3 = np.where(flat, np.where(inside, np.inf, -np.inf), np.maximum(t1, t2))
    return t0, t3


def _quadric(p, d, radius=1.0):
    """The ray's interval inside |p + t d|² ≤ radius² (rows of p, d: the coordinates that count)."""
    a = np.sum(d * d, axis=-1)
    b = np.sum(p * d, axis=-1)
    c = np.sum(p * p, axis=-1) - radius * radius
    disc = b * b - a * c
    ok = disc >= 0
    root = np.sqrt(np.where(ok, disc, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t0, t1 = (-b - root) / a, (-b + root) / a
    flat = a == 0
    t0 = np.where(flat, np.where(c <= 0, -np.inf, np.inf), np.where(ok, t0, np.inf))
    t1 = np.where(flat, np.where(c <= 0, np.inf, -np.inf), np.where(ok, t1, -np.inf))
    return t0, t1


def _hits(t0, t1):
    return (t1 >= np.maximum(t0, 0.0)) & (t1 >= t0)


def ray_meets_zone(shape, size, p, d):
    """(M,) whether the rays p + t d (t ≥ 0; zone coordinates) meet a site's zone (MuJoCo's ``mju_rayGeom``)."""
    if shape == "sphere":
        return _hits(*_quadric(p, d, size[0]))
    if shape == "ellipsoid":
        return _hits(*_quadric(p / size, d / size))
    if shape == "box":
        lo, hi = np.full(len(p), -np.inf), np.full(len(p), np.inf)
        for i in range(3):
            a, b = _interval(-size[i], size[i], p[:, i], d[:, i])
            lo, hi = np.maximum(lo, a), np.minimum(hi, b)
        return _hits(lo, hi)
    r, h = size[0], size[1]
    a, b = _quadric(p[:, :2], d[:, :2], r)
    c, e = _interval(-h, h, p[:, 2], d[:, 2])
    hit = _hits(np.maximum(a, c), np.minimum(b, e))
    if shape == "capsule":
        for z in (-h, h):
            hit |= _hits(*_quadric(p - [0.0, 0.0, z], d, r))
    return hit


def _normalize_contacts(contact):
    """(sample (M,), geom a names (M,), geom b names (M,), position (M, 3), normal (M, 3), force on b (M, 3))."""
    if contact is None:
        return None
    sample, ga, gb, pos, nrm, force = contact
    return (np.asarray(sample, np.int64), np.asarray(ga, dtype=object), np.asarray(gb, dtype=object),
            np.asarray(pos, float).reshape(-1, 3), np.asarray(nrm, float).reshape(-1, 3),
            np.asarray(force, float).reshape(-1, 3))


def sensor_data(model, q, qd, qdd=None, ctrl=None, contact=None):
    """(N, nsensordata) sensor values of N states ``q`` (N, nq), ``qd`` (N, nv), ``qdd`` (N, nv)
    (checked by the caller).  ``ctrl``: (nu,) or (N, nu) for ``actuatorfrc``; ``contact``: the
    batch's contacts as (sample, geom a name, geom b name, position, normal, force on b), or None."""
    sensors = model.sensors
    n = q.shape[0]
    out = np.zeros((n, nsensordata(model)))
    if not sensors:
        return out
    stage = max((s.stage for s in sensors), key=("pos", "vel", "acc").index)
    st = _States(model, q, qd if stage != "pos" else None, qdd if stage == "acc" else None)
    contact = _normalize_contacts(contact)
    for s in sensors:
        col = slice(s.address, s.address + s.dim)
        out[:, col] = _value(model, s, st, q, qd, ctrl, contact).reshape(n, s.dim)
        if s.cutoff > 0 and s.datatype == "real":
            out[:, col] = np.clip(out[:, col], -s.cutoff, s.cutoff)
        elif s.cutoff > 0 and s.datatype == "positive":
            out[:, col] = np.minimum(out[:, col], s.cutoff)
    return out


def _value(model, s, st, q, qd, ctrl, contact):
    t = s.type
    if t == "jointpos":
        return q[:, s.index:s.index + 1]
    if t == "ballquat":   # normalised, as MuJoCo 4 reports it
        b = q[:, s.index:s.index + 4]
        return b / np.linalg.norm(b, axis=1, keepdims=True)
    if t in ("jointvel", "ballangvel"):
        return qd[:, s.index:s.index + s.dim]
    if t == "actuatorfrc":
        acts, a = model.actuators, s.index     # model/actuators.py's law, over the batch
        c = np.broadcast_to(ctrl, (q.shape[0], len(acts)))
        return acts.actuator_force(q, qd, c)[:, a]
    if t in ("subtreecom", "subtreelinvel", "subtreeangmom"):
        return _subtree(s, st)
    R, p = st.pose(s.frame)
    if t in ("framepos", "framexaxis", "frameyaxis", "framezaxis", "framequat"):
        if s.reference is not None:
            Rr, pr = st.pose(s.reference)
            R, p = np.swapaxes(Rr, -1, -2) @ R, _mtv(Rr, p - pr)
        if t == "framepos":
            return p
        if t == "framequat":
            return _quaternion(R)
        return R[:, :, "xyz".index(t[5])]
    if t in ("framelinvel", "frameangvel"):
        w, v = st.velocity(s.frame)
        if s.reference is not None:
            Rr, pr = st.pose(s.reference)
            wr, vr = st.velocity(s.reference)
            w, v = _mtv(Rr, w - wr), _mtv(Rr, v - vr + _cross(p - pr, wr))
        return v if t == "framelinvel" else w
    if t in ("gyro", "velocimeter"):
        w, v = st.velocity(s.frame)
        return _mtv(R, w if t == "gyro" else v)
    if t == "accelerometer":
        return _mtv(R, st.acceleration(s.frame)[1])
    if t in ("force", "torque"):
        key = ("wrench", s.frame[0], s.frame[2].tobytes(), s.geoms) + tuple(a.tobytes() for a in s.parts)
        if key not in st.memo:
            st.memo[key] = _interaction(s, st, p, contact)
        F, T = st.memo[key]
        return _mtv(R, F if t == "force" else T)
    if t == "touch":
        return _touch(s, st, R, p, contact)
    raise AssertionError(t)


def _subtree(s, st):
    need = {"subtreecom": "pos", "subtreelinvel": "vel", "subtreeangmom": "vel"}[s.type]
    m = s.parts[1]
    M = float(np.sum(m))
    P = st.parts(s.parts, need)
    if s.type == "subtreecom":
        if M < MINVAL:
            return st.pose(s.frame)[1]
        return np.einsum("p,npi->ni", m, P["x"]) / M
    vcom = np.einsum("p,npi->ni", m, P["vc"]) / max(M, MINVAL)
    if s.type == "subtreelinvel":
        return vcom
    xcom = np.einsum("p,npi->ni", m, P["x"]) / M if M >= MINVAL else st.pose(s.frame)[1]
    spin = _mv(P["I"], P["w"])
    orbit = m[None, :, None] * _cross(P["x"] - xcom[:, None], P["vc"] - vcom[:, None])
    return np.sum(spin + orbit, axis=1)


def _interaction(s, st, at, contact):
    """(force, torque about ``at``) (N, 3), world: what the parent exerts on the site's subtree."""
    m = s.parts[1]
    P = st.parts(s.parts, "acc")
    F = m[None, :, None] * P["ac"]
    T = _mv(P["I"], P["al"]) + _cross(P["w"], _mv(P["I"], P["w"])) + _cross(P["x"] - at[:, None], F)
    F, T = F.sum(axis=1), T.sum(axis=1)
    if contact is not None and s.geoms:
        sample, ga, gb, pos, _, force = contact
        mine = set(s.geoms)
        on_a = np.array([g in mine for g in ga], bool)
        on_b = np.array([g in mine for g in gb], bool)
        f = force * (on_b.astype(float) - on_a.astype(float))[:, None]   # the load on the subtree: +F on b, −F on a
        keep = on_a | on_b
        if keep.any():
            i, f, x = sample[keep], f[keep], pos[keep]
            np.subtract.at(F, i, f)
            np.subtract.at(T, i, _cross(x - at[i], f))
    return F, T


def _touch(s, st, R, p, contact):
    out = np.zeros(p.shape[0])
    if contact is None or not s.geoms:
        return out
    sample, ga, gb, pos, normal, force = contact
    mine = set(s.geoms)
    on_a = np.array([g in mine for g in ga], bool)
    on_b = np.array([g in mine for g in gb], bool)
    fn = np.einsum("ij,ij->i", force, normal)
    keep = (on_a | on_b) & (fn > 0)
    if not keep.any():
        return out
    i = sample[keep]
    ray = normal[keep] * np.where(on_b[keep], -1.0, 1.0)[:, None]   # away from the sensing body
    shape, size = s.zone
    Ri = R[i]
    hit = ray_meets_zone(shape, size, _mtv(Ri, pos[keep] - p[i]), _mtv(Ri, ray))
    np.add.at(out, i[hit], fn[keep][hit])
    return out


def sensors(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike | None = None, *,
            ctrl: ArrayLike | None = None, contacts: object | None = None,
            contact_forces: ArrayLike | None = None) -> NDArray[np.float64]:
    """The model's sensor values (``model.sensors``) at a state: MuJoCo's ``sensordata``.

    Parameters
    ----------
    model : Model
        A model with sensors (MJCF ``<sensor>``; :mod:`multibody.model.sensors`).
    q : array_like, shape (nq,) or (..., nq)
        Configuration (MuJoCo's qpos for a model read by ``load_mjcf``).
    qd : array_like, shape (nv,) or (..., nv)
        Velocity (ours: :func:`multibody.mjcf.from_mujoco_state` converts MuJoCo's qvel).
    qdd : array_like, shape (nv,) or (..., nv), optional
        Acceleration, needed by the acceleration sensors (accelerometer, force, torque): e.g. a
        run's ``traj.qdd`` or :func:`multibody.forward_dynamics`.
    ctrl : array_like, shape (nu,), optional
        The actuators' controls, needed by ``actuatorfrc`` sensors.
    contacts : Contacts, optional
        The contacts at q (:func:`multibody.contacts`), one state only, with ``contact_forces``.
    contact_forces : array_like, shape (n, 3), optional
        The world force on each contact's geom b.  Without contacts there are no contact loads:
        touch reads 0 and force/torque sensors carry no contact force.

    Returns
    -------
    ndarray, shape (nsensordata,) or (..., nsensordata)
        Each sensor's values at its ``address`` (``model.sensors``).

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an array argument is not numeric.
    ValueError
        A wrong shape, NaN or inf; ``qdd`` missing for an acceleration sensor, ``ctrl`` for an
        ``actuatorfrc`` sensor; contacts without their forces, or for a batch.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.load_mjcf('''<mujoco><worldbody><body><joint name="hinge" axis="0 1 0"/>
    ...   <geom type="capsule" fromto="0 0 0 1 0 0" size=".05" mass="1"/><site name="tip" pos="1 0 0"/>
    ...   </body></worldbody><sensor><jointvel joint="hinge"/><velocimeter site="tip"/>
    ...   <accelerometer site="tip"/></sensor></mujoco>''')
    >>> mb.sensors(m, [0.0], [2.0], [0.0]).round(12).tolist()   # turning at 2 rad/s, at rest in gravity
    [2.0, 0.0, 0.0, -2.0, -4.0, 0.0, 9.81]
    """
    _checks.model(model)
    sens = model.sensors
    q = _checks.array("q", q, None, what=f"positions (…, {model.nq})")
    qd = _checks.array("qd", qd, None, what=f"velocities (…, {model.nv})")
    if q.ndim == 0 or q.shape[-1] != model.nq:
        raise ValueError(f"q: expected shape (…, {model.nq}), got {q.shape}")
    if qd.ndim == 0 or qd.shape[-1] != model.nv:
        raise ValueError(f"qd: expected shape (…, {model.nv}), got {qd.shape}")
    acc = [s.name for s in sens if s.stage == "acc" and s.type not in ("touch", "actuatorfrc")]
    if qdd is None and acc:
        raise ValueError(f"qdd: sensors {acc[:6]} need the acceleration; pass qdd (e.g. traj.qdd or "
                         "mb.forward_dynamics(model, q, qd, tau))")
    if qdd is not None:
        qdd = _checks.array("qdd", qdd, None, what=f"accelerations (…, {model.nv})")
        if qdd.ndim == 0 or qdd.shape[-1] != model.nv:
            raise ValueError(f"qdd: expected shape (…, {model.nv}), got {qdd.shape}")
    batch = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1], () if qdd is None else qdd.shape[:-1])
    Q = np.broadcast_to(q, batch + (model.nq,)).reshape(-1, model.nq)
    V = np.broadcast_to(qd, batch + (model.nv,)).reshape(-1, model.nv)
    A = np.zeros_like(V) if qdd is None else np.broadcast_to(qdd, batch + (model.nv,)).reshape(-1, model.nv)
    if any(s.type == "actuatorfrc" for s in sens):
        if ctrl is None:
            raise ValueError(f"ctrl: actuatorfrc sensors {[s.name for s in sens if s.type == 'actuatorfrc'][:6]} "
                             f"need the controls (one per actuator of model.actuators: {len(model.actuators)})")
        ctrl = model.actuators.check_ctrl(ctrl)
    contact = None
    if (contacts is None) != (contact_forces is None):
        raise ValueError("contacts, contact_forces: give both (mb.contacts(model, q) and the force on each "
                         "contact's geom b) or neither")
    if contacts is not None:
        if batch != ():
            raise ValueError(f"contacts: one state only (q has batch shape {batch})")
        F = _checks.array("contact_forces", contact_forces, None, what=f"forces ({len(contacts)}, 3)")
        if F.shape != (len(contacts), 3):
            raise ValueError(f"contact_forces: expected shape ({len(contacts)}, 3) (one per contact), got {F.shape}")
        names = contacts.geoms.names
        contact = (np.zeros(len(contacts), np.int64), [names[g] for g in contacts.geom_a],
                   [names[g] for g in contacts.geom_b], contacts.position, contacts.normal, F)
    out = sensor_data(model, Q, V, A, ctrl, contact)
    return out.reshape(batch + (out.shape[-1],))
