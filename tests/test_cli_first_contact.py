"""The command line as a new user first meets it: one table of models for every subcommand,
negative numbers, checked output names, whole names in `info`, a closed pipe, one-line errors with
exit status 2 for usage and 1 for failure, and `demo` on any model writing only into --out."""
import os
import subprocess
import sys

import numpy as np
import pytest

from multibody import cli
from multibody.models.catalogue import catalogue
from multibody.simulation import Trajectory

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def run(*argv):
    """The exit status of `multibody argv…` (argparse's usage errors exit through SystemExit)."""
    try:
        return cli.main([str(a) for a in argv])
    except SystemExit as e:
        return e.code


def run_process(*argv, **kw):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "multibody", *map(str, argv)], env=env, timeout=300, **kw)


TWO_LINK_URDF = """<robot name="two_link">
  <link name="base"/>
  <link name="upper_arm_with_a_long_name"><inertial><mass value="1"/><origin xyz="0 0 -0.5"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="fore_arm"><inertial><mass value="1"/><origin xyz="0 0 -0.5"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="robot_finger_joint_number_1" type="revolute"><parent link="base"/>
    <child link="upper_arm_with_a_long_name"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
  <joint name="robot_finger_joint_number_2" type="revolute"><parent link="upper_arm_with_a_long_name"/>
    <child link="fore_arm"/><origin xyz="0 0 -1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
</robot>
"""


@pytest.fixture
def urdf(tmp_path):
    path = tmp_path / "robots" / "two_link.urdf"
    path.parent.mkdir()
    path.write_text(TWO_LINK_URDF)
    return path


def test_negative_numbers_are_values(tmp_path):
    out = tmp_path / "t.npz"
    assert run("simulate", "double_pendulum", "--q0", "-0.5,0.3", "--qd0", "-.25,-1e-1", "--t-final", "0.01",
               "--quiet", "--out", out) == 0
    traj = Trajectory.load(out)
    np.testing.assert_array_equal(traj.q[0], [-0.5, 0.3])
    np.testing.assert_array_equal(traj.qd[0], [-0.25, -0.1])


@pytest.mark.parametrize("argv", [("animate", "double_pendulum", "--out", "{tmp}/anim.pdf"),
                                  ("simulate", "double_pendulum", "--t-final", "0.01", "--out", "{tmp}/t.txt")])
def test_output_names_are_checked_before_anything_is_written(tmp_path, capsys, argv):
    assert run(*(a.format(tmp=tmp_path) for a in argv)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out: expected" in err
    assert os.listdir(tmp_path) == []


def test_info_prints_whole_names(urdf, capsys):
    assert run("info", urdf) == 0
    out = capsys.readouterr().out
    for name in ("robot_finger_joint_number_1", "robot_finger_joint_number_2", "upper_arm_with_a_long_name"):
        assert name in out


def test_info_shows_each_joints_limits_damping_and_friction(tmp_path, capsys):
    """Not only "limits on 2 variables": the values simulate enforces, one row per joint variable."""
    path = tmp_path / "two_link.urdf"
    path.write_text(TWO_LINK_URDF.replace('<axis xyz="0 1 0"/>\n    <limit lower="-3" upper="3" effort="10" velocity="5"/>'
                                          '</joint>\n</robot>',
                                          '<axis xyz="0 1 0"/>\n    <limit lower="-0.5" upper="1.25" effort="10" '
                                          'velocity="5"/><dynamics damping="0.7" friction="0.2"/></joint>\n</robot>'))
    assert run("info", path) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["variable", "limits"])
    assert lines[head].split() == ["variable", "limits", "damping", "friction", "velocity", "effort"]
    assert lines[head + 1].split() == ["robot_finger_joint_number_1", "[-3,", "3]", "—", "—", "5", "10"]
    assert lines[head + 2].split() == ["robot_finger_joint_number_2", "[-0.5,", "1.25]", "0.7", "0.2", "5", "10"]
    assert "does not clamp" in lines[head + 3]


def test_a_closed_pipe_ends_quietly():
    """`multibody derive starleth | head -1`: the reader leaves early; no BrokenPipeError, no traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "multibody", "derive", "starleth"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])))
    assert proc.stdout.readline().startswith(b"# StarlETH")
    proc.stdout.close()          # as `head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err


def test_one_model_table_for_every_subcommand(tmp_path, capsys):
    assert run("info", "--list") == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert listed == set(catalogue())
    assert {"double_elbow", "rolling_disc"} <= listed
    assert run("codegen", "nosuch", "--out", tmp_path, "--no-progress") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("multibody codegen: error: unknown model 'nosuch'")
    for name in catalogue():
        assert name in err
    for helper in ("parameters", "seed_info", "support_jacobian"):
        assert helper not in err
    for name in ("double_elbow", "rolling_disc"):
        assert run("info", name) == 0
    assert run("codegen", "double_elbow", "--lang", "numpy", "--out", tmp_path, "--no-progress") == 0
    assert (tmp_path / "eom.py").exists()


def test_errors_are_one_line_with_usage_2_and_failure_1(tmp_path, capsys):
    assert run("derive", "double_pendulum", "--method", "nosuch") == 2      # a usage error
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("multibody derive: error: ")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file")
    assert run("plot", bad, "--out", tmp_path / "figs") == 1               # a failure
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("multibody plot: error: ")
    assert "plot: plot:" not in err and "ValueError:" not in err
    assert run("codegen", "planar:2", "--lang", "numpy", "--out", bad, "--no-progress") == 1  # --out is a file
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("multibody codegen: error: ")


@pytest.mark.slow
def test_demo_runs_on_any_model_and_writes_only_into_out(tmp_path, urdf):
    for spec, stem in (("planar:3", "planar_3"), ("gfx_example", "gfx_example"), (urdf, "two_link")):
        out = tmp_path / stem
        result = run_process("demo", "--model", spec, "--out", out, "--quick", capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-2000:]
        written = sorted(os.listdir(out))
        assert f"{stem}_trajectory.npz" in written and f"{stem}.html" in written, written
    assert sorted(os.listdir(urdf.parent)) == ["two_link.urdf"]    # nothing next to the robot file


def test_a_compiled_module_imports_under_its_prefix(tmp_path):
    """`multibody codegen double_pendulum --lang compiled --prefix dp --out cg`, then `import dp` in
    cg: the module's init function carries its name (the cached library's carries a hash)."""
    assert run("codegen", "double_pendulum", "--lang", "compiled", "--prefix", "dp", "--out", tmp_path,
               "--no-progress") == 0
    script = ("import numpy as np, dp, multibody as mb; out = dp.one(np.array([0.3, -0.2]), np.zeros(2), np.zeros(2), "
              "np.zeros(0)); print(np.abs(out['M'] - mb.crba(mb.models.double_pendulum(), [0.3, -0.2])).max())")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), SRC, os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert float(result.stdout) < 1e-12
    assert run("codegen", "double_pendulum", "--lang", "compiled", "--prefix", "not-a-name", "--out", tmp_path,
               "--no-progress") == 1


def test_a_run_too_long_to_save_is_refused_before_it_starts(tmp_path, capsys, monkeypatch):
    """`simulate --t-final 100000` (10⁸ samples, 8 GiB) once ran for minutes into a file no other command
    could read; now it is refused at once with the --record-every that fits, and that one works."""
    import multibody as mb
    from multibody._io import MAX_NPZ_BYTES

    def not_called(*a, **k):
        raise AssertionError("simulate ran")
    monkeypatch.setattr(mb, "simulate", not_called)
    assert run("simulate", "double_pendulum", "--t-final", "100000", "--quiet", "--out", tmp_path / "t.npz") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "100,000,002 samples" in err and "GiB" in err
    k = int(err.split("--record-every ")[1].split()[0])
    model = mb.models.double_pendulum()
    assert cli.trajectory_file_bytes(model, 100000, 1e-3, k)[1] <= MAX_NPZ_BYTES
    assert cli.trajectory_file_bytes(model, 100000, 1e-3, k - 1)[1] > MAX_NPZ_BYTES
    assert os.listdir(tmp_path) == []
    monkeypatch.undo()
    assert run("simulate", "double_pendulum", "--t-final", "2", "--record-every", "0", "--out", tmp_path / "t.npz") == 2
    assert "--record-every: expected a whole number" in capsys.readouterr().err


def test_record_every_thins_the_saved_trajectory(tmp_path):
    full, thin = tmp_path / "full.npz", tmp_path / "thin.npz"
    assert run("simulate", "double_pendulum", "--t-final", "0.5", "--quiet", "--out", full) == 0
    assert run("simulate", "double_pendulum", "--t-final", "0.5", "--record-every", "10", "--quiet", "--out", thin) == 0
    a, b = Trajectory.load(full), Trajectory.load(thin)
    assert len(a.t) == 501 and len(b.t) == 51
    np.testing.assert_array_equal(b.q, a.q[::10])
    np.testing.assert_array_equal(b.t, a.t[::10])


def test_dash_o_is_out_on_every_command_that_writes(tmp_path):
    """-o names the output as --out does (what a user types first): simulate's file, plot's folder, animate's page."""
    traj, figures, page = tmp_path / "t.npz", tmp_path / "figs", tmp_path / "a.html"
    assert run("simulate", "double_pendulum", "--t-final", "0.05", "--quiet", "-o", traj) == 0
    assert run("plot", str(traj), "-o", figures) == 0
    assert run("animate", "double_pendulum", str(traj), "-o", page, "--quiet") == 0
    assert len(Trajectory.load(traj).t) == 51 and any(figures.iterdir()) and page.stat().st_size > 0


def test_an_mjcf_file_steps_at_its_own_timestep_by_default(tmp_path, capsys):
    """MuJoCo steps a file at its <option timestep> (0.002 s where it sets none); so do simulate,
    simulate_batch and `multibody simulate` when no dt is given (dm_control's humanoid: 5 ms, not 1 ms
    with five times the steps); an explicit dt still wins; a URDF or a built model steps 1 ms."""
    import dataclasses
    import mujoco

    import multibody as mb
    body = '<worldbody><body pos="0 0 1"><joint axis="0 1 0" damping="0.1"/><geom type="capsule" ' \
           'fromto="0 0 0 0 0 -0.5" size="0.05" mass="1"/></body></worldbody>'
    own = mb.load_mjcf(f'<mujoco><option timestep="0.005"/>{body}</mujoco>')
    plain = mb.load_mjcf(f"<mujoco>{body}</mujoco>")
    assert own.timestep == 0.005 and plain.timestep == mujoco.MjModel.from_xml_string(f"<mujoco>{body}</mujoco>").opt.timestep
    assert plain.timestep == 0.002 and mb.models.planar(2).timestep is None
    q0 = [0.4]
    traj = mb.simulate(own, q0, [0.0], 0.1)
    assert traj.t[1] == 0.005 and len(traj) == 21
    explicit = mb.simulate(own, q0, [0.0], 0.1, dt=0.005)
    assert np.array_equal(traj.q, explicit.q) and np.array_equal(traj.t, explicit.t)
    assert mb.simulate(own, q0, [0.0], 0.1, dt=1e-3).t[1] == 1e-3                # a dt given wins
    assert mb.simulate(mb.models.planar(1), [0.4], [0.0], 0.01).t[1] == 1e-3     # no file: 1 ms
    batch = mb.simulate_batch(own, np.array([q0, [0.1]]), np.zeros((2, 1)), 0.1)
    assert np.array_equal(batch.t, traj.t) and np.array_equal(batch.q[0], traj.q)
    with pytest.raises(ValueError, match=r"^timestep: expected None or a positive finite step in seconds, got -1"):
        dataclasses.replace(own, timestep=-1.0)
    path = tmp_path / "arm.xml"
    path.write_text(f'<mujoco><option timestep="0.005"/>{body}</mujoco>')
    out = tmp_path / "arm.npz"
    assert run("simulate", path, "--t-final", "0.1", "--out", out, "--quiet") == 0
    assert "dt = 0.005" in capsys.readouterr().out
    assert Trajectory.load(out).t[1] == 0.005
    assert run("simulate", path, "--t-final", "0.1", "--dt", "0.001", "--out", out, "--quiet") == 0
    assert "dt = 0.001" in capsys.readouterr().out
