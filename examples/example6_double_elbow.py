"""spatial_v2 Simulink example 6: the double elbow with FDgq.

``python examples/example6_double_elbow.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from multibody.simulation.constraints import GammaQ
from _shared import ExampleResult


def example6_double_elbow(y_ref=(0.8, -0.6), kp=80.0, kd=15.0, t_final=10.0):
    """Example 6: controlling a robot with kinematic constraints — the double elbow with FDgq.

    A PD law on the independent variables y = (shoulder, elbow half-angle), τ = G (kp (y_ref −
    y) − kd ẏ), drives the arm; ``mb.simulate`` uses ``GammaQ`` (FDgq).  Facts: the 1:1 gearing
    q₂ = q₃ holds (``gearing_error`` ≤ 1e-6 over the run) and the arm settles where the PD
    torque balances gravity in the reduced coordinates (``reduced_balance``).
    """
    from multibody import hand_c, models
    from multibody import simulate
    model = models.double_elbow()
    G = model.gamma_q.G
    Gp = np.linalg.pinv(G)
    y_ref = np.asarray(y_ref, float)

    def controller(t, q, qd):
        return G @ (kp * (y_ref - Gp @ q) - kd * (Gp @ qd))

    traj = simulate(model, np.zeros(3), np.zeros(3), t_final, controller=controller, constraints=GammaQ())
    y = Gp @ traj.q[-1]
    _, C = hand_c(model, traj.q[-1], np.zeros(3))
    # started off the constraint (elbow2 1 mrad ahead), the FDgq stabilisation closes the gap
    off = simulate(model, np.array([0.0, 0.0, 1e-3]), np.zeros(3), t_final, controller=controller,
                   constraints=GammaQ())
    settled = off.t >= 2.0
    return ExampleResult("example6_double_elbow", traj, {
        "gearing_error": float(np.max(np.abs(traj.q[:, 1] - traj.q[:, 2]))),
        "gearing_rate_error": float(np.max(np.abs(traj.qd[:, 1] - traj.qd[:, 2]))),
        "gearing_error_after_2s": float(np.max(np.abs(off.q[settled, 1] - off.q[settled, 2]))),
        # equilibrium: Gᵀ(τ − C) = 0 with τ = G kp (y_ref − y)  →  kp (y_ref − y) = (GᵀG)⁻¹ Gᵀ C
        "reduced_balance": float(np.max(np.abs(kp * (y_ref - y) - np.linalg.solve(G.T @ G, G.T @ C))))})


if __name__ == "__main__":
    print(example6_double_elbow())
