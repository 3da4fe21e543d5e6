"""Collision geometry as model data: the geoms table (``Model.geoms``) and its candidate pairs.

A :class:`Geoms` is to contact what the joint table is to motion: plain arrays, read by the C
narrow phase (``csrc/sim/scene_contact.c``, which runs the engine's collision table,
``csrc/engine/collide.c``) and never by Python in a loop.  Each geom is one of the engine's
shapes — ``sphere``, ``box``, ``capsule``, ``cylinder``, ``plane``, ``convex`` (a mesh, as its
convex hull), ``ellipsoid`` or ``hfield`` (a height field: MuJoCo's, static) (the names and codes
are the engine's own, :data:`SHAPES`) — fixed in a body of the tree (``body`` −1: static, placed
in the world).  Sizes are full lengths, as
:class:`~multibody.model.model.Geometry`'s: box edges, capsule/cylinder radius and length (along
the geom's z), ellipsoid semi-axes; a plane is the geom's z = 0, its normal the geom's z; a
height field's size is MuJoCo's (x, y half extents, top elevation) and its :class:`HeightField`
(``Geoms.hfields``) holds the samples and the base depth.

Where the tables come from:

* **MJCF** (:func:`from_mjmodel`, called by ``load_mjcf``): MuJoCo's compiled geoms — defaults
  classes, ``fromto``, ``contype``/``conaffinity``, ``condim``, ``friction``, ``margin``,
  ``priority`` all resolved by MuJoCo's compiler — and the pairs MuJoCo's collision driver would
  test: explicit ``<pair>`` elements, then every two geoms whose contype/conaffinity bitmasks
  meet, except two on one (weld) body, a body and its parent unless the parent is the world, and
  ``<contact><exclude>``.  A pair's margin is the larger of the two, its condim and friction the
  higher-priority geom's (equal priorities: the larger), as ``mj_contactParam``; geom a comes
  first in MuJoCo's order, so normals point as MuJoCo's do.  Meshes become the convex hull of
  their compiled vertices (MuJoCo collides meshes as hulls too).  Height fields (``<hfield>``
  assets: inline ``elevation``, MuJoCo's binary file or a PNG, all read and normalised by MuJoCo's
  compiler) keep MuJoCo's compiled samples (``hfield_data``, ``hfield_size``): the engine collides
  them as MuJoCo does, as triangular prisms (``csrc/engine/hfield.c``); one on a moving body is
  left out.  SDFs have no engine shape: left out with a :class:`~multibody.model.mjcf.MJCFWarning`
  naming the geom.
* **URDF** (:func:`from_geometries`, called by ``load_urdf``): the ``<collision>`` elements (box,
  cylinder, sphere, capsule, mesh → convex hull of the file's vertices), on the bodies they were
  merged into through fixed joints; no pair of two moving geoms by default (a robot file's links
  often overlap where they meet; PyBullet's default), and with ``self_collision=True`` every pair
  except two on one body or on a body and its parent (Pinocchio/HPP-FCL's collision pairs less the
  adjacent links).  Friction 1, condim 3.
* :meth:`Geoms.with_ground`: a static plane at z = h that pairs with every geom on a body (a URDF
  robot's missing floor; ``mb.contacts(model, q, ground=True)``).

>>> import numpy as np, multibody as mb
>>> b = mb.ModelBuilder()
>>> ball = b.add_body("ball", parent=None, joint="free", mass=1.0, inertia=np.eye(3) * 1e-3)
>>> b.add_geometry(mb.Geometry(ball, "sphere", (0.1,), role="collision", name="ball"))
>>> model = b.build()
>>> geoms = model_geoms(model).with_ground()
>>> geoms.names, geoms.kind, geoms.pairs.tolist()
(('ball', 'ground'), ('sphere', 'plane'), [[1, 0]])
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from ..core import _core
from .._extras import require

__all__ = ["SHAPES", "Geoms", "HeightField", "from_mjmodel", "from_geometries", "model_geoms", "hull_tables", "hull_packed",
           "HULL_MAX_VERTICES"]

SHAPES = _core.geom_shapes()   # the engine's shapes, in code order (csrc/engine/geometry.c's rows)
CODE = {name: code for code, name in enumerate(SHAPES)}
HULL_MAX_VERTICES = 256        # engine.h HULL_MAX_VERTS: the C narrow phase keeps one hull on its stack
_SIZES = {"sphere": 1, "box": 3, "capsule": 2, "cylinder": 2, "plane": 0, "convex": 0, "ellipsoid": 3, "hfield": 3}
# per geom and pair: the layout of csrc/sim/scene_contact.h (MB_SG_*, MB_SP_*)
_SG_SIZE, _SP_SIZE = 15, 5


def _ro(a, dtype):
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class HeightField:
    """A height field's data (MuJoCo's ``<hfield>`` as compiled): ``size`` = (x half extent, y half
    extent, top elevation, base depth), all > 0, and ``samples`` (nrow, ncol) in [0, 1], row r at
    y = −size[1] + 2 r size[1]/(nrow − 1), column c at x likewise; the surface is z = samples ·
    size[2] over a solid down to z = −size[3] (``csrc/engine/hfield.c``)."""
    size: Any
    samples: Any

    def __post_init__(self):
        size = _ro(np.reshape(self.size, (4,)), float)
        samples = _ro(self.samples, float)
        if not (np.all(np.isfinite(size)) and np.all(size > 0)):
            raise ValueError(f"height field size: expected 4 finite numbers > 0 (x, y, elevation, base), got {size}")
        if samples.ndim != 2 or min(samples.shape) < 2:
            raise ValueError(f"height field samples: expected an (nrow, ncol) array, both ≥ 2, got shape {samples.shape}")
        if not (np.all(np.isfinite(samples)) and samples.min() >= 0 and samples.max() <= 1):
            raise ValueError("height field samples: expected finite values in [0, 1] (MuJoCo's normalised elevation)")
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "samples", samples)

    def packed(self):
        """The block ``csrc/engine/hfield.c`` reads in the hull list: [−1, nrow, ncol, size (4), samples]."""
        nrow, ncol = self.samples.shape
        return np.concatenate([[-1.0, nrow, ncol], self.size, self.samples.ravel()])

    def surface(self):
        """(vertices (nrow·ncol, 3), triangles) of the top surface in the geom's frame, triangulated as
        the collider cuts it (the diagonal from sample (r, c) to (r + 1, c + 1))."""
        nrow, ncol = self.samples.shape
        x = np.linspace(-self.size[0], self.size[0], ncol)
        y = np.linspace(-self.size[1], self.size[1], nrow)
        X, Y = np.meshgrid(x, y)
        V = np.column_stack([X.ravel(), Y.ravel(), self.samples.ravel() * self.size[2]])
        r, c = np.meshgrid(np.arange(nrow - 1), np.arange(ncol - 1), indexing="ij")
        i0 = (r * ncol + c).ravel()
        i1, i2, i3 = i0 + 1, i0 + ncol + 1, i0 + ncol
        F = np.concatenate([np.column_stack([i0, i1, i2]), np.column_stack([i0, i2, i3])])
        return V, F


@dataclass(frozen=True, eq=False)
class Geoms:
    """The collision geoms of a model and the pairs that may touch (module notes).

    Per geom (ng): ``names``, ``kind`` (a shape of :data:`SHAPES`), ``body`` (−1 static),
    ``size`` (ng, 3) (unused entries 0), ``rotation`` (ng, 3, 3) and ``translation`` (ng, 3) in
    the body (world for static geoms), ``contype``, ``conaffinity``, ``condim``, ``friction``
    (ng, 3: sliding, torsional, rolling), ``margin``, ``hulls`` (a convex geom's hull vertices
    (nv, 3) in the geom frame, else None), ``hfields`` (a height field geom's :class:`HeightField`,
    else None).  Per pair (np): ``pairs`` (np, 2) geom indices (a, b;
    contact normals point from a into b), ``pair_margin``, ``pair_friction`` (np, 3),
    ``pair_condim``.
    """
    names: tuple
    kind: tuple
    body: Any
    size: Any
    rotation: Any
    translation: Any
    contype: Any
    conaffinity: Any
    condim: Any
    friction: Any
    margin: Any
    hulls: tuple
    pairs: Any
    pair_margin: Any
    pair_friction: Any
    pair_condim: Any
    hfields: tuple = ()

    def __post_init__(self):
        ng = len(self.names)
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        if not self.hfields:
            put("hfields", (None,) * ng)
        for k, shape, dt in (("body", (ng,), np.int64), ("size", (ng, 3), float), ("rotation", (ng, 3, 3), float),
                             ("translation", (ng, 3), float), ("contype", (ng,), np.int64),
                             ("conaffinity", (ng,), np.int64), ("condim", (ng,), np.int64),
                             ("friction", (ng, 3), float), ("margin", (ng,), float)):
            a = _ro(np.reshape(getattr(self, k), shape) if ng else np.zeros(shape), dt)
            if dt is float and not np.all(np.isfinite(a)):
                raise ValueError(f"geoms.{k}: contains NaN or inf")
            put(k, a)
        npair = len(self.pairs)
        for k, shape, dt in (("pairs", (npair, 2), np.int64), ("pair_margin", (npair,), float),
                             ("pair_friction", (npair, 3), float), ("pair_condim", (npair,), np.int64)):
            put(k, _ro(np.reshape(getattr(self, k), shape) if npair else np.zeros(shape), dt))
        if len(self.kind) != ng or len(self.hulls) != ng or len(self.hfields) != ng:
            raise ValueError(f"geoms: expected {ng} kinds, hulls and hfields (one per name)")
        for g, k in enumerate(self.kind):
            if k not in CODE or k == "trimesh":
                raise ValueError(f"geom {self.names[g]!r}: unknown shape {k!r}; expected one of "
                                 f"{', '.join(s for s in SHAPES if s != 'trimesh')}")
            if (k == "convex") != (self.hulls[g] is not None):
                raise ValueError(f"geom {self.names[g]!r}: a convex geom has hull vertices, no other does")
            if (k == "hfield") != isinstance(self.hfields[g], HeightField):
                raise ValueError(f"geom {self.names[g]!r}: a height field geom has a HeightField, no other does")
            if k == "hfield" and self.body[g] != -1:
                raise ValueError(f"geom {self.names[g]!r}: a height field is static (body -1), not on body {self.body[g]}")
        if npair and (self.pairs.min() < 0 or self.pairs.max() >= ng):
            raise ValueError(f"geoms.pairs: geom indices must be in 0..{ng - 1}")

    def __len__(self):
        return len(self.names)

    def index(self, name) -> int:
        """The index of the geom named ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no geom named {name!r}; the model's geoms: {', '.join(self.names[:12])}"
                           f"{' …' if len(self.names) > 12 else ''}") from None

    def pair_names(self):
        """The candidate pairs as (name a, name b)."""
        return [(self.names[a], self.names[b]) for a, b in self.pairs]

    def with_ground(self, height=0.0, friction=1.0, condim=3, name="ground"):
        """These geoms and a static plane z = ``height`` paired with every geom on a body (a, the
        plane, first: normals point up)."""
        h = float(height)
        if not np.isfinite(h):
            raise ValueError(f"height: expected a finite number, got {height!r}")
        fr = np.broadcast_to(np.asarray(friction, float), (3,)) if np.ndim(friction) else np.array([friction, 0.005, 1e-4])
        if not np.all(np.isfinite(fr)) or np.any(fr < 0):
            raise ValueError(f"friction: expected finite values >= 0, got {friction!r}")
        ng = len(self)
        moving = np.flatnonzero(self.body >= 0)
        new_pairs = np.column_stack([np.full(len(moving), ng), moving])
        return replace(
            self, names=self.names + (name,), kind=self.kind + ("plane",), body=np.append(self.body, -1),
            size=np.vstack([self.size, np.zeros(3)]), rotation=np.concatenate([self.rotation, np.eye(3)[None]]),
            translation=np.vstack([self.translation, [0.0, 0.0, h]]), contype=np.append(self.contype, 1),
            conaffinity=np.append(self.conaffinity, 1), condim=np.append(self.condim, condim),
            friction=np.vstack([self.friction, fr]), margin=np.append(self.margin, 0.0), hulls=self.hulls + (None,),
            hfields=self.hfields + (None,),
            pairs=np.vstack([self.pairs, new_pairs]),
            pair_margin=np.concatenate([self.pair_margin, self.margin[moving]]),
            pair_friction=np.vstack([self.pair_friction, np.maximum(self.friction[moving], fr)]),
            pair_condim=np.concatenate([self.pair_condim, np.maximum(self.condim[moving], condim)]))

    @cached_property
    def slot_start(self):
        """(np + 1,) int64, read-only: pair p's contact slots are ``slot_start[p]`` .. ``slot_start[p + 1] − 1``
        and ``slot_start[-1]`` is their number — a slot per point the pair's collider can report (a sphere's or
        an ellipsoid's pairs 1, a capsule on a plane 2, a box on a plane 8: ``csrc/sim/scene_contact.c``'s
        ``mb_scene_pair_slots``).  A run's contact states (2 per slot) and recorded forces
        (``traj.contact_forces``, (N, slots, 3)) follow it."""
        counts = _core.scene_pair_slots(self.packed[0], self.packed[3])
        out = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        out.setflags(write=False)
        return out

    @cached_property
    def slot_pair(self):
        """(slots,) int64, read-only: the candidate pair each contact slot belongs to (:attr:`slot_start`)."""
        out = np.repeat(np.arange(len(self.pairs), dtype=np.int64), np.diff(self.slot_start))
        out.setflags(write=False)
        return out

    @property
    def n_slots(self) -> int:
        """The contact slots of all candidate pairs (:attr:`slot_start`)."""
        return int(self.slot_start[-1])

    @cached_property
    def packed(self):
        """(gint, gdat, hulls, pairs, pdat): the arrays of ``csrc/sim/scene_contact.h``'s layout."""
        ng = len(self)
        gint = np.zeros((ng, 3), np.int64)
        gdat = np.zeros((ng, _SG_SIZE))
        blocks, nh = [], 0
        for g in range(ng):
            gint[g] = CODE[self.kind[g]], self.body[g], -1
            gdat[g, 0:9] = self.rotation[g].ravel()
            gdat[g, 9:12] = self.translation[g]
            gdat[g, 12:15] = self.size[g]
            if self.kind[g] == "convex":
                gint[g, 2] = nh
                try:
                    blocks.append(_hull_block(self.hulls[g]))
                except ValueError as e:
                    raise ValueError(f"geom {self.names[g]!r}: {e}") from None
                nh += 1
            elif self.kind[g] == "hfield":      # its block goes in the same list (hfield.c)
                gint[g, 2] = nh
                blocks.append(self.hfields[g].packed())
                nh += 1
        hulls = np.concatenate(blocks) if blocks else np.zeros(0)
        pdat = np.column_stack([self.pair_margin, self.pair_friction, self.pair_condim.astype(float)]) \
            if len(self.pairs) else np.zeros((0, _SP_SIZE))
        out = (gint, gdat, hulls, np.ascontiguousarray(self.pairs), np.ascontiguousarray(pdat))
        for a in out:
            a.setflags(write=False)
        return out


def _shape_size(kind, size):
    s = np.zeros(3)
    n = _SIZES[kind]
    s[:n] = np.asarray(size, float)[:n]
    return s


def _build(rows, pairs, pair_params, hfields=None):
    """Geoms from rows (name, kind, body, size3, R, t, contype, conaffinity, condim, friction3, margin, hull)
    and the height fields of rows {row: HeightField}."""
    cols = list(zip(*rows)) if rows else [()] * 12
    npair = len(pairs)
    hfields = hfields or {}
    return Geoms(names=tuple(cols[0]), kind=tuple(cols[1]), body=np.array(cols[2], np.int64),
                 size=np.array(cols[3], float), rotation=np.array(cols[4], float), translation=np.array(cols[5], float),
                 contype=np.array(cols[6], np.int64), conaffinity=np.array(cols[7], np.int64),
                 condim=np.array(cols[8], np.int64), friction=np.array(cols[9], float), margin=np.array(cols[10], float),
                 hulls=tuple(cols[11]), pairs=np.array(pairs, np.int64).reshape(npair, 2),
                 pair_margin=np.array([p[0] for p in pair_params], float),
                 pair_friction=np.array([p[1] for p in pair_params], float).reshape(npair, 3),
                 pair_condim=np.array([p[2] for p in pair_params], np.int64),
                 hfields=tuple(hfields.get(i) for i in range(len(rows))))


def _unique_names(names):
    seen, out = {}, []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    count = {}
    for n in names:
        if seen[n] > 1:
            count[n] = count.get(n, -1) + 1
            out.append(f"{n}_{count[n]}")
        else:
            out.append(n)
    return tuple(out)


# ---------------------------------------------------------------------------------------- MJCF
def from_mjmodel(mj, attach, label="mjModel", warning=UserWarning):
    """The geoms and pairs of a compiled ``mujoco.MjModel`` (module notes).

    ``attach[b]`` = (k, A, r): MuJoCo body b's frame in our body k (x_ours = A x_mj + r; k = −1
    the world), as ``load_mjcf`` builds it.  ``warning``: the class of the warnings about geoms
    left out (height fields, SDFs).
    """
    import mujoco
    G, obj = mujoco.mjtGeom, mujoco.mjtObj
    kinds = {int(G.mjGEOM_PLANE): "plane", int(G.mjGEOM_SPHERE): "sphere", int(G.mjGEOM_CAPSULE): "capsule",
             int(G.mjGEOM_ELLIPSOID): "ellipsoid", int(G.mjGEOM_CYLINDER): "cylinder", int(G.mjGEOM_BOX): "box",
             int(G.mjGEOM_MESH): "convex", int(G.mjGEOM_HFIELD): "hfield"}

    def _rotation(quat):
        R = np.empty(9)
        mujoco.mju_quat2Mat(R, np.asarray(quat, float) / np.linalg.norm(quat))
        return R.reshape(3, 3)
    in_pair = set()
    for p in range(mj.npair):
        in_pair.update((int(mj.pair_geom1[p]), int(mj.pair_geom2[p])))
    rows, ours, left_out, hfields = [], {}, [], {}
    for g in range(mj.ngeom):
        name = mujoco.mj_id2name(mj, obj.mjOBJ_GEOM, g) or f"geom{g}"
        if not (mj.geom_contype[g] or mj.geom_conaffinity[g]) and g not in in_pair:
            continue     # collides with nothing
        gt = int(mj.geom_type[g])
        if gt not in kinds:
            what = {int(G.mjGEOM_SDF): "an SDF"}.get(gt, f"MuJoCo geom type {gt}")
            left_out.append(f"<geom> {name!r} ({what})")
            continue
        kind, s = kinds[gt], mj.geom_size[g]
        k, A, r = attach[int(mj.geom_bodyid[g])]
        R, t = A @ _rotation(mj.geom_quat[g]), A @ mj.geom_pos[g] + r
        hull = None
        if kind == "sphere":
            size = (s[0],)
        elif kind in ("capsule", "cylinder"):
            size = (s[0], 2.0 * s[1])
        elif kind == "box":
            size = 2.0 * s
        elif kind == "ellipsoid":
            size = s
        elif kind == "plane":
            size = ()
            if k >= 0:
                left_out.append(f"<geom> {name!r} (a plane on a moving body; planes are static in the engine)")
                continue
        elif kind == "hfield":     # MuJoCo's compiled samples: normalised to [0, 1], rows along y
            if k >= 0:
                left_out.append(f"<geom> {name!r} (a height field on a moving body; they are static in the engine)")
                continue
            i = int(mj.geom_dataid[g])
            nr, nc, a = int(mj.hfield_nrow[i]), int(mj.hfield_ncol[i]), int(mj.hfield_adr[i])
            hfields[len(rows)] = HeightField(np.array(mj.hfield_size[i], float),
                                             np.array(mj.hfield_data[a:a + nr * nc], float).reshape(nr, nc))
            size = mj.hfield_size[i][:3]
        else:   # the mesh's compiled vertices are in the geom's frame; MuJoCo collides their hull
            i = int(mj.geom_dataid[g])
            a, n = int(mj.mesh_vertadr[i]), int(mj.mesh_vertnum[i])
            hull = hull_points(mj.mesh_vert[a:a + n], f"{label}: <geom> {name!r}", warning, stacklevel=4)
            size = ()
        ours[g] = len(rows)
        fr = mj.geom_friction[g]
        rows.append((name, kind, k, _shape_size(kind, size), R, t, int(mj.geom_contype[g]), int(mj.geom_conaffinity[g]),
                     int(mj.geom_condim[g]), (fr[0], fr[1], fr[2]), float(mj.geom_margin[g]), hull))
    if left_out:
        warnings.warn(f"{label}: no contact with {'; '.join(left_out[:8])}{' …' if len(left_out) > 8 else ''}: "
                      "the engine cannot collide them", warning, stacklevel=4)
    pairs, params, seen = _mj_pairs(mj, ours, rows)
    geoms = _build(rows, pairs, params, hfields)
    _warn_margins(geoms, label, warning)
    return geoms


def _mj_order(mj, g1, g2):
    """MuJoCo's order of a pair (mj_collideGeoms: the lower geom type first)."""
    return (g2, g1) if mj.geom_type[g1] > mj.geom_type[g2] else (g1, g2)


def _mj_pairs(mj, ours, rows):
    """Explicit <pair>s, then the dynamic pairs MuJoCo's filters let through (module notes)."""
    import mujoco
    pairs, params, seen = [], [], set()
    if mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT:
        return pairs, params, seen
    for p in range(mj.npair):
        g1, g2 = _mj_order(mj, int(mj.pair_geom1[p]), int(mj.pair_geom2[p]))
        if g1 not in ours or g2 not in ours or (rows[ours[g1]][2] < 0 and rows[ours[g2]][2] < 0):
            continue
        f = mj.pair_friction[p]
        pairs.append((ours[g1], ours[g2]))
        params.append((float(mj.pair_margin[p]), (f[0], f[2], f[3]), int(mj.pair_dim[p])))
        seen.add((min(g1, g2), max(g1, g2)))
    ids = np.array(sorted(ours), dtype=np.int64)
    if len(ids) < 2:
        return pairs, params, seen
    filter_parent = not (mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
    excluded = set(int(x) for x in np.ravel(mj.exclude_signature))
    i1, i2 = np.triu_indices(len(ids), 1)
    g1, g2 = ids[i1], ids[i2]
    b1, b2 = mj.geom_bodyid[g1], mj.geom_bodyid[g2]
    w1, w2 = mj.body_weldid[b1], mj.body_weldid[b2]
    wp1, wp2 = mj.body_weldid[mj.body_parentid[w1]], mj.body_weldid[mj.body_parentid[w2]]
    keep = w1 != w2
    if filter_parent:
        keep &= ~((w1 != 0) & (w2 != 0) & ((w1 == wp2) | (w2 == wp1)))
    ct, ca = mj.geom_contype, mj.geom_conaffinity
    keep &= ((ct[g1] & ca[g2]) != 0) | ((ct[g2] & ca[g1]) != 0)
    sig = (np.minimum(b1, b2).astype(np.int64) << 16) + np.maximum(b1, b2)
    if excluded:
        keep &= ~np.isin(sig, list(excluded))
    for a, b in zip(g1[keep].tolist(), g2[keep].tolist()):
        if (a, b) in seen:
            continue
        a, b = _mj_order(mj, a, b)
        pairs.append((ours[a], ours[b]))
        params.append(_mj_mix(mj, a, b))
    return pairs, params, seen


def _mj_mix(mj, a, b):
    """(margin, friction (3), condim) of a dynamic pair: mj_contactParam's rules."""
    margin = float(max(mj.geom_margin[a], mj.geom_margin[b]))
    pa, pb = mj.geom_priority[a], mj.geom_priority[b]
    if pa != pb:
        w = a if pa > pb else b
        return margin, tuple(float(x) for x in mj.geom_friction[w]), int(mj.geom_condim[w])
    fr = np.maximum(mj.geom_friction[a], mj.geom_friction[b])
    return margin, tuple(float(x) for x in fr), int(max(mj.geom_condim[a], mj.geom_condim[b]))


def _warn_margins(geoms, label, warning):
    """The narrow phase honours a margin by growing a plane, sphere or capsule (scene_contact.c);
    a pair with neither keeps penetrating contacts only."""
    grow = {"plane", "sphere", "capsule"}
    bad = [f"{geoms.names[a]!r}-{geoms.names[b]!r}" for (a, b), m in zip(geoms.pairs, geoms.pair_margin)
           if m > 0 and geoms.kind[a] not in grow and geoms.kind[b] not in grow]
    if bad:
        warnings.warn(f"{label}: margin of pairs {', '.join(bad[:6])}{' …' if len(bad) > 6 else ''} not kept: only "
                      "pairs with a plane, sphere or capsule report contacts before they touch", warning, stacklevel=4)


# ------------------------------------------------------------------------------- URDF, builder
def from_geometries(geometries, parent, label="model", warning=UserWarning, friction=1.0, condim=3,
                    self_collision=False):
    """The geoms of the collision :class:`~multibody.model.model.Geometry` records (role
    ``"collision"``) on a tree with ``parent`` (module notes).  Without ``self_collision`` (the
    default, as PyBullet's and the engine's ``from_model``) no two geoms on bodies collide — a robot
    file's meshes often overlap where links meet, and a floor (:meth:`Geoms.with_ground`) is what
    they stand on; with it, every pair but those on one body or on a body and its parent.  A mesh
    is the convex hull of its file's vertices (read by trimesh, scaled); one that cannot be read is
    left out with a warning naming it."""
    from .appearance import load_mesh
    rows = []
    fr = (float(friction), 0.005, 1e-4)
    unread = []
    for geo in geometries:
        if geo.role != "collision":
            continue
        name = geo.name or f"geom{len(rows)}"
        kind, hull = geo.kind, None
        if kind == "mesh":
            try:
                if geo.mesh is None:
                    raise ValueError("no mesh file")
                hull, _ = load_mesh(geo.mesh, geo.scale)
                hull = hull_points(hull, f"{label}: collision mesh {name!r}", warning, stacklevel=4)
                _hull_block(hull)   # refuse it here, naming it, if it has no hull (the block is kept)
            except (ImportError, ValueError, OSError) as e:
                unread.append(f"{name!r} ({str(geo.mesh)[:120]}: {str(e)[:120]})")
                continue
            kind, size = "convex", ()
        elif kind in ("box", "sphere", "capsule", "cylinder"):
            size = geo.size
        else:
            continue   # lines, solids, tiles: drawings only
        R = np.eye(3) if geo.rotation is None else np.asarray(geo.rotation, float)
        t = np.zeros(3) if geo.translation is None else np.asarray(geo.translation, float)
        rows.append((name, kind, int(geo.body), _shape_size(kind, size), R, t, 1, 1, condim, fr, 0.0, hull))
    if unread:
        warnings.warn(f"{label}: no contact with the collision mesh(es) {'; '.join(unread[:6])}"
                      f"{' …' if len(unread) > 6 else ''}", warning, stacklevel=3)
    rows = [(n,) + r[1:] for n, r in zip(_unique_names([r[0] for r in rows]), rows)]
    parent = np.asarray(parent, np.int64)
    up = lambda b: int(parent[b]) if b >= 0 else -2  # noqa: E731  (the world's parent: none)
    pairs, params = [], []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            bi, bj = rows[i][2], rows[j][2]
            if bi == bj or up(bi) == bj or up(bj) == bi or (not self_collision and bi >= 0 and bj >= 0):
                continue
            a, b = (j, i) if rows[i][1] != "plane" and rows[j][1] == "plane" else (i, j)
            pairs.append((a, b))
            params.append((0.0, fr, condim))
    return _build(rows, pairs, params)


def model_geoms(model):
    """The model's geoms table: ``model.geoms`` when a loader made one (MJCF), else the one of its
    collision Geometry records (:func:`from_geometries`: URDF, ModelBuilder), built on first use
    (meshes are read then) and kept with the model."""
    g = getattr(model, "geoms", None)
    if g is not None:
        return g
    g = model.__dict__.get("_collision_geoms")
    if g is None:
        g = from_geometries(model.geometries, model.parent, model.name)
        model.__dict__["_collision_geoms"] = g
    return g


# ------------------------------------------------------------------------------------- hulls
def _merge_coplanar(hull, scale):
    """Qhull's triangles grouped into the hull's planar faces (adjacent, same plane)."""
    normals, offsets = hull.equations[:, :3], -hull.equations[:, 3]
    group = -np.ones(len(hull.simplices), dtype=int)
    for start in range(len(group)):
        if group[start] >= 0:
            continue
        group[start], stack = start, [start]
        while stack:
            t = stack.pop()
            for u in hull.neighbors[t]:
                if group[u] < 0 and normals[u] @ normals[start] > 1 - 1e-10 \
                        and abs(offsets[u] - offsets[start]) < 1e-10 * scale:
                    group[u] = start
                    stack.append(u)
    return group, normals, offsets


def hull_tables(points):
    """Vertices, planar faces (counter-clockwise about their outward normal), planes and edges
    (two vertices, the face on their left and the other face) of the convex hull of ``points``:
    the engine's hull (``csrc/engine/convex.c``), for its Convex shape and for model geoms.  A hull
    of more than :data:`HULL_MAX_VERTICES` vertices is refused (simplify the mesh)."""
    require("scipy", "sim", "convex hulls of meshes")
    from scipy.spatial import ConvexHull, QhullError
    points = np.asarray(points, float)
    scale = float(np.ptp(points, axis=0).max()) if len(points) else 0.0
    if not scale > 0:
        raise ValueError("vertices: all points coincide; a convex shape needs 4 points not in one plane")
    try:
        hull = ConvexHull(points)
    except QhullError:
        raise ValueError("vertices: the points lie in one plane or on one line; a convex shape needs "
                         "4 points not in one plane") from None
    if not hull.volume > 1e-9 * scale ** 3:
        raise ValueError(f"vertices: the hull is flat (volume {hull.volume:.3g} for extent {scale:.3g}); "
                         "a convex shape needs 4 points not in one plane")
    group, normals, offsets = _merge_coplanar(hull, scale)
    used = np.unique(hull.simplices)
    if len(used) > HULL_MAX_VERTICES:
        raise ValueError(f"vertices: the hull has {len(used)} vertices, at most {HULL_MAX_VERTICES} are "
                         "supported; simplify the mesh first")
    renum = -np.ones(len(points), dtype=int)
    renum[used] = np.arange(len(used))
    verts = points[used]
    faces, planes, left = [], [], {}
    for g in np.unique(group):
        tris = np.flatnonzero(group == g)
        n = normals[g]
        nxt = {}
        directed = set()
        for t in tris:
            a, b, c = renum[hull.simplices[t]]
            if np.cross(verts[b] - verts[a], verts[c] - verts[a]) @ n < 0:
                b, c = c, b
            directed.update({(a, b), (b, c), (c, a)})
        for (a, b) in directed:
            if (b, a) not in directed:
                nxt[a] = b
        start = min(nxt)
        loop = [start]
        while nxt[loop[-1]] != start and len(loop) <= len(nxt):
            loop.append(nxt[loop[-1]])
        if len(loop) != len(nxt):
            raise ValueError("vertices: the hull has a degenerate face; perturb or simplify the points")
        f = len(faces)
        faces.append(loop)
        planes.append([*n, max(float(verts[v] @ n) for v in loop)])
        for a, b in zip(loop, loop[1:] + loop[:1]):
            left[(a, b)] = f
    edges = []
    for (a, b), f in left.items():
        if a < b:
            if (b, a) not in left:
                raise ValueError("vertices: the hull is not closed; perturb or simplify the points")
            edges.append((a, b, f, left[(b, a)]))
    if len(verts) - len(edges) + len(faces) != 2:
        raise ValueError("vertices: the hull's faces do not close up (Euler V - E + F != 2); perturb the points")
    return verts, faces, np.array(planes), np.array(edges, dtype=np.int64)


def _farthest_points(points, k):
    """k of the points, each the farthest from those already taken (spread over the hull)."""
    pick = [int(np.argmax(np.linalg.norm(points - points.mean(axis=0), axis=1)))]
    dist = np.linalg.norm(points - points[pick[0]], axis=1)
    while len(pick) < k:
        pick.append(int(np.argmax(dist)))
        dist = np.minimum(dist, np.linalg.norm(points - points[pick[-1]], axis=1))
    return points[pick]


def hull_points(points, where, warning=UserWarning, stacklevel=3):
    """Points whose hull the engine can hold: ``points``, or — when their hull has more than
    :data:`HULL_MAX_VERTICES` vertices — that many of its vertices spread by farthest-point
    sampling, with a warning naming ``where``."""
    require("scipy", "sim", "convex hulls of meshes")
    from scipy.spatial import ConvexHull
    points = np.asarray(points, float)
    if len(points) > HULL_MAX_VERTICES:
        hull = ConvexHull(points)
        if len(hull.vertices) > HULL_MAX_VERTICES:
            warnings.warn(f"{where}: its hull has {len(hull.vertices)} vertices; kept {HULL_MAX_VERTICES} of them "
                          "(farthest-point sampling)", warning, stacklevel=stacklevel)
            return _farthest_points(points[hull.vertices], HULL_MAX_VERTICES)
    return points


# hull_tables' packed blocks by the points' bytes: a URDF's meshes are hulled once, when the loader checks
# them, and every geoms table of the model (its own, with_ground's floored copies, one per height) packs
# the same blocks (issue 33: the 17 hulls of solo12 took 0.5 s of its first hard-contact run, three times)
_HULL_BLOCKS: dict = {}
_HULL_BLOCKS_MAX = 512


def _hull_block(points):
    """``hull_packed(*hull_tables(points))``, kept by the points' bytes (read-only: it is shared)."""
    points = np.ascontiguousarray(points, dtype=float)
    key = (points.shape, points.tobytes())
    block = _HULL_BLOCKS.get(key)
    if block is None:
        block = hull_packed(*hull_tables(points))
        block.setflags(write=False)
        if len(_HULL_BLOCKS) >= _HULL_BLOCKS_MAX:
            _HULL_BLOCKS.pop(next(iter(_HULL_BLOCKS)))
        _HULL_BLOCKS[key] = block
    return block


def hull_packed(verts, faces, planes, edges):
    """A hull as one float64 block (the layout ``csrc/engine/convex.c``'s mb_hulls_load reads): nv,
    nf, ne, n_face_indices, vertices (nv × 3), planes (nf × [n, d]), face starts (nf + 1), face
    vertex indices, edges (ne × [v0, v1, left face, right face])."""
    starts = np.cumsum([0] + [len(f) for f in faces])
    idx = np.concatenate([np.asarray(f, float) for f in faces])
    head = [len(verts), len(faces), len(edges), len(idx)]
    return np.concatenate([np.asarray(head, float), np.asarray(verts, float).ravel(), np.asarray(planes).ravel(),
                           starts.astype(float), idx, np.asarray(edges).astype(float).ravel()])
