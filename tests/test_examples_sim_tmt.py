"""The TMT paper's flapping flyer and Clemens joint: numeric elements against the model helper's
symbolic ones, then the runs and their physical facts."""

import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.symbolic.tmt import tmt_system

import example_scripts  # the examples/ folder's scripts

ex = example_scripts.namespace()
RNG = np.random.default_rng(11)


def test_clemens_closures_equal_the_mechanisms_symbolic_constraints():
    mech = mb.models.clemens_joint()
    closures = ex.clemens_closures(mech.model)
    exprs = sp.Matrix.vstack(*[sp.Matrix(c.expr) for c in mech.constraints])
    f = sp.lambdify(mech.q, exprs, "numpy")
    for _ in range(3):
        q = np.array(mech.q0) + 0.3 * RNG.normal(size=13)
        np.testing.assert_allclose(closures.evaluate(mech.model, q, np.zeros(13)).c,
                                   np.asarray(f(*q), float).ravel(), atol=1e-12)


def test_flyer_aero_forces_equal_the_mechanisms_point_forces():
    mech = mb.models.flapping_flyer()
    model = mech.model
    for _ in range(3):
        q, qd = RNG.normal(size=5), RNG.normal(size=5)
        f_ext = ex.flyer_aero_forces(model, q, qd)
        for k, pf in enumerate(mech.forces, start=1):
            point = np.asarray(sp.lambdify(mech.q, pf.point, "numpy")(*q), float).ravel()
            force = np.asarray(sp.lambdify(list(mech.q) + list(mech.dq), pf.force, "numpy")(*q, *qd), float).ravel()
            b = model.body_index(f"wing{k}")
            np.testing.assert_allclose(f_ext[b], np.concatenate([np.cross(point, force), force]), rtol=1e-10,
                                       atol=1e-10)


def test_flyer_constraint_accelerations_equal_the_symbolic_tmt_system():
    """On the constraint manifold the numeric flyer (TMT eq. 6 on HandC: JointCoupling + the
    time-dependent JointPath, aerodynamics as f_ext) gives the q̈ and hinge torques of the symbolic
    TMT system with both of the paper's constraints (solved with c̈ = 0 exactly)."""
    mech = mb.models.flapping_flyer(symbolic=True)
    s = tmt_system(mech)
    model = mb.models.flapping_flyer().model
    cons = ex.flyer_constraints()
    drive = cons.constraints[1]
    for t in (0.0, 1.3, 4.0, 7.7):
        phi, dphi, _ = drive.motion(t)
        q = np.array([0.3, 0.0, -0.2, phi, phi]) + np.r_[RNG.normal(size=3), 0, 0]
        dq = np.r_[RNG.normal(size=3), dphi, dphi]
        f = ex.flyer_aero_forces(model, q, dq)
        qdd, lam = cons.accelerations(model, q, qd=dq, tau=np.zeros(5), f_ext=f, t=t)
        qdd_s, lam_s = s.solve_accelerations(q=q, dq=dq, t=t)
        np.testing.assert_allclose(qdd, qdd_s, rtol=1e-9, atol=1e-9)
        Jn = cons.evaluate(model, q, dq, t).J
        Js = np.asarray(s.evaluate("constraint_jacobian", q=q), float).reshape(2, 5)
        np.testing.assert_allclose(Jn.T @ lam, Js.T @ np.asarray(lam_s, float).ravel(), rtol=1e-9, atol=1e-9)


@pytest.mark.slow
def test_flapping_flyer_constrained_synchronised_symmetric_and_energy_balanced():
    """The paper's flyer with both its constraints: violation ≤ 1e-6 over 12 s, equal hinge torques
    (mirror symmetry), no sideways drift, energy balance with the constraint and drag work."""
    r = ex.flapping_flyer()
    assert r.trajectory.constraint_residual.shape[1:] == (2, 2)
    assert r.facts["constraint_violation"] <= 1e-6
    assert r.facts["sync_error"] <= 1e-6
    assert r.facts["torque_asymmetry"] < 1e-9 and r.facts["hinge_torque_peak"] > 1.0
    assert r.facts["lateral_drift"] < 1e-9
    assert r.facts["energy_balance"] < 1e-4
    assert r.facts["fall_fraction"] < 0.5


@pytest.mark.slow
def test_clemens_joint_platform_tracks_a_3d_curve():
    r = ex.clemens_joint_tracking()
    assert r.facts["constraint_violation"] <= 1e-6
    assert r.facts["tracking_error"] <= 1e-6
    assert r.facts["actuator_range"] > 0.05


@pytest.mark.slow
def test_clemens_joint_dynamics_keeps_its_loops_closed_for_ten_seconds():
    r = ex.clemens_joint_dynamics()
    assert r.facts["constraint_violation"] <= 1e-6
    assert r.facts["velocity_violation"] <= 1e-6
    assert r.facts["platform_travel"] > 0.02
