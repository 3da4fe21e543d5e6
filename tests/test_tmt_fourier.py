"""TMT's readable form formed directly (symbolic/tmt/fourier.py): a bare tree's derive(…, "tmt")
takes T and D q̇ as derivatives of the positions' harmonics and forms M, b, g in the readable
form, never running the readable pass. Held to the readable pass on TMT's own raw entries
(symbol for symbol where both rewrite an entry) and to the RNEA on random states."""
import numpy as np
import pytest

import multibody as mb
from multibody.symbolic import derive
from multibody.symbolic.sym_models import n_link_pendulum_on_cart, spatial_chain
from multibody.symbolic.tmt import fourier
from test_symbolic_derive import screw_arm

RNG = np.random.default_rng(11)


MODELS = [lambda: mb.models.double_pendulum(symbolic=True), lambda: mb.models.ra3link(symbolic=True),
          lambda: n_link_pendulum_on_cart(3), lambda: spatial_chain(3), lambda: screw_arm(slider=True)]


@pytest.mark.parametrize("make", MODELS)
def test_direct_form_agrees_with_rnea_on_random_states(make):
    model = make()
    tmt = derive(model, "tmt")
    assert tmt.extra["form"] == "readable" and "derived" in tmt.extra["size"]   # formed directly
    ref = derive(model, "rnea", q=tmt.q, dq=tmt.dq, tau=tmt.tau, raw=True)
    vals = {p: float(v) for p, v in zip(ref.params, RNG.uniform(0.5, 1.5, len(ref.params)))}
    a, b = tmt.to_numeric(vals), ref.to_numeric(vals)
    for _ in range(3):
        q, dq = RNG.uniform(-2, 2, tmt.n), RNG.normal(size=tmt.n)
        scale = 1 + np.abs(b.M(q)).max() + np.abs(b.b(q, dq)).max() + np.abs(b.g(q)).max()
        np.testing.assert_allclose(a.M(q), b.M(q), atol=1e-10 * scale)
        np.testing.assert_allclose(a.b(q, dq), b.b(q, dq), atol=1e-10 * scale)
        np.testing.assert_allclose(a.g(q), b.g(q), atol=1e-10 * scale)


@pytest.mark.parametrize("make", MODELS[:4])
def test_direct_form_is_the_readable_pass_entry_or_the_derived_one(make):
    """Each entry is what the readable pass makes of TMT's raw entry (the form is canonical) or,
    past the budget of harmonic products, the raw entry itself; never something third. (Exact
    models: with floats the two roads round differently, ``2.8e-17*cos(2*q0)`` on one of them.)"""
    model = make()
    direct = derive(model, "tmt")
    raw = derive(model, "tmt", raw=True)
    passed = raw.readable()
    same = 0
    for name in ("M", "b", "g"):
        for d, r, p in zip(getattr(direct, name), getattr(raw, name), getattr(passed, name)):
            assert d == p or d == r, (name, d)
            same += d == p
    assert same > 0
    # M and g take few products: on these models every one is the readable pass's
    assert direct.M == passed.M and direct.g == passed.g


def test_budget_leaves_an_entry_as_derived_and_fewer_operations_after_cse():
    """RA3Link's b[0] needs more products of harmonics than the budget: it stays as derived (the
    readable pass leaves it too), and its products are never formed."""
    model = mb.models.ra3link(symbolic=True)
    direct, raw = derive(model, "tmt"), derive(model, "tmt", raw=True)
    assert direct.b[0] == raw.b[0]
    assert direct.b[0] == raw.readable().b[0]
    assert fourier.MAX_ENTRY_WORK > 0


def test_not_a_trigonometric_polynomial_falls_back_to_the_readable_pass():
    """A sine of a coordinate times a parameter (not an integer combination of q) is no harmonic:
    tree_terms_readable gives None and derive runs the readable pass on the derived entries."""
    import symengine as se

    a, da, m, l, k = se.symbols("a da m l k")
    r = se.Matrix([l * se.cos(k * a), l * se.sin(k * a), 0])
    body = (m, se.zeros(3, 3), r, se.Matrix([[0], [0], [k]]))
    raw = ([m * l**2 * k**2], [se.Integer(0)], [se.Integer(0)])
    assert fourier.tree_terms_readable([body], [a], [da], se.Matrix([0, 0, 0]), raw) is None
