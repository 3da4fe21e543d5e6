"""Maximal-coordinate rigid-body engine in the style of OpenDE (the OpenDE report, seed 003).

Bodies are Cartesian (centre of mass, quaternion, velocities); joints are constraints solved
with Lagrange multipliers (JWJᵀλ, report ch. 5.3) with ERP/CFM error feedback (§3.4); contacts
bounce and rub (ch. 6, §3.3); the step is semi-implicit Euler in C (``multibody.engine._engine``).

>>> from multibody import engine
>>> world = engine.World()
>>> ball = world.add_body(engine.Sphere(0.1), density=1000.0, position=(0, 0, 1.0))
>>> floor = world.add_geom(engine.Plane((0, 0, 1), 0.0))
>>> world.run(1000)
>>> round(float(ball.position[2]), 3)       # resting on the floor, within the surface layer
0.1
"""
from . import _engine  # noqa: F401
from .shapes import Box, Capsule, Cylinder, Plane, Shape, Sphere
from .world import Body, Geom, Joint, LastStep, SimulationError, World, contact_params

__all__ = ["World", "Body", "Joint", "Geom", "LastStep", "SimulationError", "contact_params",
           "Box", "Sphere", "Capsule", "Cylinder", "Plane", "Shape"]
