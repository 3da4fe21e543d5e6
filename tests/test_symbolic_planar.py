"""Planar trees derived in the readable form directly (symbolic/planar.py): held to the recursion's
raw equations, to the numeric core's CRBA and RNEA on random states and parameters, and refused
(left to the recursion) where the tree leaves the plane."""
import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.symbolic import derive, model_symbols
from multibody.symbolic import _core as C
from multibody.symbolic.sym_models import n_link_pendulum_on_cart, spatial_chain, symbolic_model

RNG = np.random.default_rng(11)


def _tree(normal="y"):
    """A branched planar tree about ``normal``: revolute joints about ±normal, a prismatic joint
    sliding in the plane along a symbolic direction, a fixed joint, centres of mass off both plane
    axes and off the plane, full inertias (products too), gravity in and out of the plane."""
    e = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}
    a, b = {"x": ("y", "z"), "y": ("z", "x"), "z": ("x", "y")}[normal]
    n_ = np.array(e[normal])
    A, B = np.array(e[a]), np.array(e[b])
    m = sp.symbols("m0:5")
    l, c, d, h, u = sp.symbols("l0:3"), sp.symbols("c0:5"), sp.symbols("d0:5"), sp.Symbol("h"), sp.Symbol("u")
    Ixx, Iyy, Izz, Ixy = sp.symbols("Ixx Iyy Izz Ixy")
    inertia = sp.Matrix([[Ixx, Ixy, 0], [Ixy, Iyy, 0], [0, 0, Izz]])
    vec = lambda x, y, z=0: tuple(sp.sympify(x) * A + sp.sympify(y) * B + sp.sympify(z) * n_)  # noqa: E731
    bodies = [
        dict(name="slider", joint="prismatic", axis=tuple(sp.Rational(3, 5) * A + sp.Rational(4, 5) * B), mass=m[0], com=vec(c[0], d[0], h)),
        dict(name="arm", parent=0, joint="revolute", axis=tuple(n_), translation=vec(l[0], 0, h),
             mass=m[1], com=vec(c[1], d[1]), inertia=inertia),
        dict(name="left", parent=1, joint="revolute", axis=tuple(-n_), translation=vec(l[1], l[2]),
             mass=m[2], com=vec(c[2], d[2], h)),
        dict(name="right", parent=1, joint="revolute", axis=tuple(n_), translation=vec(0, l[1]),
             mass=m[3], com=vec(c[3], 0), inertia=sp.diag(Ixx, Iyy, Izz)),
        dict(name="tip", parent=3, joint="fixed", translation=vec(l[2], u), mass=m[4], com=vec(0, d[4])),
        dict(name="slide2", parent=4, joint="prismatic", axis=tuple(B), translation=vec(u, 0),
             mass=m[1], com=vec(c[4], 0)),
    ]
    g = sp.Symbol("g")
    return symbolic_model(bodies, gravity=tuple(-g * B + 2 * g * A - 3 * g * n_), name=f"planar_{normal}")


def _values(model):
    params = model_symbols(model)[4]
    out = {p: float(v) for p, v in zip(params, RNG.uniform(0.4, 1.6, len(params)))}
    physical = {"Ixx": 1.0, "Iyy": 1.2, "Izz": 1.5, "Ixy": 0.1}     # a rigid body's inertia
    return {p: physical.get(p.name, v) for p, v in out.items()}


def _core(model, values, q, dq):
    num = model.subs(values)
    M = mb.crba(num, q)
    g = mb.rnea(num, q, np.zeros_like(q), np.zeros_like(q))
    return M, mb.rnea(num, q, dq, np.zeros_like(q)) - g, g


@pytest.mark.parametrize("normal", ["x", "y", "z"])
def test_planar_tree_matches_the_recursion_and_the_numeric_core(normal):
    model = _tree(normal)
    eom = derive(model)
    assert eom.extra["frame"] == "planar" and eom.extra["form"] == "readable"
    raw = derive(model, raw=True, frame="body")
    values = _values(model)
    a, r = eom.to_numeric(values), raw.to_numeric(values)
    for _ in range(3):
        q, dq = RNG.uniform(-2, 2, model.nv), RNG.normal(size=model.nv)
        M, b, g = _core(model, values, q, dq)
        for got in (a, r):
            np.testing.assert_allclose(got.M(q), M, atol=1e-10 * max(1, np.abs(M).max()))
            np.testing.assert_allclose(got.b(q, dq), b, atol=1e-10 * max(1, np.abs(b).max()))
            np.testing.assert_allclose(got.g(q), g, atol=1e-10 * max(1, np.abs(g).max()))
    # the readable form: harmonics of the relative angles, never sin² + cos²
    for e in list(eom.M) + list(eom.b) + list(eom.g):
        assert not any(p.base.func in (sp.sin, sp.cos) for p in e.atoms(sp.Pow))


def test_planar_entries_are_the_readable_pass_symbol_for_symbol():
    model = n_link_pendulum_on_cart(3)
    eom, raw = derive(model), derive(model, raw=True)
    assert eom.extra["frame"] == "planar"
    nice = raw.readable()
    assert list(eom.M) == list(nice.M) and list(eom.g) == list(nice.g)
    # b: the readable pass keeps a row as derived when its harmonics are longer; the values agree
    for x, y in zip(eom.b, nice.b):
        assert sp.expand(sp.expand_trig(x - y)) == 0


def test_trees_off_the_plane_go_to_the_recursion():
    assert derive(spatial_chain(3)).extra["frame"] != "planar"
    hybrid = derive(n_link_pendulum_on_cart(8)).extra   # past PLANAR_MAX_WORK: M and g planar, b by the recursion
    assert hybrid["frame"] == "planar" and hybrid["frames"] == {"M": "planar", "b": "inertial", "g": "planar"}
    assert derive(n_link_pendulum_on_cart(12)).extra["frame"] == "inertial"   # past PLANAR_MG_MAX_WORK too
    tilted = symbolic_model([dict(name="a", axis="z", mass=sp.Symbol("m"), com=(1, 0, 0)),
                             dict(name="b", parent=0, axis="z", rotation=sp.Matrix([[0, -1, 0], [1, 0, 0], [0, 0, 1]]),
                                  translation=(1, 0, 0), mass=sp.Symbol("m"), com=(1, 0, 0))])
    assert derive(tilted).extra["frame"] != "planar"          # a rotated joint frame
    assert derive(tilted, raw=True).extra.get("form") is None


@pytest.mark.parametrize("make", [lambda: n_link_pendulum_on_cart(3), lambda: _tree("y"),
                                  lambda: mb.models.double_pendulum(), lambda: mb.models.double_pendulum(symbolic=True)],
                         ids=["pendulum3", "tree_y", "double_pendulum", "double_pendulum_sym"])
def test_planar_sympy_build_is_the_conversion_of_its_symengine_entries(make):
    """PlanarForms.sympy builds M, b, g straight from the polynomials: node for node what the
    Converter makes of the SymEngine entries (srepr equal), symbolic and float models."""
    from multibody.symbolic import _core as C
    from multibody.symbolic.planar import planar_forms, planar_normal
    from multibody.symbolic.tree import symbolic_bodies

    model = make()
    q, dq, tau, _, params = model_symbols(model)
    bodies = symbolic_bodies(model)
    grav = C.vec3(np.asarray(model.gravity, dtype=object).tolist(), "gravity")
    forms = planar_forms(bodies, [C.to_se(s) for s in q], [C.to_se(s) for s in dq], grav, *planar_normal(bodies))
    syms = list(q) + list(dq) + list(tau) + list(params)
    M, b, g = forms.symengine()
    conv = C.Converter(syms)
    want = [conv(x) for row in M for x in row] + [conv(x) for x in b + g]
    M, b, g = forms.sympy(C.Converter(syms))
    got = [x for row in M for x in row] + list(b) + list(g)
    assert [sp.srepr(x) for x in got] == [sp.srepr(x) for x in want]
    eom = derive(model)          # derive's entries are these, and its SymEngine ones (read lazily) agree
    assert list(eom.M) == [x for row in M for x in row] and list(eom.b) == list(b)
    assert [C.to_sp(x) for x in eom._se_exprs["g"]] == list(g)


def test_planar_entries_with_atoms_that_are_no_symbols():
    """√2, √3 and sin(a) in the parameters: their products fold (√2·√2 = 2), so the planar path sums
    such coefficients in SymEngine; the entries are still the readable pass's, M and g symbol for
    symbol (the polynomial path alone left (1/9)*m2*(9*sqrt(3) + 3*l**2) unreduced)."""
    m1, m2, l, a = sp.symbols("m1 m2 l a")
    model = symbolic_model([dict(name="a", axis="z", mass=m1, com=(sp.sqrt(2) * l, sp.sin(a), 0)),
                            dict(name="b", parent=0, axis="z", translation=(l, 0, 0), mass=m2,
                                 com=(sp.sqrt(2) * l / 3, l / 3, 0), inertia=sp.diag(1, 1, sp.sqrt(3) * m2))],
                           gravity=(0, -9.81, 0))
    eom, nice = derive(model), derive(model, raw=True).readable()
    assert eom.extra["frame"] == "planar"
    assert list(eom.M) == list(nice.M) and list(eom.g) == list(nice.g)
    assert all(sp.expand(sp.expand_trig(x - y)) == 0 for x, y in zip(eom.b, nice.b))


@pytest.mark.parametrize("make", [lambda: n_link_pendulum_on_cart(3), lambda: _tree("z"),
                                  lambda: mb.models.double_pendulum(symbolic=True), lambda: mb.models.double_pendulum()],
                         ids=["pendulum3", "tree_z", "double_pendulum_sym", "double_pendulum"])
def test_planar_m_and_g_with_b_by_the_recursion(make, monkeypatch):
    """Past PLANAR_MAX_WORK (forced to 0 here) M and g stay planar and b comes from the recursion and
    the readable pass: M and g symbol for symbol the full planar path's, b the readable pass's of the
    raw equations, all three held to the numeric core."""
    from multibody.symbolic import planar

    model = make()
    full = derive(model)
    monkeypatch.setattr(planar, "PLANAR_MAX_WORK", 0)
    eom = derive(model)
    assert eom.extra["frames"] == {"M": "planar", "b": "inertial", "g": "planar"}
    assert list(eom.M) == list(full.M) and list(eom.g) == list(full.g)
    assert list(eom.b) == list(derive(model, raw=True, frame="inertial").readable().b)
    assert [C.to_sp(x) for x in eom._se_exprs["b"]] == list(eom.b)
    values = _values(model)
    num = eom.to_numeric(values)
    for _ in range(2):
        q, dq = RNG.uniform(-2, 2, model.nv), RNG.normal(size=model.nv)
        M, b, g = _core(model, values, q, dq)
        np.testing.assert_allclose(num.M(q), M, atol=1e-10 * max(1, np.abs(M).max()))
        np.testing.assert_allclose(num.b(q, dq), b, atol=1e-10 * max(1, np.abs(b).max()))
        np.testing.assert_allclose(num.g(q), g, atol=1e-10 * max(1, np.abs(g).max()))
    monkeypatch.setattr(planar, "PLANAR_MG_MAX_WORK", 0)
    assert derive(model).extra["frame"] == "inertial"         # past both bounds: the recursion alone
