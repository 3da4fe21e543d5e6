"""The TMT paper's Clemens joint, dynamics.

``python examples/clemens_joint_dynamics.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from _shared import ExampleResult, clemens_closures


def clemens_joint_dynamics(t_final=10.0, amplitude=0.1, omega=2.0, kp=30.0, kd=6.0, m_l=0.1, I_l=1e-3):
    """The Clemens joint moving under gravity, its loops closed by Lagrange multipliers (TMT eq. 6).

    Links get mass ``m_l`` and inertia ``I_l`` (the paper's are massless, which leaves H singular);
    PD servos on the three base joints follow q₀ + A sin(ωt + 2πk/3), so the platform wobbles in
    3-D.  The 10 closure rows of :func:`clemens_closures` with Baumgarte's default gains are
    solved by ``mb.simulate`` (RK4, 1 ms).  Facts: the loops stay closed
    (``constraint_violation`` over the run, from ``Trajectory.constraint_residual``) while the
    platform moves (``platform_travel``, m).
    """
    from multibody import models, point_position
    from multibody import PD, simulate
    mech = models.clemens_joint(m_l=m_l, I_l=I_l)
    model = mech.model
    closures = clemens_closures(model)
    q0 = np.array(mech.q0, float)
    act = [int(model.q_start[model.joint_index(n)]) for n in ("q_y1", "q_y4", "q_y6")]
    gains_p, gains_d = np.zeros(model.nv), np.zeros(model.nv)
    gains_p[act], gains_d[act] = kp, kd

    def q_ref(t):
        q = q0.copy()
        for k, i in enumerate(act):
            q[i] += amplitude * np.sin(omega * t + 2 * np.pi * k / 3)
        return q

    traj = simulate(model, q0, np.zeros(model.nv), t_final, dt=1e-3, constraints=closures,
                    controller=PD(gains_p, gains_d, q_ref=q_ref), record_every=20)
    x = point_position(model, traj.q, "platform", [-1.0, 0.0, 0.0])
    return ExampleResult("clemens_joint_dynamics", traj, {
        "constraint_violation": float(np.max(np.abs(traj.constraint_residual[:, 0]))),
        "velocity_violation": float(np.max(np.abs(traj.constraint_residual[:, 1]))),
        "platform_travel": float(np.max(np.linalg.norm(x - x[0], axis=1)))})


if __name__ == "__main__":
    print(clemens_joint_dynamics())
