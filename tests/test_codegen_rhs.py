"""codegen.rhs_spec (q̈ = M⁻¹(f − b − g) with an unrolled LDLᵀ) against the numeric core's ABA and
PyDy's own generated right-hand side; the compiled module's lanes (batch blocks, the tail, the
polynomial sin and cos) against the library's numbers."""
import os

import numpy as np
import pydy
import pytest
from system_deps import needs_c_compiler as needs_cc, private_codegen_cache  # noqa: F401 (an autouse fixture)
import sympy as sp

import multibody as mb
from multibody import codegen
from multibody.symbolic import derive
from multibody.symbolic.sym_models import n_link_pendulum_on_cart


def rel_err(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def pendulum_values(n, rng):
    vals = {f"m{i}": rng.uniform(0.5, 2.0) for i in range(n + 1)}
    vals.update({f"l{i}": rng.uniform(0.3, 1.5) for i in range(n)})
    vals["g"] = 9.81
    return vals


@needs_cc
def test_rhs_matches_the_core_s_aba_on_starleth():
    """StarlETH (18 DoF, free base as 6 joints): M, b, g derived, LDLᵀ unrolled, compiled; against
    mb.aba on random states, one state and a batch whose size is not a multiple of the lanes."""
    model = mb.models.starleth()
    f = codegen.compile(codegen.rhs_spec(model))
    rng = np.random.default_rng(3)
    Q, QD = rng.uniform(-1.5, 1.5, (2, 7, model.nv))
    batch = f(Q, QD)["qdd"]
    for k in range(7):
        want = mb.aba(model, Q[k], QD[k], np.zeros(model.nv))
        assert rel_err(f(Q[k], QD[k])["qdd"], want) <= 1e-12
        assert rel_err(batch[k], f(Q[k], QD[k])["qdd"]) <= 1e-14   # one state wide and CG_W wide: to rounding


def test_rhs_takes_joint_torques_and_parameters():
    """A symbolic chain (parameters as inputs) with torques, through the NumPy backend (no compiler):
    q̈ against mb.aba of the numeric model with the same numbers."""
    model = mb.models.ra3link(symbolic=True)
    values = mb.models.parameters(model)
    f = codegen.to_numpy(codegen.rhs_spec(model))
    numeric = mb.models.ra3link()
    rng = np.random.default_rng(5)
    for _ in range(4):
        q, dq, tau = rng.uniform(-2, 2, (3, 3))
        assert rel_err(f(q, dq, tau)["qdd"], mb.aba(numeric, q, dq, tau)) <= 1e-12
    assert values                      # the seed's values are the spec's defaults


def test_rhs_refuses_a_codespec():
    x = sp.Symbol("x")
    spec = codegen.make_spec({"y": sp.Matrix([x])}, {"q": [x]})
    with pytest.raises(TypeError, match="not a CodeSpec"):
        codegen.rhs_spec(spec)


@needs_cc
def test_rhs_agrees_with_pydy_on_the_pendulum_on_a_cart():
    """PyDy's n-link pendulum on a cart (KanesMethod, absolute link angles from the x axis) and ours
    (relative joint angles, links along y): θ = π/2 + cumsum(q), ω = cumsum(q̇), so PyDy's angular
    accelerations are cumsum(q̈). Random parameters and states, PyDy's own generated function."""
    from pydy.codegen.ode_function_generators import generate_ode_function
    from pydy.models import n_link_pendulum_on_cart as pydy_model

    assert pydy.__version__
    n = 3
    rng = np.random.default_rng(11)
    vals = pendulum_values(n, rng)
    system = pydy_model(n=n, cart_force=False, joint_torques=False)
    kane = system.eom_method
    consts = sorted(system.constants_symbols, key=str)
    rhs = generate_ode_function(kane.forcing_full, system.coordinates, system.speeds, consts,
                                mass_matrix=kane.mass_matrix_full, generator="lambdify")
    p = np.array([vals[str(c)] for c in consts])
    ours = codegen.compile(codegen.rhs_spec(derive(n_link_pendulum_on_cart(n)), values=vals))
    for _ in range(5):
        q, dq = rng.uniform(-2, 2, (2, n + 1))
        x = np.concatenate([[q[0]], np.pi / 2 + np.cumsum(q[1:]), [dq[0]], np.cumsum(dq[1:])])
        xd = rhs(x, 0.0, p)
        qdd = ours(q, dq)["qdd"]
        want = xd[n + 1:]
        got = np.concatenate([[qdd[0]], np.cumsum(qdd[1:])])
        assert rel_err(got, want) <= 1e-10, (got, want)
        assert np.allclose(xd[:n + 1], x[n + 1:])


@needs_cc
@pytest.mark.parametrize("fast_math", [False, True])
def test_lanes_sin_and_cos_equal_the_library_s(fast_math):
    """The compiled module's sin and cos run as a polynomial on the lanes (Cody-Waite reduction); the
    library's below 1e5 in magnitude to 1e-15, and the library's own beyond (lanes fall back). Under
    -ffast-math (which could fold the reduction's rounding away) they are the library's.  The
    -ffast-math module is linked without -ffast-math, so loading it leaves the process's subnormals
    alone (gcc before 13 links crtfastmath.o into a shared library, which sets flush-to-zero): the
    child process checks that, and keeps this worker safe if it ever fails."""
    if fast_math:
        import subprocess
        import sys
        code = ("import sys; sys.path.insert(0, %r); import test_codegen_rhs as t; "
                "t.check_lanes_sin_and_cos(True); "
                "assert sys.float_info.min / 4 > 0, 'flush-to-zero after loading the module'" % os.path.dirname(os.path.abspath(__file__)))
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-3000:]
    else:
        check_lanes_sin_and_cos(False)


def check_lanes_sin_and_cos(fast_math):
    from multibody.codegen import cache

    x = sp.Symbol("x")
    flags = list(cache.default_flags(cache.find_compiler())) + (["-ffast-math"] if fast_math else [])
    f = codegen.compile(codegen.make_spec({"s": sp.Matrix([sp.sin(x)]), "c": sp.Matrix([sp.cos(x)])},
                                          {"q": [x]}, name="trig"), flags=flags)
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.uniform(-4, 4, 4001), rng.uniform(-1e5, 1e5, 4001), np.pi / 2 * np.arange(-40, 41),
                        [0.0, -0.0, 1e-300, np.pi / 4, 3e5, -7e8, 1e15]])[:, None]
    out = {k: v.ravel() for k, v in f(X).items()}
    small = np.abs(X[:, 0]) <= 1e5
    assert np.abs(out["s"][small] - np.sin(X[small, 0])).max() <= 1e-15
    assert np.abs(out["c"][small] - np.cos(X[small, 0])).max() <= 1e-15
    if fast_math:       # the compiler may call its vector library: close, not bit for bit
        assert np.abs(out["s"] - np.sin(X[:, 0])).max() <= 2e-15
        assert np.abs(out["c"] - np.cos(X[:, 0])).max() <= 2e-15
    else:
        assert np.array_equal(out["s"][~small], np.sin(X[~small, 0]))     # the library's, bit for bit
        assert np.array_equal(out["c"][~small], np.cos(X[~small, 0]))


@needs_cc
def test_lanes_constants_inside_functions_compile():
    """Constants inside a lane-wise function (sqrt(3), atan2(x, 1), 2**x) are splat onto the lanes."""
    x, y = sp.symbols("x y")
    exprs = sp.Matrix([sp.sqrt(3) * x, sp.atan2(x, 1), 2 ** x, sp.sqrt(x ** 2 + 1), x ** y])
    f = codegen.compile(codegen.make_spec({"v": exprs}, {"q": [x, y]}, name="consts"))
    X = np.array([[0.3, 1.5], [0.7, -0.5], [1.1, -2.0], [2.0, 3.0], [0.9, 0.1]])
    want = np.array([[float(e.subs({x: a, y: b})) for e in exprs] for a, b in X])
    assert rel_err(f(X)["v"], want) <= 1e-14


@needs_cc
@pytest.mark.parametrize("native, extra", [(False, ["-DCG_SCALAR"]), (False, ["-Wall", "-Wextra", "-Werror"]),
                                           (True, ["-Wall", "-Wextra", "-Werror"])])
def test_scalar_build_and_warnings(native, extra):
    """The module builds without the vector extension (CG_SCALAR: what a compiler other than GCC or
    Clang gets) with the same numbers, and the lanes' build is clean under -Wall -Wextra, portable
    (two lanes on x86-64's SSE2) and for this machine (four with AVX)."""
    from multibody.codegen import cache

    model = mb.models.double_pendulum()
    flags = list(cache.default_flags(cache.find_compiler()) if native else cache.CFLAGS) + extra
    f = codegen.compile(codegen.rhs_spec(model), flags=flags)
    rng = np.random.default_rng(2)
    Q, QD, TAU = rng.uniform(-2, 2, (3, 5, 2))
    got = f(Q, QD, TAU)["qdd"]
    for k in range(5):
        assert rel_err(got[k], mb.aba(model, Q[k], QD[k], TAU[k])) <= 1e-12
