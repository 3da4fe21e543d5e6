"""Module hygiene of multibody.symbolic and multibody.models: no function shadows its module, each
helper is defined once, joint codes come from JointType, the registry holds the four methods."""
import ast
import importlib
import pathlib
import pkgutil

import pytest

import multibody
import multibody.models
import multibody.symbolic
from multibody.symbolic.eom import DERIVATION_METHODS

PACKAGES = (multibody.symbolic, multibody.models)
ROOT = pathlib.Path(multibody.__file__).parent


def _modules():
    for pkg in PACKAGES:
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            yield info.name


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_attribute_shadows_a_module(name):
    module = importlib.import_module(name)
    parent_name, short = name.rsplit(".", 1)
    parent = importlib.import_module(parent_name)
    assert getattr(parent, short) is module, f"{parent_name}.{short} is not the module {name}"


def _top_level_functions():
    """(name, file) of every top-level def/class in symbolic/ and models/."""
    out = []
    for folder in ("symbolic", "models"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    out.append((node.name, path.relative_to(ROOT).as_posix()))
    return out


def test_each_helper_is_defined_once():
    seen = {}
    for name, path in _top_level_functions():
        if name == "_" or name.startswith("test_"):
            continue
        seen.setdefault(name, []).append(path)
    twice = {k: v for k, v in seen.items() if len(v) > 1}
    assert not twice, f"defined more than once: {twice}"
    for helper in ("skew", "unskew", "free_symbols", "axis_rotation", "elementary", "merge", "jacobian",
                   "matmul", "symbolic_bodies", "rotation_chains", "model_parameters", "model_symbols"):
        assert helper in seen, helper
    assert not hasattr(multibody.symbolic.tmt, "vee") and not hasattr(multibody.symbolic.tmt, "skew")
    for dead in ("skew_mat", "unskew_mat", "_joint_translation", "_symbols_of", "_free_symbols_sp",
                 "_restore_symbols", "_axis_rotation", "_converter", "axis_angle_to_rot"):
        assert dead not in seen, dead


def test_joint_codes_come_from_JointType():
    for folder in ("symbolic", "models"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            assert "= range(7)" not in text, path


def test_registry_holds_the_four_methods_with_their_inputs():
    from multibody import Model
    from multibody.model.mechanism import Mechanism
    from multibody.symbolic import PneSystem, TMTSystem

    assert set(DERIVATION_METHODS) >= {"rnea", "pne", "tmt", "lagrange"}
    assert DERIVATION_METHODS["rnea"].accepts == (Model,)
    assert DERIVATION_METHODS["lagrange"].accepts == (Model, Mechanism, TMTSystem)   # a mechanism by its energies
    assert set(DERIVATION_METHODS["pne"].accepts) == {Model, PneSystem, list}
    assert set(DERIVATION_METHODS["tmt"].accepts) == {Model, Mechanism, TMTSystem}
    assert all(entry.summary for entry in DERIVATION_METHODS.values())


def test_derive_is_the_function_and_has_no_inspect():
    assert callable(multibody.symbolic.derive)
    source = (ROOT / "symbolic" / "derivation.py").read_text()
    assert "inspect" not in source
