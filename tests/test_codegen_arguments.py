"""Bad arguments to the code generators: one clear error naming the argument (issue 36)."""
import os

import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody import codegen


@pytest.fixture(scope="module")
def pendulum():
    return mb.models.double_pendulum()


@pytest.mark.parametrize("write", [codegen.to_c, codegen.to_matlab, codegen.to_mex])
def test_writers_name_a_bad_out_dir(write, pendulum, tmp_path):
    with pytest.raises(TypeError, match="out_dir: expected a folder path"):
        write(pendulum, None)
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    with pytest.raises(FileExistsError, match="out_dir: .* is not a folder"):
        write(pendulum, a_file)
    assert a_file.read_text() == "x"
    files = write(pendulum, tmp_path / "new" / "folder")     # a missing folder is created
    assert all(os.path.isfile(p) for p in files.values())


def test_compile_refuses_flags_given_as_one_string(pendulum):
    # a string was taken letter by letter ("-", "O", "2"), and the compiler failed obscurely
    with pytest.raises(TypeError, match="flags: expected a list of strings"):
        codegen.compile(pendulum, flags="-O2")


def test_make_spec_refuses_defaults_for_no_input():
    x, k = sp.symbols("x k")
    outputs, inputs = {"y": sp.Matrix([k * x])}, {"x": [x], "k": [k]}
    with pytest.raises(ValueError, match="defaults: no input and no input symbol named 'kk'"):
        codegen.make_spec(outputs, inputs, defaults={"kk": 2.0})       # a typo was dropped silently
    with pytest.raises(ValueError, match=r"defaults\['k'\]: expected numbers"):
        codegen.make_spec(outputs, inputs, defaults={"k": ["two"]})
    spec = codegen.make_spec(outputs, inputs, defaults={"k": 2.0})    # by symbol name
    assert spec.defaults["k"].tolist() == [2.0]
    f = codegen.to_numpy(spec)
    assert f(x=np.array([3.0]))["y"].tolist() == [6.0]


def test_eom_spec_names_a_bad_argument():
    eom = mb.symbolic.derive(mb.models.double_pendulum())
    with pytest.raises(TypeError, match="eom: expected multibody.symbolic.EquationsOfMotion, got Model"):
        codegen.eom_spec(mb.models.double_pendulum())
    with pytest.raises(ValueError, match="outputs: unknown output.*'Q'"):
        codegen.eom_spec(eom, outputs=("M", "Q"))
    with pytest.raises(ValueError, match="outputs: expected a non-empty sequence"):
        codegen.eom_spec(eom, outputs="M")
    assert codegen.eom_spec(eom, outputs=("g",)).output_names() == ["g"]


def test_count_ops_takes_one_expression_and_refuses_strings():
    x, y = sp.symbols("x y")
    assert codegen.count_ops(x * y + x) == 2
    assert codegen.count_ops([x * y + x]) == 2
    assert codegen.count_ops(3) == 0
    with pytest.raises(TypeError, match="exprs: .* got a string"):
        codegen.count_ops("x + y")
    with pytest.raises(TypeError, match="exprs: expected SymPy/SymEngine expressions, got NoneType"):
        codegen.count_ops(None)
