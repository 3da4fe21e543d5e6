"""Random trees simulated with everything a model file can switch on, as a user nobody planned for would.

Each case draws a tree (planar chain, spatial tree, or a floating one), stops on some joints, damping
and friction on some, a limit mode, an integrator, a restitution and sometimes a PD controller
(continuous or sampled, with or without g(q)), starts it inside its stops with a random velocity,
and asks: the run finishes; hard stops hold; a batch of two runs equals the two single runs (bit
for bit on the fixed steps).  This fuzz found six bugs, each now with its own test in
test_joint_limits.py or test_simulate.py: simultaneous stops "firing forever" (twice: a joint held
on its stop, and one a rounding error past it), soft stops too stiff mid-chain, blown-up runs
raising instead of ending diverged, an adaptive run crawling for ever at t = 0, radau and lsoda
giving up at a soft stop's kink.
"""
import dataclasses
import warnings

import numpy as np
import pytest

import multibody as mb

FIXED = ("rk4", "semi_implicit", "euler")


def random_case(rng):
    nb = int(rng.integers(1, 8))
    kind = rng.choice(["planar", "spatial", "floating"])
    if kind == "planar":
        m = mb.models.planar(nb)
    elif kind == "floating":
        m = mb.models.floatbase(mb.models.auto_tree(nb, 1.5, 1.0, 1.0))
    else:
        m = mb.models.auto_tree(nb, float(rng.choice([1, 1.5, 2])), float(rng.uniform(0.5, 1)),
                                float(rng.uniform(0.5, 1.5)))
    nv = m.nv
    lower, upper = np.full(m.nq, -np.inf), np.full(m.nq, np.inf)
    for j in range(m.nb):
        if m.nq_joint[j] == 1 and rng.random() < 0.6:
            i = m.q_start[j]
            a = rng.uniform(0.1, 1.0)
            lower[i], upper[i] = -a, a * rng.uniform(0.5, 1.5)
    m = dataclasses.replace(m, q_lower=lower, q_upper=upper,
                            damping=rng.uniform(0, 0.5, nv) * (rng.random(nv) < 0.5),
                            friction=rng.uniform(0, 0.5, nv) * (rng.random(nv) < 0.5))
    q0 = m.neutral().copy()
    for j in range(m.nb):
        if m.nq_joint[j] == 1:
            i = m.q_start[j]
            x = rng.normal(0, 0.3)
            q0[i] = np.clip(x, lower[i] + 1e-3, upper[i] - 1e-3) if np.isfinite(lower[i]) else x
    qd0 = rng.normal(0, 1, nv)
    controller = None
    if rng.random() < 0.4:
        controller = mb.PD(kp=np.full(nv, 5.0), kd=np.full(nv, 1.0), q_ref=q0,
                           gravity_compensation=bool(rng.random() < 0.5),
                           period=float(rng.choice([0.0, 0.004])) or None)
    args = dict(integrator=str(rng.choice(FIXED + ("rk45", "radau"))), limits=str(rng.choice(["hard", "soft", "off"])),
                dt=float(rng.choice([1e-3, 2e-3])), limit_restitution=float(rng.choice([0.0, 0.3, 1.0])),
                controller=controller)
    return m, q0, qd0, args


def unstable_hold(m, q0, controller):
    """A sampled PD holds kd·q̇ for a period: on a joint of mobility (M⁻¹)_jj that overshoots once
    kd (M⁻¹)_jj period > 2 (a discrete damper), a diverging run the controller's and not ours."""
    from multibody.dynamics.derivatives import minv
    if controller is None or not controller.period:
        return False
    return float(np.max(controller.kd * np.diag(minv(m, q0)))) * controller.period > 1.0


def within_hard_stops(m, traj):
    for j in range(m.nb):
        i = m.q_start[j]
        if m.nq_joint[j] == 1 and np.isfinite(m.q_lower[i]):
            if traj.q[:, i].min() < m.q_lower[i] - 1e-8 or traj.q[:, i].max() > m.q_upper[i] + 1e-8:
                return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_trees_with_stops_damping_friction_and_controllers_run_as_promised(seed):
    rng = np.random.default_rng(seed)
    for case in range(25):
        m, q0, qd0, args = random_case(rng)
        where = f"seed {seed} case {case}: {m.name}, {args}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                one = mb.simulate(m, q0, qd0, 0.3, on_divergence="raise", **args)
                half = mb.simulate(m, q0, 0.5 * qd0, 0.3, on_divergence="raise", **args)
            except mb.SimulationError as e:   # a held kd·q̇ on a light joint: the controller's own instability
                assert unstable_hold(m, q0, args["controller"]), (where, str(e))
                continue
            except ValueError as e:   # rk4/euler refuse damping their step cannot follow (limits.py)
                assert str(e).startswith("damping: ") and "semi_implicit" in str(e), (where, str(e))
                continue
            batch = mb.simulate_batch(m, np.array([q0, q0]), np.array([qd0, 0.5 * qd0]), 0.3, **args)
        assert one.status == half.status == "finished", where
        assert np.all(np.isfinite(one.q)) and np.all(np.isfinite(one.qd)), where
        if args["limits"] == "hard":
            assert within_hard_stops(m, one) and within_hard_stops(m, half), where
        assert batch.status == ["finished", "finished"], where
        if args["integrator"] in FIXED:
            np.testing.assert_array_equal(batch[0].q, one.q, err_msg=where)
            np.testing.assert_array_equal(batch[1].q, half.q, err_msg=where)
