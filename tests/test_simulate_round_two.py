"""simulate as a new user meets it (issue: trust and first contact, round two): step counts no run can
hold are one clear error naming the argument, and a model that carries a constraint is simulated with
it (or refused), never without it."""
import numpy as np
import pytest

import multibody as mb
from multibody.simulation.constraints import GammaQ


@pytest.mark.parametrize("kw, says", [
    (dict(t_final=1e308), r"dt: 1e\+308 s in steps of 0.001 s is more than 2\*\*53 steps"),
    (dict(dt=1e-320), r"dt: 1 s in steps of 9.99989e-321 s is more than 2\*\*53 steps"),
    (dict(record_every=2**70), r"record_every: expected an integer ≤ 2\*\*53"),
])
@pytest.mark.parametrize("batch", [False, True])
def test_a_step_count_no_run_can_hold_is_one_value_error(kw, says, batch):
    model = mb.models.double_pendulum()
    args = dict(t_final=1.0, dt=1e-3)
    args.update(kw)
    t_final = args.pop("t_final")
    with pytest.raises(ValueError, match=says):
        if batch:
            mb.simulate_batch(model, np.zeros((2, 2)), np.zeros((2, 2)), t_final, **args)
        else:
            mb.simulate(model, [0.1, 0.0], [0.0, 0.0], t_final, **args)


def _gear_error(model, traj):
    return max(np.abs(GammaQ().residual(model, q, qd)[0]).max() for q, qd in zip(traj.q, traj.qd))


@pytest.mark.parametrize("integrator", ["rk4", "rk45"])
def test_the_double_elbow_is_simulated_with_its_gears(integrator):
    model = mb.models.double_elbow()
    q0, qd0 = np.zeros(model.nq), np.zeros(model.nv)
    traj = mb.simulate(model, q0, qd0, 2.0, integrator=integrator)
    assert traj.status == "finished"
    assert _gear_error(model, traj) < 1e-9          # it drifted 0.14 rad (7.86 rad from other starts)
    explicit = mb.simulate(model, q0, qd0, 2.0, integrator=integrator, constraints=GammaQ())
    assert np.array_equal(traj.q, explicit.q)


def test_a_batch_of_the_double_elbow_keeps_its_gears():
    model = mb.models.double_elbow()
    batch = mb.simulate_batch(model, np.zeros((2, model.nq)), np.zeros((2, model.nv)), 1.0)
    for k in range(2):
        run = batch[k]
        assert _gear_error(model, run) < 1e-9


def test_other_constraints_on_a_geared_model_are_refused_naming_the_argument():
    model = mb.models.double_elbow()
    with pytest.raises(ValueError, match="constraints: the model carries gamma_q"):
        mb.simulate(model, np.zeros(model.nq), np.zeros(model.nv), 0.1,
                    constraints=mb.ConstraintSet(mb.JointCoupling(0, 1, 1.0)))


@pytest.mark.parametrize("output, says", [
    (lambda t, q, qd: np.array([1 + 2j, 0.0]), "controller: expected real numbers, got complex"),
    (lambda t, q, qd: ["a", "b"], "controller: expected an array of numbers"),
    (lambda t, q, qd: [object(), 1.0], "controller: expected an array of numbers, got objects"),
])
def test_a_controller_returning_what_is_not_real_numbers_is_named(output, says):
    model = mb.models.double_pendulum()
    with pytest.raises(TypeError, match=says + r".*\(returned at t = 0.0\)"):
        mb.simulate(model, [0.1, 0.0], [0.0, 0.0], 0.01, controller=output)


def test_a_batch_controller_s_exception_names_the_controller_and_the_time():
    model = mb.models.double_pendulum()

    def broken(t, Q, QD):
        if t > 0.005:
            raise KeyError("gain")
        return np.zeros_like(QD)
    with pytest.raises(ValueError, match=r"controller: raised KeyError: 'gain' \(at t = 0.00[56]"):
        mb.simulate_batch(model, np.zeros((3, 2)), np.zeros((3, 2)), 0.02, controller=broken)
    with pytest.raises(TypeError, match="controller: expected real numbers, got complex"):
        mb.simulate_batch(model, np.zeros((3, 2)), np.zeros((3, 2)), 0.02,
                          controller=lambda t, Q, QD: np.zeros(QD.shape, complex))


def test_a_contact_with_negative_states_is_named():
    class Odd:
        n_states = -5

        def initial_state(self, model, q, qd):
            return np.zeros(0)

        def forces(self, model, q, qd, z):
            return np.zeros((model.nb, 6)), np.zeros(0)
    with pytest.raises(ValueError, match=r"contact.n_states: expected an integer ≥ 0, got -5"):
        mb.simulate(mb.models.double_pendulum(), [0.1, 0.0], [0.0, 0.0], 0.01, contact=Odd())


def _pendulum_with_stop():
    b = mb.ModelBuilder("stopped", gravity=(0.0, 0.0, 0.0))
    b.add_body("arm", None, "Ry", mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01, q_lower=-0.3, q_upper=0.3)
    return b.build()


@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_sensitivities_refuse_a_run_that_crosses_a_soft_stop(integrator):
    """traj.stm was silently wrong once a joint entered its soft stop (the law switches there)."""
    model = _pendulum_with_stop()
    with pytest.raises(ValueError, match=r"sensitivities: joint 'arm_joint' entered its soft stop at 0.3 near t"):
        mb.simulate(model, [0.0], [3.0], 0.5, dt=1e-3, integrator=integrator, limits="soft", sensitivities=True)


def test_sensitivities_on_one_side_of_a_soft_stop_are_kept_and_right():
    model = _pendulum_with_stop()
    traj = mb.simulate(model, [0.0], [0.2], 0.2, dt=1e-3, limits="soft", sensitivities=True)
    assert np.all(np.abs(traj.q[:, 0]) < 0.3)
    h = 1e-6                                          # central differences of the flow in q0
    up = mb.simulate(model, [h], [0.2], 0.2, dt=1e-3, limits="soft").q[-1, 0]
    down = mb.simulate(model, [-h], [0.2], 0.2, dt=1e-3, limits="soft").q[-1, 0]
    assert traj.stm[-1][0, 0] == pytest.approx((up - down) / (2 * h), rel=1e-6)
