"""Robot scenes as MuJoCo runs them: dm_control's humanoid falling onto its floor under hard contact,
through ``mb.simulate`` and the command line, against MuJoCo's run of the same file (issue 33).

(The quadruped standing on its tendon actuators is in test_actuators.py.)
"""
from __future__ import annotations

import os
import warnings

import dm_control
import mujoco
import numpy as np
import pytest

import multibody as mb

HUMANOID = os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml")


def _mujoco_at(T):
    mj = mujoco.MjModel.from_xml_path(HUMANOID)
    d = mujoco.MjData(mj)
    while d.time < T - 1e-9:
        mujoco.mj_step(mj, d)
    return mj, d


def _check_lies_as_mujoco(model, q, forces, d):
    """Torso height within 1 cm of MuJoCo's, torso orientation within ~11° (|⟨quat, quat⟩| > 0.99), the
    floor carrying m g to 0.1 %."""
    assert abs(q[2] - d.qpos[2]) < 1e-2, (q[2], d.qpos[2])
    assert abs(np.dot(q[3:7], d.qpos[3:7])) > 0.99, (q[3:7], d.qpos[3:7])
    g = model.geoms
    floor = np.flatnonzero(g.body[g.pairs[:, 0]] < 0)
    slots = np.flatnonzero(np.isin(g.slot_pair, floor))
    weight = float(np.sum(model.mass)) * -model.gravity[2]
    assert forces[slots, 2].sum() == pytest.approx(weight, rel=1e-3)


def test_humanoid_falls_and_lies_as_mujocos_under_hard_contact(tmp_path):
    """From its qpos0 with no control, MuJoCo's humanoid falls backwards and lies with its torso at
    0.279 m, turned ≈ 175° about y (3 s at its 5 ms step); ours, under hard contact at 1 ms, does the
    same within 1 cm and a few degrees, never below the torso's radius; the command line too."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_mjcf(HUMANOID)
    T = 3.0
    _, d = _mujoco_at(T)
    tr = mb.simulate(model, None, None, T, contact="hard")
    assert tr.status == "finished" and tr.contact == "hard" and np.all(np.isfinite(tr.q))
    assert tr.q[:, 2].min() > 0.07                                  # never through the floor (torso radius)
    _check_lies_as_mujoco(model, tr.q[-1], tr.contact_forces[-1], d)
    from multibody import cli
    out = tmp_path / "t.npz"
    assert cli.main(["simulate", HUMANOID, "--t-final", str(T), "--contact", "hard", "--quiet", "--out", str(out)]) == 0
    saved = mb.Trajectory.load(str(out))
    np.testing.assert_array_equal(saved.q[-1], tr.q[-1])
