"""spatial_v2 ``doubleElbow`` (Simulink tutorial example 6): a planar 2R arm whose elbow is a pair of
closely spaced revolute joints geared 1:1 (a gear pair, or pulleys with a figure-eight cable)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import _checks
from ..model.builder import ModelBuilder
from ..model.model import Model


def double_elbow(link_length: float = 1.0, link_mass: float = 1.0, spacing: float = 0.2,
                 carrier_mass: float = 0.2, Tstab: float = 0.1) -> Model:
    """Planar robot like ``planar(2)`` whose elbow is two revolute joints with equal angles.

    Bodies: link 1 (a uniform rod of ``link_length`` and ``link_mass`` on joint 1), a short
    carrier of length ``spacing`` and mass ``carrier_mass`` between the two elbow joints, and
    link 2 (the same rod as link 1).  The constraint q₃ = q₂ is carried by ``model.gamma_q``
    (:func:`multibody.dynamics.fdgq.gamma_q_linear` with G = [[1, 0], [0, 1], [0, 1]] and
    stabilisation time constant ``Tstab``), so the dynamics are computed by ``mb.fd_gq``.
    Independent variables y = (q₁, q₂): the shoulder and the elbow half-angle.  The model is
    planar (x–y plane, gravity −9.81 along y, as ``planar``).  spatial_v2 does not print the
    dimensions; these defaults are ours.

    Parameters
    ----------
    link_length : float, default 1.0
        Length of links 1 and 2 (m).
    link_mass : float, default 1.0
        Mass of each (kg).
    spacing : float, default 0.2
        Distance between the two elbow joints: the carrier's length (m).
    carrier_mass : float, default 0.2
        The carrier's mass (kg).
    Tstab : float, default 0.1
        The constraint stabilisation time constant (s) of ``gamma_q``.

    Returns
    -------
    Model
        A planar model with three revolute joints (shoulder, elbow1, elbow2) and ``gamma_q`` set.

    Raises
    ------
    TypeError
        An argument is not a real number.
    ValueError
        An argument ≤ 0, NaN or inf.

    Examples
    --------
    >>> import multibody as mb
    >>> m = mb.models.double_elbow()
    >>> m.nv, m.gamma_q is not None
    (3, True)
    """
    from ..dynamics.fdgq import gamma_q_linear
    L, m, d, mc = (_checks.number(name, v, positive=True) for name, v in (
        ("link_length", link_length), ("link_mass", link_mass), ("spacing", spacing), ("carrier_mass", carrier_mass)))
    rod = lambda length, mass: np.diag([0.0, mass * length ** 2 / 12, mass * length ** 2 / 12])  # noqa: E731
    b = ModelBuilder("double_elbow", gravity=(0.0, -9.81, 0.0))
    b.add_body("link1", None, "r", mass=m, com=[L / 2, 0, 0], inertia=rod(L, m), joint_name="shoulder")
    b.add_body("carrier", "link1", "r", mass=mc, com=[d / 2, 0, 0], inertia=rod(d, mc),
               joint_translation=[L, 0, 0], joint_name="elbow1")
    b.add_body("link2", "carrier", "r", mass=m, com=[L / 2, 0, 0], inertia=rod(L, m),
               joint_translation=[d, 0, 0], joint_name="elbow2")
    b.add_frame("tip", "link2", translation=[L, 0, 0])
    model = b.build()
    return replace(model, planar=True, gamma_q=gamma_q_linear([[1, 0], [0, 1], [0, 1]], Tstab=Tstab))
