"""spatial_v2 Simulink example 3: the vee.

``python examples/example3_vee.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from _shared import ExampleResult


def example3_vee(t_final=4.0, kp=100.0, kd=20.0):
    """Example 3: the free-floating 'vee' robot turning its 45° joint through one revolution (zero gravity).

    The joint follows θ(t) = 2π (s − sin(2πs)/2π), s = t/T — one full turn, starting and ending
    at rest.  As in spatial_v2 (which uses HD here) the joint acceleration is prescribed: the
    controller asks hybrid dynamics (``mb.hybrid_dynamics``, joint = inverse-dynamics joint, free
    base = forward-dynamics joint) for the torque that gives θ̈ = θ̈_ref + kd ė + kp e — thin rods
    give the joint a tiny effective inertia, so a plain PD would be stiff.  Facts: the total
    momentum stays zero (``momentum_drift``), the centre of mass stays put (``com_drift``), and
    when the joint is back where it started (θ = 2π, ``joint_return``) the vee has turned by
    ``net_rotation`` radians: reorientation with zero angular momentum.
    """
    from multibody import center_of_mass, energy, hybrid_dynamics, models
    from multibody import simulate
    model = models.vee()
    T = float(t_final)
    fd = [True, False]                              # base: forward dynamics; joint: prescribed

    def controller(t, q, qd):
        s = min(t / T, 1.0)
        th = 2 * np.pi * (s - np.sin(2 * np.pi * s) / (2 * np.pi))
        thd = 2 * np.pi / T * (1 - np.cos(2 * np.pi * s))
        thdd = (2 * np.pi / T) ** 2 * np.sin(2 * np.pi * s) if t < T else 0.0
        qdd = np.zeros(model.nv)
        qdd[6] = thdd + kd * (thd - qd[6]) + kp * (th - q[7])
        _, tau = hybrid_dynamics(model, fd, q, qd, qdd, np.zeros(model.nv))
        out = np.zeros(model.nv)
        out[6] = tau[6]                             # only the joint is actuated
        return out

    traj = simulate(model, model.neutral(), np.zeros(model.nv), T, dt=1e-3, controller=controller,
                    record_every=10)
    h = energy(model, traj.q, traj.qd).htot
    c = center_of_mass(model, traj.q)
    qa, qb = traj.q[0, 3:7], traj.q[-1, 3:7]
    net = 2 * np.arccos(min(1.0, abs(float(qa @ qb))))
    return ExampleResult("example3_vee", traj, {
        "momentum_drift": float(np.max(np.abs(h - h[0]))),
        "com_drift": float(np.max(np.linalg.norm(c - c[0], axis=1))),
        "joint_return": float(abs(traj.q[-1, 7] - 2 * np.pi)),
        "net_rotation": float(net)})


if __name__ == "__main__":
    print(example3_vee())
