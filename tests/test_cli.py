"""The command line: every subcommand, --help everywhere, one-line errors with non-zero exit status."""
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import multibody as mb
from multibody import cli
from multibody.view import load_animation

COMMANDS = ["info", "derive", "simulate", "plot", "animate", "bench", "demo"]


def run(*argv):
    return cli.main([str(a) for a in argv])


@pytest.mark.parametrize("command", [None] + COMMANDS)
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as e:
        run(*([command] if command else []), "--help")
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "usage:" in out
    if command is None:
        for c in COMMANDS:
            assert c in out


def test_info_builtin_urdf_and_list(capsys):
    assert run("info", "double_pendulum") == 0
    out = capsys.readouterr().out
    assert "double_pendulum: 2 bodies, nq = 2, nv = 2, total mass 2 kg" in out and "th2" in out
    assert run("info", "planar:4") == 0
    assert "planar(4): 4 bodies" in capsys.readouterr().out
    assert run("info", "--list") == 0
    out = capsys.readouterr().out
    assert "gfx_example" in out and "ra3link" in out
    from test_urdf_robots import ROBOTS
    assert run("info", os.path.join(ROBOTS, "ur_description", "urdf", "ur5_robot.urdf")) == 0
    out = capsys.readouterr().out
    assert "6 bodies" in out and "mesh" in out


def test_unknown_model_suggests_close_names(capsys):
    assert run("info", "double_pendulm") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "unknown model 'double_pendulm'; did you mean 'double_pendulum'" in err
    assert run("info", "planar:x") == 2
    assert "must be an integer" in capsys.readouterr().err
    assert run("info", "vee:3") == 2
    assert "takes no size" in capsys.readouterr().err
    assert run("info", "missing.urdf") == 2
    assert "does not exist" in capsys.readouterr().err


def test_broken_urdf_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'>")
    assert run("info", bad) == 1
    err = capsys.readouterr().err
    assert err.startswith("multibody info: error: cannot load") and err.count("\n") == 1


def test_derive_prints_the_equations_and_latex(capsys):
    assert run("derive", "double_pendulum") == 0
    out = capsys.readouterr().out
    assert "M(q) q̈ + b(q, q̇) + g(q)" in out and "g*l2*m2*cos(th1 + th2)/2" in out   # DP_EOM g_q[1]
    assert run("derive", "planar:2", "--method", "lagrange", "--latex") == 0
    out = capsys.readouterr().out
    assert "\\cos" in out or "\\operatorname{cos}" in out
    with pytest.raises(SystemExit) as e:      # an unknown choice is a usage error: exit status 2
        run("derive", "double_pendulum", "--method", "nope")
    assert e.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_derive_seed_models_keep_their_symbols(capsys):
    assert run("derive", "ra3link", "--method", "pne") == 0
    out = capsys.readouterr().out
    assert "RA3Link" in out and "Th1_zz" in out and "(method pne)" in out
    assert run("derive", "flapping_flyer") == 0            # a Mechanism: TMT by default
    assert "(method tmt)" in capsys.readouterr().out


def test_animate_writes_a_page_and_a_gif(tmp_path, capsys):
    out = tmp_path / "a.html"
    assert run("animate", "gfx_example", "--out", out, "--title", "T", "--author", "me") == 0
    assert str(out) in capsys.readouterr().out
    anim = load_animation(out)
    assert anim.title == "T" and anim.author == "me" and anim.default
    gif = tmp_path / "a.gif"
    assert run("animate", "planar:2", "--out", gif, "--fps", "3", "--quiet") == 0
    assert gif.read_bytes()[:6] == b"GIF89a"
    assert run("animate", "planar:2", "--out", tmp_path / "nowhere" / "a.html") == 1
    assert "does not exist" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["a.gif", "a.html"]


def test_trajectory_files_that_do_not_load_or_fit(tmp_path, capsys):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 truncated")
    assert run("plot", bad, "--out", tmp_path / "plots") == 1
    err = capsys.readouterr().err
    assert err.startswith("multibody plot: error: cannot read trajectory") and err.count("\n") == 1
    assert run("animate", "double_pendulum", tmp_path / "missing.npz", "--out", tmp_path / "x.html") == 1
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_simulate_plot_animate_pipeline(tmp_path, capsys):
    traj = tmp_path / "dp.npz"
    assert run("simulate", "double_pendulum", "--t-final", "1", "--dt", "1e-3", "--out", traj, "--quiet") == 0
    out = capsys.readouterr().out
    assert "energy drift max |E(t) − E(0)| =" in out
    drift = float(out.split("energy drift max |E(t) − E(0)| = ")[1].split()[0])
    assert drift < 1e-6          # RK4 at 1 ms on the report's pendulum
    assert run("plot", traj, "--out", tmp_path / "plots", "--model", "double_pendulum") == 0
    assert sorted(os.listdir(tmp_path / "plots")) == ["energy.png", "paths.png", "phase.png", "states.png"]
    assert run("animate", "double_pendulum", traj, "--out", tmp_path / "dp.html") == 0
    anim = load_animation(tmp_path / "dp.html")
    assert not anim.default and anim.t[-1] == pytest.approx(1.0) and "energy" in anim.plots
    # a trajectory of another model is refused before anything is written
    assert run("animate", "planar:3", traj, "--out", tmp_path / "p3.html") == 1
    assert "does not fit model" in capsys.readouterr().err
    assert not (tmp_path / "p3.html").exists()
    assert run("simulate", "double_pendulum", "--q0", "1,2,3", "--out", traj) == 2
    assert "--q0: expected 2 finite numbers" in capsys.readouterr().err


def test_codegen_hook_registers_a_subcommand(monkeypatch, capsys):
    mod = types.ModuleType("multibody.codegen.cli")

    def add_parser(sub):
        p = sub.add_parser("codegen", help="generated code")
        p.add_argument("model")

    mod.add_parser = add_parser
    mod.run = lambda args: print(f"codegen for {args.model}") or 0
    monkeypatch.setitem(sys.modules, "multibody.codegen.cli", mod)
    assert run("codegen", "double_pendulum") == 0
    assert "codegen for double_pendulum" in capsys.readouterr().out


def test_bench_forwards_its_own_options(capsys):
    with pytest.raises(SystemExit) as e:
        run("bench", "--help")
    assert e.value.code == 0
    assert "--batch" in capsys.readouterr().out


@pytest.mark.slow
def test_debug_shows_the_traceback():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(os.path.dirname(__file__), "..", "src"),
                                                       os.environ.get("PYTHONPATH", "")]))
    quiet = subprocess.run([sys.executable, "-m", "multibody", "info", "nope"], capture_output=True, text=True,
                           env=env, timeout=300)
    assert quiet.returncode == 2 and "Traceback" not in quiet.stderr and quiet.stderr.count("\n") == 1
    loud = subprocess.run([sys.executable, "-m", "multibody", "--debug", "info", "nope"], capture_output=True,
                          text=True, env=env, timeout=300)
    assert loud.returncode != 0 and "Traceback" in loud.stderr and "CLIError" in loud.stderr


def test_ra3link_model_matches_the_pronue_equations():
    """The CLI's numeric RA3Link equals proNEu's symbolic one at the manual's values (CRBA vs MpNE, g)."""
    from multibody.symbolic import derive
    symbolic = mb.models.ra3link(symbolic=True)
    eom = derive(symbolic, "pne")
    model = cli.load_model("ra3link")
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = rng.normal(size=3)
        values = {**mb.models.parameters(symbolic), **dict(zip(list(eom.q), q))}
        M = np.array(eom.M.subs(values).evalf(), dtype=float)
        g = np.array(eom.g.subs(values).evalf(), dtype=float).ravel()
        assert np.abs(M - mb.crba(model, q)).max() < 1e-12
        assert np.abs(g - mb.rnea(model, q, np.zeros(3), np.zeros(3))).max() < 1e-12
