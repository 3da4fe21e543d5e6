"""Bad arguments to the public symbolic functions: one clear error naming the argument (issue 36)."""
import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody import symbolic as S
from multibody.symbolic.eom import DERIVATION_METHODS


@pytest.fixture(scope="module")
def pendulum():
    return mb.models.double_pendulum()


def test_symbols_must_be_sequences_of_symbols(pendulum):
    a, b = sp.symbols("a b")
    # a string was read letter by letter as the coordinates "a" and "b"
    with pytest.raises(TypeError, match="q: expected a sequence of SymPy symbols, got str"):
        S.model_symbols(pendulum, q="ab")
    with pytest.raises(TypeError, match="q: expected a sequence of SymPy symbols, got Symbol"):
        S.derive(pendulum, q=a)                      # was "'Symbol' object is not iterable"
    with pytest.raises(TypeError, match=r"q: expected SymPy symbols, got 1 \(int\)"):
        S.derive(pendulum, q=[1, 2])                 # was an AttributeError
    with pytest.raises(TypeError, match="dq: expected SymPy symbols"):
        S.derive_tmt(pendulum, dq=[a, a + 1])
    with pytest.raises(TypeError, match="tau: expected SymPy symbols"):
        S.derive_lagrange(pendulum, tau=[1.0, 2.0])
    q, dq, tau, Sel, _ = S.model_symbols(pendulum, q=[a, b], actuated=[1])
    assert list(q) == [a, b] and Sel.tolist() == [[0, 1]] and len(tau) == 1


@pytest.mark.parametrize("call", [S.model_symbols, S.pne_system, S.derive_tmt, S.tmt_system_from_model,
                                  S.derive_lagrange])
def test_model_functions_name_a_model_that_is_not_one(call):
    with pytest.raises(TypeError, match="model: expected a multibody Model"):
        call(3)                                      # was "'int' object has no attribute 'parent'"


def test_derive_checks_progress_and_simplify_before_deriving(pendulum):
    with pytest.raises(TypeError, match="progress: expected a callable"):
        S.derive(pendulum, progress=3)
    for bad in ("x", -1, 0.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="simplify: expected False, True or a positive time limit"):
            S.derive(pendulum, simplify=bad)
    said = []
    S.derive(pendulum, progress=said.append)
    assert said


def test_register_method_checks_its_arguments(pendulum):
    with pytest.raises(TypeError, match="accepts must be a type or a tuple of types"):
        S.register_method("x_bad_accepts", accepts=3)
    with pytest.raises(TypeError, match="decorates a function, got int"):
        S.register_method("x_not_callable")(3)
    assert "x_not_callable" not in DERIVATION_METHODS           # nothing half-registered
    try:
        @S.register_method("x_single_type", accepts=mb.Model)   # one type is enough
        def one(model, q, dq, tau, *, S, progress=None):
            return DERIVATION_METHODS["rnea"].function(model, q, dq, tau, S=S, progress=progress)
        assert S.derive(pendulum, "x_single_type").M.shape == (2, 2)
    finally:
        DERIVATION_METHODS.pop("x_single_type", None)


def test_christoffel_C_checks_shapes():
    x, y, dx, dy = sp.symbols("x y dx dy")
    with pytest.raises(ValueError, match="M must be 1×1"):
        S.christoffel_C(sp.Matrix([[1, x]]), [x], [dx])      # was a silent zero matrix
    with pytest.raises(ValueError, match="q has 2 entries but dq has 1"):
        S.christoffel_C(sp.eye(2), [x, y], [dx])               # was an IndexError
    C, _ = S.christoffel_C(sp.Matrix([[1 + x**2]]), [x], [dx])
    assert sp.simplify(C[0, 0] - x * dx) == 0


def test_utils_refuse_bad_input():
    with pytest.raises(ValueError, match="alpha: expected a finite real angle"):
        S.euler_to_rot_A_IB(np.nan, 0, 0)                    # was a matrix of NaN
    with pytest.raises(TypeError, match="gamma: expected an angle"):
        S.euler_to_rot_A_BI(0, 0, None)
    with pytest.raises(ValueError, match="skew: expected a 3-vector, got 2 entries"):
        S.skew([1, 2])
    with pytest.raises(TypeError, match="skew: .* got a string"):
        S.skew("abc")
    with pytest.raises(ValueError, match="unskew: the matrix is not skew-symmetric"):
        S.unskew(sp.eye(3))                                   # was [0, 0, 0]
    a = sp.Symbol("a")
    A = S.euler_to_rot_A_IB(a, 0, 0)
    assert list(S.unskew(A.T * A.diff(a))) != []             # symbolic: taken as it is
    with pytest.raises(ValueError, match="samples: expected a positive integer"):
        S.is_orthonormal(A, samples=0)
    with pytest.raises(ValueError, match="tol: expected a positive finite tolerance"):
        S.is_orthonormal(A, tol=-1.0)
    assert S.is_orthonormal(np.eye(3)) and not S.is_orthonormal(sp.diag(1, 1, -1))


def test_cylinder_angle_refuses_coincident_mounts_as_the_torque_does():
    with pytest.raises(ValueError, match="mounts coincide"):
        S.cylinder_angle(np.pi, 0.4, 0.4)                     # was π/2, an arbitrary direction
    with pytest.raises(ValueError, match="mounts coincide"):
        S.cylinder_torque(np.pi, 0.4, 0.4, 1.0)
    with pytest.raises(TypeError, match=r"q: expected the joint angle \(rad\)"):
        S.cylinder_angle("x", 0.3, 0.4)
    assert np.isclose(S.cylinder_angle(np.pi / 2, 0.3, 0.4), np.arctan(0.3 / 0.4))
