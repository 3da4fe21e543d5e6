"""``codegen.to_mex``: proNEu's compiled MEX functions, built with GNU Octave's ``mkoctfile --mex``
(Debian's ``liboctave-dev``) and run in Octave.

The MEX functions' M, b, g are compared with the numeric core (CRBA; RNEA for b and g) at the
seed's parameter values, and all four outputs with the NumPy backend at other parameter values,
to 1e-12 relative to the largest entry of each array. The gateway's checks of what MATLAB hands
over are driven with wrong inputs.
"""
from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

from system_deps import require_program

MKOCTFILE = require_program(["mkoctfile"], "liboctave-dev", "the MEX code-generation tests")
OCTAVE = require_program(["octave-cli", "octave"], "octave", "the MEX code-generation tests")

import multibody as mb  # noqa: E402
from multibody import codegen  # noqa: E402

RTOL = 1e-12


def _mat(x) -> str:
    """A MATLAB column vector literal that reads back to the same doubles."""
    return "[" + "; ".join(repr(float(v)) for v in np.ravel(x)) + "]"


def build(files, folder):
    """``mkoctfile --mex`` every generated C file, warnings as errors."""
    env = dict(os.environ, CFLAGS="-O2 -Wall -Wextra -Werror")
    for path in files.values():
        if path.endswith(".c"):
            res = subprocess.run([MKOCTFILE, "--mex", os.path.basename(path)], cwd=folder, capture_output=True,
                                 text=True, timeout=300, env=env)
            assert res.returncode == 0, res.stdout + res.stderr


def run_octave(folder, lines) -> str:
    script = os.path.join(folder, "cg_check.m")
    with open(script, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    res = subprocess.run([OCTAVE, "-q", "-f", "--no-history", "cg_check.m"], cwd=folder, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def _printed(call: str) -> str:
    return f"fprintf('%.17g\\n', {call});"


def _check(got, want, what):
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    err = float(np.abs(got - want).max()) if want.size else 0.0
    assert err <= RTOL * scale, f"{what}: the MEX function differs by {err:.3g} (scale {scale:.3g})"


def core_terms(model, q, qd):
    """M, b, g from the numeric core: CRBA and RNEA (b = RNEA(q, q̇, 0) − g, g = RNEA(q, 0, 0))."""
    z = np.zeros(model.nv)
    g = mb.rnea(model, q, z, z)
    return mb.crba(model, q), mb.rnea(model, q, qd, z) - g, g


SEEDS = ["ra3link", "ra3link_prismatic", "double_pendulum"]


@pytest.mark.parametrize("name", SEEDS)
def test_mex_functions_equal_the_numeric_core_and_the_numpy_backend(name, tmp_path):
    symbolic = getattr(mb.models, name)(symbolic=True)
    numeric = getattr(mb.models, name)()                  # the seed's parameter values baked in
    spec = codegen.as_spec(symbolic)
    files = codegen.to_mex(spec, tmp_path, prefix="eom")
    assert files.args == {"M": ["q", "param"], "b": ["q", "dq", "param"], "g": ["q", "param"],
                          "f": ["q", "tau", "param"]}
    build(files, tmp_path)
    numpy_fn = codegen.to_numpy(spec)
    n, m = spec.input_size("q"), spec.input_size("tau")
    default = spec.defaults["param"]
    rng = np.random.default_rng(7)
    states, lines = [], []
    for k in range(6):
        q, dq, tau = rng.uniform(-np.pi, np.pi, n), rng.normal(size=n), rng.normal(size=m)
        param = default if k < 3 else default * rng.uniform(0.5, 1.5, default.shape)
        states.append((q, dq, tau, param))
        p = "eom_paramDef()" if k == 0 else _mat(param)
        lines += [f"q = {_mat(q)}; dq = {_mat(dq)}; tau = {_mat(tau)}; param = {p};",
                  _printed("eom_Mfunc_mex(q, param)"), _printed("eom_bfunc_mex(q, dq, param)"),
                  _printed("eom_gfunc_mex(q, param)"), _printed("eom_ffunc_mex(q, tau, param)")]
    out = np.array(run_octave(tmp_path, lines).split(), dtype=float)
    pos, compared_with_core = 0, 0
    for k, (q, dq, tau, param) in enumerate(states):
        got = {}
        for key, size in (("M", n * n), ("b", n), ("g", n), ("f", n)):
            got[key] = out[pos:pos + size]
            pos += size
        got["M"] = got["M"].reshape(n, n).T                # MATLAB's x(:) is column-major
        want = numpy_fn(q, dq, tau, param)
        for key in ("M", "b", "g", "f"):
            _check(got[key], np.asarray(want[key]), f"{name} state {k} {key} (NumPy backend)")
        if k < 3:                                          # the seed's values: the numeric core too
            M, b, g = core_terms(numeric, q, dq)
            _check(got["M"], M, f"{name} state {k} M (CRBA)")
            _check(got["b"], b, f"{name} state {k} b (RNEA)")
            _check(got["g"], g, f"{name} state {k} g (RNEA)")
            compared_with_core += 1
    assert pos == out.size and compared_with_core == 3


def test_the_gateway_refuses_what_it_cannot_evaluate(tmp_path):
    """Wrong argument counts, sizes, types and non-finite entries: a MATLAB error naming the input."""
    files = codegen.to_mex(mb.models.double_pendulum(symbolic=True), tmp_path, prefix="dp")
    build({"M": files["M"]}, tmp_path)
    p = _mat(codegen.as_spec(mb.models.double_pendulum(symbolic=True)).defaults["param"])
    cases = {
        "dp_Mfunc_mex([0.1; 0.2])": "expected 2 input argument(s) (q, param), got 1",
        f"dp_Mfunc_mex([0.1; 0.2; 0.3], {p})": "input q: expected 2 entries, got 3",
        f"dp_Mfunc_mex([0.1; 0.2], {p}(1:end-1))": "input param: expected",
        f"dp_Mfunc_mex([0.1; 0.2] + 1i, {p})": "input q: expected a real, full double array",
        f"dp_Mfunc_mex(single([0.1; 0.2]), {p})": "input q: expected a real, full double array",
        f"dp_Mfunc_mex(sparse([0.1; 0.2]), {p})": "input q: expected a real, full double array",
        f"dp_Mfunc_mex([0.1; NaN], {p})": "input q: entry 2 is not finite",
        f"dp_Mfunc_mex([0.1; 0.2], [{p}(1:end-1); Inf])": "input param: entry",
        f"[a, b] = dp_Mfunc_mex([0.1; 0.2], {p})": "returns one output (M), 2 requested",
    }
    lines = []
    for call, _ in cases.items():
        lines += ["try", f"  {call};", "  disp('NO ERROR');", "catch err",
                  "  printf('%s|%s\\n', err.identifier, err.message);", "end"]
    lines.append(_printed(f"dp_Mfunc_mex([0.1; 0.2], {p})"))  # and a good call still works
    printed = run_octave(tmp_path, lines).splitlines()
    assert len(printed) == len(cases) + 4, printed
    for (call, says), line in zip(cases.items(), printed):
        assert line.startswith("multibody:mex:") and "dp_Mfunc_mex: " in line and says in line, (call, line)
    M = mb.crba(mb.models.double_pendulum(), [0.1, 0.2])
    _check(np.array(printed[-4:], dtype=float).reshape(2, 2).T, M, "after the errors")


def test_pronue_names_and_refused_prefixes(tmp_path):
    files = codegen.to_mex(mb.models.double_pendulum(symbolic=True), tmp_path, prefix="",
                           arrays={"M": "MpNE"})
    assert sorted(os.path.basename(p) for p in files.values()) == [
        "MpNEfunc_mex.c", "bfunc_mex.c", "ffunc_mex.c", "gfunc_mex.c", "paramDef.m"]
    with pytest.raises(ValueError, match="prefix: expected"):
        codegen.to_mex(mb.models.double_pendulum(), tmp_path / "x", prefix="a b")
    with pytest.raises(ValueError, match="longer than MATLAB's 63"):
        codegen.to_mex(mb.models.double_pendulum(), tmp_path / "x", prefix="p" * 60)
    assert not os.path.exists(tmp_path / "x")


def test_cli_lang_mex(tmp_path, capsys):
    from multibody.cli import main

    out = tmp_path / "m"
    assert main(["codegen", "ra3link", "--lang", "mex", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    names = sorted(os.listdir(out))
    assert names == ["eom_Mfunc_mex.c", "eom_bfunc_mex.c", "eom_ffunc_mex.c", "eom_gfunc_mex.c"]
    assert "mkoctfile --mex" in printed and "g = eom_gfunc_mex(q, param)" in printed
    build({n: str(out / n) for n in names}, out)
    q, dq = np.array([0.3, -0.7, 1.1]), np.array([0.5, 0.1, -0.4])
    got = np.array(run_octave(out, [_printed(f"eom_gfunc_mex({_mat(q)}, [])"),
                                    _printed(f"eom_bfunc_mex({_mat(q)}, {_mat(dq)}, [])")]).split(), dtype=float)
    M, b, g = core_terms(mb.models.ra3link(), q, dq)
    _check(got[:3], g, "CLI g")
    _check(got[3:], b, "CLI b")


def test_a_hostile_model_name_stays_in_comments_and_runs_no_code(tmp_path, monkeypatch):
    """A ``<robot name>`` that closes a C comment (or a MATLAB one, or a Python docstring) reaches
    the MEX sources only as comment text: they build, run and create no file."""
    from test_codegen_hostile_names import C_ESCAPE, M_ESCAPE, PY_ESCAPE, _c_code, _hostile_model, _matlab_code

    marker = tmp_path / "MARKER"
    monkeypatch.setenv("MB_MARKER", str(marker))
    for k, name in enumerate([C_ESCAPE, M_ESCAPE, PY_ESCAPE]):
        model, _ = _hostile_model(tmp_path, name)
        out = tmp_path / f"mex{k}"
        files = codegen.to_mex(model, out, prefix="evil")
        for path in files.values():
            code = (_c_code if path.endswith(".c") else _matlab_code)(open(path).read())
            assert "cg_pwn" not in code and "MB_MARKER" not in code and "fopen" not in code
        build({"M": files["M"]}, out)
        M = np.array(run_octave(out, [_printed("evil_Mfunc_mex(0.3, zeros(0, 1))")]).split(), dtype=float)
        _check(M, mb.crba(model, [0.3]).ravel(), "hostile model M")
        assert not marker.exists()
