"""spatial_v2 ``gfxExample``: the kinematics of ``planar(2)`` adorned with every kind of drawing instruction.

The seed describes gfxExample as "a robot having the same kinematics as planar(2), but adorned with
a variety of graphical objects which, between them, illustrate all of the available drawing
instructions"; called with an argument it gets "a tracking camera that tracks the tip of the
white triangle", otherwise a fixed camera.  Read this file as the tutorial on drawing
instructions: each block below uses one kind (see :mod:`multibody.model.appearance`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..model.model import Model
from .spatial_v2 import planar

__all__ = ["gfx_example", "TRIANGLE_TIP"]

TRIANGLE_TIP = (1.35, 0.0, 0.0)   # in link 2's coordinates: what the tracking camera follows


def gfx_example(tracking: bool = False) -> Model:
    """planar(2) with boxes, cylinders, spheres, a capsule, lines, vertex/face solids, colours and a
    floor tile; ``tracking=True`` gives the camera that tracks the tip of the white triangle.

    Parameters
    ----------
    tracking : bool, default False
        Add the camera that follows the triangle's tip (``model.camera``).

    Returns
    -------
    Model
        spatial_v2 ``gfxExample``: ``planar(2)`` carrying every kind of drawing instruction.

    Examples
    --------
    >>> import multibody as mb
    >>> m = mb.models.gfx_example()
    >>> sorted({g.kind for g in m.geometries})
    ['box', 'capsule', 'cylinder', 'line', 'solid', 'sphere', 'tiles']
    >>> mb.models.gfx_example(tracking=True).camera.body
    1
    """
    from ..model import appearance as A

    base = planar(2)
    red, blue, yellow, green = (0.8, 0.25, 0.2), (0.25, 0.4, 0.85), (0.95, 0.8, 0.2), (0.3, 0.7, 0.35)
    white, black, grey = (1.0, 1.0, 1.0), (0.05, 0.05, 0.05), (0.6, 0.6, 0.62)
    g = []
    # the fixed base (body −1): a floor tile below the reach of the arm (gravity is −y, so the floor
    # is perpendicular to y) and a grey pedestal box behind the first joint
    g.append(A.tiles(-1, centre=(0.0, -2.1, 0.0), half_size=(2.5, 2.5), tile=0.5, normal=(0, 1, 0)))
    g.append(A.box(-1, (-0.2, -2.1, -0.3), (0.2, -0.05, -0.15), grey, name="pedestal"))
    # link 1: a box along x (two opposite corners), a cylinder on the joint axis (two end points
    # and a radius), a sphere at the elbow, and a pyramid given as vertices and faces
    g.append(A.box(0, (0.0, -0.06, -0.06), (1.0, 0.06, 0.06), red, name="link 1"))
    g.append(A.cylinder(0, (0, 0, -0.12), (0, 0, 0.12), 0.1, blue, name="shoulder"))
    g.append(A.sphere(0, (1.0, 0.0, 0.0), 0.09, yellow, name="elbow"))
    pyramid = np.array([[0.35, -0.1, 0.06], [0.65, -0.1, 0.06], [0.65, 0.1, 0.06], [0.35, 0.1, 0.06],
                        [0.5, 0.0, 0.3]])
    g.append(A.solid(0, pyramid, [(3, 2, 1, 0), (0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)], yellow,
                     name="pyramid"))
    # link 2: a capsule, a zig-zag line, and the white triangle (a flat vertex/face solid)
    g.append(A.capsule(0 + 1, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 0.05, green, name="link 2"))
    zig = np.array([[0.1 * k, 0.08 * (-1) ** k, 0.08] for k in range(11)])
    g.append(A.line(1, zig, black, name="zig-zag"))
    tri = np.array([[1.0, -0.15, 0.0], [TRIANGLE_TIP[0], 0.0, 0.0], [1.0, 0.15, 0.0]])
    g.append(A.solid(1, tri, [(0, 1, 2)], white, name="white triangle"))
    if tracking:
        camera = A.Camera(direction=(0.35, 0.25, 1.0), up=(0, 1, 0), zoom=2.0, body=1, track_point=TRIANGLE_TIP)
    else:
        camera = A.Camera(direction=(0.3, 0.35, 1.0), up=(0, 1, 0), zoom=1.0)
    return replace(base, name="gfx_example" + ("(tracking)" if tracking else ""), geometries=tuple(g),
                   camera=camera)
