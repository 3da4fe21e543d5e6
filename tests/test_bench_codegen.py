"""bench.codegen's right-hand-side part, run as its command: ours and PyDy's agree before anything
is timed (the timings themselves are not asserted)."""
import os
import re
import subprocess
import sys

import pytest
from system_deps import needs_c_compiler

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


@pytest.mark.slow
@needs_c_compiler
def test_bench_rhs_agrees_with_pydy(tmp_path):
    env = dict(os.environ, MULTIBODY_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")])))
    res = subprocess.run([sys.executable, "-m", "multibody.bench.codegen", "--quick", "--only", "rhs", "--rhs-n", "3"],
                         capture_output=True, text=True, env=env, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    agree = re.search(r"agreement with PyDy: ([0-9.e+-]+)", res.stdout)
    assert agree is not None, res.stdout
    assert float(agree.group(1)) <= 1e-10
    assert re.search(r"one call: ours +[0-9.]+ µs", res.stdout)


@pytest.mark.slow
@needs_c_compiler
def test_bench_traced_talos_aba_runs_and_agrees(tmp_path):
    """Part 3 (the traced Talos ABA) runs from its command: it had raised NameError since the robots'
    folder moved to one finder, and only the right-hand-side part was run by a test."""
    env = dict(os.environ, MULTIBODY_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")])))
    res = subprocess.run([sys.executable, "-m", "multibody.bench.codegen", "--quick", "--only", "talos"],
                         capture_output=True, text=True, env=env, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    agree = [float(x) for x in re.findall(r"agreement with the core's ABA: ([0-9.e+-]+)", res.stdout)]
    assert len(agree) == 2 and max(agree) <= 1e-12, res.stdout
    assert re.search(r"one call: traced ABA +[0-9.]+ µs", res.stdout)
