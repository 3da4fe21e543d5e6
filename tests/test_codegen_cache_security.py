"""The codegen cache loads only libraries no other user could have put there (issue 17, item 6).

Each attack plants a library whose module init writes a marker file: if the marker appears, code
from the planted library ran in this process."""
import json
import os
import shutil
import subprocess
import sysconfig
import tempfile

import pytest
import sympy as sp

from multibody import codegen
from multibody.codegen import cache as K
from multibody.codegen import compiled

HAVE_CC = shutil.which("gcc") is not None or shutil.which("cc") is not None
pytestmark = pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
NOBODY = 65534
needs_root = pytest.mark.skipif(not IS_ROOT, reason="chown to another user needs root; the same check is "
                                                    "covered by the getuid test below")


def spec(scale):
    x, k = sp.symbols("x k")
    return codegen.make_spec({"out": sp.Matrix([[k * sp.sin(x) + scale]])}, {"x": [x], "k": [k]},
                             name="sec", defaults={"k": [2.0]})


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch, tmp_path):
    """Every compile below goes through the cache folder, as in a new process, and a fallback
    folder lands in this test's own system temp folder."""
    monkeypatch.setattr(compiled, "_LOADED", {})
    monkeypatch.setattr(K, "_PRIVATE", [], raising=False)
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(systmp))
    return systmp


def _record(folder):
    (name,) = [n for n in os.listdir(folder) if n.startswith("mbcg_") and n.endswith(".json")]
    path = os.path.join(folder, name)
    with open(path) as fh:
        return path, json.load(fh)


def _planted_library(modname, where, marker):
    """A shared library whose module ``modname`` writes ``marker`` when loaded."""
    src = os.path.join(os.path.dirname(where), "evil.c")
    with open(src, "w") as fh:
        fh.write(f'#include <Python.h>\n#include <stdio.h>\nPyMODINIT_FUNC PyInit_{modname}(void) {{\n'
                 f'  FILE *f = fopen("{marker}", "w"); if (f) {{ fputs("planted code ran", f); fclose(f); }}\n'
                 '  PyErr_SetString(PyExc_ImportError, "planted library"); return NULL; }\n')
    cc = shutil.which("gcc") or shutil.which("cc")
    subprocess.run([cc, "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", src, "-o", where], check=True)
    return where


def _poison(folder, scale, tmp_path, file_name, lib_path=None):
    """Build an entry in ``folder``, then point its record at a planted library."""
    codegen.compile(spec(scale), cache_dir=folder)
    compiled._LOADED.clear()
    rec_path, rec = _record(folder)
    marker = tmp_path / "planted-code-ran"
    lib = _planted_library(rec_path.rsplit("/", 1)[1][:-5], lib_path or os.path.join(folder, file_name), marker)
    rec.update(file=file_name, sha256=K.sha256_file(lib))
    with open(rec_path, "w") as fh:
        json.dump(rec, fh)
    return marker


def _check_rebuilt_elsewhere(f, folder, marker, scale):
    assert not marker.exists(), "the planted library was loaded"
    assert f.built
    assert abs(float(f([0.0])["out"].ravel()[0]) - scale) < 1e-15


# ---- the folder -------------------------------------------------------------------------------
@needs_root
def test_a_folder_owned_by_another_user_is_not_used(tmp_path):
    folder = str(tmp_path / "cache")
    marker = _poison(folder, 11.0, tmp_path, "evil.so")
    for root, dirs, files in os.walk(folder):
        for n in dirs + files + ["."]:
            os.chown(os.path.join(root, n), NOBODY, NOBODY)
    with pytest.warns(RuntimeWarning, match="owned by another user"):
        f = codegen.compile(spec(11.0), cache_dir=folder)
    _check_rebuilt_elsewhere(f, folder, marker, 11.0)
    assert not f.path.startswith(folder + os.sep)          # inside it (a sibling may share the prefix)


def test_a_folder_owned_by_another_uid_is_refused_without_root(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)
    with pytest.warns(RuntimeWarning, match=r"owned by another user \(uid %d" % real):
        assert K.cache_dir(folder) != str(folder)


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770])
def test_a_folder_others_can_write_is_not_used(tmp_path, mode):
    folder = str(tmp_path / "cache")
    marker = _poison(folder, 12.0, tmp_path, "evil.so")
    os.chmod(folder, mode)
    with pytest.warns(RuntimeWarning, match="writable by"):
        f = codegen.compile(spec(12.0), cache_dir=folder)
    _check_rebuilt_elsewhere(f, folder, marker, 12.0)
    assert not f.path.startswith(folder + os.sep)          # inside it (a sibling may share the prefix)


@pytest.mark.parametrize("planted_by", ["another user", "a world-writable folder"])
def test_the_temp_fallback_planted_by_another_user_is_not_used(tmp_path, monkeypatch, planted_by):
    """The issue's attack: the victim's cache folder is unwritable, so the cache falls back to
    <tmp>/multibody-codegen-<uid>, which another local user created and filled."""
    if planted_by == "another user" and not IS_ROOT:
        pytest.skip("chown to another user needs root")
    systmp = tmp_path / "systmp"
    planted = str(systmp / f"multibody-codegen-{os.getuid()}")
    marker = _poison(planted, 13.0, tmp_path, "evil.so")
    if planted_by == "another user":
        for n in os.listdir(planted) + ["."]:
            os.chown(os.path.join(planted, n), NOBODY, NOBODY)
    else:
        os.chmod(planted, 0o777)
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with pytest.warns(RuntimeWarning, match="not writable"):
        f = codegen.compile(spec(13.0), cache_dir=blocker / "cache")
    _check_rebuilt_elsewhere(f, planted, marker, 13.0)
    assert not f.path.startswith(planted + os.sep)         # inside it (mkdtemp siblings share the prefix)


def test_the_temp_fallback_that_is_ours_is_reused(tmp_path, monkeypatch):
    systmp = tmp_path / "systmp"
    with pytest.warns(RuntimeWarning, match="not writable"):
        first = K.cache_dir(tmp_path / "missing" / "\x00bad")
    assert first == str(systmp / f"multibody-codegen-{os.getuid()}")
    assert K.folder_problem(first) is None and oct(os.stat(first).st_mode & 0o777) == "0o700"


# ---- the records ------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["../x.so", "absolute path", "link out of the folder"])
def test_a_record_naming_a_file_outside_the_folder_is_ignored_and_rebuilt(tmp_path, how):
    folder = str(tmp_path / "cache")
    outside = str(tmp_path / "x.so")
    name = {"../x.so": "../x.so", "absolute path": outside, "link out of the folder": "link.so"}[how]
    marker = _poison(folder, 14.0, tmp_path, name, lib_path=outside)
    if how == "link out of the folder":
        os.symlink(outside, os.path.join(folder, "link.so"))
    with pytest.warns(RuntimeWarning, match="not a file in the cache folder"):
        f = codegen.compile(spec(14.0), cache_dir=folder)
    _check_rebuilt_elsewhere(f, folder, marker, 14.0)
    assert os.path.dirname(f.path) == folder
    compiled._LOADED.clear()
    again = codegen.compile(spec(14.0), cache_dir=folder)      # the rebuilt entry is used
    assert not again.built and again.path == f.path
