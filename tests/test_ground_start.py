"""A robot file without a floor put on one (``ground=True`` / ``--ground``): the default start is
lifted onto the floor (``mb.lift_onto_ground``), and a run that blows up inside a resting stop's
release guard ends "diverged" with the time, not with an internal exception."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import multibody as mb
from test_urdf_robots import ROBOTS


def load(rel):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mb.load_urdf(os.path.join(ROBOTS, rel), floating=True, check_meshes=False)


ANYMAL = "anymal_b_simple_description/robots/anymal.urdf"
GO1 = "go1_description/urdf/go1.urdf"


@pytest.mark.parametrize("rel, height", [(ANYMAL, True), (GO1, True), ("solo_description/robots/solo12.urdf", -0.3)])
def test_lifted_start_touches_the_floor(rel, height):
    """The lift is the one that makes the deepest contact with the floor (the ordinary narrow phase,
    the floor at its own height) zero: 1 µm lower penetrates by 1 µm, 1 µm higher touches nothing."""
    model = load(rel)
    q = mb.lift_onto_ground(model, model.neutral(), height)
    assert np.array_equal(np.delete(q, 2), np.delete(model.neutral(), 2))     # only the base's z moves
    for dz, depth in ((-1e-6, 1e-6), (1e-6, None)):
        qs = q.copy()
        qs[2] += dz
        c = mb.contacts(model, qs, ground=height)
        if depth is None:
            assert len(c) == 0 or c.depth.max() <= 0.0
        else:
            assert c.depth.max() == pytest.approx(depth, abs=1e-10)
    above = q.copy()
    above[2] += 0.2
    assert np.array_equal(mb.lift_onto_ground(model, above, height), above)   # a start above the floor stays


def test_lift_of_a_ball_and_bad_input():
    b = mb.ModelBuilder()
    ball = b.add_body("ball", parent=None, joint="free", mass=1.0, inertia=np.eye(3) * 1e-3)
    b.add_geometry(mb.Geometry(ball, "box", (0.1, 0.2, 0.3), role="collision", name="box"))
    model = b.build()
    q = np.array([1.0, 2.0, -5.0, np.cos(0.25), np.sin(0.25), 0.0, 0.0])   # turned 0.5 rad about x
    lifted = mb.lift_onto_ground(model, q, 0.7)
    half = np.array([0.1, 0.2, 0.3]) / 2                      # (a Geometry box's size is its edge lengths)
    assert lifted[2] == pytest.approx(0.7 + half[1] * np.sin(0.5) + half[2] * np.cos(0.5), abs=1e-12)
    with pytest.raises(ValueError, match="q"):
        mb.lift_onto_ground(model, q[:5])
    with pytest.raises((TypeError, ValueError), match="ground"):
        mb.lift_onto_ground(model, q, "floor")


def test_default_start_on_an_added_ground_stands_on_it():
    """ANYmal from its neutral configuration on ground=True: the run starts on the floor and finishes
    lying on it (no control: it folds onto its stops), the floor carrying its weight; the batch
    starts from the same lifted state."""
    model = load(ANYMAL)
    tr = mb.simulate(model, None, None, 2.0, ground=True)
    assert tr.status == "finished"
    assert tr.q[0, 2] == pytest.approx(mb.lift_onto_ground(model, model.neutral())[2])
    assert tr.q[0, 2] > 0.5 and tr.q[-1, 2] > 0.05
    weight = np.sum(model.mass) * 9.81
    assert tr.contact_forces[-1, :, 2].sum() == pytest.approx(weight, rel=1e-3)
    batch = mb.simulate_batch(model, None, None, 0.05, ground=True)
    assert np.array_equal(batch.q[0, 0], tr.q[0])


def test_cli_simulates_a_urdf_on_its_ground(tmp_path):
    """The CLI's `simulate ROBOT.urdf --floating --ground` (go1: it used to end with the internal
    _NonFinite exception at t = 0.0001 s, the robot started inside the floor)."""
    out = tmp_path / "go1.npz"
    res = subprocess.run([sys.executable, "-m", "multibody", "simulate", os.path.join(ROBOTS, GO1), "--floating",
                          "--ground", "--t-final", "0.5", "--out", str(out), "--quiet"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "the static geoms (the floor) carry" in res.stdout
    q = np.load(out)["q"]
    assert q[0, 2] > 0.3 and np.all(np.isfinite(q))


def test_divergence_inside_a_release_guard_is_reported():
    """go1 started inside the floor (its neutral base at z = 0, given explicitly) blows up within the
    first step while a stop rests under RK4's explicit contact law: the run ends "diverged" with the
    time, as any divergence does.  (semi_implicit, the default on a floor, takes the law implicitly
    and pushes the robot out of the floor.)"""
    model = load(GO1)
    with pytest.warns(mb.SimulationWarning, match="non-finite"):
        tr = mb.simulate(model, model.neutral(), None, 0.01, ground=True, integrator="rk4")
    assert tr.status == "diverged" and "t = " in tr.message
    with pytest.raises(mb.SimulationError, match="non-finite"):
        mb.simulate(model, model.neutral(), None, 0.01, ground=True, on_divergence="raise", integrator="rk4")


def test_cli_info_shows_the_added_floor_and_the_lifted_start():
    model = load(ANYMAL)
    lifted = mb.lift_onto_ground(model, model.neutral(), 0.25)
    res = subprocess.run([sys.executable, "-m", "multibody", "info", os.path.join(ROBOTS, ANYMAL), "--floating",
                          "--ground", "0.25"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "a floor z = 0.25 added" in res.stdout
    start = next(line for line in res.stdout.splitlines() if "start (default state)" in line)
    assert f"{round(lifted[2], 6)}" in start


@pytest.mark.parametrize("contact", [None, "compliant", "hard"])
def test_a_floor_no_collision_geometry_can_meet_is_refused_naming_the_model(contact):
    """human.urdf has no <collision> element: on ground=True it fell through the floor in free fall
    (z = −g t²/2) and the run said "finished".  Now the floor is refused up front, for either law,
    naming the model and the ways to give it contact; contact="off" asks for no floor contact."""
    model = load("human_description/robots/human.urdf")
    with pytest.raises(ValueError, match=r"ground: no body of model 'human_36dof_ISB_model' has collision "
                                         r"geometry.*fall through.*mb\.GroundContact"):
        mb.simulate(model, None, None, 0.01, ground=True, contact=contact)
    assert mb.simulate(model, None, None, 0.01, ground=True, contact="off").status == "finished"
    points = mb.GroundContact(model, *mb.contact_parameters(float(model.mass.sum()), 1e-3, n_points=1),
                              points=[(model.body_names[0], np.zeros(3))])
    assert mb.simulate(model, None, None, 0.01, contact=points).status == "finished"
