"""The TMT paper's flapping flyer.

``python examples/flapping_flyer.py`` prints the numbers that state the example's physical fact
(``tests/test_examples_sim*.py`` assert them).
"""
from __future__ import annotations

import numpy as np

from multibody.simulation.closed_loops import FLYER_PAPER, flyer_aero_forces, flyer_constraints
from _shared import ExampleResult


def flapping_flyer(t_final=12.0, dt=2e-3, **paper):
    """The TMT paper's flapping flyer: aerodynamics as a force callback, synchronised flapping as a constraint.

    Model: ``mb.models.flapping_flyer().model`` (paper values).  As in the paper, both the wings'
    synchronisation φ₁ = φ₂ and the flapping input φ₁ = φ(t) are constraints
    (:func:`flyer_constraints`: a :class:`JointCoupling` and a time-dependent :class:`JointPath`),
    solved with Lagrange multipliers (TMT eq. 6) and Baumgarte stabilisation — ``mb.simulate``
    passes each stage's time to them.  Facts: the constraints hold (``constraint_violation``:
    max |c| of both rows), the hinge torques the multipliers produce are equal on both wings
    (``torque_asymmetry``, relative — mirror symmetry), the motion has no sideways drift
    (``lateral_drift``), the energy balance closes: the change of total energy equals the work
    of the constraint forces (the flapping drive) and of the aerodynamic forces
    (``energy_balance``, relative), and the wings' drag keeps the fall well below free fall
    (``fall_fraction``).  ``paper``: the TMT paper's parameters (``FLYER_PAPER``).
    """
    from multibody import body_states, hand_c, models
    from multibody import simulate
    unknown = set(paper) - set(FLYER_PAPER)
    if unknown:
        raise ValueError(f"paper: unknown flyer parameters {sorted(unknown)}; expected some of {sorted(FLYER_PAPER)}")
    vals = {**FLYER_PAPER, **paper}
    mech = models.flapping_flyer(**vals)
    model = mech.model
    aero = dict(rho=vals["rho"], c_d0=vals["c_d0"], c_dm=vals["c_dm"], c_lm=vals["c_lm"], alpha_e=vals["alpha_e"],
                l_w=vals["l_w"], w=vals["w"])

    def f_ext(t, q, qd):
        return flyer_aero_forces(model, q, qd, **aero)

    constraints = flyer_constraints(vals["phi_u"], vals["phi_d"], vals["omega_f"])
    q0, dq0 = np.array(mech.q0, float), np.array(mech.dq0, float)
    dq0[3:5] = constraints.constraints[1].motion(0.0)[1]     # the wings start with the drive's rate
    traj = simulate(model, q0, dq0, t_final, dt=dt, f_ext=f_ext, constraints=constraints, record_every=5)
    # generalised constraint force Q_c = Jᵀλ = H q̈ + C(q, q̇, f_aero) (the hinge torques), and the
    # power of the constraint and aerodynamic forces along the run
    n = len(traj.t)
    Qc, P_aero = np.empty((n, model.nv)), np.empty(n)
    for k, (q, qd, qdd) in enumerate(zip(traj.q, traj.qd, traj.qdd)):
        f = f_ext(0.0, q, qd)
        H, C = hand_c(model, q, qd, f)
        Qc[k] = H @ qdd + C
        s = body_states(model, q, qd)
        v_world = np.einsum("bij,bj->bi", s.R, s.v[:, 3:]) - np.cross(np.einsum("bij,bj->bi", s.R, s.v[:, :3]), s.p)
        P_aero[k] = sum(f[b, :3] @ (s.R[b] @ s.v[b, :3]) + f[b, 3:] @ v_world[b] for b in range(model.nb))
    P_c = np.einsum("ni,ni->n", Qc, traj.qd)
    work = np.concatenate([[0.0], np.cumsum(0.5 * (P_c[1:] + P_c[:-1] + P_aero[1:] + P_aero[:-1]) * np.diff(traj.t))])
    E = traj.total_energy
    scale = max(np.max(np.abs(work)), np.max(np.abs(E - E[0])), 1e-12)
    return ExampleResult("flapping_flyer", traj, {
        "constraint_violation": float(np.max(np.abs(traj.constraint_residual[:, 0]))),
        "sync_error": float(np.max(np.abs(traj.q[:, 3] - traj.q[:, 4]))),
        "torque_asymmetry": float(np.max(np.abs(Qc[:, 3] - Qc[:, 4])) / max(np.max(np.abs(Qc[:, 3])), 1e-300)),
        "hinge_torque_peak": float(np.max(np.abs(Qc[:, 3]))),
        "lateral_drift": float(np.max(np.abs(traj.q[:, 1]))),
        "energy_balance": float(np.max(np.abs((E - E[0]) - work)) / scale),
        # drag holds the fall far below free fall ½ g t²
        "fall_fraction": float(abs(traj.q[-1, 2] - traj.q[0, 2]) / (0.5 * vals["g"] * t_final ** 2))})


if __name__ == "__main__":
    print(flapping_flyer())
