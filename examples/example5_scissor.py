"""spatial_v2 Simulink example 5: the scissor.

``python examples/example5_scissor.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from _shared import ExampleResult, _fixed_to_floatbase, free_to_xfb, simulate_fb


def example5_scissor(t_final=10.0):
    """Example 5: the free-floating spinning scissor, by FDfb, animated with fbanim.

    The pair spins about the long axis (z) while the joint (on y) starts opening; the spin and
    the scissor motion exchange energy.  Facts: momentum and energy conserved
    (``momentum_drift``, ``energy_drift``); ``fbanim`` returns wrap-free angles (largest step
    between samples ``fbanim_max_step`` is small) although the spin passes ±π many times
    (``turns``).  The FDfb run is checked against ABA on the free-joint model (``aba_difference``).
    """
    from multibody import energy, models
    from multibody.dynamics.floating import fbanim
    from multibody import simulate
    model = models.scissor()
    qd0 = np.array([0.0, 0.0, 6.0, 0.0, 0.0, 0.0, 0.5])     # spin about z, joint opening
    traj = simulate(model, model.neutral(), qd0, t_final, dt=1e-2, integrator="dop853", rtol=1e-11, atol=1e-13)
    fb = _fixed_to_floatbase(model)
    x0, qr0, qdr0 = free_to_xfb(model, traj.q[0], traj.qd[0])
    run = simulate_fb(fb, x0, qr0, qdr0, t_final=t_final, dt=1e-2)
    E = energy(model, traj.q, traj.qd)
    anim = fbanim(run["xfb"], run["q"])
    xs = np.array([free_to_xfb(model, q, qd)[0] for q, qd in zip(traj.q, traj.qd)])
    return ExampleResult("example5_scissor", traj, {
        "momentum_drift": float(np.max(np.abs(E.htot - E.htot[0]))),
        "energy_drift": float(np.max(np.abs((E.KE + E.PE) - (E.KE + E.PE)[0]))),
        "fbanim_max_step": float(np.max(np.abs(np.diff(anim[:, 3:6], axis=0)))),
        "turns": float(np.max(np.abs(anim[:, 3:6])) / (2 * np.pi)),
        "aba_difference": float(max(np.max(np.abs(xs[:, 4:7] - run["xfb"][:, 4:7])),
                                    np.max(np.abs(traj.q[:, 7] - run["q"][:, 0]))))})


if __name__ == "__main__":
    print(example5_scissor())
