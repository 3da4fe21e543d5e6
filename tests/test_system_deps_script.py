"""tools/system-deps as a person sees it: it says what it installs, passes DEBIAN_FRONTEND through
sudo and never leaves apt waiting on a prompt (issue: trust, round two).

The script runs against stand-ins for `id`, `sudo`, `apt-get`, `ldconfig` on PATH that record how
they were called; nothing is installed.
"""
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

BASH = shutil.which("bash")
SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "system-deps"


def _stub(folder, name, body):
    path = folder / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fake_system(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    calls = tmp_path / "calls"
    _stub(bin_, "id", 'echo 1000\n')                                   # not root
    _stub(bin_, "sudo", '[ "$1" = -n ] && shift; [ "$1" = true ] && exit 0\n'
                        'env -i PATH="$PATH" CALLS="$CALLS" "$@"\n')  # sudo drops the environment
    _stub(bin_, "ldconfig", "exit 0\n")
    _stub(bin_, "apt-get", 'echo "apt-get $* DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-unset} '
                           'stdin=$([ -t 0 ] && echo tty || (read -t 0 && echo data || echo none))" >> "$CALLS"\n'
                           'case "$*" in *install*) echo "Setting up chromium (1.0) ..."; '
                           'echo "Setting up octave (9.2) ...";; esac\n')
    for tool in ("env", "grep", "sed", "tail", "cat"):   # only these real programs: chromium and octave stay missing
        (bin_ / tool).symlink_to(shutil.which(tool))
    env = {"PATH": str(bin_), "CALLS": str(calls), "SYSTEM_DEPS_LOG": str(tmp_path / "apt.log"),
           "HOME": str(tmp_path)}
    return env, calls


def test_apt_gets_debian_frontend_through_sudo_and_no_prompt(fake_system):
    env, calls = fake_system
    out = subprocess.run([BASH, str(SCRIPT)], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    lines = calls.read_text().splitlines()
    assert any(" update" in ln for ln in lines) and any(" install " in ln for ln in lines)
    for ln in lines:
        assert "DEBIAN_FRONTEND=noninteractive" in ln, ln
        assert "stdin=tty" not in ln
    install = next(ln for ln in lines if " install " in ln)
    assert "-y" in install and "--force-confold" in install
    # it says what it installs, in a line a person reads
    assert "installing Debian packages: chromium octave liboctave-dev libode-dev g++ nodejs" in out.stdout
    assert "installed chromium octave liboctave-dev libode-dev g++ nodejs (2 packages set up)" in out.stdout


def test_a_failed_install_shows_the_end_of_apt_s_log(fake_system, tmp_path):
    env, calls = fake_system
    _stub(tmp_path / "bin", "apt-get", 'case "$*" in *install*) echo "E: Unable to locate package octave"; exit 100;; esac\n')
    out = subprocess.run([BASH, str(SCRIPT)], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         timeout=60)
    assert out.returncode == 0
    assert "failed" in out.stdout and "E: Unable to locate package octave" in out.stdout
