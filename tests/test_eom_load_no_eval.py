"""Saved equations are read as data: ``EquationsOfMotion.load`` never evaluates the file (issue: trust).

The file's SHA-256 is recomputable by anyone, so a forged file passed the checksum and its
expressions were ``eval``-ed. Each forged file below would create MARKER under ``eval``.
"""
import hashlib
import json
import os
import subprocess
import sys

import pytest
import sympy as sp

import multibody as mb
from multibody.symbolic import EquationsOfMotion, derive
from multibody.symbolic.safe_srepr import read_srepr

PAYLOADS = [
    "__import__('os').system('touch ' + {m!r})",
    "Symbol('x').__class__.__mro__",                           # attribute walk
    "sin('__import__(\"os\").system(\"touch {m}\")')",          # SymPy sympifies (evaluates) strings
    "Function('Symbol')('__import__(\"os\").system(\"touch {m}\")')",
    "Add(*[open({m!r}, 'w')])",
    "(lambda: __import__('os'))()",
    "Integer(1) + Integer(2)",                                  # operators are not srepr
]


def _forge(saved_path, out_path, text):
    doc = json.load(open(saved_path))
    payload = json.loads(doc["payload"])
    payload["M"]["__matrix__"][2][0] = text
    body = json.dumps(payload, separators=(",", ":"))
    doc["payload"], doc["sha256"] = body, hashlib.sha256(body.encode()).hexdigest()
    json.dump(doc, open(out_path, "w"))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("eom") / "dp.json"
    derive(mb.models.double_pendulum(symbolic=True)).save(path)
    return path


@pytest.mark.parametrize("template", PAYLOADS)
def test_a_forged_file_with_a_valid_checksum_runs_no_code(saved, tmp_path, template):
    marker = tmp_path / "MARKER"
    forged = tmp_path / "forged.json"
    _forge(saved, forged, template.format(m=str(marker)))
    with pytest.raises(ValueError, match="forged.json: corrupt or unreadable EquationsOfMotion file"):
        EquationsOfMotion.load(forged)
    assert not marker.exists()


def test_the_cli_refuses_a_forged_file_in_one_line(saved, tmp_path):
    marker = tmp_path / "MARKER"
    forged = tmp_path / "forged.json"
    _forge(saved, forged, PAYLOADS[0].format(m=str(marker)))
    out = subprocess.run([sys.executable, "-m", "multibody", "codegen", str(forged), "--lang", "numpy",
                          "--out", str(tmp_path / "gen")], capture_output=True, text=True)
    assert out.returncode != 0
    assert not marker.exists()
    assert "Traceback" not in out.stderr and "forged.json" in out.stderr


def test_a_saved_file_still_loads_with_the_same_equations(saved):
    eom = derive(mb.models.double_pendulum(symbolic=True))
    back = EquationsOfMotion.load(saved)
    assert back.M == eom.M and back.b == eom.b and back.g == eom.g
    assert list(back.q) == list(eom.q) and list(back.params) == list(eom.params)


@pytest.mark.parametrize("expr", [
    sp.Symbol("x", real=True) ** sp.Rational(-3, 2) * sp.cos(sp.Symbol("y")) - sp.pi * sp.E,
    sp.Function("f")(sp.Symbol("t")).diff(sp.Symbol("t"), 2) + sp.Float("1.25e-300"),
    sp.atan2(sp.Symbol("a"), sp.Symbol("b")) + sp.Abs(sp.Symbol("c")) + sp.sqrt(2) * sp.I + sp.oo,
    sp.ImmutableMatrix([[1, sp.Symbol("k")], [sp.Float(-2.5), 0]]),
    sp.Tuple(sp.Integer(10) ** 40, sp.Rational(-7, 9), sp.Dummy("d")),
])
def test_every_srepr_of_an_expression_reads_back_equal(expr):
    assert read_srepr(sp.srepr(expr)) == expr


@pytest.mark.parametrize("text", ["Pow(Integer(10), Integer(100000000000000000000000000000000000000000000000000))",
                                  "factorial(Integer(1000000000000))", "isprime(Integer(7))"])
def test_arithmetic_that_would_compute_for_ever_is_refused(text):
    # built, 10**10**50 or (10**12)! would never finish; srepr of equations never writes either
    with pytest.raises(ValueError, match="srepr text"):
        read_srepr(text)


@pytest.mark.parametrize("text", ["Float('1e5; import os')", "Symbol(Symbol('x'))", "Integer(**{'a': 1})",
                                  "Symbol('x', real='yes')", "(" * 100_000 + "1" + ")" * 100_000, "x.y", "1 if 2 else 3"])
def test_malformed_text_is_one_value_error(text):
    with pytest.raises(ValueError, match="srepr text"):
        read_srepr(text)
