"""Readable equations: derive returns (and `multibody derive` prints) M, b, g with sin² + cos² and
angle sums collapsed (symbolic/trig.py), as the OpenDE report's DP_EOM (appendix D.2) writes them."""
import numpy as np
import pytest
import symengine as se
import sympy as sp

import multibody as mb
from multibody.cli import main as cli_main
from multibody.symbolic import derive
from multibody.symbolic.sym_models import n_link_pendulum_on_cart, spatial_chain
from multibody.symbolic.trig import readable

METHODS = ("rnea", "pne", "tmt", "lagrange")


def _names(*names):
    return sp.symbols(names, real=True)


def test_double_pendulum_reads_like_the_report():
    eom = derive(mb.models.double_pendulum(symbolic=True))
    th1, th2, Dth1, Dth2, l1, l2, m1, m2, h1, h2, w1, w2, g = _names(
        "th1", "th2", "Dth1", "Dth2", "l1", "l2", "m1", "m2", "h1", "h2", "w1", "w2", "g")
    assert eom.M[0, 1] == l1 * l2 * m2 * sp.cos(th2) / 2 + m2 * (h2**2 + 3 * l2**2 + w2**2) / 12
    assert eom.M[1, 1] == m2 * (h2**2 + 3 * l2**2 + w2**2) / 12
    assert sp.expand(eom.M[0, 0] - (l1**2 * m1 / 4 + l1**2 * m2 + l2**2 * m2 / 4 + l1 * l2 * m2 * sp.cos(th2)
                                    + m1 * (h1**2 + w1**2) / 12 + m2 * (h2**2 + w2**2) / 12)) == 0
    assert eom.b[0] == -Dth2 * l1 * l2 * m2 * (2 * Dth1 + Dth2) * sp.sin(th2) / 2
    assert eom.b[1] == Dth1**2 * l1 * l2 * m2 * sp.sin(th2) / 2
    assert eom.g[1] == g * l2 * m2 * sp.cos(th1 + th2) / 2
    assert th1 not in eom.M.free_symbols and th1 not in eom.b.free_symbols     # only the relative angle
    # with the report's numbers (1 kg, 1 x 0.1 x 0.1 m): D_q = [1001/600 + cos(th2), cos(th2)/2 + 401/1200; …]
    vals = mb.models.parameters(mb.models.double_pendulum(symbolic=True))
    D = eom.M.subs({s: v for s, v in vals.items()})
    assert float(sp.expand(D[0, 0]).coeff(sp.cos(th2))) == 1.0
    assert float(sp.expand(D[0, 1]).coeff(sp.cos(th2))) == 0.5
    assert float(D[0, 0].subs(th2, sp.pi / 2)) == pytest.approx(1001 / 600, abs=1e-12)
    assert float(D[0, 1].subs(th2, sp.pi / 2)) == pytest.approx(401 / 1200, abs=1e-12)
    size = eom.extra["size"]
    assert sum(size["readable"].values()) < sum(size["derived"].values()) / 2


def test_every_method_gives_the_same_readable_entries():
    """The readable form is canonical: four derivations, one set of entries, symbol for symbol."""
    src = mb.models.double_pendulum(symbolic=True)
    ref = derive(src, "rnea")
    for method in METHODS[1:]:
        eom = derive(src, method)
        for name in ("M", "b", "g"):
            assert getattr(eom, name) == getattr(ref, name), (method, name)


@pytest.mark.parametrize("make", [lambda: n_link_pendulum_on_cart(4), lambda: spatial_chain(3),
                                  lambda: mb.models.ra3link(symbolic=True)])
@pytest.mark.parametrize("method", METHODS)
def test_readable_equals_raw_on_random_states(make, method):
    model = make()
    raw = derive(model, method, raw=True)
    nice = derive(model, method)
    rng = np.random.default_rng(3)
    vals = {p: float(v) for p, v in zip(raw.params, rng.uniform(0.5, 2.0, len(raw.params)))}
    a, b = raw.to_numeric(vals), nice.to_numeric(vals)
    for _ in range(3):
        q, dq = rng.normal(size=raw.n), rng.normal(size=raw.n)
        np.testing.assert_allclose(b.M(q), a.M(q), atol=1e-10)
        np.testing.assert_allclose(b.b(q, dq), a.b(q, dq), atol=1e-10)
        np.testing.assert_allclose(b.g(q), a.g(q), atol=1e-10)
    # the SymPy matrices say the same as the SymEngine entries to_numeric read
    q = rng.normal(size=raw.n)
    sub = {**vals, **dict(zip(nice.q, q))}
    np.testing.assert_allclose(np.array(nice.M.subs(sub), dtype=float), a.M(q), atol=1e-10)
    assert nice.count_ops()["M"] <= raw.count_ops()["M"]


def test_raw_keeps_the_derivation():
    eom = derive(mb.models.double_pendulum(symbolic=True), raw=True)
    th1 = sp.Symbol("th1", real=True)
    assert eom.M[0, 0].has(sp.sin(th1)) and "size" not in eom.extra


def test_trig_rules():
    a, b, c, x = se.symbols("a b c x")
    assert readable(c * (se.sin(a)**2 + se.cos(a)**2) + x * se.cos(a), [a, b]) == c + x * se.cos(a)
    assert readable(se.cos(a) * se.cos(b) - se.sin(a) * se.sin(b), [a, b]) == se.cos(a + b)
    assert readable(se.sin(a) * se.cos(b) - se.cos(a) * se.sin(b) + x, [a, b]) == x + se.sin(a - b)
    assert readable(2 * se.sin(a) * se.cos(a), [a]) == se.sin(2 * a)
    # an argument that is not linear in the coordinates is left alone, and so is a constant phase
    e = se.sin(a * b) * se.sin(a * b) + se.cos(a * b) ** 2
    assert readable(e, [a, b]) == e
    assert readable(se.sin(a + x) ** 2 + se.cos(a + x) ** 2, [a]) == 1
    # too large to read: left as derived
    big = se.expand(sum((se.cos(a) + se.sin(b) + k) ** 3 for k in range(40)))
    assert readable(big, [a, b], max_ops=50) == big


def test_cli_prints_readable_and_raw(capsys):
    assert cli_main(["derive", "double_pendulum"]) == 0
    out = capsys.readouterr().out
    assert "M[0,1] = l1*l2*m2*cos(th2)/2 + m2*(h2**2 + 3*l2**2 + w2**2)/12" in out
    assert "sin(th1)" not in out and "operations (as derived:" in out
    assert cli_main(["derive", "double_pendulum", "--raw"]) == 0
    assert "sin(th1)" in capsys.readouterr().out
    assert cli_main(["derive", "double_pendulum", "--latex"]) == 0
    assert r"l_{1} l_{2} m_{2} \cos{\left(th_{2} \right)}" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["single_pendulum", "double_pendulum", "ra3link", "ra3link_prismatic"])
def test_cli_derives_every_small_seed_model(name, capsys):
    assert cli_main(["derive", name]) == 0
    out = capsys.readouterr().out
    assert "M[0,0] = " in out and "size: M " in out
