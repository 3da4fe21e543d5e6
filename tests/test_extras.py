"""The core install runs the numeric API; an optional part names its extra (issue 36).

A fresh interpreter hides every optional package (an import hook refuses them, as a core-only
venv would), then uses the numeric functions and asks for each optional feature.  The extras in
pyproject.toml are checked against multibody._extras.EXTRAS, the one table."""
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from multibody._extras import EXTRAS

ROOT = Path(__file__).resolve().parents[1]

HIDE = """
import sys, importlib.abc
HIDDEN = {hidden!r}
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
"""


def run_core_only(body):
    hidden = sorted({m for modules, _ in EXTRAS.values() for m in modules})
    code = HIDE.format(hidden=hidden) + textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_numeric_api_runs_on_the_core_install():
    out = run_core_only("""
        import numpy as np
        import multibody as mb
        model = mb.models.auto_tree(6, bf=2)
        q, qd = np.full(model.nq, 0.2), np.full(model.nv, 0.1)
        tau = mb.rnea(model, q, qd, np.zeros(model.nv))
        assert np.allclose(mb.aba(model, q, qd, tau), 0, atol=1e-12)
        assert np.allclose(mb.crba(model, q), mb.crba(model, q).T)
        traj = mb.simulate(mb.models.double_pendulum(), np.array([0.3, 0.0]), np.zeros(2), 0.5)
        assert traj.q.shape[1] == 2
        from multibody import engine
        world = engine.World()
        world.add_geom(engine.Plane((0, 0, 1), 0.0))
        world.add_body(engine.Sphere(0.1), mass=1.0, position=(0, 0, 0.5))
        world.run(100)
        print("ok", sorted(m for m in sys.modules if m.split(".")[0] in HIDDEN))
    """)
    assert out.strip() == "ok []"


def test_each_optional_feature_names_its_extra():
    out = run_core_only("""
        import numpy as np
        import multibody as mb
        from multibody._extras import MissingExtraError
        traj = mb.simulate(mb.models.double_pendulum(), np.array([0.3, 0.0]), np.zeros(2), 0.1)
        cases = {
            "symbolic": lambda: __import__("multibody.symbolic").symbolic.derive(mb.models.double_pendulum()),
            "mjcf": lambda: mb.load_mjcf("<mujoco><worldbody/></mujoco>"),
            "view": lambda: mb.view.plot_states(traj),
            "sim": lambda: mb.simulate(mb.models.double_pendulum(), np.zeros(2), np.zeros(2), 0.1, integrator="rk45"),
        }
        for extra, call in cases.items():
            try:
                call()
            except MissingExtraError as e:
                assert f"pip install 'multibody[{extra}]'" in str(e), (extra, str(e))
                print(extra, "|", e)
            else:
                raise AssertionError(f"{extra}: ran without its extra")
    """)
    lines = out.strip().splitlines()
    assert [line.split(" | ")[0] for line in lines] == ["symbolic", "mjcf", "view", "sim"]
    assert all("which the core install leaves out" in line for line in lines)


def test_pyproject_extras_are_the_table():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    dist_names = {"sympy": "sympy", "symengine": "symengine", "mujoco": "mujoco", "scipy": "scipy",
                  "matplotlib": "matplotlib", "imageio_ffmpeg": "imageio-ffmpeg", "collada": "pycollada"}
    for extra, (modules, _what) in EXTRAS.items():
        listed = {req.split(">")[0].split("=")[0].split("[")[0] for req in extras[extra]}
        assert listed == {dist_names[m] for m in modules}, extra
    assert extras["all"] == [f"multibody[{','.join(EXTRAS)}]"]
    core = {req.split(">")[0] for req in project["dependencies"]}
    assert not core & set(dist_names.values())


def test_the_wheel_says_its_licence_and_the_licence_ships():
    """Issue 36's wheel metadata: the licence is declared as an SPDX expression with its file (which
    setuptools puts in the wheel), with authors, keywords and classifiers."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "BSD-3-Clause" and project["license-files"] == ["LICENSE"]   # SPDX (PEP 639)
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"][0] == "setuptools>=77"
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")
    assert project["authors"] and project["keywords"]


def test_robots_dir_is_one_function_that_finds_example_robot_data(tmp_path, monkeypatch):
    """example-robot-data's folder is found by multibody._extras.robots_dir alone (the benchmarks
    and the tests used to hold three copies that disagreed on the search order): it finds the
    installed package's URDFs, an explicit folder or $EXAMPLE_ROBOT_DATA_DIR comes first, and a
    missing folder is an error that names it — never a path that does not exist."""
    import os
    import sysconfig

    from multibody._extras import robots_dir

    found = robots_dir()
    for rel in ("ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
                "solo_description/robots/solo12.urdf", "talos_data/robots/talos_reduced.urdf"):
        assert os.path.isfile(os.path.join(found, rel)), rel
    monkeypatch.setenv("EXAMPLE_ROBOT_DATA_DIR", str(tmp_path))
    assert robots_dir() == str(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    assert robots_dir(other) == str(other)
    with pytest.raises(FileNotFoundError, match=r"robots_dir: '.*nowhere' is not a folder"):
        robots_dir(tmp_path / "nowhere")
    monkeypatch.setenv("EXAMPLE_ROBOT_DATA_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setattr(sys, "path", [])
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"purelib": str(tmp_path), "platlib": str(tmp_path)})
    monkeypatch.setitem(sys.modules, "example_robot_data", None)      # the optional module hidden too
    with pytest.raises(FileNotFoundError, match="not found .*pip install example-robot-data"):
        robots_dir()
    copies = [str(p.relative_to(ROOT)) for folder in ("src", "tests") for p in (ROOT / folder).rglob("*.py")
              if re.search(r"^\s*def robots_dir\(", p.read_text(encoding="utf-8"), re.M)]
    assert copies == ["src/multibody/_extras.py"]
