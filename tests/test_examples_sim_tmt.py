"""The TMT paper's flapping flyer and Clemens joint: numeric elements against the model helper's
symbolic ones, then the runs and their physical facts."""
import importlib

import numpy as np
import pytest
import sympy as sp

import multibody as mb

ex = importlib.import_module("multibody.simulation.examples")
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


@pytest.mark.slow
def test_flapping_flyer_synchronised_symmetric_and_energy_balanced():
    r = ex.flapping_flyer()
    assert r.facts["sync_error"] <= 1e-6
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
