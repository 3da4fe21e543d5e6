"""Seed systems that move: spatial_v2's Simulink tutorial examples 1–7, a four-bar linkage, the TMT
paper's flapping flyer and Clemens joint.

Each ``example_*`` function runs one system end to end and returns an :class:`ExampleResult`
(the trajectory plus the numbers that state the example's physical fact); the tests in
``tests/test_examples_sim.py`` assert those facts.  ``python -m multibody.simulate.examples``
runs them all and prints the facts.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..model.builder import ModelBuilder
from .constraints import PointConstraint

__all__ = ["four_bar"]


def four_bar(crank: float = 1.0, coupler: float = 2.0, rocker: float = 2.0, ground: float = 2.5,
             density: float = 1.0, gravity: float = 9.81):
    """A planar four-bar linkage: (model, closure constraint).

    The open chain crank → coupler → rocker hangs from the base pivot at the origin (revolute
    joints about z, the links uniform rods of ``density`` kg/m along their x axes); the loop is
    closed by pinning the rocker's free end to the second base pivot at (``ground``, 0, 0):
    a :class:`~multibody.simulate.constraints.PointConstraint` on the x and y rows (the z row of
    a planar loop is identically zero).  The defaults (1, 2, 2, 2.5 m) make a Grashof crank-rocker:
    the crank turns fully.  Gravity −``gravity`` along y.

    Example
    -------
    >>> import numpy as np
    >>> model, closure = four_bar()
    >>> model.nv, closure.evaluate(model, np.zeros(3), np.zeros(3)).c.shape
    (3, (2,))
    """
    lengths = dict(crank=crank, coupler=coupler, rocker=rocker, ground=ground, density=density)
    for name, v in lengths.items():
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name}: expected a positive number, got {v!r}")
    if not np.isfinite(gravity):
        raise ValueError(f"gravity: expected a finite number, got {gravity!r}")
    b = ModelBuilder("four_bar", gravity=(0.0, -float(gravity), 0.0))

    def rod(L):
        m = density * L
        return dict(mass=m, com=[L / 2, 0, 0], inertia=np.diag([0.0, m * L * L / 12, m * L * L / 12]))

    b.add_body("crank", None, "r", joint_name="base_pivot", **rod(crank))
    b.add_body("coupler", "crank", "r", joint_translation=[crank, 0, 0], joint_name="crank_pin", **rod(coupler))
    b.add_body("rocker", "coupler", "r", joint_translation=[coupler, 0, 0], joint_name="coupler_pin", **rod(rocker))
    model = replace(b.build(), planar=True)
    closure = PointConstraint("rocker", [rocker, 0, 0], None, [ground, 0, 0], axes="xy", name="closure")
    return model, closure
