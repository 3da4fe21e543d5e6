"""spatial_v2 ``rollingdisc`` (Simulink tutorial example 7): a free disc with 2·npt ground-contact points."""
from __future__ import annotations

import math

import numpy as np

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

    Example
    -------
    >>> import multibody as mb
    >>> m = mb.models.rolling_disc(8)
    >>> m.nq, m.nv, len([f for f in m.frames if f.name.startswith("gc")])
    (7, 6, 16)
    """
    if not isinstance(npt, (int, np.integer)) or npt < 3:
        raise ValueError(f"npt: expected an integer ≥ 3 (vertices of the polygon), got {npt!r}")
    for name, v in (("radius", radius), ("thickness", thickness), ("mass", mass)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name}: expected a positive number, got {v!r}")
    if floating not in ("free", "floatbase"):
        raise ValueError(f"floating: expected 'free' or 'floatbase', got {floating!r}")
    R, T, m = float(radius), float(thickness), float(mass)
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
