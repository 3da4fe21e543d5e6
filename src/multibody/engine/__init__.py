"""Maximal-coordinate rigid-body engine in the style of OpenDE (the OpenDE report, seed 003).

Bodies are Cartesian (centre of mass, quaternion, velocities); joints are constraints solved
with Lagrange multipliers (JWJᵀλ, report ch. 5.3) with ERP/CFM error feedback (§3.4); contacts
bounce and rub (ch. 6, §3.3); the step is semi-implicit Euler in C (``multibody.engine._engine``).

* ``World(gravity, erp, cfm, dt, solver='auto'|'dantzig'|'pgs', friction='pyramid'|'cone'|'force', …)``;
  ``add_body`` (a Box/Sphere/Capsule/Cylinder/Convex with mass or density, or bare mass and inertia),
  ``add_geom`` (also static geometry and ``Plane``), ``add_hinge/ball/slider/fixed/universal/hinge2``
  with anchors and axes in world coordinates; ``Joint.angle/rate``, ``set_motor``, ``set_limits``;
  ``step()``, ``run(n)``; ``last_step`` (Jacobian, λ, contact forces, complementarity residual).
* Rays: ``World.ray_cast(origin, direction, max_distance)`` (ODE's ``dCreateRay``) against every
  shape, ``ray_cast_many`` for batches (``csrc/engine/ray.c``).  The angular motor: ``World.add_amotor``
  (ODE's AMotor, user and euler modes, motors and stops on up to three axes).
* ``contact_params(k, c, dt)`` → (ERP, CFM) of a spring-damper (report eqs. 3.6-3.7).
* ``World.from_model(model, q, qd)`` and ``joint_positions()``/``joint_velocities()``: one Model
  in maximal and in generalized coordinates (the report's ch. 5 comparison; tests/test_engine.py).
* Collision: sweep-and-prune broad phase and a C narrow phase for every primitive pair
  (``csrc/engine/collide.c`` says why not coal or python-fcl: 8-9× cheaper per pair and no Python per step).
  Static triangle meshes (``TriangleMesh``, terrain) against every primitive, with a bounding-volume
  hierarchy (``csrc/engine/trimesh.c``); static height fields (``HField``: MuJoCo's, collided as its
  triangular prisms, ``csrc/engine/hfield.c``); rays against every shape but height fields
  (``World.ray_cast``, ``csrc/engine/ray.c``).
  Convex meshes: ``Convex(vertices)`` or ``Convex.from_file(path)`` (the hull, computed once),
  against every primitive, static triangle meshes and each other in C (``csrc/engine/convex.c``: separating axes, face clipping, up
  to 4 points, so a convex box rests like the primitive box); ``World.from_model`` turns URDF/MJCF
  collision meshes into hulls.  Written here rather than taken from coal or libccd: the package
  builds with gcc and pip alone; tests/test_engine_convex.py checks it against coal's GJK/EPA.

>>> from multibody import engine
>>> world = engine.World()
>>> ball = world.add_body(engine.Sphere(0.1), density=1000.0, position=(0, 0, 1.0))
>>> floor = world.add_geom(engine.Plane((0, 0, 1), 0.0))
>>> world.run(1000)
>>> round(float(ball.position[2]), 3)       # resting on the floor, within the surface layer
0.1
"""
from . import _engine  # noqa: F401
from .shapes import Box, Capsule, Convex, Cylinder, Ellipsoid, HField, Plane, Shape, Sphere, TriangleMesh
from .world import AMotor, Body, Geom, Joint, LastStep, RayHit, SimulationError, World, contact_params
from .recording import Recording, record, scene_model

__all__ = ["World", "Body", "Joint", "Geom", "LastStep", "SimulationError", "contact_params",
           "Box", "Sphere", "Capsule", "Cylinder", "Ellipsoid", "Plane", "Shape", "Convex",
           "TriangleMesh", "HField", "AMotor", "RayHit", "Recording", "record", "scene_model"]
