"""``plot_bodies``: the kinematic tree at one configuration in a matplotlib 3-D view (proNEu ``plotBodies``).

proNEu's ``plotBodies(body, param, paramDef, q, qDef)`` draws the global kinematic tree so a user
can check a configuration at a glance: each body frame's axes in red, green and blue and, since
version 1.1, a world frame.  Here the same picture comes from a :class:`multibody.Model` and q,
with links between joint origins, centre-of-mass markers and the model's geometry.
"""
from __future__ import annotations

import numpy as np

from .. import _checks
from ..model.model import Model
from ..model.appearance import appearance_of, characteristic_length, triangles
from ._layout import spread_labels, tidy_3d_axes
from .._extras import require

__all__ = ["plot_bodies", "FRAME_COLOURS"]

FRAME_COLOURS = ("red", "green", "blue")   # x, y, z axes, as in proNEu's plotBodies


def _check_q(model, q):
    return _checks.vector("q", q, model.nq)


def plot_bodies(model: Model, q=None, ax=None, names: bool = False, geometry: bool = True,
                frames: bool = True, com: bool = True, frame_length: float | None = None,
                max_mesh_faces: int = 4000):
    """Draw ``model`` at configuration ``q`` (default: neutral) and return the 3-D Axes.

    * a world frame (longer axes, at the origin) and each body's frame, x/y/z in red/green/blue;
    * links (black lines) from each body's origin to the origins of its children's joints;
    * centre-of-mass markers (magenta dots) for bodies with mass;
    * the model's geometry (boxes, cylinders, spheres, capsules, meshes, solids), or
      :func:`multibody.model.appearance.default_appearance` when the model has none;
    * with ``names=True``, each body's name beside its origin, moved apart from the others' when
      they would overlap (bodies sharing an origin get a leader line each).

    Artists carry ``gid`` labels (``"world-frame-x"``, ``"frame-3-z"``, ``"link-2"``, ``"com"``,
    ``"geometry"``) so that a script can find them.  Meshes with more than ``max_mesh_faces``
    triangles are thinned for matplotlib (the browser viewer draws them whole).

    Parameters
    ----------
    model : Model
        A numeric model.
    q : array_like, shape (nq,), optional
        The configuration (rad, m; quaternions [w, x, y, z]); default the neutral one.
    ax : mpl_toolkits.mplot3d.Axes3D, optional
        Axes to draw into; default a new figure's.
    names : bool, optional
        Write each body's name beside its origin (default False).
    geometry : bool, optional
        Draw the model's geometry, or its default appearance (default True).
    frames : bool, optional
        Draw the body frames (default True).
    com : bool, optional
        Mark the centres of mass (default True).
    frame_length : float, optional
        Length (m) of the body frames' axes (> 0); default 0.3 × the model's characteristic length.
    max_mesh_faces : int, optional
        Meshes with more triangles are thinned to about this many (≥ 1; default 4000).

    Returns
    -------
    mpl_toolkits.mplot3d.Axes3D
        The axes drawn into, scaled equally in x, y, z (m).

    Raises
    ------
    TypeError
        ``model`` is not a Model; ``q`` is not numbers.
    ValueError
        ``q`` of the wrong shape or not finite; a symbolic model; ``ax`` not 3-D;
        ``frame_length`` not positive; ``max_mesh_faces`` < 1.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np, multibody as mb
    >>> ax = mb.view.plot_bodies(mb.models.double_pendulum(), [np.pi / 4, -np.pi / 4])
    >>> sorted({l.get_gid() for l in ax.lines if l.get_gid().startswith("world")})
    ['world-frame-x', 'world-frame-y', 'world-frame-z']
    """
    require("matplotlib", "view", "plot_bodies")
    import matplotlib.pyplot as plt
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    from ..kinematics import forward_kinematics

    if isinstance(getattr(model, "model", None), Model):      # a Mechanism: draw its tree
        model = model.model
    _checks.model(model)
    q = model.neutral() if q is None else _check_q(model, q)
    if ax is None:
        fig = plt.figure(figsize=(6.4, 6.0))
        ax = fig.add_subplot(projection="3d")
    elif getattr(ax, "name", "") != "3d":
        raise ValueError("ax: expected a 3-D Axes (fig.add_subplot(projection='3d'))")
    L = characteristic_length(model)
    flen = 0.3 * L if frame_length is None else _checks.number("frame_length", frame_length, positive=True)
    max_mesh_faces = _checks.integer("max_mesh_faces", max_mesh_faces, lo=1)
    if model.nb:
        R, p = forward_kinematics(model, q)
    else:
        R, p = np.zeros((0, 3, 3)), np.zeros((0, 3))
    points = [np.zeros(3)]

    def axes_at(origin, rot, length, prefix, lw):
        for k, colour in enumerate(FRAME_COLOURS):
            end = origin + length * rot[:, k]
            ax.plot(*np.column_stack([origin, end]), color=colour, lw=lw, gid=f"{prefix}-{'xyz'[k]}")

    axes_at(np.zeros(3), np.eye(3), 1.6 * flen, "world-frame", 2.5)
    labels = [ax.text(0, 0, 0, "world", fontsize=8, color="0.3", gid="label-world")]
    directions = [np.array([0.0, 0.0, -1.0])]       # below the origin, clear of the bodies above it
    for i in range(model.nb):
        par = model.parent[i]
        Rp, pp = (np.eye(3), np.zeros(3)) if par < 0 else (R[par], p[par])
        joint_origin = pp + Rp @ model.tree_translation[i]
        ax.plot(*np.column_stack([pp, joint_origin, p[i]]), color="black", lw=1.8, gid=f"link-{i}")
        points += [joint_origin, p[i]]
        if frames:
            axes_at(p[i], R[i], flen, f"frame-{i}", 1.5)
        if names:
            labels.append(ax.text(*p[i], model.body_names[i], fontsize=8, gid=f"label-{i}"))
            directions.append(p[i] - pp)             # beyond the body, along the link that reaches it
    if com and model.nb:
        heavy = np.flatnonzero(model.mass > 0)
        if heavy.size:
            c = p[heavy] + np.einsum("nij,nj->ni", R[heavy], model.com[heavy])
            ax.scatter(*c.T, color="magenta", s=25, depthshade=False, gid="com")
            points += list(c)
    if geometry:
        polys, colours = [], []
        for g in appearance_of(model):
            tri = triangles(g)
            if tri is None:                  # a polyline
                V = np.asarray(g.vertices, float)
                Rb, pb = (np.eye(3), np.zeros(3)) if g.body < 0 else (R[g.body], p[g.body])
                W = V @ Rb.T + pb
                ax.plot(*W.T, color=(g.rgba or (0.2, 0.2, 0.2, 1))[:3], lw=1.0, gid="geometry-line")
                continue
            V, F = tri
            if g.kind == "mesh" and len(F) > max_mesh_faces:
                F = F[:: int(np.ceil(len(F) / max_mesh_faces))]
            Rb, pb = (np.eye(3), np.zeros(3)) if g.body < 0 else (R[g.body], p[g.body])
            W = V @ Rb.T + pb
            polys.extend(W[F])
            rgba = g.rgba or (0.72, 0.72, 0.76, 1.0)
            colours.extend([(rgba[0], rgba[1], rgba[2], 0.35 * rgba[3])] * len(F))
            points += [W.min(axis=0), W.max(axis=0)]
        if polys:
            coll = Poly3DCollection(polys, facecolors=colours, edgecolors="none", gid="geometry")
            ax.add_collection3d(coll)
    P = np.array(points)
    centre = (P.max(axis=0) + P.min(axis=0)) / 2
    half = max(0.55 * (P.max(axis=0) - P.min(axis=0)).max(), 0.5 * flen)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title(model.name)
    tidy_3d_axes(ax)
    # bodies often share an origin (a floating base built of six joints, a foot at its knee's
    # frame): their names are moved apart when drawn, each off its point along its link
    spread_labels(ax, labels, directions)
    return ax
