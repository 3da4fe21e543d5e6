"""Lagrange equations (energies + Christoffel symbols) against DP_EOM, TMT and the numeric kernels."""
import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.symbolic.lagrange import christoffel_C, derive_lagrange, lagrange_from_energies
from multibody.symbolic import model_symbols
from multibody.symbolic.tmt import derive_tmt


def double_pendulum_report_model():
    model = mb.models.double_pendulum(symbolic=True)
    q, dq, _, _, params = model_symbols(model)
    return model, (tuple(q), tuple(dq), params, mb.models.parameters(model))

# --- OpenDE report, appendix D.2 (xD_DP.m): the matrices DP_EOM.m saved ---------------------
th1, th2, Dth1, Dth2 = sp.symbols("th1 th2 Dth1 Dth2", real=True)
D_q = sp.Matrix([[sp.Rational(1001, 600) + sp.cos(th2), sp.cos(th2) / 2 + sp.Rational(401, 1200)],
                 [sp.cos(th2) / 2 + sp.Rational(401, 1200), sp.Rational(401, 1200)]])
C_q = sp.Matrix([[-sp.sin(th2) * Dth2 / 2, -sp.sin(th2) * Dth1 / 2 - sp.sin(th2) * Dth2 / 2],
                 [sp.sin(th2) * Dth1 / 2, 0]])
g_q = sp.Matrix([sp.Rational(2943, 200) * sp.cos(th1) + sp.Rational(981, 200) * sp.cos(th1 + th2),
                 sp.Rational(981, 200) * sp.cos(th1 + th2)])


def _zero(expr_matrix):
    return all(sp.simplify(e) == 0 for e in expr_matrix)


@pytest.fixture(scope="module")
def dp_lagrange():
    model, (q, dq, params, values) = double_pendulum_report_model()
    return derive_lagrange(model, q=q, dq=dq), values


def test_double_pendulum_matches_DP_EOM_exactly(dp_lagrange):
    eom, values = dp_lagrange
    assert list(eom.q) == [th1, th2] and list(eom.dq) == [Dth1, Dth2]
    assert _zero(eom.M.subs(values) - D_q)
    assert _zero(eom.extra["C"].subs(values) - C_q)
    assert _zero(eom.g.subs(values) - g_q)
    assert _zero(eom.b.subs(values) - C_q * sp.Matrix([Dth1, Dth2]))
    # a wrong transcription is caught: the check is not vacuous
    assert not _zero(eom.M.subs(values) - D_q.subs(th2, th1))


def test_double_pendulum_symbolic_parameters(dp_lagrange):
    eom, values = dp_lagrange
    m1, m2, l1, l2, h1, h2, w1, w2, d1, d2, g = sp.symbols("m1 m2 l1 l2 h1 h2 w1 w2 d1 d2 g", real=True)
    assert set(eom.params) == {m1, m2, l1, l2, h1, h2, w1, w2, d1, d2, g}
    # M22 = m2 l2²/4 + m2 (h2² + w2²)/12 (link about its hinge, z inertia of the box)
    assert sp.simplify(eom.M[1, 1] - (m2 * l2**2 / 4 + m2 * (h2**2 + w2**2) / 12)) == 0


def test_lagrange_from_energies_by_hand():
    # the report's pendulum written as energies by hand (planar, point CoMs + Izz)
    m, l, Iz, g = sp.symbols("m l I_z g")
    x1 = sp.Matrix([l / 2 * sp.cos(th1), l / 2 * sp.sin(th1)])
    x2 = sp.Matrix([l * sp.cos(th1) + l / 2 * sp.cos(th1 + th2), l * sp.sin(th1) + l / 2 * sp.sin(th1 + th2)])
    q, dq = sp.Matrix([th1, th2]), sp.Matrix([Dth1, Dth2])
    v1, v2 = x1.jacobian(q) * dq, x2.jacobian(q) * dq
    T = m * ((v1.T * v1)[0] + (v2.T * v2)[0]) / 2 + Iz * (Dth1**2 + (Dth1 + Dth2) ** 2) / 2
    V = m * g * (x1[1] + x2[1])
    eom = lagrange_from_energies(T, V, q, dq, params=(m, l, Iz, g))
    vals = {m: 1, l: 1, Iz: sp.Rational(101, 1200), g: sp.Rational(981, 100)}
    assert _zero(eom.M.subs(vals) - D_q)
    assert _zero(eom.extra["C"].subs(vals) - C_q)
    assert _zero(eom.g.subs(vals) - g_q)


def test_christoffel_property_Mdot_minus_2C_is_skew(dp_lagrange):
    eom, values = dp_lagrange
    Mdot = sp.zeros(2, 2)
    for qi, dqi in zip(eom.q, eom.dq):
        Mdot += eom.M.diff(qi) * dqi
    N = (Mdot - 2 * eom.extra["C"]).subs(values)
    assert _zero(N + N.T)


def _numeric(eom, values=None):
    import symengine as se

    args = list(eom.q) + list(eom.dq) + list(eom.params)
    fns = [se.Lambdify(args, m, cse=True) for m in (eom.M, eom.b, eom.g)]

    def f(q, dq, p=()):
        x = np.concatenate([q, dq, np.asarray(p, float)])
        M, b, g = (np.asarray(fn(x), float) for fn in fns)
        return M.reshape(len(q), len(q)), b.reshape(-1), g.reshape(-1)
    return f


@pytest.mark.parametrize("n", [3, 5])
def test_lagrange_agrees_with_tmt_on_planar_n_link(n):
    from multibody.models import planar

    model = planar(n)
    lag, tmt = _numeric(derive_lagrange(model)), _numeric(derive_tmt(model))
    rng = np.random.default_rng(n)
    for _ in range(4):
        q, dq = rng.uniform(-np.pi, np.pi, n), rng.normal(size=n)
        for a, b in zip(lag(q, dq), tmt(q, dq)):
            np.testing.assert_allclose(a, b, atol=1e-10, rtol=0)


@pytest.mark.slow
def test_lagrange_agrees_with_crba_rnea_on_random_auto_trees():
    from multibody.dynamics import crba, rnea
    from multibody.models import auto_tree

    rng = np.random.default_rng(7)
    for nb, bf, skew, taper in [(4, 1, 0.7, 0.9), (5, 2, -0.4, 0.8), (6, 1.5, 1.1, 0.95), (10, 2, 0.4, 0.9)]:
        model = auto_tree(nb, bf, skew, taper)
        f = _numeric(derive_lagrange(model))
        for _ in range(3):
            q, dq = rng.uniform(-np.pi, np.pi, nb), rng.normal(size=nb)
            M, b, g = f(q, dq)
            np.testing.assert_allclose(M, crba(model, q), atol=1e-10, rtol=0)
            np.testing.assert_allclose(g, rnea(model, q, 0 * dq, 0 * dq), atol=1e-10, rtol=0)
            np.testing.assert_allclose(b + g, rnea(model, q, dq, 0 * dq), atol=1e-10, rtol=0)


def test_prismatic_and_helical_joints_against_rnea():
    from multibody.dynamics import crba, rnea
    from multibody.model.builder import ModelBuilder

    b = ModelBuilder("mixed")
    b.add_body("a", -1, "Px", mass=2.0, com=[0.1, 0.2, 0.0], inertia=np.diag([0.1, 0.2, 0.3]))
    b.add_body("b", 0, "Ry", mass=1.5, com=[0.3, 0.0, 0.1], inertia=np.diag([0.05, 0.07, 0.02]),
               joint_translation=[0.2, 0.1, 0.0])
    b.add_body("c", 1, "helical", axis=[0.0, 0.6, 0.8], pitch=0.3, mass=0.7, com=[0.0, 0.1, 0.2],
               inertia=np.diag([0.01, 0.02, 0.03]), joint_translation=[0.5, 0.0, 0.0])
    model = b.build()
    f = _numeric(derive_lagrange(model))
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, dq = rng.uniform(-1, 1, 3), rng.normal(size=3)
        M, bb, g = f(q, dq)
        np.testing.assert_allclose(M, crba(model, q), atol=1e-10, rtol=0)
        np.testing.assert_allclose(bb + g, rnea(model, q, dq, 0 * dq), atol=1e-10, rtol=0)


# --- bad input ---------------------------------------------------------------------------------
def test_bad_input_errors():
    q1, q2, dq1, dq2, m, z = sp.symbols("q1 q2 dq1 dq2 m z")
    T = m * (dq1**2 + dq2**2) / 2
    with pytest.raises(ValueError, match="q has 2 entries but dq has 1"):
        lagrange_from_energies(T, 0, [q1, q2], [dq1])
    with pytest.raises(ValueError, match="kinetic energy T.*z"):
        lagrange_from_energies(T * z, 0, [q1, q2], [dq1, dq2], params=[m])
    with pytest.raises(ValueError, match="potential energy V.*z"):
        lagrange_from_energies(T, z * q1, [q1, q2], [dq1, dq2], params=[m])
    with pytest.raises(ValueError, match="not a quadratic form"):
        lagrange_from_energies(T + dq1**3, 0, [q1, q2], [dq1, dq2], params=[m])
    with pytest.raises(ValueError, match="not quadratic"):
        lagrange_from_energies(T + m * dq1, 0, [q1, q2], [dq1, dq2], params=[m])
    with pytest.raises(ValueError, match="selection matrix"):
        lagrange_from_energies(T, 0, [q1, q2], [dq1, dq2], params=[m], tau=sp.symbols("t0:3"))


def test_unsupported_joint_types_name_the_body():
    from multibody.model.builder import ModelBuilder

    b = ModelBuilder("ball")
    b.add_body("upper", -1, "Rz", mass=1.0, com=[0.5, 0, 0], inertia=np.eye(3) * 0.1)
    b.add_body("wrist", 0, "spherical", mass=1.0, com=[0.5, 0, 0], inertia=np.eye(3) * 0.1,
               joint_translation=[1.0, 0, 0])
    model = b.build()
    with pytest.raises(ValueError, match=r"body 1 \('wrist'\).*SPHERICAL.*Euler"):
        derive_lagrange(model)
    with pytest.raises(ValueError, match=r"body 1 \('wrist'\).*Euler"):
        derive_tmt(model)


def test_wrong_number_of_symbols_for_model(dp_lagrange):
    model, _ = double_pendulum_report_model()
    with pytest.raises(ValueError, match="q has 3 entries, the model has nq = 2"):
        derive_lagrange(model, q=sp.symbols("a b c"))
    with pytest.raises(ValueError, match="tau has 1 entries"):
        derive_lagrange(model, tau=sp.symbols("t0:1"))
    eom = derive_lagrange(model, actuated=[1])
    assert eom.S == sp.Matrix([[0, 1]])


def test_christoffel_C_of_constant_matrix_is_zero():
    a, b = sp.symbols("a b")
    C, c = christoffel_C(sp.Matrix([[2, 1], [1, 3]]), [a, b], sp.symbols("da db"))
    assert C == sp.zeros(2, 2)


@pytest.mark.parametrize("name", ["biped_upper_body", "flapping_flyer",
                                  pytest.param("clemens_joint", marks=pytest.mark.slow)])
def test_lagrange_derives_the_papers_constrained_mechanisms_as_tmt_does(name):
    """derive(Mechanism, "lagrange") was refused, so TMT could not be compared with Lagrange on the
    constrained systems the paper is about.  The two roads give the same M, b, g (numerically, at
    a random state and random parameters) and the same constraint terms."""
    import multibody as mb
    from multibody.symbolic import derive
    mech = getattr(mb.models, name)()
    e_l, e_t = derive(mech, "lagrange"), derive(mech, "tmt")
    assert e_l.extra["method"] == "lagrange" and "D" not in e_l.extra
    rng = np.random.default_rng(3)
    syms = set(e_t.q) | set(e_t.dq) | set(e_t.params)
    for eom in (e_l, e_t):
        for x in list(eom.M) + list(eom.b) + list(eom.g):
            syms |= sp.sympify(x).free_symbols
    vals = {s: rng.uniform(0.3, 1.2) for s in sorted(syms, key=str)}
    for key in ("M", "b", "g"):
        a = np.array(getattr(e_l, key).subs(vals).evalf(), dtype=float)
        b = np.array(getattr(e_t, key).subs(vals).evalf(), dtype=float)
        assert np.abs(a - b).max() <= 1e-11 * (1 + np.abs(b).max()), key
    assert e_l.extra["constraint_jacobian"] == e_t.extra["constraint_jacobian"]
