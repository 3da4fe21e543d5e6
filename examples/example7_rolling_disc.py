"""spatial_v2 Simulink example 7: a disc rolling on compliant ground.

``python examples/example7_rolling_disc.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from multibody.simulation.contact import GroundContact, contact_parameters
from _shared import ExampleResult


def example7_rolling_disc(npt=48, height=0.1, speed=1.0, t_final=1.5, dt=2e-4, mu=0.3, damping_ratio=0.1):
    """Example 7: a disc dropped with forward speed and no spin bounces, slides, then rolls.

    Ground: K, D from :func:`contact_parameters` (0.1 mm static depth per face point, damping
    ratio ``damping_ratio``), friction ``mu``.  Facts: it bounces (``bounces`` ≥ 2 lift-offs),
    and ends rolling without slipping: contact points stick and the slip speed
    |v − ω × r_contact| is a small fraction of the speed (``final_slip_ratio``); the speed when
    rolling starts is near the 2/3·v₀ of a uniform disc that starts sliding without spin
    (``rolling_speed_ratio``; the drop, the polygon's corners and compliance take a little).
    """
    from multibody import models
    from multibody import simulate
    model = models.rolling_disc(npt)
    m, R = float(model.mass[0]), 0.05
    K, D = contact_parameters(m, 1e-4, damping_ratio, n_points=2)
    contact = GroundContact(model, K, D, mu)
    q0 = model.neutral()
    q0[2] = R + height
    qd0 = np.zeros(6)
    qd0[3] = speed
    traj = simulate(model, q0, qd0, t_final, dt=dt, contact=contact, record_every=10)
    F = traj.contact_forces                                   # (N, np, 3)
    touching = F[:, :, 2].max(axis=1) > 0
    # bounces: flights of the centre more than 1 mm above rolling height after the first touchdown
    airborne = traj.q[:, 2] > R + 1e-3
    after = np.arange(len(airborne)) > np.argmax(touching)
    bounces = int(np.sum(~airborne[:-1] & airborne[1:] & after[1:]))
    from multibody import body_states
    s = body_states(model, traj.q, traj.qd)
    w = np.einsum("nij,nj->ni", s.R[:, 0], s.v[:, 0, :3])
    v = np.einsum("nij,nj->ni", s.R[:, 0], s.v[:, 0, 3:])
    slip = v[:, 0] - w[:, 1] * R                              # contact point velocity (x), r = (0, 0, −R)
    last = traj.t > 0.8 * t_final
    rolling = np.flatnonzero((np.abs(slip) < 0.02 * np.abs(v[:, 0])) & touching & (traj.t > 0.05))
    v_roll = float(v[rolling[0], 0]) if rolling.size else float("nan")
    return ExampleResult("example7_rolling_disc", traj, {
        "bounces": bounces,
        "final_slip_ratio": float(np.max(np.abs(slip[last]) / np.abs(v[last, 0]))),
        "final_speed": float(v[-1, 0]),
        "rolling_speed_ratio": v_roll / speed,
        "tilt": float(np.max(np.abs(s.R[:, 0, 2, 1])))})          # world z of the disc axis


if __name__ == "__main__":
    print(example7_rolling_disc())
