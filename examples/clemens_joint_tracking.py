"""The TMT paper's Clemens joint, tracking.

``python examples/clemens_joint_tracking.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from _shared import ExampleResult, clemens_closures


def clemens_joint_tracking(t_final=10.0, radius=0.1, lift=0.03, omega=2 * np.pi / 5, gain=20.0, l=1.0, l_b=1.0,
                           l_p=1.0):
    """The Clemens joint (3-RSR) with its platform centre tracking a 3-D curve (TMT paper, fig. 1).

    Inverse kinematics by integrating a first-order ODE in q, as the paper does: at each instant
    the 13 joint rates solve [J_c; J_p] q̇ = [−k c − …; ẋ_d + k (x_d − x)], the 10 closure rows
    and the 3 rows of the platform centre's Jacobian (closed-loop inverse kinematics with gain k).
    The curve: x_d(t) = x₀ + (r sin ωt, r (1 − cos ωt), h sin 2ωt).  Facts: the loops stay closed
    (``constraint_violation`` ≤ 1e-6), the platform follows the curve (``tracking_error``), and the
    three base (actuated) joints move (``actuator_range``).  Returns t, q in ``trajectory``.
    """
    from scipy.integrate import solve_ivp

    from multibody import models, point_jacobian, point_position
    mech = models.clemens_joint(l=l, l_b=l_b, l_p=l_p)
    model = mech.model
    closures = clemens_closures(model, l, l_p)
    centre = np.array([-l_p, 0.0, 0.0])                         # the platform's centre in its frame
    q0 = np.array(mech.q0, float)
    x0 = point_position(model, q0, "platform", centre)

    def x_des(t):
        return x0 + np.array([radius * np.sin(omega * t), radius * (1 - np.cos(omega * t)), lift * np.sin(2 * omega * t)])

    def xd_des(t):
        return np.array([radius * omega * np.cos(omega * t), radius * omega * np.sin(omega * t),
                         2 * lift * omega * np.cos(2 * omega * t)])

    def rates(t, q):
        terms = closures.evaluate(model, q, np.zeros(model.nv))
        Jp = point_jacobian(model, q, "platform", centre)
        x = point_position(model, q, "platform", centre)
        A = np.vstack([terms.J, Jp])
        b = np.concatenate([-gain * terms.c, xd_des(t) + gain * (x_des(t) - x)])
        return np.linalg.solve(A, b)

    t_eval = np.linspace(0, t_final, 201)
    sol = solve_ivp(rates, (0, t_final), q0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(f"clemens_joint_tracking: {sol.message}")
    Q = sol.y.T
    viol = max(np.max(np.abs(closures.evaluate(model, q, np.zeros(model.nv)).c)) for q in Q)
    err = max(np.linalg.norm(point_position(model, q, "platform", centre) - x_des(t)) for t, q in zip(sol.t, Q))
    act = [model.q_start[model.joint_index(n)] for n in ("q_y1", "q_y4", "q_y6")]
    return ExampleResult("clemens_joint_tracking", {"t": sol.t, "q": Q}, {
        "constraint_violation": float(viol),
        "tracking_error": float(err),
        "actuator_range": float(np.min(np.ptp(Q[:, act], axis=0)))})


if __name__ == "__main__":
    print(clemens_joint_tracking())
