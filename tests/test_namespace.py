"""One name per function in `multibody`; every seed spelling in `multibody.spatial_v2`; the old
second names of the previous release are gone; subpackages are attributes."""
import importlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody import spatial_v2

# every function the spatial_v2 reference documents (seed 001, its function list)
SEED_FUNCTIONS = """rx ry rz rv rq rqd skew crf crm mcI rotx roty rotz xlt plnr plux pluho XtoV Xpt Vpt Fpt
FDab FDcrb FDgq HandC HD ID FDfb IDfb fbkin fbanim EnerMo jcalc autoTree floatbase planar gfxExample vee
singlebody scissor doubleElbow rollingdisc showmotion gcFD gcPosVel gcontact expandLambda LTDL LTL mpyH mpyL
mpyLt mpyLi mpyLit""".split()


def test_every_public_name_resolves_and_each_function_has_one_name():
    seen = {}
    for name in mb.__all__:
        value = getattr(mb, name)
        if callable(value) and not isinstance(value, type):
            assert name == name.lower() or name.startswith("_"), f"{name}: not snake_case"
            assert id(value) not in seen, f"{name} and {seen.get(id(value))} are one function"
            seen[id(value)] = name


@pytest.mark.parametrize("name", ["sparse", "codegen", "engine", "view", "models", "simulation", "spatial",
                                  "spatial_v2", "symbolic"])
def test_subpackages_are_attributes(name):
    assert getattr(mb, name) is importlib.import_module(f"multibody.{name}")


def test_every_seed_function_is_in_spatial_v2():
    assert set(SEED_FUNCTIONS) <= set(spatial_v2.__all__)
    for name in spatial_v2.__all__:
        assert callable(getattr(spatial_v2, name)), name
    assert spatial_v2.ID is mb.rnea and spatial_v2.gcPosVel is mb.gc_pos_vel and spatial_v2.LTDL is mb.sparse.ltdl


@pytest.mark.parametrize("old,new", [("ID", "rnea"), ("FDab", "aba"), ("HandC", "hand_c"), ("FDgq", "fd_gq"),
                                     ("gcPosVel", "gc_pos_vel"), ("inverse_dynamics", "rnea"), ("FDfb", "fd_fb")])
def test_old_names_are_gone(old, new):
    assert old not in mb.__all__ and not hasattr(mb, old)
    assert getattr(spatial_v2, old, None) in (None, getattr(mb, new))    # the seed spelling, where it is one
    for module in (mb.dynamics, mb.sparse, mb.simulation.contact, mb.dynamics.floating, mb.dynamics.fdgq):
        assert not hasattr(module, old)


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        mb.nope
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        spatial_v2.nope


def test_importing_the_package_loads_no_solver_or_symbolics():
    script = ("import sys, warnings; warnings.simplefilter('error'); import multibody as mb; "
              "import multibody.spatial_v2; print(sorted(m for m in ('scipy', 'sympy', 'multibody.simulation', "
              "'multibody.models') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("code,axis,kind", [("Rx", 0, "R"), ("Ry", 1, "R"), ("Rz", 2, "R"), ("Px", 0, "P"),
                                            ("Py", 1, "P"), ("Pz", 2, "P"), ("H", 2, "H"),
                                            ("R", 2, "R"), ("P", 2, "P")])    # the seed's older codes
def test_jcalc_is_the_joint_transform_of_the_model(code, axis, kind):
    """jcalc's X_J equals the parent-to-body Plücker transform of a one-joint model at the same q."""
    q, pitch = 0.7, 0.2
    b = mb.ModelBuilder("one")
    b.add_body("b", None, code, pitch=pitch if kind == "H" else 0.0, mass=1.0, inertia=np.eye(3) * 0.1)
    model = b.build()
    R, p = mb.forward_kinematics(model, [q])
    X, S = spatial_v2.jcalc(code, q, pitch=pitch)
    np.testing.assert_allclose(X, mb.spatial.plux(R[0].T, p[0]), atol=1e-14)
    expected = np.zeros(6)
    expected[axis if kind == "R" or kind == "H" else 3 + axis] = 1.0
    if kind == "H":
        expected[5] = pitch
    np.testing.assert_array_equal(S, expected)
    with pytest.raises(ValueError, match="code"):
        spatial_v2.jcalc("Rw", q)


def test_planar_jcalc():
    X, S = spatial_v2.jcalc("r", 0.4)
    np.testing.assert_allclose(X, mb.spatial.plnr(0.4, [0, 0]))
    assert S.tolist() == [1.0, 0.0, 0.0]
    X, S = spatial_v2.jcalc("py", 0.4)
    np.testing.assert_allclose(X, mb.spatial.plnr(0.0, [0, 0.4]))
    assert S.tolist() == [0.0, 0.0, 1.0]


def test_no_warning_from_the_public_names():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in mb.__all__:
            getattr(mb, name)
