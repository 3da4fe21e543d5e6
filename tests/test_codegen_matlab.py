"""``codegen.to_matlab``: proNEu-style MATLAB function files, run in GNU Octave (Debian's ``octave``).

Each test writes the files, then runs one Octave process that evaluates them at many random states
and parameter values and prints every entry with 17 digits; the NumPy backend gives the reference
(to 1e-12 relative to the largest entry of each array).
"""
from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
import sympy as sp

from system_deps import require_program

OCTAVE = require_program(["octave-cli", "octave"], "octave",
                         "the MATLAB code-generation tests")

import multibody as mb  # noqa: E402
from multibody import codegen  # noqa: E402

RTOL = 1e-12


def _mat(x) -> str:
    """A MATLAB column vector literal that reads back to the same doubles."""
    return "[" + "; ".join(repr(float(v)) for v in np.ravel(x)) + "]"


def run_octave(folder, lines) -> np.ndarray:
    """Run ``lines`` (MATLAB statements) in ``folder`` in one Octave process; the numbers it prints."""
    script = os.path.join(folder, "cg_check.m")
    with open(script, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    res = subprocess.run([OCTAVE, "-q", "-f", "--no-history", "cg_check.m"], cwd=folder, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return np.array([float(t) for t in res.stdout.split()])


def _printed(call: str) -> str:
    return f"fprintf('%.17g\\n', {call});"


def _check(got, want, what):
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    err = float(np.abs(got - want).max()) if want.size else 0.0
    assert err <= RTOL * scale, f"{what}: Octave differs from NumPy by {err:.3g} (scale {scale:.3g})"


def _random_params(spec, rng):
    default = spec.defaults.get("param", np.zeros(0))
    return default * rng.uniform(0.5, 1.5, default.shape)


MODELS = {
    "double_pendulum": lambda: mb.models.double_pendulum(symbolic=True),
    "ra3link": lambda: mb.models.ra3link(symbolic=True),
    "planar3": lambda: mb.models.planar(3),                  # numeric: no parameters
    "ma23": lambda: mb.models.ma23(symbolic=["l2", "d3", "M3", "I_z5", "d_y4", "g"]),
    "starleth": lambda: mb.models.starleth(symbolic=True),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_function_files_equal_the_numpy_backend(name, tmp_path):
    spec = codegen.as_spec(MODELS[name]())
    numpy_fn = codegen.to_numpy(spec)
    files = codegen.to_matlab(spec, tmp_path, prefix="eom")
    assert files.args == {"M": ["q", "param"], "b": ["q", "dq", "param"], "g": ["q", "param"],
                          "f": ["q", "tau", "param"]}
    n, m = spec.input_size("q"), spec.input_size("tau")
    rng = np.random.default_rng(11)
    states = []
    lines = []
    for k in range(6):
        q, dq, tau = rng.uniform(-np.pi, np.pi, n), rng.normal(size=n), rng.normal(size=m)
        param = _random_params(spec, rng) if k else spec.defaults.get("param", np.zeros(0))
        states.append((q, dq, tau, param))
        p = "eom_paramDef()" if (k == 0 and param.size) else _mat(param)
        lines += [f"q = {_mat(q)}; dq = {_mat(dq)}; tau = {_mat(tau)}; param = {p};",
                  _printed("eom_Mfunc(q, param)"), _printed("eom_bfunc(q, dq, param)"),
                  _printed("eom_gfunc(q, param)"), _printed("eom_ffunc(q, tau, param)")]
    out = run_octave(tmp_path, lines)
    pos = 0
    for k, (q, dq, tau, param) in enumerate(states):
        want = numpy_fn(q, dq, tau, param)
        for key in ("M", "b", "g", "f"):
            ref = np.asarray(want[key])
            flat = ref.T.ravel()  # MATLAB's x(:) is column-major
            _check(out[pos:pos + flat.size], flat, f"{name} state {k} {key}")
            pos += flat.size
    assert pos == out.size
    # the help text names each argument's entries in the seed's spelling
    text = open(files["M"]).read()
    assert text.startswith("function M = eom_Mfunc(q, param)\n")
    assert "% " not in text.split("\n")[0] and "zeros(" in text and ";" in text


def test_pronue_names_renamed_arrays_and_general_specs(tmp_path):
    """``prefix=""`` gives proNEu's ``Mfunc.m``; arrays can be renamed; any CodeSpec (functions,
    powers, a traced algorithm) prints MATLAB that Octave evaluates as NumPy does."""
    from multibody.codegen.trace import trace_algorithm

    x, y, k = sp.symbols("x y k", real=True)
    general = codegen.make_spec(
        {"out": sp.Matrix([sp.sqrt(x**2 + y**2) * k, sp.atan2(y, x), sp.Abs(x) ** sp.Rational(5, 2),
                           sp.exp(-x) * sp.tanh(y) / (1 + x**2) ** 3, (1 + x**2) ** k, sp.log(1 + y**2) * sp.asin(x / 4)])},
        {"xy": [x, y], "k": [k]}, name="fun")
    gen = codegen.to_matlab(general, tmp_path, prefix="gen")
    assert gen.args == {"out": ["xy", "k"]} and ".^" in open(gen["out"]).read()
    plain = codegen.to_matlab(mb.models.double_pendulum(symbolic=True), tmp_path, prefix="",
                              arrays={"M": "MpNE", "q": "x"})
    assert sorted(os.path.basename(p) for p in plain.values()) == [
        "MpNEfunc.m", "bfunc.m", "ffunc.m", "gfunc.m", "paramDef.m"]
    assert open(plain["MpNE"]).readline().strip() == "function MpNE = MpNEfunc(x, param)"
    model = mb.models.ra3link()
    aba = trace_algorithm(model, "aba", name="aba")
    traced = codegen.to_matlab(aba, tmp_path, prefix="aba")
    (qdd,) = aba.output_names()

    rng = np.random.default_rng(5)
    gen_fn, dp_fn = codegen.to_numpy(general), codegen.to_numpy(mb.models.double_pendulum(symbolic=True))
    calls = []  # (MATLAB call, the values NumPy or the C core gives)
    for _ in range(4):
        xy, kk = rng.uniform(-2, 2, 2), rng.uniform(0.5, 2)
        calls.append((f"gen_outfunc({_mat(xy)}, {kk!r})", gen_fn(xy, np.array([kk]))["out"]))
        q, dq, p = rng.uniform(-3, 3, 2), rng.normal(size=2), rng.uniform(0.5, 1.5, 11)
        p = p[:dp_fn.sizes[3]]
        want = dp_fn(q, dq, None, p)
        calls.append((f"MpNEfunc({_mat(q)}, {_mat(p)})", want["M"].T.ravel()))
        calls.append((f"bfunc({_mat(q)}, {_mat(dq)}, {_mat(p)})", want["b"]))
        q, qd, tau = rng.uniform(-3, 3, 3), rng.normal(size=3), rng.normal(size=3)
        calls.append((f"{traced.functions[qdd]}({_mat(q)}, {_mat(qd)}, {_mat(tau)})", mb.aba(model, q, qd, tau)))
    out = run_octave(tmp_path, [_printed(c) for c, _ in calls])
    pos = 0
    for call, want in calls:
        want = np.ravel(want)
        _check(out[pos:pos + want.size], want, call.split("(")[0])
        pos += want.size
    assert pos == out.size


def test_bad_names_are_refused(tmp_path):
    model = mb.models.double_pendulum()
    with pytest.raises(ValueError, match="array name 'end' is a MATLAB keyword"):
        codegen.to_matlab(model, tmp_path, arrays={"q": "end"})
    with pytest.raises(ValueError, match="array name 'zeros'"):
        codegen.to_matlab(model, tmp_path, arrays={"M": "zeros"})
    with pytest.raises(ValueError, match="longer than MATLAB's 63"):
        codegen.to_matlab(model, tmp_path, prefix="p" * 60)
    with pytest.raises(ValueError, match="not a valid"):
        codegen.to_matlab(model, tmp_path, prefix="2fast")
    with pytest.raises(TypeError, match="prefix: expected a string"):
        codegen.to_matlab(model, tmp_path, prefix=3)
    assert not os.listdir(tmp_path)  # nothing written on a refusal


def test_cli_lang_matlab(tmp_path, capsys):
    from multibody.cli import main

    out = tmp_path / "m"
    assert main(["codegen", "ra3link", "--lang", "matlab", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    names = sorted(os.listdir(out))
    assert names == ["eom_Mfunc.m", "eom_bfunc.m", "eom_ffunc.m", "eom_gfunc.m"]
    assert all(str(out / n) in printed for n in names)
    q, dq = np.array([0.3, -0.7, 1.1]), np.array([0.5, 0.1, -0.4])
    got = run_octave(out, [_printed(f"eom_gfunc({_mat(q)}, [])"), _printed(f"eom_bfunc({_mat(q)}, {_mat(dq)}, [])")])
    model = mb.models.ra3link()
    g = mb.rnea(model, q, np.zeros(3), np.zeros(3))
    _check(got[:3], g, "CLI g")
    _check(got[3:], mb.rnea(model, q, dq, np.zeros(3)) - g, "CLI b")
