"""One set of exception classes (multibody.errors) and one rule for argument checks (multibody._checks):
the same fault raises the same class in every layer — spatial, model, kinematics, dynamics,
simulation, engine, view.  Wrong kind → TypeError; wrong value, shape, NaN/inf, unknown name →
ValueError; each message starts with the argument's name."""
from __future__ import annotations

import math
import re

import matplotlib
import numpy as np
import pytest

import multibody as mb
from multibody import _checks, engine, errors, simulation
from multibody.engine import World

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def arm():
    return mb.models.double_pendulum()


# ---- one home for the exception classes --------------------------------------------------------------
def test_one_simulation_error_class():
    assert simulation.SimulationError is engine.SimulationError is errors.SimulationError is mb.SimulationError
    assert mb.SimulationWarning is errors.SimulationWarning


def test_the_engine_raises_the_one_simulation_error():
    world = World(gravity=(0, 0, 0), max_speed=10.0)
    rocket = world.add_body(engine.Sphere(0.1), mass=1.0)
    rocket.add_force([1e4, 0, 0])
    with pytest.raises(errors.SimulationError, match=r"body 'body0'") as info:
        world.step(0.01)
    assert info.value.body is rocket and info.value.step == 1 and info.value.trajectory is None


def test_simulate_raises_the_one_simulation_error(arm):
    def runaway(t, q, qd):  # q̈ = q̇² leaves every bound in finite time
        return mb.rnea(arm, q, qd, qd ** 2)
    with pytest.raises(errors.SimulationError, match="integrator 'rk45': step failed") as info:
        mb.simulate(arm, [0.0, 0.0], [1.0, 1.0], 2.0, integrator="rk45", controller=runaway)
    assert info.value.trajectory is not None and info.value.body is None


def test_every_class_is_named_in_errors_and_the_old_names_still_work():
    from multibody.cli import CLIError
    from multibody.codegen.cache import CompilerNotFoundError
    from multibody.model.mjcf import MJCFError, MJCFWarning
    from multibody.model.urdf import URDFError, URDFWarning
    from multibody.simulation.constraints import ConstraintError
    from multibody.simulation.trajectory import EnergyUnavailable
    for cls in (CLIError, CompilerNotFoundError, MJCFError, MJCFWarning, URDFError, URDFWarning, ConstraintError,
                EnergyUnavailable):
        assert getattr(errors, cls.__name__) is cls
    assert mb.URDFError is errors.URDFError and mb.ConstraintError is errors.ConstraintError
    # the bases tests and users catch
    assert issubclass(errors.URDFError, ValueError) and issubclass(errors.MJCFError, ValueError)
    assert issubclass(errors.ConstraintError, ValueError) and issubclass(errors.SimulationError, RuntimeError)
    assert issubclass(errors.URDFWarning, UserWarning) and issubclass(errors.EnergyUnavailable, ValueError)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        errors.Nope  # noqa: B018


# ---- the same fault, the same class, everywhere ------------------------------------------------------
def _raises(cls, pattern, calls):
    """Each call raises ``cls`` with a message matching ``pattern`` (the label names a failing one)."""
    for label, call in calls.items():
        try:
            call()
        except cls as e:
            assert re.search(pattern, str(e)), f"{label}: {type(e).__name__}: {e}"
        else:
            pytest.fail(f"{label}: did not raise {cls.__name__}")


def test_a_non_finite_time_step_is_a_value_error_everywhere(arm):
    q = np.zeros(2)
    for dt in (math.nan, math.inf, -0.01, 0.0):
        _raises(ValueError, r"^dt: expected a finite number > 0", {
            "simulate": lambda: mb.simulate(arm, q, q, 1.0, dt=dt),
            "simulate_batch": lambda: mb.simulate_batch(arm, [q], [q], 1.0, dt=dt),
            "World()": lambda: World(dt=dt),
            "World.step": lambda: World().step(dt),
            "World.dt": lambda: setattr(World(), "dt", dt),
        })
    _raises(ValueError, r"^dt: expected a finite number", {"integrate": lambda: mb.integrate(arm, q, q, math.nan)})
    _raises(ValueError, r"^step: expected a finite number > 0", {
        "linearize": lambda: mb.linearize(arm, q, q, step=math.nan)})


def test_a_time_step_that_is_not_a_number_is_a_type_error_everywhere(arm):
    q = np.zeros(2)
    for dt in ("0.01", None, [0.01], 1j, True):
        _raises(TypeError, r"^dt: expected a real number", {
            **({} if dt is None else {"simulate": lambda: mb.simulate(arm, q, q, 1.0, dt=dt)}),  # None: the default
            "World()": lambda: World(dt=dt),
            "World.step": lambda: World().step(dt) if dt is not None else World(dt=dt),  # None: world.dt
            "integrate": lambda: mb.integrate(arm, q, q, dt),
        })


def test_counts(arm):
    q = np.zeros(2)
    _raises(ValueError, r"^(record_every|n_points): expected an integer ≥ 1, got (-1|0)", {
        "simulate": lambda: mb.simulate(arm, q, q, 1.0, record_every=-1),
        "simulate_batch": lambda: mb.simulate_batch(arm, [q], [q], 1.0, record_every=0),
        "contact_parameters": lambda: mb.contact_parameters(1.0, 0.01, n_points=0),
    })
    _raises(ValueError, r"^n: expected an integer ≥ 0, got -1", {"World.run": lambda: World().run(-1, 0.01)})
    _raises(TypeError, r"^n: expected an integer, got 2.5", {"World.run": lambda: World().run(2.5, 0.01)})
    _raises(TypeError, r"^(record_every|n_points): expected an integer, got (2.5|str '2')", {
        "simulate": lambda: mb.simulate(arm, q, q, 1.0, record_every=2.5),
        "simulate_batch": lambda: mb.simulate_batch(arm, [q], [q], 1.0, record_every=2.5),
        "contact_parameters": lambda: mb.contact_parameters(1.0, 0.01, n_points="2"),
    })


def test_an_unknown_body_name_is_a_value_error_everywhere(arm):
    q = np.zeros(2)
    _raises(ValueError, r"^body: no body named 'nope'; bodies are \['link1', 'link2'\]", {
        "body_index": lambda: arm.body_index("nope"),
        "point_position": lambda: mb.point_position(arm, q, "nope"),
        "point_velocity": lambda: mb.point_velocity(arm, q, q, "nope"),
        "body_jacobian": lambda: mb.body_jacobian(arm, q, "nope"),
        "jdot_qd": lambda: mb.jdot_qd(arm, q, q, "nope"),
        "PointConstraint": lambda: mb.ConstraintSet(mb.PointConstraint("nope", [0, 0, 0])).evaluate(arm, q, q),
        "GroundContact": lambda: mb.GroundContact(arm, 1e4, 10.0, points=[("nope", [0, 0, 0])]),
    })
    _raises(ValueError, r"^joint: no joint named 'nope'", {
        "joint_index": lambda: arm.joint_index("nope"),
        "joint_wall": lambda: mb.joint_wall(arm, "nope", 0.0),
    })
    _raises(ValueError, r"^body: index 7 out of range 0…1", {
        "body_index": lambda: arm.body_index(7), "point_position": lambda: mb.point_position(arm, q, 7)})


def test_a_body_of_the_wrong_kind_is_a_type_error_everywhere(arm):
    q = np.zeros(2)
    for body in (1.0, None, ["link1"], True):
        _raises(TypeError, r"^body: expected a body name or index", {
            "body_index": lambda: arm.body_index(body),
            "point_position": lambda: mb.point_position(arm, q, body),
            "body_jacobian": lambda: mb.body_jacobian(arm, q, body),
        })


def test_a_model_of_the_wrong_kind_is_a_type_error_everywhere(arm):
    q = np.zeros(2)
    for model in (None, "double_pendulum", 3):
        _raises(TypeError, r"^model: expected a multibody\.Model, got", {
            "rnea": lambda: mb.rnea(model, q, q, q), "crba": lambda: mb.crba(model, q),
            "aba": lambda: mb.aba(model, q, q, q), "energy": lambda: mb.energy(model, q, q),
            "forward_kinematics": lambda: mb.forward_kinematics(model, q),
            "center_of_mass": lambda: mb.center_of_mass(model, q),
            "integrate": lambda: mb.integrate(model, q, q),
            "simulate": lambda: mb.simulate(model, q, q, 1.0),
            "plot_bodies": lambda: mb.view.plot_bodies(model, q),
        })


def test_vectors_that_are_not_numbers_are_type_errors_and_nan_is_a_value_error(arm):
    q = np.zeros(2)
    b = mb.ModelBuilder()
    w = World()
    body = w.add_body(engine.Sphere(0.1), mass=1.0)
    for bad in ("abc", [1, None, 2], [1j, 0, 0], None):
        _raises(TypeError, r"^(q0|com of 'a'|body 'body0' position|q|point|gravity|xlt: r)[: ].*"
                           r"(real|numbers|coordinates)", {
            "simulate q0": lambda: mb.simulate(arm, bad if bad is not None else "ab", q, 1.0),   # None: default
            "builder com": lambda: b.add_body("a", None, "Rz", com=bad),
            "engine position": lambda: setattr(body, "position", bad),
            "engine gravity": lambda: World(gravity=bad),
            "plot_bodies q": lambda: mb.view.plot_bodies(arm, bad if bad is not None else "ab"),  # None: neutral
            "point": lambda: mb.point_position(arm, q, 1, bad),
            "spatial xlt": lambda: mb.spatial.xlt(bad),
        })
    nan3 = [0.0, math.nan, 0.0]
    _raises(ValueError, r"^(q0|com of 'a'|body 'body0' position|q|point|gravity|xlt: r)[: ].*NaN or inf", {
        "simulate q0": lambda: mb.simulate(arm, nan3[:2], q, 1.0),
        "builder com": lambda: b.add_body("a", None, "Rz", com=nan3),
        "engine position": lambda: setattr(body, "position", nan3),
        "engine gravity": lambda: World(gravity=nan3),
        "plot_bodies q": lambda: mb.view.plot_bodies(arm, nan3[:2]),
        "point": lambda: mb.point_position(arm, q, 1, nan3),
        "spatial xlt": lambda: mb.spatial.xlt(nan3),
    })


def test_a_choice_outside_the_choices_is_a_value_error_of_the_wrong_kind_a_type_error(arm):
    q = np.zeros(2)
    _raises(ValueError, r"^(integrator|frame|side|redundant): expected one of \[", {
        "simulate": lambda: mb.simulate(arm, q, q, 1.0, integrator="leapfrog"),
        "body_jacobian": lambda: mb.body_jacobian(arm, q, 1, frame="body"),
        "joint_wall": lambda: mb.joint_wall(arm, 0, 0.0, side="middle"),
        "ConstraintSet": lambda: mb.ConstraintSet(mb.PointConstraint(1, [0, 0, 0]), redundant="ignore"),
    })
    _raises(TypeError, r"^(integrator|frame|side): expected one of \[", {
        "simulate": lambda: mb.simulate(arm, q, q, 1.0, integrator=4),
        "body_jacobian": lambda: mb.body_jacobian(arm, q, 1, frame=["local"]),
        "joint_wall": lambda: mb.joint_wall(arm, 0, 0.0, side=None),
    })


def test_scalars_out_of_range_are_value_errors_and_strings_type_errors():
    _raises(ValueError, r"^(erp|bounce \(a restitution\)|damping of 'a'|Sphere\.radius): expected a finite number", {
        "World erp": lambda: World(erp=1.5),
        "geom bounce": lambda: setattr(World().add_geom(engine.Plane()), "bounce", -0.1),
        "builder damping": lambda: mb.ModelBuilder().add_body("a", None, "Rz", damping=-1.0),
        "sphere radius": lambda: engine.Sphere(math.nan),
    })
    _raises(TypeError, r"^(erp|bounce \(a restitution\)|damping of 'a'|Sphere\.radius): expected a real number, got str", {
        "World erp": lambda: World(erp="0.2"),
        "geom bounce": lambda: setattr(World().add_geom(engine.Plane()), "bounce", "1"),
        "builder damping": lambda: mb.ModelBuilder().add_body("a", None, "Rz", damping="0.1"),
        "sphere radius": lambda: engine.Sphere("0.1"),
    })


# ---- the checks themselves -------------------------------------------------------------------------------
def test_checks_rule_in_one_table():
    cases = [
        (lambda: _checks.number("x", "1"), TypeError), (lambda: _checks.number("x", True), TypeError),
        (lambda: _checks.number("x", None), TypeError), (lambda: _checks.number("x", 1j), TypeError),
        (lambda: _checks.number("x", math.nan), ValueError), (lambda: _checks.number("x", -1, nonneg=True), ValueError),
        (lambda: _checks.integer("n", 1.0), TypeError), (lambda: _checks.integer("n", -1, lo=0), ValueError),
        (lambda: _checks.vector("v", "abc", 3), TypeError), (lambda: _checks.vector("v", [1, 2], 3), ValueError),
        (lambda: _checks.vector("v", [[1, 2], [3]], None), ValueError),
        (lambda: _checks.vector("v", [1, np.inf, 0], 3), ValueError),
        (lambda: _checks.name_index("body", "x", ["a"]), ValueError),
        (lambda: _checks.name_index("body", 2.0, ["a"]), TypeError),
        (lambda: _checks.one_of("s", "c", ("a", "b")), ValueError), (lambda: _checks.one_of("s", 1, ("a",)), TypeError),
        (lambda: _checks.function("f", 3), TypeError), (lambda: _checks.model(None), TypeError),
    ]
    for call, cls in cases:
        with pytest.raises(cls):
            call()
    assert _checks.number("x", np.float32(0.5), lo=0, hi=1) == 0.5
    assert _checks.integer("n", np.int64(3), lo=1) == 3
    assert _checks.vector("v", [1, 2, 3], 3).dtype == np.float64
    a = np.zeros(3)
    assert _checks.vector("v", a, 3, copy=False) is a and _checks.vector("v", a, 3) is not a
    assert _checks.all_finite(np.array([1e200, 1e200])) and not _checks.all_finite(np.array([1.0, np.nan]))
