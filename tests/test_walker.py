"""The TMT paper's passive biped (seed 002, table 1): heel strike by eq. 9, leg swap, periodic gaits."""
import numpy as np
import pytest

import multibody as mb
from multibody.simulation.walker import tmt_biped


def total_mass(model):
    return float(model.mass.sum())


@pytest.fixture(scope="module")
def simplest():
    """Legs only, no hip spring, slope 0.009: the 'simplest walking model' (Garcia et al. 1998)."""
    model, walker = tmt_biped(upper_body=False, k_h=0.0, gamma=0.009)
    orbit = mb.find_periodic_orbit(walker, [0.2, -0.4, -0.2, 0.02])
    return model, walker, orbit


def test_periodic_gait_found_from_a_nearby_guess(simplest):
    model, walker, orbit = simplest
    assert orbit.converged and orbit.residual < 1e-10
    q1, q2, u1, u2 = orbit.x
    assert np.isclose(q2, -2 * q1, atol=1e-9)        # both feet on the slope after heel strike
    # Garcia et al. (1998), β = m_f/m_b → 0, γ = 0.009: θ* = 0.2003, θ̇* = −0.1998 (here β = 0.001)
    assert abs(q1 - 0.2003) < 1e-3 and abs(u1 + 0.1998) < 1e-3
    assert orbit.stable and np.max(np.abs(orbit.multipliers)) < 0.7
    assert np.min(np.abs(orbit.multipliers)) < 1e-6   # images lie on the heel-strike surface


def test_fifty_strides_stay_on_the_gait_and_perturbations_decay(simplest):
    model, walker, orbit = simplest
    strides = walker.walk(orbit.x, 50)
    xs = np.array([walker.section(s.q_plus, s.qd_plus) for s in strides])
    assert np.max(np.abs(xs - orbit.x)) < 1e-8
    assert np.std([s.duration for s in strides]) < 1e-8
    # a perturbed start returns to the gait at the rate of the multipliers
    x = orbit.x + 1e-4 * np.array([2.0, -4.0, 1.0, 1.0])
    far = walker.walk(x, 12)
    d = [np.max(np.abs(walker.section(s.q_plus, s.qd_plus) - orbit.x)) for s in far]
    rate = np.max(np.abs(orbit.multipliers))
    assert d[-1] < 10 * rate ** 11 * d[0] and d[-1] < 1e-2 * d[0]


def test_energy_lost_at_heel_strike_is_the_work_of_gravity(simplest):
    model, walker, orbit = simplest
    s = walker.stride(*walker.state(orbit.x))
    assert abs(s.energy_before_impact - s.energy_start) < 1e-9        # conservative stance phase
    gravity_work = total_mass(model) * 1.0 * np.sin(0.009) * s.step_length
    assert s.impact_loss > 0
    assert abs(s.impact_loss - gravity_work) < 1e-8 * gravity_work
    # the striking foot stops (plastic, no slip) and the trailing foot leaves the ground
    assert np.allclose(walker.contact_jacobian(s.q_minus) @ mb.impact_map(
        model, s.q_minus, s.qd_minus, walker.contact_jacobian(s.q_minus)), 0.0, atol=1e-12)


def test_seed_legs_with_hip_spring_walk_stably():
    """The paper's legs, hip mass and hip spring k_h = 0.0035 (upper body removed), slope 0.004."""
    model, walker = tmt_biped(upper_body=False)
    orbit = mb.find_periodic_orbit(walker, [0.15, -0.3, -0.15, 0.01])
    assert orbit.stable
    s = walker.stride(*walker.state(orbit.x))
    # energy balance with the spring's stored energy ½ k_h q2² (same at both ends of the stance)
    assert abs(s.energy_before_impact - s.energy_start) < 1e-9
    assert abs(s.impact_loss - total_mass(model) * np.sin(0.004) * s.step_length) < 1e-8 * s.impact_loss


def test_seed_biped_with_upper_body_from_the_papers_initial_state():
    """The paper's initial state [q1, q2, q3, u1, u2, u3] = [0.2, −0.4, −0.1, −0.2, 0.3, 0.1]."""
    model, walker = tmt_biped()
    x0 = [0.2, -0.4, -0.1, -0.2, 0.3, 0.1]
    q0, qd0 = walker.state(x0)
    assert np.isclose(walker.feet(q0)[0][1], 0.0, atol=1e-12)      # both feet on the slope
    s = walker.stride(q0, qd0, keep_trajectory=True)
    assert s.trajectory.events[-1].name == "heel strike"
    assert abs(s.energy_before_impact - s.energy_start) < 1e-8      # stance conserves energy (spring incl.)
    assert s.impact_loss > 0
    # the constraint held the stance foot: position and velocity residuals stay zero
    assert np.max(np.abs(s.trajectory.constraint_residual)) < 1e-12
    # the unactuated upper body is an inverted pendulum on the hip: it falls (the paper: "unstable")
    assert abs(s.q_plus[4] + s.q_plus[2]) > 1.0


def test_walker_bad_input():
    model, walker = tmt_biped(upper_body=False)
    with pytest.raises(ValueError, match="x"):
        walker.state([0.1, 0.2])
    with pytest.raises(TypeError, match="swap"):
        mb.Walker(model, ("swing_leg", [0, -1, 0]), ("stance_leg", [0, 0, 0]), swap=None, stance_joints=["xs", "ys"])
    with pytest.raises(ValueError, match="m_b"):
        tmt_biped(m_b=-1.0)
    with pytest.raises(ValueError, match="no convergence"):
        mb.find_periodic_orbit(lambda x: 2 * x + 1 + np.sin(40 * x), [0.3], max_iter=3)
    walker.max_stride_time = 0.5      # far shorter than a step (≈ 3.8)
    with pytest.raises(ValueError, match="no heel strike"):
        walker.stride(*walker.state([0.15, -0.3, -0.15, 0.01]))


def test_seed_biped_with_upper_body_has_an_unstable_periodic_gait():
    """The paper's biped with its upper body (defaults, slope 0.004) has a period-one gait, and it is
    unstable, as the paper's figure caption says ("The cycle is unstable"): the upper body is an
    unactuated inverted pendulum on the hip.  The guess (4 digits) was found by balancing the upper
    body over one stride with the legs on their own gait (bisection on its initial angle and rate)."""
    model, walker = tmt_biped()
    guess = [0.1532, -0.3064, -0.1459, -0.1562, 0.0073, 0.2839]
    orbit = mb.find_periodic_orbit(walker, guess, fd_step=1e-7)
    assert orbit.residual < 1e-10
    mult = np.sort(np.abs(orbit.multipliers))[::-1]
    assert mult[0] > 100                      # the upper body's divergence over one stride
    assert abs(mult[1] - 0.624) < 0.01 and abs(mult[2] - 0.624) < 0.01   # the legs' gait, as without it
    assert not orbit.stable
    s = walker.stride(*walker.state(orbit.x))
    gravity_work = total_mass(model) * np.sin(0.004) * s.step_length
    assert abs(s.impact_loss - gravity_work) < 1e-8 * gravity_work


def test_gait_keeps_every_sample_in_one_trajectory_across_strides(simplest):
    model, walker, orbit = simplest
    traj, strides = walker.gait(orbit.x, 4, record_every=0.01)
    durations = [s.duration for s in strides]
    assert len(traj) >= sum(durations) / 0.01                     # every sample, not ~4 per stride
    assert [ev.name for ev in traj.events] == [f"heel strike {k}" for k in range(1, 5)]
    np.testing.assert_allclose([ev.t for ev in traj.events], np.cumsum(durations), rtol=0, atol=1e-12)
    assert np.all(np.diff(traj.t) >= 0) and traj.t[-1] == pytest.approx(sum(durations))
    # the stance foot advances by one step length per stride, down the slope (x)
    starts = np.cumsum([len(s.trajectory) for s in strides])[:-1]   # first sample of strides 2, 3, 4
    steps = [s.step_length for s in strides]
    np.testing.assert_allclose(traj.q[starts, 0], np.cumsum(steps)[:-1], atol=1e-9)
    assert steps[0] > 0.1
    # within a stride the state is the stride's own (stance foot restarted at the origin), shifted
    np.testing.assert_array_equal(traj.q[starts[0], 2:], strides[1].trajectory.q[0, 2:])
    np.testing.assert_array_equal(traj.qd[starts[0]], strides[1].trajectory.qd[0])


def test_plot_gait_draws_the_papers_four_step_figure_for_the_biped_with_upper_body():
    import matplotlib
    matplotlib.use("Agg")
    model, walker = tmt_biped()
    orbit = mb.find_periodic_orbit(walker, [0.1532, -0.3064, -0.1459, -0.1562, 0.0073, 0.2839], fd_step=1e-7)
    traj, strides = walker.gait(orbit.x, 4, record_every=0.02)
    fig = mb.view.plot_gait(traj, strides)
    angles, rates = fig.axes[:2]
    assert [ln.get_label() for ln in angles.lines[:3]] == ["q1", "q2", "q3"]
    assert len(angles.lines) == 3 + 4 and len(rates.lines) == 3 + 4      # 3 variables, 4 heel strikes
    np.testing.assert_allclose(angles.lines[0].get_xdata(), traj.t)
    assert f"stride time {np.mean([s.duration for s in strides]):.4g}" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="coordinates: 'hip'"):
        mb.view.plot_gait(traj, coordinates=["hip"])


def _five_point_jacobian(P, x, h):
    n = len(x)
    J = np.empty((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        J[:, k] = (-P(x + 2 * e) + 8 * P(x + e) - 8 * P(x - e) + P(x - 2 * e)) / (12 * h)
    return J


def test_variational_multipliers_match_a_high_precision_reference_to_1e_8(simplest):
    """The default Jacobian of a Walker's stride map (variational equations + heel-strike saltation)
    against fourth-order differences of the map integrated at rtol 1e-13 (itself consistent to 1e-8)."""
    model, walker, orbit = simplest
    _, fine = tmt_biped(upper_body=False, k_h=0.0, gamma=0.009)
    fine.rtol, fine.atol = 1e-13, 1e-14
    ref = _five_point_jacobian(fine.stride_map, orbit.x, 2e-5)
    assert np.max(np.abs(_five_point_jacobian(fine.stride_map, orbit.x, 5e-5) - ref)) < 2e-8
    assert np.max(np.abs(orbit.jacobian - ref)) < 1e-8
    np.testing.assert_allclose(np.sort(np.abs(orbit.multipliers))[-2:], np.sort(np.abs(np.linalg.eigvals(ref)))[-2:],
                               rtol=0, atol=1e-8)
    old = mb.find_periodic_orbit(walker, orbit.x, jacobian="differences")
    assert np.max(np.abs(old.jacobian - ref)) > 1e-8          # what the difference quotient of P gives
    with pytest.raises(ValueError, match="jacobian"):
        mb.find_periodic_orbit(lambda x: 0.5 * x, [1.0], jacobian="variational")


def test_walk_keeps_every_sample_with_record_every_and_dt_still_works(simplest):
    model, walker, orbit = simplest
    walk = walker.walk(orbit.x, 3, record_every=0.01)
    assert len(walk) == 3 and isinstance(walk[0], mb.simulation.walker.Stride)
    traj = walk.trajectory
    assert len(traj) >= sum(s.duration for s in walk) / 0.01
    assert np.all(np.diff(traj.t) >= 0) and [ev.name for ev in traj.events][-1] == "heel strike 3"
    np.testing.assert_allclose(traj.q[-1, 0], sum(s.step_length for s in walk[:2]), atol=1e-9)   # world x
    assert walker.walk(orbit.x, 1).trajectory is None            # strides only, as before
    with pytest.raises(TypeError, match="dt"):                   # the old second name is gone
        walker.walk(orbit.x, 1, keep_trajectory=True, dt=0.05)
    with pytest.raises(ValueError, match="record_every"):
        walker.stride(*walker.state(orbit.x), keep_trajectory=True, record_every=-1.0)


def test_walker_builds_the_upper_body_biped_without_the_catalogue():
    import ast
    import inspect
    import multibody.simulation.walker as w
    tree = ast.parse(inspect.getsource(w))
    assert not any(isinstance(n, ast.ImportFrom) and (n.module or "").startswith("models") for n in ast.walk(tree))
    model, _ = tmt_biped()
    ref = mb.models.biped_upper_body().model
    q, v = np.array([0.1, 0.0, 0.2, -0.4, -0.1]), np.array([0.0, 0.0, -0.2, 0.3, 0.1])
    np.testing.assert_array_equal(mb.aba(model, q, v, np.zeros(5)), mb.aba(ref, q, v, np.zeros(5)))
    assert model.joint_names == ref.joint_names
