"""The public API's docstring examples run, and the README's demo command does its job."""
import doctest
import importlib
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


def test_demo_reproduces_the_reports_double_pendulum():
    out = subprocess.run([sys.executable, "-m", "multibody", "demo"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    m = re.search(r"\|H − D_q\| = ([0-9.e+-]+), \|g − g_q\| = ([0-9.e+-]+)", out.stdout)
    assert m, out.stdout
    assert float(m.group(1)) < 1e-12 and float(m.group(2)) < 1e-12
    m = re.search(r"FDcrb agrees to ([0-9.e+-]+)", out.stdout)
    assert m and float(m.group(1)) < 1e-10


def test_demo_rejects_unknown_model():
    out = subprocess.run([sys.executable, "-m", "multibody", "demo", "--model", "nope"], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 2 and "unknown model 'nope'" in out.stderr
