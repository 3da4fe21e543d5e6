"""spatial_v2's Simulink tutorial examples 1–7 and the dropped box, end to end through mb.simulate,
each asserting a physical fact of its own (the scripts in examples/)."""

import numpy as np
import pytest

import example_scripts  # the examples/ folder's scripts

ex = example_scripts.namespace()


@pytest.mark.slow
def test_example1_pd_settles_where_the_spring_balances_gravity():
    r = ex.example1_pd_planar2r()
    assert r.facts["gravity_balance"] < 1e-6        # kp (q_ref − q_ss) = g(q_ss)
    assert r.facts["offset"] > 0.05                  # and that is not q_ref: no gravity compensation
    assert r.facts["final_speed"] < 1e-6


@pytest.mark.slow
def test_example2_sampled_pd_holds_the_torque_and_keeps_the_equilibrium():
    r = ex.example2_sampled_pd_planar2r()
    assert r.facts["hold_violation"] == 0.0          # zero-order hold: constant inside each period
    assert r.facts["samples"] >= 400
    assert r.facts["equilibrium_shift"] < 1e-6


@pytest.mark.slow
def test_example3_vee_turns_with_zero_momentum():
    r = ex.example3_vee()
    assert r.facts["momentum_drift"] < 1e-10
    assert r.facts["com_drift"] < 1e-10
    assert r.facts["joint_return"] < 1e-6
    assert r.facts["net_rotation"] > 0.5             # reoriented although h = 0 throughout


@pytest.mark.slow
def test_example4_singlebody_tumbles_and_fdfb_agrees():
    r = ex.example4_singlebody()
    assert r.facts["energy_drift"] < 1e-9
    assert r.facts["momentum_drift"] < 1e-9
    assert r.facts["min_axis_alignment"] < -0.9      # the intermediate axis flipped over
    assert r.facts["fdfb_difference"] < 1e-6


@pytest.mark.slow
def test_example5_scissor_conserves_momentum_and_fbanim_unwraps():
    r = ex.example5_scissor()
    assert r.facts["momentum_drift"] < 1e-10
    assert r.facts["energy_drift"] < 1e-10
    assert r.facts["turns"] > 0.9                    # the spin passed ±π …
    assert r.facts["fbanim_max_step"] < 0.2          # … and fbanim's angles have no 2π jumps
    assert r.facts["aba_difference"] < 1e-6


@pytest.mark.slow
def test_example6_double_elbow_gearing_is_held():
    r = ex.example6_double_elbow()
    assert r.facts["gearing_error"] <= 1e-6 and r.facts["gearing_rate_error"] <= 1e-6
    assert r.facts["gearing_error_after_2s"] <= 1e-6   # a 1 mrad initial violation is removed
    assert r.facts["reduced_balance"] < 1e-6
    assert r.trajectory.constraint_residual is not None
    assert np.max(np.abs(r.trajectory.constraint_residual)) <= 1e-6


@pytest.mark.slow
def test_example7_rolling_disc_bounces_then_rolls_without_slipping():
    r = ex.example7_rolling_disc()
    assert r.facts["bounces"] >= 2
    assert r.facts["final_slip_ratio"] < 0.01         # rolling without slipping at the end
    assert 0.55 < r.facts["rolling_speed_ratio"] < 0.7   # ≈ 2/3 v₀ of a disc that started sliding
    assert r.facts["final_speed"] > 0.2
    assert r.facts["tilt"] < 0.01                      # it rolled, it did not fall over
    sticking_end = r.trajectory.contact_forces[-1]
    assert np.all(sticking_end[:, 2] >= 0)


@pytest.mark.slow
def test_dropped_box_rests_without_jitter():
    r = ex.dropped_box()
    assert r.facts["rest_speed"] < 1e-6
    assert r.facts["rest_jitter"] < 1e-9
    assert r.facts["depth_error"] < 2e-5
