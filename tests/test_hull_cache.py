"""Hull blocks are computed once per point set (model/geometry.py's _hull_block): a model's geoms table and
with_ground's floored copy pack the same blocks, and a run's contacts do not hull the meshes again (issue 33:
solo12's 17 hulls were hulled inside its first contact='hard' run)."""
import numpy as np
import pytest

import multibody as mb
from multibody.model import geometry

# an octahedron stretched along x, on a free body above a floor (MJCF mesh given by its vertices)
MJCF = """
<mujoco><asset><mesh name="m" vertex="0.2 0 0  -0.2 0 0  0 0.1 0  0 -0.1 0  0 0 0.1  0 0 -0.1"/></asset>
<worldbody><geom type="plane" size="1 1 .1"/>
<body pos="0 0 0.099"><freejoint/><geom type="mesh" mesh="m" mass="1"/></body></worldbody></mujoco>
"""

def test_block_is_the_packed_hull_and_kept():
    rng = np.random.default_rng(3)
    pts = rng.standard_normal((40, 3))
    block = geometry._hull_block(pts)
    np.testing.assert_array_equal(block, geometry.hull_packed(*geometry.hull_tables(pts)))
    assert not block.flags.writeable
    assert geometry._hull_block(pts.copy()) is block          # by value, not by the array's identity
    other = pts.copy()
    other[0, 0] += 1e-9                                       # another point set: another block
    assert geometry._hull_block(other) is not block

def test_degenerate_points_still_refused_and_not_kept():
    flat = np.c_[np.random.default_rng(0).standard_normal((10, 2)), np.zeros(10)]
    for _ in range(2):
        with pytest.raises(ValueError, match="plane"):
            geometry._hull_block(flat)

def test_floored_geoms_and_runs_do_not_hull_again(monkeypatch):
    model = mb.load_mjcf(MJCF)
    own = model.geoms.packed
    calls = []
    real = geometry.hull_tables
    monkeypatch.setattr(geometry, "hull_tables", lambda p: calls.append(1) or real(p))
    floored = model.geoms.with_ground(height=-0.5).packed      # a new table: its hull block reused
    np.testing.assert_array_equal(floored[2], own[2])
    tr = mb.simulate(model, None, None, 0.2, dt=0.002, contact="hard")
    assert calls == []
    # and the run is the hull's: the octahedron rests on its lower vertex, 0.1 above the floor
    assert tr.q[-1, 2] == pytest.approx(0.1, abs=2e-3)
