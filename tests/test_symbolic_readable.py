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
    size = eom.extra["size"]["readable"]      # the planar tree is derived readable (symbolic/planar.py)
    raw = derive(mb.models.double_pendulum(symbolic=True), raw=True)
    derived = {k: int(se.count_ops(*[se.sympify(e) for e in getattr(raw, k)])) for k in ("M", "b", "g")}
    assert sum(size.values()) < sum(derived.values()) / 2


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
    assert "sin(th1)" not in out and "operations (derived readable directly; --raw" in out   # derived once, not again raw
    assert cli_main(["derive", "double_pendulum", "--raw"]) == 0
    assert "sin(th1)" in capsys.readouterr().out
    assert cli_main(["derive", "double_pendulum", "--latex"]) == 0
    assert r"l_{1} l_{2} m_{2} \cos{\left(th_{2} \right)}" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["single_pendulum", "double_pendulum", "ra3link", "ra3link_prismatic"])
def test_cli_derives_every_small_seed_model(name, capsys):
    assert cli_main(["derive", name]) == 0
    out = capsys.readouterr().out
    assert "M[0,0] = " in out and "size: M " in out


@pytest.mark.parametrize("name", ["vee", "scissor", "rolling_disc", "singlebody"])
def test_cli_derives_the_free_floating_seed_models_in_euler_angles(name, capsys):
    """spatial_v2's free-floating models: their free joint (quaternion coordinates, which symbolic
    derivation does not take) written as floatbase's chain, said in the header; the printed equations
    are floatbase's model's, numerically its CRBA at a random state."""
    assert cli_main(["derive", name]) == 0
    out = capsys.readouterr().out
    assert f"# floatbase({getattr(mb.models, name)().name})" in out
    assert "free joint written as floatbase's chain" in out and "Euler angles, singular at q4 = ±π/2" in out
    fb = mb.models.floatbase(getattr(mb.models, name)())
    assert fb.joint_names[:6] == ("fb_Px", "fb_Py", "fb_Pz", "fb_Rx", "fb_Ry", "fb_Rz")
    q = np.random.default_rng(1).uniform(-1, 1, fb.nq)
    entries = {}
    for line in out.splitlines():
        if line.startswith("M["):
            key, text = line.split(" = ", 1)
            entries[tuple(int(x) for x in key[2:-1].split(","))] = text
    H = mb.crba(fb, q)
    at = {sp.Symbol(f"q{k}"): q[k] for k in range(fb.nq)}
    for i in range(fb.nv):
        for j in range(i, fb.nv):
            value = float(sp.sympify(entries[i, j]).subs(at)) if (i, j) in entries else 0.0
            assert value == pytest.approx(H[i, j], abs=1e-12)


def test_long_entries_print_from_symengine(monkeypatch):
    """An entry longer than PRINT_ORDERED_MAX_OPS prints as SymEngine writes its form (SymPy's printer
    ordered StarlETH's 4 MB of terms for 69 s): the same expression, a line saying how many; a matrix
    the user replaced prints as SymPy's again."""
    from multibody.symbolic import eom as eom_module
    eom = derive(mb.models.ra3link(symbolic=True))
    ordered = str(eom)
    monkeypatch.setattr(eom_module, "PRINT_ORDERED_MAX_OPS", 10)
    text = str(eom)
    assert text != ordered and "entries of more than 10 operations in SymEngine's order of terms" in text
    symbols = [*eom.q, *eom.dq, *eom.tau, *eom.params]
    names = {str(s): s for s in symbols}
    at = dict(zip(symbols, np.random.default_rng(2).uniform(0.5, 2.0, len(symbols))))
    for line in text.splitlines():
        if line.startswith(("M[", "b[", "g[")):
            key, expr = line.split(" = ", 1)
            name, index = key[0], tuple(int(x) for x in key[2:-1].split(","))
            entry = getattr(eom, name)[index if name == "M" else (index[0], 0)]
            printed = float(sp.sympify(expr, locals=names).subs(at))
            assert printed == pytest.approx(float(entry.subs(at)), abs=1e-12), key
    eom.M = eom.M.copy()
    assert "M[0,0] = " + str(eom.M[0, 0]) in str(eom)


def _walked(e):
    """``e`` rebuilt from its ``args`` (what cse, Lambdify and the SymPy conversion read)."""
    if e.is_Atom:
        return e
    return e.func(*[_walked(a) for a in e.args])


@pytest.mark.parametrize("number", [se.Rational(1, 25), 0.04])
def test_expand_of_a_collapsing_power_stays_canonical(number):
    """SymEngine 0.15's expand keeps (x/2)**2 = x**2/4 as a key under the coefficient when the power's
    base collapses to one term beside other terms; args then drop the 1/4. _core.expand (used by the
    readable pass) must give an expression whose args say what it prints."""
    from multibody.symbolic._core import expand

    x, y, a = se.symbols("x y a")
    base = -y / 8 + (x + y / 4) / 2                   # = x/2 once expanded
    e = x**2 / 50 + number * base**2 + a * x * y
    value = {x: 1.3, y: 0.7, a: 0.4}
    want = 1.3**2 / 50 + float(number) * 1.3**2 / 4 + 0.4 * 1.3 * 0.7
    got = expand(e)
    assert float(_walked(got).xreplace(value)) == pytest.approx(want, rel=1e-14)
    f = se.Lambdify([x, y, a], [got], cse=True, backend="lambda")
    assert float(f([1.3, 0.7, 0.4])[0]) == pytest.approx(want, rel=1e-14)
    # the readable pass meets the same power inside a harmonic's coefficient
    q = se.Symbol("q")
    r = readable(e * se.cos(q) + x * se.sin(q) ** 2 + x * se.cos(q) ** 2, [q])
    f = se.Lambdify([x, y, a, q], [r], cse=True, backend="lambda")
    assert float(f([1.3, 0.7, 0.4, 0.3])[0]) == pytest.approx(want * np.cos(0.3) + 1.3, rel=1e-14)


def test_numeric_models_are_readable_and_agree_with_the_numeric_core():
    """Float coefficients go through the readable pass too (the double pendulum's M[0,1] is
    0.5 cos(th2) + 401/1200 with the report's numbers), and auto_tree(5, bf=2, skew=0.4) — whose
    pne/inertial b[2] was 1.4e-3 off while SymEngine's expand left a non-canonical sum — agrees with
    crba/rnea."""
    eom = derive(mb.models.double_pendulum())
    th2 = eom.q[1]
    assert eom.M[0, 1].free_symbols == {th2} and sp.count_ops(eom.M[0, 1]) <= 3   # c1*cos(th2) + c0
    assert float(eom.M[0, 1].subs(th2, sp.pi / 2)) == pytest.approx(401 / 1200, abs=1e-12)
    assert float(eom.M[0, 1].subs(th2, 0)) == pytest.approx(401 / 1200 + 0.5, abs=1e-12)
    model = mb.models.auto_tree(5, bf=2, skew=0.4)
    rng = np.random.default_rng(11)
    for method in ("rnea", "pne"):
        num = derive(model, method, frame="inertial").to_numeric()
        for _ in range(3):
            q, dq = rng.uniform(-1.5, 1.5, 5), rng.normal(size=5)
            g = mb.rnea(model, q, np.zeros(5), np.zeros(5))
            np.testing.assert_allclose(num.M(q), mb.crba(model, q), atol=1e-12)
            np.testing.assert_allclose(num.b(q, dq), mb.rnea(model, q, dq, np.zeros(5)) - g, atol=1e-12)
            np.testing.assert_allclose(num.g(q), g, atol=1e-12)
