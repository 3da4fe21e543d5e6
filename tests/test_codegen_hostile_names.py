"""Names from files a user did not write never become code in generated source (issue: trust).

A URDF's ``<robot name>`` (and any other free text: joint and parameter names) reached the
generated NumPy docstring, C comments and MATLAB comment lines unescaped, so a name that closed
the docstring or comment ran its own code on ``to_numpy``, on import of a compiled module, or in
MATLAB. Every printer now passes free text through ``codegen.printer.comment_text``.
"""
import ast
import os
import re
import subprocess
import sys

import pytest
import sympy as sp

from multibody import codegen
from multibody.codegen.printer import comment_text
from multibody.model.urdf import load_urdf

# Each name breaks out of one language's comment or docstring and would create MARKER.
PY_ESCAPE = '"""\nimport os; open(os.environ["MB_MARKER"], "w").write("pwned")\n"""'
C_ESCAPE = ('*/\n#include <stdio.h>\n__attribute__((constructor)) static void cg_pwn(void) '
            '{ FILE *f = fopen(getenv("MB_MARKER"), "w"); if (f) fclose(f); }\n/*')
M_ESCAPE = "\nfid = fopen(getenv('MB_MARKER'), 'w'); fclose(fid);\n%"
HOSTILE = [PY_ESCAPE, C_ESCAPE, M_ESCAPE, "a\\", "??/", "x\r\ny", "é */ /*", "%{"]

URDF = """<?xml version="1.0"?>
<robot name="{name}">
  <link name="base"/>
  <link name="arm"><inertial><mass value="1"/><origin xyz="0 0 0.5"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


def _c_code(text):
    """C source without its comments (what the compiler reads as code)."""
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def _matlab_code(text):
    return "\n".join(line.split("%", 1)[0] for line in text.splitlines())


def _python_statements(source):
    """Kinds of the top-level statements of a module (its docstring is one 'Expr')."""
    return [type(node).__name__ for node in ast.parse(source).body]


def _xml_attr(text):
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\n", "&#10;").replace("\r", "&#13;"))


@pytest.fixture
def marker(tmp_path, monkeypatch):
    path = tmp_path / "MARKER"
    monkeypatch.setenv("MB_MARKER", str(path))
    return path


def _hostile_model(tmp_path, name):
    path = tmp_path / "evil.urdf"
    path.write_text(URDF.format(name=_xml_attr(name)))
    model = load_urdf(str(path))
    assert model.name == name        # the loader keeps the name as written
    return model, path


@pytest.mark.parametrize("text", HOSTILE)
def test_comment_text_keeps_no_character_that_ends_a_comment(text):
    safe = comment_text(text)
    for bad in ('"', "'", "\\", "*", "/", "?", "%", "\n", "\r"):
        assert bad not in safe
    assert safe.isascii() and len(safe) <= 160


def test_comment_text_is_cut_and_keeps_ordinary_names():
    assert comment_text("panda_link7 (arm)") == "panda_link7 (arm)"
    assert len(comment_text("x" * 10_000)) == 160


@pytest.mark.parametrize("name", [PY_ESCAPE, C_ESCAPE, M_ESCAPE])
def test_numpy_source_of_a_hostile_model_runs_no_code(tmp_path, marker, name):
    model, _ = _hostile_model(tmp_path, name)
    f = codegen.to_numpy(model)          # exec's the generated module
    assert not marker.exists()
    assert _python_statements(f.source) == ["Expr", "Import", "FunctionDef"]
    assert f.source.count('"""') == 2    # the docstring opens and closes once


@pytest.mark.parametrize("name", [PY_ESCAPE, C_ESCAPE, M_ESCAPE])
def test_c_source_of_a_hostile_model_builds_and_runs_no_code(tmp_path, marker, name):
    model, _ = _hostile_model(tmp_path, name)
    files = codegen.to_c(model, tmp_path / "c")
    for role in ("c", "h", "main"):
        code = _c_code(open(files[role]).read())
        assert "cg_pwn" not in code and "MB_MARKER" not in code
    exe = tmp_path / "c" / "eom"
    subprocess.run(["gcc", "-std=c99", "-trigraphs", "-Wall", "-Werror", files["c"], files["main"],
                    "-o", str(exe), "-lm"], check=True, capture_output=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert not marker.exists()


@pytest.mark.parametrize("name", [PY_ESCAPE, C_ESCAPE, M_ESCAPE])
def test_matlab_source_of_a_hostile_model_has_no_extra_statement(tmp_path, name):
    model, _ = _hostile_model(tmp_path, name)
    files = codegen.to_matlab(model, tmp_path / "m")
    for path in files.values():
        code = _matlab_code(open(path).read())
        assert "MB_MARKER" not in code and "fopen" not in code


@pytest.mark.parametrize("name", [PY_ESCAPE, C_ESCAPE])
def test_compiled_module_of_a_hostile_model_runs_no_code(tmp_path, marker, name):
    model, _ = _hostile_model(tmp_path, name)
    f = codegen.compile(model, cache_dir=tmp_path / "cache")
    import numpy as np

    M = f(np.zeros(model.nq), np.zeros(model.nv))["M"]
    assert M.shape == (1, 1) and M[0, 0] > 0
    assert not marker.exists()
    out = codegen.export(model, tmp_path / "export", "evilmod")
    # importing the exported module in a fresh interpreter runs no constructor either
    probe = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('evilmod', sys.argv[1]); "
             "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)")
    subprocess.run([sys.executable, "-c", probe, out], check=True, env=dict(os.environ))
    assert not marker.exists()


def test_hostile_symbol_names_reach_no_source(tmp_path, marker):
    """A parameter symbol named to break out (a proNEu body list's own symbols) stays in comments."""
    evil = sp.Symbol(C_ESCAPE.replace("\n", " ") + PY_ESCAPE)
    x = sp.Symbol("x")
    spec = codegen.make_spec({"y": sp.Matrix([evil * sp.sin(x)])}, {"q": [x], "param": [evil]},
                             name="f", defaults={"param": [2.0]})
    files = codegen.to_c(spec, tmp_path / "c", prefix="f")
    main = _c_code(open(files["main"]).read())
    assert "cg_pwn" not in main and "MB_MARKER" not in main
    mfiles = codegen.to_matlab(spec, tmp_path / "m", prefix="f")
    for path in mfiles.values():
        assert "MB_MARKER" not in _matlab_code(open(path).read())
    f = codegen.to_numpy(spec)
    assert not marker.exists() and abs(f([0.5], [2.0])["y"][0] - 2 * float(sp.sin(0.5))) < 1e-15


def test_cli_codegen_of_a_hostile_urdf_runs_no_code(tmp_path, marker):
    _, path = _hostile_model(tmp_path, PY_ESCAPE)
    out = subprocess.run([sys.executable, "-m", "multibody", "codegen", str(path), "--lang", "numpy",
                          "--out", str(tmp_path / "gen")], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert not marker.exists()
    sources = [os.path.join(root, nm) for root, _, names in os.walk(tmp_path / "gen") for nm in names
               if nm.endswith(".py")]
    assert sources
    for path in sources:
        assert "Import" in _python_statements(open(path).read())
        assert _python_statements(open(path).read()).count("Expr") == 1
