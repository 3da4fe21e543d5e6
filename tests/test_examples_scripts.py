"""Every script in examples/ runs as a script (``python examples/NAME.py``) and prints its facts."""
import runpy
import subprocess
import sys

import pytest

import example_scripts

SCRIPTS = example_scripts.scripts()


def test_the_examples_folder_holds_the_scripts():
    names = {p.stem for p in SCRIPTS}
    assert {"example1_pd_planar2r", "example7_rolling_disc", "flapping_flyer", "clemens_joint_dynamics"} <= names
    for p in SCRIPTS:   # each defines the function it is named after and runs it under __main__
        mod = example_scripts.load(p)
        assert callable(getattr(mod, p.stem)), p.name
        assert 'if __name__ == "__main__":' in p.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_each_example_script_runs(path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(example_scripts.EXAMPLES))   # as `python examples/NAME.py` has it
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert out.startswith(path.stem + ":"), out


def test_a_script_runs_from_the_command_line():
    path = example_scripts.EXAMPLES / "example2_sampled_pd_planar2r.py"
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("example2_sampled_pd_planar2r:")
