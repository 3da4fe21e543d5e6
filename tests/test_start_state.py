"""Where a run starts (issue 33, item 2): ``mb.simulate(model, None, None, t)`` and
``simulate_batch`` from the model's default state (MJCF qpos0) or a keyframe, and the CLI's
``--keyframe`` and ``--floating`` on info, simulate, animate and demo."""
from __future__ import annotations

import os
import warnings

import mujoco
import numpy as np
import pytest

import multibody as mb
from multibody import cli
from test_default_state import urdf
from test_urdf_robots import robots_dir

SUITE = os.path.join(os.path.dirname(os.path.dirname(mujoco.__file__)), "dm_control", "suite")
HUMANOID = os.path.join(SUITE, "humanoid.xml")
KEYED = ('<mujoco><worldbody><body><joint name="a" axis="0 1 0"/><geom type="capsule" size="0.1" fromto="0 0 0 0 0 -1"/>'
         '</body></worldbody><keyframe><key name="home" qpos="0.5" qvel="-1"/></keyframe></mujoco>')


def humanoid():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.MJCFWarning)
        return mb.load_mjcf(HUMANOID)


def test_simulate_without_a_start_begins_at_mujocos_qpos0():
    model = humanoid()
    mj = mujoco.MjModel.from_xml_path(HUMANOID)
    traj = mb.simulate(model, None, None, 0.01)
    np.testing.assert_array_equal(traj.q[0], mj.qpos0)
    assert traj.q[0, 2] == 1.5 and not np.any(traj.qd[0])
    batch = mb.simulate_batch(model, None, None, 0.01)
    assert batch.q.shape[0] == 1
    np.testing.assert_array_equal(batch.q[0], traj.q)           # the same run, bit for bit
    three = mb.simulate_batch(model, None, np.zeros((3, model.nv)), 0.005)
    assert three.q.shape[0] == 3 and np.all(three.q[:, 0, 2] == 1.5)


def test_a_keyframe_picks_the_start_and_an_explicit_q0_wins():
    model = mb.load_mjcf(KEYED)
    traj = mb.simulate(model, None, None, 0.01, keyframe="home")
    assert traj.q[0].tolist() == [0.5] and traj.qd[0].tolist() == [-1.0]
    assert mb.simulate(model, [0.2], None, 0.01, keyframe="home").q[0].tolist() == [0.2]
    assert mb.simulate(model, None, None, 0.01, keyframe=0).qd[0].tolist() == [-1.0]
    batch = mb.simulate_batch(model, None, None, 0.01, keyframe="home")
    np.testing.assert_array_equal(batch.q[0], traj.q)
    with pytest.raises(ValueError, match="no keyframe named 'hom'.*home"):
        mb.simulate(model, None, None, 0.01, keyframe="hom")


def test_cli_simulate_starts_from_the_default_state_or_a_keyframe(tmp_path, capsys):
    out = tmp_path / "h.npz"
    assert cli.main(["simulate", HUMANOID, "--t-final", "0.01", "--out", str(out), "--quiet"]) == 0
    assert np.load(out)["q"][0, 2] == 1.5
    path = tmp_path / "keyed.xml"
    path.write_text(KEYED)
    assert cli.main(["simulate", str(path), "--t-final", "0.01", "--keyframe", "home", "--out", str(out),
                     "--quiet"]) == 0
    assert np.load(out)["q"][0].tolist() == [0.5] and np.load(out)["qd"][0].tolist() == [-1.0]
    assert cli.main(["info", str(path), "--keyframe", "home"]) == 0
    text = capsys.readouterr().out
    assert "start (keyframe 'home'): q = [0.5], q̇ = [-1.0]" in text and "keyframes: home" in text
    assert cli.main(["simulate", str(path), "--keyframe", "nope", "--out", str(out)]) == 2
    assert "no keyframe named 'nope'" in capsys.readouterr().err


def test_cli_floating_loads_a_urdf_on_a_free_base(tmp_path, capsys):
    path = os.path.join(robots_dir(), "panda_description", "urdf", "panda.urdf")
    fixed, floating = urdf("panda_description/urdf/panda.urdf"), urdf("panda_description/urdf/panda.urdf", True)
    assert cli.main(["info", path, "--floating"]) == 0
    text = capsys.readouterr().out
    assert f"nq = {floating.nq}, nv = {floating.nv}" in text and floating.nq == fixed.nq + 7
    out = tmp_path / "p.npz"
    assert cli.main(["simulate", path, "--floating", "--t-final", "0.01", "--out", str(out), "--quiet"]) == 0
    q = np.load(out)["q"]
    assert q.shape[1] == floating.nq and q[-1, 2] < 0              # a free base falls
    assert cli.main(["animate", path, str(out), "--floating", "--out", str(tmp_path / "p.html")]) == 0
    assert cli.main(["info", HUMANOID, "--floating"]) == 2
    assert "expected a URDF" in capsys.readouterr().err
