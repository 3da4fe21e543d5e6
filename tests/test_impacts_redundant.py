"""The impact map (TMT eq. 9) with dependent rows: two stops on one joint, a stop on a joint already
held, a stop on each joint of a coupled pair.  ``redundant="drop"`` keeps the rows in order (closed
constraints, then contact rows) and drops those dependent on the rows before them, where the
default refuses (issue 33: dm_control's humanoid under hard stops ended in "rows linearly
dependent" at t = 1.01 s of its fall at 5 ms)."""
import dataclasses
import os
import warnings

import numpy as np
import pytest
from scipy.linalg import null_space

import multibody as mb
from multibody.simulation.limits import JointLimits
from multibody.simulation.system import System


def projected(M, qd, J, targets):
    """The post-impact velocity as SciPy states it: the M-nearest velocity to q̇ on {J q̇* = targets}
    (the impulses' work is least there: Gauss), from a particular solution and J's null space — all
    rows, dependent ones too (their targets consistent)."""
    xp = np.linalg.lstsq(J, targets, rcond=None)[0]
    assert np.allclose(J @ xp, targets, atol=1e-12)
    N = null_space(J)
    z = -np.linalg.solve(N.T @ M @ N, N.T @ M @ (xp - qd))
    return xp + N @ z


@pytest.fixture
def chain():
    m = mb.models.planar(4)
    q, qd = np.array([0.3, -0.5, 0.8, 0.2]), np.array([1.0, -2.0, 0.5, 1.5])
    return m, q, qd


@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_a_contact_row_twice_is_the_row_once(chain, e):
    m, q, qd = chain
    J = mb.point_jacobian(m, q, "link4", [0.5, 0, 0])[1:2]   # the tip's vertical velocity (planar: rows v, ω)
    with pytest.raises(ValueError, match="linearly dependent"):
        mb.impact_map(m, q, qd, np.vstack([J, J]), restitution=e)
    once, rho1, _ = mb.impact_map(m, q, qd, J, restitution=e, return_impulses=True)
    twice, rho2, _ = mb.impact_map(m, q, qd, np.vstack([J, J]), restitution=e, return_impulses=True, redundant="drop")
    assert np.allclose(twice, once, atol=1e-12) and np.allclose(rho2, [rho1[0], 0.0], atol=1e-12)
    M = mb.crba(m, q)
    assert np.allclose(twice, projected(M, qd, np.vstack([J, J]), np.full(2, -e * (J @ qd)[0])), atol=1e-10)


def test_stops_on_both_joints_of_a_closed_coupling(chain):
    """Joints 1 and 2 coupled (q̇₁ = q̇₂, held through the impact) and both meeting a plastic stop: the
    second stop's row depends on the coupling and the first stop; the velocity is the projection onto
    all three rows, and the impulse balance M (q̇* − q̇) = Jᵀρ holds."""
    m, q, qd = chain
    coupling = np.array([[0.0, 1.0, -1.0, 0.0]])
    stops = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    qd = qd.copy()
    qd[2] = qd[1]   # the coupling closed before the impact
    with pytest.raises(ValueError, match="linearly dependent"):
        mb.impact_map(m, q, qd, stops, constraint_jacobian=coupling)
    out, rho, rho_c = mb.impact_map(m, q, qd, stops, constraint_jacobian=coupling, return_impulses=True,
                                    redundant="drop")
    M = mb.crba(m, q)
    J = np.vstack([coupling, stops])
    assert np.allclose(out, projected(M, qd, J, np.zeros(3)), atol=1e-10)
    assert abs(out[1]) < 1e-12 and abs(out[2]) < 1e-12 and rho[1] == 0.0
    assert np.allclose(M @ (out - qd), J.T @ np.r_[rho_c, rho], atol=1e-10)
    assert out @ M @ out <= qd @ M @ qd   # a plastic impact takes energy


def test_a_closed_row_wins_over_a_contact_row_on_the_same_direction(chain):
    """A joint held closed (resting on a stop) meets that stop again with restitution 1: the closed
    row is kept (q̇* = 0 on it), the contact row dropped with impulse 0."""
    m, q, qd = chain
    row = np.array([[0.0, 0.0, 1.0, 0.0]])
    out, rho, rho_c = mb.impact_map(m, q, qd, row, restitution=1.0, constraint_jacobian=row, return_impulses=True,
                                    redundant="drop")
    assert abs(out[2]) < 1e-12 and rho[0] == 0.0
    assert np.allclose(out, projected(mb.crba(m, q), qd, row, np.zeros(1)), atol=1e-10)
    with pytest.raises(ValueError, match="redundant"):
        mb.impact_map(m, q, qd, row, redundant="least_squares")


def test_a_stop_met_by_its_own_resting_joint_holds_it_exactly():
    """A pendulum link resting on its lower stop (gravity presses it there) with a rounding error of
    velocity into the stop: the stop's impact used to meet its own row among the closed (resting)
    rows and refuse (dm_control's humanoid, right_hip_x at t = 1.0149 s); now the joint stays at rest
    on its stop, exactly, and the other joint's velocity is the projection with that joint held."""
    m = dataclasses.replace(mb.models.planar(2), q_lower=np.array([-0.3, -2.0]), q_upper=np.array([1.0, 2.0]))
    stops = JointLimits(m, "hard", 0.0, 1e-3)
    system = System(m, limits=stops)
    stops.events(system)
    system.last_z = np.zeros(0)
    q, v = stops.start(0.0, np.array([-0.3, 0.2]), np.zeros(2))
    assert list(stops.resting) == [0]
    lower = next(s for s in stops.stops if s[0] == m.joint_names[0] and s[4] > 0)
    v_in = np.array([-3e-12, 0.7])
    q1, v1 = stops.impact_events[lower].reset(0.0, q, v_in)
    assert q1[0] == -0.3 and v1[0] == 0.0 and list(stops.resting) == [0]
    expect = projected(mb.crba(m, q), v_in, np.array([[1.0, 0.0]]), np.zeros(1))
    assert abs(v1[1] - expect[1]) < 1e-10
    stops.release()


def test_dm_control_humanoid_falls_past_the_impact_that_met_a_resting_joints_own_stop():
    """The humanoid of bench part 9 (suite/humanoid.xml from qpos0, compliant floor, semi-implicit at
    5 ms) with its limits hard ended at t = 1.0149 s in "event 'right_hip_x upper limit': reset
    raised ... rows linearly dependent" (an impact met a resting joint's own stop among the held
    rows; the fast tests above hold that case against SciPy's projection).  That run had already
    gone wrong — while joints rested, the compiled loop took the contact explicitly, unstable at
    5 ms — and with the law implicit then too (test_contact_with_stops) it no longer reaches that
    state: here it falls and lies through 2 s, inside its ranges."""
    import dm_control
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = mb.load_mjcf(os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml"))
    tr = mb.simulate(h, None, None, 2.0, dt=0.005, integrator="semi_implicit", record_every=20, limits="hard")
    assert tr.status == "finished" and tr.t[-1] == pytest.approx(2.0)
    assert len(tr.events) > 0
    hinge = [int(h.q_start[j]) for j in range(h.nb) if h.nq_joint[j] == 1]
    beyond = np.maximum(h.q_lower[hinge] - tr.q[:, hinge], tr.q[:, hinge] - h.q_upper[hinge])
    assert beyond.max() < 1e-2


def test_independent_rows_solve_as_the_bordered_system_on_a_robot():
    """impact_map solves eq. (9) in its range-space form (M's Cholesky factor, the rows in its metric):
    on Talos' arm (floating, 14 dofs) with a foot point's three rows and two closed joint rows, q̇* and
    the impulses equal the bordered system [[M, −Jᵀ], [J, 0]] solved whole, as it was solved before, in
    both modes; the velocity law holds on every row; a row repeated is refused in the default mode."""
    from test_urdf_robots import robots_dir
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mb.load_urdf(os.path.join(robots_dir(), "talos_data/robots/talos_left_arm.urdf"), floating=True,
                         check_meshes=False)
    rng = np.random.default_rng(3)
    q = mb.random_configuration(m, rng)
    qd = rng.standard_normal(m.nv)
    T_rho = mb.point_jacobian(m, q, m.body_names[-1], [0.02, -0.01, 0.03])
    T_cn = np.zeros((2, m.nv))
    T_cn[0, 7], T_cn[1, 9] = 1.0, 1.0
    e = np.array([0.0, 0.3, 0.7])
    M = mb.crba(m, q)
    k, nc = len(T_rho), len(T_cn)
    A = np.block([[M, -T_cn.T, -T_rho.T], [T_cn, np.zeros((nc, nc + k))], [T_rho, np.zeros((k, nc + k))]])
    x = np.linalg.solve(A, np.concatenate([M @ qd, np.zeros(nc), -e * (T_rho @ qd)]))
    for redundant in ("error", "drop"):
        qd_plus, rho, rho_cn = mb.impact_map(m, q, qd, T_rho, e, constraint_jacobian=T_cn, return_impulses=True,
                                             redundant=redundant)
        scale = np.abs(x).max()
        assert np.abs(qd_plus - x[:m.nv]).max() < 1e-12 * scale
        assert np.abs(rho_cn - x[m.nv:m.nv + nc]).max() < 1e-12 * scale
        assert np.abs(rho - x[m.nv + nc:]).max() < 1e-12 * scale
        assert np.abs(T_rho @ qd_plus + e * (T_rho @ qd)).max() < 1e-12 * scale and np.abs(T_cn @ qd_plus).max() < 1e-12
    with pytest.raises(ValueError, match="linearly dependent"):
        mb.impact_map(m, q, qd, np.vstack([T_rho, T_rho[:1]]), 0.0, constraint_jacobian=T_cn)
