"""spatial_v2 ``rollingdisc`` (Simulink tutorial example 7): a free disc with 2·npt ground-contact points."""
from __future__ import annotations

import math

import numpy as np

from .. import _checks
from ..model.builder import ModelBuilder
from ..model.model import Model


def rolling_disc(npt: int = 12, radius: float = 0.05, thickness: float = 0.01, mass: float = 0.6,
                 floating: str = "free") -> Model:
    """A free-floating disc, a polyhedral prism of ``npt`` vertices per face, with 2·npt contact points.

    The disc's axis is the body y axis; its faces lie at y = ±thickness/2 and the vertices at
    (R cos θ_k, ±T/2, R sin θ_k), θ_k = 2πk/npt, are the ground-contact points: frames
    ``gc0 … gc{2npt−1}`` (see :mod:`multibody.simulation.contact`).  Mass properties are those of
    a uniform solid cylinder (I_yy = m R²/2, I_xx = I_zz = m (3R² + T²)/12).  At the neutral
    configuration the disc stands upright in the x–z plane and rolls along x when it spins about
    y.  Gravity is −9.81 along z.  spatial_v2 does not print the disc's dimensions; these
    defaults (a 10 cm steel disc, 1 cm thick) are ours.

    ``floating="free"``: one free joint (quaternion), for ``mb.aba`` / ``mb.simulate``;
    ``floating="floatbase"``: spatial_v2's layout — five massless bodies and six joints
    (Px Py Pz Rx Ry Rz) with the disc as body 6 (index 5), for ``mb.fd_fb``.

    Parameters
    ----------
    npt : int, default 12
        Vertices per face, ≥ 3.
    radius : float, default 0.05
        The disc's radius R (m).
    thickness : float, default 0.01
        Its thickness T (m).
    mass : float, default 0.6
        Its mass (kg).
    floating : {"free", "floatbase"}, default "free"
        The floating base's form (see above).

    Returns
    -------
    Model
        nq = 7, nv = 6 (``"free"``) or nq = nv = 6 (``"floatbase"``), with contact frames gc0 ….

    Raises
    ------
    TypeError
        ``npt`` is not an integer, a size not a real number, ``floating`` not a string.
    ValueError
        ``npt`` < 3, a size ≤ 0, NaN or inf, ``floating`` neither "free" nor "floatbase".

    Examples
    --------
    >>> import multibody as mb
    >>> m = mb.models.rolling_disc(8)
    >>> m.nq, m.nv, len([f for f in m.frames if f.name.startswith("gc")])
    (7, 6, 16)
    """
    npt = _checks.integer("npt", npt, lo=3)            # the polygon's vertices
    R, T, m = (_checks.number(name, v, positive=True) for name, v in (
        ("radius", radius), ("thickness", thickness), ("mass", mass)))
    _checks.one_of("floating", floating, ("free", "floatbase"))
    Ic = np.diag([m * (3 * R * R + T * T) / 12, m * R * R / 2, m * (3 * R * R + T * T) / 12])
    b = ModelBuilder(f"rolling_disc({npt})", gravity=(0.0, 0.0, -9.81))
    b.add_body("disc", None, "free" if floating == "free" else "Rz", mass=m, inertia=Ic, joint_name="disc_joint")
    k = 0
    for side in (-0.5, 0.5):
        for i in range(npt):
            th = 2 * math.pi * i / npt
            b.add_frame(f"gc{k}", "disc", translation=[R * math.cos(th), side * T, R * math.sin(th)])
            k += 1
    model = b.build()
    if floating == "floatbase":
        from . import floatbase
        model = floatbase(model)
    return model
