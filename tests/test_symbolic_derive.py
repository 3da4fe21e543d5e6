"""derive(model, method): every method agrees with every other and with the numeric crba/rnea, on
random auto_trees and on the seed models; SymPy's KanesMethod as an outside check; bad input."""
import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.symbolic import eom as eom_mod
from multibody.symbolic import derive, model_symbols
from multibody.symbolic.sym_models import n_link_pendulum_on_cart, spatial_chain, symbolic_model

RNG = np.random.default_rng(7)
METHODS = ["rnea", "pne", "tmt", "lagrange"]


def numeric_reference(model, q, dq):
    n = model.nv
    M = mb.crba(model, q)
    g = mb.rnea(model, q, np.zeros(n), np.zeros(n))
    b = mb.rnea(model, q, dq, np.zeros(n)) - g
    return M, b, g


def check_against_numeric(eom, model, values=None, trials=3, tol=1e-10):
    num = eom.to_numeric(values or {})
    nmodel = model if not model.is_symbolic else model.subs(values)
    for _ in range(trials):
        q, dq = RNG.uniform(-1.5, 1.5, model.nv), RNG.normal(size=model.nv)
        M, b, g = numeric_reference(nmodel, q, dq)
        scale = max(1.0, np.abs(M).max())
        assert np.abs(num.M(q) - M).max() < tol * scale
        assert np.abs(num.b(q, dq) - b).max() < tol * max(1.0, np.abs(b).max())
        assert np.abs(num.g(q) - g).max() < tol * max(1.0, np.abs(g).max())
    return num


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("nb,bf,skew", [(3, 1, 0.0), (4, 2, 0.5),
                                        pytest.param(5, 1.5, 0.3, marks=pytest.mark.slow)])
def test_methods_match_numeric_crba_rnea_on_auto_trees(method, nb, bf, skew):
    model = mb.models.auto_tree(nb, bf=bf, skew=skew)
    eom = derive(model, method)
    assert eom.n == model.nv
    check_against_numeric(eom, model)


@pytest.mark.parametrize("method", ["rnea", "pne"])
@pytest.mark.parametrize("frame", ["body", "inertial"])
def test_recursion_frames_match_numeric(method, frame):
    for model in (mb.models.auto_tree(5, bf=2, skew=0.4), mb.models.planar(4)):
        eom = derive(model, method, frame=frame)
        assert eom.extra["frame"] == frame
        check_against_numeric(eom, model, trials=2)


def test_auto_frame_is_inertial_for_planar_chains_and_keeps_them_short():
    model = n_link_pendulum_on_cart(8)
    for method in ("rnea", "pne"):
        eom = derive(model, method)
        assert eom.extra["frame"] == "inertial" or eom.extra["frames"]["b"] == "inertial"   # rnea: M, g planar
        # angles merge: the last link's terms use cos(q1 + … + q8), not products of 8 cosines
        terms = sp.expand(eom.M[8, 1]).as_ordered_terms()
        assert max(sum(1 for f in sp.Mul.make_args(t) if f.atoms(sp.sin, sp.cos)) for t in terms) <= 2
        assert sp.count_ops(eom.M[8, 1]) < 400


def test_methods_agree_with_each_other_on_symbolic_model():
    model = mb.models.ra3link(symbolic=True)
    values = {s: float(v) for s, v in zip(model_symbols(model)[4], RNG.uniform(0.3, 1.5, 19))}
    nums = {m: derive(model, m).to_numeric(values) for m in METHODS}
    q, dq, tau = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=3)
    ref = nums["rnea"]
    for m, num in nums.items():
        assert np.allclose(num.M(q), ref.M(q), atol=1e-10), m
        assert np.allclose(num.b(q, dq), ref.b(q, dq), atol=1e-10), m
        assert np.allclose(num.g(q), ref.g(q), atol=1e-10), m
        assert np.allclose(num.qdd(q, dq, tau), ref.qdd(q, dq, tau), atol=1e-9), m
    check_against_numeric(derive(model, "rnea"), model, values)


def test_rnea_and_pne_are_symbolically_equal_on_ra3link():
    model = mb.models.ra3link(symbolic=True)
    a, b = derive(model, "rnea"), derive(model, "pne")
    from multibody.symbolic._core import trig_canonical

    for i in range(3):
        assert trig_canonical(a.g[i] - b.g[i]) == 0
        for j in range(3):
            assert trig_canonical(a.M[i, j] - b.M[i, j]) == 0


def _starleth_values(model):
    return mb.models.parameters(model)


@pytest.mark.slow
def test_starleth_model_rnea_and_pne_against_numeric():
    model = mb.models.starleth(symbolic=True)
    values = _starleth_values(model)
    for method in ("rnea", "pne"):
        eom = derive(model, method)
        assert eom.n == 18
        check_against_numeric(eom, model, values, trials=2)


def test_starleth_manual_body_list_equals_model_derivation():
    from pronue_lists import starleth_list

    sysm = starleth_list()
    a = sysm.derive(kinematics=False)
    model = mb.models.starleth(symbolic=True)
    b = derive(model, "rnea", q=sysm.q, dq=sysm.dq)
    vals = sysm.param_values
    na, nb_ = a.to_numeric(vals), b.to_numeric(vals)
    q, dq = RNG.uniform(-1, 1, 18), RNG.normal(size=18)
    assert np.allclose(na.M(q), nb_.M(q), atol=1e-10)
    assert np.allclose(na.b(q, dq), nb_.b(q, dq), atol=1e-10)
    assert np.allclose(na.g(q), nb_.g(q), atol=1e-10)


@pytest.mark.parametrize("n", [1, 3])
def test_pendulum_on_cart_matches_sympy_kanes_method(n):
    """Outside check: SymPy's own n-link pendulum on a cart (absolute angles θ = T q)."""
    from sympy.physics.mechanics import dynamicsymbols
    from sympy.physics.mechanics.models import n_link_pendulum_on_cart as kane_model

    kane = kane_model(n=n, cart_force=False, joint_torques=False)
    model = n_link_pendulum_on_cart(n)
    eom = derive(model, "pne")
    params = model_symbols(model)[4]
    vals = {s: float(v) for s, v in zip(params, RNG.uniform(0.5, 2.0, len(params)))}
    num = eom.to_numeric(vals)
    qk = dynamicsymbols(f"q:{n + 1}")
    uk = dynamicsymbols(f"u:{n + 1}")
    kvals = {sp.Symbol(s.name): v for s, v in vals.items()}
    q, dq = RNG.normal(size=n + 1), RNG.normal(size=n + 1)
    T = np.zeros((n + 1, n + 1))
    T[0, 0] = 1
    T[1:, 1:] = np.tril(np.ones((n, n)))                 # absolute angles from relative ones
    qa, ua = T @ q, T @ dq
    sub = {**kvals, **dict(zip(qk, qa)), **dict(zip(uk, ua))}
    Mk = np.array(kane.mass_matrix.subs(sub), dtype=float)
    Fk = np.array(kane.forcing.subs(sub), dtype=float).ravel()
    # Kane: Mk u̇ = Fk in absolute rates; ours: M q̈ + b + g = 0 in relative ones, q̈_abs = T q̈
    assert np.allclose(T.T @ Mk @ T, num.M(q), atol=1e-10)
    assert np.allclose(-(T.T @ Fk), num.b(q, dq) + num.g(q), atol=1e-10)


def test_spatial_chain_methods_agree():
    model = spatial_chain(4)
    params = model_symbols(model)[4]
    vals = {s: float(v) for s, v in zip(params, RNG.uniform(0.2, 1.0, len(params)))}
    eoms = {m: derive(model, m) for m in ("rnea", "pne")}
    check_against_numeric(eoms["rnea"], model, vals, trials=2)
    check_against_numeric(eoms["pne"], model, vals, trials=2)


def screw_arm(slider=False):
    """A helical joint of pitch h and mass m (its coordinate in the position's coefficients, not only in
    the angles), a fixed bracket and a revolute arm about x; with ``slider`` a prismatic slide on top."""
    h, m = sp.symbols("h m", positive=True)
    return symbolic_model([
        dict(name="screw", joint="helical", axis="z", pitch=h, mass=m, com=(0.1, 0, 0),
             inertia=sp.diag(1, 2, 3)),
        dict(name="bracket", parent="screw", joint="fixed", translation=(0.2, 0.1, 0), mass=1,
             com=(0, 0, 0.1), inertia=sp.diag(0.1, 0.1, 0.1)),
        dict(name="arm", parent="bracket", axis="x", translation=(0, 0, 0.3), mass=2, com=(0, 0.2, 0),
             inertia=sp.diag(0.2, 0.1, 0.3)),
    ] + ([dict(name="slider", parent="arm", joint="prismatic", axis="y", mass=0.7, com=(0.05, 0, 0),
               inertia=sp.diag(0.01, 0.02, 0.03))] if slider else []))


def test_helical_and_fixed_joints():
    h, m = sp.symbols("h m", positive=True)
    model = screw_arm()
    vals = {h: 0.05, m: 1.3}
    for method in ("rnea", "pne"):
        check_against_numeric(derive(model, method), model, vals)


def test_actuated_selection_and_symbols():
    model = mb.models.ra3link(symbolic=True)
    eom = derive(model, "rnea", actuated=[0, 2])
    assert eom.S == sp.Matrix([[1, 0, 0], [0, 0, 1]])
    assert eom.f == sp.Matrix([eom.tau[0], 0, eom.tau[1]])
    pne = derive(model, "pne", actuated=[0, 2])
    assert pne.S == eom.S
    q = sp.symbols("a b c", real=True)
    assert derive(model, "rnea", q=q).q == sp.Matrix(q)


def test_progress_and_verbose(capsys):
    msgs = []
    derive(mb.models.ra3link(symbolic=True), "rnea", progress=msgs.append)
    assert any("CRBA" in m for m in msgs) and any("gravity" in m for m in msgs)
    derive(mb.models.ra3link(symbolic=True), "pne", verbose=True)
    assert "[derive pne" in capsys.readouterr().out


def test_registered_method_is_dispatched():
    calls = []

    @eom_mod.register_method("test_dummy")
    def dummy(model, q, dq, tau, *, S, progress=None, **kw):
        calls.append(kw)
        return derive(model, "rnea", q=q, dq=dq)

    try:
        eom = derive(mb.models.ra3link(symbolic=True), "test_dummy", flag=1)
        assert calls == [{"flag": 1}] and eom.n == 3
    finally:
        eom_mod.DERIVATION_METHODS.pop("test_dummy")


def test_bad_input():
    b = mb.ModelBuilder()
    b.add_body("trunk", joint="free", mass=2.0, inertia=(0.1, 0.2, 0.25))
    b.add_body("arm", parent="trunk", joint="Rz", mass=1.0, inertia=(0.01, 0.01, 0.01))
    with pytest.raises(ValueError, match="'trunk'.*free.*Euler"):
        derive(b.build(), "rnea")
    b = mb.ModelBuilder()
    b.add_body("ball", joint="spherical", mass=2.0, inertia=(0.1, 0.2, 0.25))
    with pytest.raises(ValueError, match="'ball'.*spherical.*Euler"):
        derive(b.build(), "pne")
    # spatial_v2's floatbase (three prismatic + three revolute joints) derives fine
    floating = mb.models.floatbase(mb.models.auto_tree(2))
    check_against_numeric(derive(floating, "rnea"), floating, trials=1)
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        derive(mb.models.ra3link(symbolic=True), "nope")
    with pytest.raises(ValueError, match="3 coordinates"):
        derive(mb.models.ra3link(symbolic=True), q=sp.symbols("a b", real=True))
    with pytest.raises(ValueError, match="actuated"):
        derive(mb.models.ra3link(symbolic=True), actuated=[0, 5])


@pytest.mark.parametrize("method", ["rnea", "pne", "tmt", "lagrange"])
def test_every_method_honours_actuated(method):
    import multibody as mb
    from multibody.symbolic import derive

    eom = derive(mb.models.auto_tree(3, skew=0.3), method, actuated=[0, 2])
    assert eom.S.shape == (2, 3)
    assert [str(t) for t in eom.tau] == ["tau0", "tau2"]
    assert np.array(eom.S, dtype=float).tolist() == [[1, 0, 0], [0, 0, 1]]
