"""A box dropped on compliant ground comes to rest.

``python examples/dropped_box.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from multibody.simulation.contact import GroundContact, contact_parameters
from _shared import ExampleResult


def dropped_box(t_final=2.0, drop=0.05, dt=5e-4):
    """The 3×2×1 box (``singlebody``, with gravity) dropped flat onto the ground: it comes to rest.

    Contact points at its 8 corners, critically damped ground (1 mm static depth).  Facts: over
    the last half second the box does not move — largest speed ``rest_speed`` and height change
    ``rest_jitter`` — and it rests at the design depth (``depth_error``).
    """
    from multibody import models
    from multibody import simulate
    model = models.singlebody().with_gravity([0.0, 0.0, -9.81])
    corners = [(0, [x, y, z]) for x in (0, 3) for y in (0, 2) for z in (0, 1)]
    depth = 1e-3
    K, D = contact_parameters(1.0, depth, 1.0, n_points=4)
    contact = GroundContact(model, K, D, mu=0.5, points=corners)
    q0 = model.neutral()
    q0[2] = drop
    traj = simulate(model, q0, np.zeros(6), t_final, dt=dt, contact=contact, record_every=10)
    last = traj.t > t_final - 0.5
    return ExampleResult("dropped_box", traj, {
        "rest_speed": float(np.max(np.abs(traj.qd[last]))),
        "rest_jitter": float(np.ptp(traj.q[last, 2])),
        "depth_error": float(abs(-traj.q[-1, 2] - depth))})


if __name__ == "__main__":
    print(dropped_box())
