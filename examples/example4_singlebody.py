"""spatial_v2 Simulink example 4: a free single body.

``python examples/example4_singlebody.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from _shared import ExampleResult, _fixed_to_floatbase, free_to_xfb, simulate_fb


def example4_singlebody(t_final=10.0, spin=2.0, perturbation=1e-2):
    """Example 4: chaotic tumbling of the free 3×2×1 box, by ABA on a free joint and by FDfb.

    It spins mainly about its intermediate principal axis (body y) with a small perturbation:
    the spin axis flips over and back (the tennis-racket effect).  Facts: energy and momentum
    conserved (``energy_drift``, ``momentum_drift``), the body y axis reverses
    (``min_axis_alignment`` ≈ −1), and FDfb on spatial_v2's floatbase layout gives the same
    motion (``fdfb_difference``: largest difference of the body orientation and position).
    """
    from multibody import body_states, energy, models
    from multibody.spatial.rotations import quat_to_matrix
    from multibody import simulate
    model = models.singlebody()
    c = model.com[0]
    w = np.array([perturbation, spin, perturbation])
    qd0 = np.concatenate([w, np.cross(c, w)])            # v_O = −ω × c: the centre of mass at rest
    traj = simulate(model, model.neutral(), qd0, t_final, dt=0.02, integrator="dop853", rtol=1e-11, atol=1e-13)
    E = energy(model, traj.q, traj.qd)
    Etot = E.KE + E.PE
    R = body_states(model, traj.q).R[:, 0]
    fb = _fixed_to_floatbase(model)
    x0, _, _ = free_to_xfb(model, traj.q[0], traj.qd[0])
    run = simulate_fb(fb, x0, t_final=t_final, dt=0.02)
    Rfb = np.swapaxes(quat_to_matrix(run["xfb"][:, :4]), -1, -2)        # A_IB = rq(qn)ᵀ
    return ExampleResult("example4_singlebody", traj, {
        "energy_drift": float(np.max(np.abs(Etot - Etot[0]))),
        "momentum_drift": float(np.max(np.abs(E.htot - E.htot[0]))),
        "min_axis_alignment": float(np.min(R[:, 1, 1])),
        "fdfb_difference": float(max(np.max(np.abs(Rfb - R)), np.max(np.abs(run["xfb"][:, 4:7] - traj.q[:, :3]))))})


if __name__ == "__main__":
    print(example4_singlebody())
