"""The command line as a new user meets it (issue: trust and first contact, round two): every bad
argument is one line naming it, checked before any work; warnings are one line; a closed standard
output is no traceback."""
import subprocess
import sys

import pytest


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "multibody", *args], capture_output=True, text=True, timeout=120,
                          **kw)


@pytest.mark.parametrize("args, says", [
    (["simulate", "double_pendulum", "--t-final", "inf", "--out", "x.npz"], "argument --t-final: expected a finite"),
    (["simulate", "double_pendulum", "--t-final", "nan", "--out", "x.npz"], "argument --t-final: expected a finite"),
    (["simulate", "double_pendulum", "--record-every", str(2**70), "--out", "x.npz"],
     "argument --record-every: expected a whole number from 1 to"),
    (["simulate", "double_pendulum", "--dt", "1e-320", "--out", "x.npz"], "--dt: 5 s in steps of"),
    (["demo", "--t-final", "-3"], "multibody demo: error: --t-final: expected a finite number of seconds ≥ 0"),
    (["info", "planar:1000000"], "the size after ':' must be between 1 and 10,000 bodies"),
    (["info", "auto_tree:99999999999999999999"], "the size after ':' must be between 1 and 10,000 bodies"),
])
def test_bad_arguments_are_one_line_naming_them(tmp_path, args, says):
    out = run(*args, cwd=tmp_path)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert says in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert not list(tmp_path.iterdir())         # refused before anything was derived or written


def test_a_warning_is_one_line_naming_the_command(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text("""<robot name="arm"><link name="base"/>
<link name="l1"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
  <visual><geometry><mesh filename="missing.stl"/></geometry></visual></link>
<joint name="j1" type="continuous"><parent link="base"/><child link="l1"/></joint></robot>""")
    out = run("info", str(urdf))
    assert out.returncode == 0, out.stderr
    warnings = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert warnings and all(ln.startswith("multibody info: warning: ") for ln in warnings), out.stderr
    assert "warnings.warn" not in out.stderr


def test_a_closed_standard_output_is_no_traceback():
    out = subprocess.run(f"{sys.executable} -m multibody info double_pendulum >&-", shell=True, capture_output=True,
                         text=True, timeout=120)
    assert "Traceback" not in out.stderr, out.stderr


def test_the_version_is_one_line_and_the_package_s():
    import multibody
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"multibody {multibody.__version__}"
    assert multibody.__version__ not in ("", "0+source") and multibody.__version__.count(".") >= 2
