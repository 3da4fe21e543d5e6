"""Bad input gets a clear error naming the bad thing; an exploding simulation stops with a message."""
import math

import numpy as np
import pytest

import multibody as mb
from multibody import engine as E


@pytest.mark.parametrize("mass", [0.0, -1.0, math.nan, math.inf])
def test_non_positive_or_non_finite_mass(mass):
    world = E.World()
    with pytest.raises(ValueError, match="mass"):
        world.add_body(E.Box(1, 1, 1), mass=mass)
    with pytest.raises(ValueError, match="mass"):
        world.add_body(mass=mass, inertia=[1, 1, 1])


@pytest.mark.parametrize("inertia", [[1, 1, 0], [1, 1, -1], [1, 1, 3], [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]],
                                     [math.nan, 1, 1]])
def test_degenerate_inertia(inertia):
    with pytest.raises(ValueError, match="inertia"):
        E.World().add_body(mass=1.0, inertia=inertia)


def test_mass_or_density_and_shape_rules():
    world = E.World()
    with pytest.raises(ValueError, match="exactly one"):
        world.add_body(E.Sphere(0.1), mass=1.0, density=1000.0)
    with pytest.raises(ValueError, match="density"):
        world.add_body(E.Sphere(0.1), density=-5.0)
    with pytest.raises(ValueError, match="both"):
        world.add_body(mass=1.0)
    with pytest.raises(TypeError, match="shape"):
        world.add_body("box", mass=1.0)
    with pytest.raises(TypeError, match="shape"):
        world.add_body(E.Plane(), mass=1.0)
    with pytest.raises(ValueError, match="static"):
        E.Plane().mass_properties(mass=1.0)
    body = world.add_body(E.Sphere(0.1), density=1000.0)
    assert body.mass == pytest.approx(1000.0 * 4 / 3 * math.pi * 0.001)


@pytest.mark.parametrize("make", [lambda: E.Box(1, 0, 1), lambda: E.Box(1, -1, 1), lambda: E.Sphere(0),
                                  lambda: E.Capsule(0.1, -0.2), lambda: E.Cylinder(math.nan, 1),
                                  lambda: E.Sphere(math.inf), lambda: E.Plane((0, 0, 0))])
def test_non_positive_sizes(make):
    with pytest.raises(ValueError, match="expected"):
        make()


def test_joint_attached_twice_to_the_same_pair():
    world = E.World()
    a = world.add_body(E.Box(1, 0.1, 0.1), mass=1.0)
    b = world.add_body(E.Box(1, 0.1, 0.1), mass=1.0, position=(1, 0, 0))
    world.add_hinge(b, a, anchor=(0.5, 0, 0), axis=(0, 1, 0))
    with pytest.raises(ValueError, match="already joins"):
        world.add_ball(a, b, anchor=(0.5, 0, 0))
    world.add_hinge(a, None, anchor=(-0.5, 0, 0), axis=(0, 1, 0))
    with pytest.raises(ValueError, match="already joins 'body0' and the world"):
        world.add_fixed(a)
    with pytest.raises(ValueError, match="itself"):
        world.add_ball(a, a, anchor=(0, 0, 0))


def test_joint_arguments():
    world = E.World()
    a = world.add_body(E.Box(1, 0.1, 0.1), mass=1.0)
    with pytest.raises(ValueError, match="anchor"):
        world.add_hinge(a, None, axis=(0, 0, 1))
    with pytest.raises(ValueError, match="axis: expected a non-zero"):
        world.add_hinge(a, None, anchor=(0, 0, 0), axis=(0, 0, 0))
    with pytest.raises(ValueError, match="parallel"):
        world.add_universal(a, None, anchor=(0, 0, 0), axis=(0, 0, 1), axis2=(0, 0, 2))
    with pytest.raises(ValueError, match="kind"):
        world.add_joint("weld", a)
    with pytest.raises(ValueError, match="body1"):
        world.add_ball("nobody", None, anchor=(0, 0, 0))
    h = world.add_hinge(a, None, anchor=(0, 0, 0), axis=(0, 0, 1))
    with pytest.raises(ValueError, match="lo ≤ hi"):
        h.set_limits(1.0, -1.0)
    with pytest.raises(ValueError, match="axis"):
        h.set_motor(1.0, 1.0, axis=1)
    with pytest.raises(ValueError, match="max_force"):
        h.set_motor(1.0, -1.0)


@pytest.mark.parametrize("field", ["position", "velocity", "angular_velocity", "quaternion"])
def test_nan_poses_and_velocities(field):
    world = E.World()
    n = 4 if field == "quaternion" else 3
    with pytest.raises(ValueError, match=f"{field}: contains NaN or inf"):
        world.add_body(E.Sphere(0.1), mass=1.0, **{field: [math.nan] * n})
    body = world.add_body(E.Sphere(0.1), mass=1.0)
    with pytest.raises(ValueError, match=f"{field}: contains NaN or inf"):
        setattr(body, field, [1.0, math.nan, 0.0, 1.0][:n])
    world._state[0, 0] = math.nan                      # written behind the API's back
    with pytest.raises(ValueError, match="body 'body0'.*NaN"):
        world.step()


@pytest.mark.parametrize("dt", [0.0, -1e-3, math.nan, math.inf])
def test_bad_time_step(dt):
    with pytest.raises(ValueError, match="dt"):
        E.World(dt=dt)
    world = E.World()
    world.add_body(E.Sphere(0.1), mass=1.0)
    with pytest.raises(ValueError, match="dt"):
        world.step(dt)
    with pytest.raises(ValueError, match="dt"):
        E.contact_params(1e4, 10.0, dt)


def test_bad_world_parameters():
    with pytest.raises(ValueError, match="erp"):
        E.World(erp=1.5)
    with pytest.raises(ValueError, match="cfm"):
        E.World(cfm=-1.0)
    with pytest.raises(ValueError, match="solver"):
        E.World(solver="lemke")
    with pytest.raises(ValueError, match="friction"):
        E.World(friction="viscous")
    with pytest.raises(ValueError, match="stiffness"):
        E.contact_params(-1.0, 1.0, 1e-3)
    with pytest.raises(ValueError, match="bounce"):
        E.World().add_geom(E.Plane(), bounce=1.5)
    with pytest.raises(ValueError, match="add a body"):
        E.World().step()


def test_exploding_simulation_names_the_body_and_the_step():
    world = E.World(max_speed=100.0, contacts=False)
    world.add_body(E.Sphere(0.1), mass=1.0, name="calm")
    rocket = world.add_body(E.Sphere(0.1), mass=1.0, name="rocket", position=(1, 0, 0))
    world.run(5)
    before = rocket.position
    rocket.add_force((1e6, 0, 0))
    with pytest.raises(E.SimulationError, match=r"step 6: body 'rocket': speed 1e\+03 m/s") as info:
        world.step()
    assert info.value.body is rocket and info.value.step == 6
    assert rocket.position == pytest.approx(before)        # the state before the failing step is kept
    with pytest.raises(ValueError, match="force: contains NaN or inf"):
        rocket.add_force((math.inf, 0, 0))
    world._load[1, 0] = math.inf                          # behind the API's back: the C check still holds
    with pytest.raises(E.SimulationError, match="body 'rocket': the state is not finite"):
        world.step()


def test_from_model_rejects_what_it_cannot_map():
    with pytest.raises(ValueError, match="q: expected 2"):
        E.World.from_model(mb.models.double_pendulum(), [0.0])
    with pytest.raises(ValueError, match="qd"):
        E.World.from_model(mb.models.double_pendulum(), [0.0, 0.0], [math.nan, 0])
    world = E.World()
    world.add_body(E.Sphere(0.1), mass=1.0)
    with pytest.raises(ValueError, match="from_model"):
        world.joint_positions()


def test_contact_params_record_and_scene_model_name_their_bad_arguments():
    """What their Raises sections say.  Before: contact_params('a', …) was "could not convert string to
    float", an array "only 0-dimensional arrays …", 1e308 stiffness a silent (nan, 0.0);
    record('x', 1) an AttributeError; record(world, 1e300) stepped forever, its list of states
    growing; scene_model of an empty world "build: the model has no bodies"."""
    with pytest.raises(TypeError, match=r"^stiffness: expected a real number, got str 'a'$"):
        E.contact_params("a", 1.0, 1e-3)
    with pytest.raises(TypeError, match=r"^damping: expected a real number, got array"):
        E.contact_params(1.0, np.array([1.0, 2.0]), 1e-3)
    with pytest.raises(mb.errors.ResultOverflowError, match=r"^contact_params: dt·stiffness \+ damping overflows"):
        E.contact_params(1e308, 1e308, 1e10)
    world = E.World(dt=1e-3)
    world.add_geom(E.Plane())
    world.add_body(E.Sphere(0.1), mass=1.0, position=(0, 0, 1))
    with pytest.raises(TypeError, match=r"^world: expected a multibody.engine.World, got str$"):
        E.record("x", 1.0)
    with pytest.raises(ValueError, match=r"^t_final: 1e\+300 s in steps of the world's dt = 0.001 s is more than 2\*\*53"):
        world.record(1e300)
    from multibody.simulation.core import _available_memory
    if _available_memory() is not None:                # (where the memory can be read)
        with pytest.raises(MemoryError, match=r"^t_final: the recording would keep 1,000,000,000,000,002 states"):
            E.record(world, 1e12)                      # refused before a step is taken
        assert world.time == 0.0
    with pytest.raises(ValueError, match=r"^extent: expected a finite number > 0, got -1.0$"):
        E.scene_model(world, -1)
    with pytest.raises(ValueError, match=r"^world: it has no bodies"):
        E.scene_model(E.World())
