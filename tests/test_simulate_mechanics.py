"""Conservation laws on spatial_v2's free-floating models, the impact map against the TMT paper's own
(symbolic) eq. 9, the joint wall, batches (local, thread pool, Dask cluster) and linearisation."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.simulation.trajectory import model_fingerprint
from multibody.simulation.walker import tmt_biped
from multibody.symbolic.tmt import tmt_system


# ---- zero gravity: momentum, energy, unit quaternions (spatial_v2 examples 3–5) ------------------
@pytest.mark.parametrize("name", ["singlebody", "scissor", "vee"])
def test_zero_gravity_momentum_energy_and_quaternions(name):
    model = getattr(mb.models, name)()
    rng = np.random.default_rng(7)
    q0, qd0 = model.neutral(), rng.normal(size=model.nv)
    traj = mb.simulate(model, q0, qd0, 1.0, dt=2.5e-4, record_every=40)
    h = mb.energy(model, traj.q, traj.qd).htot          # spatial momentum about the base origin
    assert np.max(np.abs(h - h[0])) < 1e-10
    assert np.max(np.abs(traj.total_energy - traj.total_energy[0])) < 1e-10
    for s in traj.quaternion_starts:
        assert np.max(np.abs(np.linalg.norm(traj.q[:, s:s + 4], axis=1) - 1)) < 1e-12
    # adaptive (quaternions in coordinates, renormalised at the samples) agrees with RK4
    ad = mb.simulate(model, q0, qd0, 1.0, integrator="dop853", rtol=1e-12, atol=1e-12)
    assert np.max(np.abs(mb.difference(model, traj.q[-1], ad.q[-1]))) < 1e-9


def test_rk4_on_quaternions_is_fourth_order():
    """The commutator-free Lie-group RK4 (CF4) keeps order 4 for a tumbling asymmetric body."""
    model = mb.models.singlebody()
    q0, qd0 = model.neutral(), np.array([2.0, -1.0, 0.5, 0.3, 0.0, -0.2])
    ref = mb.simulate(model, q0, qd0, 2.0, dt=1.25e-4).q[-1]
    err = [np.abs(mb.difference(model, ref, mb.simulate(model, q0, qd0, 2.0, dt=dt).q[-1])).max()
           for dt in (4e-3, 2e-3)]
    assert 13 < err[0] / err[1] < 19


# ---- impacts ---------------------------------------------------------------------------------------
def test_impact_map_matches_the_tmt_papers_symbolic_eq9():
    """Heel strike of the TMT biped: our impact_map on the Model vs the symbolic TMT eq. 9."""
    model, walker = tmt_biped()
    mech = mb.models.biped_upper_body()
    assert model_fingerprint(model) == model_fingerprint(mech.model)
    system = tmt_system(mech)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = np.concatenate([[0.3, 0.0], np.array([0.2, -0.4, -0.1]) + 0.05 * rng.normal(size=3)])
        qd = np.concatenate([[0.0, 0.0], rng.normal(size=3)])
        ours = mb.impact_map(model, q, qd, walker.contact_jacobian(q), restitution=0.0)
        theirs, _, _ = system.impact(q=q, dq_minus=qd, E=0.0, active_constraints=[])
        assert np.allclose(ours, theirs, atol=1e-10)
        # plastic, no slip: the striking foot stops
        assert np.allclose(walker.contact_jacobian(q) @ ours, 0.0, atol=1e-12)


def test_impact_map_restitution_and_momentum():
    model = mb.models.double_pendulum()
    q, qd = np.array([0.4, -0.9]), np.array([1.5, -2.0])
    J = mb.point_jacobian(model, q, "link2", [0, 1, 0])[2:3]     # tip, vertical row
    for e in (0.0, 0.5, 1.0):
        qd1, rho, _ = mb.impact_map(model, q, qd, J, restitution=e, return_impulses=True)
        assert np.isclose((J @ qd1)[0], -e * (J @ qd)[0])
        M = mb.crba(model, q)
        assert np.allclose(M @ (qd1 - qd), J.T @ rho)           # the jump is the impulse's doing
        ke0, ke1 = qd @ M @ qd / 2, qd1 @ M @ qd1 / 2
        assert (ke1 <= ke0 + 1e-12) and (e < 1 or np.isclose(ke1, ke0))
    with pytest.raises(ValueError, match="contact_jacobian"):
        mb.impact_map(model, q, qd, np.ones((1, 3)))
    with pytest.raises(ValueError, match="restitution"):
        mb.impact_map(model, q, qd, J, restitution=-1)
    with pytest.raises(ValueError, match="linearly dependent|singular"):
        mb.impact_map(model, q, qd, np.vstack([J, J]))


def test_joint_wall_is_the_reports_colliding_pendulum():
    model = mb.models.single_pendulum()
    wall = mb.joint_wall(model, 0, -np.pi / 2, side="lower", restitution=1.0)
    manual = mb.Event(lambda t, q, qd: q[0] + np.pi / 2, direction=-1, reset=lambda t, q, qd: (q, -qd))
    a = mb.simulate(model, [0.0], [0.0], 1.2, events=[wall], integrator="dop853")
    m = mb.simulate(model, [0.0], [0.0], 1.2, events=[manual], integrator="dop853")
    assert [e.t for e in a.events] == [e.t for e in m.events]
    assert np.allclose(a.q, m.q, atol=1e-14)
    # on the double pendulum the wall on joint 1 also changes joint 2's rate (coupled impulse)
    dp = mb.models.double_pendulum()
    w1 = mb.joint_wall(dp, "th1", -np.pi / 2, restitution=1.0)
    tr = mb.simulate(dp, [0.0, 0.0], [0.0, 0.0], 1.0, events=[w1], integrator="dop853")
    e = tr.events[0]
    assert e.qd_after[1] != e.qd_before[1]
    assert abs(tr.total_energy[-1] - tr.total_energy[0]) < 1e-6


# ---- batches ------------------------------------------------------------------------------------------
def test_batch_equals_single_runs_and_executors():
    model = mb.models.double_pendulum()
    rng = np.random.default_rng(0)
    Q0 = np.pi / 4 + 0.2 * rng.normal(size=(12, 2))
    QD0 = rng.normal(size=(12, 2))
    batch = mb.simulate_batch(model, Q0, QD0, 0.3, record_every=5)
    assert batch.q.shape == (12, 61, 2)
    for i in (0, 7):
        one = mb.simulate(model, Q0[i], QD0[i], 0.3, record_every=5)
        assert np.array_equal(batch[i].q, one.q) and np.array_equal(batch[i].qdd, one.qdd)
    with ThreadPoolExecutor(2) as ex:
        pooled = mb.simulate_batch(model, Q0, QD0, 0.3, record_every=5, executor=ex, chunks=3)
    assert np.array_equal(pooled.q, batch.q) and np.array_equal(pooled.kinetic_energy, batch.kinetic_energy)


def test_batch_on_a_local_dask_cluster():
    import distributed
    model = mb.models.double_pendulum()
    Q0 = np.pi / 4 + 0.05 * np.arange(6)[:, None] * [1.0, -1.0]
    QD0 = np.zeros((6, 2))
    local = mb.simulate_batch(model, Q0, QD0, 0.2)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        remote = mb.simulate_batch(model, Q0, QD0, 0.2, executor=client, chunks=3)
        # the per-run path (events, adaptive) goes through the cluster too
        wall = mb.joint_wall(model, "th1", -np.pi / 2, restitution=1.0)
        runs = mb.simulate_batch(model, Q0[:2], QD0[:2], 0.5, integrator="rk45", events=[wall], executor=client)
    assert np.array_equal(remote.q, local.q)
    assert runs[1].t[-1] == 0.5 and runs[1].integrator == "rk45"


def test_batch_runs_that_blow_up_keep_what_they_had():
    model = mb.models.double_pendulum()
    Q0 = np.array([[0.0, 0.0], [0.0, 0.0]])
    QD0 = np.array([[0.1, 0.0], [1e3, -2e3]])     # run 1 explodes under Euler with a large step
    batch = mb.simulate_batch(model, Q0, QD0, 2.0, dt=0.05, integrator="euler")
    assert batch.status == ["finished", "diverged"]
    assert np.all(np.isfinite(batch[1].q)) and batch[1].t[-1] < 2.0 and "t = " in batch.messages[1]
    assert np.all(np.isfinite(batch[0].q)) and batch[0].t[-1] == 2.0


def test_batch_params_sweep_models():
    base = mb.models.vee()
    sweep = [dict(model=mb.models.vee(L2)) for L2 in (0.5, 1.0, 2.0)]
    Q0 = np.tile(base.neutral(), (3, 1))
    QD0 = np.tile([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5], (3, 1))
    out = mb.simulate_batch(base, Q0, QD0, 0.2, params=sweep)
    assert [r.model_name for r in out.runs] == ["vee"] * 3
    assert not np.allclose(out.q[0], out.q[2])     # different rods, different motion
    one = mb.simulate(mb.models.vee(2.0), Q0[2], QD0[2], 0.2)
    assert np.array_equal(out[2].q, one.q)


@pytest.mark.parametrize("kwargs, match", [
    (dict(Q0=np.zeros((3, 3))), "Q0"), (dict(QD0=np.zeros((2, 2))), "QD0"),
    (dict(Q0=np.full((3, 2), np.nan)), "row 0"), (dict(params=[{}]), "params"),
    (dict(executor=object()), "executor"), (dict(dt=0.0), "dt"),
])
def test_batch_bad_input(kwargs, match):
    args = dict(Q0=np.zeros((3, 2)), QD0=np.zeros((3, 2)))
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        mb.simulate_batch(mb.models.double_pendulum(), args.pop("Q0"), args.pop("QD0"), 0.1, **args)


# ---- linearisation ---------------------------------------------------------------------------------------
def test_linearize_against_the_seeds_equations_and_finite_differences():
    """A, B of the report's double pendulum vs the symbolic derivative of DP_EOM (appendix D.2)."""
    th1, th2, d1, d2, t1, t2 = sp.symbols("th1 th2 Dth1 Dth2 tau1 tau2")
    D = sp.Matrix([[sp.Rational(1001, 600) + sp.cos(th2), sp.cos(th2) / 2 + sp.Rational(401, 1200)],
                   [sp.cos(th2) / 2 + sp.Rational(401, 1200), sp.Rational(401, 1200)]])
    C = sp.Matrix([[-sp.sin(th2) * d2 / 2, -sp.sin(th2) * d1 / 2 - sp.sin(th2) * d2 / 2],
                   [sp.sin(th2) * d1 / 2, 0]])
    g = sp.Matrix([sp.Rational(2943, 200) * sp.cos(th1) + sp.Rational(981, 200) * sp.cos(th1 + th2),
                   sp.Rational(981, 200) * sp.cos(th1 + th2)])
    qdd = D.LUsolve(sp.Matrix([t1, t2]) - C * sp.Matrix([d1, d2]) - g)
    x, u = [th1, th2, d1, d2], [t1, t2]
    f = sp.Matrix([d1, d2, qdd[0], qdd[1]])
    A_s, B_s = sp.lambdify([x, u], f.jacobian(x)), sp.lambdify([x, u], f.jacobian(u))
    model = mb.models.double_pendulum()
    for q, qd, tau in [([0.3, -0.7], [0.5, -1.2], [0.1, 0.2]), ([np.pi / 4, -np.pi / 4], [0, 0], [0, 0])]:
        A, B = mb.linearize(model, q, qd, tau)
        xs, us = [*q, *qd], tau
        assert np.allclose(A, np.array(A_s(xs, us), float), atol=1e-9, rtol=0)
        assert np.allclose(B, np.array(B_s(xs, us), float), atol=1e-12, rtol=0)
        # and against central differences of forward dynamics
        h = 1e-6
        fd = lambda xx, uu: np.concatenate([xx[2:], mb.aba(model, xx[:2], xx[2:], uu)])  # noqa: E731
        x0 = np.array(xs, float)
        A_fd = np.array([(fd(x0 + h * e, tau) - fd(x0 - h * e, tau)) / (2 * h) for e in np.eye(4)]).T
        assert np.allclose(A, A_fd, atol=1e-7)
    with pytest.raises(ValueError, match="qd"):
        mb.linearize(model, [0.0, 0.0], [0.0])


def test_linearize_floating_base_at_rest():
    """A free body at rest in zero gravity: q̈ = M⁻¹ τ, no stiffness: A = [[0, I], [0, 0]]."""
    model = mb.models.singlebody()
    A, B = mb.linearize(model, model.neutral(), np.zeros(6))
    assert np.allclose(A[6:, :], 0, atol=1e-9)
    assert np.allclose(B[6:], np.linalg.inv(mb.crba(model, model.neutral())))
