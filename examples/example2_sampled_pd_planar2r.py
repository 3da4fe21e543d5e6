"""spatial_v2 Simulink example 2: sampled (zero-order hold) PD control.

``python examples/example2_sampled_pd_planar2r.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from _shared import ExampleResult
from example1_pd_planar2r import example1_pd_planar2r


def example2_sampled_pd_planar2r(kp=60.0, kd=12.0, q_ref=(np.pi / 4, -np.pi / 2), period=0.02, t_final=8.0):
    """Example 2: the same PD controller sampled every ``period`` (zero-order hold) on continuous dynamics.

    Facts: the torque is constant between samples (``hold_violation``: its largest change inside
    a sample interval) and the loop settles at the same equilibrium as the continuous one
    (``equilibrium_shift`` against example 1).
    """
    from multibody import models
    from multibody import PD, simulate
    model = models.planar(2)
    traj = simulate(model, np.zeros(2), np.zeros(2), t_final, dt=1e-3,
                    controller=PD(kp, kd, q_ref=list(q_ref), period=period))
    k = np.floor(traj.t / period + 1e-9).astype(int)
    hold = 0.0
    for j in np.unique(k):
        seg = traj.tau[k == j]
        hold = max(hold, float(np.max(np.abs(seg - seg[0]))))
    cont = example1_pd_planar2r(kp, kd, q_ref, t_final)
    return ExampleResult("example2_sampled_pd_planar2r", traj, {
        "hold_violation": hold,
        "equilibrium_shift": float(np.max(np.abs(traj.q[-1] - cont.trajectory.q[-1]))),
        "samples": int(len(np.unique(k)))})


if __name__ == "__main__":
    print(example2_sampled_pd_planar2r())
