"""The collision table (c/collide.c): every pair of shapes that can meet has a collider, a pair
without one is an error naming both shapes, and a shape the engine does not know is never
collided as another shape (it used to be collided as a cylinder)."""
import numpy as np
import pytest

from multibody import engine as E
from multibody.engine import _engine as C

NAMES = {C.G_SPHERE: "sphere", C.G_BOX: "box", C.G_CAPSULE: "capsule", C.G_CYLINDER: "cylinder",
         C.G_PLANE: "plane", C.G_CONVEX: "convex", C.G_TRIMESH: "trimesh", C.G_ELLIPSOID: "ellipsoid",
         C.G_HFIELD: "hfield"}
STATIC_ONLY = {C.G_PLANE, C.G_TRIMESH, C.G_HFIELD}
NO_COLLIDER_YET = {frozenset((C.G_ELLIPSOID, C.G_TRIMESH))}   # an ellipsoid on a static mesh: refused, named
UNKNOWN = C.G_COUNT                        # the first code no shape has
TYPE = 0                                  # gint column of the shape code (engine.h GI_TYPE)


def test_every_pair_that_can_meet_has_a_collider_and_the_holes_are_static_pairs():
    assert C.G_COUNT == len(NAMES)
    for a in range(C.G_COUNT):
        for b in range(C.G_COUNT):
            na, nb, has = C.shape_pair(a, b)
            assert (na, nb) == (NAMES[a], NAMES[b])
            assert has == C.shape_pair(b, a)[2]                      # symmetric pairs: one entry
            assert has == (not (a in STATIC_ONLY and b in STATIC_ONLY) and frozenset((a, b)) not in NO_COLLIDER_YET), (na, nb)


def test_a_shape_code_the_engine_does_not_know_is_named():
    with pytest.raises(ValueError, match=f"shape code {UNKNOWN}"):
        C.shape_pair(C.G_SPHERE, UNKNOWN)
    with pytest.raises(ValueError, match="shape code -1"):
        C.shape_pair(-1, C.G_BOX)


def _world():
    w = E.World(gravity=(0, 0, -9.81))
    w.add_geom(E.Plane((0, 0, 1), 0.0))
    body = w.add_body(E.Sphere(0.2), mass=1.0, position=(0, 0, 0.15))   # in the plane by 5 cm
    return w, body


def test_an_unknown_shape_is_refused_when_the_world_is_built():
    w, _ = _world()
    gint = w._gint.copy()
    gint[1, TYPE] = UNKNOWN
    with pytest.raises(ValueError, match=f"geometry 1 has an invalid type.*shape code {UNKNOWN}"):
        C.Sim(w._state, w._load, w._bprop, w._jint, w._jdat, gint, w._gdat, w._wpar)


def test_an_unknown_shape_met_in_a_step_is_an_error_not_a_cylinder():
    w, body = _world()
    assert len(w.collide()["contact_depth"]) == 1                    # a sphere on the plane
    w._gint[1, TYPE] = UNKNOWN                                   # behind the built Sim's back
    with pytest.raises(ValueError, match=f"no collider for a shape code {UNKNOWN}-plane pair"):
        w.collide()
    state = w._state.copy()
    with pytest.raises(E.SimulationError, match=f"geometries 1 and 0: the engine has no collider for a shape code {UNKNOWN}-plane pair"):
        w.step(0.01)
    np.testing.assert_array_equal(w._state, state)                    # the step did not move anything


def test_a_pair_without_a_collider_met_in_a_step_names_both_shapes():
    w, body = _world()
    w.collide()                                                       # the Sim is built (and checked) here
    w._gint[1, TYPE] = C.G_TRIMESH                               # a mesh on a body: plane-mesh has no collider
    w._state[0, 2] = -0.01                                            # without triangles its box is its centre
    with pytest.raises(E.SimulationError, match="no collider for a trimesh-plane pair") as e:
        w.step(0.01)
    assert e.value.body is body


def test_static_only_shapes_on_a_body_are_refused_by_name():
    w, _ = _world()
    gint = w._gint.copy()
    gint[1, TYPE] = C.G_PLANE
    with pytest.raises(ValueError, match=r"geometry 1 has an invalid type or body index \(a plane is static"):
        C.Sim(w._state, w._load, w._bprop, w._jint, w._jdat, gint, w._gdat, w._wpar)
