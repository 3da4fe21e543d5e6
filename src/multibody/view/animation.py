"""``showmotion``: a recorded motion as one self-contained web page (spatial_v2 ``showmotion``).

spatial_v2's ``showmotion(model, tdata, qdata)`` plays joint data at any speed, backwards too,
from any angle and magnification, with coarse and fine time sliders, a camera that can track a
body, and — with no data — a default animation in which "each joint variable in turn is ramped
from 0 to 1 and back to 0 in the space of one second".  Animations are saved with metadata (title,
author(s), date stamp, description) and loaded back (``showmotion(filename)``).

Here the player is a web page: :func:`showmotion` writes one HTML file holding the model's tree
(parents, joint types and axes, tree transforms), its drawing instructions (``model.geometries``
or :func:`~multibody.model.appearance.default_appearance`; URDF meshes embedded as triangles) and
q(t) as float32.  Forward kinematics runs in the browser (``viewer.js``, written for this
project), so the file grows with one number per joint variable per sample — a 10 s run at 1 kHz of
a 30-body robot is about 1.6 MB — not with a pose per body per frame.  The page plays with no
network: no script is fetched.  :func:`load_animation` reads a page back.
"""
from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from .. import _checks
from ..model.model import Geometry, Model
from .._io import NotRegularFile, fspath, open_regular, write_bytes
from ..model.appearance import Camera, appearance_of, characteristic_length, default_appearance, load_mesh

__all__ = ["showmotion", "load_animation", "Animation", "default_motion", "page_html", "show", "Page", "contact_arrows"]

FORMAT = "multibody-showmotion/1"
_PLOT_POINTS = 2000   # plot series are thinned to this many samples (the animation keeps all)


@dataclass
class Animation:
    """An animation read back by :func:`load_animation` (spatial_v2's saved animation).

    ``model`` is rebuilt from the page (tree, masses, drawing instructions — meshes come back as
    vertex/face ``solid`` geometries), ``t`` and ``q`` are the samples (q as stored, float32
    precision), ``meta`` holds title, author, date and description, ``plots`` the plotted series.
    ``showmotion(animation, out=...)`` writes it again, e.g. with new metadata.
    """
    model: Model
    t: np.ndarray
    q: np.ndarray
    meta: dict
    default: bool = False
    plots: dict = field(default_factory=dict)

    @property
    def title(self):
        return self.meta.get("title", "")

    @property
    def author(self):
        return self.meta.get("author", "")

    @property
    def date(self):
        return self.meta.get("date", "")

    @property
    def description(self):
        return self.meta.get("description", "")


def _b64(a, dtype) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode("ascii")


def _unb64(s, dtype):
    return np.frombuffer(base64.b64decode(s, validate=True), dtype=dtype)


def default_motion(model: Model, samples_per_second: int = 30):
    """spatial_v2's default animation: each joint variable in turn ramped 0 → 1 → 0 in one second.

    Returns ``(t, q)``; the animation lasts ``model.nv`` seconds.  Multi-DoF joints are ramped
    along each velocity variable (``mb.integrate`` from the neutral configuration), so
    quaternions stay unit.

    Parameters
    ----------
    model : Model
        A numeric model.
    samples_per_second : int, optional
        Samples in each one-second ramp (≥ 1, at least 2 are used; default 30).

    Returns
    -------
    t : ndarray, shape (N,)
        Times (s), 0 … nv (a model without dofs: [0, 1]).
    q : ndarray, shape (N, nq)
        Configurations.

    Raises
    ------
    TypeError
        ``model`` is not a Model; ``samples_per_second`` is not an integer.
    ValueError
        A symbolic model; ``samples_per_second`` < 1.

    Examples
    --------
    >>> import multibody as mb
    >>> t, q = default_motion(mb.models.planar(2), samples_per_second=4)
    >>> float(t[-1]), q[2].tolist(), q[6].tolist()
    (2.0, [1.0, 0.0], [0.0, 1.0])
    """
    from ..model.configuration import integrate

    _checks.model(model)
    n = max(_checks.integer("samples_per_second", samples_per_second, lo=1), 2)
    tau = np.linspace(0.0, 1.0, n + 1)[:-1]
    ramp = 1.0 - np.abs(2.0 * tau - 1.0)        # 0 → 1 → 0 within each second
    q0 = model.neutral()
    if model.nv == 0:
        return np.array([0.0, 1.0]), np.tile(q0, (2, 1))
    t = np.concatenate([k + tau for k in range(model.nv)] + [np.array([float(model.nv)])])
    V = np.zeros((len(t), model.nv))
    for k in range(model.nv):
        V[k * n:(k + 1) * n, k] = ramp
    Q = integrate(model, np.tile(q0, (len(t), 1)), V) if model.nq != model.nv else q0 + V
    return t, np.asarray(Q, dtype=float)


def _motion(model, trajectory):
    """(t, q, energies dict, qd or None, default flag) from the accepted trajectory forms."""
    if trajectory is None:
        t, q = default_motion(model)
        return t, q, {}, None, True
    energies, qd = {}, None
    if isinstance(trajectory, tuple) and len(trajectory) == 2:        # spatial_v2's (tdata, qdata)
        t, q = trajectory
    elif hasattr(trajectory, "t") and hasattr(trajectory, "q"):
        t, q = trajectory.t, trajectory.q
        qd = getattr(trajectory, "qd", None)
        for key in ("kinetic_energy", "potential_energy", "total_energy"):
            v = getattr(trajectory, key, None)
            if v is not None:
                energies[key] = np.asarray(v, dtype=float)
    else:
        raise TypeError(f"trajectory: expected None, a Trajectory or a (t, q) tuple, got "
                        f"{type(trajectory).__name__}")
    t = np.asarray(t, dtype=float).ravel()
    q = np.asarray(q, dtype=float)
    if q.ndim == 3 and q.shape[1] == 1:                                 # Simulink's m×1×n
        q = q[:, 0, :].T
    if q.ndim != 2:
        raise ValueError(f"trajectory.q: expected a 2-D array (samples × nq), got shape {q.shape}")
    if q.shape[0] != len(t) and q.shape[1] == len(t) and q.shape[0] == model.nq:
        q = q.T                                                         # spatial_v2's nq × n layout
    if q.shape != (len(t), model.nq):
        raise ValueError(f"trajectory does not fit the model: q has shape {q.shape}, expected "
                         f"({len(t)}, {model.nq}) for model {model.name!r} (nq = {model.nq})")
    if len(t) < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0) or not t[-1] > t[0]:
        raise ValueError("trajectory.t: expected ≥ 2 finite, non-decreasing times with t[-1] > t[0]")
    if not np.all(np.isfinite(q)):
        raise ValueError("trajectory.q: contains NaN or inf")
    for key, v in energies.items():
        if v.shape != t.shape:
            raise ValueError(f"trajectory.{key}: expected shape {t.shape}, got {v.shape}")
    if qd is not None:
        qd = np.asarray(qd, dtype=float)
        if qd.shape != (len(t), model.nv):
            qd = None
    if not energies and qd is not None and not model.is_symbolic:
        from ..dynamics import energy
        e = energy(model, q, qd)
        energies = {"kinetic_energy": np.asarray(e.KE, float), "potential_energy": np.asarray(e.PE, float)}
    if "kinetic_energy" in energies and "potential_energy" in energies and "total_energy" not in energies:
        energies["total_energy"] = energies["kinetic_energy"] + energies["potential_energy"]
    return t, q, energies, qd, False


def _shape_extent(g: Geometry, mesh_cache):
    """(centre in body coordinates, radius) of a bounding sphere of a geometry."""
    R = np.eye(3) if g.rotation is None else np.asarray(g.rotation, float)
    c = np.zeros(3) if g.translation is None else np.asarray(g.translation, float)
    if g.kind == "box":
        return c, 0.5 * float(np.linalg.norm(g.size))
    if g.kind in ("cylinder", "capsule"):
        return c, math.hypot(g.size[0], 0.5 * g.size[1]) + (g.size[0] if g.kind == "capsule" else 0)
    if g.kind == "sphere":
        return c, float(g.size[0])
    V = None
    if g.kind == "mesh" and g.mesh in mesh_cache:
        V = mesh_cache[g.mesh][0]
    elif g.kind in ("line", "solid"):
        V = np.asarray(g.vertices, float)
    if V is None or not len(V):
        return c, 0.0
    lo, hi = V.min(axis=0), V.max(axis=0)
    return c + R @ ((lo + hi) / 2), 0.5 * float(np.linalg.norm(hi - lo))


def _nice(x):
    """1, 2 or 5 times a power of ten, near x."""
    e = 10 ** math.floor(math.log10(x))
    return min((1, 2, 5, 10), key=lambda m: abs(m * e - x)) * e


def _scene(model, q, shapes, mesh_cache, camera):
    from ..kinematics import forward_kinematics
    idx = np.unique(np.linspace(0, len(q) - 1, min(len(q), 300)).round().astype(int))
    pts = [np.zeros((1, 3))]
    rad = [np.zeros(1)]
    if model.nb:
        R, p = forward_kinematics(model, q[idx])
        pts.append(p.reshape(-1, 3))
        rad.append(np.zeros(p.shape[0] * p.shape[1]))
        for g in shapes:
            if g.kind == "tiles":
                continue
            c, r = _shape_extent(g, mesh_cache)
            if g.body < 0:
                pts.append(c[None])
                rad.append(np.array([r]))
            else:
                pts.append(p[:, g.body] + R[:, g.body] @ c)
                rad.append(np.full(len(idx), r))
    else:
        for g in shapes:
            c, r = _shape_extent(g, mesh_cache)
            pts.append(c[None])
            rad.append(np.array([r]))
    P, r = np.concatenate(pts), np.concatenate(rad)
    lo, hi = (P - r[:, None]).min(axis=0), (P + r[:, None]).max(axis=0)
    centre = (lo + hi) / 2
    radius = max(0.5 * float(np.linalg.norm(hi - lo)), 0.1)
    if camera is not None:
        up = np.asarray(camera.up, float)
    else:
        g = np.asarray(model.gravity, float)
        up = -g if np.linalg.norm(g) > 0 else np.array([0.0, 0.0, 1.0])
    up = up / np.linalg.norm(up)
    floor = float(((P @ up) - r).min()) - 0.02 * radius
    has_tiles = any(g.kind == "tiles" for g in shapes)
    L = characteristic_length(model)
    grid = None if has_tiles else {"half": float(_nice(1.5 * radius) * 1.0), "step": float(_nice(radius / 4))}
    return {"center": centre.tolist(), "radius": radius, "up": up.tolist(), "floor": floor, "grid": grid,
            "frame": float(min(0.3 * L, 0.3 * radius))}


def _shape_json(g: Geometry, model, meshes, mesh_index, mesh_cache):
    R = np.eye(3) if g.rotation is None else np.asarray(g.rotation, float)
    t = np.zeros(3) if g.translation is None else np.asarray(g.translation, float)
    out = {"body": int(g.body), "kind": g.kind, "size": [float(s) for s in g.size], "R": R.ravel().tolist(),
           "t": t.tolist(), "rgba": list(g.rgba) if g.rgba is not None else None, "name": g.name}
    if g.kind == "mesh":
        key = (g.mesh, tuple(g.scale))
        if key not in mesh_index:
            V, F = mesh_cache[g.mesh]
            V = V * np.asarray(g.scale, float)
            mesh_index[key] = len(meshes)
            # positions quantised to 16 bits across the mesh's bounding box (a 0.3 m link: 5 µm steps),
            # indices in 16 bits when they fit: a third of the float32/uint32 size
            lo, hi = V.min(axis=0), V.max(axis=0)
            span = np.where(hi > lo, hi - lo, 1.0)
            quant = np.round((V - lo) / span * 65535).astype("<u2")
            wide = len(V) > 65535
            meshes.append({"name": os.path.basename(str(g.mesh)), "lo": lo.tolist(), "span": span.tolist(),
                           "positions": _b64(quant, "<u2"), "indices": _b64(F, "<u4" if wide else "<u2"),
                           "index_bytes": 4 if wide else 2})
        out["mesh"] = mesh_index[key]
    elif g.kind in ("line", "solid"):
        out["vertices"] = np.asarray(g.vertices, float).tolist()
        if g.kind == "solid":
            out["faces"] = [list(f) for f in g.faces]
    return out


def _thin(n):
    return np.unique(np.linspace(0, n - 1, min(n, _PLOT_POINTS)).round().astype(int))


def _plots(model, t, q, qd, energies):
    idx = _thin(len(t))
    groups = []
    if energies:
        series = [{"name": nm, "data": _b64(energies[k][idx], "<f4"), "color": col}
                  for k, nm, col in (("kinetic_energy", "kinetic", "#d62728"), ("potential_energy", "potential",
                                     "#1f77b4"), ("total_energy", "total", "#000000")) if k in energies]
        groups.append({"id": "energy", "title": "energy [J]", "series": series})
    names = list(model.joint_names) if model.nq == model.nb else [f"q{k + 1}" for k in range(model.nq)]
    groups.append({"id": "states", "title": "joint positions q",
                   "series": [{"name": names[k], "data": _b64(q[idx, k], "<f4")} for k in range(q.shape[1])]})
    if qd is not None:
        vn = list(model.joint_names) if model.nv == model.nb else [f"v{k + 1}" for k in range(model.nv)]
        groups.append({"id": "velocities", "title": "joint velocities q̇",
                       "series": [{"name": vn[k], "data": _b64(qd[idx, k], "<f4")} for k in range(qd.shape[1])]})
    return {"t": _b64(t[idx], "<f4"), "groups": groups}


def contact_arrows(trajectory, every: int = 1) -> tuple:
    """The contact forces a run recorded (``traj.contact_forces``, one per contact slot) as arrows:
    where each acts and its force, per sample, as the viewer draws them.

    The contacts are collided again at each recorded q (the compiled narrow phase, as
    ``traj.sensordata`` does), so each arrow starts at its contact's position (the midpoint
    between the two surfaces) and is the force on geom b (normal from a into b: the push of the
    ground on the body, for a floor or height field).

    Parameters
    ----------
    trajectory : Trajectory
        A run of :func:`multibody.simulate` with the model's own contact (``contact_forces`` of
        shape (N, slots, 3)).
    every : int, optional
        Take every ``every``-th sample (≥ 1; default 1: all).

    Returns
    -------
    samples : ndarray, shape (n,)
        The sample index of each arrow.
    position : ndarray, shape (n, 3)
        Where each force acts (world coordinates, m).
    force : ndarray, shape (n, 3)
        The force (N) on geom b.
    normal : ndarray, shape (n, 3)
        The contact's unit normal (from geom a into b): the force's part along it is the normal
        force, the rest friction (the viewer colours the arrow by their share).

    Raises
    ------
    ValueError
        The trajectory has no contact forces, or not the slots of its model's geoms.
    TypeError
        ``every`` is not an integer.

    Examples
    --------
    >>> import multibody as mb
    >>> m = mb.load_mjcf('<mujoco><worldbody><geom type="plane" size="1 1 .1"/><body pos="0 0 0.1">'
    ...                  '<freejoint/><geom type="sphere" size="0.1"/></body></worldbody></mujoco>')
    >>> tr = mb.simulate(m, None, None, 0.2, contact="hard")
    >>> n, p, f, normal = contact_arrows(tr)
    >>> round(float(f[-1, 2] / (m.mass.sum() * 9.81)), 3), round(float(p[-1, 2]), 3)
    (1.0, -0.0)
    """
    from ..simulation.trajectory import _recorded_contacts
    every = _checks.integer("every", every, lo=1)
    if getattr(trajectory, "contact_forces", None) is None:
        raise ValueError("trajectory: no contact forces recorded (a run with the model's own contact has them)")
    q = np.asarray(trajectory.q, float)
    rows = np.arange(0, len(q), every)
    sub = _Sliced(trajectory, rows)
    c = _recorded_contacts(sub, q[rows])
    if c is None:
        return np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3))
    keep = np.linalg.norm(c[5], axis=1) > 0
    return rows[c[0][keep]], c[3][keep], c[5][keep], c[4][keep]


class _Sliced:
    """The fields _recorded_contacts reads of a trajectory, at some of its samples."""

    def __init__(self, traj, rows):
        self.model, self.contact_geoms = traj.model, getattr(traj, "contact_geoms", None)
        self.contact_forces = np.asarray(traj.contact_forces)[rows]


def _contacts_json(model, trajectory, n, radius):
    """The page's arrows: per sample the start of its arrows (n + 1), positions, forces and the
    friction share of each (|f_t| / |f|: the viewer's colour, red for a push along the normal to
    blue for friction alone), and the length scale (m per N) that draws the largest force 0.25 of
    the scene's radius long."""
    if getattr(trajectory, "contact_forces", None) is None or getattr(trajectory, "model", None) is not model:
        return None
    try:
        samples, pos, force, normal = contact_arrows(trajectory)
    except ValueError:
        return None
    size = np.linalg.norm(force, axis=1)
    along = np.einsum("ij,ij->i", force, normal)
    share = np.linalg.norm(force - along[:, None] * normal, axis=1) / np.where(size > 0, size, 1.0)
    start = np.searchsorted(samples, np.arange(n + 1)).astype("<i4")
    big = float(np.linalg.norm(force, axis=1).max()) if len(force) else 0.0
    return {"start": _b64(start, "<i4"), "pos": _b64(pos, "<f4"), "force": _b64(force, "<f4"),
            "friction": _b64(share, "<f4"),
            "count": int(len(force)), "scale": 0.25 * radius / big if big > 0 else 0.0}


def _model_json(model: Model):
    return {"name": model.name, "nb": model.nb, "nq": model.nq, "nv": model.nv,
            "parent": model.parent.tolist(), "jtype": model.jtype.tolist(), "axis": model.jaxis.tolist(),
            "pitch": model.jpitch.tolist(), "tree_R": model.tree_rotation.reshape(model.nb, 9).tolist(),
            "tree_t": model.tree_translation.tolist(), "q_start": model.q_start.tolist(),
            "body_names": list(model.body_names), "joint_names": list(model.joint_names),
            "gravity": model.gravity.tolist(), "mass": model.mass.tolist(), "com": model.com.tolist(),
            "inertia": model.inertia_com.reshape(model.nb, 9).tolist(), "planar": bool(model.planar)}


def _camera_json(model, camera):
    if camera is None:
        return None
    body = camera.body
    if body is not None:
        body = model.body_index(body)
    return {"direction": list(map(float, camera.direction)), "up": list(map(float, camera.up)),
            "zoom": float(camera.zoom), "locus": None if camera.locus is None else list(map(float, camera.locus)),
            "body": body, "track_point": list(map(float, camera.track_point))}


def showmotion(model, trajectory=None, out="anim.html", title=None, author=None, description=None,
               camera=None) -> str:
    """Write an animation of ``model`` as one self-contained HTML page; returns its absolute path.

    The page: a lit WebGL scene (the model's geometry or a default look, body frames, floor grid),
    play/pause, signed speed (negative plays backwards), coarse and fine time sliders, loop,
    orbit/zoom/pan with the mouse, a camera that can follow any body, energy and state plots on
    the same time cursor, and the metadata. spatial_v2's ``showmotion``.

    Parameters
    ----------
    model : Model, Mechanism or Animation
        A numeric :class:`multibody.Model` (a Mechanism draws its tree), or an
        :class:`Animation` from :func:`load_animation`, to write it again (e.g. with new metadata).
    trajectory : Trajectory or (tdata, qdata), optional
        A ``Trajectory`` (``t`` in s, ``q``, and ``qd``/energies when present, which are
        plotted), spatial_v2's ``(tdata, qdata)`` pair (qdata as samples × nq, nq × samples or
        Simulink's nq × 1 × samples), or None for the default animation (each joint ramped in
        turn, one second each: :func:`default_motion`).
    out : str or os.PathLike, optional
        The HTML file to write (atomically; default ``"anim.html"``).
    title, author, description : str, optional
        Metadata shown in the page (default title: the model's name); the date stamp is set here.
    camera : Camera, optional
        A :class:`multibody.view.Camera`; default ``model.camera``, else an automatic one.

    Returns
    -------
    str
        The absolute path of the page written.

    Raises
    ------
    TypeError
        ``model`` is not a Model; ``camera`` is not a Camera; a metadata entry is not a string;
        ``out`` is not a path.
    ValueError
        A trajectory that does not fit the model (shape, NaN or inf); ``out`` is a folder or in a
        folder that does not exist.

    Examples
    --------
    >>> import os, tempfile, multibody as mb
    >>> from multibody.view import load_animation, showmotion
    >>> path = showmotion(mb.models.double_pendulum(), out=os.path.join(tempfile.mkdtemp(), "dp.html"),
    ...                   title="double pendulum", author="me")
    >>> anim = load_animation(path)
    >>> anim.title, anim.default, float(anim.t[-1]), anim.q.shape
    ('double pendulum', True, 2.0, (61, 2))
    """
    page = page_html(model, trajectory, title=title, author=author, description=description, camera=camera)
    return write_bytes(out, page.encode("utf-8"))


def page_html(model, trajectory=None, *, title=None, author=None, description=None, camera=None) -> str:
    """The text of the page :func:`showmotion` writes (the same arguments, no file): for notebooks
    (:func:`show`) and for anything that serves the page itself.

    Parameters
    ----------
    model, trajectory, title, author, description, camera
        As :func:`showmotion` takes them.

    Returns
    -------
    str
        The self-contained HTML page.

    Raises
    ------
    TypeError, ValueError
        As :func:`showmotion`.

    Examples
    --------
    >>> import multibody as mb
    >>> text = page_html(mb.models.double_pendulum(), title="dp")
    >>> text.startswith("<!DOCTYPE html>"), "<title>dp</title>" in text
    (True, True)
    """
    if trajectory is None and not isinstance(model, Animation) and hasattr(model, "t") and hasattr(model, "q") \
            and isinstance(getattr(model, "model", None), Model):
        model, trajectory = model.model, model        # a Trajectory or an engine Recording knows its model
    if isinstance(model, Animation):
        anim = model
        model = anim.model
        if trajectory is None and not anim.default:
            trajectory = _Stored(anim)
        title = anim.meta.get("title") if title is None else title
        author = anim.meta.get("author") if author is None else author
        description = anim.meta.get("description") if description is None else description
    if isinstance(getattr(model, "model", None), Model):      # a Mechanism: draw its tree
        model = model.model
    _checks.model(model)
    camera = model.camera if camera is None else camera
    if camera is not None and not isinstance(camera, Camera):
        raise TypeError(f"camera: expected a multibody.view.Camera, got {type(camera).__name__}")
    for name, v in (("title", title), ("author", author), ("description", description)):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{name}: expected a string, got {type(v).__name__}")
    t, q, energies, qd, is_default = _motion(model, trajectory)

    shapes, mesh_cache = _readable_shapes(model)
    meshes, mesh_index = [], {}
    data = {
        "format": FORMAT,
        "meta": {"title": title or model.name, "author": author or "", "description": description or "",
                 "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 "generator": "multibody.view.showmotion"},
        "model": _model_json(model),
        "shapes": [_shape_json(g, model, meshes, mesh_index, mesh_cache) for g in shapes],
        "meshes": meshes,
        "camera": _camera_json(model, camera),
        "scene": _scene(model, q, shapes, mesh_cache, camera),
        "motion": {"t": _b64(t, "<f8"), "q": _b64(q, "<f4"), "n": len(t), "default": is_default},
        "plots": _plots(model, t, q, qd, energies),
    }
    data["contacts"] = None if is_default else _contacts_json(model, trajectory, len(t), data["scene"]["radius"])
    return _page(data)


class Page:
    """A viewer page shown inline by Jupyter (``_repr_html_``: the page in an ``<iframe srcdoc>``,
    self-contained, no file written) and as its text by ``str``."""

    def __init__(self, text: str, height: int = 560):
        self.text, self.height = text, _checks.integer("height", height, lo=1)

    def __str__(self):
        return self.text

    def _repr_html_(self):
        return (f'<iframe srcdoc="{html.escape(self.text, quote=True)}" style="width: 100%; height: {self.height}px; '
                'border: 0" sandbox="allow-scripts"></iframe>')


def show(model, trajectory=None, *, title=None, author=None, description=None, camera=None, height=560) -> Page:
    """The animation of ``model`` (and ``trajectory``) as a :class:`Page` that a notebook displays
    inline — the last expression of a cell, or ``IPython.display.display(show(...))`` — without
    writing a file. ``model`` may also be a ``Trajectory`` or an engine ``Recording`` (its own model
    is drawn).

    Parameters
    ----------
    model : Model, Trajectory or Recording
        What to draw (as :func:`showmotion` takes it).
    trajectory : Trajectory or (tdata, qdata), optional
        The motion, as :func:`showmotion` takes it (None: the default animation).
    title, author, description : str, optional
        Metadata shown in the page.
    camera : Camera, optional
        The view; default ``model.camera``, else an automatic one.
    height : int, optional
        Height (pixels, ≥ 1) of the inline frame (default 560).

    Returns
    -------
    Page
        ``str(page)`` is the page's HTML; ``page._repr_html_()`` the ``<iframe srcdoc>`` Jupyter shows.

    Raises
    ------
    TypeError
        As :func:`showmotion`; ``height`` is not an integer.
    ValueError
        As :func:`showmotion`; ``height`` < 1.

    Examples
    --------
    >>> import multibody as mb
    >>> page = show(mb.models.double_pendulum())
    >>> page._repr_html_().startswith("<iframe srcdoc=")
    True
    """
    height = _checks.integer("height", height, lo=1)     # before the page is built
    return Page(page_html(model, trajectory, title=title, author=author, description=description, camera=camera),
                height)


def notebook_html(obj) -> str:
    """``text/html`` of a Model or a Trajectory for Jupyter's display (registered by
    ``multibody/__init__.py`` when IPython is running): the viewer page inline."""
    if hasattr(obj, "t") and hasattr(obj, "q") and getattr(obj, "model", None) is None:
        return None                                   # a trajectory without its model: the plain repr
    return show(obj)._repr_html_()



def _script_json(data) -> str:
    """JSON safe inside ``<script>``: no ``<``, ``>`` or ``&`` at all (``\\u003c`` …), so neither ``</script>``
    nor ``<!--<script>`` in a name (which makes the HTML parser swallow the page's closing tag)
    can end or escape the element; ``json.loads`` reads the same values back."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _page(data) -> str:
    """The viewer page: one pass over the template, so text put in is never read as a placeholder."""
    parts = {"TITLE": html.escape(data["meta"]["title"]), "JS": _viewer_js(), "DATA": _script_json(data)}
    return re.sub(r"\{\{(TITLE|JS|DATA)\}\}", lambda m: parts[m.group(1)], _template())


def _readable_shapes(model):
    """The model's shapes with their meshes read; a body whose meshes cannot be read (a missing file,
    a .dae without pycollada) is drawn with the default look instead of vanishing, and one warning
    line says how many and why."""
    shapes, mesh_cache, failed = [], {}, {}
    for g in appearance_of(model):
        if g.kind == "mesh":
            try:
                mesh_cache.setdefault(g.mesh, load_mesh(g.mesh))
            except (ValueError, ImportError) as e:
                failed.setdefault(g.body, (g.mesh, e))
                continue
        shapes.append(g)
    if failed:
        drawn = {g.body for g in shapes}
        shapes += [g for g in default_appearance(model) if g.body in failed and g.body not in drawn]
        path, why = next(iter(failed.values()))
        dae = any(str(m).lower().endswith(".dae") and "no such file" not in str(e) for m, e in failed.values())
        hint = "; .dae meshes need pycollada: pip install 'multibody[view]'" if dae else ""
        first = " ".join(str(why).split())[:160]
        warnings.warn(f"showmotion: the meshes of {len(failed)} bod{'y' if len(failed) == 1 else 'ies'} could not be "
                      f"read (first: {first}); drawn with the default look{hint}", stacklevel=3)
    return shapes, mesh_cache


class _Stored:
    """A trajectory view of a loaded Animation (its samples and plotted energies)."""

    def __init__(self, anim):
        self.t, self.q = anim.t, anim.q
        self.qd = None
        for k in ("kinetic_energy", "potential_energy", "total_energy"):
            setattr(self, k, None)


def _template() -> str:
    return resources.files(__package__).joinpath("viewer.html").read_text(encoding="utf-8")


def _viewer_js() -> str:
    from ..model.joints import js_constants  # the joint constants come from the one joint table
    js = resources.files(__package__).joinpath("viewer.js").read_text(encoding="utf-8")
    return js.replace("/*{{JOINT_POSE}}*/", js_constants())


def _mesh_positions(mm):
    q = _unb64(mm["positions"], "<u2").reshape(-1, 3).astype(float)
    return np.asarray(mm["lo"], float) + q / 65535 * np.asarray(mm["span"], float)


_DATA_RE = re.compile(r'<script type="application/json" id="sm-data">(.*?)</script>', re.S)


def load_animation(path) -> Animation:
    """Read an animation written by :func:`showmotion` (spatial_v2 ``showmotion(filename)``).

    Raises ValueError for a file that is not such a page, or is truncated or damaged.

    Parameters
    ----------
    path : str or os.PathLike
        A page written by :func:`showmotion`.

    Returns
    -------
    Animation
        ``t`` (s, shape (N,)), ``q`` (N, nq), ``title``, ``meta`` (title, author, description,
        date), ``default`` (True for the default animation) and the model's drawing data; give it
        to :func:`showmotion` to write it again.

    Raises
    ------
    TypeError
        ``path`` is not a path.
    ValueError
        A file that cannot be read, is not such a page, or is truncated or damaged; a folder or
        a FIFO.

    Examples
    --------
    >>> import os, tempfile, multibody as mb
    >>> from multibody.view import load_animation, showmotion
    >>> d = tempfile.mkdtemp()
    >>> path = showmotion(mb.models.planar(2), out=os.path.join(d, "p.html"), title="two links")
    >>> anim = load_animation(path)
    >>> anim.title, anim.q.shape
    ('two links', (61, 2))
    >>> again = showmotion(anim, out=os.path.join(d, "p2.html"), author="me")   # new metadata
    >>> load_animation(again).meta["author"]
    'me'
    """
    path = fspath(path, "path")
    try:
        with open_regular(path, "path") as f:   # a FIFO would block forever
            text = f.read().decode("utf-8")
    except OSError as e:
        raise ValueError(f"animation {path!r}: cannot read it ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise ValueError(f"animation {path!r}: not a text file") from None
    except NotRegularFile as e:
        raise ValueError(f"animation {path!r}: {e.kind}, not a regular file") from None
    m = _DATA_RE.search(text)
    if m and not text.rstrip().endswith("</html>"):
        raise ValueError(f"animation {path!r}: truncated (the page does not end with </html>)")
    if not m:
        raise ValueError(f"animation {path!r}: no showmotion data found (not a page written by "
                         "multibody.view.showmotion, or truncated)")
    try:
        data = json.loads(m.group(1).replace("<\\/", "</"))
        if data.get("format") != FORMAT:
            raise ValueError(f"unknown format {data.get('format')!r}")
        M = data["model"]
        nb = int(M["nb"])
        shapes = []
        for s in data["shapes"]:
            R = np.asarray(s["R"], float).reshape(3, 3)
            common = dict(body=int(s["body"]), rotation=R, translation=np.asarray(s["t"], float),
                          rgba=None if s["rgba"] is None else tuple(s["rgba"]), name=s.get("name"))
            if s["kind"] == "mesh":
                mm = data["meshes"][s["mesh"]]
                V = _mesh_positions(mm)
                F = _unb64(mm["indices"], "<u4" if mm["index_bytes"] == 4 else "<u2").reshape(-1, 3)
                shapes.append(Geometry(kind="solid", vertices=V, faces=tuple(map(tuple, F.tolist())), **common))
            else:
                shapes.append(Geometry(kind=s["kind"], size=tuple(s["size"]),
                                       vertices=None if "vertices" not in s else np.asarray(s["vertices"], float),
                                       faces=None if "faces" not in s else tuple(map(tuple, s["faces"])), **common))
        cam = data.get("camera")
        camera = None if cam is None else Camera(direction=tuple(cam["direction"]), up=tuple(cam["up"]),
                                                 zoom=cam["zoom"], locus=None if cam["locus"] is None else
                                                 tuple(cam["locus"]), body=cam["body"],
                                                 track_point=tuple(cam["track_point"]))
        model = Model(parent=np.asarray(M["parent"], int), jtype=np.asarray(M["jtype"], int),
                      jaxis=np.asarray(M["axis"], float).reshape(nb, 3), jpitch=np.asarray(M["pitch"], float),
                      tree_rotation=np.asarray(M["tree_R"], float).reshape(nb, 3, 3),
                      tree_translation=np.asarray(M["tree_t"], float).reshape(nb, 3),
                      mass=np.asarray(M["mass"], float), com=np.asarray(M["com"], float).reshape(nb, 3),
                      inertia_com=np.asarray(M["inertia"], float).reshape(nb, 3, 3),
                      gravity=np.asarray(M["gravity"], float), body_names=tuple(M["body_names"]),
                      joint_names=tuple(M["joint_names"]), name=M["name"], geometries=tuple(shapes),
                      planar=bool(M.get("planar", False)), camera=camera)
        t = _unb64(data["motion"]["t"], "<f8").astype(float)
        q = _unb64(data["motion"]["q"], "<f4").astype(float)
        if q.size != len(t) * model.nq:
            raise ValueError(f"q holds {q.size} numbers, expected {len(t)} × {model.nq}")
        plots = {}
        pt = _unb64(data["plots"]["t"], "<f4").astype(float)
        for grp in data["plots"]["groups"]:
            plots[grp["id"]] = {"t": pt, **{s["name"]: _unb64(s["data"], "<f4").astype(float) for s in grp["series"]}}
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as e:
        raise ValueError(f"animation {path!r}: damaged showmotion data ({type(e).__name__}: {str(e)[:160]})") from None
    return Animation(model=model, t=t, q=q.reshape(len(t), model.nq), meta=dict(data["meta"]),
                     default=bool(data["motion"].get("default")), plots=plots)

