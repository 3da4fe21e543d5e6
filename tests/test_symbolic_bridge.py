"""The sympy.physics.mechanics bridge (issue 35 item 3): a KanesMethod or LagrangesMethod system in as
EquationsOfMotion, any EquationsOfMotion out as SymPy's (mass_matrix, forcing) pair, each held against an
independent derivation (our derive on the same mechanism, SymPy's own method) at random states."""
import numpy as np
import pytest
import sympy as sp
import sympy.physics.mechanics as me
from sympy.physics.mechanics.models import n_link_pendulum_on_cart as kane_pendulum

from multibody.symbolic import derive, from_mechanics, model_symbols, to_mechanics
from multibody.symbolic.sym_models import n_link_pendulum_on_cart, spatial_chain
from multibody.symbolic.sym_models import spatial_chain_in_mechanics as _lagrange_chain


@pytest.mark.parametrize("n", [1, 3])
def test_kane_system_in_matches_derive(n):
    """Kane's pendulum on a cart (absolute angles) through from_mechanics against derive(model, 'rnea')
    (relative angles) at a random state: M and b + g mapped by q_abs = T q_rel, and Sᵀτ."""
    km = kane_pendulum(n, cart_force=True, joint_torques=True)
    eom = from_mechanics(km)
    assert [str(s) for s in eom.q] == [f"q{i}" for i in range(n + 1)]
    assert [str(s) for s in eom.tau] == ["F"] + [f"T{i}" for i in range(1, n + 1)]
    model = n_link_pendulum_on_cart(n)
    ours = derive(model, "rnea")
    rng = np.random.default_rng(3)
    params = model_symbols(model)[4]
    vals = {s.name: float(v) for s, v in zip(params, rng.uniform(0.5, 2.0, len(params)))}
    q_rel, dq_rel = rng.normal(size=n + 1), rng.normal(size=n + 1)
    T = np.zeros((n + 1, n + 1))
    T[0, 0] = 1
    T[1:, 1:] = np.tril(np.ones((n, n)))
    num_k = eom.to_numeric({s: vals[s.name] for s in eom.params})
    num_o = ours.to_numeric({s: vals[s.name] for s in ours.params})
    q_abs, dq_abs = T @ q_rel, T @ dq_rel
    np.testing.assert_allclose(T.T @ num_k.M(q_abs) @ T, num_o.M(q_rel), atol=1e-9)
    np.testing.assert_allclose(T.T @ (num_k.b(q_abs, dq_abs) + num_k.g(q_abs)),
                               num_o.b(q_rel, dq_rel) + num_o.g(q_rel), atol=1e-9)
    assert np.allclose(num_k.b(q_abs, np.zeros(n + 1)), 0)      # b carries the velocity terms only
    # inputs: Kane's forcing is linear in F, T_i; Sᵀ is its Jacobian in them
    tau = rng.normal(size=n + 1)
    F_sym = km.forcing.xreplace(km.kindiffdict())
    inputs = [me.dynamicsymbols(str(s)) for s in eom.tau]
    sub = {**dict(zip(km.q, q_abs)), **dict(zip(km.u, dq_abs)), **dict(zip(inputs, tau)),
           **{sp.Symbol(k): v for k, v in vals.items()}}
    F_num = np.array(F_sym.xreplace(sub).evalf(), dtype=float).ravel()
    np.testing.assert_allclose(num_k.f(tau, q_abs) - num_k.b(q_abs, dq_abs) - num_k.g(q_abs), F_num, atol=1e-9)


@pytest.mark.parametrize("n", [2, 3])
def test_pair_out_matches_lagranges_method(n):
    """to_mechanics of derive(spatial_chain(n)) against SymPy's LagrangesMethod on the same chain, entry by
    entry at a random state (the same dynamicsymbols q0(t)…, q0'(t)…)."""
    lm, Ml, Fl = _lagrange_chain(n)
    eom = derive(spatial_chain(n), "rnea")
    Mo, Fo = to_mechanics(eom)
    assert {str(f) for f in me.find_dynamicsymbols(Fo)} >= {f"tau{i}(t)" for i in range(n)}
    Fo = Fo.xreplace({me.dynamicsymbols(str(s)): 0 for s in eom.tau})      # SymPy's chain has no actuators
    assert Mo.shape == Ml.shape and Fo.shape == Fl.shape
    t = me.dynamicsymbols._t
    rng = np.random.default_rng(n)
    syms = sorted((Ml.free_symbols | Fl.free_symbols) - {t}, key=str)
    qs = list(lm.q)
    dqs = [x.diff(t) for x in qs]
    args = dqs + qs + syms
    vals = rng.uniform(0.3, 1.5, len(args))
    f = sp.lambdify(args, [Ml, Fl, Mo, Fo], modules="numpy")
    a, b, c, d = (np.asarray(x, dtype=float) for x in f(*vals))
    np.testing.assert_allclose(c, a, atol=1e-9)
    np.testing.assert_allclose(d, b, atol=1e-9)


def test_round_trip_through_lagranges_method_keeps_the_equations():
    """derive → to_mechanics → a LagrangesMethod-shaped object is not needed: from_mechanics of SymPy's own
    LagrangesMethod of the chain equals derive's equations at random states (M, b, g each)."""
    lm, _, _ = _lagrange_chain(2)
    eom = from_mechanics(lm)
    assert [str(s) for s in eom.dq] == ["dq0", "dq1"] and eom.tau.rows == 0
    ours = derive(spatial_chain(2), "lagrange")
    rng = np.random.default_rng(7)
    names = sorted({s.name for s in eom.params} | {s.name for s in ours.params})
    vals = dict(zip(names, rng.uniform(0.3, 1.5, len(names))))
    a = eom.to_numeric({s: vals[s.name] for s in eom.params})
    b = ours.to_numeric({s: vals[s.name] for s in ours.params})
    q, dq = rng.normal(size=2), rng.normal(size=2)
    np.testing.assert_allclose(a.M(q), b.M(q), atol=1e-9)
    np.testing.assert_allclose(a.b(q, dq), b.b(q, dq), atol=1e-9)
    np.testing.assert_allclose(a.g(q), b.g(q), atol=1e-9)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="KanesMethod or LagrangesMethod"):
        from_mechanics(derive(spatial_chain(1)))
    with pytest.raises(TypeError, match="EquationsOfMotion"):
        to_mechanics(kane_pendulum(1))
    with pytest.raises(ValueError, match="q has 1 entries"):
        to_mechanics(derive(spatial_chain(2)), q=me.dynamicsymbols("a:1"))
    q = me.dynamicsymbols("x")
    lm = me.LagrangesMethod(sp.Symbol("m") * q.diff() ** 2 / 2, [q])
    with pytest.raises(ValueError, match="not formed"):
        from_mechanics(lm)
