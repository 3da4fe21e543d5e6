"""The public API's docstring examples run, and the README's demo command does its job."""
import doctest
import importlib
import os
import pkgutil
import re
import subprocess
import sys

import pytest

import multibody

MODULES = sorted(m.name for m in pkgutil.walk_packages(multibody.__path__, "multibody.")
                 if not m.name.endswith(("__main__", ".bench", "bench_urdf")))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


@pytest.mark.slow
def test_demo_reproduces_the_reports_double_pendulum(tmp_path):
    folder = tmp_path / "out"
    out = subprocess.run([sys.executable, "-m", "multibody", "demo", "--out", str(folder)], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    # it writes an animation per model into the folder and says where
    for name in ("double_pendulum.html", "ra3link.html"):
        assert (folder / name).is_file() and str(folder / name) in out.stdout
    # the equations in the report's DP_EOM shape (simplified), not as expanded products of sines
    assert "M[0,1] = m2*(h2**2 + 6*l1*l2*cos(th2) + 3*l2**2 + w2**2)/12" in out.stdout
    assert "b[1] = Dth1**2*l1*l2*m2*sin(th2)/2" in out.stdout
    assert "sin(th1)*sin(th1 + th2)" not in out.stdout
    m = re.search(r"symbolic M agrees with CRBA at q0 = .* to ([0-9.e+-]+)", out.stdout)
    assert m and float(m.group(1)) < 1e-12
    m = re.search(r"\|H − D_q\| = ([0-9.e+-]+), \|g − g_q\| = ([0-9.e+-]+)", out.stdout)
    assert m, out.stdout
    assert float(m.group(1)) < 1e-12 and float(m.group(2)) < 1e-12
    m = re.search(r"FDcrb agrees to ([0-9.e+-]+)", out.stdout)
    assert m and float(m.group(1)) < 1e-10


def test_demo_quadruped_stands_on_a_floor(tmp_path):
    """issue 33: `multibody demo --model starleth` used to show the robot falling 490 m; now it stands on
    a floor under a PD stance (the floor carries its weight), and the page's camera follows its trunk."""
    out = subprocess.run([sys.executable, "-m", "multibody", "demo", "--model", "starleth", "--quick",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    m = re.search(r"moved ([\d.e+-]+) at most from the stance, the floor carries ([\d.e+-]+) N of its ([\d.e+-]+) N",
                  out.stdout)
    assert m, out.stdout[-2000:]
    assert float(m.group(1)) < 0.01
    assert float(m.group(2)) == pytest.approx(float(m.group(3)), rel=1e-3)
    traj = multibody.Trajectory.load(str(tmp_path / "starleth_trajectory.npz"))
    assert abs(traj.q[-1, 2] - traj.q[0, 2]) < 0.01                 # the trunk stays up, it does not fall
    page = (tmp_path / "starleth.html").read_text()
    assert '"body":5,' in page                                       # the camera follows main_body (body 5)


def test_demo_rejects_unknown_model():
    out = subprocess.run([sys.executable, "-m", "multibody", "demo", "--model", "nope", "--out", "never-made"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 2 and "unknown model 'nope'" in out.stderr
    assert not os.path.exists("never-made")


DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")


def test_the_docs_index_links_every_tutorial_and_the_references():
    index = open(os.path.join(DOCS, "README.md"), encoding="utf-8").read()
    tutorials = sorted(f for f in os.listdir(os.path.join(DOCS, "tutorials")) if f.endswith(".md"))
    missing = [f for f in tutorials if f"(tutorials/{f})" not in index]
    assert not missing, f"docs/README.md does not list {missing}"
    assert "(references.md)" in index and "(engine.md)" in index
    readme = open(os.path.join(os.path.dirname(DOCS), "README.md"), encoding="utf-8").read()
    assert "docs/references.md" in readme
    refs = open(os.path.join(DOCS, "references.md"), encoding="utf-8").read()
    for name in ("DP_EOM", "the report", "seed 003", "FDcrb", "RBDA", "proNEu", "TMT"):
        assert name in refs, name


def test_cli_help_says_model_files_may_be_mjcf():
    out = subprocess.run([sys.executable, "-m", "multibody", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "URDF or MJCF file" in out.stdout
