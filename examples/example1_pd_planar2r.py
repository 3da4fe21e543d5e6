"""spatial_v2 Simulink example 1: PD control of the planar 2R arm.

``python examples/example1_pd_planar2r.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from _shared import ExampleResult


def example1_pd_planar2r(kp=60.0, kd=12.0, q_ref=(np.pi / 4, -np.pi / 2), t_final=8.0):
    """Example 1: PD control of the planar 2R robot under gravity (no gravity compensation).

    Fact: the arm settles where the PD spring balances gravity, kp (q_ref − q_ss) = g(q_ss)
    (``gravity_balance`` is the residual of that equation), not at q_ref (``offset``).
    """
    from multibody import hand_c, models
    from multibody import PD, simulate
    model = models.planar(2)
    traj = simulate(model, np.zeros(2), np.zeros(2), t_final, controller=PD(kp, kd, q_ref=list(q_ref)))
    q_ss = traj.q[-1]
    _, g = hand_c(model, q_ss, np.zeros(2))
    return ExampleResult("example1_pd_planar2r", traj, {
        "gravity_balance": float(np.max(np.abs(kp * (np.asarray(q_ref) - q_ss) - g))),
        "offset": float(np.max(np.abs(np.asarray(q_ref) - q_ss))),
        "final_speed": float(np.max(np.abs(traj.qd[-1])))})


if __name__ == "__main__":
    print(example1_pd_planar2r())
